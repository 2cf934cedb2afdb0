/*
 * launch.h: layer node. The node side of apply: from one role of the plan
 * document (plan.h) and the site values, the server instances this node runs
 * with their argv resolved, the env files to source, then the environment the
 * rendered script builds (the role's unsets, the variables placed before the
 * env files, the files sourced in bash, each instance's own variables), the
 * CPU pinning, and exec; or, when several instances share the node, their
 * start and supervision. A dry run gets the same plan printed instead, as
 * shell-like text or as JSON.
 *
 * Problems are recorded in the diagnostics (a missing site value once a key,
 * naming what to set); nothing here chooses an exit code. Included by the
 * apply command.
 */
#ifndef NPL_LAUNCH_H
#define NPL_LAUNCH_H

#include <stddef.h>

#include "npulaunch/arena.h"
#include "npulaunch/diag.h"
#include "npulaunch/plan.h"
#include "npulaunch/site.h"
#include "npulaunch/tune.h"

/* npl_launch.bad: bit KEY for a missing site value (enum npl_site_key), and these. */
#define NPL_LAUNCH_BAD_USAGE (1 << 29)   /* a usage error (--cpus) */
#define NPL_LAUNCH_BAD_TUNE (1 << 30)    /* the tuning cannot be collected or written */

/* One server instance this node runs: its plan entry and its argv (NULL-terminated). */
struct npl_launch_inst {
	const cJSON *node;
	char **argv;
	int argc, cap;
};

/* An environment being built: NAME=VALUE entries, NULL-terminated. */
struct npl_launch_env {
	char **v;
	int n, cap;
};

/* npu-smi's answers, asked once a command (a run takes seconds on a real node): what npu-smi
 * info and npu-smi info -t topo printed (exit 0), NULL where a run failed or was not made. */
struct npl_smi_answers {
	int asked;
	const char *info, *topo;
};

struct npl_launch_node {
	/* given */
	const cJSON *plan, *role;         /* the plan document and this node's role in it */
	const char *role_name;
	const struct npl_site *site;
	int node;                         /* this node's index in the role's node list */
	const char *const *addrs;         /* this node's addresses (ident.h) */
	int naddrs;
	int placeholders;                 /* a dry run: a value that cannot be resolved shows as <KEY> */
	const char *cpus;                 /* --cpus, or NULL */
	const struct npl_tune *tune;      /* the tuning collected (for a dry run's view) */
	const char *const *wait;          /* the servers a router waits for, and for how long */
	int nwait;
	double wait_timeout;
	struct npl_diag *diag;
	struct npl_arena *arena;
	/* npl_launch_prepare() */
	struct npl_launch_inst *inst;
	int ninst;
	char **files;                     /* the env files, under the root */
	int nfiles;
	int bad;                          /* what stops a real run (NPL_LAUNCH_BAD_*) */
	/* npl_launch_cpus() */
	void *mask;                       /* a cpu_set_t of masksz bytes, or NULL */
	size_t masksz;
	/* npl_launch_affinity() */
	cJSON *affinity;                  /* what the affinity module computed (npl_affinity_json), or NULL */
	const char *affinity_note;        /* why nothing is bound, or NULL */
	struct npl_smi_answers smi;       /* npu-smi's, as the affinity asked them: apply's preflight
					     reads them, not a second run */
	unsigned long *mems;              /* the memory nodes for set_mempolicy (a nodemask), or NULL */
	unsigned long maxnode;
	char **rank_nodes;                /* per instance: the NUMA node of each SGLang gpu id it uses,
					     as --numa-node takes them ("0 0 2 2"), or NULL */
	const char *rank_note;            /* SGLang's per-rank binding: what npl_launch_ranks() did, or
					     why there is none (NULL: nothing to say) */
	/* npl_launch_environ() */
	struct npl_launch_env env;
};

/* The instances node l->node runs, each one's argv, the env files under root (each checked
 * readable) and every environment value, resolved: problems recorded, before anything changes.
 * -1 with an error when the plan has no launch for the node (nothing else done). */
