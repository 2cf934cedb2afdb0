/* cli.c: what the commands share; see cli.h. */
#define _DEFAULT_SOURCE /* realpath */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "npulaunch/arena.h"
#include "npulaunch/check.h"
#include "npulaunch/cli.h"
#include "npulaunch/fsio.h"
#include "npulaunch/resolve.h"
#include "npulaunch/text.h"

/* The command being run (main sets it), for messages that shared code prints. */
static const char *current_cmd;

void npl_cli_set_command(const char *cmd)
{
	current_cmd = cmd;
}

const char *npl_cli_profiles_text(struct npl_cli *cli, const struct npl_db *db)
{
	struct npl_buf b = NPL_BUF_INIT;
	const char *s;
	int i;

	for (i = 0; i < db->nhardware; i++)
		npl_buf_printf(&b, "%s%s", i ? ", " : "", db->hardware[i]->id);
	s = npl_arena_strdup(&cli->arena, db->nhardware ? npl_buf_str(&b) : "none");
	npl_buf_release(&b);
	return s;
}

static int json_refused;

int npl_cli_json_text(const char *cmd, const char *what, const char *value)
{
	size_t n = strlen(value), bad = npl_utf8_invalid(value, n);

	if (bad == n)
		return 0;
	return npl_cli_usage_error(cmd, "%s '%s' is not UTF-8 text: the byte 0x%02x at byte %zu does not start a character (--json carries UTF-8 only)",
				   what, value, (unsigned char)value[bad], bad + 1);
}

void npl_cli_puts_json(const char *text)
{
	size_t n = strlen(text), bad = npl_utf8_invalid(text, n);

	if (bad == n) {
		puts(text);
		return;
	}
	/* text from somewhere that no check caught: no document at all, rather than one no JSON
	   reader takes */
	fprintf(stderr, "npulaunch: %s: --json: the document would hold text that is not UTF-8 (the byte 0x%02x at byte %zu): nothing printed\n",
		current_cmd ? current_cmd : "npulaunch", (unsigned char)text[bad], bad + 1);
	json_refused = 1;
}

int npl_cli_json_refused(void)
{
	return json_refused;
}

int npl_cli_output_dir(const char *cmd, const char *dir)
{
	char *real;
	int root;

	if (!*dir)
		return npl_cli_usage_error(cmd, "-o needs a folder, not an empty name");
	root = dir[strspn(dir, "/")] == '\0';
	if (!root && (real = realpath(dir, NULL))) {
		root = !strcmp(real, "/");
		free(real);
	}
	if (root)
		return npl_cli_usage_error(cmd, "-o '%s' names the root folder: give a folder of its own "
					   "(an unset variable in -o \"$OUT/\"?)", dir);
	return 0;
}

int npl_cli_root(const char *cmd, const char **root, int from_env)
{
	/* absolute or unset, as in the scripts (_tune.sh.tmpl): NPULAUNCH_ROOT= (empty) is / */
	if (*root && from_env && !**root)
		*root = NULL;
	if (*root && **root != '/')
		return npl_cli_usage_error(cmd, "%s must be an absolute path, not '%s'",
					   from_env ? "NPULAUNCH_ROOT" : "--root", *root);
	return 0;
}

/* The message of fmt and ap written for a terminal: what the user typed (an argument, a name)
 * reaches it with its controls escaped, as every other outside text does. */
static void print_escaped(const char *fmt, va_list ap)
{
	struct npl_buf b = NPL_BUF_INIT;

	npl_buf_vprintf(&b, fmt, ap);
	npl_print_text(stderr, npl_buf_str(&b));
	npl_buf_release(&b);
}

int npl_cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	if (!cmd)
		cmd = current_cmd;
	fputs("npulaunch: ", stderr);
	if (cmd)
		fprintf(stderr, "%s: ", cmd);
	va_start(ap, fmt);
	print_escaped(fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'npulaunch %s%s--help' for more information.\n", cmd ? cmd : "",
		cmd ? " " : "");
	return NPL_EXIT_USAGE;
}

