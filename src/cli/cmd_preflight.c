/*
 * cmd_preflight.c: `npulaunch preflight`: on a node, check what a launch of
 * its role needs, in seconds, before a start-up that takes many minutes.
 */
#include <stdlib.h>
#include <string.h>

#include "npulaunch/cli.h"
#include "npulaunch/fsio.h"
#include "npulaunch/ident.h"
#include "npulaunch/preflight.h"
#include "npulaunch/text.h"

static void help(void)
{
	puts("usage: npulaunch preflight [--role ROLE] [ID|QUERY|BUNDLE] [site values] [--json]\n"
	     "                           [--root DIR] [--timeout SECONDS]\n"
	     "\n"
	     "Check, on this node, what a launch of its role needs before the long start-up\n"
	     "finds it missing: the Ascend driver and toolkit (their version files) and the env\n"
	     "files the plan sources; the NPUs (npu-smi: the dies this node uses listed, healthy,\n"
	     "held by no process); the NPU network of multi-node and PD roles (hccn_tool: each\n"
	     "device's link up and its address); this node's address in the role's list and on\n"
	     "the socket interface, which must be up; the ports this node listens on, free; the\n"
	     "model (config.json and every shard its index names); the free memory of /dev/shm\n"
	     "and of the host; the host tuning apply would change. Each check prints ok, warn,\n"
	     "fail or skip with what it found and what to do. npu-smi and hccn_tool are optional:\n"
	     "missing, they are a warning. The node and role are found as apply finds them.\n"
	     "\n"
	     "Options:\n"
	     "  --role ROLE        pd-mixed, prefill, decode, router or bench\n"
	     "  --json             the results as JSON: {format, recipe, role, node, address,\n"
	     "                     checks: [{name, status, found, fix}], failed, warned}\n"
	     "  --root DIR         treat DIR as / for every file read (default: $NPULAUNCH_ROOT, else /)\n"
	     "  --timeout SECONDS  how long each run of npu-smi or hccn_tool may take (default 10)\n"
	     "  query              MODEL with --tpot T --ttft T --e2e T --dataset IN+OUT\n"
	     "                     --prefix-cache PCT --cards N --mode M --hardware H [--nearest]\n"
	     "                     instead of an id\n"
	     "  site values        --model-path P  --draft-model-path P  --ifname NAME  --node-ip IP...\n"
	     "                     --prefill-ip IP...  --decode-ip IP...  --site FILE (see render --help)\n"
	     "  overrides          --set [ROLE:]FLAG[=VALUE]  --unset [ROLE:]FLAG  --env [ROLE:]K=V\n"
	     "                     --unset-env [ROLE:]K  --force  --allow-unknown-flag\n"
	     "  -h, --help         this help\n"
	     "\n"
	     "Exit status: 0 when no check fails (warnings allowed), 1 when one does, 2 on a usage\n"
	     "error (a bad option, no role for this node).\n"
	     "\n"
	     "Examples:\n"
	     "  cd deploy && npulaunch preflight --role decode\n"
	     "  npulaunch preflight kimi-k2.6-w4a8-1p1d-16p-in128k-out1k-100ms --role prefill --site site.yaml --json");
}

/* How long a tool run may take. */
static const struct npl_number_spec timeout_spec = {"a number of seconds", 0.1, 3600, 0};

/* What the command line and the environment ask of preflight. */
struct preflight_opts {
	struct npl_cli_recipe_opts ro;
	const char *role_name, *root, *arg;
	int json, help;
	double timeout;
};

/* The options and NPULAUNCH_ROOT; 0 or an exit code (0 with o->help set after --help). */
static int parse_args(int argc, char **argv, struct npl_cli *cli, struct preflight_opts *o)
{
	static const struct option own[] = {
		{"role", required_argument, NULL, 'r'},
		{"json", no_argument, NULL, 'j'},
		{"root", required_argument, NULL, 'R'},
		{"timeout", required_argument, NULL, 'T'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct option *opts = npl_cli_options(own);
	int root_from_env = 1, c, rc = NPL_EXIT_OK;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'r': o->role_name = optarg; break;
		case 'j': o->json = 1; break;
		case 'R': o->root = optarg; root_from_env = 0; break;
		case 'T':
			if ((rc = npl_cli_number("preflight", "--timeout", optarg, &timeout_spec, &o->timeout)))
				goto out;
			break;
		case 'h': help(); o->help = 1; goto out;
		case ':': rc = npl_cli_usage_error("preflight", "option '%s' needs a value", argv[optind - 1]); goto out;
		case '?': rc = npl_cli_usage_error("preflight", "unknown option '%s'", argv[optind - 1]); goto out;
		default:
			if (npl_cli_recipe_opt(cli, &o->ro, c, optarg) <= 0) {
				rc = NPL_EXIT_USAGE;
				goto out;
			}
		}
	}
	if (optind + 1 < argc) {
		rc = npl_cli_usage_error("preflight", "unexpected argument '%s'", argv[optind + 1]);
		goto out;
	}
	if ((rc = npl_cli_root("preflight", &o->root, root_from_env)))
		goto out;
	o->arg = optind < argc ? argv[optind] : NULL;
out:
	free(opts);
	return rc;
}

/* The role: named, or the one server role whose list holds this node (addrs; local is their
 * text), or the one that has no list. NULL with *rc set when there is none or more than one. */
