/*
 * test_preflight.c: preflight's parsers on recorded real outputs
 * (tests/data/preflight, SOURCES.md says where each came from), healthy,
 * broken and in layouts they do not know; the ports a node listens on, from
 * resolved plans; and the checks on fake roots: interfaces given, models with
 * a shard missing, busy ports, a tool that never answers.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "npulaunch/plan.h"
#include "npulaunch/preflight.h"
#include "npulaunch/recipe.h"
#include "npulaunch/resolve.h"
#include "npulaunch/text.h"

#define KIMI_PD "kimi-k2.6-w4a8-1p1d-16p-in128k-out1k-100ms"
#define DS_2P1D "deepseek-r1-w8a8-2p1d-32p-in3k5-out1k5-20ms"
#define KIMI_MIXED "kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms"

static struct {
	struct npl_arena arena;
	struct npl_db db;
} g;

static int group_setup(void **state)
{
	struct npl_diag d = NPL_DIAG_INIT;
	int rc;

	(void)state;
	npl_arena_init(&g.arena);
	rc = npl_db_open(&g.db, &g.arena, NULL, 0, &d);
	if (rc)
		npl_diag_flush(&d, stderr);
	npl_diag_release(&d);
	return rc;
}

static int group_teardown(void **state)
{
	(void)state;
	npl_arena_release(&g.arena);
	return 0;
}

static char *fixture(const char *name)
{
	char path[1024];
	char *text;

	snprintf(path, sizeof(path), "%s/preflight/%s", NPL_DATA_DIR, name);
	text = sim_slurp(path);
	assert_non_null(text);
	return text;
}

/* Parse a fixture with npl_pf_parse_smi; the result's strings live in a. */
static int smi(const char *name, struct npl_pf_smi *out, struct npl_arena *a, const char **why)
{
	char *text = fixture(name);
	int rc = npl_pf_parse_smi(text, out, a, why);

	free(text);
	return rc;
}

static void smi_release(struct npl_pf_smi *s)
{
	free(s->dies);
	free(s->procs);
}

/* ---- npu-smi info ------------------------------------------------------------------------- */

static void test_smi_a3_healthy(void **state)
{
	struct npl_arena a;
	struct npl_pf_smi s;
	const char *why;

	(void)state;
	npl_arena_init(&a);
	assert_int_equal(smi("npu-smi-a3-16-ok.txt", &s, &a, &why), 0);
	assert_string_equal(s.version, "24.1.rc3.7");
	assert_int_equal(s.ndies, 16);
	for (int i = 0; i < 16; i++) {
		assert_int_equal(s.dies[i].npu, i / 2);
		assert_int_equal(s.dies[i].chip, i % 2);
		assert_int_equal(s.dies[i].phy, i);
		assert_string_equal(s.dies[i].health, "OK");
		assert_string_equal(s.dies[i].name, "Ascend910");
	}
	assert_true(s.procs_known);
	assert_int_equal(s.nprocs, 0);
	smi_release(&s);
	npl_arena_release(&a);
}

static void test_smi_a3_alarm(void **state)
{
	struct npl_arena a;
	struct npl_pf_smi s;
	const char *why;

	(void)state;
	npl_arena_init(&a);
	assert_int_equal(smi("npu-smi-a3-16-alarm.txt", &s, &a, &why), 0);
	assert_int_equal(s.ndies, 16);
	assert_string_equal(s.dies[5].health, "Alarm");
	assert_int_equal(s.dies[5].npu, 2);
	assert_int_equal(s.dies[5].chip, 1);
	assert_string_equal(s.dies[4].health, "OK");
	smi_release(&s);
	npl_arena_release(&a);
}

static void test_smi_a3_busy(void **state)
{
	struct npl_arena a;
	struct npl_pf_smi s;
	const char *why;

	(void)state;
	npl_arena_init(&a);
	assert_int_equal(smi("npu-smi-a3-busy.txt", &s, &a, &why), 0);
	assert_string_equal(s.version, "25.2.0");
	assert_int_equal(s.ndies, 4);
	assert_int_equal(s.dies[3].npu, 1);
	assert_int_equal(s.dies[3].chip, 1);
	assert_int_equal(s.dies[3].phy, 3);
	assert_int_equal(s.nprocs, 1);
	assert_int_equal(s.procs[0].npu, 1);
	assert_int_equal(s.procs[0].chip, 1);
	assert_int_equal(s.procs[0].pid, 990711);
	assert_string_equal(s.procs[0].name, "python");
	assert_int_equal(s.procs[0].mem_mb, 7746);
	smi_release(&s);
	npl_arena_release(&a);
}

