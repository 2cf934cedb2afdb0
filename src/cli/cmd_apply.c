/*
 * cmd_apply.c: `npulaunch apply`: on a node, tune the host and launch this
 * node's role: the same launch as the rendered script, without a script in
 * between, and with a way back (tune --revert). This file finds the plan, the role
 * and the node, checks, tunes and reports; the launch itself is launch.c's (launch.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npulaunch/cli.h"
#include "npulaunch/fsio.h"
#include "npulaunch/health.h"
#include "npulaunch/ident.h"
#include "npulaunch/launch.h"
#include "npulaunch/preflight.h"
#include "npulaunch/text.h"
#include "npulaunch/tune.h"

extern char **environ;

static void help(void)
{
	puts("usage: npulaunch apply [--role ROLE] [ID|QUERY|BUNDLE] [site values] [overrides]\n"
	     "                       [--dry-run] [--root DIR] [--cpus LIST] [--journal FILE]\n"
	     "                       [--no-preflight] [--no-tune] [--no-affinity]\n"
	     "\n"
	     "Tune this host and launch this node's role of a recipe: the same launch as the\n"
	     "rendered script (same tuning, unsets, sourced files, environment and argv), then\n"
	     "exec the server. Inside a rendered bundle (a folder with manifest.json) no recipe\n"
	     "is needed. The node is found by matching its addresses (NPULAUNCH_NODE_IP, else every\n"
	     "local address) against the role's node list; --role may be left out when they\n"
	     "belong to exactly one role. Site values not given are taken from the environment\n"
	     "(MODEL_PATH, IFNAME, PREFILL_IPS=\"a b\", ...), as the scripts do. Nothing is changed\n"
	     "before every check has passed, preflight's included (npulaunch preflight --help);\n"
	     "a failure before exec undoes the tuning.\n"
	     "\n"
	     "Options:\n"
	     "  --role ROLE     pd-mixed, prefill, decode, router or bench\n"
	     "  --json          with --dry-run: the plan for this node as JSON: {recipe, role, node,\n"
	     "                  addresses, tuning, unset, source, env, cpus, affinity, wait, wait_timeout_s,\n"
	     "                  instances: [{instance, slot, env, argv}], stops: [...]}\n"
	     "  --dry-run       print the whole plan for this node (tuning, environment, command)\n"
	     "                  whatever the host lacks, then what a real run would stop on (exit 1,\n"
	     "                  or 2 for a missing site value); only reads, changes nothing\n"
	     "  --root DIR      treat DIR as / for the host's files and the Ascend env files\n"
	     "                  (default: $NPULAUNCH_ROOT, else /)\n"
	     "  --cpus LIST     pin the server to these CPUs (0-63,128-191), which must be online,\n"
	     "                  instead of its dies' (below)\n"
	     "  --journal FILE  the tuning journal (default: ROOT" NPL_TUNE_JOURNAL ")\n"
	     "  --no-preflight  skip the preflight checks (as NPULAUNCH_PREFLIGHT=0 does); --dry-run\n"
	     "                  never runs them\n"
	     "  --no-tune       launch without touching the host's tuning (as a role script's\n"
	     "                  --no-tune): it is another step's, or the site's\n"
	     "  --no-affinity   launch the server unbound; by default a server whose hardware profile\n"
	     "                  or recipe has a tuning.affinity policy runs on its dies' CPUs, its\n"
	     "                  memory preferred on their NUMA nodes, from this node's topology\n"
	     "                  (--dry-run shows each die's; unless its environment sets\n"
	     "                  SGLANG_SET_CPU_AFFINITY: SGLang binds then; docs/operators-guide.md)\n"
	     "  query           MODEL with --tpot T --ttft T --e2e T --dataset IN+OUT\n"
	     "                  --prefix-cache PCT --cards N --mode M --hardware H [--nearest]\n"
	     "                  instead of an id\n"
	     "  site values     --model-path P  --draft-model-path P  --ifname NAME  --node-ip IP...\n"
	     "                  --prefill-ip IP...  --decode-ip IP...  --site FILE (see render --help)\n"
	     "  overrides       --set [ROLE:]FLAG[=VALUE]  --unset [ROLE:]FLAG  --env [ROLE:]K=V\n"
	     "                  --unset-env [ROLE:]K  --force  --allow-unknown-flag\n"
	     "  -h, --help      this help\n"
	     "\n"
	     "Examples:\n"
	     "  cd deploy && sudo npulaunch apply --role decode\n"
	     "  sudo npulaunch apply --role prefill kimi-k2.6-w4a8-1p1d-16p-in128k-out1k-100ms --site site.yaml\n"
	     "  npulaunch apply kimi-k2.6 --tpot 20ms --model-path /m --draft-model-path /d --ifname eth0 --dry-run");
}


/* ---- this node --------------------------------------------------------------- */

