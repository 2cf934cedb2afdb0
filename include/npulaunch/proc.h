/*
 * proc.h: layer node. Outside tools, found and run without a shell and never waited on for
 * longer than asked. A tool is looked for on PATH, then in given folders under a root prefix
 * (a hardware profile's tool folders). It runs with argv, stdin on /dev/null, stdout and
 * stderr into one pipe, LC_ALL=C and a process group of its own; its output is read until it
 * ends, the timeout passes or it grows past a limit, and a tool that does not answer in time,
 * or talks too much, is killed with its whole group. Everything returned lives in the caller's
 * arena. npl_proc_spawn() is the one place a child process is started: npl_proc_run(), apply's
 * sourcing of the env files and its instances, and bench's sglang.bench_serving all go
 * through it. Included by preflight.c (npu-smi, hccn_tool), launch.c and the bench command.
 */
#ifndef NPL_PROC_H
#define NPL_PROC_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

struct npl_arena;

enum npl_proc_result {
	NPL_PROC_OK,        /* it exited 0 */
	NPL_PROC_FAILED,    /* it exited with another status (or was killed by a signal) */
	NPL_PROC_TIMEOUT,   /* it did not finish within the timeout: killed */
	NPL_PROC_TOO_LONG,  /* it printed more than the limit: killed */
	NPL_PROC_CANNOT     /* it could not be run (no pipe, no fork, exec failed with no output) */
};

/* What a child is started with. */
struct npl_proc_child {
	const char *path;           /* the file to run; NULL: argv[0], looked up on PATH */
	char *const *argv;          /* NULL-terminated, argv[0] included */
	char *const *envp;          /* its environment; NULL: this process's */
	int env_path;               /* look argv[0] up on envp's PATH instead of this process's */
	int fd3;                    /* made its file descriptor 3 when above 0 */
	int out_to_err;             /* its standard output on this process's standard error */
	const sigset_t *mask;       /* the signal mask it starts with; NULL: this process's */
	void (*setup)(void *ctx);   /* called in it before exec (after the above), or NULL */
	void *ctx;
	const char *who;            /* "apply": when exec fails it says "npulaunch: apply: cannot run
				     * ARGV0: REASON"; NULL: it says nothing */
};

/* Start a child (fork and exec; standard output flushed first); its pid, or -1 with errno set
 * when it cannot be forked. A child whose exec fails exits 127. */
pid_t npl_proc_spawn(const struct npl_proc_child *c);
/* Wait for the child pid to end (through EINTR); its wait status, or -1 with errno set. */
int npl_proc_wait(pid_t pid);

/* The path of the program name (in the arena): the first executable regular file among the
 * folders of PATH, then dirs (a JSON array of folders, each under root: NULL, "" or "/" for
 * none; an entry that is not a string is skipped; dirs NULL: none); NULL when there is none. */
const char *npl_proc_find(struct npl_arena *a, const char *name, const cJSON *dirs, const char *root);
/* The program name in the folders of the list path ("a:b", as PATH; empty entries skipped): the
 * first executable regular file, in the arena, or NULL. */
const char *npl_proc_find_in(struct npl_arena *a, const char *name, const char *path);
/* Where npl_proc_find() looks, for messages: "PATH, FOLDER, ..." (in the arena). */
const char *npl_proc_places(struct npl_arena *a, const cJSON *dirs, const char *root);

/* Run path with argv (argv[0] included, NULL-terminated), reading at most max bytes of its
 * output within timeout seconds. Its output (what was read, even on a failure) in *out, in the
 * arena; its exit status (128 + the signal when a signal ended it) in *status, or -1 when it
 * did not exit on its own. */
enum npl_proc_result npl_proc_run(struct npl_arena *arena, const char *path, char *const argv[], double timeout,
				  size_t max, const char **out, int *status);
/* The same with the environment envp (NULL: this process's; LC_ALL is then envp's own). */
enum npl_proc_result npl_proc_run_env(struct npl_arena *arena, const char *path, char *const argv[],
				      char *const envp[], double timeout, size_t max, const char **out, int *status);

#endif
