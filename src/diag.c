/* diag.c: located diagnostics with severity; see diag.h. */
#include <stdlib.h>
#include <string.h>

#include "npulaunch/arena.h"
#include "npulaunch/buf.h"
#include "npulaunch/diag.h"

static const char *sev_name[] = {"note", "warning", "error"};

/* A copy of name that lives as long as the diag (locations outlive their callers). */
static const char *intern(struct npl_diag *d, const char *name)
{
	int i;

	if (!name)
		return NULL;
	for (i = d->nnames - 1; i >= 0; i--)
		if (d->names[i] == name || strcmp(d->names[i], name) == 0)
			return d->names[i];
	if (d->nnames == d->capnames) {
		int cap = d->capnames ? d->capnames * 2 : 16;
		void *p = realloc(d->names, (size_t)cap * sizeof(*d->names));

		if (!p)
			npl_oom();
		d->names = p;
		d->capnames = cap;
	}
	d->names[d->nnames] = strdup(name);
	if (!d->names[d->nnames])
		npl_oom();
	return d->names[d->nnames++];
}

void npl_diag_vadd(struct npl_diag *d, enum npl_severity sev, const struct npl_loc *loc,
		   const char *fmt, va_list ap)
{
	struct npl_buf b = NPL_BUF_INIT;
	struct npl_diag_entry *e;

	if (d->n == d->cap) {
		int cap = d->cap ? d->cap * 2 : 16;
		void *p = realloc(d->v, (size_t)cap * sizeof(*d->v));

		if (!p)
			npl_oom();
		d->v = p;
		d->cap = cap;
	}
	npl_buf_vprintf(&b, fmt, ap);
	e = &d->v[d->n++];
	e->sev = sev;
	if (loc) {
		e->loc = *loc;
		e->loc.file = intern(d, loc->file);
	} else {
		memset(&e->loc, 0, sizeof(e->loc));
	}
	e->msg = npl_buf_detach(&b);
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

void npl_warn(struct npl_diag *d, const struct npl_loc *loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	npl_diag_vadd(d, NPL_WARNING, loc, fmt, ap);
	va_end(ap);
}

void npl_diag_source(struct npl_diag *d, const char *name, const char *text)
{
	if (d->nsrc == d->srccap) {
		int cap = d->srccap ? d->srccap * 2 : 32;
		void *p = realloc(d->src, (size_t)cap * sizeof(*d->src));

		if (!p)
			npl_oom();
		d->src = p;
		d->srccap = cap;
	}
	d->src[d->nsrc].name = intern(d, name);
	d->src[d->nsrc].text = text;
	d->nsrc++;
}

static const char *source_of(const struct npl_diag *d, const char *name)
{
	int i;

	for (i = d->nsrc - 1; i >= 0; i--)
		if (strcmp(d->src[i].name, name) == 0)
			return d->src[i].text;
	return NULL;
}

/* The source line and a caret under the column, gcc style. */
static void add_caret(struct npl_buf *b, const char *text, int line, int col)
{
	const char *p = text, *end;
	int i;

	for (i = 1; i < line && p; i++) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p || !*p)
		return;
	end = strchr(p, '\n');
	if (!end)
		end = p + strlen(p);
	npl_buf_printf(b, "\n%5d | ", line);
	for (; p < end; p++)
		npl_buf_putc(b, (*p == '\t' || (unsigned char)*p >= 0x20) ? *p : '?');
	npl_buf_puts(b, "\n      | ");
	for (i = 1; i < col; i++)
		npl_buf_putc(b, ' ');
	npl_buf_putc(b, '^');
}

char *npl_diag_format(const struct npl_diag *d, const struct npl_diag_entry *e, int caret)
{
	struct npl_buf b = NPL_BUF_INIT;
	const char *text;

	if (e->loc.file) {
		npl_buf_puts(&b, e->loc.file);
		if (e->loc.line > 0) {
			npl_buf_printf(&b, ":%d", e->loc.line);
			if (e->loc.col > 0)
				npl_buf_printf(&b, ":%d", e->loc.col);
		}
		npl_buf_puts(&b, ": ");
	}
	npl_buf_printf(&b, "%s: %s", sev_name[e->sev], e->msg);
	if (caret && e->loc.file && e->loc.line > 0 && e->loc.col > 0 &&
	    (text = source_of(d, e->loc.file)))
		add_caret(&b, text, e->loc.line, e->loc.col);
	return npl_buf_detach(&b);
}

void npl_diag_flush(struct npl_diag *d, FILE *fp)
{
	for (; d->printed < d->n; d->printed++) {
		char *s = npl_diag_format(d, &d->v[d->printed], !d->no_caret);

		fprintf(fp, "npulaunch: %s\n", s);
		free(s);
	}
	fflush(fp);
}

void npl_diag_release(struct npl_diag *d)
{
	int i;

	for (i = 0; i < d->n; i++)
		free(d->v[i].msg);
	for (i = 0; i < d->nnames; i++)
		free(d->names[i]);
	free(d->names);
	free(d->v);
	free(d->src);
	memset(d, 0, sizeof(*d));
}
