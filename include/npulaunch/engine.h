/*
 * engine.h: layer input. The engine-flag registry, data in recipes/engine/ (the flags
 * that sglang.launch_server, sglang_router.launch_router and
 * sglang.bench_serving accept, with their value kinds and choices, read
 * from upstream SGLang, and the speculative algorithms), how SGLang's argparse
 * parsers read a flag name (aliases, unambiguous prefixes),. The checks of a plan
 * against it are check.h's.
 */
#ifndef NPL_ENGINE_H
#define NPL_ENGINE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "npulaunch/arena.h"
#include "npulaunch/diag.h"
#include "npulaunch/recipe.h"

enum npl_flag_type {
	NPL_FT_BOOL,
	NPL_FT_INT,
	NPL_FT_FLOAT,
	NPL_FT_STRING,
	NPL_FT_LIST,
};

struct npl_flag_spec {
	const char *name;
	enum npl_flag_type type;
	const char **choices;
	int nchoices;
	const char *alias_of;
	int upstream;          /* 0: used by the seed pages but absent upstream (a warning) */
	const char *note;
};

struct npl_engine_tool {
	const char *name;      /* launch_server, launch_router, bench_serving */
	const char *module;    /* sglang.launch_server ... */
	struct npl_flag_spec *flags;   /* sorted by name */
	int nflags;
};

struct npl_engine {
	const char *version, *source, *file;
	struct npl_engine_tool *tools;
	int ntools;
	const char **spec_names;       /* speculative algorithms */
	const char **spec_draft;       /* required, optional, none */
	int nspec;
};

/* The shipped registry (recipes/engine/) as C tables, generated at build time by
 * src/gen/engine_gen.c from the same YAML with npl_engine_parse() (the YAML is not embedded);
 * NULL in that generator. */
extern const struct npl_engine *const npl_engine_compiled;

/* Parse a registry document (text of len bytes, named name in messages). Memory in arena. */
int npl_engine_parse(struct npl_engine *e, const char *name, const char *text, size_t len,
		     struct npl_arena *a, struct npl_diag *d);
/* Load the registry: the database's own engine-flags document if a recipe folder holds one,
 * else the shipped one (npl_engine_compiled). Memory in arena. */
int npl_engine_load(struct npl_engine *e, const struct npl_db *db, struct npl_arena *a,
		    struct npl_diag *d);
/* The tool whose module is module ("sglang.launch_server"), or NULL. */
const struct npl_engine_tool *npl_engine_tool(const struct npl_engine *e, const char *module);
/* The spec of a flag (name without --) of a tool, or NULL. */
const struct npl_flag_spec *npl_engine_flag(const struct npl_engine_tool *t, const char *name);
/* The tool of a program (NPL_PROG_SERVER, _ROUTER, _BENCH: launch_server, launch_router,
 * bench_serving), or NULL when the registry does not describe it. */
const struct npl_engine_tool *npl_engine_prog_tool(const struct npl_engine *e, int prog);

/* How a flag name (without --) names an option, the way SGLang's argparse parsers read it
 * (allow_abbrev): an exact option string wins (a full name or an alias); otherwise a prefix of
 * the option strings of exactly one option (an alias and its target are one option; argparse's
 * own --help is one too) names it, and a prefix of several is ambiguous. Entries absent
 * upstream match only exactly: the upstream parser does not know them. */
struct npl_flag_match {
	const char *canonical;    /* the full name to launch with: alias_of followed, except that a
				   * BooleanOptionalAction's negative form ("no-" + the option)
				   * stays itself; NULL when not found */
	const char *option;       /* the option it sets (the negated one for a negative form) */
	const struct npl_flag_spec *spec;  /* the spec of option: kind and choices */
	int negative;             /* canonical is option's negative form: it stores false */
	const char *why;          /* "alias of tp-size", "unambiguous prefix of tp-size", "unambiguous
				   * prefix of tensor-parallel-size, an alias of tp-size"; NULL when
				   * name is canonical already */
	const char **candidates;  /* ambiguous: the option strings it could be, one per option, in
				   * name order; unknown: the nearest name, if any is near */
	int ncandidates;
};

/* Match name against tool t. Returns 0 found, 1 ambiguous, -1 unknown; fills m in every case.
 * Strings and arrays are in arena a (or the registry's). */
int npl_engine_match(const struct npl_engine_tool *t, const char *name, struct npl_flag_match *m,
		     struct npl_arena *a);
/* npl_engine_match() against the tool of program prog. A program the registry does not
 * describe takes every name as written: 0, canonical = option = name, spec NULL. */
int npl_engine_canonical(const struct npl_engine *e, int prog, const char *name,
			 struct npl_flag_match *m, struct npl_arena *a);
/* What is wrong with a name that did not match (npl_engine_match() returned 1 or -1), for a
 * message: "--mem-fraction-statc is not an option of sglang.launch_server (SGLang V); did you
 * mean --mem-fraction-static?" or
 * "--disable is ambiguous in sglang.launch_server (SGLang V): it could be --disable-a,
 * --disable-b, ... (N options)". In arena a. */
const char *npl_engine_mismatch(const struct npl_engine *e, const struct npl_engine_tool *t,
				const char *name, int rc, const struct npl_flag_match *m,
				struct npl_arena *a);


#endif
