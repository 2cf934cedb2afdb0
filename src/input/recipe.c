/* recipe.c: the recipe database (see recipe.h): texts, files and folders loaded, the layers in
 * force (a later folder overrides an earlier one), references linked and topologies checked, the
 * lookups; and the names of kinds, scopes, modes and durations. The reading of one document into
 * a layer is recipe_keys.c's, on the readers of recipe_read.c and the settings of
 * recipe_settings.c. */
#define _DEFAULT_SOURCE /* realpath, DT_DIR */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "npulaunch/arena.h"
#include "npulaunch/embedded.h"
#include "npulaunch/fsio.h"
#include "npulaunch/recipe.h"
#include "npulaunch/text.h"
#include "recipe_internal.h"

const char *const npl_recipe_kind_names[NPL_LAYER_COUNT] = {"defaults", "hardware", "model",
							    "recipe"};
const char *const npl_recipe_kind_articles[NPL_LAYER_COUNT] = {"the defaults", "a hardware profile",
							       "a model", "a recipe"};
static const char *const scope_names[] = {"server", "pd-mixed", "prefill", "decode",
					  "disagg", "router", "bench"};

const char *npl_layer_kind_name(enum npl_layer_kind k)
{
	return k < NPL_LAYER_COUNT ? npl_recipe_kind_names[k] : "?";
}

const char *npl_scope_name(enum npl_scope s)
{
	return s < NPL_SCOPE_COUNT ? scope_names[s] : "?";
}

const char *npl_mode_name(enum npl_mode m)
{
	return m == NPL_MODE_PD_MIXED ? "pd-mixed" : m == NPL_MODE_PD_DISAGG ? "pd-disagg" : "?";
}

/* ---- database --------------------------------------------------------- */

void npl_db_init(struct npl_db *db, struct npl_arena *arena)
{
	memset(db, 0, sizeof(*db));
	db->arena = arena;
}

static void add_layer(struct npl_db *db, struct npl_layer *L)
{
	if (db->nlayers == db->caplayers) {
		int cap = db->caplayers ? db->caplayers * 2 : 64;

		db->layers = npl_arena_grow(db->arena, db->layers, (size_t)db->nlayers, (size_t)cap,
					    sizeof(*db->layers));
		db->caplayers = cap;
	}
	db->layers[db->nlayers++] = L;
}

/* 1 when doc is a recipe document (kind: recipe). */
static int is_recipe_doc(const struct npl_ynode *doc)
{
	const struct npl_ynode *k = npl_ymap_get(doc, "kind");

	return k && k->kind == NPL_YSCALAR && !strcmp(k->str, "recipe");
}

/* Build a layer from each document of file name (source: its folder's rank); with only set,
 * of the recipe documents only that one. */
static int load_docs(struct npl_db *db, const char *name, struct npl_ynode *const *docs, int ndocs,
		     int source, const struct npl_ynode *only, struct npl_diag *d)
{
	struct ctx c = {db, db->arena, d, NULL, 0, NULL};
	int i;

	if (source >= db->nsources)
		db->nsources = source + 1;
	for (i = 0; i < ndocs; i++) {
		struct npl_layer *L;

		if (only && docs[i] != only && is_recipe_doc(docs[i]))
			continue;
		L = npl_recipe_build_layer(&c, name, docs[i], source);

		if (L)
			add_layer(db, L);
	}
	return c.rc;
}

static int load_text(struct npl_db *db, const char *name, const char *text, size_t len, int source,
		     struct npl_diag *d)
{
	struct npl_ynode **docs;
	int ndocs;

	npl_diag_source(d, name, text);
	if (source >= db->nsources)
		db->nsources = source + 1;
	if (npl_yaml_load(db->arena, name, text, len, &docs, &ndocs, d))
		return -1;
	/* an empty file, or one of comments only: nothing to read, and likely not what was meant */
	if (!ndocs)
		npl_warn(d, &(struct npl_loc){name, 0, 0}, "holds no document (empty, or comments only): nothing read from it");
	return load_docs(db, name, docs, ndocs, source, NULL, d);
}

int npl_db_load_text(struct npl_db *db, const char *name, const char *text, size_t len, int source,
		     struct npl_diag *d)
{
	return load_text(db, name, text, len, source, d);
}

/* The one shipped recipe document whose title gives the id want, or NULL when there is none
 * or more than one (or the trees were not compiled in). */
