/* test_template.c: the mustache-like template engine: values, escaping, sections, @specials, partials, standalone lines, located errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "npulaunch/buf.h"
#include "npulaunch/diag.h"
#include "npulaunch/template.h"

#define TFILE "t.tmpl"

/* What the callbacks saw. */
struct tctx {
	int escapes;
	int partials;
	char last_partial[64];
};

/* name, text, file reported for messages (NULL: leave *file alone) */
static const char *const partial_table[][3] = {
	{"greet", "<{{name}}>", "partials/greet.tmpl"},
	{"item", "{{n}}{{^@last}},{{/@last}}", "partials/item.tmpl"},
	{"line", "L{{n}}\n", "partials/line.tmpl"},
	{"bad", "ok\n  {{missing}}\n", "partials/bad.tmpl"},
	{"loop", "{{> loop}}", "partials/loop.tmpl"},
	{"open", "x\n{{#s}}", "partials/open.tmpl"},
	{"anon", "a\n {{missing}}", NULL},
};

static void bracket_escape(void *ctx, struct npl_buf *out, const char *text)
{
	struct tctx *c = ctx;

	c->escapes++;
	npl_buf_putc(out, '[');
	npl_buf_puts(out, text);
	npl_buf_putc(out, ']');
}

static const char *table_partial(void *ctx, const char *name, const char **file)
{
	struct tctx *c = ctx;
	size_t i;

	c->partials++;
	snprintf(c->last_partial, sizeof(c->last_partial), "%s", name);
	for (i = 0; i < sizeof(partial_table) / sizeof(partial_table[0]); i++) {
		if (strcmp(partial_table[i][0], name) == 0) {
			if (partial_table[i][2])
				*file = partial_table[i][2];
			return partial_table[i][1];
		}
	}
	return NULL;
}

/* Render tmpl with the JSON view (NULL: no view) through the bracket env. */
static int render(const char *tmpl, const char *json, struct tctx *c, struct npl_buf *out,
		  struct npl_diag *d)
{
	struct npl_tmpl_env env = {bracket_escape, table_partial, c, NULL};
	cJSON *view = NULL;
	int rc;

	if (json) {
		view = cJSON_Parse(json);
		assert_non_null(view);
	}
	rc = npl_tmpl_render(TFILE, tmpl, view, &env, out, d);
	cJSON_Delete(view);
	return rc;
}

/* Render successfully and compare the whole output. */
static void expect_out(const char *tmpl, const char *json, const char *want)
{
	struct tctx c = {0};
	struct npl_buf out = NPL_BUF_INIT;
	struct npl_diag d = NPL_DIAG_INIT;
	int rc = render(tmpl, json, &c, &out, &d);

	if (rc != 0 || d.n != 0)
		print_error("template %s: unexpected error: %s\n", tmpl, d.n ? d.v[0].msg : "?");
	assert_int_equal(rc, 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(d.errors, 0);
	assert_string_equal(npl_buf_str(&out), want);
	npl_buf_release(&out);
	npl_diag_release(&d);
}

/* Render with exactly one error: its message and location. */
static void expect_err(const char *tmpl, const char *json, const char *msg, const char *file,
		       int line, int col)
{
	struct tctx c = {0};
	struct npl_buf out = NPL_BUF_INIT;
	struct npl_diag d = NPL_DIAG_INIT;
	int rc = render(tmpl, json, &c, &out, &d);

	assert_int_equal(rc, -1);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.errors, 1);
	assert_int_equal(d.v[0].sev, NPL_ERROR);
	assert_string_equal(d.v[0].msg, msg);
	assert_non_null(d.v[0].loc.file);
	assert_string_equal(d.v[0].loc.file, file);
	assert_int_equal(d.v[0].loc.line, line);
	assert_int_equal(d.v[0].loc.col, col);
	npl_buf_release(&out);
	npl_diag_release(&d);
}

static void test_value_escaped_through_callback(void **state)
{
	struct tctx c = {0};
	struct npl_buf out = NPL_BUF_INIT;
	struct npl_diag d = NPL_DIAG_INIT;

	(void)state;
	assert_int_equal(render("Hi {{name}}, {{ name }}!", "{\"name\":\"<Bob & Co>\"}", &c, &out, &d), 0);
	assert_string_equal(npl_buf_str(&out), "Hi [<Bob & Co>], [<Bob & Co>]!");
	assert_int_equal(c.escapes, 2);
	assert_int_equal(c.partials, 0);
	npl_buf_release(&out);
	npl_diag_release(&d);
}

