/*
 * test_upstream.c: for each of the NUPSTREAM recipes of SGLang's upstream pages
 * (NPL_UPSTREAM_DIR/INDEX: tests/golden/upstream-2026 for the newest pages,
 * tests/golden/upstream for the older layout), render its scripts with npulaunch and run
 * them on a simulated host node by node: each node's role script
 * (pd-mixed.sh, prefill.sh, decode.sh) with NPULAUNCH_NODE_IP set to that
 * node's address, router.sh once on prefill ip1, bench.sh once. What each
 * launched is compared exactly with NPL_UPSTREAM_DIR/ID.json, which
 * holds what the page's own scripts launch (derived from the pages by
 * derive-upstream.py, not by npulaunch): per node the flags, the environment
 * set, the variables unset, the files sourced, governors and sysctls; the
 * router's flags, environment and unsets; the benchmark's flags (each benchmark's, in order,
 * when bench.sh runs several). Then the same with `npulaunch apply --role ROLE ID` on each node
 * (and --role router once).
 * A recipe npulaunch does not know fails, with a message that says so.
 *
 * NPL_UPSTREAM_RECIPES=DIR in the environment passes --recipes DIR to npulaunch.
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
#ifndef NPL_UPSTREAM_DIR
#error "NPL_UPSTREAM_DIR must name tests/golden/upstream"
#endif

#ifndef NUPSTREAM
#error "NUPSTREAM must give the number of recipes in NPL_UPSTREAM_DIR/INDEX"
#endif
#define NO_SUCH_RECIPE 3

static const char *const SERVER = "sglang.launch_server";
static const char *const ROUTER = "sglang_router.launch_router";
static const char *const BENCH = "sglang.bench_serving";

/* variables only the simulated host has: not part of what a node is given */
static int harness_var(const char *k)
{
	return !strcmp(k, "NPL_STUB_LOG") || !strcmp(k, "NPL_TEST_SOURCED") ||
	       !strcmp(k, "NPULAUNCH_ROOT");
}

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static cJSON *load_expected(const char *id)
{
	char path[1024], *text;
	cJSON *j;

	snprintf(path, sizeof(path), "%s/%s.json", NPL_UPSTREAM_DIR, id);
	text = sim_slurp(path);
	if (!text)
		fail_msg("%s: cannot read %s", id, path);
	j = cJSON_Parse(text);
	free(text);
	if (!j)
		fail_msg("%s: %s is not JSON", id, path);
	return j;
}

/* npulaunch [--recipes DIR] into argv from n; returns the new n */
static int npl_argv(char **argv, int n)
{
	const char *dir = getenv("NPL_UPSTREAM_RECIPES");

	argv[n++] = NPL_BIN;
	if (dir && *dir) {
		argv[n++] = "--recipes";
		argv[n++] = (char *)dir;
	}
	return n;
}

/* The site values of the expected file: model, interface, draft model if used, addresses. */
static int site_args(const cJSON *exp, char **argv, int n, int max)
{
	static const char *const lists[][2] = {
		{"prefill_ip", "--prefill-ip"}, {"decode_ip", "--decode-ip"}, {"node_ip", "--node-ip"}};
	const cJSON *site = get(exp, "site"), *ip;
	size_t i;

	argv[n++] = "--model-path";
	argv[n++] = (char *)str(site, "model_path");
	argv[n++] = "--ifname";
	argv[n++] = (char *)str(site, "ifname");
	if (str(site, "draft_model_path")) {
		argv[n++] = "--draft-model-path";
		argv[n++] = (char *)str(site, "draft_model_path");
	}
	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
		cJSON_ArrayForEach(ip, get(site, lists[i][0])) {
			if (n + 3 >= max)
				break;
			argv[n++] = (char *)lists[i][1];
			argv[n++] = ip->valuestring;
		}
	argv[n] = NULL;
	return n;
}

static void problem(int *n, const char *id, const char *what, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: %s: ", id, what);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	(*n)++;
}

static void problem_json(int *n, const char *id, const char *what, const char *part, const char *name,
			 const cJSON *w, const cJSON *g)
{
	char *ws = w ? cJSON_PrintUnformatted(w) : NULL, *gs = g ? cJSON_PrintUnformatted(g) : NULL;

	problem(n, id, what, "%s%s%s: want %s got %s", part, name ? " " : "", name ? name : "",
		ws ? ws : "nothing", gs ? gs : "nothing");
	free(ws);
	free(gs);
}

