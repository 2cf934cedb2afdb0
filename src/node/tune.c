/* tune.c: cpufreq governors and sysctls under a root prefix: collected and checked, applied
 * after journaling, undone and reverted; see tune.h (the confinement of every read and write is in
 * confine.c, the journal's format and files in journal.c). */
#define _GNU_SOURCE /* O_PATH */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npulaunch/arena.h"
#include "npulaunch/buf.h"
#include "npulaunch/plan.h"
#include "npulaunch/text.h"
#include "npulaunch/tune.h"
#include "tune_internal.h"

#define MAX_CPUS 65536
#define MAX_REPORTED 3

/* ---- values --------------------------------------------------------------------------- */

/* Values compare with their whitespace normalised: "0\n" holds "0". */
static int same_value(const char *a, const char *b)
{
	for (;;) {
		while (*a == ' ' || *a == '\t' || *a == '\n')
			a++;
		while (*b == ' ' || *b == '\t' || *b == '\n')
			b++;
		if (!*a || !*b)
			return !*a && !*b;
		while (*a && *b && *a != ' ' && *a != '\t' && *a != '\n' && *a == *b) {
			a++;
			b++;
		}
		if ((*a && *a != ' ' && *a != '\t' && *a != '\n') ||
		    (*b && *b != ' ' && *b != '\t' && *b != '\n'))
			return 0;
	}
}

int npl_tune_item_ok(const struct npl_tune_item *it)
{
	return it->current && strlen(it->current) == it->current_len && same_value(it->current, it->wanted);
}

int npl_tune_differences(const struct npl_tune *t)
{
	int i, n = 0;

	for (i = 0; i < t->n; i++)
		n += !npl_tune_item_ok(&t->v[i]);
	return n + t->svc_stop;
}

static struct npl_tune_item *add_item(struct npl_tune *t, char *name, const char *rel, const char *wanted)
{
	struct npl_tune_item *it;

	if (t->n == t->cap) {
		int cap = t->cap ? t->cap * 2 : 64;
		void *p = npl_xrealloc(t->v, (size_t)cap * sizeof(*t->v));

		t->v = p;
		t->cap = cap;
	}
	it = &t->v[t->n++];
	memset(it, 0, sizeof(*it));
	it->name = name;
	it->path = npl_tune_path_of(t->root, "/%s", rel);
	it->rel = npl_xstrdup(rel);
	it->wanted = npl_xstrdup(wanted);
	it->fd = -1;
	return it;
}

/* How many files the items may keep open from check to write: the descriptor limit raised to
 * its hard limit, less a margin for everything else; past it, a file is opened again to be
 * written. */
static struct rlimit saved_nofile;   /* the limit before keep_budget() raised it */
static int nofile_raised;

static void keep_budget(struct npl_tune *t)
{
	struct rlimit rl;

	t->keep_max = 0;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_cur < rl.rlim_max && rl.rlim_cur < 65536) {
		struct rlimit want = {rl.rlim_max < 65536 ? rl.rlim_max : 65536, rl.rlim_max};

		/* for this process's tuning only: npl_tune_release() puts it back, so that what apply
		   executes next starts with the limit it would have had */
		if (!nofile_raised && setrlimit(RLIMIT_NOFILE, &want) == 0) {
			saved_nofile = rl;
			nofile_raised = 1;
			rl.rlim_cur = want.rlim_cur;
		}
	}
	t->keep_max = rl.rlim_cur > 128 ? (int)(rl.rlim_cur - 64) : 0;
}

/* Put back the descriptor limit keep_budget() raised. */
static void restore_nofile(void)
{
	if (nofile_raised && setrlimit(RLIMIT_NOFILE, &saved_nofile) == 0)
		nofile_raised = 0;
}

/* Let the item's kept descriptor go. */
static void unkeep(struct npl_tune *t, struct npl_tune_item *it)
{
	if (it->fd < 0)
		return;
	close(it->fd);
	it->fd = -1;
	t->kept--;
}

/*
 * Read the item's file and check that it can be opened for writing, in one open: O_RDWR proves
 * both. 1 when the file does not exist and missing_ok is set (nothing reported), -1 on an error,
 * 0 when it can be changed.
 */
