/*
 * k8s_internal.h: what target_k8s.c (the objects, the entrypoint, the whole) and target_k8s_pod.c
 * (the pod templates: containers, resources, placement, probes, volumes) share. Included by
 * those only.
 */
#ifndef NPL_K8S_INTERNAL_H
#define NPL_K8S_INTERNAL_H

#include <cjson/cJSON.h>

#include "npulaunch/arena.h"
#include "npulaunch/diag.h"
#include "npulaunch/target.h"

#define MOUNT "/opt/npulaunch"   /* where the scripts' ConfigMap is mounted in every container */
#define MAXPORTS 64

/* ---- building --------------------------------------------------------------- */

struct k8s {
	const cJSON *plan;
	const struct npl_target *tg;
	int rbg;
	const char *prefix, *ns, *id;
	const char *image, *router_image, *res, *unit, *shm, *scheduler;
	int privileged, tune, gang;
	const char *cpus, *memory, *router_cpus, *router_memory;   /* a node's servers', the router's */
	int node_dies;          /* a node's: a server pod requests the share of cpus and memory its dies are */
	int startup;            /* the start-up window, seconds: the startupProbe's and the router's wait */
	const char *priority;   /* priorityClassName */
	const char *claim, *mount;
	const char *dirs[2];
	int ndirs;
	struct npl_diag *d;
	struct npl_arena *a;
	int rc;
};

static inline cJSON *str(const char *s)
{
	return cJSON_CreateString(s);
}

static inline cJSON *add(cJSON *o, const char *k, cJSON *v)
{
	cJSON_AddItemToObject(o, k, v);
	return v;
}

static inline cJSON *obj(cJSON *o, const char *k)
{
	return add(o, k, cJSON_CreateObject());
}

static inline cJSON *arr(cJSON *o, const char *k)
{
	return add(o, k, cJSON_CreateArray());
}

static inline cJSON *item(cJSON *a)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddItemToArray(a, o);
	return o;
}

/* printf into k's arena */
const char *npl_k8s_fmt(struct k8s *k, const char *f, ...) __attribute__((format(printf, 2, 3)));

/* The pod specs of a server role's pods (leader: the probes, rank 0 only) and of the router;
 * the container resources of a server pod's NPUs (pod) or the router's (pod NULL). */
cJSON *npl_k8s_server_pod(struct k8s *k, const cJSON *role, const struct npl_pod *pod, int leader);
cJSON *npl_k8s_router_pod(struct k8s *k, const cJSON *role, int port);

#endif
