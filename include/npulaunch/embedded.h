/*
 * embedded.h: layer base. The files compiled into the binary (recipes/, templates/ and the
 * schemas of docs/json/ that input is checked against). Included by the generated tables and
 * by the modules that read them.
 */
#ifndef NPL_EMBEDDED_H
#define NPL_EMBEDDED_H

/* One embedded file: its path relative to the source tree and its bytes (NUL-terminated). */
struct npl_embedded {
	const char *name;
	const char *data;
	unsigned len;
};

/* The recipe database shipped in recipes/, ending with a zeroed entry. */
extern const struct npl_embedded npl_embedded_recipes[];
extern const unsigned npl_embedded_recipes_count;
/* The script templates shipped in templates/, ending with a zeroed entry. */
extern const struct npl_embedded npl_embedded_templates[];
extern const unsigned npl_embedded_templates_count;
/* The JSON Schemas of docs/json/ that npulaunch checks what it reads against (a manifest's),
 * ending with a zeroed entry. */
extern const struct npl_embedded npl_embedded_schemas[];
extern const unsigned npl_embedded_schemas_count;

struct npl_ynode;

/* One shipped recipe file as the YAML loader makes it (yaml.h), parsed at build time by
 * src/gen/db_gen.c: its name and its documents. */
struct npl_embedded_tree {
	const char *name;
	struct npl_ynode *const *docs;
	int ndocs;
};
/* One entry per file of npl_embedded_recipes, in its order, ending with a zeroed entry; NULL in
 * the generators, which parse. */
extern const struct npl_embedded_tree *const npl_embedded_recipe_trees;

#endif
