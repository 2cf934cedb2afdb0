/*
 * preflight_facts.c: what the tools, the kernel and the plan say, for preflight.c and the
 * renderer: the parsers of npu-smi's and hccn_tool's outputs, version files and the kernel's
 * socket tables; the host's interfaces; a node's place in its role's list, the ports it listens
 * on and the devices it uses. See preflight.h.
 */
#define _GNU_SOURCE /* getifaddrs, strcasestr, memmem */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "npulaunch/arena.h"
#include "npulaunch/ident.h"
#include "npulaunch/plan.h"
#include "npulaunch/preflight.h"
#include "npulaunch/text.h"

/* A whole decimal number that fits an int, the n bytes at s; -1 otherwise. */
static int num_n(const char *s, size_t n)
{
	static const struct npl_number_spec spec = {"a number", 0, 2147483647.0, 1};
	double v;

	return npl_parse_number_n(s, n, &spec, &v) ? -1 : (int)v;
}

/* ---- parsers ----------------------------------------------------------------------------- */

/* The cells of a table line "| a | b |": trimmed, in the arena; their count, -1 when the line
 * is not a table row (a separator, text). */
static int cells(const char *line, size_t len, const char **cell, int max, struct npl_arena *a)
{
	size_t i = 0, start;
	int n = 0;

	while (len && (line[len - 1] == ' ' || line[len - 1] == '\r' || line[len - 1] == '\t'))
		len--;
	while (i < len && line[i] == ' ')
		i++;
	if (i >= len || line[i] != '|' || line[len - 1] != '|' || len - i < 2)
		return -1;
	for (i++, start = i; i < len; i++) {
		if (line[i] != '|')
			continue;
		{
			size_t s = start, e = i;

			while (s < e && (line[s] == ' ' || line[s] == '\t'))
				s++;
			while (e > s && (line[e - 1] == ' ' || line[e - 1] == '\t'))
				e--;
			if (n < max)
				cell[n] = npl_arena_strndup(a, line + s, e - s);
			n++;
		}
		start = i + 1;
	}
	return n;
}

/* The blank-separated words of s, in the arena; their count. */
static int words(const char *s, const char **w, int max, struct npl_arena *a)
{
	int n = 0;

	while (*s) {
		size_t k;

		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			break;
		k = strcspn(s, " \t");
		if (n < max)
			w[n] = npl_arena_strndup(a, s, k);
		n++;
		s += k;
	}
	return n;
}

static int num_word(const char *w)
{
	return num_n(w, strlen(w));
}

static void add_die(struct npl_pf_smi *o, int *cap, const struct npl_pf_die *die)
{
	if (o->ndies == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		o->dies = npl_xrealloc(o->dies, (size_t)*cap * sizeof(*o->dies));
	}
	o->dies[o->ndies++] = *die;
}

static void add_proc(struct npl_pf_smi *o, int *cap, const struct npl_pf_proc *p)
{
	if (o->nprocs == *cap) {
		*cap = *cap ? *cap * 2 : 8;
		o->procs = npl_xrealloc(o->procs, (size_t)*cap * sizeof(*o->procs));
	}
	o->procs[o->nprocs++] = *p;
}

/* The column that is "Health", or -1. */
static int i_health(const char *const *c, int nc)
{
	for (int i = 0; i < nc && i < 8; i++)
		if (!strcmp(c[i], "Health"))
			return i;
	return -1;
}

/* Where npu-smi's output is, for npl_pf_parse_smi: the tables seen so far, the die whose second
 * row is awaited, and why the text was refused. */
struct smi_parser {
	enum { BEFORE, HEADER2, DIES, PROCS } state;
	struct npl_pf_smi *out;
	struct npl_arena *a;
	int capd, capp, lineno, second_col, pending;
	struct npl_pf_die die;
	const char *why;
};

/* The process table's header, "| NPU Chip | Process id | Process name | ...": it ends the
 * device table wherever it comes. 0, or -1 with ps->why. */
static int process_header(struct smi_parser *ps, const char *const *c)
{
	const char *w[8] = {0};
	int nw;

	if (ps->state != DIES && ps->state != PROCS) {
		ps->why = npl_arena_printf(ps->a, "line %d: a process table before any device table", ps->lineno);
		return -1;
	}
	nw = words(c[0], w, 8, ps->a);
	if (nw != 2 || strcmp(w[0], "NPU") || strcmp(w[1], "Chip")) {
		ps->why = npl_arena_printf(ps->a, "line %d: a process table whose first column is not 'NPU Chip'", ps->lineno);
		return -1;
	}
	if (ps->pending) {
		ps->why = npl_arena_printf(ps->a, "line %d: a die's second row is missing", ps->lineno);
		return -1;
	}
	ps->state = PROCS;
	ps->out->procs_known = 1;
	return 0;
}

