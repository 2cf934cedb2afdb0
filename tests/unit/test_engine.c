/* test_engine.c: engine.h: flag names matched the way SGLang's argparse parsers read them
 * (exact names, aliases, unambiguous prefixes, ambiguity, suggestions), against the shipped
 * registry and a run-time one, and the plan check that uses the same matching. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "npulaunch/arena.h"
#include "npulaunch/check.h"
#include "npulaunch/diag.h"
#include "npulaunch/engine.h"
#include "npulaunch/recipe.h"

#include "unit.h"

static struct npl_arena arena;
static struct npl_engine shipped;

static int setup(void **state)
{
	struct npl_diag d = NPL_DIAG_INIT;

	(void)state;
	npl_arena_init(&arena);
	assert_int_equal(npl_engine_load(&shipped, NULL, &arena, &d), 0);
	assert_int_equal(d.n, 0);
	npl_diag_release(&d);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	npl_arena_release(&arena);
	return 0;
}

/* name of program prog is found as canonical, with why (NULL: canonical already). */
static void expect_found(int prog, const char *name, const char *canonical, const char *why)
{
	struct npl_flag_match m;

	assert_int_equal(npl_engine_canonical(&shipped, prog, name, &m, &arena), 0);
	assert_non_null(m.canonical);
	assert_string_equal(m.canonical, canonical);
	assert_non_null(m.spec);
	assert_string_equal(m.option, m.spec->name);
	if (why) {
		assert_non_null(m.why);
		assert_string_equal(m.why, why);
	} else {
		assert_null(m.why);
	}
	assert_int_equal(m.ncandidates, 0);
}

/* name of program prog is ambiguous between the candidates, comma-separated, in order. */
static void expect_ambiguous(int prog, const char *name, const char *want)
{
	struct npl_flag_match m;
	char got[4096] = "";
	int i;

	assert_int_equal(npl_engine_canonical(&shipped, prog, name, &m, &arena), 1);
	assert_null(m.canonical);
	assert_null(m.spec);
	for (i = 0; i < m.ncandidates; i++) {
		strcat(got, i ? "," : "");
		strcat(got, m.candidates[i]);
	}
	assert_string_equal(got, want);
}

/* name of program prog is unknown, with the suggestion (NULL: none). */
static void expect_unknown(int prog, const char *name, const char *suggestion)
{
	struct npl_flag_match m;

	assert_int_equal(npl_engine_canonical(&shipped, prog, name, &m, &arena), -1);
	assert_null(m.canonical);
	assert_null(m.spec);
	if (suggestion) {
		assert_int_equal(m.ncandidates, 1);
		assert_string_equal(m.candidates[0], suggestion);
	} else {
		assert_int_equal(m.ncandidates, 0);
	}
}

static void test_server_prefixes_and_aliases(void **state)
{
	(void)state;
	/* exact names are unchanged */
	expect_found(NPL_PROG_SERVER, "tp-size", "tp-size", NULL);
	expect_found(NPL_PROG_SERVER, "dp-size", "dp-size", NULL);
	expect_found(NPL_PROG_SERVER, "mem-fraction-static", "mem-fraction-static", NULL);
	/* an exact name wins over the longer names it begins */
	expect_found(NPL_PROG_SERVER, "disable-cuda-graph", "disable-cuda-graph", NULL);
	/* aliases name their target */
	expect_found(NPL_PROG_SERVER, "tensor-parallel-size", "tp-size", "alias of tp-size");
	expect_found(NPL_PROG_SERVER, "data-parallel-size", "dp-size", "alias of dp-size");
	expect_found(NPL_PROG_SERVER, "ep", "ep-size", "alias of ep-size");
	expect_found(NPL_PROG_SERVER, "model", "model-path", "alias of model-path");
	/* unambiguous prefixes */
	expect_found(NPL_PROG_SERVER, "tp", "tp-size", "unambiguous prefix of tp-size");
	expect_found(NPL_PROG_SERVER, "dp", "dp-size", "unambiguous prefix of dp-size");
	expect_found(NPL_PROG_SERVER, "dp-", "dp-size", "unambiguous prefix of dp-size");
	expect_found(NPL_PROG_SERVER, "moe-dense-tp", "moe-dense-tp-size",
		     "unambiguous prefix of moe-dense-tp-size");
	expect_found(NPL_PROG_SERVER, "mem-fraction", "mem-fraction-static",
		     "unambiguous prefix of mem-fraction-static");
	/* a prefix of an alias only */
	expect_found(NPL_PROG_SERVER, "tensor-par", "tp-size",
		     "unambiguous prefix of tensor-parallel-size, an alias of tp-size");
}

