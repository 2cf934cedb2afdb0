/* compare.c: a page's launches against a plan's, as argparse and the shell read them; see compare.h. */
#include <stdlib.h>
#include <string.h>

#include "npulaunch/buf.h"
#include "npulaunch/compare.h"
#include "npulaunch/recipe.h"

static const char *const kind_names[] = {"launch", "flag", "env", "unset", "source", "governor", "sysctl", "metadata"};

struct npl_diff *npl_diff_add(struct npl_diffs *o, struct npl_arena *a)
{
	if (o->n == o->cap) {
		o->v = npl_arena_grow(a, o->v, (size_t)o->cap, (size_t)(o->cap ? o->cap * 2 : 16), sizeof(*o->v));
		o->cap = o->cap ? o->cap * 2 : 16;
	}
	memset(&o->v[o->n], 0, sizeof(o->v[o->n]));
	return &o->v[o->n++];
}

const char *npl_diff_kind_name(enum npl_diff_kind k)
{
	return kind_names[k];
}

static int prog_of(const char *module)
{
	if (!strcmp(module, "sglang_router.launch_router"))
		return NPL_PROG_ROUTER;
	if (!strcmp(module, "sglang.bench_serving"))
		return NPL_PROG_BENCH;
	return NPL_PROG_SERVER;
}

static int by_flag(const void *x, const void *y)
{
	return strcmp(((const struct npl_flagv *)x)->name, ((const struct npl_flagv *)y)->name);
}

static struct npl_flagv *find(struct npl_flagv *v, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return &v[i];
	return NULL;
}

/* The canonical name of "--word" (without its "=value"), or NULL and an error. */
static const char *canonical(const struct npl_engine *e, int prog, const char *word, const struct npl_loc *loc,
			     int *list, struct npl_arena *a, struct npl_diag *d)
{
	struct npl_flag_match m;
	char *name = npl_arena_strdup(a, word + 2), *eq = strchr(name, '=');
	int rc;

	if (eq)
		*eq = '\0';
	rc = npl_engine_canonical(e, prog, name, &m, a);
	if (rc != 0 && strchr(name, '_')) {
		/* a page's slip (--fuseep_mode): read as the option it evidently means, and said */
		char *fixed = npl_arena_strdup(a, name), *p;
		struct npl_flag_match m2;

		for (p = fixed; *p; p++)
			*p = *p == '_' ? '-' : *p;
		if (npl_engine_canonical(e, prog, fixed, &m2, a) == 0) {
			npl_warn(d, loc, "--%s is not an option of %s (argparse refuses it); read as --%s", name,
				 npl_engine_prog_tool(e, prog) ? npl_engine_prog_tool(e, prog)->module : "the program",
				 m2.canonical);
			m = m2;
			rc = 0;
		}
	}
	if (rc != 0) {
		const struct npl_engine_tool *t = npl_engine_prog_tool(e, prog);

		npl_error(d, loc, "%s", npl_engine_mismatch(e, t, name, rc, &m, a));
		return NULL;
	}
	/* argparse keeps the last occurrence of an option that is not a list (nargs) or appended */
	*list = !m.spec || m.spec->type == NPL_FT_LIST;
	return m.canonical;
}

int npl_norm_launch(const struct npl_engine *e, const struct npl_node_launch *L, struct npl_norm *out,
		    struct npl_arena *a, struct npl_diag *d)
{
	const struct npl_pagesh_launch *l = &L->l;
	struct npl_flagv *cur = NULL;
	int i, rc = 0, list = 1;

	memset(out, 0, sizeof(*out));
	out->src = L;
	out->prog = prog_of(l->module);
	out->flags = npl_arena_calloc(a, (size_t)l->argc + 1, sizeof(*out->flags));
	for (i = 0; i < l->argc; i++) {
		const char *w = l->argv[i], *name, *eq;
		const struct npl_loc *at = l->argloc ? &l->argloc[i] : &l->loc;

		if (strncmp(w, "--", 2) || !w[2]) {
			if (!cur) {
				rc = npl_error(d, at, "%s: the argument '%s' follows no flag", l->module, w);
				continue;
			}
			cur->v = npl_arena_grow(a, cur->v, (size_t)cur->n, (size_t)cur->n + 1, sizeof(*cur->v));
			cur->v[cur->n++] = w;
			continue;
		}
		if (!(name = canonical(e, out->prog, w, at, &list, a, d))) {
			rc = -1;
			cur = NULL;
			continue;
		}
		if (!(cur = find(out->flags, out->nflags, name))) {
			cur = &out->flags[out->nflags++];
			cur->name = name;
			cur->written = w;
		}
		if (cur->times++ && !list)
			cur->n = 0;
		if ((eq = strchr(w, '='))) {
			cur->v = npl_arena_grow(a, cur->v, (size_t)cur->n, (size_t)cur->n + 1, sizeof(*cur->v));
			cur->v[cur->n++] = eq + 1;
			cur = NULL;
		}
	}
	qsort(out->flags, (size_t)out->nflags, sizeof(*out->flags), by_flag);
	return rc;
}

