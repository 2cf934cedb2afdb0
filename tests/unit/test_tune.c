/*
 * test_tune.c: host tuning against fake roots: 1024 CPUs applied, checked and
 * reverted byte for byte; a second apply keeps the first journal; no
 * cpufreq; a read-only file; the debugfs location of
 * sched_migration_cost_ns; a governor the CPUs do not offer; a write that
 * fails part-way (undone); revert without a journal; a journal's service
 * entries (apply's irqbalance); CPU lists.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "npulaunch/plan.h"
#include "npulaunch/resolve.h"
#include "npulaunch/tune.h"
#include "unit.h"

struct fx {
	struct sim s;
	struct npl_arena a;
	struct npl_diag d;
	struct npl_db db;
	cJSON *tuning;
	struct npl_tune t;
};

/* A simulated host of n CPUs and the shipped A3 profile's tuning. */
static struct fx *make(int ncpus)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(sim_create(&f->s, ncpus, NPL_STUB), 0);
	npl_arena_init(&f->a);
	assert_int_equal(npl_db_open(&f->db, &f->a, NULL, 0, &f->d), 0);
	f->tuning = npl_resolve_tuning(&f->db, npl_db_default_hardware(&f->db), &f->d);
	assert_non_null(f->tuning);
	return f;
}

static void drop(struct fx *f)
{
	npl_tune_release(&f->t);
	cJSON_Delete(f->tuning);
	npl_diag_release(&f->d);
	npl_arena_release(&f->a);
	sim_destroy(&f->s);
	free(f);
}

static const char *msg(struct fx *f, int i)
{
	return npl_test_msg(&f->d, i);
}

static char *at(struct fx *f, const char *rel)
{
	static char buf[4][1024];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s%s", f->s.root, rel);
	return buf[k];
}

/* Every file of the fake root's sys and proc trees, with contents, one string. */
static char *snapshot(struct fx *f)
{
	char cmd[1024];
	FILE *p;
	char *out = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&out, &n);
	char buf[4096];
	size_t r;

	snprintf(cmd, sizeof(cmd), "cd '%s' && find sys proc -type f -print0 | sort -z | xargs -0 -r tail -v -n +1", f->s.root);
	p = popen(cmd, "r");
	assert_non_null(p);
	while ((r = fread(buf, 1, sizeof(buf), p)) > 0)
		fwrite(buf, 1, r, m);
	pclose(p);
	fclose(m);
	return out;
}

static void test_1024_cpus_apply_check_revert(void **state)
{
	struct fx *f = make(1024);
	char *before, *after, *journal1, *journal2, *jpath;
	int changed, restored;

	(void)state;
	before = snapshot(f);
	/* before: everything differs */
	assert_int_equal(npl_tune_collect(&f->t, f->tuning, f->s.root, NULL, 0, &f->d), 0);
	assert_int_equal(f->t.cpus, 1024);
	assert_int_equal(f->t.cpufreq, 1);
	assert_int_equal(f->t.n, 1024 + 3);
	assert_int_equal(npl_tune_differences(&f->t), 1027);
	assert_string_equal(f->t.v[1023].name, "cpu1023 governor");
	assert_string_equal(f->t.v[1024].name, "vm.swappiness");
	assert_string_equal(f->t.v[1024].path, at(f, "/proc/sys/vm/swappiness"));
	assert_string_equal(f->t.v[1024].current, "60\n");
	/* apply: journal first, then every file */
	assert_int_equal(npl_tune_apply(&f->t, NULL, &changed, &f->d), 0);
	assert_int_equal(changed, 1027);
	jpath = npl_tune_journal_path(f->s.root, NULL);
	journal1 = sim_slurp(jpath);
	assert_non_null(journal1);
	{
		/* the journal is JSON with every file's path and old contents, in order */
		cJSON *j = cJSON_Parse(journal1), *e;

		assert_non_null(j);
		assert_string_equal(cJSON_GetObjectItem(j, "format")->valuestring, "npulaunch-tune-journal/2");
		assert_string_equal(cJSON_GetObjectItem(j, "root")->valuestring, f->s.root);
		assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "entries")), 1027);
		e = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "entries"), 777);
		assert_string_equal(cJSON_GetObjectItem(e, "name")->valuestring, "cpu777 governor");
		/* the path on the host, without the root; the bytes in base64 */
		assert_string_equal(cJSON_GetObjectItem(e, "path")->valuestring,
				    "/sys/devices/system/cpu/cpu777/cpufreq/scaling_governor");
		assert_string_equal(cJSON_GetObjectItem(e, "base64")->valuestring, "c2NoZWR1dGlsCg==");
		e = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "entries"), 1024);
		assert_string_equal(cJSON_GetObjectItem(e, "base64")->valuestring, "NjAK");
		cJSON_Delete(j);
	}
	after = sim_slurp(at(f, "/sys/devices/system/cpu/cpu777/cpufreq/scaling_governor"));
	assert_string_equal(after, "performance\n");
	free(after);
	after = sim_slurp(at(f, "/proc/sys/kernel/sched_migration_cost_ns"));
	assert_string_equal(after, "50000\n");
	free(after);
	/* check: now it matches */
	npl_tune_release(&f->t);
	assert_int_equal(npl_tune_collect(&f->t, f->tuning, f->s.root, NULL, 0, &f->d), 0);
	assert_int_equal(npl_tune_differences(&f->t), 0);
	/* a second apply changes nothing and keeps the first journal */
	assert_int_equal(npl_tune_apply(&f->t, NULL, &changed, &f->d), 0);
	assert_int_equal(changed, 0);
	journal2 = sim_slurp(jpath);
	assert_string_equal(journal1, journal2);
	/* revert: byte for byte, and the journal is gone */
	assert_int_equal(npl_tune_revert(f->s.root, NULL, &restored, &f->d), 0);
	assert_int_equal(restored, 1027);
	after = snapshot(f);
	assert_string_equal(before, after);
	assert_int_not_equal(access(jpath, F_OK), 0);
	assert_int_equal(f->d.errors, 0);
	free(before);
	free(after);
	free(journal1);
	free(journal2);
	free(jpath);
	drop(f);
}

