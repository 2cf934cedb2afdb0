/*
 * affinity.c: each die's CPUs, memory node and interrupts, from the node's topology and the
 * plan's policy. See affinity.h.
 */
#define _GNU_SOURCE /* sched_getaffinity and the CPU_*_S macros */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/affinity.h"
#include "npulaunch/buf.h"
#include "npulaunch/fsio.h"
#include "npulaunch/plan.h"
#include "npulaunch/preflight.h"
#include "npulaunch/text.h"
#include "npulaunch/tune.h"

/* Most a sysfs or procfs file of the topology holds. */
#define FACT_MAX ((size_t)1 << 20)

char *npl_aff_list(struct npl_arena *a, const unsigned char *set, int n)
{
	struct npl_buf b = NPL_BUF_INIT;
	char *s;
	int i = 0;

	while (i < n) {
		int j;

		if (!set[i]) {
			i++;
			continue;
		}
		for (j = i; j + 1 < n && set[j + 1]; j++)
			;
		npl_buf_printf(&b, "%s%d", b.len ? "," : "", i);
		if (j > i)
			npl_buf_printf(&b, "-%d", j);
		i = j + 1;
	}
	s = npl_arena_strdup(a, npl_buf_str(&b));
	npl_buf_release(&b);
	return s;
}

static int count(const unsigned char *set, int n)
{
	int i, k = 0;

	for (i = 0; i < n; i++)
		k += set[i] != 0;
	return k;
}

/* ROOT/rel's text, or NULL when it is not there (or not a regular file). */
static char *fact(struct npl_affinity *a, const char *rel)
{
	struct npl_diag quiet = NPL_DIAG_INIT;
	char *path = npl_arena_printf(&a->arena, "%s%s", a->root, rel);
	char *text = npl_read_file_max(&a->arena, path, FACT_MAX, NULL, &quiet);

	npl_diag_release(&quiet);
	return text;
}

static const char *where(struct npl_affinity *a, const char *rel)
{
	return npl_arena_printf(&a->arena, "%s%s", a->root, rel);
}

/* ---- the facts ------------------------------------------------------------------------------ */

/* The CPUs this process may use: its affinity mask on the host; the status file under a root. */
static int read_allowed(struct npl_affinity *a, struct npl_diag *d)
{
	if (!*a->root) {
		size_t sz = CPU_ALLOC_SIZE(NPL_AFF_MAX_CPUS);
		cpu_set_t *m = CPU_ALLOC(NPL_AFF_MAX_CPUS);
		int i;

		if (!m)
			npl_oom();
		if (sched_getaffinity(0, sz, m) != 0) {
			CPU_FREE(m);
			return npl_error(d, NULL, "cannot read the CPUs this process may use (sched_getaffinity): %s",
					 strerror(errno));
		}
		for (i = 0; i < NPL_AFF_MAX_CPUS; i++)
			a->allowed[i] = CPU_ISSET_S(i, sz, m) != 0;
		CPU_FREE(m);
		a->allowed_from = "this process's affinity mask (sched_getaffinity)";
	} else {
		const char *st = fact(a, "/proc/self/status"), *l = st ? strstr(st, "\nCpus_allowed_list:") : NULL;
		struct npl_loc at = {where(a, "/proc/self/status"), 0, 0};

		if (st && !strncmp(st, "Cpus_allowed_list:", strlen("Cpus_allowed_list:")))
			l = st - 1;
		if (!l)
			return npl_error(d, &at, "no Cpus_allowed_list: the CPUs this process may use are not known");
		l += strlen("\nCpus_allowed_list:");
		l += strspn(l, " \t");
		if (npl_cpu_list_parse(l, a->allowed, NPL_AFF_MAX_CPUS))
			return npl_error(d, &at, "Cpus_allowed_list '%.*s' is not a CPU list", (int)strcspn(l, "\n"), l);
		a->allowed_from = npl_arena_printf(&a->arena, "Cpus_allowed_list of %s", at.file);
	}
	a->nallowed = count(a->allowed, NPL_AFF_MAX_CPUS);
	return a->nallowed ? 0 : npl_error(d, NULL, "this process may use no CPU (%s)", a->allowed_from);
}

/* The allowed CPUs in the order they are handed out: ascending, a core's allowed threads
 * together (cpuN/topology/thread_siblings_list), so that a slice takes whole cores. */
