/* site.c: site values from flags and site files, validated; see site.h. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/buf.h"
#include "npulaunch/fsio.h"
#include "npulaunch/site.h"
#include "npulaunch/text.h"
#include "npulaunch/yaml.h"

static const struct {
	const char *name, *var, *hosts;
	int list;
} keys[NPL_SITE_COUNT] = {
	{"model-path", "MODEL_PATH", NULL, 0},
	{"draft-model-path", "DRAFT_MODEL_PATH", NULL, 0},
	{"ifname", "IFNAME", NULL, 0},
	{"node-ip", "NODE_IPS", "NODE_HOSTS", 1},
	{"prefill-ip", "PREFILL_IPS", "PREFILL_HOSTS", 1},
	{"decode-ip", "DECODE_IPS", "DECODE_HOSTS", 1},
	{"entry-ip", "ENTRY_IP", "ENTRY_HOST", 1},
	/* cluster values: no variable (cluster_ok() below checks them) */
	{"image", NULL, NULL, 0},
	{"router-image", NULL, NULL, 0},
	{"registry", NULL, NULL, 0},
	{"namespace", NULL, NULL, 0},
	{"name-prefix", NULL, NULL, 0},
	{"npu-resource", NULL, NULL, 0},
	{"npu-unit", NULL, NULL, 0},
	{"model-volume", NULL, NULL, 0},
	{"model-mount", NULL, NULL, 0},
	{"node-selector", NULL, NULL, 1},
	{"scheduler", NULL, NULL, 0},
	{"gang", NULL, NULL, 0},
	{"server-cpus", NULL, NULL, 0},
	{"server-memory", NULL, NULL, 0},
	{"router-cpus", NULL, NULL, 0},
	{"router-memory", NULL, NULL, 0},
	{"router-node-selector", NULL, NULL, 1},
	{"toleration", NULL, NULL, 1},
	{"image-pull-secret", NULL, NULL, 1},
	{"priority-class", NULL, NULL, 0},
	{"startup-timeout", NULL, NULL, 0},
	{"tune", NULL, NULL, 0},
	{"privileged", NULL, NULL, 0},
	{"shm-size", NULL, NULL, 0},
	{"container-runtime", NULL, NULL, 0},
	{"slurm-partition", NULL, NULL, 0},
	{"slurm-account", NULL, NULL, 0},
	{"slurm-time", NULL, NULL, 0},
	{"slurm-gres", NULL, NULL, 0},
	{"slurm-log-dir", NULL, NULL, 0},
	{"slurm-router-node", NULL, NULL, 0},
	{"slurm-npulaunch", NULL, NULL, 0},
};

static int cluster_ok(struct npl_site *s, enum npl_site_key k, const char *value, const char *what,
		      const struct npl_loc *where, struct npl_diag *d);

const char *npl_site_key_name(enum npl_site_key k)
{
	return keys[k].name;
}

const char *npl_site_var(enum npl_site_key k)
{
	return keys[k].var;
}

const char *npl_site_host_var(enum npl_site_key k)
{
	return keys[k].hosts;
}

int npl_site_is_list(enum npl_site_key k)
{
	return keys[k].list;
}

int npl_site_is_cluster(enum npl_site_key k)
{
	return keys[k].var == NULL;
}

int npl_site_key_from_name(const char *name)
{
	int k;

	for (k = 0; k < NPL_SITE_COUNT; k++)
		if (!strcmp(keys[k].name, name))
			return k;
	return -1;
}

int npl_ip_canonical(const char *s, char *out, size_t n)
{
	unsigned char bin[sizeof(struct in6_addr)];

	if (inet_pton(AF_INET, s, bin) == 1)
		return inet_ntop(AF_INET, bin, out, (socklen_t)n) ? 0 : -1;
	if (inet_pton(AF_INET6, s, bin) == 1)
		return inet_ntop(AF_INET6, bin, out, (socklen_t)n) ? 0 : -1;
	return -1;
}

int npl_ifname_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 15 || !strcmp(s, ".") || !strcmp(s, ".."))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr("_.-", *s)))
			return 0;
	return 1;
}

