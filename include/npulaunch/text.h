/*
 * text.h: layer base. Strings, numbers read from users, spelling
 * suggestions, shell quoting and escaping for a terminal. Knows nothing of
 * diagnostics or files.
 */
#ifndef NPL_TEXT_H
#define NPL_TEXT_H

#include <stddef.h>
#include <stdio.h>

#include "npulaunch/arena.h"
#include "npulaunch/buf.h"

#define NPL_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Edit distance between two strings (insert, delete, substitute, transpose). */
int npl_edit_distance(const char *a, const char *b);
/* The candidate closest to word when it is close enough to be a likely typo, else NULL. */
const char *npl_did_you_mean(const char *word, const char *const *cands, int n);

/* 1 when s needs no quoting as a shell word. */
int npl_shell_safe(const char *s);
/* The offset of the first byte of s (n bytes) that does not start a valid UTF-8 character
 * (overlong, a surrogate, past U+10FFFF, cut short, a stray byte); n when all are valid. */
size_t npl_utf8_invalid(const char *s, size_t n);
/* The bytes of the one valid UTF-8 character at s (n bytes; 1 for ASCII), its code point in *cp
 * (cp may be NULL); 0 when none starts there (as npl_utf8_invalid() judges, or n is 0). */
size_t npl_utf8_char(const char *s, size_t n, unsigned *cp);
/* Append s as one shell word: bare when safe, else single-quoted. */
void npl_shell_quote(struct npl_buf *b, const char *s);

/* Append the one character at s (n > 0 bytes) for a terminal: a C0 control, DEL or a byte that
 * does not start valid UTF-8 as \xNN, a C1 control as \u00NN, any other UTF-8 character as it
 * is. Returns the bytes of s it took (1 to 4); with b NULL, only that. */
size_t npl_escape_char(struct npl_buf *b, const char *s, size_t n);
/* Append n bytes of s for a terminal, each character as npl_escape_char() writes it; when width
 * is not 0 and n exceeds it, only the first three quarters and the last quarter of width bytes,
 * with "..." between. Every human output of text from outside (files, servers) goes through it. */
void npl_escape(struct npl_buf *b, const char *s, size_t n, size_t width);
/* s escaped for a terminal (npl_escape(), no width) in arena memory; s itself when it needs no
 * escaping. */
const char *npl_escape_in(struct npl_arena *a, const char *s);
/* Write s to fp for a terminal: each line as npl_escape() writes it (no width), the newlines
 * kept. For human output built from outside text with no controls of its own (no colours). */
void npl_print_text(FILE *fp, const char *s);

/* 1 when s starts with prefix. */
int npl_starts_with(const char *s, const char *prefix);
/* 1 when s ends with suffix. */
int npl_ends_with(const char *s, const char *suffix);
/* ASCII case-insensitive equality. */
int npl_strcaseeq(const char *a, const char *b);
/* Parse a non-negative decimal integer that fits an int; -1 on anything else (the rules of
 * npl_parse_number). */
int npl_parse_uint(const char *s);

/* What a number from a flag, a file or the environment may be: what it is, for messages
 * ("a number of seconds"), its range (inclusive; max below 2^53) and whether it is whole. */
struct npl_number_spec {
	const char *what;
	double min, max;
	int whole;
};

/* The one reader of numbers from users: s, all of it, as a decimal number: digits, then,
 * unless spec->whole, optionally '.' and digits; no sign, blank, exponent, hex, inf or nan;
 * within spec's range. 0 and *out, or -1 (*out untouched). */
int npl_parse_number(const char *s, const struct npl_number_spec *spec, double *out);
/* The same for the n bytes at s (a slice of a longer text). */
int npl_parse_number_n(const char *s, size_t n, const struct npl_number_spec *spec, double *out);
/* The length of the decimal number that starts the n bytes at s (digits, then, unless whole,
 * optionally '.' and digits); 0 when they do not start with a digit. */
size_t npl_decimal_span(const char *s, size_t n, int whole);
/* 1 when the path has a '..' part (joined to a root folder, it could lead out of it). */
int npl_path_climbs(const char *path);
/* 1 when s is a whole decimal number, as JSON and YAML read it back to the same text:
 * -?DIGITS(.DIGITS)? */
int npl_decimal_text(const char *s);
/* What spec accepts, for messages, in buf: "a number of seconds from 0 to 604800 (decimal,
 * like 1.5)"; returns buf. */
char *npl_number_expected(char *buf, size_t n, const struct npl_number_spec *spec);
/* The decimal text of v in buf (n >= 12 bytes), as snprintf's "%d" writes it; returns buf. */
char *npl_fmt_int(char *buf, size_t n, int v);

/* Compare a version ("0.5.16.post1", "0.5.16rc1", "v0.5.6", the start of an image tag
 * "v0.5.6-cann8.3.rc1-a3") with a floor ("0.5.16"), by their release numbers as pip orders them
 * (a pre-release below its release, a post or local suffix not counted): -1 below, 0 the same,
 * 1 above; -2 when either does not start with a version. */
int npl_version_cmp(const char *version, const char *floor);

/* 1 when the n bytes of JSON text hold the escape \u0000 (not an escaped backslash before u0000): cJSON decodes it into a NUL that ends
 * the C string early, so what follows it in the string would be dropped unseen (a journal's
 * "/proc/sys/vm/swappiness\u0000x" read as the swappiness file). A reader of npulaunch's own formats
 * refuses such text. */
int npl_json_nul_escape(const char *text, size_t n);
/* url for messages: the password of user:password@ (or a user alone) as *** (out, n bytes). */
const char *npl_url_redacted(const char *url, char *out, size_t n);

#endif