static int probe(struct npl_tune *t, struct npl_tune_item *it, int missing_ok, struct npl_diag *d)
{
	struct npl_loc at = {it->path, 0, 0};
	char why[512], *resolved = NULL;
	struct stat st;
	int fd = npl_tune_host_open(t, it->rel, t->readonly ? O_RDONLY : O_RDWR, KIND_CHECK, &resolved, &st, why,
				    sizeof(why)), e;

	if (fd < 0 && !why[0] && (errno == ENOENT || errno == ENOTDIR) && missing_ok)
		return 1;
	if (fd < 0 && why[0])
		return npl_error(d, &at, "cannot use %s: %s", it->name, why);
	if (fd < 0) {
		/* not writable: read it all the same, for the report */
		e = errno;
		free(it->current);
		it->current = npl_tune_host_read(t, it->rel, &it->current_len, why, sizeof(why));
		if (!it->current)
			return npl_error(d, &at, "cannot read %s: %s", it->name, why[0] ? why : strerror(errno));
		return npl_error(d, &at, "cannot write %s: %s", it->name, strerror(e));
	}
	free(it->rel);
	it->rel = resolved;
	it->current = npl_tune_read_all(fd, st.st_size, MAX_FILE, &it->current_len);
	e = errno;
	it->size = st.st_size;
	/* the descriptor that proved the file writable writes it: one open per file */
	if (!t->readonly && it->current && t->kept < t->keep_max) {
		it->fd = fd;
		t->kept++;
	} else {
		close(fd);
	}
	if (!it->current)
		return npl_error(d, &at, "cannot read %s: %s", it->name,
				 e == EFBIG ? "larger than 1 MiB: not a tuning file" : strerror(e));
	return 0;
}

/* A CPU number at *p below n (the strict decimal reader), *p moved past it; -1 when none. */
static long cpu_number(const char **p, int n)
{
	const struct npl_number_spec cpu = {"a CPU number", 0, n - 1, 1};
	size_t len = npl_decimal_span(*p, strlen(*p), 1);
	double v;

	if (npl_parse_number_n(*p, len, &cpu, &v))
		return -1;
	*p += len;
	return (long)v;
}

int npl_cpu_list_parse(const char *s, unsigned char *set, int n)
{
	const char *p = s;

	memset(set, 0, (size_t)n);
	while (*p && *p != '\n') {
		long a = cpu_number(&p, n), b;

		if (a < 0)
			return -1;
		b = a;
		if (*p == '-') {
			p++;
			if ((b = cpu_number(&p, n)) < a)
				return -1;
		}
		for (; a <= b; a++)
			set[a] = 1;
		if (*p == ',' && p[1] && p[1] != '\n')
			p++;
		else if (*p && *p != '\n')
			return -1;
	}
	return p == s ? -1 : 0;
}

static int cpus_online(struct npl_tune *t, unsigned char *set, int n, struct npl_diag *d)
{
	char why[512];
	size_t len;
	char *text = npl_tune_host_read(t, CPUDIR "/online", &len, why, sizeof(why));
	int i, count = 0;

	if (!text && why[0]) {
		char *path = npl_tune_path_of(t->root, "/" CPUDIR "/online");
		struct npl_loc at = {path, 0, 0};

		npl_error(d, &at, "cannot read the online CPU list: %s", why);
		free(path);
		return -1;
	}
	if (text) {
		if (npl_cpu_list_parse(text, set, n)) {
			char *path = npl_tune_path_of(t->root, "/" CPUDIR "/online");
			struct npl_loc at = {path, 0, 0};

			npl_error(d, &at, "cannot read the online CPU list '%.*s'", (int)strcspn(text, "\n"), text);
			free(text);
			free(path);
			return -1;
		}
	} else {
		/* no online list (some containers): every cpuN folder */
		int fd = npl_tune_host_open(t, CPUDIR, O_RDONLY | O_DIRECTORY, KIND_CHECK, NULL, NULL, why, sizeof(why));
		DIR *dp = fd >= 0 ? fdopendir(fd) : NULL;
		struct dirent *de;

		if (fd >= 0 && !dp)
			close(fd);
		memset(set, 0, (size_t)n);
		while (dp && (de = readdir(dp))) {
			int c = de->d_name[0] == 'c' && !strncmp(de->d_name, "cpu", 3) ? npl_parse_uint(de->d_name + 3) : -1;

			if (c >= 0 && c < n)
				set[c] = 1;
		}
		if (dp)
			closedir(dp);
	}
	for (i = 0; i < n; i++)
		count += set[i];
	free(text);
	return count;
}

