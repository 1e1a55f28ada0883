/*
 * gemm.c: bnn_sgemm, the library's single-precision matrix product, which
 * every float product of the generated code goes through (bnn_gen_gemm in
 * bnn_gen/gemm.h), and bnn_dgemm, the double one of the kernels' double
 * build (the gradient tests), which is cblas_dgemm: generated code calls
 * the BLAS only through these two, and never includes its header.  Also
 * bnn_stranspose and bnn_dtranspose, the transposes that lay out a
 * product's operands (the convolutions' images and deltas), which reuse
 * the packing's 16 x 16 AVX-512 transposes.
 *
 * Why our own.  How fast OpenBLAS runs depends on which of its kernel
 * sets it picks, by CPU detection or by the environment variable
 * OPENBLAS_CORETYPE: the same OpenBLAS on the same machine runs the
 * layers' products near the peak with its AVX-512 kernels and at a
 * fraction of it with the 256-bit Haswell ones, which an environment may
 * force.  Our kernel gives the generated code the same speed wherever it
 * runs, and measured a little faster than OpenBLAS's best (the figures:
 * docs/benchmarks.md, "Measurements behind the kernels").  On a CPU with
 * AVX-512F, bnn_sgemm runs the kernel below; anywhere else, and whenever
 * it is told to (BNN_GEMM=openblas), it calls cblas_sgemm, kept on one
 * thread.  See docs/training.md, "Matrix products".
 *
 * Threads.  A large product (BNN_GEMM_PAR_FLOPS, measured below) called
 * outside any active parallel region, with a team size above 1
 * (bnn_set_threads), is cut into blocks of whole rows or whole columns of
 * C, one per thread, each the serial product of its part: nothing is
 * summed across threads and nothing that sets a result's rounding (the
 * blocks of the inner dimension, the dot-product path) depends on the
 * parts, so C has the same bits for every thread count.  Columns are
 * preferred: a thread then packs only its own columns of op(B) when B is
 * transposed (the forward product X·Wᵀ), and duplicates only the packing
 * of A, which is shared by all of its columns.  OpenBLAS gets a fixed
 * number of parts (one call each) chosen by the shape alone, not one per
 * thread, since its rounding depends on the shape it is called on: this
 * keeps its results the same for every thread count too.  Measured, 2
 * threads against 1 on the 784->512 layer's products (forward, dW, dX)
 * on a loaded 2-vCPU machine: 1.94x, 1.91x, 1.99x at batch 128 and 1.84x,
 * 1.91x, 1.85x at batch 32 in the quietest run (1.6x-2.08x over eight);
 * the 13-50-50-1 network's products stay on one thread (1.00x).
 * How, and the other figures: docs/benchmarks.md, "Measurements behind
 * the kernels".
 *
 * The kernel is the usual Goto/BLIS scheme, in C with AVX-512 intrinsics:
 *
 *   for each block of NC columns of C                     (jc)
 *     for each block of at most KC of the inner dimension (pc)
 *       pack op(B)[pc.., jc..] into panels of NR = 32 columns, k-major
 *       for each block of MC rows of C                    (ic)
 *         pack op(A)[ic.., pc..] into panels of MR = 12 rows, k-major
 *         for each panel of B (jr), for each panel of A (ir):
 *           the micro-kernel: C[12 x 32] (+)= Apanel · Bpanel
 *
 * The micro-kernel keeps a 12 x 32 block of C in 24 zmm registers; per
 * step of k it loads 32 floats of B (two zmm) and broadcasts 12 of A into
 * 24 FMAs.  A B panel (KC x 32 floats, 24 KB) stays in L1 while the A
 * panels of the block stream past it from L2 (MC x KC floats, 144 KB).
 * The last panel of a block may be narrower: rows are a compile-time
 * constant of each instance (1 to 12), columns are masked.  KC splits the
 * inner dimension evenly (288 is two blocks of 144, not 256 + 32).
 * Alpha is applied when a block of C is written, beta·C0 on the first
 * block of the inner dimension only, where C0 is C or, for
 * bnn_sgemm_bias, a bias row added to every row; beta == 0 never reads
 * C0.
 *
 * Packing is skipped where the layout allows: when op(B) is B, its rows
 * are already k-major rows of 32 floats and the micro-kernel reads them
 * in place (only a last, narrower panel is packed, padded with zeros).
 * Packing B cost more than it saved on every shape measured (M = 10 to
 * 512); it matters most where few rows share a packed panel (the
 * convolutions' M = 32, N = 32).  A larger than BNN_GEMM_SMALL_A floats
 * is packed whatever its layout (op(A) = Aᵀ by copies of 12 contiguous
 * values a step of k, op(A) = A by transposes); a smaller op(A) = Aᵀ is
 * read in place, and so is a smaller op(A) = A that at most two panels
 * of B share: the reasons and figures are in bnn_gemm_blocked.  op(B) = Bᵀ is
 * packed by 16 x 16 AVX-512 and 8 x 8 AVX transposes, op(A) = A by
 * 8 x 8 and 4 x 8 ones; a B panel's rows are short
 * streams the hardware prefetcher misses, so the packing prefetches the
 * next rows itself (measured faster on X·Wᵀ).  A·Bᵀ with at most 24 columns
 * and K >= 32 (an output layer's forward product) takes dot products
 * along K instead, with no packing at all (bnn_gemm_dot).
 *
 * Memory.  The packed blocks live in thread-local static storage,
 * (MC·KC + KC·NC) floats = 540 KB per thread (part of each thread's
 * static TLS block, which glibc takes from the thread's stack mapping),
 * so nothing is allocated, and the threads of a product (or two user
 * threads) multiply at once, each in its own blocks.
 * Nothing here fails, allocates or prints.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bnn.h"
#include "bnn_gen/gemm.h"
#include "gemm_internal.h"

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && !defined(BNN_NO_AVX512_GEMM)
#define BNN_GEMM_HAVE_AVX512 1
#include <immintrin.h>
#else
#define BNN_GEMM_HAVE_AVX512 0
#endif

/* ---- dispatch --------------------------------------------------------- */

/* The path bnn_sgemm takes when the caller does not force one: 0 not yet
 * decided, else a BNN_GEMM_PATH_*.  Decided once (BNN_GEMM, the CPU);
 * two threads deciding at once decide the same. */
static atomic_int bnn_gemm_auto_path = 0;

int bnn_gemm_avx512_available(void)
{
#if BNN_GEMM_HAVE_AVX512
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") ? 1 : 0;
#else
	return 0;
#endif
}

int bnn_gemm_default_path(void)
{
	int path = atomic_load_explicit(&bnn_gemm_auto_path, memory_order_relaxed);

	if (path == 0) {
		const char *env = getenv("BNN_GEMM");

		if (env && strcmp(env, "openblas") == 0)
			path = BNN_GEMM_PATH_OPENBLAS;
		else
			path = bnn_gemm_avx512_available() ? BNN_GEMM_PATH_AVX512
			                                   : BNN_GEMM_PATH_OPENBLAS;
		atomic_store_explicit(&bnn_gemm_auto_path, path, memory_order_relaxed);
	}
	return path;
}

/* C = beta·C0 for an M x N block (beta == 0: zeros, C0 not read), in
 * float (bnn_gemm_scale) and double (bnn_gemm_scale_d); C0 is C itself
 * (c0 == c, ldc0 == ldc) or rows of their own (ldc0 = 0: one row for
 * every row of C, a bias). */
