/*
 * test_shapes.c: the deployment shapes the catalogue will grow into, beyond
 * the seed pages, each proved with a recipe of the tests' own
 * (tests/data/recipes/good/shapes): several prefill instances (2P1D), a
 * prefill instance spanning two nodes, A2 hardware (one die per card, device
 * RDMA) disaggregated and mixed over two nodes, and IPv6 addresses. Each
 * recipe is rendered with npulaunch and every script is run on a simulated
 * host; the expected values below follow from the rules as the issue states
 * them (bootstrap port 8998+i, tp-size = dies x cards, dist-init-addr of the
 * first node, node ranks, nnodes), not from npulaunch's output.
 *
 * The shapes of recipe schema v2 follow: speculative decoding per role,
 * pipeline and context parallelism, instances smaller than a card or a node,
 * asymmetric and many-node PD, router options, a per-role socket interface,
 * inherited lists replaced or emptied, exact shared-prefix lengths,
 * environment that builds on the inherited value (script and apply).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

#define SHAPES NPL_DATA_DIR "/recipes/good/shapes"

struct fixture {
	struct sim s;
	char out[512];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f || sim_create(&f->s, 2, NPL_STUB))
		return -1;
	snprintf(f->out, sizeof(f->out), "%s/out", f->s.dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	sim_destroy(&f->s);
	free(f);
	return 0;
}

/* npulaunch --recipes SHAPES render ID ARGS... -o OUT, which must succeed. */
static void render(struct fixture *f, const char *id, const char *const *args)
{
	char *argv[40];
	int n = 0, rc;

	argv[n++] = NPL_BIN;
	argv[n++] = "--recipes";
	argv[n++] = SHAPES;
	argv[n++] = "render";
	argv[n++] = (char *)id;
	argv[n++] = "--model-path";
	argv[n++] = "/models/shape";
	argv[n++] = "--ifname";
	argv[n++] = "eth9";
	while (*args)
		argv[n++] = (char *)*args++;
	argv[n++] = "-o";
	argv[n++] = f->out;
	argv[n] = NULL;
	rc = sim_run(&f->s, argv, NULL);
	if (rc) {
		char *err = sim_slurp(f->s.err);

		fprintf(stderr, "render %s: %d\n%s", id, rc, err ? err : "");
		free(err);
	}
	assert_int_equal(rc, 0);
}

/* Run SCRIPT as the node with address ip; return what it launched (the only launch). */
static cJSON *run_on(struct fixture *f, const char *script, const char *ip)
{
	char path[600], nodeip[128];
	char *argv[] = {"bash", path, NULL};
	char *extra[] = {nodeip, "NPULAUNCH_WAIT_TIMEOUT=0", NULL};
	cJSON *start, *sem, *one;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", f->out, script);
	snprintf(nodeip, sizeof(nodeip), "NPULAUNCH_NODE_IP=%s", ip);
	assert_int_equal(sim_reset(&f->s), 0);
	start = sim_base_env(&f->s, extra);
	rc = sim_run(&f->s, argv, extra);
	if (rc) {
		char *err = sim_slurp(f->s.err);

		fprintf(stderr, "%s on %s: %d\n%s", script, ip, rc, err ? err : "");
		free(err);
	}
	assert_int_equal(rc, 0);
	sem = sim_semantics(&f->s, start);
	cJSON_Delete(start);
	assert_int_equal(cJSON_GetArraySize(sem), 1);
	one = cJSON_DetachItemFromArray(sem, 0);
	cJSON_Delete(sem);
	return one;
}

/* The values of a flag joined by spaces ("" for a switch), or NULL when absent. */
static char *flag(const cJSON *sem, const char *name)
{
	static char buf[1024];
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sem, "flags"), name), *it;

	if (!v)
		return NULL;
	buf[0] = '\0';
	cJSON_ArrayForEach(it, v) {
		if (buf[0])
			strcat(buf, " ");
		strncat(buf, it->valuestring, sizeof(buf) - strlen(buf) - 2);
	}
	return buf;
}

static const char *env(const cJSON *sem, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sem, "env"), name);

	return v ? v->valuestring : NULL;
}

#define FLAG(sem, name, want) assert_string_equal(flag(sem, name) ? flag(sem, name) : "(absent)", want)
#define NOFLAG(sem, name) assert_null(flag(sem, name))

/* Run SCRIPT as the node with address ip, with more "K=V" in its environment (NULL-terminated). */
static cJSON *run_env(struct fixture *f, const char *script, const char *ip, const char *const *more)
{
	char path[600], nodeip[128];
	char *argv[] = {"bash", path, NULL};
	char *extra[16];
	cJSON *start, *sem, *one;
	int n = 0, rc;

	snprintf(path, sizeof(path), "%s/%s", f->out, script);
	snprintf(nodeip, sizeof(nodeip), "NPULAUNCH_NODE_IP=%s", ip);
	extra[n++] = nodeip;
	extra[n++] = "NPULAUNCH_WAIT_TIMEOUT=0";
	while (more && *more && n < 15)
		extra[n++] = (char *)*more++;
	extra[n] = NULL;
	assert_int_equal(sim_reset(&f->s), 0);
	start = sim_base_env(&f->s, extra);
	rc = sim_run(&f->s, argv, extra);
	if (rc) {
		char *err = sim_slurp(f->s.err);

		fprintf(stderr, "%s on %s: %d\n%s", script, ip, rc, err ? err : "");
		free(err);
	}
	assert_int_equal(rc, 0);
	sem = sim_semantics(&f->s, start);
	cJSON_Delete(start);
	assert_int_equal(cJSON_GetArraySize(sem), 1);
	one = cJSON_DetachItemFromArray(sem, 0);
	cJSON_Delete(sem);
	return one;
}

/* npulaunch --recipes SHAPES apply --role ROLE ID --model-path ... ARGS on the simulated host as
 * the node with address ip, with more "K=V" in its environment; what it launched. */