int npl_cpus_online(const char *root, unsigned char *set, int n, struct npl_diag *d)
{
	struct npl_tune t;
	int rc;

	memset(&t, 0, sizeof(t));
	t.cpudir = -1;
	t.root = npl_tune_norm_root(root);
	rc = npl_tune_open_root(&t, d) ? -1 : cpus_online(&t, set, n, d);
	npl_tune_release(&t);
	return rc;
}

/* Take back the item add_item() made last. */
static void drop_last(struct npl_tune *t)
{
	struct npl_tune_item *it = &t->v[--t->n];

	unkeep(t, it);
	free(it->name);
	free(it->path);
	free(it->rel);
	free(it->current);
	free(it->wanted);
}

/* 1 when a space-separated list of governors holds wanted. */
static int offers(const char *list, const char *wanted)
{
	size_t n = strlen(wanted);

	for (;;) {
		list += strspn(list, " \t\n");
		if (!*list)
			return 0;
		if (strncmp(list, wanted, n) == 0 && (!list[n] || strchr(" \t\n", list[n])))
			return 1;
		list += strcspn(list, " \t\n");
	}
}

static int collect_governors(struct npl_tune *t, const char *wanted, struct npl_diag *d)
{
	unsigned char *online = npl_xmalloc(MAX_CPUS);
	char why[512];
	int c, rc = 0, bad = 0;

	/* every governor is opened relative to the cpu folder: a short path walk per CPU */
	t->cpudir = npl_tune_host_open(t, CPUDIR, O_RDONLY | O_DIRECTORY, KIND_CHECK, NULL, NULL, why, sizeof(why));
	if (t->cpudir < 0 && (why[0] || errno != ENOENT)) {
		char *dir = npl_tune_path_of(t->root, "/" CPUDIR);
		struct npl_loc at = {dir, 0, 0};

		rc = npl_error(d, &at, "cannot open the CPU folder: %s", why[0] ? why : strerror(errno));
		free(dir);
		free(online);
		return rc;
	}
	t->cpus = cpus_online(t, online, MAX_CPUS, d);
	if (t->cpus < 0) {
		free(online);
		return -1;
	}
	for (c = 0; c < MAX_CPUS && t->cpudir >= 0; c++) {
		char rel[80], arel[96], name[32], *avail;
		struct npl_tune_item *it;
		size_t alen;
		int r;

		if (!online[c])
			continue;
		snprintf(rel, sizeof(rel), CPUDIR "/cpu%d/cpufreq/scaling_governor", c);
		snprintf(name, sizeof(name), "cpu%d governor", c);
		it = add_item(t, npl_xstrdup(name), rel, wanted);
		/* what the CPU offers first, then whether the file can be changed (as before) */
		snprintf(arel, sizeof(arel), CPUDIR "/cpu%d/cpufreq/scaling_available_governors", c);
		avail = npl_tune_host_read(t, arel, &alen, why, sizeof(why));
		if (!avail && why[0]) {
			char *avail_path = npl_tune_path_of(t->root, "/%s", arel);
			struct npl_loc at = {avail_path, 0, 0};

			rc = npl_error(d, &at, "cannot use the governors cpu%d offers: %s", c, why);
			free(avail_path);
		} else if (avail && !offers(avail, wanted)) {
			if (++bad <= MAX_REPORTED) {
				char *avail_path = npl_tune_path_of(t->root, "/%s", arel);
				struct npl_loc at = {avail_path, 0, 0};

				avail[strcspn(avail, "\n")] = '\0';
				npl_error(d, &at, "cpu%d does not offer the governor '%s' (it offers: %s)", c, wanted,
					  *avail ? avail : "none");
				free(avail_path);
			}
			rc = -1;
		}
		free(avail);
		r = probe(t, it, 1, d);
		if (r == 1) {
			/* this CPU has no cpufreq (offline policy, a VM): nothing to set */
			drop_last(t);
			continue;
		}
		if (r)
			rc = -1;
		t->cpufreq = 1;
	}
	if (bad > MAX_REPORTED)
		npl_error(d, NULL, "%d more CPUs do not offer the governor '%s'", bad - MAX_REPORTED, wanted);
	if (!t->cpufreq) {
		struct npl_loc at = {NULL, 0, 0};
		char *dir = npl_tune_path_of(t->root, "/" CPUDIR);

		at.file = dir;
		npl_warn(d, &at, "no cpufreq for any of the %d online CPUs (a VM or a container?): the governor stays as it is",
			 t->cpus);
		free(dir);
	}
	free(online);
	return rc;
}

