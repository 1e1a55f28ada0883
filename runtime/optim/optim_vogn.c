/*
 * optim_vogn.c: the Variational Online Gauss-Newton optimizer (VOGN) of
 * Osawa et al., "Practical deep learning with Bayesian principles",
 * NeurIPS 2019, Algorithm 1, as one fused loop over flat float arrays
 * (bnn_variational.h).  It fits a mean-field Gaussian N(μ, diag(σ²)) with
 * σ² = 1/(N(s + δ̃)): s is a moving average of the Gauss-Newton diagonal
 * ĥ (the mean squared per-example gradients, which the generated code
 * computes), δ̃ = τδ/N the tempered prior precision per example.
 *
 * The trainer draws the K samples w = μ + εσ (line 9, posterior.c), runs
 * the passes that give ĝ and ĥ, averages them over the samples (line 16)
 * and calls bnn_vogn_step() once per parameter tensor with that tensor's
 * δ; with one sample per step, bnn_vogn_step_sample() also draws the next
 * step's sample in the same loop, from noise the caller drew.  The
 * per-call constants are computed in double and rounded to float once;
 * the loop is float and vectorised like optim_adam.c's (chunks of
 * OPT_CHUNK with a constant trip count, restrict-qualified arrays, sqrtf
 * under -fno-math-errno, BNN_SIMD_CLONES).
 */
#include <math.h>

#include "bnn.h"
#include "bnn_variational.h"
#include "kernels/simd_clones.h"
#include "flush_tiny.h"

/* Elements per vectorised chunk: 32, as in optim_adam.c, so that each
 * iteration holds two AVX-512 (four AVX2) vectors whose long dependency
 * chains overlap; on 670k parameters this halves the step's time. */
#define OPT_CHUNK 32

bnn_vogn_params bnn_vogn_defaults(void)
{
	bnn_vogn_params p;

	p.beta1 = 0.9;
	p.beta2 = 0.001; /* line 20's β2: s keeps 99.9% of its past (vogn.md) */
	p.tau = 1.0;
	p.delta = 0.0;
	p.n_data = 0.0;
	return p;
}

/* The per-call constants of the update. */
struct vogn_coef {
	float b1;     /* β1 */
	float decay;  /* 1 − τβ2 */
	float b2;     /* β2 */
	float dt;     /* δ̃ = τδ/N (Alg. 1 line 2) */
	float inv_nd; /* 1/N */
	float lr;     /* α */
};

/* σ = (1/(N(s + δ̃)))^½ (Alg. 1 line 9) from r = 1/(s + δ̃), which line 21
 * divides by: √(r/N), so that the two share one division (and every
 * caller derives σ from s the same way). */
static inline float vogn_sigma_of(float r, float inv_nd)
{
	return sqrtf(r * inv_nd);
}

static void vogn_coef_init(struct vogn_coef *c, const bnn_vogn_params *p, float lr)
{
	c->b1 = (float)p->beta1;
	c->decay = (float)(1.0 - p->tau * p->beta2);
	c->b2 = (float)p->beta2;
	c->dt = (float)(p->tau * p->delta / p->n_data);
	c->inv_nd = (float)(1.0 / p->n_data);
	c->lr = lr;
}

/* One element; sampling: θ ← μ + σ·noise afterwards, the next step's
 * sample (line 9) from the new μ and σ (θ ← μ without with_sigma), and σ
 * is not stored.  The flags are literals at every call, so that each
 * variant vectorises. */
static inline void vogn_one(long i, float *restrict mu, const float *restrict ghat,
                            const float *restrict hhat, float *restrict m, float *restrict s,
                            float *restrict sigma, float *restrict theta,
                            const float *restrict noise, const struct vogn_coef *c, int with_sigma,
                            int sampling)
{
	float mi = c->b1 * m[i] + (ghat[i] + c->dt * mu[i]); /* line 19 */
	float si = c->decay * s[i] + c->b2 * hhat[i];        /* line 20 */
	float r = 1.0f / (si + c->dt);
	float mui = bnn_flush_tiny(mu[i] - c->lr * mi * r); /* line 21 */
	float sg = 0.0f;

	m[i] = bnn_flush_tiny(mi);
	s[i] = bnn_flush_tiny(si);
	mu[i] = mui;
	if (with_sigma) { /* line 9 */
		sg = vogn_sigma_of(r, c->inv_nd);
		if (!sampling) /* else derived when needed: a store saved */
			sigma[i] = sg;
	}
	if (sampling) /* line 9 */
		theta[i] = with_sigma ? mui + sg * noise[i] : mui;
}

