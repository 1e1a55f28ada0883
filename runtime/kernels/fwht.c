/*
 * fwht.c: libbnn's fast Walsh-Hadamard transform (bnn_fwht.h), the
 * O(n log n) product with the Hadamard matrix that WHVI layers are built
 * on (Rossi et al., NeurIPS 2020, section 2.1: "the in-place version of
 * the Fast Walsh-Hadamard Transform [Fino and Algazi 1976]").
 *
 * The transform of length n = 2^k is k radix-2 stages; the stage of
 * stride h replaces each pair (x[j], x[j + h]), j with bit h clear, by
 * (x[j] + x[j + h], x[j] - x[j + h]).  Every path below applies the
 * stages in the order h = 1, 2, 4, ..., n/2 and each stage is the same
 * elementwise operation, so all of them give exactly the floats of the
 * textbook loop (fwht_textbook); only the grouping of the work changes:
 *
 *  - the four stages of stride 1 to 8 act inside 16-float chunks.  With
 *    GCC they are written with its vector extensions, each stage one
 *    permutation plus a multiply-add by ±1 (b + (-1)·a is exactly b - a),
 *    which GCC turns into a vpermilps or vshuff32x4, a vmulps and a vaddps
 *    on an AVX-512 register (two AVX2 or four SSE2 registers otherwise);
 *    other compilers get the scalar loop;
 *  - the strides from 16 up are vertical: the pairs are 16 consecutive
 *    floats apart from 16 others, and the loops over a chunk count from 0
 *    to the constant FWHT_W, which gcc vectorises at -O2 (as BNN_GEN_LOOP
 *    does).  Three stages are done per pass over the data (radix 8: eight
 *    chunks loaded, 24 butterflies in registers, eight stored), so a
 *    vector of 1024 floats takes two passes after the in-chunk stages
 *    instead of six;
 *  - vectors longer than FWHT_BLOCK floats (16 KiB) first run all their
 *    stages below FWHT_BLOCK block by block, while the block is in the L1
 *    cache, and only the remaining strides stream through memory;
 *  - the orthonormal scale c is applied as the last pass stores its
 *    results ((a + b)·c: the floats of a separate scaling loop).
 *
 * The whole loop over a batch is compiled for AVX-512, AVX2 and baseline
 * x86-64 (BNN_SIMD_CLONES, simd_clones.h); all three give the same floats
 * (additions, subtractions and multiplications by ±1 and by c only).
 *
 * A batch large enough runs on the calling thread's team, split by
 * vectors (bnn_fwht_batch): the floats are the same for every thread
 * count.
 *
 * Measured (bench/bench --only fwht) many times faster than the textbook
 * loop and than the dense product (cblas_sgemm), and the AVX-512 clone
 * several times faster than the baseline SSE2 build alone: the figures
 * are in docs/benchmarks.md, "Measurements behind the kernels".  See
 * docs/whvi.md.
 */
#include <math.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "bnn.h"
#include "simd_clones.h"

/* The width the vertical loops are written for: one AVX-512 vector. */
#define FWHT_W          16
/* Stages of stride below FWHT_BLOCK run block by block (16 KiB blocks). */
#define FWHT_BLOCK_LOG2 12
#define FWHT_BLOCK      (1L << FWHT_BLOCK_LOG2)

/* The kernels must be inlined into each clone of fwht_run, or they would
 * run as baseline code (gcc did not inline fwht_vertical by itself). */
#if defined(__GNUC__) || defined(__clang__)
#define FWHT_INLINE static inline __attribute__((always_inline))
#else
#define FWHT_INLINE static inline
#endif

/* The textbook in-place loop; used for n < FWHT_W. */
FWHT_INLINE void fwht_textbook(float *x, long n)
{
	long h, i, j;

	for (h = 1; h < n; h *= 2)
		for (i = 0; i < n; i += 2 * h)
			for (j = i; j < i + h; j++) {
				float a = x[j], b = x[j + h];

				x[j] = a + b;
				x[j + h] = a - b;
			}
}

#if defined(__GNUC__) && !defined(__clang__)
typedef float fwht_v16 __attribute__((vector_size(64)));
typedef int fwht_v16i __attribute__((vector_size(64)));

/* The lanes j ^ h, and the sign that makes lane j of
 * a[j ^ h] + sign·a[j] the butterfly's sum or difference. */