/* An A2 table (one die per NPU, no physical-id column) with a blank after every line. */
static void test_smi_910b_busy(void **state)
{
	struct npl_arena a;
	struct npl_pf_smi s;
	const char *why;

	(void)state;
	npl_arena_init(&a);
	assert_int_equal(smi("npu-smi-910b-busy.txt", &s, &a, &why), 0);
	assert_int_equal(s.ndies, 2);
	assert_int_equal(s.dies[1].npu, 1);
	assert_int_equal(s.dies[1].chip, 0);
	assert_int_equal(s.dies[1].phy, 1);
	assert_string_equal(s.dies[0].name, "910B2C");
	assert_int_equal(s.nprocs, 1);
	assert_int_equal(s.procs[0].pid, 124528);
	assert_string_equal(s.procs[0].name, "python3.8");
	assert_int_equal(s.procs[0].mem_mb, 17400);
	smi_release(&s);
	npl_arena_release(&a);
}

static void test_smi_310b_alarm(void **state)
{
	struct npl_arena a;
	struct npl_pf_smi s;
	const char *why;

	(void)state;
	npl_arena_init(&a);
	assert_int_equal(smi("npu-smi-310b-alarm.txt", &s, &a, &why), 0);
	assert_int_equal(s.ndies, 1);
	assert_string_equal(s.dies[0].health, "Alarm");
	assert_int_equal(s.dies[0].phy, 0);
	assert_false(s.procs_known);
	smi_release(&s);
	npl_arena_release(&a);
}

static void test_smi_wide(void **state)
{
	struct npl_arena a;
	struct npl_pf_smi s;
	const char *why;

	(void)state;
	npl_arena_init(&a);
	assert_int_equal(smi("npu-smi-910b4-wide.txt", &s, &a, &why), 0);
	assert_string_equal(s.version, "26.0.rc1");
	assert_int_equal(s.ndies, 1);
	assert_true(s.procs_known);
	assert_int_equal(s.nprocs, 0);
	smi_release(&s);
	npl_arena_release(&a);
}

/* A process table with the column of 26.x (Process id in container) and a process in it. */
static void test_smi_wide_process(void **state)
{
	struct npl_arena a;
	struct npl_pf_smi s;
	const char *why;
	char *text = fixture("npu-smi-910b4-wide.txt"), *row;
	struct npl_buf b = NPL_BUF_INIT;

	(void)state;
	row = strstr(text, "| No running processes found in NPU 0");
	assert_non_null(row);
	npl_buf_add(&b, text, (size_t)(row - text));
	/* the row of vllm-project/vllm-ascend issue #12980 */
	npl_buf_puts(&b, "| 0       0                 | 632268        | python3.1          | 197                   | NA                      |\n");
	npl_arena_init(&a);
	assert_int_equal(npl_pf_parse_smi(npl_buf_str(&b), &s, &a, &why), 0);
	assert_int_equal(s.nprocs, 1);
	assert_int_equal(s.procs[0].pid, 632268);
	assert_int_equal(s.procs[0].mem_mb, 197);
	smi_release(&s);
	npl_arena_release(&a);
	npl_buf_release(&b);
	free(text);
}

/* Layouts the parser does not know are refused with why, never guessed at. */
static void test_smi_unknown(void **state)
{
	static const char *const texts[] = {
		"",
		"no table here\n",
		"| NPU   Name                | Health        | Power(W) |\n",
		/* a die's first row without its second */
		"| NPU   Name | Health | Power(W) |\n| Chip | Bus-Id | AICore(%) |\n| 0 Ascend910 | OK | 1 |\n",
		/* a second header row of another shape */
		"| NPU   Name | Health | Power(W) |\n| Die | Bus-Id | AICore(%) |\n| 0 Ascend910 | OK | 1 |\n",
		/* a row of more columns than the table has */
		"| NPU   Name | Health | Power(W) |\n| Chip | Bus-Id | AICore(%) |\n| 0 A | OK | 1 | 2 | 3 | 4 | 5 | 6 | 7 |\n",
		/* a die row that does not start with numbers */
		"| NPU   Name | Health | Power(W) |\n| Chip | Bus-Id | AICore(%) |\n| x Ascend910 | OK | 1 |\n| 0 | b | 0 |\n",
	};
	struct npl_arena a;
	struct npl_pf_smi s;
	const char *why;

	(void)state;
	npl_arena_init(&a);
	assert_int_equal(smi("npu-smi-a5-unknown.txt", &s, &a, &why), -1);
	assert_string_equal(why, "line 2: a device table whose first column is not 'NPU Name'");
	smi_release(&s);
	assert_int_equal(smi("npu-smi-error.txt", &s, &a, &why), -1);
	assert_non_null(why);
	smi_release(&s);
	for (size_t i = 0; i < NPL_ARRAY_SIZE(texts); i++) {
		why = NULL;
		assert_int_equal(npl_pf_parse_smi(texts[i], &s, &a, &why), -1);
		assert_non_null(why);
		smi_release(&s);
	}
	npl_arena_release(&a);
}

