/*
 * metrics_classification.c: bnn_metrics_classification() and
 * bnn_metrics_reliability(), the metrics of predictive class probabilities
 * against integer labels: accuracy, NLL, Brier score, expected and maximum
 * calibration error over equal-width confidence bins, and the AUROC of
 * detecting misclassified examples by their confidence, and the ECE's
 * floor: the ECE a perfectly calibrated predictor with the same
 * confidences would show on these examples on average, from the
 * sampling of their labels alone.  The definitions are in bnn_metrics.h
 * and, for users, docs/metrics.md; this file follows them term by term,
 * accumulating in double.
 *
 * Binning.  Bin b of B holds the confidences c with b/B < c <= (b+1)/B.
 * The confidence is the float the caller gave, converted to double
 * exactly, and the bin is decided by exact comparisons (metrics_bin()), so
 * a float that is a hair above an edge (0.05f is 0.0500000007...) goes in
 * the bin above the edge, and one exactly on it (0.25f, 0.5f) in the bin
 * below, whatever B is.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "bnn.h"

/* The floor of p_{i,y_i} in the NLL: a zero probability costs
 * -log(1e-12) = 27.63... instead of infinity. */
#define METRICS_NLL_FLOOR 1e-12

/*
 * Check the arguments shared by both entry points; `who` names the caller
 * in messages.  Examples are numbered from 0 in messages, and say so.
 */
static int metrics_check(const char *who, const float *probs, const int *labels, long n, int k,
                         int bins, const void *out, bnn_err *err)
{
	long i;
	int j;

	if (probs == NULL || labels == NULL || out == NULL)
		return bnn_fail(err, BNN_EINVAL, "%s: %s is NULL", who,
		                probs == NULL    ? "probs"
		                : labels == NULL ? "labels"
		                                 : "the output");
	if (n < 1)
		return bnn_fail(err, BNN_EINVAL, "%s: n is %ld, need at least 1 example", who, n);
	if (k < 2)
		return bnn_fail(err, BNN_EINVAL, "%s: k is %d, need at least 2 classes", who, k);
	if (bins < 1)
		return bnn_fail(err, BNN_EINVAL, "%s: bins is %d, need at least 1 bin", who, bins);
	if (n > LONG_MAX / k)
		return bnn_fail(err, BNN_EINVAL, "%s: n x k = %ld x %d overflows", who, n, k);
	for (i = 0; i < n; i++) {
		const float *row = probs + i * k;

		if (labels[i] < 0 || labels[i] >= k)
			return bnn_fail(err, BNN_EINVAL,
			                "%s: example %ld (0-based): label %d is "
			                "outside [0, %d)",
			                who, i, labels[i], k);
		for (j = 0; j < k; j++)
			if (!isfinite(row[j]))
				return bnn_fail(err, BNN_EINVAL,
				                "%s: example %ld (0-based), class %d: "
				                "probability %g is not finite",
				                who, i, j, (double)row[j]);
	}
	return BNN_OK;
}

/* The predicted class of one row: the largest entry, the lowest index
 * among equal ones (a later entry must be strictly larger to win). */
static int metrics_argmax(const float *row, int k)
{
	int j, best = 0;

	for (j = 1; j < k; j++)
		if (row[j] > row[best])
			best = j;
	return best;
}

/*
 * The bin of confidence c among `bins`: the b with b/bins < c <= (b+1)/bins,
 * c <= 0 in bin 0, c >= 1 in the last bin.  The candidate from ceil(c*bins)
 * is exact when c is a float and bins <= 2^29 (24 + 29 bits fit a double);
 * beyond that c*bins may be rounded, and the loops settle the bin with
 * fma(), whose sign is that of the exact c*bins - edge.  They move at most
 * one step, and never for a float c with bins <= 2^29.
 */
static int metrics_bin(double c, int bins)
{
	int b;

	if (!(c > 0.0))
		return 0;
	if (c >= 1.0)
		return bins - 1;
	b = (int)ceil(c * bins) - 1; /* in [0, bins-1] since 0 < c*bins <= bins */
	while (b > 0 && fma(c, bins, -(double)b) <= 0.0)
		b--;
	while (b < bins - 1 && fma(c, bins, -(double)(b + 1)) > 0.0)
		b++;
	return b;
}

