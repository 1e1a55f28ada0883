/*
 * metrics_regression.c: bnn_metrics_regression(), the root mean squared
 * error, the mean absolute error and the Gaussian negative log-likelihood
 * of a predictive mean and variance per output against the targets; and
 * bnn_metrics_coverage(), the calibration of central predictive intervals
 * from the predictive CDF at the targets, and bnn_metrics_pit(), the
 * histogram of the probability integral transform from the same CDFs.  The definitions are in
 * bnn_metrics.h and docs/metrics.md; every variance is checked before any
 * sum is formed, and the sums are accumulated in double.
 */
#include <limits.h>
#include <math.h>

#include "bnn.h"

/* log(2*pi), so that each term is 0.5*(log(2*pi) + log(var)) + ...
 * (M_PI is not ISO C). */
#define METRICS_LOG_2PI 1.83787706640934548356065947281123527

int bnn_metrics_regression(const float *mean, const float *var, const float *y, long n, long d,
                           bnn_regression_metrics *out, bnn_err *err)
{
	static const char who[] = "bnn_metrics_regression";
	double sq = 0.0, nll = 0.0, abs_sum = 0.0;
	long i, j;

	if (mean == NULL || var == NULL || y == NULL || out == NULL)
		return bnn_fail(err, BNN_EINVAL, "%s: %s is NULL", who,
		                mean == NULL  ? "mean"
		                : var == NULL ? "var"
		                : y == NULL   ? "y"
		                              : "out");
	if (n < 1)
		return bnn_fail(err, BNN_EINVAL, "%s: n is %ld, need at least 1 example", who, n);
	if (d < 1)
		return bnn_fail(err, BNN_EINVAL, "%s: d is %ld, need at least 1 output", who, d);
	if (n > LONG_MAX / d)
		return bnn_fail(err, BNN_EINVAL, "%s: n x d = %ld x %ld overflows", who, n, d);
	for (i = 0; i < n; i++)
		for (j = 0; j < d; j++)
			if (!(var[i * d + j] > 0.0f)) /* NaN fails too */
				return bnn_fail(err, BNN_EINVAL,
				                "%s: example %ld (0-based), output "
				                "%ld (0-based): variance %g is not "
				                "positive",
				                who, i, j, (double)var[i * d + j]);

	for (i = 0; i < n * d; i++) {
		double v = var[i];
		double r = (double)y[i] - (double)mean[i];

		sq += r * r;
		abs_sum += fabs(r);
		nll += 0.5 * (METRICS_LOG_2PI + log(v)) + r * r / (2.0 * v);
	}

	out->n = n;
	out->rmse = sqrt(sq / ((double)n * (double)d));
	out->nll = nll / (double)n;
	out->mae = abs_sum / ((double)n * (double)d);
	return BNN_OK;
}

int bnn_metrics_coverage(const double *cdf, const double *cdf_below, long n, double c,
                         double *coverage, bnn_err *err)
{
	double lo = (1 - c) / 2, hi = (1 + c) / 2;
	long i, inside = 0;

	if (!cdf || !cdf_below || !coverage)
		return bnn_fail(err, BNN_EINVAL, "bnn_metrics_coverage: %s is NULL",
		                !cdf         ? "cdf"
		                : !cdf_below ? "cdf_below"
		                             : "coverage");
	if (n < 1)
		return bnn_fail(err, BNN_EINVAL,
		                "bnn_metrics_coverage: n is %ld, need at least 1 target", n);
	if (!(c > 0 && c < 1))
		return bnn_fail(err, BNN_EINVAL,
		                "bnn_metrics_coverage: the level %g is not inside (0, 1)", c);
	for (i = 0; i < n; i++)
		inside += cdf[i] >= lo && cdf_below[i] < hi;
	*coverage = (double)inside / (double)n;
	return BNN_OK;
}

/* Target i's PIT distribution function at u (Czado, Gneiting & Held 2009,
 * eq. 2): 0 up to lo = P(Y < y), 1 from hi = P(Y ≤ y), linear between; for a
 * continuous target (lo = hi) the step at F(y).  F(0) = 0 and F(1) = 1 hold
 * by the caller's convention, so every target's mass lands in [0, 1]. */
static double metrics_pit_cdf(double lo, double hi, double u)
{
	if (u < lo)
		return 0;
	if (u >= hi)
		return 1;
	return (u - lo) / (hi - lo);
}

int bnn_metrics_pit(const double *cdf, const double *cdf_below, long n, int nbins, double *heights,
                    bnn_err *err)
{
	long i;
	int b;

	if (!cdf || !cdf_below || !heights)
		return bnn_fail(err, BNN_EINVAL, "bnn_metrics_pit: %s is NULL",
		                !cdf         ? "cdf"
		                : !cdf_below ? "cdf_below"
		                             : "heights");
	if (n < 1)
		return bnn_fail(err, BNN_EINVAL,
		                "bnn_metrics_pit: n is %ld, need at least 1 target", n);
	if (nbins < 1)
		return bnn_fail(err, BNN_EINVAL,
		                "bnn_metrics_pit: nbins is %d, need at least 1 bin", nbins);
	for (b = 0; b < nbins; b++)
		heights[b] = 0;
	for (i = 0; i < n; i++) {
		double lo = fmin(cdf_below[i], cdf[i]), hi = cdf[i], prev = 0;
		for (b = 0; b < nbins; b++) { /* bin b: F(b+1/J) − F(b/J), the last edge 1 */
			double next =
			        b + 1 == nbins ? 1 : metrics_pit_cdf(lo, hi, (b + 1.0) / nbins);
			heights[b] += next - prev;
			prev = next;
		}
	}
	for (b = 0; b < nbins; b++)
		heights[b] /= (double)n;
	return BNN_OK;
}
