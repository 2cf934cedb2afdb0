/* drift.c: a page's sections against the recipes that correspond to them; see drift.h. */
#include <string.h>

#include "import_internal.h"
#include "npulaunch/drift.h"
#include "npulaunch/resolve.h"
#include "npulaunch/text.h"

/* How well recipe x has the section's shape: -1 when it is not the same deployment kind (model,
 * hardware, mode, dataset), else one point for each of cards, quantization and TPOT that agree. */
static int shape_score(const struct npl_layer *x, const struct imp *m, int pd)
{
	const struct npl_page_section *s = m->s;
	const char *cards = s->field[NPL_PAGE_CARDS].value, *ds = s->field[NPL_PAGE_DATASET].value;
	const char *q = s->field[NPL_PAGE_QUANTIZATION].value, *tpot = s->field[NPL_PAGE_TPOT].value;

	if (strcmp(x->model->id, m->model_id) || x->hardware != m->hw || (int)x->mode != pd || !ds ||
	    !npl_strcaseeq(x->dataset, ds))
		return -1;
	return (cards && x->cards == npl_parse_uint(cards)) + (q && !strcmp(x->quantization, q)) +
	       (tpot && x->tpot_text && !strcmp(x->tpot_text, tpot));
}

/* text lowercased, each run of other characters than letters and digits one '-' */
static char *norm(struct npl_arena *a, const char *t)
{
	char *o = npl_arena_alloc(a, strlen(t) + 1), *q = o;

	for (; *t; t++) {
		if ((*t >= 'a' && *t <= 'z') || (*t >= '0' && *t <= '9'))
			*q++ = *t;
		else if (*t >= 'A' && *t <= 'Z')
			*q++ = (char)(*t - 'A' + 'a');
		else if (q > o && q[-1] != '-')
			*q++ = '-';
	}
	*q = 0;
	return o;
}

/* Whether recipe x's id ends with what the section's title says after the model's name,
 * punctuation aside ("Qwen3.6-35B-A3B 1P IN3K5 OUT1K5 50ms" is qwen3-6-35b-a3b-1p-in3k5-...) */
static int same_tail(const struct npl_layer *x, const struct imp *m)
{
	const char *model = m->s->field[NPL_PAGE_MODEL].value;
	char *t = norm(m->a, m->s->title), *id = norm(m->a, x->id), *mn = norm(m->a, model ? model : "");
	size_t lt, li, lm = strlen(mn);

	if (strcmp(x->model->id, m->model_id) || x->hardware != m->hw)
		return 0;
	if (lm && !strncmp(t, mn, lm) && t[lm] == '-')
		t += lm + 1;
	lt = strlen(t);
	li = strlen(id);
	return lt && li >= lt && !strcmp(id + li - lt, t) && (li == lt || id[li - lt - 1] == '-');
}

/* The recipe of a section: by the id its title makes or by an alias (shape 0); else (shape 1),
 * by the title less the model's name, punctuation aside, when one recipe alone ends so; else
 * among the model's recipes no other section has, the one alone in having the section's shape
 * best: upstream renames a model's recipes and retitles one when its target, cards or labels
 * move. */
