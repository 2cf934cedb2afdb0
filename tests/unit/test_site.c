/* test_site.c: site values (site.h): validation, canonical addresses, site files, flags over file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "npulaunch/site.h"

struct fx {
	struct npl_arena a;
	struct npl_diag d;
	struct npl_site s;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	npl_arena_init(&f->a);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	npl_diag_release(&f->d);
	npl_arena_release(&f->a);
	free(f);
	return 0;
}

/* The diagnostic i, formatted without the caret ("file:line:col: error: msg"). */
static char *diag_text(const struct npl_diag *d, int i)
{
	assert_true(i < d->n);
	return npl_diag_format(d, &d->v[i], 0);
}

static void assert_diag(const struct npl_diag *d, int i, const char *want)
{
	char *s = diag_text(d, i);

	assert_string_equal(s, want);
	free(s);
}

static void assert_only_error(const struct npl_diag *d, const char *want)
{
	assert_int_equal(d->n, 1);
	assert_int_equal(d->errors, 1);
	assert_diag(d, 0, want);
}

static void assert_values(const struct npl_site *s, enum npl_site_key k, const char *const *want, int n)
{
	int i;

	assert_int_equal(s->key[k].n, n);
	for (i = 0; i < n; i++)
		assert_string_equal(s->key[k].v[i], want[i]);
}

static int load(struct fx *f, const char *text)
{
	return npl_site_load_text(&f->s, &f->a, "site.yaml", text, strlen(text), &f->d);
}

/* ---- key tables ------------------------------------------------------------ */

static void test_key_tables(void **state)
{
	static const struct {
		enum npl_site_key k;
		const char *name, *var, *hosts;
		int list;
	} want[] = {
		{NPL_SITE_MODEL_PATH, "model-path", "MODEL_PATH", NULL, 0},
		{NPL_SITE_DRAFT_MODEL_PATH, "draft-model-path", "DRAFT_MODEL_PATH", NULL, 0},
		{NPL_SITE_IFNAME, "ifname", "IFNAME", NULL, 0},
		{NPL_SITE_NODE_IP, "node-ip", "NODE_IPS", "NODE_HOSTS", 1},
		{NPL_SITE_PREFILL_IP, "prefill-ip", "PREFILL_IPS", "PREFILL_HOSTS", 1},
		{NPL_SITE_DECODE_IP, "decode-ip", "DECODE_IPS", "DECODE_HOSTS", 1},
		{NPL_SITE_ENTRY_IP, "entry-ip", "ENTRY_IP", "ENTRY_HOST", 1},
		/* cluster values: no script variable */
		{NPL_SITE_IMAGE, "image", NULL, NULL, 0},
		{NPL_SITE_ROUTER_IMAGE, "router-image", NULL, NULL, 0},
		{NPL_SITE_REGISTRY, "registry", NULL, NULL, 0},
		{NPL_SITE_NAMESPACE, "namespace", NULL, NULL, 0},
		{NPL_SITE_NAME_PREFIX, "name-prefix", NULL, NULL, 0},
		{NPL_SITE_NPU_RESOURCE, "npu-resource", NULL, NULL, 0},
		{NPL_SITE_NPU_UNIT, "npu-unit", NULL, NULL, 0},
		{NPL_SITE_MODEL_VOLUME, "model-volume", NULL, NULL, 0},
		{NPL_SITE_MODEL_MOUNT, "model-mount", NULL, NULL, 0},
		{NPL_SITE_NODE_SELECTOR, "node-selector", NULL, NULL, 1},
		{NPL_SITE_SCHEDULER, "scheduler", NULL, NULL, 0},
		{NPL_SITE_GANG, "gang", NULL, NULL, 0},
		{NPL_SITE_SERVER_CPUS, "server-cpus", NULL, NULL, 0},
		{NPL_SITE_SERVER_MEMORY, "server-memory", NULL, NULL, 0},
		{NPL_SITE_ROUTER_CPUS, "router-cpus", NULL, NULL, 0},
		{NPL_SITE_ROUTER_MEMORY, "router-memory", NULL, NULL, 0},
		{NPL_SITE_ROUTER_NODE_SELECTOR, "router-node-selector", NULL, NULL, 1},
		{NPL_SITE_TOLERATION, "toleration", NULL, NULL, 1},
		{NPL_SITE_IMAGE_PULL_SECRET, "image-pull-secret", NULL, NULL, 1},
		{NPL_SITE_PRIORITY_CLASS, "priority-class", NULL, NULL, 0},
		{NPL_SITE_STARTUP_TIMEOUT, "startup-timeout", NULL, NULL, 0},
		{NPL_SITE_TUNE, "tune", NULL, NULL, 0},
		{NPL_SITE_PRIVILEGED, "privileged", NULL, NULL, 0},
		{NPL_SITE_SHM_SIZE, "shm-size", NULL, NULL, 0},
		{NPL_SITE_RUNTIME, "container-runtime", NULL, NULL, 0},
		/* render --target slurm's: no variable of the role scripts holds them */
		{NPL_SITE_SLURM_PARTITION, "slurm-partition", NULL, NULL, 0},
		{NPL_SITE_SLURM_ACCOUNT, "slurm-account", NULL, NULL, 0},
		{NPL_SITE_SLURM_TIME, "slurm-time", NULL, NULL, 0},
		{NPL_SITE_SLURM_GRES, "slurm-gres", NULL, NULL, 0},
		{NPL_SITE_SLURM_LOG_DIR, "slurm-log-dir", NULL, NULL, 0},
		{NPL_SITE_SLURM_ROUTER_NODE, "slurm-router-node", NULL, NULL, 0},
		{NPL_SITE_SLURM_NPULAUNCH, "slurm-npulaunch", NULL, NULL, 0},
	};
	size_t i;

	(void)state;
	assert_int_equal(sizeof(want) / sizeof(want[0]), NPL_SITE_COUNT);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_string_equal(npl_site_key_name(want[i].k), want[i].name);
		if (want[i].var)
			assert_string_equal(npl_site_var(want[i].k), want[i].var);
		else
			assert_null(npl_site_var(want[i].k));
		assert_int_equal(npl_site_is_cluster(want[i].k), want[i].var == NULL);
		if (want[i].hosts)
			assert_string_equal(npl_site_host_var(want[i].k), want[i].hosts);
		else
			assert_null(npl_site_host_var(want[i].k));
		assert_int_equal(npl_site_is_list(want[i].k), want[i].list);
		assert_int_equal(npl_site_key_from_name(want[i].name), (int)want[i].k);
	}
	assert_int_equal(npl_site_key_from_name("model_path"), -1);
	assert_int_equal(npl_site_key_from_name("MODEL-PATH"), -1);
	assert_int_equal(npl_site_key_from_name("model-path "), -1);
	assert_int_equal(npl_site_key_from_name("node-ips"), -1);
	assert_int_equal(npl_site_key_from_name(""), -1);
}