/* ---- hccn_tool, version files ------------------------------------------------------------ */

static void test_hccn(void **state)
{
	char ip[64], *t;
	struct npl_arena a;

	(void)state;
	npl_arena_init(&a);
	t = fixture("hccn-link-up.txt");
	assert_int_equal(npl_pf_parse_link(t), 1);
	free(t);
	t = fixture("hccn-link-down.txt");
	assert_int_equal(npl_pf_parse_link(t), 0);
	free(t);
	assert_int_equal(npl_pf_parse_link("Failed to get link status\n"), -1);
	assert_int_equal(npl_pf_parse_link(""), -1);
	t = fixture("hccn-ip.txt");
	assert_int_equal(npl_pf_parse_ip(t, ip, sizeof(ip)), 0);
	assert_string_equal(ip, "10.10.0.10");
	free(t);
	assert_int_equal(npl_pf_parse_ip("ipv6_address:2001:0db8::1\nprefix_length:64\n", ip, sizeof(ip)), 0);
	assert_string_equal(ip, "2001:db8::1");
	assert_int_equal(npl_pf_parse_ip("ipaddr:\nnetmask:\n", ip, sizeof(ip)), -1);
	assert_int_equal(npl_pf_parse_ip("ipaddr:10.0.0.300\n", ip, sizeof(ip)), -1);
	assert_int_equal(npl_pf_parse_ip("", ip, sizeof(ip)), -1);
	t = fixture("hccn-net-health-success.txt");
	assert_string_equal(npl_pf_parse_net_health(t, &a), "Success");
	free(t);
	t = fixture("hccn-net-health-init.txt");
	assert_string_equal(npl_pf_parse_net_health(t, &a), "Init");
	free(t);
	assert_null(npl_pf_parse_net_health("something else\n", &a));
	npl_arena_release(&a);
}

static void test_version_files(void **state)
{
	struct npl_arena a;
	char *t;

	(void)state;
	npl_arena_init(&a);
	t = fixture("driver-version.info");
	/* Version=, not package_version= or compatible_version= */
	assert_string_equal(npl_pf_parse_kv(t, "version", &a), "23.0.7");
	free(t);
	t = fixture("ascend_toolkit_install.info");
	assert_string_equal(npl_pf_parse_kv(t, "version", &a), "7.0.T10");
	free(t);
	assert_null(npl_pf_parse_kv("package_version=1\nversion=\n", "version", &a));
	npl_arena_release(&a);
}

/* ---- /proc/net/tcp ------------------------------------------------------------------------ */

static void test_net_tcp(void **state)
{
	struct npl_pf_listen *l = NULL;
	char *t;
	int n = 0;

	(void)state;
	t = fixture("proc-net-tcp.txt");
	assert_int_equal(npl_pf_parse_net_tcp(t, 0, &l, &n), 0);
	free(t);
	/* the listener, not the two ends of the connection */
	assert_int_equal(n, 1);
	assert_int_equal(l[0].port, 8000);
	assert_string_equal(l[0].addr, "0.0.0.0");
	t = fixture("proc-net-tcp6.txt");
	assert_int_equal(npl_pf_parse_net_tcp(t, 1, &l, &n), 0);
	free(t);
	assert_int_equal(n, 2);
	assert_int_equal(l[1].port, 8998);
	assert_string_equal(l[1].addr, "::");
	/* a table of the other family, or no table, is refused */
	assert_int_equal(npl_pf_parse_net_tcp("Iface\tDestination\n", 0, &l, &n), -1);
	assert_int_equal(npl_pf_parse_net_tcp("", 0, &l, &n), -1);
	assert_int_equal(n, 2);
	free(l);
}

/* ---- the ports of a node ------------------------------------------------------------------ */

static cJSON *resolve(const char *id)
{
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_resolve_opts o;
	const struct npl_layer *R = npl_db_recipe(&g.db, id);
	cJSON *plan;

	assert_non_null(R);
	memset(&o, 0, sizeof(o));
	plan = npl_resolve(&g.db, R, &o, &d);
	assert_non_null(plan);
	npl_diag_release(&d);
	return plan;
}

