/* dbcache.c: the per-user cache of loaded recipe metadata; see dbcache.h. */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "npulaunch/buf.h"
#include "npulaunch/dbcache.h"
#include "npulaunch/rcache.h"
#include "npulaunch/recipe.h"
#include "npulaunch/util.h"

#define MAGIC "NPLCACHE"
#define FORMAT 2u                /* bump when the payload's fields change */
#define STAT_RECORD 64u          /* the fixed part of a stat record */
#define RACY_NS 2000000000LL     /* a file changed this recently may change again unseen */
#define MAX_FILE (256u << 20)    /* a cache larger than this is not ours */
#define MAP_FROM (1u << 20)      /* a cache file this large is read into mapped memory */

struct entry {
	uint64_t h1, h2;
	uint32_t len;                /* of the recipe file */
	uint32_t size;               /* of the payload */
	const unsigned char *payload;
	size_t off;                  /* an entry added in this run: its payload's offset in add */
	int used;
};

/* What stat() said of a folder's file when its bytes were those of entry (h1, h2, len). */
struct srec {
	const char *name;            /* relative to the folder; not NUL-terminated when read */
	uint32_t namelen;
	uint64_t dev, ino, size;
	int64_t mtime, ctime;        /* in ns */
	uint64_t h1, h2;
	uint32_t len;
	int used;
};

struct npl_dbcache {
	char *path;
	unsigned char id[64];        /* the build id of this binary */
	size_t idlen;
	unsigned char *old;          /* the cache file as read */
	size_t oldlen;               /* its mapping's length; 0: malloc'ed */
	struct entry *v;             /* its entries, sorted by (h1, h2, len) */
	size_t n;
	struct npl_buf add;          /* the payloads of the entries added in this run */
	struct entry *added;
	size_t nadd, capadd;
	struct srec *s;              /* the stat records as read, sorted by name */
	size_t ns;
	size_t next;                 /* the record after the last one found: folders are walked
					in name order, so it is usually the next one asked for */
	struct srec *snew;           /* stat records made in this run (names malloc'ed) */
	size_t nsnew, capsnew;
	int64_t now;                 /* when the cache was opened, ns since the epoch */
};

/* ---- hashing ----------------------------------------------------------- */

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

/* Two independent 64-bit lanes over 8-byte words: about a byte per cycle, and
 * 128 bits so that two different files never meet by accident. Not a defence
 * against a forger: the cache lives in the user's own folder. */
static void hash128(const char *p, size_t n, uint64_t *h1, uint64_t *h2)
{
	uint64_t a = 0x9e3779b97f4a7c15ULL ^ n, b = 0xc2b2ae3d27d4eb4fULL + n, w;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		a = (a ^ w) * 0x100000001b3ULL;
		a ^= a >> 29;
		b = (b + w) * 0x9fb21c651e98df25ULL;
		b ^= b >> 31;
	}
	w = 0;
	memcpy(&w, p + i, n - i);
	a = (a ^ w) * 0x100000001b3ULL;
	b = (b + w) * 0x9fb21c651e98df25ULL;
	*h1 = mix(a ^ mix(b));
	*h2 = mix(b + mix(a));
}

/* ---- the build id of this binary ---------------------------------------- */

struct idsearch {
	unsigned char *out;
	size_t len;
};

static int find_build_id(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct idsearch *s = arg;
	int i;

	(void)size;
	/* the first object is the program itself */
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const unsigned char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			ElfW(Nhdr) nh;
			const unsigned char *name, *desc;

			memcpy(&nh, p, sizeof(nh));
			name = p + sizeof(nh);
			desc = name + ((nh.n_namesz + 3) & ~3u);
			if (desc + nh.n_descsz > end)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp(name, "GNU", 4) &&
			    nh.n_descsz > 0 && nh.n_descsz <= 64) {
				memcpy(s->out, desc, nh.n_descsz);
				s->len = nh.n_descsz;
				return 1;
			}
			p = desc + ((nh.n_descsz + 3) & ~3u);
		}
	}
	return 1;   /* only the program */
}

