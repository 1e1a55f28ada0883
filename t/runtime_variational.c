/*
 * runtime_variational.c: TAP tests of libbnn's variational optimizers and
 * posterior utilities (runtime/optim/optim_vogn.c, optim_ivon.c, optim_badam.c,
 * optim_bbb.c, posterior.c; bnn_variational.h).  One or two steps of VOGN,
 * IVON, BADAM's σ and Bayes-by-Backprop on 3 parameters, each expected
 * value worked out by hand from the paper's equations next to the check
 * (including the deterministic-parameter cases, IVON's clipping, bias
 * correction and a negative ĥ); the same updates on 69 parameters, which
 * go through the vectorised chunks as well as the scalar tail and must
 * agree bit for bit; IVON's precision staying positive over 10000 steps
 * with very negative ĥ; softplus against libm; the sampler's moments and
 * its ε; the KL against hand values, libm and a Monte-Carlo estimate;
 * the signal-to-noise ratio; pruning (exact indices, ties, the ends, and
 * against a sort).  Fixed seeds throughout.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"
#include "bnn_variational.h"
#include "tap.h"

/* The 3-parameter problems start from these: μ = (1, -2, 0.5) and
 * ĝ = (0.5, 1, -2), then ĝ2 = (1, 0, -1) at a second step. */
static const float mu0[3] = { 1.0f, -2.0f, 0.5f };
static const float gh1[3] = { 0.5f, 1.0f, -2.0f };
static const float gh2[3] = { 1.0f, 0.0f, -1.0f };

/* Elements of the long versions: two vectorised chunks of 32 and a tail. */
#define NLONG 69

static void copy3(float *dst, const float *src)
{
	memcpy(dst, src, 3 * sizeof *dst);
}

/* Fill dst[0..NLONG) with src[i % 3]. */
static void spread3(float *dst, const float *src)
{
	int i;

	for (i = 0; i < NLONG; i++)
		dst[i] = src[i % 3];
}

/* Does long[i] equal short[i % 3] bit for bit, for every i? */
static int same_as3(const float *lng, const float *shrt)
{
	int i;

	for (i = 0; i < NLONG; i++)
		if (memcmp(&lng[i], &shrt[i % 3], sizeof lng[i]) != 0)
			return 0;
	return 1;
}

/* Check a 3-vector against expected values at tolerance tol. */
static void is_vec3(const float *got, double e0, double e1, double e2, double tol, const char *what)
{
	is_float(got[0], e0, tol, "%s [0]", what);
	is_float(got[1], e1, tol, "%s [1]", what);
	is_float(got[2], e2, tol, "%s [2]", what);
}

/* Are the first 3 floats of a and b the same bit for bit? */
static int same3(const float *a, const float *b)
{
	return memcmp(a, b, 3 * sizeof *a) == 0;
}

/* The hand-computed problems of the VOGN, IVON and BBB tests, shared by
 * the tests of the plain steps and of the fused ones (the comments at the
 * tests work them through). */
static const float vogn_s0[3] = { 0.2f, 0.4f, 0.8f };
static const float vogn_hh1[3] = { 0.5f, 0.2f, 1.0f };
static const float ivon_hinit[3] = { 0.5f, 0.5f, 0.5f };
/* IVON's first sample: θ - μ0 = (0.375, -0.125, -0.03125), exact in float */
static const float ivon_theta0[3] = { 1.375f, -2.125f, 0.46875f };
static const float bbb_rho0[3] = { 0.0f, -2.0f, 3.0f };
static const float bbb_gmu[3] = { 0.5f, 1.0f, -2.0f };
static const float bbb_gsig[3] = { 0.3f, -0.4f, 0.1f };
/* g∘ε = (0.5·0.6, 1·(-0.4), -2·(-0.05)) = bbb_gsig, exactly in float */
static const float bbb_eps0[3] = { 0.6f, -0.4f, -0.05f };
/* The noise of the fused steps' next sample. */
static const float fused_noise[3] = { 1.0f, -2.0f, 0.5f };

/* VOGN: N = 10, δ = 2, τ = 0.5, β1 = 0.9, β2 = 0.5. */
static void vogn_problem(bnn_vogn_params *p)
{
	p->beta1 = 0.9;
	p->beta2 = 0.5;
	p->tau = 0.5;
	p->delta = 2;
	p->n_data = 10;
}

/* IVON: β1 = 0.5, β2 = 0.75, h0 = 0.5, δ = 0.5, λ = 8. */
static void ivon_problem(bnn_ivon_params *p)
{
	p->beta1 = 0.5;
	p->beta2 = 0.75;
	p->h0 = 0.5;
	p->delta = 0.5;
	p->ess = 8;
}

/* BBB: δ = 2, N = 10 (Adam's defaults). */
static void bbb_problem(bnn_bbb_params *p)
{
	p->prior_precision = 2;
	p->n_data = 10;
}

/*
 * One run of each optimizer on the problems above.  A run has NLONG
 * slots: a 3-parameter run uses the first 3, a long run all of them with
 * element i as element i % 3, so the two can be compared bit for bit.
 * The 3-vectors a step takes (ĝ, ĥ, the noise) are spread the same way.
 */

/* The state of a VOGN run. */
typedef struct {
	float mu[NLONG];    /* the means μ */
	float m[NLONG];     /* the momentum m */
	float s[NLONG];     /* the scale s */
	float sigma[NLONG]; /* σ after a step */
	float theta[NLONG]; /* the fused steps' sample θ */
} vogn_run;

/* μ = mu0, m = 0, s = vogn_s0. */
static void vogn_start(vogn_run *r)
{
	memset(r, 0, sizeof *r);
	spread3(r->mu, mu0);
	spread3(r->s, vogn_s0);
}

/* bnn_vogn_step on n parameters, lr 0.1; without σ (deterministic)
 * when with_sigma is 0. */
static void vogn_take(vogn_run *r, int n, const float *ghat, const float *hhat, int with_sigma,
                      const bnn_vogn_params *p)
{
	float gh[NLONG], hh[NLONG];

	spread3(gh, ghat);
	spread3(hh, hhat);
	bnn_vogn_step(&(bnn_vogn_arrays){ .n = n,
	                                  .mu = r->mu,
	                                  .ghat = gh,
	                                  .hhat = hh,
	                                  .m = r->m,
	                                  .s = r->s,
	                                  .sigma = with_sigma ? r->sigma : NULL },
	              0.1f, p);
}

/* bnn_vogn_step_sample on n parameters with ĝ = gh1, ĥ = vogn_hh1,
 * lr 0.1 and fused_noise. */
static void vogn_take_sample(vogn_run *r, int n, int stochastic, const bnn_vogn_params *p)
{
	float gh[NLONG], hh[NLONG], noise[NLONG];

	spread3(gh, gh1);
	spread3(hh, vogn_hh1);
	spread3(noise, fused_noise);
	bnn_vogn_step_sample(&(bnn_vogn_arrays){ .n = n,
	                                         .mu = r->mu,
	                                         .ghat = gh,
	                                         .hhat = hh,
	                                         .m = r->m,
	                                         .s = r->s,
	                                         .stochastic = stochastic,
	                                         .theta = r->theta,
	                                         .noise = noise },
	                     0.1f, p);
}

/* The state of an IVON run. */
typedef struct {
	float mu[NLONG];    /* the means μ */
	float g[NLONG];     /* the gradient momentum g */
	float h[NLONG];     /* the Hessian estimate h */
	float sigma[NLONG]; /* σ after a step */
	float theta[NLONG]; /* the fused steps' sample θ */
} ivon_run;

/* μ = mu0, g = 0, h = ivon_hinit, θ = ivon_theta0. */
static void ivon_start(ivon_run *r)
{
	memset(r, 0, sizeof *r);
	spread3(r->mu, mu0);
	spread3(r->h, ivon_hinit);
	spread3(r->theta, ivon_theta0);
}

/* bnn_ivon_step number t on n parameters, lr 0.1; hhat NULL is the
 * deterministic case (no ĥ, no σ). */
static void ivon_take(ivon_run *r, int n, const float *ghat, const float *hhat, int t,
                      const bnn_ivon_params *p)
{
	float gh[NLONG], hh[NLONG];

	spread3(gh, ghat);
	if (hhat)
		spread3(hh, hhat);
	bnn_ivon_step(&(bnn_ivon_arrays){ .n = n,
	                                  .mu = r->mu,
	                                  .ghat = gh,
	                                  .hhat = hhat ? hh : NULL,
	                                  .g = r->g,
	                                  .h = r->h,
	                                  .sigma = hhat ? r->sigma : NULL },
	              0.1f, t, p);
}