/* The module a logged call ran: argv[2] of python3 -m MODULE. */
static const char *module_of(const cJSON *rec)
{
	const cJSON *argv = get(rec, "argv");

	if (cJSON_GetArraySize(argv) >= 3 && !strcmp(cJSON_GetArrayItem(argv, 1)->valuestring, "-m"))
		return cJSON_GetArrayItem(argv, 2)->valuestring;
	return "?";
}

/*
 * The semantics of the launches of module in the last run, in order, or NULL with the
 * problem reported: a run must launch exactly want processes, all of that module.
 */
static cJSON *launches(struct sim *s, const cJSON *start, const char *module, int want, const char *id,
		       const char *what, int *np)
{
	char *log = sim_slurp(s->log), *line, *save = NULL;
	cJSON *roles, *r, *found = NULL;
	int count = 0;

	for (line = log ? strtok_r(log, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
		cJSON *rec = cJSON_Parse(line);
		const char *mod;

		if (!rec)
			continue;
		mod = module_of(rec);
		if (!strcmp(mod, module))
			count++;
		else
			problem(np, id, what, "unexpected launch of %s", mod);
		cJSON_Delete(rec);
	}
	free(log);
	if (count != want) {
		problem(np, id, what, "%d launches of %s, want exactly %d", count, module, want);
		return NULL;
	}
	roles = sim_semantics(s, start);
	found = cJSON_CreateArray();
	cJSON_ArrayForEach(r, roles) {
		int is_router = !strcmp(r->string, "router"), is_bench = !strncmp(r->string, "bench", 5);

		if ((module == ROUTER && is_router) || (module == BENCH && is_bench) ||
		    (module == SERVER && !is_router && !is_bench && strncmp(r->string, "other:", 6)))
			cJSON_AddItemToArray(found, cJSON_Duplicate(r, 1));
	}
	cJSON_Delete(roles);
	if (cJSON_GetArraySize(found) != want) {
		problem(np, id, what, "%d launches of %s told apart, want %d", cJSON_GetArraySize(found), module, want);
		cJSON_Delete(found);
		return NULL;
	}
	return found;
}

static int in_strings(const cJSON *arr, const char *s)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, arr)
		if (cJSON_IsString(it) && !strcmp(it->valuestring, s))
			return 1;
	return 0;
}

/* Sets of strings, exact both ways (harness-only variables left out of unsets). */
static void compare_set(const char *id, const char *what, const char *part, const cJSON *want,
			const cJSON *got, int *np)
{
	const cJSON *it;
	int is_unset = !strcmp(part, "unset");

	cJSON_ArrayForEach(it, want)
		if (!in_strings(got, it->valuestring))
			problem(np, id, what, "%s: want also %s", part, it->valuestring);
	cJSON_ArrayForEach(it, got)
		if (!in_strings(want, it->valuestring) && !(is_unset && harness_var(it->valuestring)))
			problem(np, id, what, "%s: not wanted %s", part, it->valuestring);
}

enum { FLAGS = 0, ENV = 1, TUNING = 2 };

/* want: expected semantics ({flags: [[flag, [values]]], ...}); got: the harness's */
static void compare(const char *id, const char *what, const cJSON *want, const cJSON *got, int parts,
		    int *np)
{
	const cJSON *wf = get(want, "flags"), *gf = get(got, "flags"), *it;

	cJSON_ArrayForEach(it, wf) {
		const char *name = cJSON_GetArrayItem(it, 0)->valuestring;
		const cJSON *wv = cJSON_GetArrayItem(it, 1), *gv = get(gf, name);

		if (!gv)
			problem_json(np, id, what, "flag", name, wv, NULL);
		else if (!cJSON_Compare(wv, gv, 1))
			problem_json(np, id, what, "flag", name, wv, gv);
	}
	cJSON_ArrayForEach(it, gf) {
		const cJSON *w;
		int seen = 0;

		cJSON_ArrayForEach(w, wf)
			seen |= !strcmp(cJSON_GetArrayItem(w, 0)->valuestring, it->string);
		if (!seen)
			problem_json(np, id, what, "unexpected flag", it->string, NULL, it);
	}
	if (parts & ENV) {
		const cJSON *we = get(want, "env"), *ge = get(got, "env");

		cJSON_ArrayForEach(it, we)
			if (!cJSON_Compare(it, get(ge, it->string), 1))
				problem_json(np, id, what, "env", it->string, it, get(ge, it->string));
		cJSON_ArrayForEach(it, ge)
			if (!get(we, it->string))
				problem_json(np, id, what, "env", it->string, NULL, it);
		compare_set(id, what, "unset", get(want, "unset"), get(got, "unset"), np);
	}
	if (parts & TUNING) {
		const cJSON *wg = get(want, "governors"), *gg = get(got, "governors");
		int same = cJSON_GetArraySize(wg) == cJSON_GetArraySize(gg);

		compare_set(id, what, "sourced", get(want, "sourced"), get(got, "sourced"), np);
		cJSON_ArrayForEach(it, wg)
			same &= in_strings(gg, it->valuestring);
		if (!same)
			problem_json(np, id, what, "governors", NULL, wg, gg);
		if (!cJSON_Compare(get(want, "sysctl"), get(got, "sysctl"), 1))
			problem_json(np, id, what, "sysctls", NULL, get(want, "sysctl"), get(got, "sysctl"));
	}
}

