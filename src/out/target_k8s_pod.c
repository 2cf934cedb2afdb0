/*
 * target_k8s_pod.c: the pod templates of render --target k8s and rbg (see target_k8s.c): the
 * server's and the router's containers, their resources (Guaranteed: requests equal to limits,
 * whole CPUs), their placement (node selectors, tolerations, priority class, pull secrets), the
 * probes and the volumes.
 */
#include <stdlib.h>
#include <string.h>

#include "npulaunch/plan.h"
#include "npulaunch/target.h"
#include "npulaunch/text.h"

#include "k8s_internal.h"

/* A site value's list (toleration, image-pull-secret, router-node-selector), or NULL. */
static const cJSON *site_list(const cJSON *plan, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(plan, "site"), key);

	return cJSON_IsArray(v) && cJSON_GetArraySize(v) ? v : NULL;
}

/* A memory size (N followed by Ki, Mi, Gi or Ti, as site.c checks the site's) times num/den: in
 * its unit when that divides, else in the next smaller one, rounded down, 1 at least; NULL when
 * size is not such a size (a hardware profile's, which no site check saw). */
static const char *mem_share(struct k8s *k, const char *size, int num, int den)
{
	static const char *const units[] = {"Ki", "Mi", "Gi", "Ti"};
	unsigned long long n;
	char *end;
	int u;

	if (!size || *size < '1' || *size > '9')
		return NULL;
	n = strtoull(size, &end, 10);
	for (u = 0; u < 4 && strcmp(end, units[u]); u++)
		;
	if (u == 4 || end - size > 12)
		return NULL;
	n *= (unsigned long long)num;
	if (n % (unsigned long long)den && u > 0) {
		n *= 1024;
		u--;
	}
	n /= (unsigned long long)den;
	return npl_k8s_fmt(k, "%llu%s", n ? n : 1, units[u]);
}

/* requests equal to limits, cpu in whole CPUs: the pod is Guaranteed, which the kubelet's CPU
 * manager (static), memory manager and topology manager need to pin it; npus < 0: none */
static void resources(struct k8s *k, cJSON *c, const char *cpus, const char *memory, int npus)
{
	cJSON *res = obj(c, "resources");
	int i;

	for (i = 0; i < 2; i++) {
		cJSON *r = obj(res, i ? "requests" : "limits");

		if (npus >= 0)
			add(r, k->res, str(npl_k8s_fmt(k, "%d", npus)));
		add(r, "cpu", str(cpus));
		add(r, "memory", str(memory));
	}
}

/* What every pod of the deployment has of the site's placement: the priority class, the
 * tolerations (KEY[=VALUE][:EFFECT], as site.c checked them), the image pull secrets. */
static void placement(struct k8s *k, cJSON *spec)
{
	const cJSON *v, *list;

	if (k->priority)
		add(spec, "priorityClassName", str(k->priority));
	if ((list = site_list(k->plan, "toleration"))) {
		cJSON *a = arr(spec, "tolerations");

		cJSON_ArrayForEach(v, list) {
			const char *s = v->valuestring, *colon = strrchr(s, ':'), *eq;
			size_t n = colon ? (size_t)(colon - s) : strlen(s);
			cJSON *t = item(a);

			eq = memchr(s, '=', n);
			add(t, "key", str(npl_arena_strndup(k->a, s, eq ? (size_t)(eq - s) : n)));
			add(t, "operator", str(eq ? "Equal" : "Exists"));
			if (eq)
				add(t, "value", str(npl_arena_strndup(k->a, eq + 1, (size_t)(s + n - eq - 1))));
			if (colon)
				add(t, "effect", str(colon + 1));
		}
	}
	if ((list = site_list(k->plan, "image-pull-secret"))) {
		cJSON *a = arr(spec, "imagePullSecrets");

		cJSON_ArrayForEach(v, list)
			add(item(a), "name", str(v->valuestring));
	}
}

/* The livenessProbe that restarts the container when a pod whose address it resolved at start
 * (entrypoint.sh) now has another: see entrypoint.sh --check. */
