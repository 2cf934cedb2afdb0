/* test_resolve.c: the resolver's rules, origins, checks, site values and overrides. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "npulaunch/plan.h"
#include "npulaunch/resolve.h"
#include "unit.h"

struct fx {
	struct npl_arena a;
	struct npl_diag d;
	struct npl_db db;
	struct npl_site site;
	int strict;     /* resolve with --strict */
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

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

/* Open the shipped catalogue, plus extra (may be NULL) as a later folder. */
static void open_db(struct fx *f, const char *extra)
{
	npl_db_init(&f->db, &f->a);
	assert_int_equal(npl_db_load_embedded(&f->db, &f->d), 0);
	if (extra)
		assert_int_equal(npl_db_load_text(&f->db, "t.yaml", extra, strlen(extra), 1, &f->d), 0);
	assert_int_equal(npl_db_link(&f->db, &f->d), 0);
}

static cJSON *resolve(struct fx *f, const char *id, const struct npl_override *ov, int nov, int force)
{
	struct npl_resolve_opts o = {&f->site, ov, nov, force, NULL, f->strict};
	const struct npl_layer *R = npl_db_recipe(&f->db, id);

	assert_non_null(R);
	return npl_resolve(&f->db, R, &o, &f->d);
}

static const char *msg(struct fx *f, int i)
{
	return npl_test_msg(&f->d, i);
}

static const cJSON *node(const cJSON *plan, const char *role, int i)
{
	const cJSON *r = npl_plan_role(plan, role);

	assert_non_null(r);
	return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "nodes"), i);
}

static const cJSON *flag(const cJSON *n, const char *name)
{
	const cJSON *f;

	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(n, "flags"))
		if (!strcmp(npl_json_str(f, "flag"), name))
			return f;
	return NULL;
}

static const char *value(const cJSON *n, const char *name)
{
	const cJSON *f = flag(n, name);

	return f ? cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(f, "values"), 0)->valuestring : NULL;
}

static const cJSON *env(const cJSON *n, const char *name)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(n, "env"))
		if (!strcmp(npl_json_str(e, "name"), name))
			return e;
	return NULL;
}

static const char *origin(const cJSON *item, const char *key)
{
	return npl_json_str(cJSON_GetObjectItemCaseSensitive(item, "origin"), key);
}

