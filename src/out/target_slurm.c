/* target_slurm.c: render --target slurm: one batch job per deployment; see target.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npl_version.h"
#include "npulaunch/plan.h"
#include "npulaunch/site.h"
#include "npulaunch/target.h"
#include "npulaunch/text.h"

/* A site value of the plan (plan.site), or NULL. */
static const char *site_str(const cJSON *plan, enum npl_site_key k)
{
	return npl_json_str(cJSON_GetObjectItemCaseSensitive(plan, "site"), npl_site_key_name(k));
}

static int is_program(const cJSON *role, const char *prog)
{
	const char *p = npl_json_str(role, "program");

	return p && !strcmp(p, prog);
}

/* The site values of the plan that contradict a Slurm job (a router node for a deployment
 * without router); -1 with a diagnostic. */
static int slurm_check(const cJSON *plan, const struct npl_target_opts *o, struct npl_diag *d)
{
	const cJSON *recipe = cJSON_GetObjectItemCaseSensitive(plan, "recipe");

	if (!o->all && site_str(plan, NPL_SITE_SLURM_ROUTER_NODE) && !npl_plan_role(plan, "router"))
		return npl_error(d, NULL, "--slurm-router-node: recipe '%s' has no router (%s): drop it",
				 npl_json_str(recipe, "id"), npl_json_str(recipe, "mode"));
	return 0;
}

/* Where each node list starts in the allocation, by site key (-1: no role has it). */
struct lists {
	int first[NPL_SITE_COUNT];
};

/* The entry point's URL as a shell word of the job: a node's address is npl_urls[N], the URL
 * form of the N-th node of the allocation. */
static int job_var(const void *ctx, struct npl_buf *out, const struct npl_pval_seg *seg)
{
	const struct lists *l = ctx;

	if (seg->key == NPL_SITE_ENTRY_IP && seg->index == 0)  /* the entry point's node */
		npl_buf_printf(out, "\"${%s}\"", seg->url ? "npl_entry_url" : "ENTRY_IP");
	else if (seg->index >= 0 && l->first[seg->key] >= 0)
		npl_buf_printf(out, "\"${%s[%d]}\"", seg->url ? "npl_urls" : "npl_addrs", l->first[seg->key] + seg->index);
	else
		return -1;
	return 0;
}

static void add_quoted(cJSON *o, const char *name, const char *value)
{
	struct npl_buf b = NPL_BUF_INIT;

	npl_shell_quote(&b, value);
	cJSON_AddStringToObject(o, name, npl_buf_str(&b));
	npl_buf_release(&b);
}

/* One step of a server role: an instance over its nodes, or (instances sharing nodes) a node. */
static cJSON *step(const char *role, const char *what, int n, int offset, int count)
{
	cJSON *s = cJSON_CreateObject();
	char name[128];

	snprintf(name, sizeof(name), "%s-%s%d", role, what, n);
	cJSON_AddStringToObject(s, "name", name);
	cJSON_AddNumberToObject(s, "offset", offset);
	cJSON_AddNumberToObject(s, "count", count);
	return s;
}

/* The steps of a server role, from its nodes: one per instance over the nodes it spans (node
 * indexes in rank order), or one per node when instances share nodes (its role script runs
 * each of them). */
static cJSON *steps_of(const cJSON *role, int first)
{
	const char *name = npl_json_str(role, "role");
	cJSON *a = cJSON_CreateArray();
	const cJSON *node;
	int shared = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(role, "shared_nodes"));
	int last = -1, lo = 0, hi = -1;

	cJSON_ArrayForEach(node, cJSON_GetObjectItemCaseSensitive(role, "nodes")) {
		int index = npl_json_int(node, "index", 0);
		int key = shared ? index : npl_json_int(node, "instance", 0);

		if (key != last && hi >= 0) {
			cJSON_AddItemToArray(a, step(name, shared ? "node" : "", last, first + lo, hi - lo + 1));
			hi = -1;
		}
		if (hi < 0)
			lo = hi = index;
		lo = index < lo ? index : lo;
		hi = index > hi ? index : hi;
		last = key;
	}
	if (hi >= 0)
		cJSON_AddItemToArray(a, step(name, shared ? "node" : "", last, first + lo, hi - lo + 1));
	return a;
}

/* "0,1,...,K-1": the logical devices a server of this role uses on each node, which stock Slurm
 * does not export for gres/npu. ASCEND_RT_VISIBLE_DEVICES counts dies, not cards: 16 on a node of
 * 8 two-die A3 cards (the plan's own value, where instances share a node, comes later and wins). */
static void devices(cJSON *o, const cJSON *role, int nodes)
{
	int dies = npl_json_int(role, "dies_per_instance", 0);
	int k = (dies > 0 ? dies : npl_json_int(role, "cards_per_instance", 1)) * npl_json_int(role, "instances", 1) / nodes, i;
	struct npl_buf b = NPL_BUF_INIT;

	if (k < 1)
		k = 1;
	for (i = 0; i < k; i++)
		npl_buf_printf(&b, "%s%d", i ? "," : "", i);
	cJSON_AddStringToObject(o, "devices", npl_buf_str(&b));
	npl_buf_release(&b);
}