/* ---- render --target slurm's values ------------------------------------------ */

/* set KEY VALUE: 0 and stored as given, or -1 and the one message want. */
static void slurm_ok(struct fx *f, enum npl_site_key k, const char *value)
{
	assert_int_equal(npl_site_set(&f->s, &f->a, k, value, NULL, &f->d), 0);
	assert_int_equal(f->d.n, 0);
	assert_string_equal(f->s.key[k].v[0], value);
}

static void slurm_bad(struct fx *f, enum npl_site_key k, const char *value, const char *want)
{
	npl_diag_release(&f->d);
	memset(&f->d, 0, sizeof(f->d));
	memset(&f->s, 0, sizeof(f->s));
	assert_int_equal(npl_site_set(&f->s, &f->a, k, value, NULL, &f->d), -1);
	assert_only_error(&f->d, want);
	assert_int_equal(f->s.key[k].n, 0);
}

static void test_set_slurm(void **state)
{
	struct fx *f = *state;
	static const char *const times[] = {"30", "30:00", "1:30:00", "2-0", "2-12:00", "2-12:00:00", "UNLIMITED",
					     "infinite"};
	size_t i;

	slurm_ok(f, NPL_SITE_SLURM_PARTITION, "npu");
	slurm_ok(f, NPL_SITE_SLURM_PARTITION, "a3_16,a3-16.b");
	slurm_ok(f, NPL_SITE_SLURM_ACCOUNT, "llm-serving");
	for (i = 0; i < sizeof(times) / sizeof(times[0]); i++)
		slurm_ok(f, NPL_SITE_SLURM_TIME, times[i]);
	slurm_ok(f, NPL_SITE_SLURM_GRES, "npu");
	slurm_ok(f, NPL_SITE_SLURM_GRES, "npu:910c");
	slurm_ok(f, NPL_SITE_SLURM_LOG_DIR, "/shared/logs");
	slurm_ok(f, NPL_SITE_SLURM_ROUTER_NODE, "cpu-node.01");
	slurm_ok(f, NPL_SITE_SLURM_NPULAUNCH, "/opt/npulaunch/bin/npulaunch");

	slurm_bad(f, NPL_SITE_SLURM_PARTITION, "npu a3",
		  "error: --slurm-partition 'npu a3' is not a partition name (letters, digits, '_', '.', '-'; several joined by ',')");
	slurm_bad(f, NPL_SITE_SLURM_PARTITION, "npu,",
		  "error: --slurm-partition 'npu,' is not a partition name (letters, digits, '_', '.', '-'; several joined by ',')");
	slurm_bad(f, NPL_SITE_SLURM_ACCOUNT, "a$(x)",
		  "error: --slurm-account 'a$(x)' is not an account name (letters, digits, '_', '.', '-')");
	slurm_bad(f, NPL_SITE_SLURM_TIME, "1 day",
		  "error: --slurm-time '1 day' is not a Slurm time limit (MINUTES, MINUTES:SECONDS, HOURS:MINUTES:SECONDS, DAYS-HOURS, DAYS-HOURS:MINUTES, DAYS-HOURS:MINUTES:SECONDS or UNLIMITED)");
	slurm_bad(f, NPL_SITE_SLURM_TIME, "1:2:3:4",
		  "error: --slurm-time '1:2:3:4' is not a Slurm time limit (MINUTES, MINUTES:SECONDS, HOURS:MINUTES:SECONDS, DAYS-HOURS, DAYS-HOURS:MINUTES, DAYS-HOURS:MINUTES:SECONDS or UNLIMITED)");
	slurm_bad(f, NPL_SITE_SLURM_TIME, "",
		  "error: --slurm-time '' is not a Slurm time limit (MINUTES, MINUTES:SECONDS, HOURS:MINUTES:SECONDS, DAYS-HOURS, DAYS-HOURS:MINUTES, DAYS-HOURS:MINUTES:SECONDS or UNLIMITED)");
	slurm_bad(f, NPL_SITE_SLURM_GRES, "npu:8:x",
		  "error: --slurm-gres 'npu:8:x' is not a generic resource name (NAME or NAME:TYPE, as in npu or npu:910b; the count is the hardware's cards per node)");
	slurm_bad(f, NPL_SITE_SLURM_GRES, "npu:8",
		  "error: --slurm-gres 'npu:8' is not a generic resource name (NAME or NAME:TYPE, as in npu or npu:910b; the count is the hardware's cards per node)");
	slurm_bad(f, NPL_SITE_SLURM_GRES, "npu,gpu",
		  "error: --slurm-gres 'npu,gpu' is not a generic resource name (NAME or NAME:TYPE, as in npu or npu:910b; the count is the hardware's cards per node)");
	slurm_bad(f, NPL_SITE_SLURM_ROUTER_NODE, "node[1-2]",
		  "error: --slurm-router-node 'node[1-2]' is not a node name (letters, digits, '_', '.', '-')");
	slurm_bad(f, NPL_SITE_SLURM_LOG_DIR, "logs", "error: --slurm-log-dir must be an absolute path, not 'logs'");
	slurm_bad(f, NPL_SITE_SLURM_NPULAUNCH, "/a\nb", "error: --slurm-npulaunch must not contain a line break");
}