static void read_order(struct npl_affinity *a)
{
	unsigned char *placed = npl_arena_calloc(&a->arena, NPL_AFF_MAX_CPUS, 1);
	unsigned char *sib = npl_arena_alloc(&a->arena, NPL_AFF_MAX_CPUS);
	int i, j, n = 0;

	a->order = npl_arena_calloc(&a->arena, (size_t)a->nallowed, sizeof(int));
	for (i = 0; i < NPL_AFF_MAX_CPUS; i++) {
		char *rel, *t;

		if (!a->allowed[i] || placed[i])
			continue;
		a->order[n++] = i;
		placed[i] = 1;
		rel = npl_arena_printf(&a->arena, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", i);
		if (!(t = fact(a, rel)) || npl_cpu_list_parse(t, sib, NPL_AFF_MAX_CPUS))
			continue;
		for (j = i + 1; j < NPL_AFF_MAX_CPUS; j++)
			if (sib[j] && a->allowed[j] && !placed[j]) {
				a->order[n++] = j;
				placed[j] = 1;
			}
	}
}

static int by_irq(const void *x, const void *y)
{
	int a = ((const struct npl_aff_irq *)x)->irq, b = ((const struct npl_aff_irq *)y)->irq;

	return (a > b) - (a < b);
}

/* The kind of each interrupt ROOT/proc/interrupts names: 1 a die's submission queue
 * (sq_send_trigger_irq), 2 its completion queue (cq_update_irq), 0 anything else; in a->irqkind. */
static void read_interrupts(struct npl_affinity *a)
{
	const char *t = fact(a, "/proc/interrupts");

	a->nirqkind = 0;
	while (t && *t) {
		const char *eol = strchr(t, '\n'), *p = t;
		size_t len = eol ? (size_t)(eol - t) : strlen(t);
		char *line = npl_arena_strndup(&a->arena, t, len);
		int irq, kind = strstr(line, "sq_send_trigger_irq") ? 1 : strstr(line, "cq_update_irq") ? 2 : 0;

		t += len + (eol != NULL);
		p = line + strspn(line, " ");
		irq = npl_parse_uint(npl_arena_strndup(&a->arena, p, strcspn(p, ":")));
		if (!kind || irq < 0 || irq >= (1 << 20) || p[strcspn(p, ":")] != ':')
			continue;
		if (irq >= a->nirqkind) {
			int n = irq + 1024;

			a->irqkind = npl_arena_grow(&a->arena, a->irqkind, (size_t)a->nirqkind, (size_t)n, 1);
			a->nirqkind = n;
		}
		a->irqkind[irq] = (unsigned char)kind;
	}
}

/* The die's interrupts: the names of its PCI device's msi_irqs folder that /proc/interrupts
 * names as its queues', ascending. */
static void read_irqs(struct npl_affinity *a, struct npl_aff_die *die)
{
	char *path = npl_arena_printf(&a->arena, "%s/sys/bus/pci/devices/%s/msi_irqs", a->root, die->pci);
	DIR *dp = opendir(path);
	struct dirent *e;
	int cap = 0;

	while (dp && (e = readdir(dp))) {
		int n = npl_parse_uint(e->d_name);

		if (n < 0)
			continue;
		die->nmsi++;
		if (n >= a->nirqkind || !a->irqkind[n])
			continue;
		if (die->nirqs == cap) {
			die->irqs = npl_arena_grow(&a->arena, die->irqs, (size_t)cap, (size_t)(cap ? cap * 2 : 8), sizeof(*die->irqs));
			cap = cap ? cap * 2 : 8;
		}
		die->irqs[die->nirqs].irq = n;
		die->irqs[die->nirqs].name = a->irqkind[n] == 1 ? "sq_send_trigger_irq" : "cq_update_irq";
		die->irqs[die->nirqs++].cpu = -1;
	}
	if (dp)
		closedir(dp);
	if (die->nirqs)
		qsort(die->irqs, (size_t)die->nirqs, sizeof(*die->irqs), by_irq);
}

/* The CPU Affinity column of npu-smi info -t topo for NPU npu ("NPU0 X HCCS ... 144-167"),
 * or NULL. */
static const char *topo_cpus(struct npl_affinity *a, const char *topo, int npu)
{
	const char *t = topo;

	while (t && *t) {
		size_t len = strcspn(t, "\n"), k;
		const char *line = t;
		char *last;

		t += len + (t[len] == '\n');
		while (len && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r'))
			len--;
		if (strncmp(line, "NPU", 3) || npl_parse_uint(npl_arena_strndup(&a->arena, line + 3, strcspn(line + 3, " \t"))) != npu)
			continue;
		for (k = len; k && line[k - 1] != ' ' && line[k - 1] != '\t'; k--)
			;
		last = npl_arena_strndup(&a->arena, line + k, len - k);
		return last;
	}
	return NULL;
}

/* A die without a NUMA node in sysfs: its CPUs from npu-smi info -t topo, its node the one
 * whose cpulist holds them all. */
static void node_from_topo(struct npl_affinity *a, struct npl_aff_die *die, const char *topo, const char *why)
{
	const char *cpus = topo_cpus(a, topo, die->npu);
	unsigned char *set = npl_arena_alloc(&a->arena, NPL_AFF_MAX_CPUS), *node = npl_arena_alloc(&a->arena, NPL_AFF_MAX_CPUS);
	int n, c;

	die->node_from = why;
	if (!cpus || npl_cpu_list_parse(cpus, set, NPL_AFF_MAX_CPUS))
		return;
	for (n = 0; n < (int)sizeof(a->mems); n++) {
		char *t = fact(a, npl_arena_printf(&a->arena, "/sys/devices/system/node/node%d/cpulist", n));

		if (!t || npl_cpu_list_parse(t, node, NPL_AFF_MAX_CPUS))
			continue;
		for (c = 0; c < NPL_AFF_MAX_CPUS && (!set[c] || node[c]); c++)
			;
		if (c == NPL_AFF_MAX_CPUS) {
			die->node = n;
			die->local = set;
			die->node_from = npl_arena_printf(&a->arena, "npu-smi info -t topo (CPU Affinity %s), as %s", cpus, why);
			return;
		}
	}
}

/* The die's NUMA node and its CPUs: numa_node and local_cpulist of its PCI device, else the
 * node's cpulist; without numa_node, npu-smi's topology table. */
static int read_node(struct npl_affinity *a, struct npl_aff_die *die, const char *topo, struct npl_diag *d)
{
	char *rel = npl_arena_printf(&a->arena, "/sys/bus/pci/devices/%s/numa_node", die->pci);
	char *t = fact(a, rel);
	struct npl_loc at = {where(a, rel), 0, 0};
	int node;

	die->node = -1;
	if (!t) {
		node_from_topo(a, die, topo, npl_arena_printf(&a->arena, "%s is not there", at.file));
		return 0;
	}
	t[strcspn(t, "\n")] = 0;
	if (!strcmp(t, "-1")) {
		node_from_topo(a, die, topo, npl_arena_printf(&a->arena, "%s says -1 (no NUMA node)", at.file));
		return 0;
	}
	if ((node = npl_parse_uint(t)) < 0 || node >= (int)sizeof(a->mems))
		return npl_error(d, &at, "numa_node '%s' is not a NUMA node number", t);
	die->node = node;
	die->node_from = "sysfs numa_node";
	die->local = npl_arena_alloc(&a->arena, NPL_AFF_MAX_CPUS);
	rel = npl_arena_printf(&a->arena, "/sys/bus/pci/devices/%s/local_cpulist", die->pci);
	if (!(t = fact(a, rel))) {
		rel = npl_arena_printf(&a->arena, "/sys/devices/system/node/node%d/cpulist", node);
		t = fact(a, rel);
	}
	at.file = where(a, rel);
	if (!t)
		return npl_error(d, &at, "the CPUs of NUMA node %d (device %d's) are not known: no local_cpulist, no cpulist",
				 node, die->id);
	if (npl_cpu_list_parse(t, die->local, NPL_AFF_MAX_CPUS) && *t != '\n')
		return npl_error(d, &at, "'%.*s' is not a CPU list", (int)strcspn(t, "\n"), t);
	return 0;
}

/* Every die npu-smi lists, in its order (the logical ids), with its facts; without npu-smi's
 * table, the instance's devices alone, with none. */
static int read_dies(struct npl_affinity *a, const struct npl_aff_opts *o, struct npl_diag *d)
{
	struct npl_pf_smi smi;
	const char *why = NULL;
	int i, top = 0;

	memset(&smi, 0, sizeof(smi));
	if (o->smi && npl_pf_parse_smi(o->smi, &smi, &a->arena, &why))
		return npl_error(d, NULL, "npu-smi info printed a layout npulaunch does not know (%s): the dies' PCI devices are not known", why);
	for (i = 0; i < o->ndevices; i++)
		top = o->devices[i] + 1 > top ? o->devices[i] + 1 : top;
	a->ndies = smi.ndies > top ? smi.ndies : top;
	a->dies = npl_arena_calloc(&a->arena, (size_t)a->ndies, sizeof(*a->dies));
	for (i = 0; i < a->ndies; i++) {
		struct npl_aff_die *die = &a->dies[i];

		die->id = i;
		die->node = -1;
		die->node_from = "npu-smi info did not list it";
		die->cpus = npl_arena_calloc(&a->arena, NPL_AFF_MAX_CPUS, 1);
		die->first[0] = die->first[1] = -1;
		/* a PCI address (hex digits, ':' and '.'): nothing else names a folder under sysfs */
		if (i < smi.ndies && smi.dies[i].bus && *smi.dies[i].bus &&
		    strspn(smi.dies[i].bus, "0123456789abcdefABCDEF:.") == strlen(smi.dies[i].bus) &&
		    strlen(smi.dies[i].bus) < 32) {
			char *p = npl_arena_strdup(&a->arena, smi.dies[i].bus);

			for (char *q = p; *q; q++)
				*q = (char)(*q >= 'A' && *q <= 'F' ? *q - 'A' + 'a' : *q);
			die->pci = p;
			die->npu = smi.dies[i].npu;
			if (read_node(a, die, o->topo, d)) {
				free(smi.dies);
				free(smi.procs);
				return -1;
			}
			read_irqs(a, die);
		}
	}
	for (i = 0; i < o->ndevices; i++)
		if (o->devices[i] >= 0)
			a->dies[o->devices[i]].used = 1;
	free(smi.dies);
	free(smi.procs);
	return 0;
}

/* ---- the policies ---------------------------------------------------------------------------- */

/* Give die the n CPUs of pool from position at; its submission queues' interrupts the first,
 * its completion queues' the second. */
static void give(struct npl_aff_die *die, const int *pool, int at, int n)
{
	int i;

	for (i = 0; i < n; i++)
		die->cpus[pool[at + i]] = 1;
	die->ncpus = n;
	die->first[0] = n > 0 ? pool[at] : -1;
	die->first[1] = n > 1 ? pool[at + 1] : die->first[0];
	for (i = 0; i < die->nirqs; i++)
		die->irqs[i].cpu = die->first[strcmp(die->irqs[i].name, "sq_send_trigger_irq") != 0];
}

static int even_slice(struct npl_affinity *a, struct npl_diag *d)
{
	int per = a->nallowed / a->ndies, i;

	if (per < a->min_per_die)
		return a->unmet = 1, npl_error(d, NULL, "affinity even-slice: %d CPUs may be used (%s: %s) for %d dies: %d each, fewer than the %d per die the policy needs",
				 a->nallowed, a->allowed_from, npl_aff_list(&a->arena, a->allowed, NPL_AFF_MAX_CPUS), a->ndies,
				 per, a->min_per_die);
	for (i = 0; i < a->ndies; i++)
		give(&a->dies[i], a->order, i * per, per);
	return 0;
}

/* 1 when a die of the instance is on NUMA node */
static int used_on(const struct npl_affinity *a, int node)
{
	for (int i = 0; i < a->ndies; i++)
		if (a->dies[i].used && a->dies[i].node == node)
			return 1;
	return 0;
}

static int numa_local(struct npl_affinity *a, struct npl_diag *d)
{
	int *pool = npl_arena_calloc(&a->arena, (size_t)a->nallowed, sizeof(int));
	int i, j;

	for (i = 0; i < a->ndies; i++) {
		struct npl_aff_die *die = &a->dies[i];
		int m = 0, k = 0, n = 0, per;

		if (die->ncpus)
			continue;
		/* the dies on its node: it is the first of them not yet given CPUs */
		for (j = 0; j < a->ndies; j++)
			m += a->dies[j].node == die->node;
		for (j = 0; j < a->nallowed; j++)
			if (die->local[a->order[j]])
				pool[n++] = a->order[j];
		if (!n && !used_on(a, die->node))
			continue;   /* no die of this instance there: nothing to give */
		if (!n)
			return a->unmet = 1, npl_error(d, NULL, "affinity numa-local: device %d is on NUMA node %d, whose CPUs (%s) this process may not use (%s: %s)",
					 die->id, die->node, npl_aff_list(&a->arena, die->local, NPL_AFF_MAX_CPUS),
					 a->allowed_from, npl_aff_list(&a->arena, a->allowed, NPL_AFF_MAX_CPUS));
		per = n / m;
		if (per < a->min_per_die && used_on(a, die->node))
			return a->unmet = 1, npl_error(d, NULL, "affinity numa-local: NUMA node %d has %d CPUs this process may use for its %d dies: %d each, fewer than the %d per die the policy needs",
					 die->node, n, m, per, a->min_per_die);
		for (j = i; j < a->ndies; j++)
			if (a->dies[j].node == die->node)
				give(&a->dies[j], pool, per * k++, per);
	}
	return 0;
}

/* Which policy applies, and why. */
static void choose(struct npl_affinity *a)
{
	int i, known = 0, differ = 0, first = -1;

	for (i = 0; i < a->ndies; i++) {
		if (a->dies[i].node < 0)
			continue;
		known++;
		if (first < 0)
			first = a->dies[i].node;
		else if (a->dies[i].node != first)
			differ = 1;
	}
	a->policy = a->want;
	a->why = "the plan's policy";
	if (!strcmp(a->want, "even-slice") && differ && known == a->ndies) {
		a->policy = "numa-local";
		a->why = "the plan's policy is even-slice, but sysfs puts the dies on different NUMA nodes";
	} else if (!strcmp(a->want, "numa-local") && known < a->ndies) {
		a->policy = "even-slice";
		a->why = known ? "the plan's policy is numa-local, but not every die has a NUMA node (sysfs)"
			       : "the plan's policy is numa-local, but no die has a NUMA node (sysfs)";
	}
}

int npl_affinity_compute(struct npl_affinity *a, const struct npl_aff_opts *o, struct npl_diag *d)
{
	const cJSON *p = o->policy;
	int i, rc;

	memset(a, 0, sizeof(*a));
	npl_arena_init(&a->arena);
	a->root = o->root ? o->root : "";
	a->want = p ? npl_json_str(cJSON_GetObjectItemCaseSensitive(p, "policy"), "value") : NULL;
	a->want = a->want ? a->want : "none";
	a->min_per_die = p ? npl_json_int(cJSON_GetObjectItemCaseSensitive(p, "min_cpus_per_die"), "value", 1) : 1;
	a->irqs = p && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "irqs"), "value"));
	a->policy = a->want;
	a->why = "the plan's policy";
	if (!strcmp(a->want, "none") || o->ndevices == 0) {
		a->policy = "none";
		a->why = o->ndevices ? "the plan's policy" : "this node's instance uses no die";
		return 0;
	}
	if (strcmp(a->want, "numa-local") && strcmp(a->want, "even-slice"))
		return npl_error(d, NULL, "affinity policy '%s': numa-local, even-slice or none", a->want);
	if (read_allowed(a, d))
		return -1;
	read_interrupts(a);
	if (read_dies(a, o, d))
		return -1;
	read_order(a);
	choose(a);
	rc = !strcmp(a->policy, "numa-local") ? numa_local(a, d) : even_slice(a, d);
	if (rc)
		return -1;
	for (i = 0; i < a->ndies; i++) {
		if (!a->dies[i].used)
			continue;
		for (int c = 0; c < NPL_AFF_MAX_CPUS; c++)
			a->cpus[c] |= a->dies[i].cpus[c];
		if (a->dies[i].node >= 0)
			a->mems[a->dies[i].node] = 1;
	}
	a->ncpus = count(a->cpus, NPL_AFF_MAX_CPUS);
	return 0;
}

