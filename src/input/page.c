/* page.c: an SGLang best-practice page into its recipe sections; see page.h. */
#include <string.h>

#include "npulaunch/page.h"
#include "npulaunch/text.h"

/* The metadata keys: the MDX pages' bold names and the seed pages' Korean ones. */
static const struct {
	const char *mdx, *text;
} keys[NPL_PAGE_NKEYS] = {
	[NPL_PAGE_MODEL] = {"Model", "모델"},
	[NPL_PAGE_HARDWARE] = {"Hardware", "하드웨어"},
	[NPL_PAGE_CARDS] = {"Cards", "카드"},
	[NPL_PAGE_MODE] = {"Deploy Mode", "배포 모드"},
	[NPL_PAGE_QUANTIZATION] = {"Quantization", "양자화"},
	[NPL_PAGE_DATASET] = {"Dataset", "데이터셋"},
	[NPL_PAGE_TPOT] = {"TPOT", "TPOT"},
	[NPL_PAGE_TTFT] = {"TTFT", "TTFT"},
	[NPL_PAGE_FORMAT] = {"Format", "형식"},
};

/* The headings of the parts of a section. */
#define DEPLOY "Model Deployment"
#define BENCH "Benchmark"
#define TEXT_DEPLOY "모델 배포 (Model Deployment)"
#define TEXT_BENCH "벤치마크 (Benchmark)"
#define TEXT_SECTIONS "최적 구성 (Optimal Configuration)"
#define TEXT_END "더 알아보기 (Learn more)"

enum part { NONE, PART_DEPLOY, PART_BENCH };

/* The tier tables: "### Low Latency" / "저지연 (Low Latency)" and their high-throughput twins list
 * a row per recipe, linking its section's anchor (MDX) or giving its metadata (both forms). */
static const struct {
	const char *mdx, *text, *tier;
} tiers[] = {
	{"Low Latency", "저지연 (Low Latency)", "low-latency"},
	{"High Throughput", "고처리량 (High Throughput)", "high-throughput"},
};

struct tier_row {
	const char *tier, *anchor;
	const char *cell[NPL_PAGE_NKEYS];
};

/* A bold "**Key**: value" line whose key is not one of ours, reported when its section turns
 * out to be a recipe (the glossary bolds terms the same way). */
struct stray {
	const char *key;
	struct npl_loc loc;
};

struct reader {
	struct npl_page *p;
	struct npl_arena *a;
	struct npl_diag *d;
	const char *text, *end;
	int line;                     /* of the current line */
	struct npl_page_section cur;  /* the section being read */
	int open;                     /* cur holds a heading (or parts) */
	int cap;
	enum part part;
	const char *label;            /* the "####" heading inside the part */
	struct stray strays[8];
	int nstrays;
	int errors;
	int errors_at_open;           /* a section's own errors say enough: no "no shell" after them */
	const char *tier;             /* inside this tier's table part, or NULL */
	int head[16], nhead;          /* the table's columns: a metadata key each, or -1 */
	struct tier_row *rows;
	int nrows, caprows;
	int seen;                     /* the tier headings of the page: bit 0 low latency, bit 1 high throughput */
};

const char *npl_page_key_name(enum npl_page_key k)
{
	return k < NPL_PAGE_NKEYS ? keys[k].mdx : "?";
}

void npl_page_give(struct npl_page_section *s, const char *title, const char *const v[NPL_PAGE_NKEYS])
{
	int k;

	if (!s->title && title) {
		s->title = title;
		s->title_given = 1;
	}
	for (k = 0; k < NPL_PAGE_NKEYS; k++)
		if (!s->field[k].value && v[k]) {
			s->field[k].value = v[k];
			s->field[k].loc = (struct npl_loc){s->loc.file, 0, 0};
		}
}

static struct npl_loc at(const struct reader *r, int line, int col)
{
	return (struct npl_loc){r->p->file, line, col};
}

