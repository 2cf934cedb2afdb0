/*
 * drift.h: layer sync. A page against the recipes: for every section, the recipe it corresponds
 * to (by id from its title, by a recipe's alias, or by shape, the same model, hardware, mode,
 * cards, quantization and dataset, when upstream retitled it), and each difference in metadata,
 * flags, environment, unsets, sources, tuning, router and benchmark, node by node (compare.h);
 * sections no recipe corresponds to, and recipes of the page's model that no section does.
 * What `npulaunch drift` reports. Included by the drift command and its tests.
 */
#ifndef NPL_DRIFT_H
#define NPL_DRIFT_H

#include "npulaunch/compare.h"
#include "npulaunch/page.h"
#include "npulaunch/recipe.h"

struct npl_drift_section {
	const struct npl_page_section *s;
	const struct npl_layer *recipe;   /* NULL: no recipe corresponds */
	const char *by;                   /* "id", "alias", "shape" */
	struct npl_diffs diffs;
	int failed;                       /* the section or the recipe could not be run (errors in d) */
};

struct npl_drift_page {
	const struct npl_page *p;
	const char *model_id;             /* NULL when no section names a model the database has */
	struct npl_drift_section *v;
	int n;
	const struct npl_layer **missing; /* recipes of the model that no section corresponds to */
	int nmissing;
};

/* Compare every section of p with the recipes of db. 0, or -1 when a section could not be
 * compared (errors in d; the others are still compared). */
int npl_drift_page(const struct npl_db *db, const struct npl_engine *e, const struct npl_page *p,
		   struct npl_drift_page *out, struct npl_arena *a, struct npl_diag *d);
/* The number of differences, unmatched sections and missing recipes: 0 when in sync. */
int npl_drift_count(const struct npl_drift_page *dp);

#endif