static void test_rules_and_origins(void **state)
{
	struct fx *f = *state;
	cJSON *plan;
	const cJSON *n;

	open_db(f, NULL);
	plan = resolve(f, "kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms", NULL, 0, 0);
	assert_non_null(plan);
	n = node(plan, "pd-mixed", 0);
	/* tp-size: 2 dies x 8 cards, by rule */
	assert_string_equal(value(n, "--tp-size"), "16");
	assert_string_equal(origin(flag(n, "--tp-size"), "layer"), "rule");
	assert_string_equal(origin(flag(n, "--tp-size"), "rule"), "tp-size");
	assert_string_equal(origin(flag(n, "--tp-size"), "why"), "2 dies per card x 8 cards");
	/* data keeps its file:line:col */
	assert_string_equal(origin(flag(n, "--mem-fraction-static"), "layer"), "recipe");
	assert_true(strstr(origin(flag(n, "--mem-fraction-static"), "at"),
			    "recipes/kimi-k2.6/kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms.yaml:") != NULL);
	assert_string_equal(origin(flag(n, "--reasoning-parser"), "layer"), "model");
	assert_string_equal(origin(flag(n, "--reasoning-parser"), "id"), "kimi-k2.6");
	assert_string_equal(origin(flag(n, "--device"), "layer"), "hardware");
	assert_string_equal(origin(flag(n, "--port"), "layer"), "defaults");
	/* site references stay references in the plan */
	assert_string_equal(value(n, "--model-path"), "${model-path}");
	assert_string_equal(value(n, "--speculative-draft-model-path"), "${draft-model-path}");
	assert_string_equal(npl_json_str(env(n, "GLOO_SOCKET_IFNAME"), "value"), "${ifname}");
	assert_string_equal(origin(env(n, "GLOO_SOCKET_IFNAME"), "layer"), "site");
	assert_string_equal(origin(env(n, "GLOO_SOCKET_IFNAME"), "key"), "ifname");
	assert_string_equal(origin(env(n, "GLOO_SOCKET_IFNAME"), "why"), "rule socket-ifname");
	assert_string_equal(origin(flag(n, "--model-path"), "layer"), "site");
	/* single node: no nnodes/node-rank/dist-init-addr; host from the defaults */
	assert_null(flag(n, "--nnodes"));
	assert_null(flag(n, "--dist-init-addr"));
	assert_string_equal(value(n, "--host"), "127.0.0.1");
	/* the plan says which site values the recipe needs */
	{
		const cJSON *needs = cJSON_GetObjectItemCaseSensitive(plan, "needs");

		assert_int_equal(cJSON_GetArraySize(needs), 3);
		assert_string_equal(npl_json_str(cJSON_GetArrayItem(needs, 0), "key"), "model-path");
		assert_string_equal(npl_json_str(cJSON_GetArrayItem(needs, 1), "key"), "draft-model-path");
		assert_string_equal(npl_json_str(cJSON_GetArrayItem(needs, 2), "key"), "ifname");
	}
	/* env sorted by name, as the pages list their exports */
	{
		const cJSON *e, *prev = NULL;

		cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(n, "env")) {
			if (prev)
				assert_true(strcmp(npl_json_str(prev, "name"), npl_json_str(e, "name")) < 0);
			prev = e;
		}
	}
	cJSON_Delete(plan);
}

static void test_explicit_single_node_flags(void **state)
{
	struct fx *f = *state;
	cJSON *kimi, *ds;

	open_db(f, NULL);
	kimi = resolve(f, "kimi-k2.6-w4a8-1p1d-16p-in128k-out1k-100ms", NULL, 0, 0);
	ds = resolve(f, "deepseek-v4-flash-w8a8-1p1d-16p-in8k-out1k-50ms", NULL, 0, 0);
	assert_non_null(kimi);
	assert_non_null(ds);
	/* the Kimi page writes --nnodes 1 --node-rank 0 on prefill, --nnodes 1 on decode */
	assert_string_equal(value(node(kimi, "prefill", 0), "--nnodes"), "1");
	assert_string_equal(value(node(kimi, "prefill", 0), "--node-rank"), "0");
	assert_string_equal(value(node(kimi, "decode", 0), "--nnodes"), "1");
	assert_null(flag(node(kimi, "decode", 0), "--node-rank"));
	/* the DeepSeek page writes neither */
	assert_null(flag(node(ds, "prefill", 0), "--nnodes"));
	assert_null(flag(node(ds, "prefill", 0), "--node-rank"));
	/* speculative decoding on decode only */
	assert_null(flag(node(kimi, "prefill", 0), "--speculative-algorithm"));
	assert_string_equal(value(node(kimi, "decode", 0), "--speculative-algorithm"), "EAGLE3");
	assert_string_equal(value(node(ds, "decode", 0), "--speculative-num-draft-tokens"), "3");
	/* the prefill of this recipe has no parsers (the page's own difference) */
	assert_null(flag(node(kimi, "prefill", 0), "--reasoning-parser"));
	assert_string_equal(value(node(kimi, "decode", 0), "--reasoning-parser"), "kimi_k2");
	/* the store URL on both servers, from the first prefill node */
	assert_string_equal(npl_json_str(env(node(kimi, "decode", 0), "ASCEND_MF_STORE_URL"), "value"),
			    "tcp://${prefill-ip[0]|url}:24670");
	cJSON_Delete(kimi);
	cJSON_Delete(ds);
}