#define BNN_GEMM_SCALE(NAME, T)                                                          \
	static void NAME(long m, long n, T beta, const T *c0, long ldc0, T *c, long ldc) \
	{                                                                                \
		long i, j;                                                               \
                                                                                         \
		for (i = 0; i < m; i++) {                                                \
			const T *c0i = c0 + i * ldc0;                                    \
			T *ci = c + i * ldc;                                             \
                                                                                         \
			if (beta == 0)                                                   \
				memset(ci, 0, (size_t)n * sizeof *ci);                   \
			else if (beta != 1 || c0i != ci)                                 \
				for (j = 0; j < n; j++)                                  \
					ci[j] = beta * c0i[j];                           \
		}                                                                        \
	}
BNN_GEMM_SCALE(bnn_gemm_scale, float)
BNN_GEMM_SCALE(bnn_gemm_scale_d, double)

/* The mask epilogue (bnn_sgemm_relu_mask, a relu's backward) on an m x n
 * block of C, in float and double: c where y > 0, else 0, as the
 * generated code's relu backward picks (y the relu's output, at row
 * stride ldy).  With y = c it is the relu epilogue (bnn_sgemm_bias_relu):
 * c > 0 ? c : 0, so NaN and -0 give +0, as the generated code's relu
 * does. */
#define BNN_GEMM_MASK(NAME, T)                                                            \
	static void NAME(long m, long n, const T *y, long ldy, T *c, long ldc)            \
	{                                                                                 \
		long i, j;                                                                \
                                                                                          \
		for (i = 0; i < m; i++)                                                   \
			for (j = 0; j < n; j++)                                           \
				c[i * ldc + j] = y[i * ldy + j] > 0 ? c[i * ldc + j] : 0; \
	}
BNN_GEMM_MASK(bnn_gemm_mask, float)
BNN_GEMM_MASK(bnn_gemm_mask_d, double)

/* What the product does to each block of C as it writes it: nothing, the
 * relu (bnn_sgemm_bias_relu) or the mask of a relu's output y
 * (bnn_sgemm_relu_mask), y's rows those of C. */
typedef struct bnn_gemm_epilogue {
	int relu;
	const float *y;
	long ldy;
} bnn_gemm_epilogue;

static const bnn_gemm_epilogue bnn_gemm_no_epilogue = { 0, NULL, 0 };

/* The epilogue on the m x n block of C at c, rows and columns i0, j0 of
 * the product (the scalar one: OpenBLAS's parts, K = 0, the dot-product
 * tiles). */
static void bnn_gemm_epilogue_block(const bnn_gemm_epilogue *ep, long i0, long j0, long m, long n,
                                    float *c, long ldc)
{
	if (ep->y)
		bnn_gemm_mask(m, n, ep->y + i0 * ep->ldy + j0, ep->ldy, c, ldc);
	else if (ep->relu)
		bnn_gemm_mask(m, n, c, ldc, c, ldc);
}

static void bnn_gemm_openblas(int trans_a, int trans_b, long m, long n, long k, float alpha,
                              const float *a, long lda, const float *b, long ldb, float beta,
                              const float *c0, long ldc0, float *c, long ldc)
{
	if (beta != 0.0f && c0 != c) /* C0 into C first: BLAS adds beta·C */
		bnn_gemm_scale(m, n, 1.0f, c0, ldc0, c, ldc);
	cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
	            trans_b ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, alpha, a, (int)lda,
	            b, (int)ldb, beta, c, (int)ldc);
}

/* ---- the AVX-512 kernel ----------------------------------------------- */

#if BNN_GEMM_HAVE_AVX512

/* The register tile, fixed by the micro-kernel, and the cache blocks
 * (tuned on Zen 5: 48 KB L1d, 1 MB L2; -D overrides them for experiments,
 * within the TLS bound above). */
#define BNN_GEMM_MR 12 /* rows of a micro-tile (broadcasts of A) */
#define BNN_GEMM_NR 32 /* columns of a micro-tile (two zmm of B) */
#ifndef BNN_GEMM_KC
#define BNN_GEMM_KC 192 /* most of the inner dimension per block */
#endif
#ifndef BNN_GEMM_MC
#define BNN_GEMM_MC 192 /* rows of C per block (a multiple of MR) */
#endif
#ifndef BNN_GEMM_NC
#define BNN_GEMM_NC 512 /* columns of C per block (a multiple of NR) */
#endif

#ifndef BNN_GEMM_SMALL_A
#define BNN_GEMM_SMALL_A 32768 /* floats of op(A) read in place (128 KB) */
#endif
#ifndef BNN_GEMM_DOT_MAXN
#define BNN_GEMM_DOT_MAXN 24 /* A·Bᵀ with at most this many columns: dot products */
#endif

#define BNN_GEMM_TARGET __attribute__((target("avx512f,avx2,fma")))
#define BNN_GEMM_INLINE static inline __attribute__((always_inline)) BNN_GEMM_TARGET

/* The packed blocks of the calling thread. */
static _Thread_local float bnn_gemm_apack[BNN_GEMM_MC * BNN_GEMM_KC] __attribute__((aligned(64)));
static _Thread_local float bnn_gemm_bpack[BNN_GEMM_KC * BNN_GEMM_NC] __attribute__((aligned(64)));

/* Transpose an 8 x 8 block: dst[j][i] = src[i][j]. */
BNN_GEMM_INLINE void bnn_gemm_tr8(const float *src, long lds, float *dst, long ldd)
{
	__m256 r0 = _mm256_loadu_ps(src), r1 = _mm256_loadu_ps(src + lds);
	__m256 r2 = _mm256_loadu_ps(src + 2 * lds), r3 = _mm256_loadu_ps(src + 3 * lds);
	__m256 r4 = _mm256_loadu_ps(src + 4 * lds), r5 = _mm256_loadu_ps(src + 5 * lds);
	__m256 r6 = _mm256_loadu_ps(src + 6 * lds), r7 = _mm256_loadu_ps(src + 7 * lds);
	__m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
	__m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
	__m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
	__m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
	__m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
	__m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
	__m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee);
	__m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);

	_mm256_storeu_ps(dst, _mm256_permute2f128_ps(u0, u4, 0x20));
	_mm256_storeu_ps(dst + ldd, _mm256_permute2f128_ps(u1, u5, 0x20));
	_mm256_storeu_ps(dst + 2 * ldd, _mm256_permute2f128_ps(u2, u6, 0x20));
	_mm256_storeu_ps(dst + 3 * ldd, _mm256_permute2f128_ps(u3, u7, 0x20));
	_mm256_storeu_ps(dst + 4 * ldd, _mm256_permute2f128_ps(u0, u4, 0x31));
	_mm256_storeu_ps(dst + 5 * ldd, _mm256_permute2f128_ps(u1, u5, 0x31));
	_mm256_storeu_ps(dst + 6 * ldd, _mm256_permute2f128_ps(u2, u6, 0x31));
	_mm256_storeu_ps(dst + 7 * ldd, _mm256_permute2f128_ps(u3, u7, 0x31));
}

/* Transpose a 16 x 16 block: dst[j][i] = src[i][j].  After the first two
 * stages, u[4g + c] holds in its 128-bit lane L the rows 4g..4g+3 of
 * column 4L + c; the last two gather the four groups of each column. */
