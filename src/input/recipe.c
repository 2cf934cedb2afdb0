/*
 * recipe.c: the strict recipe loader (YAML tree -> layers) and the database
 * (overrides, references, lookups); see recipe.h. One table of keys per
 * mapping: a key not in the table is an error with a did-you-mean.
 */
#define _DEFAULT_SOURCE /* realpath, DT_DIR */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "npulaunch/embedded.h"
#include "npulaunch/fsio.h"
#include "npulaunch/recipe.h"
#include "npulaunch/site.h"
#include "npulaunch/text.h"

#define K_DEF (1u << NPL_LAYER_DEFAULTS)
#define K_HW (1u << NPL_LAYER_HARDWARE)
#define K_MODEL (1u << NPL_LAYER_MODEL)
#define K_RECIPE (1u << NPL_LAYER_RECIPE)
#define K_ALL (K_DEF | K_HW | K_MODEL | K_RECIPE)

struct ctx {
	struct npl_db *db;
	struct npl_arena *a;
	struct npl_diag *d;
	struct npl_layer *L;
	int rc;
};

static const char *const kind_names[] = {"defaults", "hardware", "model", "recipe"};
static const char *const kind_articles[] = {"the defaults", "a hardware profile", "a model",
					    "a recipe"};
static const char *const scope_names[] = {"server", "pd-mixed", "prefill", "decode",
					  "disagg", "router", "bench"};

const char *npl_layer_kind_name(enum npl_layer_kind k)
{
	return k < NPL_LAYER_COUNT ? kind_names[k] : "?";
}

const char *npl_scope_name(enum npl_scope s)
{
	return s < NPL_SCOPE_COUNT ? scope_names[s] : "?";
}

const char *npl_mode_name(enum npl_mode m)
{
	return m == NPL_MODE_PD_MIXED ? "pd-mixed" : m == NPL_MODE_PD_DISAGG ? "pd-disagg" : "?";
}

static int fail(struct ctx *c, const struct npl_ynode *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct ctx *c, const struct npl_ynode *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	npl_diag_vadd(c->d, NPL_ERROR, n ? &n->loc : NULL, fmt, ap);
	va_end(ap);
	c->rc = -1;
	return -1;
}

/* ---- value readers ---------------------------------------------------- */

static int want_scalar(struct ctx *c, const struct npl_ynode *v, const char *key)
{
	if (v->kind != NPL_YSCALAR)
		return fail(c, v, "'%s' must be a single value, not %s", key, npl_ykind_name(v));
	return 0;
}

static int want_map(struct ctx *c, const struct npl_ynode *v, const char *key)
{
	if (v->kind != NPL_YMAP)
		return fail(c, v, "'%s' must be a mapping (key: value lines), not %s", key,
			    npl_ykind_name(v));
	return 0;
}

static int read_str(struct ctx *c, const struct npl_ynode *v, const char *key, struct npl_str *out)
{
	if (want_scalar(c, v, key))
		return -1;
	if (npl_ynull(v))
		return fail(c, v, "'%s' needs a value", key);
	out->s = v->str;
	out->loc = v->loc;
	return 0;
}

static int read_int(struct ctx *c, const struct npl_ynode *v, const char *key, int min, int max,
		    struct npl_int *out)
{
	int n;

	if (want_scalar(c, v, key))
		return -1;
	n = v->plain ? npl_parse_uint(v->str) : -1;
	if (n < 0)
		return fail(c, v, "'%s' must be a whole number, not '%s'", key, v->str);
	if (n < min || n > max)
		return fail(c, v, "'%s' must be between %d and %d, not %d", key, min, max, n);
	out->set = 1;
	out->v = n;
	out->loc = v->loc;
	return 0;
}

static int read_bool(struct ctx *c, const struct npl_ynode *v, const char *key, struct npl_int *out)
{
	int b;

	if (!npl_ybool(v, &b))
		return fail(c, v, "'%s' must be true or false", key);
	out->set = 1;
	out->v = b;
	out->loc = v->loc;
	return 0;
}

static int is_env_name(const char *s)
{
	if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return 0;
	for (s++; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

static int is_flag_name(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')))
		return 0;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
			return 0;
	return 1;
}

static int is_id(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')))
		return 0;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || strchr("._-", *s)))
			return 0;
	return 1;
}

/* A list of strings, each checked by ok() (may be NULL); what names the kind of item. */
static int read_strlist(struct ctx *c, const struct npl_ynode *v, const char *key,
			int (*ok)(const char *), const char *what, struct npl_str **out, int *n)
{
	int i, rc = 0;

	if (v->kind != NPL_YSEQ)
		return fail(c, v, "'%s' must be a list ([a, b] or '- a' lines), not %s", key,
			    npl_ykind_name(v));
	*out = npl_arena_calloc(c->a, (size_t)v->n, sizeof(**out));
	*n = 0;
	for (i = 0; i < v->n; i++) {
		const struct npl_ynode *it = v->kids[i];

		if (it->kind != NPL_YSCALAR || npl_ynull(it)) {
			rc = fail(c, it, "each item of '%s' must be a single value", key);
			continue;
		}
		if (ok && !ok(it->str)) {
			rc = fail(c, it, "'%s' is not %s", it->str, what);
			continue;
		}
		(*out)[*n].s = it->str;
		(*out)[(*n)++].loc = it->loc;
	}
	return rc;
}

static int is_abs_path(const char *s)
{
	return s[0] == '/' && !strchr(s, '\n');
}

/* ---- mapping walker --------------------------------------------------- */

struct field;
typedef int (*field_fn)(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
			void *arg);

struct field {
	const char *key;
	unsigned kinds;
	field_fn fn;
};

static int unknown_key(struct ctx *c, const struct npl_ynode *k, const struct field *tab, int ntab,
		       const char *where)
{
	const char *cands[64];
	int i, n = 0;
	const char *best;

	for (i = 0; i < ntab && n < 64; i++)
		if (tab[i].kinds & (1u << c->L->kind))
			cands[n++] = tab[i].key;
	best = npl_did_you_mean(k->str, cands, n);
	for (i = 0; i < ntab; i++) {
		if (!strcmp(tab[i].key, k->str)) {
			/* known, but not for this kind of document */
			unsigned kinds = tab[i].kinds;
			int j;

			for (j = 0; j < NPL_LAYER_COUNT; j++)
				if (kinds & (1u << j))
					break;
			return fail(c, k, "key '%s' does not belong in %s (it is a key of %s)", k->str,
				    kind_articles[c->L->kind], kind_articles[j]);
		}
	}
	if (best)
		return fail(c, k, "unknown key '%s' in %s (did you mean '%s'?)", k->str, where, best);
	return fail(c, k, "unknown key '%s' in %s", k->str, where);
}

static int walk(struct ctx *c, const struct npl_ynode *map, const struct field *tab, int ntab,
		const char *where, void *arg)
{
	int i, j, rc = 0;

	for (i = 0; i < map->n; i++) {
		const struct npl_ynode *k = map->kids[2 * i], *v = map->kids[2 * i + 1];

		for (j = 0; j < ntab; j++)
			if (!strcmp(tab[j].key, k->str) && (tab[j].kinds & (1u << c->L->kind)))
				break;
		if (j == ntab) {
			rc = unknown_key(c, k, tab, ntab, where);
			continue;
		}
		if (tab[j].fn && tab[j].fn(c, k, v, arg))
			rc = -1;
	}
	return rc;
}

/* ---- scope settings: env, unset, source, flags, explicit --------------- */

/* A literal value that looks like a shell reference ($NAME, ${NAME}): it stays
 * literal, which is rarely what was meant. */
static void warn_dollar(struct ctx *c, const struct npl_ynode *v, const char *what)
{
	const char *p;

	for (p = strchr(v->str, '$'); p; p = strchr(p + 1, '$'))
		if (p[1] == '{' || p[1] == '_' || (p[1] >= 'A' && p[1] <= 'Z') || (p[1] >= 'a' && p[1] <= 'z')) {
			npl_warn(c->d, &v->loc, "'%s' of '%s' looks like a shell reference, but values reach the program literally: write {prepend: ...}/{append: ...} to build on an inherited variable, {site: KEY} for a site value",
				 v->str, what);
			return;
		}
}

