/*
 * preflight_sglang.c: the preflight check of the SGLang version a recipe needs at least
 * (sglang_version: ">= 0.5.16", the plan's recipe.sglang_version): the version installed for
 * the python that launches the server, asked of that python itself, against the floor; and the
 * comparison of two versions as pip orders them, as far as a floor needs. See preflight.h and
 * preflight_internal.h.
 */
#include <string.h>
#include <unistd.h>

#include "npulaunch/arena.h"
#include "npulaunch/plan.h"
#include "npulaunch/preflight.h"
#include "npulaunch/proc.h"
#include "preflight_internal.h"

/* What the python prints before the version, so that warnings around it are not taken for it. */
#define MARK "npulaunch-sglang-version="
#define PROBE "import sglang; print('" MARK "' + sglang.__version__)"

/* The release numbers of a version ("0.5.16rc1": 0 5 16, and pre = 1 for the rc); the count,
 * 0 when s does not start with one. A local or post suffix (+npu, .post1) ends the numbers. */
static int release(const char *s, long *v, int max, int *pre)
{
	int n = 0;

	*pre = 0;
	s += *s == 'v';
	while (n < max && *s >= '0' && *s <= '9') {
		long x = 0;

		for (; *s >= '0' && *s <= '9'; s++)
			x = x < 100000000 ? x * 10 + (*s - '0') : x;
		v[n++] = x;
		if (*s != '.' || !(s[1] >= '0' && s[1] <= '9'))
			break;
		s++;
	}
	/* 0.5.16rc1, 0.5.16a0, 0.5.16.dev3: before the release 0.5.16 */
	if (n && (!strncmp(s, "rc", 2) || !strncmp(s, "a", 1) || !strncmp(s, "b", 1) || !strncmp(s, ".dev", 4) ||
		  !strncmp(s, "dev", 3)))
		*pre = 1;
	return n;
}

int npl_pf_version_cmp(const char *installed, const char *floor)
{
	long a[8], b[8];
	int pa, pb, na = release(installed, a, 8, &pa), nb = release(floor, b, 8, &pb), i;

	if (!na || !nb)
		return -2;
	for (i = 0; i < (na > nb ? na : nb); i++) {
		long x = i < na ? a[i] : 0, y = i < nb ? b[i] : 0;

		if (x != y)
			return x < y ? -1 : 1;
	}
	/* the same numbers: a pre-release of the floor is below it */
	return pa && !pb ? -1 : pb && !pa ? 1 : 0;
}

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
	cmp = npl_pf_version_cmp(ver, min);
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