static const struct npl_ynode *embedded_recipe(struct npl_arena *a, const char *want)
{
	const struct npl_embedded_tree *t;
	const struct npl_ynode *found = NULL;
	int i;

	if (!want || !npl_embedded_recipe_trees)
		return NULL;
	for (t = npl_embedded_recipe_trees; t->name; t++)
		for (i = 0; i < t->ndocs; i++) {
			const struct npl_ynode *title = npl_ymap_get(t->docs[i], "title");
			const char *id;

			if (!is_recipe_doc(t->docs[i]) || !title || title->kind != NPL_YSCALAR)
				continue;
			id = npl_recipe_id_from_title(a, title->str);
			if (id && !strcmp(id, want)) {
				if (found)
					return NULL;
				found = t->docs[i];
			}
		}
	return found;
}

/* 1 when a document of t is built with only set: one that is not a recipe, or only itself. */
static int builds_any(const struct npl_embedded_tree *t, const struct npl_ynode *only)
{
	int i;

	for (i = 0; i < t->ndocs; i++)
		if (t->docs[i] == only || !is_recipe_doc(t->docs[i]))
			return 1;
	return 0;
}

/* The shipped recipes; with only set, of the recipe documents only that one. */
static int load_embedded(struct npl_db *db, const struct npl_ynode *only, struct npl_diag *d)
{
	const struct npl_embedded *e;
	int rc = 0;

	/* parsed at build time (src/gen/db_gen.c): the same trees npl_yaml_load() makes of the text,
	 * which stays for the source lines of messages; the generators themselves parse */
	const struct npl_embedded_tree *t = npl_embedded_recipe_trees;

	for (e = npl_embedded_recipes; e->name; e++, t = t && t->name ? t + 1 : t) {
		if (t && t->name && !strcmp(t->name, e->name)) {
			if (only && !builds_any(t, only))
				continue;
			npl_diag_source(d, e->name, e->data);
			if (load_docs(db, e->name, t->docs, t->ndocs, 0, only, d))
				rc = -1;
		} else if (load_text(db, e->name, e->data, e->len, 0, d)) {
			rc = -1;
		}
	}
	return rc;
}

int npl_db_load_embedded(struct npl_db *db, struct npl_diag *d)
{
	return load_embedded(db, NULL, d);
}

/* A folder entry: its path and whether it is a folder (from readdir's d_type when known). */
struct dentry {
	char *path;
	int dir;
};

static int dentcmp(const void *a, const void *b)
{
	return strcmp(((const struct dentry *)a)->path, ((const struct dentry *)b)->path);
}

/* A recipe file of a folder. */
static int load_file(struct npl_db *db, const char *path, int source, struct npl_diag *d)
{
	size_t len;
	char *text = npl_read_file_in(db->arena, path, &len, d);

	if (!text)
		return -1;
	return load_text(db, path, text, len, source, d);
}

/* The folders one walk has read, by device and inode: a symbolic link back up the tree, or two
 * links to one folder, would make the walk endless or exponential. */
struct seen {
	struct {
		dev_t dev;
		ino_t ino;
		const char *path;
	} *v;
	size_t n, cap;   /* open addressing; cap a power of two */
};

/* Where folder (dev, ino) is in the set, or the empty slot where it belongs. */
static size_t seen_slot(const struct seen *s, dev_t dev, ino_t ino)
{
	size_t i = ((size_t)ino * 0x9e3779b97f4a7c15ull ^ (size_t)dev) & (s->cap - 1);

	while (s->v[i].path && (s->v[i].dev != dev || s->v[i].ino != ino))
		i = (i + 1) & (s->cap - 1);
	return i;
}

/* The path under which the walk read folder st already, or NULL after noting it as path. */
static const char *seen_before(struct seen *s, const struct stat *st, const char *path)
{
	size_t i;

	if (2 * (s->n + 1) > s->cap) {
		struct seen bigger = {NULL, 0, s->cap ? 2 * s->cap : 64};

		bigger.v = npl_xcalloc(bigger.cap, sizeof(*bigger.v));
		for (i = 0; i < s->cap; i++)
			if (s->v[i].path)
				bigger.v[seen_slot(&bigger, s->v[i].dev, s->v[i].ino)] = s->v[i];
		bigger.n = s->n;
		free(s->v);
		*s = bigger;
	}
	i = seen_slot(s, st->st_dev, st->st_ino);
	if (s->v[i].path)
		return s->v[i].path;
	s->v[i].dev = st->st_dev;
	s->v[i].ino = st->st_ino;
	s->v[i].path = path;
	s->n++;
	return NULL;
}

