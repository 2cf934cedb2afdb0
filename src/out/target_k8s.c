/*
 * target_k8s.c: render --target k8s and --target rbg: Kubernetes manifests that
 * run the rendered role scripts; see target.h.
 *
 * k8s: a LeaderWorkerSet per server role (replicas = the role's groups of pods,
 * size = pods per group, RecreateGroupOnPodRestart), the router as a Deployment,
 * a Service for the router and for each instance's leader, and the scripts in a
 * ConfigMap that every pod mounts. rbg: the same roles in one RoleBasedGroup
 * (v1alpha2), the router depending on the servers. Every pod runs the same
 * entrypoint (templates/k8s/entrypoint.sh.tmpl): it resolves the names the
 * controller gives the role's pods into the address lists the scripts read
 * (PREFILL_IPS, ...), checks that the pod is where its group and rank put it,
 * and runs ROLE.sh --no-tune; so each pod launches the plan's argv and
 * environment for its node. The manifests are built as cJSON trees and written
 * as YAML by libyaml's emitter (yamlout.h).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "npl_version.h"
#include "npulaunch/plan.h"
#include "npulaunch/target.h"
#include "npulaunch/text.h"
#include "npulaunch/yamlout.h"

#include "k8s_internal.h"

const char *npl_k8s_fmt(struct k8s *k, const char *f, ...)
{
	struct npl_buf b = NPL_BUF_INIT;
	va_list ap;
	char *s;

	va_start(ap, f);
	npl_buf_vprintf(&b, f, ap);
	va_end(ap);
	s = npl_arena_strdup(k->a, npl_buf_str(&b));
	npl_buf_release(&b);
	return s;
}

/* apiVersion, kind and metadata of an object of the deployment */
static cJSON *object(struct k8s *k, const char *api, const char *kind, const char *name, const char *role)
{
	cJSON *o = cJSON_CreateObject(), *m, *l;

	add(o, "apiVersion", str(api));
	add(o, "kind", str(kind));
	m = obj(o, "metadata");
	add(m, "name", str(name));
	if (k->ns)
		add(m, "namespace", str(k->ns));
	l = obj(m, "labels");
	add(l, "app.kubernetes.io/name", str(k->prefix));
	if (role)
		add(l, "app.kubernetes.io/component", str(role));
	add(l, "app.kubernetes.io/managed-by", str("npulaunch"));
	add(obj(m, "annotations"), "npulaunch.io/recipe", str(k->id));
	return o;
}

static void labels(struct k8s *k, cJSON *l, const char *role)
{
	add(l, "app.kubernetes.io/name", str(k->prefix));
	add(l, "app.kubernetes.io/component", str(role));
	add(l, "app.kubernetes.io/managed-by", str("npulaunch"));
}

/* The number a node's flag (--port) has, or 0. */
static int node_port(const cJSON *node, const char *flag)
{
	const cJSON *f, *v;

	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(node, "flags")) {
		if (!npl_json_str(f, "flag") || strcmp(npl_json_str(f, "flag"), flag))
			continue;
		v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(f, "values"), 0);
		return cJSON_IsString(v) && npl_parse_uint(v->valuestring) > 0 ? npl_parse_uint(v->valuestring) : 0;
	}
	return 0;
}

/* The port of the router (its --port). */
static int flag_port(const cJSON *role, const char *flag)
{
	return node_port(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(role, "nodes"), 0), flag);
}

/* The names of the workloads and pods, as the controller makes them. */
static const char *workload(struct k8s *k, const char *role)
{
	return npl_k8s_fmt(k, "%s-%s", k->prefix, role);
}

static const char *subdomain(struct k8s *k, const char *role)
{
	return k->rbg ? npl_k8s_fmt(k, "s-%s-%s", k->prefix, role) : workload(k, role);
}

static const char *pod_name(struct k8s *k, const char *role, int group, int worker)
{
	if (k->rbg)
		return npl_k8s_fmt(k, "%s-%s-%d-%d", k->prefix, role, group, worker);
	return worker ? npl_k8s_fmt(k, "%s-%s-%d-%d", k->prefix, role, group, worker) : npl_k8s_fmt(k, "%s-%s-%d", k->prefix, role, group);
}

