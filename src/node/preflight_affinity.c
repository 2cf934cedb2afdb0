/*
 * preflight_affinity.c: the preflight check "affinity": whether the plan's affinity policy can
 * be met on this node, from its topology (affinity.c): the CPUs this process may use against
 * what the node's dies need, each die's node with CPUs in the cpuset. See preflight_internal.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/affinity.h"
#include "npulaunch/arena.h"
#include "npulaunch/buf.h"
#include "npulaunch/plan.h"
#include "npulaunch/preflight.h"
#include "preflight_internal.h"

/* The sets, one die a clause, for the finding. */
static const char *sets(const struct npl_affinity *af, struct npl_arena *a)
{
	struct npl_buf b = NPL_BUF_INIT;
	const char *s;

	npl_buf_printf(&b, "%s (%s): ", af->policy, af->why);
	for (int i = 0; i < af->ndies; i++) {
		const struct npl_aff_die *die = &af->dies[i];

		if (!die->used)
			continue;
		npl_buf_printf(&b, "device %d CPUs %s", die->id, npl_aff_list(a, die->cpus, NPL_AFF_MAX_CPUS));
		if (die->node >= 0)
			npl_buf_printf(&b, " (node %d)", die->node);
		npl_buf_puts(&b, "; ");
	}
	npl_buf_printf(&b, "the server on CPUs %s of %d this process may use", npl_aff_list(a, af->cpus, NPL_AFF_MAX_CPUS),
		       af->nallowed);
	s = npl_arena_strdup(a, npl_buf_str(&b));
	npl_buf_release(&b);
	return s;
}

struct npl_pf_check npl_pf_check_affinity(const struct npl_preflight_opts *o, const struct npl_pf_smi *smi,
					  const int *ids, int nids, struct npl_arena *a)
{
	struct npl_pf_check c = {"affinity", NPL_PF_SKIP, NULL, NULL};
	struct npl_aff_opts ao = {o->root, NULL, ids, nids, smi ? smi->text : NULL, NULL};
	struct npl_affinity *af;
	struct npl_diag d = NPL_DIAG_INIT;
	const char *prog = npl_json_str(o->role, "program"), *why;

	if (!prog || strcmp(prog, "server")) {
		c.found = "this role uses no NPU";
		return c;
	}
	if ((why = npl_affinity_owner(o->role, o->node >= 0 ? o->node : 0, &ao.policy))) {
		c.found = npl_arena_printf(a, "npulaunch binds nothing: %s", why);
		return c;
	}
	ao.topo = o->topo_out ? o->topo_out : npl_pf_smi_text(o->plan, o->root, o->timeout, 1, a);
	af = npl_arena_calloc(a, 1, sizeof(*af));
	if (npl_affinity_compute(af, &ao, &d) == 0) {
		c.status = NPL_PF_OK;
		c.found = sets(af, a);
	} else {
		char *msg = d.n ? npl_diag_format(&d, &d.v[0], 0) : NULL;

		c.status = af->unmet ? NPL_PF_FAIL : NPL_PF_WARN;
		c.found = npl_arena_printf(a, "%s%s", msg ? msg : "the topology could not be read",
					   af->unmet ? "" : ": the server will not be bound");
		c.fix = af->unmet ? "give this process more CPUs (the cgroup's cpuset: Slurm's --cpus-per-task, the pod's CPU "
				    "limit, docker --cpuset-cpus), or lower tuning.affinity.min_cpus_per_die, or turn it off "
				    "(tuning: {affinity: {policy: none}} in the recipe)"
				  : "check that sysfs and npu-smi are readable here (in a container, mount /sys)";
		free(msg);
	}
	npl_affinity_release(af);
	npl_diag_release(&d);
	return c;
}
