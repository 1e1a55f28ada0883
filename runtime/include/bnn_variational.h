/*
 * bnn_variational.h: the variational optimizers and posterior utilities of
 * libbnn (included by bnn.h after bnn_optim.h).
 *
 * Like the optimizers of bnn_optim.h, every function here is a plain
 * function over flat float arrays of n parameters (n may be 0) with its
 * hyperparameters passed per call, so the trainer calls it once per
 * parameter tensor with that tensor's prior precision.  The steps take
 * their arrays in one struct (bnn_vogn_arrays, bnn_ivon_arrays,
 * bnn_bbb_arrays: the fields a call does not read may stay 0), the
 * learning rate and step number, and the hyperparameters in another.  The caller owns
 * every array; the arrays of one call must not overlap (the loops are
 * vectorised on that assumption).  Nothing allocates and nothing fails.
 *
 *   VOGN   Osawa et al., "Practical deep learning with Bayesian
 *          principles", NeurIPS 2019, Algorithm 1 (optim_vogn.c).
 *   IVON   Shen et al., "Variational learning is effective for large deep
 *          networks", ICML 2024, Algorithm 1 (optim_ivon.c).
 *   BADAM  Kessler et al., "Practical Bayesian neural networks via
 *          adaptive optimization methods", Algorithm 1 and eq. 10-12: Adam
 *          (bnn_adam_step) and a posterior read off its second moment
 *          (optim_badam.c).
 *   BBB    Blundell et al., "Weight uncertainty in neural networks", ICML
 *          2015: explicit scales σ = softplus(ρ) trained by Adam on the
 *          ELBO (optim_bbb.c).
 *   posterior.c: sampling θ = μ + σ∘ε, the KL divergence to the Gaussian
 *          prior, the signal-to-noise ratio and pruning by score.
 *
 * Notation, shared with docs/optimizers/{vogn,ivon,badam,bbb}.md: μ (mu)
 * the posterior mean, σ (sigma) its standard deviation, δ the prior
 * precision of the tensor (prior N(0, I/δ)), N the number of training
 * examples, ĝ the minibatch gradient of the mean loss, α the learning rate
 * and t the step number, 1 at the first step.  Operations on vectors are
 * element by element.  Hyperparameters are double so that values such as
 * β2 = 1 − 10⁻⁶ keep their meaning; each kernel computes its per-call
 * constants in double and rounds them to float once.
 *
 * "Deterministic" parameters (kept as points, without noise: biases of
 * point layers, later batchnorm) go through the same kernels with sigma
 * NULL: the mean is updated by the same rule and no σ is written.
 */
#ifndef BNN_VARIATIONAL_H
#define BNN_VARIATIONAL_H

#include "bnn_core.h"
#include "bnn_rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- VOGN */

/* VOGN hyperparameters (defaults in brackets; Osawa et al., Fig. 2). */
typedef struct bnn_vogn_params {
	double beta1;  /* β1, momentum rate [0.9] */
	double beta2;  /* β2 of line 20, the weight of the new ĥ [0.001] */
	double tau;    /* τ, tempering [1] (the trainer schedules it) */
	double delta;  /* δ, prior precision [0: unset: the layer's] */
	double n_data; /* N after N ← ρN (Alg. 1 line 2) [0: unset], > 0 */
} bnn_vogn_params;

/** The defaults above; delta and n_data must then be set (per tensor). */
bnn_vogn_params bnn_vogn_defaults(void);

/* The arrays of a VOGN step, n floats each. */
typedef struct bnn_vogn_arrays {
	long n;             /* number of parameters (0: nothing happens) */
	float *mu;          /* μ, updated in place */
	const float *ghat;  /* ĝ, the gradient of the mean loss averaged over
	                       the K MC samples (line 16); not modified */
	const float *hhat;  /* ĥ, the mean of the squared per-example
	                       gradients averaged over the K samples (lines 14
	                       and 16); not modified */
	float *m;           /* momentum (zero before the first step) */
	float *s;           /* scale (s0 before the first step: the mean
	                       squared gradients of the first minibatch, line 1) */
	float *sigma;       /* bnn_vogn_step: receives σ; NULL for
	                       deterministic parameters */
	int stochastic;     /* bnn_vogn_step_sample: 0 for deterministic
	                       parameters (θ ← μ) */
	float *theta;       /* bnn_vogn_step_sample: receives the next sample */
	const float *noise; /* bnn_vogn_step_sample: n standard normal variates
	                       (e.g. bnn_rng_normal()) */
} bnn_vogn_arrays;