static void test_load_slurm(void **state)
{
	struct fx *f = *state;
	static const char *const part[] = {"npu"};

	assert_int_equal(load(f, "slurm-partition: npu\nslurm-time: 2-0\nslurm-router-node: [a, b]\n"
				 "slurm-gres: npu:8:x\n"),
			 -1);
	assert_int_equal(f->d.n, 2);
	assert_diag(&f->d, 0, "site.yaml:3:20: error: 'slurm-router-node' must be a single value");
	assert_diag(&f->d, 1,
		    "site.yaml:4:13: error: 'slurm-gres' 'npu:8:x' is not a generic resource name (NAME or NAME:TYPE, as in npu or npu:910b; the count is the hardware's cards per node)");
	assert_values(&f->s, NPL_SITE_SLURM_PARTITION, part, 1);
	assert_int_equal(f->s.key[NPL_SITE_SLURM_TIME].n, 1);
}

/* ---- addresses and interface names ------------------------------------------ */

static void test_ip_canonical(void **state)
{
	static const struct {
		const char *in, *out;
	} ok[] = {
		{"10.0.0.1", "10.0.0.1"},
		{"0.0.0.0", "0.0.0.0"},
		{"255.255.255.255", "255.255.255.255"},
		{"FE80:0:0::1", "fe80::1"},
		{"0:0:0:0:0:0:0:1", "::1"},
		{"::", "::"},
		{"2001:DB8::0:1", "2001:db8::1"},
		{"1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"},
		{"1::2:0:0:0:3", "1:0:0:2::3"},
		{"::ffff:10.0.0.1", "::ffff:10.0.0.1"},
		{"::ffff:0102:0304", "::ffff:1.2.3.4"},
	};
	static const char *const bad[] = {
		/* glibc's inet_pton refuses leading zeros (no octal surprise) */
		"010.0.0.1", "1.02.3.4", "1.2.3", "1.2.3.4:80", "256.0.0.1", "1.2.3.4.5", "0x0a.0.0.1",
		" 1.2.3.4", "1.2.3.4 ", "node1", "node1.example.com", "localhost", "", "fe80::1%eth0",
		"[::1]", "1:2:3:4:5:6:7:8:9", ":::1", "10.0.0.1/24",
	};
	char out[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		memset(out, 'x', sizeof(out));
		assert_int_equal(npl_ip_canonical(ok[i].in, out, sizeof(out)), 0);
		assert_string_equal(out, ok[i].out);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(npl_ip_canonical(bad[i], out, sizeof(out)), -1);
	/* too small a buffer is an error, not an overflow */
	assert_int_equal(npl_ip_canonical("10.0.0.1", out, 4), -1);
	assert_int_equal(npl_ip_canonical("fe80::1", out, 4), -1);
}

static void test_ifname_ok(void **state)
{
	static const char *const ok[] = {
		"eth0", "enp189s0f0", "bond0.100", "ib0", "en_p-1", "abcdefghijklmno", "A", "x.y",
	};
	static const char *const bad[] = {
		"", "abcdefghijklmnop", "a b", "eth0;rm", "../x", ".", "..", "eth0/1", "eth0:1", "eth0\n",
		"\teth0", "$(x)", "eth'0", "caf\xc3\xa9",
	};
	size_t i;

	(void)state;
	assert_int_equal(strlen("abcdefghijklmno"), 15);
	assert_int_equal(strlen("abcdefghijklmnop"), 16);
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		assert_int_equal(npl_ifname_ok(ok[i]), 1);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(npl_ifname_ok(bad[i]), 0);
}

/* ---- npl_site_set -------------------------------------------------------------- */

static void test_set_model_path(void **state)
{
	struct fx *f = *state;

	assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_MODEL_PATH, "/models/Kimi-K2.6 w4a8", NULL, &f->d),
			 0);
	assert_int_equal(f->d.n, 0);
	assert_int_equal(f->s.key[NPL_SITE_MODEL_PATH].n, 1);
	assert_string_equal(f->s.key[NPL_SITE_MODEL_PATH].v[0], "/models/Kimi-K2.6 w4a8");
	/* nothing else was touched */
	assert_int_equal(f->s.key[NPL_SITE_DRAFT_MODEL_PATH].n, 0);

	assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_MODEL_PATH, "rel", NULL, &f->d), -1);
	assert_only_error(&f->d, "error: --model-path must be an absolute path, not 'rel'");
	/* a refused value leaves the stored one alone */
	assert_string_equal(f->s.key[NPL_SITE_MODEL_PATH].v[0], "/models/Kimi-K2.6 w4a8");
	assert_int_equal(f->s.key[NPL_SITE_MODEL_PATH].n, 1);
}

