/* fuzz_site.c: libFuzzer target for the site-file loader and the site-value checks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/site.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct npl_arena a;
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_site s, flags;
	char *text = malloc(size + 1);
	int i;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	npl_arena_init(&a);
	memset(&s, 0, sizeof(s));
	memset(&flags, 0, sizeof(flags));
	npl_site_load_text(&s, &a, "site.yaml", text, size, &d);
	npl_site_fill(&flags, &s);
	/* the same bytes as a flag value of each kind */
	for (i = 0; i < NPL_SITE_COUNT; i++)
		npl_site_set(&flags, &a, (enum npl_site_key)i, text, NULL, &d);
	for (i = 0; i < d.n; i++)
		free(npl_diag_format(&d, &d.v[i], 1));
	npl_diag_release(&d);
	npl_arena_release(&a);
	free(text);
	return 0;
}
