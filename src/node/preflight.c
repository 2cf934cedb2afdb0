/* preflight.c: the checks that run on a node before a launch, and the tools they run; see
 * preflight.h (the parsers and the facts of a node are in preflight_facts.c, the report in
 * preflight_report.c, the runner of the tools in proc.c). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "npulaunch/arena.h"
#include "npulaunch/fsio.h"
#include "npulaunch/plan.h"
#include "npulaunch/preflight.h"
#include "npulaunch/proc.h"
#include "npulaunch/text.h"
#include "npulaunch/tune.h"
#include "preflight_internal.h"

/* The most read of a small file (a version file, meminfo), of a weight index, of a procfs
 * socket table, and of a tool's output. */
#define SMALL_MAX ((size_t)1 << 20)
#define INDEX_MAX ((size_t)64 << 20)
#define NET_MAX ((size_t)64 << 20)
#define TOOL_MAX ((size_t)1 << 20)
/* The most dies and ports one node is checked for. */
#define MAX_IDS 256
#define MAX_PORTS 64

/* ---- results ----------------------------------------------------------------------------- */

static void add(struct npl_preflight *pf, const char *name, enum npl_pf_status st, const char *found,
		const char *fix)
{
	if (pf->n == pf->cap) {
		pf->cap = pf->cap ? pf->cap * 2 : 16;
		pf->v = npl_xrealloc(pf->v, (size_t)pf->cap * sizeof(*pf->v));
	}
	pf->v[pf->n].name = name;
	pf->v[pf->n].status = st;
	pf->v[pf->n].found = npl_arena_strdup(&pf->arena, found ? found : "");
	pf->v[pf->n].fix = fix ? npl_arena_strdup(&pf->arena, fix) : NULL;
	pf->n++;
	pf->failed += st == NPL_PF_FAIL;
	pf->warned += st == NPL_PF_WARN;
}

static void skip(struct npl_preflight *pf, const char *name, const char *why)
{
	add(pf, name, NPL_PF_SKIP, why, NULL);
}

/* Append "; " then the formatted text to b (a list of findings). */
static void note(struct npl_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct npl_buf *b, const char *fmt, ...)
{
	va_list ap;
	char tmp[2048];

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (b->len)
		npl_buf_puts(b, "; ");
	npl_buf_puts(b, tmp);
}

/* ---- small helpers --------------------------------------------------------------------- */

static const char *under(struct npl_preflight *pf, const struct npl_preflight_opts *o, const char *path)
{
	if (!o->root || !*o->root || !strcmp(o->root, "/"))
		return path;
	return npl_arena_printf(&pf->arena, "%s%s", o->root, path);
}

static int is_server(const cJSON *role)
{
	const char *prog = npl_json_str(role, "program");

	return prog && !strcmp(prog, "server");
}

/* 1 when the role needs site value key ("model-path"). */
static int needs(const cJSON *role, const char *key)
{
	const cJSON *n;

	cJSON_ArrayForEach(n, cJSON_GetObjectItemCaseSensitive(role, "needs")) {
		const char *k = npl_json_str(n, "key");

		if (k && !strcmp(k, key))
			return 1;
	}
	return 0;
}

static const char *site_value(const struct npl_preflight_opts *o, enum npl_site_key k)
{
	return o->site && o->site->key[k].n ? o->site->key[k].v[0] : NULL;
}

/* Diagnostic i of d as a finding: its text without the "error: " a terminal line starts with. */
static const char *diag_text(struct npl_preflight *pf, const struct npl_diag *d, int i)
{
	char *m = npl_diag_format(d, &d->v[i], 0);
	const char *s = m, *r;

	if (npl_starts_with(s, "error: "))
		s += 7;
	else if (npl_starts_with(s, "warning: "))
		s += 9;
	r = npl_arena_strdup(&pf->arena, s);
	free(m);
	return r;
}

/* Read a whole file of at most max bytes under the root; NULL and why (strerror text or the
 * reader's message) otherwise. */
static char *slurp(struct npl_preflight *pf, const char *path, size_t max, size_t *len, const char **why)
{
	struct npl_diag d = NPL_DIAG_INIT;
	char *text = npl_read_file_max(&pf->arena, path, max, len, &d);

	if (!text && why)
		*why = d.n ? diag_text(pf, &d, 0) : npl_arena_printf(&pf->arena, "cannot read '%s'", path);
	npl_diag_release(&d);
	return text;
}

/* The first line of text, at most 200 bytes of it, in the arena. */
static const char *first_line(struct npl_preflight *pf, const char *text)
{
	size_t n;

	while (*text == '\n' || *text == '\r' || *text == ' ')
		text++;
	n = strcspn(text, "\r\n");
	return npl_arena_strndup(&pf->arena, text, n > 200 ? 200 : n);
}

/* A whole decimal number that fits an int, the n bytes at s; -1 otherwise. */
static int num_n(const char *s, size_t n)
{
	static const struct npl_number_spec spec = {"a number", 0, 2147483647.0, 1};
	double v;

	return npl_parse_number_n(s, n, &spec, &v) ? -1 : (int)v;
}

/* ---- the tools (proc.c finds and runs them) -------------------------------------------- */

/* The hardware profile's tool folders (the plan's recipe.preflight.tool_path), or NULL: where
 * npl_proc_find() looks after PATH. */
static const cJSON *tool_dirs(const cJSON *plan)
{
	return cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(plan, "recipe"), "preflight"),
		"tool_path");
}

