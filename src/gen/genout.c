/* genout.c: what the build-time generators share; see genout.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "genout.h"

void npl_gen_literal(struct npl_buf *b, const char *s)
{
	if (!s) {
		npl_buf_puts(b, "NULL");
		return;
	}
	npl_buf_putc(b, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\' || c == '?')
			npl_buf_printf(b, "\\%c", c);
		else if (c < 0x20 || c > 0x7e)
			npl_buf_printf(b, "\\%03o", c);
		else
			npl_buf_putc(b, (char)c);
	}
	npl_buf_putc(b, '"');
}

int npl_gen_write(const char *prog, const char *path, const struct npl_buf *b)
{
	struct npl_buf tmp = NPL_BUF_INIT;
	FILE *fp;
	int ok;

	npl_buf_printf(&tmp, "%s.tmp", path);
	fp = fopen(tmp.data, "w");
	ok = fp && fwrite(b->data, 1, b->len, fp) == b->len;
	if (fp && fclose(fp))
		ok = 0;
	if (!ok || rename(tmp.data, path)) {
		fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
		remove(tmp.data);
		ok = 0;
	}
	npl_buf_release(&tmp);
	return ok ? 0 : -1;
}