static size_t build_id(unsigned char out[64])
{
	struct idsearch s = {out, 0};

	dl_iterate_phdr(find_build_id, &s);
	return s.len;
}

/* ---- where ------------------------------------------------------------- */

size_t npl_build_id(unsigned char out[64])
{
	return build_id(out);
}

char *npl_cache_dir(void)
{
	const char *env = getenv("NPULAUNCH_CACHE"), *xdg = getenv("XDG_CACHE_HOME"),
		   *home = getenv("HOME");
	struct npl_buf b = NPL_BUF_INIT;

	if (env && (!strcmp(env, "off") || !*env))
		return NULL;
	if (env)
		npl_buf_puts(&b, env);
	else if (xdg && xdg[0] == '/')
		npl_buf_printf(&b, "%s/npulaunch", xdg);
	else if (home && home[0] == '/')
		npl_buf_printf(&b, "%s/.cache/npulaunch", home);
	else
		return NULL;
	return npl_buf_detach(&b);
}

char *npl_dbcache_path(const char *key)
{
	char *dir = npl_cache_dir();
	struct npl_buf b = NPL_BUF_INIT;
	uint64_t h1, h2;

	if (!dir)
		return NULL;
	npl_buf_puts(&b, dir);
	free(dir);
	hash128(key, strlen(key), &h1, &h2);
	npl_buf_printf(&b, "/recipes-%016llx.cache", (unsigned long long)h1);
	return npl_buf_detach(&b);
}

/* ---- payload: one visitor both writes and reads the fields --------------- */

struct io {
	int reading, bad;
	struct npl_buf *out;               /* writing */
	const unsigned char *p, *end;      /* reading */
	struct npl_arena *a;
	const char *file;
};

/* inlined: the decoder of 10,000 entries calls these half a million times */
static inline __attribute__((always_inline)) void io_raw(struct io *io, void *v, size_t n)
{
	if (!io->reading) {
		npl_buf_add(io->out, v, n);
		return;
	}
	if (io->bad || (size_t)(io->end - io->p) < n) {
		io->bad = 1;
		memset(v, 0, n);
		return;
	}
	memcpy(v, io->p, n);
	io->p += n;
}

static inline __attribute__((always_inline)) void io_int(struct io *io, int *v)
{
	int32_t x = (int32_t)*v;

	io_raw(io, &x, sizeof(x));
	*v = x;
}

static inline __attribute__((always_inline)) void io_ll(struct io *io, long long *v)
{
	int64_t x = (int64_t)*v;

	io_raw(io, &x, sizeof(x));
	*v = x;
}

static inline __attribute__((always_inline)) void io_loc(struct io *io, struct npl_loc *l)
{
	io_int(io, &l->line);
	io_int(io, &l->col);
	if (io->reading)
		l->file = l->line ? io->file : NULL;
}

/* A string that may be NULL: length + 1 (0 for NULL), then the bytes. */
static inline __attribute__((always_inline)) void io_str(struct io *io, const char **s)
{
	uint32_t n = *s ? (uint32_t)strlen(*s) + 1 : 0;

	io_raw(io, &n, sizeof(n));
	if (!io->reading) {
		if (n)
			npl_buf_add(io->out, *s, n - 1);
		return;
	}
	*s = NULL;
	if (!n || io->bad)
		return;
	if ((size_t)(io->end - io->p) < n - 1 || memchr(io->p, '\0', n - 1)) {
		io->bad = 1;
		return;
	}
	*s = npl_arena_strndup(io->a, (const char *)io->p, n - 1);
	io->p += n - 1;
}

static inline __attribute__((always_inline)) void io_nstr(struct io *io, struct npl_str *s)
{
	io_str(io, &s->s);
	io_loc(io, &s->loc);
}

