/* test_schema.c: schema.c, documents against a JSON Schema held as data: the compiled-in
 * schemas use only keywords the validator knows (a keyword it does not know is an error, so the
 * schema file and the C cannot silently disagree), each kind of problem is located by its JSON
 * path with a plain message, and a rendered manifest passes (issue 25, 5). The schema file and
 * the C agree on mutated manifests: tests/cli/test_manifest.sh, against python3-jsonschema. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "npulaunch/embedded.h"
#include "npulaunch/schema.h"

#include "unit.h"

/* The message of checking doc (JSON text) against schema (JSON text), "" when it holds. */
static const char *verdict(const char *schema, const char *doc)
{
	const char *out = "";
	struct npl_diag d = NPL_DIAG_INIT;
	cJSON *s = cJSON_Parse(schema), *v = cJSON_Parse(doc);
	struct npl_schema_doc docs[1] = {{"t.schema.json", s}};

	assert_non_null(s);
	assert_non_null(v);
	if (npl_schema_validate(docs, 1, v, "m.json", &d)) {
		assert_int_equal(d.n, 1);
		out = npl_test_msg(&d, 0); /* its own static copy: outlives the release below */
	} else {
		assert_int_equal(d.n, 0);
	}
	npl_diag_release(&d);
	cJSON_Delete(s);
	cJSON_Delete(v);
	return out;
}

static void test_embedded_known(void **state)
{
	struct npl_schema_doc docs[8];
	struct npl_diag d = NPL_DIAG_INIT;
	int n = 0, i;

	(void)state;
	assert_true(npl_embedded_schemas_count >= 2);
	for (i = 0; npl_embedded_schemas[i].name; i++) {
		const char *slash = strrchr(npl_embedded_schemas[i].name, '/');

		docs[n].name = slash ? slash + 1 : npl_embedded_schemas[i].name;
		assert_non_null(docs[n].schema = cJSON_Parse(npl_embedded_schemas[i].data));
		n++;
	}
	assert_int_equal(npl_schema_check(docs, n, &d), 0);
	assert_int_equal(d.n, 0);
	for (i = 0; i < n; i++)
		cJSON_Delete((cJSON *)docs[i].schema);
}

static void test_unknown_keyword(void **state)
{
	struct npl_diag d = NPL_DIAG_INIT;
	cJSON *s = cJSON_Parse("{\"type\": \"object\", \"properties\": {\"a\": {\"anyOf\": [{\"type\": \"string\"}]},"
			       " \"b\": {\"$ref\": \"#/$defs/none\"}, \"c\": {\"pattern\": \"(\"}}}");
	struct npl_schema_doc docs[1] = {{"t.schema.json", s}};

	(void)state;
	assert_int_equal(npl_schema_check(docs, 1, &d), -1);
	assert_int_equal(d.n, 3);
	assert_string_equal(npl_test_msg(&d, 0), "error: t.schema.json: the keyword anyOf is not one the validator knows");
	assert_string_equal(npl_test_msg(&d, 1), "error: t.schema.json: the reference #/$defs/none names nothing");
	assert_string_equal(npl_test_msg(&d, 2), "error: t.schema.json: a pattern does not compile");
	npl_diag_release(&d);
	cJSON_Delete(s);
	/* and validating with it refuses rather than ignores */
	assert_string_equal(verdict("{\"anyOf\": []}", "1"),
			    "m.json: error: .: the schema's keyword anyOf is not one the validator knows");
}