const char *npl_pf_smi_text(const cJSON *plan, const char *root, double timeout, int topo, struct npl_arena *a)
{
	char *argv[] = {(char *)"npu-smi", (char *)"info", topo ? (char *)"-t" : NULL, (char *)"topo", NULL};
	const char *tool = npl_proc_find(a, "npu-smi", tool_dirs(plan), root), *out = NULL;
	int status;

	if (!tool || npl_proc_run(a, tool, argv, timeout, TOOL_MAX, &out, &status) != NPL_PROC_OK)
		return NULL;
	return out;
}

/* What went wrong with a run, for a finding. */
static const char *run_problem(struct npl_preflight *pf, const char *cmd, enum npl_proc_result r, int status,
			       const char *out, double timeout)
{
	switch (r) {
	case NPL_PROC_TIMEOUT:
		return npl_arena_printf(&pf->arena, "'%s' did not finish within %gs (stopped; it is not run again)", cmd, timeout);
	case NPL_PROC_TOO_LONG:
		return npl_arena_printf(&pf->arena, "'%s' printed more than %zu bytes (stopped)", cmd, TOOL_MAX);
	case NPL_PROC_CANNOT:
		return npl_arena_printf(&pf->arena, "'%s' could not be run", cmd);
	case NPL_PROC_FAILED:
		return npl_arena_printf(&pf->arena, "'%s' failed (exit %d)%s%s", cmd, status, *out ? ": " : "",
					*out ? first_line(pf, out) : "");
	default:
		return "";
	}
}

/* ---- the checks --------------------------------------------------------------------------- */

/* What the checks share: the dies npu-smi listed, when it could. */
struct state {
	struct npl_pf_smi smi;
	int smi_ok;
	int ids[MAX_IDS];        /* the logical devices this node's instances use */
	int nids;
	int node;                /* the node index the plan entries are taken from */
};

const char *npl_pf_role_name(const struct npl_preflight_opts *o)
{
	const char *r = npl_json_str(o->role, "role");

	return r ? r : "role";
}

/* The versions of the driver and the toolkit, from the files the hardware profile names. */
static void check_versions(struct npl_preflight *pf, const struct npl_preflight_opts *o)
{
	static const struct {
		const char *check, *key, *what, *fix;
	} v[] = {
		{"driver", "driver_version", "Ascend driver",
		 "install the Ascend driver (npu-smi and hccn_tool come with it); in a container, mount its version file"},
		{"toolkit", "toolkit_version", "CANN toolkit", "install the CANN toolkit the recipe's hardware profile expects"},
	};
	const cJSON *pre = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o->plan, "recipe"), "preflight");

	for (size_t i = 0; i < NPL_ARRAY_SIZE(v); i++) {
		const cJSON *list = cJSON_GetObjectItemCaseSensitive(pre, v[i].key), *it;
		struct npl_buf tried = NPL_BUF_INIT;
		int done = 0;

		if (!is_server(o->role)) {
			skip(pf, v[i].check, npl_arena_printf(&pf->arena, "the %s uses no NPU", npl_pf_role_name(o)));
			continue;
		}
		if (!pre) {
			skip(pf, v[i].check, "the plan names no version files (a manifest of an older npulaunch: render it again)");
			continue;
		}
		cJSON_ArrayForEach(it, list) {
			const char *path, *why = NULL, *ver;
			struct stat st;
			char *text;

			if (!cJSON_IsString(it))
				continue;
			path = under(pf, o, it->valuestring);
			npl_buf_printf(&tried, "%s%s", tried.len ? ", " : "", path);
			if (lstat(path, &st) != 0)
				continue;
			text = slurp(pf, path, SMALL_MAX, NULL, &why);
			if (!text)
				add(pf, v[i].check, NPL_PF_WARN, why, v[i].fix);
			else if (!(ver = npl_pf_parse_kv(text, "version", &pf->arena)))
				add(pf, v[i].check, NPL_PF_WARN,
				    npl_arena_printf(&pf->arena, "%s has no 'version=' line: a layout npulaunch does not know", path), NULL);
			else
				add(pf, v[i].check, NPL_PF_OK, npl_arena_printf(&pf->arena, "%s %s (%s)", v[i].what, ver, path), NULL);
			done = 1;
			break;
		}
		if (!done && !tried.len)
			skip(pf, v[i].check, npl_arena_printf(&pf->arena, "the hardware profile names no %s version file", v[i].what));
		else if (!done)
			add(pf, v[i].check, NPL_PF_WARN,
			    npl_arena_printf(&pf->arena, "no %s version file: none of %s exists", v[i].what, npl_buf_str(&tried)),
			    v[i].fix);
		npl_buf_release(&tried);
	}
}

/* The env files the role sources: each a regular file that can be read. */
static void check_env_files(struct npl_preflight *pf, const struct npl_preflight_opts *o)
{
	const cJSON *it, *src = cJSON_GetObjectItemCaseSensitive(o->role, "source");
	struct npl_buf bad = NPL_BUF_INIT, good = NPL_BUF_INIT;
	int n = 0;

	if (!cJSON_GetArraySize(src)) {
		skip(pf, "env-files", npl_arena_printf(&pf->arena, "the %s sources no env file", npl_pf_role_name(o)));
		return;
	}
	cJSON_ArrayForEach(it, src) {
		struct npl_buf v = NPL_BUF_INIT;
		struct npl_diag d = NPL_DIAG_INIT;
		struct stat st;
		int missing = -1, fd;

		if (npl_pval_resolve(&v, npl_json_str(it, "path"), o->site, &missing)) {
			npl_buf_release(&v);
			continue;
		}
		fd = npl_open_regular(under(pf, o, npl_buf_str(&v)), 0, (size_t)-1, &st, &d);
		if (fd < 0) {
			note(&bad, "%s", diag_text(pf, &d, 0));
		} else {
			close(fd);
			npl_buf_printf(&good, "%s%s", good.len ? ", " : "", under(pf, o, npl_buf_str(&v)));
			n++;
		}
		npl_diag_release(&d);
		npl_buf_release(&v);
	}
	if (bad.len)
		add(pf, "env-files", NPL_PF_FAIL, npl_buf_str(&bad),
		    "install the Ascend toolkit and NNAL on this node: the launch sources these files");
	else
		add(pf, "env-files", NPL_PF_OK,
		    npl_arena_printf(&pf->arena, "%d env file%s present: %s", n, n == 1 ? "" : "s", npl_buf_str(&good)), NULL);
	npl_buf_release(&bad);
	npl_buf_release(&good);
}

