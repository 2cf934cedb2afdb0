/*
 * select.h: layer plan. From what a user knows (a model, a latency budget, a workload,
 * the cards at hand) to a recipe. A query qualifies recipes and ranks them:
 *   - TPOT and TTFT are budgets: a recipe qualifies when its target is within
 *     the budget; the largest target wins (the most throughput that still
 *     meets it). A recipe without a TTFT figure does not qualify for a TTFT
 *     budget.
 *   - a dataset qualifies when its input and output lengths cover the
 *     request; the smallest that covers wins. Text requests never match
 *     image recipes, and the reverse.
 *   - --cards N means N cards are available: a recipe needing more does not
 *     qualify; the one using more wins.
 *   - prefix-cache recipes qualify only when --prefix-cache asks for them, and
 *     then only those with that hit rate.
 *   - mode and hardware must match.
 * Preferences apply in that order (TPOT, TTFT, dataset, cards); recipes equal
 * on every one given are a tie. Included by the commands and their tests.
 */
#ifndef NPL_SELECT_H
#define NPL_SELECT_H

#include "npulaunch/buf.h"
#include "npulaunch/recipe.h"

/* A workload: text (input+output tokens) or image (resolution, text input, output). */
struct npl_dataset {
	int image;
	long long in, out;
	int w, h;
	int prefix;          /* percent of the input shared, 0 = none */
};

struct npl_query {
	const char *text;                 /* the query as written, for messages */
	const struct npl_layer *model;    /* NULL: any model */
	long long tpot_us, ttft_us, e2e_us;   /* -1: no budget */
	int has_dataset;
	struct npl_dataset ds;
	int prefix;                       /* --prefix-cache PCT, -1 when not asked */
	int cards;                        /* -1: any */
	enum npl_mode mode;               /* NPL_MODE_NONE: any */
	const struct npl_layer *hardware; /* NULL: any */
};

enum npl_pick {
	NPL_PICK_ONE,        /* one best recipe */
	NPL_PICK_AMBIGUOUS,  /* several equally good */
	NPL_PICK_NONE,       /* nothing qualifies */
};

struct npl_candidate {
	const struct npl_layer *R;
	const char *note;    /* ambiguous: the option that selects it; none: what it misses */
	double distance;     /* none: how far it is from qualifying */
};

struct npl_selection {
	enum npl_pick pick;
	const struct npl_layer *best;
	const char *why;             /* one line: why best won */
	struct npl_candidate *cands; /* ambiguous: the tied; none: the nearest first */
	int ncands;
	int nqualified;
};

/* Parse a request like "64k+1k", "3.5k+1.5k", "1024x1024 (30)+1024", "1080p_30+256",
 * "128k+1k (90% prefix cache hit rate)"; -1 and a reason in err when it is none of those. */
int npl_dataset_parse(const char *s, struct npl_dataset *ds, char *err, size_t n);
/* The workload a recipe was measured with (its benchmark). */
void npl_recipe_dataset(const struct npl_db *db, const struct npl_layer *R, struct npl_dataset *ds);
/* The --dataset text that names a recipe's workload ("128k+1k", "1024x1024 (30)+1024"). */
const char *npl_recipe_dataset_option(struct npl_arena *a, const struct npl_layer *R);
/* 1 when R meets the query; otherwise 0 and, if misses is not NULL, what it misses. */
int npl_query_qualifies(const struct npl_db *db, const struct npl_query *q, const struct npl_layer *R,
			struct npl_buf *misses, double *distance);
/* Choose among the database's recipes (strings in arena). */
void npl_select(const struct npl_db *db, const struct npl_query *q, struct npl_selection *s,
		struct npl_arena *a);
/* Choose the nearest recipe that does not qualify (for --nearest); pick NONE if there is none. */
void npl_select_nearest(const struct npl_db *db, const struct npl_query *q, struct npl_selection *s,
			struct npl_arena *a);

#endif
