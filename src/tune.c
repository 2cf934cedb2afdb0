/* tune.c: cpufreq governors and sysctls under a root prefix, journaled; see tune.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npulaunch/buf.h"
#include "npulaunch/plan.h"
#include "npulaunch/tune.h"
#include "npulaunch/util.h"

#define MAX_CPUS 65536
#define MAX_READ 4096
#define MAX_REPORTED 3

static char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		npl_oom();
	return p;
}

static char *path_of(const char *root, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static char *path_of(const char *root, const char *fmt, ...)
{
	struct npl_buf b = NPL_BUF_INIT;
	va_list ap;

	npl_buf_puts(&b, root);
	va_start(ap, fmt);
	npl_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	return npl_buf_detach(&b);
}

/* Read up to MAX_READ bytes of fd into a string (up to its first NUL); NULL with errno set. */
static char *read_fd(int fd)
{
	char buf[MAX_READ + 1];
	ssize_t n = read(fd, buf, MAX_READ);

	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return xstrdup(buf);
}

/* A small file's text (up to its first NUL), or NULL with errno set. */
static char *read_small(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), e;
	char *text;

	if (fd < 0)
		return NULL;
	text = read_fd(fd);
	e = errno;
	close(fd);
	errno = e;
	return text;
}

/* Replace the file rel under dirfd (AT_FDCWD: a path) with text. */
static int write_text_at(int dirfd, const char *rel, const char *text, size_t len)
{
	int fd = openat(dirfd, rel, O_WRONLY | O_TRUNC | O_CLOEXEC), e;
	ssize_t w;

	if (fd < 0)
		return -1;
	w = write(fd, text, len);
	e = errno;
	if (close(fd) != 0 && w >= 0)
		return -1;
	if (w < 0 || (size_t)w != len) {
		errno = w < 0 ? e : EIO;
		return -1;
	}
	return 0;
}

static int write_text(const char *path, const char *text, size_t len)
{
	return write_text_at(AT_FDCWD, path, text, len);
}

/* An item's file: relative to the cpu folder for governors, else its path. */
static int write_item(const struct npl_tune *t, const struct npl_tune_item *it, const char *text, size_t len)
{
	return it->rel ? write_text_at(t->cpudir, it->rel, text, len) : write_text(it->path, text, len);
}

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
	return it->current && same_value(it->current, it->wanted);
}

int npl_tune_differences(const struct npl_tune *t)
{
	int i, n = 0;

	for (i = 0; i < t->n; i++)
		n += !npl_tune_item_ok(&t->v[i]);
	return n;
}

static struct npl_tune_item *add_item(struct npl_tune *t, char *name, char *path, const char *wanted)
{
	struct npl_tune_item *it;

	if (t->n == t->cap) {
		int cap = t->cap ? t->cap * 2 : 64;
		void *p = realloc(t->v, (size_t)cap * sizeof(*t->v));

		if (!p)
			npl_oom();
		t->v = p;
		t->cap = cap;
	}
	it = &t->v[t->n++];
	memset(it, 0, sizeof(*it));
	it->name = name;
	it->path = path;
	it->wanted = xstrdup(wanted);
	return it;
}

/*
 * Read the item's file and check that it can be opened for writing, in one open: O_RDWR proves
 * both. rel is the file relative to dirfd (AT_FDCWD: it->path). 1 when the file does not exist
 * and missing_ok is set (nothing reported), -1 on an error, 0 when it can be changed.
 */