/* "0-15" or "0-7, 9" for the ids. */
static const char *ids_text(struct npl_preflight *pf, const int *ids, int n)
{
	struct npl_buf b = NPL_BUF_INIT;
	const char *s;

	for (int i = 0; i < n;) {
		int j = i;

		while (j + 1 < n && ids[j + 1] == ids[j] + 1)
			j++;
		npl_buf_printf(&b, "%s%d", b.len ? ", " : "", ids[i]);
		if (j > i)
			npl_buf_printf(&b, "-%d", ids[j]);
		i = j + 1;
	}
	s = npl_arena_strdup(&pf->arena, b.len ? npl_buf_str(&b) : "none");
	npl_buf_release(&b);
	return s;
}

static const char *run_cmd_text(struct npl_preflight *pf, char *const argv[])
{
	struct npl_buf b = NPL_BUF_INIT;
	const char *s;

	for (int i = 0; argv[i]; i++)
		npl_buf_printf(&b, "%s%s", i ? " " : "", argv[i]);
	s = npl_arena_strdup(&pf->arena, npl_buf_str(&b));
	npl_buf_release(&b);
	return s;
}

/* npu-smi info: enough dies, the ones this node uses healthy and held by no process. */
static void check_npus(struct npl_preflight *pf, const struct npl_preflight_opts *o, struct state *st)
{
	char *argv[] = {(char *)"npu-smi", (char *)"info", NULL};
	struct npl_buf bad = NPL_BUF_INIT, warn = NPL_BUF_INIT;
	const char *tool, *out, *why;
	enum npl_proc_result r;
	int status, max = -1;

	if (!is_server(o->role)) {
		skip(pf, "npus", npl_arena_printf(&pf->arena, "the %s uses no NPU", npl_pf_role_name(o)));
		return;
	}
	if (o->smi_out) {   /* run moments ago, by apply's affinity: not twice */
		out = o->smi_out;
	} else if (!(tool = npl_proc_find(&pf->arena, "npu-smi", tool_dirs(o->plan), o->root))) {
		add(pf, "npus", NPL_PF_WARN,
		    npl_arena_printf(&pf->arena, "npu-smi not found (looked in %s): the NPUs were not checked",
				     npl_proc_places(&pf->arena, tool_dirs(o->plan), o->root)),
		    "install the Ascend driver, which brings npu-smi, or put its folder on PATH");
		return;
	} else if ((r = npl_proc_run(&pf->arena, tool, argv, o->timeout, TOOL_MAX, &out, &status)) != NPL_PROC_OK) {
		add(pf, "npus", NPL_PF_WARN,
		    npl_arena_printf(&pf->arena, "%s: the NPUs were not checked", run_problem(pf, "npu-smi info", r, status, out, o->timeout)),
		    "run npu-smi info by hand: the driver may not be loaded, or another container holds the devices");
		return;
	}
	if (npl_pf_parse_smi(out, &st->smi, &pf->arena, &why)) {
		add(pf, "npus", NPL_PF_WARN,
		    npl_arena_printf(&pf->arena, "npu-smi info printed a layout npulaunch does not know (%s): the NPUs were not checked", why),
		    NULL);
		return;
	}
	st->smi_ok = 1;
	for (int i = 0; i < st->nids; i++)
		if (st->ids[i] > max)
			max = st->ids[i];
	if (max >= st->smi.ndies)
		note(&bad, "npu-smi lists %d die%s; this node's instance%s use%s %d (devices %s)", st->smi.ndies,
		     st->smi.ndies == 1 ? "" : "s", st->nids == 1 ? "" : "s", "", st->nids, ids_text(pf, st->ids, st->nids));
	for (int i = 0; i < st->nids; i++) {
		const struct npl_pf_die *d;

		if (st->ids[i] >= st->smi.ndies)
			continue;
		d = &st->smi.dies[st->ids[i]];
		if (npl_strcaseeq(d->health, "OK"))
			;
		else if (npl_strcaseeq(d->health, "Warning"))
			note(&warn, "die %d (NPU %d, chip %d): health %s", st->ids[i], d->npu, d->chip, d->health);
		else
			note(&bad, "die %d (NPU %d, chip %d): health %s", st->ids[i], d->npu, d->chip, d->health);
		for (int k = 0; k < st->smi.nprocs; k++) {
			const struct npl_pf_proc *p = &st->smi.procs[k];

			if (p->npu != d->npu || p->chip != d->chip)
				continue;
			if (p->mem_mb >= 0)
				note(&bad, "die %d (NPU %d, chip %d): process %ld (%s) holds %ld MB", st->ids[i], d->npu, d->chip,
				     p->pid, p->name, p->mem_mb);
			else
				note(&bad, "die %d (NPU %d, chip %d): process %ld (%s) uses it", st->ids[i], d->npu, d->chip, p->pid,
				     p->name);
		}
	}
	if (!st->smi.procs_known)
		note(&warn, "npu-smi info printed no process table: processes holding the dies were not checked");
	if (bad.len) {
		if (warn.len)
			note(&bad, "%s", npl_buf_str(&warn));
		add(pf, "npus", NPL_PF_FAIL, npl_buf_str(&bad),
		    "stop what holds the dies (npu-smi info lists each process) or run where healthy dies are free; an unhealthy die needs the hardware team (npu-smi info -t health -i NPU -c CHIP says why)");
	} else if (warn.len) {
		add(pf, "npus", NPL_PF_WARN, npl_buf_str(&warn), NULL);
	} else {
		add(pf, "npus", NPL_PF_OK,
		    npl_arena_printf(&pf->arena, "npu-smi%s%s lists %d dies; devices %s, which this node uses, are OK and held by no process",
				     st->smi.version ? " " : "", st->smi.version ? st->smi.version : "", st->smi.ndies,
				     ids_text(pf, st->ids, st->nids)),
		    NULL);
	}
	npl_buf_release(&bad);
	npl_buf_release(&warn);
}

