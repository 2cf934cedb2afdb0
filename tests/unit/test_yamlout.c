/* test_yamlout.c: YAML written by yamlout.h reads back, by libyaml (a YAML 1.1 reader, as PyYAML
 * and go-yaml are: U+0085, U+2028 and U+2029 end a line), as exactly what was written: strings
 * with Unicode line breaks, controls, DEL and C1 controls, alone and in lines of text (which
 * would be a literal block), as values and as keys; none of those characters is written raw;
 * text that is not UTF-8 is refused; comments hold any text on their own lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "npulaunch/arena.h"
#include "npulaunch/buf.h"
#include "npulaunch/diag.h"
#include "npulaunch/yaml.h"
#include "npulaunch/yamlout.h"

/* the characters a YAML 1.1 reader takes for a line break, or that are not YAML text raw */
static const char *const hostile[] = {
	"\xc2\x85",     /* U+0085 NEL */
	"\xe2\x80\xa8", /* U+2028 LINE SEPARATOR */
	"\xe2\x80\xa9", /* U+2029 PARAGRAPH SEPARATOR */
	"\xc2\x80",     /* U+0080, a C1 control */
	"\xc2\x9b",     /* U+009B CSI */
	"\x7f",         /* DEL */
	"\x1b",         /* ESC */
	"\r",
	"\t",
	"\xef\xbb\xbf", /* U+FEFF */
};

/* 1 when out holds one of the characters above raw (a tab aside, which YAML text may hold) */
static int raw_hostile(const char *out)
{
	size_t i;

	for (i = 0; i < sizeof(hostile) / sizeof(*hostile); i++)
		if (strcmp(hostile[i], "\t") && strstr(out, hostile[i]))
			return 1;
	return 0;
}

/* {key: value} written and read back: the same key and value, and nothing else */
static void round_trip(const char *key, const char *value)
{
	cJSON *docs = cJSON_CreateArray(), *doc = cJSON_CreateObject();
	struct npl_buf b = NPL_BUF_INIT;
	struct npl_arena a;
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_ynode **v;
	int n;

	cJSON_AddItemToObject(doc, key, cJSON_CreateString(value));
	cJSON_AddItemToObject(doc, "after", cJSON_CreateString("x"));
	cJSON_AddItemToArray(docs, doc);
	assert_int_equal(npl_yamlout_docs(&b, docs), 0);
	assert_false(raw_hostile(npl_buf_str(&b)));
	npl_arena_init(&a);
	if (npl_yaml_load(&a, "t.yaml", npl_buf_str(&b), b.len, &v, &n, &d))
		fail_msg("not read back: %s\n%s", d.n ? d.v[0].msg : "?", npl_buf_str(&b));
	assert_int_equal(n, 1);
	assert_int_equal(v[0]->kind, NPL_YMAP);
	assert_int_equal(v[0]->n, 2);
	assert_string_equal(v[0]->kids[0]->str, key);
	if (strcmp(v[0]->kids[1]->str, value))
		fail_msg("read back as [%s], written [%s] as\n%s", v[0]->kids[1]->str, value, npl_buf_str(&b));
	assert_string_equal(v[0]->kids[2]->str, "after");
	assert_string_equal(v[0]->kids[3]->str, "x");
	npl_arena_release(&a);
	npl_diag_release(&d);
	npl_buf_release(&b);
	cJSON_Delete(docs);
}

static void test_hostile_strings(void **state)
{
	size_t i;
	char s[256];

	(void)state;
	for (i = 0; i < sizeof(hostile) / sizeof(*hostile); i++) {
		const char *h = hostile[i];

		snprintf(s, sizeof(s), "a%sb", h);
		round_trip("k", s);
		round_trip(s, "v");
		/* lines of text: a literal block but for the character */
		snprintf(s, sizeof(s), "line one%sstill one\nline two\n", h);
		round_trip("k", s);
		snprintf(s, sizeof(s), "line one\n%sline: two\n- three\n", h);
		round_trip("k", s);
		snprintf(s, sizeof(s), "image: a\n%simage: evil\n", h);
		round_trip("k", s);
	}
}

/* lines of plain text stay a literal block */
static void test_literal_kept(void **state)
{
	cJSON *docs = cJSON_CreateArray(), *doc = cJSON_CreateObject();
	struct npl_buf b = NPL_BUF_INIT;

	(void)state;
	cJSON_AddItemToObject(doc, "k", cJSON_CreateString("line one\nline two, é—中文\n"));
	cJSON_AddItemToArray(docs, doc);
	assert_int_equal(npl_yamlout_docs(&b, docs), 0);
	assert_string_equal(npl_buf_str(&b), "k: |\n  line one\n  line two, é—中文\n");
	npl_buf_release(&b);
	cJSON_Delete(docs);
	round_trip("k", "line one\nline two, é—中文\n");
}

static void test_not_utf8_refused(void **state)
{
	static const char *const bad[] = {"a\xff" "b", "a\xc0\xaf" "b", "a\xed\xa0\x80" "b", "a\xe2\x80"};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		cJSON *docs = cJSON_CreateArray(), *doc = cJSON_CreateObject();
		struct npl_buf b = NPL_BUF_INIT;

		cJSON_AddItemToObject(doc, "k", cJSON_CreateString(bad[i]));
		cJSON_AddItemToArray(docs, doc);
		assert_int_equal(npl_yamlout_docs(&b, docs), -1);
		npl_buf_release(&b);
		cJSON_Delete(docs);
	}
}

/* a comment of any text, then a document: the document alone is read */
static void test_comment(void **state)
{
	size_t i;
	char s[256];

	(void)state;
	for (i = 0; i < sizeof(hostile) / sizeof(*hostile); i++) {
		struct npl_buf b = NPL_BUF_INIT;
		struct npl_arena a;
		struct npl_diag d = NPL_DIAG_INIT;
		struct npl_ynode **v;
		int n;

		snprintf(s, sizeof(s), "a note%simage: evil\nsecond line\n\nafter a blank one %s\xff: x", hostile[i], hostile[i]);
		npl_yamlout_comment(&b, s);
		assert_false(raw_hostile(npl_buf_str(&b)));
		assert_null(strstr(npl_buf_str(&b), "\xff"));
		assert_memory_equal(npl_buf_str(&b), "# a note", 8);
		assert_non_null(strstr(npl_buf_str(&b), "\n# second line\n#\n# after a blank one "));
		npl_buf_puts(&b, "k: v\n");
		npl_arena_init(&a);
		if (npl_yaml_load(&a, "t.yaml", npl_buf_str(&b), b.len, &v, &n, &d))
			fail_msg("not read: %s\n%s", d.n ? d.v[0].msg : "?", npl_buf_str(&b));
		assert_int_equal(n, 1);
		assert_int_equal(v[0]->n, 1);
		assert_string_equal(v[0]->kids[0]->str, "k");
		npl_arena_release(&a);
		npl_diag_release(&d);
		npl_buf_release(&b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostile_strings),
		cmocka_unit_test(test_literal_kept),
		cmocka_unit_test(test_not_utf8_refused),
		cmocka_unit_test(test_comment),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
