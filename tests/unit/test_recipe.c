/* test_recipe.c: the strict recipe loader and the database: keys, types, ids, references, overrides. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cmocka.h>

#include "npulaunch/engine.h"
#include "npulaunch/fsio.h"
#include "npulaunch/recipe.h"
#include "unit.h"

struct fx {
	struct npl_arena a;
	struct npl_diag d;
	struct npl_db db;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	npl_arena_init(&f->a);
	npl_db_init(&f->db, &f->a);
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

/* The embedded catalogue plus one test document (as source 1), linked. */
static int load(struct fx *f, const char *text)
{
	int rc = npl_db_load_embedded(&f->db, &f->d);

	assert_int_equal(rc, 0);
	rc = npl_db_load_text(&f->db, "t.yaml", text, strlen(text), 1, &f->d);
	if (npl_db_link(&f->db, &f->d))
		rc = -1;
	return rc;
}

static const char *msg(struct fx *f, int i)
{
	return npl_test_msg(&f->d, i);
}

#define RECIPE_HEAD                                                                                \
	"kind: recipe\n"                                                                           \
	"title: Test W8A8 8P IN8K OUT1K 50ms\n"                                                    \
	"model: kimi-k2.6\n"                                                                       \
	"hardware: ascend-a3\n"

#define RECIPE_TAIL                                                                                \
	"quantization: W8A8 INT8\n"                                                                \
	"dataset: 8k+1k\n"                                                                         \
	"tpot: 50ms\n"                                                                             \
	"bench: {dataset: random, input: 8000, output: 1000, concurrency: 1, prompts: 1}\n"

static void test_embedded_catalogue(void **state)
{
	struct fx *f = *state;

	assert_int_equal(npl_db_open(&f->db, &f->a, NULL, 0, &f->d), 0);
	assert_int_equal(f->d.n, 0);
	assert_int_equal(f->db.nrecipes, 61);
	assert_int_equal(f->db.nmodels, 13);
	assert_int_equal(f->db.nhardware, 2);
	assert_non_null(f->db.defaults->db_version);
	/* sorted by id, found by binary search */
	assert_string_equal(f->db.recipes[0]->id, "deepseek-r1-w4a8-1p1d-16p-in3k5-out1k5-50ms");
	assert_non_null(npl_db_recipe(&f->db, "qwen3-30b-a3b-w8a8-1p-in3k5-out1k5-10ms"));
	assert_non_null(npl_db_recipe(&f->db, "qwen3.5-397b-a17b-w4a8-8p-in3k5-out1k5-22.2ms"));
	assert_null(npl_db_recipe(&f->db, "qwen3.5-397b-a17b-w4a8-8p-in3k5-out1k5-22ms"));
	assert_int_equal(npl_db_recipe(&f->db, "kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms")->tpot_us, 20000);
	assert_int_equal(npl_db_recipe(&f->db, "kimi-k2.6-w4a8-1p1d-16p-in128k-out1k-prefix90-100ms")->ttft_us,
			 5000000);
	/* models by id, name or alias, any case */
	assert_string_equal(npl_db_model(&f->db, "Kimi-K2.6")->id, "kimi-k2.6");
	assert_string_equal(npl_db_model(&f->db, "QWEN3.5-397B-A17B")->id, "qwen3.5-397b-a17b");
	assert_string_equal(npl_db_model(&f->db, "deepseek-v4")->id, "deepseek-v4-flash");
	assert_null(npl_db_model(&f->db, "kimi"));
	assert_string_equal(npl_db_hardware(&f->db, "Ascend A2 Series Products")->id, "ascend-a2");
}

