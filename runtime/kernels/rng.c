/*
 * rng.c: libbnn's random numbers (bnn_rng.h).  The generator is
 * xoshiro256** 1.0 (D. Blackman and S. Vigna, "Scrambled linear
 * pseudorandom number generators", ACM TOMS 47(4), 2021), seeded by
 * expanding a 64-bit seed through splitmix64 as its authors recommend, with
 * their published jump polynomial for 2^128 steps.  On top of the raw
 * 64-bit stream sit uniform doubles and floats, unbiased integers below n
 * (Lemire's multiply-shift with rejection), Fisher-Yates shuffling and the
 * Gaussian sampler.
 *
 * The Gaussian sampler is the hot one: it draws the weight noise of every
 * training step, millions of values.  It is the Box-Muller transform
 * (Box and Muller, 1958) computed in float, 64 random bits per pair of
 * variates (32 for the radius, 32 for the angle): a loop fills a block of
 * raw draws, then a branch-free loop of plain float arithmetic turns them
 * into normals.  That loop calls no libm function but sqrtf and fmaf
 * (gcc vectorises logf and sinf only under -ffast-math, sqrtf under the
 * library's -fno-math-errno, fmaf where the target has FMA): the
 * logarithm, sine and cosine are our own short polynomial approximations,
 * each within 4e-7 relative error (see the functions and
 * docs/optimizers.md), so gcc vectorises it at -O2.  One stream is
 * inherently serial, so from NORMAL_WIDE_MIN variates on, sixteen
 * xoshiro256++ streams seeded from the caller's run side by side as
 * vector lanes (two AVX-512 vectors per state word, whose dependency
 * chains overlap).  Each step of this design was measured
 * faster than the one before it: sixteen lanes rather than eight, the
 * intrinsics of rng_normal_block_avx512, which keep the lanes in
 * registers, a block's pairs taking their bits so that no value crosses a
 * vector (see rng_normal_block), the polynomials as fused multiply-adds,
 * and sqrtf for the square root; every clone is many times faster than
 * scalar double Box-Muller (the figures: docs/benchmarks.md,
 * "Measurements behind the kernels").
 *
 * From NORMAL_WIDE_MIN on, a call takes one draw of the caller's stream,
 * its key, and every chunk of NORMAL_CHUNK variates gets lanes of its own
 * seeded from (key, chunk index) by splitmix64: chunks can be drawn in
 * any order by any thread, so bnn_rng_normal splits them across the
 * OpenMP team and the variates do not depend on the number of threads.
 *
 * bnn_rng_normal_begin/next hand out one call's variates in pieces, for
 * callers that use each piece while it is in cache (the trainer's noise,
 * posterior.c), and bnn_rng_normal_seek lets each thread of such a caller
 * start at its own piece.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"
#include "bnn_bits.h"
#include "simd_clones.h"

/* The Gaussian sampler's layout: NORMAL_LANES streams side by side in
 * blocks of NORMAL_PAIRS pairs (a multiple of NORMAL_LANES); n below
 * NORMAL_WIDE_MIN, and the rest of n after the blocks, come from the
 * caller's own stream in chunks of NARROW_PAIRS pairs.  From
 * NORMAL_WIDE_MIN on, every NORMAL_CHUNK variates (a multiple of the
 * block) have lanes of their own, seeded from (the call's draw, the
 * chunk's index).  Changing any of the first four changes the variates a
 * seed gives (bnn_rng.h documents them); NARROW_PAIRS only sets the work
 * per chunk. */
#define NORMAL_LANES    16
#define NORMAL_PAIRS    256
#define NORMAL_WIDE_MIN (2 * NORMAL_PAIRS)
#define NORMAL_CHUNK    16384
#define NARROW_PAIRS    32

/* On x86-64 with gcc and glibc, the block sampler is compiled three times
 * (x86-64 levels 4 and 3, AVX-512 and AVX2 with FMA, and the baseline)
 * and the loader picks the best the CPU runs (an ifunc).  The clones
 * compute bit-identical results, the same IEEE single operations in the
 * same order: the polynomials' multiply-adds are explicit fmaf() calls
 * (one rounding each, an instruction where the target has FMA, the C
 * library's exact software otherwise), and gcc fuses no other a*b + c as
 * long as it is in ISO C mode (-std=c11, where its default is
 * -ffp-contract=off), the only mode that makes clones.  Define
 * BNN_NO_SIMD_CLONES (or BNN_RNG_NO_CLONES) to build the baseline only. */
