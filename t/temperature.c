/*
 * temperature.c: TAP tests of temperature scaling (runtime/metrics/
 * temperature.c): the NLL of the scaled predictive against values worked
 * out by hand, the fitted temperature against a fine 1-D grid search of
 * the same objective (one sample, and a two-sample Monte-Carlo
 * predictive), the boundary of the range on separable logits, and the
 * argument errors with their messages.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <math.h>
#include <stdio.h>

#include "bnn.h"
#include "tap.h"

/* Four examples of three classes, one sample:
 *   z = (2, 0, 0), y = 0: log(e² + 2) − 2        = 0.2395447662218846
 *   z = (0, 1, 0), y = 1: log(2 + e) − 1         = 0.5514447139320509
 *   z = (1, 0, 0), y = 2: log(e + 2) − 0         = 1.5514447139320509 (wrong)
 *   z = (0, 0, 3), y = 2: log(2 + e³) − 3        = 0.0949229564209611
 * mean NLL at T = 1: 0.609339287626737; at T = 2 (z halved):
 * 0.7522948470421632 (by the same formulas). */
static const float z4[] = { 2, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 3 };
static const int y4[] = { 0, 1, 2, 2 };

static void test_nll_by_hand(void)
{
	double nll = 0;
	bnn_err err;

	ok(bnn_temperature_nll(z4, 1, 4, 3, y4, 1.0, &nll, &err) == BNN_OK, "NLL at T = 1");
	is_float(nll, 0.609339287626737, 1e-14, "is the mean of the four worked out by hand");
	ok(bnn_temperature_nll(z4, 1, 4, 3, y4, 2.0, &nll, &err) == BNN_OK, "NLL at T = 2");
	is_float(nll, 0.7522948470421632, 1e-14, "is that of the halved logits");
	/* two samples, the second the first doubled: example 0's predictive is
	 * ½(softmax(2,0,0)_0 + softmax(4,0,0)_0) = ½(e²/(e² + 2) + e⁴/(e⁴ + 2))
	 * = ½(0.786986... + 0.964679...); checked against the formula in double */
	{
		float z[24];
		double want = 0, p0, p1;
		int i, j;
		for (i = 0; i < 12; i++) {
			z[i] = z4[i];
			z[12 + i] = 2 * z4[i];
		}
		for (i = 0; i < 4; i++) {
			double s0 = 0, s1 = 0;
			for (j = 0; j < 3; j++) {
				s0 += exp(z4[3 * i + j]);
				s1 += exp(2.0 * z4[3 * i + j]);
			}
			p0 = exp(z4[3 * i + y4[i]]) / s0;
			p1 = exp(2.0 * z4[3 * i + y4[i]]) / s1;
			want -= log(0.5 * (p0 + p1)) / 4;
		}
		ok(bnn_temperature_nll(z, 2, 4, 3, y4, 1.0, &nll, &err) == BNN_OK,
		   "NLL of a two-sample predictive");
		is_float(nll, want, 1e-14, "is −log of the mean of the samples' probabilities");
	}
}

/* The best of a grid of `points` temperatures evenly spaced in log T over
 * [0.01, 100]: its T and NLL. */
static void grid_search(const float *z, long samples, long n, int k, const int *y, long points,
                        double *t_best, double *nll_best)
{
	double lo = log(0.01), hi = log(100.0), nll;
	bnn_err err;
	long i;

	*nll_best = INFINITY;
	for (i = 0; i < points; i++) {
		double t = exp(lo + (hi - lo) * (double)i / (double)(points - 1));
		if (bnn_temperature_nll(z, samples, n, k, y, t, &nll, &err) == BNN_OK &&
		    nll < *nll_best) {
			*nll_best = nll;
			*t_best = t;
		}
	}
}

static void check_against_grid(const float *z, long samples, long n, int k, const int *y,
                               const char *what)
{
	const long points = 200001; /* a step of 4.6e-5 in log T */
	double t = 0, nll = 0, t_grid = 0, nll_grid = 0;
	bnn_err err;

	grid_search(z, samples, n, k, y, points, &t_grid, &nll_grid);
	ok(bnn_fit_temperature(z, samples, n, k, y, &t, &err) == BNN_OK, "%s: fitted", what);
	ok(fabs(log(t) - log(t_grid)) <= (log(100.0) - log(0.01)) / (points - 1),
	   "%s: T = %.9g is within one grid step of the grid's best %.9g", what, t, t_grid);
	bnn_temperature_nll(z, samples, n, k, y, t, &nll, &err);
	ok(nll <= nll_grid + 1e-15, "%s: its NLL %.17g is no worse than the grid's %.17g", what,
	   nll, nll_grid);
}

static void test_fit(void)
{
	/* twelve examples of four classes from a fixed LCG, labels agreeing
	 * with the largest logit most of the time: an overconfident set */
	float z[2 * 12 * 4];
	int y[12], i;
	unsigned s = 12345;

	for (i = 0; i < 2 * 12 * 4; i++) {
		s = s * 1103515245u + 12345u;
		z[i] = (float)((double)(s >> 8) / 16777216.0 * 8 - 4);
	}
	for (i = 0; i < 12; i++) {
		s = s * 1103515245u + 12345u;
		y[i] = (s >> 16) % 3 == 0 ? (int)((s >> 20) % 4) : 0;
		z[i * 4] += 2; /* class 0 favoured in sample 0 */
		z[48 + i * 4] += 2;
	}
	check_against_grid(z4, 1, 4, 3, y4, "four examples by hand");
	check_against_grid(z, 1, 12, 4, y, "twelve examples, one sample");
	check_against_grid(z, 2, 12, 4, y, "twelve examples, two samples");
	{
		/* separable logits: the NLL falls as T does, so the fit stops at the
		 * lower end of its range, 0.01 */
		static const float sep[] = { 1, 0, 0, 1 };
		static const int ysep[] = { 0, 1 };
		double t = 0;
		bnn_err err;
		int rc = bnn_fit_temperature(sep, 1, 2, 2, ysep, &t, &err);
		ok(rc == BNN_OK && fabs(t - 0.01) < 1e-8,
		   "separable logits: T is the range's lower end (%.9g)", t);
	}
}

static void test_errors(void)
{
	static const int bad[] = { 0, 3 };
	double v;
	bnn_err err;

	is_int(bnn_temperature_nll(z4, 1, 0, 3, y4, 1.0, &v, &err), BNN_EINVAL, "n = 0");
	is_str(err.message, "temperature scaling: the validation set is empty", "its message");
	is_int(bnn_fit_temperature(z4, 1, 2, 3, bad, &v, &err), BNN_EINVAL, "a label of 3 of 3");
	is_str(err.message, "temperature scaling: label 3 of example 1 is not a class in [0, 3)",
	       "its message");
	is_int(bnn_temperature_nll(z4, 1, 4, 3, y4, -1.0, &v, &err), BNN_EINVAL, "T = -1");
	is_str(err.message, "temperature scaling: T = -1 is not > 0", "its message");
	is_int(bnn_fit_temperature(z4, 1, 4, 1, y4, &v, &err), BNN_EINVAL, "one class");
	is_str(err.message, "temperature scaling: 1 class (a temperature needs at least 2)",
	       "its message");
	{
		float inf[] = { 0, INFINITY };
		is_int(bnn_fit_temperature(inf, 1, 1, 2, y4, &v, &err), BNN_EINVAL,
		       "an infinite logit");
		is_str(err.message, "temperature scaling: logit 1 is not finite", "its message");
	}
}

int main(void)
{
	test_nll_by_hand();
	test_fit();
	test_errors();
	return tap_done();
}
