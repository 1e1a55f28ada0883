/*
 * optim_bbb.c: Bayes-by-Backprop (Blundell et al., "Weight uncertainty in
 * neural networks", ICML 2015), the classical mean-field baseline, as one
 * fused loop over flat float arrays (bnn_variational.h).  Each weight has
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
 * bbb_exp_negabs and bbb_log1p): relative error below 1e-6 for ρ >= −87.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "bnn.h"
#include "bnn_variational.h"
#include "simd_clones.h"

/* Elements per vectorised chunk: 32, as in optim_adam.c, so that each
 * iteration holds two AVX-512 (four AVX2) vectors whose long dependency
 * chains overlap; on 670k parameters this halves the step's time. */
#define OPT_CHUNK 32

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

static inline uint32_t bbb_float_bits(float x)
{
	uint32_t u;

	memcpy(&u, &x, sizeof u);
	return u;
}

static inline float bbb_bits_float(uint32_t u)
{
	float x;

	memcpy(&x, &u, sizeof x);
	return x;
}

/*
 * e^−|r|, as 2^k·e^x with x = −|r|: |r| is first clamped to 87 (e^−87 =
 * 1.6e-38, just above the smallest normal float, so 2^k is a normal float
 * and softplus(ρ) never reaches 0), k = round(x/ln 2), x − k·ln 2 in two
 * parts (Cody and Waite: 0.693359375 has few bits, so k times it is
 * exact), within ±0.35, and its exponential by the Taylor polynomial of
 * degree 7 (truncation error 5.4e-9 relative).  2^k is put together from
 * its bits.  The clamp is an unsigned minimum on the bits of |r| (which
 * order like the values), not a float comparison: gcc turns a float
 * select against a constant into branches, and the loop would not
 * vectorise.  NaN and ±inf clamp to 87 too; the callers restore NaN.
 */
BBB_INLINE float bbb_exp_negabs(float r)
{
	uint32_t a = bbb_float_bits(r) & UINT32_C(0x7fffffff);
	float x, y, fk, p;
	int32_t k;

	a = a < UINT32_C(0x42ae0000) ? a : UINT32_C(0x42ae0000); /* 87.0f */
	x = -bbb_bits_float(a);
	y = x * 1.44269504f - 0.5f;             /* x/ln 2 − ½, in [−126, −½] */
	k = (int32_t)y;                         /* truncated: round(x/ln 2) */
	fk = (float)k;
	x = (x - fk * 0.693359375f) + fk * 2.12194440e-4f;
	p = 1.98412698e-4f;                     /* 1/7! */
	p = p * x + 1.38888889e-3f;             /* 1/6! */
	p = p * x + 8.33333333e-3f;             /* 1/5! */
	p = p * x + 4.16666667e-2f;             /* 1/4! */
	p = p * x + 1.66666667e-1f;             /* 1/3! */
	p = p * x + 0.5f;
	p = p * x + 1.0f;
	p = p * x + 1.0f;
	return p * bbb_bits_float((uint32_t)(k + 127) << 23);
}

/*
 * log(1 + e) for e in [0, 1]: with u = e/(2 + e) in [0, 1/3],
 * log(1 + e) = 2·atanh(u) = 2u·(1 + w/3 + w²/5 + ... ), w = u² <= 1/9;
 * the series to w⁶/13 leaves a truncation error below 1.4e-8 relative.
 * No cancellation for small e: the result keeps its relative accuracy.
 */
BBB_INLINE float bbb_log1p(float e)
{
	float u = e / (2.0f + e);
	float w = u * u;
	float q = 1.0f / 13.0f;

	q = q * w + 1.0f / 11.0f;
	q = q * w + 1.0f / 9.0f;
	q = q * w + 1.0f / 7.0f;
	q = q * w + 1.0f / 5.0f;
	q = q * w + 1.0f / 3.0f;
	q = q * w + 1.0f;
	return 2.0f * u * q;
}

/* softplus(ρ) = max(ρ, 0) + log1p(e^−|ρ|); NaN gives NaN (the last
 * term, a select of constants). */
