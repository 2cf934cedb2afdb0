/*
 * select.c: SLO queries -> recipe: qualification, ranking, ties with the
 * option that breaks them, and the nearest misses; see select.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/arena.h"
#include "npulaunch/select.h"
#include "npulaunch/text.h"

/* ---- datasets ------------------------------------------------------------- */

/* "64k", "3.5k", "1024", "1.5k": tokens, k = 1000 as the pages write them. */
static int parse_tokens(const char *s, size_t n, long long *out)
{
	long long whole = 0, frac = 0, scale = 1;
	size_t i = 0;
	int digits = 0, k = 0;

	if (n && (s[n - 1] == 'k' || s[n - 1] == 'K')) {
		k = 1;
		n--;
	}
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
		whole = whole * 10 + (s[i] - '0');
		if (whole > 1000000000LL)
			return -1;
	}
	if (i < n && s[i] == '.') {
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
			if (scale >= 1000000)
				return -1;
			frac = frac * 10 + (s[i] - '0');
			scale *= 10;
		}
	}
	if (i != n || !digits)
		return -1;
	if (k) {
		*out = whole * 1000 + frac * 1000 / scale;
		return frac * 1000 % scale ? -1 : 0;
	}
	if (frac)
		return -1;
	*out = whole;
	return 0;
}

/* A whole number within spec at the start of the n bytes at s (the strict decimal reader);
 * its length, or 0 when there is none. */
static size_t whole_at(const char *s, size_t n, double min, double max, int *out)
{
	const struct npl_number_spec spec = {"a whole number", min, max, 1};
	size_t len = npl_decimal_span(s, n, 1);
	double v;

	if (!len || npl_parse_number_n(s, len, &spec, &v))
		return 0;
	*out = (int)v;
	return len;
}

/* "WIDTHxHEIGHT" at the start of the n bytes at s, each 1 to 100000 pixels; its length, or 0. */
static size_t image_size(const char *s, size_t n, int *w, int *h)
{
	size_t a = whole_at(s, n, 1, 100000, w), b;

	if (!a || a >= n || s[a] != 'x' || !(b = whole_at(s + a + 1, n - a - 1, 1, 100000, h)))
		return 0;
	return a + 1 + b;
}

static void trim(const char **s, size_t *n)
{
	while (*n && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*n)--;
	}
	while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
		(*n)--;
}

int npl_dataset_parse(const char *s, struct npl_dataset *ds, char *err, size_t errn)
{
	const char *p = s, *plus, *paren;
	size_t n = strlen(s);
	int w, h;
	size_t used;

	memset(ds, 0, sizeof(*ds));
	trim(&p, &n);
	/* "... (90% prefix cache hit rate)" as the pages write it */
	paren = memchr(p, '(', n);
	if (paren && memchr(paren, '%', (size_t)(p + n - paren))) {
		int pct;
		size_t k = whole_at(paren + 1, (size_t)(p + n - paren - 1), 1, 99, &pct);

		if (!k || paren[1 + k] != '%') {
			snprintf(err, errn, "cannot read the prefix cache hit rate in '%s'", s);
			return -1;
		}
		ds->prefix = pct;
		n = (size_t)(paren - p);
		trim(&p, &n);
	}
	plus = NULL;
	for (size_t i = n; i > 0; i--)
		if (p[i - 1] == '+') {
			plus = p + i - 1;
			break;
		}
	if (!plus) {
		snprintf(err, errn, "'%s' is not a dataset: write INPUT+OUTPUT (64k+1k, 3.5k+1.5k) or an image notation (1024x1024 (30)+1024, 1080p_30+256)",
			 s);
		return -1;
	}
	{
		const char *o = plus + 1;
		size_t on = (size_t)(p + n - o);

		trim(&o, &on);
		if (parse_tokens(o, on, &ds->out) || ds->out <= 0) {
			snprintf(err, errn, "'%.*s' in '%s' is not a number of output tokens", (int)on, o, s);
			return -1;
		}
	}
	n = (size_t)(plus - p);
	trim(&p, &n);
	/* WxH (T): an image of W x H pixels and T text tokens */
	if ((used = image_size(p, n, &w, &h))) {
		const char *q = p + used;
		size_t qn = n - used;

		trim(&q, &qn);
		if (qn < 2 || q[0] != '(' || q[qn - 1] != ')' ||
		    parse_tokens(q + 1, qn - 2, &ds->in)) {
			snprintf(err, errn, "'%s': an image dataset is WIDTHxHEIGHT (TEXT TOKENS)+OUTPUT, like 1024x1024 (30)+1024", s);
			return -1;
		}
		ds->image = 1;
		ds->w = w;
		ds->h = h;
		return 0;
	}
	/* 1080p_30: a 16:9 image of 1080 lines and 30 text tokens */
	if ((used = whole_at(p, n, 1, 100000, &h)) && used + 2 <= n && p[used] == 'p' && p[used + 1] == '_') {
		used += 2;
		if (parse_tokens(p + used, n - used, &ds->in)) {
			snprintf(err, errn, "'%s': write the image as HEIGHTp_TEXT+OUTPUT, like 1080p_30+256", s);
			return -1;
		}
		ds->image = 1;
		ds->h = h;
		ds->w = (h * 16 + 8) / 9;
		return 0;
	}
	if (parse_tokens(p, n, &ds->in) || ds->in <= 0) {
		snprintf(err, errn, "'%.*s' in '%s' is not a number of input tokens", (int)n, p, s);
		return -1;
	}
	return 0;
}

