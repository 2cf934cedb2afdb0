/*
 * fsio.h: layer base. Reading inputs (only regular files, bounded, without
 * blocking on a FIFO or taking a terminal) and making directories, with a
 * located diagnostic on failure.
 */
#ifndef NPL_FSIO_H
#define NPL_FSIO_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "npulaunch/arena.h"
#include "npulaunch/diag.h"

/* The most npulaunch reads of a recipe, site file, template, manifest or journal (16 MiB). */
#define NPL_READ_MAX ((size_t)16 << 20)
/* The most it reads of bench_serving's results: a record per run, with per-request details. */
#define NPL_READ_MAX_RESULTS ((size_t)256 << 20)

/* Open a file to read, as every reader does: without blocking (a FIFO), without taking a
 * terminal, and without following a last symbolic link when nofollow. Only a regular file of at
 * most max bytes will do (the opened file is checked: a link to one is fine, to /dev/zero is
 * not). The descriptor (close-on-exec) and the file's stat data; -1 and a diagnostic naming the
 * file otherwise. */
int npl_open_regular(const char *path, int nofollow, size_t max, struct stat *st, struct npl_diag *d);
/* Read a whole regular file of at most max bytes (see npl_open_regular()) into arena memory, or
 * malloc'ed memory when a is NULL, NUL-terminated; NULL and a diagnostic naming the file
 * otherwise. The one function through which npulaunch reads its inputs. */
char *npl_read_file_max(struct npl_arena *a, const char *path, size_t max, size_t *len,
			struct npl_diag *d);
/* npl_read_file_max() with NPL_READ_MAX, into arena memory when a is not NULL. */
char *npl_read_file_in(struct npl_arena *a, const char *path, size_t *len, struct npl_diag *d);
/* npl_read_file_max() with NPL_READ_MAX, into malloc'ed memory. */
char *npl_read_file(const char *path, size_t *len, struct npl_diag *d);
/* Create a directory and its parents (like mkdir -p); -1 and a diagnostic on error. */
int npl_mkdirs(const char *path, mode_t mode, struct npl_diag *d);
/* 1 when path names an existing directory. */
int npl_is_dir(const char *path);

#endif
