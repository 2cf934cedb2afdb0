/* cmd_import.c: `npulaunch import PAGE... -o DIR`: recipes written from upstream pages. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "npulaunch/cli.h"
#include "npulaunch/fsio.h"
#include "npulaunch/import.h"
#include "npulaunch/output.h"
#include "npulaunch/page.h"
#include "npulaunch/yaml.h"

static void help(void)
{
	puts("usage: npulaunch import PAGE... -o DIR [--commit HEX] [--meta KEY=VALUE]... [--check] [--json]\n"
	     "\n"
	     "Read SGLang best-practice pages (the seed pages' text form, SGLang's MDX pages, older\n"
	     "and 2026 layouts) and write one recipe per section into DIR/MODEL/, with what every\n"
	     "section of a page shares in DIR/MODEL/model.yaml. Each recipe is proved before it is\n"
	     "written: resolved, and what each node would exec compared with what the page's own\n"
	     "script launches there (argv as argparse reads it, environment, unsets, sources,\n"
	     "tuning, router, benchmark) until nothing differs. The page is parsed, never executed.\n"
	     "Where the page contradicts itself the recipe deploys what it evidently means, with a\n"
	     "`deviations` entry, and a warning says so; what cannot be read or expressed is an\n"
	     "error at page:line:col, and nothing is written. Then: npulaunch --recipes DIR validate.\n"
	     "\n"
	     "Options:\n"
	     "  -o, --output DIR  the recipe folder to write into (made when missing)\n"
	     "  --commit HEX      the upstream commit the pages were read at, for the provenance\n"
	     "  --meta KEY=VALUE  what a section's metadata lacks (a page with no metadata table,\n"
	     "                    like MiMo-V2.5-Pro's): Title, Model, Hardware, Cards, Deploy Mode,\n"
	     "                    Quantization, Dataset, TPOT, TTFT; never what the page gives. The\n"
	     "                    recipe records it as a deviation\n"
	     "  --check           write nothing; exit 1 when DIR's files differ from the import\n"
	     "  --json            {written, check, differences, pages: [{page, model, model_file,\n"
	     "                    recipes: [{id, file, section}]}]} (docs/json.md)\n"
	     "  -h, --help        this help\n"
	     "\n"
	     "Examples:\n"
	     "  npulaunch import glm_5_2.mdx -o recipes/\n"
	     "  npulaunch import --commit 165e34cd docs/best-practices/*.mdx -o recipes/ --check");
}

static int commit_ok(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");

	return n >= 7 && n <= 64 && !s[n];
}

/* What a maintainer adds to an imported recipe and a re-import keeps: the ids it replaced
 * (`aliases`) and its `notes`, read from the file the import replaces (if there is one) into
 * doc. 0, or -1 when that file is there but cannot be read as YAML. */
static int keep_curated(struct npl_cli *cli, const char *file, cJSON *doc)
{
	struct npl_ynode **docs, *top;
	struct stat st;
	size_t len;
	char *text;
	int nd, i, j;

	if (lstat(file, &st) || !S_ISREG(st.st_mode))
		return 0;
	if (!(text = npl_read_file_in(&cli->arena, file, &len, &cli->diag)) ||
	    npl_yaml_load(&cli->arena, file, text, len, &docs, &nd, &cli->diag))
		return -1;
	if (nd != 1 || (top = docs[0])->kind != NPL_YMAP)
		return 0;
	for (i = 0; i < top->n; i++) {
		const struct npl_ynode *k = top->kids[2 * i], *v = top->kids[2 * i + 1];

		if (!strcmp(k->str, "notes") && v->kind == NPL_YSCALAR && !npl_ynull(v)) {
			cJSON_DeleteItemFromObjectCaseSensitive(doc, "notes");
			cJSON_AddStringToObject(doc, "notes", v->str);
		} else if (!strcmp(k->str, "aliases") && v->kind == NPL_YSEQ) {
			cJSON *a = cJSON_CreateArray();

			for (j = 0; j < v->n; j++)
				if (v->kids[j]->kind == NPL_YSCALAR)
					cJSON_AddItemToArray(a, cJSON_CreateString(v->kids[j]->str));
			cJSON_DeleteItemFromObjectCaseSensitive(doc, "aliases");
			cJSON_AddItemToObject(doc, "aliases", a);
		}
	}
	return 0;
}

