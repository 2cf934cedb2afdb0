/* cmd_tune.c: `npulaunch tune`: check, apply or revert the host tuning of a profile. */
#include <stdlib.h>
#include <string.h>

#include "npulaunch/affinity.h"
#include "npulaunch/cli.h"
#include "npulaunch/launch.h"
#include "npulaunch/resolve.h"
#include "npulaunch/text.h"
#include "npulaunch/tune.h"

static void help(void)
{
	puts("usage: npulaunch tune [--check | --apply | --dry-run | --revert] [ID|QUERY | --hardware H]\n"
	     "                      [--root DIR] [--journal FILE] [--json]\n"
	     "\n"
	     "The host tuning a recipe's hardware profile asks for: the cpufreq governor of every\n"
	     "online CPU and its sysctls (vm.swappiness, kernel.numa_balancing,\n"
	     "kernel.sched_migration_cost_ns on Ascend A3), written directly, never through a shell.\n"
	     "Without a recipe, the default hardware profile of the database.\n"
	     "\n"
	     "Options:\n"
	     "  --check        (the default) exit 0 when the host matches; else list each difference\n"
	     "                 (path, current, wanted) and exit 1; it only reads, so any user may\n"
	     "                 run it (whether a file can be written is --apply's and --dry-run's)\n"
	     "  --apply        journal the current values, then change what differs; a journal that\n"
	     "                 exists keeps its values and gains the new files' (first value wins);\n"
	     "                 nothing is changed when any file cannot be written or the journal\n"
	     "                 is invalid\n"
	     "  --dry-run      list what --apply would change, and what it would stop on (a file\n"
	     "                 it cannot write: exit 1); nothing is changed. With an affinity policy\n"
	     "                 (tuning.affinity), also each die's CPUs, NUMA node and queue\n"
	     "                 interrupts on this node, and why (apply binds a server to its dies')\n"
	     "  --revert       check the whole journal and every file it names, restore them byte\n"
	     "                 for byte, then remove the journal (kept on any failure)\n"
	     "  --hardware H   the profile of hardware H instead of a recipe's\n"
	     "  --root DIR     treat DIR as / (default: $NPULAUNCH_ROOT, else /), for tests and images;\n"
	     "                 only its tuning files are read or written, never through a link out\n"
	     "  --journal FILE the journal (default: ROOT" NPL_TUNE_JOURNAL ")\n"
	     "  --json         the state as JSON: {root, cpufreq, cpus, differences, items: [{name,\n"
	     "                 path, current, wanted, ok}]}; --apply adds {mode, changed, journal},\n"
	     "                 --revert prints {mode, restored, journal}\n"
	     "  -h, --help     this help\n"
	     "\n"
	     "Examples:\n"
	     "  npulaunch tune --check\n"
	     "  sudo npulaunch tune --apply kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms\n"
	     "  sudo npulaunch tune --revert");
}

/* The state as JSON (npl_tune_json), printed; j is freed. */
static void print_json(cJSON *j)
{
	char *s = cJSON_Print(j);

	npl_cli_puts_json(s);
	cJSON_free(s);
	cJSON_Delete(j);
}

/* The tuning object of the first server role of a plan. */
static cJSON *plan_tuning(const cJSON *plan)
{
	const cJSON *r;

	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(plan, "roles")) {
		const char *prog = npl_json_str(r, "program");

		if (prog && !strcmp(prog, "server"))
			return cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(r, "tuning"), 1);
	}
	return NULL;
}

static void print_check(const struct npl_tune *t)
{
	int i, w = 0;

	for (i = 0; i < t->n; i++)
		if (!npl_tune_item_ok(&t->v[i]) && (int)strlen(t->v[i].path) > w)
			w = (int)strlen(t->v[i].path);
	for (i = 0; i < t->n; i++) {
		const struct npl_tune_item *it = &t->v[i];
		int n = it->current ? (int)strcspn(it->current, "\n") : 0;

		if (!npl_tune_item_ok(it)) {
			/* the host's contents, as a terminal may show them */
			struct npl_buf cur = NPL_BUF_INIT, path = NPL_BUF_INIT;

			npl_escape(&cur, it->current ? it->current : "?", it->current ? (size_t)n : 1, 0);
			npl_escape(&path, it->path, strlen(it->path), 0);
			printf("%-*s  %s -> %s\n", w, npl_buf_str(&path), npl_buf_str(&cur), it->wanted);
			npl_buf_release(&cur);
			npl_buf_release(&path);
		}
	}
}

/* What the command line and the environment ask of tune. */
struct tune_opts {
	struct npl_cli_recipe_opts ro;
	enum { CHECK, APPLY, REVERT, DRY } mode;
	const char *root, *journal, *arg;
	int json, help;
};