void npl_cli_info(struct npl_cli *cli, const char *fmt, ...)
{
	va_list ap;

	if (cli->diag.quiet)
		return;
	fputs("npulaunch: ", stderr);
	va_start(ap, fmt);
	print_escaped(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void npl_cli_flush(struct npl_cli *cli)
{
	npl_diag_flush(&cli->diag, stderr);
}

int npl_cli_open_db(struct npl_cli *cli, struct npl_db *db)
{
	return npl_cli_open_db_for(cli, db, NULL);
}

int npl_cli_open_db_for(struct npl_cli *cli, struct npl_db *db, const char *want)
{
	int i, rc;

	/* a folder that is not there is a usage problem, not an invalid recipe */
	for (i = 0; i < cli->nrecipe_dirs; i++)
		if (!npl_is_dir(cli->recipe_dirs[i])) {
			fprintf(stderr, "npulaunch: recipe folder '%s' does not exist or is not a folder\n",
				cli->recipe_dirs[i]);
			return NPL_EXIT_USAGE;
		}
	rc = npl_db_open_for(db, &cli->arena, cli->recipe_dirs, cli->nrecipe_dirs, want, &cli->diag);
	npl_cli_flush(cli);
	return rc ? NPL_EXIT_INVALID : 0;
}

const struct option npl_cli_recipe_options[] = {
	{"model-path", required_argument, NULL, NPL_OPT_MODEL_PATH},
	{"draft-model-path", required_argument, NULL, NPL_OPT_DRAFT_MODEL_PATH},
	{"ifname", required_argument, NULL, NPL_OPT_IFNAME},
	{"node-ip", required_argument, NULL, NPL_OPT_NODE_IP},
	{"prefill-ip", required_argument, NULL, NPL_OPT_PREFILL_IP},
	{"decode-ip", required_argument, NULL, NPL_OPT_DECODE_IP},
	{"entry-ip", required_argument, NULL, NPL_OPT_ENTRY_IP},
	{"site", required_argument, NULL, NPL_OPT_SITE},
	{"tpot", required_argument, NULL, NPL_OPT_TPOT},
	{"ttft", required_argument, NULL, NPL_OPT_TTFT},
	{"e2e", required_argument, NULL, NPL_OPT_E2E},
	{"dataset", required_argument, NULL, NPL_OPT_DATASET},
	{"prefix-cache", required_argument, NULL, NPL_OPT_PREFIX_CACHE},
	{"cards", required_argument, NULL, NPL_OPT_CARDS},
	{"mode", required_argument, NULL, NPL_OPT_MODE},
	{"hardware", required_argument, NULL, NPL_OPT_HARDWARE},
	{"nearest", no_argument, NULL, NPL_OPT_NEAREST},
	{"set", required_argument, NULL, NPL_OPT_SET},
	{"unset", required_argument, NULL, NPL_OPT_UNSET},
	{"env", required_argument, NULL, NPL_OPT_ENV},
	{"unset-env", required_argument, NULL, NPL_OPT_UNSET_ENV},
	{"force", no_argument, NULL, NPL_OPT_FORCE},
	{"allow-unknown-flag", no_argument, NULL, NPL_OPT_ALLOW_UNKNOWN},
	{"strict", no_argument, NULL, NPL_OPT_STRICT},
	{NULL, 0, NULL, 0},
};

struct option *npl_cli_options(const struct option *own)
{
	size_t n = 0, m = NPL_ARRAY_SIZE(npl_cli_recipe_options) - 1, j = 0;
	struct option *v;
	int k;

	while (own[n].name)
		n++;
	v = npl_xcalloc(n + m + NPL_SITE_COUNT + 1, sizeof(*v));
	memcpy(v, own, n * sizeof(*v));
	memcpy(v + n, npl_cli_recipe_options, m * sizeof(*v));
	/* the cluster values are flags named as their site keys: --image IMG, --gang[=false] */
	for (k = 0; k < NPL_SITE_COUNT; k++)
		if (npl_site_is_cluster(k))
			v[n + m + j++] = (struct option){npl_site_key_name(k),
							 npl_site_is_bool(k) ? optional_argument : required_argument,
							 NULL, NPL_OPT_SITE_KEY + k};
	return v;
}

static int flag_name_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
			return 0;
	return 1;
}

static int env_name_ok(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '_'))
			return 0;
	return 1;
}

