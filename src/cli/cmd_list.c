/* cmd_list.c: `npulaunch list`: the recipes as an aligned table or JSON. */
#include <stdlib.h>
#include <string.h>

#include "npulaunch/arena.h"
#include "npulaunch/buf.h"
#include "npulaunch/cli.h"
#include "npulaunch/text.h"

static void help(void)
{
	puts("usage: npulaunch list [MODEL] [--model M] [query options] [--json]\n"
	     "\n"
	     "List the recipes: id, model, cards, mode, dataset, TPOT, TTFT, quantization (and E2E,\n"
	     "TOK/S, the output throughput floor, when a recipe listed has that target).\n"
	     "With query options, only the recipes that meet the query.\n"
	     "\n"
	     "Options:\n"
	     "  --model M            only the recipes of model M (id or name, any case)\n"
	     "  --tpot T, --ttft T   latency budgets (20ms, 5s): targets within them\n"
	     "  --e2e T              an end-to-end latency budget: E2E targets within it\n"
	     "  --dataset IN+OUT     workloads that cover it (64k+1k, 1024x1024 (30)+1024, 1080p_30+256)\n"
	     "  --prefix-cache PCT   recipes measured at that prefix-cache hit rate (0: without one)\n"
	     "  --cards N            recipes that need at most N cards\n"
	     "  --mode M, --hardware H   pd-mixed or pd-disagg; a hardware profile\n"
	     "  --json               a JSON array of recipe objects with stable keys\n"
	     "  --ids                only the ids, one per line\n"
	     "  --models             the models, one per line: id, name, recipes, hardware (--json:\n"
	     "                       [{id, name, aliases, recipes, hardware}])\n"
	     "  --profiles           the hardware profiles, one per line: id, name, dies per card,\n"
	     "                       cards per node, recipes (--json: [{id, name, dies_per_card,\n"
	     "                       cards_per_node, recipes}])\n"
	     "  -h, --help           this help\n"
	     "\n"
	     "Examples:\n"
	     "  npulaunch list\n"
	     "  npulaunch list kimi-k2.6 --tpot 50ms --cards 8\n"
	     "  npulaunch list --model Kimi-K2.6 --json");
}

static cJSON *recipe_json(const struct npl_layer *R)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "id", R->id);
	cJSON_AddStringToObject(o, "title", R->name);
	cJSON_AddStringToObject(o, "model", R->model->id);
	cJSON_AddStringToObject(o, "model_name", R->model->name);
	cJSON_AddStringToObject(o, "hardware", R->hardware->id);
	cJSON_AddNumberToObject(o, "cards", R->cards);
	cJSON_AddStringToObject(o, "mode", npl_mode_name(R->mode));
	cJSON_AddStringToObject(o, "dataset", R->dataset);
	npl_recipe_targets_json(o, R);
	cJSON_AddStringToObject(o, "quantization", R->quantization);
	if (R->tier)
		cJSON_AddStringToObject(o, "tier", R->tier);
	else
		cJSON_AddNullToObject(o, "tier");
	cJSON_AddStringToObject(o, "file", R->file);
	return o;
}

enum { C_ID, C_MODEL, C_CARDS, C_MODE, C_DATASET, C_TPOT, C_TTFT, C_E2E, C_TPUT, C_QUANT, NCOL };

/* A cell's text, escaped for the terminal (a recipe's strings are anyone's). */
static const char *cell(struct npl_arena *a, const struct npl_layer *R, int col, char *tmp, size_t n)
{
	switch (col) {
	case C_ID: return R->id;
	case C_MODEL: return npl_escape_in(a, R->model->name);
	case C_CARDS: return npl_fmt_int(tmp, n, R->cards);
	case C_MODE: return npl_mode_name(R->mode);
	case C_DATASET: return npl_escape_in(a, R->dataset);
	case C_TPOT: return R->tpot_us >= 0 ? npl_escape_in(a, R->tpot_text) : "-";
	case C_TTFT: return R->ttft_us >= 0 ? npl_escape_in(a, R->ttft_text) : "-";
	case C_E2E: return R->e2e_us >= 0 ? npl_escape_in(a, R->e2e_text) : "-";
	case C_TPUT: return R->throughput >= 0 ? npl_escape_in(a, R->throughput_text) : "-";
	default: return npl_escape_in(a, R->quantization);
	}
}

