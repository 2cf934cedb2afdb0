/*
 * test_affinity.c: each die's CPUs, memory node and interrupts on simulated sysfs and procfs
 * trees built around recorded topologies (tests/data/topology/SOURCES.md): the A2 node of 8
 * 910B3 whose NPUs sit on NUMA nodes 6, 4, 0 and 2 (numa-local: each die on its own node, where
 * SGLang's flat split puts every one elsewhere), the same without sysfs's numa_node (npu-smi's
 * topology table instead), a partial cpuset, too few CPUs; an A3 of 16 dies (an even slice by
 * logical id; numa-local when sysfs says the nodes differ); SMT siblings kept together; a
 * policy of none; facts that cannot be read.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "npulaunch/affinity.h"
#include "npulaunch/fsio.h"
#include "unit.h"

static char *slurp(const char *rel)
{
	char path[4096];
	char *t;

	snprintf(path, sizeof(path), "%s/%s", NPL_DATA_DIR, rel);
	t = npl_read_file(path, NULL, NULL);
	assert_non_null(t);
	return t;
}

/* ROOT/rel holding text, its folders made */
static void put(const char *root, const char *rel, const char *fmt, ...)
{
	char path[4096], *slash;
	va_list ap;
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	slash = strrchr(path, '/');
	*slash = 0;
	assert_int_equal(npl_mkdirs(path, 0755, NULL), 0);
	*slash = '/';
	assert_non_null(f = fopen(path, "w"));
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

struct fx {
	char root[256];
	struct npl_affinity a;
	struct npl_diag d;
	cJSON *policy;
	char *smi, *topo;
};

static cJSON *policy(const char *p, int min, int irqs)
{
	cJSON *o = cJSON_CreateObject(), *v;

	v = cJSON_AddObjectToObject(o, "policy");
	cJSON_AddStringToObject(v, "value", p);
	v = cJSON_AddObjectToObject(o, "min_cpus_per_die");
	cJSON_AddNumberToObject(v, "value", min);
	v = cJSON_AddObjectToObject(o, "irqs");
	cJSON_AddBoolToObject(v, "value", irqs);
	return o;
}

static struct fx *fx_new(const char *allowed)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->root, sizeof(f->root), "/tmp/npl-aff-XXXXXX");
	assert_non_null(mkdtemp(f->root));
	put(f->root, "/proc/self/status", "Name:\tnpulaunch\nCpus_allowed:\tffff\nCpus_allowed_list:\t%s\nMems_allowed_list:\t0-7\n", allowed);
	return f;
}

static void fx_free(struct fx *f)
{
	char cmd[512];

	npl_affinity_release(&f->a);
	npl_diag_release(&f->d);
	cJSON_Delete(f->policy);
	free(f->smi);
	free(f->topo);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
	assert_int_equal(system(cmd), 0);
	free(f);
}

/* nodes NUMA nodes of per CPUs each, no SMT */
static void nodes(struct fx *f, int n, int per)
{
	for (int k = 0; k < n; k++) {
		char rel[128];

		snprintf(rel, sizeof(rel), "/sys/devices/system/node/node%d/cpulist", k);
		put(f->root, rel, "%d-%d\n", k * per, k * per + per - 1);
	}
}

/* the PCI device bus on NUMA node (-1: none) with the CPUs list (NULL: no local_cpulist) */
static void pci(struct fx *f, const char *bus, int node, const char *list)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "/sys/bus/pci/devices/%s/numa_node", bus);
	put(f->root, rel, "%d\n", node);
	if (list) {
		snprintf(rel, sizeof(rel), "/sys/bus/pci/devices/%s/local_cpulist", bus);
		put(f->root, rel, "%s\n", list);
	}
}

/* The A2 node of a2-910b3-npu-smi.txt: 192 CPUs on 8 nodes; each die's node from its CPU
 * Affinity in a2-910b3-topo.txt; die 0's queue interrupts 2753 and 2754 among its MSI ones. */