BNN_GEMM_INLINE void bnn_gemm_tr16(const float *src, long lds, float *dst, long ldd)
{
	__m512 r[16], u[16];
	int i, c;

#pragma GCC unroll 16
	for (i = 0; i < 16; i++)
		r[i] = _mm512_loadu_ps(src + i * lds);
#pragma GCC unroll 4
	for (i = 0; i < 4; i++) {
		const __m512 t0 = _mm512_unpacklo_ps(r[4 * i], r[4 * i + 1]);
		const __m512 t1 = _mm512_unpackhi_ps(r[4 * i], r[4 * i + 1]);
		const __m512 t2 = _mm512_unpacklo_ps(r[4 * i + 2], r[4 * i + 3]);
		const __m512 t3 = _mm512_unpackhi_ps(r[4 * i + 2], r[4 * i + 3]);

		u[4 * i] = _mm512_shuffle_ps(t0, t2, 0x44);
		u[4 * i + 1] = _mm512_shuffle_ps(t0, t2, 0xee);
		u[4 * i + 2] = _mm512_shuffle_ps(t1, t3, 0x44);
		u[4 * i + 3] = _mm512_shuffle_ps(t1, t3, 0xee);
	}
#pragma GCC unroll 4
	for (c = 0; c < 4; c++) {
		const __m512 v0 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88);
		const __m512 v1 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xdd);
		const __m512 w0 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88);
		const __m512 w1 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xdd);

		_mm512_storeu_ps(dst + c * ldd, _mm512_shuffle_f32x4(v0, w0, 0x88));
		_mm512_storeu_ps(dst + (4 + c) * ldd, _mm512_shuffle_f32x4(v1, w1, 0x88));
		_mm512_storeu_ps(dst + (8 + c) * ldd, _mm512_shuffle_f32x4(v0, w0, 0xdd));
		_mm512_storeu_ps(dst + (12 + c) * ldd, _mm512_shuffle_f32x4(v1, w1, 0xdd));
	}
}

/* Transpose a 4 x 8 block: dst[j][i] = src[i][j], i < 4, j < 8. */
BNN_GEMM_INLINE void bnn_gemm_tr4x8(const float *src, long lds, float *dst, long ldd)
{
	__m256 r0 = _mm256_loadu_ps(src), r1 = _mm256_loadu_ps(src + lds);
	__m256 r2 = _mm256_loadu_ps(src + 2 * lds), r3 = _mm256_loadu_ps(src + 3 * lds);
	__m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
	__m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
	__m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
	__m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);

	_mm_storeu_ps(dst, _mm256_castps256_ps128(u0));
	_mm_storeu_ps(dst + ldd, _mm256_castps256_ps128(u1));
	_mm_storeu_ps(dst + 2 * ldd, _mm256_castps256_ps128(u2));
	_mm_storeu_ps(dst + 3 * ldd, _mm256_castps256_ps128(u3));
	_mm_storeu_ps(dst + 4 * ldd, _mm256_extractf128_ps(u0, 1));
	_mm_storeu_ps(dst + 5 * ldd, _mm256_extractf128_ps(u1, 1));
	_mm_storeu_ps(dst + 6 * ldd, _mm256_extractf128_ps(u2, 1));
	_mm_storeu_ps(dst + 7 * ldd, _mm256_extractf128_ps(u3, 1));
}

/* Pack rows i0..i0+mr of op(A), inner indices p0..p0+kc, k-major:
 * dst[p·mr + r] = op(A)[i0 + r][p0 + p]. */
BNN_GEMM_INLINE void bnn_gemm_pack_a(int trans_a, const float *a, long lda, long i0, long p0,
                                     long mr, long kc, float *restrict dst)
{
	long p, r;

	if (trans_a) { /* op(A)[i][p] = a[p·lda + i]: rows of a are k-steps */
		const float *src = a + p0 * lda + i0;

		if (mr == BNN_GEMM_MR)
			for (p = 0; p < kc; p++) {
				_mm256_storeu_ps(dst + p * BNN_GEMM_MR,
				                 _mm256_loadu_ps(src + p * lda));
				_mm_storeu_ps(dst + p * BNN_GEMM_MR + 8,
				              _mm_loadu_ps(src + p * lda + 8));
			}
		else
			for (p = 0; p < kc; p++)
				for (r = 0; r < mr; r++)
					dst[p * mr + r] = src[p * lda + r];
		return;
	}
	/* op(A)[i][p] = a[i·lda + p]: transpose 8 x 8 blocks (rows 0-7) and
	 * 4 x 8 ones (rows 8-11) of a full panel; 8 x 8 blocks of rows 0-7
	 * and mr-8 to mr-1 (which overlap) of a panel of 9 to 11 rows; then
	 * the rest */
	{
		const float *src = a + i0 * lda + p0;
		const long k8 = mr >= 8 ? kc & ~7L : 0;

		/* one pass per block of rows: fewer row pointers to keep */
		for (p = 0; p < k8; p += 8)
			bnn_gemm_tr8(src + p, lda, dst + p * mr, mr);
		if (mr == 12)
			for (p = 0; p < k8; p += 8)
				bnn_gemm_tr4x8(src + 8 * lda + p, lda, dst + p * mr + 8, mr);
		else if (mr > 8)
			for (p = 0; p < k8; p += 8)
				bnn_gemm_tr8(src + (mr - 8) * lda + p, lda, dst + p * mr + mr - 8,
				             mr);
		for (r = 0; r < mr; r++)
			for (p = k8; p < kc; p++)
				dst[p * mr + r] = src[r * lda + p];
	}
}

/* Pack columns j0..j0+nr (nr <= NR) of op(B), inner indices p0..p0+kc,
 * k-major and padded with zeros to NR columns:
 * dst[p·NR + j] = op(B)[p0 + p][j0 + j]. */
BNN_GEMM_INLINE void bnn_gemm_pack_b(int trans_b, const float *b, long ldb, long p0, long j0,
                                     long nr, long kc, float *restrict dst)
{
	long p, j;

	if (!trans_b) { /* op(B)[p][j] = b[p·ldb + j] */
		const float *src = b + p0 * ldb + j0;
		__mmask16 m0 = (__mmask16)(nr >= 16 ? 0xffff : (1u << nr) - 1);
		__mmask16 m1 = (__mmask16)(nr >= 32 ? 0xffff : nr > 16 ? (1u << (nr - 16)) - 1 : 0);

		for (p = 0; p < kc; p++) {
			const float *s = src + p * ldb;

			_mm512_store_ps(dst + p * BNN_GEMM_NR, _mm512_maskz_loadu_ps(m0, s));
			_mm512_store_ps(dst + p * BNN_GEMM_NR + 16,
			                _mm512_maskz_loadu_ps(m1, s + 16));
		}
		return;
	}
	/* op(B)[p][j] = b[j·ldb + p]: transpose 8 x 8 blocks, then the rest */
	{
		const float *src = b + j0 * ldb + p0;
		const long j8 = nr & ~7L, k8 = kc & ~7L, j16 = nr & ~15L, k16 = kc & ~15L;

		/* 16 x 16 blocks, then 8 x 8 ones, then the rest */
		for (j = 0; j < j16; j += 16) {
			for (p = 0; p < k16; p += 16) {
				/* the next 16 rows (of this panel or the next), a line
				 * at a time: each row is a short stream that the
				 * hardware prefetcher does not pick up */
				int r;

				for (r = 0; r < 16; r++)
					_mm_prefetch((const char *)(src + (j + 16 + r) * ldb + p),
					             _MM_HINT_T0);
				bnn_gemm_tr16(src + j * ldb + p, ldb, dst + p * BNN_GEMM_NR + j,
				              BNN_GEMM_NR);
			}
			for (p = k16; p < k8; p += 8) {
				bnn_gemm_tr8(src + j * ldb + p, ldb, dst + p * BNN_GEMM_NR + j,
				             BNN_GEMM_NR);
				bnn_gemm_tr8(src + (j + 8) * ldb + p, ldb,
				             dst + p * BNN_GEMM_NR + j + 8, BNN_GEMM_NR);
			}
		}
		for (j = j16; j < j8; j += 8)
			for (p = 0; p < k8; p += 8)
				bnn_gemm_tr8(src + j * ldb + p, ldb, dst + p * BNN_GEMM_NR + j,
				             BNN_GEMM_NR);
		if (j8 < nr || k8 < kc || nr < BNN_GEMM_NR) {
			/* the columns past nr are zeros (two masked stores a row) */
			const __mmask16 z0 = (__mmask16)(nr >= 16 ? 0 : 0xffffu << nr);
			const __mmask16 z1 = (__mmask16)(nr >= 32   ? 0
			                                 : nr <= 16 ? 0xffff
			                                            : 0xffffu << (nr - 16));
			const __m512 zero = _mm512_setzero_ps();

			for (p = 0; p < kc; p++) {
				float *d = dst + p * BNN_GEMM_NR;

				for (j = p < k8 ? j8 : 0; j < nr; j++)
					d[j] = src[j * ldb + p];
				_mm512_mask_storeu_ps(d, z0, zero);
				_mm512_mask_storeu_ps(d + 16, z1, zero);
			}
		}
	}
}

