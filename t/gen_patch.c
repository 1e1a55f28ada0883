/*
 * gen_patch.c: TAP tests of ensemble model patching (emp(k), ecmp(k)) in
 * the code bnnc generates.
 *
 * t/models/pt_grad.bnn patches a conv2d layer (ECMP, k = 3), a batchnorm
 * (EMP, k = 4), a hidden dense layer (EMP, k = 2) and the output layer
 * (ECMP, k = 2); pt_point.bnn is the same network without posteriors.
 * Both are compiled in double precision.  Checks:
 *   1. the gradient against central finite differences, with the mixing
 *      assignment fixed by seeding the pass's rng the same way for every
 *      pass, and at the mixture's mean (no rng);
 *   2. a pass computes the point network on the parameters it drew: the
 *      draws are replayed from the same seed (EMP: one bnn_rng_below(k)
 *      per layer; ECMP: one per value, layer by layer in forward order),
 *      the drawn components gathered into pt_point's layout, and pt_point's
 *      outputs, loss and gradient (scattered back) must match; without rng
 *      the parameters are the mean of the components;
 *   3. sqgrad against per-example passes drawing the same components (the
 *      batchnorm normalised by fixed running statistics, so examples do
 *      not interact);
 *   4. the sampling distributions of bnn_gen_patch_draw: EMP gives one
 *      component for a whole layer, uniform over k; ECMP one per value,
 *      uniform, and two values' components independent.
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

#include "pt_grad.h"
#include "pt_point.h"
#include "fixtures.h"
#include "tap.h"

#define B    5
#define SEED 77
#define H    1e-6

/* pt_grad's patched tensors in order: components, values per component,
 * offset in pt_grad, offset in pt_point, layer (for EMP's one draw per
 * layer); and the layers: k, ECMP or not, values per component. */
struct pt_tensor {
	int k;
	long n, off, point_off;
	int layer;
};
static const struct pt_tensor pt_tensors[] = {
	{ 3, 54, 0, 0, 0 },     /* c1.weight [3, 2, 3, 3] */
	{ 3, 3, 162, 54, 0 },   /* c1.bias */
	{ 4, 3, 171, 57, 1 },   /* b1.scale */
	{ 4, 3, 183, 60, 1 },   /* b1.shift */
	{ 2, 360, 195, 63, 2 }, /* h.weight [6, 60] */
	{ 2, 6, 915, 423, 2 },  /* h.bias */
	{ 2, 18, 927, 429, 3 }, /* out.weight [3, 6] */
	{ 2, 3, 963, 447, 3 },  /* out.bias */
};
#define PT_NTENSORS 8
static const struct {
	int k, ecmp;
	long n;
} pt_layers[] = { { 3, 1, 57 }, { 4, 0, 6 }, { 2, 0, 366 }, { 2, 1, 21 } };

static double w[PT_GRAD_NPARAMS], x[B * PT_GRAD_INPUTS], y[B];
static double stats[PT_GRAD_NSTATS] = { 0.1, -0.2, 0.3, 1.5, 0.7, 1.1 };

/* One pt_grad pass over the first b examples from x0, its rng seeded with
 * SEED (with_rng) or none; st: the running statistics (train = 0) or NULL
 * (batch statistics). */
static double pt_pass(const double *wt, const double *x0, const double *y0, long b, double *out,
                      double *grad, double *sq, int with_rng, double *st)
{
	static double ws[1 << 20]; /* conv2d: eight lanes with their guards */
	bnn_rng rng;

	if (pt_grad_workspace_floats(b) > sizeof ws / sizeof ws[0])
		tap_bail_out("workspace too small");
	bnn_rng_seed(&rng, SEED);
	return pt_grad_pass_f64(wt, x0, y0, b, ws, out, grad, sq, with_rng ? &rng : NULL, NULL,
	                        NULL, st, 0);
}