#define EFF(R, L, field)                                                                           \
	(L[0]->bench.field.set ? L[0]->bench.field.v : L[1] && L[1]->bench.field.set ? L[1]->bench.field.v \
	 : L[2] && L[2]->bench.field.set ? L[2]->bench.field.v : L[3] && L[3]->bench.field.set        \
	 ? L[3]->bench.field.v : 0)

void npl_recipe_dataset(const struct npl_db *db, const struct npl_layer *R, struct npl_dataset *ds)
{
	const struct npl_layer *L[4] = {R, R->model, R->hardware, db->defaults};
	const char *kind = NULL, *res = NULL;
	int i;

	memset(ds, 0, sizeof(*ds));
	for (i = 0; i < 4; i++) {
		if (L[i] && !kind)
			kind = L[i]->bench.dataset.s;
		if (L[i] && !res)
			res = L[i]->bench.resolution.s;
	}
	ds->in = EFF(R, L, input);
	ds->out = EFF(R, L, output);
	if (kind && !strcmp(kind, "image")) {
		ds->image = 1;
		if (res)
			image_size(res, strlen(res), &ds->w, &ds->h);
	} else if (kind && !strcmp(kind, "generated-shared-prefix")) {
		ds->prefix = EFF(R, L, prefix);
	}
}

const char *npl_recipe_dataset_option(struct npl_arena *a, const struct npl_layer *R)
{
	const char *d = R->dataset, *paren = strchr(d, '(');

	/* a prefix cache rate is asked with --prefix-cache, not in the dataset */
	if (paren && strchr(paren, '%')) {
		size_t n = (size_t)(paren - d);

		while (n && d[n - 1] == ' ')
			n--;
		return npl_arena_strndup(a, d, n);
	}
	return d;
}

static void fmt_tokens(char *out, size_t n, long long v)
{
	if (v >= 1000 && v % 1000 == 0)
		snprintf(out, n, "%lldk", v / 1000);
	else if (v >= 1000 && v % 100 == 0)
		snprintf(out, n, "%lld.%lldk", v / 1000, v % 1000 / 100);
	else
		snprintf(out, n, "%lld", v);
}

static void fmt_dataset(char *out, size_t n, const struct npl_dataset *ds)
{
	char a[32], b[32];

	fmt_tokens(a, sizeof(a), ds->in);
	fmt_tokens(b, sizeof(b), ds->out);
	if (ds->image)
		snprintf(out, n, "%dx%d (%s)+%s", ds->w, ds->h, a, b);
	else
		snprintf(out, n, "%s+%s", a, b);
}