/* A text or {site: KEY}: the part of an environment value that is its own. */
static int env_text(struct ctx *c, const struct npl_ynode *name, const struct npl_ynode *v,
		    struct npl_env_set *e)
{
	if (v->kind == NPL_YMAP) {
		int k;

		if (v->n != 1 || strcmp(v->kids[0]->str, "site"))
			return fail(c, v, "the value of '%s' is text or {site: KEY}", name->str);
		v = v->kids[1];
		if (v->kind != NPL_YSCALAR || npl_ynull(v))
			return fail(c, v, "'site' names a site value (model-path, draft-model-path, ifname)");
		k = npl_site_key_from_name(v->str);
		if (k < 0 || npl_site_is_list(k) || npl_site_is_cluster(k))
			return fail(c, v, "'%s' is not a site value an environment variable can hold (model-path, draft-model-path, ifname)",
				    v->str);
		e->site_key = k;
		e->value = v->str;
		return 0;
	}
	if (v->kind != NPL_YSCALAR || npl_ynull(v))
		return fail(c, v, "the value of '%s' must be text or {site: KEY}", name->str);
	e->value = v->str;
	warn_dollar(c, v, name->str);
	return 0;
}

/* {value|prepend|append: TEXT-or-{site: KEY}, sep: S, when: before-source|after-source} */
static int env_value_map(struct ctx *c, const struct npl_ynode *name, const struct npl_ynode *v,
			 struct npl_env_set *e)
{
	static const char *const keys[] = {"value", "prepend", "append", "sep", "when"};
	int i, have = 0, rc = 0;

	for (i = 0; i < v->n; i++) {
		const struct npl_ynode *k = v->kids[2 * i], *x = v->kids[2 * i + 1];
		int j;

		for (j = 0; j < 5; j++)
			if (!strcmp(keys[j], k->str))
				break;
		if (j == 5) {
			const char *best = npl_did_you_mean(k->str, keys, 5);

			rc = best ? fail(c, k, "unknown key '%s' in the value of '%s' (did you mean '%s'?)",
					 k->str, name->str, best)
				  : fail(c, k, "unknown key '%s' in the value of '%s' (value, prepend, append, sep, when)",
					 k->str, name->str);
			continue;
		}
		if (j <= 2) {
			if (have++) {
				rc = fail(c, k, "the value of '%s' takes one of value, prepend and append", name->str);
				continue;
			}
			e->op = j == 0 ? NPL_ENV_SET : j == 1 ? NPL_ENV_PREPEND : NPL_ENV_APPEND;
			if (env_text(c, name, x, e))
				rc = -1;
		} else if (j == 3) {
			if (x->kind != NPL_YSCALAR || npl_ynull(x) || !*x->str || strpbrk(x->str, "\n\r"))
				rc = fail(c, x, "'sep' is the text between the value and the inherited one, like ':'");
			else
				e->sep = x->str;
		} else {
			if (x->kind != NPL_YSCALAR || (strcmp(x->str, "before-source") && strcmp(x->str, "after-source")))
				rc = fail(c, x, "'when' is before-source or after-source");
			else
				e->before_source = !strcmp(x->str, "before-source");
		}
	}
	if (!have && !rc)
		rc = fail(c, v, "the value of '%s' needs one of value, prepend and append", name->str);
	if (e->sep && e->op == NPL_ENV_SET && !rc)
		rc = fail(c, v, "'sep' goes with prepend or append");
	if (!e->sep)
		e->sep = ":";
	return rc;
}

/* A list, or {replace: LIST}: the list replaces what earlier layers set. */
static int read_replaceable(struct ctx *c, const struct npl_ynode *v, const char *key,
			    int (*ok)(const char *), const char *what, struct npl_str **out, int *n,
			    int *replace)
{
	if (v->kind == NPL_YMAP) {
		if (v->n != 1 || strcmp(v->kids[0]->str, "replace"))
			return fail(c, v, "'%s' is a list, or {replace: [...]} to replace what earlier layers set",
				    key);
		*replace = 1;
		return read_strlist(c, v->kids[1], key, ok, what, out, n);
	}
	return read_strlist(c, v, key, ok, what, out, n);
}

static int f_env(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_scope_set *s = arg;
	int i, rc = 0;

	if (want_map(c, v, k->str))
		return -1;
	s->env = npl_arena_calloc(c->a, (size_t)v->n, sizeof(*s->env));
	for (i = 0; i < v->n; i++) {
		const struct npl_ynode *name = v->kids[2 * i], *val = v->kids[2 * i + 1];
		struct npl_env_set *e;

		if (!is_env_name(name->str)) {
			rc = fail(c, name, "'%s' is not an environment variable name", name->str);
			continue;
		}
		e = &s->env[s->nenv];
		e->name = name->str;
		e->loc = name->loc;
		e->site_key = -1;
		if (val->kind == NPL_YMAP) {
			if (env_value_map(c, name, val, e))
				rc = -1;
			else
				s->nenv++;
			continue;
		}
		if (val->kind != NPL_YSCALAR) {
			rc = fail(c, val, "the value of '%s' must be a single value, a mapping ({prepend: ...}, {append: ...}, {value: ...}) or null (removes it)",
				  name->str);
			continue;
		}
		e->value = npl_ynull(val) ? NULL : val->str;
		if (e->value)
			warn_dollar(c, val, name->str);
		s->nenv++;
	}
	return rc;
}

static int f_unset(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_scope_set *s = arg;

	return read_replaceable(c, v, k->str, is_env_name, "an environment variable name", &s->unset,
				&s->nunset, &s->unset_replace);
}

static int f_source(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_scope_set *s = arg;

	return read_replaceable(c, v, k->str, is_abs_path, "an absolute path", &s->source, &s->nsource,
				&s->source_replace);
}

static int f_flags(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_scope_set *s = arg;
	int i, j, rc = 0;

	if (want_map(c, v, k->str))
		return -1;
	s->flags = npl_arena_calloc(c->a, (size_t)v->n, sizeof(*s->flags));
	for (i = 0; i < v->n; i++) {
		const struct npl_ynode *name = v->kids[2 * i], *val = v->kids[2 * i + 1];
		struct npl_flag_set *f;
		int b;

		if (npl_starts_with(name->str, "-")) {
			rc = fail(c, name, "write flag names without the leading dashes: '%s'",
				  name->str + strspn(name->str, "-"));
			continue;
		}
		if (!is_flag_name(name->str)) {
			rc = fail(c, name, "'%s' is not a flag name (lowercase letters, digits, '-')",
				  name->str);
			continue;
		}
		f = &s->flags[s->nflags];
		f->name = name->str;
		f->loc = name->loc;
		if (npl_ybool(val, &b)) {
			f->kind = b ? NPL_FLAG_SWITCH : NPL_FLAG_REMOVE;
		} else if (npl_ynull(val)) {
			f->kind = NPL_FLAG_REMOVE;
		} else if (val->kind == NPL_YSCALAR) {
			f->kind = NPL_FLAG_VALUES;
			f->values = npl_arena_alloc(c->a, sizeof(*f->values));
			f->values[0] = val->str;
			f->nvalues = 1;
			warn_dollar(c, val, name->str);
		} else if (val->kind == NPL_YSEQ && val->n > 0) {
			f->kind = NPL_FLAG_VALUES;
			f->values = npl_arena_calloc(c->a, (size_t)val->n, sizeof(*f->values));
			for (j = 0; j < val->n; j++) {
				if (val->kids[j]->kind != NPL_YSCALAR || npl_ynull(val->kids[j])) {
					rc = fail(c, val->kids[j], "each value of flag '%s' must be a single value",
						  name->str);
					break;
				}
				f->values[j] = val->kids[j]->str;
			}
			if (j < val->n)
				continue;
			f->nvalues = val->n;
		} else {
			rc = fail(c, val, "flag '%s' takes true, false/null, a value or a non-empty list of values",
				  name->str);
			continue;
		}
		s->nflags++;
	}
	return rc;
}

static int is_explicit_flag(const char *s)
{
	return !strcmp(s, "nnodes") || !strcmp(s, "node-rank") || !strcmp(s, "dist-init-addr");
}

static int f_explicit(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_scope_set *s = arg;

	return read_strlist(c, v, k->str, is_explicit_flag,
			    "a rule-derived flag that may be written explicitly (nnodes, node-rank, dist-init-addr)",
			    &s->explicit_flags, &s->nexplicit);
}

static const struct field scope_fields[] = {
	{"env", K_ALL, f_env},
	{"unset", K_ALL, f_unset},
	{"source", K_ALL, f_source},
	{"flags", K_ALL, f_flags},
	{"explicit", K_ALL, f_explicit},
};

static int f_role_spec(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
		       void *arg);

static const struct field role_fields[] = {
	{"env", K_ALL, f_env},
	{"unset", K_ALL, f_unset},
	{"source", K_ALL, f_source},
	{"flags", K_ALL, f_flags},
	{"explicit", K_ALL, f_explicit},
	{"speculative", K_ALL, f_role_spec},
};

static const struct field router_fields[] = {
	{"env", K_ALL, f_env},
	{"unset", K_ALL, f_unset},
	{"flags", K_ALL, f_flags},
};