static cJSON *apply_on(struct fixture *f, const char *id, const char *role, const char *ip,
		       const char *const *args, const char *const *more)
{
	char nodeip[128], *argv[40], *extra[16];
	cJSON *start, *sem, *one;
	int n = 0, m = 0, rc;

	argv[n++] = NPL_BIN;
	argv[n++] = "--recipes";
	argv[n++] = SHAPES;
	argv[n++] = "apply";
	argv[n++] = "--role";
	argv[n++] = (char *)role;
	argv[n++] = (char *)id;
	argv[n++] = "--model-path";
	argv[n++] = "/models/shape";
	argv[n++] = "--ifname";
	argv[n++] = "eth9";
	while (args && *args)
		argv[n++] = (char *)*args++;
	argv[n] = NULL;
	snprintf(nodeip, sizeof(nodeip), "NPULAUNCH_NODE_IP=%s", ip);
	extra[m++] = nodeip;
	extra[m++] = "NPULAUNCH_WAIT_TIMEOUT=0";
	while (more && *more && m < 15)
		extra[m++] = (char *)*more++;
	extra[m] = NULL;
	assert_int_equal(sim_reset(&f->s), 0);
	start = sim_base_env(&f->s, extra);
	rc = sim_run(&f->s, argv, extra);
	if (rc) {
		char *err = sim_slurp(f->s.err);

		fprintf(stderr, "apply --role %s %s on %s: %d\n%s", role, id, ip, rc, err ? err : "");
		free(err);
	}
	assert_int_equal(rc, 0);
	sem = sim_semantics(&f->s, start);
	cJSON_Delete(start);
	assert_int_equal(cJSON_GetArraySize(sem), 1);
	one = cJSON_DetachItemFromArray(sem, 0);
	cJSON_Delete(sem);
	return one;
}

/* The whole environment of the last launch (the semantics leave PATH out): a value, or NULL. */
static char *launched_env(struct fixture *f, const char *name)
{
	static char buf[4096];
	char *log = sim_slurp(f->s.log), *nl;
	cJSON *rec, *v;

	assert_non_null(log);
	nl = strchr(log, '\n');
	if (nl)
		*nl = '\0';
	rec = cJSON_Parse(log);
	free(log);
	assert_non_null(rec);
	v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rec, "env"), name);
	if (!cJSON_IsString(v)) {
		cJSON_Delete(rec);
		return NULL;
	}
	snprintf(buf, sizeof(buf), "%s", v->valuestring);
	cJSON_Delete(rec);
	return buf;
}

/* How many flags of sem start with prefix. */
static int flags_with(const cJSON *sem, const char *prefix)
{
	const cJSON *it;
	int n = 0;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(sem, "flags"))
		n += !strncmp(it->string, prefix, strlen(prefix));
	return n;
}

/* Whether the string array sem[key] holds s. */
static int listed(const cJSON *sem, const char *key, const char *s)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(sem, key))
		if (cJSON_IsString(it) && !strcmp(it->valuestring, s))
			return 1;
	return 0;
}

static const char *sysctl_of(const cJSON *sem, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sem, "sysctl"), name);

	return v ? v->valuestring : "(absent)";
}

/* Print what was launched (argv, unset, sourced, governors, sysctls) when an expectation fails. */
static void dump(const char *what, const cJSON *sem)
{
	static const char *const keys[] = {"argv", "unset", "sourced", "governors", "sysctl"};
	size_t i;

	fprintf(stderr, "unmet: %s\n", what);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char *j = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(sem, keys[i]));

		fprintf(stderr, "  %s: %s\n", keys[i], j ? j : "-");
		free(j);
	}
}

