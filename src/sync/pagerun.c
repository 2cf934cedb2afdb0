/* pagerun.c: a page's section run node by node; see pagerun.h. */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/buf.h"
#include "npulaunch/pagerun.h"

#define SERVER "sglang.launch_server"
#define ROUTER "sglang_router.launch_router"
#define BENCH "sglang.bench_serving"

enum { P_PREFILL, P_DECODE, P_NODE, P_KINDS };

/* what the addresses of the authors' own cluster stand for: shared address space, never a site's */
#define LITERAL_NET "100.64.0"

const char *const npl_pagerun_inherited[] = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
					     "LD_LIBRARY_PATH=/usr/local/lib",
					     "PYTHONPATH=/usr/local/lib/python3/dist-packages", NULL};

/* The largest N of "<your prefill ipN>" (N 1 when written "<your prefill ip>") in text, for
 * each kind. */
static void count_placeholders(const char *text, int *max)
{
	static const char *const pre[P_KINDS] = {"<your prefill ip", "<your decode ip", "<your node"};
	int k;

	for (k = 0; k < P_KINDS; k++) {
		const char *p = text;
		size_t n = strlen(pre[k]);

		while ((p = strstr(p, pre[k]))) {
			const char *q = p + n;
			int v = 0;

			while (isdigit((unsigned char)*q) && v < 1000)
				v = v * 10 + (*q++ - '0');
			if (k == P_NODE ? !strncmp(q, " ip>", 4) : *q == '>') {
				if (!v)
					v = 1;
				if (v > max[k])
					max[k] = v;
			}
			p = q;
		}
	}
}

static const char **addresses(int kind, int n, struct npl_arena *a)
{
	static const char *const net[P_KINDS] = {"192.0.2", "198.51.100", "203.0.113"};
	const char **v = npl_arena_calloc(a, (size_t)n + 1, sizeof(*v));
	int i;

	for (i = 0; i < n; i++)
		v[i] = npl_arena_printf(a, "%s.%d", net[kind], 10 + i);
	return v;
}

static int has(const struct npl_page_block *b, const char *module)
{
	return strstr(b->text, module) != NULL;
}

/* Whether a labelled block is meant for a node of kind ("#### Prefill node"): 1 when the label
 * names no role or names this one. */
static int meant_for(const struct npl_page_block *b, int kind)
{
	char low[256];
	size_t i;
	int pre, dec;

	if (!b->label)
		return 1;
	for (i = 0; b->label[i] && i + 1 < sizeof(low); i++)
		low[i] = (char)tolower((unsigned char)b->label[i]);
	low[i] = '\0';
	pre = strstr(low, "prefill") != NULL;
	dec = strstr(low, "decode") != NULL;
	if (pre == dec)
		return 1;
	return kind == P_NODE || (pre ? kind == P_PREFILL : kind == P_DECODE);
}

static void push(struct npl_node_launches *L, int *cap, const struct npl_node_launch *x, struct npl_arena *a)
{
	if (L->n == *cap) {
		L->v = npl_arena_grow(a, L->v, (size_t)*cap, (size_t)(*cap ? *cap * 2 : 8), sizeof(*L->v));
		*cap = *cap ? *cap * 2 : 8;
	}
	L->v[L->n++] = *x;
}

static const char *arg_of(const struct npl_pagesh_launch *l, const char *flag)
{
	int i;

	for (i = 0; i + 1 < l->argc; i++)
		if (!strcmp(l->argv[i], flag))
			return l->argv[i + 1];
	return NULL;
}

static int index_of(const char *ip, const char *const *v, int n)
{
	int i;

	for (i = 0; ip && i < n; i++)
		if (!strcmp(ip, v[i]))
			return i;
	return -1;
}

struct run {
	const struct npl_page_section *s;
	struct npl_page_run *r;
	struct npl_arena *a;
	struct npl_diag *d;
	int cap;
	const char *const *env;
};

/* Run blocks (those of s->deploy for which pick says yes) as the node at ip. */
static int shell(struct run *c, const char *ip, int kind, int router, struct npl_pagesh_result *res)
{
	const struct npl_page_section *s = c->s;
	struct npl_page_block *b = npl_arena_calloc(c->a, (size_t)s->ndeploy + 1, sizeof(*b));
	int i, n = 0;

	for (i = 0; i < s->ndeploy; i++) {
		const struct npl_page_block *x = &s->deploy[i];
		int setup = !has(x, SERVER) && !has(x, ROUTER);

		if (router ? has(x, ROUTER) || (setup && !x->label) : (setup || has(x, SERVER)) && meant_for(x, kind))
			b[n++] = *x;
	}
	if (!n) {
		res->n = 0;
		return 0;
	}
	return npl_pagesh_run(b, n, ip, &c->r->psite, c->env, res, c->a, c->d);
}