#define RNG_CLONES BNN_SIMD_CLONES_FMA /* simd_clones.h */

/* The helpers of the cloned functions are always inlined: gcc does not
 * inline a plain inline function into a clone built for another -march
 * (x86-64-v4 or v3), and a call per pair, with fmaf() a call of its own,
 * made the narrow sampler several times slower. */
#if defined(__GNUC__)
#define RNG_INLINE static inline __attribute__((always_inline))
#else
#define RNG_INLINE static inline
#endif

RNG_INLINE uint64_t rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* splitmix64 (Steele, Lea and Flood, OOPSLA 2014): its counter increment,
 * 2^64 over the golden ratio, and its mixing function. */
#define RNG_GOLDEN UINT64_C(0x9e3779b97f4a7c15)

RNG_INLINE uint64_t rng_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* splitmix64: one output per call. */
static uint64_t rng_splitmix64(uint64_t *x)
{
	return rng_mix64(*x += RNG_GOLDEN);
}

uint64_t bnn_rng_derive(uint64_t seed, uint64_t i)
{
	return rng_mix64(seed + (i + 1) * RNG_GOLDEN);
}

void bnn_rng_seed(bnn_rng *rng, uint64_t seed)
{
	uint64_t x = seed;
	int i;

	/* splitmix64 is a bijection on its counter, so four consecutive
	 * outputs are never all zero: the state is always valid. */
	for (i = 0; i < 4; i++)
		rng->s[i] = rng_splitmix64(&x);
}

/* One xoshiro256** step on a state held in s[0..3]. */
RNG_INLINE uint64_t rng_step(uint64_t s[4])
{
	uint64_t result = rng_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rng_rotl(s[3], 45);
	return result;
}

uint64_t bnn_rng_next(bnn_rng *rng)
{
	return rng_step(rng->s);
}

void bnn_rng_jump(bnn_rng *rng)
{
	/* The published jump polynomial of xoshiro256 for 2^128 steps. */
	static const uint64_t jump[4] = { UINT64_C(0x180ec6d33cfd0aba),
		                          UINT64_C(0xd5a61266f0c9392c),
		                          UINT64_C(0xa9582618e03fc9aa),
		                          UINT64_C(0x39abdc4529b1661c) };
	uint64_t t[4] = { 0, 0, 0, 0 };
	int i, b, k;

	for (i = 0; i < 4; i++) {
		for (b = 0; b < 64; b++) {
			if (jump[i] & (UINT64_C(1) << b))
				for (k = 0; k < 4; k++)
					t[k] ^= rng->s[k];
			rng_step(rng->s);
		}
	}
	memcpy(rng->s, t, sizeof t);
}

double bnn_rng_uniform(bnn_rng *rng)
{
	/* The top 53 bits as a multiple of 2^-53. */
	return (double)(bnn_rng_next(rng) >> 11) * 0x1p-53;
}

/* The high 64 bits of the 128-bit product a * b, and the low ones in *lo. */
static inline uint64_t rng_mul128(uint64_t a, uint64_t b, uint64_t *lo)
{
#ifdef __SIZEOF_INT128__
	unsigned __int128 p = (unsigned __int128)a * b;

	*lo = (uint64_t)p;
	return (uint64_t)(p >> 64);
#else
	uint64_t a0 = a & 0xffffffffu, a1 = a >> 32;
	uint64_t b0 = b & 0xffffffffu, b1 = b >> 32;
	uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
	uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);

	*lo = (mid << 32) | (p00 & 0xffffffffu);
	return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
#endif
}

uint64_t bnn_rng_below(bnn_rng *rng, uint64_t n)
{
	uint64_t lo, hi;

	if (n == 0)
		return 0;
	/* D. Lemire, "Fast random integer generation in an interval", ACM
	 * TOMACS 29(1), 2019, Algorithm 5: x * n / 2^64, rejecting the
	 * 2^64 mod n low products that would make some results more likely. */
	hi = rng_mul128(bnn_rng_next(rng), n, &lo);
	if (lo < n) {
		uint64_t threshold = (0 - n) % n; /* 2^64 mod n */

		while (lo < threshold)
			hi = rng_mul128(bnn_rng_next(rng), n, &lo);
	}
	return hi;
}

void bnn_rng_shuffle(bnn_rng *rng, long *idx, long n)
{
	long i;

	/* Fisher-Yates (Durstenfeld's in-place form), from the end. */
	for (i = n - 1; i > 0; i--) {
		long j = (long)bnn_rng_below(rng, (uint64_t)i + 1);
		long tmp = idx[i];

		idx[i] = idx[j];
		idx[j] = tmp;
	}
}

