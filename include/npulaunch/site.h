/*
 * site.h: layer input. Site values, the facts of one cluster that no recipe can know:
 * model paths, the network interface, node addresses. Given as command-line
 * flags or in a YAML file (flags win); validated here (addresses with
 * inet_pton, interface names, absolute paths). A value not given stays a
 * named variable in the generated scripts. Included by the resolver, the
 * commands and their tests.
 */
#ifndef NPL_SITE_H
#define NPL_SITE_H

#include "npulaunch/arena.h"
#include "npulaunch/diag.h"
#include "npulaunch/strmap.h"

enum npl_site_key {
	NPL_SITE_MODEL_PATH,
	NPL_SITE_DRAFT_MODEL_PATH,
	NPL_SITE_IFNAME,
	NPL_SITE_NODE_IP,
	NPL_SITE_PREFILL_IP,
	NPL_SITE_DECODE_IP,
	/* the address of the node the entry point runs on (the router, or a one-node server):
	 * what the allocation gives a Slurm job (ENTRY_IP), so that it listens there */
	NPL_SITE_ENTRY_IP,
	/* cluster values (render --target k8s, rbg, docker): facts of the cluster the
	 * containers run in, recorded in the plan; never script variables */
	NPL_SITE_IMAGE,
	NPL_SITE_ROUTER_IMAGE,
	NPL_SITE_REGISTRY,
	NPL_SITE_NAMESPACE,
	NPL_SITE_NAME_PREFIX,
	NPL_SITE_NPU_RESOURCE,
	NPL_SITE_NPU_UNIT,
	NPL_SITE_MODEL_VOLUME,
	NPL_SITE_MODEL_MOUNT,
	NPL_SITE_NODE_SELECTOR,
	NPL_SITE_SCHEDULER,
	NPL_SITE_GANG,
	NPL_SITE_SERVER_CPUS,
	NPL_SITE_SERVER_MEMORY,
	NPL_SITE_ROUTER_CPUS,
	NPL_SITE_ROUTER_MEMORY,
	NPL_SITE_ROUTER_NODE_SELECTOR,
	NPL_SITE_TOLERATION,
	NPL_SITE_IMAGE_PULL_SECRET,
	NPL_SITE_PRIORITY_CLASS,
	NPL_SITE_STARTUP_TIMEOUT,
	NPL_SITE_TUNE,
	NPL_SITE_PRIVILEGED,
	NPL_SITE_SHM_SIZE,
	NPL_SITE_RUNTIME,
	/* render --target slurm: values of the batch job, never variables of the role scripts */
	NPL_SITE_SLURM_PARTITION,
	NPL_SITE_SLURM_ACCOUNT,
	NPL_SITE_SLURM_TIME,
	NPL_SITE_SLURM_GRES,
	NPL_SITE_SLURM_LOG_DIR,
	NPL_SITE_SLURM_ROUTER_NODE,
	NPL_SITE_SLURM_NPULAUNCH,
	NPL_SITE_COUNT,
};

struct npl_site_value {
	const char **v;   /* the value, or the addresses in rank order */
	int n;
	int cap;
	struct npl_strmap seen;   /* of a list: each address, each node label's KEY= (duplicates) */
};

struct npl_site {
	struct npl_site_value key[NPL_SITE_COUNT];
};

/* The key as written in flags and site files ("model-path"). */
const char *npl_site_key_name(enum npl_site_key k);
/* The variable that holds it in generated scripts ("MODEL_PATH", "PREFILL_IPS"); NULL for the
 * values of an output target (a cluster value, slurm-partition), which no role script holds. */
const char *npl_site_var(enum npl_site_key k);
/* For address lists: the variable with the URL form of each address ("PREFILL_HOSTS"). */
const char *npl_site_host_var(enum npl_site_key k);
/* 1 for keys that hold a list (of addresses, or of a cluster value's items). */
int npl_site_is_list(enum npl_site_key k);
/* 1 for a cluster value (image, namespace, ...): no script variable, no plan reference. */
int npl_site_is_cluster(enum npl_site_key k);
/* 1 for a cluster value that is true or false (a flag without a value means true). */
int npl_site_is_bool(enum npl_site_key k);
/* The key named name ("model-path"), or -1. */
int npl_site_key_from_name(const char *name);
/* Validate value for key and store it (lists append); where places errors (may be NULL). */
int npl_site_set(struct npl_site *s, struct npl_arena *a, enum npl_site_key k, const char *value,
		 const struct npl_loc *where, struct npl_diag *d);
/* As npl_site_set, the messages naming what the user set: a flag ("--prefill-ip", as
 * npl_site_set does when what is NULL) or a variable ("PREFILL_IPS"). */
int npl_site_set_as(struct npl_site *s, struct npl_arena *a, enum npl_site_key k, const char *value,
		    const char *what, const struct npl_loc *where, struct npl_diag *d);
/* Read a site file (YAML mapping of the keys above) into s. */
int npl_site_load_file(struct npl_site *s, struct npl_arena *a, const char *path, struct npl_diag *d);
/* Read site YAML from memory (name is used in messages). */
int npl_site_load_text(struct npl_site *s, struct npl_arena *a, const char *name, const char *text,
		       size_t len, struct npl_diag *d);
/* Copy into dst every key that dst does not have (flags win over the file). */
void npl_site_fill(struct npl_site *dst, const struct npl_site *from);
/* Canonical text of an IPv4/IPv6 address into out (INET6_ADDRSTRLEN); -1 if not an address. */
int npl_ip_canonical(const char *s, char *out, size_t n);
/* 1 when s is a plausible network interface name. */
int npl_ifname_ok(const char *s);

/* A site value given (key k) that label (a recipe, a target) has no use for: a note, said once
 * a run whatever recipes it applies to; with strict an error. -1 for the error. */
int npl_site_unused(struct npl_diag *d, int strict, enum npl_site_key k, const char *label, const char *why);

#endif