static const cJSON *pick_role(const cJSON *plan, const char *name, const struct npl_site *site,
			      const char **addrs, int naddrs, const char *local, int *rc)
{
	const cJSON *role = NULL, *only = NULL, *it;
	int matches = 0, without = 0;

	if (name) {
		struct npl_buf b = NPL_BUF_INIT;

		if ((role = npl_plan_role(plan, name)))
			return role;
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(plan, "roles"))
			npl_buf_printf(&b, "%s%s", b.len ? ", " : "", npl_json_str(it, "role"));
		*rc = npl_cli_usage_error("preflight", "recipe '%s' has no role '%s' (its roles: %s)",
					  npl_json_str(cJSON_GetObjectItemCaseSensitive(plan, "recipe"), "id"), name,
					  npl_buf_str(&b));
		npl_buf_release(&b);
		return NULL;
	}
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(plan, "roles")) {
		const char *prog = npl_json_str(it, "program");

		if (!prog || strcmp(prog, "server"))
			continue;
		if (!npl_json_str(it, "node_list")) {
			without++;
			only = only ? only : it;
		} else if (npl_plan_node_of(it, site, addrs, naddrs) >= 0) {
			matches++;
			role = it;
		}
	}
	if (!matches && without == 1)
		role = only;
	if (matches > 1 || !role) {
		*rc = npl_cli_usage_error("preflight", "this node (%s) is in %s role's list: say which with --role",
					  local ? local : "no address", matches > 1 ? "more than one" : "no");
		return NULL;
	}
	return role;
}

/* A bundle's manifest (arg a folder, else the current one; or a .json file), which names the
 * tuning's origin in messages; NULL for a recipe. */
static const char *manifest_of(struct npl_cli *cli, const char *arg)
{
	const char *dir = arg ? arg : ".";

	if (npl_is_dir(dir))
		return npl_arena_printf(&cli->arena, "%s/manifest.json", dir);
	return arg && npl_ends_with(arg, ".json") ? arg : NULL;
}

/* The results: JSON, or a heading (role, recipe, node, root) and a line per check. */
static void print_results(struct npl_cli *cli, const struct npl_preflight *pf, const struct npl_preflight_opts *po,
			  int json)
{
	if (json) {
		cJSON *j = npl_preflight_json(pf, po);
		char *s = cJSON_Print(j);

		npl_cli_puts_json(s);
		cJSON_free(s);
		cJSON_Delete(j);
		return;
	}
	printf("preflight: %s of %s", npl_json_str(po->role, "role"),
	       npl_escape_in(&cli->arena, npl_json_str(cJSON_GetObjectItemCaseSensitive(po->plan, "recipe"), "id")));
	if (po->node >= 0 && po->node_ip)
		printf(", node %d (%s)", po->node, po->node_ip);
	printf("%s%s\n", po->root ? ", root " : "", po->root ? npl_escape_in(&cli->arena, po->root) : "");
	npl_preflight_print(stdout, pf, 1);
}

int npl_cmd_preflight(int argc, char **argv, struct npl_cli *cli)
{
	struct preflight_opts o;
	struct npl_preflight_opts po;
	struct npl_preflight pf;
	struct npl_pf_ifaces ifs;
	struct npl_site site;
	const char **addrs = NULL;
	int rc, naddrs = 0, have_ifs;
	const cJSON *role;
	cJSON *plan = NULL;
	struct npl_buf local = NPL_BUF_INIT;

	memset(&o, 0, sizeof(o));
	memset(&site, 0, sizeof(site));
	memset(&pf, 0, sizeof(pf));
	memset(&po, 0, sizeof(po));
	o.root = getenv("NPULAUNCH_ROOT");
	o.timeout = 10;
	if ((rc = parse_args(argc, argv, cli, &o)) || o.help)
		goto out;
	if ((rc = npl_cli_site(cli, &o.ro)))
		goto out;
	if (!(plan = npl_cli_plan(cli, o.arg, &o.ro, &rc)))
		goto out;
	npl_plan_site(plan, &site, &cli->arena);

	/* this host: its interfaces, and the addresses that place it (NPULAUNCH_NODE_IP, else each) */
	have_ifs = npl_pf_ifaces_read(&ifs, &cli->arena) == 0;
	if (npl_ident_addrs(&addrs, &naddrs, &cli->arena)) {
		rc = npl_cli_usage_error("preflight", "NPULAUNCH_NODE_IP '%s' is not an IPv4 or IPv6 address",
					 getenv("NPULAUNCH_NODE_IP"));
		goto out;
	}
	for (int i = 0; i < naddrs; i++)
		npl_buf_printf(&local, "%s%s", i ? " " : "", addrs[i]);
	if (!(role = pick_role(plan, o.role_name, &site, addrs, naddrs, local.len ? npl_buf_str(&local) : NULL, &rc)))
		goto out;

	po.plan = plan;
	po.role = role;
	po.site = &site;
	po.root = o.root && strcmp(o.root, "/") ? o.root : NULL;
	po.timeout = o.timeout;
	po.ifaces = have_ifs ? &ifs : NULL;
	po.local = local.len ? npl_buf_str(&local) : NULL;
	po.node = npl_plan_node_of(role, &site, addrs, naddrs);
	if (po.node >= 0 && npl_json_str(role, "node_list"))
		po.node_ip = site.key[npl_site_key_from_name(npl_json_str(role, "node_list"))].v[po.node];
	po.source = manifest_of(cli, o.arg);
	npl_preflight_run(&pf, &po);
	print_results(cli, &pf, &po, o.json);
	rc = pf.failed ? NPL_EXIT_FAIL : NPL_EXIT_OK;
out:
	npl_preflight_release(&pf);
	npl_buf_release(&local);
	cJSON_Delete(plan);
	npl_cli_recipe_opts_release(&o.ro);
	return rc;
}