/* 1 when s is n words of chars joined by sep (sep 0: one word), each 1 to 64 long. */
static int words_of(const char *s, const char *chars, char sep)
{
	size_t len = 0;

	for (;; s++) {
		if (*s == '\0' || (sep && *s == sep)) {
			if (len == 0 || len > 64)
				return 0;
			if (*s == '\0')
				return 1;
			len = 0;
		} else if (!strchr(chars, *s)) {
			return 0;
		} else {
			len++;
		}
	}
}

/* 1 when s is a number of 1 to 6 digits; *s moved past it. */
static int digits(const char **s)
{
	int n = 0;

	while (**s >= '0' && **s <= '9' && n < 7) {
		(*s)++;
		n++;
	}
	return n > 0 && n < 7;
}

/* Slurm's time limits: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S, or UNLIMITED/INFINITE. */
static int slurm_time_ok(const char *s)
{
	int parts = 1;

	if (!strcmp(s, "UNLIMITED") || !strcmp(s, "INFINITE") || !strcmp(s, "unlimited") ||
	    !strcmp(s, "infinite"))
		return 1;
	if (!digits(&s))
		return 0;
	if (*s == '-') {
		s++;
		if (!digits(&s))
			return 0;
	}
	while (*s == ':') {
		s++;
		if (!digits(&s))
			return 0;
		parts++;
	}
	return *s == '\0' && parts <= 3;
}

#define NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-"