#define FWHT_PERM(h)                                                                          \
	(fwht_v16i)                                                                           \
	{                                                                                     \
		0 ^ h, 1 ^ h, 2 ^ h, 3 ^ h, 4 ^ h, 5 ^ h, 6 ^ h, 7 ^ h, 8 ^ h, 9 ^ h, 10 ^ h, \
		        11 ^ h, 12 ^ h, 13 ^ h, 14 ^ h, 15 ^ h                                \
	}
#define FWHT_S(j, h) ((j) & (h) ? -1.0f : 1.0f)
#define FWHT_SIGN(h)                                                                               \
	(fwht_v16)                                                                                 \
	{                                                                                          \
		FWHT_S(0, h), FWHT_S(1, h), FWHT_S(2, h), FWHT_S(3, h), FWHT_S(4, h),              \
		        FWHT_S(5, h), FWHT_S(6, h), FWHT_S(7, h), FWHT_S(8, h), FWHT_S(9, h),      \
		        FWHT_S(10, h), FWHT_S(11, h), FWHT_S(12, h), FWHT_S(13, h), FWHT_S(14, h), \
		        FWHT_S(15, h)                                                              \
	}

/* Strides 1, 2, 4 and 8 on the 16 floats at x. */
FWHT_INLINE void fwht_chunk16(float *x)
{
	fwht_v16 a;

	memcpy(&a, x, sizeof a);
	a = __builtin_shuffle(a, FWHT_PERM(1)) + FWHT_SIGN(1) * a;
	a = __builtin_shuffle(a, FWHT_PERM(2)) + FWHT_SIGN(2) * a;
	a = __builtin_shuffle(a, FWHT_PERM(4)) + FWHT_SIGN(4) * a;
	a = __builtin_shuffle(a, FWHT_PERM(8)) + FWHT_SIGN(8) * a;
	memcpy(x, &a, sizeof a);
}
#else
FWHT_INLINE void fwht_chunk16(float *x)
{
	fwht_textbook(x, 16);
}
#endif

/*
 * The butterflies on FWHT_W columns, each result multiplied by s as it is
 * stored: the scale c on the last pass, and elsewhere the constant 1,
 * which gcc folds away (x·1 is x exactly), so the multiplication costs
 * nothing there and the results are those of a separate scaling loop.
 */

/* One stage (radix 2): p0[j], p1[j] = p0[j] ± p1[j]. */
FWHT_INLINE void fwht_r2(float *restrict p0, float *restrict p1, float s)
{
	int j;

	for (j = 0; j < FWHT_W; j++) {
		float a = p0[j], b = p1[j];

		p0[j] = (a + b) * s;
		p1[j] = (a - b) * s;
	}
}

/* Two stages (strides h, 2h) on pk = p0 + k·h. */
FWHT_INLINE void fwht_r4(float *restrict p0, float *restrict p1, float *restrict p2,
                         float *restrict p3, float s)
{
	int j;

	for (j = 0; j < FWHT_W; j++) {
		float x0 = p0[j], x1 = p1[j], x2 = p2[j], x3 = p3[j];
		float a0 = x0 + x1, a1 = x0 - x1, a2 = x2 + x3, a3 = x2 - x3;

		p0[j] = (a0 + a2) * s;
		p1[j] = (a1 + a3) * s;
		p2[j] = (a0 - a2) * s;
		p3[j] = (a1 - a3) * s;
	}
}

/* Three stages (strides h, 2h, 4h) on pk = p0 + k·h. */
FWHT_INLINE void fwht_r8(float *restrict p0, float *restrict p1, float *restrict p2,
                         float *restrict p3, float *restrict p4, float *restrict p5,
                         float *restrict p6, float *restrict p7, float s)
{
	int j;

	for (j = 0; j < FWHT_W; j++) {
		float x0 = p0[j], x1 = p1[j], x2 = p2[j], x3 = p3[j];
		float x4 = p4[j], x5 = p5[j], x6 = p6[j], x7 = p7[j];
		float a0 = x0 + x1, a1 = x0 - x1, a2 = x2 + x3, a3 = x2 - x3;
		float a4 = x4 + x5, a5 = x4 - x5, a6 = x6 + x7, a7 = x6 - x7;
		float b0 = a0 + a2, b1 = a1 + a3, b2 = a0 - a2, b3 = a1 - a3;
		float b4 = a4 + a6, b5 = a5 + a7, b6 = a4 - a6, b7 = a5 - a7;

		p0[j] = (b0 + b4) * s;
		p1[j] = (b1 + b5) * s;
		p2[j] = (b2 + b6) * s;
		p3[j] = (b3 + b7) * s;
		p4[j] = (b0 - b4) * s;
		p5[j] = (b1 - b5) * s;
		p6[j] = (b2 - b6) * s;
		p7[j] = (b3 - b7) * s;
	}
}