static void test_socket_ifname_off(void **state)
{
	struct fx *f = *state;
	cJSON *plan;

	open_db(f, NULL);
	plan = resolve(f, "kimi-k2.6-w4a8-8p-in1080p-30-out256-50ms", NULL, 0, 0);
	assert_non_null(plan);
	assert_null(env(node(plan, "pd-mixed", 0), "GLOO_SOCKET_IFNAME"));
	assert_null(env(node(plan, "pd-mixed", 0), "HCCL_SOCKET_IFNAME"));
	/* image benchmark: chat backend, resolution, one image */
	assert_string_equal(value(node(plan, "bench", 0), "--backend"), "sglang-oai-chat");
	assert_string_equal(value(node(plan, "bench", 0), "--image-resolution"), "1920x1080");
	assert_string_equal(value(node(plan, "bench", 0), "--image-count"), "1");
	cJSON_Delete(plan);
}

static void test_gsp_rounding(void **state)
{
	struct fx *f = *state;
	cJSON *plan;

	open_db(f, NULL);
	/* round(65536 x 0.9) = 58982 (58982.4), round(65536 x 0.1) = 6554 (6553.6) */
	plan = resolve(f, "qwen3.5-397b-a17b-w4a8-8p-in64k-out1k-prefix90-50ms", NULL, 0, 0);
	assert_string_equal(value(node(plan, "bench", 0), "--gsp-system-prompt-len"), "58982");
	assert_string_equal(value(node(plan, "bench", 0), "--gsp-question-len"), "6554");
	assert_string_equal(value(node(plan, "bench", 0), "--gsp-prompts-per-group"), "96");
	cJSON_Delete(plan);
}

#define TEST_RECIPE(extra)                                                                         \
	"kind: recipe\ntitle: Test 8P 50ms\nmodel: kimi-k2.6\nhardware: ascend-a3\ncards: 8\n"     \
	"mode: pd-mixed\nquantization: q\ndataset: 8k+1k\ntpot: 50ms\n"                            \
	"bench: {dataset: random, input: 1, output: 1, concurrency: 1, prompts: 1}\n" extra

static void test_rule_checks(void **state)
{
	struct fx *f = *state;
	cJSON *plan;

	open_db(f, TEST_RECIPE("flags:\n  tp-size: 8\n  nnodes: 2\n  speculative-num-steps: 2\n"
			       "speculative:\n  steps: 3\n  topk: 2\n"));
	plan = resolve(f, "test-8p-50ms", NULL, 0, 0);
	assert_null(plan);
	assert_int_equal(f->d.errors, 4);
	assert_string_equal(msg(f, 0), "t.yaml:12:3: error: tp-size 8 contradicts the rule tp-size: pd-mixed needs 16 (2 dies per card x 8 cards; tp-size x pp-size is the instance's dies)");
	assert_string_equal(msg(f, 1), "t.yaml:13:3: error: flag 'nnodes' of pd-mixed is derived by a rule: the rule nodes writes it (an instance's cards / the hardware's cards per node): give the role's cards in 'topology', and list it under 'explicit' to have it on one node too");
	assert_string_equal(msg(f, 2), "t.yaml:14:3: error: flag 'speculative-num-steps' of pd-mixed is derived by a rule: the rule speculative writes it: set it in the 'speculative' block");
	assert_string_equal(msg(f, 3), "t.yaml:15:1: error: the speculative block needs 'draft_tokens' when topk is not 1");
}

static void test_tp_size_stated_and_right(void **state)
{
	struct fx *f = *state;
	cJSON *plan;

	open_db(f, TEST_RECIPE("flags:\n  tp-size: 16\nspeculative: {steps: 3}\n"));
	plan = resolve(f, "test-8p-50ms", NULL, 0, 0);
	assert_non_null(plan);
	assert_string_equal(value(node(plan, "pd-mixed", 0), "--tp-size"), "16");
	cJSON_Delete(plan);
}

