/* rcache.c: the per-user cache of command results; see rcache.h. */
#define _GNU_SOURCE /* open_memstream, O_PATH */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <stddef.h>
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
#include "npulaunch/diag.h"
#include "npulaunch/output.h"
#include "npulaunch/rcache.h"
#include "npulaunch/util.h"

extern char **environ;

#define MAGIC "NPLRSLT"          /* 8 bytes with its NUL */
#define FORMAT 1u                /* bump when the layout changes */
#define RACY_NS 2000000000LL     /* as dbcache.c: a file changed this recently may change unseen */
#define MAX_FILE (256u << 20)    /* an entry larger than this is not ours, nor kept */
#define KEEP 64                  /* entries kept in the folder; the oldest go first */

struct hdr {
	char magic[8];
	uint32_t format, status;
	unsigned char key[32];
	uint64_t size;               /* of the whole entry */
	uint64_t ndeps, deps_off, deps_len;
	uint64_t err_off, err_len;
	uint64_t out_off, out_len;
	uint64_t nfiles, files_off, files_len;
	uint64_t nbundles, bundles_off, bundles_len;
	uint64_t sum;                /* checksum() of the whole entry, this field as 0 */
};

/* A file or folder the run read or looked for; then its path, padded to 8 bytes. */
struct drec {
	uint32_t present, pathlen;
	uint64_t dev, ino, size;
	int64_t mtime, ctime;        /* ns */
	uint32_t mode, pad;
};

/* A file of render's set; then its path, padded. Its text is at text_off in the entry. */
struct frec {
	uint64_t text_off, text_len;
	uint32_t mode, pathlen;
};

/* A bundle of render's set; then its folder and manifest name, each padded. */
struct brec {
	uint32_t dirlen, manlen;
};

struct file {
	char *path;
	const char *text;
	size_t len;
	int mode;
};

struct npl_rc {
	char *dir, *path;
	unsigned char key[32];
	/* a hit */
	int hit;
	unsigned char *map;
	size_t maplen;
	struct hdr h;
	struct file *files;
	size_t nfiles;
	struct npl_outbundle *bundles;
	size_t nbundles;
	/* recording */
	int recording, paused, racy, uncacheable, out;
	int64_t start;
	struct npl_buf deps;
	size_t ndeps;
	FILE *real_err, *real_out;
	char *ebuf, *obuf;
	size_t elen, olen;
};

static struct npl_rc *rec;   /* the run being recorded, if any */

