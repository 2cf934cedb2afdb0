/*
 * resolve.c: layers + rules -> plan; see plan.h. The layers are merged in a
 * fixed order (defaults, hardware, model, recipe, then site values and user
 * overrides); the rules then derive what the seed pages compute by hand.
 * Every value carries the origin that set it. This file holds the origins and
 * values, the emission helpers, the roles' shapes, the site checks and
 * npl_resolve(); merge.c merges the layers, flags.c writes one launch's flags,
 * roles.c builds the roles, container.c the container block
 * (resolve_internal.h is what they share).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/arena.h"
#include "npulaunch/text.h"

#include "resolve_internal.h"

const char *const npl_rs_role_names[ROLE_COUNT] = {"pd-mixed", "prefill", "decode", "router",
						   "bench"};

struct origin npl_rs_from_layer(const struct npl_layer *L, struct npl_loc loc)
{
	struct origin o = {npl_layer_kind_name(L->kind), L->id, loc, NULL};

	return o;
}

struct origin npl_rs_from_rule(const char *rule, const char *why)
{
	struct origin o = {"rule", rule, {NULL, 0, 0}, why};

	return o;
}

/* A value that is a site value, put in place by a rule. */
struct origin npl_rs_from_site(enum npl_site_key k, const char *why)
{
	struct origin o = {"site", npl_site_key_name(k), {NULL, 0, 0}, why};

	return o;
}

const char *npl_rs_lit(struct ctx *c, const char *s)
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

const char *npl_rs_ref(struct ctx *c, enum npl_site_key k, int index, int url)
{
	struct npl_buf b = NPL_BUF_INIT;
	char *r;

	npl_pval_ref(&b, k, index, url);
	r = npl_arena_strdup(c->a, npl_buf_str(&b));
	npl_buf_release(&b);
	return r;
}

const char *npl_rs_num(struct ctx *c, int v)
{
	return npl_arena_printf(c->a, "%d", v);
}

/* ---- JSON helpers ------------------------------------------------------ */

cJSON *npl_rs_origin_json(const struct origin *o)
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

