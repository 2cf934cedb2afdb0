/*
 * render.h: layer out. Plan -> launch scripts. Each role of the plan is rendered with
 * its template (server.sh.tmpl, router.sh.tmpl, bench.sh.tmpl in templates/,
 * compiled in; a folder given with npl_templates.dir replaces them for
 * development) over a view made of the plan and the site values. Values are
 * shell-quoted by the templates' default escape, site references become
 * the scripts' variables. Included by the render command and its tests.
 */
#ifndef NPL_RENDER_H
#define NPL_RENDER_H

#include <cjson/cJSON.h>

#include "npulaunch/buf.h"
#include "npulaunch/diag.h"
#include "npulaunch/output.h"
#include "npulaunch/template.h"

struct npl_pval_seg;

struct npl_templates {
	const char *dir;          /* NULL: the embedded templates */
	char **names, **texts;    /* cache of templates read from dir */
	int n, cap;
	struct npl_tmpl_cache *parsed;   /* the templates parsed, for the run */
};

/* Append a plan value as one shell word: literals quoted, site references as "${VAR}". */
void npl_render_shell_word(struct npl_buf *out, const char *pval);
/* How a site reference (seg->key >= 0) is written in a shell word: appended to out, or -1 when
 * the word's script has no variable for it. */
typedef int npl_render_var_fn(const void *ctx, struct npl_buf *out, const struct npl_pval_seg *seg);
/* The same with the references written by var (ctx is its own): literals quoted, '' for an
 * empty value; -1 when var refused a reference (the word is then not whole). */
int npl_render_shell_word_as(struct npl_buf *out, const char *pval, npl_render_var_fn *var, const void *ctx);
/* Render every file of the plan's bundle into set, under dir ("" for bare names): the scripts,
 * then manifest.json (the plan with the record of the bundle's files, see output.h). */
int npl_render_bundle(const cJSON *plan, struct npl_templates *t, const char *dir,
		      struct npl_outset *set, struct npl_diag *d);
/* Render one role's script into out. */
int npl_render_role(const cJSON *plan, const cJSON *role, struct npl_templates *t,
		    struct npl_buf *out, struct npl_diag *d);
/* Render the template name (a path below templates/: "k8s/entrypoint.sh.tmpl",
 * "slurm/slurm.sbatch.tmpl") over view into out, values shell-quoted as plan values (site
 * references become the scripts' variables). */
int npl_render_template(const char *name, const cJSON *view, struct npl_templates *t,
			struct npl_buf *out, struct npl_diag *d);
/* The manifest: the plan as formatted JSON with a final newline (malloc'ed). */
char *npl_render_manifest(const cJSON *plan);
/* Free the templates read and parsed. */
void npl_templates_release(struct npl_templates *t);

#endif
