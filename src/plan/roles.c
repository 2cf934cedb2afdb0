/*
 * roles.c: the roles of the plan, for the resolver (resolve.c): a server role's nodes with
 * their rule flags, data flags and env (pd-mixed, prefill, decode), the router and the
 * benchmark; and the checks of parallel sizes against tp-size.
 */
#include <string.h>

#include "npulaunch/text.h"

#include "resolve_internal.h"

/* The node (index in the role's address list) of an instance's rank, and the
 * instance's slot on a shared node. */
static int node_of_rank(const struct shape *sh, int inst, int rank)
{
	return sh->per_node > 1 ? inst / sh->per_node : inst * sh->nodes_per_instance + rank;
}

static int slot_of(const struct shape *sh, int inst)
{
	return sh->per_node > 1 ? inst % sh->per_node : 0;
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
					  npl_rs_role_names[sh->role], sh->dies);
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
cJSON *npl_rs_server_role(struct ctx *c, const struct shape *sh)
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

	npl_rs_merge_role(c, sh->role, &m);
	npl_rs_merge_spec(c, sh->role, &spec);
	/* tp-size: the instance's dies over its pipeline stages */
	for (int i = 0; i < m.flags.n; i++)
		if (!m.flags.v[i].dead && !strcmp(m.flags.v[i].name, "pp-size") && m.flags.v[i].nvals == 1) {
			pp = npl_parse_uint(m.flags.v[i].vals[0]);
			if (pp <= 0 || sh->dies % pp) {
				c->rc = npl_error(c->d, &m.flags.v[i].o.loc, "pp-size %s does not divide the %d dies of a %s instance",
						  m.flags.v[i].vals[0], sh->dies, npl_rs_role_names[sh->role]);
				pp = 1;
			}
		}
	tpv = sh->dies / pp;
	tp = npl_rs_num(c, tpv);
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
					  npl_rs_role_names[sh->role]);
	cJSON_AddStringToObject(role, "role", npl_rs_role_names[sh->role]);
	cJSON_AddStringToObject(role, "script", npl_arena_printf(c->a, "%s.sh", npl_rs_role_names[sh->role]));
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
	cJSON_AddItemToObject(role, "tuning", npl_rs_tuning_json(c));
	cJSON_AddItemToObject(role, "unset", npl_rs_names_json(m.unset.v, m.unset.n, "name"));
	cJSON_AddItemToObject(role, "source", npl_rs_names_json(m.source.v, m.source.n, "path"));

	for (n = 0; n < nnodes; n++) {
		struct launch l;
		int inst = n / sh->nodes_per_instance, rank = n % sh->nodes_per_instance;
		int first = node_of_rank(sh, inst, 0), at = node_of_rank(sh, inst, rank);
		int slot = slot_of(sh, inst), iport = port + slot;
		cJSON *node = cJSON_CreateObject();
		const char *host;

		memset(&l, 0, sizeof(l));
		npl_rs_put_flag(c, &l, "model-path", npl_rs_from_site(NPL_SITE_MODEL_PATH, "rule model-path"), 1,
			 npl_rs_ref(c, NPL_SITE_MODEL_PATH, -1, 0));
		if (sh->role != ROLE_PD_MIXED)
			npl_rs_put_flag(c, &l, "disaggregation-mode", npl_rs_from_rule("disaggregation", "the role"), 1,
				 npl_rs_role_names[sh->role]);
		if (sh->site_key >= 0) {
			host = npl_rs_ref(c, sh->site_key, at, 0);
			npl_rs_put_flag(c, &l, "host", npl_rs_from_site(sh->site_key, "rule host: this node's address"), 1, host);
		} else {
			host = NULL;
			if (!t->entry_host.s)
				c->rc = npl_error(c->d, NULL, "no entry_host in the recipe database");
			else
				npl_rs_put_flag(c, &l, "host", t->entry_host.o, 1, npl_rs_lit(c, t->entry_host.s));
		}
		if (slot)
			npl_rs_put_flag(c, &l, "port", npl_rs_from_rule("ports", npl_arena_printf(c->a, "the role's port + %d: instance slot %d of a shared node", slot, slot)),
				 1, npl_rs_num(c, iport));
		else
			npl_rs_put_flag(c, &l, "port", sh->role == ROLE_PD_MIXED ? t->port_entry.o
						 : sh->role == ROLE_PREFILL ? t->port_prefill.o : t->port_decode.o,
				 1, npl_rs_num(c, port));
		if (sh->role == ROLE_PREFILL)
			npl_rs_put_flag(c, &l, "disaggregation-bootstrap-port",
				 npl_rs_from_rule("bootstrap-port", "ports.bootstrap + the prefill instance"), 1,
				 npl_rs_num(c, port_or(c, &t->port_bootstrap, "bootstrap") + inst));
		if (multi || npl_rs_has_explicit(&m, "nnodes"))
			npl_rs_put_flag(c, &l, "nnodes",
				 npl_rs_from_rule("nodes", npl_arena_printf(c->a, "%d cards / %d cards per node",
								    sh->cards, c->hw->cards_per_node.v)),
				 1, npl_rs_num(c, sh->nodes_per_instance));
		if (multi || npl_rs_has_explicit(&m, "dist-init-addr")) {
			struct npl_buf b = NPL_BUF_INIT;

			if (sh->site_key >= 0)
				npl_pval_ref(&b, sh->site_key, first, 1);
			else
				npl_pval_lit(&b, t->entry_host.s ? t->entry_host.s : "127.0.0.1");
			npl_buf_printf(&b, ":%d", port_or(c, &t->port_dist, "dist_init"));
			npl_rs_put_flag(c, &l, "dist-init-addr",
				 npl_rs_from_rule("dist-init-addr", "the instance's first node"), 1,
				 npl_arena_strdup(c->a, npl_buf_str(&b)));
			npl_buf_release(&b);
		}
		if (multi || npl_rs_has_explicit(&m, "node-rank"))
			npl_rs_put_flag(c, &l, "node-rank", npl_rs_from_rule("nodes", "this node's rank in its instance"), 1,
				 npl_rs_num(c, rank));
		npl_rs_put_flag(c, &l, "tp-size", npl_rs_from_rule("tp-size", tp_why), 1, tp);
		if (sh->topo && sh->topo->first_card.set)
			npl_rs_put_flag(c, &l, "base-gpu-id",
				 npl_rs_from_rule("placement", npl_arena_printf(c->a, "first card %d x %d dies per card",
									  sh->topo->first_card.v,
									  c->hw->dies_per_card.v)),
				 1, npl_rs_num(c, sh->topo->first_card.v * c->hw->dies_per_card.v));
		npl_rs_put_data_flags(c, sh->role, &l, &m, tp, tp_why);
		npl_rs_put_spec(c, &l, &spec);

		/* environment: the layers, then the rules; a layer's value of a
		 * variable the socket-ifname rule sets is honoured */
		for (int i = 0; i < m.env.n; i++)
			if (m.env.v[i].val) {
				npl_rs_put_env(c, &l, m.env.v[i].name, m.env.v[i].val, m.env.v[i].o);
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
				npl_rs_put_env(c, &l, t->ifname_env[i].s, npl_rs_ref(c, NPL_SITE_IFNAME, -1, 0),
					npl_rs_from_site(NPL_SITE_IFNAME, "rule socket-ifname"));
			}
		if (sh->per_node > 1) {
			/* the dies this instance owns on its shared node */
			struct npl_buf b = NPL_BUF_INIT;
			int base = slot * sh->dies + (sh->topo && sh->topo->first_card.set
						      ? sh->topo->first_card.v * c->hw->dies_per_card.v : 0);

			for (int d = 0; d < sh->dies; d++)
				npl_buf_printf(&b, "%s%d", d ? "," : "", base + d);
			npl_rs_put_env(c, &l, "ASCEND_RT_VISIBLE_DEVICES", npl_arena_strdup(c->a, npl_buf_str(&b)),
				npl_rs_from_rule("devices", npl_arena_printf(c->a, "instance slot %d of %d on its node: %d dies each",
								      slot, sh->per_node, sh->dies)));
			npl_buf_release(&b);
		}
		if (sh->role != ROLE_PD_MIXED) {
			struct npl_buf b = NPL_BUF_INIT;

			npl_buf_puts(&b, "tcp://");
			npl_pval_ref(&b, NPL_SITE_PREFILL_IP, 0, 1);
			npl_buf_printf(&b, ":%d", port_or(c, &t->port_store, "mf_store"));
			npl_rs_put_env(c, &l, "ASCEND_MF_STORE_URL", npl_arena_strdup(c->a, npl_buf_str(&b)),
				npl_rs_from_rule("mf-store", "the first prefill node, ports.mf_store"));
			npl_buf_release(&b);
		}
		npl_rs_apply_overrides(c, sh->role, &l, tp);

		cJSON_AddNumberToObject(node, "index", at);
		cJSON_AddNumberToObject(node, "instance", inst);
		cJSON_AddNumberToObject(node, "rank", rank);
		if (sh->per_node > 1)
			cJSON_AddNumberToObject(node, "slot", slot);
		if (host)
			cJSON_AddStringToObject(node, "address", host);
		else
			cJSON_AddNullToObject(node, "address");
		cJSON_AddItemToObject(node, "env", npl_rs_env_json(&l));
		cJSON_AddItemToObject(node, "launch", npl_rs_launch_json(c, NPL_PROG_SERVER));
		cJSON_AddItemToObject(node, "flags", npl_rs_flags_json(&l));
		cJSON_AddItemToArray(nodes, node);

		if (rank == 0) {
			struct npl_buf b = NPL_BUF_INIT;
			cJSON *ep = cJSON_CreateObject();

			const char *own = npl_rs_own_host(&l);

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
	cJSON_AddNumberToObject(role, "nodes_count", npl_rs_nodes_of(sh));
	return role;
}

static cJSON *client_role(struct ctx *c, enum role r, struct launch *l, const struct merged *m)
{
	cJSON *role = cJSON_CreateObject(), *nodes = cJSON_CreateArray(), *node = cJSON_CreateObject();

	cJSON_AddStringToObject(role, "role", npl_rs_role_names[r]);
	cJSON_AddStringToObject(role, "script", npl_arena_printf(c->a, "%s.sh", npl_rs_role_names[r]));
	cJSON_AddStringToObject(role, "program", npl_rs_role_names[r]);
	cJSON_AddNullToObject(role, "node_list");
	cJSON_AddItemToObject(role, "unset", npl_rs_names_json(m->unset.v, m->unset.n, "name"));
	cJSON_AddItemToObject(role, "source", cJSON_CreateArray());
	for (int i = 0; i < m->env.n; i++)
		if (m->env.v[i].val) {
			npl_rs_put_env(c, l, m->env.v[i].name, m->env.v[i].val, m->env.v[i].o);
			l->env.v[l->env.n - 1].op = m->env.v[i].op;
			l->env.v[l->env.n - 1].sep = m->env.v[i].sep;
		}
	npl_rs_apply_overrides(c, r, l, NULL);
	cJSON_AddNumberToObject(node, "index", 0);
	cJSON_AddNullToObject(node, "address");
	cJSON_AddItemToObject(node, "env", npl_rs_env_json(l));
	cJSON_AddItemToObject(node, "launch",
			      npl_rs_launch_json(c, r == ROLE_ROUTER ? NPL_PROG_ROUTER : NPL_PROG_BENCH));
	cJSON_AddItemToObject(node, "flags", npl_rs_flags_json(l));
	cJSON_AddItemToArray(nodes, node);
	cJSON_AddItemToObject(role, "nodes", nodes);
	mark_env(role, m);
	return role;
}

cJSON *npl_rs_router_role(struct ctx *c, const struct shape *pre, const struct shape *dec)
{
	struct merged m;
	struct launch l;
	struct top *t = &c->t;
	struct origin o = npl_rs_from_rule("router", "every prefill and decode instance");
	cJSON *role;
	int i;

	npl_rs_merge_role(c, ROLE_ROUTER, &m);
	memset(&l, 0, sizeof(l));
	npl_rs_put_flag(c, &l, "pd-disaggregation", npl_rs_from_rule("router", "a pd-disagg recipe"), 0);
	for (i = 0; i < pre->instances; i++) {
		struct npl_buf b = NPL_BUF_INIT;

		npl_buf_puts(&b, "http://");
		npl_pval_ref(&b, NPL_SITE_PREFILL_IP, node_of_rank(pre, i, 0), 1);
		npl_buf_printf(&b, ":%d", port_or(c, &t->port_prefill, "prefill") + slot_of(pre, i));
		npl_rs_put_flag(c, &l, "prefill", o, 2, npl_arena_strdup(c->a, npl_buf_str(&b)),
			 npl_rs_num(c, port_or(c, &t->port_bootstrap, "bootstrap") + i));
		npl_buf_release(&b);
	}
	for (i = 0; i < dec->instances; i++) {
		struct npl_buf b = NPL_BUF_INIT;

		npl_buf_puts(&b, "http://");
		npl_pval_ref(&b, NPL_SITE_DECODE_IP, node_of_rank(dec, i, 0), 1);
		npl_buf_printf(&b, ":%d", port_or(c, &t->port_decode, "decode") + slot_of(dec, i));
		npl_rs_put_flag(c, &l, "decode", o, 1, npl_arena_strdup(c->a, npl_buf_str(&b)));
		npl_buf_release(&b);
	}
	npl_rs_put_flag(c, &l, "host", t->entry_host.o, 1, npl_rs_lit(c, t->entry_host.s ? t->entry_host.s : ""));
	npl_rs_put_flag(c, &l, "port", t->port_entry.o, 1, npl_rs_num(c, port_or(c, &t->port_entry, "entry")));
	npl_rs_put_data_flags(c, ROLE_ROUTER, &l, &m, NULL, NULL);
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

cJSON *npl_rs_bench_role(struct ctx *c)
{
	struct merged m;
	struct launch l;
	struct top *t = &c->t;
	const char *ds = t->bench_dataset.s;
	int in, out, prompts;

	npl_rs_merge_role(c, ROLE_BENCH, &m);
	memset(&l, 0, sizeof(l));
	if (!ds) {
		c->rc = npl_error(c->d, &c->R->loc, "the recipe needs bench.dataset");
		ds = "random";
	}
	npl_rs_put_flag(c, &l, "dataset-name", t->bench_dataset.o, 1, ds);
	npl_rs_put_flag(c, &l, "backend", npl_rs_from_rule("bench-backend", "sglang-oai-chat for images, else sglang"),
		 1, !strcmp(ds, "image") ? "sglang-oai-chat" : "sglang");
	npl_rs_put_flag(c, &l, "host", t->entry_host.o, 1, npl_rs_lit(c, t->entry_host.s ? t->entry_host.s : ""));
	npl_rs_put_flag(c, &l, "port", t->port_entry.o, 1, npl_rs_num(c, port_or(c, &t->port_entry, "entry")));
	npl_rs_put_flag(c, &l, "max-concurrency", t->bench_concurrency.o, 1,
		 npl_rs_num(c, need_bench(c, &t->bench_concurrency, "concurrency", ds)));
	prompts = need_bench(c, &t->bench_prompts, "prompts", ds);
	npl_rs_put_flag(c, &l, "num-prompts", t->bench_prompts.o, 1, npl_rs_num(c, prompts));
	in = need_bench(c, &t->bench_input, "input", ds);
	out = need_bench(c, &t->bench_output, "output", ds);
	if (!strcmp(ds, "generated-shared-prefix")) {
		int pct = need_bench(c, &t->bench_prefix, "prefix", ds);
		int groups = t->bench_groups.set ? t->bench_groups.v : 1;
		long long sys = ((long long)in * pct + 50) / 100;
		long long q = ((long long)in * (100 - pct) + 50) / 100;
		struct origin sys_o = npl_rs_from_rule("bench-gsp", npl_arena_printf(c->a, "round(%d x %d%%)", in, pct));
		struct origin q_o = npl_rs_from_rule("bench-gsp", npl_arena_printf(c->a, "round(%d x %d%%)", in, 100 - pct));

		if (prompts % groups)
			c->rc = npl_error(c->d, &t->bench_groups.o.loc, "bench.prompts (%d) must divide into bench.groups (%d)",
					  prompts, groups);
		npl_rs_put_flag(c, &l, "gsp-num-groups",
			 t->bench_groups.set ? t->bench_groups.o : npl_rs_from_rule("bench-gsp", "one prefix group"), 1,
			 npl_rs_num(c, groups));
		npl_rs_put_flag(c, &l, "gsp-prompts-per-group", npl_rs_from_rule("bench-gsp", "prompts / groups"), 1,
			 npl_rs_num(c, prompts / groups));
		/* what the page benchmarks wins over the formula */
		if (t->bench_sys_len.set) {
			sys = t->bench_sys_len.v;
			sys_o = t->bench_sys_len.o;
		}
		if (t->bench_q_len.set) {
			q = t->bench_q_len.v;
			q_o = t->bench_q_len.o;
		}
		npl_rs_put_flag(c, &l, "gsp-system-prompt-len", sys_o, 1, npl_arena_printf(c->a, "%lld", sys));
		npl_rs_put_flag(c, &l, "gsp-question-len", q_o, 1, npl_arena_printf(c->a, "%lld", q));
		npl_rs_put_flag(c, &l, "gsp-output-len", t->bench_output.o, 1, npl_rs_num(c, out));
	} else {
		if (!strcmp(ds, "image")) {
			if (!t->bench_resolution.s)
				c->rc = npl_error(c->d, &c->R->loc, "the image benchmark needs bench.resolution");
			npl_rs_put_flag(c, &l, "image-resolution", t->bench_resolution.o, 1,
				 npl_rs_lit(c, t->bench_resolution.s ? t->bench_resolution.s : ""));
			npl_rs_put_flag(c, &l, "image-count",
				 t->bench_images.set ? t->bench_images.o : npl_rs_from_rule("bench-image", "one image"), 1,
				 npl_rs_num(c, t->bench_images.set ? t->bench_images.v : 1));
		}
		npl_rs_put_flag(c, &l, "random-input-len", t->bench_input.o, 1, npl_rs_num(c, in));
		npl_rs_put_flag(c, &l, "random-output-len", t->bench_output.o, 1, npl_rs_num(c, out));
		npl_rs_put_flag(c, &l, "random-range-ratio", npl_rs_from_rule("bench-lengths", "fixed lengths"), 1, "1");
	}
	npl_rs_put_data_flags(c, ROLE_BENCH, &l, &m, NULL, NULL);
	return client_role(c, ROLE_BENCH, &l, &m);
}