static void test_ids_and_durations(void **state)
{
	struct fx *f = *state;
	char buf[32];

	assert_string_equal(npl_recipe_id_from_title(&f->a, "  Kimi-K2.6 W4A8   8P IN3K5 OUT1K5 20ms "),
			    "kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms");
	assert_int_equal(npl_parse_duration_us("20ms"), 20000);
	assert_int_equal(npl_parse_duration_us("22.2ms"), 22200);
	assert_int_equal(npl_parse_duration_us("5s"), 5000000);
	assert_int_equal(npl_parse_duration_us("1.5s"), 1500000);
	assert_int_equal(npl_parse_duration_us("250us"), 250);
	assert_int_equal(npl_parse_duration_us("20"), -1);
	assert_int_equal(npl_parse_duration_us("20 ms"), -1);
	assert_int_equal(npl_parse_duration_us("ms"), -1);
	assert_int_equal(npl_parse_duration_us("0.0001ms"), -1);
	assert_int_equal(npl_parse_duration_us("-5ms"), -1);
	npl_format_duration(buf, sizeof(buf), 22200);
	assert_string_equal(buf, "22.2ms");
	npl_format_duration(buf, sizeof(buf), 5000000);
	assert_string_equal(buf, "5s");
	npl_format_duration(buf, sizeof(buf), 20000);
	assert_string_equal(buf, "20ms");
	npl_format_duration(buf, sizeof(buf), 1500000);
	assert_string_equal(buf, "1500ms");
}

static void test_unknown_key_did_you_mean(void **state)
{
	struct fx *f = *state;

	assert_int_equal(load(f, RECIPE_HEAD "cards: 8\nmode: pd-mixed\nquantisation: W8A8 INT8\n"
				 "dataset: 8k+1k\ntpot: 50ms\n"
				 "bench: {dataset: random, input: 1, output: 1, concurrency: 1, prompts: 1}\n"), -1);
	assert_string_equal(msg(f, 0), "t.yaml:7:1: error: unknown key 'quantisation' in a recipe (did you mean 'quantization'?)");
	assert_string_equal(msg(f, 1), "t.yaml:1:1: error: a recipe needs 'quantization'");
	assert_int_equal(f->d.errors, 2);
}

static void test_key_of_another_kind(void **state)
{
	struct fx *f = *state;

	assert_int_equal(load(f, RECIPE_HEAD "cards: 8\nmode: pd-mixed\ndies_per_card: 2\n" RECIPE_TAIL), -1);
	assert_string_equal(msg(f, 0), "t.yaml:7:1: error: key 'dies_per_card' does not belong in a recipe (it is a key of a hardware profile)");
}

static void test_every_error_reported(void **state)
{
	struct fx *f = *state;

	/* three problems in one document: all three are reported, in order */
	assert_int_equal(load(f, RECIPE_HEAD "cards: sixteen\nmode: pd-mixd\nenv: [A, B]\n" RECIPE_TAIL), -1);
	assert_int_equal(f->d.errors, 3);
	assert_string_equal(msg(f, 0), "t.yaml:5:8: error: 'cards' must be a whole number, not 'sixteen'");
	assert_string_equal(msg(f, 1), "t.yaml:6:7: error: unknown mode 'pd-mixd' (pd-mixed or pd-disagg)");
	assert_string_equal(msg(f, 2), "t.yaml:7:6: error: 'env' must be a mapping (key: value lines), not a list");
}

static void test_flag_values(void **state)
{
	struct fx *f = *state;
	const struct npl_layer *R;
	const struct npl_scope_set *s;

	assert_int_equal(load(f, RECIPE_HEAD "cards: 8\nmode: pd-mixed\n" RECIPE_TAIL
				 "flags:\n"
				 "  trust-remote-code: true\n"
				 "  disable-radix-cache: false\n"
				 "  reasoning-parser: ~\n"
				 "  mem-fraction-static: 0.60\n"
				 "  cuda-graph-bs-decode: [1, 2, 4]\n"
				 "  model-loader-extra-config: '{\"a\": true}'\n"
				 "env:\n"
				 "  SGLANG_X: False\n"
				 "  GONE: null\n"), 0);
	R = npl_db_recipe(&f->db, "test-w8a8-8p-in8k-out1k-50ms");
	assert_non_null(R);
	s = &R->scope[NPL_SCOPE_SERVER];
	assert_int_equal(s->nflags, 6);
	assert_int_equal(s->flags[0].kind, NPL_FLAG_SWITCH);
	assert_int_equal(s->flags[1].kind, NPL_FLAG_REMOVE);
	assert_int_equal(s->flags[2].kind, NPL_FLAG_REMOVE);
	assert_int_equal(s->flags[3].kind, NPL_FLAG_VALUES);
	assert_string_equal(s->flags[3].values[0], "0.60");  /* literal text, not a float */
	assert_int_equal(s->flags[4].nvalues, 3);
	assert_string_equal(s->flags[4].values[2], "4");
	assert_string_equal(s->flags[5].values[0], "{\"a\": true}");
	assert_int_equal(s->flags[3].loc.line, 15);
	assert_int_equal(s->flags[3].loc.col, 3);
	assert_string_equal(s->env[0].value, "False");  /* env values are text: no YAML booleans */
	assert_null(s->env[1].value);
}