/* One cell and the two spaces after it: CARDS to the right, the last column unpadded. */
static void put_cell(struct npl_buf *t, const char *s, int col, size_t w)
{
	static const char spaces[] = "                                                                ";
	size_t n = strlen(s), pad = col == NCOL - 1 || n >= w ? 0 : w - n;

	if (col == C_CARDS)
		for (; pad; pad -= pad < 64 ? pad : 64)
			npl_buf_add(t, spaces, pad < 64 ? pad : 64);
	npl_buf_add(t, s, n);
	if (col == NCOL - 1)
		return;
	for (pad += 2; pad; pad -= pad < 64 ? pad : 64)
		npl_buf_add(t, spaces, pad < 64 ? pad : 64);
}

/* A small table: a header, then rows of n cells, each column as wide as its widest. */
static void print_table(struct npl_cli *cli, const char *const *heads, int ncol, const char **cells, int nrows)
{
	size_t w[8] = {0};
	int r, k;

	for (k = 0; k < ncol; k++)
		w[k] = strlen(heads[k]);
	for (r = 0; r < nrows; r++)
		for (k = 0; k < ncol; k++)
			if (strlen(cells[r * ncol + k]) > w[k])
				w[k] = strlen(cells[r * ncol + k]);
	if (cli->color)
		fputs("\033[1m", stdout);
	for (k = 0; k < ncol; k++)
		printf("%-*s%s", k == ncol - 1 ? 0 : (int)w[k], heads[k], k == ncol - 1 ? "" : "  ");
	if (cli->color)
		fputs("\033[0m", stdout);
	putchar('\n');
	for (r = 0; r < nrows; r++) {
		for (k = 0; k < ncol; k++)
			printf("%-*s%s", k == ncol - 1 ? 0 : (int)w[k], cells[r * ncol + k], k == ncol - 1 ? "" : "  ");
		putchar('\n');
	}
}

/* list --models and list --profiles: one line each (or a JSON array). */
static int list_models_or_profiles(struct npl_cli *cli, const struct npl_db *db, int profiles, int json)
{
	int n = profiles ? db->nhardware : db->nmodels, i, j, k;
	const char **cells = npl_arena_calloc(&cli->arena, (size_t)n * 5 + 1, sizeof(*cells));
	cJSON *a = cJSON_CreateArray();

	for (i = 0; i < n; i++) {
		const struct npl_layer *L = profiles ? db->hardware[i] : db->models[i];
		struct npl_buf hw = NPL_BUF_INIT;
		int count = 0;
		cJSON *o = cJSON_CreateObject(), *hwa = cJSON_CreateArray();

		for (j = 0; j < db->nrecipes; j++) {
			const struct npl_layer *R = db->recipes[j];

			if ((profiles ? R->hardware : R->model) != L)
				continue;
			count++;
			if (!profiles) {
				/* the hardware of this model's recipes, each once */
				for (k = 0; k < j; k++)
					if (db->recipes[k]->model == L && db->recipes[k]->hardware == R->hardware)
						break;
				if (k == j) {
					npl_buf_printf(&hw, "%s%s", hw.len ? "," : "", R->hardware->id);
					cJSON_AddItemToArray(hwa, cJSON_CreateString(R->hardware->id));
				}
			}
		}
		cJSON_AddStringToObject(o, "id", L->id);
		cJSON_AddStringToObject(o, "name", L->name);
		if (profiles) {
			cJSON_AddNumberToObject(o, "dies_per_card", L->dies_per_card.v);
			cJSON_AddNumberToObject(o, "cards_per_node", L->cards_per_node.v);
			cJSON_Delete(hwa);
		} else {
			cJSON *al = cJSON_CreateArray();

			for (k = 0; k < L->naliases; k++)
				cJSON_AddItemToArray(al, cJSON_CreateString(L->aliases[k].s));
			cJSON_AddItemToObject(o, "aliases", al);
			cJSON_AddItemToObject(o, "hardware", hwa);
		}
		cJSON_AddNumberToObject(o, "recipes", count);
		cJSON_AddItemToArray(a, o);
		cells[i * 5] = L->id;
		cells[i * 5 + 1] = npl_escape_in(&cli->arena, L->name);
		if (profiles) {
			cells[i * 5 + 2] = npl_arena_printf(&cli->arena, "%d", L->dies_per_card.v);
			cells[i * 5 + 3] = npl_arena_printf(&cli->arena, "%d", L->cards_per_node.v);
			cells[i * 5 + 4] = npl_arena_printf(&cli->arena, "%d", count);
		} else {
			cells[i * 5 + 2] = npl_arena_printf(&cli->arena, "%d", count);
			cells[i * 5 + 3] = npl_arena_strdup(&cli->arena, hw.len ? npl_buf_str(&hw) : "-");
		}
		npl_buf_release(&hw);
	}
	if (json) {
		char *t = cJSON_Print(a);

		npl_cli_puts_json(t);
		cJSON_free(t);
	} else if (profiles) {
		static const char *const heads[] = {"ID", "NAME", "DIES/CARD", "CARDS/NODE", "RECIPES"};

		print_table(cli, heads, 5, cells, n);
	} else {
		/* the same five-cell rows, four used */
		static const char *const heads[] = {"ID", "NAME", "RECIPES", "HARDWARE"};
		const char **c4 = npl_arena_calloc(&cli->arena, (size_t)n * 4 + 1, sizeof(*c4));

		for (i = 0; i < n; i++)
			for (k = 0; k < 4; k++)
				c4[i * 4 + k] = cells[i * 5 + k];
		print_table(cli, heads, 4, c4, n);
	}
	cJSON_Delete(a);
	return NPL_EXIT_OK;
}

