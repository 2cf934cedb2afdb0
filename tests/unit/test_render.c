/* test_render.c: plan values (plan.h, pval.c) and rendering (render.h): shell words proven with bash, bundles, templates. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "npulaunch/arena.h"
#include "npulaunch/buf.h"
#include "npulaunch/output.h"
#include "npulaunch/plan.h"
#include "npulaunch/recipe.h"
#include "npulaunch/render.h"
#include "npulaunch/resolve.h"
#include "npulaunch/site.h"

#define KIMI "kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms"
#define KIMI_PD "kimi-k2.6-w4a8-1p1d-16p-in64k-out1k5-100ms"

/* The recipe database, opened once for the group. */
static struct {
	struct npl_arena arena;
	struct npl_db db;
	const char *bash;
} g;

static int group_setup(void **state)
{
	static const char *const bashes[] = {"/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"};
	struct npl_diag d = NPL_DIAG_INIT;
	size_t i;
	int rc;

	(void)state;
	npl_arena_init(&g.arena);
	rc = npl_db_open(&g.db, &g.arena, NULL, 0, &d);
	if (rc)
		npl_diag_flush(&d, stderr);
	npl_diag_release(&d);
	for (i = 0; i < sizeof(bashes) / sizeof(bashes[0]) && !g.bash; i++)
		if (access(bashes[i], X_OK) == 0)
			g.bash = bashes[i];
	return rc;
}

static int group_teardown(void **state)
{
	(void)state;
	npl_arena_release(&g.arena);
	return 0;
}

/* ---- helpers ------------------------------------------------------------------------ */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void rm_rf(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void make_tmpdir(char *dir, size_t n, const char *what)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, n, "%s/npl-render-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", what);
	assert_non_null(mkdtemp(dir));
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "wb");

	assert_non_null(fp);
	assert_int_equal(fwrite(text, 1, strlen(text), fp), strlen(text));
	assert_int_equal(fclose(fp), 0);
}

static char *slurp(const char *path)
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
	return npl_buf_detach(&b);
}

/* The shell word for plan value pval (malloc'ed). */
static char *shell_word(const char *pval)
{
	struct npl_buf b = NPL_BUF_INIT;

	npl_render_shell_word(&b, pval);
	return npl_buf_detach(&b);
}

/* The shell word for the literal value s (malloc'ed). */
static char *lit_word(const char *s)
{
	struct npl_buf p = NPL_BUF_INIT;
	char *w;

	npl_pval_lit(&p, s);
	w = shell_word(npl_buf_str(&p));
	npl_buf_release(&p);
	return w;
}

static void assert_diags(const struct npl_diag *d, const char *const *want, int n)
{
	int i;

	for (i = 0; i < d->n && i < n; i++) {
		char *s = npl_diag_format(d, &d->v[i], 0);

		assert_string_equal(s, want[i]);
		free(s);
	}
	assert_int_equal(d->n, n);
}

/*
 * Run bash -c script in dir with the environment env; its standard output
 * goes to *out (malloc'ed, *len bytes). Returns the exit status, -1 when
 * bash did not exit normally.
 */
