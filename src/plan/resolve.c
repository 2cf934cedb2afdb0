/*
 * resolve.c: layers + rules -> plan; see plan.h. The layers are merged in a
 * fixed order (defaults, hardware, model, recipe, then site values and user
 * overrides); the rules then derive what the seed pages compute by hand.
 * Every value carries the origin that set it.
 */
#include <stdlib.h>
#include <string.h>

#include "npulaunch/engine.h"
#include "npulaunch/plan.h"
#include "npulaunch/resolve.h"
#include "npulaunch/text.h"

enum role {
	ROLE_PD_MIXED,
	ROLE_PREFILL,
	ROLE_DECODE,
	ROLE_ROUTER,
	ROLE_BENCH,
	ROLE_COUNT,
};

static const char *const role_names[ROLE_COUNT] = {"pd-mixed", "prefill", "decode", "router",
						   "bench"};

/* Where a value came from. */
struct origin {
	const char *layer;       /* defaults, hardware, model, recipe, rule, site, override */
	const char *id;          /* layer id, rule name, site key, or the override as written */
	struct npl_loc loc;
	const char *why;         /* for rules: how the value was derived */
};

struct rflag {
	const char *name;
	int dead;
	const char **vals;       /* plan values */
	int nvals;
	struct origin o;
};

struct renv {
	const char *name;
	const char *val;         /* plan value; NULL once removed */
	struct origin o;
	enum npl_env_op op;      /* set, or prepend/append to what the process inherits */
	const char *sep;
	int before_source;
};

struct rname {
	const char *name;
	struct origin o;
};

#define VEC(T)                                                                                     \
	struct {                                                                                   \
		T *v;                                                                              \
		int n, cap;                                                                        \
	}

#define PUSH(a, vec, item)                                                                         \
	do {                                                                                       \
		if ((vec).n == (vec).cap) {                                                        \
			int cap_ = (vec).cap ? (vec).cap * 2 : 16;                                 \
			(vec).v = npl_arena_grow((a), (vec).v, (size_t)(vec).n, (size_t)cap_,      \
						 sizeof(*(vec).v));                                \
			(vec).cap = cap_;                                                          \
		}                                                                                  \
		(vec).v[(vec).n++] = (item);                                                       \
	} while (0)

/* What the layers say for one role, merged. */
struct merged {
	VEC(struct rflag) flags;
	VEC(struct renv) env;
	VEC(struct rname) unset;
	VEC(struct rname) source;
	VEC(struct rname) explicit_;
};

struct oint {
	int set, v;
	struct origin o;
};

struct ostr {
	const char *s;
	struct origin o;
};

/* A speculative block merged over the layers, for one role. */
struct spec_state {
	int on;
	struct origin o;
	struct ostr algorithm, draft_quant;
	struct oint steps, topk, tokens, draft_model;
	unsigned emit;           /* 0: every field */
};

/* Top-level settings, merged over the layers. */
struct top {
	struct ostr governor;
	VEC(struct renv) sysctl;
	struct oint port_entry, port_prefill, port_decode, port_bootstrap, port_dist, port_store;
	struct {
		const struct npl_str *argv;
		int n;
		struct origin o;
	} launch[3];
	struct ostr entry_host;
	const struct npl_str *ifname_env;
	int nifname_env;
	struct origin ifname_env_o;
	struct oint socket_ifname;
	struct ostr bench_dataset, bench_resolution;
	struct oint bench_input, bench_output, bench_prefix, bench_groups, bench_images,
		bench_concurrency, bench_prompts, bench_sys_len, bench_q_len;
};

struct ctx {
	struct npl_arena *a;
	struct npl_diag *d;
	const struct npl_db *db;
	const struct npl_layer *R, *hw, *model;
	const struct npl_layer *layers[4];
	int nlayers;
	const struct npl_resolve_opts *o;
	struct top t;
	int rc;
	int used_ov[64];
	struct npl_engine engine;    /* the flag registry, loaded on first use */
	int engine_state;            /* 0 not yet, 1 loaded, -1 none */
};

static struct origin from_layer(const struct npl_layer *L, struct npl_loc loc)
{
	struct origin o = {npl_layer_kind_name(L->kind), L->id, loc, NULL};

	return o;
}

static struct origin from_rule(const char *rule, const char *why)
{
	struct origin o = {"rule", rule, {NULL, 0, 0}, why};

	return o;
}

/* A value that is a site value, put in place by a rule. */
static struct origin from_site(enum npl_site_key k, const char *why)
{
	struct origin o = {"site", npl_site_key_name(k), {NULL, 0, 0}, why};

	return o;
}

static const char *lit(struct ctx *c, const char *s)
{
	struct npl_buf b = NPL_BUF_INIT;
	char *r;

	if (!strchr(s, '$'))
		return s;
	npl_pval_lit(&b, s);
	r = npl_arena_strdup(c->a, npl_buf_str(&b));
	npl_buf_release(&b);
	return r;
}

static const char *ref(struct ctx *c, enum npl_site_key k, int index, int url)
{
	struct npl_buf b = NPL_BUF_INIT;
	char *r;

	npl_pval_ref(&b, k, index, url);
	r = npl_arena_strdup(c->a, npl_buf_str(&b));
	npl_buf_release(&b);
	return r;
}

/* ---- names the scripts keep ---------------------------------------------- */

/* Why a recipe or an override may not set or unset the environment variable name, or NULL.
 * The scripts hold their own state in npl_* variables and the site values in MODEL_PATH,
 * PREFILL_IPS, ... (an export of one before the launch would launch something other than the
 * plan); npulaunch's settings are NPULAUNCH_*; and bash gives some names a meaning of its own
 * (read-only ones an export would stop the script at, the ones the scripts read). */
static const char *reserved_env(struct ctx *c, const char *name)
{
	static const char *const bash_own[] = {"BASH_REMATCH", "BASHOPTS", "BASH_VERSINFO", "EUID",
					       "EPOCHREALTIME", "EPOCHSECONDS", "IFS", "PPID", "SECONDS", "SHELLOPTS", "UID"};
	size_t i;
	int k;

	if (npl_starts_with(name, "npl_"))
		return "the scripts' own variables begin with npl_";
	if (npl_starts_with(name, "NPULAUNCH_"))
		return "npulaunch's settings begin with NPULAUNCH_";
	for (k = 0; k < NPL_SITE_COUNT; k++)
		if ((npl_site_var(k) && !strcmp(name, npl_site_var(k))) ||
		    (npl_site_host_var(k) && !strcmp(name, npl_site_host_var(k))))
			return npl_arena_printf(c->a, "the scripts hold the site value --%s in it",
						npl_site_key_name(k));
	for (i = 0; i < NPL_ARRAY_SIZE(bash_own); i++)
		if (!strcmp(name, bash_own[i]))
			return "bash gives it a meaning of its own";
	return NULL;
}

/* Every environment name the layers and the overrides set or unset, against the reserved ones:
 * located in a recipe file, or naming the option. */
static void check_env_names(struct ctx *c)
{
	const char *why;
	int i, j, s;

	for (i = 0; i < c->nlayers; i++) {
		const struct npl_layer *L = c->layers[i];

		for (s = 0; s < NPL_SCOPE_COUNT; s++) {
			const struct npl_scope_set *sc = &L->scope[s];

			for (j = 0; j < sc->nenv; j++)
				if ((why = reserved_env(c, sc->env[j].name)))
					c->rc = npl_error(c->d, &sc->env[j].loc, "environment variable '%s' is reserved: %s",
							  sc->env[j].name, why);
			for (j = 0; j < sc->nunset; j++)
				if ((why = reserved_env(c, sc->unset[j].s)))
					c->rc = npl_error(c->d, &sc->unset[j].loc, "environment variable '%s' is reserved: %s",
							  sc->unset[j].s, why);
		}
		/* the variables the socket rule sets to the interface */
		for (j = 0; j < L->nifname_env; j++)
			if ((why = reserved_env(c, L->ifname_env[j].s)))
				c->rc = npl_error(c->d, &L->ifname_env[j].loc, "environment variable '%s' is reserved: %s",
						  L->ifname_env[j].s, why);
	}
	for (i = 0; i < c->o->nov; i++) {
		const struct npl_override *ov = &c->o->ov[i];

		if ((ov->kind == NPL_OV_SET_ENV || ov->kind == NPL_OV_UNSET_ENV) &&
		    (why = reserved_env(c, ov->name)))
			c->rc = npl_error(c->d, NULL, "%s: environment variable '%s' is reserved: %s", ov->text,
					  ov->name, why);
	}
}

/* ---- merging the layers ------------------------------------------------ */

/* A flag name as SGLang's argparse reads it: an alias or an unambiguous
 * prefix becomes the registry's full name, with a note where it was written.
 * A name the registry does not know stays as it is, for the plan checks to
 * report with a did-you-mean. */
static const char *canon_flag(struct ctx *c, int prog, const char *name, const struct npl_loc *loc,
			      const char *as)
{
	struct npl_flag_match m;

	if (c->engine_state == 0)
		c->engine_state = npl_engine_load(&c->engine, c->db, c->a, c->d) ? -1 : 1;
	if (c->engine_state < 0 || npl_engine_canonical(&c->engine, prog, name, &m, c->a) != 0 ||
	    !m.canonical || !strcmp(m.canonical, name))
		return name;
	npl_diag_add(c->d, NPL_NOTE, loc && loc->file ? loc : NULL, "%s%s'%s' is an %s: SGLang reads it as --%s, and so does the plan",
		     as ? as : "", as ? ": " : "", name, m.why ? m.why : "another name", m.canonical);
	return m.canonical;
}

