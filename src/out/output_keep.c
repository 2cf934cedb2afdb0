/* output_keep.c: what a commit may remove, what it keeps of a folder it exchanges, and who
 * stands in a folder; see output_internal.h. */
#define _GNU_SOURCE /* O_NOFOLLOW, O_DIRECTORY */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <linux/fs.h>
#include <unistd.h>

#include "npulaunch/arena.h"
#include "output_internal.h"

static const char marker_text[] = NPL_OUT_MARKER_TEXT;

/* Write the marker's text to fd; 0 or -1. */
static int write_mark(int fd)
{
	return write(fd, marker_text, sizeof(marker_text) - 1) == (ssize_t)(sizeof(marker_text) - 1) ? 0 : -1;
}

int npl_out_mark(const char *dir)
{
	char *p = npl_out_join(dir, NPL_OUT_MARKER), proc[64];
	int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600), rc = -1;

	/* whole or not there: written unnamed, then linked in (a kill leaves no marker half written) */
	if (fd >= 0) {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		rc = write_mark(fd) || linkat(AT_FDCWD, proc, AT_FDCWD, p, AT_SYMLINK_FOLLOW) ? -1 : 0;
		close(fd);
		free(p);
		return rc; /* a full disk, say: no half marker written in place instead */
	}
	/* a file system without unnamed files: written in place */
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	free(p);
	if (fd < 0)
		return -1;
	rc = write_mark(fd);
	if (close(fd))
		rc = -1;
	return rc;
}

/* A staging folder about to lose its marker made as make_stage() makes them, this user's and
 * 0700, so that a run killed before the folder is gone leaves one the next run proves its own
 * (a bundle's earlier folder, exchanged out, has the bundle's mode and owner until now). */
void npl_out_as_made(int fd)
{
	if (geteuid() != 0 || fchown(fd, 0, (gid_t)-1) == 0)
		fchmod(fd, 0700);
}

void npl_out_rm_tree_at(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *dp;
	struct dirent *de;

	if (fd < 0) {
		unlinkat(dfd, name, 0);
		return;
	}
	dp = fdopendir(fd);
	if (!dp) {
		close(fd);
		return;
	}
	while ((de = readdir(dp)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, NPL_OUT_MARKER))
			npl_out_rm_tree_at(fd, de->d_name);
	/* the marker last: a run killed while it removes a staging folder leaves one still marked,
	   or, once the marker is gone, an empty one npl_out_as_made() */
	if (npl_out_marked(dirfd(dp), NPL_OUT_MARKER))
		npl_out_as_made(dirfd(dp));
	unlinkat(dirfd(dp), NPL_OUT_MARKER, 0);
	closedir(dp);
	unlinkat(dfd, name, AT_REMOVEDIR);
}

/* 1 when dfd/name is a marker this user's npulaunch wrote: a regular file of this user, mode
 * 0600, one name (no hard link to another's), the marker's exact text. */
int npl_out_marked(int dfd, const char *name)
{
	char buf[sizeof(marker_text) + 1];
	struct stat st;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1 ||
	    (st.st_mode & 07777) != 0600 || st.st_size != (off_t)sizeof(marker_text) - 1) {
		close(fd);
		return 0;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n == (ssize_t)sizeof(marker_text) - 1 && !memcmp(buf, marker_text, (size_t)n);
}

/* 1 when name is a staging folder's as make_stage() names it: the prefix, digits, '-', digits. */
static int stage_name(const char *name)
{
	const char *p = name + strlen(NPL_OUT_TMP_PREFIX);
	size_t a = strspn(p, "0123456789"), b;

	if (!a || p[a] != '-')
		return 0;
	b = strspn(p + a + 1, "0123456789");
	return b && !p[a + 1 + b];
}

int npl_out_ours_at(int dfd, const char *name)
{
	int fd, ours;
	DIR *dp;
	struct dirent *de;
	struct stat st;

	if (strncmp(name, NPL_OUT_TMP_PREFIX, strlen(NPL_OUT_TMP_PREFIX)))
		return 0;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (npl_out_marked(fd, NPL_OUT_MARKER)) {
		close(fd);
		return 1;
	}
	/* or as a run killed between making it and marking it leaves it: named as this version
	   names them, this user's, mode 0700 as made, and empty (removing it loses nothing) */
	if (!stage_name(name) || fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 07777) != 0700 ||
	    !(dp = fdopendir(fd))) {
		close(fd);
		return 0;
	}
	ours = 1;
	while (ours && (de = readdir(dp)))
		ours = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");
	closedir(dp);
	return ours;
}

/* The extended attributes' names of path (a list of NUL-terminated names), its length in *n;
 * NULL with *n 0 when it has none or the file system keeps none. */
static char *xattr_names(const char *path, ssize_t *n)
{
	char *v = NULL;

	for (;;) {
		ssize_t len = llistxattr(path, NULL, 0);

		*n = 0;
		if (len <= 0) {
			free(v);
			return NULL;
		}
		v = npl_xrealloc(v, (size_t)len);
		*n = llistxattr(path, v, (size_t)len);
		if (*n >= 0)
			return v;
		if (errno != ERANGE) { /* grew meanwhile: again */
			*n = 0;
			free(v);
			return NULL;
		}
	}
}

static int has_name(const char *names, ssize_t n, const char *name)
{
	ssize_t i;

	for (i = 0; i < n; i += (ssize_t)strlen(names + i) + 1)
		if (!strcmp(names + i, name))
			return 1;
	return 0;
}