static int run_bash(const char *dir, const char *script, char *const env[], char **out, size_t *len,
		    int syntax_only)
{
	int fds[2], status;
	pid_t pid;
	struct npl_buf b = NPL_BUF_INIT;
	char chunk[4096];
	ssize_t n;

	assert_non_null(g.bash);
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *argv[] = {(char *)g.bash, (char *)(syntax_only ? "-n" : "--norc"), "-c", (char *)script,
				NULL};
		int null = open("/dev/null", O_RDONLY);

		if (null < 0 || dup2(null, 0) < 0 || dup2(fds[1], 1) < 0 || chdir(dir) != 0)
			_exit(126);
		close(fds[0]);
		close(fds[1]);
		execve(g.bash, argv, env);
		_exit(127);
	}
	close(fds[1]);
	while ((n = read(fds[0], chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			assert_int_equal(errno, EINTR);
			continue;
		}
		npl_buf_add(&b, chunk, (size_t)n);
	}
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	*len = b.len;
	*out = npl_buf_detach(&b);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int exists_in(const char *dir, const char *name)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static cJSON *resolve(const char *id, const struct npl_site *site)
{
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_resolve_opts o;
	const struct npl_layer *R = npl_db_recipe(&g.db, id);
	cJSON *plan;

	assert_non_null(R);
	memset(&o, 0, sizeof(o));
	o.site = site;
	plan = npl_resolve(&g.db, R, &o, &d);
	if (!plan)
		npl_diag_flush(&d, stderr);
	assert_non_null(plan);
	assert_int_equal(d.errors, 0);
	npl_diag_release(&d);
	return plan;
}

static void site_set(struct npl_site *s, enum npl_site_key k, const char *v)
{
	struct npl_diag d = NPL_DIAG_INIT;

	assert_int_equal(npl_site_set(s, &g.arena, k, v, NULL, &d), 0);
	npl_diag_release(&d);
}

/* The line of text that starts with prefix (malloc'ed, without its newline), or NULL. */
static char *line_starting(const char *text, const char *prefix)
{
	const char *p = text;

	while (p && *p) {
		const char *end = strchr(p, '\n');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (!strncmp(p, prefix, strlen(prefix)))
			return strndup(p, n);
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

static void assert_has_line(const char *text, const char *line)
{
	struct npl_buf b = NPL_BUF_INIT;

	npl_buf_printf(&b, "\n%s\n", line);
	if (!strstr(text, npl_buf_str(&b)))
		fail_msg("no line '%s' in:\n%s", line, text);
	npl_buf_release(&b);
}

/* ---- plan values ------------------------------------------------------------------------ */

static void test_pval_lit(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"", ""},
		{"plain", "plain"},
		{"$", "$$"},
		{"a$b", "a$$b"},
		{"$$", "$$$$"},
		{"${model-path}", "$${model-path}"},
		{"cost: $5 {x}", "cost: $$5 {x}"},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct npl_buf b = NPL_BUF_INIT;

		npl_buf_puts(&b, "<");
		npl_pval_lit(&b, cases[i].in);
		npl_buf_puts(&b, ">");
		{
			char want[64];

			snprintf(want, sizeof(want), "<%s>", cases[i].out);
			assert_string_equal(npl_buf_str(&b), want);
		}
		npl_buf_release(&b);
	}
}

static void test_pval_ref(void **state)
{
	struct npl_buf b = NPL_BUF_INIT;

	(void)state;
	npl_pval_ref(&b, NPL_SITE_MODEL_PATH, -1, 0);
	assert_string_equal(npl_buf_str(&b), "${model-path}");
	npl_buf_reset(&b);
	npl_pval_ref(&b, NPL_SITE_PREFILL_IP, 1, 0);
	assert_string_equal(npl_buf_str(&b), "${prefill-ip[1]}");
	npl_buf_reset(&b);
	npl_pval_ref(&b, NPL_SITE_PREFILL_IP, 0, 1);
	assert_string_equal(npl_buf_str(&b), "${prefill-ip[0]|url}");
	npl_buf_reset(&b);
	npl_pval_ref(&b, NPL_SITE_DECODE_IP, 12, 1);
	assert_string_equal(npl_buf_str(&b), "${decode-ip[12]|url}");
	npl_buf_reset(&b);
	/* appends */
	npl_buf_puts(&b, "--x=");
	npl_pval_ref(&b, NPL_SITE_IFNAME, -1, 0);
	npl_pval_lit(&b, "$");
	npl_pval_ref(&b, NPL_SITE_DRAFT_MODEL_PATH, -1, 0);
	assert_string_equal(npl_buf_str(&b), "--x=${ifname}$$${draft-model-path}");
	npl_buf_release(&b);
}

/* Describe every segment: L(text) for literals, R(key,index[,url]) for references. */
static int describe_seg(void *ctx, const struct npl_pval_seg *seg)
{
	struct npl_buf *b = ctx;

	if (seg->key < 0) {
		npl_buf_printf(b, "L(%.*s)", (int)seg->len, seg->lit);
		return 0;
	}
	npl_buf_printf(b, "R(%s,%d%s)", npl_site_key_name(seg->key), seg->index, seg->url ? ",url" : "");
	return 0;
}

static void test_pval_walk(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"", ""},
		{"plain", "L(plain)"},
		{"${model-path}", "R(model-path,-1)"},
		{"${prefill-ip[1]}", "R(prefill-ip,1)"},
		{"${prefill-ip[0]|url}", "R(prefill-ip,0,url)"},
		{"tcp://${prefill-ip[0]|url}:24670", "L(tcp://)R(prefill-ip,0,url)L(:24670)"},
		{"--x=${ifname}${draft-model-path}", "L(--x=)R(ifname,-1)R(draft-model-path,-1)"},
		{"${decode-ip[100000]}", "R(decode-ip,100000)"},
		/* $$ is a literal $ */
		{"$$", "L($)"},
		{"a$$b", "L(a)L($)L(b)"},
		{"$$${ifname}", "L($)R(ifname,-1)"},
		{"$${ifname}", "L($)L({ifname})"},
		/* what is not a reference stays literal */
		{"$", "L($)"},
		{"a$", "L(a)L($)"},
		{"$x", "L($)L(x)"},
		{"${bogus}", "L($)L({bogus})"},
		{"${}", "L($)L({})"},
		{"${model-path", "L($)L({model-path)"},
		{"${prefill-ip[x]}", "L($)L({prefill-ip[x]})"},
		{"${prefill-ip[]}", "L($)L({prefill-ip[]})"},
		{"${prefill-ip[-1]}", "L($)L({prefill-ip[-1]})"},
		{"${prefill-ip[100001]}", "L($)L({prefill-ip[100001]})"},
		{"${prefill-ip[1]|URL}", "L($)L({prefill-ip[1]|URL})"},
		{"${prefill-ip[1]x}", "L($)L({prefill-ip[1]x})"},
		{"${MODEL-PATH}", "L($)L({MODEL-PATH})"},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct npl_buf b = NPL_BUF_INIT;

		assert_int_equal(npl_pval_walk(cases[i].in, describe_seg, &b), 0);
		assert_string_equal(npl_buf_str(&b), cases[i].out);
		npl_buf_release(&b);
	}
}

struct seg_log {
	int calls, stop_at;
	char text[8][64];
};

static int log_seg(void *ctx, const struct npl_pval_seg *seg)
{
	struct seg_log *l = ctx;

	snprintf(l->text[l->calls], sizeof(l->text[0]), "%.*s", (int)seg->len, seg->lit);
	l->calls++;
	return l->calls == l->stop_at ? 7 : 0;
}

static void test_pval_walk_pieces(void **state)
{
	struct seg_log l;

	(void)state;
	/* a reference's piece is the reference's text */
	memset(&l, 0, sizeof(l));
	assert_int_equal(npl_pval_walk("a${prefill-ip[2]|url}b$$", log_seg, &l), 0);
	assert_int_equal(l.calls, 4);
	assert_string_equal(l.text[0], "a");
	assert_string_equal(l.text[1], "${prefill-ip[2]|url}");
	assert_string_equal(l.text[2], "b");
	assert_string_equal(l.text[3], "$");
	/* the walk stops at the first non-zero result and returns it */
	memset(&l, 0, sizeof(l));
	l.stop_at = 2;
	assert_int_equal(npl_pval_walk("a${ifname}b${model-path}c", log_seg, &l), 7);
	assert_int_equal(l.calls, 2);
	memset(&l, 0, sizeof(l));
	l.stop_at = 1;
	assert_int_equal(npl_pval_walk("tail only", log_seg, &l), 7);
	assert_int_equal(l.calls, 1);
}