static void merge_scope(struct ctx *c, struct merged *m, const struct npl_layer *L,
			const struct npl_scope_set *s, int with_unset, int with_rest, int prog)
{
	int i, j;

	if (with_rest) {
		for (i = 0; i < s->nenv; i++) {
			const struct npl_env_set *e = &s->env[i];
			struct renv r = {e->name, NULL, from_layer(L, e->loc), e->op, e->sep, e->before_source};

			if (e->value)
				r.val = e->site_key >= 0 ? ref(c, (enum npl_site_key)e->site_key, -1, 0)
							 : lit(c, e->value);

			for (j = 0; j < m->env.n; j++)
				if (!strcmp(m->env.v[j].name, e->name))
					break;
			if (j < m->env.n)
				m->env.v[j] = r;
			else if (e->value)
				PUSH(c->a, m->env, r);
		}
		for (i = 0; i < s->nflags; i++) {
			const struct npl_flag_set *f = &s->flags[i];
			const char *name = canon_flag(c, prog, f->name, &f->loc, NULL);
			struct rflag r = {name, f->kind == NPL_FLAG_REMOVE, NULL, 0, from_layer(L, f->loc)};

			if (f->kind == NPL_FLAG_VALUES) {
				r.vals = npl_arena_calloc(c->a, (size_t)f->nvalues, sizeof(*r.vals));
				for (j = 0; j < f->nvalues; j++)
					r.vals[j] = lit(c, f->values[j]);
				r.nvals = f->nvalues;
			}
			for (j = 0; j < m->flags.n; j++)
				if (!strcmp(m->flags.v[j].name, name))
					break;
			if (j < m->flags.n)
				m->flags.v[j] = r;
			else if (!r.dead)
				PUSH(c->a, m->flags, r);
		}
		if (s->source_replace)
			m->source.n = 0;
		for (i = 0; i < s->nsource; i++) {
			for (j = 0; j < m->source.n; j++)
				if (!strcmp(m->source.v[j].name, s->source[i].s))
					break;
			if (j == m->source.n)
				PUSH(c->a, m->source,
				     ((struct rname){lit(c, s->source[i].s), from_layer(L, s->source[i].loc)}));
		}
		for (i = 0; i < s->nexplicit; i++)
			PUSH(c->a, m->explicit_,
			     ((struct rname){s->explicit_flags[i].s, from_layer(L, s->explicit_flags[i].loc)}));
	}
	if (with_unset) {
		if (s->unset_replace)
			m->unset.n = 0;
		for (i = 0; i < s->nunset; i++) {
			for (j = 0; j < m->unset.n; j++)
				if (!strcmp(m->unset.v[j].name, s->unset[i].s))
					break;
			if (j == m->unset.n)
				PUSH(c->a, m->unset,
				     ((struct rname){s->unset[i].s, from_layer(L, s->unset[i].loc)}));
		}
	}
}

/* Merge what the four layers say for one role. The top-level `unset` applies
 * to every process launched (proxies break router and benchmark as well);
 * the other top-level settings apply to the server roles. */
static void merge_role(struct ctx *c, enum role r, struct merged *m)
{
	static const enum npl_scope own[ROLE_COUNT] = {NPL_SCOPE_PD_MIXED, NPL_SCOPE_PREFILL,
						       NPL_SCOPE_DECODE, NPL_SCOPE_ROUTER,
						       NPL_SCOPE_BENCH};
	int i, server = r <= ROLE_DECODE;
	int prog = server ? NPL_PROG_SERVER : r == ROLE_ROUTER ? NPL_PROG_ROUTER : NPL_PROG_BENCH;

	memset(m, 0, sizeof(*m));
	for (i = 0; i < c->nlayers; i++) {
		const struct npl_layer *L = c->layers[i];

		merge_scope(c, m, L, &L->scope[NPL_SCOPE_SERVER], 1, server, prog);
		if (r == ROLE_PREFILL || r == ROLE_DECODE)
			merge_scope(c, m, L, &L->scope[NPL_SCOPE_DISAGG], 1, 1, prog);
		merge_scope(c, m, L, &L->scope[own[r]], 1, 1, prog);
	}
}

#define TAKE_INT(dst, src, L)                                                                      \
	do {                                                                                       \
		if ((src).set) {                                                                   \
			(dst).set = 1;                                                             \
			(dst).v = (src).v;                                                         \
			(dst).o = from_layer((L), (src).loc);                                      \
		}                                                                                  \
	} while (0)

#define TAKE_STR(dst, src, L)                                                                      \
	do {                                                                                       \
		if ((src).s) {                                                                     \
			(dst).s = (src).s;                                                         \
			(dst).o = from_layer((L), (src).loc);                                      \
		}                                                                                  \
	} while (0)

static void merge_top(struct ctx *c)
{
	struct top *t = &c->t;
	int i, j, p;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < c->nlayers; i++) {
		const struct npl_layer *L = c->layers[i];

		if (L->tuning_replace)
			t->sysctl.n = 0;
		if (L->governor_removed || L->tuning_replace)
			t->governor.s = NULL;
		TAKE_STR(t->governor, L->governor, L);
		for (j = 0; j < L->nsysctl; j++) {
			const struct npl_env_set *e = &L->sysctl[j];
			struct renv r = {e->name, e->value ? lit(c, e->value) : NULL, from_layer(L, e->loc),
					 NPL_ENV_SET, NULL, 0};
			int k;

			for (k = 0; k < t->sysctl.n; k++)
				if (!strcmp(t->sysctl.v[k].name, e->name))
					break;
			if (k < t->sysctl.n)
				t->sysctl.v[k] = r;
			else if (e->value)
				PUSH(c->a, t->sysctl, r);
		}
		TAKE_INT(t->port_entry, L->ports.entry, L);
		TAKE_INT(t->port_prefill, L->ports.prefill, L);
		TAKE_INT(t->port_decode, L->ports.decode, L);
		TAKE_INT(t->port_bootstrap, L->ports.bootstrap, L);
		TAKE_INT(t->port_dist, L->ports.dist_init, L);
		TAKE_INT(t->port_store, L->ports.mf_store, L);
		for (p = 0; p < 3; p++)
			if (L->launch.n[p]) {
				t->launch[p].argv = L->launch.argv[p];
				t->launch[p].n = L->launch.n[p];
				t->launch[p].o = from_layer(L, L->launch.loc[p]);
			}
		TAKE_STR(t->entry_host, L->entry_host, L);
		if (L->ifname_env_set) {
			t->ifname_env = L->ifname_env;
			t->nifname_env = L->nifname_env;
			t->ifname_env_o = from_layer(L, L->ifname_env ? L->ifname_env[0].loc : L->loc);
		}
		TAKE_INT(t->socket_ifname, L->socket_ifname, L);
		TAKE_STR(t->bench_dataset, L->bench.dataset, L);
		TAKE_STR(t->bench_resolution, L->bench.resolution, L);
		TAKE_INT(t->bench_input, L->bench.input, L);
		TAKE_INT(t->bench_output, L->bench.output, L);
		TAKE_INT(t->bench_prefix, L->bench.prefix, L);
		TAKE_INT(t->bench_groups, L->bench.groups, L);
		TAKE_INT(t->bench_images, L->bench.images, L);
		TAKE_INT(t->bench_concurrency, L->bench.concurrency, L);
		TAKE_INT(t->bench_prompts, L->bench.prompts, L);
		TAKE_INT(t->bench_sys_len, L->bench.system_prompt_len, L);
		TAKE_INT(t->bench_q_len, L->bench.question_len, L);
	}
}

/* One layer's speculative block over the state; on says whether the block
 * turns speculative decoding on (a top-level block does not, for prefill). */
static void spec_take(struct spec_state *st, const struct npl_layer *L, const struct npl_spec *b, int on)
{
	if (!b || !b->present)
		return;
	if (b->removed) {
		memset(st, 0, sizeof(*st));
		return;
	}
	if (on) {
		st->on = 1;
		st->o = from_layer(L, b->loc);
	}
	TAKE_STR(st->algorithm, b->algorithm, L);
	if (b->draft_quantization_removed)
		st->draft_quant.s = NULL;
	TAKE_STR(st->draft_quant, b->draft_quantization, L);
	TAKE_INT(st->steps, b->steps, L);
	TAKE_INT(st->topk, b->topk, L);
	TAKE_INT(st->tokens, b->draft_tokens, L);
	TAKE_INT(st->draft_model, b->draft_model, L);
	if (b->emit)
		st->emit = b->emit;
}

/* The speculative block of one server role: per layer the top-level block
 * (on for pd-mixed and decode), then disagg's, then the role's own. */
static void merge_spec(struct ctx *c, enum role r, struct spec_state *st)
{
	static const enum npl_scope own[] = {NPL_SCOPE_PD_MIXED, NPL_SCOPE_PREFILL, NPL_SCOPE_DECODE};
	int i;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < c->nlayers; i++) {
		const struct npl_layer *L = c->layers[i];

		spec_take(st, L, &L->spec, r != ROLE_PREFILL);
		if (r == ROLE_PREFILL || r == ROLE_DECODE)
			spec_take(st, L, L->scope[NPL_SCOPE_DISAGG].spec, 1);
		spec_take(st, L, L->scope[own[r]].spec, 1);
	}
}

/* ---- JSON helpers ------------------------------------------------------ */

static cJSON *origin_json(const struct origin *o)
{
	cJSON *j = cJSON_CreateObject();

	cJSON_AddStringToObject(j, "layer", o->layer);
	if (o->id)
		cJSON_AddStringToObject(j, !strcmp(o->layer, "rule") ? "rule" :
					   !strcmp(o->layer, "site") ? "key" :
					   !strcmp(o->layer, "override") ? "option" : "id", o->id);
	if (o->loc.file) {
		char at[512];

		snprintf(at, sizeof(at), "%s:%d:%d", o->loc.file, o->loc.line, o->loc.col);
		cJSON_AddStringToObject(j, "at", at);
	}
	if (o->why)
		cJSON_AddStringToObject(j, "why", o->why);
	return j;
}

static cJSON *strings_json(const char *const *v, int n)
{
	cJSON *a = cJSON_CreateArray();
	int i;

	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
	return a;
}

/* ---- the flags of one launch -------------------------------------------- */

struct launch {
	VEC(struct rflag) flags;
	VEC(struct renv) env;
};

static void put_flag(struct ctx *c, struct launch *l, const char *name, struct origin o, int n, ...)
{
	struct rflag f = {name, 0, NULL, n, o};
	va_list ap;
	int i;

	f.vals = npl_arena_calloc(c->a, (size_t)n + 1, sizeof(*f.vals));
	va_start(ap, n);
	for (i = 0; i < n; i++)
		f.vals[i] = va_arg(ap, const char *);
	va_end(ap);
	PUSH(c->a, l->flags, f);
}

static const char *num(struct ctx *c, int v)
{
	return npl_arena_printf(c->a, "%d", v);
}

static void put_env(struct ctx *c, struct launch *l, const char *name, const char *val, struct origin o)
{
	int i;

	for (i = 0; i < l->env.n; i++)
		if (!strcmp(l->env.v[i].name, name)) {
			l->env.v[i].val = val;
			l->env.v[i].o = o;
			return;
		}
	PUSH(c->a, l->env, ((struct renv){name, val, o, NPL_ENV_SET, NULL, 0}));
}

static int has_explicit(const struct merged *m, const char *name)
{
	int i;

	for (i = 0; i < m->explicit_.n; i++)
		if (!strcmp(m->explicit_.v[i].name, name))
			return 1;
	return 0;
}

/* Flags that the rules own, per program. A recipe may state tp-size (it is
 * checked against the rule); the others it may not set at all. */
