/*
 * fuzz_recipe.c: libFuzzer target for the recipe loader and what follows it:
 * the input is a recipe file (several documents allowed); it is loaded,
 * linked and every recipe in it resolved and rendered. Seeds: each shipped
 * recipe with its defaults, hardware and model as one multi-document file.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/output.h"
#include "npulaunch/plan.h"
#include "npulaunch/render.h"
#include "npulaunch/resolve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct npl_arena a;
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_db db;
	char *text = malloc(size + 1);
	int i;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	npl_arena_init(&a);
	npl_db_init(&db, &a);
	npl_db_load_text(&db, "fuzz.yaml", text, size, 0, &d);
	npl_db_link(&db, &d);
	for (i = 0; i < db.nrecipes && i < 4; i++) {
		const struct npl_layer *R = db.recipes[i];
		struct npl_resolve_opts o = {NULL, NULL, 0, 0, NULL, 0};
		cJSON *plan;

		if (!R->model || !R->hardware || !db.defaults)
			continue;
		plan = npl_resolve(&db, R, &o, &d);
		if (plan) {
			struct npl_templates t = {0};
			struct npl_outset set = {0};

			npl_render_bundle(plan, &t, "", &set, &d);
			npl_out_release(&set);
			npl_templates_release(&t);
		}
		cJSON_Delete(plan);
	}
	/* formatting every message exercises the caret code on odd lines */
	for (i = 0; i < d.n; i++)
		free(npl_diag_format(&d, &d.v[i], 1));
	npl_diag_release(&d);
	npl_arena_release(&a);
	free(text);
	return 0;
}
