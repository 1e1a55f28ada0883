/*
 * gen_whvi.c: TAP tests of WHVI dense layers (Rossi et al., NeurIPS 2020)
 * in the code bnnc generates, and of their training.
 *
 * The t/models/wv_*.bnn models of one whvi layer are square (wv_sq, 8 -> 8),
 * padded (wv_pad, 6 -> 5: D = 8), stacked (wv_stack, 4 -> 10: D = 4, three
 * blocks) and both with two planar flows (wv_flow, 5 -> 10: D = 8, two
 * blocks); wv_net and wv_netf chain two whvi layers (with flows in netf,
 * and a layer without bias); wv_big is 40 -> 70 with two flows (D = 64).
 * They are compiled in double precision; wv_bigf (wv_big), wv_reg and
 * wv_cls in float.
 * Checks:
 *   1. the gradient of every parameter against central finite differences,
 *      with the noise fixed by seeding the pass's rng the same way for every
 *      pass, and without rng (g = μ);
 *   2. the layer's output against W·x + b with W = S1·H·diag(g)·H·S2
 *      assembled block by block from an explicit Hadamard matrix built
 *      here, g = μ + σ∘ε with ε replayed from the same seed (through the
 *      flows, computed here, for wv_flow), and without rng g = μ;
 *   3. sqgrad against B passes of one example each, sharing one rng (so
 *      each example gets the noise it gets in the batch), and the batch's
 *      gradient against the mean of theirs;
 *   4. the same layer in the float build (wv_bigf: the runtime's
 *      bnn_fwht_batch, D = 64) against the double one (wv_big);
 *   5. the KL of runtime/train/whvi_kl.c against hand values and its gradient
 *      against finite differences (closed form, and with a flow);
 *   6. the descriptor: parameter counts as bnnc --summary's, and the
 *      initialisation;
 *   7. end to end (wv_reg, wv_cls compiled in float): Adam and
 *      Bayes-by-Backprop train a regression and a classification past a
 *      clear margin, Monte-Carlo prediction averages samples that differ,
 *      sgd, adam, adamw and bbb add the KL's gradient (a strong prior
 *      shrinks μ), and vogn, ivon and badam refuse whvi layers with their
 *      message.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#ifndef BNN_GEN_DOUBLE
#define BNN_GEN_DOUBLE 1
#endif

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <bnn_gen.h>

#include "blobs.h"
#include "fixtures.h"
#include "tap.h"
#include "wv_cls.h"
#include "wv_big.h"
#include "wv_bigf.h"
#include "wv_flow.h"
#include "wv_net.h"
#include "wv_netf.h"
#include "wv_pad.h"
#include "wv_reg.h"
#include "wv_sq.h"
#include "wv_stack.h"

#define B    4
#define SEED 91
#define H    1e-4
#define MAXP 2048
#define MAXX 128

typedef double (*wv_pass_fn)(const double *w, const double *x, const double *y, long batch,
                             double *ws, double *out, double *grad, double *sqgrad, bnn_rng *rng,
                             const double *sigma, double *grad_sigma, double *stats, int train);

/* A test model; din .. flows describe its whvi layer when it has one. */
struct wv_model {
	const char *name;
	wv_pass_fn pass;
	size_t (*ws_floats)(long batch);
	long nparams, inputs, outputs;
	int categorical;
	long din, dout, d, stack, flows;
	int bias;
};