void bnn_rng_uniform_fill(bnn_rng *rng, float *out, size_t n)
{
	size_t i;

	/* Two floats per draw: the top 24 bits of each 32-bit half. */
	for (i = 0; i + 1 < n; i += 2) {
		uint64_t x = bnn_rng_next(rng);

		out[i] = (float)(x >> 40) * 0x1p-24f;
		out[i + 1] = (float)((uint32_t)x >> 8) * 0x1p-24f;
	}
	if (i < n)
		out[i] = (float)(bnn_rng_next(rng) >> 40) * 0x1p-24f;
}

/* ---- the Gaussian sampler ----------------------------------------------- */

/*
 * −ln(x · 2^-31) for x = (float)j, j an odd integer in [1, 2^31): the
 * scale 2^-31 folds into the exponent.  x = 2^k · m with m in [√2/2, √2),
 * split from the bits by offsetting the exponent so that the boundary
 * falls at √2/2 rather than at 1.  Then ln m = 2f Q(f²) with
 * f = (m − 1)/(m + 1), |f| <= 3 − 2√2 = 0.1716, where Q approximates
 * atanh(√w)/√w = 1 + w/3 + w²/5 + ... ; the coefficients are our minimax
 * (Remez) fit of degree 2 on w in [0, 0.02944], relative error 1.2e-7,
 * negated and doubled below.  m − 1 is exact (Sterbenz), so the result
 * keeps its relative accuracy near x = 2^31 (result 0).
 */
RNG_INLINE float rng_neg_log(float x)
{
	/* 0x3f3504f3 is the float just above √2/2. */
	uint32_t ix = bnn_float_bits(x) + (UINT32_C(0x3f800000) - UINT32_C(0x3f3504f3));
	/* −k = 127 + 31 − (biased exponent of the offset bits). */
	float nk = (float)(158 - (int32_t)(ix >> 23));
	float m = bnn_bits_float((ix & UINT32_C(0x007fffff)) + UINT32_C(0x3f3504f3));
	float f = (m - 1.0f) / (m + 1.0f);
	float w = f * f;
	float g = fmaf(w, fmaf(w, -0.412963728f, -0.666522238f), -2.00000024f);

	/* ln 2 = 0x1.62e4p-1 + 1.4286068e-6: −k times the first part is
	 * exact for |k| < 512. */
	return fmaf(nk, 0x1.62e4p-1f, fmaf(nk, 1.4286068e-6f, f * g));
}

/* c0 + u·(c1 + u·(c2 + u·c3)), by Horner's rule in fused multiply-adds. */
RNG_INLINE float rng_cubic(float u, float c0, float c1, float c2, float c3)
{
	return fmaf(u, fmaf(u, fmaf(u, c3, c2), c1), c0);
}

/*
 * One pair of variates from 64 random bits: rbits gives the radius, abits
 * the angle.  Box and Muller (1958): with u uniform in (0, 1] and θ
 * uniform on the circle, (r cos θ, r sin θ) with r = √(−2 ln u) are two
 * independent N(0, 1).
 *
 * Radius: j = (top 31 bits of rbits) | 1, an odd integer, so u = j 2^-31
 * is the midpoint of one of 2^30 equal cells of (0, 1): never 0, hence
 * r <= √(62 ln 2) = 6.56 and always finite.
 *
 * Angle: the top two bits of abits reflect (x, y) across the axes, mapping
 * the first quadrant onto the other three; the remaining 30 bits, as a
 * signed integer, give φ uniform in [−π/4, π/4), and θ = π/4 + φ is
 * uniform in the first quadrant.  cos θ = (cos φ − sin φ)/√2 and
 * sin θ = (cos φ + sin φ)/√2; the 1/√2 goes into the radius, computed as
 * √(−ln u).  sin φ = φ P(φ²) and cos φ = C(φ²) with P and C our minimax
 * (Remez) cubics on [0, π²/16], relative errors 3.3e-9 and 3.3e-8.
 */
