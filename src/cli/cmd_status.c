/* cmd_status.c: `npulaunch status`: a row per endpoint of a deployment, up or down. */
#include <stdlib.h>
#include <string.h>

#include "npulaunch/arena.h"
#include "npulaunch/cli.h"
#include "npulaunch/health.h"
#include "npulaunch/text.h"

static void help(void)
{
	puts("usage: npulaunch status [BUNDLE | ID|QUERY [site values]] [--timeout S] [--json]\n"
	     "       npulaunch status --affinity [BUNDLE | ID|QUERY [site values]] [--root DIR] [--json]\n"
	     "\n"
	     "Probe every endpoint of a deployment (each prefill, decode or PD-mixed server instance,\n"
	     "and the router): a row per endpoint with role, instance, URL, up or down, the latency\n"
	     "of /health and the model it serves (/get_model_info, /model_info or /v1/models).\n"
	     "Without an argument, the bundle in the current folder (manifest.json). Exit 1 when any\n"
	     "endpoint is down, 2 when the deployment has none.\n"
	     "\n"
	     "Options:\n"
	     "  --timeout S  bound of each request, 0.001 to 3600, decimal like 1.5 (default 2)\n"
	     "  --json       [{role, instance, url, up, code, latency_ms, model, error}]\n"
	     "  --affinity   on a node, probe nothing: read back where the plan's servers that run\n"
	     "               here run: each thread's CPUs (/proc/PID/task/TID/status) within its\n"
	     "               dies', each process's memory policy (numa_maps) on their nodes, as apply\n"
	     "               binds them (docs/operators-guide.md, \"Affinity\"); exit 1 on a mismatch\n"
	     "               or when none runs. --json: [{role, node, pid, tid, what, found, want, ok}]\n"
	     "  --root DIR   with --affinity: treat DIR as / (default: $NPULAUNCH_ROOT, else /)\n"
	     "  query        MODEL with --tpot T --ttft T --e2e T --dataset IN+OUT\n"
	     "               --prefix-cache PCT --cards N --mode M --hardware H [--nearest]\n"
	     "               instead of an id\n"
	     "  site values  --model-path P  --draft-model-path P  --ifname NAME  --node-ip IP...\n"
	     "               --prefill-ip IP...  --decode-ip IP...  --entry-ip IP  --site FILE\n"
	     "               (see render --help)\n"
	     "  -h, --help   this help\n"
	     "\n"
	     "Examples:\n"
	     "  cd deploy && npulaunch status\n"
	     "  npulaunch status deepseek-v4-flash-w8a8-1p1d-16p-in8k-out1k-50ms --prefill-ip 10.0.0.11 --decode-ip 10.0.0.12");
}

/* The bound of each request: a millisecond at least, an hour at most. */
static const struct npl_number_spec request_seconds = {"a number of seconds", 0.001, 3600, 0};

/* What the command line asks of status. */
struct status_opts {
	struct npl_cli_recipe_opts ro;
	const char *arg, *root;
	int json, help, affinity;
	double timeout;
};

