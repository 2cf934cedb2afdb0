/* test_yaml.c: the strict YAML loader: node kinds, layout, locations, plain/quoted, documents, null/bool helpers, and every rejected construct. */
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

#define YFILE "f.yaml"

struct fx {
	struct npl_arena a;
	struct npl_diag d;
	struct npl_ynode **docs;
	int ndocs;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	npl_arena_init(&f->a);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	npl_diag_release(&f->d);
	npl_arena_release(&f->a);
	free(f);
	return 0;
}

static int load(struct fx *f, const char *text)
{
	return npl_yaml_load(&f->a, YFILE, text, strlen(text), &f->docs, &f->ndocs, &f->d);
}

/* Load text that must parse into exactly ndocs documents. */
static void load_ok(struct fx *f, const char *text, int ndocs)
{
	int rc = load(f, text);

	if (rc != 0 || f->d.n)
		print_error("yaml %s: unexpected error: %s\n", text, f->d.n ? f->d.v[0].msg : "?");
	assert_int_equal(rc, 0);
	assert_int_equal(f->d.n, 0);
	assert_int_equal(f->ndocs, ndocs);
	if (ndocs)
		assert_non_null(f->docs);
}

/* Load text that must fail with exactly one message, at line:col. */
static void load_err_len(struct fx *f, const char *text, size_t len, const char *msg, int line,
			 int col)
{
	int rc;

	npl_diag_release(&f->d);
	f->docs = (struct npl_ynode **)&f->docs;   /* must be reset */
	f->ndocs = 42;
	rc = npl_yaml_load(&f->a, YFILE, text, len, &f->docs, &f->ndocs, &f->d);
	assert_int_equal(rc, -1);
	assert_null(f->docs);
	assert_int_equal(f->ndocs, 0);
	assert_int_equal(f->d.n, 1);
	assert_int_equal(f->d.errors, 1);
	assert_int_equal(f->d.v[0].sev, NPL_ERROR);
	assert_string_equal(f->d.v[0].msg, msg);
	assert_non_null(f->d.v[0].loc.file);
	assert_string_equal(f->d.v[0].loc.file, YFILE);
	assert_int_equal(f->d.v[0].loc.line, line);
	assert_int_equal(f->d.v[0].loc.col, col);
	npl_diag_release(&f->d);
}

static void load_err(struct fx *f, const char *text, const char *msg, int line, int col)
{
	load_err_len(f, text, strlen(text), msg, line, col);
}

static void expect_scalar(const struct npl_ynode *n, const char *str, int plain, int line, int col)
{
	assert_non_null(n);
	assert_int_equal(n->kind, NPL_YSCALAR);
	assert_non_null(n->str);
	assert_string_equal(n->str, str);
	assert_int_equal(n->plain, plain);
	assert_int_equal(n->n, 0);
	assert_string_equal(n->loc.file, YFILE);
	assert_int_equal(n->loc.line, line);
	assert_int_equal(n->loc.col, col);
}

static void expect_coll(const struct npl_ynode *n, enum npl_ykind kind, int count, int line, int col)
{
	assert_non_null(n);
	assert_int_equal(n->kind, kind);
	assert_int_equal(n->n, count);
	assert_string_equal(n->loc.file, YFILE);
	assert_int_equal(n->loc.line, line);
	assert_int_equal(n->loc.col, col);
	if (count)
		assert_non_null(n->kids);
}

static void test_scalar_documents(void **state)
{
	struct fx *f = *state;

	load_ok(f, "hello", 1);
	expect_scalar(f->docs[0], "hello", 1, 1, 1);
	assert_null(f->docs[0]->kids);
	load_ok(f, "\n\n  'quoted here'\n", 1);
	expect_scalar(f->docs[0], "quoted here", 0, 3, 3);
	load_ok(f, "\"esc\\tand\\nnew\\u00e9\"", 1);
	expect_scalar(f->docs[0], "esc\tand\nnew\xc3\xa9", 0, 1, 1);
	/* plain multi-word text and numbers stay text */
	load_ok(f, "  two words  # comment\n", 1);
	expect_scalar(f->docs[0], "two words", 1, 1, 3);
	load_ok(f, "0x10", 1);
	expect_scalar(f->docs[0], "0x10", 1, 1, 1);
}

