/* schema.c: documents against a JSON Schema held as data, the subset npulaunch's schemas use;
 * see schema.h. */
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/arena.h"
#include "npulaunch/buf.h"
#include "npulaunch/embedded.h"
#include "npulaunch/schema.h"
#include "npulaunch/strmap.h"
#include "npulaunch/text.h"

#define MAX_DEPTH 256   /* schemas within schemas ($ref included) */
#define NPATTERNS 32    /* distinct patterns compiled in one run */
#define SHOWN 60        /* bytes of a value or a key quoted in a message */

struct pattern {
	const char *src;
	regex_t re;
};

struct vctx {
	const struct npl_schema_doc *docs;
	int ndocs;
	struct npl_buf path;            /* where the value being checked is */
	char *err_path, *err_msg;       /* the problem kept (malloc), NULL while none */
	long steps;                     /* schemas checked: how far a oneOf branch got */
	int depth;
	struct pattern pat[NPATTERNS];
	int npat;
};

/* One schema and the document it is in (for its #/ references). */
struct sch {
	const cJSON *root, *s;
};

static int check(struct vctx *c, struct sch s, const cJSON *v);
static int known(const char *k, const char *const *list);

static const char *const keywords[] = {
	"$schema", "$id", "$defs", "$ref", "title", "description", "type", "const", "enum", "required",
	"properties", "patternProperties", "additionalProperties", "dependentRequired", "items",
	"minItems", "maxItems", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
	"minLength", "maxLength", "pattern", "oneOf", NULL,
};

static const char *const types[] = {"null", "boolean", "integer", "number", "string", "array", "object", NULL};

static int is_integer(const cJSON *v)
{
	return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble == floor(v->valuedouble);
}

static int type_is(const cJSON *v, const char *t)
{
	if (!strcmp(t, "null"))
		return cJSON_IsNull(v);
	if (!strcmp(t, "boolean"))
		return cJSON_IsBool(v);
	if (!strcmp(t, "integer"))
		return is_integer(v);
	if (!strcmp(t, "number"))
		return cJSON_IsNumber(v);
	if (!strcmp(t, "string"))
		return cJSON_IsString(v);
	if (!strcmp(t, "array"))
		return cJSON_IsArray(v);
	return !strcmp(t, "object") && cJSON_IsObject(v);
}

static const char *a_type(const char *t)
{
	if (!strcmp(t, "null"))
		return "";
	return !strcmp(t, "integer") || !strcmp(t, "object") || !strcmp(t, "array") ? "an " : "a ";
}

/* What v is, for "..., not V": its type, with the value itself when it is short. */
static void describe(struct npl_buf *b, const cJSON *v)
{
	if (cJSON_IsNull(v))
		npl_buf_puts(b, "null");
	else if (cJSON_IsBool(v))
		npl_buf_puts(b, cJSON_IsTrue(v) ? "true" : "false");
	else if (cJSON_IsNumber(v))
		npl_buf_printf(b, "%s %.15g", is_integer(v) ? "the integer" : "the number", v->valuedouble);
	else if (cJSON_IsString(v)) {
		npl_buf_puts(b, "\"");
		npl_escape(b, v->valuestring, strlen(v->valuestring), SHOWN);
		npl_buf_puts(b, "\"");
	} else
		npl_buf_puts(b, cJSON_IsArray(v) ? "an array" : "an object");
}

static int fail(struct vctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct vctx *c, const char *fmt, ...)
{
	struct npl_buf b = NPL_BUF_INIT;
	va_list ap;

	if (c->err_msg)
		return 0;
	va_start(ap, fmt);
	npl_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	c->err_msg = npl_buf_detach(&b);
	c->err_path = npl_xstrdup(c->path.len ? npl_buf_str(&c->path) : ".");
	return 0;
}

