/*
 * output.h: sets of output files written atomically. Files are collected in
 * memory; npl_out_commit() writes each to a temporary name in its folder and
 * renames them all only when every one was written, so an error leaves no
 * partial file and no half-written bundle. npl_out_check() compares the set
 * with what is on disk instead (stale, missing and extra files). Included by
 * the render command and its tests.
 */
#ifndef NPL_OUTPUT_H
#define NPL_OUTPUT_H

#include <stdio.h>

#include "npulaunch/diag.h"

struct npl_outfile {
	char *path;
	char *text;
	size_t len;
	int mode;
};

struct npl_outset {
	struct npl_outfile *v;
	int n, cap;
	char **dirs;        /* folders whose extra files --check reports */
	int ndirs, capdirs;
};

/* Add a file (the set takes a copy of text). */
void npl_out_add(struct npl_outset *s, const char *path, const char *text, size_t len, int mode);
/* Declare a folder the set owns entirely: with check, files in it that the set lacks are extra. */
void npl_out_own_dir(struct npl_outset *s, const char *dir);
/* Write every file atomically; -1 and nothing written (or left behind) on error. */
int npl_out_commit(const struct npl_outset *s, struct npl_diag *d);
/* Compare with the disk; print "stale PATH", "missing PATH", "extra PATH" lines to fp; returns the number of differences. */
int npl_out_check(const struct npl_outset *s, FILE *fp);
/* Free the set. */
void npl_out_release(struct npl_outset *s);

#endif
