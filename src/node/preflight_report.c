/* preflight_report.c: a preflight's results, as the text lines and the JSON document the
 * commands print (see preflight.h); the checks themselves are in preflight.c. */
#include <string.h>

#include "npulaunch/buf.h"
#include "npulaunch/plan.h"
#include "npulaunch/preflight.h"
#include "npulaunch/text.h"
#include "preflight_internal.h"

const char *npl_pf_status_name(enum npl_pf_status s)
{
	return s == NPL_PF_OK ? "ok" : s == NPL_PF_WARN ? "warn" : s == NPL_PF_FAIL ? "fail" : "skip";
}

void npl_preflight_print(FILE *fp, const struct npl_preflight *pf, int all)
{
	int counts[4] = {0};

	for (int i = 0; i < pf->n; i++) {
		const struct npl_pf_check *c = &pf->v[i];
		struct npl_buf b = NPL_BUF_INIT;

		counts[c->status]++;
		if (!all && c->status != NPL_PF_WARN && c->status != NPL_PF_FAIL)
			continue;
		npl_buf_printf(&b, "%-4s  %-12s ", npl_pf_status_name(c->status), c->name);
		npl_escape(&b, c->found, strlen(c->found), 0);
		npl_buf_putc(&b, '\n');
		if (c->fix && c->status != NPL_PF_OK && c->status != NPL_PF_SKIP) {
			npl_buf_printf(&b, "%-4s  %-12s fix: ", "", "");
			npl_escape(&b, c->fix, strlen(c->fix), 0);
			npl_buf_putc(&b, '\n');
		}
		fputs(npl_buf_str(&b), fp);
		npl_buf_release(&b);
	}
	fprintf(fp, "preflight: %d failed, %d warned, %d ok, %d skipped\n", counts[NPL_PF_FAIL], counts[NPL_PF_WARN],
		counts[NPL_PF_OK], counts[NPL_PF_SKIP]);
}

cJSON *npl_preflight_json(const struct npl_preflight *pf, const struct npl_preflight_opts *o)
{
	cJSON *j = cJSON_CreateObject(), *a = cJSON_CreateArray();

	cJSON_AddStringToObject(j, "format", "npulaunch-preflight/1");
	cJSON_AddStringToObject(j, "recipe", npl_json_str(cJSON_GetObjectItemCaseSensitive(o->plan, "recipe"), "id"));
	cJSON_AddStringToObject(j, "role", npl_pf_role_name(o));
	if (o->node >= 0)
		cJSON_AddNumberToObject(j, "node", o->node);
	else
		cJSON_AddNullToObject(j, "node");
	if (o->node_ip)
		cJSON_AddStringToObject(j, "address", o->node_ip);
	else
		cJSON_AddNullToObject(j, "address");
	for (int i = 0; i < pf->n; i++) {
		cJSON *c = cJSON_CreateObject();

		cJSON_AddStringToObject(c, "name", pf->v[i].name);
		cJSON_AddStringToObject(c, "status", npl_pf_status_name(pf->v[i].status));
		cJSON_AddStringToObject(c, "found", pf->v[i].found);
		if (pf->v[i].fix)
			cJSON_AddStringToObject(c, "fix", pf->v[i].fix);
		else
			cJSON_AddNullToObject(c, "fix");
		cJSON_AddItemToArray(a, c);
	}
	cJSON_AddItemToObject(j, "checks", a);
	cJSON_AddNumberToObject(j, "failed", pf->failed);
	cJSON_AddNumberToObject(j, "warned", pf->warned);
	return j;
}
