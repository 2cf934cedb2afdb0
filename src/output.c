/* output.c: atomic output sets and their check against the disk; see output.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npulaunch/arena.h"
#include "npulaunch/output.h"
#include "npulaunch/util.h"

static char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		npl_oom();
	return p;
}

void npl_out_add(struct npl_outset *s, const char *path, const char *text, size_t len, int mode)
{
	struct npl_outfile *f;

	if (s->n == s->cap) {
		int cap = s->cap ? s->cap * 2 : 16;
		void *p = realloc(s->v, (size_t)cap * sizeof(*s->v));

		if (!p)
			npl_oom();
		s->v = p;
		s->cap = cap;
	}
	f = &s->v[s->n++];
	f->path = xstrdup(path);
	f->text = malloc(len + 1);
	if (!f->text)
		npl_oom();
	memcpy(f->text, text, len);
	f->text[len] = '\0';
	f->len = len;
	f->mode = mode;
}

void npl_out_own_dir(struct npl_outset *s, const char *dir)
{
	if (s->ndirs == s->capdirs) {
		int cap = s->capdirs ? s->capdirs * 2 : 16;
		void *p = realloc(s->dirs, (size_t)cap * sizeof(*s->dirs));

		if (!p)
			npl_oom();
		s->dirs = p;
		s->capdirs = cap;
	}
	s->dirs[s->ndirs++] = xstrdup(dir);
}

static char *dir_of(const char *path)
{
	char *d = xstrdup(path), *slash = strrchr(d, '/');

	if (!slash)
		strcpy(d, ".");
	else if (slash == d)
		d[1] = '\0';
	else
		*slash = '\0';
	return d;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Create dir and its missing parents, remembering each folder created so
 * that a failed commit can remove them again. */
static int make_dirs(const char *dir, char ***made, int *nmade, struct npl_diag *d)
{
	char *p = strdup(dir), *s;
	int rc = 0;

	if (!p)
		npl_oom();
	for (s = p + 1;; s++) {
		char c;

		if (*s != '/' && *s != '\0')
			continue;
		c = *s;
		*s = '\0';
		if (!npl_is_dir(p)) {
			if (mkdir(p, 0755) != 0) {
				if (errno == EEXIST)
					rc = npl_error(d, NULL, "'%s' exists and is not a directory", p);
				else
					rc = npl_error(d, NULL, "cannot create directory '%s': %s", p, strerror(errno));
				break;
			}
			*made = realloc(*made, (size_t)(*nmade + 1) * sizeof(**made));
			if (!*made)
				npl_oom();
			(*made)[(*nmade)++] = strdup(p);
		}
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return rc;
}

/* A temporary name next to path: DIR/.BASE.TAG.XXXXXX, created (fd returned) or -1. */
static int temp_next_to(const char *path, const char *tag, char **out)
{
	char *dir = dir_of(path);
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t n = strlen(dir) + strlen(base) + strlen(tag) + 16;
	int fd;

	*out = malloc(n);
	if (!*out)
		npl_oom();
	snprintf(*out, n, "%s/.%s.%sXXXXXX", dir, base, tag);
	free(dir);
	fd = mkstemp(*out);
	if (fd < 0) {
		free(*out);
		*out = NULL;
	}
	return fd;
}

/* Every file is written under a temporary name first; an existing file is
 * kept under a second name (a hard link) until every rename has succeeded,
 * so that a failure part-way can put the old files back and remove the new
 * ones: the set lands whole or not at all. */
int npl_out_commit(const struct npl_outset *s, struct npl_diag *d)
{
	char **tmp = calloc((size_t)s->n + 1, sizeof(*tmp));
	char **bak = calloc((size_t)s->n + 1, sizeof(*bak));
	char **made = NULL;
	int nmade = 0, renamed = 0, i, rc = 0;

	if (!tmp || !bak)
		npl_oom();
	for (i = 0; i < s->n && rc == 0; i++) {
		const struct npl_outfile *f = &s->v[i];
		char *dir = dir_of(f->path);
		struct stat st;
		int fd;

		rc = make_dirs(dir, &made, &nmade, d);
		free(dir);
		if (rc)
			break;
		fd = temp_next_to(f->path, "", &tmp[i]);
		if (fd < 0) {
			rc = npl_error(d, NULL, "cannot create a file next to '%s': %s", f->path, strerror(errno));
			break;
		}
		if (write_all(fd, f->text, f->len) || fchmod(fd, (mode_t)f->mode)) {
			rc = npl_error(d, NULL, "cannot write '%s': %s", f->path, strerror(errno));
			close(fd);
			break;
		}
		if (close(fd)) {
			rc = npl_error(d, NULL, "cannot write '%s': %s", f->path, strerror(errno));
			break;
		}
		if (lstat(f->path, &st) == 0 && !S_ISDIR(st.st_mode)) {
			fd = temp_next_to(f->path, "old.", &bak[i]);
			if (fd >= 0) {
				close(fd);
				unlink(bak[i]);
			}
			if (fd < 0 || link(f->path, bak[i]) != 0) {
				rc = npl_error(d, NULL, "cannot keep the old '%s' aside: %s", f->path, strerror(errno));
				free(bak[i]);
				bak[i] = NULL;
				break;
			}
		}
	}
	for (i = 0; i < s->n && rc == 0; i++, renamed++)
		if (rename(tmp[i], s->v[i].path)) {
			rc = npl_error(d, NULL, "cannot rename into '%s': %s", s->v[i].path, strerror(errno));
			break;
		}
	if (rc) {
		/* put back what was there, remove what was not */
		for (i = 0; i < renamed; i++) {
			if (bak[i] && rename(bak[i], s->v[i].path) == 0) {
				free(bak[i]);
				bak[i] = NULL;
			} else if (!bak[i]) {
				unlink(s->v[i].path);
			}
			free(tmp[i]);
			tmp[i] = NULL;
		}
	} else {
		for (i = 0; i < s->n; i++) {
			free(tmp[i]);
			tmp[i] = NULL;
		}
	}
	for (i = 0; i < s->n; i++) {
		if (tmp[i])
			unlink(tmp[i]);
		if (bak[i])
			unlink(bak[i]);
		free(tmp[i]);
		free(bak[i]);
	}
	for (i = nmade - 1; i >= 0; i--) {
		if (rc)
			rmdir(made[i]);
		free(made[i]);
	}
	free(made);
	free(tmp);
	free(bak);
	return rc;
}

static int owned(const struct npl_outset *s, const char *path)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].path, path))
			return 1;
	return 0;
}