static void a2(struct fx *f, int with_sysfs)
{
	static const struct {
		const char *bus, *cpus;
		int node;
	} die[] = {{"0000:c1:00.0", "144-167", 6}, {"0000:c2:00.0", "144-167", 6}, {"0000:81:00.0", "96-119", 4},
		   {"0000:82:00.0", "96-119", 4},  {"0000:01:00.0", "0-23", 0},    {"0000:02:00.0", "0-23", 0},
		   {"0000:41:00.0", "48-71", 2},   {"0000:42:00.0", "48-71", 2}};

	nodes(f, 8, 24);
	for (size_t i = 0; with_sysfs && i < sizeof(die) / sizeof(die[0]); i++)
		pci(f, die[i].bus, die[i].node, die[i].cpus);
	for (int irq = 2750; irq < 2758; irq++) {
		char rel[128];

		snprintf(rel, sizeof(rel), "/sys/bus/pci/devices/0000:c1:00.0/msi_irqs/%d", irq);
		put(f->root, rel, "msi\n");
	}
	put(f->root, "/proc/interrupts",
	    "           CPU0       CPU1\n"
	    "2752:          0          0  ITS-MSI 1 Edge      devdrv-functional_cq\n"
	    "2753:         12          0  ITS-MSI 2 Edge      sq_send_trigger_irq\n"
	    "2754:         12          0  ITS-MSI 3 Edge      cq_update_irq\n"
	    " IPI0:       100        100  Rescheduling interrupts\n");
	f->smi = slurp("topology/a2-910b3-npu-smi.txt");
	f->topo = slurp("topology/a2-910b3-topo.txt");
}

static int run(struct fx *f, const char *pol, int min, const int *dev, int ndev)
{
	struct npl_aff_opts o = {f->root, NULL, dev, ndev, f->smi, f->topo};

	f->policy = policy(pol, min, 1);
	o.policy = f->policy;
	return npl_affinity_compute(&f->a, &o, &f->d);
}

static const char *die_cpus(struct fx *f, int id)
{
	return npl_aff_list(&f->a.arena, f->a.dies[id].cpus, NPL_AFF_MAX_CPUS);
}

static const int all8[] = {0, 1, 2, 3, 4, 5, 6, 7};

/* each die on its own node's CPUs, two dies a node sharing it evenly */
static void a2_numa_local(void **state)
{
	struct fx *f = fx_new("0-191");

	(void)state;
	a2(f, 1);
	assert_int_equal(run(f, "numa-local", 5, all8, 8), 0);
	assert_string_equal(f->a.policy, "numa-local");
	assert_string_equal(die_cpus(f, 0), "144-155");
	assert_string_equal(die_cpus(f, 1), "156-167");
	assert_string_equal(die_cpus(f, 2), "96-107");
	assert_string_equal(die_cpus(f, 3), "108-119");
	assert_string_equal(die_cpus(f, 4), "0-11");
	assert_string_equal(die_cpus(f, 5), "12-23");
	assert_string_equal(die_cpus(f, 6), "48-59");
	assert_string_equal(die_cpus(f, 7), "60-71");
	assert_string_equal(f->a.dies[0].pci, "0000:c1:00.0");
	assert_int_equal(f->a.dies[0].node, 6);
	assert_string_equal(f->a.dies[0].node_from, "sysfs numa_node");
	/* die 0's queues: the submission queue's interrupt on its first CPU, the completion's on
	   the second; its other MSI interrupts are not a queue's */
	assert_int_equal(f->a.dies[0].nmsi, 8);
	assert_int_equal(f->a.dies[0].nirqs, 2);
	assert_int_equal(f->a.dies[0].irqs[0].irq, 2753);
	assert_int_equal(f->a.dies[0].irqs[0].cpu, 144);
	assert_int_equal(f->a.dies[0].irqs[1].irq, 2754);
	assert_int_equal(f->a.dies[0].irqs[1].cpu, 145);
	assert_string_equal(npl_aff_list(&f->a.arena, f->a.cpus, NPL_AFF_MAX_CPUS), "0-23,48-71,96-119,144-167");
	assert_string_equal(npl_aff_list(&f->a.arena, f->a.mems, 1024), "0,2,4,6");
	/* SGLang's SGLANG_SET_CPU_AFFINITY split (CPUs 24k to 24k+23 for device k, by number
	   alone) puts every die off its node here; this puts every die on it */
	for (int k = 0; k < 8; k++) {
		assert_false(f->a.dies[k].local[24 * k]);
		for (int c = 0; c < NPL_AFF_MAX_CPUS; c++)
			assert_true(!f->a.dies[k].cpus[c] || f->a.dies[k].local[c]);
	}
	fx_free(f);
}

