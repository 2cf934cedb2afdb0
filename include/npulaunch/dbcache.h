/*
 * dbcache.h: a per-user cache of what loading a recipe file found, so that a
 * database of thousands of recipes opens without parsing them all.
 *
 * libyaml spends about 170 instructions per byte; a 10,000-recipe database is
 * 13 MB of YAML, about a second of parsing before `list` prints a line. Most
 * runs read files that have not changed since the last run. For each recipe
 * file that loaded with no message at all, the cache keeps the fields that
 * linking, `list` and selection read (id, model, hardware, cards, mode,
 * dataset, TPOT, TTFT, topology, benchmark sizes, with their locations),
 * keyed by a 128-bit hash of the file's bytes. A later run whose file has the
 * same bytes gets a lazy layer from the cache; a file whose stat() data are
 * those the cache recorded with its bytes is not even read (git's index does
 * the same); its body (flags, env, ...) is
 * parsed when a command needs it (npl_db_need()). A file that produced any
 * message is never cached, so a broken recipe is reported on every run.
 *
 * Entries are valid only for the binary that wrote them (its GNU build id is
 * in the header), so a rebuilt npulaunch never trusts an older parser's
 * verdict. The cache is an optimisation: a missing, foreign, corrupt or
 * unwritable cache is ignored, never an error.
 *
 * Where: $NPULAUNCH_CACHE (a folder, or "off"), else $XDG_CACHE_HOME/npulaunch,
 * else $HOME/.cache/npulaunch; one file per recipe folder. Included by recipe.c
 * and its tests.
 */
#ifndef NPL_DBCACHE_H
#define NPL_DBCACHE_H

#include <stddef.h>

#include "npulaunch/arena.h"

struct npl_layer;
struct npl_dbcache;
struct stat;

/* The cache of the recipe folder named key (a path, or "embedded"); NULL when caching is
 * off or impossible (no cache folder, no build id). */
struct npl_dbcache *npl_dbcache_open(const char *key);
/* A new layer (arena memory) from the entry for these bytes, its locations in file; NULL on
 * a miss. name (relative to the folder) and st, when not NULL, are the file's: a hit
 * remembers them for npl_dbcache_stat_get(). */
struct npl_layer *npl_dbcache_get(struct npl_dbcache *c, const char *text, size_t len, const char *name,
				  const struct stat *st, const char *file, struct npl_arena *a);
/* Without reading the file: a new layer from the entry whose bytes the file name had when
 * stat() said what st says now (device, inode, size, mtime and ctime to the nanosecond). A
 * file that had changed within 2 s of the run that saw it is never found here (a change in
 * the same clock tick would not show); it is read and hashed again. NULL on a miss. */
struct npl_layer *npl_dbcache_stat_get(struct npl_dbcache *c, const char *name, const struct stat *st,
				       const char *file, struct npl_arena *a);
/* Remember what loading these bytes gave: one recipe layer, without messages (name and st as
 * for npl_dbcache_get()). */
void npl_dbcache_put(struct npl_dbcache *c, const char *text, size_t len, const char *name,
		     const struct stat *st, const struct npl_layer *L);
/* Write the cache back if it changed (atomically; failures are ignored) and free it. */
void npl_dbcache_close(struct npl_dbcache *c);

/* The cache folder ($NPULAUNCH_CACHE, else $XDG_CACHE_HOME/npulaunch, else ~/.cache/npulaunch),
 * malloc'ed, or NULL when caching is off. */
char *npl_cache_dir(void);
/* This binary's GNU build id into out; its length, 0 when it has none. */
size_t npl_build_id(unsigned char out[64]);
/* The cache file of a key, malloc'ed, or NULL when caching is off (for tests and docs). */
char *npl_dbcache_path(const char *key);

#endif