static void test_mapping_layout(void **state)
{
	struct fx *f = *state;
	const struct npl_ynode *m, *s, *in;

	load_ok(f, "name: demo\n"
		   "port: 8080\n"
		   "flags:\n"
		   "  - a\n"
		   "  - 'b'\n"
		   "nested:\n"
		   "  k: v\n", 1);
	m = f->docs[0];
	expect_coll(m, NPL_YMAP, 4, 1, 1);
	/* key 2i, value 2i+1, in the order written */
	expect_scalar(m->kids[0], "name", 1, 1, 1);
	expect_scalar(m->kids[1], "demo", 1, 1, 7);
	expect_scalar(m->kids[2], "port", 1, 2, 1);
	expect_scalar(m->kids[3], "8080", 1, 2, 7);
	expect_scalar(m->kids[4], "flags", 1, 3, 1);
	s = m->kids[5];
	expect_coll(s, NPL_YSEQ, 2, 4, 3);
	expect_scalar(s->kids[0], "a", 1, 4, 5);
	expect_scalar(s->kids[1], "b", 0, 5, 5);
	expect_scalar(m->kids[6], "nested", 1, 6, 1);
	in = m->kids[7];
	expect_coll(in, NPL_YMAP, 1, 7, 3);
	expect_scalar(in->kids[0], "k", 1, 7, 3);
	expect_scalar(in->kids[1], "v", 1, 7, 6);
	assert_null(in->str);
}

static void test_many_pairs(void **state)
{
	struct fx *f = *state;
	struct npl_buf b = NPL_BUF_INIT;
	const struct npl_ynode *m;
	char key[16], val[16];
	int i;

	/* more pairs than the first allocation of kids */
	for (i = 0; i < 50; i++)
		npl_buf_printf(&b, "k%d: v%d\n", i, i);
	load_ok(f, npl_buf_str(&b), 1);
	m = f->docs[0];
	expect_coll(m, NPL_YMAP, 50, 1, 1);
	for (i = 0; i < 50; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		snprintf(val, sizeof(val), "v%d", i);
		expect_scalar(m->kids[2 * i], key, 1, i + 1, 1);
		expect_scalar(m->kids[2 * i + 1], val, 1, i + 1, i < 10 ? 5 : 6);
	}
	npl_buf_release(&b);
}

static void test_sequences(void **state)
{
	struct fx *f = *state;
	const struct npl_ynode *s, *item;

	load_ok(f, "- name: a\n"
		   "  v: 1\n"
		   "- name: b\n"
		   "- - x\n"
		   "  - y\n"
		   "- \"\"\n"
		   "-\n", 1);
	s = f->docs[0];
	expect_coll(s, NPL_YSEQ, 5, 1, 1);
	item = s->kids[0];
	expect_coll(item, NPL_YMAP, 2, 1, 3);
	expect_scalar(item->kids[0], "name", 1, 1, 3);
	expect_scalar(item->kids[1], "a", 1, 1, 9);
	expect_scalar(item->kids[2], "v", 1, 2, 3);
	expect_scalar(item->kids[3], "1", 1, 2, 6);
	expect_coll(s->kids[1], NPL_YMAP, 1, 3, 3);
	item = s->kids[2];
	expect_coll(item, NPL_YSEQ, 2, 4, 3);
	expect_scalar(item->kids[0], "x", 1, 4, 5);
	expect_scalar(item->kids[1], "y", 1, 5, 5);
	/* quoted empty vs plain empty */
	expect_scalar(s->kids[3], "", 0, 6, 3);
	assert_int_equal(s->kids[4]->kind, NPL_YSCALAR);
	assert_string_equal(s->kids[4]->str, "");
	assert_int_equal(s->kids[4]->plain, 1);
}