static void test_no_cpufreq(void **state)
{
	struct fx *f = make(4);
	char cmd[1024];
	int changed;

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'/sys/devices/system/cpu/cpu*/cpufreq", f->s.root);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(npl_tune_collect(&f->t, f->tuning, f->s.root, NULL, 0, &f->d), 0);
	assert_int_equal(f->t.cpufreq, 0);
	assert_int_equal(f->t.n, 3);
	assert_int_equal(f->d.warnings, 1);
	assert_int_equal(f->d.errors, 0);
	snprintf(cmd, sizeof(cmd), "%s/sys/devices/system/cpu: warning: no cpufreq for any of the 4 online CPUs (a VM or a container?): the governor stays as it is",
		 f->s.root);
	assert_string_equal(msg(f, 0), cmd);
	/* the sysctls are still tuned */
	assert_int_equal(npl_tune_apply(&f->t, NULL, &changed, &f->d), 0);
	assert_int_equal(changed, 3);
	drop(f);
}

/* A cpufreq that is a file, not a folder (ENOTDIR on the way to the governor): no cpufreq for
 * that CPU, as when it is missing, not an error. */
static void test_cpufreq_not_a_folder(void **state)
{
	struct fx *f = make(2);
	char cmd[1024];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'/sys/devices/system/cpu/cpu0/cpufreq && : >'%s'/sys/devices/system/cpu/cpu0/cpufreq",
		 f->s.root, f->s.root);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(npl_tune_collect(&f->t, f->tuning, f->s.root, NULL, 0, &f->d), 0);
	assert_int_equal(f->d.errors, 0);
	assert_int_equal(f->t.cpufreq, 1);
	assert_int_equal(f->t.n, 1 + 3);   /* cpu1's governor and the sysctls */
	assert_string_equal(f->t.v[0].name, "cpu1 governor");
	drop(f);
}

static void test_debugfs_location(void **state)
{
	struct fx *f = make(2);
	char *v;
	int changed;

	(void)state;
	/* Linux 5.13 and later: not in procfs but in debugfs */
	assert_int_equal(unlink(at(f, "/proc/sys/kernel/sched_migration_cost_ns")), 0);
	assert_int_equal(sim_write(at(f, "/sys/kernel/debug/sched/migration_cost_ns"), "500000\n"), 0);
	assert_int_equal(npl_tune_collect(&f->t, f->tuning, f->s.root, NULL, 0, &f->d), 0);
	assert_string_equal(f->t.v[4].name, "kernel.sched_migration_cost_ns");
	assert_string_equal(f->t.v[4].path, at(f, "/sys/kernel/debug/sched/migration_cost_ns"));
	assert_int_equal(npl_tune_apply(&f->t, NULL, &changed, &f->d), 0);
	v = sim_slurp(at(f, "/sys/kernel/debug/sched/migration_cost_ns"));
	assert_string_equal(v, "50000\n");
	free(v);
	/* neither: an error that says where it looked and what to do */
	assert_int_equal(unlink(at(f, "/sys/kernel/debug/sched/migration_cost_ns")), 0);
	npl_tune_release(&f->t);
	assert_int_equal(npl_tune_collect(&f->t, f->tuning, f->s.root, NULL, 0, &f->d), -1);
	{
		char want[2048];

		snprintf(want, sizeof(want), "error: sysctl kernel.sched_migration_cost_ns: none of %s, %s exists (since Linux 5.13 it lives in debugfs: mount -t debugfs none /sys/kernel/debug)",
			 at(f, "/proc/sys/kernel/sched_migration_cost_ns"), at(f, "/sys/kernel/debug/sched/migration_cost_ns"));
		assert_string_equal(msg(f, f->d.n - 1), want);
	}
	drop(f);
}

