/*
 * tune_internal.h: private to tune.c, confine.c and journal.c, the three pieces of host tuning:
 * what they share and no other module needs. confine.c holds the one way to a host file under
 * the root (npl_tune_host_open() and the readers and writers over it), journal.c finds, reads
 * and writes the journal, tune.c collects, applies, undoes and reverts. What the commands, the
 * tests and the journal's fuzzer use is in npulaunch/tune.h.
 */
#ifndef NPL_TUNE_INTERNAL_H
#define NPL_TUNE_INTERNAL_H

#include <stddef.h>
#include <sys/types.h>

#include "npulaunch/buf.h"
#include "npulaunch/diag.h"
#include "npulaunch/tune.h"

struct stat;

#define MAX_FILE (1 << 20)          /* a tuning file larger than this is not one */
#define CPUDIR "sys/devices/system/cpu"
#define CPUDIR_LEN (sizeof(CPUDIR) - 1)

/* How npl_tune_host_open() checks what it opened (see there). */
enum { KIND_CHECK, KIND_KNOWN, KIND_READ };

/* ---- confine.c -------------------------------------------------------------------------- */

/* root followed by the formatted text (malloc'ed). */
char *npl_tune_path_of(const char *root, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 1 when s[0..n) is a plain path component or name: no "." or "..", no odd characters. */
int npl_tune_comp_ok(const char *s, size_t n);
/* Open the tuning file rel (relative to the root; O_DIRECTORY: the CPU folder) beneath t's root,
 * confined: the descriptor, or -1 with errno set and why filled when confinement refused. */
int npl_tune_host_open(struct npl_tune *t, const char *rel, int flags, int kind, char **resolved,
		       struct stat *st, char *why, size_t whysz);
/* Replace the tuning file rel, checked earlier, with data; -1 with errno (and why) set. */
int npl_tune_host_write(struct npl_tune *t, const char *rel, const char *data, size_t len, char *why,
			size_t whysz);
/* A tuning file's contents (read only), or NULL with errno (and why) set. */
char *npl_tune_host_read(struct npl_tune *t, const char *rel, size_t *len, char *why, size_t whysz);
/* Open t's root as a folder into t->rootfd; -1 reported. */
int npl_tune_open_root(struct npl_tune *t, struct npl_diag *d);
/* The root as kept in struct npl_tune: "" for /, no trailing slash (malloc'ed). */
char *npl_tune_norm_root(const char *root);
/* Read all of fd (a regular file of size hint), at most limit bytes; NULL with errno set (EFBIG: too large). */
char *npl_tune_read_all(int fd, off_t hint, size_t limit, size_t *len);
/* Write all of data to fd; -1 with errno set. */
int npl_tune_write_all(int fd, const char *data, size_t len);

/* ---- journal.c -------------------------------------------------------------------------- */

/* The journal's folder (created when create is set) as a descriptor, its file name there in
 * *name and O_NOFOLLOW or 0 in *nofollow; -1 with errno (0: reported). */
int npl_tune_journal_dir(struct npl_tune *t, const char *journal, int create, const char **name,
			 int *nofollow, struct npl_diag *d);
/* Read and validate the journal: 1 when there is none, 0 with *j filled, -1 reported. */
int npl_tune_journal_load(struct npl_tune *t, int dfd, const char *name, int nofollow, const char *jpath,
			  struct npl_tune_journal *j, struct npl_diag *d);
/* Write text as the journal, through a new file renamed into place; -1 reported. */
int npl_tune_journal_store(int dfd, const char *name, const char *text, size_t len, const char *jpath,
			   struct npl_diag *d);
/* Append an entry (the file's bytes in base64) to the journal's text j; first: the list's first. */
void npl_tune_journal_entry(struct npl_buf *j, int first, const char *name, const char *path, const char *data,
			    size_t len);

/* Append a service entry (a unit stopped, and its state before) to the journal's text j. */
void npl_tune_journal_service(struct npl_buf *j, int first, const char *unit, const char *state);

/* ---- tune_service.c --------------------------------------------------------------------- */

/* 1 when unit is one tuning may stop and start (irqbalance.service). */
int npl_tune_service_known(const char *unit);
/* The root's systemctl (malloc'ed), or NULL when it has none. */
char *npl_tune_systemctl(const char *root);
/* Run TOOL VERB UNIT (is-active: *state set to "active" or "inactive"; stop, start); -1 reported. */
int npl_tune_service(const char *tool, const char *verb, const char *unit, const char **state, struct npl_diag *d);

#endif
