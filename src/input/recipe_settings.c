/* recipe_settings.c: the keys of the launch settings any kind of layer may carry: env, unset,
 * source, flags and explicit of each scope, roles, router, bench, speculative, tuning, ports and
 * launch. */
#include <string.h>

#include "npulaunch/recipe.h"
#include "npulaunch/site.h"
#include "npulaunch/text.h"
#include "recipe_internal.h"

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
			return npl_recipe_fail(c, v, "the value of '%s' is text or {site: KEY}",
					       name->str);
		v = v->kids[1];
		if (v->kind != NPL_YSCALAR || npl_ynull(v))
			return npl_recipe_fail(c, v, "'site' names a site value (model-path, draft-model-path, ifname)");
		k = npl_site_key_from_name(v->str);
		if (k < 0 || npl_site_is_list(k) || npl_site_is_cluster(k))
			return npl_recipe_fail(c, v, "'%s' is not a site value an environment variable can hold (model-path, draft-model-path, ifname)",
					       v->str);
		e->site_key = k;
		e->value = v->str;
		return 0;
	}
	if (v->kind != NPL_YSCALAR || npl_ynull(v))
		return npl_recipe_fail(c, v, "the value of '%s' must be text or {site: KEY}",
				       name->str);
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

			rc = best ? npl_recipe_fail(c, k, "unknown key '%s' in the value of '%s' (did you mean '%s'?)",
						    k->str, name->str, best)
				  : npl_recipe_fail(c, k, "unknown key '%s' in the value of '%s' (value, prepend, append, sep, when)",
						    k->str, name->str);
			continue;
		}
		if (j <= 2) {
			if (have++) {
				rc = npl_recipe_fail(c, k, "the value of '%s' takes one of value, prepend and append", name->str);
				continue;
			}
			e->op = j == 0 ? NPL_ENV_SET : j == 1 ? NPL_ENV_PREPEND : NPL_ENV_APPEND;
			if (env_text(c, name, x, e))
				rc = -1;
		} else if (j == 3) {
			if (x->kind != NPL_YSCALAR || npl_ynull(x) || !*x->str || strpbrk(x->str, "\n\r"))
				rc = npl_recipe_fail(c, x, "'sep' is the text between the value and the inherited one, like ':'");
			else
				e->sep = x->str;
		} else {
			if (x->kind != NPL_YSCALAR || (strcmp(x->str, "before-source") && strcmp(x->str, "after-source")))
				rc = npl_recipe_fail(c, x,
						     "'when' is before-source or after-source");
			else
				e->before_source = !strcmp(x->str, "before-source");
		}
	}
	if (!have && !rc)
		rc = npl_recipe_fail(c, v, "the value of '%s' needs one of value, prepend and append", name->str);
	if (e->sep && e->op == NPL_ENV_SET && !rc)
		rc = npl_recipe_fail(c, v, "'sep' goes with prepend or append");
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
			return npl_recipe_fail(c, v, "'%s' is a list, or {replace: [...]} to replace what earlier layers set",
					       key);
		*replace = 1;
		return npl_recipe_read_strlist(c, v->kids[1], key, ok, what, out, n);
	}
	return npl_recipe_read_strlist(c, v, key, ok, what, out, n);
}

