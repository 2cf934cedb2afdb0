/*
 * target_docker.c: render --target docker: the role scripts and, for each role,
 * docker-ROLE.sh, which runs that script in a container on a node without
 * Kubernetes (templates/docker/run.sh.tmpl): optionally the script's own tuning
 * on the host (ROLE.sh --tune-only), then docker run (or podman run) with the
 * hardware profile's devices and host files, the host's network, /dev/shm, the
 * model and the bundle mounted where they are on the host, running
 * ROLE.sh --no-tune inside. See target.h.
 */
#include <stdlib.h>
#include <string.h>

#include "npl_version.h"
#include "npulaunch/plan.h"
#include "npulaunch/site.h"
#include "npulaunch/target.h"
#include "npulaunch/text.h"

/* a literal for the template: its escape reads plan values ($ doubled) */
static void lit_add(cJSON *a, const char *s)
{
	struct npl_buf b = NPL_BUF_INIT;

	npl_pval_lit(&b, s);
	cJSON_AddItemToArray(a, cJSON_CreateString(npl_buf_str(&b)));
	npl_buf_release(&b);
}

/* one line of docker run's options: an option and its value (v may be NULL) */
static void opt(cJSON *args, const char *o, const char *v)
{
	cJSON *line = cJSON_CreateObject(), *words = cJSON_AddArrayToObject(line, "words");

	lit_add(words, o);
	if (v)
		lit_add(words, v);
	cJSON_AddItemToArray(args, line);
}

static void lit(cJSON *o, const char *k, const char *s)
{
	struct npl_buf b = NPL_BUF_INIT;

	npl_pval_lit(&b, s);
	cJSON_AddStringToObject(o, k, npl_buf_str(&b));
	npl_buf_release(&b);
}

static cJSON *run_view(const cJSON *plan, const cJSON *role, const char *prefix, const char *note)
{
	cJSON *v = cJSON_CreateObject(), *args = cJSON_CreateArray(), *env = cJSON_CreateArray();
	cJSON *make = cJSON_CreateArray();
	const char *prog = npl_json_str(role, "program"), *r = npl_json_str(role, "role");
	const char *dirs[2];
	const cJSON *it, *need;
	char gen[64];
	int server = !strcmp(prog, "server"), i, n;
	static const char *const own[] = {"NPULAUNCH_NODE_IP", "NPULAUNCH_WAIT_TIMEOUT", "NPULAUNCH_ROOT",
					  "NPULAUNCH_PREFLIGHT"};

	snprintf(gen, sizeof(gen), "npulaunch %s", NPL_VERSION);
	lit(v, "generator", gen);
	lit(v, "id", npl_json_str(cJSON_GetObjectItemCaseSensitive(plan, "recipe"), "id"));
	lit(v, "role", r);
	lit(v, "script", npl_json_str(role, "script"));
	cJSON_AddBoolToObject(v, "server", server);
	cJSON_AddBoolToObject(v, "bench", !strcmp(prog, "bench"));
	lit(v, "runtime", npl_target_site(plan, "container-runtime", "auto"));
	cJSON_AddBoolToObject(v, "tune", server && npl_target_tunes(plan));
	/* the role script binds its server (affinity): the container's cpuset is its dies' CPUs,
	   computed on the host by the script itself */
	{
		const cJSON *pol, *node;
		int binds = 0;

		cJSON_ArrayForEach(node, cJSON_GetObjectItemCaseSensitive(role, "nodes"))
			binds |= server && !npl_plan_affinity_owner(role, npl_json_int(node, "index", 0), &pol);
		cJSON_AddBoolToObject(v, "affinity", binds);
	}
	if (server && note)
		lit(v, "note", note);
	lit(v, "image", npl_target_container_str(plan, strcmp(r, "router") ? "image" : "router_image"));
	/* the options of docker run, a line each */
	opt(args, "--rm", NULL);
	{
		struct npl_buf b = NPL_BUF_INIT;

		npl_buf_printf(&b, "%s-%s", prefix, r);
		opt(args, "--name", npl_buf_str(&b));
		npl_buf_release(&b);
	}
	opt(args, "--net=host", NULL);
	if (server) {
		/* the host's IPC namespace, and so its /dev/shm: no --shm-size, which has no use there
		   and which podman refuses beside --ipc=host (exit 125) */
		opt(args, "--ipc=host", NULL);
		if (cJSON_IsTrue(npl_target_container(plan, "privileged")))
			opt(args, "--privileged", NULL);
		cJSON_ArrayForEach(it, npl_target_container(plan, "devices"))
			opt(args, "--device", it->valuestring);
		cJSON_ArrayForEach(it, npl_target_container(plan, "mounts")) {
			struct npl_buf b = NPL_BUF_INIT;
			const char *p = npl_json_str(it, "path");

			/* a folder the container writes is made first: docker makes a missing one,
			   podman refuses it */
			if (!strcmp(npl_json_str(it, "kind"), "DirectoryOrCreate"))
				lit_add(make, p);
			npl_buf_printf(&b, "%s:%s%s", p, p, strcmp(npl_json_str(it, "kind"), "DirectoryOrCreate") ? ":ro" : "");
			opt(args, "-v", npl_buf_str(&b));
			npl_buf_release(&b);
		}
		n = npl_target_model_dirs(plan, dirs);
		for (i = 0; i < n; i++) {
			struct npl_buf b = NPL_BUF_INIT;

			npl_buf_printf(&b, "%s:%s:ro", dirs[i], dirs[i]);
			opt(args, "-v", npl_buf_str(&b));
			npl_buf_release(&b);
		}
	}
	cJSON_AddItemToObject(v, "args", args);
	cJSON_AddBoolToObject(v, "made", cJSON_GetArraySize(make) > 0);
	cJSON_AddItemToObject(v, "make", make);
	/* what the script reads from its environment reaches it: -e NAME passes the host's
	 * value when it is set, nothing otherwise */
	cJSON_ArrayForEach(need, cJSON_GetObjectItemCaseSensitive(role, "needs"))
		lit_add(env, npl_json_str(need, "var"));
	for (i = 0; i < (int)NPL_ARRAY_SIZE(own); i++)
		lit_add(env, own[i]);
	cJSON_AddItemToObject(v, "env", env);
	return v;
}

