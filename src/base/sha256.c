/* sha256.c: SHA-256 of a buffer as sha256sum prints it, by Nettle; see sha256.h. */
#include <stdint.h>

#include <nettle/sha2.h>

#include "npulaunch/sha256.h"

void npl_sha256_hex(const void *p, size_t n, char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	struct sha256_ctx c;
	uint8_t d[SHA256_DIGEST_SIZE];
	size_t i;

	sha256_init(&c);
	sha256_update(&c, n, p);
	sha256_digest(&c, sizeof(d), d);
	for (i = 0; i < sizeof(d); i++) {
		hex[2 * i] = digits[d[i] >> 4];
		hex[2 * i + 1] = digits[d[i] & 15];
	}
	hex[64] = '\0';
}
