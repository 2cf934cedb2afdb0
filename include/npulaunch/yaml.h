/*
 * yaml.h: layer input. The libyaml event stream -> a small document tree in an arena, every
 * node with its file:line:col. Strict on purpose: anchors, aliases, tags,
 * non-scalar keys, duplicate keys and NUL bytes are errors. Included by the
 * loaders (recipe.c, site.c) and their tests.
 */
#ifndef NPL_YAML_H
#define NPL_YAML_H

#include <stddef.h>

#include "npulaunch/arena.h"
#include "npulaunch/diag.h"

enum npl_ykind {
	NPL_YSCALAR,
	NPL_YSEQ,
	NPL_YMAP,
};

struct npl_ynode {
	enum npl_ykind kind;
	struct npl_loc loc;
	const char *str;          /* scalar text */
	int plain;                /* scalar written without quotes */
	struct npl_ynode **kids;  /* sequence items; mapping: key 2i, value 2i+1 */
	int n;                    /* items of a sequence, pairs of a mapping */
};

/* Parse every document of text (named file in messages) into *docs (arena memory). */
int npl_yaml_load(struct npl_arena *a, const char *file, const char *text, size_t len,
		  struct npl_ynode ***docs, int *ndocs, struct npl_diag *d);
/* The value of key in the mapping map, or NULL (also when map is NULL or not a mapping). */
const struct npl_ynode *npl_ymap_get(const struct npl_ynode *map, const char *key);
/* 1 when the node is a plain null scalar: empty, ~, null. */
int npl_ynull(const struct npl_ynode *n);
/* 1 and *v set when the node is the plain scalar true or false. */
int npl_ybool(const struct npl_ynode *n, int *v);
/* The name of a node kind for messages ("a mapping", "a list", "a scalar"). */
const char *npl_ykind_name(const struct npl_ynode *n);

#endif
