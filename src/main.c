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

#include "npulaunch/arena.h"
#include "npl_version.h"
#include <cjson/cJSON.h>

#include "npulaunch/cli.h"
#include "npulaunch/text.h"

static int cmd_help(int argc, char **argv, struct npl_cli *cli);
static int cmd_version(int argc, char **argv, struct npl_cli *cli);

static const struct npl_command commands[] = {
	{"list", npl_cmd_list, "list the recipes (filter with a query)"},
	{"validate", npl_cmd_validate, "check the recipe database: schema, references, rules, flags"},
	{"show", npl_cmd_show, "show the plan of a recipe: roles, nodes, env, flags"},
	{"render", npl_cmd_render, "write the launch scripts and manifest of a recipe"},
	{"diff", npl_cmd_diff, "what differs between two recipes, per role"},
	{"import", npl_cmd_import, "write recipes from upstream best-practice pages"},
	{"drift", npl_cmd_drift, "how upstream's pages and the recipes differ"},
	{"apply", npl_cmd_apply, "on a node: tune the host and launch this node's role"},
	{"preflight", npl_cmd_preflight, "on a node: check what its role's launch needs, before it starts"},
	{"tune", npl_cmd_tune, "check, apply or revert the host tuning"},
	{"wait", npl_cmd_wait, "wait until servers answer /health"},
	{"status", npl_cmd_status, "is every endpoint of a deployment up"},
	{"bench", npl_cmd_bench, "run the recipe's benchmark against the deployment"},
	{"verify", npl_cmd_verify, "judge benchmark results against the recipe's promise"},
	{"help", cmd_help, "this help, or a command's: help COMMAND"},
	{"version", cmd_version, "the version of npulaunch and of its recipe database"},
};

static void usage(FILE *fp)
{
	size_t i;

	fputs("usage: npulaunch [--recipes DIR] [--templates DIR] COMMAND [ARGS]  (global options may follow COMMAND too)\n"
	      "       npulaunch --version | --help\n\n"
	      "Deploy SGLang on Ascend NPUs from a database of measured recipes.\n\n"
	      "Commands:\n", fp);
	for (i = 0; i < NPL_ARRAY_SIZE(commands); i++)
		fprintf(fp, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fputs("\nGlobal options:\n"
	      "  --recipes DIR    also load the recipes in DIR (repeatable; they override the\n"
	      "                   compiled-in ones with the same id); NPULAUNCH_RECIPES=DIR:DIR\n"
	      "  --templates DIR  read the script templates from DIR instead of the compiled-in ones\n"
	      "  -q, --quiet      print errors only (no warnings or notes)\n"
	      "  -h, --help       this help; 'npulaunch help COMMAND' (or COMMAND --help) for a command\n"
	      "  --version        the version of npulaunch and of its recipe database\n\n"
	      "Examples:\n"
	      "  npulaunch list\n"
	      "  npulaunch render kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms --model-path /models/kimi \\\n"
	      "      --draft-model-path /models/kimi-eagle3 --ifname eth0 -o deploy/\n"
	      "\nExit codes: 0 ok, 1 failure or differences found, 2 usage error, 3 no such recipe,\n"
	      "4 ambiguous query, 5 invalid recipe data.\n", fp);
}

static int version(struct npl_cli *cli, int json)
{
	struct npl_db db;
	int rc = npl_cli_open_db(cli, &db);

	if (json) {
		/* {version, database: {version, recipes, models, hardware_profiles} or null} */
		cJSON *o = cJSON_CreateObject();
		char *t;

		cJSON_AddStringToObject(o, "version", NPL_VERSION);
		if (rc == 0) {
			cJSON *d = cJSON_AddObjectToObject(o, "database");

			cJSON_AddStringToObject(d, "version", db.defaults->db_version);
			cJSON_AddNumberToObject(d, "recipes", db.nrecipes);
			cJSON_AddNumberToObject(d, "models", db.nmodels);
			cJSON_AddNumberToObject(d, "hardware_profiles", db.nhardware);
		} else {
			cJSON_AddNullToObject(o, "database");
		}
		t = cJSON_Print(o);
		puts(t);
		cJSON_free(t);
		cJSON_Delete(o);
		return rc;
	}
	printf("npulaunch %s\n", NPL_VERSION);
	if (rc == 0)
		printf("recipe database %s (%d recipes, %d models, %d hardware profiles)\n",
		       db.defaults->db_version, db.nrecipes, db.nmodels, db.nhardware);
	return rc;
}

/* npulaunch help [COMMAND]: this help, or COMMAND --help. */
static int cmd_help(int argc, char **argv, struct npl_cli *cli)
{
	size_t i;

	if (argc > 2)
		return npl_cli_usage_error("help", "unexpected argument '%s'", argv[2]);
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		puts("usage: npulaunch help [COMMAND]\n\nThe commands and global options, or COMMAND's own help (as COMMAND --help).\n\n"
		     "Examples:\n  npulaunch help\n  npulaunch help render");
		return NPL_EXIT_OK;
	}
	if (argc < 2) {
		usage(stdout);
		return NPL_EXIT_OK;
	}
	for (i = 0; i < NPL_ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i].name, argv[1])) {
			char *sub[] = {argv[1], "--help", NULL};

			optind = 0;
			npl_cli_set_command(commands[i].name);
			return commands[i].run(2, sub, cli);
		}
	{
		const char *names[NPL_ARRAY_SIZE(commands)], *best;

		for (i = 0; i < NPL_ARRAY_SIZE(commands); i++)
			names[i] = commands[i].name;
		best = npl_did_you_mean(argv[1], names, (int)NPL_ARRAY_SIZE(commands));
		if (best)
			return npl_cli_usage_error("help", "no command '%s' (did you mean '%s'?)", argv[1], best);
		return npl_cli_usage_error("help", "no command '%s'", argv[1]);
	}
}

