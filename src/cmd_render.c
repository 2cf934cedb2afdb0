/* cmd_render.c: `npulaunch render`: the launch scripts and manifest of a recipe, or of all. */
#include <stdlib.h>
#include <string.h>

#include "npulaunch/cli.h"
#include "npulaunch/output.h"
#include "npulaunch/render.h"
#include "npulaunch/target.h"
#include "npulaunch/util.h"

static int render_scripts(const cJSON *plan, struct npl_templates *t, const char *dir,
			  const struct npl_target_opts *o, struct npl_outset *set, struct npl_diag *d)
{
	(void)o;
	return npl_render_bundle(plan, t, dir, set, d);
}

/* The outputs: the role scripts alone, or with what runs them on an engine (target.h). */
static const struct target {
	const char *name;
	int (*check)(const cJSON *plan, const struct npl_target_opts *o, struct npl_diag *d);
	int (*render)(const cJSON *plan, struct npl_templates *t, const char *dir,
		      const struct npl_target_opts *o, struct npl_outset *set, struct npl_diag *d);
	int allocates;   /* the engine gives the nodes and their addresses */
	int bench;       /* takes --bench */
} targets[] = {
	{"scripts", NULL, render_scripts, 0, 0},
	{"slurm", npl_target_slurm_check, npl_target_slurm, 1, 1},
};

/* Site values of a target (no script variable holds them) are render's own flags. */
enum { OPT_TARGET_SITE = 3000 };

/* The site values that contradict the target: another target's flags (a site file may hold
 * every target's values), addresses for a target whose engine allocates the nodes. */
static int target_site_ok(const struct target *tg, const struct npl_site *flags, const struct npl_site *all)
{
	size_t n = strlen(tg->name), i;
	int k;

	for (k = 0; k < NPL_SITE_COUNT; k++) {
		const char *key = npl_site_key_name(k);

		if (!npl_site_var(k) && flags->key[k].n && (strncmp(key, tg->name, n) || key[n] != '-')) {
			for (i = 0; i < NPL_ARRAY_SIZE(targets); i++)
				if (!strncmp(key, targets[i].name, strlen(targets[i].name)) &&
				    key[strlen(targets[i].name)] == '-')
					break;
			return npl_cli_usage_error("render", "--%s is a value of --target %s", key,
						   i < NPL_ARRAY_SIZE(targets) ? targets[i].name : "?");
		}
		if (tg->allocates && npl_site_is_list(k) && all->key[k].n)
			return npl_cli_usage_error("render", "--%s: --target %s takes the nodes and their addresses from the allocation; drop it",
						   key, tg->name);
	}
	return 0;
}

