/* cmd_diff.c: `npulaunch diff A B`: what differs between two recipes, per role. */
#include <stdlib.h>
#include <string.h>

#include "npulaunch/cli.h"
#include "npulaunch/plan.h"
#include "npulaunch/text.h"

static void help(void)
{
	puts("usage: npulaunch diff A B [site values] [--json]\n"
	     "\n"
	     "Show what differs between two recipes: their metadata and, per role, the flags,\n"
	     "the environment, the variables unset, the files sourced, the host tuning and the\n"
	     "benchmark. A and B are recipe ids, or queries quoted as one argument\n"
	     "('kimi-k2.6 --tpot 50ms'). Lines start with - (only in A), + (only in B) or ~\n"
	     "(changed). Exit 0 when they deploy the same, 1 when they differ.\n"
	     "\n"
	     "Options:\n"
	     "  --json      {a, b, recipe, roles, differences}: each difference {name, a, b},\n"
	     "              a or b null where that side lacks it (docs/json.md)\n"
	     "  site values --model-path P  --draft-model-path P  --ifname NAME  --node-ip IP...\n"
	     "              --prefill-ip IP...  --decode-ip IP...  --site FILE (see render --help)\n"
	     "  -h, --help  this help\n"
	     "\n"
	     "Examples:\n"
	     "  npulaunch diff kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms kimi-k2.6-w4a8-8p-in3k5-out1k5-50ms\n"
	     "  npulaunch diff 'qwen3.5-397b-a17b --tpot 20ms --dataset 64k+1k' 'qwen3.5-397b-a17b --tpot 50ms --dataset 64k+1k'");
}

/* Split a quoted query into words (single and double quotes, backslash). */
static int split(struct npl_arena *a, const char *s, char ***argv, int *argc)
{
	char **v = npl_arena_calloc(a, strlen(s) / 2 + 3, sizeof(*v));
	struct npl_buf w = NPL_BUF_INIT;
	int n = 0, inword = 0;
	char q = 0;

	v[n++] = "diff";
	for (;; s++) {
		if (!*s || (!q && (*s == ' ' || *s == '\t'))) {
			if (inword)
				v[n++] = npl_arena_strdup(a, npl_buf_str(&w));
			npl_buf_reset(&w);
			inword = 0;
			if (!*s)
				break;
			continue;
		}
		inword = 1;
		if (q) {
			if (*s == q)
				q = 0;
			else
				npl_buf_putc(&w, *s);
		} else if (*s == '\'' || *s == '"') {
			q = *s;
		} else if (*s == '\\' && s[1]) {
			npl_buf_putc(&w, *++s);
		} else {
			npl_buf_putc(&w, *s);
		}
	}
	npl_buf_release(&w);
	if (q)
		return -1;
	*argv = v;
	*argc = n;
	return 0;
}

/* Resolve one side: an id, or "MODEL --opt value ...". */
static cJSON *side(struct npl_cli *cli, const struct npl_db *db, const char *arg,
		   const struct npl_cli_recipe_opts *shared, int *rc)
{
	struct npl_cli_recipe_opts o = *shared;
	const struct npl_layer *R;
	cJSON *sel = NULL;
	char **argv;
	int argc, c;

	o.ov = NULL;
	o.nov = o.capov = 0;
	if (split(&cli->arena, arg, &argv, &argc) || argc < 2) {
		*rc = npl_cli_usage_error("diff", "cannot read the query '%s'", arg);
		return NULL;
	}
	optind = 0;
	while ((c = getopt_long(argc, argv, ":", npl_cli_recipe_options, NULL)) != -1) {
		if (c == '?' || c == ':' || c < NPL_OPT_TPOT || c > NPL_OPT_NEAREST) {
			*rc = npl_cli_usage_error("diff", "'%s' in '%s' is not a query option", argv[optind - 1], arg);
			return NULL;
		}
		if (npl_cli_recipe_opt(cli, &o, c, optarg) <= 0) {
			*rc = NPL_EXIT_USAGE;
			return NULL;
		}
	}
	if (optind + 1 != argc) {
		*rc = npl_cli_usage_error("diff", "'%s' names more than one recipe or model", arg);
		return NULL;
	}
	R = npl_cli_pick(cli, db, argv[optind], &o, &sel, rc);
	if (!R)
		return NULL;
	return npl_cli_resolve(cli, db, R, &o, sel, rc);
}

struct diff {
	cJSON *json;        /* list of {key/name, a, b} */
	struct npl_buf *text;
	int n;
};

