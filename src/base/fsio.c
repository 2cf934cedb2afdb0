/* fsio.c: reading inputs and making directories, the one way every module does it; see fsio.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npulaunch/arena.h"
#include "npulaunch/fsio.h"
/* What a file is, for a message refusing one that is not regular. */
static const char *file_kind(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" :
	       S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "a special file";
}

static int too_large(const char *path, size_t max, struct npl_diag *d)
{
	if (max >= ((size_t)1 << 20) && max % ((size_t)1 << 20) == 0)
		return npl_error(d, NULL, "cannot read '%s': larger than %zu MiB, the limit for this kind of file",
				 path, max >> 20);
	return npl_error(d, NULL, "cannot read '%s': larger than %zu bytes, the limit for this kind of file",
			 path, max);
}

int npl_open_regular(const char *path, int nofollow, size_t max, struct stat *st, struct npl_diag *d)
{
	/* O_NONBLOCK: opening a FIFO waits for a writer; the check below refuses it anyway */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (nofollow ? O_NOFOLLOW : 0));

	if (fd < 0)
		return npl_error(d, NULL, "cannot read '%s': %s", path, strerror(errno));
	if (fstat(fd, st) != 0) {
		npl_error(d, NULL, "cannot read '%s': %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	/* what was opened, not what the name was: a link to /dev/zero is /dev/zero */
	if (!S_ISREG(st->st_mode)) {
		npl_error(d, NULL, "cannot read '%s': %s, not a regular file", path, file_kind(st->st_mode));
		close(fd);
		return -1;
	}
	if ((unsigned long long)st->st_size > max) {
		too_large(path, max, d);
		close(fd);
		return -1;
	}
	return fd;
}

char *npl_read_file_max(struct npl_arena *a, const char *path, size_t max, size_t *len,
			struct npl_diag *d)
{
	struct stat st;
	int fd = npl_open_regular(path, 0, max, &st, d);
	size_t cap, got = 0, size = 0;
	char *p;

	if (fd < 0)
		return NULL;
	/* A regular file's size is known: a read of size + 1 bytes that returns exactly size
	 * is its end (open, fstat, read, close: a database may hold thousands of files).
	 * procfs and sysfs sizes are not the truth: those read until 0, up to max all the same. */
	if (st.st_size > 0)
		size = (size_t)st.st_size;
	cap = size ? size + 1 : max < 4096 ? max + 1 : 4096;
	p = a ? npl_arena_alloc(a, cap + 1) : npl_xmalloc(cap + 1);
	for (;;) {
		ssize_t r = read(fd, p + got, cap - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			npl_error(d, NULL, "cannot read '%s': %s", path, strerror(errno));
		else if (got + (size_t)r > max)
			too_large(path, max, d);   /* it grew, or said no size */
		if (r < 0 || got + (size_t)r > max) {
			close(fd);
			if (!a)
				free(p);
			return NULL;
		}
		got += (size_t)r;
		if (r == 0 || (size && got == size))
			break;
		if (got == cap) {
			size_t ncap = cap > max / 2 ? max + 1 : cap * 2 + 1;

			if (a) {
				p = npl_arena_grow(a, p, got, ncap + 1, 1);
			} else {
				char *q = npl_xrealloc(p, ncap + 1);

				p = q;
			}
			cap = ncap;
		}
	}
	close(fd);
	p[got] = '\0';
	if (len)
		*len = got;
	return p;
}

char *npl_read_file_in(struct npl_arena *a, const char *path, size_t *len, struct npl_diag *d)
{
	return npl_read_file_max(a, path, NPL_READ_MAX, len, d);
}

char *npl_read_file(const char *path, size_t *len, struct npl_diag *d)
{
	return npl_read_file_max(NULL, path, NPL_READ_MAX, len, d);
}

int npl_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int npl_mkdirs(const char *path, mode_t mode, struct npl_diag *d)
{
	char *p, *s;
	int rc = 0;

	if (!*path)
		return npl_error(d, NULL, "cannot create directory '': No such file or directory");
	p = npl_xstrdup(path);
	for (s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;

		*s = '\0';
		if (mkdir(p, mode) != 0 && errno != EEXIST) {
			rc = npl_error(d, NULL, "cannot create directory '%s': %s", p, strerror(errno));
			break;
		}
		*s = c;
		if (!c)
			break;
	}
	if (rc == 0 && !npl_is_dir(path))
		rc = npl_error(d, NULL, "'%s' exists and is not a directory", path);
	free(p);
	return rc;
}