static const char *const role_prefixes[] = {"pd-mixed", "prefill", "decode", "router", "bench"};

/* One more value of a repeated --set, and its text after the others': both grown by doubling,
 * so that n repeats take time linear in n. */
static void add_value(struct npl_arena *a, struct npl_override *p, struct npl_cli_ov_room *room, const char *value,
		      const char *text)
{
	size_t tl = room->textcap ? room->textlen : strlen(p->text), add = strlen(text);
	char *t;

	if (p->nvalues >= room->capvalues) {
		int cap = room->capvalues ? room->capvalues * 2 : 4;
		const char **v = npl_arena_calloc(a, (size_t)cap + 1, sizeof(*v));

		memcpy(v, p->values, (size_t)p->nvalues * sizeof(*v));
		p->values = v;
		room->capvalues = cap;
	}
	p->values[p->nvalues++] = value;
	if (tl + add + 2 > room->textcap) {
		room->textcap = (tl + add + 2) * 2;
		t = npl_arena_alloc(a, room->textcap);
		memcpy(t, p->text, tl + 1);
		p->text = t;
	}
	t = (char *)p->text;
	t[tl] = ' ';
	memcpy(t + tl + 1, text, add + 1);
	room->textlen = tl + 1 + add;
}

/* --set [ROLE:]FLAG[=VALUE], --unset [ROLE:]FLAG, --env [ROLE:]KEY=VALUE, --unset-env [ROLE:]KEY */
static int parse_override(struct npl_cli *cli, struct npl_cli_recipe_opts *o, int opt, const char *arg)
{
	static const char *const names[] = {"--set", "--unset", "--env", "--unset-env"};
	enum npl_override_kind kind = opt == NPL_OPT_SET ? NPL_OV_SET_FLAG
				    : opt == NPL_OPT_UNSET ? NPL_OV_UNSET_FLAG
				    : opt == NPL_OPT_ENV ? NPL_OV_SET_ENV : NPL_OV_UNSET_ENV;
	struct npl_override ov = {kind, NULL, NULL, NULL, 0, NULL};
	char *s = npl_arena_strdup(&cli->arena, arg), *colon, *eq;
	size_t i;

	ov.text = npl_arena_printf(&cli->arena, "%s %s", names[kind], arg);
	/* the value goes into the plan: manifest.json, show --json, the YAML of k8s and rbg */
	if ((i = npl_utf8_invalid(arg, strlen(arg))) < strlen(arg)) {
		npl_cli_usage_error(NULL, "%s is not UTF-8 text: the byte 0x%02x at byte %zu does not start a character (JSON and YAML carry UTF-8 only)",
				    npl_escape_in(&cli->arena, ov.text), (unsigned char)arg[i], i + 1);
		return -1;
	}
	colon = strchr(s, ':');
	eq = strchr(s, '=');
	if (colon && (!eq || colon < eq)) {
		*colon = '\0';
		for (i = 0; i < NPL_ARRAY_SIZE(role_prefixes); i++)
			if (!strcmp(role_prefixes[i], s))
				break;
		if (i == NPL_ARRAY_SIZE(role_prefixes)) {
			npl_cli_usage_error(NULL, "%s: unknown role '%s' (pd-mixed, prefill, decode, router, bench)",
					    ov.text, s);
			return -1;
		}
		ov.role = role_prefixes[i];
		s = colon + 1;
	}
	if (eq)
		*eq = '\0';
	ov.name = s;
	if (kind == NPL_OV_SET_FLAG || kind == NPL_OV_UNSET_FLAG) {
		if (npl_starts_with(ov.name, "--"))
			ov.name += 2;
		if (!flag_name_ok(ov.name)) {
			npl_cli_usage_error(NULL, "%s: '%s' is not a flag name", ov.text, ov.name);
			return -1;
		}
		if (kind == NPL_OV_UNSET_FLAG && eq) {
			npl_cli_usage_error(NULL, "%s: --unset takes a flag name, no value", ov.text);
			return -1;
		}
		if (kind == NPL_OV_SET_FLAG && eq) {
			ov.values = npl_arena_alloc(&cli->arena, sizeof(*ov.values));
			ov.values[0] = eq + 1;
			ov.nvalues = 1;
		}
	} else {
		if (!env_name_ok(ov.name)) {
			npl_cli_usage_error(NULL, "%s: '%s' is not an environment variable name", ov.text,
					    ov.name);
			return -1;
		}
		if (kind == NPL_OV_SET_ENV) {
			if (!eq) {
				npl_cli_usage_error(NULL, "%s: --env takes KEY=VALUE", ov.text);
				return -1;
			}
			ov.values = npl_arena_alloc(&cli->arena, sizeof(*ov.values));
			ov.values[0] = eq + 1;
			ov.nvalues = 1;
		} else if (eq) {
			npl_cli_usage_error(NULL, "%s: --unset-env takes a variable name, no value", ov.text);
			return -1;
		}
	}
	/* a repeated --set of the same flag adds a value: --set cuda-graph-bs-decode=1 --set cuda-graph-bs-decode=2 */
	if (kind == NPL_OV_SET_FLAG && ov.nvalues) {
		const char *key = npl_arena_printf(&cli->arena, "%s:%s", ov.role ? ov.role : "", ov.name);
		int j = npl_strmap_add(&o->setix, &cli->arena, key, strlen(key), o->nov);

		if (j >= 0) {
			add_value(&cli->arena, &o->ov[j], &o->ovroom[j], ov.values[0], ov.text);
			return 1;
		}
	}
	if (o->nov == o->capov) {
		o->capov = o->capov ? o->capov * 2 : 8;
		o->ov = npl_xrealloc(o->ov, (size_t)o->capov * sizeof(*o->ov));
		o->ovroom = npl_xrealloc(o->ovroom, (size_t)o->capov * sizeof(*o->ovroom));
	}
	memset(&o->ovroom[o->nov], 0, sizeof(*o->ovroom));
	o->ov[o->nov++] = ov;
	return 1;
}