/* One pass of `radix` (2, 4 or 8) stages from stride h over x[0..n),
 * results multiplied by s. */
FWHT_INLINE void fwht_pass(float *x, long n, long h, int radix, float s)
{
	long i, c;

	for (i = 0; i < n; i += radix * h)
		for (c = i; c < i + h; c += FWHT_W) {
			float *p = x + c;

			if (radix == 8)
				fwht_r8(p, p + h, p + 2 * h, p + 3 * h, p + 4 * h, p + 5 * h,
				        p + 6 * h, p + 7 * h, s);
			else if (radix == 4)
				fwht_r4(p, p + h, p + 2 * h, p + 3 * h, s);
			else
				fwht_r2(p, p + h, s);
		}
}

/*
 * The stages of stride h, 2h, ..., up to n/2 on x[0..n), for h >= FWHT_W
 * (h and n powers of two), the last pass multiplying by c: radix-8
 * passes, then a radix-4 or radix-2 pass for the one or two stages left
 * (four stages left: two radix-4).  Every call of fwht_pass has a
 * constant radix, and a constant s except on the last pass.
 */
FWHT_INLINE void fwht_vertical(float *x, long n, long h, float c)
{
	while (h < n) {
		long left = 0, t;

		for (t = h; t < n; t *= 2)
			left++;
		if (left >= 3 && left != 4) {
			if (left == 3)
				fwht_pass(x, n, h, 8, c);
			else
				fwht_pass(x, n, h, 8, 1.0f);
			h *= 8;
		} else if (left >= 2) {
			if (left == 2)
				fwht_pass(x, n, h, 4, c);
			else
				fwht_pass(x, n, h, 4, 1.0f);
			h *= 4;
		} else {
			fwht_pass(x, n, h, 2, c);
			h *= 2;
		}
	}
}

/* The in-chunk stages (strides 1 to 8) of x[0..n), n a multiple of 16. */
FWHT_INLINE void fwht_chunks(float *x, long n)
{
	long i;

	for (i = 0; i < n; i += FWHT_W)
		fwht_chunk16(x + i);
}

/* x <- c·H_n·x for each of `batch` vectors. */
BNN_SIMD_CLONES static void fwht_run(float *x, long batch, long n, float c)
{
	long b, i;

	for (b = 0; b < batch; b++, x += n) {
		if (n <= FWHT_W) {
			/* No vertical pass to fold c into. */
			if (n < FWHT_W)
				fwht_textbook(x, n);
			else
				fwht_chunk16(x);
			if (c != 1.0f)
				for (i = 0; i < n; i++)
					x[i] *= c;
		} else if (n <= FWHT_BLOCK) {
			fwht_chunks(x, n);
			fwht_vertical(x, n, FWHT_W, c);
		} else {
			/* Blocks of FWHT_BLOCK through their stages in the L1
			 * cache, then the long strides. */
			for (i = 0; i < n; i += FWHT_BLOCK) {
				fwht_chunks(x + i, FWHT_BLOCK);
				fwht_vertical(x + i, FWHT_BLOCK, FWHT_W, 1.0f);
			}
			fwht_vertical(x, n, FWHT_BLOCK, c);
		}
	}
}

/* k with n = 2^k, or -1 when n is not a power of two from 1 to
 * 2^BNN_FWHT_MAX_LOG2. */
static int fwht_log2(long n)
{
	int k;

	for (k = 0; k <= BNN_FWHT_MAX_LOG2; k++)
		if (n == 1L << k)
			return k;
	return -1;
}

/* The checks every entry point makes; BNN_OK or BNN_EINVAL with err
 * written.  `what` is the caller's name; x_null says x is NULL. */
