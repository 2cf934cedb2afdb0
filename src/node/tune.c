/* tune.c: cpufreq governors and sysctls under a root prefix, confined and journaled; see tune.h. */
#define _GNU_SOURCE /* syscall(), O_PATH */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#ifdef __has_include
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define HAVE_OPENAT2_H 1
#endif
#endif

#include "npulaunch/buf.h"
#include "npulaunch/fsio.h"
#include "npulaunch/plan.h"
#include "npulaunch/text.h"
#include "npulaunch/tune.h"

#define MAX_CPUS 65536
#define MAX_FILE (1 << 20)          /* a tuning file larger than this is not one */
#define MAX_JOURNAL (64 << 20)
#define MAX_REPORTED 3
#define MAX_HOPS 8
#define CPUDIR "sys/devices/system/cpu"
#define CPUDIR_LEN (sizeof(CPUDIR) - 1)
#define JOURNAL_V1 "npulaunch-tune-journal/1"

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

/* ---- the allowlist ------------------------------------------------------------------ */

static int comp_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 255 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
		return 0;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '-' || c == '.' || c == ':'))
			return 0;
	}
	return 1;
}

/* 1 when s[0..n) is prefix followed by 1 to 6 digits */
static int numbered(const char *s, size_t n, const char *prefix)
{
	size_t p = strlen(prefix), i;

	if (n <= p || n > p + 6 || strncmp(s, prefix, p))
		return 0;
	for (i = p; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

/* sysctls that make the kernel run a program: never tuning, whatever a plan says */
static const char *const denied_sysctls[] = {
	"kernel/core_pattern", "kernel/modprobe", "kernel/hotplug", "kernel/poweroff_cmd",
	"kernel/usermodehelper", "fs/binfmt_misc", "kernel/kexec_load_disabled",
};

/*
 * What rel (relative to the root, no leading '/') is: 1 a tuning file, 2 the CPU folder, 0
 * neither. The tuning files: proc/sys/..., sys/devices/system/cpu/online,
 * sys/devices/system/cpu/cpuN/cpufreq/F, sys/devices/system/cpu/cpufreq/policyN/F (where the
 * kernel's cpuN/cpufreq links lead), sys/kernel/debug/sched/...; every component plain (no
 * "." or "..", no odd characters).
 */
static int rel_kind(const char *rel)
{
	const char *c[16];
	size_t len[16];
	int n = 0;
	const char *p = rel;
	size_t i;

	for (;;) {
		const char *slash = strchr(p, '/');
		size_t l = slash ? (size_t)(slash - p) : strlen(p);

		if (n == 16 || !comp_ok(p, l))
			return 0;
		c[n] = p;
		len[n++] = l;
		if (!slash)
			break;
		p = slash + 1;
	}
#define IS(k, s) (len[k] == sizeof(s) - 1 && !strncmp(c[k], s, sizeof(s) - 1))
	if (n >= 3 && IS(0, "proc") && IS(1, "sys")) {
		const char *rest = c[2];

		for (i = 0; i < sizeof(denied_sysctls) / sizeof(denied_sysctls[0]); i++) {
			size_t dl = strlen(denied_sysctls[i]);

			if (!strncmp(rest, denied_sysctls[i], dl) && (rest[dl] == '\0' || rest[dl] == '/'))
				return 0;
		}
		return 1;
	}
	if (n >= 5 && IS(0, "sys") && IS(1, "kernel") && IS(2, "debug") && IS(3, "sched"))
		return 1;
	if (n >= 4 && IS(0, "sys") && IS(1, "devices") && IS(2, "system") && IS(3, "cpu")) {
		if (n == 4)
			return 2;
		if (n == 5 && IS(4, "online"))
			return 1;
		if (n == 7 && numbered(c[4], len[4], "cpu") && IS(5, "cpufreq"))
			return 1;
		if (n == 7 && IS(4, "cpufreq") && numbered(c[5], len[5], "policy"))
			return 1;
	}
#undef IS
	return 0;
}

int npl_tune_path_allowed(const char *path)
{
	return path && path[0] == '/' && rel_kind(path + 1) == 1;
}

/* ---- the one way to a host file ----------------------------------------------------- */

static int use_openat2 = -1;   /* -1 not known yet, 0 not there (ENOSYS, seccomp), 1 there */

/* One component at a time from base: the folders with O_NOFOLLOW|O_DIRECTORY, the file with
 * O_NOFOLLOW (flags has it). A symbolic link fails with ENOTDIR or ELOOP. */
static int walk_open(int base, const char *rel, int flags)
{
	char comp[256];
	const char *p = rel;
	int dfd = base, fd, e;

	for (;;) {
		const char *slash = strchr(p, '/');
		size_t n;

		if (!slash) {
			fd = openat(dfd, p, flags);
			e = errno;
			if (dfd != base)
				close(dfd);
			errno = e;
			return fd;
		}
		n = (size_t)(slash - p);
		if (n >= sizeof(comp)) {
			if (dfd != base)
				close(dfd);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		fd = openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		e = errno;
		if (dfd != base)
			close(dfd);
		if (fd < 0) {
			errno = e;
			return -1;
		}
		dfd = fd;
		p = slash + 1;
	}
}

/* rel beneath base through no symbolic link at all; never blocks. */
static int open_nolinks(int base, const char *rel, int flags)
{
	flags |= O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
#if defined(HAVE_OPENAT2_H) && defined(SYS_openat2)
	if (use_openat2 < 0)
		use_openat2 = getenv("NPL_TEST_NO_OPENAT2") ? 0 : 1;
	if (use_openat2) {
		struct open_how how;
		long fd;

		memset(&how, 0, sizeof(how));
		how.flags = (uint64_t)flags;
		how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
		fd = syscall(SYS_openat2, base, rel, &how, sizeof(how));
		if (fd >= 0)
			return (int)fd;
		if (errno == ENOSYS)
			use_openat2 = 0;
		else if (errno != EPERM)   /* EPERM: seccomp's answer, or a file's (the walk tells) */
			return -1;
	}
#else
	(void)use_openat2;
#endif
	return walk_open(base, rel, flags);
}

/* a then b into out; -1 when they do not fit */
static int cat2(char *out, size_t sz, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la + lb >= sz)
		return -1;
	memcpy(out, a, la);
	memcpy(out + la, b, lb + 1);
	return 0;
}

/* Normalise dir + "/" + target (relative) into out: -1 when it climbs above the root. */
static int join_link(char *out, size_t outsz, const char *dir, size_t dirlen, const char *target)
{
	char tmp[PATH_MAX];
	size_t n = 0;
	const char *p;

	if (dirlen + strlen(target) + 2 > sizeof(tmp))
		return -1;
	memcpy(tmp, dir, dirlen);
	tmp[dirlen] = '\0';
	if (dirlen)
		strcat(tmp, "/");
	strcat(tmp, target);
	out[0] = '\0';
	for (p = tmp; *p;) {
		const char *slash = strchr(p, '/');
		size_t l = slash ? (size_t)(slash - p) : strlen(p);

		if (l == 0 || (l == 1 && p[0] == '.')) {
			/* nothing */
		} else if (l == 2 && p[0] == '.' && p[1] == '.') {
			char *s;

			if (n == 0)
				return -1;
			s = strrchr(out, '/');
			n = s ? (size_t)(s - out) : 0;
			out[n] = '\0';
		} else {
			if (n + l + 2 > outsz)
				return -1;
			if (n)
				out[n++] = '/';
			memcpy(out + n, p, l);
			n += l;
			out[n] = '\0';
		}
		if (!slash)
			break;
		p = slash + 1;
	}
	return n ? 0 : -1;
}

/* The first symbolic link on rel's way beneath base (rel's first skip bytes are known to hold
 * none): its end in *end and its target in buf. 0, or -1 when there is none. */
static int find_link(int base, const char *rel, size_t skip, size_t *end, char *buf, size_t bufsz)
{
	char pre[PATH_MAX];
	size_t i = skip;

	for (;;) {
		const char *slash = strchr(rel + i, '/');
		size_t e = slash ? (size_t)(slash - rel) : strlen(rel);
		ssize_t n;

		if (e >= sizeof(pre))
			return -1;
		memcpy(pre, rel + skip, e - skip);
		pre[e - skip] = '\0';
		n = readlinkat(base, pre, buf, bufsz - 1);
		if (n >= 0) {
			buf[n] = '\0';
			*end = e;
			return 0;
		}
		if (errno != EINVAL || !slash)
			return -1;
		i = e + 1;
	}
}

enum { KIND_CHECK, KIND_KNOWN, KIND_READ };

#define NOT_REGULAR "not a regular file (a FIFO, a device, a socket or a folder): refused"

/*
 * Every read and write of a host file comes here. rel (relative to the root) must be a tuning
 * file (O_DIRECTORY: the CPU folder); it is opened beneath the root's descriptor through no
 * symbolic link, except one whose target (relative, resolved against its folder) is itself a
 * tuning file beneath the root, as the kernel's cpuN/cpufreq -> ../cpufreq/policyN is; it never
 * blocks, and anything but a regular file (a folder for O_DIRECTORY) is refused. kind says how:
 * KIND_CHECK fstat()s the file; KIND_KNOWN skips that for a file this process has checked (the
 * write after the check: no system call more per file than before); KIND_READ leaves it to
 * host_read(), which looks only when a read gives nothing (sysfs and procfs files are never
 * empty). Returns the descriptor, with the path as opened in *resolved (malloc'ed, may be NULL)
 * and its stat in *st (KIND_CHECK; may be NULL); -1 with errno set, and why filled when the
 * refusal is confinement's.
 */
static int host_open(struct npl_tune *t, const char *rel, int flags, int kind, char **resolved, struct stat *st,
		     char *why, size_t whysz)
{
	char cur[PATH_MAX], next[PATH_MAX], target[PATH_MAX];
	int want = flags & O_DIRECTORY ? 2 : 1, hops;
	struct stat sb;
	size_t fl;

	why[0] = '\0';
	if (!st)
		st = &sb;
	if (strlen(rel) >= sizeof(cur) || rel_kind(rel) != want) {
		snprintf(why, whysz, "not a tuning file: only %s under the root are",
			 "proc/sys/..., sys/devices/system/cpu/{online,cpuN/cpufreq/...} and sys/kernel/debug/sched/...");
		errno = EACCES;
		return -1;
	}
	strcpy(cur, rel);
	/* the link followed last (the next CPU's is of the same kind): its target in its place */
	if (t->link_from && (fl = strlen(t->link_from)) < strlen(cur) && !strncmp(cur, t->link_from, fl) &&
	    cur[fl] == '/' && cat2(next, sizeof(next), t->link_to, cur + fl) == 0) {
		if (rel_kind(next) == want)
			strcpy(cur, next);
	}
	for (hops = 0; hops <= MAX_HOPS; hops++) {
		int base = t->rootfd, fd, e;
		size_t skip = 0, end;

		if (t->cpudir >= 0 && want == 1 && !strncmp(cur, CPUDIR "/", CPUDIR_LEN + 1)) {
			base = t->cpudir;
			skip = CPUDIR_LEN + 1;
		}
		fd = open_nolinks(base, cur + skip, flags);
		if (fd >= 0) {
			if (kind == KIND_CHECK &&
			    (fstat(fd, st) != 0 || (want == 1 ? !S_ISREG(st->st_mode) : !S_ISDIR(st->st_mode)))) {
				close(fd);
				snprintf(why, whysz, "%s", want == 1 ? NOT_REGULAR
								  : "not a folder");
				errno = want == 1 ? EINVAL : ENOTDIR;
				return -1;
			}
			if (resolved)
				*resolved = xstrdup(cur);
			return fd;
		}
		e = errno;
		if (e == EISDIR && want == 1) {
			snprintf(why, whysz, NOT_REGULAR);
			errno = e;
			return -1;
		}
		if (e != ELOOP && e != ENOTDIR && e != EXDEV)
			return -1;
		if (find_link(base, cur, skip, &end, target, sizeof(target))) {
			errno = e;   /* no link: a file where a folder should be */
			return -1;
		}
		{
			/* the link's folder, relative to the root */
			const char *slash = memrchr(cur, '/', end);
			size_t dirlen = slash ? (size_t)(slash - cur) : 0;
			char lto[PATH_MAX];

			if (target[0] == '/' || join_link(lto, sizeof(lto), cur, dirlen, target) ||
			    cat2(next, sizeof(next), lto, cur + end)) {
				snprintf(why, whysz, "a symbolic link leads out of the tuning files (%.*s -> %.200s): refused",
					 (int)(end > 200 ? 200 : end), cur, target);
				errno = ELOOP;
				return -1;
			}
			if (rel_kind(next) != want) {
				snprintf(why, whysz, "a symbolic link leads out of the tuning files (%.*s -> %.200s): refused",
					 (int)(end > 200 ? 200 : end), cur, target);
				errno = ELOOP;
				return -1;
			}
			if (cur[end] == '/') {
				free(t->link_from);
				free(t->link_to);
				t->link_from = strndup(cur, end);
				t->link_to = xstrdup(lto);
				if (!t->link_from)
					npl_oom();
			}
			strcpy(cur, next);
		}
	}
	snprintf(why, whysz, "too many symbolic links: refused");
	errno = ELOOP;
	return -1;
}

/* Open the root as a folder; -1 reported. */
static int open_root(struct npl_tune *t, struct npl_diag *d)
{
	t->rootfd = open(*t->root ? t->root : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (t->rootfd < 0) {
		struct npl_loc at = {*t->root ? t->root : "/", 0, 0};

		return npl_error(d, &at, "cannot open the root: %s", strerror(errno));
	}
	return 0;
}

static char *norm_root(const char *root)
{
	char *r = xstrdup(root && strcmp(root, "/") ? root : "");
	size_t n = strlen(r);

	while (n && r[n - 1] == '/')
		r[--n] = '\0';
	return r;
}

/* Read all of fd (a regular file of size hint); NULL with errno set (EFBIG: too large). */
static char *read_all(int fd, off_t hint, size_t limit, size_t *len)
{
	size_t cap = hint > 0 && (size_t)hint < limit ? (size_t)hint + 1 : 4096, n = 0;
	char *buf = malloc(cap + 1);

	if (!buf)
		npl_oom();
	for (;;) {
		ssize_t r = read(fd, buf + n, cap - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(buf);
			errno = e;
			return NULL;
		}
		n += (size_t)r;
		/* a short read is the end: regular files (and procfs, sysfs) read so */
		if (r == 0 || n < cap)
			break;
		if (cap >= limit) {
			free(buf);
			errno = EFBIG;
			return NULL;
		}
		cap *= 2;
		buf = realloc(buf, cap + 1);
		if (!buf)
			npl_oom();
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

static int write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t w = write(fd, data, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		if (w == 0) {
			errno = EIO;
			return -1;
		}
		data += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Replace the tuning file rel, checked earlier (probe()), with data; -1 with errno (and why) set. */
static int host_write(struct npl_tune *t, const char *rel, const char *data, size_t len, char *why, size_t whysz)
{
	int fd = host_open(t, rel, O_WRONLY | O_TRUNC, KIND_KNOWN, NULL, NULL, why, whysz), e;

	if (fd < 0)
		return -1;
	if (write_all(fd, data, len)) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return close(fd);
}

/* A tuning file's contents (read only), or NULL with errno (and why) set. Only an empty read
 * costs an fstat(): a FIFO or a device gives nothing, or too much (EFBIG), without blocking. */
static char *host_read(struct npl_tune *t, const char *rel, size_t *len, char *why, size_t whysz)
{
	struct stat st;
	int fd = host_open(t, rel, O_RDONLY, KIND_READ, NULL, NULL, why, whysz), e;
	char *text;

	if (fd < 0)
		return NULL;
	text = read_all(fd, 0, MAX_FILE, len);
	e = errno;
	if ((!text || !*len) && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
		free(text);
		close(fd);
		snprintf(why, whysz, NOT_REGULAR);
		errno = EINVAL;
		return NULL;
	}
	close(fd);
	errno = e;
	return text;
}

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
	return n;
}

static struct npl_tune_item *add_item(struct npl_tune *t, char *name, const char *rel, const char *wanted)
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
	it->path = path_of(t->root, "/%s", rel);
	it->rel = xstrdup(rel);
	it->wanted = xstrdup(wanted);
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
	int fd = host_open(t, it->rel, t->readonly ? O_RDONLY : O_RDWR, KIND_CHECK, &resolved, &st, why, sizeof(why)), e;

	if (fd < 0 && !why[0] && (errno == ENOENT || errno == ENOTDIR) && missing_ok)
		return 1;
	if (fd < 0 && why[0])
		return npl_error(d, &at, "cannot use %s: %s", it->name, why);
	if (fd < 0) {
		/* not writable: read it all the same, for the report */
		e = errno;
		free(it->current);
		it->current = host_read(t, it->rel, &it->current_len, why, sizeof(why));
		if (!it->current)
			return npl_error(d, &at, "cannot read %s: %s", it->name, why[0] ? why : strerror(errno));
		return npl_error(d, &at, "cannot write %s: %s", it->name, strerror(e));
	}
	free(it->rel);
	it->rel = resolved;
	it->current = read_all(fd, st.st_size, MAX_FILE, &it->current_len);
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
	char *text = host_read(t, CPUDIR "/online", &len, why, sizeof(why));
	int i, count = 0;

	if (!text && why[0]) {
		char *path = path_of(t->root, "/" CPUDIR "/online");
		struct npl_loc at = {path, 0, 0};

		npl_error(d, &at, "cannot read the online CPU list: %s", why);
		free(path);
		return -1;
	}
	if (text) {
		if (npl_cpu_list_parse(text, set, n)) {
			char *path = path_of(t->root, "/" CPUDIR "/online");
			struct npl_loc at = {path, 0, 0};

			npl_error(d, &at, "cannot read the online CPU list '%.*s'", (int)strcspn(text, "\n"), text);
			free(text);
			free(path);
			return -1;
		}
	} else {
		/* no online list (some containers): every cpuN folder */
		int fd = host_open(t, CPUDIR, O_RDONLY | O_DIRECTORY, KIND_CHECK, NULL, NULL, why, sizeof(why));
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
	t.root = norm_root(root);
	rc = open_root(&t, d) ? -1 : cpus_online(&t, set, n, d);
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
	unsigned char *online = malloc(MAX_CPUS);
	char why[512];
	int c, rc = 0, bad = 0;

	if (!online)
		npl_oom();
	/* every governor is opened relative to the cpu folder: a short path walk per CPU */
	t->cpudir = host_open(t, CPUDIR, O_RDONLY | O_DIRECTORY, KIND_CHECK, NULL, NULL, why, sizeof(why));
	if (t->cpudir < 0 && (why[0] || errno != ENOENT)) {
		char *dir = path_of(t->root, "/" CPUDIR);
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
		it = add_item(t, xstrdup(name), rel, wanted);
		/* what the CPU offers first, then whether the file can be changed (as before) */
		snprintf(arel, sizeof(arel), CPUDIR "/cpu%d/cpufreq/scaling_available_governors", c);
		avail = host_read(t, arel, &alen, why, sizeof(why));
		if (!avail && why[0]) {
			char *avail_path = path_of(t->root, "/%s", arel);
			struct npl_loc at = {avail_path, 0, 0};

			rc = npl_error(d, &at, "cannot use the governors cpu%d offers: %s", c, why);
			free(avail_path);
		} else if (avail && !offers(avail, wanted)) {
			if (++bad <= MAX_REPORTED) {
				char *avail_path = path_of(t->root, "/%s", arel);
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
		char *dir = path_of(t->root, "/" CPUDIR);

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
		struct npl_tune_item *it = add_item(t, xstrdup(name), p->valuestring + 1, npl_buf_str(&v));
		char *path;

		rc = probe(t, it, 1, d);
		if (rc != 1) {
			npl_buf_release(&tried);
			npl_buf_release(&v);
			return rc;
		}
		path = xstrdup(it->path);
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

		if (!cJSON_IsObject(g) || !v || strchr(v, '$') || !comp_ok(v, strlen(v)))
			rc = npl_error(d, source ? &at : NULL, "tuning: the cpu_governor is not a governor's name");
	}
	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(tuning, "sysctl")) {
		const char *name = npl_json_str(s, "name"), *value = npl_json_str(s, "value");
		const cJSON *paths = cJSON_GetObjectItemCaseSensitive(s, "paths");
		struct npl_buf v = NPL_BUF_INIT;

		i++;
		if (!name || !value || !comp_ok(name, strlen(name))) {
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

int npl_tune_collect(struct npl_tune *t, const cJSON *tuning, const char *root, const char *source,
		     struct npl_diag *d)
{
	return npl_tune_collect_ex(t, tuning, root, source, 0, d);
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
		fd = host_open(t, it->rel, O_RDWR, KIND_KNOWN, NULL, NULL, why, sizeof(why));
		if (fd >= 0) {
			close(fd);
			continue;
		}
		rc = npl_error(d, &at, "cannot write %s: %s%s", it->name, why[0] ? why : strerror(errno),
			       errno == EACCES || errno == EPERM || errno == EROFS ? " (run as root)" : "");
	}
	return rc;
}

int npl_tune_collect_ex(struct npl_tune *t, const cJSON *tuning, const char *root, const char *source,
			unsigned flags, struct npl_diag *d)
{
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(tuning, "cpu_governor"), *s;
	int rc = 0;

	memset(t, 0, sizeof(*t));
	t->readonly = !!(flags & NPL_TUNE_READ_ONLY);
	t->cpudir = -1;
	t->rootfd = -1;
	t->root = norm_root(root);
	if (!t->readonly)
		keep_budget(t);
	if (validate_tuning(tuning, source, d) || open_root(t, d))
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

/* ---- the journal ---------------------------------------------------------------------- */

char *npl_tune_journal_path(const char *root, const char *journal)
{
	const char *r = root && strcmp(root, "/") ? root : "";

	if (journal)
		return xstrdup(journal);
	return path_of(r, "%s", NPL_TUNE_JOURNAL);
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void b64_encode(struct npl_buf *b, const unsigned char *s, size_t n)
{
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		char q[4] = {b64[s[i] >> 2], b64[((s[i] & 3) << 4) | (s[i + 1] >> 4)],
			     b64[((s[i + 1] & 15) << 2) | (s[i + 2] >> 6)], b64[s[i + 2] & 63]};

		npl_buf_add(b, q, 4);
	}
	if (n - i == 1) {
		char q[4] = {b64[s[i] >> 2], b64[(s[i] & 3) << 4], '=', '='};

		npl_buf_add(b, q, 4);
	} else if (n - i == 2) {
		char q[4] = {b64[s[i] >> 2], b64[((s[i] & 3) << 4) | (s[i + 1] >> 4)], b64[(s[i + 1] & 15) << 2], '='};

		npl_buf_add(b, q, 4);
	}
}

static int b64_val(char c)
{
	const char *p = c ? strchr(b64, c) : NULL;

	return p ? (int)(p - b64) : -1;
}

/* Strict base64 (padded, canonical) into a malloc'ed buffer; NULL when it is not. */
static char *b64_decode(const char *s, size_t *len)
{
	size_t n = strlen(s), i, o = 0;
	char *out;

	if (n % 4)
		return NULL;
	out = malloc(n / 4 * 3 + 1);
	if (!out)
		npl_oom();
	for (i = 0; i < n; i += 4) {
		int a = b64_val(s[i]), b = b64_val(s[i + 1]), c = s[i + 2] == '=' ? -2 : b64_val(s[i + 2]),
		    e = s[i + 3] == '=' ? -2 : b64_val(s[i + 3]);

		if (a < 0 || b < 0 || c == -1 || e == -1 || (c == -2 && e != -2) || ((c == -2 || e == -2) && i + 4 != n) ||
		    (c == -2 && (b & 15)) || (c >= 0 && e == -2 && (c & 3))) {
			free(out);
			return NULL;
		}
		out[o++] = (char)((a << 2) | (b >> 4));
		if (c >= 0)
			out[o++] = (char)(((b & 15) << 4) | (c >> 2));
		if (e >= 0)
			out[o++] = (char)(((c & 3) << 6) | e);
	}
	out[o] = '\0';
	*len = o;
	return out;
}

void npl_tune_journal_release(struct npl_tune_journal *j)
{
	int i;

	for (i = 0; i < j->n; i++) {
		free(j->v[i].name);
		free(j->v[i].path);
		free(j->v[i].data);
	}
	free(j->v);
	free(j->root);
	memset(j, 0, sizeof(*j));
}

static int by_path(const void *a, const void *b)
{
	const struct npl_tune_entry *const *x = a, *const *y = b;

	return strcmp((*x)->path, (*y)->path);
}

/* 1 when a name is printable text of a reasonable length */
static int name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 128)
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == '"' || *s == '\\' || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

#define MAX_JOURNAL_ERRORS 10

int npl_tune_journal_parse(struct npl_tune_journal *j, const char *file, const char *text, size_t len,
			   const char *root, struct npl_diag *d)
{
	struct npl_loc at = {file, 0, 0};
	const cJSON *e, *k, *entries;
	const char *fmt, *jroot;
	cJSON *o;
	int v1, i = 0, bad = 0, cap;

	memset(j, 0, sizeof(*j));
	o = memchr(text, '\0', len) ? NULL : cJSON_ParseWithLength(text, len);
	fmt = o ? npl_json_str(o, "format") : NULL;
	if (!cJSON_IsObject(o) || !fmt || (strcmp(fmt, NPL_TUNE_JOURNAL_FORMAT) && strcmp(fmt, JOURNAL_V1))) {
		cJSON_Delete(o);
		return npl_error(d, &at, "not a tuning journal (format %s)", NPL_TUNE_JOURNAL_FORMAT);
	}
	v1 = !strcmp(fmt, JOURNAL_V1);
	cJSON_ArrayForEach(k, o)
		if (strcmp(k->string, "format") && strcmp(k->string, "root") && strcmp(k->string, "entries") &&
		    bad++ < MAX_JOURNAL_ERRORS)
			npl_error(d, &at, "the tuning journal has an unknown key '%s'", k->string);
	jroot = npl_json_str(o, "root");
	entries = cJSON_GetObjectItemCaseSensitive(o, "entries");
	if (!jroot || jroot[0] != '/' || (strlen(jroot) > 1 && jroot[strlen(jroot) - 1] == '/')) {
		bad++;
		npl_error(d, &at, "the tuning journal names no root (an absolute path)");
	} else if (root) {
		char *want = norm_root(root);

		if (strcmp(*want ? want : "/", jroot)) {
			bad++;
			npl_error(d, &at, "the tuning journal is for the root %s, not %s: give --root %s", jroot,
				  *want ? want : "/", jroot);
		}
		free(want);
	}
	if (!cJSON_IsArray(entries)) {
		bad++;
		npl_error(d, &at, "the tuning journal has no list of entries");
	}
	cap = cJSON_GetArraySize(entries);
	j->v = calloc((size_t)cap + 1, sizeof(*j->v));
	if (!j->v)
		npl_oom();
	j->root = xstrdup(jroot ? jroot : "/");
	if (!cJSON_IsArray(entries))
		entries = NULL;
	cJSON_ArrayForEach(e, entries) {
		const char *name = npl_json_str(e, "name"), *path = npl_json_str(e, "path");
		const char *contents = npl_json_str(e, v1 ? "contents" : "base64");
		const char *problem = NULL;
		char *data = NULL, *host = NULL;
		size_t dlen = 0;

		i++;
		if (!cJSON_IsObject(e)) {
			problem = "not an object";
		} else {
			cJSON_ArrayForEach(k, e)
				if (strcmp(k->string, "name") && strcmp(k->string, "path") &&
				    strcmp(k->string, v1 ? "contents" : "base64"))
					problem = "an unknown key";
		}
		if (!problem && (!name || !name_ok(name)))
			problem = "no name (a string)";
		if (!problem && !path)
			problem = "no path (a string)";
		if (!problem && !contents)
			problem = v1 ? "no contents (a string)" : "no base64 contents (a string)";
		if (!problem && v1) {
			/* /1 journals name the file with the root included */
			size_t rl = strcmp(j->root, "/") ? strlen(j->root) : 0;

			if (strncmp(path, j->root, rl) || path[rl] != '/')
				problem = "a path outside the journal's root";
			else
				host = xstrdup(path + rl);
		} else if (!problem) {
			host = xstrdup(path);
		}
		if (!problem && !npl_tune_path_allowed(host))
			problem = "a path that is not a tuning file (only /proc/sys/..., /sys/devices/system/cpu/... and /sys/kernel/debug/sched/...)";
		if (!problem) {
			if (v1) {
				data = xstrdup(contents);
				dlen = strlen(contents);
			} else if (!(data = b64_decode(contents, &dlen))) {
				problem = "contents that are not base64";
			}
		}
		if (!problem && dlen > MAX_FILE)
			problem = "contents larger than 1 MiB";
		if (problem) {
			if (bad++ < MAX_JOURNAL_ERRORS)
				npl_error(d, &at, "entry %d%s%s%s: %s", i, name ? " (" : "", name ? name : "",
					  name ? ")" : "", problem);
			free(data);
			free(host);
			continue;
		}
		j->v[j->n].name = xstrdup(name);
		j->v[j->n].path = host;
		j->v[j->n].data = data;
		j->v[j->n].len = dlen;
		j->n++;
	}
	if (!bad && j->n > 1) {
		/* a file twice: which value is the original? */
		struct npl_tune_entry **s = malloc((size_t)j->n * sizeof(*s));

		if (!s)
			npl_oom();
		for (i = 0; i < j->n; i++)
			s[i] = &j->v[i];
		qsort(s, (size_t)j->n, sizeof(*s), by_path);
		for (i = 1; i < j->n; i++)
			if (!strcmp(s[i]->path, s[i - 1]->path) && bad++ < MAX_JOURNAL_ERRORS)
				npl_error(d, &at, "entry %d (%s): the path %s is also entry %d", (int)(s[i] - j->v) + 1,
					  s[i]->name, s[i]->path, (int)(s[i - 1] - j->v) + 1);
		free(s);
	}
	if (bad > MAX_JOURNAL_ERRORS)
		npl_error(d, &at, "%d more problems in the tuning journal", bad - MAX_JOURNAL_ERRORS);
	cJSON_Delete(o);
	if (bad) {
		npl_tune_journal_release(j);
		return -1;
	}
	return 0;
}

/* The journal's folder (created when create is set) and its file name there; -1 with errno. The
 * default journal is reached from the root's descriptor without following a link. */
static int journal_dir(struct npl_tune *t, const char *journal, int create, const char **name, int *nofollow,
		       struct npl_diag *d)
{
	static const char *const comps[] = {"run", "npulaunch"};
	int dfd, i;

	if (journal) {
		const char *slash = strrchr(journal, '/');
		char *dir = slash ? strndup(journal, slash == journal ? 1 : (size_t)(slash - journal)) : xstrdup(".");

		if (!dir)
			npl_oom();
		*name = slash ? slash + 1 : journal;
		*nofollow = 0;
		if (create && strcmp(dir, ".") && npl_mkdirs(dir, 0755, d)) {
			free(dir);
			errno = 0;
			return -1;
		}
		dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		free(dir);
		return dfd;
	}
	*name = strrchr(NPL_TUNE_JOURNAL, '/') + 1;
	*nofollow = O_NOFOLLOW;
	dfd = t->rootfd;
	for (i = 0; i < 2; i++) {
		int fd, e;

		if (create && mkdirat(dfd, comps[i], 0755) != 0 && errno != EEXIST) {
			e = errno;
			if (dfd != t->rootfd)
				close(dfd);
			errno = e;
			return -1;
		}
		fd = openat(dfd, comps[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		e = errno;
		if (dfd != t->rootfd)
			close(dfd);
		if (fd < 0) {
			errno = e;
			return -1;
		}
		dfd = fd;
	}
	return dfd;
}

/* Read and validate the journal: 1 when there is none, 0 with *j filled, -1 reported. */
static int load_journal(struct npl_tune *t, int dfd, const char *name, int nofollow, const char *jpath,
			struct npl_tune_journal *j, struct npl_diag *d)
{
	struct npl_loc at = {jpath, 0, 0};
	struct stat st;
	size_t len;
	char *text;
	int fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | nofollow), rc, e;

	memset(j, 0, sizeof(*j));
	if (fd < 0 && errno == ENOENT)
		return 1;
	if (fd < 0)
		return npl_error(d, &at, "cannot read the tuning journal: %s",
				 errno == ELOOP ? "it is a symbolic link: refused" : strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return npl_error(d, &at, "cannot use the tuning journal: not a regular file");
	}
	text = read_all(fd, st.st_size, MAX_JOURNAL, &len);
	e = errno;
	close(fd);
	if (!text)
		return npl_error(d, &at, "cannot read the tuning journal: %s", strerror(e));
	rc = npl_tune_journal_parse(j, jpath, text, len, *t->root ? t->root : "/", d);
	free(text);
	return rc;
}

/* Write text as the journal, through a new file renamed into place. */
static int store_journal(int dfd, const char *name, const char *text, size_t len, const char *jpath,
			 struct npl_diag *d)
{
	struct npl_loc at = {jpath, 0, 0};
	char tmp[300];
	int fd = -1, i, e;

	for (i = 0; i < 100 && fd < 0; i++) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		snprintf(tmp, sizeof(tmp), ".%.200s.%ld.%lx", name, (long)getpid(), (unsigned long)ts.tv_nsec + (unsigned long)i);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0)
		return npl_error(d, &at, "cannot write the tuning journal: %s", strerror(errno));
	if (write_all(fd, text, len) || fsync(fd)) {
		e = errno;
		close(fd);
		unlinkat(dfd, tmp, 0);
		return npl_error(d, &at, "cannot write the tuning journal: %s", strerror(e));
	}
	if (close(fd) || renameat(dfd, tmp, dfd, name)) {
		e = errno;
		unlinkat(dfd, tmp, 0);
		return npl_error(d, &at, "cannot write the tuning journal: %s", strerror(e));
	}
	return 0;
}

static void journal_entry(struct npl_buf *j, int first, const char *name, const char *path, const char *data,
			  size_t len)
{
	/* one entry a line: the scripts read and write the same layout */
	npl_buf_puts(j, first ? "\n\t\t{\"name\": " : ",\n\t\t{\"name\": ");
	npl_buf_json_string(j, name);
	npl_buf_puts(j, ", \"path\": ");
	npl_buf_json_string(j, path);
	npl_buf_puts(j, ", \"base64\": \"");
	b64_encode(j, (const unsigned char *)data, len);
	npl_buf_puts(j, "\"}");
}

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

/* Undo what this process changed, newest first, up to item upto. */
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

static int undo(struct npl_tune *t, int upto, struct npl_diag *d)
{
	int i, rc = 0;

	for (i = upto - 1; i >= 0; i--) {
		struct npl_tune_item *it = &t->v[i];
		char why[512];

		if (!it->current || npl_tune_item_ok(it))
			continue;
		if (host_write(t, it->rel, it->current, it->current_len, why, sizeof(why))) {
			struct npl_loc at = {it->path, 0, 0};

			rc = npl_error(d, &at, "could not put back %s: %s", it->name, why[0] ? why : strerror(errno));
		}
	}
	return rc;
}

static int apply_items(struct npl_tune *t, const char *journal, int *changed, struct npl_diag *d)
{
	char *jpath = npl_tune_journal_path(t->root, journal);
	struct npl_tune_journal old;
	struct npl_buf j = NPL_BUF_INIT;
	struct npl_loc at = {jpath, 0, 0};
	const char *name;
	struct key *keys;
	int i, n = 0, found, dfd, nofollow, added = 0, rl = (int)strlen(t->root);

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
	dfd = journal_dir(t, journal, 1, &name, &nofollow, d);
	if (dfd < 0) {
		if (errno)
			npl_error(d, &at, "cannot write the tuning journal: %s", strerror(errno));
		free(jpath);
		return -1;
	}
	found = load_journal(t, dfd, name, nofollow, jpath, &old, d);
	if (found < 0) {
		npl_error(d, &at, "the tuning journal is kept as it is; nothing was changed");
		close(dfd);
		free(jpath);
		return -1;
	}
	npl_buf_puts(&j, "{\n\t\"format\": \"" NPL_TUNE_JOURNAL_FORMAT "\",\n\t\"root\": ");
	npl_buf_json_string(&j, *t->root ? t->root : "/");
	npl_buf_puts(&j, ",\n\t\"entries\": [");
	for (i = 0; found == 0 && i < old.n; i++)
		journal_entry(&j, i == 0, old.v[i].name, old.v[i].path, old.v[i].data, old.v[i].len);
	/* first value wins: a file the journal holds keeps its value; each new one is added */
	keys = malloc(((size_t)old.n + (size_t)t->n + 1) * sizeof(*keys));
	if (!keys)
		npl_oom();
	for (i = 0; i < old.n; i++)
		keys[i] = (struct key){old.v[i].path, i};
	for (i = 0; i < t->n; i++)
		keys[old.n + i] = (struct key){t->v[i].path + rl, old.n + i};
	qsort(keys, (size_t)(old.n + t->n), sizeof(*keys), by_key);
	{
		unsigned char *skip = calloc((size_t)t->n + 1, 1);

		if (!skip)
			npl_oom();
		for (i = 1; i < old.n + t->n; i++)
			if (!strcmp(keys[i].path, keys[i - 1].path) && keys[i].order >= old.n)
				skip[keys[i].order - old.n] = 1;
		for (i = 0; i < t->n; i++) {
			if (skip[i] || !t->v[i].current)
				continue;
			journal_entry(&j, old.n + added == 0, t->v[i].name, t->v[i].path + rl, t->v[i].current,
				      t->v[i].current_len);
			added++;
		}
		free(skip);
	}
	free(keys);
	npl_buf_puts(&j, "\n\t]\n}\n");
	npl_tune_journal_release(&old);
	free(t->jpath);
	t->jpath = NULL;
	if ((found == 1 || added) && store_journal(dfd, name, j.data, j.len, jpath, d)) {
		npl_buf_release(&j);
		close(dfd);
		free(jpath);
		return -1;
	}
	npl_buf_release(&j);
	if (found == 1)
		t->jpath = xstrdup(jpath);
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
			rc = host_write(t, it->rel, b.data, b.len, why, sizeof(why));
		}
		npl_buf_release(&b);
		if (rc) {
			struct npl_loc p = {it->path, 0, 0};

			npl_error(d, &p, "cannot write %s: %s", it->name, why[0] ? why : strerror(errno));
			/* all undone, this file too (it was truncated): a journal made by this call has
			 * nothing left to say */
			if (undo(t, i + 1, d) == 0 && found == 1)
				unlinkat(dfd, name, 0);
			free(t->jpath);
			t->jpath = NULL;
			close(dfd);
			free(jpath);
			return -1;
		}
		n++;
	}
	close(dfd);
	free(jpath);
	if (changed)
		*changed = n;
	return 0;
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

int npl_tune_revert(const char *root, const char *journal, int *restored, struct npl_diag *d)
{
	char *jpath = npl_tune_journal_path(root, journal);
	struct npl_loc at = {jpath, 0, 0};
	struct npl_tune_journal j;
	struct npl_tune t;
	const char *name;
	int rc = 0, n = 0, i, dfd = -1, nofollow, found;
	unsigned char *same = NULL;

	if (restored)
		*restored = 0;
	memset(&t, 0, sizeof(t));
	memset(&j, 0, sizeof(j));
	t.cpudir = -1;
	t.root = norm_root(root);
	if (open_root(&t, d)) {
		rc = -1;
		goto out;
	}
	dfd = journal_dir(&t, journal, 0, &name, &nofollow, d);
	found = dfd < 0 ? (errno == ENOENT ? 1 : -1) : load_journal(&t, dfd, name, nofollow, jpath, &j, d);
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
	same = calloc((size_t)j.n + 1, 1);
	if (!same)
		npl_oom();
	for (i = 0; i < j.n; i++) {
		char why[512], *now, *resolved = NULL;
		struct npl_loc p = {NULL, 0, 0};
		struct stat st;
		size_t len;
		int fd = host_open(&t, j.v[i].path + 1, O_RDWR, KIND_CHECK, &resolved, &st, why, sizeof(why));

		p.file = path_of(t.root, "%s", j.v[i].path);
		if (fd < 0) {
			rc = npl_error(d, &p, "cannot restore %s (entry %d): %s", j.v[i].name, i + 1,
				       why[0] ? why : strerror(errno));
			free((char *)p.file);
			continue;
		}
		now = read_all(fd, st.st_size, MAX_FILE, &len);
		if (!now)
			rc = npl_error(d, &p, "cannot read %s (entry %d): %s", j.v[i].name, i + 1, strerror(errno));
		close(fd);
		same[i] = now && len == j.v[i].len && !memcmp(now, j.v[i].data, len);
		free(now);
		/* restore through the path as opened */
		free(j.v[i].path);
		j.v[i].path = resolved;
		free((char *)p.file);
	}
	if (rc) {
		npl_error(d, &at, "nothing was restored; the journal is kept");
		goto out;
	}
	for (i = 0; i < j.n; i++) {
		char why[512];

		if (same[i])
			continue;
		if (host_write(&t, j.v[i].path, j.v[i].data, j.v[i].len, why, sizeof(why))) {
			char *p = path_of(t.root, "/%s", j.v[i].path);
			struct npl_loc pl = {p, 0, 0};

			rc = npl_error(d, &pl, "cannot restore %s (entry %d): %s", j.v[i].name, i + 1,
				       why[0] ? why : strerror(errno));
			free(p);
			continue;
		}
		n++;
	}
	if (rc)
		npl_error(d, &at, "the journal is kept: revert again once the files can be written");
	else if (unlinkat(dfd, name, 0) != 0)
		rc = npl_error(d, &at, "cannot remove the tuning journal: %s", strerror(errno));
out:
	free(same);
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
	/* > 0: a zeroed struct that was never collected must not close stdin */
	if (t->cpudir > 0)
		close(t->cpudir);
	if (t->rootfd > 0)
		close(t->rootfd);
	restore_nofile();
	memset(t, 0, sizeof(*t));
}
