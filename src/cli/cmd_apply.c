/*
 * cmd_apply.c: `npulaunch apply`: on a node, tune the host and launch this
 * node's role: the same launch as the rendered script, without a script in
 * between, and with a way back (tune --revert).
 */
#define _GNU_SOURCE /* execvpe, sched_setaffinity and the CPU_*_S macros */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "npulaunch/cli.h"
#include "npulaunch/fsio.h"
#include "npulaunch/health.h"
#include "npulaunch/preflight.h"
#include "npulaunch/render.h"
#include "npulaunch/text.h"
#include "npulaunch/tune.h"

extern char **environ;

static void help(void)
{
	puts("usage: npulaunch apply [--role ROLE] [ID|QUERY|BUNDLE] [site values] [overrides]\n"
	     "                       [--dry-run] [--root DIR] [--cpus LIST] [--journal FILE]\n"
	     "                       [--no-preflight]\n"
	     "\n"
	     "Tune this host and launch this node's role of a recipe: the same launch as the\n"
	     "rendered script (same tuning, unsets, sourced files, environment and argv), then\n"
	     "exec the server. Inside a rendered bundle (a folder with manifest.json) no recipe\n"
	     "is needed. The node is found by matching its addresses (NPULAUNCH_NODE_IP, else every\n"
	     "local address) against the role's node list; --role may be left out when they\n"
	     "belong to exactly one role. Site values not given are taken from the environment\n"
	     "(MODEL_PATH, IFNAME, PREFILL_IPS=\"a b\", ...), as the scripts do. Nothing is changed\n"
	     "before every check has passed, preflight's included (npulaunch preflight --help);\n"
	     "a failure before exec undoes the tuning.\n"
	     "\n"
	     "Options:\n"
	     "  --role ROLE     pd-mixed, prefill, decode, router or bench\n"
	     "  --json          with --dry-run: the plan for this node as JSON: {recipe, role, node,\n"
	     "                  addresses, tuning, unset, source, env, cpus, wait, wait_timeout_s,\n"
	     "                  instances: [{instance, slot, env, argv}], stops: [...]}\n"
	     "  --dry-run       print the whole plan for this node (tuning, environment, command)\n"
	     "                  whatever the host lacks, then what a real run would stop on (exit 1,\n"
	     "                  or 2 for a missing site value); only reads, changes nothing\n"
	     "  --root DIR      treat DIR as / for the host's files and the Ascend env files\n"
	     "                  (default: $NPULAUNCH_ROOT, else /)\n"
	     "  --cpus LIST     also pin the server to these CPUs (0-63,128-191), which must be online\n"
	     "  --journal FILE  the tuning journal (default: ROOT" NPL_TUNE_JOURNAL ")\n"
	     "  --no-preflight  skip the preflight checks (as NPULAUNCH_PREFLIGHT=0 does); --dry-run\n"
	     "                  never runs them\n"
	     "  query           MODEL with --tpot T --ttft T --dataset IN+OUT --prefix-cache PCT\n"
	     "                  --cards N --mode M --hardware H [--nearest] instead of an id\n"
	     "  site values     --model-path P  --draft-model-path P  --ifname NAME  --node-ip IP...\n"
	     "                  --prefill-ip IP...  --decode-ip IP...  --site FILE (see render --help)\n"
	     "  overrides       --set [ROLE:]FLAG[=VALUE]  --unset [ROLE:]FLAG  --env [ROLE:]K=V\n"
	     "                  --unset-env [ROLE:]K  --force  --allow-unknown-flag\n"
	     "  -h, --help      this help\n"
	     "\n"
	     "Examples:\n"
	     "  cd deploy && sudo npulaunch apply --role decode\n"
	     "  sudo npulaunch apply --role prefill kimi-k2.6-w4a8-1p1d-16p-in128k-out1k-100ms --site site.yaml\n"
	     "  npulaunch apply kimi-k2.6 --tpot 20ms --model-path /m --draft-model-path /d --ifname eth0 --dry-run");
}

/* ---- this node --------------------------------------------------------------- */

struct addrs {
	char (*v)[INET6_ADDRSTRLEN];
	int n;
};

static int local_addresses(struct npl_cli *cli, struct addrs *a)
{
	const char *forced = getenv("NPULAUNCH_NODE_IP");
	struct ifaddrs *ifa, *p;
	int n = 0;

	a->n = 0;
	if (forced && *forced) {
		a->v = calloc(1, sizeof(*a->v));
		if (!a->v)
			npl_oom();
		if (npl_ip_canonical(forced, a->v[0], sizeof(a->v[0])))
			return npl_error(&cli->diag, NULL, "NPULAUNCH_NODE_IP '%s' is not an IPv4 or IPv6 address", forced);
		a->n = 1;
		return 0;
	}
	if (getifaddrs(&ifa) != 0) {
		a->v = NULL;
		return 0;
	}
	for (p = ifa; p; p = p->ifa_next)
		n++;
	a->v = calloc((size_t)n + 1, sizeof(*a->v));
	if (!a->v)
		npl_oom();
	for (p = ifa; p; p = p->ifa_next) {
		const void *bin;

		if (!p->ifa_addr)
			continue;
		if (p->ifa_addr->sa_family == AF_INET)
			bin = &((const struct sockaddr_in *)(const void *)p->ifa_addr)->sin_addr;
		else if (p->ifa_addr->sa_family == AF_INET6)
			bin = &((const struct sockaddr_in6 *)(const void *)p->ifa_addr)->sin6_addr;
		else
			continue;
		if (inet_ntop(p->ifa_addr->sa_family, bin, a->v[a->n], sizeof(a->v[0])))
			a->n++;
	}
	freeifaddrs(ifa);
	return 0;
}

