/* cmd_show.c: `npulaunch show`: the plan of a recipe, for people or as JSON. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/affinity.h"
#include "npulaunch/cli.h"
#include "npulaunch/launch.h"
#include "npulaunch/text.h"

static void help(void)
{
	puts("usage: npulaunch show ID|QUERY [site values] [overrides] [--explain] [--json]\n"
	     "\n"
	     "Show what a recipe deploys: per role and node the host tuning, the variables\n"
	     "unset, the files sourced, the environment and the launch command.\n"
	     "\n"
	     "Options:\n"
	     "  --explain   say for every flag and variable which layer or rule set it; on an\n"
	     "              NPU node (npu-smi, under $NPULAUNCH_ROOT), each die's CPUs, NUMA node\n"
	     "              and interrupts from its topology, as tune's dry run prints them\n"
	     "  --json      the plan itself (what render stores as manifest.json)\n"
	     "  query       MODEL with --tpot T --ttft T --e2e T --dataset IN+OUT --prefix-cache PCT\n"
	     "              --cards N --mode M --hardware H [--nearest] instead of an id (see render\n"
	     "              --help)\n"
	     "  site values --model-path P  --draft-model-path P  --ifname NAME  --node-ip IP...\n"
	     "              --prefill-ip IP...  --decode-ip IP...  --site FILE\n"
	     "  overrides   --set [ROLE:]FLAG[=VALUE]  --unset [ROLE:]FLAG  --env [ROLE:]K=V\n"
	     "              --unset-env [ROLE:]K  --force\n"
	     "  -h, --help  this help\n"
	     "\n"
	     "Examples:\n"
	     "  npulaunch show kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms --explain\n"
	     "  npulaunch show qwen3.5-397b-a17b --tpot 50ms --dataset 8k+1k\n"
	     "  npulaunch show deepseek-v4-flash-w8a8-1p1d-16p-in8k-out1k-50ms --json");
}

/* An origin as one short phrase: "recipe recipes/x.yaml:12:5", "rule tp-size: ...". */
static void origin_text(struct npl_buf *b, const cJSON *o)
{
	const char *layer = npl_json_str(o, "layer"), *at = npl_json_str(o, "at");

	if (!layer)
		return;
	npl_buf_puts(b, layer);
	if (!strcmp(layer, "rule")) {
		npl_buf_printf(b, " %s", npl_json_str(o, "rule"));
		if (npl_json_str(o, "why"))
			npl_buf_printf(b, ": %s", npl_json_str(o, "why"));
		return;
	}
	if (!strcmp(layer, "override")) {
		npl_buf_printf(b, " %s", npl_json_str(o, "option"));
		return;
	}
	if (!strcmp(layer, "site")) {
		npl_buf_printf(b, " --%s", npl_json_str(o, "key"));
		if (npl_json_str(o, "why"))
			npl_buf_printf(b, " (%s)", npl_json_str(o, "why"));
		return;
	}
	if (npl_json_str(o, "id") && strcmp(layer, "recipe") && strcmp(layer, "defaults"))
		npl_buf_printf(b, " %s", npl_json_str(o, "id"));
	if (at)
		npl_buf_printf(b, " %s", at);
}

/* printf for the plan's human form: a plan holds text from recipes and site files, escaped
 * for the terminal (the format strings have no controls but newlines) */
static void pr(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void pr(const char *fmt, ...)
{
	struct npl_buf b = NPL_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	npl_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	npl_print_text(stdout, npl_buf_str(&b));
	npl_buf_release(&b);
}

struct out {
	struct npl_site site;
	const cJSON *plan;
	int explain;
	const char *root;   /* with explain: NPULAUNCH_ROOT, checked; NULL for / */
	struct npl_smi_answers *smi;   /* with explain: npu-smi asked once for every role */
	struct npl_arena *a;
};

static void line_with_origin(const struct out *o, const char *lead, const char *text, const cJSON *origin)
{
	if (!o->explain || !origin) {
		pr("%s%s\n", lead, text);
		return;
	}
	{
		struct npl_buf b = NPL_BUF_INIT;
		int w = (int)(strlen(lead) + strlen(text));

		origin_text(&b, origin);
		pr("%s%s%*s  # %s\n", lead, text, w < 64 ? 64 - w : 0, "", npl_buf_str(&b));
		npl_buf_release(&b);
	}
}

/* The targets line: TPOT and TTFT always ("-" for none), an end-to-end target and a throughput
 * floor where there is one. */
static void show_targets(const cJSON *r)
{
	pr("  targets       TPOT %s, TTFT %s", npl_json_str(r, "tpot") ? npl_json_str(r, "tpot") : "-",
	   npl_json_str(r, "ttft") ? npl_json_str(r, "ttft") : "-");
	if (npl_json_str(r, "e2e"))
		pr(", E2E %s", npl_json_str(r, "e2e"));
	if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(r, "throughput")))
		pr(", output throughput >= %g tok/s", cJSON_GetObjectItemCaseSensitive(r, "throughput")->valuedouble);
	pr("\n");
}