static const struct wv_model models[] = {
	{ "wv_sq", wv_sq_pass_f64, wv_sq_workspace_floats, WV_SQ_NPARAMS, WV_SQ_INPUTS,
	  WV_SQ_OUTPUTS, 0, 8, 8, 8, 1, 0, 1 },
	{ "wv_pad", wv_pad_pass_f64, wv_pad_workspace_floats, WV_PAD_NPARAMS, WV_PAD_INPUTS,
	  WV_PAD_OUTPUTS, 0, 6, 5, 8, 1, 0, 1 },
	{ "wv_stack", wv_stack_pass_f64, wv_stack_workspace_floats, WV_STACK_NPARAMS,
	  WV_STACK_INPUTS, WV_STACK_OUTPUTS, 0, 4, 10, 4, 3, 0, 1 },
	{ "wv_flow", wv_flow_pass_f64, wv_flow_workspace_floats, WV_FLOW_NPARAMS, WV_FLOW_INPUTS,
	  WV_FLOW_OUTPUTS, 0, 5, 10, 8, 2, 2, 1 },
	{ "wv_net", wv_net_pass_f64, wv_net_workspace_floats, WV_NET_NPARAMS, WV_NET_INPUTS,
	  WV_NET_OUTPUTS, 1, 0, 0, 0, 0, 0, 0 },
	{ "wv_netf", wv_netf_pass_f64, wv_netf_workspace_floats, WV_NETF_NPARAMS, WV_NETF_INPUTS,
	  WV_NETF_OUTPUTS, 1, 0, 0, 0, 0, 0, 0 },
	{ "wv_big", wv_big_pass_f64, wv_big_workspace_floats, WV_BIG_NPARAMS, WV_BIG_INPUTS,
	  WV_BIG_OUTPUTS, 0, 40, 70, 64, 2, 2, 1 },
};
#define NMODELS 7
#define NSINGLE 4 /* the first four have one whvi layer */

static double w[MAXP], x[B * MAXX], y[B * MAXX];
static double ws[1 << 16];

/* Parameters, inputs and targets for model m: everything in (−1, 1)
 * (ρ there gives σ from 0.31 to 1.31), targets a class or a value. */
static void wv_data(const struct wv_model *m, uint64_t seed)
{
	uint64_t s = seed;
	long i;

	if (m->nparams > MAXP || m->inputs > MAXX || m->outputs > MAXX)
		tap_bail_out("%s: the test's arrays are too small", m->name);
	for (i = 0; i < m->nparams; i++)
		w[i] = splitmix_uniform(&s, -1, 1);
	for (i = 0; i < B * m->inputs; i++)
		x[i] = splitmix_uniform(&s, -1.5, 1.5);
	for (i = 0; i < B * (m->categorical ? 1 : m->outputs); i++)
		y[i] = m->categorical ? (double)(splitmix_next(&s) % (uint64_t)m->outputs)
		                      : splitmix_uniform(&s, -1, 1);
}

/* One pass over the first b examples from x0 (targets y0), the rng seeded
 * with SEED (with_rng) or none. */
static double wv_run(const struct wv_model *m, const double *wt, const double *x0, const double *y0,
                     long b, double *out, double *grad, double *sq, bnn_rng *rng)
{
	if (m->ws_floats(b) > sizeof ws / sizeof ws[0])
		tap_bail_out("%s: workspace too small", m->name);
	return m->pass(wt, x0, y0, b, ws, out, grad, sq, rng, NULL, NULL, NULL, 0);
}

static double wv_loss(const struct wv_model *m, const double *wt, int with_rng)
{
	bnn_rng rng;

	bnn_rng_seed(&rng, SEED);
	return wv_run(m, wt, x, y, B, NULL, NULL, NULL, with_rng ? &rng : NULL) / B;
}

/* 1. Finite differences of the mean loss against the pass's gradient. */
static void check_gradient(const struct wv_model *m, int with_rng)
{
	static double g[MAXP], fd[MAXP], wp[MAXP];
	bnn_rng rng;
	long i;

	wv_data(m, 1234);
	bnn_rng_seed(&rng, SEED);
	wv_run(m, w, x, y, B, NULL, g, NULL, with_rng ? &rng : NULL);
	memcpy(wp, w, sizeof wp);
	for (i = 0; i < m->nparams; i++) {
		double lp, lm;
		wp[i] = w[i] + H;
		lp = wv_loss(m, wp, with_rng);
		wp[i] = w[i] - H;
		lm = wv_loss(m, wp, with_rng);
		wp[i] = w[i];
		fd[i] = (lp - lm) / (2 * H);
	}
	double rel = fixture_max_rel(m->nparams, g, fd);
	if (getenv("WV_DEBUG"))
		for (i = 0; i < m->nparams; i++)
			tap_diag("%ld %.10g %.10g", i, g[i], fd[i]);
	ok(rel < 1e-5,
	   "%s, %s: the gradient of all %ld parameters matches finite differences "
	   "(worst relative error %.2g)",
	   m->name, with_rng ? "sampled g (seeded rng)" : "g = μ", m->nparams, rel);
}

/* The explicit orthonormal Hadamard matrix of side n (Sylvester), n ≤ 16. */
static void hadamard(long n, double *hm)
{
	long i;

	fixture_sylvester(n, n, hm);
	for (i = 0; i < n * n; i++)
		hm[i] /= sqrt((double)n);
}