#define EXPECT(sem, cond)                   \
	do {                                \
		if (!(cond))                \
			dump(#cond, sem);   \
		assert_true(cond);          \
	} while (0)
#define ENV(sem, name, want) assert_string_equal(env(sem, name) ? env(sem, name) : "(absent)", want)
#define RAWENV(f, name, want) \
	assert_string_equal(launched_env(f, name) ? launched_env(f, name) : "(absent)", want)

static void test_two_prefill_instances(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = {"--prefill-ip", "10.1.0.1", "--prefill-ip", "10.1.0.2",
					   "--decode-ip", "10.1.0.3", NULL};
	cJSON *p0, *p1, *d, *r;

	render(f, "shape-moe-w8a8-2p1d-24p-in8k-out1k-50ms", args);
	p0 = run_on(f, "prefill.sh", "10.1.0.1");
	p1 = run_on(f, "prefill.sh", "10.1.0.2");
	d = run_on(f, "decode.sh", "10.1.0.3");
	r = run_on(f, "router.sh", "10.1.0.1");
	/* prefill i listens on its own node with bootstrap port 8998 + i */
	FLAG(p0, "--host", "10.1.0.1");
	FLAG(p0, "--port", "8000");
	FLAG(p0, "--disaggregation-bootstrap-port", "8998");
	FLAG(p1, "--host", "10.1.0.2");
	FLAG(p1, "--disaggregation-bootstrap-port", "8999");
	FLAG(p0, "--tp-size", "16");
	FLAG(p1, "--tp-size", "16");
	FLAG(p0, "--disaggregation-mode", "prefill");
	NOFLAG(p0, "--nnodes");
	NOFLAG(p0, "--speculative-algorithm");
	/* the store lives on the first prefill node, for every server */
	assert_string_equal(env(p0, "ASCEND_MF_STORE_URL"), "tcp://10.1.0.1:24670");
	assert_string_equal(env(p1, "ASCEND_MF_STORE_URL"), "tcp://10.1.0.1:24670");
	assert_string_equal(env(d, "ASCEND_MF_STORE_URL"), "tcp://10.1.0.1:24670");
	assert_null(env(d, "ASCEND_MF_TRANSFER_PROTOCOL"));
	FLAG(d, "--port", "8001");
	FLAG(d, "--dp-size", "16");
	NOFLAG(d, "--disaggregation-bootstrap-port");
	/* decode gets the speculative block; draft tokens = steps + 1 with top-k 1 */
	FLAG(d, "--speculative-algorithm", "EAGLE");
	FLAG(d, "--speculative-num-steps", "2");
	FLAG(d, "--speculative-num-draft-tokens", "3");
	/* every prefill is listed to the router, with its bootstrap port */
	FLAG(r, "--prefill", "http://10.1.0.1:8000 8998 http://10.1.0.2:8000 8999");
	FLAG(r, "--decode", "http://10.1.0.3:8001");
	FLAG(r, "--pd-disaggregation", "");
	FLAG(r, "--host", "127.0.0.1");
	FLAG(r, "--port", "6688");
	cJSON_Delete(p0);
	cJSON_Delete(p1);
	cJSON_Delete(d);
	cJSON_Delete(r);
}

static void test_prefill_spanning_two_nodes(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = {"--prefill-ip", "10.2.0.1", "--prefill-ip", "10.2.0.2",
					   "--decode-ip", "10.2.0.3", NULL};
	cJSON *p0, *p1, *d, *r;

	render(f, "shape-moe-w8a8-1p1d-24p-in32k-out1k-50ms", args);
	p0 = run_on(f, "prefill.sh", "10.2.0.1");
	p1 = run_on(f, "prefill.sh", "10.2.0.2");
	d = run_on(f, "decode.sh", "10.2.0.3");
	r = run_on(f, "router.sh", "10.2.0.3");
	/* 16 cards of 2 dies: tp-size 32 over 2 nodes, ranked, meeting at the first node */
	FLAG(p0, "--tp-size", "32");
	FLAG(p0, "--nnodes", "2");
	FLAG(p0, "--node-rank", "0");
	FLAG(p0, "--dist-init-addr", "10.2.0.1:5000");
	FLAG(p0, "--host", "10.2.0.1");
	FLAG(p1, "--tp-size", "32");
	FLAG(p1, "--nnodes", "2");
	FLAG(p1, "--node-rank", "1");
	FLAG(p1, "--dist-init-addr", "10.2.0.1:5000");
	FLAG(p1, "--host", "10.2.0.2");
	/* one instance: one bootstrap port, and only its first node faces the router */
	FLAG(p0, "--disaggregation-bootstrap-port", "8998");
	FLAG(p1, "--disaggregation-bootstrap-port", "8998");
	FLAG(r, "--prefill", "http://10.2.0.1:8000 8998");
	FLAG(d, "--tp-size", "16");
	NOFLAG(d, "--nnodes");
	NOFLAG(d, "--dist-init-addr");
	cJSON_Delete(p0);
	cJSON_Delete(p1);
	cJSON_Delete(d);
	cJSON_Delete(r);
}

static void test_a2_disaggregated(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = {"--prefill-ip", "10.3.0.1", "--decode-ip", "10.3.0.2", NULL};
	cJSON *p, *d;

	render(f, "shape-moe-w8a8-1p1d-a2-16p-in8k-out1k-50ms", args);
	p = run_on(f, "prefill.sh", "10.3.0.1");
	d = run_on(f, "decode.sh", "10.3.0.2");
	/* one die per card: tp-size = cards */
	FLAG(p, "--tp-size", "8");
	FLAG(d, "--tp-size", "8");
	assert_string_equal(env(p, "ASCEND_MF_TRANSFER_PROTOCOL"), "device_rdma");
	assert_string_equal(env(d, "ASCEND_MF_TRANSFER_PROTOCOL"), "device_rdma");
	assert_string_equal(env(p, "ASCEND_MF_STORE_URL"), "tcp://10.3.0.1:24670");
	FLAG(p, "--disaggregation-transfer-backend", "ascend");
	cJSON_Delete(p);
	cJSON_Delete(d);
}

static void test_a2_mixed_two_nodes(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = {"--node-ip", "10.4.0.1", "--node-ip", "10.4.0.2", NULL};
	cJSON *n0, *n1, *b;

	render(f, "shape-moe-w8a8-a2-16p-in8k-out1k-50ms", args);
	n0 = run_on(f, "pd-mixed.sh", "10.4.0.1");
	n1 = run_on(f, "pd-mixed.sh", "10.4.0.2");
	b = run_on(f, "bench.sh", "10.4.0.1");
	FLAG(n0, "--tp-size", "16");
	FLAG(n0, "--nnodes", "2");
	FLAG(n0, "--node-rank", "0");
	FLAG(n1, "--node-rank", "1");
	FLAG(n1, "--dist-init-addr", "10.4.0.1:5000");
	FLAG(n1, "--host", "10.4.0.2");
	FLAG(n0, "--port", "6688");
	assert_null(env(n0, "ASCEND_MF_TRANSFER_PROTOCOL"));
	assert_null(env(n0, "ASCEND_MF_STORE_URL"));
	/* generated-shared-prefix: prefix round(8192 x 0.75) = 6144, question 2048, 2 groups of 8 */
	FLAG(b, "--dataset-name", "generated-shared-prefix");
	FLAG(b, "--gsp-system-prompt-len", "6144");
	FLAG(b, "--gsp-question-len", "2048");
	FLAG(b, "--gsp-num-groups", "2");
	FLAG(b, "--gsp-prompts-per-group", "8");
	FLAG(b, "--gsp-output-len", "1024");
	FLAG(b, "--num-prompts", "16");
	NOFLAG(b, "--random-range-ratio");
	cJSON_Delete(n0);
	cJSON_Delete(n1);
	cJSON_Delete(b);
}

/* A page's own --host on a two-node PD-mixed server: honoured on every node (the rule yields and
 * --explain says so), and the endpoint status and bench use is that address. */
static void test_host_of_the_recipe(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = {"--node-ip", "10.4.0.1", "--node-ip", "10.4.0.2", NULL};
	char *argv[] = {NPL_BIN, "--recipes", SHAPES, "show", "shape-moe-w8a8-16p-host-own-50ms", "--json", NULL};
	cJSON *n0, *n1, *plan, *role;
	char *out;

	render(f, "shape-moe-w8a8-16p-host-own-50ms", args);
	n0 = run_on(f, "pd-mixed.sh", "10.4.0.1");
	n1 = run_on(f, "pd-mixed.sh", "10.4.0.2");
	FLAG(n0, "--host", "127.0.0.1");
	FLAG(n1, "--host", "127.0.0.1");
	FLAG(n1, "--nnodes", "2");
	FLAG(n1, "--node-rank", "1");
	FLAG(n1, "--dist-init-addr", "10.4.0.1:5000");
	cJSON_Delete(n0);
	cJSON_Delete(n1);
	assert_int_equal(sim_run(&f->s, argv, NULL), 0);
	out = sim_slurp(f->s.out);
	plan = cJSON_Parse(out);
	assert_non_null(plan);
	role = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(plan, "roles"), 0);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(role, "endpoints"), 0), "url")->valuestring,
			    "http://127.0.0.1:6688");
	assert_non_null(strstr(out, "the recipe's own value: the host rule yields to it"));
	cJSON_Delete(plan);
	free(out);
}

