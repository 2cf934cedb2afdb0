/*
 * preflight_internal.h: private to src/node/preflight*.c: the checks kept in files of their own
 * beside preflight.c, each returning its result for preflight.c to record, and what the report
 * (preflight_report.c) shares with them.
 */
#ifndef NPL_PREFLIGHT_INTERNAL_H
#define NPL_PREFLIGHT_INTERNAL_H

#include "npulaunch/arena.h"
#include "npulaunch/preflight.h"

/* The plan role's name ("prefill", "decode", ...; "role" when it has none), for messages. */
const char *npl_pf_role_name(const struct npl_preflight_opts *o);

/* The check "sglang" (preflight_sglang.c): the SGLang version of the server's python against the
 * floor of the plan's recipe (sglang_version); skip without a floor or on a role that runs no
 * server, warn when the version cannot be told, fail below the floor. Text in a. */
struct npl_pf_check npl_pf_check_sglang(const struct npl_preflight_opts *o, struct npl_arena *a);

/* The check "affinity" (preflight_affinity.c): the plan's affinity policy against this node's
 * topology (affinity.c): skip when npulaunch binds nothing (npl_affinity_owner()), ok with each
 * die's CPUs, fail when the policy cannot be met, warn when a fact cannot be read. smi is what
 * the check "npus" read (NULL when it could not); ids the node's logical devices. Text in a. */
struct npl_pf_check npl_pf_check_affinity(const struct npl_preflight_opts *o, const struct npl_pf_smi *smi,
					  const int *ids, int nids, struct npl_arena *a);

#endif