static void test_unknown_governor(void **state)
{
	struct fx *f = make(8);
	char path[1024], want[2048];
	int c;

	(void)state;
	for (c = 0; c < 8; c++) {
		snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu%d/cpufreq/scaling_available_governors",
			 f->s.root, c);
		assert_int_equal(sim_write(path, "schedutil powersave\n"), 0);
	}
	assert_int_equal(npl_tune_collect(&f->t, f->tuning, f->s.root, NULL, 0, &f->d), -1);
	/* three named, the rest counted */
	assert_int_equal(f->d.errors, 4);
	snprintf(want, sizeof(want), "%s/sys/devices/system/cpu/cpu0/cpufreq/scaling_available_governors: error: cpu0 does not offer the governor 'performance' (it offers: schedutil powersave)",
		 f->s.root);
	assert_string_equal(msg(f, 0), want);
	assert_string_equal(msg(f, 3), "error: 5 more CPUs do not offer the governor 'performance'");
	drop(f);
}

/* Collect as the user nobody; 0 when the read-only file was refused as it should be. */
static int readonly_as_nobody(struct fx *f)
{
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_tune t;
	char want[1024];
	int rc;

	if (getuid() == 0 && (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534)))
		return 10;
	rc = npl_tune_collect(&t, f->tuning, f->s.root, NULL, 0, &d);
	if (rc != -1 || d.errors != 1)
		return 11;
	snprintf(want, sizeof(want), "%s: error: cannot write vm.swappiness: Permission denied",
		 at(f, "/proc/sys/vm/swappiness"));
	{
		char *s = npl_diag_format(&d, &d.v[0], 0);

		rc = strcmp(s, want) ? 12 : 0;
		if (rc)
			fprintf(stderr, "got: %s\nwant: %s\n", s, want);
		free(s);
	}
	npl_tune_release(&t);
	npl_diag_release(&d);
	return rc;
}

static void test_readonly_file(void **state)
{
	struct fx *f = make(2);
	char cmd[1024];
	char *before;
	pid_t pid;
	int status;

	(void)state;
	/* root may write a 0444 file, so a root run checks this as the user nobody */
	snprintf(cmd, sizeof(cmd), "chmod -R a+rwX '%s' && chmod 0444 '%s'", f->s.dir,
		 at(f, "/proc/sys/vm/swappiness"));
	assert_int_equal(system(cmd), 0);
	before = snapshot(f);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(readonly_as_nobody(f));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* nothing changed, no journal */
	{
		char *after = snapshot(f), *jpath = npl_tune_journal_path(f->s.root, NULL);

		assert_string_equal(before, after);
		assert_int_not_equal(access(jpath, F_OK), 0);
		free(after);
		free(jpath);
	}
	free(before);
	drop(f);
}

/* In a child with a file size limit of 16 bytes: the governors and swappiness are written, the
 * 20 bytes meant for numa_balancing are not (EFBIG after a part of them). 0 when the apply failed
 * as it should, with its message. */
static int part_way_child(struct fx *f)
{
	struct rlimit rl = {16, 16};
	char want[1024];
	int changed = -1, i;

	signal(SIGXFSZ, SIG_IGN);
	if (npl_tune_collect(&f->t, f->tuning, f->s.root, NULL, 0, &f->d))
		return 10;
	for (i = 0; i < f->t.n; i++)
		if (!strcmp(f->t.v[i].name, "kernel.numa_balancing")) {
			free(f->t.v[i].wanted);
			f->t.v[i].wanted = strdup("00000000000000000000");
		}
	if (setrlimit(RLIMIT_FSIZE, &rl))
		return 11;
	if (npl_tune_apply(&f->t, NULL, &changed, &f->d) != -1)
		return 12;
	snprintf(want, sizeof(want), "%s: error: cannot write kernel.numa_balancing: File too large",
		 at(f, "/proc/sys/kernel/numa_balancing"));
	if (strcmp(msg(f, 0), want)) {
		fprintf(stderr, "got: %s\nwant: %s\n", msg(f, 0), want);
		return 13;
	}
	return f->d.errors == 1 ? 0 : 14;
}

