/*
 * pagesh.h: layer input. The shell of a best-practice page's section, run in the head for one
 * node: what each `python -m MODULE` it would launch there gets (argv, exported environment,
 * unsets, sources, host tuning), the second step of `import` and `drift` (issue 24).
 *
 * It reads the subset of bash the pages are written in (see docs/architecture.md) and nothing
 * more: assignments, arrays, export, unset, source, `sysctl -w`, the governor's `echo | tee`,
 * `echo`, the node loop `for i in "${!ARR[@]}"` with its `if [[ "$LOCAL_HOST1" == ... ]]` and
 * `break`, the `hostname -I` substitution, `$((N + $i))`, `${ARR[$i]}`, quotes, line
 * continuations, comments; and the pages' placeholders (`<your prefill ip2>`,
 * `<network-interface>`), which are not shell, filled from the site values given. It executes
 * nothing; a line outside the subset is a located error, never a guess.
 * Included by the importer and its tests.
 */
#ifndef NPL_PAGESH_H
#define NPL_PAGESH_H

#include "npulaunch/arena.h"
#include "npulaunch/diag.h"
#include "npulaunch/page.h"

/* What the placeholders stand for: "<your prefill ipN>" is prefill_ip[N - 1] ("<your prefill
 * ip>" the first), likewise decode and "<your nodeN ip>"; "<network-interface>" is ifname. */
struct npl_pagesh_site {
	const char *ifname;
	const char *const *prefill_ip, *const *decode_ip, *const *node_ip;
	int nprefill, ndecode, nnode;
};

/* One launch: "python -m MODULE ARGV..." with the state of the shell at that moment. Lists
 * of names are sorted; env and sysctl entries are "NAME=VALUE". */
struct npl_pagesh_launch {
	const char *module;
	const char **argv;
	struct npl_loc *argloc;    /* where each argument is written (NULL: not known) */
	int argc;
	const char **env;          /* every exported variable */
	int nenv;
	const char **unset;        /* names unset and not exported again */
	int nunset;
	const char **sourced;      /* as written, each once */
	int nsourced;
	const char **governors;    /* the scaling governors written */
	int ngovernors;
	const char **sysctl;       /* the last value written to each */
	int nsysctl;
	struct npl_loc loc;        /* of the python line */
};

struct npl_pagesh_result {
	struct npl_pagesh_launch *v;
	int n;
};

/* Run the blocks (one shell, in order) as the node whose addresses `hostname -I` prints (ip,
 * NULL: none) would, with the variables of env ("NAME=VALUE", NULL-terminated; may be NULL)
 * set first, unexported. Every launch goes to out. 0, or -1 with located errors in d. Memory
 * in a. */
int npl_pagesh_run(const struct npl_page_block *blocks, int nblocks, const char *ip,
		   const struct npl_pagesh_site *site, const char *const *env, struct npl_pagesh_result *out,
		   struct npl_arena *a, struct npl_diag *d);

#endif