static void test_ipv6_addresses(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = {"--prefill-ip", "FD00:0:0::1", "--prefill-ip", "10.5.0.2",
					   "--decode-ip", "fd00::3", NULL};
	cJSON *p0, *d, *r;

	render(f, "shape-moe-w8a8-2p1d-24p-in8k-out1k-50ms", args);
	/* addresses are canonicalised, so that they match what hostname -I prints */
	p0 = run_on(f, "prefill.sh", "fd00::1");
	d = run_on(f, "decode.sh", "fd00::3");
	r = run_on(f, "router.sh", "10.5.0.2");
	FLAG(p0, "--host", "fd00::1");
	assert_string_equal(env(p0, "ASCEND_MF_STORE_URL"), "tcp://[fd00::1]:24670");
	FLAG(d, "--host", "fd00::3");
	FLAG(r, "--prefill", "http://[fd00::1]:8000 8998 http://10.5.0.2:8000 8999");
	FLAG(r, "--decode", "http://[fd00::3]:8001");
	cJSON_Delete(p0);
	cJSON_Delete(d);
	cJSON_Delete(r);
}

/* Speculative decoding per role: prefill's own block merged field by field over the top-level
 * NEXTN steps 3 topk 1: prefill 1 step (2 draft tokens), decode 3 steps (4 draft tokens). */
static void test_speculative_per_role(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = {"--prefill-ip", "10.7.0.1", "--prefill-ip", "10.7.0.2",
					   "--decode-ip", "10.7.0.3", NULL};
	cJSON *p0, *p1, *d;

	render(f, "shape-moe-w8a8-2p1d-24p-spec-prefill-50ms", args);
	p0 = run_on(f, "prefill.sh", "10.7.0.1");
	p1 = run_on(f, "prefill.sh", "10.7.0.2");
	d = run_on(f, "decode.sh", "10.7.0.3");
	FLAG(p0, "--speculative-algorithm", "NEXTN");
	FLAG(p0, "--speculative-num-steps", "1");
	FLAG(p0, "--speculative-eagle-topk", "1");
	FLAG(p0, "--speculative-num-draft-tokens", "2");
	FLAG(p1, "--speculative-algorithm", "NEXTN");
	FLAG(p1, "--speculative-num-steps", "1");
	FLAG(p1, "--speculative-num-draft-tokens", "2");
	FLAG(d, "--speculative-algorithm", "NEXTN");
	FLAG(d, "--speculative-num-steps", "3");
	FLAG(d, "--speculative-eagle-topk", "1");
	FLAG(d, "--speculative-num-draft-tokens", "4");
	/* NEXTN drafts from the model itself: no draft model anywhere */
	NOFLAG(p0, "--speculative-draft-model-path");
	NOFLAG(d, "--speculative-draft-model-path");
	cJSON_Delete(p0);
	cJSON_Delete(p1);
	cJSON_Delete(d);
}

/* emit: [draft_quantization] on prefill writes that one field's flag and no other. */
static void test_speculative_emit_one_field(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = {"--prefill-ip", "10.7.1.1", "--decode-ip", "10.7.1.2", NULL};
	cJSON *p, *d;

	render(f, "shape-moe-w8a8-1p1d-16p-spec-emit-50ms", args);
	p = run_on(f, "prefill.sh", "10.7.1.1");
	d = run_on(f, "decode.sh", "10.7.1.2");
	FLAG(p, "--speculative-draft-model-quantization", "unquant");
	EXPECT(p, flags_with(p, "--speculative-") == 1);
	/* decode has the whole top-level block */
	FLAG(d, "--speculative-algorithm", "NEXTN");
	FLAG(d, "--speculative-num-steps", "3");
	FLAG(d, "--speculative-eagle-topk", "1");
	FLAG(d, "--speculative-num-draft-tokens", "4");
	FLAG(d, "--speculative-draft-model-quantization", "unquant");
	EXPECT(d, flags_with(d, "--speculative-") == 5);
	cJSON_Delete(p);
	cJSON_Delete(d);
}

/* speculative: null on a role turns the model's block (EAGLE, 2 steps) off for it. */
static void test_speculative_null_role(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = {NULL};
	cJSON *n;

	render(f, "shape-moe-w8a8-8p-spec-null-50ms", args);
	n = run_on(f, "pd-mixed.sh", "10.7.2.1");
	EXPECT(n, flags_with(n, "--speculative-") == 0);
	FLAG(n, "--tp-size", "16");
	cJSON_Delete(n);
}

/* pp-size 4 on 8 A3 cards (16 dies): tp-size 16 / 4 = 4; a stated tp-size 8 with pp-size 2 on
 * decode (8 x 2 = 16 dies) is kept as it is. */
