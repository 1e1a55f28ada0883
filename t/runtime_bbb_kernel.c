/*
 * runtime_bbb_kernel.c: TAP tests of Bayes-by-Backprop's fused update
 * kernels (runtime/optim/optim_bbb.c: bnn_bbb_step, bnn_bbb_step_sample,
 * bnn_bbb_sigma) on a few thousand elements, against a double-precision
 * evaluation of the same equations (docs/optimizers/bbb.md, "The
 * update"):
 *
 *   ∂μ = g_μ + δμ/N,  ∂σ = g_σ + (δσ − 1/σ)/N,  ∂ρ = ∂σ·sigmoid(ρ),
 *   μ ← Adam(μ, ∂μ),  ρ ← Adam(ρ, ∂ρ),  σ ← softplus(ρ)
 *
 * (sampling: g_σ = g·ε, then θ ← μ + σ·noise, ε ← noise).  ρ runs from
 * −90 to 30, so the kernels' clamp at ρ = −87 (σ and the sigmoid stay at
 * their values there) is crossed; n = 3001 is not a multiple of the
 * kernels' blocks, so their tail is exercised, and the same update done
 * in pieces of other lengths must give the same bits.  Each output is
 * compared within a relative tolerance of REL_TOL of the sum of the
 * magnitudes of the terms it is made of (its condition), so that a
 * cancellation of two exact terms cannot fail the test, while an error
 * in any one term shows.  Also: σ = bnn_bbb_sigma() of the new ρ, bit
 * for bit; bnn_bbb_step_sample = bnn_bbb_step with g_σ = g∘ε followed by
 * the sample, bit for bit; the deterministic (rho NULL) path; NaN in
 * gives NaN out.  The inputs come from a fixed-seed generator of the
 * test's own, so they do not depend on the library's.
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

#define NK      3001 /* elements: not a multiple of any block size */
#define REL_TOL 4e-6 /* relative to each output's condition */
#define T_STEP  3L   /* the Adam step t: bias corrections matter */
#define LR      1e-3f

/* The test's own generator: splitmix64, and Box-Muller in double. */
static uint64_t kseed = 12345;

