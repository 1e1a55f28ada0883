/*
 * sqgrad_bf16.c: VOGN's squared per-example gradients of a dense layer,
 * B·(G∘G)ᵀ·(X∘X) (bnn_gen_dense_sqgrad in bnn_gen/dense.h), as a product of
 * bfloat16 squares accumulated in float, on CPUs with AVX512-BF16 (AMD
 * Zen 4 and later, Intel Cooper Lake and Sapphire Rapids and later).
 *
 * Why.  The product has as many multiply-adds as the layer's weight
 * gradient, so in float it adds a large share to a VOGN step on a
 * 784-512-512-10 network (VOGN, appendix B).  VDPBF16PS does twice the
 * multiply-adds of a float FMA per instruction (and measured close to
 * twice the float FMA rate: docs/benchmarks.md, "Measurements behind the
 * kernels").  The squares only feed the curvature
 * estimate s (VOGN, Alg. 1 line 20), a Monte-Carlo estimate from one
 * weight sample and one minibatch: rounding each square to 8 significant
 * bits (relative error at most 2^-8) and each product therefore by at
 * most 2^-7, with sums of non-negative terms in float, changes it by
 * less than 0.8%, far below its sampling noise.  The weight gradient
 * itself, and everything else, stays in float (the bias's squares are
 * bnn_gen_dense_sqgrad's own float loop, either way).
 *
 * How.  The reduction runs over the batch, in pairs of examples: a
 * 32-bit word holds the bfloat16 squares of one value for examples b and
 * b + 1 (VDPBF16PS multiplies such pairs and adds both products to a
 * float lane).  X's squares are packed column block by column block into
 * x2, G's into g2 (the workspace the float path uses as scratch, which
 * always has room: a pair of bfloat16 takes the space of one float), then
 * a register tile of 8 rows of sw by 48 columns (24 accumulators) runs
 * over the pairs.  An odd batch gets a zero partner for its last example.
 * A product of at least 4 Mflop runs on the calling thread's team
 * (bnn_set_threads): the packing of X split by blocks of columns, that of
 * G by pairs, the tiles by tiles, each tile summing over every pair
 * itself, so sw has the same bits for every thread count.
 *
 * bnn_sqgrad_bf16 does the work and returns 1 when the CPU has AVX512-BF16
 * and the environment variable BNN_SQGRAD is not "float"; otherwise it
 * returns 0 and the caller computes in float.  Nothing is allocated.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "bnn_gen/dense.h"

#if defined(__GNUC__) && defined(__x86_64__) && !defined(BNN_NO_SIMD_CLONES)
#define SQ_HAVE_BF16 1
#else
#define SQ_HAVE_BF16 0
#endif

/* The register tile: SQ_MR rows of sw by SQ_NV vectors of 16 columns. */
#define SQ_MR 8
#define SQ_NV 3
#define SQ_NR (16 * SQ_NV)

#if SQ_HAVE_BF16
#include <immintrin.h>

#define SQ_TARGET __attribute__((target("avx512f,avx512bw,avx512bf16")))

/* The bfloat16 of float bits u, rounded to nearest even, in the top half
 * of each 32-bit lane (the squares are never NaN). */
SQ_TARGET static inline __m512i sq_round_bf16(__m512i u)
{
	__m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));

	return _mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
}

/* Words (a_j² in the low half, b_j² in the high half) of 16 values; the
 * masked-off lanes read nothing and give zeros. */
SQ_TARGET static inline __m512i sq_pair(const float *a, const float *b, __mmask16 m)
{
	__m512 x = _mm512_maskz_loadu_ps(m, a);
	__m512 y = b ? _mm512_maskz_loadu_ps(m, b) : _mm512_setzero_ps();
	__m512i lo = sq_round_bf16(_mm512_castps_si512(_mm512_mul_ps(x, x)));
	__m512i hi = sq_round_bf16(_mm512_castps_si512(_mm512_mul_ps(y, y)));

	return _mm512_or_si512(_mm512_srli_epi32(lo, 16),
	                       _mm512_and_si512(hi, _mm512_set1_epi32((int)0xffff0000u)));
}

static __mmask16 sq_mask(long cols)
{
	return cols >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << cols) - 1);
}

/*
 * Pack the squares of rows b and b + 1 of the batch×w matrix a into
 * out: w words per pair, in blocks of SQ_NR columns (pair p of the block
 * starting at column c at out + c·P + p·width(block), P the number of
 * pairs), so that the tile reads a block's pairs one after the other.
 * This packs the block of columns starting at c.  Reads a before out
 * overwrites it only when out is not a: the caller packs x into x2, g
 * into g2.
 */
