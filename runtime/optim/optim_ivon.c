/*
 * optim_ivon.c: the Improved Variational Online Newton optimizer (IVON) of
 * Shen et al., "Variational learning is effective for large deep
 * networks", ICML 2024, Algorithm 1, as fused loops over flat float arrays
 * (bnn_variational.h).  It fits a mean-field Gaussian N(m, diag(σ²)) with
 * σ² = 1/(λ(h + δ)), where h is a moving average of the reparameterisation
 * Hessian estimate ĥ = ĝ·(θ − m)/σ² (eq. 3), kept valid by the Riemannian
 * correction of eq. 4 (Lin et al., 2020), λ the effective sample size and
 * δ the weight decay, which plays the prior precision per example.  Unlike
 * VOGN it needs no per-example gradients: one sample's ĝ and its noise ε
 * give ĥ = ĝ·ε/σ.
 *
 * With K MC samples per step, the trainer draws θ = m + σε (Alg. 1 line
 * 2, posterior.c), takes ĝ at θ, accumulates ĥ with bnn_ivon_hess_acc()
 * (line 3) and calls bnn_ivon_step() (lines 4-8) once per parameter
 * tensor.  With one sample, bnn_ivon_step_sample() does lines 3-8 and the
 * next step's line 2 in one loop: ĥ = ĝ·(θ − m)/σ² from the sample
 * itself, then θ ← m + σε with noise the caller drew, so neither ε nor σ
 * is stored and each array is read and written once per step.  The
 * paper's optional rescaling α ← (h0 + δ)α is the trainer's.  Per-call
 * constants are computed in double and rounded to float once (β2 close to
 * 1: ρ = 1 − β2 is computed in double, so 1 − 10⁻⁶ keeps its value); the
 * loops are float and vectorised as in optim_adam.c.
 */
#include <math.h>

#include "bias_correction.h"
#include "bnn.h"
#include "bnn_variational.h"
#include "kernels/simd_clones.h"
#include "flush_tiny.h"

/* Elements per vectorised chunk: 32, so that each iteration holds two
 * AVX-512 (four AVX2) vectors whose long dependency chains overlap; on
 * 670k parameters this halves the step's time against 8. */
#define OPT_CHUNK 32

bnn_ivon_params bnn_ivon_defaults(void)
{
	bnn_ivon_params p;

	p.beta1 = 0.9;
	p.beta2 = 0.99999;
	p.h0 = 0.1;
	p.delta = 0.0;
	p.ess = 0.0;
	p.clip_radius = 0.0;
	return p;
}

/* ĥ = g·ε/σ (eq. 3 with θ − m = σε), scaled; accumulate selects (+)=. */
static inline void hess_one(long i, const float *restrict g, const float *restrict eps,
                            const float *restrict sigma, float *restrict hhat, float scale,
                            int accumulate)
{
	float v = scale * g[i] * eps[i] / sigma[i];

	hhat[i] = accumulate ? hhat[i] + v : v;
}

BNN_SIMD_CLONES void bnn_ivon_hess_acc(long n, const float *restrict g, const float *restrict eps,
                                       const float *restrict sigma, float *restrict hhat,
                                       float scale, int accumulate)
{
	long i;
	int k;

	/* IVON, Alg. 1 line 3 (eq. 3), averaged over samples as in sec. 3;
	 * one loop per value of accumulate, as in bnn_ivon_step() */
	if (accumulate) {
		for (i = 0; i + OPT_CHUNK <= n; i += OPT_CHUNK)
			for (k = 0; k < OPT_CHUNK; k++)
				hess_one(i + k, g, eps, sigma, hhat, scale, 1);
		for (; i < n; i++)
			hess_one(i, g, eps, sigma, hhat, scale, 1);
	} else {
		for (i = 0; i + OPT_CHUNK <= n; i += OPT_CHUNK)
			for (k = 0; k < OPT_CHUNK; k++)
				hess_one(i + k, g, eps, sigma, hhat, scale, 0);
		for (; i < n; i++)
			hess_one(i, g, eps, sigma, hhat, scale, 0);
	}
}

