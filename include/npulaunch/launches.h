/*
 * launches.h: layer plan. What each node would exec under a plan, computed from the plan
 * document alone (no script is written or run): per node of every server role each server
 * launch, the router once, each benchmark once, with the site's values substituted. The
 * comparison point of `import` and `drift` (issue 24): a page's section run by pagesh gives
 * the same records, so the two can be compared launch by launch.
 *
 * A record is the struct npl_pagesh_launch of pagesh.h: module, the arguments after
 * "python -m MODULE" as the rendered script passes them, every variable the script exports
 * for that process (NAME=VALUE, sorted by name; prepend and append expanded against the
 * inherited environment given), the names it unsets (sorted), the files it sources (in
 * order), the governors and sysctls its tuning writes (sorted by name).
 * Included by the importer, drift and their tests.
 */
#ifndef NPL_LAUNCHES_H
#define NPL_LAUNCHES_H

#include <cjson/cJSON.h>

#include "npulaunch/arena.h"
#include "npulaunch/diag.h"
#include "npulaunch/pagesh.h"
#include "npulaunch/site.h"

struct npl_node_launch {
	const char *role;      /* "pd-mixed", "prefill", "decode", "router", "bench" */
	int node;              /* the node's index in the role's node list (router, bench: 0) */
	int instance;          /* the instance it belongs to (router, bench: 0) */
	const char *ip;        /* the node's address from the site, or NULL when not known */
	struct npl_pagesh_launch l;
};

struct npl_node_launches {
	struct npl_node_launch *v;
	int n;
};

/* The launches of plan under site (NULL: the plan's own "site" values). inherited is the
 * environment the process starts with ("NAME=VALUE", NULL-terminated; may be NULL), which
 * prepend and append build on. Server roles first in the plan's order, node by node, then the
 * router, then the benchmarks. 0, or -1 with located errors in d (a site value the plan needs
 * and the site does not give is an error naming it). Memory in a. */
int npl_plan_launches(const cJSON *plan, const struct npl_site *site, const char *const *inherited,
		      struct npl_node_launches *out, struct npl_arena *a, struct npl_diag *d);

#endif