static const char *ports_text(const cJSON *plan, const char *role, int index, struct npl_arena *a)
{
	struct npl_plan_port p[16];
	struct npl_buf b = NPL_BUF_INIT;
	int n = npl_plan_node_ports(npl_plan_role(plan, role), index, p, 16, a);
	const char *s;

	for (int i = 0; i < n; i++)
		npl_buf_printf(&b, "%s%d %s", i ? ", " : "", p[i].port, p[i].what);
	s = npl_arena_strdup(a, npl_buf_str(&b));
	npl_buf_release(&b);
	return s;
}

static void test_node_ports(void **state)
{
	struct npl_arena a;
	cJSON *plan;

	(void)state;
	npl_arena_init(&a);
	plan = resolve(KIMI_PD);
	/* the store URL names the first prefill node; the zbal bootstrap is on loopback */
	assert_string_equal(ports_text(plan, "prefill", 0, &a),
			    "8000 --port, 8998 --disaggregation-bootstrap-port, 24670 ASCEND_MF_STORE_URL, 24699 SGLANG_ZBAL_BOOTSTRAP_URL");
	assert_string_equal(ports_text(plan, "decode", 0, &a), "8001 --port");
	assert_string_equal(ports_text(plan, "router", 0, &a), "6688 --port");
	cJSON_Delete(plan);
	plan = resolve(DS_2P1D);
	/* two prefill instances of one node each; a decode instance over two nodes: its first node
	 * serves HTTP and the rendezvous, the second runs schedulers only */
	assert_string_equal(ports_text(plan, "prefill", 1, &a), "8000 --port, 8999 --disaggregation-bootstrap-port");
	assert_string_equal(ports_text(plan, "decode", 0, &a), "8001 --port, 5000 --dist-init-addr");
	assert_string_equal(ports_text(plan, "decode", 1, &a), "");
	cJSON_Delete(plan);
	npl_arena_release(&a);
}

/* The devices a node uses: an instance's dies per node from 0, from --base-gpu-id, or those
 * ASCEND_RT_VISIBLE_DEVICES names for instances that share a node; the ports of each slot. */
static void test_node_devices(void **state)
{
	const char *dirs[] = {NPL_DATA_DIR "/recipes/good/shapes"};
	struct npl_arena a, da;
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_resolve_opts o;
	struct npl_db db;
	int ids[64], n;
	cJSON *plan;

	(void)state;
	npl_arena_init(&a);
	plan = resolve(DS_2P1D);
	/* a decode instance of 32 dies over two A3 nodes: 16 on each */
	n = npl_plan_node_devices(npl_plan_role(plan, "decode"), 1, ids, 64);
	assert_int_equal(n, 16);
	assert_int_equal(ids[15], 15);
	cJSON_Delete(plan);
	npl_arena_init(&da);
	assert_int_equal(npl_db_open(&db, &da, dirs, 1, &d), 0);
	memset(&o, 0, sizeof(o));
	plan = npl_resolve(&db, npl_db_recipe(&db, "shape-moe-w8a8-4p1d-a2-24p-shared-50ms"), &o, &d);
	assert_non_null(plan);
	n = npl_plan_node_devices(npl_plan_role(plan, "prefill"), 1, ids, 64);
	assert_int_equal(n, 8);
	for (int i = 0; i < 8; i++)
		assert_int_equal(ids[i], i);
	assert_string_equal(ports_text(plan, "prefill", 1, &a),
			    "8000 --port, 9000 --disaggregation-bootstrap-port, 8001 --port, 9001 --disaggregation-bootstrap-port");
	cJSON_Delete(plan);
	plan = npl_resolve(&db, npl_db_recipe(&db, "shape-moe-w8a8-a2-4p-first-card4-50ms"), &o, &d);
	assert_non_null(plan);
	n = npl_plan_node_devices(npl_plan_role(plan, "pd-mixed"), 0, ids, 64);
	assert_int_equal(n, 4);
	assert_int_equal(ids[0], 4);
	assert_int_equal(ids[3], 7);
	cJSON_Delete(plan);
	npl_diag_release(&d);
	npl_arena_release(&da);
	npl_arena_release(&a);
}

/* ---- the checks on a fake root ------------------------------------------------------------ */

struct fake {
	char dir[256];
	char root[300];
	char bin[300];
	cJSON *plan;
	struct npl_site site;
	struct npl_arena a;
	struct npl_preflight pf;
	struct npl_preflight_opts o;
	struct npl_pf_ifaces ifs;
	struct npl_pf_iface ifv[2];
	const char *addrs[4];
	char *old_path;
};