/**
 * One VOGN step (Alg. 1 lines 19-21 and 9), with δ̃ = τδ/N (line 2):
 *
 *   m ← β1·m + (ĝ + δ̃·μ)                (line 19)
 *   s ← (1 − τβ2)·s + β2·ĥ              (line 20)
 *   μ ← μ − α·m / (s + δ̃)               (line 21)
 *   σ ← 1 / √(N·(s + δ̃))                (line 9, for the next sample)
 *
 * @param a      the arrays: n, mu, ghat, hhat, m, s and sigma
 * @param lr     α
 * @param p      hyperparameters: n_data > 0 and s + δ̃ > 0 are required
 */
void bnn_vogn_step(const bnn_vogn_arrays *a, float lr, const bnn_vogn_params *p);

/**
 * bnn_vogn_step() fused with the next step's sample (Alg. 1 line 9), for
 * the trainer's mc = 1: after the update, θ ← μ + σ·noise with the new μ
 * and σ, σ not stored (bnn_vogn_sigma() of the new s gives it);
 * stochastic 0: θ ← μ.  Every float is that of bnn_vogn_step() followed
 * by bnn_posterior_sample() with ε = noise.
 * @param a  the arrays: n, mu, ghat, hhat, m, s, stochastic, theta and
 *           noise (sigma is not read)
 */
void bnn_vogn_step_sample(const bnn_vogn_arrays *a, float lr, const bnn_vogn_params *p);

/** σ ← 1/√(N·(s + δ̃)) alone (Alg. 1 line 9): the initial σ once s0 is set
 *  from the first minibatch's mean squared gradients. */
void bnn_vogn_sigma(long n, const float *s, float *sigma, const bnn_vogn_params *p);

/* ---------------------------------------------------------------- IVON */

/* IVON hyperparameters (defaults in brackets; Shen et al., App. A). */
typedef struct bnn_ivon_params {
	double beta1;       /* β1, gradient momentum [0.9] */
	double beta2;       /* β2, Hessian momentum [0.99999] */
	double h0;          /* h0, Hessian initialisation [0.1] (the trainer
	                     * fills h with it; not used by the step) */
	double delta;       /* δ, weight decay (prior prec. / λ) [0: unset] */
	double ess;         /* λ, effective sample size [0: unset, N], > 0 */
	double clip_radius; /* ξ, entrywise clip of the update [0: off] */
} bnn_ivon_params;

/** The defaults above; delta and ess must then be set. */
bnn_ivon_params bnn_ivon_defaults(void);

/* The arrays of an IVON step, n floats each. */
typedef struct bnn_ivon_arrays {
	long n;             /* number of parameters (0: nothing happens) */
	float *mu;          /* μ (the paper's m), updated in place */
	const float *ghat;  /* ĝ, averaged over the MC samples; not modified */
	const float *hhat;  /* bnn_ivon_step: ĥ from bnn_ivon_hess_acc(), not
	                       modified; may be NULL when sigma is NULL */
	float *g;           /* gradient momentum (zero before the first step) */
	float *h;           /* Hessian estimate (h0 before the first step);
	                       h + δ > 0 is required */
	float *sigma;       /* bnn_ivon_step: receives σ; NULL for
	                       deterministic parameters */
	int stochastic;     /* bnn_ivon_step_sample: 0 for deterministic
	                       parameters (h stays, θ ← μ) */
	float *theta;       /* bnn_ivon_step_sample: in, the sample ĝ was taken
	                       at; out, the next sample */
	const float *noise; /* bnn_ivon_step_sample: n standard normal variates */
} bnn_ivon_arrays;

/**
 * Accumulate the reparameterisation Hessian estimate (eq. 3) of one MC
 * sample θ = μ + σ∘ε: since θ − m = σε, ĝ·(θ − m)/σ² = ĝ·ε/σ, so
 *
 *   ĥ ← scale·g·ε/σ          (accumulate 0)
 *   ĥ ← ĥ + scale·g·ε/σ      (accumulate 1)
 *
 * With K samples per step the trainer passes scale = 1/K, accumulate 0 for
 * the first sample and 1 for the others (Shen et al., section 3, the
 * average over J·S samples).
 * @param g      ĝ of this sample (the gradient of the mean loss at θ)
 * @param eps    ε of this sample, as drawn by bnn_posterior_sample()
 * @param sigma  σ the sample was drawn with (every entry > 0)
 */
void bnn_ivon_hess_acc(long n, const float *g, const float *eps, const float *sigma, float *hhat,
                       float scale, int accumulate);

