/* import_infer.c: what a page's section says outright, read into the skeleton of its recipe: the
 * metadata, the topology its servers run, the speculative block their flags spell, the
 * benchmark; see import.h. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "import_internal.h"
#include "npulaunch/text.h"

cJSON *npl_imp_obj(cJSON *obj, const char *key)
{
	cJSON *o = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!cJSON_IsObject(o)) {
		if (o)
			cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
		o = cJSON_AddObjectToObject(obj, key);
	}
	return o;
}

cJSON *npl_imp_scalar(const char *s)
{
	return npl_decimal_text(s) ? cJSON_CreateRaw(s) : cJSON_CreateString(s);
}

cJSON *npl_imp_flag_value(const struct npl_flagv *f)
{
	cJSON *v;
	int i;

	if (!f->n)
		return cJSON_CreateTrue();
	if (f->n == 1)
		return npl_imp_scalar(f->v[0]);
	v = cJSON_CreateArray();
	for (i = 0; i < f->n; i++)
		cJSON_AddItemToArray(v, npl_imp_scalar(f->v[i]));
	return v;
}

int npl_page_tpot_is_e2e(const char *tpot)
{
	return tpot && npl_parse_duration_us(tpot) >= 1000000;
}

void npl_imp_deviation(struct imp *m, const struct npl_loc *loc, const char *what, const char *why)
{
	cJSON *dev;

	if (!m->doc) {
		npl_warn(m->d, loc, "%s: %s", what, why);
		return;
	}
	dev = npl_imp_obj(m->doc, "deviations");
	if (cJSON_GetObjectItemCaseSensitive(dev, what))
		return;
	cJSON_AddStringToObject(dev, what, why);
	npl_warn(m->d, loc, "%s: %s", what, why);
}

int npl_imp_role_launches(const struct imp *m, const char *role, const struct npl_norm **out, int max)
{
	int i, n = 0;

	for (i = 0; i < m->run.L.n && n < max; i++)
		if (!strcmp(m->run.L.v[i].role, role))
			out[n++] = &m->pn[i];
	return n;
}

static const char *flag(const struct npl_norm *n, const char *name)
{
	const struct npl_flagv *f = n ? npl_norm_flag(n, name) : NULL;

	return f && f->n ? f->v[f->n - 1] : NULL;
}

static int flag_int(const struct npl_norm *n, const char *name, int def)
{
	const char *v = flag(n, name);
	int x = v ? npl_parse_uint(v) : -1;

	return x >= 0 ? x : def;
}

/* ---- metadata ---------------------------------------------------------------------------- */

static const char *field(const struct imp *m, enum npl_page_key k)
{
	const char *v = m->s->field[k].value;

	return v && strcmp(v, "-") ? v : NULL;
}

static const char *slug(const char *name, struct npl_arena *a)
{
	char *s = npl_arena_strdup(a, name), *p;

	for (p = s; *p; p++)
		*p = isalnum((unsigned char)*p) || *p == '.' ? (char)tolower((unsigned char)*p) : '-';
	return s;
}

int npl_imp_model(struct imp *m)
{
	const char *model = field(m, NPL_PAGE_MODEL), *hw = field(m, NPL_PAGE_HARDWARE);
	const struct npl_layer *M;

	if (!model)
		return npl_error(m->d, &m->s->loc, "the section gives no Model: a recipe needs one (import --meta Model=NAME gives it)");
	if (!hw)
		return npl_error(m->d, &m->s->loc, "the section gives no Hardware: a recipe needs one (import --meta Hardware=NAME gives it)");
	M = npl_db_model(m->base, model);
	m->model_id = M ? M->id : slug(model, m->a);
	m->model_name = M ? M->name : model;
	if (!(m->hw = npl_db_hardware(m->base, hw)))
		return npl_error(m->d, &m->s->field[NPL_PAGE_HARDWARE].loc,
				 "no hardware profile is named '%s' (add it to a profile's aliases)", hw);
	return 0;
}

/* What import --meta gave where the section has none (located at line 0): a deviation that
 * names each, so that the recipe says where its metadata came from. */