static int servers_on(struct run *c, const char *ip, int kind)
{
	const struct npl_pagesh_site *ps = &c->r->psite;
	struct npl_pagesh_result res;
	int i, j;

	if (shell(c, ip, kind, 0, &res))
		return -1;
	for (i = 0; i < res.n; i++) {
		const struct npl_pagesh_launch *l = &res.v[i];
		const char *mode = arg_of(l, "--disaggregation-mode");
		struct npl_node_launch x;
		int role, same = 0;

		if (strcmp(l->module, SERVER))
			continue;
		memset(&x, 0, sizeof(x));
		x.l = *l;
		x.ip = ip;
		if (!mode) {
			role = 2;
			x.role = "pd-mixed";
			x.node = index_of(ip, ps->node_ip, ps->nnode);
		} else if (!strcmp(mode, "prefill") || !strcmp(mode, "decode")) {
			role = mode[0] == 'p' ? 0 : 1;
			x.role = role ? "decode" : "prefill";
			x.node = role ? index_of(ip, ps->decode_ip, ps->ndecode) : index_of(ip, ps->prefill_ip, ps->nprefill);
			if (x.node < 0)
				return npl_error(c->d, &l->loc, "a %s server launches on %s, which the page lists as a %s node",
						 x.role, ip ? ip : "the node", kind == P_PREFILL ? "prefill" : "decode");
		} else {
			return npl_error(c->d, &l->loc, "--disaggregation-mode %s is neither prefill nor decode", mode);
		}
		if (x.node < 0)
			x.node = 0;
		for (j = 0; j < c->r->L.n; j++)
			if (!strcmp(c->r->L.v[j].role, x.role) && c->r->L.v[j].node == x.node && c->r->L.v[j].ip == ip)
				same++;
		x.instance = same;
		push(&c->r->L, &c->cap, &x, c->a);
	}
	return 0;
}

static int shared_shell(const struct npl_page_section *s)
{
	int i;

	for (i = 0; i < s->ndeploy; i++)
		if (has(&s->deploy[i], SERVER) && has(&s->deploy[i], ROUTER))
			return 1;
	return 0;
}

static int router_and_bench(struct run *c)
{
	const struct npl_pagesh_site *ps = &c->r->psite;
	const char *ip = ps->nprefill ? ps->prefill_ip[0] : ps->nnode ? ps->node_ip[0] : NULL;
	struct npl_pagesh_result res;
	struct npl_node_launch x;
	int i, b;

	if (shell(c, ip, P_PREFILL, 1, &res))
		return -1;
	for (i = 0; i < res.n; i++)
		if (!strcmp(res.v[i].module, ROUTER)) {
			memset(&x, 0, sizeof(x));
			x.role = "router";
			x.ip = ip;
			x.l = res.v[i];
			/* a router in the servers' own stretch (the seed pages) would inherit what they
			   export: the page means the servers' environment, not the router's */
			if (shared_shell(c->s)) {
				x.l.env = NULL;
				x.l.nenv = 0;
			}
			push(&c->r->L, &c->cap, &x, c->a);
			break;
		}
	for (b = 0; b < c->s->nbench; b++) {
		int found = 0;

		if (npl_pagesh_run(&c->s->bench[b], 1, NULL, ps, c->env, &res, c->a, c->d))
			return -1;
		for (i = 0; i < res.n; i++)
			if (!strcmp(res.v[i].module, BENCH)) {
				memset(&x, 0, sizeof(x));
				x.role = "bench";
				x.instance = c->r->nbench++;
				x.l = res.v[i];
				push(&c->r->L, &c->cap, &x, c->a);
				found++;
			}
		if (!found)
			return npl_error(c->d, &c->s->bench[b].loc, "this benchmark block launches no %s", BENCH);
	}
	return 0;
}

/* The site values a plan needs to launch what the page does: the addresses, the interface, the
 * model paths the page's servers are given (absolute ones; anything else is the importer's to
 * judge). */