/* Report a failed npulaunch run; 1 when it was because the recipe is unknown. */
static int run_failed(struct sim *s, const char *id, const char *what, int rc, int *np)
{
	char *err = sim_slurp(s->err);
	size_t len = err ? strlen(err) : 0;

	while (len && err[len - 1] == '\n')
		err[--len] = '\0';
	if (rc == NO_SUCH_RECIPE)
		problem(np, id, what, "npulaunch does not know this recipe (exit 3): %s", err ? err : "");
	else
		problem(np, id, what, "exit %d: %s", rc, err ? err : "");
	free(err);
	return rc == NO_SUCH_RECIPE;
}

/* Run argv on the node with address ip; compare its launches of module with want (one launch's
 * semantics, or an array of them: benchmarks run in turn); its exit status. */
static int run_node(struct sim *s, char **argv, const char *ip, const char *module, const cJSON *want,
		     int parts, const char *id, const char *what, int *np)
{
	char nodeip[128];
	char *extra[] = {nodeip, "NPULAUNCH_WAIT_TIMEOUT=0", NULL};
	cJSON *start, *got;
	int rc;

	snprintf(nodeip, sizeof(nodeip), "NPULAUNCH_NODE_IP=%s", ip);
	if (sim_reset(s)) {
		problem(np, id, what, "cannot reset the simulated host");
		return -1;
	}
	start = sim_base_env(s, extra);
	rc = sim_run(s, argv, extra);
	if (rc && run_failed(s, id, what, rc, np)) {
		cJSON_Delete(start);
		return rc;
	}
	got = launches(s, start, module, cJSON_IsArray(want) ? cJSON_GetArraySize(want) : 1, id, what, np);
	if (got && cJSON_IsArray(want)) {
		const cJSON *w;
		int k = 0;

		cJSON_ArrayForEach(w, want) {
			char each[300];
			const char *name = str(w, "name");

			snprintf(each, sizeof(each), "%s, benchmark %s", what, name ? name : "?");
			compare(id, each, get(w, "bench"), cJSON_GetArrayItem(got, k++), parts, np);
		}
	} else if (got) {
		compare(id, what, want, cJSON_GetArrayItem(got, 0), parts, np);
	}
	cJSON_Delete(got);
	cJSON_Delete(start);
	return rc;
}

static const char *first_prefill(const cJSON *exp)
{
	const cJSON *p = cJSON_GetArrayItem(get(get(exp, "site"), "prefill_ip"), 0);

	return p ? p->valuestring : "127.0.10.1";
}