static int load_tree(struct npl_db *db, struct seen *seen, const char *dir, int source, struct npl_diag *d)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	struct dentry *ents = NULL;
	size_t n = 0, cap = 0, i, dlen = strlen(dir);
	int rc = 0;
	struct stat st;
	const char *first;

	if (!dp)
		return npl_error(d, NULL, "cannot open recipe folder '%s': %s", dir, strerror(errno));
	if (fstat(dirfd(dp), &st) == 0 && (first = seen_before(seen, &st, dir))) {
		closedir(dp);
		return npl_error(d, NULL, "recipe folder '%s' is '%s' again (a symbolic link?); "
				 "each folder is read once", dir, first);
	}
	while ((de = readdir(dp))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			ents = npl_xrealloc(ents, cap * sizeof(*ents));
		}
		{
			/* dir/name, without printf: a folder of thousands of recipes makes thousands */
			size_t nlen = strlen(de->d_name);
			char *p = npl_arena_alloc(db->arena, dlen + nlen + 2);

			memcpy(p, dir, dlen);
			p[dlen] = '/';
			memcpy(p + dlen + 1, de->d_name, nlen + 1);
			ents[n].path = p;
		}
		/* a symbolic link or a file system without d_type: ask stat */
		ents[n].dir = de->d_type == DT_DIR ? 1 : de->d_type == DT_REG ? 0 : npl_is_dir(ents[n].path);
		n++;
	}
	if (n)
		qsort(ents, n, sizeof(*ents), dentcmp);
	for (i = 0; i < n; i++) {
		if (ents[i].dir) {
			if (load_tree(db, seen, ents[i].path, source, d))
				rc = -1;
		} else if (npl_ends_with(ents[i].path, ".yaml") || npl_ends_with(ents[i].path, ".yml")) {
			size_t bad = npl_utf8_invalid(ents[i].path, strlen(ents[i].path));

			/* the plan names the file of each value (origin "at"): JSON carries UTF-8 only */
			if (bad < strlen(ents[i].path))
				rc = npl_error(d, NULL, "recipe file '%s': its path is not UTF-8 text: the byte 0x%02x at byte %zu does not start a character (the plan, in JSON, names the file of each value)",
					       ents[i].path, (unsigned char)ents[i].path[bad], bad + 1);
			else if (load_file(db, ents[i].path, source, d))
				rc = -1;
		}
	}
	closedir(dp);
	free(ents);
	return rc;
}

int npl_db_load_dir(struct npl_db *db, const char *dir, struct npl_diag *d)
{
	int source = db->nsources > 0 ? db->nsources : 1;
	size_t n = strlen(dir);

	/* "dir/" names files "dir/x.yaml", not "dir//x.yaml" */
	while (n > 1 && dir[n - 1] == '/')
		n--;
	dir = npl_arena_strndup(db->arena, dir, n);

	if (!npl_is_dir(dir))
		return npl_error(d, NULL, "recipe folder '%s' does not exist or is not a folder", dir);
	db->nsources = source + 1;
	{
		struct seen seen = {NULL, 0, 0};
		int rc = load_tree(db, &seen, dir, source, d);

		free(seen.v);
		return rc;
	}
}

static const char *const *layer_ids(struct npl_arena *a, struct npl_layer **v, int n)
{
	const char **ids = npl_arena_calloc(a, (size_t)n + 1, sizeof(*ids));
	int i;

	for (i = 0; i < n; i++)
		ids[i] = v[i]->id;
	return ids;
}

/* Keep the last-loaded layer of each (kind, id): a later folder overrides an
 * earlier one; twice in the same folder is an error. */
/* A layer and its place in load order, to sort by id and keep that order within an id. */
struct ranked {
	struct npl_layer *L;
	int order;
};

static int rankcmp(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	int c = strcmp(x->L->id, y->L->id);

	return c ? c : (x->order > y->order) - (x->order < y->order);
}

/* The layers of one kind in force, sorted by id: a later folder overrides an earlier
 * one; the same id twice in one folder is an error (reported in load order).
 * Sorting first keeps this O(n log n) for databases of thousands of recipes. */
