/*
 * roles.c: the roles of the plan, for the resolver (resolve.c): a server role's nodes with
 * their rule flags, data flags and env (pd-mixed, prefill, decode; per node a table of rules,
 * server_rules), the router and the benchmark; and the checks of parallel sizes against tp-size.
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
/* The entry host as a flag's value: the target's plan value (${entry-ip[0]}), else the text. */
static const char *entry_value(struct ctx *c)
{
	if (c->t.entry_pval)
		return npl_rs_ref(c, NPL_SITE_ENTRY_IP, 0, 0);
	return npl_rs_lit(c, c->t.entry_host.s ? c->t.entry_host.s : "");
}

/* The entry host in a URL or HOST:PORT (def when there is none). */
static void entry_url(struct ctx *c, struct npl_buf *b, const char *def)
{
	if (c->t.entry_pval)
		npl_pval_ref(b, NPL_SITE_ENTRY_IP, 0, 1);
	else
		npl_pval_lit(b, c->t.entry_host.s ? c->t.entry_host.s : def);
}

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

/* ---- a server role: its sizes, then per node a table of rules --------------------------- */

/* One node of a server role while the rules apply to it: the role, what the layers say for it,
 * where the node stands, and the launch the rules fill. */
struct snode {
	const struct shape *sh;
	const struct merged *m;
	const struct spec_state *spec;
	const char *tp, *tp_why;     /* the rule's tp-size, and how it was derived */
	int port;                    /* the role's port */
	int ifname;                  /* 0 when the socket-ifname rule is off */
	int multi;                   /* an instance spans nodes */
	int inst, rank, first, at, slot, iport;
	const char *host;            /* this node's address, or NULL for the entry host */
	struct launch l;
};

/* The role's port: the entry port for pd-mixed, else the prefill or decode port. */
static int role_port(struct ctx *c, const struct shape *sh)
{
	struct top *t = &c->t;

	return sh->role == ROLE_PD_MIXED ? port_or(c, &t->port_entry, "entry")
	       : sh->role == ROLE_PREFILL ? port_or(c, &t->port_prefill, "prefill")
					  : port_or(c, &t->port_decode, "decode");
}

/* The rule tp-size: the instance's dies over its pipeline stages (pp-size, in *pp), with the
 * value and how it was derived in n. */
static int rule_tp_size(struct ctx *c, struct snode *n, int *pp)
{
	const struct shape *sh = n->sh;
	const struct merged *m = n->m;
	int tpv;

	*pp = 1;
	for (int i = 0; i < m->flags.n; i++)
		if (!m->flags.v[i].dead && !strcmp(m->flags.v[i].name, "pp-size") && m->flags.v[i].nvals == 1) {
			*pp = npl_parse_uint(m->flags.v[i].vals[0]);
			if (*pp <= 0 || sh->dies % *pp) {
				c->rc = npl_error(c->d, &m->flags.v[i].o.loc, "pp-size %s does not divide the %d dies of a %s instance",
						  m->flags.v[i].vals[0], sh->dies, npl_rs_role_names[sh->role]);
				*pp = 1;
			}
		}
	tpv = sh->dies / *pp;
	n->tp = npl_rs_num(c, tpv);
	if (sh->topo && sh->topo->dies.set)
		n->tp_why = npl_arena_printf(c->a, "%d dies (topology)", sh->dies);
	else
		n->tp_why = npl_arena_printf(c->a, "%d dies per card x %d cards", c->hw->dies_per_card.v,
					     sh->cards);
	if (*pp > 1)
		n->tp_why = npl_arena_printf(c->a, "%s / pp-size %d", n->tp_why, *pp);
	return tpv;
}

/* A layer's ASCEND_MF_STORE_URL on a prefill or decode role, which the rule mf-store owns. */
static void check_mf_store(struct ctx *c, const struct shape *sh, const struct merged *m)
{
	for (int i = 0; i < m->env.n; i++)
		if (m->env.v[i].val && !strcmp(m->env.v[i].name, "ASCEND_MF_STORE_URL") &&
		    sh->role != ROLE_PD_MIXED)
			c->rc = npl_error(c->d, &m->env.v[i].o.loc, "ASCEND_MF_STORE_URL of %s is derived by the rule mf-store (the first prefill node, ports.mf_store): remove it from the recipe",
					  npl_rs_role_names[sh->role]);
}

