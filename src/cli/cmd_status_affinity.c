/*
 * cmd_status_affinity.c: `npulaunch status --affinity`: on a node, whether the servers of the
 * plan that run here run where their dies are: each thread's CPUs and each process's memory
 * policy read back (affinity.h's npl_affinity_readback) against the sets apply binds them to
 * (launch.h's npl_launch_affinity, from this node's topology).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/affinity.h"
#include "npulaunch/cli.h"
#include "npulaunch/ident.h"
#include "npulaunch/launch.h"
#include "npulaunch/plan.h"
#include "npulaunch/text.h"

/* The --port of a node of role, or NULL */
static const char *port_of(const cJSON *role, int index)
{
	const cJSON *node, *f;

	cJSON_ArrayForEach(node, cJSON_GetObjectItemCaseSensitive(role, "nodes")) {
		if (npl_json_int(node, "index", 0) != index)
			continue;
		cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(node, "flags"))
			if (!strcmp(npl_json_str(f, "flag") ? npl_json_str(f, "flag") : "", "--port")) {
				const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(f, "values"), 0);

				return cJSON_IsString(v) ? v->valuestring : NULL;
			}
	}
	return NULL;
}

/* One role's node here: its findings added to out, each with role and node; mismatches counted
 * in *bad; 1 when it was checked. */
static int check_node(struct npl_cli *cli, const cJSON *plan, const cJSON *role, int index, const char *root,
		      cJSON *out, int *bad, FILE *fp)
{
	struct npl_launch_node l;
	const char *port = port_of(role, index), *r = npl_json_str(role, "role");
	cJSON *found = cJSON_CreateArray(), *f;
	int n;

	memset(&l, 0, sizeof(l));
	l.plan = plan;
	l.role = role;
	l.node = index;
	l.arena = &cli->arena;
	l.diag = &cli->diag;
	npl_launch_affinity(&l, root, 10);
	if (!l.affinity || !port) {
		fprintf(fp, "%s node %d: npulaunch binds nothing (%s)\n", r, index, l.affinity_note ? l.affinity_note : "no port");
		npl_launch_release(&l);
		cJSON_Delete(found);
		return 0;
	}
	n = npl_affinity_readback(root, port, npl_json_str(l.affinity, "cpus"), npl_json_str(l.affinity, "memory_nodes"),
				  found);
	if (n < 0) {
		fprintf(fp, "%s node %d: no server with --port %s runs here\n", r, index, port);
		(*bad)++;
	}
	cJSON_ArrayForEach(f, found) {
		const char *what = npl_json_str(f, "what");
		int ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, "ok"));
		const char *want = !strcmp(what, "cpus") ? npl_json_str(l.affinity, "cpus") : npl_json_str(l.affinity, "memory_nodes");

		fprintf(fp, "%s node %d: process %d thread %d: %s %s %s (its dies': %s)\n", r, index, npl_json_int(f, "pid", 0),
		       npl_json_int(f, "tid", 0), what, npl_escape_in(&cli->arena, npl_json_str(f, "found")),
		       ok ? "ok" : "MISMATCH", want);
		cJSON_AddStringToObject(f, "role", r);
		cJSON_AddNumberToObject(f, "node", index);
		cJSON_AddStringToObject(f, "want", want);
		*bad += !ok;
	}
	while (found->child)
		cJSON_AddItemToArray(out, cJSON_DetachItemViaPointer(found, found->child));
	cJSON_Delete(found);
	npl_launch_release(&l);
	return 1;
}

int npl_cli_status_affinity(struct npl_cli *cli, const cJSON *plan, const char *root, int json)
{
	struct npl_site site;
	const char **addrs = NULL;
	const cJSON *role;
	cJSON *out = cJSON_CreateArray();
	int naddrs = 0, bad = 0, checked = 0;

	memset(&site, 0, sizeof(site));
	npl_plan_site(plan, &site, &cli->arena);
	if (npl_ident_addrs(&addrs, &naddrs, &cli->arena)) {
		cJSON_Delete(out);
		return npl_cli_usage_error("status", "NPULAUNCH_NODE_IP '%s' is not an IPv4 or IPv6 address",
					   getenv("NPULAUNCH_NODE_IP"));
	}
	cJSON_ArrayForEach(role, cJSON_GetObjectItemCaseSensitive(plan, "roles")) {
		int idx;

		if (strcmp(npl_json_str(role, "program") ? npl_json_str(role, "program") : "", "server"))
			continue;
		/* a role of one node without a list runs wherever status runs; else this node's index */
		idx = npl_json_str(role, "node_list") ? npl_plan_node_of(role, &site, addrs, naddrs) : 0;
		if (idx >= 0)
			checked += check_node(cli, plan, role, idx, root, out, &bad, json ? stderr : stdout);
	}
	npl_cli_flush(cli);
	if (json) {
		char *s = cJSON_Print(out);

		npl_cli_puts_json(s);
		cJSON_free(s);
	}
	cJSON_Delete(out);
	if (!checked) {
		fprintf(stderr, "npulaunch: status: --affinity: no server of this plan that npulaunch binds runs on this node\n");
		return NPL_EXIT_FAIL;
	}
	if (bad) {
		fprintf(stderr, "npulaunch: status: --affinity: %d mismatch%s\n", bad, bad == 1 ? "" : "es");
		return NPL_EXIT_FAIL;
	}
	return NPL_EXIT_OK;
}
