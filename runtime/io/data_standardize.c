/*
 * data_standardize.c: per-feature standardisation x <- (x - mean) / std.
 *
 * bnn_standardizer_fit() computes the mean and the population standard
 * deviation sqrt(sum (x - mean)^2 / n) of every feature in two passes over
 * the rows (first the means, then the squared deviations from them, which
 * is accurate even when the mean is large compared with the spread), with
 * double accumulators, and stores them as floats.  A feature that takes a
 * single value (its minimum equals its maximum), or whose deviation is too
 * small to be a normal float, gets std 1, so that applying the statistics
 * only centres it instead of dividing by zero.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"

int bnn_standardizer_fit(const bnn_dataset *ds, bnn_standardizer *out, bnn_err *err)
{
	double *sum = NULL, *sq = NULL;
	float *lo = NULL, *hi = NULL;
	long i, j, f;
	int rc = BNN_OK;

	if (!out)
		return bnn_fail(err, BNN_EINVAL, "bnn_standardizer_fit: out is NULL");
	memset(out, 0, sizeof *out);
	if (!ds || ds->features < 1 || !ds->x)
		return bnn_fail(err, BNN_EINVAL,
		                "cannot standardise: "
		                "the data set has no features");
	if (ds->n < 1)
		return bnn_fail(err, BNN_EINVAL,
		                "cannot standardise: "
		                "the data set has no examples");
	f = ds->features;
	sum = calloc((size_t)f, sizeof *sum);
	sq = calloc((size_t)f, sizeof *sq);
	lo = malloc((size_t)f * sizeof *lo);
	hi = malloc((size_t)f * sizeof *hi);
	out->mean = malloc((size_t)f * sizeof *out->mean);
	out->std = malloc((size_t)f * sizeof *out->std);
	if (!sum || !sq || !lo || !hi || !out->mean || !out->std) {
		rc = bnn_fail(err, BNN_ENOMEM,
		              "out of memory for the "
		              "statistics of %ld features",
		              f);
		bnn_standardizer_free(out);
		goto out;
	}
	out->features = f;

	memcpy(lo, ds->x, (size_t)f * sizeof *lo);
	memcpy(hi, ds->x, (size_t)f * sizeof *hi);
	for (i = 0; i < ds->n; i++) {
		const float *x = ds->x + i * f;

		for (j = 0; j < f; j++) {
			sum[j] += x[j];
			if (x[j] < lo[j])
				lo[j] = x[j];
			if (x[j] > hi[j])
				hi[j] = x[j];
		}
	}
	for (j = 0; j < f; j++)
		sum[j] /= (double)ds->n; /* now the mean */
	for (i = 0; i < ds->n; i++) {
		const float *x = ds->x + i * f;

		for (j = 0; j < f; j++) {
			double d = x[j] - sum[j];

			sq[j] += d * d;
		}
	}
	for (j = 0; j < f; j++) {
		double sd = sqrt(sq[j] / (double)ds->n);

		out->mean[j] = (float)sum[j];
		if (lo[j] == hi[j])
			out->mean[j] = lo[j]; /* exact, whatever the rounding */
		out->std[j] = (lo[j] == hi[j] || sd < FLT_MIN) ? 1.0f : (float)sd;
	}
out:
	free(sum);
	free(sq);
	free(lo);
	free(hi);
	return rc;
}

int bnn_standardizer_apply(const bnn_standardizer *s, bnn_dataset *ds, bnn_err *err)
{
	long i, j, f;

	if (!s || !ds)
		return bnn_fail(err, BNN_EINVAL, "bnn_standardizer_apply: %s is NULL",
		                s ? "the data set" : "the standardizer");
	if (s->features != ds->features)
		return bnn_fail(err, BNN_EMISMATCH,
		                "the standardizer has %ld features but the "
		                "data set has %ld",
		                s->features, ds->features);
	f = s->features;
	for (i = 0; i < ds->n; i++) {
		float *x = ds->x + i * f;

		for (j = 0; j < f; j++) {
			double z = ((double)x[j] - s->mean[j]) / s->std[j];

			/* Only a value far outside the fitted data can leave
			 * a float's range; converting it would be undefined. */
			if (z > FLT_MAX)
				z = FLT_MAX;
			else if (z < -FLT_MAX)
				z = -FLT_MAX;
			x[j] = (float)z;
		}
	}
	return BNN_OK;
}

void bnn_standardizer_free(bnn_standardizer *s)
{
	if (!s)
		return;
	free(s->mean);
	free(s->std);
	memset(s, 0, sizeof *s);
}

int bnn_standardizer_copy(const bnn_standardizer *s, bnn_standardizer *out, bnn_err *err)
{
	size_t bytes = s->features > 0 ? (size_t)s->features * sizeof(float) : 0;

	memset(out, 0, sizeof *out);
	if (bytes == 0)
		return BNN_OK;
	out->mean = malloc(bytes);
	out->std = malloc(bytes);
	if (!out->mean || !out->std) {
		bnn_standardizer_free(out);
		return bnn_fail(err, BNN_ENOMEM, "out of memory for %ld standardisation statistics",
		                s->features);
	}
	out->features = s->features;
	memcpy(out->mean, s->mean, bytes);
	memcpy(out->std, s->std, bytes);
	return BNN_OK;
}
