/* target.c: what the output targets share; see target.h. */
#include <stdlib.h>
#include <string.h>

#include "npulaunch/arena.h"
#include "npulaunch/site.h"
#include "npulaunch/target.h"
#include "npulaunch/text.h"

const cJSON *npl_target_container(const cJSON *plan, const char *name)
{
	const cJSON *ct = cJSON_GetObjectItemCaseSensitive(plan, "container");

	return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ct, name), "value");
}

const char *npl_target_container_str(const cJSON *plan, const char *name)
{
	const cJSON *v = npl_target_container(plan, name);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

const char *npl_target_site(const cJSON *plan, const char *key, const char *def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(plan, "site"), key);

	if (cJSON_IsArray(v))
		v = cJSON_GetArrayItem(v, 0);
	return cJSON_IsString(v) ? v->valuestring : def;
}

int npl_target_site_bool(const cJSON *plan, const char *key, int def)
{
	const char *v = npl_target_site(plan, key, NULL);

	return v ? !strcmp(v, "true") : def;
}

int npl_target_check_site(const cJSON *plan, const char *target, int addresses_ok, struct npl_diag *d)
{
	const cJSON *site = cJSON_GetObjectItemCaseSensitive(plan, "site"), *need;
	struct npl_buf miss = NPL_BUF_INIT;
	int rc = 0, k;

	for (k = 0; k < NPL_SITE_COUNT; k++)
		if (!addresses_ok && !npl_site_is_cluster(k) && npl_site_host_var(k) &&
		    cJSON_GetObjectItemCaseSensitive(site, npl_site_key_name(k)))
			rc = npl_error(d, NULL, "render --target %s takes no --%s: the cluster gives each pod its address",
				       target, npl_site_key_name(k));
	/* the values a script needs besides the addresses are baked into the scripts the
	 * containers run: a pod that stops on a missing one would only restart, over and over */
	cJSON_ArrayForEach(need, cJSON_GetObjectItemCaseSensitive(plan, "needs")) {
		const char *key = npl_json_str(need, "key");

		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(need, "list")) ||
		    cJSON_GetObjectItemCaseSensitive(site, key))
			continue;
		npl_buf_printf(&miss, "%s--%s", miss.len ? ", " : "", key);
	}
	if (!cJSON_GetObjectItemCaseSensitive(site, "model-path") && !strstr(npl_buf_str(&miss), "--model-path"))
		npl_buf_printf(&miss, "%s--model-path", miss.len ? ", " : "");
	if (miss.len)
		rc = npl_error(d, NULL, "render --target %s of '%s' needs %s (the containers mount and run what the scripts name)",
			       target, npl_json_str(cJSON_GetObjectItemCaseSensitive(plan, "recipe"), "id"),
			       npl_buf_str(&miss));
	npl_buf_release(&miss);
	/* a mounted path with ':' cannot be said: docker's -v splits at it, the API server refuses
	   it in a mountPath */
	for (k = 0; k < 3; k++) {
		/* under a claim (k8s --model-volume pvc:CLAIM) only the claim's mount is a mount */
		const char *vol = npl_target_site(plan, "model-volume", NULL);
		int claim = vol && npl_starts_with(vol, "pvc:");
		const char *key = k == 2 ? "model-mount" : k ? "draft-model-path" : "model-path";
		const char *v = (k == 2) == claim ? npl_target_site(plan, key, NULL) : NULL;

		if (v && strchr(v, ':'))
			rc = npl_error(d, NULL, "render --target %s: --%s '%s' holds ':', which a container's mount "
				       "cannot carry (docker -v splits at it; Kubernetes refuses it in a mountPath): "
				       "give a path without it (a symbolic link to the folder will do)", target, key, v);
	}
	cJSON_ArrayForEach(need, npl_target_container(plan, "mounts")) {
		const char *v = npl_json_str(need, "path");

		if (v && strchr(v, ':'))
			rc = npl_error(d, NULL, "render --target %s: the hardware profile's mount '%s' holds ':', which a "
				       "container's mount cannot carry", target, v);
	}
	return rc;
}

int npl_target_unused(const cJSON *plan, const char *target, int strict, const char *const *keys, const char *why,
		      struct npl_diag *d)
{
	char label[64];
	int rc = 0;

	snprintf(label, sizeof(label), "render --target %s", target);
	for (; *keys; keys++)
		if (npl_target_site(plan, *keys, NULL) &&
		    npl_site_unused(d, strict, (enum npl_site_key)npl_site_key_from_name(*keys), label, why))
			rc = -1;
	return rc;
}

const char *npl_target_prefix(const cJSON *plan, struct npl_buf *tmp)
{
	const char *given = npl_target_site(plan, "name-prefix", NULL), *m;
	size_t n;

	if (given)
		return given;
	/* the model's id as a DNS label: kimi-k2.6 -> kimi-k2-6 */
	npl_buf_reset(tmp);
	m = npl_json_str(cJSON_GetObjectItemCaseSensitive(plan, "recipe"), "model");
	if (!m || !(*m >= 'a' && *m <= 'z'))
		npl_buf_puts(tmp, "npl-");
	for (; m && *m && tmp->len < 40; m++) {
		char ch = *m >= 'A' && *m <= 'Z' ? (char)(*m - 'A' + 'a') : *m;

		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')))
			ch = '-';
		if (ch == '-' && (tmp->len == 0 || npl_buf_str(tmp)[tmp->len - 1] == '-'))
			continue;
		npl_buf_add(tmp, &ch, 1);
	}
	n = tmp->len;
	while (n && npl_buf_str(tmp)[n - 1] == '-')
		n--;
	tmp->len = n;
	return npl_buf_str(tmp);
}

