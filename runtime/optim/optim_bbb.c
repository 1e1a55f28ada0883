/*
 * optim_bbb.c: Bayes-by-Backprop (Blundell et al., "Weight uncertainty in
 * neural networks", ICML 2015), the classical mean-field baseline, as
 * fused loops over flat float arrays (bnn_variational.h).  Each weight has
 * a mean μ and a scale σ = softplus(ρ) = log(1 + e^ρ) (the paper's
 * parameterisation, section 3.2), both trained by Adam on the negative
 * ELBO divided by N:
 *
 *   loss = mean NLL + KL(q ‖ p)/N,
 *   KL   = ½·Σ [δσ² + δμ² − 1 − ln(δσ²)]      (prior N(0, I/δ))
 *
 * The NLL's gradients with respect to μ and σ come from the generated
 * pass (with the local reparameterisation trick for dense layers); the
 * KL's are added here in closed form:
 *
 *   ∂/∂μ = g_μ + δμ/N,   ∂/∂σ = g_σ + (δσ − 1/σ)/N,
 *   ∂/∂ρ = ∂/∂σ · sigmoid(ρ)   (d softplus/dρ = sigmoid)
 *
 * Adam is bnn_adam_step()'s rule and arithmetic (bias-corrected, PyTorch's
 * form, no weight decay: the KL is the regulariser).
 *
 * softplus and sigmoid need e^−|ρ| and log1p, which libm would compute one
 * element at a time (gcc vectorises expf and log1pf only under
 * -ffast-math); a loop of libm calls would cost more than the rest of the
 * step.  So, as rng.c does for the Gaussian sampler, they are our own
 * short branch-free approximations, which gcc vectorises (see
 * bbb_exp_reduce, bbb_exp_poly, bbb_log1p_u and bbb_softplus_u): relative
 * error below 1e-6 for ρ >= −87 (softplus: 2.9e-7 at worst over every
 * float in [−87, 30]).  Only + − × ÷ and
 * √ of IEEE floats, in ISO C without FMA contraction (simd_clones.h), so
 * the AVX-512, AVX2 and baseline versions compute the same bits.
 *
 * How the loop is organised, and why.  An element's update is one long
 * chain of dependent operations: e^−|ρ| (range reduction, a polynomial),
 * log1p (a division, a polynomial), the gradient of ρ (a division), two
 * Adam updates (square roots, divisions), then e^−|ρ| and log1p of the
 * new ρ, some 150 vector operations of which each waits for the last.
 * Written as one loop over chunks of 32 elements (optim_adam.c's shape),
 * one iteration was so long that the processor's out-of-order window held
 * only 2-3 vectors of it: the loop ran at the chain's latency, far slower
 * than Adam's step over as many parameters.  So
 * the elements go by blocks of BBB_BLOCK (128), and each block through
 * six short loops (bbb_block): e^−|ρ|; σ = softplus(ρ) (sampling); the
 * gradient and Adam on ρ; Adam on μ; e^−|ρ| of the new ρ; σ and the
 * sample.  Each loop's chain is short, so the processor overlaps many of
 * its iterations, and the block's e and σ wait in small arrays in the L1
 * cache.  The polynomials are evaluated by Estrin's scheme (shorter
 * chains than Horner's) and e^−|ρ| puts k into the exponent with an
 * integer addition.  This made the update and bnn_bbb_sigma (in four
 * loops over blocks of 512: it has fewer arrays to keep in the cache)
 * two to three times faster (docs/benchmarks.md, "Measurements behind
 * the optimizers and the trainer").  The loops are now limited by
 * the number of arithmetic operations, not by their latency: further
 * splitting (more stores to the small arrays) or larger blocks (the
 * block's slice of ten arrays no longer in L1) ran slower, and blocks
 * that do not divide 4096 leave a slower tail in every call.  A call's
 * last elements go by chunks of 32 and a last chunk padded to 32
 * (bbb_tail), vectorised too: several times faster than scalar loops in
 * short calls.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "bias_correction.h"
#include "bnn.h"
#include "bnn_bits.h"
#include "bnn_variational.h"
#include "kernels/simd_clones.h"
#include "flush_tiny.h"

/* Elements per vectorised chunk of the deterministic parameters' update
 * (Adam alone): 32, as in optim_adam.c, so that each iteration holds two
 * AVX-512 (four AVX2) vectors whose dependency chains overlap.  Also the
 * blocks of the variational update's last BBB_BLOCK − 1 elements. */