static void given_at_import(struct imp *m)
{
	struct npl_buf b = NPL_BUF_INIT;
	int k;

	if (m->s->title_given)
		npl_buf_printf(&b, "Title %s", m->s->title);
	for (k = 0; k < NPL_PAGE_NKEYS; k++)
		if (m->s->field[k].value && m->s->field[k].loc.line == 0)
			npl_buf_printf(&b, "%s%s %s", b.len ? ", " : "", npl_page_key_name((enum npl_page_key)k),
				       m->s->field[k].value);
	if (b.len)
		npl_imp_deviation(m, &m->s->loc, "metadata",
				  npl_arena_printf(m->a, "the page's section gives no metadata for these; given at "
						   "import (--meta): %s", npl_buf_str(&b)));
	npl_buf_release(&b);
}

static int meta(struct imp *m)
{
	const char *mode = field(m, NPL_PAGE_MODE), *cards = field(m, NPL_PAGE_CARDS);
	const char *keys[] = {"quantization", "dataset", "tpot", "ttft"};
	const enum npl_page_key pk[] = {NPL_PAGE_QUANTIZATION, NPL_PAGE_DATASET, NPL_PAGE_TPOT, NPL_PAGE_TTFT};
	size_t i;

	if (!m->s->title)
		return npl_error(m->d, &m->s->loc, "the page's deployment has no section title: a recipe needs one "
				 "(its id is made from the title; import --meta Title=TITLE gives it)");
	if (npl_imp_model(m))
		return -1;
	m->id = npl_recipe_id_from_title(m->a, m->s->title);
	cJSON_AddStringToObject(m->doc, "kind", "recipe");
	cJSON_AddStringToObject(m->doc, "title", m->s->title);
	cJSON_AddStringToObject(m->doc, "model", m->model_id);
	cJSON_AddStringToObject(m->doc, "hardware", m->hw->id);
	if (!cards || npl_parse_uint(cards) <= 0)
		return npl_error(m->d, cards ? &m->s->field[NPL_PAGE_CARDS].loc : &m->s->loc,
				 "the section's Cards is not a number of cards: '%s'%s", cards ? cards : "(none)",
				 cards ? "" : " (import --meta Cards=N gives it)");
	cJSON_AddItemToObject(m->doc, "cards", cJSON_CreateRaw(cards));
	if (!mode)
		return npl_error(m->d, &m->s->loc, "the section gives no Deploy Mode (import --meta \"Deploy Mode=PD Mixed\" gives it)");
	if (npl_strcaseeq(mode, "PD Mixed"))
		cJSON_AddStringToObject(m->doc, "mode", "pd-mixed");
	else if (npl_strcaseeq(mode, "PD Disaggregation") || npl_strcaseeq(mode, "PD Separation"))
		cJSON_AddStringToObject(m->doc, "mode", "pd-disagg");
	else
		return npl_error(m->d, &m->s->field[NPL_PAGE_MODE].loc,
				 "Deploy Mode '%s' is neither PD Mixed nor PD Disaggregation", mode);
	for (i = 0; i < NPL_ARRAY_SIZE(keys); i++) {
		const char *v = field(m, pk[i]);

		if (!v)
			continue;
		/* a "TPOT" no output token takes: the page's figure is the request's whole latency */
		if (pk[i] == NPL_PAGE_TPOT && npl_page_tpot_is_e2e(v)) {
			npl_imp_deviation(m, &m->s->field[NPL_PAGE_TPOT].loc, "e2e",
					  npl_arena_printf(m->a, "the page gives TPOT %s, a time no output token takes: "
							   "an end-to-end target (each request's whole latency)", v));
			cJSON_AddStringToObject(m->doc, "e2e", v);
			continue;
		}
		cJSON_AddStringToObject(m->doc, keys[i], v);
	}
	if (m->s->tier)
		cJSON_AddStringToObject(m->doc, "tier", m->s->tier);
	given_at_import(m);
	return 0;
}

/* ---- topology ---------------------------------------------------------------------------- */