/* The values of render --target slurm, checked as sbatch would take them in an #SBATCH line. */
static int slurm_value(enum npl_site_key k, const char *value, const char *what, const struct npl_loc *where,
		       struct npl_diag *d)
{
	switch (k) {
	case NPL_SITE_SLURM_PARTITION:
		if (!words_of(value, NAME_CHARS, ','))
			return npl_error(d, where, "%s '%s' is not a partition name (letters, digits, '_', '.', '-'; several joined by ',')",
					 what, value);
		return 0;
	case NPL_SITE_SLURM_ACCOUNT:
		if (!words_of(value, NAME_CHARS, 0))
			return npl_error(d, where, "%s '%s' is not an account name (letters, digits, '_', '.', '-')", what, value);
		return 0;
	case NPL_SITE_SLURM_TIME:
		if (!slurm_time_ok(value))
			return npl_error(d, where, "%s '%s' is not a Slurm time limit (MINUTES, MINUTES:SECONDS, HOURS:MINUTES:SECONDS, DAYS-HOURS, DAYS-HOURS:MINUTES, DAYS-HOURS:MINUTES:SECONDS or UNLIMITED)",
					 what, value);
		return 0;
	case NPL_SITE_SLURM_GRES: {
		const char *type = strchr(value, ':');

		/* NAME:8 would be read as a count: the count is the hardware profile's */
		if (!words_of(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", ':') ||
		    (type && (strchr(type + 1, ':') || strspn(type + 1, "0123456789") == strlen(type + 1))))
			return npl_error(d, where, "%s '%s' is not a generic resource name (NAME or NAME:TYPE, as in npu or npu:910b; the count is the hardware's cards per node)",
					 what, value);
		return 0;
	}
	case NPL_SITE_SLURM_ROUTER_NODE:
		if (!words_of(value, NAME_CHARS, 0))
			return npl_error(d, where, "%s '%s' is not a node name (letters, digits, '_', '.', '-')", what, value);
		return 0;
	case NPL_SITE_SLURM_LOG_DIR:
	case NPL_SITE_SLURM_NPULAUNCH:
		if (value[0] != '/')
			return npl_error(d, where, "%s must be an absolute path, not '%s'", what, value);
		if (strpbrk(value, "\n\r"))
			return npl_error(d, where, "%s must not contain a line break", what);
		return 0;
	default:
		return 0;
	}
}

/* What the duplicate checks of a list look up: an address, a node label's KEY=. */
static size_t seen_len(enum npl_site_key k, const char *value)
{
	return (k == NPL_SITE_NODE_SELECTOR || k == NPL_SITE_ROUTER_NODE_SELECTOR) && strchr(value, '=') ? (size_t)(strchr(value, '=') - value) + 1
								 : strlen(value);
}

/* Whether a list holds the len bytes at key: in time independent of its length. */
static int seen(const struct npl_site_value *v, const char *key, size_t len)
{
	int i = npl_strmap_get(&v->seen, key, len);

	/* a copy whose list was cut short (render --all) keeps the longer index */
	return i >= 0 && i < v->n && !strncmp(v->v[i], key, len);
}

/* The last value of a list into its index, which is rebuilt when it is not the list's own. */
static void seen_add(struct npl_site_value *v, enum npl_site_key k, struct npl_arena *a)
{
	int i;

	if (v->seen.n != (size_t)v->n - 1) {
		npl_strmap_clear(&v->seen);
		for (i = 0; i + 1 < v->n; i++)
			npl_strmap_add(&v->seen, a, v->v[i], seen_len(k, v->v[i]), i);
	}
	npl_strmap_add(&v->seen, a, v->v[v->n - 1], seen_len(k, v->v[v->n - 1]), v->n - 1);
}

int npl_site_set(struct npl_site *s, struct npl_arena *a, enum npl_site_key k, const char *value,
		 const struct npl_loc *where, struct npl_diag *d)
{
	return npl_site_set_as(s, a, k, value, NULL, where, d);
}

int npl_site_set_as(struct npl_site *s, struct npl_arena *a, enum npl_site_key k, const char *value,
		    const char *what, const struct npl_loc *where, struct npl_diag *d)
{
	struct npl_site_value *v = &s->key[k];
	char canon[INET6_ADDRSTRLEN], flag[64];
	const char *store = value;
	size_t bad;

	if (!what) {
		snprintf(flag, sizeof(flag), "--%s", keys[k].name);
		what = flag;
	}
	/* every output carries the value (manifest.json, show --json, the YAML of k8s and rbg):
	   JSON and YAML hold UTF-8 text only */
	if ((bad = npl_utf8_invalid(value, strlen(value))) < strlen(value))
		return npl_error(d, where, "%s is not UTF-8 text: the byte 0x%02x at byte %zu does not start a character (JSON and YAML carry UTF-8 only)",
				 what, (unsigned char)value[bad], bad + 1);
	switch (k) {
	case NPL_SITE_SLURM_PARTITION:
	case NPL_SITE_SLURM_ACCOUNT:
	case NPL_SITE_SLURM_TIME:
	case NPL_SITE_SLURM_GRES:
	case NPL_SITE_SLURM_LOG_DIR:
	case NPL_SITE_SLURM_ROUTER_NODE:
	case NPL_SITE_SLURM_NPULAUNCH:
		if (slurm_value(k, value, what, where, d))
			return -1;
		break;
	case NPL_SITE_MODEL_PATH:
	case NPL_SITE_DRAFT_MODEL_PATH:
		if (value[0] != '/')
			return npl_error(d, where, "%s must be an absolute path, not '%s'", what, value);
		if (strpbrk(value, "\n\r"))
			return npl_error(d, where, "%s must not contain a line break", what);
		break;
	case NPL_SITE_IFNAME:
		if (!npl_ifname_ok(value))
			return npl_error(d, where, "%s '%s' is not a network interface name (1 to 15 letters, digits, '_', '.', '-')",
					 what, value);
		break;
	case NPL_SITE_NODE_IP:
	case NPL_SITE_PREFILL_IP:
	case NPL_SITE_DECODE_IP:
	case NPL_SITE_ENTRY_IP:
		if (npl_ip_canonical(value, canon, sizeof(canon)))
			return npl_error(d, where, "%s '%s' is not an IPv4 or IPv6 address", what, value);
		store = canon;
		/* each node of a list is a machine of its own: the scripts would find the first */
		if (seen(v, canon, strlen(canon)))
			return npl_error(d, where, "%s '%s' is given twice: each node has an address of its own",
					 what, value);
		break;
	default:
		if (cluster_ok(s, k, value, what, where, d))
			return -1;
		break;
	}
	if (!keys[k].list) {
		if (v->n && where && where->file)
			return npl_error(d, where, "'%s' is given twice", keys[k].name);
		if (!v->cap) {
			v->v = npl_arena_calloc(a, 1, sizeof(*v->v));
			v->cap = 1;
		}
		v->v[0] = npl_arena_strdup(a, store);
		v->n = 1;
		return 0;
	}
	if (v->n == v->cap) {
		int cap = v->cap ? v->cap * 2 : 4;

		v->v = npl_arena_grow(a, (void *)v->v, (size_t)v->n, (size_t)cap, sizeof(*v->v));
		v->cap = cap;
	}
	v->v[v->n++] = npl_arena_strdup(a, store);
	seen_add(v, k, a);
	return 0;
}

int npl_site_load_text(struct npl_site *s, struct npl_arena *a, const char *name, const char *text,
		       size_t len, struct npl_diag *d)
{
	struct npl_ynode **docs, *root;
	int ndocs, i, j, rc = 0;

	npl_diag_source(d, name, text);
	if (npl_yaml_load(a, name, text, len, &docs, &ndocs, d))
		return -1;
	if (ndocs == 0)
		return 0;
	if (ndocs > 1)
		return npl_error(d, &docs[1]->loc, "a site file holds one document");
	root = docs[0];
	if (npl_ynull(root))
		return 0;
	if (root->kind != NPL_YMAP)
		return npl_error(d, &root->loc, "a site file is a mapping (key: value lines)");
	for (i = 0; i < root->n; i++) {
		const struct npl_ynode *k = root->kids[2 * i], *v = root->kids[2 * i + 1];
		int key = npl_site_key_from_name(k->str);

		if (key < 0) {
			const char *names[NPL_SITE_COUNT], *best;

			for (j = 0; j < NPL_SITE_COUNT; j++)
				names[j] = keys[j].name;
			best = npl_did_you_mean(k->str, names, NPL_SITE_COUNT);
			if (best) {
				rc = npl_error(d, &k->loc, "unknown site key '%s' (did you mean '%s'?)", k->str, best);
			} else {
				struct npl_buf all = NPL_BUF_INIT;

				for (j = 0; j < NPL_SITE_COUNT; j++)
					npl_buf_printf(&all, "%s%s", j ? ", " : "", keys[j].name);
				rc = npl_error(d, &k->loc, "unknown site key '%s' (%s)", k->str, npl_buf_str(&all));
				npl_buf_release(&all);
			}
			continue;
		}
		if (v->kind == NPL_YSEQ && keys[key].list) {
			for (j = 0; j < v->n; j++) {
				if (v->kids[j]->kind != NPL_YSCALAR || npl_ynull(v->kids[j])) {
					rc = npl_error(d, &v->kids[j]->loc, keys[key].var ? "each '%s' must be one address"
										      : "each '%s' must be one value", k->str);
					continue;
				}
				if (npl_site_set_as(s, a, key, v->kids[j]->str, npl_arena_printf(a, "'%s'", k->str),
						    &v->kids[j]->loc, d))
					rc = -1;
			}
			continue;
		}
		if (npl_ynull(v)) {
			/* model-path: ~ (or nothing after the colon): YAML's null, not a value */
			rc = npl_error(d, &v->loc, "'%s' is empty (YAML reads '%s' as null): give its value, or leave the key out",
				       k->str, v->kind == NPL_YSCALAR && v->str ? v->str : "");
			continue;
		}
		if (v->kind != NPL_YSCALAR) {
			rc = npl_error(d, &v->loc, keys[key].list && !keys[key].var ? "'%s' must be a value or a list of values"
				       : keys[key].list ? "'%s' must be an address or a list of addresses"
							: "'%s' must be a single value",
				       k->str);
			continue;
		}
		if (npl_site_set_as(s, a, key, v->str, npl_arena_printf(a, "'%s'", k->str), &v->loc, d))
			rc = -1;
	}
	return rc;
}

int npl_site_load_file(struct npl_site *s, struct npl_arena *a, const char *path, struct npl_diag *d)
{
	size_t len;
	char *text = npl_read_file_in(a, path, &len, d);

	return text ? npl_site_load_text(s, a, path, text, len, d) : -1;
}

void npl_site_fill(struct npl_site *dst, const struct npl_site *from)
{
	int k;

	for (k = 0; k < NPL_SITE_COUNT; k++)
		if (dst->key[k].n == 0 && from->key[k].n > 0)
			dst->key[k] = from->key[k];
}

/* ---- cluster values ----------------------------------------------------------
 * What a container engine needs and no script reads: checked here as the API
 * server would check it (names, labels, quantities), so that a bad value is
 * refused at render time with the flag or file line that gave it. */

int npl_site_is_bool(enum npl_site_key k)
{
	return k == NPL_SITE_GANG || k == NPL_SITE_TUNE || k == NPL_SITE_PRIVILEGED;
}

static int in_set(char ch, const char *set)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || (ch && strchr(set, ch));
}