#define OPT_CHUNK 32

/* Elements per block of the variational update (bbb_block): small
 * enough that the block's slice of every array and the block's own
 * arrays of e and σ stay in the L1 cache between its loops (256 and 512
 * ran slower; 64 is too short for its loops to overlap), and a
 * divisor of BNN_SAMPLE_BLOCK, so that the trainer's calls have no
 * tail.  bnn_bbb_sigma's blocks: BBB_SIGMA_BLOCK. */
#ifndef BBB_BLOCK
#define BBB_BLOCK 128
#endif
/* bnn_bbb_sigma's blocks: two arrays and four loops of a few operations
 * each, so longer blocks pay (512 ran faster than 128). */
#ifndef BBB_SIGMA_BLOCK
#define BBB_SIGMA_BLOCK 512
#endif

/* The per-element update is too long for gcc's inlining limits, and the
 * loop only vectorises once it is inlined into each clone of the step. */
#if defined(__GNUC__)
#define BBB_INLINE static inline __attribute__((always_inline))
#else
#define BBB_INLINE static inline
#endif

bnn_bbb_params bnn_bbb_defaults(void)
{
	bnn_bbb_params p;

	p.beta1 = 0.9;
	p.beta2 = 0.999;
	p.eps = 1e-8;
	p.prior_precision = 0.0;
	p.n_data = 0.0;
	return p;
}

double bnn_softplus(double rho)
{
	/* log(1 + e^ρ) = max(ρ, 0) + log1p(e^−|ρ|): no overflow, and no
	 * cancellation for very negative ρ (softplus ≈ e^ρ there). */
	return rho > 0 ? rho + log1p(exp(-rho)) : log1p(exp(rho));
}

double bnn_softplus_inverse(double sigma)
{
	/* ρ = log(e^σ − 1); for large σ, σ + log(1 − e^−σ) avoids overflow. */
	if (sigma > 20)
		return sigma + log1p(-exp(-sigma));
	return log(expm1(sigma));
}

/*
 * e^−|r| in two stages (bnn_bbb_sigma runs them as two loops, the update
 * as one): bbb_exp_reduce gives x = −min(|r|, 87) − k·ln 2 and k,
 * bbb_exp_poly 2^k·e^x.  |r| is clamped
 * to 87 (e^−87 = 1.6e-38, just above the smallest normal float, so the
 * result is a normal float and softplus(ρ) never reaches 0); the clamp is
 * an unsigned minimum on the bits of −|r| (which order like the
 * magnitudes), not a float comparison: gcc turns a float select against
 * a constant into branches, and the loop would not vectorise.  NaN and
 * ±inf clamp to 87 too; the callers restore NaN.  k = round(x/ln 2), in
 * [−126, 0], comes from adding 1.5·2^23, which leaves k in the low bits
 * of the sum; x − k·ln 2 is computed in two parts (Cody and Waite:
 * 0.693359375 has few bits, so k times it is exact) and lies within
 * ±0.347.  kb = k·2^23 as bits (the shift drops the rest of the sum).
 */
BBB_INLINE float bbb_exp_reduce(float r, uint32_t *kb)
{
	uint32_t a = bnn_float_bits(r) | UINT32_C(0x80000000);
	float x, y, fk;

	a = a < UINT32_C(0xc2ae0000) ? a : UINT32_C(0xc2ae0000); /* −87.0f */
	x = bnn_bits_float(a);                                   /* −min(|r|, 87) */
	y = x * 1.44269504f + 12582912.0f;                       /* 1.5·2^23 + k */
	fk = y - 12582912.0f;
	*kb = bnn_float_bits(y) << 23;
	return (x - fk * 0.693359375f) + fk * 2.12194440e-4f;
}