static int owns_dir(const struct npl_outset *s, const char *path)
{
	int i;

	for (i = 0; i < s->ndirs; i++)
		if (!strcmp(s->dirs[i], path))
			return 1;
	return 0;
}

static int is_below_owned(const struct npl_outset *s, const char *path)
{
	int i;
	size_t n = strlen(path);

	for (i = 0; i < s->n; i++)
		if (!strncmp(s->v[i].path, path, n) && s->v[i].path[n] == '/')
			return 1;
	return 0;
}

static int namecmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Report files below dir that the set does not write. */
static int check_extra(const struct npl_outset *s, const char *dir, FILE *fp)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	int diffs = 0;

	if (!dp)
		return 0;
	while ((de = readdir(dp))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			names = realloc(names, cap * sizeof(*names));
			if (!names)
				npl_oom();
		}
		names[n] = malloc(strlen(dir) + strlen(de->d_name) + 2);
		if (!names[n])
			npl_oom();
		sprintf(names[n], "%s/%s", dir, de->d_name);
		n++;
	}
	closedir(dp);
	if (n)
		qsort(names, n, sizeof(*names), namecmp);
	for (i = 0; i < n; i++) {
		if (owned(s, names[i]))
			;
		else if (npl_is_dir(names[i]) && (owns_dir(s, names[i]) || is_below_owned(s, names[i])))
			diffs += check_extra(s, names[i], fp);
		else {
			fprintf(fp, "extra %s%s\n", names[i], npl_is_dir(names[i]) ? "/" : "");
			diffs++;
		}
		free(names[i]);
	}
	free(names);
	return diffs;
}

int npl_out_check(const struct npl_outset *s, FILE *fp)
{
	int i, diffs = 0;

	for (i = 0; i < s->n; i++) {
		const struct npl_outfile *f = &s->v[i];
		struct npl_diag d = NPL_DIAG_INIT;
		size_t len;
		char *have;
		struct stat st;

		if (stat(f->path, &st) != 0) {
			fprintf(fp, "missing %s\n", f->path);
			diffs++;
			continue;
		}
		have = npl_read_file(f->path, &len, &d);
		npl_diag_release(&d);
		if (!have || len != f->len || memcmp(have, f->text, len) ||
		    (st.st_mode & 0777) != (unsigned)f->mode) {
			fprintf(fp, "stale %s\n", f->path);
			diffs++;
		}
		free(have);
	}
	for (i = 0; i < s->ndirs; i++)
		diffs += check_extra(s, s->dirs[i], fp);
	return diffs;
}

void npl_out_release(struct npl_outset *s)
{
	int i;

	for (i = 0; i < s->n; i++) {
		free(s->v[i].path);
		free(s->v[i].text);
	}
	for (i = 0; i < s->ndirs; i++)
		free(s->dirs[i]);
	free(s->v);
	free(s->dirs);
	memset(s, 0, sizeof(*s));
}