/* bnn_ivon_step_sample at t = 1 on n parameters with ĝ = gh1, lr 0.1
 * and fused_noise. */
static void ivon_take_sample(ivon_run *r, int n, int stochastic, const bnn_ivon_params *p)
{
	float gh[NLONG], noise[NLONG];

	spread3(gh, gh1);
	spread3(noise, fused_noise);
	bnn_ivon_step_sample(&(bnn_ivon_arrays){ .n = n,
	                                         .mu = r->mu,
	                                         .ghat = gh,
	                                         .g = r->g,
	                                         .h = r->h,
	                                         .stochastic = stochastic,
	                                         .theta = r->theta,
	                                         .noise = noise },
	                     0.1f, 1, p);
}

/* The state of a Bayes-by-Backprop run. */
typedef struct {
	float mu[NLONG];    /* the means μ */
	float rho[NLONG];   /* ρ, σ = softplus(ρ) */
	float sigma[NLONG]; /* σ */
	float m_mu[NLONG];  /* Adam's first moment of μ */
	float v_mu[NLONG];  /* Adam's second moment of μ */
	float m_rho[NLONG]; /* Adam's first moment of ρ */
	float v_rho[NLONG]; /* Adam's second moment of ρ */
	float eps[NLONG];   /* the fused steps' ε */
	float theta[NLONG]; /* the fused steps' sample θ */
} bbb_run;

/* μ = mu0, ρ = bbb_rho0, σ = softplus(ρ), moments 0, ε = bbb_eps0. */
static void bbb_start(bbb_run *r)
{
	memset(r, 0, sizeof *r);
	spread3(r->mu, mu0);
	spread3(r->rho, bbb_rho0);
	spread3(r->eps, bbb_eps0);
	bnn_bbb_sigma(NLONG, r->rho, r->sigma);
}

/* bnn_bbb_step number t on n parameters with g_μ = bbb_gmu,
 * g_σ = bbb_gsig, lr 0.01; point parameters (no ρ) when variational
 * is 0. */
static void bbb_take(bbb_run *r, int n, int variational, int t, const bnn_bbb_params *p)
{
	float gm[NLONG], gs[NLONG];

	spread3(gm, bbb_gmu);
	spread3(gs, bbb_gsig);
	if (!variational) {
		bnn_bbb_step(
		        &(bnn_bbb_arrays){
		                .n = n, .mu = r->mu, .g_mu = gm, .m_mu = r->m_mu, .v_mu = r->v_mu },
		        0.01f, t, p);
		return;
	}
	bnn_bbb_step(&(bnn_bbb_arrays){ .n = n,
	                                .mu = r->mu,
	                                .rho = r->rho,
	                                .sigma = r->sigma,
	                                .g_mu = gm,
	                                .g_sigma = gs,
	                                .m_mu = r->m_mu,
	                                .v_mu = r->v_mu,
	                                .m_rho = r->m_rho,
	                                .v_rho = r->v_rho },
	             0.01f, t, p);
}

/* bnn_bbb_step_sample at t = 1 on 3 parameters with g_μ = bbb_gmu,
 * lr 0.01 and fused_noise; deterministic (no ρ) when variational is 0. */
static void bbb_take_sample(bbb_run *r, int variational, const bnn_bbb_params *p)
{
	bnn_bbb_step_sample(&(bnn_bbb_arrays){ .n = 3,
	                                       .mu = r->mu,
	                                       .rho = variational ? r->rho : NULL,
	                                       .g_mu = bbb_gmu,
	                                       .eps = r->eps,
	                                       .m_mu = r->m_mu,
	                                       .v_mu = r->v_mu,
	                                       .m_rho = variational ? r->m_rho : NULL,
	                                       .v_rho = variational ? r->v_rho : NULL,
	                                       .theta = r->theta,
	                                       .noise = fused_noise },
	                    0.01f, 1, p);
}

static void test_defaults(void)
{
	bnn_vogn_params v = bnn_vogn_defaults();
	bnn_ivon_params i = bnn_ivon_defaults();
	bnn_bbb_params b = bnn_bbb_defaults();

	ok(v.beta1 == 0.9 && v.beta2 == 0.001 && v.tau == 1 && v.delta == 0 && v.n_data == 0,
	   "VOGN defaults: 0.9, rate 0.001, tau 1, delta and N unset");
	ok(i.beta1 == 0.9 && i.beta2 == 0.99999 && i.h0 == 0.1 && i.delta == 0 && i.ess == 0 &&
	           i.clip_radius == 0,
	   "IVON defaults: 0.9, 0.99999, h0 0.1, delta and ess unset, no clip");
	ok(b.beta1 == 0.9 && b.beta2 == 0.999 && b.eps == 1e-8 && b.prior_precision == 0 &&
	           b.n_data == 0,
	   "BBB defaults: Adam's, prior and N unset");
}

/* ---- VOGN ---------------------------------------------------------------- */

static void test_vogn(void)
{
	bnn_vogn_params p = bnn_vogn_defaults();
	static const float hh2[3] = { 0.2f, 0.6f, 0.4f };
	float sig2[3];
	vogn_run r, d, l;

	/*
	 * N = 10, δ = 2, τ = 0.5: δ̃ = τδ/N = 0.1 (Alg. 1 line 2).  β1 = 0.9,
	 * β2 = 0.5 (so 1 - τβ2 = 0.75), α = 0.1, vogn_s0 = (0.2, 0.4, 0.8).
	 * Step 1 with ĝ = (0.5, 1, -2), ĥ = (0.5, 0.2, 1):
	 *   line 19: m = 0 + ĝ + 0.1 μ = (0.6, 0.8, -1.95)
	 *   line 20: s = 0.75 vogn_s0 + 0.5 ĥ = (0.15 + 0.25, 0.3 + 0.1,
	 *            0.6 + 0.5) = (0.4, 0.4, 1.1)
	 *   line 21: s + δ̃ = (0.5, 0.5, 1.2); μ - 0.1 m/(s + δ̃) =
	 *            (1 - 0.12, -2 - 0.16, 0.5 + 0.1625) =
	 *            (0.88, -2.16, 0.6625)
	 *   line 9:  σ = 1/√(10 (s + δ̃)) = 1/√(5, 5, 12) =
	 *            (0.447213595, 0.447213595, 0.288675135)
	 */
	vogn_problem(&p);
	vogn_start(&r);
	vogn_take(&r, 3, gh1, vogn_hh1, 1, &p);
	is_vec3(r.m, 0.6, 0.8, -1.95, 1e-6, "VOGN step 1: m (line 19)");
	is_vec3(r.s, 0.4, 0.4, 1.1, 1e-6, "VOGN step 1: s (line 20)");
	is_vec3(r.mu, 0.88, -2.16, 0.6625, 1e-6, "VOGN step 1: mu (line 21)");
	is_vec3(r.sigma, 0.447213595, 0.447213595, 0.288675135, 1e-6,
	        "VOGN step 1: sigma (line 9)");

	/* bnn_vogn_sigma from the same s gives the same σ. */
	bnn_vogn_sigma(3, r.s, sig2, &p);
	ok(same3(sig2, r.sigma), "bnn_vogn_sigma matches the step's sigma");

	/* The deterministic case (sigma NULL): the same μ, m and s. */
	vogn_start(&d);
	vogn_take(&d, 3, gh1, vogn_hh1, 0, &p);
	ok(same3(d.mu, r.mu) && same3(d.m, r.m) && same3(d.s, r.s),
	   "VOGN deterministic step 1: same mu, m, s without sigma");

	/*
	 * Step 2 with ĝ2 = (1, 0, -1), ĥ2 = (0.2, 0.6, 0.4):
	 *   m = 0.9 (0.6, 0.8, -1.95) + ĝ2 + 0.1 (0.88, -2.16, 0.6625)
	 *     = (0.54 + 1 + 0.088, 0.72 - 0.216, -1.755 - 1 + 0.06625)
	 *     = (1.628, 0.504, -2.68875)
	 *   s = 0.75 (0.4, 0.4, 1.1) + 0.5 ĥ2 = (0.4, 0.6, 1.025)
	 *   s + δ̃ = (0.5, 0.7, 1.125)
	 *   μ = (0.88 - 0.1·1.628/0.5, -2.16 - 0.1·0.504/0.7,
	 *        0.6625 + 0.1·2.68875/1.125) = (0.5544, -2.232, 0.9015)
	 *   σ = 1/√(5, 7, 11.25) = (0.447213595, 0.377964473, 0.298142397)
	 */
	vogn_take(&r, 3, gh2, hh2, 1, &p);
	is_vec3(r.m, 1.628, 0.504, -2.68875, 1e-6, "VOGN step 2: m");
	is_vec3(r.s, 0.4, 0.6, 1.025, 1e-6, "VOGN step 2: s");
	is_vec3(r.mu, 0.5544, -2.232, 0.9015, 1e-6, "VOGN step 2: mu");
	is_vec3(r.sigma, 0.447213595, 0.377964473, 0.298142397, 1e-6, "VOGN step 2: sigma");
	vogn_take(&d, 3, gh2, hh2, 0, &p);
	ok(same3(d.mu, r.mu), "VOGN deterministic step 2: same mu without sigma");

	/* 69 parameters: the same two steps, element i as element i % 3. */
	vogn_start(&l);
	vogn_take(&l, NLONG, gh1, vogn_hh1, 1, &p);
	vogn_take(&l, NLONG, gh2, hh2, 1, &p);
	ok(same_as3(l.mu, r.mu) && same_as3(l.m, r.m) && same_as3(l.s, r.s) &&
	           same_as3(l.sigma, r.sigma),
	   "VOGN on 69 parameters: vector chunks and tail agree bit for bit");

	/* n = 0 touches nothing (NULL arrays are never read). */
	bnn_vogn_step(&(bnn_vogn_arrays){ .n = 0 }, 0.1f, &p);
	bnn_vogn_sigma(0, NULL, NULL, &p);
	ok(1, "VOGN with n = 0 does nothing");
}