/*
 * 2^k·e^x for bbb_exp_reduce's x and kb: e^x as 1 + x + x²·P(x), P of
 * degree 4 fitted to (e^x − 1 − x)/x² on [−0.347, 0.347] (Chebyshev
 * interpolation, mpmath's chebyfit: error below 8e-9 relative), by
 * Estrin's scheme (x² and the pairs in parallel: 7 operations deep
 * instead of Horner's 12), then k added to its exponent: exact, since
 * the result is a normal float.
 */
BBB_INLINE float bbb_exp_poly(float x, uint32_t kb)
{
	float x2 = x * x;
	float p = 0.5f + 1.66665765e-1f * x;
	float q = (4.16665540e-2f + 8.36325938e-3f * x) + x2 * 1.39262839e-3f;

	p = (1.0f + x) + x2 * (p + x2 * q);
	return bnn_bits_float(bnn_float_bits(p) + kb);
}

/*
 * log(1 + e) for e in [0, 1], in two stages: u = e/(2 + e) in [0, 1/3],
 * then log(1 + e) = 2·atanh(u) = u·(2 + w·R(w)), w = u² <= 1/9, R of
 * degree 3 fitted to (2·atanh(u)/u − 2)/w (the series 2/3 + 2w/5 +
 * 2w²/7 + ...; Chebyshev, error below 2e-8 relative), by Estrin's
 * scheme.  No cancellation for small e: the result keeps its relative
 * accuracy.  bbb_softplus_u adds max(ρ, 0): softplus(ρ) = max(ρ, 0) +
 * log1p(e^−|ρ|), with max(ρ, 0) written as ρ < 0 ? 0 : ρ, which is ρ
 * when ρ is NaN, so that NaN gives NaN.
 */
BBB_INLINE float bbb_log1p_u(float e)
{
	return e / (2.0f + e);
}

BBB_INLINE float bbb_softplus_u(float r, float u)
{
	float w = u * u;
	float q = (6.66666403e-1f + 4.00075606e-1f * w) +
	          (w * w) * (2.82366198e-1f + 2.68514980e-1f * w);

	return (r < 0.0f ? 0.0f : r) + u * (2.0f + w * q);
}

/* The per-call constants of the update. */
struct bbb_coef {
	float b1, rho1; /* β1, 1 − β1 */
	float b2, rho2; /* β2, 1 − β2 */
	float step;     /* α / (1 − β1^t) */
	float rbc2;     /* 1 / √(1 − β2^t) */
	float eps;      /* ε */
	float dn;       /* δ/N */
	float in;       /* 1/N */
};

/* One Adam update of w with gradient gr and moments m, v (optim_adam.c's
 * arithmetic without decay). */
BBB_INLINE float bbb_adam(float w, float gr, float *restrict m, float *restrict v, long i,
                          const struct bbb_coef *c)
{
	float mi = c->b1 * m[i] + c->rho1 * gr;
	float vi = c->b2 * v[i] + c->rho2 * gr * gr;

	m[i] = bnn_flush_tiny(mi);
	v[i] = bnn_flush_tiny(vi);
	return bnn_flush_tiny(w - c->step * mi / (sqrtf(vi) * c->rbc2 + c->eps));
}

/* A deterministic element: Adam on the MAP objective; sampling: θ ← μ. */
BBB_INLINE void bbb_point_one(long i, float *restrict mu, const float *restrict g_mu,
                              float *restrict m_mu, float *restrict v_mu, float *restrict theta,
                              const struct bbb_coef *c, int sampling)
{
	mu[i] = bbb_adam(mu[i], g_mu[i] + c->dn * mu[i], m_mu, v_mu, i, c);
	if (sampling)
		theta[i] = mu[i];
}

static void bbb_coef_init(struct bbb_coef *c, const bnn_bbb_params *p, float lr, long step)
{
	double t = step < 1 ? 1.0 : (double)step;

	c->b1 = (float)p->beta1;
	c->rho1 = (float)(1.0 - p->beta1);
	c->b2 = (float)p->beta2;
	c->rho2 = (float)(1.0 - p->beta2);
	c->step = (float)(lr / bnn_bias_correction(p->beta1, t));
	c->rbc2 = (float)(1.0 / sqrt(bnn_bias_correction(p->beta2, t)));
	c->eps = (float)p->eps;
	c->dn = (float)(p->prior_precision / p->n_data);
	c->in = (float)(1.0 / p->n_data);
}

