/* test_pagesh.c: pagesh.c, the pages' shell run in the head, on lines made here for each
 * construct and error, and on the 36 sections of tests/data/pages/upstream: for every node,
 * the router and the benchmark, what it launches (flags as argparse names them, environment,
 * unsets, sources, tuning) equals what bash launched when the page's own script ran on the
 * simulated host (the JSON files of tests/golden/upstream, written by tests/golden/derive-upstream.py
 * from ../shared/tools/simulate.py, not from npulaunch). */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "npulaunch/buf.h"
#include "npulaunch/engine.h"
#include "npulaunch/fsio.h"
#include "npulaunch/page.h"
#include "npulaunch/pagesh.h"
#include "npulaunch/recipe.h"

static const char *const prefill[] = {"127.0.10.1", "127.0.10.2", "127.0.10.3", "127.0.10.4"};
static const char *const decode[] = {"127.0.11.1", "127.0.11.2", "127.0.11.3", "127.0.11.4"};
static const char *const nodes[] = {"127.0.12.1", "127.0.12.2", "127.0.12.3", "127.0.12.4"};
static const struct npl_pagesh_site site = {"enp189s0f0", prefill, decode, nodes, 4, 4, 4};

/* Run text as one block at line 1 of "p.mdx" on ip; the messages joined by newlines. */
static int run(const char *text, const char *ip, struct npl_pagesh_result *r, struct npl_arena *a,
	       struct npl_buf *msgs)
{
	struct npl_page_block b = {NULL, text, {"p.mdx", 1, 1}};
	struct npl_diag d = NPL_DIAG_INIT;
	int rc = npl_pagesh_run(&b, 1, ip, &site, NULL, r, a, &d), i;

	for (i = 0; i < d.n; i++) {
		char *m = npl_diag_format(&d, &d.v[i], 0);

		npl_buf_printf(msgs, "%s%s", i ? "\n" : "", m);
		free(m);
	}
	npl_diag_release(&d);
	return rc;
}

static void test_node_loop(void **state)
{
	static const char text[] =
		"# ==== banner\n"
		"echo performance | tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor\n"
		"sysctl -w vm.swappiness=0\nsysctl -w vm.swappiness=10\n"
		"unset https_proxy\nunset ASCEND_LAUNCH_BLOCKING\nsource /usr/local/Ascend/a/set_env.sh\n"
		"export A=1\nexport ASCEND_LAUNCH_BLOCKING=0\n"
		"P_IP=('<your prefill ip1>' '<your prefill ip2>')\n"
		"export ASCEND_MF_STORE_URL=\"tcp://<your prefill ip1>:24670\"\n"
		"MODEL_PATH=/path/to/model-weights\n"
		"LOCAL_HOST1=`hostname -I|awk -F \" \" '{print$1}'`\n"
		"LOCAL_HOST2=`hostname -I|awk -F \" \" '{print$2}'`\n"
		"for i in \"${!P_IP[@]}\";\ndo\n"
		"    if [[ \"$LOCAL_HOST1\" == \"${P_IP[$i]}\" || \"$LOCAL_HOST2\" == \"${P_IP[$i]}\" ]];\n    then\n"
		"        export GLOO_SOCKET_IFNAME=<network-interface>\n"
		"        python3 -m sglang.launch_server \\\n        --model-path ${MODEL_PATH} --host ${P_IP[$i]} \\\n"
		"        --disaggregation-bootstrap-port $((8998 + $i)) --dist-init-addr ${P_IP[0]}:5000 --node-rank $i\n"
		"        NODE_RANK=$i\n        break\n    fi\ndone\n";
	struct npl_arena a;
	struct npl_buf msgs = NPL_BUF_INIT;
	struct npl_pagesh_result r;
	const struct npl_pagesh_launch *L;
	static const char *const argv[] = {"--model-path", "/path/to/model-weights", "--host", "127.0.10.2",
					   "--disaggregation-bootstrap-port", "8999", "--dist-init-addr",
					   "127.0.10.1:5000", "--node-rank", "1"};
	static const char *const env[] = {"A=1", "ASCEND_LAUNCH_BLOCKING=0", "ASCEND_MF_STORE_URL=tcp://127.0.10.1:24670",
					  "GLOO_SOCKET_IFNAME=enp189s0f0"};
	int i;

	(void)state;
	npl_arena_init(&a);
	assert_int_equal(run(text, "127.0.10.2", &r, &a, &msgs), 0);
	assert_int_equal(r.n, 1);
	L = &r.v[0];
	assert_string_equal(L->module, "sglang.launch_server");
	assert_int_equal(L->loc.line, 20);
	assert_int_equal(L->argc, 10);
	for (i = 0; i < 10; i++)
		assert_string_equal(L->argv[i], argv[i]);
	assert_int_equal(L->nenv, 4);
	for (i = 0; i < 4; i++)
		assert_string_equal(L->env[i], env[i]);
	assert_int_equal(L->nunset, 1);
	assert_string_equal(L->unset[0], "https_proxy");
	assert_int_equal(L->nsourced, 1);
	assert_string_equal(L->sourced[0], "/usr/local/Ascend/a/set_env.sh");
	assert_int_equal(L->ngovernors, 1);
	assert_string_equal(L->governors[0], "performance");
	assert_int_equal(L->nsysctl, 1);
	assert_string_equal(L->sysctl[0], "vm.swappiness=10");
	/* a node the arrays do not list launches nothing; so does no node */
	assert_int_equal(run(text, "127.0.99.9", &r, &a, &msgs), 0);
	assert_int_equal(r.n, 0);
	assert_int_equal(run(text, NULL, &r, &a, &msgs), 0);
	assert_int_equal(r.n, 0);
	npl_buf_release(&msgs);
	npl_arena_release(&a);
}