/* Check 1. */
static void test_finite_differences(int with_rng)
{
	double *g = splitmix_doubles(PT_GRAD_NPARAMS), wp[PT_GRAD_NPARAMS];
	double worst = 0;
	long j, zero = 0;

	pt_pass(w, x, y, B, NULL, g, NULL, with_rng, NULL);
	memcpy(wp, w, sizeof wp);
	for (j = 0; j < PT_GRAD_NPARAMS; j++) {
		double lp, lm, fd, err;
		wp[j] = w[j] + H;
		lp = pt_pass(wp, x, y, B, NULL, NULL, NULL, with_rng, NULL);
		wp[j] = w[j] - H;
		lm = pt_pass(wp, x, y, B, NULL, NULL, NULL, with_rng, NULL);
		wp[j] = w[j];
		fd = (lp - lm) / (2 * H * B);
		err = fabs(g[j] - fd) / (1e-6 + 1e-5 * fabs(fd));
		if (isnan(err) || err > worst)
			worst = isnan(err) ? INFINITY : err;
		zero += g[j] == 0;
	}
	ok(worst <= 1,
	   "pt_grad%s: gradient matches finite differences (worst error %.2g of the "
	   "tolerance)",
	   with_rng ? " [rng]" : " [mean]", worst);
	if (with_rng)
		ok(zero > 300,
		   "pt_grad [rng]: the components not drawn get no gradient (%ld zeros)", zero);
	free(g);
}

/* The components the pass seeded with SEED draws, into z (one per value of
 * every tensor), replayed from the documented order. */
static void pt_draws(long *z)
{
	bnn_rng rng;
	long at = 0, i;
	int l;

	bnn_rng_seed(&rng, SEED);
	for (l = 0; l < 4; l++) {
		long c =
		        pt_layers[l].ecmp ? 0 : (long)bnn_rng_below(&rng, (uint64_t)pt_layers[l].k);
		for (i = 0; i < pt_layers[l].n; i++)
			z[at + i] = pt_layers[l].ecmp
			                    ? (long)bnn_rng_below(&rng, (uint64_t)pt_layers[l].k)
			                    : c;
		at += pt_layers[l].n;
	}
}

/* Check 2. */
static void test_point_equivalence(void)
{
	static double ws[1 << 20]; /* conv2d: eight lanes with their guards */
	double wpoint[PT_POINT_NPARAMS], gpoint[PT_POINT_NPARAMS], g[PT_GRAD_NPARAMS];
	double want[PT_GRAD_NPARAMS], out[B * 3], outp[B * 3], loss, lossp;
	long z[PT_POINT_NPARAMS], i, at = 0;
	int t, c;

	pt_draws(z);
	for (t = 0; t < PT_NTENSORS; t++) {
		const struct pt_tensor *pt = &pt_tensors[t];
		for (i = 0; i < pt->n; i++)
			wpoint[pt->point_off + i] = w[pt->off + z[at + i] * pt->n + i];
		at += pt->n;
	}
	loss = pt_pass(w, x, y, B, out, g, NULL, 1, NULL);
	lossp = pt_point_pass_f64(wpoint, x, y, B, ws, outp, gpoint, NULL, NULL, NULL, NULL, NULL,
	                          0);
	ok(memcmp(out, outp, sizeof out) == 0 && loss == lossp,
	   "pt_grad [rng]: outputs and loss are the point network's on the drawn components");
	at = 0;
	for (t = 0; t < PT_NTENSORS; t++) {
		const struct pt_tensor *pt = &pt_tensors[t];
		for (c = 0; c < pt->k; c++)
			for (i = 0; i < pt->n; i++)
				want[pt->off + c * pt->n + i] =
				        z[at + i] == c ? gpoint[pt->point_off + i] : 0;
		at += pt->n;
	}
	ok(memcmp(g, want, sizeof g) == 0,
	   "pt_grad [rng]: each component's gradient is the point network's where it was drawn, "
	   "0 elsewhere");

	for (t = 0; t < PT_NTENSORS; t++) {
		const struct pt_tensor *pt = &pt_tensors[t];
		for (i = 0; i < pt->n; i++) {
			double s = 0;
			for (c = 0; c < pt->k; c++)
				s += w[pt->off + c * pt->n + i];
			wpoint[pt->point_off + i] = s / pt->k;
		}
	}
	pt_pass(w, x, y, B, out, g, NULL, 0, NULL);
	pt_point_pass_f64(wpoint, x, y, B, ws, outp, gpoint, NULL, NULL, NULL, NULL, NULL, 0);
	ok(fixture_max_rel(B * 3, out, outp) < 1e-13,
	   "pt_grad [mean]: without rng the parameters are the components' mean");
	for (t = 0; t < PT_NTENSORS; t++) {
		const struct pt_tensor *pt = &pt_tensors[t];
		for (c = 0; c < pt->k; c++)
			for (i = 0; i < pt->n; i++)
				want[pt->off + c * pt->n + i] = gpoint[pt->point_off + i] / pt->k;
	}
	ok(fixture_max_rel(PT_GRAD_NPARAMS, g, want) < 1e-12,
	   "pt_grad [mean]: each component gets 1/k of the gradient");
}