static int fwht_check(const char *what, int x_null, long batch, long n, int norm, bnn_err *err)
{
	if (n < 1)
		return bnn_fail(err, BNN_EINVAL, "%s: length %ld is not positive", what, n);
	if (fwht_log2(n) < 0) {
		if (n > 1L << BNN_FWHT_MAX_LOG2 && !(n & (n - 1)))
			return bnn_fail(err, BNN_EINVAL,
			                "%s: length %ld is above the largest, 2^%d", what, n,
			                BNN_FWHT_MAX_LOG2);
		return bnn_fail(err, BNN_EINVAL, "%s: length %ld is not a power of two", what, n);
	}
	if (batch < 0)
		return bnn_fail(err, BNN_EINVAL, "%s: batch %ld is negative", what, batch);
	if (norm != BNN_FWHT_RAW && norm != BNN_FWHT_ORTHO)
		return bnn_fail(err, BNN_EINVAL,
		                "%s: norm %d is neither BNN_FWHT_RAW (0) nor "
		                "BNN_FWHT_ORTHO (1)",
		                what, norm);
	if (x_null && batch > 0)
		return bnn_fail(err, BNN_EINVAL, "%s: x is NULL", what);
	return BNN_OK;
}

/* The float c of the normalisation: 1, or 1/√n correctly rounded. */
static float fwht_scale(long n, int norm)
{
	return norm == BNN_FWHT_ORTHO ? (float)(1.0 / sqrt((double)n)) : 1.0f;
}

int bnn_fwht_vector(float *x, long n, int norm, bnn_err *err)
{
	int rc = fwht_check("bnn_fwht_vector", x == NULL, 1, n, norm, err);

	if (rc)
		return rc;
	fwht_run(x, 1, n, fwht_scale(n, norm));
	return BNN_OK;
}

/*
 * Threads.  A batch of at least FWHT_PAR_WORK butterfly operations
 * (batch·n·log2 n), started outside any active parallel region with a
 * team size above 1 (bnn_set_threads), is split by vectors: each thread
 * transforms a contiguous run of them, each vector serially as above, so
 * the floats are those of one thread.  At least half the threshold per
 * thread; smaller batches stay on the calling thread, where starting a
 * parallel region would cost more than it saves (about 3 us here).
 * Measured (2 threads against 1, forced onto 2): 0.4x at 66 K, 0.85x-0.95x
 * at 260 K-330 K, 1.0x-1.2x at 400 K-590 K, 1.5x from 1.3 M; hence 600 K
 * (docs/benchmarks.md, "Measurements behind the kernels").
 */
#ifndef FWHT_PAR_WORK
#define FWHT_PAR_WORK 6e5
#endif

static int fwht_threads(long batch, long n)
{
#ifdef _OPENMP
	const double work =
	        (double)batch * (double)n * (double)(fwht_log2(n) > 0 ? fwht_log2(n) : 1);
	int t;

	if (batch < 2 || work < FWHT_PAR_WORK || omp_in_parallel())
		return 1;
	t = omp_get_max_threads();
	if ((double)t > work / (FWHT_PAR_WORK / 2))
		t = (int)(work / (FWHT_PAR_WORK / 2));
	if (t > batch)
		t = (int)batch;
	return t > 1 ? t : 1;
#else
	(void)batch, (void)n;
	return 1;
#endif
}

int bnn_fwht_batch(float *x, long batch, long n, int norm, bnn_err *err)
{
	int rc = fwht_check("bnn_fwht_batch", x == NULL, batch, n, norm, err);
	const float c = fwht_scale(n, norm);
	int threads, t;

	if (rc)
		return rc;
	threads = fwht_threads(batch, n);
	if (threads <= 1) {
		fwht_run(x, batch, n, c);
		return BNN_OK;
	}
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static)
#endif
	for (t = 0; t < threads; t++) {
		const long b0 = batch * t / threads, b1 = batch * (t + 1) / threads;

		if (b1 > b0)
			fwht_run(x + b0 * n, b1 - b0, n, c);
	}
	return BNN_OK;
}

int bnn_fwht_ref(double *x, long n, int norm, bnn_err *err)
{
	int rc = fwht_check("bnn_fwht_ref", x == NULL, 1, n, norm, err);
	long h, i, j;

	if (rc)
		return rc;
	for (h = 1; h < n; h *= 2)
		for (i = 0; i < n; i += 2 * h)
			for (j = i; j < i + h; j++) {
				double a = x[j], b = x[j + h];

				x[j] = a + b;
				x[j + h] = a - b;
			}
	if (norm == BNN_FWHT_ORTHO) {
		double c = 1.0 / sqrt((double)n);

		for (i = 0; i < n; i++)
			x[i] *= c;
	}
	return BNN_OK;
}