/* The recipes as an aligned table: the columns as wide as their widest cell. The table is
 * built in memory and written in large pieces: printf per cell cost more than everything else
 * `list` does over a large database. */
static void print_recipe_table(struct npl_cli *cli, const struct npl_layer *const *shown, int nshown)
{
	static const char *const heads[NCOL] = {"ID", "MODEL", "CARDS", "MODE", "DATASET", "TPOT",
						"TTFT", "E2E", "TOK/S", "QUANTIZATION"};
	struct npl_buf t = NPL_BUF_INIT;
	size_t w[NCOL];
	int on[NCOL], i, col;

	/* the columns of the targets few recipes have only when one of those listed has it */
	for (col = 0; col < NCOL; col++) {
		w[col] = strlen(heads[col]);
		on[col] = col != C_E2E && col != C_TPUT;
	}
	for (i = 0; i < nshown; i++) {
		on[C_E2E] |= shown[i]->e2e_us >= 0;
		on[C_TPUT] |= shown[i]->throughput >= 0;
	}
	for (i = 0; i < nshown; i++)
		for (col = 0; col < NCOL; col++) {
			char tmp[32];
			size_t n = strlen(cell(&cli->arena, shown[i], col, tmp, sizeof(tmp)));

			if (n > w[col])
				w[col] = n;
		}
	if (cli->color)
		npl_buf_puts(&t, "\033[1m");
	for (col = 0; col < NCOL; col++)
		if (on[col])
			put_cell(&t, heads[col], col, w[col]);
	if (cli->color)
		npl_buf_puts(&t, "\033[0m");
	npl_buf_putc(&t, '\n');
	for (i = 0; i < nshown; i++) {
		for (col = 0; col < NCOL; col++) {
			char tmp[32];

			if (on[col])
				put_cell(&t, cell(&cli->arena, shown[i], col, tmp, sizeof(tmp)), col, w[col]);
		}
		npl_buf_putc(&t, '\n');
		if (t.len >= 64 * 1024) {
			/* in pieces: the same memory again, not 2 MB of new pages */
			fwrite(t.data, 1, t.len, stdout);
			npl_buf_reset(&t);
		}
	}
	fwrite(t.data, 1, t.len, stdout);
	npl_buf_release(&t);
}

/* The recipes as a JSON array (recipe_json). */
static void print_recipes_json(const struct npl_layer *const *shown, int nshown)
{
	cJSON *a = cJSON_CreateArray();
	char *s;
	int i;

	for (i = 0; i < nshown; i++)
		cJSON_AddItemToArray(a, recipe_json(shown[i]));
	s = cJSON_Print(a);
	npl_cli_puts_json(s);
	cJSON_free(s);
	cJSON_Delete(a);
}

/* What the command line asks of list. */
struct list_opts {
	struct npl_cli_recipe_opts ro;
	const char *model;
	int json, ids, models, profiles, help;
};