/* A DNS-1123 label (max 63): lowercase letters, digits and '-', alphanumeric at both ends. */
static int dns_label(const char *s, size_t max)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > max || s[0] == '-' || s[n - 1] == '-')
		return 0;
	for (i = 0; i < n; i++)
		if (!in_set(s[i], "-"))
			return 0;
	return 1;
}

/* A DNS-1123 subdomain: labels joined by dots, 253 at most. */
static int dns_subdomain(const char *s)
{
	char buf[254];
	char *p, *save = NULL;
	size_t n = strlen(s);

	if (n == 0 || n > 253 || s[0] == '.' || s[n - 1] == '.' || strstr(s, ".."))
		return 0;
	memcpy(buf, s, n + 1);
	for (p = strtok_r(buf, ".", &save); p; p = strtok_r(NULL, ".", &save))
		if (!dns_label(p, 63))
			return 0;
	return 1;
}

/* A label value or the name part of a qualified name: 63 at most, letters, digits, '-', '_',
 * '.', alphanumeric at both ends (empty allowed for values only). */
static int label_value(const char *s, int empty_ok)
{
	size_t n = strlen(s), i;

	if (n == 0)
		return empty_ok;
	if (n > 63)
		return 0;
	for (i = 0; i < n; i++) {
		char ch = s[i];
		int alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');

		if (!alnum && ((i == 0 || i == n - 1) || !strchr("-_.", ch)))
			return 0;
	}
	return 1;
}