static const char *addrs_text(struct npl_cli *cli, const char *const *v, int n)
{
	struct npl_buf b = NPL_BUF_INIT;
	const char *s;
	int i;

	for (i = 0; i < n; i++)
		npl_buf_printf(&b, "%s%s", i ? " " : "", v[i]);
	s = npl_arena_strdup(&cli->arena, n ? npl_buf_str(&b) : "no address");
	npl_buf_release(&b);
	return s;
}

/* The role: named, or the one server role whose list holds this node (or the one server role
 * without a list). NULL with *rc set when there is none or more than one. */
static const cJSON *pick_role(struct npl_cli *cli, const cJSON *plan, const struct npl_launch_node *l, const char *name,
			      int *rc)
{
	const cJSON *role = NULL, *only = NULL, *it;
	int matches = 0, servers_without_list = 0;
	struct npl_buf b = NPL_BUF_INIT;

	if (name) {
		if ((role = npl_plan_role(plan, name)))
			return role;
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(plan, "roles"))
			npl_buf_printf(&b, "%s%s", b.len ? ", " : "", npl_json_str(it, "role"));
		*rc = npl_cli_usage_error("apply", "recipe '%s' has no role '%s' (its roles: %s)",
					  npl_json_str(cJSON_GetObjectItemCaseSensitive(plan, "recipe"), "id"),
					  name, npl_buf_str(&b));
		npl_buf_release(&b);
		return NULL;
	}
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(plan, "roles")) {
		const char *prog = npl_json_str(it, "program");

		if (!prog || strcmp(prog, "server"))
			continue;
		if (!npl_json_str(it, "node_list")) {
			servers_without_list++;
			only = only ? only : it;
			continue;
		}
		if (npl_plan_node_of(it, l->site, l->addrs, l->naddrs) >= 0) {
			matches++;
			role = it;
			npl_buf_printf(&b, "%s%s", b.len ? ", " : "", npl_json_str(it, "role"));
		}
	}
	if (matches > 1) {
		*rc = npl_cli_usage_error("apply", "this node (%s) is in the lists of %s: say which with --role",
					  addrs_text(cli, l->addrs, l->naddrs), npl_buf_str(&b));
		npl_buf_release(&b);
		return NULL;
	}
	npl_buf_release(&b);
	if (!matches && servers_without_list == 1)
		role = only;
	if (!role)
		*rc = npl_cli_usage_error("apply", "this node (%s) is in no role's list: say which with --role, or give the addresses (--node-ip, --prefill-ip, --decode-ip)",
					  addrs_text(cli, l->addrs, l->naddrs));
	return role;
}

/* This node's index in l->role's node list; -1 with the error printed when the list is not
 * known or does not hold this node. */
static int node_index(struct npl_cli *cli, const struct npl_launch_node *l)
{
	const char *list = npl_json_str(l->role, "node_list");
	int idx = npl_plan_node_of(l->role, l->site, l->addrs, l->naddrs), k;

	if (idx == -2) {
		k = npl_site_key_from_name(list);
		npl_error(&cli->diag, NULL, "%s needs %d address%s in rank order: give --%s once per node, or export %s='ADDRESS ...'",
			  list, npl_plan_nodes_count(l->role), npl_plan_nodes_count(l->role) == 1 ? "" : "es", list,
			  k >= 0 ? npl_site_var(k) : list);
		npl_cli_flush(cli);
		return -1;
	}
	if (idx < 0) {
		const struct npl_site_value *v = &l->site->key[npl_site_key_from_name(list)];
		struct npl_buf b = NPL_BUF_INIT;

		for (int i = 0; i < v->n; i++)
			npl_buf_printf(&b, "%s%s", i ? " " : "", v->v[i]);
		npl_error(&cli->diag, NULL, "this host (%s) is not in the %s list (%s): run it on one of those nodes, or set NPULAUNCH_NODE_IP",
			  addrs_text(cli, l->addrs, l->naddrs), list, npl_buf_str(&b));
		npl_buf_release(&b);
		npl_cli_flush(cli);
		return -1;
	}
	return idx;
}