static int fail_value(struct vctx *c, const char *want, const cJSON *v)
{
	struct npl_buf b = NPL_BUF_INIT;

	describe(&b, v);
	fail(c, "%s is expected, not %s", want, npl_buf_str(&b));
	npl_buf_release(&b);
	return 0;
}

static void push_key(struct vctx *c, const char *k)
{
	const char *p;
	int plain = (*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') || *k == '_';

	for (p = k; *p && plain; p++)
		plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
			*p == '_' || *p == '-';
	if (plain) {
		npl_buf_printf(&c->path, ".%s", k);
		return;
	}
	npl_buf_puts(&c->path, "[\"");
	npl_escape(&c->path, k, strlen(k), SHOWN);
	npl_buf_puts(&c->path, "\"]");
}

static void pop(struct vctx *c, size_t len)
{
	c->path.len = len;
	if (c->path.data)
		c->path.data[len] = 0;
}

/* The schema a $ref names: "#/$defs/x" in this document, "FILE#/$defs/x" or "FILE" in another. */
static int resolve_ref(const struct npl_schema_doc *docs, int ndocs, struct sch *s, const char *ref)
{
	const char *hash = strchr(ref, '#'), *p;
	const cJSON *at = s->root;
	size_t nl = hash ? (size_t)(hash - ref) : strlen(ref);
	int i;

	if (nl) {
		for (i = 0; i < ndocs; i++)
			if (strlen(docs[i].name) == nl && !strncmp(docs[i].name, ref, nl))
				break;
		if (i == ndocs)
			return -1;
		at = s->root = docs[i].schema;
	}
	for (p = hash ? hash + 1 : ""; *p == '/'; ) {
		const char *end = strchr(p + 1, '/');
		size_t tl = end ? (size_t)(end - p - 1) : strlen(p + 1);
		const cJSON *it;

		at = cJSON_IsObject(at) ? at->child : NULL;
		for (it = at; it; it = it->next)
			if (strlen(it->string) == tl && !strncmp(it->string, p + 1, tl))
				break;
		if (!(at = it) || memchr(p + 1, '~', tl))
			return -1;
		p += tl + 1;
	}
	if ((hash && hash[1] && hash[1] != '/') || !cJSON_IsObject(at))
		return -1;
	s->s = at;
	return 0;
}

static regex_t *compiled(struct vctx *c, const char *src)
{
	int i;

	for (i = 0; i < c->npat; i++)
		if (c->pat[i].src == src)
			return &c->pat[i].re;
	if (c->npat == NPATTERNS || regcomp(&c->pat[c->npat].re, src, REG_EXTENDED | REG_NEWLINE))
		return NULL;
	c->pat[c->npat].src = src;
	return &c->pat[c->npat++].re;
}

/* ECMA-262's search: ^ and $ at the ends of the string only, '.' matching no newline. */
static int pattern_match(regex_t *re, const char *pat, const char *s)
{
	size_t len = strlen(s), off = 0, pl = strlen(pat);
	int bol = pat[0] == '^', eol = pl && pat[pl - 1] == '$' && (pl < 2 || pat[pl - 2] != '\\');

	for (;;) {
		regmatch_t m;
		size_t so, eo;

		if (regexec(re, s + off, 1, &m, off ? REG_NOTBOL : 0))
			return 0;
		so = off + (size_t)m.rm_so;
		eo = off + (size_t)m.rm_eo;
		if (bol && so != 0)
			return 0;
		if (!eol || eo == len)
			return 1;
		if (bol || so + 1 > len)
			return 0;
		off = so + 1;
	}
}

static int check_string(struct vctx *c, const cJSON *s, const cJSON *v)
{
	const cJSON *k;
	size_t n = strlen(v->valuestring), chars = 0, i;

	if (npl_utf8_invalid(v->valuestring, n) != n)
		return fail(c, "a string is expected in UTF-8, not bytes that are not UTF-8");
	for (i = 0; i < n; i++)
		chars += ((unsigned char)v->valuestring[i] & 0xc0) != 0x80;
	if ((k = cJSON_GetObjectItemCaseSensitive(s, "minLength")) && (double)chars < k->valuedouble)
		return fail(c, "a string of at least %.0f characters is expected, not %zu", k->valuedouble, chars);
	if ((k = cJSON_GetObjectItemCaseSensitive(s, "maxLength")) && (double)chars > k->valuedouble)
		return fail(c, "a string of at most %.0f characters is expected, not %zu", k->valuedouble, chars);
	if ((k = cJSON_GetObjectItemCaseSensitive(s, "pattern"))) {
		regex_t *re = compiled(c, k->valuestring);

		if (!re)
			return fail(c, "the schema's pattern %s does not compile", k->valuestring);
		if (!pattern_match(re, k->valuestring, v->valuestring)) {
			struct npl_buf want = NPL_BUF_INIT;

			npl_buf_printf(&want, "a string matching %s", k->valuestring);
			fail_value(c, npl_buf_str(&want), v);
			npl_buf_release(&want);
			return 0;
		}
	}
	return 1;
}

static int check_number(struct vctx *c, const cJSON *s, const cJSON *v)
{
	static const struct {
		const char *key, *cmp;
		int ok_below, ok_equal;
	} bounds[] = {
		{"minimum", ">=", 0, 1}, {"exclusiveMinimum", ">", 0, 0},
		{"maximum", "<=", 1, 1}, {"exclusiveMaximum", "<", 1, 0},
	};
	size_t i;

	for (i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++) {
		const cJSON *k = cJSON_GetObjectItemCaseSensitive(s, bounds[i].key);
		double x = v->valuedouble;
		int ok;

		if (!k)
			continue;
		ok = x == k->valuedouble ? bounds[i].ok_equal : (x < k->valuedouble) == bounds[i].ok_below;
		if (!ok) {
			char want[64];

			snprintf(want, sizeof(want), "a number %s %.15g", bounds[i].cmp, k->valuedouble);
			return fail_value(c, want, v);
		}
	}
	return 1;
}

static int check_array(struct vctx *c, const cJSON *root, const cJSON *s, const cJSON *v)
{
	const cJSON *k, *it;
	int n = cJSON_GetArraySize(v), i = 0;
	size_t len = c->path.len;

	if ((k = cJSON_GetObjectItemCaseSensitive(s, "minItems")) && n < k->valuedouble)
		return fail(c, "at least %.0f items are expected, not %d", k->valuedouble, n);
	if ((k = cJSON_GetObjectItemCaseSensitive(s, "maxItems")) && n > k->valuedouble)
		return fail(c, "at most %.0f items are expected, not %d", k->valuedouble, n);
	if (!(k = cJSON_GetObjectItemCaseSensitive(s, "items")))
		return 1;
	cJSON_ArrayForEach(it, v) {
		int ok;

		npl_buf_printf(&c->path, "[%d]", i++);
		ok = check(c, (struct sch){root, k}, it);
		pop(c, len);
		if (!ok)
			return 0;
	}
	return 1;
}

/* A key of the object: its properties' schema, the patterns' it matches, else the additional. */
static int check_member(struct vctx *c, const cJSON *root, const cJSON *s, const cJSON *m)
{
	const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties"), *k, *pp;
	const cJSON *add = cJSON_GetObjectItemCaseSensitive(s, "additionalProperties");
	int seen = 0;

	if (npl_utf8_invalid(m->string, strlen(m->string)) != strlen(m->string))
		return fail(c, "a field name is expected in UTF-8, not bytes that are not UTF-8");
	if ((k = cJSON_GetObjectItemCaseSensitive(props, m->string))) {
		seen = 1;
		if (!check(c, (struct sch){root, k}, m))
			return 0;
	}
	cJSON_ArrayForEach(pp, cJSON_GetObjectItemCaseSensitive(s, "patternProperties")) {
		regex_t *re = compiled(c, pp->string);

		if (!re)
			return fail(c, "the schema's pattern %s does not compile", pp->string);
		if (pattern_match(re, pp->string, m->string)) {
			seen = 1;
			if (!check(c, (struct sch){root, pp}, m))
				return 0;
		}
	}
	if (seen || !add)
		return 1;
	if (cJSON_IsFalse(add))
		return fail(c, "no such field here (a field of a newer npulaunch, or an edit?)");
	return check(c, (struct sch){root, add}, m);
}

static int check_object(struct vctx *c, const cJSON *root, const cJSON *s, const cJSON *v)
{
	const cJSON *m, *k, *dep;
	size_t len = c->path.len;

	cJSON_ArrayForEach(m, v) {
		int ok;

		push_key(c, m->string);
		ok = check_member(c, root, s, m);
		pop(c, len);
		if (!ok)
			return 0;
	}
	cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(s, "required"))
		if (!cJSON_HasObjectItem(v, k->valuestring)) {
			push_key(c, k->valuestring);
			fail(c, "missing: the field is required");
			pop(c, len);
			return 0;
		}
	cJSON_ArrayForEach(dep, cJSON_GetObjectItemCaseSensitive(s, "dependentRequired")) {
		if (!cJSON_HasObjectItem(v, dep->string))
			continue;
		cJSON_ArrayForEach(k, dep)
			if (!cJSON_HasObjectItem(v, k->valuestring)) {
				push_key(c, dep->string);
				fail(c, "needs the field \"%s\" beside it", k->valuestring);
				pop(c, len);
				return 0;
			}
	}
	return 1;
}