static int site_of(struct run *c)
{
	struct npl_page_run *r = c->r;
	const struct npl_pagesh_site *ps = &r->psite;
	struct npl_diag quiet = NPL_DIAG_INIT;
	int i, rc = 0;

	rc |= npl_site_set(&r->site, c->a, NPL_SITE_IFNAME, NPL_PAGERUN_IFNAME, NULL, c->d);
	for (i = 0; i < ps->nprefill; i++)
		rc |= npl_site_set(&r->site, c->a, NPL_SITE_PREFILL_IP, ps->prefill_ip[i], NULL, c->d);
	for (i = 0; i < ps->ndecode; i++)
		rc |= npl_site_set(&r->site, c->a, NPL_SITE_DECODE_IP, ps->decode_ip[i], NULL, c->d);
	for (i = 0; i < ps->nnode; i++)
		rc |= npl_site_set(&r->site, c->a, NPL_SITE_NODE_IP, ps->node_ip[i], NULL, c->d);
	for (i = 0; i < r->L.n; i++) {
		const char *m = arg_of(&r->L.v[i].l, "--model-path");
		const char *dm = arg_of(&r->L.v[i].l, "--speculative-draft-model-path");

		if (strcmp(r->L.v[i].l.module, SERVER))
			continue;
		if (m && m[0] == '/' && !r->site.key[NPL_SITE_MODEL_PATH].n)
			npl_site_set(&r->site, c->a, NPL_SITE_MODEL_PATH, m, NULL, &quiet);
		if (dm && dm[0] == '/' && !r->site.key[NPL_SITE_DRAFT_MODEL_PATH].n)
			npl_site_set(&r->site, c->a, NPL_SITE_DRAFT_MODEL_PATH, dm, NULL, &quiet);
	}
	npl_diag_release(&quiet);
	return rc ? -1 : 0;
}

const char *npl_page_run_show(const struct npl_page_run *r, const char *s, struct npl_arena *a)
{
	static const char *const kind[] = {"prefill ip", "decode ip"};
	struct npl_buf b = NPL_BUF_INIT;
	const char *p = s, *out;

	if (!s)
		return NULL;
	while (*p) {
		const char *const *v[P_KINDS] = {r->psite.prefill_ip, r->psite.decode_ip, r->psite.node_ip};
		int n[P_KINDS] = {r->psite.nprefill, r->psite.ndecode, r->psite.nnode}, k, i, done = 0;

		for (k = 0; k < P_KINDS && !done; k++)
			for (i = 0; i < n[k] && !done; i++) {
				size_t len = strlen(v[k][i]);

				if (strncmp(p, v[k][i], len) || isdigit((unsigned char)p[len]))
					continue;
				if (!strncmp(v[k][i], LITERAL_NET ".", strlen(LITERAL_NET) + 1))
					npl_buf_puts(&b, r->literal[atoi(v[k][i] + strlen(LITERAL_NET) + 1) - 10]);
				else if (k == P_NODE)
					npl_buf_printf(&b, "<your node%d ip>", i + 1);
				else
					npl_buf_printf(&b, "<your %s%d>", kind[k], i + 1);
				p += len;
				done = 1;
			}
		if (!done)
			npl_buf_putc(&b, *p++);
	}
	out = npl_arena_strdup(a, npl_buf_str(&b));
	npl_buf_release(&b);
	return out;
}

/* ---- a node list shorter than --nnodes ------------------------------------------------------ */

static const char **grow_list(const char *const *v, int n, int want, int kind, struct npl_arena *a)
{
	static const char *const net[P_KINDS] = {"192.0.2", "198.51.100", "203.0.113"};
	const char **w = npl_arena_calloc(a, (size_t)want + 1, sizeof(*w));
	int i;

	for (i = 0; i < want; i++)
		w[i] = i < n ? v[i] : npl_arena_printf(a, "%s.%d", net[kind], 10 + i);
	return w;
}

/* A copy of l as the node of rank k of its instance, at ip (its --host, where that was its own
 * node's address, too). */
static struct npl_pagesh_launch as_rank(const struct npl_pagesh_launch *l, const char *own, const char *ip, int k,
					struct npl_arena *a)
{
	struct npl_pagesh_launch c = *l;
	int i;

