/* import_internal.h: what import.c, import_infer.c and import_fix.c share; see import.h. */
#ifndef NPL_IMPORT_INTERNAL_H
#define NPL_IMPORT_INTERNAL_H

#include "npulaunch/compare.h"
#include "npulaunch/engine.h"
#include "npulaunch/import.h"
#include "npulaunch/pagerun.h"

/* One section being imported. */
struct imp {
	const struct npl_page *p;
	const struct npl_page_section *s;
	const struct npl_import_opts *o;
	const struct npl_db *base;        /* the database opened with o->dirs, for look-ups */
	const struct npl_engine *engine;
	const struct npl_layer *hw;
	struct npl_page_run run;
	struct npl_norm *pn;              /* the page's launches, read (run.L.n of them) */
	cJSON *doc;                       /* the recipe document */
	const char *id, *model_id, *model_name;
	struct npl_arena *a;
	struct npl_diag *d;
	int failed;
	int waived;                       /* the last verify added a waiver */
};

/* ---- import.c ---- */

/* The page's launches on each node (m->run), read as argparse reads them (m->pn). 0 or -1. */
int npl_imp_prepare(struct imp *m);

/* ---- import_infer.c: the skeleton read from the page ---- */

/* The model and hardware the section names: m->model_id, model_name, hw. 0 or -1. */
int npl_imp_model(struct imp *m);
/* The recipe document's metadata, topology, speculative block and benchmark. 0 or -1. */
int npl_imp_skeleton(struct imp *m);
/* obj[key] as an object, made when missing. */
cJSON *npl_imp_obj(cJSON *obj, const char *key);
/* A scalar as written: a raw item when it is a plain decimal number, else a string. */
cJSON *npl_imp_scalar(const char *s);
/* A flag's value as a recipe writes it: true, a scalar, or a list. */
cJSON *npl_imp_flag_value(const struct npl_flagv *f);
/* Record a deviation (what: why) in the document and warn at loc. */
/* 1 when a page's TPOT figure (1 s or more) is no per-token latency but an end-to-end one */
int npl_page_tpot_is_e2e(const char *tpot);
void npl_imp_deviation(struct imp *m, const struct npl_loc *loc, const char *what, const char *why);
/* The launches of role in the page's run, read; n of them. */
int npl_imp_role_launches(const struct imp *m, const char *role, const struct npl_norm **out, int max);

/* ---- import_fix.c: resolve, compare, close the differences ---- */

/* Resolve the document (with model, the model document) under the page's site and compare
 * with the page: the differences in out. 0, or -1 with the loader's or resolver's errors. */
int npl_imp_verify(struct imp *m, const cJSON *model, struct npl_diffs *out);
/* Close the differences until none is left: 0, or -1 with each one left as a located error. */
int npl_imp_converge(struct imp *m, const cJSON *model);
/* The document as a person writes it, deploying the same: a flag every one of several
 * benchmarks gives alike is bench's (converging wrote it into each). */
void npl_imp_tidy(struct imp *m);

#endif