static double softplus(double r)
{
	return r > 0 ? r + log1p(exp(-r)) : log1p(exp(r));
}

/* 2. The output against W·x̄ + b, W assembled from S1, g, S2 and an
 * explicit H, g = μ + σ∘ε (ε replayed: per example, g's stack·D values
 * then the bias's Dout) through the flows, or μ. */
static void check_explicit(const struct wv_model *m, int with_rng)
{
	const long d = m->d, sd = m->stack * m->d, nf = m->flows, dout = m->dout;
	const double *s1 = w, *s2 = w + sd, *mu = w + 2 * sd, *rho = w + 3 * sd;
	const double *fu = w + 4 * sd, *fw = fu + nf * sd, *fb = fw + nf * sd;
	const double *bmu = w + 4 * sd + nf * (2 * sd + m->stack), *brho = bmu + dout;
	double hm[16 * 16], out[B * MAXX], want[B * MAXX], g[64], eg[64], eb[64], wj[16 * 16];
	bnn_rng rng;
	long e, j, r, c, q, k;

	wv_data(m, 555);
	bnn_rng_seed(&rng, SEED);
	wv_run(m, w, x, NULL, B, out, NULL, NULL, with_rng ? &rng : NULL);
	hadamard(d, hm);
	bnn_rng_seed(&rng, SEED);
	for (e = 0; e < B; e++) {
		const double *xe = x + e * m->din;
		if (with_rng) {
			bnn_gen_normal(&rng, sd, eg);
			bnn_gen_normal(&rng, dout, eb);
		}
		for (q = 0; q < sd; q++)
			g[q] = mu[q] + (with_rng ? softplus(rho[q]) * eg[q] : 0);
		for (k = 0; k < nf; k++) /* appendix C, eq. 20, block by block */
			for (j = 0; j < m->stack; j++) {
				const double *u = fu + (j * nf + k) * d, *v = fw + (j * nf + k) * d;
				double a = fb[j * nf + k];
				for (q = 0; q < d; q++)
					a += v[q] * g[j * d + q];
				for (q = 0; q < d; q++)
					g[j * d + q] += u[q] * tanh(a);
			}
		for (j = 0; j < m->stack; j++) {
			/* W_j = diag(S1_j)·H·diag(g_j)·H·diag(S2_j) */
			for (r = 0; r < d; r++)
				for (c = 0; c < d; c++) {
					double acc = 0;
					for (q = 0; q < d; q++)
						acc += hm[r * d + q] * g[j * d + q] * hm[q * d + c];
					wj[r * d + c] = s1[j * d + r] * acc * s2[j * d + c];
				}
			for (r = 0; r < d && j * d + r < dout; r++) {
				double acc =
				        bmu[j * d + r] +
				        (with_rng ? softplus(brho[j * d + r]) * eb[j * d + r] : 0);
				for (c = 0; c < m->din; c++) /* the padding multiplies zeros */
					acc += wj[r * d + c] * xe[c];
				want[e * dout + j * d + r] = acc;
			}
		}
	}
	double rel = fixture_max_rel(B * dout, out, want);
	ok(rel < 1e-12,
	   "%s, %s: the output is W·x + b with W = S1·H·diag(g)·H·S2 assembled from "
	   "an explicit Hadamard matrix (D = %ld, %ld block%s; worst relative error %.2g)",
	   m->name, with_rng ? "sampled g" : "g = μ", d, m->stack, m->stack > 1 ? "s" : "", rel);
}