static void test_bad_flags(void **state)
{
	struct fx *f = *state;

	assert_int_equal(load(f, RECIPE_HEAD "cards: 8\nmode: pd-mixed\n" RECIPE_TAIL
				 "flags:\n"
				 "  --tp-size: 16\n"
				 "  Mem_Fraction: 1\n"
				 "  dp-size: {a: 1}\n"
				 "  cuda-graph-bs-decode: []\n"
				 "  tokenizer-path: {site: node-ip}\n"), -1);
	assert_int_equal(f->d.errors, 5);
	assert_string_equal(msg(f, 0), "t.yaml:12:3: error: write flag names without the leading dashes: 'tp-size'");
	assert_string_equal(msg(f, 1), "t.yaml:13:3: error: 'Mem_Fraction' is not a flag name (lowercase letters, digits, '-')");
	assert_string_equal(msg(f, 2), "t.yaml:14:12: error: flag 'dp-size' takes true, false/null, a value, a non-empty list of values or {site: KEY} (model-path, draft-model-path, ifname)");
	assert_string_equal(msg(f, 3), "t.yaml:15:25: error: flag 'cuda-graph-bs-decode' takes true, false/null, a value or a non-empty list of values");
	/* a site value a flag can hold is one value: not a list, not a cluster's */
	assert_string_equal(msg(f, 4), "t.yaml:16:19: error: flag 'tokenizer-path' takes true, false/null, a value, a non-empty list of values or {site: KEY} (model-path, draft-model-path, ifname)");
}

static void test_unknown_role_and_nested_keys(void **state)
{
	struct fx *f = *state;

	assert_int_equal(load(f, RECIPE_HEAD "cards: 8\nmode: pd-mixed\n" RECIPE_TAIL
				 "roles:\n"
				 "  decoder:\n"
				 "    env: {A: 1}\n"
				 "  prefill:\n"
				 "    flag: {x: 1}\n"
				 "speculative:\n"
				 "  step: 3\n"), -1);
	assert_string_equal(msg(f, 0), "t.yaml:12:3: error: unknown role 'decoder' (did you mean 'decode'?)");
	assert_string_equal(msg(f, 1), "t.yaml:15:5: error: unknown key 'flag' in role 'prefill' (did you mean 'flags'?)");
	assert_string_equal(msg(f, 2), "t.yaml:17:3: error: unknown key 'step' in 'speculative' (did you mean 'steps'?)");
}

static void test_duplicate_id_same_folder(void **state)
{
	struct fx *f = *state;
	const char *doc = RECIPE_HEAD "cards: 8\nmode: pd-mixed\n" RECIPE_TAIL;
	char two[2048];

	snprintf(two, sizeof(two), "%s---\n%s", doc, doc);
	assert_int_equal(load(f, two), -1);
	assert_string_equal(msg(f, 0), "t.yaml:12:1: error: duplicate recipe id 'test-w8a8-8p-in8k-out1k-50ms' (also defined at t.yaml:1:1)");
}

static void test_later_folder_overrides(void **state)
{
	struct fx *f = *state;
	const char *mine = "kind: recipe\n"
			   "title: Kimi-K2.6 W4A8 8P IN3K5 OUT1K5 20ms\n"
			   "model: kimi-k2.6\nhardware: ascend-a3\ncards: 8\nmode: pd-mixed\n" RECIPE_TAIL;

	/* same id as a shipped recipe: the later folder wins, no duplicate error */
	assert_int_equal(load(f, mine), 0);
	assert_int_equal(f->db.nrecipes, 61);
	assert_string_equal(npl_db_recipe(&f->db, "kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms")->file, "t.yaml");
	assert_int_equal(npl_db_recipe(&f->db, "kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms")->tpot_us, 50000);
}

