/* pval.c: plan values with site references; see plan.h. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "npulaunch/plan.h"
#include "npulaunch/text.h"

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

/* ---- the workload of a benchmark ---------------------------------------------------------- */

const char *const npl_bench_workload[NPL_BENCH_NWORKLOAD][3] = {
	{"dataset_name", "--dataset-name", "dataset"},
	{"max_concurrency", "--max-concurrency", "max concurrency"},
	{"random_input_len", "--random-input-len", "input length"},
	{"random_output_len", "--random-output-len", "output length"},
	{"request_rate", "--request-rate", "request rate"},
};

/* ---- node queries: which node of a role this is, its ports and devices ---- */

/* A whole non-negative int spelled by the n bytes at s; -1 otherwise. */
static int num_n(const char *s, size_t n)
{
	static const struct npl_number_spec spec = {"a number", 0, 2147483647.0, 1};
	double v;

	return npl_parse_number_n(s, n, &spec, &v) ? -1 : (int)v;
}

static int num_word(const char *w)
{
	return num_n(w, strlen(w));
}

/* The nodes a role runs on (instances that share a node count once). */
int npl_plan_nodes_count(const cJSON *role)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(role, "nodes_count");

	return cJSON_IsNumber(n) ? n->valueint : cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(role, "nodes"));
}

int npl_plan_node_of(const cJSON *role, const struct npl_site *site, const char *const *addrs, int naddrs)
{
	const char *list = npl_json_str(role, "node_list");
	const struct npl_site_value *v;
	int k;

	if (!list)
		return 0;
	k = npl_site_key_from_name(list);
	if (k < 0)
		return -2;
	v = &site->key[k];
	if (v->n < npl_plan_nodes_count(role))
		return -2;
	for (int i = 0; i < v->n; i++)
		for (int j = 0; j < naddrs; j++)
			if (!strcmp(v->v[i], addrs[j]))
				return i;
	return -1;
}

/* ---- the ports of a node ------------------------------------------------------------------ */

static const cJSON *flag_of(const cJSON *node, const char *name)
{
	const cJSON *f;

	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(node, "flags")) {
		const char *n = npl_json_str(f, "flag");

		if (n && !strcmp(n, name))
			return f;
	}
	return NULL;
}

static const char *flag_value(const cJSON *node, const char *name)
{
	const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(flag_of(node, name), "values"), 0);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A plan value naming a host, compared as written: "${prefill-ip[0]|url}" is "${prefill-ip[0]}",
 * "[::1]" is "::1". */
static char *host_key(struct npl_arena *a, const char *s, size_t n)
{
	struct npl_buf b = NPL_BUF_INIT;
	char *r;

	if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
		s++;
		n -= 2;
	}
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '|' && i + 4 < n + 1 && !strncmp(s + i, "|url}", 5)) {
			npl_buf_putc(&b, '}');
			i += 4;
			continue;
		}
		npl_buf_putc(&b, s[i]);
	}
	r = npl_arena_strdup(a, npl_buf_str(&b));
	npl_buf_release(&b);
	return r;
}

static int loopback(const char *h)
{
	return npl_starts_with(h, "127.") || !strcmp(h, "::1") || !strcmp(h, "localhost");
}

static int add_port(struct npl_plan_port *out, int n, int max, int port, const char *what)
{
	if (port <= 0 || port > 65535)
		return n;
	for (int i = 0; i < n; i++)
		if (out[i].port == port)
			return n;
	if (n < max) {
		out[n].port = port;
		out[n].what = what;
		n++;
	}
	return n;
}

int npl_plan_node_ports(const cJSON *role, int index, struct npl_plan_port *out, int max, struct npl_arena *a)
{
	const cJSON *node, *e;
	int n = 0;

	cJSON_ArrayForEach(node, cJSON_GetObjectItemCaseSensitive(role, "nodes")) {
		const char *addr = npl_json_str(node, "address"), *host = flag_value(node, "--host"), *v;
		const char *mine[2] = {addr ? host_key(a, addr, strlen(addr)) : NULL,
				       host ? host_key(a, host, strlen(host)) : NULL};

		if (npl_json_int(node, "index", 0) != index)
			continue;
		/* an instance's first node serves HTTP, the bootstrap and the rendezvous of
		 * --dist-init-addr; the others run its schedulers only */
		if (npl_json_int(node, "rank", 0) == 0) {
			if ((v = flag_value(node, "--port")))
				n = add_port(out, n, max, num_word(v), "--port");
			if ((v = flag_value(node, "--disaggregation-bootstrap-port")))
				n = add_port(out, n, max, num_word(v), "--disaggregation-bootstrap-port");
			if ((v = flag_value(node, "--dist-init-addr")) && strrchr(v, ':'))
				n = add_port(out, n, max, num_word(strrchr(v, ':') + 1), "--dist-init-addr");
		}
		cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(node, "env")) {
			const char *val = npl_json_str(e, "value"), *hp, *colon;
			size_t hl;
			char *h;

			if (!val || strncasecmp(val, "tcp://", 6))
				continue;
			hp = val + 6;
			hl = strcspn(hp, "/");
			/* the port follows the last colon, past a bracketed IPv6 address */
			colon = NULL;
			for (size_t i = 0; i < hl; i++)
				if (hp[i] == ':' && (hp[0] != '[' || memchr(hp, ']', i)))
					colon = hp + i;
			if (!colon)
				continue;
			h = host_key(a, hp, (size_t)(colon - hp));
			if (loopback(h) || (mine[0] && !strcmp(h, mine[0])) || (mine[1] && !strcmp(h, mine[1])))
				n = add_port(out, n, max, num_n(colon + 1, (size_t)(hp + hl - colon - 1)),
					     npl_arena_strdup(a, npl_json_str(e, "name")));
		}
	}
	return n;
}