static void show_recipe(const cJSON *plan, const struct out *o)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(plan, "recipe"), *role, *need;
	const char *sep;

	pr("%s\n", npl_json_str(r, "id"));
	pr("  title         %s\n", npl_json_str(r, "title"));
	pr("  model         %s (%s)\n", npl_json_str(r, "model_name"), npl_json_str(r, "model"));
	pr("  hardware      %s (%s): %d dies per card, %d cards per node\n",
	       npl_json_str(r, "hardware_name"), npl_json_str(r, "hardware"),
	       npl_json_int(r, "dies_per_card", 0), npl_json_int(r, "cards_per_node", 0));
	pr("  deployment    %s, %d cards", npl_json_str(r, "mode"), npl_json_int(r, "cards", 0));
	sep = ": ";
	cJSON_ArrayForEach(role, cJSON_GetObjectItemCaseSensitive(plan, "roles")) {
		if (strcmp(npl_json_str(role, "program"), "server"))
			continue;
		pr("%s%s %d x %d cards (tp-size %d, %d node%s each)", sep, npl_json_str(role, "role"),
		       npl_json_int(role, "instances", 0), npl_json_int(role, "cards_per_instance", 0),
		       npl_json_int(role, "tp_size", 0), npl_json_int(role, "nodes_per_instance", 0),
		       npl_json_int(role, "nodes_per_instance", 0) == 1 ? "" : "s");
		sep = "; ";
	}
	pr("\n  dataset       %s\n", npl_json_str(r, "dataset"));
	show_targets(r);
	pr("  quantization  %s\n", npl_json_str(r, "quantization"));
	if (npl_json_str(r, "tier"))
		pr("  tier          %s\n", npl_json_str(r, "tier"));
	if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(r, "sglang_version"))) {
		const cJSON *sg = cJSON_GetObjectItemCaseSensitive(r, "sglang_version");

		pr("  sglang        %s (the %s's, %s; preflight checks it)\n", npl_json_str(sg, "floor"),
		   npl_json_str(sg, "layer"), npl_json_str(sg, "at"));
	}
	{
		const cJSON *sel = cJSON_GetObjectItemCaseSensitive(plan, "selection");
		const char *by = npl_json_str(sel, "by");

		if (by && strcmp(by, "id"))
			pr("  chosen        %s%s: %s\n", !strcmp(by, "nearest") ? "as the nearest to " : "by ",
			       npl_json_str(sel, "query"), npl_json_str(sel, "why"));
	}
	pr("  recipe file   %s\n", npl_json_str(r, "file"));
	pr("  site values  ");
	cJSON_ArrayForEach(need, cJSON_GetObjectItemCaseSensitive(plan, "needs")) {
		const char *key = npl_json_str(need, "key");
		int k = npl_site_key_from_name(key), i;
		const struct npl_site_value *v = &o->site.key[k];

		pr(" --%s", key);
		if (!v->n) {
			pr(" (not given)");
		} else {
			for (i = 0; i < v->n; i++)
				pr(" %s", v->v[i]);
		}
		pr(";");
	}
	pr("\n");
	if (npl_json_str(r, "notes"))
		pr("  notes         %s\n", npl_json_str(r, "notes"));
	{
		const cJSON *dv;

		cJSON_ArrayForEach(dv, cJSON_GetObjectItemCaseSensitive(r, "deviations"))
			pr("  deviation     %s: %s (%s)\n", npl_json_str(dv, "what"), npl_json_str(dv, "why"),
			       npl_json_str(dv, "at"));
	}
}

/* The role's affinity policy and who binds its servers: npulaunch or SGLang (affinity.h's rule) */
/* --explain on a node (npu-smi lists its dies; under NPULAUNCH_ROOT as apply reads it): the sets
 * each die of the role's first node gets from this host's topology, as tune --dry-run prints
 * them. Nothing where the topology cannot be read (a machine without NPUs). */
