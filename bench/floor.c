/*
 * floor.c: lower bounds for bench/run.sh. Each mode does only the system
 * calls its task cannot do without, with no checks, no messages and no
 * parsing, in a statically linked program (the fastest start there is).
 * What a real tool costs above these is its own work; what these cost is the
 * machine's.
 *
 *   floor tune ROOT NCPUS   open, write, close each CPU's scaling_governor
 *                           (relative to the cpu folder) and the three sysctls
 *   floor walk DIR          read every folder below DIR and fstatat() each
 *                           file: what noticing a changed recipe costs
 *   floor write OUT LIST    make the folders and files LIST names ("D path"
 *                           or "F path size" per line) under OUT, each file
 *                           through a temporary file renamed into place, as
 *                           render writes them
 *
 * Part of bench/run.sh; not installed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int put(int dirfd, const char *rel, const char *text, size_t n)
{
	int fd = openat(dirfd, rel, O_WRONLY | O_TRUNC | O_CLOEXEC);

	if (fd < 0 || write(fd, text, n) != (ssize_t)n || close(fd)) {
		perror(rel);
		return 1;
	}
	return 0;
}

static int tune(const char *rootpath, int cpus)
{
	static const char *const sysctl[][2] = {
		{"proc/sys/vm/swappiness", "0\n"},
		{"proc/sys/kernel/numa_balancing", "0\n"},
		{"proc/sys/kernel/sched_migration_cost_ns", "50000\n"},
	};
	char rel[64];
	int root = open(rootpath, O_RDONLY | O_DIRECTORY | O_CLOEXEC), cpu, c, i;

	cpu = root < 0 ? -1 : openat(root, "sys/devices/system/cpu", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cpu < 0) {
		perror(rootpath);
		return 1;
	}
	for (c = 0; c < cpus; c++) {
		snprintf(rel, sizeof(rel), "cpu%d/cpufreq/scaling_governor", c);
		if (put(cpu, rel, "performance\n", 12))
			return 1;
	}
	for (i = 0; i < 3; i++)
		if (put(root, sysctl[i][0], sysctl[i][1], strlen(sysctl[i][1])))
			return 1;
	return 0;
}

static long walk(int at, const char *name)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;
	struct stat st;
	long n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (de->d_type == DT_DIR)
			n += walk(dirfd(d), de->d_name);
		else if (fstatat(dirfd(d), de->d_name, &st, 0) == 0)
			n++;
	}
	closedir(d);
	return n;
}

static int write_tree(const char *out, const char *list)
{
	static char data[1 << 20];
	char line[4096], path[8192], tmp[8192 + 8];
	FILE *fp = fopen(list, "r");

	memset(data, '#', sizeof(data));
	if (!fp) {
		perror(list);
		return 1;
	}
	if (mkdir(out, 0755)) {
		perror(out);
		return 1;
	}
	while (fgets(line, sizeof(line), fp)) {
		char *sp = strrchr(line, ' ');
		size_t size = 0;
		int fd;

		line[strcspn(line, "\n")] = '\0';
		if (line[0] == 'D') {
			snprintf(path, sizeof(path), "%s/%s", out, line + 2);
			if (mkdir(path, 0755))
				return 1;
			continue;
		}
		if (!sp || (size = (size_t)atol(sp + 1)) > sizeof(data))
			return 1;
		*sp = '\0';
		snprintf(path, sizeof(path), "%s/%s", out, line + 2);
		snprintf(tmp, sizeof(tmp), "%s.tmp", path);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, data, size) != (ssize_t)size || fchmod(fd, 0755) || close(fd) ||
		    rename(tmp, path)) {
			perror(path);
			return 1;
		}
	}
	fclose(fp);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "tune"))
		return tune(argv[2], atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "walk"))
		return walk(AT_FDCWD, argv[2]) > 0 ? 0 : 1;
	if (argc == 4 && !strcmp(argv[1], "write"))
		return write_tree(argv[2], argv[3]);
	fprintf(stderr, "usage: floor tune ROOT NCPUS | walk DIR | write OUT LIST\n");
	return 2;
}
