/* text.c: strings, numbers, spelling suggestions, shell quoting, terminal escaping, versions; see
 * text.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "npulaunch/arena.h"
#include "npulaunch/text.h"
int npl_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	int *mem, *prev2, *prev, *cur, r;

	if (la > 256 || lb > 256)
		return INT_MAX;
	mem = npl_xcalloc(3 * (lb + 1), sizeof(int));
	prev2 = mem;
	prev = prev2 + lb + 1;
	cur = prev + lb + 1;
	for (j = 0; j <= lb; j++)
		prev[j] = (int)j;
	for (i = 1; i <= la; i++) {
		cur[0] = (int)i;
		for (j = 1; j <= lb; j++) {
			int cost = a[i - 1] != b[j - 1];
			int v = prev[j] + 1;

			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			if (prev[j - 1] + cost < v)
				v = prev[j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    prev2[j - 2] + 1 < v)
				v = prev2[j - 2] + 1;
			cur[j] = v;
		}
		/* rotate the three rows */
		int *t = prev2;

		prev2 = prev;
		prev = cur;
		cur = t;
	}
	r = prev[lb];
	free(mem);
	return r;
}

const char *npl_did_you_mean(const char *word, const char *const *cands, int n)
{
	const char *best = NULL;
	int bestd = INT_MAX, i, limit;
	size_t len = strlen(word);

	limit = len < 4 ? 1 : len < 12 ? 2 : 3;
	for (i = 0; i < n; i++) {
		int dist;

		if (!cands[i])
			continue;
		dist = npl_edit_distance(word, cands[i]);
		if (dist < bestd) {
			bestd = dist;
			best = cands[i];
		}
	}
	return bestd <= limit ? best : NULL;
}

int npl_shell_safe(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr("@%+=:,./_-", c)))
			return 0;
	}
	return 1;
}

void npl_shell_quote(struct npl_buf *b, const char *s)
{
	if (npl_shell_safe(s)) {
		npl_buf_puts(b, s);
		return;
	}
	npl_buf_putc(b, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			npl_buf_puts(b, "'\\''");
		else
			npl_buf_putc(b, *s);
	}
	npl_buf_putc(b, '\'');
}

/* The length of the valid UTF-8 character at s (n > 0 bytes, the first one 0x80 or more), 0 when
 * it is not one: overlong, a surrogate, past U+10FFFF, cut short, a stray byte. */