/* Kubernetes names: a pod's hostname is a DNS label (63), a StatefulSet's revision label
 * holds its name and 11 more characters. */
static void check_name(struct k8s *k, const char *name, int max, const char *what)
{
	if ((int)strlen(name) > max && !k->rc)
		k->rc = npl_error(k->d, NULL, "render --target %s: the %s '%s' is longer than Kubernetes allows (%d): give a shorter --name-prefix than '%s'",
				  k->tg->name, what, name, max, k->prefix);
}

/* The Service of a server instance (endpoint ep of role), on its leader pod: the group that
 * runs the instance's rank 0, its port and bootstrap port. */
static cJSON *instance_service(struct k8s *k, const cJSON *role, const cJSON *ep, const struct npl_pod *pods,
			       int npods)
{
	const char *name = npl_json_str(role, "role");
	int inst = npl_json_int(ep, "instance", 0), port = 0, boot = npl_json_int(ep, "bootstrap_port", 0);
	const cJSON *node;
	int group = 0, i;
	cJSON *s, *spec, *sel, *ports, *p;

	cJSON_ArrayForEach(node, cJSON_GetObjectItemCaseSensitive(role, "nodes"))
		if (npl_json_int(node, "instance", -1) == inst && npl_json_int(node, "rank", 0) == 0) {
			for (i = 0; i < npods; i++)
				if (pods[i].node == npl_json_int(node, "index", 0))
					group = pods[i].group;
			port = node_port(node, "--port");
			break;
		}
	s = object(k, "v1", "Service", npl_k8s_fmt(k, "%s-%s-%d", k->prefix, name, inst), name);
	check_name(k, npl_json_str(cJSON_GetObjectItemCaseSensitive(s, "metadata"), "name"), 63, "service name");
	spec = obj(s, "spec");
	add(spec, "type", str("ClusterIP"));
	sel = obj(spec, "selector");
	if (k->rbg) {
		add(sel, "rbg.workloads.x-k8s.io/group-name", str(k->prefix));
		add(sel, "rbg.workloads.x-k8s.io/role-name", str(name));
		add(sel, "rbg.workloads.x-k8s.io/role-instance-index", str(npl_k8s_fmt(k, "%d", group)));
		add(sel, "rbg.workloads.x-k8s.io/component-name", str("leader"));
	} else {
		add(sel, "leaderworkerset.sigs.k8s.io/name", str(workload(k, name)));
		add(sel, "leaderworkerset.sigs.k8s.io/group-index", str(npl_k8s_fmt(k, "%d", group)));
		add(sel, "leaderworkerset.sigs.k8s.io/worker-index", str("0"));
	}
	ports = arr(spec, "ports");
	p = item(ports);
	add(p, "name", str("http"));
	add(p, "port", cJSON_CreateNumber(port));
	add(p, "targetPort", cJSON_CreateNumber(port));
	if (boot) {
		p = item(ports);
		add(p, "name", str("bootstrap"));
		add(p, "port", cJSON_CreateNumber(boot));
		add(p, "targetPort", cJSON_CreateNumber(boot));
	}
	return s;
}