static void test_pipeline_parallel(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = {"--prefill-ip", "10.10.0.1", "--decode-ip", "10.10.0.2", NULL};
	cJSON *p, *d;

	render(f, "shape-moe-w8a8-1p1d-16p-pp4-50ms", args);
	p = run_on(f, "prefill.sh", "10.10.0.1");
	d = run_on(f, "decode.sh", "10.10.0.2");
	FLAG(p, "--tp-size", "4");
	FLAG(p, "--pp-size", "4");
	NOFLAG(p, "--nnodes");
	FLAG(d, "--tp-size", "8");
	FLAG(d, "--pp-size", "2");
	cJSON_Delete(p);
	cJSON_Delete(d);
}

/* attn-cp-size 32 on a prefill of 16 A3 cards over two nodes: tp-size 32, ranked nodes. */
static void test_context_parallel_two_nodes(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = {"--prefill-ip", "10.11.0.1", "--prefill-ip", "10.11.0.2",
					   "--decode-ip", "10.11.0.3", NULL};
	cJSON *p0, *p1, *d;

	render(f, "shape-moe-w8a8-1p1d-24p-cp32-50ms", args);
	p0 = run_on(f, "prefill.sh", "10.11.0.1");
	p1 = run_on(f, "prefill.sh", "10.11.0.2");
	d = run_on(f, "decode.sh", "10.11.0.3");
	FLAG(p0, "--tp-size", "32");
	FLAG(p0, "--attn-cp-size", "32");
	FLAG(p0, "--nnodes", "2");
	FLAG(p0, "--node-rank", "0");
	FLAG(p0, "--dist-init-addr", "10.11.0.1:5000");
	FLAG(p1, "--tp-size", "32");
	FLAG(p1, "--attn-cp-size", "32");
	FLAG(p1, "--nnodes", "2");
	FLAG(p1, "--node-rank", "1");
	FLAG(p1, "--dist-init-addr", "10.11.0.1:5000");
	FLAG(d, "--tp-size", "16");
	NOFLAG(d, "--attn-cp-size");
	NOFLAG(d, "--pp-size");
	cJSON_Delete(p0);
	cJSON_Delete(p1);
	cJSON_Delete(d);
}

/* One die of one A3 card: tp-size 1. */
static void test_one_die_of_a_card(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = {NULL};
	cJSON *n;

	render(f, "shape-moe-w8a8-1p-one-die-50ms", args);
	n = run_on(f, "pd-mixed.sh", "10.12.0.1");
	FLAG(n, "--tp-size", "1");
	NOFLAG(n, "--nnodes");
	FLAG(n, "--port", "6688");
	cJSON_Delete(n);
}

/* Cards 4..7 of an A2 node (1 die per card): tp-size 4, --base-gpu-id 4. */
static void test_a2_upper_half_of_a_node(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = {NULL};
	cJSON *n;

	render(f, "shape-moe-w8a8-a2-4p-first-card4-50ms", args);
	n = run_on(f, "pd-mixed.sh", "10.12.1.1");
	FLAG(n, "--tp-size", "4");
	FLAG(n, "--base-gpu-id", "4");
	NOFLAG(n, "--nnodes");
	cJSON_Delete(n);
}

/* Prefill of 4 A3 cards with dp-size 2 (tp-size 8), decode of 8 cards (tp-size 16). */
static void test_asymmetric_pd(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = {"--prefill-ip", "10.13.0.1", "--decode-ip", "10.13.0.2", NULL};
	cJSON *p, *d, *r;

	render(f, "shape-moe-w8a8-1p1d-12p-asym-50ms", args);
	p = run_on(f, "prefill.sh", "10.13.0.1");
	d = run_on(f, "decode.sh", "10.13.0.2");
	r = run_on(f, "router.sh", "10.13.0.1");
	FLAG(p, "--tp-size", "8");
	FLAG(p, "--dp-size", "2");
	NOFLAG(p, "--nnodes");
	FLAG(d, "--tp-size", "16");
	NOFLAG(d, "--dp-size");
	FLAG(r, "--prefill", "http://10.13.0.1:8000 8998");
	FLAG(r, "--decode", "http://10.13.0.2:8001");
	cJSON_Delete(p);
	cJSON_Delete(d);
	cJSON_Delete(r);
}

/* 4P1D, each prefill instance on two nodes: 9 nodes; instance i on nodes 2i and 2i+1 with
 * bootstrap port 8998 + i, meeting at its first node; the router lists the first nodes. */
static void test_four_prefill_instances_of_two_nodes(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = {"--prefill-ip", "10.14.0.1", "--prefill-ip", "10.14.0.2",
					   "--prefill-ip", "10.14.0.3", "--prefill-ip", "10.14.0.4",
					   "--prefill-ip", "10.14.0.5", "--prefill-ip", "10.14.0.6",
					   "--prefill-ip", "10.14.0.7", "--prefill-ip", "10.14.0.8",
					   "--decode-ip", "10.14.0.9", NULL};
	char ip[32], want[64];
	cJSON *p, *d, *r;
	int j;

	render(f, "shape-moe-w8a8-4p1d-72p-in32k-out1k-50ms", args);
	for (j = 0; j < 8; j++) {
		int inst = j / 2;

		snprintf(ip, sizeof(ip), "10.14.0.%d", j + 1);
		p = run_on(f, "prefill.sh", ip);
		FLAG(p, "--host", ip);
		FLAG(p, "--port", "8000");
		FLAG(p, "--tp-size", "32");
		FLAG(p, "--nnodes", "2");
		snprintf(want, sizeof(want), "%d", j % 2);
		FLAG(p, "--node-rank", want);
		snprintf(want, sizeof(want), "10.14.0.%d:5000", 2 * inst + 1);
		FLAG(p, "--dist-init-addr", want);
		snprintf(want, sizeof(want), "%d", 8998 + inst);
		FLAG(p, "--disaggregation-bootstrap-port", want);
		ENV(p, "ASCEND_MF_STORE_URL", "tcp://10.14.0.1:24670");
		cJSON_Delete(p);
	}
	d = run_on(f, "decode.sh", "10.14.0.9");
	r = run_on(f, "router.sh", "10.14.0.1");
	FLAG(d, "--host", "10.14.0.9");
	FLAG(d, "--tp-size", "16");
	NOFLAG(d, "--nnodes");
	ENV(d, "ASCEND_MF_STORE_URL", "tcp://10.14.0.1:24670");
	FLAG(r, "--prefill", "http://10.14.0.1:8000 8998 http://10.14.0.3:8000 8999 "
			     "http://10.14.0.5:8000 9000 http://10.14.0.7:8000 9001");
	FLAG(r, "--decode", "http://10.14.0.9:8001");
	cJSON_Delete(d);
	cJSON_Delete(r);
}

