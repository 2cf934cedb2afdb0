/* pagesh.c: the pages' subset of bash, run in the head for one node; see pagesh.h. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/buf.h"
#include "npulaunch/pagesh.h"

#define MAX_WORDS 512
#define MAX_DEPTH 8

enum kind { K_SIMPLE, K_ARRAY, K_FOR, K_DO, K_DONE, K_IF, K_THEN, K_FI, K_BREAK };

/* A logical line (continuations joined, comment dropped) and its words. */
struct line {
	enum kind kind;
	struct npl_loc loc;
	const char **w;       /* the words as written; ";" "|" "||" are words of their own */
	int *col;             /* each word's column */
	int n;
	int end;              /* K_FOR, K_IF: the index of its done / fi */
	int col0;             /* the column its text starts at */
	int *segoff, *segline;   /* where each physical line of it starts in its text, and its number */
	int nseg;
	int body;             /* K_FOR, K_IF: the first line of the body (after do / then) */
};

struct var {
	const char *name, *value;
	const char **items;   /* an array's */
	int nitems, is_array, exported;
};

struct sh {
	struct npl_arena *a;
	struct npl_diag *d;
	const struct npl_pagesh_site *site;
	const char *ip;
	struct line *lines;
	int nlines, caplines;
	struct var *vars;
	int nvars, capvars;
	const char **unset, **sourced, **governors, **sysctl;
	int nunset, nsourced, ngovernors, nsysctl;
	struct npl_pagesh_result *out;
	int errors;
};

/* The place of column col of a logical line: on the physical line it was continued onto. */
static struct npl_loc place(const struct line *l, int col)
{
	struct npl_loc loc = l->loc;
	int off = col - l->col0, k;

	for (k = l->nseg - 1; k > 0 && l->segoff[k] > off; k--)
		;
	if (k > 0) {
		loc.line = l->segline[k];
		loc.col = 1 + off - l->segoff[k];
	} else {
		loc.col = col;
	}
	return loc;
}

static int err(struct sh *s, const struct line *l, int w, const char *fmt, const char *arg)
{
	struct npl_loc loc = place(l, w >= 0 && w < l->n ? l->col[w] : l->loc.col);

	s->errors++;
	return npl_error(s->d, &loc, fmt, arg);
}

/* ---- lines and words ------------------------------------------------------- */

static int is_name(const char *p, size_t n)
{
	size_t i;

	if (!n || !(isalpha((unsigned char)p[0]) || p[0] == '_'))
		return 0;
	for (i = 1; i < n; i++)
		if (!isalnum((unsigned char)p[i]) && p[i] != '_')
			return 0;
	return 1;
}

/* The end of a placeholder "<your prefill ip1>" starting at p, or NULL: lower-case letters,
 * digits, spaces and '-' between '<' and '>'. */
static const char *placeholder_end(const char *p, const char *e)
{
	const char *q;

	for (q = p + 1; q < e && *q != '>'; q++)
		if (!islower((unsigned char)*q) && !isdigit((unsigned char)*q) && *q != ' ' && *q != '-')
			return NULL;
	return q < e && q > p + 1 ? q + 1 : NULL;
}

/* The end of the word starting at p (quotes, backticks, ${...}, $((...)), placeholders kept
 * whole), or NULL with *why when it never ends. */
static const char *word_end(const char *p, const char *e, const char **why)
{
	while (p < e && *p != ' ' && *p != '\t' && *p != ';' && *p != '|') {
		const char *q;

		if (*p == '\\') {
			p += p + 1 < e ? 2 : 1;
		} else if (*p == '\'' || *p == '"' || *p == '`') {
			char c = *p;

			for (q = p + 1; q < e && *q != c; q++)
				if (c == '"' && *q == '\\')
					q++;
			if (q >= e) {
				*why = c == '`' ? "a backtick that is never closed" : "a quote that is never closed";
				return NULL;
			}
			p = q + 1;
		} else if (*p == '$' && p + 1 < e && (p[1] == '{' || p[1] == '(')) {
			int depth = 0;

			for (q = p + 1; q < e; q++) {
				depth += *q == '{' || *q == '(';
				depth -= *q == '}' || *q == ')';
				if (!depth)
					break;
			}
			if (q >= e) {
				*why = "an expansion that is never closed";
				return NULL;
			}
			p = q + 1;
		} else if (*p == '<') {
			if (!(q = placeholder_end(p, e))) {
				*why = "a redirection (or a placeholder npulaunch does not know)";
				return NULL;
			}
			p = q;
		} else if (*p == '>' || *p == '&' || *p == '(' || *p == ')') {
			*why = "a redirection, a background job or a subshell";
			return NULL;
		} else {
			p++;
		}
	}
	return p;
}

