/* cmd_bench.c: `npulaunch bench`: run (or print) the recipe's benchmark, keeping its results. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "npulaunch/bench.h"
#include "npulaunch/cli.h"
#include "npulaunch/fsio.h"
#include "npulaunch/proc.h"
#include "npulaunch/text.h"

static void help(void)
{
	puts("usage: npulaunch bench [ID|QUERY|BUNDLE] [site values] [--dry-run] [--output-file FILE]\n"
	     "                       [--host HOST] [--port PORT] [--benchmark NAME]\n"
	     "\n"
	     "Run the recipe's sglang.bench_serving command (bench.sh's) against the deployment's\n"
	     "entry point (the router, or the PD-mixed server's first node), with --output-file\n"
	     "added so that the results are kept for npulaunch verify. Without a recipe, the bundle\n"
	     "in the current folder. A recipe with several benchmarks (a TTFT run and a TPOT run)\n"
	     "runs each in turn, into the same file, and stops at the first that fails.\n"
	     "\n"
	     "Options:\n"
	     "  --dry-run          print the command, run nothing\n"
	     "  --benchmark NAME   only that one of the recipe's several benchmarks\n"
	     "  --json             {benchmark, argv, output_file, dry_run, status, results}; an array\n"
	     "                     of them for several benchmarks (the benchmark's own output goes to\n"
	     "                     standard error then)\n"
	     "  --output-file FILE the results, one JSON line per run appended (default\n"
	     "                     bench-results.jsonl in the bundle: the current folder, or the one named)\n"
	     "  --host H, --port P another entry point than the deployment's (an IPv4 or IPv6\n"
	     "                     address; a port from 1 to 65535)\n"
	     "  query              MODEL with --tpot T --ttft T --e2e T --dataset IN+OUT\n"
	     "                     --prefix-cache PCT --cards N --mode M --hardware H [--nearest]\n"
	     "                     instead of an id\n"
	     "  site values        --model-path P  --draft-model-path P  --ifname NAME  --node-ip IP...\n"
	     "                     --prefill-ip IP...  --decode-ip IP...  --site FILE (see render --help)\n"
	     "  overrides          --set [ROLE:]FLAG[=VALUE]  --unset [ROLE:]FLAG  --env [ROLE:]K=V\n"
	     "                     --unset-env [ROLE:]K  --force  --allow-unknown-flag\n"
	     "  -h, --help         this help\n"
	     "\n"
	     "Examples:\n"
	     "  cd deploy && npulaunch bench\n"
	     "  npulaunch bench kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms --dry-run");
}

/* bench --json: {argv, output_file, dry_run, status, results} (status null and results false
 * for a dry run). */
static cJSON *report_json(const char *name, char **args, const char *out, int dry, int status, int wrote)
{
	cJSON *o = cJSON_CreateObject(), *a = cJSON_CreateArray();

	if (name)
		cJSON_AddStringToObject(o, "benchmark", name);
	else
		cJSON_AddNullToObject(o, "benchmark");
	for (int i = 0; args[i]; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(args[i]));
	cJSON_AddItemToObject(o, "argv", a);
	cJSON_AddStringToObject(o, "output_file", out);
	cJSON_AddBoolToObject(o, "dry_run", dry);
	if (dry)
		cJSON_AddNullToObject(o, "status");
	else
		cJSON_AddNumberToObject(o, "status", status);
	cJSON_AddBoolToObject(o, "results", wrote);
	return o;
}

/* The reports of the benchmarks run: the one object, or an array of several. */
static void print_reports(cJSON *reports, int several)
{
	cJSON *doc = several ? reports : cJSON_DetachItemFromArray(reports, 0);
	char *t = cJSON_Print(doc);

	npl_cli_puts_json(t);
	cJSON_free(t);
	if (!several)
		cJSON_Delete(doc);
}


/* The benchmark's environment, set in its process: the proxies go, as in bench.sh, and its
 * node's variables come with the site values. */
struct bench_env {
	const cJSON *plan;
	const struct npl_site *site;
	int which;
};

