/*
 * launch_affinity.c: the node side of apply's binding: the affinity module's sets for this
 * node's instance, turned into the CPU mask and the memory policy the launch applies. See
 * launch.h and affinity.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npulaunch/affinity.h"
#include "npulaunch/buf.h"
#include "npulaunch/launch.h"
#include "npulaunch/plan.h"
#include "npulaunch/preflight.h"

#define MAX_IDS 256

/* 1 when the running kernel has every NUMA node set in mems (its sysfs, not the root's). */
static int kernel_has(const unsigned char *mems, size_t n)
{
	char path[64];

	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%zu", i);
		if (mems[i] && access(path, F_OK) != 0)
			return 0;
	}
	return 1;
}

/* npu-smi info, then (when it answered) info -t topo, into s unless s holds them already. */
static void ask_smi(struct npl_smi_answers *s, struct npl_arena *a, const cJSON *plan, const char *root, double timeout)
{
	if (s->asked)
		return;
	s->asked = 1;
	s->info = npl_pf_smi_text(plan, root, timeout, 0, a);
	s->topo = s->info ? npl_pf_smi_text(plan, root, timeout, 1, a) : NULL;
}

int npl_launch_affinity_devices(struct npl_affinity *af, const cJSON *policy, const cJSON *plan, const char *root,
				double timeout, const int *devices, int ndevices, struct npl_smi_answers *ans,
				struct npl_arena *a, struct npl_diag *d)
{
	struct npl_smi_answers here = {0};
	struct npl_aff_opts o;
	struct npl_pf_smi s;
	const char *why = NULL;
	int *ids, n = 0;

	memset(&o, 0, sizeof(o));
	o.policy = policy;
	o.root = root;
	if (!ans)
		ans = &here;
	ask_smi(ans, a, plan, root, timeout);
	o.smi = ans->info;
	o.topo = ans->topo;
	if (o.smi && npl_pf_parse_smi(o.smi, &s, a, &why) == 0) {
		n = s.ndies;
		free(s.dies);
		free(s.procs);
	}
	if (!n)
		return npl_error(d, NULL, "npu-smi info listed no die (not found on PATH, failed, or printed a layout npulaunch does not know): nothing to bind");
	if (devices) {
		o.devices = devices;
		o.ndevices = ndevices;
		return npl_affinity_compute(af, &o, d);
	}
	ids = npl_arena_calloc(a, (size_t)n + 1, sizeof(int));
	for (int i = 0; i < n; i++)
		ids[i] = i;
	o.devices = ids;
	o.ndevices = n;
	return npl_affinity_compute(af, &o, d);
}

int npl_launch_affinity_node(struct npl_affinity *af, const cJSON *policy, const cJSON *plan, const char *root,
			     double timeout, struct npl_arena *a, struct npl_diag *d)
{
	return npl_launch_affinity_devices(af, policy, plan, root, timeout, NULL, 0, NULL, a, d);
}

/* Instance k's list into l->rank_nodes[k]; NULL, or why there is none. */
static const char *rank_list(struct npl_launch_node *l, const struct npl_affinity *af, int k)
{
	int ids[MAX_IDS], n = npl_plan_rank_devices(l->role, l->inst[k].node, ids, MAX_IDS);
	struct npl_buf b = NPL_BUF_INIT;

	if (n <= 0)
		return "a --base-gpu-id, --gpu-id-step or ASCEND_RT_VISIBLE_DEVICES npulaunch cannot follow: the ranks "
		       "share the server's CPUs";
	for (int g = 0; g < n; g++) {
		const struct npl_aff_die *die = NULL;
		int c;

		for (int i = 0; i < af->ndies; i++)
			if (af->dies[i].id == ids[g])
				die = &af->dies[i];
		if (!die || die->node < 0 || !die->local) {
			npl_buf_release(&b);
			return npl_arena_printf(l->arena, "device %d's NUMA node is not known: the ranks share the server's CPUs", ids[g]);
		}
		for (c = 0; c < NPL_AFF_MAX_CPUS && !(die->local[c] && af->allowed[c] && !af->cpus[c]); c++)
			;
		if (c < NPL_AFF_MAX_CPUS) {
			npl_buf_release(&b);
			return npl_arena_printf(l->arena, "device %d shares NUMA node %d with a die of another instance: the "
					       "ranks share the server's CPUs", ids[g], die->node);
		}
		npl_buf_printf(&b, "%s%d", g ? " " : "", die->node);
	}
	l->rank_nodes[k] = npl_arena_strdup(l->arena, b.data);
	npl_buf_release(&b);
	return NULL;
}