static void add_word(struct sh *s, struct line *l, const char *p, size_t n, int col)
{
	l->w = npl_arena_grow(s->a, l->w, (size_t)l->n, (size_t)l->n + 1, sizeof(*l->w));
	l->col = npl_arena_grow(s->a, l->col, (size_t)l->n, (size_t)l->n + 1, sizeof(*l->col));
	l->w[l->n] = npl_arena_strndup(s->a, p, n);
	l->col[l->n++] = col;
}

/* Split a logical line (its text t of n bytes starts at column col0) into words. An array
 * assignment NAME=(...) keeps "NAME=(" and ")" as words around its items. */
static int split(struct sh *s, struct line *l, const char *t, size_t n, int col0)
{
	const char *p = t, *e = t + n, *q, *why = NULL;
	size_t eq = strcspn(t, "=");

	if (eq < n && is_name(t, eq) && eq + 1 < n && t[eq + 1] == '(') {
		const char *close = e;

		while (close > t && (close[-1] == ' ' || close[-1] == ';'))
			close--;
		if (close[-1] != ')')
			return err(s, l, -1, "an array assignment that does not end in ')'%s", "");
		l->kind = K_ARRAY;
		add_word(s, l, t, eq + 2, col0);
		p = t + eq + 2;
		e = close - 1;
	}
	while (p < e) {
		if (*p == ' ' || *p == '\t') {
			p++;
			continue;
		}
		if (*p == ';' || *p == '|') {
			size_t k = *p == '|' && p + 1 < e && p[1] == '|' ? 2 : 1;

			add_word(s, l, p, k, col0 + (int)(p - t));
			p += k;
			continue;
		}
		if (!(q = word_end(p, e, &why))) {
			struct line tmp = *l;

			tmp.loc.col = col0 + (int)(p - t);
			return err(s, &tmp, -1, "cannot read %s here", why);
		}
		add_word(s, l, p, (size_t)(q - p), col0 + (int)(p - t));
		p = q;
	}
	if (l->kind == K_ARRAY)
		add_word(s, l, ")", 1, col0 + (int)(e - t));
	return 0;
}

/* The logical lines of the blocks: continuations joined, comments and blank lines dropped. */
static int read_lines(struct sh *s, const struct npl_page_block *b, int nb)
{
	int i;

	for (i = 0; i < nb; i++) {
		const char *p = b[i].text;
		int line = b[i].loc.line;

		while (*p) {
			struct npl_buf t = NPL_BUF_INIT;
			struct line l;
			int first = line, col = 1;
			const char *nl;

			memset(&l, 0, sizeof(l));
			while (*p == ' ' || *p == '\t') {
				p++;
				col++;
			}
			for (;;) {
				size_t len;

				nl = strchr(p, '\n');
				len = nl ? (size_t)(nl - p) : strlen(p);
				line++;
				if (len && p[len - 1] == '\\') {
					npl_buf_add(&t, p, len - 1);
					p = nl ? nl + 1 : p + len;
					l.segoff = npl_arena_grow(s->a, l.segoff, (size_t)l.nseg, (size_t)l.nseg + 2, sizeof(int));
					l.segline = npl_arena_grow(s->a, l.segline, (size_t)l.nseg, (size_t)l.nseg + 2, sizeof(int));
					if (!l.nseg) {
						l.segoff[0] = 0;
						l.segline[0] = first;
						l.nseg = 1;
					}
					l.segoff[l.nseg] = (int)t.len;
					l.segline[l.nseg++] = line;
					if (nl)
						continue;
				} else {
					npl_buf_add(&t, p, len);
					p = nl ? nl + 1 : p + len;
				}
				break;
			}
			l.loc = (struct npl_loc){b[i].loc.file, first, col};
			l.col0 = col;
			if (t.len && npl_buf_str(&t)[0] != '#' && split(s, &l, npl_buf_str(&t), t.len, col) == 0 && l.n) {
				if (s->nlines == s->caplines) {
					s->caplines = s->caplines ? s->caplines * 2 : 64;
					s->lines = npl_arena_grow(s->a, s->lines, (size_t)s->nlines, (size_t)s->caplines,
								  sizeof(*s->lines));
				}
				s->lines[s->nlines++] = l;
			}
			npl_buf_release(&t);
		}
	}
	return s->errors ? -1 : 0;
}

/* A word's text without a ';' that ends the line: "do", "then". */
static int word_is(const struct line *l, int i, const char *w)
{
	return i < l->n && !strcmp(l->w[i], w);
}