/* Add "a TYPE" to the list names ("a string or null") unless it is there. */
static void add_name(struct npl_buf *names, const char *t)
{
	struct npl_buf all = NPL_BUF_INIT;
	char one[48];
	int there;

	snprintf(one, sizeof(one), " or %s%s or ", a_type(t), t);
	npl_buf_printf(&all, " or %s or ", npl_buf_str(names));
	there = strstr(npl_buf_str(&all), one) != NULL;
	npl_buf_release(&all);
	if (!there)
		npl_buf_printf(names, "%s%s%s", names->len ? " or " : "", a_type(t), t);
}

/* Whether v has a type that the schema s (a $ref followed) allows at all. */
static int type_allowed(struct vctx *c, struct sch s, const cJSON *v, struct npl_buf *names)
{
	const cJSON *t, *e;
	int ok = 0;

	if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(s.s, "$ref")) &&
	    resolve_ref(c->docs, c->ndocs, &s, cJSON_GetObjectItemCaseSensitive(s.s, "$ref")->valuestring))
		return 1;
	if ((t = cJSON_GetObjectItemCaseSensitive(s.s, "type"))) {
		const cJSON *one = cJSON_IsString(t) ? t : NULL;

		cJSON_ArrayForEach(e, (cJSON_IsArray(t) ? t : NULL)) {
			ok |= type_is(v, e->valuestring);
			add_name(names, e->valuestring);
		}
		if (one) {
			ok |= type_is(v, one->valuestring);
			add_name(names, one->valuestring);
		}
		return ok;
	}
	if ((e = cJSON_GetObjectItemCaseSensitive(s.s, "const"))) {
		npl_buf_printf(names, "%s%s", names->len ? " or " : "", "a constant");
		return (e->type & 0xff) == (v->type & 0xff) || (cJSON_IsBool(e) && cJSON_IsBool(v));
	}
	return 1;
}

