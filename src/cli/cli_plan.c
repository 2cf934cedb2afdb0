/* cli_plan.c: a deployment's plan for the node commands (apply, status, bench, verify, wait):
 * from a rendered bundle's manifest or from a recipe, the site values merged in, and the
 * endpoints it serves; see cli.h. */
#define _DEFAULT_SOURCE /* realpath */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "npulaunch/arena.h"
#include "npulaunch/cli.h"
#include "npulaunch/fsio.h"
#include "npulaunch/resolve.h"
#include "npulaunch/schema.h"
#include "npulaunch/text.h"

/* The site values a manifest carries, checked as the flags, site files and environment that
 * gave them were: a hand-edited manifest gets no value they would refuse. 0, or -1 with the
 * messages located at the manifest. */
static int manifest_site_ok(struct npl_cli *cli, const cJSON *plan, const char *path)
{
	const cJSON *site = cJSON_GetObjectItemCaseSensitive(plan, "site"), *v, *it;
	struct npl_loc at = {path, 0, 0};
	struct npl_site tmp;
	int k, errors = cli->diag.errors;

	memset(&tmp, 0, sizeof(tmp));
	for (k = 0; k < NPL_SITE_COUNT; k++) {
		/* not ".site.KEY: ", which is how the shape's messages begin: the shape is right */
		const char *what = npl_arena_printf(&cli->arena, "the site's %s", npl_site_key_name(k));

		v = cJSON_GetObjectItemCaseSensitive(site, npl_site_key_name(k));
		if (cJSON_IsString(v))
			npl_site_set_as(&tmp, &cli->arena, k, v->valuestring, what, &at, &cli->diag);
		else if (cJSON_IsArray(v))
			cJSON_ArrayForEach(it, v)
				if (cJSON_IsString(it))
					npl_site_set_as(&tmp, &cli->arena, k, it->valuestring, what, &at, &cli->diag);
	}
	return cli->diag.errors > errors ? -1 : 0;
}

static cJSON *read_manifest(struct npl_cli *cli, const char *path, int *rc)
{
	size_t len;
	char *text = npl_read_file(path, &len, &cli->diag);
	/* one JSON document, nothing after it, and no \u0000 (cJSON would cut the string there) */
	int nul = text && npl_json_nul_escape(text, len);
	cJSON *plan = text && !nul && strlen(text) == len ? cJSON_ParseWithOpts(text, NULL, 1) : NULL;

	free(text);
	if (nul) {
		/* not ".PATH: ", how the shape's messages begin: a string's text is refused, not the shape */
		npl_error(&cli->diag, &(struct npl_loc){path, 0, 0},
			  "a string holds \\u0000 (a NUL, which would cut the value short): not written by npulaunch");
	} else if (!plan || !npl_json_str(plan, "format") || strcmp(npl_json_str(plan, "format"), NPL_PLAN_FORMAT)) {
		if (!cli->diag.errors)
			npl_error(&cli->diag, &(struct npl_loc){path, 0, 0},
				  "not a npulaunch manifest (format %s)", NPL_PLAN_FORMAT);
	} else if (npl_manifest_validate(plan, path, &cli->diag) == 0 && manifest_site_ok(cli, plan, path) == 0) {
		return plan;
	}
	/* no command reads a manifest of another shape: docs/json/manifest.schema.json */
	npl_cli_flush(cli);
	cJSON_Delete(plan);
	*rc = NPL_EXIT_USAGE;
	return NULL;
}

/* The bundle's manifest path when arg names one (a folder with manifest.json, or a .json file). */
static char *bundle_path(struct npl_cli *cli, const char *arg)
{
	struct stat st;
	char *p;

	if (!arg)
		arg = ".";
	if (npl_is_dir(arg)) {
		p = npl_arena_printf(&cli->arena, "%s/manifest.json", arg);
		return stat(p, &st) == 0 ? p : NULL;
	}
	if (npl_ends_with(arg, ".json") && stat(arg, &st) == 0)
		return npl_arena_strdup(&cli->arena, arg);
	return NULL;
}