int npl_launch_prepare(struct npl_launch_node *l, const char *root);
/* Parse l->cpus into l->mask, each CPU online under root (NULL: /). */
void npl_launch_cpus(struct npl_launch_node *l, const char *root);
/* A server's binding from the node's topology (affinity.h), unless npl_affinity_owner() says
 * npulaunch binds nothing (l->affinity_note says why): the union of its dies' CPUs in l->cpus
 * and l->mask (as --cpus), their NUMA nodes in l->mems (a preferred memory policy; only on the
 * real host, root NULL or ""), the whole view in l->affinity. A policy that cannot be met is an
 * error; a fact that cannot be read a warning, and nothing is bound. npu-smi is run with a
 * timeout of timeout seconds. */
void npl_launch_affinity(struct npl_launch_node *l, const char *root, double timeout);
/* The sets of every die npu-smi lists on this node under policy (a tuning.affinity; plan, when
 * not NULL, names where npu-smi is), for tune --dry-run: npl_affinity_compute()'s result, af
 * filled (released by the caller). */
struct npl_affinity;
int npl_launch_affinity_node(struct npl_affinity *af, const cJSON *policy, const cJSON *plan, const char *root,
			     double timeout, struct npl_arena *a, struct npl_diag *d);
/* The same for the logical devices devices (ndevices of them: an instance's) alone, for show
 * --explain; devices NULL: every die. npu-smi is asked into ans, once for every call that passes
 * the same ans (its strings in a); ans NULL: asked for this call. */
int npl_launch_affinity_devices(struct npl_affinity *af, const cJSON *policy, const cJSON *plan, const char *root,
				double timeout, const int *devices, int ndevices, struct npl_smi_answers *ans,
				struct npl_arena *a, struct npl_diag *d);

/* A dry run: the whole plan for this node on stdout, as shell-like text or as JSON ({recipe, role,
 * node, addresses, tuning, unset, source, env, cpus, wait, wait_timeout_s, instances, stops}). */
void npl_launch_dry_text(struct npl_launch_node *l);
void npl_launch_dry_json(struct npl_launch_node *l);

/* Build l->env from environ as the script does: unsets, the variables before the env files,
 * then the files sourced in bash. -1 with an error when sourcing fails. */
int npl_launch_environ(struct npl_launch_node *l, char **environ_);
/* Append a copy of a to an instance's argv. */
void npl_launch_arg(struct npl_launch_inst *in, const char *a);
/* SGLang's own per-rank binding on top of the server's (issue 26): each instance's --numa-node
 * list (l->rank_nodes, from npl_launch_affinity) appended to its argv when the SGLang that
 * envp's python finds has it (server_args.py's numa_node, environ.py's SGLANG_NUMA_BIND_V2:
 * each rank started under numactl --cpunodebind=N --membind=N) and numactl is on envp's PATH,
 * unless the recipe gives --numa-node or sets SGLANG_NUMA_BIND_V2 itself. l->rank_note says
 * what was done or why not. */
void npl_launch_ranks(struct npl_launch_node *l, char *const *envp, double timeout);
/* Pin this process to l->mask when there is one; -1 with an error. */
int npl_launch_pin(struct npl_launch_node *l);
/* Exec the one instance with its own variables added; returns (-1, an error) only on failure. */
int npl_launch_exec(struct npl_launch_node *l);
/* A recipe's several benchmarks, in turn, as bench.sh runs them: each but the last to its end
 * as a child with its own variables, then exec the last. Returns only when one fails (its exit
 * status, or 128 + its signal, and an error) or cannot be run (-1, an error); the next is not run. */
int npl_launch_sequence(struct npl_launch_node *l);
/* Several instances share this node: start each, stay their parent, stop the others when one
 * ends (SIGTERM, SIGKILL after grace seconds) and pass SIGINT/SIGTERM/SIGHUP on. The first
 * one's end as an exit status: its code, or 128 + the signal. */
int npl_launch_supervise(struct npl_launch_node *l, double grace);
/* Free what l holds. */
void npl_launch_release(struct npl_launch_node *l);

#endif
