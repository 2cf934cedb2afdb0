/*
 * launch.c: the node side of apply (launch.h): the instances and their argv, the
 * environment as the rendered script builds it, sourcing the env files in bash, exec or
 * the supervision of several instances, and the dry run's view of it all.
 */
#define _GNU_SOURCE /* execvpe, sched_setaffinity and the CPU_*_S macros */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "npulaunch/arena.h"
#include "npulaunch/fsio.h"
#include "npulaunch/launch.h"
#include "npulaunch/proc.h"
#include "npulaunch/text.h"

/* ---- the environment ------------------------------------------------------------ */

static void env_set(struct npl_launch_env *e, const char *name, const char *value)
{
	size_t nl = strlen(name);
	char *entry = npl_xmalloc(nl + strlen(value) + 2);
	int i;

	sprintf(entry, "%s=%s", name, value);
	for (i = 0; i < e->n; i++)
		if (!strncmp(e->v[i], name, nl) && e->v[i][nl] == '=') {
			free(e->v[i]);
			e->v[i] = entry;
			return;
		}
	if (e->n + 1 >= e->cap) {
		e->cap = e->cap ? e->cap * 2 : 64;
		e->v = npl_xrealloc(e->v, (size_t)e->cap * sizeof(*e->v));
	}
	e->v[e->n++] = entry;
	e->v[e->n] = NULL;
}

static void env_unset(struct npl_launch_env *e, const char *name)
{
	size_t nl = strlen(name);
	int i;

	for (i = 0; i < e->n; i++)
		if (!strncmp(e->v[i], name, nl) && e->v[i][nl] == '=') {
			free(e->v[i]);
			e->v[i] = e->v[--e->n];
			e->v[e->n] = NULL;
			return;
		}
}

static const char *env_get(const struct npl_launch_env *e, const char *name)
{
	size_t nl = strlen(name);
	int i;

	for (i = 0; i < e->n; i++)
		if (!strncmp(e->v[i], name, nl) && e->v[i][nl] == '=')
			return e->v[i] + nl + 1;
	return NULL;
}

static void env_from(struct npl_launch_env *e, char **src)
{
	memset(e, 0, sizeof(*e));
	for (; src && *src; src++) {
		char *eq = strchr(*src, '=');

		if (eq) {
			char *name = npl_xstrndup(*src, (size_t)(eq - *src));

			env_set(e, name, eq + 1);
			free(name);
		}
	}
	if (!e->v) {
		e->cap = 8;
		e->v = npl_xcalloc((size_t)e->cap, sizeof(*e->v));
	}
}

/* An entry of a plan's env list: set, or prepend/append to what is there. */
static void env_put(struct npl_launch_env *e, const cJSON *item, const char *v)
{
	const char *name = npl_json_str(item, "name"), *op = npl_json_str(item, "op");
	const char *old = env_get(e, name), *sep = npl_json_str(item, "sep");
	char *joined;

	if (!op || !old || !*old) {
		env_set(e, name, v);
		return;
	}
	if (!sep)
		sep = ":";
	joined = npl_xmalloc(strlen(v) + strlen(sep) + strlen(old) + 1);
	if (!strcmp(op, "prepend"))
		sprintf(joined, "%s%s%s", v, sep, old);
	else
		sprintf(joined, "%s%s%s", old, sep, v);
	env_set(e, name, joined);
	free(joined);
}

static int env_before_source(const cJSON *item)
{
	const char *when = npl_json_str(item, "when");

	return when && !strcmp(when, "before-source");
}

/* 1 when an env file's path is absolute and has no '..' part: under --root it stays there (the
 * recipe reader checks the same; a manifest may have been edited). */
static int source_path_ok(const char *p)
{
	return *p == '/' && !strchr(p, '\n') && !npl_path_climbs(p);
}

/* An env file is sourced only when it is a regular file to read: bash would wait on a FIFO
 * for ever (the host tuned meanwhile), print an error for a folder and go on, and read a
 * device such as /dev/zero until memory runs out. Checked before anything changes. */