/* Each instance's --numa-node list: for SGLang's gpu ids (npl_plan_rank_devices), the NUMA
 * node of the die each is. Only under numa-local, and only where no rank could leave the
 * server's CPUs: each rank's node's allowed CPUs must all be the server's (a die sharing its
 * node with another instance's die would widen it). l->rank_note says why not. */
static void rank_lists(struct npl_launch_node *l, const struct npl_affinity *af)
{
	if (strcmp(af->policy, "numa-local")) {
		l->rank_note = "the policy is not numa-local: the ranks share the server's CPUs";
		return;
	}
	l->rank_nodes = npl_xcalloc((size_t)l->ninst + 1, sizeof(*l->rank_nodes));
	for (int k = 0; k < l->ninst; k++) {
		const char *why = rank_list(l, af, k);

		if (why && k == 0)
			l->rank_note = why;   /* what the dry run says is the first instance's */
	}
}

void npl_launch_affinity(struct npl_launch_node *l, const char *root, double timeout)
{
	struct npl_affinity *af;
	struct npl_aff_opts o;
	struct npl_diag d = NPL_DIAG_INIT;
	int ids[MAX_IDS], i;

	memset(&o, 0, sizeof(o));
	if (strcmp(npl_json_str(l->role, "program") ? npl_json_str(l->role, "program") : "", "server"))
		return;
	if ((l->affinity_note = npl_affinity_owner(l->role, l->node, &o.policy)))
		return;
	o.root = root;
	o.devices = ids;
	o.ndevices = npl_plan_node_devices(l->role, l->node, ids, MAX_IDS);
	ask_smi(&l->smi, l->arena, l->plan, root, timeout);
	o.smi = l->smi.info;
	o.topo = l->smi.topo;
	af = npl_xcalloc(1, sizeof(*af));
	if (npl_affinity_compute(af, &o, &d)) {
		/* said where it was found: an error when the policy cannot be met (preflight fails on
		   it too), a warning when a fact is missing (nothing is bound, as before) */
		for (i = 0; i < d.n; i++)
			npl_diag_add(l->diag, af->unmet ? NPL_ERROR : NPL_WARNING, &d.v[i].loc, "%s%s", d.v[i].msg,
				     af->unmet ? "" : ": the server is not bound");
		l->affinity_note = af->unmet ? "the policy cannot be met" : "the topology could not be read";
	} else if (strcmp(af->policy, "none")) {
		l->affinity = npl_affinity_json(af);
		l->cpus = npl_arena_strdup(l->arena, npl_json_str(l->affinity, "cpus"));
		npl_launch_cpus(l, root);
		/* a memory policy only where the dies' nodes are known (an A3 whose sysfs gives
		   none leaves memory where the kernel puts it, silently); under a root prefix only
		   when this kernel has those nodes, as the CPUs are bound only where they exist */
		if (memchr(af->mems, 1, sizeof(af->mems)) && (!root || !*root || kernel_has(af->mems, sizeof(af->mems)))) {
			l->maxnode = sizeof(af->mems);
			l->mems = npl_xcalloc(l->maxnode / (8 * sizeof(unsigned long)), sizeof(unsigned long));
			for (i = 0; i < (int)sizeof(af->mems); i++)
				if (af->mems[i])
					l->mems[i / (8 * sizeof(unsigned long))] |= 1UL << (i % (8 * sizeof(unsigned long)));
		}
		rank_lists(l, af);
	}
	npl_affinity_release(af);
	npl_diag_release(&d);
	free(af);
}