static int f_env(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_scope_set *s = arg;
	int i, rc = 0;

	if (npl_recipe_want_map(c, v, k->str))
		return -1;
	s->env = npl_arena_calloc(c->a, (size_t)v->n, sizeof(*s->env));
	for (i = 0; i < v->n; i++) {
		const struct npl_ynode *name = v->kids[2 * i], *val = v->kids[2 * i + 1];
		struct npl_env_set *e;

		if (!npl_recipe_is_env_name(name->str)) {
			rc = npl_recipe_fail(c, name, "'%s' is not an environment variable name",
					     name->str);
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
			rc = npl_recipe_fail(c, val, "the value of '%s' must be a single value, a mapping ({prepend: ...}, {append: ...}, {value: ...}) or null (removes it)",
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

	return read_replaceable(c, v, k->str, npl_recipe_is_env_name, "an environment variable name", &s->unset,
				&s->nunset, &s->unset_replace);
}

/* An env file's path: absolute, without a '..' part (apply joins it to --root, and it must stay
 * there; apply checks the same). */
static int is_source_path(const char *s)
{
	return npl_recipe_is_abs_path(s) && !npl_path_climbs(s);
}

static int f_source(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_scope_set *s = arg;

	return read_replaceable(c, v, k->str, is_source_path, "an absolute path without '..' parts", &s->source,
				&s->nsource, &s->source_replace);
}

static int f_flags(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_scope_set *s = arg;
	int i, j, rc = 0;

	if (npl_recipe_want_map(c, v, k->str))
		return -1;
	s->flags = npl_arena_calloc(c->a, (size_t)v->n, sizeof(*s->flags));
	for (i = 0; i < v->n; i++) {
		const struct npl_ynode *name = v->kids[2 * i], *val = v->kids[2 * i + 1];
		struct npl_flag_set *f;
		int b;

		if (npl_starts_with(name->str, "-")) {
			rc = npl_recipe_fail(c, name,
					     "write flag names without the leading dashes: '%s'",
					     name->str + strspn(name->str, "-"));
			continue;
		}
		if (!npl_recipe_is_flag_name(name->str)) {
			rc = npl_recipe_fail(c, name, "'%s' is not a flag name (lowercase letters, digits, '-')",
					     name->str);
			continue;
		}
		f = &s->flags[s->nflags];
		f->name = name->str;
		f->loc = name->loc;
		f->site_key = -1;
		if (val->kind == NPL_YMAP) {
			/* {site: KEY}: a site value, as an environment variable takes one */
			const struct npl_ynode *sv = val->n == 1 && !strcmp(val->kids[0]->str, "site") ? val->kids[1] : NULL;
			int sk = sv && sv->kind == NPL_YSCALAR && !npl_ynull(sv) ? npl_site_key_from_name(sv->str) : -1;

			if (sk < 0 || npl_site_is_list(sk) || npl_site_is_cluster(sk)) {
				rc = npl_recipe_fail(c, val, "flag '%s' takes true, false/null, a value, a non-empty list of values "
						     "or {site: KEY} (model-path, draft-model-path, ifname)", name->str);
				continue;
			}
			f->kind = NPL_FLAG_VALUES;
			f->values = npl_arena_alloc(c->a, sizeof(*f->values));
			f->values[0] = sv->str;
			f->nvalues = 1;
			f->site_key = sk;
			s->nflags++;
			continue;
		}
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
					rc = npl_recipe_fail(c, val->kids[j], "each value of flag '%s' must be a single value",
							     name->str);
					break;
				}
				f->values[j] = val->kids[j]->str;
			}
			if (j < val->n)
				continue;
			f->nvalues = val->n;
		} else {
			rc = npl_recipe_fail(c, val, "flag '%s' takes true, false/null, a value or a non-empty list of values",
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

	return npl_recipe_read_strlist(c, v, k->str, is_explicit_flag,
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

/* env, unset, source, flags and explicit at the top level: the server scope's. */
int npl_recipe_f_scope_top(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
			   void *arg)
{
	size_t i;

	(void)arg;
	for (i = 0; i < NPL_ARRAY_SIZE(scope_fields); i++)
		if (!strcmp(scope_fields[i].key, k->str))
			return scope_fields[i].fn(c, k, v, &c->L->scope[NPL_SCOPE_SERVER]);
	return 0;
}

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

int npl_recipe_f_roles(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
		       void *arg)
{
	static const char *const names[] = {"pd-mixed", "prefill", "decode", "disagg"};
	static const enum npl_scope scopes[] = {NPL_SCOPE_PD_MIXED, NPL_SCOPE_PREFILL,
						NPL_SCOPE_DECODE, NPL_SCOPE_DISAGG};
	int i, j, rc = 0;

	(void)arg;
	if (npl_recipe_want_map(c, v, k->str))
		return -1;
	for (i = 0; i < v->n; i++) {
		const struct npl_ynode *name = v->kids[2 * i], *val = v->kids[2 * i + 1];

		for (j = 0; j < 4; j++)
			if (!strcmp(names[j], name->str))
				break;
		if (j == 4) {
			const char *best = npl_did_you_mean(name->str, names, 4);

			rc = best ? npl_recipe_fail(c, name, "unknown role '%s' (did you mean '%s'?)", name->str, best)
				  : npl_recipe_fail(c, name, "unknown role '%s' (roles: pd-mixed, prefill, decode, disagg)",
						    name->str);
			continue;
		}
		if (npl_recipe_want_map(c, val, name->str)) {
			rc = -1;
			continue;
		}
		char *where = npl_arena_printf(c->a, "role '%s'", name->str);

		if (npl_recipe_walk(c, val, role_fields, NPL_ARRAY_SIZE(role_fields), where,
				    &c->L->scope[scopes[j]]))
			rc = -1;
	}
	return rc;
}

int npl_recipe_f_router(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
			void *arg)
{
	(void)arg;
	if (npl_recipe_want_map(c, v, k->str))
		return -1;
	return npl_recipe_walk(c, v, router_fields, NPL_ARRAY_SIZE(router_fields), "'router'",
			       &c->L->scope[NPL_SCOPE_ROUTER]);
}

/* ---- bench ------------------------------------------------------------ */

static int is_dataset_kind(const char *s)
{
	return !strcmp(s, "random") || !strcmp(s, "generated-shared-prefix") || !strcmp(s, "image");
}

static int f_bench_key(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_bench_spec *b = c->bench ? c->bench : &c->L->bench;
	const char *key = k->str;

	(void)arg;
	if (npl_keyis(key, "dataset")) {
		if (npl_recipe_read_str(c, v, key, &b->dataset))
			return -1;
		if (!is_dataset_kind(v->str))
			return npl_recipe_fail(c, v, "unknown benchmark dataset '%s' (random, generated-shared-prefix, image)",
					       v->str);
		return 0;
	}
	if (npl_keyis(key, "resolution")) {
		static const struct npl_number_spec px = {"a number of pixels", 1, 100000, 1};
		const char *x = strchr(v->str, 'x');
		double w, h;

		if (npl_recipe_read_str(c, v, key, &b->resolution))
			return -1;
		if (!x || npl_parse_number_n(v->str, (size_t)(x - v->str), &px, &w) || npl_parse_number(x + 1, &px, &h))
			return npl_recipe_fail(c, v,
					       "'resolution' must be WIDTHxHEIGHT, like 1920x1080");
		return 0;
	}
	if (npl_keyis(key, "prefix"))
		return npl_recipe_read_int(c, v, key, 1, 99, &b->prefix);
	if (npl_keyis(key, "input"))
		return npl_recipe_read_int(c, v, key, 1, 100000000, &b->input);
	if (npl_keyis(key, "output"))
		return npl_recipe_read_int(c, v, key, 1, 100000000, &b->output);
	if (npl_keyis(key, "groups"))
		return npl_recipe_read_int(c, v, key, 1, 1000000, &b->groups);
	if (npl_keyis(key, "images"))
		return npl_recipe_read_int(c, v, key, 1, 1000, &b->images);
	if (npl_keyis(key, "concurrency"))
		return npl_recipe_read_int(c, v, key, 1, 10000000, &b->concurrency);
	if (npl_keyis(key, "prompts"))
		return npl_recipe_read_int(c, v, key, 1, 100000000, &b->prompts);
	if (npl_keyis(key, "system_prompt_len"))
		return npl_recipe_read_int(c, v, key, 0, 100000000, &b->system_prompt_len);
	if (npl_keyis(key, "question_len"))
		return npl_recipe_read_int(c, v, key, 0, 100000000, &b->question_len);
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

int npl_recipe_f_bench(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
		       void *arg)
{
	(void)arg;
	if (npl_recipe_want_map(c, v, k->str))
		return -1;
	return npl_recipe_walk(c, v, bench_fields, NPL_ARRAY_SIZE(bench_fields), "'bench'",
			       &c->L->scope[NPL_SCOPE_BENCH]);
}

/* A benchmark's name: lower-case letters, digits and '-', as a script's name takes it
 * (bench-NAME.sh is not written: the name labels the run in bench.sh, bench and verify). */
static int bench_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n && n <= 32 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == n && s[0] != '-';
}

static int f_item_name(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_bench_item *it = arg;
	struct npl_str s;

	if (npl_recipe_read_str(c, v, k->str, &s))
		return -1;
	if (!bench_name_ok(s.s))
		return npl_recipe_fail(c, v, "a benchmark's name is lower-case letters, digits and '-' (ttft, tpot), not '%s'",
				       s.s);
	it->name = s.s;
	return 0;
}

static int f_item_flags(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	return f_flags(c, k, v, &((struct npl_bench_item *)arg)->scope);
}

static const struct field item_fields[] = {
	{"name", K_RECIPE, f_item_name},
	{"flags", K_RECIPE, f_item_flags},
	{"dataset", K_RECIPE, f_bench_key},
	{"input", K_RECIPE, f_bench_key},
	{"output", K_RECIPE, f_bench_key},
	{"prefix", K_RECIPE, f_bench_key},
	{"groups", K_RECIPE, f_bench_key},
	{"resolution", K_RECIPE, f_bench_key},
	{"images", K_RECIPE, f_bench_key},
	{"concurrency", K_RECIPE, f_bench_key},
	{"prompts", K_RECIPE, f_bench_key},
	{"system_prompt_len", K_RECIPE, f_bench_key},
	{"question_len", K_RECIPE, f_bench_key},
};

/* benchmarks: a list of two or more, each a name and what it changes of bench. */
int npl_recipe_f_benchmarks(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
			    void *arg)
{
	struct npl_layer *L = c->L;
	int i, j, rc = 0;

	(void)arg;
	if (v->kind != NPL_YSEQ || v->n < 2)
		return npl_recipe_fail(c, v, "'%s' is a list of two or more benchmarks, each with a name (one benchmark is 'bench' alone)",
				       k->str);
	L->benchmarks = npl_arena_calloc(c->a, (size_t)v->n, sizeof(*L->benchmarks));
	for (i = 0; i < v->n; i++) {
		struct npl_bench_item *it = &L->benchmarks[i];
		const struct npl_ynode *m = v->kids[i];

		it->loc = m->loc;
		if (npl_recipe_want_map(c, m, "a benchmark")) {
			rc = -1;
			continue;
		}
		c->bench = &it->spec;
		rc |= npl_recipe_walk(c, m, item_fields, NPL_ARRAY_SIZE(item_fields), "a benchmark", it);
		c->bench = NULL;
		if (!it->name) {
			rc = npl_recipe_fail(c, m, "a benchmark needs a 'name' (ttft, tpot)");
			continue;
		}
		for (j = 0; j < i; j++)
			if (L->benchmarks[j].name && !strcmp(L->benchmarks[j].name, it->name))
				rc = npl_recipe_fail(c, m, "benchmark '%s' is named twice", it->name);
	}
	L->nbenchmarks = v->n;
	return rc ? -1 : 0;
}

/* ---- speculative, tuning, ports, launch ------------------------------ */

static const char *const spec_field_names[] = {"algorithm", "steps", "topk", "draft_tokens",
					       "draft_model", "draft_quantization"};

static int f_spec_key(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_spec *s = arg;
	const char *key = k->str;

	if (npl_keyis(key, "emit")) {
		int i, j, rc = 0;

		if (v->kind != NPL_YSEQ || v->n == 0)
			return npl_recipe_fail(c, v, "'emit' is a non-empty list of the block's fields (algorithm, steps, topk, draft_tokens, draft_model, draft_quantization)");
		for (i = 0; i < v->n; i++) {
			const struct npl_ynode *it = v->kids[i];

			for (j = 0; j < 6; j++)
				if (it->kind == NPL_YSCALAR && !strcmp(it->str, spec_field_names[j]))
					break;
			if (j == 6)
				rc = npl_recipe_fail(c, it, "'%s' is not a field of the speculative block (algorithm, steps, topk, draft_tokens, draft_model, draft_quantization)",
						     it->kind == NPL_YSCALAR ? it->str : "?");
			else
				s->emit |= 1u << j;
		}
		s->emit_loc = k->loc;
		return rc;
	}
	if (npl_keyis(key, "algorithm"))
		return npl_recipe_read_str(c, v, key, &s->algorithm);
	if (npl_keyis(key, "steps"))
		return npl_recipe_read_int(c, v, key, 1, 64, &s->steps);
	if (npl_keyis(key, "topk"))
		return npl_recipe_read_int(c, v, key, 1, 64, &s->topk);
	if (npl_keyis(key, "draft_tokens"))
		return npl_recipe_read_int(c, v, key, 1, 256, &s->draft_tokens);
	if (npl_keyis(key, "draft_model"))
		return npl_recipe_read_bool(c, v, key, &s->draft_model);
	if (npl_keyis(key, "draft_quantization")) {
		if (npl_ynull(v)) {
			s->draft_quantization_removed = 1;
			return 0;
		}
		return npl_recipe_read_str(c, v, key, &s->draft_quantization);
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
	if (npl_recipe_want_map(c, v, k->str))
		return -1;
	return npl_recipe_walk(c, v, spec_fields, NPL_ARRAY_SIZE(spec_fields), where, s);
}

/* roles.X.speculative: the role's own block, merged over the top-level one. */
static int f_role_spec(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_scope_set *sc = arg;

	sc->spec = npl_arena_calloc(c->a, 1, sizeof(*sc->spec));
	return read_spec(c, k, v, sc->spec, "a role's 'speculative'");
}

int npl_recipe_f_speculative(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
			     void *arg)
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
	if (npl_keyis(k->str, "cpu_governor")) {
		if (npl_ynull(v)) {
			L->governor_removed = 1;
			return 0;
		}
		if (npl_recipe_read_str(c, v, k->str, &L->governor))
			return -1;
		if (!npl_recipe_is_flag_name(v->str))
			return npl_recipe_fail(c, v, "'%s' is not a cpufreq governor name", v->str);
		return 0;
	}
	/* sysctl */
	if (npl_recipe_want_map(c, v, k->str))
		return -1;
	L->sysctl = npl_arena_calloc(c->a, (size_t)v->n, sizeof(*L->sysctl));
	for (i = 0; i < v->n; i++) {
		const struct npl_ynode *name = v->kids[2 * i], *val = v->kids[2 * i + 1];
		struct npl_env_set *e;

		if (!is_sysctl_name(name->str)) {
			rc = npl_recipe_fail(c, name, "'%s' is not a sysctl name (like vm.swappiness)", name->str);
			continue;
		}
		if (val->kind != NPL_YSCALAR) {
			rc = npl_recipe_fail(c, val, "the value of sysctl '%s' must be a single value", name->str);
			continue;
		}
		if (!npl_ynull(val) && (!*val->str || strpbrk(val->str, "\n\r"))) {
			rc = npl_recipe_fail(c, val, "the value of sysctl '%s' must be one line",
					     name->str);
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
	if (npl_recipe_read_bool(c, v, k->str, &b))
		return -1;
	c->L->tuning_replace = b.v;
	return 0;
}

/* tuning.affinity (issue 26): how the node's CPUs are shared among its dies. Each key is
 * optional; a later layer replaces the keys it writes. */
static int f_affinity_key(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	static const char *const policies[] = {"numa-local", "even-slice", "none"};
	struct npl_affinity_spec *af = arg;
	const char *best;
	size_t i;

	if (npl_keyis(k->str, "min_cpus_per_die"))
		return npl_recipe_read_int(c, v, k->str, 1, 4096, &af->min_cpus);
	if (npl_keyis(k->str, "irqs"))
		return npl_recipe_read_bool(c, v, k->str, &af->irqs);
	/* policy */
	if (npl_recipe_read_str(c, v, k->str, &af->policy))
		return -1;
	for (i = 0; i < NPL_ARRAY_SIZE(policies); i++)
		if (!strcmp(v->str, policies[i])) {
			af->policy.s = policies[i];
			return 0;
		}
	af->policy.s = NULL;
	best = npl_did_you_mean(v->str, policies, (int)NPL_ARRAY_SIZE(policies));
	return npl_recipe_fail(c, v, "unknown affinity policy '%s'%s%s%s (numa-local, even-slice or none)", v->str,
			       best ? " (did you mean '" : "", best ? best : "", best ? "'?)" : "");
}

static const struct field affinity_fields[] = {
	{"policy", K_ALL, f_affinity_key},
	{"min_cpus_per_die", K_ALL, f_affinity_key},
	{"irqs", K_ALL, f_affinity_key},
};

static int f_tuning_affinity(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
			     void *arg)
{
	struct npl_affinity_spec *af = &c->L->affinity;

	(void)arg;
	if (npl_ynull(v)) {
		/* affinity: null: drop what earlier layers set */
		af->removed = 1;
		return 0;
	}
	if (npl_recipe_want_map(c, v, k->str))
		return -1;
	return npl_recipe_walk(c, v, affinity_fields, NPL_ARRAY_SIZE(affinity_fields),
			       "'tuning.affinity'", af);
}

static const struct field tuning_fields[] = {
	{"cpu_governor", K_ALL, f_tuning_key},
	{"sysctl", K_ALL, f_tuning_key},
	{"affinity", K_ALL, f_tuning_affinity},
	{"replace", K_ALL, f_tuning_replace},
};

int npl_recipe_f_tuning(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
			void *arg)
{
	(void)arg;
	if (npl_ynull(v)) {
		/* tuning: null: this recipe tunes nothing */
		c->L->tuning_replace = 1;
		c->L->governor_removed = 1;
		return 0;
	}
	if (npl_recipe_want_map(c, v, k->str))
		return -1;
	return npl_recipe_walk(c, v, tuning_fields, NPL_ARRAY_SIZE(tuning_fields), "'tuning'",
			       NULL);
}

static int f_port_key(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_ports *p = &c->L->ports;
	const char *key = k->str;
	struct npl_int *out = npl_keyis(key, "entry") ? &p->entry
			    : npl_keyis(key, "prefill") ? &p->prefill
			    : npl_keyis(key, "decode") ? &p->decode
			    : npl_keyis(key, "bootstrap") ? &p->bootstrap
			    : npl_keyis(key, "dist_init") ? &p->dist_init : &p->mf_store;

	(void)arg;
	return npl_recipe_read_int(c, v, key, 1, 65535, out);
}

static const struct field port_fields[] = {
	{"entry", K_ALL, f_port_key},
	{"prefill", K_ALL, f_port_key},
	{"decode", K_ALL, f_port_key},
	{"bootstrap", K_ALL, f_port_key},
	{"dist_init", K_ALL, f_port_key},
	{"mf_store", K_ALL, f_port_key},
};

int npl_recipe_f_ports(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
		       void *arg)
{
	(void)arg;
	if (npl_recipe_want_map(c, v, k->str))
		return -1;
	return npl_recipe_walk(c, v, port_fields, NPL_ARRAY_SIZE(port_fields), "'ports'", NULL);
}

static int f_launch_key(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_launch *l = &c->L->launch;
	int i = npl_keyis(k->str, "server") ? NPL_PROG_SERVER
	      : npl_keyis(k->str, "router") ? NPL_PROG_ROUTER : NPL_PROG_BENCH;

	(void)arg;
	if (npl_recipe_read_strlist(c, v, k->str, NULL, NULL, &l->argv[i], &l->n[i]))
		return -1;
	if (l->n[i] == 0)
		return npl_recipe_fail(c, v, "'%s' needs the program and its arguments", k->str);
	l->loc[i] = k->loc;
	return 0;
}

static const struct field launch_fields[] = {
	{"server", K_ALL, f_launch_key},
	{"router", K_ALL, f_launch_key},
	{"bench", K_ALL, f_launch_key},
};

int npl_recipe_f_launch(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
			void *arg)
{
	(void)arg;
	if (npl_recipe_want_map(c, v, k->str))
		return -1;
	return npl_recipe_walk(c, v, launch_fields, NPL_ARRAY_SIZE(launch_fields), "'launch'",
			       NULL);
}