static void source_file_ok(struct npl_launch_node *l, const char *f)
{
	struct stat st;
	int fd;

	if (access(f, F_OK) != 0) {
		npl_error(l->diag, NULL, "cannot read %s: %s (is the Ascend toolkit installed on this node?)", f,
			  strerror(errno));
		return;
	}
	if ((fd = npl_open_regular(f, 0, NPL_READ_MAX, &st, l->diag)) >= 0)
		close(fd);
}

static void env_release(struct npl_launch_env *e)
{
	int i;

	for (i = 0; i < e->n; i++)
		free(e->v[i]);
	free(e->v);
	memset(e, 0, sizeof(*e));
}

/*
 * Source the files in bash, as the scripts do, and take the environment it leaves. It comes back
 * in an anonymous file, not a pipe: a file may start a program in the background, which inherits
 * the descriptor, and a pipe would not end until that program does.
 */
static int source_files(struct npl_launch_env *e, const char *const *files, int n, struct npl_diag *d)
{
	const char *prog = "for f; do . \"$f\"; done; command -p env -0 >&3";
	char **argv = npl_xcalloc((size_t)n + 5, sizeof(*argv));
	struct npl_buf out = NPL_BUF_INIT;
	const char *shlvl = env_get(e, "SHLVL");
	char *keep_shlvl = shlvl ? npl_xstrdup(shlvl) : NULL;
	int fd, status, i;
	pid_t pid;

	argv[0] = "bash";
	argv[1] = "-c";
	argv[2] = (char *)prog;
	argv[3] = "bash";
	for (i = 0; i < n; i++)
		argv[4 + i] = (char *)files[i];
	fd = memfd_create("npulaunch-env", MFD_CLOEXEC);
	if (fd < 0) {
		char tmpl[] = "/tmp/npulaunch-env-XXXXXX";

		fd = mkostemp(tmpl, O_CLOEXEC);
		if (fd >= 0)
			unlink(tmpl);
	}
	if (fd < 0) {
		free(argv);
		free(keep_shlvl);
		return npl_error(d, NULL, "cannot source the env files: %s", strerror(errno));
	}
	/* what the files print goes to stderr; the environment comes back on fd 3 */
	pid = npl_proc_spawn(&(struct npl_proc_child){.argv = argv, .envp = e->v, .fd3 = fd, .out_to_err = 1});
	if (pid < 0) {
		close(fd);
		free(argv);
		free(keep_shlvl);
		return npl_error(d, NULL, "cannot source the env files: %s", strerror(errno));
	}
	free(argv);
	status = npl_proc_wait(pid);
	for (off_t off = 0;;) {
		char buf[65536];
		ssize_t r = pread(fd, buf, sizeof(buf), off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		npl_buf_add(&out, buf, (size_t)r);
		off += r;
	}
	close(fd);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !out.len) {
		npl_buf_release(&out);
		free(keep_shlvl);
		return npl_error(d, NULL, "sourcing the env files failed (bash exited %d)",
				 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	}
	env_release(e);
	memset(e, 0, sizeof(*e));
	{
		const char *p = out.data, *end = out.data + out.len;

		while (p < end) {
			size_t len = strnlen(p, (size_t)(end - p));
			const char *eq = memchr(p, '=', len);

			if (eq) {
				char *name = npl_xstrndup(p, (size_t)(eq - p)), *val = npl_xstrndup(eq + 1, len - (size_t)(eq - p) - 1);

				env_set(e, name, val);
				free(name);
				free(val);
			}
			p += len + 1;
		}
	}
	/* bash's own bookkeeping is not the recipe's */
	env_unset(e, "_");
	if (keep_shlvl)
		env_set(e, "SHLVL", keep_shlvl);
	else
		env_unset(e, "SHLVL");
	free(keep_shlvl);
	npl_buf_release(&out);
	return 0;
}

/* Resolve a plan value; on a missing site value, say what to set (once a key). A dry run
 * (l->placeholders) gets the value shown as <KEY>, still reported; a real run NULL. */
static char *value(struct npl_launch_node *l, const char *pv)
{
	const struct npl_site *site = l->site;
	int *bad = &l->bad;
	struct npl_buf b = NPL_BUF_INIT;
	int missing = -1;

	if (npl_pval_resolve(&b, pv, site, &missing)) {
		if (!(*bad & (1 << missing)))
			npl_error(l->diag, NULL, "%s is not set: give --%s, export %s, or render with --%s",
				  npl_site_key_name(missing), npl_site_key_name(missing), npl_site_var(missing),
				  npl_site_key_name(missing));
		*bad |= 1 << missing;
		b.len = 0;
		if (l->placeholders) {
			npl_pval_display(&b, pv, site);
			return npl_buf_detach(&b);
		}
		npl_buf_release(&b);
		return NULL;
	}
	return npl_buf_detach(&b);
}

/* s as one shell word that is also safe on a terminal: quoted as the scripts quote it, or, when
 * it holds a control character or bytes that are not UTF-8, as bash's $'...' with \xNN escapes
 * (the same bytes for bash, and no escape sequence reaches the terminal). */
static void print_word(FILE *fp, const char *s)
{
	struct npl_buf b = NPL_BUF_INIT;
	size_t n = strlen(s);

	npl_escape(&b, s, n, 0);
	if (b.len == n && !memcmp(b.data, s, n)) {
		b.len = 0;
		npl_shell_quote(&b, s);
	} else {
		b.len = 0;
		npl_buf_puts(&b, "$'");
		for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
			if (*p == '\\' || *p == '\'')
				npl_buf_printf(&b, "\\%c", *p);
			else if (*p < 0x20 || *p >= 0x7f)
				npl_buf_printf(&b, "\\x%02x", *p);
			else
				npl_buf_putc(&b, (char)*p);
		}
		npl_buf_putc(&b, '\'');
	}
	fputs(npl_buf_str(&b), fp);
	npl_buf_release(&b);
}