static void test_pval_lit_roundtrip(void **state)
{
	static const char *const values[] = {
		"", "$", "$$", "a$b", "${model-path}", "$${ifname}", "${prefill-ip[0]|url}", "$(touch x)", "$HOME",
		"it's \"x\" \\ `y`", "\xc3\xa9\xe2\x80\x94\xe4\xb8\xad",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		struct npl_buf p = NPL_BUF_INIT, out = NPL_BUF_INIT, seen = NPL_BUF_INIT;
		int missing = -2;

		npl_pval_lit(&p, values[i]);
		/* a literal never holds a reference */
		assert_int_equal(npl_pval_walk(npl_buf_str(&p), describe_seg, &seen), 0);
		assert_null(strstr(npl_buf_str(&seen), "R("));
		assert_int_equal(npl_pval_resolve(&out, npl_buf_str(&p), NULL, &missing), 0);
		assert_string_equal(npl_buf_str(&out), values[i]);
		assert_int_equal(missing, -2);
		npl_buf_release(&p);
		npl_buf_release(&out);
		npl_buf_release(&seen);
	}
}

static void make_site(struct npl_site *s)
{
	memset(s, 0, sizeof(*s));
	site_set(s, NPL_SITE_MODEL_PATH, "/models/Kimi $x");
	site_set(s, NPL_SITE_PREFILL_IP, "10.0.0.1");
	site_set(s, NPL_SITE_PREFILL_IP, "FE80::1");
}

static void test_pval_resolve(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"", ""},
		{"--x=${model-path}", "--x=/models/Kimi $x"},
		{"${prefill-ip[0]}", "10.0.0.1"},
		{"${prefill-ip[0]|url}", "10.0.0.1"},
		{"${prefill-ip[1]}", "fe80::1"},
		{"${prefill-ip[1]|url}:8000", "[fe80::1]:8000"},
		{"tcp://${prefill-ip[1]|url}:24670", "tcp://[fe80::1]:24670"},
		{"${prefill-ip}", "10.0.0.1"},
		{"$$HOME ${bogus} $", "$HOME ${bogus} $"},
		{"$${model-path}", "${model-path}"},
	};
	struct npl_site s;
	size_t i;

	(void)state;
	make_site(&s);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct npl_buf b = NPL_BUF_INIT;
		int missing = -2;

		assert_int_equal(npl_pval_resolve(&b, cases[i].in, &s, &missing), 0);
		assert_string_equal(npl_buf_str(&b), cases[i].out);
		assert_int_equal(missing, -2);
		npl_buf_release(&b);
	}
}

static void test_pval_resolve_missing(void **state)
{
	static const struct {
		const char *in;
		int missing;
	} cases[] = {
		{"${ifname}", NPL_SITE_IFNAME},
		{"a ${model-path} ${decode-ip[0]} ${ifname}", NPL_SITE_DECODE_IP},
		{"${prefill-ip[2]}", NPL_SITE_PREFILL_IP},
		{"${prefill-ip[2]|url} ${ifname}", NPL_SITE_PREFILL_IP},
		{"${draft-model-path}", NPL_SITE_DRAFT_MODEL_PATH},
		{"${node-ip[0]|url}", NPL_SITE_NODE_IP},
	};
	struct npl_site s;
	size_t i;

	(void)state;
	make_site(&s);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct npl_buf b = NPL_BUF_INIT;
		int missing = -2;

		assert_int_equal(npl_pval_resolve(&b, cases[i].in, &s, &missing), -1);
		assert_int_equal(missing, cases[i].missing);
		/* missing may be NULL */
		assert_int_equal(npl_pval_resolve(&b, cases[i].in, &s, NULL), -1);
		npl_buf_release(&b);
	}
	{
		struct npl_buf b = NPL_BUF_INIT;
		int missing = -2;

		/* no site at all */
		assert_int_equal(npl_pval_resolve(&b, "x ${model-path}", NULL, &missing), -1);
		assert_int_equal(missing, NPL_SITE_MODEL_PATH);
		npl_buf_reset(&b);
		assert_int_equal(npl_pval_resolve(&b, "no reference", NULL, &missing), 0);
		assert_string_equal(npl_buf_str(&b), "no reference");
		npl_buf_release(&b);
	}
}

static void test_pval_display(void **state)
{
	struct npl_site s;
	struct npl_buf b = NPL_BUF_INIT;

	(void)state;
	make_site(&s);
	npl_pval_display(&b, "${prefill-ip[0]} ${prefill-ip[1]|url} ${model-path} ${ifname} ${decode-ip[3]|url} $$",
			 &s);
	assert_string_equal(npl_buf_str(&b), "10.0.0.1 [fe80::1] /models/Kimi $x <ifname> <decode-ip 3> $");
	npl_buf_reset(&b);
	npl_pval_display(&b, "--host ${prefill-ip[0]} --model-path ${model-path}", NULL);
	assert_string_equal(npl_buf_str(&b), "--host <prefill-ip 0> --model-path <model-path>");
	npl_buf_reset(&b);
	npl_pval_display(&b, "${prefill-ip[2]}", &s);
	assert_string_equal(npl_buf_str(&b), "<prefill-ip 2>");
	npl_buf_release(&b);
}

static void test_url_host(void **state)
{
	struct npl_buf b = NPL_BUF_INIT;

	(void)state;
	npl_url_host(&b, "10.0.0.1");
	assert_string_equal(npl_buf_str(&b), "10.0.0.1");
	npl_buf_reset(&b);
	npl_url_host(&b, "fe80::1");
	assert_string_equal(npl_buf_str(&b), "[fe80::1]");
	npl_buf_reset(&b);
	npl_url_host(&b, "::ffff:10.0.0.1");
	assert_string_equal(npl_buf_str(&b), "[::ffff:10.0.0.1]");
	npl_buf_reset(&b);
	npl_buf_puts(&b, "http://");
	npl_url_host(&b, "::1");
	npl_buf_puts(&b, ":80");
	assert_string_equal(npl_buf_str(&b), "http://[::1]:80");
	npl_buf_release(&b);
}