/* One role's instances from its launches: each starts at its node of rank 0. */
static cJSON *role_topology(struct imp *m, const char *role, int *total)
{
	const struct npl_norm *L[256];
	int n = npl_imp_role_launches(m, role, L, 256), i, inst = 0, per_node = 1, dpc = m->hw->dies_per_card.v;
	int tp, pp, dies, cards, first = -1;
	cJSON *t;

	if (!n)
		return NULL;
	for (i = 0; i < n; i++) {
		int k, same = 0;

		/* an instance starts at its node of rank 0 (or without a rank: one node) */
		inst += flag_int(L[i], "node-rank", 0) == 0;
		for (k = 0; k < n; k++)
			same += L[k]->src->node == L[i]->src->node;
		if (same > per_node)
			per_node = same;
	}
	tp = flag_int(L[0], "tp-size", 0);
	pp = flag_int(L[0], "pp-size", 1);
	dies = tp * pp;
	if (flag(L[0], "base-gpu-id"))
		first = flag_int(L[0], "base-gpu-id", 0) / dpc;
	cards = dies ? (dies + dpc - 1) / dpc : 0;
	t = cJSON_CreateObject();
	cJSON_AddNumberToObject(t, "instances", inst);
	cJSON_AddNumberToObject(t, "cards", cards);
	if (dies && dies != cards * dpc)
		cJSON_AddNumberToObject(t, "dies", dies);
	if (first > 0)
		cJSON_AddNumberToObject(t, "first_card", first);
	if (per_node > 1)
		cJSON_AddNumberToObject(t, "per_node", per_node);
	*total += inst * cards;
	return t;
}

/* The dies one instance of t runs on. */
static int instance_dies(const struct imp *m, const cJSON *t)
{
	const cJSON *dies = cJSON_GetObjectItem(t, "dies");

	return dies ? (int)dies->valuedouble : (int)cJSON_GetObjectItem(t, "cards")->valuedouble * m->hw->dies_per_card.v;
}

static int topology(struct imp *m)
{
	static const char *const roles[] = {"prefill", "decode", "pd-mixed"};
	int cards, total = 0, i, plain = 1;
	cJSON *topo = cJSON_CreateObject(), *t;
	const char *mode = cJSON_GetObjectItem(m->doc, "mode")->valuestring;

	cards = npl_parse_uint(cJSON_GetObjectItem(m->doc, "cards")->valuestring);
	for (i = 0; i < 3; i++)
		if ((t = role_topology(m, roles[i], &total))) {
			int c = (int)cJSON_GetObjectItem(t, "cards")->valuedouble;

			cJSON_AddItemToObject(topo, roles[i], t);
			plain &= cJSON_GetArraySize(t) == 2 && (int)cJSON_GetObjectItem(t, "instances")->valuedouble == 1 &&
				 c == (!strcmp(mode, "pd-mixed") ? cards : cards / 2);
		}
	if (!strcmp(mode, "pd-mixed") && (t = cJSON_GetObjectItem(topo, "pd-mixed")) && total < cards) {
		/* one instance on fewer dies than the page's cards have: the cards stay as the page
		   says, the dies as its script runs */
		int dies = instance_dies(m, t);

		cJSON_ReplaceItemInObject(t, "cards", cJSON_CreateNumber(cards));
		if (!cJSON_GetObjectItem(t, "dies"))
			cJSON_AddNumberToObject(t, "dies", dies);
		total = cards;
		plain = 0;
	}
	if (total != cards && total) {
		char what[128];

		snprintf(what, sizeof(what), "cards");
		npl_imp_deviation(m, &m->s->field[NPL_PAGE_CARDS].loc, what,
				  npl_arena_printf(m->a, "the page's metadata says %d cards; its servers run on %d", cards,
						   total));
		cJSON_ReplaceItemInObject(m->doc, "cards", cJSON_CreateNumber(total));
		plain = 0;
	}
	if (plain)
		cJSON_Delete(topo);
	else
		cJSON_AddItemToObject(m->doc, "topology", topo);
	return 0;
}

/* ---- speculative decoding ----------------------------------------------------------------- */

