/* cmd_verify.c: `npulaunch verify`: bench_serving's results against the recipe's promise. */
#define _GNU_SOURCE /* st_mtim */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "npulaunch/bench.h"
#include "npulaunch/cli.h"
#include "npulaunch/fsio.h"
#include "npulaunch/text.h"

static void help(void)
{
	puts("usage: npulaunch verify [RESULTS.jsonl [ID|QUERY|BUNDLE] | BUNDLE] [--max-failed PCT] [--json]\n"
	     "\n"
	     "Judge the last record of sglang.bench_serving's results (JSON lines) against the\n"
	     "recipe (without one, the bundle in the current folder): the run is valid when its\n"
	     "requests completed (all but --max-failed percent of the recipe's prompts), it produced\n"
	     "tokens and it measured the recipe's workload (dataset, concurrency, lengths); it passes\n"
	     "when it meets every target the recipe has (median TPOT, TTFT and E2E latency within\n"
	     "them, output throughput at least its floor); a recipe with none is judged on the run\n"
	     "alone, and says so. A table of measured against target and a verdict: pass (exit 0),\n"
	     "miss or invalid (exit 1). A file that is not JSON lines is refused with the line and\n"
	     "column.\n"
	     "Without a file, in a bundle (or given one), the bundle's newest results: npulaunch\n"
	     "bench's bench-results.jsonl, or the file bench_serving names itself when bench.sh runs.\n"
	     "A recipe with several benchmarks (a TTFT run and a TPOT run) has each judged on its\n"
	     "last run: the last record whose workload is that benchmark's (in a bundle, in the\n"
	     "newest file that holds one); it passes when every one passes.\n"
	     "\n"
	     "Options:\n"
	     "  --max-failed PCT  tolerate this share of failed requests, 0 to 100, decimal like 2.5\n"
	     "                    (default 0)\n"
	     "  --json            {recipe, file, record, records, line, verdict, valid, pass,\n"
	     "                    checks: [{name, key, value, unit, target, comparison, ok}],\n"
	     "                    targets: [KEY...], reasons: [...]}; numbers as numbers, null\n"
	     "                    where none; targets empty when the recipe has none; with several\n"
	     "                    benchmarks, an array of them, each with its benchmark's name\n"
	     "  query             MODEL with --tpot T --ttft T --e2e T --dataset IN+OUT\n"
	     "                    --prefix-cache PCT --cards N --mode M --hardware H [--nearest]\n"
	     "                    instead of an id\n"
	     "  -h, --help        this help\n"
	     "\n"
	     "Examples:\n"
	     "  cd deploy && npulaunch verify bench-results.jsonl\n"
	     "  npulaunch verify results.jsonl kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms --json");
}

static const struct npl_number_spec percent = {"a percentage", 0, 100, 0};

/* The results files of a bundle, newest first: npulaunch bench's bench-results.jsonl, and the
 * files bench_serving names itself when bench.sh (run in the bundle) gives it none:
 * BACKEND_*.jsonl, BACKEND of the benchmark which. Their number in *n. */
struct found {
	const char *path;
	struct timespec t;
};

static int newer(const void *a, const void *b)
{
	const struct found *x = a, *y = b;

	if (x->t.tv_sec != y->t.tv_sec)
		return x->t.tv_sec < y->t.tv_sec ? 1 : -1;
	return x->t.tv_nsec < y->t.tv_nsec ? 1 : x->t.tv_nsec > y->t.tv_nsec ? -1 : 0;
}

static struct found *results_files(struct npl_cli *cli, const char *dir, const cJSON *plan, int which, int *n)
{
	const cJSON *node = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(npl_plan_role(plan, "bench"), "nodes"), which);
	const cJSON *f;
	const char *backend = NULL;
	struct found *v = NULL;
	int cap = 0;
	struct dirent *de;
	DIR *dp = opendir(dir);

	*n = 0;
	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(node, "flags"))
		if (!strcmp(npl_json_str(f, "flag"), "--backend"))
			backend = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(f, "values"), 0)->valuestring;
	while (dp && (de = readdir(dp))) {
		const char *name = de->d_name;
		size_t bl = backend ? strlen(backend) : 0;
		struct stat st;
		char *p;

		if (strcmp(name, "bench-results.jsonl") &&
		    !(backend && !strncmp(name, backend, bl) && name[bl] == '_' && npl_ends_with(name, ".jsonl")))
			continue;
		p = npl_arena_printf(&cli->arena, "%s/%s", dir, name);
		if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 8;
			v = npl_xrealloc(v, (size_t)cap * sizeof(*v));
		}
		v[(*n)++] = (struct found){p, st.st_mtim};
	}
	if (dp)
		closedir(dp);
	if (*n)
		qsort(v, (size_t)*n, sizeof(*v), newer);
	return v;
}