static int f_roles(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	static const char *const names[] = {"pd-mixed", "prefill", "decode", "disagg"};
	static const enum npl_scope scopes[] = {NPL_SCOPE_PD_MIXED, NPL_SCOPE_PREFILL,
						NPL_SCOPE_DECODE, NPL_SCOPE_DISAGG};
	int i, j, rc = 0;

	(void)arg;
	if (want_map(c, v, k->str))
		return -1;
	for (i = 0; i < v->n; i++) {
		const struct npl_ynode *name = v->kids[2 * i], *val = v->kids[2 * i + 1];

		for (j = 0; j < 4; j++)
			if (!strcmp(names[j], name->str))
				break;
		if (j == 4) {
			const char *best = npl_did_you_mean(name->str, names, 4);

			rc = best ? fail(c, name, "unknown role '%s' (did you mean '%s'?)", name->str, best)
				  : fail(c, name, "unknown role '%s' (roles: pd-mixed, prefill, decode, disagg)",
					 name->str);
			continue;
		}
		if (want_map(c, val, name->str)) {
			rc = -1;
			continue;
		}
		char *where = npl_arena_printf(c->a, "role '%s'", name->str);

		if (walk(c, val, role_fields, NPL_ARRAY_SIZE(role_fields), where,
			 &c->L->scope[scopes[j]]))
			rc = -1;
	}
	return rc;
}

static int f_router(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	(void)arg;
	if (want_map(c, v, k->str))
		return -1;
	return walk(c, v, router_fields, NPL_ARRAY_SIZE(router_fields), "'router'",
		    &c->L->scope[NPL_SCOPE_ROUTER]);
}

/* ---- bench ------------------------------------------------------------ */

static int is_dataset_kind(const char *s)
{
	return !strcmp(s, "random") || !strcmp(s, "generated-shared-prefix") || !strcmp(s, "image");
}

static int f_bench_key(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_bench_spec *b = &c->L->bench;
	const char *key = k->str;

	(void)arg;
	if (!strcmp(key, "dataset")) {
		if (read_str(c, v, key, &b->dataset))
			return -1;
		if (!is_dataset_kind(v->str))
			return fail(c, v, "unknown benchmark dataset '%s' (random, generated-shared-prefix, image)",
				    v->str);
		return 0;
	}
	if (!strcmp(key, "resolution")) {
		static const struct npl_number_spec px = {"a number of pixels", 1, 100000, 1};
		const char *x = strchr(v->str, 'x');
		double w, h;

		if (read_str(c, v, key, &b->resolution))
			return -1;
		if (!x || npl_parse_number_n(v->str, (size_t)(x - v->str), &px, &w) || npl_parse_number(x + 1, &px, &h))
			return fail(c, v, "'resolution' must be WIDTHxHEIGHT, like 1920x1080");
		return 0;
	}
	if (!strcmp(key, "prefix"))
		return read_int(c, v, key, 1, 99, &b->prefix);
	if (!strcmp(key, "input"))
		return read_int(c, v, key, 1, 100000000, &b->input);
	if (!strcmp(key, "output"))
		return read_int(c, v, key, 1, 100000000, &b->output);
	if (!strcmp(key, "groups"))
		return read_int(c, v, key, 1, 1000000, &b->groups);
	if (!strcmp(key, "images"))
		return read_int(c, v, key, 1, 1000, &b->images);
	if (!strcmp(key, "concurrency"))
		return read_int(c, v, key, 1, 10000000, &b->concurrency);
	if (!strcmp(key, "prompts"))
		return read_int(c, v, key, 1, 100000000, &b->prompts);
	if (!strcmp(key, "system_prompt_len"))
		return read_int(c, v, key, 0, 100000000, &b->system_prompt_len);
	if (!strcmp(key, "question_len"))
		return read_int(c, v, key, 0, 100000000, &b->question_len);
	return 0;
}

static const struct field bench_fields[] = {
	{"env", K_ALL, f_env},
	{"unset", K_ALL, f_unset},
	{"flags", K_ALL, f_flags},
	{"dataset", K_ALL, f_bench_key},
	{"input", K_ALL, f_bench_key},
	{"output", K_ALL, f_bench_key},
	{"prefix", K_ALL, f_bench_key},
	{"groups", K_ALL, f_bench_key},
	{"resolution", K_ALL, f_bench_key},
	{"images", K_ALL, f_bench_key},
	{"concurrency", K_ALL, f_bench_key},
	{"prompts", K_ALL, f_bench_key},
	{"system_prompt_len", K_ALL, f_bench_key},
	{"question_len", K_ALL, f_bench_key},
};

static int f_bench(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	(void)arg;
	if (want_map(c, v, k->str))
		return -1;
	return walk(c, v, bench_fields, NPL_ARRAY_SIZE(bench_fields), "'bench'",
		    &c->L->scope[NPL_SCOPE_BENCH]);
}

/* ---- speculative, tuning, ports, launch, topology ---------------------- */

static const char *const spec_field_names[] = {"algorithm", "steps", "topk", "draft_tokens",
					       "draft_model", "draft_quantization"};

static int f_spec_key(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_spec *s = arg;
	const char *key = k->str;

	if (!strcmp(key, "emit")) {
		int i, j, rc = 0;

		if (v->kind != NPL_YSEQ || v->n == 0)
			return fail(c, v, "'emit' is a non-empty list of the block's fields (algorithm, steps, topk, draft_tokens, draft_model, draft_quantization)");
		for (i = 0; i < v->n; i++) {
			const struct npl_ynode *it = v->kids[i];

			for (j = 0; j < 6; j++)
				if (it->kind == NPL_YSCALAR && !strcmp(it->str, spec_field_names[j]))
					break;
			if (j == 6)
				rc = fail(c, it, "'%s' is not a field of the speculative block (algorithm, steps, topk, draft_tokens, draft_model, draft_quantization)",
					  it->kind == NPL_YSCALAR ? it->str : "?");
			else
				s->emit |= 1u << j;
		}
		s->emit_loc = k->loc;
		return rc;
	}
	if (!strcmp(key, "algorithm"))
		return read_str(c, v, key, &s->algorithm);
	if (!strcmp(key, "steps"))
		return read_int(c, v, key, 1, 64, &s->steps);
	if (!strcmp(key, "topk"))
		return read_int(c, v, key, 1, 64, &s->topk);
	if (!strcmp(key, "draft_tokens"))
		return read_int(c, v, key, 1, 256, &s->draft_tokens);
	if (!strcmp(key, "draft_model"))
		return read_bool(c, v, key, &s->draft_model);
	if (!strcmp(key, "draft_quantization")) {
		if (npl_ynull(v)) {
			s->draft_quantization_removed = 1;
			return 0;
		}
		return read_str(c, v, key, &s->draft_quantization);
	}
	return 0;
}

static const struct field spec_fields[] = {
	{"algorithm", K_ALL, f_spec_key},
	{"steps", K_ALL, f_spec_key},
	{"topk", K_ALL, f_spec_key},
	{"draft_tokens", K_ALL, f_spec_key},
	{"draft_model", K_ALL, f_spec_key},
	{"draft_quantization", K_ALL, f_spec_key},
	{"emit", K_ALL, f_spec_key},
};

static int read_spec(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
		     struct npl_spec *s, const char *where)
{
	s->present = 1;
	s->loc = k->loc;
	if (npl_ynull(v)) {
		s->removed = 1;
		return 0;
	}
	if (want_map(c, v, k->str))
		return -1;
	return walk(c, v, spec_fields, NPL_ARRAY_SIZE(spec_fields), where, s);
}

/* roles.X.speculative: the role's own block, merged over the top-level one. */
static int f_role_spec(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_scope_set *sc = arg;

	sc->spec = npl_arena_calloc(c->a, 1, sizeof(*sc->spec));
	return read_spec(c, k, v, sc->spec, "a role's 'speculative'");
}

static int f_speculative(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	(void)arg;
	return read_spec(c, k, v, &c->L->spec, "'speculative'");
}

static int is_sysctl_name(const char *s)
{
	if (!strchr(s, '.') || *s == '.' || npl_ends_with(s, ".") || strstr(s, ".."))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '.'))
			return 0;
	return 1;
}