static cJSON *spec_of(const struct npl_norm *n)
{
	const char *alg = flag(n, "speculative-algorithm"), *steps = flag(n, "speculative-num-steps");
	const char *topk = flag(n, "speculative-eagle-topk"), *tokens = flag(n, "speculative-num-draft-tokens");
	const char *dq = flag(n, "speculative-draft-model-quantization");
	int path = npl_norm_flag(n, "speculative-draft-model-path") != NULL;
	cJSON *b, *emit;

	if (!alg && !steps && !topk && !tokens && !dq && !path)
		return NULL;
	b = cJSON_CreateObject();
	if (alg)
		cJSON_AddStringToObject(b, "algorithm", alg);
	if (steps)
		cJSON_AddItemToObject(b, "steps", npl_imp_scalar(steps));
	if (topk)
		cJSON_AddItemToObject(b, "topk", npl_imp_scalar(topk));
	if (tokens && !(steps && topk && !strcmp(topk, "1") && atoi(tokens) == atoi(steps) + 1))
		cJSON_AddItemToObject(b, "draft_tokens", npl_imp_scalar(tokens));
	if (path)
		cJSON_AddTrueToObject(b, "draft_model");
	if (dq)
		cJSON_AddStringToObject(b, "draft_quantization", dq);
	if (!alg || !steps || !topk) {
		emit = cJSON_AddArrayToObject(b, "emit");
		if (alg)
			cJSON_AddItemToArray(emit, cJSON_CreateString("algorithm"));
		if (steps)
			cJSON_AddItemToArray(emit, cJSON_CreateString("steps"));
		if (topk)
			cJSON_AddItemToArray(emit, cJSON_CreateString("topk"));
		if (tokens)
			cJSON_AddItemToArray(emit, cJSON_CreateString("draft_tokens"));
		if (path)
			cJSON_AddItemToArray(emit, cJSON_CreateString("draft_model"));
		if (dq)
			cJSON_AddItemToArray(emit, cJSON_CreateString("draft_quantization"));
	}
	return b;
}

static void speculative(struct imp *m)
{
	const struct npl_norm *L[1];
	cJSON *top = NULL, *pre = NULL;

	if (npl_imp_role_launches(m, "pd-mixed", L, 1) || npl_imp_role_launches(m, "decode", L, 1))
		top = spec_of(L[0]);
	if (npl_imp_role_launches(m, "prefill", L, 1))
		pre = spec_of(L[0]);
	if (top)
		cJSON_AddItemToObject(m->doc, "speculative", top);
	if (pre)
		cJSON_AddItemToObject(npl_imp_obj(npl_imp_obj(m->doc, "roles"), "prefill"), "speculative", pre);
}

/* ---- the benchmark ----------------------------------------------------------------------- */

static void bench_sizes(cJSON *b, const struct npl_norm *n, const char *ds)
{
	const char *in = flag(n, "random-input-len"), *out = flag(n, "random-output-len");

	if (!strcmp(ds, "generated-shared-prefix")) {
		long sys = atol(flag(n, "gsp-system-prompt-len") ? flag(n, "gsp-system-prompt-len") : "0");
		long q = atol(flag(n, "gsp-question-len") ? flag(n, "gsp-question-len") : "0");
		long input = sys + q, prefix = input ? (sys * 100 + input / 2) / input : 0;

		cJSON_AddNumberToObject(b, "input", (double)input);
		if (flag(n, "gsp-output-len"))
			cJSON_AddItemToObject(b, "output", npl_imp_scalar(flag(n, "gsp-output-len")));
		cJSON_AddNumberToObject(b, "prefix", (double)prefix);
		if (flag(n, "gsp-num-groups") && strcmp(flag(n, "gsp-num-groups"), "1"))
			cJSON_AddItemToObject(b, "groups", npl_imp_scalar(flag(n, "gsp-num-groups")));
		if ((input * prefix + 50) / 100 != sys || (input * (100 - prefix) + 50) / 100 != q) {
			cJSON_AddNumberToObject(b, "system_prompt_len", (double)sys);
			cJSON_AddNumberToObject(b, "question_len", (double)q);
		}
		return;
	}
	if (!strcmp(ds, "image")) {
		if (flag(n, "image-resolution"))
			cJSON_AddStringToObject(b, "resolution", flag(n, "image-resolution"));
		if (flag(n, "image-count") && strcmp(flag(n, "image-count"), "1"))
			cJSON_AddItemToObject(b, "images", npl_imp_scalar(flag(n, "image-count")));
	}
	if (in)
		cJSON_AddItemToObject(b, "input", npl_imp_scalar(in));
	if (out)
		cJSON_AddItemToObject(b, "output", npl_imp_scalar(out));
}

/* One benchmark's dataset keys, or NULL (said) when its dataset is none a recipe has. */
static cJSON *bench_keys(struct imp *m, const struct npl_norm *n)
{
	const char *ds = flag(n, "dataset-name");
	cJSON *b;

	if (!ds || (strcmp(ds, "random") && strcmp(ds, "generated-shared-prefix") && strcmp(ds, "image"))) {
		npl_error(m->d, &n->src->l.loc, "the benchmark's --dataset-name is '%s': a recipe's dataset is "
			  "random, generated-shared-prefix or image", ds ? ds : "(none)");
		return NULL;
	}
	b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "dataset", ds);
	bench_sizes(b, n, ds);
	if (flag(n, "max-concurrency"))
		cJSON_AddItemToObject(b, "concurrency", npl_imp_scalar(flag(n, "max-concurrency")));
	if (flag(n, "num-prompts"))
		cJSON_AddItemToObject(b, "prompts", npl_imp_scalar(flag(n, "num-prompts")));
	return b;
}