static int check_one_of(struct vctx *c, struct sch s, const cJSON *list, const cJSON *v)
{
	const cJSON *br;
	char *best_path = NULL, *best_msg = NULL;
	long best_steps = -1;
	int pass = 0, typed = 0;
	struct npl_buf names = NPL_BUF_INIT;

	cJSON_ArrayForEach(br, list) {
		long before = c->steps;

		if (check(c, (struct sch){s.root, br}, v))
			pass++;
		else if (type_allowed(c, (struct sch){s.root, br}, v, &names)) {
			typed = 1;
			if (c->steps - before > best_steps) {
				free(best_path);
				free(best_msg);
				best_path = c->err_path;
				best_msg = c->err_msg;
				best_steps = c->steps - before;
				c->err_path = c->err_msg = NULL;
			}
		}
		free(c->err_path);
		free(c->err_msg);
		c->err_path = c->err_msg = NULL;
	}
	if (pass == 0 && typed) {
		/* the problem of the form that got furthest */
		c->err_path = best_path;
		c->err_msg = best_msg;
		best_path = best_msg = NULL;
	} else if (pass > 1) {
		fail(c, "more than one of the forms the schema allows fits");
	} else if (pass == 0) {
		fail_value(c, names.len ? npl_buf_str(&names) : "another value", v);
	}
	free(best_path);
	free(best_msg);
	npl_buf_release(&names);
	return pass == 1;
}