static void test_set_model_path_refused(void **state)
{
	struct fx *f = *state;

	assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_MODEL_PATH, "", NULL, &f->d), -1);
	assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_MODEL_PATH, "./models", NULL, &f->d), -1);
	assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_MODEL_PATH, "~/models", NULL, &f->d), -1);
	assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_MODEL_PATH, "/models/a\nb", NULL, &f->d), -1);
	assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_MODEL_PATH, "/models/a\rb", NULL, &f->d), -1);
	assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_DRAFT_MODEL_PATH, "draft", NULL, &f->d), -1);
	assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_DRAFT_MODEL_PATH, "/d\n", NULL, &f->d), -1);
	/* both line breaks are refused (-1 above); the identical message is reported once */
	assert_int_equal(f->d.n, 6);
	assert_int_equal(f->d.errors, 6);
	assert_diag(&f->d, 0, "error: --model-path must be an absolute path, not ''");
	assert_diag(&f->d, 1, "error: --model-path must be an absolute path, not './models'");
	assert_diag(&f->d, 2, "error: --model-path must be an absolute path, not '~/models'");
	assert_diag(&f->d, 3, "error: --model-path must not contain a line break");
	assert_diag(&f->d, 4, "error: --draft-model-path must be an absolute path, not 'draft'");
	assert_diag(&f->d, 5, "error: --draft-model-path must not contain a line break");
	assert_int_equal(f->s.key[NPL_SITE_MODEL_PATH].n, 0);
	assert_int_equal(f->s.key[NPL_SITE_DRAFT_MODEL_PATH].n, 0);
}

static void test_set_model_path_located(void **state)
{
	struct fx *f = *state;
	struct npl_loc where = {"cluster.yaml", 3, 13};

	assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_MODEL_PATH, "rel", &where, &f->d), -1);
	assert_only_error(&f->d, "cluster.yaml:3:13: error: --model-path must be an absolute path, not 'rel'");
}

static void test_set_scalar_again(void **state)
{
	struct fx *f = *state;
	struct npl_loc where = {"cluster.yaml", 4, 9};

	/* flags: the last one given wins (one value) */
	assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_IFNAME, "eth0", NULL, &f->d), 0);
	assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_IFNAME, "eth1", NULL, &f->d), 0);
	assert_int_equal(f->d.n, 0);
	assert_int_equal(f->s.key[NPL_SITE_IFNAME].n, 1);
	assert_string_equal(f->s.key[NPL_SITE_IFNAME].v[0], "eth1");
	/* in a file, a second value is an error */
	assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_IFNAME, "eth2", &where, &f->d), -1);
	assert_only_error(&f->d, "cluster.yaml:4:9: error: 'ifname' is given twice");
	assert_string_equal(f->s.key[NPL_SITE_IFNAME].v[0], "eth1");
}

static void test_set_ifname(void **state)
{
	struct fx *f = *state;
	static const char *const ok[] = {"eth0", "enp189s0f0", "bond0.100"};
	static const char *const bad[] = {"", "abcdefghijklmnop", "a b", "eth0;rm", "../x"};
	char want[256];
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_IFNAME, ok[i], NULL, &f->d), 0);
		assert_int_equal(f->s.key[NPL_SITE_IFNAME].n, 1);
		assert_string_equal(f->s.key[NPL_SITE_IFNAME].v[0], ok[i]);
	}
	assert_int_equal(f->d.n, 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_IFNAME, bad[i], NULL, &f->d), -1);
		snprintf(want, sizeof(want),
			 "error: --ifname '%s' is not a network interface name (1 to 15 letters, digits, '_', '.', '-')",
			 bad[i]);
		assert_int_equal(f->d.n, (int)i + 1);
		assert_diag(&f->d, (int)i, want);
	}
	assert_string_equal(f->s.key[NPL_SITE_IFNAME].v[0], "bond0.100");
}

static void test_set_addresses(void **state)
{
	struct fx *f = *state;
	static const char *const want_node[] = {"10.0.0.1", "fe80::1", "2001:db8::1"};
	static const char *const want_prefill[] = {"192.168.1.10"};
	static const char *const want_decode[] = {"::1", "192.168.1.11"};

	assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_NODE_IP, "10.0.0.1", NULL, &f->d), 0);
	assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_NODE_IP, "FE80:0:0::1", NULL, &f->d), 0);
	assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_NODE_IP, "2001:DB8::0:1", NULL, &f->d), 0);
	/* a list keeps what it is given, in order; each node has an address of its own */
	assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_NODE_IP, "10.0.0.1", NULL, &f->d), -1);
	assert_only_error(&f->d, "error: --node-ip '10.0.0.1' is given twice: each node has an address of its own");
	npl_diag_release(&f->d);
	assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_PREFILL_IP, "192.168.1.10", NULL, &f->d), 0);
	assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_DECODE_IP, "0:0:0:0:0:0:0:1", NULL, &f->d), 0);
	assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_DECODE_IP, "192.168.1.11", NULL, &f->d), 0);
	assert_int_equal(f->d.n, 0);
	assert_values(&f->s, NPL_SITE_NODE_IP, want_node, 3);
	assert_values(&f->s, NPL_SITE_PREFILL_IP, want_prefill, 1);
	assert_values(&f->s, NPL_SITE_DECODE_IP, want_decode, 2);
}

static void test_set_list_grows(void **state)
{
	struct fx *f = *state;
	char ip[32];
	int i;

	for (i = 0; i < 40; i++) {
		snprintf(ip, sizeof(ip), "10.0.%d.%d", i / 10, i);
		assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_PREFILL_IP, ip, NULL, &f->d), 0);
	}
	assert_int_equal(f->s.key[NPL_SITE_PREFILL_IP].n, 40);
	for (i = 0; i < 40; i++) {
		snprintf(ip, sizeof(ip), "10.0.%d.%d", i / 10, i);
		assert_string_equal(f->s.key[NPL_SITE_PREFILL_IP].v[i], ip);
	}
}