/* Fill bin[0..bins) from checked arguments: count, mean confidence and
 * accuracy per bin, 0 for an empty bin. */
static void metrics_fill_bins(const float *probs, const int *labels, long n, int k, int bins,
                              bnn_bin *bin)
{
	long i;
	int b;

	for (b = 0; b < bins; b++) {
		bin[b].count = 0;
		bin[b].conf = 0.0; /* a sum until the last loop */
		bin[b].acc = 0.0;  /* a count of the correct until then */
	}
	for (i = 0; i < n; i++) {
		const float *row = probs + i * k;
		int yhat = metrics_argmax(row, k);
		double c = row[yhat];

		b = metrics_bin(c, bins);
		bin[b].count++;
		bin[b].conf += c;
		if (yhat == labels[i])
			bin[b].acc += 1.0;
	}
	for (b = 0; b < bins; b++) {
		if (bin[b].count == 0)
			continue;
		bin[b].conf /= (double)bin[b].count;
		bin[b].acc /= (double)bin[b].count;
	}
}

/*
 * E|S − μ| for S = Σ_j X_j, X_j independent Bernoulli(c[j]), μ = Σ_j c[j]:
 * the distribution of S by the usual recurrence over j (adding X_j moves
 * the mass at s to s + 1 with probability c[j]), kept on the window of
 * half-width W = 12σ + 40 around the partial sum's mean, σ² = Σ_j c(1 − c)
 * the final variance.  By Bernstein's inequality the mass a partial sum
 * has outside its window is below 2·exp(−t²/(2σ² + 2t/3)) at t = W, under
 * 1e-25, so the window changes nothing a double can show; it makes the
 * cost m·(2W + 1) instead of m²/2.  pmf has room for m + 1 doubles.
 */
static double metrics_abs_dev(const double *c, long m, double *pmf)
{
	double mu = 0.0, var = 0.0, part = 0.0, dev = 0.0;
	long j, s, lo = 0, hi = 0, w;

	for (j = 0; j < m; j++) {
		mu += c[j];
		var += c[j] * (1.0 - c[j]);
	}
	w = (long)ceil(12.0 * sqrt(var) + 40.0);
	pmf[0] = 1.0;
	for (j = 0; j < m; j++) {
		const long nlo = (long)fmax(0.0, floor(part + c[j] - (double)w));
		const long nhi = (long)fmin((double)(j + 1), ceil(part + c[j] + (double)w));

		/* hi + 1 enters the window; from the top down, so pmf[s - 1] is
		 * still the old value */
		if (nhi > hi)
			pmf[nhi] = 0.0;
		for (s = nhi; s > lo; s--)
			pmf[s] = pmf[s] * (1.0 - c[j]) + pmf[s - 1] * c[j];
		pmf[lo] *= 1.0 - c[j];
		lo = nlo > lo ? nlo : lo; /* the mass below it is under 1e-25 */
		hi = nhi;
		part += c[j];
	}
	for (s = lo; s <= hi; s++)
		dev += fabs((double)s - mu) * pmf[s];
	return dev;
}

/*
 * The ECE's floor from checked arguments: Σ_b E|S_b − Σ_{i∈b} c_i| / n,
 * S_b the number of correct predictions in bin b when each prediction is
 * right with probability its confidence (the bins depend on the
 * confidences alone, so this is the expectation of the ECE itself).
 */