int npl_cli_recipe_opt(struct npl_cli *cli, struct npl_cli_recipe_opts *o, int opt, const char *arg)
{
	int key = -1;

	switch (opt) {
	case NPL_OPT_MODEL_PATH: key = NPL_SITE_MODEL_PATH; break;
	case NPL_OPT_DRAFT_MODEL_PATH: key = NPL_SITE_DRAFT_MODEL_PATH; break;
	case NPL_OPT_IFNAME: key = NPL_SITE_IFNAME; break;
	case NPL_OPT_NODE_IP: key = NPL_SITE_NODE_IP; break;
	case NPL_OPT_PREFILL_IP: key = NPL_SITE_PREFILL_IP; break;
	case NPL_OPT_DECODE_IP: key = NPL_SITE_DECODE_IP; break;
	case NPL_OPT_ENTRY_IP: key = NPL_SITE_ENTRY_IP; break;
	case NPL_OPT_SITE:
		if (o->nsite_files == (int)NPL_ARRAY_SIZE(o->site_files)) {
			npl_cli_usage_error(NULL, "--site: at most %d files", (int)NPL_ARRAY_SIZE(o->site_files));
			return -1;
		}
		o->site_files[o->nsite_files++] = arg;
		return 1;
	case NPL_OPT_TPOT: o->tpot = arg; return 1;
	case NPL_OPT_TTFT: o->ttft = arg; return 1;
	case NPL_OPT_E2E: o->e2e = arg; return 1;
	case NPL_OPT_DATASET: o->dataset = arg; return 1;
	case NPL_OPT_PREFIX_CACHE: o->prefix_cache = arg; return 1;
	case NPL_OPT_CARDS: o->cards = arg; return 1;
	case NPL_OPT_MODE: o->mode = arg; return 1;
	case NPL_OPT_HARDWARE: o->hardware = arg; return 1;
	case NPL_OPT_NEAREST: o->nearest = 1; return 1;
	case NPL_OPT_FORCE: o->force = 1; return 1;
	case NPL_OPT_ALLOW_UNKNOWN: o->allow_unknown = 1; return 1;
	case NPL_OPT_STRICT: o->strict = 1; return 1;
	case NPL_OPT_SET:
	case NPL_OPT_UNSET:
	case NPL_OPT_ENV:
	case NPL_OPT_UNSET_ENV:
		return parse_override(cli, o, opt, arg);
	default:
		if (opt < NPL_OPT_SITE_KEY || opt >= NPL_OPT_SITE_KEY + NPL_SITE_COUNT)
			return 0;
		key = opt - NPL_OPT_SITE_KEY;
		if (!arg)
			arg = "true";   /* --gang: a boolean flag without a value */
		break;
	}
	if (npl_site_set(&o->site, &cli->arena, key, arg, NULL, &cli->diag)) {
		npl_cli_flush(cli);
		return -1;
	}
	return 1;
}