static int collect_sysctl(struct npl_tune *t, const cJSON *s, struct npl_diag *d)
{
	const char *name = npl_json_str(s, "name"), *value = npl_json_str(s, "value");
	const cJSON *p;
	struct npl_buf tried = NPL_BUF_INIT, v = NPL_BUF_INIT;
	int rc;

	npl_pval_resolve(&v, value, NULL, NULL);
	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(s, "paths")) {
		struct npl_tune_item *it = add_item(t, npl_xstrdup(name), p->valuestring + 1, npl_buf_str(&v));
		char *path;

		rc = probe(t, it, 1, d);
		if (rc != 1) {
			npl_buf_release(&tried);
			npl_buf_release(&v);
			return rc;
		}
		path = npl_xstrdup(it->path);
		drop_last(t);
		npl_buf_printf(&tried, "%s%s", tried.len ? ", " : "", path);
		free(path);
	}
	rc = npl_error(d, NULL, "sysctl %s: none of %s exists%s", name, npl_buf_str(&tried),
		       strstr(npl_buf_str(&tried), "/sys/kernel/debug/")
			       ? " (since Linux 5.13 it lives in debugfs: mount -t debugfs none /sys/kernel/debug)"
			       : "");
	npl_buf_release(&tried);
	npl_buf_release(&v);
	return rc;
}

/* 1 when a value may be written to a tuning file: printable, no line break. */
static int value_ok(const char *s)
{
	if (!*s || strlen(s) > 256)
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 && *s != '\t')
			return 0;
	return 1;
}

/* The whole tuning object checked before any file is opened: names, values and every path. */
static int validate_tuning(const cJSON *tuning, const char *source, struct npl_diag *d)
{
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(tuning, "cpu_governor"), *s, *p;
	struct npl_loc at = {source, 0, 0};
	int rc = 0, i = 0;

	if (g && !cJSON_IsNull(g)) {
		const char *v = npl_json_str(g, "value");

		if (!cJSON_IsObject(g) || !v || strchr(v, '$') || !npl_tune_comp_ok(v, strlen(v)))
			rc = npl_error(d, source ? &at : NULL, "tuning: the cpu_governor is not a governor's name");
	}
	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(tuning, "sysctl")) {
		const char *name = npl_json_str(s, "name"), *value = npl_json_str(s, "value");
		const cJSON *paths = cJSON_GetObjectItemCaseSensitive(s, "paths");
		struct npl_buf v = NPL_BUF_INIT;

		i++;
		if (!name || !value || !npl_tune_comp_ok(name, strlen(name))) {
			rc = npl_error(d, source ? &at : NULL, "tuning: sysctl %d has no name or value", i);
			continue;
		}
		if (npl_pval_resolve(&v, value, NULL, NULL)) {
			rc = npl_error(d, source ? &at : NULL, "sysctl %s: the value refers to a site value", name);
		} else if (!value_ok(npl_buf_str(&v))) {
			rc = npl_error(d, source ? &at : NULL, "sysctl %s: the value is not one a sysctl takes", name);
		}
		npl_buf_release(&v);
		if (!cJSON_IsArray(paths) || !cJSON_GetArraySize(paths))
			rc = npl_error(d, source ? &at : NULL, "sysctl %s: no paths", name);
		cJSON_ArrayForEach(p, paths)
			if (!cJSON_IsString(p) || !npl_tune_path_allowed(p->valuestring))
				rc = npl_error(d, source ? &at : NULL,
					       "sysctl %s: the path '%s' is not a tuning file (only /proc/sys/... and /sys/kernel/debug/sched/...): refused",
					       name, cJSON_IsString(p) ? p->valuestring : "?");
	}
	return rc;
}

int npl_tune_writable(struct npl_tune *t, struct npl_diag *d)
{
	int i, rc = 0;

	for (i = 0; i < t->n; i++) {
		struct npl_tune_item *it = &t->v[i];
		struct npl_loc at = {it->path, 0, 0};
		char why[512];
		int fd;

		if (npl_tune_item_ok(it))
			continue;
		fd = npl_tune_host_open(t, it->rel, O_RDWR, KIND_KNOWN, NULL, NULL, why, sizeof(why));
		if (fd >= 0) {
			close(fd);
			continue;
		}
		rc = npl_error(d, &at, "cannot write %s: %s%s", it->name, why[0] ? why : strerror(errno),
			       errno == EACCES || errno == EPERM || errno == EROFS ? " (run as root)" : "");
	}
	return rc;
}