/**
 * One IVON step (Alg. 1 lines 4-8), with t = step (step < 1 counts as 1):
 *
 *   g ← β1·g + (1 − β1)·ĝ                                     (line 4)
 *   h ← β2·h + (1 − β2)·ĥ + ½(1 − β2)²(h − ĥ)²/(h + δ)        (line 5)
 *   ḡ = g / (1 − β1^t)                                        (line 6)
 *   Δ = (ḡ + δ·μ) / (h + δ), clipped to [−ξ, ξ] when ξ > 0    (line 7)
 *   μ ← μ − α·Δ                                               (line 7)
 *   σ ← 1 / √(λ·(h + δ))                                      (line 8)
 *
 * The Riemannian correction of line 5 keeps the precision h + δ positive
 * whatever the sign of ĥ: with ρ = 1 − β2 and P = h + δ, the new P is
 * P·(1 + x + x²/2) with x = ρ(ĥ − h)/P, and 1 + x + x²/2 >= 1/2.  So h + δ
 * never falls below half its previous value (h itself may become negative
 * when δ > 0; with δ = 0, h stays positive).  The learning-rate rescaling
 * α ← (h0 + δ)·α of the paper is the caller's (the trainer's rescale_lr).
 *
 * @param a      the arrays: n, mu, ghat, hhat, g, h and sigma; with sigma
 *               NULL (deterministic parameters, for which no Hessian can
 *               be estimated) h is left unchanged (at h0) and the step of
 *               line 7 uses it
 * @param lr     α (already rescaled by the caller if wanted)
 */
void bnn_ivon_step(const bnn_ivon_arrays *a, float lr, long step, const bnn_ivon_params *p);

/**
 * One IVON step with one MC sample, fused with the next step's sample
 * (Alg. 1 lines 3-8, then line 2), for the trainer's mc = 1:
 *
 *   ĥ = ĝ·(θ − μ)/σ² = ĝ·(θ − μ)·λ(h + δ)       (line 3, eq. 3; old μ, h)
 *   lines 4-8 as bnn_ivon_step(), but σ is not stored
 *   θ ← μ + σ·noise                              (line 2, new μ and σ)
 *
 * θ must have been drawn with σ = 1/√(λ(h + δ)) of the h passed in (as
 * the previous call, or bnn_ivon_sigma() and bnn_posterior_sample(), left
 * it).  σ itself, when wanted, is bnn_ivon_sigma() of the new h.
 * stochastic 0 (deterministic parameters): h stays, θ ← μ.  Every float
 * is that of bnn_ivon_step() followed by bnn_posterior_sample() with
 * ε = noise, except for ĥ's rounding.
 * @param a  the arrays: n, mu, ghat, g, h, stochastic, theta and noise
 *           (hhat and sigma are not read)
 */
void bnn_ivon_step_sample(const bnn_ivon_arrays *a, float lr, long step, const bnn_ivon_params *p);

/** σ ← 1/√(λ·(h + δ)) alone (Alg. 1 "Init" and line 8). */
void bnn_ivon_sigma(long n, const float *h, float *sigma, const bnn_ivon_params *p);

/* --------------------------------------------------------------- BADAM */

/**
 * BADAM's posterior standard deviation from Adam's second moment (Kessler
 * et al., Alg. 1 output and eq. 10-12):
 *
 *   v̂ = v / (1 − β2^t),   σ = 1 / √(N·√v̂ + δ)
 *
 * The paper's posterior N(θ, (N·diag(√v̂))⁻¹) is eq. 12; eq. 10 adds the
 * prior's precision to the likelihood's curvature, which this reads as
 * the precision N·√v̂ + δ.  With δ > 0 every σ is finite (σ = 1/√δ where
 * v = 0); with δ = 0 an entry with v = 0 gets σ = +inf.
 * @param v       Adam's raw second moment (bnn_adam_step's v)
 * @param step    t, the number of Adam steps taken (< 1 counts as 1)
 * @param beta2   Adam's β2, in [0, 1)
 * @param n_data  N > 0
 * @param prior_precision  δ >= 0
 */
void bnn_badam_sigma(long n, const float *v, long step, double beta2, double n_data,
                     double prior_precision, float *sigma);

/* ----------------------------------------------------- Bayes-by-Backprop */

/* Bayes-by-Backprop hyperparameters: Adam's, and the ELBO's. */
typedef struct bnn_bbb_params {
	double beta1;           /* Adam's β1 [0.9] */
	double beta2;           /* Adam's β2 [0.999] */
	double eps;             /* Adam's ε [1e-8] */
	double prior_precision; /* δ [0: unset, the layer's precision] */
	double n_data;          /* N [0: unset], > 0 */
} bnn_bbb_params;

