/* import_fix.c: an imported recipe resolved and compared with its page, and each difference
 * closed by the setting that removes it, until none is left; see import.h. */
#include <string.h>

#include "import_internal.h"
#include "npulaunch/check.h"
#include "npulaunch/resolve.h"
#include "npulaunch/text.h"

static const char *const server_reserved[] = {
	"model-path", "port", "disaggregation-mode", "disaggregation-bootstrap-port", "speculative-algorithm",
	"speculative-num-steps", "speculative-eagle-topk", "speculative-num-draft-tokens",
	"speculative-draft-model-path", "speculative-draft-model-quantization", "tp-size", NULL};
static const char *const router_reserved[] = {"pd-disaggregation", "prefill", "decode", "host", "port", NULL};
static const char *const bench_reserved[] = {
	"dataset-name", "backend", "max-concurrency", "num-prompts", "random-input-len", "random-output-len",
	"random-range-ratio", "gsp-num-groups", "gsp-prompts-per-group", "gsp-system-prompt-len", "gsp-question-len",
	"gsp-output-len", "image-resolution", "image-count", NULL};
static const char *const explicit_flags[] = {"nnodes", "node-rank", "dist-init-addr", NULL};

static int in(const char *const *v, const char *s)
{
	for (; *v; v++)
		if (!strcmp(*v, s))
			return 1;
	return 0;
}

/* ---- resolving the document -------------------------------------------------------------- */

static void keep_errors(struct npl_diag *to, const struct npl_diag *from, const char *id)
{
	int i;

	for (i = 0; i < from->n; i++)
		if (from->v[i].sev == NPL_ERROR)
			npl_diag_add(to, NPL_ERROR, &from->v[i].loc, "the recipe imported as %s: %s", id, from->v[i].msg);
}

/* What the rules refuse of a plan that deploys the page: the graph-batch check is waived with
 * its own message as the reason (the page runs it so); anything else is the import's error. */
static void rules(struct imp *m, const cJSON *plan, const struct npl_layer *R)
{
	struct npl_diag cd = NPL_DIAG_INIT;
	int i;

	if (npl_check_rules(m->engine, plan, R, &cd))
		for (i = 0; i < cd.n; i++) {
			if (cd.v[i].sev != NPL_ERROR)
				continue;
			if (strstr(cd.v[i].msg, "waive graph-batch")) {
				cJSON *w = npl_imp_obj(m->doc, "waive");

				if (!cJSON_GetObjectItemCaseSensitive(w, "graph-batch"))
					cJSON_AddStringToObject(w, "graph-batch",
								npl_arena_printf(m->a, "the page runs it so: %s", strstr(cd.v[i].msg, "the largest")
									? strstr(cd.v[i].msg, "the largest") : cd.v[i].msg));
				m->waived = 1;
			} else {
				npl_diag_add(m->d, NPL_ERROR, &cd.v[i].loc, "the recipe imported as %s: %s", m->id, cd.v[i].msg);
				m->failed = 1;
			}
		}
	npl_diag_release(&cd);
}