/* ---- IVON ---------------------------------------------------------------- */

static void test_ivon_hess(void)
{
	static const float g[3] = { 0.5f, 1.0f, -2.0f };
	static const float eps[3] = { 1.0f, -0.5f, 2.0f };
	static const float sig[3] = { 0.5f, 0.25f, 4.0f };
	static const float g2[3] = { 1.0f, 1.0f, 1.0f };
	static const float eps2[3] = { 0.5f, 0.5f, -2.0f };
	float hh[3] = { 9, 9, 9 }, mu[3] = { 0.3f, -1.0f, 2.0f };
	float lg[NLONG], le[NLONG], ls[NLONG], lh[NLONG];
	int i, agree = 1;

	/*
	 * Eq. 3 with θ - m = σε: ĥ = g ε/σ = (0.5·1/0.5, 1·(-0.5)/0.25,
	 * -2·2/4) = (1, -2, -1); with scale 0.5 and accumulate 0 (the old
	 * 9s are overwritten): (0.5, -1, -0.5).  A second sample
	 * g2 ε2/σ = (1, 2, -0.5), scaled by 0.5 and accumulated:
	 * (0.5 + 0.5, -1 + 1, -0.5 - 0.25) = (1, 0, -0.75).
	 */
	bnn_ivon_hess_acc(3, g, eps, sig, hh, 0.5f, 0);
	is_vec3(hh, 0.5, -1, -0.5, 1e-7, "IVON hess: first sample, scale 1/2");
	bnn_ivon_hess_acc(3, g2, eps2, sig, hh, 0.5f, 1);
	is_vec3(hh, 1, 0, -0.75, 1e-7, "IVON hess: second sample accumulated");

	/* The paper's form ĝ·(θ - m)/σ² with θ = m + σε, in double. */
	bnn_ivon_hess_acc(3, g, eps, sig, hh, 1.0f, 0);
	for (i = 0; i < 3; i++) {
		double theta = (double)mu[i] + (double)sig[i] * eps[i];

		if (fabs(hh[i] - g[i] * (theta - mu[i]) / ((double)sig[i] * sig[i])) > 1e-6)
			agree = 0;
	}
	ok(agree, "IVON hess equals g (theta - m)/sigma^2 (eq. 3)");

	spread3(lg, g);
	spread3(le, eps);
	spread3(ls, sig);
	bnn_ivon_hess_acc(NLONG, lg, le, ls, lh, 1.0f, 0);
	ok(same_as3(lh, hh), "IVON hess on 69 parameters agrees bit for bit");
}

static void test_ivon(void)
{
	bnn_ivon_params p = bnn_ivon_defaults();
	static const float hh1[3] = { 1.5f, -1.0f, 0.5f };
	static const float hh2[3] = { -4.0f, 0.2f, 0.5f };
	float sig2[3];
	ivon_run r, l;

	/*
	 * β1 = 0.5, β2 = 0.75 (so 1 - β2 = 1/4, ½(1 - β2)² = 1/32), δ = 0.5,
	 * λ = 8, α = 0.1, h = h0 = 0.5, g = 0.  Step t = 1 with
	 * ĝ = (0.5, 1, -2) and ĥ = (1.5, -1, 0.5):
	 *   line 4: g = 0.5·0 + 0.5 ĝ = (0.25, 0.5, -1)
	 *   line 5: h = 0.75·0.5 + ĥ/4 + (0.5 - ĥ)²/32/(0.5 + 0.5):
	 *     [0] 0.375 + 0.375 + 1/32           = 0.78125
	 *     [1] 0.375 - 0.25 + 2.25/32         = 0.1953125  (ĥ < 0, h > 0)
	 *     [2] 0.375 + 0.125 + 0              = 0.5
	 *   line 6: ḡ = g/(1 - 0.5) = (0.5, 1, -2)
	 *   line 7: Δ = (ḡ + 0.5 μ)/(h + 0.5) = (1/1.28125, 0/0.6953125,
	 *           -1.75/1) = (0.780487805, 0, -1.75);
	 *           μ - 0.1 Δ = (0.921951220, -2, 0.675)
	 *   line 8: σ = 1/√(8 (h + δ)) = 1/√(10.25, 5.5625, 8) =
	 *           (0.312347524, 0.423999152, 0.353553391)
	 */
	ivon_problem(&p);
	ivon_start(&r);
	ivon_take(&r, 3, gh1, hh1, 1, &p);
	is_vec3(r.g, 0.25, 0.5, -1, 1e-7, "IVON t=1: g (line 4)");
	is_vec3(r.h, 0.78125, 0.1953125, 0.5, 1e-7,
	        "IVON t=1: h (line 5), positive for negative hhat");
	is_vec3(r.mu, 0.921951220, -2, 0.675, 1e-6, "IVON t=1: mu (lines 6-7)");
	is_vec3(r.sigma, 0.312347524, 0.423999152, 0.353553391, 1e-6, "IVON t=1: sigma (line 8)");
	bnn_ivon_sigma(3, r.h, sig2, &p);
	ok(same3(sig2, r.sigma), "bnn_ivon_sigma matches the step's sigma");

	/*
	 * Step t = 2 with ĝ2 = (1, 0, -1) and ĥ2 = (-4, 0.2, 0.5):
	 *   g = 0.5 (0.25, 0.5, -1) + 0.5 ĝ2 = (0.625, 0.25, -1)
	 *   h[0] = 0.75·0.78125 - 4/4 + (0.78125 + 4)²/32/1.28125
	 *        = 0.5859375 - 1 + 22.8603515625/41 = 0.143507050
	 *        (a large negative ĥ: the correction keeps h positive)
	 *   h[1] = 0.75·0.1953125 + 0.2/4 + 0.0046875²/32/0.6953125
	 *        = 0.146484375 + 0.05 + 0.00000098753 = 0.196485363
	 *   h[2] = 0.375 + 0.125 + 0 = 0.5
	 *   ḡ = g/(1 - 0.25) = (0.833333333, 0.333333333, -1.333333333)
	 *   Δ = ((0.833333333 + 0.460975610)/0.643507050,
	 *        (0.333333333 - 1)/0.696485363, (-1.333333333 + 0.3375)/1)
	 *     = (2.011330737, -0.957187..., -0.995833333)
	 *   μ = (0.921951220 - 0.201133074, -2 + 0.095718690,
	 *        0.675 + 0.099583333)
	 *     = (0.720817612, -1.904281310, 0.774583333)
	 *   σ = 1/√(8 (0.643507050, 0.696485363, 1)) =
	 *       (0.440735823, 0.423642000, 0.353553391)
	 */
	ivon_take(&r, 3, gh2, hh2, 2, &p);
	is_vec3(r.g, 0.625, 0.25, -1, 1e-7, "IVON t=2: g");
	is_vec3(r.h, 0.143507050, 0.196485363, 0.5, 1e-6,
	        "IVON t=2: h stays positive for hhat = -4");
	is_vec3(r.mu, 0.720817612, -1.904281310, 0.774583333, 1e-6,
	        "IVON t=2: mu with bias correction 1/(1 - 0.25)");
	is_vec3(r.sigma, 0.440735823, 0.423642000, 0.353553391, 1e-6, "IVON t=2: sigma");

	/* The same two steps on 69 parameters agree bit for bit. */
	ivon_start(&l);
	ivon_take(&l, NLONG, gh1, hh1, 1, &p);
	ivon_take(&l, NLONG, gh2, hh2, 2, &p);
	ok(same_as3(l.mu, r.mu) && same_as3(l.g, r.g) && same_as3(l.h, r.h) &&
	           same_as3(l.sigma, r.sigma),
	   "IVON on 69 parameters: vector chunks and tail agree bit for bit");

	/*
	 * Clipping, ξ = 0.05, step t = 1 as above: Δ = (0.780487805, 0,
	 * -1.75) is clipped to (0.05, 0, -0.05), so μ = (1 - 0.005, -2,
	 * 0.5 + 0.005) = (0.995, -2, 0.505); h and σ as without clipping.
	 */
	p.clip_radius = 0.05;
	ivon_start(&r);
	ivon_take(&r, 3, gh1, hh1, 1, &p);
	is_vec3(r.mu, 0.995, -2, 0.505, 1e-7, "IVON clip 0.05: mu");
	is_vec3(r.h, 0.78125, 0.1953125, 0.5, 1e-7, "IVON clip 0.05: h unchanged");
	p.clip_radius = 0;

	/*
	 * Deterministic parameters (sigma and hhat NULL), step t = 1: g as
	 * before, h stays at h0 = 0.5, Δ = (ḡ + 0.5 μ)/(0.5 + 0.5) =
	 * (1, 0, -1.75), μ = (0.9, -2, 0.675).
	 */
	ivon_start(&r);
	ivon_take(&r, 3, gh1, NULL, 1, &p);
	is_vec3(r.g, 0.25, 0.5, -1, 1e-7, "IVON deterministic: g");
	is_vec3(r.h, 0.5, 0.5, 0.5, 0, "IVON deterministic: h stays h0");
	is_vec3(r.mu, 0.9, -2, 0.675, 1e-7, "IVON deterministic: mu");

	/* step < 1 counts as the first step: the same as t = 1. */
	ivon_start(&r);
	ivon_take(&r, 3, gh1, NULL, 0, &p);
	is_vec3(r.mu, 0.9, -2, 0.675, 1e-7, "IVON step 0 counts as t = 1");

	bnn_ivon_step(&(bnn_ivon_arrays){ .n = 0 }, 0.1f, 1, &p);
	bnn_ivon_hess_acc(0, NULL, NULL, NULL, NULL, 1.0f, 1);
	bnn_ivon_sigma(0, NULL, NULL, &p);
	ok(1, "IVON with n = 0 does nothing");
}

