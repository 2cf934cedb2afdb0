/*
 * strmap.h: layer base. A set of strings, each with an int: open addressing, FNV-1a, grown
 * to stay at most half full, its memory from an arena (released with it). Keys are not copied:
 * each must outlive the map. For the duplicate checks and name lookups over inputs of any size
 * (site lists, node labels, repeated --set and --env), in time linear in the input.
 */
#ifndef NPL_STRMAP_H
#define NPL_STRMAP_H

#include <stddef.h>

#include "npulaunch/arena.h"

struct npl_strmap_slot {
	const char *key;   /* NULL: empty */
	size_t len;
	int val;
};

struct npl_strmap {
	struct npl_strmap_slot *slot;
	size_t cap, n;
};

#define NPL_STRMAP_INIT {NULL, 0, 0}

/* The value of the len bytes at key, or -1 when they are not in m. */
int npl_strmap_get(const struct npl_strmap *m, const char *key, size_t len);
/* Add the len bytes at key with val unless they are there: -1 when added, else their value
 * (which stays). */
int npl_strmap_add(struct npl_strmap *m, struct npl_arena *a, const char *key, size_t len, int val);
/* Empty m (its memory stays with the arena). */
void npl_strmap_clear(struct npl_strmap *m);

#endif
