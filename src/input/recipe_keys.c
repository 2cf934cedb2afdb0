/* recipe_keys.c: one YAML document into one layer: the table of top-level keys, the keys of a
 * kind's own (identity, hardware container and preflight, topology, targets, waivers,
 * deviations), the keys each kind must have, and the layer built and checked. */
#include <string.h>

#include "npulaunch/recipe.h"
#include "npulaunch/text.h"
#include "recipe_internal.h"

/* ---- container (hardware profiles) ------------------------------------ */

/* A mapping of single values into name/value pairs, each name checked by name_ok and each
 * value by value_ok (either may be NULL). */
static int read_pairs(struct ctx *c, const struct npl_ynode *v, const char *key,
		      int (*name_ok)(const char *), int (*value_ok)(const char *), const char *what,
		      struct npl_env_set **out, int *n)
{
	int i, rc = 0;

	if (npl_recipe_want_map(c, v, key))
		return -1;
	*out = npl_arena_calloc(c->a, (size_t)v->n + 1, sizeof(**out));
	*n = 0;
	for (i = 0; i < v->n; i++) {
		const struct npl_ynode *name = v->kids[2 * i], *val = v->kids[2 * i + 1];

		if (val->kind != NPL_YSCALAR || npl_ynull(val) || (name_ok && !name_ok(name->str)) ||
		    (value_ok && !value_ok(val->str))) {
			rc = npl_recipe_fail(c, val, "'%s: %s' in '%s' is not %s", name->str,
					     val->kind == NPL_YSCALAR ? val->str : npl_ykind_name(val), key, what);
			continue;
		}
		(*out)[*n].name = name->str;
		(*out)[*n].value = val->str;
		(*out)[(*n)++].loc = name->loc;
	}
	return rc;
}

static int is_label_text(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 253)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr("-_./", *s)))
			return 0;
	return 1;
}

static int is_mount_kind(const char *s)
{
	return !strcmp(s, "Directory") || !strcmp(s, "File") || !strcmp(s, "DirectoryOrCreate");
}

static int is_mount_path(const char *s)
{
	return npl_recipe_is_abs_path(s) && strcmp(s, "/") && !strpbrk(s, ":,\r");
}

/* A memory size as Kubernetes and site.c take one: 1 to 12 digits, Ki, Mi, Gi or Ti. */
static int is_mem_size(const char *s)
{
	const char *p = s;

	while (*p >= '0' && *p <= '9')
		p++;
	return p > s && *s != '0' && p - s <= 12 &&
	       (!strcmp(p, "Ki") || !strcmp(p, "Mi") || !strcmp(p, "Gi") || !strcmp(p, "Ti"));
}