/*
 * One run for test_ivon_positive(): 10000 steps on NP parameters; checks
 * after every step that h + δ > 0 (and h > 0 when δ = 0), that h + δ did
 * not fall below half its previous value, and that σ is finite and
 * positive.  Returns 1 if all held; *minp gets the smallest h + δ seen.
 */
enum {
	NP_POS = 64,
	STEPS_POS = 10000
};

static int ivon_positive_run(double beta2, double delta, uint64_t seed, double *minp)
{
	bnn_ivon_params p = bnn_ivon_defaults();
	float mu[NP_POS], g[NP_POS], h[NP_POS], sigma[NP_POS];
	float gh[NP_POS], hh[NP_POS], prev[NP_POS];
	int i, t, good = 1;
	bnn_rng rng;

	p.beta2 = beta2;
	p.delta = delta;
	p.ess = 1000;
	bnn_rng_seed(&rng, seed);
	for (i = 0; i < NP_POS; i++) {
		mu[i] = 0;
		g[i] = 0;
		h[i] = 0.1f;
	}
	*minp = INFINITY;
	for (t = 1; t <= STEPS_POS; t++) {
		bnn_rng_normal(&rng, gh, NP_POS);
		bnn_rng_normal(&rng, hh, NP_POS);
		for (i = 0; i < NP_POS; i++) {
			hh[i] = 1000.0f * hh[i] - 300.0f;
			prev[i] = h[i];
		}
		bnn_ivon_step(&(bnn_ivon_arrays){ .n = NP_POS,
		                                  .mu = mu,
		                                  .ghat = gh,
		                                  .hhat = hh,
		                                  .g = g,
		                                  .h = h,
		                                  .sigma = sigma },
		              1e-3f, t, &p);
		for (i = 0; i < NP_POS; i++) {
			double pp = (double)h[i] + delta;
			double half = 0.5 * ((double)prev[i] + delta);

			if (!(pp > 0) || (delta == 0 && !(h[i] > 0)) || pp < half * (1 - 1e-5) ||
			    !isfinite(sigma[i]) || !(sigma[i] > 0))
				good = 0;
			if (pp < *minp)
				*minp = pp;
		}
	}
	return good;
}

/*
 * IVON, eq. 4: with ρ = 1 - β2 and P = h + δ, line 5 gives
 * P' = P (1 + x + x²/2), x = ρ(ĥ - h)/P, and 1 + x + x²/2 >= 1/2: so the
 * precision never falls below half its value, whatever ĥ.  10000 steps
 * with ĥ = 1000 z - 300 (z standard normal: mostly negative, often
 * hugely so) on 64 parameters, for β2 = 0.99999 and 0.9 and δ = 0 and
 * 0.01.  With δ = 0, h itself must stay positive.
 */
static void test_ivon_positive(void)
{
	static const double beta2[2] = { 0.99999, 0.9 };
	static const double delta[2] = { 0.0, 0.01 };
	int a, b;

	for (a = 0; a < 2; a++) {
		for (b = 0; b < 2; b++) {
			double minp;
			int good = ivon_positive_run(beta2[a], delta[b], (uint64_t)(42 + 2 * a + b),
			                             &minp);

			ok(good,
			   "IVON beta2 %g delta %g: h + delta > 0 (h > 0 "
			   "if delta = 0), never below half, sigma finite, "
			   "%d steps (min h + delta %g)",
			   beta2[a], delta[b], STEPS_POS, minp);
		}
	}
}

/* ---- BADAM --------------------------------------------------------------- */

static void test_badam(void)
{
	static const float v1[3] = { 4.0f, 0.01f, 0.0f };
	static const float v2[3] = { 7.0f, 0.0175f, 0.0f };
	static const float g[3] = { 1.0f, -0.5f, 0.0f };
	bnn_adam_params ap = bnn_adam_defaults();
	float sigma[3], w[3], m[3] = { 0, 0, 0 }, v[3] = { 0, 0, 0 };
	float lv[NLONG], lsig[NLONG];

	/*
	 * β2 = 0.75, N = 100, δ = 4.  t = 1: v̂ = v/(1 - 0.75) = 4 v =
	 * (16, 0.04, 0), √v̂ = (4, 0.2, 0); precision N √v̂ + δ =
	 * (404, 24, 4); σ = (1/√404, 1/√24, 1/2) =
	 * (0.0497518595, 0.204124145, 0.5).
	 */
	bnn_badam_sigma(3, v1, 1, 0.75, 100, 4, sigma);
	is_vec3(sigma, 0.0497518595, 0.204124145, 0.5, 1e-7, "BADAM sigma t=1 (eq. 10-12)");

	/* t = 2: 1 - 0.75² = 0.4375 and v = 0.4375 (16, 0.04, 0) give the
	 * same v̂, hence the same σ. */
	bnn_badam_sigma(3, v2, 2, 0.75, 100, 4, sigma);
	is_vec3(sigma, 0.0497518595, 0.204124145, 0.5, 1e-7, "BADAM sigma t=2: bias correction");

	/* δ = 0 (eq. 12 alone): v = 0 gives +inf. */
	bnn_badam_sigma(3, v1, 1, 0.75, 100, 0, sigma);
	ok(sigma[0] == (float)(1 / sqrt(400.0)) && isinf(sigma[2]),
	   "BADAM sigma without prior: 1/sqrt(N sqrt(v)), inf where v = 0");

	/*
	 * After one Adam step from zero moments with g = (1, -0.5, 0):
	 * v̂ = g², √v̂ = |g| = (1, 0.5, 0), so with N = 100 and δ = 4,
	 * σ = 1/√(100 |g| + 4) = (1/√104, 1/√54, 1/2) =
	 * (0.0980580676, 0.136082763, 0.5).
	 */
	w[0] = w[1] = w[2] = 0;
	bnn_adam_step(&(bnn_adam_arrays){ .n = 3, .w = w, .g = g, .m = m, .v = v }, 1e-3f, 1, &ap);
	bnn_badam_sigma(3, v, 1, ap.beta2, 100, 4, sigma);
	is_vec3(sigma, 0.0980580676, 0.136082763, 0.5, 1e-6, "BADAM sigma after one Adam step");

	spread3(lv, v);
	bnn_badam_sigma(NLONG, lv, 1, ap.beta2, 100, 4, lsig);
	ok(same_as3(lsig, sigma), "BADAM on 69 parameters agrees bit for bit");
}