/* Two prefill instances over two nodes each, as GLM-5.1's 2P1D page writes them: the index of
 * an array and $((...)) are arithmetic with bash's precedence (found on that page, which the
 * reader first refused: "$(( $i / 2 * 2 )) is used but never set"). */
static void test_arithmetic(void **state)
{
	static const char text[] =
		"P_IP=('<your prefill ip1>' '<your prefill ip2>' '<your prefill ip3>' '<your prefill ip4>')\n"
		"LOCAL_HOST1=`hostname -I|awk -F \" \" '{print$1}'`\n"
		"for i in \"${!P_IP[@]}\";\ndo\n"
		"    if [[ \"$LOCAL_HOST1\" == \"${P_IP[$i]}\" ]];\n    then\n"
		"        export A=$((1 + 2 * 3)) B=$(( (1 + 2) * 3 )) C=$((-7 / 2)) D=$((7 % 3 - -1)) E=${P_IP[3 - i]}\n"
		"        python3 -m sglang.launch_server --dist-init-addr ${P_IP[$(( $i / 2 * 2 ))]}:5000 \\\n"
		"        --disaggregation-bootstrap-port $((8998 + $i / 2)) --node-rank $(( $i % 2 ))\n"
		"        break\n    fi\ndone\n";
	static const char *const want[][2] = {
		{"127.0.10.1", "127.0.10.1:5000 8998 0"}, {"127.0.10.2", "127.0.10.1:5000 8998 1"},
		{"127.0.10.3", "127.0.10.3:5000 8999 0"}, {"127.0.10.4", "127.0.10.3:5000 8999 1"}};
	static const char *const env[] = {"A=7", "B=9", "C=-3", "D=2", "E=127.0.10.1"};
	struct npl_arena a;
	struct npl_buf msgs = NPL_BUF_INIT;
	struct npl_pagesh_result r;
	size_t k;
	int i;

	(void)state;
	npl_arena_init(&a);
	for (k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		char got[128];

		assert_int_equal(run(text, want[k][0], &r, &a, &msgs), 0);
		assert_int_equal(r.n, 1);
		assert_int_equal(r.v[0].argc, 6);
		snprintf(got, sizeof(got), "%s %s %s", r.v[0].argv[1], r.v[0].argv[3], r.v[0].argv[5]);
		assert_string_equal(got, want[k][1]);
	}
	assert_int_equal(r.v[0].nenv, 5);
	for (i = 0; i < 5; i++)
		assert_string_equal(r.v[0].env[i], env[i]);
	npl_buf_release(&msgs);
	npl_arena_release(&a);
}