static void test_set_addresses_refused(void **state)
{
	struct fx *f = *state;
	static const struct {
		enum npl_site_key k;
		const char *v, *msg;
	} bad[] = {
		{NPL_SITE_NODE_IP, "node1", "error: --node-ip 'node1' is not an IPv4 or IPv6 address"},
		{NPL_SITE_NODE_IP, "node1.example.com",
		 "error: --node-ip 'node1.example.com' is not an IPv4 or IPv6 address"},
		{NPL_SITE_NODE_IP, "1.2.3", "error: --node-ip '1.2.3' is not an IPv4 or IPv6 address"},
		{NPL_SITE_NODE_IP, "1.2.3.4:80", "error: --node-ip '1.2.3.4:80' is not an IPv4 or IPv6 address"},
		{NPL_SITE_NODE_IP, "010.0.0.1", "error: --node-ip '010.0.0.1' is not an IPv4 or IPv6 address"},
		{NPL_SITE_NODE_IP, "", "error: --node-ip '' is not an IPv4 or IPv6 address"},
		{NPL_SITE_PREFILL_IP, "[::1]", "error: --prefill-ip '[::1]' is not an IPv4 or IPv6 address"},
		{NPL_SITE_PREFILL_IP, "fe80::1%eth0",
		 "error: --prefill-ip 'fe80::1%eth0' is not an IPv4 or IPv6 address"},
		{NPL_SITE_DECODE_IP, "10.0.0.1 ", "error: --decode-ip '10.0.0.1 ' is not an IPv4 or IPv6 address"},
		{NPL_SITE_DECODE_IP, "$(reboot)", "error: --decode-ip '$(reboot)' is not an IPv4 or IPv6 address"},
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(npl_site_set(&f->s, &f->a, bad[i].k, bad[i].v, NULL, &f->d), -1);
		assert_int_equal(f->d.n, (int)i + 1);
		assert_diag(&f->d, (int)i, bad[i].msg);
	}
	assert_int_equal(f->s.key[NPL_SITE_NODE_IP].n, 0);
	assert_int_equal(f->s.key[NPL_SITE_PREFILL_IP].n, 0);
	assert_int_equal(f->s.key[NPL_SITE_DECODE_IP].n, 0);
}

/* ---- site files ------------------------------------------------------------------ */

static void test_load_full(void **state)
{
	struct fx *f = *state;
	static const char *const node[] = {"10.0.0.1", "fe80::1"};
	static const char *const prefill[] = {"10.0.0.2"};
	static const char *const decode[] = {"10.0.0.3", "10.0.0.4"};
	static const char *const model[] = {"/models/Kimi-K2.6"};
	static const char *const draft[] = {"/models/draft it's"};
	static const char *const ifname[] = {"enp189s0f0"};

	assert_int_equal(load(f, "# the cluster\n"
				 "model-path: /models/Kimi-K2.6\n"
				 "draft-model-path: \"/models/draft it's\"\n"
				 "ifname: enp189s0f0\n"
				 "node-ip:\n"
				 "  - 10.0.0.1\n"
				 "  - FE80:0:0::1\n"
				 "prefill-ip: 10.0.0.2\n"
				 "decode-ip: [10.0.0.3, 10.0.0.4]\n"),
			 0);
	assert_int_equal(f->d.n, 0);
	assert_values(&f->s, NPL_SITE_MODEL_PATH, model, 1);
	assert_values(&f->s, NPL_SITE_DRAFT_MODEL_PATH, draft, 1);
	assert_values(&f->s, NPL_SITE_IFNAME, ifname, 1);
	assert_values(&f->s, NPL_SITE_NODE_IP, node, 2);
	assert_values(&f->s, NPL_SITE_PREFILL_IP, prefill, 1);
	assert_values(&f->s, NPL_SITE_DECODE_IP, decode, 2);
}

static void test_load_empty(void **state)
{
	struct fx *f = *state;
	int k;

	assert_int_equal(load(f, ""), 0);
	assert_int_equal(load(f, "# nothing yet\n"), 0);
	assert_int_equal(load(f, "~\n"), 0);
	assert_int_equal(f->d.n, 0);
	for (k = 0; k < NPL_SITE_COUNT; k++)
		assert_int_equal(f->s.key[k].n, 0);
}

static void test_load_unknown_key(void **state)
{
	struct fx *f = *state;
	static const char *const model[] = {"/m"};

	assert_int_equal(load(f, "model-path: /m\nmodel_path: /models/x\n"), -1);
	assert_only_error(&f->d, "site.yaml:2:1: error: unknown site key 'model_path' (did you mean 'model-path'?)");
	/* the known keys are still read */
	assert_values(&f->s, NPL_SITE_MODEL_PATH, model, 1);
}

static void test_load_unknown_keys_all_reported(void **state)
{
	struct fx *f = *state;

	assert_int_equal(load(f, "ifname: eth0\n  \ncolour: red\nnode_ip: 10.0.0.1\n"), -1);
	assert_int_equal(f->d.n, 2);
	assert_diag(&f->d, 0,
		    "site.yaml:3:1: error: unknown site key 'colour' (model-path, draft-model-path, ifname, node-ip, prefill-ip, decode-ip, entry-ip, image, router-image, registry, namespace, name-prefix, npu-resource, npu-unit, model-volume, model-mount, node-selector, scheduler, gang, server-cpus, server-memory, router-cpus, router-memory, router-node-selector, toleration, image-pull-secret, priority-class, startup-timeout, tune, privileged, shm-size, container-runtime, slurm-partition, slurm-account, slurm-time, slurm-gres, slurm-log-dir, slurm-router-node, slurm-npulaunch)");
	assert_diag(&f->d, 1, "site.yaml:4:1: error: unknown site key 'node_ip' (did you mean 'node-ip'?)");
	assert_int_equal(f->s.key[NPL_SITE_IFNAME].n, 1);
	assert_int_equal(f->s.key[NPL_SITE_NODE_IP].n, 0);
}

