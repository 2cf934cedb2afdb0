/*
 * check.h: layer plan. A plan checked against the engine-flag registry
 * (engine.h) and against the rules that need flag values: dp-size divides
 * tp-size, draft tokens = steps + 1 with top-k 1, a draft model for the
 * algorithms that load one, the largest decode CUDA-graph batch within
 * max-running-requests / dp-size (a recipe may waive it, with a reason),
 * ports unique per node.
 */
#ifndef NPL_CHECK_H
#define NPL_CHECK_H

#include <cjson/cJSON.h>

#include "npulaunch/diag.h"
#include "npulaunch/engine.h"
#include "npulaunch/recipe.h"

/* Check every flag of a plan against the registry, matched as npl_engine_match() does: unknown
 * (with a did-you-mean) or ambiguous is an error unless allow_unknown (then a warning); two
 * names of one option on a node (an alias or a prefix beside the full name), a value of the
 * wrong kind or outside the choices are errors; a flag absent upstream is a warning. Returns
 * the number of errors. */
int npl_check_flags(const struct npl_engine *e, const cJSON *plan, int allow_unknown,
			   struct npl_diag *d);
/* Check a plan against the rules (see above); waivers is the recipe's waive mapping (may be
 * NULL). Returns the number of errors. */
int npl_check_rules(const struct npl_engine *e, const cJSON *plan, const struct npl_layer *R,
			   struct npl_diag *d);

#endif
