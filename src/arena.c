/* arena.c: bump allocator with large chunks; see arena.h. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_POPULATE */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "npulaunch/arena.h"

#define CHUNK_SIZE (64 * 1024)
#define MAP_FROM (1024 * 1024)   /* chunks this large are mapped with their pages in place */
#define ALIGN 16

struct npl_arena_chunk {
	struct npl_arena_chunk *next;
	size_t used, size;
	int mapped;
	_Alignas(ALIGN) unsigned char mem[];
};

void npl_oom(void)
{
	fputs("npulaunch: out of memory\n", stderr);
	abort();
}

void npl_arena_init(struct npl_arena *a)
{
	a->head = NULL;
	a->nchunks = 0;
}

/* A chunk of size bytes. A large one is mapped with MAP_POPULATE: on a virtual machine a
 * page fault costs microseconds, and a database of thousands of recipes touches thousands
 * of pages; faulting them in one call is several times cheaper (docs/performance.md). */
static struct npl_arena_chunk *new_chunk(size_t size)
{
	struct npl_arena_chunk *c;

	if (size > SIZE_MAX - sizeof(*c))
		npl_oom();
	if (size >= MAP_FROM) {
		void *p = mmap(NULL, sizeof(*c) + size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

		if (p == MAP_FAILED)
			npl_oom();
		c = p;
		c->mapped = 1;
	} else {
		c = malloc(sizeof(*c) + size);
		if (!c)
			npl_oom();
		c->mapped = 0;
	}
	c->used = 0;
	c->size = size;
	return c;
}

void npl_arena_release(struct npl_arena *a)
{
	struct npl_arena_chunk *c = a->head, *next;

	for (; c; c = next) {
		next = c->next;
		if (c->mapped)
			munmap(c, sizeof(*c) + c->size);
		else
			free(c);
	}
	a->head = NULL;
	a->nchunks = 0;
}

void *npl_arena_alloc(struct npl_arena *a, size_t n)
{
	struct npl_arena_chunk *c = a->head;
	size_t need = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
	void *p;

	if (need < n)
		npl_oom();
	if (!c || c->size - c->used < need) {
		/* Large requests get a chunk of their own behind the current one,
		 * so that the rest of the current chunk stays usable. */
		size_t chunk = (size_t)CHUNK_SIZE << (a->nchunks / 2 < 6 ? a->nchunks / 2 : 6);
		int own = need > chunk / 4;

		c = new_chunk(own ? need : chunk);
		if (!own)
			a->nchunks++;
		if (a->head && own) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	p = c->mem + c->used;
	c->used += need;
	memset(p, 0, n);
	return p;
}

void *npl_arena_calloc(struct npl_arena *a, size_t n, size_t sz)
{
	if (sz && n > SIZE_MAX / sz)
		npl_oom();
	return npl_arena_alloc(a, n * sz);
}

char *npl_arena_strndup(struct npl_arena *a, const char *s, size_t n)
{
	char *p = npl_arena_alloc(a, n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *npl_arena_strdup(struct npl_arena *a, const char *s)
{
	return s ? npl_arena_strndup(a, s, strlen(s)) : NULL;
}

char *npl_arena_printf(struct npl_arena *a, const char *fmt, ...)
{
	va_list ap;
	int n;
	char *p;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		npl_oom();
	p = npl_arena_alloc(a, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

void *npl_arena_grow(struct npl_arena *a, void *old, size_t have, size_t want, size_t sz)
{
	void *p = npl_arena_calloc(a, want, sz);

	if (old && have)
		memcpy(p, old, have * sz);
	return p;
}