/* Add an argument; NULL (a value that could not be resolved, already reported) adds nothing. */
static void inst_arg(struct npl_launch_inst *in, char *a)
{
	if (!a)
		return;
	if (in->argc + 2 > in->cap) {
		in->cap = in->cap ? in->cap * 2 : 64;
		in->argv = npl_xrealloc(in->argv, (size_t)in->cap * sizeof(*in->argv));
	}
	in->argv[in->argc++] = a;
	in->argv[in->argc] = NULL;
}

/* Add a plan node's environment to e: the part placed before the env files, or the rest. */
void npl_launch_arg(struct npl_launch_inst *in, const char *a)
{
	inst_arg(in, npl_xstrdup(a));
}

static void env_add(struct npl_launch_node *l, struct npl_launch_env *e, const cJSON *node, int before)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(node, "env")) {
		char *v;

		if (env_before_source(it) != before)
			continue;
		v = value(l, npl_json_str(it, "value"));
		env_put(e, it, v ? v : "");
		free(v);
	}
}

/* Print that part as the shell lines that would set it. */
static void print_env(struct npl_launch_node *l, const cJSON *node, int before)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(node, "env")) {
		const char *op = npl_json_str(it, "op"), *name = npl_json_str(it, "name"), *sep = npl_json_str(it, "sep");
		char *v;

		if (env_before_source(it) != before)
			continue;
		/* a manifest's names and separators reach the terminal escaped */
		name = npl_escape_in(l->arena, name ? name : "");
		sep = npl_escape_in(l->arena, sep ? sep : ":");
		v = value(l, npl_json_str(it, "value"));
		printf("export %s=", name);
		if (op && !strcmp(op, "append"))
			printf("\"${%s:+$%s%s}\"", name, name, sep);
		print_word(stdout, v ? v : "");
		if (op && !strcmp(op, "prepend"))
			printf("\"${%s:+%s$%s}\"", name, sep, name);
		printf("%s\n", before ? "  # before the env files" : "");
		free(v);
	}
}

/* exec argv in environment e; PATH of that environment decides which program runs. Returns on failure. */
static void exec_in(const struct npl_launch_env *e, char **argv)
{
	const char *path = env_get(e, "PATH");

	if (path)
		setenv("PATH", path, 1);
	execvpe(argv[0], argv, e->v);
}

