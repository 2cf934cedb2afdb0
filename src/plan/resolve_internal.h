/*
 * resolve_internal.h: private to the resolver's files in src/plan/ (resolve.c, merge.c,
 * flags.c, roles.c, container.c): the roles, the values with their origins, the merged
 * layers, one launch's flags and environment, the shapes of the roles, the resolver's
 * context, and the functions the files share. Included by those files only.
 */
#ifndef NPL_RESOLVE_INTERNAL_H
#define NPL_RESOLVE_INTERNAL_H

#include <cjson/cJSON.h>

#include "npulaunch/engine.h"
#include "npulaunch/plan.h"
#include "npulaunch/resolve.h"
#include "npulaunch/strmap.h"

/* The roles of a plan: three server roles, the router, the benchmark. */
enum role {
	ROLE_PD_MIXED,
	ROLE_PREFILL,
	ROLE_DECODE,
	ROLE_ROUTER,
	ROLE_BENCH,
	ROLE_COUNT,
};

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
	struct ostr aff_policy;       /* tuning.affinity, key by key (issue 26) */
	struct oint aff_min_cpus, aff_irqs;
	struct oint port_entry, port_prefill, port_decode, port_bootstrap, port_dist, port_store;
	struct {
		const struct npl_str *argv;
		int n;
		struct origin o;
	} launch[3];
	struct ostr entry_host;
	int entry_pval;               /* entry_host is a plan value (a site reference), not text */
	const struct npl_str *ifname_env;
	int nifname_env;
	struct origin ifname_env_o;
	struct oint socket_ifname;
	struct ostr bench_dataset, bench_resolution;
	struct oint bench_input, bench_output, bench_prefix, bench_groups, bench_images,
		bench_concurrency, bench_prompts, bench_sys_len, bench_q_len;
};

/* The resolver's state while it writes one plan (or the tuning of one hardware profile). */
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

/* The flags and environment of one launch (a node of a role). */
struct launch {
	VEC(struct rflag) flags;
	VEC(struct renv) env;
	/* the names of the first flags.n / env.n entries, for the lookups of npl_rs_find_flag() and
	 * npl_rs_find_env(): kept up with the appends, built again when found stale */
	struct npl_strmap flagix, envix;
	int flagixn, envixn;
};

/* One role of the recipe and its sizes (resolve.c, shapes()). */
struct shape {
	enum role role;
	int instances, cards, nodes_per_instance, dies;
	int per_node;            /* instances sharing one node: each owns its dies and a port */
	const struct npl_topology *topo;
	int site_key;            /* the site list that holds this role's nodes, or -1 */
};

/* The name of each role, as the plan writes it (resolve.c). */
extern const char *const npl_rs_role_names[ROLE_COUNT];

/* ---- resolve.c: origins, values, emission helpers, shapes ---------------- */

/* The origin of a value a layer set at loc. */
struct origin npl_rs_from_layer(const struct npl_layer *L, struct npl_loc loc);
/* The origin of a value a rule derived, and how. */
struct origin npl_rs_from_rule(const char *rule, const char *why);
/* The origin of a site value a rule put in place. */
struct origin npl_rs_from_site(enum npl_site_key k, const char *why);
/* A layer's text as a plan value (a '$' escaped). */
const char *npl_rs_lit(struct ctx *c, const char *s);
/* A reference to a site value (index -1: the whole value; url: as in a URL). */
const char *npl_rs_ref(struct ctx *c, enum npl_site_key k, int index, int url);
/* A number as a plan value. */
const char *npl_rs_num(struct ctx *c, int v);
/* An origin as the plan writes it. */
cJSON *npl_rs_origin_json(const struct origin *o);
/* {value, origin}, taking value. */
cJSON *npl_rs_valued(cJSON *value, const struct origin *o);
/* A launch's live flags, its environment (sorted by name), names with their origins. */
cJSON *npl_rs_flags_json(const struct launch *l);
cJSON *npl_rs_env_json(struct launch *l);
cJSON *npl_rs_names_json(const struct rname *v, int n, const char *key);
/* The node tuning: the CPU governor, the sysctls and, when a layer set any of it, the affinity. */
cJSON *npl_rs_tuning_json(struct ctx *c);
/* The launch command of a program (NPL_PROG_*). */
cJSON *npl_rs_launch_json(struct ctx *c, int prog);
/* The nodes a role takes. */
int npl_rs_nodes_of(const struct shape *sh);

/* ---- merge.c: the layers merged --------------------------------------------- */

/* Every environment name the layers and the overrides set or unset, against the reserved ones. */
void npl_rs_check_env_names(struct ctx *c);
/* A flag name as SGLang's argparse reads it (an alias or a prefix made the full name). */
const char *npl_rs_canon_flag(struct ctx *c, int prog, const char *name, const struct npl_loc *loc,
			      const char *as);
/* What the layers say for one role; the top-level settings; a server role's speculative block. */
void npl_rs_merge_role(struct ctx *c, enum role r, struct merged *m);
void npl_rs_merge_top(struct ctx *c);
void npl_rs_merge_spec(struct ctx *c, enum role r, struct spec_state *st);

/* ---- flags.c: the flags and environment of one launch ---------------------------- */

/* A flag with its n values (const char *) and origin. */
void npl_rs_put_flag(struct ctx *c, struct launch *l, const char *name, struct origin o, int n, ...);
/* An environment variable, set or replaced. */
/* The first live flag of l named name, the first variable: their index, or -1; in time
 * independent of the launch's size (any number of --set and --env). */
int npl_rs_find_flag(struct ctx *c, struct launch *l, const char *name);
int npl_rs_find_env(struct ctx *c, struct launch *l, const char *name);
void npl_rs_put_env(struct ctx *c, struct launch *l, const char *name, const char *val, struct origin o);
/* 1 when the layers list flag name under 'explicit'. */
int npl_rs_has_explicit(const struct merged *m, const char *name);
/* --set/--unset/--env/--unset-env on one launch; tp: the rule's tp-size of a server, or NULL. */
void npl_rs_apply_overrides(struct ctx *c, enum role r, struct launch *l, const char *tp);
/* The data flags of a merged role, after the rule flags; reserved names are refused. */
void npl_rs_put_data_flags(struct ctx *c, enum role r, struct launch *l, const struct merged *m,
			   const char *tp, const char *tp_why);
/* The --host a layer or an override set (not the rule's, nor a wildcard), or NULL. */
const char *npl_rs_own_host(const struct launch *l);
/* The --speculative-* flags from a role's speculative block. */
void npl_rs_put_spec(struct ctx *c, struct launch *l, const struct spec_state *st);

/* ---- roles.c: the roles of the plan ----------------------------------------- */

cJSON *npl_rs_server_role(struct ctx *c, const struct shape *sh);
cJSON *npl_rs_router_role(struct ctx *c, const struct shape *pre, const struct shape *dec);
/* The benchmark's role; server: the PD-mixed server's role (where it connects), else NULL. */
cJSON *npl_rs_bench_role(struct ctx *c, const cJSON *server);
/* The benchmark keys b of layer L over those in t (what merging the layers does for each). */
void npl_rs_take_bench(struct top *t, const struct npl_bench_spec *b, const struct npl_layer *L);
/* One of several benchmarks: its flags over the bench flags merged in m (m's own copy). */
void npl_rs_merge_bench_item(struct ctx *c, struct merged *m, const struct npl_bench_item *it);

/* ---- container.c ---------------------------------------------------------------- */

/* The container block: how a container runs this plan on the recipe's hardware. */
cJSON *npl_rs_container_json(struct ctx *c);

#endif