/* What a server role is before its nodes: its sizes, tuning, unset and source. */
static void server_head(struct ctx *c, cJSON *role, const struct shape *sh, const struct merged *m,
			int tpv, int pp)
{
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
	cJSON_AddItemToObject(role, "unset", npl_rs_names_json(m->unset.v, m->unset.n, "name"));
	cJSON_AddItemToObject(role, "source", npl_rs_names_json(m->source.v, m->source.n, "path"));
}

/* The rules of a server node, one function each, in the order they apply (server_rules). */

static void rule_model_path(struct ctx *c, struct snode *n)
{
	npl_rs_put_flag(c, &n->l, "model-path", npl_rs_from_site(NPL_SITE_MODEL_PATH, "rule model-path"), 1,
			npl_rs_ref(c, NPL_SITE_MODEL_PATH, -1, 0));
}

static void rule_disaggregation(struct ctx *c, struct snode *n)
{
	if (n->sh->role != ROLE_PD_MIXED)
		npl_rs_put_flag(c, &n->l, "disaggregation-mode", npl_rs_from_rule("disaggregation", "the role"), 1,
				npl_rs_role_names[n->sh->role]);
}

static void rule_host(struct ctx *c, struct snode *n)
{
	const struct shape *sh = n->sh;
	struct top *t = &c->t;

	if (sh->site_key >= 0) {
		n->host = npl_rs_ref(c, sh->site_key, n->at, 0);
		npl_rs_put_flag(c, &n->l, "host", npl_rs_from_site(sh->site_key, "rule host: this node's address"), 1, n->host);
	} else {
		n->host = NULL;
		if (!t->entry_host.s)
			c->rc = npl_error(c->d, NULL, "no entry_host in the recipe database");
		else
			npl_rs_put_flag(c, &n->l, "host", t->entry_host.o, 1, entry_value(c));
	}
}

static void rule_ports(struct ctx *c, struct snode *n)
{
	struct top *t = &c->t;

	if (n->slot)
		npl_rs_put_flag(c, &n->l, "port", npl_rs_from_rule("ports", npl_arena_printf(c->a, "the role's port + %d: instance slot %d of a shared node", n->slot, n->slot)),
				1, npl_rs_num(c, n->iport));
	else
		npl_rs_put_flag(c, &n->l, "port", n->sh->role == ROLE_PD_MIXED ? t->port_entry.o
						   : n->sh->role == ROLE_PREFILL ? t->port_prefill.o : t->port_decode.o,
				1, npl_rs_num(c, n->port));
}

static void rule_bootstrap_port(struct ctx *c, struct snode *n)
{
	if (n->sh->role == ROLE_PREFILL)
		npl_rs_put_flag(c, &n->l, "disaggregation-bootstrap-port",
				npl_rs_from_rule("bootstrap-port", "ports.bootstrap + the prefill instance"), 1,
				npl_rs_num(c, port_or(c, &c->t.port_bootstrap, "bootstrap") + n->inst));
}

static void rule_nnodes(struct ctx *c, struct snode *n)
{
	if (n->multi || npl_rs_has_explicit(n->m, "nnodes"))
		npl_rs_put_flag(c, &n->l, "nnodes",
				npl_rs_from_rule("nodes", npl_arena_printf(c->a, "%d cards / %d cards per node",
									   n->sh->cards, c->hw->cards_per_node.v)),
				1, npl_rs_num(c, n->sh->nodes_per_instance));
}

static void rule_dist_init_addr(struct ctx *c, struct snode *n)
{
	struct top *t = &c->t;
	struct npl_buf b = NPL_BUF_INIT;

	if (!n->multi && !npl_rs_has_explicit(n->m, "dist-init-addr"))
		return;
	if (n->sh->site_key >= 0)
		npl_pval_ref(&b, n->sh->site_key, n->first, 1);
	else
		entry_url(c, &b, "127.0.0.1");
	npl_buf_printf(&b, ":%d", port_or(c, &t->port_dist, "dist_init"));
	npl_rs_put_flag(c, &n->l, "dist-init-addr",
			npl_rs_from_rule("dist-init-addr", "the instance's first node"), 1,
			npl_arena_strdup(c->a, npl_buf_str(&b)));
	npl_buf_release(&b);
}

