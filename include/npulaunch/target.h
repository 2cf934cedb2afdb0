/*
 * target.h: the output targets of render beyond the role scripts. A target
 * renders the scripts' bundle (render.h) and the files that run it on an
 * engine, from the plan alone: for Slurm one batch job per deployment
 * (slurm.sbatch) and the wrapper its steps run (slurm-step.sh), from
 * templates/slurm/. Included by the render command and its tests.
 */
#ifndef NPL_TARGET_H
#define NPL_TARGET_H

#include <cjson/cJSON.h>

#include "npulaunch/diag.h"
#include "npulaunch/output.h"
#include "npulaunch/render.h"

/* What render's options ask of a target. */
struct npl_target_opts {
	int bench;   /* --bench: the job runs the benchmark once the entry point answers, then verify */
	int all;     /* render --all: a site value that one recipe has no use for is not an error */
};

/* The site values of the plan that contradict a Slurm job (a router node for a deployment
 * without router); -1 with a diagnostic. */
int npl_target_slurm_check(const cJSON *plan, const struct npl_target_opts *o, struct npl_diag *d);
/* The bundle of the role scripts and, beside them, slurm.sbatch and slurm-step.sh, into set under
 * dir ("" for bare names). */
int npl_target_slurm(const cJSON *plan, struct npl_templates *t, const char *dir,
		     const struct npl_target_opts *o, struct npl_outset *set, struct npl_diag *d);

#endif