/* --meta: the values given for what a section's metadata lacks, by key; title for "Title". */
struct meta {
	const char *v[NPL_PAGE_NKEYS];
	const char *title;
};

/* KEY=VALUE of --meta into mt: 0, or a usage error. */
static int meta_opt(struct meta *mt, const char *arg)
{
	const char *eq = strchr(arg, '=');
	size_t n = eq ? (size_t)(eq - arg) : 0;
	int k;

	if (!eq || !eq[1])
		return npl_cli_usage_error("import", "--meta '%s' is not KEY=VALUE", arg);
	if (n == 5 && !strncasecmp(arg, "Title", 5)) {
		mt->title = eq + 1;
		return 0;
	}
	for (k = 0; k < NPL_PAGE_NKEYS; k++)
		if (k != NPL_PAGE_FORMAT && strlen(npl_page_key_name((enum npl_page_key)k)) == n &&
		    !strncasecmp(arg, npl_page_key_name((enum npl_page_key)k), n)) {
			mt->v[k] = eq + 1;
			return 0;
		}
	return npl_cli_usage_error("import", "--meta '%.*s': not a metadata key (Title, Model, Hardware, Cards, "
				   "Deploy Mode, Quantization, Dataset, TPOT, TTFT)", (int)n, arg);
}

/* What the sections lack, from --meta (import_infer.c records it as given at import). */
static void meta_fill(struct npl_page *p, const struct meta *mt)
{
	int i;

	for (i = 0; i < p->n; i++)
		npl_page_give(&p->v[i], mt->title, mt->v);
}

/* One page into the set: DIR/MODEL/model.yaml and DIR/MODEL/ID.yaml; into pages (may be NULL)
 * what it wrote. */
static int one(struct npl_cli *cli, const char *path, const char *dir, const char *commit, const struct meta *mt,
	       struct npl_outset *set, cJSON *pages, cJSON *models)
{
	cJSON *pj = NULL, *rj = NULL;
	struct npl_import_opts o = {0};
	struct npl_import_result r;
	struct npl_page p;
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char *text, *y;
	size_t len;
	int i;

	if (!(text = npl_read_file_in(&cli->arena, path, &len, &cli->diag)))
		return -1;
	npl_diag_source(&cli->diag, path, text);
	if (npl_page_read(&p, path, text, len, &cli->arena, &cli->diag))
		return -1;
	meta_fill(&p, mt);
	o.page_name = base;
	o.commit = commit;
	o.dirs = cli->recipe_dirs;
	o.ndirs = cli->nrecipe_dirs;
	if (npl_import_page(&p, &o, &r, &cli->arena, &cli->diag))
		return -1;
	/* models: the model of each page so far; two pages of one model would write its model.yaml twice */
	if (cJSON_GetObjectItemCaseSensitive(models, r.model_id)) {
		npl_error(&cli->diag, &(struct npl_loc){path, 0, 0},
			  "model %s is also the model of %s, imported in this run: import one page per model into a folder",
			  r.model_id, cJSON_GetObjectItemCaseSensitive(models, r.model_id)->valuestring);
		npl_import_release(&r);
		return -1;
	}
	cJSON_AddStringToObject(models, r.model_id, path);
	y = npl_import_yaml(r.model, npl_arena_printf(&cli->arena, "%s, imported from %s by npulaunch import",
							cJSON_GetObjectItem(r.model, "name")->valuestring, base),
			    &cli->arena);
	if (!y) {
		npl_import_release(&r);
		return npl_error(&cli->diag, NULL, "%s: the model's document cannot be written as YAML", path);
	}
	npl_out_add(set, npl_arena_printf(&cli->arena, "%s/%s/model.yaml", dir, r.model_id), y, strlen(y), 0644);
	if (pages) {
		pj = cJSON_CreateObject();
		cJSON_AddStringToObject(pj, "page", path);
		cJSON_AddStringToObject(pj, "model", r.model_id);
		cJSON_AddStringToObject(pj, "model_file", npl_arena_printf(&cli->arena, "%s/%s/model.yaml", dir, r.model_id));
		rj = cJSON_AddArrayToObject(pj, "recipes");
		cJSON_AddItemToArray(pages, pj);
	}
	for (i = 0; i < r.n; i++) {
		const char *file = npl_arena_printf(&cli->arena, "%s/%s/%s.yaml", dir, r.model_id, r.v[i].id);

		if (keep_curated(cli, file, r.v[i].doc)) {
			npl_import_release(&r);
			return -1;
		}
		y = npl_import_yaml(r.v[i].doc, npl_arena_printf(&cli->arena, "%s (%s)", r.v[i].section->title, base),
				    &cli->arena);
		if (!y) {
			struct npl_loc at = r.v[i].section->loc;

			npl_import_release(&r);
			return npl_error(&cli->diag, &at, "this section's recipe cannot be written as YAML");
		}
		npl_out_add(set, file, y, strlen(y), 0644);
		if (rj) {
			cJSON *e = cJSON_CreateObject();

			cJSON_AddStringToObject(e, "id", r.v[i].id);
			cJSON_AddStringToObject(e, "file", file);
			cJSON_AddStringToObject(e, "section", r.v[i].section->title);
			cJSON_AddItemToArray(rj, e);
		}
	}
	fprintf(stderr, "npulaunch: %s: %d recipe%s of %s\n", npl_escape_in(&cli->arena, base), r.n, r.n == 1 ? "" : "s", r.model_id);
	npl_import_release(&r);
	return 0;
}

