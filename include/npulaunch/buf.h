/*
 * buf.h: layer base. Growable byte buffer, always NUL-terminated. The owner releases it
 * with npl_buf_release(). Included by every module that builds text.
 */
#ifndef NPL_BUF_H
#define NPL_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct npl_buf {
	char *data;
	size_t len, cap;
};

#define NPL_BUF_INIT {NULL, 0, 0}

/* Append n bytes of s. */
void npl_buf_add(struct npl_buf *b, const char *s, size_t n);
/* Append a C string. */
void npl_buf_puts(struct npl_buf *b, const char *s);
/* Append one byte. */
void npl_buf_putc(struct npl_buf *b, char c);
/* Append formatted text. */
void npl_buf_printf(struct npl_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append formatted text from a va_list. */
void npl_buf_vprintf(struct npl_buf *b, const char *fmt, va_list ap);
/* Append s as a JSON string literal, quotes included (bytes from 0x80 pass as they are). */
void npl_buf_json_string(struct npl_buf *b, const char *s);
/* The text so far ("" when empty, never NULL). */
const char *npl_buf_str(const struct npl_buf *b);
/* Forget the contents, keep the memory. */
void npl_buf_reset(struct npl_buf *b);
/* Free the memory. */
void npl_buf_release(struct npl_buf *b);
/* Hand the malloc'ed text to the caller (never NULL); the buffer becomes empty. */
char *npl_buf_detach(struct npl_buf *b);

#endif