static int f_tuning_key(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_layer *L = c->L;
	int i, rc = 0;

	(void)arg;
	if (!strcmp(k->str, "cpu_governor")) {
		if (npl_ynull(v)) {
			L->governor_removed = 1;
			return 0;
		}
		if (read_str(c, v, k->str, &L->governor))
			return -1;
		if (!is_flag_name(v->str))
			return fail(c, v, "'%s' is not a cpufreq governor name", v->str);
		return 0;
	}
	/* sysctl */
	if (want_map(c, v, k->str))
		return -1;
	L->sysctl = npl_arena_calloc(c->a, (size_t)v->n, sizeof(*L->sysctl));
	for (i = 0; i < v->n; i++) {
		const struct npl_ynode *name = v->kids[2 * i], *val = v->kids[2 * i + 1];
		struct npl_env_set *e;

		if (!is_sysctl_name(name->str)) {
			rc = fail(c, name, "'%s' is not a sysctl name (like vm.swappiness)", name->str);
			continue;
		}
		if (val->kind != NPL_YSCALAR) {
			rc = fail(c, val, "the value of sysctl '%s' must be a single value", name->str);
			continue;
		}
		if (!npl_ynull(val) && (!*val->str || strpbrk(val->str, "\n\r"))) {
			rc = fail(c, val, "the value of sysctl '%s' must be one line", name->str);
			continue;
		}
		e = &L->sysctl[L->nsysctl++];
		e->name = name->str;
		e->value = npl_ynull(val) ? NULL : val->str;
		e->loc = name->loc;
	}
	return rc;
}

static int f_tuning_replace(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
			    void *arg)
{
	struct npl_int b = {0};

	(void)arg;
	if (read_bool(c, v, k->str, &b))
		return -1;
	c->L->tuning_replace = b.v;
	return 0;
}

static const struct field tuning_fields[] = {
	{"cpu_governor", K_ALL, f_tuning_key},
	{"sysctl", K_ALL, f_tuning_key},
	{"replace", K_ALL, f_tuning_replace},
};

static int f_tuning(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	(void)arg;
	if (npl_ynull(v)) {
		/* tuning: null: this recipe tunes nothing */
		c->L->tuning_replace = 1;
		c->L->governor_removed = 1;
		return 0;
	}
	if (want_map(c, v, k->str))
		return -1;
	return walk(c, v, tuning_fields, NPL_ARRAY_SIZE(tuning_fields), "'tuning'", NULL);
}

static int f_port_key(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_ports *p = &c->L->ports;
	const char *key = k->str;
	struct npl_int *out = !strcmp(key, "entry") ? &p->entry
			    : !strcmp(key, "prefill") ? &p->prefill
			    : !strcmp(key, "decode") ? &p->decode
			    : !strcmp(key, "bootstrap") ? &p->bootstrap
			    : !strcmp(key, "dist_init") ? &p->dist_init : &p->mf_store;

	(void)arg;
	return read_int(c, v, key, 1, 65535, out);
}

static const struct field port_fields[] = {
	{"entry", K_ALL, f_port_key},
	{"prefill", K_ALL, f_port_key},
	{"decode", K_ALL, f_port_key},
	{"bootstrap", K_ALL, f_port_key},
	{"dist_init", K_ALL, f_port_key},
	{"mf_store", K_ALL, f_port_key},
};

static int f_ports(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	(void)arg;
	if (want_map(c, v, k->str))
		return -1;
	return walk(c, v, port_fields, NPL_ARRAY_SIZE(port_fields), "'ports'", NULL);
}

static int f_launch_key(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_launch *l = &c->L->launch;
	int i = !strcmp(k->str, "server") ? NPL_PROG_SERVER
	      : !strcmp(k->str, "router") ? NPL_PROG_ROUTER : NPL_PROG_BENCH;

	(void)arg;
	if (read_strlist(c, v, k->str, NULL, NULL, &l->argv[i], &l->n[i]))
		return -1;
	if (l->n[i] == 0)
		return fail(c, v, "'%s' needs the program and its arguments", k->str);
	l->loc[i] = k->loc;
	return 0;
}

static const struct field launch_fields[] = {
	{"server", K_ALL, f_launch_key},
	{"router", K_ALL, f_launch_key},
	{"bench", K_ALL, f_launch_key},
};

static int f_launch(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	(void)arg;
	if (want_map(c, v, k->str))
		return -1;
	return walk(c, v, launch_fields, NPL_ARRAY_SIZE(launch_fields), "'launch'", NULL);
}

/* ---- container (hardware profiles) ------------------------------------ */

/* A mapping of single values into name/value pairs, each name checked by name_ok and each
 * value by value_ok (either may be NULL). */
static int read_pairs(struct ctx *c, const struct npl_ynode *v, const char *key,
		      int (*name_ok)(const char *), int (*value_ok)(const char *), const char *what,
		      struct npl_env_set **out, int *n)
{
	int i, rc = 0;

	if (want_map(c, v, key))
		return -1;
	*out = npl_arena_calloc(c->a, (size_t)v->n + 1, sizeof(**out));
	*n = 0;
	for (i = 0; i < v->n; i++) {
		const struct npl_ynode *name = v->kids[2 * i], *val = v->kids[2 * i + 1];

		if (val->kind != NPL_YSCALAR || npl_ynull(val) || (name_ok && !name_ok(name->str)) ||
		    (value_ok && !value_ok(val->str))) {
			rc = fail(c, val, "'%s: %s' in '%s' is not %s", name->str,
				  val->kind == NPL_YSCALAR ? val->str : npl_ykind_name(val), key, what);
			continue;
		}
		(*out)[*n].name = name->str;
		(*out)[*n].value = val->str;
		(*out)[(*n)++].loc = name->loc;
	}
	return rc;
}

static int is_label_text(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 253)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr("-_./", *s)))
			return 0;
	return 1;
}

static int is_mount_kind(const char *s)
{
	return !strcmp(s, "Directory") || !strcmp(s, "File") || !strcmp(s, "DirectoryOrCreate");
}

static int is_mount_path(const char *s)
{
	return is_abs_path(s) && strcmp(s, "/") && !strpbrk(s, ":,\r");
}

static int f_container_key(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
			   void *arg)
{
	struct npl_container *ct = &c->L->container;
	const char *key = k->str;

	(void)arg;
	if (!strcmp(key, "privileged"))
		return read_bool(c, v, key, &ct->privileged);
	if (!strcmp(key, "node_selector"))
		return read_pairs(c, v, key, is_label_text, is_label_text, "a node label (key: value)",
				  &ct->node_selector, &ct->nnode_selector);
	if (!strcmp(key, "mounts"))
		return read_pairs(c, v, key, is_mount_path, is_mount_kind,
				  "a host path and its kind (Directory, File or DirectoryOrCreate)", &ct->mounts,
				  &ct->nmounts);
	if (!strcmp(key, "devices"))
		return read_strlist(c, v, key, is_mount_path, "a device file (an absolute path)", &ct->devices,
				    &ct->ndevices);
	if (!strcmp(key, "image"))
		return read_str(c, v, key, &ct->image);
	if (!strcmp(key, "npu_resource"))
		return read_str(c, v, key, &ct->npu_resource);
	if (!strcmp(key, "shm_size"))
		return read_str(c, v, key, &ct->shm_size);
	if (read_str(c, v, key, &ct->npu_unit))
		return -1;
	if (strcmp(v->str, "card") && strcmp(v->str, "die"))
		return fail(c, v, "'npu_unit' is card or die (what the device plugin counts), not '%s'", v->str);
	return 0;
}

static const struct field container_fields[] = {
	{"image", K_HW, f_container_key},
	{"npu_resource", K_HW, f_container_key},
	{"npu_unit", K_HW, f_container_key},
	{"node_selector", K_HW, f_container_key},
	{"privileged", K_HW, f_container_key},
	{"devices", K_HW, f_container_key},
	{"mounts", K_HW, f_container_key},
	{"shm_size", K_HW, f_container_key},
};

static int f_container(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	(void)arg;
	if (want_map(c, v, k->str))
		return -1;
	c->L->container.present = 1;
	c->L->container.loc = k->loc;
	return walk(c, v, container_fields, NPL_ARRAY_SIZE(container_fields), "'container'", NULL);
}

static int f_preflight_key(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
			   void *arg)
{
	struct npl_layer *L = c->L;
	const char *key = k->str;

	(void)arg;
	if (!strcmp(key, "driver_version"))
		return read_strlist(c, v, key, is_abs_path, "an absolute path", &L->pf_driver, &L->npf_driver);
	if (!strcmp(key, "toolkit_version"))
		return read_strlist(c, v, key, is_abs_path, "an absolute path", &L->pf_toolkit, &L->npf_toolkit);
	return read_strlist(c, v, key, is_abs_path, "an absolute path", &L->pf_tools, &L->npf_tools);
}

static const struct field preflight_fields[] = {
	{"driver_version", K_HW, f_preflight_key},
	{"toolkit_version", K_HW, f_preflight_key},
	{"tool_path", K_HW, f_preflight_key},
};