/*
 * The micro-kernel: C[mr x (16 or 32)] = alpha·Ap·Bp + beta·C0, Ap an A
 * panel (kc x mr, k-major), Bp a B panel (kc x NR, k-major), C0 the same
 * block of C (c0 == c, ldc0 == ldc) or of other rows (ldc0 = 0: one row,
 * a bias, added to every row).  mr (1..12), wide (two zmm of columns,
 * or one) and rows are constants in each instance: with rows, Ap is rows
 * of A read in place, row i at ap + i·ar (op(A) = A unpacked, steps of k
 * 1 apart); else the values of a step of k are contiguous.  m0 and m1
 * mask the columns written (m1 unused unless wide).  beta == 0: C0 is not
 * read.
 */
BNN_GEMM_INLINE void bnn_gemm_micro(const int mr, const int wide, const int rows, long kc,
                                    const float *restrict ap, long as, long ar,
                                    const float *restrict bp, long bs, const float *c0, long ldc0,
                                    float *c, long ldc, float alpha, float beta, __mmask16 m0,
                                    __mmask16 m1)
{
	__m512 acc0[BNN_GEMM_MR], acc1[BNN_GEMM_MR];
	const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
	long p;
	int i;

#pragma GCC unroll 12
	for (i = 0; i < mr; i++) {
		acc0[i] = _mm512_setzero_ps();
		if (wide)
			acc1[i] = _mm512_setzero_ps();
	}
#pragma GCC unroll 2 /* a few percent faster than 1 or 4 */
	for (p = 0; p < kc; p++) {
		const __m512 b0 = _mm512_loadu_ps(bp);
		const __m512 b1 = wide ? _mm512_loadu_ps(bp + 16) : b0;

#pragma GCC unroll 12
		for (i = 0; i < mr; i++) {
			const __m512 av = _mm512_set1_ps(rows ? ap[i * ar] : ap[i]);

			acc0[i] = _mm512_fmadd_ps(av, b0, acc0[i]);
			if (wide)
				acc1[i] = _mm512_fmadd_ps(av, b1, acc1[i]);
		}
		ap += as;
		bp += bs;
	}
	if (beta == 0.0f) {
#pragma GCC unroll 12
		for (i = 0; i < mr; i++) {
			_mm512_mask_storeu_ps(c + i * ldc, m0, _mm512_mul_ps(va, acc0[i]));
			if (wide)
				_mm512_mask_storeu_ps(c + i * ldc + 16, m1,
				                      _mm512_mul_ps(va, acc1[i]));
		}
	} else {
#pragma GCC unroll 12
		for (i = 0; i < mr; i++) {
			float *ci = c + i * ldc;
			const float *c0i = c0 + i * ldc0;

			_mm512_mask_storeu_ps(
			        ci, m0,
			        _mm512_fmadd_ps(va, acc0[i],
			                        _mm512_mul_ps(vb, _mm512_maskz_loadu_ps(m0, c0i))));
			if (wide)
				_mm512_mask_storeu_ps(
				        ci + 16, m1,
				        _mm512_fmadd_ps(va, acc1[i],
				                        _mm512_mul_ps(vb, _mm512_maskz_loadu_ps(
				                                                  m1, c0i + 16))));
		}
	}
}

/* One instance per (mr, wide, rows): the tables below pick it. */
#define BNN_GEMM_MICRO_DEF(mr, w, r, name)                                                        \
	static BNN_GEMM_TARGET __attribute__((noinline)) void name##_##mr##_##w(                  \
	        long kc, const float *restrict ap, long as, long ar, const float *restrict bp,    \
	        long bs, const float *c0, long ldc0, float *c, long ldc, float alpha, float beta, \
	        __mmask16 m0, __mmask16 m1)                                                       \
	{                                                                                         \
		bnn_gemm_micro(mr, w, r, kc, ap, as, ar, bp, bs, c0, ldc0, c, ldc, alpha, beta,   \
		               m0, m1);                                                           \
	}
#define BNN_GEMM_MICRO_DEF2(mr)                           \
	BNN_GEMM_MICRO_DEF(mr, 0, 0, bnn_gemm_micro)      \
	BNN_GEMM_MICRO_DEF(mr, 1, 0, bnn_gemm_micro)      \
	BNN_GEMM_MICRO_DEF(mr, 0, 1, bnn_gemm_micro_rows) \
	BNN_GEMM_MICRO_DEF(mr, 1, 1, bnn_gemm_micro_rows)
BNN_GEMM_MICRO_DEF2(1)
BNN_GEMM_MICRO_DEF2(2)
BNN_GEMM_MICRO_DEF2(3)
BNN_GEMM_MICRO_DEF2(4)
BNN_GEMM_MICRO_DEF2(5)
BNN_GEMM_MICRO_DEF2(6)
BNN_GEMM_MICRO_DEF2(7)
BNN_GEMM_MICRO_DEF2(8)
BNN_GEMM_MICRO_DEF2(9)
BNN_GEMM_MICRO_DEF2(10)
BNN_GEMM_MICRO_DEF2(11)
BNN_GEMM_MICRO_DEF2(12)

typedef void (*bnn_gemm_micro_fn)(long, const float *restrict, long, long, const float *restrict,
                                  long, const float *, long, float *, long, float, float, __mmask16,
                                  __mmask16);

/* [rows][wide][mr - 1] */
#define BNN_GEMM_MICRO_ROW(name, w)                                                            \
	{                                                                                      \
		name##_1_##w, name##_2_##w, name##_3_##w, name##_4_##w, name##_5_##w,          \
		        name##_6_##w, name##_7_##w, name##_8_##w, name##_9_##w, name##_10_##w, \
		        name##_11_##w, name##_12_##w                                           \
	}
static const bnn_gemm_micro_fn bnn_gemm_micros[2][2][BNN_GEMM_MR] = {
	{ BNN_GEMM_MICRO_ROW(bnn_gemm_micro, 0), BNN_GEMM_MICRO_ROW(bnn_gemm_micro, 1) },
	{ BNN_GEMM_MICRO_ROW(bnn_gemm_micro_rows, 0), BNN_GEMM_MICRO_ROW(bnn_gemm_micro_rows, 1) },
};

/*
 * The dot-product kernel, for C = alpha·A·Bᵀ + beta·C with few columns
 * (an output layer's forward product: N is the number of classes or 1).
 * Both operands are then rows along the inner dimension, so no packing:
 * a tile of mr (<= 4) rows of A and nr (<= 4) rows of B keeps mr·nr
 * accumulators of 16 partial sums, and sums each at the end.
 */