static void show_sets(const cJSON *role, const cJSON *pol, const struct out *o)
{
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_affinity *af;
	int ids[256], n = npl_plan_node_devices(role, 0, ids, 256);
	char *text = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *fp;

	if (n <= 0)
		return;
	af = npl_xcalloc(1, sizeof(*af));
	if (npl_launch_affinity_devices(af, pol, o->plan, o->root, 10, ids, n, o->smi, o->a, &d) == 0 || af->unmet) {
		if ((fp = open_memstream(&text, &len))) {
			if (af->unmet && d.n)
				fprintf(fp, "on this host: %s\n", d.v[0].msg);
			else
				npl_affinity_print(af, fp);
			fclose(fp);
		}
		for (line = text ? strtok_r(text, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save))
			pr("            %s\n", line);
		free(text);
	}
	npl_affinity_release(af);
	npl_diag_release(&d);
	free(af);
}

static void show_affinity(const cJSON *role, const struct out *o, struct npl_buf *b)
{
	const cJSON *pol, *p;
	const char *why;

	if (strcmp(npl_json_str(role, "program") ? npl_json_str(role, "program") : "", "server"))
		return;
	why = npl_affinity_owner(role, 0, &pol);
	if (!(p = cJSON_GetObjectItemCaseSensitive(pol, "policy")))
		return;
	npl_buf_reset(b);
	npl_buf_printf(b, "affinity %s, at least %d CPUs per die%s: ", npl_json_str(p, "value"),
		       npl_json_int(cJSON_GetObjectItemCaseSensitive(pol, "min_cpus_per_die"), "value", 1),
		       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pol, "irqs"), "value"))
			       ? ", its queue interrupts on its first two"
			       : "");
	if (why)
		npl_buf_printf(b, "npulaunch binds nothing (%s)", why);
	else
		npl_buf_printf(b, "apply and the scripts bind each server to its dies' CPUs and NUMA nodes, from the node's "
				  "topology%s",
			       !strcmp(npl_json_str(p, "value") ? npl_json_str(p, "value") : "", "numa-local")
				       ? ", and each rank to its die's node (SGLang's --numa-node, where the node's SGLang has it)"
				       : "");
	line_with_origin(o, "  tune    ", npl_buf_str(b), cJSON_GetObjectItemCaseSensitive(p, "origin"));
	if (o->explain && !why)
		show_sets(role, pol, o);
}

static void show_role(const cJSON *role, const struct out *o)
{
	const cJSON *it, *node, *tuning = cJSON_GetObjectItemCaseSensitive(role, "tuning");
	struct npl_buf b = NPL_BUF_INIT;
	int nnodes = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(role, "nodes"));
	const char *list = npl_json_str(role, "node_list");

	pr("\n%s", npl_json_str(role, "script"));
	if (list)
		pr("  (%d node%s from --%s)", nnodes, nnodes == 1 ? "" : "s", list);
	else if (!strcmp(npl_json_str(role, "program"), "server"))
		pr("  (one node)");
	else
		pr("  (where the entry point listens)");
	pr("\n");
	if (tuning) {
		const cJSON *g = cJSON_GetObjectItemCaseSensitive(tuning, "cpu_governor");

		if (cJSON_IsObject(g)) {
			npl_buf_reset(&b);
			npl_buf_printf(&b, "cpu governor %s", npl_json_str(g, "value"));
			line_with_origin(o, "  tune    ", npl_buf_str(&b), cJSON_GetObjectItemCaseSensitive(g, "origin"));
		}
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(tuning, "sysctl")) {
			npl_buf_reset(&b);
			npl_buf_printf(&b, "%s=", npl_json_str(it, "name"));
			npl_pval_display(&b, npl_json_str(it, "value"), NULL);
			line_with_origin(o, "  tune    ", npl_buf_str(&b), cJSON_GetObjectItemCaseSensitive(it, "origin"));
		}
		show_affinity(role, o, &b);
	}
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(role, "unset"))
		line_with_origin(o, "  unset   ", npl_json_str(it, "name"), cJSON_GetObjectItemCaseSensitive(it, "origin"));
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(role, "source")) {
		npl_buf_reset(&b);
		npl_pval_display(&b, npl_json_str(it, "path"), NULL);
		line_with_origin(o, "  source  ", npl_buf_str(&b), cJSON_GetObjectItemCaseSensitive(it, "origin"));
	}
	cJSON_ArrayForEach(node, cJSON_GetObjectItemCaseSensitive(role, "nodes")) {
		const char *addr = npl_json_str(node, "address");
		const cJSON *lv;

		if (npl_json_str(node, "name"))
			/* one of several benchmarks, run in turn: the last by exec */
			pr("  benchmark %s%s\n", npl_json_str(node, "name"),
			   node->next ? " (run to its end, then the next)" : " (the last)");
		if (list) {
			npl_buf_reset(&b);
			npl_pval_display(&b, addr, &o->site);
			pr("  node %d at %s (instance %d, rank %d)\n", npl_json_int(node, "index", 0),
			       npl_buf_str(&b), npl_json_int(node, "instance", 0), npl_json_int(node, "rank", 0));
		}
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(node, "env")) {
			npl_buf_reset(&b);
			npl_plan_env_display(&b, it, &o->site);
			line_with_origin(o, list ? "    env     " : "  env     ", npl_buf_str(&b),
					 cJSON_GetObjectItemCaseSensitive(it, "origin"));
		}
		npl_buf_reset(&b);
		cJSON_ArrayForEach(lv, cJSON_GetObjectItemCaseSensitive(node, "launch")) {
			if (b.len)
				npl_buf_putc(&b, ' ');
			npl_pval_display(&b, lv->valuestring, &o->site);
		}
		pr("%s%s\n", list ? "    exec    " : "  exec    ", npl_buf_str(&b));
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(node, "flags")) {
			npl_buf_reset(&b);
			npl_buf_puts(&b, npl_json_str(it, "flag"));
			cJSON_ArrayForEach(lv, cJSON_GetObjectItemCaseSensitive(it, "values")) {
				npl_buf_putc(&b, ' ');
				npl_pval_display(&b, lv->valuestring, &o->site);
			}
			line_with_origin(o, list ? "              " : "            ", npl_buf_str(&b),
					 cJSON_GetObjectItemCaseSensitive(it, "origin"));
		}
	}
	npl_buf_release(&b);
}

