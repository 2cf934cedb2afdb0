/* launches.c: what each node would exec under a plan, from the plan document alone; see launches.h. */
#include <stdlib.h>
#include <string.h>

#include "npulaunch/buf.h"
#include "npulaunch/launches.h"
#include "npulaunch/plan.h"

struct ctx {
	const struct npl_site *site;
	const char *const *inherited;
	struct npl_arena *a;
	struct npl_diag *d;
	struct npl_node_launches *out;
	int cap;
	const char *role;
};

/* A plan value with the site's values in it; NULL and an error naming the missing key. */
static const char *value(struct ctx *c, const char *pv)
{
	struct npl_buf b = NPL_BUF_INIT;
	const char *s = NULL;
	int missing = -1;

	if (!pv)
		return "";
	if (npl_pval_resolve(&b, pv, c->site, &missing))
		npl_error(c->d, NULL, "the %s role needs the site value %s, which is not given", c->role,
			  missing >= 0 ? npl_site_key_name(missing) : "(unknown)");
	else
		s = npl_arena_strdup(c->a, npl_buf_str(&b));
	npl_buf_release(&b);
	return s;
}

static const char *inherited(const struct ctx *c, const char *name)
{
	size_t n = strlen(name);
	int i;

	for (i = 0; c->inherited && c->inherited[i]; i++)
		if (!strncmp(c->inherited[i], name, n) && c->inherited[i][n] == '=')
			return c->inherited[i] + n + 1;
	return NULL;
}

static int by_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static const char **grow(struct npl_arena *a, const char **v, int n)
{
	return npl_arena_grow(a, v, (size_t)n, (size_t)n + 1, sizeof(*v));
}

/* "NAME=VALUE" of one env entry: prepend and append built on the inherited value, as the script does. */
static const char *env_entry(struct ctx *c, const cJSON *e)
{
	const char *name = npl_json_str(e, "name"), *op = npl_json_str(e, "op"), *sep = npl_json_str(e, "sep");
	const char *v = value(c, npl_json_str(e, "value")), *old;

	if (!name || !v)
		return NULL;
	old = inherited(c, name);
	if (!sep)
		sep = ":";
	if (op && old && *old && !strcmp(op, "prepend"))
		return npl_arena_printf(c->a, "%s=%s%s%s", name, v, sep, old);
	if (op && old && *old && !strcmp(op, "append"))
		return npl_arena_printf(c->a, "%s=%s%s%s", name, old, sep, v);
	return npl_arena_printf(c->a, "%s=%s", name, v);
}

static int argv_of(struct ctx *c, const cJSON *node, struct npl_pagesh_launch *l)
{
	const cJSON *launch = cJSON_GetObjectItemCaseSensitive(node, "launch"), *it, *f, *v;
	int i = 0, m = -1;

	cJSON_ArrayForEach(it, launch) {
		if (m < 0 && cJSON_IsString(it) && !strcmp(it->valuestring, "-m"))
			m = i + 1;
		else if (i == m)
			l->module = npl_arena_strdup(c->a, it->valuestring);
		else if (m >= 0 && i > m) {
			l->argv = grow(c->a, l->argv, l->argc);
			l->argv[l->argc++] = npl_arena_strdup(c->a, it->valuestring);
		}
		i++;
	}
	if (!l->module)
		return npl_error(c->d, NULL, "the %s role's launch command has no '-m MODULE'", c->role);
	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(node, "flags")) {
		l->argv = grow(c->a, l->argv, l->argc);
		l->argv[l->argc++] = npl_arena_strdup(c->a, npl_json_str(f, "flag"));
		cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(f, "values")) {
			const char *x = value(c, v->valuestring);

			if (!x)
				return -1;
			l->argv = grow(c->a, l->argv, l->argc);
			l->argv[l->argc++] = x;
		}
	}
	return 0;
}

static int exported(const struct npl_pagesh_launch *l, const char *name)
{
	size_t n = strlen(name);
	int i;

	for (i = 0; i < l->nenv; i++)
		if (!strncmp(l->env[i], name, n) && l->env[i][n] == '=')
			return 1;
	return 0;
}