/* no numa_node in sysfs: npu-smi's topology table and the nodes' cpulists give the same */
static void a2_topo_fallback(void **state)
{
	struct fx *f = fx_new("0-191");

	(void)state;
	a2(f, 0);
	assert_int_equal(run(f, "numa-local", 5, all8, 8), 0);
	assert_string_equal(f->a.policy, "numa-local");
	assert_string_equal(die_cpus(f, 0), "144-155");
	assert_string_equal(die_cpus(f, 7), "60-71");
	assert_int_equal(f->a.dies[3].node, 4);
	assert_non_null(strstr(f->a.dies[3].node_from, "npu-smi info -t topo (CPU Affinity 96-119)"));
	fx_free(f);
}

/* neither: even-slice, saying why */
static void a2_no_nodes(void **state)
{
	struct fx *f = fx_new("0-191");

	(void)state;
	a2(f, 0);
	free(f->topo);
	f->topo = NULL;
	assert_int_equal(run(f, "numa-local", 5, all8, 8), 0);
	assert_string_equal(f->a.policy, "even-slice");
	assert_string_equal(f->a.why, "the plan's policy is numa-local, but no die has a NUMA node (sysfs)");
	assert_string_equal(die_cpus(f, 0), "0-23");
	assert_string_equal(die_cpus(f, 7), "168-191");
	fx_free(f);
}

/* a cpuset of three nodes (Slurm, Kubernetes, docker --cpuset-cpus): the dies on them are
 * bound; a die whose node has none of the CPUs is refused, naming both */
static void a2_partial_cpuset(void **state)
{
	static const int first4[] = {0, 1, 2, 3}, six[] = {6};
	struct fx *f = fx_new("0-23,96-119,144-167");

	(void)state;
	a2(f, 1);
	assert_int_equal(run(f, "numa-local", 5, first4, 4), 0);
	assert_string_equal(die_cpus(f, 0), "144-155");
	assert_string_equal(die_cpus(f, 3), "108-119");
	assert_string_equal(npl_aff_list(&f->a.arena, f->a.cpus, NPL_AFF_MAX_CPUS), "96-119,144-167");
	fx_free(f);

	f = fx_new("0-23,96-119,144-167");
	a2(f, 1);
	assert_int_equal(run(f, "numa-local", 5, six, 1), -1);
	assert_non_null(strstr(npl_test_msg(&f->d, 0),
			       "error: affinity numa-local: device 6 is on NUMA node 2, whose CPUs (48-71) this process may not use "
			       "(Cpus_allowed_list of "));
	assert_non_null(strstr(npl_test_msg(&f->d, 0), "/proc/self/status: 0-23,96-119,144-167)"));
	fx_free(f);
}

/* fewer CPUs than the policy's minimum per die */
static void a2_too_few(void **state)
{
	struct fx *f = fx_new("0-191");

	(void)state;
	a2(f, 1);
	assert_int_equal(run(f, "numa-local", 13, all8, 8), -1);
	assert_non_null(strstr(npl_test_msg(&f->d, 0), "NUMA node 6 has 24 CPUs this process may use for its 2 dies: 12 each, fewer than the 13 per die the policy needs"));
	fx_free(f);
}

/* A3: 16 dies, no NUMA node in sysfs (HCCS): an even slice by logical id, whichever dies an
 * instance uses, so two instances on one node never share */
static void a3_even_slice(void **state)
{
	static const int second[] = {8, 9, 10, 11, 12, 13, 14, 15};
	struct fx *f = fx_new("0-319");

	(void)state;
	f->smi = slurp("preflight/npu-smi-a3-16-ok.txt");
	assert_int_equal(run(f, "even-slice", 5, second, 8), 0);
	assert_string_equal(f->a.policy, "even-slice");
	assert_int_equal(f->a.ndies, 16);
	assert_string_equal(die_cpus(f, 8), "160-179");
	assert_string_equal(die_cpus(f, 15), "300-319");
	assert_string_equal(f->a.dies[8].pci, "0000:8d:00.0");   /* NPU 4, chip 0: the table's ninth die */
	assert_string_equal(npl_aff_list(&f->a.arena, f->a.cpus, NPL_AFF_MAX_CPUS), "160-319");
	assert_int_equal(f->a.dies[15].node, -1);
	fx_free(f);
}