static void upstream(void **state)
{
	const char *id = *state;
	cJSON *exp = load_expected(id);
	const cJSON *node, *router = get(exp, "router");
	char out[512], path[1024], what[256], *argv[64];
	struct sim s;
	int n, rc, np = 0;

	if (sim_create(&s, 4, NPL_STUB))
		fail_msg("%s: cannot create the simulated host", id);
	snprintf(out, sizeof(out), "%s/out", s.dir);
	n = npl_argv(argv, 0);
	argv[n++] = "render";
	argv[n++] = (char *)id;
	n = site_args(exp, argv, n, 60);
	argv[n++] = "-o";
	argv[n++] = out;
	argv[n] = NULL;
	rc = sim_run(&s, argv, NULL);
	if (rc) {
		run_failed(&s, id, "render", rc, &np);
		goto done;
	}
	cJSON_ArrayForEach(node, get(exp, "nodes")) {
		const char *ip = str(node, "ip"), *role = str(node, "role");
		char *bash[] = {"bash", path, NULL};

		snprintf(path, sizeof(path), "%s/%s.sh", out, role);
		snprintf(what, sizeof(what), "node %s (%s.sh)", ip, role);
		if (access(path, F_OK)) {
			problem(&np, id, what, "render wrote no %s.sh", role);
			continue;
		}
		run_node(&s, bash, ip, SERVER, get(node, "launch"), FLAGS | ENV | TUNING, id, what, &np);
	}
	snprintf(path, sizeof(path), "%s/router.sh", out);
	if (cJSON_IsObject(router)) {
		char *bash[] = {"bash", path, NULL};

		snprintf(what, sizeof(what), "router (router.sh on %s)", first_prefill(exp));
		if (access(path, F_OK))
			problem(&np, id, what, "render wrote no router.sh");
		else
			run_node(&s, bash, first_prefill(exp), ROUTER, router, FLAGS | ENV, id, what, &np);
	} else if (!access(path, F_OK)) {
		problem(&np, id, "router", "render wrote router.sh, but the page runs no router");
	}
	{
		const char *ip = str(cJSON_GetArrayItem(get(exp, "nodes"), 0), "ip");
		char *bash[] = {"bash", path, NULL};

		snprintf(path, sizeof(path), "%s/bench.sh", out);
		snprintf(what, sizeof(what), "bench (bench.sh on %s)", ip);
		if (access(path, F_OK))
			problem(&np, id, what, "render wrote no bench.sh");
		else
			run_node(&s, bash, ip, BENCH, get(exp, "benchmarks") ? get(exp, "benchmarks") : get(exp, "bench"),
				 FLAGS, id, what, &np);
	}
done:
	cJSON_Delete(exp);
	sim_destroy(&s);
	if (np)
		fail_msg("%s: %d differences from the page (listed above)", id, np);
}

static void upstream_apply(void **state)
{
	const char *id = *state;
	cJSON *exp = load_expected(id);
	const cJSON *node, *router = get(exp, "router");
	char what[256], *argv[64];
	struct sim s;
	int np = 0;

	if (sim_create(&s, 4, NPL_STUB))
		fail_msg("%s: cannot create the simulated host", id);
	cJSON_ArrayForEach(node, get(exp, "nodes")) {
		const char *ip = str(node, "ip"), *role = str(node, "role");
		int n = npl_argv(argv, 0);

		argv[n++] = "apply";
		argv[n++] = "--role";
		argv[n++] = (char *)role;
		argv[n++] = (char *)id;
		site_args(exp, argv, n, 60);
		snprintf(what, sizeof(what), "node %s (apply --role %s)", ip, role);
		if (run_node(&s, argv, ip, SERVER, get(node, "launch"), FLAGS | ENV | TUNING, id, what,
			     &np) == NO_SUCH_RECIPE)
			goto done; /* said once is enough */
	}
	if (cJSON_IsObject(router)) {
		int n = npl_argv(argv, 0);

		argv[n++] = "apply";
		argv[n++] = "--role";
		argv[n++] = "router";
		argv[n++] = (char *)id;
		site_args(exp, argv, n, 60);
		snprintf(what, sizeof(what), "router (apply --role router on %s)", first_prefill(exp));
		run_node(&s, argv, first_prefill(exp), ROUTER, router, FLAGS | ENV, id, what, &np);
	}
done:
	cJSON_Delete(exp);
	sim_destroy(&s);
	if (np)
		fail_msg("%s: %d differences from the page (listed above)", id, np);
}

int main(void)
{
	char path[1024], *index, *line, *save = NULL;
	struct CMUnitTest renders[NUPSTREAM + 1], applies[NUPSTREAM + 1];
	size_t n = 0;
	int rc;

	snprintf(path, sizeof(path), "%s/INDEX", NPL_UPSTREAM_DIR);
	index = sim_slurp(path);
	if (!index) {
		fprintf(stderr, "cannot read %s\n", path);
		return 1;
	}
	for (line = strtok_r(index, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (n == NUPSTREAM) {
			n++;
			break;
		}
		renders[n] = (struct CMUnitTest){line, upstream, NULL, NULL, line};
		applies[n] = (struct CMUnitTest){line, upstream_apply, NULL, NULL, line};
		n++;
	}
	if (n != NUPSTREAM) {
		fprintf(stderr, "expected %d upstream recipes in %s, found %s%zu\n", NUPSTREAM, path,
			n > NUPSTREAM ? "more than " : "", n > NUPSTREAM ? (size_t)NUPSTREAM : n);
		free(index);
		return 1;
	}
	rc = _cmocka_run_group_tests("render", renders, n, NULL, NULL);
	rc |= _cmocka_run_group_tests("apply", applies, n, NULL, NULL);
	free(index);
	return rc;
}