int npl_imp_verify(struct imp *m, const cJSON *model, struct npl_diffs *out)
{
	struct npl_arena da;
	struct npl_db db;
	struct npl_diag vd = NPL_DIAG_INIT;
	struct npl_resolve_opts ro = {0};
	struct npl_node_launches L;
	const struct npl_layer *R;
	const char *mname = npl_arena_printf(m->a, "%s/model.yaml", m->model_id);
	const char *rname = npl_arena_printf(m->a, "%s/%s.yaml", m->model_id, m->id);
	char *mt = npl_import_yaml(model, NULL, m->a), *rt = npl_import_yaml(m->doc, NULL, m->a);
	cJSON *plan = NULL;
	int i, rc = -1;

	npl_arena_init(&da);
	npl_db_init(&db, &da);
	if (!mt || !rt) {
		npl_error(&vd, &m->s->loc, "a value of this section cannot be written as YAML (text that is not UTF-8)");
		goto out;
	}
	if (npl_db_load_embedded(&db, &vd))
		goto out;
	for (i = 0; i < m->o->ndirs; i++)
		if (npl_db_load_dir(&db, m->o->dirs[i], &vd))
			goto out;
	if (npl_db_load_text(&db, mname, mt, strlen(mt), m->o->ndirs + 1, &vd) ||
	    npl_db_load_text(&db, rname, rt, strlen(rt), m->o->ndirs + 1, &vd) || npl_db_link(&db, &vd))
		goto out;
	if (!(R = npl_db_recipe(&db, m->id))) {
		npl_error(&vd, &m->s->loc, "no recipe %s after loading it", m->id);
		goto out;
	}
	ro.site = &m->run.site;
	if (!(plan = npl_resolve(&db, R, &ro, &vd)))
		goto out;
	if (npl_plan_launches(plan, &m->run.site, npl_pagerun_inherited, &L, m->a, &vd))
		goto out;
	out->n = 0;
	rc = npl_compare(m->engine, &m->run.L, &L, out, m->a, &vd);
	if (!rc)
		rules(m, plan, R);
out:
	if (rc)
		keep_errors(m->d, &vd, m->id);
	cJSON_Delete(plan);
	npl_diag_release(&vd);
	npl_arena_release(&da);
	return rc;
}

/* ---- closing one difference -------------------------------------------------------------- */

/* Where a role's settings go in the recipe: the top level for a PD-mixed server, roles.ROLE for
 * prefill and decode, router and bench. */
static cJSON *scope(struct imp *m, const char *role)
{
	if (!strcmp(role, "pd-mixed"))
		return m->doc;
	if (!strcmp(role, "router") || !strcmp(role, "bench"))
		return npl_imp_obj(m->doc, role);
	return npl_imp_obj(npl_imp_obj(m->doc, "roles"), role);
}

/* Where a flag of a difference goes: its role's scope, or, of several benchmarks, the one it is
 * of (the flags all of them share move to bench afterwards: npl_imp_tidy). */
static cJSON *flag_scope(struct imp *m, const struct npl_diff *x)
{
	cJSON *list = cJSON_GetObjectItemCaseSensitive(m->doc, "benchmarks");

	if (!strcmp(x->role, "bench") && list && cJSON_GetArrayItem(list, x->instance))
		return cJSON_GetArrayItem(list, x->instance);
	return scope(m, x->role);
}

static int server(const char *role)
{
	return strcmp(role, "router") && strcmp(role, "bench");
}

static void set(cJSON *obj, const char *key, cJSON *v)
{
	if (cJSON_GetObjectItemCaseSensitive(obj, key))
		cJSON_ReplaceItemInObjectCaseSensitive(obj, key, v);
	else
		cJSON_AddItemToObject(obj, key, v);
}

static const struct npl_node_launch *page_launch(const struct imp *m, const struct npl_diff *x)
{
	int i;

	for (i = 0; i < m->run.L.n; i++)
		if (!strcmp(m->run.L.v[i].role, x->role) && m->run.L.v[i].node == x->node &&
		    m->run.L.v[i].instance == x->instance)
			return &m->run.L.v[i];
	return NULL;
}

static cJSON *str_list(const char *const *v, int n)
{
	cJSON *a = cJSON_CreateArray();
	int i;

	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
	return a;
}

static int fix_explicit(struct imp *m, const struct npl_diff *x)
{
	cJSON *sc = scope(m, x->role), *ex = cJSON_GetObjectItemCaseSensitive(sc, "explicit"), *it;

	if (!x->page || x->plan)
		return 0;
	if (!cJSON_IsArray(ex))
		ex = cJSON_AddArrayToObject(sc, "explicit");
	cJSON_ArrayForEach(it, ex)
		if (!strcmp(it->valuestring, x->name))
			return 0;
	cJSON_AddItemToArray(ex, cJSON_CreateString(x->name));
	return 1;
}