int npl_cli_has_query(const struct npl_cli_recipe_opts *o)
{
	return o->tpot || o->ttft || o->e2e || o->dataset || o->prefix_cache || o->cards || o->mode ||
	       o->hardware || o->nearest;
}

int npl_cli_site(struct npl_cli *cli, struct npl_cli_recipe_opts *o)
{
	struct npl_site files[NPL_ARRAY_SIZE(o->site_files)];
	int i, j, k, rc = 0;

	/* each file whole; then merged in order: a key in two files is refused, flags win over both */
	memset(files, 0, sizeof(files));
	for (i = 0; i < o->nsite_files; i++)
		if (npl_site_load_file(&files[i], &cli->arena, o->site_files[i], &cli->diag))
			rc = NPL_EXIT_USAGE;
	for (i = 0; !rc && i < o->nsite_files; i++)
		for (j = 0; j < i; j++)
			for (k = 0; k < NPL_SITE_COUNT; k++)
				if (files[i].key[k].n && files[j].key[k].n && !o->site.key[k].n) {
					npl_error(&cli->diag, NULL, "'%s' is in both %s and %s: give it in one site file (or as --%s, which wins)",
						  npl_site_key_name(k), npl_escape_in(&cli->arena, o->site_files[j]),
						  npl_escape_in(&cli->arena, o->site_files[i]), npl_site_key_name(k));
					rc = NPL_EXIT_USAGE;
				}
	for (i = 0; !rc && i < o->nsite_files; i++)
		npl_site_fill(&o->site, &files[i]);
	npl_cli_flush(cli);
	return rc;
}

/* "kimi-k2.6 --tpot 20ms --dataset 64k+1k", for messages and the plan. */
static const char *query_text(struct npl_cli *cli, const char *model, const struct npl_cli_recipe_opts *o)
{
	struct npl_buf b = NPL_BUF_INIT;
	const char *s;

	npl_buf_puts(&b, model ? model : "(any model)");
#define OPT(field, name)                                                                           \
	if (o->field) {                                                                            \
		npl_buf_puts(&b, " --" name " ");                                                  \
		npl_shell_quote(&b, o->field);                                                     \
	}
	OPT(tpot, "tpot");
	OPT(ttft, "ttft");
	OPT(e2e, "e2e");
	OPT(dataset, "dataset");
	OPT(prefix_cache, "prefix-cache");
	OPT(cards, "cards");
	OPT(mode, "mode");
	OPT(hardware, "hardware");
#undef OPT
	s = npl_arena_strdup(&cli->arena, npl_buf_str(&b));
	npl_buf_release(&b);
	return s;
}

static long long budget(const char *opt, const char *s, int *rc)
{
	long long us = npl_parse_duration_us(s);

	/* a bare number would be a guess (20 ms, or 20 s of TTFT?): the unit is asked for */
	if (us < 0 && strspn(s, "0123456789.") == strlen(s) && *s) {
		*rc = npl_cli_usage_error(NULL, "--%s '%s' needs a unit: %sms or %ss", opt, s, s, s);
		return -1;
	}
	if (us <= 0) {
		*rc = npl_cli_usage_error(NULL, "--%s '%s' is not a duration (20ms, 22.2ms, 5s)", opt, s);
		return -1;
	}
	return us;
}