/* npulaunch version: as --version. */
static int cmd_version(int argc, char **argv, struct npl_cli *cli)
{
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		puts("usage: npulaunch version [--json]\n\nThe version of npulaunch and of its recipe database (as --version).\n\n"
		     "Options:\n  --json      {version, database: {version, recipes, models, hardware_profiles}}\n\n"
		     "Examples:\n  npulaunch version\n  npulaunch version --json");
		return NPL_EXIT_OK;
	}
	if (argc > 2 || (argc == 2 && strcmp(argv[1], "--json")))
		return npl_cli_usage_error("version", "%s '%s'", argv[argc - 1][0] == '-' ? "unknown option" : "unexpected argument",
					   argv[argc - 1]);
	return version(cli, argc == 2);
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

/*
 * Global options may follow the command too (npulaunch list --recipes DIR): they are taken out
 * of the command's arguments before it parses its own. Until "--", each --recipes DIR,
 * --recipes=DIR, --templates DIR, --templates=DIR, -q and --quiet counts; 0, or a usage error.
 */
static int take_global_options(int *argc, char **argv, struct npl_cli *cli)
{
	int i = 1, o = 1;

	while (i < *argc) {
		const char *a = argv[i], *v = NULL;
		int isr = 0, take = 1;

		if (!strcmp(a, "--")) {
			while (i < *argc)
				argv[o++] = argv[i++];
			break;
		}
		if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			cli->diag.quiet = 1;
			i++;
			continue;
		}
		if (!strcmp(a, "--recipes") || !strcmp(a, "--templates")) {
			if (i + 1 >= *argc)
				return npl_cli_usage_error(NULL, "option '%s' needs a value", a);
			isr = a[2] == 'r';
			v = argv[i + 1];
			take = 2;
		} else if (!strncmp(a, "--recipes=", 10) || !strncmp(a, "--templates=", 12)) {
			isr = a[2] == 'r';
			v = strchr(a, '=') + 1;
		} else {
			argv[o++] = argv[i++];
			continue;
		}
		if (isr)
			cli->recipe_dirs[cli->nrecipe_dirs++] = v;
		else
			cli->templates_dir = v;
		i += take;
	}
	argv[o] = NULL;
	*argc = o;
	return 0;
}

/* The usage error of a name that is no command, with the nearest one. */
static int unknown_command(const char *name)
{
	const char *names[NPL_ARRAY_SIZE(commands)], *best;
	size_t i;

	for (i = 0; i < NPL_ARRAY_SIZE(commands); i++)
		names[i] = commands[i].name;
	best = npl_did_you_mean(name, names, (int)NPL_ARRAY_SIZE(commands));
	if (best)
		return npl_cli_usage_error(NULL, "unknown command '%s' (did you mean '%s'?)", name, best);
	return npl_cli_usage_error(NULL, "unknown command '%s'", name);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"recipes", required_argument, NULL, 'r'},
		{"templates", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{"quiet", no_argument, NULL, 'q'},
		{NULL, 0, NULL, 0},
	};
	struct npl_cli cli;
	const char *env;
	int c, rc = NPL_EXIT_USAGE, want_version = 0;
	size_t i;

	/* cJSON's allocations end the program on running out of memory, as every other one does
	 * (npl_xmalloc): no caller has to tell a NULL from cJSON_Print of a full memory */
	cJSON_InitHooks(&(cJSON_Hooks){npl_xmalloc, free});
	memset(&cli, 0, sizeof(cli));
	npl_arena_init(&cli.arena);
	/* a copy: the commands take the global options out of their part of argv */
	cli.argc = argc;
	cli.argv = npl_arena_calloc(&cli.arena, (size_t)argc + 1, sizeof(*cli.argv));
	memcpy(cli.argv, argv, (size_t)argc * sizeof(*argv));
	cli.color = isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
	cli.recipe_dirs = npl_xcalloc((size_t)argc + 64, sizeof(*cli.recipe_dirs));
	env = getenv("NPULAUNCH_RECIPES");
	if (env && *env) {
		char *copy = npl_arena_strdup(&cli.arena, env), *tok, *save = NULL;

		for (tok = strtok_r(copy, ":", &save); tok && cli.nrecipe_dirs < 64;
		     tok = strtok_r(NULL, ":", &save))
			cli.recipe_dirs[cli.nrecipe_dirs++] = tok;
	}
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:hVq", opts, NULL)) != -1) {
		switch (c) {
		case 'q':
			cli.diag.quiet = 1;
			break;
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
		case ':':
			rc = npl_cli_usage_error(NULL, "option '%s' needs a value", argv[optind - 1]);
			goto out;
		default:
			rc = npl_cli_usage_error(NULL, "unknown option '%s'", argv[optind - 1]);
			goto out;
		}
	}
	if (want_version) {
		rc = version(&cli, 0);
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
			npl_cli_set_command(commands[i].name);
			if (!(rc = take_global_options(&sub_argc, sub_argv, &cli)))
				rc = commands[i].run(sub_argc, sub_argv, &cli);
		}
		goto out;
	}
	rc = unknown_command(argv[optind]);
out:
	npl_cli_flush(&cli);
	npl_diag_flush_groups(&cli.diag, stderr);
	if ((close_stdout() | npl_cli_json_refused()) && rc == NPL_EXIT_OK) /* both, always */
		rc = NPL_EXIT_FAIL;
	npl_diag_release(&cli.diag);
	npl_arena_release(&cli.arena);
	free(cli.recipe_dirs);
	return rc;
}