static void test_overrides(void **state)
{
	struct fx *f = *state;
	const char *half[] = {"0.5"}, *one[] = {"1"}, *eight[] = {"8"}, *bs[] = {"1", "2"};
	struct npl_override ov[] = {
		{NPL_OV_SET_FLAG, NULL, "mem-fraction-static", half, 1, "--set mem-fraction-static=0.5"},
		{NPL_OV_UNSET_FLAG, NULL, "disable-radix-cache", NULL, 0, "--unset disable-radix-cache"},
		{NPL_OV_SET_FLAG, NULL, "enable-metrics", NULL, 0, "--set enable-metrics"},
		{NPL_OV_SET_FLAG, NULL, "cuda-graph-bs-decode", bs, 2, "--set cuda-graph-bs-decode=1 --set cuda-graph-bs-decode=2"},
		{NPL_OV_SET_ENV, NULL, "MY_VAR", one, 1, "--env MY_VAR=1"},
		{NPL_OV_UNSET_ENV, NULL, "STREAMS_PER_DEVICE", NULL, 0, "--unset-env STREAMS_PER_DEVICE"},
		{NPL_OV_SET_FLAG, "bench", "seed", eight, 1, "--set bench:seed=8"},
	};
	cJSON *plan;
	const cJSON *n, *fl;

	open_db(f, NULL);
	plan = resolve(f, "kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms", ov, 7, 0);
	assert_non_null(plan);
	n = node(plan, "pd-mixed", 0);
	assert_string_equal(value(n, "--mem-fraction-static"), "0.5");
	assert_string_equal(origin(flag(n, "--mem-fraction-static"), "layer"), "override");
	assert_string_equal(origin(flag(n, "--mem-fraction-static"), "option"), "--set mem-fraction-static=0.5");
	assert_null(flag(n, "--disable-radix-cache"));
	assert_non_null(flag(n, "--enable-metrics"));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(flag(n, "--enable-metrics"), "values")), 0);
	fl = cJSON_GetObjectItemCaseSensitive(flag(n, "--cuda-graph-bs-decode"), "values");
	assert_int_equal(cJSON_GetArraySize(fl), 2);
	assert_string_equal(npl_json_str(env(n, "MY_VAR"), "value"), "1");
	assert_null(env(n, "STREAMS_PER_DEVICE"));
	assert_string_equal(value(node(plan, "bench", 0), "--seed"), "8");
	cJSON_Delete(plan);
}

static void test_overrides_checked_by_rules(void **state)
{
	struct fx *f = *state;
	const char *eight[] = {"8"}, *sixteen[] = {"16"}, *h[] = {"0.0.0.0"};
	struct npl_override tp = {NPL_OV_SET_FLAG, NULL, "tp-size", eight, 1, "--set tp-size=8"};
	struct npl_override tp16 = {NPL_OV_SET_FLAG, NULL, "tp-size", sixteen, 1, "--set tp-size=16"};
	struct npl_override host = {NPL_OV_SET_FLAG, NULL, "host", h, 1, "--set host=0.0.0.0"};
	struct npl_override router = {NPL_OV_SET_FLAG, "router", "policy", eight, 1, "--set router:policy=8"};
	cJSON *plan;

	open_db(f, NULL);
	assert_null(resolve(f, "kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms", &tp, 1, 0));
	assert_string_equal(msg(f, 0), "error: --set tp-size=8 contradicts the rule tp-size: pd-mixed has 16 (the instance's dies / pp-size); use --force to insist");
	assert_null(resolve(f, "kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms", &host, 1, 0));
	assert_string_equal(msg(f, 1), "error: --set host=0.0.0.0: --host of pd-mixed is derived by the rules from the defaults's settings (see show --explain); use --force to insist");
	assert_null(resolve(f, "kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms", &router, 1, 0));
	assert_string_equal(msg(f, 2), "error: --set router:policy=8: recipe 'kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms' has no router role");
	/* agreeing with the rule is fine; --force lets a contradiction through, marked */
	plan = resolve(f, "kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms", &tp16, 1, 0);
	assert_non_null(plan);
	cJSON_Delete(plan);
	plan = resolve(f, "kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms", &tp, 1, 1);
	assert_non_null(plan);
	assert_string_equal(value(node(plan, "pd-mixed", 0), "--tp-size"), "8");
	assert_string_equal(origin(flag(node(plan, "pd-mixed", 0), "--tp-size"), "layer"), "override");
	cJSON_Delete(plan);
}