static int f_preflight(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	(void)arg;
	if (want_map(c, v, k->str))
		return -1;
	c->L->pf_loc = k->loc;
	return walk(c, v, preflight_fields, NPL_ARRAY_SIZE(preflight_fields), "'preflight'", NULL);
}

static int f_topo_role_key(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
			   void *arg)
{
	struct npl_topology *t = arg;

	if (!strcmp(k->str, "instances"))
		return read_int(c, v, k->str, 1, 1024, &t->instances);
	if (!strcmp(k->str, "dies"))
		return read_int(c, v, k->str, 1, 65536, &t->dies);
	if (!strcmp(k->str, "first_card"))
		return read_int(c, v, k->str, 0, 65535, &t->first_card);
	if (!strcmp(k->str, "per_node"))
		return read_int(c, v, k->str, 1, 1024, &t->per_node);
	return read_int(c, v, k->str, 1, 65536, &t->cards);
}

static const struct field topo_role_fields[] = {
	{"instances", K_ALL, f_topo_role_key},
	{"cards", K_ALL, f_topo_role_key},
	{"dies", K_ALL, f_topo_role_key},
	{"first_card", K_ALL, f_topo_role_key},
	{"per_node", K_ALL, f_topo_role_key},
};

static int f_topo_key(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_topology *t = &c->L->topo[!strcmp(k->str, "prefill")  ? NPL_TOPO_PREFILL
					     : !strcmp(k->str, "decode") ? NPL_TOPO_DECODE
									 : NPL_TOPO_PD_MIXED];
	int rc;

	(void)arg;
	if (want_map(c, v, k->str))
		return -1;
	rc = walk(c, v, topo_role_fields, NPL_ARRAY_SIZE(topo_role_fields),
		  npl_arena_printf(c->a, "topology '%s'", k->str), t);
	if (rc == 0 && (!t->instances.set || !t->cards.set))
		return fail(c, v, "topology '%s' needs both 'instances' and 'cards'", k->str);
	return rc;
}

static const struct field topo_fields[] = {
	{"prefill", K_ALL, f_topo_key},
	{"decode", K_ALL, f_topo_key},
	{"pd-mixed", K_ALL, f_topo_key},
};

static int f_topology(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	(void)arg;
	c->L->topo_loc = k->loc;
	if (want_map(c, v, k->str))
		return -1;
	return walk(c, v, topo_fields, NPL_ARRAY_SIZE(topo_fields), "'topology'", NULL);
}

/* ---- identity and metadata -------------------------------------------- */

static int f_ident(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_layer *L = c->L;
	const char *key = k->str;
	struct npl_str s;

	(void)arg;
	if (!strcmp(key, "dies_per_card"))
		return read_int(c, v, key, 1, 64, &L->dies_per_card);
	if (!strcmp(key, "cards_per_node"))
		return read_int(c, v, key, 1, 1024, &L->cards_per_node);
	if (!strcmp(key, "socket_ifname"))
		return read_bool(c, v, key, &L->socket_ifname);
	if (!strcmp(key, "aliases"))
		return read_strlist(c, v, key, NULL, NULL, &L->aliases, &L->naliases);
	if (!strcmp(key, "ifname_env")) {
		L->ifname_env_set = 1;
		return read_strlist(c, v, key, is_env_name, "an environment variable name",
				    &L->ifname_env, &L->nifname_env);
	}
	if (!strcmp(key, "cards")) {
		struct npl_int n = {0};

		if (read_int(c, v, key, 1, 65536, &n))
			return -1;
		L->cards = n.v;
		L->cards_loc = v->loc;
		return 0;
	}
	if (read_str(c, v, key, &s))
		return -1;
	if (strpbrk(s.s, "\n\r\t") && strcmp(key, "notes"))
		return fail(c, v, "'%s' must be one line", key);
	if (!strcmp(key, "version")) {
		L->db_version = s.s;
	} else if (!strcmp(key, "default_hardware")) {
		L->default_hardware = s;
	} else if (!strcmp(key, "id")) {
		if (!is_id(s.s))
			return fail(c, v, "'%s' is not an id (lowercase letters, digits, '.', '_', '-')", s.s);
		L->id = s.s;
	} else if (!strcmp(key, "name") || !strcmp(key, "title")) {
		L->name = s.s;
		if (!strcmp(key, "title")) {
			L->id = npl_recipe_id_from_title(c->a, s.s);
			if (!is_id(L->id))
				return fail(c, v, "the title gives the id '%s', which has characters an id may not have (lowercase letters, digits, '.', '_', '-')",
					    L->id);
		}
	} else if (!strcmp(key, "notes")) {
		L->notes = s.s;
	} else if (!strcmp(key, "model")) {
		L->model_ref = s;
	} else if (!strcmp(key, "hardware")) {
		L->hardware_ref = s;
	} else if (!strcmp(key, "mode")) {
		L->mode_loc = v->loc;
		if (!strcmp(s.s, "pd-mixed"))
			L->mode = NPL_MODE_PD_MIXED;
		else if (!strcmp(s.s, "pd-disagg"))
			L->mode = NPL_MODE_PD_DISAGG;
		else
			return fail(c, v, "unknown mode '%s' (pd-mixed or pd-disagg)", s.s);
	} else if (!strcmp(key, "quantization")) {
		L->quantization = s.s;
	} else if (!strcmp(key, "dataset")) {
		L->dataset = s.s;
	} else if (!strcmp(key, "tier")) {
		if (strcmp(s.s, "low-latency") && strcmp(s.s, "high-throughput"))
			return fail(c, v, "unknown tier '%s' (low-latency or high-throughput)", s.s);
		L->tier = s.s;
	} else if (!strcmp(key, "entry_host")) {
		L->entry_host = s;
	}
	return 0;
}

static int f_duration(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_layer *L = c->L;
	int ttft = !strcmp(k->str, "ttft");
	long long us;

	(void)arg;
	if (want_scalar(c, v, k->str))
		return -1;
	if (ttft && npl_ynull(v))
		return 0;
	us = npl_parse_duration_us(v->str);
	if (us <= 0)
		return fail(c, v, "'%s' must be a duration like 20ms or 5s, not '%s'", k->str, v->str);
	if (ttft) {
		L->ttft_us = us;
		L->ttft_text = v->str;
	} else {
		L->tpot_us = us;
		L->tpot_text = v->str;
	}
	return 0;
}

/* Rules whose warnings a recipe may waive, with a reason. */
static const char *const waivable[] = {"graph-batch"};

static int f_waive(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_layer *L = c->L;
	int i, j, rc = 0;

	(void)arg;
	if (want_map(c, v, k->str))
		return -1;
	L->waive = npl_arena_calloc(c->a, (size_t)v->n, sizeof(*L->waive));
	for (i = 0; i < v->n; i++) {
		const struct npl_ynode *rule = v->kids[2 * i], *why = v->kids[2 * i + 1];

		for (j = 0; j < (int)NPL_ARRAY_SIZE(waivable); j++)
			if (!strcmp(waivable[j], rule->str))
				break;
		if (j == (int)NPL_ARRAY_SIZE(waivable)) {
			rc = fail(c, rule, "'%s' is not a rule a recipe may waive (graph-batch)", rule->str);
			continue;
		}
		if (why->kind != NPL_YSCALAR || npl_ynull(why) || !*why->str) {
			rc = fail(c, why, "waiving '%s' needs the reason, as text", rule->str);
			continue;
		}
		L->waive[L->nwaive].name = rule->str;
		L->waive[L->nwaive].value = why->str;
		L->waive[L->nwaive++].loc = rule->loc;
	}
	return rc;
}

/* deviations: what -> why the recipe deploys what its page evidently means. */
static int f_deviations(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_layer *L = c->L;
	int i, rc = 0;

	(void)arg;
	if (want_map(c, v, k->str))
		return -1;
	L->deviation = npl_arena_calloc(c->a, (size_t)v->n, sizeof(*L->deviation));
	for (i = 0; i < v->n; i++) {
		const struct npl_ynode *what = v->kids[2 * i], *why = v->kids[2 * i + 1];

		if (why->kind != NPL_YSCALAR || npl_ynull(why) || !*why->str) {
			rc = fail(c, why, "deviation '%s' needs the reason, as text", what->str);
			continue;
		}
		L->deviation[L->ndeviation].name = what->str;
		L->deviation[L->ndeviation].value = why->str;
		L->deviation[L->ndeviation++].loc = what->loc;
	}
	return rc;
}

static int f_scope_top(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	size_t i;

	(void)arg;
	for (i = 0; i < NPL_ARRAY_SIZE(scope_fields); i++)
		if (!strcmp(scope_fields[i].key, k->str))
			return scope_fields[i].fn(c, k, v, &c->L->scope[NPL_SCOPE_SERVER]);
	return 0;
}