/* ---- Bayes-by-Backprop -------------------------------------------------- */

static void test_softplus(void)
{
	float rho[2001], sigma[2001];
	double worst = 0;
	int i;

	/* softplus(0) = ln 2, softplus(-2) = ln(1 + e^-2) = 0.126928011,
	 * softplus(3) = 3 + ln(1 + e^-3) = 3.048587352. */
	is_float(bnn_softplus(0), 0.693147181, 1e-9, "softplus(0) = ln 2");
	is_float(bnn_softplus(-2), 0.126928011, 1e-9, "softplus(-2)");
	is_float(bnn_softplus(3), 3.048587352, 1e-9, "softplus(3)");
	is_rel(bnn_softplus(-50), exp(-50), 1e-12, "softplus(-50) = e^-50");
	is_float(bnn_softplus(800), 800, 0, "softplus(800) = 800, no overflow");

	/* The inverse: ln(e^σ - 1); σ0 = 1e-3 gives -6.907255237. */
	is_float(bnn_softplus_inverse(1e-3), -6.907255237, 1e-8, "softplus_inverse(1e-3)");
	is_float(bnn_softplus_inverse(bnn_softplus(-5)), -5, 1e-9,
	         "softplus_inverse(softplus(-5)) = -5");
	is_float(bnn_softplus_inverse(bnn_softplus(30)), 30, 1e-9,
	         "softplus_inverse(softplus(30)) = 30");
	ok(isinf(bnn_softplus_inverse(0)) && bnn_softplus_inverse(0) < 0,
	   "softplus_inverse(0) = -inf");

	/* The float array version against the double one, ρ from -87 to 87
	 * (where σ runs from 1.6e-38 to 87): relative error below 1e-6. */
	for (i = 0; i <= 2000; i++)
		rho[i] = -87.0f + 0.087f * (float)i;
	bnn_bbb_sigma(2001, rho, sigma);
	for (i = 0; i <= 2000; i++) {
		double want = bnn_softplus(rho[i]);
		double err = fabs(sigma[i] - want) / want;

		if (err > worst)
			worst = err;
	}
	ok(worst < 1e-6,
	   "bnn_bbb_sigma within 1e-6 relative of softplus "
	   "on [-87, 87] (worst %.3g)",
	   worst);

	/* Beyond -87 σ stays at softplus(-87), never 0; NaN stays NaN. */
	rho[0] = -200.0f;
	rho[1] = NAN;
	rho[2] = INFINITY;
	bnn_bbb_sigma(3, rho, sigma);
	ok(sigma[0] > 0 && fabs(sigma[0] - exp(-87)) < 1e-6 * exp(-87),
	   "softplus(-200) clamps to e^-87 > 0");
	ok(isnan(sigma[1]), "softplus(NaN) is NaN");
	ok(isinf(sigma[2]), "softplus(inf) is inf");
}

static void test_bbb(void)
{
	bnn_bbb_params p = bnn_bbb_defaults();
	bnn_adam_params ap = bnn_adam_defaults();
	float w[3], gd[3], am[3] = { 0, 0, 0 }, av[3] = { 0, 0, 0 };
	float dn = (float)(2.0 / 10.0);
	int i, t, same = 1;
	bbb_run r, l, pt;

	/*
	 * N = 10, δ = 2, lr 0.01, Adam's defaults; μ = (1, -2, 0.5),
	 * ρ = (0, -2, 3), so σ = softplus(ρ) = (0.693147181, 0.126928011,
	 * 3.048587352) and sigmoid(ρ) = (0.5, 0.119202922, 0.952574127);
	 * g_μ = (0.5, 1, -2), g_σ = (0.3, -0.4, 0.1).
	 *   ∂μ = g_μ + δμ/N = (0.5 + 0.2, 1 - 0.4, -2 + 0.1) = (0.7, 0.6, -1.9)
	 *   ∂σ = g_σ + (δσ - 1/σ)/N:
	 *     [0] 0.3 + (1.386294361 - 1.442695041)/10 = 0.294359932
	 *     [1] -0.4 + (0.253856022 - 7.878481604)/10 = -1.162462558
	 *     [2] 0.1 + (6.097174703 - 0.328020780)/10 = 0.676915392
	 *   ∂ρ = ∂σ sigmoid(ρ) = (0.147179966, -0.138568934, 0.644812089)
	 * Adam at t = 1: m = 0.1 ∂, v = 0.001 ∂², and the parameter moves
	 * by lr ∂/(|∂| + 1e-8) = 0.01 sign(∂) to 1e-9:
	 *   μ = (0.99, -2.01, 0.51), ρ = (-0.01, -1.99, 2.99),
	 *   σ = softplus(ρ) = (0.688159681, 0.128125303, 3.039063876)
	 */
	bbb_problem(&p);
	bbb_start(&r);
	bbb_take(&r, 3, 1, 1, &p);
	is_vec3(r.m_mu, 0.07, 0.06, -0.19, 1e-7, "BBB t=1: m_mu = 0.1 dmu");
	is_vec3(r.v_mu, 0.00049, 0.00036, 0.00361, 1e-9, "BBB t=1: v_mu = 0.001 dmu^2");
	is_vec3(r.m_rho, 0.0147179966, -0.0138568934, 0.0644812089, 1e-7,
	        "BBB t=1: m_rho = 0.1 dsigma sigmoid(rho)");
	is_vec3(r.v_rho, 2.16619424e-5, 1.92013494e-5, 4.15782630e-4, 1e-9,
	        "BBB t=1: v_rho = 0.001 drho^2");
	is_vec3(r.mu, 0.99, -2.01, 0.51, 1e-6, "BBB t=1: mu");
	is_vec3(r.rho, -0.01, -1.99, 2.99, 1e-6, "BBB t=1: rho");
	is_vec3(r.sigma, 0.688159681, 0.128125303, 3.039063876, 1e-6,
	        "BBB t=1: sigma = softplus(rho)");

	/* The μ update is bnn_adam_step's, bit for bit, for three steps,
	 * with the gradient g_μ + (δ/N) μ formed as the step forms it. */
	bbb_start(&r);
	copy3(w, mu0);
	for (t = 1; t <= 3; t++) {
		for (i = 0; i < 3; i++)
			gd[i] = bbb_gmu[i] + dn * w[i];
		bnn_adam_step(&(bnn_adam_arrays){ .n = 3, .w = w, .g = gd, .m = am, .v = av },
		              0.01f, t, &ap);
		bbb_take(&r, 3, 1, t, &p);
		if (!same3(w, r.mu))
			same = 0;
	}
	ok(same, "BBB's mu update is bnn_adam_step's for 3 steps");

	/* 69 parameters, the same three steps, bit for bit. */
	bbb_start(&l);
	for (t = 1; t <= 3; t++)
		bbb_take(&l, NLONG, 1, t, &p);
	ok(same_as3(l.mu, r.mu) && same_as3(l.rho, r.rho) && same_as3(l.sigma, r.sigma) &&
	           same_as3(l.m_rho, r.m_rho) && same_as3(l.v_rho, r.v_rho),
	   "BBB on 69 parameters agrees bit for bit");

	/* Point parameters (rho NULL): μ alone with ∂μ = (0.7, 0.6, -1.9):
	 * the same m, v and μ as the variational case at t = 1. */
	bbb_start(&pt);
	bbb_take(&pt, 3, 0, 1, &p);
	is_vec3(pt.m_mu, 0.07, 0.06, -0.19, 1e-7, "BBB point: m_mu = 0.1 dmu");
	is_vec3(pt.mu, 0.99, -2.01, 0.51, 1e-6, "BBB point: mu");

	bnn_bbb_step(&(bnn_bbb_arrays){ .n = 0 }, 0.01f, 1, &p);
	bnn_bbb_sigma(0, NULL, NULL);
	ok(1, "BBB with n = 0 does nothing");
}

