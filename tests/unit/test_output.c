/* test_output.c: atomic output sets (output.h): commit, failure without leftovers, check against
 * the disk; SHA-256 (sha256.h). */
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "npulaunch/buf.h"
#include "npulaunch/output.h"
#include "npulaunch/sha256.h"

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
				size_t len;
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

/* A write that fails half-way (the file size limit): nothing is left, as root too. */
static void test_commit_write_error(void **state)
{
	struct fx *f = *state;
	struct rlimit old, lim;
	void (*oldsig)(int);
	char *big = malloc(65536), want[2048];
	int rc;

	assert_non_null(big);
	memset(big, 'x', 65536);
	npl_out_add(&f->set, at(f, "D/one.sh"), "one\n", 4, 0755);
	npl_out_add(&f->set, at(f, "D/big.json"), big, 65536, 0644);
	npl_out_add(&f->set, at(f, "D/three.sh"), "three\n", 6, 0755);
	free(big);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 4096;
	oldsig = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	rc = npl_out_commit(&f->set, &f->d);
	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, oldsig);
	assert_int_equal(rc, -1);
	snprintf(want, sizeof(want), "error: cannot write '%s': File too large", at(f, "D/big.json"));
	assert_diag_only(&f->d, want);
	assert_absent(at(f, "D/one.sh"));
	assert_absent(at(f, "D/big.json"));
	assert_absent(at(f, "D/three.sh"));
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
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(*v); i++) {
		npl_sha256_hex(v[i].in, strlen(v[i].in), hex);
		assert_string_equal(hex, v[i].hex);
		npl_sha256_hex_portable(v[i].in, strlen(v[i].in), hex);
		assert_string_equal(hex, v[i].hex);
	}
	assert_non_null(a);
	memset(a, 'a', 1000000);
	npl_sha256_hex(a, 1000000, hex);
	assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	/* the hardware path (when the CPU has one) and the portable one agree at every padding */
	for (n = 0; n < 300; n++) {
		char hw[65], c[65];

		for (i = 0; i < n; i++)
			a[i] = (char)(i * 131 + n);
		npl_sha256_hex(a, n, hw);
		npl_sha256_hex_portable(a, n, c);
		assert_string_equal(hw, c);
	}
	free(a);
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