static int f_container_key(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
			   void *arg)
{
	struct npl_container *ct = &c->L->container;
	const char *key = k->str;

	(void)arg;
	if (npl_keyis(key, "privileged"))
		return npl_recipe_read_bool(c, v, key, &ct->privileged);
	if (npl_keyis(key, "node_selector"))
		return read_pairs(c, v, key, is_label_text, is_label_text, "a node label (key: value)",
				  &ct->node_selector, &ct->nnode_selector);
	if (npl_keyis(key, "mounts"))
		return read_pairs(c, v, key, is_mount_path, is_mount_kind,
				  "a host path and its kind (Directory, File or DirectoryOrCreate)", &ct->mounts,
				  &ct->nmounts);
	if (npl_keyis(key, "devices"))
		return npl_recipe_read_strlist(c, v, key, is_mount_path, "a device file (an absolute path)", &ct->devices,
					       &ct->ndevices);
	if (npl_keyis(key, "image"))
		return npl_recipe_read_str(c, v, key, &ct->image);
	if (npl_keyis(key, "npu_resource"))
		return npl_recipe_read_str(c, v, key, &ct->npu_resource);
	if (npl_keyis(key, "shm_size"))
		return npl_recipe_read_str(c, v, key, &ct->shm_size);
	if (npl_keyis(key, "cpus") || npl_keyis(key, "router_cpus")) {
		if (npl_recipe_read_str(c, v, key, key[0] == 'c' ? &ct->cpus : &ct->router_cpus))
			return -1;
		if (npl_parse_uint(v->str) < 1 || npl_parse_uint(v->str) > 100000)
			return npl_recipe_fail(c, v, "'%s' is a whole number of CPUs from 1 to 100000, not '%s'", key, v->str);
		return 0;
	}
	if (npl_keyis(key, "memory") || npl_keyis(key, "router_memory")) {
		if (npl_recipe_read_str(c, v, key, key[0] == 'm' ? &ct->memory : &ct->router_memory))
			return -1;
		if (!is_mem_size(v->str))
			return npl_recipe_fail(c, v, "'%s' is a size in Ki, Mi, Gi or Ti (like 1024Gi), not '%s'", key, v->str);
		return 0;
	}
	if (npl_recipe_read_str(c, v, key, &ct->npu_unit))
		return -1;
	if (strcmp(v->str, "card") && strcmp(v->str, "die"))
		return npl_recipe_fail(c, v, "'npu_unit' is card or die (what the device plugin counts), not '%s'", v->str);
	return 0;
}

static const struct field container_fields[] = {
	{"image", K_HW, f_container_key},
	{"npu_resource", K_HW, f_container_key},
	{"npu_unit", K_HW, f_container_key},
	{"node_selector", K_HW, f_container_key},
	{"privileged", K_HW, f_container_key},
	{"devices", K_HW, f_container_key},
	{"mounts", K_HW, f_container_key},
	{"shm_size", K_HW, f_container_key},
	{"cpus", K_HW, f_container_key},
	{"memory", K_HW, f_container_key},
	{"router_cpus", K_HW, f_container_key},
	{"router_memory", K_HW, f_container_key},
};

static int f_container(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	(void)arg;
	if (npl_recipe_want_map(c, v, k->str))
		return -1;
	c->L->container.present = 1;
	c->L->container.loc = k->loc;
	return npl_recipe_walk(c, v, container_fields, NPL_ARRAY_SIZE(container_fields),
			       "'container'", NULL);
}

static int f_preflight_key(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
			   void *arg)
{
	struct npl_layer *L = c->L;
	const char *key = k->str;

	(void)arg;
	if (npl_keyis(key, "driver_version"))
		return npl_recipe_read_strlist(c, v, key, npl_recipe_is_abs_path, "an absolute path", &L->pf_driver, &L->npf_driver);
	if (npl_keyis(key, "toolkit_version"))
		return npl_recipe_read_strlist(c, v, key, npl_recipe_is_abs_path, "an absolute path", &L->pf_toolkit, &L->npf_toolkit);
	return npl_recipe_read_strlist(c, v, key, npl_recipe_is_abs_path, "an absolute path", &L->pf_tools, &L->npf_tools);
}

static const struct field preflight_fields[] = {
	{"driver_version", K_HW, f_preflight_key},
	{"toolkit_version", K_HW, f_preflight_key},
	{"tool_path", K_HW, f_preflight_key},
};

static int f_preflight(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	(void)arg;
	if (npl_recipe_want_map(c, v, k->str))
		return -1;
	c->L->pf_loc = k->loc;
	return npl_recipe_walk(c, v, preflight_fields, NPL_ARRAY_SIZE(preflight_fields),
			       "'preflight'", NULL);
}

/* ---- topology (recipes) ---------------------------------------------- */