	c.argv = npl_arena_calloc(a, (size_t)l->argc + 1, sizeof(*c.argv));
	for (i = 0; i < l->argc; i++) {
		c.argv[i] = l->argv[i];
		if (i && !strcmp(l->argv[i - 1], "--node-rank"))
			c.argv[i] = npl_arena_printf(a, "%d", k);
		else if (i && !strcmp(l->argv[i - 1], "--host") && own && !strcmp(l->argv[i], own))
			c.argv[i] = ip;
	}
	return c;
}

/* The nodes an instance runs on beyond the page's node list: each runs its first node's launch
 * with its own rank, and r->short_list says where (for the deviation). */
static void fill_short_lists(struct run *c)
{
	struct npl_page_run *r = c->r;
	int i, n = r->L.n, k;

	for (i = 0; i < n; i++) {
		struct npl_node_launch x = r->L.v[i];
		const char *nn = arg_of(&x.l, "--nnodes"), *rank = arg_of(&x.l, "--node-rank");
		int nodes = nn ? atoi(nn) : 1, kind = !strcmp(x.role, "prefill") ? P_PREFILL
						      : !strcmp(x.role, "decode") ? P_DECODE : P_NODE;
		int *len = kind == P_PREFILL ? &r->psite.nprefill : kind == P_DECODE ? &r->psite.ndecode : &r->psite.nnode;
		const char *const **list = kind == P_PREFILL ? &r->psite.prefill_ip
					   : kind == P_DECODE ? &r->psite.decode_ip : &r->psite.node_ip;

		if (nodes <= 1 || nodes > 64 || (rank && strcmp(rank, "0")) || x.node + nodes <= *len || !x.ip)
			continue;
		if (!r->short_role) {
			r->short_role = x.role;
			r->short_listed = *len;
			r->short_nnodes = nodes;
			r->short_loc = x.l.loc;
		}
		*list = grow_list(*list, *len, x.node + nodes, kind, c->a);
		for (k = 1; k < nodes; k++) {
			struct npl_node_launch y = x;

			if (x.node + k < *len)
				continue;
			y.node = x.node + k;
			y.ip = (*list)[y.node];
			y.instance = 0;
			y.l = as_rank(&x.l, x.ip, y.ip, k, c->a);
			push(&r->L, &c->cap, &y, c->a);
		}
		*len = x.node + nodes;
	}
}

/* ---- addresses of the authors' own cluster ------------------------------------------------ */


/* The IPv4 address at p (a whole word), or 0; its length in *n. Loopback, the wildcard and the
 * addresses import itself gives placeholders are not the authors'. */
static int literal_at(const char *text, const char *p, size_t *n)
{
	char buf[INET_ADDRSTRLEN];
	struct in_addr in;
	size_t k = strspn(p, "0123456789.");

	if ((p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '.')) || k < 7 || k >= sizeof(buf) ||
	    isalnum((unsigned char)p[k]) || p[k - 1] == '.')
		return 0;
	memcpy(buf, p, k);
	buf[k] = '\0';
	if (inet_pton(AF_INET, buf, &in) != 1 || !strncmp(buf, "127.", 4) || !strcmp(buf, "0.0.0.0"))
		return 0;
	*n = k;
	return 1;
}

/* Each literal address of the deployment replaced by one of LITERAL_NET (the same address by the
 * same one, in the order they first appear); into r->literal what each stood for. */
static void literal_addresses(struct npl_page_section *s, struct npl_page_run *r, struct npl_arena *a)
{
	struct npl_page_block *b = npl_arena_calloc(a, (size_t)s->ndeploy + 1, sizeof(*b));
	int i, k;

	for (i = 0; i < s->ndeploy; i++) {
		struct npl_buf out = NPL_BUF_INIT;
		const char *t = s->deploy[i].text, *p = t, *bol = t;
		int line = s->deploy[i].loc.line;
		size_t n;

		b[i] = s->deploy[i];
		while (*p) {
			if (!isdigit((unsigned char)*p) || !literal_at(t, p, &n)) {
				if (*p == '\n') {
					line++;
					bol = p + 1;
				}
				npl_buf_putc(&out, *p++);
				continue;
			}
			for (k = 0; k < r->nliteral && (strlen(r->literal[k]) != n || strncmp(r->literal[k], p, n)); k++)
				;
			if (k == r->nliteral && k < NPL_PAGERUN_MAX_LITERAL) {
				r->literal[k] = npl_arena_strndup(a, p, n);
				r->literal_loc[k] = (struct npl_loc){s->deploy[i].loc.file, line, (int)(p - bol) + 1};
				r->nliteral++;
			}
			if (k < NPL_PAGERUN_MAX_LITERAL)
				npl_buf_printf(&out, "%s.%d", LITERAL_NET, 10 + k);
			else
				npl_buf_add(&out, p, n);
			p += n;
		}
		b[i].text = npl_arena_strdup(a, npl_buf_str(&out));
		npl_buf_release(&out);
	}
	s->deploy = b;
}

