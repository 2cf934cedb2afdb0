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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_two_prefill_instances, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prefill_spanning_two_nodes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a2_disaggregated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a2_mixed_two_nodes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ipv6_addresses, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