static int f_topo_role_key(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v,
			   void *arg)
{
	struct npl_topology *t = arg;

	if (npl_keyis(k->str, "instances"))
		return npl_recipe_read_int(c, v, k->str, 1, 1024, &t->instances);
	if (npl_keyis(k->str, "dies"))
		return npl_recipe_read_int(c, v, k->str, 1, 65536, &t->dies);
	if (npl_keyis(k->str, "first_card"))
		return npl_recipe_read_int(c, v, k->str, 0, 65535, &t->first_card);
	if (npl_keyis(k->str, "per_node"))
		return npl_recipe_read_int(c, v, k->str, 1, 1024, &t->per_node);
	return npl_recipe_read_int(c, v, k->str, 1, 65536, &t->cards);
}

static const struct field topo_role_fields[] = {
	{"instances", K_ALL, f_topo_role_key},
	{"cards", K_ALL, f_topo_role_key},
	{"dies", K_ALL, f_topo_role_key},
	{"first_card", K_ALL, f_topo_role_key},
	{"per_node", K_ALL, f_topo_role_key},
};

static int f_topo_key(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_topology *t = &c->L->topo[npl_keyis(k->str, "prefill")  ? NPL_TOPO_PREFILL
					     : npl_keyis(k->str, "decode") ? NPL_TOPO_DECODE
									 : NPL_TOPO_PD_MIXED];
	int rc;

	(void)arg;
	if (npl_recipe_want_map(c, v, k->str))
		return -1;
	rc = npl_recipe_walk(c, v, topo_role_fields, NPL_ARRAY_SIZE(topo_role_fields),
			     npl_arena_printf(c->a, "topology '%s'", k->str), t);
	if (rc == 0 && (!t->instances.set || !t->cards.set))
		return npl_recipe_fail(c, v, "topology '%s' needs both 'instances' and 'cards'",
				       k->str);
	return rc;
}

static const struct field topo_fields[] = {
	{"prefill", K_ALL, f_topo_key},
	{"decode", K_ALL, f_topo_key},
	{"pd-mixed", K_ALL, f_topo_key},
};

static int f_topology(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	(void)arg;
	c->L->topo_loc = k->loc;
	if (npl_recipe_want_map(c, v, k->str))
		return -1;
	return npl_recipe_walk(c, v, topo_fields, NPL_ARRAY_SIZE(topo_fields), "'topology'", NULL);
}

/* ---- identity and metadata -------------------------------------------- */