/* ---- apply ------------------------------------------------------------------------ */

/* The manifest a bundle's plan comes from (as cli.c finds it), for messages; NULL for a recipe. */
static const char *bundle_manifest(struct npl_cli *cli, const char *arg)
{
	struct stat st;
	const char *dir = arg ? arg : ".";
	char *p;

	if (npl_is_dir(dir)) {
		p = npl_arena_printf(&cli->arena, "%s/manifest.json", dir);
		return stat(p, &st) == 0 ? p : NULL;
	}
	return arg && npl_ends_with(arg, ".json") && stat(arg, &st) == 0 ? arg : NULL;
}

/* NPULAUNCH_STOP_TIMEOUT: how long instances that share a node get to stop. */
static const struct npl_number_spec stop_seconds = {"a number of seconds", 0, 3600, 0};

/* What the command line and the environment ask of apply. */
struct apply_opts {
	struct npl_cli_recipe_opts ro;
	const char *role_name, *root, *journal, *cpus, *arg;
	int dry, json, no_preflight, no_tune, no_affinity, help;
	double grace;
};

/* The options, NPULAUNCH_ROOT, NPULAUNCH_STOP_TIMEOUT and NPULAUNCH_PREFLIGHT; 0 or an exit code
 * (0 with o->help set after --help). */
static int parse_args(int argc, char **argv, struct npl_cli *cli, struct apply_opts *o)
{
	static const struct option own[] = {
		{"role", required_argument, NULL, 'r'},
		{"dry-run", no_argument, NULL, 'n'},
		{"root", required_argument, NULL, 'R'},
		{"cpus", required_argument, NULL, 'c'},
		{"journal", required_argument, NULL, 'J'},
		{"json", no_argument, NULL, 'j'},
		{"no-preflight", no_argument, NULL, 'P'},
		{"no-tune", no_argument, NULL, 'T'},
		{"no-affinity", no_argument, NULL, 'A'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct option *opts = npl_cli_options(own);
	const char *pre = getenv("NPULAUNCH_PREFLIGHT");
	int root_from_env = 1, c, rc = NPL_EXIT_OK;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'r': o->role_name = optarg; break;
		case 'n': o->dry = 1; break;
		case 'R': o->root = optarg; root_from_env = 0; break;
		case 'c': o->cpus = optarg; break;
		case 'J': o->journal = optarg; break;
		case 'j': o->json = 1; break;
		case 'P': o->no_preflight = 1; break;
		case 'T': o->no_tune = 1; break;
		case 'A': o->no_affinity = 1; break;
		case 'h': help(); o->help = 1; goto out;
		case ':': rc = npl_cli_usage_error("apply", "option '%s' needs a value", argv[optind - 1]); goto out;
		case '?': rc = npl_cli_usage_error("apply", "unknown option '%s'", argv[optind - 1]); goto out;
		default:
			if (npl_cli_recipe_opt(cli, &o->ro, c, optarg) <= 0) {
				rc = NPL_EXIT_USAGE;
				goto out;
			}
		}
	}
	if (optind + 1 < argc) {
		rc = npl_cli_usage_error("apply", "unexpected argument '%s'", argv[optind + 1]);
		goto out;
	}
	if ((rc = npl_cli_root("apply", &o->root, root_from_env)))
		goto out;
	if (o->root && !strcmp(o->root, "/"))
		o->root = NULL;
	if ((rc = npl_cli_env_number("apply", "NPULAUNCH_STOP_TIMEOUT", &stop_seconds, 30, &o->grace)))
		goto out;
	/* the scripts read the same switch */
	if (pre && *pre && strcmp(pre, "0") && strcmp(pre, "1")) {
		rc = npl_cli_usage_error("apply", "NPULAUNCH_PREFLIGHT '%s' is not 0 (skip the preflight checks) or 1", pre);
		goto out;
	}
	o->no_preflight |= pre && !strcmp(pre, "0");
	if (o->json && !o->dry) {
		rc = npl_cli_usage_error("apply", "--json reports a dry run: give --dry-run too");
		goto out;
	}
	o->arg = optind < argc ? argv[optind] : NULL;
out:
	free(opts);
	return rc;
}

