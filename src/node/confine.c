/* confine.c: the confinement of host tuning to the tuning files under the root prefix: the
 * allowlist, the one way to a host file (npl_tune_host_open()) and the readers and writers over
 * it; see tune.h. */
#define _GNU_SOURCE /* syscall(), O_PATH, memrchr() */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef __has_include
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define HAVE_OPENAT2_H 1
#endif
#endif

#include "npulaunch/arena.h"
#include "npulaunch/buf.h"
#include "npulaunch/tune.h"
#include "tune_internal.h"

#define MAX_HOPS 8

char *npl_tune_path_of(const char *root, const char *fmt, ...)
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

int npl_tune_comp_ok(const char *s, size_t n)
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
 * kernel's cpuN/cpufreq links lead), sys/kernel/debug/sched/..., proc/irq/N/smp_affinity_list;
 * every component plain (no
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

		if (n == 16 || !npl_tune_comp_ok(p, l))
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
	/* an interrupt's CPUs (a die's queues, bound by the affinity policy) */
	if (n == 4 && IS(0, "proc") && IS(1, "irq") && numbered(c[2], len[2], "") && IS(3, "smp_affinity_list"))
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

#define NOT_REGULAR "not a regular file (a FIFO, a device, a socket or a folder): refused"

/*
 * Every read and write of a host file comes here. rel (relative to the root) must be a tuning
 * file (O_DIRECTORY: the CPU folder); it is opened beneath the root's descriptor through no
 * symbolic link, except one whose target (relative, resolved against its folder) is itself a
 * tuning file beneath the root, as the kernel's cpuN/cpufreq -> ../cpufreq/policyN is; it never
 * blocks, and anything but a regular file (a folder for O_DIRECTORY) is refused. kind says how:
 * KIND_CHECK fstat()s the file; KIND_KNOWN skips that for a file this process has checked (the
 * write after the check: no system call more per file than before); KIND_READ leaves it to
 * npl_tune_host_read(), which looks only when a read gives nothing (sysfs and procfs files are
 * never empty). Returns the descriptor, with the path as opened in *resolved (malloc'ed, may be NULL)
 * and its stat in *st (KIND_CHECK; may be NULL); -1 with errno set, and why filled when the
 * refusal is confinement's.
 */
int npl_tune_host_open(struct npl_tune *t, const char *rel, int flags, int kind, char **resolved,
		       struct stat *st, char *why, size_t whysz)
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
				*resolved = npl_xstrdup(cur);
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
				t->link_from = npl_xstrndup(cur, end);
				t->link_to = npl_xstrdup(lto);
			}
			strcpy(cur, next);
		}
	}
	snprintf(why, whysz, "too many symbolic links: refused");
	errno = ELOOP;
	return -1;
}

/* Open the root as a folder; -1 reported. */
int npl_tune_open_root(struct npl_tune *t, struct npl_diag *d)
{
	t->rootfd = open(*t->root ? t->root : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (t->rootfd < 0) {
		struct npl_loc at = {*t->root ? t->root : "/", 0, 0};

		return npl_error(d, &at, "cannot open the root: %s", strerror(errno));
	}
	return 0;
}

char *npl_tune_norm_root(const char *root)
{
	char *r = npl_xstrdup(root && strcmp(root, "/") ? root : "");
	size_t n = strlen(r);

	while (n && r[n - 1] == '/')
		r[--n] = '\0';
	return r;
}

/* Read all of fd (a regular file of size hint); NULL with errno set (EFBIG: too large). */
char *npl_tune_read_all(int fd, off_t hint, size_t limit, size_t *len)
{
	size_t cap = hint > 0 && (size_t)hint < limit ? (size_t)hint + 1 : 4096, n = 0;
	char *buf = npl_xmalloc(cap + 1);

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
		buf = npl_xrealloc(buf, cap + 1);
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

int npl_tune_write_all(int fd, const char *data, size_t len)
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
int npl_tune_host_write(struct npl_tune *t, const char *rel, const char *data, size_t len, char *why,
			size_t whysz)
{
	int fd = npl_tune_host_open(t, rel, O_WRONLY | O_TRUNC, KIND_KNOWN, NULL, NULL, why, whysz), e;

	if (fd < 0)
		return -1;
	if (npl_tune_write_all(fd, data, len)) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return close(fd);
}

/* A tuning file's contents (read only), or NULL with errno (and why) set. Only an empty read
 * costs an fstat(): a FIFO or a device gives nothing, or too much (EFBIG), without blocking. */
char *npl_tune_host_read(struct npl_tune *t, const char *rel, size_t *len, char *why, size_t whysz)
{
	struct stat st;
	int fd = npl_tune_host_open(t, rel, O_RDONLY, KIND_READ, NULL, NULL, why, whysz), e;
	char *text;

	if (fd < 0)
		return NULL;
	text = npl_tune_read_all(fd, 0, MAX_FILE, len);
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