/* Kinds, and each for/if matched with its done/fi (a "; do" or "; then" may end the line). */
static int structure(struct sh *s)
{
	int stack[MAX_DEPTH], depth = 0, i;

	for (i = 0; i < s->nlines; i++) {
		struct line *l = &s->lines[i];
		int last = l->n - 1;

		if (l->kind == K_ARRAY)
			continue;
		if (word_is(l, 0, "for") || word_is(l, 0, "if")) {
			l->kind = word_is(l, 0, "for") ? K_FOR : K_IF;
			if (depth == MAX_DEPTH)
				return err(s, l, 0, "loops and conditions nested too deep%s", "");
			stack[depth++] = i;
			l->body = -1;
			if (last > 1 && word_is(l, last, l->kind == K_FOR ? "do" : "then")) {
				l->n -= word_is(l, last - 1, ";") ? 2 : 1;
				l->body = i + 1;
			}
		} else if (word_is(l, 0, "do") || word_is(l, 0, "then")) {
			struct line *o = depth ? &s->lines[stack[depth - 1]] : NULL;

			l->kind = word_is(l, 0, "do") ? K_DO : K_THEN;
			if (l->n != 1 || !o || o->body != -1 || (o->kind == K_FOR) != (l->kind == K_DO))
				return err(s, l, 0, "'%s' where it does not belong", l->w[0]);
			o->body = i + 1;
		} else if (word_is(l, 0, "done") || word_is(l, 0, "fi")) {
			struct line *o = depth ? &s->lines[stack[depth - 1]] : NULL;

			l->kind = word_is(l, 0, "done") ? K_DONE : K_FI;
			if (!o || o->body == -1 || (o->kind == K_FOR) != (l->kind == K_DONE))
				return err(s, l, 0, "'%s' where it does not belong", l->w[0]);
			o->end = i;
			depth--;
		} else if (word_is(l, 0, "break")) {
			l->kind = K_BREAK;
		}
	}
	if (depth)
		return err(s, &s->lines[stack[depth - 1]], 0, "this '%s' is never closed", s->lines[stack[depth - 1]].w[0]);
	return 0;
}

/* ---- variables ------------------------------------------------------------- */

static struct var *find(struct sh *s, const char *name, size_t n)
{
	int i;

	for (i = 0; i < s->nvars; i++)
		if (strlen(s->vars[i].name) == n && !memcmp(s->vars[i].name, name, n))
			return &s->vars[i];
	return NULL;
}

static struct var *set(struct sh *s, const char *name, size_t n)
{
	struct var *v = find(s, name, n);

	if (v)
		return v;
	if (s->nvars == s->capvars) {
		s->capvars = s->capvars ? s->capvars * 2 : 32;
		s->vars = npl_arena_grow(s->a, s->vars, (size_t)s->nvars, (size_t)s->capvars, sizeof(*s->vars));
	}
	v = &s->vars[s->nvars++];
	v->name = npl_arena_strndup(s->a, name, n);
	return v;
}

/* Add name to a set of strings kept in order; replace an entry "name=..." when key is set. */
static void put(struct sh *s, const char ***v, int *n, const char *str, size_t key)
{
	int i;

	for (i = 0; i < *n; i++)
		if (key ? !strncmp((*v)[i], str, key + 1) : !strcmp((*v)[i], str)) {
			(*v)[i] = str;
			return;
		}
	*v = npl_arena_grow(s->a, *v, (size_t)*n, (size_t)*n + 1, sizeof(**v));
	(*v)[(*n)++] = str;
}

static void drop(const char **v, int *n, const char *str)
{
	int i, k = 0;

	for (i = 0; i < *n; i++)
		if (strcmp(v[i], str))
			v[k++] = v[i];
	*n = k;
}

/* ---- words ----------------------------------------------------------------- */

struct ev {
	struct sh *s;
	const struct line *l;
	int w;
	struct npl_buf *out;
};

static int value_of(struct ev *e, const char *name, size_t n, const char *index, size_t ni);