/* The router starts once every server answers: the servers' URLs into l->wait, and how long to
 * wait (NPULAUNCH_WAIT_TIMEOUT). 0, or an exit code. */
static int router_waits(struct npl_cli *cli, struct npl_launch_node *l, const char **urls)
{
	struct npl_endpoint *eps = NULL;
	int i, rc, nep = npl_cli_endpoints(cli, l->plan, 0, &eps);

	if ((rc = npl_cli_env_number("apply", "NPULAUNCH_WAIT_TIMEOUT", &npl_cli_wait_seconds, 1800, &l->wait_timeout))) {
		npl_cli_flush(cli);
		return rc;
	}
	for (i = 0; i < nep; i++)
		if (eps[i].refused) {
			fprintf(stderr, "npulaunch: apply: the %s endpoint %s (refused: no request is sent)\n",
				npl_escape_in(&cli->arena, eps[i].role), eps[i].refused);
			return NPL_EXIT_USAGE;
		} else if (eps[i].url) {
			urls[l->nwait < 255 ? l->nwait++ : l->nwait] = eps[i].url;
		}
	return 0;
}

/* The tuning of the role, read and checked: a dry run only reads the host (any user may run
 * it), then asks what a real run could not write. */
static void collect_tuning(struct npl_cli *cli, struct npl_launch_node *l, struct npl_tune *t, const char *root,
			   const char *manifest, int dry)
{
	const cJSON *tuning = cJSON_GetObjectItemCaseSensitive(l->role, "tuning");

	if (!tuning)
		return;
	if (npl_tune_collect(t, tuning, root, manifest, dry ? NPL_TUNE_READ_ONLY : 0, &cli->diag) != 0)
		l->bad |= NPL_LAUNCH_BAD_TUNE;
	/* the dies' queue interrupts on their CPUs (the affinity's), journaled with the rest, and
	 * irqbalance, which would move them back, stopped (journaled too) */
	int irqs = 0;

	for (const cJSON *die = l->affinity ? cJSON_GetObjectItemCaseSensitive(l->affinity, "dies")->child : NULL; die;
	     die = die->next) {
		const cJSON *q;

		cJSON_ArrayForEach(q, cJSON_GetObjectItemCaseSensitive(die, "irqs")) {
			const char *why = npl_arena_printf(&cli->arena, "device %d %s", npl_json_int(die, "device", -1),
							   npl_json_str(q, "name"));

			if (npl_tune_collect_irq(t, npl_json_int(q, "irq", -1), npl_json_int(q, "cpu", -1), why, &cli->diag))
				l->bad |= NPL_LAUNCH_BAD_TUNE;
			irqs++;
		}
	}
	if (irqs && npl_tune_collect_irqbalance(t, &cli->diag))
		l->bad |= NPL_LAUNCH_BAD_TUNE;
	if (!(l->bad & NPL_LAUNCH_BAD_TUNE) && dry && npl_tune_writable(t, &cli->diag))
		l->bad |= NPL_LAUNCH_BAD_TUNE;
}

/* The preflight checks of this node's role (preflight.h): warnings and failures printed; a
 * failure stops apply before anything changes. 0, or an exit code. */
static int preflight(struct npl_cli *cli, const struct npl_launch_node *l, const char *root, const char *manifest)
{
	const char *list = npl_json_str(l->role, "node_list");
	struct npl_preflight_opts po;
	struct npl_preflight pf;
	struct npl_pf_ifaces ifs;
	int rc = NPL_EXIT_OK;

	memset(&po, 0, sizeof(po));
	po.plan = l->plan;
	po.role = l->role;
	po.site = l->site;
	po.root = root;
	po.source = manifest;
	po.node = l->node;
	po.node_ip = list ? l->site->key[npl_site_key_from_name(list)].v[l->node] : NULL;
	po.local = addrs_text(cli, l->addrs, l->naddrs);
	po.ifaces = npl_pf_ifaces_read(&ifs, &cli->arena) == 0 ? &ifs : NULL;
	po.timeout = 10;
	po.smi_out = l->smi.info;
	po.topo_out = l->smi.topo;
	npl_preflight_run(&pf, &po);
	if (pf.failed || pf.warned)
		npl_preflight_print(stderr, &pf, 0);
	if (pf.failed) {
		fprintf(stderr, "npulaunch: apply: preflight failed: nothing was changed (--no-preflight skips it)\n");
		rc = NPL_EXIT_FAIL;
	}
	npl_preflight_release(&pf);
	return rc;
}