SQ_TARGET static void sq_pack_block(long batch, long w, const float *a, uint32_t *out, long c)
{
	long pairs = (batch + 1) / 2, p, v;
	long cw = w - c < SQ_NR ? w - c : SQ_NR;
	uint32_t *blk = out + c * pairs;

	for (p = 0; p < pairs; p++) {
		const float *r0 = a + 2 * p * w + c;
		const float *r1 = 2 * p + 1 < batch ? r0 + w : NULL;
		for (v = 0; v < cw; v += 16) {
			__mmask16 m = sq_mask(cw - v);
			_mm512_mask_storeu_epi32(blk + p * cw + v, m,
			                         sq_pair(r0 + v, r1 ? r1 + v : NULL, m));
		}
	}
}

/* G's squares, packed as pairs of examples per row of sw: row o's word
 * for pair p at out[p·n + o], so the tile's SQ_MR rows sit together.
 * This packs pair p. */
SQ_TARGET static void sq_pack_pair(long batch, long n, const float *g, uint32_t *out, long p)
{
	const float *r0 = g + 2 * p * n;
	const float *r1 = 2 * p + 1 < batch ? r0 + n : NULL;
	long o;

	for (o = 0; o < n; o += 16) {
		__mmask16 m = sq_mask(n - o);
		_mm512_mask_storeu_epi32(out + p * n + o, m,
		                         sq_pair(r0 + o, r1 ? r1 + o : NULL, m));
	}
}

/* Loops over a tile's rows and vectors, unrolled completely where their
 * bounds are constants, so that the accumulators stay in registers (clang
 * does that by itself, and warns about the pragma on the edge tiles'
 * variable bounds). */
#if defined(__clang__)
#define SQ_UNROLL
#else
#define SQ_UNROLL _Pragma("GCC unroll 8")
#endif

/*
 * sw[o][c..c+cw) = scale·Σ_p gp[p][o]·xb[p][..] for rows o0..o0+mr,
 * mr <= SQ_MR, cw <= SQ_NR.  Called with literal mr and cw for full tiles,
 * so that every loop below unrolls.
 */
SQ_TARGET __attribute__((always_inline)) static inline void sq_tile(long pairs, long n, long k,
                                                                    const uint32_t *gp,
                                                                    const uint32_t *xb, long cw,
                                                                    long o0, int mr, float scale,
                                                                    float *sw, long c)
{
	__m512 acc[SQ_MR][SQ_NV];
	int r, v, nv = (int)((cw + 15) / 16);
	long p;

	SQ_UNROLL for (r = 0; r < mr; r++) SQ_UNROLL for (v = 0; v < nv; v++) acc[r][v] =
	        _mm512_setzero_ps();
	for (p = 0; p < pairs; p++) {
		__m512i b[SQ_NV] = { _mm512_setzero_si512() };
		SQ_UNROLL for (v = 0; v < nv; v++) b[v] =
		        _mm512_maskz_loadu_epi32(sq_mask(cw - 16 * v), xb + p * cw + 16 * v);
		SQ_UNROLL for (r = 0; r < mr; r++)
		{
			__m512i a = _mm512_set1_epi32((int)gp[p * n + o0 + r]);
			SQ_UNROLL for (v = 0; v < nv; v++) acc[r][v] =
			        _mm512_dpbf16_ps(acc[r][v], (__m512bh)a, (__m512bh)b[v]);
		}
	}
	SQ_UNROLL for (r = 0; r < mr; r++) SQ_UNROLL for (v = 0; v < nv; v++)
	        _mm512_mask_storeu_ps(sw + (o0 + r) * k + c + 16 * v, sq_mask(cw - 16 * v),
	                              _mm512_mul_ps(acc[r][v], _mm512_set1_ps(scale)));
}

SQ_TARGET static void sq_full_tile(long pairs, long n, long k, const uint32_t *gp,
                                   const uint32_t *xb, long o0, float scale, float *sw, long c)
{
	sq_tile(pairs, n, k, gp, xb, SQ_NR, o0, SQ_MR, scale, sw, c);
}

SQ_TARGET static void sq_edge_tile(long pairs, long n, long k, const uint32_t *gp,
                                   const uint32_t *xb, long cw, long o0, int mr, float scale,
                                   float *sw, long c)
{
	sq_tile(pairs, n, k, gp, xb, cw, o0, mr, scale, sw, c);
}

/* The tile `tile` of sw, counted along the rows of sw (blocks of SQ_MR)
 * within each block of SQ_NR columns, the blocks of columns in turn:
 * consecutive tiles share the packed columns of X they read. */
