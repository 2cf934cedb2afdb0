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
	     "\n"
	     "Options:\n"
	     "  --max-failed PCT  tolerate this share of failed requests, 0 to 100, decimal like 2.5\n"
	     "                    (default 0)\n"
	     "  --json            {recipe, file, record, records, line, verdict, valid, pass,\n"
	     "                    checks: [{name, key, value, unit, target, comparison, ok}],\n"
	     "                    targets: [KEY...], reasons: [...]}; numbers as numbers, null\n"
	     "                    where none; targets empty when the recipe has none\n"
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

/* The newest results file in a bundle: npulaunch bench's bench-results.jsonl, or the file that
 * bench_serving names itself when bench.sh (run in the bundle) gives it none: BACKEND_*.jsonl. */
static const char *bundle_results(struct npl_cli *cli, const char *dir, const cJSON *plan)
{
	const cJSON *node = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(npl_plan_role(plan, "bench"), "nodes"), 0);
	const cJSON *f;
	const char *backend = NULL, *best = NULL;
	struct timespec newest = {0, 0};
	struct dirent *de;
	DIR *dp = opendir(dir);

	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(node, "flags"))
		if (!strcmp(npl_json_str(f, "flag"), "--backend"))
			backend = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(f, "values"), 0)->valuestring;
	while (dp && (de = readdir(dp))) {
		const char *n = de->d_name;
		size_t bl = backend ? strlen(backend) : 0;
		struct stat st;
		char *p;

		if (strcmp(n, "bench-results.jsonl") &&
		    !(backend && !strncmp(n, backend, bl) && n[bl] == '_' && npl_ends_with(n, ".jsonl")))
			continue;
		p = npl_arena_printf(&cli->arena, "%s/%s", dir, n);
		if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (!best || st.st_mtim.tv_sec > newest.tv_sec ||
		    (st.st_mtim.tv_sec == newest.tv_sec && st.st_mtim.tv_nsec > newest.tv_nsec)) {
			best = p;
			newest = st.st_mtim;
		}
	}
	if (dp)
		closedir(dp);
	return best;
}

/* No results file given: the bundle's own (dir: the current folder, or the one named), its
 * plan into *plan. NULL with *rc set when dir is no bundle or holds no results. */
static const char *bundle_file(struct npl_cli *cli, const char *dir, struct npl_cli_recipe_opts *ro, cJSON **plan,
			       int *rc)
{
	char *m = npl_arena_printf(&cli->arena, "%s/manifest.json", dir);
	const char *file;

	if (access(m, F_OK) != 0) {
		*rc = npl_cli_usage_error("verify", "which results? give bench_serving's results file, or run verify in a bundle");
		return NULL;
	}
	if (!(*plan = npl_cli_plan(cli, dir, ro, rc)))
		return NULL;
	if (!(file = bundle_results(cli, dir, *plan))) {
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
		if (!(file = bundle_file(cli, optind < argc ? argv[optind] : ".", &ro, &plan, &rc)))
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