/* The newest results file in a bundle, or NULL. */
static const char *bundle_results(struct npl_cli *cli, const char *dir, const cJSON *plan)
{
	int n;
	struct found *v = results_files(cli, dir, plan, 0, &n);
	const char *best = n ? v[0].path : NULL;

	free(v);
	return best;
}

/* No results file given: the bundle's plan (dir: the current folder, or the one named); NULL
 * with *rc set when dir is no bundle. */
static cJSON *bundle_plan(struct npl_cli *cli, const char *dir, struct npl_cli_recipe_opts *ro, int *rc)
{
	char *m = npl_arena_printf(&cli->arena, "%s/manifest.json", dir);

	if (access(m, F_OK) != 0) {
		*rc = npl_cli_usage_error("verify", "which results? give bench_serving's results file, or run verify in a bundle");
		return NULL;
	}
	return npl_cli_plan(cli, dir, ro, rc);
}

/* The bundle's results file; NULL with *rc set when it holds none. */
static const char *bundle_file(struct npl_cli *cli, const char *dir, const cJSON *plan, int *rc)
{
	const char *file;

	if (!(file = bundle_results(cli, dir, plan))) {
		fprintf(stderr, "npulaunch: verify: no benchmark results in %s: run bench.sh or npulaunch bench there first\n",
			npl_escape_in(&cli->arena, dir));
		*rc = NPL_EXIT_USAGE;
		return NULL;
	}
	fprintf(stderr, "npulaunch: verify: the newest results of the bundle: %s\n", npl_escape_in(&cli->arena, file));
	return file;
}

/* The verdict as a table: the record judged, a line per check, the verdict and its reasons;
 * the manifest's and the results file's text escaped for the terminal. */
static void print_verdict(struct npl_cli *cli, const struct npl_verdict *v, const cJSON *plan, const char *file)
{
	const char *verdict = !v->valid ? "INVALID" : v->pass ? "PASS" : "MISS";
	const char *on = "", *off = "";
	int i;

	if (cli->color) {
		on = v->pass ? "\033[32m" : "\033[31m";
		off = "\033[0m";
	}
	printf("%s: record %d of %d (%s:%d)\n",
	       npl_escape_in(&cli->arena, npl_json_str(cJSON_GetObjectItemCaseSensitive(plan, "recipe"), "id")),
	       v->record, v->records, npl_escape_in(&cli->arena, file), v->line);
	printf("  %-20s  %-16s  %-16s\n", "", "MEASURED", "TARGET");
	for (i = 0; i < v->nchecks; i++)
		printf("  %-20s  %-16s  %-16s  %s\n", v->checks[i].name, v->checks[i].measured, v->checks[i].target,
		       v->checks[i].ok < 0 ? "" : v->checks[i].ok ? "ok" : "FAIL");
	if (!v->ntargets)
		puts("targets: none: the recipe has no target to judge; the verdict is on the run completing");
	printf("verdict: %s%s%s%s%s\n", on, verdict, off, *v->reasons ? ": " : "",
	       npl_escape_in(&cli->arena, v->reasons));
}

/* The text of file, its source kept for messages; NULL when it cannot be read (said). */
static char *results_text(struct npl_cli *cli, const char *file, size_t *len)
{
	char *text = npl_read_file_max(NULL, file, NPL_READ_MAX_RESULTS, len, &cli->diag);

	if (text)
		npl_diag_source(&cli->diag, file, text);
	return text;
}

/* In a bundle: the newest results file that holds a run of the benchmark which (or, when none
 * does, the newest file, whose verdict then says so); NULL when the bundle holds none. */
static const char *bundle_file_of(struct npl_cli *cli, const char *dir, const cJSON *plan, int which,
				  double max_failed)
{
	int n, i;
	struct found *v = results_files(cli, dir, plan, which, &n);
	const char *pick = n ? v[0].path : NULL;

	for (i = 0; i < n; i++) {
		struct npl_diag quiet = NPL_DIAG_INIT;
		struct npl_verdict r;
		size_t len;
		char *text = npl_read_file_max(NULL, v[i].path, NPL_READ_MAX_RESULTS, &len, &quiet);
		int found = text && !npl_verify_bench(v[i].path, text, len, plan, which, max_failed, &r, &quiet) && r.record;

		free(text);
		npl_diag_release(&quiet);
		if (found) {
			pick = v[i].path;
			break;
		}
	}
	free(v);
	return pick;
}

/* verify of a recipe with several benchmarks: each judged on its last run, in the file given or,
 * in the bundle dir, the newest that holds one. An exit code: 0 when every one passes. */
