/*
 * genout.h: private to the build-time generators in src/gen/: C string
 * literals and writing a generated file whole or not at all.
 */
#ifndef NPL_GENOUT_H
#define NPL_GENOUT_H

#include "npulaunch/buf.h"

/* Append s as a C string literal, or NULL. Trigraphs and every byte outside printable ASCII
 * are escaped, so the output compiles the same under any -std. */
void npl_gen_literal(struct npl_buf *b, const char *s);
/* Write b to path through path.tmp and a rename; 0, or -1 and a message naming prog. */
int npl_gen_write(const char *prog, const char *path, const struct npl_buf *b);

#endif