BNN_GEMM_INLINE void bnn_gemm_dot(const int mr, const int nr, long k, const float *a, long lda,
                                  const float *b, long ldb, const float *c0, long ldc0, float *c,
                                  long ldc, float alpha, float beta)
{
	__m512 acc[4][4];
	const long k16 = k & ~15L;
	const __mmask16 tail = (__mmask16)((1u << (k - k16)) - 1);
	long p;
	int i, j;

#pragma GCC unroll 4
	for (i = 0; i < mr; i++)
#pragma GCC unroll 4
		for (j = 0; j < nr; j++)
			acc[i][j] = _mm512_setzero_ps();
	for (p = 0; p < k16; p += 16) {
		__m512 bv[4];

#pragma GCC unroll 4
		for (j = 0; j < nr; j++)
			bv[j] = _mm512_loadu_ps(b + j * ldb + p);
#pragma GCC unroll 4
		for (i = 0; i < mr; i++) {
			const __m512 av = _mm512_loadu_ps(a + i * lda + p);

#pragma GCC unroll 4
			for (j = 0; j < nr; j++)
				acc[i][j] = _mm512_fmadd_ps(av, bv[j], acc[i][j]);
		}
	}
	if (tail) {
		__m512 bv[4];

#pragma GCC unroll 4
		for (j = 0; j < nr; j++)
			bv[j] = _mm512_maskz_loadu_ps(tail, b + j * ldb + p);
#pragma GCC unroll 4
		for (i = 0; i < mr; i++) {
			const __m512 av = _mm512_maskz_loadu_ps(tail, a + i * lda + p);

#pragma GCC unroll 4
			for (j = 0; j < nr; j++)
				acc[i][j] = _mm512_fmadd_ps(av, bv[j], acc[i][j]);
		}
	}
#pragma GCC unroll 4
	for (i = 0; i < mr; i++)
#pragma GCC unroll 4
		for (j = 0; j < nr; j++) {
			const float s = alpha * _mm512_reduce_add_ps(acc[i][j]);

			c[i * ldc + j] = beta == 0.0f ? s : s + beta * c0[i * ldc0 + j];
		}
}

#define BNN_GEMM_DOT_DEF(mr, nr)                                                             \
	static BNN_GEMM_TARGET __attribute__((noinline)) void bnn_gemm_dot_##mr##_##nr(      \
	        long k, const float *a, long lda, const float *b, long ldb, const float *c0, \
	        long ldc0, float *c, long ldc, float alpha, float beta)                      \
	{                                                                                    \
		bnn_gemm_dot(mr, nr, k, a, lda, b, ldb, c0, ldc0, c, ldc, alpha, beta);      \
	}
#define BNN_GEMM_DOT_DEF4(mr)   \
	BNN_GEMM_DOT_DEF(mr, 1) \
	BNN_GEMM_DOT_DEF(mr, 2) BNN_GEMM_DOT_DEF(mr, 3) BNN_GEMM_DOT_DEF(mr, 4)
BNN_GEMM_DOT_DEF4(1)
BNN_GEMM_DOT_DEF4(2)
BNN_GEMM_DOT_DEF4(3)
BNN_GEMM_DOT_DEF4(4)

typedef void (*bnn_gemm_dot_fn)(long, const float *, long, const float *, long, const float *, long,
                                float *, long, float, float);

/* [mr - 1][nr - 1] */
static const bnn_gemm_dot_fn bnn_gemm_dots[4][4] = {
	{ bnn_gemm_dot_1_1, bnn_gemm_dot_1_2, bnn_gemm_dot_1_3, bnn_gemm_dot_1_4 },
	{ bnn_gemm_dot_2_1, bnn_gemm_dot_2_2, bnn_gemm_dot_2_3, bnn_gemm_dot_2_4 },
	{ bnn_gemm_dot_3_1, bnn_gemm_dot_3_2, bnn_gemm_dot_3_3, bnn_gemm_dot_3_4 },
	{ bnn_gemm_dot_4_1, bnn_gemm_dot_4_2, bnn_gemm_dot_4_3, bnn_gemm_dot_4_4 },
};

/* The dot-product path: C = alpha·A·Bᵀ + beta·C0, A M×K, B N×K as stored;
 * each tile through the epilogue as it is written. */
static void bnn_gemm_dots_nt(long m, long n, long k, float alpha, const float *a, long lda,
                             const float *b, long ldb, float beta, const float *c0, long ldc0,
                             float *c, long ldc, const bnn_gemm_epilogue *ep)
{
	long i, j;

	for (i = 0; i < m; i += 4) {
		const long mr = m - i < 4 ? m - i : 4;

		for (j = 0; j < n; j += 4) {
			const long nr = n - j < 4 ? n - j : 4;

			bnn_gemm_dots[mr - 1][nr - 1](k, a + i * lda, lda, b + j * ldb, ldb,
			                              c0 + i * ldc0 + j, ldc0, c + i * ldc + j, ldc,
			                              alpha, beta);
			bnn_gemm_epilogue_block(ep, i, j, mr, nr, c + i * ldc + j, ldc);
		}
	}
}

/* The relu epilogue on a micro-tile just written (mr rows, the columns of
 * masks m0 and m1), while it is in L1: max(c, +0), which gives +0 for NaN
 * and -0 (the second operand), as c > 0 ? c : 0 does. */
BNN_GEMM_INLINE void bnn_gemm_relu_tile(long mr, float *c, long ldc, __mmask16 m0, __mmask16 m1)
{
	const __m512 zero = _mm512_setzero_ps();
	long i;

	for (i = 0; i < mr; i++) {
		float *ci = c + i * ldc;

		_mm512_mask_storeu_ps(ci, m0, _mm512_max_ps(_mm512_maskz_loadu_ps(m0, ci), zero));
		if (m1)
			_mm512_mask_storeu_ps(
			        ci + 16, m1,
			        _mm512_max_ps(_mm512_maskz_loadu_ps(m1, ci + 16), zero));
	}
}

/* The mask epilogue on a micro-tile just written: c where y > 0, else +0
 * (a NaN in y compares false). */
BNN_GEMM_INLINE void bnn_gemm_mask_tile(long mr, float *c, long ldc, const float *y, long ldy,
                                        __mmask16 m0, __mmask16 m1)
{
	const __m512 zero = _mm512_setzero_ps();
	long i;

	for (i = 0; i < mr; i++) {
		float *ci = c + i * ldc;
		const float *yi = y + i * ldy;
		const __mmask16 k0 = _mm512_mask_cmp_ps_mask(m0, _mm512_maskz_loadu_ps(m0, yi),
		                                             zero, _CMP_GT_OQ);

		_mm512_mask_storeu_ps(ci, m0,
		                      _mm512_maskz_mov_ps(k0, _mm512_maskz_loadu_ps(m0, ci)));
		if (m1) {
			const __mmask16 k1 = _mm512_mask_cmp_ps_mask(
			        m1, _mm512_maskz_loadu_ps(m1, yi + 16), zero, _CMP_GT_OQ);

			_mm512_mask_storeu_ps(
			        ci + 16, m1,
			        _mm512_maskz_mov_ps(k1, _mm512_maskz_loadu_ps(m1, ci + 16)));
		}
	}
}

/* Split len into the fewest blocks of at most max, of equal size rounded
 * up to a multiple of unit; the size of the first block. */
static long bnn_gemm_split(long len, long max, long unit)
{
	long blocks = (len + max - 1) / max, size = (len + blocks - 1) / blocks;

	return (size + unit - 1) / unit * unit;
}

/* The blocked product (everything but the dot-product path) on the whole
 * of C or on one thread's part of it: the blocks of the inner dimension
 * (kcmax, the only blocking that changes a result's rounding) depend on K
 * alone, which no part changes, so every part gives the bits the whole
 * product would.  C0 (beta·C0) is read by the first block of the inner
 * dimension; the later ones add to C.  The last block of the inner
 * dimension passes each micro-tile through the epilogue (relu, or a
 * relu's mask) as it is written, where a pass over C after the product
 * would read it back from memory. */