static cJSON *peers_probe(const char *role)
{
	cJSON *p = cJSON_CreateObject(), *cmd = arr(obj(p, "exec"), "command");

	cJSON_AddItemToArray(cmd, str("bash"));
	cJSON_AddItemToArray(cmd, str(MOUNT "/entrypoint.sh"));
	cJSON_AddItemToArray(cmd, str("--check"));
	cJSON_AddItemToArray(cmd, str(role));
	add(p, "periodSeconds", cJSON_CreateNumber(30));
	add(p, "timeoutSeconds", cJSON_CreateNumber(20));
	add(p, "failureThreshold", cJSON_CreateNumber(2));
	return p;
}

static void env_field(cJSON *env, const char *name, const char *path)
{
	cJSON *e = item(env);

	add(e, "name", str(name));
	add(obj(obj(e, "valueFrom"), "fieldRef"), "fieldPath", str(path));
}

static void mount(cJSON *mounts, const char *name, const char *path, int ro)
{
	cJSON *m = item(mounts);

	add(m, "name", str(name));
	add(m, "mountPath", str(path));
	if (ro)
		add(m, "readOnly", cJSON_CreateTrue());
}

static void host_volume(cJSON *vols, const char *name, const char *path, const char *type)
{
	cJSON *v = item(vols), *h;

	add(v, "name", str(name));
	h = obj(v, "hostPath");
	add(h, "path", str(path));
	add(h, "type", str(type));
}

static cJSON *probe(int port, int failures)
{
	cJSON *p = cJSON_CreateObject(), *g = obj(p, "httpGet");

	add(g, "path", str("/health"));
	add(g, "port", cJSON_CreateNumber(port));
	add(p, "periodSeconds", cJSON_CreateNumber(10));
	add(p, "timeoutSeconds", cJSON_CreateNumber(5));
	if (failures)
		add(p, "failureThreshold", cJSON_CreateNumber(failures));
	return p;
}

/* The volumes and mounts every server container has: scripts, /dev/shm, the Ascend host
 * files, the model. */
static void server_volumes(struct k8s *k, cJSON *vols, cJSON *mounts)
{
	const cJSON *m;
	cJSON *v;
	int i = 0;

	v = item(vols);
	add(v, "name", str("npulaunch"));
	{
		cJSON *cm = obj(v, "configMap");

		add(cm, "name", str(npl_k8s_fmt(k, "%s-scripts", k->prefix)));
		add(cm, "defaultMode", cJSON_CreateNumber(0555));
	}
	mount(mounts, "npulaunch", MOUNT, 1);
	v = item(vols);
	add(v, "name", str("dshm"));
	{
		cJSON *e = obj(v, "emptyDir");

		add(e, "medium", str("Memory"));
		if (k->shm)
			add(e, "sizeLimit", str(k->shm));
	}
	mount(mounts, "dshm", "/dev/shm", 0);
	cJSON_ArrayForEach(m, npl_target_container(k->plan, "mounts")) {
		const char *name = npl_k8s_fmt(k, "host-%d", i++), *kind = npl_json_str(m, "kind");

		host_volume(vols, name, npl_json_str(m, "path"), kind);
		/* a folder the kubelet may create is scratch the container writes */
		mount(mounts, name, npl_json_str(m, "path"), strcmp(kind, "DirectoryOrCreate"));
	}
	if (k->claim) {
		v = item(vols);
		add(v, "name", str("model"));
		{
			cJSON *c = obj(v, "persistentVolumeClaim");

			add(c, "claimName", str(k->claim));
			add(c, "readOnly", cJSON_CreateTrue());
		}
		mount(mounts, "model", k->mount, 1);
	} else {
		for (i = 0; i < k->ndirs; i++) {
			const char *name = i ? "draft-model" : "model";

			host_volume(vols, name, k->dirs[i], "Directory");
			mount(mounts, name, k->dirs[i], 1);
		}
	}
}