/* hccn_tool: each device this node uses has its link up and an address; the tool's own probe
 * of its detection address (net_health) is reported where one is configured. */
static void check_npu_network(struct npl_preflight *pf, const struct npl_preflight_opts *o, struct state *st)
{
	const char *rname = npl_pf_role_name(o), *tool;
	struct npl_buf bad = NPL_BUF_INIT, warn = NPL_BUF_INIT, addrs = NPL_BUF_INIT;
	int per = npl_json_int(o->role, "nodes_per_instance", 1), probed = 0, unprobed = 0;

	if (!is_server(o->role)) {
		skip(pf, "npu-network", npl_arena_printf(&pf->arena, "the %s uses no NPU", rname));
		return;
	}
	if (per <= 1 && strcmp(rname, "prefill") && strcmp(rname, "decode")) {
		skip(pf, "npu-network", "one node per instance and no PD transfer: the NPU network is not used");
		return;
	}
	if (!(tool = npl_proc_find(&pf->arena, "hccn_tool", tool_dirs(o->plan), o->root))) {
		add(pf, "npu-network", NPL_PF_WARN,
		    npl_arena_printf(&pf->arena, "hccn_tool not found (looked in %s): the NPU network was not checked",
				     npl_proc_places(&pf->arena, tool_dirs(o->plan), o->root)),
		    "install the Ascend driver, which brings hccn_tool, or put its folder on PATH");
		return;
	}
	for (int i = 0; i < st->nids; i++) {
		int dev = st->smi_ok && st->ids[i] < st->smi.ndies ? st->smi.dies[st->ids[i]].phy : st->ids[i];
		char id[16], ip[INET6_ADDRSTRLEN];
		char *link[] = {(char *)"hccn_tool", (char *)"-i", id, (char *)"-link", (char *)"-g", NULL};
		char *ip4[] = {(char *)"hccn_tool", (char *)"-i", id, (char *)"-ip", (char *)"-g", NULL};
		char *ip6[] = {(char *)"hccn_tool", (char *)"-i", id, (char *)"-ip", (char *)"-inet6", (char *)"-g", NULL};
		char *health[] = {(char *)"hccn_tool", (char *)"-i", id, (char *)"-net_health", (char *)"-g", NULL};
		const char *out, *h;
		enum npl_proc_result r;
		int status, up;

		snprintf(id, sizeof(id), "%d", dev);
		r = npl_proc_run(&pf->arena, tool, link, o->timeout, TOOL_MAX, &out, &status);
		if (r != NPL_PROC_OK) {
			note(&warn, "%s", run_problem(pf, run_cmd_text(pf, link), r, status, out, o->timeout));
			if (r == NPL_PROC_TIMEOUT) {
				break;
			}
			continue;
		}
		up = npl_pf_parse_link(out);
		if (up == 0)
			note(&bad, "device %d: link DOWN", dev);
		else if (up < 0)
			note(&warn, "device %d: '%s' printed an answer npulaunch does not know: %s", dev, run_cmd_text(pf, link),
			     first_line(pf, out));
		r = npl_proc_run(&pf->arena, tool, ip4, o->timeout, TOOL_MAX, &out, &status);
		if (r == NPL_PROC_OK && npl_pf_parse_ip(out, ip, sizeof(ip)) != 0)
			r = npl_proc_run(&pf->arena, tool, ip6, o->timeout, TOOL_MAX, &out, &status);
		if (r == NPL_PROC_TIMEOUT) {
			note(&warn, "%s", run_problem(pf, run_cmd_text(pf, ip4), r, status, out, o->timeout));
			break;
		}
		if (r != NPL_PROC_OK || npl_pf_parse_ip(out, ip, sizeof(ip)) != 0)
			note(&bad, "device %d: no address ('hccn_tool -i %d -ip -g'%s%s)", dev, dev, *out ? ": " : "",
			     *out ? first_line(pf, out) : "");
		else if (i < 2 || i == st->nids - 1)
			npl_buf_printf(&addrs, "%s%sdevice %d %s", addrs.len ? ", " : "",
				       i == st->nids - 1 && i > 2 ? "..., " : "", dev, ip);
		r = npl_proc_run(&pf->arena, tool, health, o->timeout, TOOL_MAX, &out, &status);
		if (r == NPL_PROC_TIMEOUT) {
			note(&warn, "%s", run_problem(pf, run_cmd_text(pf, health), r, status, out, o->timeout));
			break;
		}
		h = r == NPL_PROC_OK ? npl_pf_parse_net_health(out, &pf->arena) : NULL;
		if (h && npl_strcaseeq(h, "Success"))
			probed++;
		else if (h && npl_strcaseeq(h, "Init"))
			unprobed++;
		else if (h)
			note(&warn, "device %d: the tool's reachability probe says %s", dev, h);
	}
	if (bad.len) {
		if (warn.len)
			note(&bad, "%s", npl_buf_str(&warn));
		add(pf, "npu-network", NPL_PF_FAIL, npl_buf_str(&bad),
		    "bring each device's link up and give it its address (hccn_tool -i N -ip -s address A netmask M, or /etc/hccn.conf); the transfer between nodes runs over it");
	} else if (warn.len) {
		add(pf, "npu-network", NPL_PF_WARN, npl_buf_str(&warn),
		    "check the device network by hand: hccn_tool -i N -link -g, -ip -g, -net_health -g");
	} else {
		add(pf, "npu-network", NPL_PF_OK,
		    npl_arena_printf(&pf->arena, "%d device%s: link up and an address each (%s)%s%s", st->nids, st->nids == 1 ? "" : "s",
				     npl_buf_str(&addrs),
				     probed ? "; the tool's reachability probe succeeded" : "",
				     unprobed && !probed ? "; no detection address is configured, so reachability was not probed" : ""),
		    NULL);
	}
	npl_buf_release(&bad);
	npl_buf_release(&warn);
	npl_buf_release(&addrs);
}