static BNN_GEMM_TARGET void bnn_gemm_blocked(int trans_a, int trans_b, long m, long n, long k,
                                             float alpha, const float *a, long lda, const float *b,
                                             long ldb, float beta, const float *c0, long ldc0,
                                             float *c, long ldc, const bnn_gemm_epilogue *ep)
{
	float *const apack = bnn_gemm_apack, *const bpack = bnn_gemm_bpack;
	/* blocks of the inner dimension in 16s when B is transposed (16 x 16
	 * transposes) */
	const long kcmax = bnn_gemm_split(k, BNN_GEMM_KC, trans_b ? 16 : 1);
	const long mcmax = bnn_gemm_split(m, BNN_GEMM_MC, BNN_GEMM_MR);
	const long ncmax = bnn_gemm_split(n, BNN_GEMM_NC, BNN_GEMM_NR);
	/* B's rows are used in place, not packed, when they are rows of op(B)
	 * (all but a last, narrower panel): packing them cost more than it
	 * saved on every shape measured, M = 10 to 512 */
	const int direct_b = !trans_b;
	/* A's rows are columns of op(A) when it is transposed, and the
	 * micro-kernel reads them in place: a step of k broadcasts 12
	 * contiguous values.  But a large A inside a training step comes
	 * from outside the cache, and reading it in place at stride lda,
	 * once per panel of B, took longer than packing it once: 11-17% on
	 * the MLP's dW = Gᵀ·X (A 512 x 128, 1 and 2 threads), 17-20% on the
	 * transformer's 384 x 128 x 2048.  A smaller A (BNN_GEMM_SMALL_A
	 * floats, 128 KB, at most), or a single panel (M <= MR), is read in
	 * place: the convolutions' A (per-tap weights, or one example's
	 * deltas, which every tap reuses) stays in the cache, and packing it
	 * cost the 3 x 3 layer's dW (A 32 x 784) 15-20% and the conv1d
	 * layer's dX and dW about 10%.  op(A) = A, small and shared by at
	 * most two panels of B (the attention's per-head products), is read
	 * in place too, its rows by the micro-kernel's rows instances:
	 * packing its transposes was 40% of those products' time
	 * (docs/benchmarks.md). */
	const int small_a = m * k <= BNN_GEMM_SMALL_A;
	const int direct_a = trans_a && (m <= BNN_GEMM_MR || small_a);
	const int rows_a = !trans_a && small_a && n <= 2 * BNN_GEMM_NR;
	long jc, pc, ic, jr, ir;

	for (jc = 0; jc < n; jc += ncmax) {
		const long nc = n - jc < ncmax ? n - jc : ncmax;

		for (pc = 0; pc < k; pc += kcmax) {
			const long kc = k - pc < kcmax ? k - pc : kcmax;
			const float bet = pc == 0 ? beta : 1.0f;
			const int last = (ep->relu || ep->y) && pc + kc == k;

			for (jr = 0; jr < nc; jr += BNN_GEMM_NR) {
				const long nr = nc - jr < BNN_GEMM_NR ? nc - jr : BNN_GEMM_NR;

				if (!direct_b || nr < BNN_GEMM_NR)
					bnn_gemm_pack_b(trans_b, b, ldb, pc, jc + jr, nr, kc,
					                bpack + jr * kc);
			}
			for (ic = 0; ic < m; ic += mcmax) {
				const long mc = m - ic < mcmax ? m - ic : mcmax;

				if (!direct_a && !rows_a)
					for (ir = 0; ir < mc; ir += BNN_GEMM_MR) {
						const long mr = mc - ir < BNN_GEMM_MR ? mc - ir
						                                      : BNN_GEMM_MR;

						bnn_gemm_pack_a(trans_a, a, lda, ic + ir, pc, mr,
						                kc, apack + ir * kc);
					}
				for (jr = 0; jr < nc; jr += BNN_GEMM_NR) {
					const long nr =
					        nc - jr < BNN_GEMM_NR ? nc - jr : BNN_GEMM_NR;
					const int wide = nr > 16;
					const __mmask16 m0 =
					        (__mmask16)(nr >= 16 ? 0xffff : (1u << nr) - 1);
					const __mmask16 m1 =
					        (__mmask16)(nr >= 32  ? 0xffff
					                    : nr > 16 ? (1u << (nr - 16)) - 1
					                              : 0);

					const int direct = direct_b && nr == BNN_GEMM_NR;
					const float *bp =
					        direct ? b + pc * ldb + jc + jr : bpack + jr * kc;
					const long bs = direct ? ldb : BNN_GEMM_NR;

					for (ir = 0; ir < mc; ir += BNN_GEMM_MR) {
						const long mr = mc - ir < BNN_GEMM_MR ? mc - ir
						                                      : BNN_GEMM_MR;

						const float *ap = direct_a ? a + pc * lda + ic + ir
						                  : rows_a
						                          ? a + (ic + ir) * lda + pc
						                          : apack + ir * kc;
						const long as = direct_a ? lda : rows_a ? 1 : mr;

						float *cb = c + (ic + ir) * ldc + jc + jr;

						bnn_gemm_micros[rows_a][wide][mr - 1](
						        kc, ap, as, lda, bp, bs,
						        pc == 0 ? c0 + (ic + ir) * ldc0 + jc + jr
						                : cb,
						        pc == 0 ? ldc0 : ldc, cb, ldc, alpha, bet,
						        m0, m1);
						if (last && ep->y)
							bnn_gemm_mask_tile(
							        mr, cb, ldc,
							        ep->y + (ic + ir) * ep->ldy + jc +
							                jr,
							        ep->ldy, m0, m1);
						else if (last)
							bnn_gemm_relu_tile(mr, cb, ldc, m0, m1);
					}
				}
			}
		}
	}
}

/* b[j·ldb + i] = a[i·lda + j] for i < m16, j < n16 (multiples of 16), in
 * 16 x 16 blocks. */
static BNN_GEMM_TARGET void bnn_transpose_avx512(long m16, long n16, const float *a, long lda,
                                                 float *b, long ldb)
{
	long i, j;

	for (i = 0; i < m16; i += 16)
		for (j = 0; j < n16; j += 16)
			bnn_gemm_tr16(a + i * lda + j, lda, b + j * ldb + i, ldb);
}

#endif /* BNN_GEMM_HAVE_AVX512 */

/* ---- transposes ------------------------------------------------------------
 * b[j·ldb + i] = a[i·lda + j] over rows [i0, m) and columns [j0, n) of a,
 * in tiles of 16 x 16: a tile reads 16 rows of a and writes 16 of b, which
 * stay in L1, where a plain loop down a column of a reads a row per value
 * (rows 1 KB apart fall in a few sets of the cache, and miss it). */
#define BNN_TRANSPOSE_TILES(NAME, T)                                                             \
	static void NAME(long i0, long m, long j0, long n, const T *a, long lda, T *b, long ldb) \
	{                                                                                        \
		long ti, tj, i, j;                                                               \
                                                                                                 \
		for (ti = i0; ti < m; ti += 16)                                                  \
			for (tj = j0; tj < n; tj += 16) {                                        \
				const long ie = m - ti < 16 ? m : ti + 16;                       \
				const long je = n - tj < 16 ? n : tj + 16;                       \
                                                                                                 \
				for (i = ti; i < ie; i++)                                        \
					for (j = tj; j < je; j++)                                \
						b[j * ldb + i] = a[i * lda + j];                 \
			}                                                                        \
	}
BNN_TRANSPOSE_TILES(bnn_transpose_tiles, float)
BNN_TRANSPOSE_TILES(bnn_transpose_tiles_d, double)