/* 3. sqgrad against B passes of one example sharing one rng. */
static void check_sqgrad(const struct wv_model *m, int with_rng)
{
	static double g[MAXP], sq[MAXP], gi[MAXP], want_sq[MAXP], want_g[MAXP];
	long ny = m->categorical ? 1 : m->outputs, i, j;
	bnn_rng rng;

	wv_data(m, 777);
	bnn_rng_seed(&rng, SEED);
	wv_run(m, w, x, y, B, NULL, g, sq, with_rng ? &rng : NULL);
	memset(want_sq, 0, sizeof want_sq);
	memset(want_g, 0, sizeof want_g);
	bnn_rng_seed(&rng, SEED);
	for (i = 0; i < B; i++) {
		wv_run(m, w, x + i * m->inputs, y + i * ny, 1, NULL, gi, NULL,
		       with_rng ? &rng : NULL);
		for (j = 0; j < m->nparams; j++) {
			want_sq[j] += gi[j] * gi[j] / B;
			want_g[j] += gi[j] / B;
		}
	}
	double rs = fixture_max_rel(m->nparams, sq, want_sq),
	       rg = fixture_max_rel(m->nparams, g, want_g);
	ok(rs < 1e-10 && rg < 1e-10,
	   "%s, %s: sqgrad is the mean of the squared per-example gradients, and the gradient "
	   "their mean (worst relative errors %.2g, %.2g)",
	   m->name, with_rng ? "sampled g" : "g = μ", rs, rg);
}

/* ---- 5. the KL ------------------------------------------------------------ */

/* Sets every whvi layer's μ, ρ (and the bias's) of a float model to
 * constants, the flows' u to 0 (identity flows); returns the number of
 * values of q(g) and of the biases. */
static long kl_fill(const bnn_model *m, float *p, float mu, float rho)
{
	long n = 0, j;
	int i;

	for (i = 0; i < m->ntensors; i++) {
		const bnn_tensor *t = &m->tensors[i];
		float v = t->role == BNN_ROLE_WHVI_G_MEAN || t->role == BNN_ROLE_BIAS ? mu
		          : t->role == BNN_ROLE_WHVI_G_RHO || t->role == BNN_ROLE_WHVI_BIAS_RHO
		                  ? rho
		          : t->role == BNN_ROLE_WHVI_FLOW_U ? 0.0f
		                                            : 0.3f;
		for (j = 0; j < t->size; j++)
			p[t->offset + j] = v;
		if (t->role == BNN_ROLE_WHVI_G_MEAN || t->role == BNN_ROLE_BIAS)
			n += t->size;
	}
	return n;
}

static double kl_at(const bnn_model *m, const float *p, double delta, double *scratch)
{
	bnn_rng rng;

	bnn_rng_seed(&rng, 5);
	return bnn_whvi_kl(m, p, delta, 1.0, NULL, &rng, scratch);
}

static void check_kl_fd(const bnn_model *m, uint64_t seed, double delta)
{
	long n = m->nparams, i;
	float *p = malloc((size_t)n * sizeof *p), *g = calloc((size_t)n, sizeof *g);
	double *scratch = malloc((size_t)(bnn_whvi_kl_scratch(m) + 1) * sizeof *scratch);
	double worst = 0;
	uint64_t s = seed;
	bnn_rng rng;

	if (!p || !g || !scratch)
		tap_bail_out("out of memory");
	for (i = 0; i < n; i++)
		p[i] = (float)splitmix_uniform(&s, -1, 1);
	bnn_rng_seed(&rng, 5);
	bnn_whvi_kl(m, p, delta, 1.0, g, &rng, scratch);
	for (i = 0; i < n; i++) {
		const float keep = p[i];
		double lp, lm, fd, h;
		float hi = keep + 0x1p-9f, lo = keep - 0x1p-9f;
		p[i] = hi;
		lp = kl_at(m, p, delta, scratch);
		p[i] = lo;
		lm = kl_at(m, p, delta, scratch);
		p[i] = keep;
		h = (double)hi - (double)lo;
		fd = (lp - lm) / h;
		double d = fabs(fd - g[i]) / fmax(1e-2, fabs(fd));
		worst = d > worst ? d : worst;
	}
	ok(worst < 2e-3,
	   "%s: the KL's gradient matches finite differences (all %ld parameters, "
	   "worst relative error %.2g)",
	   m->name, n, worst);
	free(p);
	free(g);
	free(scratch);
}

