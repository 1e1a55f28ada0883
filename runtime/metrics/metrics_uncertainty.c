/*
 * metrics_uncertainty.c: per-example uncertainty scores of predictive
 * class probabilities: bnn_entropy(), the predictive entropy
 * H_i = −Σ_j p_ij log p_ij (VOGN, appendix I: "Predictive entropy is given
 * by Σ_k −p̂_ik log p̂_ik"), bnn_confidence_score(), 1 − max_j p_ij, the
 * split of the entropy of a Monte-Carlo predictive into its expected
 * entropy (aleatoric) and the mutual information between the prediction
 * and the weights (epistemic): bnn_entropy_split() from the samples'
 * probabilities, bnn_mutual_information() from the two entropies (as
 * bnn_predict() gives the expected one), and bnn_energy(), the energy
 * score of logits (Liu et al. 2020).  All are "higher means more likely
 * out-of-distribution" scores that bnn_metrics_ood() (metrics_ood.c) and
 * the entropy histograms take.  The arguments are checked in full before
 * anything is written, so the output is untouched on failure; definitions
 * in bnn_metrics.h and docs/metrics.md.
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

/*
 * The split of H[E_θ p] (Depeweg et al. 2018; Smith & Gal 2018): the
 * entropy of the mean of the S sample rows, the mean of their entropies,
 * and their difference, the mutual information, which Jensen's inequality
 * makes >= 0 (a negative rounding residue is reported as 0).
 */
int bnn_entropy_split(const float *probs, long samples, long n, int k, double *entropy,
                      double *expected_entropy, double *mutual_information, bnn_err *err)
{
	long i, s;
	int j, rc;

	if (samples < 1)
		return bnn_fail(err, BNN_EINVAL,
		                "bnn_entropy_split: samples is %ld, need at least 1", samples);
	if (!entropy || !expected_entropy || !mutual_information)
		return bnn_fail(err, BNN_EINVAL, "bnn_entropy_split: an output array is NULL");
	if (n > 0 && samples > LONG_MAX / n)
		return bnn_fail(err, BNN_EINVAL,
		                "bnn_entropy_split: samples x n = %ld x %ld overflows", samples, n);
	rc = uncertainty_check("bnn_entropy_split", probs, samples * n, k, entropy, err);
	if (rc != BNN_OK)
		return rc;
	for (i = 0; i < n; i++) {
		double h = 0.0, eh = 0.0;

		for (j = 0; j < k; j++) {
			double p = 0.0;

			for (s = 0; s < samples; s++)
				p += probs[(s * n + i) * k + j];
			p /= (double)samples;
			if (p > 0.0)
				h -= p * log(p);
		}
		for (s = 0; s < samples; s++)
			eh += uncertainty_entropy_of(probs + (s * n + i) * k, k);
		eh /= (double)samples;
		entropy[i] = h;
		expected_entropy[i] = eh;
		mutual_information[i] = h > eh ? h - eh : 0.0;
	}
	return BNN_OK;
}

int bnn_mutual_information(const double *entropy, const double *expected_entropy, long n,
                           double *out, bnn_err *err)
{
	long i;

	if (!entropy || !expected_entropy || !out)
		return bnn_fail(err, BNN_EINVAL, "bnn_mutual_information: %s is NULL",
		                !entropy            ? "entropy"
		                : !expected_entropy ? "expected_entropy"
		                                    : "out");
	if (n < 1)
		return bnn_fail(err, BNN_EINVAL,
		                "bnn_mutual_information: n is %ld, need at least 1 example", n);
	for (i = 0; i < n; i++)
		if (!isfinite(entropy[i]) || !isfinite(expected_entropy[i]))
			return bnn_fail(err, BNN_EINVAL,
			                "bnn_mutual_information: example %ld (0-based): the %s %g "
			                "is not finite",
			                i, isfinite(entropy[i]) ? "expected entropy" : "entropy",
			                isfinite(entropy[i]) ? expected_entropy[i] : entropy[i]);
	for (i = 0; i < n; i++) /* ≥ 0 by Jensen: a negative difference is rounding */
		out[i] = entropy[i] > expected_entropy[i] ? entropy[i] - expected_entropy[i] : 0.0;
	return BNN_OK;
}

int bnn_energy(const float *logits, long n, int k, double *out, bnn_err *err)
{
	long i;
	int j;

	if (logits == NULL || out == NULL)
		return bnn_fail(err, BNN_EINVAL, "bnn_energy: %s is NULL",
		                logits == NULL ? "logits" : "out");
	if (n < 1 || k < 1)
		return bnn_fail(err, BNN_EINVAL,
		                "bnn_energy: n x k is %ld x %d, need at least 1 x 1", n, k);
	if (n > LONG_MAX / k)
		return bnn_fail(err, BNN_EINVAL, "bnn_energy: n x k = %ld x %d overflows", n, k);
	for (i = 0; i < n * k; i++)
		if (!isfinite(logits[i]))
			return bnn_fail(
			        err, BNN_EINVAL,
			        "bnn_energy: example %ld (0-based), logit %d: %g is not finite",
			        i / k, (int)(i % k), (double)logits[i]);
	for (i = 0; i < n; i++) {
		const float *z = logits + i * k;
		double zmax = z[0], sum = 0.0;

		for (j = 1; j < k; j++)
			zmax = z[j] > zmax ? z[j] : zmax;
		for (j = 0; j < k; j++)
			sum += exp((double)z[j] - zmax);
		out[i] = -(zmax + log(sum)); /* Liu et al. 2020, eq. 5, T = 1 */
	}
	return BNN_OK;
}