static double kuniform(void)
{
	uint64_t z = (kseed += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	z ^= z >> 31;
	return ((double)(z >> 11) + 0.5) / 9007199254740992.0; /* (0, 1) */
}

static double knormal(void)
{
	double u = kuniform(), v = kuniform();

	return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* The kernels' arrays: inputs (…0) and the outputs of each call. */
struct kset {
	float mu[NK], rho[NK], sigma[NK], g[NK], gs[NK], eps[NK];
	float m_mu[NK], v_mu[NK], m_rho[NK], v_rho[NK], theta[NK];
};

static struct kset in0, a, b;
static float noise[NK];

static void make_inputs(void)
{
	int i;

	for (i = 0; i < NK; i++) {
		/* ρ evenly from −90 to 30, μ, g and the moments random */
		in0.rho[i] = (float)(-90.0 + 120.0 * i / (NK - 1));
		in0.mu[i] = (float)(0.1 * knormal());
		in0.g[i] = (float)(0.01 * knormal());
		in0.eps[i] = (float)knormal();
		in0.gs[i] = in0.g[i] * in0.eps[i];
		in0.m_mu[i] = (float)(1e-3 * knormal());
		in0.v_mu[i] = (float)(1e-5 * kuniform());
		in0.m_rho[i] = (float)(1e-3 * knormal());
		in0.v_rho[i] = (float)(1e-5 * kuniform());
		in0.theta[i] = 0.0f;
		noise[i] = (float)knormal();
	}
	bnn_bbb_sigma(NK, in0.rho, in0.sigma);
}

static bnn_bbb_params kparams(void)
{
	bnn_bbb_params p = bnn_bbb_defaults();

	p.prior_precision = 25;
	p.n_data = 60000;
	return p;
}

/* Adam in double: the new moments and parameter, and the conditions
 * (sums of the magnitudes of the terms) of m and of the new parameter;
 * gabs is that of the gradient. */
struct adam_ref {
	double m, v, w;      /* new moment, second moment, parameter */
	double mcond, wcond; /* conditions of m and w */
};

static struct adam_ref adam_ref(double w, double gr, double gabs, double m, double v,
                                const bnn_bbb_params *p)
{
	struct adam_ref r;
	double t = (double)T_STEP;
	double step = LR / (1.0 - pow(p->beta1, t));
	double rbc2 = 1.0 / sqrt(1.0 - pow(p->beta2, t));
	double d, move;

	r.m = p->beta1 * m + (1.0 - p->beta1) * gr;
	r.v = p->beta2 * v + (1.0 - p->beta2) * gr * gr;
	r.mcond = fabs(p->beta1 * m) + (1.0 - p->beta1) * gabs;
	d = sqrt(r.v) * rbc2 + p->eps;
	move = step * r.m / d;
	r.w = w - move;
	/* |w| + |move|, and how far an error in m within its condition
	 * moves w (v's relative error moves it by as much as m's) */
	r.wcond = fabs(w) + fabs(move) + step * r.mcond / d;
	return r;
}

/* Worst |got − want|/cond over the elements so far. */
static void worse(double *worst, double got, double want, double cond)
{
	double e = fabs(got - want) / cond;

	if (!(e <= *worst)) /* NaN counts as worst */
		*worst = e;
}

/* sampling: the kernel was bnn_bbb_step_sample (θ, ε out), else
 * bnn_bbb_step (σ out).  Checks every output against the double
 * evaluation from in0. */
static void check_update(const struct kset *k, int sampling, const char *what)
{
	bnn_bbb_params p = kparams();
	double dn = p.prior_precision / p.n_data, in = 1.0 / p.n_data;
	double wm = 0, wv = 0, wr = 0, wmu = 0, wmm = 0, wvm = 0, ws = 0;
	int i, eps_ok = 1;

	for (i = 0; i < NK; i++) {
		/* the kernels clamp at ρ = −87: σ and the sigmoid stay there */
		double r = in0.rho[i] < -87.0f ? -87.0 : in0.rho[i];
		double s = bnn_softplus(r), sg = 1.0 / (1.0 + exp(-r));
		double gs = sampling ? (double)in0.g[i] * in0.eps[i] : in0.gs[i];
		double gr = (gs + dn * s - in / s) * sg;
		double gabs = (fabs(gs) + dn * s + in / s) * sg;
		double gm = in0.g[i] + dn * in0.mu[i];
		struct adam_ref ar = adam_ref(in0.rho[i], gr, gabs, in0.m_rho[i], in0.v_rho[i], &p);
		struct adam_ref am = adam_ref(in0.mu[i], gm, fabs(in0.g[i]) + fabs(dn * in0.mu[i]),
		                              in0.m_mu[i], in0.v_mu[i], &p);
		/* σ of the kernel's own new ρ: the float ρ's rounding moves
		 * σ = e^ρ by up to 4e-6 relative near −87, more than the
		 * kernels' error */
		double rn = k->rho[i] < -87.0f ? -87.0 : k->rho[i];
		double sn = bnn_softplus(rn);

		worse(&wm, k->m_rho[i], ar.m, ar.mcond);
		worse(&wv, k->v_rho[i], ar.v, ar.v);
		worse(&wr, k->rho[i], ar.w, ar.wcond);
		worse(&wmm, k->m_mu[i], am.m, am.mcond);
		worse(&wvm, k->v_mu[i], am.v, am.v);
		worse(&wmu, k->mu[i], am.w, am.wcond);
		if (sampling) {
			double want = (double)k->mu[i] + sn * noise[i];

			worse(&ws, k->theta[i], want, fabs(k->mu[i]) + fabs(sn * noise[i]));
			if (k->eps[i] != noise[i])
				eps_ok = 0;
		} else {
			worse(&ws, k->sigma[i], sn, sn);
		}
	}
	ok(wm <= REL_TOL, "%s: m_rho within %g of double (worst %.3g)", what, REL_TOL, wm);
	ok(wv <= REL_TOL, "%s: v_rho within %g of double (worst %.3g)", what, REL_TOL, wv);
	ok(wr <= REL_TOL, "%s: rho within %g of double (worst %.3g)", what, REL_TOL, wr);
	ok(wmm <= REL_TOL && wvm <= REL_TOL && wmu <= REL_TOL,
	   "%s: m_mu, v_mu, mu within %g of double (worst %.3g, %.3g, %.3g)", what, REL_TOL, wmm,
	   wvm, wmu);
	if (sampling) {
		ok(ws <= REL_TOL,
		   "%s: theta = mu + softplus(rho) noise within "
		   "%g (worst %.3g)",
		   what, REL_TOL, ws);
		ok(eps_ok, "%s: eps = noise after", what);
	} else {
		/* the documented bound of softplus itself */
		ok(ws < 1e-6,
		   "%s: sigma = softplus(new rho) within 1e-6 "
		   "relative (worst %.3g)",
		   what, ws);
	}
}

/* bnn_bbb_step on elements [i, i + len) of *k; point parameters (μ
 * alone) when variational is 0. */
static void step_at(struct kset *k, long i, long len, int variational, const bnn_bbb_params *p)
{
	bnn_bbb_step(&(bnn_bbb_arrays){ .n = len,
	                                .mu = k->mu + i,
	                                .rho = variational ? k->rho + i : NULL,
	                                .sigma = variational ? k->sigma + i : NULL,
	                                .g_mu = k->g + i,
	                                .g_sigma = variational ? k->gs + i : NULL,
	                                .m_mu = k->m_mu + i,
	                                .v_mu = k->v_mu + i,
	                                .m_rho = variational ? k->m_rho + i : NULL,
	                                .v_rho = variational ? k->v_rho + i : NULL },
	             LR, T_STEP, p);
}

/* bnn_bbb_step_sample on elements [i, i + len) of *k with noise; point
 * parameters (no ρ) when variational is 0. */
static void step_sample_at(struct kset *k, long i, long len, int variational,
                           const bnn_bbb_params *p)
{
	bnn_bbb_step_sample(&(bnn_bbb_arrays){ .n = len,
	                                       .mu = k->mu + i,
	                                       .rho = variational ? k->rho + i : NULL,
	                                       .g_mu = k->g + i,
	                                       .eps = k->eps + i,
	                                       .m_mu = k->m_mu + i,
	                                       .v_mu = k->v_mu + i,
	                                       .m_rho = variational ? k->m_rho + i : NULL,
	                                       .v_rho = variational ? k->v_rho + i : NULL,
	                                       .theta = k->theta + i,
	                                       .noise = noise + i },
	                    LR, T_STEP, p);
}

/* Run bnn_bbb_step (sampling 0) or bnn_bbb_step_sample on *k from in0, in
 * pieces of the given lengths (cycled), NULL: one call. */
static void run(struct kset *k, int sampling, const long *pieces, int np)
{
	bnn_bbb_params p = kparams();
	long i = 0, len;
	int j = 0;

	*k = in0;
	while (i < NK) {
		len = pieces ? pieces[j++ % np] : NK;
		if (len > NK - i)
			len = NK - i;
		if (sampling)
			step_sample_at(k, i, len, 1, &p);
		else
			step_at(k, i, len, 1, &p);
		i += len;
	}
}

static int same(const float *x, const float *y)
{
	return memcmp(x, y, NK * sizeof *x) == 0;
}

static int same_set(const struct kset *x, const struct kset *y)
{
	return same(x->mu, y->mu) && same(x->rho, y->rho) && same(x->sigma, y->sigma) &&
	       same(x->eps, y->eps) && same(x->m_mu, y->m_mu) && same(x->v_mu, y->v_mu) &&
	       same(x->m_rho, y->m_rho) && same(x->v_rho, y->v_rho) && same(x->theta, y->theta);
}

static void test_step(void)
{
	/* odd pieces: full blocks and tails of every kind mixed */
	static const long pieces[] = { 1, 7, 33, 128, 129, 500, 1000 };
	float sig[NK];

	run(&a, 0, NULL, 0);
	check_update(&a, 0, "bnn_bbb_step");
	bnn_bbb_sigma(NK, a.rho, sig);
	ok(same(sig, a.sigma), "bnn_bbb_step's sigma = bnn_bbb_sigma of its "
	                       "new rho, bit for bit");
	run(&b, 0, pieces, 7);
	ok(same_set(&a, &b), "bnn_bbb_step in pieces of 1 to 1000 = in one "
	                     "call, bit for bit");
}

static void test_step_sample(void)
{
	static const long pieces[] = { 3, 250, 129 };
	struct kset *c = &b;
	int i;

	run(&a, 1, NULL, 0);
	check_update(&a, 1, "bnn_bbb_step_sample");
	run(c, 1, pieces, 3);
	ok(same_set(&a, c), "bnn_bbb_step_sample in pieces = in one call, "
	                    "bit for bit");

	/* = bnn_bbb_step with g_σ = g∘ε (in0.gs), then the sample */
	run(c, 0, NULL, 0);
	for (i = 0; i < NK; i++)
		c->theta[i] = c->mu[i] + c->sigma[i] * noise[i];
	ok(same(a.mu, c->mu) && same(a.rho, c->rho) && same(a.m_rho, c->m_rho) &&
	           same(a.v_rho, c->v_rho) && same(a.theta, c->theta),
	   "bnn_bbb_step_sample = bnn_bbb_step with g_sigma = g eps, then "
	   "the sample, bit for bit");
}

/* rho NULL: Adam on μ with ∂μ = g + δμ/N; sampling: θ = μ, ε untouched. */
static void test_deterministic(void)
{
	bnn_bbb_params p = kparams();
	double dn = p.prior_precision / p.n_data;
	double wmu = 0;
	int i, theta_ok = 1;

	a = in0;
	step_at(&a, 0, NK, 0, &p);
	b = in0;
	step_sample_at(&b, 0, NK, 0, &p);
	for (i = 0; i < NK; i++) {
		struct adam_ref am = adam_ref(in0.mu[i], in0.g[i] + dn * in0.mu[i],
		                              fabs(in0.g[i]) + fabs(dn * in0.mu[i]), in0.m_mu[i],
		                              in0.v_mu[i], &p);

		worse(&wmu, a.mu[i], am.w, am.wcond);
		worse(&wmu, a.m_mu[i], am.m, am.mcond);
		if (b.theta[i] != b.mu[i])
			theta_ok = 0;
	}
	ok(wmu <= REL_TOL,
	   "deterministic: mu, m_mu within %g of double "
	   "(worst %.3g)",
	   REL_TOL, wmu);
	ok(same(a.mu, b.mu) && same(a.m_mu, b.m_mu) && same(a.v_mu, b.v_mu),
	   "deterministic: bnn_bbb_step_sample's mu = bnn_bbb_step's");
	ok(theta_ok && same(b.eps, in0.eps) && same(b.rho, in0.rho),
	   "deterministic: theta = mu, eps and rho untouched");
}

/* NaN in ρ or g gives NaN out, wherever the element sits. */
static void test_nan(void)
{
	bnn_bbb_params p = kparams();
	static const int at[] = { 0, 127, 128, 1500, NK - 1 };
	int j, good = 1, others = 1;

	a = in0;
	for (j = 0; j < 5; j++)
		a.rho[at[j]] = NAN;
	a.g[1000] = NAN;
	step_sample_at(&a, 0, NK, 1, &p);
	for (j = 0; j < 5; j++)
		if (!isnan(a.rho[at[j]]) || !isnan(a.theta[at[j]]))
			good = 0;
	if (!isnan(a.mu[1000]) || !isnan(a.theta[1000]))
		good = 0;
	for (j = 0; j < NK; j++)
		if (j != 1000 && j != 0 && j != 127 && j != 128 && j != 1500 && j != NK - 1 &&
		    isnan(a.theta[j]))
			others = 0;
	ok(good, "NaN in rho or g gives NaN rho/mu and theta");
	ok(others, "NaN stays in its element");
	bnn_bbb_sigma(NK, a.rho, a.sigma);
	ok(isnan(a.sigma[0]) && isnan(a.sigma[1500]) && !isnan(a.sigma[1]),
	   "bnn_bbb_sigma of NaN is NaN");
}

int main(void)
{
	make_inputs();
	test_step();
	test_step_sample();
	test_deterministic();
	test_nan();
	return tap_done();
}
