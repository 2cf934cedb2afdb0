/* drift.c: a page's sections against the recipes that correspond to them; see drift.h. */
#include <string.h>

#include "import_internal.h"
#include "npulaunch/drift.h"
#include "npulaunch/resolve.h"
#include "npulaunch/text.h"

/* The recipe of a section: by the id its title makes, by an alias, or by shape among those of
 * the model not taken yet. */
static const struct npl_layer *match(const struct npl_db *db, const struct imp *m, const char **by, const char *taken)
{
	const struct npl_page_section *s = m->s;
	const char *id = npl_recipe_id_from_title(m->a, s->title), *cards = s->field[NPL_PAGE_CARDS].value;
	const char *ds = s->field[NPL_PAGE_DATASET].value, *q = s->field[NPL_PAGE_QUANTIZATION].value;
	const char *mode = s->field[NPL_PAGE_MODE].value;
	const struct npl_layer *R = npl_db_recipe(db, id), *hit = NULL;
	int i, n = 0, pd = mode && npl_strcaseeq(mode, "PD Mixed") ? NPL_MODE_PD_MIXED : NPL_MODE_PD_DISAGG;

	if (R) {
		*by = "id";
		return R;
	}
	if ((R = npl_db_recipe_alias(db, id))) {
		*by = "alias";
		return R;
	}
	for (i = 0; i < db->nrecipes; i++) {
		const struct npl_layer *x = db->recipes[i];

		if (taken[i] || strcmp(x->model->id, m->model_id) || x->hardware != m->hw || (int)x->mode != pd ||
		    !cards || x->cards != npl_parse_uint(cards) || !ds || strcmp(x->dataset, ds) || !q ||
		    strcmp(x->quantization, q))
			continue;
		hit = x;
		n++;
	}
	*by = "shape";
	return n == 1 ? hit : NULL;
}

static void meta_diff(struct imp *m, struct npl_diffs *ds, const char *name, const char *page, const char *recipe)
{
	struct npl_diff *x;

	if ((!page || !strcmp(page, "-")) && !recipe)
		return;
	if (page && recipe && !strcmp(page, recipe))
		return;
	x = npl_diff_add(ds, m->a);
	x->kind = NPL_DIFF_META;
	x->role = "recipe";
	x->name = name;
	x->page = page && strcmp(page, "-") ? page : NULL;
	x->plan = recipe;
	x->loc = m->s->loc;
}

static void metadata(struct imp *m, const struct npl_layer *R, struct npl_diffs *ds)
{
	const struct npl_page_section *s = m->s;
	const char *mode = s->field[NPL_PAGE_MODE].value;

	meta_diff(m, ds, "title", s->title, R->name);
	meta_diff(m, ds, "cards", s->field[NPL_PAGE_CARDS].value, npl_arena_printf(m->a, "%d", R->cards));
	meta_diff(m, ds, "mode", mode ? (npl_strcaseeq(mode, "PD Mixed") ? "pd-mixed" : "pd-disagg") : NULL,
		  npl_mode_name(R->mode));
	meta_diff(m, ds, "quantization", s->field[NPL_PAGE_QUANTIZATION].value, R->quantization);
	meta_diff(m, ds, "dataset", s->field[NPL_PAGE_DATASET].value, R->dataset);
	meta_diff(m, ds, "tpot", s->field[NPL_PAGE_TPOT].value, R->tpot_text);
	meta_diff(m, ds, "ttft", s->field[NPL_PAGE_TTFT].value, R->ttft_text);
}