int npl_out_copy_xattrs(const char *from, const char *to)
{
	ssize_t nf, nt, i, len;
	char *fnames = xattr_names(from, &nf), *tnames = xattr_names(to, &nt), *val = NULL;
	int rc = 0;

	/* what to has and from lacks (a default ACL inherited from the parent): removed */
	for (i = 0; i < nt && !rc; i += (ssize_t)strlen(tnames + i) + 1)
		if (!has_name(fnames, nf, tnames + i) && lremovexattr(to, tnames + i) && errno != ENODATA)
			rc = -1;
	for (i = 0; i < nf && !rc; i += (ssize_t)strlen(fnames + i) + 1) {
		len = lgetxattr(from, fnames + i, NULL, 0);
		if (len < 0) {
			rc = errno == ENODATA ? 0 : -1;
			continue;
		}
		val = npl_xrealloc(val, (size_t)len + 1);
		len = lgetxattr(from, fnames + i, val, (size_t)len);
		if (len < 0 || lsetxattr(to, fnames + i, val, (size_t)len, 0))
			rc = -1;
	}
	free(val);
	free(fnames);
	free(tnames);
	return rc;
}

/* ---- who stands in a folder ---------------------------------------------------------- */

/* The paths each other process stands in or has open (its working folder, its open files),
 * read once per commit from /proc; those of another user's processes are not readable
 * unless root, and are not needed: a user's render exchanges only what the user may. */
static void load_uses(struct npl_out_uses *u)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;
	char link[PATH_MAX], self[32];

	u->loaded = 1;
	if (!proc)
		return;
	snprintf(self, sizeof(self), "%ld", (long)getpid());
	while ((de = readdir(proc))) {
		char dir[300];
		DIR *fds;
		struct dirent *fe;
		ssize_t n;

		if (de->d_name[0] < '1' || de->d_name[0] > '9' || !strcmp(de->d_name, self))
			continue;
		snprintf(dir, sizeof(dir), "/proc/%s/cwd", de->d_name);
		if ((n = readlink(dir, link, sizeof(link) - 1)) > 0) {
			link[n] = '\0';
			u->v = npl_out_grow(u->v, &u->cap, u->n, sizeof(*u->v));
			u->v[u->n++] = npl_out_strdup(link);
		}
		snprintf(dir, sizeof(dir), "/proc/%s/fd", de->d_name);
		if (!(fds = opendir(dir)))
			continue;
		while ((fe = readdir(fds)))
			if (fe->d_name[0] != '.' &&
			    (n = readlinkat(dirfd(fds), fe->d_name, link, sizeof(link) - 1)) > 0 && link[0] == '/') {
				link[n] = '\0';
				u->v = npl_out_grow(u->v, &u->cap, u->n, sizeof(*u->v));
				u->v[u->n++] = npl_out_strdup(link);
			}
		closedir(fds);
	}
	closedir(proc);
}

int npl_out_in_use(struct npl_out_uses *u, const char *dir)
{
	char *real = realpath(dir, NULL);
	size_t len;
	int i, used = 0;

	if (!real)
		return 0;
	if (!u->loaded)
		load_uses(u);
	len = strlen(real);
	for (i = 0; i < u->n && !used; i++)
		used = !strncmp(u->v[i], real, len) && (u->v[i][len] == '/' || u->v[i][len] == '\0' || len == 1);
	free(real);
	return used;
}

void npl_out_uses_release(struct npl_out_uses *u)
{
	int i;

	for (i = 0; i < u->n; i++)
		free(u->v[i]);
	free(u->v);
	memset(u, 0, sizeof(*u));
}

/* The flags a folder keeps: what chattr sets (its user-modifiable ones, and no copy-on-write,
 * project inheritance, case folding); the others the file system keeps for itself. */
#ifndef FS_CASEFOLD_FL
#define FS_CASEFOLD_FL 0x40000000
#endif
#define KEPT_FLAGS (FS_FL_USER_MODIFIABLE | FS_NOCOW_FL | FS_PROJINHERIT_FL | FS_CASEFOLD_FL)

int npl_out_copy_flags(const char *from, const char *to)
{
	int fd = open(from, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), want = 0, have = 0, rc = 0;

	if (fd < 0)
		return -1;
	if (ioctl(fd, FS_IOC_GETFLAGS, &want)) {
		close(fd);
		/* a file system that keeps none (tmpfs, say): nothing to keep */
		return errno == ENOTTY || errno == EOPNOTSUPP || errno == EINVAL ? 0 : -1;
	}
	close(fd);
	/* an immutable or append-only folder cannot be staged: it stays, and is written in place */
	if (want & (FS_IMMUTABLE_FL | FS_APPEND_FL))
		return -1;
	fd = open(to, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (ioctl(fd, FS_IOC_GETFLAGS, &have)) {
		rc = (want & KEPT_FLAGS) ? -1 : 0;
	} else {
		int got = 0;

		want = (have & ~KEPT_FLAGS) | (want & KEPT_FLAGS);
		/* set, and read back: a flag the file system takes only on an empty folder (casefold)
		   or not at all is one this folder cannot be given */
		if (want != have && (ioctl(fd, FS_IOC_SETFLAGS, &want) || ioctl(fd, FS_IOC_GETFLAGS, &got) ||
				     (got & KEPT_FLAGS) != (want & KEPT_FLAGS)))
			rc = -1;
	}
	close(fd);
	return rc;
}