int npl_cli_query(struct npl_cli *cli, const struct npl_db *db, const struct npl_layer *model,
		  const struct npl_cli_recipe_opts *o, struct npl_query *q)
{
	int rc = 0;
	char err[512];

	memset(q, 0, sizeof(*q));
	q->model = model;
	q->text = query_text(cli, model ? model->name : NULL, o);
	q->tpot_us = q->ttft_us = q->e2e_us = -1;
	q->prefix = q->cards = -1;
	if (o->tpot && (q->tpot_us = budget("tpot", o->tpot, &rc)) < 0)
		return rc;
	if (o->ttft && (q->ttft_us = budget("ttft", o->ttft, &rc)) < 0)
		return rc;
	if (o->e2e && (q->e2e_us = budget("e2e", o->e2e, &rc)) < 0)
		return rc;
	if (o->dataset) {
		if (npl_dataset_parse(o->dataset, &q->ds, err, sizeof(err)))
			return npl_cli_usage_error(NULL, "--dataset: %s", err);
		q->has_dataset = 1;
		if (q->ds.prefix)
			q->prefix = q->ds.prefix;
	}
	if (o->prefix_cache) {
		const char *p = o->prefix_cache;
		char num[16];
		size_t n = strlen(p);
		int v;

		if (n && p[n - 1] == '%')
			n--;
		snprintf(num, sizeof(num), "%.*s", (int)(n < 15 ? n : 15), p);
		v = npl_parse_uint(num);
		if (v < 0 || v >= 100)
			return npl_cli_usage_error(NULL, "--prefix-cache '%s' is not a hit rate in percent (90; 0 for the recipes without a prefix cache)", p);
		q->prefix = v;
	}
	if (o->cards && (q->cards = npl_parse_uint(o->cards)) <= 0)
		return npl_cli_usage_error(NULL, "--cards '%s' is not a number of cards", o->cards);
	if (o->mode) {
		if (!strcmp(o->mode, "pd-mixed"))
			q->mode = NPL_MODE_PD_MIXED;
		else if (!strcmp(o->mode, "pd-disagg"))
			q->mode = NPL_MODE_PD_DISAGG;
		else
			return npl_cli_usage_error(NULL, "--mode '%s': pd-mixed or pd-disagg", o->mode);
	}
	if (o->hardware && !(q->hardware = npl_db_hardware(db, o->hardware)))
		return npl_cli_usage_error(NULL, "--hardware '%s': no such hardware profile (the profiles: %s; list --profiles)",
					   o->hardware, npl_cli_profiles_text(cli, db));
	return 0;
}

const char *npl_cli_suggest_model(const struct npl_db *db, const char *arg)
{
	const char **names = npl_xcalloc((size_t)db->nmodels * 2 + 1, sizeof(*names));
	const char *best = NULL;
	size_t len = strlen(arg);
	int i, n = 0, prefixed = 0;

	/* a name the argument begins (kimi: kimi-k2.6), when only one model has it */
	for (i = 0; len && i < db->nmodels; i++)
		if (!strncasecmp(db->models[i]->id, arg, len) || !strncasecmp(db->models[i]->name, arg, len)) {
			best = db->models[i]->id;
			prefixed++;
		}
	if (prefixed == 1) {
		free(names);
		return best;
	}
	for (i = 0; i < db->nmodels; i++) {
		names[n++] = db->models[i]->id;
		names[n++] = db->models[i]->name;
	}
	best = npl_did_you_mean(arg, names, n);
	for (i = 0; best && i < db->nmodels; i++)
		if (best == db->models[i]->name)
			best = db->models[i]->id;
	free(names);
	return best;
}

/* The ids and model names, for a did-you-mean over both. */
static const char *suggest(const struct npl_db *db, const char *arg)
{
	const char *best = npl_cli_suggest_model(db, arg), **names;
	int i, n = 0;

	if (best)
		return best;
	names = npl_xcalloc((size_t)(db->nrecipes + db->nmodels) + 1, sizeof(*names));
	for (i = 0; i < db->nrecipes; i++)
		names[n++] = db->recipes[i]->id;
	for (i = 0; i < db->nmodels; i++)
		names[n++] = db->models[i]->id;
	best = npl_did_you_mean(arg, names, n);
	free(names);
	return best;
}