static int check_type(struct vctx *c, const cJSON *t, const cJSON *v)
{
	struct npl_buf names = NPL_BUF_INIT;
	const cJSON *e;
	int ok = 0;

	if (cJSON_IsString(t))
		ok = type_is(v, t->valuestring);
	cJSON_ArrayForEach(e, (cJSON_IsArray(t) ? t : NULL))
		ok |= type_is(v, e->valuestring);
	if (ok)
		return 1;
	if (cJSON_IsString(t))
		npl_buf_printf(&names, "%s%s", a_type(t->valuestring), t->valuestring);
	cJSON_ArrayForEach(e, (cJSON_IsArray(t) ? t : NULL))
		npl_buf_printf(&names, "%s%s%s", names.len ? " or " : "", a_type(e->valuestring), e->valuestring);
	fail_value(c, npl_buf_str(&names), v);
	npl_buf_release(&names);
	return 0;
}

static int check_enum(struct vctx *c, const cJSON *e, const cJSON *v)
{
	struct npl_buf want = NPL_BUF_INIT;
	const cJSON *it;
	int ok;

	cJSON_ArrayForEach(it, e) {
		if (cJSON_Compare(it, v, 1)) {
			npl_buf_release(&want);
			return 1;
		}
		if (want.len)
			npl_buf_puts(&want, it->next ? ", " : " or ");
		describe(&want, it);
	}
	ok = fail_value(c, npl_buf_str(&want), v);
	npl_buf_release(&want);
	return ok;
}

static int check(struct vctx *c, struct sch s, const cJSON *v)
{
	const cJSON *k;
	int ok = 1;

	c->steps++;
	if (++c->depth > MAX_DEPTH) {
		c->depth--;
		return fail(c, "the schema nests deeper than %d", MAX_DEPTH);
	}
	/* a keyword this validator does not know is never taken as holding */
	cJSON_ArrayForEach(k, s.s)
		if (!known(k->string, keywords))
			ok = fail(c, "the schema's keyword %s is not one the validator knows", k->string);
	if (ok && (k = cJSON_GetObjectItemCaseSensitive(s.s, "$ref"))) {
		struct sch r = s;

		if (!cJSON_IsString(k) || resolve_ref(c->docs, c->ndocs, &r, k->valuestring))
			ok = fail(c, "the schema's reference %s names nothing", cJSON_IsString(k) ? k->valuestring : "?");
		else
			ok = check(c, r, v);
	}
	if (ok && (k = cJSON_GetObjectItemCaseSensitive(s.s, "type")))
		ok = check_type(c, k, v);
	if (ok && (k = cJSON_GetObjectItemCaseSensitive(s.s, "const")) && !cJSON_Compare(k, v, 1)) {
		struct npl_buf want = NPL_BUF_INIT;

		describe(&want, k);
		ok = fail_value(c, npl_buf_str(&want), v);
		npl_buf_release(&want);
	}
	if (ok && (k = cJSON_GetObjectItemCaseSensitive(s.s, "enum")))
		ok = check_enum(c, k, v);
	if (ok && cJSON_IsString(v))
		ok = check_string(c, s.s, v);
	if (ok && cJSON_IsNumber(v))
		ok = check_number(c, s.s, v);
	if (ok && cJSON_IsArray(v))
		ok = check_array(c, s.root, s.s, v);
	if (ok && cJSON_IsObject(v))
		ok = check_object(c, s.root, s.s, v);
	if (ok && (k = cJSON_GetObjectItemCaseSensitive(s.s, "oneOf")))
		ok = check_one_of(c, s, k, v);
	c->depth--;
	return ok;
}