/* A qualified name: [DNS-subdomain/]name (label keys, extended resource names). */
static int qualified_name(const char *s, int need_prefix)
{
	const char *slash = strchr(s, '/');
	char prefix[254];

	if (!slash)
		return !need_prefix && label_value(s, 0);
	if ((size_t)(slash - s) >= sizeof(prefix))
		return 0;
	memcpy(prefix, s, (size_t)(slash - s));
	prefix[slash - s] = '\0';
	return dns_subdomain(prefix) && label_value(slash + 1, 0);
}

/* An image reference as docker and the kubelet take it: [registry/]path[:tag][@digest]. */
static int image_ref(const char *s, int registry)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > 255 || s[0] == '-' || s[0] == '/' || s[0] == ':' || s[n - 1] == '/' ||
	    s[n - 1] == ':' || strstr(s, "//"))
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || in_set(s[i], registry ? "._-:/" : "._-:/@")))
			return 0;
	return 1;
}

/* A Kubernetes quantity in binary units, which docker's --shm-size also reads. */
static int mem_quantity(const char *s)
{
	const char *p = s;

	while (*p >= '0' && *p <= '9')
		p++;
	return p > s && p - s <= 12 && *s != '0' &&
	       (!strcmp(p, "Ki") || !strcmp(p, "Mi") || !strcmp(p, "Gi") || !strcmp(p, "Ti"));
}

/* A whole number of 1 to 6 digits without a leading zero, or -1. */
static int count_of(const char *s)
{
	const char *p = s;

	if (*s == '0' || !digits(&p) || *p)
		return -1;
	return atoi(s);
}

/* A toleration as kubectl taint writes a taint: KEY[=VALUE][:EFFECT]. */
static int toleration_ok(const char *s)
{
	const char *colon = strrchr(s, ':'), *eq;
	char key[320], value[64];
	size_t n = colon ? (size_t)(colon - s) : strlen(s);

	if (colon && strcmp(colon + 1, "NoSchedule") && strcmp(colon + 1, "PreferNoSchedule") &&
	    strcmp(colon + 1, "NoExecute"))
		return 0;
	eq = memchr(s, '=', n);
	if ((eq ? (size_t)(eq - s) : n) >= sizeof(key))
		return 0;
	memcpy(key, s, eq ? (size_t)(eq - s) : n);
	key[eq ? (size_t)(eq - s) : n] = '\0';
	if (!qualified_name(key, 0))
		return 0;
	if (!eq)
		return 1;
	if ((size_t)(s + n - eq - 1) >= sizeof(value))
		return 0;
	memcpy(value, eq + 1, (size_t)(s + n - eq - 1));
	value[s + n - eq - 1] = '\0';
	return label_value(value, 1);
}