/* The line fails with msg. */
static void expect_error(const char *text, const char *msg)
{
	struct npl_arena a;
	struct npl_buf msgs = NPL_BUF_INIT;
	struct npl_pagesh_result r;
	int rc;

	npl_arena_init(&a);
	rc = run(text, "127.0.10.1", &r, &a, &msgs);
	if (rc != -1 || strcmp(npl_buf_str(&msgs), msg))
		print_error("%s\nwant: %s\ngot:  %s (%d)\n", text, msg, npl_buf_str(&msgs), rc);
	assert_int_equal(rc, -1);
	assert_string_equal(npl_buf_str(&msgs), msg);
	npl_buf_release(&msgs);
	npl_arena_release(&a);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("x=1\ncurl http://example.invalid/x\n",
		     "p.mdx:2:1: error: cannot read this line: 'curl' is not in the shell npulaunch reads from a page");
	expect_error("python3 -m sglang.launch_server --model-path $MODEL_PATH\n",
		     "p.mdx:1:46: error: $MODEL_PATH is used but never set");
	expect_error("export X=<your decode ip5>\n",
		     "p.mdx:1:8: error: placeholder <your decode ip5> has no value: give one more address of its kind");
	expect_error("export X=<your gpu>\n", "p.mdx:1:8: error: placeholder <your gpu> is not one npulaunch knows");
	expect_error("cat <input.txt\n", "p.mdx:1:5: error: cannot read a redirection (or a placeholder npulaunch does not know) here");
	expect_error("  echo 'never closed\n", "p.mdx:1:8: error: cannot read a quote that is never closed here");
	expect_error("X=$(hostname)\n", "p.mdx:1:1: error: cannot read the command substitution '$(hostname)'");
	expect_error("X=`uname -r`\n", "p.mdx:1:1: error: cannot read the command substitution `uname -r`");
	expect_error("X=\"a`b\"\n", "p.mdx:1:1: error: cannot read a backtick that is never closed here");
	expect_error("A=(1 2)\nfor i in \"${!A[@]}\";\ndo\n  echo $i\n", "p.mdx:2:1: error: this 'for' is never closed");
	expect_error("fi\n", "p.mdx:1:1: error: 'fi' where it does not belong");
	expect_error("echo a | grep a\n",
		     "p.mdx:1:8: error: cannot read this pipe (only 'echo GOVERNOR | tee .../scaling_governor')");
	expect_error("A=(x)\nB=${A[3]}\n", "p.mdx:2:1: error: ${A[...]} indexes past the end of the array");
	expect_error("X=a\nY=$((X + 1))\n", "p.mdx:2:1: error: arithmetic on 'a', which is not a number");
	expect_error("X=$((1 / 0))\n", "p.mdx:1:1: error: cannot read the arithmetic '1 / 0': a division by zero");
	expect_error("X=$((2 ** 3))\n", "p.mdx:1:1: error: cannot read the arithmetic '2 ** 3'");
	expect_error("X=$((1 +))\n", "p.mdx:1:1: error: cannot read the arithmetic '1 +'");
	expect_error("X=$((----------------------------------1))\n",
		     "p.mdx:1:1: error: cannot read the arithmetic '----------------------------------1': nested too deep");
	expect_error("X=$((99999999999 * 99999999999))\n",
		     "p.mdx:1:1: error: cannot read the arithmetic '99999999999 * 99999999999': a number too large");
	expect_error("sysctl vm.swappiness=0\n", "p.mdx:1:1: error: cannot read this sysctl (only 'sysctl -w NAME=VALUE')");
	expect_error("python3 sglang/launch.py\n", "p.mdx:1:1: error: a python that does not run a module (python -m MODULE)");
}

/* ---- the upstream sections against what bash launched ---------------------------------- */

