/* test_util.c: fsio.h (files), text.h (strings, suggestions, shell quoting), buf.h, arena.h and diag.h (counting, formatting, caret lines, flushing). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "npulaunch/arena.h"
#include "npulaunch/buf.h"
#include "npulaunch/diag.h"
#include "npulaunch/fsio.h"
#include "npulaunch/text.h"

/* A fresh temporary folder for the file tests. */
static void make_tmpdir(char *dir, size_t n)
{
	snprintf(dir, n, "/tmp/npl-unit-util-XXXXXX");
	assert_non_null(mkdtemp(dir));
}

static void write_file(const char *path, const char *data, size_t n)
{
	FILE *fp = fopen(path, "wb");

	assert_non_null(fp);
	assert_int_equal(fwrite(data, 1, n, fp), n);
	assert_int_equal(fclose(fp), 0);
}

/* The one error message of d, then forget it. */
static void expect_one_error(struct npl_diag *d, const char *msg)
{
	assert_int_equal(d->n, 1);
	assert_int_equal(d->errors, 1);
	assert_int_equal(d->v[0].sev, NPL_ERROR);
	assert_string_equal(d->v[0].msg, msg);
	npl_diag_release(d);
}

/* ---- util: strings ---- */

static void test_edit_distance(void **state)
{
	char longer[300];

	(void)state;
	assert_int_equal(npl_edit_distance("", ""), 0);
	assert_int_equal(npl_edit_distance("same", "same"), 0);
	assert_int_equal(npl_edit_distance("", "abc"), 3);
	assert_int_equal(npl_edit_distance("abc", ""), 3);
	assert_int_equal(npl_edit_distance("kitten", "sitting"), 3);
	assert_int_equal(npl_edit_distance("flaw", "lawn"), 2);
	assert_int_equal(npl_edit_distance("a", "A"), 1);
	/* a transposition of neighbours counts 1 */
	assert_int_equal(npl_edit_distance("ab", "ba"), 1);
	assert_int_equal(npl_edit_distance("modle", "model"), 1);
	assert_int_equal(npl_edit_distance("abcd", "badc"), 2);
	/* insert and delete */
	assert_int_equal(npl_edit_distance("port", "ports"), 1);
	assert_int_equal(npl_edit_distance("ports", "port"), 1);
	assert_int_equal(npl_edit_distance("tp-size", "tpsize"), 1);
	/* symmetric */
	assert_int_equal(npl_edit_distance("sitting", "kitten"), 3);
	/* too long to bother */
	memset(longer, 'a', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	assert_int_equal(npl_edit_distance(longer, "a"), INT_MAX);
	assert_int_equal(npl_edit_distance("a", longer), INT_MAX);
	longer[256] = '\0';
	assert_int_equal(npl_edit_distance(longer, "a"), 255);
}

static void test_did_you_mean(void **state)
{
	static const char *const cands[] = {
		"model", "tp-size", "port", NULL, "host", "dp", "max-running-requests",
	};
	static const char *const ties[] = {"cat", "bat"};
	int n = (int)NPL_ARRAY_SIZE(cands);

	(void)state;
	assert_string_equal(npl_did_you_mean("modle", cands, n), "model");
	assert_string_equal(npl_did_you_mean("prot", cands, n), "port");
	assert_string_equal(npl_did_you_mean("tpsize", cands, n), "tp-size");
	assert_string_equal(npl_did_you_mean("model", cands, n), "model");
	/* far words get nothing */
	assert_null(npl_did_you_mean("zzzzzzz", cands, n));
	assert_null(npl_did_you_mean("quantization", cands, n));
	/* words under 4 letters allow 1 edit */
	assert_string_equal(npl_did_you_mean("dq", cands, n), "dp");
	assert_string_equal(npl_did_you_mean("hst", cands, n), "host");
	assert_null(npl_did_you_mean("xy", cands, n));
	assert_null(npl_did_you_mean("pxt", cands, n));
	/* 4 to 11 letters allow 2 */
	assert_string_equal(npl_did_you_mean("pxxt", cands, n), "port");
	assert_string_equal(npl_did_you_mean("mdoel", cands, n), "model");
	assert_null(npl_did_you_mean("mxxxl", cands, n));
	/* 12 and more allow 3 */
	assert_string_equal(npl_did_you_mean("max-runing-request", cands, n), "max-running-requests");
	assert_string_equal(npl_did_you_mean("mx-runing-request", cands, n), "max-running-requests");
	assert_null(npl_did_you_mean("mx-runing-reqest", cands, n));
	/* no candidates; ties go to the first */
	assert_null(npl_did_you_mean("model", cands, 0));
	assert_string_equal(npl_did_you_mean("hat", ties, 2), "cat");
}

static void test_shell_safe(void **state)
{
	(void)state;
	assert_int_equal(npl_shell_safe("plain"), 1);
	assert_int_equal(npl_shell_safe("a-b_c.d/e:f,g@h%i+j=k"), 1);
	assert_int_equal(npl_shell_safe("/usr/local/Ascend/ascend-toolkit/set_env.sh"), 1);
	assert_int_equal(npl_shell_safe("0123456789"), 1);
	assert_int_equal(npl_shell_safe(""), 0);
	assert_int_equal(npl_shell_safe("a b"), 0);
	assert_int_equal(npl_shell_safe("a\tb"), 0);
	assert_int_equal(npl_shell_safe("a\nb"), 0);
	assert_int_equal(npl_shell_safe("it's"), 0);
	assert_int_equal(npl_shell_safe("\"q\""), 0);
	assert_int_equal(npl_shell_safe("$HOME"), 0);
	assert_int_equal(npl_shell_safe("`id`"), 0);
	assert_int_equal(npl_shell_safe("a;b"), 0);
	assert_int_equal(npl_shell_safe("a|b"), 0);
	assert_int_equal(npl_shell_safe("a&b"), 0);
	assert_int_equal(npl_shell_safe("*"), 0);
	assert_int_equal(npl_shell_safe("a?"), 0);
	assert_int_equal(npl_shell_safe("[ab]"), 0);
	assert_int_equal(npl_shell_safe("{a,b}"), 0);
	assert_int_equal(npl_shell_safe("~"), 0);
	assert_int_equal(npl_shell_safe("a\\b"), 0);
	assert_int_equal(npl_shell_safe("<x>"), 0);
	assert_int_equal(npl_shell_safe("(x)"), 0);
	assert_int_equal(npl_shell_safe("#x"), 0);
	assert_int_equal(npl_shell_safe("!x"), 0);
	assert_int_equal(npl_shell_safe("caf\xc3\xa9"), 0);
	assert_int_equal(npl_shell_safe("\x80"), 0);
}

static void expect_quote(const char *s, const char *want)
{
	struct npl_buf b = NPL_BUF_INIT;

	npl_buf_puts(&b, ">");
	npl_shell_quote(&b, s);
	assert_string_equal(npl_buf_str(&b), want);
	npl_buf_release(&b);
}

static void test_shell_quote(void **state)
{
	(void)state;
	expect_quote("bare-word_1.0/x:y", ">bare-word_1.0/x:y");
	expect_quote("", ">''");
	expect_quote("a b", ">'a b'");
	expect_quote("it's", ">'it'\\''s'");
	expect_quote("'", ">''\\'''");
	expect_quote("$(x)", ">'$(x)'");
	expect_quote("$HOME", ">'$HOME'");
	expect_quote("`id`", ">'`id`'");
	expect_quote("a;b", ">'a;b'");
	expect_quote("*", ">'*'");
	expect_quote("a\nb", ">'a\nb'");
	expect_quote("\\n", ">'\\n'");
	expect_quote("\"x\"", ">'\"x\"'");
	expect_quote("caf\xc3\xa9", ">'caf\xc3\xa9'");
	expect_quote("\xff\xfe", ">'\xff\xfe'");
}

/* What the shell makes of the quoted word is the word itself. */
static void test_shell_quote_round_trip(void **state)
{
	static const char *const words[] = {
		"plain", "", "a b", "it's", "''", "$(echo hi)", "`id`", "a;b&c|d", "*", "~",
		"$HOME", "\\", "a\tb", "\"", "caf\xc3\xa9", "-n", "x=1",
	};
	size_t i;

	(void)state;
	for (i = 0; i < NPL_ARRAY_SIZE(words); i++) {
		struct npl_buf cmd = NPL_BUF_INIT, got = NPL_BUF_INIT;
		char chunk[256];
		size_t n;
		FILE *fp;

		npl_buf_puts(&cmd, "printf '%s|' ");
		npl_shell_quote(&cmd, words[i]);
		fp = popen(npl_buf_str(&cmd), "r");
		assert_non_null(fp);
		while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
			npl_buf_add(&got, chunk, n);
		assert_int_equal(pclose(fp), 0);
		npl_buf_reset(&cmd);
		npl_buf_printf(&cmd, "%s|", words[i]);
		assert_string_equal(npl_buf_str(&got), npl_buf_str(&cmd));
		npl_buf_release(&cmd);
		npl_buf_release(&got);
	}
}

static void test_starts_ends_with(void **state)
{
	(void)state;
	assert_int_equal(npl_starts_with("abc", "ab"), 1);
	assert_int_equal(npl_starts_with("abc", "abc"), 1);
	assert_int_equal(npl_starts_with("abc", ""), 1);
	assert_int_equal(npl_starts_with("ab", "abc"), 0);
	assert_int_equal(npl_starts_with("abc", "b"), 0);
	assert_int_equal(npl_starts_with("", "a"), 0);
	assert_int_equal(npl_ends_with("abc", "bc"), 1);
	assert_int_equal(npl_ends_with("abc", "abc"), 1);
	assert_int_equal(npl_ends_with("abc", ""), 1);
	assert_int_equal(npl_ends_with("bc", "abc"), 0);
	assert_int_equal(npl_ends_with("abc", "ab"), 0);
	assert_int_equal(npl_ends_with("", "a"), 0);
	assert_int_equal(npl_ends_with("x.yaml", ".yaml"), 1);
	assert_int_equal(npl_ends_with("x.yml", ".yaml"), 0);
}

static void test_strcaseeq(void **state)
{
	(void)state;
	assert_int_equal(npl_strcaseeq("Hello", "hELLO"), 1);
	assert_int_equal(npl_strcaseeq("", ""), 1);
	assert_int_equal(npl_strcaseeq("A-Z_09", "a-z_09"), 1);
	assert_int_equal(npl_strcaseeq("a", "ab"), 0);
	assert_int_equal(npl_strcaseeq("ab", "a"), 0);
	assert_int_equal(npl_strcaseeq("a", ""), 0);
	assert_int_equal(npl_strcaseeq("abc", "abd"), 0);
	/* ASCII letters only: '[' is not '{', '@' is not '`' */
	assert_int_equal(npl_strcaseeq("[", "{"), 0);
	assert_int_equal(npl_strcaseeq("@", "`"), 0);
	assert_int_equal(npl_strcaseeq("\xc3\x89", "\xc3\xa9"), 0);
}

static void test_parse_uint(void **state)
{
	(void)state;
	assert_int_equal(npl_parse_uint("0"), 0);
	assert_int_equal(npl_parse_uint("42"), 42);
	assert_int_equal(npl_parse_uint("007"), 7);
	assert_int_equal(npl_parse_uint("2147483647"), INT_MAX);
	assert_int_equal(npl_parse_uint("2147483648"), -1);
	assert_int_equal(npl_parse_uint("99999999999999999999999999"), -1);
	assert_int_equal(npl_parse_uint("12a"), -1);
	assert_int_equal(npl_parse_uint("a12"), -1);
	assert_int_equal(npl_parse_uint(""), -1);
	assert_int_equal(npl_parse_uint(NULL), -1);
	assert_int_equal(npl_parse_uint("-1"), -1);
	assert_int_equal(npl_parse_uint("+1"), -1);
	assert_int_equal(npl_parse_uint(" 1"), -1);
	assert_int_equal(npl_parse_uint("1 "), -1);
	assert_int_equal(npl_parse_uint("1.0"), -1);
	assert_int_equal(npl_parse_uint("0x10"), -1);
}

/* One reader for every number from a flag, a file or the environment: decimal digits (a
 * fraction where the spec allows one), finite, in range, the whole text. */
static void test_parse_number(void **state)
{
	static const struct npl_number_spec secs = {"a number of seconds", 0, 604800, 0};
	static const struct npl_number_spec port = {"a port", 1, 65535, 1};
	static const struct npl_number_spec tenth = {"a number of seconds", 0.001, 3600, 0};
	static const char *const bad[] = {"", "nan", "NaN", "inf", "-inf", "Infinity", "1e3", "1E3",
		"0x10", "0X10", "-1", "+1", "-0", " 1", "1 ", "\t1", "1\n", ".5", "5.", "1,5", "1.2.3",
		"1_000", "0b1", "1s", "99999999999999999999", "1e999", "604801", "604800.5",
		"604800.0000000000000000001", "1..5", "."};
	char buf[256];
	double v = -7;
	size_t i;

	(void)state;
	for (i = 0; i < NPL_ARRAY_SIZE(bad); i++) {
		v = -7;
		assert_int_equal(npl_parse_number(bad[i], &secs, &v), -1);
		assert_true(v == -7);   /* untouched on error */
	}
	assert_int_equal(npl_parse_number(NULL, &secs, &v), -1);
	assert_int_equal(npl_parse_number("0", &secs, &v), 0);
	assert_true(v == 0);
	assert_int_equal(npl_parse_number("1.5", &secs, &v), 0);
	assert_true(v == 1.5);
	assert_int_equal(npl_parse_number("0010", &secs, &v), 0);
	assert_true(v == 10);
	assert_int_equal(npl_parse_number("604800", &secs, &v), 0);
	assert_true(v == 604800);
	assert_int_equal(npl_parse_number("604800.000000000000000000", &secs, &v), 0);
	assert_true(v == 604800);
	assert_int_equal(npl_parse_number("0.1", &secs, &v), 0);
	assert_true(v == 0.1);
	assert_int_equal(npl_parse_number("2.25", &secs, &v), 0);
	assert_true(v == 2.25);
	/* digits beyond a double's precision are read, not refused */
	assert_int_equal(npl_parse_number("1.00000000000000000000000000000000000001", &secs, &v), 0);
	assert_true(v == 1);
	assert_int_equal(npl_parse_number("000000000000000000000000000000000000000001", &secs, &v), 0);
	assert_true(v == 1);
	/* whole numbers only: no fraction, even a zero one */
	assert_int_equal(npl_parse_number("8000", &port, &v), 0);
	assert_true(v == 8000);
	assert_int_equal(npl_parse_number("65535", &port, &v), 0);
	assert_int_equal(npl_parse_number("65536", &port, &v), -1);
	assert_int_equal(npl_parse_number("0", &port, &v), -1);
	assert_int_equal(npl_parse_number("80.0", &port, &v), -1);
	assert_int_equal(npl_parse_number("80.", &port, &v), -1);
	/* a fractional minimum */
	assert_int_equal(npl_parse_number("0.001", &tenth, &v), 0);
	assert_int_equal(npl_parse_number("0.0009999999999999999999", &tenth, &v), -1);
	assert_int_equal(npl_parse_number("0", &tenth, &v), -1);
	/* a bounded slice of a longer text */
	assert_int_equal(npl_parse_number_n("1024x768", 4, &port, &v), 0);
	assert_true(v == 1024);
	assert_int_equal(npl_parse_number_n("1024x768", 5, &port, &v), -1);
	assert_int_equal(npl_parse_number_n("1024x768", 0, &port, &v), -1);
	/* the length of a leading decimal number */
	assert_int_equal(npl_decimal_span("22.2ms", 6, 0), 4);
	assert_int_equal(npl_decimal_span("22.2ms", 6, 1), 2);
	assert_int_equal(npl_decimal_span("22.ms", 5, 0), 2);
	assert_int_equal(npl_decimal_span(".5ms", 4, 0), 0);
	assert_int_equal(npl_decimal_span("5", 1, 0), 1);
	assert_int_equal(npl_decimal_span("1.5", 2, 0), 1);
	assert_int_equal(npl_decimal_span("", 0, 0), 0);
	/* a whole text that JSON and YAML read back as the same number (import's inferred scalars,
	   the Kubernetes writer's plain numbers) */
	assert_true(npl_decimal_text("8"));
	assert_true(npl_decimal_text("-0.95"));
	assert_true(npl_decimal_text("30000"));
	assert_false(npl_decimal_text(""));
	assert_false(npl_decimal_text("-"));
	assert_false(npl_decimal_text("1."));
	assert_false(npl_decimal_text(".5"));
	assert_false(npl_decimal_text("1e3"));
	assert_false(npl_decimal_text("--1"));
	assert_false(npl_decimal_text("1.5.2"));
	assert_false(npl_decimal_text("0x10"));
	assert_false(npl_decimal_text("8 "));
	/* a '..' part, which could lead a path out of a root folder; '..' inside a name is no part */
	assert_true(npl_path_climbs("/usr/local/Ascend/../x"));
	assert_true(npl_path_climbs("/a/.."));
	assert_true(npl_path_climbs("../a"));
	assert_false(npl_path_climbs("/a/..b/c"));
	assert_false(npl_path_climbs("/a/b../c"));
	assert_false(npl_path_climbs("/a/./b"));
	/* JSON text with the escape of a NUL, which cJSON would cut a string at */
	assert_true(npl_json_nul_escape("{\"p\": \"/a\\u0000b\"}", 17));
	assert_true(npl_json_nul_escape("\\u0000", 6));
	/* an escaped backslash, then the letters u0000 (a Windows-like path a value may hold): no NUL */
	assert_false(npl_json_nul_escape("\\\\u0000", 7));
	assert_true(npl_json_nul_escape("\\\\\\u0000", 8));
	assert_false(npl_json_nul_escape("\\u000", 5));
	assert_false(npl_json_nul_escape("\\u0001 \\u00e9 \\n", 16));
	assert_false(npl_json_nul_escape("\\u0000", 5));   /* past n */
	assert_false(npl_json_nul_escape("", 0));
	/* what is accepted, for messages */
	assert_string_equal(npl_number_expected(buf, sizeof(buf), &secs),
			    "a number of seconds from 0 to 604800 (decimal, like 1.5)");
	assert_string_equal(npl_number_expected(buf, sizeof(buf), &port), "a port from 1 to 65535");
	assert_string_equal(npl_number_expected(buf, sizeof(buf), &tenth),
			    "a number of seconds from 0.001 to 3600 (decimal, like 1.5)");
}

/* ---- util: files ---- */

static void test_read_file(void **state)
{
	char dir[64], path[128], *text, *big;
	struct npl_diag d = NPL_DIAG_INIT;
	size_t len, i;

	(void)state;
	make_tmpdir(dir, sizeof(dir));

	/* a missing file */
	snprintf(path, sizeof(path), "%s/missing.yaml", dir);
	assert_null(npl_read_file(path, &len, &d));
	assert_int_equal(d.n, 1);
	assert_null(d.v[0].loc.file);
	{
		char want[256];

		snprintf(want, sizeof(want), "cannot read '%s': No such file or directory", path);
		expect_one_error(&d, want);
	}

	/* a directory */
	assert_null(npl_read_file(dir, NULL, &d));
	{
		char want[256];

		snprintf(want, sizeof(want), "cannot read '%s': a directory, not a regular file", dir);
		expect_one_error(&d, want);
	}

	/* bytes as they are, NUL included, and NUL-terminated */
	snprintf(path, sizeof(path), "%s/f.bin", dir);
	write_file(path, "ab\0cd\n", 6);
	text = npl_read_file(path, &len, &d);
	assert_non_null(text);
	assert_int_equal(len, 6);
	assert_memory_equal(text, "ab\0cd\n", 7);
	assert_int_equal(d.n, 0);
	free(text);

	/* larger than one read chunk; len may be NULL */
	big = malloc(200001);
	assert_non_null(big);
	for (i = 0; i < 200000; i++)
		big[i] = (char)('a' + i % 26);
	big[200000] = '\0';
	write_file(path, big, 200000);
	text = npl_read_file(path, NULL, &d);
	assert_non_null(text);
	assert_int_equal(strlen(text), 200000);
	assert_string_equal(text, big);
	free(text);

	/* into an arena */
	{
		struct npl_arena a;

		npl_arena_init(&a);
		text = npl_read_file_in(&a, path, &len, &d);
		assert_non_null(text);
		assert_int_equal(len, 200000);
		assert_string_equal(text, big);
		npl_arena_release(&a);
	}

	/* no size to go by: procfs says 0; read to the end all the same */
	text = npl_read_file("/proc/self/maps", &len, &d);
	assert_non_null(text);
	assert_true(len > 100);
	assert_int_equal(strlen(text), len);
	assert_non_null(strstr(text, "\n"));
	free(text);
	free(big);

	assert_int_equal(d.errors, 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* An empty file reads as "" (NUL-terminated, like every text read). */
static void test_read_file_empty(void **state)
{
	char dir[64], path[128], *text;
	struct npl_diag d = NPL_DIAG_INIT;
	size_t len = 99;
	int first;

	(void)state;
	make_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/empty.yaml", dir);
	write_file(path, "", 0);
	text = npl_read_file(path, &len, &d);
	first = text ? (unsigned char)text[0] : -1;
	free(text);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
	assert_int_equal(len, 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(first, '\0');
}

/* Only regular files are read, without blocking: a FIFO with no writer, a pipe whose writer never
 * writes, /dev/zero and a symbolic link to it are refused at once, each named; a symbolic link to
 * a regular file reads it, unless the caller forbids links. */
static void test_read_file_refuses(void **state)
{
	char dir[64], path[128], link[128], want[384], fdpath[64];
	struct npl_diag d = NPL_DIAG_INIT;
	struct stat st;
	int fds[2], fd;
	char *text;

	(void)state;
	make_tmpdir(dir, sizeof(dir));
	alarm(20);   /* a read that blocks fails the test instead of hanging it */

	snprintf(path, sizeof(path), "%s/site.yaml", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_null(npl_read_file(path, NULL, &d));
	snprintf(want, sizeof(want), "cannot read '%s': a FIFO, not a regular file", path);
	expect_one_error(&d, want);
	assert_int_equal(unlink(path), 0);

	assert_int_equal(pipe(fds), 0);   /* the writer is open and silent */
	snprintf(fdpath, sizeof(fdpath), "/dev/fd/%d", fds[0]);
	assert_null(npl_read_file(fdpath, NULL, &d));
	snprintf(want, sizeof(want), "cannot read '%s': a FIFO, not a regular file", fdpath);
	expect_one_error(&d, want);
	close(fds[0]);
	close(fds[1]);

	assert_null(npl_read_file("/dev/zero", NULL, &d));
	expect_one_error(&d, "cannot read '/dev/zero': a character device, not a regular file");

	snprintf(link, sizeof(link), "%s/recipe.yaml", dir);
	assert_int_equal(symlink("/dev/zero", link), 0);
	assert_null(npl_read_file(link, NULL, &d));
	snprintf(want, sizeof(want), "cannot read '%s': a character device, not a regular file", link);
	expect_one_error(&d, want);
	assert_int_equal(unlink(link), 0);

	/* a link to a regular file is that file; the cache's own files take no link */
	snprintf(path, sizeof(path), "%s/real.yaml", dir);
	write_file(path, "kind: model\n", 12);
	assert_int_equal(symlink(path, link), 0);
	text = npl_read_file(link, NULL, &d);
	assert_non_null(text);
	assert_string_equal(text, "kind: model\n");
	free(text);
	assert_int_equal(d.n, 0);
	fd = npl_open_regular(link, 0, NPL_READ_MAX, &st, &d);
	assert_true(fd >= 0);
	assert_int_equal(st.st_size, 12);
	close(fd);
	assert_int_equal(npl_open_regular(link, 1, NPL_READ_MAX, &st, &d), -1);
	snprintf(want, sizeof(want), "cannot read '%s': %s", link, strerror(ELOOP));
	expect_one_error(&d, want);
	fd = npl_open_regular(path, 1, NPL_READ_MAX, &st, &d);
	assert_true(fd >= 0);
	close(fd);

	alarm(0);
	assert_int_equal(unlink(link), 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* A file larger than the limit is refused, saying the limit, whether its size is known from
 * fstat or only from reading (procfs says 0); a file of exactly the limit is read. */
static void test_read_file_limit(void **state)
{
	char dir[64], path[128], want[384], *text;
	struct npl_diag d = NPL_DIAG_INIT;
	size_t len;

	(void)state;
	make_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/f.yaml", dir);
	write_file(path, "0123456789", 10);
	text = npl_read_file_max(NULL, path, 10, &len, &d);
	assert_non_null(text);
	assert_int_equal(len, 10);
	free(text);
	assert_null(npl_read_file_max(NULL, path, 9, &len, &d));
	snprintf(want, sizeof(want), "cannot read '%s': larger than 9 bytes, the limit for this kind of file", path);
	expect_one_error(&d, want);
	{
		struct npl_arena a;

		npl_arena_init(&a);
		assert_null(npl_read_file_max(&a, "/proc/self/maps", 64, &len, &d));
		expect_one_error(&d, "cannot read '/proc/self/maps': larger than 64 bytes, the limit for this kind of file");
		npl_arena_release(&a);
	}
	/* the default limit, in MiB */
	assert_int_equal(truncate(path, (off_t)NPL_READ_MAX + 1), 0);
	assert_null(npl_read_file(path, &len, &d));
	snprintf(want, sizeof(want), "cannot read '%s': larger than 16 MiB, the limit for this kind of file", path);
	expect_one_error(&d, want);
	assert_int_equal(truncate(path, (off_t)NPL_READ_MAX), 0);
	text = npl_read_file(path, &len, &d);
	assert_non_null(text);
	assert_int_equal(len, NPL_READ_MAX);
	free(text);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* Text for a terminal: controls and bytes that are not UTF-8 escaped, UTF-8 kept; a long text
 * cut in its middle. */
static void test_escape(void **state)
{
	struct npl_buf b = NPL_BUF_INIT;
	struct npl_arena a;
	const char *s;

	(void)state;
#define ESC(in, width, want)                                                  \
	do {                                                                  \
		npl_buf_reset(&b);                                            \
		npl_escape(&b, in, sizeof(in) - 1, width);                    \
		assert_string_equal(npl_buf_str(&b), want);                   \
	} while (0)
	ESC("plain /models/Kimi-K2.6 ok", 0, "plain /models/Kimi-K2.6 ok");
	ESC("\x1b]0;owned\x07\x1b[2J", 0, "\\x1b]0;owned\\x07\\x1b[2J");
	ESC("a\tb\nc\rd\x7f" "e", 0, "a\\x09b\\x0ac\\x0dd\\x7fe");
	ESC("nul\0after", 0, "nul\\x00after");
	ESC("\xc2\x9b" "31m", 0, "\\u009b31m");                       /* C1 CSI as UTF-8 */
	ESC("\x9b" "31m", 0, "\\x9b31m");                             /* C1 CSI as a byte */
	ESC("모델 경로 é ü 😀", 0, "모델 경로 é ü 😀");                /* UTF-8 kept */
	ESC("\xc3\x28", 0, "\\xc3(");                                 /* a lead byte alone */
	ESC("\xc0\xaf", 0, "\\xc0\\xaf");                             /* overlong '/' */
	ESC("\xed\xa0\x80", 0, "\\xed\\xa0\\x80");                    /* a surrogate */
	ESC("\xf4\x90\x80\x80", 0, "\\xf4\\x90\\x80\\x80");           /* past U+10FFFF */
	ESC("\xe2\x82", 0, "\\xe2\\x82");                             /* cut short */
	ESC("\xff\xfe", 0, "\\xff\\xfe");
	ESC("\xe2\x80\xae", 0, "\xe2\x80\xae");                       /* U+202E is UTF-8, kept */
	/* cut in the middle, at a character's edge */
	ESC("abcdefghijklmnopqrstuvwxyz", 26, "abcdefghijklmnopqrstuvwxyz");
	ESC("abcdefghijklmnopqrstuvwxyz", 12, "abcdefghi...xyz");
	ESC("경경경경경경경경경경경경경경경경", 12, "경경경...경");
	ESC("\x1b\x1b\x1b\x1b\x1b\x1b\x1b\x1b\x1b\x1b\x1b\x1b\x1b\x1b", 8, "\\x1b\\x1b\\x1b\\x1b\\x1b\\x1b...\\x1b\\x1b");
#undef ESC
	/* with no buffer, only the length it takes */
	assert_int_equal(npl_escape_char(NULL, "a", 1), 1);
	assert_int_equal(npl_escape_char(NULL, "\x1b[", 2), 1);
	assert_int_equal(npl_escape_char(NULL, "모델", 6), 3);
	assert_int_equal(npl_escape_char(NULL, "\xc2\x9b", 2), 2);
	assert_int_equal(npl_escape_char(NULL, "\xe2\x82", 2), 1);
	assert_int_equal(npl_escape_char(NULL, "😀", 4), 4);
	/* any bytes at all: what comes out is printable ASCII and valid UTF-8 above U+009F */
	{
		unsigned seed = 1;
		int round, i;

		for (round = 0; round < 20000; round++) {
			unsigned char in[24];
			const unsigned char *o;
			size_t n = (size_t)(round % 24), k;

			for (k = 0; k < n; k++) {
				seed = seed * 1103515245u + 12345u;
				in[k] = (unsigned char)(seed >> 16);
				if (round % 3 == 0 && in[k] >= 0x80)
					in[k] = (unsigned char)(0x80 | (in[k] & 0x3f)) | (k % 4 == 0 ? 0x40 : 0);
			}
			npl_buf_reset(&b);
			npl_escape(&b, (const char *)in, n, round % 2 ? 0 : 12);
			o = (const unsigned char *)npl_buf_str(&b);
			for (k = 0; k < b.len;) {
				int len = o[k] < 0x80 ? 1 : o[k] >= 0xf0 ? 4 : o[k] >= 0xe0 ? 3 : 2;

				assert_true(o[k] >= 0x20 && o[k] != 0x7f);
				assert_true(o[k] < 0x80 || (o[k] >= 0xc2 && o[k] <= 0xf4));
				assert_false(o[k] == 0xc2 && k + 1 < b.len && o[k + 1] < 0xa0);
				assert_true(k + (size_t)len <= b.len);
				for (i = 1; i < len; i++)
					assert_int_equal(o[k + (size_t)i] & 0xc0, 0x80);
				k += (size_t)len;
			}
		}
	}
	npl_buf_release(&b);

	/* whole lines of text: the newlines kept */
	{
		FILE *fp = tmpfile();
		char got[64] = "";

		assert_non_null(fp);
		npl_print_text(fp, "a\x1b\nb\tc\n\n모\xff");
		rewind(fp);
		assert_int_equal(fread(got, 1, sizeof(got) - 1, fp), strlen("a\\x1b\nb\\x09c\n\n모\\xff"));
		assert_string_equal(got, "a\\x1b\nb\\x09c\n\n모\\xff");
		fclose(fp);
	}

	npl_arena_init(&a);
	s = "nothing to escape";
	assert_ptr_equal(npl_escape_in(&a, s), s);
	assert_string_equal(npl_escape_in(&a, "bell\a"), "bell\\x07");
	npl_arena_release(&a);
}

static void test_mkdirs(void **state)
{
	char dir[64], path[256], file[128], want[384];
	struct npl_diag d = NPL_DIAG_INIT;
	struct stat st;

	(void)state;
	make_tmpdir(dir, sizeof(dir));

	/* nested folders, twice (existing is fine) */
	snprintf(path, sizeof(path), "%s/a/b/c", dir);
	assert_int_equal(npl_is_dir(path), 0);
	assert_int_equal(npl_mkdirs(path, 0700, &d), 0);
	assert_int_equal(npl_is_dir(path), 1);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(npl_mkdirs(path, 0700, &d), 0);
	/* a trailing slash and doubled slashes */
	snprintf(path, sizeof(path), "%s/a//b/d/", dir);
	assert_int_equal(npl_mkdirs(path, 0755, &d), 0);
	snprintf(path, sizeof(path), "%s/a/b/d", dir);
	assert_int_equal(npl_is_dir(path), 1);
	assert_int_equal(d.n, 0);

	/* a component that is a regular file */
	snprintf(file, sizeof(file), "%s/a/file", dir);
	write_file(file, "x", 1);
	assert_int_equal(npl_is_dir(file), 0);
	snprintf(path, sizeof(path), "%s/sub/deeper", file);
	assert_int_equal(npl_mkdirs(path, 0755, &d), -1);
	snprintf(want, sizeof(want), "cannot create directory '%s/sub': Not a directory", file);
	assert_null(d.v[0].loc.file);
	expect_one_error(&d, want);

	/* the path itself is a regular file */
	assert_int_equal(npl_mkdirs(file, 0755, &d), -1);
	snprintf(want, sizeof(want), "'%s' exists and is not a directory", file);
	expect_one_error(&d, want);

	/* a relative path */
	{
		char cwd[512];

		assert_non_null(getcwd(cwd, sizeof(cwd)));
		assert_int_equal(chdir(dir), 0);
		assert_int_equal(npl_mkdirs("rel/x", 0755, &d), 0);
		assert_int_equal(npl_is_dir("rel/x"), 1);
		assert_int_equal(rmdir("rel/x"), 0);
		assert_int_equal(rmdir("rel"), 0);
		assert_int_equal(chdir(cwd), 0);
	}

	assert_int_equal(unlink(file), 0);
	snprintf(path, sizeof(path), "%s/a/b/c", dir);
	assert_int_equal(rmdir(path), 0);
	snprintf(path, sizeof(path), "%s/a/b/d", dir);
	assert_int_equal(rmdir(path), 0);
	snprintf(path, sizeof(path), "%s/a/b", dir);
	assert_int_equal(rmdir(path), 0);
	snprintf(path, sizeof(path), "%s/a", dir);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

/*
 * An empty path is an error with a message, and nothing more. Run in a child
 * so that a memory error (caught by the sanitizer build) fails only this test.
 */
static void test_mkdirs_empty_path(void **state)
{
	pid_t pid;
	int status;

	(void)state;
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct npl_diag d = NPL_DIAG_INIT;
		int rc = npl_mkdirs("", 0755, &d);

		_exit(rc == -1 && d.n == 1 && d.errors == 1 &&
		      strcmp(d.v[0].msg, "cannot create directory '': No such file or directory") == 0
		      ? 0 : 3);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- buf ---- */

static void vprintf_helper(struct npl_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void vprintf_helper(struct npl_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	npl_buf_vprintf(b, fmt, ap);
	va_end(ap);
}

static void test_buf_add_and_printf(void **state)
{
	struct npl_buf b = NPL_BUF_INIT;
	size_t i;

	(void)state;
	assert_string_equal(npl_buf_str(&b), "");
	npl_buf_puts(&b, "ab");
	npl_buf_putc(&b, 'c');
	npl_buf_add(&b, "d\0e", 3);
	assert_int_equal(b.len, 6);
	assert_memory_equal(b.data, "abcd\0e", 7);
	npl_buf_add(&b, "ignored", 0);
	assert_int_equal(b.len, 6);
	npl_buf_reset(&b);
	npl_buf_printf(&b, "%s=%d;%05.1f|%c", "x", -12, 3.14159, 'z');
	assert_string_equal(npl_buf_str(&b), "x=-12;003.1|z");
	assert_int_equal(b.len, 13);
	vprintf_helper(&b, "[%u %s]", 7u, "va");
	assert_string_equal(npl_buf_str(&b), "x=-12;003.1|z[7 va]");
	npl_buf_printf(&b, "%s", "");
	assert_int_equal(b.len, 19);
	/* growing across many reallocations keeps the text */
	npl_buf_reset(&b);
	for (i = 0; i < 1000; i++)
		npl_buf_printf(&b, "%03zu,", i);
	assert_int_equal(b.len, 4000);
	assert_int_equal(strlen(b.data), 4000);
	assert_true(b.cap > b.len);
	assert_memory_equal(b.data, "000,001,002,", 12);
	assert_memory_equal(b.data + 3996, "999,", 4);
	/* one large printf */
	npl_buf_reset(&b);
	npl_buf_printf(&b, "%5000d|", 1);
	assert_int_equal(b.len, 5001);
	assert_string_equal(b.data + 4999, "1|");
	npl_buf_release(&b);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.cap, 0);
	assert_string_equal(npl_buf_str(&b), "");
}

/* printf formats into the room left and only formats again when the text did not fit */
static void test_buf_printf_at_the_edge(void **state)
{
	struct npl_buf b = NPL_BUF_INIT;
	char want[80];

	(void)state;
	npl_buf_printf(&b, "%s", "");
	assert_int_equal(b.cap, 64);
	memset(want, 'x', 60);
	npl_buf_add(&b, want, 60);
	npl_buf_printf(&b, "%s", "abc"); /* 3 bytes and the NUL: exactly the room */
	assert_int_equal(b.cap, 64);
	assert_int_equal(b.len, 63);
	npl_buf_printf(&b, "%d", 45); /* one byte too many */
	assert_true(b.cap > 64);
	assert_int_equal(b.len, 65);
	memcpy(want + 60, "abc45", 6);
	assert_string_equal(b.data, want);
	npl_buf_release(&b);
}

static void test_buf_json_string(void **state)
{
	struct npl_buf b = NPL_BUF_INIT;
	char all[256];
	cJSON *j;
	int i;

	(void)state;
	npl_buf_json_string(&b, "a\"b\\c\n\t\r\x01\x1f/\x7f");
	assert_string_equal(b.data, "\"a\\\"b\\\\c\\n\\t\\r\\u0001\\u001f/\x7f\"");
	npl_buf_reset(&b);
	npl_buf_json_string(&b, "");
	assert_string_equal(b.data, "\"\"");
	/* every byte but NUL comes back from a JSON parser as it went in */
	for (i = 1; i < 256; i++)
		all[i - 1] = (char)i;
	all[255] = '\0';
	npl_buf_reset(&b);
	npl_buf_json_string(&b, all);
	j = cJSON_Parse(b.data);
	assert_non_null(j);
	assert_true(cJSON_IsString(j));
	assert_string_equal(j->valuestring, all);
	cJSON_Delete(j);
	npl_buf_release(&b);
}

static void test_fmt_int(void **state)
{
	static const int v[] = {0, 1, -1, 9, 10, -10, 16, 1234567, INT_MAX, INT_MIN, INT_MIN + 1};
	char got[16], want[16];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		snprintf(want, sizeof(want), "%d", v[i]);
		assert_string_equal(npl_fmt_int(got, sizeof(got), v[i]), want);
	}
	/* too small a buffer: empty, never overrun */
	assert_string_equal(npl_fmt_int(got, 3, 1234), "");
	assert_string_equal(npl_fmt_int(got, 5, 1234), "1234");
}

static void test_buf_reset_and_detach(void **state)
{
	struct npl_buf b = NPL_BUF_INIT;
	char *data, *s;
	size_t cap;

	(void)state;
	/* reset on an empty buffer is harmless */
	npl_buf_reset(&b);
	assert_string_equal(npl_buf_str(&b), "");
	npl_buf_puts(&b, "hello");
	data = b.data;
	cap = b.cap;
	npl_buf_reset(&b);
	assert_int_equal(b.len, 0);
	assert_string_equal(npl_buf_str(&b), "");
	assert_ptr_equal(b.data, data);
	assert_int_equal(b.cap, cap);
	npl_buf_puts(&b, "again");
	s = npl_buf_detach(&b);
	assert_string_equal(s, "again");
	assert_ptr_equal(s, data);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.cap, 0);
	free(s);
	/* the buffer is usable after detach */
	npl_buf_puts(&b, "x");
	assert_string_equal(npl_buf_str(&b), "x");
	npl_buf_release(&b);
}

/* Detaching a buffer that never held text gives "", never NULL. */
static void test_buf_detach_empty(void **state)
{
	struct npl_buf b = NPL_BUF_INIT;
	char *s;
	int first;

	(void)state;
	s = npl_buf_detach(&b);
	first = s ? (unsigned char)s[0] : -1;
	free(s);
	assert_int_equal(first, '\0');
	assert_null(b.data);
	/* after a reset the text is "" as well */
	npl_buf_puts(&b, "abc");
	npl_buf_reset(&b);
	s = npl_buf_detach(&b);
	assert_string_equal(s, "");
	free(s);
}

/* ---- arena ---- */

static int aligned(const void *p)
{
	return (uintptr_t)p % _Alignof(max_align_t) == 0;
}

static void test_arena_alloc_zeroed(void **state)
{
	struct npl_arena a;
	unsigned char *p, *q;
	size_t i;
	int *v;

	(void)state;
	npl_arena_init(&a);
	assert_null(a.head);
	/* dirty memory, then give it back: new allocations must still be zero */
	p = npl_arena_alloc(&a, 4000);
	memset(p, 0xAA, 4000);
	npl_arena_release(&a);
	assert_null(a.head);
	p = npl_arena_alloc(&a, 4000);
	for (i = 0; i < 4000; i++)
		assert_int_equal(p[i], 0);
	/* distinct and aligned, whatever the sizes */
	q = npl_arena_alloc(&a, 1);
	assert_true(aligned(p) && aligned(q));
	assert_true(q >= p + 4000 || q + 1 <= p);
	for (i = 1; i < 40; i++) {
		unsigned char *r = npl_arena_alloc(&a, i);

		assert_true(aligned(r));
		assert_int_equal(r[i - 1], 0);
		memset(r, 0xFF, i);
	}
	assert_int_equal(q[0], 0);
	v = npl_arena_calloc(&a, 100, sizeof(int));
	for (i = 0; i < 100; i++)
		assert_int_equal(v[i], 0);
	assert_true(aligned(v));
	npl_arena_release(&a);
}

static void test_arena_strings(void **state)
{
	struct npl_arena a;
	char src[] = "hello world", *s, *t;

	(void)state;
	npl_arena_init(&a);
	s = npl_arena_strdup(&a, src);
	assert_string_equal(s, "hello world");
	assert_ptr_not_equal(s, src);
	src[0] = 'J';
	assert_string_equal(s, "hello world");
	assert_null(npl_arena_strdup(&a, NULL));
	assert_string_equal(npl_arena_strdup(&a, ""), "");
	t = npl_arena_strndup(&a, "hello world", 5);
	assert_string_equal(t, "hello");
	assert_string_equal(npl_arena_strndup(&a, "abc", 0), "");
	assert_string_equal(npl_arena_printf(&a, "%s-%d-%.2f", "x", 42, 1.5), "x-42-1.50");
	assert_string_equal(npl_arena_printf(&a, "%s", ""), "");
	s = npl_arena_printf(&a, "%3000d", 7);
	assert_int_equal(strlen(s), 3000);
	assert_string_equal(s + 2999, "7");
	/* earlier strings are untouched */
	assert_string_equal(t, "hello");
	npl_arena_release(&a);
}

static void test_arena_grow(void **state)
{
	struct npl_arena a;
	int *v, *w, i;

	(void)state;
	npl_arena_init(&a);
	v = npl_arena_grow(&a, NULL, 0, 4, sizeof(int));
	for (i = 0; i < 4; i++) {
		assert_int_equal(v[i], 0);
		v[i] = i + 1;
	}
	w = npl_arena_grow(&a, v, 4, 8, sizeof(int));
	assert_ptr_not_equal(w, v);
	for (i = 0; i < 4; i++)
		assert_int_equal(w[i], i + 1);
	for (i = 4; i < 8; i++)
		assert_int_equal(w[i], 0);
	/* growing a lot crosses chunks and still keeps everything */
	for (i = 8; i < 100000; i *= 2)
		w = npl_arena_grow(&a, w, (size_t)i / 2, (size_t)i, sizeof(int));
	assert_int_equal(w[0], 1);
	assert_int_equal(w[3], 4);
	assert_int_equal(w[4], 0);
	npl_arena_release(&a);
}

/* Mapped chunks (1 MiB and up, huge pages from 2 MiB) are handed out without a memset, so
 * every byte must come zeroed from the kernel and never be handed out twice. */
static void test_arena_mapped_chunks_are_zero(void **state)
{
	struct npl_arena a;
	unsigned char *p[40];
	size_t i, j, len;
	void *m;

	(void)state;
	npl_arena_init(&a);
	p[0] = npl_arena_alloc(&a, (3u << 20) + 5);   /* a chunk of its own, 2 MiB pages */
	for (j = 0; j < (3u << 20) + 5; j++)
		assert_int_equal(p[0][j], 0);
	memset(p[0], 0xff, (3u << 20) + 5);
	/* enough small ones that the chunks grow past 1 MiB and 2 MiB */
	for (i = 1; i < NPL_ARRAY_SIZE(p); i++) {
		p[i] = npl_arena_alloc(&a, 300000);
		assert_true(aligned(p[i]));
		for (j = 0; j < 300000; j++)
			assert_int_equal(p[i][j], 0);
		memset(p[i], (int)i, 300000);
	}
	for (i = 1; i < NPL_ARRAY_SIZE(p); i++)
		assert_int_equal(p[i][299999], (unsigned char)i);
	npl_arena_release(&a);
	/* the mapping itself: whole, zeroed, aligned to 2 MiB from 2 MiB */
	m = npl_mem_map(5u << 20, &len);
	assert_non_null(m);
	assert_true(len >= 5u << 20);
	assert_int_equal((uintptr_t)m % (2u << 20), 0);
	assert_int_equal(((unsigned char *)m)[len - 1], 0);
	npl_mem_unmap(m, len);
}

static void test_arena_many_and_large(void **state)
{
	struct npl_arena a;
	unsigned char *small[5000], *first, *large, *after;
	size_t i, j;

	(void)state;
	npl_arena_init(&a);
	first = npl_arena_alloc(&a, 32);
	memset(first, 'F', 32);
	/* larger than a whole chunk */
	large = npl_arena_alloc(&a, 100000);
	assert_true(aligned(large));
	for (i = 0; i < 100000; i++)
		assert_int_equal(large[i], 0);
	memset(large, 'L', 100000);
	/* the current chunk stays in use after a large allocation */
	after = npl_arena_alloc(&a, 32);
	assert_int_equal(after[0], 0);
	memset(after, 'A', 32);
	/* many small ones over several chunks */
	for (i = 0; i < NPL_ARRAY_SIZE(small); i++) {
		small[i] = npl_arena_alloc(&a, 100);
		assert_int_equal(small[i][0], 0);
		assert_int_equal(small[i][99], 0);
		memset(small[i], (int)(i & 0xff), 100);
	}
	/* a second large one, between others */
	large = npl_arena_alloc(&a, 1 << 20);
	assert_int_equal(large[(1 << 20) - 1], 0);
	memset(large, 'M', 1 << 20);
	for (i = 0; i < NPL_ARRAY_SIZE(small); i++)
		for (j = 0; j < 100; j++)
			assert_int_equal(small[i][j], i & 0xff);
	for (j = 0; j < 32; j++) {
		assert_int_equal(first[j], 'F');
		assert_int_equal(after[j], 'A');
	}
	npl_arena_release(&a);
	/* usable again after release */
	first = npl_arena_alloc(&a, 8);
	assert_int_equal(first[7], 0);
	npl_arena_release(&a);
}

/* ---- diag ---- */

static void test_diag_counts(void **state)
{
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_loc l = {"f.yaml", 3, 7};
	int i;

	(void)state;
	assert_int_equal(npl_error(&d, &l, "bad %s #%d", "thing", 1), -1);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.errors, 1);
	assert_int_equal(d.warnings, 0);
	assert_int_equal(d.v[0].sev, NPL_ERROR);
	assert_string_equal(d.v[0].msg, "bad thing #1");
	assert_string_equal(d.v[0].loc.file, "f.yaml");
	assert_int_equal(d.v[0].loc.line, 3);
	assert_int_equal(d.v[0].loc.col, 7);
	/* the location is copied */
	l.line = 99;
	assert_int_equal(d.v[0].loc.line, 3);
	npl_warn(&d, NULL, "careful");
	assert_int_equal(d.n, 2);
	assert_int_equal(d.errors, 1);
	assert_int_equal(d.warnings, 1);
	assert_int_equal(d.v[1].sev, NPL_WARNING);
	assert_null(d.v[1].loc.file);
	assert_int_equal(d.v[1].loc.line, 0);
	assert_int_equal(d.v[1].loc.col, 0);
	npl_diag_add(&d, NPL_NOTE, &l, "a note");
	assert_int_equal(d.n, 3);
	assert_int_equal(d.errors, 1);
	assert_int_equal(d.warnings, 1);
	assert_int_equal(d.v[2].sev, NPL_NOTE);
	/* many messages */
	for (i = 0; i < 40; i++)
		assert_int_equal(npl_error(&d, NULL, "e%d", i), -1);
	assert_int_equal(d.n, 43);
	assert_int_equal(d.errors, 41);
	assert_string_equal(d.v[0].msg, "bad thing #1");
	assert_string_equal(d.v[42].msg, "e39");
	npl_diag_release(&d);
	assert_int_equal(d.n, 0);
	assert_int_equal(d.errors, 0);
	assert_int_equal(d.warnings, 0);
	assert_null(d.v);
}

static void expect_format(const struct npl_diag *d, int i, int caret, const char *want)
{
	char *s = npl_diag_format(d, &d->v[i], caret);

	assert_non_null(s);
	assert_string_equal(s, want);
	free(s);
}

static void test_diag_format(void **state)
{
	struct npl_diag d = NPL_DIAG_INIT;

	(void)state;
	npl_error(&d, &(struct npl_loc){"f.yaml", 3, 7}, "bad value");
	npl_warn(&d, &(struct npl_loc){"f.yaml", 3, 7}, "odd value");
	npl_diag_add(&d, NPL_NOTE, &(struct npl_loc){"f.yaml", 1, 1}, "defined here");
	npl_error(&d, &(struct npl_loc){"f.yaml", 3, 0}, "no column");
	npl_error(&d, &(struct npl_loc){"f.yaml", 0, 0}, "no line");
	npl_error(&d, NULL, "nowhere");
	npl_error(&d, &(struct npl_loc){NULL, 3, 7}, "no file");
	expect_format(&d, 0, 0, "f.yaml:3:7: error: bad value");
	expect_format(&d, 1, 0, "f.yaml:3:7: warning: odd value");
	expect_format(&d, 2, 0, "f.yaml:1:1: note: defined here");
	expect_format(&d, 3, 0, "f.yaml:3: error: no column");
	expect_format(&d, 4, 0, "f.yaml: error: no line");
	expect_format(&d, 5, 0, "error: nowhere");
	expect_format(&d, 6, 0, "error: no file");
	/* a caret needs the file's text: none registered, nothing added */
	expect_format(&d, 0, 1, "f.yaml:3:7: error: bad value");
	npl_diag_release(&d);
}

static void test_diag_caret(void **state)
{
	static const char text[] =
		"l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\nl11\nl12\nl13\n"
		"    key: value\n"
		"\tx: y\n"
		"a\x01" "b\r\n"
		"\n"
		"last line";
	struct npl_diag d = NPL_DIAG_INIT;

	(void)state;
	npl_diag_source(&d, "other.yaml", "nothing\n");
	npl_diag_source(&d, "f.yaml", text);
	npl_error(&d, &(struct npl_loc){"f.yaml", 14, 5}, "bad key");
	npl_error(&d, &(struct npl_loc){"f.yaml", 1, 1}, "first");
	npl_error(&d, &(struct npl_loc){"f.yaml", 15, 2}, "tab");
	npl_error(&d, &(struct npl_loc){"f.yaml", 16, 3}, "control");
	npl_error(&d, &(struct npl_loc){"f.yaml", 17, 1}, "empty line");
	npl_error(&d, &(struct npl_loc){"f.yaml", 18, 6}, "no newline");
	npl_error(&d, &(struct npl_loc){"f.yaml", 19, 1}, "past the end");
	npl_error(&d, &(struct npl_loc){"f.yaml", 14, 0}, "no column");
	npl_error(&d, &(struct npl_loc){"unknown.yaml", 1, 1}, "unknown file");
	npl_error(&d, &(struct npl_loc){"other.yaml", 1, 3}, "other");

	expect_format(&d, 0, 1, "f.yaml:14:5: error: bad key\n"
				"   14 |     key: value\n"
				"      |     ^");
	expect_format(&d, 0, 0, "f.yaml:14:5: error: bad key");
	expect_format(&d, 1, 1, "f.yaml:1:1: error: first\n"
				"    1 | l1\n"
				"      | ^");
	expect_format(&d, 2, 1, "f.yaml:15:2: error: tab\n"
				"   15 | \\x09x: y\n"
				"      |     ^");
	expect_format(&d, 3, 1, "f.yaml:16:3: error: control\n"
				"   16 | a\\x01b\n"
				"      |      ^");
	expect_format(&d, 4, 1, "f.yaml:17:1: error: empty line\n"
				"   17 | \n"
				"      | ^");
	expect_format(&d, 5, 1, "f.yaml:18:6: error: no newline\n"
				"   18 | last line\n"
				"      |      ^");
	expect_format(&d, 6, 1, "f.yaml:19:1: error: past the end");
	expect_format(&d, 7, 1, "f.yaml:14: error: no column");
	expect_format(&d, 8, 1, "unknown.yaml:1:1: error: unknown file");
	expect_format(&d, 9, 1, "other.yaml:1:3: error: other\n"
				"    1 | nothing\n"
				"      |   ^");
	/* the latest text registered under a name wins */
	npl_diag_source(&d, "other.yaml", "changed\n");
	expect_format(&d, 9, 1, "other.yaml:1:3: error: other\n"
				"    1 | changed\n"
				"      |   ^");
	npl_diag_release(&d);
	assert_int_equal(d.nnames, 0);
	assert_null(d.names);
	assert_null(d.slots);
}

/* Thousands of files: every name keeps its own text through the hash's growth. */
static void test_diag_many_sources(void **state)
{
	struct npl_diag d = NPL_DIAG_INIT;
	static char texts[3000][16];
	char name[32], want[96], *got;
	int i;

	(void)state;
	for (i = 0; i < 3000; i++) {
		snprintf(name, sizeof(name), "r/%d.yaml", i);
		snprintf(texts[i], sizeof(texts[i]), "line %d\n", i);
		npl_diag_source(&d, name, texts[i]);
	}
	assert_int_equal(d.nnames, 3000);
	for (i = 0; i < 3000; i += 7) {
		struct npl_loc loc;

		snprintf(name, sizeof(name), "r/%d.yaml", i);
		loc = (struct npl_loc){name, 1, 1};
		npl_error(&d, &loc, "e");
		got = npl_diag_format(&d, &d.v[d.n - 1], 1);
		snprintf(want, sizeof(want), "r/%d.yaml:1:1: error: e\n    1 | line %d\n      | ^", i, i);
		assert_string_equal(got, want);
		free(got);
	}
	assert_int_equal(d.nnames, 3000);   /* the locations reused the names */
	npl_diag_release(&d);
}

static char *flush_to_string(struct npl_diag *d)
{
	FILE *fp = tmpfile();
	char *s;
	long n;

	assert_non_null(fp);
	npl_diag_flush(d, fp);
	n = ftell(fp);
	assert_true(n >= 0);
	rewind(fp);
	s = calloc(1, (size_t)n + 1);
	assert_non_null(s);
	assert_int_equal(fread(s, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	return s;
}

static void test_diag_flush(void **state)
{
	struct npl_diag d = NPL_DIAG_INIT;
	char *s;

	(void)state;
	npl_diag_source(&d, "f.yaml", "ab: c\n");
	npl_error(&d, &(struct npl_loc){"f.yaml", 1, 2}, "one");
	npl_warn(&d, NULL, "two");
	s = flush_to_string(&d);
	assert_string_equal(s, "npulaunch: f.yaml:1:2: error: one\n"
			       "    1 | ab: c\n"
			       "      |  ^\n"
			       "npulaunch: warning: two\n");
	free(s);
	assert_int_equal(d.printed, 2);
	/* only what was not printed yet */
	s = flush_to_string(&d);
	assert_string_equal(s, "");
	free(s);
	d.no_caret = 1;
	npl_error(&d, &(struct npl_loc){"f.yaml", 1, 4}, "three");
	s = flush_to_string(&d);
	assert_string_equal(s, "npulaunch: f.yaml:1:4: error: three\n");
	free(s);
	assert_int_equal(d.printed, 3);
	npl_diag_release(&d);
}

/* The SGLang version against a recipe's floor, as pip orders them. */
/* npl_utf8_invalid: the first bad byte wherever it is, ASCII runs read eight bytes at a time
 * (a bad byte, a character cut short by the end, or a valid one at every offset). */
static void test_utf8_invalid(void **state)
{
	char buf[40];
	size_t at, n;

	(void)state;
	for (n = 0; n <= 24; n++) {
		memset(buf, 'a', sizeof(buf));
		assert_int_equal(npl_utf8_invalid(buf, n), n);
		for (at = 0; at < n; at++) {
			memset(buf, 'a', sizeof(buf));
			buf[at] = (char)0xff;                       /* never in UTF-8 */
			assert_int_equal(npl_utf8_invalid(buf, n), at);
			buf[at] = (char)0xc3;                       /* the first byte of a pair */
			assert_int_equal(npl_utf8_invalid(buf, at + 1), at);   /* cut short */
			if (at + 1 < n) {
				buf[at + 1] = (char)0xa9;           /* U+00E9: valid */
				assert_int_equal(npl_utf8_invalid(buf, n), n);
			}
		}
	}
}

static void test_version_cmp(void **state)
{
	(void)state;
	assert_int_equal(npl_version_cmp("0.5.16", "0.5.16"), 0);
	assert_int_equal(npl_version_cmp("0.5.15", "0.5.16"), -1);
	assert_int_equal(npl_version_cmp("0.5.6", "0.5.16"), -1);   /* numbers, not text */
	assert_int_equal(npl_version_cmp("0.5.17", "0.5.16"), 1);
	assert_int_equal(npl_version_cmp("0.6", "0.5.16"), 1);
	assert_int_equal(npl_version_cmp("0.5", "0.5.0"), 0);
	assert_int_equal(npl_version_cmp("v0.5.16", "0.5.16"), 0);
	assert_int_equal(npl_version_cmp("0.5.16.post1", "0.5.16"), 0);
	assert_int_equal(npl_version_cmp("0.5.16+npu", "0.5.16"), 0);
	assert_int_equal(npl_version_cmp("0.5.16rc1", "0.5.16"), -1);   /* a pre-release is below */
	assert_int_equal(npl_version_cmp("0.5.16.dev3", "0.5.16"), -1);
	assert_int_equal(npl_version_cmp("0.5.17rc1", "0.5.16"), 1);
	assert_int_equal(npl_version_cmp("unknown", "0.5.16"), -2);
	assert_int_equal(npl_version_cmp("", "0.5.16"), -2);
	assert_int_equal(npl_version_cmp("0.5.16", ""), -2);
	/* the start of an image tag */
	assert_int_equal(npl_version_cmp("v0.5.6-cann8.3.rc1-a3", "0.5.16"), -1);
	assert_int_equal(npl_version_cmp("v0.5.16-cann8.5.0-910b", "0.5.16"), 0);
	assert_int_equal(npl_version_cmp("main-cann8.5.0-a3", "0.5.16"), -2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edit_distance),
		cmocka_unit_test(test_did_you_mean),
		cmocka_unit_test(test_shell_safe),
		cmocka_unit_test(test_shell_quote),
		cmocka_unit_test(test_shell_quote_round_trip),
		cmocka_unit_test(test_starts_ends_with),
		cmocka_unit_test(test_strcaseeq),
		cmocka_unit_test(test_parse_uint),
		cmocka_unit_test(test_parse_number),
		cmocka_unit_test(test_read_file),
		cmocka_unit_test(test_read_file_empty),
		cmocka_unit_test(test_read_file_refuses),
		cmocka_unit_test(test_read_file_limit),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_mkdirs),
		cmocka_unit_test(test_mkdirs_empty_path),
		cmocka_unit_test(test_buf_add_and_printf),
		cmocka_unit_test(test_buf_printf_at_the_edge),
		cmocka_unit_test(test_buf_json_string),
		cmocka_unit_test(test_fmt_int),
		cmocka_unit_test(test_buf_reset_and_detach),
		cmocka_unit_test(test_buf_detach_empty),
		cmocka_unit_test(test_arena_alloc_zeroed),
		cmocka_unit_test(test_arena_strings),
		cmocka_unit_test(test_arena_grow),
		cmocka_unit_test(test_arena_many_and_large),
		cmocka_unit_test(test_arena_mapped_chunks_are_zero),
		cmocka_unit_test(test_diag_counts),
		cmocka_unit_test(test_diag_format),
		cmocka_unit_test(test_diag_many_sources),
		cmocka_unit_test(test_diag_caret),
		cmocka_unit_test(test_diag_flush),
		cmocka_unit_test(test_version_cmp),
		cmocka_unit_test(test_utf8_invalid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
