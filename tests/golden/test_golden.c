/*
 * test_golden.c: for each of the 22 seed recipes, render its scripts with
 * npulaunch, run each script on a simulated host (fake root, stub python)
 * and compare what it launched -- flags, environment, unsets, governors,
 * sysctls, files sourced -- with tests/golden/expected/ID.json, which holds
 * what the seed page's own script launches (derived from the seed pages by
 * derive-expected.py, not by npulaunch). Then the same for `npulaunch apply
 * --role ROLE ID` on each node, which must launch what the script does.
 *
 * NPL_GOLDEN_RECIPES=DIR in the environment passes --recipes DIR to npulaunch (the round trip
 * of `npulaunch import`: the seed pages imported into DIR, proved against the same records).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#ifndef NPL_BIN
#error "NPL_BIN must name the npulaunch binary"
#endif

static cJSON *load_expected(const char *id)
{
	char path[1024], *text;
	cJSON *j;

	snprintf(path, sizeof(path), "%s/%s.json", NPL_GOLDEN_DIR, id);
	text = sim_slurp(path);
	assert_non_null(text);
	j = cJSON_Parse(text);
	free(text);
	assert_non_null(j);
	return j;
}

static int uses_draft(const cJSON *roles)
{
	const cJSON *r, *f;

	cJSON_ArrayForEach(r, roles)
		cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(r, "flags"))
			if (!strcmp(cJSON_GetArrayItem(f, 0)->valuestring, "--speculative-draft-model-path"))
				return 1;
	return 0;
}

/* Run one script on each of ips and merge the roles it launched into got. */
static void run_script(struct sim *s, const char *dir, const char *name, const cJSON *ips,
		       cJSON *got, int only_router)
{
	const cJSON *ip;
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	cJSON_ArrayForEach(ip, ips) {
		char nodeip[128];
		char *argv[] = {"bash", path, NULL};
		char *extra[] = {nodeip, "NPULAUNCH_WAIT_TIMEOUT=0", NULL};
		cJSON *start, *sem, *r;
		int rc;

		snprintf(nodeip, sizeof(nodeip), "NPULAUNCH_NODE_IP=%s", ip->valuestring);
		assert_int_equal(sim_reset(s), 0);
		start = sim_base_env(s, extra);
		rc = sim_run(s, argv, extra);
		if (rc != 0) {
			char *err = sim_slurp(s->err);

			fprintf(stderr, "%s on %s exited %d:\n%s\n", name, ip->valuestring, rc, err ? err : "");
			free(err);
		}
		assert_int_equal(rc, 0);
		sem = sim_semantics(s, start);
		cJSON_ArrayForEach(r, sem) {
			if (only_router != !strcmp(r->string, "router"))
				continue;
			if (!cJSON_GetObjectItemCaseSensitive(got, r->string))
				cJSON_AddItemToObject(got, r->string, cJSON_Duplicate(r, 1));
		}
		cJSON_Delete(sem);
		cJSON_Delete(start);
	}
}

/* --recipes DIR when NPL_GOLDEN_RECIPES names one (the round trip of `import`) */
static int recipes_arg(char **argv, int n)
{
	char *dir = getenv("NPL_GOLDEN_RECIPES");

	if (dir && *dir) {
		argv[n++] = "--recipes";
		argv[n++] = dir;
	}
	return n;
}

/* The site values the seed check gives: model, interface, draft model if used, addresses. */
static int site_args(const cJSON *exp, char **argv, int n)
{
	cJSON *site = cJSON_GetObjectItemCaseSensitive(exp, "site");
	cJSON *ips = cJSON_GetObjectItemCaseSensitive(exp, "node_ips");
	const char *mode = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(exp, "meta"),
							    "mode")->valuestring;
	int i;

	argv[n++] = "--model-path";
	argv[n++] = cJSON_GetObjectItemCaseSensitive(site, "model_path")->valuestring;
	argv[n++] = "--ifname";
	argv[n++] = cJSON_GetObjectItemCaseSensitive(site, "ifname")->valuestring;
	if (uses_draft(cJSON_GetObjectItemCaseSensitive(exp, "roles"))) {
		argv[n++] = "--draft-model-path";
		argv[n++] = cJSON_GetObjectItemCaseSensitive(site, "draft_model_path")->valuestring;
	}
	if (!strcmp(mode, "PD Disaggregation")) {
		argv[n++] = "--prefill-ip";
		argv[n++] = cJSON_GetObjectItemCaseSensitive(site, "prefill_ip")->valuestring;
		argv[n++] = "--decode-ip";
		argv[n++] = cJSON_GetObjectItemCaseSensitive(site, "decode_ip")->valuestring;
	} else if (cJSON_GetArraySize(ips) > 1) {
		for (i = 0; i < cJSON_GetArraySize(ips); i++) {
			argv[n++] = "--node-ip";
			argv[n++] = cJSON_GetArrayItem(ips, i)->valuestring;
		}
	}
	argv[n] = NULL;
	return n;
}