static size_t utf8_len(const unsigned char *s, size_t n, unsigned *cp)
{
	size_t len, i;
	unsigned c = s[0], min;

	if (c >= 0xc2 && c <= 0xdf)
		len = 2, c &= 0x1f, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, c &= 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, c &= 0x07, min = 0x10000;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

size_t npl_utf8_char(const char *s, size_t n, unsigned *cp)
{
	unsigned c;

	if (!n)
		return 0;
	if ((unsigned char)*s < 0x80) {
		if (cp)
			*cp = (unsigned char)*s;
		return 1;
	}
	return utf8_len((const unsigned char *)s, n, cp ? cp : &c);
}

size_t npl_utf8_invalid(const char *s, size_t n)
{
	size_t i = 0, len;
	unsigned cp;

	while (i < n) {
		uint64_t w;

		/* ASCII eight bytes at a time: the role scripts a ConfigMap carries are megabytes */
		if (n - i >= 8 && (memcpy(&w, s + i, 8), !(w & 0x8080808080808080u))) {
			i += 8;
			continue;
		}
		if ((unsigned char)s[i] < 0x80) {
			i++;
			continue;
		}
		if (!(len = utf8_len((const unsigned char *)s + i, n - i, &cp)))
			return i;
		i += len;
	}
	return n;
}

size_t npl_escape_char(struct npl_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char c = (unsigned char)*s;
	unsigned cp;
	size_t len;
	char e[7];

	if (c >= 0x20 && c < 0x7f) {
		if (b)
			npl_buf_putc(b, (char)c);
		return 1;
	}
	len = c >= 0x80 ? utf8_len((const unsigned char *)s, n, &cp) : 0;
	if (!b)
		return len ? len : 1;
	if (len && cp >= 0xa0) {
		npl_buf_add(b, s, len);
		return len;
	}
	if (len) {   /* C1: \u0080 to \u009f, which terminals take as ESC sequences */
		memcpy(e, "\\u00", 4);
		e[4] = hex[cp >> 4];
		e[5] = hex[cp & 15];
		npl_buf_add(b, e, 6);
		return len;
	}
	e[0] = '\\';
	e[1] = 'x';
	e[2] = hex[c >> 4];
	e[3] = hex[c & 15];
	npl_buf_add(b, e, 4);
	return 1;
}

/* Where a cut of s (n bytes) at i should fall so as not to split a character: back (dir -1) or
 * forward (dir 1) over at most 3 continuation bytes. */
static size_t char_edge(const char *s, size_t n, size_t i, int dir)
{
	int k;

	for (k = 0; k < 3 && i > 0 && i < n && ((unsigned char)s[i] & 0xc0) == 0x80; k++)
		i = dir < 0 ? i - 1 : i + 1;
	return i;
}

void npl_escape(struct npl_buf *b, const char *s, size_t n, size_t width)
{
	size_t i = 0, head = n, tail = n;

	if (width && n > width) {
		head = char_edge(s, n, width - width / 4, -1);
		tail = char_edge(s, n, n - width / 4, 1);
	}
	while (i < head)
		i += npl_escape_char(b, s + i, head - i);
	if (head == n)
		return;
	npl_buf_puts(b, "...");
	for (i = tail; i < n;)
		i += npl_escape_char(b, s + i, n - i);
}

const char *npl_escape_in(struct npl_arena *a, const char *s)
{
	struct npl_buf b = NPL_BUF_INIT;
	const char *p;
	size_t n = strlen(s);
	char *r;

	for (p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			break;
	if (!*p)
		return s;
	npl_escape(&b, s, n, 0);
	r = npl_arena_strndup(a, npl_buf_str(&b), b.len);
	npl_buf_release(&b);
	return r;
}

void npl_print_text(FILE *fp, const char *s)
{
	struct npl_buf b = NPL_BUF_INIT;

	while (*s) {
		size_t n = strcspn(s, "\n");

		npl_escape(&b, s, n, 0);
		s += n;
		if (*s == '\n')
			npl_buf_putc(&b, *s++);
		if (b.len >= 64 * 1024) {
			fwrite(b.data, 1, b.len, fp);
			npl_buf_reset(&b);
		}
	}
	fwrite(npl_buf_str(&b), 1, b.len, fp);
	npl_buf_release(&b);
}

int npl_starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int npl_ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

int npl_strcaseeq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char x = *a, y = *b;

		if (x >= 'A' && x <= 'Z')
			x = (char)(x - 'A' + 'a');
		if (y >= 'A' && y <= 'Z')
			y = (char)(y - 'A' + 'a');
		if (x != y)
			return 0;
	}
	return *a == *b;
}