/* --dry-run: the whole plan, whatever the host lacks; then what a real run would stop on. */
static int dry_run(struct npl_cli *cli, struct npl_launch_node *l, int json)
{
	int rc = NPL_EXIT_OK;

	npl_launch_ranks(l, environ, 30);   /* the environment apply runs in: the env files are not sourced */
	if (json)
		npl_launch_dry_json(l);
	else
		npl_launch_dry_text(l);
	if (cli->diag.errors) {
		fprintf(stderr, "npulaunch: apply: --dry-run: a real run would stop on:\n");
		rc = l->bad & ~NPL_LAUNCH_BAD_TUNE ? NPL_EXIT_USAGE : NPL_EXIT_FAIL;
	}
	npl_cli_flush(cli);
	return rc;
}

/* The router: wait until every server answers. 0, or an exit code. */
static int wait_servers(const struct npl_launch_node *l)
{
	char herr[256];
	int left;

	if (!l->nwait || l->wait_timeout <= 0)
		return NPL_EXIT_OK;
	if (npl_health_init(herr, sizeof(herr))) {
		fprintf(stderr, "npulaunch: apply: %s\n", herr);
		return NPL_EXIT_FAIL;
	}
	left = npl_wait(l->wait, l->nwait, NPL_PROBE_HEALTH, l->wait_timeout, stderr, NULL);
	if (left) {
		fprintf(stderr, "npulaunch: apply: not starting the %s: %d of %d server%s not ready after %gs\n",
			l->role_name, left, l->nwait, l->nwait == 1 ? "" : "s", l->wait_timeout);
		return NPL_EXIT_FAIL;
	}
	return NPL_EXIT_OK;
}

/* bench_serving appends its results in the current folder: the bundle's, as bench.sh. -1 with
 * an error when it cannot be entered. */
static int enter_bundle(struct npl_cli *cli, const char *manifest)
{
	char *m = npl_arena_strdup(&cli->arena, manifest), *slash = strrchr(m, '/');

	if (slash)
		*slash = '\0';
	if (slash && chdir(m) != 0)
		return npl_error(&cli->diag, NULL, "cannot enter the bundle folder %s: %s", m, strerror(errno));
	return 0;
}

/* From here on the host changes: tune, then the environment, then exec (or start and supervise
 * the instances). A failure before exec undoes the tuning. An exit code, when it returns. */
static int launch(struct npl_cli *cli, struct npl_launch_node *l, struct npl_tune *t, const char *journal,
		  const char *manifest, double grace)
{
	int tuned = 0;

	if (t->n && npl_tune_apply(t, journal, &tuned, &cli->diag)) {
		npl_cli_flush(cli);
		fprintf(stderr, "npulaunch: apply: the tuning was undone; nothing was launched\n");
		return NPL_EXIT_FAIL;
	}
	if (npl_launch_environ(l, environ) || npl_launch_pin(l))
		goto fail;
	/* SGLang's per-rank binding, asked of the python the server's environment finds */
	npl_launch_ranks(l, l->env.v, 30);
	if (l->affinity && l->rank_note)
		fprintf(stderr, "npulaunch: apply: affinity ranks: %s\n", npl_escape_in(&cli->arena, l->rank_note));
	fprintf(stderr, "npulaunch: apply: %s node %d of %s: %d setting%s changed; %s %s\n", l->role_name, l->node,
		npl_json_str(cJSON_GetObjectItemCaseSensitive(l->plan, "recipe"), "id"), tuned,
		tuned == 1 ? "" : "s",
		l->ninst == 1 ? "exec" : !strcmp(l->role_name, "bench") ? "running its benchmarks in turn:" : "starting its instances:",
		l->inst[0].argv[0]);
	fflush(NULL);
	if (!strcmp(l->role_name, "bench") && manifest && enter_bundle(cli, manifest))
		goto fail;
	if (l->ninst == 1) {
		npl_launch_exec(l);
		goto fail;
	}
	if (!strcmp(l->role_name, "bench")) {
		int st = npl_launch_sequence(l); /* several benchmarks, one after the other */

		npl_cli_flush(cli);
		if (st > 0)
			return st; /* a benchmark's status, as bench.sh ends with it (no tuning to undo) */
		goto fail;
	}
	/* from here the servers run: their end is ours, and the tuning stays as it would after exec */
	return npl_launch_supervise(l, grace);
fail:
	npl_cli_flush(cli);
	if (tuned) {
		/* and the journal goes when this apply made it */
		npl_tune_undo(t, &cli->diag);
		npl_cli_flush(cli);
		fprintf(stderr, "npulaunch: apply: the tuning was undone\n");
	}
	return NPL_EXIT_FAIL;
}

