/*
 * harness.h: a simulated host for the tests, without root. A temporary
 * folder holds a fake root (cpufreq of N CPUs, the three sysctls, the Ascend
 * env files, which log that they were sourced) and a bin/ with the stub
 * server as python3 and python. Commands run there with a controlled
 * environment; what they launched is read back as "semantics", the same
 * shape as the files in tests/golden/expected: per role the flags, the environment
 * set, the variables unset, governors, sysctls and files sourced.
 * Included by the golden and apply tests.
 */
#ifndef NPL_TEST_HARNESS_H
#define NPL_TEST_HARNESS_H

#include <cjson/cJSON.h>

struct sim {
	char dir[256];
	char root[300];
	char bin[300];
	char log[300];
	char sourced[300];
	char out[300];     /* stdout of the last run */
	char err[300];     /* stderr of the last run */
	int ncpus;
};

/* Build a simulated host with ncpus CPUs; stub is the stub server binary. */
int sim_create(struct sim *s, int ncpus, const char *stub);
/* Run argv (argv[0] is looked up on the simulated PATH) with the base environment
 * plus extra "K=V" strings (NULL-terminated, may be NULL); returns the exit status or -1. */
int sim_run(struct sim *s, char *const argv[], char *const extra[]);
/* The base environment of sim_run, as a cJSON object (for the env diff). */
cJSON *sim_base_env(const struct sim *s, char *const extra[]);
/* What the last runs launched: {role: {flags, env, unset, governors, sysctl, sourced}}; a role
 * launched again is "ROLE#2", ... (several benchmarks run in turn). */
cJSON *sim_semantics(struct sim *s, const cJSON *start_env);
/* Forget the launches logged so far and reset the fake root's tuning files. */
int sim_reset(struct sim *s);
/* Remove the simulated host. */
void sim_destroy(struct sim *s);
/* Compare expected and got semantics the way the seed check does; returns the
 * number of problems and prints each to stderr prefixed with what. */
int sim_compare(const char *what, const cJSON *want, const cJSON *got);
/* Read a whole file (malloc'ed, NUL-terminated) or NULL. */
char *sim_slurp(const char *path);
/* Write text to path; 0 or -1. */
int sim_write(const char *path, const char *text);

#endif
