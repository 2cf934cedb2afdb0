/* output_write.c: the files of a commit written into their staging folders, on every CPU the
 * render may use; see output_internal.h. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npulaunch/arena.h"
#include "npulaunch/output.h"
#include "output_internal.h"

struct puts {
	struct npl_out_put *v;
	const int *runs;        /* where each folder's files start, and n */
	int nruns;
	atomic_int next;        /* the next folder no thread has taken */
	atomic_int bad;         /* the first file that failed so far: none after it is needed */
	atomic_int stop;        /* a signal came: take no more */
	sigset_t held;
	const int *sigs;        /* the held signals */
	int nsigs;
};

static int put_one(struct npl_out_put *p)
{
	int fd = open(p->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0) {
		p->err = errno;
		p->op = NPL_OUT_PUT_CREATE;
		return -1;
	}
	if (npl_out_write_all(fd, p->text, p->len) || fchmod(fd, (mode_t)p->mode)) {
		p->err = errno;
		p->op = NPL_OUT_PUT_WRITE;
		close(fd);
		return -1;
	}
	if (close(fd)) {
		p->err = errno;
		p->op = NPL_OUT_PUT_WRITE;
		return -1;
	}
	return 0;
}

/* 1 when one of the held signals is waiting: the commit's handler is to run before more files
 * appear (it removes the staging folders) */
static int signalled(const struct puts *w)
{
	sigset_t pending;

	if (sigpending(&pending))
		return 0;
	for (int k = 0; k < w->nsigs; k++)
		if (sigismember(&pending, w->sigs[k]) == 1)
			return 1;
	return 0;
}

/* *a = v when v is less */
static void lower(atomic_int *a, int v)
{
	int cur = atomic_load(a);

	while (v < cur && !atomic_compare_exchange_weak(a, &cur, v))
		;
}

/* A failed file stops the files after it, not those before it in another thread's folder:
 * every file before the first that fails is written, so that one is reported whichever
 * thread comes to a failing file first. */
static void *put_some(void *arg)
{
	struct puts *w = arg;
	int r, i, done = 0;

	while (!atomic_load(&w->stop) && (r = atomic_fetch_add(&w->next, 1)) < w->nruns)
		for (i = w->runs[r]; i < w->runs[r + 1] && i < atomic_load(&w->bad); i++, done++) {
			if (atomic_load(&w->stop))
				break;
			/* every few files: a signal that came is handled now, not after the last file */
			if (done % 16 == 0 && signalled(w)) {
				w->v[i].err = EINTR;
				w->v[i].op = NPL_OUT_PUT_CREATE;
				atomic_store(&w->stop, 1);
			} else if (put_one(&w->v[i])) {
				lower(&w->bad, i);
			}
		}
	return NULL;
}

int npl_out_put_all(struct npl_out_put *v, int n, int jobs, const int *sigs, int nsigs)
{
	struct puts w = {.v = v, .sigs = sigs, .nsigs = nsigs};
	pthread_t *threads;
	sigset_t old;
	int k, *started, *runs, i;

	/* the folders' runs of files */
	runs = npl_xcalloc((size_t)n + 1, sizeof(*runs));
	for (i = 0; i < n; i++)
		if (!i || v[i].folder != v[i - 1].folder)
			runs[w.nruns++] = i;
	runs[w.nruns] = n;
	w.runs = runs;
	atomic_init(&w.bad, n);
	sigemptyset(&w.held);
	for (k = 0; k < nsigs; k++)
		sigaddset(&w.held, sigs[k]);
	if (jobs > n / 8)
		jobs = n / 8;
	if (jobs > w.nruns)
		jobs = w.nruns;
	if (jobs < 1)
		jobs = 1;
	threads = npl_xcalloc((size_t)jobs, sizeof(*threads));
	started = npl_xcalloc((size_t)jobs, sizeof(*started));
	/* the threads are made with the signals held too: they inherit this thread's mask */
	pthread_sigmask(SIG_BLOCK, &w.held, &old);
	for (k = 1; k < jobs; k++)
		started[k] = !pthread_create(&threads[k], NULL, put_some, &w);
	put_some(&w);
	for (k = 1; k < jobs; k++)
		if (started[k])
			pthread_join(threads[k], NULL);
	free(threads);
	free(started);
	free(runs);
	pthread_sigmask(SIG_SETMASK, &old, NULL);   /* a signal that came is delivered here */
	/* the first that failed, in their order */
	for (i = 0; i < n; i++)
		if (v[i].err)
			return i;
	return -1;
}