/* A decode instance of 32 A3 cards: four nodes, tp-size 64, ranks 0..3, its first node facing
 * the router. */
static void test_decode_spanning_four_nodes(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = {"--prefill-ip", "10.15.0.1", "--decode-ip", "10.15.0.2",
					   "--decode-ip", "10.15.0.3", "--decode-ip", "10.15.0.4",
					   "--decode-ip", "10.15.0.5", NULL};
	char ip[32], rank[8];
	cJSON *p, *d, *r;
	int k;

	render(f, "shape-moe-w8a8-1p1d-40p-decode4n-50ms", args);
	for (k = 0; k < 4; k++) {
		snprintf(ip, sizeof(ip), "10.15.0.%d", k + 2);
		snprintf(rank, sizeof(rank), "%d", k);
		d = run_on(f, "decode.sh", ip);
		FLAG(d, "--host", ip);
		FLAG(d, "--tp-size", "64");
		FLAG(d, "--nnodes", "4");
		FLAG(d, "--node-rank", rank);
		FLAG(d, "--dist-init-addr", "10.15.0.2:5000");
		cJSON_Delete(d);
	}
	p = run_on(f, "prefill.sh", "10.15.0.1");
	r = run_on(f, "router.sh", "10.15.0.1");
	FLAG(p, "--tp-size", "16");
	NOFLAG(p, "--nnodes");
	FLAG(r, "--prefill", "http://10.15.0.1:8000 8998");
	FLAG(r, "--decode", "http://10.15.0.2:8001");
	cJSON_Delete(p);
	cJSON_Delete(r);
}

/* The recipe's router flags (over the defaults' policy) and router environment reach
 * router.sh's launch, and only it. */
static void test_router_options(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = {"--prefill-ip", "10.16.0.1", "--decode-ip", "10.16.0.2", NULL};
	cJSON *p, *r;

	render(f, "shape-moe-w8a8-1p1d-16p-router-50ms", args);
	r = run_on(f, "router.sh", "10.16.0.1");
	p = run_on(f, "prefill.sh", "10.16.0.1");
	FLAG(r, "--mini-lb", "");
	FLAG(r, "--health-check-interval-secs", "30");
	FLAG(r, "--policy", "round_robin");
	FLAG(r, "--pd-disaggregation", "");
	FLAG(r, "--prefill", "http://10.16.0.1:8000 8998");
	ENV(r, "SGLANG_DP_ROUND_ROBIN", "1");
	assert_null(env(p, "SGLANG_DP_ROUND_ROBIN"));
	cJSON_Delete(p);
	cJSON_Delete(r);
}

/* A socket interface of the prefill role's own; decode keeps the site's --ifname. */
static void test_socket_interface_per_role(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = {"--prefill-ip", "10.17.0.1", "--decode-ip", "10.17.0.2", NULL};
	cJSON *p, *d;

	render(f, "shape-moe-w8a8-1p1d-16p-ifname-50ms", args);
	p = run_on(f, "prefill.sh", "10.17.0.1");
	d = run_on(f, "decode.sh", "10.17.0.2");
	ENV(p, "HCCL_SOCKET_IFNAME", "lo");
	ENV(p, "GLOO_SOCKET_IFNAME", "lo");
	ENV(d, "HCCL_SOCKET_IFNAME", "eth9");
	ENV(d, "GLOO_SOCKET_IFNAME", "eth9");
	cJSON_Delete(p);
	cJSON_Delete(d);
}

/* unset {replace: [ASCEND_LAUNCH_BLOCKING]}, source {replace: []} and tuning: null in the
 * recipe: only that variable is cleared (the host's proxies stay, for the server and the
 * benchmark), nothing is sourced, no governor or sysctl is touched. */
static void test_inherited_lists_replaced(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = {NULL};
	static const char *const proxies[] = {"http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"};
	cJSON *n, *b;
	size_t i;

	render(f, "shape-moe-w8a8-8p-inherit-50ms", args);
	n = run_on(f, "pd-mixed.sh", "10.18.0.1");
	for (i = 0; i < 4; i++) {
		EXPECT(n, !listed(n, "unset", proxies[i]));
		RAWENV(f, proxies[i], "http://proxy.invalid:1");
	}
	EXPECT(n, listed(n, "unset", "ASCEND_LAUNCH_BLOCKING"));
	EXPECT(n, cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(n, "sourced")) == 0);
	EXPECT(n, cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(n, "governors")) == 1);
	EXPECT(n, listed(n, "governors", "schedutil"));
	assert_string_equal(sysctl_of(n, "vm.swappiness"), "60");
	assert_string_equal(sysctl_of(n, "kernel.numa_balancing"), "1");
	assert_string_equal(sysctl_of(n, "kernel.sched_migration_cost_ns"), "500000");
	b = run_on(f, "bench.sh", "10.18.0.1");
	for (i = 0; i < 4; i++) {
		EXPECT(b, !listed(b, "unset", proxies[i]));
		RAWENV(f, proxies[i], "http://proxy.invalid:1");
	}
	EXPECT(b, listed(b, "unset", "ASCEND_LAUNCH_BLOCKING"));
	cJSON_Delete(n);
	cJSON_Delete(b);
}

/* The same lists replaced at the model layer (shape-dense): the recipe inherits them; the
 * hardware's tuning still applies. */