static void server_objects(struct k8s *k, const cJSON *role, cJSON *docs, cJSON *rbg_roles, cJSON *svcs)
{
	const char *name = npl_json_str(role, "role");
	const char *wl = workload(k, name);
	struct npl_pod *pods;
	int npods, size, groups;
	cJSON *tmpl;
	const cJSON *ep;

	pods = npl_target_pods(role, &npods, &size);
	groups = (npods + size - 1) / size;
	check_name(k, pod_name(k, name, groups - 1, size - 1), 63, "pod name");
	check_name(k, k->rbg ? npl_k8s_fmt(k, "%s-%d", wl, groups - 1) : size > 1 ? npl_k8s_fmt(k, "%s-%d", wl, groups - 1) : wl, 52,
		   "workload name");
	check_name(k, subdomain(k, name), 63, "service name");
	if (!k->rbg) {
		cJSON *o = object(k, "leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", wl, name), *spec, *lwt;

		spec = obj(o, "spec");
		add(spec, "replicas", cJSON_CreateNumber(groups));
		/* not LeaderReady: the leader turns ready only once every rank has joined */
		add(spec, "startupPolicy", str("LeaderCreated"));
		add(obj(spec, "networkConfig"), "subdomainPolicy", str("Shared"));
		lwt = obj(spec, "leaderWorkerTemplate");
		add(lwt, "size", cJSON_CreateNumber(size));
		add(lwt, "restartPolicy", str("RecreateGroupOnPodRestart"));
		if (size > 1) {
			tmpl = obj(lwt, "leaderTemplate");
			labels(k, obj(obj(tmpl, "metadata"), "labels"), name);
			add(tmpl, "spec", npl_k8s_server_pod(k, role, &pods[0], 1));
		}
		tmpl = obj(lwt, "workerTemplate");
		labels(k, obj(obj(tmpl, "metadata"), "labels"), name);
		add(tmpl, "spec", npl_k8s_server_pod(k, role, size > 1 ? &pods[1] : &pods[0], size == 1));
		cJSON_AddItemToArray(docs, o);
	} else {
		cJSON *r = item(rbg_roles), *lwp;

		add(r, "name", str(name));
		add(r, "replicas", cJSON_CreateNumber(groups));
		lwp = obj(r, "leaderWorkerPattern");
		add(lwp, "size", cJSON_CreateNumber(size));
		add(lwp, "restartPolicy", str("RecreateRoleInstanceOnPodRestart"));
		tmpl = obj(lwp, "template");
		labels(k, obj(obj(tmpl, "metadata"), "labels"), name);
		add(tmpl, "spec", npl_k8s_server_pod(k, role, size > 1 ? &pods[1] : &pods[0], size == 1));
		if (size > 1) {
			/* the probes on the leader alone: a strategic merge by container name */
			cJSON *leader = npl_k8s_server_pod(k, role, &pods[0], 1), *c, *pc;

			c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(leader, "containers"), 0);
			pc = item(arr(obj(obj(lwp, "leaderTemplatePatch"), "spec"), "containers"));
			add(pc, "name", str("sglang"));
			add(pc, "startupProbe", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(c, "startupProbe"), 1));
			add(pc, "readinessProbe", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(c, "readinessProbe"), 1));
			cJSON_Delete(leader);
		}
	}
	/* a Service per instance, on its leader: where clients and npulaunch status reach it */
	cJSON_ArrayForEach(ep, cJSON_GetObjectItemCaseSensitive(role, "endpoints"))
		cJSON_AddItemToArray(svcs, instance_service(k, role, ep, pods, npods));
	free(pods);
}

static void router_objects(struct k8s *k, const cJSON *role, cJSON *docs, cJSON *rbg_roles, cJSON *svcs)
{
	const char *name = npl_json_str(role, "role");
	int port = flag_port(role, "--port");
	cJSON *s, *spec, *sel, *p;
	const cJSON *r;

	if (!k->rbg) {
		cJSON *o = object(k, "apps/v1", "Deployment", workload(k, name), name), *tmpl;

		spec = obj(o, "spec");
		add(spec, "replicas", cJSON_CreateNumber(1));
		sel = obj(obj(spec, "selector"), "matchLabels");
		add(sel, "app.kubernetes.io/name", str(k->prefix));
		add(sel, "app.kubernetes.io/component", str(name));
		tmpl = obj(spec, "template");
		labels(k, obj(obj(tmpl, "metadata"), "labels"), name);
		add(tmpl, "spec", npl_k8s_router_pod(k, role, port));
		cJSON_AddItemToArray(docs, o);
	} else {
		cJSON *ro = item(rbg_roles), *deps, *tmpl;

		add(ro, "name", str(name));
		add(ro, "replicas", cJSON_CreateNumber(1));
		/* created once the servers are ready; router.sh waits for each /health as well. Not
		 * under gang scheduling: the group's PodGroup counts the router's pod, so the servers
		 * would wait to be scheduled for a pod made only once they are ready, for ever; then
		 * the router's own wait (router.sh) is the order */
		if (!k->gang) {
			deps = arr(ro, "dependencies");
			cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(k->plan, "roles"))
				if (!strcmp(npl_json_str(r, "program"), "server"))
					cJSON_AddItemToArray(deps, str(npl_json_str(r, "role")));
		}
		tmpl = obj(obj(ro, "standalonePattern"), "template");
		labels(k, obj(obj(tmpl, "metadata"), "labels"), name);
		add(tmpl, "spec", npl_k8s_router_pod(k, role, port));
	}
	s = object(k, "v1", "Service", workload(k, name), name);
	spec = obj(s, "spec");
	add(spec, "type", str("ClusterIP"));
	sel = obj(spec, "selector");
	add(sel, "app.kubernetes.io/name", str(k->prefix));
	add(sel, "app.kubernetes.io/component", str(name));
	p = item(arr(spec, "ports"));
	add(p, "name", str("http"));
	add(p, "port", cJSON_CreateNumber(port));
	add(p, "targetPort", cJSON_CreateNumber(port));
	cJSON_AddItemToArray(svcs, s);
}