static void rule_node_rank(struct ctx *c, struct snode *n)
{
	if (n->multi || npl_rs_has_explicit(n->m, "node-rank"))
		npl_rs_put_flag(c, &n->l, "node-rank", npl_rs_from_rule("nodes", "this node's rank in its instance"), 1,
				npl_rs_num(c, n->rank));
}

static void rule_tp_flag(struct ctx *c, struct snode *n)
{
	npl_rs_put_flag(c, &n->l, "tp-size", npl_rs_from_rule("tp-size", n->tp_why), 1, n->tp);
}

static void rule_placement(struct ctx *c, struct snode *n)
{
	const struct npl_topology *topo = n->sh->topo;

	if (topo && topo->first_card.set)
		npl_rs_put_flag(c, &n->l, "base-gpu-id",
				npl_rs_from_rule("placement", npl_arena_printf(c->a, "first card %d x %d dies per card",
										topo->first_card.v,
										c->hw->dies_per_card.v)),
				1, npl_rs_num(c, topo->first_card.v * c->hw->dies_per_card.v));
}

static void rule_data_flags(struct ctx *c, struct snode *n)
{
	npl_rs_put_data_flags(c, n->sh->role, &n->l, n->m, n->tp, n->tp_why);
}

static void rule_speculative(struct ctx *c, struct snode *n)
{
	npl_rs_put_spec(c, &n->l, n->spec);
}

/* environment: the layers, then the rules */
static void rule_layer_env(struct ctx *c, struct snode *n)
{
	const struct merged *m = n->m;
	struct launch *l = &n->l;

	for (int i = 0; i < m->env.n; i++)
		if (m->env.v[i].val) {
			npl_rs_put_env(c, l, m->env.v[i].name, m->env.v[i].val, m->env.v[i].o);
			l->env.v[l->env.n - 1].op = m->env.v[i].op;
			l->env.v[l->env.n - 1].sep = m->env.v[i].sep;
			l->env.v[l->env.n - 1].before_source = m->env.v[i].before_source;
		}
}

/* a layer's value of a variable the socket-ifname rule sets is honoured */
static void rule_socket_ifname(struct ctx *c, struct snode *n)
{
	struct top *t = &c->t;
	struct launch *l = &n->l;

	if (!n->ifname)
		return;
	for (int i = 0; i < t->nifname_env; i++) {
		int j;

		for (j = 0; j < l->env.n; j++)
			if (!strcmp(l->env.v[j].name, t->ifname_env[i].s))
				break;
		if (j < l->env.n) {
			l->env.v[j].o.why = "the recipe's own value: the socket-ifname rule yields to it";
			continue;
		}
		npl_rs_put_env(c, l, t->ifname_env[i].s, npl_rs_ref(c, NPL_SITE_IFNAME, -1, 0),
			       npl_rs_from_site(NPL_SITE_IFNAME, "rule socket-ifname"));
	}
}

/* the dies an instance owns on its shared node */
static void rule_devices(struct ctx *c, struct snode *n)
{
	const struct shape *sh = n->sh;
	struct npl_buf b = NPL_BUF_INIT;
	int base;

	if (sh->per_node <= 1)
		return;
	base = n->slot * sh->dies + (sh->topo && sh->topo->first_card.set
				     ? sh->topo->first_card.v * c->hw->dies_per_card.v : 0);
	for (int d = 0; d < sh->dies; d++)
		npl_buf_printf(&b, "%s%d", d ? "," : "", base + d);
	npl_rs_put_env(c, &n->l, "ASCEND_RT_VISIBLE_DEVICES", npl_arena_strdup(c->a, npl_buf_str(&b)),
		       npl_rs_from_rule("devices", npl_arena_printf(c->a, "instance slot %d of %d on its node: %d dies each",
								    n->slot, sh->per_node, sh->dies)));
	npl_buf_release(&b);
}