/* The pod spec of a server role's pods; leader: the probes (rank 0 only). */
cJSON *npl_k8s_server_pod(struct k8s *k, const cJSON *role, const struct npl_pod *pod, int leader)
{
	const char *name = npl_json_str(role, "role"), *script = npl_json_str(role, "script");
	cJSON *spec = cJSON_CreateObject(), *c, *env, *a, *vols, *mounts;
	int ports[MAXPORTS], np, i, count = !strcmp(k->unit, "die") ? pod->dies : pod->cards, share;
	const char *cpus, *memory;
	char kinds[MAXPORTS];
	const cJSON *sel = npl_target_container(k->plan, "node_selector");

	add(spec, "hostNetwork", cJSON_CreateTrue());
	add(spec, "dnsPolicy", str("ClusterFirstWithHostNet"));
	/* the scripts' environment is the plan's: no variable per Service in the namespace */
	add(spec, "enableServiceLinks", cJSON_CreateFalse());
	add(spec, "terminationGracePeriodSeconds", cJSON_CreateNumber(60));
	if (cJSON_GetArraySize(sel))
		add(spec, "nodeSelector", cJSON_Duplicate(sel, 1));
	if (k->scheduler)
		add(spec, "schedulerName", str(k->scheduler));
	placement(k, spec);
	share = pod->dies > 0 && pod->dies < k->node_dies ? pod->dies : k->node_dies;
	cpus = npl_k8s_fmt(k, "%d", atoi(k->cpus) * share / k->node_dies > 0 ? atoi(k->cpus) * share / k->node_dies : 1);
	memory = mem_share(k, k->memory, share, k->node_dies);
	if (!memory && !k->rc)
		k->rc = npl_error(k->d, NULL, "render --target %s: the memory '%s' of the servers is not a size in Ki, Mi, Gi or Ti (like 512Gi)",
				  k->tg->name, k->memory);
	vols = cJSON_CreateArray();
	if (k->tune) {
		/* the recipe's tuning, as tune --apply does it, journaled on the node for tune --revert */
		cJSON *ic = item(arr(spec, "initContainers")), *cmd, *im;

		add(ic, "name", str("tune"));
		add(ic, "image", str(k->image));
		add(ic, "imagePullPolicy", str("IfNotPresent"));
		cmd = arr(ic, "command");
		cJSON_AddItemToArray(cmd, str("bash"));
		cJSON_AddItemToArray(cmd, str(npl_k8s_fmt(k, MOUNT "/%s", script)));
		cJSON_AddItemToArray(cmd, str("--tune-only"));
		/* an init container's resources count too: the pod is Guaranteed only if it is */
		resources(k, ic, cpus, memory ? memory : "", count);
		add(obj(ic, "securityContext"), "privileged", cJSON_CreateTrue());
		im = arr(ic, "volumeMounts");
		mount(im, "npulaunch", MOUNT, 1);
		mount(im, "tune-journal", "/run/npulaunch", 0);
		mount(im, "debugfs", "/sys/kernel/debug", 0);
		host_volume(vols, "tune-journal", "/run/npulaunch", "DirectoryOrCreate");
		host_volume(vols, "debugfs", "/sys/kernel/debug", "Directory");
	}
	c = item(arr(spec, "containers"));
	add(c, "name", str("sglang"));
	add(c, "image", str(k->image));
	add(c, "imagePullPolicy", str("IfNotPresent"));
	a = arr(c, "command");
	cJSON_AddItemToArray(a, str("bash"));
	cJSON_AddItemToArray(a, str(MOUNT "/entrypoint.sh"));
	a = arr(c, "args");
	cJSON_AddItemToArray(a, str(name));
	if (npl_json_str(role, "node_list")) {
		/* kubelet expands $(VAR) from the container's environment: the controller's variables */
		static const char *const lws[] = {"$(NPULAUNCH_GROUP)", "$(LWS_WORKER_INDEX)", "$(LWS_GROUP_SIZE)",
						  "$(LWS_LEADER_ADDRESS)"};
		static const char *const rbg[] = {"$(RBG_ROLE_INDEX)", "$(RBG_LWP_WORKER_INDEX)",
						  "$(RBG_LWP_GROUP_SIZE)", "$(RBG_LWP_LEADER_ADDRESS)"};

		for (i = 0; i < 4; i++)
			cJSON_AddItemToArray(a, str(k->rbg ? rbg[i] : lws[i]));
	}
	env = arr(c, "env");
	env_field(env, "NPULAUNCH_NODE_IP", "status.podIP");
	env_field(env, "NPULAUNCH_NAMESPACE", "metadata.namespace");
	if (!k->rbg && npl_json_str(role, "node_list"))
		env_field(env, "NPULAUNCH_GROUP", "metadata.labels['leaderworkerset.sigs.k8s.io/group-index']");
	resources(k, c, cpus, memory ? memory : "", count);
	add(obj(c, "securityContext"), "privileged", cJSON_CreateBool(k->privileged));
	/* with the host's network the ports are the node's: the scheduler keeps two pods that
	 * listen on one port off the same node */
	np = npl_target_ports(role, ports, kinds, MAXPORTS);
	if (np > MAXPORTS)
		np = MAXPORTS;
	a = arr(c, "ports");
	for (i = 0; i < np; i++) {
		cJSON *p = item(a);

		add(p, "name", str(npl_k8s_fmt(k, "%s-%d", kinds[i] == 'h' ? "http" : "bootstrap", ports[i])));
		add(p, "containerPort", cJSON_CreateNumber(ports[i]));
	}
	if (leader && np) {
		/* SGLang answers /health once it serves: the start-up window (weights, graphs), in
		 * probes 10 s apart */
		add(c, "startupProbe", probe(ports[0], (k->startup + 9) / 10));
		add(c, "readinessProbe", probe(ports[0], 0));
	}
	add(c, "livenessProbe", peers_probe(name));
	mounts = arr(c, "volumeMounts");
	server_volumes(k, vols, mounts);
	add(spec, "volumes", vols);
	return spec;
}