static int is_address(const struct imp *m, const char *v)
{
	static const int keys[] = {NPL_SITE_PREFILL_IP, NPL_SITE_DECODE_IP, NPL_SITE_NODE_IP};
	size_t k;
	int i;

	for (k = 0; k < NPL_ARRAY_SIZE(keys); k++)
		for (i = 0; i < m->run.site.key[keys[k]].n; i++)
			if (strstr(v, m->run.site.key[keys[k]].v[i]))
				return 1;
	return 0;
}

/* Whether word is a host the words of list (space-separated URLs) name. */
static int names_host(const char *list, const char *word, size_t n, struct npl_arena *a)
{
	char *copy = npl_arena_strdup(a, list), *save = NULL, *w;

	for (w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save))
		if (strlen(w) > n && !strncmp(w, word, n) && w[n] == ':')
			return 1;
	return 0;
}

/* Whether host (n bytes) is one of the page's nodes of role ("prefill" or "decode"). */
static int role_node(const struct imp *m, const char *role, const char *host, size_t n)
{
	int k = !strcmp(role, "prefill") ? NPL_SITE_PREFILL_IP : NPL_SITE_DECODE_IP, i;

	for (i = 0; i < m->run.site.key[k].n; i++)
		if (strlen(m->run.site.key[k].v[i]) == n && !strncmp(m->run.site.key[k].v[i], host, n))
			return 1;
	return 0;
}

/* The router's --prefill or --decode where the page sends an instance to a node of its role that
 * serves nothing there (GLM-5.1's 2P1D names "<your prefill ip2>:8000 8999", rank 1 of the first
 * instance, for the second, which listens at ip3): the page evidently means the instance, so the
 * recipe's router goes to each instance's first node, with a deviation. Only hosts may differ,
 * and each the page names is a node of the flag's role that no server of it listens on. */
static int router_instances(struct imp *m, const struct npl_diff *x)
{
	char *pg, *pl, *sp = NULL, *sl = NULL, *a, *b;
	int moved = 0;

	if (strcmp(x->role, "router") || (strcmp(x->name, "prefill") && strcmp(x->name, "decode")) || !x->page ||
	    !x->plan)
		return 0;
	pg = npl_arena_strdup(m->a, x->page);
	pl = npl_arena_strdup(m->a, x->plan);
	for (a = strtok_r(pg, " ", &sp), b = strtok_r(pl, " ", &sl); a && b;
	     a = strtok_r(NULL, " ", &sp), b = strtok_r(NULL, " ", &sl)) {
		const char *pa = strncmp(a, "http://", 7) ? NULL : strchr(a + 7, ':');
		const char *pb = strncmp(b, "http://", 7) ? NULL : strchr(b + 7, ':');

		if (!strcmp(a, b))
			continue;
		if (!pa || !pb || strcmp(pa, pb) || !role_node(m, x->name, a + 7, (size_t)(pa - a - 7)) ||
		    names_host(x->plan, a, (size_t)(pa - a), m->a))
			return 0;
		moved = 1;
	}
	if (a || b || !moved)
		return 0;
	npl_imp_deviation(m, &x->loc, npl_arena_printf(m->a, "router-%s", x->name),
			  npl_arena_printf(m->a, "the page's router gives --%s %s, naming a node where no %s server "
					   "listens; the recipe's router goes to each instance's first node (%s)",
					   x->name, npl_page_run_show(&m->run, x->page, m->a), x->name,
					   npl_page_run_show(&m->run, x->plan, m->a)));
	return 2;
}

/* A flag's value as the recipe writes it: {site: KEY} where it is the model (or draft model)
 * path the page's servers are given (a benchmark's --model /path/to/model is the site's model),
 * else as the page writes it. */
static cJSON *flag_value(struct imp *m, const struct npl_flagv *f)
{
	static const enum npl_site_key paths[] = {NPL_SITE_MODEL_PATH, NPL_SITE_DRAFT_MODEL_PATH};
	size_t k;

	for (k = 0; f->n == 1 && k < NPL_ARRAY_SIZE(paths); k++)
		if (m->run.site.key[paths[k]].n && !strcmp(f->v[0], m->run.site.key[paths[k]].v[0])) {
			cJSON *o = cJSON_CreateObject();

			cJSON_AddStringToObject(o, "site", npl_site_key_name(paths[k]));
			return o;
		}
	return npl_imp_flag_value(f);
}