static void test_flow_collections(void **state)
{
	struct fx *f = *state;
	const struct npl_ynode *m, *s;

	load_ok(f, "{a: 1, b: [x, \"y\"], c: {}}", 1);
	m = f->docs[0];
	expect_coll(m, NPL_YMAP, 3, 1, 1);
	expect_scalar(m->kids[0], "a", 1, 1, 2);
	expect_scalar(m->kids[1], "1", 1, 1, 5);
	expect_scalar(m->kids[2], "b", 1, 1, 8);
	s = m->kids[3];
	expect_coll(s, NPL_YSEQ, 2, 1, 11);
	expect_scalar(s->kids[0], "x", 1, 1, 12);
	expect_scalar(s->kids[1], "y", 0, 1, 15);
	expect_scalar(m->kids[4], "c", 1, 1, 21);
	expect_coll(m->kids[5], NPL_YMAP, 0, 1, 24);

	load_ok(f, "[]", 1);
	expect_coll(f->docs[0], NPL_YSEQ, 0, 1, 1);
	load_ok(f, "k: [1, [2, 3], {z: 'q'}]\n", 1);
	s = f->docs[0]->kids[1];
	expect_coll(s, NPL_YSEQ, 3, 1, 4);
	expect_scalar(s->kids[0], "1", 1, 1, 5);
	expect_coll(s->kids[1], NPL_YSEQ, 2, 1, 8);
	expect_scalar(s->kids[1]->kids[1], "3", 1, 1, 12);
	expect_coll(s->kids[2], NPL_YMAP, 1, 1, 16);
	expect_scalar(s->kids[2]->kids[1], "q", 0, 1, 20);
}

static void test_block_scalars(void **state)
{
	struct fx *f = *state;
	const struct npl_ynode *m;

	load_ok(f, "a: |\n  l1\n  l2\nb: >\n  f1\n  f2\nc: x\n", 1);
	m = f->docs[0];
	expect_coll(m, NPL_YMAP, 3, 1, 1);
	expect_scalar(m->kids[1], "l1\nl2\n", 0, 1, 4);
	expect_scalar(m->kids[3], "f1 f2\n", 0, 4, 4);
	expect_scalar(m->kids[5], "x", 1, 7, 4);
}

static void test_multiple_documents(void **state)
{
	struct fx *f = *state;

	load_ok(f, "---\na: 1\n---\n- x\n...\n--- y\n", 3);
	expect_coll(f->docs[0], NPL_YMAP, 1, 2, 1);
	expect_scalar(f->docs[0]->kids[1], "1", 1, 2, 4);
	expect_coll(f->docs[1], NPL_YSEQ, 1, 4, 1);
	expect_scalar(f->docs[1]->kids[0], "x", 1, 4, 3);
	expect_scalar(f->docs[2], "y", 1, 6, 5);
	/* many documents */
	{
		struct npl_buf b = NPL_BUF_INIT;
		int i;

		for (i = 0; i < 9; i++)
			npl_buf_printf(&b, "---\nid: %d\n", i);
		load_ok(f, npl_buf_str(&b), 9);
		for (i = 0; i < 9; i++) {
			char want[4];

			snprintf(want, sizeof(want), "%d", i);
			expect_scalar(f->docs[i]->kids[1], want, 1, 2 * i + 2, 5);
		}
		npl_buf_release(&b);
	}
	/* an empty document is an empty plain scalar */
	load_ok(f, "---\n", 1);
	expect_scalar(f->docs[0], "", 1, 2, 1);
}

static void test_empty_input(void **state)
{
	struct fx *f = *state;

	f->ndocs = 7;
	load_ok(f, "", 0);
	assert_null(f->docs);
	load_ok(f, "# only a comment\n\n", 0);
	assert_null(f->docs);
	load_ok(f, "\n   \n", 0);
	assert_null(f->docs);
}

/* The length given is the text; what follows is not read. */
static void test_length_respected(void **state)
{
	struct fx *f = *state;
	const char *text = "a: 1\nb: 2\n";

	assert_int_equal(npl_yaml_load(&f->a, YFILE, text, 4, &f->docs, &f->ndocs, &f->d), 0);
	assert_int_equal(f->ndocs, 1);
	expect_coll(f->docs[0], NPL_YMAP, 1, 1, 1);
	expect_scalar(f->docs[0]->kids[1], "1", 1, 1, 4);
}

