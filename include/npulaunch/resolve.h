/*
 * resolve.h: layer plan. The resolver: npl_resolve() layers a recipe over the
 * defaults, its hardware profile and its model, applies the rules (tp-size,
 * nodes and ranks, ports, bootstrap ports, the store URL, the socket
 * interface, speculative decoding, router and benchmark arguments), the site
 * values and the user's overrides, and returns the plan document (plan.h).
 *
 * Ownership: npl_resolve() returns a tree the caller frees with cJSON_Delete().
 */
#ifndef NPL_RESOLVE_H
#define NPL_RESOLVE_H

#include <cjson/cJSON.h>

#include "npulaunch/plan.h"
#include "npulaunch/recipe.h"
#include "npulaunch/site.h"

enum npl_override_kind {
	NPL_OV_SET_FLAG,
	NPL_OV_UNSET_FLAG,
	NPL_OV_SET_ENV,
	NPL_OV_UNSET_ENV,
};

/* A user override (--set, --unset, --env, --unset-env); role NULL = every server role. */
struct npl_override {
	enum npl_override_kind kind;
	const char *role;     /* pd-mixed, prefill, decode, router, bench; NULL = every server role */
	const char *name;     /* flag (without --) or variable name */
	const char **values;  /* --set: the flag's values (none: a switch); --env: one value */
	int nvalues;
	const char *text;     /* as the user wrote it, for messages */
};

struct npl_resolve_opts {
	const struct npl_site *site;       /* may be NULL */
	const struct npl_override *ov;
	int nov;
	int force;                         /* let overrides contradict the rules */
	const struct npl_plan_target *target;   /* NULL: the scripts */
	int strict;                        /* a site value it has no use for is an error, not a note */
};

/* Resolve one recipe into a plan; NULL and diagnostics on error. */
cJSON *npl_resolve(const struct npl_db *db, const struct npl_layer *recipe,
		   const struct npl_resolve_opts *o, struct npl_diag *d);

/* The recipe's measured targets into o, as list --json and the plan's recipe carry them: tpot,
 * ttft and e2e as written and in ms (each pair null where the recipe has none), throughput. */
void npl_recipe_targets_json(cJSON *o, const struct npl_layer *R);

/* The host tuning of a hardware profile alone (the defaults and the profile), as in a plan role. */
cJSON *npl_resolve_tuning(const struct npl_db *db, const struct npl_layer *hw, struct npl_diag *d);

#endif
