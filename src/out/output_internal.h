/*
 * output_internal.h: what output.c (the set, the records, the check), output_commit.c (the
 * commit), output_keep.c (what a commit may remove), output_journal.c (the way back for a killed
 * one) and output_lock.c (who holds a lock) share. Included by those only.
 */
#ifndef NPL_OUTPUT_INTERNAL_H
#define NPL_OUTPUT_INTERNAL_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

/* The names of staging folders: whatever starts so in a folder a commit locked is a leftover. */
#define NPL_OUT_TMP_PREFIX ".npulaunch-tmp-"

/* The file that proves a staging folder this user's npulaunch's (output_keep.c): the commit
 * writes it first into each staging folder it makes; a folder whose name merely looks like one
 * is never removed. In a bundle's folder, it is one a killed run left there. */
#define NPL_OUT_MARKER ".npulaunch-stage"
#define NPL_OUT_MARKER_TEXT "npulaunch: a render's staging folder; the next render into this folder removes it\n"
/* Write the marker into dir, whole or not at all (an unnamed file linked in where the file
 * system has them): 0, or -1 with errno. */
int npl_out_mark(const char *dir);
/* 1 when dfd/name is a marker this user's npulaunch wrote: a regular file of this user, mode
 * 0600, one name (no hard link), and the marker's text exactly. */
int npl_out_marked(int dfd, const char *name);
/* 1 when dfd/name is a staging folder a run of this user left: named NPL_OUT_TMP_PREFIX..., a
 * folder (not a link) that holds the marker; or, as a run killed between making and marking it
 * leaves it, one named as this version names them (NPL_OUT_TMP_PREFIX PID-N), of this user,
 * mode 0700 and empty. */
int npl_out_ours_at(int dfd, const char *name);
/* Make the staging folder fd about to lose its marker as make_stage() makes them, this user's
 * and 0700, so that a run killed before the folder is gone leaves one npl_out_ours_at() knows. */
void npl_out_as_made(int fd);
/* Remove dfd/name, a staging folder, and all below it, its marker last. */
void npl_out_rm_tree_at(int dfd, const char *name);
/* Give the folder to exactly the extended attributes of the folder from, its ACLs with them
 * (system.posix_acl_access, system.posix_acl_default): 0, or -1 when one cannot be read or
 * set (a file system that keeps none, an attribute only a privileged process may set). */
int npl_out_copy_xattrs(const char *from, const char *to);
/* Give the folder to the file attributes (chattr: no atime updates, synchronous updates, ...)
 * the folder from has: 0, or -1 when they cannot be (then from stays, and is written in place;
 * so too an immutable or append-only one). */
int npl_out_copy_flags(const char *from, const char *to);
/* The paths other processes stand in or hold open, read from /proc when first needed. */
struct npl_out_uses {
	char **v;
	int n, cap, loaded;
};
/* 1 when another process works in dir or below (its working folder, a file it has open). */
int npl_out_in_use(struct npl_out_uses *u, const char *dir);
void npl_out_uses_release(struct npl_out_uses *u);
/* The journal of a bundle put in file by file (output_journal.c): written into its staging
 * folder before the first file goes in, removed once every bundle of the commit is in. A
 * staging folder a killed run left with its journal is undone before it is removed. */
#define NPL_OUT_JOURNAL ".npulaunch-journal"
#define NPL_OUT_JOURNAL_NEW NPL_OUT_JOURNAL ".new" /* while it is written */
struct npl_out_jentry {
	const char *name; /* the file's name in the bundle's folder */
	const char *text; /* its new bytes */
	size_t len;
	int existed; /* a file of that name is there, to be replaced */
};
/* Write the journal of the n files into stage, whole or not at all: 0, or -1 with errno. */
int npl_out_journal_write(const char *stage, const struct npl_out_jentry *v, int n);
/* The journal of the n files of s (indices files) to be put into their folder, staged in stage:
 * npl_out_journal_write() with each file's name, new bytes and whether it is there now. */