static void check_kl(void)
{
	const bnn_model *reg = &wv_reg_model, *cls = &wv_cls_model;
	float *p = calloc((size_t)reg->nparams, sizeof *p),
	      *q = calloc((size_t)cls->nparams, sizeof *q);
	double *scratch = malloc((size_t)(bnn_whvi_kl_scratch(cls) + 1) * sizeof *scratch);
	float rho = (float)bnn_softplus_inverse(0.2);
	double s = bnn_softplus(rho), n, kl, want;
	long ncls, i, nflow = 0;

	if (!p || !q || !scratch)
		tap_bail_out("out of memory");
	is_int(bnn_whvi_kl_scratch(reg), 0, "wv_reg has no flows: the KL needs no scratch");
	is_int(bnn_whvi_kl_scratch(cls), 4 * 4,
	       "wv_cls: (flows + 3)·D = 4·4 doubles of scratch (4 -> 16: D = 4)");
	/* hand values: μ = 0.5, σ = 0.2, δ = 1: ½(0.04 + 0.25 − 1 − ln 0.04) = 1.254438 per value */
	n = (double)kl_fill(reg, p, 0.5f, rho);
	kl = bnn_whvi_kl(reg, p, NAN, 1.0, NULL, NULL, NULL);
	want = n * 0.5 * (s * s + 0.25 - 1 - log(s * s));
	is_rel(kl, want, 1e-12, "wv_reg, δ = 1 (its prior): KL = n·½(δσ² + δμ² − 1 − ln δσ²)");
	is_rel(kl / n, 1.254438, 1e-6, "  = %g values × 1.254438", n);
	kl = bnn_whvi_kl(reg, p, 4.0, 1.0, NULL, NULL, NULL);
	is_rel(kl / n, 0.5 * (4 * s * s + 1 - 1 - log(4 * s * s)), 1e-12,
	       "wv_reg, δ = 4 (delta given): 0.996291 per value");
	is_rel(kl / n, 0.996291, 1e-6, "  (hand value)");
	/* flows with u = 0 are the identity (log-det 0); without rng ε = 0, so
	 * the flow layer's term per value is −ln σ − ½ − ½ln δ + ½δμ²
	 * (1.234438), the others the closed form (1.254438) */
	ncls = kl_fill(cls, q, 0.5f, rho);
	for (i = 0; i < cls->ntensors; i++)
		if (cls->tensors[i].role == BNN_ROLE_WHVI_G_MEAN &&
		    cls->layers[cls->tensors[i].layer].flows)
			nflow += cls->tensors[i].size;
	kl = bnn_whvi_kl(cls, q, NAN, 1.0, NULL, NULL, scratch);
	want = (double)(ncls - nflow) * 0.5 * (s * s + 0.25 - 1 - log(s * s)) +
	       (double)nflow * (-log(s) - 0.5 + 0.125);
	is_rel(kl, want, 1e-12,
	       "wv_cls (a flow, u = 0, ε = 0): entropy + −log p(z_F), "
	       "%ld values at 1.234438 and %ld at 1.254438",
	       nflow, ncls - nflow);
	/* the flow's term is an unbiased estimate: its mean over many ε is the
	 * closed form when the flow is the identity */
	{
		bnn_rng rng;
		double acc = 0;
		int k;
		bnn_rng_seed(&rng, 3);
		for (k = 0; k < 4000; k++)
			acc += bnn_whvi_kl(cls, q, NAN, 1.0, NULL, &rng, scratch);
		is_rel(acc / 4000, (double)ncls * 0.5 * (s * s + 0.25 - 1 - log(s * s)), 2e-3,
		       "wv_cls, identity flow: the mean of 4000 sampled KLs is the closed form");
	}
	check_kl_fd(reg, 42, NAN);
	check_kl_fd(cls, 43, 2.0);
	free(p);
	free(q);
	free(scratch);
}

/* ---- 7. end to end ---------------------------------------------------------- */

/* y = sin(3x) + 0.1·noise on x ∈ [−1, 1]. */
static void reg_make(bnn_dataset *ds, long n, uint64_t seed)
{
	bnn_rng rng;
	long i;

	blobs_flat(ds, n, 1, malloc((size_t)n * sizeof *ds->x), malloc((size_t)n * sizeof *ds->y));
	if (!ds->x || !ds->y)
		tap_bail_out("out of memory");
	bnn_rng_seed(&rng, seed);
	bnn_rng_normal(&rng, ds->y, (size_t)n);
	for (i = 0; i < n; i++) {
		ds->x[i] = (float)(2 * bnn_rng_uniform(&rng) - 1);
		ds->y[i] = (float)sin(3 * ds->x[i]) + 0.1f * ds->y[i];
	}
}