/* ---- the sampler --------------------------------------------------------- */

static void test_sample(void)
{
	enum {
		NB = 3 * BNN_SAMPLE_BLOCK + 77,
		NG = 4,
		NS = 5,
		R = 20000
	};
	static const float gmu[NG] = { 0.0f, 1.5f, -2.0f, 10.0f };
	static const float gsig[NG] = { 1.0f, 0.5f, 3.0f, 1e-3f };
	float *mu = malloc(NB * sizeof *mu), *sig = malloc(NB * sizeof *sig);
	float *eps = malloc(NB * sizeof *eps), *th = malloc(NB * sizeof *th);
	float *ref = malloc(NB * sizeof *ref), *th2 = malloc(NB * sizeof *th2);
	static const float smu[NS] = { 0.0f, 1.0f, -3.0f, 0.25f, 100.0f };
	static const float ssig[NS] = { 1.0f, 2.0f, 0.1f, 0.5f, 10.0f };
	double sum[NS] = { 0 }, sq[NS] = { 0 };
	bnn_rng rng, rng2;
	long i;
	int k, exact = 1, mom = 1, smom = 1;

	if (!mu || !sig || !eps || !th || !ref || !th2)
		tap_bail_out("out of memory");
	for (i = 0; i < NB; i++) {
		mu[i] = gmu[i % NG];
		sig[i] = gsig[i % NG];
	}

	/* θ = μ + σ ε exactly, ε as one bnn_rng_normal() call over all NB
	 * gives it, and the same θ when ε is not wanted. */
	bnn_rng_seed(&rng, 2024);
	rng2 = rng;
	bnn_posterior_sample(NB, mu, sig, eps, th, &rng);
	bnn_rng_normal(&rng2, ref, NB);
	ok(memcmp(ref, eps, NB * sizeof *eps) == 0 && memcmp(&rng, &rng2, sizeof rng) == 0,
	   "sample: eps is one bnn_rng_normal call over all %d, rng advanced alike", NB);
	for (i = 0; i < NB; i++) {
		float want = mu[i] + sig[i] * eps[i];

		if (memcmp(&want, &th[i], sizeof want) != 0)
			exact = 0;
	}
	ok(exact, "sample: theta = mu + sigma eps exactly");
	bnn_rng_seed(&rng, 2024);
	bnn_posterior_sample(NB, mu, sig, NULL, th2, &rng);
	ok(memcmp(th, th2, NB * sizeof *th) == 0, "sample: eps NULL gives the same theta");

	/*
	 * Moments over the NB/4 ≈ 3090 entries of each group (μ, σ) =
	 * (0, 1), (1.5, 0.5), (-2, 3), (10, 1e-3): the sample mean is within
	 * 5 σ/√n of μ, the sample variance within 5 σ² √(2/n) of σ².
	 */
	for (k = 0; k < NG; k++) {
		double s = 0, q = 0, cnt = 0, mean, var;

		for (i = k; i < NB; i += NG) {
			s += th[i];
			cnt++;
		}
		mean = s / cnt;
		for (i = k; i < NB; i += NG)
			q += (th[i] - mean) * (th[i] - mean);
		var = q / (cnt - 1);
		if (fabs(mean - gmu[k]) > 5 * gsig[k] / sqrt(cnt) ||
		    fabs(var - (double)gsig[k] * gsig[k]) >
		            5 * (double)gsig[k] * gsig[k] * sqrt(2 / cnt)) {
			tap_diag("group %d: mean %g var %g", k, mean, var);
			mom = 0;
		}
	}
	ok(mom, "sample: group means and variances within 5 standard errors");

	/* Many draws of 5 entries (the narrow path): per-entry moments over
	 * R = 20000 draws, same tolerances. */
	bnn_rng_seed(&rng, 7);
	for (k = 0; k < R; k++) {
		bnn_posterior_sample(NS, smu, ssig, NULL, th, &rng);
		for (i = 0; i < NS; i++) {
			sum[i] += th[i];
			sq[i] += (double)th[i] * th[i];
		}
	}
	for (i = 0; i < NS; i++) {
		double mean = sum[i] / R;
		double var = (sq[i] - R * mean * mean) / (R - 1);

		if (fabs(mean - smu[i]) > 5 * ssig[i] / sqrt(R) ||
		    fabs(var - (double)ssig[i] * ssig[i]) >
		            5 * (double)ssig[i] * ssig[i] * sqrt(2.0 / R)) {
			tap_diag("entry %ld: mean %g var %g", i, mean, var);
			smom = 0;
		}
	}
	ok(smom, "sample: per-entry moments over %d draws", R);

	rng2 = rng;
	bnn_posterior_sample(0, NULL, NULL, NULL, NULL, &rng);
	ok(memcmp(&rng, &rng2, sizeof rng) == 0, "sample: n = 0 draws nothing");

	free(mu);
	free(sig);
	free(eps);
	free(th);
	free(ref);
	free(th2);
}

/* ---- KL ------------------------------------------------------------------ */

static void test_kl(void)
{
	static const float mu[3] = { 0.0f, 1.0f, -0.5f };
	static const float sig[3] = { 1.0f, 0.5f, 2.0f };
	static const float mu2[2] = { 0.3f, -1.0f };
	static const float sig2[2] = { 0.5f, 0.2f };
	enum {
		NR = 1000,
		M = 200000
	};
	float rmu[NR], rsig[NR], z[2 * NR];
	float tiny = 1e-40f, zero = 0.0f, one = 1.0f, nan = NAN;
	float *th, *ep, *bmu, *bsig;
	double want = 0, kl, mc = 0, mc2 = 0, sd;
	bnn_rng rng;
	long i;

	/*
	 * δ = 1: terms δσ² + δμ² - 1 - ln(δσ²) = (1 + 0 - 1 - 0,
	 * 0.25 + 1 - 1 - ln 0.25, 4 + 0.25 - 1 - ln 4) = (0,
	 * 0.25 + ln 4, 3.25 - ln 4), sum 3.5, KL = 1.75.
	 */
	is_float(bnn_kl_gaussian(3, mu, sig, 1.0), 1.75, 1e-14, "KL hand value 1.75");
	/* δ = 4, μ = 0.5, σ = 0.5: 1 + 1 - 1 - ln 1 = 1, KL = 0.5. */
	is_float(bnn_kl_gaussian(1, &mu[2], &sig[1], 4.0), 0.5, 1e-14,
	         "KL hand value 0.5 (delta 4)");
	/* The posterior equal to the prior (μ = 0, σ = 1/√δ) has KL 0:
	 * δ = 1, first entry. */
	is_float(bnn_kl_gaussian(1, mu, sig, 1.0), 0, 1e-15, "KL of the prior");
	is_float(bnn_kl_gaussian(0, NULL, NULL, 1.0), 0, 0, "KL with n = 0");

	/* Against the closed form evaluated with libm, 1000 random entries
	 * (a vectorised part and a tail), δ = 3. */
	bnn_rng_seed(&rng, 99);
	bnn_rng_normal(&rng, z, 2 * NR);
	for (i = 0; i < NR; i++) {
		double s2;

		rmu[i] = z[i];
		rsig[i] = (float)exp(2.0 * z[NR + i]);
		s2 = (double)rsig[i] * rsig[i];
		want += 3 * s2 + 3 * (double)rmu[i] * rmu[i] - 1 - log(3 * s2);
	}
	want *= 0.5;
	is_rel(bnn_kl_gaussian(NR, rmu, rsig, 3.0), want, 1e-12,
	       "KL of 1000 random entries against libm");

	/* A subnormal σ (1e-40): the term keeps -2 ln σ = 184.2068074. */
	is_rel(bnn_kl_gaussian(1, &zero, &tiny, 1.0), 0.5 * (-1 - 2 * log((double)tiny)), 1e-12,
	       "KL with a subnormal sigma");
	ok(isinf(bnn_kl_gaussian(1, &zero, &zero, 1.0)), "KL with sigma = 0 is +inf");
	ok(isnan(bnn_kl_gaussian(1, &nan, &one, 1.0)), "KL with mu NaN is NaN");

	/*
	 * Monte Carlo: KL = E_q[ln q(θ) - ln p(θ)] with, per weight,
	 * ln q - ln p = -ε²/2 - ln σ - ½ ln δ + δθ²/2.  Two weights,
	 * μ = (0.3, -1), σ = (0.5, 0.2), δ = 2: closed form
	 * ½[(0.5 + 0.18 - 1 - ln 0.5) + (0.08 + 2 - 1 - ln 0.08)] =
	 * 1.989437912.  M = 200000 draws (one call, 2M entries); the
	 * estimate is within 5 standard errors.
	 */
	kl = bnn_kl_gaussian(2, mu2, sig2, 2.0);
	is_float(kl, 1.989437912, 1e-8, "KL two weights, closed form");
	th = malloc(2 * M * sizeof *th);
	ep = malloc(2 * M * sizeof *ep);
	bmu = malloc(2 * M * sizeof *bmu);
	bsig = malloc(2 * M * sizeof *bsig);
	if (!th || !ep || !bmu || !bsig)
		tap_bail_out("out of memory");
	for (i = 0; i < 2 * M; i++) {
		bmu[i] = mu2[i % 2];
		bsig[i] = sig2[i % 2];
	}
	bnn_rng_seed(&rng, 5);
	bnn_posterior_sample(2 * M, bmu, bsig, ep, th, &rng);
	for (i = 0; i < M; i++) {
		double d = 0;
		int j;

		for (j = 0; j < 2; j++) {
			double e = ep[2 * i + j], t = th[2 * i + j];

			d += -0.5 * e * e - log((double)sig2[j]) - 0.5 * log(2.0) +
			     0.5 * 2.0 * t * t;
		}
		mc += d;
		mc2 += d * d;
	}
	mc /= M;
	sd = sqrt((mc2 / M - mc * mc) / M);
	ok(fabs(mc - kl) < 5 * sd,
	   "KL: Monte-Carlo estimate %.5f +- %.5f "
	   "agrees with %.5f",
	   mc, sd, kl);
	free(th);
	free(ep);
	free(bmu);
	free(bsig);
}