static void test_server_negative_forms(void **state)
{
	struct npl_flag_match m;

	(void)state;
	/* a BooleanOptionalAction's "no-" form is launched as written: it stores false */
	assert_int_equal(npl_engine_canonical(&shipped, NPL_PROG_SERVER, "no-dcp-replicate-q-proj", &m, &arena), 0);
	assert_string_equal(m.canonical, "no-dcp-replicate-q-proj");
	assert_string_equal(m.option, "dcp-replicate-q-proj");
	assert_int_equal(m.negative, 1);
	assert_null(m.why);
	assert_int_equal(npl_engine_canonical(&shipped, NPL_PROG_SERVER, "no-dcp", &m, &arena), 0);
	assert_string_equal(m.canonical, "no-dcp-replicate-q-proj");
	assert_string_equal(m.option, "dcp-replicate-q-proj");
	assert_int_equal(m.negative, 1);
	assert_string_equal(m.why, "unambiguous prefix of no-dcp-replicate-q-proj");
	assert_int_equal(npl_engine_canonical(&shipped, NPL_PROG_SERVER, "dcp-replicate-q-proj", &m, &arena), 0);
	assert_int_equal(m.negative, 0);
	assert_null(m.why);
}

static void test_server_ambiguous(void **state)
{
	struct npl_flag_match m;
	int i;

	(void)state;
	assert_int_equal(npl_engine_canonical(&shipped, NPL_PROG_SERVER, "disable", &m, &arena), 1);
	assert_true(m.ncandidates > 12);
	for (i = 0; i < m.ncandidates; i++)
		assert_true(!strncmp(m.candidates[i], "disable-", 8));
	for (i = 1; i < m.ncandidates; i++)
		assert_true(strcmp(m.candidates[i - 1], m.candidates[i]) < 0);
	/* one candidate per option: the option's own name, not its alias too */
	expect_ambiguous(NPL_PROG_SERVER, "cuda-graph-max",
			 "cuda-graph-max-bs-decode,cuda-graph-max-bs-prefill");
	expect_ambiguous(NPL_PROG_SERVER, "ep-", "ep-dispatch-algorithm,ep-num-redundant-experts,ep-size");
}

