/* cmd_render.c: `npulaunch render`: the launch scripts and manifest of a recipe, or of all. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "npulaunch/cli.h"
#include "npulaunch/output.h"
#include "npulaunch/render.h"
#include "npulaunch/resolve.h"
#include "npulaunch/sha256.h"
#include "npulaunch/target.h"
#include "npulaunch/text.h"

/* What render writes: the scripts, or the files of an output target (target.h). */
static const struct {
	const char *name;
	const struct npl_target *target;
} targets[] = {
	{"scripts", NULL},
	{"k8s", &npl_target_k8s},
	{"rbg", &npl_target_rbg},
	{"docker", &npl_target_docker},
	{"slurm", &npl_target_slurm},
};

static int render_plan(const struct npl_target *tg, const cJSON *plan, struct npl_templates *t,
		       const char *dir, const struct npl_target_opts *o, struct npl_outset *set,
		       struct npl_diag *d)
{
	return tg ? tg->render(plan, t, dir, o, set, d) : npl_render_bundle(plan, t, dir, set, d);
}

/* The target whose value a site key without a script variable is: the one whose prefix it has
 * (slurm-partition), else the container targets' (image, namespace). */
static const char *owner_of(const char *key)
{
	size_t i;

	for (i = 0; i < NPL_ARRAY_SIZE(targets); i++) {
		const char *p = targets[i].target ? targets[i].target->site_prefix : NULL;

		if (p && !strncmp(key, p, strlen(p)))
			return targets[i].name;
	}
	/* a cluster value Slurm takes too (tune) */
	for (i = 0; i < NPL_ARRAY_SIZE(targets); i++)
		for (const char *const *own = targets[i].target && targets[i].target->site_prefix ? targets[i].target->site_keys : NULL;
		     own && *own; own++)
			if (!strcmp(key, *own))
				return "k8s, rbg, docker or slurm";
	return "k8s, rbg or docker";
}

/* The site values that contradict the target: another target's values (a site file may hold
 * every target's), addresses for a target whose engine allocates the nodes. */
static int target_site_ok(struct npl_cli *cli, const struct npl_target *tg, int strict, const struct npl_site *flags,
			  const struct npl_site *all)
{
	int k;

	for (k = 0; k < NPL_SITE_COUNT; k++) {
		const char *key = npl_site_key_name(k), *owner;
		int mine;

		if (!npl_site_var(k) && flags->key[k].n) {
			owner = owner_of(key);
			mine = tg && (tg->site_prefix ? !strncmp(key, tg->site_prefix, strlen(tg->site_prefix))
						      : !strncmp(owner, "k8s, rbg", 8));
			for (const char *const *own = tg && tg->site_prefix ? tg->site_keys : NULL; own && *own && !mine; own++)
				mine = !strcmp(key, *own);
			/* a site file may hold every target's values: another's are ignored, as any unused one */
			if (!mine &&
			    npl_site_unused(&cli->diag, strict, (enum npl_site_key)k,
					    tg ? npl_arena_printf(&cli->arena, "render --target %s", tg->name) : "render (the scripts)",
					    npl_arena_printf(&cli->arena, "a value of --target %s", owner))) {
				npl_cli_flush(cli);
				return NPL_EXIT_USAGE;
			}
		}
		if (tg && tg->allocates && npl_site_is_list(k) && npl_site_var(k) && all->key[k].n)
			return npl_cli_usage_error("render", "--%s: --target %s takes the nodes and their addresses from the allocation; drop it",
						   key, tg->name);
	}
	return 0;
}

/*
 * render --json: {target, dir, check, files: [{path, state, bytes, sha256}]} (and the text of
 * each file when there is no folder). state: written (by this render), rendered (no -o: the
 * file printed, not written), current, stale, edited, missing (--check), and extra (--check: a
 * file render does not write).
 */