/* The next line as [*s, *e) without its newline; 0 at the end. */
static int next_line(struct reader *r, const char **s, const char **e)
{
	const char *nl;

	if (r->text >= r->end)
		return 0;
	*s = r->text;
	nl = memchr(r->text, '\n', (size_t)(r->end - r->text));
	*e = nl ? nl : r->end;
	r->text = nl ? nl + 1 : r->end;
	r->line++;
	if (*e > *s && (*e)[-1] == '\r')
		(*e)--;
	return 1;
}

static int starts(const char *s, const char *e, const char *prefix)
{
	size_t n = strlen(prefix);

	return (size_t)(e - s) >= n && !memcmp(s, prefix, n);
}

static int is(const char *s, const char *e, const char *word)
{
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	return (size_t)(e - s) == strlen(word) && !memcmp(s, word, (size_t)(e - s));
}

static int blank(const char *s, const char *e)
{
	for (; s < e; s++)
		if (*s != ' ' && *s != '\t')
			return 0;
	return 1;
}

static char *dup_trim(struct reader *r, const char *s, const char *e)
{
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	return npl_arena_strndup(r->a, s, (size_t)(e - s));
}

static int error(struct reader *r, struct npl_loc loc, const char *fmt, const char *arg)
{
	r->errors++;
	return npl_error(r->d, &loc, fmt, arg);
}

static int is_recipe(const struct npl_page_section *s)
{
	int k;

	for (k = 0; k < NPL_PAGE_NKEYS; k++)
		if (s->field[k].value)
			return 1;
	return s->ndeploy || s->nbench;
}

/* The section read so far, kept when it is a recipe: fields or shell. */
static void close_section(struct reader *r)
{
	struct npl_page *p = r->p;
	int i;

	if (r->open && is_recipe(&r->cur)) {
		for (i = 0; i < r->nstrays; i++)
			error(r, r->strays[i].loc, "unknown metadata '%s' (known: Model, Hardware, Cards, Deploy Mode, Quantization, Dataset, TPOT, TTFT, Format)",
			      r->strays[i].key);
		if (!r->cur.ndeploy && r->errors == r->errors_at_open)
			error(r, r->cur.loc, "section '%s' has no deployment shell",
			      r->cur.title ? r->cur.title : "(untitled)");
		if (p->n == r->cap) {
			r->cap = r->cap ? r->cap * 2 : 16;
			p->v = npl_arena_grow(r->a, p->v, (size_t)p->n, (size_t)r->cap, sizeof(*p->v));
		}
		p->v[p->n++] = r->cur;
	}
	memset(&r->cur, 0, sizeof(r->cur));
	r->open = 0;
	r->part = NONE;
	r->label = NULL;
	r->nstrays = 0;
}

static void open_section(struct reader *r, const char *title, int line, int col)
{
	close_section(r);
	r->cur.title = title;
	r->cur.loc = at(r, line, col);
	r->open = 1;
	r->errors_at_open = r->errors;
}

static void add_block(struct reader *r, enum part part, const char *text, int line)
{
	struct npl_page_section *s = &r->cur;
	struct npl_page_block **v = part == PART_DEPLOY ? &s->deploy : &s->bench;
	int *n = part == PART_DEPLOY ? &s->ndeploy : &s->nbench;

	*v = npl_arena_grow(r->a, *v, (size_t)*n, (size_t)*n + 1, sizeof(**v));
	(*v)[(*n)++] = (struct npl_page_block){r->label, text, at(r, line, 1)};
}

static void set_field(struct reader *r, enum npl_page_key k, const char *s, const char *e, int col)
{
	struct npl_page_field *f = &r->cur.field[k];

	if (f->value) {
		error(r, at(r, r->line, 1), "'%s' is given twice in this section", keys[k].mdx);
		return;
	}
	while (s < e && *s == ' ') {
		s++;
		col++;
	}
	f->value = dup_trim(r, s, e);
	f->loc = at(r, r->line, col);
}

/* ---- tier tables ---------------------------------------------------------- */

/* The tier a heading starts (noted as seen), or NULL */
static const char *tier_of(struct reader *r, const char *heading)
{
	size_t i;

	for (i = 0; i < NPL_ARRAY_SIZE(tiers); i++)
		if (!strcmp(heading, tiers[i].mdx) || !strcmp(heading, tiers[i].text)) {
			r->seen |= 1 << i;
			return tiers[i].tier;
		}
	return NULL;
}