void bnn_stranspose(long m, long n, const float *a, long lda, float *b, long ldb)
{
	long m16 = 0, n16 = 0;

#if BNN_GEMM_HAVE_AVX512
	if (bnn_gemm_avx512_available()) {
		m16 = m & ~15L;
		n16 = n & ~15L;
		bnn_transpose_avx512(m16, n16, a, lda, b, ldb);
	}
#endif
	bnn_transpose_tiles(0, m16, n16, n, a, lda, b, ldb); /* the last columns */
	bnn_transpose_tiles(m16, m, 0, n, a, lda, b, ldb);   /* the last rows */
}

void bnn_dtranspose(long m, long n, const double *a, long lda, double *b, long ldb)
{
	bnn_transpose_tiles_d(0, m, 0, n, a, lda, b, ldb);
}

/* ---- threads -------------------------------------------------------------- */

/*
 * A product of at least BNN_GEMM_PAR_FLOPS flops (2·M·N·K), called from
 * outside any active parallel region by a thread whose team size
 * (omp_get_max_threads, set by bnn_set_threads) is above 1, is cut into
 * parts of C, one per thread, each a block of whole rows or of whole
 * columns; every part is the serial product of its rows or columns.
 * Nothing is reduced across threads, and nothing a part computes depends
 * on where its boundaries fall (the inner dimension's blocks depend on K
 * alone, the dot-product path is chosen on the whole product's shape), so
 * C has the same bits for every thread count.  Smaller products stay on
 * the calling thread: a parallel region costs about 3 us to start and
 * end here.  Measured (2 threads against 1, every product forced onto 2,
 * the MLPs' transposes at batch 32): 0.4x at 0.26 Mflop, 0.8x-0.95x at
 * 1 Mflop, 1.03x-1.3x at 2.1 Mflop, 1.35x-1.5x at 4.2 Mflop; hence 3
 * Mflop (docs/benchmarks.md, "Measurements behind the kernels").
 */
#ifndef BNN_GEMM_PAR_FLOPS
#define BNN_GEMM_PAR_FLOPS 3e6
#endif
#define BNN_GEMM_ROWS_UNIT 12 /* the micro-kernel's rows (MR) */
#define BNN_GEMM_COLS_UNIT 32 /* the micro-kernel's columns (NR) */
#define BNN_GEMM_DOT_UNIT  4  /* the dot-product path's rows */
#ifndef BNN_GEMM_OPENBLAS_TILES
#define BNN_GEMM_OPENBLAS_TILES 6 /* balanced on 1, 2, 3 and 6 threads */
#endif

/* How C is cut: `parts` blocks of rows (by_cols 0) or of columns, with
 * boundaries at multiples of unit; dot: the dot-product path. */
typedef struct bnn_gemm_plan {
	int dot, by_cols, parts;
	long unit;
	const bnn_gemm_epilogue *ep; /* what C goes through as it is written */
} bnn_gemm_plan;

static double bnn_gemm_flops(long m, long n, long k)
{
	return 2.0 * (double)m * (double)n * (double)k;
}

int bnn_gemm_threads_for(long m, long n, long k)
{
#ifdef _OPENMP
	const double flops = bnn_gemm_flops(m, n, k);
	int t;

	if (m <= 0 || n <= 0 || k <= 0 || flops < BNN_GEMM_PAR_FLOPS || omp_in_parallel())
		return 1;
	t = omp_get_max_threads();
	/* no more threads than halves of the threshold: a product just above
	 * it gets 2, not 64 */
	if ((double)t > flops / (BNN_GEMM_PAR_FLOPS / 2))
		t = (int)(flops / (BNN_GEMM_PAR_FLOPS / 2));
	return t > 1 ? t : 1;
#else
	(void)m, (void)n, (void)k;
	return 1;
#endif
}

static long bnn_gemm_ceil(long x, long unit)
{
	return (x + unit - 1) / unit;
}

/* How C is cut for `threads` threads.  The AVX-512 path: one part per
 * thread.  OpenBLAS: BNN_GEMM_OPENBLAS_TILES parts whatever the thread
 * count, as soon as the product is above the threshold: OpenBLAS's
 * rounding depends on the shape it is given (measured: the halves of C
 * by two calls differ from one call's C), so parts that followed the
 * thread count would give different bits for different counts; fixed
 * parts give the same bits for every count (at the price of packing A
 * once per part where one call would pack it once).  Rows or columns: columns unless there
 * are fewer blocks of them than of rows and fewer than 8 (a thread
 * packs only its own columns of op(B) when it is transposed, and the
 * parts are balanced to within one block).  Rows wherever possible was
 * measured too: no better on the MLPs' products (the forward products
 * slower, 1.58x-1.73x against 1.71x-1.93x on 2 threads; dW = Gᵀ·X within
 * the noise). */
static bnn_gemm_plan bnn_gemm_plan_of(int path, int trans_a, int trans_b, long m, long n, long k,
                                      int threads)
{
	bnn_gemm_plan p;
	long units;

#if BNN_GEMM_HAVE_AVX512
	p.dot = path == BNN_GEMM_PATH_AVX512 && !trans_a && trans_b && n <= BNN_GEMM_DOT_MAXN &&
	        k >= 32;
#else
	(void)trans_a, (void)trans_b;
	p.dot = 0;
#endif
	if (p.dot) {
		p.by_cols = 0;
		p.unit = BNN_GEMM_DOT_UNIT;
	} else {
		const long cu = bnn_gemm_ceil(n, BNN_GEMM_COLS_UNIT);
		const long ru = bnn_gemm_ceil(m, BNN_GEMM_ROWS_UNIT);

		p.by_cols = cu >= ru || cu >= 8;
		p.unit = p.by_cols ? BNN_GEMM_COLS_UNIT : BNN_GEMM_ROWS_UNIT;
	}
	units = bnn_gemm_ceil(p.by_cols ? n : m, p.unit);
	if (path == BNN_GEMM_PATH_OPENBLAS)
		p.parts =
		        bnn_gemm_flops(m, n, k) < BNN_GEMM_PAR_FLOPS ? 1 : BNN_GEMM_OPENBLAS_TILES;
	else
		p.parts = threads;
	if (p.parts > units)
		p.parts = (int)units;
	return p;
}

/* The start of part t of len in parts: t·len/parts rounded to the
 * nearest multiple of unit (the parts differ by at most one unit). */
static long bnn_gemm_bound(long len, long unit, int parts, int t)
{
	long b;

	if (t >= parts)
		return len;
	b = ((long)t * len / parts + unit / 2) / unit * unit;
	return b < len ? b : len;
}

/* The product on rows [i0, i1) and columns [j0, j1) of C, serial. */
static void bnn_gemm_part(int path, const bnn_gemm_plan *p, int trans_a, int trans_b, long i0,
                          long i1, long j0, long j1, long k, float alpha, const float *a, long lda,
                          const float *b, long ldb, float beta, const float *c0, long ldc0,
                          float *c, long ldc)
{
	const float *ap = trans_a ? a + i0 : a + i0 * lda;
	const float *bp = trans_b ? b + j0 * ldb : b + j0;
	const float *c0p = c0 + i0 * ldc0 + j0;
	float *cp = c + i0 * ldc + j0;
	bnn_gemm_epilogue ep = *p->ep; /* its y at the part's origin */

	if (ep.y)
		ep.y += i0 * ep.ldy + j0;

#if BNN_GEMM_HAVE_AVX512
	if (path != BNN_GEMM_PATH_OPENBLAS) {
		if (p->dot)
			bnn_gemm_dots_nt(i1 - i0, j1 - j0, k, alpha, ap, lda, bp, ldb, beta, c0p,
			                 ldc0, cp, ldc, &ep);
		else
			bnn_gemm_blocked(trans_a, trans_b, i1 - i0, j1 - j0, k, alpha, ap, lda, bp,
			                 ldb, beta, c0p, ldc0, cp, ldc, &ep);
		return;
	}
#endif
	bnn_gemm_openblas(trans_a, trans_b, i1 - i0, j1 - j0, k, alpha, ap, lda, bp, ldb, beta, c0p,
	                  ldc0, cp, ldc);
	/* OpenBLAS has no epilogue: a pass over the part */
	bnn_gemm_epilogue_block(&ep, 0, 0, i1 - i0, j1 - j0, cp, ldc);
}

