/*
 * posterior.c: utilities of the mean-field Gaussian posterior
 * N(μ, diag(σ²)) shared by the variational optimizers (bnn_variational.h):
 * drawing θ = μ + σ∘ε (VOGN Alg. 1 line 9, IVON Alg. 1 line 2, BADAM and
 * Bayes-by-Backprop at prediction time), the KL divergence to the prior
 * N(0, I/δ), the signal-to-noise ratio |μ|/σ and pruning by a score
 * (BADAM section 4: the weights with the lowest SNR are set to zero; with
 * |w| as the score, magnitude pruning).
 *
 * The sampler is fused block by block: ε is one bnn_rng_normal() call
 * over all n, drawn in pieces of BNN_SAMPLE_BLOCK floats (16 KiB, in L1;
 * bnn_rng_normal_next()), each turned into θ while still in cache, so the
 * noise costs one write (ε, when wanted) instead of a write and a read
 * from memory; the sampler's chunks (BNN_RNG_NORMAL_CHUNK) run in
 * parallel, each from its own lanes.  The KL sums its terms in double with a logarithm of our
 * own that gcc vectorises (see kl_log).  Pruning selects the k lowest
 * scores exactly by a radix selection on the scores' bits, without
 * sorting or allocating.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "bnn.h"
#include "bnn_bits.h"
#include "bnn_variational.h"
#include "kernels/simd_clones.h"

/* Elements per vectorised chunk (32: several vectors per iteration, whose
 * dependency chains overlap; see optim_vogn.c).  Also the number of
 * partial sums of the KL, so the KL's rounding depends on it. */
#define POST_CHUNK 32

/* ---- sampling ------------------------------------------------------------ */

/* θ = μ + σ·ε over one block. */
static inline void sample_block(long n, const float *restrict mu, const float *restrict sigma,
                                const float *restrict eps, float *restrict theta)
{
	long i;
	int k;

	for (i = 0; i + POST_CHUNK <= n; i += POST_CHUNK)
		for (k = 0; k < POST_CHUNK; k++)
			theta[i + k] = mu[i + k] + sigma[i + k] * eps[i + k];
	for (; i < n; i++)
		theta[i] = mu[i] + sigma[i] * eps[i];
}

/* From how many weights bnn_posterior_sample() splits its chunks across
 * threads: two of the sampler's chunks (see rng.c), as the updates. */
#define POST_PARALLEL_MIN (2 * BNN_RNG_NORMAL_CHUNK)

BNN_SIMD_CLONES void bnn_posterior_sample(long n, const float *restrict mu,
                                          const float *restrict sigma, float *restrict eps,
                                          float *restrict theta, bnn_rng *rng)
{
	bnn_rng_normal_stream noise;
	long c, nchunks = (n + BNN_RNG_NORMAL_CHUNK - 1) / BNN_RNG_NORMAL_CHUNK;

	/* VOGN Alg. 1 lines 8-9, IVON Alg. 1 line 2: θ = μ + σε, ε ~ N(0, I);
	 * each chunk of the sampler is drawn by a copy of the stream sought
	 * to it, so the split across threads changes no variate */
	bnn_rng_normal_begin(&noise, rng, n > 0 ? (size_t)n : 0);
#pragma omp parallel for schedule(static) if (n >= POST_PARALLEL_MIN)
	for (c = 0; c < nchunks; c++) {
		float buf[BNN_SAMPLE_BLOCK];
		bnn_rng_normal_stream s = noise;
		long i, stop = n - c * BNN_RNG_NORMAL_CHUNK < BNN_RNG_NORMAL_CHUNK
		                       ? n
		                       : (c + 1) * BNN_RNG_NORMAL_CHUNK;

		bnn_rng_normal_seek(&s, (size_t)(c * BNN_RNG_NORMAL_CHUNK));
		for (i = c * BNN_RNG_NORMAL_CHUNK; i < stop; i += BNN_SAMPLE_BLOCK) {
			long len = stop - i < BNN_SAMPLE_BLOCK ? stop - i : BNN_SAMPLE_BLOCK;
			float *e = eps ? eps + i : buf;

			bnn_rng_normal_next(&s, e, (size_t)len);
			sample_block(len, mu + i, sigma + i, e, theta + i);
		}
	}
}

/* ---- KL divergence ------------------------------------------------------- */

/*
 * ln x for x > 0 a float widened to double (so every float, subnormal
 * ones included, is a normal double).  x = 2^k·m with m in [√2/2, √2),
 * split from the bits by offsetting the exponent so that the boundary
 * falls at √2/2 (rng.c's split, in double).  Then
 * ln m = 2f·(1 + w/3 + w²/5 + ...), f = (m − 1)/(m + 1), w = f²,
 * |f| <= 0.1716, w <= 0.0295: the series to w¹⁰/21 leaves a truncation
 * error below 3e-18 relative, so the result is as good as double
 * arithmetic gives.  Integer and float operations only, no branch: gcc
 * vectorises it.  x = 0 gives a finite value (the caller's business).
 */
static inline double kl_log(double x)
{
	/* 0x3fe6a09e667f3bcd is √2/2 rounded to double. */
	uint64_t ix =
	        bnn_double_bits(x) + (UINT64_C(0x3ff0000000000000) - UINT64_C(0x3fe6a09e667f3bcd));
	double k = (double)((int32_t)(ix >> 52) - 1023);
	double m =
	        bnn_bits_double((ix & UINT64_C(0x000fffffffffffff)) + UINT64_C(0x3fe6a09e667f3bcd));
	double f = (m - 1.0) / (m + 1.0);
	double w = f * f;
	double q = 1.0 / 21;

	q = q * w + 1.0 / 19;
	q = q * w + 1.0 / 17;
	q = q * w + 1.0 / 15;
	q = q * w + 1.0 / 13;
	q = q * w + 1.0 / 11;
	q = q * w + 1.0 / 9;
	q = q * w + 1.0 / 7;
	q = q * w + 1.0 / 5;
	q = q * w + 1.0 / 3;
	q = q * w + 1.0;
	return k * 0.69314718055994530942 + 2.0 * f * q;
}

