/* bench.c: the recipe's benchmark command, and the verdict on its results; see bench.h. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/arena.h"
#include "npulaunch/bench.h"
#include "npulaunch/plan.h"
#include "npulaunch/text.h"

/* The URL of the deployment's entry point: the router, or the PD-mixed server's first instance. */
static const char *entry_url(const cJSON *plan)
{
	const cJSON *r = npl_plan_role(plan, "router");

	if (!r)
		r = npl_plan_role(plan, "pd-mixed");
	return npl_json_str(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "endpoints"), 0), "url");
}

char **npl_bench_argv(const cJSON *plan, int which, const struct npl_site *site, const char *host, int port,
		      const char *out, struct npl_diag *d)
{
	const cJSON *node = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(npl_plan_role(plan, "bench"), "nodes"),
					       which < 0 ? 0 : which);
	const cJSON *it, *v;
	char **argv, ehost[512] = "", eport[16] = "";
	int n = 0, cap = 256, missing = -1;
	struct npl_buf b = NPL_BUF_INIT;

	if (!node) {
		npl_error(d, NULL, "the plan has no benchmark");
		return NULL;
	}
	/* the entry point: http://HOST:PORT, IPv6 in brackets */
	if (npl_pval_resolve(&b, entry_url(plan) ? entry_url(plan) : "", site, &missing)) {
		npl_error(d, NULL, "the benchmark's entry point needs --%s", npl_site_key_name(missing));
		npl_buf_release(&b);
		return NULL;
	}
	{
		const char *u = npl_buf_str(&b), *h = strstr(u, "://"), *colon;

		h = h ? h + 3 : u;
		colon = strrchr(h, ':');
		if (colon && colon > h) {
			size_t hl = (size_t)(colon - h);

			if (*h == '[' && hl >= 2) {
				h++;
				hl -= 2;
			}
			snprintf(ehost, sizeof(ehost), "%.*s", (int)hl, h);
			snprintf(eport, sizeof(eport), "%s", colon + 1);
		}
	}
	npl_buf_release(&b);
	if (host)
		snprintf(ehost, sizeof(ehost), "%s", host);
	if (port > 0)
		snprintf(eport, sizeof(eport), "%d", port);
	argv = npl_xcalloc((size_t)cap, sizeof(*argv));
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(node, "launch"))
		if (n < cap - 8)
			argv[n++] = npl_xstrdup(it->valuestring);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(node, "flags")) {
		const char *flag = npl_json_str(it, "flag");

		if (!strcmp(flag, "--output-file"))
			continue;
		if (n < cap - 8)
			argv[n++] = npl_xstrdup(flag);
		cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(it, "values")) {
			struct npl_buf w = NPL_BUF_INIT;

			if (!strcmp(flag, "--host") && *ehost)
				npl_buf_puts(&w, ehost);
			else if (!strcmp(flag, "--port") && *eport)
				npl_buf_puts(&w, eport);
			else if (npl_pval_resolve(&w, v->valuestring, site, &missing)) {
				npl_error(d, NULL, "the benchmark needs --%s", npl_site_key_name(missing));
				npl_buf_release(&w);
				npl_argv_free(argv);
				return NULL;
			}
			if (n < cap - 8)
				argv[n++] = npl_buf_detach(&w);
			else
				npl_buf_release(&w);
		}
	}
	argv[n++] = npl_xstrdup("--output-file");
	argv[n++] = npl_xstrdup(out);
	argv[n] = NULL;
	return argv;
}

void npl_argv_free(char **argv)
{
	char **p;

	for (p = argv; p && *p; p++)
		free(*p);
	free(argv);
}

/* Python's json.dumps writes Infinity, -Infinity and NaN; JSON has none of them. Outside
 * strings they become null (padded, so that columns stay where they were). */
static void sanitize(char *s)
{
	int in_str = 0;

	for (; *s; s++) {
		if (in_str) {
			if (*s == '\\' && s[1])
				s++;
			else if (*s == '"')
				in_str = 0;
			continue;
		}
		if (*s == '"') {
			in_str = 1;
		} else if (!strncmp(s, "-Infinity", 9)) {
			memcpy(s, "null     ", 9);
			s += 8;
		} else if (!strncmp(s, "Infinity", 8)) {
			memcpy(s, "null    ", 8);
			s += 7;
		} else if (!strncmp(s, "NaN", 3)) {
			memcpy(s, "-1 ", 3);   /* a negative that no check accepts */
			s += 2;
		}
	}
}

