/* render.c: plan + templates -> scripts and manifest; see render.h. */
#include <stdlib.h>
#include <string.h>

#include "npulaunch/arena.h"
#include "npl_version.h"
#include "npulaunch/embedded.h"
#include "npulaunch/fsio.h"
#include "npulaunch/plan.h"
#include "npulaunch/render.h"
#include "npulaunch/template.h"
#include "npulaunch/text.h"

/* A plan value being written as one shell word (npl_render_shell_word_as). */
struct word {
	struct npl_buf *out, lit;
	npl_render_var_fn *var;
	const void *ctx;
	int any, bad;
};

static void flush_lit(struct word *w)
{
	if (w->lit.len) {
		npl_shell_quote(w->out, npl_buf_str(&w->lit));
		npl_buf_reset(&w->lit);
		w->any = 1;
	}
}

static int word_seg(void *p, const struct npl_pval_seg *seg)
{
	struct word *w = p;

	if (seg->key < 0) {
		npl_buf_add(&w->lit, seg->lit, seg->len);
		return 0;
	}
	flush_lit(w);
	if (w->var(w->ctx, w->out, seg))
		w->bad = 1;
	w->any = 1;
	return 0;
}

int npl_render_shell_word_as(struct npl_buf *out, const char *pval, npl_render_var_fn *var, const void *ctx)
{
	struct word w = {out, NPL_BUF_INIT, var, ctx, 0, 0};

	npl_pval_walk(pval, word_seg, &w);
	flush_lit(&w);
	if (!w.any)
		npl_buf_puts(out, "''");
	npl_buf_release(&w.lit);
	return w.bad ? -1 : 0;
}

/* The role scripts' own variables: "$VAR" for a scalar, "${VAR[i]}" for an entry of a list. */
static int script_var(const void *ctx, struct npl_buf *out, const struct npl_pval_seg *seg)
{
	(void)ctx;
	if (seg->index < 0)
		npl_buf_printf(out, "\"$%s\"", npl_site_var(seg->key));
	else
		npl_buf_printf(out, "\"${%s[%d]}\"",
			       seg->url ? npl_site_host_var(seg->key) : npl_site_var(seg->key), seg->index);
	return 0;
}

void npl_render_shell_word(struct npl_buf *out, const char *pval)
{
	npl_render_shell_word_as(out, pval, script_var, NULL);
}

static void escape(void *ctx, struct npl_buf *out, const char *text)
{
	(void)ctx;
	npl_render_shell_word(out, text);
}

static const char *template_text(struct npl_templates *t, const char *name, const char **file,
				 struct npl_diag *d)
{
	const struct npl_embedded *e;
	char path[4096];
	size_t len;
	char *text;
	int i;

	if (!t || !t->dir) {
		snprintf(path, sizeof(path), "templates/%s", name);
		for (e = npl_embedded_templates; e->name; e++)
			if (!strcmp(e->name, path)) {
				*file = e->name;
				return e->data;
			}
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/%s", t->dir, name);
	for (i = 0; i < t->n; i++)
		if (!strcmp(t->names[i], path)) {
			*file = t->names[i];
			return t->texts[i];
		}
	text = npl_read_file(path, &len, d);
	if (!text)
		return NULL;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 8;
		t->names = npl_xrealloc(t->names, (size_t)t->cap * sizeof(*t->names));
		t->texts = npl_xrealloc(t->texts, (size_t)t->cap * sizeof(*t->texts));
	}
	t->names[t->n] = npl_xstrdup(path);
	t->texts[t->n] = text;
	*file = t->names[t->n];
	return t->texts[t->n++];
}

struct partial_ctx {
	struct npl_templates *t;
	struct npl_diag *d;
};

static const char *partial(void *ctx, const char *name, const char **file)
{
	struct partial_ctx *p = ctx;

	return template_text(p->t, name, file, p->d);
}

