/*
 * ident.h: layer node. Which host this is, as apply and preflight place it
 * among a role's nodes (plan.h's npl_plan_node_of()): NPULAUNCH_NODE_IP when
 * it is set, else every address of the host's interfaces.
 */
#ifndef NPL_IDENT_H
#define NPL_IDENT_H

#include "npulaunch/arena.h"

/* This host's addresses, canonical text in arena a: NPULAUNCH_NODE_IP alone when it is set,
 * else every IPv4 and IPv6 address of the interfaces of the network namespace npulaunch runs
 * in, in the order the kernel lists them (none when they cannot be read). 0, or -1 when
 * NPULAUNCH_NODE_IP is set but is not an IPv4 or IPv6 address (*out and *n then empty); the
 * caller says so, each command in its own words. */
int npl_ident_addrs(const char ***out, int *n, struct npl_arena *a);

#endif