static void test_plan_site(void **state)
{
	cJSON *plan = cJSON_Parse("{\"site\": {\"model-path\": \"/m\", \"prefill-ip\": [\"10.0.0.1\", \"fe80::1\"],"
				  " \"decode-ip\": [], \"bogus\": \"x\"}}");
	struct npl_site s;
	struct npl_buf b = NPL_BUF_INIT;
	int missing = -2;

	(void)state;
	assert_non_null(plan);
	npl_plan_site(plan, &s, &g.arena);
	assert_int_equal(s.key[NPL_SITE_MODEL_PATH].n, 1);
	assert_string_equal(s.key[NPL_SITE_MODEL_PATH].v[0], "/m");
	assert_int_equal(s.key[NPL_SITE_PREFILL_IP].n, 2);
	assert_string_equal(s.key[NPL_SITE_PREFILL_IP].v[0], "10.0.0.1");
	assert_string_equal(s.key[NPL_SITE_PREFILL_IP].v[1], "fe80::1");
	assert_int_equal(s.key[NPL_SITE_DECODE_IP].n, 0);
	assert_int_equal(s.key[NPL_SITE_IFNAME].n, 0);
	assert_int_equal(npl_pval_resolve(&b, "${model-path} ${prefill-ip[1]|url}", &s, &missing), 0);
	assert_string_equal(npl_buf_str(&b), "/m [fe80::1]");
	npl_buf_reset(&b);
	assert_int_equal(npl_pval_resolve(&b, "${decode-ip[0]}", &s, &missing), -1);
	assert_int_equal(missing, NPL_SITE_DECODE_IP);
	npl_buf_release(&b);
	cJSON_Delete(plan);
	/* a plan without a site object gives an empty site */
	plan = cJSON_Parse("{}");
	npl_plan_site(plan, &s, &g.arena);
	assert_int_equal(s.key[NPL_SITE_MODEL_PATH].n, 0);
	cJSON_Delete(plan);
}

/* ---- shell words ------------------------------------------------------------------------ */

static void test_shell_word(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"0.78", "0.78"},
		{"{\"enable_multithread_load\": true}", "'{\"enable_multithread_load\": true}'"},
		{"", "''"},
		{"it's", "'it'\\''s'"},
		{"${model-path}", "\"$MODEL_PATH\""},
		{"tcp://${prefill-ip[0]|url}:24670", "tcp://\"${PREFILL_HOSTS[0]}\":24670"},
		{"$$(x)", "'$(x)'"},
		{"expandable_segments:True", "expandable_segments:True"},
		{"a=b,c@d%e+f/g.h_i-j", "a=b,c@d%e+f/g.h_i-j"},
		{"--flag", "--flag"},
		{"a b", "'a b'"},
		{"~", "'~'"},
		{"'", "''\\'''"},
		{"$$", "'$'"},
		{"$", "'$'"},
		{"${bogus}", "'${bogus}'"},
		{"${prefill-ip[1]}", "\"${PREFILL_IPS[1]}\""},
		{"${decode-ip[0]|url}", "\"${DECODE_HOSTS[0]}\""},
		{"${node-ip[3]|url}", "\"${NODE_HOSTS[3]}\""},
		{"--x=${ifname}", "--x=\"$IFNAME\""},
		{"a b${model-path}c d", "'a b'\"$MODEL_PATH\"'c d'"},
		{"${model-path}${ifname}", "\"$MODEL_PATH\"\"$IFNAME\""},
		{"${draft-model-path}/x y", "\"$DRAFT_MODEL_PATH\"'/x y'"},
		{"http://${prefill-ip[0]|url}:8000 8998", "http://\"${PREFILL_HOSTS[0]}\"':8000 8998'"},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *w = shell_word(cases[i].in);

		assert_string_equal(w, cases[i].out);
		free(w);
	}
}

static void test_shell_word_appends(void **state)
{
	struct npl_buf b = NPL_BUF_INIT;

	(void)state;
	npl_buf_puts(&b, "exec");
	npl_buf_putc(&b, ' ');
	npl_render_shell_word(&b, "it's");
	npl_buf_putc(&b, ' ');
	npl_render_shell_word(&b, "");
	npl_buf_putc(&b, ' ');
	npl_render_shell_word(&b, "${model-path}");
	assert_string_equal(npl_buf_str(&b), "exec 'it'\\''s' '' \"$MODEL_PATH\"");
	npl_buf_release(&b);
}

static const char *const hostile[] = {
	"",
	"a b",
	"  two  spaces  ",
	"it's",
	"say \"hi\"",
	"'",
	"\"",
	"''",
	"$(touch PWNED)",
	"`touch PWNED`",
	"'$(touch PWNED)'",
	"\"$(touch PWNED)\"",
	"a;touch PWNED",
	"a && touch PWNED",
	"a | touch PWNED",
	"> PWNED",
	"*",
	"?",
	"[a]",
	"{a,b}",
	"~",
	"~root",
	"$HOME",
	"${HOME}",
	"$$",
	"$",
	"!",
	"!!",
	"#comment",
	"a#b",
	"line1\nline2",
	"\n",
	"tab\there",
	"back\\slash",
	"\\",
	"a\\'b",
	"\xc3\xa9\xe2\x80\x94\xe4\xb8\xad",
	"\xf0\x9f\x99\x82",
	"\xff\xfe",
	"\x01\x1b[31m\x7f",
	"\r",
	"-n",
	"-e",
	"--",
	"-",
	"x=1",
	"%s%n",
	"(",
	")",
	"${model-path}",
	"{\"enable_multithread_load\": true}",
};

