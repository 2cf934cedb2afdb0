/* proc.c: outside tools: finding one (PATH, then given folders under a root), and running it
 * (fork and exec with the output captured through a pipe, polled against a timeout and a size
 * limit, the tool's process group killed when it overruns); see proc.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "npulaunch/arena.h"
#include "npulaunch/buf.h"
#include "npulaunch/proc.h"

/* path under root ("", "/" or NULL: the host's own). */
static const char *under(struct npl_arena *a, const char *root, const char *path)
{
	if (!root || !*root || !strcmp(root, "/"))
		return path;
	return npl_arena_printf(a, "%s%s", root, path);
}

const char *npl_proc_find_in(struct npl_arena *a, const char *name, const char *path)
{
	struct stat st;

	for (const char *p = path; p && *p;) {
		size_t n = strcspn(p, ":");

		if (n) {
			char *f = npl_arena_printf(a, "%.*s/%s", (int)n, p, name);

			if (stat(f, &st) == 0 && S_ISREG(st.st_mode) && access(f, X_OK) == 0)
				return f;
		}
		p += n + (p[n] == ':');
	}
	return NULL;
}

const char *npl_proc_find(struct npl_arena *a, const char *name, const cJSON *dirs, const char *root)
{
	const char *found = npl_proc_find_in(a, name, getenv("PATH"));
	const cJSON *it;
	struct stat st;

	if (found)
		return found;
	cJSON_ArrayForEach(it, dirs) {
		char *f;

		if (!cJSON_IsString(it))
			continue;
		f = npl_arena_printf(a, "%s/%s", under(a, root, it->valuestring), name);
		if (stat(f, &st) == 0 && S_ISREG(st.st_mode) && access(f, X_OK) == 0)
			return f;
	}
	return NULL;
}

const char *npl_proc_places(struct npl_arena *a, const cJSON *dirs, const char *root)
{
	struct npl_buf b = NPL_BUF_INIT;
	const cJSON *it;
	const char *s;

	npl_buf_puts(&b, "PATH");
	cJSON_ArrayForEach(it, dirs)
		if (cJSON_IsString(it))
			npl_buf_printf(&b, ", %s", under(a, root, it->valuestring));
	s = npl_arena_strdup(a, npl_buf_str(&b));
	npl_buf_release(&b);
	return s;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

extern char **environ;

pid_t npl_proc_spawn(const struct npl_proc_child *c)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid != 0)
		return pid;
	if (c->mask)
		sigprocmask(SIG_SETMASK, c->mask, NULL);
	/* fd3 may be 3 already (the first descriptor a process opens): dup2 then keeps its
	   close-on-exec flag, and the child would find no fd 3 */
	if (c->fd3 > 0 && (c->fd3 == 3 ? fcntl(3, F_SETFD, 0) : dup2(c->fd3, 3)) < 0)
		_exit(127);
	if (c->out_to_err)
		dup2(2, 1);
	if (c->setup)
		c->setup(c->ctx);
	if (c->env_path && c->envp) {
		for (char *const *e = c->envp; *e; e++)
			if (!strncmp(*e, "PATH=", 5))
				setenv("PATH", *e + 5, 1);
	}
	if (c->path)
		execve(c->path, c->argv, c->envp ? c->envp : environ);
	else
		execvpe(c->argv[0], c->argv, c->envp ? c->envp : environ);
	if (c->who)
		fprintf(stderr, "npulaunch: %s: cannot run %s: %s\n", c->who, c->path ? c->path : c->argv[0],
			strerror(errno));
	_exit(127);
}

int npl_proc_wait(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return status;
}

/* The child side of npl_proc_run(): its own process group, stdin from /dev/null, stdout and
 * stderr into the pipe, the C locale. */
struct run_child {
	int out;
};

static void run_setup(void *ctx)
{
	const struct run_child *r = ctx;
	int null = open("/dev/null", O_RDONLY);

	setpgid(0, 0);
	if (null < 0 || dup2(null, 0) < 0 || dup2(r->out, 1) < 0 || dup2(r->out, 2) < 0)
		_exit(127);
	setenv("LC_ALL", "C", 1);
}

/*
 * Run path with argv (stdin /dev/null, stdout and stderr into one pipe, LC_ALL=C, in a process
 * group of its own), reading at most max bytes within timeout seconds. A tool that does not
 * answer, or talks too much, is killed with its whole group: the caller never waits on it.
 * Its output in *out (arena), its exit status in *status.
 */
enum npl_proc_result npl_proc_run(struct npl_arena *arena, const char *path, char *const argv[], double timeout,
				  size_t max, const char **out, int *status)
{
	return npl_proc_run_env(arena, path, argv, NULL, timeout, max, out, status);
}

enum npl_proc_result npl_proc_run_env(struct npl_arena *arena, const char *path, char *const argv[],
				      char *const envp[], double timeout, size_t max, const char **out, int *status)
{
	struct npl_buf b = NPL_BUF_INIT;
	enum npl_proc_result r = NPL_PROC_OK;
	double deadline = now_s() + timeout;
	int fds[2], ws = 0, done = 0;
	pid_t pid;

	*out = "";
	*status = -1;
	if (pipe(fds) != 0)
		return NPL_PROC_CANNOT;
	fcntl(fds[0], F_SETFD, FD_CLOEXEC);
	fcntl(fds[1], F_SETFD, FD_CLOEXEC);
	pid = npl_proc_spawn(&(struct npl_proc_child){.path = path, .argv = argv, .envp = envp, .setup = run_setup,
						    .ctx = &(struct run_child){fds[1]}});
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return NPL_PROC_CANNOT;
	}
	setpgid(pid, pid);
	close(fds[1]);
	fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
	while (!done) {
		double left = deadline - now_s();
		struct pollfd p = {fds[0], POLLIN, 0};
		char buf[8192];
		ssize_t n;

		if (left <= 0) {
			r = NPL_PROC_TIMEOUT;
			break;
		}
		if (poll(&p, 1, (int)(left * 1000) + 1) < 0 && errno != EINTR)
			break;
		for (;;) {
			n = read(fds[0], buf, sizeof(buf));
			if (n > 0) {
				if (b.len + (size_t)n > max) {
					r = NPL_PROC_TOO_LONG;
					done = 1;
					break;
				}
				npl_buf_add(&b, buf, (size_t)n);
				continue;
			}
			if (n == 0)
				done = 1;
			break;
		}
	}
	close(fds[0]);
	/* the output ended (or will not): the tool has until the deadline to exit */
	while (r == NPL_PROC_OK) {
		pid_t w = waitpid(pid, &ws, WNOHANG);

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			r = NPL_PROC_CANNOT;
			break;
		}
		if (now_s() >= deadline) {
			r = NPL_PROC_TIMEOUT;
			break;
		}
		poll(NULL, 0, 10);
	}
	if (r != NPL_PROC_OK && r != NPL_PROC_CANNOT) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
			;
	}
	*out = npl_arena_strndup(arena, b.data ? b.data : "", b.len);
	npl_buf_release(&b);
	if (r == NPL_PROC_OK) {
		*status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
		if (*status == 127 && !**out)
			return NPL_PROC_CANNOT;
		if (*status != 0)
			return NPL_PROC_FAILED;
	}
	return r;
}
