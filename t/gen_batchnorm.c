/*
 * gen_batchnorm.c: TAP tests of the code bnnc generates for batchnorm.
 *
 * The models t/models/bn_grad.bnn and bn_sq.bnn are compiled in double
 * precision (-DBNN_GEN_DOUBLE, as for t/gen_gradcheck.c).  bn_grad puts a
 * batchnorm on the input, on maps after conv2d layers (one of them read by
 * two consumers, one inside a residual add) and on a vector after a dense
 * layer, with concat over maps; bn_sq is one batchnorm of the input map
 * feeding a dense layer, small enough to work out by plain loops.  Checks:
 *   1. bn_grad's gradient against central finite differences, with the
 *      batch's statistics (no stats) and with fixed running statistics
 *      (stats, train = 0);
 *   2. bn_sq's loss, gradient and mean squared per-example gradients (γ
 *      and β by VOGN's appendix B, eqs. 9 and 10; the dense layer's by the
 *      outer product) against a brute-force loop over examples written
 *      from the documented layout (bnn_gen_batchnorm_backward);
 *   3. the running statistics: a training pass folds the batch's mean and
 *      unbiased variance in with the layer's momentum; a prediction pass
 *      (train = 0) leaves them alone;
 *   4. train/eval consistency: with the running statistics set to the
 *      batch's mean and biased variance, the prediction pass gives the
 *      training pass's outputs; a prediction pass treats examples
 *      independently (a batch gives what its examples give one by one);
 *      without stats, train = 0 still normalises by the batch.
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

#include "bn_grad.h"
#include "bn_sq.h"
#include "fixtures.h"
#include "tap.h"

#define BN_BATCH 6
#define BN_H     1e-6 /* finite-difference step */

typedef double bn_pass_fn(const double *w, const double *x, const double *y, long batch, double *ws,
                          double *out, double *grad, double *sqgrad, bnn_rng *rng,
                          const double *sigma, double *grad_sigma, double *stats, int train);

/* One model with its data: B examples, weights, targets, buffers. */
struct bn_case {
	const char *name;
	bn_pass_fn *pass;
	size_t (*workspace)(long batch);
	long inputs, outputs, nparams, nstats, classes;
	long channels[4]; /* of its batchnorm layers in order (0: no more) */
	double *w, *x, *y, *ws, *out, *grad, *sq, *stats;
};

/* The case of generated model m (prefix M in its header) with 3 classes
 * and the given channels of its batchnorm layers; its arrays come from
 * bn_case_init. */
#define BN_CASE(m, M, ...)                                                            \
	{                                                                             \
		.name = #m, .pass = m##_pass_f64, .workspace = m##_workspace_floats,  \
		.inputs = M##_INPUTS, .outputs = M##_OUTPUTS, .nparams = M##_NPARAMS, \
		.nstats = M##_NSTATS, .classes = 3, .channels = {                     \
			__VA_ARGS__                                                   \
		}                                                                     \
	}

/* Weights U(-0.8, 0.8), inputs U(-1, 1) plus a
 * per-channel offset so that the statistics are far from 0 and 1, labels
 * i mod classes, running statistics: means U(-0.5, 0.5), variances
 * U(0.5, 2). */
static void bn_case_init(struct bn_case *c, uint64_t seed)
{
	long i, j, at;

	c->w = splitmix_doubles((size_t)c->nparams);
	c->x = splitmix_doubles((size_t)(BN_BATCH * c->inputs));
	c->y = splitmix_doubles(BN_BATCH);
	c->ws = splitmix_doubles(c->workspace(BN_BATCH));
	c->out = splitmix_doubles((size_t)(BN_BATCH * c->outputs));
	c->grad = splitmix_doubles((size_t)c->nparams);
	c->sq = splitmix_doubles((size_t)c->nparams);
	c->stats = splitmix_doubles((size_t)c->nstats);
	for (i = 0; i < c->nparams; i++)
		c->w[i] = splitmix_uniform(&seed, -0.8, 0.8);
	for (i = 0; i < BN_BATCH * c->inputs; i++)
		c->x[i] = splitmix_uniform(&seed, -1, 1) + (double)((i / 9) % 2) * 1.5;
	for (i = 0; i < BN_BATCH; i++)
		c->y[i] = (double)(i % c->classes);
	for (i = 0, at = 0; i < 4 && c->channels[i] > 0; i++) { /* [mean C][var C] per layer */
		for (j = 0; j < c->channels[i]; j++) {
			c->stats[at + j] = splitmix_uniform(&seed, -0.5, 0.5);
			c->stats[at + c->channels[i] + j] = splitmix_uniform(&seed, 0.5, 2);
		}
		at += 2 * c->channels[i];
	}
}