/* ---- the entrypoint ----------------------------------------------------------- */

static void lit(cJSON *o, const char *k, const char *v)
{
	struct npl_buf b = NPL_BUF_INIT;

	npl_pval_lit(&b, v);
	cJSON_AddStringToObject(o, k, npl_buf_str(&b));
	npl_buf_release(&b);
}

/* The role whose nodes site list key holds. */
static const cJSON *role_of_list(const cJSON *plan, const char *key)
{
	const cJSON *r;

	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(plan, "roles"))
		if (npl_json_str(r, "node_list") && !strcmp(npl_json_str(r, "node_list"), key))
			return r;
	return NULL;
}

static cJSON *entry_view(struct k8s *k)
{
	cJSON *v = cJSON_CreateObject(), *roles = arr(v, "roles");
	const cJSON *r, *need;
	char gen[64];

	snprintf(gen, sizeof(gen), "npulaunch %s", NPL_VERSION);
	lit(v, "generator", gen);
	lit(v, "id", k->id);
	lit(v, "target", k->tg->name);
	lit(v, "mount", MOUNT);
	add(v, "rbg", cJSON_CreateBool(k->rbg));
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(k->plan, "roles")) {
		const char *prog = npl_json_str(r, "program"), *own = npl_json_str(r, "node_list");
		cJSON *o, *lists;

		if (!strcmp(prog, "bench"))
			continue;
		o = item(roles);
		lit(o, "role", npl_json_str(r, "role"));
		lit(o, "script", npl_json_str(r, "script"));
		add(o, "server", cJSON_CreateBool(!strcmp(prog, "server")));
		lists = arr(o, "lists");
		cJSON_ArrayForEach(need, cJSON_GetObjectItemCaseSensitive(r, "needs")) {
			const cJSON *of = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(need, "list"))
				? role_of_list(k->plan, npl_json_str(need, "key")) : NULL;
			struct npl_pod *pods;
			int n, size, i;
			cJSON *l, *names;

			if (!of)
				continue;
			l = item(lists);
			lit(l, "var", npl_json_str(need, "var"));
			names = arr(l, "names");
			pods = npl_target_pods(of, &n, &size);
			for (i = 0; i < n; i++) {
				struct npl_buf b = NPL_BUF_INIT;
				const char *rn = npl_json_str(of, "role");

				npl_pval_lit(&b, npl_k8s_fmt(k, "%s.%s", pod_name(k, rn, pods[i].group, pods[i].worker), subdomain(k, rn)));
				cJSON_AddItemToArray(names, str(npl_buf_str(&b)));
				npl_buf_release(&b);
			}
			free(pods);
		}
		if (own) {
			struct npl_pod *pods;
			int n, size;
			cJSON *p = obj(o, "place");

			pods = npl_target_pods(r, &n, &size);
			free(pods);
			lit(p, "var", npl_site_var(npl_site_key_from_name(own)));
			add(p, "size", cJSON_CreateNumber(size));
			add(p, "groups", cJSON_CreateNumber((n + size - 1) / size));
		}
	}
	return v;
}

/* ---- the whole ------------------------------------------------------------------- */

static void write_docs(struct k8s *k, struct npl_outset *set, const char *dir, const char *file, const cJSON *docs,
		       const char *head)
{
	struct npl_buf b = NPL_BUF_INIT;
	char path[4096];

	if (head)
		npl_buf_puts(&b, head);
	snprintf(path, sizeof(path), "%s%s%s", dir, *dir ? "/" : "", file);
	/* libyaml refuses only text that is not UTF-8, which no value npulaunch accepts holds: were
	   one to, the bundle is refused rather than a file written empty */
	if (npl_yamlout_docs(&b, docs)) {
		k->rc = npl_error(k->d, NULL, "render --target %s: %s cannot be written as YAML (text that is not UTF-8)",
				  k->tg->name, path);
	} else {
		npl_out_add(set, path, npl_buf_str(&b), b.len, 0644);
	}
	npl_buf_release(&b);
}

