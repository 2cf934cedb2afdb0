/* test_output.c: atomic output sets (output.h): commit, failure without leftovers, check against
 * the disk; bundles: their records, what is removed, kept and refused, the exchange and its
 * fallback, signals, concurrent commits and the lock; SHA-256 (sha256.h). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "npulaunch/buf.h"
#include "npulaunch/output.h"
#include "npulaunch/sha256.h"
#include "unit.h"

struct fx {
	char dir[512];
	struct npl_outset set;
	struct npl_diag d;
};

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	(void)flag;
	return remove(path);
}

static void rm_rf(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	const char *tmp = getenv("TMPDIR");

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s/npl-output-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	npl_out_release(&f->set);
	npl_diag_release(&f->d);
	rm_rf(f->dir);
	free(f);
	return 0;
}

/* f->dir/rel in a static rotation of buffers, for short calls. */
static const char *at(const struct fx *f, const char *rel)
{
	static char bufs[8][1024];
	static int next;
	char *b = bufs[next++ % 8];

	snprintf(b, sizeof(bufs[0]), "%s/%s", f->dir, rel);
	return b;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	struct npl_buf b = NPL_BUF_INIT;
	char chunk[4096];
	size_t n;

	*len = 0;
	if (!fp)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
		npl_buf_add(&b, chunk, n);
	fclose(fp);
	*len = b.len;
	return npl_buf_detach(&b);
}

static void assert_file(const char *path, const char *text, size_t len, int mode)
{
	struct stat st;
	size_t have_len = 0;
	char *have = slurp(path, &have_len);

	assert_non_null(have);
	assert_int_equal(have_len, len);
	assert_memory_equal(have, text, len);
	free(have);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, mode);
}

static void assert_absent(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == 0)
		fail_msg("'%s' exists", path);
	assert_int_equal(errno, ENOENT);
}

static void write_file(const char *path, const char *text, int mode)
{
	FILE *fp = fopen(path, "wb");

	assert_non_null(fp);
	assert_int_equal(fwrite(text, 1, strlen(text), fp), strlen(text));
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(chmod(path, (mode_t)mode), 0);
}

/* Entries of the tree below dir whose name starts with '.' (temporary files). */
static int count_hidden(const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	char path[2048];
	int n = 0;

	if (!dp)
		return 0;
	while ((de = readdir(dp))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (de->d_name[0] == '.') {
			fprintf(stderr, "left behind: %s\n", path);
			n++;
		}
		if (de->d_type == DT_DIR)
			n += count_hidden(path);
	}
	closedir(dp);
	return n;
}

/* Every entry below dir with its type, mode, size, mtime and content, sorted. */
static void snapshot(const char *dir, struct npl_buf *out)
{
	struct dirent **names;
	char path[2048];
	int n, i;

	n = scandir(dir, &names, NULL, alphasort);
	if (n < 0) {
		npl_buf_printf(out, "%s: none\n", dir);
		return;
	}
	for (i = 0; i < n; i++) {
		struct stat st;

		if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, "..")) {
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
			assert_int_equal(lstat(path, &st), 0);
			npl_buf_printf(out, "%s %o %lld %lld.%09ld\n", path, (unsigned)st.st_mode,
				       (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
			if (S_ISDIR(st.st_mode)) {
				snapshot(path, out);
			} else {
				size_t len = 0;
				char *text = slurp(path, &len);

				assert_non_null(text);
				npl_buf_add(out, text, len);
				npl_buf_putc(out, '\n');
				free(text);
			}
		}
		free(names[i]);
	}
	free(names);
}

/* Run npl_out_check, return its count and what it printed in *text (malloc'ed). */
static int check(const struct npl_outset *s, char **text)
{
	size_t len = 0;
	FILE *fp = open_memstream(text, &len);
	int n;

	assert_non_null(fp);
	n = npl_out_check(s, fp);
	assert_int_equal(fclose(fp), 0);
	return n;
}

static void assert_check(const struct npl_outset *s, int want_n, const char *want_text)
{
	char *text = NULL;
	int n = check(s, &text);

	assert_string_equal(text, want_text);
	assert_int_equal(n, want_n);
	free(text);
}

#define PD_TEXT "#!/usr/bin/env bash\nexec true\n"
#define BENCH_TEXT "#!/usr/bin/env bash\n"

/* The usual bundle: D/pd-mixed.sh (0755), D/bench.sh (0755), D/sub/manifest.json (0644), D owned. */
static void add_bundle(struct fx *f)
{
	npl_out_add(&f->set, at(f, "D/pd-mixed.sh"), PD_TEXT, strlen(PD_TEXT), 0755);
	npl_out_add(&f->set, at(f, "D/bench.sh"), BENCH_TEXT, strlen(BENCH_TEXT), 0755);
	npl_out_add(&f->set, at(f, "D/sub/manifest.json"), "{}\n", 3, 0644);
	npl_out_own_dir(&f->set, at(f, "D"));
}

static void assert_diag_only(const struct npl_diag *d, const char *want)
{
	char *s;

	assert_int_equal(d->n, 1);
	assert_int_equal(d->errors, 1);
	s = npl_diag_format(d, &d->v[0], 0);
	assert_string_equal(s, want);
	free(s);
}

/* ---- the set ---------------------------------------------------------------------- */

static void test_add_copies(void **state)
{
	struct fx *f = *state;
	char path[32] = "a/b.sh", text[8] = "x\0y\nz";

	npl_out_add(&f->set, path, text, 5, 0755);
	strcpy(path, "changed");
	memset(text, '!', sizeof(text));
	assert_int_equal(f->set.n, 1);
	assert_string_equal(f->set.v[0].path, "a/b.sh");
	assert_int_equal(f->set.v[0].len, 5);
	assert_memory_equal(f->set.v[0].text, "x\0y\nz", 5);
	assert_int_equal(f->set.v[0].text[5], '\0');
	assert_int_equal(f->set.v[0].mode, 0755);
	npl_out_own_dir(&f->set, path);
	strcpy(path, "again");
	assert_int_equal(f->set.ndirs, 1);
	assert_string_equal(f->set.dirs[0], "changed");
	npl_out_release(&f->set);
	assert_int_equal(f->set.n, 0);
	assert_int_equal(f->set.ndirs, 0);
	assert_null(f->set.v);
	assert_null(f->set.dirs);
}

static void test_add_many(void **state)
{
	struct fx *f = *state;
	char path[64], text[64];
	int i;

	for (i = 0; i < 100; i++) {
		snprintf(path, sizeof(path), "f%03d", i);
		snprintf(text, sizeof(text), "file %d\n", i);
		npl_out_add(&f->set, path, text, strlen(text), 0644);
	}
	assert_int_equal(f->set.n, 100);
	for (i = 0; i < 100; i++) {
		snprintf(path, sizeof(path), "f%03d", i);
		snprintf(text, sizeof(text), "file %d\n", i);
		assert_string_equal(f->set.v[i].path, path);
		assert_string_equal(f->set.v[i].text, text);
	}
}

/* ---- commit ------------------------------------------------------------------------ */

static void test_commit_writes(void **state)
{
	struct fx *f = *state;
	mode_t old;
	int rc;

	add_bundle(f);
	npl_out_add(&f->set, at(f, "D/a/b/c/binary"), "\0\1\2\xff", 4, 0600);
	npl_out_add(&f->set, at(f, "D/empty"), "", 0, 0644);
	/* the modes are exact, whatever the umask */
	old = umask(0077);
	rc = npl_out_commit(&f->set, &f->d);
	umask(old);
	assert_int_equal(rc, 0);
	assert_int_equal(f->d.n, 0);
	assert_file(at(f, "D/pd-mixed.sh"), PD_TEXT, strlen(PD_TEXT), 0755);
	assert_file(at(f, "D/bench.sh"), BENCH_TEXT, strlen(BENCH_TEXT), 0755);
	assert_file(at(f, "D/sub/manifest.json"), "{}\n", 3, 0644);
	assert_file(at(f, "D/a/b/c/binary"), "\0\1\2\xff", 4, 0600);
	assert_file(at(f, "D/empty"), "", 0, 0644);
	assert_int_equal(count_hidden(f->dir), 0);
	/* and the disk now matches the set */
	assert_check(&f->set, 0, "");
}

static void test_commit_bare_name(void **state)
{
	struct fx *f = *state;
	char cwd[4096];
	int rc;

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(f->dir), 0);
	npl_out_add(&f->set, "plain.txt", "plain\n", 6, 0644);
	rc = npl_out_commit(&f->set, &f->d);
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(rc, 0);
	assert_file(at(f, "plain.txt"), "plain\n", 6, 0644);
	assert_int_equal(count_hidden(f->dir), 0);
}

static void test_commit_empty_set(void **state)
{
	struct fx *f = *state;
	struct npl_buf before = NPL_BUF_INIT, after = NPL_BUF_INIT;

	snapshot(f->dir, &before);
	assert_int_equal(npl_out_commit(&f->set, &f->d), 0);
	assert_int_equal(f->d.n, 0);
	snapshot(f->dir, &after);
	assert_string_equal(npl_buf_str(&after), npl_buf_str(&before));
	npl_buf_release(&before);
	npl_buf_release(&after);
}