/* The name of the k-th of several benchmarks: what its block's heading says in parentheses
 * ("Benchmark Decode Node (TPOT)": tpot), else bench-K. */
static const char *bench_name(struct imp *m, int k, int n)
{
	const char *label = m->s->nbench == n ? m->s->bench[k].label : NULL;
	const char *open = label ? strrchr(label, '(') : NULL, *close = open ? strchr(open, ')') : NULL;
	char *s, *p;

	if (!open || !close || close == open + 1 || close - open > 33)
		return npl_arena_printf(m->a, "bench-%d", k + 1);
	s = npl_arena_strndup(m->a, open + 1, (size_t)(close - open - 1));
	for (p = s; *p; p++)
		*p = isalnum((unsigned char)*p) ? (char)tolower((unsigned char)*p) : '-';
	return s[0] == '-' ? npl_arena_printf(m->a, "bench-%d", k + 1) : s;
}

/* Several benchmarks: what all share under bench, what each changes under benchmarks. */
static int benchmarks(struct imp *m, const struct npl_norm *const *L, int n)
{
	cJSON *keys[8], *b = npl_imp_obj(m->doc, "bench"), *list = cJSON_AddArrayToObject(m->doc, "benchmarks"), *it;
	cJSON *first;
	int k, j, rc = 0;

	for (k = 0; k < n; k++)
		if (!(keys[k] = bench_keys(m, L[k])))
			rc = -1;
	for (k = 0; k < n && !rc; k++) {
		cJSON *e = cJSON_CreateObject();

		cJSON_AddStringToObject(e, "name", bench_name(m, k, n));
		for (j = 0; j < k; j++)
			if (!strcmp(cJSON_GetObjectItem(cJSON_GetArrayItem(list, j), "name")->valuestring,
				    cJSON_GetObjectItem(e, "name")->valuestring))
				cJSON_ReplaceItemInObject(e, "name", cJSON_CreateString(npl_arena_printf(m->a, "bench-%d", k + 1)));
		cJSON_AddItemToArray(list, e);
	}
	/* a key with one value in every benchmark is bench's; another, each benchmark's own */
	first = rc ? NULL : keys[0];
	cJSON_ArrayForEach(it, first) {
		int all = 1;

		for (k = 1; k < n; k++)
			all &= cJSON_Compare(it, cJSON_GetObjectItem(keys[k], it->string), 1);
		if (all)
			cJSON_AddItemToObject(b, it->string, cJSON_Duplicate(it, 1));
	}
	for (k = 0; k < n && !rc; k++)
		cJSON_ArrayForEach(it, keys[k])
			if (!cJSON_GetObjectItem(b, it->string))
				cJSON_AddItemToObject(cJSON_GetArrayItem(list, k), it->string, cJSON_Duplicate(it, 1));
	for (k = 0; k < n; k++)
		cJSON_Delete(keys[k]);
	if (!rc && !cJSON_GetObjectItem(b, "dataset"))
		rc = npl_error(m->d, &L[1]->src->l.loc, "the section's benchmarks use different datasets; a recipe's "
			       "benchmarks share one");
	return rc;
}

static int bench(struct imp *m)
{
	const struct npl_norm *L[8];
	int n = npl_imp_role_launches(m, "bench", L, 8);
	cJSON *b;
	const cJSON *it;

	if (!n)
		return npl_error(m->d, &m->s->loc, "the section has no benchmark: a recipe needs one");
	if (n > 1)
		return benchmarks(m, L, n);
	if (!(b = bench_keys(m, L[0])))
		return -1;
	cJSON_ArrayForEach(it, b)
		cJSON_AddItemToObject(npl_imp_obj(m->doc, "bench"), it->string, cJSON_Duplicate(it, 1));
	cJSON_Delete(b);
	return 0;
}

/* ---- ports -------------------------------------------------------------------------------- */