const char *npl_affinity_owner(const cJSON *role, int index, const cJSON **policy)
{
	return npl_plan_affinity_owner(role, index, policy);
}

/* ---- what it says ------------------------------------------------------------------------------ */

cJSON *npl_affinity_json(const struct npl_affinity *a)
{
	struct npl_arena *ar = (struct npl_arena *)&a->arena;
	cJSON *o = cJSON_CreateObject(), *dies = cJSON_CreateArray();
	int i, j;

	cJSON_AddStringToObject(o, "policy", a->policy);
	cJSON_AddStringToObject(o, "wanted", a->want);
	cJSON_AddStringToObject(o, "why", a->why);
	if (!strcmp(a->policy, "none")) {
		cJSON_AddItemToObject(o, "dies", dies);
		return o;
	}
	cJSON_AddStringToObject(o, "allowed", npl_aff_list(ar, a->allowed, NPL_AFF_MAX_CPUS));
	cJSON_AddStringToObject(o, "allowed_from", a->allowed_from);
	cJSON_AddNumberToObject(o, "min_cpus_per_die", a->min_per_die);
	cJSON_AddStringToObject(o, "cpus", npl_aff_list(ar, a->cpus, NPL_AFF_MAX_CPUS));
	cJSON_AddStringToObject(o, "memory_nodes", npl_aff_list(ar, a->mems, (int)sizeof(a->mems)));
	for (i = 0; i < a->ndies; i++) {
		const struct npl_aff_die *die = &a->dies[i];
		cJSON *e, *irqs;

		if (!die->used)
			continue;
		e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "device", die->id);
		if (die->pci)
			cJSON_AddStringToObject(e, "pci", die->pci);
		else
			cJSON_AddNullToObject(e, "pci");
		if (die->node >= 0)
			cJSON_AddNumberToObject(e, "numa_node", die->node);
		else
			cJSON_AddNullToObject(e, "numa_node");
		cJSON_AddStringToObject(e, "node_from", die->node_from);
		cJSON_AddStringToObject(e, "cpus", npl_aff_list(ar, die->cpus, NPL_AFF_MAX_CPUS));
		cJSON_AddNumberToObject(e, "msi_irqs", die->nmsi);
		irqs = cJSON_AddArrayToObject(e, "irqs");
		for (j = 0; a->irqs && j < die->nirqs; j++) {
			cJSON *q = cJSON_CreateObject();

			cJSON_AddNumberToObject(q, "irq", die->irqs[j].irq);
			cJSON_AddStringToObject(q, "name", die->irqs[j].name);
			cJSON_AddNumberToObject(q, "cpu", die->irqs[j].cpu);
			cJSON_AddItemToArray(irqs, q);
		}
		cJSON_AddItemToArray(dies, e);
	}
	cJSON_AddItemToObject(o, "dies", dies);
	return o;
}