#define NHOSTILE (sizeof(hostile) / sizeof(hostile[0]))

static void bash_literals(const char *dir, char *const env[])
{
	struct npl_buf all = NPL_BUF_INIT, want_all = NPL_BUF_INIT;
	char *out;
	size_t len, i;

	/* each value alone */
	for (i = 0; i < NHOSTILE; i++) {
		char *w = lit_word(hostile[i]);
		struct npl_buf script = NPL_BUF_INIT;

		npl_buf_printf(&script, "printf '%%s\\0' %s", w);
		assert_int_equal(run_bash(dir, npl_buf_str(&script), env, &out, &len, 0), 0);
		if (len != strlen(hostile[i]) + 1 || memcmp(out, hostile[i], len))
			fail_msg("value %zu: word %s printed %zu bytes '%.*s'", i, w, len, (int)len, out);
		assert_false(exists_in(dir, "PWNED"));
		npl_buf_printf(&all, " %s", w);
		npl_buf_add(&want_all, hostile[i], strlen(hostile[i]) + 1);
		free(out);
		free(w);
		npl_buf_release(&script);
	}
	/* all of them on one line: each is exactly one word */
	{
		struct npl_buf script = NPL_BUF_INIT;

		npl_buf_printf(&script, "printf '%%s\\0'%s", npl_buf_str(&all));
		assert_int_equal(run_bash(dir, npl_buf_str(&script), env, &out, &len, 0), 0);
		assert_int_equal(len, want_all.len);
		assert_memory_equal(out, want_all.data, len);
		free(out);
		npl_buf_release(&script);
	}
	assert_false(exists_in(dir, "PWNED"));
	npl_buf_release(&all);
	npl_buf_release(&want_all);
}

