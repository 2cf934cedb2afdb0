/* cmd_drift.c: `npulaunch drift PAGE...`: how upstream's pages and the recipes differ. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/cli.h"
#include "npulaunch/drift.h"
#include "npulaunch/fsio.h"
#include "npulaunch/page.h"

static void help(void)
{
	puts("usage: npulaunch drift PAGE... [--json]   (with the global --recipes DIR: those recipes too)\n"
	     "\n"
	     "Compare SGLang best-practice pages with the recipes: for every section, the recipe it\n"
	     "corresponds to (by the id its title makes, by a recipe's alias, or by shape: the same\n"
	     "model, hardware, mode, cards, quantization and dataset when upstream retitled it; a\n"
	     "page with no section title by provenance: the recipe imported from a page of its\n"
	     "file name with no section named), and each difference in metadata, flags,\n"
	     "environment, unsets, sources, tuning, router and benchmark, node by node, as argparse\n"
	     "and the shell read them; sections no recipe corresponds to; recipes of the page's\n"
	     "model that no section does. Exit 0 when every page is in sync, 1 when not, 5 when a\n"
	     "page or a recipe cannot be read. A catalogue's CI runs it against the pages it was\n"
	     "imported from (docs/recipes.md).\n"
	     "\n"
	     "Lines: '= SECTION -> ID (by id)' in sync, '~ SECTION -> ID (by shape)' then one\n"
	     "'  WHERE KIND NAME: page VALUE, recipe VALUE' per difference, '+ SECTION' no recipe,\n"
	     "'- ID' a recipe no section corresponds to.\n"
	     "\n"
	     "Options:\n"
	     "  --json      {in_sync, pages: [{page, model, sections: [{title, at, recipe, by,\n"
	     "              differences: [{kind, role, node, name, page, recipe}]}], missing}]}\n"
	     "  -h, --help  this help\n"
	     "\n"
	     "Examples:\n"
	     "  npulaunch drift docs/best-practices/*.mdx\n"
	     "  npulaunch --recipes recipes/ drift glm_5_2.mdx --json | jq '.pages[].sections[].differences'");
}

static const char *where(const struct npl_diff *x, struct npl_arena *a)
{
	if (!strcmp(x->role, "router") || !strcmp(x->role, "recipe"))
		return x->role;
	if (!strcmp(x->role, "bench"))
		return x->instance ? npl_arena_printf(a, "bench %d", x->instance + 1) : "bench";
	return npl_arena_printf(a, "%s node %d%s", x->role, x->node + 1,
				x->instance ? npl_arena_printf(a, " instance %d", x->instance + 1) : "");
}

static const char *shown(const char *v)
{
	return !v ? "(none)" : !*v ? "(set)" : v;
}

static void print_text(struct npl_cli *cli, const struct npl_drift_page *dp)
{
	struct npl_arena *a = &cli->arena;
	int i, j;

	printf("%s:\n", npl_escape_in(a, dp->p->file));
	for (i = 0; i < dp->n; i++) {
		const struct npl_drift_section *x = &dp->v[i];
		const char *t = npl_escape_in(a, x->s->title ? x->s->title : "(untitled)");

		if (!x->recipe) {
			printf("+ %s: %s\n", t, x->failed ? "could not be read" : "no recipe corresponds to it");
			continue;
		}
		printf("%c %s -> %s (by %s)%s\n", x->diffs.n || x->failed ? '~' : '=', t, x->recipe->id, x->by,
		       x->failed ? ": could not be compared" : "");
		for (j = 0; j < x->diffs.n; j++) {
			const struct npl_diff *y = &x->diffs.v[j];

			printf("    %s %s %s%s: page %s, recipe %s\n", where(y, a), npl_diff_kind_name(y->kind),
			       y->kind == NPL_DIFF_FLAG ? "--" : "", npl_escape_in(a, y->name),
			       npl_escape_in(a, shown(y->page)), npl_escape_in(a, shown(y->plan)));
		}
	}
	for (i = 0; i < dp->nmissing; i++)
		printf("- %s: no section of the page corresponds to it\n", dp->missing[i]->id);
}

static cJSON *json_page(const struct npl_drift_page *dp, struct npl_arena *a)
{
	cJSON *o = cJSON_CreateObject(), *secs, *miss;
	int i, j;

	cJSON_AddStringToObject(o, "page", dp->p->file);
	if (dp->model_id)
		cJSON_AddStringToObject(o, "model", dp->model_id);
	else
		cJSON_AddNullToObject(o, "model");
	secs = cJSON_AddArrayToObject(o, "sections");
	for (i = 0; i < dp->n; i++) {
		const struct npl_drift_section *x = &dp->v[i];
		cJSON *s = cJSON_CreateObject(), *ds;

		cJSON_AddItemToArray(secs, s);
		if (x->s->title)
			cJSON_AddStringToObject(s, "title", x->s->title);
		else
			cJSON_AddNullToObject(s, "title");
		if (x->s->loc.file) {
			char at[64];

			snprintf(at, sizeof(at), ":%d:%d", x->s->loc.line, x->s->loc.col);
			cJSON_AddItemToObject(s, "at", cJSON_CreateString(npl_arena_printf(a, "%s%s", dp->p->file, at)));
		}
		if (x->recipe) {
			cJSON_AddStringToObject(s, "recipe", x->recipe->id);
			cJSON_AddStringToObject(s, "by", x->by);
		} else {
			cJSON_AddNullToObject(s, "recipe");
			cJSON_AddNullToObject(s, "by");
		}
		cJSON_AddBoolToObject(s, "failed", x->failed);
		ds = cJSON_AddArrayToObject(s, "differences");
		for (j = 0; j < x->diffs.n; j++) {
			const struct npl_diff *y = &x->diffs.v[j];
			cJSON *e = cJSON_CreateObject();

			cJSON_AddStringToObject(e, "kind", npl_diff_kind_name(y->kind));
			cJSON_AddStringToObject(e, "role", y->role);
			cJSON_AddNumberToObject(e, "node", y->node);
			cJSON_AddNumberToObject(e, "instance", y->instance);
			cJSON_AddStringToObject(e, "name", y->name);
			cJSON_AddItemToObject(e, "page", y->page ? cJSON_CreateString(y->page) : cJSON_CreateNull());
			cJSON_AddItemToObject(e, "recipe", y->plan ? cJSON_CreateString(y->plan) : cJSON_CreateNull());
			cJSON_AddItemToArray(ds, e);
		}
	}
	miss = cJSON_AddArrayToObject(o, "missing");
	for (i = 0; i < dp->nmissing; i++)
		cJSON_AddItemToArray(miss, cJSON_CreateString(dp->missing[i]->id));
	return o;
}

int npl_cmd_drift(int argc, char **argv, struct npl_cli *cli)
{
	static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	struct npl_db db;
	struct npl_engine e;
	cJSON *pages = NULL, *top = NULL;
	int c, i, json = 0, rc, differ = 0, broken = 0;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c == 'j') {
			json = 1;
		} else if (c == 'h') {
			help();
			return NPL_EXIT_OK;
		} else {
			return npl_cli_usage_error("drift", c == ':' ? "option '%s' needs a value" : "unknown option '%s'",
						   argv[optind - 1]);
		}
	}
	if (optind == argc) {
		fputs("npulaunch: drift: name at least one page (npulaunch drift PAGE...)\n", stderr);
		return NPL_EXIT_USAGE;
	}
	if ((rc = npl_cli_open_db(cli, &db)))
		return rc;
	if (npl_engine_load(&e, &db, &cli->arena, &cli->diag)) {
		npl_cli_flush(cli);
		return NPL_EXIT_INVALID;
	}
	if (json) {
		top = cJSON_CreateObject();
		cJSON_AddBoolToObject(top, "in_sync", 0);
		pages = cJSON_AddArrayToObject(top, "pages");
	}
	for (i = optind; i < argc; i++) {
		struct npl_page p;
		struct npl_drift_page dp;
		size_t len;
		char *text = npl_read_file_in(&cli->arena, argv[i], &len, &cli->diag);

		if (!text || (npl_diag_source(&cli->diag, argv[i], text), npl_page_read(&p, argv[i], text, len, &cli->arena,
											   &cli->diag))) {
			broken = 1;
			continue;
		}
		broken |= npl_drift_page(&db, &e, &p, &dp, &cli->arena, &cli->diag) != 0;
		differ += npl_drift_count(&dp);
		if (json)
			cJSON_AddItemToArray(pages, json_page(&dp, &cli->arena));
		else
			print_text(cli, &dp);
	}
	npl_cli_flush(cli);
	if (json) {
		char *s;

		cJSON_ReplaceItemInObject(top, "in_sync", cJSON_CreateBool(!differ && !broken));
		s = cJSON_Print(top);
		npl_cli_puts_json(s);
		free(s);
		cJSON_Delete(top);
	} else {
		printf("%s\n", broken ? "not every page could be compared" : differ ? "out of sync" : "in sync");
	}
	return broken ? NPL_EXIT_INVALID : differ ? NPL_EXIT_FAIL : NPL_EXIT_OK;
}