static int render_docker(const cJSON *plan, struct npl_templates *t, const char *dir,
			 const struct npl_target_opts *o, struct npl_outset *set, struct npl_diag *d)
{
	struct npl_buf pre = NPL_BUF_INIT, note = NPL_BUF_INIT;
	const char *prefix;
	const cJSON *role;
	int rc = 0;

	static const char *const k8s_only[] = {"namespace", "npu-resource", "npu-unit", "node-selector", "scheduler",
					       "gang", "model-volume", "model-mount", "server-cpus", "server-memory",
					       "router-cpus", "router-memory", "router-node-selector", "toleration",
					       "image-pull-secret", "priority-class", "startup-timeout", NULL};
	static const char *const shm[] = {"shm-size", NULL};

	if (npl_target_check_site(plan, "docker", 1, d) |
	    npl_target_unused(plan, "docker", o->strict, k8s_only, "a Kubernetes value: the containers run on the host, with its devices and the model where it is", d) |
	    npl_target_unused(plan, "docker", o->strict, shm, "the servers share the host's IPC namespace (--ipc=host) and so its /dev/shm, whose size is the host's", d))
		return -1;
	if (!npl_target_container_str(plan, "image"))
		return -1;
	prefix = npl_target_prefix(plan, &pre);
	if (!npl_target_tunes(plan)) {
		npl_target_untuned_note(plan, "docker-ROLE.sh to run ROLE.sh --tune-only on the host first", &note);
		npl_diag_add(d, NPL_NOTE, NULL, "%s", npl_buf_str(&note));
	}
	cJSON_ArrayForEach(role, cJSON_GetObjectItemCaseSensitive(plan, "roles")) {
		struct npl_buf b = NPL_BUF_INIT;
		cJSON *view = run_view(plan, role, prefix, note.len ? npl_buf_str(&note) : NULL);
		char path[4096];

		if (npl_render_template("docker/run.sh.tmpl", view, t, &b, d) == 0) {
			snprintf(path, sizeof(path), "%s%sdocker-%s", dir, *dir ? "/" : "", npl_json_str(role, "script"));
			npl_out_add(set, path, npl_buf_str(&b), b.len, 0755);
		} else {
			rc = -1;
		}
		cJSON_Delete(view);
		npl_buf_release(&b);
	}
	/* the scripts and the manifest last: it records every file of the folder added before it */
	if (npl_render_bundle(plan, t, dir, set, d))
		rc = -1;
	npl_buf_release(&pre);
	npl_buf_release(&note);
	return rc;
}

const struct npl_target npl_target_docker = {
	"docker",
	{"docker", NULL, NULL, 1},
	render_docker,
	"the scripts and a docker (or podman) run script per role, for nodes without Kubernetes",
	0,
	0,
	NULL,
	NULL,
};