static void test_commit_overwrites(void **state)
{
	struct fx *f = *state;

	assert_int_equal(mkdir(at(f, "D"), 0755), 0);
	write_file(at(f, "D/bench.sh"), "an older and much longer bench script\n", 0600);
	write_file(at(f, "D/pd-mixed.sh"), "old", 0644);
	add_bundle(f);
	assert_int_equal(npl_out_commit(&f->set, &f->d), 0);
	assert_int_equal(f->d.n, 0);
	assert_file(at(f, "D/pd-mixed.sh"), PD_TEXT, strlen(PD_TEXT), 0755);
	assert_file(at(f, "D/bench.sh"), BENCH_TEXT, strlen(BENCH_TEXT), 0755);
	assert_file(at(f, "D/sub/manifest.json"), "{}\n", 3, 0644);
	assert_int_equal(count_hidden(f->dir), 0);
	/* twice is the same */
	assert_int_equal(npl_out_commit(&f->set, &f->d), 0);
	assert_file(at(f, "D/bench.sh"), BENCH_TEXT, strlen(BENCH_TEXT), 0755);
	assert_check(&f->set, 0, "");
}

/* A file whose folder is an existing regular file: nothing of the set is written. */
static void test_commit_folder_is_a_file(void **state)
{
	struct fx *f = *state;
	char want[2048];
	int pos;

	assert_int_equal(mkdir(at(f, "D"), 0755), 0);
	write_file(at(f, "D/blocker"), "a file\n", 0644);
	for (pos = 0; pos < 3; pos++) {
		npl_out_release(&f->set);
		npl_diag_release(&f->d);
		if (pos == 0)
			npl_out_add(&f->set, at(f, "D/blocker/x.sh"), "x\n", 2, 0755);
		npl_out_add(&f->set, at(f, "D/one.sh"), "one\n", 4, 0755);
		if (pos == 1)
			npl_out_add(&f->set, at(f, "D/blocker/x.sh"), "x\n", 2, 0755);
		npl_out_add(&f->set, at(f, "D/new/two.json"), "{}\n", 3, 0644);
		if (pos == 2)
			npl_out_add(&f->set, at(f, "D/blocker/x.sh"), "x\n", 2, 0755);
		assert_int_equal(npl_out_commit(&f->set, &f->d), -1);
		snprintf(want, sizeof(want), "error: '%s' exists and is not a directory", at(f, "D/blocker"));
		assert_diag_only(&f->d, want);
		assert_absent(at(f, "D/one.sh"));
		assert_absent(at(f, "D/new/two.json"));
		assert_file(at(f, "D/blocker"), "a file\n", 7, 0644);
		assert_int_equal(count_hidden(f->dir), 0);
	}
}

/* A file whose folder would be below an existing regular file. */
static void test_commit_ancestor_is_a_file(void **state)
{
	struct fx *f = *state;
	char want[2048];

	assert_int_equal(mkdir(at(f, "D"), 0755), 0);
	write_file(at(f, "D/blocker"), "a file\n", 0644);
	npl_out_add(&f->set, at(f, "D/one.sh"), "one\n", 4, 0755);
	npl_out_add(&f->set, at(f, "D/blocker/sub/x.sh"), "x\n", 2, 0755);
	assert_int_equal(npl_out_commit(&f->set, &f->d), -1);
	snprintf(want, sizeof(want), "error: '%s' exists and is not a directory", at(f, "D/blocker"));
	assert_diag_only(&f->d, want);
	assert_absent(at(f, "D/one.sh"));
	assert_int_equal(count_hidden(f->dir), 0);
}

static void test_commit_readonly_folder(void **state)
{
	struct fx *f = *state;
	char want[2048];

	if (geteuid() == 0) {
		/* root writes into a read-only folder anyway: this variant needs an ordinary user */
		skip();
	}
	assert_int_equal(mkdir(at(f, "D"), 0755), 0);
	assert_int_equal(mkdir(at(f, "D/ro"), 0555), 0);
	npl_out_add(&f->set, at(f, "D/one.sh"), "one\n", 4, 0755);
	npl_out_add(&f->set, at(f, "D/ro/two.sh"), "two\n", 4, 0755);
	npl_out_add(&f->set, at(f, "D/three.sh"), "three\n", 6, 0755);
	assert_int_equal(npl_out_commit(&f->set, &f->d), -1);
	snprintf(want, sizeof(want), "error: cannot create a file next to '%s': Permission denied",
		 at(f, "D/ro/two.sh"));
	assert_diag_only(&f->d, want);
	assert_absent(at(f, "D/one.sh"));
	assert_absent(at(f, "D/ro/two.sh"));
	assert_absent(at(f, "D/three.sh"));
	assert_int_equal(count_hidden(f->dir), 0);
}

/* f's set committed with files limited to 4 KiB (RLIMIT_FSIZE; SIGXFSZ ignored, so a larger
 * write fails with EFBIG), the limit and the signal put back after; the commit's result. */
static int commit_small_files(struct fx *f)
{
	struct rlimit old, lim;
	void (*oldsig)(int);
	int rc;

	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 4096;
	oldsig = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	rc = npl_out_commit(&f->set, &f->d);
	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, oldsig);
	return rc;
}

/* A write that fails half-way (the file size limit): nothing is left, as root too. */
static void test_commit_write_error(void **state)
{
	struct fx *f = *state;
	char *big = malloc(65536), want[2048];
	int rc;

	assert_non_null(big);
	memset(big, 'x', 65536);
	npl_out_add(&f->set, at(f, "D/one.sh"), "one\n", 4, 0755);
	npl_out_add(&f->set, at(f, "D/big.json"), big, 65536, 0644);
	npl_out_add(&f->set, at(f, "D/three.sh"), "three\n", 6, 0755);
	free(big);
	rc = commit_small_files(f);
	assert_int_equal(rc, -1);
	snprintf(want, sizeof(want), "error: cannot write '%s': File too large", at(f, "D/big.json"));
	assert_diag_only(&f->d, want);
	assert_absent(at(f, "D/one.sh"));
	assert_absent(at(f, "D/big.json"));
	assert_absent(at(f, "D/three.sh"));
	assert_int_equal(count_hidden(f->dir), 0);
}

/* Written on four threads, the files that fail are reported as in turn: the first in the
 * set's order, whichever thread met it first; nothing is left. */
static void test_commit_write_error_jobs(void **state)
{
	struct fx *f = *state;
	char *big = malloc(65536), want[2048], path[64];
	int rc, i;

	assert_non_null(big);
	memset(big, 'x', 65536);
	for (i = 0; i < 55; i++) {
		snprintf(path, sizeof(path), "B%d/f%02d.sh", i < 5 ? 0 : i < 45 ? 1 : i < 50 ? 2 : 3, i);
		/* two too large for the limit: the last of B1's 40 and the first of B3, which a
		 * thread of its own comes to first (the writers take whole folders) */
		if (i == 44 || i == 50)
			npl_out_add(&f->set, at(f, path), big, 65536, 0644);
		else
			npl_out_add(&f->set, at(f, path), "x\n", 2, 0755);
	}
	free(big);
	f->set.jobs = 4;
	rc = commit_small_files(f);
	assert_int_equal(rc, -1);
	snprintf(want, sizeof(want), "error: cannot write '%s': File too large", at(f, "B1/f44.sh"));
	assert_diag_only(&f->d, want);
	for (i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "B%d", i);
		assert_absent(at(f, path));
	}
	assert_int_equal(count_hidden(f->dir), 0);
}

/*
 * The last file's name is taken by a folder, so its rename fails after the
 * first file's rename succeeded. output.h promises "-1 and nothing written":
 * the first file must not have been replaced.
 */
static void test_commit_rename_error(void **state)
{
	struct fx *f = *state;
	char want[2048];

	assert_int_equal(mkdir(at(f, "D"), 0755), 0);
	assert_int_equal(mkdir(at(f, "D/manifest.json"), 0755), 0);
	write_file(at(f, "D/manifest.json/keep"), "keep\n", 0644);
	write_file(at(f, "D/old.sh"), "the previous render\n", 0755);
	npl_out_add(&f->set, at(f, "D/new.sh"), "new\n", 4, 0755);
	npl_out_add(&f->set, at(f, "D/old.sh"), "the new render\n", 15, 0755);
	npl_out_add(&f->set, at(f, "D/manifest.json"), "{}\n", 3, 0644);
	assert_int_equal(npl_out_commit(&f->set, &f->d), -1);
	snprintf(want, sizeof(want), "error: cannot rename into '%s': Is a directory", at(f, "D/manifest.json"));
	assert_diag_only(&f->d, want);
	assert_int_equal(count_hidden(f->dir), 0);
	assert_file(at(f, "D/manifest.json/keep"), "keep\n", 5, 0644);
	/* no half-written bundle: neither a new file nor a replaced one */
	{
		size_t len;
		char *new_sh = slurp(at(f, "D/new.sh"), &len), *old_sh = slurp(at(f, "D/old.sh"), &len);
		char got[256];

		snprintf(got, sizeof(got), "new.sh: %s, old.sh: %s", new_sh ? new_sh : "(none)\n",
			 old_sh ? old_sh : "(none)\n");
		free(new_sh);
		free(old_sh);
		assert_string_equal(got, "new.sh: (none)\n, old.sh: the previous render\n");
	}
	assert_file(at(f, "D/old.sh"), "the previous render\n", 20, 0755);
}

/* ---- check ------------------------------------------------------------------------- */

static void commit_bundle(struct fx *f)
{
	add_bundle(f);
	assert_int_equal(npl_out_commit(&f->set, &f->d), 0);
}

static void test_check_identical(void **state)
{
	struct fx *f = *state;

	commit_bundle(f);
	assert_check(&f->set, 0, "");
}