static void test_model_replaces_lists(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = {NULL};
	cJSON *n;

	render(f, "shape-dense-bf16-8p-in3k5-out1k5-ttft1s", args);
	n = run_on(f, "pd-mixed.sh", "10.18.1.1");
	EXPECT(n, !listed(n, "unset", "http_proxy"));
	EXPECT(n, !listed(n, "unset", "HTTPS_PROXY"));
	RAWENV(f, "http_proxy", "http://proxy.invalid:1");
	EXPECT(n, listed(n, "unset", "ASCEND_LAUNCH_BLOCKING"));
	EXPECT(n, cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(n, "sourced")) == 0);
	EXPECT(n, listed(n, "governors", "performance"));
	assert_string_equal(sysctl_of(n, "vm.swappiness"), "0");
	cJSON_Delete(n);
}

/* generated-shared-prefix with the page's own lengths: 57600 and 6399, not round()'s 6400. */
static void test_shared_prefix_lengths_as_stated(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = {NULL};
	cJSON *b;

	render(f, "shape-moe-w8a8-8p-in64k-out1k-gsp-50ms", args);
	b = run_on(f, "bench.sh", "10.19.0.1");
	FLAG(b, "--dataset-name", "generated-shared-prefix");
	FLAG(b, "--gsp-system-prompt-len", "57600");
	FLAG(b, "--gsp-question-len", "6399");
	FLAG(b, "--gsp-num-groups", "1");
	FLAG(b, "--gsp-prompts-per-group", "16");
	FLAG(b, "--gsp-output-len", "1000");
	cJSON_Delete(b);
}

/* Environment that builds on the inherited value, with and without one, in the script and in
 * apply: PATH prepended, LD_LIBRARY_PATH appended, PYTHONPATH prepended with the site's
 * --draft-model-path; a '$' in a plain value stays literal. */
static void check_env_build(struct fixture *f, cJSON *(*launch)(struct fixture *, const char *const *))
{
	static const char *const inherited[] = {"LD_LIBRARY_PATH=/inh/lib", "PYTHONPATH=/inh/py", NULL};
	static const char *const none[] = {NULL};
	char path[700];
	cJSON *n;

	snprintf(path, sizeof(path), "/opt/vendor/bin:%s:/usr/local/bin:/usr/bin:/bin", f->s.bin);
	n = launch(f, inherited);
	RAWENV(f, "PATH", path);
	RAWENV(f, "LD_LIBRARY_PATH", "/inh/lib:/opt/x/lib");
	RAWENV(f, "PYTHONPATH", "/d:/inh/py");
	RAWENV(f, "SHAPE_LITERAL", "a$HOME ${PATH} $(echo no) `echo no` $1 \\n");
	cJSON_Delete(n);
	n = launch(f, none);
	RAWENV(f, "PATH", path);
	RAWENV(f, "LD_LIBRARY_PATH", "/opt/x/lib");
	RAWENV(f, "PYTHONPATH", "/d");
	RAWENV(f, "SHAPE_LITERAL", "a$HOME ${PATH} $(echo no) `echo no` $1 \\n");
	cJSON_Delete(n);
}

static cJSON *env_build_script(struct fixture *f, const char *const *more)
{
	return run_env(f, "pd-mixed.sh", "10.20.0.1", more);
}

static cJSON *env_build_apply(struct fixture *f, const char *const *more)
{
	static const char *const args[] = {"--draft-model-path", "/d", NULL};

	return apply_on(f, "shape-moe-w8a8-8p-env-build-50ms", "pd-mixed", "10.20.0.1", args, more);
}

static void test_env_builds_on_inherited(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = {"--draft-model-path", "/d", NULL};

	render(f, "shape-moe-w8a8-8p-env-build-50ms", args);
	check_env_build(f, env_build_script);
}

static void test_env_builds_on_inherited_apply(void **state)
{
	check_env_build(*state, env_build_apply);
}

/* A2 PD by apply: device RDMA on both servers (the hardware profile's disagg env), not on the
 * router. */
static void test_a2_disaggregated_apply(void **state)
{
	struct fixture *f = *state;
	static const char *const args[] = {"--prefill-ip", "10.3.0.1", "--decode-ip", "10.3.0.2", NULL};
	const char *id = "shape-moe-w8a8-1p1d-a2-16p-in8k-out1k-50ms";
	cJSON *p, *d, *r;

	p = apply_on(f, id, "prefill", "10.3.0.1", args, NULL);
	d = apply_on(f, id, "decode", "10.3.0.2", args, NULL);
	r = apply_on(f, id, "router", "10.3.0.1", args, NULL);
	ENV(p, "ASCEND_MF_TRANSFER_PROTOCOL", "device_rdma");
	ENV(d, "ASCEND_MF_TRANSFER_PROTOCOL", "device_rdma");
	assert_null(env(r, "ASCEND_MF_TRANSFER_PROTOCOL"));
	FLAG(p, "--tp-size", "8");
	FLAG(d, "--tp-size", "8");
	cJSON_Delete(p);
	cJSON_Delete(d);
	cJSON_Delete(r);
}