static void bn_case_free(struct bn_case *c)
{
	free(c->w);
	free(c->x);
	free(c->y);
	free(c->ws);
	free(c->out);
	free(c->grad);
	free(c->sq);
	free(c->stats);
}

/* The summed loss of a pass over the first b examples at w. */
static double bn_loss(const struct bn_case *c, const double *w, long b, double *stats, int train)
{
	return c->pass(w, c->x, c->y, b, c->ws, NULL, NULL, NULL, NULL, NULL, NULL, stats, train);
}

/* Check 1: the gradient of the mean loss against central differences,
 * with the batch's statistics (stats NULL) or fixed ones (train = 0). */
static void test_finite_differences(struct bn_case *c, int running)
{
	double *wp = splitmix_doubles((size_t)c->nparams), *stats = running ? c->stats : NULL;
	long j, bad = -1;
	double worst = 0;

	c->pass(c->w, c->x, c->y, BN_BATCH, c->ws, NULL, c->grad, NULL, NULL, NULL, NULL, stats, 0);
	memcpy(wp, c->w, (size_t)c->nparams * sizeof *wp);
	for (j = 0; j < c->nparams; j++) {
		double lp, lm, fd, err;
		wp[j] = c->w[j] + BN_H;
		lp = bn_loss(c, wp, BN_BATCH, stats, 0);
		wp[j] = c->w[j] - BN_H;
		lm = bn_loss(c, wp, BN_BATCH, stats, 0);
		wp[j] = c->w[j];
		fd = (lp - lm) / (2 * BN_H * BN_BATCH);
		err = fabs(c->grad[j] - fd) / (1e-6 + 1e-5 * fabs(fd));
		if (!(err <= 1) && bad < 0)
			bad = j;
		if (err > worst || isnan(err))
			worst = isnan(err) ? INFINITY : err;
	}
	ok(bad < 0,
	   "%s: gradient matches finite differences (%s statistics; worst error %.2g of "
	   "the tolerance)",
	   c->name, running ? "running" : "batch", worst);
	if (bad >= 0)
		tap_diag("first bad parameter: %ld", bad);
	free(wp);
}

/*
 * Check 2: bn_sq by plain loops.  Layout (t/models/bn_sq.bnn): b.scale γ
 * [2] at 0, b.shift β [2] at 2, out.weight [3, 18] at 4, out.bias [3] at
 * 58.  Per channel c over the M = 9·B values of the batch: mean μ, biased
 * variance v, ŝ = (x − μ)/√(v + 0.1), y = γŝ + β; z = W·y + b; with
 * e = softmax(z) − onehot(label), example i's gradients are
 *   ∂ℓ_i/∂γ_c = Σ_q (Wᵀe)_{c,q}·ŝ_{c,q},  ∂ℓ_i/∂β_c = Σ_q (Wᵀe)_{c,q},
 *   ∂ℓ_i/∂W = e·yᵀ,  ∂ℓ_i/∂b = e
 * (γ and β reach ℓ_i only through y_i: the statistics do not depend on
 * them).  grad is their mean over i, sqgrad the mean of their squares.
 */