void npl_affinity_print(const struct npl_affinity *a, FILE *fp)
{
	struct npl_arena *ar = (struct npl_arena *)&a->arena;
	int i;

	if (!strcmp(a->policy, "none")) {
		fprintf(fp, "affinity: none (%s): nothing is bound\n", a->why);
		return;
	}
	fprintf(fp, "affinity: %s (%s), at least %d CPUs per die; CPUs %s may be used (%s)\n", a->policy, a->why,
		a->min_per_die, npl_aff_list(ar, a->allowed, NPL_AFF_MAX_CPUS), a->allowed_from);
	for (i = 0; i < a->ndies; i++) {
		const struct npl_aff_die *die = &a->dies[i];

		if (!die->used)
			continue;
		fprintf(fp, "  device %d (%s, ", die->id, die->pci ? die->pci : "no PCI device known");
		if (die->node >= 0)
			fprintf(fp, "NUMA node %d from %s): CPUs %s, memory on node %d", die->node, die->node_from,
				npl_aff_list(ar, die->cpus, NPL_AFF_MAX_CPUS), die->node);
		else
			fprintf(fp, "no NUMA node: %s): CPUs %s", die->node_from, npl_aff_list(ar, die->cpus, NPL_AFF_MAX_CPUS));
		for (int j = 0; a->irqs && j < die->nirqs; j++)
			fprintf(fp, "%s interrupt %d (%s) on CPU %d", j ? "," : ";", die->irqs[j].irq, die->irqs[j].name,
				die->irqs[j].cpu);
		if (a->irqs && !die->nirqs)
			fprintf(fp, "; none of its %d MSI interrupts is a queue's in /proc/interrupts: none bound", die->nmsi);
		fputc('\n', fp);
	}
	fprintf(fp, "  the server: CPUs %s, memory on node(s) %s\n", npl_aff_list(ar, a->cpus, NPL_AFF_MAX_CPUS),
		count(a->mems, (int)sizeof(a->mems)) ? npl_aff_list(ar, a->mems, (int)sizeof(a->mems)) : "any");
}