static int f_ident(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_layer *L = c->L;
	const char *key = k->str;
	struct npl_str s;

	(void)arg;
	if (npl_keyis(key, "dies_per_card"))
		return npl_recipe_read_int(c, v, key, 1, 64, &L->dies_per_card);
	if (npl_keyis(key, "cards_per_node"))
		return npl_recipe_read_int(c, v, key, 1, 1024, &L->cards_per_node);
	if (npl_keyis(key, "socket_ifname"))
		return npl_recipe_read_bool(c, v, key, &L->socket_ifname);
	if (npl_keyis(key, "aliases"))
		return npl_recipe_read_strlist(c, v, key, NULL, NULL, &L->aliases, &L->naliases);
	if (npl_keyis(key, "ifname_env")) {
		L->ifname_env_set = 1;
		return npl_recipe_read_strlist(c, v, key, npl_recipe_is_env_name,
					       "an environment variable name", &L->ifname_env,
					       &L->nifname_env);
	}
	if (npl_keyis(key, "cards")) {
		struct npl_int n = {0};

		if (npl_recipe_read_int(c, v, key, 1, 65536, &n))
			return -1;
		L->cards = n.v;
		L->cards_loc = v->loc;
		return 0;
	}
	if (npl_recipe_read_str(c, v, key, &s))
		return -1;
	if (strpbrk(s.s, "\n\r\t") && strcmp(key, "notes"))
		return npl_recipe_fail(c, v, "'%s' must be one line", key);
	if (npl_keyis(key, "version")) {
		L->db_version = s.s;
	} else if (npl_keyis(key, "default_hardware")) {
		L->default_hardware = s;
	} else if (npl_keyis(key, "id")) {
		if (!npl_recipe_is_id(s.s))
			return npl_recipe_fail(c, v, "'%s' is not an id (lowercase letters, digits, '.', '_', '-')", s.s);
		if (strlen(s.s) > NPL_ID_MAX)
			return npl_recipe_fail(c, v, "the id is %zu characters long: at most %d (it names a folder and a file)",
					       strlen(s.s), NPL_ID_MAX);
		L->id = s.s;
	} else if (npl_keyis(key, "name") || npl_keyis(key, "title")) {
		L->name = s.s;
		if (npl_keyis(key, "title")) {
			L->id = npl_recipe_id_from_title(c->a, s.s);
			if (!npl_recipe_is_id(L->id))
				return npl_recipe_fail(c, v, "the title gives the id '%s', which has characters an id may not have (lowercase letters, digits, '.', '_', '-')",
						       L->id);
			if (strlen(L->id) > NPL_ID_MAX)
				return npl_recipe_fail(c, v, "the title gives an id of %zu characters: at most %d (it names a "
						       "folder and a file): shorten the title", strlen(L->id), NPL_ID_MAX);
		}
	} else if (npl_keyis(key, "notes")) {
		L->notes = s.s;
	} else if (npl_keyis(key, "model")) {
		L->model_ref = s;
	} else if (npl_keyis(key, "hardware")) {
		L->hardware_ref = s;
	} else if (npl_keyis(key, "mode")) {
		L->mode_loc = v->loc;
		if (!strcmp(s.s, "pd-mixed"))
			L->mode = NPL_MODE_PD_MIXED;
		else if (!strcmp(s.s, "pd-disagg"))
			L->mode = NPL_MODE_PD_DISAGG;
		else
			return npl_recipe_fail(c, v, "unknown mode '%s' (pd-mixed or pd-disagg)",
					       s.s);
	} else if (npl_keyis(key, "quantization")) {
		L->quantization = s.s;
	} else if (npl_keyis(key, "dataset")) {
		L->dataset = s.s;
	} else if (npl_keyis(key, "tier")) {
		if (strcmp(s.s, "low-latency") && strcmp(s.s, "high-throughput"))
			return npl_recipe_fail(c, v, "unknown tier '%s' (low-latency or high-throughput)", s.s);
		L->tier = s.s;
	} else if (npl_keyis(key, "entry_host")) {
		L->entry_host = s;
	}
	return 0;
}

/* tpot, ttft, e2e: a latency target; null (a page's "-") is none */
static int f_duration(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_layer *L = c->L;
	long long us, *to_us = npl_keyis(k->str, "ttft") ? &L->ttft_us : npl_keyis(k->str, "e2e") ? &L->e2e_us : &L->tpot_us;
	const char **to_text = npl_keyis(k->str, "ttft") ? &L->ttft_text : npl_keyis(k->str, "e2e") ? &L->e2e_text : &L->tpot_text;

	(void)arg;
	if (npl_recipe_want_scalar(c, v, k->str))
		return -1;
	if (npl_ynull(v))
		return 0;
	us = npl_parse_duration_us(v->str);
	if (us <= 0)
		return npl_recipe_fail(c, v, "'%s' must be a duration like 20ms or 5s, not '%s'", k->str, v->str);
	*to_us = us;
	*to_text = v->str;
	return 0;
}

/* throughput: the output tokens per second the recipe reaches at least; null is none */
static int f_throughput(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	static const struct npl_number_spec spec = {"output tokens per second", 0, 1e12, 0};
	double x;

	(void)arg;
	if (npl_recipe_want_scalar(c, v, k->str))
		return -1;
	if (npl_ynull(v))
		return 0;
	if (npl_parse_number(v->str, &spec, &x) || !(x > 0))
		return npl_recipe_fail(c, v, "'throughput' is the output tokens per second the recipe reaches at least, a positive number like 1200, not '%s'",
				       v->str);
	c->L->throughput = x;
	c->L->throughput_text = v->str;
	return 0;
}