/* The options and NPULAUNCH_ROOT; 0 or an exit code (0 with o->help set after --help). */
static int parse_args(int argc, char **argv, struct npl_cli *cli, struct tune_opts *o)
{
	static const struct option own[] = {
		{"check", no_argument, NULL, 'c'},
		{"apply", no_argument, NULL, 'a'},
		{"dry-run", no_argument, NULL, 'n'},
		{"revert", no_argument, NULL, 'R'},
		{"root", required_argument, NULL, 'r'},
		{"journal", required_argument, NULL, 'J'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct option *opts = npl_cli_options(own);
	int root_from_env = 1, modes = 0, c, rc = NPL_EXIT_OK;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': o->mode = CHECK; modes++; break;
		case 'a': o->mode = APPLY; modes++; break;
		case 'n': o->mode = DRY; modes++; break;
		case 'R': o->mode = REVERT; modes++; break;
		case 'r': o->root = optarg; root_from_env = 0; break;
		case 'J': o->journal = optarg; break;
		case 'j': o->json = 1; break;
		case 'h': help(); o->help = 1; goto out;
		case ':': rc = npl_cli_usage_error("tune", "option '%s' needs a value", argv[optind - 1]); goto out;
		case '?': rc = npl_cli_usage_error("tune", "unknown option '%s'", argv[optind - 1]); goto out;
		default:
			if (c < NPL_OPT_TPOT || c > NPL_OPT_HARDWARE) {
				rc = npl_cli_usage_error("tune", "option '%s' does not apply to tune", argv[optind - 1]);
				goto out;
			}
			if (npl_cli_recipe_opt(cli, &o->ro, c, optarg) <= 0) {
				rc = NPL_EXIT_USAGE;
				goto out;
			}
		}
	}
	if (modes > 1) {
		rc = npl_cli_usage_error("tune", "give one of --check, --apply, --dry-run, --revert");
		goto out;
	}
	if (optind + 1 < argc) {
		rc = npl_cli_usage_error("tune", "unexpected argument '%s'", argv[optind + 1]);
		goto out;
	}
	if ((rc = npl_cli_root("tune", &o->root, root_from_env)))
		goto out;
	/* the journal's path is in the document: --json carries UTF-8 only, refused before anything
	   is changed rather than after */
	if (o->json && ((o->root && (rc = npl_cli_json_text("tune", root_from_env ? "NPULAUNCH_ROOT" : "--root", o->root))) ||
			(o->journal && (rc = npl_cli_json_text("tune", "--journal", o->journal)))))
		goto out;
	o->arg = optind < argc ? argv[optind] : NULL;
out:
	free(opts);
	return rc;
}

/* --revert: the journal's files restored and the journal removed. An exit code. */
static int revert(struct npl_cli *cli, const struct tune_opts *o)
{
	int n;

	if (npl_tune_revert(o->root, o->journal, &n, &cli->diag)) {
		npl_cli_flush(cli);
		return NPL_EXIT_FAIL;
	}
	if (o->json) {
		char *jp = npl_tune_journal_path(o->root, o->journal);
		cJSON *j = cJSON_CreateObject();

		cJSON_AddStringToObject(j, "mode", "revert");
		cJSON_AddNumberToObject(j, "restored", n);
		cJSON_AddStringToObject(j, "journal", jp);
		print_json(j); /* through the UTF-8 check, as every --json document */
		free(jp);
	}
	npl_cli_info(cli, "tune: restored %d file%s from the journal", n, n == 1 ? "" : "s");
	return NPL_EXIT_OK;
}

/* The tuning wanted: that of the recipe given (its first server role), else of the hardware
 * profile (--hardware, else the database's default). NULL with *rc set when there is none. */
static cJSON *wanted_tuning(struct npl_cli *cli, struct tune_opts *o, int *rc)
{
	struct npl_db db;
	cJSON *tuning;

	if ((*rc = npl_cli_open_db_for(cli, &db, o->arg)))
		return NULL;
	if (o->arg) {
		cJSON *sel = NULL, *plan;
		const struct npl_layer *R = npl_cli_pick(cli, &db, o->arg, &o->ro, &sel, rc);

		if (!R)
			return NULL;
		plan = npl_cli_resolve(cli, &db, R, &o->ro, sel, rc);
		if (!plan)
			return NULL;
		tuning = plan_tuning(plan);
		cJSON_Delete(plan);
	} else {
		const struct npl_layer *hw = o->ro.hardware ? npl_db_hardware(&db, o->ro.hardware)
							    : npl_db_default_hardware(&db);

		if (!hw) {
			*rc = npl_cli_usage_error("tune", "no hardware profile '%s'",
						  o->ro.hardware ? o->ro.hardware : "(default)");
			return NULL;
		}
		tuning = npl_resolve_tuning(&db, hw, &cli->diag);
	}
	if (!tuning) {
		npl_cli_flush(cli);
		*rc = NPL_EXIT_FAIL;
	}
	return tuning;
}

/* --check: the differences listed (or the state as JSON). An exit code. */
static int check(const struct npl_tune *t, int json)
{
	int n = npl_tune_differences(t);

	if (json)
		print_json(npl_tune_json(t));
	else if (n)
		print_check(t);
	if (n) {
		fprintf(stderr, "npulaunch: tune: %d of %d settings differ\n", n, t->n);
		return NPL_EXIT_FAIL;
	}
	if (!json)
		fprintf(stderr, "npulaunch: tune: the host matches (%d settings)\n", t->n);
	return NPL_EXIT_OK;
}