RNG_INLINE void rng_normal_pair(uint32_t rbits, uint32_t abits, float *x, float *y)
{
	float j = (float)(int32_t)((rbits >> 1) | 1);
	/* sqrtf is one correctly rounded instruction in every clone (the
	 * library is built with -fno-math-errno, so it vectorises) */
	float r = sqrtf(rng_neg_log(j));
	/* (π/4) 2^-31 per unit of the signed 32-bit abits << 2. */
	float phi = (float)(int32_t)(abits << 2) * 0x1.921fb6p-32f;
	float u = phi * phi;
	float sn = phi * rng_cubic(u, 0.999999997f, -0.166666502f, 0.00833201645f, -0.00019501822f);
	float cs = rng_cubic(u, 0.999999967f, -0.499998424f, 0.0416544196f, -0.00135794041f);
	uint32_t sx = abits & UINT32_C(0x80000000);
	uint32_t sy = (abits << 1) & UINT32_C(0x80000000);

	*x = bnn_bits_float(bnn_float_bits(r * (cs - sn)) ^ sx);
	*y = bnn_bits_float(bnn_float_bits(r * (cs + sn)) ^ sy);
}

/* The narrow sampler's transform: draw a[i] gives the pair out[2i],
 * out[2i + 1], its high half the radius and its low half the angle. */
RNG_INLINE void rng_normal_transform(const uint64_t *a, float *out, int npairs)
{
	int i;

	for (i = 0; i < npairs; i++)
		rng_normal_pair((uint32_t)(a[i] >> 32), (uint32_t)a[i], out + 2 * i,
		                out + 2 * i + 1);
}

/* xoshiro256++'s output, rotl(s0 + s3, 23) + s0: the wide sampler's lanes
 * use this scrambler (see rng_normal_block). */
RNG_INLINE uint64_t rng_plusplus(uint64_t s0, uint64_t s3)
{
	return rng_rotl(s0 + s3, 23) + s0;
}

/* The 32-bit words of d[0..NORMAL_LANES/2), low half first: w[p] is half
 * p & 1 of d[p / 2] (on a little-endian machine, the bytes as they lie). */
RNG_INLINE void rng_words(const uint64_t *d, uint32_t *w)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(w, d, NORMAL_LANES / 2 * sizeof *d);
#else
	int p;

	for (p = 0; p < NORMAL_LANES; p++)
		w[p] = (uint32_t)(d[p >> 1] >> (32 * (p & 1)));
#endif
}

/*
 * One block of the wide sampler, 2·NORMAL_PAIRS variates: NORMAL_LANES
 * streams step side by side, each step giving one 64-bit draw per lane,
 * d[0..15], and 32 variates.  The draws are read as 32-bit words, word w
 * of d[0..7] being the low (w even) or high (w odd) half of d[w / 2]:
 * pair p of step t (p < 16) takes its radius from word p of d[0..7] and
 * its angle from word p of d[8..15], and gives out[32t + p] and
 * out[32t + 16 + p].  So an AVX-512 vector of eight lanes' draws is the
 * sixteen radii, the other the sixteen angles, and the results are two
 * vector stores: no lane crosses a vector.  The lanes use xoshiro256++
 * (the same linear engine as rng_step, the authors' all-purpose
 * scrambler, every output bit sound): it is cheaper than ** in vectors,
 * and each 32-bit half is used whole.
 */
RNG_CLONES static void rng_normal_block(uint64_t lane[4][NORMAL_LANES], float *out)
{
	uint32_t rbits[NORMAL_PAIRS], abits[NORMAL_PAIRS];
	uint64_t s0[NORMAL_LANES], s1[NORMAL_LANES];
	uint64_t s2[NORMAL_LANES], s3[NORMAL_LANES];
	uint64_t d[NORMAL_LANES];
	int i, l, p;

	for (l = 0; l < NORMAL_LANES; l++) {
		s0[l] = lane[0][l];
		s1[l] = lane[1][l];
		s2[l] = lane[2][l];
		s3[l] = lane[3][l];
	}
	/* rng_step()'s state update on each lane, spelled out on separate
	 * arrays so that the lanes become vector elements. */
	for (i = 0; i < NORMAL_PAIRS; i += NORMAL_LANES) {
		for (l = 0; l < NORMAL_LANES; l++) {
			uint64_t t = s1[l] << 17;

			d[l] = rng_plusplus(s0[l], s3[l]);
			s2[l] ^= s0[l];
			s3[l] ^= s1[l];
			s1[l] ^= s2[l];
			s0[l] ^= s3[l];
			s2[l] ^= t;
			s3[l] = rng_rotl(s3[l], 45);
		}
		rng_words(d, rbits + i);
		rng_words(d + NORMAL_LANES / 2, abits + i);
	}
	for (l = 0; l < NORMAL_LANES; l++) {
		lane[0][l] = s0[l];
		lane[1][l] = s1[l];
		lane[2][l] = s2[l];
		lane[3][l] = s3[l];
	}
	for (i = 0; i < NORMAL_PAIRS; i += NORMAL_LANES)
		for (p = 0; p < NORMAL_LANES; p++)
			rng_normal_pair(rbits[i + p], abits[i + p], out + 2 * i + p,
			                out + 2 * i + NORMAL_LANES + p);
}

