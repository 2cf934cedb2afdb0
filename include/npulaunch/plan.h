/*
 * plan.h: the resolver and the plan. npl_resolve() layers a recipe over the
 * defaults, its hardware profile and its model, applies the rules (tp-size,
 * nodes and ranks, ports, bootstrap ports, the store URL, the socket
 * interface, speculative decoding, router and benchmark arguments), the site
 * values and the user's overrides, and returns one cJSON document: per role
 * and node the environment set and unset, the files sourced, the host
 * tuning, the launch command and its flags, each value with its origin.
 * Every output (show, render, apply, status, bench) reads this document and
 * derives nothing.
 *
 * Plan values: argv and env values in the plan may refer to site values, so
 * that a script can be rendered before the addresses are known. A reference
 * is written ${KEY}, ${KEY[I]} or ${KEY[I]|url} (the URL form brackets IPv6
 * addresses); KEY is a site key such as prefill-ip; a literal $ is $$.
 *
 * Ownership: npl_resolve() returns a tree the caller frees with cJSON_Delete().
 * Included by the commands, the renderer, apply and their tests.
 */
#ifndef NPL_PLAN_H
#define NPL_PLAN_H

#include <cjson/cJSON.h>

#include "npulaunch/buf.h"
#include "npulaunch/recipe.h"
#include "npulaunch/site.h"

#define NPL_PLAN_FORMAT "npulaunch-plan/1"

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

/* What an output target other than the scripts asks of the plan (render --target). */
struct npl_plan_target {
	const char *name;                  /* "k8s": the plan records it, its origins name it */
	const char *entry_host;            /* the entry point listens there (NULL: the database's entry_host) */
	const char *entry_why;             /* why, for the origin */
	int container;                     /* add "container": the hardware's facts and the cluster values */
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

/* The host tuning of a hardware profile alone (the defaults and the profile), as in a plan role. */
cJSON *npl_resolve_tuning(const struct npl_db *db, const struct npl_layer *hw, struct npl_diag *d);

/* ---- plan values ------------------------------------------------------ */

/* One piece of a plan value: literal text, or a reference to a site value. */
struct npl_pval_seg {
	const char *lit;   /* literal text (not NUL-terminated) when key < 0 */
	size_t len;
	int key;           /* enum npl_site_key, or -1 */
	int index;         /* list index, or -1 */
	int url;           /* the URL form of an address */
};

/* Append s as a literal plan value ($ doubled). */
void npl_pval_lit(struct npl_buf *b, const char *s);
/* Append a reference to site key k (index -1: the whole scalar value). */
void npl_pval_ref(struct npl_buf *b, enum npl_site_key k, int index, int url);
/* Call fn for each piece of s in order; stops at and returns the first non-zero result. */
int npl_pval_walk(const char *s, int (*fn)(void *ctx, const struct npl_pval_seg *seg), void *ctx);
/* Substitute the site values; -1 and the first missing key in *missing when one is not given. */
int npl_pval_resolve(struct npl_buf *out, const char *s, const struct npl_site *site, int *missing);
/* For people: known values substituted, unknown ones shown as <prefill-ip 0>. */
void npl_pval_display(struct npl_buf *out, const char *s, const struct npl_site *site);
/* For people: an env entry of a plan as NAME=VALUE, with prepend/append shown against the
 * inherited $NAME and a placement before the env files noted. */
void npl_plan_env_display(struct npl_buf *out, const cJSON *item, const struct npl_site *site);
/* Site values from the plan's "site" object, for npl_pval_resolve(). */
void npl_plan_site(const cJSON *plan, struct npl_site *site, struct npl_arena *a);
/* The URL form of an address: IPv6 in brackets. */
void npl_url_host(struct npl_buf *b, const char *ip);

/* Small accessors over plan documents. */
const char *npl_json_str(const cJSON *obj, const char *key);
int npl_json_int(const cJSON *obj, const char *key, int def);
/* The role object named name in plan.roles, or NULL. */
const cJSON *npl_plan_role(const cJSON *plan, const char *name);

#endif
