/*
 * timeit.c: run commands N times each and print, per command, the median, minimum and maximum
 * wall time in milliseconds and the largest peak RSS in KiB, one line each:
 *
 *   timeit N [--setup 'SHELL LINE'] -- COMMAND [ARGS...] [::: [--setup 'LINE'] -- COMMAND ...]
 *   -> "median_ms min_ms max_ms peak_rss_kib" per command, in the order given
 *
 * Several commands separated by ':::' run in turn, round after round (A B C A B C ...), so that
 * a machine's noise falls on all of them alike and their ratios hold even when the absolute
 * times drift. A setup line (run with sh -c before each run of its command, not timed) resets
 * state, such as a fake root that the previous run tuned. The commands' output goes to
 * /dev/null; a run that exits non-zero stops the benchmark with its status.
 * Part of bench/run.sh; not installed.
 */
#define _DEFAULT_SOURCE /* wait4 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CMDS 16

struct cmd {
	const char *setup;
	char **argv;    /* NULL-terminated in place of its ':::' */
	double *ms;
	long peak;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int dblcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Run c once: its setup, then the command timed; 0, or 1 when either fails. */
static int run_once(struct cmd *c, int i)
{
	struct rusage ru;
	double t0;
	int status;
	pid_t pid;

	if (c->setup) {
		int rc = system(c->setup);

		if (rc != 0) {
			fprintf(stderr, "timeit: setup '%s' failed (%d)\n", c->setup, rc);
			return 1;
		}
	}
	t0 = now_ms();
	pid = fork();
	if (pid < 0) {
		perror("timeit: fork");
		return 1;
	}
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(c->argv[0], c->argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("timeit: wait4");
		return 1;
	}
	c->ms[i] = now_ms() - t0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "timeit: %s exited %d\n", c->argv[0],
			WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		return 1;
	}
	if (ru.ru_maxrss > c->peak)
		c->peak = ru.ru_maxrss;
	return 0;
}

/* Parse the commands from argv[at]; their number, or -1 on a usage error. */
static int parse(int argc, char **argv, int at, struct cmd *v)
{
	int n = 0;

	while (at < argc) {
		struct cmd *c = &v[n];

		if (n == MAX_CMDS)
			return -1;
		memset(c, 0, sizeof(*c));
		if (!strcmp(argv[at], "--setup") && at + 1 < argc) {
			c->setup = argv[at + 1];
			at += 2;
		}
		if (at + 1 >= argc || strcmp(argv[at], "--"))
			return -1;
		c->argv = argv + at + 1;
		for (at++; at < argc && strcmp(argv[at], ":::"); at++)
			;
		if (at < argc)
			argv[at++] = NULL;   /* the command ends here; the next follows */
		if (!c->argv[0])
			return -1;
		n++;
	}
	return n;
}

int main(int argc, char **argv)
{
	struct cmd v[MAX_CMDS];
	int n, ncmd, i, k;

	if (argc < 4 || (n = atoi(argv[1])) <= 0 || (ncmd = parse(argc, argv, 2, v)) <= 0) {
		fprintf(stderr, "usage: timeit N [--setup 'LINE'] -- COMMAND [ARGS...] [::: ...]\n");
		return 2;
	}
	for (k = 0; k < ncmd; k++)
		if (!(v[k].ms = calloc((size_t)n, sizeof(*v[k].ms))))
			return 1;
	for (i = 0; i < n; i++)
		for (k = 0; k < ncmd; k++)
			if (run_once(&v[k], i))
				return 1;
	for (k = 0; k < ncmd; k++) {
		double *ms = v[k].ms;

		qsort(ms, (size_t)n, sizeof(*ms), dblcmp);
		printf("%.3f %.3f %.3f %ld\n", n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2, ms[0],
		       ms[n - 1], v[k].peak);
		free(ms);
	}
	return 0;
}