static void test_load_caret(void **state)
{
	struct fx *f = *state;
	char *s;

	assert_int_equal(load(f, "ifname: eth0\nmodel_path: /m\n"), -1);
	assert_int_equal(f->d.n, 1);
	s = npl_diag_format(&f->d, &f->d.v[0], 1);
	assert_string_equal(s, "site.yaml:2:1: error: unknown site key 'model_path' (did you mean 'model-path'?)\n"
			       "    2 | model_path: /m\n"
			       "      | ^");
	free(s);
}

static void test_load_list_for_scalar(void **state)
{
	struct fx *f = *state;

	assert_int_equal(load(f, "model-path: [/a, /b]\nifname:\n  - eth0\n"), -1);
	assert_int_equal(f->d.n, 2);
	assert_diag(&f->d, 0, "site.yaml:1:13: error: 'model-path' must be a single value");
	assert_diag(&f->d, 1, "site.yaml:3:3: error: 'ifname' must be a single value");
	assert_int_equal(f->s.key[NPL_SITE_MODEL_PATH].n, 0);
	assert_int_equal(f->s.key[NPL_SITE_IFNAME].n, 0);
}

static void test_load_bad_values(void **state)
{
	struct fx *f = *state;
	static const char *const node[] = {"10.0.0.1", "10.0.0.3"};

	assert_int_equal(load(f, "model-path: models/x\n"
				 "ifname: eth0;rm\n"
				 "node-ip: [10.0.0.1, host1, 10.0.0.3]\n"
				 "prefill-ip: {a: 1}\n"
				 "decode-ip:\n"
				 "  - ~\n"
				 "draft-model-path:\n"),
			 -1);
	assert_int_equal(f->d.n, 6);
	assert_diag(&f->d, 0, "site.yaml:1:13: error: 'model-path' must be an absolute path, not 'models/x'");
	assert_diag(&f->d, 1,
		    "site.yaml:2:9: error: 'ifname' 'eth0;rm' is not a network interface name (1 to 15 letters, digits, '_', '.', '-')");
	assert_diag(&f->d, 2, "site.yaml:3:21: error: 'node-ip' 'host1' is not an IPv4 or IPv6 address");
	assert_diag(&f->d, 3, "site.yaml:4:13: error: 'prefill-ip' must be an address or a list of addresses");
	assert_diag(&f->d, 4, "site.yaml:6:5: error: each 'decode-ip' must be one address");
	assert_diag(&f->d, 5, "site.yaml:7:18: error: 'draft-model-path' is empty (YAML reads '' as null): give its value, or leave the key out");
	assert_values(&f->s, NPL_SITE_NODE_IP, node, 2);
}

static void test_load_two_documents(void **state)
{
	struct fx *f = *state;

	assert_int_equal(load(f, "model-path: /a\n---\nifname: eth0\n"), -1);
	assert_only_error(&f->d, "site.yaml:3:1: error: a site file holds one document");
	assert_int_equal(f->s.key[NPL_SITE_MODEL_PATH].n, 0);
	assert_int_equal(f->s.key[NPL_SITE_IFNAME].n, 0);
}

static void test_load_not_a_mapping(void **state)
{
	struct fx *f = *state;

	assert_int_equal(load(f, "- model-path: /a\n"), -1);
	assert_only_error(&f->d, "site.yaml:1:1: error: a site file is a mapping (key: value lines)");
}

static void test_load_duplicate_key(void **state)
{
	struct fx *f = *state;

	/* the YAML loader refuses duplicate keys before the site sees them */
	assert_int_equal(load(f, "ifname: eth0\nifname: eth1\n"), -1);
	assert_only_error(&f->d, "site.yaml:2:1: error: duplicate key 'ifname' (first at line 1)");
	assert_int_equal(f->s.key[NPL_SITE_IFNAME].n, 0);
}

static void test_load_file(void **state)
{
	struct fx *f = *state;
	const char *tmp = getenv("TMPDIR");
	char dir[512], path[600], want[700];
	static const char *const model[] = {"/models/x"};
	static const char *const dec[] = {"fe80::2"};
	FILE *fp;

	snprintf(dir, sizeof(dir), "%s/npl-site-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/site.yaml", dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("model-path: /models/x\ndecode-ip: FE80::2\nifname: a b\n", fp);
	fclose(fp);

	assert_int_equal(npl_site_load_file(&f->s, &f->a, path, &f->d), -1);
	snprintf(want, sizeof(want),
		 "%s:3:9: error: 'ifname' 'a b' is not a network interface name (1 to 15 letters, digits, '_', '.', '-')",
		 path);
	assert_only_error(&f->d, want);
	assert_values(&f->s, NPL_SITE_MODEL_PATH, model, 1);
	assert_values(&f->s, NPL_SITE_DECODE_IP, dec, 1);

	npl_diag_release(&f->d);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(npl_site_load_file(&f->s, &f->a, path, &f->d), -1);
	snprintf(want, sizeof(want), "error: cannot read '%s': No such file or directory", path);
	assert_only_error(&f->d, want);
	assert_int_equal(rmdir(dir), 0);
}

/* ---- flags over the file ------------------------------------------------------------ */

static void test_fill(void **state)
{
	struct fx *f = *state;
	struct npl_site file;
	static const char text[] = "model-path: /file/model\n"
				   "draft-model-path: /file/draft\n"
				   "ifname: eth0\n"
				   "node-ip: [10.0.0.7, 10.0.0.8]\n"
				   "prefill-ip: [10.1.0.1, 10.1.0.2]\n";
	static const char *const model[] = {"/flag/model"};
	static const char *const draft[] = {"/file/draft"};
	static const char *const ifname[] = {"eth9"};
	static const char *const node[] = {"10.0.0.1"};
	static const char *const prefill[] = {"10.1.0.1", "10.1.0.2"};

	memset(&file, 0, sizeof(file));
	assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_MODEL_PATH, "/flag/model", NULL, &f->d), 0);
	assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_IFNAME, "eth9", NULL, &f->d), 0);
	assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_NODE_IP, "10.0.0.1", NULL, &f->d), 0);
	assert_int_equal(npl_site_load_text(&file, &f->a, "site.yaml", text, strlen(text), &f->d), 0);
	npl_site_fill(&f->s, &file);
	assert_int_equal(f->d.n, 0);
	assert_values(&f->s, NPL_SITE_MODEL_PATH, model, 1);
	assert_values(&f->s, NPL_SITE_DRAFT_MODEL_PATH, draft, 1);
	assert_values(&f->s, NPL_SITE_IFNAME, ifname, 1);
	/* a list given by flags is not merged with the file's */
	assert_values(&f->s, NPL_SITE_NODE_IP, node, 1);
	assert_values(&f->s, NPL_SITE_PREFILL_IP, prefill, 2);
	assert_int_equal(f->s.key[NPL_SITE_DECODE_IP].n, 0);
	/* the file is not changed */
	assert_string_equal(file.key[NPL_SITE_MODEL_PATH].v[0], "/file/model");
	assert_int_equal(file.key[NPL_SITE_NODE_IP].n, 2);
}