static void test_value_raw(void **state)
{
	struct tctx c = {0};
	struct npl_buf out = NPL_BUF_INIT;
	struct npl_diag d = NPL_DIAG_INIT;

	(void)state;
	assert_int_equal(render("{{{v}}}|{{&v}}|{{& v }}|{{{ v }}}|{{v}}", "{\"v\":\"a<b>'c\"}", &c, &out, &d), 0);
	assert_string_equal(npl_buf_str(&out), "a<b>'c|a<b>'c|a<b>'c|a<b>'c|[a<b>'c]");
	assert_int_equal(c.escapes, 1);
	npl_buf_release(&out);
	npl_diag_release(&d);
}

static void test_no_env_means_unescaped(void **state)
{
	struct npl_buf out = NPL_BUF_INIT;
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_tmpl_env noescape = {NULL, NULL, NULL, NULL};
	cJSON *view = cJSON_Parse("{\"v\":\"<x>\"}");

	(void)state;
	assert_int_equal(npl_tmpl_render(TFILE, "a{{v}}b{{{v}}}", view, NULL, &out, &d), 0);
	assert_string_equal(npl_buf_str(&out), "a<x>b<x>");
	npl_buf_reset(&out);
	assert_int_equal(npl_tmpl_render(TFILE, "{{v}}", view, &noescape, &out, &d), 0);
	assert_string_equal(npl_buf_str(&out), "<x>");
	/* no partial callback: every partial is unknown */
	assert_int_equal(npl_tmpl_render(TFILE, "{{> p}}", view, &noescape, &out, &d), -1);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].msg, "unknown partial 'p'");
	cJSON_Delete(view);
	npl_buf_release(&out);
	npl_diag_release(&d);
}

static void test_plain_text_and_empty(void **state)
{
	(void)state;
	expect_out("", "{}", "");
	expect_out("no tags at all\n", "{}", "no tags at all\n");
	expect_out("single { and } braces", "{}", "single { and } braces");
	expect_out("x}}y", "{}", "x}}y");
}

static void test_dotted_names(void **state)
{
	(void)state;
	expect_out("{{a.b.c}}", "{\"a\":{\"b\":{\"c\":\"deep\"}}}", "[deep]");
	expect_out("{{a.b}}", "{\"a\":{\"b\":7}}", "[7]");
	/* the first part is looked up through the context stack, the rest inside it */
	expect_out("{{#xs}}{{cfg.port}}{{/xs}}", "{\"xs\":[1,2],\"cfg\":{\"port\":80}}", "[80][80]");
	expect_out("{{#a.b}}{{c}}{{/a.b}}", "{\"a\":{\"b\":{\"c\":\"in\"}}}", "[in]");
	expect_err("{{a.b.x}}", "{\"a\":{\"b\":{\"c\":1}}}", "'a.b.x' names nothing in the view", TFILE, 1, 1);
	/* a dot through a scalar names nothing */
	expect_err("{{a.b}}", "{\"a\":\"str\"}", "'a.b' names nothing in the view", TFILE, 1, 1);
}

static void test_dot_in_array(void **state)
{
	(void)state;
	expect_out("{{#xs}}{{.}},{{/xs}}", "{\"xs\":[\"a\",\"b\",3,true]}", "[a],[b],[3],[true],");
	expect_out("{{#xs}}{{{.}}}{{/xs}}", "{\"xs\":[\"<\",\">\"]}", "<>");
	/* arrays of arrays: {{#.}} iterates the inner one */
	expect_out("{{#m}}({{#.}}{{.}}{{/.}}){{/m}}", "{\"m\":[[1,2],[3]]}", "([1][2])([3])");
	/* {{.}} at the top is the view itself */
	expect_err("{{.}}", "{}", "'.' names something that is not a value", TFILE, 1, 1);
}