static void rule_mf_store(struct ctx *c, struct snode *n)
{
	struct npl_buf b = NPL_BUF_INIT;

	if (n->sh->role == ROLE_PD_MIXED)
		return;
	npl_buf_puts(&b, "tcp://");
	npl_pval_ref(&b, NPL_SITE_PREFILL_IP, 0, 1);
	npl_buf_printf(&b, ":%d", port_or(c, &c->t.port_store, "mf_store"));
	npl_rs_put_env(c, &n->l, "ASCEND_MF_STORE_URL", npl_arena_strdup(c->a, npl_buf_str(&b)),
		       npl_rs_from_rule("mf-store", "the first prefill node, ports.mf_store"));
	npl_buf_release(&b);
}

static void rule_overrides(struct ctx *c, struct snode *n)
{
	npl_rs_apply_overrides(c, n->sh->role, &n->l, n->tp);
}

/* The steps of a server node, in order: the rule flags, the data flags, the environment, then
 * --set/--unset/--env/--unset-env. The order is the order of the flags in the plan. */
static const struct {
	const char *name;
	void (*apply)(struct ctx *c, struct snode *n);
} server_rules[] = {
	{"model-path", rule_model_path},
	{"disaggregation", rule_disaggregation},
	{"host", rule_host},
	{"ports", rule_ports},
	{"bootstrap-port", rule_bootstrap_port},
	{"nodes (nnodes)", rule_nnodes},
	{"dist-init-addr", rule_dist_init_addr},
	{"nodes (node-rank)", rule_node_rank},
	{"tp-size", rule_tp_flag},
	{"placement", rule_placement},
	{"data flags", rule_data_flags},
	{"speculative", rule_speculative},
	{"layer env", rule_layer_env},
	{"socket-ifname", rule_socket_ifname},
	{"devices", rule_devices},
	{"mf-store", rule_mf_store},
	{"overrides", rule_overrides},
};

/* A server node in the plan: where it stands, its env, launch command and flags. */
static cJSON *server_node_json(struct ctx *c, struct snode *n)
{
	cJSON *node = cJSON_CreateObject();

	cJSON_AddNumberToObject(node, "index", n->at);
	cJSON_AddNumberToObject(node, "instance", n->inst);
	cJSON_AddNumberToObject(node, "rank", n->rank);
	if (n->sh->per_node > 1)
		cJSON_AddNumberToObject(node, "slot", n->slot);
	if (n->host)
		cJSON_AddStringToObject(node, "address", n->host);
	else
		cJSON_AddNullToObject(node, "address");
	cJSON_AddItemToObject(node, "env", npl_rs_env_json(&n->l));
	cJSON_AddItemToObject(node, "launch", npl_rs_launch_json(c, NPL_PROG_SERVER));
	cJSON_AddItemToObject(node, "flags", npl_rs_flags_json(&n->l));
	return node;
}

/* The endpoint of an instance, from its first node: the --host a layer set, else the node's
 * address, else the entry host. */
static cJSON *server_endpoint_json(struct ctx *c, const struct snode *n)
{
	const struct shape *sh = n->sh;
	struct top *t = &c->t;
	struct npl_buf b = NPL_BUF_INIT;
	cJSON *ep = cJSON_CreateObject();
	const char *own = npl_rs_own_host(&n->l);

	npl_buf_puts(&b, "http://");
	if (own && strchr(own, ':') && own[0] != '[') {
		npl_buf_puts(&b, "[");
		npl_pval_lit(&b, own);
		npl_buf_puts(&b, "]");
	} else if (own)
		npl_pval_lit(&b, own);
	else if (sh->site_key >= 0)
		npl_pval_ref(&b, sh->site_key, n->at, 1);
	else
		entry_url(c, &b, "127.0.0.1");
	npl_buf_printf(&b, ":%d", n->iport);
	cJSON_AddNumberToObject(ep, "instance", n->inst);
	cJSON_AddStringToObject(ep, "url", npl_buf_str(&b));
	if (sh->role == ROLE_PREFILL)
		cJSON_AddNumberToObject(ep, "bootstrap_port",
					port_or(c, &t->port_bootstrap, "bootstrap") + n->inst);
	npl_buf_release(&b);
	return ep;
}