static void test_failure_part_way_is_undone(void **state)
{
	struct fx *f = make(16);
	char *before, *after, *jpath = npl_tune_journal_path(f->s.root, NULL), *journal, *left;
	pid_t pid;
	int status, changed, restored;

	(void)state;
	before = snapshot(f);
	/* the journal of an earlier apply (the limit would stop a new one being written) */
	assert_int_equal(npl_tune_collect(&f->t, f->tuning, f->s.root, NULL, 0, &f->d), 0);
	assert_int_equal(npl_tune_apply(&f->t, NULL, &changed, &f->d), 0);
	journal = sim_slurp(jpath);
	assert_non_null(journal);
	assert_int_equal(npl_tune_revert(f->s.root, NULL, &restored, &f->d), 0);
	assert_int_equal(sim_write(jpath, journal), 0);
	npl_tune_release(&f->t);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(part_way_child(f));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* the 16 governors and swappiness it had written are back, and the file it wrote a part
	 * of; the journal is as it was */
	after = snapshot(f);
	assert_string_equal(before, after);
	left = sim_slurp(jpath);
	assert_non_null(left);
	assert_string_equal(left, journal);
	free(left);
	free(journal);
	free(jpath);
	free(before);
	free(after);
	drop(f);
}

static void test_revert_without_journal(void **state)
{
	struct fx *f = make(1);
	char want[1024];
	int n;

	(void)state;
	assert_int_equal(npl_tune_revert(f->s.root, NULL, &n, &f->d), -1);
	snprintf(want, sizeof(want), "%s/run/npulaunch/tune-journal.json: error: no tuning journal: nothing to revert",
		 f->s.root);
	assert_string_equal(msg(f, 0), want);
	/* a file that is not a journal is refused, and left alone */
	assert_int_equal(sim_write(at(f, "/run/npulaunch/tune-journal.json"), "{\"x\": 1}"), 0);
	assert_int_equal(npl_tune_revert(f->s.root, NULL, &n, &f->d), -1);
	assert_int_equal(access(at(f, "/run/npulaunch/tune-journal.json"), F_OK), 0);
	drop(f);
}

/* A journal's service entries (apply's irqbalance): the one kind it takes, and the rest refused,
 * located */
static void test_journal_services(void **state)
{
	static const char *const bad[][2] = {
		{"{\"name\": \"sshd.service\", \"unit\": \"sshd.service\", \"state\": \"active\"}",
		 "a unit that is not one tuning stops (only irqbalance.service)"},
		{"{\"name\": \"irqbalance.service\", \"unit\": \"irqbalance.service\", \"state\": \"inactive\"}",
		 "a state that is not \"active\" (tuning stops only a service that runs)"},
		{"{\"name\": \"x\", \"unit\": \"irqbalance.service\", \"state\": \"active\"}", "a name that is not its unit"},
		{"{\"name\": \"irqbalance.service\", \"unit\": \"irqbalance.service\", \"state\": \"active\", \"pid\": 1}",
		 "an unknown key"},
	};
	const char *ok = "{\"name\": \"irqbalance.service\", \"unit\": \"irqbalance.service\", \"state\": \"active\"}";
	struct fx *f = make(1);
	struct npl_tune_journal j;
	char text[1024], want[512];

	(void)state;
	snprintf(text, sizeof(text),
		 "{\"format\": \"npulaunch-tune-journal/2\", \"root\": \"/\", \"entries\": [{\"name\": \"irq 7\", "
		 "\"path\": \"/proc/irq/7/smp_affinity_list\", \"base64\": \"MC0xOTEK\"}, %s]}", ok);
	assert_int_equal(npl_tune_journal_parse(&j, "j.json", text, strlen(text), "/", &f->d), 0);
	assert_int_equal(j.n, 1);
	assert_int_equal(j.ns, 1);
	assert_string_equal(j.s[0].unit, "irqbalance.service");
	assert_string_equal(j.s[0].state, "active");
	npl_tune_journal_release(&j);
	/* twice is once too many */
	snprintf(text, sizeof(text), "{\"format\": \"npulaunch-tune-journal/2\", \"root\": \"/\", \"entries\": [%s, %s]}", ok, ok);
	assert_int_equal(npl_tune_journal_parse(&j, "j.json", text, strlen(text), "/", &f->d), -1);
	assert_string_equal(msg(f, 0), "j.json: error: entry 2 (a service): a unit that is there twice");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		npl_diag_release(&f->d);
		snprintf(text, sizeof(text), "{\"format\": \"npulaunch-tune-journal/2\", \"root\": \"/\", \"entries\": [%s]}",
			 bad[i][0]);
		assert_int_equal(npl_tune_journal_parse(&j, "j.json", text, strlen(text), "/", &f->d), -1);
		snprintf(want, sizeof(want), "j.json: error: entry 1 (a service): %s", bad[i][1]);
		assert_string_equal(msg(f, 0), want);
	}
	/* a path cut short by \u0000 (cJSON ends the string there): it read as the swappiness file */
	npl_diag_release(&f->d);
	snprintf(text, sizeof(text), "{\"format\": \"npulaunch-tune-journal/2\", \"root\": \"/\", \"entries\": [{\"name\": "
		 "\"vm.swappiness\", \"path\": \"/proc/sys/vm/swappiness\\u0000x\", \"base64\": \"NjAK\"}]}");
	assert_int_equal(npl_tune_journal_parse(&j, "j.json", text, strlen(text), "/", &f->d), -1);
	assert_string_equal(msg(f, 0), "j.json: error: the tuning journal holds \\u0000 (a NUL, which would cut a path "
				       "short): not written by npulaunch; nothing was changed");
	drop(f);
}