/** The defaults above; prior_precision and n_data must then be set. */
bnn_bbb_params bnn_bbb_defaults(void);

/* The arrays of a Bayes-by-Backprop step, n floats each. */
typedef struct bnn_bbb_arrays {
	long n;               /* number of parameters (0: nothing happens) */
	float *mu;            /* μ, updated in place */
	float *rho;           /* ρ, updated in place; NULL for point
	                         parameters (only μ is updated) */
	float *sigma;         /* bnn_bbb_step: on entry softplus(ρ), the σ the
	                         gradients were taken at (every entry > 0); on
	                         return softplus of the new ρ */
	const float *g_mu;    /* the gradient of the mean NLL with respect to μ
	                         (bnn_bbb_step_sample: at θ) */
	const float *g_sigma; /* bnn_bbb_step: the gradient of the mean NLL
	                         with respect to σ */
	float *m_mu, *v_mu;   /* Adam's moments of μ (zero before the first step) */
	float *m_rho, *v_rho; /* Adam's moments of ρ (zero before the first step) */
	float *eps;           /* bnn_bbb_step_sample: in, the ε of θ; out, noise */
	float *theta;         /* bnn_bbb_step_sample: receives the next sample */
	const float *noise;   /* bnn_bbb_step_sample: n standard normal variates */
} bnn_bbb_arrays;

/**
 * One Bayes-by-Backprop step on the loss mean NLL + KL/N (the ELBO divided
 * by N), with σ = softplus(ρ) = log(1 + e^ρ) and the KL of
 * bnn_kl_gaussian():
 *
 *   ∂/∂μ = g_μ + δμ/N
 *   ∂/∂σ = g_σ + (δσ − 1/σ)/N
 *   ∂/∂ρ = ∂/∂σ · sigmoid(ρ)
 *
 * then one Adam step (bias-corrected, the same rule and arithmetic as
 * bnn_adam_step(), no weight decay) on μ with (m_mu, v_mu) and on ρ with
 * (m_rho, v_rho), and finally σ ← softplus(ρ).
 *
 * With rho NULL (point parameters) only μ is updated, with the gradient
 * g_μ + δμ/N; sigma, g_sigma, m_rho and v_rho are then not used (may be
 * NULL).
 * @param a     the arrays: n, mu, rho, sigma, g_mu, g_sigma, m_mu, v_mu,
 *              m_rho and v_rho
 * @param step  t, 1 at the first step (< 1 counts as 1)
 */
void bnn_bbb_step(const bnn_bbb_arrays *a, float lr, long step, const bnn_bbb_params *p);

/**
 * Bayes-by-Backprop with one weight sample per step (the trainer's
 * lrt = 0, mc = 1), fused with the next step's sample: the gradient g
 * (a->g_mu) at θ = μ + σ∘ε gives g_μ = g and g_σ = g∘ε (Blundell et al.,
 * section 3.2),
 * the step is bnn_bbb_step()'s with σ = softplus(ρ) recomputed, and then
 * θ ← μ + σ·noise, ε ← noise with the new μ and σ; σ is not stored
 * (bnn_bbb_sigma() gives it).  rho NULL (deterministic parameters): Adam
 * on μ, θ ← μ, eps untouched.  Every float is that of bnn_bbb_step() with
 * g_sigma = g∘ε followed by the sample.
 * @param a  the arrays: n, mu, rho, g_mu, eps, m_mu, v_mu, m_rho, v_rho,
 *           theta and noise (sigma and g_sigma are not read)
 */
void bnn_bbb_step_sample(const bnn_bbb_arrays *a, float lr, long step, const bnn_bbb_params *p);

/** σ ← softplus(ρ) = log(1 + e^ρ) over an array, computed stably as
 *  max(ρ, 0) + log1p(e^−|ρ|) with vectorised approximations: relative
 *  error below 1e-6 for ρ >= −87; below −87, σ = softplus(−87) = 1.6e-38
 *  (σ never reaches 0, where the KL's 1/σ would overflow); NaN gives NaN,
 *  +inf gives +inf.  bnn_bbb_step() computes σ in the same way. */
void bnn_bbb_sigma(long n, const float *rho, float *sigma);

/** softplus(ρ) = log(1 + e^ρ) in double, stably. */
double bnn_softplus(double rho);

/** The inverse of softplus, ρ = log(e^σ − 1), for initialising ρ from a
 *  σ0 > 0 (computed stably for small and large σ); −inf for σ = 0 and
 *  NaN for σ < 0. */