/*
 * The update of len <= BBB_BLOCK elements (the arrays point at the
 * block's first), as six short loops over the block rather than one long
 * one (see the top of the file): 1. e = e^−|ρ|; 2. (sampling) σ =
 * softplus(ρ); 3. ∂/∂ρ and Adam on ρ; 4. Adam on μ; 5. e of the new ρ;
 * 6. σ = softplus(new ρ), stored (step) or used for the next sample.
 * sampling: the gradient with respect to σ is g_σ = g_μ·ε (one weight
 * sample θ = μ + σε, Blundell et al. section 3.2), σ is softplus(ρ)
 * recomputed rather than read, and afterwards θ ← μ + σ·noise and ε ←
 * noise, the next step's sample, with σ not stored.  The flag is a
 * literal at every call, so that each variant vectorises; so is len,
 * BBB_BLOCK or, at the end of a call, OPT_CHUNK (bbb_tail).
 */
BBB_INLINE void bbb_block(long len, float *restrict mu, float *restrict rho, float *restrict sigma,
                          const float *restrict g_mu, const float *restrict g_sigma,
                          float *restrict m_mu, float *restrict v_mu, float *restrict m_rho,
                          float *restrict v_rho, float *restrict eps, float *restrict theta,
                          const float *restrict noise, const struct bbb_coef *c, int sampling)
{
	float e[BBB_BLOCK], s[BBB_BLOCK];
	long k;

	for (k = 0; k < len; k++) {
		uint32_t kb;
		float x = bbb_exp_reduce(rho[k], &kb);

		e[k] = bbb_exp_poly(x, kb);
	}
	if (sampling)
		for (k = 0; k < len; k++)
			s[k] = bbb_softplus_u(rho[k], bbb_log1p_u(e[k]));
	for (k = 0; k < len; k++) {
		float r = rho[k], sk = sampling ? s[k] : sigma[k];
		float gs = sampling ? g_mu[k] * eps[k] : g_sigma[k];
		/* ∂/∂ρ = (g_σ + (δσ − 1/σ)/N) · sigmoid(ρ), sigmoid(ρ) =
		 * a/(1 + e) with a = 1 for ρ >= 0, e^ρ below; as one
		 * division: ((g_σ + δσ/N)·σ − 1/N) · (a / (σ·(1 + e))),
		 * where a/σ is about 1 even at ρ = −87 (the product of the
		 * first factor and a would underflow below ρ ≈ −76). */
		float a = r >= 0.0f ? 1.0f : e[k];
		float gr = ((gs + c->dn * sk) * sk - c->in) * (a / (sk * (1.0f + e[k])));

		rho[k] = bbb_adam(r, gr, m_rho, v_rho, k, c);
	}
	for (k = 0; k < len; k++) /* ∂/∂μ */
		mu[k] = bbb_adam(mu[k], g_mu[k] + c->dn * mu[k], m_mu, v_mu, k, c);
	for (k = 0; k < len; k++) {
		uint32_t kb;
		float x = bbb_exp_reduce(rho[k], &kb);

		e[k] = bbb_exp_poly(x, kb);
	}
	for (k = 0; k < len; k++) {
		float sk = bbb_softplus_u(rho[k], bbb_log1p_u(e[k]));

		if (!sampling) {
			sigma[k] = sk;
		} else {
			theta[k] = mu[k] + sk * noise[k];
			eps[k] = noise[k];
		}
	}
}

/*
 * The last len < OPT_CHUNK elements (sigma, g_sigma, eps, theta and noise
 * at offset i, the others already offset): gcc leaves bbb_block's loops
 * scalar when their length is not a constant, many times slower per
 * element, so they are copied into arrays of OPT_CHUNK, updated by the
 * same vectorised loops (the same operations, so the same bits) and
 * copied back.  The padding (zeros, and σ = 1) gives finite values.
 */