static void bench_env(void *ctx)
{
	const struct bench_env *b = ctx;
	const cJSON *role = npl_plan_role(b->plan, "bench"), *u;
	const cJSON *node = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(role, "nodes"), b->which);

	cJSON_ArrayForEach(u, cJSON_GetObjectItemCaseSensitive(role, "unset"))
		unsetenv(npl_json_str(u, "name"));
	cJSON_ArrayForEach(u, cJSON_GetObjectItemCaseSensitive(node, "env")) {
		struct npl_buf v = NPL_BUF_INIT;

		npl_pval_resolve(&v, npl_json_str(u, "value"), b->site, NULL);
		setenv(npl_json_str(u, "name"), npl_buf_str(&v), 1);
		npl_buf_release(&v);
	}
}

/* What the command line asks of bench. */
struct bench_opts {
	struct npl_cli_recipe_opts ro;
	const char *out, *host, *arg, *only;
	char hostbuf[INET6_ADDRSTRLEN];
	int dry, json, port, out_given, help;
};

/* The options; 0 or an exit code (0 with o->help set after --help). */
static int parse_args(int argc, char **argv, struct npl_cli *cli, struct bench_opts *o)
{
	static const struct option own[] = {
		{"dry-run", no_argument, NULL, 'n'},
		{"output-file", required_argument, NULL, 'o'},
		{"host", required_argument, NULL, 'H'},
		{"port", required_argument, NULL, 'P'},
		{"benchmark", required_argument, NULL, 'B'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct option *opts = npl_cli_options(own);
	int c, rc = NPL_EXIT_OK;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'n': o->dry = 1; break;
		case 'j': o->json = 1; break;
		case 'B': o->only = optarg; break;
		case 'o': o->out = optarg; o->out_given = 1; break;
		case 'H':
			/* an address, as the site values are: it reaches bench_serving's argv */
			if (npl_ip_canonical(optarg, o->hostbuf, sizeof(o->hostbuf))) {
				rc = npl_cli_usage_error("bench", "--host '%s' is not an IPv4 or IPv6 address", optarg);
				goto out;
			}
			o->host = o->hostbuf;
			break;
		case 'P': {
			static const struct npl_number_spec port_spec = {"a port", 1, 65535, 1};
			double v;

			if ((rc = npl_cli_number("bench", "--port", optarg, &port_spec, &v)))
				goto out;
			o->port = (int)v;
			break;
		}
		case 'h': help(); o->help = 1; goto out;
		case ':': rc = npl_cli_usage_error("bench", "option '%s' needs a value", argv[optind - 1]); goto out;
		case '?': rc = npl_cli_usage_error("bench", "unknown option '%s'", argv[optind - 1]); goto out;
		default:
			if (npl_cli_recipe_opt(cli, &o->ro, c, optarg) <= 0) {
				rc = NPL_EXIT_USAGE;
				goto out;
			}
		}
	}
	if (optind + 1 < argc) {
		rc = npl_cli_usage_error("bench", "unexpected argument '%s'", argv[optind + 1]);
		goto out;
	}
	o->arg = optind < argc ? argv[optind] : NULL;
out:
	free(opts);
	return rc;
}

/* --dry-run: the command as a shell would take it. */
static void print_command(char **args)
{
	struct npl_buf b = NPL_BUF_INIT;

	for (int i = 0; args[i]; i++) {
		if (i)
			npl_buf_putc(&b, ' ');
		npl_shell_quote(&b, args[i]);
	}
	puts(npl_buf_str(&b));
	npl_buf_release(&b);
}

/* Run the benchmark in its environment and wait for it: it must end well and append to the
 * results file. An exit code. */