static void test_fill_empty(void **state)
{
	struct fx *f = *state;
	struct npl_site empty;
	int k;

	memset(&empty, 0, sizeof(empty));
	npl_site_fill(&f->s, &empty);
	for (k = 0; k < NPL_SITE_COUNT; k++)
		assert_int_equal(f->s.key[k].n, 0);
	assert_int_equal(npl_site_set(&empty, &f->a, NPL_SITE_DECODE_IP, "10.2.0.1", NULL, &f->d), 0);
	npl_site_fill(&f->s, &empty);
	assert_int_equal(f->s.key[NPL_SITE_DECODE_IP].n, 1);
	assert_string_equal(f->s.key[NPL_SITE_DECODE_IP].v[0], "10.2.0.1");
}

/* ---- cluster values ------------------------------------------------------------ */

static void test_cluster_values(void **state)
{
	struct fx *f = *state;
	static const struct {
		enum npl_site_key k;
		const char *v;
	} ok[] = {
		{NPL_SITE_IMAGE, "lmsysorg/sglang:main-cann8.5.0-a3"},
		{NPL_SITE_ROUTER_IMAGE, "registry.example.com:5000/ascend/router@sha256:0123abcd"},
		{NPL_SITE_REGISTRY, "swr.cn-southwest-2.myhuaweicloud.com/base_image"},
		{NPL_SITE_NAMESPACE, "llm-serving"},
		{NPL_SITE_NAME_PREFIX, "kimi"},
		{NPL_SITE_NPU_RESOURCE, "huawei.com/ascend-1980"},
		{NPL_SITE_NPU_UNIT, "card"},
		{NPL_SITE_MODEL_VOLUME, "pvc:models-ro"},
		{NPL_SITE_MODEL_MOUNT, "/models"},
		{NPL_SITE_NODE_SELECTOR, "accelerator-type=module-a3-16-super-pod"},
		{NPL_SITE_NODE_SELECTOR, "example.com/pool="},
		{NPL_SITE_SCHEDULER, "volcano"},
		{NPL_SITE_GANG, "true"},
		{NPL_SITE_SERVER_CPUS, "160"},
		{NPL_SITE_SERVER_MEMORY, "1536Gi"},
		{NPL_SITE_ROUTER_CPUS, "4"},
		{NPL_SITE_ROUTER_MEMORY, "8Gi"},
		{NPL_SITE_ROUTER_NODE_SELECTOR, "node-role.example.com/cpu="},
		{NPL_SITE_TOLERATION, "huawei.com/Ascend910=true:NoSchedule"},
		{NPL_SITE_TOLERATION, "example.com/dedicated"},
		{NPL_SITE_TOLERATION, "spot:NoExecute"},
		{NPL_SITE_IMAGE_PULL_SECRET, "swr-pull"},
		{NPL_SITE_PRIORITY_CLASS, "system-cluster-critical"},
		{NPL_SITE_STARTUP_TIMEOUT, "3600"},
		{NPL_SITE_TUNE, "false"},
		{NPL_SITE_PRIVILEGED, "false"},
		{NPL_SITE_SHM_SIZE, "128Gi"},
		{NPL_SITE_RUNTIME, "podman"},
	};
	static const struct {
		enum npl_site_key k;
		const char *v, *msg;
	} bad[] = {
		{NPL_SITE_IMAGE, "sglang latest", "error: --image 'sglang latest' is not a container image"},
		{NPL_SITE_REGISTRY, "r.example.com/x@sha256:1", "error: --registry 'r.example.com/x@sha256:1' is not a registry"},
		{NPL_SITE_NAMESPACE, "LLM", "error: --namespace 'LLM' is not a namespace name"},
		{NPL_SITE_NAME_PREFIX, "1kimi", "error: --name-prefix '1kimi' is not a name prefix"},
		{NPL_SITE_NPU_RESOURCE, "Ascend910", "error: --npu-resource 'Ascend910' is not an extended resource name"},
		{NPL_SITE_NPU_UNIT, "chip", "error: --npu-unit 'chip': the device plugin counts each 'card' or each 'die'"},
		{NPL_SITE_MODEL_VOLUME, "nfs:server", "error: --model-volume 'nfs:server' is not a model volume"},
		{NPL_SITE_MODEL_MOUNT, "models", "error: --model-mount must be an absolute folder other than /"},
		{NPL_SITE_NODE_SELECTOR, "accelerator", "error: --node-selector 'accelerator' is not a node label KEY=VALUE"},
		{NPL_SITE_NODE_SELECTOR, "a=b c", "error: --node-selector 'a=b c' is not a node label KEY=VALUE"},
		{NPL_SITE_SCHEDULER, "Volcano", "error: --scheduler 'Volcano' is not a scheduler name"},
		{NPL_SITE_GANG, "yes", "error: --gang takes true or false, not 'yes'"},
		{NPL_SITE_SERVER_CPUS, "1.5", "error: --server-cpus '1.5' is not a number of CPUs (a whole number from 1 to 100000"},
		{NPL_SITE_SERVER_CPUS, "0", "error: --server-cpus '0' is not a number of CPUs"},
		{NPL_SITE_SERVER_CPUS, "-4", "error: --server-cpus '-4' is not a number of CPUs"},
		{NPL_SITE_ROUTER_CPUS, "99999999999999999999", "error: --router-cpus '99999999999999999999' is not a number of CPUs"},
		{NPL_SITE_SERVER_MEMORY, "512G", "error: --server-memory '512G' is not a size in Ki, Mi, Gi or Ti"},
		{NPL_SITE_ROUTER_MEMORY, "8Gi\n", "error: --router-memory '8Gi\n' is not a size"},
		{NPL_SITE_ROUTER_NODE_SELECTOR, "role", "error: --router-node-selector 'role' is not a node label KEY=VALUE"},
		{NPL_SITE_TOLERATION, "a=b:NoRun", "error: --toleration 'a=b:NoRun' is not a toleration KEY[=VALUE][:EFFECT]"},
		{NPL_SITE_TOLERATION, "-a", "error: --toleration '-a' is not a toleration"},
		{NPL_SITE_TOLERATION, "a=\"b\"", "error: --toleration 'a=\"b\"' is not a toleration"},
		{NPL_SITE_TOLERATION, "example.com/dedicated", "error: --toleration 'example.com/dedicated' is given twice"},
		{NPL_SITE_IMAGE_PULL_SECRET, "Reg Cred", "error: --image-pull-secret 'Reg Cred' is not a secret name"},
		{NPL_SITE_PRIORITY_CLASS, "--high", "error: --priority-class '--high' is not a priority class name"},
		{NPL_SITE_STARTUP_TIMEOUT, "9", "error: --startup-timeout '9' is not a start-up window in seconds (a whole number from 10 to 604800)"},
		{NPL_SITE_STARTUP_TIMEOUT, "604801", "error: --startup-timeout '604801' is not a start-up window"},
		{NPL_SITE_STARTUP_TIMEOUT, "1e3", "error: --startup-timeout '1e3' is not a start-up window"},
		{NPL_SITE_SHM_SIZE, "64G", "error: --shm-size '64G' is not a size in Ki, Mi, Gi or Ti"},
		{NPL_SITE_RUNTIME, "containerd", "error: --container-runtime 'containerd': docker, podman or auto"},
	};
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(npl_site_set(&f->s, &f->a, ok[i].k, ok[i].v, NULL, &f->d), 0);
		assert_string_equal(f->s.key[ok[i].k].v[f->s.key[ok[i].k].n - 1], ok[i].v);
	}
	assert_int_equal(f->d.n, 0);
	assert_int_equal(f->s.key[NPL_SITE_NODE_SELECTOR].n, 2);
	/* a label given twice: one node cannot carry two values of it */
	assert_int_equal(npl_site_set(&f->s, &f->a, NPL_SITE_NODE_SELECTOR, "accelerator-type=x", NULL, &f->d), -1);
	assert_diag(&f->d, 0, "error: --node-selector: the label 'accelerator-type' is given twice");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int n = f->d.n;

		assert_int_equal(npl_site_set(&f->s, &f->a, bad[i].k, bad[i].v, NULL, &f->d), -1);
		assert_int_equal(f->d.n, n + 1);
		assert_true(strstr(f->d.v[n].msg, bad[i].msg + strlen("error: ")) == f->d.v[n].msg);
	}
}