static char *join(const cJSON *v)
{
	struct npl_buf b = NPL_BUF_INIT;
	const cJSON *it;

	if (cJSON_IsString(v))
		npl_pval_display(&b, v->valuestring, NULL);
	else if (cJSON_IsNumber(v))
		npl_buf_printf(&b, "%g", v->valuedouble);
	else if (cJSON_IsBool(v))
		npl_buf_puts(&b, cJSON_IsTrue(v) ? "true" : "false");
	if (cJSON_IsArray(v))
		cJSON_ArrayForEach(it, v) {
			if (b.len)
				npl_buf_putc(&b, ' ');
			npl_pval_display(&b, it->valuestring, NULL);
		}
	return npl_buf_detach(&b);
}

/* Record one difference; a and b are NULL where absent. */
static void differ(struct diff *d, const char *what, const char *name, const cJSON *a, const cJSON *b)
{
	cJSON *o;
	char *sa, *sb;

	if ((!a && !b) || (a && b && cJSON_Compare(a, b, 1)))
		return;
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", name);
	cJSON_AddItemToObject(o, "a", a ? cJSON_Duplicate(a, 1) : cJSON_CreateNull());
	cJSON_AddItemToObject(o, "b", b ? cJSON_Duplicate(b, 1) : cJSON_CreateNull());
	cJSON_AddItemToArray(d->json, o);
	sa = a ? join(a) : NULL;
	sb = b ? join(b) : NULL;
	if (!a)
		npl_buf_printf(d->text, "  + %s%s%s%s\n", what, name, *sb ? " " : "", sb);
	else if (!b)
		npl_buf_printf(d->text, "  - %s%s%s%s\n", what, name, *sa ? " " : "", sa);
	else
		npl_buf_printf(d->text, "  ~ %s%s: %s -> %s\n", what, name, *sa ? sa : "(on)", *sb ? sb : "(on)");
	free(sa);
	free(sb);
	d->n++;
}

/* Compare two arrays of objects keyed by key, the value under val. */
static void compare(struct diff *d, const char *what, const cJSON *a, const cJSON *b, const char *key,
		    const char *val)
{
	const cJSON *x, *y;

	cJSON_ArrayForEach(x, a) {
		const char *k = npl_json_str(x, key);
		const cJSON *match = NULL;

		cJSON_ArrayForEach(y, b)
			if (!strcmp(npl_json_str(y, key), k))
				match = y;
		differ(d, what, k, val ? cJSON_GetObjectItemCaseSensitive(x, val) : x,
		       match ? (val ? cJSON_GetObjectItemCaseSensitive(match, val) : match) : NULL);
	}
	cJSON_ArrayForEach(y, b) {
		const char *k = npl_json_str(y, key);
		int seen = 0;

		cJSON_ArrayForEach(x, a)
			seen |= !strcmp(npl_json_str(x, key), k);
		if (!seen)
			differ(d, what, k, NULL, val ? cJSON_GetObjectItemCaseSensitive(y, val) : y);
	}
}

/* The names of a list of {key: name}, as objects {key: name, "v": true}, to compare sets: in
 * diff --json a member is true on the side that has it, null on the other. */
static cJSON *as_set(const cJSON *v, const char *key)
{
	cJSON *o = cJSON_CreateArray();
	const cJSON *it;

	cJSON_ArrayForEach(it, v) {
		cJSON *e = cJSON_CreateObject();

		cJSON_AddStringToObject(e, key, npl_json_str(it, key));
		cJSON_AddTrueToObject(e, "v");
		cJSON_AddItemToArray(o, e);
	}
	return o;
}

/* Prepend/append and a placement before the env files are part of what an
 * env entry deploys: fold them into the value that is compared and shown. */
static void env_ops(cJSON *env)
{
	cJSON *it;

	cJSON_ArrayForEach(it, env) {
		const char *op = npl_json_str(it, "op"), *sep = npl_json_str(it, "sep");
		const char *when = npl_json_str(it, "when"), *name = npl_json_str(it, "name");
		struct npl_buf b = NPL_BUF_INIT;
		char ref[300];

		if (!op && !when)
			continue;
		snprintf(ref, sizeof(ref), "$%s", name ? name : "");
		if (op && !strcmp(op, "append")) {
			npl_pval_lit(&b, ref);
			npl_pval_lit(&b, sep ? sep : ":");
		}
		npl_buf_puts(&b, npl_json_str(it, "value") ? npl_json_str(it, "value") : "");
		if (op && !strcmp(op, "prepend")) {
			npl_pval_lit(&b, sep ? sep : ":");
			npl_pval_lit(&b, ref);
		}
		if (when)
			npl_pval_lit(&b, " (before the env files)");
		cJSON_ReplaceItemInObjectCaseSensitive(it, "value", cJSON_CreateString(npl_buf_str(&b)));
		npl_buf_release(&b);
	}
}

/* The flags (arr "flags", key "flag") or the environment ("env", "name") of a role's first n
 * nodes in one array, each named by its node (a benchmark by its name) when there are several. */