/* sglang_version: ">= 0.5.16" (a leading v is allowed, as images write it): the version floor */
static int f_sglang_version(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_str s;
	const char *p, *min;
	int digits = 0, dots = 0;

	(void)arg;
	if (npl_recipe_read_str(c, v, k->str, &s))
		return -1;
	p = s.s;
	if (p[0] != '>' || p[1] != '=')
		goto bad;
	for (p += 2; *p == ' '; p++)
		;
	p += *p == 'v';
	min = p;
	/* numbers separated by single dots: 0.5.16 */
	for (; *p; p++) {
		if (*p >= '0' && *p <= '9') {
			digits++;
		} else if (*p == '.' && digits && p[1] >= '0' && p[1] <= '9' && dots < 3) {
			dots++;
		} else {
			goto bad;
		}
	}
	if (!digits)
		goto bad;
	c->L->sglang_floor = s;
	c->L->sglang_min = min;
	return 0;
bad:
	return npl_recipe_fail(c, v, "'sglang_version' is a floor like \">= 0.5.16\" (the SGLang version the deployment needs at least), not '%s'",
			       s.s);
}

/* transfer_protocol: how memfabric moves the KV cache between prefill and decode (the glossary's
 * protocols); null removes what an earlier layer chose */
static int f_transfer_protocol(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	static const char *const protocols[] = {"sdma", "device_rdma", "host_rdma", "device_urma"};
	const char *best;
	size_t i;

	(void)arg;
	if (npl_recipe_want_scalar(c, v, k->str))
		return -1;
	c->L->transfer_protocol_loc = k->loc;
	if (npl_ynull(v)) {
		c->L->transfer_protocol_removed = 1;
		return 0;
	}
	for (i = 0; i < NPL_ARRAY_SIZE(protocols); i++)
		if (!strcmp(v->str, protocols[i])) {
			c->L->transfer_protocol.s = protocols[i];
			c->L->transfer_protocol.loc = v->loc;
			return 0;
		}
	best = npl_did_you_mean(v->str, protocols, (int)NPL_ARRAY_SIZE(protocols));
	return npl_recipe_fail(c, v, "unknown transfer_protocol '%s'%s%s%s (sdma, device_rdma, host_rdma or device_urma)", v->str,
			       best ? " (did you mean '" : "", best ? best : "", best ? "'?)" : "");
}

/* Rules whose warnings a recipe may waive, with a reason. */
static const char *const waivable[] = {"graph-batch"};

static int f_waive(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_layer *L = c->L;
	int i, j, rc = 0;

	(void)arg;
	if (npl_recipe_want_map(c, v, k->str))
		return -1;
	L->waive = npl_arena_calloc(c->a, (size_t)v->n, sizeof(*L->waive));
	for (i = 0; i < v->n; i++) {
		const struct npl_ynode *rule = v->kids[2 * i], *why = v->kids[2 * i + 1];

		for (j = 0; j < (int)NPL_ARRAY_SIZE(waivable); j++)
			if (!strcmp(waivable[j], rule->str))
				break;
		if (j == (int)NPL_ARRAY_SIZE(waivable)) {
			rc = npl_recipe_fail(c, rule, "'%s' is not a rule a recipe may waive (graph-batch)", rule->str);
			continue;
		}
		if (why->kind != NPL_YSCALAR || npl_ynull(why) || !*why->str) {
			rc = npl_recipe_fail(c, why, "waiving '%s' needs the reason, as text",
					     rule->str);
			continue;
		}
		L->waive[L->nwaive].name = rule->str;
		L->waive[L->nwaive].value = why->str;
		L->waive[L->nwaive++].loc = rule->loc;
	}
	return rc;
}

