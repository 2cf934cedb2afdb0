/*
 * diag.h: layer base. Diagnostics. Modules never print or exit: they record a located
 * message here and return -1 (or NULL). Commands print the collected messages
 * as `npulaunch: FILE:LINE:COL: error: MESSAGE`, followed by the source line
 * and a caret when the file's text is known: file names, messages and source
 * lines escaped for the terminal (text.h's npl_escape()), a long message cut in
 * its middle, a long source line shown as a window around the column, and at
 * most NPL_DIAG_SHOWN messages per flush. The diag keeps its own copy of
 * every file name it is given; the texts given to npl_diag_source() must
 * outlive it. A message identical to one already recorded (same severity,
 * place and text: every instance and node of a role resolves the same flags)
 * is recorded once: the entries and the counts are distinct problems, in the
 * order they first appeared. A warning of a group is printed once per run, the others
 * of its group counted in one line; with quiet set, only errors are printed. Included by every
 * module.
 */
#ifndef NPL_DIAG_H
#define NPL_DIAG_H

#include <stdarg.h>
#include <stdio.h>

enum npl_severity {
	NPL_NOTE,
	NPL_WARNING,
	NPL_ERROR,
};

/* A place in an input file; lines and columns count from 1, file NULL = nowhere. */
struct npl_loc {
	const char *file;
	int line, col;
};

struct npl_diag_entry {
	enum npl_severity sev;
	struct npl_loc loc;
	char *msg;
	char *group;            /* a kind of message said once per run (npl_warn_grouped()), or NULL */
	char *label;            /* what this one is about, in the line that counts the others */
};

/* A kind of message, said once: how many more there were, and about what. */
struct npl_diag_group {
	char *key;
	enum npl_severity sev;  /* of its messages */
	int shown;              /* the first of the kind was printed */
	int more;               /* others since the last count was printed */
	char *labels;           /* theirs, comma-separated */
};

/* A file name the diag has seen, and its text when known (for carets). */
struct npl_diag_name {
	char *name;
	const char *text;
	size_t *marks;          /* where lines 1, 65, 129, ... start, once a caret needs them */
	int nmarks;
	int at_line, at_col;    /* the place of the last caret, at byte at_off: the next one walks */
	size_t at_off;          /* on from there when it is further on the same line */
};

struct npl_diag {
	struct npl_diag_entry *v;
	int n, cap;
	int printed;            /* entries already flushed */
	int errors, warnings;   /* distinct problems */
	int repeats;            /* messages dropped as repeats of a recorded one */
	int no_caret;           /* print without the source line and caret */
	struct npl_diag_name *names;   /* copies of the file names in locations */
	int nnames, capnames;
	int *slots;             /* open-addressing hash of names: index + 1, 0 = empty */
	int nslots;
	int *eslots;            /* open-addressing hash of the entries: index + 1, 0 = empty */
	int neslots;
	struct npl_diag_group *groups;
	int ngroups, capgroups;
	int quiet;              /* flush prints errors only (--quiet); the counts stay */
	int hold;               /* flush prints nothing and marks where it was (npl_diag_replay) */
	int *marks;             /* held: the count of entries at each flush, in order */
	int nmarks, capmarks;
};

#define NPL_DIAG_INIT {0}

/* The most messages one npl_diag_flush() prints; it counts the rest in one line. */
#define NPL_DIAG_SHOWN 100

/* Record a message; loc may be NULL. A repeat of a recorded message is dropped (and counted in
 * repeats). */
void npl_diag_add(struct npl_diag *d, enum npl_severity sev, const struct npl_loc *loc,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Record a message from a va_list. */
void npl_diag_vadd(struct npl_diag *d, enum npl_severity sev, const struct npl_loc *loc,
		   const char *fmt, va_list ap);
/* Record a message of a kind (group) that a run says once: a flush prints the first of each
 * group, then one line counting the others with their labels (recipe ids). */
void npl_diag_grouped(struct npl_diag *d, enum npl_severity sev, const struct npl_loc *loc, const char *group,
		      const char *label, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Print, for each group, the line that counts the messages flushes held back (at the end of a run). */
void npl_diag_flush_groups(struct npl_diag *d, FILE *fp);
/* Record an error and return -1, for `return npl_error(...)`. */
int npl_error(struct npl_diag *d, const struct npl_loc *loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Record a warning. */
void npl_warn(struct npl_diag *d, const struct npl_loc *loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Make the text of a file known, for source lines under located messages. */
void npl_diag_source(struct npl_diag *d, const char *name, const char *text);
/* Print the messages not printed yet, each prefixed with "npulaunch: ". */
void npl_diag_flush(struct npl_diag *d, FILE *fp);
/* Record from's entries in d, in their order, as if they had been recorded in d (a repeat of one
 * d holds is dropped), and flush d to fp where from (held) was flushed; from's repeats are added
 * to d's. Work done apart (render --all's workers) reports as if it had been done in turn. */
void npl_diag_replay(struct npl_diag *d, const struct npl_diag *from, FILE *fp);
/* Format one entry (without the program prefix) into a malloc'ed string. */
char *npl_diag_format(const struct npl_diag *d, const struct npl_diag_entry *e, int caret);
/* Free every message. */
void npl_diag_release(struct npl_diag *d);

#endif