static void test_router_and_bench(void **state)
{
	(void)state;
	expect_found(NPL_PROG_ROUTER, "dp", "dp-aware", "unambiguous prefix of dp-aware");
	expect_found(NPL_PROG_ROUTER, "pd", "pd-disaggregation", "unambiguous prefix of pd-disaggregation");
	/* an exact name wins: prefill is also the beginning of prefill-policy */
	expect_found(NPL_PROG_ROUTER, "prefill", "prefill", NULL);
	expect_found(NPL_PROG_ROUTER, "prefill-p", "prefill-policy", "unambiguous prefix of prefill-policy");
	expect_ambiguous(NPL_PROG_ROUTER, "prefill-", "prefill-policy,prefill-selector");
	/* argparse's own --help counts */
	expect_ambiguous(NPL_PROG_ROUTER, "he",
			 "health-check-endpoint,health-check-interval-secs,health-check-timeout-secs,"
			 "health-failure-threshold,health-success-threshold,help");
	expect_ambiguous(NPL_PROG_BENCH, "he", "header,help");
	expect_found(NPL_PROG_BENCH, "hea", "header", "unambiguous prefix of header");
	expect_unknown(NPL_PROG_BENCH, "hel", NULL);
	expect_found(NPL_PROG_BENCH, "random-in", "random-input-len", "unambiguous prefix of random-input-len");
	expect_found(NPL_PROG_BENCH, "num-prompts", "num-prompts", NULL);
	expect_ambiguous(NPL_PROG_BENCH, "gsp-num", "gsp-num-groups,gsp-num-turns");
	/* an entry absent upstream matches exactly, but is no prefix: upstream does not know it */
	expect_found(NPL_PROG_BENCH, "max-attempts", "max-attempts", NULL);
	expect_found(NPL_PROG_BENCH, "max-", "max-concurrency", "unambiguous prefix of max-concurrency");
	expect_unknown(NPL_PROG_BENCH, "max-att", "max-attempts");
	/* the programs are kept apart */
	expect_unknown(NPL_PROG_BENCH, "tp-size", NULL);
	expect_unknown(NPL_PROG_ROUTER, "mem-fraction-static", NULL);
}

static void test_unknown_suggestions(void **state)
{
	(void)state;
	/* typos of whole names get the nearest */
	expect_unknown(NPL_PROG_SERVER, "mem-fraction-statc", "mem-fraction-static");
	expect_unknown(NPL_PROG_SERVER, "tp-szie", "tp-size");
	expect_unknown(NPL_PROG_SERVER, "tensor-paralel-size", "tensor-parallel-size");
	/* a typo of the beginning of one option's name */
	expect_unknown(NPL_PROG_SERVER, "moe-dense-pt", "moe-dense-tp-size");
	/* nothing near */
	expect_unknown(NPL_PROG_SERVER, "xyzzy-plugh-frobnicate", NULL);
	expect_unknown(NPL_PROG_SERVER, "", NULL);
}

static void test_mismatch_messages(void **state)
{
	const struct npl_engine_tool *t = npl_engine_prog_tool(&shipped, NPL_PROG_SERVER);
	struct npl_flag_match m;
	int rc;
	char want[256];

	(void)state;
	assert_non_null(t);
	assert_string_equal(t->module, "sglang.launch_server");
	assert_string_equal(npl_engine_prog_tool(&shipped, NPL_PROG_ROUTER)->module, "sglang_router.launch_router");
	assert_string_equal(npl_engine_prog_tool(&shipped, NPL_PROG_BENCH)->module, "sglang.bench_serving");
	assert_null(npl_engine_prog_tool(&shipped, 7));
	rc = npl_engine_match(t, "mem-fraction-statc", &m, &arena);
	snprintf(want, sizeof(want),
		 "--mem-fraction-statc is not an option of sglang.launch_server (SGLang %s); did you mean --mem-fraction-static?",
		 shipped.version);
	assert_string_equal(npl_engine_mismatch(&shipped, t, "mem-fraction-statc", rc, &m, &arena), want);
	rc = npl_engine_match(t, "xyzzy-plugh-frobnicate", &m, &arena);
	snprintf(want, sizeof(want), "--xyzzy-plugh-frobnicate is not an option of sglang.launch_server (SGLang %s)",
		 shipped.version);
	assert_string_equal(npl_engine_mismatch(&shipped, t, "xyzzy-plugh-frobnicate", rc, &m, &arena), want);
	rc = npl_engine_match(t, "cuda-graph-max", &m, &arena);
	snprintf(want, sizeof(want),
		 "--cuda-graph-max is ambiguous in sglang.launch_server (SGLang %s): it could be --cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill",
		 shipped.version);
	assert_string_equal(npl_engine_mismatch(&shipped, t, "cuda-graph-max", rc, &m, &arena), want);
	rc = npl_engine_match(t, "disable", &m, &arena);
	assert_int_equal(rc, 1);
	snprintf(want, sizeof(want), ", ... (%d options)", m.ncandidates);
	assert_true(strstr(npl_engine_mismatch(&shipped, t, "disable", rc, &m, &arena), want) != NULL);
}

