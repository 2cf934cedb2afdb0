/*
 * output.h: layer out. Sets of output files, written whole or not at all. Files are collected in memory;
 * npl_out_commit() writes them and npl_out_check() compares them with the disk instead (stale,
 * edited, missing and extra files). Included by the render command and its tests.
 *
 * A folder given a manifest with npl_out_add_manifest() is a bundle: the manifest records every
 * file of it by sha256, itself included, so that the next commit knows what npulaunch wrote
 * there. A commit then removes the files of the earlier bundle that the new one lacks (only
 * those whose sha256 is still the recorded one), keeps every other file, and refuses (unless
 * forced) to overwrite a file changed since it was rendered or not written by npulaunch.
 *
 * A commit is whole or nothing: every file is written into a staging folder first. A bundle
 * folder that holds nothing but the bundle is then exchanged with its staging folder in one
 * rename (renameat2 RENAME_EXCHANGE); any other folder (the user's files in it, the current
 * folder, a mount point, a symlink, a file system without the exchange) is updated file by file
 * with the earlier files kept aside until every rename succeeded. SIGHUP, SIGINT, SIGQUIT and
 * SIGTERM are blocked while folders and files are swapped; before that, a signal removes the
 * staging folders and ends the process as it would have. Staging folders are named
 * .npulaunch-tmp-*; one left by a killed run (or a temporary of an older npulaunch) is removed
 * by the next commit into that folder. Commits into one folder are serialised by flock() on the
 * folder and its parent.
 */
#ifndef NPL_OUTPUT_H
#define NPL_OUTPUT_H

#include <stdio.h>

#include "npulaunch/arena.h"
#include "npulaunch/diag.h"

struct npl_outfile {
	char *path;
	char *text;
	size_t len;
	int mode;
};

struct npl_outbundle {
	char *dir;          /* the folder, as the files' paths name it ("" for bare names) */
	char *manifest;     /* the manifest's name in it */
};

struct npl_outset {
	struct npl_outfile *v;
	int n, cap;
	char **dirs;        /* folders whose extra files --check reports */
	int ndirs, capdirs;
	char **runs;        /* DIR, PATTERN, ...: what a bundle's own programs write there (not extra) */
	int nruns, capruns;
	struct npl_outbundle *bundles;
	int nbundles, capbundles;
	int *pending;       /* the files no manifest has recorded yet, in the order added */
	int npending, cappending;
	int force;          /* commit: overwrite files changed since rendered or not written by npulaunch */
	int jobs;           /* commit: the files written on this many CPUs at once (0, 1: in turn) */
	void (*waiting)(const char *dir); /* commit: called (once) before it waits for another's lock */
	struct npl_arena texts;   /* the files' texts, held until the set is released */
	struct npl_arena *text_arena; /* where npl_out_add() keeps them instead (NULL: texts) */
};

/* Add a file (the set takes a copy of text). */
void npl_out_add(struct npl_outset *s, const char *path, const char *text, size_t len, int mode);
/* Add dir's manifest, named name: json (a JSON object's text) with a last member "files" that
 * records {"NAME": {"sha256": HEX}} for every file of the set directly in dir added before it
 * (and not recorded by an earlier manifest of dir),
 * and for the manifest itself (its digest taken with its own HEX as 64 zeros); dir becomes a
 * bundle. */
void npl_out_add_manifest(struct npl_outset *s, const char *dir, const char *name, const char *json);
/* Move from's files, bundles, folders and texts behind to's, as if they had been added to to in
 * turn (from is left empty); -1, and nothing moved, when that would differ: a manifest of from
 * whose folder holds a file of to that no manifest of to has recorded. */
int npl_out_merge(struct npl_outset *to, struct npl_outset *from);
/* Declare a folder the set owns entirely: with check, files in it that the set lacks are extra. */
void npl_out_own_dir(struct npl_outset *s, const char *dir);
/* Declare what the programs of the bundle in dir write there when they run (an fnmatch pattern of
 * a name directly in dir: "*.jsonl", "logs"): check does not count them as extra. */
void npl_out_run_output(struct npl_outset *s, const char *dir, const char *pattern);
/* Write every file (see above); -1 and nothing written, removed or left behind on error. */
int npl_out_commit(const struct npl_outset *s, struct npl_diag *d);
/* Compare with the disk; print "stale PATH" (as rendered, out of date), "edited PATH" (changed
 * since rendered, or not written by npulaunch), "missing PATH", "extra PATH" lines to fp;
 * returns the number of differences. */
int npl_out_check(const struct npl_outset *s, FILE *fp);
/* Free the set. */
void npl_out_release(struct npl_outset *s);

#endif
