/*
 * flags.c: the flags and environment of one launch, for the resolver (resolve.c): putting
 * flags and variables, the flags the rules own, the --set/--unset/--env/--unset-env overrides,
 * a recipe's own --host, the data flags of a merged role, the --speculative-* flags.
 */
#include <stdarg.h>
#include <string.h>

#include "npulaunch/text.h"

#include "resolve_internal.h"

void npl_rs_put_flag(struct ctx *c, struct launch *l, const char *name, struct origin o, int n, ...)
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

/* The first of the n names (each at base + i * size) that is name, through the index ix of the
 * first *done of them (brought up to n); -1 when none is. A stale index (the entries sorted,
 * or a copy's) is replaced by a new one, never cleared in place. */
static int find_name(struct ctx *c, struct npl_strmap *ix, int *done, const char *const *base, size_t size, int n,
		     const char *name)
{
	int i, again;

#define NAME_AT(k) (*(const char *const *)(const void *)((const char *)base + (size_t)(k) * size))
	for (again = 0; again < 2; again++) {
		if (*done > n || again) {
			*ix = (struct npl_strmap)NPL_STRMAP_INIT;
			*done = 0;
		}
		for (; *done < n; ++*done)
			npl_strmap_add(ix, c->a, NAME_AT(*done), strlen(NAME_AT(*done)), *done);
		i = npl_strmap_get(ix, name, strlen(name));
		if (i < 0 || (i < n && !strcmp(NAME_AT(i), name)))
			return i;
	}
#undef NAME_AT
	return -1;
}

int npl_rs_find_env(struct ctx *c, struct launch *l, const char *name)
{
	return l->env.n ? find_name(c, &l->envix, &l->envixn, &l->env.v[0].name, sizeof(*l->env.v), l->env.n, name)
			: -1;
}

int npl_rs_find_flag(struct ctx *c, struct launch *l, const char *name)
{
	int i = l->flags.n ? find_name(c, &l->flagix, &l->flagixn, &l->flags.v[0].name, sizeof(*l->flags.v),
				       l->flags.n, name)
			   : -1;

	/* the first of that name was unset: a later one */
	for (; i >= 0 && i < l->flags.n; i++)
		if (!l->flags.v[i].dead && !strcmp(l->flags.v[i].name, name))
			return i;
	return -1;
}

void npl_rs_put_env(struct ctx *c, struct launch *l, const char *name, const char *val, struct origin o)
{
	int i = npl_rs_find_env(c, l, name);

	if (i >= 0) {
		l->env.v[i].val = val;
		l->env.v[i].o = o;
		return;
	}
	PUSH(c->a, l->env, ((struct renv){name, val, o, NPL_ENV_SET, NULL, 0}));
}

int npl_rs_has_explicit(const struct merged *m, const char *name)
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

	/* the rule gives prefill its bootstrap port; a decode server's, where a page gives it one,
	   is data */
	if (r == ROLE_DECODE && !strcmp(flag, "disaggregation-bootstrap-port"))
		return NULL;
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
		if (!strcmp(npl_rs_role_names[r], s))
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
void npl_rs_apply_overrides(struct ctx *c, enum role r, struct launch *l, const char *tp)
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
			: npl_rs_canon_flag(c, r <= ROLE_DECODE ? NPL_PROG_SERVER : r == ROLE_ROUTER ? NPL_PROG_ROUTER : NPL_PROG_BENCH,
				     ov->name, NULL, ov->text);
		if (ov->kind == NPL_OV_SET_ENV || ov->kind == NPL_OV_UNSET_ENV) {
			if (ov->kind == NPL_OV_SET_ENV) {
				npl_rs_put_env(c, l, name, npl_rs_lit(c, ov->values[0]), o);
			} else {
				for (j = 0; j < l->env.n; j++)
					if (!strcmp(l->env.v[j].name, name))
						l->env.v[j].val = NULL;
			}
			continue;
		}
		if ((j = npl_rs_find_flag(c, l, name)) < 0)
			j = l->flags.n;
		if (r <= ROLE_DECODE && !strcmp(name, "tp-size") && tp && !c->o->force &&
		    !(ov->kind == NPL_OV_SET_FLAG && ov->nvalues == 1 && !strcmp(ov->values[0], tp))) {
			c->rc = npl_error(c->d, NULL, "%s contradicts the rule tp-size: %s has %s (the instance's dies / pp-size); use --force to insist",
					  ov->text, npl_rs_role_names[r], tp);
			continue;
		}
		if (reserved_rule(r, name) && strcmp(name, "tp-size") && !c->o->force) {
			const struct rflag *have = j < l->flags.n ? &l->flags.v[j] : NULL;

			if (have && (!strcmp(have->o.layer, "rule") || !strcmp(have->o.layer, "site")))
				c->rc = npl_error(c->d, NULL, "%s: --%s of %s comes from the rule %s (see show --explain); use --force to insist",
						  ov->text, name, npl_rs_role_names[r], rule_name(c, &have->o));
			else if (have && npl_starts_with(name, "speculative-"))
				c->rc = npl_error(c->d, NULL, "%s: --%s of %s comes from the %s's speculative block (see show --explain); change it there, or use --force to insist",
						  ov->text, name, npl_rs_role_names[r], have->o.layer);
			else if (have)
				c->rc = npl_error(c->d, NULL, "%s: --%s of %s is derived by the rules from the %s's settings (see show --explain); use --force to insist",
						  ov->text, name, npl_rs_role_names[r], have->o.layer);
			else if (npl_starts_with(name, "speculative-"))
				c->rc = npl_error(c->d, NULL, "%s: no rule writes --%s on %s, which has no speculative block: give it one (roles.%s.speculative in the recipe), or use --force to insist",
						  ov->text, name, npl_rs_role_names[r], npl_rs_role_names[r]);
			else
				c->rc = npl_error(c->d, NULL, "%s: --%s is owned by the rules (see show --explain), though none writes it on %s here; use --force to insist",
						  ov->text, name, npl_rs_role_names[r]);
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
			f.vals[k] = npl_rs_lit(c, ov->values[k]);
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
		c->rc = npl_error(c->d, &f->o.loc, "flag 'host' of %s takes one address", npl_rs_role_names[r]);
		return;
	}
	if (r != ROLE_PD_MIXED && loopback_host(f->vals[0])) {
		c->rc = npl_error(c->d, &f->o.loc, "host %s of %s: a %s server must listen where the router and the other role reach it; only a PD-mixed server may listen on a loopback address",
				  f->vals[0], npl_rs_role_names[r], npl_rs_role_names[r]);
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
void npl_rs_put_data_flags(struct ctx *c, enum role r, struct launch *l, const struct merged *m,
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
						  f->nvals ? f->vals[0] : "(no value)", npl_rs_role_names[r], tp, tp_why);
			continue;
		}
		if (r <= ROLE_DECODE && !strcmp(f->name, "host")) {
			honour_host(c, r, l, f);
			continue;
		}
		if (reserved_rule(r, f->name)) {
			c->rc = npl_error(c->d, &f->o.loc, "flag '%s' of %s is derived by a rule: %s",
					  f->name, npl_rs_role_names[r], reserved_hint(r, f->name));
			continue;
		}
		PUSH(c->a, l->flags, *f);
	}
}