static void test_check_stale_content(void **state)
{
	struct fx *f = *state;
	char want[4096];

	commit_bundle(f);
	/* one byte changed, same length */
	write_file(at(f, "D/pd-mixed.sh"), "#!/usr/bin/env bash\nexec tRue\n", 0755);
	snprintf(want, sizeof(want), "stale %s\n", at(f, "D/pd-mixed.sh"));
	assert_check(&f->set, 1, want);
	/* one byte more */
	write_file(at(f, "D/pd-mixed.sh"), "#!/usr/bin/env bash\nexec true\n\n", 0755);
	assert_check(&f->set, 1, want);
	/* one byte less */
	write_file(at(f, "D/pd-mixed.sh"), "#!/usr/bin/env bash\nexec true", 0755);
	assert_check(&f->set, 1, want);
	/* empty */
	write_file(at(f, "D/pd-mixed.sh"), "", 0755);
	assert_check(&f->set, 1, want);
	/* back as it was */
	write_file(at(f, "D/pd-mixed.sh"), PD_TEXT, 0755);
	assert_check(&f->set, 0, "");
}

static void test_check_stale_mode(void **state)
{
	struct fx *f = *state;
	char want[4096];

	commit_bundle(f);
	assert_int_equal(chmod(at(f, "D/bench.sh"), 0644), 0);
	assert_int_equal(chmod(at(f, "D/sub/manifest.json"), 0666), 0);
	snprintf(want, sizeof(want), "stale %s\nstale %s\n", at(f, "D/bench.sh"), at(f, "D/sub/manifest.json"));
	assert_check(&f->set, 2, want);
	assert_int_equal(chmod(at(f, "D/bench.sh"), 0755), 0);
	assert_int_equal(chmod(at(f, "D/sub/manifest.json"), 0644), 0);
	assert_check(&f->set, 0, "");
}

static void test_check_missing(void **state)
{
	struct fx *f = *state;
	char want[4096];

	commit_bundle(f);
	assert_int_equal(unlink(at(f, "D/bench.sh")), 0);
	snprintf(want, sizeof(want), "missing %s\n", at(f, "D/bench.sh"));
	assert_check(&f->set, 1, want);
	assert_absent(at(f, "D/bench.sh"));
}

static void test_check_nothing_on_disk(void **state)
{
	struct fx *f = *state;
	char want[4096];

	add_bundle(f);
	snprintf(want, sizeof(want), "missing %s\nmissing %s\nmissing %s\n", at(f, "D/pd-mixed.sh"),
		 at(f, "D/bench.sh"), at(f, "D/sub/manifest.json"));
	assert_check(&f->set, 3, want);
	/* check creates nothing, not even the folder */
	assert_absent(at(f, "D"));
}

static void test_check_extra_file(void **state)
{
	struct fx *f = *state;
	char want[4096];

	commit_bundle(f);
	write_file(at(f, "D/prefill.sh"), "#!/usr/bin/env bash\n", 0755);
	snprintf(want, sizeof(want), "extra %s\n", at(f, "D/prefill.sh"));
	assert_check(&f->set, 1, want);
	/* a left-over temporary file is an extra file too */
	write_file(at(f, "D/.bench.sh.AbC123"), "", 0600);
	snprintf(want, sizeof(want), "extra %s\nextra %s\n", at(f, "D/.bench.sh.AbC123"), at(f, "D/prefill.sh"));
	assert_check(&f->set, 2, want);
}

static void test_check_extra_in_subfolder(void **state)
{
	struct fx *f = *state;
	char want[4096];

	commit_bundle(f);
	/* D/sub holds a file of the set: what else is in it is extra */
	write_file(at(f, "D/sub/notes.txt"), "notes\n", 0644);
	snprintf(want, sizeof(want), "extra %s\n", at(f, "D/sub/notes.txt"));
	assert_check(&f->set, 1, want);
}

static void test_check_extra_folder(void **state)
{
	struct fx *f = *state;
	char want[4096];

	commit_bundle(f);
	assert_int_equal(mkdir(at(f, "D/old-role"), 0755), 0);
	write_file(at(f, "D/old-role/a.sh"), "a\n", 0755);
	write_file(at(f, "D/old-role/b.sh"), "b\n", 0755);
	assert_int_equal(mkdir(at(f, "D/empty"), 0755), 0);
	/* a folder the set does not write into is one extra line, with a final slash */
	snprintf(want, sizeof(want), "extra %s/\nextra %s/\n", at(f, "D/empty"), at(f, "D/old-role"));
	assert_check(&f->set, 2, want);
}

static void test_check_extra_needs_owned_dir(void **state)
{
	struct fx *f = *state;

	/* without npl_out_own_dir the folder's other files are not the set's business */
	npl_out_add(&f->set, at(f, "D/a.sh"), "a\n", 2, 0755);
	assert_int_equal(npl_out_commit(&f->set, &f->d), 0);
	write_file(at(f, "D/other.sh"), "b\n", 0755);
	assert_check(&f->set, 0, "");
	npl_out_own_dir(&f->set, at(f, "D"));
	{
		char want[4096];

		snprintf(want, sizeof(want), "extra %s\n", at(f, "D/other.sh"));
		assert_check(&f->set, 1, want);
	}
}

static void test_check_everything_at_once(void **state)
{
	struct fx *f = *state;
	char want[8192];

	commit_bundle(f);
	write_file(at(f, "D/pd-mixed.sh"), PD_TEXT, 0700);
	assert_int_equal(unlink(at(f, "D/bench.sh")), 0);
	write_file(at(f, "D/sub/manifest.json"), "{ }\n", 0644);
	write_file(at(f, "D/zz.sh"), "", 0755);
	write_file(at(f, "D/aa.sh"), "", 0755);
	assert_int_equal(mkdir(at(f, "D/sub/deeper"), 0755), 0);
	snprintf(want, sizeof(want),
		 "stale %s\n"
		 "missing %s\n"
		 "stale %s\n"
		 "extra %s\n"
		 "extra %s/\n"
		 "extra %s\n",
		 at(f, "D/pd-mixed.sh"), at(f, "D/bench.sh"), at(f, "D/sub/manifest.json"), at(f, "D/aa.sh"),
		 at(f, "D/sub/deeper"), at(f, "D/zz.sh"));
	assert_check(&f->set, 6, want);
}

static void test_check_writes_nothing(void **state)
{
	struct fx *f = *state;
	struct npl_buf before = NPL_BUF_INIT, after = NPL_BUF_INIT;
	char *text = NULL;

	commit_bundle(f);
	write_file(at(f, "D/pd-mixed.sh"), "changed\n", 0644);
	assert_int_equal(unlink(at(f, "D/bench.sh")), 0);
	write_file(at(f, "D/extra.sh"), "extra\n", 0755);
	assert_int_equal(mkdir(at(f, "D/extra-dir"), 0755), 0);
	snapshot(f->dir, &before);
	assert_int_equal(check(&f->set, &text), 4);
	free(text);
	snapshot(f->dir, &after);
	assert_string_equal(npl_buf_str(&after), npl_buf_str(&before));
	assert_int_equal(count_hidden(f->dir), 0);
	npl_buf_release(&before);
	npl_buf_release(&after);
}

/* ---- SHA-256 ------------------------------------------------------------------------ */

static void test_sha256_vectors(void **state)
{
	static const struct {
		const char *in;
		const char *hex;
	} v[] = {
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
		{"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
		 "mnopqrstnopqrstu",
		 "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
	};
	char hex[65], *a = malloc(1000000);
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(*v); i++) {
		npl_sha256_hex(v[i].in, strlen(v[i].in), hex);
		assert_string_equal(hex, v[i].hex);
	}
	assert_non_null(a);
	memset(a, 'a', 1000000);
	npl_sha256_hex(a, 1000000, hex);
	assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(a);
}

/* ---- bundles ------------------------------------------------------------------------ */

/* A bundle of the scripts names[] in dir ("": bare names; each "NAME TAG\n", mode 0755) and
 * its manifest {"tag": TAG}, in the set. */
static void bundle(struct npl_outset *s, const char *dir, const char *tag, const char *names)
{
	char name[64], path[2048], text[256], json[256];
	const char *p = names;

	while (*p) {
		size_t n = strcspn(p, " ");

		snprintf(name, sizeof(name), "%.*s", (int)n, p);
		snprintf(path, sizeof(path), "%s%s%s", dir, *dir ? "/" : "", name);
		snprintf(text, sizeof(text), "%s %s\n", name, tag);
		npl_out_add(s, path, text, strlen(text), 0755);
		p += n + (p[n] == ' ');
	}
	snprintf(json, sizeof(json), "{\n\t\"tag\":\t\"%s\"\n}\n", tag);
	npl_out_add_manifest(s, dir, "manifest.json", json);
	npl_out_own_dir(s, dir);
}

/* Commit a bundle into dir in a set of its own. */
static void commit_tagged(struct fx *f, const char *dir, const char *tag, const char *names)
{
	struct npl_outset s = {0};
	struct npl_diag d = NPL_DIAG_INIT;

	bundle(&s, dir, tag, names);
	if (npl_out_commit(&s, &d))
		fail_msg("commit of %s into %s: %s", tag, dir, npl_test_msg(&d, 0));
	(void)f;
	npl_out_release(&s);
	npl_diag_release(&d);
}

/* The names in dir, sorted, on one line. */
/* Set while a SIGKILL's outcome is looked at: a marker the killed run left in a bundle's folder
 * (between marking and its swap) is the next commit's to remove (count_staging counts it), and
 * listing() leaves it out. */
static int marker_ok;
/* Set while the bundles a killed commit staged in are looked at: its staging folder is left out. */
static int stage_ok;