/* 1 when no object within v has a key twice (JSON readers disagree on which one counts: cJSON
 * takes the first, Python's json the last); else 0 with the path of the second. */
static int no_duplicates(struct vctx *c, const cJSON *v, struct npl_arena *a)
{
	const cJSON *it;
	size_t len = c->path.len;
	int i = 0, ok = 1;

	if (cJSON_IsObject(v)) {
		struct npl_strmap seen = NPL_STRMAP_INIT;

		cJSON_ArrayForEach(it, v) {
			push_key(c, it->string);
			if (npl_strmap_add(&seen, a, it->string, strlen(it->string), 0) >= 0)
				ok = fail(c, "the key is given twice (which one counts depends on the reader)");
			else
				ok = no_duplicates(c, it, a);
			pop(c, len);
			if (!ok)
				return 0;
		}
	} else if (cJSON_IsArray(v)) {
		cJSON_ArrayForEach(it, v) {
			npl_buf_printf(&c->path, "[%d]", i++);
			ok = no_duplicates(c, it, a);
			pop(c, len);
			if (!ok)
				return 0;
		}
	}
	return 1;
}

int npl_schema_validate(const struct npl_schema_doc *docs, int ndocs, const cJSON *doc, const char *file,
			struct npl_diag *d)
{
	struct vctx c;
	struct npl_arena a;
	int ok, i;

	memset(&c, 0, sizeof(c));
	c.docs = docs;
	c.ndocs = ndocs;
	npl_arena_init(&a);
	ok = no_duplicates(&c, doc, &a);
	npl_arena_release(&a);
	if (ok)
		ok = check(&c, (struct sch){docs[0].schema, docs[0].schema}, doc);
	if (!ok)
		npl_error(d, &(struct npl_loc){file, 0, 0}, "%s: %s", c.err_path ? c.err_path : ".",
			  c.err_msg ? c.err_msg : "not what the schema allows");
	free(c.err_path);
	free(c.err_msg);
	npl_buf_release(&c.path);
	for (i = 0; i < c.npat; i++)
		regfree(&c.pat[i].re);
	return ok ? 0 : -1;
}

/* ---- the schema itself ------------------------------------------------- */

static int known(const char *k, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(k, *list))
			return 1;
	return 0;
}

static int check_schema(const struct npl_schema_doc *docs, int ndocs, struct sch s, const char *name,
			struct npl_diag *d, int depth);

static int check_children(const struct npl_schema_doc *docs, int ndocs, struct sch s, const cJSON *k,
			  const char *name, struct npl_diag *d, int depth)
{
	const cJSON *it;
	int bad = 0;

	if (!strcmp(k->string, "properties") || !strcmp(k->string, "patternProperties") ||
	    !strcmp(k->string, "$defs") || !strcmp(k->string, "oneOf")) {
		cJSON_ArrayForEach(it, k) {
			regex_t re;

			if (!strcmp(k->string, "patternProperties")) {
				if (regcomp(&re, it->string, REG_EXTENDED | REG_NEWLINE))
					bad |= npl_error(d, NULL, "%s: the pattern %s does not compile", name, it->string);
				else
					regfree(&re);
			}
			bad |= check_schema(docs, ndocs, (struct sch){s.root, it}, name, d, depth + 1);
		}
	} else if ((!strcmp(k->string, "additionalProperties") && cJSON_IsObject(k)) || !strcmp(k->string, "items")) {
		bad |= check_schema(docs, ndocs, (struct sch){s.root, k}, name, d, depth + 1);
	}
	return bad;
}