/* A3 whose sysfs puts the dies on different nodes: numa-local, saying why */
static void a3_nodes_differ(void **state)
{
	static const int all[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
	static const char *const bus[] = {"9d", "9f", "99", "9b", "95", "97", "91", "93",
					  "8d", "8f", "89", "8b", "85", "87", "81", "83"};
	struct fx *f = fx_new("0-319");
	char b[32];
	int i;

	(void)state;
	f->smi = slurp("preflight/npu-smi-a3-16-ok.txt");
	for (i = 0; i < 16; i++) {
		const char *list = i < 8 ? "0-79" : "80-319";

		snprintf(b, sizeof(b), "0000:%s:00.0", bus[i]);
		pci(f, b, i < 8 ? 0 : 1, list);
	}
	assert_int_equal(run(f, "even-slice", 5, all, 16), 0);
	assert_string_equal(f->a.policy, "numa-local");
	assert_string_equal(f->a.why, "the plan's policy is even-slice, but sysfs puts the dies on different NUMA nodes");
	assert_string_equal(die_cpus(f, 0), "0-9");
	assert_string_equal(die_cpus(f, 8), "80-109");
	fx_free(f);
}

/* SMT: a core's two threads stay with one die */
static void smt_siblings(void **state)
{
	static const int all[] = {0, 1, 2, 3};
	struct fx *f = fx_new("0-31");
	char rel[128];

	(void)state;
	for (int c = 0; c < 32; c++) {
		snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", c);
		put(f->root, rel, "%d,%d\n", c % 16, c % 16 + 16);
	}
	f->smi = slurp("preflight/npu-smi-a3-busy.txt");
	assert_int_equal(run(f, "even-slice", 5, all, 4), 0);
	assert_int_equal(f->a.ndies, 4);
	assert_string_equal(die_cpus(f, 0), "0-3,16-19");
	assert_string_equal(die_cpus(f, 3), "12-15,28-31");
	fx_free(f);
}

/* none: nothing read (the root has no facts), nothing bound */
static void policy_none(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct npl_aff_opts o = {"/nonexistent", NULL, all8, 8, NULL, NULL};
	cJSON *j;

	(void)state;
	f->policy = policy("none", 5, 1);
	o.policy = f->policy;
	assert_int_equal(npl_affinity_compute(&f->a, &o, &f->d), 0);
	assert_string_equal(f->a.policy, "none");
	j = npl_affinity_json(&f->a);
	assert_string_equal(cJSON_GetObjectItem(j, "policy")->valuestring, "none");
	cJSON_Delete(j);
	npl_affinity_release(&f->a);
	cJSON_Delete(f->policy);
	free(f);
}

/* facts that cannot be read: located errors */
static void bad_facts(void **state)
{
	struct fx *f = fx_new("0-191");

	(void)state;
	a2(f, 1);
	put(f->root, "/sys/bus/pci/devices/0000:81:00.0/numa_node", "four\n");
	assert_int_equal(run(f, "numa-local", 5, all8, 8), -1);
	assert_non_null(strstr(npl_test_msg(&f->d, 0), "/sys/bus/pci/devices/0000:81:00.0/numa_node: error: numa_node 'four' is not a NUMA node number"));
	fx_free(f);

	f = fx_new("0-191");
	a2(f, 1);
	put(f->root, "/proc/self/status", "Name:\tnpulaunch\n");
	assert_int_equal(run(f, "numa-local", 5, all8, 8), -1);
	assert_non_null(strstr(npl_test_msg(&f->d, 0), "/proc/self/status: error: no Cpus_allowed_list"));
	fx_free(f);

	/* an npu-smi whose Bus-Id would lead out of sysfs: no PCI device, so no node */
	f = fx_new("0-191");
	a2(f, 1);
	{
		char *q = strstr(f->smi, "0000:C1:00.0");

		memcpy(q, "../../../..", 11);
	}
	assert_int_equal(run(f, "numa-local", 5, all8, 8), 0);
	assert_null(f->a.dies[0].pci);
	assert_string_equal(f->a.policy, "even-slice");
	fx_free(f);

	f = fx_new("0-191,9000");
	a2(f, 1);
	assert_int_equal(run(f, "numa-local", 5, all8, 8), -1);
	assert_non_null(strstr(npl_test_msg(&f->d, 0), "Cpus_allowed_list '0-191,9000' is not a CPU list"));
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a2_numa_local),  cmocka_unit_test(a2_topo_fallback), cmocka_unit_test(a2_no_nodes),
		cmocka_unit_test(a2_partial_cpuset), cmocka_unit_test(a2_too_few), cmocka_unit_test(a3_even_slice),
		cmocka_unit_test(a3_nodes_differ), cmocka_unit_test(smt_siblings), cmocka_unit_test(policy_none),
		cmocka_unit_test(bad_facts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