/* k's values from the plan: the site values checked (every problem said), the container's and
 * the scheduling's. -1 when the plan cannot be rendered for the target. */
static int read_plan(struct k8s *k, const struct npl_target_opts *o)
{
	static const char *const docker_only[] = {"container-runtime", NULL};
	const cJSON *plan = k->plan;
	struct npl_buf pre = NPL_BUF_INIT;

	k->id = npl_json_str(cJSON_GetObjectItemCaseSensitive(plan, "recipe"), "id");
	if (npl_target_check_site(plan, k->tg->name, 0, k->d) | (npl_target_unused(plan, k->tg->name, o->strict, docker_only, "the docker target's: the kubelet runs the containers", k->d) |
	    (npl_target_model_volume(plan, k->tg->name, &k->claim, &k->mount, k->d) < 0)))
		return -1;
	k->prefix = npl_arena_strdup(k->a, npl_target_prefix(plan, &pre));
	npl_buf_release(&pre);
	k->ns = npl_target_site(plan, "namespace", NULL);
	k->image = npl_target_container_str(plan, "image");
	k->router_image = npl_target_container_str(plan, "router_image");
	k->res = npl_target_container_str(plan, "npu_resource");
	k->unit = npl_target_container_str(plan, "npu_unit");
	k->shm = npl_target_container_str(plan, "shm_size");
	k->privileged = cJSON_IsTrue(npl_target_container(plan, "privileged"));
	k->tune = npl_target_tunes(plan);
	k->gang = npl_target_site_bool(plan, "gang", 0);
	k->cpus = npl_target_container_str(plan, "cpus");
	k->memory = npl_target_container_str(plan, "memory");
	k->router_cpus = npl_target_container_str(plan, "router_cpus");
	k->router_memory = npl_target_container_str(plan, "router_memory");
	k->node_dies = npl_json_int(cJSON_GetObjectItemCaseSensitive(plan, "recipe"), "dies_per_card", 1) *
		       npl_json_int(cJSON_GetObjectItemCaseSensitive(plan, "recipe"), "cards_per_node", 1);
	if (k->node_dies < 1)
		k->node_dies = 1;
	/* 30 minutes unless the site says: weights and graphs of the largest models */
	k->startup = atoi(npl_target_site(plan, "startup-timeout", "1800"));
	k->priority = npl_target_site(plan, "priority-class", NULL);
	k->scheduler = npl_target_site(plan, "scheduler", NULL);
	/* gang scheduling of LeaderWorkerSets is Volcano's, enabled in the LWS controller's
	 * configuration; the pods then need its scheduler */
	if (k->gang && !k->rbg && !k->scheduler)
		k->scheduler = "volcano";
	if (!k->image || !k->res || !k->unit || !k->cpus || !k->memory || !k->router_cpus || !k->router_memory)
		return -1;   /* the resolver said which */
	if (!k->claim)
		k->ndirs = npl_target_model_dirs(plan, k->dirs);
	return 0;
}

/* The ConfigMap of the scripts every pod mounts: the entrypoint and each role's script. */
static cJSON *scripts_configmap(struct k8s *k, struct npl_templates *t)
{
	cJSON *cm = object(k, "v1", "ConfigMap", npl_k8s_fmt(k, "%s-scripts", k->prefix), NULL), *data = obj(cm, "data");
	cJSON *view = entry_view(k);
	struct npl_buf script = NPL_BUF_INIT;
	const cJSON *role;

	if (npl_render_template("k8s/entrypoint.sh.tmpl", view, t, &script, k->d))
		k->rc = -1;
	cJSON_Delete(view);
	add(data, "entrypoint.sh", str(npl_buf_str(&script)));
	cJSON_ArrayForEach(role, cJSON_GetObjectItemCaseSensitive(k->plan, "roles")) {
		npl_buf_reset(&script);
		if (npl_render_role(k->plan, role, t, &script, k->d))
			k->rc = -1;
		add(data, npl_json_str(role, "script"), str(npl_buf_str(&script)));
	}
	npl_buf_release(&script);
	return cm;
}