double bnn_softplus_inverse(double sigma);

/* ------------------------------------------------------------ posterior */

/* Block size of bnn_posterior_sample() and of the trainer's fused
 * updates: the work per piece only; the variates are always those of one
 * bnn_rng_normal(rng, ε, n) call over the whole parameter vector. */
#define BNN_SAMPLE_BLOCK 4096

/**
 * Draw θ = μ + σ∘ε with ε ~ N(0, I), fused block by block: ε is
 * bnn_rng_normal(rng, ε, n), drawn in pieces of BNN_SAMPLE_BLOCK
 * (bnn_rng_normal_next()), and θ = μ + σ·ε is computed on each piece while
 * it is still in cache.  A given rng state gives the same ε and θ on every
 * machine (bnn_rng.h).
 * @param eps    receives ε (IVON needs it for ĥ); NULL when not wanted
 * @param theta  receives θ
 */
void bnn_posterior_sample(long n, const float *mu, const float *sigma, float *eps, float *theta,
                          bnn_rng *rng);

/**
 * The KL divergence from the mean-field posterior N(μ, diag(σ²)) to the
 * prior N(0, I/δ):
 *
 *   KL = ½·Σ [δσ² + δμ² − 1 − ln(δσ²)]
 *
 * each term evaluated and summed in double.  σ = 0 is not allowed (a point
 * mass has infinite KL): such an entry makes the result +inf, so a
 * deterministic tensor passed by mistake shows; NaN in, NaN out.  δ must
 * be > 0.  Vectorised (a logarithm of our own); the
 * trainer needs it for reporting the ELBO only: bnn_bbb_step() has the
 * KL's gradients in closed form.
 */
double bnn_kl_gaussian(long n, const float *mu, const float *sigma, double prior_precision);

/** The signal-to-noise ratio out = |μ|/σ (BADAM's pruning score); σ = 0
 *  gives +inf (NaN when μ is 0 too). */
void bnn_snr(long n, const float *mu, const float *sigma, float *out);

/**
 * Zero the k = ⌊fraction·n + 10⁻⁶⌋ entries of w with the lowest score
 * (fraction clamped to [0, 1], NaN counts as 0; the 10⁻⁶ absorbs the
 * rounding of fraction·n, e.g. 0.29·100 = 28.999999999999996).  Ties are
 * broken by lower index first: among equal scores the entries with the
 * lower indices are zeroed first.  −0 and +0 are equal scores; NaN scores
 * are lower than every number (pruned first).  score NULL prunes by
 * magnitude |w|.  To zero the same entries of another array (σ), call
 * again with the same score array.  An exact selection by radix on the
 * scores' bits: four passes over the arrays, no sort, no allocation.
 * @return k, the number of entries zeroed (entries already 0 included)
 */
long bnn_prune_by_score(long n, float *w, const float *score, double fraction);

/* The priors of bnn_model.h (struct bnn_prior: the model's prior
 * statement). */
struct bnn_prior;

/**
 * −log p(w) summed over n parameters, the densities normalised:
 *   gaussian      ½δw² − ½ln(δ/2π)
 *   scalemixture  −ln[π N(w|0,σ1²) + (1 − π) N(w|0,σ2²)]
 *   laplace       |w|/b + ln(2b)
 * evaluated and summed in double (the scale mixture by log-sum-exp, so a
 * weight far in either tail keeps its value).
 */
double bnn_prior_neg_log(const struct bnn_prior *p, long n, const float *w);

/**
 * The gradient of −log p at w, times scale, added: g[i] += scale·d_i with
 *   gaussian      d = δw
 *   scalemixture  d = w·(r/σ1² + (1 − r)/σ2²), r = the first component's
 *                 posterior weight π N1 / (π N1 + (1 − π) N2) at w
 *   laplace       d = sign(w)/b (0 at w = 0, the subgradient of least norm)
 * and, when eps is not NULL (w = μ + σ∘ε, a reparameterised sample),
 * g_sigma[i] += scale·d_i·ε_i: the gradients with respect to μ and σ of the
 * one-sample estimate −log p(μ + σε) of −E_q log p (Blundell et al. 2015,
 * section 3.1, eq. (3)-(5)).  The scale mixture and the Gaussian are
 * computed in double per element (one exponential each for the mixture),
 * the Laplace's sign in float.
 */
void bnn_prior_grad(const struct bnn_prior *p, long n, const float *w, const float *eps,
                    double scale, float *g, float *g_sigma);

#ifdef __cplusplus
}
#endif

#endif /* BNN_VARIATIONAL_H */
