/* arena.c: bump allocator with large chunks; see arena.h. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/arena.h"

#define CHUNK_SIZE (64 * 1024)
#define ALIGN 16

struct npl_arena_chunk {
	struct npl_arena_chunk *next;
	size_t used, size;
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
}

void npl_arena_release(struct npl_arena *a)
{
	struct npl_arena_chunk *c = a->head, *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
	a->head = NULL;
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
		size_t size = need > CHUNK_SIZE / 4 ? need : CHUNK_SIZE;

		if (size > SIZE_MAX - sizeof(*c))
			npl_oom();
		c = malloc(sizeof(*c) + size);
		if (!c)
			npl_oom();
		c->used = 0;
		c->size = size;
		if (a->head && size != CHUNK_SIZE) {
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