/* ---- the entry points --------------------------------------------------- */

/* C = alpha·op(A)·op(B) + beta·C0 by the given path, on as many threads
 * as bnn_gemm_threads_for says; C0 is C (c0 == c, ldc0 == ldc) or a bias
 * row (ldc0 = 0), read before C is written; C through epilogue ep as
 * it is written. */
static void bnn_sgemm_run(int path, int trans_a, int trans_b, long m, long n, long k, float alpha,
                          const float *a, long lda, const float *b, long ldb, float beta,
                          const float *c0, long ldc0, float *c, long ldc,
                          const bnn_gemm_epilogue *ep)
{
	bnn_gemm_plan p;
	int threads, t;

	if (m <= 0 || n <= 0)
		return;
	/* every path, OpenBLAS's too: BLAS does not read A and B when alpha
	 * = 0, but OpenBLAS 0.3.21's SkylakeX kernels do (0·NaN gives NaN) */
	if (k <= 0 || alpha == 0.0f) {
		bnn_gemm_scale(m, n, beta, c0, ldc0, c, ldc);
		bnn_gemm_epilogue_block(ep, 0, 0, m, n, c, ldc);
		return;
	}
	threads = bnn_gemm_threads_for(m, n, k);
	/* an OpenBLAS that runs its own threads (bnn_set_threads not called)
	 * is left to them: ours around it would oversubscribe the cores */
	if (path == BNN_GEMM_PATH_OPENBLAS && threads > 1 && openblas_get_num_threads() != 1)
		threads = 1;
	p = bnn_gemm_plan_of(path, trans_a, trans_b, m, n, k, threads);
	p.ep = ep;
	if (p.parts <= 1) {
		bnn_gemm_part(path, &p, trans_a, trans_b, 0, m, 0, n, k, alpha, a, lda, b, ldb,
		              beta, c0, ldc0, c, ldc);
		return;
	}
	/* contiguous runs of parts per thread (the OpenBLAS tiles: halves and
	 * thirds of C on 2 and 3 threads) */
	if (threads > p.parts)
		threads = p.parts;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
#endif
	for (t = 0; t < p.parts; t++) {
		const long len = p.by_cols ? n : m;
		const long lo = bnn_gemm_bound(len, p.unit, p.parts, t);
		const long hi = bnn_gemm_bound(len, p.unit, p.parts, t + 1);

		if (lo >= hi)
			continue;
		if (p.by_cols)
			bnn_gemm_part(path, &p, trans_a, trans_b, 0, m, lo, hi, k, alpha, a, lda, b,
			              ldb, beta, c0, ldc0, c, ldc);
		else
			bnn_gemm_part(path, &p, trans_a, trans_b, lo, hi, 0, n, k, alpha, a, lda, b,
			              ldb, beta, c0, ldc0, c, ldc);
	}
}

void bnn_sgemm_path(int path, int trans_a, int trans_b, long m, long n, long k, float alpha,
                    const float *a, long lda, const float *b, long ldb, float beta, float *c,
                    long ldc)
{
	bnn_sgemm_run(path, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, c, ldc,
	              &bnn_gemm_no_epilogue);
}

void bnn_sgemm_bias_path(int path, int trans_a, int trans_b, long m, long n, long k, float alpha,
                         const float *a, long lda, const float *b, long ldb, const float *bias,
                         float *c, long ldc, int relu)
{
	const bnn_gemm_epilogue ep = { relu, NULL, 0 };

	if (bias)
		bnn_sgemm_run(path, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, 1.0f, bias, 0,
		              c, ldc, &ep);
	else
		bnn_sgemm_run(path, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, 0.0f, c, ldc,
		              c, ldc, &ep);
}

void bnn_sgemm_relu_mask_path(int path, int trans_a, int trans_b, long m, long n, long k,
                              float alpha, const float *a, long lda, const float *b, long ldb,
                              const float *y, long ldy, float *c, long ldc)
{
	const bnn_gemm_epilogue ep = { 0, y, ldy };

	bnn_sgemm_run(path, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, 0.0f, c, ldc, c, ldc,
	              &ep);
}

void bnn_sgemm(int trans_a, int trans_b, long m, long n, long k, float alpha, const float *a,
               long lda, const float *b, long ldb, float beta, float *c, long ldc)
{
	bnn_sgemm_path(bnn_gemm_default_path(), trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb,
	               beta, c, ldc);
}

void bnn_sgemm_bias(int trans_a, int trans_b, long m, long n, long k, float alpha, const float *a,
                    long lda, const float *b, long ldb, const float *bias, float *c, long ldc)
{
	bnn_sgemm_bias_path(bnn_gemm_default_path(), trans_a, trans_b, m, n, k, alpha, a, lda, b,
	                    ldb, bias, c, ldc, 0);
}

void bnn_sgemm_bias_relu(int trans_a, int trans_b, long m, long n, long k, float alpha,
                         const float *a, long lda, const float *b, long ldb, const float *bias,
                         float *c, long ldc)
{
	bnn_sgemm_bias_path(bnn_gemm_default_path(), trans_a, trans_b, m, n, k, alpha, a, lda, b,
	                    ldb, bias, c, ldc, 1);
}

void bnn_sgemm_relu_mask(int trans_a, int trans_b, long m, long n, long k, float alpha,
                         const float *a, long lda, const float *b, long ldb, const float *y,
                         long ldy, float *c, long ldc)
{
	bnn_sgemm_relu_mask_path(bnn_gemm_default_path(), trans_a, trans_b, m, n, k, alpha, a, lda,
	                         b, ldb, y, ldy, c, ldc);
}

void bnn_dgemm(int trans_a, int trans_b, long m, long n, long k, double alpha, const double *a,
               long lda, const double *b, long ldb, double beta, double *c, long ldc)
{
	if (m <= 0 || n <= 0)
		return;
	if (k <= 0 || alpha == 0.0) { /* as bnn_sgemm_path: OpenBLAS may read A, B */
		bnn_gemm_scale_d(m, n, beta, c, ldc, c, ldc);
		return;
	}
	cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
	            trans_b ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, alpha, a, (int)lda,
	            b, (int)ldb, beta, c, (int)ldc);
}

void bnn_dgemm_bias(int trans_a, int trans_b, long m, long n, long k, double alpha, const double *a,
                    long lda, const double *b, long ldb, const double *bias, double *c, long ldc)
{
	if (m <= 0 || n <= 0)
		return;
	bnn_gemm_scale_d(m, n, 1.0, bias, 0, c, ldc);
	bnn_dgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, 1.0, c, ldc);
}

void bnn_dgemm_bias_relu(int trans_a, int trans_b, long m, long n, long k, double alpha,
                         const double *a, long lda, const double *b, long ldb, const double *bias,
                         double *c, long ldc)
{
	if (m <= 0 || n <= 0)
		return;
	if (bias)
		bnn_dgemm_bias(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, bias, c, ldc);
	else
		bnn_dgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, 0.0, c, ldc);
	bnn_gemm_mask_d(m, n, c, ldc, c, ldc);
}

void bnn_dgemm_relu_mask(int trans_a, int trans_b, long m, long n, long k, double alpha,
                         const double *a, long lda, const double *b, long ldb, const double *y,
                         long ldy, double *c, long ldc)
{
	if (m <= 0 || n <= 0)
		return;
	bnn_dgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, 0.0, c, ldc);
	bnn_gemm_mask_d(m, n, y, ldy, c, ldc);
}