static const struct npl_layer *match(const struct npl_db *db, const struct imp *m, const char **by,
				     const char *taken, int shape)
{
	const char *id = npl_recipe_id_from_title(m->a, m->s->title), *mode = m->s->field[NPL_PAGE_MODE].value;
	const struct npl_layer *R, *hit = NULL;
	int i, best = -1, n = 0, pd = mode && npl_strcaseeq(mode, "PD Mixed") ? NPL_MODE_PD_MIXED : NPL_MODE_PD_DISAGG;

	if (!shape) {
		if ((R = npl_db_recipe(db, id)))
			*by = "id";
		else if ((R = npl_db_recipe_alias(db, id)))
			*by = "alias";
		return R;
	}
	for (i = 0; i < db->nrecipes; i++)
		if (!taken[i] && same_tail(db->recipes[i], m)) {
			hit = db->recipes[i];
			n++;
		}
	if (n == 1) {
		*by = "title";
		return hit;
	}
	n = 0;
	for (i = 0; i < db->nrecipes; i++) {
		int sc = taken[i] ? -1 : shape_score(db->recipes[i], m, pd);

		if (sc < 0 || sc < best)
			continue;
		n = sc > best ? 1 : n + 1;
		best = sc;
		hit = db->recipes[i];
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

/* Whether the recipe records a deviation what whose reason names text: the page still says what
 * import judged a slip of it when the recipe was written ("the page's metadata says 2 cards;",
 * the router's "--prefill http://<your prefill ip1>:8000 8998 http://<your prefill ip2>:8000
 * 8999,", the benchmark's "gives --host 127.0.0.1;"), so nothing moved; a page that says something else is drift. */
static int explained(const struct npl_layer *R, const char *what, const char *text)
{
	int i;

	for (i = 0; text && i < R->ndeviation; i++)
		if (!strcmp(R->deviation[i].name, what) && strstr(R->deviation[i].value, text))
			return 1;
	return 0;
}

static void metadata(struct imp *m, const struct npl_layer *R, struct npl_diffs *ds)
{
	const struct npl_page_section *s = m->s;
	const char *mode = s->field[NPL_PAGE_MODE].value;

	meta_diff(m, ds, "title", s->title, R->name);
	if (!s->field[NPL_PAGE_CARDS].value ||
	    !explained(R, "cards", npl_arena_printf(m->a, "the page's metadata says %s cards;", s->field[NPL_PAGE_CARDS].value)))
		meta_diff(m, ds, "cards", s->field[NPL_PAGE_CARDS].value, npl_arena_printf(m->a, "%d", R->cards));
	meta_diff(m, ds, "mode", mode ? (npl_strcaseeq(mode, "PD Mixed") ? "pd-mixed" : "pd-disagg") : NULL,
		  npl_mode_name(R->mode));
	meta_diff(m, ds, "quantization", s->field[NPL_PAGE_QUANTIZATION].value, R->quantization);
	meta_diff(m, ds, "dataset", s->field[NPL_PAGE_DATASET].value, R->dataset);
	if (npl_page_tpot_is_e2e(s->field[NPL_PAGE_TPOT].value)) {
		/* as import reads it: the request's whole latency (a deviation of the recipe) */
		meta_diff(m, ds, "tpot", NULL, R->tpot_text);
		meta_diff(m, ds, "e2e", s->field[NPL_PAGE_TPOT].value, R->e2e_text);
	} else {
		meta_diff(m, ds, "tpot", s->field[NPL_PAGE_TPOT].value, R->tpot_text);
		meta_diff(m, ds, "e2e", NULL, R->e2e_text);
	}
	meta_diff(m, ds, "ttft", s->field[NPL_PAGE_TTFT].value, R->ttft_text);
	if (s->tier)
		meta_diff(m, ds, "tier", s->tier, R->tier);
}

static int compare_recipe(const struct npl_db *db, struct imp *m, const struct npl_layer *R, struct npl_diffs *ds)
{
	struct npl_resolve_opts ro = {0};
	struct npl_node_launches L;
	struct npl_site site = m->run.site;
	struct npl_diag rd = NPL_DIAG_INIT;
	cJSON *plan;
	int rc, i, n;

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
	for (i = 0, n = 0; i < ds->n; i++) {
		struct npl_diff x = ds->v[i];

		x.page = npl_page_run_show(&m->run, x.page, m->a);
		x.plan = npl_page_run_show(&m->run, x.plan, m->a);
		/* a router sent to a node that serves nothing, or to a prefill server without its bootstrap
		   port, as import judged it (import_fix.c) */
		if (x.kind == NPL_DIFF_FLAG && !strcmp(x.role, "router") && x.page &&
		    (explained(R, npl_arena_printf(m->a, "router-%s", x.name),
			       npl_arena_printf(m->a, "--%s %s,", x.name, x.page)) ||
		     explained(R, npl_arena_printf(m->a, "router-%s", x.name),
			       npl_arena_printf(m->a, "--%s %s without", x.name, x.page))))
			continue;
		/* a benchmark sent where nothing listens, as import judged it (import_fix.c) */
		if (x.kind == NPL_DIFF_FLAG && !strcmp(x.role, "bench") && ds->v[i].page &&
		    (!strcmp(x.name, "host") || !strcmp(x.name, "port")) &&
		    explained(R, npl_arena_printf(m->a, "bench-%s", x.name),
			      npl_arena_printf(m->a, "gives --%s %s;", x.name, ds->v[i].page)))
			continue;
		ds->v[n++] = x;
	}
	ds->n = n;
	return rc;
}

static void take(const struct npl_db *db, char *taken, const struct npl_layer *R)
{
	int j;

	for (j = 0; R && j < db->nrecipes; j++)
		taken[j] |= db->recipes[j] == R;
}

/* The recipe imported from page p's untitled section (import --meta Title gave its title, so its
 * provenance names the page and no section): the one such recipe, or NULL */
static const struct npl_layer *by_provenance(const struct npl_db *db, const struct npl_page *p)
{
	const char *base = strrchr(p->file, '/') ? strrchr(p->file, '/') + 1 : p->file;
	const struct npl_layer *hit = NULL;
	int i, n = 0;

	for (i = 0; i < db->nrecipes; i++)
		if (db->recipes[i]->prov_page && !strcmp(db->recipes[i]->prov_page, base) &&
		    !db->recipes[i]->prov_section) {
			hit = db->recipes[i];
			n++;
		}
	return n == 1 ? hit : NULL;
}

/* Section s as import read it when given what it lacks (--meta): R's title, and R's metadata
 * where the page gives none; what the page gives stays, and is compared with R's. */
static const struct npl_page_section *given(const struct npl_page_section *s, const struct npl_layer *R,
					    struct npl_arena *a)
{
	struct npl_page_section *c = npl_arena_alloc(a, sizeof(*c));
	const char *v[NPL_PAGE_NKEYS] = {0};

	v[NPL_PAGE_MODEL] = R->model->id;
	v[NPL_PAGE_HARDWARE] = R->hardware->id;
	v[NPL_PAGE_CARDS] = npl_arena_printf(a, "%d", R->cards);
	v[NPL_PAGE_MODE] = R->mode == NPL_MODE_PD_MIXED ? "PD Mixed" : "PD Disaggregation";
	v[NPL_PAGE_QUANTIZATION] = R->quantization;
	v[NPL_PAGE_DATASET] = R->dataset;
	v[NPL_PAGE_TPOT] = R->tpot_text ? R->tpot_text : R->e2e_text;
	v[NPL_PAGE_TTFT] = R->ttft_text;
	*c = *s;
	npl_page_give(c, R->name, v);
	return c;
}

/* Each section read as import reads it; 0 when it can be matched */
static int prepare(const struct npl_db *db, const struct npl_engine *e, const struct npl_page *p, int i,
		   struct imp *m, struct npl_drift_page *out, struct npl_arena *a, struct npl_diag *d)
{
	static const struct npl_import_opts o = {"", NULL, NULL, 0};

	memset(m, 0, sizeof(*m));
	m->p = p;
	m->s = &p->v[i];
	m->o = &o;
	m->base = db;
	m->engine = e;
	m->a = a;
	m->d = d;
	if (!m->s->title) {
		const struct npl_layer *R = by_provenance(db, p);

		if (!R) {
			npl_error(d, &m->s->loc, "the page's deployment has no section title, and no recipe was "
				  "imported from a page named so without one (import --meta Title=TITLE)");
			return -1;
		}
		m->s = given(m->s, R, a);
		out->v[i].recipe = R;
		out->v[i].by = "provenance";
	}
	if (npl_imp_prepare(m) || npl_imp_model(m))
		return -1;
	if (!out->model_id && npl_db_model(db, m->model_id))
		out->model_id = m->model_id;
	return 0;
}

int npl_drift_page(const struct npl_db *db, const struct npl_engine *e, const struct npl_page *p,
		   struct npl_drift_page *out, struct npl_arena *a, struct npl_diag *d)
{
	char *taken = npl_arena_calloc(a, (size_t)db->nrecipes + 1, 1);
	struct imp *m = npl_arena_calloc(a, (size_t)p->n + 1, sizeof(*m));
	int i, j, pass, rc = 0;

	memset(out, 0, sizeof(*out));
	out->p = p;
	out->v = npl_arena_calloc(a, (size_t)p->n + 1, sizeof(*out->v));
	for (i = 0; i < p->n; i++) {
		out->v[out->n++].s = &p->v[i];
		out->v[i].failed = prepare(db, e, p, i, &m[i], out, a, d) != 0;
		take(db, taken, out->v[i].recipe);
	}
	/* every section that keeps its id or an alias first: a retitled one is matched among the rest */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < p->n; i++)
			if (!out->v[i].failed && !out->v[i].recipe)
				take(db, taken, out->v[i].recipe = match(db, &m[i], &out->v[i].by, taken, pass));
	for (i = 0; i < p->n; i++) {
		struct npl_drift_section *x = &out->v[i];

		if (!x->failed && x->recipe)
			x->failed = compare_recipe(db, &m[i], x->recipe, &x->diffs) != 0;
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