/* The device table's two header rows: "| NPU Name | Health | ..." (any row before it is text
 * around the table), then "| Chip [Phy-ID|Device] | Bus-Id | ...". 0, or -1 with ps->why. */
static int device_header(struct smi_parser *ps, const char *const *c, int nc)
{
	const char *w[8] = {0};
	int nw;

	if (ps->state == BEFORE) {
		if (i_health(c, nc) < 0)
			return 0;
		ps->state = HEADER2;
		nw = words(c[0], w, 8, ps->a);
		if (i_health(c, nc) != 1 || nw != 2 || strcmp(w[0], "NPU") || strcmp(w[1], "Name")) {
			ps->why = npl_arena_printf(ps->a, "line %d: a device table whose first column is not 'NPU Name'", ps->lineno);
			return -1;
		}
		return 0;
	}
	nw = words(c[0], w, 8, ps->a);
	if (nc < 3 || strcmp(c[1], "Bus-Id") || nw < 1 || nw > 2 || strcmp(w[0], "Chip") ||
	    (nw == 2 && strcmp(w[1], "Phy-ID") && strcmp(w[1], "Device"))) {
		ps->why = npl_arena_printf(ps->a, "line %d: the device table's second header row is not 'Chip [Phy-ID|Device] | Bus-Id'", ps->lineno);
		return -1;
	}
	ps->second_col = nw == 2;
	ps->state = DIES;
	return 0;
}

/* A row of the device table: a die's first row "| NPU NAME | HEALTH | ...", or its second
 * "| CHIP [PHY] | BUS | ...", which completes it. 0, or -1 with ps->why. */
static int die_row(struct smi_parser *ps, const char *const *c, int nc)
{
	const char *w[8] = {0};
	int nw = words(c[0], w, 8, ps->a);

	if (nc < 3) {
		ps->why = npl_arena_printf(ps->a, "line %d: a device row with %d columns", ps->lineno, nc);
		return -1;
	}
	if (!ps->pending) {
		if (nw < 2 || num_word(w[0]) < 0) {
			ps->why = npl_arena_printf(ps->a, "line %d: a die's first row does not start with its NPU id and name", ps->lineno);
			return -1;
		}
		memset(&ps->die, 0, sizeof(ps->die));
		ps->die.npu = num_word(w[0]);
		ps->die.name = w[1];
		ps->die.health = c[1];
		ps->pending = 1;
		return 0;
	}
	if (nw < 1 || nw != 1 + ps->second_col || num_word(w[0]) < 0) {
		ps->why = npl_arena_printf(ps->a, "line %d: a die's second row does not start with its chip id%s", ps->lineno,
					   ps->second_col ? " and physical id" : "");
		return -1;
	}
	ps->die.chip = num_word(w[0]);
	ps->die.bus = c[1];
	ps->die.phy = ps->second_col && num_word(w[1]) >= 0 ? num_word(w[1]) : ps->die.npu;
	add_die(ps->out, &ps->capd, &ps->die);
	ps->pending = 0;
	return 0;
}

/* A row of the process table: "| NPU Chip | pid | name | memory |", or that a die has none.
 * 0, or -1 with ps->why. */
static int process_row(struct smi_parser *ps, const char *const *c, int nc)
{
	const char *w[8] = {0};
	int nw;

	if (nc == 1 && npl_starts_with(c[0], "No running processes found in NPU"))
		return 0;
	nw = words(c[0], w, 8, ps->a);
	if (nc < 4 || nw != 2 || num_word(w[0]) < 0 || num_word(w[1]) < 0) {
		ps->why = npl_arena_printf(ps->a, "line %d: a process row that is not 'NPU Chip | pid | name | memory'", ps->lineno);
		return -1;
	}
	{
		struct npl_pf_proc pr = {num_word(w[0]), num_word(w[1]), num_word(c[1]), c[2], num_word(c[3])};

		/* a row without a process (NA) holds nothing */
		if (pr.pid >= 0)
			add_proc(ps->out, &ps->capp, &pr);
	}
	return 0;
}