static void test_messages(void **state)
{
	const char *obj = "{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"a\"],"
			  " \"properties\": {\"a\": {\"type\": \"array\", \"maxItems\": 2, \"items\": {\"type\": [\"string\", \"null\"]}},"
			  " \"n\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 9}, \"e\": {\"enum\": [\"x\", \"y\", null]},"
			  " \"p\": {\"type\": \"string\", \"pattern\": \"^.+:[0-9]+$\"}, \"k\": {\"const\": true}},"
			  " \"dependentRequired\": {\"n\": [\"e\"]}}";

	(void)state;
	assert_string_equal(verdict(obj, "{\"a\": [\"s\", null]}"), "");
	assert_string_equal(verdict(obj, "{\"a\": [\"s\", 5]}"),
			    "m.json: error: .a[1]: a string or null is expected, not the integer 5");
	assert_string_equal(verdict(obj, "{\"a\": [1, 2, 3]}"), "m.json: error: .a: at most 2 items are expected, not 3");
	assert_string_equal(verdict(obj, "{}"), "m.json: error: .a: missing: the field is required");
	assert_string_equal(verdict(obj, "{\"a\": [], \"z-1\": 1}"),
			    "m.json: error: .z-1: no such field here (a field of a newer npulaunch, or an edit?)");
	assert_string_equal(verdict(obj, "{\"a\": [], \"a b\": 1}"),
			    "m.json: error: [\"a b\"]: no such field here (a field of a newer npulaunch, or an edit?)");
	assert_string_equal(verdict(obj, "{\"a\": [], \"n\": 1.5, \"e\": \"x\"}"),
			    "m.json: error: .n: an integer is expected, not the number 1.5");
	assert_string_equal(verdict(obj, "{\"a\": [], \"n\": 10, \"e\": \"x\"}"),
			    "m.json: error: .n: a number <= 9 is expected, not the integer 10");
	assert_string_equal(verdict(obj, "{\"a\": [], \"n\": 1e300, \"e\": \"x\"}"),
			    "m.json: error: .n: a number <= 9 is expected, not the integer 1e+300");
	assert_string_equal(verdict(obj, "{\"a\": [], \"n\": 1}"), "m.json: error: .n: needs the field \"e\" beside it");
	assert_string_equal(verdict(obj, "{\"a\": [], \"e\": \"z\"}"),
			    "m.json: error: .e: \"x\", \"y\" or null is expected, not \"z\"");
	assert_string_equal(verdict(obj, "{\"a\": [], \"k\": 1}"), "m.json: error: .k: true is expected, not the integer 1");
	assert_string_equal(verdict(obj, "{\"a\": [], \"p\": \"a:1\"}"), "");
	/* ECMA-262's reading: '.' matches no newline, $ only at the end */
	assert_string_equal(verdict(obj, "{\"a\": [], \"p\": \"a\\n:1\"}"),
			    "m.json: error: .p: a string matching ^.+:[0-9]+$ is expected, not \"a\\x0a:1\"");
	assert_string_equal(verdict(obj, "{\"a\": [], \"p\": \"a:1\\nb\"}"),
			    "m.json: error: .p: a string matching ^.+:[0-9]+$ is expected, not \"a:1\\x0ab\"");
	assert_string_equal(verdict(obj, "[]"), "m.json: error: .: an object is expected, not an array");
	/* a key twice: readers differ on which counts (cJSON the first, Python the last) */
	assert_string_equal(verdict(obj, "{\"a\": [], \"n\": 1, \"e\": \"x\", \"n\": 2}"),
			    "m.json: error: .n: the key is given twice (which one counts depends on the reader)");
	assert_string_equal(verdict(obj, "{\"a\": [{\"x\": 1, \"x\": 1}]}"),
			    "m.json: error: .a[0].x: the key is given twice (which one counts depends on the reader)");
	/* bytes that are not UTF-8 are no JSON string */
	assert_string_equal(verdict("{\"type\": \"string\"}", "\"\xff\""),
			    "m.json: error: .: a string is expected in UTF-8, not bytes that are not UTF-8");
}

static void test_one_of(void **state)
{
	const char *s = "{\"$defs\": {\"srv\": {\"type\": \"object\", \"required\": [\"role\", \"n\"], \"additionalProperties\": false,"
			" \"properties\": {\"role\": {\"const\": \"server\"}, \"n\": {\"type\": \"integer\"}}},"
			" \"cli\": {\"type\": \"object\", \"required\": [\"role\"], \"additionalProperties\": false,"
			" \"properties\": {\"role\": {\"const\": \"client\"}, \"url\": {\"type\": \"string\"}}}},"
			" \"type\": \"array\", \"items\": {\"oneOf\": [{\"$ref\": \"#/$defs/srv\"}, {\"$ref\": \"#/$defs/cli\"},"
			" {\"type\": \"null\"}]}}";

	(void)state;
	assert_string_equal(verdict(s, "[{\"role\": \"server\", \"n\": 1}, {\"role\": \"client\"}, null]"), "");
	/* the form that got furthest speaks */
	assert_string_equal(verdict(s, "[{\"role\": \"client\", \"url\": 5}]"),
			    "m.json: error: [0].url: a string is expected, not the integer 5");
	assert_string_equal(verdict(s, "[{\"role\": \"server\", \"n\": \"1\"}]"),
			    "m.json: error: [0].n: an integer is expected, not \"1\"");
	/* no form of that type: the types there are, once each */
	assert_string_equal(verdict(s, "[5]"), "m.json: error: [0]: an object or null is expected, not the integer 5");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_embedded_known),
		cmocka_unit_test(test_unknown_keyword),
		cmocka_unit_test(test_messages),
		cmocka_unit_test(test_one_of),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