static void put(struct fake *f, const char *rel, const char *text)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s%s", f->root, rel);
	assert_int_equal(sim_write(path, text), 0);
}

static void put_fixture(struct fake *f, const char *rel, const char *name)
{
	char *t = fixture(name);

	put(f, rel, t);
	free(t);
}

/* A fake prefill node 10.0.0.11 of KIMI_PD: versions, env files, a model with both shards,
 * free ports, enp1 up with the address, no tool on PATH. */
static struct fake *fake_node(void)
{
	struct fake *f = calloc(1, sizeof(*f));
	struct npl_diag d = NPL_DIAG_INIT;
	const char *tmp = getenv("TMPDIR");

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "%s/npl-pf-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->root, sizeof(f->root), "%s/root", f->dir);
	snprintf(f->bin, sizeof(f->bin), "%s/bin", f->dir);
	assert_int_equal(mkdir(f->bin, 0755), 0);
	put_fixture(f, "/usr/local/Ascend/driver/version.info", "driver-version.info");
	put_fixture(f, "/usr/local/Ascend/ascend-toolkit/latest/aarch64-linux/ascend_toolkit_install.info",
		    "ascend_toolkit_install.info");
	put(f, "/usr/local/Ascend/ascend-toolkit/set_env.sh", ":\n");
	put(f, "/usr/local/Ascend/nnal/atb/set_env.sh", ":\n");
	put(f, "/models/kimi/config.json", "{}\n");
	put(f, "/models/kimi/model.safetensors.index.json",
	    "{\"metadata\": {\"total_size\": 2}, \"weight_map\": {\"a\": \"model-00001-of-00002.safetensors\", "
	    "\"b\": \"model-00002-of-00002.safetensors\", \"c\": \"model-00001-of-00002.safetensors\"}}\n");
	put(f, "/models/kimi/model-00001-of-00002.safetensors", "");
	put(f, "/models/kimi/model-00002-of-00002.safetensors", "");
	put(f, "/proc/net/tcp", "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n");
	put(f, "/proc/meminfo", "MemTotal:       1000000 kB\nMemAvailable:    500000 kB\n");
	put(f, "/dev/shm/.keep", "");
	npl_arena_init(&f->a);
	f->plan = resolve(KIMI_PD);
	assert_int_equal(npl_site_set(&f->site, &f->a, NPL_SITE_MODEL_PATH, "/models/kimi", NULL, &d), 0);
	assert_int_equal(npl_site_set(&f->site, &f->a, NPL_SITE_IFNAME, "enp1", NULL, &d), 0);
	assert_int_equal(npl_site_set(&f->site, &f->a, NPL_SITE_PREFILL_IP, "10.0.0.11", NULL, &d), 0);
	assert_int_equal(npl_site_set(&f->site, &f->a, NPL_SITE_DECODE_IP, "10.0.0.12", NULL, &d), 0);
	npl_diag_release(&d);
	f->addrs[0] = "10.0.0.11";
	f->addrs[1] = "fe80::1";
	f->ifv[0] = (struct npl_pf_iface){"lo", 1, 1, f->addrs + 2, 0};
	f->ifv[1] = (struct npl_pf_iface){"enp1", 1, 1, f->addrs, 2};
	f->ifs.v = f->ifv;
	f->ifs.n = 2;
	f->o.plan = f->plan;
	f->o.role = npl_plan_role(f->plan, "prefill");
	f->o.site = &f->site;
	f->o.root = f->root;
	f->o.node = 0;
	f->o.node_ip = "10.0.0.11";
	f->o.local = "10.0.0.11 fe80::1";
	f->o.ifaces = &f->ifs;
	f->o.timeout = 5;
	f->old_path = strdup(getenv("PATH") ? getenv("PATH") : "");
	{
		/* the stand-ins first; the system's folders for what they run (cat, sleep) */
		char path[1024];

		snprintf(path, sizeof(path), "%s:/usr/bin:/bin", f->bin);
		setenv("PATH", path, 1);
	}
	return f;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void drop(struct fake *f)
{
	setenv("PATH", f->old_path, 1);
	free(f->old_path);
	npl_preflight_release(&f->pf);
	cJSON_Delete(f->plan);
	npl_arena_release(&f->a);
	nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
}

static const struct npl_pf_check *check(const struct fake *f, const char *name)
{
	for (int i = 0; i < f->pf.n; i++)
		if (!strcmp(f->pf.v[i].name, name))
			return &f->pf.v[i];
	fail_msg("no check '%s'", name);
	return NULL;
}

static void run(struct fake *f)
{
	npl_preflight_release(&f->pf);
	npl_preflight_run(&f->pf, &f->o);
}

/* A stand-in tool in the fake PATH: a shell script. */
static void tool(struct fake *f, const char *name, const char *script)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", f->bin, name);
	assert_int_equal(sim_write(path, script), 0);
	assert_int_equal(chmod(path, 0755), 0);
}