static struct tier_row *add_row(struct reader *r)
{
	if (r->nrows == r->caprows) {
		r->caprows = r->caprows ? r->caprows * 2 : 16;
		r->rows = npl_arena_grow(r->a, r->rows, (size_t)r->nrows, (size_t)r->caprows, sizeof(*r->rows));
	}
	memset(&r->rows[r->nrows], 0, sizeof(r->rows[0]));
	r->rows[r->nrows].tier = r->tier;
	return &r->rows[r->nrows++];
}

/* A line of a tier table, its cells split at sep ('|' or a tab): the header names the columns,
 * a row is kept with its anchor ("[...](#anchor)") and its metadata cells. */
static void tier_line(struct reader *r, const char *s, const char *e, char sep)
{
	const char *cell[16], *c, *link;
	struct tier_row *w;
	int n = 0, k, i, header = 0;

	if (sep == '|') {
		while (s < e && (*s == '|' || *s == ' '))
			s++;
		while (e > s && (e[-1] == '|' || e[-1] == ' '))
			e--;
	}
	for (c = s; n < 16; c++)
		if (c == e || *c == sep) {
			cell[n++] = dup_trim(r, s, c);
			if (c == e)
				break;
			s = c + 1;
		}
	if (!n || strspn(cell[0], "-: ") == strlen(cell[0]))
		return;
	for (i = 0; i < n; i++)
		for (k = 0; k < NPL_PAGE_NKEYS; k++)
			header |= k == NPL_PAGE_MODEL && (!strcmp(cell[i], keys[k].mdx) || !strcmp(cell[i], keys[k].text));
	if (header) {
		for (i = 0; i < n; i++) {
			r->head[i] = -1;
			for (k = 0; k < NPL_PAGE_NKEYS; k++)
				if (!strcmp(cell[i], keys[k].mdx) || !strcmp(cell[i], keys[k].text))
					r->head[i] = k;
		}
		r->nhead = n;
		return;
	}
	if (!r->nhead)
		return;
	w = add_row(r);
	for (i = 0; i < n && i < r->nhead; i++)
		if (r->head[i] >= 0)
			w->cell[r->head[i]] = cell[i];
	for (i = 0; i < n; i++)
		if ((link = strstr(cell[i], "](#")) && strchr(link, ')'))
			w->anchor = npl_arena_strndup(r->a, link + 3, (size_t)(strchr(link, ')') - link - 3));
}

/* An HTML table's row (the older MDX layout): only its link, '<a href="#anchor">' */
static void tier_html(struct reader *r, const char *s, const char *e)
{
	const char *h = strstr(dup_trim(r, s, e), "href=\"#"), *q;

	if (h && (q = strchr(h + 7, '"')))
		add_row(r)->anchor = npl_arena_strndup(r->a, h + 7, (size_t)(q - h - 7));
}

/* The anchor a Markdown renderer gives a heading: lowercase, runs of other characters '-' */
static const char *anchor_of(struct npl_arena *a, const char *title)
{
	char *o = npl_arena_alloc(a, strlen(title) + 1), *q = o;

	for (; *title; title++) {
		unsigned char c = (unsigned char)*title;

		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
			*q++ = (char)c;
		else if (c >= 'A' && c <= 'Z')
			*q++ = (char)(c - 'A' + 'a');
		else if (q > o && q[-1] != '-')
			*q++ = '-';
	}
	while (q > o && q[-1] == '-')
		q--;
	*q = 0;
	return o;
}

static int row_fits(const struct tier_row *w, const struct npl_page_section *s)
{
	static const enum npl_page_key ks[] = {NPL_PAGE_CARDS, NPL_PAGE_MODE, NPL_PAGE_DATASET, NPL_PAGE_TPOT,
					       NPL_PAGE_TTFT};
	size_t i;

	for (i = 0; i < NPL_ARRAY_SIZE(ks); i++) {
		const char *a = w->cell[ks[i]], *b = s->field[ks[i]].value;

		if (ks[i] == NPL_PAGE_TTFT && (!a || !b))
			continue;
		if (!a || !b || !npl_strcaseeq(a, b))
			return 0;
	}
	return 1;
}