static const char *const server_reserved[] = {
	"model-path", "host", "port", "nnodes", "node-rank", "dist-init-addr",
	"disaggregation-mode", "disaggregation-bootstrap-port", "speculative-algorithm",
	"speculative-num-steps", "speculative-eagle-topk", "speculative-num-draft-tokens",
	"speculative-draft-model-path", "speculative-draft-model-quantization", NULL};
static const char *const router_reserved[] = {"pd-disaggregation", "prefill", "decode", "host",
					      "port", NULL};
static const char *const bench_reserved[] = {
	"dataset-name", "backend", "host", "port", "max-concurrency", "num-prompts",
	"random-input-len", "random-output-len", "random-range-ratio", "gsp-num-groups",
	"gsp-prompts-per-group", "gsp-system-prompt-len", "gsp-question-len", "gsp-output-len",
	"image-resolution", "image-count", NULL};

static const char *reserved_rule(enum role r, const char *flag)
{
	const char *const *v = r <= ROLE_DECODE ? server_reserved
			     : r == ROLE_ROUTER ? router_reserved : bench_reserved;

	for (; *v; v++)
		if (!strcmp(*v, flag))
			return *v;
	return NULL;
}

/* The name of the rule (or site value) an origin names, for messages. */
static const char *rule_name(struct ctx *c, const struct origin *o)
{
	if (!strcmp(o->layer, "site") && o->why && npl_starts_with(o->why, "rule ")) {
		const char *r = o->why + 5;

		return npl_arena_printf(c->a, "%.*s", (int)strcspn(r, ":"), r);
	}
	return o->id ? o->id : o->layer;
}

static int role_of_name(const char *s)
{
	int r;

	for (r = 0; r < ROLE_COUNT; r++)
		if (!strcmp(role_names[r], s))
			return r;
	return -1;
}

static int override_applies(const struct npl_override *ov, enum role r)
{
	if (!ov->role)
		return r <= ROLE_DECODE;
	return role_of_name(ov->role) == (int)r;
}

/* Apply --set/--unset/--env/--unset-env to one launch. A rule-owned flag
 * may only be overridden with force; a tp-size that equals the rule is fine. */
static void apply_overrides(struct ctx *c, enum role r, struct launch *l, const char *tp)
{
	int i, j;

	for (i = 0; i < c->o->nov; i++) {
		const struct npl_override *ov = &c->o->ov[i];
		struct origin o = {"override", ov->text, {NULL, 0, 0}, NULL};

		const char *name;

		if (!override_applies(ov, r))
			continue;
		if (i < (int)NPL_ARRAY_SIZE(c->used_ov))
			c->used_ov[i] = 1;
		name = ov->kind == NPL_OV_SET_ENV || ov->kind == NPL_OV_UNSET_ENV
			? ov->name
			: canon_flag(c, r <= ROLE_DECODE ? NPL_PROG_SERVER : r == ROLE_ROUTER ? NPL_PROG_ROUTER : NPL_PROG_BENCH,
				     ov->name, NULL, ov->text);
		if (ov->kind == NPL_OV_SET_ENV || ov->kind == NPL_OV_UNSET_ENV) {
			if (ov->kind == NPL_OV_SET_ENV) {
				put_env(c, l, name, lit(c, ov->values[0]), o);
			} else {
				for (j = 0; j < l->env.n; j++)
					if (!strcmp(l->env.v[j].name, name))
						l->env.v[j].val = NULL;
			}
			continue;
		}
		for (j = 0; j < l->flags.n; j++)
			if (!l->flags.v[j].dead && !strcmp(l->flags.v[j].name, name))
				break;
		if (r <= ROLE_DECODE && !strcmp(name, "tp-size") && tp && !c->o->force &&
		    !(ov->kind == NPL_OV_SET_FLAG && ov->nvalues == 1 && !strcmp(ov->values[0], tp))) {
			c->rc = npl_error(c->d, NULL, "%s contradicts the rule tp-size: %s has %s (the instance's dies / pp-size); use --force to insist",
					  ov->text, role_names[r], tp);
			continue;
		}
		if (reserved_rule(r, name) && strcmp(name, "tp-size") && !c->o->force) {
			const struct rflag *have = j < l->flags.n ? &l->flags.v[j] : NULL;

			if (have && (!strcmp(have->o.layer, "rule") || !strcmp(have->o.layer, "site")))
				c->rc = npl_error(c->d, NULL, "%s: --%s of %s comes from the rule %s (see show --explain); use --force to insist",
						  ov->text, name, role_names[r], rule_name(c, &have->o));
			else if (have && npl_starts_with(name, "speculative-"))
				c->rc = npl_error(c->d, NULL, "%s: --%s of %s comes from the %s's speculative block (see show --explain); change it there, or use --force to insist",
						  ov->text, name, role_names[r], have->o.layer);
			else if (have)
				c->rc = npl_error(c->d, NULL, "%s: --%s of %s is derived by the rules from the %s's settings (see show --explain); use --force to insist",
						  ov->text, name, role_names[r], have->o.layer);
			else if (npl_starts_with(name, "speculative-"))
				c->rc = npl_error(c->d, NULL, "%s: no rule writes --%s on %s, which has no speculative block: give it one (roles.%s.speculative in the recipe), or use --force to insist",
						  ov->text, name, role_names[r], role_names[r]);
			else
				c->rc = npl_error(c->d, NULL, "%s: --%s is owned by the rules (see show --explain), though none writes it on %s here; use --force to insist",
						  ov->text, name, role_names[r]);
			continue;
		}
		if (ov->kind == NPL_OV_UNSET_FLAG) {
			if (j < l->flags.n)
				l->flags.v[j].dead = 1;
			continue;
		}
		struct rflag f = {name, 0, NULL, ov->nvalues, o};

		f.vals = npl_arena_calloc(c->a, (size_t)ov->nvalues + 1, sizeof(*f.vals));
		for (int k = 0; k < ov->nvalues; k++)
			f.vals[k] = lit(c, ov->values[k]);
		if (j < l->flags.n)
			l->flags.v[j] = f;
		else
			PUSH(c->a, l->flags, f);
	}
}

/* What to do instead of writing a rule-owned flag of role r: the rule that writes it, and where
 * its inputs are set. */
static const char *reserved_hint(enum role r, const char *flag)
{
	static const struct {
		const char *flag, *hint;
	} hints[] = {
		{"model-path", "the rule model-path writes it from the site value --model-path (model-path: in a site file)"},
		{"port", "the rule ports writes it: set it under 'ports'"},
		{"disaggregation-bootstrap-port", "the rule bootstrap-port writes it (ports.bootstrap + the prefill instance): set it under 'ports'"},
		{"nnodes", "the rule nodes writes it (an instance's cards / the hardware's cards per node): give the role's cards in 'topology', and list it under 'explicit' to have it on one node too"},
		{"node-rank", "the rule nodes writes it (this node's rank in its instance): list it under 'explicit' to have it on one node too"},
		{"dist-init-addr", "the rule dist-init-addr writes it (the instance's first node, ports.dist_init): set the port under 'ports', and list it under 'explicit' to have it on one node too"},
		{"disaggregation-mode", "the rule disaggregation writes it from the role (prefill or decode)"},
	};
	size_t i;

	if (npl_starts_with(flag, "speculative-"))
		return r == ROLE_PREFILL ? "the rule speculative writes it: set it in prefill's own block, roles.prefill.speculative"
					 : "the rule speculative writes it: set it in the 'speculative' block";
	for (i = 0; i < NPL_ARRAY_SIZE(hints); i++)
		if (!strcmp(hints[i].flag, flag))
			return hints[i].hint;
	return "it comes from the rules and the site values (see show --explain)";
}

/* 1 when a host text is a loopback address (only this node reaches it). */
static int loopback_host(const char *h)
{
	return npl_starts_with(h, "127.") || !strcmp(h, "::1") || !strcmp(h, "[::1]") || !strcmp(h, "localhost");
}

/* 1 when a host text means every address of the node. */
static int wildcard_host(const char *h)
{
	return !strcmp(h, "0.0.0.0") || !strcmp(h, "::") || !strcmp(h, "[::]");
}

/*
 * A layer's own --host for a server: honoured over the rule host (a page that binds a two-node
 * PD-mixed server to 127.0.0.1, or to 0.0.0.0), shown by --explain. A prefill or decode server
 * must be reachable by the router and the other role: a loopback address is refused there.
 */
static void honour_host(struct ctx *c, enum role r, struct launch *l, const struct rflag *f)
{
	struct rflag h = *f;
	int j;

	if (f->nvals != 1 || !*f->vals[0]) {
		c->rc = npl_error(c->d, &f->o.loc, "flag 'host' of %s takes one address", role_names[r]);
		return;
	}
	if (r != ROLE_PD_MIXED && loopback_host(f->vals[0])) {
		c->rc = npl_error(c->d, &f->o.loc, "host %s of %s: a %s server must listen where the router and the other role reach it; only a PD-mixed server may listen on a loopback address",
				  f->vals[0], role_names[r], role_names[r]);
		return;
	}
	h.o.why = "the recipe's own value: the host rule yields to it";
	for (j = 0; j < l->flags.n; j++)
		if (!l->flags.v[j].dead && !strcmp(l->flags.v[j].name, "host")) {
			l->flags.v[j] = h;
			return;
		}
	PUSH(c->a, l->flags, h);
}

/* The data flags of a merged role, after the rule flags; reserved names are refused. */
static void put_data_flags(struct ctx *c, enum role r, struct launch *l, const struct merged *m,
			   const char *tp, const char *tp_why)
{
	int i;

	for (i = 0; i < m->flags.n; i++) {
		const struct rflag *f = &m->flags.v[i];

		if (f->dead)
			continue;
		if (r <= ROLE_DECODE && !strcmp(f->name, "tp-size")) {
			if (f->nvals != 1 || strcmp(f->vals[0], tp))
				c->rc = npl_error(c->d, &f->o.loc, "tp-size %s contradicts the rule tp-size: %s needs %s (%s; tp-size x pp-size is the instance's dies)",
						  f->nvals ? f->vals[0] : "(no value)", role_names[r], tp, tp_why);
			continue;
		}
		if (r <= ROLE_DECODE && !strcmp(f->name, "host")) {
			honour_host(c, r, l, f);
			continue;
		}
		if (reserved_rule(r, f->name)) {
			c->rc = npl_error(c->d, &f->o.loc, "flag '%s' of %s is derived by a rule: %s",
					  f->name, role_names[r], reserved_hint(r, f->name));
			continue;
		}
		PUSH(c->a, l->flags, *f);
	}
}