static const char *const base_env[] = {"LANG=C.UTF-8", "http_proxy=http://proxy.invalid:1",
				       "HTTPS_PROXY=http://proxy.invalid:1", "https_proxy=http://proxy.invalid:1",
				       "HTTP_PROXY=http://proxy.invalid:1", "ASCEND_LAUNCH_BLOCKING=1",
				       "NPULAUNCH_PREFLIGHT=0", "PATH=", "HOME=", NULL};

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int in_base(const char *name_value, int name_only)
{
	int i;

	for (i = 0; base_env[i]; i++) {
		size_t n = strcspn(base_env[i], "=");

		if (name_only ? strlen(name_value) == n && !strncmp(name_value, base_env[i], n)
			    : !strcmp(name_value, base_env[i]))
			return 1;
	}
	return 0;
}

/* The launch as derive-upstream.py records it: flags grouped by the name argparse resolves
 * (a repeated flag's values joined), env without what equals the simulator's base, unsets
 * among the base's names, sources below /usr/local/Ascend, tuning when asked. */
static cJSON *semantics(const struct npl_pagesh_launch *L, int prog, int tuning, struct npl_arena *a)
{
	cJSON *o = cJSON_CreateObject(), *flags = cJSON_AddArrayToObject(o, "flags"), *cur = NULL, *x;
	cJSON *env = cJSON_AddObjectToObject(o, "env"), *unset = cJSON_AddArrayToObject(o, "unset");
	int i;

	for (i = 0; i < L->argc; i++) {
		const char *w = L->argv[i];

		if (!strncmp(w, "--", 2)) {
			struct npl_flag_match m;
			char *name = npl_arena_strdup(a, w + 2), *eq = strchr(name, '='), *canon;

			if (eq)
				*eq = '\0';
			if (npl_engine_canonical(npl_engine_compiled, prog, name, &m, a) != 0) {
				/* the page's known slip --fuseep_mode (derive-upstream.py's SLIPS) */
				for (char *p = name; *p; p++)
					*p = *p == '_' ? '-' : *p;
				assert_int_equal(npl_engine_canonical(npl_engine_compiled, prog, name, &m, a), 0);
			}
			canon = npl_arena_printf(a, "--%s", m.canonical);
			cur = NULL;
			cJSON_ArrayForEach(x, flags)
				if (!strcmp(cJSON_GetArrayItem(x, 0)->valuestring, canon))
					cur = cJSON_GetArrayItem(x, 1);
			if (!cur) {
				x = cJSON_CreateArray();
				cJSON_AddItemToArray(x, cJSON_CreateString(canon));
				cur = cJSON_CreateArray();
				cJSON_AddItemToArray(x, cur);
				cJSON_AddItemToArray(flags, x);
			}
			if (eq) {
				cJSON_AddItemToArray(cur, cJSON_CreateString(eq + 1));
				cur = NULL;
			}
		} else {
			assert_non_null(cur);
			cJSON_AddItemToArray(cur, cJSON_CreateString(w));
		}
	}
	for (i = 0; i < L->nenv; i++) {
		char *kv = npl_arena_strdup(a, L->env[i]), *eq = strchr(kv, '=');

		if (in_base(kv, 0))
			continue;
		*eq = '\0';
		cJSON_AddStringToObject(env, kv, eq + 1);
	}
	for (i = 0; i < L->nunset; i++)
		if (in_base(L->unset[i], 1))
			cJSON_AddItemToArray(unset, cJSON_CreateString(L->unset[i]));
	if (tuning) {
		cJSON *g = cJSON_AddArrayToObject(o, "governors"), *s = cJSON_AddObjectToObject(o, "sysctl");
		cJSON *src = cJSON_AddArrayToObject(o, "sourced");

		for (i = 0; i < L->ngovernors; i++)
			cJSON_AddItemToArray(g, cJSON_CreateString(L->governors[i]));
		for (i = 0; i < L->nsysctl; i++) {
			char *kv = npl_arena_strdup(a, L->sysctl[i]), *eq = strchr(kv, '=');

			*eq = '\0';
			cJSON_AddStringToObject(s, kv, eq + 1);
		}
		/* the records hold the set of files sourced, sorted; pagesh keeps the order */
		const char **srcs = npl_arena_calloc(a, (size_t)L->nsourced + 1, sizeof(*srcs));

		if (L->nsourced)
			memcpy(srcs, L->sourced, (size_t)L->nsourced * sizeof(*srcs));
		qsort(srcs, (size_t)L->nsourced, sizeof(*srcs), by_name);
		for (i = 0; i < L->nsourced; i++) {
			const char *p = srcs[i];

			if (!strncmp(p, "/usr/local/Ascend/", 18))
				p += 18;
			cJSON_AddItemToArray(src, cJSON_CreateString(p));
		}
	}
	return o;
}

