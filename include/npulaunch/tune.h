/*
 * tune.h: layer node. Host tuning without shelling out: the cpufreq governor of every
 * online CPU and the sysctls a plan's tuning names, every path under a root
 * prefix (tests and containers use a fake tree).
 *
 * Confinement: every host file is read and written through one function
 * (confine.c's npl_tune_host_open) that accepts only the tuning files under the root
 * (ROOT/proc/sys/..., ROOT/sys/devices/system/cpu/cpuN/cpufreq/... and the
 * kernel's cpufreq/policyN/... they link to, ROOT/sys/devices/system/cpu/online,
 * ROOT/sys/kernel/debug/sched/...; a few sysctls that run programs, such as
 * kernel.core_pattern, never), opens them relative to a descriptor of the
 * root (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, else one component at a
 * time with O_NOFOLLOW), follows a symbolic link only when its target is
 * itself such a file beneath the root, never blocks (O_NONBLOCK) and refuses
 * anything but a regular file. Plans (manifests) and journals are validated
 * whole before anything is touched.
 *
 * npl_tune_collect() reads what is there and checks it can be changed (a
 * governor the CPU does not offer, a sysctl that exists at none of its paths,
 * a file that cannot be opened for writing: errors before anything changes;
 * no cpufreq at all: a warning). npl_tune_apply() journals the previous
 * contents atomically before the first change (an existing journal must be
 * valid; it keeps its values and gains every new file's: first value wins),
 * changes what differs, and on a failure part-way puts back what it changed;
 * npl_tune_revert() validates the whole journal and every file first, then
 * restores them byte for byte and removes the journal, which it keeps on any
 * failure. Included by the tune and apply commands, their tests and the
 * journal's fuzzer. The module is four files: tune.c (collect, apply, undo,
 * revert), confine.c (the confinement above), journal.c (the journal's
 * format and files) and tune_service.c (irqbalance, the one service it stops,
 * through the root's systemctl); what they share privately is in
 * src/node/tune_internal.h.
 */
#ifndef NPL_TUNE_H
#define NPL_TUNE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "npulaunch/diag.h"

/* Where the journal lives under the root: tuning does not survive a reboot, nor does /run. */
#define NPL_TUNE_JOURNAL "/run/npulaunch/tune-journal.json"
/* The journal's format: contents in base64, so that any bytes round-trip. /1 (JSON strings) is read. */
#define NPL_TUNE_JOURNAL_FORMAT "npulaunch-tune-journal/2"

struct npl_tune_item {
	char *name;       /* "cpu3 governor", "vm.swappiness" */
	char *path;       /* the file, root included (for messages) */
	char *rel;        /* the file relative to the root, as opened (a followed link resolved) */
	char *current;    /* its contents as read (trailing newline included; NUL-terminated) */
	size_t current_len;
	char *wanted;     /* the value to write (no newline) */
	int fd;           /* the file as probe() opened it for writing, kept for the write, or -1 */
	off_t size;       /* what fstat() said of its size then */
};

struct npl_tune {
	char *root;       /* "" for / */
	struct npl_tune_item *v;
	int n, cap;
	int cpus;         /* online CPUs seen */
	int cpufreq;      /* 1 when cpufreq exists */
	int rootfd;       /* the root, opened as a folder, or -1 */
	int cpudir;       /* root/sys/devices/system/cpu opened as a folder, or -1 */
	char *link_from, *link_to;  /* the last symbolic link followed (rel prefixes) */
	char *jpath;      /* the journal npl_tune_apply() created, or NULL */
	int readonly;     /* collected to be compared only: no file was opened for writing */
	int kept, keep_max; /* descriptors kept by items, and how many may be */
	/* irqbalance, stopped while the dies' interrupts are bound (tune_service.c) */
	char *svc_tool;   /* the root's systemctl when the service is to be stopped, or NULL */
	int svc_stop;     /* 1: irqbalance.service is active and applying stops it, journaled */
	int svc_stopped;  /* 1: this process stopped it (an undo starts it again) */
};

/* A journal's entry: the file (an absolute path on the host, without the root) and its bytes. */
struct npl_tune_entry {
	char *name;
	char *path;
	char *data;       /* NUL-terminated for convenience; len counts the bytes */
	size_t len;
};

/* A journal's service entry: a unit apply stopped, and the state it was in (always "active"). */
struct npl_tune_service {
	char *unit;
	char *state;
};