/* Run argv as the node with address ip; every launch it made, sorted by --port. */
static cJSON *all_launches(struct fixture *f, char **argv, const char *ip)
{
	char nodeip[128], *log, *line, *save = NULL;
	/* the stubs stay up a while, as servers do: the first to end stops the others */
	char *extra[] = {nodeip, "NPULAUNCH_WAIT_TIMEOUT=0", "NPL_STUB_HOLD_MS=400", NULL};
	cJSON *out = cJSON_CreateArray(), *sorted = cJSON_CreateArray();
	int rc, n, i, j;

	snprintf(nodeip, sizeof(nodeip), "NPULAUNCH_NODE_IP=%s", ip);
	assert_int_equal(sim_reset(&f->s), 0);
	rc = sim_run(&f->s, argv, extra);
	if (rc) {
		char *err = sim_slurp(f->s.err);

		fprintf(stderr, "%s on %s: %d\n%s", argv[1], ip, rc, err ? err : "");
		free(err);
	}
	assert_int_equal(rc, 0);
	log = sim_slurp(f->s.log);
	assert_non_null(log);
	for (line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		cJSON *rec = cJSON_Parse(line);

		assert_non_null(rec);
		cJSON_AddItemToArray(out, rec);
	}
	free(log);
	/* by the value after --port: the instances start in the background, in any order */
	n = cJSON_GetArraySize(out);
	for (i = 0; i < n; i++) {
		int best = -1, bport = 0;

		for (j = 0; j < cJSON_GetArraySize(out); j++) {
			const cJSON *a = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(out, j), "argv"), *x;
			int port = 0, k = 0;

			cJSON_ArrayForEach(x, a) {
				if (!strcmp(x->valuestring, "--port"))
					port = atoi(cJSON_GetArrayItem(a, k + 1)->valuestring);
				k++;
			}
			if (best < 0 || port < bport) {
				best = j;
				bport = port;
			}
		}
		cJSON_AddItemToArray(sorted, cJSON_DetachItemFromArray(out, best));
	}
	cJSON_Delete(out);
	return sorted;
}

static const char *argv_after(const cJSON *rec, const char *flag)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(rec, "argv"), *x;
	int k = 0;

	cJSON_ArrayForEach(x, a) {
		if (!strcmp(x->valuestring, flag) && cJSON_GetArrayItem(a, k + 1))
			return cJSON_GetArrayItem(a, k + 1)->valuestring;
		k++;
	}
	return NULL;
}

static const char *env_in(const cJSON *rec, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rec, "env"), name);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Each node's two instances, as the rules give them: slot k owns cards 4k..4k+3 and
 * listens on 8000 + k; instance i bootstraps on 8998 + i; both run on the node's address. */
static void check_shared_node(cJSON *calls, const char *ip, int first_instance)
{
	char boot[16];
	int k;

	assert_int_equal(cJSON_GetArraySize(calls), 2);
	for (k = 0; k < 2; k++) {
		const cJSON *rec = cJSON_GetArrayItem(calls, k);
		char port[16];

		snprintf(port, sizeof(port), "%d", 8000 + k);
		snprintf(boot, sizeof(boot), "%d", 8998 + first_instance + k);
		assert_string_equal(env_in(rec, "ASCEND_RT_VISIBLE_DEVICES"), k ? "4,5,6,7" : "0,1,2,3");
		assert_string_equal(argv_after(rec, "--port"), port);
		assert_string_equal(argv_after(rec, "--disaggregation-bootstrap-port"), boot);
		assert_string_equal(argv_after(rec, "--host"), ip);
		assert_string_equal(argv_after(rec, "--tp-size"), "4");
		assert_string_equal(env_in(rec, "ASCEND_MF_TRANSFER_PROTOCOL"), "device_rdma");
	}
}

#define SHARED_ID "shape-moe-w8a8-4p1d-a2-24p-shared-50ms"
#define SHARED_SITE "--prefill-ip", "10.0.0.1", "--prefill-ip", "10.0.0.2", "--decode-ip", "10.0.0.3"

static void test_instances_sharing_a_node(void **state)
{
	struct fixture *f = *state;
	const char *const args[] = {SHARED_SITE, NULL};
	char path[600], *argv[] = {"bash", path, NULL};
	cJSON *calls, *r;

	render(f, SHARED_ID, args);
	snprintf(path, sizeof(path), "%s/prefill.sh", f->out);
	calls = all_launches(f, argv, "10.0.0.1");
	check_shared_node(calls, "10.0.0.1", 0);
	cJSON_Delete(calls);
	calls = all_launches(f, argv, "10.0.0.2");
	check_shared_node(calls, "10.0.0.2", 2);
	cJSON_Delete(calls);
	/* the router lists each instance with its own port */
	r = run_on(f, "router.sh", "10.0.0.1");
	assert_string_equal(flag(r, "--prefill"),
			    "http://10.0.0.1:8000 8998 http://10.0.0.1:8001 8999 http://10.0.0.2:8000 9000 http://10.0.0.2:8001 9001");
	cJSON_Delete(r);
}

static void test_instances_sharing_a_node_apply(void **state)
{
	struct fixture *f = *state;
	char *argv[] = {NPL_BIN, "--recipes", SHAPES, "apply", "--role", "prefill", SHARED_ID,
			"--model-path", "/models/shape", "--ifname", "eth9", SHARED_SITE, NULL};
	cJSON *calls;

	calls = all_launches(f, argv, "10.0.0.1");
	check_shared_node(calls, "10.0.0.1", 0);
	cJSON_Delete(calls);
	calls = all_launches(f, argv, "10.0.0.2");
	check_shared_node(calls, "10.0.0.2", 2);
	cJSON_Delete(calls);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_two_prefill_instances, setup, teardown),
		cmocka_unit_test_setup_teardown(test_instances_sharing_a_node, setup, teardown),
		cmocka_unit_test_setup_teardown(test_instances_sharing_a_node_apply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prefill_spanning_two_nodes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a2_disaggregated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a2_mixed_two_nodes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_of_the_recipe, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ipv6_addresses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_speculative_per_role, setup, teardown),
		cmocka_unit_test_setup_teardown(test_speculative_emit_one_field, setup, teardown),
		cmocka_unit_test_setup_teardown(test_speculative_null_role, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pipeline_parallel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_context_parallel_two_nodes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_die_of_a_card, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a2_upper_half_of_a_node, setup, teardown),
		cmocka_unit_test_setup_teardown(test_asymmetric_pd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_four_prefill_instances_of_two_nodes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_decode_spanning_four_nodes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_router_options, setup, teardown),
		cmocka_unit_test_setup_teardown(test_socket_interface_per_role, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inherited_lists_replaced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_model_replaces_lists, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shared_prefix_lengths_as_stated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_env_builds_on_inherited, setup, teardown),
		cmocka_unit_test_setup_teardown(test_env_builds_on_inherited_apply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a2_disaggregated_apply, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
