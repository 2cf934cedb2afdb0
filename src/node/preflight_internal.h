/*
 * preflight_internal.h: private to src/node/preflight*.c: the checks kept in files of their own
 * beside preflight.c, each returning its result for preflight.c to record.
 */
#ifndef NPL_PREFLIGHT_INTERNAL_H
#define NPL_PREFLIGHT_INTERNAL_H

#include "npulaunch/arena.h"
#include "npulaunch/preflight.h"

/* The check "sglang" (preflight_sglang.c): the SGLang version of the server's python against the
 * floor of the plan's recipe (sglang_version); skip without a floor or on a role that runs no
 * server, warn when the version cannot be told, fail below the floor. Text in a. */
struct npl_pf_check npl_pf_check_sglang(const struct npl_preflight_opts *o, struct npl_arena *a);

#endif