/* The page's router names each prefill server without its bootstrap port (the router then asks
 * for the server's own); the recipe's names it: the same servers, the ports written out. */
static int router_bootstrap(struct imp *m, const struct npl_diff *x)
{
	char *pg, *pl, *sp = NULL, *sl = NULL, *a, *b;

	if (strcmp(x->role, "router") || strcmp(x->name, "prefill") || !x->page || !x->plan)
		return 0;
	pg = npl_arena_strdup(m->a, x->page);
	pl = npl_arena_strdup(m->a, x->plan);
	for (a = strtok_r(pg, " ", &sp), b = strtok_r(pl, " ", &sl); b; b = strtok_r(NULL, " ", &sl)) {
		if (a && !strcmp(a, b)) {
			a = strtok_r(NULL, " ", &sp);
			continue;
		}
		if (strspn(b, "0123456789") != strlen(b))
			return 0; /* not a bootstrap port the page left out */
	}
	if (a)
		return 0;
	npl_imp_deviation(m, &x->loc, "router-prefill",
			  npl_arena_printf(m->a, "the page's router gives --prefill %s without the prefill server's "
					   "bootstrap port; the recipe's router names the port that server listens on (%s)",
					   npl_page_run_show(&m->run, x->page, m->a), npl_page_run_show(&m->run, x->plan, m->a)));
	return 2;
}

static int fix_flag(struct imp *m, const struct npl_diff *x)
{
	int srv = server(x->role);

	if (srv && !strcmp(x->name, "dist-init-addr") && !x->page && x->plan) {
		npl_imp_deviation(m, &x->loc, "rendezvous",
				  npl_arena_printf(m->a, "the page's %s server runs on several nodes with no "
						   "--dist-init-addr, so its nodes would never meet; the recipe gives "
						   "the rule's, the instance's first node at ports.dist_init", x->role));
		return 2;
	}
	if (srv && in(explicit_flags, x->name))
		return fix_explicit(m, x);
	if (!strcmp(x->role, "bench") && (!strcmp(x->name, "host") || !strcmp(x->name, "port")) && x->plan) {
		npl_imp_deviation(m, &x->loc, npl_arena_printf(m->a, "bench-%s", x->name),
				  npl_arena_printf(m->a, "the page's benchmark gives --%s %s; the recipe's benchmark "
						   "connects where the entry point listens (%s)", x->name,
						   x->page ? x->page : "(none)", x->plan));
		return 2;
	}
	if (router_instances(m, x) || router_bootstrap(m, x))
		return 2;
	if (srv ? in(server_reserved, x->name) && !(!strcmp(x->role, "decode") && !strcmp(x->name, "disaggregation-bootstrap-port"))
		: in(!strcmp(x->role, "router") ? router_reserved : bench_reserved, x->name))
		return 0;
	if (srv && !strcmp(x->name, "host") && x->page && is_address(m, x->page))
		return 0;
	set(npl_imp_obj(flag_scope(m, x), "flags"), x->name, x->pflag ? flag_value(m, x->pflag) : cJSON_CreateNull());
	return 1;
}

/* The inherited value of name (npl_pagerun_inherited), or NULL. */
static const char *inherited(const char *name)
{
	size_t n = strlen(name);
	int i;

	for (i = 0; npl_pagerun_inherited[i]; i++)
		if (!strncmp(npl_pagerun_inherited[i], name, n) && npl_pagerun_inherited[i][n] == '=')
			return npl_pagerun_inherited[i] + n + 1;
	return NULL;
}

/* A part of a variable's value: {site: KEY} when it is the model or draft model path the page's
 * servers are given (PYTHONPATH=${DRAFT_MODEL_PATH}:$PYTHONPATH means the draft model the site
 * names, not the page's placeholder path), else the text. */