static int select_in_force(struct npl_db *db, enum npl_layer_kind kind, struct npl_layer ***out,
			   int *nout, struct npl_diag *d)
{
	struct npl_layer **v = npl_arena_calloc(db->arena, (size_t)db->nlayers + 1, sizeof(*v));
	struct ranked *r = npl_arena_calloc(db->arena, (size_t)db->nlayers + 1, sizeof(*r));
	struct npl_layer **dup_of = npl_arena_calloc(db->arena, (size_t)db->nlayers + 1, sizeof(*dup_of));
	int i, nr = 0, n = 0, rc = 0;

	for (i = 0; i < db->nlayers; i++)
		if (db->layers[i]->kind == kind && db->layers[i]->id)
			r[nr++] = (struct ranked){db->layers[i], i};
	if (nr)
		qsort(r, (size_t)nr, sizeof(*r), rankcmp);
	for (i = 0; i < nr; i++) {
		if (n && !strcmp(v[n - 1]->id, r[i].L->id)) {
			if (v[n - 1]->source == r[i].L->source)
				dup_of[r[i].order] = v[n - 1];
			else
				v[n - 1] = r[i].L;
		} else {
			v[n++] = r[i].L;
		}
	}
	for (i = 0; i < db->nlayers; i++) {
		const struct npl_layer *L = db->layers[i], *first = dup_of[i];

		if (first)
			rc = npl_error(d, &L->loc, "duplicate %s id '%s' (also defined at %s:%d:%d)",
				       npl_recipe_kind_names[kind], L->id, first->loc.file,
				       first->loc.line, first->loc.col);
	}
	*out = v;
	*nout = n;
	return rc;
}

static struct npl_layer *find_id(struct npl_layer **v, int n, const char *id)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i]->id, id))
			return v[i];
	return NULL;
}

/* A role's instances must fit: dies no more than its cards have, whole cards on a node. */
static int check_topo_role(struct npl_layer *R, const struct npl_topology *t, const char *role,
			   struct npl_diag *d)
{
	const struct npl_layer *hw = R->hardware;

	if (!hw || hw->dies_per_card.v <= 0 || hw->cards_per_node.v <= 0)
		return 0;
	if (t->dies.set && t->dies.v > t->cards.v * hw->dies_per_card.v)
		return npl_error(d, &t->dies.loc, "a %s instance of %d card%s has %d dies (%s), not %d",
				 role, t->cards.v, t->cards.v == 1 ? "" : "s",
				 t->cards.v * hw->dies_per_card.v, hw->id, t->dies.v);
	if (t->first_card.set && t->first_card.v + t->cards.v > hw->cards_per_node.v)
		return npl_error(d, &t->first_card.loc, "a %s instance of %d cards from card %d does not fit a node of %d cards (%s)",
				 role, t->cards.v, t->first_card.v, hw->cards_per_node.v, hw->id);
	if (t->per_node.set && t->per_node.v > 1 &&
	    (t->first_card.set ? t->first_card.v : 0) + t->per_node.v * t->cards.v > hw->cards_per_node.v)
		return npl_error(d, &t->per_node.loc, "%d %s instances of %d cards%s do not fit a node of %d cards (%s)",
				 t->per_node.v, role, t->cards.v, t->first_card.set ? " after the first card" : "",
				 hw->cards_per_node.v, hw->id);
	return 0;
}