/* The loop over n elements (always inlined into the cloned functions
 * below, so that it is compiled for each of their targets). */
static inline __attribute__((always_inline)) void vogn_loop(
        long n, float *restrict mu, const float *restrict ghat, const float *restrict hhat,
        float *restrict m, float *restrict s, float *restrict sigma, float *restrict theta,
        const float *restrict noise, const struct vogn_coef *c, int with_sigma, int sampling)
{
	long i;
	int k;

	for (i = 0; i + OPT_CHUNK <= n; i += OPT_CHUNK)
		for (k = 0; k < OPT_CHUNK; k++)
			vogn_one(i + k, mu, ghat, hhat, m, s, sigma, theta, noise, c, with_sigma,
			         sampling);
	for (; i < n; i++)
		vogn_one(i, mu, ghat, hhat, m, s, sigma, theta, noise, c, with_sigma, sampling);
}

BNN_SIMD_CLONES static void vogn_step_kernel(long n, float *restrict mu, const float *restrict ghat,
                                             const float *restrict hhat, float *restrict m,
                                             float *restrict s, float *restrict sigma, float lr,
                                             const bnn_vogn_params *p)
{
	struct vogn_coef c;

	vogn_coef_init(&c, p, lr);
	if (sigma)
		vogn_loop(n, mu, ghat, hhat, m, s, sigma, NULL, NULL, &c, 1, 0);
	else
		vogn_loop(n, mu, ghat, hhat, m, s, NULL, NULL, NULL, &c, 0, 0);
}

/* The public entry: unpacks the arrays for the kernel above, which keeps
 * scalar, restrict-qualified arguments so that its loop vectorises. */
void bnn_vogn_step(const bnn_vogn_arrays *a, float lr, const bnn_vogn_params *p)
{
	vogn_step_kernel(a->n, a->mu, a->ghat, a->hhat, a->m, a->s, a->sigma, lr, p);
}

BNN_SIMD_CLONES static void vogn_step_sample_kernel(
        long n, float *restrict mu, const float *restrict ghat, const float *restrict hhat,
        float *restrict m, float *restrict s, int stochastic, float *restrict theta,
        const float *restrict noise, float lr, const bnn_vogn_params *p)
{
	struct vogn_coef c;

	vogn_coef_init(&c, p, lr);
	if (stochastic)
		vogn_loop(n, mu, ghat, hhat, m, s, NULL, theta, noise, &c, 1, 1);
	else
		vogn_loop(n, mu, ghat, hhat, m, s, NULL, theta, noise, &c, 0, 1);
}

/* The public entry: unpacks the arrays for the kernel above, which keeps
 * scalar, restrict-qualified arguments so that its loop vectorises. */
void bnn_vogn_step_sample(const bnn_vogn_arrays *a, float lr, const bnn_vogn_params *p)
{
	vogn_step_sample_kernel(a->n, a->mu, a->ghat, a->hhat, a->m, a->s, a->stochastic, a->theta,
	                        a->noise, lr, p);
}

BNN_SIMD_CLONES void bnn_vogn_sigma(long n, const float *restrict s, float *restrict sigma,
                                    const bnn_vogn_params *p)
{
	struct vogn_coef c;
	long i;
	int k;

	vogn_coef_init(&c, p, 0.0f);
	/* Alg. 1 line 9: σ = (1/(N(s + δ̃)))^½ */
	for (i = 0; i + OPT_CHUNK <= n; i += OPT_CHUNK)
		for (k = 0; k < OPT_CHUNK; k++)
			sigma[i + k] = vogn_sigma_of(1.0f / (s[i + k] + c.dt), c.inv_nd);
	for (; i < n; i++)
		sigma[i] = vogn_sigma_of(1.0f / (s[i] + c.dt), c.inv_nd);
}