static double reg_rmse(const bnn_state *st, const bnn_dataset *ds, long mc, float *var)
{
	float *p = malloc((size_t)ds->n * sizeof *p);
	double se = 0;
	bnn_err err;
	long i;

	if (!p || bnn_predict(st, ds, mc, 7, &(bnn_prediction){ .probs = p, .var = var }, &err))
		tap_bail_out("bnn_predict failed");
	for (i = 0; i < ds->n; i++)
		se += ((double)p[i] - sin(3 * ds->x[i])) * ((double)p[i] - sin(3 * ds->x[i]));
	free(p);
	return sqrt(se / (double)ds->n);
}

static void check_training(void)
{
	bnn_dataset train, test, btrain, btest;
	bnn_train_options o;
	bnn_state st, st2;
	bnn_err err;
	float *var;
	double r0, r16, acc0, acc16, maxvar = 0;
	int rc, opt, same;
	long i;

	reg_make(&train, 256, 11);
	reg_make(&test, 200, 12);
	var = malloc((size_t)test.n * sizeof *var);
	if (!var)
		tap_bail_out("out of memory");
	for (opt = 0; opt < 2; opt++) {
		const char *name = opt ? "bbb" : "adam";
		o = bnn_train_defaults();
		o.optimizer = opt ? BNN_OPT_BBB : BNN_OPT_ADAM;
		o.epochs = 150;
		o.batch = 32;
		o.schedule.lr = 0.01;
		bnn_state_init(&st, &wv_reg_model, 1, &err);
		rc = bnn_train(&st, &(bnn_train_io){ .train = &train }, &o, &err);
		is_int(rc, BNN_OK, "%s trains wv_reg (WHVI 1-32-32-1, sin(3x))%s%s", name,
		       rc ? ": " : "", rc ? err.message : "");
		ok(bnn_state_is_stochastic(&st), "%s: a whvi model is stochastic (MC prediction)",
		   name);
		r0 = reg_rmse(&st, &test, 0, NULL);
		r16 = reg_rmse(&st, &test, 16, var);
		for (i = 0, maxvar = 0; i < test.n; i++)
			maxvar = var[i] - 0.01 > maxvar ? var[i] - 0.01 : maxvar;
		ok(r0 < 0.15, "%s: test RMSE at g = μ %.3f < 0.15 (sd of sin(3x) is 0.7)", name,
		   r0);
		ok(r16 < 0.15, "%s: test RMSE of 16 MC samples %.3f < 0.15", name, r16);
		ok(maxvar > 1e-6, "%s: the 16 samples differ (largest variance beyond σ² %.2g)",
		   name, maxvar);
		bnn_state_init(&st2, &wv_reg_model, 1, &err);
		bnn_train(&st2, &(bnn_train_io){ .train = &train }, &o, &err);
		same = blobs_same_floats(st.params, st2.params, st.model->nparams);
		ok(same, "%s: the same seed trains to identical bits", name);
		bnn_state_free(&st);
		bnn_state_free(&st2);
	}

	/* the KL's gradient reaches every gradient optimizer: a strong prior
	 * (δ = 1e4) pulls μ of g towards 0, a weak one (δ = 1e-4) does not */
	for (opt = 0; opt < 4; opt++) {
		static const int opts[] = { BNN_OPT_SGD, BNN_OPT_ADAM, BNN_OPT_ADAMW, BNN_OPT_BBB };
		double norm[2];
		int k, failed = 0;
		for (k = 0; k < 2; k++) {
			const bnn_tensor *t = &wv_reg_model.tensors[2]; /* h1_dense.g_mean */
			o = bnn_train_defaults();
			o.optimizer = opts[opt];
			o.epochs = 10;
			o.batch = 32;
			o.schedule.lr = opts[opt] == BNN_OPT_SGD ? 0.002 : 0.05;
			o.delta = k ? 1e4 : 1e-4;
			bnn_state_init(&st, &wv_reg_model, 1, &err);
			rc = bnn_train(&st, &(bnn_train_io){ .train = &train }, &o, &err);
			if (rc) {
				tap_diag("%s, delta %g: %s", bnn_optimizer_name(opts[opt]), o.delta,
				         err.message);
				failed = 1;
			}
			for (i = 0, norm[k] = 0; i < t->size; i++)
				norm[k] +=
				        (double)st.params[t->offset + i] * st.params[t->offset + i];
			norm[k] = sqrt(norm[k]);
			bnn_state_free(&st);
		}
		ok(!failed && wv_reg_model.tensors[2].role == BNN_ROLE_WHVI_G_MEAN &&
		           norm[1] < 0.5 * norm[0],
		   "%s adds the KL's gradient: |μ| of h1's g after 10 epochs %.3f with δ = 1e4, "
		   "%.3f with δ = 1e-4",
		   bnn_optimizer_name(opts[opt]), norm[1], norm[0]);
	}

	blobs_make(&btrain, 300, 21);
	blobs_make(&btest, 300, 22);
	o = bnn_train_defaults();
	o.epochs = 30;
	o.batch = 16;
	o.schedule.lr = 0.01;
	bnn_state_init(&st, &wv_cls_model, 1, &err);
	rc = bnn_train(&st, &(bnn_train_io){ .train = &btrain }, &o, &err);
	is_int(rc, BNN_OK, "adam trains wv_cls (WHVI with a planar flow, 3 blobs)%s%s",
	       rc ? ": " : "", rc ? err.message : "");
	acc0 = blobs_accuracy(&st, &btest, 0);
	acc16 = blobs_accuracy(&st, &btest, 16);
	ok(acc0 > 0.9, "wv_cls: test accuracy at g = μ %.3f > 0.9 (chance 0.33)", acc0);
	ok(acc16 > 0.9, "wv_cls: test accuracy of 16 MC samples %.3f > 0.9", acc16);
	bnn_state_free(&st);

	for (opt = 0; opt < 3; opt++) {
		static const int opts[] = { BNN_OPT_VOGN, BNN_OPT_IVON, BNN_OPT_BADAM };
		char want[512];
		o = bnn_train_defaults();
		o.optimizer = opts[opt];
		o.epochs = 1;
		bnn_state_init(&st, &wv_cls_model, 1, &err);
		rc = bnn_train(&st, &(bnn_train_io){ .train = &btrain }, &o, &err);
		snprintf(
		        want, sizeof want,
		        "layer 'h_dense' of model 'wv_cls' has a whvi posterior, which optimizer '%s' "
		        "cannot train (its q(g) is fitted on the ELBO by gradient descent): use adam, "
		        "adamw, sgd or bbb",
		        bnn_optimizer_name(opts[opt]));
		is_int(rc, BNN_EUNSUPPORTED, "%s refuses a whvi layer",
		       bnn_optimizer_name(opts[opt]));
		is_str(err.message, want, "  with its message");
		bnn_state_free(&st);
	}
	free(var);
	bnn_dataset_free(&train);
	bnn_dataset_free(&test);
	bnn_dataset_free(&btrain);
	bnn_dataset_free(&btest);
}