int npl_tune_collect(struct npl_tune *t, const cJSON *tuning, const char *root, const char *source,
		     unsigned flags, struct npl_diag *d)
{
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(tuning, "cpu_governor"), *s;
	int rc = 0;

	memset(t, 0, sizeof(*t));
	t->readonly = !!(flags & NPL_TUNE_READ_ONLY);
	t->cpudir = -1;
	t->rootfd = -1;
	t->root = npl_tune_norm_root(root);
	if (!t->readonly)
		keep_budget(t);
	if (validate_tuning(tuning, source, d) || npl_tune_open_root(t, d))
		return -1;
	if (cJSON_IsObject(g) && npl_json_str(g, "value")) {
		if (collect_governors(t, npl_json_str(g, "value"), d))
			rc = -1;
	}
	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(tuning, "sysctl"))
		if (collect_sysctl(t, s, d))
			rc = -1;
	return rc;
}

int npl_tune_collect_irq(struct npl_tune *t, int irq, int cpu, const char *why, struct npl_diag *d)
{
	char rel[64], want[16];
	struct npl_tune_item *it;

	snprintf(rel, sizeof(rel), "proc/irq/%d/smp_affinity_list", irq);
	snprintf(want, sizeof(want), "%d", cpu);
	it = add_item(t, npl_tune_path_of("", "irq %d (%s)", irq, why), rel, want);
	return probe(t, it, 0, d) ? -1 : 0;
}

/* ---- applying, undoing, reverting ------------------------------------------------------ */

/* A file in the journal's merge: its host path and its place (the old journal's entries first). */
struct key {
	const char *path;
	int order;
};

static int by_key(const void *a, const void *b)
{
	const struct key *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	return c ? c : x->order - y->order;
}

/* Write the item's file through the descriptor probe() kept: at offset 0, as a fresh open
 * would (procfs ignores a write past the start), and cut to the new length where a regular
 * file held more (sysfs and procfs files have no length of their own to cut). */
static int kept_write(const struct npl_tune_item *it, const char *data, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t w = pwrite(it->fd, data + off, len - off, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		off += (size_t)w;
	}
	if (it->size == (off_t)it->current_len && it->current_len > len && ftruncate(it->fd, (off_t)len))
		return -1;
	return 0;
}

/* Undo what this process changed, newest first, up to item upto; then start irqbalance again
 * when this process stopped it. */
static int undo(struct npl_tune *t, int upto, struct npl_diag *d)
{
	int i, rc = 0;

	for (i = upto - 1; i >= 0; i--) {
		struct npl_tune_item *it = &t->v[i];
		char why[512];

		if (!it->current || npl_tune_item_ok(it))
			continue;
		if (npl_tune_host_write(t, it->rel, it->current, it->current_len, why, sizeof(why))) {
			struct npl_loc at = {it->path, 0, 0};

			rc = npl_error(d, &at, "could not put back %s: %s", it->name, why[0] ? why : strerror(errno));
		}
	}
	if (t->svc_stopped && npl_tune_service(t->svc_tool, "start", NPL_TUNE_IRQBALANCE, NULL, d) == 0)
		t->svc_stopped = 0;
	else if (t->svc_stopped)
		rc = -1;
	return rc;
}

/* The journal's new text into j: the old journal's entries (found == 0), then each collected
 * file it lacks (first value wins), then the services, irqbalance's added when this call stops
 * it. The number of entries added. */