static int run(struct npl_cli *cli, char **args, const cJSON *plan, int which, const struct npl_site *site,
	       const struct bench_opts *o, cJSON *reports)
{
	struct stat before, after;
	off_t size_before = -1;
	pid_t pid;
	int status, status_code, wrote = 0, rc = NPL_EXIT_OK;

	if (stat(o->out, &before) == 0)
		size_before = before.st_size;
	pid = npl_proc_spawn(&(struct npl_proc_child){.argv = args, .out_to_err = o->json, .setup = bench_env,
						      .ctx = &(struct bench_env){plan, site, which}, .who = "bench"});
	if (pid < 0) {
		fprintf(stderr, "npulaunch: bench: cannot start: %s\n", strerror(errno));
		return NPL_EXIT_FAIL;
	}
	status = npl_proc_wait(pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		status_code = 0;
		if (stat(o->out, &after) != 0 || after.st_size <= size_before) {
			fprintf(stderr, "npulaunch: bench: sglang.bench_serving ended well but wrote no results to %s\n",
				npl_escape_in(&cli->arena, o->out));
			rc = NPL_EXIT_FAIL;
		} else {
			wrote = 1;
			npl_cli_info(cli, "bench: results in %s; judge them with: npulaunch verify %s",
				     npl_escape_in(&cli->arena, o->out), npl_escape_in(&cli->arena, o->out));
		}
	} else {
		fprintf(stderr, "npulaunch: bench: sglang.bench_serving failed (%s %d)\n",
			WIFEXITED(status) ? "exit" : "signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		status_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		rc = NPL_EXIT_FAIL;
	}
	if (o->json)
		cJSON_AddItemToArray(reports, report_json(npl_bench_name(plan, which), args, o->out, 0, status_code, wrote));
	return rc;
}

/* The benchmark named name among the plan's several: its index, or -1 (said). */
static int named(const cJSON *plan, const char *name)
{
	int k, n = npl_bench_count(plan);
	struct npl_buf b = NPL_BUF_INIT;

	for (k = 0; k < n; k++)
		if (npl_bench_name(plan, k) && !strcmp(npl_bench_name(plan, k), name))
			return k;
	for (k = 0; k < n; k++)
		if (npl_bench_name(plan, k))
			npl_buf_printf(&b, "%s%s", b.len ? ", " : "", npl_bench_name(plan, k));
	npl_cli_usage_error("bench", "--benchmark '%s': the recipe's benchmarks are %s", name,
			    b.len ? npl_buf_str(&b) : "one, without a name");
	npl_buf_release(&b);
	return -1;
}

/* Each benchmark asked for, in turn: printed (--dry-run) or run, up to the first failure. */
static int each(struct npl_cli *cli, const cJSON *plan, const struct npl_site *site, const struct bench_opts *o)
{
	int k, n = npl_bench_count(plan), first = 0, last = n - 1, rc = NPL_EXIT_OK;
	cJSON *reports = cJSON_CreateArray();

	if (o->only && (first = last = named(plan, o->only)) < 0) {
		cJSON_Delete(reports);
		return NPL_EXIT_USAGE;
	}
	for (k = first; k <= last && rc == NPL_EXIT_OK; k++) {
		char **args = npl_bench_argv(plan, k, site, o->host, o->port, o->out, &cli->diag);

		npl_cli_flush(cli);
		if (!args) {
			rc = NPL_EXIT_USAGE;
			break;
		}
		if (o->dry && o->json)
			cJSON_AddItemToArray(reports, report_json(npl_bench_name(plan, k), args, o->out, 1, -1, 0));
		else if (o->dry)
			print_command(args);
		else
			rc = run(cli, args, plan, k, site, o, reports);
		npl_argv_free(args);
	}
	if (o->json && cJSON_GetArraySize(reports))
		print_reports(reports, first != last);
	cJSON_Delete(reports);
	return rc;
}

int npl_cmd_bench(int argc, char **argv, struct npl_cli *cli)
{
	struct bench_opts o;
	struct npl_site site;
	cJSON *plan = NULL;
	int rc;

	memset(&o, 0, sizeof(o));
	o.out = "bench-results.jsonl";
	if ((rc = parse_args(argc, argv, cli, &o)) || o.help)
		goto out;
	if ((rc = npl_cli_site(cli, &o.ro)))
		goto out;
	if (!(plan = npl_cli_plan(cli, o.arg, &o.ro, &rc)))
		goto out;
	/* a bundle named keeps its results, as the current folder's does */
	if (!o.out_given && o.arg && npl_is_dir(o.arg))
		o.out = npl_arena_printf(&cli->arena, "%s/bench-results.jsonl", o.arg);
	npl_plan_site(plan, &site, &cli->arena);
	rc = each(cli, plan, &site, &o);
out:
	cJSON_Delete(plan);
	npl_cli_recipe_opts_release(&o.ro);
	return rc;
}
