/* buf.c: growable NUL-terminated byte buffer; see buf.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/arena.h"
#include "npulaunch/buf.h"

static void reserve(struct npl_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1, cap;
	char *p;

	if (need < b->len)
		npl_oom();
	if (need <= b->cap)
		return;
	cap = b->cap ? b->cap : 64;
	while (cap < need) {
		if (cap > (size_t)-1 / 2)
			npl_oom();
		cap *= 2;
	}
	p = npl_xrealloc(b->data, cap);
	b->data = p;
	b->cap = cap;
	b->data[b->len] = '\0';
}

void npl_buf_add(struct npl_buf *b, const char *s, size_t n)
{
	reserve(b, n);
	if (n)
		memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void npl_buf_puts(struct npl_buf *b, const char *s)
{
	npl_buf_add(b, s, strlen(s));
}

void npl_buf_putc(struct npl_buf *b, char c)
{
	npl_buf_add(b, &c, 1);
}

void npl_buf_vprintf(struct npl_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	size_t room = b->cap > b->len ? b->cap - b->len : 0;

	/* format once into the room there is; a second time only when it did not fit */
	va_copy(cp, ap);
	n = vsnprintf(room ? b->data + b->len : NULL, room, fmt, cp);
	va_end(cp);
	if (n < 0)
		npl_oom();
	if ((size_t)n >= room) {
		reserve(b, (size_t)n);
		vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	}
	b->len += (size_t)n;
}

void npl_buf_json_string(struct npl_buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	npl_buf_putc(b, '"');
	while (*s) {
		size_t n = 0;

		while (s[n] && s[n] != '"' && s[n] != '\\' && (unsigned char)s[n] >= 0x20)
			n++;
		npl_buf_add(b, s, n);
		s += n;
		if (!*s)
			break;
		switch (*s) {
		case '"': npl_buf_add(b, "\\\"", 2); break;
		case '\\': npl_buf_add(b, "\\\\", 2); break;
		case '\n': npl_buf_add(b, "\\n", 2); break;
		case '\t': npl_buf_add(b, "\\t", 2); break;
		case '\r': npl_buf_add(b, "\\r", 2); break;
		default: {
			char u[6] = {'\\', 'u', '0', '0', hex[(unsigned char)*s >> 4], hex[*s & 15]};

			npl_buf_add(b, u, 6);
		}
		}
		s++;
	}
	npl_buf_putc(b, '"');
}

void npl_buf_printf(struct npl_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	npl_buf_vprintf(b, fmt, ap);
	va_end(ap);
}

const char *npl_buf_str(const struct npl_buf *b)
{
	return b->data ? b->data : "";
}

void npl_buf_reset(struct npl_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void npl_buf_release(struct npl_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

char *npl_buf_detach(struct npl_buf *b)
{
	char *p;

	reserve(b, 0);
	p = b->data;
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}
