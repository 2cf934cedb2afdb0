/* cmd_validate.c: `npulaunch validate`: every problem of the recipe database, located. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "npulaunch/check.h"
#include "npulaunch/cli.h"
#include "npulaunch/fsio.h"
#include "npulaunch/resolve.h"
#include "npulaunch/site.h"
#include "npulaunch/text.h"

static void help(void)
{
	puts("usage: npulaunch validate [DIR|FILE...] [--allow-unknown-flag] [--json]\n"
	     "       npulaunch validate --site FILE [--json]\n"
	     "\n"
	     "Check the recipe database: the compiled-in recipes, the --recipes folders, and the\n"
	     "folders and files given. Every problem is reported with its file:line:col, not just\n"
	     "the first:\n"
	     "  - the schema: unknown keys (with a did-you-mean), types, required keys;\n"
	     "  - references: the model and hardware profile of each recipe;\n"
	     "  - the rules: tp-size = dies per card x cards per instance; dp-size divides tp-size;\n"
	     "    draft tokens = steps + 1 when top-k is 1; a draft model for EAGLE3; the largest\n"
	     "    decode CUDA-graph batch at most max-running-requests / dp-size (a recipe may\n"
	     "    waive it with a reason); ports unique per node; instances that fill whole nodes;\n"
	     "  - every flag against the SGLang engine-flag registry (recipes/engine/): unknown\n"
	     "    flags (with a did-you-mean), values of the wrong kind or outside the choices;\n"
	     "    flags a seed page uses that upstream SGLang lacks draw a warning.\n"
	     "Exit 0 when there is no error (warnings allowed), 5 when there is.\n"
	     "\n"
	     "Options:\n"
	     "  --allow-unknown-flag  report unknown flags as warnings\n"
	     "  --json                {recipes, errors, warnings, problems: [{severity, file, line, col, message}]}\n"
	     "  --site FILE           check a site file instead (repeatable): every key and value, located;\n"
	     "                        exit 2 on an error ({site_files, keys, errors, warnings, problems})\n"
	     "  -h, --help            this help\n"
	     "\n"
	     "Examples:\n"
	     "  npulaunch validate\n"
	     "  npulaunch validate my-recipes/ --json\n"
	     "  npulaunch validate --site site.yaml");
}

/* A diagnostic as validate --json has it: {severity, file, line, col, message}. */
static cJSON *problem_json(const struct npl_diag_entry *e)
{
	cJSON *p = cJSON_CreateObject();

	cJSON_AddStringToObject(p, "severity", e->sev == NPL_ERROR ? "error" : e->sev == NPL_WARNING ? "warning" : "note");
	if (e->loc.file) {
		cJSON_AddStringToObject(p, "file", e->loc.file);
		cJSON_AddNumberToObject(p, "line", e->loc.line);
		cJSON_AddNumberToObject(p, "col", e->loc.col);
	} else {
		cJSON_AddNullToObject(p, "file");
		cJSON_AddNullToObject(p, "line");
		cJSON_AddNullToObject(p, "col");
	}
	cJSON_AddStringToObject(p, "message", e->msg);
	return p;
}

/* validate --site FILE...: every problem of each site file, located; exit 2 when there is one. */
static int validate_sites(struct npl_cli *cli, const char *const *files, int n, int json, int more)
{
	int i, k, keys = 0, rc;

	if (more)
		return npl_cli_usage_error("validate", "--site checks site files: give recipes in another run");
	for (i = 0; i < n; i++) {
		struct npl_site s;

		memset(&s, 0, sizeof(s));
		npl_site_load_file(&s, &cli->arena, files[i], &cli->diag);
		for (k = 0; k < NPL_SITE_COUNT; k++)
			keys += s.key[k].n > 0;
	}
	rc = cli->diag.errors ? NPL_EXIT_USAGE : NPL_EXIT_OK;
	if (json) {
		cJSON *o = cJSON_CreateObject(), *p = cJSON_CreateArray();
		char *t;

		cJSON_AddNumberToObject(o, "site_files", n);
		cJSON_AddNumberToObject(o, "keys", keys);
		cJSON_AddNumberToObject(o, "errors", cli->diag.errors);
		cJSON_AddNumberToObject(o, "warnings", cli->diag.warnings);
		for (i = 0; i < cli->diag.n; i++)
			cJSON_AddItemToArray(p, problem_json(&cli->diag.v[i]));
		cJSON_AddItemToObject(o, "problems", p);
		t = cJSON_Print(o);
		npl_cli_puts_json(t);
		cJSON_free(t);
		cJSON_Delete(o);
		cli->diag.printed = cli->diag.n;
	}
	npl_cli_flush(cli);
	fprintf(stderr, "npulaunch: validate: %d site file%s, %d key%s, %d error%s\n", n, n == 1 ? "" : "s", keys,
		keys == 1 ? "" : "s", cli->diag.errors, cli->diag.errors == 1 ? "" : "s");
	return rc;
}