BBB_INLINE float bbb_softplus(float r)
{
	float e = bbb_exp_negabs(r);

	return (r > 0.0f ? r : 0.0f) + bbb_log1p(e) + (r != r ? NAN : 0.0f);
}

/* The per-call constants of the update. */
struct bbb_coef {
	float b1, rho1;  /* β1, 1 − β1 */
	float b2, rho2;  /* β2, 1 − β2 */
	float step;      /* α / (1 − β1^t) */
	float rbc2;      /* 1 / √(1 − β2^t) */
	float eps;       /* ε */
	float dn;        /* δ/N */
	float in;        /* 1/N */
};

/* One Adam update of w with gradient gr and moments m, v (optim_adam.c's
 * arithmetic without decay). */
BBB_INLINE float bbb_adam(float w, float gr, float *restrict m,
                             float *restrict v, long i,
                             const struct bbb_coef *c)
{
	float mi = c->b1 * m[i] + c->rho1 * gr;
	float vi = c->b2 * v[i] + c->rho2 * gr * gr;

	m[i] = mi;
	v[i] = vi;
	return w - c->step * mi / (sqrtf(vi) * c->rbc2 + c->eps);
}

/*
 * One element of the update.  sampling: the gradient with respect to σ
 * is g_σ = g_μ·ε (one weight sample θ = μ + σε, Blundell et al. section
 * 3.2), σ is softplus(ρ) recomputed rather than read, and afterwards
 * θ ← μ + σ·noise and ε ← noise, the next step's sample, with σ not
 * stored.  The flag is a literal at every call, so that each variant
 * vectorises.
 */
BBB_INLINE void bbb_one(long i, float *restrict mu, float *restrict rho,
                        float *restrict sigma,
                        const float *restrict g_mu,
                        const float *restrict g_sigma,
                        float *restrict m_mu, float *restrict v_mu,
                        float *restrict m_rho, float *restrict v_rho,
                        float *restrict eps, float *restrict theta,
                        const float *restrict noise,
                        const struct bbb_coef *c, int sampling)
{
	float r = rho[i], s = sampling ? bbb_softplus(r) : sigma[i];
	float gs = sampling ? g_mu[i] * eps[i] : g_sigma[i];
	float e = bbb_exp_negabs(r);
	float gm = g_mu[i] + c->dn * mu[i];                  /* ∂/∂μ */
	/* ∂/∂ρ = (g_σ + (δσ − 1/σ)/N) · sigmoid(ρ), sigmoid(ρ) = a/(1 + e)
	 * with a = 1 for ρ >= 0, e^ρ below; as one division:
	 * ((g_σ + δσ/N)·σ − 1/N) · a / (σ·(1 + e)). */
	float a = r >= 0.0f ? 1.0f : e;
	float gr = ((gs + c->dn * s) * s - c->in) * a / (s * (1.0f + e));
	float mi = bbb_adam(mu[i], gm, m_mu, v_mu, i, c);

	mu[i] = mi;
	r = bbb_adam(r, gr, m_rho, v_rho, i, c);
	rho[i] = r;
	s = bbb_softplus(r);
	if (!sampling) {
		sigma[i] = s;
	} else {
		theta[i] = mi + s * noise[i];
		eps[i] = noise[i];
	}
}

/* A deterministic element: Adam on the MAP objective; sampling: θ ← μ. */
BBB_INLINE void bbb_point_one(long i, float *restrict mu,
                              const float *restrict g_mu,
                              float *restrict m_mu, float *restrict v_mu,
                              float *restrict theta,
                              const struct bbb_coef *c, int sampling)
{
	mu[i] = bbb_adam(mu[i], g_mu[i] + c->dn * mu[i], m_mu, v_mu, i, c);
	if (sampling)
		theta[i] = mu[i];
}