static int journal_text(const struct npl_tune *t, const struct npl_tune_journal *old_j, int found, struct npl_buf *j)
{
	const struct npl_tune_journal old = *old_j;
	struct key *keys;
	int i, added = 0, rl = (int)strlen(t->root);

	npl_buf_puts(j, "{\n\t\"format\": \"" NPL_TUNE_JOURNAL_FORMAT "\",\n\t\"root\": ");
	npl_buf_json_string(j, *t->root ? t->root : "/");
	npl_buf_puts(j, ",\n\t\"entries\": [");
	for (i = 0; found == 0 && i < old.n; i++)
		npl_tune_journal_entry(j, i == 0, old.v[i].name, old.v[i].path, old.v[i].data, old.v[i].len);
	/* first value wins: a file the journal holds keeps its value; each new one is added */
	keys = npl_xmalloc(((size_t)old.n + (size_t)t->n + 1) * sizeof(*keys));
	for (i = 0; i < old.n; i++)
		keys[i] = (struct key){old.v[i].path, i};
	for (i = 0; i < t->n; i++)
		keys[old.n + i] = (struct key){t->v[i].path + rl, old.n + i};
	qsort(keys, (size_t)(old.n + t->n), sizeof(*keys), by_key);
	{
		unsigned char *skip = npl_xcalloc((size_t)t->n + 1, 1);

		for (i = 1; i < old.n + t->n; i++)
			if (!strcmp(keys[i].path, keys[i - 1].path) && keys[i].order >= old.n)
				skip[keys[i].order - old.n] = 1;
		for (i = 0; i < t->n; i++) {
			if (skip[i] || !t->v[i].current)
				continue;
			npl_tune_journal_entry(j, old.n + added == 0, t->v[i].name, t->v[i].path + rl, t->v[i].current,
				      t->v[i].current_len);
			added++;
		}
		free(skip);
	}
	free(keys);
	/* the services the journal holds, and irqbalance when this call stops it (first state wins) */
	for (i = 0; found == 0 && i < old.ns; i++)
		npl_tune_journal_service(j, old.n + added + i == 0, old.s[i].unit, old.s[i].state);
	for (i = 0; found == 0 && i < old.ns && strcmp(old.s[i].unit, NPL_TUNE_IRQBALANCE); i++)
		;
	if (t->svc_stop && (found == 1 || i == old.ns)) {
		npl_tune_journal_service(j, old.n + added + (found == 0 ? old.ns : 0) == 0, NPL_TUNE_IRQBALANCE, "active");
		added++;
	}
	npl_buf_puts(j, "\n\t]\n}\n");
	return added;
}

static int apply_items(struct npl_tune *t, const char *journal, int *changed, struct npl_diag *d)
{
	char *jpath = npl_tune_journal_path(t->root, journal);
	struct npl_tune_journal old;
	struct npl_buf j = NPL_BUF_INIT;
	struct npl_loc at = {jpath, 0, 0};
	const char *name;
	int i, n = 0, found, dfd, nofollow, added;

	if (changed)
		*changed = 0;
	if (t->readonly) {
		free(jpath);
		return npl_error(d, NULL, "the tuning was collected read-only: nothing is changed from it");
	}
	if (npl_tune_differences(t) == 0) {
		free(jpath);
		return 0;
	}
	/* the journal first: an existing one must be valid, and keeps the values it holds */
	dfd = npl_tune_journal_dir(t, journal, 1, &name, &nofollow, d);
	if (dfd < 0) {
		if (errno)
			npl_error(d, &at, "cannot write the tuning journal: %s", strerror(errno));
		free(jpath);
		return -1;
	}
	found = npl_tune_journal_load(t, dfd, name, nofollow, jpath, &old, d);
	if (found < 0) {
		npl_error(d, &at, "the tuning journal is kept as it is; nothing was changed");
		close(dfd);
		free(jpath);
		return -1;
	}
	added = journal_text(t, &old, found, &j);
	npl_tune_journal_release(&old);
	free(t->jpath);
	t->jpath = NULL;
	if ((found == 1 || added) && npl_tune_journal_store(dfd, name, j.data, j.len, jpath, d)) {
		npl_buf_release(&j);
		close(dfd);
		free(jpath);
		return -1;
	}
	npl_buf_release(&j);
	if (found == 1)
		t->jpath = npl_xstrdup(jpath);
	/* irqbalance stops before the interrupts move, or it moves them back; a journal made by
	 * this call has nothing to say when it will not */
	if (t->svc_stop && npl_tune_service(t->svc_tool, "stop", NPL_TUNE_IRQBALANCE, NULL, d))
		goto fail;
	t->svc_stopped = t->svc_stop;
	for (i = 0; i < t->n; i++) {
		struct npl_tune_item *it = &t->v[i];
		struct npl_buf b = NPL_BUF_INIT;
		char why[512];
		int rc;

		if (npl_tune_item_ok(it)) {
			unkeep(t, it);
			continue;
		}
		npl_buf_printf(&b, "%s\n", it->wanted);
		if (it->fd >= 0) {
			why[0] = '\0';
			rc = kept_write(it, b.data, b.len);
			unkeep(t, it);
		} else {
			rc = npl_tune_host_write(t, it->rel, b.data, b.len, why, sizeof(why));
		}
		npl_buf_release(&b);
		if (rc) {
			struct npl_loc p = {it->path, 0, 0};

			npl_error(d, &p, "cannot write %s: %s", it->name, why[0] ? why : strerror(errno));
			/* all undone, this file too (it was truncated): a journal made by this call has
			 * nothing left to say; one that could not be undone keeps it */
			if (undo(t, i + 1, d))
				found = 0;
			goto fail;
		}
		n++;
	}
	close(dfd);
	free(jpath);
	if (changed)
		*changed = n;
	return 0;
fail:
	if (found == 1)
		unlinkat(dfd, name, 0);
	free(t->jpath);
	t->jpath = NULL;
	close(dfd);
	free(jpath);
	return -1;
}