static int placeholder(struct ev *e, const char *p, size_t n)
{
	const struct npl_pagesh_site *site = e->s->site;
	static const char *const kinds[] = {"your prefill ip", "your decode ip", "your node"};
	const char *const *lists[] = {site->prefill_ip, site->decode_ip, site->node_ip};
	int counts[] = {site->nprefill, site->ndecode, site->nnode};
	char *name = npl_arena_strndup(e->s->a, p + 1, n - 2);
	size_t k;

	if (!strcmp(name, "network-interface")) {
		if (!site->ifname)
			return err(e->s, e->l, e->w, "placeholder <%s> has no value: give --ifname", name);
		npl_buf_puts(e->out, site->ifname);
		return 0;
	}
	for (k = 0; k < 3; k++) {
		size_t kl = strlen(kinds[k]);
		const char *num = name + kl;
		long idx = 1;

		if (strncmp(name, kinds[k], kl))
			continue;
		if (k == 2) {
			/* "your node2 ip" */
			char *end;

			idx = strtol(num, &end, 10);
			if (end == num || strcmp(end, " ip"))
				break;
		} else if (*num) {
			char *end;

			idx = strtol(num, &end, 10);
			if (end == num || *end)
				break;
		}
		if (idx < 1 || idx > counts[k])
			return err(e->s, e->l, e->w, "placeholder <%s> has no value: give one more address of its kind", name);
		npl_buf_puts(e->out, lists[k][idx - 1]);
		return 0;
	}
	return err(e->s, e->l, e->w, "placeholder <%s> is not one npulaunch knows", name);
}

/* The arithmetic of $((...)) and of an array's index, as the pages use it (${P_IP[$(( $i / 2 * 2 ))]},
 * $((8998 + $i / 2)), $(( $i % 2 ))): integers and variables holding integers, + - * / % with
 * bash's precedence, signs and parentheses. Values stay within +-2^31, so no step overflows. */
struct ar {
	struct ev *e;
	const char *p, *q, *end; /* the whole text (for messages), where the reader is, its end */
	int depth;               /* signs and parentheses open: bounded, so no page exhausts the stack */
};

#define AR_MAX 2147483648LL

static int ar_binary(struct ar *a, int level, long long *out);
static int ar_nested(struct ar *a, long long *out);

static int ar_fail(struct ar *a, const char *why)
{
	const char *text = npl_arena_strndup(a->e->s->a, a->p, (size_t)(a->end - a->p));

	return err(a->e->s, a->e->l, a->e->w, "cannot read the arithmetic %s",
		   npl_arena_printf(a->e->s->a, "'%s'%s", text, why));
}

static int ar_at(struct ar *a, const char *ops)
{
	while (a->q < a->end && *a->q == ' ')
		a->q++;
	return a->q < a->end && strchr(ops, *a->q) != NULL;
}

/* $NAME or NAME, holding an integer */
static int ar_variable(struct ar *a, long long *out)
{
	struct npl_buf b = NPL_BUF_INIT;
	struct ev sub = {a->e->s, a->e->l, a->e->w, &b};
	const char *r;
	char *stop;
	int rc;

	if (*a->q == '$')
		a->q++;
	for (r = a->q; r < a->end && (isalnum((unsigned char)*r) || *r == '_'); r++)
		;
	if (r == a->q)
		return ar_fail(a, "");
	rc = value_of(&sub, a->q, (size_t)(r - a->q), NULL, 0);
	*out = rc ? 0 : strtoll(npl_buf_str(&b), &stop, 10);
	if (!rc && (!b.len || *stop))
		rc = err(a->e->s, a->e->l, a->e->w, "arithmetic on '%s', which is not a number", npl_buf_str(&b));
	npl_buf_release(&b);
	a->q = r;
	return rc ? -1 : 0;
}

/* a number, a variable, a sign before one, or a sum in parentheses */
static int ar_atom(struct ar *a, long long *out)
{
	char *stop;
	int rc;

	if (a->depth >= 32)
		return ar_fail(a, ": nested too deep");
	if (ar_at(a, "+-") || ar_at(a, "(")) {
		a->depth++;
		rc = ar_nested(a, out);
		a->depth--;
		return rc;
	}
	if (a->q >= a->end)
		return ar_fail(a, "");
	if (!isdigit((unsigned char)*a->q))
		return ar_variable(a, out);
	*out = strtoll(a->q, &stop, 10);
	a->q = stop < a->end ? stop : a->end;
	return 0;
}

/* a sign before an atom, or a sum in parentheses */
static int ar_nested(struct ar *a, long long *out)
{
	if (ar_at(a, "+-")) {
		int neg = *a->q++ == '-';

		if (ar_atom(a, out))
			return -1;
		*out = neg ? -*out : *out;
		return 0;
	}
	if (ar_at(a, "(")) {
		a->q++;
		if (ar_binary(a, 0, out))
			return -1;
		if (!ar_at(a, ")"))
			return ar_fail(a, "");
		a->q++;
		return 0;
	}
	return ar_fail(a, "");
}