/* deviations: what -> why the recipe deploys what its page evidently means. */
static int f_deviations(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_layer *L = c->L;
	int i, rc = 0;

	(void)arg;
	if (npl_recipe_want_map(c, v, k->str))
		return -1;
	L->deviation = npl_arena_calloc(c->a, (size_t)v->n, sizeof(*L->deviation));
	for (i = 0; i < v->n; i++) {
		const struct npl_ynode *what = v->kids[2 * i], *why = v->kids[2 * i + 1];

		if (why->kind != NPL_YSCALAR || npl_ynull(why) || !*why->str) {
			rc = npl_recipe_fail(c, why, "deviation '%s' needs the reason, as text",
					     what->str);
			continue;
		}
		L->deviation[L->ndeviation].name = what->str;
		L->deviation[L->ndeviation].value = why->str;
		L->deviation[L->ndeviation++].loc = what->loc;
	}
	return rc;
}

/* provenance: {page: FILE, section: TITLE, commit: HEX}, where an imported document came from */
static int f_prov_field(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	struct npl_str s;

	(void)arg;
	if (npl_recipe_read_str(c, v, k->str, &s))
		return -1;
	if (npl_keyis(k->str, "page"))
		c->L->prov_page = s.s;
	else if (npl_keyis(k->str, "section"))
		c->L->prov_section = s.s;
	else
		c->L->prov_commit = s.s;
	return 0;
}

static const struct field prov_fields[] = {
	{"page", K_MODEL | K_RECIPE, f_prov_field},
	{"section", K_RECIPE, f_prov_field},
	{"commit", K_MODEL | K_RECIPE, f_prov_field},
};

static int f_provenance(struct ctx *c, const struct npl_ynode *k, const struct npl_ynode *v, void *arg)
{
	(void)arg;
	if (npl_recipe_want_map(c, v, k->str))
		return -1;
	return npl_recipe_walk(c, v, prov_fields, NPL_ARRAY_SIZE(prov_fields), "'provenance'", NULL);
}

/* ---- the top-level keys, and the layer of a document ------------------ */

static const struct field top_fields[] = {
	{"kind", K_ALL, NULL},
	{"version", K_DEF, f_ident},
	{"default_hardware", K_DEF, f_ident},
	{"id", K_HW | K_MODEL, f_ident},
	{"name", K_HW | K_MODEL, f_ident},
	{"aliases", K_HW | K_MODEL | K_RECIPE, f_ident},
	{"provenance", K_MODEL | K_RECIPE, f_provenance},
	{"dies_per_card", K_HW, f_ident},
	{"cards_per_node", K_HW, f_ident},
	{"container", K_HW, f_container},
	{"preflight", K_HW, f_preflight},
	{"title", K_RECIPE, f_ident},
	{"model", K_RECIPE, f_ident},
	{"hardware", K_RECIPE, f_ident},
	{"cards", K_RECIPE, f_ident},
	{"mode", K_RECIPE, f_ident},
	{"quantization", K_RECIPE, f_ident},
	{"dataset", K_RECIPE, f_ident},
	{"tpot", K_RECIPE, f_duration},
	{"ttft", K_RECIPE, f_duration},
	{"e2e", K_RECIPE, f_duration},
	{"throughput", K_RECIPE, f_throughput},
	{"sglang_version", K_MODEL | K_RECIPE, f_sglang_version},
	{"transfer_protocol", K_HW | K_MODEL | K_RECIPE, f_transfer_protocol},
	{"tier", K_RECIPE, f_ident},
	{"topology", K_RECIPE, f_topology},
	{"waive", K_RECIPE, f_waive},
	{"deviations", K_MODEL | K_RECIPE, f_deviations},
	{"notes", K_ALL, f_ident},
	{"env", K_ALL, npl_recipe_f_scope_top},
	{"unset", K_ALL, npl_recipe_f_scope_top},
	{"source", K_ALL, npl_recipe_f_scope_top},
	{"flags", K_ALL, npl_recipe_f_scope_top},
	{"explicit", K_ALL, npl_recipe_f_scope_top},
	{"roles", K_ALL, npl_recipe_f_roles},
	{"router", K_ALL, npl_recipe_f_router},
	{"bench", K_ALL, npl_recipe_f_bench},
	{"benchmarks", K_RECIPE, npl_recipe_f_benchmarks},
	{"speculative", K_ALL, npl_recipe_f_speculative},
	{"tuning", K_ALL, npl_recipe_f_tuning},
	{"ports", K_ALL, npl_recipe_f_ports},
	{"launch", K_ALL, npl_recipe_f_launch},
	{"entry_host", K_ALL, f_ident},
	{"socket_ifname", K_ALL, f_ident},
	{"ifname_env", K_ALL, f_ident},
};