/* σ = 1/√(λ(h + δ)) (Alg. 1 line 8) from r = 1/(h + δ), which line 7
 * divides by: √(r/λ), so that the two share one division (and every
 * caller derives σ from h the same way, as ĥ = ĝ·(θ − m)/σ² assumes). */
static inline float ivon_sigma_of(float r, float inv_ess)
{
	return sqrtf(r * inv_ess);
}

/* The per-call constants of the update. */
struct ivon_coef {
	float b1, rho1;    /* β1, 1 − β1 */
	float b2, rho2;    /* β2, 1 − β2 */
	float half_rho2sq; /* ½(1 − β2)² */
	float bc1;         /* 1 / (1 − β1^t) */
	float delta;       /* δ */
	float ess;         /* λ */
	float inv_ess;     /* 1/λ */
	float xi;          /* ξ, or +inf when clipping is off */
	float lr;          /* α */
};

static void ivon_coef_init(struct ivon_coef *c, const bnn_ivon_params *p, float lr, long step)
{
	double t = step < 1 ? 1.0 : (double)step;
	double rho2 = 1.0 - p->beta2;

	c->b1 = (float)p->beta1;
	c->rho1 = (float)(1.0 - p->beta1);
	c->b2 = (float)p->beta2;
	c->rho2 = (float)rho2;
	c->half_rho2sq = (float)(0.5 * rho2 * rho2);
	c->bc1 = (float)(1.0 / bnn_bias_correction(p->beta1, t));
	c->delta = (float)p->delta;
	c->ess = (float)p->ess;
	c->inv_ess = (float)(1.0 / p->ess);
	c->xi = p->clip_radius > 0 ? (float)p->clip_radius : INFINITY;
	c->lr = lr;
}

/*
 * One element of the update.  sampling (with with_sigma): ĥ comes from the
 * sample itself, ĝ·(θ − m)/σ² with 1/σ² = λ(h + δ) (eq. 3 and line 8, the
 * old h and m), and afterwards θ ← m + σ·noise, the next step's sample
 * (line 2) from the new m and σ (θ ← m without with_sigma).  The flags
 * are literals at every call, so that each variant's loop vectorises.
 */
static inline void ivon_one(long i, float *restrict mu, const float *restrict ghat,
                            const float *restrict hhat, float *restrict g, float *restrict h,
                            float *restrict sigma, float *restrict theta,
                            const float *restrict noise, const struct ivon_coef *c, int with_sigma,
                            int sampling)
{
	float gi = c->b1 * g[i] + c->rho1 * ghat[i]; /* line 4 */
	float hi = h[i], mi = mu[i];
	float gbar, d, r, si = 0.0f;

	if (with_sigma) { /* line 5 */
		float hh = !sampling ? hhat[i]
		                     : ghat[i] * (theta[i] - mi) * (c->ess * (hi + c->delta));
		float diff = hi - hh;

		hi = c->b2 * hi + c->rho2 * hh + c->half_rho2sq * diff * diff / (hi + c->delta);
		h[i] = hi;
	}
	g[i] = bnn_flush_tiny(gi);
	r = 1.0f / (hi + c->delta);
	gbar = gi * c->bc1;             /* line 6 */
	d = (gbar + c->delta * mi) * r; /* line 7 */
	d = d > c->xi ? c->xi : d;      /* clip, sec. 3 */
	d = d < -c->xi ? -c->xi : d;    /* trick 4 */
	mi = bnn_flush_tiny(mi - c->lr * d);
	mu[i] = mi;
	if (with_sigma) { /* line 8 */
		si = ivon_sigma_of(r, c->inv_ess);
		if (!sampling) /* else derived when needed: a store saved */
			sigma[i] = si;
	}
	if (sampling) /* line 2 */
		theta[i] = with_sigma ? mi + si * noise[i] : mi;
}

