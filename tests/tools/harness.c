/* harness.c: the simulated host of the tests; see harness.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static const char *const sysctls[][2] = {
	{"vm/swappiness", "60"},
	{"kernel/numa_balancing", "1"},
	{"kernel/sched_migration_cost_ns", "500000"},
};

static const char *const ascend_files[] = {
	"ascend-toolkit/set_env.sh",
	"nnal/atb/set_env.sh",
	"ascend-toolkit/latest/opp/vendors/customize/bin/set_env.bash",
	"ascend-toolkit/latest/opp/vendors/custom_transformer/bin/set_env.bash",
};

static int mkdirs(const char *path)
{
	char tmp[1024], *p;

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(tmp, 0755) && errno != EEXIST ? -1 : 0;
}

int sim_write(const char *path, const char *text)
{
	char dir[1024], *slash;
	FILE *fp;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		if (mkdirs(dir))
			return -1;
	}
	fp = fopen(path, "w");
	if (!fp)
		return -1;
	fputs(text, fp);
	return fclose(fp);
}

char *sim_slurp(const char *path)
{
	FILE *fp = fopen(path, "rb");
	char *buf;
	long n;

	if (!fp)
		return NULL;
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, fp) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = '\0';
	fclose(fp);
	return buf;
}

int sim_reset(struct sim *s)
{
	char path[1024];
	size_t i;
	int c;

	for (c = 0; c < s->ncpus; c++) {
		snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor",
			 s->root, c);
		if (sim_write(path, "schedutil\n"))
			return -1;
		snprintf(path, sizeof(path),
			 "%s/sys/devices/system/cpu/cpu%d/cpufreq/scaling_available_governors", s->root, c);
		if (sim_write(path, "performance schedutil powersave\n"))
			return -1;
	}
	for (i = 0; i < sizeof(sysctls) / sizeof(sysctls[0]); i++) {
		char val[64];

		snprintf(path, sizeof(path), "%s/proc/sys/%s", s->root, sysctls[i][0]);
		snprintf(val, sizeof(val), "%s\n", sysctls[i][1]);
		if (sim_write(path, val))
			return -1;
	}
	if (sim_write(s->log, "") || sim_write(s->sourced, ""))
		return -1;
	return 0;
}

int sim_create(struct sim *s, int ncpus, const char *stub)
{
	char path[1024], text[512];
	size_t i;
	const char *tmp = getenv("TMPDIR");

	memset(s, 0, sizeof(*s));
	snprintf(s->dir, sizeof(s->dir), "%s/npl-sim-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(s->dir))
		return -1;
	s->ncpus = ncpus;
	snprintf(s->root, sizeof(s->root), "%s/root", s->dir);
	snprintf(s->bin, sizeof(s->bin), "%s/bin", s->dir);
	snprintf(s->log, sizeof(s->log), "%s/calls.jsonl", s->dir);
	snprintf(s->sourced, sizeof(s->sourced), "%s/sourced.txt", s->dir);
	snprintf(s->out, sizeof(s->out), "%s/stdout", s->dir);
	snprintf(s->err, sizeof(s->err), "%s/stderr", s->dir);
	if (mkdirs(s->bin))
		return -1;
	snprintf(path, sizeof(path), "%s/python3", s->bin);
	if (symlink(stub, path))
		return -1;
	snprintf(path, sizeof(path), "%s/python", s->bin);
	if (symlink(stub, path))
		return -1;
	snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/online", s->root);
	snprintf(text, sizeof(text), "0-%d\n", ncpus - 1);
	if (sim_write(path, text))
		return -1;
	for (i = 0; i < sizeof(ascend_files) / sizeof(ascend_files[0]); i++) {
		snprintf(path, sizeof(path), "%s/usr/local/Ascend/%s", s->root, ascend_files[i]);
		snprintf(text, sizeof(text), "echo \"sourced %s\" >> \"$NPL_TEST_SOURCED\"\n", ascend_files[i]);
		if (sim_write(path, text))
			return -1;
	}
	return sim_reset(s);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	/* never through a symbolic link: a test links /dev/full into its root, and chmod
	 * would follow it and change the host's device (as root) */
	if (flag != FTW_SL && flag != FTW_SLN)
		chmod(path, 0700);
	return remove(path);
}