static char *listing(const char *dir)
{
	struct dirent **names;
	struct npl_buf b = NPL_BUF_INIT;
	int n = scandir(dir, &names, NULL, alphasort), i;

	for (i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, "..") &&
		    !(marker_ok && !strcmp(names[i]->d_name, ".npulaunch-stage")) &&
		    !(stage_ok && !strncmp(names[i]->d_name, ".npulaunch-tmp-", 15)))
			npl_buf_printf(&b, "%s%s", b.len ? " " : "", names[i]->d_name);
		free(names[i]);
	}
	if (n >= 0)
		free(names);
	else
		npl_buf_puts(&b, "(none)");
	return npl_buf_detach(&b);
}

static void assert_listing(const char *dir, const char *want)
{
	char *have = listing(dir);

	assert_string_equal(have, want);
	free(have);
}

/*
 * The tag of the bundle in dir when it is whole: every file it records is there with the recorded
 * sha256 and the manifest's own digest holds, no other file but those in extras (a space
 * separated list); else fail. Returned in a static buffer.
 */
static const char *whole(const char *dir, const char *extras)
{
	static char tag[64];
	char path[2048], hex[65], *text, *names, *have = listing(dir);
	size_t len;
	cJSON *m, *e, *files;
	struct npl_buf want = NPL_BUF_INIT;
	char *zeros;

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	text = slurp(path, &len);
	assert_non_null(text);
	m = cJSON_Parse(text);
	assert_non_null(m);
	files = cJSON_GetObjectItemCaseSensitive(m, "files");
	assert_true(cJSON_IsObject(files));
	/* the names: the record's and the extras, sorted as scandir sorts them */
	{
		char *v[64];
		int n = 0, i, j;
		char *ex = strdup(extras), *tok, *save = NULL;

		cJSON_ArrayForEach(e, files) v[n++] = e->string;
		for (tok = strtok_r(ex, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
			v[n++] = tok;
		for (i = 1; i < n; i++)
			for (j = i; j > 0 && strcoll(v[j - 1], v[j]) > 0; j--) {
				char *t = v[j];

				v[j] = v[j - 1];
				v[j - 1] = t;
			}
		for (i = 0; i < n; i++)
			npl_buf_printf(&want, "%s%s", i ? " " : "", v[i]);
		names = npl_buf_detach(&want);
		if (strcmp(have, names))
			fail_msg("%s holds [%s], its record and the extras [%s]", dir, have, names);
		free(ex);
		free(names);
	}
	cJSON_ArrayForEach(e, files) {
		const char *rec = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "sha256"));
		char *body;
		size_t blen;

		assert_non_null(rec);
		if (!strcmp(e->string, "manifest.json")) {
			/* its own digest: with 64 zeros in its place */
			zeros = strstr(text, rec);
			assert_non_null(zeros);
			memset(zeros, '0', 64);
			npl_sha256_hex(text, len, hex);
			memcpy(zeros, rec, 64);
		} else {
			snprintf(path, sizeof(path), "%s/%s", dir, e->string);
			body = slurp(path, &blen);
			assert_non_null(body);
			npl_sha256_hex(body, blen, hex);
			free(body);
		}
		if (strcmp(hex, rec))
			fail_msg("%s/%s: sha256 %s, recorded %s", dir, e->string, hex, rec);
	}
	snprintf(tag, sizeof(tag), "%s", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "tag")));
	cJSON_Delete(m);
	free(text);
	free(have);
	return tag;
}

/* Entries named .npulaunch-tmp-* or .npulaunch-stage below dir (the tree). */
static int count_staging(const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	char path[2048];
	int n = 0;

	if (!dp)
		return 0;
	while ((de = readdir(dp))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (!strncmp(de->d_name, ".npulaunch-tmp-", 15) || !strcmp(de->d_name, ".npulaunch-stage")) {
			fprintf(stderr, "left behind: %s\n", path);
			n++;
		} else if (de->d_type == DT_DIR) {
			n += count_staging(path);
		}
	}
	closedir(dp);
	return n;
}

static ino_t inode_of(const char *path)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	return st.st_ino;
}

/* Sets filled apart and merged in order are the set filled in turn (render --all's workers):
 * the files, their texts and modes, the manifests' records, the bundles and folders; a merge
 * that would differ (a manifest of the later set would have recorded an earlier file) is
 * refused and moves nothing. */
static void add_part(struct npl_outset *s, int part)
{
	char path[64], text[64];

	snprintf(path, sizeof(path), "R%d/a.sh", part);
	snprintf(text, sizeof(text), "echo %d\n", part);
	npl_out_add(s, path, text, strlen(text), 0755);
	snprintf(path, sizeof(path), "R%d", part);
	npl_out_add_manifest(s, path, "manifest.json", "{\n\t\"part\":\t1\n}\n");
	npl_out_run_output(s, path, "*.log");
}

static void test_merge(void **state)
{
	struct npl_outset one = {0}, parts[3] = {{0}}, shared = {0};
	struct npl_arena texts;
	int i;

	(void)state;
	npl_arena_init(&texts);
	for (i = 0; i < 3; i++)
		add_part(&one, i);
	npl_out_own_dir(&one, "out");
	for (i = 0; i < 3; i++) {
		parts[i].text_arena = i == 2 ? &texts : NULL;   /* a worker's texts kept apart */
		add_part(&parts[i], i);
	}
	npl_out_own_dir(&parts[2], "out");
	for (i = 1; i < 3; i++)
		assert_int_equal(npl_out_merge(&parts[0], &parts[i]), 0);
	npl_arena_take(&parts[0].texts, &texts);
	assert_int_equal(parts[1].n + parts[2].n, 0);
	assert_int_equal(parts[0].n, one.n);
	for (i = 0; i < one.n; i++) {
		assert_string_equal(parts[0].v[i].path, one.v[i].path);
		assert_int_equal(parts[0].v[i].len, one.v[i].len);
		assert_memory_equal(parts[0].v[i].text, one.v[i].text, one.v[i].len);
		assert_int_equal(parts[0].v[i].mode, one.v[i].mode);
	}
	assert_int_equal(parts[0].nbundles, 3);
	assert_string_equal(parts[0].bundles[2].dir, "R2");
	assert_int_equal(parts[0].nruns, one.nruns);
	assert_string_equal(parts[0].runs[4], "R2");
	assert_int_equal(parts[0].ndirs, 1);
	assert_int_equal(parts[0].npending, 0);
	/* a file no manifest recorded yet, and a later set's manifest of its folder: refused */
	npl_out_add(&shared, "R9/loose", "x", 1, 0644);
	add_part(&parts[1], 9);
	assert_int_equal(npl_out_merge(&shared, &parts[1]), -1);
	assert_int_equal(shared.n, 1);
	assert_int_equal(parts[1].n, 2);
	/* in another folder it is left for a later manifest, as in turn */
	npl_out_release(&parts[1]);
	add_part(&parts[1], 8);
	assert_int_equal(npl_out_merge(&shared, &parts[1]), 0);
	assert_int_equal(shared.n, 3);
	assert_int_equal(shared.npending, 1);
	assert_string_equal(shared.v[shared.pending[0]].path, "R9/loose");
	npl_out_release(&shared);
	for (i = 0; i < 3; i++)
		npl_out_release(&parts[i]);
	npl_out_release(&one);
}

/* The manifest's record: what npl_out_add_manifest appends, with each file's digest. */
static void test_manifest_record(void **state)
{
	struct fx *f = *state;
	const char *text;
	char hex[65], *copy;
	cJSON *m, *files;

	npl_out_add(&f->set, "D/a.sh", "abc", 3, 0755);
	npl_out_add(&f->set, "D/sub/x", "not in D", 8, 0644);
	npl_out_add(&f->set, "E/b.sh", "", 0, 0755);
	npl_out_add_manifest(&f->set, "D", "manifest.json", "{\n\t\"format\":\t\"x\",\n\t\"n\":\t[1, 2]\n}\n");
	npl_out_add_manifest(&f->set, "E", "m.json", "{\n}");
	npl_out_add_manifest(&f->set, "", "top.json", "{\"k\": 1}");
	assert_int_equal(f->set.n, 6);
	assert_int_equal(f->set.nbundles, 3);
	assert_string_equal(f->set.v[3].path, "D/manifest.json");
	text = f->set.v[3].text;
	/* the text given, then the record, in cJSON's layout */
	copy = strdup(text);
	assert_non_null(copy);
	m = cJSON_Parse(text);
	assert_non_null(m);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "format")), "x");
	files = cJSON_GetObjectItemCaseSensitive(m, "files");
	assert_int_equal(cJSON_GetArraySize(files), 2);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
				    cJSON_GetObjectItemCaseSensitive(files, "a.sh"), "sha256")),
			    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	{
		const char *self = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(files, "manifest.json"), "sha256"));
		char *at = strstr(copy, self);

		assert_non_null(at);
		memset(at, '0', 64);
		npl_sha256_hex(copy, strlen(copy), hex);
		assert_string_equal(hex, self);
	}
	{
		char want[1024];

		snprintf(want, sizeof(want),
			 "{\n\t\"format\":\t\"x\",\n\t\"n\":\t[1, 2],\n\t\"files\":\t{\n"
			 "\t\t\"a.sh\":\t{\n\t\t\t\"sha256\":\t\"%s\"\n\t\t},\n"
			 "\t\t\"manifest.json\":\t{\n\t\t\t\"sha256\":\t\"%s\"\n\t\t}\n\t}\n}\n",
			 "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", hex);
		assert_string_equal(text, want);
	}
	cJSON_Delete(m);
	free(copy);
	/* an empty object, and bare names */
	m = cJSON_Parse(f->set.v[4].text);
	assert_non_null(m);
	assert_int_equal(cJSON_GetArraySize(m), 1);
	assert_non_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "files"), "b.sh"));
	cJSON_Delete(m);
	assert_string_equal(f->set.v[5].path, "top.json");
	m = cJSON_Parse(f->set.v[5].text);
	assert_non_null(m);
	files = cJSON_GetObjectItemCaseSensitive(m, "files");
	assert_int_equal(cJSON_GetArraySize(files), 1);
	assert_non_null(cJSON_GetObjectItemCaseSensitive(files, "top.json"));
	cJSON_Delete(m);
}