/*
 * The same block with AVX-512 intrinsics, for CPUs that have AVX-512F:
 * the sixteen lanes' states stay in eight registers (two per state word),
 * and each step's two vectors of draws are the transform's radii and
 * angles as they stand, with the same IEEE single operations in the same
 * order as rng_normal_pair, so it gives the same bits (t/runtime_rng
 * compares it with the compiled block, run under BNN_RNG=generic).
 * Measured faster than the generic AVX-512 clone (gcc keeps the clone's
 * lane states in memory), and faster again since each vector is used as
 * it stands (the shuffles that paired the halves of each draw, and
 * interleaved x and y, had cost a good part of the time) and the lanes
 * use xoshiro256++ (docs/benchmarks.md, "Measurements behind the
 * kernels").
 */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(BNN_NO_SIMD_CLONES) && \
        !defined(BNN_RNG_NO_CLONES)
#define RNG_HAVE_AVX512 1
#include <immintrin.h>

#define RNG_AVX512 __attribute__((target("avx512f,fma")))

/* rng_neg_log on sixteen floats. */
RNG_AVX512 static inline __m512 rng_v_neg_log(__m512 x)
{
	const __m512 one = _mm512_set1_ps(1.0f);
	__m512i ix = _mm512_add_epi32(_mm512_castps_si512(x),
	                              _mm512_set1_epi32(0x3f800000 - 0x3f3504f3));
	__m512 nk = _mm512_cvtepi32_ps(
	        _mm512_sub_epi32(_mm512_set1_epi32(158), _mm512_srli_epi32(ix, 23)));
	__m512 m = _mm512_castsi512_ps(
	        _mm512_add_epi32(_mm512_and_si512(ix, _mm512_set1_epi32(0x007fffff)),
	                         _mm512_set1_epi32(0x3f3504f3)));
	__m512 f = _mm512_div_ps(_mm512_sub_ps(m, one), _mm512_add_ps(m, one));
	__m512 w = _mm512_mul_ps(f, f);
	__m512 g = _mm512_fmadd_ps(
	        w, _mm512_fmadd_ps(w, _mm512_set1_ps(-0.412963728f), _mm512_set1_ps(-0.666522238f)),
	        _mm512_set1_ps(-2.00000024f));

	return _mm512_fmadd_ps(
	        nk, _mm512_set1_ps(0x1.62e4p-1f),
	        _mm512_fmadd_ps(nk, _mm512_set1_ps(1.4286068e-6f), _mm512_mul_ps(f, g)));
}

/* rng_cubic on sixteen floats. */
RNG_AVX512 static inline __m512 rng_v_cubic(__m512 u, float c0, float c1, float c2, float c3)
{
	__m512 q = _mm512_fmadd_ps(u, _mm512_set1_ps(c3), _mm512_set1_ps(c2));

	q = _mm512_fmadd_ps(u, q, _mm512_set1_ps(c1));
	return _mm512_fmadd_ps(u, q, _mm512_set1_ps(c0));
}

/* rng_normal_pair on sixteen pairs: radius bits rb, angle bits ab; the
 * x's go to out[0..16), the y's to out[16..32). */
RNG_AVX512 static inline void rng_v_pairs(__m512i rb, __m512i ab, float *out)
{
	const __m512i sign = _mm512_set1_epi32((int)0x80000000u);
	__m512 j =
	        _mm512_cvtepi32_ps(_mm512_or_si512(_mm512_srli_epi32(rb, 1), _mm512_set1_epi32(1)));
	__m512 r = _mm512_sqrt_ps(rng_v_neg_log(j));
	__m512 phi = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_slli_epi32(ab, 2)),
	                           _mm512_set1_ps(0x1.921fb6p-32f));
	__m512 u = _mm512_mul_ps(phi, phi);
	__m512 sn = _mm512_mul_ps(
	        phi, rng_v_cubic(u, 0.999999997f, -0.166666502f, 0.00833201645f, -0.00019501822f));
	__m512 cs = rng_v_cubic(u, 0.999999967f, -0.499998424f, 0.0416544196f, -0.00135794041f);
	__m512i sx = _mm512_and_si512(ab, sign);
	__m512i sy = _mm512_and_si512(_mm512_slli_epi32(ab, 1), sign);

	_mm512_storeu_ps(
	        out, _mm512_castsi512_ps(_mm512_xor_si512(
	                     _mm512_castps_si512(_mm512_mul_ps(r, _mm512_sub_ps(cs, sn))), sx)));
	_mm512_storeu_ps(
	        out + 16,
	        _mm512_castsi512_ps(_mm512_xor_si512(
	                _mm512_castps_si512(_mm512_mul_ps(r, _mm512_add_ps(cs, sn))), sy)));
}