/* ---- qualification -------------------------------------------------------- */

/* How far over, in [0, 1): over / (over + scale). */
static double squash(long long over, long long scale)
{
	return (double)over / ((double)over + (double)(scale > 0 ? scale : 1));
}

static void miss(struct npl_buf *b, double *dist, double d, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void miss(struct npl_buf *b, double *dist, double d, const char *fmt, ...)
{
	va_list ap;

	*dist += d;
	if (!b)
		return;
	if (b->len)
		npl_buf_puts(b, "; ");
	va_start(ap, fmt);
	npl_buf_vprintf(b, fmt, ap);
	va_end(ap);
}

int npl_query_qualifies(const struct npl_db *db, const struct npl_query *q, const struct npl_layer *R,
			struct npl_buf *misses, double *distance)
{
	struct npl_dataset ds;
	double dist = 0;
	char a[96], b[32];

	npl_recipe_dataset(db, R, &ds);
	/* Each dimension missed adds between 1 and 2 by how far it misses (a ratio
	 * squashed into [0, 1)); a kind of miss that no amount closes adds more. */
	if (q->model && R->model != q->model)
		miss(misses, &dist, 100, "a recipe of %s, not %s", R->model->name, q->model->name);
	if (q->hardware && R->hardware != q->hardware)
		miss(misses, &dist, 2, "hardware %s, not %s", R->hardware->id, q->hardware->id);
	if (q->mode != NPL_MODE_NONE && R->mode != q->mode)
		miss(misses, &dist, 1, "mode %s, not %s", npl_mode_name(R->mode), npl_mode_name(q->mode));
	if (q->tpot_us >= 0 && R->tpot_us < 0) {
		npl_format_duration(a, sizeof(a), q->tpot_us);
		miss(misses, &dist, 2, "no TPOT figure to meet the %s budget", a);
	} else if (q->tpot_us >= 0 && R->tpot_us > q->tpot_us) {
		npl_format_duration(a, sizeof(a), q->tpot_us);
		npl_format_duration(b, sizeof(b), R->tpot_us - q->tpot_us);
		miss(misses, &dist, 1 + squash(R->tpot_us - q->tpot_us, q->tpot_us),
		     "TPOT %s exceeds the %s budget by %s", R->tpot_text, a, b);
	}
	if (q->ttft_us >= 0) {
		npl_format_duration(a, sizeof(a), q->ttft_us);
		if (R->ttft_us < 0) {
			miss(misses, &dist, 2, "no TTFT figure to meet the %s budget", a);
		} else if (R->ttft_us > q->ttft_us) {
			npl_format_duration(b, sizeof(b), R->ttft_us - q->ttft_us);
			miss(misses, &dist, 1 + squash(R->ttft_us - q->ttft_us, q->ttft_us),
			     "TTFT %s exceeds the %s budget by %s", R->ttft_text, a, b);
		}
	}
	if (q->e2e_us >= 0) {
		npl_format_duration(a, sizeof(a), q->e2e_us);
		if (R->e2e_us < 0) {
			miss(misses, &dist, 2, "no E2E figure to meet the %s budget", a);
		} else if (R->e2e_us > q->e2e_us) {
			npl_format_duration(b, sizeof(b), R->e2e_us - q->e2e_us);
			miss(misses, &dist, 1 + squash(R->e2e_us - q->e2e_us, q->e2e_us),
			     "E2E %s exceeds the %s budget by %s", R->e2e_text, a, b);
		}
	}
	if (q->has_dataset) {
		fmt_dataset(a, sizeof(a), &q->ds);
		if (ds.image != q->ds.image) {
			miss(misses, &dist, 3, "%s dataset %s, the request is %s", ds.image ? "an image" : "a text",
			     R->dataset, q->ds.image ? "an image" : "text");
		} else {
			struct npl_buf why = NPL_BUF_INIT;
			double short_by = 0;

			if (ds.in < q->ds.in) {
				npl_buf_printf(&why, "input %lld < %lld", ds.in, q->ds.in);
				short_by += squash(q->ds.in - ds.in, ds.in);
			}
			if (ds.out < q->ds.out) {
				npl_buf_printf(&why, "%soutput %lld < %lld", why.len ? ", " : "", ds.out, q->ds.out);
				short_by += squash(q->ds.out - ds.out, ds.out);
			}
			if (ds.image && (long long)ds.w * ds.h < (long long)q->ds.w * q->ds.h) {
				npl_buf_printf(&why, "%simage %dx%d < %dx%d", why.len ? ", " : "", ds.w, ds.h,
					       q->ds.w, q->ds.h);
				short_by += 0.5;
			}
			if (why.len)
				miss(misses, &dist, 1 + short_by / 2.5, "dataset %s does not cover %s (%s)", R->dataset,
				     a, npl_buf_str(&why));
			npl_buf_release(&why);
		}
	}
	/* without --prefix-cache any recipe qualifies (a query prefers those without one: better()) */
	if (q->prefix >= 0 && ds.prefix != q->prefix) {
		if (ds.prefix)
			miss(misses, &dist, 1 + (double)abs(ds.prefix - q->prefix) / 100,
			     "prefix cache hit rate %d%%, not %d%%", ds.prefix, q->prefix);
		else
			miss(misses, &dist, 2, "no prefix cache (the query asks %d%%)", q->prefix);
	}
	if (q->cards >= 0 && R->cards > q->cards)
		miss(misses, &dist, 1 + squash(R->cards - q->cards, q->cards),
		     "needs %d cards, %d available (%d more)", R->cards, q->cards, R->cards - q->cards);
	if (distance)
		*distance = dist;
	return dist == 0;
}

/* <0 when x is the better recipe for the query, 0 when they tie. */
static int better(const struct npl_db *db, const struct npl_query *q, const struct npl_layer *x,
		  const struct npl_layer *y)
{
	if (q->tpot_us >= 0 && x->tpot_us != y->tpot_us && x->tpot_us >= 0 && y->tpot_us >= 0)
		return x->tpot_us > y->tpot_us ? -1 : 1;
	if (q->ttft_us >= 0 && x->ttft_us != y->ttft_us)
		return x->ttft_us > y->ttft_us ? -1 : 1;
	if (q->e2e_us >= 0 && x->e2e_us != y->e2e_us)
		return x->e2e_us > y->e2e_us ? -1 : 1;
	if (q->has_dataset || q->prefix < 0) {
		struct npl_dataset a, b;
		long long pa, pb;

		npl_recipe_dataset(db, x, &a);
		npl_recipe_dataset(db, y, &b);
		/* the plain workload when the query leaves it open: text over images, and no prefix
		 * cache over a prefix-cache measurement */
		if (!q->has_dataset && a.image != b.image)
			return a.image ? 1 : -1;
		if (q->prefix < 0 && !a.prefix != !b.prefix)
			return a.prefix ? 1 : -1;
		if (!q->has_dataset)
			goto cards;
		pa = (long long)a.w * a.h;
		pb = (long long)b.w * b.h;
		if (pa != pb)
			return pa < pb ? -1 : 1;
		if (a.in != b.in)
			return a.in < b.in ? -1 : 1;
		if (a.out != b.out)
			return a.out < b.out ? -1 : 1;
	}
cards:
	if (q->cards >= 0 && x->cards != y->cards)
		return x->cards > y->cards ? -1 : 1;
	return 0;
}

struct rank_ctx {
	const struct npl_db *db;
	const struct npl_query *q;
};

static struct rank_ctx rank_ctx;

static int rank_cmp(const void *a, const void *b)
{
	const struct npl_layer *x = *(const struct npl_layer *const *)a;
	const struct npl_layer *y = *(const struct npl_layer *const *)b;
	int c = better(rank_ctx.db, rank_ctx.q, x, y);

	return c ? c : strcmp(x->id, y->id);
}

/* The qualifying recipes, best first; returns how many. */
static int qualified(const struct npl_db *db, const struct npl_query *q, const struct npl_layer **v)
{
	int i, n = 0;

	for (i = 0; i < db->nrecipes; i++)
		if (npl_query_qualifies(db, q, db->recipes[i], NULL, NULL))
			v[n++] = db->recipes[i];
	rank_ctx.db = db;
	rank_ctx.q = q;
	if (n > 1)
		qsort(v, (size_t)n, sizeof(*v), rank_cmp);
	return n;
}

/* The unique best of a query, or NULL. */
static const struct npl_layer *unique_best(const struct npl_db *db, const struct npl_query *q,
					   const struct npl_layer **tmp)
{
	int n = qualified(db, q, tmp);

	if (n == 0 || (n > 1 && better(db, q, tmp[0], tmp[1]) == 0))
		return NULL;
	return tmp[0];
}

/* One option a tie could be broken with: its text and the query it makes. */
struct option_try {
	char text[160];
	struct npl_query q;
};

/* The options that narrow q towards R: those not given already. */
static int options_for(const struct npl_db *db, const struct npl_query *q, const struct npl_layer *R,
		       struct npl_arena *a, struct option_try *v)
{
	const char *ds = npl_recipe_dataset_option(a, R);
	struct npl_buf b = NPL_BUF_INIT;
	char err[256];
	int n = 0;

	if (!q->has_dataset) {
		v[n].q = *q;
		if (npl_dataset_parse(ds, &v[n].q.ds, err, sizeof(err)) == 0) {
			v[n].q.ds.prefix = 0;
			v[n].q.has_dataset = 1;
			npl_buf_puts(&b, "--dataset ");
			npl_shell_quote(&b, ds);
			snprintf(v[n].text, sizeof(v[n].text), "%s", npl_buf_str(&b));
			n++;
		}
	}
	if (q->prefix < 0) {
		struct npl_dataset rd;

		npl_recipe_dataset(db, R, &rd);
		v[n].q = *q;
		v[n].q.prefix = rd.prefix;
		snprintf(v[n].text, sizeof(v[n].text), "--prefix-cache %d", rd.prefix);
		n++;
	}
	if (R->tpot_us >= 0 && (q->tpot_us < 0 || q->tpot_us > R->tpot_us)) {
		v[n].q = *q;
		v[n].q.tpot_us = R->tpot_us;
		snprintf(v[n].text, sizeof(v[n].text), "--tpot %s", R->tpot_text);
		n++;
	}
	if (R->ttft_us >= 0 && (q->ttft_us < 0 || q->ttft_us > R->ttft_us)) {
		v[n].q = *q;
		v[n].q.ttft_us = R->ttft_us;
		snprintf(v[n].text, sizeof(v[n].text), "--ttft %s", R->ttft_text);
		n++;
	}
	if (R->e2e_us >= 0 && (q->e2e_us < 0 || q->e2e_us > R->e2e_us)) {
		v[n].q = *q;
		v[n].q.e2e_us = R->e2e_us;
		snprintf(v[n].text, sizeof(v[n].text), "--e2e %s", R->e2e_text);
		n++;
	}
	if (q->cards < 0 || q->cards > R->cards) {
		v[n].q = *q;
		v[n].q.cards = R->cards;
		snprintf(v[n].text, sizeof(v[n].text), "--cards %d", R->cards);
		n++;
	}
	if (q->mode == NPL_MODE_NONE) {
		v[n].q = *q;
		v[n].q.mode = R->mode;
		snprintf(v[n].text, sizeof(v[n].text), "--mode %s", npl_mode_name(R->mode));
		n++;
	}
	npl_buf_release(&b);
	return n;
}

/* Merge what option y adds to the query of option x. */
static void combine(struct npl_query *t, const struct npl_query *q, const struct npl_query *y)
{
	if (y->has_dataset != q->has_dataset) {
		t->has_dataset = 1;
		t->ds = y->ds;
	}
	if (y->tpot_us != q->tpot_us)
		t->tpot_us = y->tpot_us;
	if (y->ttft_us != q->ttft_us)
		t->ttft_us = y->ttft_us;
	if (y->e2e_us != q->e2e_us)
		t->e2e_us = y->e2e_us;
	if (y->cards != q->cards)
		t->cards = y->cards;
	if (y->mode != q->mode)
		t->mode = y->mode;
	if (y->prefix != q->prefix)
		t->prefix = y->prefix;
}

typedef const struct npl_layer *(*picker)(const struct npl_db *db, const struct npl_query *q,
					  const struct npl_layer **tmp);

/* An option (or two) that, added to the query, makes R the unique pick. */
static const char *breaker(const struct npl_db *db, const struct npl_query *q, const struct npl_layer *R,
			   struct npl_arena *a, const struct npl_layer **tmp, picker pick)
{
	struct option_try v[8];
	int n = options_for(db, q, R, a, v), i, j;

	for (i = 0; i < n; i++)
		if (pick(db, &v[i].q, tmp) == R)
			return npl_arena_strdup(a, v[i].text);
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++) {
			struct npl_query t = v[i].q;

			combine(&t, q, &v[j].q);
			if (pick(db, &t, tmp) == R)
				return npl_arena_printf(a, "%s %s", v[i].text, v[j].text);
		}
	return npl_arena_printf(a, "use the id %s", R->id);
}