static void bbb_coef_init(struct bbb_coef *c, const bnn_bbb_params *p,
                          float lr, long step)
{
	double t = step < 1 ? 1.0 : (double)step;

	c->b1 = (float)p->beta1;
	c->rho1 = (float)(1.0 - p->beta1);
	c->b2 = (float)p->beta2;
	c->rho2 = (float)(1.0 - p->beta2);
	c->step = (float)(lr / (1.0 - pow(p->beta1, t)));
	c->rbc2 = (float)(1.0 / sqrt(1.0 - pow(p->beta2, t)));
	c->eps = (float)p->eps;
	c->dn = (float)(p->prior_precision / p->n_data);
	c->in = (float)(1.0 / p->n_data);
}

/* The loops over n elements (always inlined into the cloned functions
 * below, so that they are compiled for each of their targets). */
BBB_INLINE void bbb_loop(long n, float *restrict mu, float *restrict rho,
                         float *restrict sigma, const float *restrict g_mu,
                         const float *restrict g_sigma,
                         float *restrict m_mu, float *restrict v_mu,
                         float *restrict m_rho, float *restrict v_rho,
                         float *restrict eps, float *restrict theta,
                         const float *restrict noise,
                         const struct bbb_coef *c, int sampling)
{
	long i;
	int k;

	if (!rho) {
		for (i = 0; i + OPT_CHUNK <= n; i += OPT_CHUNK)
			for (k = 0; k < OPT_CHUNK; k++)
				bbb_point_one(i + k, mu, g_mu, m_mu, v_mu, theta,
				              c, sampling);
		for (; i < n; i++)
			bbb_point_one(i, mu, g_mu, m_mu, v_mu, theta, c,
			              sampling);
		return;
	}
	for (i = 0; i + OPT_CHUNK <= n; i += OPT_CHUNK)
		for (k = 0; k < OPT_CHUNK; k++)
			bbb_one(i + k, mu, rho, sigma, g_mu, g_sigma, m_mu,
			        v_mu, m_rho, v_rho, eps, theta, noise, c,
			        sampling);
	for (; i < n; i++)
		bbb_one(i, mu, rho, sigma, g_mu, g_sigma, m_mu, v_mu, m_rho,
		        v_rho, eps, theta, noise, c, sampling);
}

BNN_SIMD_CLONES void bnn_bbb_step(long n, float *restrict mu,
                                  float *restrict rho, float *restrict sigma,
                                  const float *restrict g_mu,
                                  const float *restrict g_sigma,
                                  float *restrict m_mu, float *restrict v_mu,
                                  float *restrict m_rho,
                                  float *restrict v_rho, float lr, long step,
                                  const bnn_bbb_params *p)
{
	struct bbb_coef c;

	bbb_coef_init(&c, p, lr, step);
	bbb_loop(n, mu, rho, sigma, g_mu, g_sigma, m_mu, v_mu, m_rho, v_rho,
	         NULL, NULL, NULL, &c, 0);
}

BNN_SIMD_CLONES void bnn_bbb_step_sample(long n, float *restrict mu,
                                         float *restrict rho,
                                         const float *restrict g,
                                         float *restrict eps,
                                         float *restrict m_mu,
                                         float *restrict v_mu,
                                         float *restrict m_rho,
                                         float *restrict v_rho,
                                         float *restrict theta,
                                         const float *restrict noise,
                                         float lr, long step,
                                         const bnn_bbb_params *p)
{
	struct bbb_coef c;

	bbb_coef_init(&c, p, lr, step);
	bbb_loop(n, mu, rho, NULL, g, NULL, m_mu, v_mu, m_rho, v_rho, eps,
	         theta, noise, &c, 1);
}

BNN_SIMD_CLONES void bnn_bbb_sigma(long n, const float *restrict rho,
                                   float *restrict sigma)
{
	long i;
	int k;

	for (i = 0; i + OPT_CHUNK <= n; i += OPT_CHUNK)
		for (k = 0; k < OPT_CHUNK; k++)
			sigma[i + k] = bbb_softplus(rho[i + k]);
	for (; i < n; i++)
		sigma[i] = bbb_softplus(rho[i]);
}