/* The values of every pod of render --target k8s and rbg: resources, placement, start-up. */
static int pod_value(struct npl_site *s, enum npl_site_key k, const char *value, const char *what,
		     const struct npl_loc *where, struct npl_diag *d)
{
	switch (k) {
	case NPL_SITE_SERVER_CPUS:
	case NPL_SITE_ROUTER_CPUS:
		if (count_of(value) < 1 || count_of(value) > 100000)
			return npl_error(d, where, "%s '%s' is not a number of CPUs (a whole number from 1 to 100000: the CPU manager pins whole CPUs)",
					 what, value);
		return 0;
	case NPL_SITE_SERVER_MEMORY:
	case NPL_SITE_ROUTER_MEMORY:
		if (!mem_quantity(value))
			return npl_error(d, where, "%s '%s' is not a size in Ki, Mi, Gi or Ti (like 512Gi)", what, value);
		return 0;
	case NPL_SITE_TOLERATION:
		if (!toleration_ok(value))
			return npl_error(d, where, "%s '%s' is not a toleration KEY[=VALUE][:EFFECT] (a label key, a label value, NoSchedule, PreferNoSchedule or NoExecute; without =VALUE any value)",
					 what, value);
		if (seen(&s->key[k], value, strlen(value)))
			return npl_error(d, where, "%s '%s' is given twice", what, value);
		return 0;
	case NPL_SITE_IMAGE_PULL_SECRET:
		if (!dns_subdomain(value))
			return npl_error(d, where, "%s '%s' is not a secret name (lowercase letters, digits, '-' and '.', 253 at most)",
					 what, value);
		if (seen(&s->key[k], value, strlen(value)))
			return npl_error(d, where, "%s '%s' is given twice", what, value);
		return 0;
	case NPL_SITE_PRIORITY_CLASS:
		if (!dns_subdomain(value))
			return npl_error(d, where, "%s '%s' is not a priority class name (lowercase letters, digits, '-' and '.', 253 at most)",
					 what, value);
		return 0;
	case NPL_SITE_STARTUP_TIMEOUT:
		if (count_of(value) < 10 || count_of(value) > 604800)
			return npl_error(d, where, "%s '%s' is not a start-up window in seconds (a whole number from 10 to 604800)",
					 what, value);
		return 0;
	default:
		return 0;
	}
}