/* Keys a document of each kind must have. */
static const char *const required[NPL_LAYER_COUNT][10] = {
	[NPL_LAYER_DEFAULTS] = {"version"},
	[NPL_LAYER_HARDWARE] = {"id", "name", "dies_per_card", "cards_per_node"},
	[NPL_LAYER_MODEL] = {"id", "name"},
	[NPL_LAYER_RECIPE] = {"title", "model", "hardware", "cards", "mode", "quantization", "dataset",
			      "bench"},
};

/* The layer of one document (NULL for an engine-flags document, or when it is not a layer). */
struct npl_layer *npl_recipe_build_layer(struct ctx *c, const char *file,
					 const struct npl_ynode *doc, int source)
{
	const struct npl_ynode *kind;
	struct npl_layer *L;
	int i, k, before;

	if (doc->kind != NPL_YMAP) {
		npl_recipe_fail(c, doc, "a recipe file holds mappings (key: value lines), not %s", npl_ykind_name(doc));
		return NULL;
	}
	kind = npl_ymap_get(doc, "kind");
	if (!kind) {
		npl_recipe_fail(
		    c, doc, "missing 'kind' (defaults, hardware, model, recipe or engine-flags)");
		return NULL;
	}
	if (kind->kind == NPL_YSCALAR && !strcmp(kind->str, "engine-flags")) {
		c->db->engine_flags = doc;
		c->db->engine_flags_file = file;
		return NULL;
	}
	for (k = 0; k < NPL_LAYER_COUNT; k++)
		if (kind->kind == NPL_YSCALAR && !strcmp(kind->str, npl_recipe_kind_names[k]))
			break;
	if (k == NPL_LAYER_COUNT) {
		static const char *const all[] = {"defaults", "hardware", "model", "recipe",
						  "engine-flags"};
		const char *best = kind->kind == NPL_YSCALAR ? npl_did_you_mean(kind->str, all, 5) : NULL;

		if (best)
			npl_recipe_fail(c, kind, "unknown kind '%s' (did you mean '%s'?)",
					kind->str, best);
		else
			npl_recipe_fail(c, kind, "'kind' must be defaults, hardware, model, recipe or engine-flags");
		return NULL;
	}
	L = npl_arena_alloc(c->a, sizeof(*L));
	L->kind = (enum npl_layer_kind)k;
	L->file = file;
	L->loc = doc->loc;
	L->source = source;
	L->tpot_us = L->ttft_us = L->e2e_us = -1;
	L->throughput = -1;
	c->L = L;
	before = c->d->errors;
	npl_recipe_walk(c, doc, top_fields, NPL_ARRAY_SIZE(top_fields), npl_recipe_kind_articles[k],
			NULL);
	for (i = 0; required[k][i]; i++)
		if (!npl_ymap_get(doc, required[k][i]))
			npl_recipe_fail(c, doc, "%s needs '%s'", npl_recipe_kind_articles[k],
					required[k][i]);
	if (k == NPL_LAYER_DEFAULTS)
		L->id = "defaults";
	if (L->kind == NPL_LAYER_RECIPE && L->bench.dataset.s == NULL && npl_ymap_get(doc, "bench"))
		npl_recipe_fail(c, npl_ymap_get(doc, "bench"), "the recipe's 'bench' needs 'dataset'");
	L->invalid = c->d->errors != before;
	return L;
}
