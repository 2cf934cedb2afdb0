/*
 * unit.h: what the unit tests share. Include after <cmocka.h> and the module
 * headers.
 */
#ifndef NPL_TEST_UNIT_H
#define NPL_TEST_UNIT_H

#include <stdio.h>
#include <stdlib.h>

#include "npulaunch/diag.h"

/* Diagnostic i without its caret ("file:line:col: error: message"), in a buffer that the
 * next call reuses. Fails the test when there is no diagnostic i. */
static inline const char *npl_test_msg(const struct npl_diag *d, int i)
{
	static char buf[4096];
	char *s;

	assert_true(i < d->n);
	s = npl_diag_format(d, &d->v[i], 0);
	snprintf(buf, sizeof(buf), "%s", s);
	free(s);
	return buf;
}

#endif
