/* import.c: every section of a page imported, proved, and what they share moved into the model
 * document; see import.h. */
#include <stdlib.h>
#include <string.h>

#include "import_internal.h"
#include "npulaunch/buf.h"
#include "npulaunch/yamlout.h"

/* ---- the documents as YAML ---------------------------------------------------------------- */

static const char *const order[] = {"kind", "id", "name", "aliases", "title", "model", "hardware", "cards", "mode",
				    "quantization", "dataset", "tpot", "ttft", "e2e", "throughput", "tier", "sglang_version",
				    "transfer_protocol", "provenance", "notes",
				    "topology", "deviations", "waive", "socket_ifname", "env", "unset", "source", "tuning", "flags",
				    "explicit", "speculative", "roles", "router", "bench", NULL};

char *npl_import_yaml(const cJSON *doc, const char *comment, struct npl_arena *a)
{
	cJSON *copy = cJSON_CreateObject(), *docs = cJSON_CreateArray(), *it;
	struct npl_buf b = {0};
	char *s;
	int i;

	for (i = 0; order[i]; i++)
		if ((it = cJSON_GetObjectItemCaseSensitive(doc, order[i])))
			cJSON_AddItemToObject(copy, order[i], cJSON_Duplicate(it, 1));
	cJSON_ArrayForEach(it, doc)
		if (!cJSON_GetObjectItemCaseSensitive(copy, it->string))
			cJSON_AddItemToObject(copy, it->string, cJSON_Duplicate(it, 1));
	cJSON_AddItemToArray(docs, copy);
	if (comment)   /* a page's title and file name: what a comment cannot hold is escaped */
		npl_yamlout_comment(&b, comment);
	i = npl_yamlout_docs(&b, docs);
	cJSON_Delete(docs);
	s = i ? NULL : npl_arena_strdup(a, npl_buf_str(&b));
	npl_buf_release(&b);
	return s;
}

/* ---- one section --------------------------------------------------------------------------- */

/* A draft model path the page gives as a placeholder ("xxx"): the site value, with a deviation. */
static void draft_placeholder(struct imp *m)
{
	int i, j;

	for (i = 0; i < m->run.L.n; i++) {
		struct npl_pagesh_launch *l = &m->run.L.v[i].l;

		for (j = 0; j + 1 < l->argc; j++)
			if (!strcmp(l->argv[j], "--speculative-draft-model-path") && l->argv[j + 1][0] != '/') {
				npl_imp_deviation(m, &l->loc, "draft-model-path",
						  npl_arena_printf(m->a, "the page gives the draft model's path as '%s'; "
								   "the recipe takes it from the site's --draft-model-path",
								   l->argv[j + 1]));
				l->argv[j + 1] = "/path/to/draft-model-weights";
				if (!m->run.site.key[NPL_SITE_DRAFT_MODEL_PATH].n)
					npl_site_set(&m->run.site, m->a, NPL_SITE_DRAFT_MODEL_PATH, l->argv[j + 1], NULL,
						     m->d);
			}
	}
}

/* Addresses of the authors' own cluster: a node's is the site's value, with a deviation; one
 * that is no node's cannot be told apart from a real service's, and is an error. */
static int literal_addresses(struct imp *m)
{
	static const char *const roles[] = {"prefill", "decode", "PD-mixed"};
	static const char *const flags[] = {"--prefill-ip", "--decode-ip", "--node-ip"};
	const struct npl_page_run *r = &m->run;
	int i, rc = 0;

	if (r->short_role)
		npl_imp_deviation(m, &r->short_loc, "nodes",
				  npl_arena_printf(m->a, "the page lists %d %s node%s but its server runs --nnodes %d; "
						   "each node past the list runs the same launch with its own --node-rank "
						   "(the site gives %d addresses)", r->short_listed, r->short_role,
						   r->short_listed == 1 ? "" : "s", r->short_nnodes, r->short_nnodes));
	for (i = 0; i < r->nliteral; i++) {
		if (r->literal_role[i] < 0) {
			rc = npl_error(m->d, &r->literal_loc[i], "the page names the address %s, which no node of its "
				       "deployment has: an address of the authors' cluster that a recipe cannot carry "
				       "(write a placeholder such as <your prefill ip1>, or the service's name)", r->literal[i]);
			continue;
		}
		npl_imp_deviation(m, &r->literal_loc[i], npl_arena_printf(m->a, "address-%s", r->literal[i]),
				  npl_arena_printf(m->a, "the page names %s, an address of the authors' own cluster, for a "
						   "%s node; the recipe takes the node's address from the site (%s)",
						   r->literal[i], roles[r->literal_role[i]], flags[r->literal_role[i]]));
	}
	return rc;
}