/* One table row of nc cells (c: the first 8), by where the parser is. 0, or -1 with ps->why. */
static int smi_row(struct smi_parser *ps, const char *const *c, int nc)
{
	if (nc > 8 && ps->state != BEFORE) {
		ps->why = npl_arena_printf(ps->a, "line %d: a row of %d columns", ps->lineno, nc);
		return -1;
	}
	if (nc == 1 && ps->state == BEFORE && !ps->out->version) {
		const char *v = strstr(c[0], "npu-smi "), *w[8] = {0};

		if (v && words(v + 8, w, 8, ps->a) >= 1)
			ps->out->version = w[0];
	}
	if (nc >= 4 && !strcmp(c[1], "Process id") && !strcmp(c[2], "Process name"))
		return process_header(ps, c);
	switch (ps->state) {
	case BEFORE:
	case HEADER2:
		return device_header(ps, c, nc);
	case DIES:
		return die_row(ps, c, nc);
	case PROCS:
		return process_row(ps, c, nc);
	}
	return 0;
}

/*
 * The dies are listed in the order of their logical ids (what ASCEND_RT_VISIBLE_DEVICES and
 * --base-gpu-id count), in a container too, where only the visible NPUs are listed.
 *
 * npu-smi info, as the Ascend driver prints it: a device table whose header is
 * "| NPU Name | Health | ..." over "| Chip [Phy-ID|Device] | Bus-Id | ...", then per die two
 * rows: "| NPU NAME | HEALTH | ..." and "| CHIP [PHY] | BUS | ...", then optionally a process
 * table "| NPU Chip | Process id | Process name | Process memory(MB) | ..." whose rows are a
 * process each or "No running processes found in NPU N". Anything else is not guessed at.
 */
int npl_pf_parse_smi(const char *text, struct npl_pf_smi *out, struct npl_arena *a, const char **why)
{
	struct smi_parser ps;
	const char *p = text;

	memset(out, 0, sizeof(*out));
	out->text = text;
	memset(&ps, 0, sizeof(ps));
	ps.state = BEFORE;
	ps.out = out;
	ps.a = a;
	*why = NULL;
	while (*p) {
		size_t len = strcspn(p, "\n");
		const char *c[8] = {0};
		int nc;

		ps.lineno++;
		nc = cells(p, len, c, 8, a);
		/* separators (+---+) and text around the table are no rows */
		if (nc >= 0 && smi_row(&ps, c, nc)) {
			*why = ps.why;
			return -1;
		}
		p += len + (p[len] == '\n');
	}
	if (ps.state == BEFORE || ps.state == HEADER2) {
		*why = ps.state == BEFORE ? "no device table ('NPU Name | Health')" : "the device table has no second header row";
		return -1;
	}
	if (ps.pending) {
		*why = "the last die's second row is missing";
		return -1;
	}
	if (!out->ndies) {
		*why = "the device table lists no die";
		return -1;
	}
	return 0;
}

const char *npl_pf_parse_label(const char *text, const char *label, struct npl_arena *a)
{
	const char *p = strcasestr(text, label), *e;

	if (!p)
		return NULL;
	p += strlen(label);
	while (*p == ' ' || *p == '\t')
		p++;
	e = p + strcspn(p, "\r\n");
	while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	return npl_arena_strndup(a, p, (size_t)(e - p));
}

int npl_pf_parse_link(const char *text)
{
	struct npl_arena a;
	const char *v;
	int r = -1;

	npl_arena_init(&a);
	v = npl_pf_parse_label(text, "link status:", &a);
	if (v && npl_strcaseeq(v, "UP"))
		r = 1;
	else if (v && npl_strcaseeq(v, "DOWN"))
		r = 0;
	npl_arena_release(&a);
	return r;
}

int npl_pf_parse_ip(const char *text, char *out, size_t n)
{
	static const char *const labels[] = {"ipaddr:", "ipv6_address:"};
	struct npl_arena a;
	int r = -1;

	npl_arena_init(&a);
	for (size_t i = 0; i < NPL_ARRAY_SIZE(labels) && r; i++) {
		const char *v = npl_pf_parse_label(text, labels[i], &a);

		if (v && *v && !npl_ip_canonical(v, out, n))
			r = 0;
	}
	npl_arena_release(&a);
	return r;
}

const char *npl_pf_parse_net_health(const char *text, struct npl_arena *a)
{
	const char *v = npl_pf_parse_label(text, "net health status:", a);

	return v && *v ? v : NULL;
}