/* The #SBATCH lines of a job of total nodes: values checked by site.c, so that sbatch reads
 * them as given. */
static cJSON *sbatch_lines(const cJSON *plan, int total)
{
	const cJSON *recipe = cJSON_GetObjectItemCaseSensitive(plan, "recipe");
	cJSON *job = cJSON_CreateObject();
	const char *s;

	cJSON_AddStringToObject(job, "name", npl_json_str(recipe, "id"));
	cJSON_AddNumberToObject(job, "nodes", total);
	if ((s = site_str(plan, NPL_SITE_SLURM_GRES))) {
		char g[160];

		/* one device file per die (/dev/davinci0-15 on an A3 node of 8 two-die cards) */
		snprintf(g, sizeof(g), "%s:%d", s,
			 npl_json_int(recipe, "cards_per_node", 1) * npl_json_int(recipe, "dies_per_card", 1));
		cJSON_AddStringToObject(job, "gres", g);
	}
	if ((s = site_str(plan, NPL_SITE_SLURM_PARTITION)))
		cJSON_AddStringToObject(job, "partition", s);
	if ((s = site_str(plan, NPL_SITE_SLURM_ACCOUNT)))
		cJSON_AddStringToObject(job, "account", s);
	if ((s = site_str(plan, NPL_SITE_SLURM_TIME)))
		cJSON_AddStringToObject(job, "time", s);
	if ((s = site_str(plan, NPL_SITE_SLURM_ROUTER_NODE)) && npl_plan_role(plan, "router"))
		cJSON_AddStringToObject(job, "router_node", s);
	if ((s = site_str(plan, NPL_SITE_SLURM_LOG_DIR)))
		add_quoted(job, "log_dir", s);
	if ((s = site_str(plan, NPL_SITE_SLURM_NPULAUNCH)))
		add_quoted(job, "npulaunch", s);
	/* the steps tune their nodes unless the site says not to (--tune=false) */
	cJSON_AddBoolToObject(job, "tune", npl_target_site_bool(plan, "tune", 1));
	return job;
}

/* The site values the role scripts read that were not given: the job's environment gives them
 * ({key, var} each; the address lists come from the allocation). */
static cJSON *env_needs(const cJSON *plan)
{
	const cJSON *site = cJSON_GetObjectItemCaseSensitive(plan, "site"), *need;
	cJSON *needs = cJSON_CreateArray();

	cJSON_ArrayForEach(need, cJSON_GetObjectItemCaseSensitive(plan, "needs")) {
		const char *key = npl_json_str(need, "key");
		cJSON *n;

		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(need, "list")) ||
		    cJSON_GetObjectItemCaseSensitive(site, key))
			continue;
		n = cJSON_CreateObject();
		cJSON_AddStringToObject(n, "key", key);
		cJSON_AddStringToObject(n, "var", npl_json_str(need, "var"));
		cJSON_AddItemToArray(needs, n);
	}
	return needs;
}

