/* recipe_read.c: the strict readers under every key of a recipe document: single values, whole
 * numbers, true/false, lists, names, and the walk of a mapping against its table of keys (an
 * unknown key is an error with a did-you-mean). */
#include <stdarg.h>
#include <string.h>

#include "npulaunch/recipe.h"
#include "npulaunch/text.h"
#include "recipe_internal.h"

/* ---- errors --------------------------------------------------------- */

int npl_recipe_fail(struct ctx *c, const struct npl_ynode *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	npl_diag_vadd(c->d, NPL_ERROR, n ? &n->loc : NULL, fmt, ap);
	va_end(ap);
	c->rc = -1;
	return -1;
}

/* ---- value readers ---------------------------------------------------- */

int npl_recipe_want_scalar(struct ctx *c, const struct npl_ynode *v, const char *key)
{
	if (v->kind != NPL_YSCALAR)
		return npl_recipe_fail(c, v, "'%s' must be a single value, not %s", key,
				       npl_ykind_name(v));
	return 0;
}

int npl_recipe_want_map(struct ctx *c, const struct npl_ynode *v, const char *key)
{
	if (v->kind != NPL_YMAP)
		return npl_recipe_fail(c, v, "'%s' must be a mapping (key: value lines), not %s",
				       key, npl_ykind_name(v));
	return 0;
}

int npl_recipe_read_str(struct ctx *c, const struct npl_ynode *v, const char *key,
			struct npl_str *out)
{
	if (npl_recipe_want_scalar(c, v, key))
		return -1;
	if (npl_ynull(v))
		return npl_recipe_fail(c, v, "'%s' needs a value", key);
	out->s = v->str;
	out->loc = v->loc;
	return 0;
}

int npl_recipe_read_int(struct ctx *c, const struct npl_ynode *v, const char *key, int min, int max,
			struct npl_int *out)
{
	int n;

	if (npl_recipe_want_scalar(c, v, key))
		return -1;
	n = v->plain ? npl_parse_uint(v->str) : -1;
	if (n < 0)
		return npl_recipe_fail(c, v, "'%s' must be a whole number, not '%s'", key, v->str);
	if (n < min || n > max)
		return npl_recipe_fail(c, v, "'%s' must be between %d and %d, not %d", key, min,
				       max, n);
	out->set = 1;
	out->v = n;
	out->loc = v->loc;
	return 0;
}

int npl_recipe_read_bool(struct ctx *c, const struct npl_ynode *v, const char *key,
			 struct npl_int *out)
{
	int b;

	if (!npl_ybool(v, &b))
		return npl_recipe_fail(c, v, "'%s' must be true or false", key);
	out->set = 1;
	out->v = b;
	out->loc = v->loc;
	return 0;
}

/* The bytes of names, by class: every recipe's flags and variables are checked at each start. */
enum { C_LOW = 1, C_UP = 2, C_DIGIT = 4, C_UNDER = 8, C_DASH = 16 };
static const unsigned char name_class[256] = {
	['-'] = C_DASH, ['_'] = C_UNDER,
	['0'] = C_DIGIT, ['1'] = C_DIGIT, ['2'] = C_DIGIT, ['3'] = C_DIGIT, ['4'] = C_DIGIT,
	['5'] = C_DIGIT, ['6'] = C_DIGIT, ['7'] = C_DIGIT, ['8'] = C_DIGIT, ['9'] = C_DIGIT,
	['A'] = C_UP, ['B'] = C_UP, ['C'] = C_UP, ['D'] = C_UP, ['E'] = C_UP, ['F'] = C_UP,
	['G'] = C_UP, ['H'] = C_UP, ['I'] = C_UP, ['J'] = C_UP, ['K'] = C_UP, ['L'] = C_UP,
	['M'] = C_UP, ['N'] = C_UP, ['O'] = C_UP, ['P'] = C_UP, ['Q'] = C_UP, ['R'] = C_UP,
	['S'] = C_UP, ['T'] = C_UP, ['U'] = C_UP, ['V'] = C_UP, ['W'] = C_UP, ['X'] = C_UP,
	['Y'] = C_UP, ['Z'] = C_UP,
	['a'] = C_LOW, ['b'] = C_LOW, ['c'] = C_LOW, ['d'] = C_LOW, ['e'] = C_LOW, ['f'] = C_LOW,
	['g'] = C_LOW, ['h'] = C_LOW, ['i'] = C_LOW, ['j'] = C_LOW, ['k'] = C_LOW, ['l'] = C_LOW,
	['m'] = C_LOW, ['n'] = C_LOW, ['o'] = C_LOW, ['p'] = C_LOW, ['q'] = C_LOW, ['r'] = C_LOW,
	['s'] = C_LOW, ['t'] = C_LOW, ['u'] = C_LOW, ['v'] = C_LOW, ['w'] = C_LOW, ['x'] = C_LOW,
	['y'] = C_LOW, ['z'] = C_LOW,
};