/* One launch of module from blocks on ip, its semantics compared with want. */
static void compare(const char *id, const char *what, const struct npl_page_block *b, int nb, const char *ip,
		    const char *module, int prog, int tuning, const cJSON *want, int *checked)
{
	static const char *const env[] = {"MODEL_PATH=/path/to/model-weights",
					  "DRAFT_MODEL_PATH=/path/to/draft-model-weights", NULL};
	struct npl_arena a;
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_pagesh_result r;
	cJSON *got;
	char *g, *w;
	int rc, i;

	npl_arena_init(&a);
	rc = npl_pagesh_run(b, nb, ip, &site, env, &r, &a, &d);
	if (rc || r.n != 1 || strcmp(r.v[0].module, module))
		print_error("%s: %s on %s: rc %d, %d launches, %d messages%s%s\n", id, what, ip ? ip : "-", rc, r.n,
			    d.n, d.n ? ": " : "", d.n ? d.v[0].msg : "");
	assert_int_equal(rc, 0);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.v[0].module, module);
	/* the page's 'xxx' for the draft model: derive-upstream.py used the draft path (deviation) */
	for (i = 0; i + 1 < r.v[0].argc; i++)
		if (!strcmp(r.v[0].argv[i], "--speculative-draft-model-path") && !strcmp(r.v[0].argv[i + 1], "xxx"))
			r.v[0].argv[i + 1] = "/path/to/draft-model-weights";
	got = semantics(&r.v[0], prog, tuning, &a);
	g = cJSON_PrintUnformatted(got);
	w = cJSON_PrintUnformatted(want);
	if (strcmp(g, w))
		print_error("%s: %s on %s:\n got: %s\nwant: %s\n", id, what, ip ? ip : "-", g, w);
	assert_string_equal(g, w);
	(*checked)++;
	free(g);
	free(w);
	cJSON_Delete(got);
	npl_diag_release(&d);
	npl_arena_release(&a);
}

/* A recorded section: the record (dir/name), the page it names (pages/FORM/FILE, FILE from the
 * record's key), and its section of the record's title. */
struct recorded {
	cJSON *gold;
	char *json, *page;
	struct npl_arena a;
	struct npl_diag d;
	struct npl_page p;
	const struct npl_page_section *s;
};

/* 0 when name is not a record (the folder's other entries) */
static int open_recorded(struct recorded *c, const char *dir, const char *name, const char *form, const char *key)
{
	char path[1024];
	size_t len;
	int k;

	if (!strstr(name, ".json"))
		return 0;
	memset(c, 0, sizeof(*c));
	c->d = (struct npl_diag)NPL_DIAG_INIT;
	npl_arena_init(&c->a);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_non_null(c->json = npl_read_file(path, &len, &c->d));
	assert_non_null(c->gold = cJSON_Parse(c->json));
	snprintf(path, sizeof(path), "%s/pages/%s/%s", NPL_DATA_DIR, form, cJSON_GetObjectItem(c->gold, key)->valuestring);
	assert_non_null(c->page = npl_read_file(path, &len, &c->d));
	assert_int_equal(npl_page_read(&c->p, cJSON_GetObjectItem(c->gold, key)->valuestring, c->page, len, &c->a, &c->d), 0);
	for (k = 0; k < c->p.n; k++)
		if (c->p.v[k].title && !strcmp(c->p.v[k].title, cJSON_GetObjectItem(c->gold, "title")->valuestring))
			c->s = &c->p.v[k];
	assert_non_null(c->s);
	return 1;
}