BBB_INLINE void bbb_tail(long len, float *restrict mu, float *restrict rho, float *restrict sigma,
                         const float *restrict g_mu, const float *restrict g_sigma,
                         float *restrict m_mu, float *restrict v_mu, float *restrict m_rho,
                         float *restrict v_rho, float *restrict eps, float *restrict theta,
                         const float *restrict noise, long i, const struct bbb_coef *c,
                         int sampling)
{
	enum {
		MU,
		RHO,
		SIG,
		GMU,
		GSIG,
		MMU,
		VMU,
		MRHO,
		VRHO,
		NOISE,
		NBUF
	};
	float b[NBUF][OPT_CHUNK];
	size_t sz = (size_t)len * sizeof(float);
	float *eb = b[GSIG], *tb = b[SIG]; /* sampling: ε, θ in their place */

	memset(b, 0, sizeof b);
	memcpy(b[MU], mu, sz);
	memcpy(b[RHO], rho, sz);
	memcpy(b[GMU], g_mu, sz);
	memcpy(b[MMU], m_mu, sz);
	memcpy(b[VMU], v_mu, sz);
	memcpy(b[MRHO], m_rho, sz);
	memcpy(b[VRHO], v_rho, sz);
	if (sampling) {
		memcpy(eb, eps + i, sz);
		memcpy(b[NOISE], noise + i, sz);
		bbb_block(OPT_CHUNK, b[MU], b[RHO], NULL, b[GMU], NULL, b[MMU], b[VMU], b[MRHO],
		          b[VRHO], eb, tb, b[NOISE], c, 1);
		memcpy(eps + i, eb, sz);
		memcpy(theta + i, tb, sz);
	} else {
		long k;

		for (k = len; k < OPT_CHUNK; k++)
			b[SIG][k] = 1.0f;
		memcpy(b[SIG], sigma + i, sz);
		memcpy(b[GSIG], g_sigma + i, sz);
		bbb_block(OPT_CHUNK, b[MU], b[RHO], b[SIG], b[GMU], b[GSIG], b[MMU], b[VMU],
		          b[MRHO], b[VRHO], NULL, NULL, NULL, c, 0);
		memcpy(sigma + i, b[SIG], sz);
	}
	memcpy(mu, b[MU], sz);
	memcpy(rho, b[RHO], sz);
	memcpy(m_mu, b[MMU], sz);
	memcpy(v_mu, b[VMU], sz);
	memcpy(m_rho, b[MRHO], sz);
	memcpy(v_rho, b[VRHO], sz);
}

/* The loops over n elements (always inlined into the cloned functions
 * below, so that they are compiled for each of their targets). */
BBB_INLINE void bbb_loop(long n, float *restrict mu, float *restrict rho, float *restrict sigma,
                         const float *restrict g_mu, const float *restrict g_sigma,
                         float *restrict m_mu, float *restrict v_mu, float *restrict m_rho,
                         float *restrict v_rho, float *restrict eps, float *restrict theta,
                         const float *restrict noise, const struct bbb_coef *c, int sampling)
{
	long i;
	int k;

	if (!rho) {
		for (i = 0; i + OPT_CHUNK <= n; i += OPT_CHUNK)
			for (k = 0; k < OPT_CHUNK; k++)
				bbb_point_one(i + k, mu, g_mu, m_mu, v_mu, theta, c, sampling);
		for (; i < n; i++)
			bbb_point_one(i, mu, g_mu, m_mu, v_mu, theta, c, sampling);
		return;
	}
#define BBB_ARGS(i)                                                                                \
	mu + (i), rho + (i), sampling ? NULL : sigma + (i), g_mu + (i),                            \
	        sampling ? NULL : g_sigma + (i), m_mu + (i), v_mu + (i), m_rho + (i), v_rho + (i), \
	        sampling ? eps + (i) : NULL, sampling ? theta + (i) : NULL,                        \
	        sampling ? noise + (i) : NULL, c, sampling
	for (i = 0; i + BBB_BLOCK <= n; i += BBB_BLOCK)
		bbb_block(BBB_BLOCK, BBB_ARGS(i));
	for (; i + OPT_CHUNK <= n; i += OPT_CHUNK) /* the rest: shorter */
		bbb_block(OPT_CHUNK, BBB_ARGS(i));
#undef BBB_ARGS
	if (i < n)
		bbb_tail(n - i, mu + i, rho + i, sigma, g_mu + i, g_sigma, m_mu + i, v_mu + i,
		         m_rho + i, v_rho + i, eps, theta, noise, i, c, sampling);
}

