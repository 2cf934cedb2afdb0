/*
 * ident.h: layer node. Which host this is, as apply and preflight place it
 * among a role's nodes (plan.h's npl_plan_node_of()): NPULAUNCH_NODE_IP when
 * it is set, else every address of the host's interfaces.
 */
#ifndef NPL_IDENT_H
#define NPL_IDENT_H

#include <stddef.h>
#include <sys/socket.h>

#include "npulaunch/arena.h"

/* This host's addresses, canonical text in arena a: NPULAUNCH_NODE_IP alone when it is set,
 * else every IPv4 and IPv6 address of the interfaces of the network namespace npulaunch runs
 * in, in the order the kernel lists them (none when they cannot be read). 0, or -1 when
 * NPULAUNCH_NODE_IP is set but is not an IPv4 or IPv6 address (*out and *n then empty); the
 * caller says so, each command in its own words. */
int npl_ident_addrs(const char ***out, int *n, struct npl_arena *a);
/* The canonical text of an interface address (IPv4 or IPv6) in out (n bytes, INET6_ADDRSTRLEN
 * will do); 0, or -1 for another family or a NULL address. */
int npl_ident_addr_text(const struct sockaddr *sa, char *out, size_t n);

#endif