static void bn_sq_reference(const struct bn_case *c, double *loss, double *grad, double *sq,
                            double *mean, double *var)
{
	const double *w = c->w;
	long i, ch, q, o, k;

	for (ch = 0; ch < 2; ch++) {
		double s = 0, ss = 0;
		for (i = 0; i < BN_BATCH; i++)
			for (q = 0; q < 9; q++)
				s += c->x[i * 18 + ch * 9 + q];
		mean[ch] = s / (9.0 * BN_BATCH);
		for (i = 0; i < BN_BATCH; i++)
			for (q = 0; q < 9; q++) {
				double d = c->x[i * 18 + ch * 9 + q] - mean[ch];
				ss += d * d;
			}
		var[ch] = ss / (9.0 * BN_BATCH);
	}
	memset(grad, 0, 61 * sizeof *grad);
	memset(sq, 0, 61 * sizeof *sq);
	*loss = 0;
	for (i = 0; i < BN_BATCH; i++) {
		double sh[18], y[18], z[3], e[3], g[61], zmax, norm = 0;
		for (k = 0; k < 18; k++) {
			ch = k / 9;
			sh[k] = (c->x[i * 18 + k] - mean[ch]) / sqrt(var[ch] + 0.1);
			y[k] = w[ch] * sh[k] + w[2 + ch];
		}
		for (o = 0; o < 3; o++) {
			z[o] = w[58 + o];
			for (k = 0; k < 18; k++)
				z[o] += w[4 + o * 18 + k] * y[k];
		}
		zmax = fmax(z[0], fmax(z[1], z[2]));
		for (o = 0; o < 3; o++)
			norm += exp(z[o] - zmax);
		*loss += -(z[(long)c->y[i]] - zmax - log(norm));
		for (o = 0; o < 3; o++)
			e[o] = exp(z[o] - zmax) / norm - (o == (long)c->y[i]);
		memset(g, 0, sizeof g);
		for (k = 0; k < 18; k++) {
			double dy = 0;
			for (o = 0; o < 3; o++)
				dy += e[o] * w[4 + o * 18 + k];
			g[k / 9] += dy * sh[k];
			g[2 + k / 9] += dy;
		}
		for (o = 0; o < 3; o++) {
			for (k = 0; k < 18; k++)
				g[4 + o * 18 + k] = e[o] * y[k];
			g[58 + o] = e[o];
		}
		for (k = 0; k < 61; k++) {
			grad[k] += g[k] / BN_BATCH;
			sq[k] += g[k] * g[k] / BN_BATCH;
		}
	}
}

static void test_sq_reference(struct bn_case *c)
{
	double rgrad[61], rsq[61], mean[2], var[2], rloss, loss, stats[4] = { 0, 0, 1, 1 };
	long ch;

	bn_sq_reference(c, &rloss, rgrad, rsq, mean, var);
	loss = c->pass(c->w, c->x, c->y, BN_BATCH, c->ws, c->out, c->grad, c->sq, NULL, NULL, NULL,
	               stats, 1);
	is_rel(loss, rloss, 1e-12, "bn_sq: the loss is the plain loops' loss");
	ok(fixture_max_rel(61, c->grad, rgrad) < 1e-10,
	   "bn_sq: the gradient is the mean of the "
	   "per-example gradients (worst relative difference %.2g)",
	   fixture_max_rel(61, c->grad, rgrad));
	ok(fixture_max_rel(4, c->sq, rsq) < 1e-10,
	   "bn_sq: sqgrad of γ and β is the mean of the squared "
	   "per-example gradients (worst %.2g)",
	   fixture_max_rel(4, c->sq, rsq));
	ok(fixture_max_rel(57, c->sq + 4, rsq + 4) < 1e-10,
	   "bn_sq: and so is the dense layer's after "
	   "the batchnorm (worst %.2g)",
	   fixture_max_rel(57, c->sq + 4, rsq + 4));
	/* check 3: momentum 0.25 from mean 0, variance 1; M = 9·6 = 54 values */
	for (ch = 0; ch < 2; ch++) {
		is_rel(stats[ch], 0.25 * mean[ch], 1e-12,
		       "bn_sq: running mean %ld ← 0.75·0 + 0.25·batch mean", ch);
		is_rel(stats[2 + ch], 0.75 + 0.25 * var[ch] * 54.0 / 53.0, 1e-12,
		       "bn_sq: running variance %ld ← 0.75·1 + 0.25·(54/53)·biased variance", ch);
	}
}

