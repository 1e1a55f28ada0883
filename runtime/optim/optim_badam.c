/*
 * optim_badam.c: the posterior of BADAM (Kessler et al., "Practical
 * Bayesian neural networks via adaptive optimization methods", Algorithm 1
 * and eq. 9-12).  Training is plain Adam (bnn_adam_step, optim_adam.c);
 * afterwards, or at any step, the Laplace-style posterior centred on the
 * Adam iterate θ is read off Adam's bias-corrected second moment v̂, the
 * square root of which approximates the curvature of the mean loss
 * (eq. 11):
 *
 *   q(θ) = N(θ_t, diag(σ²)),  σ = 1 / √(N·√v̂ + δ),  v̂ = v / (1 − β2^t)
 *
 * Eq. 12 states the precision as N·√v̂; eq. 10 writes the log-posterior's
 * curvature as the likelihood's plus the prior's, so the prior precision δ
 * is added (δ = 0 gives eq. 12 exactly).  One vectorised loop, √v̂
 * computed as Adam computes it (√v · 1/√(1 − β2^t)).
 */
#include <math.h>

#include "bnn.h"
#include "bnn_variational.h"
#include "kernels/simd_clones.h"

/* Elements per vectorised chunk: 32, as in optim_adam.c, so that each
 * iteration holds two AVX-512 (four AVX2) vectors whose long dependency
 * chains overlap; on 670k parameters this halves the step's time. */
#define OPT_CHUNK 32

static inline float badam_one(float v, float rbc2, float nd, float delta)
{
	/* BADAM eq. 10-12: precision N·√v̂ + δ */
	return 1.0f / sqrtf(nd * (sqrtf(v) * rbc2) + delta);
}

BNN_SIMD_CLONES void bnn_badam_sigma(long n, const float *restrict v, long step, double beta2,
                                     double n_data, double prior_precision, float *restrict sigma)
{
	double t = step < 1 ? 1.0 : (double)step;
	float rbc2 = (float)(1.0 / sqrt(1.0 - pow(beta2, t))); /* 1/√(1−β2^t) */
	float nd = (float)n_data;
	float delta = (float)prior_precision;
	long i;
	int k;

	for (i = 0; i + OPT_CHUNK <= n; i += OPT_CHUNK)
		for (k = 0; k < OPT_CHUNK; k++)
			sigma[i + k] = badam_one(v[i + k], rbc2, nd, delta);
	for (; i < n; i++)
		sigma[i] = badam_one(v[i], rbc2, nd, delta);
}
