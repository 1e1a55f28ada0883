/*
 * temperature.c: temperature scaling (Guo et al. 2017, "On calibration of
 * modern neural networks", section 4.2): one scalar T > 0 divides every
 * logit of a categorical model, p = softmax(z/T), fitted by minimising the
 * NLL of held-out (validation) labels.  T leaves the predicted class
 * unchanged (accuracy is the same) and only sharpens (T < 1) or softens
 * (T > 1) the probabilities.
 *
 * With S Monte-Carlo samples of the logits (a posterior, MC dropout), the
 * scaled predictive is the mean of the S scaled softmax rows, and the
 * objective is the NLL of that mixture,
 *   NLL(T) = −(1/n) Σ_i log( (1/S) Σ_s softmax(z_is / T)_{y_i} ),
 * summed by log-sum-exp over the samples.
 *
 * The search runs on u = log T.  For S = 1, NLL is convex in β = 1/T (a
 * log-sum-exp of β·z minus the linear β·z_y), so it is unimodal in
 * u = −log β; for S > 1 the mixture need not be, so the fit first scans a
 * grid of TEMP_GRID points over [log TEMP_MIN, log TEMP_MAX] for the best
 * bracket and then narrows it by golden-section search to TEMP_TOL in u
 * (no derivatives: the same code for S = 1 and S > 1).
 */
#include <math.h>
#include <stdlib.h>

#include "bnn.h"

#define TEMP_MIN  0.01  /* the range searched for T */
#define TEMP_MAX  100.0 /* */
#define TEMP_GRID 41    /* grid points of the bracketing scan in log T */
#define TEMP_TOL  1e-9  /* golden-section stopping width in log T */

/* log Σ_j exp(z_j / T) − z_y / T for one row of k logits: −log softmax_y. */
static double temp_row_nll(const float *z, int k, int y, double inv_t)
{
	double zmax = (double)z[0] * inv_t, sum = 0;
	int j;

	for (j = 1; j < k; j++)
		if ((double)z[j] * inv_t > zmax)
			zmax = (double)z[j] * inv_t;
	for (j = 0; j < k; j++)
		sum += exp((double)z[j] * inv_t - zmax);
	return zmax + log(sum) - (double)z[y] * inv_t;
}

/* The objective at T, without the argument checks of the public call. */
static double temp_nll(const float *logits, long samples, long n, int k, const int *labels,
                       double t)
{
	double inv_t = 1.0 / t, total = 0;
	long i, s;

	for (i = 0; i < n; i++) {
		/* log Σ_s p_s(y_i), by log-sum-exp of the samples' log-probabilities */
		double lmax = -INFINITY, sum = 0;
		for (s = 0; s < samples; s++) {
			double l = -temp_row_nll(logits + (s * n + i) * k, k, labels[i], inv_t);
			if (l > lmax) {
				sum = sum * exp(lmax - l) + 1;
				lmax = l;
			} else {
				sum += exp(l - lmax);
			}
		}
		total += -(lmax + log(sum) - log((double)samples));
	}
	return total / (double)n;
}

static int temp_check(const float *logits, long samples, long n, int k, const int *labels,
                      bnn_err *err)
{
	long i;

	if (!logits || !labels)
		return bnn_fail(err, BNN_EINVAL, "temperature scaling: no %s given",
		                !logits ? "logits" : "labels");
	if (n < 1)
		return bnn_fail(err, BNN_EINVAL,
		                "temperature scaling: the validation set is empty");
	if (samples < 1)
		return bnn_fail(err, BNN_EINVAL, "temperature scaling: %ld samples of the logits",
		                samples);
	if (k < 2)
		return bnn_fail(err, BNN_EINVAL,
		                "temperature scaling: %d class (a temperature needs at least 2)",
		                k);
	for (i = 0; i < n; i++)
		if (labels[i] < 0 || labels[i] >= k)
			return bnn_fail(err, BNN_EINVAL,
			                "temperature scaling: label %d of example %ld is not a "
			                "class in [0, %d)",
			                labels[i], i, k);
	for (i = 0; i < samples * n * k; i++)
		if (!isfinite(logits[i]))
			return bnn_fail(err, BNN_EINVAL,
			                "temperature scaling: logit %ld is not finite", i);
	return BNN_OK;
}

int bnn_temperature_nll(const float *logits, long samples, long n, int k, const int *labels,
                        double t, double *nll, bnn_err *err)
{
	int rc = temp_check(logits, samples, n, k, labels, err);

	if (rc)
		return rc;
	if (!(t > 0) || !isfinite(t))
		return bnn_fail(err, BNN_EINVAL, "temperature scaling: T = %g is not > 0", t);
	*nll = temp_nll(logits, samples, n, k, labels, t);
	return BNN_OK;
}

int bnn_fit_temperature(const float *logits, long samples, long n, int k, const int *labels,
                        double *t, bnn_err *err)
{
	const double lo = log(TEMP_MIN), hi = log(TEMP_MAX), step = (hi - lo) / (TEMP_GRID - 1);
	const double g = (sqrt(5.0) - 1) / 2; /* 1/φ: the golden ratio's cut */
	double a, b, c, d, fc, fd, best = INFINITY;
	int rc = temp_check(logits, samples, n, k, labels, err), i, ibest = 0;

	if (rc)
		return rc;
	for (i = 0; i < TEMP_GRID; i++) { /* the bracket: the best grid point's neighbours */
		double f = temp_nll(logits, samples, n, k, labels, exp(lo + i * step));
		if (f < best) {
			best = f;
			ibest = i;
		}
	}
	a = lo + (ibest > 0 ? ibest - 1 : 0) * step;
	b = lo + (ibest < TEMP_GRID - 1 ? ibest + 1 : TEMP_GRID - 1) * step;
	c = b - g * (b - a);
	d = a + g * (b - a);
	fc = temp_nll(logits, samples, n, k, labels, exp(c));
	fd = temp_nll(logits, samples, n, k, labels, exp(d));
	while (b - a > TEMP_TOL) {
		if (fc <= fd) { /* the minimum is in [a, d] */
			b = d;
			d = c;
			fd = fc;
			c = b - g * (b - a);
			fc = temp_nll(logits, samples, n, k, labels, exp(c));
		} else { /* in [c, b] */
			a = c;
			c = d;
			fc = fd;
			d = a + g * (b - a);
			fd = temp_nll(logits, samples, n, k, labels, exp(d));
		}
	}
	*t = exp(fc <= fd ? c : d);
	return BNN_OK;
}
