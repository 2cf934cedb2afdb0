/* fuzz_page.c: libFuzzer target for the page reader, the pages' shell run in the head, and what
 * import and drift do with a page that reads (every section run on its nodes, compared with the
 * shipped recipes, imported). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/drift.h"
#include "npulaunch/engine.h"
#include "npulaunch/import.h"
#include "npulaunch/page.h"
#include "npulaunch/pagesh.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const ips[] = {"10.0.0.1", "10.0.0.2"};
	static const char *const env[] = {"MODEL_PATH=/m", NULL};
	const struct npl_pagesh_site site = {"eth0", ips, ips, ips, 2, 2, 2};
	struct npl_arena a;
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_page p;
	struct npl_pagesh_result r;
	char *text = malloc(size + 1);
	int i;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	npl_arena_init(&a);
	if (npl_page_read(&p, "page.mdx", text, size, &a, &d) == 0) {
		static struct npl_arena dba;
		static struct npl_db db;
		static struct npl_engine e;
		static int opened;
		struct npl_drift_page dp;
		struct npl_import_result ir;
		struct npl_import_opts o = {"page.mdx", NULL, NULL, 0};

		for (i = 0; i < p.n; i++) {
			npl_pagesh_run(p.v[i].deploy, p.v[i].ndeploy, ips[0], &site, env, &r, &a, &d);
			npl_pagesh_run(p.v[i].bench, p.v[i].nbench, NULL, &site, env, &r, &a, &d);
		}
		if (!opened) {
			struct npl_diag od = NPL_DIAG_INIT;

			npl_arena_init(&dba);
			opened = npl_db_open(&db, &dba, NULL, 0, &od) == 0 && npl_engine_load(&e, &db, &dba, &od) == 0 ? 1 : -1;
			npl_diag_release(&od);
		}
		if (opened == 1)
			npl_drift_page(&db, &e, &p, &dp, &a, &d);
		if (npl_import_page(&p, &o, &ir, &a, &d) == 0)
			npl_import_release(&ir);
	}
	for (i = 0; i < d.n; i++)
		free(npl_diag_format(&d, &d.v[i], 1));
	npl_diag_release(&d);
	npl_arena_release(&a);
	free(text);
	return 0;
}