/* The loop over n elements (always inlined into the cloned functions
 * below, so that it is compiled for each of their targets). */
static inline __attribute__((always_inline)) void ivon_loop(
        long n, float *restrict mu, const float *restrict ghat, const float *restrict hhat,
        float *restrict g, float *restrict h, float *restrict sigma, float *restrict theta,
        const float *restrict noise, const struct ivon_coef *c, int with_sigma, int sampling)
{
	long i;
	int k;

	for (i = 0; i + OPT_CHUNK <= n; i += OPT_CHUNK)
		for (k = 0; k < OPT_CHUNK; k++)
			ivon_one(i + k, mu, ghat, hhat, g, h, sigma, theta, noise, c, with_sigma,
			         sampling);
	for (; i < n; i++)
		ivon_one(i, mu, ghat, hhat, g, h, sigma, theta, noise, c, with_sigma, sampling);
}

BNN_SIMD_CLONES static void ivon_step_kernel(long n, float *restrict mu, const float *restrict ghat,
                                             const float *restrict hhat, float *restrict g,
                                             float *restrict h, float *restrict sigma, float lr,
                                             long step, const bnn_ivon_params *p)
{
	struct ivon_coef c;

	ivon_coef_init(&c, p, lr, step);
	if (sigma)
		ivon_loop(n, mu, ghat, hhat, g, h, sigma, NULL, NULL, &c, 1, 0);
	else /* deterministic: no ĥ, h stays at h0 */
		ivon_loop(n, mu, ghat, NULL, g, h, NULL, NULL, NULL, &c, 0, 0);
}

/* The public entry: unpacks the arrays for the kernel above, which keeps
 * scalar, restrict-qualified arguments so that its loop vectorises. */
void bnn_ivon_step(const bnn_ivon_arrays *a, float lr, long step, const bnn_ivon_params *p)
{
	ivon_step_kernel(a->n, a->mu, a->ghat, a->hhat, a->g, a->h, a->sigma, lr, step, p);
}

BNN_SIMD_CLONES static void ivon_step_sample_kernel(long n, float *restrict mu,
                                                    const float *restrict ghat, float *restrict g,
                                                    float *restrict h, int stochastic,
                                                    float *restrict theta,
                                                    const float *restrict noise, float lr,
                                                    long step, const bnn_ivon_params *p)
{
	struct ivon_coef c;

	ivon_coef_init(&c, p, lr, step);
	if (stochastic) /* ĥ from θ, then the next θ */
		ivon_loop(n, mu, ghat, NULL, g, h, NULL, theta, noise, &c, 1, 1);
	else
		ivon_loop(n, mu, ghat, NULL, g, h, NULL, theta, noise, &c, 0, 1);
}

/* The public entry: unpacks the arrays for the kernel above, which keeps
 * scalar, restrict-qualified arguments so that its loop vectorises. */
void bnn_ivon_step_sample(const bnn_ivon_arrays *a, float lr, long step, const bnn_ivon_params *p)
{
	ivon_step_sample_kernel(a->n, a->mu, a->ghat, a->g, a->h, a->stochastic, a->theta, a->noise,
	                        lr, step, p);
}

BNN_SIMD_CLONES void bnn_ivon_sigma(long n, const float *restrict h, float *restrict sigma,
                                    const bnn_ivon_params *p)
{
	float inv_ess = (float)(1.0 / p->ess), delta = (float)p->delta;
	long i;
	int k;

	/* Alg. 1 Init and line 8: σ = 1/√(λ(h + δ)) */
	for (i = 0; i + OPT_CHUNK <= n; i += OPT_CHUNK)
		for (k = 0; k < OPT_CHUNK; k++)
			sigma[i + k] = ivon_sigma_of(1.0f / (h[i + k] + delta), inv_ess);
	for (; i < n; i++)
		sigma[i] = ivon_sigma_of(1.0f / (h[i] + delta), inv_ess);
}