static void test_checks_healthy_without_tools(void **state)
{
	struct fake *f = fake_node();

	(void)state;
	run(f);
	assert_int_equal(check(f, "driver")->status, NPL_PF_OK);
	assert_non_null(strstr(check(f, "driver")->found, "Ascend driver 23.0.7"));
	assert_int_equal(check(f, "toolkit")->status, NPL_PF_OK);
	assert_int_equal(check(f, "env-files")->status, NPL_PF_OK);
	/* a missing tool is a warning that says so, never a failure */
	assert_int_equal(check(f, "npus")->status, NPL_PF_WARN);
	assert_non_null(strstr(check(f, "npus")->found, "npu-smi not found"));
	assert_int_equal(check(f, "npu-network")->status, NPL_PF_WARN);
	assert_non_null(strstr(check(f, "npu-network")->found, "hccn_tool not found"));
	assert_int_equal(check(f, "node")->status, NPL_PF_OK);
	assert_int_equal(check(f, "interface")->status, NPL_PF_OK);
	assert_int_equal(check(f, "ports")->status, NPL_PF_OK);
	assert_string_equal(check(f, "ports")->found,
			    "free: 8000 (--port), 8998 (--disaggregation-bootstrap-port), 24670 (ASCEND_MF_STORE_URL), 24699 (SGLANG_ZBAL_BOOTSTRAP_URL)");
	assert_int_equal(check(f, "model")->status, NPL_PF_OK);
	assert_non_null(strstr(check(f, "model")->found, "the 2 shards model.safetensors.index.json names"));
	assert_int_equal(check(f, "draft-model")->status, NPL_PF_SKIP);
	assert_int_equal(check(f, "memory")->status, NPL_PF_OK);
	assert_int_equal(f->pf.failed, 0);
	drop(f);
}

static void test_checks_broken(void **state)
{
	struct fake *f = fake_node();
	char path[1024];

	(void)state;
	/* a shard missing, the interface down, a port taken, the toolkit's env file gone */
	snprintf(path, sizeof(path), "%s/models/kimi/model-00002-of-00002.safetensors", f->root);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/usr/local/Ascend/nnal/atb/set_env.sh", f->root);
	assert_int_equal(unlink(path), 0);
	put_fixture(f, "/proc/net/tcp", "proc-net-tcp.txt");
	f->ifv[1].running = 0;
	run(f);
	assert_int_equal(check(f, "model")->status, NPL_PF_FAIL);
	assert_non_null(strstr(check(f, "model")->found,
			       "1 of the 2 weight shards model.safetensors.index.json names is missing: model-00002-of-00002.safetensors"));
	assert_int_equal(check(f, "interface")->status, NPL_PF_FAIL);
	assert_string_equal(check(f, "interface")->found, "enp1 is up but has no carrier: its link is down");
	assert_int_equal(check(f, "ports")->status, NPL_PF_FAIL);
	assert_string_equal(check(f, "ports")->found, "port 8000 (--port) is in use: a socket listens on 0.0.0.0:8000");
	assert_int_equal(check(f, "env-files")->status, NPL_PF_FAIL);
	assert_non_null(strstr(check(f, "env-files")->found, "nnal/atb/set_env.sh"));
	assert_int_equal(f->pf.failed, 4);

	/* the interface down, then without the node's address, then missing */
	f->ifv[1].running = 1;
	f->ifv[1].up = 0;
	run(f);
	assert_string_equal(check(f, "interface")->found, "enp1 is down");
	f->ifv[1].up = 1;
	f->ifv[1].naddrs = 1;
	f->addrs[0] = "fe80::1";
	run(f);
	assert_string_equal(check(f, "interface")->found, "enp1 does not carry this node's address 10.0.0.11 (it has: fe80::1)");
	f->ifs.n = 1;
	run(f);
	assert_string_equal(check(f, "interface")->found, "no interface 'enp1' on this host (it has: lo)");

	/* not in the list: the node check fails, the ports are not known */
	f->o.node = -1;
	f->o.node_ip = NULL;
	run(f);
	assert_int_equal(check(f, "node")->status, NPL_PF_FAIL);
	assert_string_equal(check(f, "node")->found, "this host (10.0.0.11 fe80::1) is not in the prefill-ip list (10.0.0.11)");
	assert_int_equal(check(f, "ports")->status, NPL_PF_SKIP);
	drop(f);
}