/* ---- the devices of a node ---------------------------------------------------------------- */

/* ASCEND_RT_VISIBLE_DEVICES of a plan node (its last setting), or NULL. */
static const char *visible_of(const cJSON *node)
{
	const char *vis = NULL;
	const cJSON *e;

	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(node, "env")) {
		const char *name = npl_json_str(e, "name");

		if (name && !strcmp(name, "ASCEND_RT_VISIBLE_DEVICES"))
			vis = npl_json_str(e, "value");
	}
	return vis;
}

int npl_plan_node_devices(const cJSON *role, int index, int *ids, int max)
{
	int dies = npl_json_int(role, "dies_per_instance", 0), per = npl_json_int(role, "nodes_per_instance", 1);
	const cJSON *node;
	int n = 0;

	if (per > 1)
		dies /= per;
	cJSON_ArrayForEach(node, cJSON_GetObjectItemCaseSensitive(role, "nodes")) {
		const char *vis, *base;
		int b;

		if (npl_json_int(node, "index", 0) != index)
			continue;
		vis = visible_of(node);
		if (vis && !strchr(vis, '$')) {
			for (const char *p = vis; *p;) {
				size_t k = strcspn(p, ",");
				int id = num_n(p, k), j;

				for (j = 0; j < n && ids[j] != id; j++)
					;
				if (id >= 0 && j == n && n < max)
					ids[n++] = id;
				p += k + (p[k] == ',');
			}
			continue;
		}
		base = flag_value(node, "--base-gpu-id");
		b = base ? num_word(base) : 0;
		for (int d = 0; d < dies && b >= 0; d++) {
			int j;

			for (j = 0; j < n && ids[j] != b + d; j++)
				;
			if (j == n && n < max)
				ids[n++] = b + d;
		}
	}
	return n;
}

int npl_plan_rank_devices(const cJSON *role, const cJSON *node, int *ids, int max)
{
	int per = npl_json_int(role, "nodes_per_instance", 1), dies = npl_json_int(role, "dies_per_instance", 0);
	const char *base = flag_value(node, "--base-gpu-id"), *step = flag_value(node, "--gpu-id-step");
	const char *vis = visible_of(node);
	int b = base ? num_word(base) : 0, n = 0;

	dies /= per > 0 ? per : 1;
	if (dies <= 0)
		return 0;
	if (b < 0 || (step && num_word(step) != 1) || (vis && strchr(vis, '$')) || b + dies > max)
		return -1;
	for (int g = 0; g < b + dies; g++) {
		int want = g < b ? b : g, id = want;

		if (vis) {
			const char *p = vis;

			for (int i = 0; i < want && *p; i++) {
				p += strcspn(p, ",");
				p += *p == ',';
			}
			id = *p ? num_n(p, strcspn(p, ",")) : -1;
		}
		if (id < 0)
			return -1;
		ids[n++] = id;
	}
	return n;
}

/* SGLang's EnvBool: 1, true, yes, on (any case) */
static int env_true(const char *v)
{
	static const char *const yes[] = {"1", "true", "yes", "on"};

	for (size_t i = 0; v && i < NPL_ARRAY_SIZE(yes); i++)
		if (!strcasecmp(v, yes[i]))
			return 1;
	return 0;
}

const char *npl_plan_affinity_owner(const cJSON *role, int index, const cJSON **policy)
{
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(role, "tuning"), "affinity");
	const char *want = npl_json_str(cJSON_GetObjectItemCaseSensitive(p, "policy"), "value");
	const cJSON *node, *e;

	*policy = p;
	if (!want || !strcmp(want, "none"))
		return "its tuning.affinity.policy is none";
	cJSON_ArrayForEach(node, cJSON_GetObjectItemCaseSensitive(role, "nodes")) {
		if (npl_json_int(node, "index", 0) != index)
			continue;
		cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(node, "env"))
			if (!strcmp(npl_json_str(e, "name") ? npl_json_str(e, "name") : "", "SGLANG_SET_CPU_AFFINITY") &&
			    env_true(npl_json_str(e, "value")))
				return "the launch environment sets SGLANG_SET_CPU_AFFINITY: SGLang binds each rank itself "
				       "(by device number, not the topology), and would overwrite a binding around it";
	}
	return NULL;
}
