/*
 * timeit.c: run a command N times and print the median, minimum and maximum
 * wall time in milliseconds and the largest peak RSS in KiB, one line:
 *
 *   timeit N [--setup 'SHELL LINE'] -- COMMAND [ARGS...]
 *   -> "median_ms min_ms max_ms peak_rss_kib"
 *
 * The setup line (run with sh -c before each run, not timed) resets state,
 * such as a fake root that the previous run tuned. The command's output goes
 * to /dev/null; a run that exits non-zero stops the benchmark with its status.
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

int main(int argc, char **argv)
{
	const char *setup = NULL;
	double *ms;
	long peak = 0;
	int n, i, first;

	if (argc < 4 || (n = atoi(argv[1])) <= 0) {
		fprintf(stderr, "usage: timeit N [--setup 'LINE'] -- COMMAND [ARGS...]\n");
		return 2;
	}
	first = 2;
	if (!strcmp(argv[first], "--setup") && first + 1 < argc) {
		setup = argv[first + 1];
		first += 2;
	}
	if (first >= argc || strcmp(argv[first], "--") || first + 1 >= argc) {
		fprintf(stderr, "timeit: expected -- COMMAND\n");
		return 2;
	}
	first++;
	ms = calloc((size_t)n, sizeof(*ms));
	if (!ms)
		return 1;
	for (i = 0; i < n; i++) {
		struct rusage ru;
		double t0;
		int status;
		pid_t pid;

		if (setup) {
			int rc = system(setup);

			if (rc != 0) {
				fprintf(stderr, "timeit: setup '%s' failed (%d)\n", setup, rc);
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
			execvp(argv[first], argv + first);
			_exit(127);
		}
		if (wait4(pid, &status, 0, &ru) < 0) {
			perror("timeit: wait4");
			return 1;
		}
		ms[i] = now_ms() - t0;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "timeit: %s exited %d\n", argv[first],
				WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
			return 1;
		}
		if (ru.ru_maxrss > peak)
			peak = ru.ru_maxrss;
	}
	qsort(ms, (size_t)n, sizeof(*ms), dblcmp);
	printf("%.3f %.3f %.3f %ld\n", n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2, ms[0],
	       ms[n - 1], peak);
	free(ms);
	return 0;
}