static void test_ynull(void **state)
{
	struct fx *f = *state;
	static const struct {
		const char *key;
		int null;
	} want[] = {
		{"a", 1}, {"b", 1}, {"c", 1}, {"d", 0}, {"e", 0}, {"f", 1}, {"g", 0}, {"h", 1},
		{"i", 0}, {"j", 0}, {"k", 0}, {"l", 0}, {"m", 0}, {"n", 0},
	};
	const struct npl_ynode *m;
	size_t i;

	load_ok(f, "a: ~\n"
		   "b: null\n"
		   "c:\n"
		   "d: 'null'\n"
		   "e: \"\"\n"
		   "f: NULL\n"
		   "g: nil\n"
		   "h: Null\n"
		   "i: nULL\n"
		   "j: \"~\"\n"
		   "k: 0\n"
		   "l: {}\n"
		   "m: []\n"
		   "n: none\n", 1);
	m = f->docs[0];
	assert_int_equal(m->n, (int)(sizeof(want) / sizeof(want[0])));
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_string_equal(m->kids[2 * i]->str, want[i].key);
		if (npl_ynull(m->kids[2 * i + 1]) != want[i].null)
			print_error("key %s\n", want[i].key);
		assert_int_equal(npl_ynull(m->kids[2 * i + 1]), want[i].null);
	}
	/* the key of a pair is a scalar too */
	assert_int_equal(npl_ynull(m->kids[0]), 0);
	/* nor is a document that is a mapping null */
	assert_int_equal(npl_ynull(m), 0);
}

static void test_ybool(void **state)
{
	struct fx *f = *state;
	static const struct {
		const char *key;
		int isbool, value;
	} want[] = {
		{"a", 1, 1}, {"b", 1, 0}, {"c", 0, -1}, {"d", 0, -1}, {"e", 0, -1}, {"f", 0, -1},
		{"g", 0, -1}, {"h", 0, -1}, {"i", 0, -1}, {"j", 0, -1}, {"k", 0, -1}, {"l", 0, -1},
	};
	const struct npl_ynode *m;
	size_t i;

	load_ok(f, "a: true\n"
		   "b: false\n"
		   "c: 'true'\n"
		   "d: \"false\"\n"
		   "e: True\n"
		   "f: FALSE\n"
		   "g: yes\n"
		   "h: on\n"
		   "i: 1\n"
		   "j: [true]\n"
		   "k:\n"
		   "l: truee\n", 1);
	m = f->docs[0];
	assert_int_equal(m->n, (int)(sizeof(want) / sizeof(want[0])));
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int v = -1;

		assert_string_equal(m->kids[2 * i]->str, want[i].key);
		if (npl_ybool(m->kids[2 * i + 1], &v) != want[i].isbool)
			print_error("key %s\n", want[i].key);
		assert_int_equal(npl_ybool(m->kids[2 * i + 1], &v), want[i].isbool);
		/* untouched unless it is a boolean */
		assert_int_equal(v, want[i].value);
	}
}

static void test_kind_names(void **state)
{
	struct fx *f = *state;

	load_ok(f, "{a: [1]}", 1);
	assert_string_equal(npl_ykind_name(f->docs[0]), "a mapping");
	assert_string_equal(npl_ykind_name(f->docs[0]->kids[1]), "a list");
	assert_string_equal(npl_ykind_name(f->docs[0]->kids[0]), "a single value");
}

static void test_duplicate_keys(void **state)
{
	struct fx *f = *state;

	load_err(f, "a: 1\nb: 2\na: 3\n", "duplicate key 'a' (first at line 1)", 3, 1);
	load_err(f, "top:\n  k: 1\n  j: 2\n  k: 3\n", "duplicate key 'k' (first at line 2)", 4, 3);
	load_err(f, "{a: 1, a: 2}", "duplicate key 'a' (first at line 1)", 1, 8);
	/* quoting does not make a different key */
	load_err(f, "a: 1\n'a': 2\n", "duplicate key 'a' (first at line 1)", 2, 1);
	load_err(f, "- x: 1\n  y: 2\n  x: 3\n", "duplicate key 'x' (first at line 1)", 3, 3);
	/* the same key in different mappings is fine */
	load_ok(f, "x: {a: 1}\ny: {a: 2}\n", 1);
	load_ok(f, "- a: 1\n- a: 2\n", 1);
	/* and keys that differ in case are different */
	load_ok(f, "a: 1\nA: 2\n", 1);
}