/* The nodes of a server role: per node its rule flags, data flags and env (server_rules). */
cJSON *npl_rs_server_role(struct ctx *c, const struct shape *sh)
{
	struct merged m;
	struct spec_state spec;
	struct snode n;
	cJSON *role = cJSON_CreateObject(), *nodes = cJSON_CreateArray(), *eps = cJSON_CreateArray();
	int pp, tpv, k;
	size_t s;

	memset(&n, 0, sizeof(n));
	n.sh = sh;
	n.m = &m;
	n.spec = &spec;
	n.port = role_port(c, sh);
	n.ifname = !c->t.socket_ifname.set || c->t.socket_ifname.v;
	n.multi = sh->nodes_per_instance > 1;
	npl_rs_merge_role(c, sh->role, &m);
	npl_rs_merge_spec(c, sh->role, &spec);
	tpv = rule_tp_size(c, &n, &pp);
	check_parallel(c, sh, &m, tpv, pp);
	check_mf_store(c, sh, &m);
	server_head(c, role, sh, &m, tpv, pp);

	for (k = 0; k < sh->instances * sh->nodes_per_instance; k++) {
		n.inst = k / sh->nodes_per_instance;
		n.rank = k % sh->nodes_per_instance;
		n.first = node_of_rank(sh, n.inst, 0);
		n.at = node_of_rank(sh, n.inst, n.rank);
		n.slot = slot_of(sh, n.inst);
		n.iport = n.port + n.slot;
		n.host = NULL;
		memset(&n.l, 0, sizeof(n.l));
		for (s = 0; s < NPL_ARRAY_SIZE(server_rules); s++)
			server_rules[s].apply(c, &n);
		cJSON_AddItemToArray(nodes, server_node_json(c, &n));
		if (n.rank == 0)
			cJSON_AddItemToArray(eps, server_endpoint_json(c, &n));
	}
	cJSON_AddItemToObject(role, "nodes", nodes);
	cJSON_AddItemToObject(role, "endpoints", eps);
	mark_env(role, &m);
	if (sh->per_node > 1)
		cJSON_AddTrueToObject(role, "shared_nodes");
	cJSON_AddNumberToObject(role, "nodes_count", npl_rs_nodes_of(sh));
	return role;
}

/* One launch of a client (the router, a benchmark): a node of its role, without an address.
 * name: the benchmark's, of several; else NULL. */
static cJSON *client_node(struct ctx *c, enum role r, struct launch *l, const struct merged *m, const char *name)
{
	cJSON *node = cJSON_CreateObject();

	for (int i = 0; i < m->env.n; i++)
		if (m->env.v[i].val) {
			npl_rs_put_env(c, l, m->env.v[i].name, m->env.v[i].val, m->env.v[i].o);
			l->env.v[l->env.n - 1].op = m->env.v[i].op;
			l->env.v[l->env.n - 1].sep = m->env.v[i].sep;
		}
	npl_rs_apply_overrides(c, r, l, NULL);
	cJSON_AddNumberToObject(node, "index", 0); /* a client runs on one node */
	if (name)
		cJSON_AddStringToObject(node, "name", name);
	cJSON_AddNullToObject(node, "address");
	cJSON_AddItemToObject(node, "env", npl_rs_env_json(l));
	cJSON_AddItemToObject(node, "launch",
			      npl_rs_launch_json(c, r == ROLE_ROUTER ? NPL_PROG_ROUTER : NPL_PROG_BENCH));
	cJSON_AddItemToObject(node, "flags", npl_rs_flags_json(l));
	return node;
}

