/*
 * template.h: layer out. A small mustache-like template engine over cJSON views.
 *   {{name}} {{a.b}} {{.}}   a value, escaped by the caller's escape function
 *   {{{name}}} {{&name}}     a value, raw
 *   {{#name}}..{{/name}}     a section: once per array item, once for an
 *                            object or a true value, not at all for false,
 *                            null, missing or an empty array
 *   {{^name}}..{{/name}}     the inverse
 *   {{> name}}               a partial, rendered in the current context
 *   {{! text}}               a comment
 *   @index @first @last      the innermost array iteration
 * A tag alone on its line takes the line with it (sections, comments,
 * partials). A value tag naming nothing is an error, located in the template.
 * Included by the renderer and its tests.
 */
#ifndef NPL_TEMPLATE_H
#define NPL_TEMPLATE_H

#include <cjson/cJSON.h>

#include "npulaunch/buf.h"
#include "npulaunch/diag.h"

/* Templates parsed once and kept, by the address of their text: a run that renders one
 * template many times (render --all) parses it once. The texts must outlive the cache. */
struct npl_tmpl_cache;

struct npl_tmpl_env {
	/* Append the escaped form of a value's text to out; NULL appends it unchanged. */
	void (*escape)(void *ctx, struct npl_buf *out, const char *text);
	/* The text of a partial (and its name for messages via *file), or NULL when unknown. */
	const char *(*partial)(void *ctx, const char *name, const char **file);
	void *ctx;
	/* Where parsed templates are kept between renders; NULL: for this render only. */
	struct npl_tmpl_cache *cache;
};

/* An empty cache; free it (and every parse kept in it) with npl_tmpl_cache_free(). */
struct npl_tmpl_cache *npl_tmpl_cache_new(void);
void npl_tmpl_cache_free(struct npl_tmpl_cache *c);

/* Render the template text (named file in messages) with view into out. */
int npl_tmpl_render(const char *file, const char *text, const cJSON *view,
		    const struct npl_tmpl_env *env, struct npl_buf *out, struct npl_diag *d);

#endif