static const char *addrs_text(struct npl_cli *cli, const struct addrs *a)
{
	struct npl_buf b = NPL_BUF_INIT;
	const char *s;
	int i;

	for (i = 0; i < a->n; i++)
		npl_buf_printf(&b, "%s%s", i ? " " : "", a->v[i]);
	s = npl_arena_strdup(&cli->arena, a->n ? npl_buf_str(&b) : "no address");
	npl_buf_release(&b);
	return s;
}

/* The nodes a role runs on (instances that share a node count once). */
static int nodes_count(const cJSON *role)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(role, "nodes_count");

	return cJSON_IsNumber(n) ? n->valueint : cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(role, "nodes"));
}

/* This node's index in the role's node list, -1 when none matches, -2 when the list is not known. */
static int node_of(const cJSON *role, const struct npl_site *site, const struct addrs *a)
{
	const char *list = npl_json_str(role, "node_list");
	const struct npl_site_value *v;
	int k, i, j;

	if (!list)
		return 0;
	k = npl_site_key_from_name(list);
	v = &site->key[k];
	if (v->n < nodes_count(role))
		return -2;
	for (i = 0; i < v->n; i++)
		for (j = 0; j < a->n; j++)
			if (!strcmp(v->v[i], a->v[j]))
				return i;
	return -1;
}

/* ---- the environment ------------------------------------------------------------ */

struct env {
	char **v;
	int n, cap;
};

static void env_set(struct env *e, const char *name, const char *value)
{
	size_t nl = strlen(name);
	char *entry = malloc(nl + strlen(value) + 2);
	int i;

	if (!entry)
		npl_oom();
	sprintf(entry, "%s=%s", name, value);
	for (i = 0; i < e->n; i++)
		if (!strncmp(e->v[i], name, nl) && e->v[i][nl] == '=') {
			free(e->v[i]);
			e->v[i] = entry;
			return;
		}
	if (e->n + 1 >= e->cap) {
		e->cap = e->cap ? e->cap * 2 : 64;
		e->v = realloc(e->v, (size_t)e->cap * sizeof(*e->v));
		if (!e->v)
			npl_oom();
	}
	e->v[e->n++] = entry;
	e->v[e->n] = NULL;
}

static void env_unset(struct env *e, const char *name)
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

static const char *env_get(const struct env *e, const char *name)
{
	size_t nl = strlen(name);
	int i;

	for (i = 0; i < e->n; i++)
		if (!strncmp(e->v[i], name, nl) && e->v[i][nl] == '=')
			return e->v[i] + nl + 1;
	return NULL;
}

static void env_from(struct env *e, char **src)
{
	memset(e, 0, sizeof(*e));
	for (; src && *src; src++) {
		char *eq = strchr(*src, '=');

		if (eq) {
			char *name = strndup(*src, (size_t)(eq - *src));

			if (!name)
				npl_oom();
			env_set(e, name, eq + 1);
			free(name);
		}
	}
	if (!e->v) {
		e->cap = 8;
		e->v = calloc((size_t)e->cap, sizeof(*e->v));
		if (!e->v)
			npl_oom();
	}
}

/* An entry of a plan's env list: set, or prepend/append to what is there. */
static void env_put(struct env *e, const cJSON *item, const char *v)
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
	joined = malloc(strlen(v) + strlen(sep) + strlen(old) + 1);
	if (!joined)
		npl_oom();
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