static const struct field top_fields[] = {
	{"kind", K_ALL, NULL},
	{"version", K_DEF, f_ident},
	{"default_hardware", K_DEF, f_ident},
	{"id", K_HW | K_MODEL, f_ident},
	{"name", K_HW | K_MODEL, f_ident},
	{"aliases", K_MODEL, f_ident},
	{"dies_per_card", K_HW, f_ident},
	{"cards_per_node", K_HW, f_ident},
	{"container", K_HW, f_container},
	{"preflight", K_HW, f_preflight},
	{"title", K_RECIPE, f_ident},
	{"model", K_RECIPE, f_ident},
	{"hardware", K_RECIPE, f_ident},
	{"cards", K_RECIPE, f_ident},
	{"mode", K_RECIPE, f_ident},
	{"quantization", K_RECIPE, f_ident},
	{"dataset", K_RECIPE, f_ident},
	{"tpot", K_RECIPE, f_duration},
	{"ttft", K_RECIPE, f_duration},
	{"tier", K_RECIPE, f_ident},
	{"topology", K_RECIPE, f_topology},
	{"waive", K_RECIPE, f_waive},
	{"deviations", K_MODEL | K_RECIPE, f_deviations},
	{"notes", K_ALL, f_ident},
	{"env", K_ALL, f_scope_top},
	{"unset", K_ALL, f_scope_top},
	{"source", K_ALL, f_scope_top},
	{"flags", K_ALL, f_scope_top},
	{"explicit", K_ALL, f_scope_top},
	{"roles", K_ALL, f_roles},
	{"router", K_ALL, f_router},
	{"bench", K_ALL, f_bench},
	{"speculative", K_ALL, f_speculative},
	{"tuning", K_ALL, f_tuning},
	{"ports", K_ALL, f_ports},
	{"launch", K_ALL, f_launch},
	{"entry_host", K_ALL, f_ident},
	{"socket_ifname", K_ALL, f_ident},
	{"ifname_env", K_ALL, f_ident},
};

/* Keys a document of each kind must have. */
static const char *const required[NPL_LAYER_COUNT][10] = {
	[NPL_LAYER_DEFAULTS] = {"version"},
	[NPL_LAYER_HARDWARE] = {"id", "name", "dies_per_card", "cards_per_node"},
	[NPL_LAYER_MODEL] = {"id", "name"},
	[NPL_LAYER_RECIPE] = {"title", "model", "hardware", "cards", "mode", "quantization", "dataset",
			      "bench"},
};

static const struct npl_ynode *map_get(const struct npl_ynode *map, const char *key)
{
	int i;

	for (i = 0; i < map->n; i++)
		if (!strcmp(map->kids[2 * i]->str, key))
			return map->kids[2 * i + 1];
	return NULL;
}

static void add_layer(struct npl_db *db, struct npl_layer *L)
{
	if (db->nlayers == db->caplayers) {
		int cap = db->caplayers ? db->caplayers * 2 : 64;

		db->layers = npl_arena_grow(db->arena, db->layers, (size_t)db->nlayers, (size_t)cap,
					    sizeof(*db->layers));
		db->caplayers = cap;
	}
	db->layers[db->nlayers++] = L;
}

/* The layer of one document (NULL for an engine-flags document, or when it is not a layer). */
static struct npl_layer *build_layer(struct ctx *c, const char *file, const struct npl_ynode *doc,
				     int source)
{
	const struct npl_ynode *kind;
	struct npl_layer *L;
	int i, k, before;

	if (doc->kind != NPL_YMAP) {
		fail(c, doc, "a recipe file holds mappings (key: value lines), not %s", npl_ykind_name(doc));
		return NULL;
	}
	kind = map_get(doc, "kind");
	if (!kind) {
		fail(c, doc, "missing 'kind' (defaults, hardware, model, recipe or engine-flags)");
		return NULL;
	}
	if (kind->kind == NPL_YSCALAR && !strcmp(kind->str, "engine-flags")) {
		c->db->engine_flags = doc;
		c->db->engine_flags_file = file;
		return NULL;
	}
	for (k = 0; k < NPL_LAYER_COUNT; k++)
		if (kind->kind == NPL_YSCALAR && !strcmp(kind->str, kind_names[k]))
			break;
	if (k == NPL_LAYER_COUNT) {
		static const char *const all[] = {"defaults", "hardware", "model", "recipe",
						  "engine-flags"};
		const char *best = kind->kind == NPL_YSCALAR ? npl_did_you_mean(kind->str, all, 5) : NULL;

		if (best)
			fail(c, kind, "unknown kind '%s' (did you mean '%s'?)", kind->str, best);
		else
			fail(c, kind, "'kind' must be defaults, hardware, model, recipe or engine-flags");
		return NULL;
	}
	L = npl_arena_alloc(c->a, sizeof(*L));
	L->kind = (enum npl_layer_kind)k;
	L->file = file;
	L->loc = doc->loc;
	L->source = source;
	L->tpot_us = L->ttft_us = -1;
	c->L = L;
	before = c->d->errors;
	walk(c, doc, top_fields, NPL_ARRAY_SIZE(top_fields), kind_articles[k], NULL);
	for (i = 0; required[k][i]; i++)
		if (!map_get(doc, required[k][i]))
			fail(c, doc, "%s needs '%s'", kind_articles[k], required[k][i]);
	if (k == NPL_LAYER_DEFAULTS)
		L->id = "defaults";
	if (L->kind == NPL_LAYER_RECIPE && L->bench.dataset.s == NULL && map_get(doc, "bench"))
		fail(c, map_get(doc, "bench"), "the recipe's 'bench' needs 'dataset'");
	if (L->kind == NPL_LAYER_RECIPE && !map_get(doc, "tpot") && L->ttft_us < 0 &&
	    (!map_get(doc, "ttft") || npl_ynull(map_get(doc, "ttft"))))
		fail(c, doc, "a recipe needs a target: 'tpot', 'ttft' or both");
	L->invalid = c->d->errors != before;
	return L;
}

/* ---- database --------------------------------------------------------- */

void npl_db_init(struct npl_db *db, struct npl_arena *arena)
{
	memset(db, 0, sizeof(*db));
	db->arena = arena;
}

/* Load one file's text; *ndocs (may be NULL) says how many documents it held. */
static int load_text(struct npl_db *db, const char *name, const char *text, size_t len, int source,
		     struct npl_diag *d, int *ndocs_out)
{
	struct ctx c = {db, db->arena, d, NULL, 0};
	struct npl_ynode **docs;
	int ndocs, i;

	if (ndocs_out)
		*ndocs_out = 0;
	npl_diag_source(d, name, text);
	if (source >= db->nsources)
		db->nsources = source + 1;
	if (npl_yaml_load(db->arena, name, text, len, &docs, &ndocs, d))
		return -1;
	for (i = 0; i < ndocs; i++) {
		struct npl_layer *L = build_layer(&c, name, docs[i], source);

		if (L)
			add_layer(db, L);
	}
	if (ndocs_out)
		*ndocs_out = ndocs;
	return c.rc;
}

int npl_db_load_text(struct npl_db *db, const char *name, const char *text, size_t len, int source,
		     struct npl_diag *d)
{
	return load_text(db, name, text, len, source, d, NULL);
}

int npl_db_load_embedded(struct npl_db *db, struct npl_diag *d)
{
	const struct npl_embedded *e;
	int rc = 0;

	for (e = npl_embedded_recipes; e->name; e++)
		if (load_text(db, e->name, e->data, e->len, 0, d, NULL))
			rc = -1;
	return rc;
}

/* A folder entry: its path and whether it is a folder (from readdir's d_type when known). */
struct dentry {
	char *path;
	int dir;
};

static int dentcmp(const void *a, const void *b)
{
	return strcmp(((const struct dentry *)a)->path, ((const struct dentry *)b)->path);
}

/* A recipe file of a folder. */
static int load_file(struct npl_db *db, const char *path, int source, struct npl_diag *d)
{
	size_t len;
	char *text = npl_read_file_in(db->arena, path, &len, d);

	if (!text)
		return -1;
	return load_text(db, path, text, len, source, d, NULL);
}

/* The folders one walk has read, by device and inode: a symbolic link back up the tree, or two
 * links to one folder, would make the walk endless or exponential. */
struct seen {
	struct {
		dev_t dev;
		ino_t ino;
		const char *path;
	} *v;
	size_t n, cap;   /* open addressing; cap a power of two */
};