static cJSON *node_items(const cJSON *role, const char *arr, const char *key, int n)
{
	cJSON *dst = cJSON_CreateArray();
	const cJSON *it;
	int i;

	for (i = 0; i < n; i++) {
		const cJSON *node = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(role, "nodes"), i);

		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(node, arr)) {
			cJSON *c = cJSON_Duplicate(it, 1);

			if (n > 1) {
				char k[300];

				if (npl_json_str(node, "name")) /* one of several benchmarks */
					snprintf(k, sizeof(k), "%s (%s)", npl_json_str(it, key), npl_json_str(node, "name"));
				else
					snprintf(k, sizeof(k), "%s (node %d)", npl_json_str(it, key), i);
				cJSON_ReplaceItemInObjectCaseSensitive(c, key, cJSON_CreateString(k));
			}
			cJSON_AddItemToArray(dst, c);
		}
	}
	return dst;
}

static cJSON *role_diff(const cJSON *ra, const cJSON *rb, const char *name, struct npl_buf *text, int *count)
{
	cJSON *o = cJSON_CreateObject();
	struct npl_buf t = NPL_BUF_INIT;
	struct diff d;
	int na, nb, n;

	cJSON_AddStringToObject(o, "role", name);
	if (!ra || !rb) {
		cJSON_AddStringToObject(o, "only_in", ra ? "a" : "b");
		npl_buf_printf(text, "%s: only in %s\n", name, ra ? "A" : "B");
		(*count)++;
		return o;
	}
	na = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(ra, "nodes"));
	nb = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(rb, "nodes"));
	d.text = &t;
	d.n = 0;
#define PART(key, what, a, b, k, v)                                                                \
	do {                                                                                       \
		d.json = cJSON_CreateArray();                                                      \
		compare(&d, what, a, b, k, v);                                                     \
		cJSON_AddItemToObject(o, key, d.json);                                             \
	} while (0)
	{
		cJSON *na_ = cJSON_CreateNumber(na), *nb_ = cJSON_CreateNumber(nb);

		d.json = cJSON_CreateArray();
		differ(&d, "", "nodes", na_, nb_);
		cJSON_AddItemToObject(o, "nodes", d.json);
		cJSON_Delete(na_);
		cJSON_Delete(nb_);
	}
	n = na < nb ? na : nb;
	{
		cJSON *fa = node_items(ra, "flags", "flag", n), *fb = node_items(rb, "flags", "flag", n);
		cJSON *ea = node_items(ra, "env", "name", n), *eb = node_items(rb, "env", "name", n);

		PART("flags", "", fa, fb, "flag", "values");
		env_ops(ea);
		env_ops(eb);
		PART("env", "env ", ea, eb, "name", "value");
		cJSON_Delete(fa);
		cJSON_Delete(fb);
		cJSON_Delete(ea);
		cJSON_Delete(eb);
	}
	{
		cJSON *ua = as_set(cJSON_GetObjectItemCaseSensitive(ra, "unset"), "name");
		cJSON *ub = as_set(cJSON_GetObjectItemCaseSensitive(rb, "unset"), "name");
		cJSON *sa = as_set(cJSON_GetObjectItemCaseSensitive(ra, "source"), "path");
		cJSON *sb = as_set(cJSON_GetObjectItemCaseSensitive(rb, "source"), "path");

		PART("unset", "unset ", ua, ub, "name", "v");
		PART("source", "source ", sa, sb, "path", "v");
		cJSON_Delete(ua);
		cJSON_Delete(ub);
		cJSON_Delete(sa);
		cJSON_Delete(sb);
	}
	{
		const cJSON *ta = cJSON_GetObjectItemCaseSensitive(ra, "tuning");
		const cJSON *tb = cJSON_GetObjectItemCaseSensitive(rb, "tuning");
		const cJSON *ga = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ta, "cpu_governor"), "value");
		const cJSON *gb = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(tb, "cpu_governor"), "value");

		d.json = cJSON_CreateArray();
		if (ga || gb)
			differ(&d, "tuning ", "cpu_governor", ga, gb);
		compare(&d, "tuning ", cJSON_GetObjectItemCaseSensitive(ta, "sysctl"),
			cJSON_GetObjectItemCaseSensitive(tb, "sysctl"), "name", "value");
		/* the binding's policy, each key's value (issue 26) */
		for (int i = 0; i < 3; i++) {
			static const char *const keys[] = {"policy", "min_cpus_per_die", "irqs"};
			const cJSON *aa = cJSON_GetObjectItemCaseSensitive(ta, "affinity");
			const cJSON *ab = cJSON_GetObjectItemCaseSensitive(tb, "affinity");
			char key[64];

			snprintf(key, sizeof(key), "affinity.%s", keys[i]);
			differ(&d, "tuning ", key,
			       cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(aa, keys[i]), "value"),
			       cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ab, keys[i]), "value"));
		}
		cJSON_AddItemToObject(o, "tuning", d.json);
	}