/* Check 4 on bn_sq, then bn_grad: train/eval consistency. */
static void test_consistency(struct bn_case *c, const double *batch_stats)
{
	double *out_train = splitmix_doubles((size_t)(BN_BATCH * c->outputs));
	double *one = splitmix_doubles((size_t)c->outputs);
	double *keep = splitmix_doubles((size_t)c->nstats);
	long i;
	int same = 1;

	c->pass(c->w, c->x, NULL, BN_BATCH, c->ws, out_train, NULL, NULL, NULL, NULL, NULL, NULL,
	        1);
	c->pass(c->w, c->x, NULL, BN_BATCH, c->ws, c->out, NULL, NULL, NULL, NULL, NULL, NULL, 0);
	ok(memcmp(c->out, out_train, (size_t)(BN_BATCH * c->outputs) * sizeof *c->out) == 0,
	   "%s: without stats, train = 0 normalises by the batch too (same bits)", c->name);
	if (batch_stats) {
		memcpy(keep, batch_stats, (size_t)c->nstats * sizeof *keep);
		c->pass(c->w, c->x, NULL, BN_BATCH, c->ws, c->out, NULL, NULL, NULL, NULL, NULL,
		        keep, 0);
		ok(fixture_max_rel(BN_BATCH * c->outputs, c->out, out_train) < 1e-12,
		   "%s: running statistics equal to the batch's give the training outputs",
		   c->name);
	}
	memcpy(keep, c->stats, (size_t)c->nstats * sizeof *keep);
	c->pass(c->w, c->x, NULL, BN_BATCH, c->ws, c->out, NULL, NULL, NULL, NULL, NULL, c->stats,
	        0);
	ok(memcmp(keep, c->stats, (size_t)c->nstats * sizeof *keep) == 0,
	   "%s: a prediction pass leaves the running statistics alone", c->name);
	for (i = 0; i < BN_BATCH; i++) {
		c->pass(c->w, c->x + i * c->inputs, NULL, 1, c->ws, one, NULL, NULL, NULL, NULL,
		        NULL, c->stats, 0);
		same &= fixture_max_rel(c->outputs, one, c->out + i * c->outputs) < 1e-13;
	}
	ok(same, "%s: with running statistics each example's output is its own", c->name);
	c->pass(c->w, c->x, c->y, BN_BATCH, c->ws, NULL, c->grad, NULL, NULL, NULL, NULL, keep, 1);
	ok(memcmp(keep, c->stats, (size_t)c->nstats * sizeof *keep) != 0,
	   "%s: a training pass with stats updates them", c->name);
	free(out_train);
	free(one);
	free(keep);
}

int main(void)
{
	struct bn_case g = BN_CASE(bn_grad, BN_GRAD, 2, 3, 3, 5);
	struct bn_case s = BN_CASE(bn_sq, BN_SQ, 2, 0, 0, 0);
	double rgrad[61], rsq[61], rloss, bstats[4];

	is_int(BN_GRAD_NSTATS, 2 * (2 + 3 + 3 + 5),
	       "bn_grad: a mean and a variance per channel "
	       "of its four batchnorm layers");
	bn_case_init(&g, 7);
	test_finite_differences(&g, 0);
	test_finite_differences(&g, 1);
	test_consistency(&g, NULL);
	bn_case_free(&g);

	bn_case_init(&s, 8);
	test_sq_reference(&s);
	bn_sq_reference(&s, &rloss, rgrad, rsq, bstats, bstats + 2);
	test_consistency(&s, bstats);
	test_finite_differences(&s, 0);
	bn_case_free(&s);
	return tap_done();
}