static int metrics_ece_floor(const float *probs, long n, int k, int bins, double *floor_out)
{
	long *start = calloc((size_t)bins + 1, sizeof *start);
	double *c = malloc((size_t)n * sizeof *c);
	double *pmf = malloc(((size_t)n + 1) * sizeof *pmf);
	double sum = 0.0;
	long i;
	int b;

	if (!start || !c || !pmf) {
		free(start);
		free(c);
		free(pmf);
		return BNN_ENOMEM;
	}
	for (i = 0; i < n; i++) /* the examples grouped by bin, in order */
		start[metrics_bin(probs[i * k + metrics_argmax(probs + i * k, k)], bins) + 1]++;
	for (b = 0; b < bins; b++)
		start[b + 1] += start[b];
	for (i = 0; i < n; i++) {
		const double ci = probs[i * k + metrics_argmax(probs + i * k, k)];
		c[start[metrics_bin(ci, bins)]++] = ci;
	}
	for (b = 0; b < bins; b++) { /* start[b] is now the end of bin b */
		const long first = b ? start[b - 1] : 0;
		sum += metrics_abs_dev(c + first, start[b] - first, pmf);
	}
	*floor_out = sum / (double)n;
	free(start);
	free(c);
	free(pmf);
	return BNN_OK;
}

int bnn_metrics_reliability(const float *probs, const int *labels, long n, int k, int bins,
                            bnn_bin *bin, bnn_err *err)
{
	int rc = metrics_check("bnn_metrics_reliability", probs, labels, n, k, bins, bin, err);

	if (rc != BNN_OK)
		return rc;
	metrics_fill_bins(probs, labels, n, k, bins, bin);
	return BNN_OK;
}

int bnn_metrics_classification(const float *probs, const int *labels, long n, int k, int bins,
                               bnn_class_metrics *out, bnn_err *err)
{
	static const char who[] = "bnn_metrics_classification";
	bnn_bin *bin = NULL;
	double *score = NULL; /* -c_i: ranks like 1 - c_i, without rounding */
	int *wrong = NULL;    /* [yhat_i != y_i], the AUROC's positives */
	double nll = 0.0, brier = 0.0, ece = 0.0, mce = 0.0, auc;
	long i, correct = 0;
	int b, j, defined, rc;

	rc = metrics_check(who, probs, labels, n, k, bins, out, err);
	if (rc != BNN_OK)
		return rc;
	if ((unsigned long)n > SIZE_MAX / sizeof *score)
		return bnn_fail(err, BNN_ENOMEM, "%s: %ld examples are too many", who, n);
	bin = malloc((size_t)bins * sizeof *bin);
	score = malloc((size_t)n * sizeof *score);
	wrong = malloc((size_t)n * sizeof *wrong);
	if (bin == NULL || score == NULL || wrong == NULL) {
		rc = bnn_fail(err, BNN_ENOMEM, "%s: out of memory for %ld examples and %d bins",
		              who, n, bins);
		goto done;
	}

	for (i = 0; i < n; i++) {
		const float *row = probs + i * k;
		int y = labels[i];
		int yhat = metrics_argmax(row, k);

		if (yhat == y)
			correct++;
		nll -= log(fmax((double)row[y], METRICS_NLL_FLOOR));
		for (j = 0; j < k; j++) {
			double d = (double)row[j] - (j == y ? 1.0 : 0.0);

			brier += d * d;
		}
		score[i] = -(double)row[yhat];
		wrong[i] = yhat != y;
	}

	metrics_fill_bins(probs, labels, n, k, bins, bin);
	for (b = 0; b < bins; b++) {
		double gap;

		if (bin[b].count == 0)
			continue; /* an empty bin contributes nothing */
		gap = fabs(bin[b].acc - bin[b].conf);
		ece += ((double)bin[b].count / (double)n) * gap;
		if (gap > mce)
			mce = gap;
	}

	rc = bnn_auroc(score, wrong, n, &auc, &defined, err);
	if (rc != BNN_OK)
		goto done;
	if (metrics_ece_floor(probs, n, k, bins, &out->ece_floor) != BNN_OK) {
		rc = bnn_fail(err, BNN_ENOMEM, "%s: out of memory for %ld examples and %d bins",
		              who, n, bins);
		goto done;
	}

	out->n = n;
	out->accuracy = (double)correct / (double)n;
	out->nll = nll / (double)n;
	out->brier = brier / (double)n;
	out->ece = ece;
	out->mce = mce;
	out->auroc = auc;
	out->auroc_defined = defined;
done:
	free(bin);
	free(score);
	free(wrong);
	return rc;
}
