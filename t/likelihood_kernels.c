/*
 * likelihood_kernels.c: TAP tests of the poisson, laplace, studentt and
 * negbinomial likelihoods and of gaussian(mean, logvar) with values
 * computed by hand: the kernels of bnn_gen/likelihood.h in double
 * (the summed negative log-likelihood, the output's delta, a learned
 * scale's gradient and mean squared per-example gradient, the subgradient
 * 0 at y = z), the count check of targets (bnn_data_check_counts: exact
 * messages), and the calibration of central intervals
 * (bnn_metrics_coverage) with the mean absolute error on a tiny set.
 * The finite-difference checks of the same kernels inside whole models
 * are t/gen_gradcheck.c's (gc_pois, gc_lfix, gc_llearn).
 */
#define BNN_GEN_DOUBLE
#include <math.h>
#include <string.h>

#include <bnn.h>
#include <bnn_gen.h>

#include "tap.h"

#define LOG_2 0.69314718055994530942

/* poisson: z = (0, log 2), y = (1, 3), B = 2:
 * ℓ = (1 − 0 + log 1!) + (2 − 3·log 2 + log 3!) = 3 − 3·log 2 + log 6;
 * dz = (e^z − y)/2 = (0, −1/2). */
static void test_poisson_kernel(void)
{
	double z[2] = { 0, LOG_2 }, y[2] = { 1, 3 }, dz[2];
	double loss = bnn_gen_poisson(2, 1, z, y, dz);

	is_float(loss, 3 - 3 * LOG_2 + log(6.0), 1e-14, "poisson: nll = 3 - 3 log 2 + log 6");
	is_float(dz[0], 0, 1e-15, "poisson: dz = (e^0 - 1)/2 = 0");
	is_float(dz[1], -0.5, 1e-15, "poisson: dz = (2 - 3)/2 = -1/2");
	is_float(bnn_gen_poisson(2, 1, z, y, NULL), loss, 0, "poisson: dz NULL, same loss");
}

/* laplace, b = 1/2, z = (1, 2, 3), y = (2, 2, 1), B = 3: r = y − z =
 * (1, 0, −2); ℓ = 3·log(2b) + Σ|r|/b = 0 + 3/0.5 = 6;
 * dz = sign(z − y)/(b·B) = (−2/3, 0, 2/3), 0 at y = z (the subgradient). */
static void test_laplace_fixed(void)
{
	double z[3] = { 1, 2, 3 }, y[3] = { 2, 2, 1 }, dz[3];
	double loss = bnn_gen_laplace_fixed(3, 1, z, y, 0.5, dz);

	is_float(loss, 6, 1e-14, "laplace fixed: nll = 3 log 1 + 3/0.5 = 6");
	is_float(dz[0], -2.0 / 3, 1e-15, "laplace fixed: dz = -1/(b B) below the target");
	is_float(dz[1], 0, 0, "laplace fixed: dz = 0 at y = z (subgradient)");
	is_float(dz[2], 2.0 / 3, 1e-15, "laplace fixed: dz = 1/(b B) above the target");
}

/* laplace with s = log b = log 1/2 learned, the same data: ℓ = 6 again;
 * ∂ℓ_i/∂s = 1 − |r_i|/b = (−1, 1, −3): ds = −1, ss = (1 + 1 + 9)/3. */
static void test_laplace_learned(void)
{
	double z[3] = { 1, 2, 3 }, y[3] = { 2, 2, 1 }, s[1] = { -LOG_2 }, dz[3], ds[1], ss[1];
	double loss = bnn_gen_laplace_learned(3, 1, z, y, s, dz, ds, ss);

	is_float(loss, 6, 1e-14, "laplace learned: nll = 6 at b = 1/2");
	is_float(dz[0], -2.0 / 3, 1e-15, "laplace learned: dz as with a fixed b");
	is_float(dz[1], 0, 0, "laplace learned: dz = 0 at y = z");
	is_float(ds[0], -1, 1e-15, "laplace learned: ds = mean(1 - |r|/b) = -1");
	is_float(ss[0], 11.0 / 3, 1e-14, "laplace learned: ss = mean((1 - |r|/b)^2) = 11/3");
}

/* gaussian with s = log σ = 0 learned through the same kernel: r = (1, 0,
 * −2), ℓ = 3·½log(2π) + Σr²/2 = 3·½log(2π) + 5/2, ds = mean(1 − r²) =
 * −2/3, ss = (0 + 1 + 9)/3: unchanged by the shared loop. */