#undef PART
	if (d.n) {
		npl_buf_printf(text, "%s:\n%s", name, npl_buf_str(&t));
		*count += d.n;
	}
	npl_buf_release(&t);
	return o;
}

static int run_diff(cJSON *a, cJSON *b, int json)
{
	static const char *const meta[] = {"model", "hardware", "cards", "mode", "dataset", "tpot",
					   "ttft", "e2e", "throughput", "quantization", NULL};
	const cJSON *ra = cJSON_GetObjectItemCaseSensitive(a, "recipe");
	const cJSON *rb = cJSON_GetObjectItemCaseSensitive(b, "recipe"), *r;
	struct npl_buf text = NPL_BUF_INIT, t = NPL_BUF_INIT;
	cJSON *out = cJSON_CreateObject(), *roles = cJSON_CreateArray();
	struct diff d = {cJSON_CreateArray(), &t, 0};
	int count = 0, i;

	cJSON_AddStringToObject(out, "a", npl_json_str(ra, "id"));
	cJSON_AddStringToObject(out, "b", npl_json_str(rb, "id"));
	npl_buf_printf(&text, "--- %s\n+++ %s\n", npl_json_str(ra, "id"), npl_json_str(rb, "id"));
	for (i = 0; meta[i]; i++) {
		const cJSON *x = cJSON_GetObjectItemCaseSensitive(ra, meta[i]);
		const cJSON *y = cJSON_GetObjectItemCaseSensitive(rb, meta[i]);

		differ(&d, "", meta[i], cJSON_IsNull(x) ? NULL : x, cJSON_IsNull(y) ? NULL : y);
	}
	cJSON_AddItemToObject(out, "recipe", d.json);
	if (d.n)
		npl_buf_printf(&text, "recipe:\n%s", npl_buf_str(&t));
	count += d.n;
	/* roles of A in order, then those only in B */
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(a, "roles")) {
		const char *name = npl_json_str(r, "role");

		cJSON_AddItemToArray(roles, role_diff(r, npl_plan_role(b, name), name, &text, &count));
	}
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(b, "roles")) {
		const char *name = npl_json_str(r, "role");

		if (!npl_plan_role(a, name))
			cJSON_AddItemToArray(roles, role_diff(NULL, r, name, &text, &count));
	}
	cJSON_AddItemToObject(out, "roles", roles);
	cJSON_AddNumberToObject(out, "differences", count);
	if (json) {
		char *s = cJSON_Print(out);

		npl_cli_puts_json(s);
		cJSON_free(s);
	} else {
		npl_print_text(stdout, npl_buf_str(&text));   /* a plan holds text from recipes and site files */
		if (!count)
			puts("(they deploy the same)");
	}
	cJSON_Delete(out);
	npl_buf_release(&text);
	npl_buf_release(&t);
	return count ? NPL_EXIT_FAIL : NPL_EXIT_OK;
}

int npl_cmd_diff(int argc, char **argv, struct npl_cli *cli)
{
	static const struct option own[] = {
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct option *opts = npl_cli_options(own);
	struct npl_cli_recipe_opts ro;
	struct npl_db db;
	cJSON *a = NULL, *b = NULL;
	int json = 0, c, rc = NPL_EXIT_OK;
	char *first, *second;

	memset(&ro, 0, sizeof(ro));
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'h': help(); goto out;
		case ':': rc = npl_cli_usage_error("diff", "option '%s' needs a value", argv[optind - 1]); goto out;
		case '?': rc = npl_cli_usage_error("diff", "unknown option '%s'", argv[optind - 1]); goto out;
		default:
			if (c < NPL_OPT_MODEL_PATH || c > NPL_OPT_SITE) {
				rc = npl_cli_usage_error("diff", "'%s': put query options inside the quoted query", argv[optind - 1]);
				goto out;
			}
			if (npl_cli_recipe_opt(cli, &ro, c, optarg) <= 0) {
				rc = NPL_EXIT_USAGE;
				goto out;
			}
		}
	}
	if (argc - optind != 2) {
		rc = npl_cli_usage_error("diff", "give two recipes (ids, or quoted queries)");
		goto out;
	}
	first = argv[optind];
	second = argv[optind + 1];
	if ((rc = npl_cli_site(cli, &ro)) || (rc = npl_cli_open_db(cli, &db)))
		goto out;
	if (!(a = side(cli, &db, first, &ro, &rc)) || !(b = side(cli, &db, second, &ro, &rc)))
		goto out;
	rc = run_diff(a, b, json);
out:
	cJSON_Delete(a);
	cJSON_Delete(b);
	free(opts);
	npl_cli_recipe_opts_release(&ro);
	return rc;
}