static int cluster_ok(struct npl_site *s, enum npl_site_key k, const char *value, const char *what,
		      const struct npl_loc *where, struct npl_diag *d)
{
	switch (k) {
	case NPL_SITE_IMAGE:
	case NPL_SITE_ROUTER_IMAGE:
		if (!image_ref(value, 0))
			return npl_error(d, where, "%s '%s' is not a container image (like lmsysorg/sglang:TAG or registry.example.com/sglang@sha256:...)",
					 what, value);
		return 0;
	case NPL_SITE_REGISTRY:
		if (!image_ref(value, 1))
			return npl_error(d, where, "%s '%s' is not a registry (a host, with a port and a path if needed: registry.example.com:5000/ascend)",
					 what, value);
		return 0;
	case NPL_SITE_NAMESPACE:
		if (!dns_label(value, 63))
			return npl_error(d, where, "%s '%s' is not a namespace name (1 to 63 lowercase letters, digits and '-', alphanumeric at both ends)",
					 what, value);
		return 0;
	case NPL_SITE_NAME_PREFIX:
		if (!dns_label(value, 40) || !(value[0] >= 'a' && value[0] <= 'z'))
			return npl_error(d, where, "%s '%s' is not a name prefix (1 to 40 lowercase letters, digits and '-', starting with a letter, alphanumeric at the end)",
					 what, value);
		return 0;
	case NPL_SITE_NPU_RESOURCE:
		if (!qualified_name(value, 1))
			return npl_error(d, where, "%s '%s' is not an extended resource name (DOMAIN/NAME, like huawei.com/Ascend910)",
					 what, value);
		return 0;
	case NPL_SITE_NPU_UNIT:
		if (strcmp(value, "card") && strcmp(value, "die"))
			return npl_error(d, where, "%s '%s': the device plugin counts each 'card' or each 'die'", what, value);
		return 0;
	case NPL_SITE_MODEL_VOLUME:
		if (strcmp(value, "hostpath") && !(npl_starts_with(value, "pvc:") && dns_subdomain(value + 4)))
			return npl_error(d, where, "%s '%s' is not a model volume: 'hostpath' (the node's own paths) or 'pvc:CLAIM'",
					 what, value);
		return 0;
	case NPL_SITE_MODEL_MOUNT:
		if (value[0] != '/' || strpbrk(value, "\n\r:,") || !strcmp(value, "/"))
			return npl_error(d, where, "%s must be an absolute folder other than / (no ':' or ','), not '%s'",
					 what, value);
		return 0;
	case NPL_SITE_NODE_SELECTOR:
	case NPL_SITE_ROUTER_NODE_SELECTOR: {
		const char *eq = strchr(value, '=');
		char key[320];

		if (!eq || (size_t)(eq - value) >= sizeof(key))
			return npl_error(d, where, "%s '%s' is not a node label KEY=VALUE", what, value);
		memcpy(key, value, (size_t)(eq - value));
		key[eq - value] = '\0';
		if (!qualified_name(key, 0) || !label_value(eq + 1, 1))
			return npl_error(d, where, "%s '%s' is not a node label KEY=VALUE (a label key and a value of 63 letters, digits, '-', '_', '.' at most)",
					 what, value);
		if (seen(&s->key[k], value, (size_t)(eq - value) + 1))
			return npl_error(d, where, "%s: the label '%s' is given twice", what, key);
		return 0;
	}
	case NPL_SITE_SERVER_CPUS:
	case NPL_SITE_ROUTER_CPUS:
	case NPL_SITE_SERVER_MEMORY:
	case NPL_SITE_ROUTER_MEMORY:
	case NPL_SITE_TOLERATION:
	case NPL_SITE_IMAGE_PULL_SECRET:
	case NPL_SITE_PRIORITY_CLASS:
	case NPL_SITE_STARTUP_TIMEOUT:
		return pod_value(s, k, value, what, where, d);
	case NPL_SITE_SCHEDULER:
		if (!dns_subdomain(value))
			return npl_error(d, where, "%s '%s' is not a scheduler name (like volcano)", what, value);
		return 0;
	case NPL_SITE_GANG:
	case NPL_SITE_TUNE:
	case NPL_SITE_PRIVILEGED:
		if (strcmp(value, "true") && strcmp(value, "false"))
			return npl_error(d, where, "%s takes true or false, not '%s'", what, value);
		return 0;
	case NPL_SITE_SHM_SIZE:
		if (!mem_quantity(value))
			return npl_error(d, where, "%s '%s' is not a size in Ki, Mi, Gi or Ti (like 64Gi)", what, value);
		return 0;
	case NPL_SITE_RUNTIME:
		if (strcmp(value, "docker") && strcmp(value, "podman") && strcmp(value, "auto"))
			return npl_error(d, where, "%s '%s': docker, podman or auto (the one on PATH, docker first)",
					 what, value);
		return 0;
	default:
		return npl_error(d, where, "%s: not a site value", what);
	}
}

int npl_site_unused(struct npl_diag *d, int strict, enum npl_site_key k, const char *label, const char *why)
{
	char group[96];

	if (strict)
		return npl_error(d, NULL, "--%s: %s has no use for it (%s); --strict refuses it", keys[k].name, label,
				 why);
	snprintf(group, sizeof(group), "unused site value %s", keys[k].name);
	npl_diag_grouped(d, NPL_NOTE, NULL, group, label, "--%s: %s has no use for it (%s): ignored (--strict refuses it)",
			 keys[k].name, label, why);
	return 0;
}