/* One term δσ² + δμ² − 1 − ln δ − 2 ln|σ|; σ = 0 gives +inf (a select
 * of constants, which does not stop the loop from vectorising). */
static inline double kl_term(float mu, float sigma, double delta, double log_delta)
{
	double s = (double)fabsf(sigma), m = (double)mu;
	double t = delta * s * s + delta * m * m - 1.0 - log_delta - 2.0 * kl_log(s);

	return t + (sigma == 0.0f ? INFINITY : 0.0);
}

BNN_SIMD_CLONES double bnn_kl_gaussian(long n, const float *restrict mu,
                                       const float *restrict sigma, double prior_precision)
{
	double acc[POST_CHUNK] = { 0 };
	double log_delta = log(prior_precision), sum = 0;
	long i;
	int k;

	/* ½Σ[δσ² + δμ² − 1 − ln(δσ²)]: KL(N(μ, σ²) ‖ N(0, 1/δ)) per weight.
	 * POST_CHUNK partial sums, so that the loop vectorises without
	 * reassociating (the sum does not depend on the vector width). */
	for (i = 0; i + POST_CHUNK <= n; i += POST_CHUNK)
		for (k = 0; k < POST_CHUNK; k++)
			acc[k] += kl_term(mu[i + k], sigma[i + k], prior_precision, log_delta);
	for (; i < n; i++)
		sum += kl_term(mu[i], sigma[i], prior_precision, log_delta);
	for (k = 0; k < POST_CHUNK; k++)
		sum += acc[k];
	return 0.5 * sum;
}

/* ---- signal-to-noise ratio ----------------------------------------------- */

BNN_SIMD_CLONES void bnn_snr(long n, const float *restrict mu, const float *restrict sigma,
                             float *restrict out)
{
	long i;
	int k;

	/* BADAM section 4: |μ|/σ */
	for (i = 0; i + POST_CHUNK <= n; i += POST_CHUNK)
		for (k = 0; k < POST_CHUNK; k++)
			out[i + k] = fabsf(mu[i + k]) / sigma[i + k];
	for (; i < n; i++)
		out[i] = fabsf(mu[i]) / sigma[i];
}

/* ---- pruning ------------------------------------------------------------- */

/*
 * An unsigned key that orders like the score: NaN lowest (0), then −inf,
 * the negative numbers, ±0 (one key), the positive numbers and +inf.
 * Positive floats order like their bits; negative ones in reverse, so
 * their bits are complemented, and the sign bit of positives is set to put
 * them above.
 */
static uint32_t prune_key(const float *w, const float *score, long i)
{
	float x = score ? score[i] : fabsf(w[i]);
	uint32_t u;

	if (x != x)
		return 0;
	if (x == 0.0f)
		x = 0.0f; /* −0 and +0 are one key */
	u = bnn_float_bits(x);
	return (u & UINT32_C(0x80000000)) ? ~u : u | UINT32_C(0x80000000);
}

/* The digits of the radix selection, from the top: 11, 11 and 10 bits. */
static const int prune_shift[3] = { 21, 10, 0 };
static const int prune_width[3] = { 11, 11, 10 };

long bnn_prune_by_score(long n, float *w, const float *score, double fraction)
{
	long hist[1 << 11];
	uint32_t prefix = 0, mask = 0;
	long k, rank, taken = 0, i;
	double kf;
	int pass;

	if (n <= 0)
		return 0;
	if (!(fraction > 0))
		return 0; /* also NaN */
	if (fraction > 1)
		fraction = 1;
	/* ⌊fraction·n⌋, with 10⁻⁶ to absorb the rounding of the product */
	kf = floor(fraction * (double)n + 1e-6);
	k = kf >= (double)n ? n : (long)kf;
	if (k == 0)
		return 0;
	if (k == n) {
		for (i = 0; i < n; i++)
			w[i] = 0.0f;
		return n;
	}

	/* Find t, the key of the k-th lowest score, digit by digit: each
	 * pass counts, among the keys that share the digits found so far,
	 * how many have each value of the next digit.  rank is the rank of
	 * t within that group (1-based): the keys below the group, and in it
	 * those below t, number k - rank. */
	rank = k;
	for (pass = 0; pass < 3; pass++) {
		int sh = prune_shift[pass];
		uint32_t nb = UINT32_C(1) << prune_width[pass];
		uint32_t b;
		long below = 0;

		memset(hist, 0, nb * sizeof hist[0]);
		for (i = 0; i < n; i++) {
			uint32_t key = prune_key(w, score, i);

			if ((key & mask) == prefix)
				hist[(key >> sh) & (nb - 1)]++;
		}
		for (b = 0; below + hist[b] < rank; b++)
			below += hist[b];
		rank -= below;
		prefix |= b << sh;
		mask |= (nb - 1) << sh;
	}

	/* Zero every key below t (k - rank of them) and the first `rank` keys
	 * equal to it (the lower indices: ties broken by index). */
	for (i = 0; i < n; i++) {
		uint32_t key = prune_key(w, score, i);

		if (key < prefix || (key == prefix && taken++ < rank))
			w[i] = 0.0f;
	}
	return k;
}
