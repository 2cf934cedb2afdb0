/* template.c: mustache-like templates over cJSON; see template.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/arena.h"
#include "npulaunch/template.h"

#define MAX_DEPTH 32

enum tok {
	T_TEXT,
	T_VAR,
	T_RAW,
	T_SECTION,
	T_INVERTED,
	T_PARTIAL,
};

struct node {
	enum tok kind;
	const char *text;          /* T_TEXT: the text; else the tag's name */
	size_t len;
	int line, col;
	struct node *kids;         /* sections: the body */
	int nkids, capkids;
};

struct frame {
	const cJSON *v;
	int index, count;          /* array iteration, count 0 when not iterating */
};

struct npl_tmpl_cache {
	struct npl_arena a;        /* the parses and the names of partials */
	struct parsed {
		const char *text;
		struct node root;
	} *v;
	int n, cap;
};

struct render {
	const char *file;
	const struct npl_tmpl_env *env;
	struct npl_buf *out;
	struct npl_diag *d;
	struct npl_tmpl_cache *cache;
	struct frame stack[MAX_DEPTH * 4];
	int depth;
	int partials;
};

/* Move a position (*at, *line, *col) forward to p: tags are found in order, so a
 * template's positions cost one pass over its text, not one per tag. */
static void pos_of(const char **at, const char *p, int *line, int *col)
{
	const char *q;

	for (q = *at; q < p; q++) {
		if (*q == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
	*at = p;
}

static struct node *add(struct npl_arena *a, struct node *parent, enum tok kind)
{
	struct node *n;

	if (parent->nkids == parent->capkids) {
		int cap = parent->capkids ? parent->capkids * 2 : 8;

		parent->kids = npl_arena_grow(a, parent->kids, (size_t)parent->nkids, (size_t)cap,
					      sizeof(*parent->kids));
		parent->capkids = cap;
	}
	n = &parent->kids[parent->nkids++];
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	return n;
}

static void trim_name(const char **s, size_t *n)
{
	while (*n && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*n)--;
	}
	while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
		(*n)--;
}

/* A tag: its sigil, its name (trimmed), where the text after it starts and where the text
 * before it ends (a block tag alone on its line takes the whole line). */
struct tag {
	char sigil;
	const char *name, *after, *text_end;
	size_t nlen;
};

/* Read the tag that opens at open, in the template text; -1 when it is never closed. */
static int read_tag(const char *text, const char *open, struct tag *t)
{
	const char *close, *ls, *q;
	char sigil = open[2];

	if (sigil == '{') {
		close = strstr(open + 3, "}}}");
		t->after = close ? close + 3 : NULL;
	} else {
		close = strstr(open + 2, "}}");
		t->after = close ? close + 2 : NULL;
	}
	if (!close)
		return -1;
	t->sigil = sigil;
	t->name = open + 2;
	if (strchr("#^/!>{&", sigil) && sigil)
		t->name++;
	t->nlen = (size_t)(close - t->name);
	trim_name(&t->name, &t->nlen);
	t->text_end = open;
	/* a block tag alone on its line takes the whole line */
	for (ls = open; ls > text && (ls[-1] == ' ' || ls[-1] == '\t'); ls--)
		;
	if (strchr("#^/!>", sigil) && sigil && (ls == text || ls[-1] == '\n')) {
		for (q = t->after; *q == ' ' || *q == '\t' || *q == '\r'; q++)
			;
		if (*q == '\n' || *q == '\0') {
			t->text_end = ls;
			t->after = *q ? q + 1 : q;
		}
	}
	return 0;
}

/* Parse text into root; sections nest through an explicit stack. */
static int parse(struct npl_arena *a, const char *file, const char *text, struct node *root,
		 struct npl_diag *d)
{
	struct node *stack[MAX_DEPTH];
	int depth = 0, line = 1, col = 1;
	const char *p = text, *at = text;

	stack[0] = root;
	for (;;) {
		const char *open = strstr(p, "{{"), *name;
		struct tag tg;
		char sigil;
		size_t nlen;
		struct npl_loc loc;

		if (!open) {
			if (*p) {
				struct node *t = add(a, stack[depth], T_TEXT);

				t->text = p;
				t->len = strlen(p);
			}
			break;
		}
		pos_of(&at, open, &line, &col);
		loc = (struct npl_loc){file, line, col};
		if (read_tag(text, open, &tg))
			return npl_error(d, &loc, "unclosed tag '{{'");
		sigil = tg.sigil;
		name = tg.name;
		nlen = tg.nlen;
		if (tg.text_end > p) {
			struct node *t = add(a, stack[depth], T_TEXT);

			t->text = p;
			t->len = (size_t)(tg.text_end - p);
		}
		p = tg.after;
		if (sigil == '!')
			continue;
		if (nlen == 0)
			return npl_error(d, &loc, "empty tag");
		if (sigil == '/') {
			struct node *s = stack[depth];

			if (depth == 0)
				return npl_error(d, &loc, "'{{/%.*s}}' closes nothing", (int)nlen, name);
			if (s->len != nlen || strncmp(s->text, name, nlen))
				return npl_error(d, &loc, "'{{/%.*s}}' closes '{{%c%.*s}}' (line %d)", (int)nlen,
						 name, s->kind == T_INVERTED ? '^' : '#', (int)s->len, s->text,
						 s->line);
			depth--;
			continue;
		}
		{
			enum tok k = sigil == '#' ? T_SECTION : sigil == '^' ? T_INVERTED
				   : sigil == '>' ? T_PARTIAL : (sigil == '{' || sigil == '&') ? T_RAW : T_VAR;
			struct node *n = add(a, stack[depth], k);

			n->text = name;
			n->len = nlen;
			n->line = line;
			n->col = col;
			if (k == T_SECTION || k == T_INVERTED) {
				if (depth + 1 >= MAX_DEPTH)
					return npl_error(d, &loc, "sections nested too deep");
				stack[++depth] = n;
			}
		}
	}
	if (depth > 0) {
		struct npl_loc loc = {file, stack[depth]->line, stack[depth]->col};

		return npl_error(d, &loc, "'{{#%.*s}}' is never closed", (int)stack[depth]->len,
				 stack[depth]->text);
	}
	return 0;
}

/* The innermost iteration frame, for @index/@first/@last. */
static const struct frame *iteration(const struct render *r)
{
	int i;

	for (i = r->depth - 1; i >= 0; i--)
		if (r->stack[i].count)
			return &r->stack[i];
	return NULL;
}

static cJSON *special(struct render *r, const char *name, size_t n, cJSON **tmp)
{
	const struct frame *f = iteration(r);

	if (!f)
		return NULL;
	if (n == 6 && !strncmp(name, "@index", 6))
		*tmp = cJSON_CreateNumber(f->index);
	else if (n == 6 && !strncmp(name, "@first", 6))
		*tmp = cJSON_CreateBool(f->index == 0);
	else if (n == 5 && !strncmp(name, "@last", 5))
		*tmp = cJSON_CreateBool(f->index == f->count - 1);
	return *tmp;
}

/* Resolve a dotted name against the context stack. *tmp receives a value the caller frees. */
static const cJSON *lookup(struct render *r, const char *name, size_t n, cJSON **tmp)
{
	const cJSON *v = NULL;
	const char *dot;
	size_t first;
	char key[128];
	int i;

	*tmp = NULL;
	if (n == 1 && name[0] == '.')
		return r->depth ? r->stack[r->depth - 1].v : NULL;
	if (name[0] == '@')
		return special(r, name, n, tmp);
	dot = memchr(name, '.', n);
	first = dot ? (size_t)(dot - name) : n;
	if (first >= sizeof(key))
		return NULL;
	memcpy(key, name, first);
	key[first] = '\0';
	for (i = r->depth - 1; i >= 0 && !v; i--)
		if (cJSON_IsObject(r->stack[i].v))
			v = cJSON_GetObjectItemCaseSensitive(r->stack[i].v, key);
	while (v && dot) {
		const char *rest = dot + 1, *end = name + n;

		dot = memchr(rest, '.', (size_t)(end - rest));
		first = (size_t)((dot ? dot : end) - rest);
		if (first >= sizeof(key))
			return NULL;
		memcpy(key, rest, first);
		key[first] = '\0';
		v = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, key) : NULL;
	}
	return v;
}

