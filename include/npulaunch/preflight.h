/*
 * preflight.h: layer node. The checks that find, on a node and in seconds, what would make
 * a launch fail after a long start-up: the Ascend software (driver and toolkit
 * versions, the SGLang version against the recipe's floor, the env files the plan sources), the NPUs (npu-smi: enough dies,
 * every one healthy, none held by a process), the NPU network (hccn_tool: link
 * up, an address, the tool's own reachability probe), the host network (the
 * socket interface exists, is up and carries this node's address; the address
 * is in the role's list), the ports this node's role listens on, the model
 * files, the free memory, and the host tuning.
 *
 * Each check gives a structured result (ok, warn, fail, skip, what it found,
 * what to do); nothing here prints unless asked to or chooses an exit code.
 * Every file is read under a root prefix through fsio.c's bounded reader, every
 * external tool is optional (missing: a warning), run from PATH (or the
 * hardware profile's tool folders under the root) with a timeout and bounded
 * output; an output layout the parsers do not know is a warning, never a guess.
 * Outside text is kept as it came; the printers escape it.
 *
 * The parsers of tool outputs and procfs files, and the facts of a node (preflight_facts.c), are
 * exported for the renderer and the unit tests.
 * Ownership: everything a struct npl_preflight holds lives in its arena, freed by
 * npl_preflight_release(). Included by the preflight and apply commands, the
 * renderer (the ports of a node) and the tests.
 */
#ifndef NPL_PREFLIGHT_H
#define NPL_PREFLIGHT_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "npulaunch/arena.h"
#include "npulaunch/site.h"

enum npl_pf_status { NPL_PF_OK, NPL_PF_WARN, NPL_PF_FAIL, NPL_PF_SKIP };

/* One check's result. found and fix hold outside text unescaped; fix is NULL when there is
 * nothing to do. */
struct npl_pf_check {
	const char *name;     /* driver, toolkit, sglang, env-files, npus, affinity, npu-network, node,
			       * interface, ports, model, draft-model, memory, host-tuning */
	enum npl_pf_status status;
	const char *found;
	const char *fix;
};

/* The network interfaces of the host: name, state and addresses (canonical text). */
struct npl_pf_iface {
	const char *name;
	int up;               /* IFF_UP */
	int running;          /* IFF_RUNNING: the link has a carrier */
	const char **addrs;
	int naddrs;
};

struct npl_pf_ifaces {
	struct npl_pf_iface *v;
	int n;
};

/* What the checks look at. */
struct npl_preflight_opts {
	const cJSON *plan;
	const cJSON *role;            /* the role object of the plan */
	const struct npl_site *site;  /* the site values in force */
	const char *root;             /* NULL or "" for / */
	const char *source;           /* the manifest the plan came from (messages), or NULL */
	int node;                     /* this node's index in the role's list; -1: not in it;
				       * -2: the list is not known (a site value missing) */
	const char *node_ip;          /* this node's address from the list, or NULL */
	const char *local;            /* this host's addresses, for messages */
	const struct npl_pf_ifaces *ifaces;   /* the host's interfaces */
	double timeout;               /* seconds each tool run may take */
	const char *smi_out;          /* what npu-smi info printed moments ago (exit 0: apply's
				       * affinity ran it), or NULL: run here */
	const char *topo_out;         /* the same for npu-smi info -t topo */
};

struct npl_preflight {
	struct npl_arena arena;
	struct npl_pf_check *v;
	int n, cap;
	int failed, warned;
};

/* Run every check for the role of o->plan on this node; results in pf (initialised here). */
void npl_preflight_run(struct npl_preflight *pf, const struct npl_preflight_opts *o);
/* Print the results: a line per check (status, name, what was found; what to do below), the
 * outside text escaped for a terminal; only warnings and failures when !all. */
void npl_preflight_print(FILE *fp, const struct npl_preflight *pf, int all);
/* The results as JSON: {format, recipe, role, node, address, checks: [{name, status, found,
 * fix}], failed, warned} (README "preflight" documents the schema). */
cJSON *npl_preflight_json(const struct npl_preflight *pf, const struct npl_preflight_opts *o);
/* Free what pf holds. */
void npl_preflight_release(struct npl_preflight *pf);
/* The name of a status: ok, warn, fail, skip. */
const char *npl_pf_status_name(enum npl_pf_status s);

/* The host's interfaces (getifaddrs: the network namespace npulaunch runs in), in arena a;
 * -1 when they cannot be read. */
int npl_pf_ifaces_read(struct npl_pf_ifaces *ifs, struct npl_arena *a);
/* ---- parsers (exported for the tests) ---------------------------------------------------- */

/* One die of npu-smi info. */
struct npl_pf_die {
	int npu, chip;        /* NPU id and chip id as listed */
	int phy;              /* the physical id hccn_tool takes: Phy-ID or Device, else the NPU id */
	const char *bus;      /* its PCI address as listed (Bus-Id: "0000:9D:00.0") */
	const char *name;     /* "Ascend910" */
	const char *health;   /* "OK", "Warning", "Alarm", ... */
};

/* A process holding memory on a die. */
struct npl_pf_proc {
	int npu, chip;
	long pid;
	const char *name;
	long mem_mb;          /* -1 when not a number */
};

struct npl_pf_smi {
	const char *text;     /* what npu-smi printed (the affinity check reads it again) */
	const char *version;  /* "24.1.rc3.7", or NULL */
	struct npl_pf_die *dies;
	int ndies;
	struct npl_pf_proc *procs;
	int nprocs;
	int procs_known;      /* the process table was there */
};

/* What npu-smi info (topo 0) or npu-smi info -t topo (topo 1) prints when it is found and exits 0
 * within timeout seconds, in a; NULL otherwise. Apply's binding (launch_affinity.c) and the
 * affinity check ask through it, so both read the same answers by the same rule; the npus check
 * runs info itself, to say why a run failed. */
const char *npl_pf_smi_text(const cJSON *plan, const char *root, double timeout, int topo, struct npl_arena *a);
/* Parse npu-smi info's table; 0, or -1 with why (in a) when the layout is not one it knows. */
int npl_pf_parse_smi(const char *text, struct npl_pf_smi *out, struct npl_arena *a, const char **why);
/* hccn_tool -i N -link -g: 1 up, 0 down, -1 unknown. */
int npl_pf_parse_link(const char *text);
/* hccn_tool -i N -ip -g (ipaddr:) or -ip -inet6 -g (ipv6_address:): the address, canonical, in
 * out (INET6_ADDRSTRLEN); -1 when there is none. */
int npl_pf_parse_ip(const char *text, char *out, size_t n);
/* hccn_tool -i N -net_health -g: the status word ("Success", "Init", ...) in a, or NULL. */
const char *npl_pf_parse_net_health(const char *text, struct npl_arena *a);
/* The text after label (case-insensitive) on its line, trimmed, in a; NULL when absent. */
const char *npl_pf_parse_label(const char *text, const char *label, struct npl_arena *a);
/* The value of key (case-insensitive) in key=value lines (version.info), in a, or NULL. */
const char *npl_pf_parse_kv(const char *text, const char *key, struct npl_arena *a);

/* A listening TCP socket of /proc/net/tcp{,6}. */
struct npl_pf_listen {
	int port;
	char addr[46];        /* INET6_ADDRSTRLEN */
};

/* The listening sockets of a /proc/net/tcp (v6 = 0) or tcp6 (v6 = 1) text, appended to
 * *out (malloc'ed, *n entries); -1 when the text is not that table (no header). */
int npl_pf_parse_net_tcp(const char *text, int v6, struct npl_pf_listen **out, int *n);

#endif