const char *npl_pf_parse_kv(const char *text, const char *key, struct npl_arena *a)
{
	size_t kl = strlen(key);
	const char *p = text;

	while (*p) {
		size_t len = strcspn(p, "\n");
		const char *s = p;

		while (*s == ' ' || *s == '\t')
			s++;
		if ((size_t)(p + len - s) > kl && !strncasecmp(s, key, kl) && s[kl] == '=') {
			const char *v = s + kl + 1, *e = p + len;

			while (e > v && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
				e--;
			if (e > v)
				return npl_arena_strndup(a, v, (size_t)(e - v));
		}
		p += len + (p[len] == '\n');
	}
	return NULL;
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* n hex digits at s as a number; -1 on anything else. */
static long long hexnum(const char *s, size_t n)
{
	long long v = 0;

	for (size_t i = 0; i < n; i++) {
		int h = hexval((unsigned char)s[i]);

		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

/*
 * /proc/net/tcp and tcp6 (the kernel's tcp4_seq_show/tcp6_seq_show): a header naming
 * local_address, then "sl: LOCAL REMOTE ST ...", LOCAL being the address as the kernel holds
 * it (32-bit words printed in host order) and the port in hex; state 0A is LISTEN.
 */
int npl_pf_parse_net_tcp(const char *text, int v6, struct npl_pf_listen **out, int *n)
{
	const char *p = text;
	size_t alen = v6 ? 32 : 8;
	int first = 1, cap = *n;

	while (*p) {
		size_t len = strcspn(p, "\n");
		const char *s = p, *e = p + len;
		const char *f[4];
		size_t fl[4];
		int nf = 0;

		if (first) {
			first = 0;
			if (!memmem(p, len, "local_address", 13))
				return -1;
			p += len + (p[len] == '\n');
			continue;
		}
		while (nf < 4) {
			while (s < e && (*s == ' ' || *s == '\t'))
				s++;
			if (s >= e)
				break;
			f[nf] = s;
			while (s < e && *s != ' ' && *s != '\t')
				s++;
			fl[nf] = (size_t)(s - f[nf]);
			nf++;
		}
		p += len + (p[len] == '\n');
		if (nf < 4 || fl[1] != alen + 5 || f[1][alen] != ':' || fl[3] != 2 || strncmp(f[3], "0A", 2))
			continue;
		{
			long long port = hexnum(f[1] + alen + 1, 4);
			unsigned char bytes[16];
			struct npl_pf_listen l;

			if (port < 0)
				continue;
			for (size_t w = 0; w < alen / 8; w++) {
				long long word = hexnum(f[1] + 8 * w, 8);
				uint32_t u;

				if (word < 0)
					goto next;
				u = (uint32_t)word;
				/* the word as it was in memory: network order bytes on this host */
				memcpy(bytes + 4 * w, &u, 4);
			}
			l.port = (int)port;
			if (!inet_ntop(v6 ? AF_INET6 : AF_INET, bytes, l.addr, sizeof(l.addr)))
				continue;
			if (*n == cap) {
				cap = cap ? cap * 2 : 16;
				*out = npl_xrealloc(*out, (size_t)cap * sizeof(**out));
			}
			(*out)[(*n)++] = l;
		}
next:;
	}
	return first ? -1 : 0;
}

/* ---- the interfaces ---------------------------------------------------------------------- */

int npl_pf_ifaces_read(struct npl_pf_ifaces *ifs, struct npl_arena *a)
{
	struct ifaddrs *ifa, *q;
	int cap = 0;

	memset(ifs, 0, sizeof(*ifs));
	if (getifaddrs(&ifa) != 0)
		return -1;
	for (q = ifa; q; q = q->ifa_next)
		cap++;
	ifs->v = npl_arena_calloc(a, (size_t)cap + 1, sizeof(*ifs->v));
	for (q = ifa; q; q = q->ifa_next) {
		struct npl_pf_iface *f = NULL;
		char text[INET6_ADDRSTRLEN];

		if (!q->ifa_name)
			continue;
		for (int i = 0; i < ifs->n; i++)
			if (!strcmp(ifs->v[i].name, q->ifa_name))
				f = &ifs->v[i];
		if (!f) {
			f = &ifs->v[ifs->n++];
			f->name = npl_arena_strdup(a, q->ifa_name);
			f->addrs = npl_arena_calloc(a, (size_t)cap + 1, sizeof(*f->addrs));
		}
		f->up |= (q->ifa_flags & IFF_UP) != 0;
		f->running |= (q->ifa_flags & IFF_RUNNING) != 0;
		if (npl_ident_addr_text(q->ifa_addr, text, sizeof(text)) == 0)
			f->addrs[f->naddrs++] = npl_arena_strdup(a, text);
	}
	freeifaddrs(ifa);
	return 0;
}