/* Each section's tier: the row linking its anchor, else the one row alone with its metadata,
 * else, on a page whose tables are of one tier only (a seed page's rows in one line of text that
 * cannot be split into cells), that tier. The tier is a label, not a setting: on a page so large
 * that comparing every section with every row would take long (a hostile one), the comparisons
 * stop at a bound and the sections left get none. */
static void assign_tiers(struct reader *r)
{
	long budget = 20000000;
	int i, j, n;

	for (i = 0; i < r->p->n; i++) {
		struct npl_page_section *s = &r->p->v[i];
		const char *an = s->title ? anchor_of(r->a, s->title) : NULL, *t = NULL;

		if ((budget -= 2L * r->nrows) < 0)
			break;
		for (j = 0; an && j < r->nrows && !t; j++)
			if (r->rows[j].anchor && !strcmp(r->rows[j].anchor, an))
				t = r->rows[j].tier;
		for (j = n = 0; !t && j < r->nrows; j++)
			if (row_fits(&r->rows[j], s) && n++ == 0)
				s->tier = r->rows[j].tier;
		if (t)
			s->tier = t;
		else if (n > 1)
			s->tier = NULL;
		else if (!n && (r->seen == 1 || r->seen == 2))
			s->tier = tiers[r->seen - 1].tier;
	}
}

/* ---- MDX ------------------------------------------------------------------ */

/* A fenced block from the line after its opening to its closing fence, kept as shell. */
static void mdx_fence(struct reader *r, const char *info, const char *info_end)
{
	int open_line = r->line;
	const char *start = r->text, *s, *e;
	char *lang = dup_trim(r, info, info_end);

	while (next_line(r, &s, &e)) {
		if (!is(s, e, "```"))
			continue;
		if (!r->open || r->part == NONE) {
			/* shell outside a section's parts: the intro's examples, never a recipe */
			if (r->open && is_recipe(&r->cur))
				error(r, at(r, open_line, 1), "a code block outside '" DEPLOY "' and '" BENCH "' in section '%s'",
				      r->cur.title ? r->cur.title : "(untitled)");
			return;
		}
		if (strcmp(lang, "bash Command") && strcmp(lang, "shell Command") && strcmp(lang, "bash") &&
		    strcmp(lang, "shell")) {
			error(r, at(r, open_line, 4), "a '%s' block where shell (bash Command) is expected", lang);
			return;
		}
		add_block(r, r->part, npl_arena_strndup(r->a, start, (size_t)(s - start)), open_line + 1);
		return;
	}
	error(r, at(r, open_line, 1), "the code block opened here is never closed%s", "");
}

/* A heading: sections at "###", parts at "###" (an untitled section's) or "####", labels of
 * blocks at "####" inside a part. level: the count of '#'. */
static void mdx_heading(struct reader *r, int level, const char *s, const char *e)
{
	int col = level + 2;
	const char *title = dup_trim(r, s, e);
	enum part part = !strcmp(title, DEPLOY) ? PART_DEPLOY : !strcmp(title, BENCH) ? PART_BENCH : NONE;

	if (level <= 3)
		r->tier = level == 3 ? tier_of(r, title) : NULL;
	if (level <= 2) {
		close_section(r);
		return;
	}
	if (part != NONE) {
		/* MiMo's "### Model Deployment" starts an untitled section; its "### Benchmark" and
		   every "#### Model Deployment" go on in the section open */
		if (!r->open || (level == 3 && r->part == NONE && !is_recipe(&r->cur)))
			open_section(r, NULL, r->line, col);
		r->part = part;
		r->label = NULL;
		return;
	}
	if (level == 4) {
		/* "#### Prefill node", "#### Benchmark Decode Node (TPOT)": what the next block is */
		if (r->open && r->part != NONE)
			r->label = title;
		return;
	}
	if (level == 3)
		open_section(r, title, r->line, col);
}