static int64_t ns_of(struct timespec ts)
{
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* A damaged entry's checksum: four lanes of h = (h ^ word) * odd, each a bijection of h, so
 * that any one changed word changes the sum; ~8 bytes a cycle, as the entries of a render
 * --all are megabytes. Not a defence against a forger: the folder is the user's own. */
static uint64_t checksum(const unsigned char *p, size_t n)
{
	uint64_t h[4] = {0x9e3779b97f4a7c15ULL, 0xc2b2ae3d27d4eb4fULL, 0x165667b19e3779f9ULL, 0x27d4eb2f165667c5ULL};
	const uint64_t k = 0xff51afd7ed558ccdULL;
	size_t i = 0, j;

	for (; i + 32 <= n; i += 32)
		for (j = 0; j < 4; j++) {
			uint64_t w;

			memcpy(&w, p + i + 8 * j, 8);
			h[j] = (h[j] ^ w) * k;
		}
	for (; i < n; i++)
		h[i & 3] = (h[i & 3] ^ p[i]) * k;
	return (h[0] ^ (h[1] >> 1)) + ((h[2] << 1) ^ h[3]) + n;
}

/* ---- the key ------------------------------------------------------------------------- */

static void put_str(struct sha256_ctx *s, const char *p)
{
	sha256_update(s, strlen(p) + 1, (const uint8_t *)p);
}

static int make_key(struct npl_rc *c, int argc, char *const *argv)
{
	unsigned char id[64];
	size_t idlen = npl_build_id(id);
	struct sha256_ctx s;
	char cwd[4096], ttys[3];
	uint32_t ids[2] = {(uint32_t)geteuid(), (uint32_t)getegid()};
	struct stat st;
	int i;

	if (!idlen || !getcwd(cwd, sizeof(cwd)) || stat(".", &st))
		return -1;
	sha256_init(&s);
	put_str(&s, "npulaunch-result/1");
	sha256_update(&s, idlen, id);
	sha256_update(&s, sizeof(ids), (const uint8_t *)ids);
	for (i = 0; i < 3; i++)
		ttys[i] = (char)('0' + isatty(i));
	sha256_update(&s, sizeof(ttys), (const uint8_t *)ttys);
	put_str(&s, cwd);
	sha256_update(&s, sizeof(st.st_dev), (const uint8_t *)&st.st_dev);
	sha256_update(&s, sizeof(st.st_ino), (const uint8_t *)&st.st_ino);
	for (i = 0; i < argc; i++)
		put_str(&s, argv[i]);
	put_str(&s, "\001environ");
	for (i = 0; environ && environ[i]; i++)
		put_str(&s, environ[i]);
	sha256_digest(&s, sizeof(c->key), c->key);
	return 0;
}

/* ---- reading an entry ------------------------------------------------------------------ */

static int in_bounds(const struct hdr *h, uint64_t off, uint64_t len)
{
	return off <= h->size && len <= h->size - off;
}

/* What stat() says now is what the entry recorded. A folder of the path is opened once for a
 * run of paths in it, as the walk that recorded them went folder by folder. */
struct walker {
	int fd;
	const char *dir;
	size_t dirlen;
};

static int dep_same(struct walker *w, const struct drec *d, const char *path)
{
	const char *slash = memrchr(path, '/', d->pathlen);
	const char *base = slash ? slash + 1 : path;
	size_t dirlen = slash ? (size_t)(slash - path) : 0;
	struct stat st;
	int at = AT_FDCWD;

	if (slash) {
		if (!w->dir || w->dirlen != dirlen || memcmp(w->dir, path, dirlen)) {
			char *d2 = strndup(path, dirlen ? dirlen : 1);

			if (!d2)
				npl_oom();
			if (w->fd >= 0)
				close(w->fd);
			w->fd = open(d2, O_PATH | O_DIRECTORY | O_CLOEXEC);
			free(d2);
			w->dir = path;
			w->dirlen = dirlen;
		}
		if (w->fd < 0)
			return !d->present;
		at = w->fd;
	}
	if (fstatat(at, base, &st, 0))
		return !d->present && (errno == ENOENT || errno == ENOTDIR);
	return d->present && (uint64_t)st.st_dev == d->dev && (uint64_t)st.st_ino == d->ino &&
	       (uint64_t)st.st_size == d->size && (uint32_t)st.st_mode == d->mode &&
	       ns_of(st.st_mtim) == d->mtime && ns_of(st.st_ctim) == d->ctime;
}

static int deps_unchanged(const struct npl_rc *c)
{
	const unsigned char *p = c->map + c->h.deps_off, *end = p + c->h.deps_len;
	struct walker w = {-1, NULL, 0};
	uint64_t i;
	int same = 1;

	for (i = 0; i < c->h.ndeps && same; i++) {
		struct drec d;

		if ((size_t)(end - p) < sizeof(d))
			return 0;
		memcpy(&d, p, sizeof(d));
		p += sizeof(d);
		/* the path with its NUL */
		if (!d.pathlen || d.pathlen >= 4096 || (size_t)(end - p) < pad8(d.pathlen + 1) ||
		    memchr(p, '\0', d.pathlen) || p[d.pathlen])
			same = 0;
		else
			same = dep_same(&w, &d, (const char *)p);
		p += pad8(d.pathlen + 1);
	}
	if (w.fd >= 0)
		close(w.fd);
	return same && p == end;
}

/* A copy of n bytes at p as a string; NULL when they hold a NUL. */
static char *str_at(const unsigned char *p, uint32_t n)
{
	char *s;

	if (memchr(p, '\0', n))
		return NULL;
	s = strndup((const char *)p, n);
	if (!s)
		npl_oom();
	return s;
}

static int read_tables(struct npl_rc *c)
{
	const unsigned char *p = c->map + c->h.files_off, *end = p + c->h.files_len;
	uint64_t i;

	if (c->h.nfiles > c->h.files_len / sizeof(struct frec) ||
	    c->h.nbundles > c->h.bundles_len / sizeof(struct brec))
		return -1;
	c->files = calloc(c->h.nfiles + 1, sizeof(*c->files));
	c->bundles = calloc(c->h.nbundles + 1, sizeof(*c->bundles));
	if (!c->files || !c->bundles)
		npl_oom();
	for (i = 0; i < c->h.nfiles; i++, c->nfiles++) {
		struct frec f;

		if ((size_t)(end - p) < sizeof(f))
			return -1;
		memcpy(&f, p, sizeof(f));
		p += sizeof(f);
		if (!f.pathlen || (size_t)(end - p) < pad8(f.pathlen) || f.text_len == UINT64_MAX ||
		    !in_bounds(&c->h, f.text_off, f.text_len + 1) || c->map[f.text_off + f.text_len] != '\0' ||
		    !(c->files[i].path = str_at(p, f.pathlen)))
			return -1;
		p += pad8(f.pathlen);
		c->files[i].text = (const char *)c->map + f.text_off;
		c->files[i].len = f.text_len;
		c->files[i].mode = (int)(f.mode & 07777);
	}
	if (p != end)
		return -1;
	p = c->map + c->h.bundles_off;
	end = p + c->h.bundles_len;
	for (i = 0; i < c->h.nbundles; i++, c->nbundles++) {
		struct brec b;

		if ((size_t)(end - p) < sizeof(b))
			return -1;
		memcpy(&b, p, sizeof(b));
		p += sizeof(b);
		if ((size_t)(end - p) < pad8(b.dirlen) || !(c->bundles[i].dir = str_at(p, b.dirlen)))
			return -1;
		p += pad8(b.dirlen);
		if (!b.manlen || (size_t)(end - p) < pad8(b.manlen) || !(c->bundles[i].manifest = str_at(p, b.manlen)))
			return -1;
		p += pad8(b.manlen);
	}
	return p == end ? 0 : -1;
}

static void drop_hit(struct npl_rc *c)
{
	size_t i;

	for (i = 0; i < c->nfiles; i++)
		free(c->files[i].path);
	for (i = 0; i < c->nbundles; i++) {
		free(c->bundles[i].dir);
		free(c->bundles[i].manifest);
	}
	free(c->files);
	free(c->bundles);
	c->files = NULL;
	c->bundles = NULL;
	c->nfiles = c->nbundles = 0;
	if (c->map)
		munmap(c->map, c->maplen);
	c->map = NULL;
	c->hit = 0;
}

/* The checksum of an entry, its sum field taken as 0. */
static uint64_t entry_sum(const unsigned char *p, size_t n)
{
	unsigned char head[sizeof(struct hdr)];

	memcpy(head, p, sizeof(head));
	memset(head + offsetof(struct hdr, sum), 0, sizeof(uint64_t));
	return checksum(head, sizeof(head)) ^ checksum(p + sizeof(head), n - sizeof(head));
}

static void lookup(struct npl_rc *c)
{
	struct npl_diag quiet = NPL_DIAG_INIT;
	struct stat st;
	int fd = npl_open_regular(c->path, 1, MAX_FILE, &st, &quiet);

	npl_diag_release(&quiet);
	if (fd < 0)
		return;
	/* ours, not writable by others, and large enough to be one */
	if (st.st_uid != geteuid() || (st.st_mode & 022) || (size_t)st.st_size < sizeof(struct hdr)) {
		close(fd);
		return;
	}
	c->maplen = (size_t)st.st_size;
	/* the page cache's pages, mapped at once: no copy, no fault per page */
	c->map = mmap(NULL, c->maplen, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	close(fd);
	if (c->map == MAP_FAILED) {
		c->map = NULL;
		return;
	}
	memcpy(&c->h, c->map, sizeof(c->h));
	if (entry_sum(c->map, c->maplen) != c->h.sum || memcmp(c->h.magic, MAGIC, sizeof(c->h.magic)) || c->h.format != FORMAT ||
	    memcmp(c->h.key, c->key, sizeof(c->key)) || c->h.size != c->maplen || c->h.status != 0 ||
	    !in_bounds(&c->h, c->h.deps_off, c->h.deps_len) || !in_bounds(&c->h, c->h.err_off, c->h.err_len) ||
	    !in_bounds(&c->h, c->h.out_off, c->h.out_len) || !in_bounds(&c->h, c->h.files_off, c->h.files_len) ||
	    !in_bounds(&c->h, c->h.bundles_off, c->h.bundles_len) || c->h.ndeps > c->h.deps_len / sizeof(struct drec) ||
	    !deps_unchanged(c) || read_tables(c)) {
		drop_hit(c);
		return;
	}
	c->hit = 1;
}

struct npl_rc *npl_rc_open(int argc, char *const *argv)
{
	struct npl_rc *c = calloc(1, sizeof(*c));
	struct npl_buf b = NPL_BUF_INIT;
	int i;

	if (!c)
		npl_oom();
	c->dir = npl_cache_dir();
	{
		/* off by itself (the recipe cache stays), as for measuring the work it saves */
		const char *off = getenv("NPULAUNCH_RESULT_CACHE");

		if (off && !strcmp(off, "off")) {
			free(c->dir);
			c->dir = NULL;
		}
	}
	if (!c->dir || make_key(c, argc, argv)) {
		free(c->dir);
		free(c);
		return NULL;
	}
	npl_buf_printf(&b, "%s/result-", c->dir);
	for (i = 0; i < 16; i++)
		npl_buf_printf(&b, "%02x", c->key[i]);
	c->path = npl_buf_detach(&b);
	lookup(c);
	return c;
}

int npl_rc_hit(const struct npl_rc *c)
{
	return c && c->hit;
}

int npl_rc_replay(struct npl_rc *c)
{
	fflush(stdout);
	if (c->h.err_len)
		fwrite(c->map + c->h.err_off, 1, c->h.err_len, stderr);
	fflush(stderr);
	if (c->h.out_len)
		fwrite(c->map + c->h.out_off, 1, c->h.out_len, stdout);
	return (int)c->h.status;
}

void npl_rc_outset(struct npl_rc *c, struct npl_outset *set)
{
	size_t i;

	for (i = 0; i < c->nfiles; i++)
		npl_out_add_borrowed(set, c->files[i].path, c->files[i].text, c->files[i].len, c->files[i].mode);
	for (i = 0; i < c->nbundles; i++)
		npl_out_add_bundle(set, c->bundles[i].dir, c->bundles[i].manifest);
}

/* ---- recording --------------------------------------------------------------------------- */

void npl_rc_record(struct npl_rc *c, int out)
{
	struct timespec ts;

	if (!c || rec)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	c->start = ns_of(ts);
	fflush(stdout);
	fflush(stderr);
	c->real_err = stderr;
	stderr = open_memstream(&c->ebuf, &c->elen);
	if (!stderr) {
		stderr = c->real_err;
		return;
	}
	if (out) {
		c->real_out = stdout;
		stdout = open_memstream(&c->obuf, &c->olen);
		if (!stdout) {
			stdout = c->real_out;
			fclose(stderr);
			stderr = c->real_err;
			free(c->ebuf);
			c->ebuf = NULL;
			return;
		}
		c->out = 1;
	}
	c->recording = 1;
	rec = c;
}

static void add_padded(struct npl_buf *b, const char *s, size_t n)
{
	npl_buf_add(b, s, n);
	npl_buf_add(b, "\0\0\0\0\0\0\0", pad8(n) - n);
}

void npl_rc_dep(const char *path, const struct stat *st)
{
	struct drec d;
	size_t n;

	if (!rec || rec->paused)
		return;
	n = strlen(path);
	if (!n || n >= 4096) {
		rec->uncacheable = 1;
		return;
	}
	memset(&d, 0, sizeof(d));
	d.pathlen = (uint32_t)n;
	if (st) {
		d.present = 1;
		d.dev = (uint64_t)st->st_dev;
		d.ino = (uint64_t)st->st_ino;
		d.size = (uint64_t)st->st_size;
		d.mode = (uint32_t)st->st_mode;
		d.mtime = ns_of(st->st_mtim);
		d.ctime = ns_of(st->st_ctim);
		/* changed so recently that a change in the same clock tick would not show */
		if (d.mtime > rec->start - RACY_NS || d.ctime > rec->start - RACY_NS)
			rec->racy = 1;
	}
	npl_buf_add(&rec->deps, (const char *)&d, sizeof(d));
	add_padded(&rec->deps, path, n + 1);   /* with its NUL: the check reads it as a string */
	rec->ndeps++;
}

void npl_rc_uncacheable(void)
{
	if (rec && !rec->paused)
		rec->uncacheable = 1;
}

void npl_rc_pause(int on)
{
	if (rec)
		rec->paused = on;
}

/* Keep the newest KEEP entries of the folder. */
static int mtimecmp(const void *a, const void *b)
{
	const struct timespec *x = a, *y = b;

	return x->tv_sec != y->tv_sec ? (x->tv_sec < y->tv_sec ? -1 : 1)
				      : (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

static void prune(const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	struct {
		struct timespec t;   /* first: mtimecmp compares it */
		char name[64];
	} *v = NULL;
	size_t n = 0, cap = 0, i;

	if (!dp)
		return;
	while ((de = readdir(dp))) {
		struct stat st;

		if (strncmp(de->d_name, "result-", 7) || strlen(de->d_name) >= sizeof(v->name) ||
		    fstatat(dirfd(dp), de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				npl_oom();
		}
		v[n].t = st.st_mtim;
		strcpy(v[n].name, de->d_name);
		n++;
	}
	if (n > KEEP) {
		qsort(v, n, sizeof(*v), mtimecmp);
		for (i = 0; i < n - KEEP; i++)
			unlinkat(dirfd(dp), v[i].name, 0);
	}
	closedir(dp);
	free(v);
}

static void store(struct npl_rc *c, const struct npl_outset *set)
{
	struct npl_buf b = NPL_BUF_INIT, files = NPL_BUF_INIT, bundles = NPL_BUF_INIT, tmp = NPL_BUF_INIT;
	struct npl_diag quiet = NPL_DIAG_INIT;
	struct hdr h;
	size_t texts, i;
	int fd, ok = 0;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, MAGIC, sizeof(h.magic));
	h.format = FORMAT;
	memcpy(h.key, c->key, sizeof(h.key));
	h.ndeps = c->ndeps;
	h.deps_off = sizeof(h);
	h.deps_len = c->deps.len;
	h.err_off = h.deps_off + h.deps_len;
	h.err_len = c->elen;
	h.out_off = pad8(h.err_off + h.err_len);
	h.out_len = c->olen;
	/* the texts of render's files, then their table */
	texts = pad8(h.out_off + h.out_len);
	for (i = 0; set && i < (size_t)set->n; i++) {
		struct frec f = {texts, set->v[i].len, (uint32_t)set->v[i].mode, (uint32_t)strlen(set->v[i].path)};

		npl_buf_add(&files, (const char *)&f, sizeof(f));
		add_padded(&files, set->v[i].path, f.pathlen);
		texts = pad8(texts + set->v[i].len + 1);   /* with its NUL, as npl_out_add() keeps it */
		h.nfiles++;
	}
	for (i = 0; set && i < (size_t)set->nbundles; i++) {
		struct brec r = {(uint32_t)strlen(set->bundles[i].dir), (uint32_t)strlen(set->bundles[i].manifest)};

		npl_buf_add(&bundles, (const char *)&r, sizeof(r));
		add_padded(&bundles, set->bundles[i].dir, r.dirlen);
		add_padded(&bundles, set->bundles[i].manifest, r.manlen);
		h.nbundles++;
	}
	h.files_off = texts;
	h.files_len = files.len;
	h.bundles_off = h.files_off + h.files_len;
	h.bundles_len = bundles.len;
	h.size = h.bundles_off + h.bundles_len;

	npl_buf_add(&b, (const char *)&h, sizeof(h));
	npl_buf_add(&b, c->deps.data ? c->deps.data : "", c->deps.len);
	add_padded(&b, c->ebuf ? c->ebuf : "", c->elen);
	add_padded(&b, c->obuf ? c->obuf : "", c->olen);
	for (i = 0; set && i < (size_t)set->n; i++)
		add_padded(&b, set->v[i].text, set->v[i].len + 1);
	npl_buf_add(&b, files.data ? files.data : "", files.len);
	npl_buf_add(&b, bundles.data ? bundles.data : "", bundles.len);
	if (b.len != h.size || b.len > MAX_FILE)
		goto out;   /* the first cannot happen: the layout above is the one computed */
	h.sum = entry_sum((const unsigned char *)b.data, b.len);
	memcpy(b.data + offsetof(struct hdr, sum), &h.sum, sizeof(h.sum));

	npl_mkdirs(c->dir, 0700, &quiet);   /* a failure shows at open() below */
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
		else
			prune(c->dir);
	}
out:
	npl_diag_release(&quiet);
	npl_buf_release(&tmp);
	npl_buf_release(&files);
	npl_buf_release(&bundles);
	npl_buf_release(&b);
}

void npl_rc_finish(struct npl_rc *c, int status, const struct npl_outset *set)
{
	if (!c || !c->recording)
		return;
	rec = NULL;
	c->recording = 0;
	fclose(stderr);
	stderr = c->real_err;
	if (c->out) {
		fclose(stdout);
		stdout = c->real_out;
	}
	if (c->elen)
		fwrite(c->ebuf, 1, c->elen, stderr);
	fflush(stderr);
	if (c->olen)
		fwrite(c->obuf, 1, c->olen, stdout);
	if (status == 0 && !c->racy && !c->uncacheable)
		store(c, set);
}

void npl_rc_close(struct npl_rc *c)
{
	if (!c)
		return;
	if (c->recording)
		npl_rc_finish(c, 1, NULL);
	drop_hit(c);
	npl_buf_release(&c->deps);
	free(c->ebuf);
	free(c->obuf);
	free(c->dir);
	free(c->path);
	free(c);
}