/* The affinity policy of tuning on this node: every die npu-smi lists and its set, as text, or
 * into j ("affinity") as JSON. */
static void dry_affinity(struct npl_cli *cli, const cJSON *tuning, const char *root, cJSON *j)
{
	const cJSON *pol = cJSON_GetObjectItemCaseSensitive(tuning, "affinity");
	struct npl_affinity *af;
	struct npl_diag d = NPL_DIAG_INIT;

	if (!npl_json_str(cJSON_GetObjectItemCaseSensitive(pol, "policy"), "value"))
		return;
	af = npl_xcalloc(1, sizeof(*af));
	if (npl_launch_affinity_node(af, pol, NULL, root, 10, &cli->arena, &d) == 0) {
		if (j)
			cJSON_AddItemToObject(j, "affinity", npl_affinity_json(af));
		else
			npl_affinity_print(af, stdout);
	} else {
		char *msg = d.n ? npl_diag_format(&d, &d.v[0], 0) : NULL;

		if (j)
			cJSON_AddStringToObject(j, "affinity", msg ? msg : "the topology could not be read");
		else
			printf("affinity: %s\n", msg ? msg : "the topology could not be read");
		free(msg);
	}
	npl_affinity_release(af);
	npl_diag_release(&d);
	free(af);
}

/* --dry-run: what --apply would change, then what it would stop on; the affinity policy's sets
 * (apply binds the servers to them). An exit code. */
static int dry_run(struct npl_cli *cli, struct npl_tune *t, int json, const cJSON *tuning, const char *root)
{
	int n = npl_tune_differences(t);

	if (json) {
		cJSON *j = npl_tune_json(t);

		dry_affinity(cli, tuning, root, j);
		print_json(j);
	} else {
		print_check(t);
		dry_affinity(cli, tuning, root, NULL);
	}
	if (npl_tune_writable(t, &cli->diag)) {
		npl_cli_flush(cli);
		fprintf(stderr, "npulaunch: tune: --dry-run: --apply would stop on the above; nothing was changed\n");
		return NPL_EXIT_FAIL;
	}
	fprintf(stderr, "npulaunch: tune: --dry-run: --apply would change %d of %d settings; nothing was changed\n",
		n, t->n);
	return NPL_EXIT_OK;
}

/* --apply: journal, then change what differs (all undone on a failure). An exit code. */
static int apply(struct npl_cli *cli, struct npl_tune *t, const struct tune_opts *o)
{
	char *jp;
	int n;

	if (npl_tune_apply(t, o->journal, &n, &cli->diag)) {
		npl_cli_flush(cli);
		fprintf(stderr, "npulaunch: tune: every change was undone\n");
		return NPL_EXIT_FAIL;
	}
	jp = npl_tune_journal_path(o->root, o->journal);
	if (o->json) {
		/* the state before, as --check has it, and what changed */
		cJSON *j = npl_tune_json(t);

		cJSON_AddStringToObject(j, "mode", "apply");
		cJSON_AddNumberToObject(j, "changed", n);
		cJSON_AddStringToObject(j, "journal", jp);
		print_json(j);
	}
	if (n)
		npl_cli_info(cli, "tune: changed %d of %d settings (journal %s)", n, t->n, jp);
	else
		npl_cli_info(cli, "tune: the host already matches (%d settings)", t->n);
	free(jp);
	return NPL_EXIT_OK;
}

int npl_cmd_tune(int argc, char **argv, struct npl_cli *cli)
{
	struct tune_opts o;
	struct npl_tune t;
	cJSON *tuning = NULL;
	int rc;

	memset(&o, 0, sizeof(o));
	memset(&t, 0, sizeof(t));
	o.mode = CHECK;
	o.root = getenv("NPULAUNCH_ROOT");
	if ((rc = parse_args(argc, argv, cli, &o)) || o.help)
		goto out;
	if (o.mode == REVERT) {
		rc = revert(cli, &o);
		goto out;
	}
	if (!(tuning = wanted_tuning(cli, &o, &rc)))
		goto out;
	/* --check and --dry-run only read: any user may run them; --apply opens each file to write */
	if (npl_tune_collect(&t, tuning, o.root, NULL, o.mode == APPLY ? 0 : NPL_TUNE_READ_ONLY, &cli->diag)) {
		npl_cli_flush(cli);
		fprintf(stderr, "npulaunch: tune: nothing was changed\n");
		rc = NPL_EXIT_FAIL;
		goto out;
	}
	npl_cli_flush(cli);
	if (o.mode == CHECK)
		rc = check(&t, o.json);
	else if (o.mode == DRY)
		rc = dry_run(cli, &t, o.json, tuning, o.root);
	else
		rc = apply(cli, &t, &o);
out:
	cJSON_Delete(tuning);
	npl_tune_release(&t);
	npl_cli_recipe_opts_release(&o.ro);
	return rc;
}