int npl_cmd_show(int argc, char **argv, struct npl_cli *cli)
{
	static const struct option own[] = {
		{"json", no_argument, NULL, 'j'},
		{"explain", no_argument, NULL, 'e'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct option *opts = npl_cli_options(own);
	struct npl_cli_recipe_opts ro;
	struct npl_db db;
	const struct npl_layer *R;
	cJSON *sel = NULL;
	cJSON *plan = NULL;
	int json = 0, c, rc = NPL_EXIT_OK;
	struct out o;
	struct npl_smi_answers smi = {0};

	memset(&ro, 0, sizeof(ro));
	memset(&o, 0, sizeof(o));
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		int r;

		switch (c) {
		case 'j': json = 1; break;
		case 'e': o.explain = 1; break;
		case 'h': help(); goto out;
		case ':': rc = npl_cli_usage_error("show", "option '%s' needs a value", argv[optind - 1]); goto out;
		case '?': rc = npl_cli_usage_error("show", "unknown option '%s'", argv[optind - 1]); goto out;
		default:
			r = npl_cli_recipe_opt(cli, &ro, c, optarg);
			if (r <= 0) {
				rc = NPL_EXIT_USAGE;
				goto out;
			}
		}
	}
	if (optind >= argc) {
		rc = npl_cli_usage_error("show", "which recipe? give an id or a model with a query");
		goto out;
	}
	if (optind + 1 < argc) {
		rc = npl_cli_usage_error("show", "unexpected argument '%s'", argv[optind + 1]);
		goto out;
	}
	/* --explain reads the node's topology under it, as apply does */
	o.root = o.explain ? getenv("NPULAUNCH_ROOT") : NULL;
	if ((rc = npl_cli_root("show", &o.root, 1)) || (rc = npl_cli_site(cli, &ro)) ||
	    (rc = npl_cli_open_db_for(cli, &db, argv[optind])))
		goto out;
	R = npl_cli_pick(cli, &db, argv[optind], &ro, &sel, &rc);
	if (!R)
		goto out;
	plan = npl_cli_resolve(cli, &db, R, &ro, sel, &rc);
	if (!plan)
		goto out;
	if (json) {
		char *s = cJSON_Print(plan);

		npl_cli_puts_json(s);
		cJSON_free(s);
	} else {
		const cJSON *role;

		npl_plan_site(plan, &o.site, &cli->arena);
		o.plan = plan;
		o.a = &cli->arena;
		o.smi = &smi;
		show_recipe(plan, &o);
		cJSON_ArrayForEach(role, cJSON_GetObjectItemCaseSensitive(plan, "roles"))
			show_role(role, &o);
	}
out:
	cJSON_Delete(plan);
	free(opts);
	npl_cli_recipe_opts_release(&ro);
	return rc;
}