static void close_recorded(struct recorded *c)
{
	cJSON_Delete(c->gold);
	free(c->json);
	free(c->page);
	npl_diag_release(&c->d);
	npl_arena_release(&c->a);
}

static void test_upstream_goldens(void **state)
{
	char dir[512];
	DIR *dp;
	struct dirent *de;
	int sections = 0, checked = 0;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/tests/golden/upstream", NPL_SOURCE_DIR);
	assert_non_null(dp = opendir(dir));
	while ((de = readdir(dp))) {
		struct recorded c;
		const struct npl_page_section *s;
		cJSON *n;

		if (!open_recorded(&c, dir, de->d_name, "upstream", "page"))
			continue;
		s = c.s;
		cJSON_ArrayForEach(n, cJSON_GetObjectItem(c.gold, "nodes"))
			compare(de->d_name, "server", s->deploy, 1, cJSON_GetObjectItem(n, "ip")->valuestring,
				"sglang.launch_server", NPL_PROG_SERVER, 1, cJSON_GetObjectItem(n, "launch"), &checked);
		if (cJSON_IsObject(cJSON_GetObjectItem(c.gold, "router")))
			compare(de->d_name, "router", s->deploy + 1, s->ndeploy - 1, prefill[0],
				"sglang_router.launch_router", NPL_PROG_ROUTER, 0, cJSON_GetObjectItem(c.gold, "router"),
				&checked);
		compare(de->d_name, "bench", s->bench, s->nbench, NULL, "sglang.bench_serving", NPL_PROG_BENCH, 0,
			cJSON_GetObjectItem(c.gold, "bench"), &checked);
		sections++;
		close_recorded(&c);
	}
	closedir(dp);
	assert_int_equal(sections, 36);
	assert_true(checked > 36 * 2);
}

/* The seed pages as derive-expected.py ran them (tests/golden/expected): the whole deployment
 * stretch on each node (the router's lines run on every node; the first launch of a role
 * counts), "<your prefill ip>" the first node and "<your decode ip>" the second; flags as
 * written, the tuning of the run where the record has it. */
static const char *const seed_ips[] = {"127.0.10.1", "127.0.10.2"};
static const struct npl_pagesh_site seed_site = {"enp189s0f0", seed_ips, seed_ips + 1, seed_ips, 1, 1, 2};

/* The role of a launch as semantic.py names it: MODE#RANK, router, bench. */
static const char *role_of(const struct npl_pagesh_launch *L, struct npl_arena *a)
{
	const char *mode = "pd-mixed", *rank = "0";
	int i;

	if (!strcmp(L->module, "sglang_router.launch_router"))
		return "router";
	if (!strcmp(L->module, "sglang.bench_serving"))
		return "bench";
	for (i = 0; i + 1 < L->argc; i++) {
		if (!strcmp(L->argv[i], "--disaggregation-mode"))
			mode = L->argv[i + 1];
		if (!strcmp(L->argv[i], "--node-rank"))
			rank = L->argv[i + 1];
	}
	return npl_arena_printf(a, "%s#%s", mode, rank);
}

/* A launch in the seed records' shape: flags as written, grouped. */
static cJSON *seed_semantics(const struct npl_pagesh_launch *L, const cJSON *want, struct npl_arena *a)
{
	cJSON *o = semantics(L, -1, 1, a), *flags = cJSON_CreateArray(), *cur = NULL, *x;
	int i;

	for (i = 0; i < L->argc; i++) {
		const char *w = L->argv[i];

		if (!strncmp(w, "--", 2)) {
			cur = NULL;
			cJSON_ArrayForEach(x, flags)
				if (!strcmp(cJSON_GetArrayItem(x, 0)->valuestring, w))
					cur = cJSON_GetArrayItem(x, 1);
			if (!cur) {
				x = cJSON_CreateArray();
				cJSON_AddItemToArray(x, cJSON_CreateString(w));
				cJSON_AddItemToArray(x, cur = cJSON_CreateArray());
				cJSON_AddItemToArray(flags, x);
			}
		} else {
			cJSON_AddItemToArray(cur, cJSON_CreateString(w));
		}
	}
	cJSON_ReplaceItemInObject(o, "flags", flags);
	/* the records keep what matters per role (no tuning for the benchmark, no environment
	   for the router): compare what they keep */
	for (i = 0; i < 5; i++) {
		static const char *const k[] = {"env", "unset", "governors", "sysctl", "sourced"};

		if (!cJSON_GetObjectItem(want, k[i]))
			cJSON_DeleteItemFromObject(o, k[i]);
	}
	return o;
}

