/*
 * rcache.h: the per-user cache of command results, so that a command run again on the same
 * inputs prints (and render writes) what it did last time without redoing the work.
 *
 * `list`, `show` and `render` are functions of their inputs: the binary (its GNU build id
 * covers the compiled-in recipes, templates and registry), the command line, the environment,
 * the current folder, which of the standard streams are terminals, the user, and the files
 * they read (recipe folders, site files, template folders). A run on a miss records every file
 * and folder it read or looked for (npl_rc_dep(), called by the one file reader, the folder
 * walk and the existence checks) with its stat data, and what it printed; a later run whose
 * key is the same and whose recorded files all still have those stat data (device, inode,
 * size, mode, mtime and ctime to the nanosecond; a folder's mtime changes when an entry is
 * added, removed or renamed) replays it. render caches its plan, the files it would write,
 * not their commit: writing, --check and the bundle's safety checks run every time.
 *
 * Only successful runs are kept (exit 0); a run that read a file changed within 2 s of its
 * start keeps nothing (a change in the same clock tick would not show: git's "racy" rule).
 * A damaged, foreign or stale entry is a miss, never an error. NPULAUNCH_CACHE=off turns it
 * off with the recipe cache (dbcache.h); NPULAUNCH_RESULT_CACHE=off turns off this one only.
 * Entries over 256 MiB are not kept; the folder keeps the 64 newest. Included by main.c, cmd_render.c and the modules
 * that read input files.
 */
#ifndef NPL_RCACHE_H
#define NPL_RCACHE_H

#include <stddef.h>
#include <sys/stat.h>

struct npl_outset;
struct npl_rc;

/* The cache entry of this command line (argv from the program's name on), looked up; NULL when
 * caching is off or impossible. */
struct npl_rc *npl_rc_open(int argc, char *const *argv);
/* 1 when the entry exists and every file it depends on is unchanged. */
int npl_rc_hit(const struct npl_rc *c);
/* A hit: the exit status the run had; its standard error (and output) printed again. */
int npl_rc_replay(struct npl_rc *c);
/* A hit of render: the files of the set (their texts stay the entry's until npl_rc_close()). */
void npl_rc_outset(struct npl_rc *c, struct npl_outset *set);
/* A miss: record the inputs read from now on and capture standard error (and output, when
 * out), until npl_rc_finish(). */
void npl_rc_record(struct npl_rc *c, int out);
/* Stop recording, print what was captured, and keep the result when status is 0 (set: render's
 * files, or NULL). */
void npl_rc_finish(struct npl_rc *c, int status, const struct npl_outset *set);
void npl_rc_close(struct npl_rc *c);

/* While recording: the run read or looked for path; st is what stat() says of it, NULL when
 * it does not exist. No-ops otherwise. */
void npl_rc_dep(const char *path, const struct stat *st);
/* While recording: the run did something whose result must not be kept. */
void npl_rc_uncacheable(void);
/* Reads that are not inputs (the caches' own files): 1 stops recording, 0 resumes it. */
void npl_rc_pause(int on);

#endif
