/*
 * preflight_sglang.c: the preflight check of the SGLang version a recipe needs at least
 * (sglang_version: ">= 0.5.16", the plan's recipe.sglang_version): the version installed for
 * the python that launches the server, asked of that python itself, against the floor (compared
 * by text.c's npl_version_cmp). See preflight_internal.h.
 */
#include <string.h>
#include <unistd.h>

#include "npulaunch/arena.h"
#include "npulaunch/plan.h"
#include "npulaunch/preflight.h"
#include "npulaunch/proc.h"
#include "npulaunch/text.h"
#include "preflight_internal.h"

/* What the python prints before the version, so that warnings around it are not taken for it. */
#define MARK "npulaunch-sglang-version="
#define PROBE "import sglang; print('" MARK "' + sglang.__version__)"

/* The version the probe printed after MARK, in a; NULL when it printed none. */
static const char *probed(struct npl_arena *a, const char *out)
{
	const char *m = strstr(out, MARK);
	size_t n;

	if (!m)
		return NULL;
	m += strlen(MARK);
	n = strcspn(m, " \t\r\n");
	return n && n <= 64 ? npl_arena_strndup(a, m, n) : NULL;
}

/* The last line of out that is not blank, at most 200 bytes of it, in a ("" for none): what a
 * python that failed said last (ModuleNotFoundError: No module named 'sglang'). */
static const char *last_line(struct npl_arena *a, const char *out)
{
	size_t n = strlen(out), end;

	while (n && strchr(" \t\r\n", out[n - 1]))
		n--;
	end = n;
	while (n && out[n - 1] != '\n')
		n--;
	return npl_arena_strndup(a, out + n, end - n > 200 ? 200 : end - n);
}

/* What the server's python is: the plan's launch command of this node (python3 -m
 * sglang.launch_server); NULL when it does not start with a python. */
static const char *python_of(const struct npl_preflight_opts *o, int node)
{
	const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(o->role, "nodes");
	const cJSON *launch = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(nodes, node), "launch");
	const cJSON *first = cJSON_GetArrayItem(launch, 0);
	const char *p, *base;

	if (!cJSON_IsString(first))
		return NULL;
	p = first->valuestring;
	base = strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
	return !strncmp(base, "python", 6) ? p : NULL;
}

struct npl_pf_check npl_pf_check_sglang(const struct npl_preflight_opts *o, struct npl_arena *a)
{
	const cJSON *sg = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o->plan, "recipe"),
							   "sglang_version");
	struct npl_pf_check c = {"sglang", NPL_PF_SKIP, NULL, NULL};
	const char *floor = npl_json_str(sg, "floor"), *min = npl_json_str(sg, "min"), *py, *path, *out = "", *ver;
	const char *role = npl_json_str(o->role, "role") ? npl_json_str(o->role, "role") : "role";
	const char *fix = npl_arena_printf(a, "use an image or an environment with SGLang %s (the recipe's sglang_version)",
					   floor ? floor : "");
	int status = -1, cmp;
	enum npl_proc_result r;

	if (!floor || !min) {
		c.found = "the recipe states no SGLang version floor";
		return c;
	}
	if (!npl_json_str(o->role, "program") || strcmp(npl_json_str(o->role, "program"), "server")) {
		c.found = npl_arena_printf(a, "the %s runs no SGLang server", role);
		return c;
	}
	/* from here on, a version that cannot be told is a warning, never a silent pass */
	c.status = NPL_PF_WARN;
	if (!(py = python_of(o, o->node >= 0 ? o->node : 0))) {
		c.found = npl_arena_printf(a, "the recipe needs SGLang %s, and the server is not started by a python: the version was not checked", floor);
		return c;
	}
	path = strchr(py, '/') ? (access(py, X_OK) == 0 ? py : NULL) : npl_proc_find(a, py, NULL, NULL);
	if (!path) {
		c.found = npl_arena_printf(a, "the recipe needs SGLang %s, and %s is not found (PATH): the version was not checked", floor, py);
		c.fix = fix;
		return c;
	}
	r = npl_proc_run(a, path, (char *const[]){(char *)py, "-c", PROBE, NULL}, o->timeout, 1 << 16, &out, &status);
	if (r != NPL_PROC_OK || !(ver = probed(a, out))) {
		const char *said = last_line(a, out);

		c.found = npl_arena_printf(a, "the recipe needs SGLang %s, and '%s -c \"import sglang\"' %s%s%s: the version was not checked",
					   floor, py,
					   r == NPL_PROC_TIMEOUT ? "did not finish in time"
					   : r != NPL_PROC_OK ? npl_arena_printf(a, "failed (exit %d)", status)
							     : "printed no version",
					   *said ? ": " : "", said);
		c.fix = fix;
		return c;
	}
	cmp = npl_version_cmp(ver, min);
	if (cmp == -2) {
		c.found = npl_arena_printf(a, "%s reports SGLang '%s', a version npulaunch cannot compare with %s", py, ver, floor);
	} else if (cmp < 0) {
		c.status = NPL_PF_FAIL;
		c.found = npl_arena_printf(a, "SGLang %s (%s); the recipe needs %s", ver, py, floor);
		c.fix = fix;
	} else {
		c.status = NPL_PF_OK;
		c.found = npl_arena_printf(a, "SGLang %s (%s), the recipe needs %s", ver, py, floor);
	}
	return c;
}
