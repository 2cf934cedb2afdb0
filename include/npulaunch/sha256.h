/*
 * sha256.h: layer base. SHA-256 (FIPS 180-4) of a buffer, computed by Nettle (which uses the CPU's SHA
 * extensions where it has them). Included by output.c, which records the files it writes by
 * their sha256 (the value sha256sum prints), and by its tests.
 */
#ifndef NPL_SHA256_H
#define NPL_SHA256_H

#include <stddef.h>

/* The digest of n bytes at p as 64 lowercase hex digits and a NUL. */
void npl_sha256_hex(const void *p, size_t n, char hex[65]);

#endif
