/*
 * tune.h: host tuning without shelling out: the cpufreq governor of every
 * online CPU and the sysctls a plan's tuning names, every path under a root
 * prefix (tests and containers use a fake tree). npl_tune_collect() reads
 * what is there and checks it can be changed (a governor the CPU does not
 * offer, a sysctl that exists at none of its paths, a file that cannot be
 * opened for writing: errors before anything changes; no cpufreq at all: a
 * warning). npl_tune_apply() journals the previous contents atomically before
 * the first change, changes what differs, and on a failure part-way puts
 * back what it changed; npl_tune_revert() restores the journal byte for byte
 * and removes it. Included by the tune and apply commands and their tests.
 */
#ifndef NPL_TUNE_H
#define NPL_TUNE_H

#include <cjson/cJSON.h>

#include "npulaunch/diag.h"

/* Where the journal lives under the root: tuning does not survive a reboot, nor does /run. */
#define NPL_TUNE_JOURNAL "/run/npulaunch/tune-journal.json"

struct npl_tune_item {
	char *name;       /* "cpu3 governor", "vm.swappiness" */
	char *path;       /* the file, root included */
	const char *rel;  /* a governor: the end of path, relative to the tune's cpudir; else NULL */
	char *current;    /* its contents as read (trailing newline included) */
	char *wanted;     /* the value to write (no newline) */
};

struct npl_tune {
	char *root;       /* "" for / */
	struct npl_tune_item *v;
	int n, cap;
	int cpus;         /* online CPUs seen */
	int cpufreq;      /* 1 when cpufreq exists */
	int cpudir;       /* root/sys/devices/system/cpu opened as a folder, or -1 */
};

/* Read the host's state for the plan tuning object ({cpu_governor, sysctl}); -1 on errors. */
int npl_tune_collect(struct npl_tune *t, const cJSON *tuning, const char *root, struct npl_diag *d);
/* 1 when an item's current contents already hold the wanted value. */
int npl_tune_item_ok(const struct npl_tune_item *it);
/* The number of items that differ. */
int npl_tune_differences(const struct npl_tune *t);
/* Change what differs, journaling first (journal NULL: the default under the root). A journal
 * that exists is kept (the first apply's values stay the ones to revert to). *changed (may be
 * NULL) counts the files written. -1 on error, with every change of this call undone. */
int npl_tune_apply(struct npl_tune *t, const char *journal, int *changed, struct npl_diag *d);
/* Undo what the last npl_tune_apply() of this process changed (after a later failure). */
int npl_tune_undo(struct npl_tune *t, struct npl_diag *d);
/* Restore every file of the journal and remove it; -1 when there is none or a file fails. */
int npl_tune_revert(const char *root, const char *journal, int *restored, struct npl_diag *d);
/* The journal's path for a root (malloc'ed). */
char *npl_tune_journal_path(const char *root, const char *journal);
/* The state as JSON: {root, cpufreq, cpus, differences, items: [{name, path, current, wanted, ok}]}. */
cJSON *npl_tune_json(const struct npl_tune *t);
/* Parse a CPU list ("0-3,8,10-11") into a bitmap of n entries; -1 when malformed or out of range. */
int npl_cpu_list_parse(const char *s, unsigned char *set, int n);
/* The online CPUs under root (sys/devices/system/cpu/online) into set; their count, or -1. */
int npl_cpus_online(const char *root, unsigned char *set, int n, struct npl_diag *d);
/* Free everything. */
void npl_tune_release(struct npl_tune *t);

#endif