static double mono_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Several instances share this node: start each with the common environment plus its own,
 * and stay as their parent, as the script does. When one ends, stop the others (SIGTERM, then
 * SIGKILL after NPULAUNCH_STOP_TIMEOUT seconds, default 30); its status is the exit code.
 * SIGINT, SIGTERM and SIGHUP are passed on to every instance.
 */
int npl_launch_supervise(struct npl_launch_node *l, double grace)
{
	struct npl_launch_inst *v = l->inst;
	const struct npl_launch_env *common = &l->env;
	int n = l->ninst;
	pid_t *pids = npl_xcalloc((size_t)n, sizeof(*pids));
	sigset_t set, old;
	int live = 0, first = -1, status = 0, k, stopping = 0;
	double deadline = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, &old);
	for (k = 0; k < n; k++) {
		struct npl_launch_env e;

		env_from(&e, common->v);
		env_add(l, &e, v[k].node, 0);
		/* PATH of its environment decides which program runs */
		pids[k] = npl_proc_spawn(&(struct npl_proc_child){.argv = v[k].argv, .envp = e.v, .env_path = 1,
								  .mask = &old, .who = "apply"});
		env_release(&e);
		if (pids[k] < 0) {
			npl_error(l->diag, NULL, "cannot start instance %d: %s", k, strerror(errno));
			npl_diag_flush(l->diag, stderr);
			status = 1 << 8; /* as if it had exited 1 */
			first = k;
			break;
		}
		live++;
	}
	if (first >= 0) {
		for (int j = 0; j < k; j++)
			kill(pids[j], SIGTERM);
		stopping = 1;
		deadline = mono_seconds() + grace;
	}
	while (live > 0) {
		/* a second at most between looks, and never past the deadline of a stop */
		double left = stopping ? deadline - mono_seconds() : 1;
		struct timespec wait = {0, 0};
		siginfo_t si;
		int sig;
		pid_t p;
		int ws;

		if (left > 1)
			left = 1;
		if (left > 0) {
			wait.tv_sec = (time_t)left;
			wait.tv_nsec = (long)((left - (double)wait.tv_sec) * 1e9);
		}
		sig = sigtimedwait(&set, &si, &wait);
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
			for (int j = 0; j < n; j++)
				if (pids[j] > 0)
					kill(pids[j], sig);
		}
		while ((p = waitpid(-1, &ws, WNOHANG)) > 0) {
			for (int j = 0; j < n; j++)
				if (pids[j] == p) {
					pids[j] = 0;
					live--;
					if (first < 0) {
						first = j;
						status = ws;
					}
				}
		}
		if (first >= 0 && !stopping) {
			fprintf(stderr, "npulaunch: apply: instance %d ended (%s %d): stopping the others\n",
				npl_json_int(v[first].node, "instance", first),
				WIFEXITED(status) ? "exit" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
			for (int j = 0; j < n; j++)
				if (pids[j] > 0)
					kill(pids[j], SIGTERM);
			stopping = 1;
			deadline = mono_seconds() + grace;
		}
		if (stopping == 1 && live > 0 && mono_seconds() >= deadline) {
			for (int j = 0; j < n; j++)
				if (pids[j] > 0)
					kill(pids[j], SIGKILL);
			stopping = 2;
			deadline = mono_seconds() + 3600;
		}
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(pids);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* A plan node's environment, as JSON: [{name, value, op, sep, before_source}]. */
static void env_json(struct npl_launch_node *l, cJSON *a, const cJSON *node, int before)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(node, "env")) {
		cJSON *e;
		char *v;

		if (env_before_source(it) != before)
			continue;
		e = cJSON_CreateObject();
		v = value(l, npl_json_str(it, "value"));
		cJSON_AddStringToObject(e, "name", npl_json_str(it, "name"));
		cJSON_AddStringToObject(e, "value", v ? v : "");
		cJSON_AddStringToObject(e, "op", npl_json_str(it, "op") ? npl_json_str(it, "op") : "set");
		if (npl_json_str(it, "op"))
			cJSON_AddStringToObject(e, "sep", npl_json_str(it, "sep") ? npl_json_str(it, "sep") : ":");
		cJSON_AddBoolToObject(e, "before_source", before);
		cJSON_AddItemToArray(a, e);
		free(v);
	}
}

