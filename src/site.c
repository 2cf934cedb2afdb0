/* site.c: site values from flags and site files, validated; see site.h. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/buf.h"
#include "npulaunch/site.h"
#include "npulaunch/util.h"
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
	{"slurm-partition", NULL, NULL, 0},
	{"slurm-account", NULL, NULL, 0},
	{"slurm-time", NULL, NULL, 0},
	{"slurm-gres", NULL, NULL, 0},
	{"slurm-log-dir", NULL, NULL, 0},
	{"slurm-router-node", NULL, NULL, 0},
	{"slurm-npulaunch", NULL, NULL, 0},
};

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
	int i;

	if (!what) {
		snprintf(flag, sizeof(flag), "--%s", keys[k].name);
		what = flag;
	}
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
	default:
		if (npl_ip_canonical(value, canon, sizeof(canon)))
			return npl_error(d, where, "%s '%s' is not an IPv4 or IPv6 address", what, value);
		store = canon;
		/* each node of a list is a machine of its own: the scripts would find the first */
		for (i = 0; i < v->n; i++)
			if (!strcmp(v->v[i], canon))
				return npl_error(d, where, "%s '%s' is given twice: each node has an address of its own",
						 what, value);
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
					npl_buf_printf(&all, "%s%s", j ? ", " : "", names[j]);
				rc = npl_error(d, &k->loc, "unknown site key '%s' (%s)", k->str, npl_buf_str(&all));
				npl_buf_release(&all);
			}
			continue;
		}
		if (v->kind == NPL_YSEQ && keys[key].list) {
			for (j = 0; j < v->n; j++) {
				if (v->kids[j]->kind != NPL_YSCALAR || npl_ynull(v->kids[j])) {
					rc = npl_error(d, &v->kids[j]->loc, "each '%s' must be one address", k->str);
					continue;
				}
				if (npl_site_set(s, a, key, v->kids[j]->str, &v->kids[j]->loc, d))
					rc = -1;
			}
			continue;
		}
		if (v->kind != NPL_YSCALAR || npl_ynull(v)) {
			rc = npl_error(d, &v->loc, keys[key].list ? "'%s' must be an address or a list of addresses"
								  : "'%s' must be a single value",
				       k->str);
			continue;
		}
		if (npl_site_set(s, a, key, v->str, &v->loc, d))
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