int npl_parse_uint(const char *s)
{
	static const struct npl_number_spec any = {"a whole number", 0, INT_MAX, 1};
	double v;

	return npl_parse_number(s, &any, &v) ? -1 : (int)v;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

size_t npl_decimal_span(const char *s, size_t n, int whole)
{
	size_t i = 0, j;

	while (i < n && is_digit(s[i]))
		i++;
	if (!i || whole || i + 1 >= n || s[i] != '.' || !is_digit(s[i + 1]))
		return i;
	for (j = i + 1; j < n && is_digit(s[j]); j++)
		;
	return j;
}

int npl_path_climbs(const char *path)
{
	const char *p;

	for (p = path; (p = strstr(p, "..")); p += 2)
		if ((p == path || p[-1] == '/') && (p[2] == '/' || !p[2]))
			return 1;
	return 0;
}

int npl_decimal_text(const char *s)
{
	size_t n;

	s += *s == '-';
	n = strlen(s);
	return n && npl_decimal_span(s, n, 0) == n;
}

int npl_json_nul_escape(const char *text, size_t n)
{
	const char *p = text, *end = text + n;

	/* an escape starts at a backslash and takes the next byte with it: in \\u0000 the second
	   backslash is escaped, and the text is a backslash and "u0000", no NUL */
	while ((p = memchr(p, '\\', (size_t)(end - p))) && end - p >= 2) {
		if (end - p >= 6 && !memcmp(p + 1, "u0000", 5))
			return 1;
		p += 2;
	}
	return 0;
}

int npl_parse_number_n(const char *s, size_t n, const struct npl_number_spec *spec, double *out)
{
	double v = 0, frac = 0, scale = 1;
	int kept = 0, dropped = 0;
	size_t i;

	if (!s || !n || npl_decimal_span(s, n, spec->whole) != n)
		return -1;
	/* whole digits are exact in a double below 2^53, and any max is below that */
	for (i = 0; i < n && s[i] != '.'; i++) {
		v = v * 10 + (s[i] - '0');
		if (v > spec->max)
			return -1;
	}
	/* 15 fraction digits are as many as a double holds; a non-zero digit after them still
	 * makes max + a little more than max */
	for (i++; i < n; i++) {
		if (kept < 15) {
			frac = frac * 10 + (s[i] - '0');
			scale *= 10;
			kept++;
		} else if (s[i] != '0') {
			dropped = 1;
		}
	}
	v += frac / scale;
	if (v < spec->min || v > spec->max || (v == spec->max && dropped))
		return -1;
	*out = v;
	return 0;
}

int npl_parse_number(const char *s, const struct npl_number_spec *spec, double *out)
{
	return s ? npl_parse_number_n(s, strlen(s), spec, out) : -1;
}

char *npl_number_expected(char *buf, size_t n, const struct npl_number_spec *spec)
{
	snprintf(buf, n, "%s from %.15g to %.15g%s", spec->what, spec->min, spec->max,
		 spec->whole ? "" : " (decimal, like 1.5)");
	return buf;
}

char *npl_fmt_int(char *buf, size_t n, int v)
{
	char tmp[12];
	unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
	size_t i = sizeof(tmp);

	do
		tmp[--i] = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		tmp[--i] = '-';
	if (n < sizeof(tmp) - i + 1) {
		if (n)
			buf[0] = '\0';
		return buf;
	}
	memcpy(buf, tmp + i, sizeof(tmp) - i);
	buf[sizeof(tmp) - i] = '\0';
	return buf;
}

const char *npl_url_redacted(const char *url, char *out, size_t n)
{
	const char *scheme = strstr(url, "://"), *start, *at, *end, *colon;

	if (!scheme) {
		snprintf(out, n, "%s", url);
		return out;
	}
	start = scheme + 3;
	end = start + strcspn(start, "/?#");
	/* the last @ before the path: user[:password]@host */
	for (at = NULL, colon = start; colon < end; colon++)
		if (*colon == '@')
			at = colon;
	if (!at) {
		snprintf(out, n, "%s", url);
		return out;
	}
	colon = memchr(start, ':', (size_t)(at - start));
	if (colon)
		snprintf(out, n, "%.*s:***%s", (int)(colon - url), url, at);
	else
		snprintf(out, n, "%.*s***%s", (int)(start - url), url, at);
	return out;
}

/* ---- versions ------------------------------------------------------------------------------ */

/* The release numbers of a version ("0.5.16rc1": 0 5 16, and pre = 1 for the rc); the count,
 * 0 when s does not start with one. A local or post suffix (+npu, .post1) ends the numbers. */
static int release(const char *s, long *v, int max, int *pre)
{
	int n = 0;

	*pre = 0;
	s += *s == 'v';
	while (n < max && *s >= '0' && *s <= '9') {
		long x = 0;

		for (; *s >= '0' && *s <= '9'; s++)
			x = x < 100000000 ? x * 10 + (*s - '0') : x;
		v[n++] = x;
		if (*s != '.' || !(s[1] >= '0' && s[1] <= '9'))
			break;
		s++;
	}
	/* 0.5.16rc1, 0.5.16a0, 0.5.16.dev3: before the release 0.5.16 */
	if (n && (!strncmp(s, "rc", 2) || !strncmp(s, "a", 1) || !strncmp(s, "b", 1) || !strncmp(s, ".dev", 4) ||
		  !strncmp(s, "dev", 3)))
		*pre = 1;
	return n;
}

int npl_version_cmp(const char *installed, const char *floor)
{
	long a[8], b[8];
	int pa, pb, na = release(installed, a, 8, &pa), nb = release(floor, b, 8, &pb), i;

	if (!na || !nb)
		return -2;
	for (i = 0; i < (na > nb ? na : nb); i++) {
		long x = i < na ? a[i] : 0, y = i < nb ? b[i] : 0;

		if (x != y)
			return x < y ? -1 : 1;
	}
	/* the same numbers: a pre-release of the floor is below it */
	return pa && !pb ? -1 : pb && !pa ? 1 : 0;
}
