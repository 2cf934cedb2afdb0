/*
 * main.c: npulaunch's entry point: global options, the command table, exit
 * codes. Everything else lives in the library that the tests link.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npl_version.h"
#include "npulaunch/cli.h"
#include "npulaunch/util.h"

static const struct npl_command commands[] = {
	{"list", npl_cmd_list, "list the recipes (filter with a query)"},
	{"validate", npl_cmd_validate, "check the recipe database: schema, references, rules, flags"},
	{"show", npl_cmd_show, "show the plan of a recipe: roles, nodes, env, flags"},
	{"render", npl_cmd_render, "write the launch scripts and manifest of a recipe"},
	{"diff", npl_cmd_diff, "what differs between two recipes, per role"},
	{"apply", npl_cmd_apply, "on a node: tune the host and launch this node's role"},
	{"preflight", npl_cmd_preflight, "on a node: check what its role's launch needs, before it starts"},
	{"tune", npl_cmd_tune, "check, apply or revert the host tuning"},
	{"wait", npl_cmd_wait, "wait until servers answer /health"},
	{"status", npl_cmd_status, "is every endpoint of a deployment up"},
	{"bench", npl_cmd_bench, "run the recipe's benchmark against the deployment"},
	{"verify", npl_cmd_verify, "judge benchmark results against the recipe's promise"},
};

static void usage(FILE *fp)
{
	size_t i;

	fputs("usage: npulaunch [--recipes DIR] [--templates DIR] COMMAND [ARGS]\n"
	      "       npulaunch --version | --help\n\n"
	      "Deploy SGLang on Ascend NPUs from a database of measured recipes.\n\n"
	      "Commands:\n", fp);
	for (i = 0; i < NPL_ARRAY_SIZE(commands); i++)
		fprintf(fp, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fputs("\nGlobal options:\n"
	      "  --recipes DIR    also load the recipes in DIR (repeatable; they override the\n"
	      "                   compiled-in ones with the same id); NPULAUNCH_RECIPES=DIR:DIR\n"
	      "  --templates DIR  read the script templates from DIR instead of the compiled-in ones\n"
	      "  -h, --help       this help; 'npulaunch COMMAND --help' for a command\n"
	      "  --version        the version of npulaunch and of its recipe database\n\n"
	      "Examples:\n"
	      "  npulaunch list\n"
	      "  npulaunch render kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms --model-path /models/kimi \\\n"
	      "      --draft-model-path /models/kimi-eagle3 --ifname eth0 -o deploy/\n"
	      "\nExit codes: 0 ok, 1 failure or differences found, 2 usage error, 3 no such recipe,\n"
	      "4 ambiguous query, 5 invalid recipe data.\n", fp);
}

static int version(struct npl_cli *cli)
{
	struct npl_db db;
	int rc = npl_cli_open_db(cli, &db);

	printf("npulaunch %s\n", NPL_VERSION);
	if (rc == 0)
		printf("recipe database %s (%d recipes, %d models, %d hardware profiles)\n",
		       db.defaults->db_version, db.nrecipes, db.nmodels, db.nhardware);
	return rc;
}

/* As coreutils' close_stdout: output that could not be written (a full disk, /dev/full, a
 * closed pipe) is a failure, found when it happened or when the last of it is flushed. */
static int close_stdout(void)
{
	int failed;

	errno = 0;
	failed = fflush(stdout) != 0 || ferror(stdout);
	/* a closed standard output that nothing was written to is no failure */
	if (fclose(stdout) != 0 && errno != EBADF)
		failed = 1;
	if (!failed)
		return 0;
	fprintf(stderr, "npulaunch: cannot write standard output%s%s\n", errno ? ": " : "",
		errno ? strerror(errno) : "");
	return -1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"recipes", required_argument, NULL, 'r'},
		{"templates", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	struct npl_cli cli;
	const char *env;
	int c, rc = NPL_EXIT_USAGE, want_version = 0;
	size_t i;

	memset(&cli, 0, sizeof(cli));
	npl_arena_init(&cli.arena);
	cli.color = isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
	cli.recipe_dirs = calloc((size_t)argc + 64, sizeof(*cli.recipe_dirs));
	if (!cli.recipe_dirs)
		npl_oom();
	env = getenv("NPULAUNCH_RECIPES");
	if (env && *env) {
		char *copy = npl_arena_strdup(&cli.arena, env), *tok, *save = NULL;

		for (tok = strtok_r(copy, ":", &save); tok && cli.nrecipe_dirs < 64;
		     tok = strtok_r(NULL, ":", &save))
			cli.recipe_dirs[cli.nrecipe_dirs++] = tok;
	}
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+hV", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			cli.recipe_dirs[cli.nrecipe_dirs++] = optarg;
			break;
		case 't':
			cli.templates_dir = optarg;
			break;
		case 'h':
			usage(stdout);
			rc = NPL_EXIT_OK;
			goto out;
		case 'V':
			want_version = 1;
			break;
		default:
			rc = npl_cli_usage_error(NULL, "unknown option '%s'", argv[optind - 1]);
			goto out;
		}
	}
	if (want_version) {
		rc = version(&cli);
		goto out;
	}
	if (optind >= argc) {
		usage(stderr);
		goto out;
	}
	for (i = 0; i < NPL_ARRAY_SIZE(commands); i++) {
		if (strcmp(commands[i].name, argv[optind]))
			continue;
		{
			int sub_argc = argc - optind;
			char **sub_argv = argv + optind;

			/* each command parses its own options from its name on */
			optind = 0;
			rc = commands[i].run(sub_argc, sub_argv, &cli);
		}
		goto out;
	}
	{
		const char *names[NPL_ARRAY_SIZE(commands)], *best;

		for (i = 0; i < NPL_ARRAY_SIZE(commands); i++)
			names[i] = commands[i].name;
		best = npl_did_you_mean(argv[optind], names, (int)NPL_ARRAY_SIZE(commands));
		if (best)
			rc = npl_cli_usage_error(NULL, "unknown command '%s' (did you mean '%s'?)",
						 argv[optind], best);
		else
			rc = npl_cli_usage_error(NULL, "unknown command '%s'", argv[optind]);
	}
out:
	npl_cli_flush(&cli);
	if (close_stdout() && rc == NPL_EXIT_OK)
		rc = NPL_EXIT_FAIL;
	npl_diag_release(&cli.diag);
	npl_arena_release(&cli.arena);
	free(cli.recipe_dirs);
	return rc;
}