/* Site values: the flags win over the plan's, the plan's over the environment's. */
static void merge_site(struct npl_cli *cli, cJSON *plan, const struct npl_site *flags)
{
	cJSON *site = cJSON_GetObjectItemCaseSensitive(plan, "site");
	int k, i;

	if (!site) {
		site = cJSON_CreateObject();
		cJSON_AddItemToObject(plan, "site", site);
	}
	for (k = 0; k < NPL_SITE_COUNT; k++) {
		const char *key = npl_site_key_name(k);
		const struct npl_site_value *v = &flags->key[k];
		cJSON *val = NULL;

		if (v->n) {
			if (npl_site_is_list(k)) {
				val = cJSON_CreateArray();
				for (i = 0; i < v->n; i++)
					cJSON_AddItemToArray(val, cJSON_CreateString(v->v[i]));
			} else {
				val = cJSON_CreateString(v->v[0]);
			}
		} else if (npl_site_var(k) && !cJSON_GetObjectItemCaseSensitive(site, key)) {
			/* a target's value (slurm-partition) has no variable: only flags and files give it */
			const char *env = getenv(npl_site_var(k));
			struct npl_site tmp;

			if (!env || !*env)
				continue;
			/* validated as the flags are, the messages naming the variable */
			memset(&tmp, 0, sizeof(tmp));
			if (npl_site_is_list(k)) {
				char *copy = npl_arena_strdup(&cli->arena, env), *tok, *save = NULL;

				/* split as bash's read -a does (the scripts' IFS) */
				for (tok = strtok_r(copy, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save))
					if (npl_site_set_as(&tmp, &cli->arena, k, tok, npl_site_var(k), NULL, &cli->diag))
						break;
				if (cli->diag.errors)
					continue;
				val = cJSON_CreateArray();
				for (i = 0; i < tmp.key[k].n; i++)
					cJSON_AddItemToArray(val, cJSON_CreateString(tmp.key[k].v[i]));
			} else {
				if (npl_site_set_as(&tmp, &cli->arena, k, env, npl_site_var(k), NULL, &cli->diag))
					continue;
				val = cJSON_CreateString(tmp.key[k].v[0]);
			}
		}
		if (val) {
			cJSON_DeleteItemFromObjectCaseSensitive(site, key);
			cJSON_AddItemToObject(site, key, val);
		}
	}
}

cJSON *npl_cli_plan(struct npl_cli *cli, const char *arg, struct npl_cli_recipe_opts *o, int *rc)
{
	const char *manifest = bundle_path(cli, arg);
	cJSON *plan = NULL;

	if (manifest) {
		if (npl_cli_has_query(o) || o->nov) {
			*rc = npl_cli_usage_error(NULL, "a bundle's plan is fixed: render it again to change the recipe or its flags");
			return NULL;
		}
		if (!(plan = read_manifest(cli, manifest, rc)))
			return NULL;
	} else if (arg) {
		struct npl_db db;
		cJSON *sel = NULL;
		const struct npl_layer *R;

		if ((*rc = npl_cli_open_db_for(cli, &db, arg)))
			return NULL;
		if (!(R = npl_cli_pick(cli, &db, arg, o, &sel, rc)))
			return NULL;
		if (!(plan = npl_cli_resolve(cli, &db, R, o, sel, rc)))
			return NULL;
	} else {
		*rc = npl_cli_usage_error(NULL, "which recipe? give an id or a query, or run it in a rendered bundle (a folder with manifest.json)");
		return NULL;
	}
	merge_site(cli, plan, &o->site);
	if (cli->diag.errors) {
		npl_cli_flush(cli);
		cJSON_Delete(plan);
		*rc = NPL_EXIT_USAGE;
		return NULL;
	}
	return plan;
}

/* Whether the plan value pv, its site values substituted, is value. */
static int pval_is(const char *pv, const char *value, const struct npl_site *site)
{
	struct npl_buf b = NPL_BUF_INIT;
	int missing = -1, is = npl_pval_resolve(&b, pv, site, &missing) == 0 && !strcmp(npl_buf_str(&b), value);

	npl_buf_release(&b);
	return is;
}

