/*
 * merge.c: the layers merged, for the resolver (resolve.c): per role what the four layers say
 * (flags, env, unset, source, explicit), the top-level settings, a server role's speculative
 * block; and the environment names the layers and the overrides may not set.
 */
#include <string.h>

#include "npulaunch/text.h"

#include "resolve_internal.h"

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
void npl_rs_check_env_names(struct ctx *c)
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
const char *npl_rs_canon_flag(struct ctx *c, int prog, const char *name, const struct npl_loc *loc,
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
			struct renv r = {e->name, NULL, npl_rs_from_layer(L, e->loc), e->op, e->sep, e->before_source};

			if (e->value)
				r.val = e->site_key >= 0 ? npl_rs_ref(c, (enum npl_site_key)e->site_key, -1, 0)
							 : npl_rs_lit(c, e->value);

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
			const char *name = npl_rs_canon_flag(c, prog, f->name, &f->loc, NULL);
			struct rflag r = {name, f->kind == NPL_FLAG_REMOVE, NULL, 0, npl_rs_from_layer(L, f->loc)};

			if (f->kind == NPL_FLAG_VALUES) {
				r.vals = npl_arena_calloc(c->a, (size_t)f->nvalues, sizeof(*r.vals));
				for (j = 0; j < f->nvalues; j++)
					r.vals[j] = f->site_key >= 0 ? npl_rs_ref(c, (enum npl_site_key)f->site_key, -1, 0)
								     : npl_rs_lit(c, f->values[j]);
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
				     ((struct rname){npl_rs_lit(c, s->source[i].s), npl_rs_from_layer(L, s->source[i].loc)}));
		}
		for (i = 0; i < s->nexplicit; i++)
			PUSH(c->a, m->explicit_,
			     ((struct rname){s->explicit_flags[i].s, npl_rs_from_layer(L, s->explicit_flags[i].loc)}));
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
				     ((struct rname){s->unset[i].s, npl_rs_from_layer(L, s->unset[i].loc)}));
		}
	}
}

#define MF_PROTOCOL "ASCEND_MF_TRANSFER_PROTOCOL"

/* A layer's transfer_protocol on a prefill or decode server: ASCEND_MF_TRANSFER_PROTOCOL where
 * the disaggregated roles' settings of that layer would put it, so that a profile that names its
 * protocol deploys exactly what one that exported the variable did. A layer that exports the
 * variable for the role itself is honoured (the rule yields to it, *from is NULL); null removes
 * an earlier layer's protocol. *from: the layer whose protocol is in force, if any. */
static void take_protocol(struct ctx *c, struct merged *m, const struct npl_layer *L, enum role r,
			  const struct npl_layer **from)
{
	const enum npl_scope sc[] = {NPL_SCOPE_SERVER, NPL_SCOPE_DISAGG, r == ROLE_PREFILL ? NPL_SCOPE_PREFILL : NPL_SCOPE_DECODE};
	struct renv e = {MF_PROTOCOL, NULL, npl_rs_from_rule("transfer-protocol", NULL), NPL_ENV_SET, NULL, 0};
	int i, j;

	for (i = 0; i < 3; i++)
		for (j = 0; j < L->scope[sc[i]].nenv; j++)
			if (!strcmp(L->scope[sc[i]].env[j].name, MF_PROTOCOL)) {
				*from = NULL;
				return;
			}
	if (!L->transfer_protocol.s && !L->transfer_protocol_removed)
		return;
	*from = L->transfer_protocol.s ? L : NULL;
	if (L->transfer_protocol.s) {
		e.val = npl_rs_lit(c, L->transfer_protocol.s);
		e.o.why = npl_arena_printf(c->a, "transfer_protocol %s of %s %s at %s:%d:%d", L->transfer_protocol.s,
					   npl_layer_kind_name(L->kind), L->id, L->transfer_protocol.loc.file,
					   L->transfer_protocol.loc.line, L->transfer_protocol.loc.col);
	}
	for (j = 0; j < m->env.n; j++)
		if (!strcmp(m->env.v[j].name, MF_PROTOCOL))
			break;
	if (j < m->env.n)
		m->env.v[j] = e;
	else if (e.val)
		PUSH(c->a, m->env, e);
}

/* host_rdma moves the KV cache over a host NIC, which memfabric reads from ASCEND_MF_NIC: the
 * role's environment or an --env override must name it. */
static void check_mf_nic(struct ctx *c, const struct merged *m, const struct npl_layer *from)
{
	int i;

	if (!from || strcmp(from->transfer_protocol.s, "host_rdma"))
		return;
	for (i = 0; i < m->env.n; i++)
		if (m->env.v[i].val && !strcmp(m->env.v[i].name, "ASCEND_MF_NIC"))
			return;
	for (i = 0; i < c->o->nov; i++)
		if (c->o->ov[i].kind == NPL_OV_SET_ENV && !strcmp(c->o->ov[i].name, "ASCEND_MF_NIC"))
			return;
	c->rc = npl_error(c->d, &from->transfer_protocol.loc,
			  "transfer_protocol host_rdma moves the KV cache over a host NIC, which ASCEND_MF_NIC names: set it in env (ASCEND_MF_NIC: eth0, or {value: {site: ifname}} for the socket interface) or give --env ASCEND_MF_NIC=NAME");
}