static cJSON *env_part(struct imp *m, const char *v)
{
	static const enum npl_site_key paths[] = {NPL_SITE_MODEL_PATH, NPL_SITE_DRAFT_MODEL_PATH};
	size_t k;

	for (k = 0; k < NPL_ARRAY_SIZE(paths); k++)
		if (m->run.site.key[paths[k]].n && !strcmp(v, m->run.site.key[paths[k]].v[0])) {
			cJSON *o = cJSON_CreateObject();

			cJSON_AddStringToObject(o, "site", npl_site_key_name(paths[k]));
			return o;
		}
	return NULL;
}

static cJSON *env_value(struct imp *m, const char *name, const char *v)
{
	const char *inh = inherited(name);
	size_t lv = strlen(v), li = inh ? strlen(inh) : 0;
	cJSON *o, *site;

	if (inh && lv > li + 1 && !strcmp(v + lv - li, inh) && v[lv - li - 1] == ':') {
		const char *own = npl_arena_strndup(m->a, v, lv - li - 1);

		o = cJSON_CreateObject();
		if ((site = env_part(m, own)))
			cJSON_AddItemToObject(o, "prepend", site);
		else
			cJSON_AddStringToObject(o, "prepend", own);
		return o;
	}
	if (inh && lv > li + 1 && !strncmp(v, inh, li) && v[li] == ':') {
		o = cJSON_CreateObject();
		if ((site = env_part(m, v + li + 1)))
			cJSON_AddItemToObject(o, "append", site);
		else
			cJSON_AddStringToObject(o, "append", v + li + 1);
		return o;
	}
	if ((site = env_part(m, v))) {
		o = cJSON_CreateObject();
		cJSON_AddItemToObject(o, "value", site);
		return o;
	}
	return npl_imp_scalar(v);
}

static int fix_env(struct imp *m, const struct npl_diff *x)
{
	int ifname = !strcmp(x->name, "GLOO_SOCKET_IFNAME") || !strcmp(x->name, "HCCL_SOCKET_IFNAME");

	if (!strcmp(x->name, "ASCEND_MF_STORE_URL") || (x->page && is_address(m, x->page)))
		return 0;
	if (ifname && !x->page && !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(m->doc, "socket_ifname"))) {
		/* the page sets no socket interface: the rule is off, and a role that has it says so */
		set(m->doc, "socket_ifname", cJSON_CreateFalse());
		return 1;
	}
	if (x->page && !strcmp(x->page, NPL_PAGERUN_IFNAME)) {
		cJSON *v = cJSON_CreateObject();

		cJSON_AddItemToObject(cJSON_AddObjectToObject(v, "value"), "site", cJSON_CreateString("ifname"));
		set(npl_imp_obj(scope(m, x->role), "env"), x->name, v);
		return 1;
	}
	set(npl_imp_obj(scope(m, x->role), "env"), x->name, x->page ? env_value(m, x->name, x->page) : cJSON_CreateNull());
	return 1;
}

static int fix_list(struct imp *m, const struct npl_diff *x, const char *key)
{
	const struct npl_node_launch *L = page_launch(m, x);
	cJSON *o;

	if (!L || (!server(x->role) && !strcmp(key, "source")))
		return 0;
	o = cJSON_CreateObject();
	if (!strcmp(key, "unset"))
		cJSON_AddItemToObject(o, "replace", str_list(L->l.unset, L->l.nunset));
	else
		cJSON_AddItemToObject(o, "replace", str_list(L->l.sourced, L->l.nsourced));
	set(scope(m, x->role), key, o);
	return 1;
}

static int fix_tuning(struct imp *m, const struct npl_diff *x)
{
	const struct npl_node_launch *L = page_launch(m, x);
	cJSON *t, *sys;
	int i;

	if (!L || !server(x->role))
		return 0;
	if (!L->l.ngovernors && !L->l.nsysctl) {
		set(m->doc, "tuning", cJSON_CreateNull());
		return 1;
	}
	t = cJSON_CreateObject();
	cJSON_AddTrueToObject(t, "replace");
	if (L->l.ngovernors)
		cJSON_AddStringToObject(t, "cpu_governor", L->l.governors[L->l.ngovernors - 1]);
	sys = cJSON_AddObjectToObject(t, "sysctl");
	for (i = 0; i < L->l.nsysctl; i++) {
		const char *kv = L->l.sysctl[i], *eq = strchr(kv, '=');

		cJSON_AddItemToObject(sys, npl_arena_strndup(m->a, kv, (size_t)(eq - kv)), npl_imp_scalar(eq + 1));
	}
	set(m->doc, "tuning", t);
	return 1;
}