static const char *why(const struct npl_db *db, const struct npl_query *q, const struct npl_layer *R,
		       int nqual, struct npl_arena *a)
{
	struct npl_buf b = NPL_BUF_INIT;
	char x[96];
	const char *s;

	if (q->tpot_us >= 0) {
		npl_format_duration(x, sizeof(x), q->tpot_us);
		npl_buf_printf(&b, "TPOT %s is the largest target within the %s budget", R->tpot_text, x);
	}
	if (q->ttft_us >= 0) {
		npl_format_duration(x, sizeof(x), q->ttft_us);
		npl_buf_printf(&b, "%sTTFT %s within %s", b.len ? "; " : "", R->ttft_text, x);
	}
	if (q->e2e_us >= 0) {
		npl_format_duration(x, sizeof(x), q->e2e_us);
		npl_buf_printf(&b, "%sE2E %s within %s", b.len ? "; " : "", R->e2e_text, x);
	}
	if (q->has_dataset) {
		fmt_dataset(x, sizeof(x), &q->ds);
		npl_buf_printf(&b, "%sdataset %s is the smallest that covers %s", b.len ? "; " : "",
			       R->dataset, x);
	}
	if (q->cards >= 0)
		npl_buf_printf(&b, "%suses %d of %d cards", b.len ? "; " : "", R->cards, q->cards);
	if (nqual == 1)
		npl_buf_printf(&b, "%sthe only recipe%s%s that qualifies", b.len ? "; " : "",
			       q->model ? " of " : "", q->model ? q->model->name : "");
	else
		npl_buf_printf(&b, "%sbest of %d that qualify%s", b.len ? "; " : "", nqual,
			       !q->has_dataset || q->prefix < 0
				       ? " (where the query leaves the workload open, text without a prefix cache is preferred)"
				       : "");
	s = npl_arena_strdup(a, npl_buf_str(&b));
	npl_buf_release(&b);
	(void)db;
	return s;
}