/*
 * apply --dry-run --json: {recipe, role, node, addresses, tuning: [{name, path, current, wanted,
 * ok}], unset, source, env (before the env files), cpus, wait: [urls], instances: [{instance,
 * slot, env, argv}], stops: [messages]}; what a real run would stop on is in stops too.
 */
void npl_launch_dry_json(struct npl_launch_node *l)
{
	cJSON *o = cJSON_CreateObject(), *a, *env = cJSON_CreateArray(), *stops = cJSON_CreateArray();
	const struct npl_tune *t = l->tune;
	const cJSON *it;
	char *text, ub[1024];
	int i, nwait = l->wait_timeout > 0 ? l->nwait : 0;

	cJSON_AddStringToObject(o, "recipe", npl_json_str(cJSON_GetObjectItemCaseSensitive(l->plan, "recipe"), "id"));
	cJSON_AddStringToObject(o, "role", l->role_name);
	cJSON_AddNumberToObject(o, "node", l->node);
	a = cJSON_AddArrayToObject(o, "addresses");
	for (i = 0; i < l->naddrs; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(l->addrs[i]));
	if (t->root) {
		a = npl_tune_json(t);
		cJSON_AddItemToObject(o, "tuning", cJSON_DetachItemFromObjectCaseSensitive(a, "items"));
		cJSON_Delete(a);
	} else {
		cJSON_AddArrayToObject(o, "tuning");   /* the router and the benchmark tune nothing */
	}
	a = cJSON_AddArrayToObject(o, "unset");
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(l->role, "unset"))
		cJSON_AddItemToArray(a, cJSON_CreateString(npl_json_str(it, "name")));
	a = cJSON_AddArrayToObject(o, "source");
	for (i = 0; i < l->nfiles; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(l->files[i]));
	env_json(l, env, l->inst[0].node, 1);
	cJSON_AddItemToObject(o, "env", env);
	if (l->cpus)
		cJSON_AddStringToObject(o, "cpus", l->cpus);
	else
		cJSON_AddNullToObject(o, "cpus");
	if (l->affinity) {
		cJSON *af = cJSON_Duplicate(l->affinity, 1);

		if (l->rank_note)
			cJSON_AddStringToObject(af, "ranks", l->rank_note);   /* SGLang's per-rank binding */
		cJSON_AddItemToObject(o, "affinity", af);
	}
	else if (l->affinity_note)
		cJSON_AddStringToObject(o, "affinity", l->affinity_note);
	else
		cJSON_AddNullToObject(o, "affinity");
	a = cJSON_AddArrayToObject(o, "wait");
	for (i = 0; i < nwait; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(npl_url_redacted(l->wait[i], ub, sizeof(ub))));
	cJSON_AddNumberToObject(o, "wait_timeout_s", l->wait_timeout);
	a = cJSON_AddArrayToObject(o, "instances");
	for (int k = 0; k < l->ninst; k++) {
		const struct npl_launch_inst *inst = l->inst;
		cJSON *e = cJSON_CreateObject(), *ie = cJSON_CreateArray(), *argv = cJSON_CreateArray();

		cJSON_AddNumberToObject(e, "instance", npl_json_int(inst[k].node, "instance", k));
		cJSON_AddNumberToObject(e, "slot", npl_json_int(inst[k].node, "slot", 0));
		if (npl_json_str(inst[k].node, "name"))
			cJSON_AddStringToObject(e, "benchmark", npl_json_str(inst[k].node, "name"));
		env_json(l, ie, inst[k].node, 0);
		cJSON_AddItemToObject(e, "env", ie);
		for (i = 0; i < inst[k].argc; i++)
			cJSON_AddItemToArray(argv, cJSON_CreateString(inst[k].argv[i]));
		cJSON_AddItemToObject(e, "argv", argv);
		cJSON_AddItemToArray(a, e);
	}
	for (i = 0; i < l->diag->n; i++)
		if (l->diag->v[i].sev == NPL_ERROR) {
			char *m = npl_diag_format(l->diag, &l->diag->v[i], 0);

			cJSON_AddItemToArray(stops, cJSON_CreateString(m));
			free(m);
		}
	cJSON_AddItemToObject(o, "stops", stops);
	text = cJSON_Print(o);
	puts(text);
	cJSON_free(text);
	cJSON_Delete(o);
}