/* The comment that heads kustomization.yaml: what the files are, how to apply them, and who
 * tunes the nodes; the note on what untuned nodes need is also said. */
static void head_comment(struct k8s *k, struct npl_buf *head)
{
	struct npl_buf note = NPL_BUF_INIT, text = NPL_BUF_INIT;

	/* the note on what the nodes need when the pods do not tune them: in the output, and said */
	if (!k->tune) {
		npl_target_untuned_note(k->plan, "a privileged init container that runs the role script's --tune-only", &note);
		npl_diag_add(k->d, NPL_NOTE, NULL, "%s", npl_buf_str(&note));
	}
	npl_buf_printf(&text, "%s: %s on Kubernetes (render --target %s), generated by npulaunch %s.\n", k->id,
		       k->rbg ? "one RoleBasedGroup" : "LeaderWorkerSets, the router's Deployment", k->tg->name, NPL_VERSION);
	npl_buf_puts(&text, "Apply with: kubectl apply -k DIR. The pods run the role scripts of configmap.yaml.\n");
	if (!k->tune)
		npl_buf_printf(&text, "Note: %s.", npl_buf_str(&note));
	else
		npl_buf_puts(&text, "Each server pod tunes its node first (init container 'tune', privileged; journal in\n"
				    "/run/npulaunch on the node: 'npulaunch tune --revert' there puts it back).");
	/* the note holds the recipe's values (its sysctls): written as a comment can hold them */
	npl_yamlout_comment(head, npl_buf_str(&text));
	npl_buf_release(&text);
	npl_buf_release(&note);
}

/* kustomization.yaml: the three files of objects, in the site's namespace. */
static void write_kustomization(struct k8s *k, struct npl_outset *set, const char *dir, const char *head)
{
	cJSON *kd = cJSON_CreateArray(), *kust = cJSON_CreateObject(), *res;

	add(kust, "apiVersion", str("kustomize.config.k8s.io/v1beta1"));
	add(kust, "kind", str("Kustomization"));
	if (k->ns)
		add(kust, "namespace", str(k->ns));
	res = arr(kust, "resources");
	if (k->ns)
		cJSON_AddItemToArray(res, str("namespace.yaml"));
	cJSON_AddItemToArray(res, str("configmap.yaml"));
	cJSON_AddItemToArray(res, str(k->rbg ? "rolebasedgroup.yaml" : "workloads.yaml"));
	cJSON_AddItemToArray(res, str("services.yaml"));
	cJSON_AddItemToArray(kd, kust);
	write_docs(k, set, dir, "kustomization.yaml", kd, head);
	cJSON_Delete(kd);
}

/* namespace.yaml: the site's namespace, made by kubectl apply -k if it is not there. Its pods
 * use the host's network and folders (privileged too, by default): Pod Security Admission's level
 * 'privileged' is what admits them. */
static void write_namespace(struct k8s *k, struct npl_outset *set, const char *dir)
{
	cJSON *docs = cJSON_CreateArray(), *ns = cJSON_CreateObject(), *m, *l;

	add(ns, "apiVersion", str("v1"));
	add(ns, "kind", str("Namespace"));
	m = obj(ns, "metadata");
	add(m, "name", str(k->ns));
	l = obj(m, "labels");
	add(l, "app.kubernetes.io/managed-by", str("npulaunch"));
	add(l, "pod-security.kubernetes.io/enforce", str("privileged"));
	cJSON_AddItemToArray(docs, ns);
	write_docs(k, set, dir, "namespace.yaml", docs, NULL);
	cJSON_Delete(docs);
}

