/* fuzz_journal.c: libFuzzer target for the tuning journal's parser and validator. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/tune.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_tune_journal j;
	int i;

	/* as revert reads it: for the root / and for a fake root, and for whichever it names */
	if (npl_tune_journal_parse(&j, "journal.json", (const char *)data, size, "/", &d) == 0) {
		/* whatever it accepts names tuning files only */
		for (i = 0; i < j.n; i++)
			if (!npl_tune_path_allowed(j.v[i].path))
				abort();
		npl_tune_journal_release(&j);
	}
	if (npl_tune_journal_parse(&j, "journal.json", (const char *)data, size, "/tmp/root", &d) == 0)
		npl_tune_journal_release(&j);
	if (npl_tune_journal_parse(&j, "journal.json", (const char *)data, size, NULL, &d) == 0)
		npl_tune_journal_release(&j);
	for (i = 0; i < d.n; i++)
		free(npl_diag_format(&d, &d.v[i], 1));
	npl_diag_release(&d);
	return 0;
}