/* A folder's own registry at run time: an alias and its target are one option, so a prefix
 * of both is not ambiguous; a program the registry lacks takes names as written. */
static void test_runtime_registry(void **state)
{
	static const char text[] =
		"kind: engine-flags\n"
		"sglang_version: test\n"
		"tools:\n"
		"  launch_server:\n"
		"    module: sglang.launch_server\n"
		"    flags:\n"
		"      speculative-draft-model-path: {type: string}\n"
		"      speculative-draft-model: {type: string, alias_of: speculative-draft-model-path}\n"
		"      speculative-draft-model-revision: {type: string}\n"
		"      foo-bar: {type: int}\n"
		"      foo-baz-old: {type: int, alias_of: foo-bar}\n"
		"      help: {type: bool}\n"
		"      hello: {type: bool}\n";
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_engine e;
	struct npl_flag_match m;

	(void)state;
	assert_int_equal(npl_engine_parse(&e, "flags.yaml", text, sizeof(text) - 1, &arena, &d), 0);
	assert_int_equal(d.n, 0);
	/* foo-bar and foo-baz-old: two strings, one option */
	assert_int_equal(npl_engine_canonical(&e, NPL_PROG_SERVER, "foo-ba", &m, &arena), 0);
	assert_string_equal(m.canonical, "foo-bar");
	assert_string_equal(m.why, "unambiguous prefix of foo-bar");
	assert_int_equal(npl_engine_canonical(&e, NPL_PROG_SERVER, "foo-baz", &m, &arena), 0);
	assert_string_equal(m.canonical, "foo-bar");
	assert_string_equal(m.why, "unambiguous prefix of foo-baz-old, an alias of foo-bar");
	/* an exact alias wins over the longer names it begins */
	assert_int_equal(npl_engine_canonical(&e, NPL_PROG_SERVER, "speculative-draft-model", &m, &arena), 0);
	assert_string_equal(m.canonical, "speculative-draft-model-path");
	assert_string_equal(m.why, "alias of speculative-draft-model-path");
	assert_int_equal(npl_engine_canonical(&e, NPL_PROG_SERVER, "speculative-draft-model-", &m, &arena), 1);
	assert_int_equal(m.ncandidates, 2);
	assert_string_equal(m.candidates[0], "speculative-draft-model-path");
	assert_string_equal(m.candidates[1], "speculative-draft-model-revision");
	/* a registry that lists help itself: no second one */
	assert_int_equal(npl_engine_canonical(&e, NPL_PROG_SERVER, "hel", &m, &arena), 1);
	assert_int_equal(m.ncandidates, 2);
	assert_string_equal(m.candidates[0], "hello");
	assert_string_equal(m.candidates[1], "help");
	/* no router in this registry: names as written */
	assert_int_equal(npl_engine_canonical(&e, NPL_PROG_ROUTER, "anything", &m, &arena), 0);
	assert_string_equal(m.canonical, "anything");
	assert_null(m.spec);
	assert_null(m.why);
	npl_diag_release(&d);
}

/* A flag of one value given none or two: the message counts values, and says when none was
 * given (it read "takes a number, not 0", as if 0 had been refused). */