/* The operators of a level, left to right: + - (0) over * / % (1) over atoms. */
static int ar_binary(struct ar *a, int level, long long *out)
{
	static const char *const ops[] = {"+-", "*/%"};
	long long v;

	if (level ? ar_atom(a, out) : ar_binary(a, 1, out))
		return -1;
	while (ar_at(a, ops[level])) {
		char op = *a->q++;

		if (level ? ar_atom(a, &v) : ar_binary(a, 1, &v))
			return -1;
		if (*out <= -AR_MAX || *out >= AR_MAX || v <= -AR_MAX || v >= AR_MAX)
			return ar_fail(a, ": a number too large");
		if ((op == '/' || op == '%') && !v)
			return ar_fail(a, ": a division by zero");
		*out = op == '+' ? *out + v : op == '-' ? *out - v : op == '*' ? *out * v : op == '/' ? *out / v : *out % v;
	}
	return 0;
}

static int arith(struct ev *e, const char *p, size_t n)
{
	struct ar a = {e, p, p, p + n, 0};
	long long v;

	if (ar_binary(&a, 0, &v))
		return -1;
	if (ar_at(&a, "") || a.q < a.end)
		return ar_fail(&a, "");
	npl_buf_printf(e->out, "%lld", v);
	return 0;
}

static int value_of(struct ev *e, const char *name, size_t n, const char *index, size_t ni)
{
	struct var *v = find(e->s, name, n);
	char *nm = npl_arena_strndup(e->s->a, name, n);

	if (!v || (!v->is_array && !v->value))
		return err(e->s, e->l, e->w, "$%s is used but never set", nm);
	if (index) {
		struct npl_buf b = NPL_BUF_INIT;
		struct ev sub = {e->s, e->l, e->w, &b};
		char *stop;
		long i;
		int rc;

		/* an index is arithmetic, as bash reads it: ${ARR[$i]}, ${ARR[i]}, ${ARR[$(( $i / 2 * 2 ))]} */
		if (ni > 5 && !strncmp(index, "$((", 3) && !strncmp(index + ni - 2, "))", 2))
			rc = arith(&sub, index + 3, ni - 5);
		else
			rc = arith(&sub, index, ni);
		i = rc ? -1 : strtol(npl_buf_str(&b), &stop, 10);
		npl_buf_release(&b);
		if (rc)
			return -1;
		if (!v->is_array || i < 0 || i >= v->nitems)
			return err(e->s, e->l, e->w, "${%s[...]} indexes past the end of the array", nm);
		npl_buf_puts(e->out, v->items[i]);
		return 0;
	}
	if (v->is_array)
		return npl_buf_puts(e->out, v->nitems ? v->items[0] : ""), 0;
	npl_buf_puts(e->out, v->value);
	return 0;
}

/* The `hostname -I | awk ... '{print$N}'` of the pages: this node's N-th address. */
static int backtick(struct ev *e, const char *p, size_t n)
{
	char *cmd = npl_arena_strndup(e->s->a, p, n), *pr = strstr(cmd, "{print$");

	if (strncmp(cmd, "hostname -I", 11) || !pr || !isdigit((unsigned char)pr[7]))
		return err(e->s, e->l, e->w, "cannot read the command substitution `%s`", cmd);
	if (pr[7] == '1' && e->s->ip)
		npl_buf_puts(e->out, e->s->ip);
	return 0;
}

/* $NAME ${NAME} ${NAME[I]} $((...)) at p; *len: what it took */
static int expand(struct ev *e, const char *p, const char *end, size_t *len)
{
	const char *q;

	if (p + 2 < end && p[1] == '(' && p[2] == '(') {
		q = strstr(p, "))");
		if (!q || q >= end)
			return err(e->s, e->l, e->w, "cannot read the arithmetic here%s", "");
		*len = (size_t)(q + 2 - p);
		return arith(e, p + 3, (size_t)(q - p - 3));
	}
	if (p + 1 < end && p[1] == '(') {
		const char *close = memchr(p, ')', (size_t)(end - p));

		*len = close ? (size_t)(close + 1 - p) : (size_t)(end - p);
		return err(e->s, e->l, e->w, "cannot read the command substitution '%s'",
			   npl_arena_strndup(e->s->a, p, *len));
	}
	if (p + 1 < end && p[1] == '{') {
		const char *close = memchr(p, '}', (size_t)(end - p)), *br;

		if (!close)
			return err(e->s, e->l, e->w, "an expansion that is never closed%s", "");
		*len = (size_t)(close + 1 - p);
		br = memchr(p + 2, '[', (size_t)(close - p - 2));
		if (br && close[-1] == ']' && is_name(p + 2, (size_t)(br - p - 2)))
			return value_of(e, p + 2, (size_t)(br - p - 2), br + 1, (size_t)(close - 1 - br - 1));
		if (!is_name(p + 2, (size_t)(close - p - 2)))
			return err(e->s, e->l, e->w, "cannot read the expansion '%s'",
				   npl_arena_strndup(e->s->a, p, *len));
		return value_of(e, p + 2, (size_t)(close - p - 2), NULL, 0);
	}
	for (q = p + 1; q < end && (isalnum((unsigned char)*q) || *q == '_'); q++)
		;
	*len = (size_t)(q - p);
	if (q == p + 1) {
		/* a lone '$' is itself */
		npl_buf_putc(e->out, '$');
		return 0;
	}
	return value_of(e, p + 1, (size_t)(q - p - 1), NULL, 0);
}