static void print_json(struct npl_cli *cli, const struct npl_outset *set, const char *dir,
		       const struct npl_target *tg, int check, const char *lines)
{
	cJSON *o = cJSON_CreateObject(), *files = cJSON_CreateArray();
	char *text;
	int i;

	cJSON_AddStringToObject(o, "target", tg ? tg->name : "scripts");
	if (dir)
		cJSON_AddStringToObject(o, "dir", dir);
	else
		cJSON_AddNullToObject(o, "dir");
	cJSON_AddBoolToObject(o, "check", check);
	for (i = 0; i < set->n; i++) {
		const char *state = check ? "current" : dir ? "written" : "rendered", *l;
		cJSON *f = cJSON_CreateObject();
		char hex[65];

		/* what --check said of it: "stale PATH" and the like, a line each */
		for (l = lines; check && l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
			const char *sp = strchr(l, ' '), *nl = strchr(l, '\n');
			size_t plen = strlen(set->v[i].path);

			if (sp && (size_t)((nl ? nl : l + strlen(l)) - sp - 1) == plen && !strncmp(sp + 1, set->v[i].path, plen)) {
				state = npl_arena_printf(&cli->arena, "%.*s", (int)(sp - l), l);
				break;
			}
		}
		npl_sha256_hex(set->v[i].text, set->v[i].len, hex);
		cJSON_AddStringToObject(f, "path", set->v[i].path);
		cJSON_AddStringToObject(f, "state", state);
		cJSON_AddNumberToObject(f, "bytes", (double)set->v[i].len);
		cJSON_AddStringToObject(f, "sha256", hex);
		if (!dir)
			cJSON_AddItemToObject(f, "text", cJSON_CreateStringReference(set->v[i].text));
		cJSON_AddItemToArray(files, f);
	}
	/* the extra files --check found */
	for (const char *l = lines; check && l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
		const char *nl = strchr(l, '\n');

		if (!strncmp(l, "extra ", 6)) {
			cJSON *f = cJSON_CreateObject();
			char *path = npl_arena_printf(&cli->arena, "%.*s", (int)((nl ? nl : l + strlen(l)) - l - 6), l + 6);

			cJSON_AddStringToObject(f, "path", path);
			cJSON_AddStringToObject(f, "state", "extra");
			cJSON_AddItemToArray(files, f);
		}
	}
	cJSON_AddItemToObject(o, "files", files);
	text = cJSON_Print(o);
	npl_cli_puts_json(text);
	cJSON_free(text);
	cJSON_Delete(o);
}