/* Environment, unsets, sources and tuning of one process of role. */
static int state_of(struct ctx *c, const cJSON *role, const cJSON *node, struct npl_pagesh_launch *l)
{
	const cJSON *it, *t = cJSON_GetObjectItemCaseSensitive(role, "tuning"), *g;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(node, "env")) {
		const char *kv = env_entry(c, it);

		if (!kv)
			return -1;
		l->env = grow(c->a, l->env, l->nenv);
		l->env[l->nenv++] = kv;
	}
	if (l->nenv > 1)
		qsort(l->env, (size_t)l->nenv, sizeof(*l->env), by_str);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(role, "unset"))
		if (npl_json_str(it, "name") && !exported(l, npl_json_str(it, "name"))) {
			l->unset = grow(c->a, l->unset, l->nunset);
			l->unset[l->nunset++] = npl_arena_strdup(c->a, npl_json_str(it, "name"));
		}
	if (l->nunset > 1)
		qsort(l->unset, (size_t)l->nunset, sizeof(*l->unset), by_str);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(role, "source"))
		if (npl_json_str(it, "path")) {
			l->sourced = grow(c->a, l->sourced, l->nsourced);
			l->sourced[l->nsourced++] = npl_arena_strdup(c->a, npl_json_str(it, "path"));
		}
	if (cJSON_IsObject(t)) {
		g = cJSON_GetObjectItemCaseSensitive(t, "cpu_governor");
		if (npl_json_str(g, "value")) {
			l->governors = grow(c->a, l->governors, l->ngovernors);
			l->governors[l->ngovernors++] = npl_arena_strdup(c->a, npl_json_str(g, "value"));
		}
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(t, "sysctl")) {
			l->sysctl = grow(c->a, l->sysctl, l->nsysctl);
			l->sysctl[l->nsysctl++] =
				npl_arena_printf(c->a, "%s=%s", npl_json_str(it, "name"), npl_json_str(it, "value"));
		}
		if (l->nsysctl > 1)
			qsort(l->sysctl, (size_t)l->nsysctl, sizeof(*l->sysctl), by_str);
	}
	return 0;
}

static void push(struct ctx *c, const struct npl_node_launch *x)
{
	struct npl_node_launches *o = c->out;

	if (o->n == c->cap) {
		o->v = npl_arena_grow(c->a, o->v, (size_t)c->cap, (size_t)(c->cap ? c->cap * 2 : 8), sizeof(*o->v));
		c->cap = c->cap ? c->cap * 2 : 8;
	}
	o->v[o->n++] = *x;
}

static int role_launches(struct ctx *c, const cJSON *role)
{
	const cJSON *node;
	const char *program = npl_json_str(role, "program");
	int bench = program && !strcmp(program, "bench"), k = 0;

	c->role = npl_arena_strdup(c->a, npl_json_str(role, "role") ? npl_json_str(role, "role") : "?");
	cJSON_ArrayForEach(node, cJSON_GetObjectItemCaseSensitive(role, "nodes")) {
		struct npl_node_launch x;
		const char *addr = npl_json_str(node, "address");
		int i;

		memset(&x, 0, sizeof(x));
		x.role = c->role;
		x.node = bench ? 0 : npl_json_int(node, "index", 0);
		x.instance = bench ? k : 0;
		for (i = 0; i < c->out->n; i++)
			x.instance += !bench && !strcmp(c->out->v[i].role, x.role) && c->out->v[i].node == x.node;
		if (addr) {
			struct npl_diag quiet = NPL_DIAG_INIT;
			struct npl_diag *keep = c->d;

			c->d = &quiet;
			x.ip = value(c, addr);
			c->d = keep;
			npl_diag_release(&quiet);
		}
		if (argv_of(c, node, &x.l) || state_of(c, role, node, &x.l))
			return -1;
		push(c, &x);
		k++;
	}
	return 0;
}

int npl_plan_launches(const cJSON *plan, const struct npl_site *site, const char *const *inherited,
		      struct npl_node_launches *out, struct npl_arena *a, struct npl_diag *d)
{
	struct ctx c = {site, inherited, a, d, out, 0, NULL};
	struct npl_site own;
	const cJSON *role;
	int pass;

	memset(out, 0, sizeof(*out));
	if (!site) {
		npl_plan_site(plan, &own, a);
		c.site = &own;
	}
	/* the servers first, then the router, then the benchmarks */
	for (pass = 0; pass < 3; pass++)
		cJSON_ArrayForEach(role, cJSON_GetObjectItemCaseSensitive(plan, "roles")) {
			const char *p = npl_json_str(role, "program");
			int which = p && !strcmp(p, "router") ? 1 : p && !strcmp(p, "bench") ? 2 : 0;

			if (which == pass && role_launches(&c, role))
				return -1;
		}
	return 0;
}
