/*
 * output_journal.c: the way back for a bundle put in file by file by a run that was killed.
 *
 * A commit that cannot exchange a bundle's folder whole (it holds files that are not
 * npulaunch's, another process works in it, or the file system has no exchange) stages the new
 * files in a marked folder inside it, writes there what it is about to put in (the journal), and then renames the files in one
 * by one, each earlier file kept in the staging folder's .old until the commit is whole. Once
 * every bundle is in, the journal goes first: from then on the staging folder only holds what
 * is to be removed. SIGKILL can come between any two of those steps; the next commit into the
 * folder finds the staging folder with its journal and undoes the landing (npl_out_undo()):
 * the earlier files back from .old, the new names this run added removed when they still hold
 * the bytes the journal names. The bundle is then wholly as it was, and the next commit
 * replaces it without --force.
 *
 * The journal, NPL_OUT_JOURNAL in the staging folder: one line per new file,
 *   <sha256 of its new bytes, 64 hex> <'+' a name new to the folder | '=' one it replaces> <name>
 * written whole or not at all (written under another name, then renamed).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npulaunch/arena.h"
#include "npulaunch/buf.h"
#include "npulaunch/output.h"
#include "npulaunch/sha256.h"
#include "output_internal.h"

int npl_out_journal_write(const char *stage, const struct npl_out_jentry *v, int n)
{
	struct npl_buf b = NPL_BUF_INIT;
	char *tmp = npl_out_join(stage, NPL_OUT_JOURNAL_NEW), *path = npl_out_join(stage, NPL_OUT_JOURNAL);
	int i, fd, rc = -1;

	for (i = 0; i < n; i++) {
		char hex[65];

		npl_sha256_hex(v[i].text, v[i].len, hex);
		npl_buf_printf(&b, "%s %c %s\n", hex, v[i].existed ? '=' : '+', v[i].name);
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		rc = npl_out_write_all(fd, npl_buf_str(&b), b.len) ? -1 : 0;
		if (close(fd))
			rc = -1;
		if (!rc)
			rc = rename(tmp, path);
		if (rc)
			unlink(tmp);
	}
	npl_buf_release(&b);
	free(tmp);
	free(path);
	return rc;
}

int npl_out_journal_files(const char *stage, const struct npl_outset *s, const int *files, int n)
{
	struct npl_out_jentry *v = npl_xcalloc((size_t)n, sizeof(*v));
	struct stat st;
	int i, rc;

	for (i = 0; i < n; i++) {
		const struct npl_outfile *f = &s->v[files[i]];

		v[i].name = npl_out_base_of(f->path);
		v[i].text = f->text;
		v[i].len = f->len;
		v[i].existed = !lstat(f->path, &st);
	}
	rc = npl_out_journal_write(stage, v, n);
	free(v);
	return rc;
}

int npl_out_journal_done(const char *stage)
{
	char *path = npl_out_join(stage, NPL_OUT_JOURNAL);
	int rc = unlink(path) && errno != ENOENT ? -1 : 0;

	free(path);
	return rc;
}

/* A name a journal may hold: one component, not one of the staging folder's own. */
static int journal_name(const char *s, size_t n)
{
	if (!n || n > 255 || memchr(s, '/', n) || memchr(s, '\0', n))
		return 0;
	return !((n == 1 && s[0] == '.') || (n == 2 && !memcmp(s, "..", 2)));
}

/* Every line as npl_out_journal_write() writes them: a journal with one line it could not have
 * written is not acted on at all. */
static int journal_valid(const char *p, size_t len)
{
	const char *end = p + len;

	if (memchr(p, '\0', len))
		return 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t i;

		if (!nl || nl - p < 68)
			return 0;
		for (i = 0; i < 64; i++)
			if (!strchr("0123456789abcdef", p[i]))
				return 0;
		if (p[64] != ' ' || (p[65] != '+' && p[65] != '=') || p[66] != ' ' ||
		    !journal_name(p + 67, (size_t)(nl - p - 67)))
			return 0;
		p = nl + 1;
	}
	return 1;
}

/* dir/name is a regular file whose bytes have the sha256 hex (never through a link, never
 * blocking on a FIFO). */
static int holds(const char *dir, const char *name, const char *hex)
{
	char *path = npl_out_join(dir, name), have[65], *text;
	size_t len;
	int same = 0;

	text = npl_out_read_regular(path, &len);
	if (text) {
		npl_sha256_hex(text, len, have);
		same = !memcmp(have, hex, 64);
	}
	free(text);
	free(path);
	return same;
}

/* The sha256 (hex) a valid journal j gives name, or NULL when it names it not. */
static const char *journaled(const char *j, const char *name)
{
	size_t n = strlen(name);

	for (; *j; j = strchr(j, '\n') + 1)
		if (!strncmp(j + 67, name, n) && j[67 + n] == '\n')
			return j;
	return NULL;
}

/* Put back into dir what stage/.old holds: the earlier files, and those the new bundle lacked;
 * only over what the run put there (the journaled bytes) or nothing, never over a file changed
 * since. -1 when one cannot be. */
static int put_back(const char *dir, const char *stage, const char *j)
{
	char *old = npl_out_join(stage, ".old");
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;
	DIR *dp = dfd >= 0 ? opendir(old) : NULL;
	struct dirent *de;

	free(old);
	if (!dp) {
		rc = dfd >= 0 && errno == ENOENT ? 0 : -1;
		if (dfd >= 0)
			close(dfd);
		return rc;
	}
	while ((de = readdir(dp))) {
		struct stat a, b;
		int ofd = dirfd(dp);

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		/* kept as a hard link, the new file not renamed in yet: it is in its place already */
		if (!fstatat(ofd, de->d_name, &a, AT_SYMLINK_NOFOLLOW) &&
		    !fstatat(dfd, de->d_name, &b, AT_SYMLINK_NOFOLLOW) && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino)
			continue;
		if (!fstatat(dfd, de->d_name, &b, AT_SYMLINK_NOFOLLOW) &&
		    !(journaled(j, de->d_name) && holds(dir, de->d_name, journaled(j, de->d_name)))) {
			rc = -1; /* changed since the run was killed: left to the user */
			continue;
		}
		if (renameat(ofd, de->d_name, dfd, de->d_name))
			rc = -1;
	}
	closedir(dp);
	close(dfd);
	return rc;
}

int npl_out_undo(const char *dir, const char *name, const char **why)
{
	char *stage = npl_out_join(dir, name), *path = npl_out_join(stage, NPL_OUT_JOURNAL), *j, *p;
	size_t len;
	int rc = 0;

	*why = NULL;
	j = npl_out_read_regular(path, &len);
	if (!j) {
		struct stat st;

		/* none: nothing was put in, or all of it was; the folder only goes */
		if (!lstat(path, &st) || errno != ENOENT) {
			*why = "its journal is not one npulaunch wrote";
			rc = -1;
		}
	} else if (!journal_valid(j, len)) {
		*why = "its journal is not one npulaunch wrote";
		rc = -1;
	} else if (put_back(dir, stage, j)) {
		*why = "an earlier file it keeps cannot be put back (the file in its place changed since)";
		rc = -1;
	} else {
		/* the names this run added: removed where they hold what it wrote */
		for (p = j; *p; p = strchr(p, '\n') + 1) {
			*strchr(p, '\n') = '\0';
			if (p[65] == '+' && holds(dir, p + 67, p)) {
				char *f = npl_out_join(dir, p + 67);

				unlink(f);
				free(f);
			}
			p[strlen(p)] = '\n';
		}
		unlink(path);
	}
	free(j);
	free(path);
	free(stage);
	return rc;
}
