/*
 * bench.h: layer node. A recipe's benchmark, run and judged. npl_bench_argv() builds the
 * recipe's sglang.bench_serving command against the deployment's entry point
 * with --output-file added; npl_verify() reads bench_serving's result records
 * (JSON lines: completed, total_output_tokens, median_tpot_ms, median_ttft_ms,
 * ...; Infinity and NaN as Python writes them are read as null) and judges
 * the last against the recipe: a valid run (every request completed but a
 * tolerated share, a whole number of them and no more than were sent, tokens
 * produced, the recipe's workload) that meets each target the recipe has
 * (median TPOT, median TTFT, median E2E latency, output throughput); a recipe with none is judged on the run alone. Included by the bench and verify commands and tests.
 */
#ifndef NPL_BENCH_H
#define NPL_BENCH_H

#include <cjson/cJSON.h>

#include "npulaunch/diag.h"
#include "npulaunch/site.h"

struct npl_check {
	const char *name;      /* "median TPOT" */
	const char *key;       /* "median_tpot": the JSON key, stable */
	const char *unit;      /* "ms", "requests", "tokens", "tok/s" */
	double value;          /* what was measured; NAN when nothing was */
	double limit;          /* the target it is held to; NAN when none */
	const char *op;        /* how: "<=", ">=", ">"; NULL when none */
	char measured[64];     /* both as a person reads them */
	char target[64];
	int ok;                /* 1 ok, 0 failed, -1 for information only */
	int is_target;         /* held to one of the recipe's targets (not a check of the run's validity) */
};

/* The targets a recipe may carry, as the plan's recipe names them (tpot_ms, ...). */
enum { NPL_TARGET_TPOT, NPL_TARGET_TTFT, NPL_TARGET_E2E, NPL_TARGET_THROUGHPUT, NPL_TARGET_COUNT };

#define NPL_MAX_REASONS 16

struct npl_verdict {
	int record, records;   /* which record was judged (1-based) of how many */
	int line;              /* its line in the file */
	int valid, pass;
	struct npl_check checks[16];
	int nchecks;
	char reasons[1024];    /* why it is invalid or missed, "; "-separated */
	char reason_v[NPL_MAX_REASONS][160];   /* the same, one each */
	int nreasons;
	int ntargets;          /* checks held to a recipe's target; 0: the verdict is on the run alone */
};

/* The benchmark command of a plan (its benchmark which of several; 0 or -1: the first), argv,
 * malloc'ed, NULL-terminated, against base_host:port
 * (NULL: the deployment's entry point) with --output-file out added; NULL and a diagnostic
 * when a site value it needs is missing. */
char **npl_bench_argv(const cJSON *plan, int which, const struct npl_site *site, const char *host, int port,
		      const char *out, struct npl_diag *d);
/* How many benchmarks the plan runs (a recipe's `benchmarks:`, else 1), and the name of one
 * (NULL for a recipe's only benchmark). which counts from 0. */
int npl_bench_count(const cJSON *plan);
const char *npl_bench_name(const cJSON *plan, int which);
/* Free an argv from npl_bench_argv(). */
void npl_argv_free(char **argv);
/* Judge the last record in the len bytes of text (named file in messages) against the plan.
 * Every line counts, whatever bytes it holds: blanks and NUL padding around records are
 * ignored; a line before the last record that is not one is skipped with a located warning;
 * -1 and a located error when the last line that is not blank is no record (an earlier one
 * never stands in for it), when there is none, or when the plan's targets are not numbers.
 * Duplicate keys take the last value, as Python's json does; numbers beyond a double
 * (1e400) are no numbers. */
int npl_verify(const char *file, const char *text, size_t len, const cJSON *plan, double max_failed_pct,
	       struct npl_verdict *v, struct npl_diag *d);
/* The same for the benchmark which of several (0, 1, ...): the last record that is a run of
 * it (its dataset, concurrency, lengths and request rate; another benchmark's are passed over)
 * is judged; none is an invalid verdict, not an error. which -1: npl_verify(). */
int npl_verify_bench(const char *file, const char *text, size_t len, const cJSON *plan, int which,
		     double max_failed_pct, struct npl_verdict *v, struct npl_diag *d);
/* The verdict as JSON with stable keys. */
cJSON *npl_verdict_json(const struct npl_verdict *v, const cJSON *plan, const char *file);

#endif