static int probe_at(int dirfd, const char *rel, struct npl_tune_item *it, int missing_ok, struct npl_diag *d)
{
	struct npl_loc at = {it->path, 0, 0};
	int fd = openat(dirfd, rel, O_RDWR | O_CLOEXEC), e;

	if (fd < 0 && (errno == ENOENT || errno == ENOTDIR) && missing_ok)
		return 1;
	if (fd < 0) {
		/* not writable: read it all the same, for the report */
		e = errno;
		fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return npl_error(d, &at, "cannot read %s: %s", it->name, strerror(errno));
		it->current = read_fd(fd);
		close(fd);
		return npl_error(d, &at, "cannot write %s: %s", it->name, strerror(e));
	}
	it->current = read_fd(fd);
	e = errno;
	close(fd);
	if (!it->current)
		return npl_error(d, &at, "cannot read %s: %s", it->name, strerror(e));
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

int npl_cpus_online(const char *root, unsigned char *set, int n, struct npl_diag *d)
{
	char *path = path_of(root, "/sys/devices/system/cpu/online"), *text = read_small(path);
	int i, count = 0;

	if (text) {
		if (npl_cpu_list_parse(text, set, n)) {
			struct npl_loc at = {path, 0, 0};

			npl_error(d, &at, "cannot read the online CPU list '%.*s'", (int)strcspn(text, "\n"), text);
			free(text);
			free(path);
			return -1;
		}
	} else {
		/* no online list (some containers): every cpuN folder */
		char *dir = path_of(root, "/sys/devices/system/cpu");
		DIR *dp = opendir(dir);
		struct dirent *de;

		memset(set, 0, (size_t)n);
		while (dp && (de = readdir(dp))) {
			int c = de->d_name[0] == 'c' && !strncmp(de->d_name, "cpu", 3) ? npl_parse_uint(de->d_name + 3) : -1;

			if (c >= 0 && c < n)
				set[c] = 1;
		}
		if (dp)
			closedir(dp);
		free(dir);
	}
	for (i = 0; i < n; i++)
		count += set[i];
	free(text);
	free(path);
	return count;
}

/* Take back the item add_item() made last. */
static void drop_last(struct npl_tune *t)
{
	struct npl_tune_item *it = &t->v[--t->n];

	free(it->name);
	free(it->path);
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
	unsigned char *online = malloc(MAX_CPUS);
	int c, rc = 0, bad = 0;

	if (!online)
		npl_oom();
	t->cpus = npl_cpus_online(t->root, online, MAX_CPUS, d);
	if (t->cpus < 0) {
		free(online);
		return -1;
	}
	/* every governor is opened relative to the cpu folder: a short path walk per CPU */
	{
		char *dir = path_of(t->root, "/sys/devices/system/cpu");

		t->cpudir = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (t->cpudir < 0 && errno != ENOENT) {
			struct npl_loc at = {dir, 0, 0};

			rc = npl_error(d, &at, "cannot open the CPU folder: %s", strerror(errno));
		}
		free(dir);
	}
	for (c = 0; c < MAX_CPUS && t->cpudir >= 0; c++) {
		char rel[64], arel[80], name[32], *avail;
		struct npl_tune_item *it;
		int r, fd;

		if (!online[c])
			continue;
		snprintf(rel, sizeof(rel), "cpu%d/cpufreq/scaling_governor", c);
		snprintf(name, sizeof(name), "cpu%d governor", c);
		it = add_item(t, xstrdup(name), path_of(t->root, "/sys/devices/system/cpu/%s", rel), wanted);
		it->rel = it->path + strlen(it->path) - strlen(rel);
		/* what the CPU offers first, then whether the file can be changed (as before) */
		snprintf(arel, sizeof(arel), "cpu%d/cpufreq/scaling_available_governors", c);
		fd = openat(t->cpudir, arel, O_RDONLY | O_CLOEXEC);
		avail = fd < 0 ? NULL : read_fd(fd);
		if (fd >= 0)
			close(fd);
		if (avail && !offers(avail, wanted)) {
			if (++bad <= MAX_REPORTED) {
				char *avail_path = path_of(t->root, "/sys/devices/system/cpu/%s", arel);
				struct npl_loc at = {avail_path, 0, 0};

				avail[strcspn(avail, "\n")] = '\0';
				npl_error(d, &at, "cpu%d does not offer the governor '%s' (it offers: %s)", c, wanted,
					  *avail ? avail : "none");
				free(avail_path);
			}
			rc = -1;
		}
		free(avail);
		r = probe_at(t->cpudir, rel, it, 1, d);
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
		char *dir = path_of(t->root, "/sys/devices/system/cpu");

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

	if (!name || !value)
		return npl_error(d, NULL, "a sysctl of the plan has no name or value");
	if (npl_pval_resolve(&v, value, NULL, NULL))
		return npl_error(d, NULL, "sysctl %s: the value refers to a site value", name);
	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(s, "paths")) {
		char *path = path_of(t->root, "%s", p->valuestring);
		struct npl_tune_item *it = add_item(t, xstrdup(name), path, npl_buf_str(&v));

		rc = probe_at(AT_FDCWD, path, it, 1, d);
		if (rc != 1) {
			npl_buf_release(&tried);
			npl_buf_release(&v);
			return rc;
		}
		path = xstrdup(path);
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

int npl_tune_collect(struct npl_tune *t, const cJSON *tuning, const char *root, struct npl_diag *d)
{
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(tuning, "cpu_governor"), *s;
	size_t n;
	int rc = 0;

	memset(t, 0, sizeof(*t));
	t->cpudir = -1;
	t->root = xstrdup(root && strcmp(root, "/") ? root : "");
	n = strlen(t->root);
	while (n && t->root[n - 1] == '/')
		t->root[--n] = '\0';
	if (cJSON_IsObject(g) && npl_json_str(g, "value")) {
		struct npl_buf v = NPL_BUF_INIT;

		npl_pval_resolve(&v, npl_json_str(g, "value"), NULL, NULL);
		if (collect_governors(t, npl_buf_str(&v), d))
			rc = -1;
		npl_buf_release(&v);
	}
	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(tuning, "sysctl"))
		if (collect_sysctl(t, s, d))
			rc = -1;
	return rc;
}

char *npl_tune_journal_path(const char *root, const char *journal)
{
	const char *r = root && strcmp(root, "/") ? root : "";

	if (journal)
		return xstrdup(journal);
	return path_of(r, "%s", NPL_TUNE_JOURNAL);
}

static int write_journal(const struct npl_tune *t, const char *path, struct npl_diag *d)
{
	struct npl_buf j = NPL_BUF_INIT;
	char *text, *dir = xstrdup(path), *slash = strrchr(dir, '/'), *tmp;
	struct npl_loc at = {path, 0, 0};
	int i, fd, rc = 0;

	/* written directly, not through a cJSON tree: a host with 1,024 CPUs has 3,000 values */
	npl_buf_puts(&j, "{\n\t\"format\": \"npulaunch-tune-journal/1\",\n\t\"root\": ");
	npl_buf_json_string(&j, *t->root ? t->root : "/");
	npl_buf_puts(&j, ",\n\t\"entries\": [");
	for (i = 0; i < t->n; i++) {
		npl_buf_puts(&j, i ? ", {\n\t\t\t\"name\": " : "{\n\t\t\t\"name\": ");
		npl_buf_json_string(&j, t->v[i].name);
		npl_buf_puts(&j, ",\n\t\t\t\"path\": ");
		npl_buf_json_string(&j, t->v[i].path);
		npl_buf_puts(&j, ",\n\t\t\t\"contents\": ");
		npl_buf_json_string(&j, t->v[i].current);
		npl_buf_puts(&j, "\n\t\t}");
	}
	npl_buf_puts(&j, "]\n}\n");
	text = npl_buf_detach(&j);
	if (slash && slash != dir) {
		*slash = '\0';
		if (npl_mkdirs(dir, 0755, d))
			rc = -1;
	}
	free(dir);
	if (rc) {
		free(text);
		return -1;
	}
	tmp = path_of("", "%s.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) || fsync(fd) || close(fd) ||
	    rename(tmp, path)) {
		rc = npl_error(d, &at, "cannot write the tuning journal: %s", strerror(errno));
		if (fd >= 0)
			unlink(tmp);
	}
	free(tmp);
	free(text);
	return rc;
}

/* Put back what this process changed, newest first. */
static int undo(struct npl_tune *t, int upto, struct npl_diag *d)
{
	int i, rc = 0;

	for (i = upto - 1; i >= 0; i--) {
		struct npl_tune_item *it = &t->v[i];

		if (!it->current || npl_tune_item_ok(it))
			continue;
		if (write_item(t, it, it->current, strlen(it->current))) {
			struct npl_loc at = {it->path, 0, 0};

			rc = npl_error(d, &at, "could not put back %s: %s", it->name, strerror(errno));
		}
	}
	return rc;
}

int npl_tune_apply(struct npl_tune *t, const char *journal, int *changed, struct npl_diag *d)
{
	char *jpath = npl_tune_journal_path(t->root, journal);
	struct stat st;
	int i, n = 0, created;

	if (changed)
		*changed = 0;
	if (npl_tune_differences(t) == 0) {
		free(jpath);
		return 0;
	}
	/* the first apply's journal holds the values to go back to; keep it */
	created = stat(jpath, &st) != 0;
	if (created && write_journal(t, jpath, d)) {
		free(jpath);
		return -1;
	}
	for (i = 0; i < t->n; i++) {
		struct npl_tune_item *it = &t->v[i];
		struct npl_buf b = NPL_BUF_INIT;
		int rc;

		if (npl_tune_item_ok(it))
			continue;
		npl_buf_printf(&b, "%s\n", it->wanted);
		rc = write_item(t, it, b.data, b.len);
		npl_buf_release(&b);
		if (rc) {
			struct npl_loc at = {it->path, 0, 0};

			npl_error(d, &at, "cannot write %s: %s", it->name, strerror(errno));
			/* all undone: a journal made by this call has nothing left to say */
			if (undo(t, i, d) == 0 && created)
				unlink(jpath);
			free(jpath);
			return -1;
		}
		n++;
	}
	free(jpath);
	if (changed)
		*changed = n;
	return 0;
}

int npl_tune_undo(struct npl_tune *t, struct npl_diag *d)
{
	return undo(t, t->n, d);
}

int npl_tune_revert(const char *root, const char *journal, int *restored, struct npl_diag *d)
{
	char *jpath = npl_tune_journal_path(root, journal), *text;
	struct npl_loc at = {jpath, 0, 0};
	cJSON *j;
	const cJSON *e;
	int rc = 0, n = 0;
	size_t len;

	if (restored)
		*restored = 0;
	if (access(jpath, F_OK) != 0) {
		rc = npl_error(d, &at, "no tuning journal: nothing to revert");
		free(jpath);
		return rc;
	}
	text = npl_read_file(jpath, &len, d);
	j = text ? cJSON_Parse(text) : NULL;
	free(text);
	if (!j || strcmp(npl_json_str(j, "format") ? npl_json_str(j, "format") : "",
			 "npulaunch-tune-journal/1")) {
		rc = npl_error(d, &at, "not a tuning journal");
		cJSON_Delete(j);
		free(jpath);
		return rc;
	}
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "entries")) {
		const char *path = npl_json_str(e, "path"), *contents = npl_json_str(e, "contents");
		char *now;

		if (!path || !contents)
			continue;
		now = read_small(path);
		if (now && !strcmp(now, contents)) {
			free(now);
			continue;
		}
		free(now);
		if (write_text(path, contents, strlen(contents))) {
			struct npl_loc p = {path, 0, 0};

			rc = npl_error(d, &p, "cannot restore %s: %s", npl_json_str(e, "name"), strerror(errno));
			continue;
		}
		n++;
	}
	cJSON_Delete(j);
	if (rc == 0 && unlink(jpath) != 0)
		rc = npl_error(d, &at, "cannot remove the tuning journal: %s", strerror(errno));
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
		char *cur = t->v[i].current ? xstrdup(t->v[i].current) : NULL;

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
	cJSON_AddItemToObject(o, "items", items);
	return o;
}

void npl_tune_release(struct npl_tune *t)
{
	int i;

	for (i = 0; i < t->n; i++) {
		free(t->v[i].name);
		free(t->v[i].path);
		free(t->v[i].current);
		free(t->v[i].wanted);
	}
	free(t->v);
	free(t->root);
	/* > 0: a zeroed struct that was never collected must not close stdin */
	if (t->cpudir > 0)
		close(t->cpudir);
	memset(t, 0, sizeof(*t));
}