static inline __attribute__((always_inline)) void io_nint(struct io *io, struct npl_int *v)
{
	io_int(io, &v->set);
	io_int(io, &v->v);
	io_loc(io, &v->loc);
}

/* Every field of a recipe that linking, `list` and selection read before npl_db_need(). */
static void visit(struct io *io, struct npl_layer *L)
{
	int mode = (int)L->mode, i;

	io_loc(io, &L->loc);
	io_str(io, &L->id);
	io_str(io, &L->name);
	io_nstr(io, &L->model_ref);
	io_nstr(io, &L->hardware_ref);
	io_int(io, &L->cards);
	io_loc(io, &L->cards_loc);
	io_int(io, &mode);
	io_loc(io, &L->mode_loc);
	io_str(io, &L->quantization);
	io_str(io, &L->dataset);
	io_str(io, &L->tier);
	io_str(io, &L->tpot_text);
	io_str(io, &L->ttft_text);
	io_ll(io, &L->tpot_us);
	io_ll(io, &L->ttft_us);
	io_loc(io, &L->topo_loc);
	for (i = 0; i < NPL_TOPO_COUNT; i++) {
		io_nint(io, &L->topo[i].instances);
		io_nint(io, &L->topo[i].cards);
		io_nint(io, &L->topo[i].dies);
		io_nint(io, &L->topo[i].first_card);
		io_nint(io, &L->topo[i].per_node);
	}
	io_nstr(io, &L->bench.dataset);
	io_nstr(io, &L->bench.resolution);
	io_nint(io, &L->bench.input);
	io_nint(io, &L->bench.output);
	io_nint(io, &L->bench.prefix);
	io_nint(io, &L->bench.groups);
	io_nint(io, &L->bench.images);
	io_nint(io, &L->bench.concurrency);
	io_nint(io, &L->bench.prompts);
	io_nint(io, &L->bench.system_prompt_len);
	io_nint(io, &L->bench.question_len);
	if (io->reading) {
		if (mode < NPL_MODE_NONE || mode > NPL_MODE_PD_DISAGG || !L->id)
			io->bad = 1;
		L->mode = (enum npl_mode)mode;
	}
}

/* ---- the file ------------------------------------------------------------ */

static int entcmp(const void *x, const void *y)
{
	const struct entry *a = x, *b = y;

	if (a->h1 != b->h1)
		return a->h1 < b->h1 ? -1 : 1;
	if (a->h2 != b->h2)
		return a->h2 < b->h2 ? -1 : 1;
	return (a->len > b->len) - (a->len < b->len);
}

/* Memory for the cache file's bytes: a large file in mapped memory (see npl_mem_map()). */
static unsigned char *get_mem(size_t n, size_t *maplen)
{
	*maplen = 0;
	if (n < MAP_FROM)
		return malloc(n);
	return npl_mem_map(n, maplen);
}

static void put_mem(unsigned char *p, size_t maplen)
{
	if (maplen)
		npl_mem_unmap(p, maplen);
	else
		free(p);
}

/* The cache file open at fd (a regular file of at most MAX_FILE bytes: npl_open_regular()). */
static unsigned char *read_all(int fd, const struct stat *stp, size_t *len, size_t *maplen)
{
	struct stat st = *stp;
	unsigned char *p;
	size_t got = 0;

	/* ours, not writable by others, and not too small to be one */
	if (st.st_uid != geteuid() || (st.st_mode & 022) || st.st_size < 16)
		return NULL;
	p = get_mem((size_t)st.st_size, maplen);
	if (!p)
		return NULL;
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, p + got, (size_t)st.st_size - got);

		if (r <= 0) {
			put_mem(p, *maplen);
			return NULL;
		}
		got += (size_t)r;
	}
	*len = got;
	return p;
}

static int namecmp(const char *a, uint32_t alen, const char *b, uint32_t blen)
{
	int r = memcmp(a, b, alen < blen ? alen : blen);

	return r ? r : (alen > blen) - (alen < blen);
}