static void test_online_list(void **state)
{
	struct fx *f = make(8);
	unsigned char set[64];

	(void)state;
	assert_int_equal(npl_cpu_list_parse("0-3,8,10-11", set, 64), 0);
	assert_true(set[0] && set[3] && !set[4] && set[8] && !set[9] && set[10] && set[11] && !set[12]);
	assert_int_equal(npl_cpu_list_parse("0-3\n", set, 64), 0);
	assert_int_equal(npl_cpu_list_parse("3-1", set, 64), -1);
	assert_int_equal(npl_cpu_list_parse("a", set, 64), -1);
	assert_int_equal(npl_cpu_list_parse("", set, 64), -1);
	assert_int_equal(npl_cpu_list_parse("64", set, 64), -1);
	assert_int_equal(npl_cpu_list_parse("1,,2", set, 64), -1);
	/* offline CPUs are left alone */
	assert_int_equal(sim_write(at(f, "/sys/devices/system/cpu/online"), "0-1,4\n"), 0);
	assert_int_equal(npl_cpus_online(f->s.root, set, 64, &f->d), 3);
	assert_int_equal(npl_tune_collect(&f->t, f->tuning, f->s.root, NULL, 0, &f->d), 0);
	assert_int_equal(f->t.n, 3 + 3);
	assert_string_equal(f->t.v[2].name, "cpu4 governor");
	/* without an online list, every cpuN folder */
	assert_int_equal(unlink(at(f, "/sys/devices/system/cpu/online")), 0);
	assert_int_equal(npl_cpus_online(f->s.root, set, 64, &f->d), 8);
	drop(f);
}

static void test_json(void **state)
{
	struct fx *f = make(2);
	cJSON *j;

	(void)state;
	assert_int_equal(npl_tune_collect(&f->t, f->tuning, f->s.root, NULL, 0, &f->d), 0);
	j = npl_tune_json(&f->t);
	assert_int_equal(npl_json_int(j, "differences", -1), 5);
	assert_int_equal(npl_json_int(j, "cpus", -1), 2);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "cpufreq")));
	{
		const cJSON *it = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "items"), 2);

		assert_string_equal(npl_json_str(it, "name"), "vm.swappiness");
		assert_string_equal(npl_json_str(it, "current"), "60");
		assert_string_equal(npl_json_str(it, "wanted"), "0");
		assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(it, "ok")));
	}
	cJSON_Delete(j);
	drop(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_1024_cpus_apply_check_revert),
		cmocka_unit_test(test_no_cpufreq),
		cmocka_unit_test(test_cpufreq_not_a_folder),
		cmocka_unit_test(test_debugfs_location),
		cmocka_unit_test(test_unknown_governor),
		cmocka_unit_test(test_readonly_file),
		cmocka_unit_test(test_failure_part_way_is_undone),
		cmocka_unit_test(test_revert_without_journal),
		cmocka_unit_test(test_journal_services),
		cmocka_unit_test(test_online_list),
		cmocka_unit_test(test_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
