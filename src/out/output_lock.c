/* output_lock.c: who holds the flock a commit waits for, and which mount a folder is on; see
 * output_internal.h. */
#define _GNU_SOURCE /* getline, name_to_handle_at, statx */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "output_internal.h"

/* /proc/locks: "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF" (major and minor in hex) */
pid_t npl_out_lock_holder(const struct stat *st)
{
	FILE *f = fopen("/proc/locks", "re");
	char *line = NULL;
	size_t cap = 0;
	pid_t who = 0;

	if (!f)
		return 0;
	while (!who && getline(&line, &cap, f) > 0) {
		char kind[16], mode[16], access[16];
		unsigned maj, min;
		unsigned long long ino;
		long pid;

		if (strstr(line, "->"))
			continue; /* a waiter, not a holder */
		if (sscanf(line, "%*d: %15s %15s %15s %ld %x:%x:%llu", kind, mode, access, &pid, &maj, &min, &ino) == 7 &&
		    !strcmp(kind, "FLOCK") && maj == major(st->st_dev) && min == minor(st->st_dev) &&
		    ino == (unsigned long long)st->st_ino && pid > 0)
			who = (pid_t)pid;
	}
	free(line);
	fclose(f);
	return who;
}

/* The parent of pid, from /proc/PID/stat ("PID (COMM) S PPID ..."; COMM may hold anything). */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *close;
	FILE *f;
	size_t n;
	long ppid;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if (!(f = fopen(path, "re")))
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (!(close = strrchr(buf, ')')) || sscanf(close + 1, " %*c %ld", &ppid) != 1)
		return 0;
	return (pid_t)ppid;
}

int npl_out_is_ancestor(pid_t pid)
{
	pid_t p = getppid();
	int depth;

	for (depth = 0; p > 1 && depth < 4096; depth++, p = parent_of(p))
		if (p == pid)
			return 1;
	return pid == 1 && p == 1;
}

/* The mount a path is on (statx's id, else name_to_handle_at's); -1 when neither says. A bind
 * mount has its parent's st_dev, but it cannot be renamed. */
long long npl_out_mount_of(const char *path)
{
	struct file_handle fh = {0};
	int id;
#ifdef STATX_MNT_ID
	struct statx sx;

	if (!statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sx) &&
	    (sx.stx_mask & STATX_MNT_ID))
		return (long long)sx.stx_mnt_id;
#endif
	/* no room for the handle: EOVERFLOW, with the mount id */
	if (!name_to_handle_at(AT_FDCWD, path, &fh, &id, 0) || errno == EOVERFLOW)
		return id;
	return -1;
}