/* A client's role: its launches (nodes), made by client_node(). */
static cJSON *client_role(struct ctx *c, enum role r, cJSON *nodes, const struct merged *m)
{
	cJSON *role = cJSON_CreateObject();

	cJSON_AddStringToObject(role, "role", npl_rs_role_names[r]);
	cJSON_AddStringToObject(role, "script", npl_arena_printf(c->a, "%s.sh", npl_rs_role_names[r]));
	cJSON_AddStringToObject(role, "program", npl_rs_role_names[r]);
	cJSON_AddNullToObject(role, "node_list");
	cJSON_AddItemToObject(role, "unset", npl_rs_names_json(m->unset.v, m->unset.n, "name"));
	cJSON_AddItemToObject(role, "source", cJSON_CreateArray());
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
	npl_rs_put_flag(c, &l, "host", t->entry_host.o, 1, entry_value(c));
	npl_rs_put_flag(c, &l, "port", t->port_entry.o, 1, npl_rs_num(c, port_or(c, &t->port_entry, "entry")));
	npl_rs_put_data_flags(c, ROLE_ROUTER, &l, &m, NULL, NULL);
	{
		cJSON *nodes = cJSON_CreateArray();

		cJSON_AddItemToArray(nodes, client_node(c, ROLE_ROUTER, &l, &m, NULL));
		role = client_role(c, ROLE_ROUTER, nodes, &m);
	}
	{
		cJSON *eps = cJSON_CreateArray(), *ep = cJSON_CreateObject();
		struct npl_buf b = NPL_BUF_INIT;

		npl_buf_puts(&b, "http://");
		entry_url(c, &b, "");
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

/* Where the benchmark connects: where the entry point listens. A PD-disaggregated deployment's
 * router listens on the entry host; a PD-mixed server on its first node's --host, which is that
 * node's own address when the server spans nodes (at the entry host nothing would answer). */
static void bench_host(struct ctx *c, struct launch *l, const cJSON *server)
{
	struct top *t = &c->t;
	const cJSON *node = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(server, "nodes"), 0), *f;
	const char *host = NULL, *entry = entry_value(c);

	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(node, "flags"))
		if (!host && npl_json_str(f, "flag") && !strcmp(npl_json_str(f, "flag"), "--host"))
			host = cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(f, "values"), 0));
	if (host && strcmp(host, entry))
		npl_rs_put_flag(c, l, "host", npl_rs_from_rule("bench-host", "where the entry point listens: the PD-mixed server's first node's --host"),
				1, npl_arena_strdup(c->a, host));
	else
		npl_rs_put_flag(c, l, "host", t->entry_host.o, 1, entry);
}

/* One benchmark's launch: the rules' flags from the sizes in c->t, then the flags of m. */
static void bench_launch(struct ctx *c, struct launch *l, const struct merged *m, const cJSON *server)
{
	struct top *t = &c->t;
	const char *ds = t->bench_dataset.s;
	int in, out, prompts;

	memset(l, 0, sizeof(*l));
	if (!ds) {
		c->rc = npl_error(c->d, &c->R->loc, "the recipe needs bench.dataset");
		ds = "random";
	}
	npl_rs_put_flag(c, l, "dataset-name", t->bench_dataset.o, 1, ds);
	npl_rs_put_flag(c, l, "backend", npl_rs_from_rule("bench-backend", "sglang-oai-chat for images, else sglang"),
		 1, !strcmp(ds, "image") ? "sglang-oai-chat" : "sglang");
	bench_host(c, l, server);
	npl_rs_put_flag(c, l, "port", t->port_entry.o, 1, npl_rs_num(c, port_or(c, &t->port_entry, "entry")));
	npl_rs_put_flag(c, l, "max-concurrency", t->bench_concurrency.o, 1,
		 npl_rs_num(c, need_bench(c, &t->bench_concurrency, "concurrency", ds)));
	prompts = need_bench(c, &t->bench_prompts, "prompts", ds);
	npl_rs_put_flag(c, l, "num-prompts", t->bench_prompts.o, 1, npl_rs_num(c, prompts));
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
		npl_rs_put_flag(c, l, "gsp-num-groups",
			 t->bench_groups.set ? t->bench_groups.o : npl_rs_from_rule("bench-gsp", "one prefix group"), 1,
			 npl_rs_num(c, groups));
		npl_rs_put_flag(c, l, "gsp-prompts-per-group", npl_rs_from_rule("bench-gsp", "prompts / groups"), 1,
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
		npl_rs_put_flag(c, l, "gsp-system-prompt-len", sys_o, 1, npl_arena_printf(c->a, "%lld", sys));
		npl_rs_put_flag(c, l, "gsp-question-len", q_o, 1, npl_arena_printf(c->a, "%lld", q));
		npl_rs_put_flag(c, l, "gsp-output-len", t->bench_output.o, 1, npl_rs_num(c, out));
	} else {
		if (!strcmp(ds, "image")) {
			if (!t->bench_resolution.s)
				c->rc = npl_error(c->d, &c->R->loc, "the image benchmark needs bench.resolution");
			npl_rs_put_flag(c, l, "image-resolution", t->bench_resolution.o, 1,
				 npl_rs_lit(c, t->bench_resolution.s ? t->bench_resolution.s : ""));
			npl_rs_put_flag(c, l, "image-count",
				 t->bench_images.set ? t->bench_images.o : npl_rs_from_rule("bench-image", "one image"), 1,
				 npl_rs_num(c, t->bench_images.set ? t->bench_images.v : 1));
		}
		npl_rs_put_flag(c, l, "random-input-len", t->bench_input.o, 1, npl_rs_num(c, in));
		npl_rs_put_flag(c, l, "random-output-len", t->bench_output.o, 1, npl_rs_num(c, out));
		npl_rs_put_flag(c, l, "random-range-ratio", npl_rs_from_rule("bench-lengths", "fixed lengths"), 1, "1");
	}
	npl_rs_put_data_flags(c, ROLE_BENCH, l, m, NULL, NULL);
}