static void test_gaussian_learned(void)
{
	double z[3] = { 1, 2, 3 }, y[3] = { 2, 2, 1 }, s[1] = { 0 }, dz[3], ds[1], ss[1];
	double loss = bnn_gen_gaussian_learned(3, 1, z, y, s, dz, ds, ss);

	is_float(loss, 1.5 * log(2 * 3.14159265358979323846) + 2.5, 1e-14,
	         "gaussian learned: nll = 3/2 log 2pi + 5/2");
	is_float(dz[2], 2.0 / 3, 1e-15, "gaussian learned: dz = (z - y)/B");
	is_float(ds[0], -2.0 / 3, 1e-15, "gaussian learned: ds = mean(1 - r^2) = -2/3");
	is_float(ss[0], 10.0 / 3, 1e-14, "gaussian learned: ss = 10/3");
}

/* gaussian(mean, logvar) through the shared kernel, the log-variance v a
 * node (srow = k = 1, f = ½): z = (0, 2), y = (2, 2), v = (0, log 4),
 * B = 2; ℓ = ½(log 2π + v + r²e^(−v)) = ½log 2π + 2, then ½log 2π + log 2;
 * dz = −r·e^(−v)/B = (−1, 0); dv = ½(1 − r²e^(−v))/B = (−3/4, 1/4). */
static void test_gaussian_logvar(void)
{
	double z[2] = { 0, 2 }, y[2] = { 2, 2 }, v[2] = { 0, 2 * LOG_2 }, dz[2], dv[2];
	double loss = bnn_gen_scale_lik(BNN_GEN_SCALE_GAUSSIAN, 0, 2, 1, z, y, v, 1, 1, 0.5, dz, dv,
	                                NULL);

	is_float(loss, log(2 * 3.14159265358979323846) + 2 + LOG_2, 1e-14,
	         "gaussian logvar: nll = log 2pi + 2 + log 2");
	is_float(dz[0], -1, 1e-15, "gaussian logvar: dz = -r e^-v / B = -1");
	is_float(dz[1], 0, 0, "gaussian logvar: dz = 0 at y = z");
	is_float(dv[0], -0.75, 1e-15, "gaussian logvar: dv = (1 - 4)/4 = -3/4");
	is_float(dv[1], 0.25, 1e-15, "gaussian logvar: dv = (1 - 0)/4 = 1/4");
}

/* studentt, ν = 3, s = log 1 learned, z = 0, y = 3: the density
 * Γ(2)/(√(3π)Γ(3/2))·(1 + 9/3)^(−2), so ℓ = ½log 3π + log(√π/2) + log 16;
 * dz = −(ν+1)r/(ν + r²) = −12/12 = −1; ds = 1 − (ν+1)r²/(ν + r²) = −2,
 * ss = 4.  The constant with ν = 1 (Cauchy): ℓ(0) = log π. */
static void test_studentt(void)
{
	double z[1] = { 0 }, y[1] = { 3 }, s[1] = { 0 }, dz[1], ds[1], ss[1];
	double pi = 3.14159265358979323846;
	double loss =
	        bnn_gen_scale_lik(BNN_GEN_SCALE_STUDENTT, 3, 1, 1, z, y, s, 0, 1, 1, dz, ds, ss);

	is_float(loss, 0.5 * log(3 * pi) + log(sqrt(pi) / 2) + 4 * LOG_2, 1e-14,
	         "studentt: nll at t = 3, nu = 3");
	is_float(dz[0], -1, 1e-15, "studentt: dz = -(nu+1) r/(nu s^2 + r^2) = -1");
	is_float(ds[0], -2, 1e-15, "studentt: ds = 1 - (nu+1) r^2/(nu s^2 + r^2) = -2");
	is_float(ss[0], 4, 1e-14, "studentt: ss = ds^2 = 4");
	y[0] = 0;
	is_float(bnn_gen_scale_lik(BNN_GEN_SCALE_STUDENTT, 1, 1, 1, z, y, s, 0, 1, 1, NULL, NULL,
	                           NULL),
	         log(pi), 1e-14, "studentt: nu = 1 is Cauchy, nll(0) = log pi");
}

/* negbinomial, m = e^z = 2, ρ = e^s = 2, y = 1: P(1) = Γ(3)/(Γ(2)·1!)·
 * (ρ/(ρ+m))^ρ·(m/(ρ+m))^y = 2/8, so ℓ = 2 log 2; dz = ρ(m − y)/(ρ + m) =
 * 1/2; ds = ρ[ψ(2) − ψ(3) − log(ρ/(ρ+m)) + (y − m)/(ρ + m)] =
 * 2(−1/2 + log 2 − 1/4) = 2 log 2 − 3/2, the dispersion a node (f = 1). */