static int check_topology(struct npl_layer *R, struct npl_diag *d)
{
	struct npl_topology *mx = &R->topo[NPL_TOPO_PD_MIXED];
	int total;

	if (R->mode == NPL_MODE_PD_MIXED) {
		if (R->topo[NPL_TOPO_PREFILL].instances.set || R->topo[NPL_TOPO_DECODE].instances.set)
			return npl_error(d, &R->topo_loc, "a pd-mixed recipe's 'topology' has only 'pd-mixed' (prefill and decode are for pd-disagg recipes)");
		if (!mx->instances.set) {
			*mx = (struct npl_topology){.instances = {1, 1, R->cards_loc}, .cards = {1, R->cards, R->cards_loc}};
			return 0;
		}
		if (mx->instances.v != 1)
			return npl_error(d, &mx->instances.loc, "a pd-mixed recipe runs one server instance, not %d",
					 mx->instances.v);
		if (mx->cards.v != R->cards)
			return npl_error(d, &mx->cards.loc, "the topology uses %d cards but 'cards' is %d",
					 mx->cards.v, R->cards);
		return check_topo_role(R, mx, "pd-mixed", d);
	}
	if (R->mode != NPL_MODE_PD_DISAGG)
		return 0;
	if (mx->instances.set)
		return npl_error(d, &R->topo_loc, "a pd-disagg recipe's 'topology' has 'prefill' and 'decode', not 'pd-mixed'");
	if (!R->topo[0].instances.set && !R->topo[1].instances.set) {
		/* 1P1D with the cards split evenly, as in the seed pages */
		if (R->cards % 2)
			return npl_error(d, &R->cards_loc, "a pd-disagg recipe without 'topology' splits its cards evenly into 1 prefill and 1 decode: %d cards do not split",
					 R->cards);
		R->topo[0].instances = R->topo[1].instances = (struct npl_int){1, 1, R->cards_loc};
		R->topo[0].cards = R->topo[1].cards = (struct npl_int){1, R->cards / 2, R->cards_loc};
		return 0;
	}
	if (!R->topo[0].instances.set || !R->topo[1].instances.set)
		return npl_error(d, &R->topo_loc, "'topology' needs both 'prefill' and 'decode'");
	total = R->topo[0].instances.v * R->topo[0].cards.v + R->topo[1].instances.v * R->topo[1].cards.v;
	if (total != R->cards)
		return npl_error(d, &R->topo_loc, "the topology uses %d cards (%d x %d prefill + %d x %d decode) but 'cards' is %d",
				 total, R->topo[0].instances.v, R->topo[0].cards.v,
				 R->topo[1].instances.v, R->topo[1].cards.v, R->cards);
	if (check_topo_role(R, &R->topo[0], "prefill", d) || check_topo_role(R, &R->topo[1], "decode", d))
		return -1;
	return 0;
}

int npl_db_link(struct npl_db *db, struct npl_diag *d)
{
	struct npl_layer **defs;
	int ndefs, i, rc = 0;

	if (select_in_force(db, NPL_LAYER_DEFAULTS, &defs, &ndefs, d))
		rc = -1;
	db->defaults = ndefs ? defs[0] : NULL;
	if (!db->defaults)
		rc = npl_error(d, NULL, "the recipe database has no defaults document (kind: defaults)");
	if (select_in_force(db, NPL_LAYER_HARDWARE, &db->hardware, &db->nhardware, d) ||
	    select_in_force(db, NPL_LAYER_MODEL, &db->models, &db->nmodels, d) ||
	    select_in_force(db, NPL_LAYER_RECIPE, &db->recipes, &db->nrecipes, d))
		rc = -1;
	if (db->defaults && db->defaults->default_hardware.s &&
	    !find_id(db->hardware, db->nhardware, db->defaults->default_hardware.s))
		rc = npl_error(d, &db->defaults->default_hardware.loc, "unknown hardware profile '%s'",
			       db->defaults->default_hardware.s);
	for (i = 0; i < db->nrecipes; i++) {
		struct npl_layer *R = db->recipes[i];
		const char *best;

		if (R->model_ref.s) {
			R->model = find_id(db->models, db->nmodels, R->model_ref.s);
			if (!R->model) {
				best = npl_did_you_mean(R->model_ref.s,
							layer_ids(db->arena, db->models, db->nmodels),
							db->nmodels);
				rc = best ? npl_error(d, &R->model_ref.loc, "unknown model '%s' (did you mean '%s'?)",
						      R->model_ref.s, best)
					  : npl_error(d, &R->model_ref.loc, "unknown model '%s'", R->model_ref.s);
			}
		}
		if (R->hardware_ref.s) {
			R->hardware = find_id(db->hardware, db->nhardware, R->hardware_ref.s);
			if (!R->hardware) {
				best = npl_did_you_mean(R->hardware_ref.s,
							layer_ids(db->arena, db->hardware, db->nhardware),
							db->nhardware);
				rc = best ? npl_error(d, &R->hardware_ref.loc, "unknown hardware profile '%s' (did you mean '%s'?)",
						      R->hardware_ref.s, best)
					  : npl_error(d, &R->hardware_ref.loc, "unknown hardware profile '%s'",
						      R->hardware_ref.s);
			}
		}
		if (check_topology(R, d))
			rc = -1;
	}
	return rc;
}

int npl_db_open(struct npl_db *db, struct npl_arena *arena, const char *const *dirs, int ndirs,
		struct npl_diag *d)
{
	return npl_db_open_for(db, arena, dirs, ndirs, NULL, d);
}