static void test_load_cluster_values(void **state)
{
	struct fx *f = *state;

	assert_int_equal(load(f, "image: lmsysorg/sglang:v1\nnode-selector: [a=b, c=d]\ngang: true\nnamespace: llm\n"), 0);
	assert_string_equal(f->s.key[NPL_SITE_IMAGE].v[0], "lmsysorg/sglang:v1");
	assert_int_equal(f->s.key[NPL_SITE_NODE_SELECTOR].n, 2);
	assert_string_equal(f->s.key[NPL_SITE_NODE_SELECTOR].v[1], "c=d");
	assert_string_equal(f->s.key[NPL_SITE_GANG].v[0], "true");
	assert_int_equal(load(f, "tune: maybe\n"), -1);
	assert_diag(&f->d, 0, "site.yaml:1:7: error: 'tune' takes true or false, not 'maybe'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_tables),
		cmocka_unit_test_setup_teardown(test_set_slurm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_slurm, setup, teardown),
		cmocka_unit_test(test_ip_canonical),
		cmocka_unit_test(test_ifname_ok),
		cmocka_unit_test_setup_teardown(test_set_model_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_model_path_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_model_path_located, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_scalar_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_ifname, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_addresses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_list_grows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_addresses_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_unknown_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_unknown_keys_all_reported, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_caret, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_list_for_scalar, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_bad_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_two_documents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_not_a_mapping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_duplicate_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fill, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fill_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cluster_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_cluster_values, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