/* The addresses of the role's list, for messages. */
static const char *list_text(struct npl_preflight *pf, const struct npl_preflight_opts *o, int k)
{
	struct npl_buf b = NPL_BUF_INIT;
	const char *s;

	for (int i = 0; o->site && i < o->site->key[k].n; i++)
		npl_buf_printf(&b, "%s%s", i ? " " : "", o->site->key[k].v[i]);
	s = npl_arena_strdup(&pf->arena, b.len ? npl_buf_str(&b) : "none given");
	npl_buf_release(&b);
	return s;
}

/* This node's address is one of the role's list. */
static void check_node(struct npl_preflight *pf, const struct npl_preflight_opts *o)
{
	const char *list = npl_json_str(o->role, "node_list");
	int k = list ? npl_site_key_from_name(list) : -1;
	int need = npl_plan_nodes_count(o->role);

	if (k < 0) {
		skip(pf, "node", npl_arena_printf(&pf->arena, "the %s has no node list: it runs where it is started", npl_pf_role_name(o)));
		return;
	}
	if (o->node == -2)
		add(pf, "node", NPL_PF_FAIL,
		    npl_arena_printf(&pf->arena, "%s needs %d address%s in rank order; given: %s", list, need,
				     need == 1 ? "" : "es", list_text(pf, o, k)),
		    npl_arena_printf(&pf->arena, "give --%s once per node, or export %s='ADDRESS ...'", list, npl_site_var(k)));
	else if (o->node < 0)
		add(pf, "node", NPL_PF_FAIL,
		    npl_arena_printf(&pf->arena, "this host (%s) is not in the %s list (%s)", o->local ? o->local : "no address",
				     list, list_text(pf, o, k)),
		    "run it on one of those nodes, or set NPULAUNCH_NODE_IP to this node's address in the list");
	else
		add(pf, "node", NPL_PF_OK,
		    npl_arena_printf(&pf->arena, "%s is node %d of %s (%s)", o->node_ip, o->node, list, list_text(pf, o, k)), NULL);
}

/* The socket interface exists, is up, has a carrier and carries this node's address. */
static void check_interface(struct npl_preflight *pf, const struct npl_preflight_opts *o)
{
	const char *ifname = site_value(o, NPL_SITE_IFNAME);
	const struct npl_pf_iface *f = NULL;
	struct npl_buf names = NPL_BUF_INIT, addrs = NPL_BUF_INIT;
	int has = 0;

	if (!needs(o->role, "ifname")) {
		skip(pf, "interface", npl_arena_printf(&pf->arena, "the %s sets no socket interface", npl_pf_role_name(o)));
		return;
	}
	if (!ifname) {
		add(pf, "interface", NPL_PF_FAIL, "ifname is not set", "give --ifname, or export IFNAME");
		return;
	}
	if (!o->ifaces) {
		add(pf, "interface", NPL_PF_WARN, "the host's interfaces cannot be listed: the interface was not checked", NULL);
		return;
	}
	for (int i = 0; i < o->ifaces->n; i++) {
		npl_buf_printf(&names, "%s%s", i ? ", " : "", o->ifaces->v[i].name);
		if (!strcmp(o->ifaces->v[i].name, ifname))
			f = &o->ifaces->v[i];
	}
	if (!f) {
		add(pf, "interface", NPL_PF_FAIL,
		    npl_arena_printf(&pf->arena, "no interface '%s' on this host (it has: %s)", ifname, names.len ? npl_buf_str(&names) : "none"),
		    "give --ifname the interface that carries this node's address in the node list");
		goto out;
	}
	for (int i = 0; i < f->naddrs; i++) {
		npl_buf_printf(&addrs, "%s%s", i ? ", " : "", f->addrs[i]);
		has |= o->node_ip && !strcmp(f->addrs[i], o->node_ip);
	}
	if (!f->up)
		add(pf, "interface", NPL_PF_FAIL, npl_arena_printf(&pf->arena, "%s is down", ifname),
		    npl_arena_printf(&pf->arena, "bring it up (ip link set %s up)", ifname));
	else if (!f->running)
		add(pf, "interface", NPL_PF_FAIL, npl_arena_printf(&pf->arena, "%s is up but has no carrier: its link is down", ifname),
		    "check its cable and switch port");
	else if (o->node_ip && !has)
		add(pf, "interface", NPL_PF_FAIL,
		    npl_arena_printf(&pf->arena, "%s does not carry this node's address %s (it has: %s)", ifname, o->node_ip,
				     addrs.len ? npl_buf_str(&addrs) : "no address"),
		    npl_arena_printf(&pf->arena, "give --ifname the interface that carries %s, or correct the node list", o->node_ip));
	else if (o->node_ip)
		add(pf, "interface", NPL_PF_OK, npl_arena_printf(&pf->arena, "%s is up and carries %s", ifname, o->node_ip), NULL);
	else
		add(pf, "interface", NPL_PF_OK,
		    npl_arena_printf(&pf->arena, "%s is up (%s)", ifname, addrs.len ? npl_buf_str(&addrs) : "no address"), NULL);
out:
	npl_buf_release(&names);
	npl_buf_release(&addrs);
}

