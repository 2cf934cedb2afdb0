/*
 * container.c: the container block of the plan (render --target k8s, rbg, docker), for the
 * resolver (resolve.c): image, registry, NPU resource, privileges, node labels, devices and
 * mounts, from the site values and the hardware profile; the image's tag against the recipe's
 * SGLang version floor.
 */
#include <string.h>

#include "npulaunch/text.h"

#include "resolve_internal.h"

static const char *site_value(struct ctx *c, enum npl_site_key k)
{
	const struct npl_site *s = c->o->site;

	return s && s->key[k].n ? s->key[k].v[0] : NULL;
}

/* A string of the container block: the site value, else the hardware profile's, else an error
 * naming both (need) or nothing. */
static void container_str(struct ctx *c, cJSON *ct, const char *name, enum npl_site_key k,
			  const struct npl_str *hw, int need)
{
	const char *v = site_value(c, k);
	struct origin o;

	if (v) {
		o = npl_rs_from_site(k, NULL);
	} else if (hw->s) {
		v = hw->s;
		o = npl_rs_from_layer(c->hw, hw->loc);
	} else {
		if (need)
			c->rc = npl_error(c->d, NULL, "render --target %s needs --%s: hardware profile '%s' has no container.%s",
					  c->o->target->name, npl_site_key_name(k), c->hw->id, name);
		return;
	}
	cJSON_AddItemToObject(ct, name, npl_rs_valued(cJSON_CreateString(v), &o));
}

/* --registry R: the image from R instead of its own registry (a first component with a '.' or
 * a ':', or localhost, names one; docker.io's images have none). */
static void apply_registry(struct ctx *c, cJSON *ct, const char *name)
{
	const char *reg = site_value(c, NPL_SITE_REGISTRY);
	cJSON *it = cJSON_GetObjectItemCaseSensitive(ct, name);
	const char *img = npl_json_str(it, "value"), *slash;
	struct origin o;
	char *v;

	if (!reg || !img)
		return;
	slash = strchr(img, '/');
	if (slash && (memchr(img, '.', (size_t)(slash - img)) || memchr(img, ':', (size_t)(slash - img)) ||
		      !strncmp(img, "localhost/", 10)))
		img = slash + 1;
	v = npl_arena_printf(c->a, "%s/%s", reg, img);
	o = npl_rs_from_rule("registry", npl_arena_printf(c->a, "--registry %s before the image's path", reg));
	cJSON_ReplaceItemInObjectCaseSensitive(ct, name, npl_rs_valued(cJSON_CreateString(v), &o));
}

/* The image's tag against the recipe's sglang_version, where the tag starts with SGLang's version
 * (lmsysorg/sglang:v0.5.6-cann8.3.rc1-a3): below the floor a warning; a tag without one
 * (main-cann8.5.0-a3) a note that preflight checks the floor on the node. */
static void check_image_version(struct ctx *c, const cJSON *ct)
{
	const struct npl_layer *L = c->R->sglang_min ? c->R : c->model;
	const char *img = npl_json_str(cJSON_GetObjectItemCaseSensitive(ct, "image"), "value"), *slash, *tag;

	if (!L->sglang_min || !img)
		return;
	slash = strrchr(img, '/');
	tag = strchr(img, '@') ? NULL : strrchr(slash ? slash : img, ':');
	if (!tag || npl_version_cmp(tag + 1, L->sglang_min) == -2)
		npl_diag_add(c->d, NPL_NOTE, NULL, "the image %s names no SGLang version in its tag: npulaunch preflight checks sglang_version %s on the node",
			     img, L->sglang_floor.s);
	else if (npl_version_cmp(tag + 1, L->sglang_min) < 0)
		npl_diag_add(c->d, NPL_WARNING, &L->sglang_floor.loc,
			     "the image %s carries SGLang %.*s, below the sglang_version %s of %s %s: give --image with SGLang %s",
			     img, (int)strcspn(tag + 1, "-_"), tag + 1, L->sglang_floor.s, npl_layer_kind_name(L->kind), L->id,
			     L->sglang_floor.s);
}