static int cand_cmp(const void *a, const void *b)
{
	const struct npl_candidate *x = a, *y = b;
	int c;

	if (x->distance != y->distance)
		return x->distance < y->distance ? -1 : 1;
	c = better(rank_ctx.db, rank_ctx.q, x->R, y->R);
	return c ? c : strcmp(x->R->id, y->R->id);
}

/* Every recipe of the query's model (or all) that does not qualify, nearest first. */
static void misses(const struct npl_db *db, const struct npl_query *q, struct npl_selection *s,
		   struct npl_arena *a)
{
	int i;

	s->cands = npl_arena_calloc(a, (size_t)db->nrecipes + 1, sizeof(*s->cands));
	s->ncands = 0;
	for (i = 0; i < db->nrecipes; i++) {
		const struct npl_layer *R = db->recipes[i];
		struct npl_buf b = NPL_BUF_INIT;
		double d;

		if (q->model && R->model != q->model)
			continue;
		if (!npl_query_qualifies(db, q, R, &b, &d)) {
			s->cands[s->ncands].R = R;
			s->cands[s->ncands].note = npl_arena_strdup(a, npl_buf_str(&b));
			s->cands[s->ncands].distance = d;
			s->ncands++;
		}
		npl_buf_release(&b);
	}
	rank_ctx.db = db;
	rank_ctx.q = q;
	if (s->ncands > 1)
		qsort(s->cands, (size_t)s->ncands, sizeof(*s->cands), cand_cmp);
}