/* The run's parsed templates: their texts (compiled in, or read and kept in t) live as long */
static struct npl_tmpl_cache *parse_cache(struct npl_templates *t)
{
	if (!t)
		return NULL;
	if (!t->parsed)
		t->parsed = npl_tmpl_cache_new();
	return t->parsed;
}

void npl_templates_release(struct npl_templates *t)
{
	int i;

	for (i = 0; i < t->n; i++) {
		free(t->names[i]);
		free(t->texts[i]);
	}
	free(t->names);
	free(t->texts);
	npl_tmpl_cache_free(t->parsed);
	t->parsed = NULL;
	t->names = t->texts = NULL;
	t->n = t->cap = 0;
}

/* The site values a role needs, as the script's variable block shows them. */
static cJSON *site_view(const cJSON *plan, const cJSON *role)
{
	const cJSON *site = cJSON_GetObjectItemCaseSensitive(plan, "site"), *need;
	cJSON *a = cJSON_CreateArray();

	cJSON_ArrayForEach(need, cJSON_GetObjectItemCaseSensitive(role, "needs")) {
		const char *key = npl_json_str(need, "key"), *var = npl_json_str(need, "var");
		const cJSON *given = cJSON_GetObjectItemCaseSensitive(site, key), *it;
		cJSON *o = cJSON_CreateObject();
		int k, list = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(need, "list"));
		int count = npl_json_int(need, "count", 1);
		struct npl_buf b = NPL_BUF_INIT;

		cJSON_AddStringToObject(o, "key", key);
		cJSON_AddStringToObject(o, "var", var);
		cJSON_AddBoolToObject(o, "list", list);
		/* how the script checks it: as site.c does */
		k = npl_site_key_from_name(key);
		cJSON_AddBoolToObject(o, "path", k == NPL_SITE_MODEL_PATH || k == NPL_SITE_DRAFT_MODEL_PATH);
		cJSON_AddBoolToObject(o, "ifname", k == NPL_SITE_IFNAME);
		cJSON_AddNumberToObject(o, "count", count);
		if (list) {
			char what[64];

			snprintf(what, sizeof(what), count == 1 ? "%d address" : "%d addresses in rank order",
				 count);
			cJSON_AddStringToObject(o, "what", what);
			if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(need, "url")))
				cJSON_AddStringToObject(o, "hosts_var", npl_json_str(need, "hosts_var"));
		}
		npl_buf_printf(&b, "\"${%s:-}\"", var);
		cJSON_AddStringToObject(o, "default_expr", npl_buf_str(&b));
		npl_buf_release(&b);
		if (given) {
			cJSON *vals = cJSON_CreateArray();

			cJSON_AddTrueToObject(o, "given");
			if (cJSON_IsArray(given)) {
				cJSON_ArrayForEach(it, given) {
					struct npl_buf v = NPL_BUF_INIT;

					npl_pval_lit(&v, it->valuestring);
					cJSON_AddItemToArray(vals, cJSON_CreateString(npl_buf_str(&v)));
					npl_buf_release(&v);
				}
			} else {
				struct npl_buf v = NPL_BUF_INIT;

				npl_pval_lit(&v, given->valuestring);
				cJSON_AddStringToObject(o, "value", npl_buf_str(&v));
				npl_buf_release(&v);
			}
			cJSON_AddItemToObject(o, "values", vals);
		} else {
			cJSON_AddFalseToObject(o, "given");
		}
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* An object that shows o's members without owning them (deleting it leaves o whole). */
static cJSON *ref_of(const cJSON *o)
{
	return cJSON_IsObject(o) ? cJSON_CreateObjectReference(o->child) : cJSON_CreateNull();
}

/* What a server script checks before it touches the host (templates/_preflight.sh.tmpl): the
 * site values it reads, the program it launches, and per node the ports it listens on. */