/* The stat records after the entries, in name order; -1 when anything is out of place. */
static int parse_stat(struct npl_dbcache *c, const unsigned char *p, const unsigned char *end)
{
	uint32_t count, i;

	if ((size_t)(end - p) < 4)
		return -1;
	memcpy(&count, p, 4);
	p += 4;
	if (count > (size_t)(end - p) / STAT_RECORD)
		return -1;
	c->s = calloc(count ? count : 1, sizeof(*c->s));
	if (!c->s)
		return -1;
	for (i = 0; i < count; i++) {
		struct srec *r = &c->s[i];

		if ((size_t)(end - p) < STAT_RECORD)
			return -1;
		memcpy(&r->dev, p, 8);
		memcpy(&r->ino, p + 8, 8);
		memcpy(&r->size, p + 16, 8);
		memcpy(&r->mtime, p + 24, 8);
		memcpy(&r->ctime, p + 32, 8);
		memcpy(&r->h1, p + 40, 8);
		memcpy(&r->h2, p + 48, 8);
		memcpy(&r->len, p + 56, 4);
		memcpy(&r->namelen, p + 60, 4);
		p += STAT_RECORD;
		if ((size_t)(end - p) < r->namelen || !r->namelen)
			return -1;
		r->name = (const char *)p;
		p += r->namelen;
		/* written in order, without repeats: anything else is damage */
		if (i && namecmp(c->s[i - 1].name, c->s[i - 1].namelen, r->name, r->namelen) >= 0)
			return -1;
	}
	if (p != end)
		return -1;
	c->ns = count;
	return 0;
}

/* Take in the entries of a cache file; anything out of place drops it whole. */
static void parse(struct npl_dbcache *c, unsigned char *data, size_t len)
{
	const unsigned char *p = data, *end = data + len;
	uint32_t format, idlen, count, i;

	if (len < 20 || memcmp(p, MAGIC, 8))
		return;
	memcpy(&format, p + 8, 4);
	memcpy(&idlen, p + 12, 4);
	p += 16;
	if (format != FORMAT || idlen != c->idlen || (size_t)(end - p) < idlen + 4u ||
	    memcmp(p, c->id, idlen))
		return;
	p += idlen;
	memcpy(&count, p, 4);
	p += 4;
	if (count > len / 24)
		return;
	c->v = calloc(count ? count : 1, sizeof(*c->v));
	if (!c->v)
		return;
	for (i = 0; i < count; i++) {
		struct entry *e = &c->v[i];

		if ((size_t)(end - p) < 24) {
			c->n = 0;
			return;
		}
		memcpy(&e->h1, p, 8);
		memcpy(&e->h2, p + 8, 8);
		memcpy(&e->len, p + 16, 4);
		memcpy(&e->size, p + 20, 4);
		p += 24;
		if ((size_t)(end - p) < e->size) {
			c->n = 0;
			return;
		}
		e->payload = p;
		p += e->size;
		c->n = i + 1;
	}
	if (parse_stat(c, p, end)) {
		c->n = 0;
		return;
	}
	/* save() writes them in order; sorting is for a file written otherwise */
	for (i = 1; i < c->n; i++)
		if (entcmp(&c->v[i - 1], &c->v[i]) > 0) {
			qsort(c->v, c->n, sizeof(*c->v), entcmp);
			break;
		}
	c->old = data;
}

struct npl_dbcache *npl_dbcache_open(const char *key)
{
	struct npl_dbcache *c;
	unsigned char *data;
	struct stat st;
	size_t len;
	int fd;