void npl_affinity_release(struct npl_affinity *a)
{
	npl_arena_release(&a->arena);
}

/* ---- read back ------------------------------------------------------------------------------ */

/* 1 when the NUL-separated words of cmd (n bytes) hold "--port" port and a word with "sglang" */
static int is_server(const char *cmd, size_t n, const char *port)
{
	const char *w = cmd, *end = cmd + n, *prev = NULL;
	int has_port = 0, sg = 0;

	for (; w < end; w += strlen(w) + 1) {
		if (prev && !strcmp(prev, "--port") && !strcmp(w, port))
			has_port = 1;
		if (strstr(w, "--port=") == w && !strcmp(w + 7, port))
			has_port = 1;
		sg |= strstr(w, "sglang") != NULL;
		prev = w;
	}
	return has_port && sg;
}

static void finding(cJSON *out, long pid, long tid, const char *what, const char *found, int ok)
{
	cJSON *f = cJSON_CreateObject();

	cJSON_AddNumberToObject(f, "pid", (double)pid);
	cJSON_AddNumberToObject(f, "tid", (double)tid);
	cJSON_AddStringToObject(f, "what", what);
	cJSON_AddStringToObject(f, "found", found);
	cJSON_AddBoolToObject(f, "ok", ok);
	cJSON_AddItemToArray(out, f);
}