void sim_destroy(struct sim *s)
{
	if (s->dir[0] && !getenv("NPL_TEST_KEEP"))
		nftw(s->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static char **base_envp(const struct sim *s, char *const extra[], int *n)
{
	char **env = calloc(64, sizeof(*env));
	int i = 0, j;

	if (!env)
		abort();
	asprintf(&env[i++], "PATH=%s:/usr/local/bin:/usr/bin:/bin", s->bin);
	asprintf(&env[i++], "HOME=%s", s->dir);
	asprintf(&env[i++], "LANG=C.UTF-8");
	asprintf(&env[i++], "NPL_STUB_LOG=%s", s->log);
	asprintf(&env[i++], "NPL_TEST_SOURCED=%s", s->sourced);
	asprintf(&env[i++], "NPULAUNCH_ROOT=%s", s->root);
	/* a simulated host has no NPU, model or interface: apply and the scripts skip preflight */
	asprintf(&env[i++], "NPULAUNCH_PREFLIGHT=0");
	asprintf(&env[i++], "http_proxy=http://proxy.invalid:1");
	asprintf(&env[i++], "https_proxy=http://proxy.invalid:1");
	asprintf(&env[i++], "HTTP_PROXY=http://proxy.invalid:1");
	asprintf(&env[i++], "HTTPS_PROXY=http://proxy.invalid:1");
	asprintf(&env[i++], "ASCEND_LAUNCH_BLOCKING=1");
	for (j = 0; extra && extra[j] && i < 62; j++) {
		/* an extra K=V replaces a base entry of the same name */
		const char *eq = strchr(extra[j], '=');
		size_t k = eq ? (size_t)(eq - extra[j]) + 1 : strlen(extra[j]);
		int m;

		for (m = 0; m < i; m++)
			if (!strncmp(env[m], extra[j], k))
				break;
		if (m < i) {
			free(env[m]);
			env[m] = strdup(extra[j]);
		} else {
			env[i++] = strdup(extra[j]);
		}
	}
	env[i] = NULL;
	*n = i;
	return env;
}

cJSON *sim_base_env(const struct sim *s, char *const extra[])
{
	int n, i;
	char **env = base_envp(s, extra, &n);
	cJSON *o = cJSON_CreateObject();

	for (i = 0; i < n; i++) {
		char *eq = strchr(env[i], '=');

		*eq = '\0';
		cJSON_AddStringToObject(o, env[i], eq + 1);
		free(env[i]);
	}
	free(env);
	return o;
}

/* argv0 found on the PATH of env (as execvp in a child given env would find it), or NULL */
static char *path_in(char *const env[], const char *argv0)
{
	const char *path = "/usr/bin:/bin";
	int i;

	if (strchr(argv0, '/'))
		return strdup(argv0);
	for (i = 0; env[i]; i++)
		if (!strncmp(env[i], "PATH=", 5))
			path = env[i] + 5;
	while (*path) {
		size_t len = strcspn(path, ":");
		char *cand = NULL;

		if (asprintf(&cand, "%.*s/%s", (int)len, len ? path : ".", argv0) < 0)
			return NULL;
		if (access(cand, X_OK) == 0)
			return cand;
		free(cand);
		path += len + (path[len] == ':');
	}
	return NULL;
}

/* The child is started by posix_spawn (a vfork: a test built with sanitizers has a large
 * address space, whose page tables fork() would copy for every run). */
int sim_run(struct sim *s, char *const argv[], char *const extra[])
{
	int n, status, i, rc = -1;
	char **env = base_envp(s, extra, &n), *prog = path_in(env, argv[0]);
	posix_spawn_file_actions_t fa;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, s->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 2, s->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (!prog)
		rc = 127;
	else if (posix_spawn(&pid, prog, &fa, NULL, argv, env) != 0)
		rc = 127;
	else if (waitpid(pid, &status, 0) >= 0)
		rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	posix_spawn_file_actions_destroy(&fa);
	free(prog);
	for (i = 0; i < n; i++)
		free(env[i]);
	free(env);
	return rc;
}

static cJSON *parse_flags(const cJSON *argv, int from)
{
	cJSON *flags = cJSON_CreateObject(), *cur = NULL;
	int i, n = cJSON_GetArraySize(argv);

	for (i = from; i < n; i++) {
		const char *a = cJSON_GetArrayItem(argv, i)->valuestring;

		if (!strncmp(a, "--", 2)) {
			const char *eq = strchr(a, '=');
			char name[512];

			snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
			cur = cJSON_GetObjectItemCaseSensitive(flags, name);
			if (!cur) {
				cur = cJSON_CreateArray();
				cJSON_AddItemToObject(flags, name, cur);
			}
			if (eq) {
				cJSON_AddItemToArray(cur, cJSON_CreateString(eq + 1));
				cur = NULL;
			}
		} else if (cur) {
			cJSON_AddItemToArray(cur, cJSON_CreateString(a));
		} else {
			cJSON *pos = cJSON_GetObjectItemCaseSensitive(flags, "<positional>");

			if (!pos) {
				pos = cJSON_CreateArray();
				cJSON_AddItemToObject(flags, "<positional>", pos);
			}
			cJSON_AddItemToArray(pos, cJSON_CreateString(a));
		}
	}
	return flags;
}

static const char *flag_value(const cJSON *flags, const char *name, const char *def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(flags, name);

	return v && cJSON_GetArraySize(v) ? cJSON_GetArrayItem(v, 0)->valuestring : def;
}

static int ignored_env(const char *k)
{
	static const char *const skip[] = {"PATH", "HOME", "LANG", "PWD", "SHLVL", "_", "OLDPWD",
					   "NPL_STUB_LOG", "NPL_TEST_SOURCED"};
	size_t i;

	for (i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (!strcmp(skip[i], k))
			return 1;
	return 0;
}

cJSON *sim_semantics(struct sim *s, const cJSON *start)
{
	cJSON *roles = cJSON_CreateObject(), *gov = cJSON_CreateArray(), *sysctl = cJSON_CreateObject();
	cJSON *sourced = cJSON_CreateArray();
	char *log = sim_slurp(s->log), *src = sim_slurp(s->sourced), *line, *save = NULL;
	char path[1024];
	size_t i;
	int c;

	/* host state left behind */
	for (c = 0; c < s->ncpus; c++) {
		char *g;
		const cJSON *it;
		int seen = 0;

		snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor",
			 s->root, c);
		g = sim_slurp(path);
		if (!g)
			continue;
		g[strcspn(g, "\n")] = '\0';
		cJSON_ArrayForEach(it, gov)
			seen |= !strcmp(it->valuestring, g);
		if (!seen)
			cJSON_AddItemToArray(gov, cJSON_CreateString(g));
		free(g);
	}
	for (i = 0; i < sizeof(sysctls) / sizeof(sysctls[0]); i++) {
		char key[128], *v, *p;

		snprintf(path, sizeof(path), "%s/proc/sys/%s", s->root, sysctls[i][0]);
		v = sim_slurp(path);
		snprintf(key, sizeof(key), "%s", sysctls[i][0]);
		for (p = key; *p; p++)
			if (*p == '/')
				*p = '.';
		if (v) {
			v[strcspn(v, "\n")] = '\0';
			cJSON_AddStringToObject(sysctl, key, v);
			free(v);
		}
	}
	for (line = src ? strtok_r(src, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
		const cJSON *it;
		int seen = 0;

		if (strncmp(line, "sourced ", 8))
			continue;
		cJSON_ArrayForEach(it, sourced)
			seen |= !strcmp(it->valuestring, line + 8);
		if (!seen)
			cJSON_AddItemToArray(sourced, cJSON_CreateString(line + 8));
	}
	save = NULL;
	for (line = log ? strtok_r(log, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
		cJSON *rec = cJSON_Parse(line), *argv, *env, *flags, *sem, *envd, *unset;
		const cJSON *it;
		const char *mod;
		char role[128];

		if (!rec)
			continue;
		argv = cJSON_GetObjectItemCaseSensitive(rec, "argv");
		env = cJSON_GetObjectItemCaseSensitive(rec, "env");
		mod = cJSON_GetArraySize(argv) >= 3 ? cJSON_GetArrayItem(argv, 2)->valuestring : "?";
		flags = parse_flags(argv, 3);
		if (!strcmp(mod, "sglang.launch_server"))
			snprintf(role, sizeof(role), "%s#%s", flag_value(flags, "--disaggregation-mode", "pd-mixed"),
				 flag_value(flags, "--node-rank", "0"));
		else if (!strcmp(mod, "sglang_router.launch_router"))
			snprintf(role, sizeof(role), "router");
		else if (!strcmp(mod, "sglang.bench_serving"))
			snprintf(role, sizeof(role), "bench");
		else
			snprintf(role, sizeof(role), "other:%s", mod);
		envd = cJSON_CreateObject();
		cJSON_ArrayForEach(it, env) {
			const cJSON *was = cJSON_GetObjectItemCaseSensitive(start, it->string);

			if (ignored_env(it->string))
				continue;
			if (!was || strcmp(was->valuestring, it->valuestring))
				cJSON_AddStringToObject(envd, it->string, it->valuestring);
		}
		unset = cJSON_CreateArray();
		cJSON_ArrayForEach(it, start)
			if (!cJSON_GetObjectItemCaseSensitive(env, it->string))
				cJSON_AddItemToArray(unset, cJSON_CreateString(it->string));
		sem = cJSON_CreateObject();
		cJSON_AddItemToObject(sem, "flags", flags);
		cJSON_AddItemToObject(sem, "env", envd);
		cJSON_AddItemToObject(sem, "unset", unset);
		cJSON_AddItemToObject(sem, "governors", cJSON_Duplicate(gov, 1));
		cJSON_AddItemToObject(sem, "sysctl", cJSON_Duplicate(sysctl, 1));
		cJSON_AddItemToObject(sem, "sourced", cJSON_Duplicate(sourced, 1));
		cJSON_AddItemToObject(sem, "argv", cJSON_Duplicate(argv, 1));
		/* several benchmarks run in turn: the second is "bench#2", ... */
		for (c = 2; !strcmp(mod, "sglang.bench_serving") && cJSON_GetObjectItemCaseSensitive(roles, role); c++)
			snprintf(role, sizeof(role), "bench#%d", c);
		if (!cJSON_GetObjectItemCaseSensitive(roles, role))
			cJSON_AddItemToObject(roles, role, sem);
		else
			cJSON_Delete(sem);
		cJSON_Delete(rec);
	}
	free(log);
	free(src);
	cJSON_Delete(gov);
	cJSON_Delete(sysctl);
	cJSON_Delete(sourced);
	return roles;
}

/* Expected flags are [[flag, [values]], ...]; got flags are {flag: [values]}. */
static cJSON *flags_object(const cJSON *f)
{
	cJSON *o;
	const cJSON *it;

	if (cJSON_IsObject(f))
		return cJSON_Duplicate(f, 1);
	o = cJSON_CreateObject();
	cJSON_ArrayForEach(it, f)
		cJSON_AddItemToObject(o, cJSON_GetArrayItem(it, 0)->valuestring,
				      cJSON_Duplicate(cJSON_GetArrayItem(it, 1), 1));
	return o;
}

static int has_string(const cJSON *arr, const char *s)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, arr)
		if (cJSON_IsString(it) && !strcmp(it->valuestring, s))
			return 1;
	return 0;
}

static void problem(int *n, const char *what, const char *role, const char *fmt, const char *a,
		    const cJSON *w, const cJSON *g)
{
	char *ws = w ? cJSON_PrintUnformatted(w) : NULL, *gs = g ? cJSON_PrintUnformatted(g) : NULL;

	fprintf(stderr, "%s: %s: ", what, role);
	fprintf(stderr, fmt, a);
	fprintf(stderr, ": want %s got %s\n", ws ? ws : "nothing", gs ? gs : "nothing");
	free(ws);
	free(gs);
	(*n)++;
}

int sim_compare(const char *what, const cJSON *want, const cJSON *got)
{
	const cJSON *wr, *gr, *it;
	int n = 0;

	cJSON_ArrayForEach(wr, want) {
		cJSON *wf, *gf;

		gr = cJSON_GetObjectItemCaseSensitive(got, wr->string);
		if (!gr) {
			problem(&n, what, wr->string, "%s", "missing launch", NULL, NULL);
			continue;
		}
		wf = flags_object(cJSON_GetObjectItemCaseSensitive(wr, "flags"));
		gf = flags_object(cJSON_GetObjectItemCaseSensitive(gr, "flags"));
		cJSON_ArrayForEach(it, wf)
			if (!cJSON_Compare(it, cJSON_GetObjectItemCaseSensitive(gf, it->string), 1))
				problem(&n, what, wr->string, "flag %s", it->string, it,
					cJSON_GetObjectItemCaseSensitive(gf, it->string));
		cJSON_ArrayForEach(it, gf)
			if (!cJSON_GetObjectItemCaseSensitive(wf, it->string))
				problem(&n, what, wr->string, "flag %s", it->string, NULL, it);
		cJSON_Delete(wf);
		cJSON_Delete(gf);
		if (!cJSON_GetObjectItemCaseSensitive(wr, "env"))
			continue;  /* router and bench: flags only, as in the seed check */
		{
			const cJSON *we = cJSON_GetObjectItemCaseSensitive(wr, "env");
			const cJSON *ge = cJSON_GetObjectItemCaseSensitive(gr, "env");

			cJSON_ArrayForEach(it, we)
				if (!cJSON_Compare(it, cJSON_GetObjectItemCaseSensitive(ge, it->string), 1))
					problem(&n, what, wr->string, "env %s", it->string, it,
						cJSON_GetObjectItemCaseSensitive(ge, it->string));
			cJSON_ArrayForEach(it, ge)
				if (!cJSON_GetObjectItemCaseSensitive(we, it->string))
					problem(&n, what, wr->string, "env %s", it->string, NULL, it);
		}
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(wr, "unset"))
			if (!has_string(cJSON_GetObjectItemCaseSensitive(gr, "unset"), it->valuestring))
				problem(&n, what, wr->string, "%s not unset", it->valuestring, NULL, NULL);
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(wr, "sourced"))
			if (!has_string(cJSON_GetObjectItemCaseSensitive(gr, "sourced"), it->valuestring))
				problem(&n, what, wr->string, "%s not sourced", it->valuestring, NULL, NULL);
		if (!cJSON_Compare(cJSON_GetObjectItemCaseSensitive(wr, "governors"),
				   cJSON_GetObjectItemCaseSensitive(gr, "governors"), 1))
			problem(&n, what, wr->string, "%s", "governors",
				cJSON_GetObjectItemCaseSensitive(wr, "governors"),
				cJSON_GetObjectItemCaseSensitive(gr, "governors"));
		if (!cJSON_Compare(cJSON_GetObjectItemCaseSensitive(wr, "sysctl"),
				   cJSON_GetObjectItemCaseSensitive(gr, "sysctl"), 1))
			problem(&n, what, wr->string, "%s", "sysctls",
				cJSON_GetObjectItemCaseSensitive(wr, "sysctl"),
				cJSON_GetObjectItemCaseSensitive(gr, "sysctl"));
	}
	cJSON_ArrayForEach(gr, got)
		if (!cJSON_GetObjectItemCaseSensitive(want, gr->string))
			problem(&n, what, gr->string, "%s", "unexpected launch", NULL, NULL);
	return n;
}