cJSON *npl_rs_valued(cJSON *value, const struct origin *o)
{
	cJSON *j = cJSON_CreateObject();

	cJSON_AddItemToObject(j, "value", value);
	cJSON_AddItemToObject(j, "origin", npl_rs_origin_json(o));
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

/* ---- emission: one launch, the tuning, what a plan needs ----------------- */

cJSON *npl_rs_flags_json(const struct launch *l)
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
		cJSON_AddItemToObject(o, "origin", npl_rs_origin_json(&f->o));
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static int envcmp(const void *x, const void *y)
{
	return strcmp(((const struct renv *)x)->name, ((const struct renv *)y)->name);
}

cJSON *npl_rs_env_json(struct launch *l)
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
		cJSON_AddItemToObject(o, "origin", npl_rs_origin_json(&l->env.v[i].o));
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

cJSON *npl_rs_names_json(const struct rname *v, int n, const char *key)
{
	cJSON *a = cJSON_CreateArray();
	int i;

	for (i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, key, v[i].name);
		cJSON_AddItemToObject(o, "origin", npl_rs_origin_json(&v[i].o));
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

/* tuning.affinity (issue 26) when some layer set a key of it, else NULL; a key no layer set has
 * its default, stated as a rule's as the container's privileged is: policy none, 5 CPUs per die
 * (two for the die's interrupts, the main process, two runtime threads: vllm-ascend's
 * cpu_binding.py), no interrupt binding. */
static cJSON *affinity_json(const struct top *t)
{
	struct origin def = npl_rs_from_rule("affinity", "the default: no layer sets it");
	const struct origin *po = t->aff_policy.s ? &t->aff_policy.o : &def;
	const struct origin *mo = t->aff_min_cpus.set ? &t->aff_min_cpus.o : &def;
	const struct origin *io = t->aff_irqs.set ? &t->aff_irqs.o : &def;
	cJSON *a;

	if (!t->aff_policy.s && !t->aff_min_cpus.set && !t->aff_irqs.set)
		return NULL;
	a = cJSON_CreateObject();
	cJSON_AddItemToObject(a, "policy", npl_rs_valued(cJSON_CreateString(t->aff_policy.s ? t->aff_policy.s : "none"), po));
	cJSON_AddItemToObject(a, "min_cpus_per_die",
			      npl_rs_valued(cJSON_CreateNumber(t->aff_min_cpus.set ? t->aff_min_cpus.v : 5), mo));
	cJSON_AddItemToObject(a, "irqs", npl_rs_valued(cJSON_CreateBool(t->aff_irqs.set && t->aff_irqs.v), io));
	return a;
}

cJSON *npl_rs_tuning_json(struct ctx *c)
{
	cJSON *aff = affinity_json(&c->t);
	cJSON *t = cJSON_CreateObject(), *s = cJSON_CreateArray();
	int i;
	size_t k;

	if (c->t.governor.s) {
		cJSON *g = cJSON_CreateObject();

		cJSON_AddStringToObject(g, "value", c->t.governor.s);
		cJSON_AddItemToObject(g, "origin", npl_rs_origin_json(&c->t.governor.o));
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
		cJSON_AddItemToObject(o, "origin", npl_rs_origin_json(&e->o));
		cJSON_AddItemToArray(s, o);
	}
	cJSON_AddItemToObject(t, "sysctl", s);
	if (aff)
		cJSON_AddItemToObject(t, "affinity", aff);
	return t;
}

cJSON *npl_rs_launch_json(struct ctx *c, int prog)
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
		argv[i] = npl_rs_lit(c, c->t.launch[prog].argv[i].s);
	return strings_json(argv, n);
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

/* ---- the roles' shapes, the site values, the recipe -------------------- */

/* The nodes a role takes: each instance's, or the shared nodes its instances fill. */
int npl_rs_nodes_of(const struct shape *sh)
{
	return sh->per_node > 1 ? (sh->instances + sh->per_node - 1) / sh->per_node
				: sh->instances * sh->nodes_per_instance;
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
						 npl_rs_role_names[sh[i].role], sh[i].cards, cpn, c->hw->id);
			sh[i].nodes_per_instance = sh[i].cards / cpn;
			if (sh[i].per_node > 1)
				return npl_error(c->d, &sh[i].topo->per_node.loc, "%s instances of %d cards span nodes: they cannot share one",
						 npl_rs_role_names[sh[i].role], sh[i].cards);
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
			want[sh[i].site_key] = npl_rs_nodes_of(&sh[i]);
	for (k = NPL_SITE_NODE_IP; k <= NPL_SITE_ENTRY_IP; k++) {
		int have = s->key[k].n;

		if (!have || have == want[k])
			continue;
		if (!want[k]) {
			if (npl_site_unused(c->d, c->o->strict, (enum npl_site_key)k, npl_arena_printf(c->a, "recipe '%s'", c->R->id),
					    k == NPL_SITE_NODE_IP ? "its server runs on one node" :
					    k == NPL_SITE_ENTRY_IP ? "only the job of --target slurm gives it" :
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

/* The SGLang version floor: the recipe's, else its model's; null when neither states one. */
static cJSON *sglang_json(const struct ctx *c)
{
	const struct npl_layer *L = c->R->sglang_min ? c->R : c->model;
	cJSON *o;

	if (!L->sglang_min)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "floor", L->sglang_floor.s);
	cJSON_AddStringToObject(o, "min", L->sglang_min);
	cJSON_AddStringToObject(o, "layer", npl_layer_kind_name(L->kind));
	cJSON_AddItemToObject(o, "at", cJSON_CreateString(npl_arena_printf(c->a, "%s:%d:%d", L->sglang_floor.loc.file,
									     L->sglang_floor.loc.line, L->sglang_floor.loc.col)));
	return o;
}

/* One latency target: "NAME" as the recipe wrote it and "NAME_ms", or both null. */
static void target_json(cJSON *o, const char *name, long long us, const char *text)
{
	char ms[16];

	snprintf(ms, sizeof(ms), "%s_ms", name);
	if (us >= 0) {
		cJSON_AddStringToObject(o, name, text);
		cJSON_AddNumberToObject(o, ms, (double)us / 1000.0);
	} else {
		cJSON_AddNullToObject(o, name);
		cJSON_AddNullToObject(o, ms);
	}
}

void npl_recipe_targets_json(cJSON *o, const struct npl_layer *R)
{
	target_json(o, "tpot", R->tpot_us, R->tpot_text);
	target_json(o, "ttft", R->ttft_us, R->ttft_text);
	target_json(o, "e2e", R->e2e_us, R->e2e_text);
	if (R->throughput >= 0)
		cJSON_AddNumberToObject(o, "throughput", R->throughput);
	else
		cJSON_AddNullToObject(o, "throughput");
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
	npl_recipe_targets_json(o, R);
	if (R->tier)
		cJSON_AddStringToObject(o, "tier", R->tier);
	cJSON_AddItemToObject(o, "sglang_version", sglang_json(c));
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

/* ---- the plan ------------------------------------------------------------- */

/* Each role's "needs": the site values its nodes refer to (an address list as the whole list of
 * its role's nodes); all gathers the most of each over the roles, for the plan's. */
static void role_needs(cJSON *roles, const struct shape *sh, int nsh, struct needs *all)
{
	cJSON *it;

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
				n.count[sh[k].site_key] = npl_rs_nodes_of(&sh[k]);
		for (int k = 0; k < NPL_SITE_COUNT; k++) {
			if (n.count[k] > all->count[k])
				all->count[k] = n.count[k];
			all->url[k] |= n.url[k];
		}
		cJSON_AddItemToObject(it, "needs", needs_json(&n));
	}
}

cJSON *npl_resolve(const struct npl_db *db, const struct npl_layer *R,
		   const struct npl_resolve_opts *o, struct npl_diag *d)
{
	static const struct npl_resolve_opts none = {0};
	struct ctx *c = npl_xcalloc(1, sizeof(*c));
	struct npl_arena arena;
	struct shape sh[2];
	struct needs all = {{0}, {0}};
	cJSON *plan = NULL, *roles;
	int nsh, i;

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
	npl_rs_check_env_names(c);
	npl_rs_merge_top(c);
	if (c->o->target && c->o->target->entry_host) {
		c->t.entry_host.s = c->o->target->entry_host;
		c->t.entry_host.o = npl_rs_from_rule("entry-host", c->o->target->entry_why);
		/* a plan value (${entry-ip[0]}): the address the target's engine gives */
		c->t.entry_pval = strstr(c->t.entry_host.s, "${") != NULL;
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
			cJSON_AddItemToObject(plan, "container", npl_rs_container_json(c));
	}
	roles = cJSON_CreateArray();
	for (i = 0; i < nsh; i++)
		cJSON_AddItemToArray(roles, npl_rs_server_role(c, &sh[i]));
	if (R->mode == NPL_MODE_PD_DISAGG)
		cJSON_AddItemToArray(roles, npl_rs_router_role(c, &sh[0], &sh[1]));
	cJSON_AddItemToArray(roles, npl_rs_bench_role(c, R->mode == NPL_MODE_PD_DISAGG ? NULL : cJSON_GetArrayItem(roles, 0)));
	role_needs(roles, sh, nsh, &all);
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
	struct ctx *c = npl_xcalloc(1, sizeof(*c));
	struct npl_arena arena;
	cJSON *t = NULL;

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
		npl_rs_merge_top(c);
		t = npl_rs_tuning_json(c);
	}
	npl_arena_release(&arena);
	free(c);
	return t;
}