static int by_long(const void *x, const void *y)
{
	long a = *(const long *)x, b = *(const long *)y;

	return (a > b) - (a < b);
}

/* The numbered entries of folder dir (processes, threads), ascending; their count. */
static int numbered_entries(struct npl_arena *a, const char *dir, long **out)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	int n = 0, cap = 0;

	*out = NULL;
	while (dp && (e = readdir(dp))) {
		long v = npl_parse_uint(e->d_name);

		if (v <= 0)
			continue;
		if (n == cap) {
			*out = npl_arena_grow(a, *out, (size_t)cap, (size_t)(cap ? cap * 2 : 64), sizeof(long));
			cap = cap ? cap * 2 : 64;
		}
		(*out)[n++] = v;
	}
	if (dp)
		closedir(dp);
	if (n)
		qsort(*out, (size_t)n, sizeof(long), by_long);
	return n;
}

/* A process's threads against want (a CPU set); the mismatches */
static int threads(struct npl_arena *a, const char *root, long pid, const unsigned char *want, cJSON *out)
{
	char *dir = npl_arena_printf(a, "%s/proc/%ld/task", root, pid);
	unsigned char *got = npl_arena_alloc(a, NPL_AFF_MAX_CPUS);
	long *tids;
	int bad = 0, n = numbered_entries(a, dir, &tids);

	for (int i = 0; i < n; i++) {
		long tid = tids[i];
		struct npl_diag q = NPL_DIAG_INIT;
		char *st, *l;
		int ok = 1;

		st = npl_read_file_max(a, npl_arena_printf(a, "%s/%ld/status", dir, tid), FACT_MAX, NULL, &q);
		npl_diag_release(&q);
		l = st ? strstr(st, "Cpus_allowed_list:") : NULL;
		if (!l)
			continue;   /* a thread that ended meanwhile */
		l += strlen("Cpus_allowed_list:");
		l += strspn(l, " \t");
		l[strcspn(l, "\n")] = 0;
		if (npl_cpu_list_parse(l, got, NPL_AFF_MAX_CPUS))
			ok = 0;
		for (int c = 0; ok && c < NPL_AFF_MAX_CPUS; c++)
			ok = !got[c] || want[c];
		finding(out, pid, tid, "cpus", l, ok);
		bad += !ok;
	}
	return bad;
}