/* The --host a layer or an override set (not the rule's, nor a wildcard), for the endpoint. */
static const char *own_host(const struct launch *l)
{
	int j;

	for (j = 0; j < l->flags.n; j++) {
		const struct rflag *f = &l->flags.v[j];

		if (!f->dead && !strcmp(f->name, "host") && f->nvals == 1 && strcmp(f->o.layer, "rule") &&
		    strcmp(f->o.layer, "site") && !wildcard_host(f->vals[0]))
			return f->vals[0];
	}
	return NULL;
}

/* ---- roles ---------------------------------------------------------------- */

struct shape {
	enum role role;
	int instances, cards, nodes_per_instance, dies;
	int per_node;            /* instances sharing one node: each owns its dies and a port */
	const struct npl_topology *topo;
	int site_key;            /* the site list that holds this role's nodes, or -1 */
};

/* The node (index in the role's address list) of an instance's rank, the
 * instance's slot on a shared node, and the role's number of nodes. */
static int node_of_rank(const struct shape *sh, int inst, int rank)
{
	return sh->per_node > 1 ? inst / sh->per_node : inst * sh->nodes_per_instance + rank;
}

static int slot_of(const struct shape *sh, int inst)
{
	return sh->per_node > 1 ? inst % sh->per_node : 0;
}

static int nodes_of(const struct shape *sh)
{
	return sh->per_node > 1 ? (sh->instances + sh->per_node - 1) / sh->per_node
				: sh->instances * sh->nodes_per_instance;
}

static int port_or(struct ctx *c, const struct oint *p, const char *name)
{
	if (!p->set) {
		c->rc = npl_error(c->d, NULL, "no '%s' port in the recipe database (ports.%s in the defaults)",
				  name, name);
		return 0;
	}
	return p->v;
}