/* A weight index npulaunch cannot use whole: a warning that says which, never a file outside
 * the model folder looked for; then no index at all. */
static void test_checks_model_index(void **state)
{
	struct fake *f = fake_node();
	char path[1024];

	(void)state;
	put(f, "/models/kimi/model.safetensors.index.json", "{\"metadata\": {}}\n");
	run(f);
	assert_int_equal(check(f, "model")->status, NPL_PF_WARN);
	assert_non_null(strstr(check(f, "model")->found,
			       "model.safetensors.index.json has no weight_map object: its shards were not checked"));
	put(f, "/models/kimi/model.safetensors.index.json",
	    "{\"weight_map\": {\"a\": \"model-00001-of-00002.safetensors\", \"b\": \"../../etc/passwd\", "
	    "\"c\": \"/etc/shadow\", \"d\": 7}}\n");
	run(f);
	assert_int_equal(check(f, "model")->status, NPL_PF_WARN);
	assert_non_null(strstr(check(f, "model")->found, "names a shard npulaunch does not look for: '../../etc/passwd'"));
	assert_non_null(strstr(check(f, "model")->found, "names a shard npulaunch does not look for: '/etc/shadow'"));
	assert_non_null(strstr(check(f, "model")->found, "names a shard npulaunch does not look for: '(not a string)'"));
	/* no index: the weight files are counted */
	snprintf(path, sizeof(path), "%s/models/kimi/model.safetensors.index.json", f->root);
	assert_int_equal(unlink(path), 0);
	run(f);
	assert_int_equal(check(f, "model")->status, NPL_PF_OK);
	assert_non_null(strstr(check(f, "model")->found, "config.json and 2 weight files (no index)"));
	/* and none */
	snprintf(path, sizeof(path), "%s/models/kimi/model-00001-of-00002.safetensors", f->root);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/models/kimi/model-00002-of-00002.safetensors", f->root);
	assert_int_equal(unlink(path), 0);
	run(f);
	assert_int_equal(check(f, "model")->status, NPL_PF_WARN);
	assert_non_null(strstr(check(f, "model")->found,
			       "has config.json but no weight index (*.index.json) and no *.safetensors or *.bin file"));
	drop(f);
}

static void test_checks_npus(void **state)
{
	struct fake *f = fake_node();
	char script[2048];

	(void)state;
	snprintf(script, sizeof(script), "#!/bin/sh\ncat '%s/preflight/npu-smi-a3-16-ok.txt'\n", NPL_DATA_DIR);
	tool(f, "npu-smi", script);
	run(f);
	assert_int_equal(check(f, "npus")->status, NPL_PF_OK);
	assert_non_null(strstr(check(f, "npus")->found, "lists 16 dies; devices 0-15"));
	snprintf(script, sizeof(script), "#!/bin/sh\ncat '%s/preflight/npu-smi-a3-16-alarm.txt'\n", NPL_DATA_DIR);
	tool(f, "npu-smi", script);
	run(f);
	assert_int_equal(check(f, "npus")->status, NPL_PF_FAIL);
	assert_string_equal(check(f, "npus")->found, "die 5 (NPU 2, chip 1): health Alarm");
	/* four dies for an instance of sixteen, one of them held */
	snprintf(script, sizeof(script), "#!/bin/sh\ncat '%s/preflight/npu-smi-a3-busy.txt'\n", NPL_DATA_DIR);
	tool(f, "npu-smi", script);
	run(f);
	assert_int_equal(check(f, "npus")->status, NPL_PF_FAIL);
	assert_string_equal(check(f, "npus")->found,
			    "npu-smi lists 4 dies; this node's instances use 16 (devices 0-15); "
			    "die 3 (NPU 1, chip 1): process 990711 (python) holds 7746 MB");
	/* an unknown layout and a failing tool are warnings */
	snprintf(script, sizeof(script), "#!/bin/sh\ncat '%s/preflight/npu-smi-a5-unknown.txt'\n", NPL_DATA_DIR);
	tool(f, "npu-smi", script);
	run(f);
	assert_int_equal(check(f, "npus")->status, NPL_PF_WARN);
	assert_non_null(strstr(check(f, "npus")->found, "a layout npulaunch does not know"));
	snprintf(script, sizeof(script), "#!/bin/sh\ncat '%s/preflight/npu-smi-error.txt'\nexit 255\n", NPL_DATA_DIR);
	tool(f, "npu-smi", script);
	run(f);
	assert_int_equal(check(f, "npus")->status, NPL_PF_WARN);
	assert_non_null(strstr(check(f, "npus")->found, "'npu-smi info' failed (exit 255): DrvMngGetConsoleLogLevel failed."));
	drop(f);
}

