/*
 * test_health.c: readiness probes against real HTTP servers on loopback
 * (tests/tools/http_stub.c), not a mocked libcurl: healthy; 503 for a while,
 * then 200; connection refused; bodies that are not JSON; a server that
 * accepts and never answers; the newer /model_info. Timing is asserted only
 * coarsely: a wait gives up within its timeout plus a few seconds.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "npulaunch/health.h"

struct stub {
	pid_t pid;
	int port;
	char url[64];
	char log[512];
};

static char dir[256];

/* Start http_stub MODE [N]; its port comes back on a pipe. */
static void start(struct stub *s, const char *mode, const char *n)
{
	int fds[2];
	char buf[32] = "";
	ssize_t r;
	static int k;

	snprintf(s->log, sizeof(s->log), "%s/http-%d.log", dir, k++);
	assert_int_equal(pipe(fds), 0);
	s->pid = fork();
	assert_true(s->pid >= 0);
	if (s->pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		if (n)
			execl(NPL_HTTP_STUB, "http_stub", mode, n, s->log, (char *)NULL);
		else
			execl(NPL_HTTP_STUB, "http_stub", mode, s->log, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	r = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	assert_true(r > 0);
	s->port = atoi(buf);
	assert_true(s->port > 0);
	snprintf(s->url, sizeof(s->url), "http://127.0.0.1:%d", s->port);
}

static void stop(struct stub *s)
{
	kill(s->pid, SIGTERM);
	waitpid(s->pid, NULL, 0);
}

/* A port nothing listens on. */
static int free_port(void)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* What npl_wait printed. */
static char *wait_output(const char *const *urls, int n, enum npl_probe kind, double timeout, int *left)
{
	char *out = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&out, &len);

	*left = npl_wait(urls, n, kind, timeout, fp, NULL);
	fclose(fp);
	return out;
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s/npl-health-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir))
		return -1;
	char err[256];

	return npl_health_init(err, sizeof(err));
}