/* ---- the launch ----------------------------------------------------------------------- */

int npl_launch_prepare(struct npl_launch_node *l, const char *root)
{
	const cJSON *it;
	int k;

	/* the instances this node runs: one, or several that share it (each on its own dies) */
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(l->role, "nodes"))
		if (npl_json_int(it, "index", -1) == l->node)
			l->ninst++;
	l->inst = npl_xcalloc((size_t)l->ninst + 1, sizeof(*l->inst));
	l->files = npl_xcalloc((size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(l->role, "source")) + 1,
			  sizeof(*l->files));
	l->ninst = 0;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(l->role, "nodes"))
		if (npl_json_int(it, "index", -1) == l->node)
			l->inst[l->ninst++].node = it;
	if (!l->ninst)
		return npl_error(l->diag, NULL, "the plan has no launch for node %d of the %s", l->node, l->role_name);

	/* everything the launch needs, resolved before anything changes */
	for (k = 0; k < l->ninst; k++) {
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(l->inst[k].node, "launch"))
			inst_arg(&l->inst[k], value(l, it->valuestring));
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(l->inst[k].node, "flags")) {
			const cJSON *v;

			inst_arg(&l->inst[k], npl_xstrdup(npl_json_str(it, "flag")));
			cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(it, "values"))
				inst_arg(&l->inst[k], value(l, v->valuestring));
		}
	}
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(l->role, "source")) {
		char *p = value(l, npl_json_str(it, "path"));

		if (p && !source_path_ok(p)) {
			npl_error(l->diag, NULL, "the env file '%s' is not an absolute path without '..' parts: "
				  "refused (a recipe's source: or the manifest's roles[].source)", p);
		} else if (p) {
			char *f = root ? npl_arena_printf(l->arena, "%s%s", root, p) : npl_arena_strdup(l->arena, p);

			l->files[l->nfiles++] = f;
			source_file_ok(l, f);
		}
		free(p);
	}
	/* the values of the environment, checked now */
	for (k = 0; k < l->ninst; k++)
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(l->inst[k].node, "env"))
			free(value(l, npl_json_str(it, "value")));
	return 0;
}

void npl_launch_cpus(struct npl_launch_node *l, const char *root)
{
	unsigned char *want = npl_xcalloc(65536, 1), *online = npl_xcalloc(65536, 1);
	cpu_set_t *mask;
	int i, n;

	if (npl_cpu_list_parse(l->cpus, want, 65536)) {
		npl_error(l->diag, NULL, "--cpus '%s' is not a CPU list (like 0-63,128-191)", l->cpus);
		l->bad |= NPL_LAUNCH_BAD_USAGE;   /* a usage error (bits 0-5 are missing site values) */
	} else if ((n = npl_cpus_online(root ? root : "", online, 65536, l->diag)) > 0) {
		l->mask = mask = CPU_ALLOC(65536);
		l->masksz = CPU_ALLOC_SIZE(65536);
		if (!mask)
			npl_oom();
		CPU_ZERO_S(l->masksz, mask);
		for (i = 0; i < 65536; i++) {
			if (!want[i])
				continue;
			if (!online[i]) {
				npl_error(l->diag, NULL, "--cpus: CPU %d is not online", i);
				break;
			}
			CPU_SET_S((size_t)i, l->masksz, mask);
		}
	}
	free(want);
	free(online);
}