/* npulaunch apply --role ROLE ID on the node with address ip; merge what it launched into got. */
static void apply_role(struct sim *s, const char *id, const cJSON *exp, const char *role, const char *ip,
		       cJSON *got)
{
	char nodeip[128], journal[512], *argv[40], *err;
	char *extra[] = {nodeip, "NPULAUNCH_WAIT_TIMEOUT=0", NULL};
	cJSON *start, *sem, *r;
	int n = 0, rc;

	snprintf(nodeip, sizeof(nodeip), "NPULAUNCH_NODE_IP=%s", ip);
	argv[n++] = NPL_BIN;
	n = recipes_arg(argv, n);
	argv[n++] = "apply";
	argv[n++] = "--role";
	argv[n++] = (char *)role;
	argv[n++] = (char *)id;
	site_args(exp, argv, n);
	assert_int_equal(sim_reset(s), 0);
	snprintf(journal, sizeof(journal), "%s/run/npulaunch/tune-journal.json", s->root);
	unlink(journal);
	start = sim_base_env(s, extra);
	rc = sim_run(s, argv, extra);
	err = sim_slurp(s->err);
	if (rc)
		fprintf(stderr, "apply --role %s on %s: exit %d\n%s\n", role, ip, rc, err ? err : "");
	assert_int_equal(rc, 0);
	/* a server's apply journals the host before tuning it; the router tunes nothing */
	if (strcmp(role, "router"))
		assert_int_equal(access(journal, F_OK), 0);
	else
		assert_int_not_equal(access(journal, F_OK), 0);
	free(err);
	sem = sim_semantics(s, start);
	cJSON_ArrayForEach(r, sem)
		if (!cJSON_GetObjectItemCaseSensitive(got, r->string))
			cJSON_AddItemToObject(got, r->string, cJSON_Duplicate(r, 1));
	cJSON_Delete(sem);
	cJSON_Delete(start);
}

static void golden_apply(void **state)
{
	const char *id = *state;
	cJSON *exp = load_expected(id), *want = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(exp, "roles"), 1);
	cJSON *site = cJSON_GetObjectItemCaseSensitive(exp, "site"), *got = cJSON_CreateObject(), *ip;
	const char *mode = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(exp, "meta"),
							    "mode")->valuestring;
	struct sim s;

	/* apply launches servers and the router; the benchmark is bench.sh's */
	cJSON_DeleteItemFromObjectCaseSensitive(want, "bench");
	assert_int_equal(sim_create(&s, 4, NPL_STUB), 0);
	if (!strcmp(mode, "PD Disaggregation")) {
		const char *p = cJSON_GetObjectItemCaseSensitive(site, "prefill_ip")->valuestring;
		const char *d = cJSON_GetObjectItemCaseSensitive(site, "decode_ip")->valuestring;

		apply_role(&s, id, exp, "prefill", p, got);
		apply_role(&s, id, exp, "decode", d, got);
		apply_role(&s, id, exp, "router", p, got);
	} else {
		cJSON_ArrayForEach(ip, cJSON_GetObjectItemCaseSensitive(exp, "node_ips"))
			apply_role(&s, id, exp, "pd-mixed", ip->valuestring, got);
	}
	assert_int_equal(sim_compare(id, want, got), 0);
	cJSON_Delete(got);
	cJSON_Delete(want);
	cJSON_Delete(exp);
	sim_destroy(&s);
}

/* Each fix of the page the record made ("WHAT: why", golden_fix.py) is one the recipe states: its
 * plan's recipe.deviations ([{what, why, at}]) has WHAT, so that show and drift say it too. */
static void deviations_said(const char *id, const cJSON *exp, const cJSON *plan)
{
	const cJSON *d, *said = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(plan, "recipe"),
								  "deviations");

	cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(exp, "deviations")) {
		const cJSON *s;
		char what[64];
		int found = 0;

		assert_true(cJSON_IsString(d) && sscanf(d->valuestring, "%63[^:]:", what) == 1);
		cJSON_ArrayForEach(s, said) /* [{what, why, at}] */
			found |= cJSON_IsString(cJSON_GetObjectItemCaseSensitive(s, "what")) &&
				 !strcmp(cJSON_GetObjectItemCaseSensitive(s, "what")->valuestring, what);
		if (!found)
			fail_msg("%s: the record fixes the page (%s), and the recipe states no deviation '%s'", id,
				 d->valuestring, what);
	}
}