static void help(void)
{
	puts("usage: npulaunch render ID|QUERY [site values] [overrides] [-o DIR] [--check]\n"
	     "                        [--target scripts|slurm [--bench] [slurm values]]\n"
	     "       npulaunch render --all [site values] -o DIR [--check]\n"
	     "\n"
	     "Write one self-contained launch script per role (pd-mixed.sh, or prefill.sh,\n"
	     "decode.sh and router.sh), bench.sh and manifest.json (the plan). Without -o the\n"
	     "files go to standard output, each under a line '==> NAME <=='. A site value not\n"
	     "given stays a variable at the top of the scripts, which refuse to start until\n"
	     "it is set.\n"
	     "\n"
	     "Options:\n"
	     "  -o, --output DIR  write the files into DIR (created if needed), atomically\n"
	     "  --all             every recipe, each into DIR/ID/\n"
	     "  --check           write nothing; exit 1 listing stale, missing and extra files\n"
	     "  --templates DIR   templates from DIR instead of the compiled-in ones\n"
	     "  --target NAME     scripts (the default), or slurm: also slurm.sbatch, one batch\n"
	     "                    job for the deployment (sbatch it in the bundle), and the\n"
	     "                    slurm-step.sh its steps run; the nodes and their addresses\n"
	     "                    come from the allocation (docs/slurm.md)\n"
	     "  --bench           (slurm) the job runs the benchmark once the entry point\n"
	     "                    answers, then npulaunch verify; it ends with the verdict\n"
	     "  slurm values      --slurm-partition P  --slurm-account A  --slurm-time LIMIT\n"
	     "                    --slurm-gres NAME (--gres=NAME:cards per node)\n"
	     "                    --slurm-log-dir DIR (default: the bundle's logs/)\n"
	     "                    --slurm-router-node NODE (default: the first node)\n"
	     "                    --slurm-npulaunch PATH (npulaunch on the nodes: the steps\n"
	     "                    run npulaunch apply instead of the role scripts)\n"
	     "  query             MODEL instead of an id, with --tpot T and --ttft T (budgets: the\n"
	     "                    largest target within wins), --dataset IN+OUT (the smallest that\n"
	     "                    covers wins; 64k+1k, 1024x1024 (30)+1024, 1080p_30+256),\n"
	     "                    --prefix-cache PCT, --cards N (available; the most used wins),\n"
	     "                    --mode pd-mixed|pd-disagg, --hardware H; --nearest takes the\n"
	     "                    nearest when nothing qualifies. Exit 4 when several tie (each\n"
	     "                    listed with the option that selects it), 3 when none qualifies.\n"
	     "  site values       --model-path P  --draft-model-path P  --ifname NAME\n"
	     "                    --node-ip IP (once per node, rank order)  --prefill-ip IP...\n"
	     "                    --decode-ip IP...  --site FILE (YAML with the same keys; flags win)\n"
	     "  overrides         --set [ROLE:]FLAG[=VALUE]  --unset [ROLE:]FLAG  --env [ROLE:]K=V\n"
	     "                    --unset-env [ROLE:]K  --force\n"
	     "  --allow-unknown-flag  let through a flag SGLang's registry does not know (a warning)\n"
	     "  -h, --help        this help\n"
	     "\n"
	     "Examples:\n"
	     "  npulaunch render kimi-k2.6 --tpot 20ms -o deploy/\n"
	     "  npulaunch render kimi-k2.6-w4a8-8p-in3k5-out1k5-20ms --model-path /models/kimi \\\n"
	     "      --draft-model-path /models/kimi-eagle3 --ifname eth0 -o deploy/\n"
	     "  npulaunch render --all -o deploy/ --check     # in CI: the scripts are current\n"
	     "  npulaunch render kimi-k2.6 --tpot 50ms --target slurm --slurm-gres npu -o job/");
}

static const char *missing_list(struct npl_arena *a, const cJSON *plan, int allocated)
{
	const cJSON *need, *site = cJSON_GetObjectItemCaseSensitive(plan, "site");
	const char *s = NULL;

	cJSON_ArrayForEach(need, cJSON_GetObjectItemCaseSensitive(plan, "needs")) {
		const char *key = npl_json_str(need, "key");

		if (cJSON_GetObjectItemCaseSensitive(site, key) ||
		    (allocated && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(need, "list"))))
			continue;
		s = s ? npl_arena_printf(a, "%s, --%s (%s)", s, key, npl_json_str(need, "var"))
		      : npl_arena_printf(a, "--%s (%s)", key, npl_json_str(need, "var"));
	}
	return s;
}