static cJSON *job_view(const cJSON *plan, const struct npl_target_opts *o, struct npl_diag *d)
{
	const cJSON *recipe = cJSON_GetObjectItemCaseSensitive(plan, "recipe"), *r;
	cJSON *v = cJSON_CreateObject(), *roles = cJSON_CreateArray();
	struct npl_buf sum = NPL_BUF_INIT, b = NPL_BUF_INIT;
	struct lists l;
	const char *entry = NULL;
	char gen[64];
	int total = 0, k, entry_node = 0;

	for (k = 0; k < NPL_SITE_COUNT; k++)
		l.first[k] = -1;
	snprintf(gen, sizeof(gen), "npulaunch %s", NPL_VERSION);
	cJSON_AddStringToObject(v, "generator", gen);
	cJSON_AddItemToObject(v, "recipe", cJSON_CreateObjectReference(recipe->child));

	/* the server roles in the plan's order take the allocation's nodes in turn */
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(plan, "roles")) {
		cJSON *role;
		const char *list = npl_json_str(r, "node_list");
		int nodes = npl_json_int(r, "nodes_count", 1), inst = npl_json_int(r, "instances", 1);

		if (!is_program(r, "server"))
			continue;
		role = cJSON_CreateObject();
		cJSON_AddStringToObject(role, "role", npl_json_str(r, "role"));
		cJSON_AddStringToObject(role, "script", npl_json_str(r, "script"));
		cJSON_AddNumberToObject(role, "first", total);
		cJSON_AddNumberToObject(role, "nodes", nodes);
		if (nodes > 1) {
			char range[64];

			snprintf(range, sizeof(range), "%d-%d", total, total + nodes - 1);
			cJSON_AddStringToObject(role, "range", range);
		}
		if (list && (k = npl_site_key_from_name(list)) >= 0) {
			l.first[k] = total;
			cJSON_AddStringToObject(role, "var", npl_site_var(k));
		}
		devices(role, r, nodes);
		cJSON_AddItemToObject(role, "steps", steps_of(r, total));
		cJSON_AddItemToArray(roles, role);
		if (!entry) {
			entry = npl_json_str(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "endpoints"), 0), "url");
			entry_node = total;
		}
		npl_buf_printf(&sum, "%s%s %d node%s", total ? ", " : "", npl_json_str(r, "role"), nodes,
			       nodes == 1 ? "" : "s");
		if (npl_json_int(r, "nodes_per_instance", 1) > 1)
			npl_buf_printf(&sum, " (%d instance%s over %d nodes each)", inst, inst == 1 ? "" : "s",
				       npl_json_int(r, "nodes_per_instance", 1));
		else if (inst > 1)
			npl_buf_printf(&sum, " (%d instances)", inst);
		total += nodes;
	}
	cJSON_AddItemToObject(v, "roles", roles);
	npl_buf_printf(&b, "%d node%s", total, total == 1 ? "" : "s");
	cJSON_AddStringToObject(v, "nodes_text", npl_buf_str(&b));
	npl_buf_reset(&b);
	cJSON_AddStringToObject(v, "summary", npl_buf_str(&sum));

	/* the router and the benchmark on a node the site names, else the entry point's first */
	r = npl_plan_role(plan, "router");
	if (r) {
		entry = npl_json_str(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "endpoints"), 0), "url");
		cJSON_AddStringToObject(v, "router", npl_json_str(r, "script"));
	}
	if (entry && npl_render_shell_word_as(&b, entry, job_var, &l) == 0) {
		cJSON_AddStringToObject(v, "entry_url", npl_buf_str(&b));
	} else {
		npl_error(d, NULL, "recipe '%s': the entry point's URL '%s' names no node of the job",
			  npl_json_str(recipe, "id"), entry ? entry : "");
		cJSON_AddStringToObject(v, "entry_url", "''");
	}
	npl_buf_release(&b);
	cJSON_AddNumberToObject(v, "entry_node", entry_node);
	r = npl_plan_role(plan, "bench");
	if (o->bench && r)
		cJSON_AddStringToObject(v, "bench", npl_json_str(r, "script"));
	cJSON_AddBoolToObject(v, "entry_steps", npl_plan_role(plan, "router") || (o->bench && r));
	cJSON_AddStringToObject(v, "entry_text", !npl_plan_role(plan, "router") ? "the benchmark"
						 : o->bench && r ? "the router and the benchmark" : "the router");

	cJSON_AddItemToObject(v, "job", sbatch_lines(plan, total));
	cJSON_AddItemToObject(v, "needs", env_needs(plan));
	npl_buf_release(&sum);
	return v;
}

static int add_file(const char *tmpl, const char *name, const cJSON *view, struct npl_templates *t,
		    const char *dir, struct npl_outset *set, struct npl_diag *d)
{
	struct npl_buf b = NPL_BUF_INIT;
	char path[4096];
	int rc = npl_render_template(tmpl, view, t, &b, d);

	if (rc == 0) {
		snprintf(path, sizeof(path), "%s%s%s", dir, *dir ? "/" : "", name);
		npl_out_add(set, path, npl_buf_str(&b), b.len, 0755);
	}
	npl_buf_release(&b);
	return rc;
}

static int render_slurm(const cJSON *plan, struct npl_templates *t, const char *dir,
			const struct npl_target_opts *o, struct npl_outset *set, struct npl_diag *d)
{
	int errors = d->errors, rc;

	if (slurm_check(plan, o, d))
		return -1;
	cJSON *view = job_view(plan, o, d);

	rc = d->errors > errors ? -1 : 0;
	if (add_file("slurm/slurm.sbatch.tmpl", "slurm.sbatch", view, t, dir, set, d) ||
	    add_file("slurm/slurm-step.sh.tmpl", "slurm-step.sh", view, t, dir, set, d))
		rc = -1;
	cJSON_Delete(view);
	/* the scripts and the manifest last: it records every file of the folder added before it */
	if (npl_render_bundle(plan, t, dir, set, d) || d->errors > errors)
		rc = -1;
	/* what a job submitted from the bundle writes there: its output (%x-%j.out, the job named
	   after the recipe) and, by default, the steps' logs; render --check does not count them */
	{
		char out[256];

		snprintf(out, sizeof(out), "%s-*.out", npl_json_str(cJSON_GetObjectItemCaseSensitive(plan, "recipe"), "id"));
		npl_out_run_output(set, dir, out);
		if (!site_str(plan, NPL_SITE_SLURM_LOG_DIR))
			npl_out_run_output(set, dir, "logs");
	}
	return rc;
}

/* --tune=false: the steps launch without tuning (a job of a user who is not root, on nodes the
 * site tunes otherwise) */
static const char *const slurm_cluster_keys[] = {"tune", NULL};

const struct npl_target npl_target_slurm = {
	"slurm",
	{"slurm", "${entry-ip[0]}",
	 "render --target slurm: the router (or a one-node server) listens on its node's address, which the job gives (ENTRY_IP), so that clients and npulaunch status reach it from other machines",
	 0},
	render_slurm,
	"slurm.sbatch, one batch job for the deployment, and the slurm-step.sh its steps run",
	1,
	1,
	"slurm-",
	slurm_cluster_keys,
};