/* "**Key**: value" and "*Format: value*" */
static void mdx_field(struct reader *r, const char *s, const char *e)
{
	const char *close, *key;
	int k;

	if (starts(s, e, "**")) {
		close = strstr(s + 2, "**");
		if (!close || close >= e || close + 2 >= e || close[2] != ':')
			return;
		key = npl_arena_strndup(r->a, s + 2, (size_t)(close - s - 2));
		for (k = 0; k < NPL_PAGE_NKEYS && strcmp(keys[k].mdx, key); k++)
			;
		if (k < NPL_PAGE_NKEYS)
			set_field(r, (enum npl_page_key)k, close + 3, e, (int)(close + 3 - s) + 1);
		else if (r->nstrays < (int)(sizeof(r->strays) / sizeof(r->strays[0])))
			r->strays[r->nstrays++] = (struct stray){key, at(r, r->line, 3)};
		return;
	}
	if (starts(s, e, "*Format:") && e[-1] == '*' && e - s > 9)
		set_field(r, NPL_PAGE_FORMAT, s + 8, e - 1, 9);
}

static void read_mdx(struct reader *r)
{
	const char *s, *e;
	int front = 0;

	while (next_line(r, &s, &e)) {
		if (r->line == 1 && is(s, e, "---")) {
			front = 1;
			continue;
		}
		if (front) {
			if (is(s, e, "---"))
				front = 0;
			else if (starts(s, e, "title:"))
				r->p->title = dup_trim(r, s + 6, e);
			continue;
		}
		if (starts(s, e, "```")) {
			mdx_fence(r, s + 3, e);
		} else if (*s == '#') {
			int level = 0;

			while (s + level < e && s[level] == '#')
				level++;
			if (level <= 4 && s + level < e && s[level] == ' ')
				mdx_heading(r, level, s + level + 1, e);
		} else if (r->open && *s == '*') {
			mdx_field(r, s, e);
		} else if (r->tier && *s == '|') {
			tier_line(r, s, e, '|');
		} else if (r->tier) {
			tier_html(r, s, e);
		}
	}
	if (front)
		error(r, at(r, 1, 1), "the front matter opened here is never closed%s", "");
	close_section(r);
	/* "title": "Qwen3-8B" loses its quotes */
	if (r->p->title && r->p->title[0] == '"') {
		size_t n = strlen(r->p->title);

		if (n >= 2 && r->p->title[n - 1] == '"')
			r->p->title = npl_arena_strndup(r->a, r->p->title + 1, n - 2);
	}
}

/* Whether a line opens a fenced block: an MDX page with no front matter (SGLang's older combined
 * "Best Practice on Ascend NPU.mdx" starts with prose) is still MDX; the seed pages have none. */
static int has_fence(const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		if (end - p >= 3 && !memcmp(p, "```", 3))
			return 1;
		p = nl ? nl + 1 : end;
	}
	return 0;
}

/* ---- the seed pages' text form -------------------------------------------- */

/* "키: value" with a key of ours; 1 when it was one */
static int text_field(struct reader *r, const char *s, const char *e)
{
	int k;

	for (k = 0; k < NPL_PAGE_NKEYS; k++) {
		size_t n = strlen(keys[k].text);

		if ((size_t)(e - s) > n && !memcmp(s, keys[k].text, n) && s[n] == ':') {
			/* the column counts characters: the key is Korean, three bytes each */
			const char *q;
			int col = 1;

			for (q = s; q < s + n + 1; q++)
				col += ((unsigned char)*q & 0xC0) != 0x80;
			set_field(r, (enum npl_page_key)k, s + n + 1, e, col);
			return 1;
		}
	}
	return 0;
}

/* The benchmark: prose, then one command whose lines end in '\' but its last. */
static void text_bench(struct reader *r)
{
	const char *s, *e, *start = NULL;
	int line = 0;

	while (next_line(r, &s, &e)) {
		if (!start) {
			if (!starts(s, e, "python"))
				continue;
			start = s;
			line = r->line;
		}
		if (e == s || e[-1] != '\\') {
			add_block(r, PART_BENCH, npl_arena_strndup(r->a, start, (size_t)(r->text - start)), line);
			return;
		}
	}
	error(r, at(r, start ? line : r->line, 1), "the benchmark command %s", start ? "never ends" : "is missing");
}