/* The database: the embedded recipes, the --recipes folders, then the files and folders
 * given, linked; every problem is collected rather than stopping at the first. */
static void load_all(struct npl_cli *cli, struct npl_db *db, char **files, int nfiles)
{
	int i;

	npl_db_init(db, &cli->arena);
	npl_db_load_embedded(db, &cli->diag);
	for (i = 0; i < cli->nrecipe_dirs; i++)
		npl_db_load_dir(db, cli->recipe_dirs[i], &cli->diag);
	for (i = 0; i < nfiles; i++) {
		if (npl_is_dir(files[i])) {
			npl_db_load_dir(db, files[i], &cli->diag);
		} else {
			size_t len;
			/* in the arena: the diag and the db keep pointing into the text */
			char *text = npl_read_file_in(&cli->arena, files[i], &len, &cli->diag);

			if (text)
				npl_db_load_text(db, files[i], text, len, db->nsources ? db->nsources : 1, &cli->diag);
		}
	}
	npl_db_link(db, &cli->diag);
}

/* Every recipe resolved and checked against the flag registry and the rules. */
static void check_recipes(struct npl_cli *cli, struct npl_db *db, int allow)
{
	int i;

	for (i = 0; i < db->nrecipes; i++) {
		const struct npl_layer *R = db->recipes[i];
		struct npl_resolve_opts o = {NULL, NULL, 0, 0, NULL, 0};
		cJSON *plan;

		/* a recipe whose documents have errors was reported already */
		if (!R->model || !R->hardware || !db->defaults || R->invalid || R->model->invalid ||
		    R->hardware->invalid || db->defaults->invalid)
			continue;
		plan = npl_resolve(db, R, &o, &cli->diag);
		if (plan) {
			if (!npl_cli_engine(cli, db)) {
				cJSON_Delete(plan);
				break;
			}
			npl_check_flags(cli->engine, plan, allow, &cli->diag);
			npl_check_rules(cli->engine, plan, R, &cli->diag);
		}
		cJSON_Delete(plan);
	}
}

/* validate --json: {recipes, errors, warnings, problems}; the problems count as printed. */
static void print_json(struct npl_cli *cli, const struct npl_db *db)
{
	cJSON *o = cJSON_CreateObject(), *probs = cJSON_CreateArray();
	char *s;
	int i;

	for (i = 0; i < cli->diag.n; i++)
		cJSON_AddItemToArray(probs, problem_json(&cli->diag.v[i]));
	cJSON_AddNumberToObject(o, "recipes", db->nrecipes);
	cJSON_AddNumberToObject(o, "errors", cli->diag.errors);
	cJSON_AddNumberToObject(o, "warnings", cli->diag.warnings);
	cJSON_AddItemToObject(o, "problems", probs);
	s = cJSON_Print(o);
	npl_cli_puts_json(s);
	cJSON_free(s);
	cJSON_Delete(o);
	cli->diag.printed = cli->diag.n;
}

int npl_cmd_validate(int argc, char **argv, struct npl_cli *cli)
{
	static const struct option opts[] = {
		{"allow-unknown-flag", no_argument, NULL, 'a'},
		{"json", no_argument, NULL, 'j'},
		{"site", required_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct npl_db db;
	int c, i, json = 0, allow = 0;
	const char *sites[8];
	int nsites = 0;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'a': allow = 1; break;
		case 'j': json = 1; break;
		case 'S':
			if (nsites == (int)NPL_ARRAY_SIZE(sites))
				return npl_cli_usage_error("validate", "--site: at most %d files", (int)NPL_ARRAY_SIZE(sites));
			sites[nsites++] = optarg;
			break;
		case 'h': help(); return NPL_EXIT_OK;
		case ':': return npl_cli_usage_error("validate", "option '%s' needs a value", argv[optind - 1]);
		default: return npl_cli_usage_error("validate", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (nsites)
		return validate_sites(cli, sites, nsites, json, optind < argc);
	for (i = 0; i < cli->nrecipe_dirs; i++)
		if (!npl_is_dir(cli->recipe_dirs[i]))
			return npl_cli_usage_error("validate", "recipe folder '%s' does not exist or is not a folder",
						   cli->recipe_dirs[i]);
	for (i = optind; i < argc; i++)
		if (access(argv[i], R_OK) != 0)
			return npl_cli_usage_error("validate", "cannot read '%s'", argv[i]);
	if (json)
		cli->diag.no_caret = 1;
	load_all(cli, &db, argv + optind, argc - optind);
	check_recipes(cli, &db, allow);
	if (json)
		print_json(cli, &db);
	else
		npl_cli_flush(cli);
	fprintf(stderr, "npulaunch: validate: %d recipe%s, %d error%s, %d warning%s\n", db.nrecipes,
		db.nrecipes == 1 ? "" : "s", cli->diag.errors, cli->diag.errors == 1 ? "" : "s",
		cli->diag.warnings, cli->diag.warnings == 1 ? "" : "s");
	return cli->diag.errors ? NPL_EXIT_INVALID : NPL_EXIT_OK;
}