/* The word's value: quotes removed, expansions and placeholders filled. */
static int eval(struct sh *s, const struct line *l, int w, struct npl_buf *out)
{
	const char *p = l->w[w], *end = p + strlen(p);
	struct ev e = {s, l, w, out};
	int dq = 0;
	size_t n = 0;

	while (p < end) {
		if (*p == '"') {
			dq = !dq;
			p++;
		} else if (*p == '\'' && !dq) {
			const char *q = strchr(p + 1, '\''), *r;

			/* literal, but for the pages' placeholders: P_IP=('<your prefill ip1>') */
			for (r = p + 1; r < q; r++) {
				const char *ph = *r == '<' ? placeholder_end(r, q) : NULL;

				if (!ph) {
					npl_buf_putc(out, *r);
					continue;
				}
				if (placeholder(&e, r, (size_t)(ph - r)))
					return -1;
				r = ph - 1;
			}
			p = q + 1;
		} else if (*p == '\\') {
			if (p + 1 < end)
				npl_buf_putc(out, p[1]);
			p += 2;
		} else if (*p == '`') {
			/* inside double quotes a backtick was not matched when the word was split */
			const char *q = strchr(p + 1, '`');

			if (!q)
				return err(s, l, w, "cannot read %s here", "a backtick that is never closed");
			if (backtick(&e, p + 1, (size_t)(q - p - 1)))
				return -1;
			p = q + 1;
		} else if (*p == '$') {
			if (expand(&e, p, end, &n))
				return -1;
			p += n;
		} else if (*p == '<' && placeholder_end(p, end)) {
			const char *q = placeholder_end(p, end);

			if (placeholder(&e, p, (size_t)(q - p)))
				return -1;
			p = q;
		} else {
			npl_buf_putc(out, *p++);
		}
	}
	return 0;
}

static const char *evald(struct sh *s, const struct line *l, int w)
{
	struct npl_buf b = NPL_BUF_INIT;
	const char *r = NULL;

	if (eval(s, l, w, &b) == 0)
		r = npl_arena_strdup(s->a, npl_buf_str(&b));
	npl_buf_release(&b);
	return r;
}

/* ---- statements ------------------------------------------------------------ */

/* NAME=WORD in word w: set (and export) */
static int assign(struct sh *s, const struct line *l, int w, int exported)
{
	const char *eq = strchr(l->w[w], '='), *v;
	struct var *var;
	struct line one = *l;

	if (!eq || !is_name(l->w[w], (size_t)(eq - l->w[w]))) {
		if (exported && is_name(l->w[w], strlen(l->w[w]))) {
			set(s, l->w[w], strlen(l->w[w]))->exported = 1;
			drop(s->unset, &s->nunset, l->w[w]);
			return 0;
		}
		return err(s, l, w, "cannot read the assignment '%s'", l->w[w]);
	}
	/* the value is the rest of the word */
	one.w = npl_arena_alloc(s->a, sizeof(*one.w));
	one.w[0] = eq + 1;
	one.col = (int *)&l->col[w];
	one.n = 1;
	if (!(v = evald(s, &one, 0)))
		return -1;
	var = set(s, l->w[w], (size_t)(eq - l->w[w]));
	var->value = v;
	var->is_array = 0;
	var->exported |= exported;
	if (var->exported)
		drop(s->unset, &s->nunset, var->name);
	return 0;
}