static void env_release(struct env *e)
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
static int source_files(struct env *e, const char *const *files, int n, struct npl_diag *d)
{
	const char *prog = "for f; do . \"$f\"; done; command -p env -0 >&3";
	char **argv = calloc((size_t)n + 5, sizeof(*argv));
	struct npl_buf out = NPL_BUF_INIT;
	const char *shlvl = env_get(e, "SHLVL");
	char *keep_shlvl = shlvl ? strdup(shlvl) : NULL;
	int fd, status, i;
	pid_t pid;

	if (!argv)
		npl_oom();
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
	pid = fork();
	if (pid < 0) {
		close(fd);
		free(argv);
		free(keep_shlvl);
		return npl_error(d, NULL, "cannot source the env files: %s", strerror(errno));
	}
	if (pid == 0) {
		/* what the files print goes to stderr; the environment comes back on fd 3 */
		if (dup2(fd, 3) < 0)
			_exit(127);
		dup2(2, 1);
		execvpe("bash", argv, e->v);
		_exit(127);
	}
	free(argv);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
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
				char *name = strndup(p, (size_t)(eq - p)), *val = strndup(eq + 1, len - (size_t)(eq - p) - 1);

				if (!name || !val)
					npl_oom();
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

/* ---- apply ------------------------------------------------------------------------ */

/* The manifest a bundle's plan comes from (as cli.c finds it), for messages; NULL for a recipe. */
static const char *bundle_manifest(struct npl_cli *cli, const char *arg)
{
	struct stat st;
	const char *dir = arg ? arg : ".";
	char *p;

	if (npl_is_dir(dir)) {
		p = npl_arena_printf(&cli->arena, "%s/manifest.json", dir);
		return stat(p, &st) == 0 ? p : NULL;
	}
	return arg && npl_ends_with(arg, ".json") && stat(arg, &st) == 0 ? arg : NULL;
}

/* Resolve a plan value; on a missing site value, say what to set. */
/* --dry-run: a value that cannot be resolved is printed as <KEY> (and still reported) */
static int placeholders;

static char *value(struct npl_cli *cli, const char *pv, const struct npl_site *site, int *bad)
{
	struct npl_buf b = NPL_BUF_INIT;
	int missing = -1;

	if (npl_pval_resolve(&b, pv, site, &missing)) {
		if (!(*bad & (1 << missing)))
			npl_error(&cli->diag, NULL, "%s is not set: give --%s, export %s, or render with --%s",
				  npl_site_key_name(missing), npl_site_key_name(missing), npl_site_var(missing),
				  npl_site_key_name(missing));
		*bad |= 1 << missing;
		b.len = 0;
		if (placeholders) {
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

/* One server instance this node runs: its plan entry and its argv (NULL-terminated). */
struct inst {
	const cJSON *node;
	char **argv;
	int argc, cap;
};

/* Add an argument; NULL (a value that could not be resolved, already reported) adds nothing. */
static void inst_arg(struct inst *in, char *a)
{
	if (!a)
		return;
	if (in->argc + 2 > in->cap) {
		in->cap = in->cap ? in->cap * 2 : 64;
		in->argv = realloc(in->argv, (size_t)in->cap * sizeof(*in->argv));
		if (!in->argv)
			npl_oom();
	}
	in->argv[in->argc++] = a;
	in->argv[in->argc] = NULL;
}

/* Add a plan node's environment to e: the part placed before the env files, or the rest. */
static void env_add(struct npl_cli *cli, struct env *e, const cJSON *node, int before, const struct npl_site *site,
		    int *bad)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(node, "env")) {
		char *v;

		if (env_before_source(it) != before)
			continue;
		v = value(cli, npl_json_str(it, "value"), site, bad);
		env_put(e, it, v ? v : "");
		free(v);
	}
}

/* Print that part as the shell lines that would set it. */
static void print_env(struct npl_cli *cli, const cJSON *node, int before, const struct npl_site *site, int *bad)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(node, "env")) {
		const char *op = npl_json_str(it, "op"), *name = npl_json_str(it, "name"), *sep = npl_json_str(it, "sep");
		char *v;

		if (env_before_source(it) != before)
			continue;
		/* a manifest's names and separators reach the terminal escaped */
		name = npl_escape_in(&cli->arena, name ? name : "");
		sep = npl_escape_in(&cli->arena, sep ? sep : ":");
		v = value(cli, npl_json_str(it, "value"), site, bad);
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
static void exec_in(const struct env *e, char **argv)
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
static int supervise(struct npl_cli *cli, struct inst *v, int n, const struct env *common,
		     const struct npl_site *site, int *bad, double grace)
{
	pid_t *pids = calloc((size_t)n, sizeof(*pids));
	sigset_t set, old;
	int live = 0, first = -1, status = 0, k, stopping = 0;
	double deadline = 0;

	if (!pids)
		npl_oom();
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, &old);
	for (k = 0; k < n; k++) {
		struct env e;

		env_from(&e, common->v);
		env_add(cli, &e, v[k].node, 0, site, bad);
		pids[k] = fork();
		if (pids[k] == 0) {
			sigprocmask(SIG_SETMASK, &old, NULL);
			exec_in(&e, v[k].argv);
			fprintf(stderr, "npulaunch: apply: cannot run %s: %s\n", v[k].argv[0], strerror(errno));
			_exit(127);
		}
		env_release(&e);
		if (pids[k] < 0) {
			npl_error(&cli->diag, NULL, "cannot start instance %d: %s", k, strerror(errno));
			npl_cli_flush(cli);
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

/* The preflight checks of this node's role (preflight.h): warnings and failures printed; a
 * failure stops apply before anything changes. 0, or an exit code. */
static int preflight(struct npl_cli *cli, const cJSON *plan, const cJSON *role, const struct npl_site *site,
		     const char *root, int idx, const struct addrs *a, const char *manifest)
{
	const char *list = npl_json_str(role, "node_list");
	struct npl_preflight_opts po;
	struct npl_preflight pf;
	struct npl_pf_ifaces ifs;
	int rc = NPL_EXIT_OK;

	memset(&po, 0, sizeof(po));
	po.plan = plan;
	po.role = role;
	po.site = site;
	po.root = root;
	po.source = manifest;
	po.node = idx;
	po.node_ip = list ? site->key[npl_site_key_from_name(list)].v[idx] : NULL;
	po.local = addrs_text(cli, a);
	po.ifaces = npl_pf_ifaces_read(&ifs, &cli->arena) == 0 ? &ifs : NULL;
	po.timeout = 10;
	npl_preflight_run(&pf, &po);
	if (pf.failed || pf.warned)
		npl_preflight_print(stderr, &pf, 0);
	if (pf.failed) {
		fprintf(stderr, "npulaunch: apply: preflight failed: nothing was changed (--no-preflight skips it)\n");
		rc = NPL_EXIT_FAIL;
	}
	npl_preflight_release(&pf);
	return rc;
}

/* NPULAUNCH_STOP_TIMEOUT: how long instances that share a node get to stop. */
static const struct npl_number_spec stop_seconds = {"a number of seconds", 0, 3600, 0};

/* A plan node's environment, as JSON: [{name, value, op, sep, before_source}]. */
static void env_json(struct npl_cli *cli, cJSON *a, const cJSON *node, int before, const struct npl_site *site,
		     int *bad)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(node, "env")) {
		cJSON *e;
		char *v;

		if (env_before_source(it) != before)
			continue;
		e = cJSON_CreateObject();
		v = value(cli, npl_json_str(it, "value"), site, bad);
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
static void dry_run_json(struct npl_cli *cli, const cJSON *plan, const cJSON *role, const char *role_name, int idx,
			 const struct addrs *addrs, const struct npl_tune *t, char **files, int nfiles,
			 const cJSON *node, const struct inst *inst, int ninst, const struct npl_site *site, int *bad,
			 const char *cpus, const char *const *wait_urls, int nwait, double wait_timeout)
{
	cJSON *o = cJSON_CreateObject(), *a, *env = cJSON_CreateArray(), *stops = cJSON_CreateArray();
	const cJSON *it;
	char *text, ub[1024];
	int i;

	cJSON_AddStringToObject(o, "recipe", npl_json_str(cJSON_GetObjectItemCaseSensitive(plan, "recipe"), "id"));
	cJSON_AddStringToObject(o, "role", role_name);
	cJSON_AddNumberToObject(o, "node", idx);
	a = cJSON_AddArrayToObject(o, "addresses");
	for (i = 0; i < addrs->n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(addrs->v[i]));
	if (t->root) {
		a = npl_tune_json(t);
		cJSON_AddItemToObject(o, "tuning", cJSON_DetachItemFromObjectCaseSensitive(a, "items"));
		cJSON_Delete(a);
	} else {
		cJSON_AddArrayToObject(o, "tuning");   /* the router and the benchmark tune nothing */
	}
	a = cJSON_AddArrayToObject(o, "unset");
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(role, "unset"))
		cJSON_AddItemToArray(a, cJSON_CreateString(npl_json_str(it, "name")));
	a = cJSON_AddArrayToObject(o, "source");
	for (i = 0; i < nfiles; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(files[i]));
	env_json(cli, env, node, 1, site, bad);
	cJSON_AddItemToObject(o, "env", env);
	if (cpus)
		cJSON_AddStringToObject(o, "cpus", cpus);
	else
		cJSON_AddNullToObject(o, "cpus");
	a = cJSON_AddArrayToObject(o, "wait");
	for (i = 0; i < nwait; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(npl_url_redacted(wait_urls[i], ub, sizeof(ub))));
	cJSON_AddNumberToObject(o, "wait_timeout_s", wait_timeout);
	a = cJSON_AddArrayToObject(o, "instances");
	for (int k = 0; k < ninst; k++) {
		cJSON *e = cJSON_CreateObject(), *ie = cJSON_CreateArray(), *argv = cJSON_CreateArray();

		cJSON_AddNumberToObject(e, "instance", npl_json_int(inst[k].node, "instance", k));
		cJSON_AddNumberToObject(e, "slot", npl_json_int(inst[k].node, "slot", 0));
		env_json(cli, ie, inst[k].node, 0, site, bad);
		cJSON_AddItemToObject(e, "env", ie);
		for (i = 0; i < inst[k].argc; i++)
			cJSON_AddItemToArray(argv, cJSON_CreateString(inst[k].argv[i]));
		cJSON_AddItemToObject(e, "argv", argv);
		cJSON_AddItemToArray(a, e);
	}
	for (i = 0; i < cli->diag.n; i++)
		if (cli->diag.v[i].sev == NPL_ERROR) {
			char *m = npl_diag_format(&cli->diag, &cli->diag.v[i], 0);

			cJSON_AddItemToArray(stops, cJSON_CreateString(m));
			free(m);
		}
	cJSON_AddItemToObject(o, "stops", stops);
	text = cJSON_Print(o);
	puts(text);
	cJSON_free(text);
	cJSON_Delete(o);
}

int npl_cmd_apply(int argc, char **argv, struct npl_cli *cli)
{
	static const struct option own[] = {
		{"role", required_argument, NULL, 'r'},
		{"dry-run", no_argument, NULL, 'n'},
		{"root", required_argument, NULL, 'R'},
		{"cpus", required_argument, NULL, 'c'},
		{"journal", required_argument, NULL, 'J'},
		{"json", no_argument, NULL, 'j'},
		{"no-preflight", no_argument, NULL, 'P'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct option *opts = npl_cli_options(own);
	struct npl_cli_recipe_opts ro;
	struct npl_tune t;
	struct npl_site site;
	struct env env = {0};
	struct addrs addrs = {0};
	const char *role_name = NULL, *root = getenv("NPULAUNCH_ROOT"), *journal = NULL, *cpus = NULL;
	int root_from_env = 1;
	const char *arg;
	const cJSON *role = NULL, *node, *it;
	cJSON *plan = NULL;
	char **files = NULL;
	struct inst *inst = NULL;
	int dry = 0, c, rc = NPL_EXIT_OK, idx, bad = 0, ninst = 0, nfiles = 0, tuned = 0, no_preflight = 0, json = 0;
	struct npl_endpoint *eps = NULL;
	const char *wait_urls[256];
	int nwait = 0;
	double wait_timeout = 0, grace = 30;
	cpu_set_t *mask = NULL;
	size_t masksz = 0;

	memset(&ro, 0, sizeof(ro));
	ro.check = 1;
	memset(&t, 0, sizeof(t));
	memset(&site, 0, sizeof(site));
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'r': role_name = optarg; break;
		case 'n': dry = 1; break;
		case 'R': root = optarg; root_from_env = 0; break;
		case 'c': cpus = optarg; break;
		case 'J': journal = optarg; break;
		case 'j': json = 1; break;
		case 'P': no_preflight = 1; break;
		case 'h': help(); goto out;
		case ':': rc = npl_cli_usage_error("apply", "option '%s' needs a value", argv[optind - 1]); goto out;
		case '?': rc = npl_cli_usage_error("apply", "unknown option '%s'", argv[optind - 1]); goto out;
		default:
			if (npl_cli_recipe_opt(cli, &ro, c, optarg) <= 0) {
				rc = NPL_EXIT_USAGE;
				goto out;
			}
		}
	}
	if (optind + 1 < argc) {
		rc = npl_cli_usage_error("apply", "unexpected argument '%s'", argv[optind + 1]);
		goto out;
	}
	/* absolute or unset, as in the scripts: NPULAUNCH_ROOT= (empty) is / */
	if (root && root_from_env && !*root)
		root = NULL;
	if (root && root[0] != '/') {
		rc = npl_cli_usage_error("apply", "%s must be an absolute path, not '%s'",
					 root_from_env ? "NPULAUNCH_ROOT" : "--root", root);
		goto out;
	}
	if (root && !strcmp(root, "/"))
		root = NULL;
	if ((rc = npl_cli_env_number("apply", "NPULAUNCH_STOP_TIMEOUT", &stop_seconds, 30, &grace)))
		goto out;
	{
		/* the scripts read the same switch */
		const char *pre = getenv("NPULAUNCH_PREFLIGHT");

		if (pre && *pre && strcmp(pre, "0") && strcmp(pre, "1")) {
			rc = npl_cli_usage_error("apply", "NPULAUNCH_PREFLIGHT '%s' is not 0 (skip the preflight checks) or 1", pre);
			goto out;
		}
		no_preflight |= pre && !strcmp(pre, "0");
	}
	if (json && !dry) {
		rc = npl_cli_usage_error("apply", "--json reports a dry run: give --dry-run too");
		goto out;
	}
	arg = optind < argc ? argv[optind] : NULL;
	placeholders = dry;
	if ((rc = npl_cli_site(cli, &ro)))
		goto out;

	/* the plan: a rendered bundle, or a recipe resolved here */
	if (!(plan = npl_cli_plan(cli, arg, &ro, &rc)))
		goto out;
	npl_plan_site(plan, &site, &cli->arena);
	if (local_addresses(cli, &addrs)) {
		npl_cli_flush(cli);
		rc = NPL_EXIT_USAGE;
		goto out;
	}

	/* the role: named, or the one this node's address belongs to */
	if (role_name) {
		role = npl_plan_role(plan, role_name);
		if (!role) {
			struct npl_buf b = NPL_BUF_INIT;

			cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(plan, "roles"))
				npl_buf_printf(&b, "%s%s", b.len ? ", " : "", npl_json_str(it, "role"));
			rc = npl_cli_usage_error("apply", "recipe '%s' has no role '%s' (its roles: %s)",
						 npl_json_str(cJSON_GetObjectItemCaseSensitive(plan, "recipe"), "id"),
						 role_name, npl_buf_str(&b));
			npl_buf_release(&b);
			goto out;
		}
	} else {
		const cJSON *only = NULL;
		int matches = 0, servers_without_list = 0;
		struct npl_buf b = NPL_BUF_INIT;

		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(plan, "roles")) {
			const char *prog = npl_json_str(it, "program");

			if (!prog || strcmp(prog, "server"))
				continue;
			if (!npl_json_str(it, "node_list")) {
				servers_without_list++;
				only = only ? only : it;
				continue;
			}
			if (node_of(it, &site, &addrs) >= 0) {
				matches++;
				role = it;
				npl_buf_printf(&b, "%s%s", b.len ? ", " : "", npl_json_str(it, "role"));
			}
		}
		if (matches > 1) {
			rc = npl_cli_usage_error("apply", "this node (%s) is in the lists of %s: say which with --role",
						 addrs_text(cli, &addrs), npl_buf_str(&b));
			npl_buf_release(&b);
			goto out;
		}
		npl_buf_release(&b);
		if (!matches && servers_without_list == 1)
			role = only;
		if (!role) {
			rc = npl_cli_usage_error("apply", "this node (%s) is in no role's list: say which with --role, or give the addresses (--node-ip, --prefill-ip, --decode-ip)",
						 addrs_text(cli, &addrs));
			goto out;
		}
		role_name = npl_json_str(role, "role");
	}
	idx = node_of(role, &site, &addrs);
	if (idx == -2) {
		const char *list = npl_json_str(role, "node_list");
		int k = npl_site_key_from_name(list);

		rc = NPL_EXIT_USAGE;
		npl_error(&cli->diag, NULL, "%s needs %d address%s in rank order: give --%s once per node, or export %s='ADDRESS ...'",
			  list, nodes_count(role), nodes_count(role) == 1 ? "" : "es", list, npl_site_var(k));
		npl_cli_flush(cli);
		goto out;
	}
	if (idx < 0) {
		const char *list = npl_json_str(role, "node_list");
		const struct npl_site_value *v = &site.key[npl_site_key_from_name(list)];
		struct npl_buf b = NPL_BUF_INIT;

		for (int i = 0; i < v->n; i++)
			npl_buf_printf(&b, "%s%s", i ? " " : "", v->v[i]);
		npl_error(&cli->diag, NULL, "this host (%s) is not in the %s list (%s): run it on one of those nodes, or set NPULAUNCH_NODE_IP",
			  addrs_text(cli, &addrs), list, npl_buf_str(&b));
		npl_buf_release(&b);
		npl_cli_flush(cli);
		rc = NPL_EXIT_USAGE;
		goto out;
	}
	/* the instances this node runs: one, or several that share it (each on its own dies) */
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(role, "nodes"))
		if (npl_json_int(it, "index", -1) == idx)
			ninst++;
	inst = calloc((size_t)ninst + 1, sizeof(*inst));
	files = calloc((size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(role, "source")) + 1, sizeof(*files));
	if (!inst || !files)
		npl_oom();
	ninst = 0;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(role, "nodes"))
		if (npl_json_int(it, "index", -1) == idx)
			inst[ninst++].node = it;
	if (!ninst) {
		npl_error(&cli->diag, NULL, "the plan has no launch for node %d of the %s", idx, role_name);
		npl_cli_flush(cli);
		rc = NPL_EXIT_FAIL;
		goto out;
	}
	node = inst[0].node;

	/* everything the launch needs, resolved before anything changes */
	for (int k = 0; k < ninst; k++) {
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(inst[k].node, "launch"))
			inst_arg(&inst[k], value(cli, it->valuestring, &site, &bad));
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(inst[k].node, "flags")) {
			const cJSON *v;

			inst_arg(&inst[k], strdup(npl_json_str(it, "flag")));
			cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(it, "values"))
				inst_arg(&inst[k], value(cli, v->valuestring, &site, &bad));
		}
	}
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(role, "source")) {
		char *p = value(cli, npl_json_str(it, "path"), &site, &bad);

		if (p) {
			files[nfiles] = root ? npl_arena_printf(&cli->arena, "%s%s", root, p) : npl_arena_strdup(&cli->arena, p);
			if (access(files[nfiles], R_OK) != 0)
				npl_error(&cli->diag, NULL, "cannot read %s: %s (is the Ascend toolkit installed on this node?)",
					  files[nfiles], strerror(errno));
			nfiles++;
		}
		free(p);
	}
	/* the values of the environment, checked now */
	for (int k = 0; k < ninst; k++)
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(inst[k].node, "env"))
			free(value(cli, npl_json_str(it, "value"), &site, &bad));
	if (!strcmp(role_name, "router")) {
		/* the router starts once every server answers */
		int i, nep = npl_cli_endpoints(cli, plan, 0, &eps);

		if ((rc = npl_cli_env_number("apply", "NPULAUNCH_WAIT_TIMEOUT", &npl_cli_wait_seconds, 1800, &wait_timeout))) {
			npl_cli_flush(cli);
			goto out;
		}
		for (i = 0; i < nep; i++)
			if (eps[i].url)
				wait_urls[nwait < 255 ? nwait++ : nwait] = eps[i].url;
	}
	if (cpus) {
		unsigned char *want = calloc(65536, 1), *online = calloc(65536, 1);
		int i, n;

		if (!want || !online)
			npl_oom();
		if (npl_cpu_list_parse(cpus, want, 65536)) {
			npl_error(&cli->diag, NULL, "--cpus '%s' is not a CPU list (like 0-63,128-191)", cpus);
			bad |= 1 << 29;   /* a usage error: exit 2 (bits 0-5 are missing site values) */
		} else if ((n = npl_cpus_online(root ? root : "", online, 65536, &cli->diag)) > 0) {
			mask = CPU_ALLOC(65536);
			masksz = CPU_ALLOC_SIZE(65536);
			if (!mask)
				npl_oom();
			CPU_ZERO_S(masksz, mask);
			for (i = 0; i < 65536; i++) {
				if (!want[i])
					continue;
				if (!online[i]) {
					npl_error(&cli->diag, NULL, "--cpus: CPU %d is not online", i);
					break;
				}
				CPU_SET_S((size_t)i, masksz, mask);
			}
		}
		free(want);
		free(online);
	}
	/* a dry run only reads the host (any user may run it), then asks what a real run could not write */
	if (cJSON_GetObjectItemCaseSensitive(role, "tuning")) {
		if (npl_tune_collect_ex(&t, cJSON_GetObjectItemCaseSensitive(role, "tuning"), root, bundle_manifest(cli, arg),
					dry ? NPL_TUNE_READ_ONLY : 0, &cli->diag) != 0)
			bad |= 1 << 30;
		else if (dry && npl_tune_writable(&t, &cli->diag))
			bad |= 1 << 30;
	}
	if (cli->diag.errors && !dry) {
		npl_cli_flush(cli);
		fprintf(stderr, "npulaunch: apply: nothing was changed\n");
		rc = bad & ~(1 << 30) ? NPL_EXIT_USAGE : NPL_EXIT_FAIL;
		goto out;
	}
	if (!dry)
		npl_cli_flush(cli);
	if (!dry && !no_preflight &&
	    (rc = preflight(cli, plan, role, &site, root, idx, &addrs, bundle_manifest(cli, arg))))
		goto out;

	if (dry && json) {
		dry_run_json(cli, plan, role, role_name, idx, &addrs, &t, files, nfiles, node, inst, ninst, &site, &bad,
			     cpus, wait_urls, wait_timeout > 0 ? nwait : 0, wait_timeout);
		rc = cli->diag.errors ? (bad & ~(1 << 30) ? NPL_EXIT_USAGE : NPL_EXIT_FAIL) : NPL_EXIT_OK;
		if (cli->diag.errors)
			fprintf(stderr, "npulaunch: apply: --dry-run: a real run would stop on:\n");
		npl_cli_flush(cli);
		goto out;
	}
	if (dry) {
		/* the whole plan, whatever the host lacks; then what a real run would stop on */
		const cJSON *tuning = cJSON_GetObjectItemCaseSensitive(role, "tuning"), *sc;
		int i;

		printf("# npulaunch apply --dry-run: %s of %s, node %d%s%s\n", role_name,
		       npl_json_str(cJSON_GetObjectItemCaseSensitive(plan, "recipe"), "id"), idx,
		       addrs.n ? " at " : "", addrs.n ? addrs.v[0] : "");
		for (i = 0; i < t.n; i++)
			printf("tune %s  %s -> %s%s\n", npl_escape_in(&cli->arena, t.v[i].path),
			       npl_escape_in(&cli->arena, npl_arena_printf(&cli->arena, "%.*s", (int)strcspn(t.v[i].current, "\n"), t.v[i].current)),
			       t.v[i].wanted, npl_tune_item_ok(&t.v[i]) ? " (already)" : "");
		cJSON_ArrayForEach(sc, cJSON_GetObjectItemCaseSensitive(tuning, "sysctl")) {
			const char *name = npl_json_str(sc, "name");

			for (i = 0; i < t.n && (!name || strcmp(t.v[i].name, name)); i++)
				;
			if (name && i == t.n)
				printf("tune sysctl %s -> %s  (not on this host: see below)\n", npl_escape_in(&cli->arena, name),
				       npl_escape_in(&cli->arena, npl_json_str(sc, "value") ? npl_json_str(sc, "value") : "?"));
		}
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(role, "unset"))
			printf("unset %s\n", npl_escape_in(&cli->arena, npl_json_str(it, "name")));
		print_env(cli, node, 1, &site, &bad);
		for (i = 0; i < nfiles; i++) {
			fputs("source ", stdout);
			print_word(stdout, files[i]);
			putchar('\n');
		}
		if (cpus)
			printf("cpus %s\n", npl_escape_in(&cli->arena, cpus));
		for (i = 0; i < nwait && wait_timeout > 0; i++)
		{
			char ub[1024];

			printf("wait %s (up to %gs)\n", npl_escape_in(&cli->arena, npl_url_redacted(wait_urls[i], ub, sizeof(ub))),
			       wait_timeout);
		}
		for (int k = 0; k < ninst; k++) {
			if (ninst > 1)
				printf("# instance %d, slot %d of this node: started beside the others\n",
				       npl_json_int(inst[k].node, "instance", k), npl_json_int(inst[k].node, "slot", k));
			print_env(cli, inst[k].node, 0, &site, &bad);
			fputs(ninst > 1 ? "start" : "exec", stdout);
			for (i = 0; i < inst[k].argc; i++) {
				putchar(' ');
				print_word(stdout, inst[k].argv[i]);
			}
			putchar('\n');
		}
		fflush(stdout);
		if (cli->diag.errors) {
			fprintf(stderr, "npulaunch: apply: --dry-run: a real run would stop on:\n");
			npl_cli_flush(cli);
			rc = bad & ~(1 << 30) ? NPL_EXIT_USAGE : NPL_EXIT_FAIL;
		} else {
			npl_cli_flush(cli);
		}
		goto out;
	}

	if (nwait && wait_timeout > 0) {
		char herr[256];
		int left;

		if (npl_health_init(herr, sizeof(herr))) {
			fprintf(stderr, "npulaunch: apply: %s\n", herr);
			rc = NPL_EXIT_FAIL;
			goto out;
		}
		left = npl_wait(wait_urls, nwait, NPL_PROBE_HEALTH, wait_timeout, stderr, NULL);
		if (left) {
			fprintf(stderr, "npulaunch: apply: not starting the %s: %d of %d server%s not ready after %gs\n",
				role_name, left, nwait, nwait == 1 ? "" : "s", wait_timeout);
			rc = NPL_EXIT_FAIL;
			goto out;
		}
	}

	/* from here on the host changes: tune, then the environment, then exec */
	if (t.n && npl_tune_apply(&t, journal, &tuned, &cli->diag)) {
		npl_cli_flush(cli);
		fprintf(stderr, "npulaunch: apply: the tuning was undone; nothing was launched\n");
		rc = NPL_EXIT_FAIL;
		goto out;
	}
	env_from(&env, environ);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(role, "unset"))
		env_unset(&env, npl_json_str(it, "name"));
	/* the variables the plan places before the env files (the node's, as the script has
	 * them), then the files; each instance's own environment is added after them */
	env_add(cli, &env, node, 1, &site, &bad);
	if (nfiles && source_files(&env, (const char *const *)files, nfiles, &cli->diag))
		goto fail;
	if (mask && sched_setaffinity(0, masksz, mask) != 0) {
		npl_error(&cli->diag, NULL, "cannot pin to CPUs %s: %s", cpus, strerror(errno));
		goto fail;
	}
	fprintf(stderr, "npulaunch: apply: %s node %d of %s: %d setting%s changed; %s %s\n", role_name, idx,
		npl_json_str(cJSON_GetObjectItemCaseSensitive(plan, "recipe"), "id"), tuned,
		tuned == 1 ? "" : "s", ninst > 1 ? "starting its instances:" : "exec", inst[0].argv[0]);
	fflush(NULL);
	if (!strcmp(role_name, "bench") && bundle_manifest(cli, arg)) {
		/* bench_serving appends its results in the current folder: the bundle's, as bench.sh */
		char *m = npl_arena_strdup(&cli->arena, bundle_manifest(cli, arg)), *slash = strrchr(m, '/');

		if (slash)
			*slash = '\0';
		if (slash && chdir(m) != 0) {
			npl_error(&cli->diag, NULL, "cannot enter the bundle folder %s: %s", m, strerror(errno));
			goto fail;
		}
	}
	if (ninst == 1) {
		env_add(cli, &env, node, 0, &site, &bad);
		exec_in(&env, inst[0].argv);
		npl_error(&cli->diag, NULL, "cannot run %s: %s", inst[0].argv[0], strerror(errno));
		goto fail;
	}
	/* from here the servers run: their end is ours, and the tuning stays as it would after exec */
	rc = supervise(cli, inst, ninst, &env, &site, &bad, grace);
	goto out;
fail:
	npl_cli_flush(cli);
	if (tuned) {
		/* and the journal goes when this apply made it */
		npl_tune_undo(&t, &cli->diag);
		npl_cli_flush(cli);
		fprintf(stderr, "npulaunch: apply: the tuning was undone\n");
	}
	rc = NPL_EXIT_FAIL;
out:
	for (int k = 0; inst && k < ninst; k++) {
		for (int i = 0; i < inst[k].argc; i++)
			free(inst[k].argv[i]);
		free(inst[k].argv);
	}
	free(inst);
	free(files);
	if (mask)
		CPU_FREE(mask);
	free(addrs.v);
	env_release(&env);
	npl_tune_release(&t);
	cJSON_Delete(plan);
	free(opts);
	npl_cli_recipe_opts_release(&ro);
	return rc;
}