static int compare_recipe(const struct npl_db *db, struct imp *m, const struct npl_layer *R, struct npl_diffs *ds)
{
	struct npl_resolve_opts ro = {0};
	struct npl_node_launches L;
	struct npl_site site = m->run.site;
	struct npl_diag rd = NPL_DIAG_INIT;
	cJSON *plan;
	int rc, i;

	/* a recipe's draft model or model path the page lacks is a difference, not a missing value */
	if (!site.key[NPL_SITE_MODEL_PATH].n)
		npl_site_set(&site, m->a, NPL_SITE_MODEL_PATH, "/path/to/model-weights", NULL, m->d);
	if (!site.key[NPL_SITE_DRAFT_MODEL_PATH].n)
		npl_site_set(&site, m->a, NPL_SITE_DRAFT_MODEL_PATH, "/path/to/draft-model-weights", NULL, m->d);
	ro.site = &site;
	/* the page's site values are all given, whatever the recipe uses: its notes about unused
	   ones are noise here, its errors are not */
	plan = npl_resolve(db, R, &ro, &rd);
	for (i = 0; i < rd.n; i++)
		if (rd.v[i].sev == NPL_ERROR)
			npl_diag_add(m->d, NPL_ERROR, &rd.v[i].loc, "%s: %s", R->id, rd.v[i].msg);
	npl_diag_release(&rd);
	if (!plan)
		return -1;
	rc = npl_plan_launches(plan, &site, npl_pagerun_inherited, &L, m->a, m->d);
	cJSON_Delete(plan);
	if (rc)
		return -1;
	metadata(m, R, ds);
	rc = npl_compare(m->engine, &m->run.L, &L, ds, m->a, m->d);
	/* the addresses as the page writes them, not those the run gave its nodes */
	for (i = 0; i < ds->n; i++) {
		ds->v[i].page = npl_page_run_show(&m->run, ds->v[i].page, m->a);
		ds->v[i].plan = npl_page_run_show(&m->run, ds->v[i].plan, m->a);
	}
	return rc;
}

int npl_drift_page(const struct npl_db *db, const struct npl_engine *e, const struct npl_page *p,
		   struct npl_drift_page *out, struct npl_arena *a, struct npl_diag *d)
{
	static const struct npl_import_opts o = {"", NULL, NULL, 0};
	char *taken = npl_arena_calloc(a, (size_t)db->nrecipes + 1, 1);
	int i, j, rc = 0;

	memset(out, 0, sizeof(*out));
	out->p = p;
	out->v = npl_arena_calloc(a, (size_t)p->n + 1, sizeof(*out->v));
	for (i = 0; i < p->n; i++) {
		struct npl_drift_section *x = &out->v[out->n++];
		struct imp m;

		memset(&m, 0, sizeof(m));
		m.p = p;
		m.s = x->s = &p->v[i];
		m.o = &o;
		m.base = db;
		m.engine = e;
		m.a = a;
		m.d = d;
		if (!m.s->title) {
			npl_error(d, &m.s->loc, "the page's deployment has no section title to find its recipe by");
			x->failed = 1;
		} else if (npl_imp_prepare(&m) || npl_imp_model(&m)) {
			x->failed = 1;
		} else {
			if (!out->model_id && npl_db_model(db, m.model_id))
				out->model_id = m.model_id;
			if ((x->recipe = match(db, &m, &x->by, taken))) {
				for (j = 0; j < db->nrecipes; j++)
					taken[j] |= db->recipes[j] == x->recipe;
				x->failed = compare_recipe(db, &m, x->recipe, &x->diffs) != 0;
			}
		}
		rc |= x->failed ? -1 : 0;
	}
	out->missing = npl_arena_calloc(a, (size_t)db->nrecipes + 1, sizeof(*out->missing));
	for (j = 0; out->model_id && j < db->nrecipes; j++)
		if (!taken[j] && !strcmp(db->recipes[j]->model->id, out->model_id))
			out->missing[out->nmissing++] = db->recipes[j];
	return rc;
}

int npl_drift_count(const struct npl_drift_page *dp)
{
	int i, n = dp->nmissing;

	for (i = 0; i < dp->n; i++)
		n += dp->v[i].recipe ? dp->v[i].diffs.n : 1;
	return n;
}
