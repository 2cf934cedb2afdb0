/*
 * page.h: layer input. An SGLang best-practice page read into its recipe sections, the first
 * step of `import` and `drift` (issue 24). Three published forms are read:
 *   - the seed pages' text form (Korean headings, "key: value" metadata, the shell as plain
 *     lines between "모델 배포" and "벤치마크");
 *   - SGLang's MDX pages, older and 2026 layouts ("### TITLE", "**Key**: value" metadata,
 *     "#### Model Deployment" and "#### Benchmark" with fenced shell blocks, "bash Command" or
 *     "shell Command"); a page is MDX when it opens with front matter or has a fenced block
 *     (SGLang's older combined page starts with prose), so its sections are found and what
 *     they lack is said at their headings;
 *   - the same MDX with parts but no titled section (one untitled section; MiMo-V2.5-Pro), the
 *     blocks labelled by their "####" headings.
 * It parses; it never executes. Every section, field and block keeps its page:line:col; what it
 * cannot read (an unknown metadata key, a fence never closed, a shell block outside a
 * deployment or benchmark part, a section with no shell) is a located error, never a guess.
 * Included by the importer and its tests.
 */
#ifndef NPL_PAGE_H
#define NPL_PAGE_H

#include <stddef.h>

#include "npulaunch/arena.h"
#include "npulaunch/diag.h"

/* The metadata of a section, by the English name the MDX pages bold. */
enum npl_page_key {
	NPL_PAGE_MODEL,
	NPL_PAGE_HARDWARE,
	NPL_PAGE_CARDS,
	NPL_PAGE_MODE,          /* "Deploy Mode" */
	NPL_PAGE_QUANTIZATION,
	NPL_PAGE_DATASET,
	NPL_PAGE_TPOT,
	NPL_PAGE_TTFT,
	NPL_PAGE_FORMAT,        /* "*Format: ...*", how a multimodal dataset is written */
	NPL_PAGE_NKEYS
};

enum npl_page_form {
	NPL_PAGE_TEXT,          /* the seed pages */
	NPL_PAGE_MDX,
};

struct npl_page_field {
	const char *value;      /* NULL: the section does not give it */
	struct npl_loc loc;     /* of the value */
};

/* A stretch of shell: a fenced block, or a seed page's lines. */
struct npl_page_block {
	const char *label;      /* the "####" heading it is under inside its part, or NULL */
	const char *text;       /* its lines, each ending in '\n' */
	struct npl_loc loc;     /* of its first line */
};

struct npl_page_section {
	const char *title;      /* NULL: the page has parts but no titled section */
	int title_given;        /* the page has none: title is what import --meta Title gave */
	struct npl_loc loc;     /* of the title (or of the first part) */
	struct npl_page_field field[NPL_PAGE_NKEYS];
	struct npl_page_block *deploy, *bench;
	int ndeploy, nbench;
	const char *tier;       /* "low-latency" or "high-throughput": the page's table that lists it, or NULL */
};

struct npl_page {
	const char *file;
	enum npl_page_form form;
	const char *title;      /* the MDX front matter's title; a text page's first line */
	struct npl_page_section *v;
	int n;
};

/* Read the page text (len bytes, named file in messages) into p, memory in a. 0, or -1 with
 * the errors in d (every error of the page, not only the first). */
int npl_page_read(struct npl_page *p, const char *file, const char *text, size_t len, struct npl_arena *a,
		  struct npl_diag *d);
/* The English name of a metadata key ("Deploy Mode"). */
const char *npl_page_key_name(enum npl_page_key k);
/* Give section s what it lacks (import --meta, or drift from the recipe import was so given):
 * title when it has none (title_given set), and each v[k] (may be NULL) where it gives no value,
 * located at the section with line 0, which import records as given at import. */
void npl_page_give(struct npl_page_section *s, const char *title, const char *const v[NPL_PAGE_NKEYS]);

#endif