static void test_site_values_checked(void **state)
{
	struct fx *f = *state;
	cJSON *plan;

	open_db(f, NULL);
	assert_int_equal(npl_site_set(&f->site, &f->a, NPL_SITE_NODE_IP, "10.0.0.1", NULL, &f->d), 0);
	/* a value the recipe has no use for: a note, or with strict an error */
	plan = resolve(f, "kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms", NULL, 0, 0);
	assert_non_null(plan);
	cJSON_Delete(plan);
	assert_string_equal(msg(f, 0), "note: --node-ip: recipe 'kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms' has no use for it (its server runs on one node): ignored (--strict refuses it)");
	f->strict = 1;
	assert_null(resolve(f, "kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms", NULL, 0, 0));
	assert_string_equal(msg(f, 1), "error: --node-ip: recipe 'kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms' has no use for it (its server runs on one node); --strict refuses it");
	f->strict = 0;
	/* the 16-card mixed recipe needs two, in rank order */
	assert_null(resolve(f, "kimi-k2.6-w4a8-16p-in64k-out1k-100ms", NULL, 0, 0));
	assert_string_equal(msg(f, 2), "error: --node-ip: recipe 'kimi-k2.6-w4a8-16p-in64k-out1k-100ms' needs 2 addresses in rank order, got 1");
	assert_int_equal(npl_site_set(&f->site, &f->a, NPL_SITE_NODE_IP, "10.0.0.2", NULL, &f->d), 0);
	plan = resolve(f, "kimi-k2.6-w4a8-16p-in64k-out1k-100ms", NULL, 0, 0);
	assert_non_null(plan);
	/* the plan keeps references, and the given values beside them */
	assert_string_equal(value(node(plan, "pd-mixed", 1), "--host"), "${node-ip[1]}");
	assert_string_equal(value(node(plan, "pd-mixed", 1), "--node-rank"), "1");
	assert_string_equal(value(node(plan, "pd-mixed", 1), "--dist-init-addr"), "${node-ip[0]|url}:5000");
	assert_string_equal(value(node(plan, "pd-mixed", 0), "--tp-size"), "32");
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
				cJSON_GetObjectItemCaseSensitive(plan, "site"), "node-ip"), 1)->valuestring,
			    "10.0.0.2");
	cJSON_Delete(plan);
	/* a disagg recipe takes prefill/decode addresses, not node addresses */
	f->strict = 1;
	assert_null(resolve(f, "deepseek-v4-flash-w8a8-1p1d-16p-in8k-out1k-50ms", NULL, 0, 0));
	assert_string_equal(msg(f, 3), "error: --node-ip: recipe 'deepseek-v4-flash-w8a8-1p1d-16p-in8k-out1k-50ms' has no use for it (its server runs on one node); --strict refuses it");
}

static void test_literal_dollar_escaped(void **state)
{
	struct fx *f = *state;
	cJSON *plan;
	struct npl_buf b = NPL_BUF_INIT;

	open_db(f, TEST_RECIPE("env:\n  PRICE: $5 $(x)\nspeculative: {steps: 3}\n"));
	plan = resolve(f, "test-8p-50ms", NULL, 0, 0);
	assert_non_null(plan);
	assert_string_equal(npl_json_str(env(node(plan, "pd-mixed", 0), "PRICE"), "value"), "$$5 $$(x)");
	assert_int_equal(npl_pval_resolve(&b, "$$5 $$(x)", NULL, NULL), 0);
	assert_string_equal(npl_buf_str(&b), "$5 $(x)");
	npl_buf_release(&b);
	cJSON_Delete(plan);
}