static void test_dangling_references(void **state)
{
	struct fx *f = *state;

	assert_int_equal(load(f, "kind: recipe\ntitle: X 8P 50ms\nmodel: kimi-k2.7\nhardware: ascend-a9\n"
				 "cards: 8\nmode: pd-mixed\n" RECIPE_TAIL), -1);
	assert_string_equal(msg(f, 0), "t.yaml:3:8: error: unknown model 'kimi-k2.7' (did you mean 'kimi-k2.6'?)");
	assert_string_equal(msg(f, 1), "t.yaml:4:11: error: unknown hardware profile 'ascend-a9' (did you mean 'ascend-a2'?)");
}

static void test_topology(void **state)
{
	struct fx *f = *state;
	const struct npl_layer *R;

	assert_int_equal(load(f, RECIPE_HEAD "cards: 24\nmode: pd-disagg\n" RECIPE_TAIL
				 "topology:\n  prefill: {instances: 2, cards: 8}\n  decode: {instances: 1, cards: 16}\n"),
			 -1);
	assert_string_equal(msg(f, 0), "t.yaml:11:1: error: the topology uses 32 cards (2 x 8 prefill + 1 x 16 decode) but 'cards' is 24");
	teardown(state);
	setup(state);
	f = *state;
	assert_int_equal(load(f, RECIPE_HEAD "cards: 16\nmode: pd-disagg\n" RECIPE_TAIL), 0);
	R = npl_db_recipe(&f->db, "test-w8a8-8p-in8k-out1k-50ms");
	/* without a topology: 1P1D, the cards split evenly */
	assert_int_equal(R->topo[0].instances.v, 1);
	assert_int_equal(R->topo[0].cards.v, 8);
	assert_int_equal(R->topo[1].cards.v, 8);
	teardown(state);
	setup(state);
	f = *state;
	assert_int_equal(load(f, RECIPE_HEAD "cards: 8\nmode: pd-mixed\n" RECIPE_TAIL
				 "topology:\n  prefill: {instances: 1, cards: 4}\n  decode: {instances: 1, cards: 4}\n"), -1);
	assert_string_equal(msg(f, 0), "t.yaml:11:1: error: a pd-mixed recipe's 'topology' has only 'pd-mixed' (prefill and decode are for pd-disagg recipes)");
}

static void test_kinds_and_shapes_of_documents(void **state)
{
	struct fx *f = *state;

	assert_int_equal(load(f, "- a\n- b\n---\nname: x\n---\nkind: recipie\n"), -1);
	assert_string_equal(msg(f, 0), "t.yaml:1:1: error: a recipe file holds mappings (key: value lines), not a list");
	assert_string_equal(msg(f, 1), "t.yaml:4:1: error: missing 'kind' (defaults, hardware, model, recipe or engine-flags)");
	assert_string_equal(msg(f, 2), "t.yaml:6:7: error: unknown kind 'recipie' (did you mean 'recipe'?)");
}

static void test_hardware_and_model_documents(void **state)
{
	struct fx *f = *state;

	assert_int_equal(load(f, "kind: hardware\nid: ascend-x\nname: X\ndies_per_card: 0\n"
				 "tuning:\n  cpu_governor: perf ormance\n  sysctl: {vm: 1, vm.swappiness: [1]}\n"
				 "source: [relative/set_env.sh]\n"
				 "---\n"
				 "kind: model\nid: Bad Id\nname: ok\n"), -1);
	assert_string_equal(msg(f, 0), "t.yaml:4:16: error: 'dies_per_card' must be between 1 and 64, not 0");
	assert_string_equal(msg(f, 1), "t.yaml:6:17: error: 'perf ormance' is not a cpufreq governor name");
	assert_string_equal(msg(f, 2), "t.yaml:7:12: error: 'vm' is not a sysctl name (like vm.swappiness)");
	assert_string_equal(msg(f, 3), "t.yaml:7:34: error: the value of sysctl 'vm.swappiness' must be a single value");
	assert_string_equal(msg(f, 4), "t.yaml:8:10: error: 'relative/set_env.sh' is not an absolute path without '..' parts");
	assert_string_equal(msg(f, 5), "t.yaml:1:1: error: a hardware profile needs 'cards_per_node'");
	assert_string_equal(msg(f, 6), "t.yaml:11:5: error: 'Bad Id' is not an id (lowercase letters, digits, '.', '_', '-')");
}