cJSON *npl_k8s_router_pod(struct k8s *k, const cJSON *role, int port)
{
	cJSON *spec = cJSON_CreateObject(), *c, *a, *env, *p, *vols, *v;
	const cJSON *sel = site_list(k->plan, "router-node-selector");
	const char *memory = mem_share(k, k->router_memory, 1, 1);

	add(spec, "enableServiceLinks", cJSON_CreateFalse());
	if (sel) {
		/* the router needs no NPU: a node of the site's choosing (KEY=VALUE, as site.c checked) */
		cJSON *ns = obj(spec, "nodeSelector");

		cJSON_ArrayForEach(v, sel) {
			const char *eq = strchr(v->valuestring, '=');

			add(ns, npl_arena_strndup(k->a, v->valuestring, (size_t)(eq - v->valuestring)), str(eq + 1));
		}
	}
	placement(k, spec);
	if (!memory && !k->rc)
		k->rc = npl_error(k->d, NULL, "render --target %s: the router's memory '%s' is not a size in Ki, Mi, Gi or Ti (like 8Gi)",
				  k->tg->name, k->router_memory);
	c = item(arr(spec, "containers"));
	add(c, "name", str("router"));
	add(c, "image", str(k->router_image));
	add(c, "imagePullPolicy", str("IfNotPresent"));
	a = arr(c, "command");
	cJSON_AddItemToArray(a, str("bash"));
	cJSON_AddItemToArray(a, str(MOUNT "/entrypoint.sh"));
	cJSON_AddItemToArray(arr(c, "args"), str(npl_json_str(role, "role")));
	env = arr(c, "env");
	env_field(env, "NPULAUNCH_NAMESPACE", "metadata.namespace");
	/* router.sh waits for every server's /health as long as their startupProbes do */
	v = item(env);
	add(v, "name", str("NPULAUNCH_WAIT_TIMEOUT"));
	add(v, "value", str(npl_k8s_fmt(k, "%d", k->startup)));
	resources(k, c, k->router_cpus, memory ? memory : "", -1);
	p = item(arr(c, "ports"));
	add(p, "name", str("http"));
	add(p, "containerPort", cJSON_CreateNumber(port));
	add(c, "readinessProbe", probe(port, 0));
	add(c, "livenessProbe", peers_probe(npl_json_str(role, "role")));
	mount(arr(c, "volumeMounts"), "npulaunch", MOUNT, 1);
	vols = arr(spec, "volumes");
	v = item(vols);
	add(v, "name", str("npulaunch"));
	{
		cJSON *cm = obj(v, "configMap");

		add(cm, "name", str(npl_k8s_fmt(k, "%s-scripts", k->prefix)));
		add(cm, "defaultMode", cJSON_CreateNumber(0555));
	}
	return spec;
}