/* The members of o by name: the seed records keep bash's order of the environment. */
static void sort_members(cJSON *o)
{
	cJSON *sorted = cJSON_CreateObject(), *it;

	while (o && o->child) {
		cJSON *min = o->child;

		cJSON_ArrayForEach(it, o)
			if (strcmp(it->string, min->string) < 0)
				min = it;
		cJSON_DetachItemViaPointer(o, min);
		cJSON_AddItemToArray(sorted, min);   /* keeps its name */
	}
	while (o && (it = sorted->child)) {
		cJSON_DetachItemViaPointer(sorted, it);
		cJSON_AddItemToArray(o, it);
	}
	cJSON_Delete(sorted);
}

/* The record's fix of the page's benchmark host (golden_fix.py, "bench-host: the page's benchmark
 * gives --host X, ... (Y)"): the page launches X, the record Y. Applied to what the page launched. */
static void bench_fixed(cJSON *bench, const cJSON *devs)
{
	const cJSON *d, *f;
	char from[64], to[64];

	cJSON_ArrayForEach(d, devs) {
		if (!cJSON_IsString(d) ||
		    sscanf(d->valuestring, "bench-host: the page's benchmark gives --host %63[^,], where nothing listens: "
					    "its server binds the first node's address; the benchmark connects there (%63[^)])",
			   from, to) != 2)
			continue;
		cJSON_ArrayForEach(f, cJSON_GetObjectItem(bench, "flags")) {
			cJSON *v = cJSON_GetArrayItem(cJSON_GetArrayItem(f, 1), 0);

			if (!strcmp(cJSON_GetArrayItem(f, 0)->valuestring, "--host") && cJSON_IsString(v) &&
			    !strcmp(v->valuestring, from))
				cJSON_SetValuestring(v, to);
		}
	}
}

static void test_seed_goldens(void **state)
{
	static const char *const env[] = {"MODEL_PATH=/path/to/model-weights",
					  "DRAFT_MODEL_PATH=/path/to/draft-model-weights", NULL};
	char dir[512];
	DIR *dp;
	struct dirent *de;
	int sections = 0, roles = 0;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/tests/golden/expected", NPL_SOURCE_DIR);
	assert_non_null(dp = opendir(dir));
	while ((de = readdir(dp))) {
		struct recorded c;
		const struct npl_page_section *s;
		cJSON *gold, *got, *ip, *want;
		struct npl_pagesh_result r;
		int i;

		if (!open_recorded(&c, dir, de->d_name, "seeds", "seed"))
			continue;
		s = c.s;
		gold = c.gold;
		got = cJSON_CreateObject();
		cJSON_ArrayForEach(ip, cJSON_GetObjectItem(gold, "node_ips")) {
			assert_int_equal(npl_pagesh_run(s->deploy, s->ndeploy, ip->valuestring, &seed_site, env, &r, &c.a, &c.d), 0);
			for (i = 0; i < r.n; i++) {
				const char *role = role_of(&r.v[i], &c.a);

				if (!cJSON_GetObjectItem(got, role))
					cJSON_AddItemToObject(got, role, seed_semantics(&r.v[i], cJSON_GetObjectItem(cJSON_GetObjectItem(gold, "roles"), role), &c.a));
			}
		}
		assert_int_equal(npl_pagesh_run(s->bench, s->nbench, seed_ips[0], &seed_site, env, &r, &c.a, &c.d), 0);
		assert_int_equal(r.n, 1);
		cJSON_AddItemToObject(got, "bench", seed_semantics(&r.v[0], cJSON_GetObjectItem(cJSON_GetObjectItem(gold, "roles"), "bench"), &c.a));
		bench_fixed(cJSON_GetObjectItem(got, "bench"), cJSON_GetObjectItem(gold, "deviations"));
		cJSON_ArrayForEach(want, cJSON_GetObjectItem(gold, "roles")) {
			cJSON *g = cJSON_GetObjectItem(got, want->string);
			char *gs, *ws;

			sort_members(cJSON_GetObjectItem(want, "env"));
			sort_members(cJSON_GetObjectItem(want, "sysctl"));
			gs = g ? cJSON_PrintUnformatted(g) : strdup("(no launch)");
			ws = cJSON_PrintUnformatted(want);

			if (strcmp(gs, ws))
				print_error("%s %s:\n got: %s\nwant: %s\n", de->d_name, want->string, gs, ws);
			assert_string_equal(gs, ws);
			free(gs);
			free(ws);
			roles++;
		}
		assert_int_equal(cJSON_GetArraySize(got), cJSON_GetArraySize(cJSON_GetObjectItem(gold, "roles")));
		sections++;
		cJSON_Delete(got);
		close_recorded(&c);
	}
	closedir(dp);
	assert_int_equal(sections, 22);
	assert_true(roles >= 22 * 2);
}

