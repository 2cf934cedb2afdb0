/* output_commit.c: npl_out_commit(): staging, the locks, the swap, signals; see output.h. */
#define _GNU_SOURCE /* flock, syscall, O_NOFOLLOW, O_DIRECTORY */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "npulaunch/arena.h"
#include "npulaunch/fsio.h"
#include "npulaunch/output.h"
#include "npulaunch/strmap.h"
#include "output_internal.h"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/* ---- temporaries, and signals ------------------------------------------------------ */

/*
 * The paths a signal handler removes: folders made, staging folders and the files in them, in
 * the order they were made. A path is entered before it is created (removing one that is not
 * there yet is harmless), and the table only grows until the swap, which runs with the signals
 * blocked and empties it.
 */
static char *volatile *tmpv;
static volatile sig_atomic_t ntmp;
static int captmp;
static const int sigs[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM};

static void on_signal(int sig)
{
	sig_atomic_t i = ntmp;

	while (i-- > 0)
		if (unlink(tmpv[i]) != 0)
			rmdir(tmpv[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void tmp_add(char *path)
{
	if (ntmp >= captmp)
		npl_oom(); /* the table is sized before the first entry */
	tmpv[ntmp] = path;
	atomic_signal_fence(memory_order_seq_cst);
	ntmp++;
}

/* Take back the entry tmp_add() made last (a path that turned out not to be this run's). */
static void tmp_drop_last(void)
{
	ntmp--;
	atomic_signal_fence(memory_order_seq_cst);
}

static void signals_block(sigset_t *old)
{
	sigset_t set;
	size_t i;

	sigemptyset(&set);
	for (i = 0; i < sizeof(sigs) / sizeof(*sigs); i++)
		sigaddset(&set, sigs[i]);
	sigprocmask(SIG_BLOCK, &set, old);
}

/* ---- the commit ---------------------------------------------------------------------- */

struct unit {
	char *dir;	      /* the folder, as the files' paths name it */
	const char *manifest; /* a bundle's manifest name; NULL: loose files, none recorded */
	int *files, nfiles, capfiles; /* indices into the set */
	int exists;	      /* dir is a folder already */
	struct stat st;	      /* dir's, when it exists */
	int exchange;	      /* the staging folder becomes dir whole; else file by file */
	int marked;	      /* exchange: dir holds a marker this run wrote (its earlier self goes) */
	cJSON *record;	      /* what the earlier bundle recorded, when trusted */
	char **gone;	      /* its files that the new bundle lacks: removed */
	int ngone, capgone;
	char *stage;	    /* the staging folder */
	char *aside;	    /* file by file: stage/.old, the files replaced or removed */
	unsigned char *had; /* file by file: a file was there (now aside) */
	int landed, moved;  /* how far the swap got: for the way back */
};

struct lock {
	char *path;
	int fd;
	dev_t dev;
	ino_t ino;
};

struct commit {
	const struct npl_outset *s;
	struct npl_diag *d;
	struct unit *u;
	int nu, capu;
	struct lock *locks;
	int nlocks, caplocks;
	int waited;
	unsigned seq;
	struct sigaction old[sizeof(sigs) / sizeof(*sigs)];
	int installed[sizeof(sigs) / sizeof(*sigs)];
	mode_t umask;
	struct npl_out_uses uses; /* what other processes stand in (npl_out_in_use) */
};

static int find_file(const struct commit *c, const struct unit *u, const char *name)
{
	int i;

	for (i = 0; i < u->nfiles; i++)
		if (!strcmp(npl_out_base_of(c->s->v[u->files[i]].path), name))
			return u->files[i];
	return -1;
}

static int is_gone(const struct unit *u, const char *name)
{
	int i;

	for (i = 0; i < u->ngone; i++)
		if (!strcmp(u->gone[i], name))
			return 1;
	return 0;
}

/* The files by folder; a folder with a manifest is a bundle. The folders are found through a
 * hash map: render --all of 10,000 recipes has 10,000 of them and 35,000 files. */
static void group(struct commit *c)
{
	const struct npl_outset *s = c->s;
	struct npl_strmap units = NPL_STRMAP_INIT;
	struct npl_arena a;
	int i, j;

	npl_arena_init(&a);
	for (i = 0; i < s->n; i++) {
		char *dir = npl_out_dir_of(s->v[i].path);
		struct unit *u;

		if ((j = npl_strmap_get(&units, dir, strlen(dir))) >= 0) {
			u = &c->u[j];
			free(dir);
		} else {
			c->u = npl_out_grow(c->u, &c->capu, c->nu, sizeof(*c->u));
			u = &c->u[c->nu];
			memset(u, 0, sizeof(*u));
			u->dir = dir;
			npl_strmap_add(&units, &a, u->dir, strlen(u->dir), c->nu++);
		}
		u->files = npl_out_grow(u->files, &u->capfiles, u->nfiles, sizeof(*u->files));
		u->files[u->nfiles++] = i;
	}
	for (i = 0; i < s->nbundles; i++) {
		const char *dir = *s->bundles[i].dir ? s->bundles[i].dir : ".";

		if ((j = npl_strmap_get(&units, dir, strlen(dir))) >= 0)
			c->u[j].manifest = s->bundles[i].manifest;
	}
	npl_arena_release(&a);
}

/* ---- locks ------------------------------------------------------------------------- */

static int lock_cmp(const void *a, const void *b)
{
	const struct lock *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* The folders to lock: each bundle's and its parent (where it is staged), each loose file's. */
static int lock_wanted(const struct commit *c, struct lock **out)
{
	struct lock *v = NULL;
	int n = 0, cap = 0, i, j, k;

	for (i = 0; i < c->nu; i++)
		for (k = 0; k < 2; k++) {
			char *p = k ? npl_out_dir_of(c->u[i].dir) : npl_out_strdup(c->u[i].dir);
			struct stat st;

			if ((k && !c->u[i].manifest) || stat(p, &st) || !S_ISDIR(st.st_mode)) {
				free(p);
				continue;
			}
			v = npl_out_grow(v, &cap, n, sizeof(*v));
			v[n++] = (struct lock){p, -1, st.st_dev, st.st_ino};
		}
	/* in lock order, each folder once: sorted, not searched (every bundle names the parent) */
	if (n)
		qsort(v, (size_t)n, sizeof(*v), lock_cmp);
	for (i = j = 0; i < n; i++) {
		if (j && !lock_cmp(&v[j - 1], &v[i]))
			free(v[i].path);
		else
			v[j++] = v[i];
	}
	*out = v;
	return j;
}

static void unlock_all(struct commit *c)
{
	int i;

	for (i = 0; i < c->nlocks; i++) {
		if (c->locks[i].fd >= 0)
			close(c->locks[i].fd);
		free(c->locks[i].path);
	}
	c->nlocks = 0;
}

/* Lock every folder in one order (device, inode), so that two commits cannot wait for each
 * other; again until the folders are still those locked (another commit may have exchanged
 * one, or made one, while this one waited). A file system without flock goes unlocked. A
 * folder locked by a process this one runs under (`flock DIR npulaunch render -o DIR/deploy`)
 * would never be released: -1, said, instead of waiting forever. */
static int lock_all(struct commit *c)
{
	for (;;) {
		struct lock *want;
		int n = lock_wanted(c, &want), i, same = n == c->nlocks;

		for (i = 0; same && i < n; i++)
			same = want[i].dev == c->locks[i].dev && want[i].ino == c->locks[i].ino;
		if (same) {
			for (i = 0; i < n; i++)
				free(want[i].path);
			free(want);
			return 0;
		}
		unlock_all(c);
		free(c->locks);
		c->locks = want;
		c->nlocks = c->caplocks = n;
		for (i = 0; i < n; i++) {
			struct lock *l = &c->locks[i];
			struct stat st;
			pid_t holder;

			l->fd = open(l->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (l->fd < 0 || fstat(l->fd, &st))
				continue;
			l->dev = st.st_dev;
			l->ino = st.st_ino;
			if (flock(l->fd, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK)
				continue;
			if ((holder = npl_out_lock_holder(&st)) && npl_out_is_ancestor(holder))
				return npl_error(c->d, NULL, "'%s' is locked by process %ld, which runs this npulaunch "
						 "(flock DIR npulaunch ... -o DIR/...?): it would wait for itself forever; "
						 "lock another file, as flock DIR/.lock", l->path, (long)holder);
			if (!c->waited++ && c->s->waiting)
				c->s->waiting(l->path);
			while (flock(l->fd, LOCK_EX) && errno == EINTR)
				;
		}
	}
}

/* Remove the staging folders a killed run of this user left in the locked folders: only those
 * proved its own (npl_out_ours_at); one whose name merely looks like one stays. */
static void clean_locked(const struct commit *c)
{
	int i;

	for (i = 0; i < c->nlocks; i++) {
		DIR *dp = c->locks[i].fd >= 0 ? opendir(c->locks[i].path) : NULL;
		struct dirent *de;

		if (!dp)
			continue;
		while ((de = readdir(dp))) {
			const char *why;

			if (!npl_out_ours_at(dirfd(dp), de->d_name))
				continue;
			/* one killed while it put files in: those files out, the earlier ones back */
			if (npl_out_undo(c->locks[i].path, de->d_name, &why))
				npl_warn(c->d, NULL, "'%s/%s' is left as it is: %s", c->locks[i].path,
					 de->d_name, why);
			else
				npl_out_rm_tree_at(dirfd(dp), de->d_name);
		}
		closedir(dp);
	}
}

/* ---- what is there ------------------------------------------------------------------ */

/* A file of the new bundle where one is already: fine when it holds the new bytes already or
 * its recorded ones; else refused unless forced. Sets *foreign for what cannot be exchanged. */
static int survey_target(struct commit *c, struct unit *u, int fi, int state, const cJSON *names,
			 int *foreign)
{
	const struct npl_outfile *f = &c->s->v[fi];
	const char *name = npl_out_base_of(f->path), *why;
	struct stat st;
	char *text = NULL;
	size_t len = 0;
	int ok;

	if (lstat(f->path, &st))
		return 0;
	if (S_ISDIR(st.st_mode)) {
		*foreign = 1; /* the swap says what is wrong, file by file */
		return 0;
	}
	if (!u->manifest || c->s->force)
		return 0;
	if (S_ISREG(st.st_mode))
		text = npl_out_read_regular(f->path, &len);
	ok = text && len == f->len && !memcmp(text, f->text, len);
	if (!ok && state == NPL_REC_TRUSTED)
		ok = !strcmp(name, u->manifest) || npl_out_recorded(u->record, name, text, len);
	free(text);
	if (ok)
		return 0;
	if (cJSON_GetObjectItemCaseSensitive(names, name))
		why = "changed since npulaunch rendered it";
	else if (state == NPL_REC_OLD)
		why = "not in the record of this folder's manifest (an older npulaunch kept none)";
	else
		why = "not written by npulaunch";
	return npl_error(c->d, &(struct npl_loc){f->path, 0, 0},
			 "%s: render with --force to overwrite it", why);
}

/* A file of the earlier bundle that the new one lacks: removed when it is what was recorded;
 * else kept (never deleted: someone changed it, or it is not ours). */
static void survey_gone(struct commit *c, struct unit *u, const char *name, int *foreign)
{
	char *path = npl_out_join(u->dir, name), *text = NULL;
	struct stat st;
	size_t len = 0;
	int regular = !lstat(path, &st) && S_ISREG(st.st_mode);

	if (regular)
		text = npl_out_read_regular(path, &len);
	if (text && npl_out_recorded(u->record, name, text, len)) {
		u->gone = npl_out_grow(u->gone, &u->capgone, u->ngone, sizeof(*u->gone));
		u->gone[u->ngone++] = npl_out_strdup(name);
	} else {
		*foreign = 1;
		if (regular)
			npl_warn(c->d, &(struct npl_loc){path, 0, 0},
				 "kept: changed since npulaunch rendered it, and the new bundle "
				 "has no such file");
	}
	free(text);
	free(path);
}

/* Whether a folder that holds nothing but the bundle can be exchanged whole with a sibling. */
static int can_exchange(const struct unit *u)
{
	const char *base = npl_out_base_of(u->dir);
	struct stat lst, pst, cwd;
	char *parent;
	int ok;

	if (!*base || !strcmp(base, ".") || !strcmp(base, "..") || lstat(u->dir, &lst) ||
	    !S_ISDIR(lst.st_mode))
		return 0; /* the current folder, a parent, "/", or a symlink: kept as they are */
	if (!stat(".", &cwd) && cwd.st_dev == u->st.st_dev && cwd.st_ino == u->st.st_ino)
		return 0; /* the current folder by another name: a shell there would be lost */
	parent = npl_out_dir_of(u->dir);
	ok = !stat(parent, &pst) && pst.st_dev == u->st.st_dev && pst.st_ino != u->st.st_ino &&
	     npl_out_mount_of(parent) == npl_out_mount_of(u->dir);
	free(parent);
	return ok; /* not a mount point, not the root */
}

/* Under the locks: what is in the folder, what the earlier bundle recorded, what is refused,
 * and how the new files go in. */
static int survey(struct commit *c, struct unit *u)
{
	cJSON *names = NULL;
	char **olds = NULL;
	int foreign = 0, rc = 0, state = NPL_REC_NONE, i, nolds = 0, capolds = 0;
	struct dirent *de;
	DIR *dp;

	if (stat(u->dir, &u->st)) {
		if (errno != ENOENT)
			return npl_error(c->d, NULL, "cannot write into '%s': %s", u->dir, strerror(errno));
		u->exchange = 1; /* a bundle whose folder is not there yet: renamed into place */
		return 0;
	}
	if (!S_ISDIR(u->st.st_mode))
		return npl_error(c->d, NULL, "'%s' exists and is not a directory", u->dir);
	u->exists = 1;
	if (u->manifest) {
		char *m = npl_out_join(u->dir, u->manifest);

		state = npl_out_read_record(m, u->manifest, &names);
		free(m);
		if (state == NPL_REC_TRUSTED)
			u->record = names;
	}
	dp = opendir(u->dir);
	if (!dp) {
		cJSON_Delete(names);
		u->record = NULL;
		return npl_error(c->d, NULL, "cannot read '%s': %s", u->dir, strerror(errno));
	}
	while ((de = readdir(dp))) {
		const char *e = de->d_name;

		if (!strcmp(e, ".") || !strcmp(e, ".."))
			continue;
		if (npl_out_ours_at(dirfd(dp), e)) {
			const char *why; /* a staging folder a killed run left (clean_locked said why
					    one that cannot be undone stays) */

			if (npl_out_undo(u->dir, e, &why))
				foreign = 1;
			else
				npl_out_rm_tree_at(dirfd(dp), e);
		} else if (!strcmp(e, NPL_OUT_MARKER) && npl_out_marked(dirfd(dp), e)) {
			unlinkat(dirfd(dp), e, 0); /* a run killed in its swap left it */
		} else if (find_file(c, u, e) >= 0) {
			; /* below, in the set's order */
		} else if (u->record && cJSON_GetObjectItemCaseSensitive(u->record, e)) {
			olds = npl_out_grow(olds, &capolds, nolds, sizeof(*olds));
			olds[nolds++] = npl_out_strdup(e);
		} else {
			foreign = 1;
		}
	}
	closedir(dp);
	for (i = 0; i < u->nfiles; i++)
		rc |= survey_target(c, u, u->files[i], state, names, &foreign);
	if (nolds)
		qsort(olds, (size_t)nolds, sizeof(*olds), npl_out_namecmp);
	for (i = 0; i < nolds; i++) {
		survey_gone(c, u, olds[i], &foreign);
		free(olds[i]);
	}
	free(olds);
	if (names != u->record)
		cJSON_Delete(names);
	/* a process working in the folder keeps it: exchanged, its results would go with the old one */
	u->exchange = u->manifest && !foreign && can_exchange(u) && !npl_out_in_use(&c->uses, u->dir);
	return rc;
}

/* ---- staging ---------------------------------------------------------------------------- */

/* Create dir and its missing parents, each entered as a temporary (removed on failure). */
static int make_dirs(struct commit *c, const char *dir, char ***made, int *nmade)
{
	char *p, *s;
	int rc = 0;

	/* the usual case, one stat: it is there (render --all asks once per recipe) */
	if (npl_is_dir(dir))
		return 0;
	p = npl_out_strdup(dir);

	for (s = p + 1;; s++) {
		char ch;

		if (*s != '/' && *s != '\0')
			continue;
		ch = *s;
		*s = '\0';
		if (!npl_is_dir(p)) {
			char *q = npl_out_strdup(p);

			tmp_add(q);
			if (mkdir(p, 0755) != 0) {
				int e = errno;

				if (e == EEXIST && npl_is_dir(p)) {
					/* another render made it meanwhile: not this run's to remove */
					tmp_drop_last();
					free(q);
					*s = ch;
					if (!ch)
						break;
					continue;
				}
				if (e == EEXIST)
					rc = npl_error(c->d, NULL,
						       "'%s' exists and is not a directory", p);
				else
					rc = npl_error(c->d, NULL,
						       "cannot create directory '%s': %s", p,
						       strerror(e));
				break;
			}
			*made = npl_xrealloc(*made, (size_t)(*nmade + 1) * sizeof(**made));
			(*made)[(*nmade)++] = q;
		}
		*s = ch;
		if (!ch)
			break;
	}
	free(p);
	return rc;
}

/* A new staging folder in where: .npulaunch-tmp-PID-N, marked as this run's before anything
 * else goes in. */
static int make_stage(struct commit *c, struct unit *u, const char *where)
{
	char name[64];

	for (;;) {
		snprintf(name, sizeof(name), NPL_OUT_TMP_PREFIX "%ld-%u", (long)getpid(), c->seq++);
		u->stage = npl_out_join(where, name);
		tmp_add(u->stage);
		if (mkdir(u->stage, 0700) == 0) {
			tmp_add(npl_out_join(u->stage, NPL_OUT_MARKER));
			return npl_out_mark(u->stage);
		}
		if (errno != EEXIST)
			return -1;
		ntmp--; /* taken: that one is not ours */
		free(u->stage);
		u->stage = NULL;
	}
}

/* The staging folder that becomes the bundle's folder whole takes what the folder is: its mode,
 * its owner, its extended attributes and ACLs (were they dropped, the ACL mask would turn into
 * the owning group's bits, write among them), its file attributes (chattr). -1 when the
 * attributes cannot be given to it. */
static int stage_folder(struct commit *c, struct unit *u)
{
	if (!u->exists) {
		chmod(u->stage, 0755 & ~c->umask);
		return 0;
	}
	/* root rendering into someone's folder leaves it theirs */
	if (geteuid() == 0 && chown(u->stage, u->st.st_uid, u->st.st_gid))
		npl_warn(c->d, NULL, "'%s' is now owned by root: %s", u->dir, strerror(errno));
	if (npl_out_copy_xattrs(u->dir, u->stage) || npl_out_copy_flags(u->dir, u->stage))
		return -1;
	chmod(u->stage, u->st.st_mode & 07777); /* with an ACL: its mask, as it was */
	return 0;
}

/* File by file: what is about to go in, written into the staging folder for the way back
 * should the run be killed while the files go in (output_journal.c). */
static int journal(struct commit *c, struct unit *u)
{
	tmp_add(npl_out_join(u->stage, NPL_OUT_JOURNAL_NEW));
	tmp_add(npl_out_join(u->stage, NPL_OUT_JOURNAL));
	return npl_out_journal_files(u->stage, c->s, u->files, u->nfiles);
}

/* Make the unit's staging folder: beside the bundle's folder when it is to be exchanged (or
 * renamed) whole, in the folder itself when it goes in file by file; each file's name in it
 * into puts (its place in the temporaries taken before it is written). */
static int stage_open(struct commit *c, struct unit *u, struct npl_out_put *puts)
{
	const struct npl_outset *s = c->s;
	char *parent = npl_out_dir_of(u->dir);
	int i, rc = make_stage(c, u, u->exchange ? parent : u->dir);

	if (rc && u->exchange && u->exists &&
	    (errno == EACCES || errno == EPERM || errno == EROFS)) {
		u->exchange = 0; /* the parent is not ours to write: in the folder itself */
		rc = make_stage(c, u, u->dir);
	}
	if (!rc && u->exchange && stage_folder(c, u)) {
		/* attributes another folder cannot take: the folder stays, the files go in one by one */
		npl_out_rm_tree_at(AT_FDCWD, u->stage);
		u->exchange = 0;
		rc = make_stage(c, u, u->dir);
	}
	free(parent);
	if (rc)
		return npl_error(c->d, NULL, "cannot create a file next to '%s': %s",
				 s->v[u->files[0]].path, strerror(errno));
	for (i = 0; i < u->nfiles; i++) {
		const struct npl_outfile *f = &s->v[u->files[i]];
		char *p = npl_out_join(u->stage, npl_out_base_of(f->path));

		tmp_add(p);
		puts[i] = (struct npl_out_put){p, f->text, f->len, f->mode, 0, 0, (int)(u - c->u)};
	}
	return 0;
}

/* Write every unit's files into its staging folder (on as many CPUs as the set says), then the
 * journal of each that goes in file by file. */
static int stage_all(struct commit *c)
{
	const struct npl_outset *s = c->s;
	struct npl_out_put *puts = npl_xcalloc((size_t)s->n + 1, sizeof(*puts));
	int i, k, n = 0, rc = 0, bad;

	for (i = 0; i < c->nu && !rc; i++) {
		rc = stage_open(c, &c->u[i], puts + n);
		n += rc ? 0 : c->u[i].nfiles;
	}
	if (!rc && (bad = npl_out_put_all(puts, n, s->jobs, sigs, (int)(sizeof(sigs) / sizeof(*sigs)))) >= 0) {
		/* the set's path of the file that failed: its unit's, in the same order */
		for (i = 0, k = bad; k >= c->u[i].nfiles; k -= c->u[i++].nfiles)
			;
		errno = puts[bad].err;
		rc = npl_error(c->d, NULL,
			       puts[bad].op == NPL_OUT_PUT_CREATE ? "cannot create a file next to '%s': %s"
								  : "cannot write '%s': %s",
			       s->v[c->u[i].files[k]].path, strerror(errno));
	}
	free(puts);
	for (i = 0; i < c->nu && !rc; i++)
		if (!c->u[i].exchange && journal(c, &c->u[i]))
			rc = npl_error(c->d, NULL, "cannot create a file next to '%s': %s",
				       s->v[c->u[i].files[0]].path, strerror(errno));
	return rc;
}

/* ---- the swap (signals blocked) ---------------------------------------------------------- */

static int exchange(const char *a, const char *b)
{
#ifdef SYS_renameat2
	return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
#else
	(void)a;
	(void)b;
	errno = ENOSYS;
	return -1;
#endif
}

/* File by file: each earlier file kept aside (a hard link, or moved) until the commit is whole. */
static int land_files(struct commit *c, struct unit *u)
{
	int k;

	u->aside = npl_out_join(u->stage, ".old");
	if (mkdir(u->aside, 0700))
		return npl_error(c->d, NULL, "cannot create a file next to '%s': %s",
				 c->s->v[u->files[0]].path, strerror(errno));
	u->had = npl_xcalloc((size_t)u->nfiles, 1);
	for (k = 0; k < u->nfiles; k++) {
		const char *target = c->s->v[u->files[k]].path, *name = npl_out_base_of(target);
		char *staged = npl_out_join(u->stage, name), *kept = npl_out_join(u->aside, name);
		struct stat st;
		int rc = 0, linked = 0;

		if (!lstat(target, &st)) {
			if (S_ISDIR(st.st_mode)) {
				errno = EISDIR;
				rc = npl_error(c->d, NULL, "cannot rename into '%s': %s", target,
					       strerror(errno));
			} else if (!(linked = !link(target, kept)) && rename(target, kept)) {
				rc = npl_error(c->d, NULL, "cannot keep the old '%s' aside: %s",
					       target, strerror(errno));
			} else {
				u->had[k] = 1;
			}
		}
		if (!rc && rename(staged, target)) {
			rc = npl_error(c->d, NULL, "cannot rename into '%s': %s", target,
				       strerror(errno));
			if (u->had[k] && (linked ? unlink(kept) : rename(kept, target)) == 0)
				u->had[k] = 0;
		}
		free(staged);
		free(kept);
		if (rc)
			return rc;
		u->landed++;
	}
	for (k = 0; k < u->ngone; k++, u->moved++) {
		char *from = npl_out_join(u->dir, u->gone[k]),
		     *to = npl_out_join(u->aside, u->gone[k]);
		int rc = rename(from, to) ? npl_error(c->d, NULL, "cannot remove '%s': %s", from,
						      strerror(errno))
					  : 0;

		free(from);
		free(to);
		if (rc)
			return rc;
	}
	return 0;
}

/* Remove the marker from dir, the bundle's folder (NULL dir: the unit's). */
static void unmark(const struct unit *u, const char *dir)
{
	char *m = npl_out_join(dir ? dir : u->dir, NPL_OUT_MARKER);

	unlink(m);
	free(m);
}

/* A bundle staged beside its folder that cannot be exchanged goes in file by file: its files
 * are moved into a staging folder in the folder itself (renames on one file system), which gets
 * the journal a killed landing is undone by (the leftover sweep finds it where the files go). */
static int restage(struct commit *c, struct unit *u)
{
	char *old = u->stage;
	int i;

	u->exchange = 0;
	if (make_stage(c, u, u->dir)) {
		u->stage = old;
		u->exchange = 1;
		return npl_error(c->d, NULL, "cannot create a file next to '%s': %s", c->s->v[u->files[0]].path,
				 strerror(errno));
	}
	for (i = 0; i < u->nfiles; i++) {
		const char *name = npl_out_base_of(c->s->v[u->files[i]].path);
		char *from = npl_out_join(old, name), *to = npl_out_join(u->stage, name);
		int rc = rename(from, to);

		free(from);
		free(to);
		if (rc) {
			rc = npl_error(c->d, NULL, "cannot rename into '%s': %s", u->dir, strerror(errno));
			npl_out_rm_tree_at(AT_FDCWD, u->stage);
			u->stage = old;
			u->exchange = 1;
			return rc;
		}
	}
	npl_out_rm_tree_at(AT_FDCWD, old);
	if (journal(c, u))
		return npl_error(c->d, NULL, "cannot create a file next to '%s': %s", c->s->v[u->files[0]].path,
				 strerror(errno));
	return 0;
}

static int land(struct commit *c, struct unit *u)
{
	if (u->exchange && !u->exists) {
		if (rename(u->stage, u->dir))
			return npl_error(c->d, NULL, "cannot rename into '%s': %s", u->dir,
					 strerror(errno));
		unmark(u, NULL);
		u->landed = 1;
		return 0;
	}
	if (u->exchange) {
		/* the folder's earlier self, under the staging name once exchanged, is marked first:
		   a run killed before finish() emptied it leaves it to the next run to remove */
		u->marked = !npl_out_mark(u->dir);
		if (!exchange(u->stage, u->dir)) {
			unmark(u, NULL); /* the staging folder's own, now in the bundle's folder */
			u->landed = 1;
			return 0;
		}
		if (u->marked)
			unmark(u, NULL);
		u->marked = 0;
		if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP && errno != ENOTSUP &&
		    errno != EPERM)
			return npl_error(c->d, NULL, "cannot rename into '%s': %s", u->dir,
					 strerror(errno));
		/* no exchange here: file by file, staged again in the folder itself with a journal */
		if (restage(c, u))
			return -1;
	}
	return land_files(c, u);
}

/* Put back what land() did; 1 when something could not be (then the staging folder stays). */
static int unland(struct commit *c, struct unit *u)
{
	int stuck = 0, k;

	if (u->exchange) {
		if (u->landed)
			stuck = u->exists ? exchange(u->stage, u->dir) != 0
					  : rename(u->dir, u->stage) != 0;
		if (!stuck && u->marked)
			unmark(u, NULL); /* the earlier self is back, without the mark */
		u->landed = u->marked = 0;
		return stuck;
	}
	for (k = u->moved - 1; k >= 0; k--) {
		char *from = npl_out_join(u->aside, u->gone[k]),
		     *to = npl_out_join(u->dir, u->gone[k]);

		stuck |= rename(from, to) != 0;
		free(from);
		free(to);
	}
	for (k = u->landed - 1; k >= 0; k--) {
		const char *target = c->s->v[u->files[k]].path;
		char *kept = npl_out_join(u->aside, npl_out_base_of(target));

		stuck |= (u->had[k] ? rename(kept, target) : unlink(target)) != 0;
		free(kept);
	}
	u->landed = u->moved = 0;
	return stuck;
}

/* A staging folder that holds earlier files which could not be put back: renamed out of the
 * way of the next commit, which would remove it as a leftover. */
static void keep_stage(struct commit *c, struct unit *u)
{
	char *dir = npl_out_dir_of(u->stage), *kept;
	const char *base = npl_out_base_of(u->stage) + strlen(NPL_OUT_TMP_PREFIX);
	size_t n = strlen(base) + 32;
	char *name = npl_xmalloc(n);

	snprintf(name, n, ".npulaunch-kept-%s", base);
	kept = npl_out_join(dir, name);
	npl_warn(c->d, NULL, "'%s' holds earlier files of '%s' that could not be put back",
		 rename(u->stage, kept) ? u->stage : kept, u->dir);
	free(kept);
	free(name);
	free(dir);
}

/* After a whole commit: remove what was replaced. An exchanged folder's earlier self holds only
 * the earlier bundle; anything else found there (made while this run looked away) goes back. */
static void finish(struct commit *c, struct unit *u)
{
	struct dirent *de;
	DIR *dp;
	int stuck = 0;

	if (!u->exchange) {
		npl_out_rm_tree_at(AT_FDCWD, u->stage);
		return;
	}
	if (!u->exists)
		return;
	dp = opendir(u->stage);
	if (!dp)
		return;
	while ((de = readdir(dp))) {
		const char *e = de->d_name;
		char *back;

		if (!strcmp(e, ".") || !strcmp(e, "..") || (u->marked && !strcmp(e, NPL_OUT_MARKER)))
			continue; /* the mark goes last */
		if ((find_file(c, u, e) >= 0 || is_gone(u, e)) && !unlinkat(dirfd(dp), e, 0))
			continue;
		back = npl_out_join(u->dir, e);
		stuck |= renameat(dirfd(dp), e, AT_FDCWD, back) != 0;
		free(back);
	}
	if (u->marked && !stuck)
		npl_out_as_made(dirfd(dp));
	closedir(dp);
	if (u->marked)
		unmark(u, u->stage);
	if (stuck || rmdir(u->stage))
		keep_stage(c, u);
}

/* ---- the commit, and the check ----------------------------------------------------------- */

static void signals_install(struct commit *c)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(*sigs); i++)
		sigaddset(&sa.sa_mask, sigs[i]);
	for (i = 0; i < sizeof(sigs) / sizeof(*sigs); i++) {
		/* an ignored signal stays ignored (nohup, a background job) */
		if (sigaction(sigs[i], NULL, &c->old[i]) || c->old[i].sa_handler == SIG_IGN)
			continue;
		c->installed[i] = !sigaction(sigs[i], &sa, NULL);
	}
}

static void signals_restore(struct commit *c)
{
	size_t i;

	for (i = 0; i < sizeof(sigs) / sizeof(*sigs); i++)
		if (c->installed[i])
			sigaction(sigs[i], &c->old[i], NULL);
}

static void release_units(struct commit *c)
{
	int i, k;

	for (i = 0; i < c->nu; i++) {
		struct unit *u = &c->u[i];

		for (k = 0; k < u->ngone; k++)
			free(u->gone[k]);
		free(u->gone);
		free(u->dir);
		free(u->files);
		free(u->aside);
		free(u->had);
		cJSON_Delete(u->record);
	}
	free(c->u);
}

int npl_out_commit(const struct npl_outset *s, struct npl_diag *d)
{
	struct commit c;
	sigset_t old;
	char **made = NULL;
	int nmade = 0, i, k, rc = 0, errors = d->errors;
	char *volatile *table;

	if (!s->n)
		return 0;
	memset(&c, 0, sizeof(c));
	c.s = s;
	c.d = d;
	c.umask = umask(0);
	umask(c.umask);
	group(&c);
	/* the temporaries: every folder of every path made, a staging folder per unit, its files */
	captmp = s->n + 2 * c.nu;
	for (i = 0; i < c.nu; i++)
		for (k = 0; c.u[i].dir[k]; k++)
			captmp += c.u[i].dir[k] == '/';
	captmp += 6 * c.nu + 8; /* and each staging folder's marker and journal: a second folder when one
				 falls back */
	table = npl_xcalloc((size_t)captmp, sizeof(*table));
	tmpv = table;
	ntmp = 0;
	signals_install(&c);
	for (i = 0; i < c.nu && !rc; i++) {
		char *dir =
		    c.u[i].manifest ? npl_out_dir_of(c.u[i].dir) : npl_out_strdup(c.u[i].dir);

		rc = make_dirs(&c, dir, &made, &nmade);
		free(dir);
	}
	if (!rc)
		rc = lock_all(&c); /* when it fails, the folders made are removed below */
	if (!rc) {
		clean_locked(&c);
		for (i = 0; i < c.nu; i++)
			rc |= survey(&c, &c.u[i]);
		rc = rc || d->errors > errors ? -1 : 0;
	}
	if (!rc)
		rc = stage_all(&c);
	signals_block(&old);
	for (i = 0; i < c.nu && !rc; i++)
		rc = land(&c, &c.u[i]);
	if (rc) {
		/* back to how it was, the staging folders and the folders made removed */
		for (k = c.nu - 1; k >= 0; k--) {
			if (k < i && unland(&c, &c.u[k]))
				keep_stage(&c, &c.u[k]);
			else if (c.u[k].stage && !npl_out_journal_done(c.u[k].stage))
				npl_out_rm_tree_at(AT_FDCWD, c.u[k].stage);
		}
		for (k = nmade - 1; k >= 0; k--)
			rmdir(made[k]);
	} else {
		/* the commit is whole: no way back from here (a run killed now leaves it new) */
		for (i = 0; i < c.nu; i++)
			if (!c.u[i].exchange)
				npl_out_journal_done(c.u[i].stage);
		for (i = 0; i < c.nu; i++)
			finish(&c, &c.u[i]);
	}
	ntmp = 0;
	atomic_signal_fence(memory_order_seq_cst);
	sigprocmask(SIG_SETMASK, &old, NULL);
	signals_restore(&c);
	unlock_all(&c);
	free(c.locks);
	for (i = 0; i < captmp; i++)
		free(table[i]);
	free((void *)table);
	tmpv = NULL;
	free(made);
	npl_out_uses_release(&c.uses);
	release_units(&c);
	return rc;
}