static void help(void)
{
	fputs("usage: npulaunch render ID|QUERY [--target T [--bench]] [site values] [overrides] [-o DIR] [--check]\n"
	     "       npulaunch render --all [--target T] [site values] -o DIR [--check]\n"
	     "\n"
	     "Write one self-contained launch script per role (pd-mixed.sh, or prefill.sh,\n"
	     "decode.sh and router.sh), bench.sh and manifest.json (the plan). Without -o the\n"
	     "files go to standard output, each under a line '==> NAME <=='. A site value not\n"
	     "given stays a variable at the top of the scripts, which refuse to start until\n"
	     "it is set.\n"
	     "\n"
	     "Options:\n"
	     "  -o, --output DIR  write the files into DIR (created if needed), whole or not at all;\n"
	     "                    the files of an earlier render there that this one lacks are\n"
	     "                    removed, other files kept; a file changed since it was rendered\n"
	     "                    is not overwritten without --force\n"
	     "  --all             every recipe, each into DIR/ID/\n"
	     "  --jobs N          (--all) render the recipes N at a time (default: one per CPU\n"
	     "                    this process may use); the files, messages and exit status\n"
	     "                    are those of rendering them in turn\n"
	     "  --check           write nothing; exit 1 listing stale, edited, missing and extra\n"
	     "                    files (edited: changed since it was rendered)\n"
	     "  --templates DIR   templates from DIR instead of the compiled-in ones\n"
	     "  --json            what was written (or, with --check, each file's state) as JSON:\n"
	     "                    {target, dir, check, files: [{path, state, bytes, sha256}]};\n"
	     "                    without -o each file's text too. state: written,\n"
	     "                    rendered (no -o), current, stale, edited, missing, extra\n"
	     "  --target T        scripts (the default); k8s: LeaderWorkerSets, the router's\n"
	     "                    Deployment, Services, the scripts in a ConfigMap (kubectl\n"
	     "                    apply -k DIR); rbg: one RoleBasedGroup instead; docker: a\n"
	     "                    docker or podman run script per role (docs/kubernetes.md);\n"
	     "                    slurm: also slurm.sbatch, one batch job for the deployment\n"
	     "                    (sbatch it in the bundle), and the slurm-step.sh its steps run;\n"
	     "                    the nodes and their addresses come from the allocation\n"
	     "                    (docs/slurm.md)\n"
	     "  --bench           (slurm) the job runs the benchmark once the entry point\n"
	     "                    answers, then npulaunch verify; it ends with the verdict\n"
	     , stdout);
	puts("  query             MODEL instead of an id, with --tpot T, --ttft T and --e2e T\n"
	     "                    (budgets: the largest target within wins), --dataset IN+OUT (the smallest that\n"
	     "                    covers wins; 64k+1k, 1024x1024 (30)+1024, 1080p_30+256),\n"
	     "                    --prefix-cache PCT, --cards N (available; the most used wins),\n"
	     "                    --mode pd-mixed|pd-disagg, --hardware H; --nearest takes the\n"
	     "                    nearest when nothing qualifies. Exit 4 when several tie (each\n"
	     "                    listed with the option that selects it), 3 when none qualifies.\n"
	     "  site values       --model-path P  --draft-model-path P  --ifname NAME\n"
	     "                    --node-ip IP (once per node, rank order)  --prefill-ip IP...\n"
	     "                    --decode-ip IP...  --entry-ip IP (a Slurm job's entry point's node)\n"
	     "                    --site FILE (YAML with the same keys; flags win)\n"
	     "  cluster values    (--target k8s, rbg, docker) --image IMG  --router-image IMG\n"
	     "                    --registry HOST[/PATH]  --namespace NS  --name-prefix P\n"
	     "                    --npu-resource NAME  --npu-unit card|die  --node-selector K=V...\n"
	     "                    --model-volume hostpath|pvc:CLAIM  --model-mount DIR\n"
	     "                    --scheduler NAME  --gang[=false]  --tune[=false]\n"
	     "                    --privileged[=false]  --shm-size 64Gi  --container-runtime R\n"
	     "                    (k8s, rbg) --server-cpus N  --server-memory 1024Gi (a node's\n"
	     "                    servers: requests = limits)  --router-cpus N  --router-memory 8Gi\n"
	     "                    --router-node-selector K=V...  --toleration KEY[=VALUE][:EFFECT]...\n"
	     "                    --image-pull-secret NAME...  --priority-class NAME\n"
	     "                    --startup-timeout SECONDS (1800)\n"
	     "  slurm values      --slurm-partition P  --slurm-account A  --slurm-time LIMIT\n"
	     "                    --slurm-gres NAME (--gres=NAME:dies per node)\n"
	     "                    --slurm-log-dir DIR (default: the bundle's logs/)\n"
	     "                    --slurm-router-node NODE (default: the first node)\n"
	     "                    --slurm-npulaunch PATH (npulaunch on the nodes: the steps\n"
	     "                    run npulaunch apply instead of the role scripts)\n"
	     "                    --tune=false (the steps tune nothing: for users who are not root)\n"
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
	     "  npulaunch render deepseek-v4-flash-w8a8-1p1d-16p-in8k-out1k-50ms --target k8s \\\n"
	     "      --model-path /models/dsv4 --ifname eth0 -o k8s/ && kubectl apply -k k8s/\n"
	     "  npulaunch render kimi-k2.6 --tpot 50ms --target slurm --slurm-gres npu -o job/");
}