/*
 * The ports this node listens on are free. Read from the kernel's socket tables under the root
 * (/proc/net/tcp and tcp6), not by bind(): a bind would hold the port for a moment (a server
 * starting then would fail), needs the address to exist on this host, is refused on ports
 * below 1024 to an ordinary user, and cannot be pointed at a test's fake root; the tables show
 * every listener of this network namespace, whatever address it holds.
 */
static void check_ports(struct npl_preflight *pf, const struct npl_preflight_opts *o, const struct state *st)
{
	static const char *const files[] = {"/proc/net/tcp", "/proc/net/tcp6"};
	struct npl_plan_port ports[MAX_PORTS];
	struct npl_pf_listen *l = NULL;
	struct npl_buf bad = NPL_BUF_INIT, free_ = NPL_BUF_INIT, warn = NPL_BUF_INIT;
	int nl = 0, read_any = 0, n;

	if (!strcmp(npl_pf_role_name(o), "bench")) {
		skip(pf, "ports", "the benchmark listens on no port");
		return;
	}
	if (o->node < 0) {
		skip(pf, "ports", "this node is not in the node list: its ports are not known");
		return;
	}
	n = npl_plan_node_ports(o->role, st->node, ports, MAX_PORTS, &pf->arena);
	if (!n) {
		skip(pf, "ports", npl_arena_printf(&pf->arena, "the %s listens on no port of its own", npl_pf_role_name(o)));
		return;
	}
	for (size_t i = 0; i < NPL_ARRAY_SIZE(files); i++) {
		const char *path = under(pf, o, files[i]), *why = NULL;
		struct stat sb;
		char *text;

		if (stat(path, &sb) != 0)
			continue;
		text = slurp(pf, path, NET_MAX, NULL, &why);
		if (!text)
			note(&warn, "%s", why);
		else if (npl_pf_parse_net_tcp(text, (int)i, &l, &nl))
			note(&warn, "%s is not a socket table npulaunch knows (no 'local_address' header)", path);
		else
			read_any = 1;
	}
	if (!read_any) {
		add(pf, "ports", NPL_PF_WARN,
		    npl_arena_printf(&pf->arena, "%s%scannot read %s: the ports were not checked", npl_buf_str(&warn),
				     warn.len ? "; " : "", under(pf, o, files[0])),
		    NULL);
		goto out;
	}
	for (int i = 0; i < n; i++) {
		int busy = 0;

		for (int j = 0; j < nl; j++)
			if (l[j].port == ports[i].port && !busy++)
				note(&bad, "port %d (%s) is in use: a socket listens on %s%s%s:%d", ports[i].port, ports[i].what,
				     strchr(l[j].addr, ':') ? "[" : "", l[j].addr, strchr(l[j].addr, ':') ? "]" : "", l[j].port);
		if (!busy)
			npl_buf_printf(&free_, "%s%d (%s)", free_.len ? ", " : "", ports[i].port, ports[i].what);
	}
	if (bad.len)
		add(pf, "ports", NPL_PF_FAIL, npl_buf_str(&bad),
		    "stop what listens there (ss -ltnp names it), or render with other ports");
	else if (warn.len)
		add(pf, "ports", NPL_PF_WARN, npl_arena_printf(&pf->arena, "free: %s; %s", npl_buf_str(&free_), npl_buf_str(&warn)), NULL);
	else
		add(pf, "ports", NPL_PF_OK, npl_arena_printf(&pf->arena, "free: %s", npl_buf_str(&free_)), NULL);
out:
	free(l);
	npl_buf_release(&bad);
	npl_buf_release(&free_);
	npl_buf_release(&warn);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The shard names the weight indexes name. */
struct shards {
	const char **names;
	int n, cap;
};

/* Add the shards the weight index dir/name names to sh; what it cannot tell goes to warn. */
static void index_shards(struct npl_preflight *pf, const char *dir, const char *name, struct shards *sh,
			 struct npl_buf *warn)
{
	const char *why = NULL;
	char *text = slurp(pf, npl_arena_printf(&pf->arena, "%s/%s", dir, name), INDEX_MAX, NULL, &why);
	const cJSON *map, *it;
	cJSON *j;

	if (!text) {
		note(warn, "%s", why);
		return;
	}
	j = cJSON_Parse(text);
	map = cJSON_GetObjectItemCaseSensitive(j, "weight_map");
	if (!cJSON_IsObject(map)) {
		note(warn, "%s/%s has no weight_map object: its shards were not checked", dir, name);
		cJSON_Delete(j);
		return;
	}
	cJSON_ArrayForEach(it, map) {
		if (!cJSON_IsString(it) || !*it->valuestring || strstr(it->valuestring, "..") || it->valuestring[0] == '/') {
			note(warn, "%s/%s names a shard npulaunch does not look for: '%s'", dir, name,
			     cJSON_IsString(it) ? it->valuestring : "(not a string)");
			continue;
		}
		if (sh->n == sh->cap) {
			sh->cap = sh->cap ? sh->cap * 2 : 64;
			sh->names = npl_xrealloc(sh->names, (size_t)sh->cap * sizeof(*sh->names));
		}
		sh->names[sh->n++] = npl_arena_strdup(&pf->arena, it->valuestring);
	}
	cJSON_Delete(j);
}

/* The model folder: config.json, and every file a weight index names. */
static void check_model(struct npl_preflight *pf, const struct npl_preflight_opts *o, const char *check, enum npl_site_key k)
{
	const char *key = npl_site_key_name(k), *value = site_value(o, k), *dir;
	struct npl_buf bad = NPL_BUF_INIT, warn = NPL_BUF_INIT, indexes = NPL_BUF_INIT, missing = NPL_BUF_INIT;
	struct shards sh = {NULL, 0, 0};
	const char **names;
	int nnames, nmissing = 0, weights = 0;
	struct dirent *de;
	struct stat sb;
	DIR *dp;

	if (!needs(o->role, key)) {
		skip(pf, check, npl_arena_printf(&pf->arena, "the %s uses no %s", npl_pf_role_name(o),
						 k == NPL_SITE_DRAFT_MODEL_PATH ? "draft model" : "model"));
		return;
	}
	if (!value) {
		add(pf, check, NPL_PF_FAIL, npl_arena_printf(&pf->arena, "%s is not set", key),
		    npl_arena_printf(&pf->arena, "give --%s, or export %s", key, npl_site_var(k)));
		return;
	}
	dir = under(pf, o, value);
	if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		add(pf, check, NPL_PF_FAIL,
		    npl_arena_printf(&pf->arena, "%s: %s", dir, stat(dir, &sb) != 0 ? strerror(errno) : "not a folder"),
		    npl_arena_printf(&pf->arena, "copy the model to %s on this node, or give --%s where it is", value, key));
		return;
	}
	{
		const char *cfg = npl_arena_printf(&pf->arena, "%s/config.json", dir);

		if (stat(cfg, &sb) != 0 || !S_ISREG(sb.st_mode))
			note(&bad, "%s has no config.json", dir);
	}
	dp = opendir(dir);
	while (dp && (de = readdir(dp))) {
		if (npl_ends_with(de->d_name, ".safetensors") || npl_ends_with(de->d_name, ".bin"))
			weights++;
		if (!npl_ends_with(de->d_name, ".index.json"))
			continue;
		npl_buf_printf(&indexes, "%s%s", indexes.len ? ", " : "", de->d_name);
		index_shards(pf, dir, de->d_name, &sh, &warn);
	}
	if (dp)
		closedir(dp);
	names = sh.names;
	nnames = sh.n;
	if (nnames)
		qsort(names, (size_t)nnames, sizeof(*names), cmp_str);
	{
		int u = 0;

		for (int i = 0; i < nnames; i++) {
			if (i && !strcmp(names[i], names[i - 1]))
				continue;
			u++;
			if (stat(npl_arena_printf(&pf->arena, "%s/%s", dir, names[i]), &sb) != 0 || !S_ISREG(sb.st_mode)) {
				if (nmissing < 5)
					npl_buf_printf(&missing, "%s%s", nmissing ? ", " : "", names[i]);
				nmissing++;
			}
		}
		if (nmissing)
			note(&bad, "%d of the %d weight shards %s names %s missing: %s%s", nmissing, u, npl_buf_str(&indexes),
			     nmissing == 1 ? "is" : "are", npl_buf_str(&missing), nmissing > 5 ? ", ..." : "");
		if (bad.len) {
			if (warn.len)
				note(&bad, "%s", npl_buf_str(&warn));
			add(pf, check, NPL_PF_FAIL, npl_buf_str(&bad),
			    "copy the whole model (every shard its index names, and config.json) to this node");
		} else if (warn.len) {
			add(pf, check, NPL_PF_WARN, npl_buf_str(&warn), NULL);
		} else if (!indexes.len && !weights) {
			add(pf, check, NPL_PF_WARN,
			    npl_arena_printf(&pf->arena, "%s has config.json but no weight index (*.index.json) and no *.safetensors or *.bin file", dir),
			    "copy the weights to this node");
		} else if (!indexes.len) {
			add(pf, check, NPL_PF_OK,
			    npl_arena_printf(&pf->arena, "%s: config.json and %d weight file%s (no index)", dir, weights, weights == 1 ? "" : "s"),
			    NULL);
		} else {
			add(pf, check, NPL_PF_OK,
			    npl_arena_printf(&pf->arena, "%s: config.json and the %d shard%s %s names", dir, u, u == 1 ? "" : "s",
					     npl_buf_str(&indexes)),
			    NULL);
		}
	}
	free(names);
	npl_buf_release(&bad);
	npl_buf_release(&warn);
	npl_buf_release(&indexes);
	npl_buf_release(&missing);
}