/* ---- SNR and pruning ----------------------------------------------------- */

static void test_snr(void)
{
	static const float mu[4] = { 1.0f, -2.0f, 0.0f, 3.0f };
	static const float sig[4] = { 0.5f, 4.0f, 1.0f, 0.0f };
	float out[4];

	/* |μ|/σ = (2, 0.5, 0, inf) */
	bnn_snr(4, mu, sig, out);
	ok(out[0] == 2 && out[1] == 0.5f && out[2] == 0 && isinf(out[3]),
	   "SNR |mu|/sigma = (2, 0.5, 0, inf)");
}

/* The zeroed indices of w as a string, "1,3,7". */
static const char *zeroed(const float *w, int n)
{
	static char buf[256];
	size_t len = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < n && len + 8 < sizeof buf; i++)
		if (w[i] == 0.0f)
			len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%d", len ? "," : "",
			                        i);
	return buf;
}

/* Reference order for the sort check: score, then index. */
struct ref_entry {
	float score;
	long index;
};

static int ref_cmp(const void *a, const void *b)
{
	const struct ref_entry *x = a, *y = b;

	if (x->score != y->score)
		return x->score < y->score ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static void test_prune(void)
{
	static const float score[10] = { 5, 1, 3, 1, 2, 9, 1, 0, 7, 3 };
	float w[10], w5[5], w100[100], s100[100];
	float odd[5] = { -1.0f, NAN, 0.0f, -0.0f, 2.0f };
	enum {
		NP = 5000
	};
	float *pw, *ps;
	struct ref_entry *ref;
	bnn_rng rng;
	long k, i;
	int good = 1;

	/* Scores (5, 1, 3, 1, 2, 9, 1, 0, 7, 3).  ⌊0.3·10⌋ = 3: the 0 at
	 * index 7, then two of the three 1s, the lower indices 1 and 3. */
	for (i = 0; i < 10; i++)
		w[i] = 1.0f + (float)i;
	k = bnn_prune_by_score(10, w, score, 0.3);
	is_int(k, 3, "prune 0.3 of 10: 3 entries");
	is_str(zeroed(w, 10), "1,3,7", "prune 0.3: index 7, then ties 1 and 3");
	/* 0.5: 5 entries: 7, the three 1s (1, 3, 6), and the 2 at 4. */
	for (i = 0; i < 10; i++)
		w[i] = 1.0f + (float)i;
	bnn_prune_by_score(10, w, score, 0.5);
	is_str(zeroed(w, 10), "1,3,4,6,7", "prune 0.5");
	/* 0.6: one of the two 3s as well, the lower index 2. */
	for (i = 0; i < 10; i++)
		w[i] = 1.0f + (float)i;
	bnn_prune_by_score(10, w, score, 0.6);
	is_str(zeroed(w, 10), "1,2,3,4,6,7", "prune 0.6: tie 3 at 2 before 9");
	/* The ends: 0 prunes nothing, 1 (and beyond) everything; NaN counts
	 * as 0. */
	for (i = 0; i < 10; i++)
		w[i] = 1.0f + (float)i;
	k = bnn_prune_by_score(10, w, score, 0.0);
	ok(k == 0 && zeroed(w, 10)[0] == '\0', "prune 0: nothing");
	k = bnn_prune_by_score(10, w, score, NAN);
	ok(k == 0 && zeroed(w, 10)[0] == '\0', "prune NaN: nothing");
	k = bnn_prune_by_score(10, w, score, 1.0);
	is_str(zeroed(w, 10), "0,1,2,3,4,5,6,7,8,9", "prune 1: everything");
	is_int(k, 10, "prune 1 returns n");
	for (i = 0; i < 10; i++)
		w[i] = 1.0f + (float)i;
	is_int(bnn_prune_by_score(10, w, score, 7.5), 10, "prune 7.5 clamps to 1");
	is_int(bnn_prune_by_score(0, NULL, NULL, 0.5), 0, "prune n = 0");

	/* ⌊0.29·100⌋ = 29, although 0.29·100 is 28.999999999999996. */
	for (i = 0; i < 100; i++) {
		w100[i] = 1;
		s100[i] = (float)i;
	}
	is_int(bnn_prune_by_score(100, w100, s100, 0.29), 29, "prune 0.29 of 100: 29 entries");
	ok(w100[28] == 0 && w100[29] == 1, "prune 0.29: indices 0 to 28");

	/* Scores (-1, NaN, 0, -0, 2), 0.6 of 5 = 3: NaN lowest (1), then
	 * -1 (0), then 0 and -0 are equal: the lower index 2. */
	for (i = 0; i < 5; i++)
		w5[i] = 1;
	bnn_prune_by_score(5, w5, odd, 0.6);
	is_str(zeroed(w5, 5), "0,1,2", "prune: NaN lowest, -0 equals 0");

	/* Magnitude (score NULL): w = (0.5, -3, 0.1, 2, -0.2), 0.4 of 5 = 2:
	 * |w| lowest at 2 (0.1) and 4 (0.2). */
	w5[0] = 0.5f;
	w5[1] = -3.0f;
	w5[2] = 0.1f;
	w5[3] = 2.0f;
	w5[4] = -0.2f;
	bnn_prune_by_score(5, w5, NULL, 0.4);
	is_str(zeroed(w5, 5), "2,4", "prune by magnitude");
	ok(w5[0] == 0.5f && w5[1] == -3.0f && w5[3] == 2.0f, "prune by magnitude keeps the others");

	/* 5000 entries with many ties (integer scores 0..99 and negative
	 * ones), 0.37: the zeroed set is the first 1850 of a sort by
	 * (score, index). */
	pw = malloc(NP * sizeof *pw);
	ps = malloc(NP * sizeof *ps);
	ref = malloc(NP * sizeof *ref);
	if (!pw || !ps || !ref)
		tap_bail_out("out of memory");
	bnn_rng_seed(&rng, 11);
	for (i = 0; i < NP; i++) {
		pw[i] = 1;
		ps[i] = (float)bnn_rng_below(&rng, 150) - 50.0f;
		ref[i].score = ps[i];
		ref[i].index = i;
	}
	qsort(ref, NP, sizeof *ref, ref_cmp);
	k = bnn_prune_by_score(NP, pw, ps, 0.37);
	is_int(k, 1850, "prune 0.37 of 5000: 1850 entries");
	for (i = 0; i < NP; i++)
		if ((pw[ref[i].index] == 0) != (i < 1850))
			good = 0;
	ok(good, "prune 0.37 of 5000: the first 1850 by (score, index)");
	free(pw);
	free(ps);
	free(ref);
}

/* ---- the fused steps of mc = 1 -------------------------------------------- */

/* θ[i] = μ[i] + σ[i]·noise[i] for a 3-vector, the sample the fused steps
 * must leave (the expression of bnn_posterior_sample). */
static void sample3(float *theta, const float *mu, const float *sigma, const float *noise)
{
	int i;

	for (i = 0; i < 3; i++)
		theta[i] = mu[i] + sigma[i] * noise[i];
}

static void test_vogn_fused(void)
{
	bnn_vogn_params p = bnn_vogn_defaults();
	float want[3];
	vogn_run r, f, l;

	/* test_vogn's step 1, then θ = μ + σ·noise with the new μ and σ:
	 * μ = (0.88, -2.16, 0.6625), σ = (0.447213595, 0.447213595,
	 * 0.288675135): θ = (1.327213595, -3.054427191, 0.806837568). */
	vogn_problem(&p);
	vogn_start(&r);
	vogn_take(&r, 3, gh1, vogn_hh1, 1, &p);
	sample3(want, r.mu, r.sigma, fused_noise);
	vogn_start(&f);
	vogn_take_sample(&f, 3, 1, &p);
	is_vec3(f.theta, 1.327213595, -3.054427191, 0.806837568, 1e-6,
	        "VOGN fused: theta = new mu + new sigma * noise (line 9)");
	ok(same3(f.theta, want) && same3(f.mu, r.mu) && same3(f.m, r.m) && same3(f.s, r.s),
	   "VOGN fused = bnn_vogn_step then the sample, bit for bit");

	/* Deterministic: θ = μ. */
	vogn_start(&f);
	vogn_take_sample(&f, 3, 0, &p);
	ok(same3(f.theta, f.mu) && same3(f.mu, r.mu),
	   "VOGN fused, deterministic: theta = mu, the same mu");

	/* 69 parameters: chunks and tail agree with the 3-vector. */
	vogn_start(&l);
	vogn_take_sample(&l, NLONG, 1, &p);
	ok(same_as3(l.theta, want) && same_as3(l.mu, r.mu) && same_as3(l.s, r.s),
	   "VOGN fused on 69 parameters agrees bit for bit");
	bnn_vogn_step_sample(&(bnn_vogn_arrays){ .n = 0, .stochastic = 1 }, 0.1f, &p);
	ok(1, "VOGN fused with n = 0 does nothing");
}

static void test_ivon_fused(void)
{
	bnn_ivon_params p = bnn_ivon_defaults();
	float sigma[3], want[3];
	ivon_run r, l;

	/*
	 * test_ivon's step t = 1 (β1 = 0.5, β2 = 0.75, h0 = 0.5, δ = 0.5,
	 * λ = 8, α = 0.1), with ĥ from the sample: 1/σ² = λ(h + δ) = 8, so
	 * ĥ = ĝ·(θ - μ)·8 = (0.5·0.375·8, 1·(-0.125)·8, -2·(-0.03125)·8)
	 * = (1.5, -1, 0.5), test_ivon's ĥ.  Hence its g, h and μ:
	 * h = (0.78125, 0.1953125, 0.5), μ = (0.921951220, -2, 0.675), and
	 * σ = (0.312347524, 0.423999152, 0.353553391) (line 8), so the next
	 * sample with noise (1, -2, 0.5) is θ = (0.921951220 + 0.312347524,
	 * -2 - 0.847998304, 0.675 + 0.176776696)
	 * = (1.234298744, -2.847998304, 0.851776696).
	 */
	ivon_problem(&p);
	ivon_start(&r);
	ivon_take_sample(&r, 3, 1, &p);
	is_vec3(r.g, 0.25, 0.5, -1, 1e-7, "IVON fused: g (line 4)");
	is_vec3(r.h, 0.78125, 0.1953125, 0.5, 1e-7,
	        "IVON fused: h with hhat = g (theta - m)/sigma^2 (lines 3, 5)");
	is_vec3(r.mu, 0.921951220, -2, 0.675, 1e-6, "IVON fused: mu (line 7)");
	is_vec3(r.theta, 1.234298744, -2.847998304, 0.851776696, 1e-6,
	        "IVON fused: the next theta (line 2)");
	bnn_ivon_sigma(3, r.h, sigma, &p);
	sample3(want, r.mu, sigma, fused_noise);
	ok(same3(r.theta, want), "IVON fused: theta = mu + bnn_ivon_sigma(h) * noise bit for bit");

	/* Deterministic: h stays at h0, μ as test_ivon's, θ = μ. */
	ivon_start(&r);
	ivon_take_sample(&r, 3, 0, &p);
	is_vec3(r.h, 0.5, 0.5, 0.5, 0, "IVON fused, deterministic: h stays h0");
	is_vec3(r.mu, 0.9, -2, 0.675, 1e-7, "IVON fused, deterministic: mu");
	ok(same3(r.theta, r.mu), "IVON fused, deterministic: theta = mu");

	/* 69 parameters agree with the 3-vector. */
	ivon_start(&l);
	ivon_take_sample(&l, NLONG, 1, &p);
	ivon_start(&r);
	ivon_take_sample(&r, 3, 1, &p);
	ok(same_as3(l.mu, r.mu) && same_as3(l.h, r.h) && same_as3(l.theta, r.theta),
	   "IVON fused on 69 parameters agrees bit for bit");
	bnn_ivon_step_sample(&(bnn_ivon_arrays){ .n = 0, .stochastic = 1 }, 0.1f, 1, &p);
	ok(1, "IVON fused with n = 0 does nothing");
}

static void test_bbb_fused(void)
{
	bnn_bbb_params p = bnn_bbb_defaults();
	float want[3];
	bbb_run r, f;

	/*
	 * test_bbb's step t = 1 (N = 10, δ = 2, lr 0.01) with g_σ = g∘ε:
	 * μ = (0.99, -2.01, 0.51), σ = (0.688159681, 0.128125303,
	 * 3.039063876), so the next sample with noise (1, -2, 0.5) is
	 * θ = (1.678159681, -2.266250606, 2.029531938), and ε = noise.
	 */
	bbb_problem(&p);
	bbb_start(&r);
	bbb_take(&r, 3, 1, 1, &p);
	sample3(want, r.mu, r.sigma, fused_noise);
	bbb_start(&f);
	bbb_take_sample(&f, 1, &p);
	is_vec3(f.theta, 1.678159681, -2.266250606, 2.029531938, 1e-6,
	        "BBB fused: the next theta = new mu + softplus(new rho) noise");
	ok(same3(f.theta, want) && same3(f.mu, r.mu) && same3(f.rho, r.rho) &&
	           same3(f.m_rho, r.m_rho) && same3(f.v_rho, r.v_rho),
	   "BBB fused = bnn_bbb_step with g_sigma = g eps, then the sample");
	ok(same3(f.eps, fused_noise), "BBB fused: eps = noise after");

	/* Deterministic (rho NULL): Adam on μ, θ = μ, ε untouched. */
	bbb_start(&f);
	bbb_take_sample(&f, 0, &p);
	is_vec3(f.mu, 0.99, -2.01, 0.51, 1e-6, "BBB fused, deterministic: mu");
	ok(same3(f.theta, f.mu) && same3(f.eps, bbb_eps0),
	   "BBB fused, deterministic: theta = mu, eps untouched");
}

int main(void)
{
	test_defaults();
	test_vogn();
	test_ivon_hess();
	test_ivon();
	test_ivon_positive();
	test_vogn_fused();
	test_ivon_fused();
	test_badam();
	test_softplus();
	test_bbb();
	test_bbb_fused();
	test_sample();
	test_kl();
	test_snr();
	test_prune();
	return tap_done();
}
