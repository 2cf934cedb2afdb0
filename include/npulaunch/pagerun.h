/*
 * pagerun.h: layer sync. A page's section run on the nodes its script names: the addresses
 * its placeholders stand for ("<your prefill ip2>" is the second prefill node), each node's
 * shell (the setup blocks, then the blocks meant for it: a "#### Prefill node" block only on
 * prefill nodes, a router's block only for the router), what each node launches, the router
 * once (on the first prefill node), each benchmark once; and the site values that give a plan
 * the same addresses, interface and model paths. An address of the authors' own cluster that a
 * page writes instead of a placeholder stands for a node the same way. Nothing is executed
 * (pagesh.h).
 * Included by import, drift and their tests.
 */
#ifndef NPL_PAGERUN_H
#define NPL_PAGERUN_H

#include "npulaunch/launches.h"
#include "npulaunch/page.h"
#include "npulaunch/pagesh.h"
#include "npulaunch/site.h"

/* The interface name the pages' "<network-interface>" stands for in an import. */
#define NPL_PAGERUN_IFNAME "npl-if0"

/* The environment a page's script and a plan's process start with in an import ("NAME=VALUE",
 * NULL-terminated): what a `PATH=/x:$PATH` builds on, so that prepend and append are seen. */
extern const char *const npl_pagerun_inherited[];

#define NPL_PAGERUN_MAX_LITERAL 64

struct npl_page_run {
	struct npl_pagesh_site psite;   /* the placeholders' addresses */
	/* addresses of the authors' own cluster the page writes (not loopback, not a wildcard): each
	   stands for a node as a placeholder would, in the list of the role its node runs */
	const char *literal[NPL_PAGERUN_MAX_LITERAL];
	struct npl_loc literal_loc[NPL_PAGERUN_MAX_LITERAL];   /* where it is first written */
	int literal_role[NPL_PAGERUN_MAX_LITERAL];            /* 0 prefill, 1 decode, 2 a PD-mixed node, -1 none */
	int nliteral;
	/* a node list shorter than a server's --nnodes: the first such role, the nodes the page
	   lists for it and the nodes its server runs on; the nodes past the list run the first
	   node's launch with their own rank */
	const char *short_role;
	int short_listed, short_nnodes;
	struct npl_loc short_loc;
	struct npl_site site;           /* the same as site values, with model paths and interface */
	struct npl_node_launches L;     /* servers node by node, the router, the benchmarks */
	int nbench;
};

/* s with each address the run gave a node written as the page writes it ("<your prefill ip2>",
 * or the literal address), for messages and reports. In a. */
const char *npl_page_run_show(const struct npl_page_run *r, const char *s, struct npl_arena *a);

/* Run section s of page p. 0, or -1 with located errors in d (a node that launches two
 * different roles, no server launch at all, a benchmark block that launches no benchmark). */
int npl_page_run(const struct npl_page *p, const struct npl_page_section *s, struct npl_page_run *r,
		 struct npl_arena *a, struct npl_diag *d);

#endif