static int truthy(const cJSON *v)
{
	if (!v || cJSON_IsNull(v) || cJSON_IsFalse(v))
		return 0;
	if (cJSON_IsArray(v))
		return cJSON_GetArraySize(v) > 0;
	if (cJSON_IsString(v))
		return v->valuestring[0] != '\0';
	if (cJSON_IsNumber(v))
		return v->valuedouble != 0;
	return 1;
}

static int render_nodes(struct render *r, const struct node *kids, int n);
static int parsed(struct npl_tmpl_cache *c, const char *file, const char *text, struct node *root,
		  struct npl_diag *d);

static int push(struct render *r, const cJSON *v, int index, int count, const struct node *at)
{
	if (r->depth == (int)(sizeof(r->stack) / sizeof(r->stack[0]))) {
		struct npl_loc loc = {r->file, at->line, at->col};

		return npl_error(r->d, &loc, "template nested too deep");
	}
	r->stack[r->depth++] = (struct frame){v, index, count};
	return 0;
}

static int value_text(struct render *r, const struct node *n, struct npl_buf *b)
{
	cJSON *tmp;
	const cJSON *v = lookup(r, n->text, n->len, &tmp);
	struct npl_loc loc = {r->file, n->line, n->col};
	int rc = 0;

	if (cJSON_IsString(v)) {
		npl_buf_puts(b, v->valuestring);
	} else if (cJSON_IsNumber(v)) {
		double x = v->valuedouble;

		if (x == floor(x) && fabs(x) < 1e15)
			npl_buf_printf(b, "%lld", (long long)x);
		else
			npl_buf_printf(b, "%g", x);
	} else if (cJSON_IsBool(v)) {
		npl_buf_puts(b, cJSON_IsTrue(v) ? "true" : "false");
	} else {
		rc = npl_error(r->d, &loc, "'%.*s' names %s", (int)n->len, n->text,
			       v ? "something that is not a value" : "nothing in the view");
	}
	cJSON_Delete(tmp);
	return rc;
}

