/* engine.c: the engine-flag registry and how SGLang's argparse reads a flag name; see engine.h. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/buf.h"
#include "npulaunch/engine.h"
#include "npulaunch/text.h"
#include "npulaunch/yaml.h"

/* ---- loading -------------------------------------------------------------------- */

static int flagcmp(const void *a, const void *b)
{
	return strcmp(((const struct npl_flag_spec *)a)->name, ((const struct npl_flag_spec *)b)->name);
}

static int parse_flag(struct npl_flag_spec *f, const struct npl_ynode *k, const struct npl_ynode *v,
		      struct npl_arena *a, struct npl_diag *d)
{
	static const char *const types[] = {"bool", "int", "float", "string", "list"};
	const struct npl_ynode *t = npl_ymap_get(v, "type"), *c = npl_ymap_get(v, "choices");
	const struct npl_ynode *up = npl_ymap_get(v, "upstream"), *al = npl_ymap_get(v, "alias_of");
	const struct npl_ynode *note = npl_ymap_get(v, "note");
	int i, b;

	f->name = k->str;
	f->upstream = 1;
	if (v->kind != NPL_YMAP || !t || t->kind != NPL_YSCALAR)
		return npl_error(d, &v->loc, "flag '%s' needs a mapping with a 'type'", k->str);
	for (i = 0; i < 5; i++)
		if (!strcmp(t->str, types[i]))
			break;
	if (i == 5)
		return npl_error(d, &t->loc, "unknown flag type '%s' (bool, int, float, string, list)", t->str);
	f->type = (enum npl_flag_type)i;
	for (i = 0; i < v->n; i++) {
		const char *key = v->kids[2 * i]->str;

		if (strcmp(key, "type") && strcmp(key, "choices") && strcmp(key, "alias_of") &&
		    strcmp(key, "upstream") && strcmp(key, "note"))
			return npl_error(d, &v->kids[2 * i]->loc, "unknown key '%s' in flag '%s'", key, k->str);
	}
	if (c) {
		if (c->kind != NPL_YSEQ)
			return npl_error(d, &c->loc, "'choices' of flag '%s' must be a list", k->str);
		f->choices = npl_arena_calloc(a, (size_t)c->n + 1, sizeof(*f->choices));
		for (i = 0; i < c->n; i++)
			f->choices[f->nchoices++] = c->kids[i]->str;
	}
	if (al)
		f->alias_of = al->str;
	if (note)
		f->note = note->str;
	if (up) {
		if (!npl_ybool(up, &b))
			return npl_error(d, &up->loc, "'upstream' must be true or false");
		f->upstream = b;
	}
	return 0;
}

static int parse_registry(struct npl_engine *e, const char *file, const struct npl_ynode *root,
			  struct npl_arena *a, struct npl_diag *d)
{
	const struct npl_ynode *tools = npl_ymap_get(root, "tools"), *spec = npl_ymap_get(root, "speculative_algorithms");
	int i, j, rc = 0;

	e->file = file;
	e->version = npl_ymap_get(root, "sglang_version") ? npl_ymap_get(root, "sglang_version")->str : "?";
	e->source = npl_ymap_get(root, "source") ? npl_ymap_get(root, "source")->str : "";
	if (!tools || tools->kind != NPL_YMAP)
		return npl_error(d, &root->loc, "the engine-flag registry needs 'tools'");
	e->tools = npl_arena_calloc(a, (size_t)tools->n, sizeof(*e->tools));
	for (i = 0; i < tools->n; i++) {
		struct npl_engine_tool *t = &e->tools[e->ntools++];
		const struct npl_ynode *body = tools->kids[2 * i + 1], *flags = npl_ymap_get(body, "flags");

		t->name = tools->kids[2 * i]->str;
		t->module = npl_ymap_get(body, "module") ? npl_ymap_get(body, "module")->str : NULL;
		if (!t->module || !flags || flags->kind != NPL_YMAP) {
			rc = npl_error(d, &body->loc, "tool '%s' needs 'module' and 'flags'", t->name);
			continue;
		}
		t->flags = npl_arena_calloc(a, (size_t)flags->n, sizeof(*t->flags));
		for (j = 0; j < flags->n; j++)
			if (parse_flag(&t->flags[t->nflags], flags->kids[2 * j], flags->kids[2 * j + 1], a, d) == 0)
				t->nflags++;
			else
				rc = -1;
		qsort(t->flags, (size_t)t->nflags, sizeof(*t->flags), flagcmp);
	}
	if (spec && spec->kind == NPL_YMAP) {
		e->spec_names = npl_arena_calloc(a, (size_t)spec->n, sizeof(*e->spec_names));
		e->spec_draft = npl_arena_calloc(a, (size_t)spec->n, sizeof(*e->spec_draft));
		for (i = 0; i < spec->n; i++) {
			const struct npl_ynode *dm = npl_ymap_get(spec->kids[2 * i + 1], "draft_model");

			e->spec_names[e->nspec] = spec->kids[2 * i]->str;
			e->spec_draft[e->nspec++] = dm && dm->kind == NPL_YSCALAR ? dm->str : "optional";
		}
	}
	return rc;
}