static void test_checks_npu_network(void **state)
{
	struct fake *f = fake_node();
	char script[4096];

	(void)state;
	snprintf(script, sizeof(script),
		 "#!/bin/sh\n"
		 "D='%s/preflight'\n"
		 "case \"$3\" in\n"
		 "-link) if [ \"$2\" = 7 ]; then cat \"$D/hccn-link-down.txt\"; else cat \"$D/hccn-link-up.txt\"; fi ;;\n"
		 "-ip) if [ \"$2\" = 9 ]; then echo 'ipaddr:'; else cat \"$D/hccn-ip.txt\"; fi ;;\n"
		 "-net_health) cat \"$D/hccn-net-health-success.txt\" ;;\n"
		 "esac\n",
		 NPL_DATA_DIR);
	tool(f, "hccn_tool", script);
	run(f);
	assert_int_equal(check(f, "npu-network")->status, NPL_PF_FAIL);
	assert_string_equal(check(f, "npu-network")->found, "device 7: link DOWN; device 9: no address ('hccn_tool -i 9 -ip -g': ipaddr:)");
	/* a one-node PD-mixed instance does not use it */
	cJSON_Delete(f->plan);
	f->plan = resolve(KIMI_MIXED);
	f->o.plan = f->plan;
	f->o.role = npl_plan_role(f->plan, "pd-mixed");
	run(f);
	assert_int_equal(check(f, "npu-network")->status, NPL_PF_SKIP);
	drop(f);
}

/* A tool that never answers costs the timeout, once, and is a warning. */
static void test_checks_tool_hangs(void **state)
{
	struct fake *f = fake_node();
	struct timespec t0, t1;
	double took;

	(void)state;
	tool(f, "npu-smi", "#!/bin/sh\nsleep 30 &\nsleep 30\n");
	tool(f, "hccn_tool", "#!/bin/sh\nexec sleep 30\n");
	f->o.timeout = 0.3;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	run(f);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	assert_true(took < 3);
	assert_int_equal(check(f, "npus")->status, NPL_PF_WARN);
	assert_non_null(strstr(check(f, "npus")->found, "'npu-smi info' did not finish within 0.3s"));
	assert_int_equal(check(f, "npu-network")->status, NPL_PF_WARN);
	assert_non_null(strstr(check(f, "npu-network")->found, "'hccn_tool -i 0 -link -g' did not finish within 0.3s"));
	drop(f);
}

/* What the tools print reaches the terminal escaped. */
static void test_print_escapes(void **state)
{
	struct fake *f = fake_node();
	char *out = NULL;
	size_t len = 0;
	FILE *fp;

	(void)state;
	tool(f, "npu-smi", "#!/bin/sh\nprintf 'bad\\033[31m\\n'\nexit 3\n");
	run(f);
	fp = open_memstream(&out, &len);
	assert_non_null(fp);
	npl_preflight_print(fp, &f->pf, 0);
	fclose(fp);
	assert_non_null(strstr(out, "failed (exit 3): bad\\x1b[31m"));
	assert_null(strchr(out, '\033'));
	free(out);
	drop(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_smi_a3_healthy),
		cmocka_unit_test(test_smi_a3_alarm),
		cmocka_unit_test(test_smi_a3_busy),
		cmocka_unit_test(test_smi_910b_busy),
		cmocka_unit_test(test_smi_310b_alarm),
		cmocka_unit_test(test_smi_wide),
		cmocka_unit_test(test_smi_wide_process),
		cmocka_unit_test(test_smi_unknown),
		cmocka_unit_test(test_hccn),
		cmocka_unit_test(test_version_files),
		cmocka_unit_test(test_net_tcp),
		cmocka_unit_test(test_node_ports),
		cmocka_unit_test(test_node_devices),
		cmocka_unit_test(test_checks_healthy_without_tools),
		cmocka_unit_test(test_checks_broken),
		cmocka_unit_test(test_checks_model_index),
		cmocka_unit_test(test_checks_npus),
		cmocka_unit_test(test_checks_npu_network),
		cmocka_unit_test(test_checks_tool_hangs),
		cmocka_unit_test(test_print_escapes),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