/* The options; 0 or an exit code (0 with o->help set after --help). */
static int parse_args(int argc, char **argv, struct npl_cli *cli, struct status_opts *o)
{
	static const struct option own[] = {
		{"timeout", required_argument, NULL, 't'},
		{"json", no_argument, NULL, 'j'},
		{"affinity", no_argument, NULL, 'A'},
		{"root", required_argument, NULL, 'R'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct option *opts = npl_cli_options(own);
	int c, rc = NPL_EXIT_OK;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			if ((rc = npl_cli_number("status", "--timeout", optarg, &request_seconds, &o->timeout)))
				goto out;
			break;
		case 'j': o->json = 1; break;
		case 'A': o->affinity = 1; break;
		case 'R': o->root = optarg; break;
		case 'h': help(); o->help = 1; goto out;
		case ':': rc = npl_cli_usage_error("status", "option '%s' needs a value", argv[optind - 1]); goto out;
		case '?': rc = npl_cli_usage_error("status", "unknown option '%s'", argv[optind - 1]); goto out;
		default:
			if (c >= NPL_OPT_SET || npl_cli_recipe_opt(cli, &o->ro, c, optarg) <= 0) {
				rc = c >= NPL_OPT_SET ? npl_cli_usage_error("status", "option '%s' does not apply to status", argv[optind - 1])
						      : NPL_EXIT_USAGE;
				goto out;
			}
		}
	}
	if (optind + 1 < argc) {
		rc = npl_cli_usage_error("status", "unexpected argument '%s'", argv[optind + 1]);
		goto out;
	}
	o->arg = optind < argc ? argv[optind] : NULL;
	if (o->root && !o->affinity) {
		rc = npl_cli_usage_error("status", "--root goes with --affinity");
	} else if (o->affinity) {
		int from_env = !o->root;

		if (from_env)
			o->root = getenv("NPULAUNCH_ROOT");
		rc = npl_cli_root("status", &o->root, from_env);
	}
out:
	free(opts);
	return rc;
}

/* Whether there is anything to probe, and every endpoint's URL is known (each one that is not
 * is named). 0 or NPL_EXIT_USAGE. */
static int endpoints_known(struct npl_cli *cli, const struct npl_endpoint *eps, int n)
{
	int i, rc = NPL_EXIT_OK;

	/* all of nothing is up, but a gate like `status && ...` must not pass on it */
	if (!n) {
		fprintf(stderr, "npulaunch: status: the deployment has no server or router endpoint to probe\n");
		return NPL_EXIT_USAGE;
	}
	for (i = 0; i < n; i++)
		if (eps[i].refused) {
			fprintf(stderr, "npulaunch: status: the %s endpoint %s (refused: no request is sent)\n",
				npl_escape_in(&cli->arena, eps[i].role), eps[i].refused);
			rc = NPL_EXIT_USAGE;
		} else if (!eps[i].url) {
			fprintf(stderr, "npulaunch: status: the %s endpoint needs --%s\n",
				npl_escape_in(&cli->arena, eps[i].role), eps[i].missing);
			rc = NPL_EXIT_USAGE;
		}
	return rc;
}

/* One endpoint's state as JSON: {role, instance, url, up, code, latency_ms, model, error}. */
static cJSON *endpoint_json(const struct npl_endpoint *ep, const char *url, const struct npl_probe_result *r)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "role", ep->role);
	if (ep->instance >= 0)
		cJSON_AddNumberToObject(o, "instance", ep->instance);
	else
		cJSON_AddNullToObject(o, "instance");
	cJSON_AddStringToObject(o, "url", url);
	cJSON_AddBoolToObject(o, "up", r->up);
	cJSON_AddNumberToObject(o, "code", (double)r->code);
	if (r->code)
		cJSON_AddNumberToObject(o, "latency_ms", r->latency_ms);
	else
		cJSON_AddNullToObject(o, "latency_ms");
	if (r->model)
		cJSON_AddStringToObject(o, "model", r->model);
	else
		cJSON_AddNullToObject(o, "model");
	if (r->up)
		cJSON_AddNullToObject(o, "error");
	else
		cJSON_AddStringToObject(o, "error", r->error);
	return o;
}

/* The endpoints' states as a table, the ROLE and URL columns as wide as their widest cell; the
 * manifest's and the server's text escaped for the terminal. */