/* 1 when every node of the list got ("0-1,3") is one of want's, and got names one. */
static int nodes_within(const char *got, size_t n, const char *want)
{
	unsigned char g[1024], w[1024];
	char buf[256];
	int any = 0;

	if (n >= sizeof(buf))
		return 0;
	memcpy(buf, got, n);
	buf[n] = 0;
	if (npl_cpu_list_parse(buf, g, 1024) || npl_cpu_list_parse(want, w, 1024))
		return 0;
	for (int i = 0; i < 1024; i++) {
		if (g[i] && !w[i])
			return 0;
		any |= g[i];
	}
	return any;
}

/* The process's memory policy: the first mapping's in numa_maps ("prefer:6", "bind:0-1",
 * "prefer (many):0,2", "default"), against the nodes want ("0,2"): the server's must name them
 * all, a rank's (rank set) some of them (SGLang's --numa-node binds each rank to its die's); 1 on
 * a mismatch */
static int policy(struct npl_arena *a, const char *root, long pid, const char *want, int rank, cJSON *out)
{
	struct npl_diag q = NPL_DIAG_INIT;
	char *m = npl_read_file_max(a, npl_arena_printf(a, "%s/proc/%ld/numa_maps", root, pid), FACT_MAX, NULL, &q);
	char *p, *colon;
	size_t n;
	int ok = 0;

	npl_diag_release(&q);
	if (!m || !*want)
		return 0;
	p = m + strcspn(m, " \n");       /* past the mapping's address */
	p += strspn(p, " ");
	p[strcspn(p, "\n")] = 0;
	colon = strchr(p, ':');
	if (colon && strncmp(p, "default", 7)) {
		n = strcspn(colon + 1, " ");
		colon[1 + n] = 0;              /* "prefer (many):0,2" */
		ok = rank ? nodes_within(colon + 1, n, want) : n == strlen(want) && !strncmp(colon + 1, want, n);
	} else {
		p[strcspn(p, " ")] = 0;        /* "default" */
	}
	finding(out, pid, pid, "memory", p, ok);
	return !ok;
}

