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
#define HUGE_PAGE (2u << 20)     /* and from this size, in transparent huge pages */
#define ALIGN 16

struct npl_arena_chunk {
	struct npl_arena_chunk *next;
	size_t used, size;
	size_t mapped;                /* the length of its mapping; 0: malloc'ed */
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
	a->mapped = 0;
}

void *npl_mem_map(size_t n, size_t *len)
{
	unsigned char *p, *a;
	size_t head;

	if (n < HUGE_PAGE) {
		p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		*len = n;
		return p == MAP_FAILED ? NULL : p;
	}
	/* whole huge pages, aligned: the kernel can back them with 2 MiB pages */
	if (n > SIZE_MAX - 2 * HUGE_PAGE)
		return NULL;
	n = (n + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
	p = mmap(NULL, n + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	a = (unsigned char *)(((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
	head = (size_t)(a - p);
	if (head)
		munmap(p, head);
	munmap(a + n, HUGE_PAGE - head);
	/* a hint: without transparent huge pages this is an ordinary mapping */
	madvise(a, n, MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
	/* its pages in place, as MAP_POPULATE gives the smaller ones, huge where they can be
	   (Linux 5.14; before, they come one fault each) */
	madvise(a, n, MADV_POPULATE_WRITE);
#endif
	*len = n;
	return a;
}

void npl_mem_unmap(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

/* A chunk of size bytes. A large one is mapped (npl_mem_map): on a virtual machine a page
 * fault costs microseconds, and a database of thousands of recipes touches thousands of
 * pages; faulting them in one call, or as 2 MiB pages, is many times cheaper
 * (docs/performance.md). */
static struct npl_arena_chunk *new_chunk(size_t size, int map)
{
	struct npl_arena_chunk *c;

	if (size > SIZE_MAX - sizeof(*c) - 2 * HUGE_PAGE)
		npl_oom();
	if (map || size >= MAP_FROM) {
		size_t len;

		c = npl_mem_map(sizeof(*c) + size, &len);
		if (!c)
			npl_oom();
		c->mapped = len;
		size = len - sizeof(*c);   /* all of it: the mapping is whole pages */
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
			npl_mem_unmap(c, c->mapped);
		else
			free(c);
	}
	a->head = NULL;
	a->nchunks = 0;
}

void npl_arena_take(struct npl_arena *to, struct npl_arena *from)
{
	struct npl_arena_chunk *last = from->head;

	if (!last)
		return;
	/* behind to's current chunk, whose rest stays in use */
	while (last->next)
		last = last->next;
	if (to->head) {
		last->next = to->head->next;
		to->head->next = from->head;
	} else {
		to->head = from->head;
	}
	from->head = NULL;
	from->nchunks = 0;
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
		int own;

		/* memory kept whole (render --all's files, megabytes): past its first two chunks,
		 * which hold one recipe's files, whole huge pages. On a virtual machine the first
		 * touch of each 4 KiB page costs microseconds; a 2 MiB page is one (docs/performance.md) */
		if (a->mapped && a->nchunks >= 2 && chunk < HUGE_PAGE)
			chunk = HUGE_PAGE - sizeof(*c);
		own = need > chunk / 4;

		c = new_chunk(own ? need : chunk, a->mapped);
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
	/* a mapped chunk came zeroed from the kernel and no byte of it is handed out twice:
	 * at 10,000 recipes this memset was 13% of `list` */
	if (!c->mapped)
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

void *npl_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		npl_oom();
	return p;
}

void *npl_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		npl_oom();
	return p;
}

void *npl_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		npl_oom();
	return p;
}

char *npl_xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		npl_oom();
	return p;
}

char *npl_xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);

	if (!p)
		npl_oom();
	return p;
}
