/*
 * plan.h: layer plan. The plan document every output reads: npl_resolve()
 * (resolve.h) writes it as one cJSON tree, per role and node the environment
 * set and unset, the files sourced, the host tuning, the launch command and
 * its flags, each value with its origin. Outputs (out/) and node code (node/)
 * read it through this header alone and derive nothing; they never see the
 * recipe loader.
 *
 * Plan values: argv and env values in the plan may refer to site values, so
 * that a script can be rendered before the addresses are known. A reference
 * is written ${KEY}, ${KEY[I]} or ${KEY[I]|url} (the URL form brackets IPv6
 * addresses); KEY is a site key such as prefill-ip; a literal $ is $$.
 */
#ifndef NPL_PLAN_H
#define NPL_PLAN_H

#include <cjson/cJSON.h>

#include "npulaunch/buf.h"
#include "npulaunch/arena.h"
#include "npulaunch/site.h"

#define NPL_PLAN_FORMAT "npulaunch-plan/1"

/* What an output target other than the scripts asks of the plan (render --target). */
struct npl_plan_target {
	const char *name;                  /* "k8s": the plan records it, its origins name it */
	const char *entry_host;            /* the entry point listens there (NULL: the database's entry_host) */
	const char *entry_why;             /* why, for the origin */
	int container;                     /* add "container": the hardware's facts and the cluster values */
};

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

/* ---- node queries ------------------------------------------------------ */

/* A port a node listens on, and what for ("--port", "ASCEND_MF_STORE_URL"). */
struct npl_plan_port {
	int port;
	const char *what;
};

/* The nodes a role runs on (instances that share a node count once): its nodes_count, else
 * the length of its node list. */
int npl_plan_nodes_count(const cJSON *role);
/* The index of this node in role's node list: the first address of the list that one of
 * addrs is; -1 when none is, -2 when the list is not known (fewer addresses than nodes). A
 * role without a list: 0. */
int npl_plan_node_of(const cJSON *role, const struct npl_site *site, const char *const *addrs, int naddrs);

/* The ports the instances of role on node index listen on (each once), from the plan's flags
 * (--port, --disaggregation-bootstrap-port, --dist-init-addr on an instance's first node) and
 * the tcp:// URLs of its environment that name this node (its address or --host, as plan
 * values, or loopback). Up to max; their count. Strings in a. */
int npl_plan_node_ports(const cJSON *role, int index, struct npl_plan_port *out, int max, struct npl_arena *a);

/* The logical devices role's instances on node index use: ASCEND_RT_VISIBLE_DEVICES when the plan
 * sets it, else --base-gpu-id (default 0) and on, as many as an instance has dies per node; up
 * to max in ids, their count. */
int npl_plan_node_devices(const cJSON *role, int index, int *ids, int max);
/* The logical device each SGLang gpu id 0 .. base + dies - 1 of the instance node (a plan node
 * of role) is, as --numa-node is indexed: ASCEND_RT_VISIBLE_DEVICES' entry for it, else the id
 * itself; the ids below --base-gpu-id (which SGLang never uses) are given the first rank's
 * device. Their count; 0 for an instance on no die; -1 where npulaunch cannot follow SGLang's
 * numbering (a --gpu-id-step other than 1, a device list it cannot read, more than max). */
int npl_plan_rank_devices(const cJSON *role, const cJSON *node, int *ids, int max);

/* Who binds node index of a server role to its dies' CPUs: NULL when npulaunch does (apply, and
 * the role's rendered script alike), with *policy its tuning.affinity; otherwise why not (its
 * policy is none, or the node's launch environment sets SGLANG_SET_CPU_AFFINITY to a true value,
 * as SGLang's EnvBool reads it: 1, true, yes, on in any case). affinity.h says more. */
const char *npl_plan_affinity_owner(const cJSON *role, int index, const cJSON **policy);

/* The benchmark flags that tell one workload from another, each {results record's key, flag,
 * name}, the request rate last: verify matches a run to its benchmark by them (node/bench.c), and
 * the benchmarks of a recipe must differ in one (plan/roles.c). */
#define NPL_BENCH_NWORKLOAD 5
extern const char *const npl_bench_workload[NPL_BENCH_NWORKLOAD][3];

#endif