int npl_cmd_apply(int argc, char **argv, struct npl_cli *cli)
{
	struct apply_opts o;
	struct npl_launch_node l;
	struct npl_tune t;
	struct npl_site site;
	const char *wait_urls[256], *manifest;
	const char **addrs = NULL;
	cJSON *plan = NULL;
	int rc, naddrs = 0;

	memset(&o, 0, sizeof(o));
	o.ro.check = 1;
	o.grace = 30;
	memset(&l, 0, sizeof(l));
	memset(&t, 0, sizeof(t));
	memset(&site, 0, sizeof(site));
	o.root = getenv("NPULAUNCH_ROOT");
	if ((rc = parse_args(argc, argv, cli, &o)) || o.help)
		goto out;
	if ((rc = npl_cli_site(cli, &o.ro)))
		goto out;

	/* the plan: a rendered bundle, or a recipe resolved here */
	if (!(plan = npl_cli_plan(cli, o.arg, &o.ro, &rc)))
		goto out;
	npl_plan_site(plan, &site, &cli->arena);
	if (npl_ident_addrs(&addrs, &naddrs, &cli->arena)) {
		npl_error(&cli->diag, NULL, "NPULAUNCH_NODE_IP '%s' is not an IPv4 or IPv6 address",
			  getenv("NPULAUNCH_NODE_IP"));
		npl_cli_flush(cli);
		rc = NPL_EXIT_USAGE;
		goto out;
	}
	l.plan = plan;
	l.site = &site;
	l.addrs = addrs;
	l.naddrs = naddrs;
	l.placeholders = o.dry;
	l.cpus = o.cpus;
	l.tune = &t;
	l.wait = wait_urls;
	l.diag = &cli->diag;
	l.arena = &cli->arena;

	/* the role and the node: named, or the one this node's address belongs to */
	if (!(l.role = pick_role(cli, plan, &l, o.role_name, &rc)))
		goto out;
	l.role_name = o.role_name ? o.role_name : npl_json_str(l.role, "role");
	if ((l.node = node_index(cli, &l)) < 0) {
		rc = NPL_EXIT_USAGE;
		goto out;
	}
	/* everything the launch needs, resolved and checked before anything changes */
	if (npl_launch_prepare(&l, o.root)) {
		npl_cli_flush(cli);
		rc = NPL_EXIT_FAIL;
		goto out;
	}
	if (!strcmp(l.role_name, "router") && (rc = router_waits(cli, &l, wait_urls)))
		goto out;
	if (o.cpus)
		npl_launch_cpus(&l, o.root);
	else if (o.no_affinity)
		l.affinity_note = "--no-affinity";
	else
		npl_launch_affinity(&l, o.root, 10);
	manifest = bundle_manifest(cli, o.arg);
	if (!o.no_tune) /* the host's tuning is another step's (a role script's --no-tune) */
		collect_tuning(cli, &l, &t, o.root, manifest, o.dry);
	if (cli->diag.errors && !o.dry) {
		npl_cli_flush(cli);
		fprintf(stderr, "npulaunch: apply: nothing was changed\n");
		rc = l.bad & ~NPL_LAUNCH_BAD_TUNE ? NPL_EXIT_USAGE : NPL_EXIT_FAIL;
		goto out;
	}
	if (o.dry) {
		rc = dry_run(cli, &l, o.json);
		goto out;
	}
	npl_cli_flush(cli);
	if ((!o.no_preflight && (rc = preflight(cli, &l, o.root, manifest))) || (rc = wait_servers(&l)))
		goto out;
	rc = launch(cli, &l, &t, o.journal, manifest, o.grace);
out:
	npl_launch_release(&l);
	npl_tune_release(&t);
	cJSON_Delete(plan);
	npl_cli_recipe_opts_release(&o.ro);
	return rc;
}