int npl_tune_apply(struct npl_tune *t, const char *journal, int *changed, struct npl_diag *d)
{
	int rc = apply_items(t, journal, changed, d), i;

	/* every kept descriptor let go, and the limit back, before apply executes the server */
	for (i = 0; i < t->n; i++)
		unkeep(t, &t->v[i]);
	restore_nofile();
	return rc;
}

int npl_tune_undo(struct npl_tune *t, struct npl_diag *d)
{
	int rc = undo(t, t->n, d);

	if (rc == 0 && t->jpath) {
		unlink(t->jpath);
		free(t->jpath);
		t->jpath = NULL;
	}
	return rc;
}

/* Every file of the journal j, checked before one is written: each must be a tuning file that
 * can be read and written (its path replaced by the one as opened); same[i] set when file i
 * already holds its journaled bytes. 0, or -1 with each problem reported. */
static int revert_check(struct npl_tune *t, struct npl_tune_journal *j, unsigned char *same, struct npl_diag *d)
{
	int i, rc = 0;

	for (i = 0; i < j->n; i++) {
		char why[512], *now, *resolved = NULL;
		struct npl_loc p = {NULL, 0, 0};
		struct stat st;
		size_t len;
		int fd = npl_tune_host_open(t, j->v[i].path + 1, O_RDWR, KIND_CHECK, &resolved, &st, why, sizeof(why));

		p.file = npl_tune_path_of(t->root, "%s", j->v[i].path);
		if (fd < 0) {
			rc = npl_error(d, &p, "cannot restore %s (entry %d): %s", j->v[i].name, i + 1,
				       why[0] ? why : strerror(errno));
			free((char *)p.file);
			continue;
		}
		now = npl_tune_read_all(fd, st.st_size, MAX_FILE, &len);
		if (!now)
			rc = npl_error(d, &p, "cannot read %s (entry %d): %s", j->v[i].name, i + 1, strerror(errno));
		close(fd);
		same[i] = now && len == j->v[i].len && !memcmp(now, j->v[i].data, len);
		free(now);
		/* restore through the path as opened */
		free(j->v[i].path);
		j->v[i].path = resolved;
		free((char *)p.file);
	}
	return rc;
}