void npl_launch_dry_text(struct npl_launch_node *l)
{
	const cJSON *tuning = cJSON_GetObjectItemCaseSensitive(l->role, "tuning"), *sc, *it;
	const struct npl_tune *t = l->tune;
	struct npl_arena *a = l->arena;
	int i;

	printf("# npulaunch apply --dry-run: %s of %s, node %d%s%s\n", l->role_name,
	       npl_json_str(cJSON_GetObjectItemCaseSensitive(l->plan, "recipe"), "id"), l->node,
	       l->naddrs ? " at " : "", l->naddrs ? l->addrs[0] : "");
	for (i = 0; i < t->n; i++)
		printf("tune %s  %s -> %s%s\n", npl_escape_in(a, t->v[i].path),
		       npl_escape_in(a, npl_arena_printf(a, "%.*s", (int)strcspn(t->v[i].current, "\n"), t->v[i].current)),
		       t->v[i].wanted, npl_tune_item_ok(&t->v[i]) ? " (already)" : "");
	if (t->svc_stop)
		printf("tune %s  active -> inactive  (irqbalance would move the interrupts bound above; tune --revert starts it)\n",
		       NPL_TUNE_IRQBALANCE);
	cJSON_ArrayForEach(sc, cJSON_GetObjectItemCaseSensitive(tuning, "sysctl")) {
		const char *name = npl_json_str(sc, "name");

		for (i = 0; i < t->n && (!name || strcmp(t->v[i].name, name)); i++)
			;
		if (name && i == t->n)
			printf("tune sysctl %s -> %s  (not on this host: see below)\n", npl_escape_in(a, name),
			       npl_escape_in(a, npl_json_str(sc, "value") ? npl_json_str(sc, "value") : "?"));
	}
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(l->role, "unset"))
		printf("unset %s\n", npl_escape_in(a, npl_json_str(it, "name")));
	print_env(l, l->inst[0].node, 1);
	for (i = 0; i < l->nfiles; i++) {
		fputs("source ", stdout);
		print_word(stdout, l->files[i]);
		putchar('\n');
	}
	if (l->affinity_note)
		printf("# affinity: npulaunch binds nothing: %s\n", npl_escape_in(a, l->affinity_note));
	for (const cJSON *d = l->affinity ? cJSON_GetObjectItemCaseSensitive(l->affinity, "dies")->child : NULL; d; d = d->next)
		printf("# affinity: device %d: CPUs %s, NUMA node %s (%s)\n", npl_json_int(d, "device", -1),
		       npl_json_str(d, "cpus"), cJSON_IsNumber(cJSON_GetObjectItem(d, "numa_node")) ?
		       npl_arena_printf(a, "%d", npl_json_int(d, "numa_node", -1)) : "unknown",
		       npl_escape_in(a, npl_json_str(d, "node_from")));
	if (l->affinity && l->rank_note)
		printf("# affinity: ranks: %s\n", npl_escape_in(a, l->rank_note));
	if (l->cpus)
		printf("cpus %s\n", npl_escape_in(a, l->cpus));
	for (i = 0; i < l->nwait && l->wait_timeout > 0; i++) {
		char ub[1024];

		printf("wait %s (up to %gs)\n", npl_escape_in(a, npl_url_redacted(l->wait[i], ub, sizeof(ub))),
		       l->wait_timeout);
	}
	for (int k = 0; k < l->ninst; k++) {
		const char *bench = npl_json_str(l->inst[k].node, "name");

		if (l->ninst > 1 && bench)
			printf("# the %s benchmark%s\n", npl_escape_in(a, bench),
			       k + 1 < l->ninst ? ": run to its end before the next" : "");
		else if (l->ninst > 1)
			printf("# instance %d, slot %d of this node: started beside the others\n",
			       npl_json_int(l->inst[k].node, "instance", k), npl_json_int(l->inst[k].node, "slot", k));
		print_env(l, l->inst[k].node, 0);
		fputs(l->ninst == 1 || (bench && k + 1 == l->ninst) ? "exec" : bench ? "run" : "start", stdout);
		for (i = 0; i < l->inst[k].argc; i++) {
			putchar(' ');
			print_word(stdout, l->inst[k].argv[i]);
		}
		putchar('\n');
	}
	fflush(stdout);
}