static void test_shell_word_bash_literals(void **state)
{
	char dir[512], path[1024];
	char *env_c[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", "HOME=/nonexistent", NULL};
	char *env_utf8[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C.UTF-8", "HOME=/nonexistent", NULL};
	char *out;
	size_t len;

	(void)state;
	if (!g.bash)
		skip();
	make_tmpdir(dir, sizeof(dir), "bash");
	/* files that an unquoted glob would match */
	snprintf(path, sizeof(path), "%s/a", dir);
	write_file(path, "");
	snprintf(path, sizeof(path), "%s/b", dir);
	write_file(path, "");
	/* the detector works: an unquoted command substitution does create PWNED */
	assert_int_equal(run_bash(dir, "printf '%s\\0' $(touch PWNED)", env_c, &out, &len, 0), 0);
	free(out);
	assert_true(exists_in(dir, "PWNED"));
	snprintf(path, sizeof(path), "%s/PWNED", dir);
	assert_int_equal(unlink(path), 0);
	/* and an unquoted glob does expand here */
	assert_int_equal(run_bash(dir, "printf '%s\\0' ?", env_c, &out, &len, 0), 0);
	assert_int_equal(len, 4);
	assert_memory_equal(out, "a\0b\0", 4);
	free(out);

	bash_literals(dir, env_c);
	bash_literals(dir, env_utf8);
	rm_rf(dir);
}

/* Site references: the script's variables carry any value through unchanged. */
static void test_shell_word_bash_refs(void **state)
{
	char dir[512];
	size_t i, len;
	char *out;

	(void)state;
	if (!g.bash)
		skip();
	make_tmpdir(dir, sizeof(dir), "refs");
	for (i = 0; i < NHOSTILE; i++) {
		struct npl_buf pval = NPL_BUF_INIT, script = NPL_BUF_INIT, want = NPL_BUF_INIT;
		struct npl_buf envvar = NPL_BUF_INIT;
		char *w, *a0, *a1;
		char *env[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", NULL, NULL};

		/* pre'x' + MODEL_PATH + [PREFILL_HOSTS[1]] + " $(touch PWNED)" */
		npl_pval_lit(&pval, "pre'x' ");
		npl_pval_ref(&pval, NPL_SITE_MODEL_PATH, -1, 0);
		npl_pval_lit(&pval, "[");
		npl_pval_ref(&pval, NPL_SITE_PREFILL_IP, 1, 1);
		npl_pval_lit(&pval, "] $(touch PWNED)");
		w = shell_word(npl_buf_str(&pval));
		a0 = lit_word("first value");
		a1 = lit_word(hostile[NHOSTILE - 1 - i]);
		npl_buf_printf(&envvar, "MODEL_PATH=%s", hostile[i]);
		env[2] = (char *)npl_buf_str(&envvar);
		npl_buf_printf(&script, "PREFILL_HOSTS=(%s %s)\nprintf '%%s\\0' %s", a0, a1, w);
		npl_buf_printf(&want, "pre'x' %s[%s] $(touch PWNED)", hostile[i], hostile[NHOSTILE - 1 - i]);
		assert_int_equal(run_bash(dir, npl_buf_str(&script), env, &out, &len, 0), 0);
		if (len != want.len + 1 || memcmp(out, want.data, len))
			fail_msg("value %zu: script %s printed '%.*s'", i, npl_buf_str(&script), (int)len, out);
		assert_false(exists_in(dir, "PWNED"));
		free(out);
		free(w);
		free(a0);
		free(a1);
		npl_buf_release(&pval);
		npl_buf_release(&script);
		npl_buf_release(&want);
		npl_buf_release(&envvar);
	}
	rm_rf(dir);
}

/* ---- bundles ----------------------------------------------------------------------------- */

static void test_render_bundle_kimi(void **state)
{
	struct npl_site site;
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_outset set = {0};
	cJSON *plan, *parsed;
	char *manifest;

	(void)state;
	memset(&site, 0, sizeof(site));
	site_set(&site, NPL_SITE_MODEL_PATH, "/models/it's here");
	plan = resolve(KIMI, &site);
	assert_int_equal(npl_render_bundle(plan, NULL, "", &set, &d), 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(set.n, 3);
	assert_string_equal(set.v[0].path, "pd-mixed.sh");
	assert_string_equal(set.v[1].path, "bench.sh");
	assert_string_equal(set.v[2].path, "manifest.json");
	assert_int_equal(set.v[0].mode, 0755);
	assert_int_equal(set.v[1].mode, 0755);
	assert_int_equal(set.v[2].mode, 0644);
	assert_int_equal(set.v[0].len, strlen(set.v[0].text));
	assert_int_equal(set.v[1].len, strlen(set.v[1].text));
	assert_int_equal(set.v[2].len, strlen(set.v[2].text));

	/* the server script */
	assert_true(!strncmp(set.v[0].text, "#!/usr/bin/env bash\n", 20));
	assert_has_line(set.v[0].text, "MODEL_PATH='/models/it'\\''s here'  # --model-path");
	assert_has_line(set.v[0].text, "DRAFT_MODEL_PATH=\"${DRAFT_MODEL_PATH:-}\"  # --draft-model-path");
	assert_has_line(set.v[0].text, "IFNAME=\"${IFNAME:-}\"  # --ifname");
	assert_has_line(set.v[0].text, "npl_need_value DRAFT_MODEL_PATH --draft-model-path");
	assert_has_line(set.v[0].text, "\t\t--model-loader-extra-config '{\"enable_multithread_load\": true}' \\");
	assert_has_line(set.v[0].text, "\t\t--model-path \"$MODEL_PATH\" \\");
	assert_has_line(set.v[0].text, "\t\t--speculative-draft-model-path \"$DRAFT_MODEL_PATH\" \\");
	assert_has_line(set.v[0].text, "\t\t--mem-fraction-static 0.865 \\");
	assert_has_line(set.v[0].text, "\t\t--cuda-graph-bs-decode 1 2 3 4 5 \\");
	assert_has_line(set.v[0].text, "\texport GLOO_SOCKET_IFNAME=\"$IFNAME\"");
	assert_has_line(set.v[0].text, "\texec python3 -m sglang.launch_server \\");
	/* the value is given: it is not left to the environment */
	assert_null(strstr(set.v[0].text, "MODEL_PATH=\"${MODEL_PATH:-}\""));
	/* the last flag has no continuation */
	assert_has_line(set.v[0].text, "\t\t--speculative-draft-model-quantization unquant");

	/* the benchmark */
	assert_true(!strncmp(set.v[1].text, "#!/usr/bin/env bash\n", 20));
	assert_has_line(set.v[1].text, "exec python -m sglang.bench_serving \\");
	assert_has_line(set.v[1].text, "\t--random-input-len 3500 \\");
	assert_null(strstr(set.v[1].text, "MODEL_PATH"));

	/* the manifest is the plan, then the record of the bundle's files (output.h) */
	manifest = npl_render_manifest(plan);
	assert_memory_equal(set.v[2].text, manifest, strlen(manifest) - 3);
	assert_true(set.v[2].len >= 3);
	assert_string_equal(set.v[2].text + set.v[2].len - 2, "}\n");
	parsed = cJSON_Parse(set.v[2].text);
	assert_non_null(parsed);
	cJSON_DeleteItemFromObjectCaseSensitive(parsed, "files");
	assert_true(cJSON_Compare(parsed, plan, 1));
	assert_string_equal(npl_json_str(cJSON_GetObjectItemCaseSensitive(parsed, "site"), "model-path"),
			    "/models/it's here");
	cJSON_Delete(parsed);
	free(manifest);

	npl_out_release(&set);
	npl_diag_release(&d);
	cJSON_Delete(plan);
}

/* The rendered scripts are valid bash, and the site value line gives back the value exactly. */
static void test_render_bundle_bash(void **state)
{
	static const char model[] = "/models/$(touch PWNED) `touch PWNED` \"q\" 'a' * ? [a] ${ifname} $$ \\ \t\xc3\xa9";
	char *env[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", NULL};
	struct npl_site site;
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_outset set = {0};
	char dir[512], *line, *out;
	struct npl_buf script = NPL_BUF_INIT;
	size_t len;
	cJSON *plan;
	int i;

	(void)state;
	if (!g.bash)
		skip();
	memset(&site, 0, sizeof(site));
	site_set(&site, NPL_SITE_MODEL_PATH, model);
	site_set(&site, NPL_SITE_IFNAME, "bond0.100");
	plan = resolve(KIMI, &site);
	assert_int_equal(npl_render_bundle(plan, NULL, "", &set, &d), 0);
	make_tmpdir(dir, sizeof(dir), "script");
	for (i = 0; i < set.n - 1; i++) {
		assert_int_equal(run_bash(dir, set.v[i].text, env, &out, &len, 1), 0);
		assert_int_equal(len, 0);
		free(out);
	}
	line = line_starting(set.v[0].text, "MODEL_PATH=");
	assert_non_null(line);
	npl_buf_printf(&script, "%s\n", line);
	free(line);
	line = line_starting(set.v[0].text, "IFNAME=");
	assert_non_null(line);
	assert_string_equal(line, "IFNAME=bond0.100  # --ifname");
	npl_buf_printf(&script, "%s\nprintf '%%s\\0' \"$MODEL_PATH\" \"$IFNAME\"", line);
	free(line);
	assert_int_equal(run_bash(dir, npl_buf_str(&script), env, &out, &len, 0), 0);
	assert_int_equal(len, sizeof(model) + strlen("bond0.100") + 1);
	assert_memory_equal(out, model, sizeof(model));
	assert_memory_equal(out + sizeof(model), "bond0.100", strlen("bond0.100") + 1);
	assert_false(exists_in(dir, "PWNED"));
	free(out);
	npl_buf_release(&script);
	rm_rf(dir);
	npl_out_release(&set);
	npl_diag_release(&d);
	cJSON_Delete(plan);
}

static void test_render_bundle_dir(void **state)
{
	struct npl_templates t = {0};
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_outset set = {0};
	cJSON *plan;

	(void)state;
	plan = resolve(KIMI, NULL);
	assert_int_equal(npl_render_bundle(plan, &t, "out/kimi", &set, &d), 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(set.n, 3);
	assert_string_equal(set.v[0].path, "out/kimi/pd-mixed.sh");
	assert_string_equal(set.v[1].path, "out/kimi/bench.sh");
	assert_string_equal(set.v[2].path, "out/kimi/manifest.json");
	/* nothing given: every site value is left to the environment */
	assert_has_line(set.v[0].text, "MODEL_PATH=\"${MODEL_PATH:-}\"  # --model-path");
	assert_has_line(set.v[0].text, "DRAFT_MODEL_PATH=\"${DRAFT_MODEL_PATH:-}\"  # --draft-model-path");
	/* the embedded templates are not cached */
	assert_int_equal(t.n, 0);
	npl_templates_release(&t);
	npl_out_release(&set);
	npl_diag_release(&d);
	cJSON_Delete(plan);
}

static void test_render_bundle_pd_disagg(void **state)
{
	struct npl_site site;
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_outset set = {0};
	cJSON *plan;

	(void)state;
	memset(&site, 0, sizeof(site));
	site_set(&site, NPL_SITE_PREFILL_IP, "FE80:0::1");
	site_set(&site, NPL_SITE_DECODE_IP, "10.0.1.1");
	plan = resolve(KIMI_PD, &site);
	assert_int_equal(npl_render_bundle(plan, NULL, "", &set, &d), 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(set.n, 5);
	assert_string_equal(set.v[0].path, "prefill.sh");
	assert_string_equal(set.v[1].path, "decode.sh");
	assert_string_equal(set.v[2].path, "router.sh");
	assert_string_equal(set.v[3].path, "bench.sh");
	assert_string_equal(set.v[4].path, "manifest.json");
	assert_has_line(set.v[0].text, "PREFILL_IPS=(fe80::1)  # --prefill-ip: 1 address");
	assert_has_line(set.v[0].text, "\texport ASCEND_MF_STORE_URL=tcp://\"${PREFILL_HOSTS[0]}\":24670");
	assert_has_line(set.v[0].text, "\t\t--host \"${PREFILL_IPS[0]}\" \\");
	assert_has_line(set.v[1].text, "DECODE_IPS=(10.0.1.1)  # --decode-ip: 1 address");
	assert_has_line(set.v[2].text, "\t--prefill http://\"${PREFILL_HOSTS[0]}\":8000 8998 \\");
	assert_has_line(set.v[2].text, "\t--decode http://\"${DECODE_HOSTS[0]}\":8001 \\");
	/* the router reads the addresses only for their URL form: the check of each list reads
	 * the array itself, so no script assigns a variable it never reads (shellcheck SC2034) */
	assert_has_line(set.v[2].text, "PREFILL_IPS=(fe80::1)  # --prefill-ip: 1 address");
	assert_has_line(set.v[2].text, "npl_need_list PREFILL_IPS 1 --prefill-ip \"${#PREFILL_IPS[@]}\"");
	assert_has_line(set.v[2].text, "npl_need_list DECODE_IPS 1 --decode-ip \"${#DECODE_IPS[@]}\"");
	assert_has_line(set.v[1].text, "npl_need_list PREFILL_IPS 1 --prefill-ip \"${#PREFILL_IPS[@]}\"");
	assert_null(strstr(set.v[2].text, "local -n npl_l"));
	npl_out_release(&set);
	npl_diag_release(&d);
	cJSON_Delete(plan);
}

static void test_render_manifest(void **state)
{
	cJSON *plan = cJSON_Parse("{\"a\": \"it's \\\"q\\\"\", \"b\": [1, 2]}"), *back;
	char *m;
	size_t n;

	(void)state;
	assert_non_null(plan);
	m = npl_render_manifest(plan);
	n = strlen(m);
	assert_true(n > 2);
	assert_int_equal(m[n - 1], '\n');
	assert_int_equal(m[n - 2], '}');
	back = cJSON_Parse(m);
	assert_non_null(back);
	assert_true(cJSON_Compare(back, plan, 1));
	cJSON_Delete(back);
	free(m);
	cJSON_Delete(plan);
}

/* ---- template folders -------------------------------------------------------------------- */

static void test_templates_dir_missing(void **state)
{
	struct npl_templates t = {0};
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_outset set = {0};
	char dir[512], want[4][1024];
	const char *wantp[4];
	cJSON *plan;
	int i;

	(void)state;
	make_tmpdir(dir, sizeof(dir), "tmpl");
	t.dir = dir;
	plan = resolve(KIMI, NULL);
	assert_int_equal(npl_render_bundle(plan, &t, "", &set, &d), -1);
	snprintf(want[0], sizeof(want[0]), "error: cannot read '%s/server.sh.tmpl': No such file or directory", dir);
	snprintf(want[1], sizeof(want[1]), "error: no template 'server.sh.tmpl'");
	snprintf(want[2], sizeof(want[2]), "error: cannot read '%s/bench.sh.tmpl': No such file or directory", dir);
	snprintf(want[3], sizeof(want[3]), "error: no template 'bench.sh.tmpl'");
	for (i = 0; i < 4; i++)
		wantp[i] = want[i];
	assert_diags(&d, wantp, 4);
	/* no script in the set */
	for (i = 0; i < set.n; i++)
		assert_null(strstr(set.v[i].path, ".sh"));
	npl_templates_release(&t);
	npl_out_release(&set);
	npl_diag_release(&d);
	cJSON_Delete(plan);
	rm_rf(dir);
}

static void test_templates_dir_missing_partial(void **state)
{
	struct npl_templates t = {0};
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_buf b = NPL_BUF_INIT;
	char dir[512], path[1024], want[2][1024];
	const char *wantp[2];
	char *text;
	cJSON *plan;

	(void)state;
	make_tmpdir(dir, sizeof(dir), "tmpl");
	snprintf(path, sizeof(path), "%s/templates/server.sh.tmpl", NPL_SOURCE_DIR);
	text = slurp(path);
	assert_non_null(text);
	snprintf(path, sizeof(path), "%s/server.sh.tmpl", dir);
	write_file(path, text);
	free(text);
	t.dir = dir;
	plan = resolve(KIMI, NULL);
	assert_int_equal(npl_render_role(plan, npl_plan_role(plan, "pd-mixed"), &t, &b, &d), -1);
	snprintf(want[0], sizeof(want[0]), "error: cannot read '%s/_header.sh.tmpl': No such file or directory", dir);
	snprintf(want[1], sizeof(want[1]), "%s/server.sh.tmpl:1:1: error: unknown partial '_header.sh.tmpl'", dir);
	wantp[0] = want[0];
	wantp[1] = want[1];
	assert_diags(&d, wantp, 2);
	npl_buf_release(&b);
	npl_templates_release(&t);
	npl_diag_release(&d);
	cJSON_Delete(plan);
	rm_rf(dir);
}

/* A folder holding copies of the shipped templates renders what the embedded ones render. */
static void test_templates_dir_same(void **state)
{
	struct npl_templates t = {0};
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_outset emb = {0}, fromdir = {0};
	struct npl_site site;
	char dir[512], src[1024], path[2048];
	struct dirent *de;
	DIR *dp;
	cJSON *plan;
	int i, copied = 0;

	(void)state;
	make_tmpdir(dir, sizeof(dir), "tmpl");
	snprintf(src, sizeof(src), "%s/templates", NPL_SOURCE_DIR);
	dp = opendir(src);
	assert_non_null(dp);
	while ((de = readdir(dp))) {
		char *text;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", src, de->d_name);
		text = slurp(path);
		assert_non_null(text);
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		write_file(path, text);
		free(text);
		copied++;
	}
	closedir(dp);
	assert_true(copied >= 3);
	memset(&site, 0, sizeof(site));
	site_set(&site, NPL_SITE_MODEL_PATH, "/models/it's here");
	plan = resolve(KIMI, &site);
	t.dir = dir;
	assert_int_equal(npl_render_bundle(plan, NULL, "", &emb, &d), 0);
	assert_int_equal(npl_render_bundle(plan, &t, "", &fromdir, &d), 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(fromdir.n, emb.n);
	for (i = 0; i < emb.n; i++) {
		assert_string_equal(fromdir.v[i].path, emb.v[i].path);
		assert_string_equal(fromdir.v[i].text, emb.v[i].text);
		assert_int_equal(fromdir.v[i].mode, emb.v[i].mode);
	}
	/* the templates read are cached by path */
	assert_true(t.n >= 2);
	for (i = 0; i < t.n; i++)
		assert_true(!strncmp(t.names[i], dir, strlen(dir)) && t.names[i][strlen(dir)] == '/');
	npl_templates_release(&t);
	assert_int_equal(t.n, 0);
	assert_null(t.names);
	assert_null(t.texts);
	npl_out_release(&emb);
	npl_out_release(&fromdir);
	npl_diag_release(&d);
	cJSON_Delete(plan);
	rm_rf(dir);
}

/* A template of one's own: {{x}} is shell-quoted, {{{x}}} is raw. */
static void test_templates_dir_custom(void **state)
{
	struct npl_templates t = {0};
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_buf b = NPL_BUF_INIT;
	char dir[512], path[1024];
	cJSON *plan;

	(void)state;
	make_tmpdir(dir, sizeof(dir), "tmpl");
	snprintf(path, sizeof(path), "%s/server.sh.tmpl", dir);
	write_file(path, "{{{script}}} {{recipe.title}} {{{recipe.title}}}\n{{#role.nodes}}{{{index}}}{{/role.nodes}}\n");
	t.dir = dir;
	plan = resolve(KIMI, NULL);
	assert_int_equal(npl_render_role(plan, npl_plan_role(plan, "pd-mixed"), &t, &b, &d), 0);
	assert_int_equal(d.n, 0);
	assert_string_equal(npl_buf_str(&b), "pd-mixed.sh 'Kimi-K2.6 W4A8 8P IN3K5 OUT1K5 20ms' "
					     "Kimi-K2.6 W4A8 8P IN3K5 OUT1K5 20ms\n0\n");
	npl_buf_release(&b);
	npl_templates_release(&t);
	npl_diag_release(&d);
	cJSON_Delete(plan);
	rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pval_lit),
		cmocka_unit_test(test_pval_ref),
		cmocka_unit_test(test_pval_walk),
		cmocka_unit_test(test_pval_walk_pieces),
		cmocka_unit_test(test_pval_lit_roundtrip),
		cmocka_unit_test(test_pval_resolve),
		cmocka_unit_test(test_pval_resolve_missing),
		cmocka_unit_test(test_pval_display),
		cmocka_unit_test(test_url_host),
		cmocka_unit_test(test_plan_site),
		cmocka_unit_test(test_shell_word),
		cmocka_unit_test(test_shell_word_appends),
		cmocka_unit_test(test_shell_word_bash_literals),
		cmocka_unit_test(test_shell_word_bash_refs),
		cmocka_unit_test(test_render_bundle_kimi),
		cmocka_unit_test(test_render_bundle_bash),
		cmocka_unit_test(test_render_bundle_dir),
		cmocka_unit_test(test_render_bundle_pd_disagg),
		cmocka_unit_test(test_render_manifest),
		cmocka_unit_test(test_templates_dir_missing),
		cmocka_unit_test(test_templates_dir_missing_partial),
		cmocka_unit_test(test_templates_dir_same),
		cmocka_unit_test(test_templates_dir_custom),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
