/* check.c: a plan checked against the engine-flag registry and the rules that need flag values; see check.h. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/buf.h"
#include "npulaunch/check.h"
#include "npulaunch/engine.h"
#include "npulaunch/plan.h"
#include "npulaunch/text.h"

/* ---- checks --------------------------------------------------------------------- */

/* "file:line:col" of a plan origin back into a location (strings in the arena). */
static struct npl_loc origin_loc(const cJSON *item, struct npl_arena *a)
{
	struct npl_loc l = {NULL, 0, 0};
	const char *at = npl_json_str(cJSON_GetObjectItemCaseSensitive(item, "origin"), "at");
	const char *c2, *c1;

	if (!at || !(c2 = strrchr(at, ':')))
		return l;
	for (c1 = c2 - 1; c1 > at && *c1 != ':'; c1--)
		;
	if (c1 <= at)
		return l;
	{
		/* a manifest's "file:line:col", read as strictly as any number from a file */
		static const struct npl_number_spec pos = {"a position", 0, INT_MAX, 1};
		double line, col;

		if (npl_parse_number_n(c1 + 1, (size_t)(c2 - c1 - 1), &pos, &line) || npl_parse_number(c2 + 1, &pos, &col))
			return l;
		l.file = npl_arena_strndup(a, at, (size_t)(c1 - at));
		l.line = (int)line;
		l.col = (int)col;
	}
	return l;
}

/* Where a message about an item goes, and how it names its source when it has no place. */
static const char *from(const cJSON *item, struct npl_arena *a)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(item, "origin");
	const char *layer = npl_json_str(o, "layer");

	if (layer && !strcmp(layer, "override"))
		return npl_arena_printf(a, " (from %s)", npl_json_str(o, "option"));
	if (layer && !strcmp(layer, "rule"))
		return npl_arena_printf(a, " (from the rule %s)", npl_json_str(o, "rule"));
	return "";
}

static const char *module_of(const cJSON *node)
{
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(node, "launch");
	int n = cJSON_GetArraySize(l);

	if (n >= 3 && !strcmp(cJSON_GetArrayItem(l, 1)->valuestring, "-m"))
		return cJSON_GetArrayItem(l, 2)->valuestring;
	return n ? cJSON_GetArrayItem(l, 0)->valuestring : NULL;
}

static int is_int(const char *s)
{
	if (*s == '-')
		s++;
	if (*s < '0' || *s > '9')
		return 0;
	while (*s >= '0' && *s <= '9')
		s++;
	/* some counts take k/m/g suffixes upstream (human-readable ints) */
	if (*s && strchr("kKmMgG", *s))
		s++;
	return !*s;
}

static int is_float(const char *s)
{
	char *end;

	if (!*s)
		return 0;
	strtod(s, &end);
	return !*end;
}

static const char *const type_names[] = {"a switch (no value)", "a whole number", "a number",
					 "one value", "a list of values"};

static int check_value(const struct npl_flag_spec *f, const cJSON *values, const char **why,
		       struct npl_arena *a)
{
	const cJSON *v;
	int n = cJSON_GetArraySize(values), i;

	if (f->type == NPL_FT_BOOL && n) {
		*why = "takes no value (a switch)";
		return -1;
	}
	if (f->type == NPL_FT_LIST && !n) {
		*why = "needs at least one value";
		return -1;
	}
	if ((f->type == NPL_FT_INT || f->type == NPL_FT_FLOAT || f->type == NPL_FT_STRING) && n != 1) {
		*why = n ? npl_arena_printf(a, "takes %s, not %d values", type_names[f->type], n)
			 : npl_arena_printf(a, "takes %s: no value is given", type_names[f->type]);
		return -1;
	}
	cJSON_ArrayForEach(v, values) {
		struct npl_buf b = NPL_BUF_INIT;
		const char *s;

		npl_pval_display(&b, v->valuestring, NULL);
		s = npl_arena_strdup(a, npl_buf_str(&b));
		npl_buf_release(&b);
		if (strchr(v->valuestring, '$'))
			continue;   /* a site value: checked where it is given */
		if (f->type == NPL_FT_INT && !is_int(s)) {
			*why = npl_arena_printf(a, "takes a whole number, not '%s'", s);
			return -1;
		}
		if (f->type == NPL_FT_FLOAT && !is_float(s)) {
			*why = npl_arena_printf(a, "takes a number, not '%s'", s);
			return -1;
		}
		if (f->nchoices && f->type != NPL_FT_LIST) {
			for (i = 0; i < f->nchoices; i++)
				if (!strcmp(f->choices[i], s))
					break;
			if (i == f->nchoices) {
				const char *best = npl_did_you_mean(s, f->choices, f->nchoices);
				struct npl_buf c = NPL_BUF_INIT;

				for (i = 0; i < f->nchoices && i < 12; i++)
					npl_buf_printf(&c, "%s%s", i ? ", " : "", f->choices[i]);
				if (f->nchoices > 12)
					npl_buf_puts(&c, ", ...");
				*why = best ? npl_arena_printf(a, "has no choice '%s' (did you mean '%s'?)", s, best)
					    : npl_arena_printf(a, "has no choice '%s' (%s)", s, npl_buf_str(&c));
				npl_buf_release(&c);
				return -1;
			}
		}
	}
	return 0;
}

