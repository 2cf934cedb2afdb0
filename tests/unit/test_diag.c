/* test_diag.c: diag.h's one message per problem: a message identical to a recorded one (same
 * severity, place and text) is dropped, the counts are distinct problems, the order is that of
 * first appearance; what reaches the terminal is escaped, cut to a sane width and, past a
 * limit, counted rather than printed, in time linear in the input; the rest of diag.h is in
 * test_util.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "npulaunch/diag.h"
#include "npulaunch/text.h"

#include "unit.h"

static void test_repeats_dropped(void **state)
{
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_loc l = {"r.yaml", 18, 7};
	char name[] = "r.yaml";
	int i;

	(void)state;
	/* four instances of a role, each reporting the same two problems */
	for (i = 0; i < 4; i++) {
		assert_int_equal(npl_error(&d, &l, "flag '%s' of %s is derived by a rule", "port", "prefill"), -1);
		npl_warn(&d, NULL, "careful");
	}
	assert_int_equal(d.n, 2);
	assert_int_equal(d.errors, 1);
	assert_int_equal(d.warnings, 1);
	assert_int_equal(d.repeats, 6);
	assert_string_equal(npl_test_msg(&d, 0), "r.yaml:18:7: error: flag 'port' of prefill is derived by a rule");
	assert_string_equal(npl_test_msg(&d, 1), "warning: careful");
	/* the same name from another string is the same place */
	npl_error(&d, &(struct npl_loc){name, 18, 7}, "flag 'port' of prefill is derived by a rule");
	assert_int_equal(d.n, 2);
	assert_int_equal(d.errors, 1);
	npl_diag_release(&d);
	assert_int_equal(d.repeats, 0);
	assert_null(d.eslots);
	/* a released diag starts afresh */
	npl_error(&d, &l, "flag 'port' of prefill is derived by a rule");
	assert_int_equal(d.n, 1);
	assert_int_equal(d.errors, 1);
	npl_diag_release(&d);
}