/* Where folder (dev, ino) is in the set, or the empty slot where it belongs. */
static size_t seen_slot(const struct seen *s, dev_t dev, ino_t ino)
{
	size_t i = ((size_t)ino * 0x9e3779b97f4a7c15ull ^ (size_t)dev) & (s->cap - 1);

	while (s->v[i].path && (s->v[i].dev != dev || s->v[i].ino != ino))
		i = (i + 1) & (s->cap - 1);
	return i;
}

/* The path under which the walk read folder st already, or NULL after noting it as path. */
static const char *seen_before(struct seen *s, const struct stat *st, const char *path)
{
	size_t i;

	if (2 * (s->n + 1) > s->cap) {
		struct seen bigger = {NULL, 0, s->cap ? 2 * s->cap : 64};

		bigger.v = calloc(bigger.cap, sizeof(*bigger.v));
		if (!bigger.v)
			npl_oom();
		for (i = 0; i < s->cap; i++)
			if (s->v[i].path)
				bigger.v[seen_slot(&bigger, s->v[i].dev, s->v[i].ino)] = s->v[i];
		bigger.n = s->n;
		free(s->v);
		*s = bigger;
	}
	i = seen_slot(s, st->st_dev, st->st_ino);
	if (s->v[i].path)
		return s->v[i].path;
	s->v[i].dev = st->st_dev;
	s->v[i].ino = st->st_ino;
	s->v[i].path = path;
	s->n++;
	return NULL;
}

static int load_tree(struct npl_db *db, struct seen *seen, const char *dir, int source, struct npl_diag *d)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	struct dentry *ents = NULL;
	size_t n = 0, cap = 0, i, dlen = strlen(dir);
	int rc = 0;
	struct stat st;
	const char *first;

	if (!dp)
		return npl_error(d, NULL, "cannot open recipe folder '%s': %s", dir, strerror(errno));
	if (fstat(dirfd(dp), &st) == 0 && (first = seen_before(seen, &st, dir))) {
		closedir(dp);
		return npl_error(d, NULL, "recipe folder '%s' is '%s' again (a symbolic link?); "
				 "each folder is read once", dir, first);
	}
	while ((de = readdir(dp))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			ents = realloc(ents, cap * sizeof(*ents));
			if (!ents)
				npl_oom();
		}
		{
			/* dir/name, without printf: a folder of thousands of recipes makes thousands */
			size_t nlen = strlen(de->d_name);
			char *p = npl_arena_alloc(db->arena, dlen + nlen + 2);

			memcpy(p, dir, dlen);
			p[dlen] = '/';
			memcpy(p + dlen + 1, de->d_name, nlen + 1);
			ents[n].path = p;
		}
		/* a symbolic link or a file system without d_type: ask stat */
		ents[n].dir = de->d_type == DT_DIR ? 1 : de->d_type == DT_REG ? 0 : npl_is_dir(ents[n].path);
		n++;
	}
	if (n)
		qsort(ents, n, sizeof(*ents), dentcmp);
	for (i = 0; i < n; i++) {
		if (ents[i].dir) {
			if (load_tree(db, seen, ents[i].path, source, d))
				rc = -1;
		} else if (npl_ends_with(ents[i].path, ".yaml") || npl_ends_with(ents[i].path, ".yml")) {
			if (load_file(db, ents[i].path, source, d))
				rc = -1;
		}
	}
	closedir(dp);
	free(ents);
	return rc;
}

int npl_db_load_dir(struct npl_db *db, const char *dir, struct npl_diag *d)
{
	int source = db->nsources > 0 ? db->nsources : 1;
	size_t n = strlen(dir);

	/* "dir/" names files "dir/x.yaml", not "dir//x.yaml" */
	while (n > 1 && dir[n - 1] == '/')
		n--;
	dir = npl_arena_strndup(db->arena, dir, n);

	if (!npl_is_dir(dir))
		return npl_error(d, NULL, "recipe folder '%s' does not exist or is not a folder", dir);
	db->nsources = source + 1;
	{
		struct seen seen = {NULL, 0, 0};
		int rc = load_tree(db, &seen, dir, source, d);

		free(seen.v);
		return rc;
	}
}

static const char *const *layer_ids(struct npl_arena *a, struct npl_layer **v, int n)
{
	const char **ids = npl_arena_calloc(a, (size_t)n + 1, sizeof(*ids));
	int i;

	for (i = 0; i < n; i++)
		ids[i] = v[i]->id;
	return ids;
}

/* Keep the last-loaded layer of each (kind, id): a later folder overrides an
 * earlier one; twice in the same folder is an error. */
/* A layer and its place in load order, to sort by id and keep that order within an id. */
struct ranked {
	struct npl_layer *L;
	int order;
};

static int rankcmp(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	int c = strcmp(x->L->id, y->L->id);

	return c ? c : (x->order > y->order) - (x->order < y->order);
}

/* The layers of one kind in force, sorted by id: a later folder overrides an earlier
 * one; the same id twice in one folder is an error (reported in load order).
 * Sorting first keeps this O(n log n) for databases of thousands of recipes. */
static int select_in_force(struct npl_db *db, enum npl_layer_kind kind, struct npl_layer ***out,
			   int *nout, struct npl_diag *d)
{
	struct npl_layer **v = npl_arena_calloc(db->arena, (size_t)db->nlayers + 1, sizeof(*v));
	struct ranked *r = npl_arena_calloc(db->arena, (size_t)db->nlayers + 1, sizeof(*r));
	struct npl_layer **dup_of = npl_arena_calloc(db->arena, (size_t)db->nlayers + 1, sizeof(*dup_of));
	int i, nr = 0, n = 0, rc = 0;

	for (i = 0; i < db->nlayers; i++)
		if (db->layers[i]->kind == kind && db->layers[i]->id)
			r[nr++] = (struct ranked){db->layers[i], i};
	if (nr)
		qsort(r, (size_t)nr, sizeof(*r), rankcmp);
	for (i = 0; i < nr; i++) {
		if (n && !strcmp(v[n - 1]->id, r[i].L->id)) {
			if (v[n - 1]->source == r[i].L->source)
				dup_of[r[i].order] = v[n - 1];
			else
				v[n - 1] = r[i].L;
		} else {
			v[n++] = r[i].L;
		}
	}
	for (i = 0; i < db->nlayers; i++) {
		const struct npl_layer *L = db->layers[i], *first = dup_of[i];

		if (first)
			rc = npl_error(d, &L->loc, "duplicate %s id '%s' (also defined at %s:%d:%d)",
				       kind_names[kind], L->id, first->loc.file, first->loc.line,
				       first->loc.col);
	}
	*out = v;
	*nout = n;
	return rc;
}

static struct npl_layer *find_id(struct npl_layer **v, int n, const char *id)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i]->id, id))
			return v[i];
	return NULL;
}

/* A role's instances must fit: dies no more than its cards have, whole cards on a node. */
static int check_topo_role(struct npl_layer *R, const struct npl_topology *t, const char *role,
			   struct npl_diag *d)
{
	const struct npl_layer *hw = R->hardware;

	if (!hw || hw->dies_per_card.v <= 0 || hw->cards_per_node.v <= 0)
		return 0;
	if (t->dies.set && t->dies.v > t->cards.v * hw->dies_per_card.v)
		return npl_error(d, &t->dies.loc, "a %s instance of %d card%s has %d dies (%s), not %d",
				 role, t->cards.v, t->cards.v == 1 ? "" : "s",
				 t->cards.v * hw->dies_per_card.v, hw->id, t->dies.v);
	if (t->first_card.set && t->first_card.v + t->cards.v > hw->cards_per_node.v)
		return npl_error(d, &t->first_card.loc, "a %s instance of %d cards from card %d does not fit a node of %d cards (%s)",
				 role, t->cards.v, t->first_card.v, hw->cards_per_node.v, hw->id);
	if (t->per_node.set && t->per_node.v > 1 &&
	    (t->first_card.set ? t->first_card.v : 0) + t->per_node.v * t->cards.v > hw->cards_per_node.v)
		return npl_error(d, &t->per_node.loc, "%d %s instances of %d cards%s do not fit a node of %d cards (%s)",
				 t->per_node.v, role, t->cards.v, t->first_card.set ? " after the first card" : "",
				 hw->cards_per_node.v, hw->id);
	return 0;
}