static cJSON *selection_json(const char *by, const char *query, const char *why)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "by", by);
	if (query)
		cJSON_AddStringToObject(o, "query", query);
	if (why)
		cJSON_AddStringToObject(o, "why", why);
	return o;
}

const struct npl_layer *npl_cli_pick(struct npl_cli *cli, const struct npl_db *db, const char *arg,
				     const struct npl_cli_recipe_opts *o, cJSON **selection, int *rc)
{
	const struct npl_layer *R = npl_db_recipe(db, arg), *M;
	struct npl_query q;
	const char *qt;
	struct npl_selection s;
	int i;

	if (selection)
		*selection = NULL;
	if (!R && (R = npl_db_recipe_alias(db, arg)))
		fprintf(stderr, "npulaunch: note: '%s' is now %s (upstream renamed or reshaped it); use the new id\n",
			npl_escape_in(&cli->arena, arg), R->id);
	if (R) {
		if (npl_cli_has_query(o)) {
			*rc = npl_cli_usage_error(NULL, "'%s' is a recipe id: query options choose among a model's recipes (give the model instead)",
						  arg);
			return NULL;
		}
		if (selection)
			*selection = selection_json("id", NULL, NULL);
		return R;
	}
	M = npl_db_model(db, arg);
	if (!M) {
		const char *best = suggest(db, arg);

		if (best)
			fprintf(stderr, "npulaunch: no recipe or model '%s' (did you mean '%s'?)\n",
				npl_escape_in(&cli->arena, arg), best);
		else
			fprintf(stderr, "npulaunch: no recipe or model '%s': 'npulaunch list' shows them\n",
				npl_escape_in(&cli->arena, arg));
		*rc = NPL_EXIT_NO_RECIPE;
		return NULL;
	}
	if ((*rc = npl_cli_query(cli, db, M, o, &q)))
		return NULL;
	npl_select(db, &q, &s, &cli->arena);
	/* the query names the model, the notes its recipes: text from recipes, escaped */
	qt = npl_escape_in(&cli->arena, q.text);
	if (s.pick == NPL_PICK_ONE) {
		npl_cli_info(cli, "%s: %s (%s)", qt, s.best->id, npl_escape_in(&cli->arena, s.why));
		if (selection)
			*selection = selection_json("query", q.text, s.why);
		return s.best;
	}
	if (s.pick == NPL_PICK_AMBIGUOUS) {
		size_t w = 0;

		for (i = 0; i < s.ncands; i++)
			if (strlen(s.cands[i].R->id) > w)
				w = strlen(s.cands[i].R->id);
		fprintf(stderr, "npulaunch: %s: %d recipes meet the query equally well; add an option to choose:\n",
			qt, s.ncands);
		for (i = 0; i < s.ncands; i++)
			fprintf(stderr, "  %-*s  %s\n", (int)w, s.cands[i].R->id,
				npl_escape_in(&cli->arena, s.cands[i].note));
		*rc = NPL_EXIT_AMBIGUOUS;
		return NULL;
	}
	/* nothing qualifies */
	if (o->nearest) {
		struct npl_selection n;

		npl_select_nearest(db, &q, &n, &cli->arena);
		if (n.pick == NPL_PICK_ONE) {
			fprintf(stderr, "npulaunch: %s: no recipe qualifies; --nearest takes %s (%s)\n", qt,
				n.best->id, npl_escape_in(&cli->arena, n.cands[0].note));
			if (selection) {
				*selection = selection_json("nearest", q.text, n.cands[0].note);
				cJSON_AddBoolToObject(*selection, "nearest", 1);
			}
			return n.best;
		}
		if (n.pick == NPL_PICK_AMBIGUOUS) {
			fprintf(stderr, "npulaunch: %s: no recipe qualifies, and %d are equally near; add an option to choose:\n",
				qt, n.ncands);
			for (i = 0; i < n.ncands; i++)
				fprintf(stderr, "  %s: %s\n", n.cands[i].R->id,
					npl_escape_in(&cli->arena, n.cands[i].note));
			*rc = NPL_EXIT_AMBIGUOUS;
			return NULL;
		}
	}
	fprintf(stderr, "npulaunch: %s: no recipe qualifies", qt);
	if (s.ncands == 0) {
		fprintf(stderr, "\n");
	} else {
		fprintf(stderr, "; the nearest:\n");
		for (i = 0; i < s.ncands && i < 3; i++)
			fprintf(stderr, "  %s: %s\n", s.cands[i].R->id, npl_escape_in(&cli->arena, s.cands[i].note));
		fprintf(stderr, "(--nearest takes the nearest on purpose)\n");
	}
	*rc = NPL_EXIT_NO_RECIPE;
	return NULL;
}