/* Every section of every page of the test data, in all three forms, reads: its deployment
 * runs without an error on each kind of address, and its benchmark launches bench_serving
 * once per block. */
static void test_every_page_reads(void **state)
{
	static const char *const forms[] = {"seeds", "upstream", "upstream-2026"};
	static const char *const env[] = {"MODEL_PATH=/m", "DRAFT_MODEL_PATH=/d", NULL};
	const char *const ips[] = {prefill[0], prefill[1], decode[0], nodes[0], nodes[1]};
	int f, sections = 0, launches = 0;

	(void)state;
	for (f = 0; f < 3; f++) {
		char dir[512];
		DIR *dp;
		struct dirent *de;

		snprintf(dir, sizeof(dir), "%s/pages/%s", NPL_DATA_DIR, forms[f]);
		assert_non_null(dp = opendir(dir));
		while ((de = readdir(dp))) {
			char path[1024], *text;
			struct npl_diag d = NPL_DIAG_INIT;
			struct npl_arena a;
			struct npl_page p;
			size_t len, i;
			int k, b;

			if ((!strstr(de->d_name, ".mdx") && !strstr(de->d_name, ".txt")) || strstr(de->d_name, "glossary") ||
			    strstr(de->d_name, "knowledge_base"))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			npl_arena_init(&a);
			assert_non_null(text = npl_read_file(path, &len, &d));
			assert_int_equal(npl_page_read(&p, de->d_name, text, len, &a, &d), 0);
			for (k = 0; k < p.n; k++) {
				const struct npl_page_section *s = &p.v[k];
				struct npl_pagesh_result r;

				for (i = 0; i < sizeof(ips) / sizeof(ips[0]); i++) {
					if (npl_pagesh_run(s->deploy, s->ndeploy, ips[i], &site, env, &r, &a, &d))
						print_error("%s: %s: %s\n", de->d_name, s->title ? s->title : "(untitled)", d.v[0].msg);
					assert_int_equal(d.n, 0);
					launches += r.n;
				}
				for (b = 0; b < s->nbench; b++) {
					assert_int_equal(npl_pagesh_run(&s->bench[b], 1, NULL, &site, env, &r, &a, &d), 0);
					assert_int_equal(r.n, 1);
					assert_string_equal(r.v[0].module, "sglang.bench_serving");
				}
				sections++;
			}
			free(text);
			npl_diag_release(&d);
			npl_arena_release(&a);
		}
		closedir(dp);
	}
	assert_int_equal(sections, 22 + 36 + 61);
	assert_true(launches >= sections);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_loop),
		cmocka_unit_test(test_arithmetic),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_upstream_goldens),
		cmocka_unit_test(test_seed_goldens),
		cmocka_unit_test(test_every_page_reads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