/* The port of "SCHEME://HOST:PORT" (the last colon's number), or 0. */
static int url_port(const char *u)
{
	const char *c = u ? strrchr(u, ':') : NULL;
	size_t n = c ? strlen(c + 1) : 0;

	/* a port: one to five digits (a page's longer number is none, and never overflows) */
	return n && n <= 5 && strspn(c + 1, "0123456789") == n ? atoi(c + 1) : 0;
}

/* A variable of a launch's environment ("NAME=VALUE"), or NULL. */
static const char *launch_env(const struct npl_norm *n, const char *name)
{
	size_t k = strlen(name);
	int i;

	for (i = 0; i < n->src->l.nenv; i++)
		if (!strncmp(n->src->l.env[i], name, k) && n->src->l.env[i][k] == '=')
			return n->src->l.env[i] + k + 1;
	return NULL;
}

/* The ports the page's servers listen on, where they are not the defaults': ports.KEY. */
static void ports(struct imp *m)
{
	const struct npl_ports *def = &m->base->defaults->ports;
	const struct npl_norm *P[1], *D[1];
	int have_p = npl_imp_role_launches(m, "prefill", P, 1), have_d = npl_imp_role_launches(m, "decode", D, 1);
	struct port_of {
		const char *key;
		int page;
		const struct npl_int *def;
	} v[4];
	int n = 0, i;
	cJSON *o = NULL;

	if (have_p) {
		v[n++] = (struct port_of){"prefill", flag_int(P[0], "port", 0), &def->prefill};
		v[n++] = (struct port_of){"bootstrap", flag_int(P[0], "disaggregation-bootstrap-port", 0), &def->bootstrap};
		v[n++] = (struct port_of){"mf_store", url_port(launch_env(P[0], "ASCEND_MF_STORE_URL")), &def->mf_store};
	}
	if (have_d)
		v[n++] = (struct port_of){"decode", flag_int(D[0], "port", 0), &def->decode};
	for (i = 0; i < n; i++)
		if (v[i].page > 0 && v[i].page <= 65535 && v[i].def->set && v[i].page != v[i].def->v) {
			if (!o)
				o = npl_imp_obj(m->doc, "ports");
			cJSON_AddNumberToObject(o, v[i].key, v[i].page);
		}
}

int npl_imp_skeleton(struct imp *m)
{
	cJSON *prov;

	if (meta(m))
		return -1;
	prov = npl_imp_obj(m->doc, "provenance");
	cJSON_AddStringToObject(prov, "page", m->o->page_name);
	/* a page with no section title (MiMo-V2.5-Pro's): the recipe is the page's only untitled one,
	   which is how drift finds it */
	if (!m->s->title_given)
		cJSON_AddStringToObject(prov, "section", m->s->title);
	if (m->o->commit)
		cJSON_AddStringToObject(prov, "commit", m->o->commit);
	if (topology(m))
		return -1;
	ports(m);
	speculative(m);
	return bench(m);
}

/* ---- tidy --------------------------------------------------------------------------------- */

void npl_imp_tidy(struct imp *m)
{
	cJSON *list = cJSON_GetObjectItemCaseSensitive(m->doc, "benchmarks"), *f, *next, *e;
	cJSON *first = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(list, 0), "flags");

	for (f = first ? first->child : NULL; f; f = next) {
		int all = 1;

		next = f->next;
		cJSON_ArrayForEach(e, list)
			all &= cJSON_Compare(f, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(e, "flags"),
										 f->string), 1);
		if (!all)
			continue;
		/* every benchmark overrides bench's value alike: it is bench's */
		cJSON_DeleteItemFromObjectCaseSensitive(npl_imp_obj(npl_imp_obj(m->doc, "bench"), "flags"), f->string);
		cJSON_AddItemToObject(npl_imp_obj(npl_imp_obj(m->doc, "bench"), "flags"), f->string, cJSON_Duplicate(f, 1));
		cJSON_ArrayForEach(e, list)
			if (e != cJSON_GetArrayItem(list, 0))
				cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(e, "flags"), f->string);
		cJSON_DeleteItemFromObjectCaseSensitive(first, f->string);
	}
	cJSON_ArrayForEach(e, list)
		if (cJSON_GetObjectItemCaseSensitive(e, "flags") && !cJSON_GetObjectItemCaseSensitive(e, "flags")->child)
			cJSON_DeleteItemFromObjectCaseSensitive(e, "flags");
}