/* rng_plusplus on eight lanes. */
RNG_AVX512 static inline __m512i rng_v_plusplus(__m512i s0, __m512i s3)
{
	return _mm512_add_epi64(_mm512_rol_epi64(_mm512_add_epi64(s0, s3), 23), s0);
}

/* rng_step's state update on eight lanes. */
#define RNG_V_STEP(s0, s1, s2, s3)                      \
	do {                                            \
		__m512i t_ = _mm512_slli_epi64(s1, 17); \
		s2 = _mm512_xor_si512(s2, s0);          \
		s3 = _mm512_xor_si512(s3, s1);          \
		s1 = _mm512_xor_si512(s1, s2);          \
		s0 = _mm512_xor_si512(s0, s3);          \
		s2 = _mm512_xor_si512(s2, t_);          \
		s3 = _mm512_rol_epi64(s3, 45);          \
	} while (0)

RNG_AVX512 static void rng_normal_block_avx512(uint64_t lane[4][NORMAL_LANES], float *out)
{
	__m512i s0a = _mm512_loadu_si512(lane[0]), s0b = _mm512_loadu_si512(lane[0] + 8);
	__m512i s1a = _mm512_loadu_si512(lane[1]), s1b = _mm512_loadu_si512(lane[1] + 8);
	__m512i s2a = _mm512_loadu_si512(lane[2]), s2b = _mm512_loadu_si512(lane[2] + 8);
	__m512i s3a = _mm512_loadu_si512(lane[3]), s3b = _mm512_loadu_si512(lane[3] + 8);
	int i;

	for (i = 0; i < NORMAL_PAIRS; i += NORMAL_LANES) {
		__m512i da = rng_v_plusplus(s0a, s3a), db = rng_v_plusplus(s0b, s3b);

		RNG_V_STEP(s0a, s1a, s2a, s3a);
		RNG_V_STEP(s0b, s1b, s2b, s3b);
		rng_v_pairs(da, db, out + 2 * i);
	}
	_mm512_storeu_si512(lane[0], s0a);
	_mm512_storeu_si512(lane[0] + 8, s0b);
	_mm512_storeu_si512(lane[1], s1a);
	_mm512_storeu_si512(lane[1] + 8, s1b);
	_mm512_storeu_si512(lane[2], s2a);
	_mm512_storeu_si512(lane[2] + 8, s2b);
	_mm512_storeu_si512(lane[3], s3a);
	_mm512_storeu_si512(lane[3] + 8, s3b);
}

/* 1 when the CPU has AVX-512F and the environment variable BNN_RNG is not
 * "generic" (read once: that forces the compiled block, for the test that
 * compares the two), -1 otherwise, 0 before the first look. */
static int rng_avx512_state;

static int rng_avx512(void)
{
	int state = __atomic_load_n(&rng_avx512_state, __ATOMIC_RELAXED);

	if (state == 0) {
		__builtin_cpu_init();
		const char *env = getenv("BNN_RNG");

		state = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma") &&
		                        !(env && strcmp(env, "generic") == 0)
		                ? 1
		                : -1;
		__atomic_store_n(&rng_avx512_state, state, __ATOMIC_RELAXED);
	}
	return state > 0;
}
#else
#define RNG_HAVE_AVX512 0
#endif

/* Up to 2 * NARROW_PAIRS variates from the single stream s: one draw per
 * pair, exactly (n + 1) / 2 draws.  Beyond a few pairs, all NARROW_PAIRS
 * are transformed (the unused ones from zeros), so that the loop's trip
 * count is a constant gcc vectorises. */