/* The page's launches on each node, read as argparse reads them. */
int npl_imp_prepare(struct imp *m)
{
	int i;

	if (npl_page_run(m->p, m->s, &m->run, m->a, m->d) || literal_addresses(m))
		return -1;
	draft_placeholder(m);
	m->pn = npl_arena_calloc(m->a, (size_t)m->run.L.n + 1, sizeof(*m->pn));
	for (i = 0; i < m->run.L.n; i++)
		if (npl_norm_launch(m->engine, &m->run.L.v[i], &m->pn[i], m->a, m->d))
			return -1;
	return 0;
}

/* ---- what every section shares ------------------------------------------------------------ */

#define MAXPATH 4

struct path {
	const char *k[MAXPATH];
	int n;
};

static cJSON *at(cJSON *doc, const struct path *p, int n)
{
	int i;

	for (i = 0; doc && i < n; i++)
		doc = cJSON_GetObjectItemCaseSensitive(doc, p->k[i]);
	return doc;
}

/* The settings of doc as paths: each flag and variable alone, the lists and blocks whole. */
static int paths(cJSON *doc, struct path *out, int max, struct npl_arena *a)
{
	static const char *const whole[] = {"unset", "source", "explicit", "tuning", "speculative", NULL};
	static const char *const each[] = {"env", "flags", NULL};
	static const char *const scopes[] = {"", "roles/pd-mixed", "roles/prefill", "roles/decode", "router", NULL};
	int s, i, n = 0;

	for (s = 0; scopes[s]; s++) {
		struct path base = {{0}, 0};
		cJSON *sc, *it;

		if (*scopes[s] == 'r' && scopes[s][1] == 'o') {
			base.k[0] = "roles";
			base.k[1] = scopes[s] + 6;
			base.n = 2;
		} else if (*scopes[s]) {
			base.k[0] = scopes[s];
			base.n = 1;
		}
		if (!(sc = at(doc, &base, base.n)))
			continue;
		for (i = 0; whole[i] && n < max; i++)
			if (cJSON_GetObjectItemCaseSensitive(sc, whole[i])) {
				out[n] = base;
				out[n].k[out[n].n++] = whole[i];
				n++;
			}
		for (i = 0; each[i]; i++)
			cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(sc, each[i])) {
				if (n == max || base.n + 2 > MAXPATH)
					break;
				out[n] = base;
				out[n].k[out[n].n++] = each[i];
				out[n].k[out[n].n++] = npl_arena_strdup(a, it->string);
				n++;
			}
	}
	return n;
}

static void detach(cJSON *doc, const struct path *p)
{
	cJSON *parent = at(doc, p, p->n - 1);
	int i;

	cJSON_DeleteItemFromObjectCaseSensitive(parent, p->k[p->n - 1]);
	for (i = p->n - 1; i > 0; i--) {
		parent = at(doc, p, i);
		if (parent && !parent->child)
			cJSON_DeleteItemFromObjectCaseSensitive(at(doc, p, i - 1), p->k[i - 1]);
	}
}

static void attach(cJSON *doc, const struct path *p, const cJSON *v)
{
	int i;

	for (i = 0; i < p->n - 1; i++)
		doc = npl_imp_obj(doc, p->k[i]);
	cJSON_AddItemToObject(doc, p->k[p->n - 1], cJSON_Duplicate(v, 1));
}

static int all_same(struct imp *v, int n, const struct path *p)
{
	const cJSON *first = at(v[0].doc, p, p->n);
	int i;

	for (i = 1; i < n; i++) {
		const cJSON *x = at(v[i].doc, p, p->n);

		if (!x || !cJSON_Compare(first, x, 1))
			return 0;
	}
	return first != NULL;
}

static int all_verify(struct imp *v, int n, const cJSON *model)
{
	struct npl_diffs ds = {0};
	int i;

	for (i = 0; i < n; i++) {
		struct npl_diag quiet = NPL_DIAG_INIT;
		struct npl_diag *keep = v[i].d;
		int rc;

		v[i].d = &quiet;
		rc = npl_imp_verify(&v[i], model, &ds);
		v[i].d = keep;
		npl_diag_release(&quiet);
		if (rc || ds.n)
			return -1;
	}
	return 0;
}

