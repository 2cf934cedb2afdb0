/*
 * arena.h: layer base. Bump allocator. One arena per run holds the recipes, the plan
 * inputs and their strings; everything in it is freed at once by
 * npl_arena_release(). Allocation failure aborts (there is nothing sensible
 * to do on a command-line tool that is out of memory). Included by every module.
 */
#ifndef NPL_ARENA_H
#define NPL_ARENA_H

#include <stdarg.h>
#include <stddef.h>

struct npl_arena_chunk;

struct npl_arena {
	struct npl_arena_chunk *head;
	unsigned nchunks;   /* chunks grow with the count: 64 KiB up to 4 MiB */
	int mapped;         /* every chunk from the kernel with its pages in place (npl_mem_map):
			       for memory that is written once and kept, such as the files a
			       render holds until it commits them */
};

/* Start an empty arena. */
void npl_arena_init(struct npl_arena *a);
/* Free every allocation of the arena; it may be used again afterwards. */
void npl_arena_release(struct npl_arena *a);
/* Zeroed memory for n bytes, aligned for any type. */
void *npl_arena_alloc(struct npl_arena *a, size_t n);
/* Zeroed array of n elements of size sz (overflow-checked). */
void *npl_arena_calloc(struct npl_arena *a, size_t n, size_t sz);
/* Copy of s (NULL stays NULL). */
char *npl_arena_strdup(struct npl_arena *a, const char *s);
/* Copy of the first n bytes of s, NUL-terminated. */
char *npl_arena_strndup(struct npl_arena *a, const char *s, size_t n);
/* printf into the arena. */
char *npl_arena_printf(struct npl_arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Move from's memory into to: what was allocated from either lives until to is released; from
 * is left empty. */
void npl_arena_take(struct npl_arena *to, struct npl_arena *from);
/* Grow an array kept in the arena: returns a copy with room for want elements. */
void *npl_arena_grow(struct npl_arena *a, void *old, size_t have, size_t want, size_t sz);

/* Zeroed memory for a large buffer (1 MiB or more), straight from the kernel with its pages
 * in place, in transparent huge pages from 2 MiB; *len gets the length to unmap. NULL when
 * the kernel refuses. */
void *npl_mem_map(size_t n, size_t *len);
/* Give back what npl_mem_map() gave. */
void npl_mem_unmap(void *p, size_t len);

/* Abort with a message: out of memory. */
void npl_oom(void) __attribute__((noreturn));

/* malloc(), calloc(), realloc(), strdup() and strndup() that never return NULL (a size of 0 is
 * taken as 1): on failure they call npl_oom(), the one allocation-failure path. */
void *npl_xmalloc(size_t n);
void *npl_xcalloc(size_t n, size_t size);
void *npl_xrealloc(void *p, size_t n);
char *npl_xstrdup(const char *s);
char *npl_xstrndup(const char *s, size_t n);

#endif