/* How many of the nearest are equally near (and equally preferred). */
static int nearest_ties(const struct npl_db *db, const struct npl_query *q, const struct npl_selection *s)
{
	int ties = 1;

	while (ties < s->ncands && s->cands[ties].distance == s->cands[0].distance &&
	       better(db, q, s->cands[0].R, s->cands[ties].R) == 0)
		ties++;
	return ties;
}

/* The unique nearest of a query that nothing meets, or NULL. */
static const struct npl_layer *unique_nearest(const struct npl_db *db, const struct npl_query *q,
					      const struct npl_layer **tmp)
{
	struct npl_selection s;
	struct npl_arena a;
	const struct npl_layer *R = NULL;

	(void)tmp;
	npl_arena_init(&a);
	misses(db, q, &s, &a);
	if (s.ncands && nearest_ties(db, q, &s) == 1 && qualified(db, q, tmp) == 0)
		R = s.cands[0].R;
	npl_arena_release(&a);
	return R;
}

void npl_select(const struct npl_db *db, const struct npl_query *q, struct npl_selection *s,
		struct npl_arena *a)
{
	const struct npl_layer **v = npl_xcalloc((size_t)db->nrecipes + 1, sizeof(*v));
	const struct npl_layer **tmp = npl_xcalloc((size_t)db->nrecipes + 1, sizeof(*tmp));
	int n, ties, i;