int npl_tune_revert(const char *root, const char *journal, int *restored, struct npl_diag *d)
{
	char *jpath = npl_tune_journal_path(root, journal);
	struct npl_loc at = {jpath, 0, 0};
	struct npl_tune_journal j;
	struct npl_tune t;
	const char *name;
	int rc = 0, n = 0, i, dfd = -1, nofollow, found;
	unsigned char *same = NULL;
	char *tool = NULL;

	if (restored)
		*restored = 0;
	memset(&t, 0, sizeof(t));
	memset(&j, 0, sizeof(j));
	t.cpudir = -1;
	t.root = npl_tune_norm_root(root);
	if (npl_tune_open_root(&t, d)) {
		rc = -1;
		goto out;
	}
	dfd = npl_tune_journal_dir(&t, journal, 0, &name, &nofollow, d);
	found = dfd < 0 ? (errno == ENOENT ? 1 : -1) : npl_tune_journal_load(&t, dfd, name, nofollow, jpath, &j, d);
	if (found == 1) {
		rc = npl_error(d, &at, "no tuning journal: nothing to revert");
		goto out;
	}
	if (found < 0) {
		if (dfd < 0)
			npl_error(d, &at, "cannot read the tuning journal: %s", strerror(errno));
		rc = npl_error(d, &at, "nothing was restored; the journal is kept");
		goto out;
	}
	/* every file first: each must be a tuning file that can be read and written */
	same = npl_xcalloc((size_t)j.n + 1, 1);
	rc = revert_check(&t, &j, same, d);
	/* a service it stopped is started by the root's systemctl: there must be one */
	if (j.ns && !(tool = npl_tune_systemctl(t.root)))
		rc = npl_error(d, &at, "cannot start %s again: there is no systemctl under %s (usr/bin, bin)", j.s[0].unit,
			       *t.root ? t.root : "/");
	if (rc) {
		npl_error(d, &at, "nothing was restored; the journal is kept");
		goto out;
	}
	for (i = 0; i < j.n; i++) {
		char why[512];

		if (same[i])
			continue;
		if (npl_tune_host_write(&t, j.v[i].path, j.v[i].data, j.v[i].len, why, sizeof(why))) {
			char *p = npl_tune_path_of(t.root, "/%s", j.v[i].path);
			struct npl_loc pl = {p, 0, 0};

			rc = npl_error(d, &pl, "cannot restore %s (entry %d): %s", j.v[i].name, i + 1,
				       why[0] ? why : strerror(errno));
			free(p);
			continue;
		}
		n++;
	}
	for (i = 0; rc == 0 && i < j.ns; i++) {
		if (npl_tune_service(tool, "start", j.s[i].unit, NULL, d))
			rc = npl_error(d, &at, "cannot start %s again (entry %d): the journal is kept", j.s[i].unit, j.n + i + 1);
		else
			n++;
	}
	if (rc)
		npl_error(d, &at, "the journal is kept: revert again once the files can be written");
	else if (unlinkat(dfd, name, 0) != 0)
		rc = npl_error(d, &at, "cannot remove the tuning journal: %s", strerror(errno));
out:
	free(same);
	free(tool);
	if (dfd >= 0)
		close(dfd);
	npl_tune_journal_release(&j);
	npl_tune_release(&t);
	free(jpath);
	if (restored)
		*restored = n;
	return rc;
}

cJSON *npl_tune_json(const struct npl_tune *t)
{
	cJSON *o = cJSON_CreateObject(), *items = cJSON_CreateArray();
	int i;

	cJSON_AddStringToObject(o, "root", *t->root ? t->root : "/");
	cJSON_AddBoolToObject(o, "cpufreq", t->cpufreq);
	cJSON_AddNumberToObject(o, "cpus", t->cpus);
	cJSON_AddNumberToObject(o, "differences", npl_tune_differences(t));
	for (i = 0; i < t->n; i++) {
		cJSON *it = cJSON_CreateObject();
		char *cur = t->v[i].current ? npl_xstrdup(t->v[i].current) : NULL;

		if (cur)
			cur[strcspn(cur, "\n")] = '\0';
		cJSON_AddStringToObject(it, "name", t->v[i].name);
		cJSON_AddStringToObject(it, "path", t->v[i].path);
		if (cur)
			cJSON_AddStringToObject(it, "current", cur);
		else
			cJSON_AddNullToObject(it, "current");
		cJSON_AddStringToObject(it, "wanted", t->v[i].wanted);
		cJSON_AddBoolToObject(it, "ok", npl_tune_item_ok(&t->v[i]));
		cJSON_AddItemToArray(items, it);
		free(cur);
	}
	if (t->svc_stop) {
		/* irqbalance: its state through the root's systemctl */
		cJSON *it = cJSON_CreateObject();

		cJSON_AddStringToObject(it, "name", NPL_TUNE_IRQBALANCE);
		cJSON_AddStringToObject(it, "path", t->svc_tool);
		cJSON_AddStringToObject(it, "current", "active");
		cJSON_AddStringToObject(it, "wanted", "inactive");
		cJSON_AddBoolToObject(it, "ok", 0);
		cJSON_AddItemToArray(items, it);
	}
	cJSON_AddItemToObject(o, "items", items);
	return o;
}

void npl_tune_release(struct npl_tune *t)
{
	int i;

	for (i = 0; i < t->n; i++) {
		if (t->v[i].fd >= 0)
			close(t->v[i].fd);
		free(t->v[i].name);
		free(t->v[i].path);
		free(t->v[i].rel);
		free(t->v[i].current);
		free(t->v[i].wanted);
	}
	free(t->v);
	free(t->root);
	free(t->link_from);
	free(t->link_to);
	free(t->jpath);
	free(t->svc_tool);
	/* > 0: a zeroed struct that was never collected must not close stdin */
	if (t->cpudir > 0)
		close(t->cpudir);
	if (t->rootfd > 0)
		close(t->rootfd);
	restore_nofile();
	memset(t, 0, sizeof(*t));
}