cJSON *npl_cli_resolve(struct npl_cli *cli, const struct npl_db *db, const struct npl_layer *R,
		       struct npl_cli_recipe_opts *o, cJSON *selection, int *rc)
{
	struct npl_resolve_opts ro = {&o->site, o->ov, o->nov, o->force, o->target, o->strict};
	int before = cli->diag.n, i;
	cJSON *plan = npl_resolve(db, R, &ro, &cli->diag);

	npl_cli_flush(cli);
	if (!plan) {
		cJSON_Delete(selection);
		/* a problem located in a recipe file is bad data; otherwise bad options */
		*rc = NPL_EXIT_USAGE;
		for (i = before; i < cli->diag.n; i++)
			if (cli->diag.v[i].sev == NPL_ERROR && cli->diag.v[i].loc.file)
				*rc = NPL_EXIT_INVALID;
		return NULL;
	}
	if (selection)
		cJSON_AddItemToObject(plan, "selection", selection);
	if (o->check && (*rc = npl_cli_check(cli, db, plan, R, o->allow_unknown))) {
		cJSON_Delete(plan);
		return NULL;
	}
	return plan;
}

struct npl_engine *npl_cli_engine(struct npl_cli *cli, const struct npl_db *db)
{
	if (!cli->engine) {
		cli->engine = npl_arena_alloc(&cli->arena, sizeof(*cli->engine));
		if (npl_engine_load(cli->engine, db, &cli->arena, &cli->diag))
			cli->engine = NULL;
	}
	return cli->engine;
}

int npl_cli_check(struct npl_cli *cli, const struct npl_db *db, const cJSON *plan,
		  const struct npl_layer *R, int allow_unknown)
{
	int errors;

	if (!npl_cli_engine(cli, db)) {
		npl_cli_flush(cli);
		return NPL_EXIT_INVALID;
	}
	errors = npl_check_flags(cli->engine, plan, allow_unknown, &cli->diag);
	errors += npl_check_rules(cli->engine, plan, R, &cli->diag);
	npl_cli_flush(cli);
	return errors ? NPL_EXIT_INVALID : 0;
}

const struct npl_number_spec npl_cli_wait_seconds = {"a number of seconds", 0, 604800, 0};

int npl_cli_number(const char *cmd, const char *name, const char *s, const struct npl_number_spec *spec,
		   double *out)
{
	char want[160];

	if (npl_parse_number(s, spec, out) == 0)
		return 0;
	return npl_cli_usage_error(cmd, "%s '%s' is not %s", name, s, npl_number_expected(want, sizeof(want), spec));
}

int npl_cli_env_number(const char *cmd, const char *var, const struct npl_number_spec *spec, double def,
		       double *out)
{
	const char *s = getenv(var);

	if (!s || !*s) {
		*out = def;
		return 0;
	}
	return npl_cli_number(cmd, var, s, spec, out);
}

void npl_cli_recipe_opts_release(struct npl_cli_recipe_opts *o)
{
	free(o->ov);
	free(o->ovroom);
	o->ov = NULL;
	o->ovroom = NULL;
	memset(&o->setix, 0, sizeof(o->setix));
	o->nov = o->capov = 0;
}
