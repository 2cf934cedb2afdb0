/*
 * launch_ranks.c: SGLang's own per-rank binding on top of the server's (issue 26). SGLang starts
 * one process per rank after the exec; since 0.5.6 (SGLANG_NUMA_BIND_V2, on by default) its
 * --numa-node list, indexed by gpu id, starts each under numactl --cpunodebind=N --membind=N.
 * npulaunch passes the list only where that is safe: the SGLang the server's python finds has
 * both (server_args.py's numa_node, environ.py's SGLANG_NUMA_BIND_V2), numactl is on the
 * server's PATH (a missing one ends every rank in SGLang before 2026-07), and the recipe sets
 * neither --numa-node nor SGLANG_NUMA_BIND_V2 itself. Older SGLang binds in-process through
 * ctypes' libnuma.so, which ends a rank where the library is missing: left off. The lists come
 * from npl_launch_affinity (launch_affinity.c). See launch.h.
 */
#include <stdlib.h>
#include <string.h>

#include "npulaunch/fsio.h"
#include "npulaunch/launch.h"
#include "npulaunch/plan.h"
#include "npulaunch/proc.h"

#define MARK "npulaunch-sglang-package:"
#define PROBE                                                                                                  \
	"import importlib.util as u\n"                                                                         \
	"s = u.find_spec('sglang')\n"                                                                          \
	"print('" MARK "' + (s.submodule_search_locations[0] if s and s.submodule_search_locations else ''))\n"
#define SOURCE_MAX (16 << 20)

static const char *env_of(char *const *envp, const char *name)
{
	size_t n = strlen(name);

	for (; envp && *envp; envp++)
		if (!strncmp(*envp, name, n) && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

/* name on the PATH of envp (as the exec will find it), or NULL. */
static const char *on_path(struct npl_arena *a, char *const *envp, const char *name)
{
	return strchr(name, '/') ? name : npl_proc_find_in(a, name, env_of(envp, "PATH"));
}

/* 1 when the file holds needle. */
static int holds(struct npl_arena *a, const char *file, const char *needle)
{
	struct npl_diag q = NPL_DIAG_INIT;
	const char *text = npl_read_file_max(a, file, SOURCE_MAX, NULL, &q);

	npl_diag_release(&q);
	return text && strstr(text, needle);
}

/* The sglang package folder the server's python finds, or NULL with *why set. */
static const char *sglang_dir(struct npl_launch_node *l, char *const *envp, double timeout, const char **why)
{
	const char *py = l->inst[0].argv[0], *tool = on_path(l->arena, envp, py), *out = NULL, *m;
	char *argv[] = {(char *)py, (char *)"-c", (char *)PROBE, NULL};
	int status;

	if (!tool) {
		*why = npl_arena_printf(l->arena, "%s is not on the server's PATH: its SGLang was not asked", py);
		return NULL;
	}
	if (npl_proc_run_env(l->arena, tool, argv, envp, timeout, 1 << 16, &out, &status) == NPL_PROC_OK && !status)
		for (m = out; *m; m += strcspn(m, "\n"), m += *m == '\n')
			if (!strncmp(m, MARK, strlen(MARK)) && m[strlen(MARK)] && m[strlen(MARK)] != '\n')
				return npl_arena_strndup(l->arena, m + strlen(MARK), strcspn(m + strlen(MARK), "\n"));
	*why = npl_arena_printf(l->arena, "%s found no sglang package", py);
	return NULL;
}

void npl_launch_ranks(struct npl_launch_node *l, char *const *envp, double timeout)
{
	const char *dir, *why = NULL, *v2 = env_of(envp, "SGLANG_NUMA_BIND_V2");
	int k;

	for (k = 0; l->rank_nodes && k < l->ninst && !l->rank_nodes[k]; k++)
		;
	if (!l->rank_nodes || k == l->ninst)
		return;   /* no instance's list: rank_note says why */
	for (k = 0; k < l->ninst; k++)
		for (int i = 0; i < l->inst[k].argc; i++)
			if (!strcmp(l->inst[k].argv[i], "--numa-node")) {
				l->rank_note = "the recipe gives --numa-node itself";
				return;
			}
	if (v2) {
		l->rank_note = npl_arena_printf(l->arena, "the launch environment sets SGLANG_NUMA_BIND_V2=%s: SGLang's choice is the recipe's", v2);
		return;
	}
	if (!(dir = sglang_dir(l, envp, timeout, &why))) {
		l->rank_note = npl_arena_printf(l->arena, "%s: the ranks share the server's CPUs", why);
		return;
	}
	if (!holds(l->arena, npl_arena_printf(l->arena, "%s/srt/server_args.py", dir), "numa_node")) {
		l->rank_note = "this SGLang has no --numa-node (0.5.2 added it): the ranks share the server's CPUs";
		return;
	}
	if (!holds(l->arena, npl_arena_printf(l->arena, "%s/srt/environ.py", dir), "SGLANG_NUMA_BIND_V2")) {
		l->rank_note = "this SGLang binds a rank through libnuma.so, which ends the rank where the library is "
			       "missing (before 0.5.6): left off, the ranks share the server's CPUs";
		return;
	}
	if (!on_path(l->arena, envp, "numactl")) {
		l->rank_note = "numactl is not on the server's PATH (SGLang starts each rank under it): install it "
			       "(Debian: numactl) to bind each rank; the ranks share the server's CPUs";
		return;
	}
	for (k = 0; k < l->ninst; k++) {
		const char *p = l->rank_nodes[k];

		if (!p)
			continue;
		npl_launch_arg(&l->inst[k], "--numa-node");
		while (*p) {
			size_t n = strcspn(p, " ");

			npl_launch_arg(&l->inst[k], npl_arena_strndup(l->arena, p, n));
			p += n + (p[n] == ' ');
		}
	}
	if (l->rank_nodes[0])
		l->rank_note = npl_arena_printf(l->arena, "--numa-node %s: SGLang starts each rank under numactl "
					       "on its die's NUMA node (CPUs and memory)", l->rank_nodes[0]);
}