/* A record's member: the last of that name, as Python's json reads duplicate keys. */
static const cJSON *member(const cJSON *rec, const char *key)
{
	const cJSON *it, *found = NULL;

	cJSON_ArrayForEach(it, rec)
		if (it->string && !strcmp(it->string, key))
			found = it;
	return found;
}

/* A record's number, or NAN when it is absent, null, not a number or beyond a double (1e400). */
static double num(const cJSON *rec, const char *key)
{
	const cJSON *v = member(rec, key);

	return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : NAN;
}

/* A plan value as a number (the strict decimal reader), or NAN. */
static double plan_num(const char *s)
{
	static const struct npl_number_spec any = {"a number", 0, 1e15, 0};
	double v;

	return s && npl_parse_number(s, &any, &v) == 0 ? v : NAN;
}

/* The plan's benchmark which (of several; 0: the first, or the only one), or NULL. */
static const cJSON *bench_node(const cJSON *plan, int which)
{
	return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(npl_plan_role(plan, "bench"), "nodes"),
				  which < 0 ? 0 : which);
}

int npl_bench_count(const cJSON *plan)
{
	return cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(npl_plan_role(plan, "bench"), "nodes"));
}

const char *npl_bench_name(const cJSON *plan, int which)
{
	return npl_json_str(bench_node(plan, which), "name");
}

/* The first value of a flag of a benchmark (a node of the plan's bench role), or NULL. */
static const char *bench_flag(const cJSON *node, const char *name)
{
	const cJSON *f;

	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(node, "flags"))
		if (!strcmp(npl_json_str(f, "flag"), name)) {
			const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(f, "values"), 0);

			return v ? v->valuestring : "";
		}
	return NULL;
}