/* A new bundle folder appears whole; another recipe's bundle replaces it, its extra file gone. */
static void test_bundle_replaced(void **state)
{
	struct fx *f = *state;

	commit_tagged(f, at(f, "out/B"), "one", "pd-mixed.sh bench.sh");
	assert_string_equal(whole(at(f, "out/B"), ""), "one");
	assert_listing(at(f, "out/B"), "bench.sh manifest.json pd-mixed.sh");
	commit_tagged(f, at(f, "out/B"), "two", "prefill.sh decode.sh router.sh bench.sh");
	assert_string_equal(whole(at(f, "out/B"), ""), "two");
	assert_listing(at(f, "out/B"), "bench.sh decode.sh manifest.json prefill.sh router.sh");
	assert_int_equal(count_staging(f->dir), 0);
	/* check agrees */
	bundle(&f->set, at(f, "out/B"), "two", "prefill.sh decode.sh router.sh bench.sh");
	assert_check(&f->set, 0, "");
}

/* A folder of nothing but the bundle is exchanged whole (a new inode) and keeps its mode;
 * a folder with the user's files in it is updated in place, their files kept. */
static void test_bundle_exchange_or_in_place(void **state)
{
	struct fx *f = *state;
	ino_t before;

	commit_tagged(f, at(f, "B"), "one", "pd-mixed.sh bench.sh");
	assert_int_equal(chmod(at(f, "B"), 0750), 0);
	before = inode_of(at(f, "B"));
	commit_tagged(f, at(f, "B"), "two", "prefill.sh bench.sh");
	assert_string_equal(whole(at(f, "B"), ""), "two");
	assert_true(inode_of(at(f, "B")) != before);
	{
		struct stat st;

		assert_int_equal(stat(at(f, "B"), &st), 0);
		assert_int_equal(st.st_mode & 07777, 0750);
	}
	/* the user's file, and folder */
	write_file(at(f, "B/notes.txt"), "mine\n", 0600);
	assert_int_equal(mkdir(at(f, "B/mine"), 0700), 0);
	write_file(at(f, "B/mine/x"), "x\n", 0600);
	before = inode_of(at(f, "B"));
	commit_tagged(f, at(f, "B"), "three", "pd-mixed.sh bench.sh");
	assert_string_equal(whole(at(f, "B"), "mine notes.txt"), "three");
	assert_true(inode_of(at(f, "B")) == before);
	assert_file(at(f, "B/notes.txt"), "mine\n", 5, 0600);
	assert_file(at(f, "B/mine/x"), "x\n", 2, 0600);
	assert_int_equal(count_staging(f->dir), 0);
}

/* A changed script is refused, named, and nothing moves; --force overwrites it. */
static void test_bundle_edited_refused(void **state)
{
	struct fx *f = *state;
	struct npl_buf before = NPL_BUF_INIT, after = NPL_BUF_INIT;
	char want[2048];

	commit_tagged(f, at(f, "B"), "one", "pd-mixed.sh bench.sh");
	write_file(at(f, "B/pd-mixed.sh"), "pd-mixed.sh one\n# mine\n", 0755);
	write_file(at(f, "B/bench.sh"), "bench.sh one?\n", 0755);
	snapshot(f->dir, &before);
	bundle(&f->set, at(f, "B"), "two", "pd-mixed.sh bench.sh");
	assert_int_equal(npl_out_commit(&f->set, &f->d), -1);
	assert_int_equal(f->d.errors, 2);
	snprintf(want, sizeof(want), "%s: error: changed since npulaunch rendered it: render with --force to overwrite it",
		 at(f, "B/pd-mixed.sh"));
	assert_string_equal(npl_test_msg(&f->d, 0), want);
	snprintf(want, sizeof(want), "%s: error: changed since npulaunch rendered it: render with --force to overwrite it",
		 at(f, "B/bench.sh"));
	assert_string_equal(npl_test_msg(&f->d, 1), want);
	snapshot(f->dir, &after);
	assert_string_equal(npl_buf_str(&after), npl_buf_str(&before));
	/* check names them edited */
	snprintf(want, sizeof(want), "edited %s\nedited %s\nstale %s\n", at(f, "B/pd-mixed.sh"), at(f, "B/bench.sh"),
		 at(f, "B/manifest.json"));
	assert_check(&f->set, 3, want);
	f->set.force = 1;
	npl_diag_release(&f->d);
	assert_int_equal(npl_out_commit(&f->set, &f->d), 0);
	assert_int_equal(f->d.n, 0);
	assert_string_equal(whole(at(f, "B"), ""), "two");
	assert_check(&f->set, 0, "");
	npl_buf_release(&before);
	npl_buf_release(&after);
}

/* The earlier bundle's file that the new one lacks: removed when as recorded; kept (a warning)
 * when changed, even with --force. */
static void test_bundle_gone_files(void **state)
{
	struct fx *f = *state;
	char want[2048];

	commit_tagged(f, at(f, "B"), "one", "a.sh b.sh c.sh");
	write_file(at(f, "B/b.sh"), "b.sh one, edited\n", 0755);
	assert_int_equal(chmod(at(f, "B/c.sh"), 0700), 0); /* a mode is no edit */
	bundle(&f->set, at(f, "B"), "two", "a.sh");
	f->set.force = 1;
	assert_int_equal(npl_out_commit(&f->set, &f->d), 0);
	assert_int_equal(f->d.n, 1);
	assert_int_equal(f->d.errors, 0);
	snprintf(want, sizeof(want), "%s: warning: kept: changed since npulaunch rendered it, and the new bundle has no such file",
		 at(f, "B/b.sh"));
	assert_string_equal(npl_test_msg(&f->d, 0), want);
	assert_string_equal(whole(at(f, "B"), "b.sh"), "two");
	assert_file(at(f, "B/b.sh"), "b.sh one, edited\n", 17, 0755);
	assert_absent(at(f, "B/c.sh"));
	snprintf(want, sizeof(want), "extra %s\n", at(f, "B/b.sh"));
	assert_check(&f->set, 1, want);
}

/* Files not written by npulaunch at the bundle's names: refused unless the bytes are the new
 * ones already; nothing else of the folder is touched. */
static void test_bundle_not_ours(void **state)
{
	struct fx *f = *state;
	char want[2048];

	assert_int_equal(mkdir(at(f, "B"), 0755), 0);
	write_file(at(f, "B/a.sh"), "a.sh one\n", 0644); /* as rendered, by chance */
	write_file(at(f, "B/b.sh"), "my own b\n", 0755);
	write_file(at(f, "B/manifest.json"), "{\"format\": \"not a bundle\"}\n", 0644);
	bundle(&f->set, at(f, "B"), "one", "a.sh b.sh");
	assert_int_equal(npl_out_commit(&f->set, &f->d), -1);
	assert_int_equal(f->d.errors, 2);
	snprintf(want, sizeof(want), "%s: error: not written by npulaunch: render with --force to overwrite it",
		 at(f, "B/b.sh"));
	assert_string_equal(npl_test_msg(&f->d, 0), want);
	snprintf(want, sizeof(want), "%s: error: not written by npulaunch: render with --force to overwrite it",
		 at(f, "B/manifest.json"));
	assert_string_equal(npl_test_msg(&f->d, 1), want);
	assert_file(at(f, "B/b.sh"), "my own b\n", 9, 0755);
	snprintf(want, sizeof(want), "stale %s\nedited %s\nedited %s\n", at(f, "B/a.sh"), at(f, "B/b.sh"),
		 at(f, "B/manifest.json"));
	assert_check(&f->set, 3, want);
}

/* A record is only believed while the manifest holds its own digest; even then it can only
 * remove files in the bundle's folder whose bytes it names. */