const struct npl_flagv *npl_norm_flag(const struct npl_norm *n, const char *name)
{
	return find(n->flags, n->nflags, name);
}

const char *npl_flagv_text(const struct npl_flagv *f, struct npl_arena *a)
{
	struct npl_buf b = NPL_BUF_INIT;
	const char *s;
	int i;

	if (!f)
		return NULL;
	for (i = 0; i < f->n; i++) {
		if (i)
			npl_buf_putc(&b, ' ');
		npl_buf_puts(&b, f->v[i]);
	}
	s = npl_arena_strdup(a, npl_buf_str(&b));
	npl_buf_release(&b);
	return s;
}

/* ---- the differences ------------------------------------------------------- */

struct cmp {
	struct npl_diffs *out;
	struct npl_arena *a;
	const struct npl_node_launch *page, *plan;
};

static void add(struct cmp *c, enum npl_diff_kind k, const char *name, const char *page, const char *plan)
{
	const struct npl_node_launch *L = c->page ? c->page : c->plan;
	struct npl_diff *x = npl_diff_add(c->out, c->a);

	x->kind = k;
	x->role = L->role;
	x->node = L->node;
	x->instance = L->instance;
	x->name = name;
	x->page = page;
	x->plan = plan;
	if (c->page)
		x->loc = c->page->l.loc;
}

static int same_flag(const struct npl_flagv *x, const struct npl_flagv *y)
{
	int i;

	if (x->n != y->n)
		return 0;
	for (i = 0; i < x->n; i++)
		if (strcmp(x->v[i], y->v[i]))
			return 0;
	return 1;
}

static void cmp_flags(struct cmp *c, const struct npl_norm *p, const struct npl_norm *r)
{
	int i = 0, j = 0;

	while (i < p->nflags || j < r->nflags) {
		int o = i == p->nflags ? 1 : j == r->nflags ? -1 : strcmp(p->flags[i].name, r->flags[j].name);

		if (o == 0 && same_flag(&p->flags[i], &r->flags[j])) {
			i++, j++;
			continue;
		}
		add(c, NPL_DIFF_FLAG, o <= 0 ? p->flags[i].name : r->flags[j].name,
		    o <= 0 ? npl_flagv_text(&p->flags[i], c->a) : NULL, o >= 0 ? npl_flagv_text(&r->flags[j], c->a) : NULL);
		c->out->v[c->out->n - 1].pflag = o <= 0 ? &p->flags[i] : NULL;
		c->out->v[c->out->n - 1].rflag = o >= 0 ? &r->flags[j] : NULL;
		i += o <= 0;
		j += o >= 0;
	}
}

/* Two sorted lists of "NAME=VALUE" (kv) or names: each name one side lacks or values differently. */
static void cmp_lists(struct cmp *c, enum npl_diff_kind k, const char *const *p, int np, const char *const *r, int nr,
		      int kv)
{
	int i = 0, j = 0;

	while (i < np || j < nr) {
		size_t lp = i < np ? (kv ? strcspn(p[i], "=") : strlen(p[i])) : 0;
		size_t lr = j < nr ? (kv ? strcspn(r[j], "=") : strlen(r[j])) : 0;
		int o;

		if (i == np)
			o = 1;
		else if (j == nr)
			o = -1;
		else {
			size_t m = lp < lr ? lp : lr;

			o = strncmp(p[i], r[j], m);
			if (!o)
				o = lp < lr ? -1 : lp > lr;
		}
		if (o == 0 && (!kv || !strcmp(p[i] + lp, r[j] + lr))) {
			i++, j++;
			continue;
		}
		add(c, k, npl_arena_strndup(c->a, o <= 0 ? p[i] : r[j], o <= 0 ? lp : lr),
		    o <= 0 ? (kv ? p[i] + lp + 1 : "") : NULL, o >= 0 ? (kv ? r[j] + lr + 1 : "") : NULL);
		i += o <= 0;
		j += o >= 0;
	}
}