static void read_text(struct reader *r)
{
	const char *s, *e, *prev = NULL, *prev_end = NULL, *deploy = NULL;
	int in_sections = 0, prev_line = 0, deploy_line = 0;

	while (next_line(r, &s, &e)) {
		if (r->line == 1) {
			r->p->title = dup_trim(r, s, e);
			continue;
		}
		if (is(s, e, TEXT_END))
			break;
		if (!in_sections) {
			const char *line = dup_trim(r, s, e);

			in_sections = is(s, e, TEXT_SECTIONS);
			if (tier_of(r, line))
				r->tier = tier_of(r, line);
			else if (r->tier && memchr(s, '\t', (size_t)(e - s)))
				tier_line(r, s, e, '\t');
			continue;
		}
		if (deploy) {
			if (!is(s, e, TEXT_BENCH))
				continue;
			add_block(r, PART_DEPLOY, npl_arena_strndup(r->a, deploy, (size_t)(s - deploy)), deploy_line);
			deploy = NULL;
			text_bench(r);
			continue;
		}
		if (is(s, e, TEXT_DEPLOY)) {
			deploy = r->text;
			deploy_line = r->line + 1;
			continue;
		}
		if (blank(s, e))
			continue;
		/* a title is the line before the first field */
		if (starts(s, e, "모델:") && prev && !r->open)
			open_section(r, dup_trim(r, prev, prev_end), prev_line, 1);
		if (r->open && text_field(r, s, e))
			continue;
		if (r->open && (r->cur.ndeploy || r->cur.nbench))
			close_section(r);
		prev = s;
		prev_end = e;
		prev_line = r->line;
	}
	if (deploy)
		error(r, at(r, deploy_line - 1, 1), "'" TEXT_DEPLOY "' has no '" TEXT_BENCH "' after it%s", "");
	close_section(r);
}

int npl_page_read(struct npl_page *p, const char *file, const char *text, size_t len, struct npl_arena *a,
		  struct npl_diag *d)
{
	struct reader r;
	size_t bad;

	memset(p, 0, sizeof(*p));
	memset(&r, 0, sizeof(r));
	p->file = file;
	r.p = p;
	r.a = a;
	r.d = d;
	r.text = text;
	r.end = text + len;
	/* import and drift name the page in their JSON and in every location they give */
	if ((bad = npl_utf8_invalid(file, strlen(file))) < strlen(file))
		return npl_error(d, NULL, "page '%s': its path is not UTF-8 text: the byte 0x%02x at byte %zu does not start a character (JSON carries UTF-8 only)",
				 file, (unsigned char)file[bad], bad + 1);
	if (memchr(text, '\0', len))
		return npl_error(d, &(struct npl_loc){file, 1, 1}, "not a text page: it holds a NUL byte");
	if ((bad = npl_utf8_invalid(text, len)) < len) {
		const char *bol = text, *q;
		int line = 1;

		for (q = text; q < text + bad; q++)
			if (*q == '\n') {
				line++;
				bol = q + 1;
			}
		return npl_error(d, &(struct npl_loc){file, line, (int)(text + bad - bol) + 1},
				 "not a text page: the byte 0x%02x here does not start a UTF-8 character",
				 (unsigned char)text[bad]);
	}
	npl_diag_source(d, file, text);
	p->form = (len >= 3 && !memcmp(text, "---", 3)) || has_fence(text, len) ? NPL_PAGE_MDX : NPL_PAGE_TEXT;
	if (p->form == NPL_PAGE_MDX)
		read_mdx(&r);
	else
		read_text(&r);
	assign_tiers(&r);
	if (!r.errors && !p->n)
		return npl_error(d, &(struct npl_loc){file, 1, 1}, "no recipe section in this page");
	return r.errors ? -1 : 0;
}