static int check_schema(const struct npl_schema_doc *docs, int ndocs, struct sch s, const char *name,
			struct npl_diag *d, int depth)
{
	const cJSON *k, *t;
	int bad = 0;

	if (!cJSON_IsObject(s.s) || depth > MAX_DEPTH)
		return npl_error(d, NULL, "%s: a schema is expected to be an object", name);
	cJSON_ArrayForEach(k, s.s) {
		if (!known(k->string, keywords)) {
			bad |= npl_error(d, NULL, "%s: the keyword %s is not one the validator knows", name, k->string);
			continue;
		}
		if (!strcmp(k->string, "$ref")) {
			struct sch r = s;

			if (!cJSON_IsString(k) || resolve_ref(docs, ndocs, &r, k->valuestring))
				bad |= npl_error(d, NULL, "%s: the reference %s names nothing", name,
						 cJSON_IsString(k) ? k->valuestring : "?");
		} else if (!strcmp(k->string, "pattern")) {
			regex_t re;

			if (!cJSON_IsString(k) || regcomp(&re, k->valuestring, REG_EXTENDED | REG_NEWLINE))
				bad |= npl_error(d, NULL, "%s: a pattern does not compile", name);
			else
				regfree(&re);
		} else if (!strcmp(k->string, "type")) {
			if (cJSON_IsString(k) && !known(k->valuestring, types))
				bad |= npl_error(d, NULL, "%s: no type %s", name, k->valuestring);
			cJSON_ArrayForEach(t, (cJSON_IsArray(k) ? k : NULL))
				if (!cJSON_IsString(t) || !known(t->valuestring, types))
					bad |= npl_error(d, NULL, "%s: a type that is not one", name);
		}
		bad |= check_children(docs, ndocs, s, k, name, d, depth);
	}
	return bad ? -1 : 0;
}

int npl_schema_check(const struct npl_schema_doc *docs, int ndocs, struct npl_diag *d)
{
	int i, bad = 0;

	for (i = 0; i < ndocs; i++)
		bad |= check_schema(docs, ndocs, (struct sch){docs[i].schema, docs[i].schema}, docs[i].name, d, 0);
	return bad ? -1 : 0;
}

/* ---- the manifest ------------------------------------------------------ */

int npl_manifest_validate(const cJSON *manifest, const char *file, struct npl_diag *d)
{
	struct npl_schema_doc docs[4] = {{NULL, NULL}};
	const struct npl_embedded *e;
	int n = 0, rc, i;

	/* the manifest's schema first, then what it refers to */
	for (e = npl_embedded_schemas; e->name && n < 4; e++) {
		const char *base = strrchr(e->name, '/') ? strrchr(e->name, '/') + 1 : e->name;
		cJSON *s = cJSON_Parse(e->data);

		if (!s)
			npl_oom();
		docs[n] = (struct npl_schema_doc){base, s};
		if (!strcmp(base, "manifest.schema.json") && n) {
			struct npl_schema_doc t = docs[0];

			docs[0] = docs[n];
			docs[n] = t;
		}
		n++;
	}
	if (!n || strcmp(docs[0].name, "manifest.schema.json"))
		rc = npl_error(d, NULL, "npulaunch was built without the manifest's schema");
	else
		rc = npl_schema_validate(docs, n, manifest, file, d);
	for (i = 0; i < n; i++)
		cJSON_Delete((cJSON *)docs[i].schema);
	return rc;
}