	memset(s, 0, sizeof(*s));
	n = qualified(db, q, v);
	s->nqualified = n;
	if (n == 0) {
		s->pick = NPL_PICK_NONE;
		misses(db, q, s, a);
		goto out;
	}
	for (ties = 1; ties < n && better(db, q, v[0], v[ties]) == 0; ties++)
		;
	if (ties == 1) {
		s->pick = NPL_PICK_ONE;
		s->best = v[0];
		s->why = why(db, q, v[0], n, a);
		goto out;
	}
	s->pick = NPL_PICK_AMBIGUOUS;
	s->cands = npl_arena_calloc(a, (size_t)ties, sizeof(*s->cands));
	s->ncands = ties;
	for (i = 0; i < ties; i++) {
		s->cands[i].R = v[i];
		s->cands[i].note = breaker(db, q, v[i], a, tmp, unique_best);
	}
out:
	free(v);
	free(tmp);
}

void npl_select_nearest(const struct npl_db *db, const struct npl_query *q, struct npl_selection *s,
			struct npl_arena *a)
{
	const struct npl_layer **tmp = npl_xcalloc((size_t)db->nrecipes + 1, sizeof(*tmp));
	int ties, i;

	memset(s, 0, sizeof(*s));
	misses(db, q, s, a);
	if (s->ncands == 0) {
		s->pick = NPL_PICK_NONE;
	} else if ((ties = nearest_ties(db, q, s)) > 1) {
		s->pick = NPL_PICK_AMBIGUOUS;
		s->ncands = ties;
		for (i = 0; i < ties; i++)
			s->cands[i].note = npl_arena_printf(a, "%s; %s", s->cands[i].note,
							    breaker(db, q, s->cands[i].R, a, tmp, unique_nearest));
	} else {
		s->pick = NPL_PICK_ONE;
		s->best = s->cands[0].R;
		s->why = npl_arena_printf(a, "the nearest: %s", s->cands[0].note);
	}
	free(tmp);
}