/* Move the paths in p[0..np) from every section to the model; undone when a section then differs. */
static int move(struct imp *v, int n, cJSON *model, const struct path *p, int np)
{
	cJSON *saved_model = cJSON_Duplicate(model, 1), **saved = npl_xcalloc((size_t)n + 1, sizeof(*saved));
	int i, k, rc;

	for (i = 0; i < n; i++)
		saved[i] = cJSON_Duplicate(v[i].doc, 1);
	for (k = 0; k < np; k++) {
		attach(model, &p[k], at(v[0].doc, &p[k], p[k].n));
		for (i = 0; i < n; i++)
			detach(v[i].doc, &p[k]);
	}
	rc = all_verify(v, n, model);
	for (i = 0; i < n; i++) {
		if (rc) {
			cJSON_Delete(v[i].doc);
			v[i].doc = saved[i];
		} else {
			cJSON_Delete(saved[i]);
		}
	}
	if (rc) {
		cJSON *it;

		while ((it = model->child))
			cJSON_Delete(cJSON_DetachItemViaPointer(model, it));
		while ((it = saved_model->child))
			cJSON_AddItemToObject(model, it->string, cJSON_DetachItemViaPointer(saved_model, it));
	}
	cJSON_Delete(saved_model);
	free(saved);
	return rc;
}

static void factor(struct imp *v, int n, cJSON *model)
{
	struct path cand[512], common[512];
	int nc = paths(v[0].doc, cand, 512, v[0].a), ncommon = 0, i;

	for (i = 0; i < nc; i++)
		if (all_same(v, n, &cand[i]))
			common[ncommon++] = cand[i];
	if (!ncommon || !move(v, n, model, common, ncommon))
		return;
	for (i = 0; i < ncommon; i++)
		move(v, n, model, &common[i], 1);
}

/* ---- the page ----------------------------------------------------------------------------- */

static cJSON *model_doc(const struct imp *m, const struct npl_import_opts *o)
{
	cJSON *doc = cJSON_CreateObject(), *prov;

	cJSON_AddStringToObject(doc, "kind", "model");
	cJSON_AddStringToObject(doc, "id", m->model_id);
	cJSON_AddStringToObject(doc, "name", m->model_name);
	prov = cJSON_AddObjectToObject(doc, "provenance");
	cJSON_AddStringToObject(prov, "page", o->page_name);
	if (o->commit)
		cJSON_AddStringToObject(prov, "commit", o->commit);
	return doc;
}

int npl_import_page(const struct npl_page *p, const struct npl_import_opts *o, struct npl_import_result *out,
		    struct npl_arena *a, struct npl_diag *d)
{
	struct npl_db db;
	struct npl_engine e;
	struct imp *v;
	cJSON *model = NULL;
	int i, n = 0, rc = 0;

	memset(out, 0, sizeof(*out));
	if (npl_db_open(&db, a, o->dirs, o->ndirs, d) || npl_engine_load(&e, &db, a, d))
		return -1;
	if (!p->n)
		return npl_error(d, NULL, "%s: the page has no recipe section", p->file);
	v = npl_arena_calloc(a, (size_t)p->n, sizeof(*v));
	for (i = 0; i < p->n; i++) {
		struct imp *m = &v[n];

		memset(m, 0, sizeof(*m));
		m->p = p;
		m->s = &p->v[i];
		m->o = o;
		m->base = &db;
		m->engine = &e;
		m->doc = cJSON_CreateObject();
		m->a = a;
		m->d = d;
		if (npl_imp_prepare(m) || npl_imp_model(m)) {
			cJSON_Delete(m->doc);
			rc = -1;
			continue;
		}
		if (!model)
			model = model_doc(m, o);   /* the model's id and name: the first section's */
		if (npl_imp_skeleton(m) || npl_imp_converge(m, model)) {
			cJSON_Delete(m->doc);
			rc = -1;
			continue;
		}
		npl_imp_tidy(m);
		n++;
	}
	if (rc) {
		for (i = 0; i < n; i++)
			cJSON_Delete(v[i].doc);
		cJSON_Delete(model);
		return -1;
	}
	factor(v, n, model);
	out->model_id = v[0].model_id;
	out->model = model;
	out->v = npl_arena_calloc(a, (size_t)n, sizeof(*out->v));
	for (i = 0; i < n; i++)
		out->v[out->n++] = (struct npl_import_recipe){v[i].id, v[i].doc, v[i].s};
	return 0;
}

void npl_import_release(struct npl_import_result *r)
{
	int i;

	for (i = 0; i < r->n; i++)
		cJSON_Delete(r->v[i].doc);
	cJSON_Delete(r->model);
	memset(r, 0, sizeof(*r));
}