static int by_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static const char **sorted(const char **v, int n, struct npl_arena *a)
{
	const char **s = npl_arena_calloc(a, (size_t)n + 1, sizeof(*s));

	if (n)
		memcpy(s, v, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), by_str);
	return s;
}

/* The sources in order: one difference naming both lists when they differ. */
static void cmp_sources(struct cmp *c, const struct npl_pagesh_launch *p, const struct npl_pagesh_launch *r)
{
	struct npl_buf bp = NPL_BUF_INIT, br = NPL_BUF_INIT;
	int i;

	for (i = 0; i < p->nsourced; i++)
		npl_buf_printf(&bp, "%s%s", i ? " " : "", p->sourced[i]);
	for (i = 0; i < r->nsourced; i++)
		npl_buf_printf(&br, "%s%s", i ? " " : "", r->sourced[i]);
	if (strcmp(npl_buf_str(&bp), npl_buf_str(&br)))
		add(c, NPL_DIFF_SOURCE, "source", npl_arena_strdup(c->a, npl_buf_str(&bp)),
		    npl_arena_strdup(c->a, npl_buf_str(&br)));
	npl_buf_release(&bp);
	npl_buf_release(&br);
}

static void cmp_launch(struct cmp *c, const struct npl_norm *p, const struct npl_norm *r)
{
	const struct npl_pagesh_launch *lp = &p->src->l, *lr = &r->src->l;

	cmp_flags(c, p, r);
	cmp_lists(c, NPL_DIFF_ENV, lp->env, lp->nenv, lr->env, lr->nenv, 1);
	/* a benchmark's unsets are npulaunch's own care (a proxy breaks it), not a page's fact; the
	   router and the benchmark source nothing and tune nothing of their own */
	if (p->prog == NPL_PROG_BENCH)
		return;
	cmp_lists(c, NPL_DIFF_UNSET, sorted((const char **)lp->unset, lp->nunset, c->a), lp->nunset,
		  sorted((const char **)lr->unset, lr->nunset, c->a), lr->nunset, 0);
	if (p->prog != NPL_PROG_SERVER)
		return;
	cmp_sources(c, lp, lr);
	cmp_lists(c, NPL_DIFF_GOVERNOR, sorted((const char **)lp->governors, lp->ngovernors, c->a), lp->ngovernors,
		  sorted((const char **)lr->governors, lr->ngovernors, c->a), lr->ngovernors, 0);
	cmp_lists(c, NPL_DIFF_SYSCTL, lp->sysctl, lp->nsysctl, lr->sysctl, lr->nsysctl, 1);
}

static int same_place(const struct npl_node_launch *x, const struct npl_node_launch *y)
{
	return !strcmp(x->role, y->role) && x->node == y->node && x->instance == y->instance;
}

int npl_compare(const struct npl_engine *e, const struct npl_node_launches *page,
		const struct npl_node_launches *plan, struct npl_diffs *out, struct npl_arena *a,
		struct npl_diag *d)
{
	struct cmp c = {out, a, NULL, NULL};
	char *used = npl_arena_calloc(a, (size_t)plan->n + 1, 1);
	int i, j, rc = 0;

	for (i = 0; i < page->n; i++) {
		struct npl_norm np, nr;

		c.page = &page->v[i];
		c.plan = NULL;
		for (j = 0; j < plan->n; j++)
			if (!used[j] && same_place(&page->v[i], &plan->v[j]))
				break;
		if (j == plan->n) {
			add(&c, NPL_DIFF_LAUNCH, page->v[i].l.module, "launched", NULL);
			continue;
		}
		used[j] = 1;
		c.plan = &plan->v[j];
		if (npl_norm_launch(e, c.page, &np, a, d) || npl_norm_launch(e, c.plan, &nr, a, d)) {
			rc = -1;
			continue;
		}
		cmp_launch(&c, &np, &nr);
	}
	c.page = NULL;
	for (j = 0; j < plan->n; j++)
		if (!used[j]) {
			c.plan = &plan->v[j];
			add(&c, NPL_DIFF_LAUNCH, plan->v[j].l.module, NULL, "launched");
		}
	return rc;
}