static int teardown(void **state)
{
	char cmd[512];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_healthy(void **state)
{
	struct stub s;
	struct npl_probe_result r;
	const char *urls[1];
	char *out, *model, want[256];
	int left;

	(void)state;
	start(&s, "ok", NULL);
	npl_probe_once(s.url, NPL_PROBE_HEALTH, 2000, &r);
	assert_true(r.up);
	assert_int_equal(r.code, 200);
	assert_true(r.latency_ms >= 0);
	npl_probe_release(&r);
	npl_probe_once(s.url, NPL_PROBE_GENERATE, 2000, &r);
	assert_true(r.up);
	npl_probe_release(&r);
	model = npl_served_model(s.url, 2000);
	assert_string_equal(model, "/models/Stub-Model");
	free(model);
	urls[0] = s.url;
	out = wait_output(urls, 1, NPL_PROBE_HEALTH, 10, &left);
	assert_int_equal(left, 0);
	snprintf(want, sizeof(want), "ready      %s  (after ", s.url);
	assert_true(!strncmp(out, want, strlen(want)));
	free(out);
	stop(&s);
}

static void test_warming_then_ready(void **state)
{
	struct stub s;
	const char *urls[1];
	char *out, *log;
	int left;

	(void)state;
	start(&s, "warm", "3");
	urls[0] = s.url;
	out = wait_output(urls, 1, NPL_PROBE_HEALTH, 60, &left);
	assert_int_equal(left, 0);
	free(out);
	stop(&s);
	/* it was asked until it answered 200, and then no more */
	log = sim_slurp(s.log);
	assert_string_equal(log, "GET /health 503\nGET /health 503\nGET /health 503\nGET /health 200\n");
	free(log);
}

/* Retries back off up to 2s apart, no further: 7 answers of 503 take the sleeps 0.1, 0.2, 0.4,
 * 0.8, 1.6, 2 and 2 (7.1s), not 3.2 and 3.2 for the last two (9.5s). */
static void test_backoff_bounded(void **state)
{
	struct stub s;
	const char *urls[1];
	char *out;
	double t0, took;
	int left;

	(void)state;
	start(&s, "warm", "7");
	urls[0] = s.url;
	t0 = now();
	out = wait_output(urls, 1, NPL_PROBE_HEALTH, 60, &left);
	took = now() - t0;
	assert_int_equal(left, 0);
	free(out);
	stop(&s);
	assert_true(took >= 7.0);
	assert_true(took < 8.6);
}

static void test_refused(void **state)
{
	char url[64], *out, want[256];
	const char *urls[1] = {url};
	struct npl_probe_result r;
	double t0;
	int left;

	(void)state;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", free_port());
	npl_probe_once(url, NPL_PROBE_HEALTH, 1000, &r);
	assert_false(r.up);
	assert_int_equal(r.code, 0);
	assert_string_equal(r.error, "connection refused");
	npl_probe_release(&r);
	assert_null(npl_served_model(url, 500));
	t0 = now();
	out = wait_output(urls, 1, NPL_PROBE_HEALTH, 1.5, &left);
	assert_int_equal(left, 1);
	assert_true(now() - t0 < 1.5 + 3);
	snprintf(want, sizeof(want), "not ready  %s  (connection refused)\n", url);
	assert_string_equal(out, want);
	free(out);
}

static void test_not_json(void **state)
{
	struct stub s;
	struct npl_probe_result r;
	const char *urls[1];
	char *out;
	int left;

	(void)state;
	start(&s, "garbage", NULL);
	/* /health answers 200 (its body is not read) */
	npl_probe_once(s.url, NPL_PROBE_HEALTH, 2000, &r);
	assert_true(r.up);
	npl_probe_release(&r);
	/* a generate probe wants JSON back */
	npl_probe_once(s.url, NPL_PROBE_GENERATE, 2000, &r);
	assert_false(r.up);
	assert_string_equal(r.error, "/generate answered, but not with JSON");
	npl_probe_release(&r);
	/* and no model can be read from it */
	assert_null(npl_served_model(s.url, 2000));
	urls[0] = s.url;
	out = wait_output(urls, 1, NPL_PROBE_GENERATE, 1, &left);
	assert_int_equal(left, 1);
	assert_non_null(strstr(out, "(/generate answered, but not with JSON)"));
	free(out);
	stop(&s);
}

static void test_never_answers(void **state)
{
	struct stub s;
	struct npl_probe_result r;
	const char *urls[2];
	char *out, refused[64];
	double t0;
	int left;

	(void)state;
	start(&s, "hang", NULL);
	t0 = now();
	npl_probe_once(s.url, NPL_PROBE_HEALTH, 500, &r);
	assert_false(r.up);
	assert_string_equal(r.error, "no answer within 0.5s");
	assert_true(now() - t0 < 0.5 + 2);
	npl_probe_release(&r);
	/* a hung server and a refused port: the wait gives up on time for both */
	snprintf(refused, sizeof(refused), "http://127.0.0.1:%d", free_port());
	urls[0] = s.url;
	urls[1] = refused;
	t0 = now();
	out = wait_output(urls, 2, NPL_PROBE_HEALTH, 2, &left);
	assert_int_equal(left, 2);
	assert_true(now() - t0 < 2 + 3);
	assert_non_null(strstr(out, "not ready  http://127.0.0.1:"));
	assert_non_null(strstr(out, "(no answer within"));
	assert_non_null(strstr(out, "(connection refused)"));
	free(out);
	stop(&s);
}

static void test_newer_model_info(void **state)
{
	struct stub s;
	char *model;

	(void)state;
	start(&s, "newer", NULL);
	model = npl_served_model(s.url, 2000);
	assert_string_equal(model, "/models/Newer-Model");
	free(model);
	stop(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_healthy),
		cmocka_unit_test(test_warming_then_ready),
		cmocka_unit_test(test_backoff_bounded),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_not_json),
		cmocka_unit_test(test_never_answers),
		cmocka_unit_test(test_newer_model_info),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
