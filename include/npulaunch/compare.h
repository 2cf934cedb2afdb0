/*
 * compare.h: layer sync. A page's section against a plan, launch by launch: both sides come
 * as struct npl_node_launches (pagerun.h from the page, launches.h from the plan); each launch
 * is read as argparse reads it (flags by their canonical names, a repeated flag's values
 * joined) and every difference of a flag, a variable, an unset, a source, the governor or a
 * sysctl, and every launch only one side has, is listed. What `import` closes and `drift`
 * reports. The benchmark is compared on its flags and environment, the router on its
 * flags, environment and unsets, the servers on everything.
 * Included by import, drift and their tests.
 */
#ifndef NPL_COMPARE_H
#define NPL_COMPARE_H

#include "npulaunch/arena.h"
#include "npulaunch/diag.h"
#include "npulaunch/engine.h"
#include "npulaunch/launches.h"

/* One flag as argparse reads it: the canonical name, the values of every occurrence. */
struct npl_flagv {
	const char *name;        /* canonical, without -- */
	const char *written;     /* the first occurrence as written */
	const char **v;
	int n;
	int times;               /* occurrences */
};

/* A launch as argparse and the shell read it. */
struct npl_norm {
	const struct npl_node_launch *src;
	int prog;                /* NPL_PROG_SERVER, _ROUTER, _BENCH */
	struct npl_flagv *flags; /* sorted by name */
	int nflags;
};

enum npl_diff_kind {
	NPL_DIFF_LAUNCH,         /* a launch only one side has */
	NPL_DIFF_FLAG,
	NPL_DIFF_ENV,
	NPL_DIFF_UNSET,
	NPL_DIFF_SOURCE,
	NPL_DIFF_GOVERNOR,
	NPL_DIFF_SYSCTL,
	NPL_DIFF_META,           /* the recipe's metadata against the section's (drift) */
};

/* One difference; page and plan are the two sides' values as text (NULL: that side has none;
 * a switch is ""), pflag and rflag the flags themselves where kind is NPL_DIFF_FLAG. */
struct npl_diff {
	enum npl_diff_kind kind;
	const char *role;
	int node, instance;
	const char *name;
	const char *page, *plan;
	const struct npl_flagv *pflag, *rflag;
	struct npl_loc loc;      /* of the page's launch */
};

struct npl_diffs {
	struct npl_diff *v;
	int n, cap;
};

/* Append a difference (the caller fills it). */
struct npl_diff *npl_diff_add(struct npl_diffs *ds, struct npl_arena *a);

/* Read one launch as argparse would (prog from its module). 0, or -1 and a located error (a
 * flag the engine registry does not know, an ambiguous abbreviation, a value with no flag). */
int npl_norm_launch(const struct npl_engine *e, const struct npl_node_launch *L, struct npl_norm *out,
		    struct npl_arena *a, struct npl_diag *d);
/* The flag named name (canonical) of n, or NULL. */
const struct npl_flagv *npl_norm_flag(const struct npl_norm *n, const char *name);

/* Compare page against plan, launch by launch (paired by role, node and instance); append
 * every difference to out. 0, or -1 when a launch cannot be read. */
int npl_compare(const struct npl_engine *e, const struct npl_node_launches *page,
		const struct npl_node_launches *plan, struct npl_diffs *out, struct npl_arena *a,
		struct npl_diag *d);

/* A word for kind ("flag", "env", ...). */
const char *npl_diff_kind_name(enum npl_diff_kind k);
/* The values of a flag as one text ("" for a switch; values joined by a space). */
const char *npl_flagv_text(const struct npl_flagv *f, struct npl_arena *a);

#endif