static int render_all(struct npl_cli *cli, const struct npl_db *db, struct npl_cli_recipe_opts *ro,
		      struct npl_templates *t, struct npl_outset *set, const char *dir,
		      const struct target *tg, const struct npl_target_opts *to)
{
	int i, rc = 0;

	for (i = 0; i < db->nrecipes; i++) {
		struct npl_resolve_opts o = {&ro->site, ro->ov, ro->nov, ro->force};
		struct npl_site site = ro->site;
		const struct npl_layer *R = db->recipes[i];
		cJSON *plan;
		char *sub;

		/* addresses apply to the recipes of the matching shape only */
		if (R->mode == NPL_MODE_PD_DISAGG)
			site.key[NPL_SITE_NODE_IP].n = 0;
		else
			site.key[NPL_SITE_PREFILL_IP].n = site.key[NPL_SITE_DECODE_IP].n = 0;
		if (R->mode == NPL_MODE_PD_MIXED && R->cards <= R->hardware->cards_per_node.v)
			site.key[NPL_SITE_NODE_IP].n = 0;
		o.site = &site;
		plan = npl_resolve(db, R, &o, &cli->diag);
		if (!plan || npl_cli_check(cli, db, plan, R, ro->allow_unknown) ||
		    (tg->check && tg->check(plan, to, &cli->diag))) {
			cJSON_Delete(plan);
			rc = -1;
			continue;
		}
		sub = npl_arena_printf(&cli->arena, "%s/%s", dir, R->id);
		if (tg->render(plan, t, dir ? sub : R->id, to, set, &cli->diag))
			rc = -1;
		cJSON_Delete(plan);
	}
	return rc;
}

