/*
 * target.h: layer out. Output targets other than the scripts (render --target NAME).
 * Each runs the rendered role scripts where a cluster runs things: k8s
 * (a LeaderWorkerSet per server role, the router as a Deployment, Services,
 * the scripts in a ConfigMap; kubectl apply -k), rbg (the same roles in one
 * RoleBasedGroup), docker (a docker or podman run script per role) and slurm
 * (one batch job per deployment, slurm.sbatch, and the wrapper its steps run,
 * slurm-step.sh, from templates/slurm/). A
 * target reads only the plan, resolved for it as its npl_plan_target asks
 * (the container block: the hardware's container facts and the cluster site
 * values), and adds its files to an output set. target.c holds what the
 * targets share: the checks of the site values a container needs, the name
 * prefix, the pods of a role. Included by the render command, the targets
 * and their tests.
 */
#ifndef NPL_TARGET_H
#define NPL_TARGET_H

#include <cjson/cJSON.h>

#include "npulaunch/buf.h"
#include "npulaunch/diag.h"
#include "npulaunch/output.h"
#include "npulaunch/plan.h"
#include "npulaunch/render.h"

/* What render's options ask of a target. */
struct npl_target_opts {
	int bench;   /* --bench: the job runs the benchmark once the entry point answers, then verify */
	int all;     /* render --all: a site value that one recipe has no use for is not an error */
	int strict;  /* --strict: a site value the target has no use for is an error, not a note */
};

struct npl_target {
	const char *name;
	struct npl_plan_target plan;   /* what it asks of the resolver */
	/* Render the plan's files into set, under dir ("" for bare names); notes for the user
	 * (what the nodes then need) are added to d as notes. */
	int (*render)(const cJSON *plan, struct npl_templates *t, const char *dir,
		      const struct npl_target_opts *o, struct npl_outset *set, struct npl_diag *d);
	const char *summary;           /* one line for render --help */
	int allocates;                 /* its engine gives the nodes and their addresses: none may be given */
	int bench;                     /* it takes --bench */
	const char *site_prefix;       /* its own site values begin so ("slurm-"); NULL: the cluster values */
	const char *const *site_keys;  /* and these cluster values (NULL-terminated), when it has a prefix */
};

extern const struct npl_target npl_target_k8s, npl_target_rbg, npl_target_docker, npl_target_slurm;

/* ---- shared by the targets (target.c) ------------------------------------ */

/* A value of the plan's container block ("image"), or NULL. */
const cJSON *npl_target_container(const cJSON *plan, const char *name);
/* The same as a string, or NULL. */
const char *npl_target_container_str(const cJSON *plan, const char *name);
/* A cluster site value as given (a list's first item), or def. */
const char *npl_target_site(const cJSON *plan, const char *key, const char *def);
/* A boolean cluster site value (gang, tune, privileged), or def when not given. */
int npl_target_site_bool(const cJSON *plan, const char *key, int def);
/* Check that the plan has every site value a container needs (all but the node addresses,
 * which addresses_ok allows: the docker target's hosts know them, a cluster gives its own). */
int npl_target_check_site(const cJSON *plan, const char *target, int addresses_ok, struct npl_diag *d);
/* The cluster values of keys (NULL-terminated) that target has no use for, each said once
 * (npl_site_unused: a note, or with strict an error); -1 for an error. */
int npl_target_unused(const cJSON *plan, const char *target, int strict, const char *const *keys, const char *why,
		      struct npl_diag *d);
/* The prefix of every object name: --name-prefix, else the model's id as a DNS label. */
const char *npl_target_prefix(const cJSON *plan, struct npl_buf *tmp);
/* The model volume: 1 for a PersistentVolumeClaim (claim and mount set), 0 for the node's own
 * paths; -1 with an error when a model path is outside the claim's mount. */
int npl_target_model_volume(const cJSON *plan, const char *target, const char **claim, const char **mount,
			    struct npl_diag *d);
/* The folders the model paths need mounted from the node (hostpath volume): 0 to 2 of them, a
 * draft model inside the model's folder needing none of its own. */
int npl_target_model_dirs(const cJSON *plan, const char *dirs[2]);

/* A pod of a server role: one node of its address list. */
struct npl_pod {
	int node;        /* index in the role's address list */
	int group;       /* the LWS group / RBG instance it belongs to */
	int worker;      /* its rank in the group (0: the leader) */
	int cards, dies; /* what its instances use on the node */
};

/* The pods of a server role, in address-list order (malloc'ed, *n of them); the group size
 * (pods per group) in *size. Instances sharing a node make one pod, a group of one. */
struct npl_pod *npl_target_pods(const cJSON *role, int *n, int *size);
/* The ports a server role listens on, over all its nodes (--port, then the bootstrap ports),
 * without repeats: count; ports[] gets at most max of them, kinds[] 'h' or 'b'. */
int npl_target_ports(const cJSON *role, int *ports, char *kinds, int max);
/* Whether the render tunes the hosts (tune site value), and the note to give when it does not. */
int npl_target_tunes(const cJSON *plan);
/* The note for a render that leaves the hosts untuned: what each node needs instead. */
void npl_target_untuned_note(const cJSON *plan, const char *how, struct npl_buf *out);

#endif