int npl_engine_parse(struct npl_engine *e, const char *name, const char *text, size_t len,
		     struct npl_arena *a, struct npl_diag *d)
{
	struct npl_ynode **docs;
	int ndocs;

	memset(e, 0, sizeof(*e));
	npl_diag_source(d, name, text);
	if (npl_yaml_load(a, name, text, len, &docs, &ndocs, d))
		return -1;
	if (ndocs != 1)
		return npl_error(d, NULL, "%s: the engine-flag registry is one YAML document, not %d", name, ndocs);
	return parse_registry(e, name, docs[0], a, d);
}

int npl_engine_load(struct npl_engine *e, const struct npl_db *db, struct npl_arena *a,
		    struct npl_diag *d)
{
	memset(e, 0, sizeof(*e));
	if (db && db->engine_flags)
		return parse_registry(e, db->engine_flags_file, db->engine_flags, a, d);
	if (npl_engine_compiled) {
		/* the shipped registry, turned into C tables at build time (src/gen/engine_gen.c):
		 * parsing its 42 KB of YAML was two thirds of a render */
		*e = *npl_engine_compiled;
		return 0;
	}
	/* only npl-engine-gen itself runs without the tables, and it parses the YAML */
	return npl_error(d, NULL, "no engine-flag registry compiled in");
}

const struct npl_engine_tool *npl_engine_tool(const struct npl_engine *e, const char *module)
{
	int i;

	for (i = 0; i < e->ntools; i++)
		if (module && !strcmp(e->tools[i].module, module))
			return &e->tools[i];
	return NULL;
}

const struct npl_flag_spec *npl_engine_flag(const struct npl_engine_tool *t, const char *name)
{
	struct npl_flag_spec key = {0};

	key.name = name;
	return bsearch(&key, t->flags, (size_t)t->nflags, sizeof(*t->flags), flagcmp);
}

const struct npl_engine_tool *npl_engine_prog_tool(const struct npl_engine *e, int prog)
{
	static const char *const names[] = {"launch_server", "launch_router", "bench_serving"};
	int i;

	if (prog < 0 || prog >= (int)NPL_ARRAY_SIZE(names))
		return NULL;
	for (i = 0; i < e->ntools; i++)
		if (!strcmp(e->tools[i].name, names[prog]))
			return &e->tools[i];
	return NULL;
}

/* ---- names as argparse reads them ------------------------------------------------ */

/* The option an entry sets: alias_of followed (a dangling alias is its own option). */
static const struct npl_flag_spec *option_of(const struct npl_engine_tool *t,
					     const struct npl_flag_spec *f)
{
	const struct npl_flag_spec *g;
	int i;

	for (i = 0; i < 8 && f->alias_of && (g = npl_engine_flag(t, f->alias_of)) && g != f; i++)
		f = g;
	return f;
}

/* A BooleanOptionalAction's negative form: "no-" + its option's name. */
static int is_negative(const struct npl_flag_spec *f, const struct npl_flag_spec *opt)
{
	return f != opt && npl_starts_with(f->name, "no-") && !strcmp(f->name + 3, opt->name);
}

static void found(struct npl_flag_match *m, const struct npl_engine_tool *t,
		  const struct npl_flag_spec *f)
{
	const struct npl_flag_spec *opt = option_of(t, f);

	m->spec = opt;
	m->option = opt->name;
	m->negative = is_negative(f, opt);
	m->canonical = m->negative ? f->name : opt->name;
}

static int strpcmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The nearest name to an unknown one: a typo of a whole name, else (a typo of) the beginning of
 * exactly one option's names, an entry absent upstream too (it matches only when written out). */
static const char *nearest(const struct npl_engine_tool *t, const char *name, struct npl_arena *a)
{
	const char **names = npl_arena_calloc(a, (size_t)t->nflags + 1, sizeof(*names));
	const struct npl_flag_spec *opt = NULL, *via = NULL;
	size_t len = strlen(name);
	int i, best = INT_MAX, limit = len < 12 ? 1 : 2;
	const char *s;

	for (i = 0; i < t->nflags; i++)
		names[i] = t->flags[i].name;
	if ((s = npl_did_you_mean(name, names, t->nflags)))
		return s;
	if (len < 4)
		return NULL;
	for (i = 0; i < t->nflags; i++) {
		const struct npl_flag_spec *f = &t->flags[i], *o;
		int dist;

		if (strlen(f->name) <= len)
			continue;
		dist = npl_edit_distance(name, npl_arena_strndup(a, f->name, len));
		if (dist > limit || dist > best)
			continue;
		o = option_of(t, f);
		if (dist < best) {
			best = dist;
			opt = o;
			via = f;
		} else if (o != opt) {
			opt = NULL;   /* as near to two options: no suggestion */
		} else if (f == o) {
			via = f;
		}
	}
	return opt ? via->name : NULL;
}

