/*
 * import.h: layer sync. An upstream page turned into recipes: for every section, a recipe
 * document (its metadata, topology, speculative block and benchmark read from the page, then
 * every flag, variable, unset, source and tuning value that the layers below do not already
 * give), proved by resolving it and comparing what each node would exec with what the page's
 * own script launches (compare.h) until nothing differs; then what every section shares moved
 * into the model document, each move proved the same way. Where the page contradicts itself
 * the recipe deploys what it evidently means, with a `deviations` entry and a warning; what
 * cannot be expressed is a located error, never a guess.
 * Included by the import command and its tests.
 */
#ifndef NPL_IMPORT_H
#define NPL_IMPORT_H

#include <cjson/cJSON.h>

#include "npulaunch/arena.h"
#include "npulaunch/diag.h"
#include "npulaunch/page.h"
#include "npulaunch/recipe.h"

struct npl_import_opts {
	const char *page_name;       /* how provenance names the page (its file name) */
	const char *commit;          /* --commit, or NULL */
	const char *const *dirs;     /* --recipes folders the database is opened with */
	int ndirs;
};

struct npl_import_recipe {
	const char *id;
	cJSON *doc;                  /* the recipe document */
	const struct npl_page_section *section;
};

struct npl_import_result {
	const char *model_id;
	cJSON *model;                /* the model document */
	struct npl_import_recipe *v;
	int n;
};

/* Import every section of page p. 0, or -1 with located errors in d (every section is tried;
 * warnings name each deviation). The documents are the caller's to cJSON_Delete (see
 * npl_import_release). */
int npl_import_page(const struct npl_page *p, const struct npl_import_opts *o, struct npl_import_result *out,
		    struct npl_arena *a, struct npl_diag *d);
void npl_import_release(struct npl_import_result *r);

/* The YAML text of a document as import writes it: a comment line, then the document; NULL when
 * a value cannot be written (text that is not UTF-8). */
char *npl_import_yaml(const cJSON *doc, const char *comment, struct npl_arena *a);

#endif