/* The --host a layer or an override set (not the rule's, nor a wildcard), for the endpoint. */
const char *npl_rs_own_host(const struct launch *l)
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

/* The --speculative-* flags from a role's speculative block; emit limits them to some fields. */
void npl_rs_put_spec(struct ctx *c, struct launch *l, const struct spec_state *st)
{
	unsigned emit = st->emit ? st->emit : ~0u;

	if (!st->on)
		return;
	if ((emit & NPL_SPEC_ALGORITHM) && !st->algorithm.s) {
		c->rc = npl_error(c->d, &st->o.loc, "the speculative block needs 'algorithm'");
		return;
	}
	/* steps and topk where they are written, or draft tokens are derived from them (a block
	   that emits draft_tokens it gives, as DFLASH's, needs neither) */
	if (((emit & (NPL_SPEC_STEPS | NPL_SPEC_TOPK)) || ((emit & NPL_SPEC_DRAFT_TOKENS) && !st->tokens.set)) &&
	    (!st->steps.set || !st->topk.set)) {
		c->rc = npl_error(c->d, &st->o.loc, "the speculative block needs 'steps' and 'topk'");
		return;
	}
	if (emit & NPL_SPEC_ALGORITHM)
		npl_rs_put_flag(c, l, "speculative-algorithm", st->algorithm.o, 1, npl_rs_lit(c, st->algorithm.s));
	if ((emit & NPL_SPEC_DRAFT_MODEL) && st->draft_model.set && st->draft_model.v)
		npl_rs_put_flag(c, l, "speculative-draft-model-path",
			 npl_rs_from_site(NPL_SITE_DRAFT_MODEL_PATH, "rule speculative: the block's draft_model"), 1,
			 npl_rs_ref(c, NPL_SITE_DRAFT_MODEL_PATH, -1, 0));
	if (emit & NPL_SPEC_STEPS)
		npl_rs_put_flag(c, l, "speculative-num-steps", st->steps.o, 1, npl_rs_num(c, st->steps.v));
	if (emit & NPL_SPEC_TOPK)
		npl_rs_put_flag(c, l, "speculative-eagle-topk", st->topk.o, 1, npl_rs_num(c, st->topk.v));
	if (emit & NPL_SPEC_DRAFT_TOKENS) {
		if (st->tokens.set) {
			npl_rs_put_flag(c, l, "speculative-num-draft-tokens", st->tokens.o, 1, npl_rs_num(c, st->tokens.v));
		} else if (st->topk.v == 1) {
			npl_rs_put_flag(c, l, "speculative-num-draft-tokens",
				 npl_rs_from_rule("draft-tokens", "steps + 1 when topk is 1"), 1,
				 npl_rs_num(c, st->steps.v + 1));
		} else {
			c->rc = npl_error(c->d, &st->o.loc, "the speculative block needs 'draft_tokens' when topk is not 1");
		}
	}
	if ((emit & NPL_SPEC_DRAFT_QUANTIZATION) && st->draft_quant.s)
		npl_rs_put_flag(c, l, "speculative-draft-model-quantization", st->draft_quant.o, 1,
			 npl_rs_lit(c, st->draft_quant.s));
}