int npl_engine_match(const struct npl_engine_tool *t, const char *name, struct npl_flag_match *m,
		     struct npl_arena *a)
{
	const struct npl_flag_spec *f = npl_engine_flag(t, name), **opts, **via;
	size_t len = strlen(name);
	int lo = 0, hi = t->nflags, i, j, n = 0, help = 0;

	memset(m, 0, sizeof(*m));
	if (f) {
		found(m, t, f);
		if (strcmp(m->canonical, name))
			m->why = npl_arena_printf(a, "alias of %s", m->canonical);
		return 0;
	}
	/* the names are sorted: the ones that begin with name follow where it would be */
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (strcmp(t->flags[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	opts = npl_arena_calloc(a, (size_t)(t->nflags - lo) + 2, sizeof(*opts));
	via = npl_arena_calloc(a, (size_t)(t->nflags - lo) + 2, sizeof(*via));
	for (i = lo; len && i < t->nflags && !strncmp(t->flags[i].name, name, len); i++) {
		const struct npl_flag_spec *o;

		f = &t->flags[i];
		if (!f->upstream)
			continue;
		o = option_of(t, f);
		for (j = 0; j < n && opts[j] != o; j++)
			;
		if (j == n) {
			opts[n] = o;
			via[n++] = f;
		} else if (f == o || (is_negative(via[j], o) && !is_negative(f, o))) {
			via[j] = f;   /* the option's own name, or a positive alias, shows best */
		}
	}
	/* argparse adds --help to every parser: a prefix of it and of an option is ambiguous */
	help = len && !npl_engine_flag(t, "help") && !strncmp("help", name, len);
	if (n == 1 && !help) {
		found(m, t, via[0]);
		m->why = via[0] == opts[0] || m->negative
			? npl_arena_printf(a, "unambiguous prefix of %s", m->canonical)
			: npl_arena_printf(a, "unambiguous prefix of %s, an alias of %s", via[0]->name,
					   m->canonical);
		return 0;
	}
	if (n + help > 1) {
		m->candidates = npl_arena_calloc(a, (size_t)n + 2, sizeof(*m->candidates));
		for (j = 0; j < n; j++)
			m->candidates[m->ncandidates++] = via[j]->name;
		if (help)
			m->candidates[m->ncandidates++] = "help";
		qsort(m->candidates, (size_t)m->ncandidates, sizeof(*m->candidates), strpcmp);
		return 1;
	}
	m->candidates = npl_arena_calloc(a, 2, sizeof(*m->candidates));
	if ((m->candidates[0] = nearest(t, name, a)))
		m->ncandidates = 1;
	return -1;
}

int npl_engine_canonical(const struct npl_engine *e, int prog, const char *name,
			 struct npl_flag_match *m, struct npl_arena *a)
{
	const struct npl_engine_tool *t = npl_engine_prog_tool(e, prog);

	if (t)
		return npl_engine_match(t, name, m, a);
	memset(m, 0, sizeof(*m));
	m->canonical = m->option = name;
	return 0;
}

const char *npl_engine_mismatch(const struct npl_engine *e, const struct npl_engine_tool *t,
				const char *name, int rc, const struct npl_flag_match *m,
				struct npl_arena *a)
{
	struct npl_buf b = NPL_BUF_INIT;
	const char *s;
	int i;

	if (rc > 0) {
		npl_buf_printf(&b, "--%s is ambiguous in %s (SGLang %s): it could be", name, t->module,
			       e->version);
		for (i = 0; i < m->ncandidates && i < 12; i++)
			npl_buf_printf(&b, "%s --%s", i ? "," : "", m->candidates[i]);
		if (m->ncandidates > 12)
			npl_buf_printf(&b, ", ... (%d options)", m->ncandidates);
	} else {
		npl_buf_printf(&b, "--%s is not an option of %s (SGLang %s)", name, t->module, e->version);
		if (m->ncandidates)
			npl_buf_printf(&b, "; did you mean --%s?", m->candidates[0]);
	}
	s = npl_arena_strdup(a, npl_buf_str(&b));
	npl_buf_release(&b);
	return s;
}