/* configmap.yaml: the scripts; the workloads in the other file. docs is emptied. */
static void write_objects(struct k8s *k, struct npl_outset *set, const char *dir, cJSON *docs)
{
	cJSON *one = cJSON_CreateArray(), *rest = cJSON_CreateArray(), *doc;

	while ((doc = cJSON_DetachItemFromArray(docs, 0))) {
		if (!strcmp(npl_json_str(doc, "kind"), "ConfigMap"))
			cJSON_AddItemToArray(one, doc);
		else
			cJSON_AddItemToArray(rest, doc);
	}
	if (k->ns)
		write_namespace(k, set, dir);
	write_docs(k, set, dir, "configmap.yaml", one, NULL);
	write_docs(k, set, dir, k->rbg ? "rolebasedgroup.yaml" : "workloads.yaml", rest, NULL);
	cJSON_Delete(one);
	cJSON_Delete(rest);
}

static int render(const struct npl_target *tg, int rbg, const cJSON *plan, struct npl_templates *t,
		  const char *dir, const struct npl_target_opts *o, struct npl_outset *set, struct npl_diag *d)
{
	struct npl_arena arena;
	struct npl_buf head = NPL_BUF_INIT;
	struct k8s k;
	cJSON *docs = cJSON_CreateArray(), *svcs = cJSON_CreateArray(), *rbgo = NULL, *rbg_roles = NULL;
	const cJSON *role;
	char *manifest;

	memset(&k, 0, sizeof(k));
	npl_arena_init(&arena);
	k.a = &arena;
	k.plan = plan;
	k.tg = tg;
	k.rbg = rbg;
	k.d = d;
	if (read_plan(&k, o)) {
		k.rc = -1;
		goto out;
	}
	cJSON_AddItemToArray(docs, scripts_configmap(&k, t));
	if (rbg) {
		rbgo = object(&k, "workloads.x-k8s.io/v1alpha2", "RoleBasedGroup", k.prefix, NULL);
		if (k.gang)
			add(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rbgo, "metadata"), "annotations"),
			    "rbg.workloads.x-k8s.io/group-gang-scheduling", str("true"));
		rbg_roles = arr(obj(rbgo, "spec"), "roles");
		cJSON_AddItemToArray(docs, rbgo);
	}
	cJSON_ArrayForEach(role, cJSON_GetObjectItemCaseSensitive(plan, "roles")) {
		const char *prog = npl_json_str(role, "program");

		if (!strcmp(prog, "server"))
			server_objects(&k, role, docs, rbg_roles, svcs);
		else if (!strcmp(prog, "router"))
			router_objects(&k, role, docs, rbg_roles, svcs);
	}
	if (k.rc)
		goto out;
	head_comment(&k, &head);
	write_kustomization(&k, set, dir, npl_buf_str(&head));
	write_objects(&k, set, dir, docs);
	write_docs(&k, set, dir, "services.yaml", svcs, NULL);
	/* a bundle, as the scripts' folder is: the manifest records every file by sha256, so that
	   the next render refuses to overwrite an edited one and lands the folder in one rename */
	manifest = npl_render_manifest(plan);
	npl_out_add_manifest(set, dir, "manifest.json", manifest);
	free(manifest);
out:
	cJSON_Delete(docs);
	cJSON_Delete(svcs);
	npl_buf_release(&head);
	npl_arena_release(&arena);
	return k.rc ? -1 : 0;
}

static int render_lws(const cJSON *plan, struct npl_templates *t, const char *dir,
		      const struct npl_target_opts *o, struct npl_outset *set, struct npl_diag *d)
{
	return render(&npl_target_k8s, 0, plan, t, dir, o, set, d);
}

static int render_rbg(const cJSON *plan, struct npl_templates *t, const char *dir,
		      const struct npl_target_opts *o, struct npl_outset *set, struct npl_diag *d)
{
	return render(&npl_target_rbg, 1, plan, t, dir, o, set, d);
}

const struct npl_target npl_target_k8s = {
	"k8s",
	{"k8s", "0.0.0.0", "render --target k8s: the router's and the PD-mixed server's Services reach them from other pods", 1},
	render_lws,
	"LeaderWorkerSets, the router's Deployment, Services, the scripts in a ConfigMap (kubectl apply -k)",
	0,
	0,
	NULL,
	NULL,
};

const struct npl_target npl_target_rbg = {
	"rbg",
	{"rbg", "0.0.0.0", "render --target rbg: the router's and the PD-mixed server's Services reach them from other pods", 1},
	render_rbg,
	"one RoleBasedGroup (v1alpha2) with the same roles, Services, the scripts in a ConfigMap",
	0,
	0,
	NULL,
	NULL,
};