struct npl_outset;
int npl_out_journal_files(const char *stage, const struct npl_outset *s, const int *files, int n);
/* The commit is whole: stage's journal goes (0, or -1 with errno). */
int npl_out_journal_done(const char *stage);
/* Before dir/name, a staging folder a killed run left in dir, is removed: when it holds a
 * journal, the earlier files it kept go back into dir and the names the run added, still
 * holding the bytes it wrote, are removed. 0 when the folder may be removed now; -1, with why
 * it must stay in *why, when not. */
int npl_out_undo(const char *dir, const char *name, const char **why);
/* write(2) all n bytes of p (EINTR retried): 0, or -1 with errno. */
int npl_out_write_all(int fd, const char *p, size_t n);
/* What a bundle's manifest proves (npl_out_read_record). */
enum { NPL_REC_NONE, NPL_REC_OLD, NPL_REC_CHANGED, NPL_REC_TRUSTED };

/* strdup, or out of memory. */
char *npl_out_strdup(const char *s);
/* v with room for one more of n elements of size (capacity in *cap). */
void *npl_out_grow(void *v, int *cap, int n, size_t size);
/* dir/name (malloc'ed); no second slash after a dir that ends with one. */
char *npl_out_join(const char *dir, const char *name);
/* The folder of path: "." for a bare name, "/" for a name in the root (malloc'ed). */
char *npl_out_dir_of(const char *path);
/* The last component of path. */
const char *npl_out_base_of(const char *path);
/* strcmp of two char * elements, for qsort. */
int npl_out_namecmp(const void *a, const void *b);
/* A regular file's bytes, NUL-terminated, never through a symlink, never blocking on a FIFO;
 * NULL for anything else or a file too big to be one npulaunch wrote. */
char *npl_out_read_regular(const char *path, size_t *len);
/* The record of the bundle manifest at path, named name: its "files" member in *rec (the caller
 * deletes it). NPL_REC_TRUSTED when the manifest still has its own digest: then the record says
 * what npulaunch wrote; NPL_REC_CHANGED when not (the record only names files, for messages);
 * NPL_REC_OLD for a manifest of an npulaunch that kept no record; else NPL_REC_NONE (no record). */
int npl_out_read_record(const char *path, const char *name, cJSON **rec);
/* The process holding a flock on the file st describes (/proc/locks), or 0 when none is seen. */
pid_t npl_out_lock_holder(const struct stat *st);
/* The mount a path is on (statx's id, else name_to_handle_at's); -1 when neither says. */
long long npl_out_mount_of(const char *path);
/* 1 when pid is this process's parent, or its parent's, and so on. */
int npl_out_is_ancestor(pid_t pid);
/* 1 when rec records name with the digest of text (NULL text: 0). */
int npl_out_recorded(const cJSON *rec, const char *name, const char *text, size_t len);

/* A file a commit writes into a staging folder (output_write.c): a new file at path, created
 * exclusively, with text and mode; err and op say how it failed. */
struct npl_out_put {
	const char *path;
	const char *text;
	size_t len;
	int mode;
	int err;   /* errno of the failure; 0: written (or not reached) */
	int op;    /* what failed: NPL_OUT_PUT_CREATE, or NPL_OUT_PUT_WRITE (write, fchmod, close) */
	int folder; /* its folder's number: the files of one folder are together and in one thread */
};
enum { NPL_OUT_PUT_CREATE = 1, NPL_OUT_PUT_WRITE };
/* Write the n files, by jobs threads at once (at most 1 per 8 files and 1 per folder; jobs < 2:
 * this thread alone), the files of a folder all by one thread (files created in one folder at
 * once wait for each other on its lock in the kernel), with the catchable signals held
 * meanwhile (sigs, nsigs) so that no file appears after a signal handler has removed its
 * folder: a signal that comes stops the writing at the next file and is delivered on return.
 * The index of the first file that failed, in their order, or -1 when all were written. */
int npl_out_put_all(struct npl_out_put *v, int n, int jobs, const int *sigs, int nsigs);

#endif