static void waiting(const char *dir)
{
	fprintf(stderr, "npulaunch: render: waiting for another npulaunch writing into '%s'\n", dir);
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

/* render --all of the recipes [from, to) into set: an exit code as one run over them in turn
 * gives; *invalid is set when a recipe of them failed to resolve or check (the exit code is
 * then that of an invalid recipe, whatever came before). */
static int render_range(struct npl_cli *cli, const struct npl_db *db, const struct npl_cli_recipe_opts *ro,
			const struct npl_target *tg, const struct npl_target_opts *to, struct npl_templates *t,
			struct npl_outset *set, const char *dir, int from, int upto, int *invalid)
{
	int i, rc = 0;

	for (i = from; i < upto; i++) {
		struct npl_resolve_opts o = {&ro->site, ro->ov, ro->nov, ro->force, ro->target, ro->strict};
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
		if (!plan || npl_cli_check(cli, db, plan, R, ro->allow_unknown)) {
			cJSON_Delete(plan);
			rc = NPL_EXIT_INVALID;
			*invalid = 1;
			continue;
		}
		sub = npl_arena_printf(&cli->arena, "%s/%s", dir, R->id);
		/* a target refuses site values (missing, or not for it): a usage error */
		if (render_plan(tg, plan, t, dir ? sub : R->id, to, set, &cli->diag) && !rc)
			rc = tg ? NPL_EXIT_USAGE : NPL_EXIT_INVALID;
		cJSON_Delete(plan);
	}
	return rc;
}

/* render --all's recipes in chunks of a few, which the workers take in turn as they finish one
 * (the recipes' costs differ: a share fixed in advance leaves a worker idle). A chunk's messages
 * go into a diag of its own that the command reports afterwards, chunk by chunk, as if the
 * recipes had been rendered in turn. */
struct chunk {
	struct npl_cli cli;   /* the command's, with a held diag and an arena of its own */
	struct npl_outset set;
	int from, upto, rc, invalid;
};

struct crew {
	const struct npl_db *db;
	const struct npl_cli_recipe_opts *ro;
	const struct npl_target *tg;
	const struct npl_target_opts *to;
	const char *dir;
	struct chunk *c;
	int nchunks;
	atomic_int next;      /* the next chunk no worker has taken */
};

struct worker {
	struct crew *crew;
	struct npl_templates t;   /* parsed once per worker */
	struct npl_arena texts;   /* its chunks' files' texts */
	pthread_t thread;
	int started;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct crew *cr = w->crew;
	int i;

	while ((i = atomic_fetch_add(&cr->next, 1)) < cr->nchunks) {
		struct chunk *c = &cr->c[i];

		c->set.text_arena = &w->texts;
		c->rc = render_range(&c->cli, cr->db, cr->ro, cr->tg, cr->to, &w->t, &c->set, cr->dir, c->from,
				     c->upto, &c->invalid);
	}
	return NULL;
}

/* The CPUs this process may use. */
static int cpus(void)
{
	cpu_set_t set;

	return sched_getaffinity(0, sizeof(set), &set) ? 1 : CPU_COUNT(&set);
}

/* How many workers render --all runs: --jobs, else one per CPU this process may use, with at
 * least 4 recipes each. */
static int jobs_for(int jobs, int nrecipes)
{
	if (!jobs) {
		jobs = cpus();
		if (jobs > nrecipes / 4)
			jobs = nrecipes / 4;
	}
	if (jobs > nrecipes)
		jobs = nrecipes;
	return jobs < 1 ? 1 : jobs;
}

/* Run n workers on the crew's chunks: this thread is one of them. */
static struct worker *run_crew(struct crew *cr, int n, const char *templates)
{
	struct worker *w = npl_xcalloc((size_t)n, sizeof(*w));
	int k;

	for (k = 0; k < n; k++) {
		w[k].crew = cr;
		w[k].t.dir = templates;
		npl_arena_init(&w[k].texts);
	}
	for (k = 1; k < n; k++)
		w[k].started = !pthread_create(&w[k].thread, NULL, work, &w[k]);
	work(&w[0]);   /* when no thread could be started, this one renders every chunk */
	for (k = 1; k < n; k++)
		if (w[k].started)
			pthread_join(w[k].thread, NULL);
	return w;
}

/* The chunks' sets into set in their order, the workers' texts with them; -1 (set emptied)
 * when that would not be what one run in turn writes. */
static int merge_chunks(struct crew *cr, struct worker *w, int n, struct npl_outset *set)
{
	int k;

	for (k = 0; k < cr->nchunks; k++)
		if (npl_out_merge(set, &cr->c[k].set)) {
			npl_out_release(set);
			return -1;
		}
	for (k = 0; k < n; k++)
		npl_arena_take(&set->texts, &w[k].texts);
	return 0;
}

static void release_crew(struct npl_cli *cli, struct crew *cr, struct worker *w, int n)
{
	int k;

	for (k = 0; k < cr->nchunks; k++) {
		npl_out_release(&cr->c[k].set);
		npl_diag_release(&cr->c[k].cli.diag);
		npl_arena_take(&cli->arena, &cr->c[k].cli.arena);
	}
	for (k = 0; k < n; k++) {
		npl_templates_release(&w[k].t);
		npl_arena_release(&w[k].texts);
	}
	free(cr->c);
	free(w);
}

/* Every recipe into set (each into DIR/ID/), by jobs workers at once (0: one per CPU). The
 * files, the messages and the exit code are those of rendering the recipes in turn. */
static int render_all(struct npl_cli *cli, const struct npl_db *db, const struct npl_cli_recipe_opts *ro,
		      const struct npl_target *tg, const struct npl_target_opts *to, struct npl_templates *t,
		      struct npl_outset *set, const char *dir, int jobs)
{
	struct crew cr = {db, ro, tg, to, dir, NULL, 0, 0};
	struct worker *w;
	int k, rc = 0, invalid = 0, n = jobs_for(jobs, db->nrecipes), per;

	/* the registry is loaded once, before, and only read by the workers */
	if (n < 2 || set->n || !npl_cli_engine(cli, db))
		return render_range(cli, db, ro, tg, to, t, set, dir, 0, db->nrecipes, &invalid);
	/* about 8 chunks a worker: small enough to even out, few enough to cost nothing */
	per = db->nrecipes / (8 * n) + 1;
	cr.nchunks = (db->nrecipes + per - 1) / per;
	cr.c = npl_xcalloc((size_t)cr.nchunks, sizeof(*cr.c));
	for (k = 0; k < cr.nchunks; k++) {
		cr.c[k].cli = *cli;
		memset(&cr.c[k].cli.diag, 0, sizeof(cr.c[k].cli.diag));
		cr.c[k].cli.diag.hold = 1;
		npl_arena_init(&cr.c[k].cli.arena);
		cr.c[k].from = k * per;
		cr.c[k].upto = k * per + per < db->nrecipes ? k * per + per : db->nrecipes;
	}
	w = run_crew(&cr, n, t->dir);
	if (merge_chunks(&cr, w, n, set)) {
		release_crew(cli, &cr, w, n);
		return render_range(cli, db, ro, tg, to, t, set, dir, 0, db->nrecipes, &invalid);
	}
	for (k = 0; k < cr.nchunks; k++) {
		npl_diag_replay(&cli->diag, &cr.c[k].cli.diag, stderr);
		if (cr.c[k].invalid || !rc)
			rc = cr.c[k].rc;
	}
	release_crew(cli, &cr, w, n);
	return rc;
}

/* The files of one recipe (arg: an id or a query) or of all (arg NULL) into set; an exit code. */
static int plan_set(struct npl_cli *cli, struct npl_cli_recipe_opts *ro, const struct npl_target *tg,
		    const struct npl_target_opts *to, struct npl_templates *t, struct npl_outset *set,
		    const char *dir, const char *arg, int check, int jobs)
{
	struct npl_db db;
	cJSON *sel = NULL, *plan;
	const struct npl_layer *R;
	const char *missing;
	int rc;

	/* the flags' values, then the site file's (addresses too) */
	if ((rc = npl_cli_site(cli, ro)) || (rc = target_site_ok(cli, tg, ro->strict, &ro->site, &ro->site)) ||
	    (rc = npl_cli_open_db_for(cli, &db, arg)))
		return rc;
	if (!arg) {
		rc = render_all(cli, &db, ro, tg, to, t, set, dir, jobs);
		npl_cli_flush(cli);   /* the targets' notes */
		return rc;
	}
	if (!(R = npl_cli_pick(cli, &db, arg, ro, &sel, &rc)))
		return rc ? rc : NPL_EXIT_FAIL;
	if (!(plan = npl_cli_resolve(cli, &db, R, ro, sel, &rc)))
		return rc ? rc : NPL_EXIT_FAIL;
	rc = render_plan(tg, plan, t, dir ? dir : "", to, set, &cli->diag) ? tg ? NPL_EXIT_USAGE : NPL_EXIT_FAIL : 0;
	missing = missing_list(&cli->arena, plan, tg && tg->allocates);
	cJSON_Delete(plan);
	npl_cli_flush(cli);
	if (rc)
		return rc;
	if (missing && !check && (!tg || tg->allocates))
		npl_cli_info(cli, "%s: not given: %s; the %s until they are set",
			R->id, missing, tg ? "job stops" : "scripts stop");
	return 0;
}

/* What the command line asks of render. */
struct render_opts {
	struct npl_cli_recipe_opts ro;
	const struct npl_target *tg;   /* NULL: the scripts */
	struct npl_target_opts to;
	const char *templates, *dir, *arg;
	int all, check, json, help;
	int jobs;   /* --jobs: render --all's workers; 0: one per CPU */
};

/* --target NAME into o->tg (and what it asks of the plan); 0 or a usage error. */
static int set_target(struct render_opts *o, const char *name)
{
	size_t k;

	for (k = 0; k < NPL_ARRAY_SIZE(targets); k++)
		if (!strcmp(targets[k].name, name))
			break;
	if (k == NPL_ARRAY_SIZE(targets))
		return npl_cli_usage_error("render", "unknown target '%s' (scripts, k8s, rbg, docker, slurm)", name);
	o->tg = targets[k].target;
	o->ro.target = o->tg ? &o->tg->plan : NULL;
	return 0;
}

/* The options that go together: --check with a folder, --all without a query, a folder that
 * is named (its trailing slashes dropped), --bench with a target that runs the deployment.
 * 0 or a usage error. */
static int check_options(struct npl_cli *cli, struct render_opts *o)
{
	if (o->check && !o->dir)
		return npl_cli_usage_error("render", "--check compares with a folder: give -o DIR");
	if (o->all && npl_cli_has_query(&o->ro))
		return npl_cli_usage_error("render", "--all takes no query options");
	if (o->jobs && !o->all)
		return npl_cli_usage_error("render", "--jobs renders several recipes at a time: give --all");
	/* not the current folder, nor "/": an unset variable in `-o "$OUT"` or `-o "$OUT/"` */
	if (o->dir && npl_cli_output_dir("render", o->dir))
		return NPL_EXIT_USAGE;
	/* --json names every file it writes: refused before anything is written */
	if (o->dir && o->json && npl_cli_json_text("render", "-o", o->dir))
		return NPL_EXIT_USAGE;
	if (o->dir) {
		/* "deploy/" and "deploy" name the same folder */
		char *d = npl_arena_strdup(&cli->arena, o->dir);
		size_t n = strlen(d);

		while (n > 1 && d[n - 1] == '/')
			d[--n] = '\0';
		o->dir = d;
	}
	if (o->to.bench && !(o->tg && o->tg->bench))
		return npl_cli_usage_error("render", "--bench is for a job that runs the deployment: give --target slurm");
	o->to.all = o->all;
	o->to.strict = o->ro.strict;
	return 0;
}

/* The options and the recipe argument; 0 or an exit code (0 with o->help set after --help). */
static int parse_args(int argc, char **argv, struct npl_cli *cli, struct render_opts *o)
{
	static const struct option own[] = {
		{"output", required_argument, NULL, 'o'},
		{"all", no_argument, NULL, 'a'},
		{"check", no_argument, NULL, 'c'},
		{"templates", required_argument, NULL, 't'},
		{"target", required_argument, NULL, 'T'},
		{"bench", no_argument, NULL, 'b'},
		{"json", no_argument, NULL, 'j'},
		{"jobs", required_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct option *opts = npl_cli_options(own);
	int c, rc = NPL_EXIT_OK;

	while ((c = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
		switch (c) {
		case 'o': o->dir = optarg; break;
		case 'a': o->all = 1; break;
		case 'c': o->check = 1; break;
		case 't': o->templates = optarg; break;
		case 'T':
			if ((rc = set_target(o, optarg)))
				goto out;
			break;
		case 'b': o->to.bench = 1; break;
		case 'j': o->json = 1; break;
		case 'n': {
			static const struct npl_number_spec jobs_spec = {"a number of workers", 1, 1024, 1};
			double v;

			if ((rc = npl_cli_number("render", "--jobs", optarg, &jobs_spec, &v)))
				goto out;
			o->jobs = (int)v;
			break;
		}
		case 'h': help(); o->help = 1; goto out;
		case ':': rc = npl_cli_usage_error("render", "option '%s' needs a value", argv[optind - 1]); goto out;
		case '?': rc = npl_cli_usage_error("render", "unknown option '%s'", argv[optind - 1]); goto out;
		default:
			if (npl_cli_recipe_opt(cli, &o->ro, c, optarg) <= 0) {
				rc = NPL_EXIT_USAGE;
				goto out;
			}
		}
	}
	if (o->all && optind < argc)
		rc = npl_cli_usage_error("render", "--all renders every recipe: drop '%s'", argv[optind]);
	else if (!o->all && optind >= argc)
		rc = npl_cli_usage_error("render", "which recipe? give an id, a model with a query, or --all");
	else if (!o->all && optind + 1 < argc)
		rc = npl_cli_usage_error("render", "unexpected argument '%s'", argv[optind + 1]);
	else if (!(rc = check_options(cli, o)))
		o->arg = o->all ? NULL : argv[optind];
out:
	free(opts);
	return rc;
}

/* --check: the folder compared with the set, a line per difference (or JSON). An exit code. */
static int check_folder(struct npl_cli *cli, const struct npl_outset *set, const struct render_opts *o)
{
	char *lines = NULL;
	size_t nlines = 0;
	FILE *mem;
	struct stat st;
	int diffs;

	/* a file where the folder belongs: what render would refuse to write into, not N missing files */
	if (stat(o->dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
		npl_error(&cli->diag, NULL, "'%s' exists and is not a directory: nothing to compare", o->dir);
		npl_cli_flush(cli);
		return NPL_EXIT_FAIL;
	}
	if (!(mem = o->json ? open_memstream(&lines, &nlines) : stdout))
		npl_oom();
	diffs = npl_out_check(set, mem);
	if (o->json) {
		fclose(mem);
		print_json(cli, set, o->dir, o->tg, 1, lines);
		free(lines);
	}
	if (diffs) {
		fprintf(stderr, "npulaunch: %d file%s in %s differ%s from what render writes\n", diffs,
			diffs == 1 ? "" : "s", o->dir, diffs == 1 ? "s" : "");
		return NPL_EXIT_FAIL;
	}
	return NPL_EXIT_OK;
}

/* The set written into the folder, whole or not at all (then JSON of it). An exit code. */
static int write_folder(struct npl_cli *cli, struct npl_outset *set, const struct render_opts *o)
{
	int rc = NPL_EXIT_OK;

	set->force = o->ro.force;
	set->jobs = o->jobs ? o->jobs : cpus();   /* the files written on every CPU too */
	set->waiting = waiting;
	if (npl_out_commit(set, &cli->diag))
		rc = NPL_EXIT_FAIL;
	npl_cli_flush(cli);
	if (o->json && !rc)
		print_json(cli, set, o->dir, o->tg, 0, NULL);
	return rc;
}

int npl_cmd_render(int argc, char **argv, struct npl_cli *cli)
{
	struct render_opts o;
	struct npl_templates t = {0};
	struct npl_outset set = {0};
	int rc, i;

	memset(&o, 0, sizeof(o));
	o.ro.check = 1;
	o.templates = cli->templates_dir;
	if ((rc = parse_args(argc, argv, cli, &o)) || o.help)
		goto out;
	t.dir = o.templates;
	/* the plan; the commit, --check and the bundle's checks below */
	rc = plan_set(cli, &o.ro, o.tg, &o.to, &t, &set, o.dir, o.arg, o.check, o.jobs);
	npl_cli_flush(cli);
	npl_diag_flush_groups(&cli->diag, stderr);
	if (rc)
		goto out;
	if (o.dir)
		npl_out_own_dir(&set, o.dir);
	if (o.check) {
		rc = check_folder(cli, &set, &o);
	} else if (o.dir) {
		rc = write_folder(cli, &set, &o);
	} else if (o.json) {
		print_json(cli, &set, NULL, o.tg, 0, NULL);
	} else {
		for (i = 0; i < set.n; i++) {
			printf("%s==> %s <==\n", i ? "\n" : "", set.v[i].path);
			fwrite(set.v[i].text, 1, set.v[i].len, stdout);
		}
	}
out:
	npl_out_release(&set);
	npl_templates_release(&t);
	npl_cli_recipe_opts_release(&o.ro);
	return rc;
}