int npl_check_flags(const struct npl_engine *e, const cJSON *plan, int allow_unknown,
			   struct npl_diag *d)
{
	const cJSON *role, *f;
	const char *id = npl_json_str(cJSON_GetObjectItemCaseSensitive(plan, "recipe"), "id");
	struct npl_arena a;
	int errors = 0;

	npl_arena_init(&a);
	cJSON_ArrayForEach(role, cJSON_GetObjectItemCaseSensitive(plan, "roles")) {
		const cJSON *node = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(role, "nodes"), 0);
		const char *rname = npl_json_str(role, "role"), *module = module_of(node);
		const struct npl_engine_tool *t = npl_engine_tool(e, module);
		size_t nflags = (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(node, "flags")) + 1;
		const struct npl_flag_spec **seen;
		const char **seen_as;
		int nseen = 0, j;

		if (!t)
			continue;   /* a launcher the registry does not describe */
		seen = npl_arena_calloc(&a, nflags, sizeof(*seen));
		seen_as = npl_arena_calloc(&a, nflags, sizeof(*seen_as));
		cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(node, "flags")) {
			const char *name = npl_json_str(f, "flag") + 2, *why = NULL;
			const struct npl_flag_spec *s, *w;
			struct npl_loc at = origin_loc(f, &a);
			struct npl_flag_match m;
			int rc = npl_engine_match(t, name, &m, &a);

			if (rc) {
				npl_diag_add(d, allow_unknown ? NPL_WARNING : NPL_ERROR, at.file ? &at : NULL,
					     "%s: %s of %s: %s%s", id, rname, module,
					     npl_engine_mismatch(e, t, name, rc, &m, &a),
					     allow_unknown ? "" : " (--allow-unknown-flag lets it through)");
				errors += !allow_unknown;
				continue;
			}
			s = m.spec;
			/* two names of one option (an alias, a prefix): upstream the later one wins; a name
			 * repeated is an option given twice (--prefill URL per server, append actions) */
			for (j = 0; j < nseen && (seen[j] != s || !strcmp(seen_as[j], name)); j++)
				;
			if (j < nseen) {
				npl_error(d, at.file ? &at : NULL, "%s: %s: --%s and --%s both set --%s%s: write it once",
					  id, rname, seen_as[j], name, s->name, from(f, &a));
				errors++;
				continue;
			}
			seen[nseen] = s;
			seen_as[nseen++] = name;
			if (check_value(s, cJSON_GetObjectItemCaseSensitive(f, "values"), &why, &a)) {
				npl_error(d, at.file ? &at : NULL, "%s: %s: --%s %s%s", id, rname, name, why,
					  from(f, &a));
				errors++;
			}
			/* the name as written, or the option it sets, may be unknown upstream */
			w = npl_engine_flag(t, name);
			if (w && !w->upstream)
				s = w;
			if (!s->upstream) {
				char group[256];

				snprintf(group, sizeof(group), "not upstream: %s --%s", module, name);
				npl_diag_grouped(d, NPL_WARNING, at.file ? &at : NULL, group, id,
						 "%s: %s: --%s is not in upstream %s (SGLang %s): %s", id, rname, name,
						 module, e->version, s->note ? s->note : "kept as the page uses it");
			}
		}
	}
	npl_arena_release(&a);
	return errors;
}

/* ---- rules ------------------------------------------------------------------------ */

static const cJSON *flag(const cJSON *node, const char *name)
{
	const cJSON *f;

	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(node, "flags"))
		if (!strcmp(npl_json_str(f, "flag"), name))
			return f;
	return NULL;
}

/* The first value of a flag as a whole number that fits an int (the strict decimal reader,
 * so that the rules' arithmetic cannot overflow), or def. */
static long num(const cJSON *node, const char *name, long def)
{
	const cJSON *f = flag(node, name), *v;
	int n;

	if (!f || !(v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(f, "values"), 0)) ||
	    (n = npl_parse_uint(v->valuestring)) < 0)
		return def;
	return n;
}