static int check_topology(struct npl_layer *R, struct npl_diag *d)
{
	struct npl_topology *mx = &R->topo[NPL_TOPO_PD_MIXED];
	int total;

	if (R->mode == NPL_MODE_PD_MIXED) {
		if (R->topo[NPL_TOPO_PREFILL].instances.set || R->topo[NPL_TOPO_DECODE].instances.set)
			return npl_error(d, &R->topo_loc, "a pd-mixed recipe's 'topology' has only 'pd-mixed' (prefill and decode are for pd-disagg recipes)");
		if (!mx->instances.set) {
			*mx = (struct npl_topology){.instances = {1, 1, R->cards_loc}, .cards = {1, R->cards, R->cards_loc}};
			return 0;
		}
		if (mx->instances.v != 1)
			return npl_error(d, &mx->instances.loc, "a pd-mixed recipe runs one server instance, not %d",
					 mx->instances.v);
		if (mx->cards.v != R->cards)
			return npl_error(d, &mx->cards.loc, "the topology uses %d cards but 'cards' is %d",
					 mx->cards.v, R->cards);
		return check_topo_role(R, mx, "pd-mixed", d);
	}
	if (R->mode != NPL_MODE_PD_DISAGG)
		return 0;
	if (mx->instances.set)
		return npl_error(d, &R->topo_loc, "a pd-disagg recipe's 'topology' has 'prefill' and 'decode', not 'pd-mixed'");
	if (!R->topo[0].instances.set && !R->topo[1].instances.set) {
		/* 1P1D with the cards split evenly, as in the seed pages */
		if (R->cards % 2)
			return npl_error(d, &R->cards_loc, "a pd-disagg recipe without 'topology' splits its cards evenly into 1 prefill and 1 decode: %d cards do not split",
					 R->cards);
		R->topo[0].instances = R->topo[1].instances = (struct npl_int){1, 1, R->cards_loc};
		R->topo[0].cards = R->topo[1].cards = (struct npl_int){1, R->cards / 2, R->cards_loc};
		return 0;
	}
	if (!R->topo[0].instances.set || !R->topo[1].instances.set)
		return npl_error(d, &R->topo_loc, "'topology' needs both 'prefill' and 'decode'");
	total = R->topo[0].instances.v * R->topo[0].cards.v + R->topo[1].instances.v * R->topo[1].cards.v;
	if (total != R->cards)
		return npl_error(d, &R->topo_loc, "the topology uses %d cards (%d x %d prefill + %d x %d decode) but 'cards' is %d",
				 total, R->topo[0].instances.v, R->topo[0].cards.v,
				 R->topo[1].instances.v, R->topo[1].cards.v, R->cards);
	if (check_topo_role(R, &R->topo[0], "prefill", d) || check_topo_role(R, &R->topo[1], "decode", d))
		return -1;
	return 0;
}

int npl_db_link(struct npl_db *db, struct npl_diag *d)
{
	struct npl_layer **defs;
	int ndefs, i, rc = 0;

	if (select_in_force(db, NPL_LAYER_DEFAULTS, &defs, &ndefs, d))
		rc = -1;
	db->defaults = ndefs ? defs[0] : NULL;
	if (!db->defaults)
		rc = npl_error(d, NULL, "the recipe database has no defaults document (kind: defaults)");
	if (select_in_force(db, NPL_LAYER_HARDWARE, &db->hardware, &db->nhardware, d) ||
	    select_in_force(db, NPL_LAYER_MODEL, &db->models, &db->nmodels, d) ||
	    select_in_force(db, NPL_LAYER_RECIPE, &db->recipes, &db->nrecipes, d))
		rc = -1;
	if (db->defaults && db->defaults->default_hardware.s &&
	    !find_id(db->hardware, db->nhardware, db->defaults->default_hardware.s))
		rc = npl_error(d, &db->defaults->default_hardware.loc, "unknown hardware profile '%s'",
			       db->defaults->default_hardware.s);
	for (i = 0; i < db->nrecipes; i++) {
		struct npl_layer *R = db->recipes[i];
		const char *best;

		if (R->model_ref.s) {
			R->model = find_id(db->models, db->nmodels, R->model_ref.s);
			if (!R->model) {
				best = npl_did_you_mean(R->model_ref.s,
							layer_ids(db->arena, db->models, db->nmodels),
							db->nmodels);
				rc = best ? npl_error(d, &R->model_ref.loc, "unknown model '%s' (did you mean '%s'?)",
						      R->model_ref.s, best)
					  : npl_error(d, &R->model_ref.loc, "unknown model '%s'", R->model_ref.s);
			}
		}
		if (R->hardware_ref.s) {
			R->hardware = find_id(db->hardware, db->nhardware, R->hardware_ref.s);
			if (!R->hardware) {
				best = npl_did_you_mean(R->hardware_ref.s,
							layer_ids(db->arena, db->hardware, db->nhardware),
							db->nhardware);
				rc = best ? npl_error(d, &R->hardware_ref.loc, "unknown hardware profile '%s' (did you mean '%s'?)",
						      R->hardware_ref.s, best)
					  : npl_error(d, &R->hardware_ref.loc, "unknown hardware profile '%s'",
						      R->hardware_ref.s);
			}
		}
		if (check_topology(R, d))
			rc = -1;
	}
	return rc;
}

int npl_db_open(struct npl_db *db, struct npl_arena *arena, const char *const *dirs, int ndirs,
		struct npl_diag *d)
{
	int i, rc;

	npl_db_init(db, arena);
	rc = npl_db_load_embedded(db, d);
	for (i = 0; i < ndirs; i++)
		if (npl_db_load_dir(db, dirs[i], d))
			rc = -1;
	if (rc)
		return -1;
	return npl_db_link(db, d);
}

const struct npl_layer *npl_db_recipe(const struct npl_db *db, const char *id)
{
	int lo = 0, hi = db->nrecipes - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2, c = strcmp(db->recipes[mid]->id, id);

		if (c == 0)
			return db->recipes[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

const struct npl_layer *npl_db_model(const struct npl_db *db, const char *name)
{
	int i, j;

	for (i = 0; i < db->nmodels; i++) {
		const struct npl_layer *M = db->models[i];

		if (npl_strcaseeq(M->id, name) || npl_strcaseeq(M->name, name))
			return M;
		for (j = 0; j < M->naliases; j++)
			if (npl_strcaseeq(M->aliases[j].s, name))
				return M;
	}
	return NULL;
}

const struct npl_layer *npl_db_default_hardware(const struct npl_db *db)
{
	const char *id = db->defaults ? db->defaults->default_hardware.s : NULL;

	return id ? npl_db_hardware(db, id) : NULL;
}

const struct npl_layer *npl_db_hardware(const struct npl_db *db, const char *name)
{
	int i;

	for (i = 0; i < db->nhardware; i++)
		if (npl_strcaseeq(db->hardware[i]->id, name) || npl_strcaseeq(db->hardware[i]->name, name))
			return db->hardware[i];
	return NULL;
}

char *npl_recipe_id_from_title(struct npl_arena *a, const char *title)
{
	char *id = npl_arena_alloc(a, strlen(title) + 1), *o = id;
	const char *p = title;

	while (*p == ' ' || *p == '\t')
		p++;
	for (; *p; p++) {
		if (*p == ' ' || *p == '\t') {
			while (p[1] == ' ' || p[1] == '\t')
				p++;
			if (p[1])
				*o++ = '-';
		} else {
			*o++ = (*p >= 'A' && *p <= 'Z') ? (char)(*p - 'A' + 'a') : *p;
		}
	}
	*o = '\0';
	return id;
}

long long npl_parse_duration_us(const char *s)
{
	long long whole = 0, frac = 0, scale = 1, mult;
	int digits = 0;
	const char *p = s;
	/* the number is what the strict decimal reader takes (no "5." or ".5"); read exactly here */
	size_t len = npl_decimal_span(s, strlen(s), 0);

	if (!len)
		return -1;
	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		whole = whole * 10 + (*p - '0');
		if (whole > 1000000000LL)
			return -1;
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, digits++) {
			if (scale >= 1000000)
				return -1;
			frac = frac * 10 + (*p - '0');
			scale *= 10;
		}
	}
	if (!digits || p != s + len)
		return -1;
	if (!strcmp(p, "ms"))
		mult = 1000;
	else if (!strcmp(p, "s"))
		mult = 1000000;
	else if (!strcmp(p, "us"))
		mult = 1;
	else
		return -1;
	if (frac * mult % scale)
		return -1;  /* finer than a microsecond */
	return whole * mult + frac * mult / scale;
}

void npl_format_duration(char *out, size_t n, long long us)
{
	if (us >= 1000000 && us % 1000000 == 0)
		snprintf(out, n, "%llds", us / 1000000);
	else if (us % 1000 == 0)
		snprintf(out, n, "%lldms", us / 1000);
	else if (us % 100 == 0)
		snprintf(out, n, "%lld.%lldms", us / 1000, us % 1000 / 100);
	else if (us % 10 == 0)
		snprintf(out, n, "%lld.%02lldms", us / 1000, us % 1000 / 10);
	else
		snprintf(out, n, "%lld.%03lldms", us / 1000, us % 1000);
}