	c = calloc(1, sizeof(*c));
	if (!c)
		npl_oom();
	c->idlen = build_id(c->id);
	{
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		c->now = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	}
	c->path = npl_dbcache_path(key);
	if (!c->idlen || !c->path) {
		free(c->path);
		free(c);
		return NULL;
	}
	{
		/* the one way npulaunch opens what it reads; any trouble means no cache, silently */
		struct npl_diag quiet = NPL_DIAG_INIT;

		npl_rc_pause(1);   /* the cache is not an input: its results are the files' */
		fd = npl_open_regular(c->path, 1, MAX_FILE, &st, &quiet);
		npl_rc_pause(0);
		npl_diag_release(&quiet);
	}
	if (fd >= 0) {
		data = read_all(fd, &st, &len, &c->oldlen);
		close(fd);
		if (data) {
			parse(c, data, len);
			if (!c->old) {
				put_mem(data, c->oldlen);
				free(c->s);
				c->s = NULL;
				c->ns = 0;
			}
		}
	}
	return c;
}

/* The layer an entry describes, or NULL when the entry is damaged. */
static struct npl_layer *decode(struct entry *e, const char *file, struct npl_arena *a)
{
	struct io io = {1, 0, NULL, NULL, NULL, a, file};
	struct npl_layer *L = npl_arena_calloc(a, 1, sizeof(*L));

	L->kind = NPL_LAYER_RECIPE;
	L->file = file;
	io.p = e->payload;
	io.end = e->payload + e->size;
	visit(&io, L);
	if (io.bad || io.p != io.end)
		return NULL;   /* a damaged entry: parse the file instead */
	e->used = 1;
	return L;
}