static void golden(void **state)
{
	const char *id = *state;
	cJSON *exp = load_expected(id), *want = cJSON_GetObjectItemCaseSensitive(exp, "roles");
	cJSON *site = cJSON_GetObjectItemCaseSensitive(exp, "site");
	cJSON *ips = cJSON_GetObjectItemCaseSensitive(exp, "node_ips"), *got = cJSON_CreateObject();
	const char *mode = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(exp, "meta"),
							    "mode")->valuestring;
	int disagg = !strcmp(mode, "PD Disaggregation");
	char out[512], *argv[40];
	char *manifest;
	struct sim s;
	int n = 0, rc;

	assert_int_equal(sim_create(&s, 4, NPL_STUB), 0);
	snprintf(out, sizeof(out), "%s/out", s.dir);
	argv[n++] = NPL_BIN;
	n = recipes_arg(argv, n);
	argv[n++] = "render";
	argv[n++] = (char *)id;
	n = site_args(exp, argv, n);
	argv[n++] = "-o";
	argv[n++] = out;
	argv[n] = NULL;
	rc = sim_run(&s, argv, NULL);
	if (rc) {
		char *err = sim_slurp(s.err);

		fprintf(stderr, "render %s: exit %d\n%s\n", id, rc, err ? err : "");
		free(err);
	}
	assert_int_equal(rc, 0);

	if (disagg) {
		cJSON *p = cJSON_CreateArray(), *d = cJSON_CreateArray();

		cJSON_AddItemToArray(p, cJSON_CreateString(cJSON_GetObjectItemCaseSensitive(site, "prefill_ip")->valuestring));
		cJSON_AddItemToArray(d, cJSON_CreateString(cJSON_GetObjectItemCaseSensitive(site, "decode_ip")->valuestring));
		run_script(&s, out, "prefill.sh", p, got, 0);
		run_script(&s, out, "decode.sh", d, got, 0);
		run_script(&s, out, "router.sh", p, got, 1);
		cJSON_Delete(p);
		cJSON_Delete(d);
	} else {
		run_script(&s, out, "pd-mixed.sh", ips, got, 0);
	}
	{
		cJSON *first = cJSON_CreateArray();

		cJSON_AddItemToArray(first, cJSON_Duplicate(cJSON_GetArrayItem(ips, 0), 1));
		run_script(&s, out, "bench.sh", first, got, 0);
		cJSON_Delete(first);
	}
	assert_int_equal(sim_compare(id, want, got), 0);

	/* the manifest is the plan, as JSON */
	snprintf(out + strlen(out), sizeof(out) - strlen(out), "/manifest.json");
	manifest = sim_slurp(out);
	assert_non_null(manifest);
	{
		cJSON *m = cJSON_Parse(manifest);

		assert_non_null(m);
		assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "recipe"), "id")->valuestring, id);
		deviations_said(id, exp, m);
		cJSON_Delete(m);
	}
	free(manifest);
	cJSON_Delete(got);
	cJSON_Delete(exp);
	sim_destroy(&s);
}

int main(void)
{
	char path[1024], *index, *line, *save = NULL;
	struct CMUnitTest tests[64];
	size_t n = 0, i;

	snprintf(path, sizeof(path), "%s/INDEX", NPL_GOLDEN_DIR);
	index = sim_slurp(path);
	if (!index) {
		fprintf(stderr, "cannot read %s\n", path);
		return 1;
	}
	for (line = strtok_r(index, "\n", &save); line && n < 64; line = strtok_r(NULL, "\n", &save)) {
		tests[n] = (struct CMUnitTest){line, golden, NULL, NULL, line};
		n++;
	}
	if (n != 22) {
		fprintf(stderr, "expected 22 seed recipes in %s, found %zu\n", path, n);
		free(index);
		return 1;
	}
	{
		struct CMUnitTest applies[64];
		int rc;

		for (i = 0; i < n; i++)
			applies[i] = (struct CMUnitTest){tests[i].name, golden_apply, NULL, NULL,
							 tests[i].initial_state};
		rc = _cmocka_run_group_tests("render", tests, n, NULL, NULL);
		rc |= _cmocka_run_group_tests("apply", applies, n, NULL, NULL);
		free(index);
		return rc;
	}
}