static int several(struct npl_cli *cli, const cJSON *plan, const char *dir, const char *file, double max_failed,
		   int json)
{
	int n = npl_bench_count(plan), k, rc = NPL_EXIT_OK;
	cJSON *all = cJSON_CreateArray();
	const char *read_f = NULL;
	char *text = NULL;
	size_t len = 0;

	for (k = 0; k < n && rc != NPL_EXIT_USAGE; k++) {
		const char *name = npl_bench_name(plan, k), *f = file ? file : bundle_file_of(cli, dir, plan, k, max_failed);
		struct npl_verdict v;

		if (!f) {
			fprintf(stderr, "npulaunch: verify: no benchmark results in %s: run bench.sh or npulaunch bench there first\n",
				npl_escape_in(&cli->arena, dir));
			rc = NPL_EXIT_USAGE;
			break;
		}
		/* each file read once: its text stays the source of the messages that name it */
		if (!read_f || strcmp(read_f, f)) {
			free(text);
			read_f = f;
			if (!(text = results_text(cli, f, &len))) {
				npl_cli_flush(cli);
				rc = NPL_EXIT_USAGE;
				break;
			}
		}
		if (npl_verify_bench(f, text, len, plan, k, max_failed, &v, &cli->diag)) {
			npl_cli_flush(cli);
			rc = NPL_EXIT_USAGE;
			break;
		}
		npl_cli_flush(cli);
		if (json) {
			cJSON *o = npl_verdict_json(&v, plan, f);

			cJSON_AddStringToObject(o, "benchmark", name ? name : "");
			cJSON_AddItemToArray(all, o);
		} else {
			printf("%sbenchmark %s\n", k ? "\n" : "", npl_escape_in(&cli->arena, name ? name : "?"));
			print_verdict(cli, &v, plan, f);
		}
		if (!v.pass)
			rc = NPL_EXIT_FAIL;
	}
	if (json && rc != NPL_EXIT_USAGE) {
		char *s = cJSON_Print(all);

		npl_cli_puts_json(s);
		cJSON_free(s);
	}
	cJSON_Delete(all);
	free(text);
	return rc;
}

int npl_cmd_verify(int argc, char **argv, struct npl_cli *cli)
{
	static const struct option own[] = {
		{"max-failed", required_argument, NULL, 'm'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct option *opts = npl_cli_options(own);
	struct npl_cli_recipe_opts ro;
	struct npl_verdict v;
	double max_failed = 0;
	cJSON *plan = NULL;
	char *text = NULL;
	const char *file;
	int json = 0, c, rc = NPL_EXIT_OK;
	size_t len;

	memset(&ro, 0, sizeof(ro));
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if ((rc = npl_cli_number("verify", "--max-failed", optarg, &percent, &max_failed)))
				goto out;
			break;
		case 'j': json = 1; break;
		case 'h': help(); goto out;
		case ':': rc = npl_cli_usage_error("verify", "option '%s' needs a value", argv[optind - 1]); goto out;
		case '?': rc = npl_cli_usage_error("verify", "unknown option '%s'", argv[optind - 1]); goto out;
		default:
			if (c >= NPL_OPT_SET || npl_cli_recipe_opt(cli, &ro, c, optarg) <= 0) {
				rc = NPL_EXIT_USAGE;
				goto out;
			}
		}
	}
	if (optind + 2 < argc) {
		rc = npl_cli_usage_error("verify", "unexpected argument '%s'", argv[optind + 2]);
		goto out;
	}
	if (optind >= argc || (optind + 1 == argc && npl_is_dir(argv[optind]))) {
		const char *dir = optind < argc ? argv[optind] : ".";

		if (!(plan = bundle_plan(cli, dir, &ro, &rc)))
			goto out;
		if (npl_bench_count(plan) > 1) {
			rc = several(cli, plan, dir, NULL, max_failed, json);
			goto out;
		}
		if (!(file = bundle_file(cli, dir, plan, &rc)))
			goto out;
	} else {
		file = argv[optind];
	}
	if (!(text = npl_read_file_max(NULL, file, NPL_READ_MAX_RESULTS, &len, &cli->diag))) {
		npl_cli_flush(cli);
		rc = NPL_EXIT_USAGE;
		goto out;
	}
	npl_diag_source(&cli->diag, file, text);
	if (!plan && !(plan = npl_cli_plan(cli, optind + 1 < argc ? argv[optind + 1] : NULL, &ro, &rc)))
		goto out;
	if (npl_bench_count(plan) > 1) {
		rc = several(cli, plan, NULL, file, max_failed, json);
		goto out;
	}
	if (npl_verify(file, text, len, plan, max_failed, &v, &cli->diag)) {
		npl_cli_flush(cli);
		rc = NPL_EXIT_USAGE;
		goto out;
	}
	npl_cli_flush(cli);   /* the lines skipped */
	if (json) {
		cJSON *j = npl_verdict_json(&v, plan, file);
		char *s = cJSON_Print(j);

		npl_cli_puts_json(s);
		cJSON_free(s);
		cJSON_Delete(j);
	} else {
		print_verdict(cli, &v, plan, file);
	}
	if (!v.pass)
		rc = NPL_EXIT_FAIL;
out:
	free(text);
	cJSON_Delete(plan);
	free(opts);
	npl_cli_recipe_opts_release(&ro);
	return rc;
}