static cJSON *flags_json(const struct launch *l)
{
	cJSON *a = cJSON_CreateArray();
	int i;

	for (i = 0; i < l->flags.n; i++) {
		const struct rflag *f = &l->flags.v[i];
		cJSON *o;

		if (f->dead)
			continue;
		char name[256];

		snprintf(name, sizeof(name), "--%s", f->name);
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "flag", name);
		cJSON_AddItemToObject(o, "values", strings_json(f->vals, f->nvals));
		cJSON_AddItemToObject(o, "origin", origin_json(&f->o));
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static int envcmp(const void *x, const void *y)
{
	return strcmp(((const struct renv *)x)->name, ((const struct renv *)y)->name);
}

static cJSON *env_json(struct launch *l)
{
	cJSON *a = cJSON_CreateArray();
	int i;

	/* sorted by name, as the seed pages list their exports */
	if (l->env.n)
		qsort(l->env.v, (size_t)l->env.n, sizeof(*l->env.v), envcmp);
	for (i = 0; i < l->env.n; i++) {
		cJSON *o;

		if (!l->env.v[i].val)
			continue;
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", l->env.v[i].name);
		cJSON_AddStringToObject(o, "value", l->env.v[i].val);
		if (l->env.v[i].op != NPL_ENV_SET) {
			cJSON_AddStringToObject(o, "op", l->env.v[i].op == NPL_ENV_PREPEND ? "prepend" : "append");
			cJSON_AddStringToObject(o, "sep", l->env.v[i].sep ? l->env.v[i].sep : ":");
		}
		if (l->env.v[i].before_source)
			cJSON_AddStringToObject(o, "when", "before-source");
		cJSON_AddItemToObject(o, "origin", origin_json(&l->env.v[i].o));
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *names_json(const struct rname *v, int n, const char *key)
{
	cJSON *a = cJSON_CreateArray();
	int i;

	for (i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, key, v[i].name);
		cJSON_AddItemToObject(o, "origin", origin_json(&v[i].o));
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* Kernel facts: sysctls that moved. sched_migration_cost_ns left procfs for
 * debugfs in Linux 5.13. */
static const struct {
	const char *name, *alt;
} relocated[] = {
	{"kernel.sched_migration_cost_ns", "/sys/kernel/debug/sched/migration_cost_ns"},
	{"kernel.sched_min_granularity_ns", "/sys/kernel/debug/sched/min_granularity_ns"},
	{"kernel.sched_wakeup_granularity_ns", "/sys/kernel/debug/sched/wakeup_granularity_ns"},
	{"kernel.sched_latency_ns", "/sys/kernel/debug/sched/latency_ns"},
	{"kernel.sched_nr_migrate", "/sys/kernel/debug/sched/nr_migrate"},
};

static cJSON *tuning_json(struct ctx *c)
{
	cJSON *t = cJSON_CreateObject(), *s = cJSON_CreateArray();
	int i;
	size_t k;

	if (c->t.governor.s) {
		cJSON *g = cJSON_CreateObject();

		cJSON_AddStringToObject(g, "value", c->t.governor.s);
		cJSON_AddItemToObject(g, "origin", origin_json(&c->t.governor.o));
		cJSON_AddItemToObject(t, "cpu_governor", g);
	} else {
		cJSON_AddNullToObject(t, "cpu_governor");
	}
	for (i = 0; i < c->t.sysctl.n; i++) {
		const struct renv *e = &c->t.sysctl.v[i];
		cJSON *o, *paths;
		char *p;

		if (!e->val)
			continue;
		o = cJSON_CreateObject();
		paths = cJSON_CreateArray();
		cJSON_AddStringToObject(o, "name", e->name);
		cJSON_AddStringToObject(o, "value", e->val);
		p = npl_arena_printf(c->a, "/proc/sys/%s", e->name);
		for (char *q = p + 10; *q; q++)
			if (*q == '.')
				*q = '/';
		cJSON_AddItemToArray(paths, cJSON_CreateString(p));
		for (k = 0; k < NPL_ARRAY_SIZE(relocated); k++)
			if (!strcmp(relocated[k].name, e->name))
				cJSON_AddItemToArray(paths, cJSON_CreateString(relocated[k].alt));
		cJSON_AddItemToObject(o, "paths", paths);
		cJSON_AddItemToObject(o, "origin", origin_json(&e->o));
		cJSON_AddItemToArray(s, o);
	}
	cJSON_AddItemToObject(t, "sysctl", s);
	return t;
}

static cJSON *launch_json(struct ctx *c, int prog)
{
	const char *argv[64];
	int i, n = c->t.launch[prog].n;

	if (n == 0) {
		static const char *const what[] = {"server", "router", "bench"};

		c->rc = npl_error(c->d, NULL, "no launch command for the %s (launch.%s in the defaults)",
				  what[prog], what[prog]);
		return cJSON_CreateArray();
	}
	if (n > 64)
		n = 64;
	for (i = 0; i < n; i++)
		argv[i] = lit(c, c->t.launch[prog].argv[i].s);
	return strings_json(argv, n);
}

/* The --speculative-* flags from a role's speculative block; emit limits them to some fields. */
static void put_spec(struct ctx *c, struct launch *l, const struct spec_state *st)
{
	unsigned emit = st->emit ? st->emit : ~0u;

	if (!st->on)
		return;
	if ((emit & NPL_SPEC_ALGORITHM) && !st->algorithm.s) {
		c->rc = npl_error(c->d, &st->o.loc, "the speculative block needs 'algorithm'");
		return;
	}
	if ((emit & (NPL_SPEC_STEPS | NPL_SPEC_TOPK | NPL_SPEC_DRAFT_TOKENS)) &&
	    (!st->steps.set || !st->topk.set)) {
		c->rc = npl_error(c->d, &st->o.loc, "the speculative block needs 'steps' and 'topk'");
		return;
	}
	if (emit & NPL_SPEC_ALGORITHM)
		put_flag(c, l, "speculative-algorithm", st->algorithm.o, 1, lit(c, st->algorithm.s));
	if ((emit & NPL_SPEC_DRAFT_MODEL) && st->draft_model.set && st->draft_model.v)
		put_flag(c, l, "speculative-draft-model-path",
			 from_site(NPL_SITE_DRAFT_MODEL_PATH, "rule speculative: the block's draft_model"), 1,
			 ref(c, NPL_SITE_DRAFT_MODEL_PATH, -1, 0));
	if (emit & NPL_SPEC_STEPS)
		put_flag(c, l, "speculative-num-steps", st->steps.o, 1, num(c, st->steps.v));
	if (emit & NPL_SPEC_TOPK)
		put_flag(c, l, "speculative-eagle-topk", st->topk.o, 1, num(c, st->topk.v));
	if (emit & NPL_SPEC_DRAFT_TOKENS) {
		if (st->tokens.set) {
			put_flag(c, l, "speculative-num-draft-tokens", st->tokens.o, 1, num(c, st->tokens.v));
		} else if (st->topk.v == 1) {
			put_flag(c, l, "speculative-num-draft-tokens",
				 from_rule("draft-tokens", "steps + 1 when topk is 1"), 1,
				 num(c, st->steps.v + 1));
		} else {
			c->rc = npl_error(c->d, &st->o.loc, "the speculative block needs 'draft_tokens' when topk is not 1");
		}
	}
	if ((emit & NPL_SPEC_DRAFT_QUANTIZATION) && st->draft_quant.s)
		put_flag(c, l, "speculative-draft-model-quantization", st->draft_quant.o, 1,
			 lit(c, st->draft_quant.s));
}

/* Every site value a piece of the plan refers to, with the highest index. */
struct needs {
	int count[NPL_SITE_COUNT];
	int url[NPL_SITE_COUNT];
};

static int need_seg(void *p, const struct npl_pval_seg *seg)
{
	struct needs *n = p;

	if (seg->key >= 0) {
		int c = seg->index < 0 ? 1 : seg->index + 1;

		if (c > n->count[seg->key])
			n->count[seg->key] = c;
		if (seg->url)
			n->url[seg->key] = 1;
	}
	return 0;
}

static void scan_needs(const cJSON *j, struct needs *n)
{
	const cJSON *it;

	if (cJSON_IsString(j)) {
		npl_pval_walk(j->valuestring, need_seg, n);
		return;
	}
	cJSON_ArrayForEach(it, j)
		scan_needs(it, n);
}

static cJSON *needs_json(const struct needs *n)
{
	cJSON *a = cJSON_CreateArray();
	int k;

	for (k = 0; k < NPL_SITE_COUNT; k++) {
		cJSON *o;

		if (!n->count[k])
			continue;
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "key", npl_site_key_name(k));
		cJSON_AddStringToObject(o, "var", npl_site_var(k));
		cJSON_AddBoolToObject(o, "list", npl_site_is_list(k));
		cJSON_AddNumberToObject(o, "count", n->count[k]);
		if (npl_site_is_list(k))
			cJSON_AddStringToObject(o, "hosts_var", npl_site_host_var(k));
		cJSON_AddBoolToObject(o, "url", n->url[k]);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* The value of a merged data flag as a number, or 0 when not set. */
static int flag_int(const struct merged *m, const char *name, const struct origin **o)
{
	for (int i = 0; i < m->flags.n; i++)
		if (!m->flags.v[i].dead && !strcmp(m->flags.v[i].name, name) && m->flags.v[i].nvals == 1) {
			if (o)
				*o = &m->flags.v[i].o;
			return npl_parse_uint(m->flags.v[i].vals[0]);
		}
	return 0;
}

/* Context and expert parallelism against tp-size (x pp-size); dp-size is engine.c's check. */
static void check_parallel(struct ctx *c, const struct shape *sh, const struct merged *m, int tp, int pp)
{
	static const struct {
		const char *flag, *what;
		int whole;   /* divides tp x pp, not tp */
	} rules[] = {
		{"attn-cp-size", "context parallel", 0},
		{"ep-size", "expert parallel", 1},
	};
	size_t i;

	for (i = 0; i < NPL_ARRAY_SIZE(rules); i++) {
		const struct origin *o = NULL;
		int v = flag_int(m, rules[i].flag, &o), of = rules[i].whole ? tp * pp : tp;

		if (v > 0 && of % v)
			c->rc = npl_error(c->d, o ? &o->loc : NULL, "%s %d (%s) does not divide %s %d of a %s instance (%d dies)",
					  rules[i].flag, v, rules[i].what,
					  rules[i].whole ? "tp-size x pp-size" : "tp-size", of,
					  role_names[sh->role], sh->dies);
	}
}

/* What the scripts need for a role's environment: the join helper, a block before sourcing. */
static void mark_env(cJSON *role, const struct merged *m)
{
	int i, join = 0, before = 0;

	for (i = 0; i < m->env.n; i++)
		if (m->env.v[i].val) {
			join |= m->env.v[i].op != NPL_ENV_SET;
			before |= m->env.v[i].before_source;
		}
	if (join)
		cJSON_AddTrueToObject(role, "env_join");
	if (before)
		cJSON_AddTrueToObject(role, "env_before_source");
}

/* The nodes of a server role: per node its rule flags, data flags and env. */
static cJSON *server_role(struct ctx *c, const struct shape *sh)
{
	struct merged m;
	struct spec_state spec;
	struct top *t = &c->t;
	cJSON *role = cJSON_CreateObject(), *nodes = cJSON_CreateArray(), *eps = cJSON_CreateArray();
	const char *tp, *tp_why;
	int nnodes = sh->instances * sh->nodes_per_instance, n, multi = sh->nodes_per_instance > 1;
	int port = sh->role == ROLE_PD_MIXED ? port_or(c, &t->port_entry, "entry")
		 : sh->role == ROLE_PREFILL ? port_or(c, &t->port_prefill, "prefill")
					    : port_or(c, &t->port_decode, "decode");
	int ifname = !t->socket_ifname.set || t->socket_ifname.v;
	int pp = 1, tpv;

	merge_role(c, sh->role, &m);
	merge_spec(c, sh->role, &spec);
	/* tp-size: the instance's dies over its pipeline stages */
	for (int i = 0; i < m.flags.n; i++)
		if (!m.flags.v[i].dead && !strcmp(m.flags.v[i].name, "pp-size") && m.flags.v[i].nvals == 1) {
			pp = npl_parse_uint(m.flags.v[i].vals[0]);
			if (pp <= 0 || sh->dies % pp) {
				c->rc = npl_error(c->d, &m.flags.v[i].o.loc, "pp-size %s does not divide the %d dies of a %s instance",
						  m.flags.v[i].vals[0], sh->dies, role_names[sh->role]);
				pp = 1;
			}
		}
	tpv = sh->dies / pp;
	tp = num(c, tpv);
	if (sh->topo && sh->topo->dies.set)
		tp_why = npl_arena_printf(c->a, "%d dies (topology)", sh->dies);
	else
		tp_why = npl_arena_printf(c->a, "%d dies per card x %d cards", c->hw->dies_per_card.v,
					  sh->cards);
	if (pp > 1)
		tp_why = npl_arena_printf(c->a, "%s / pp-size %d", tp_why, pp);
	check_parallel(c, sh, &m, tpv, pp);
	for (int i = 0; i < m.env.n; i++)
		if (m.env.v[i].val && !strcmp(m.env.v[i].name, "ASCEND_MF_STORE_URL") &&
		    sh->role != ROLE_PD_MIXED)
			c->rc = npl_error(c->d, &m.env.v[i].o.loc, "ASCEND_MF_STORE_URL of %s is derived by the rule mf-store (the first prefill node, ports.mf_store): remove it from the recipe",
					  role_names[sh->role]);
	cJSON_AddStringToObject(role, "role", role_names[sh->role]);
	cJSON_AddStringToObject(role, "script", npl_arena_printf(c->a, "%s.sh", role_names[sh->role]));
	cJSON_AddStringToObject(role, "program", "server");
	cJSON_AddNumberToObject(role, "instances", sh->instances);
	cJSON_AddNumberToObject(role, "cards_per_instance", sh->cards);
	cJSON_AddNumberToObject(role, "nodes_per_instance", sh->nodes_per_instance);
	cJSON_AddNumberToObject(role, "dies_per_instance", sh->dies);
	cJSON_AddNumberToObject(role, "tp_size", tpv);
	cJSON_AddNumberToObject(role, "pp_size", pp);
	if (sh->site_key >= 0)
		cJSON_AddStringToObject(role, "node_list", npl_site_key_name(sh->site_key));
	else
		cJSON_AddNullToObject(role, "node_list");
	cJSON_AddItemToObject(role, "tuning", tuning_json(c));
	cJSON_AddItemToObject(role, "unset", names_json(m.unset.v, m.unset.n, "name"));
	cJSON_AddItemToObject(role, "source", names_json(m.source.v, m.source.n, "path"));

	for (n = 0; n < nnodes; n++) {
		struct launch l;
		int inst = n / sh->nodes_per_instance, rank = n % sh->nodes_per_instance;
		int first = node_of_rank(sh, inst, 0), at = node_of_rank(sh, inst, rank);
		int slot = slot_of(sh, inst), iport = port + slot;
		cJSON *node = cJSON_CreateObject();
		const char *host;

		memset(&l, 0, sizeof(l));
		put_flag(c, &l, "model-path", from_site(NPL_SITE_MODEL_PATH, "rule model-path"), 1,
			 ref(c, NPL_SITE_MODEL_PATH, -1, 0));
		if (sh->role != ROLE_PD_MIXED)
			put_flag(c, &l, "disaggregation-mode", from_rule("disaggregation", "the role"), 1,
				 role_names[sh->role]);
		if (sh->site_key >= 0) {
			host = ref(c, sh->site_key, at, 0);
			put_flag(c, &l, "host", from_site(sh->site_key, "rule host: this node's address"), 1, host);
		} else {
			host = NULL;
			if (!t->entry_host.s)
				c->rc = npl_error(c->d, NULL, "no entry_host in the recipe database");
			else
				put_flag(c, &l, "host", t->entry_host.o, 1, lit(c, t->entry_host.s));
		}
		if (slot)
			put_flag(c, &l, "port", from_rule("ports", npl_arena_printf(c->a, "the role's port + %d: instance slot %d of a shared node", slot, slot)),
				 1, num(c, iport));
		else
			put_flag(c, &l, "port", sh->role == ROLE_PD_MIXED ? t->port_entry.o
						 : sh->role == ROLE_PREFILL ? t->port_prefill.o : t->port_decode.o,
				 1, num(c, port));
		if (sh->role == ROLE_PREFILL)
			put_flag(c, &l, "disaggregation-bootstrap-port",
				 from_rule("bootstrap-port", "ports.bootstrap + the prefill instance"), 1,
				 num(c, port_or(c, &t->port_bootstrap, "bootstrap") + inst));
		if (multi || has_explicit(&m, "nnodes"))
			put_flag(c, &l, "nnodes",
				 from_rule("nodes", npl_arena_printf(c->a, "%d cards / %d cards per node",
								    sh->cards, c->hw->cards_per_node.v)),
				 1, num(c, sh->nodes_per_instance));
		if (multi || has_explicit(&m, "dist-init-addr")) {
			struct npl_buf b = NPL_BUF_INIT;

			if (sh->site_key >= 0)
				npl_pval_ref(&b, sh->site_key, first, 1);
			else
				npl_pval_lit(&b, t->entry_host.s ? t->entry_host.s : "127.0.0.1");
			npl_buf_printf(&b, ":%d", port_or(c, &t->port_dist, "dist_init"));
			put_flag(c, &l, "dist-init-addr",
				 from_rule("dist-init-addr", "the instance's first node"), 1,
				 npl_arena_strdup(c->a, npl_buf_str(&b)));
			npl_buf_release(&b);
		}
		if (multi || has_explicit(&m, "node-rank"))
			put_flag(c, &l, "node-rank", from_rule("nodes", "this node's rank in its instance"), 1,
				 num(c, rank));
		put_flag(c, &l, "tp-size", from_rule("tp-size", tp_why), 1, tp);
		if (sh->topo && sh->topo->first_card.set)
			put_flag(c, &l, "base-gpu-id",
				 from_rule("placement", npl_arena_printf(c->a, "first card %d x %d dies per card",
									  sh->topo->first_card.v,
									  c->hw->dies_per_card.v)),
				 1, num(c, sh->topo->first_card.v * c->hw->dies_per_card.v));
		put_data_flags(c, sh->role, &l, &m, tp, tp_why);
		put_spec(c, &l, &spec);

		/* environment: the layers, then the rules; a layer's value of a
		 * variable the socket-ifname rule sets is honoured */
		for (int i = 0; i < m.env.n; i++)
			if (m.env.v[i].val) {
				put_env(c, &l, m.env.v[i].name, m.env.v[i].val, m.env.v[i].o);
				l.env.v[l.env.n - 1].op = m.env.v[i].op;
				l.env.v[l.env.n - 1].sep = m.env.v[i].sep;
				l.env.v[l.env.n - 1].before_source = m.env.v[i].before_source;
			}
		if (ifname)
			for (int i = 0; i < t->nifname_env; i++) {
				int j;

				for (j = 0; j < l.env.n; j++)
					if (!strcmp(l.env.v[j].name, t->ifname_env[i].s))
						break;
				if (j < l.env.n) {
					l.env.v[j].o.why = "the recipe's own value: the socket-ifname rule yields to it";
					continue;
				}
				put_env(c, &l, t->ifname_env[i].s, ref(c, NPL_SITE_IFNAME, -1, 0),
					from_site(NPL_SITE_IFNAME, "rule socket-ifname"));
			}
		if (sh->per_node > 1) {
			/* the dies this instance owns on its shared node */
			struct npl_buf b = NPL_BUF_INIT;
			int base = slot * sh->dies + (sh->topo && sh->topo->first_card.set
						      ? sh->topo->first_card.v * c->hw->dies_per_card.v : 0);

			for (int d = 0; d < sh->dies; d++)
				npl_buf_printf(&b, "%s%d", d ? "," : "", base + d);
			put_env(c, &l, "ASCEND_RT_VISIBLE_DEVICES", npl_arena_strdup(c->a, npl_buf_str(&b)),
				from_rule("devices", npl_arena_printf(c->a, "instance slot %d of %d on its node: %d dies each",
								      slot, sh->per_node, sh->dies)));
			npl_buf_release(&b);
		}
		if (sh->role != ROLE_PD_MIXED) {
			struct npl_buf b = NPL_BUF_INIT;

			npl_buf_puts(&b, "tcp://");
			npl_pval_ref(&b, NPL_SITE_PREFILL_IP, 0, 1);
			npl_buf_printf(&b, ":%d", port_or(c, &t->port_store, "mf_store"));
			put_env(c, &l, "ASCEND_MF_STORE_URL", npl_arena_strdup(c->a, npl_buf_str(&b)),
				from_rule("mf-store", "the first prefill node, ports.mf_store"));
			npl_buf_release(&b);
		}
		apply_overrides(c, sh->role, &l, tp);

		cJSON_AddNumberToObject(node, "index", at);
		cJSON_AddNumberToObject(node, "instance", inst);
		cJSON_AddNumberToObject(node, "rank", rank);
		if (sh->per_node > 1)
			cJSON_AddNumberToObject(node, "slot", slot);
		if (host)
			cJSON_AddStringToObject(node, "address", host);
		else
			cJSON_AddNullToObject(node, "address");
		cJSON_AddItemToObject(node, "env", env_json(&l));
		cJSON_AddItemToObject(node, "launch", launch_json(c, NPL_PROG_SERVER));
		cJSON_AddItemToObject(node, "flags", flags_json(&l));
		cJSON_AddItemToArray(nodes, node);

		if (rank == 0) {
			struct npl_buf b = NPL_BUF_INIT;
			cJSON *ep = cJSON_CreateObject();

			const char *own = own_host(&l);

			npl_buf_puts(&b, "http://");
			if (own && strchr(own, ':') && own[0] != '[') {
				npl_buf_puts(&b, "[");
				npl_pval_lit(&b, own);
				npl_buf_puts(&b, "]");
			} else if (own)
				npl_pval_lit(&b, own);
			else if (sh->site_key >= 0)
				npl_pval_ref(&b, sh->site_key, at, 1);
			else
				npl_pval_lit(&b, t->entry_host.s ? t->entry_host.s : "127.0.0.1");
			npl_buf_printf(&b, ":%d", iport);
			cJSON_AddNumberToObject(ep, "instance", inst);
			cJSON_AddStringToObject(ep, "url", npl_buf_str(&b));
			if (sh->role == ROLE_PREFILL)
				cJSON_AddNumberToObject(ep, "bootstrap_port",
							port_or(c, &t->port_bootstrap, "bootstrap") + inst);
			cJSON_AddItemToArray(eps, ep);
			npl_buf_release(&b);
		}
	}
	cJSON_AddItemToObject(role, "nodes", nodes);
	cJSON_AddItemToObject(role, "endpoints", eps);
	mark_env(role, &m);
	if (sh->per_node > 1)
		cJSON_AddTrueToObject(role, "shared_nodes");
	cJSON_AddNumberToObject(role, "nodes_count", nodes_of(sh));
	return role;
}

static cJSON *client_role(struct ctx *c, enum role r, struct launch *l, const struct merged *m)
{
	cJSON *role = cJSON_CreateObject(), *nodes = cJSON_CreateArray(), *node = cJSON_CreateObject();

	cJSON_AddStringToObject(role, "role", role_names[r]);
	cJSON_AddStringToObject(role, "script", npl_arena_printf(c->a, "%s.sh", role_names[r]));
	cJSON_AddStringToObject(role, "program", role_names[r]);
	cJSON_AddNullToObject(role, "node_list");
	cJSON_AddItemToObject(role, "unset", names_json(m->unset.v, m->unset.n, "name"));
	cJSON_AddItemToObject(role, "source", cJSON_CreateArray());
	for (int i = 0; i < m->env.n; i++)
		if (m->env.v[i].val) {
			put_env(c, l, m->env.v[i].name, m->env.v[i].val, m->env.v[i].o);
			l->env.v[l->env.n - 1].op = m->env.v[i].op;
			l->env.v[l->env.n - 1].sep = m->env.v[i].sep;
		}
	apply_overrides(c, r, l, NULL);
	cJSON_AddNumberToObject(node, "index", 0);
	cJSON_AddNullToObject(node, "address");
	cJSON_AddItemToObject(node, "env", env_json(l));
	cJSON_AddItemToObject(node, "launch",
			      launch_json(c, r == ROLE_ROUTER ? NPL_PROG_ROUTER : NPL_PROG_BENCH));
	cJSON_AddItemToObject(node, "flags", flags_json(l));
	cJSON_AddItemToArray(nodes, node);
	cJSON_AddItemToObject(role, "nodes", nodes);
	mark_env(role, m);
	return role;
}

static cJSON *router_role(struct ctx *c, const struct shape *pre, const struct shape *dec)
{
	struct merged m;
	struct launch l;
	struct top *t = &c->t;
	struct origin o = from_rule("router", "every prefill and decode instance");
	cJSON *role;
	int i;

	merge_role(c, ROLE_ROUTER, &m);
	memset(&l, 0, sizeof(l));
	put_flag(c, &l, "pd-disaggregation", from_rule("router", "a pd-disagg recipe"), 0);
	for (i = 0; i < pre->instances; i++) {
		struct npl_buf b = NPL_BUF_INIT;

		npl_buf_puts(&b, "http://");
		npl_pval_ref(&b, NPL_SITE_PREFILL_IP, node_of_rank(pre, i, 0), 1);
		npl_buf_printf(&b, ":%d", port_or(c, &t->port_prefill, "prefill") + slot_of(pre, i));
		put_flag(c, &l, "prefill", o, 2, npl_arena_strdup(c->a, npl_buf_str(&b)),
			 num(c, port_or(c, &t->port_bootstrap, "bootstrap") + i));
		npl_buf_release(&b);
	}
	for (i = 0; i < dec->instances; i++) {
		struct npl_buf b = NPL_BUF_INIT;

		npl_buf_puts(&b, "http://");
		npl_pval_ref(&b, NPL_SITE_DECODE_IP, node_of_rank(dec, i, 0), 1);
		npl_buf_printf(&b, ":%d", port_or(c, &t->port_decode, "decode") + slot_of(dec, i));
		put_flag(c, &l, "decode", o, 1, npl_arena_strdup(c->a, npl_buf_str(&b)));
		npl_buf_release(&b);
	}
	put_flag(c, &l, "host", t->entry_host.o, 1, lit(c, t->entry_host.s ? t->entry_host.s : ""));
	put_flag(c, &l, "port", t->port_entry.o, 1, num(c, port_or(c, &t->port_entry, "entry")));
	put_data_flags(c, ROLE_ROUTER, &l, &m, NULL, NULL);
	role = client_role(c, ROLE_ROUTER, &l, &m);
	{
		cJSON *eps = cJSON_CreateArray(), *ep = cJSON_CreateObject();
		struct npl_buf b = NPL_BUF_INIT;

		npl_buf_puts(&b, "http://");
		npl_pval_lit(&b, t->entry_host.s ? t->entry_host.s : "");
		npl_buf_printf(&b, ":%d", t->port_entry.v);
		cJSON_AddNumberToObject(ep, "instance", 0);
		cJSON_AddStringToObject(ep, "url", npl_buf_str(&b));
		cJSON_AddItemToArray(eps, ep);
		cJSON_AddItemToObject(role, "endpoints", eps);
		npl_buf_release(&b);
	}
	return role;
}

static int need_bench(struct ctx *c, const struct oint *v, const char *key, const char *dataset)
{
	if (!v->set) {
		c->rc = npl_error(c->d, &c->R->loc, "the %s benchmark needs bench.%s", dataset, key);
		return 0;
	}
	return v->v;
}

static cJSON *bench_role(struct ctx *c)
{
	struct merged m;
	struct launch l;
	struct top *t = &c->t;
	const char *ds = t->bench_dataset.s;
	int in, out, prompts;

	merge_role(c, ROLE_BENCH, &m);
	memset(&l, 0, sizeof(l));
	if (!ds) {
		c->rc = npl_error(c->d, &c->R->loc, "the recipe needs bench.dataset");
		ds = "random";
	}
	put_flag(c, &l, "dataset-name", t->bench_dataset.o, 1, ds);
	put_flag(c, &l, "backend", from_rule("bench-backend", "sglang-oai-chat for images, else sglang"),
		 1, !strcmp(ds, "image") ? "sglang-oai-chat" : "sglang");
	put_flag(c, &l, "host", t->entry_host.o, 1, lit(c, t->entry_host.s ? t->entry_host.s : ""));
	put_flag(c, &l, "port", t->port_entry.o, 1, num(c, port_or(c, &t->port_entry, "entry")));
	put_flag(c, &l, "max-concurrency", t->bench_concurrency.o, 1,
		 num(c, need_bench(c, &t->bench_concurrency, "concurrency", ds)));
	prompts = need_bench(c, &t->bench_prompts, "prompts", ds);
	put_flag(c, &l, "num-prompts", t->bench_prompts.o, 1, num(c, prompts));
	in = need_bench(c, &t->bench_input, "input", ds);
	out = need_bench(c, &t->bench_output, "output", ds);
	if (!strcmp(ds, "generated-shared-prefix")) {
		int pct = need_bench(c, &t->bench_prefix, "prefix", ds);
		int groups = t->bench_groups.set ? t->bench_groups.v : 1;
		long long sys = ((long long)in * pct + 50) / 100;
		long long q = ((long long)in * (100 - pct) + 50) / 100;
		struct origin sys_o = from_rule("bench-gsp", npl_arena_printf(c->a, "round(%d x %d%%)", in, pct));
		struct origin q_o = from_rule("bench-gsp", npl_arena_printf(c->a, "round(%d x %d%%)", in, 100 - pct));

		if (prompts % groups)
			c->rc = npl_error(c->d, &t->bench_groups.o.loc, "bench.prompts (%d) must divide into bench.groups (%d)",
					  prompts, groups);
		put_flag(c, &l, "gsp-num-groups",
			 t->bench_groups.set ? t->bench_groups.o : from_rule("bench-gsp", "one prefix group"), 1,
			 num(c, groups));
		put_flag(c, &l, "gsp-prompts-per-group", from_rule("bench-gsp", "prompts / groups"), 1,
			 num(c, prompts / groups));
		/* what the page benchmarks wins over the formula */
		if (t->bench_sys_len.set) {
			sys = t->bench_sys_len.v;
			sys_o = t->bench_sys_len.o;
		}
		if (t->bench_q_len.set) {
			q = t->bench_q_len.v;
			q_o = t->bench_q_len.o;
		}
		put_flag(c, &l, "gsp-system-prompt-len", sys_o, 1, npl_arena_printf(c->a, "%lld", sys));
		put_flag(c, &l, "gsp-question-len", q_o, 1, npl_arena_printf(c->a, "%lld", q));
		put_flag(c, &l, "gsp-output-len", t->bench_output.o, 1, num(c, out));
	} else {
		if (!strcmp(ds, "image")) {
			if (!t->bench_resolution.s)
				c->rc = npl_error(c->d, &c->R->loc, "the image benchmark needs bench.resolution");
			put_flag(c, &l, "image-resolution", t->bench_resolution.o, 1,
				 lit(c, t->bench_resolution.s ? t->bench_resolution.s : ""));
			put_flag(c, &l, "image-count",
				 t->bench_images.set ? t->bench_images.o : from_rule("bench-image", "one image"), 1,
				 num(c, t->bench_images.set ? t->bench_images.v : 1));
		}
		put_flag(c, &l, "random-input-len", t->bench_input.o, 1, num(c, in));
		put_flag(c, &l, "random-output-len", t->bench_output.o, 1, num(c, out));
		put_flag(c, &l, "random-range-ratio", from_rule("bench-lengths", "fixed lengths"), 1, "1");
	}
	put_data_flags(c, ROLE_BENCH, &l, &m, NULL, NULL);
	return client_role(c, ROLE_BENCH, &l, &m);
}

/* The roles of the recipe and their sizes, from cards, hardware and topology. */
static int shapes(struct ctx *c, struct shape *sh, int *n)
{
	const struct npl_layer *R = c->R;
	int cpn = c->hw->cards_per_node.v, dies = c->hw->dies_per_card.v, i;

	*n = 0;
	if (R->mode == NPL_MODE_PD_MIXED) {
		const struct npl_topology *tm = &R->topo[NPL_TOPO_PD_MIXED];

		sh[0] = (struct shape){.role = ROLE_PD_MIXED, .instances = 1, .cards = R->cards,
				       .nodes_per_instance = 1, .dies = dies * R->cards, .per_node = 1,
				       .topo = tm, .site_key = -1};
		(*n)++;
	} else {
		for (i = 0; i < 2; i++)
			sh[i] = (struct shape){.role = i ? ROLE_DECODE : ROLE_PREFILL,
					       .instances = R->topo[i].instances.v, .cards = R->topo[i].cards.v,
					       .nodes_per_instance = 1, .dies = dies * R->topo[i].cards.v,
					       .per_node = R->topo[i].per_node.set ? R->topo[i].per_node.v : 1,
					       .topo = &R->topo[i],
					       .site_key = i ? NPL_SITE_DECODE_IP : NPL_SITE_PREFILL_IP};
		*n = 2;
	}
	for (i = 0; i < *n; i++) {
		if (sh[i].topo && sh[i].topo->dies.set)
			sh[i].dies = sh[i].topo->dies.v;
		if (sh[i].cards > cpn) {
			if (sh[i].cards % cpn)
				return npl_error(c->d, &R->cards_loc, "a %s instance of %d cards does not fill whole nodes of %d cards (%s)",
						 role_names[sh[i].role], sh[i].cards, cpn, c->hw->id);
			sh[i].nodes_per_instance = sh[i].cards / cpn;
			if (sh[i].per_node > 1)
				return npl_error(c->d, &sh[i].topo->per_node.loc, "%s instances of %d cards span nodes: they cannot share one",
						 role_names[sh[i].role], sh[i].cards);
		}
		if (sh[i].role == ROLE_PD_MIXED && sh[i].nodes_per_instance > 1)
			sh[i].site_key = NPL_SITE_NODE_IP;
	}
	return 0;
}

/* Site values that the recipe has no use for, or too many addresses. */
static void check_site(struct ctx *c, const struct shape *sh, int nsh)
{
	const struct npl_site *s = c->o->site;
	int want[NPL_SITE_COUNT] = {0}, i, k;

	if (!s)
		return;
	for (i = 0; i < nsh; i++)
		if (sh[i].site_key >= 0)
			want[sh[i].site_key] = nodes_of(&sh[i]);
	for (k = NPL_SITE_NODE_IP; k <= NPL_SITE_DECODE_IP; k++) {
		int have = s->key[k].n;

		if (!have || have == want[k])
			continue;
		if (!want[k]) {
			if (npl_site_unused(c->d, c->o->strict, (enum npl_site_key)k, npl_arena_printf(c->a, "recipe '%s'", c->R->id),
					    k == NPL_SITE_NODE_IP ? "its server runs on one node" :
					    "it is not a pd-disagg recipe"))
				c->rc = -1;
		} else
			c->rc = npl_error(c->d, NULL, "--%s: recipe '%s' needs %d address%s in rank order, got %d",
					  npl_site_key_name(k), c->R->id, want[k], want[k] == 1 ? "" : "es",
					  have);
	}
}

static cJSON *site_json(const struct npl_site *s)
{
	cJSON *o = cJSON_CreateObject();
	int k;

	if (!s)
		return o;
	for (k = 0; k < NPL_SITE_COUNT; k++) {
		if (!s->key[k].n)
			continue;
		if (npl_site_is_list(k))
			cJSON_AddItemToObject(o, npl_site_key_name(k), strings_json(s->key[k].v, s->key[k].n));
		else
			cJSON_AddStringToObject(o, npl_site_key_name(k), s->key[k].v[0]);
	}
	return o;
}

/* What preflight reads on a node, from the hardware profile: {driver_version, toolkit_version,
 * tool_path}, each a list of paths (the first that exists is read). */
static cJSON *strlist_json(const struct npl_str *v, int n)
{
	cJSON *a = cJSON_CreateArray();

	for (int i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(v[i].s));
	return a;
}

static cJSON *preflight_json(const struct npl_layer *hw)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddItemToObject(o, "driver_version", strlist_json(hw->pf_driver, hw->npf_driver));
	cJSON_AddItemToObject(o, "toolkit_version", strlist_json(hw->pf_toolkit, hw->npf_toolkit));
	cJSON_AddItemToObject(o, "tool_path", strlist_json(hw->pf_tools, hw->npf_tools));
	return o;
}

static cJSON *recipe_json(struct ctx *c)
{
	const struct npl_layer *R = c->R;
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "id", R->id);
	cJSON_AddStringToObject(o, "title", R->name);
	cJSON_AddStringToObject(o, "model", c->model->id);
	cJSON_AddStringToObject(o, "model_name", c->model->name);
	cJSON_AddStringToObject(o, "hardware", c->hw->id);
	cJSON_AddStringToObject(o, "hardware_name", c->hw->name);
	cJSON_AddNumberToObject(o, "dies_per_card", c->hw->dies_per_card.v);
	cJSON_AddNumberToObject(o, "cards_per_node", c->hw->cards_per_node.v);
	cJSON_AddItemToObject(o, "preflight", preflight_json(c->hw));
	cJSON_AddNumberToObject(o, "cards", R->cards);
	cJSON_AddStringToObject(o, "mode", npl_mode_name(R->mode));
	cJSON_AddStringToObject(o, "quantization", R->quantization);
	cJSON_AddStringToObject(o, "dataset", R->dataset);
	if (R->tpot_us >= 0) {
		cJSON_AddStringToObject(o, "tpot", R->tpot_text);
		cJSON_AddNumberToObject(o, "tpot_ms", (double)R->tpot_us / 1000.0);
	} else {
		cJSON_AddNullToObject(o, "tpot");
		cJSON_AddNullToObject(o, "tpot_ms");
	}
	if (R->ttft_us >= 0) {
		cJSON_AddStringToObject(o, "ttft", R->ttft_text);
		cJSON_AddNumberToObject(o, "ttft_ms", (double)R->ttft_us / 1000.0);
	} else {
		cJSON_AddNullToObject(o, "ttft");
		cJSON_AddNullToObject(o, "ttft_ms");
	}
	if (R->tier)
		cJSON_AddStringToObject(o, "tier", R->tier);
	if (R->notes)
		cJSON_AddStringToObject(o, "notes", R->notes);
	if (R->ndeviation || c->model->ndeviation) {
		/* the model's (slips its page repeats in every recipe), then the recipe's own */
		const struct npl_layer *from[2] = {c->model, R};
		cJSON *dv = cJSON_CreateArray();

		for (int l = 0; l < 2; l++)
			for (int i = 0; i < from[l]->ndeviation; i++) {
				const struct npl_env_set *e = &from[l]->deviation[i];
				cJSON *x = cJSON_CreateObject();
				char at[512];

				snprintf(at, sizeof(at), "%s:%d:%d", e->loc.file, e->loc.line, e->loc.col);
				cJSON_AddStringToObject(x, "what", e->name);
				cJSON_AddStringToObject(x, "why", e->value);
				cJSON_AddStringToObject(x, "at", at);
				cJSON_AddItemToArray(dv, x);
			}
		cJSON_AddItemToObject(o, "deviations", dv);
	}
	cJSON_AddStringToObject(o, "file", R->file);
	return o;
}

/* ---- containers (render --target k8s, rbg, docker) ---------------------------- */

static const char *site_value(struct ctx *c, enum npl_site_key k)
{
	const struct npl_site *s = c->o->site;

	return s && s->key[k].n ? s->key[k].v[0] : NULL;
}

static cJSON *valued(cJSON *value, const struct origin *o)
{
	cJSON *j = cJSON_CreateObject();

	cJSON_AddItemToObject(j, "value", value);
	cJSON_AddItemToObject(j, "origin", origin_json(o));
	return j;
}

/* A string of the container block: the site value, else the hardware profile's, else an error
 * naming both (need) or nothing. */
static void container_str(struct ctx *c, cJSON *ct, const char *name, enum npl_site_key k,
			  const struct npl_str *hw, int need)
{
	const char *v = site_value(c, k);
	struct origin o;

	if (v) {
		o = from_site(k, NULL);
	} else if (hw->s) {
		v = hw->s;
		o = from_layer(c->hw, hw->loc);
	} else {
		if (need)
			c->rc = npl_error(c->d, NULL, "render --target %s needs --%s: hardware profile '%s' has no container.%s",
					  c->o->target->name, npl_site_key_name(k), c->hw->id, name);
		return;
	}
	cJSON_AddItemToObject(ct, name, valued(cJSON_CreateString(v), &o));
}

/* --registry R: the image from R instead of its own registry (a first component with a '.' or
 * a ':', or localhost, names one; docker.io's images have none). */
static void apply_registry(struct ctx *c, cJSON *ct, const char *name)
{
	const char *reg = site_value(c, NPL_SITE_REGISTRY);
	cJSON *it = cJSON_GetObjectItemCaseSensitive(ct, name);
	const char *img = npl_json_str(it, "value"), *slash;
	struct origin o;
	char *v;

	if (!reg || !img)
		return;
	slash = strchr(img, '/');
	if (slash && (memchr(img, '.', (size_t)(slash - img)) || memchr(img, ':', (size_t)(slash - img)) ||
		      !strncmp(img, "localhost/", 10)))
		img = slash + 1;
	v = npl_arena_printf(c->a, "%s/%s", reg, img);
	o = from_rule("registry", npl_arena_printf(c->a, "--registry %s before the image's path", reg));
	cJSON_ReplaceItemInObjectCaseSensitive(ct, name, valued(cJSON_CreateString(v), &o));
}

/* The container block: how a container runs this plan on the recipe's hardware. */
static cJSON *container_json(struct ctx *c)
{
	const struct npl_container *hw = &c->hw->container;
	const struct npl_site *s = c->o->site;
	cJSON *ct = cJSON_CreateObject(), *v;
	struct origin o = from_layer(c->hw, hw->present ? hw->loc : c->hw->loc);
	int i;

	container_str(c, ct, "image", NPL_SITE_IMAGE, &hw->image, 1);
	if (site_value(c, NPL_SITE_ROUTER_IMAGE)) {
		struct npl_str none = {NULL, {NULL, 0, 0}};

		container_str(c, ct, "router_image", NPL_SITE_ROUTER_IMAGE, &none, 0);
	} else if (cJSON_GetObjectItemCaseSensitive(ct, "image")) {
		cJSON_AddItemToObject(ct, "router_image",
				      cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(ct, "image"), 1));
	}
	apply_registry(c, ct, "image");
	apply_registry(c, ct, "router_image");
	container_str(c, ct, "npu_resource", NPL_SITE_NPU_RESOURCE, &hw->npu_resource, 1);
	container_str(c, ct, "npu_unit", NPL_SITE_NPU_UNIT, &hw->npu_unit, 1);
	container_str(c, ct, "shm_size", NPL_SITE_SHM_SIZE, &hw->shm_size, 0);
	if (site_value(c, NPL_SITE_PRIVILEGED)) {
		struct origin so = from_site(NPL_SITE_PRIVILEGED, NULL);

		cJSON_AddItemToObject(ct, "privileged",
				      valued(cJSON_CreateBool(!strcmp(site_value(c, NPL_SITE_PRIVILEGED), "true")), &so));
	} else {
		struct origin po = hw->privileged.set ? from_layer(c->hw, hw->privileged.loc)
						      : from_rule("privileged", "the hardware profile does not ask for it");

		cJSON_AddItemToObject(ct, "privileged", valued(cJSON_CreateBool(hw->privileged.set && hw->privileged.v), &po));
	}
	/* node labels: the site's replace the profile's whole */
	v = cJSON_CreateObject();
	if (s && s->key[NPL_SITE_NODE_SELECTOR].n) {
		struct origin so = from_site(NPL_SITE_NODE_SELECTOR, NULL);

		for (i = 0; i < s->key[NPL_SITE_NODE_SELECTOR].n; i++) {
			const char *kv = s->key[NPL_SITE_NODE_SELECTOR].v[i], *eq = strchr(kv, '=');

			cJSON_AddStringToObject(v, npl_arena_strndup(c->a, kv, (size_t)(eq - kv)), eq + 1);
		}
		cJSON_AddItemToObject(ct, "node_selector", valued(v, &so));
	} else {
		for (i = 0; i < hw->nnode_selector; i++)
			cJSON_AddStringToObject(v, hw->node_selector[i].name, hw->node_selector[i].value);
		cJSON_AddItemToObject(ct, "node_selector", valued(v, &o));
	}
	v = cJSON_CreateArray();
	for (i = 0; i < hw->ndevices; i++)
		cJSON_AddItemToArray(v, cJSON_CreateString(hw->devices[i].s));
	cJSON_AddItemToObject(ct, "devices", valued(v, &o));
	v = cJSON_CreateArray();
	for (i = 0; i < hw->nmounts; i++) {
		cJSON *m = cJSON_CreateObject();

		cJSON_AddStringToObject(m, "path", hw->mounts[i].name);
		cJSON_AddStringToObject(m, "kind", hw->mounts[i].value);
		cJSON_AddItemToArray(v, m);
	}
	cJSON_AddItemToObject(ct, "mounts", valued(v, &o));
	return ct;
}

cJSON *npl_resolve(const struct npl_db *db, const struct npl_layer *R,
		   const struct npl_resolve_opts *o, struct npl_diag *d)
{
	static const struct npl_resolve_opts none = {0};
	struct ctx *c = calloc(1, sizeof(*c));
	struct npl_arena arena;
	struct shape sh[2];
	struct needs all = {{0}, {0}};
	cJSON *plan = NULL, *roles, *it;
	int nsh, i;

	if (!c)
		npl_oom();
	npl_arena_init(&arena);
	c->a = &arena;
	c->d = d;
	c->db = db;
	c->R = R;
	c->hw = R->hardware;
	c->model = R->model;
	c->o = o ? o : &none;
	if (!db->defaults || !c->hw || !c->model) {
		npl_error(d, &R->loc, "recipe '%s' is not linked to its model and hardware", R->id);
		goto out;
	}
	c->layers[0] = db->defaults;
	c->layers[1] = c->hw;
	c->layers[2] = c->model;
	c->layers[3] = R;
	c->nlayers = 4;
	for (i = 0; i < 4; i++)
		if (c->layers[i]->invalid) {
			npl_error(d, &R->loc, "recipe '%s' cannot be resolved: its %s%s%s has errors",
				  R->id, npl_layer_kind_name(c->layers[i]->kind), i < 3 ? " " : "",
				  i < 3 ? c->layers[i]->id : "");
			goto out;
		}
	if (c->hw->dies_per_card.v <= 0 || c->hw->cards_per_node.v <= 0 || R->cards <= 0) {
		npl_error(d, &R->loc, "recipe '%s' cannot be resolved: no cards, dies per card or cards per node",
			  R->id);
		goto out;
	}
	check_env_names(c);
	merge_top(c);
	if (c->o->target && c->o->target->entry_host) {
		c->t.entry_host.s = c->o->target->entry_host;
		c->t.entry_host.o = from_rule("entry-host", c->o->target->entry_why);
	}
	if (shapes(c, sh, &nsh))
		goto out;
	check_site(c, sh, nsh);

	plan = cJSON_CreateObject();
	cJSON_AddStringToObject(plan, "format", NPL_PLAN_FORMAT);
	cJSON_AddItemToObject(plan, "recipe", recipe_json(c));
	cJSON_AddItemToObject(plan, "site", site_json(c->o->site));
	if (c->o->target) {
		cJSON_AddStringToObject(plan, "target", c->o->target->name);
		if (c->o->target->container)
			cJSON_AddItemToObject(plan, "container", container_json(c));
	}
	roles = cJSON_CreateArray();
	for (i = 0; i < nsh; i++)
		cJSON_AddItemToArray(roles, server_role(c, &sh[i]));
	if (R->mode == NPL_MODE_PD_DISAGG)
		cJSON_AddItemToArray(roles, router_role(c, &sh[0], &sh[1]));
	cJSON_AddItemToArray(roles, bench_role(c));
	cJSON_ArrayForEach(it, roles) {
		struct needs n = {{0}, {0}};
		const cJSON *list = cJSON_GetObjectItemCaseSensitive(it, "node_list");

		scan_needs(cJSON_GetObjectItemCaseSensitive(it, "nodes"), &n);
		if (cJSON_IsString(list)) {
			int k = npl_site_key_from_name(list->valuestring);

			n.count[k] = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(it, "nodes"));
		}
		/* an address list is always the whole list of its role's nodes, in
		 * rank order, whichever role refers to it */
		for (int k = 0; k < nsh; k++)
			if (sh[k].site_key >= 0 && n.count[sh[k].site_key])
				n.count[sh[k].site_key] = nodes_of(&sh[k]);
		for (int k = 0; k < NPL_SITE_COUNT; k++) {
			if (n.count[k] > all.count[k])
				all.count[k] = n.count[k];
			all.url[k] |= n.url[k];
		}
		cJSON_AddItemToObject(it, "needs", needs_json(&n));
	}
	cJSON_AddItemToObject(plan, "needs", needs_json(&all));
	/* a site value of the scripts (not an address list: check_site) that nothing refers to */
	for (i = 0; c->o->site && i < NPL_SITE_COUNT; i++)
		if (npl_site_var(i) && !npl_site_is_list(i) && c->o->site->key[i].n && !all.count[i] &&
		    npl_site_unused(d, c->o->strict, (enum npl_site_key)i, npl_arena_printf(c->a, "recipe '%s'", R->id),
				    i == NPL_SITE_DRAFT_MODEL_PATH ? "it has no draft model"
				    : i == NPL_SITE_IFNAME ? "none of its variables is the socket interface"
							   : "nothing in it refers to it"))
			c->rc = -1;
	cJSON_AddItemToObject(plan, "roles", roles);
	for (i = 0; i < c->o->nov && i < (int)NPL_ARRAY_SIZE(c->used_ov); i++)
		if (!c->used_ov[i]) {
			const char *r = c->o->ov[i].role;

			c->rc = npl_error(d, NULL, "%s: recipe '%s' has no %s role", c->o->ov[i].text, R->id,
					  r ? r : "server");
		}
	if (c->rc) {
		cJSON_Delete(plan);
		plan = NULL;
	}
out:
	npl_arena_release(&arena);
	free(c);
	return plan;
}

cJSON *npl_resolve_tuning(const struct npl_db *db, const struct npl_layer *hw, struct npl_diag *d)
{
	struct ctx *c = calloc(1, sizeof(*c));
	struct npl_arena arena;
	cJSON *t = NULL;

	if (!c)
		npl_oom();
	npl_arena_init(&arena);
	c->a = &arena;
	c->d = d;
	c->db = db;
	c->hw = hw;
	if (!db->defaults || !hw) {
		npl_error(d, NULL, "no hardware profile to tune for");
	} else {
		c->layers[0] = db->defaults;
		c->layers[1] = hw;
		c->nlayers = 2;
		merge_top(c);
		t = tuning_json(c);
	}
	npl_arena_release(&arena);
	free(c);
	return t;
}