/* The float build (wv_bigf: bnn_fwht_batch, float kernels) against the
 * double one (wv_big: the test's radix-2 loop) on the same parameters,
 * inputs and seed: outputs, loss, gradient and sqgrad agree to float
 * precision, with rng (the same ε: fewer than 512 per draw) and without. */
static void check_float(int with_rng)
{
	const struct wv_model *m = &models[6];
	static double gd[MAXP], qd[MAXP], od[B * MAXX];
	static float wf[MAXP], xf[B * MAXX], yf[B * MAXX], gf[MAXP], qf[MAXP], of[B * MAXX];
	float *wsf = malloc(wv_bigf_model.workspace_floats(B) * sizeof *wsf);
	double ld, lf, eo = 0, eg = 0, eq = 0, scale;
	bnn_rng rng;
	bnn_pass p;
	long i;

	if (!wsf)
		tap_bail_out("out of memory");
	wv_data(m, 999);
	for (i = 0; i < m->nparams; i++)
		w[i] = wf[i] = (float)w[i];
	for (i = 0; i < B * m->inputs; i++)
		x[i] = xf[i] = (float)x[i];
	for (i = 0; i < B * m->outputs; i++)
		y[i] = yf[i] = (float)y[i];
	bnn_rng_seed(&rng, SEED);
	ld = wv_run(m, w, x, y, B, od, gd, qd, with_rng ? &rng : NULL);
	memset(&p, 0, sizeof p);
	p.w = wf;
	p.x = xf;
	p.y = yf;
	p.batch = B;
	p.ws = wsf;
	p.out = of;
	p.grad = gf;
	p.sqgrad = qf;
	p.rng = with_rng ? &rng : NULL;
	bnn_rng_seed(&rng, SEED);
	lf = wv_bigf_model.pass(&p);
	/* errors relative to each array's largest value */
	for (i = 0, scale = 0; i < B * m->outputs; i++)
		scale = fmax(scale, fabs(od[i]));
	for (i = 0; i < B * m->outputs; i++)
		eo = fmax(eo, fabs(od[i] - of[i]) / scale);
	for (i = 0, scale = 0; i < m->nparams; i++)
		scale = fmax(scale, fabs(gd[i]));
	for (i = 0; i < m->nparams; i++)
		eg = fmax(eg, fabs(gd[i] - gf[i]) / scale);
	for (i = 0, scale = 0; i < m->nparams; i++)
		scale = fmax(scale, fabs(qd[i]));
	for (i = 0; i < m->nparams; i++)
		eq = fmax(eq, fabs(qd[i] - qf[i]) / scale);
	ok(eo < 1e-5 && eg < 1e-5 && eq < 1e-5 && fabs(lf - ld) < 1e-5 * fabs(ld),
	   "wv_bigf (float, bnn_fwht_batch) = wv_big (double), %s: outputs, loss, gradient "
	   "and sqgrad (worst errors relative to each array's largest %.2g, %.2g, %.2g; loss "
	   "%.8g and %.8g)",
	   with_rng ? "sampled g" : "g = μ", eo, eg, eq, lf, ld);
	free(wsf);
}