int npl_db_open_for(struct npl_db *db, struct npl_arena *arena, const char *const *dirs, int ndirs,
		    const char *want, struct npl_diag *d)
{
	int i, rc;

	npl_db_init(db, arena);
	/* a shipped recipe named by its id needs none of the other recipes (the shipped ones are
	 * checked whole by the tests and by validate); a folder may override or add any of them */
	rc = load_embedded(db, ndirs ? NULL : embedded_recipe(arena, want), d);
	for (i = 0; i < ndirs; i++)
		if (npl_db_load_dir(db, dirs[i], d))
			rc = -1;
	if (rc)
		return -1;
	return npl_db_link(db, d);
}

const struct npl_layer *npl_db_recipe(const struct npl_db *db, const char *id)
{
	int lo = 0, hi = db->nrecipes - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2, c = strcmp(db->recipes[mid]->id, id);

		if (c == 0)
			return db->recipes[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

const struct npl_layer *npl_db_recipe_alias(const struct npl_db *db, const char *id)
{
	int i, j;

	for (i = 0; i < db->nrecipes; i++)
		for (j = 0; j < db->recipes[i]->naliases; j++)
			if (!strcmp(db->recipes[i]->aliases[j].s, id))
				return db->recipes[i];
	return NULL;
}

const struct npl_layer *npl_db_model(const struct npl_db *db, const char *name)
{
	int i, j;

	for (i = 0; i < db->nmodels; i++) {
		const struct npl_layer *M = db->models[i];

		if (npl_strcaseeq(M->id, name) || npl_strcaseeq(M->name, name))
			return M;
		for (j = 0; j < M->naliases; j++)
			if (npl_strcaseeq(M->aliases[j].s, name))
				return M;
	}
	return NULL;
}

const struct npl_layer *npl_db_default_hardware(const struct npl_db *db)
{
	const char *id = db->defaults ? db->defaults->default_hardware.s : NULL;

	return id ? npl_db_hardware(db, id) : NULL;
}

const struct npl_layer *npl_db_hardware(const struct npl_db *db, const char *name)
{
	int i;

	int j;

	for (i = 0; i < db->nhardware; i++) {
		const struct npl_layer *H = db->hardware[i];

		if (npl_strcaseeq(H->id, name) || npl_strcaseeq(H->name, name))
			return H;
		for (j = 0; j < H->naliases; j++)
			if (npl_strcaseeq(H->aliases[j].s, name))
				return H;
	}
	return NULL;
}

char *npl_recipe_id_from_title(struct npl_arena *a, const char *title)
{
	char *id = npl_arena_alloc(a, strlen(title) + 1), *o = id;
	const char *p = title;

	while (*p == ' ' || *p == '\t')
		p++;
	for (; *p; p++) {
		if (*p == ' ' || *p == '\t') {
			while (p[1] == ' ' || p[1] == '\t')
				p++;
			if (p[1])
				*o++ = '-';
		} else {
			*o++ = (*p >= 'A' && *p <= 'Z') ? (char)(*p - 'A' + 'a') : *p;
		}
	}
	*o = '\0';
	return id;
}

long long npl_parse_duration_us(const char *s)
{
	long long whole = 0, frac = 0, scale = 1, mult;
	int digits = 0;
	const char *p = s;
	/* the number is what the strict decimal reader takes (no "5." or ".5"); read exactly here */
	size_t len = npl_decimal_span(s, strlen(s), 0);

	if (!len)
		return -1;
	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		whole = whole * 10 + (*p - '0');
		if (whole > 1000000000LL)
			return -1;
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, digits++) {
			if (scale >= 1000000)
				return -1;
			frac = frac * 10 + (*p - '0');
			scale *= 10;
		}
	}
	if (!digits || p != s + len)
		return -1;
	if (!strcmp(p, "ms"))
		mult = 1000;
	else if (!strcmp(p, "s"))
		mult = 1000000;
	else if (!strcmp(p, "us"))
		mult = 1;
	else
		return -1;
	if (frac * mult % scale)
		return -1;  /* finer than a microsecond */
	return whole * mult + frac * mult / scale;
}

void npl_format_duration(char *out, size_t n, long long us)
{
	if (us >= 1000000 && us % 1000000 == 0)
		snprintf(out, n, "%llds", us / 1000000);
	else if (us % 1000 == 0)
		snprintf(out, n, "%lldms", us / 1000);
	else if (us % 100 == 0)
		snprintf(out, n, "%lld.%lldms", us / 1000, us % 1000 / 100);
	else if (us % 10 == 0)
		snprintf(out, n, "%lld.%02lldms", us / 1000, us % 1000 / 10);
	else
		snprintf(out, n, "%lld.%03lldms", us / 1000, us % 1000);
}
