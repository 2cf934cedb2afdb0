/* test_diag.c: diag.h's one message per problem: a message identical to a recorded one (same
 * severity, place and text) is dropped, the counts are distinct problems, the order is that of
 * first appearance; the rest of diag.h is in test_util.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "npulaunch/diag.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_repeats_dropped),
		cmocka_unit_test(test_near_repeats_kept),
		cmocka_unit_test(test_repeat_after_flush),
		cmocka_unit_test(test_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