/* The container block: how a container runs this plan on the recipe's hardware. */
cJSON *npl_rs_container_json(struct ctx *c)
{
	const struct npl_container *hw = &c->hw->container;
	const struct npl_site *s = c->o->site;
	cJSON *ct = cJSON_CreateObject(), *v;
	struct origin o = npl_rs_from_layer(c->hw, hw->present ? hw->loc : c->hw->loc);
	int i;

	container_str(c, ct, "image", NPL_SITE_IMAGE, &hw->image, 1);
	if (site_value(c, NPL_SITE_ROUTER_IMAGE)) {
		struct npl_str none = {NULL, {NULL, 0, 0}};

		container_str(c, ct, "router_image", NPL_SITE_ROUTER_IMAGE, &none, 0);
	} else if (cJSON_GetObjectItemCaseSensitive(ct, "image")) {
		cJSON_AddItemToObject(ct, "router_image",
				      cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(ct, "image"), 1));
	}
	apply_registry(c, ct, "image");
	apply_registry(c, ct, "router_image");
	check_image_version(c, ct);
	container_str(c, ct, "npu_resource", NPL_SITE_NPU_RESOURCE, &hw->npu_resource, 1);
	container_str(c, ct, "npu_unit", NPL_SITE_NPU_UNIT, &hw->npu_unit, 1);
	container_str(c, ct, "shm_size", NPL_SITE_SHM_SIZE, &hw->shm_size, 0);
	if (strcmp(c->o->target->name, "docker")) {
		/* the pods' requests and limits (Kubernetes): Guaranteed, with whole CPUs */
		container_str(c, ct, "cpus", NPL_SITE_SERVER_CPUS, &hw->cpus, 1);
		container_str(c, ct, "memory", NPL_SITE_SERVER_MEMORY, &hw->memory, 1);
		container_str(c, ct, "router_cpus", NPL_SITE_ROUTER_CPUS, &hw->router_cpus, 1);
		container_str(c, ct, "router_memory", NPL_SITE_ROUTER_MEMORY, &hw->router_memory, 1);
	}
	if (site_value(c, NPL_SITE_PRIVILEGED)) {
		struct origin so = npl_rs_from_site(NPL_SITE_PRIVILEGED, NULL);

		cJSON_AddItemToObject(ct, "privileged",
				      npl_rs_valued(cJSON_CreateBool(!strcmp(site_value(c, NPL_SITE_PRIVILEGED), "true")), &so));
	} else {
		struct origin po = hw->privileged.set ? npl_rs_from_layer(c->hw, hw->privileged.loc)
						      : npl_rs_from_rule("privileged", "the hardware profile does not ask for it");

		cJSON_AddItemToObject(ct, "privileged", npl_rs_valued(cJSON_CreateBool(hw->privileged.set && hw->privileged.v), &po));
	}
	/* node labels: the site's replace the profile's whole */
	v = cJSON_CreateObject();
	if (s && s->key[NPL_SITE_NODE_SELECTOR].n) {
		struct origin so = npl_rs_from_site(NPL_SITE_NODE_SELECTOR, NULL);

		for (i = 0; i < s->key[NPL_SITE_NODE_SELECTOR].n; i++) {
			const char *kv = s->key[NPL_SITE_NODE_SELECTOR].v[i], *eq = strchr(kv, '=');

			cJSON_AddStringToObject(v, npl_arena_strndup(c->a, kv, (size_t)(eq - kv)), eq + 1);
		}
		cJSON_AddItemToObject(ct, "node_selector", npl_rs_valued(v, &so));
	} else {
		for (i = 0; i < hw->nnode_selector; i++)
			cJSON_AddStringToObject(v, hw->node_selector[i].name, hw->node_selector[i].value);
		cJSON_AddItemToObject(ct, "node_selector", npl_rs_valued(v, &o));
	}
	v = cJSON_CreateArray();
	for (i = 0; i < hw->ndevices; i++)
		cJSON_AddItemToArray(v, cJSON_CreateString(hw->devices[i].s));
	cJSON_AddItemToObject(ct, "devices", npl_rs_valued(v, &o));
	v = cJSON_CreateArray();
	for (i = 0; i < hw->nmounts; i++) {
		cJSON *m = cJSON_CreateObject();

		cJSON_AddStringToObject(m, "path", hw->mounts[i].name);
		cJSON_AddStringToObject(m, "kind", hw->mounts[i].value);
		cJSON_AddItemToArray(v, m);
	}
	cJSON_AddItemToObject(ct, "mounts", npl_rs_valued(v, &o));
	return ct;
}