static void test_bundle_record_tampered(void **state)
{
	struct fx *f = *state;
	struct npl_buf b = NPL_BUF_INIT;
	char hex[65], *text;
	size_t len, self;

	commit_tagged(f, at(f, "out/B"), "one", "a.sh");
	write_file(at(f, "out/victim"), "victim\n", 0644);
	write_file(at(f, "out/B/mine"), "mine\n", 0644);
	/* a record naming ../victim and mine with their digests, and a true own digest */
	npl_sha256_hex("victim\n", 7, hex);
	npl_buf_printf(&b, "{\n\t\"files\":\t{\n\t\t\"../victim\":\t{\n\t\t\t\"sha256\":\t\"%s\"\n\t\t},", hex);
	npl_sha256_hex("mine\n", 5, hex);
	npl_buf_printf(&b, "\n\t\t\"mine/\":\t{\n\t\t\t\"sha256\":\t\"%s\"\n\t\t},", hex);
	npl_buf_printf(&b, "\n\t\t\"mine\":\t{\n\t\t\t\"sha256\":\t\"%.63s1\"\n\t\t},", hex);
	npl_buf_puts(&b, "\n\t\t\"manifest.json\":\t{\n\t\t\t\"sha256\":\t\"");
	self = b.len;
	npl_buf_puts(&b, "0000000000000000000000000000000000000000000000000000000000000000\"\n\t\t}\n\t}\n}\n");
	text = npl_buf_detach(&b);
	len = strlen(text);
	npl_sha256_hex(text, len, hex);
	memcpy(text + self, hex, 64);
	write_file(at(f, "out/B/manifest.json"), text, 0644);
	free(text);
	commit_tagged(f, at(f, "out/B"), "two", "b.sh");
	assert_file(at(f, "out/victim"), "victim\n", 7, 0644);
	assert_file(at(f, "out/B/mine"), "mine\n", 5, 0644);
	/* a.sh is no longer recorded: the user's now */
	assert_string_equal(whole(at(f, "out/B"), "a.sh mine"), "two");
	/* a record the manifest's digest does not vouch for removes nothing */
	write_file(at(f, "out/B/a.sh"), "a.sh one\n", 0755);
	commit_tagged(f, at(f, "out/B"), "one", "a.sh");
	assert_int_equal(unlink(at(f, "out/B/mine")), 0);
	{
		char *m = slurp(at(f, "out/B/manifest.json"), &len);

		assert_non_null(m);
		m[2] = ' '; /* "{\n\t" -> "{\n " : a change of layout is a change */
		write_file(at(f, "out/B/manifest.json"), m, 0644);
		free(m);
	}
	bundle(&f->set, at(f, "out/B"), "two", "b.sh");
	f->set.force = 1;
	assert_int_equal(npl_out_commit(&f->set, &f->d), 0);
	assert_string_equal(whole(at(f, "out/B"), "a.sh"), "two");
}

/* What a killed run left is removed, when it proves itself its own (the marker); what merely
 * looks like it (an older npulaunch's unmarked temporaries, the user's dot files, a staging name
 * without the marker or with a marker of other text) is kept. */
static void test_bundle_leftovers(void **state)
{
	static const char mark[] = "npulaunch: a render's staging folder; the next render into this folder removes it\n";
	struct fx *f = *state;

	commit_tagged(f, at(f, "out/B"), "one", "a.sh");
	assert_int_equal(mkdir(at(f, "out/.npulaunch-tmp-1-0"), 0700), 0);
	write_file(at(f, "out/.npulaunch-tmp-1-0/.npulaunch-stage"), mark, 0600);
	write_file(at(f, "out/.npulaunch-tmp-1-0/a.sh"), "x", 0600);
	assert_int_equal(mkdir(at(f, "out/.npulaunch-tmp-1-2"), 0700), 0); /* killed before its marker */
	assert_int_equal(mkdir(at(f, "out/.npulaunch-tmp-1-3"), 0700), 0); /* the start of a marker */
	write_file(at(f, "out/.npulaunch-tmp-1-3/.npulaunch-stage"), "npulaunch: a ren", 0600);
	assert_int_equal(mkdir(at(f, "out/.npulaunch-tmp-x"), 0700), 0); /* empty, another name */
	assert_int_equal(mkdir(at(f, "out/B/.npulaunch-tmp-1-1"), 0700), 0);
	write_file(at(f, "out/B/.npulaunch-tmp-1-1/.npulaunch-stage"), mark, 0600);
	assert_int_equal(mkdir(at(f, "out/B/.npulaunch-tmp-1-1/.old"), 0700), 0);
	write_file(at(f, "out/B/.npulaunch-tmp-1-1/.old/a.sh"), "x", 0600);
	write_file(at(f, "out/B/.npulaunch-stage"), mark, 0600); /* killed in its swap */
	/* the user's */
	write_file(at(f, "out/B/.a.sh.Ab12Cd"), "x", 0600);
	write_file(at(f, "out/B/.a.sh.backup"), "x", 0600);
	write_file(at(f, "out/B/.hidden"), "mine", 0600);
	assert_int_equal(mkdir(at(f, "out/.npulaunch-tmp-9-9"), 0700), 0);
	write_file(at(f, "out/.npulaunch-tmp-9-9/notes"), "mine", 0600);
	assert_int_equal(mkdir(at(f, "out/.npulaunch-tmp-9-8"), 0700), 0);
	write_file(at(f, "out/.npulaunch-tmp-9-8/.npulaunch-stage"), "mine\n", 0600);
	write_file(at(f, "out/.npulaunch-tmp"), "mine", 0600);
	commit_tagged(f, at(f, "out/B"), "two", "a.sh b.sh");
	assert_string_equal(whole(at(f, "out/B"), ".a.sh.Ab12Cd .a.sh.backup .hidden"), "two");
	assert_listing(at(f, "out"), ".npulaunch-tmp .npulaunch-tmp-1-3 .npulaunch-tmp-9-8 .npulaunch-tmp-9-9 .npulaunch-tmp-x B");
}

/* A failure while the bundles go in puts back every one already in: the exchanged ones, and
 * those updated file by file with the files they replaced and removed. */
static void test_bundles_all_or_none(void **state)
{
	struct fx *f = *state;
	char want[2048];
	ino_t before;

	commit_tagged(f, at(f, "out/A"), "one", "a.sh");
	commit_tagged(f, at(f, "out/B"), "one", "a.sh old.sh");
	commit_tagged(f, at(f, "out/C"), "one", "a.sh");
	write_file(at(f, "out/B/notes"), "mine\n", 0644);
	assert_int_equal(mkdir(at(f, "out/C/z.sh"), 0755), 0);
	before = inode_of(at(f, "out/A"));
	bundle(&f->set, at(f, "out/A"), "two", "a.sh");
	bundle(&f->set, at(f, "out/B"), "two", "a.sh new.sh");
	bundle(&f->set, at(f, "out/C"), "two", "a.sh z.sh");
	bundle(&f->set, at(f, "out/D"), "two", "a.sh");
	assert_int_equal(npl_out_commit(&f->set, &f->d), -1);
	snprintf(want, sizeof(want), "error: cannot rename into '%s': Is a directory", at(f, "out/C/z.sh"));
	assert_diag_only(&f->d, want);
	assert_string_equal(whole(at(f, "out/A"), ""), "one");
	assert_true(inode_of(at(f, "out/A")) == before);
	assert_string_equal(whole(at(f, "out/B"), "notes"), "one");
	assert_string_equal(whole(at(f, "out/C"), "z.sh"), "one");
	assert_absent(at(f, "out/D"));
	assert_int_equal(count_staging(f->dir), 0);
	assert_int_equal(count_hidden(at(f, "out")), 0);
}

/* seccomp: renameat2 with RENAME_EXCHANGE fails with EINVAL, as on a file system without it. */
static void deny_exchange(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_renameat2, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[4])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 2 /* RENAME_EXCHANGE */, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(filter) / sizeof(*filter), filter};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		_exit(3);
}

/* Without the exchange the bundle is updated file by file from its staging folder, as whole. */
static void test_bundle_no_exchange(void **state)
{
	struct fx *f = *state;
	ino_t before;
	pid_t pid;
	int status;

	commit_tagged(f, at(f, "B"), "one", "pd-mixed.sh bench.sh");
	before = inode_of(at(f, "B"));
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct npl_outset s = {0};
		struct npl_diag d = NPL_DIAG_INIT;

		deny_exchange();
		/* the filter works: an exchange fails as it would */
		if (syscall(SYS_renameat2, AT_FDCWD, at(f, "B"), AT_FDCWD, f->dir, 2) == 0 || errno != EINVAL)
			_exit(4);
		bundle(&s, at(f, "B"), "two", "prefill.sh bench.sh");
		_exit(npl_out_commit(&s, &d) ? 1 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_string_equal(whole(at(f, "B"), ""), "two");
	assert_true(inode_of(at(f, "B")) == before);
	assert_int_equal(count_staging(f->dir), 0);
}

/* The current folder, a symlink to a folder: updated in place, the link kept. */
static void test_bundle_cwd_and_symlink(void **state)
{
	struct fx *f = *state;
	char cwd[4096];

	assert_int_equal(mkdir(at(f, "real"), 0755), 0);
	assert_int_equal(symlink("real", at(f, "link")), 0);
	commit_tagged(f, at(f, "link"), "one", "a.sh");
	commit_tagged(f, at(f, "link"), "two", "b.sh");
	assert_string_equal(whole(at(f, "real"), ""), "two");
	{
		struct stat st;

		assert_int_equal(lstat(at(f, "link"), &st), 0);
		assert_true(S_ISLNK(st.st_mode));
	}
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(at(f, "real")), 0);
	{
		struct npl_outset s = {0};
		struct npl_diag d = NPL_DIAG_INIT;
		int rc;

		bundle(&s, "", "three", "c.sh");
		rc = npl_out_commit(&s, &d);
		npl_out_release(&s);
		npl_diag_release(&d);
		assert_int_equal(rc, 0);
	}
	commit_tagged(f, at(f, "real"), "four", "d.sh"); /* the current folder by its name */
	assert_int_equal(chdir(cwd), 0);
	assert_string_equal(whole(at(f, "real"), ""), "four");
	assert_int_equal(count_staging(f->dir), 0);
}

/* A bundle folder that is a bind mount (same device as its parent, but no rename): in place. */
static void test_bundle_bind_mount(void **state)
{
	struct fx *f = *state;
	int status;
	pid_t pid;

	if (geteuid() != 0)
		skip(); /* a mount namespace needs root */
	assert_int_equal(mkdir(at(f, "src"), 0755), 0);
	assert_int_equal(mkdir(at(f, "out"), 0755), 0);
	assert_int_equal(mkdir(at(f, "out/B"), 0755), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct npl_outset s = {0}, t = {0};
		struct npl_diag d = NPL_DIAG_INIT;

		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount(at(f, "src"), at(f, "out/B"), NULL, MS_BIND, NULL))
			_exit(3);
		bundle(&s, at(f, "out/B"), "one", "a.sh");
		bundle(&t, at(f, "out/B"), "two", "b.sh");
		_exit(npl_out_commit(&s, &d) || npl_out_commit(&t, &d) ? 1 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 3)
		skip(); /* no mount namespaces here (a container without CAP_SYS_ADMIN) */
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_string_equal(whole(at(f, "src"), ""), "two");
	assert_int_equal(count_staging(f->dir), 0);
}