/* Check 3: sqgrad = (1/B) Σ_i g_i² over per-example passes with the same
 * draws (running statistics: the examples do not interact). */
static void test_sqgrad(int with_rng)
{
	double sq[PT_GRAD_NPARAMS], g[PT_GRAD_NPARAMS], gi[PT_GRAD_NPARAMS];
	double want[PT_GRAD_NPARAMS] = { 0 }, wantg[PT_GRAD_NPARAMS] = { 0 };
	long i, j;

	pt_pass(w, x, y, B, NULL, g, sq, with_rng, stats);
	for (i = 0; i < B; i++) {
		pt_pass(w, x + i * PT_GRAD_INPUTS, y + i, 1, NULL, gi, NULL, with_rng, stats);
		for (j = 0; j < PT_GRAD_NPARAMS; j++) {
			want[j] += gi[j] * gi[j] / B;
			wantg[j] += gi[j] / B;
		}
	}
	ok(fixture_max_rel(PT_GRAD_NPARAMS, g, wantg) < 1e-10 &&
	           fixture_max_rel(PT_GRAD_NPARAMS, sq, want) < 1e-10,
	   "pt_grad%s: grad and sqgrad are the mean gradient and squared gradient of per-example "
	   "passes (worst %.2g)",
	   with_rng ? " [rng]" : " [mean]", fixture_max_rel(PT_GRAD_NPARAMS, sq, want));
}

/* Check 4. */
static void test_draws(void)
{
	enum {
		N = 1000,
		ROUNDS = 40,
		EMP_DRAWS = 20000
	};
	static double z[N];
	long counts[4] = { 0 }, pairs[16] = { 0 }, i, r;
	int same = 1, c, good = 1;
	bnn_rng rng;

	bnn_rng_seed(&rng, 5);
	for (r = 0; r < EMP_DRAWS; r++) {
		bnn_gen_patch_draw(&rng, 4, 7, 0, z);
		for (i = 1; i < 7; i++)
			same &= z[i] == z[0];
		counts[(long)z[0]]++;
	}
	ok(same, "EMP: one component for all the values of a layer");
	/* each count ~ Binomial(20000, 1/4): mean 5000, sd 61; 4 sd = 245 */
	for (c = 0; c < 4; c++)
		good &= labs(counts[c] - 5000) < 245;
	ok(good, "EMP: the components are uniform (%ld %ld %ld %ld of 20000)", counts[0], counts[1],
	   counts[2], counts[3]);
	memset(counts, 0, sizeof counts);
	for (r = 0; r < ROUNDS; r++) {
		bnn_gen_patch_draw(&rng, 4, N, 1, z);
		for (i = 0; i < N; i++)
			counts[(long)z[i]]++;
		for (i = 0; i + 1 < N; i += 2)
			pairs[(long)z[i] * 4 + (long)z[i + 1]]++;
	}
	good = 1;
	for (c = 0; c < 4; c++) /* Binomial(40000, 1/4): sd 87 */
		good &= labs(counts[c] - 10000) < 350;
	ok(good, "ECMP: every value's component is uniform (%ld %ld %ld %ld of 40000)", counts[0],
	   counts[1], counts[2], counts[3]);
	good = 1;
	for (c = 0; c < 16; c++) /* Binomial(20000, 1/16): mean 1250, sd 34 */
		good &= labs(pairs[c] - 1250) < 140;
	ok(good, "ECMP: neighbouring values draw independently (16 pairs, 1/16 each)");
}

int main(void)
{
	uint64_t s = 3;
	long i;

	for (i = 0; i < PT_GRAD_NPARAMS; i++)
		w[i] = splitmix_uniform(&s, -0.7, 0.7);
	for (i = 171; i < 183; i++) /* batchnorm scales near 1 */
		w[i] = splitmix_uniform(&s, 0.6, 1.4);
	for (i = 0; i < B * PT_GRAD_INPUTS; i++)
		x[i] = splitmix_uniform(&s, -1, 1);
	for (i = 0; i < B; i++)
		y[i] = (double)(i % 3);
	is_int(PT_GRAD_NPARAMS, 3 * 57 + 4 * 6 + 2 * 366 + 2 * 21,
	       "pt_grad holds k copies of each patched layer's parameters");
	test_finite_differences(1);
	test_finite_differences(0);
	test_point_equivalence();
	test_sqgrad(1);
	test_sqgrad(0);
	test_draws();
	return tap_done();
}