/* Flags as SGLang's argparse reads them: a prefix or an alias in a recipe or a
 * --set becomes the registry's full name, with a note at the place it was written. */
static void test_flag_names_normalised(void **state)
{
	struct fx *f = *state;
	const char *two[] = {"2"}, *half[] = {"0.5"};
	struct npl_override dp = {NPL_OV_SET_FLAG, NULL, "dp", two, 1, "--set dp=2"};
	struct npl_override mem = {NPL_OV_SET_FLAG, NULL, "mem-frac", half, 1, "--set mem-frac=0.5"};
	struct npl_override ovs[2];
	cJSON *plan;
	int i, notes = 0;

	ovs[0] = dp;
	ovs[1] = mem;
	open_db(f, TEST_RECIPE("flags:\n  moe-dense-tp: 1\n  cuda-graph-bs: [1, 2]\nspeculative: {steps: 3}\n"));
	plan = resolve(f, "test-8p-50ms", ovs, 2, 0);
	assert_non_null(plan);
	assert_string_equal(value(node(plan, "pd-mixed", 0), "--moe-dense-tp-size"), "1");
	assert_non_null(flag(node(plan, "pd-mixed", 0), "--cuda-graph-bs-decode"));
	assert_null(flag(node(plan, "pd-mixed", 0), "--cuda-graph-bs"));
	assert_null(flag(node(plan, "pd-mixed", 0), "--moe-dense-tp"));
	assert_string_equal(value(node(plan, "pd-mixed", 0), "--dp-size"), "2");
	assert_string_equal(value(node(plan, "pd-mixed", 0), "--mem-fraction-static"), "0.5");
	for (i = 0; i < f->d.n; i++)
		if (f->d.v[i].sev == NPL_NOTE)
			notes++;
	assert_int_equal(notes, 4);
	assert_int_equal(f->d.errors, 0);
	for (i = 0; i < f->d.n; i++)
		if (strstr(f->d.v[i].msg, "'moe-dense-tp' is an unambiguous prefix of moe-dense-tp-size"))
			break;
	assert_true(i < f->d.n);
	assert_non_null(f->d.v[i].loc.file);
	cJSON_Delete(plan);
}

#define AFF_RECIPE(title, extra)                                                                   \
	"kind: recipe\ntitle: " title "\nmodel: kimi-k2.6\nhardware: ascend-a3\ncards: 8\n"         \
	"mode: pd-mixed\nquantization: q\ndataset: 8k+1k\ntpot: 50ms\n"                            \
	"bench: {dataset: random, input: 1, output: 1, concurrency: 1, prompts: 1}\n"               \
	"speculative: {steps: 3}\n" extra

/* One key of the pd-mixed role's tuning.affinity: its value (as JSON), its origin's layer and
 * (unless at is NULL) where it was set. */
static void aff_key(const cJSON *plan, const char *key, const char *value, const char *layer, const char *at)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(npl_plan_role(plan, "pd-mixed"), "tuning");
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(t, "affinity"), key);
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(k, "value");
	char *text;

	assert_non_null(v);
	text = cJSON_PrintUnformatted(v);
	assert_string_equal(text, value);
	free(text);
	assert_string_equal(origin(k, "layer"), layer);
	if (at)
		assert_string_equal(origin(k, "at"), at);
}

static int has_affinity(const cJSON *plan)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(npl_plan_role(plan, "pd-mixed"), "tuning");

	assert_non_null(t);
	return cJSON_GetObjectItemCaseSensitive(t, "affinity") != NULL;
}

/* tuning.affinity (issue 26): later layers replace it key by key; null, replace and tuning: null
 * drop it; a key no layer sets has its default, a rule's */