static void test_check_value_count(void **state)
{
	static const char plan_text[] =
		"{\"recipe\": {\"id\": \"r\"}, \"roles\": [{\"role\": \"prefill\", \"program\": \"server\","
		" \"nodes\": [{\"launch\": [\"python3\", \"-m\", \"sglang.launch_server\"], \"flags\": ["
		"{\"flag\": \"--mem-fraction-static\", \"values\": []},"
		"{\"flag\": \"--dp-size\", \"values\": [\"1\", \"2\"]}"
		"]}]}]}";
	cJSON *plan = cJSON_Parse(plan_text);
	struct npl_diag d = NPL_DIAG_INIT;

	(void)state;
	assert_non_null(plan);
	assert_int_equal(npl_check_flags(&shipped, plan, 0, &d), 2);
	assert_string_equal(npl_test_msg(&d, 0),
			    "error: r: prefill: --mem-fraction-static takes a number: no value is given");
	assert_string_equal(npl_test_msg(&d, 1), "error: r: prefill: --dp-size takes a whole number, not 2 values");
	npl_diag_release(&d);
	cJSON_Delete(plan);
}

/* The plan check matches names the same way. */
static void test_check_flags(void **state)
{
	static const char plan_text[] =
		"{\"recipe\": {\"id\": \"r\"}, \"roles\": [{\"role\": \"prefill\", \"program\": \"server\","
		" \"nodes\": [{\"launch\": [\"python3\", \"-m\", \"sglang.launch_server\"], \"flags\": ["
		"{\"flag\": \"--tp\", \"values\": [\"16\"]},"
		"{\"flag\": \"--tensor-parallel-size\", \"values\": [\"16\"]},"
		"{\"flag\": \"--dp\", \"values\": [\"x\"]},"
		"{\"flag\": \"--cuda-graph-max\", \"values\": [\"8\"]},"
		"{\"flag\": \"--mem-fraction-statc\", \"values\": [\"0.8\"]},"
		"{\"flag\": \"--no-dcp\", \"values\": []},"
		"{\"flag\": \"--host\", \"values\": [\"a\"]},"
		"{\"flag\": \"--host\", \"values\": [\"b\"]}"
		"]}]}]}";
	cJSON *plan = cJSON_Parse(plan_text);
	struct npl_diag d = NPL_DIAG_INIT;
	char want[512];

	(void)state;
	assert_non_null(plan);
	assert_int_equal(npl_check_flags(&shipped, plan, 0, &d), 4);
	assert_int_equal(d.n, 4);
	/* a prefix and an alias of one option; a name given twice is an option repeated */
	assert_string_equal(npl_test_msg(&d, 0),
			    "error: r: prefill: --tp and --tensor-parallel-size both set --tp-size: write it once");
	assert_string_equal(npl_test_msg(&d, 1), "error: r: prefill: --dp takes a whole number, not 'x'");
	snprintf(want, sizeof(want),
		 "error: r: prefill of sglang.launch_server: --cuda-graph-max is ambiguous in sglang.launch_server (SGLang %s): it could be --cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill (--allow-unknown-flag lets it through)",
		 shipped.version);
	assert_string_equal(npl_test_msg(&d, 2), want);
	snprintf(want, sizeof(want),
		 "error: r: prefill of sglang.launch_server: --mem-fraction-statc is not an option of sglang.launch_server (SGLang %s); did you mean --mem-fraction-static? (--allow-unknown-flag lets it through)",
		 shipped.version);
	assert_string_equal(npl_test_msg(&d, 3), want);
	npl_diag_release(&d);
	/* let through as warnings */
	assert_int_equal(npl_check_flags(&shipped, plan, 1, &d), 2);
	assert_int_equal(d.errors, 2);
	assert_int_equal(d.warnings, 2);
	npl_diag_release(&d);
	cJSON_Delete(plan);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_server_prefixes_and_aliases),
		cmocka_unit_test(test_server_negative_forms),
		cmocka_unit_test(test_server_ambiguous),
		cmocka_unit_test(test_router_and_bench),
		cmocka_unit_test(test_unknown_suggestions),
		cmocka_unit_test(test_mismatch_messages),
		cmocka_unit_test(test_runtime_registry),
		cmocka_unit_test(test_check_flags),
		cmocka_unit_test(test_check_value_count),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