/* Whether the role's nodes name value for flag (or, flag NULL, have it as their address). */
static int role_names(const cJSON *role, const char *flag, const char *value, const struct npl_site *site)
{
	const cJSON *node, *f, *v;
	int found = 0;

	cJSON_ArrayForEach(node, cJSON_GetObjectItemCaseSensitive(role, "nodes")) {
		const char *addr = npl_json_str(node, "address");

		if (!flag && addr)
			found |= pval_is(addr, value, site);
		cJSON_ArrayForEach(f, (flag ? cJSON_GetObjectItemCaseSensitive(node, "flags") : NULL)) {
			if (!npl_json_str(f, "flag") || strcmp(npl_json_str(f, "flag"), flag))
				continue;
			cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(f, "values"))
				found |= cJSON_IsString(v) && pval_is(v->valuestring, value, site);
		}
	}
	return found;
}

/* NULL when url is the endpoint the plan derives for role (npl_cli_endpoints()); else why not. */
static const char *endpoint_refused(const cJSON *role, const char *url, const struct npl_site *site)
{
	const char *h = !strncmp(url, "http://", 7) ? url + 7 : !strncmp(url, "https://", 8) ? url + 8 : NULL;
	const char *colon, *p;
	char host[64], port[8];
	unsigned char bin[16];
	size_t hl;

	if (!h)
		return "not an http:// or https:// URL";
	if (!(colon = strrchr(h, ':')) || !colon[1] || strlen(colon + 1) > 5)
		return "not http://HOST:PORT";
	for (p = colon + 1; *p; p++)
		if (*p < '0' || *p > '9')
			return "not http://HOST:PORT";
	hl = (size_t)(colon - h);
	if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
		h++;
		hl -= 2;
	}
	if (hl == 0 || hl >= sizeof(host))
		return "its host is not an IP address";
	memcpy(host, h, hl);
	host[hl] = 0;
	snprintf(port, sizeof(port), "%s", colon + 1);
	if (inet_pton(AF_INET, host, bin) != 1 && inet_pton(AF_INET6, host, bin) != 1)
		return "its host is not an IP address";
	if (!role_names(role, NULL, host, site) && !role_names(role, "--host", host, site))
		return "its host is no address of the role's nodes";
	if (!role_names(role, "--port", port, site))
		return "its port is none the role's nodes listen on";
	return NULL;
}

int npl_cli_endpoints(struct npl_cli *cli, const cJSON *plan, int with_router, struct npl_endpoint **out)
{
	struct npl_site site;
	const cJSON *r, *ep;
	int n = 0, cap = 16;

	*out = npl_arena_calloc(&cli->arena, (size_t)cap, sizeof(**out));
	npl_plan_site(plan, &site, &cli->arena);
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(plan, "roles")) {
		const char *prog = npl_json_str(r, "program");

		if (!prog || (strcmp(prog, "server") && !(with_router && !strcmp(prog, "router"))))
			continue;
		cJSON_ArrayForEach(ep, cJSON_GetObjectItemCaseSensitive(r, "endpoints")) {
			struct npl_buf b = NPL_BUF_INIT;
			struct npl_endpoint *e;
			int missing = -1;

			if (n == cap) {
				*out = npl_arena_grow(&cli->arena, *out, (size_t)n, (size_t)cap * 2, sizeof(**out));
				cap *= 2;
			}
			e = &(*out)[n++];
			e->role = npl_json_str(r, "role");
			e->instance = strcmp(prog, "server") ? -1 : npl_json_int(ep, "instance", 0);
			if (npl_pval_resolve(&b, npl_json_str(ep, "url"), &site, &missing) != 0)
				e->missing = npl_site_key_name(missing);
			else if (!(e->refused = endpoint_refused(r, npl_buf_str(&b), &site)))
				e->url = npl_arena_strdup(&cli->arena, npl_buf_str(&b));
			else
				e->refused = npl_arena_printf(&cli->arena, "%s: %s", npl_escape_in(&cli->arena, npl_buf_str(&b)),
							      e->refused);
			npl_buf_release(&b);
		}
	}
	return n;
}