RNG_CLONES static void rng_normal_chunk(uint64_t s[4], float *out, int n)
{
	uint64_t a[NARROW_PAIRS];
	float buf[2 * NARROW_PAIRS];
	int i, npairs = (n + 1) / 2;

	for (i = 0; i < npairs; i++)
		a[i] = rng_step(s);
	if (npairs <= 4) {
		rng_normal_transform(a, buf, npairs);
	} else {
		for (; i < NARROW_PAIRS; i++)
			a[i] = 0;
		rng_normal_transform(a, buf, NARROW_PAIRS);
	}
	memcpy(out, buf, (size_t)n * sizeof *out);
}

/* The narrow sampler: n variates from the single stream s, chunk by
 * chunk: a prefix of what a larger n would give. */
static void rng_normal_narrow(uint64_t s[4], float *out, size_t n)
{
	while (n > 0) {
		int k = n < 2 * NARROW_PAIRS ? (int)n : 2 * NARROW_PAIRS;

		rng_normal_chunk(s, out, k);
		out += k;
		n -= (size_t)k;
	}
}

/* The lanes' states of chunk c of a wide call whose draw of the caller's
 * stream was key: lane l is seeded, as by bnn_rng_seed(), from splitmix64's
 * output number 16c + l + 1 from counter key, and its state word k is
 * splitmix64's (k + 1)-th output from that seed.  So each chunk's lanes
 * follow from (key, c) alone, and chunks can be drawn in any order, by
 * any thread.  Written lane-wise so that the clones vectorise it: 64
 * splitmix64 outputs one after the other had cost a measurable share of a
 * call of 4096 variates (docs/benchmarks.md). */
RNG_CLONES static void rng_seed_chunk(uint64_t key, size_t c, uint64_t lane[4][NORMAL_LANES])
{
	uint64_t seed[NORMAL_LANES];
	int k, l;

	for (l = 0; l < NORMAL_LANES; l++)
		seed[l] = rng_mix64(key +
		                    ((uint64_t)c * NORMAL_LANES + (uint64_t)l + 1) * RNG_GOLDEN);
	for (k = 0; k < 4; k++)
		for (l = 0; l < NORMAL_LANES; l++)
			lane[k][l] = rng_mix64(seed[l] + (uint64_t)(k + 1) * RNG_GOLDEN);
}

/* Advance the lanes past nb blocks without computing them: a block is
 * NORMAL_PAIRS / NORMAL_LANES steps of every lane (rng_normal_block). */
static void rng_skip_blocks(uint64_t lane[4][NORMAL_LANES], size_t nb)
{
	size_t i;
	int l;

	for (i = 0; i < nb * (NORMAL_PAIRS / NORMAL_LANES); i++)
		for (l = 0; l < NORMAL_LANES; l++) {
			uint64_t t = lane[1][l] << 17;

			lane[2][l] ^= lane[0][l];
			lane[3][l] ^= lane[1][l];
			lane[1][l] ^= lane[2][l];
			lane[0][l] ^= lane[3][l];
			lane[2][l] ^= t;
			lane[3][l] = rng_rotl(lane[3][l], 45);
		}
}

/* One block of the wide sampler, by the intrinsics where the CPU has
 * them. */
static void rng_normal_wide_block(uint64_t lane[4][NORMAL_LANES], float *out)
{
#if RNG_HAVE_AVX512
	if (rng_avx512()) {
		rng_normal_block_avx512(lane, out);
		return;
	}
#endif
	rng_normal_block(lane, out);
}

/* The first len (<= NORMAL_CHUNK) variates of chunk c of a wide call:
 * whole blocks in place, a last partial one through a buffer. */
static void rng_normal_chunk_fill(uint64_t key, size_t c, float *out, size_t len)
{
	uint64_t lane[4][NORMAL_LANES];
	float buf[2 * NORMAL_PAIRS];
	size_t i;

	rng_seed_chunk(key, c, lane);
	for (i = 0; i + 2 * NORMAL_PAIRS <= len; i += 2 * NORMAL_PAIRS)
		rng_normal_wide_block(lane, out + i);
	if (i < len) {
		rng_normal_wide_block(lane, buf);
		memcpy(out + i, buf, (len - i) * sizeof *out);
	}
}

/* From how many chunks bnn_rng_normal() splits them across threads: two
 * chunks (32768 variates, some 20 us here) already gain from a second
 * thread (docs/benchmarks.md); below, the call is one chunk, serial. */
#define NORMAL_PARALLEL_CHUNKS 2