/* The parent of process pid (ROOT/proc/PID/stat, the field after the name), or -1. */
static long parent_of(struct npl_arena *a, const char *dir, long pid)
{
	struct npl_diag q = NPL_DIAG_INIT;
	char *st = npl_read_file_max(a, npl_arena_printf(a, "%s/%ld/stat", dir, pid), FACT_MAX, NULL, &q);
	char *p = st ? strrchr(st, ')') : NULL;
	long ppid = -1;

	npl_diag_release(&q);
	if (p && sscanf(p + 1, " %*c %ld", &ppid) != 1)
		ppid = -1;
	return ppid;
}

/* Mark in is (over pids) every descendant of a marked process: SGLang's ranks, its detokenizer. */
static void descendants(struct npl_arena *a, const char *dir, const long *pids, int np, unsigned char *is)
{
	long *ppid = npl_arena_calloc(a, (size_t)np + 1, sizeof(long));
	int more = 1;

	for (int i = 0; i < np; i++)
		ppid[i] = is[i] ? -1 : parent_of(a, dir, pids[i]);
	while (more) {
		more = 0;
		for (int i = 0; i < np; i++) {
			if (is[i] || ppid[i] <= 0)
				continue;
			for (int j = 0; j < np; j++)
				if (is[j] && pids[j] == ppid[i]) {
					is[i] = 2;
					more = 1;
					break;
				}
		}
	}
}

int npl_affinity_readback(const char *root, const char *port, const char *cpus, const char *mems, cJSON *out)
{
	struct npl_arena a;
	char *dir;
	unsigned char *want, *is;
	long *pids;
	int bad = 0, found = 0, np;

	npl_arena_init(&a);
	root = root ? root : "";
	want = npl_arena_alloc(&a, NPL_AFF_MAX_CPUS);
	dir = npl_arena_printf(&a, "%s/proc", root);
	if (npl_cpu_list_parse(cpus, want, NPL_AFF_MAX_CPUS)) {
		npl_arena_release(&a);
		return -1;
	}
	np = numbered_entries(&a, dir, &pids);
	is = npl_arena_calloc(&a, (size_t)np + 1, 1);
	for (int i = 0; i < np; i++) {
		struct npl_diag q = NPL_DIAG_INIT;
		size_t n = 0;
		char *cmd = npl_read_file_max(&a, npl_arena_printf(&a, "%s/%ld/cmdline", dir, pids[i]), FACT_MAX, &n, &q);

		npl_diag_release(&q);
		is[i] = cmd && is_server(cmd, n, port);
		found += is[i];
	}
	/* the server's processes: itself, and the ranks (and helpers) it started */
	if (found)
		descendants(&a, dir, pids, np, is);
	for (int i = 0; i < np; i++)
		if (is[i])
			bad += threads(&a, root, pids[i], want, out) + policy(&a, root, pids[i], mems, is[i] == 2, out);
	npl_arena_release(&a);
	return found ? bad : -1;
}