/* tuning.affinity (issue 26): each wrong key or value a located error */
static void test_affinity_errors(void **state)
{
	struct fx *f = *state;

	assert_int_equal(load(f, RECIPE_HEAD "cards: 8\nmode: pd-mixed\n" RECIPE_TAIL
				 "tuning:\n"
				 "  affinity:\n"
				 "    polcy: numa-local\n"
				 "    policy: numa-locale\n"
				 "    min_cpus_per_die: 0\n"
				 "    irqs: sometimes\n"
				 "---\n"
				 "kind: model\nid: m-aff\nname: M\n"
				 "tuning: {affinity: {policy: spread, min_cpus_per_die: 2.5}}\n"
				 "---\n"
				 "kind: model\nid: m-aff2\nname: M2\n"
				 "tuning: {affinity: [numa-local]}\n"
				 "---\n"
				 "kind: model\nid: m-aff3\nname: M3\n"
				 "tuning: {affinity: {policy: [none], min_cpus_per_die: -1, irqs: ~}}\n"), -1);
	assert_string_equal(msg(f, 0), "t.yaml:13:5: error: unknown key 'polcy' in 'tuning.affinity' (did you mean 'policy'?)");
	assert_string_equal(msg(f, 1), "t.yaml:14:13: error: unknown affinity policy 'numa-locale' (did you mean 'numa-local'?) (numa-local, even-slice or none)");
	assert_string_equal(msg(f, 2), "t.yaml:15:23: error: 'min_cpus_per_die' must be between 1 and 4096, not 0");
	assert_string_equal(msg(f, 3), "t.yaml:16:11: error: 'irqs' must be true or false");
	assert_string_equal(msg(f, 4), "t.yaml:21:29: error: unknown affinity policy 'spread' (numa-local, even-slice or none)");
	assert_string_equal(msg(f, 5), "t.yaml:21:55: error: 'min_cpus_per_die' must be a whole number, not '2.5'");
	assert_string_equal(msg(f, 6), "t.yaml:26:20: error: 'affinity' must be a mapping (key: value lines), not a list");
	assert_string_equal(msg(f, 7), "t.yaml:31:29: error: 'policy' must be a single value, not a list");
	assert_string_equal(msg(f, 8), "t.yaml:31:55: error: 'min_cpus_per_die' must be a whole number, not '-1'");
	assert_string_equal(msg(f, 9), "t.yaml:31:65: error: 'irqs' must be true or false");
	assert_int_equal(f->d.errors, 10);
}

/* tuning.affinity read into the layer: the keys given, null, and tuning: null */
static void test_affinity_read(void **state)
{
	struct fx *f = *state;
	const struct npl_layer *R, *M;

	assert_int_equal(load(f, RECIPE_HEAD "cards: 8\nmode: pd-mixed\n" RECIPE_TAIL
				 "tuning:\n  affinity: {irqs: false, min_cpus_per_die: 7}\n"
				 "---\n"
				 "kind: model\nid: m-aff\nname: M\ntuning: {affinity: null}\n"), 0);
	R = npl_db_recipe(&f->db, "test-w8a8-8p-in8k-out1k-50ms");
	assert_non_null(R);
	assert_null(R->affinity.policy.s);
	assert_int_equal(R->affinity.min_cpus.set, 1);
	assert_int_equal(R->affinity.min_cpus.v, 7);
	assert_int_equal(R->affinity.irqs.set, 1);
	assert_int_equal(R->affinity.irqs.v, 0);
	assert_int_equal(R->affinity.irqs.loc.line, 12);
	assert_int_equal(R->affinity.removed, 0);
	M = npl_db_model(&f->db, "m-aff");
	assert_non_null(M);
	assert_int_equal(M->affinity.removed, 1);
	/* the shipped profiles */
	assert_string_equal(npl_db_hardware(&f->db, "ascend-a2")->affinity.policy.s, "numa-local");
	assert_string_equal(npl_db_hardware(&f->db, "ascend-a3")->affinity.policy.s, "even-slice");
	assert_int_equal(npl_db_hardware(&f->db, "ascend-a3")->affinity.min_cpus.v, 5);
	assert_int_equal(npl_db_hardware(&f->db, "ascend-a3")->affinity.irqs.v, 1);
}