void bnn_rng_normal(bnn_rng *rng, float *out, size_t n)
{
	uint64_t key;
	size_t c, nchunks;

	if (n < NORMAL_WIDE_MIN) {
		rng_normal_narrow(rng->s, out, n);
		return;
	}
	key = bnn_rng_next(rng);
	nchunks = (n + NORMAL_CHUNK - 1) / NORMAL_CHUNK;
	/* each chunk's variates follow from (key, c): the split across
	 * threads changes nothing in them */
#pragma omp parallel for schedule(static) if (nchunks >= NORMAL_PARALLEL_CHUNKS)
	for (c = 0; c < nchunks; c++) {
		size_t at = c * NORMAL_CHUNK;

		rng_normal_chunk_fill(key, c, out + at,
		                      n - at < NORMAL_CHUNK ? n - at : NORMAL_CHUNK);
	}
}

/* ---- one call in pieces ------------------------------------------------- */

_Static_assert(BNN_RNG_NORMAL_LANES == NORMAL_LANES && BNN_RNG_NORMAL_BLOCK == 2 * NORMAL_PAIRS &&
                       BNN_RNG_NORMAL_BLOCK == NORMAL_WIDE_MIN &&
                       BNN_RNG_NORMAL_CHUNK == NORMAL_CHUNK &&
                       NORMAL_CHUNK % (2 * NORMAL_PAIRS) == 0,
               "bnn_rng.h's sizes are the sampler's");

void bnn_rng_normal_begin(bnn_rng_normal_stream *s, bnn_rng *rng, size_t n)
{
	s->n = n;
	s->buf_pos = s->buf_len = 0;
	s->chunk = SIZE_MAX; /* no lanes seeded yet */
	s->at = 0;
	s->key = 0;
	if (n < NORMAL_WIDE_MIN) { /* the whole call, now, into the buffer */
		rng_normal_narrow(rng->s, s->buf, n);
		s->buf_len = n;
		s->next = n;
		return;
	}
	s->key = bnn_rng_next(rng); /* as bnn_rng_normal() does first */
	s->next = 0;
}

/* The block of variates from s->next (a multiple of the block) into dst,
 * which has room for a whole block; returns how many of them belong to
 * the call.  The lanes are reseeded when s->next is in another chunk than
 * theirs, or behind them, and skip forward to s->next otherwise. */
static size_t rng_stream_block(bnn_rng_normal_stream *s, float *dst)
{
	size_t c = s->next / NORMAL_CHUNK, len = s->n - s->next;

	if (s->chunk != c || s->at > s->next) {
		rng_seed_chunk(s->key, c, s->lane);
		s->chunk = c;
		s->at = c * NORMAL_CHUNK;
	}
	rng_skip_blocks(s->lane, (s->next - s->at) / (2 * NORMAL_PAIRS));
	rng_normal_wide_block(s->lane, dst);
	s->at = s->next + 2 * NORMAL_PAIRS;
	return len < 2 * NORMAL_PAIRS ? len : 2 * NORMAL_PAIRS;
}

size_t bnn_rng_normal_next(bnn_rng_normal_stream *s, float *out, size_t k)
{
	size_t done = 0;

	while (done < k) {
		size_t len;

		if (s->buf_pos < s->buf_len) { /* the rest of a block or the narrow call */
			len = s->buf_len - s->buf_pos;
			len = len < k - done ? len : k - done;
			memcpy(out + done, s->buf + s->buf_pos, len * sizeof *out);
			s->buf_pos += len;
			done += len;
			continue;
		}
		if (s->next >= s->n)
			break; /* all n given */
		if (k - done >= 2 * NORMAL_PAIRS && s->n - s->next >= 2 * NORMAL_PAIRS) {
			len = rng_stream_block(s, out + done); /* a whole block, in place */
			done += len;
		} else {
			len = rng_stream_block(s, s->buf);
			s->buf_pos = 0;
			s->buf_len = len;
		}
		s->next += len;
	}
	return done;
}

void bnn_rng_normal_seek(bnn_rng_normal_stream *s, size_t offset)
{
	if (offset > s->n)
		offset = s->n;
	if (s->n < NORMAL_WIDE_MIN) { /* the buffer holds the whole call */
		s->buf_pos = offset;
		return;
	}
	s->buf_pos = s->buf_len = 0;
	s->next = offset - offset % (2 * NORMAL_PAIRS);
	if (offset % (2 * NORMAL_PAIRS)) {
		s->buf_len = rng_stream_block(s, s->buf);
		s->buf_pos = offset % (2 * NORMAL_PAIRS);
		s->next += s->buf_len;
	}
}