static cJSON *preflight_view(const cJSON *role)
{
	cJSON *v = cJSON_CreateObject(), *nodes = cJSON_CreateArray(), *launch;
	const cJSON *need, *node;
	int seen[1024] = {0};

	cJSON_AddFalseToObject(v, "model");
	cJSON_AddFalseToObject(v, "draft");
	cJSON_AddFalseToObject(v, "ifname");
	cJSON_ArrayForEach(need, cJSON_GetObjectItemCaseSensitive(role, "needs")) {
		const char *key = npl_json_str(need, "key");
		int k = key ? npl_site_key_from_name(key) : -1;
		const char *name = k == NPL_SITE_MODEL_PATH ? "model" : k == NPL_SITE_DRAFT_MODEL_PATH ? "draft"
				 : k == NPL_SITE_IFNAME ? "ifname" : NULL;

		if (name)
			cJSON_ReplaceItemInObjectCaseSensitive(v, name, cJSON_CreateTrue());
	}
	launch = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(role, "nodes"), 0), "launch"), 0);
	if (cJSON_IsString(launch))
		cJSON_AddStringToObject(v, "launch", launch->valuestring);
	cJSON_ArrayForEach(node, cJSON_GetObjectItemCaseSensitive(role, "nodes")) {
		int index = npl_json_int(node, "index", 0), n;
		struct npl_plan_port ports[64];
		struct npl_arena a;
		cJSON *o, *list;

		if (index < 0 || index >= 1024 || seen[index]++)
			continue;
		npl_arena_init(&a);
		n = npl_plan_node_ports(role, index, ports, 64, &a);
		if (n) {
			o = cJSON_CreateObject();
			list = cJSON_CreateArray();
			cJSON_AddNumberToObject(o, "index", index);
			for (int i = 0; i < n; i++) {
				cJSON *p = cJSON_CreateObject();

				cJSON_AddNumberToObject(p, "port", ports[i].port);
				cJSON_AddStringToObject(p, "what", ports[i].what);
				cJSON_AddItemToArray(list, p);
			}
			cJSON_AddItemToObject(o, "ports", list);
			cJSON_AddItemToArray(nodes, o);
		}
		npl_arena_release(&a);
	}
	cJSON_AddBoolToObject(v, "ports", cJSON_GetArraySize(nodes) > 0);
	cJSON_AddItemToObject(v, "nodes", nodes);
	return v;
}

/* For SGLang's per-rank binding (--numa-node), per instance of the role (its plan node, in
 * order): its node index, the logical device of each gpu id (npl_plan_rank_devices(); "" where
 * npulaunch cannot follow them), its python, and whether its flags give --numa-node already. */
static cJSON *ranks_view(const cJSON *role)
{
	cJSON *a = cJSON_CreateArray();
	const cJSON *node, *f;

	cJSON_ArrayForEach(node, cJSON_GetObjectItemCaseSensitive(role, "nodes")) {
		cJSON *o = cJSON_CreateObject();
		struct npl_buf b = NPL_BUF_INIT;
		int ids[256], n = npl_plan_rank_devices(role, node, ids, 256), own = 0;
		const cJSON *py = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(node, "launch"), 0);

		for (int i = 0; i < n; i++)
			npl_buf_printf(&b, "%s%d", i ? " " : "", ids[i]);
		cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(node, "flags"))
			own |= npl_json_str(f, "flag") && !strcmp(npl_json_str(f, "flag"), "--numa-node");
		cJSON_AddNumberToObject(o, "index", npl_json_int(node, "index", 0));
		cJSON_AddStringToObject(o, "devices", npl_buf_str(&b));
		cJSON_AddStringToObject(o, "python", cJSON_IsString(py) ? py->valuestring : "python3");
		cJSON_AddBoolToObject(o, "own", own);
		npl_buf_release(&b);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* Where a server script binds to its dies' CPUs (templates/_affinity.sh.tmpl): where apply does
 * (npl_plan_affinity_owner()), per node its policy's devices, or why not; false when no node of
 * the role binds, and then the script holds no affinity code. */