int npl_cmd_import(int argc, char **argv, struct npl_cli *cli)
{
	static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
					     {"commit", required_argument, NULL, 'C'},
					     {"meta", required_argument, NULL, 'M'},
					     {"check", no_argument, NULL, 'c'},
					     {"json", no_argument, NULL, 'j'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	struct npl_outset set = {0};
	struct meta mt = {{0}, NULL};
	const char *dir = NULL, *commit = NULL;
	int c, i, check = 0, json = 0, differ = 0, rc = NPL_EXIT_OK;
	cJSON *top = NULL, *pages = NULL, *models;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			dir = optarg;
			break;
		case 'C':
			commit = optarg;
			break;
		case 'M':
			if (meta_opt(&mt, optarg))
				return NPL_EXIT_USAGE;
			break;
		case 'c':
			check = 1;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			help();
			return NPL_EXIT_OK;
		case ':':
			return npl_cli_usage_error("import", "option '%s' needs a value", argv[optind - 1]);
		default:
			return npl_cli_usage_error("import", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (dir && *dir && npl_cli_output_dir("import", dir))
		return NPL_EXIT_USAGE;
	if (dir && *dir && json && npl_cli_json_text("import", "-o", dir))
		return NPL_EXIT_USAGE;
	if (!dir || !*dir || optind == argc) {
		fprintf(stderr, "npulaunch: import: %s (npulaunch import PAGE... -o DIR)\n",
			optind == argc ? "name at least one page" : "-o DIR is required");
		return NPL_EXIT_USAGE;
	}
	if (commit && !commit_ok(commit)) {
		fprintf(stderr, "npulaunch: import: --commit '%s' is not a commit id (7 to 64 lowercase hex digits)\n",
			commit);
		return NPL_EXIT_USAGE;
	}
	if (json) {
		top = cJSON_CreateObject();
		pages = cJSON_CreateArray();
	}
	models = cJSON_CreateObject();
	for (i = optind; i < argc; i++)
		if (one(cli, argv[i], dir, commit, &mt, &set, pages, models))
			rc = NPL_EXIT_INVALID;
	cJSON_Delete(models);
	npl_cli_flush(cli);
	if (rc == NPL_EXIT_OK) {
		if (check)
			rc = (differ = npl_out_check(&set, json ? stderr : stdout)) ? NPL_EXIT_FAIL : NPL_EXIT_OK;
		else if (npl_out_commit(&set, &cli->diag))
			rc = NPL_EXIT_FAIL;
	} else {
		fputs("npulaunch: import: nothing written\n", stderr);
	}
	npl_cli_flush(cli);
	if (json) {
		char *s;

		cJSON_AddBoolToObject(top, "written", rc == NPL_EXIT_OK && !check);
		cJSON_AddBoolToObject(top, "check", check);
		cJSON_AddNumberToObject(top, "differences", differ);
		cJSON_AddItemToObject(top, "pages", pages);
		s = cJSON_Print(top);
		npl_cli_puts_json(s);
		free(s);
		cJSON_Delete(top);
	}
	npl_out_release(&set);
	return rc;
}