static const char *waived(const struct npl_layer *R, const char *rule)
{
	int i;

	for (i = 0; R && i < R->nwaive; i++)
		if (!strcmp(R->waive[i].name, rule))
			return R->waive[i].value;
	return NULL;
}

struct port_use {
	const char *where, *what;
	long port;
	int at;      /* its place in the plan's order */
};

/* by port and address, then by place: the uses of one port on one address are neighbours */
static int port_use_cmp(const void *pa, const void *pb)
{
	const struct port_use *a = pa, *b = pb;
	int c = (a->port > b->port) - (a->port < b->port);

	if (!c)
		c = strcmp(a->where, b->where);
	return c ? c : a->at - b->at;
}

/* pairs of places, in the plan's order */
static int pair_cmp(const void *pa, const void *pb)
{
	const int *a = pa, *b = pb;

	return a[0] != b[0] ? a[0] - b[0] : a[1] - b[1];
}

static void use_port(struct port_use **v, int *n, int *cap, struct npl_arena *a, const char *where,
		     const char *what, long port)
{
	if (port <= 0)
		return;
	if (*n == *cap) {
		*v = npl_arena_grow(a, *v, (size_t)*n, (size_t)(*cap ? *cap * 2 : 16), sizeof(**v));
		*cap = *cap ? *cap * 2 : 16;
	}
	(*v)[*n] = (struct port_use){where, what, port, *n};
	(*n)++;
}

static int check_ports(const cJSON *plan, struct npl_arena *a, const struct npl_layer *R,
		       struct npl_diag *d)
{
	struct npl_site site;
	struct port_use *v = NULL;
	const cJSON *role, *node;
	int n = 0, cap = 0, i, j, np = 0, errors = 0;
	int *pairs = NULL, *pos;
	const char *id = npl_json_str(cJSON_GetObjectItemCaseSensitive(plan, "recipe"), "id");

	npl_plan_site(plan, &site, a);
#define USE(where_, what_, port_) use_port(&v, &n, &cap, a, (where_), (what_), (port_))
	cJSON_ArrayForEach(role, cJSON_GetObjectItemCaseSensitive(plan, "roles")) {
		const char *rname = npl_json_str(role, "role"), *prog = npl_json_str(role, "program");

		/* the benchmark is a client: its --port is where it connects */
		if (!prog || !strcmp(prog, "bench"))
			continue;
		cJSON_ArrayForEach(node, cJSON_GetObjectItemCaseSensitive(role, "nodes")) {
			struct npl_buf b = NPL_BUF_INIT;
			const char *addr = npl_json_str(node, "address"), *where;
			const cJSON *host = flag(node, "--host"), *dist = flag(node, "--dist-init-addr");

			if (!addr && host)
				addr = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(host, "values"), 0)->valuestring;
			if (!addr)
				continue;
			npl_pval_display(&b, addr, &site);
			where = npl_arena_strdup(a, npl_buf_str(&b));
			npl_buf_release(&b);
			USE(where, npl_arena_printf(a, "%s --port", rname), num(node, "--port", 0));
			USE(where, npl_arena_printf(a, "%s --disaggregation-bootstrap-port", rname),
			    num(node, "--disaggregation-bootstrap-port", 0));
			if (dist && npl_json_int(node, "rank", 0) == 0) {
				const char *dv = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(dist, "values"), 0)->valuestring;
				const char *colon = strrchr(dv, ':');

				if (colon)
					USE(where, npl_arena_printf(a, "%s --dist-init-addr", rname), npl_parse_uint(colon + 1));
			}
		}
	}