static void test_negbinomial(void)
{
	double z[1] = { LOG_2 }, y[1] = { 1 }, s[1] = { LOG_2 }, dz[1], ds[1];
	double loss = bnn_gen_scale_lik(BNN_GEN_SCALE_NEGBINOMIAL, 0, 1, 1, z, y, s, 1, 1, 1, dz,
	                                ds, NULL);

	is_float(loss, 2 * LOG_2, 1e-14, "negbinomial: nll = 2 log 2");
	is_float(dz[0], 0.5, 1e-15, "negbinomial: dz = rho (m - y)/(rho + m) = 1/2");
	is_float(ds[0], 2 * LOG_2 - 1.5, 1e-14, "negbinomial: ds = 2 log 2 - 3/2");
	is_float(bnn_gen_digamma(1), -0.57721566490153286061, 1e-14, "digamma(1) = -gamma");
	is_float(bnn_gen_digamma(0.5), -0.57721566490153286061 - 2 * LOG_2, 1e-14,
	         "digamma(1/2) = -gamma - 2 log 2");
	is_float(bnn_gen_digamma(30), 3.38443813268552, 1e-13, "digamma(30), the series");
}

static void test_counts(void)
{
	float y_ok[3] = { 0, 4, 17 }, y_neg[3] = { 0, -1, 2 }, y_frac[4] = { 1, 2, 3, 2.5f };
	bnn_dataset ds;
	bnn_err err;

	memset(&ds, 0, sizeof ds);
	ds.n = 3;
	ds.targets = 1;
	ds.y = y_ok;
	is_int(bnn_data_check_counts(&ds, "counts.csv", &err), BNN_OK, "counts 0, 4, 17 pass");
	ds.y = y_neg;
	is_int(bnn_data_check_counts(&ds, "counts.csv", &err), BNN_ERANGE, "a negative count");
	is_str(err.message,
	       "counts.csv: example 2: count -1 is negative (poisson and negbinomial "
	       "targets are non-negative integers)",
	       "the negative count's message names the file and the example");
	ds.n = 2;
	ds.targets = 2;
	ds.y = y_frac;
	is_int(bnn_data_check_counts(&ds, "c.csv", &err), BNN_EFORMAT, "a fractional count");
	is_str(err.message,
	       "c.csv: example 2, target 2: count 2.5 is not an integer (poisson and "
	       "negbinomial targets are non-negative integers)",
	       "the fractional count's message names the example and the target");
}

/* Four targets with their predictive CDFs: F(y) = 0.3, 0.04, 0.97, 0.5
 * (continuous: F(y−) = F(y)), and one count with F(y) = 0.6, F(y − 1) =
 * 0.02.  50%: [0.25, 0.75] holds 0.3, 0.5 and the count (0.6 ≥ 0.25 and
 * 0.02 < 0.75): 3/5; 90%: [0.05, 0.95] the same 3/5; 95%: [0.025, 0.975]
 * adds 0.04 and 0.97: 5/5. */
static void test_coverage(void)
{
	double cdf[5] = { 0.3, 0.04, 0.97, 0.5, 0.6 }, below[5] = { 0.3, 0.04, 0.97, 0.5, 0.02 };
	double c = -1;
	float mean[2] = { 1, 2 }, var[2] = { 1, 1 }, y[2] = { 2, 5 };
	bnn_regression_metrics rm;
	bnn_err err;

	is_int(bnn_metrics_coverage(cdf, below, 5, 0.5, &c, &err), BNN_OK, "coverage 50%%");
	is_float(c, 0.6, 0, "coverage 50%%: 3 of 5 inside");
	bnn_metrics_coverage(cdf, below, 5, 0.9, &c, &err);
	is_float(c, 0.6, 0, "coverage 90%%: 3 of 5 inside");
	bnn_metrics_coverage(cdf, below, 5, 0.95, &c, &err);
	is_float(c, 1, 0, "coverage 95%%: 5 of 5 inside");
	is_int(bnn_metrics_coverage(cdf, below, 5, 1, &c, &err), BNN_EINVAL, "level 1 refused");
	is_str(err.message, "bnn_metrics_coverage: the level 1 is not inside (0, 1)",
	       "level 1: the message");
	is_int(bnn_metrics_regression(mean, var, y, 2, 1, &rm, &err), BNN_OK, "regression metrics");
	is_float(rm.mae, 2, 0, "mae = (|2 - 1| + |5 - 2|)/2 = 2");
}

int main(void)
{
	test_poisson_kernel();
	test_laplace_fixed();
	test_laplace_learned();
	test_gaussian_learned();
	test_gaussian_logvar();
	test_studentt();
	test_negbinomial();
	test_counts();
	test_coverage();
	return tap_done();
}