static int render_node(struct render *r, const struct node *n)
{
	struct npl_loc loc = {r->file, n->line, n->col};
	cJSON *tmp;
	const cJSON *v, *it;
	int rc = 0, i, count;

	switch (n->kind) {
	case T_TEXT:
		npl_buf_add(r->out, n->text, n->len);
		return 0;
	case T_VAR:
	case T_RAW: {
		struct npl_buf b = NPL_BUF_INIT;

		rc = value_text(r, n, &b);
		if (rc == 0) {
			if (n->kind == T_VAR && r->env->escape)
				r->env->escape(r->env->ctx, r->out, npl_buf_str(&b));
			else
				npl_buf_add(r->out, b.data ? b.data : "", b.len);
		}
		npl_buf_release(&b);
		return rc;
	}
	case T_PARTIAL: {
		char name[128];
		const char *file = NULL, *text;
		struct node root;
		const char *saved = r->file;

		if (n->len >= sizeof(name))
			return npl_error(r->d, &loc, "partial name too long");
		memcpy(name, n->text, n->len);
		name[n->len] = '\0';
		text = r->env->partial ? r->env->partial(r->env->ctx, name, &file) : NULL;
		if (!text)
			return npl_error(r->d, &loc, "unknown partial '%s'", name);
		/* messages keep the file name: it must outlive this frame */
		if (!file)
			file = npl_arena_strdup(&r->cache->a, name);
		npl_diag_source(r->d, file, text);
		if (++r->partials > 64)
			return npl_error(r->d, &loc, "partials include each other too deep");
		if (parsed(r->cache, file, text, &root, r->d))
			return -1;
		r->file = file;
		rc = render_nodes(r, root.kids, root.nkids);
		r->file = saved;
		r->partials--;
		return rc;
	}
	case T_SECTION:
	case T_INVERTED:
		v = lookup(r, n->text, n->len, &tmp);
		if (n->kind == T_INVERTED) {
			if (!truthy(v))
				rc = render_nodes(r, n->kids, n->nkids);
		} else if (cJSON_IsArray(v)) {
			count = cJSON_GetArraySize(v);
			i = 0;
			cJSON_ArrayForEach(it, v) {
				if (push(r, it, i, count, n)) {
					rc = -1;
					break;
				}
				rc = render_nodes(r, n->kids, n->nkids);
				r->depth--;
				if (rc)
					break;
				i++;
			}
		} else if (truthy(v)) {
			if (push(r, v, 0, 0, n) == 0) {
				rc = render_nodes(r, n->kids, n->nkids);
				r->depth--;
			} else {
				rc = -1;
			}
		}
		cJSON_Delete(tmp);
		return rc;
	}
	(void)loc;
	return 0;
}

static int render_nodes(struct render *r, const struct node *kids, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (render_node(r, &kids[i]))
			return -1;
	return 0;
}

/* text parsed into *root: kept in c, parsed the first time */
static int parsed(struct npl_tmpl_cache *c, const char *file, const char *text, struct node *root,
		  struct npl_diag *d)
{
	int i;

	for (i = 0; i < c->n; i++)
		if (c->v[i].text == text) {
			*root = c->v[i].root;
			return 0;
		}
	memset(root, 0, sizeof(*root));
	if (parse(&c->a, file, text, root, d))
		return -1;
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		c->v = npl_arena_grow(&c->a, c->v, (size_t)c->n, (size_t)c->cap, sizeof(*c->v));
	}
	c->v[c->n++] = (struct parsed){text, *root};
	return 0;
}

struct npl_tmpl_cache *npl_tmpl_cache_new(void)
{
	struct npl_tmpl_cache *c = npl_xcalloc(1, sizeof(*c));

	npl_arena_init(&c->a);
	return c;
}

void npl_tmpl_cache_free(struct npl_tmpl_cache *c)
{
	if (!c)
		return;
	npl_arena_release(&c->a);
	free(c);
}

int npl_tmpl_render(const char *file, const char *text, const cJSON *view,
		    const struct npl_tmpl_env *env, struct npl_buf *out, struct npl_diag *d)
{
	static const struct npl_tmpl_env none = {NULL, NULL, NULL, NULL};
	struct npl_tmpl_cache *own = NULL;
	struct node root;
	struct render *r = npl_xcalloc(1, sizeof(*r));
	int rc;

	if (!env)
		env = &none;
	r->cache = env->cache;
	if (!r->cache)
		r->cache = own = npl_tmpl_cache_new();   /* a partial inside a loop is parsed once */
	if (!file)
		file = "<template>";
	npl_diag_source(d, file, text);
	rc = parsed(r->cache, file, text, &root, d);
	if (rc == 0) {
		r->file = file;
		r->env = env;
		r->out = out;
		r->d = d;
		r->stack[0] = (struct frame){view, 0, 0};
		r->depth = 1;
		rc = render_nodes(r, root.kids, root.nkids);
	}
	npl_tmpl_cache_free(own);
	free(r);
	return rc;
}