static int64_t ns_of(struct timespec ts)
{
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Remember that the file name with these stat data holds the bytes (h1, h2, len), unless it
 * changed so recently that a change in the same clock tick would go unseen (git's "racy"
 * files): such a file is hashed again next time. */
static void note(struct npl_dbcache *c, const char *name, const struct stat *st, uint64_t h1, uint64_t h2,
		 uint32_t len)
{
	struct srec *r;

	if (!name || !st || !*name || strlen(name) > UINT32_MAX || ns_of(st->st_mtim) >= c->now - RACY_NS ||
	    ns_of(st->st_ctim) >= c->now - RACY_NS)
		return;
	if (c->nsnew == c->capsnew) {
		size_t cap = c->capsnew ? c->capsnew * 2 : 64;
		void *p = realloc(c->snew, cap * sizeof(*c->snew));

		if (!p)
			npl_oom();
		c->snew = p;
		c->capsnew = cap;
	}
	r = &c->snew[c->nsnew++];
	memset(r, 0, sizeof(*r));
	r->name = strdup(name);
	if (!r->name)
		npl_oom();
	r->namelen = (uint32_t)strlen(name);
	r->dev = (uint64_t)st->st_dev;
	r->ino = (uint64_t)st->st_ino;
	r->size = (uint64_t)st->st_size;
	r->mtime = ns_of(st->st_mtim);
	r->ctime = ns_of(st->st_ctim);
	r->h1 = h1;
	r->h2 = h2;
	r->len = len;
}

struct npl_layer *npl_dbcache_get(struct npl_dbcache *c, const char *text, size_t len, const char *name,
				  const struct stat *st, const char *file, struct npl_arena *a)
{
	struct entry key = {0}, *e;
	struct npl_layer *L;

	if (!c || !c->n || len > UINT32_MAX)
		return NULL;
	hash128(text, len, &key.h1, &key.h2);
	key.len = (uint32_t)len;
	e = bsearch(&key, c->v, c->n, sizeof(*c->v), entcmp);
	if (!e || !(L = decode(e, file, a)))
		return NULL;
	note(c, name, st, key.h1, key.h2, key.len);
	return L;
}

struct npl_layer *npl_dbcache_stat_get(struct npl_dbcache *c, const char *name, const struct stat *st,
				       const char *file, struct npl_arena *a)
{
	size_t lo = 0, hi, nlen = strlen(name);
	struct entry key = {0}, *e;
	struct npl_layer *L;
	struct srec *r = NULL;

	if (!c || !c->ns || nlen > UINT32_MAX)
		return NULL;
	if (c->next < c->ns && !namecmp(name, (uint32_t)nlen, c->s[c->next].name, c->s[c->next].namelen))
		r = &c->s[c->next];
	for (hi = c->ns; !r && lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;
		int cmp = namecmp(name, (uint32_t)nlen, c->s[mid].name, c->s[mid].namelen);

		if (!cmp) {
			r = &c->s[mid];
			break;
		}
		if (cmp < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (r)
		c->next = (size_t)(r - c->s) + 1;
	if (!r || r->dev != (uint64_t)st->st_dev || r->ino != (uint64_t)st->st_ino ||
	    r->size != (uint64_t)st->st_size || r->mtime != ns_of(st->st_mtim) || r->ctime != ns_of(st->st_ctim) ||
	    r->size != r->len)
		return NULL;
	key.h1 = r->h1;
	key.h2 = r->h2;
	key.len = r->len;
	e = bsearch(&key, c->v, c->n, sizeof(*c->v), entcmp);
	if (!e || !(L = decode(e, file, a)))
		return NULL;
	r->used = 1;
	return L;
}

void npl_dbcache_put(struct npl_dbcache *c, const char *text, size_t len, const char *name,
		     const struct stat *st, const struct npl_layer *L)
{
	struct npl_buf payload = NPL_BUF_INIT;
	struct io io = {0, 0, &payload, NULL, NULL, NULL, NULL};
	struct npl_layer copy = *L;   /* the visitor takes a mutable layer; it does not change it */
	uint64_t h1, h2;
	uint32_t n = (uint32_t)len;
	struct entry *e;

	if (!c || len > UINT32_MAX)
		return;
	visit(&io, &copy);
	hash128(text, len, &h1, &h2);
	if (c->nadd == c->capadd) {
		size_t cap = c->capadd ? c->capadd * 2 : 64;
		void *p = realloc(c->added, cap * sizeof(*c->added));

		if (!p)
			npl_oom();
		c->added = p;
		c->capadd = cap;
	}
	e = &c->added[c->nadd++];
	memset(e, 0, sizeof(*e));
	e->h1 = h1;
	e->h2 = h2;
	e->len = n;
	e->size = (uint32_t)payload.len;
	e->off = c->add.len;
	npl_buf_add(&c->add, payload.data ? payload.data : "", payload.len);
	npl_buf_release(&payload);
	note(c, name, st, h1, h2, n);
}

static int srecptrcmp(const void *x, const void *y)
{
	const struct srec *a = *(const struct srec *const *)x, *b = *(const struct srec *const *)y;

	return namecmp(a->name, a->namelen, b->name, b->namelen);
}

/* The stat records to keep, in name order: those that matched in this run and the new ones. */
static void save_stat(struct npl_dbcache *c, struct npl_buf *b)
{
	struct srec **v = malloc((c->ns + c->nsnew + 1) * sizeof(*v));
	size_t i, n = 0, kept = 0;
	uint32_t count;
	size_t at;

	if (!v)
		npl_oom();
	for (i = 0; i < c->ns; i++)
		if (c->s[i].used)
			v[n++] = &c->s[i];
	for (i = 0; i < c->nsnew; i++)
		v[n++] = &c->snew[i];
	qsort(v, n, sizeof(*v), srecptrcmp);
	at = b->len;
	npl_buf_add(b, "\0\0\0\0", 4);
	for (i = 0; i < n; i++) {
		const struct srec *r = v[i];

		/* names are unique within a folder; a repeat would make the next parse drop the file */
		if (kept && !namecmp(v[i - 1]->name, v[i - 1]->namelen, r->name, r->namelen))
			continue;
		npl_buf_add(b, (const char *)&r->dev, 8);
		npl_buf_add(b, (const char *)&r->ino, 8);
		npl_buf_add(b, (const char *)&r->size, 8);
		npl_buf_add(b, (const char *)&r->mtime, 8);
		npl_buf_add(b, (const char *)&r->ctime, 8);
		npl_buf_add(b, (const char *)&r->h1, 8);
		npl_buf_add(b, (const char *)&r->h2, 8);
		npl_buf_add(b, (const char *)&r->len, 4);
		npl_buf_add(b, (const char *)&r->namelen, 4);
		npl_buf_add(b, r->name, r->namelen);
		kept++;
	}
	count = (uint32_t)kept;
	memcpy(b->data + at, &count, 4);
	free(v);
}

/* Write the entries used in this run and those added: a cache holds what its folder holds now. */
static void save(struct npl_dbcache *c)
{
	struct npl_buf b = NPL_BUF_INIT, tmp = NPL_BUF_INIT;
	uint32_t format = FORMAT, idlen = (uint32_t)c->idlen, count = 0;
	size_t i, nused = 0, nsused = 0;
	char *slash;
	int fd, ok;

	for (i = 0; i < c->n; i++)
		nused += c->v[i].used;
	for (i = 0; i < c->ns; i++)
		nsused += c->s[i].used;
	if (!c->nadd && nused == c->n && !c->nsnew && nsused == c->ns)
		return;   /* unchanged */
	count = (uint32_t)(nused + c->nadd);
	npl_buf_add(&b, MAGIC, 8);
	npl_buf_add(&b, (const char *)&format, 4);
	npl_buf_add(&b, (const char *)&idlen, 4);
	npl_buf_add(&b, (const char *)c->id, c->idlen);
	npl_buf_add(&b, (const char *)&count, 4);
	{
		/* the entries in key order, so that the next run need not sort them */
		struct entry *all = malloc(((size_t)count + 1) * sizeof(*all));
		size_t k = 0;

		if (!all)
			npl_oom();
		for (i = 0; i < c->n; i++)
			if (c->v[i].used)
				all[k++] = c->v[i];
		for (i = 0; i < c->nadd; i++, k++) {
			all[k] = c->added[i];
			all[k].payload = (const unsigned char *)c->add.data + all[k].off;
		}
		qsort(all, k, sizeof(*all), entcmp);
		for (i = 0; i < k; i++) {
			const struct entry *e = &all[i];

			npl_buf_add(&b, (const char *)&e->h1, 8);
			npl_buf_add(&b, (const char *)&e->h2, 8);
			npl_buf_add(&b, (const char *)&e->len, 4);
			npl_buf_add(&b, (const char *)&e->size, 4);
			npl_buf_add(&b, (const char *)e->payload, e->size);
		}
		free(all);
	}
	save_stat(c, &b);

	/* the folder, private; then a temporary file renamed over the old one */
	slash = strrchr(c->path, '/');
	if (slash && slash != c->path) {
		struct npl_diag quiet = NPL_DIAG_INIT;

		*slash = '\0';
		npl_rc_pause(1);
		npl_mkdirs(c->path, 0700, &quiet);   /* a failure shows at open() below */
		npl_rc_pause(0);
		npl_diag_release(&quiet);
		*slash = '/';
	}
	npl_buf_printf(&tmp, "%s.%ld.tmp", c->path, (long)getpid());
	fd = open(tmp.data, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0) {
		size_t off = 0;

		ok = 1;
		while (off < b.len) {
			ssize_t w = write(fd, b.data + off, b.len - off);

			if (w <= 0) {
				ok = 0;
				break;
			}
			off += (size_t)w;
		}
		if (close(fd))
			ok = 0;
		if (!ok || rename(tmp.data, c->path))
			unlink(tmp.data);
	}
	npl_buf_release(&tmp);
	npl_buf_release(&b);
}

void npl_dbcache_close(struct npl_dbcache *c)
{
	size_t i;

	if (!c)
		return;
	save(c);
	put_mem(c->old, c->oldlen);
	free(c->v);
	free(c->s);
	for (i = 0; i < c->nsnew; i++)
		free((char *)c->snew[i].name);
	free(c->snew);
	npl_buf_release(&c->add);
	free(c->added);
	free(c->path);
	free(c);
}