static void print_table(struct npl_cli *cli, const struct npl_endpoint *eps, const char *const *shown,
			const struct npl_probe_result *res, int n)
{
	const char *green = cli->color ? "\033[32m" : "", *red = cli->color ? "\033[31m" : "",
		   *off = cli->color ? "\033[0m" : "";
	size_t wu = 3, wr = 4;
	int i;

	for (i = 0; i < n; i++) {
		if (strlen(npl_escape_in(&cli->arena, shown[i])) > wu)
			wu = strlen(npl_escape_in(&cli->arena, shown[i]));
		if (strlen(npl_escape_in(&cli->arena, eps[i].role)) > wr)
			wr = strlen(npl_escape_in(&cli->arena, eps[i].role));
	}
	printf("%-*s  %-8s  %-*s  %-5s  %-9s  %s\n", (int)wr, "ROLE", "INSTANCE", (int)wu, "URL",
	       "STATE", "LATENCY", "MODEL");
	for (i = 0; i < n; i++) {
		char inst[16], lat[32];

		snprintf(inst, sizeof(inst), eps[i].instance >= 0 ? "%d" : "-", eps[i].instance);
		if (res[i].code)
			snprintf(lat, sizeof(lat), "%.1fms", res[i].latency_ms);
		else
			snprintf(lat, sizeof(lat), "-");
		printf("%-*s  %-8s  %-*s  %s%-5s%s  %-9s  %s%s%s\n", (int)wr,
		       npl_escape_in(&cli->arena, eps[i].role), inst, (int)wu,
		       npl_escape_in(&cli->arena, shown[i]), res[i].up ? green : red,
		       res[i].up ? "up" : "down", off, lat, res[i].up ? "" : "(",
		       npl_escape_in(&cli->arena, res[i].up ? (res[i].model ? res[i].model : "?") : res[i].error),
		       res[i].up ? "" : ")");
	}
}

int npl_cmd_status(int argc, char **argv, struct npl_cli *cli)
{
	struct status_opts o;
	struct npl_endpoint *eps;
	struct npl_probe_result *res = NULL;
	const char **shown = NULL;
	cJSON *plan = NULL;
	char herr[256];
	int rc, n = 0, i, down = 0;

	memset(&o, 0, sizeof(o));
	o.timeout = 2;
	if ((rc = parse_args(argc, argv, cli, &o)) || o.help)
		goto out;
	if ((rc = npl_cli_site(cli, &o.ro)))
		goto out;
	if (!(plan = npl_cli_plan(cli, o.arg, &o.ro, &rc)))
		goto out;
	if (o.affinity) {
		rc = npl_cli_status_affinity(cli, plan, o.root, o.json);
		goto out;
	}
	n = npl_cli_endpoints(cli, plan, 1, &eps);
	if ((rc = endpoints_known(cli, eps, n)))
		goto out;
	if (npl_health_init(herr, sizeof(herr))) {
		fprintf(stderr, "npulaunch: status: %s\n", herr);
		rc = NPL_EXIT_FAIL;
		goto out;
	}
	res = npl_xcalloc((size_t)n + 1, sizeof(*res));
	shown = npl_arena_calloc(&cli->arena, (size_t)n + 1, sizeof(*shown));
	for (i = 0; i < n; i++) {
		char buf[1024];

		/* a URL's credentials are never printed */
		shown[i] = npl_arena_strdup(&cli->arena, npl_url_redacted(eps[i].url, buf, sizeof(buf)));
		npl_probe_once(eps[i].url, NPL_PROBE_HEALTH, (long)(o.timeout * 1000), &res[i]);
		if (res[i].up)
			res[i].model = npl_served_model(eps[i].url, (long)(o.timeout * 1000));
		down += !res[i].up;
	}
	if (o.json) {
		cJSON *a = cJSON_CreateArray();
		char *s;

		for (i = 0; i < n; i++)
			cJSON_AddItemToArray(a, endpoint_json(&eps[i], shown[i], &res[i]));
		s = cJSON_Print(a);
		npl_cli_puts_json(s);
		cJSON_free(s);
		cJSON_Delete(a);
	} else {
		print_table(cli, eps, shown, res, n);
	}
	if (down) {
		fprintf(stderr, "npulaunch: status: %d of %d endpoint%s down\n", down, n, n == 1 ? "" : "s");
		rc = NPL_EXIT_FAIL;
	}
out:
	for (i = 0; res && i < n; i++)
		npl_probe_release(&res[i]);
	free(res);
	cJSON_Delete(plan);
	npl_cli_recipe_opts_release(&o.ro);
	return rc;
}
