/* pval.c: plan values with site references; see plan.h. */
#include <stdlib.h>
#include <string.h>

#include "npulaunch/plan.h"
#include "npulaunch/util.h"

void npl_pval_lit(struct npl_buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '$')
			npl_buf_putc(b, '$');
		npl_buf_putc(b, *s);
	}
}

void npl_pval_ref(struct npl_buf *b, enum npl_site_key k, int index, int url)
{
	npl_buf_printf(b, "${%s", npl_site_key_name(k));
	if (index >= 0)
		npl_buf_printf(b, "[%d]", index);
	if (url)
		npl_buf_puts(b, "|url");
	npl_buf_putc(b, '}');
}

/* Parse "${key[i]|url}" at s; returns its length, 0 if it is not a reference. */
static size_t parse_ref(const char *s, struct npl_pval_seg *seg)
{
	const char *p = s + 2, *end = strchr(p, '}');
	char name[32];
	size_t n;

	if (!end)
		return 0;
	n = strcspn(p, "[|}");
	if (n == 0 || n >= sizeof(name))
		return 0;
	memcpy(name, p, n);
	name[n] = '\0';
	seg->key = npl_site_key_from_name(name);
	if (seg->key < 0)
		return 0;
	p += n;
	seg->index = -1;
	seg->url = 0;
	if (*p == '[') {
		long v = 0;
		const char *q = p + 1;

		for (; *q >= '0' && *q <= '9' && v <= 100000; q++)
			v = v * 10 + (*q - '0');
		if (q == p + 1 || *q != ']' || v > 100000)
			return 0;
		seg->index = (int)v;
		p = q + 1;
	}
	/* the URL form is of one address of a list */
	if (seg->index >= 0 && !strncmp(p, "|url", 4)) {
		seg->url = 1;
		p += 4;
	}
	if (*p != '}')
		return 0;
	return (size_t)(p + 1 - s);
}

int npl_pval_walk(const char *s, int (*fn)(void *ctx, const struct npl_pval_seg *seg), void *ctx)
{
	struct npl_pval_seg seg;
	const char *p = s, *lit = s;
	int rc;

	while (*p) {
		size_t n;

		if (*p != '$') {
			p++;
			continue;
		}
		if (p > lit) {
			seg = (struct npl_pval_seg){lit, (size_t)(p - lit), -1, -1, 0};
			if ((rc = fn(ctx, &seg)))
				return rc;
		}
		if (p[1] == '$') {
			seg = (struct npl_pval_seg){p, 1, -1, -1, 0};
			if ((rc = fn(ctx, &seg)))
				return rc;
			p += 2;
		} else if (p[1] == '{' && (n = parse_ref(p, &seg))) {
			seg.lit = p;
			seg.len = n;
			if ((rc = fn(ctx, &seg)))
				return rc;
			p += n;
		} else {
			seg = (struct npl_pval_seg){p, 1, -1, -1, 0};
			if ((rc = fn(ctx, &seg)))
				return rc;
			p++;
		}
		lit = p;
	}
	if (p > lit) {
		seg = (struct npl_pval_seg){lit, (size_t)(p - lit), -1, -1, 0};
		return fn(ctx, &seg);
	}
	return 0;
}

void npl_url_host(struct npl_buf *b, const char *ip)
{
	if (strchr(ip, ':'))
		npl_buf_printf(b, "[%s]", ip);
	else
		npl_buf_puts(b, ip);
}

struct resolve_ctx {
	struct npl_buf *out;
	const struct npl_site *site;
	int missing;
	int display;
};

static int resolve_seg(void *p, const struct npl_pval_seg *seg)
{
	struct resolve_ctx *c = p;
	const struct npl_site_value *v;
	int i;

	if (seg->key < 0) {
		npl_buf_add(c->out, seg->lit, seg->len);
		return 0;
	}
	v = c->site ? &c->site->key[seg->key] : NULL;
	i = seg->index < 0 ? 0 : seg->index;
	if (!v || i >= v->n) {
		if (!c->display) {
			c->missing = seg->key;
			return -1;
		}
		if (seg->index >= 0)
			npl_buf_printf(c->out, "<%s %d>", npl_site_key_name(seg->key), seg->index);
		else
			npl_buf_printf(c->out, "<%s>", npl_site_key_name(seg->key));
		return 0;
	}
	if (seg->url)
		npl_url_host(c->out, v->v[i]);
	else
		npl_buf_puts(c->out, v->v[i]);
	return 0;
}

int npl_pval_resolve(struct npl_buf *out, const char *s, const struct npl_site *site, int *missing)
{
	struct resolve_ctx c = {out, site, -1, 0};

	if (npl_pval_walk(s, resolve_seg, &c)) {
		if (missing)
			*missing = c.missing;
		return -1;
	}
	return 0;
}

void npl_pval_display(struct npl_buf *out, const char *s, const struct npl_site *site)
{
	struct resolve_ctx c = {out, site, -1, 1};

	npl_pval_walk(s, resolve_seg, &c);
}

void npl_plan_env_display(struct npl_buf *out, const cJSON *item, const struct npl_site *site)
{
	const char *name = npl_json_str(item, "name"), *op = npl_json_str(item, "op");
	const char *sep = npl_json_str(item, "sep"), *when = npl_json_str(item, "when");

	npl_buf_printf(out, "%s=", name ? name : "");
	if (op && !strcmp(op, "append"))
		npl_buf_printf(out, "$%s%s", name, sep ? sep : ":");
	npl_pval_display(out, npl_json_str(item, "value"), site);
	if (op && !strcmp(op, "prepend"))
		npl_buf_printf(out, "%s$%s", sep ? sep : ":", name);
	if (when && !strcmp(when, "before-source"))
		npl_buf_puts(out, " (before the env files)");
}

void npl_plan_site(const cJSON *plan, struct npl_site *site, struct npl_arena *a)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(plan, "site"), *it;
	int k;

	memset(site, 0, sizeof(*site));
	for (k = 0; k < NPL_SITE_COUNT; k++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, npl_site_key_name(k));
		struct npl_site_value *sv = &site->key[k];

		if (cJSON_IsString(v)) {
			sv->v = npl_arena_calloc(a, 1, sizeof(*sv->v));
			sv->v[0] = npl_arena_strdup(a, v->valuestring);
			sv->n = sv->cap = 1;
		} else if (cJSON_IsArray(v)) {
			int n = cJSON_GetArraySize(v);

			sv->v = npl_arena_calloc(a, (size_t)n + 1, sizeof(*sv->v));
			cJSON_ArrayForEach(it, v)
				if (cJSON_IsString(it))
					sv->v[sv->n++] = npl_arena_strdup(a, it->valuestring);
			sv->cap = n + 1;
		}
	}
}

const char *npl_json_str(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

int npl_json_int(const cJSON *obj, const char *key, int def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsNumber(v) ? v->valueint : def;
}

const cJSON *npl_plan_role(const cJSON *plan, const char *name)
{
	const cJSON *r;

	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(plan, "roles")) {
		const char *n = npl_json_str(r, "role");

		if (n && !strcmp(n, name))
			return r;
	}
	return NULL;
}