static void test_near_repeats_kept(void **state)
{
	struct npl_diag d = NPL_DIAG_INIT;

	(void)state;
	npl_error(&d, &(struct npl_loc){"f.yaml", 3, 7}, "bad");
	npl_warn(&d, &(struct npl_loc){"f.yaml", 3, 7}, "bad");           /* severity */
	npl_diag_add(&d, NPL_NOTE, &(struct npl_loc){"f.yaml", 3, 7}, "bad");
	npl_error(&d, &(struct npl_loc){"g.yaml", 3, 7}, "bad");          /* file */
	npl_error(&d, &(struct npl_loc){"f.yaml", 4, 7}, "bad");          /* line */
	npl_error(&d, &(struct npl_loc){"f.yaml", 3, 8}, "bad");          /* column */
	npl_error(&d, &(struct npl_loc){"f.yaml", 3, 7}, "bad!");         /* text */
	npl_error(&d, NULL, "bad");                                        /* nowhere */
	npl_error(&d, &(struct npl_loc){NULL, 3, 7}, "bad");              /* no file, a line */
	assert_int_equal(d.n, 9);
	assert_int_equal(d.errors, 7);
	assert_int_equal(d.warnings, 1);
	assert_int_equal(d.repeats, 0);
	/* each of them again, in another order: nothing new */
	npl_error(&d, &(struct npl_loc){NULL, 3, 7}, "bad");
	npl_error(&d, NULL, "bad");
	npl_error(&d, &(struct npl_loc){NULL, 0, 0}, "bad");   /* nowhere, too */
	npl_error(&d, &(struct npl_loc){"f.yaml", 3, 7}, "bad!");
	npl_error(&d, &(struct npl_loc){"f.yaml", 3, 8}, "bad");
	npl_error(&d, &(struct npl_loc){"f.yaml", 4, 7}, "bad");
	npl_error(&d, &(struct npl_loc){"g.yaml", 3, 7}, "bad");
	npl_diag_add(&d, NPL_NOTE, &(struct npl_loc){"f.yaml", 3, 7}, "bad");
	npl_warn(&d, &(struct npl_loc){"f.yaml", 3, 7}, "bad");
	npl_error(&d, &(struct npl_loc){"f.yaml", 3, 7}, "bad");
	assert_int_equal(d.n, 9);
	assert_int_equal(d.errors, 7);
	assert_int_equal(d.warnings, 1);
	assert_int_equal(d.repeats, 10);
	/* in the order of first appearance */
	assert_string_equal(npl_test_msg(&d, 0), "f.yaml:3:7: error: bad");
	assert_string_equal(npl_test_msg(&d, 1), "f.yaml:3:7: warning: bad");
	assert_string_equal(npl_test_msg(&d, 2), "f.yaml:3:7: note: bad");
	assert_string_equal(npl_test_msg(&d, 3), "g.yaml:3:7: error: bad");
	assert_string_equal(npl_test_msg(&d, 6), "f.yaml:3:7: error: bad!");
	assert_string_equal(npl_test_msg(&d, 7), "error: bad");
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

/* A repeat of a message printed already is not printed again. */
static void test_repeat_after_flush(void **state)
{
	struct npl_diag d = NPL_DIAG_INIT;
	char *s;

	(void)state;
	d.no_caret = 1;
	npl_error(&d, &(struct npl_loc){"f.yaml", 1, 2}, "one");
	npl_error(&d, &(struct npl_loc){"f.yaml", 1, 2}, "one");
	s = flush_to_string(&d);
	assert_string_equal(s, "npulaunch: f.yaml:1:2: error: one\n");
	free(s);
	npl_error(&d, &(struct npl_loc){"f.yaml", 1, 2}, "one");
	npl_warn(&d, NULL, "two");
	npl_error(&d, &(struct npl_loc){"f.yaml", 1, 2}, "one");
	s = flush_to_string(&d);
	assert_string_equal(s, "npulaunch: warning: two\n");
	free(s);
	assert_int_equal(d.errors, 1);
	assert_int_equal(d.warnings, 1);
	npl_diag_release(&d);
}

/* Thousands of distinct messages, each repeated: the hash keeps them through its growth. */
static void test_many(void **state)
{
	struct npl_diag d = NPL_DIAG_INIT;
	char name[32];
	int i, round;

	(void)state;
	for (round = 0; round < 3; round++)
		for (i = 0; i < 5000; i++) {
			snprintf(name, sizeof(name), "r/%d.yaml", i % 50);
			npl_error(&d, &(struct npl_loc){name, i / 50 + 1, 1}, "problem %d", i % 7);
		}
	assert_int_equal(d.n, 5000);
	assert_int_equal(d.errors, 5000);
	assert_int_equal(d.repeats, 10000);
	assert_string_equal(npl_test_msg(&d, 0), "r/0.yaml:1:1: error: problem 0");
	assert_string_equal(npl_test_msg(&d, 4999), "r/49.yaml:100:1: error: problem 1");
	assert_int_equal(d.nnames, 50);
	npl_diag_release(&d);
}

/* Control characters in a message (from a value, a key, a file name) and in a source line
 * reach the terminal escaped; UTF-8 passes as it is. */
static void test_escaped(void **state)
{
	struct npl_diag d = NPL_DIAG_INIT;
	char *s;

	(void)state;
	npl_diag_source(&d, "r\x1b]0;x\a.yaml", "id: \x1b[2J\xc2\x9b" "1m 모델\r\n");
	npl_error(&d, &(struct npl_loc){"r\x1b]0;x\a.yaml", 1, 10}, "unknown key '%s' (모델)", "\x1b[2J\x7f");
	s = npl_diag_format(&d, &d.v[0], 1);
	assert_string_equal(s, "r\\x1b]0;x\\x07.yaml:1:10: error: unknown key '\\x1b[2J\\x7f' (모델)\n"
			       "    1 | id: \\x1b[2J\\u009b1m 모델\n"
			       "      |                  ^");
	free(s);
	/* columns count characters, as libyaml does: a UTF-8 character is one */
	npl_diag_source(&d, "k.yaml", "이름: 값\n");
	npl_error(&d, &(struct npl_loc){"k.yaml", 1, 5}, "bad value");
	s = npl_diag_format(&d, &d.v[1], 1);
	assert_string_equal(s, "k.yaml:1:5: error: bad value\n"
			       "    1 | 이름: 값\n"
			       "      |     ^");
	free(s);
	npl_diag_release(&d);
}

/* A long message is cut in its middle; a long source line shows a window around the column,
 * the caret still under it. */
static void test_cut(void **state)
{
	struct npl_diag d = NPL_DIAG_INIT;
	size_t n = 50000;
	char *key = malloc(n + 1), *text = malloc(n + 16), *s, *want;
	size_t i;

	(void)state;
	assert_non_null(key);
	assert_non_null(text);
	memset(key, 'k', n);
	key[n] = '\0';
	snprintf(text, n + 16, "%s: 1\n", key);
	npl_diag_source(&d, "r.yaml", text);
	npl_error(&d, &(struct npl_loc){"r.yaml", 1, 1}, "unknown key '%s' in a model", key);
	npl_error(&d, &(struct npl_loc){"r.yaml", 1, 40000}, "here");
	npl_error(&d, &(struct npl_loc){"r.yaml", 1, (int)n + 1}, "the colon");

	s = npl_diag_format(&d, &d.v[0], 0);
	assert_true(strlen(s) < 1200);
	assert_true(npl_starts_with(s, "r.yaml:1:1: error: unknown key 'kkkk"));
	assert_non_null(strstr(s, "kkk...kkk"));
	assert_true(npl_ends_with(s, "kkk' in a model"));
	free(s);

	/* from the start: the first 120 characters */
	want = malloc(1000);
	assert_non_null(want);
	s = npl_diag_format(&d, &d.v[0], 1);
	i = strlen(s);
	assert_true(i < 1500);
	snprintf(want, 1000, "\n    1 | %.120s...\n      | ^", key);
	assert_true(npl_ends_with(s, want));
	free(s);
	/* in the middle: 60 characters either side */
	s = npl_diag_format(&d, &d.v[1], 1);
	snprintf(want, 1000, "r.yaml:1:40000: error: here\n    1 | ...%.120s...\n      | %63s^", key, "");
	assert_string_equal(s, want);
	free(s);
	/* near the end */
	s = npl_diag_format(&d, &d.v[2], 1);
	snprintf(want, 1000, "r.yaml:1:%zu: error: the colon\n    1 | ...%.60s: 1\n      | %63s^", n + 1, key, "");
	assert_string_equal(s, want);
	free(s);
	free(want);
	free(key);
	npl_diag_release(&d);
	free(text);
}

static int count(const char *s, const char *what)
{
	int n = 0;

	for (; (s = strstr(s, what)); s += strlen(what))
		n++;
	return n;
}

/* A flush prints at most NPL_DIAG_SHOWN messages and counts the rest in one line; the next
 * flush (a later stage) prints its own. */
static void test_flush_limit(void **state)
{
	struct npl_diag d = NPL_DIAG_INIT;
	int i;
	char *s;

	(void)state;
	npl_diag_source(&d, "r.yaml", "a: 1\n");
	for (i = 0; i < 240; i++)
		npl_error(&d, &(struct npl_loc){"r.yaml", 1, i + 1}, "problem %d", i);
	for (i = 0; i < 10; i++)
		npl_warn(&d, NULL, "odd %d", i);
	s = flush_to_string(&d);
	assert_int_equal(count(s, "npulaunch: "), NPL_DIAG_SHOWN + 1);
	assert_int_equal(count(s, "error: problem"), NPL_DIAG_SHOWN);
	assert_non_null(strstr(s, "error: problem 99\n"));
	assert_null(strstr(s, "problem 100\n"));
	assert_true(npl_ends_with(s, "\nnpulaunch: 150 more messages not shown (140 errors, 10 warnings)\n"));
	free(s);
	assert_int_equal(d.printed, 250);
	npl_error(&d, NULL, "later");
	s = flush_to_string(&d);
	assert_string_equal(s, "npulaunch: error: later\n");
	free(s);
	npl_diag_release(&d);
}

/* Messages recorded apart in held diags and replayed in order are those recorded in turn: a
 * repeat of an earlier part's message dropped, groups said once, and each part's flushes where
 * they were (each prints at most NPL_DIAG_SHOWN: one flush of all would count the rest). */
static void record_part(struct npl_diag *d, int part)
{
	int i;

	npl_warn(d, NULL, "said by every part");
	npl_diag_grouped(d, NPL_WARNING, NULL, "g", part ? "later" : "first", "grouped %d", part);
	for (i = 0; i < 60; i++)
		npl_error(d, &(struct npl_loc){"r.yaml", part + 1, i + 1}, "problem %d of part %d", i, part);
	npl_diag_flush(d, stderr);
	npl_warn(d, NULL, "after the flush of part %d", part);
}

static void test_replay(void **state)
{
	struct npl_diag one = NPL_DIAG_INIT, all = NPL_DIAG_INIT, part[2] = {NPL_DIAG_INIT, NPL_DIAG_INIT};
	char *want, *got, *w = NULL, *g = NULL;
	size_t nw = 0, ng = 0;
	FILE *fw = open_memstream(&w, &nw), *fg = open_memstream(&g, &ng);
	int i;

	(void)state;
	assert_non_null(fw);
	assert_non_null(fg);
	for (i = 0; i < 2; i++) {
		npl_warn(&one, NULL, "said by every part");
		npl_diag_grouped(&one, NPL_WARNING, NULL, "g", i ? "later" : "first", "grouped %d", i);
		for (int k = 0; k < 60; k++)
			npl_error(&one, &(struct npl_loc){"r.yaml", i + 1, k + 1}, "problem %d of part %d", k, i);
		npl_diag_flush(&one, fw);
		npl_warn(&one, NULL, "after the flush of part %d", i);
		part[i].hold = 1;
		record_part(&part[i], i);
		assert_int_equal(part[i].nmarks, 1);
	}
	npl_diag_flush(&one, fw);
	npl_diag_flush_groups(&one, fw);
	for (i = 0; i < 2; i++)
		npl_diag_replay(&all, &part[i], fg);
	npl_diag_flush(&all, fg);
	npl_diag_flush_groups(&all, fg);
	fclose(fw);
	fclose(fg);
	want = w;
	got = g;
	assert_string_equal(got, want);
	assert_null(strstr(got, "not shown"));
	assert_int_equal(count(got, "said by every part"), 1);
	assert_int_equal(all.errors, one.errors);
	assert_int_equal(all.warnings, one.warnings);
	assert_int_equal(all.repeats, one.repeats);
	free(w);
	free(g);
	for (i = 0; i < 2; i++)
		npl_diag_release(&part[i]);
	npl_diag_release(&one);
	npl_diag_release(&all);
}

/* A caret costs the line it shows, not a scan of the file: 200,000 messages on a file of
 * 200,000 lines format at once, in any order (this hangs, not fails, if it is quadratic). */
static void test_carets_linear(void **state)
{
	struct npl_diag d = NPL_DIAG_INIT;
	int i, n = 200000;
	char *text = malloc((size_t)n * 4 + 1), *s, want[64];

	(void)state;
	assert_non_null(text);
	for (i = 0; i < n; i++)
		memcpy(text + 4 * i, "---\n", 4);
	text[4 * n] = '\0';
	alarm(20);
	npl_diag_source(&d, "docs.yaml", text);
	for (i = 0; i < n; i++)
		npl_error(&d, &(struct npl_loc){"docs.yaml", i + 1, 1}, "not a mapping");
	for (i = 0; i < n; i++) {
		int k = i % 2 ? i : n - 1 - i;   /* forwards and backwards */

		s = npl_diag_format(&d, &d.v[k], 1);
		snprintf(want, sizeof(want), "\n%5d | ---\n      | ^", k + 1);
		assert_true(npl_ends_with(s, want));
		free(s);
	}
	alarm(0);
	npl_diag_release(&d);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_repeats_dropped),
		cmocka_unit_test(test_near_repeats_kept),
		cmocka_unit_test(test_repeat_after_flush),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_escaped),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_flush_limit),
		cmocka_unit_test(test_carets_linear),
		cmocka_unit_test(test_replay),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
