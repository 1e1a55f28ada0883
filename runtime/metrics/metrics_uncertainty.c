/*
 * metrics_uncertainty.c: per-example uncertainty scores of predictive
 * class probabilities: bnn_entropy(), the predictive entropy
 * H_i = −Σ_j p_ij log p_ij (VOGN, appendix I: "Predictive entropy is given
 * by Σ_k −p̂_ik log p̂_ik"), and bnn_confidence_score(), 1 − max_j p_ij.
 * Both are the "higher means more likely out-of-distribution" scores that
 * bnn_metrics_ood() (metrics_ood.c) and the entropy histograms take.  The
 * arguments are checked in full before anything is written, so the output
 * is untouched on failure; definitions in bnn_metrics.h and docs/metrics.md.
 */
#include <limits.h>
#include <math.h>

#include "bnn.h"

/*
 * Check the arguments shared by both entry points; `who` names the caller
 * in messages.  Every probability must be finite and >= 0 (a negative one
 * would make p log p NaN).  Examples and classes are numbered from 0.
 */
static int uncertainty_check(const char *who, const float *probs, long n, int k, const double *out,
                             bnn_err *err)
{
	long i;
	int j;

	if (probs == NULL || out == NULL)
		return bnn_fail(err, BNN_EINVAL, "%s: %s is NULL", who,
		                probs == NULL ? "probs" : "out");
	if (n < 1)
		return bnn_fail(err, BNN_EINVAL, "%s: n is %ld, need at least 1 example", who, n);
	if (k < 2)
		return bnn_fail(err, BNN_EINVAL, "%s: k is %d, need at least 2 classes", who, k);
	if (n > LONG_MAX / k)
		return bnn_fail(err, BNN_EINVAL, "%s: n x k = %ld x %d overflows", who, n, k);
	for (i = 0; i < n; i++) {
		const float *row = probs + i * k;

		for (j = 0; j < k; j++) {
			if (!isfinite(row[j]))
				return bnn_fail(err, BNN_EINVAL,
				                "%s: example %ld (0-based), class %d: "
				                "probability %g is not finite",
				                who, i, j, (double)row[j]);
			if (row[j] < 0.0f)
				return bnn_fail(err, BNN_EINVAL,
				                "%s: example %ld (0-based), class %d: "
				                "probability %g is negative",
				                who, i, j, (double)row[j]);
		}
	}
	return BNN_OK;
}

/* H = −Σ_j p_j log p_j of one row of k probabilities. */
static double uncertainty_entropy_of(const float *row, int k)
{
	double h = 0.0;
	int j;

	for (j = 0; j < k; j++) {
		double p = row[j];

		if (p > 0.0) /* 0 log 0 = 0, its limit */
			h -= p * log(p);
	}
	return h;
}

/* 1 − max_j p_j of one row of k probabilities. */
static double uncertainty_confidence_of(const float *row, int k)
{
	float c = row[0];
	int j;

	for (j = 1; j < k; j++)
		if (row[j] > c)
			c = row[j];
	return 1.0 - (double)c;
}

/*
 * The walk both entry points share: check the arguments, then give each of
 * the n rows of k probabilities its score.
 */
static int uncertainty_score_rows(const char *who, double (*score)(const float *row, int k),
                                  const float *probs, long n, int k, double *out, bnn_err *err)
{
	long i;
	int rc;

	rc = uncertainty_check(who, probs, n, k, out, err);
	if (rc != BNN_OK)
		return rc;
	for (i = 0; i < n; i++)
		out[i] = score(probs + i * k, k);
	return BNN_OK;
}

int bnn_entropy(const float *probs, long n, int k, double *out, bnn_err *err)
{
	return uncertainty_score_rows("bnn_entropy", uncertainty_entropy_of, probs, n, k, out, err);
}

int bnn_confidence_score(const float *probs, long n, int k, double *out, bnn_err *err)
{
	return uncertainty_score_rows("bnn_confidence_score", uncertainty_confidence_of, probs, n,
	                              k, out, err);
}