/* 1 when s is one byte of first, then only bytes of rest. */
static int is_name(const char *s, unsigned first, unsigned rest)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!(name_class[*p] & first))
		return 0;
	for (p++; *p; p++)
		if (!(name_class[*p] & rest))
			return 0;
	return 1;
}

int npl_recipe_is_env_name(const char *s)
{
	return is_name(s, C_UP | C_LOW | C_UNDER, C_UP | C_LOW | C_DIGIT | C_UNDER);
}

int npl_recipe_is_flag_name(const char *s)
{
	return is_name(s, C_LOW | C_DIGIT, C_LOW | C_DIGIT | C_DASH | C_UNDER);
}

int npl_recipe_is_id(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')))
		return 0;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || strchr("._-", *s)))
			return 0;
	return 1;
}

/* A list of strings, each checked by ok() (may be NULL); what names the kind of item. */
int npl_recipe_read_strlist(struct ctx *c, const struct npl_ynode *v, const char *key,
			    int (*ok)(const char *), const char *what, struct npl_str **out, int *n)
{
	int i, rc = 0;

	if (v->kind != NPL_YSEQ)
		return npl_recipe_fail(c, v, "'%s' must be a list ([a, b] or '- a' lines), not %s",
				       key, npl_ykind_name(v));
	*out = npl_arena_calloc(c->a, (size_t)v->n, sizeof(**out));
	*n = 0;
	for (i = 0; i < v->n; i++) {
		const struct npl_ynode *it = v->kids[i];

		if (it->kind != NPL_YSCALAR || npl_ynull(it)) {
			rc = npl_recipe_fail(c, it, "each item of '%s' must be a single value",
					     key);
			continue;
		}
		if (ok && !ok(it->str)) {
			rc = npl_recipe_fail(c, it, "'%s' is not %s", it->str, what);
			continue;
		}
		(*out)[*n].s = it->str;
		(*out)[(*n)++].loc = it->loc;
	}
	return rc;
}

int npl_recipe_is_abs_path(const char *s)
{
	return s[0] == '/' && !strchr(s, '\n');
}

/* ---- mapping walker --------------------------------------------------- */

static int unknown_key(struct ctx *c, const struct npl_ynode *k, const struct field *tab, int ntab,
		       const char *where)
{
	const char *cands[64] = {NULL}; /* zeroed, or gcc 12 warns it may be read unset */
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
			return npl_recipe_fail(c, k, "key '%s' does not belong in %s (it is a key of %s)",
					       k->str, npl_recipe_kind_articles[c->L->kind],
					       npl_recipe_kind_articles[j]);
		}
	}
	if (best)
		return npl_recipe_fail(c, k, "unknown key '%s' in %s (did you mean '%s'?)", k->str, where, best);
	return npl_recipe_fail(c, k, "unknown key '%s' in %s", k->str, where);
}

int npl_recipe_walk(struct ctx *c, const struct npl_ynode *map, const struct field *tab, int ntab,
		    const char *where, void *arg)
{
	int i, j, n, rc = 0, next = 0;

	for (i = 0; i < map->n; i++) {
		const struct npl_ynode *k = map->kids[2 * i], *v = map->kids[2 * i + 1];

		/* keys mostly come in the table's order: start after the last match; the first
		 * byte rules out most entries without a call (every document starts this way) */
		for (n = 0, j = next; n < ntab; n++, j = j + 1 == ntab ? 0 : j + 1)
			if (tab[j].key[0] == k->str[0] && !strcmp(tab[j].key, k->str) &&
			    (tab[j].kinds & (1u << c->L->kind)))
				break;
		if (n == ntab) {
			rc = unknown_key(c, k, tab, ntab, where);
			continue;
		}
		next = j + 1 == ntab ? 0 : j + 1;
		if (tab[j].fn && tab[j].fn(c, k, v, arg))
			rc = -1;
	}
	return rc;
}