int npl_cmd_render(int argc, char **argv, struct npl_cli *cli)
{
	static const struct option own[] = {
		{"output", required_argument, NULL, 'o'},
		{"all", no_argument, NULL, 'a'},
		{"check", no_argument, NULL, 'c'},
		{"templates", required_argument, NULL, 't'},
		{"target", required_argument, NULL, 'T'},
		{"bench", no_argument, NULL, 'b'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct option mine[NPL_ARRAY_SIZE(own) + NPL_SITE_COUNT], *opts;
	const struct target *tg = &targets[0];
	struct npl_target_opts to = {0, 0};
	const char *target = NULL;
	static const struct npl_site none;
	struct npl_cli_recipe_opts ro;
	struct npl_templates t = {cli->templates_dir, NULL, NULL, 0, 0};
	struct npl_outset set = {0};
	struct npl_db db;
	const char *dir = NULL;
	int all = 0, check = 0, c, rc = NPL_EXIT_OK, i;

	memset(&ro, 0, sizeof(ro));
	ro.check = 1;
	{
		size_t n = NPL_ARRAY_SIZE(own) - 1;

		memcpy(mine, own, n * sizeof(*own));
		for (i = 0; i < NPL_SITE_COUNT; i++)
			if (!npl_site_var(i))
				mine[n++] = (struct option){npl_site_key_name(i), required_argument, NULL, OPT_TARGET_SITE + i};
		mine[n] = own[NPL_ARRAY_SIZE(own) - 1];
		opts = npl_cli_options(mine);
	}
	while ((c = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
		int r;

		if (c >= OPT_TARGET_SITE && c < OPT_TARGET_SITE + NPL_SITE_COUNT) {
			if (npl_site_set(&ro.site, &cli->arena, c - OPT_TARGET_SITE, optarg, NULL, &cli->diag)) {
				npl_cli_flush(cli);
				rc = NPL_EXIT_USAGE;
				goto out;
			}
			continue;
		}
		switch (c) {
		case 'o': dir = optarg; break;
		case 'a': all = 1; break;
		case 'c': check = 1; break;
		case 't': t.dir = optarg; break;
		case 'T': target = optarg; break;
		case 'b': to.bench = 1; break;
		case 'h': help(); goto out;
		case ':': rc = npl_cli_usage_error("render", "option '%s' needs a value", argv[optind - 1]); goto out;
		case '?': rc = npl_cli_usage_error("render", "unknown option '%s'", argv[optind - 1]); goto out;
		default:
			r = npl_cli_recipe_opt(cli, &ro, c, optarg);
			if (r <= 0) {
				rc = NPL_EXIT_USAGE;
				goto out;
			}
		}
	}
	if (all && optind < argc) {
		rc = npl_cli_usage_error("render", "--all renders every recipe: drop '%s'", argv[optind]);
		goto out;
	}
	if (!all && optind >= argc) {
		rc = npl_cli_usage_error("render", "which recipe? give an id, a model with a query, or --all");
		goto out;
	}
	if (!all && optind + 1 < argc) {
		rc = npl_cli_usage_error("render", "unexpected argument '%s'", argv[optind + 1]);
		goto out;
	}
	if (target) {
		for (tg = NULL, i = 0; i < (int)NPL_ARRAY_SIZE(targets) && !tg; i++)
			if (!strcmp(targets[i].name, target))
				tg = &targets[i];
		if (!tg) {
			rc = npl_cli_usage_error("render", "unknown target '%s' (scripts, slurm)", target);
			goto out;
		}
	}
	if (to.bench && !tg->bench) {
		rc = npl_cli_usage_error("render", "--bench is for a job that runs the deployment: give --target slurm");
		goto out;
	}
	if ((rc = target_site_ok(tg, &ro.site, &ro.site)))
		goto out;
	to.all = all;
	if (check && !dir) {
		rc = npl_cli_usage_error("render", "--check compares with a folder: give -o DIR");
		goto out;
	}
	if (all && npl_cli_has_query(&ro)) {
		rc = npl_cli_usage_error("render", "--all takes no query options");
		goto out;
	}
	if (dir) {
		/* "deploy/" and "deploy" name the same folder */
		char *d = npl_arena_strdup(&cli->arena, dir);
		size_t n = strlen(d);

		while (n > 1 && d[n - 1] == '/')
			d[--n] = '\0';
		dir = d;
	}
	/* the site file's addresses too */
	if ((rc = npl_cli_site(cli, &ro)) || (rc = target_site_ok(tg, &none, &ro.site)) ||
	    (rc = npl_cli_open_db(cli, &db)))
		goto out;
	if (all) {
		if (render_all(cli, &db, &ro, &t, &set, dir, tg, &to)) {
			npl_cli_flush(cli);
			rc = NPL_EXIT_INVALID;
			goto out;
		}
	} else {
		cJSON *sel = NULL;
		const struct npl_layer *R = npl_cli_pick(cli, &db, argv[optind], &ro, &sel, &rc);
		cJSON *plan;
		const char *missing;

		if (!R)
			goto out;
		plan = npl_cli_resolve(cli, &db, R, &ro, sel, &rc);
		if (!plan)
			goto out;
		if (tg->check && tg->check(plan, &to, &cli->diag)) {
			cJSON_Delete(plan);
			npl_cli_flush(cli);
			rc = NPL_EXIT_USAGE;
			goto out;
		}
		rc = tg->render(plan, &t, dir ? dir : "", &to, &set, &cli->diag) ? NPL_EXIT_FAIL : 0;
		missing = missing_list(&cli->arena, plan, tg->allocates);
		cJSON_Delete(plan);
		npl_cli_flush(cli);
		if (rc)
			goto out;
		if (missing && !check)
			fprintf(stderr, "npulaunch: %s: not given: %s; the %s until they are set\n",
				R->id, missing, tg->allocates ? "job stops" : "scripts stop");
	}
	if (dir)
		npl_out_own_dir(&set, dir);
	if (check) {
		int diffs = npl_out_check(&set, stdout);

		if (diffs) {
			fprintf(stderr, "npulaunch: %d file%s in %s differ%s from what render writes\n", diffs,
				diffs == 1 ? "" : "s", dir, diffs == 1 ? "s" : "");
			rc = NPL_EXIT_FAIL;
		}
	} else if (dir) {
		if (npl_out_commit(&set, &cli->diag)) {
			npl_cli_flush(cli);
			rc = NPL_EXIT_FAIL;
		}
	} else {
		for (i = 0; i < set.n; i++) {
			printf("%s==> %s <==\n", i ? "\n" : "", set.v[i].path);
			fwrite(set.v[i].text, 1, set.v[i].len, stdout);
		}
	}
out:
	npl_out_release(&set);
	npl_templates_release(&t);
	free(opts);
	npl_cli_recipe_opts_release(&ro);
	return rc;
}