/* Merge what the four layers say for one role. The top-level `unset` applies
 * to every process launched (proxies break router and benchmark as well);
 * the other top-level settings apply to the server roles. */
void npl_rs_merge_role(struct ctx *c, enum role r, struct merged *m)
{
	static const enum npl_scope own[ROLE_COUNT] = {NPL_SCOPE_PD_MIXED, NPL_SCOPE_PREFILL,
						       NPL_SCOPE_DECODE, NPL_SCOPE_ROUTER,
						       NPL_SCOPE_BENCH};
	int i, server = r <= ROLE_DECODE;
	int prog = server ? NPL_PROG_SERVER : r == ROLE_ROUTER ? NPL_PROG_ROUTER : NPL_PROG_BENCH;
	const struct npl_layer *protocol = NULL;

	memset(m, 0, sizeof(*m));
	for (i = 0; i < c->nlayers; i++) {
		const struct npl_layer *L = c->layers[i];

		merge_scope(c, m, L, &L->scope[NPL_SCOPE_SERVER], 1, server, prog);
		if (r == ROLE_PREFILL || r == ROLE_DECODE) {
			merge_scope(c, m, L, &L->scope[NPL_SCOPE_DISAGG], 1, 1, prog);
			take_protocol(c, m, L, r, &protocol);
		}
		merge_scope(c, m, L, &L->scope[own[r]], 1, 1, prog);
	}
	check_mf_nic(c, m, protocol);
}

#define TAKE_INT(dst, src, L)                                                                      \
	do {                                                                                       \
		if ((src).set) {                                                                   \
			(dst).set = 1;                                                             \
			(dst).v = (src).v;                                                         \
			(dst).o = npl_rs_from_layer((L), (src).loc);                                      \
		}                                                                                  \
	} while (0)

#define TAKE_STR(dst, src, L)                                                                      \
	do {                                                                                       \
		if ((src).s) {                                                                     \
			(dst).s = (src).s;                                                         \
			(dst).o = npl_rs_from_layer((L), (src).loc);                                      \
		}                                                                                  \
	} while (0)

void npl_rs_merge_top(struct ctx *c)
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
		if (L->affinity.removed || L->tuning_replace) {
			memset(&t->aff_policy, 0, sizeof(t->aff_policy));
			memset(&t->aff_min_cpus, 0, sizeof(t->aff_min_cpus));
			memset(&t->aff_irqs, 0, sizeof(t->aff_irqs));
		}
		TAKE_STR(t->aff_policy, L->affinity.policy, L);
		TAKE_INT(t->aff_min_cpus, L->affinity.min_cpus, L);
		TAKE_INT(t->aff_irqs, L->affinity.irqs, L);
		for (j = 0; j < L->nsysctl; j++) {
			const struct npl_env_set *e = &L->sysctl[j];
			struct renv r = {e->name, e->value ? npl_rs_lit(c, e->value) : NULL, npl_rs_from_layer(L, e->loc),
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
				t->launch[p].o = npl_rs_from_layer(L, L->launch.loc[p]);
			}
		TAKE_STR(t->entry_host, L->entry_host, L);
		if (L->ifname_env_set) {
			t->ifname_env = L->ifname_env;
			t->nifname_env = L->nifname_env;
			t->ifname_env_o = npl_rs_from_layer(L, L->ifname_env ? L->ifname_env[0].loc : L->loc);
		}
		TAKE_INT(t->socket_ifname, L->socket_ifname, L);
		npl_rs_take_bench(t, &L->bench, L);
	}
}

void npl_rs_take_bench(struct top *t, const struct npl_bench_spec *b, const struct npl_layer *L)
{
	TAKE_STR(t->bench_dataset, b->dataset, L);
	TAKE_STR(t->bench_resolution, b->resolution, L);
	TAKE_INT(t->bench_input, b->input, L);
	TAKE_INT(t->bench_output, b->output, L);
	TAKE_INT(t->bench_prefix, b->prefix, L);
	TAKE_INT(t->bench_groups, b->groups, L);
	TAKE_INT(t->bench_images, b->images, L);
	TAKE_INT(t->bench_concurrency, b->concurrency, L);
	TAKE_INT(t->bench_prompts, b->prompts, L);
	TAKE_INT(t->bench_sys_len, b->system_prompt_len, L);
	TAKE_INT(t->bench_q_len, b->question_len, L);
}

void npl_rs_merge_bench_item(struct ctx *c, struct merged *m, const struct npl_bench_item *it)
{
	struct rflag *own = npl_arena_calloc(c->a, (size_t)(m->flags.n + 1), sizeof(*own));

	/* the merged flags are shared with the other benchmarks: this one's go into a copy */
	if (m->flags.n)
		memcpy(own, m->flags.v, (size_t)m->flags.n * sizeof(*own));
	m->flags.v = own;
	m->flags.cap = m->flags.n + 1;
	merge_scope(c, m, c->R, &it->scope, 0, 1, NPL_PROG_BENCH);
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
		st->o = npl_rs_from_layer(L, b->loc);
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
void npl_rs_merge_spec(struct ctx *c, enum role r, struct spec_state *st)
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
