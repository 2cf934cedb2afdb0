/* diag.c: located diagnostics with severity; see diag.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/arena.h"
#include "npulaunch/buf.h"
#include "npulaunch/diag.h"
#include "npulaunch/text.h"

#define MARK_EVERY 64      /* lines between two marks of a file's line index */
#define MSG_WIDTH 1024     /* bytes of a message shown; a longer one is cut in its middle */
#define EXCERPT 120        /* characters of a source line shown */
#define EXCERPT_LEFT 60    /* of them before the column, when the column is far along the line */

static const char *sev_name[] = {"note", "warning", "error"};

static unsigned hash_name(const char *s)
{
	unsigned h = 2166136261u;   /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* The slot of name in the hash: where it is, or the empty slot where it belongs. */
static int *slot_of(const struct npl_diag *d, const char *name)
{
	unsigned i = hash_name(name) & (unsigned)(d->nslots - 1);

	while (d->slots[i] && strcmp(d->names[d->slots[i] - 1].name, name) != 0)
		i = (i + 1) & (unsigned)(d->nslots - 1);
	return &d->slots[i];
}

static void rehash(struct npl_diag *d)
{
	int i, n = d->nslots ? d->nslots * 2 : 64;

	free(d->slots);
	d->slots = npl_xcalloc((size_t)n, sizeof(*d->slots));
	d->nslots = n;
	for (i = 0; i < d->nnames; i++)
		*slot_of(d, d->names[i].name) = i + 1;
}

/* The entry of name, added (with a copy that lives as long as the diag) if new.
 * Hashed, since a database of thousands of files interns thousands of names. */
static struct npl_diag_name *intern(struct npl_diag *d, const char *name)
{
	int *slot;

	if (2 * (d->nnames + 1) > d->nslots)
		rehash(d);
	slot = slot_of(d, name);
	if (*slot)
		return &d->names[*slot - 1];
	if (d->nnames == d->capnames) {
		int cap = d->capnames ? d->capnames * 2 : 16;
		void *p = npl_xrealloc(d->names, (size_t)cap * sizeof(*d->names));

		d->names = p;
		d->capnames = cap;
	}
	d->names[d->nnames].name = npl_xstrdup(name);
	d->names[d->nnames].text = NULL;
	d->names[d->nnames].marks = NULL;
	d->names[d->nnames].nmarks = 0;
	d->names[d->nnames].at_line = 0;
	*slot = ++d->nnames;
	return &d->names[d->nnames - 1];
}

/* The hash of an entry: its severity, place and text. The file names are interned, so equal
 * names are the same pointer. */
static unsigned hash_entry(enum npl_severity sev, const struct npl_loc *loc, const char *msg)
{
	unsigned h = hash_name(msg);
	uintptr_t f = (uintptr_t)loc->file;
	unsigned k[4] = {(unsigned)sev, (unsigned)loc->line, (unsigned)loc->col,
			 (unsigned)(f ^ (f >> 31 >> 1))};
	int i;

	for (i = 0; i < 4; i++)
		h = (h ^ k[i]) * 16777619u;
	return h;
}

/* The slot of an entry in the hash: where an identical one is, or the empty slot where it
 * belongs. */
static int *entry_slot(const struct npl_diag *d, enum npl_severity sev, const struct npl_loc *loc,
		       const char *msg)
{
	unsigned i = hash_entry(sev, loc, msg) & (unsigned)(d->neslots - 1);
	const struct npl_diag_entry *e;

	while (d->eslots[i]) {
		e = &d->v[d->eslots[i] - 1];
		if (e->sev == sev && e->loc.file == loc->file && e->loc.line == loc->line &&
		    e->loc.col == loc->col && !strcmp(e->msg, msg))
			break;
		i = (i + 1) & (unsigned)(d->neslots - 1);
	}
	return &d->eslots[i];
}

static void rehash_entries(struct npl_diag *d)
{
	int i, n = d->neslots ? d->neslots * 2 : 64;

	free(d->eslots);
	d->eslots = npl_xcalloc((size_t)n, sizeof(*d->eslots));
	d->neslots = n;
	for (i = 0; i < d->n; i++)
		*entry_slot(d, d->v[i].sev, &d->v[i].loc, d->v[i].msg) = i + 1;
}

void npl_diag_vadd(struct npl_diag *d, enum npl_severity sev, const struct npl_loc *loc,
		   const char *fmt, va_list ap)
{
	struct npl_buf b = NPL_BUF_INIT;
	struct npl_diag_entry *e;
	struct npl_loc at = {NULL, 0, 0};
	int *slot;

	npl_buf_vprintf(&b, fmt, ap);
	if (loc) {
		at = *loc;
		at.file = loc->file ? intern(d, loc->file)->name : NULL;
	}
	/* each instance and node of a role resolves the same layers: one message per problem */
	if (2 * (d->n + 1) > d->neslots)
		rehash_entries(d);
	slot = entry_slot(d, sev, &at, npl_buf_str(&b));
	if (*slot) {
		d->repeats++;
		npl_buf_release(&b);
		return;
	}
	if (d->n == d->cap) {
		int cap = d->cap ? d->cap * 2 : 16;
		void *p = npl_xrealloc(d->v, (size_t)cap * sizeof(*d->v));

		d->v = p;
		d->cap = cap;
	}
	e = &d->v[d->n++];
	e->sev = sev;
	e->loc = at;
	e->msg = npl_buf_detach(&b);
	e->group = e->label = NULL;
	*slot = d->n;
	if (sev == NPL_ERROR)
		d->errors++;
	else if (sev == NPL_WARNING)
		d->warnings++;
}

void npl_diag_add(struct npl_diag *d, enum npl_severity sev, const struct npl_loc *loc,
		  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	npl_diag_vadd(d, sev, loc, fmt, ap);
	va_end(ap);
}

int npl_error(struct npl_diag *d, const struct npl_loc *loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	npl_diag_vadd(d, NPL_ERROR, loc, fmt, ap);
	va_end(ap);
	return -1;
}

void npl_diag_grouped(struct npl_diag *d, enum npl_severity sev, const struct npl_loc *loc, const char *group,
		      const char *label, const char *fmt, ...)
{
	va_list ap;
	int n = d->n;

	va_start(ap, fmt);
	npl_diag_vadd(d, sev, loc, fmt, ap);
	va_end(ap);
	if (d->n > n) {
		d->v[n].group = npl_xstrdup(group);
		d->v[n].label = npl_xstrdup(label ? label : "");
	}
}

static struct npl_diag_group *group_of(struct npl_diag *d, const char *key)
{
	int i;

	for (i = 0; i < d->ngroups; i++)
		if (!strcmp(d->groups[i].key, key))
			return &d->groups[i];
	if (d->ngroups == d->capgroups) {
		d->capgroups = d->capgroups ? d->capgroups * 2 : 8;
		d->groups = npl_xrealloc(d->groups, (size_t)d->capgroups * sizeof(*d->groups));
	}
	memset(&d->groups[d->ngroups], 0, sizeof(*d->groups));
	d->groups[d->ngroups].key = npl_xstrdup(key);
	return &d->groups[d->ngroups++];
}

void npl_warn(struct npl_diag *d, const struct npl_loc *loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	npl_diag_vadd(d, NPL_WARNING, loc, fmt, ap);
	va_end(ap);
}

/* Forget what was found in a name's text: a new text came. */
static void forget_lines(struct npl_diag_name *n)
{
	free(n->marks);
	n->marks = NULL;
	n->nmarks = 0;
	n->at_line = 0;
}

void npl_diag_source(struct npl_diag *d, const char *name, const char *text)
{
	struct npl_diag_name *n = intern(d, name);

	if (n->text != text)
		forget_lines(n);
	n->text = text;
}

static struct npl_diag_name *source_of(const struct npl_diag *d, const char *name)
{
	struct npl_diag_name *n;
	const int *slot;

	if (!d->nslots)
		return NULL;
	slot = slot_of(d, name);
	if (!*slot)
		return NULL;
	n = &d->names[*slot - 1];
	return n->text ? n : NULL;
}

/* The start of line in n's text, or NULL past its end. A file's lines are counted once (every
 * MARK_EVERY-th start kept): a caret then costs the lines it skips from the nearest mark, not a
 * scan from the top, whatever the order of the messages. */
static const char *line_start(struct npl_diag_name *n, int line)
{
	const char *p;
	int i, cap = 0;

	if (!n->marks) {
		for (p = n->text, i = 0; p; i++) {
			if (i % MARK_EVERY == 0) {
				if (n->nmarks == cap) {
					size_t *m;

					cap = cap ? 2 * cap : 64;
					m = npl_xrealloc(n->marks, (size_t)cap * sizeof(*m));
					n->marks = m;
				}
				n->marks[n->nmarks++] = (size_t)(p - n->text);
			}
			p = strchr(p, '\n');
			if (p)
				p++;
		}
	}
	if ((line - 1) / MARK_EVERY >= n->nmarks)
		return NULL;
	p = n->text + n->marks[(line - 1) / MARK_EVERY];
	for (i = (line - 1) / MARK_EVERY * MARK_EVERY + 1; i < line && p; i++) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return p;
}

/* The length of the character at p, as npl_escape_char() takes it (1 at the line's end). */
static size_t char_len(const char *p)
{
	return (unsigned char)*p < 0x80 ? 1 : npl_escape_char(NULL, p, strnlen(p, 4));
}

static int line_end(const char *p)
{
	return !*p || *p == '\n' || (*p == '\r' && p[1] == '\n');
}

/* The byte where column col (in characters, as libyaml counts) of line starts, walking on from
 * the previous caret's place when it is on the same line and before: messages come in the order
 * of the file, so a long line is walked once, not once per message. *reached is the column found,
 * less than col when the line ends first. */
static const char *column_start(struct npl_diag_name *n, const char *lp, int line, int col, int *reached)
{
	const char *p = lp;
	int c = 1;

	if (n->at_line == line && n->at_col <= col) {
		p = n->text + n->at_off;
		c = n->at_col;
	}
	for (; c < col && !line_end(p); c++)
		p += char_len(p);
	n->at_line = line;
	n->at_col = c;
	n->at_off = (size_t)(p - n->text);
	*reached = c;
	return p;
}

/* The source line and a caret under the column, gcc style: the line escaped for the terminal,
 * a long one as a window of EXCERPT characters around the column. */
static void add_caret(struct npl_buf *b, struct npl_diag_name *n, int line, int col)
{
	const char *lp = line_start(n, line), *at, *p;
	int reached, k, left, pad = 0;

	if (!lp || !*lp)
		return;
	at = column_start(n, lp, line, col, &reached);
	/* the window: from the start of the line, or EXCERPT_LEFT characters before the column */
	p = at;
	left = reached - 1 < EXCERPT - EXCERPT_LEFT ? reached - 1 : EXCERPT_LEFT;
	for (k = 0; k < left && p > lp; k++)
		do
			p--;
		while (p > lp && ((unsigned char)*p & 0xc0) == 0x80);
	npl_buf_printf(b, "\n%5d | ", line);
	if (p > lp) {
		npl_buf_puts(b, "...");
		pad += 3;
	}
	for (k = 0; k < EXCERPT && !line_end(p); k++) {
		size_t before = b->len, len = char_len(p);

		npl_escape_char(b, p, len);
		/* a UTF-8 character shown as it is takes one column; an escape, its bytes */
		if (p < at)
			pad += (unsigned char)*p >= 0x80 && b->len - before == len ? 1 : (int)(b->len - before);
		p += len;
	}
	if (!line_end(p))
		npl_buf_puts(b, "...");
	npl_buf_puts(b, "\n      | ");
	for (k = 0; k < pad + col - reached; k++)
		npl_buf_putc(b, ' ');
	npl_buf_putc(b, '^');
}

char *npl_diag_format(const struct npl_diag *d, const struct npl_diag_entry *e, int caret)
{
	struct npl_buf b = NPL_BUF_INIT;
	struct npl_diag_name *n;

	if (e->loc.file) {
		npl_escape(&b, e->loc.file, strlen(e->loc.file), MSG_WIDTH);
		if (e->loc.line > 0) {
			npl_buf_printf(&b, ":%d", e->loc.line);
			if (e->loc.col > 0)
				npl_buf_printf(&b, ":%d", e->loc.col);
		}
		npl_buf_puts(&b, ": ");
	}
	npl_buf_printf(&b, "%s: ", sev_name[e->sev]);
	npl_escape(&b, e->msg, strlen(e->msg), MSG_WIDTH);
	if (caret && e->loc.file && e->loc.line > 0 && e->loc.col > 0 &&
	    (n = source_of(d, e->loc.file)))
		add_caret(&b, n, e->loc.line, e->loc.col);
	return npl_buf_detach(&b);
}

void npl_diag_flush(struct npl_diag *d, FILE *fp)
{
	int shown = 0, more[3] = {0, 0, 0};

	if (d->hold) {
		if (d->nmarks == d->capmarks) {
			d->capmarks = d->capmarks ? d->capmarks * 2 : 16;
			d->marks = npl_xrealloc(d->marks, (size_t)d->capmarks * sizeof(*d->marks));
		}
		d->marks[d->nmarks++] = d->n;
		return;
	}

	for (; d->printed < d->n; d->printed++) {
		const struct npl_diag_entry *e = &d->v[d->printed];
		char *s;

		if (d->quiet && e->sev != NPL_ERROR)
			continue;
		if (e->group) {
			/* said once a run; the others counted below */
			struct npl_diag_group *g = group_of(d, e->group);

			g->sev = e->sev;
			if (g->shown) {
				size_t n = g->labels ? strlen(g->labels) : 0, l = strlen(e->label);

				if (g->more < 10) {
					g->labels = npl_xrealloc(g->labels, n + l + 3);
					sprintf(g->labels + n, "%s%s", n ? ", " : "", e->label);
				}
				g->more++;
				continue;
			}
			g->shown = 1;
		}
		/* a flood is counted, not printed: the first ones are what to fix first */
		if (shown == NPL_DIAG_SHOWN) {
			more[d->v[d->printed].sev]++;
			continue;
		}
		s = npl_diag_format(d, &d->v[d->printed], !d->no_caret);
		fprintf(fp, "npulaunch: %s\n", s);
		free(s);
		shown++;
	}
	if (more[NPL_ERROR] + more[NPL_WARNING] + more[NPL_NOTE]) {
		const char *sep = "";
		int i, total = more[NPL_ERROR] + more[NPL_WARNING] + more[NPL_NOTE];

		fprintf(fp, "npulaunch: %d more message%s not shown (", total, total == 1 ? "" : "s");
		for (i = NPL_ERROR; i >= NPL_NOTE; i--)
			if (more[i]) {
				fprintf(fp, "%s%d %s%s", sep, more[i], sev_name[i], more[i] == 1 ? "" : "s");
				sep = ", ";
			}
		fputs(")\n", fp);
	}
	fflush(fp);
}

void npl_diag_flush_groups(struct npl_diag *d, FILE *fp)
{
	for (int i = 0; i < d->ngroups; i++) {
		struct npl_diag_group *g = &d->groups[i];

		if (!g->more || (d->quiet && g->sev != NPL_ERROR))
			continue;
		fprintf(fp, "npulaunch: %s: the same for %d more: ", sev_name[g->sev], g->more);
		npl_print_text(fp, g->labels ? g->labels : "");
		fprintf(fp, "%s\n", g->more > 10 ? ", ..." : "");
		g->more = 0;
		free(g->labels);
		g->labels = NULL;
	}
	fflush(fp);
}

void npl_diag_replay(struct npl_diag *d, const struct npl_diag *from, FILE *fp)
{
	int i = 0, m;

	for (m = 0; m <= from->nmarks; m++) {
		int end = m < from->nmarks ? from->marks[m] : from->n;

		for (; i < end; i++) {
			const struct npl_diag_entry *e = &from->v[i];

			if (e->group)
				npl_diag_grouped(d, e->sev, &e->loc, e->group, e->label, "%s", e->msg);
			else
				npl_diag_add(d, e->sev, &e->loc, "%s", e->msg);
		}
		if (m < from->nmarks)
			npl_diag_flush(d, fp);
	}
	d->repeats += from->repeats;
}

void npl_diag_release(struct npl_diag *d)
{
	int i;

	for (i = 0; i < d->n; i++) {
		free(d->v[i].msg);
		free(d->v[i].group);
		free(d->v[i].label);
	}
	for (i = 0; i < d->ngroups; i++) {
		free(d->groups[i].key);
		free(d->groups[i].labels);
	}
	free(d->groups);
	for (i = 0; i < d->nnames; i++) {
		free(d->names[i].name);
		free(d->names[i].marks);
	}
	free(d->names);
	free(d->slots);
	free(d->eslots);
	free(d->marks);
	free(d->v);
	memset(d, 0, sizeof(*d));
}