static void test_load_dir_errors(void **state)
{
	struct fx *f = *state;

	assert_int_equal(npl_db_load_dir(&f->db, "/nonexistent/recipes", &f->d), -1);
	assert_string_equal(msg(f, 0), "error: recipe folder '/nonexistent/recipes' does not exist or is not a folder");
}

static void same_str(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

/* The registry compiled at build time is the YAML, parsed: every tool, flag, choice, alias,
 * note and speculative algorithm; and it is what npl_engine_load() gives without a folder's
 * own registry. */
static void test_engine_compiled_is_the_yaml(void **state)
{
	struct npl_arena a;
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_engine parsed, loaded;
	const struct npl_engine *c = npl_engine_compiled;
	const struct npl_flag_spec *tp;
	char *text;
	size_t len;
	int i, j, k;

	(void)state;
	npl_arena_init(&a);
	assert_non_null(c);
	text = npl_read_file(NPL_SOURCE_DIR "/recipes/engine/sglang-flags.yaml", &len, &d);
	assert_non_null(text);
	assert_int_equal(npl_engine_parse(&parsed, "recipes/engine/sglang-flags.yaml", text, len, &a, &d), 0);
	assert_int_equal(d.n, 0);
	same_str(c->version, parsed.version);
	same_str(c->source, parsed.source);
	same_str(c->file, parsed.file);
	assert_int_equal(c->ntools, parsed.ntools);
	assert_true(c->ntools >= 3);
	for (i = 0; i < c->ntools; i++) {
		const struct npl_engine_tool *x = &c->tools[i], *y = &parsed.tools[i];

		same_str(x->name, y->name);
		same_str(x->module, y->module);
		assert_int_equal(x->nflags, y->nflags);
		for (j = 0; j < x->nflags; j++) {
			same_str(x->flags[j].name, y->flags[j].name);
			assert_int_equal(x->flags[j].type, y->flags[j].type);
			assert_int_equal(x->flags[j].nchoices, y->flags[j].nchoices);
			for (k = 0; k < x->flags[j].nchoices; k++)
				same_str(x->flags[j].choices[k], y->flags[j].choices[k]);
			same_str(x->flags[j].alias_of, y->flags[j].alias_of);
			assert_int_equal(x->flags[j].upstream, y->flags[j].upstream);
			same_str(x->flags[j].note, y->flags[j].note);
		}
	}
	assert_int_equal(c->nspec, parsed.nspec);
	for (i = 0; i < c->nspec; i++) {
		same_str(c->spec_names[i], parsed.spec_names[i]);
		same_str(c->spec_draft[i], parsed.spec_draft[i]);
	}
	assert_int_equal(npl_engine_load(&loaded, NULL, &a, &d), 0);
	assert_ptr_equal(loaded.tools, c->tools);
	tp = npl_engine_flag(npl_engine_tool(&loaded, "sglang.launch_server"), "tp-size");
	assert_non_null(tp);
	assert_int_equal(tp->type, NPL_FT_INT);
	assert_null(npl_engine_flag(npl_engine_tool(&loaded, "sglang.launch_server"), "tp-sizes"));
	free(text);
	npl_diag_release(&d);
	npl_arena_release(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_embedded_catalogue, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ids_and_durations, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_key_did_you_mean, setup, teardown),
		cmocka_unit_test_setup_teardown(test_key_of_another_kind, setup, teardown),
		cmocka_unit_test_setup_teardown(test_every_error_reported, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flag_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_flags, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_role_and_nested_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicate_id_same_folder, setup, teardown),
		cmocka_unit_test_setup_teardown(test_later_folder_overrides, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dangling_references, setup, teardown),
		cmocka_unit_test_setup_teardown(test_topology, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kinds_and_shapes_of_documents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hardware_and_model_documents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_affinity_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_affinity_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_dir_errors, setup, teardown),
		cmocka_unit_test(test_engine_compiled_is_the_yaml),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