static void test_section_kinds(void **state)
{
	static const char *const cases[][2] = {
		{"{\"s\":[1,2,3]}", "<YYY>"},
		{"{\"s\":{}}", "<Y>"},
		{"{\"s\":{\"k\":1}}", "<Y>"},
		{"{\"s\":true}", "<Y>"},
		{"{\"s\":\"x\"}", "<Y>"},
		{"{\"s\":5}", "<Y>"},
		{"{\"s\":-0.5}", "<Y>"},
		{"{\"s\":false}", "<>"},
		{"{\"s\":null}", "<>"},
		{"{}", "<>"},
		{"{\"s\":[]}", "<>"},
		{"{\"s\":\"\"}", "<>"},
		{"{\"s\":0}", "<>"},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_out("<{{#s}}Y{{/s}}>", cases[i][0], cases[i][1]);
}

static void test_inverted_kinds(void **state)
{
	static const char *const cases[][2] = {
		{"{\"s\":[1,2,3]}", "<>"},
		{"{\"s\":{}}", "<>"},
		{"{\"s\":true}", "<>"},
		{"{\"s\":\"x\"}", "<>"},
		{"{\"s\":5}", "<>"},
		{"{\"s\":false}", "<N>"},
		{"{\"s\":null}", "<N>"},
		{"{}", "<N>"},
		{"{\"s\":[]}", "<N>"},
		{"{\"s\":\"\"}", "<N>"},
		{"{\"s\":0}", "<N>"},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_out("<{{^s}}N{{/s}}>", cases[i][0], cases[i][1]);
	/* the inverse does not push a context: names still resolve outside */
	expect_out("{{^missing}}{{v}}{{/missing}}", "{\"v\":\"out\"}", "[out]");
	expect_out("{{#s}}yes{{/s}}{{^s}}no{{/s}}", "{\"s\":[]}", "no");
}

static void test_section_contexts(void **state)
{
	(void)state;
	/* an object section resolves inside, then falls back to the outer view */
	expect_out("{{#o}}{{x}}-{{y}}{{/o}}", "{\"o\":{\"x\":\"in\"},\"y\":\"outer\"}", "[in]-[outer]");
	/* an inner key shadows the outer one */
	expect_out("{{#o}}{{y}}{{/o}}{{y}}", "{\"o\":{\"y\":\"in\"},\"y\":\"out\"}", "[in][out]");
	/* true and scalar values become {{.}} */
	expect_out("{{#t}}{{.}}{{/t}}|{{#s}}{{.}}{{/s}}", "{\"t\":true,\"s\":\"str\"}", "[true]|[str]");
	/* array items that are objects are the context in turn */
	expect_out("{{#xs}}{{n}}={{v}};{{/xs}}", "{\"v\":\"V\",\"xs\":[{\"n\":1},{\"n\":2,\"v\":\"W\"}]}",
		   "[1]=[V];[2]=[W];");
	/* a section inside an object section */
	expect_out("{{#a}}{{#b}}{{.}}{{/b}}{{/a}}", "{\"a\":{\"b\":[\"x\",\"y\"]}}", "[x][y]");
}

static void test_numbers_and_booleans(void **state)
{
	(void)state;
	expect_out("{{i}} {{f}} {{neg}} {{whole}} {{half}} {{big}} {{z}} {{t}} {{fa}}",
		   "{\"i\":16,\"f\":22.2,\"neg\":-3,\"whole\":16.0,\"half\":0.5,\"big\":1e20,"
		   "\"z\":0,\"t\":true,\"fa\":false}",
		   "[16] [22.2] [-3] [16] [0.5] [1e+20] [0] [true] [false]");
	expect_out("{{{n}}}", "{\"n\":123456789012}", "123456789012");
	expect_out("{{{n}}}", "{\"n\":-1.25}", "-1.25");
}

static void test_specials(void **state)
{
	(void)state;
	expect_out("{{#xs}}{{@index}}:{{.}}{{#@first}}F{{/@first}}{{#@last}}L{{/@last}}"
		   "{{^@last}},{{/@last}}{{/xs}}",
		   "{\"xs\":[\"a\",\"b\",\"c\"]}", "[0]:[a]F,[1]:[b],[2]:[c]L");
	expect_out("{{#xs}}{{@first}}/{{@last}}{{/xs}}", "{\"xs\":[1]}", "[true]/[true]");
	expect_out("{{#xs}}{{@first}}/{{@last}} {{/xs}}", "{\"xs\":[1,2]}", "[true]/[false] [false]/[true] ");
	/* an object section inside an iteration still sees the iteration */
	expect_out("{{#xs}}{{#o}}{{@index}}{{/o}}{{/xs}}", "{\"xs\":[{\"o\":{}},{\"o\":{}}]}", "[0][1]");
	/* outside any iteration the specials name nothing */
	expect_err("x\n {{@index}}", "{}", "'@index' names nothing in the view", TFILE, 2, 2);
	expect_err("{{#o}}{{@last}}{{/o}}", "{\"o\":{}}", "'@last' names nothing in the view", TFILE, 1, 7);
}

static void test_specials_nested(void **state)
{
	(void)state;
	/* after the inner iteration closes, @index/@last refer to the outer one again */
	expect_out("{{#o}}{{#in}}{{@index}}{{#@last}}l{{/@last}}{{/in}}|{{@index}}{{#@last}}L{{/@last}};{{/o}}",
		   "{\"o\":[{\"in\":[1,2]},{\"in\":[3]}]}", "[0][1]l|[0];[0]l|[1]L;");
	expect_out("{{#o}}{{#in}}{{/in}}{{^@last}},{{/@last}}{{/o}}",
		   "{\"o\":[{\"in\":[1]},{\"in\":[1,2,3]},{\"in\":[]}]}", ",,");
	expect_out("{{#o}}{{@index}}{{#in}}{{@index}}{{/in}}{{@index}}{{/o}}",
		   "{\"o\":[{\"in\":[\"a\",\"b\",\"c\"]},{\"in\":[\"d\"]}]}", "[0][0][1][2][0][1][0][1]");
}

static void test_partials(void **state)
{
	struct tctx c = {0};
	struct npl_buf out = NPL_BUF_INIT;
	struct npl_diag d = NPL_DIAG_INIT;

	(void)state;
	assert_int_equal(render("a {{> greet}} b {{>greet}}", "{\"name\":\"X\"}", &c, &out, &d), 0);
	assert_string_equal(npl_buf_str(&out), "a <[X]> b <[X]>");
	assert_int_equal(c.partials, 2);
	assert_string_equal(c.last_partial, "greet");
	assert_int_equal(c.escapes, 2);
	npl_buf_release(&out);
	npl_diag_release(&d);

	/* a partial renders in the current context, including the iteration */
	expect_out("{{#items}}{{> item}}{{/items}}", "{\"items\":[{\"n\":1},{\"n\":2},{\"n\":3}]}",
		   "[1],[2],[3]");
	expect_out("{{#o}}{{> greet}}{{/o}}", "{\"name\":\"out\",\"o\":{\"name\":\"in\"}}", "<[in]>");
	/* a standalone partial line is replaced by the partial's text */
	expect_out("x\n  {{> line}}\ny\n", "{\"n\":1}", "x\nL[1]\ny\n");
	/* a partial sharing its line keeps the line */
	expect_out("x {{> line}}y\n", "{\"n\":2}", "x L[2]\ny\n");
}

static void test_partial_errors(void **state)
{
	(void)state;
	expect_err("line1\n  {{> nope}}\n", "{}", "unknown partial 'nope'", TFILE, 2, 3);
	/* errors inside a partial are located in the partial */
	expect_err("{{> bad}}", "{}", "'missing' names nothing in the view", "partials/bad.tmpl", 2, 3);
	expect_err("a{{> open}}", "{}", "'{{#s}}' is never closed", "partials/open.tmpl", 2, 1);
	expect_err("{{> loop}}", "{}", "partials include each other too deep", "partials/loop.tmpl", 1, 1);
}

/*
 * A partial whose callback leaves *file alone is named by its own name in
 * messages. The messages are kept and printed later (after more rendering,
 * as a command does), so the name must still be there then.
 */
static void test_partial_without_file_name(void **state)
{
	struct tctx c = {0};
	struct npl_buf out = NPL_BUF_INIT;
	struct npl_diag d = NPL_DIAG_INIT, d2 = NPL_DIAG_INIT;
	char *s, got[256];
	int rc1, rc2, n;

	(void)state;
	rc1 = render("x {{> anon}}", "{}", &c, &out, &d);
	rc2 = render("y {{> greet}}", "{\"name\":\"n\"}", &c, &out, &d2);
	n = d.n;
	s = n == 1 ? npl_diag_format(&d, &d.v[0], 0) : NULL;
	snprintf(got, sizeof(got), "%s", s ? s : "");
	free(s);
	npl_buf_release(&out);
	npl_diag_release(&d);
	npl_diag_release(&d2);
	assert_int_equal(rc1, -1);
	assert_int_equal(rc2, 0);
	assert_int_equal(n, 1);
	assert_string_equal(got, "anon:2:2: error: 'missing' names nothing in the view");
}

static void test_comments(void **state)
{
	(void)state;
	expect_out("a{{! hidden }}b", "{}", "ab");
	expect_out("a{{!}}b", "{}", "ab");
	expect_out("a{{! {{x}} may mention tags }}b", "{}", "a may mention tags }}b");
	expect_out("a{{! multi\nline\ncomment }}b", "{}", "ab");
	/* a comment names nothing, even when the name is unknown */
	expect_out("{{!missing}}", "{}", "");
}

static void test_standalone_lines(void **state)
{
	(void)state;
	/* section open and close alone on their lines leave no blank lines */
	expect_out("begin\n{{#s}}\nin\n{{/s}}\nend\n", "{\"s\":true}", "begin\nin\nend\n");
	/* with spaces and tabs around the tags */
	expect_out("begin\n  \t{{#s}}  \nin\n\t{{/s}}\t \nend\n", "{\"s\":true}", "begin\nin\nend\n");
	/* a false section takes its lines with it */
	expect_out("a\n  {{#s}}\nhidden\n  {{/s}}\nb\n", "{\"s\":false}", "a\nb\n");
	/* inverted */
	expect_out("a\n {{^f}}\nno\n {{/f}}\nb\n", "{\"f\":false}", "a\nno\nb\n");
	/* comment */
	expect_out("a\n  {{! note }}\t\nb\n", "{}", "a\nb\n");
	/* partial */
	expect_out("a\n\t{{> greet}}\nb\n", "{\"name\":\"n\"}", "a\n<[n]>b\n");
	/* the first and the last line of the text */
	expect_out("{{#s}}\nx\n{{/s}}", "{\"s\":1}", "x\n");
	expect_out("a\n{{! end }}", "{}", "a\n");
	/* CRLF line ends */
	expect_out("a\r\n{{#s}}\r\nb\r\n{{/s}}\r\n", "{\"s\":true}", "a\r\nb\r\n");
	/* iterated: every item repeats the body lines only */
	expect_out("[\n{{#xs}}\n  {{.}}\n{{/xs}}\n]\n", "{\"xs\":[1,2]}", "[\n  [1]\n  [2]\n]\n");
	/* a tag sharing its line with text keeps the line */
	expect_out("a {{#s}}x{{/s}} b\n", "{\"s\":true}", "a x b\n");
	expect_out("x {{#s}}\ny\n{{/s}}\n", "{\"s\":true}", "x \ny\n");
	expect_out("{{#s}}\ny\n{{/s}} z\n", "{\"s\":true}", "y\n z\n");
	expect_out("{{! c }} text\n", "{}", " text\n");
	expect_out("a\n{{#s}}{{/s}}\nb\n", "{\"s\":true}", "a\n\nb\n");
	/* value tags are never standalone */
	expect_out("a\n  {{v}}\nb\n", "{\"v\":\"V\"}", "a\n  [V]\nb\n");
	expect_out("a\n{{{v}}}\nb\n", "{\"v\":\"V\"}", "a\nV\nb\n");
}

static void test_error_unclosed_tag(void **state)
{
	(void)state;
	expect_err("ab\n  {{name", "{}", "unclosed tag '{{'", TFILE, 2, 3);
	expect_err("{{{x}}", "{\"x\":1}", "unclosed tag '{{'", TFILE, 1, 1);
	expect_err("ok {{x}} {{#s}", "{\"x\":1}", "unclosed tag '{{'", TFILE, 1, 10);
}

static void test_error_close_nothing(void **state)
{
	(void)state;
	expect_err("x{{/x}}", "{}", "'{{/x}}' closes nothing", TFILE, 1, 2);
	expect_err("{{#a}}{{/a}}\n\t{{/a}}\n", "{}", "'{{/a}}' closes nothing", TFILE, 2, 2);
}

static void test_error_mismatched_close(void **state)
{
	(void)state;
	expect_err("line1\n  {{#a}}\nx {{/b}}\n", "{}", "'{{/b}}' closes '{{#a}}' (line 2)", TFILE, 3, 3);
	expect_err("{{#a}}{{#b}}\n{{/a}}{{/b}}", "{}", "'{{/a}}' closes '{{#b}}' (line 1)", TFILE, 2, 1);
	/* the name must match exactly, not as a prefix */
	expect_err("{{#ab}}{{/a}}", "{}", "'{{/a}}' closes '{{#ab}}' (line 1)", TFILE, 1, 8);
}

static void test_error_never_closed(void **state)
{
	(void)state;
	expect_err("a\n {{#sec}}\nb\n", "{}", "'{{#sec}}' is never closed", TFILE, 2, 2);
	/* the innermost open section is reported */
	expect_err("{{#a}}\n{{^b}}{{/b}}{{#c}}", "{}", "'{{#c}}' is never closed", TFILE, 2, 13);
}

static void test_error_names_nothing(void **state)
{
	(void)state;
	expect_err("x = {{x}}", "{}", "'x' names nothing in the view", TFILE, 1, 5);
	expect_err("\n\n\t{{{raw}}}", "{\"x\":1}", "'raw' names nothing in the view", TFILE, 3, 2);
	expect_err("{{#xs}}{{.}}{{nope}}{{/xs}}", "{\"xs\":[1]}", "'nope' names nothing in the view", TFILE, 1, 13);
	/* a missing view: every name is missing */
	expect_err("{{x}}", NULL, "'x' names nothing in the view", TFILE, 1, 1);
}

static void test_error_not_a_value(void **state)
{
	(void)state;
	expect_err("v: {{o}}", "{\"o\":{\"a\":1}}", "'o' names something that is not a value", TFILE, 1, 4);
	expect_err("{{&xs}}", "{\"xs\":[1]}", "'xs' names something that is not a value", TFILE, 1, 1);
	expect_err("{{n}}", "{\"n\":null}", "'n' names something that is not a value", TFILE, 1, 1);
}

static void test_error_empty_tag(void **state)
{
	(void)state;
	expect_err("a{{}}b", "{}", "empty tag", TFILE, 1, 2);
	expect_err("a\n{{ \t }}", "{}", "empty tag", TFILE, 2, 1);
	expect_err("{{#}}{{/}}", "{}", "empty tag", TFILE, 1, 1);
	expect_err("{{{ }}}", "{}", "empty tag", TFILE, 1, 1);
	expect_err("{{&}}", "{}", "empty tag", TFILE, 1, 1);
	expect_err("{{>}}", "{}", "empty tag", TFILE, 1, 1);
}

static void test_error_nesting(void **state)
{
	struct npl_buf t = NPL_BUF_INIT;
	int i;

	(void)state;
	/* 31 nested sections are fine, the 32nd is too deep */
	for (i = 0; i < 31; i++)
		npl_buf_puts(&t, "{{#s}}");
	npl_buf_puts(&t, "x");
	for (i = 0; i < 31; i++)
		npl_buf_puts(&t, "{{/s}}");
	expect_out(npl_buf_str(&t), "{\"s\":true}", "x");
	npl_buf_reset(&t);
	for (i = 0; i < 32; i++)
		npl_buf_puts(&t, "{{#s}}");
	expect_err(npl_buf_str(&t), "{\"s\":true}", "sections nested too deep", TFILE, 1, 1 + 31 * 6);
	npl_buf_release(&t);
}

/* The render registers the template's text, so that messages get a caret line. */
static void test_error_caret(void **state)
{
	struct tctx c = {0};
	struct npl_buf out = NPL_BUF_INIT;
	struct npl_diag d = NPL_DIAG_INIT;
	char *s;

	(void)state;
	assert_int_equal(render("first\nx = {{x}} y\n", "{}", &c, &out, &d), -1);
	assert_int_equal(d.n, 1);
	s = npl_diag_format(&d, &d.v[0], 1);
	assert_string_equal(s, "t.tmpl:2:5: error: 'x' names nothing in the view\n"
			       "    2 | x = {{x}} y\n"
			       "      |     ^");
	free(s);
	npl_buf_release(&out);
	npl_diag_release(&d);
}

/* Output produced before an error stays; the error stops the render. */
static void test_error_stops_render(void **state)
{
	struct tctx c = {0};
	struct npl_buf out = NPL_BUF_INIT;
	struct npl_diag d = NPL_DIAG_INIT;

	(void)state;
	assert_int_equal(render("{{#xs}}{{.}}{{/xs}}", "{\"xs\":[1,{},2]}", &c, &out, &d), -1);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].msg, "'.' names something that is not a value");
	assert_int_equal(c.escapes, 1);
	assert_string_equal(npl_buf_str(&out), "[1]");
	npl_buf_release(&out);
	npl_diag_release(&d);
}