static const char *bytes_text(struct npl_preflight *pf, double b)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	int u = 0;

	while (b >= 1024 && u < 5) {
		b /= 1024;
		u++;
	}
	return npl_arena_printf(&pf->arena, u ? "%.1f %s" : "%.0f %s", b, unit[u]);
}

/* The free memory of /dev/shm and of the host, reported. */
static void check_memory(struct npl_preflight *pf, const struct npl_preflight_opts *o)
{
	const char *shm = under(pf, o, "/dev/shm"), *why = NULL, *avail, *total;
	struct npl_buf found = NPL_BUF_INIT, warn = NPL_BUF_INIT;
	struct statvfs vfs;
	char *text;

	if (!is_server(o->role)) {
		skip(pf, "memory", npl_arena_printf(&pf->arena, "the %s loads no model", npl_pf_role_name(o)));
		return;
	}
	if (statvfs(shm, &vfs) == 0)
		note(&found, "%s: %s free of %s", shm, bytes_text(pf, (double)vfs.f_bavail * (double)vfs.f_frsize),
		     bytes_text(pf, (double)vfs.f_blocks * (double)vfs.f_frsize));
	else
		note(&warn, "%s: %s", shm, strerror(errno));
	text = slurp(pf, under(pf, o, "/proc/meminfo"), SMALL_MAX, NULL, &why);
	avail = text ? npl_pf_parse_label(text, "MemAvailable:", &pf->arena) : NULL;
	total = text ? npl_pf_parse_label(text, "MemTotal:", &pf->arena) : NULL;
	if (avail && total && npl_ends_with(avail, " kB") && npl_ends_with(total, " kB")) {
		int a = num_n(avail, strlen(avail) - 3), t = num_n(total, strlen(total) - 3);
		double av = a >= 0 ? (double)a : atof(avail), tv = t >= 0 ? (double)t : atof(total);

		note(&found, "host memory: %s available of %s", bytes_text(pf, av * 1024), bytes_text(pf, tv * 1024));
	} else {
		note(&warn, "%s", text ? npl_arena_printf(&pf->arena, "%s has no MemAvailable/MemTotal in kB", under(pf, o, "/proc/meminfo"))
				       : why);
	}
	if (warn.len)
		add(pf, "memory", NPL_PF_WARN,
		    npl_arena_printf(&pf->arena, "%s%s%s", npl_buf_str(&found), found.len ? "; " : "", npl_buf_str(&warn)), NULL);
	else
		add(pf, "memory", NPL_PF_OK, npl_buf_str(&found), NULL);
	npl_buf_release(&found);
	npl_buf_release(&warn);
}