BNN_SIMD_CLONES static void bbb_step_kernel(long n, float *restrict mu, float *restrict rho,
                                            float *restrict sigma, const float *restrict g_mu,
                                            const float *restrict g_sigma, float *restrict m_mu,
                                            float *restrict v_mu, float *restrict m_rho,
                                            float *restrict v_rho, float lr, long step,
                                            const bnn_bbb_params *p)
{
	struct bbb_coef c;

	bbb_coef_init(&c, p, lr, step);
	bbb_loop(n, mu, rho, sigma, g_mu, g_sigma, m_mu, v_mu, m_rho, v_rho, NULL, NULL, NULL, &c,
	         0);
}

/* The public entry: unpacks the arrays for the kernel above, which keeps
 * scalar, restrict-qualified arguments so that its loop vectorises. */
void bnn_bbb_step(const bnn_bbb_arrays *a, float lr, long step, const bnn_bbb_params *p)
{
	bbb_step_kernel(a->n, a->mu, a->rho, a->sigma, a->g_mu, a->g_sigma, a->m_mu, a->v_mu,
	                a->m_rho, a->v_rho, lr, step, p);
}

BNN_SIMD_CLONES static void bbb_step_sample_kernel(long n, float *restrict mu, float *restrict rho,
                                                   const float *restrict g, float *restrict eps,
                                                   float *restrict m_mu, float *restrict v_mu,
                                                   float *restrict m_rho, float *restrict v_rho,
                                                   float *restrict theta,
                                                   const float *restrict noise, float lr, long step,
                                                   const bnn_bbb_params *p)
{
	struct bbb_coef c;

	bbb_coef_init(&c, p, lr, step);
	bbb_loop(n, mu, rho, NULL, g, NULL, m_mu, v_mu, m_rho, v_rho, eps, theta, noise, &c, 1);
}

/* The public entry: unpacks the arrays for the kernel above, which keeps
 * scalar, restrict-qualified arguments so that its loop vectorises. */
void bnn_bbb_step_sample(const bnn_bbb_arrays *a, float lr, long step, const bnn_bbb_params *p)
{
	bbb_step_sample_kernel(a->n, a->mu, a->rho, a->g_mu, a->eps, a->m_mu, a->v_mu, a->m_rho,
	                       a->v_rho, a->theta, a->noise, lr, step, p);
}

/* σ = softplus(ρ) block by block: the update's arithmetic, in four
 * loops (the two stages of e^−|ρ|, then of log1p). */
BBB_INLINE void bbb_sigma_block(long len, const float *restrict rho, float *restrict sigma)
{
	float e[BBB_SIGMA_BLOCK], t[BBB_SIGMA_BLOCK];
	uint32_t kb[BBB_SIGMA_BLOCK];
	long k;

	for (k = 0; k < len; k++)
		t[k] = bbb_exp_reduce(rho[k], &kb[k]);
	for (k = 0; k < len; k++)
		e[k] = bbb_exp_poly(t[k], kb[k]);
	for (k = 0; k < len; k++)
		t[k] = bbb_log1p_u(e[k]);
	for (k = 0; k < len; k++)
		sigma[k] = bbb_softplus_u(rho[k], t[k]);
}

BNN_SIMD_CLONES void bnn_bbb_sigma(long n, const float *restrict rho, float *restrict sigma)
{
	long i;

	for (i = 0; i + BBB_SIGMA_BLOCK <= n; i += BBB_SIGMA_BLOCK)
		bbb_sigma_block(BBB_SIGMA_BLOCK, rho + i, sigma + i);
	for (; i + OPT_CHUNK <= n; i += OPT_CHUNK)
		bbb_sigma_block(OPT_CHUNK, rho + i, sigma + i);
	if (i < n) { /* padded, as in bbb_tail */
		float r[OPT_CHUNK] = { 0 }, s[OPT_CHUNK];

		memcpy(r, rho + i, (size_t)(n - i) * sizeof *r);
		bbb_sigma_block(OPT_CHUNK, r, s);
		memcpy(sigma + i, s, (size_t)(n - i) * sizeof *s);
	}
}