int npl_launch_environ(struct npl_launch_node *l, char **environ_)
{
	const cJSON *it;

	env_from(&l->env, environ_);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(l->role, "unset"))
		env_unset(&l->env, npl_json_str(it, "name"));
	/* the variables the plan places before the env files (the node's, as the script has
	 * them), then the files; each instance's own environment is added after them */
	env_add(l, &l->env, l->inst[0].node, 1);
	if (l->nfiles && source_files(&l->env, (const char *const *)l->files, l->nfiles, l->diag))
		return -1;
	return 0;
}

int npl_launch_pin(struct npl_launch_node *l)
{
	if (l->mask && sched_setaffinity(0, l->masksz, (cpu_set_t *)l->mask) != 0)
		return npl_error(l->diag, NULL, "cannot pin to CPUs %s: %s", l->cpus, strerror(errno));
	/* memory from the dies' nodes first, elsewhere when they are full (a hard binding is
	   refused in some containers and would end the server on a full node): several nodes
	   (MPOL_PREFERRED_MANY, Linux 5.15), else the first alone (MPOL_PREFERRED) */
	if (l->mems && syscall(SYS_set_mempolicy, 5 /* MPOL_PREFERRED_MANY */, l->mems, l->maxnode + 1) != 0) {
		unsigned long one[1024 / (8 * sizeof(unsigned long))] = {0};
		size_t i, bits = 8 * sizeof(unsigned long);

		for (i = 0; i < l->maxnode && !(l->mems[i / bits] >> (i % bits) & 1); i++)
			;
		if (i < l->maxnode && i < sizeof(one) * 8)
			one[i / bits] = 1UL << (i % bits);
		if (i == l->maxnode || syscall(SYS_set_mempolicy, 1 /* MPOL_PREFERRED */, one, sizeof(one) * 8 + 1) != 0)
			npl_warn(l->diag, NULL, "cannot prefer memory on NUMA node(s) of the dies: %s: the server's memory is anywhere",
				 strerror(errno));
	}
	return 0;
}

int npl_launch_sequence(struct npl_launch_node *l)
{
	int k;

	for (k = 0; k + 1 < l->ninst; k++) {
		struct npl_launch_env e;
		const char *name = npl_json_str(l->inst[k].node, "name");
		pid_t pid;
		int status;

		env_from(&e, l->env.v);
		env_add(l, &e, l->inst[k].node, 0);
		pid = npl_proc_spawn(&(struct npl_proc_child){.argv = l->inst[k].argv, .envp = e.v, .env_path = 1,
								  .who = "apply"});
		env_release(&e);
		if (pid < 0)
			return npl_error(l->diag, NULL, "cannot run %s: %s", l->inst[k].argv[0], strerror(errno));
		status = npl_proc_wait(pid);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			npl_error(l->diag, NULL, "the %s benchmark failed (%s %d): the next is not run",
				  name ? name : "first", WIFEXITED(status) ? "exit" : "signal",
				  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
			/* its status, as bench.sh (set -e) ends with it */
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		}
	}
	env_add(l, &l->env, l->inst[k].node, 0);
	exec_in(&l->env, l->inst[k].argv);
	return npl_error(l->diag, NULL, "cannot run %s: %s", l->inst[k].argv[0], strerror(errno));
}

int npl_launch_exec(struct npl_launch_node *l)
{
	env_add(l, &l->env, l->inst[0].node, 0);
	exec_in(&l->env, l->inst[0].argv);
	return npl_error(l->diag, NULL, "cannot run %s: %s", l->inst[0].argv[0], strerror(errno));
}

void npl_launch_release(struct npl_launch_node *l)
{
	for (int k = 0; l->inst && k < l->ninst; k++) {
		for (int i = 0; i < l->inst[k].argc; i++)
			free(l->inst[k].argv[i]);
		free(l->inst[k].argv);
	}
	free(l->inst);
	free(l->files);
	if (l->mask)
		CPU_FREE((cpu_set_t *)l->mask);
	cJSON_Delete(l->affinity);
	free(l->mems);
	free(l->rank_nodes);
	l->rank_nodes = NULL;
	l->affinity = NULL;
	l->mems = NULL;
	env_release(&l->env);
	l->inst = NULL;
	l->files = NULL;
	l->mask = NULL;
	l->ninst = l->nfiles = 0;
}
