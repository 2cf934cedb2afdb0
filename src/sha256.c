/* sha256.c: SHA-256, portable and with the x86 SHA extensions; see sha256.h. */
#include <stdint.h>
#include <string.h>

#include "npulaunch/sha256.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_SHANI 1
#include <cpuid.h>
#include <immintrin.h>
#endif

typedef void blocks_fn(uint32_t h[8], const unsigned char *p, size_t nblocks);

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void blocks_c(uint32_t h[8], const unsigned char *p, size_t nblocks)
{
	uint32_t w[64], a, b, c, d, e, f, g, k, t1, t2;
	int i;

	for (; nblocks--; p += 64) {
		for (i = 0; i < 16; i++)
			w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
			       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
		for (; i < 64; i++)
			w[i] = w[i - 16] +
			       (ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3)) +
			       w[i - 7] +
			       (ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10));
		a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
		for (i = 0; i < 64; i++) {
			t1 = k + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) +
			     K[i] + w[i];
			t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
			k = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
		}
		h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g,
		    h[7] += k;
	}
}

#ifdef HAVE_SHANI
/* Four rounds per step with sha256rnds2; the schedule four words at a time with msg1/msg2.
 * The state lives as ABEF and CDGH, as the instructions want it. */
__attribute__((target("sha,sse4.1"))) static void
blocks_shani(uint32_t h[8], const unsigned char *p, size_t nblocks)
{
	const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
	__m128i s0, s1, t, save0, save1, m, w[4];
	int i;

	t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[0]), 0xb1);  /* CDAB */
	s1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[4]), 0x1b); /* EFGH */
	s0 = _mm_alignr_epi8(t, s1, 8);					       /* ABEF */
	s1 = _mm_blend_epi16(s1, t, 0xf0);				       /* CDGH */
	for (; nblocks--; p += 64) {
		save0 = s0;
		save1 = s1;
		for (i = 0; i < 4; i++)
			w[i] =
			    _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)), swap);
		for (i = 0; i < 16; i++) {
			m = _mm_add_epi32(w[i & 3], _mm_loadu_si128((const __m128i *)&K[4 * i]));
			s1 = _mm_sha256rnds2_epu32(s1, s0, m);
			s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(m, 0x0e));
			if (i < 12) {
				/* W[t..t+3]: W[t-16..] + s0(W[t-15..]) + W[t-7..], + s1 */
				t = _mm_sha256msg1_epu32(w[i & 3], w[(i + 1) & 3]);
				t = _mm_add_epi32(
				    t, _mm_alignr_epi8(w[(i + 3) & 3], w[(i + 2) & 3], 4));
				w[i & 3] = _mm_sha256msg2_epu32(t, w[(i + 3) & 3]);
			}
		}
		s0 = _mm_add_epi32(s0, save0);
		s1 = _mm_add_epi32(s1, save1);
	}
	t = _mm_shuffle_epi32(s0, 0x1b);				  /* FEBA */
	s1 = _mm_shuffle_epi32(s1, 0xb1);				  /* DCHG */
	_mm_storeu_si128((__m128i *)&h[0], _mm_blend_epi16(t, s1, 0xf0)); /* DCBA */
	_mm_storeu_si128((__m128i *)&h[4], _mm_alignr_epi8(s1, t, 8));	  /* HGFE */
}

static blocks_fn *pick(void)
{
	unsigned a, b, c, d;

	/* SSSE3 and SSE4.1 (leaf 1, ecx bits 9 and 19), SHA (leaf 7, ebx bit 29) */
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 9)) || !(c & (1u << 19)))
		return blocks_c;
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(b & (1u << 29)))
		return blocks_c;
	return blocks_shani;
}
#else
static blocks_fn *pick(void)
{
	return blocks_c;
}
#endif

static void digest(blocks_fn *blocks, const void *data, size_t n, char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
			 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
	const unsigned char *p = data;
	unsigned char last[128] = {0};
	uint64_t bits = (uint64_t)n * 8;
	size_t rest = n % 64, tail;
	int i;

	blocks(h, p, n / 64);
	/* the padding: 0x80, zeros, the length in bits (one block or two) */
	if (rest)
		memcpy(last, p + n - rest, rest);
	last[rest] = 0x80;
	tail = rest < 56 ? 64 : 128;
	for (i = 0; i < 8; i++)
		last[tail - 1 - i] = (unsigned char)(bits >> (8 * i));
	blocks(h, last, tail / 64);
	for (i = 0; i < 32; i++) {
		unsigned v = h[i / 4] >> (24 - 8 * (i % 4)) & 0xff;

		hex[2 * i] = digits[v >> 4];
		hex[2 * i + 1] = digits[v & 15];
	}
	hex[64] = '\0';
}

void npl_sha256_hex(const void *p, size_t n, char hex[65])
{
	static blocks_fn *blocks;

	if (!blocks)
		blocks = pick();
	digest(blocks, p, n, hex);
}

void npl_sha256_hex_portable(const void *p, size_t n, char hex[65])
{
	digest(blocks_c, p, n, hex);
}