/* The host tuning as tune --check sees it: what apply will change. */
static void check_tuning(struct npl_preflight *pf, const struct npl_preflight_opts *o)
{
	const cJSON *tuning = cJSON_GetObjectItemCaseSensitive(o->role, "tuning");
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_tune t;
	struct npl_buf b = NPL_BUF_INIT;
	int n;

	if (!is_server(o->role) || !cJSON_IsObject(tuning)) {
		skip(pf, "host-tuning", npl_arena_printf(&pf->arena, "the %s tunes nothing", npl_pf_role_name(o)));
		return;
	}
	memset(&t, 0, sizeof(t));
	if (npl_tune_collect(&t, tuning, o->root, o->source, 0, &d)) {
		for (int i = 0; i < d.n; i++)
			if (d.v[i].sev == NPL_ERROR)
				note(&b, "%s", diag_text(pf, &d, i));
		add(pf, "host-tuning", NPL_PF_WARN, npl_arena_printf(&pf->arena, "%s: apply would stop there", npl_buf_str(&b)),
		    "apply needs every tuning file present and writable: run it as root on the host (npulaunch tune --check shows the same)");
		goto out;
	}
	n = npl_tune_differences(&t);
	for (int i = 0; i < t.n && n; i++)
		if (!npl_tune_item_ok(&t.v[i]))
			note(&b, "%s %.*s -> %s", t.v[i].name, (int)strcspn(t.v[i].current ? t.v[i].current : "?", "\n"),
			     t.v[i].current ? t.v[i].current : "?", t.v[i].wanted);
	if (n)
		add(pf, "host-tuning", NPL_PF_WARN,
		    npl_arena_printf(&pf->arena, "%d of %d settings differ: %s", n, t.n, npl_buf_str(&b)),
		    "apply tunes them (journaled; npulaunch tune --revert puts them back)");
	else
		add(pf, "host-tuning", NPL_PF_OK,
		    npl_arena_printf(&pf->arena, "the host matches (%d settings)%s", t.n, t.cpufreq ? "" : "; no cpufreq (a VM or a container?)"),
		    NULL);
out:
	npl_tune_release(&t);
	npl_diag_release(&d);
	npl_buf_release(&b);
}

void npl_preflight_run(struct npl_preflight *pf, const struct npl_preflight_opts *o)
{
	struct state st;
	struct npl_pf_check sg;

	memset(pf, 0, sizeof(*pf));
	npl_arena_init(&pf->arena);
	memset(&st, 0, sizeof(st));
	st.node = o->node >= 0 ? o->node : 0;
	st.nids = npl_plan_node_devices(o->role, st.node, st.ids, MAX_IDS);
	check_versions(pf, o);
	sg = npl_pf_check_sglang(o, &pf->arena);   /* preflight_sglang.c */
	add(pf, sg.name, sg.status, sg.found, sg.fix);
	check_env_files(pf, o);
	check_npus(pf, o, &st);
	sg = npl_pf_check_affinity(o, st.smi_ok ? &st.smi : NULL, st.ids, st.nids, &pf->arena);
	add(pf, sg.name, sg.status, sg.found, sg.fix);
	check_npu_network(pf, o, &st);
	check_node(pf, o);
	check_interface(pf, o);
	check_ports(pf, o, &st);
	check_model(pf, o, "model", NPL_SITE_MODEL_PATH);
	check_model(pf, o, "draft-model", NPL_SITE_DRAFT_MODEL_PATH);
	check_memory(pf, o);
	check_tuning(pf, o);
	free(st.smi.dies);
	free(st.smi.procs);
}

void npl_preflight_release(struct npl_preflight *pf)
{
	free(pf->v);
	npl_arena_release(&pf->arena);
	memset(pf, 0, sizeof(*pf));
}
