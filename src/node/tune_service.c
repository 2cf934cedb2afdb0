/*
 * tune_service.c: the one service host tuning stops: irqbalance, which would move the dies'
 * interrupts apply binds back across the machine within seconds. It is asked through the
 * root's own systemctl (ROOT/usr/bin/systemctl, else ROOT/bin/systemctl; never one on PATH, so
 * that a root prefix never stops the real host's service; nor one that is a link out of the
 * root), stopped only when it is active, and
 * journaled before it is stopped; tune --revert starts it again. Without systemctl a running
 * irqbalance is only reported. See tune.h.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npulaunch/arena.h"
#include "npulaunch/proc.h"
#include "npulaunch/tune.h"
#include "tune_internal.h"

#define SERVICE_TIMEOUT 30.0

int npl_tune_service_known(const char *unit)
{
	return unit && !strcmp(unit, NPL_TUNE_IRQBALANCE);
}

/* 1 when path, every link on its way followed, is a file beneath the root top (resolved; "" for
 * /): a root prefix's systemctl that is a link out of it (to the real host's) is none. */
static int beneath(const char *path, const char *top)
{
	char *real = realpath(path, NULL);
	size_t n = strlen(top);
	int ok = real && (!n || (!strncmp(real, top, n) && real[n] == '/'));

	free(real);
	return ok;
}

char *npl_tune_systemctl(const char *root)
{
	static const char *const places[] = {"/usr/bin/systemctl", "/bin/systemctl"};
	const char *r = root && strcmp(root, "/") ? root : "";
	char *top = *r ? realpath(r, NULL) : NULL;

	if (*r && !top)
		return NULL;
	if (top && !strcmp(top, "/")) {
		free(top);
		top = NULL;
	}
	for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
		char *f = npl_tune_path_of(r, "%s", places[i]);
		struct stat st;

		if (stat(f, &st) == 0 && S_ISREG(st.st_mode) && access(f, X_OK) == 0 && beneath(f, top ? top : "")) {
			free(top);
			return f;
		}
		free(f);
	}
	free(top);
	return NULL;
}

int npl_tune_service(const char *tool, const char *verb, const char *unit, const char **state, struct npl_diag *d)
{
	char *argv[] = {(char *)"systemctl", (char *)verb, (char *)unit, NULL};
	struct npl_loc at = {tool, 0, 0};
	struct npl_arena a;
	const char *out = NULL;
	int status = -1, rc = 0;
	enum npl_proc_result r;

	npl_arena_init(&a);
	r = npl_proc_run(&a, tool, argv, SERVICE_TIMEOUT, 4096, &out, &status);
	if (!strcmp(verb, "is-active")) {
		/* it prints the state and exits 0 only when active; anything else is not active */
		if (r == NPL_PROC_OK || r == NPL_PROC_FAILED) {
			*state = r == NPL_PROC_OK && !strncmp(out, "active", 6) && (out[6] == '\n' || !out[6]) ? "active"
												    : "inactive";
		} else {
			rc = npl_error(d, &at, "systemctl is-active %s did not answer (%s)", unit,
				       r == NPL_PROC_TIMEOUT ? "timed out" : r == NPL_PROC_TOO_LONG ? "too much output" : "could not run");
		}
	} else if (r != NPL_PROC_OK) {
		size_t n = out ? strcspn(out, "\n") : 0;

		rc = npl_error(d, &at, "systemctl %s %s failed (%s)%s%.*s", verb, unit,
			       r == NPL_PROC_TIMEOUT ? "timed out" : r == NPL_PROC_FAILED ? npl_arena_printf(&a, "status %d", status)
			       : r == NPL_PROC_TOO_LONG ? "too much output" : "could not run",
			       n ? ": " : "", (int)(n > 200 ? 200 : n), out ? out : "");
	}
	npl_arena_release(&a);
	return rc;
}

/* The pid of a process named irqbalance under ROOT/proc, or 0. */
static long irqbalance_pid(const char *root)
{
	char *dir = npl_tune_path_of(root, "/proc");
	DIR *dp = opendir(dir);
	struct dirent *e;
	long pid = 0;

	while (dp && !pid && (e = readdir(dp))) {
		char *comm, buf[32];
		ssize_t n;
		int fd;

		if (e->d_name[0] < '1' || e->d_name[0] > '9' || strspn(e->d_name, "0123456789") != strlen(e->d_name))
			continue;
		comm = npl_tune_path_of(dir, "/%s/comm", e->d_name);
		fd = open(comm, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
		n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		if (fd >= 0)
			close(fd);
		free(comm);
		if (n > 0) {
			buf[n] = '\0';
			if (!strcmp(buf, "irqbalance\n"))
				pid = strtol(e->d_name, NULL, 10);
		}
	}
	if (dp)
		closedir(dp);
	free(dir);
	return pid;
}

int npl_tune_collect_irqbalance(struct npl_tune *t, struct npl_diag *d)
{
	const char *state = NULL;
	char *tool = npl_tune_systemctl(t->root);
	long pid;

	if (!tool) {
		if ((pid = irqbalance_pid(t->root)))
			npl_warn(d, NULL,
				 "irqbalance runs (pid %ld) and there is no systemctl under %s to stop it: it may move the dies' "
				 "interrupts again; stop it by hand, or set tuning.affinity.irqs: false",
				 pid, *t->root ? t->root : "/");
		return 0;
	}
	if (npl_tune_service(tool, "is-active", NPL_TUNE_IRQBALANCE, &state, d)) {
		free(tool);
		return -1;
	}
	if (strcmp(state, "active")) {
		free(tool);
		return 0;
	}
	free(t->svc_tool);
	t->svc_tool = tool;
	t->svc_stop = 1;
	return 0;
}
