/*
 * recipe_internal.h: private to src/input/recipe*.c: what the pieces of the recipe loader share:
 * the reading context, a mapping's table of keys, the strict readers and the walker
 * (recipe_read.c), the handlers of the settings keys (recipe_settings.c), the layer of a document
 * (recipe_keys.c) and the names of the kinds (recipe.c).
 */
#ifndef NPL_RECIPE_INTERNAL_H
#define NPL_RECIPE_INTERNAL_H

#include <string.h>

#include "npulaunch/recipe.h"

/* The kinds of document a key belongs in (struct field's kinds). */
#define K_DEF (1u << NPL_LAYER_DEFAULTS)
#define K_HW (1u << NPL_LAYER_HARDWARE)
#define K_MODEL (1u << NPL_LAYER_MODEL)
#define K_RECIPE (1u << NPL_LAYER_RECIPE)
#define K_ALL (K_DEF | K_HW | K_MODEL | K_RECIPE)

/* The reading of one file's documents: rc turns -1 at the first error. */
struct ctx {
	struct npl_db *db;
	struct npl_arena *a;
	struct npl_diag *d;
	struct npl_layer *L;
	int rc;
	struct npl_bench_spec *bench; /* where the benchmark keys go: NULL, L->bench */
};

/* A kind's name ("hardware") and how a message names a document of it ("a hardware profile"). */
extern const char *const npl_recipe_kind_names[NPL_LAYER_COUNT];
extern const char *const npl_recipe_kind_articles[NPL_LAYER_COUNT];

/* One key of a mapping: the kinds of document it belongs in and its handler (NULL: no value to
 * read). A handler returns 0, or -1 after reporting the error. */
struct field;
typedef int (*field_fn)(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
			void *arg);

struct field {
	const char *key;
	unsigned kinds;
	field_fn fn;
};

/* 1 when the key is lit. The first byte is compared inline: the shipped recipes' keys go
 * through chains of these at every start. */
static inline int npl_keyis(const char *key, const char *lit)
{
	return key[0] == lit[0] && !strcmp(key, lit);
}

/* ---- recipe_read.c: errors, value readers, the walker ------------------------------------ */

/* An error at n (may be NULL): c->rc is -1; returns -1. */
int npl_recipe_fail(struct ctx *c, const struct npl_ynode *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* v is a single value / a mapping, or an error naming key. */
int npl_recipe_want_scalar(struct ctx *c, const struct npl_ynode *v, const char *key);
int npl_recipe_want_map(struct ctx *c, const struct npl_ynode *v, const char *key);
/* A non-null single value. */
int npl_recipe_read_str(struct ctx *c, const struct npl_ynode *v, const char *key,
			struct npl_str *out);
/* A whole number from min to max. */
int npl_recipe_read_int(struct ctx *c, const struct npl_ynode *v, const char *key, int min,
			int max, struct npl_int *out);
/* true or false. */
int npl_recipe_read_bool(struct ctx *c, const struct npl_ynode *v, const char *key,
			 struct npl_int *out);
/* Names: an environment variable, a flag (without dashes), an id; an absolute path. */
int npl_recipe_is_env_name(const char *s);
int npl_recipe_is_flag_name(const char *s);
int npl_recipe_is_id(const char *s);
/* The longest id: it names a folder (render --all) and a file (import's ID.yaml), whose names
 * file systems cap at 255 bytes. */
#define NPL_ID_MAX 200
int npl_recipe_is_abs_path(const char *s);
/* A list of strings, each checked by ok() (may be NULL); what names the kind of item. */
int npl_recipe_read_strlist(struct ctx *c, const struct npl_ynode *v, const char *key,
			    int (*ok)(const char *), const char *what, struct npl_str **out, int *n);
/* Each key of map through its entry of tab (ntab entries), arg passed on; a key not in tab, or
 * not for c->L's kind, is an error naming where. 0, or -1 when any key failed. */
int npl_recipe_walk(struct ctx *c, const struct npl_ynode *map, const struct field *tab, int ntab,
		    const char *where, void *arg);

/* ---- recipe_settings.c: handlers (field_fn) of the settings keys of the top level ------------ */

/* env, unset, source, flags, explicit: the server scope's. */
int npl_recipe_f_scope_top(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
			   void *arg);
int npl_recipe_f_roles(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
		       void *arg);
int npl_recipe_f_router(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
			void *arg);
int npl_recipe_f_benchmarks(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
			    void *arg);
int npl_recipe_f_bench(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
		       void *arg);
int npl_recipe_f_speculative(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
			     void *arg);
int npl_recipe_f_tuning(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
			void *arg);
int npl_recipe_f_ports(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
		       void *arg);
int npl_recipe_f_launch(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
			void *arg);

/* ---- recipe_keys.c: the layer of a document ------------------------------------------------ */

/* The layer of one document (NULL for an engine-flags document, or when it is not a layer);
 * errors go to c. */
struct npl_layer *npl_recipe_build_layer(struct ctx *c, const char *file,
					 const struct npl_ynode *doc, int source);

#endif