/* ---- signals, concurrent commits, the lock ----------------------------------------------- */

#define NB 24
#define BIG 32768

/* NB bundles below dir, each with a big script, tagged: a commit that takes a while. */
static void many(struct npl_outset *s, const char *dir, const char *tag)
{
	static char *big;
	char path[2048], json[128];
	int i;

	if (!big) {
		big = malloc(BIG);
		assert_non_null(big);
	}
	for (i = 0; i < NB; i++) {
		snprintf(path, sizeof(path), "%s/r%02d/big.sh", dir, i);
		memset(big, tag[0], BIG);
		npl_out_add(s, path, big, BIG, 0755);
		snprintf(path, sizeof(path), "%s/r%02d/%s.sh", dir, i, tag);
		npl_out_add(s, path, tag, strlen(tag), 0755);
		snprintf(path, sizeof(path), "%s/r%02d", dir, i);
		snprintf(json, sizeof(json), "{\n\t\"tag\":\t\"%s\"\n}\n", tag);
		npl_out_add_manifest(s, path, "manifest.json", json);
	}
}

/* Set: the children of commit_child() cannot exchange a folder (a file system without it). */
static int child_no_exchange;
/* The children's sets write their files on this many threads (npl_outset.jobs). */
static int child_jobs;

/* Fork a commit of many(dir, tag); its pid. */
static pid_t commit_child(const char *dir, const char *tag)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct npl_outset s = {0};
		struct npl_diag d = NPL_DIAG_INIT;

		if (child_no_exchange)
			deny_exchange();
		many(&s, dir, tag);
		s.jobs = child_jobs;
		_exit(npl_out_commit(&s, &d) ? 1 : 0);
	}
	return pid;
}

/* Every bundle below dir whole; the tag they share, or "mixed". */
static const char *all_whole_with(const char *dir, const char *extras)
{
	static char tag[64];
	char path[2048];
	int i;

	for (i = 0; i < NB; i++) {
		const char *t;

		snprintf(path, sizeof(path), "%s/r%02d", dir, i);
		t = whole(path, extras);
		if (i == 0)
			snprintf(tag, sizeof(tag), "%s", t);
		else if (strcmp(tag, t))
			snprintf(tag, sizeof(tag), "mixed");
	}
	return tag;
}