static int launch(struct sh *s, const struct line *l)
{
	struct npl_pagesh_launch *L;
	int i;

	if (l->n < 3 || strcmp(l->w[1], "-m"))
		return err(s, l, 0, "a python that does not run a module (python -m MODULE)%s", "");
	s->out->v = npl_arena_grow(s->a, s->out->v, (size_t)s->out->n, (size_t)s->out->n + 1, sizeof(*s->out->v));
	L = &s->out->v[s->out->n++];
	memset(L, 0, sizeof(*L));
	L->module = l->w[2];
	L->loc = l->loc;
	L->argv = npl_arena_calloc(s->a, (size_t)l->n, sizeof(*L->argv));
	L->argloc = npl_arena_calloc(s->a, (size_t)l->n, sizeof(*L->argloc));
	for (i = 3; i < l->n; i++) {
		L->argloc[L->argc] = place(l, l->col[i]);
		if (!(L->argv[L->argc++] = evald(s, l, i)))
			return -1;
	}
	L->env = npl_arena_calloc(s->a, (size_t)s->nvars + 1, sizeof(*L->env));
	for (i = 0; i < s->nvars; i++)
		if (s->vars[i].exported && !s->vars[i].is_array && s->vars[i].value)
			L->env[L->nenv++] = npl_arena_printf(s->a, "%s=%s", s->vars[i].name, s->vars[i].value);
#define COPY(f, nf)                                                                                \
	do {                                                                                       \
		L->f = npl_arena_calloc(s->a, (size_t)s->nf + 1, sizeof(*L->f));                   \
		if (s->nf)                                                                         \
			memcpy(L->f, s->f, (size_t)s->nf * sizeof(*L->f));                         \
		L->nf = s->nf;                                                                     \
	} while (0)
	COPY(unset, nunset);
	COPY(sourced, nsourced);
	COPY(governors, ngovernors);
	COPY(sysctl, nsysctl);
#undef COPY
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* echo ... | tee .../scaling_governor: the governor; any other echo prints, which is nothing */
static int echo(struct sh *s, const struct line *l)
{
	const char *v;
	int i;

	if (l->n == 5 && word_is(l, 2, "|") && word_is(l, 3, "tee") && strstr(l->w[4], "scaling_governor")) {
		if (!(v = evald(s, l, 1)))
			return -1;
		put(s, &s->governors, &s->ngovernors, v, 0);
		return 0;
	}
	for (i = 1; i < l->n; i++)
		if (word_is(l, i, "|"))
			return err(s, l, i, "cannot read this pipe (only 'echo GOVERNOR | tee .../scaling_governor')%s", "");
	return 0;
}

static int simple(struct sh *s, const struct line *l)
{
	const char *c = l->w[0], *v;
	int i, n = l->n;

	if (word_is(l, n - 1, ";"))
		n--;
	if (!strcmp(c, "export")) {
		for (i = 1; i < n; i++)
			if (assign(s, l, i, 1))
				return -1;
	} else if (!strcmp(c, "unset")) {
		for (i = 1; i < n; i++) {
			struct var *var = find(s, l->w[i], strlen(l->w[i]));

			if (!is_name(l->w[i], strlen(l->w[i])))
				return err(s, l, i, "cannot unset '%s'", l->w[i]);
			if (var) {
				var->value = NULL;
				var->is_array = 0;
				var->exported = 0;
			}
			put(s, &s->unset, &s->nunset, l->w[i], 0);
		}
	} else if (!strcmp(c, "source") || !strcmp(c, ".")) {
		if (n != 2 || !(v = evald(s, l, 1)))
			return n != 2 ? err(s, l, 0, "'%s' takes one file here", c) : -1;
		put(s, &s->sourced, &s->nsourced, v, 0);
	} else if (!strcmp(c, "sysctl")) {
		if (n < 3 || !word_is(l, 1, "-w"))
			return err(s, l, 0, "cannot read this sysctl (only 'sysctl -w NAME=VALUE')%s", "");
		for (i = 2; i < n; i++) {
			const char *eq;

			if (!(v = evald(s, l, i)) || !(eq = strchr(v, '=')))
				return v ? err(s, l, i, "'%s' is not NAME=VALUE", v) : -1;
			put(s, &s->sysctl, &s->nsysctl, v, (size_t)(eq - v));
		}
	} else if (!strcmp(c, "echo")) {
		return echo(s, l);
	} else if (!strcmp(c, "python") || !strcmp(c, "python3")) {
		return launch(s, l);
	} else if (n == 1 && strchr(c, '=')) {
		return assign(s, l, 0, 0);
	} else {
		return err(s, l, 0, "cannot read this line: '%s' is not in the shell npulaunch reads from a page", c);
	}
	return 0;
}

static int array(struct sh *s, const struct line *l)
{
	struct var *v = set(s, l->w[0], strlen(l->w[0]) - 2);
	int i;

	v->is_array = 1;
	v->value = NULL;
	v->nitems = 0;
	v->items = npl_arena_calloc(s->a, (size_t)l->n, sizeof(*v->items));
	for (i = 1; i < l->n - 1; i++)
		if (!(v->items[v->nitems++] = evald(s, l, i)))
			return -1;
	return 0;
}

/* [[ A == B || C == D ]] */
static int condition(struct sh *s, const struct line *l, int *truth)
{
	int i = 1, n = l->n;

	if (word_is(l, n - 1, ";"))
		n--;
	if (!word_is(l, i, "[[") || !word_is(l, n - 1, "]]"))
		return err(s, l, 0, "cannot read this condition (only [[ A == B || ... ]])%s", "");
	*truth = 0;
	for (i = 2; i + 2 < n; i += 4) {
		const char *a, *b;

		if (!word_is(l, i + 1, "==") || (i + 3 < n - 1 && !word_is(l, i + 3, "||")))
			return err(s, l, i + 1, "cannot read this condition (only [[ A == B || ... ]])%s", "");
		if (!(a = evald(s, l, i)) || !(b = evald(s, l, i + 2)))
			return -1;
		*truth |= !strcmp(a, b);
	}
	return 0;
}

static int exec(struct sh *s, int from, int to);

/* for i in "${!ARR[@]}": the loop over the array's indexes */
static int loop(struct sh *s, const struct line *l)
{
	const char *w = l->n >= 4 ? l->w[3] : "", *br;
	char idx[16];
	struct var *arr, *i;
	int k, n, rc;

	if (l->n < 4 || !word_is(l, 2, "in") || !is_name(l->w[1], strlen(l->w[1])))
		return err(s, l, 0, "cannot read this loop (only for i in \"${!ARRAY[@]}\")%s", "");
	if (*w == '"')
		w = npl_arena_strndup(s->a, w + 1, strlen(w) - 2);
	if (strncmp(w, "${!", 3) || !(br = strchr(w, '[')) || strcmp(br, "[@]}"))
		return err(s, l, 3, "cannot read this loop (only for i in \"${!ARRAY[@]}\")%s", "");
	arr = find(s, w + 3, (size_t)(br - w - 3));
	if (!arr || !arr->is_array)
		return err(s, l, 3, "the loop goes over '%s', which is not an array", w);
	/* bash expands the indexes once, before the body runs (and set() below may move arr) */
	n = arr->nitems;
	for (k = 0; k < n; k++) {
		snprintf(idx, sizeof(idx), "%d", k);
		i = set(s, l->w[1], strlen(l->w[1]));
		i->value = npl_arena_strdup(s->a, idx);
		rc = exec(s, l->body, l->end);
		if (rc)
			return rc < 0 ? rc : 0;
	}
	return 0;
}

/* 0: went on; 1: break; -1: error */
static int exec(struct sh *s, int from, int to)
{
	int i, rc, truth = 0;

	for (i = from; i < to; i++) {
		struct line *l = &s->lines[i];

		switch (l->kind) {
		case K_FOR:
			if ((rc = loop(s, l)) < 0)
				return rc;
			i = l->end;
			break;
		case K_IF:
			if (condition(s, l, &truth))
				return -1;
			if (truth && (rc = exec(s, l->body, l->end)))
				return rc;
			i = l->end;
			break;
		case K_BREAK:
			return 1;
		case K_ARRAY:
			if (array(s, l))
				return -1;
			break;
		case K_SIMPLE:
			if (simple(s, l))
				return -1;
			break;
		default:
			break;
		}
	}
	return 0;
}

int npl_pagesh_run(const struct npl_page_block *blocks, int nblocks, const char *ip,
		   const struct npl_pagesh_site *site, const char *const *env, struct npl_pagesh_result *out,
		   struct npl_arena *a, struct npl_diag *d)
{
	struct sh s;
	int i;

	memset(&s, 0, sizeof(s));
	memset(out, 0, sizeof(*out));
	s.a = a;
	s.d = d;
	s.site = site;
	s.ip = ip;
	s.out = out;
	for (i = 0; env && env[i]; i++) {
		const char *eq = strchr(env[i], '=');

		if (eq && is_name(env[i], (size_t)(eq - env[i])))
			set(&s, env[i], (size_t)(eq - env[i]))->value = eq + 1;
	}
	if (read_lines(&s, blocks, nblocks) || structure(&s) || exec(&s, 0, s.nlines) < 0)
		return -1;
	for (i = 0; i < out->n; i++) {
		struct npl_pagesh_launch *L = &out->v[i];

		qsort(L->env, (size_t)L->nenv, sizeof(*L->env), cmp_str);
		qsort(L->unset, (size_t)L->nunset, sizeof(*L->unset), cmp_str);
		qsort(L->governors, (size_t)L->ngovernors, sizeof(*L->governors), cmp_str);
		qsort(L->sysctl, (size_t)L->nsysctl, sizeof(*L->sysctl), cmp_str);
	}
	return s.errors ? -1 : 0;
}