/* The options and the model argument; 0 or an exit code (0 with o->help set after --help). */
static int parse_args(int argc, char **argv, struct npl_cli *cli, struct list_opts *o)
{
	static const struct option own[] = {
		{"model", required_argument, NULL, 'm'},
		{"json", no_argument, NULL, 'j'},
		{"ids", no_argument, NULL, 'i'},
		{"models", no_argument, NULL, 'M'},
		{"profiles", no_argument, NULL, 'P'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct option *opts = npl_cli_options(own);
	int c, rc = NPL_EXIT_OK;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'm': o->model = optarg; break;
		case 'j': o->json = 1; break;
		case 'i': o->ids = 1; break;
		case 'M': o->models = 1; break;
		case 'P': o->profiles = 1; break;
		case 'h': help(); o->help = 1; goto out;
		case ':': rc = npl_cli_usage_error("list", "option '%s' needs a value", argv[optind - 1]); goto out;
		case '?': rc = npl_cli_usage_error("list", "unknown option '%s'", argv[optind - 1]); goto out;
		default:
			if (c < NPL_OPT_TPOT || c > NPL_OPT_NEAREST) {
				rc = npl_cli_usage_error("list", "option '%s' does not apply to list", argv[optind - 1]);
				goto out;
			}
			if (npl_cli_recipe_opt(cli, &o->ro, c, optarg) <= 0) {
				rc = NPL_EXIT_USAGE;
				goto out;
			}
		}
	}
	if (optind < argc && !o->model)
		o->model = argv[optind++];
	if (optind < argc) {
		rc = npl_cli_usage_error("list", "unexpected argument '%s'", argv[optind]);
		goto out;
	}
	/* one listing per run: recipes (a table, --json or --ids), models or hardware profiles */
	if (o->ids + o->models + o->profiles > 1 || (o->ids && o->json)) {
		rc = npl_cli_usage_error("list", "%s", o->ids && o->json ? "--ids and --json: give one (--json holds the ids)"
									 : "give one of --ids, --models, --profiles");
		goto out;
	}
	if ((o->models || o->profiles) && (o->model || npl_cli_has_query(&o->ro)))
		rc = npl_cli_usage_error("list", "--%s lists every one: it takes no model or query",
					 o->models ? "models" : "profiles");
out:
	free(opts);
	return rc;
}

/* The model named on the command line, into *M; 0, or NPL_EXIT_NO_RECIPE with a did-you-mean. */
static int find_model(struct npl_cli *cli, const struct npl_db *db, const char *model, const struct npl_layer **M)
{
	const char *best;

	if ((*M = npl_db_model(db, model)))
		return NPL_EXIT_OK;
	best = npl_cli_suggest_model(db, model);
	if (best)
		fprintf(stderr, "npulaunch: list: no model '%s' (did you mean '%s'?)\n",
			npl_escape_in(&cli->arena, model), best);
	else
		fprintf(stderr, "npulaunch: list: no model '%s': 'npulaunch list --models' shows them\n",
			npl_escape_in(&cli->arena, model));
	return NPL_EXIT_NO_RECIPE;
}

/* The recipes to list into shown (room for all), in the database's order: those that meet the
 * query, else those of model M (all when NULL). 0 or an exit code. */
static int select_recipes(struct npl_cli *cli, const struct npl_db *db, const struct list_opts *o,
			  const struct npl_layer *M, const struct npl_layer **shown, int *nshown)
{
	int i, rc;

	if (npl_cli_has_query(&o->ro)) {
		/* a query lists the recipes that meet it */
		struct npl_query q;

		if (o->ro.nearest)
			return npl_cli_usage_error("list", "--nearest chooses one recipe: use it with show or render");
		if ((rc = npl_cli_query(cli, db, M, &o->ro, &q)))
			return rc;
		for (i = 0; i < db->nrecipes; i++)
			if (npl_query_qualifies(db, &q, db->recipes[i], NULL, NULL))
				shown[(*nshown)++] = db->recipes[i];
	} else {
		for (i = 0; i < db->nrecipes; i++)
			if (!M || db->recipes[i]->model == M)
				shown[(*nshown)++] = db->recipes[i];
	}
	return NPL_EXIT_OK;
}

int npl_cmd_list(int argc, char **argv, struct npl_cli *cli)
{
	struct list_opts o;
	const struct npl_layer *M = NULL;
	struct npl_db db;
	const struct npl_layer **shown = NULL;
	int rc, i, nshown = 0;

	memset(&o, 0, sizeof(o));
	if ((rc = parse_args(argc, argv, cli, &o)) || o.help)
		goto out;
	if ((rc = npl_cli_open_db(cli, &db)))
		goto out;
	if (o.model && (rc = find_model(cli, &db, o.model, &M)))
		goto out;
	if (o.models || o.profiles) {
		rc = list_models_or_profiles(cli, &db, o.profiles, o.json);
		goto out;
	}
	shown = npl_xcalloc((size_t)db.nrecipes + 1, sizeof(*shown));
	if ((rc = select_recipes(cli, &db, &o, M, shown, &nshown)))
		goto out;
	if (o.ids) {
		for (i = 0; i < nshown; i++)
			puts(shown[i]->id);
	} else if (o.json) {
		print_recipes_json(shown, nshown);
	} else {
		print_recipe_table(cli, shown, nshown);
	}
out:
	free(shown);
	npl_cli_recipe_opts_release(&o.ro);
	return rc;
}