static void test_affinity_merged_per_key(void **state)
{
	struct fx *f = *state;
	cJSON *plan, *t;

	open_db(f, AFF_RECIPE("Aff 8P 50ms", "tuning:\n  affinity: {min_cpus_per_die: 8, irqs: false}\n")
		   "---\n" AFF_RECIPE("Aff Null 8P 50ms", "tuning: {affinity: null}\n")
		   "---\n" AFF_RECIPE("Aff Tnull 8P 50ms", "tuning: null\n")
		   "---\n" AFF_RECIPE("Aff Replace 8P 50ms", "tuning: {replace: true, affinity: {policy: numa-local}}\n")
		   "---\n" AFF_RECIPE("Aff Gone 8P 50ms", "tuning: {replace: true, cpu_governor: performance}\n"));
	plan = resolve(f, "aff-8p-50ms", NULL, 0, 0);
	assert_non_null(plan);
	aff_key(plan, "policy", "\"even-slice\"", "hardware", "recipes/hardware/ascend-a3.yaml:19:22");
	aff_key(plan, "min_cpus_per_die", "8", "recipe", "t.yaml:13:32");
	aff_key(plan, "irqs", "false", "recipe", "t.yaml:13:41");
	cJSON_Delete(plan);
	/* the shipped profile alone */
	plan = resolve(f, "kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms", NULL, 0, 0);
	aff_key(plan, "min_cpus_per_die", "5", "hardware", "recipes/hardware/ascend-a3.yaml:19:52");
	aff_key(plan, "irqs", "true", "hardware", "recipes/hardware/ascend-a3.yaml:19:61");
	cJSON_Delete(plan);
	/* dropped: affinity: null, tuning: null, tuning.replace without an affinity */
	plan = resolve(f, "aff-null-8p-50ms", NULL, 0, 0);
	assert_false(has_affinity(plan));
	cJSON_Delete(plan);
	plan = resolve(f, "aff-tnull-8p-50ms", NULL, 0, 0);
	assert_false(has_affinity(plan));
	cJSON_Delete(plan);
	plan = resolve(f, "aff-gone-8p-50ms", NULL, 0, 0);
	assert_false(has_affinity(plan));
	cJSON_Delete(plan);
	/* replace, then a policy: the other keys are the defaults */
	plan = resolve(f, "aff-replace-8p-50ms", NULL, 0, 0);
	aff_key(plan, "policy", "\"numa-local\"", "recipe", "t.yaml:52:44");
	aff_key(plan, "min_cpus_per_die", "5", "rule", NULL);
	aff_key(plan, "irqs", "false", "rule", NULL);
	t = cJSON_GetObjectItemCaseSensitive(npl_plan_role(plan, "pd-mixed"), "tuning");
	assert_string_equal(npl_json_str(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
					     cJSON_GetObjectItemCaseSensitive(t, "affinity"), "irqs"), "origin"), "rule"),
			    "affinity");
	/* the router and the benchmark have no tuning */
	assert_null(cJSON_GetObjectItemCaseSensitive(npl_plan_role(plan, "bench"), "tuning"));
	cJSON_Delete(plan);
	/* tune without a recipe: the profile's */
	t = npl_resolve_tuning(&f->db, npl_db_hardware(&f->db, "ascend-a2"), &f->d);
	assert_non_null(t);
	assert_string_equal(npl_json_str(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(t, "affinity"),
									   "policy"), "value"), "numa-local");
	cJSON_Delete(t);
	assert_int_equal(f->d.errors, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rules_and_origins, setup, teardown),
		cmocka_unit_test_setup_teardown(test_explicit_single_node_flags, setup, teardown),
		cmocka_unit_test_setup_teardown(test_socket_ifname_off, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gsp_rounding, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rule_checks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tp_size_stated_and_right, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overrides, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overrides_checked_by_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_site_values_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_literal_dollar_escaped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flag_names_normalised, setup, teardown),
		cmocka_unit_test_setup_teardown(test_affinity_merged_per_key, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