struct npl_tune_journal {
	char *root;       /* "/" or the root */
	struct npl_tune_entry *v;
	int n;
	struct npl_tune_service *s;
	int ns;
};

/* The one service tuning stops (while interrupts are bound). */
#define NPL_TUNE_IRQBALANCE "irqbalance.service"

/* Read the host's state for the plan tuning object ({cpu_governor, sysctl}); source names the
 * file the plan came from (a bundle's manifest.json) in messages, or NULL. -1 on errors. With
 * NPL_TUNE_READ_ONLY in flags each file is only read (tune --check and the dry runs, which any
 * user may run): whether it can be written is npl_tune_writable()'s question, and
 * npl_tune_apply() refuses such a collection; without it, each is opened for writing too. */
#define NPL_TUNE_READ_ONLY 1u
int npl_tune_collect(struct npl_tune *t, const cJSON *tuning, const char *root, const char *source,
		     unsigned flags, struct npl_diag *d);
/* 1 when an item's current contents already hold the wanted value. */
int npl_tune_item_ok(const struct npl_tune_item *it);
/* Report each item that differs and cannot be opened for writing (what --apply would stop on); -1 when one cannot. */
int npl_tune_writable(struct npl_tune *t, struct npl_diag *d);
/* The number of items that differ. */
int npl_tune_differences(const struct npl_tune *t);
/* Change what differs, journaling first (journal NULL: the default under the root). An existing
 * journal must be a valid one of this root (else -1 before any change); it keeps its values and
 * gains the files it lacks. *changed (may be NULL) counts the files written. -1 on error, with
 * every change of this call undone. */
int npl_tune_apply(struct npl_tune *t, const char *journal, int *changed, struct npl_diag *d);
/* Undo what the last npl_tune_apply() of this process changed (after a later failure), and
 * remove the journal when that call created it. */
int npl_tune_undo(struct npl_tune *t, struct npl_diag *d);
/* Validate the whole journal and every file it names, then restore them and remove it; -1 when
 * there is none, it is invalid or a file fails (the journal is kept). */
int npl_tune_revert(const char *root, const char *journal, int *restored, struct npl_diag *d);
/* Parse and validate a whole journal (text of len bytes, from file); root: the root it must
 * belong to ("/" or NULL for /... NULL takes the journal's). -1 with each problem reported. */
int npl_tune_journal_parse(struct npl_tune_journal *j, const char *file, const char *text, size_t len,
			   const char *root, struct npl_diag *d);
void npl_tune_journal_release(struct npl_tune_journal *j);
/* 1 when path (absolute, on the host, without the root) is a file tuning may read and write. */
int npl_tune_path_allowed(const char *path);
/* The journal's path for a root (malloc'ed). */
char *npl_tune_journal_path(const char *root, const char *journal);
/* One more item of a collected t: interrupt irq on CPU cpu (ROOT/proc/irq/IRQ/smp_affinity_list,
 * journaled like the rest; why names it: "device 0 sq_send_trigger_irq"). 0, or -1 with an
 * error when the file cannot be read or written. */
int npl_tune_collect_irq(struct npl_tune *t, int irq, int cpu, const char *why, struct npl_diag *d);
/* Ask the root's systemctl (ROOT/usr/bin/systemctl or ROOT/bin/systemctl, never PATH's) whether
 * irqbalance.service is active: when it is, applying t stops it after journaling that it ran,
 * and tune --revert starts it again. Without systemctl a running irqbalance (ROOT/proc/N/comm)
 * is a warning. 0, or -1 when systemctl does not answer. */
int npl_tune_collect_irqbalance(struct npl_tune *t, struct npl_diag *d);
/* The state as JSON: {root, cpufreq, cpus, differences, items: [{name, path, current, wanted, ok}]}. */
cJSON *npl_tune_json(const struct npl_tune *t);
/* Parse a CPU list ("0-3,8,10-11") into a bitmap of n entries; -1 when malformed or out of range. */
int npl_cpu_list_parse(const char *s, unsigned char *set, int n);
/* The online CPUs under root (sys/devices/system/cpu/online) into set; their count, or -1. */
int npl_cpus_online(const char *root, unsigned char *set, int n, struct npl_diag *d);
/* Free everything. */
void npl_tune_release(struct npl_tune *t);

#endif