SQ_TARGET static void sq_tile_at(long batch, long k, long n, const uint32_t *xp, const uint32_t *gp,
                                 float *sw, long tile)
{
	const long pairs = (batch + 1) / 2, rows = (n + SQ_MR - 1) / SQ_MR;
	const long c = tile / rows * SQ_NR, o = tile % rows * SQ_MR;
	const long cw = k - c < SQ_NR ? k - c : SQ_NR;
	const int mr = n - o < SQ_MR ? (int)(n - o) : SQ_MR;
	const uint32_t *xb = xp + c * pairs;

	if (mr == SQ_MR && cw == SQ_NR)
		sq_full_tile(pairs, n, k, gp, xb, o, (float)batch, sw, c);
	else
		sq_edge_tile(pairs, n, k, gp, xb, cw, o, mr, (float)batch, sw, c);
}

/*
 * The product on `threads` threads (1: the calling one).  Every phase is
 * split by outputs: the packing of X by blocks of columns, that of G by
 * pairs of examples, the tiles by tiles; a tile sums over all pairs
 * itself, so sw has the same bits for every thread count.
 */
static void sq_run(long batch, long k, long n, const float *x, const float *g, float *sw, float *x2,
                   float *g2, int threads)
{
	const long pairs = (batch + 1) / 2, cblocks = (k + SQ_NR - 1) / SQ_NR;
	const long tiles = cblocks * ((n + SQ_MR - 1) / SQ_MR);
	uint32_t *xp = (uint32_t *)(void *)x2, *gp = (uint32_t *)(void *)g2;
	long i;

#ifdef _OPENMP
#pragma omp parallel num_threads(threads) if (threads > 1)
#else
	(void)threads;
#endif
	{
		/* the packings of X and G are independent: no barrier between */
#ifdef _OPENMP
#pragma omp for schedule(static) nowait
#endif
		for (i = 0; i < cblocks; i++)
			sq_pack_block(batch, k, x, xp, i * SQ_NR);
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
		for (i = 0; i < pairs; i++)
			sq_pack_pair(batch, n, g, gp, i);
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
		/* after the barrier at the end of the loop above: every tile
		 * reads all of both packings */
		for (i = 0; i < tiles; i++)
			sq_tile_at(batch, k, n, xp, gp, sw, i);
	}
}

/*
 * The number of threads a product of batch·k·n pairs of multiply-adds
 * runs on: the team size (bnn_set_threads) outside any active parallel
 * region, for products of at least SQ_PAR_FLOPS flops (2·batch·k·n), with
 * at least half that per thread; else 1.  Measured (2 threads against 1,
 * forced onto 2, batch 32 and 64): 0.6x-0.8x up to 1 Mflop, 0.92x at 2.1
 * Mflop, 1.11x at 4.2 Mflop, 1.18x at 8.4 Mflop (docs/benchmarks.md,
 * "Measurements behind the kernels").
 */
#ifndef SQ_PAR_FLOPS
#define SQ_PAR_FLOPS 4e6
#endif

static int sq_threads(long batch, long k, long n)
{
#ifdef _OPENMP
	const double flops = 2.0 * (double)batch * (double)k * (double)n;
	int t;

	if (flops < SQ_PAR_FLOPS || omp_in_parallel())
		return 1;
	t = omp_get_max_threads();
	if ((double)t > flops / (SQ_PAR_FLOPS / 2))
		t = (int)(flops / (SQ_PAR_FLOPS / 2));
	return t > 1 ? t : 1;
#else
	(void)batch, (void)k, (void)n;
	return 1;
#endif
}

/* 1: use the bfloat16 kernel; -1: do not (no AVX512-BF16, or
 * BNN_SQGRAD=float); 0: not decided yet. */
static int sq_mode;

static int sq_enabled(void)
{
	int mode = __atomic_load_n(&sq_mode, __ATOMIC_RELAXED);

	if (mode == 0) {
		const char *env = getenv("BNN_SQGRAD");
		__builtin_cpu_init();
		mode = __builtin_cpu_supports("avx512bf16") && !(env && strcmp(env, "float") == 0)
		               ? 1
		               : -1;
		__atomic_store_n(&sq_mode, mode, __ATOMIC_RELAXED);
	}
	return mode > 0;
}
#endif /* SQ_HAVE_BF16 */

int bnn_sqgrad_bf16(long batch, long k, long n, const float *x, const float *g, float *sw,
                    float *x2, float *g2)
{
#if SQ_HAVE_BF16
	if (batch < 1 || !sq_enabled())
		return 0;
	sq_run(batch, k, n, x, g, sw, x2, g2, sq_threads(batch, k, n));
	return 1;
#else
	(void)batch, (void)k, (void)n, (void)x, (void)g, (void)sw, (void)x2, (void)g2;
	return 0;
#endif
}