/* One render with a cache: its output, or the first message formatted. */
static void render_cached(const struct npl_tmpl_env *env, const char *tmpl, const char *json, int want_rc,
			  const char *want)
{
	struct npl_buf out = NPL_BUF_INIT;
	struct npl_diag d = NPL_DIAG_INIT;
	cJSON *view = json ? cJSON_Parse(json) : NULL;
	char *msg;

	assert_int_equal(npl_tmpl_render(TFILE, tmpl, view, env, &out, &d), want_rc);
	if (want_rc) {
		assert_int_equal(d.n, 1);
		msg = npl_diag_format(&d, &d.v[0], 0);
		assert_string_equal(msg, want);
		free(msg);
	} else {
		assert_int_equal(d.n, 0);
		assert_string_equal(npl_buf_str(&out), want);
	}
	npl_diag_release(&d);
	npl_buf_release(&out);
	cJSON_Delete(view);
}

/* A cache kept across renders (render --all): each render sees its own view, a template
 * that failed to parse fails again with its message, and a partial's name outlives the
 * render that first read it. */
static void test_cache_across_renders(void **state)
{
	static const char ok[] = "{{#items}}{{> item}}{{/items}}|{{> greet}}";
	static const char anon[] = "x {{> anon}}";
	static const char broken[] = "a\n{{#s}}";
	struct npl_tmpl_cache *cache = npl_tmpl_cache_new();
	struct tctx c = {0};
	struct npl_tmpl_env env = {bracket_escape, table_partial, &c, cache};
	int i;

	(void)state;
	for (i = 0; i < 2; i++) {
		render_cached(&env, ok, "{\"items\": [{\"n\": 1}, {\"n\": 2}], \"name\": \"x\"}", 0,
			      "[1],[2]|<[x]>");
		render_cached(&env, ok, "{\"items\": [{\"n\": 3}], \"name\": \"y\"}", 0, "[3]|<[y]>");
		render_cached(&env, anon, "{}", -1, "anon:2:2: error: 'missing' names nothing in the view");
		render_cached(&env, broken, NULL, -1,
			      TFILE ":2:1: error: '{{#s}}' is never closed");
	}
	npl_tmpl_cache_free(cache);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_value_escaped_through_callback),
		cmocka_unit_test(test_value_raw),
		cmocka_unit_test(test_no_env_means_unescaped),
		cmocka_unit_test(test_plain_text_and_empty),
		cmocka_unit_test(test_dotted_names),
		cmocka_unit_test(test_dot_in_array),
		cmocka_unit_test(test_section_kinds),
		cmocka_unit_test(test_inverted_kinds),
		cmocka_unit_test(test_section_contexts),
		cmocka_unit_test(test_numbers_and_booleans),
		cmocka_unit_test(test_specials),
		cmocka_unit_test(test_specials_nested),
		cmocka_unit_test(test_partials),
		cmocka_unit_test(test_partial_errors),
		cmocka_unit_test(test_partial_without_file_name),
		cmocka_unit_test(test_cache_across_renders),
		cmocka_unit_test(test_comments),
		cmocka_unit_test(test_standalone_lines),
		cmocka_unit_test(test_error_unclosed_tag),
		cmocka_unit_test(test_error_close_nothing),
		cmocka_unit_test(test_error_mismatched_close),
		cmocka_unit_test(test_error_never_closed),
		cmocka_unit_test(test_error_names_nothing),
		cmocka_unit_test(test_error_not_a_value),
		cmocka_unit_test(test_error_empty_tag),
		cmocka_unit_test(test_error_nesting),
		cmocka_unit_test(test_error_caret),
		cmocka_unit_test(test_error_stops_render),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