static cJSON *affinity_view(const cJSON *role)
{
	const char *prog = npl_json_str(role, "program");
	const cJSON *node, *policy = NULL;
	cJSON *v, *nodes;
	int seen[1024] = {0}, any = 0;

	if (!prog || strcmp(prog, "server"))
		return cJSON_CreateFalse();
	v = cJSON_CreateObject();
	nodes = cJSON_AddArrayToObject(v, "nodes");
	cJSON_ArrayForEach(node, cJSON_GetObjectItemCaseSensitive(role, "nodes")) {
		int index = npl_json_int(node, "index", 0), ids[256], n = 0;
		const char *why;
		struct npl_buf b = NPL_BUF_INIT;
		cJSON *o;

		if (index < 0 || index >= 1024 || seen[index]++)
			continue;
		why = npl_plan_affinity_owner(role, index, &policy);
		if (!why && !(n = npl_plan_node_devices(role, index, ids, 256)))
			continue;   /* an instance on no die: nothing to bind, nothing said (as apply) */
		o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "index", index);
		if (why) {
			cJSON_AddStringToObject(o, "note", why);
		} else {
			cJSON_AddFalseToObject(o, "note");
			any = 1;
		}
		for (int i = 0; i < n; i++)
			npl_buf_printf(&b, "%s%d", i ? " " : "", ids[i]);
		cJSON_AddStringToObject(o, "devices", npl_buf_str(&b));
		npl_buf_release(&b);
		cJSON_AddItemToArray(nodes, o);
	}
	if (!any) {
		cJSON_Delete(v);
		return cJSON_CreateFalse();
	}
	cJSON_AddItemToObject(v, "ranks", ranks_view(role));
	policy = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(role, "tuning"), "affinity");
	cJSON_AddStringToObject(v, "policy", npl_json_str(cJSON_GetObjectItemCaseSensitive(policy, "policy"), "value"));
	cJSON_AddNumberToObject(v, "min", npl_json_int(cJSON_GetObjectItemCaseSensitive(policy, "min_cpus_per_die"), "value", 1));
	return v;
}

static cJSON *role_view(const cJSON *plan, const cJSON *role)
{
	cJSON *v = cJSON_CreateObject(), *nl;
	const char *list = npl_json_str(role, "node_list");
	char gen[64];

	snprintf(gen, sizeof(gen), "npulaunch %s", NPL_VERSION);
	cJSON_AddStringToObject(v, "generator", gen);
	cJSON_AddStringToObject(v, "script", npl_json_str(role, "script"));
	/* the view refers to the plan's recipe and role, read-only: copying them was most of
	 * render --all's time (docs/performance.md) */
	cJSON_AddItemToObject(v, "recipe", ref_of(cJSON_GetObjectItemCaseSensitive(plan, "recipe")));
	cJSON_AddItemToObject(v, "role", ref_of(role));
	{
		cJSON *site = site_view(plan, role);
		const cJSON *e;
		int lists = 0, values = 0, hosts = 0, paths = 0, ifnames = 0;

		cJSON_ArrayForEach(e, site) {
			if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "list")))
				lists++;
			else
				values++;
			paths += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "path"));
			ifnames += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "ifname"));
			if (cJSON_GetObjectItemCaseSensitive(e, "hosts_var"))
				hosts++;
		}
		cJSON_AddItemToObject(v, "site", site);
		/* the script defines only the helpers it calls */
		cJSON_AddBoolToObject(v, "site_lists", lists > 0);
		cJSON_AddBoolToObject(v, "site_values", values > 0);
		cJSON_AddBoolToObject(v, "site_paths", paths > 0);
		cJSON_AddBoolToObject(v, "site_ifnames", ifnames > 0);
		/* addresses are read from a list, or from NPULAUNCH_NODE_IP to find the node */
		cJSON_AddBoolToObject(v, "site_addresses", lists > 0 || list);
		cJSON_AddBoolToObject(v, "site_hosts", hosts > 0);
		/* bench.sh reads site values only when the entry point is a node's address */
		cJSON_AddBoolToObject(v, "site_any", lists + values > 0);
	}
	if (list) {
		int k = npl_site_key_from_name(list);

		nl = cJSON_CreateObject();
		cJSON_AddStringToObject(nl, "key", list);
		cJSON_AddStringToObject(nl, "var", npl_site_var(k));
		cJSON_AddItemToObject(v, "node_list", nl);
	} else {
		cJSON_AddNullToObject(v, "node_list");
	}
	cJSON_AddItemToObject(v, "preflight", preflight_view(role));
	cJSON_AddItemToObject(v, "affinity", affinity_view(role));
	/* the router waits for every server endpoint */
	{
		cJSON *urls = cJSON_CreateArray();
		const cJSON *r, *ep;

		cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(plan, "roles")) {
			const char *prog = npl_json_str(r, "program");

			if (!prog || strcmp(prog, "server"))
				continue;
			cJSON_ArrayForEach(ep, cJSON_GetObjectItemCaseSensitive(r, "endpoints"))
				cJSON_AddItemToArray(urls, cJSON_CreateString(npl_json_str(ep, "url")));
		}
		cJSON_AddItemToObject(v, "server_urls", urls);
	}
	return v;
}