static void reason(struct npl_verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void reason(struct npl_verdict *v, const char *fmt, ...)
{
	va_list ap;
	size_t n = strlen(v->reasons);

	if (n && n < sizeof(v->reasons) - 2) {
		strcat(v->reasons, "; ");
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(v->reasons + n, sizeof(v->reasons) - n, fmt, ap);
	va_end(ap);
	if (v->nreasons < NPL_MAX_REASONS) {
		va_start(ap, fmt);
		vsnprintf(v->reason_v[v->nreasons++], sizeof(v->reason_v[0]), fmt, ap);
		va_end(ap);
	}
}

static struct npl_check *check(struct npl_verdict *v, const char *name, const char *key, const char *unit, int ok)
{
	struct npl_check *c = &v->checks[v->nchecks < 15 ? v->nchecks++ : 15];

	c->name = name;
	c->key = key;
	c->unit = unit;
	c->value = c->limit = NAN;
	c->op = NULL;
	c->ok = ok;
	return c;
}

static void fmt_ms(char *out, size_t n, double ms)
{
	if (isnan(ms) || ms < 0)
		snprintf(out, n, "-");
	else if (ms >= 10000)
		snprintf(out, n, "%.2f s", ms / 1000);
	else
		snprintf(out, n, "%.2f ms", ms);
}

/* A count as measured: "-" when there is none, whole numbers without a fraction. */
static void fmt_count(char *out, size_t n, double x)
{
	if (isnan(x))
		snprintf(out, n, "-");
	else if (x == floor(x))
		snprintf(out, n, "%.0f", x);
	else
		snprintf(out, n, "%g", x);
}

/* One workload figure of the record against the recipe's want: 1 the same, 0 not (its text in
 * g), -1 when either says nothing. */
static int same_figure(const cJSON *rec, const char *key, const char *want, char g[64])
{
	const cJSON *got = member(rec, key);

	g[0] = '\0';
	/* bench_serving writes a request rate of inf as Infinity, read as null (sanitize()) */
	if (want && got && cJSON_IsNull(got) && !strcmp(key, "request_rate"))
		return !strcmp(want, "inf");
	if (!want || !got || cJSON_IsNull(got))
		return -1;
	/* ... or as the largest double */
	if (!strcmp(want, "inf") && cJSON_IsNumber(got) && got->valuedouble >= 1e300)
		return 1;
	if (cJSON_IsNumber(got))
		snprintf(g, 64, "%g", got->valuedouble);
	else if (cJSON_IsString(got))
		snprintf(g, 64, "%s", got->valuestring);
	else
		return -1;
	return !strcmp(g, want) || (cJSON_IsNumber(got) && plan_num(want) == got->valuedouble);
}

/* Compare one workload figure of the record with the recipe's. */
static void same(struct npl_verdict *v, const cJSON *rec, const char *key, const char *want, const char *what)
{
	char g[64];

	if (!same_figure(rec, key, want, g)) {
		v->valid = 0;
		reason(v, "the run's %s is %s, the recipe's %s", what, g, want);
	}
}

/* 1 when the record is a run of the benchmark node: no figure it names differs. */
static int run_of(const cJSON *rec, const cJSON *node)
{
	char g[64];
	size_t i;

	for (i = 0; i < NPL_BENCH_NWORKLOAD; i++)
		if (!same_figure(rec, npl_bench_workload[i][0], bench_flag(node, npl_bench_workload[i][1]), g))
			return 0;
	return 1;
}

/* Blanks around a record; NUL too, which a crash leaves as padding in an appended file. */
static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\0';
}

/* A line that is not a record: a warning when a record follows it, an error when it is last. */
struct bad_line {
	struct npl_loc at;
	const char *why;
};

#define MAX_SKIPPED_SHOWN 10

static void skipped(struct npl_diag *d, const struct bad_line *b, long *nskipped)
{
	if (++*nskipped <= MAX_SKIPPED_SHOWN)
		npl_warn(d, &b->at, "%s: line skipped", b->why);
}

/* A column for messages: 1-based, lead bytes before pos, within an int. */
static int col_of(size_t lead, size_t pos)
{
	return lead + pos < (size_t)INT_MAX ? (int)(lead + pos) + 1 : INT_MAX;
}

/* The record on the n bytes of line lineno (blanks trimmed), or NULL with *bad set. */
static cJSON *read_record(const char *file, int lineno, const char *line, size_t n, size_t lead,
			  struct bad_line *bad)
{
	const char *nul = memchr(line, '\0', n), *end = NULL;
	char *copy;
	cJSON *rec;

	bad->at = (struct npl_loc){file, lineno, 0};
	if (nul) {
		bad->at.col = col_of(lead, (size_t)(nul - line));
		bad->why = "not valid JSON";
		return NULL;
	}
	copy = npl_xmalloc(n + 1);
	memcpy(copy, line, n);
	copy[n] = '\0';
	sanitize(copy);
	rec = cJSON_ParseWithLengthOpts(copy, n, &end, 0);
	if (!rec || !cJSON_IsObject(rec)) {
		bad->at.col = col_of(lead, !rec && end && end >= copy ? (size_t)(end - copy) : 0);
		bad->why = rec ? "not a result record (a JSON object)" : "not valid JSON";
		cJSON_Delete(rec);
		free(copy);
		return NULL;
	}
	if (end && (size_t)(end - copy) < n) {
		bad->at.col = col_of(lead, (size_t)(end - copy));
		bad->why = "more than one JSON value on a line";
		cJSON_Delete(rec);
		free(copy);
		return NULL;
	}
	free(copy);
	return rec;
}

/* The last record of the results file, with v->records and v->line; every line is read,
 * whatever bytes it holds. NULL with an error when there is none or the last line is no record. */
static cJSON *last_record(const char *file, const char *text, size_t len, const cJSON *of,
			  struct npl_verdict *v, struct npl_diag *d)
{
	const char *p = text, *stop = text + len;
	cJSON *last = NULL;
	struct bad_line bad = {{NULL, 0, 0}, NULL};
	long nskipped = 0;
	int lineno = 0;

	while (p < stop) {
		const char *nl = memchr(p, '\n', (size_t)(stop - p)), *e = nl ? nl : stop;
		size_t lead = 0, n = (size_t)(e - p);
		cJSON *rec;

		if (lineno == INT_MAX) {
			cJSON_Delete(last);
			npl_error(d, &(struct npl_loc){file, 0, 0}, "too many lines");
			return NULL;
		}
		lineno++;
		while (lead < n && blank(p[lead]))
			lead++;
		while (n > lead && blank(p[n - 1]))
			n--;
		if (n > lead) {
			if (bad.why)
				skipped(d, &bad, &nskipped);
			bad.why = NULL;
			if ((rec = read_record(file, lineno, p + lead, n - lead, lead, &bad))) {
				v->records++;
				if (of && !run_of(rec, of)) {
					cJSON_Delete(rec); /* another benchmark's run */
				} else {
					cJSON_Delete(last);
					last = rec;
					v->record = v->records;
					v->line = lineno;
				}
			}
		}
		p = nl ? nl + 1 : stop;
	}
	if (nskipped > MAX_SKIPPED_SHOWN)
		npl_warn(d, &(struct npl_loc){file, 0, 0}, "%ld more lines that are not records were skipped",
			 nskipped - MAX_SKIPPED_SHOWN);
	if (bad.why) {
		/* the last line is no record: an earlier one must not stand in for it */
		cJSON_Delete(last);
		npl_error(d, &bad.at, "%s", bad.why);
		return NULL;
	}
	if (!last && !(of && v->records)) {
		struct npl_loc l = {file, 0, 0};

		npl_error(d, &l, "no result records");
	}
	return last; /* NULL without an error: records, none of them a run of the benchmark of */
}

/* The counts of the record: requests completed (whole, at most the prompts sent, at most
 * max_failed_pct of them failed) and output tokens (a positive whole number). */
static void judge_counts(struct npl_verdict *v, const cJSON *last, const cJSON *node, double max_failed_pct)
{
	double completed = num(last, "completed"), out = num(last, "total_output_tokens");
	double prompts = plan_num(bench_flag(node, "--num-prompts")), failed;
	struct npl_check *c;

	if (isnan(out) && !member(last, "total_output_tokens"))
		out = num(last, "total_output");   /* older bench_serving */
	if (prompts != floor(prompts) || prompts <= 0)
		prompts = NAN;
	c = check(v, "requests completed", "requests_completed", "requests", 1);
	c->value = completed;
	fmt_count(c->measured, sizeof(c->measured), completed);
	if (isnan(completed) || completed <= 0) {
		c->ok = 0;
		v->valid = 0;
		reason(v, "no request completed");
	} else if (completed != floor(completed)) {
		c->ok = 0;
		v->valid = 0;
		reason(v, "'completed' is %g, not a whole number of requests", completed);
		completed = NAN;
	} else if (!isnan(prompts) && completed > prompts) {
		c->ok = 0;
		v->valid = 0;
		reason(v, "%.0f requests completed, more than the %.0f prompts sent", completed, prompts);
	}
	if (!isnan(prompts)) {
		failed = prompts - (isnan(completed) ? 0 : completed);
		snprintf(c->target, sizeof(c->target), ">= %.0f of %.0f", ceil(prompts * (1 - max_failed_pct / 100)), prompts);
		c->limit = ceil(prompts * (1 - max_failed_pct / 100));
		c->op = ">=";
		if (failed > prompts * max_failed_pct / 100 + 1e-9) {
			c->ok = 0;
			v->valid = 0;
			if (!isnan(completed) && completed > 0)
				reason(v, "%.0f of %.0f requests failed (%.1f%%, at most %g%% may)", failed, prompts,
				       100 * failed / prompts, max_failed_pct);
		}
	} else {
		snprintf(c->target, sizeof(c->target), "> 0");
		c->limit = 0;
		c->op = ">";
	}
	c = check(v, "output tokens", "output_tokens", "tokens", !(isnan(out) || out <= 0 || out != floor(out)));
	c->value = out;
	c->limit = 0;
	c->op = ">";
	fmt_count(c->measured, sizeof(c->measured), out);
	snprintf(c->target, sizeof(c->target), "> 0");
	if (!c->ok) {
		v->valid = 0;
		if (!isnan(out) && out > 0)
			reason(v, "the output tokens, %g, are not a whole number", out);
		else
			reason(v, "no output tokens");
	}
}

/* One latency of the record (field, in ms) against its target (NAN: none, shown for information);
 * what names it when it was not measured, prec the decimals of a miss's message. */
static void judge_ms(struct npl_verdict *v, const cJSON *last, const char *name, const char *key,
		     const char *field, double target, const char *what, int prec)
{
	double x = num(last, field);
	struct npl_check *c = check(v, name, key, "ms", isnan(target) ? -1 : 0);

	c->value = x;
	c->limit = target;
	c->op = isnan(target) ? NULL : "<=";
	fmt_ms(c->measured, sizeof(c->measured), x);
	fmt_ms(c->target, sizeof(c->target), target);
	/* a recipe judges the targets it has, and only those */
	if (isnan(target))
		return;
	c->is_target = 1;
	c->ok = !isnan(x) && x > 0 && x <= target;
	if (isnan(x) || x <= 0) {
		v->valid = 0;
		reason(v, "no %s was measured", what);
	} else if (!c->ok) {
		reason(v, "%s %.*f ms exceeds the %g ms target", name, prec, x, target);
	}
}

/* The latencies of the record against the recipe's targets (NAN: none), the output throughput
 * against its floor, and what is shown without a target: p99 TPOT, mean E2E latency. */
static void judge_latency(struct npl_verdict *v, const cJSON *last, const double t[NPL_TARGET_COUNT])
{
	double tput = num(last, "output_throughput");
	struct npl_check *c;

	judge_ms(v, last, "median TPOT", "median_tpot", "median_tpot_ms", t[NPL_TARGET_TPOT], "TPOT", 2);
	c = check(v, "p99 TPOT", "p99_tpot", "ms", -1);
	c->value = num(last, "p99_tpot_ms");
	fmt_ms(c->measured, sizeof(c->measured), num(last, "p99_tpot_ms"));
	snprintf(c->target, sizeof(c->target), "-");
	judge_ms(v, last, "median TTFT", "median_ttft", "median_ttft_ms", t[NPL_TARGET_TTFT], "TTFT", 1);
	/* end to end: bench_serving's median, the mean beside it */
	judge_ms(v, last, "median E2E", "median_e2e", "median_e2e_latency_ms", t[NPL_TARGET_E2E], "E2E latency", 1);
	c = check(v, "mean E2E", "mean_e2e", "ms", -1);
	c->value = num(last, "mean_e2e_latency_ms");
	fmt_ms(c->measured, sizeof(c->measured), c->value);
	snprintf(c->target, sizeof(c->target), "-");
	c = check(v, "output throughput", "output_throughput", "tok/s", isnan(t[NPL_TARGET_THROUGHPUT]) ? -1 : 0);
	c->value = tput;
	snprintf(c->measured, sizeof(c->measured), isnan(tput) ? "-" : "%.1f tok/s", tput);
	snprintf(c->target, sizeof(c->target), "-");
	if (isnan(t[NPL_TARGET_THROUGHPUT]))
		return;
	/* a floor: at least this many output tokens per second */
	c->is_target = 1;
	c->limit = t[NPL_TARGET_THROUGHPUT];
	c->op = ">=";
	snprintf(c->target, sizeof(c->target), ">= %g tok/s", c->limit);
	c->ok = !isnan(tput) && tput > 0 && tput >= c->limit;
	if (isnan(tput) || tput <= 0) {
		v->valid = 0;
		reason(v, "no output throughput was measured");
	} else if (!c->ok) {
		reason(v, "output throughput %.1f tok/s is below the %g tok/s floor", tput, c->limit);
	}
}

int npl_verify(const char *file, const char *text, size_t len, const cJSON *plan, double max_failed_pct,
	       struct npl_verdict *v, struct npl_diag *d)
{
	return npl_verify_bench(file, text, len, plan, -1, max_failed_pct, v, d);
}

int npl_verify_bench(const char *file, const char *text, size_t len, const cJSON *plan, int which,
		     double max_failed_pct, struct npl_verdict *v, struct npl_diag *d)
{
	const cJSON *R = cJSON_GetObjectItemCaseSensitive(plan, "recipe"), *node = bench_node(plan, which);
	const cJSON *of = which >= 0 ? node : NULL;
	cJSON *last;
	int errors = d->errors;
	/* each target by its text and its number in the plan's recipe */
	static const char *const name[NPL_TARGET_COUNT] = {"tpot", "ttft", "e2e", "throughput"};
	static const char *const key[NPL_TARGET_COUNT] = {"tpot_ms", "ttft_ms", "e2e_ms", "throughput"};
	double t[NPL_TARGET_COUNT];
	int i;

	memset(v, 0, sizeof(*v));
	/* a plan that names a target must hold it as a positive number; null is none */
	for (i = 0; i < NPL_TARGET_COUNT; i++) {
		int named = (member(R, name[i]) && !cJSON_IsNull(member(R, name[i]))) ||
			    (member(R, key[i]) && !cJSON_IsNull(member(R, key[i])));

		t[i] = named ? num(R, key[i]) : NAN;
		if (named && !(t[i] > 0))
			return npl_error(d, NULL, "the plan's recipe has no valid target '%s' (%s: a positive number)",
					 name[i], key[i]);
	}
	/* the last record is judged (of several benchmarks: the last run of this one) */
	if (!(last = last_record(file, text, len, of, v, d))) {
		if (d->errors != errors)
			return -1;
		reason(v, "none of the %d records is a run of the %s benchmark", v->records,
		       npl_json_str(node, "name") ? npl_json_str(node, "name") : "recipe's");
		return 0;
	}
	v->valid = 1;
	judge_counts(v, last, node, max_failed_pct);
	/* the run measured the recipe's workload (its figures but the request rate, which a run of
	   another rate may well be judged by) */
	for (i = 0; i < NPL_BENCH_NWORKLOAD - 1; i++) /* the request rate: run_of() only */
		same(v, last, npl_bench_workload[i][0], bench_flag(node, npl_bench_workload[i][1]), npl_bench_workload[i][2]);
	judge_latency(v, last, t);
	v->pass = v->valid;
	for (i = 0; i < v->nchecks; i++) {
		if (v->checks[i].ok == 0)
			v->pass = 0;
		v->ntargets += v->checks[i].is_target;
	}
	cJSON_Delete(last);
	return 0;
}

cJSON *npl_verdict_json(const struct npl_verdict *v, const cJSON *plan, const char *file)
{
	cJSON *o = cJSON_CreateObject(), *checks = cJSON_CreateArray();
	const cJSON *R = cJSON_GetObjectItemCaseSensitive(plan, "recipe");
	int i;

	cJSON_AddStringToObject(o, "recipe", npl_json_str(R, "id"));
	cJSON_AddStringToObject(o, "file", file);
	cJSON_AddNumberToObject(o, "record", v->record);
	cJSON_AddNumberToObject(o, "records", v->records);
	cJSON_AddNumberToObject(o, "line", v->line);
	cJSON_AddStringToObject(o, "verdict", !v->valid ? "invalid" : v->pass ? "pass" : "miss");
	cJSON_AddBoolToObject(o, "valid", v->valid);
	cJSON_AddBoolToObject(o, "pass", v->pass);
	for (i = 0; i < v->nchecks; i++) {
		cJSON *c = cJSON_CreateObject();

		cJSON_AddStringToObject(c, "name", v->checks[i].name);
		cJSON_AddStringToObject(c, "key", v->checks[i].key);
		/* numbers as numbers: null where nothing was measured, or there is no target */
		if (isfinite(v->checks[i].value))
			cJSON_AddNumberToObject(c, "value", v->checks[i].value);
		else
			cJSON_AddNullToObject(c, "value");
		cJSON_AddStringToObject(c, "unit", v->checks[i].unit);
		if (isfinite(v->checks[i].limit) && v->checks[i].op) {
			cJSON_AddNumberToObject(c, "target", v->checks[i].limit);
			cJSON_AddStringToObject(c, "comparison", v->checks[i].op);
		} else {
			cJSON_AddNullToObject(c, "target");
			cJSON_AddNullToObject(c, "comparison");
		}
		if (v->checks[i].ok < 0)
			cJSON_AddNullToObject(c, "ok");
		else
			cJSON_AddBoolToObject(c, "ok", v->checks[i].ok);
		cJSON_AddItemToArray(checks, c);
	}
	cJSON_AddItemToObject(o, "checks", checks);
	/* the checks held to the recipe's targets: none when it has none, and the verdict is then
	 * on the run completing alone */
	checks = cJSON_CreateArray();
	for (i = 0; i < v->nchecks; i++)
		if (v->checks[i].is_target)
			cJSON_AddItemToArray(checks, cJSON_CreateString(v->checks[i].key));
	cJSON_AddItemToObject(o, "targets", checks);
	{
		cJSON *r = cJSON_CreateArray();

		for (i = 0; i < v->nreasons; i++)
			cJSON_AddItemToArray(r, cJSON_CreateString(v->reason_v[i]));
		cJSON_AddItemToObject(o, "reasons", r);
	}
	return o;
}
