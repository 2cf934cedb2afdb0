/*
 * floor-tune.c: the lower bound of tuning a fake root, for bench/run.sh. It
 * does only what must happen, with no checks, no journal and no messages:
 * open, write, close of each CPU's scaling_governor (relative to the cpu
 * folder, the shortest path walk) and of the three sysctl files. Built
 * statically when the C library allows it, so that it starts as fast as a
 * program can. Any tool that checks before it changes costs more.
 *
 *   floor-tune ROOT NCPUS
 *
 * Part of bench/run.sh; not installed.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int put(int dirfd, const char *rel, const char *text)
{
	int fd = openat(dirfd, rel, O_WRONLY | O_TRUNC | O_CLOEXEC);
	size_t n = strlen(text);

	if (fd < 0 || write(fd, text, n) != (ssize_t)n || close(fd)) {
		perror(rel);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const sysctl[][2] = {
		{"proc/sys/vm/swappiness", "0\n"},
		{"proc/sys/kernel/numa_balancing", "0\n"},
		{"proc/sys/kernel/sched_migration_cost_ns", "50000\n"},
	};
	char rel[64];
	int root, cpus, c, i, cpu;

	if (argc != 3) {
		fprintf(stderr, "usage: floor-tune ROOT NCPUS\n");
		return 2;
	}
	root = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cpus = atoi(argv[2]);
	cpu = root < 0 ? -1 : openat(root, "sys/devices/system/cpu", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cpu < 0) {
		perror(argv[1]);
		return 1;
	}
	for (c = 0; c < cpus; c++) {
		snprintf(rel, sizeof(rel), "cpu%d/cpufreq/scaling_governor", c);
		if (put(cpu, rel, "performance\n"))
			return 1;
	}
	for (i = 0; i < 3; i++)
		if (put(root, sysctl[i][0], sysctl[i][1]))
			return 1;
	return 0;
}