/* 1 when x was closed, 2 when it is accepted as a deviation, 0 when it cannot be. */
static int fix(struct imp *m, const struct npl_diff *x)
{
	switch (x->kind) {
	case NPL_DIFF_FLAG:
		return fix_flag(m, x);
	case NPL_DIFF_ENV:
		return fix_env(m, x);
	case NPL_DIFF_UNSET:
		return fix_list(m, x, "unset");
	case NPL_DIFF_SOURCE:
		return fix_list(m, x, "source");
	case NPL_DIFF_GOVERNOR:
	case NPL_DIFF_SYSCTL:
		return fix_tuning(m, x);
	default:
		return 0;
	}
}

/* ---- until nothing differs ---------------------------------------------------------------- */

/* A difference a deviation of the document accepts: the benchmark's host and port, a missing
 * rendezvous. */
static int accepted(const struct imp *m, const struct npl_diff *x)
{
	const cJSON *dev = cJSON_GetObjectItemCaseSensitive(m->doc, "deviations");
	const char *key = NULL;

	if (x->kind != NPL_DIFF_FLAG)
		return 0;
	if (!strcmp(x->role, "bench"))
		key = npl_arena_printf(m->a, "bench-%s", x->name);
	else if (server(x->role) && !strcmp(x->name, "dist-init-addr") && !x->page)
		key = "rendezvous";
	else if (!strcmp(x->role, "router") && (!strcmp(x->name, "prefill") || !strcmp(x->name, "decode")))
		key = npl_arena_printf(m->a, "router-%s", x->name);
	return key && cJSON_GetObjectItemCaseSensitive(dev, key) != NULL;
}

static void report(struct imp *m, const struct npl_diff *x)
{
	const char *where = !strcmp(x->role, "router") || !strcmp(x->role, "bench")
				    ? x->role
				    : npl_arena_printf(m->a, "%s node %d", x->role, x->node + 1);

	if (x->kind == NPL_DIFF_LAUNCH)
		npl_error(m->d, &x->loc, "%s: %s", where,
			  x->page ? "the page launches a server the recipe's topology does not have"
				  : "the recipe launches a server the page does not");
	else
		npl_error(m->d, &x->loc, "%s: cannot express the page's %s %s%s (%s) where the recipe gives %s", where,
			  npl_diff_kind_name(x->kind), x->kind == NPL_DIFF_FLAG ? "--" : "", x->name,
			  x->page ? (*x->page ? npl_page_run_show(&m->run, x->page, m->a) : "set") : "absent",
			  x->plan ? (*x->plan ? npl_page_run_show(&m->run, x->plan, m->a) : "set") : "nothing");
}

int npl_imp_converge(struct imp *m, const cJSON *model)
{
	struct npl_diffs ds = {0};
	int round, i, changed = 1, left = 0;

	for (round = 0; round < 8 && changed; round++) {
		if (npl_imp_verify(m, model, &ds))
			return -1;
		changed = 0;
		left = 0;
		for (i = 0; i < ds.n; i++) {
			int r;

			if (accepted(m, &ds.v[i]))
				continue;
			r = fix(m, &ds.v[i]);
			changed |= r == 1;
			left += r != 2;
		}
		if (!left && !m->waived)
			return m->failed ? -1 : 0;
		changed |= m->waived;
		m->waived = 0;
	}
	if (npl_imp_verify(m, model, &ds))
		return -1;
	for (i = 0, left = 0; i < ds.n; i++)
		if (!accepted(m, &ds.v[i])) {
			report(m, &ds.v[i]);
			left++;
		}
	return left ? -1 : 0;
}