int npl_render_role(const cJSON *plan, const cJSON *role, struct npl_templates *t,
		    struct npl_buf *out, struct npl_diag *d)
{
	struct partial_ctx pc = {t, d};
	struct npl_tmpl_env env = {escape, partial, &pc, parse_cache(t)};
	const char *prog = npl_json_str(role, "program"), *file = NULL, *text;
	char name[64];
	cJSON *view;
	int rc;

	snprintf(name, sizeof(name), "%s.sh.tmpl", prog ? prog : "?");
	text = template_text(t, name, &file, d);
	if (!text)
		return npl_error(d, NULL, "no template '%s'%s", name, t && t->dir ? "" : " compiled in");
	view = role_view(plan, role);
	rc = npl_tmpl_render(file, text, view, &env, out, d);
	cJSON_Delete(view);
	return rc;
}

int npl_render_template(const char *name, const cJSON *view, struct npl_templates *t, struct npl_buf *out,
			struct npl_diag *d)
{
	struct partial_ctx pc = {t, d};
	struct npl_tmpl_env env = {escape, partial, &pc, parse_cache(t)};
	const char *file = NULL, *text = template_text(t, name, &file, d);

	if (!text)
		return npl_error(d, NULL, "no template '%s'%s", name, t && t->dir ? "" : " compiled in");
	return npl_tmpl_render(file, text, view, &env, out, d);
}

char *npl_render_manifest(const cJSON *plan)
{
	char *j = cJSON_Print(plan), *out;
	size_t n;

	if (!j)
		npl_oom();
	n = strlen(j);
	out = npl_xmalloc(n + 2);
	memcpy(out, j, n);
	out[n] = '\n';
	out[n + 1] = '\0';
	cJSON_free(j);
	return out;
}

int npl_render_bundle(const cJSON *plan, struct npl_templates *t, const char *dir,
		      struct npl_outset *set, struct npl_diag *d)
{
	const cJSON *role;
	char path[4096];
	char *manifest;
	int rc = 0;

	cJSON_ArrayForEach(role, cJSON_GetObjectItemCaseSensitive(plan, "roles")) {
		struct npl_buf b = NPL_BUF_INIT;

		if (npl_render_role(plan, role, t, &b, d) == 0) {
			snprintf(path, sizeof(path), "%s%s%s", dir, *dir ? "/" : "", npl_json_str(role, "script"));
			npl_out_add(set, path, npl_buf_str(&b), b.len, 0755);
		} else {
			rc = -1;
		}
		npl_buf_release(&b);
	}
	/* the plan, and the record of what this bundle holds (output.h) */
	manifest = npl_render_manifest(plan);
	npl_out_add_manifest(set, dir, "manifest.json", manifest);
	/* the benchmark's results, appended in the bundle (npulaunch bench's bench-results.jsonl,
	   bench_serving's own BACKEND_....jsonl): render --check does not count them as extra */
	npl_out_run_output(set, dir, "*.jsonl");
	free(manifest);
	return rc;
}