/* The role the node at ip runs (P_PREFILL, P_DECODE, P_NODE), or -1 when it launches nothing. */
static int role_of_node(struct run *c, const char *ip)
{
	struct npl_pagesh_result res;
	int i;

	if (shell(c, ip, P_NODE, 0, &res))
		return -2;
	for (i = 0; i < res.n; i++) {
		const char *mode = arg_of(&res.v[i], "--disaggregation-mode");

		if (!strcmp(res.v[i].module, SERVER))
			return !mode ? P_NODE : !strcmp(mode, "prefill") ? P_PREFILL : P_DECODE;
	}
	return -1;
}

/* The literal addresses added to the lists of the roles their nodes run. */
static int literal_roles(struct run *c, int *max)
{
	struct npl_page_run *r = c->r;
	const char **v[P_KINDS];
	int k, i;

	for (k = 0; k < P_KINDS; k++) {
		v[k] = npl_arena_calloc(c->a, (size_t)(max[k] + r->nliteral + 1), sizeof(*v[k]));
		for (i = 0; i < max[k]; i++)
			v[k][i] = (k == P_PREFILL ? r->psite.prefill_ip : k == P_DECODE ? r->psite.decode_ip : r->psite.node_ip)[i];
	}
	for (i = 0; i < r->nliteral; i++) {
		const char *ip = npl_arena_printf(c->a, "%s.%d", LITERAL_NET, 10 + i);
		int role = role_of_node(c, ip);

		if (role == -2)
			return -1;
		r->literal_role[i] = role;
		if (role >= 0)
			v[role][max[role]++] = ip;
	}
	r->psite.prefill_ip = v[P_PREFILL];
	r->psite.nprefill = max[P_PREFILL];
	r->psite.decode_ip = v[P_DECODE];
	r->psite.ndecode = max[P_DECODE];
	r->psite.node_ip = v[P_NODE];
	r->psite.nnode = max[P_NODE];
	return 0;
}

int npl_page_run(const struct npl_page *p, const struct npl_page_section *s0, struct npl_page_run *r,
		 struct npl_arena *a, struct npl_diag *d)
{
	struct npl_page_section copy = *s0, *s = &copy;
	static const char *const env[] = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
					  "LD_LIBRARY_PATH=/usr/local/lib",
					  "PYTHONPATH=/usr/local/lib/python3/dist-packages",
					  "MODEL_PATH=/path/to/model-weights",
					  "DRAFT_MODEL_PATH=/path/to/draft-model-weights", NULL};
	struct run c = {s, r, a, d, 0, env};
	int max[P_KINDS] = {0, 0, 0}, i, k, servers = 0;

	(void)p;
	memset(r, 0, sizeof(*r));
	literal_addresses(s, r, a);
	for (i = 0; i < s->ndeploy; i++)
		count_placeholders(s->deploy[i].text, max);
	r->psite.ifname = NPL_PAGERUN_IFNAME;
	r->psite.prefill_ip = addresses(P_PREFILL, r->psite.nprefill = max[P_PREFILL], a);
	r->psite.decode_ip = addresses(P_DECODE, r->psite.ndecode = max[P_DECODE], a);
	r->psite.node_ip = addresses(P_NODE, r->psite.nnode = max[P_NODE], a);
	if (r->nliteral && literal_roles(&c, max))
		return -1;
	for (k = 0; k < P_KINDS; k++) {
		const char *const *v = k == P_PREFILL ? r->psite.prefill_ip : k == P_DECODE ? r->psite.decode_ip
											 : r->psite.node_ip;

		for (i = 0; i < max[k]; i++)
			if (servers_on(&c, v[i], k))
				return -1;
	}
	if (!max[P_PREFILL] && !max[P_DECODE] && !max[P_NODE] && servers_on(&c, NULL, P_NODE))
		return -1;
	fill_short_lists(&c);
	servers = r->L.n;
	if (!servers)
		return npl_error(d, &s->loc, "the section's deployment launches no %s on any node it names", SERVER);
	if (router_and_bench(&c))
		return -1;
	return site_of(&c);
}