/* 1 when path is dir or below it */
static int under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

int npl_target_model_volume(const cJSON *plan, const char *target, const char **claim, const char **mount,
			    struct npl_diag *d)
{
	const char *vol = npl_target_site(plan, "model-volume", "hostpath");
	static const char *const keys[] = {"model-path", "draft-model-path"};
	size_t i;
	int rc = 1;

	*claim = *mount = NULL;
	if (strncmp(vol, "pvc:", 4)) {
		if (npl_target_site(plan, "model-mount", NULL))
			return npl_error(d, NULL, "--model-mount is where a claim is mounted: give --model-volume pvc:CLAIM with it (hostpath mounts each model path where it is on the node)");
		return 0;
	}
	*claim = vol + 4;
	*mount = npl_target_site(plan, "model-mount", "/models");
	for (i = 0; i < NPL_ARRAY_SIZE(keys); i++) {
		const char *p = npl_target_site(plan, keys[i], NULL);

		if (p && !under(p, *mount))
			rc = npl_error(d, NULL, "render --target %s: --%s '%s' is not in the claim's mount %s (--model-mount)",
				       target, keys[i], p, *mount);
	}
	return rc;
}

int npl_target_model_dirs(const cJSON *plan, const char *dirs[2])
{
	const char *m = npl_target_site(plan, "model-path", NULL);
	const char *dm = npl_target_site(plan, "draft-model-path", NULL);
	int n = 0;
	const cJSON *need;

	/* the draft model only when the plan runs one */
	cJSON_ArrayForEach(need, cJSON_GetObjectItemCaseSensitive(plan, "needs"))
		if (!strcmp(npl_json_str(need, "key"), "draft-model-path"))
			break;
	if (!need)
		dm = NULL;
	if (m)
		dirs[n++] = m;
	if (dm && !(m && under(dm, m))) {
		if (m && under(m, dm))
			dirs[0] = dm;
		else
			dirs[n++] = dm;
	}
	return n;
}

struct npl_pod *npl_target_pods(const cJSON *role, int *n, int *size)
{
	const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(role, "nodes"), *node;
	int count = npl_json_int(role, "nodes_count", 1), npi = npl_json_int(role, "nodes_per_instance", 1);
	int shared = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(role, "shared_nodes"));
	int cards = npl_json_int(role, "cards_per_instance", 1), dies = npl_json_int(role, "dies_per_instance", 1);
	int npi_all = npi;   /* the nodes an instance spans, shared or not */
	struct npl_pod *pods;
	int i;

	if (count < 1)
		count = 1;
	if (shared || npi < 1)
		npi = 1;
	pods = npl_xcalloc((size_t)count, sizeof(*pods));
	for (i = 0; i < count; i++) {
		pods[i].node = i;
		pods[i].group = shared ? i : i / npi;
		pods[i].worker = shared ? 0 : i % npi;
	}
	/* what each pod's instances use: an instance spread over nodes uses its share on each */
	cJSON_ArrayForEach(node, nodes) {
		int at = npl_json_int(node, "index", 0);

		if (at < 0 || at >= count)
			continue;
		pods[at].cards += cards / (npi_all > 0 ? npi_all : 1);
		pods[at].dies += dies / (npi_all > 0 ? npi_all : 1);
	}
	*n = count;
	*size = npi;
	return pods;
}

int npl_target_ports(const cJSON *role, int *ports, char *kinds, int max)
{
	const cJSON *node, *f;
	int n = 0, pass, i;

	for (pass = 0; pass < 2; pass++)
		cJSON_ArrayForEach(node, cJSON_GetObjectItemCaseSensitive(role, "nodes"))
			cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(node, "flags")) {
				const char *name = npl_json_str(f, "flag");
				const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(f, "values"), 0);
				int p;

				if (!name || !cJSON_IsString(v) ||
				    strcmp(name, pass ? "--disaggregation-bootstrap-port" : "--port"))
					continue;
				p = npl_parse_uint(v->valuestring);
				if (p <= 0 || p > 65535)
					continue;
				for (i = 0; i < n && i < max; i++)
					if (ports[i] == p)
						break;
				if (i < n)
					continue;
				if (n < max) {
					ports[n] = p;
					kinds[n] = pass ? 'b' : 'h';
				}
				n++;
			}
	return n;
}

int npl_target_tunes(const cJSON *plan)
{
	return npl_target_site_bool(plan, "tune", 0);
}

void npl_target_untuned_note(const cJSON *plan, const char *how, struct npl_buf *out)
{
	const cJSON *tuning = NULL, *r, *s;
	const char *gov;
	int n = 0;

	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(plan, "roles"))
		if ((tuning = cJSON_GetObjectItemCaseSensitive(r, "tuning")))
			break;
	npl_buf_printf(out, "the hosts are not tuned (render with --tune for %s): each node needs ", how);
	gov = npl_json_str(cJSON_GetObjectItemCaseSensitive(tuning, "cpu_governor"), "value");
	if (gov)
		npl_buf_printf(out, "%sthe cpufreq governor %s", n++ ? ", " : "", gov);
	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(tuning, "sysctl"))
		npl_buf_printf(out, "%s%s=%s", n++ ? ", " : "", npl_json_str(s, "name"), npl_json_str(s, "value"));
	if (!n)
		npl_buf_puts(out, "nothing (the recipe tunes nothing)");
	npl_buf_puts(out, ": run 'npulaunch tune --apply ID' (or a role script's --tune-only) on each node first");
}