static const char *all_whole(const char *dir)
{
	return all_whole_with(dir, "");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A signal at any moment of a commit leaves every bundle wholly old or wholly new (all of them
 * the same, but for SIGKILL) and, but for SIGKILL, no staging folder; the next commit removes
 * what SIGKILL left. */
static void test_signals(void **state)
{
	struct fx *f = *state;
	static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGKILL};
	char dir[1024];
	double t0, dur;
	int run, status, killed = 0, finished = 0, landed = 0;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s", at(f, "out"));
	pid = commit_child(dir, "z");
	assert_int_equal(waitpid(pid, &status, 0), pid);
	/* the time a commit over an earlier one takes, from fork to exit */
	t0 = now();
	pid = commit_child(dir, "y");
	assert_int_equal(waitpid(pid, &status, 0), pid);
	dur = now() - t0;
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	for (run = 0; run < 24; run++) {
		int sig = sigs[run % 4];
		char tag[8];
		const char *got;
		struct timespec ts;
		double delay = dur * 1.3 * run / 24;

		/* a new tag each run: other bytes in big.sh every other run, another script each run */
		snprintf(tag, sizeof(tag), "%c%02d", "ab"[run % 2], run);
		pid = commit_child(dir, tag);
		ts.tv_sec = (time_t)delay;
		ts.tv_nsec = (long)((delay - (double)ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);
		kill(pid, sig);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		marker_ok = sig == SIGKILL;
		got = all_whole(dir);
		marker_ok = 0;
		if (WIFSIGNALED(status)) {
			assert_int_equal(WTERMSIG(status), sig);
			killed++;
			/* it died after the swap: the signal waited for it */
			landed += !strcmp(got, tag);
		} else {
			assert_int_equal(WEXITSTATUS(status), 0);
			finished++;
		}
		if (sig != SIGKILL) {
			assert_string_not_equal(got, "mixed");
			assert_int_equal(count_staging(f->dir), 0);
		}
		if (WIFEXITED(status))
			assert_string_equal(got, tag);
		if (sig == SIGKILL) {
			/* the next commit removes what it left */
			pid = commit_child(dir, tag);
			assert_int_equal(waitpid(pid, &status, 0), pid);
			assert_string_equal(all_whole(dir), tag);
			assert_int_equal(count_staging(f->dir), 0);
		}
	}
	print_message("signals: %d commits killed (%d of them once the new files were in), %d finished "
		      "(a commit takes %.1f ms)\n", killed, landed, finished, dur * 1e3);
	pid = commit_child(dir, "c");
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_string_equal(all_whole(dir), "c");
	assert_int_equal(count_staging(f->dir), 0);
}

/* The same with the files written on four threads: a signal while they are written is held
 * until the writing stops at the next file, then removes every staging folder; no file
 * appears after. */
static void test_signals_jobs(void **state)
{
	child_jobs = 4;
	test_signals(state);
	child_jobs = 0;
}

/*
 * A kill the moment a staging folder's marker is gone. The library's unlink() and unlinkat() are
 * wrapped in this test (-Wl,--wrap, tests/CMakeLists.txt): with kill_unmarked set, a child
 * SIGKILLs itself right after removing a marker inside a staging folder.
 */
int __real_rename(const char *from, const char *to);
int __wrap_rename(const char *from, const char *to);
int __real_unlink(const char *path);
int __real_unlinkat(int dfd, const char *name, int flags);
int __wrap_unlink(const char *path);
int __wrap_unlinkat(int dfd, const char *name, int flags);
static volatile int kill_unmarked;

int __wrap_unlink(const char *path)
{
	int rc = __real_unlink(path);
	const char *m = strstr(path, "/.npulaunch-tmp-");

	if (!rc && kill_unmarked && m && strchr(m + 1, '/') &&
	    !strcmp(strchr(m + 1, '/'), "/.npulaunch-stage"))
		raise(SIGKILL);
	return rc;
}

int __wrap_unlinkat(int dfd, const char *name, int flags)
{
	int rc = __real_unlinkat(dfd, name, flags);

	if (!rc && kill_unmarked && !strcmp(name, ".npulaunch-stage"))
		raise(SIGKILL);
	return rc;
}

/* With kill_at_rename n set, a child SIGKILLs itself right after the library's nth rename(). */
static volatile int kill_at_rename;

int __wrap_rename(const char *from, const char *to)
{
	int rc = __real_rename(from, to);

	if (kill_at_rename > 0 && --kill_at_rename == 0)
		raise(SIGKILL);
	return rc;
}

static pid_t commit_killed_unmarking(const char *dir, const char *tag)
{
	pid_t pid;

	kill_unmarked = 1;
	pid = commit_child(dir, tag);
	kill_unmarked = 0;
	return pid;
}

/* Killed between a staging folder's marker and the folder itself (an exchanged-out earlier folder
 * has the bundle's mode until then): what is left is the next commit's to remove, whether the kill
 * came while a commit removed the folders it exchanged out or while it removed a killed one's. */
static void test_killed_unmarking(void **state)
{
	struct fx *f = *state;
	char dir[1024];
	int status;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s", at(f, "out"));
	pid = commit_child(dir, "z");
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* killed removing the earlier folders it exchanged out: one emptied, the rest still marked */
	pid = commit_killed_unmarking(dir, "y");
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	assert_string_equal(all_whole(dir), "y");
	assert_int_equal(count_staging(f->dir), NB);
	/* killed removing what that one left */
	pid = commit_killed_unmarking(dir, "x");
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	assert_string_equal(all_whole(dir), "y");
	/* (an emptied folder it came to before a marked one went without a kill) */
	status = count_staging(f->dir);
	assert_true(status == NB || status == NB - 1);
	/* the next commit removes all of it */
	pid = commit_child(dir, "w");
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_string_equal(all_whole(dir), "w");
	assert_int_equal(count_staging(f->dir), 0);
}

static int commit_killed_at(const char *dir, const char *tag, int n)
{
	int status;
	pid_t pid;

	kill_at_rename = n;
	pid = commit_child(dir, tag);
	kill_at_rename = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	return -1;
}

/* Bundles whose folders hold a file of the user's go in file by file. A SIGKILL after any
 * rename of such a commit leaves them mixed; the next commit puts each back as it was (its
 * journal: the earlier files back, the new ones out) before it looks, so it needs no --force:
 * seen here by killing that next commit at its first rename, once it has looked. */
/* Kill a commit of "b" over "a" after its nth rename, for every n of the first bundles and a
 * sample after; each time the next commit (itself killed at its first rename, once it has
 * looked) finds every bundle wholly "a", extras beside it; the one after that needs no --force. */
static void killed_landings(struct fx *f, const char *dir, const char *extras)
{
	int n, step = 1, rc = -1;

	for (n = 1; rc < 0; n += step) {
		rc = commit_killed_at(dir, "b", n);
		if (!rc)
			break;
		assert_int_equal(rc, -1);
		assert_int_equal(commit_killed_at(dir, "c", 1), -1);
		stage_ok = marker_ok = 1;
		assert_string_equal(all_whole_with(dir, extras), "a");
		stage_ok = marker_ok = 0;
		assert_int_equal(commit_killed_at(dir, "a", 0), 0);
		assert_string_equal(all_whole_with(dir, extras), "a");
		assert_int_equal(count_staging(f->dir), 0);
		step = n < 16 ? 1 : 7; /* every rename of the first bundles, then a sample */
	}
	assert_true(n > 2 * NB); /* killed in every bundle's landing */
	assert_string_equal(all_whole_with(dir, extras), "b");
	assert_int_equal(count_staging(f->dir), 0);
}

static void test_killed_file_by_file(void **state)
{
	struct fx *f = *state;
	char dir[1024], path[2048];
	int i;

	snprintf(dir, sizeof(dir), "%s", at(f, "out"));
	assert_int_equal(commit_killed_at(dir, "a", 0), 0);
	for (i = 0; i < NB; i++) {
		snprintf(path, sizeof(path), "%s/r%02d/notes.txt", dir, i);
		write_file(path, "mine\n", 0644);
	}
	killed_landings(f, dir, "notes.txt");
	for (i = 0; i < NB; i++) {
		size_t len;
		char *text;

		snprintf(path, sizeof(path), "%s/r%02d/notes.txt", dir, i);
		text = slurp(path, &len);
		assert_string_equal(text, "mine\n");
		free(text);
	}
}

/* The same where a folder that holds only its bundle cannot be exchanged (a file system without
 * RENAME_EXCHANGE): staged beside it, then put in file by file, journaled all the same. */
static void test_killed_no_exchange(void **state)
{
	struct fx *f = *state;
	char dir[1024];

	snprintf(dir, sizeof(dir), "%s", at(f, "out"));
	assert_int_equal(commit_killed_at(dir, "a", 0), 0);
	child_no_exchange = 1;
	killed_landings(f, dir, "");
	child_no_exchange = 0;
}

/* Bundles of "a" under dir (f's out), the user's notes.txt beside r00's, then a commit of "b"
 * killed with r00 half landed: its journal in (rename 1), big.sh new (2), the old one in .old. */
static void killed_mid_r00(struct fx *f, char *dir, size_t n)
{
	char path[2048];

	snprintf(dir, n, "%s", at(f, "out"));
	assert_int_equal(commit_killed_at(dir, "a", 0), 0);
	snprintf(path, sizeof(path), "%s/r00/notes.txt", dir);
	write_file(path, "mine\n", 0644);
	assert_int_equal(commit_killed_at(dir, "b", 2), -1);
}

/* A file the killed run put in and the user changed since is not overwritten by the way back:
 * the staging folder stays, and the commit that found it refuses the bundle. */
static void test_killed_then_edited(void **state)
{
	struct fx *f = *state;
	char dir[1024], path[2048];
	size_t len;
	char *text;

	killed_mid_r00(f, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/r00/big.sh", dir);
	write_file(path, "edited\n", 0755);
	assert_int_equal(commit_killed_at(dir, "c", 0), 1);
	text = slurp(path, &len);
	assert_string_equal(text, "edited\n");
	free(text);
	assert_true(count_staging(f->dir) >= 1);
}

/* A staging folder whose journal is not one npulaunch wrote is not acted on: it stays, with the
 * earlier files it keeps, and the commit that found it refuses the bundle it left mixed. */
static void test_killed_journal_tampered(void **state)
{
	struct fx *f = *state;
	char dir[1024], path[4096], stage[2048] = "", sub[1100];
	struct dirent *de;
	DIR *dp;
	FILE *fp;

	killed_mid_r00(f, dir, sizeof(dir));
	snprintf(sub, sizeof(sub), "%s/r00", dir);
	dp = opendir(sub);
	assert_non_null(dp);
	while ((de = readdir(dp)))
		if (!strncmp(de->d_name, ".npulaunch-tmp-", 15) && strlen(sub) + strlen(de->d_name) < 1024)
			snprintf(stage, sizeof(stage), "%s/%s", sub, de->d_name);
	closedir(dp);
	assert_true(stage[0]);
	snprintf(path, sizeof(path), "%s/.npulaunch-journal", stage);
	fp = fopen(path, "a");
	assert_non_null(fp);
	fputs("../../escape\n", fp);
	fclose(fp);
	assert_int_equal(commit_killed_at(dir, "c", 0), 1);
	snprintf(path, sizeof(path), "%s/.old/big.sh", stage);
	assert_int_equal(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/r00/notes.txt", dir);
	assert_int_equal(access(path, F_OK), 0);
}

/* Two commits into one folder at once: serialised, the result one of them, whole. */
static void test_concurrent(void **state)
{
	struct fx *f = *state;
	char dir[1024];
	int round, status;

	snprintf(dir, sizeof(dir), "%s", at(f, "out"));
	for (round = 0; round < 8; round++) {
		pid_t a = commit_child(dir, "a"), b = commit_child(dir, "b");
		const char *got;

		assert_int_equal(waitpid(a, &status, 0), a);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		assert_int_equal(waitpid(b, &status, 0), b);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		got = all_whole(dir);
		assert_true(!strcmp(got, "a") || !strcmp(got, "b"));
		assert_int_equal(count_staging(f->dir), 0);
	}
}

static const char *waited_for;

static void note_wait(const char *dir)
{
	int fd = open(waited_for, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd >= 0) {
		if (write(fd, dir, strlen(dir)) < 0)
			_exit(5);
		close(fd);
	}
}

/* A process holding the lock of path until its pipe closes: fork, flock, say so, wait. */
static pid_t hold_lock(const char *path, int *release)
{
	int p[2], q[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe(p), 0);
	assert_int_equal(pipe(q), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(path, O_RDONLY | O_DIRECTORY);

		close(p[1]);
		close(q[0]);
		if (fd < 0 || flock(fd, LOCK_EX) || write(q[1], "h", 1) != 1)
			_exit(1);
		while (read(p[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(p[0]);
	close(q[1]);
	assert_int_equal(read(q[0], &c, 1), 1);
	close(q[0]);
	*release = p[1];
	return pid;
}

/* A commit waits while another (not one it runs under) holds the lock of its folder's parent. */
static void test_lock_waits(void **state)
{
	struct fx *f = *state;
	int release, status, i;
	pid_t pid, holder;
	char note[2048], *text = NULL;
	size_t len;

	assert_int_equal(mkdir(at(f, "out"), 0755), 0);
	snprintf(note, sizeof(note), "%s", at(f, "waited"));
	waited_for = note;
	holder = hold_lock(at(f, "out"), &release);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct npl_outset s = {0};
		struct npl_diag d = NPL_DIAG_INIT;

		close(release);
		bundle(&s, at(f, "out/B"), "one", "a.sh");
		s.waiting = note_wait;
		_exit(npl_out_commit(&s, &d) ? 1 : 0);
	}
	/* it says so, and waits */
	for (i = 0; i < 400 && !(text = slurp(note, &len)); i++)
		usleep(25000);
	assert_non_null(text);
	usleep(100000);
	assert_int_equal(waitpid(pid, &status, WNOHANG), 0);
	assert_absent(at(f, "out/B"));
	assert_string_equal(text, at(f, "out"));
	free(text);
	close(release);
	assert_int_equal(waitpid(holder, &status, 0), holder);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_string_equal(whole(at(f, "out/B"), ""), "one");
}

/* A lock held by a process the commit runs under is never released while it waits
 * (`flock DIR npulaunch render -o DIR/deploy`): refused at once, naming the holder, nothing
 * written. */
static void test_lock_held_by_caller(void **state)
{
	struct fx *f = *state;
	int fd, status;
	pid_t pid;

	assert_int_equal(mkdir(at(f, "out"), 0755), 0);
	fd = open(at(f, "out"), O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct npl_outset s = {0};
		struct npl_diag d = NPL_DIAG_INIT;

		close(fd);
		alarm(20); /* a regression waits forever: the test fails instead */
		bundle(&s, at(f, "out/B"), "one", "a.sh");
		_exit(npl_out_commit(&s, &d) ? 3 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 3);
	assert_absent(at(f, "out/B"));
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_add_copies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_add_many, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_writes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_bare_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_empty_set, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_overwrites, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_folder_is_a_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_ancestor_is_a_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_readonly_folder, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_write_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_rename_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_identical, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_stale_content, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_stale_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_nothing_on_disk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_extra_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_extra_in_subfolder, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_extra_folder, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_extra_needs_owned_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_everything_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_writes_nothing, setup, teardown),
		cmocka_unit_test(test_sha256_vectors),
		cmocka_unit_test_setup_teardown(test_manifest_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bundle_replaced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bundle_exchange_or_in_place, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bundle_edited_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bundle_gone_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bundle_not_ours, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bundle_record_tampered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bundle_leftovers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bundles_all_or_none, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bundle_no_exchange, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bundle_cwd_and_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bundle_bind_mount, setup, teardown),
		cmocka_unit_test_setup_teardown(test_signals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_killed_unmarking, setup, teardown),
		cmocka_unit_test_setup_teardown(test_killed_file_by_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_killed_no_exchange, setup, teardown),
		cmocka_unit_test_setup_teardown(test_killed_journal_tampered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_killed_then_edited, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_waits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_held_by_caller, setup, teardown),
		cmocka_unit_test(test_merge),
		cmocka_unit_test_setup_teardown(test_commit_write_error_jobs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_signals_jobs, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