/* The workload of a benchmark launch as verify tells runs apart by it (plan.h npl_bench_workload). */
static const char *workload(struct ctx *c, const cJSON *node)
{
	struct npl_buf b = NPL_BUF_INIT;
	const char *w;
	size_t i;

	for (i = 0; i < NPL_BENCH_NWORKLOAD; i++) {
		const char *key = npl_bench_workload[i][1];
		const cJSON *f, *v;

		npl_buf_printf(&b, "%s=", key);
		cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(node, "flags"))
			if (!strcmp(npl_json_str(f, "flag"), key))
				cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(f, "values"))
					npl_buf_printf(&b, "%s ", v->valuestring);
		npl_buf_putc(&b, ';');
	}
	w = npl_arena_strdup(c->a, npl_buf_str(&b));
	npl_buf_release(&b);
	return w;
}

/* The benchmark role: one launch, or one per benchmark of the recipe's several (each its sizes
 * over bench's, its flags over bench's), run in order. */
cJSON *npl_rs_bench_role(struct ctx *c, const cJSON *server)
{
	struct merged m;
	struct launch l;
	cJSON *nodes = cJSON_CreateArray();
	const struct npl_layer *R = c->R;
	int k;

	npl_rs_merge_role(c, ROLE_BENCH, &m);
	if (!R->nbenchmarks) {
		bench_launch(c, &l, &m, server);
		cJSON_AddItemToArray(nodes, client_node(c, ROLE_BENCH, &l, &m, NULL));
	}
	for (k = 0; k < R->nbenchmarks; k++) {
		struct top keep = c->t;
		struct merged own = m;

		npl_rs_take_bench(&c->t, &R->benchmarks[k].spec, R);
		npl_rs_merge_bench_item(c, &own, &R->benchmarks[k]);
		bench_launch(c, &l, &own, server);
		/* all on the one node, run in turn */
		cJSON_AddItemToArray(nodes, client_node(c, ROLE_BENCH, &l, &own, R->benchmarks[k].name));
		c->t = keep;
		/* verify judges each on its last run: their runs must tell apart */
		for (int j = 0; j < k; j++)
			if (!strcmp(workload(c, cJSON_GetArrayItem(nodes, j)), workload(c, cJSON_GetArrayItem(nodes, k))))
				c->rc = npl_error(c->d, &R->benchmarks[k].loc,
						  "benchmarks '%s' and '%s' run the same workload (dataset, concurrency, lengths, "
						  "request rate): their results could not be told apart",
						  R->benchmarks[j].name, R->benchmarks[k].name);
	}
	return client_role(c, ROLE_BENCH, nodes, &m);
}