#undef USE
	/* a port the rules derived (a role's port + the instance's slot, the bootstrap port + the
	   instance) past the last one: no program can listen there */
	for (i = 0; i < n; i++)
		if (v[i].port > 65535) {
			npl_error(d, R ? &R->loc : NULL, "%s: %s on %s is port %ld, past 65535 (the recipe's ports "
				  "plus the instance or slot number): lower the recipe's ports", id, v[i].what,
				  v[i].where, v[i].port);
			errors++;
		}
	/* every pair of uses of one port on one address, found by sorting (linear in the
	   plan's size but for the sort), reported in the plan's order */
	if (n)
		qsort(v, (size_t)n, sizeof(*v), port_use_cmp);
	for (i = 0; i < n; i = j) {
		int k, l, m;

		for (j = i + 1; j < n && v[j].port == v[i].port && !strcmp(v[j].where, v[i].where); j++)
			;
		m = j - i;
		if (m < 2)
			continue;
		pairs = npl_arena_grow(a, pairs, (size_t)np * 2, (size_t)(np + m * (m - 1) / 2) * 2, sizeof(*pairs));
		for (k = i; k < j; k++)
			for (l = k + 1; l < j; l++) {
				pairs[np * 2] = v[k].at;
				pairs[np * 2 + 1] = v[l].at;
				np++;
			}
	}
	/* the pairs are places in the plan's order: they order the messages */
	if (np)
		qsort(pairs, (size_t)np, 2 * sizeof(*pairs), pair_cmp);
	pos = npl_arena_calloc(a, (size_t)n + 1, sizeof(*pos));
	for (i = 0; i < n; i++)
		pos[v[i].at] = i;
	for (i = 0; i < np; i++) {
		const struct port_use *x = &v[pos[pairs[2 * i]]], *y = &v[pos[pairs[2 * i + 1]]];

		npl_error(d, R ? &R->loc : NULL, "%s: port %ld is used twice on %s: %s and %s", id, x->port,
			  x->where, x->what, y->what);
		errors++;
	}
	return errors;
}

int npl_check_rules(const struct npl_engine *e, const cJSON *plan, const struct npl_layer *R,
			   struct npl_diag *d)
{
	const cJSON *role;
	const char *id = npl_json_str(cJSON_GetObjectItemCaseSensitive(plan, "recipe"), "id");
	struct npl_arena a;
	int errors = 0, i;

	npl_arena_init(&a);
	cJSON_ArrayForEach(role, cJSON_GetObjectItemCaseSensitive(plan, "roles")) {
		const cJSON *node = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(role, "nodes"), 0);
		const char *rname = npl_json_str(role, "role");
		long tp = num(node, "--tp-size", 0), dp = num(node, "--dp-size", 1);
		long steps = num(node, "--speculative-num-steps", -1), topk = num(node, "--speculative-eagle-topk", -1);
		long tokens = num(node, "--speculative-num-draft-tokens", -1);
		long mrr = num(node, "--max-running-requests", -1);
		const cJSON *alg = flag(node, "--speculative-algorithm"), *bs = flag(node, "--cuda-graph-bs-decode");

		if (tp > 0 && dp > 0 && tp % dp) {
			struct npl_loc at = origin_loc(flag(node, "--dp-size"), &a);

			npl_error(d, at.file ? &at : NULL, "%s: %s: dp-size %ld does not divide tp-size %ld", id,
				  rname, dp, tp);
			errors++;
		}
		if (topk == 1 && steps > 0 && tokens > 0 && tokens != steps + 1) {
			struct npl_loc at = origin_loc(flag(node, "--speculative-num-draft-tokens"), &a);

			npl_error(d, at.file ? &at : NULL, "%s: %s: %ld draft tokens with %ld steps and topk 1: it must be steps + 1 = %ld",
				  id, rname, tokens, steps, steps + 1);
			errors++;
		}
		if (alg) {
			const char *name = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(alg, "values"), 0)->valuestring;
			int has = flag(node, "--speculative-draft-model-path") != NULL;
			/* the recipe's own speculative block, when it has one, is where to look */
			struct npl_loc at = R && R->spec.present ? R->spec.loc : origin_loc(alg, &a);

			for (i = 0; i < e->nspec; i++) {
				if (strcmp(e->spec_names[i], name))
					continue;
				if (!strcmp(e->spec_draft[i], "required") && !has) {
					npl_error(d, at.file ? &at : NULL, "%s: %s: %s needs a draft model: set draft_model: true in the speculative block (its path is the site value --draft-model-path)",
						  id, rname, name);
					errors++;
				} else if (!strcmp(e->spec_draft[i], "none") && has) {
					npl_warn(d, at.file ? &at : NULL, "%s: %s: %s drafts from the model itself: the draft model path is not used",
						 id, rname, name);
				}
			}
		}
		if (bs && mrr > 0 && dp > 0) {
			const cJSON *v;
			long max = 0;

			cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(bs, "values"))
				if (npl_parse_uint(v->valuestring) > max)
					max = npl_parse_uint(v->valuestring);
			if ((long long)max * dp > mrr && !waived(R, "graph-batch")) {
				struct npl_loc at = origin_loc(bs, &a);

				npl_error(d, at.file ? &at : NULL, "%s: %s: the largest decode CUDA-graph batch %ld exceeds max-running-requests / dp-size = %ld / %ld: larger graphs are captured and never used (waive graph-batch, with the reason, to keep it)",
					  id, rname, max, mrr, dp);
				errors++;
			}
		}
	}
	errors += check_ports(plan, &a, R, d);
	npl_arena_release(&a);
	return errors;
}