/* The descriptor's tensors: the count bnnc --summary prints (whvi_params:
 * per block 4D + F·(2D + 1), and 2·Dout for the bias), and the
 * initialisation (S1 = S2 = 1, ρ = softplus⁻¹(0.01), μ of g as Glorot
 * U(±√3) before tanh). */
static void check_layout(void)
{
	const bnn_model *m = &wv_reg_model;
	float *p = malloc((size_t)m->nparams * sizeof *p);
	long i, j, bad = 0, n = 0;
	double rho = bnn_softplus_inverse(0.01), var = 0;
	bnn_rng rng;

	for (i = 0; i < NSINGLE; i++) {
		const struct wv_model *mm = &models[i];
		is_int(mm->nparams,
		       mm->stack * (4 * mm->d + mm->flows * (2 * mm->d + 1)) + 2 * mm->dout,
		       "%s: %ld parameters, stack·(4D + F(2D + 1)) + 2·Dout as bnnc --summary counts",
		       mm->name, mm->nparams);
	}
	if (!p)
		tap_bail_out("out of memory");
	bnn_rng_seed(&rng, 3);
	bnn_params_init(m, p, &rng);
	for (i = 0; i < m->ntensors; i++) {
		const bnn_tensor *t = &m->tensors[i];
		for (j = t->offset; j < t->offset + t->size; j++) {
			if (t->role == BNN_ROLE_WHVI_S1 || t->role == BNN_ROLE_WHVI_S2)
				bad += p[j] != 1.0f;
			else if (t->role == BNN_ROLE_WHVI_G_RHO ||
			         t->role == BNN_ROLE_WHVI_BIAS_RHO)
				bad += p[j] != (float)rho;
			else if (t->role == BNN_ROLE_BIAS)
				bad += p[j] != 0.0f;
			else if (t->role == BNN_ROLE_WHVI_G_MEAN) {
				bad += fabs(p[j]) > sqrt(3.0);
				var += (double)p[j] * p[j];
				n++;
			} else {
				bad++;
			}
		}
	}
	is_int(bad, 0,
	       "wv_reg starts at S1 = S2 = 1, ρ = softplus⁻¹(0.01) = %.4f, bias 0, "
	       "μ of g in ±√3",
	       rho);
	is_rel(var / (double)n, 1.0, 0.3,
	       "  μ of g (96 values) has variance 1 (Glorot's 1/D for W = H·diag(μ)·H)");
	free(p);
}

int main(void)
{
	int i, r;

	for (i = 0; i < NMODELS; i++)
		for (r = 1; r >= 0; r--)
			check_gradient(&models[i], r);
	for (i = 0; i < NSINGLE; i++)
		for (r = 1; r >= 0; r--)
			check_explicit(&models[i], r);
	for (i = 0; i < NMODELS; i++)
		for (r = 1; r >= 0; r--)
			check_sqgrad(&models[i], r);
	check_float(1);
	check_float(0);
	check_layout();
	check_kl();
	check_training();
	return tap_done();
}
