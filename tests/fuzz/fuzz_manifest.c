/*
 * fuzz_manifest.c: libFuzzer target for the manifest validator (schema.c, issue 25): the input
 * is a bundle's manifest.json, any bytes, parsed as read_manifest() parses it and checked
 * against the compiled-in manifest schema; a manifest it accepts is then read by the plan's
 * accessors the commands use (site values, the bench node's launch, each role's endpoints),
 * which must not fault on anything the schema lets through.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/arena.h"
#include "npulaunch/plan.h"
#include "npulaunch/schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_plan(const cJSON *plan)
{
	struct npl_arena a;
	struct npl_site site;
	struct npl_buf b = NPL_BUF_INIT;
	const cJSON *r, *ep, *n, *it;
	int missing;

	npl_arena_init(&a);
	npl_plan_site(plan, &site, &a);
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(plan, "roles")) {
		npl_plan_nodes_count(r);
		cJSON_ArrayForEach(ep, cJSON_GetObjectItemCaseSensitive(r, "endpoints")) {
			npl_buf_reset(&b);
			npl_pval_resolve(&b, npl_json_str(ep, "url"), &site, &missing);
		}
		cJSON_ArrayForEach(n, cJSON_GetObjectItemCaseSensitive(r, "nodes"))
			cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(n, "env")) {
				npl_buf_reset(&b);
				npl_plan_env_display(&b, it, &site);
			}
	}
	npl_buf_release(&b);
	npl_arena_release(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct npl_diag d = NPL_DIAG_INIT;
	char *text = malloc(size + 1);
	cJSON *plan;
	int i;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	plan = strlen(text) == size ? cJSON_ParseWithOpts(text, NULL, 1) : NULL;
	if (plan && npl_manifest_validate(plan, "manifest.json", &d) == 0)
		read_plan(plan);
	for (i = 0; i < d.n; i++)
		free(npl_diag_format(&d, &d.v[i], 1));
	npl_diag_release(&d);
	cJSON_Delete(plan);
	free(text);
	return 0;
}
