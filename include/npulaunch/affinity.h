/*
 * affinity.h: layer node. Which CPUs, memory node and interrupts each die of this node's
 * instance gets, from the node's own topology and the plan's policy (tuning.affinity of the
 * hardware profile, a model or a recipe), and why.
 *
 * The facts are read, never guessed, everything under a root prefix (tests use simulated
 * trees): the CPUs this process may use (its affinity mask: sched_getaffinity() on the host,
 * ROOT/proc/self/status's Cpus_allowed_list under a root), each die's PCI device (npu-smi
 * info's Bus-Id, the dies in its order being the logical device ids), its NUMA node and local
 * CPUs (ROOT/sys/bus/pci/devices/BDF/numa_node and local_cpulist; the node's cpulist under
 * ROOT/sys/devices/system/node when local_cpulist is missing; without a numa_node, the CPU
 * Affinity column of npu-smi info -t topo and the node whose cpulist holds it: what lscpu
 * reads too), its interrupts (the device's msi_irqs folder and ROOT/proc/interrupts), and the
 * CPUs that share a core (cpuN/topology/thread_siblings_list).
 *
 * The policies:
 *   numa-local   each NUMA node's allowed CPUs are shared evenly, whole cores first, among the
 *                dies on that node (in logical id order); a die whose node has no allowed CPU,
 *                or fewer than the minimum per die, is an error. Without a node for every die,
 *                even-slice, saying why.
 *   even-slice   the allowed CPUs, whole cores first, cut into one equal slice per die the node
 *                has, die k taking slice k (so two instances on one node never share); when
 *                sysfs gives the dies different NUMA nodes, numa-local instead, saying why.
 *   none         nothing is bound.
 * A die's interrupts (those of its MSI interrupts that ROOT/proc/interrupts names
 * sq_send_trigger_irq and cq_update_irq: the driver's submission and completion queues) go to
 * the first and the second CPU of its set (vllm-ascend's split: two CPUs for the die's
 * interrupts, the rest for the process and its runtime threads); its memory to its node.
 */
#ifndef NPL_AFFINITY_H
#define NPL_AFFINITY_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "npulaunch/arena.h"
#include "npulaunch/diag.h"

/* The most CPUs npulaunch binds (the size of its CPU sets). */
#define NPL_AFF_MAX_CPUS 8192

/* An interrupt of a die and the CPU it goes to. */
struct npl_aff_irq {
	int irq;
	const char *name;       /* "sq_send_trigger_irq", "cq_update_irq" */
	int cpu;                /* -1 until the policy gives the die its CPUs */
};

struct npl_aff_die {
	int id;                 /* the logical device id (ASCEND_RT_VISIBLE_DEVICES) */
	int npu;                /* the NPU (card) npu-smi lists it under */
	const char *pci;        /* "0000:9d:00.0" (lower case), or NULL when npu-smi gave none */
	int node;               /* its NUMA node, -1 when not known */
	const char *node_from;  /* where node came from, for the reader */
	unsigned char *local;   /* its node's CPUs (NPL_AFF_MAX_CPUS flags), or NULL */
	int nmsi;               /* its MSI interrupts (msi_irqs) */
	struct npl_aff_irq *irqs; /* those it binds, nirqs of them */
	int nirqs;
	unsigned char *cpus;    /* the CPUs it gets (NPL_AFF_MAX_CPUS flags) */
	int ncpus;
	int first[2];           /* its first two CPUs (-1: none) */
	int used;               /* one of the instance's dies (the others only share the node) */
};

struct npl_affinity {
	struct npl_arena arena;
	const char *root;       /* "" for / */
	const char *want;       /* the plan's policy */
	const char *policy;     /* the policy applied (want, or the one it fell back to) */
	const char *why;        /* why that policy, in words */
	int unmet;              /* npl_affinity_compute() failed because the policy cannot be met
				   (too few CPUs, a die's node with none), not for want of a fact */
	int min_per_die;
	int irqs;               /* bind the dies' interrupts */
	unsigned char allowed[NPL_AFF_MAX_CPUS];
	int nallowed;
	const char *allowed_from;
	int *order;             /* the allowed CPUs, a core's threads together; nallowed of them */
	struct npl_aff_die *dies; /* every die npu-smi lists, in logical id order */
	int ndies;
	unsigned char *irqkind; /* per interrupt number: 1 a queue's submission, 2 its completion */
	int nirqkind;
	unsigned char cpus[NPL_AFF_MAX_CPUS]; /* the union over the instance's dies: the server's */
	int ncpus;
	unsigned char mems[1024];  /* the NUMA nodes of the instance's dies */
};

struct npl_aff_opts {
	const char *root;       /* NULL or "" for / */
	const cJSON *policy;    /* the plan's tuning.affinity, or NULL (policy none) */
	const int *devices;     /* the logical devices this node's instance uses */
	int ndevices;
	const char *smi;        /* npu-smi info's output, or NULL when there is none */
	const char *topo;       /* npu-smi info -t topo's, or NULL */
};

/* Who binds node index of a server role: NULL when npulaunch does, with *policy its
 * tuning.affinity; otherwise why not (its policy is none, or the node's launch environment
 * sets SGLANG_SET_CPU_AFFINITY to a true value: SGLang then binds each rank itself, by device
 * number, and a binding around it would be overwritten, so the recipe's choice wins). */
const char *npl_affinity_owner(const cJSON *role, int index, const cJSON **policy);
/* Read the facts and compute each die's set. 0; -1 with a located error when a fact cannot be
 * read or the policy cannot be met (fewer allowed CPUs than the minimum per die, a die's node
 * with none). A policy none reads nothing and binds nothing. */
int npl_affinity_compute(struct npl_affinity *a, const struct npl_aff_opts *o, struct npl_diag *d);
/* {policy, wanted, why, allowed, allowed_from, min_cpus_per_die, cpus, memory_nodes,
 *  dies: [{device, pci, numa_node, node_from, cpus, msi_irqs, irqs: [{irq, name, cpu}]}]} (the
 *  instance's dies only). */
cJSON *npl_affinity_json(const struct npl_affinity *a);
/* The same for people, one line a die, after a heading line. */
void npl_affinity_print(const struct npl_affinity *a, FILE *fp);
/* A CPU (or node) set as a list: "0-5,8" ("" when empty), in a. */
char *npl_aff_list(struct npl_arena *a, const unsigned char *set, int n);
void npl_affinity_release(struct npl_affinity *a);
/* After the launch: the server processes of an instance (every ROOT/proc/PID whose command line
 * holds "--port" port and a word with "sglang") and every process they started (ROOT/proc/PID/
 * stat's parent: SGLang's ranks, whose process titles name no port), each of their threads'
 * Cpus_allowed_list (ROOT/proc/PID/task/TID/status) against cpus (a subset of it passes: SGLang
 * may narrow a rank further) and each process's memory policy (ROOT/proc/PID/numa_maps, its
 * first mapping's) against mems: the server's must name those nodes, a rank's some of them
 * (--numa-node binds it to its die's); none is a mismatch when mems is not "". A finding per
 * thread or policy in out: {pid, tid, what, found, ok}. The count of mismatches; -1 when no
 * such process runs. */
int npl_affinity_readback(const char *root, const char *port, const char *cpus, const char *mems, cJSON *out);

#endif