/* A key written three times: each repeat points at the first one. */
static void test_duplicate_key_three_times(void **state)
{
	struct fx *f = *state;

	assert_int_equal(load(f, "a: 1\na: 2\na: 3\n"), -1);
	assert_null(f->docs);
	assert_int_equal(f->d.n, 2);
	assert_string_equal(f->d.v[0].msg, "duplicate key 'a' (first at line 1)");
	assert_int_equal(f->d.v[0].loc.line, 2);
	assert_string_equal(f->d.v[1].msg, "duplicate key 'a' (first at line 1)");
	assert_int_equal(f->d.v[1].loc.line, 3);
}

static void test_aliases_and_anchors(void **state)
{
	struct fx *f = *state;

	load_err(f, "a: 1\nb: *x\n", "YAML aliases are not supported: write the value out", 2, 4);
	load_err(f, "- *ref\n", "YAML aliases are not supported: write the value out", 1, 3);
	load_err(f, "a: &x 1\n", "YAML anchors are not supported", 1, 4);
	load_err(f, "a: &m\n  b: 1\n", "YAML anchors are not supported", 1, 4);
	load_err(f, "- &x [1]\n", "YAML anchors are not supported", 1, 3);
	/* anchor and alias together: the anchor is met first */
	load_err(f, "a: &x 1\nb: *x\n", "YAML anchors are not supported", 1, 4);
}

static void test_tags(void **state)
{
	struct fx *f = *state;

	load_err(f, "a: !!str 1\n", "YAML tags are not supported ('tag:yaml.org,2002:str')", 1, 4);
	load_err(f, "!foo x\n", "YAML tags are not supported ('!foo')", 1, 1);
	load_err(f, "a: !!str 'q'\n", "YAML tags are not supported ('tag:yaml.org,2002:str')", 1, 4);
	load_err(f, "a: !!map {b: 1}\n", "YAML tags are not supported ('tag:yaml.org,2002:map')", 1, 4);
	load_err(f, "- !!seq [a]\n", "YAML tags are not supported ('tag:yaml.org,2002:seq')", 1, 3);
	load_err(f, "%TAG !e! tag:example.com,2000:\n---\nk: !e!x v\n",
		 "YAML tags are not supported ('tag:example.com,2000:x')", 3, 4);
}

/* The non-specific tag '!' is a tag as well: "! true" is the string "true", not a boolean. */
static void test_nonspecific_tag(void **state)
{
	struct fx *f = *state;

	load_err(f, "a: ! true\n", "YAML tags are not supported ('!')", 1, 4);
}

static void test_non_scalar_keys(void **state)
{
	struct fx *f = *state;

	load_err(f, "[a]: 1\n", "a mapping key must be a plain word, not a list", 1, 1);
	load_err(f, "{a: 1}: 2\n", "a mapping key must be a plain word, not a mapping", 1, 1);
	load_err(f, "? - a\n: 1\n", "a mapping key must be a plain word, not a list", 1, 3);
	load_err(f, "ok: 1\n? {x: y}\n: 2\n", "a mapping key must be a plain word, not a mapping", 2, 3);
	load_err(f, "{[a]: b}", "a mapping key must be a plain word, not a list", 1, 2);
	/* an explicit scalar key is fine */
	load_ok(f, "? a\n: 1\n", 1);
	expect_scalar(f->docs[0]->kids[0], "a", 1, 1, 3);
}

static void test_invalid_yaml(void **state)
{
	struct fx *f = *state;

	load_err(f, "a: [", "invalid YAML: did not find expected node content while parsing a flow node", 2, 1);
	load_err(f, "a:\n\tb: 1",
		 "invalid YAML: found character that cannot start any token while scanning for the next token", 2, 1);
	load_err(f, "a: b: c", "invalid YAML: mapping values are not allowed in this context", 1, 5);
	load_err(f, "a: 'x", "invalid YAML: found unexpected end of stream while scanning a quoted scalar", 1, 6);
	load_err(f, "{a: 1", "invalid YAML: did not find expected ',' or '}' while parsing a flow mapping", 2, 1);
	load_err(f, "- a\nb: 1",
		 "invalid YAML: did not find expected '-' indicator while parsing a block collection", 2, 1);
	/* every message says what it is */
	assert_int_equal(load(f, "]["), -1);
	assert_int_equal(f->d.n, 1);
	assert_memory_equal(f->d.v[0].msg, "invalid YAML: ", 14);
	/* an error in a later document drops the earlier ones too */
	load_err(f, "---\na: 1\n---\nb: [\n", "invalid YAML: did not find expected node content while parsing a flow node", 5, 1);
	load_err(f, "---\na: 1\n---\nb: *x\n", "YAML aliases are not supported: write the value out", 4, 4);
}

/* Bad UTF-8 is reported where it is, not at the top of the file. */
static void test_invalid_utf8_location(void **state)
{
	struct fx *f = *state;

	load_err(f, "a: 1\nb: \xff\n", "invalid YAML: invalid leading UTF-8 octet", 2, 4);
}

static void test_nul(void **state)
{
	struct fx *f = *state;

	load_err(f, "a: \"x\\0y\"\n", "NUL character in a value", 1, 4);
	load_err(f, "- ok\n- \"\\x00\"\n", "NUL character in a value", 2, 3);
	load_err(f, "\"k\\0\": v\n", "NUL character in a value", 1, 1);
	/* a raw NUL byte in the text is refused by the reader */
	assert_int_equal(npl_yaml_load(&f->a, YFILE, "a: b\0c\n", 7, &f->docs, &f->ndocs, &f->d), -1);
	assert_null(f->docs);
	assert_int_equal(f->d.n, 1);
	assert_memory_equal(f->d.v[0].msg, "invalid YAML: ", 14);
}

static void test_nesting_limit(void **state)
{
	struct fx *f = *state;
	struct npl_buf b = NPL_BUF_INIT;
	const struct npl_ynode *n;
	int i;

	/* 64 levels are fine */
	for (i = 0; i < 64; i++)
		npl_buf_putc(&b, '[');
	for (i = 0; i < 64; i++)
		npl_buf_putc(&b, ']');
	load_ok(f, npl_buf_str(&b), 1);
	n = f->docs[0];
	for (i = 1; i < 64; i++) {
		assert_int_equal(n->kind, NPL_YSEQ);
		assert_int_equal(n->n, 1);
		n = n->kids[0];
	}
	expect_coll(n, NPL_YSEQ, 0, 1, 64);
	/* 65 are not */
	npl_buf_reset(&b);
	for (i = 0; i < 65; i++)
		npl_buf_putc(&b, '[');
	for (i = 0; i < 65; i++)
		npl_buf_putc(&b, ']');
	load_err(f, npl_buf_str(&b), "nesting deeper than 64 levels", 1, 65);
	/* the same with block mappings */
	npl_buf_reset(&b);
	for (i = 0; i < 65; i++)
		npl_buf_printf(&b, "%*sa:\n", 2 * i, "");
	npl_buf_printf(&b, "%*sx\n", 130, "");
	load_err(f, npl_buf_str(&b), "nesting deeper than 64 levels", 65, 129);
	npl_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_scalar_documents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mapping_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_pairs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sequences, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flow_collections, setup, teardown),
		cmocka_unit_test_setup_teardown(test_block_scalars, setup, teardown),
		cmocka_unit_test_setup_teardown(test_multiple_documents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_length_respected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ynull, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ybool, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kind_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicate_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicate_key_three_times, setup, teardown),
		cmocka_unit_test_setup_teardown(test_aliases_and_anchors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tags, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nonspecific_tag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_non_scalar_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_yaml, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_utf8_location, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nul, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nesting_limit, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
