/*
 * conformal.c: split conformal prediction (Vovk et al. 2005; Angelopoulos
 * and Bates 2021, "A gentle introduction to conformal prediction").  A
 * score s(x, y) says how badly the label y fits the model's prediction for
 * x; on n calibration examples the conformal quantile q is the
 * ⌈(n + 1)·level⌉-th smallest score, and the prediction set of a new x is
 * every y with s(x, y) ≤ q.  When calibration and test examples are
 * exchangeable, P(y ∈ set) ≥ level (the finite-sample correction is the
 * n + 1), and < level + 1/(n + 1) when the scores have no ties.
 *
 * Scores (docs/conformal.md):
 *   LAC   1 − p_y (Sadinle et al. 2019): the smallest sets on average
 *   APS   Σ of the probabilities ranked above y, + u·p_y (Romano et al.
 *         2020, eq. 5 randomised by u ~ U[0, 1)): sets adapt to difficulty
 *   RAPS  APS + λ·max(0, o(y) − k_reg), o(y) the 1-based rank of y
 *         (Angelopoulos et al. 2021, "Uncertainty sets for image
 *         classifiers using conformal prediction", Alg. 1/2)
 *   regression, over the d outputs of an example (one joint interval
 *   box): max_j |y_j − μ_j| (residual) or max_j |y_j − μ_j|/σ_j
 *   (normalized by the predictive standard deviation); the interval of
 *   output j is μ_j ± q (residual) or μ_j ± q·σ_j.
 * The classes are ranked by decreasing probability, ties by increasing
 * index.  The same function scores every class of an example for both
 * calibration (the true class's score) and prediction (the set), with the
 * same u for every class of an example, so the APS set is a prefix of the
 * ranking and its guarantee is exact.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"

static const char *const conformal_names[BNN_CONFORMAL_COUNT] = {
	[BNN_CONFORMAL_APS] = "aps",
	[BNN_CONFORMAL_RAPS] = "raps",
	[BNN_CONFORMAL_LAC] = "lac",
	[BNN_CONFORMAL_RESIDUAL] = "residual",
	[BNN_CONFORMAL_NORMALIZED] = "normalized",
};

const char *bnn_conformal_method_name(int method)
{
	return method >= 0 && method < BNN_CONFORMAL_COUNT ? conformal_names[method] : "?";
}

int bnn_conformal_method_from_name(const char *name)
{
	int i;

	for (i = 0; name && i < BNN_CONFORMAL_COUNT; i++)
		if (strcmp(name, conformal_names[i]) == 0)
			return i;
	return -1;
}

int bnn_conformal_is_regression(int method)
{
	return method == BNN_CONFORMAL_RESIDUAL || method == BNN_CONFORMAL_NORMALIZED;
}

/* ⌈(n + 1)·level⌉, with a relative slack of 1e-12 so that a level written
 * in decimal (0.9, not exactly representable) means its decimal value:
 * (9 + 1)·0.9 is 9, not 10. */
static long conformal_rank(long n, double level)
{
	return (long)ceil((double)(n + 1) * level * (1 - 1e-12));
}

static int conformal_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int bnn_conformal_quantile(const double *scores, long n, double level, double *q, bnn_err *err)
{
	double *sorted;
	long r, need;

	if (!(level > 0 && level < 1))
		return bnn_fail(err, BNN_EINVAL, "the coverage level %g is not in (0, 1)", level);
	if (n < 1 || !scores)
		return bnn_fail(err, BNN_EINVAL, "the calibration set is empty");
	r = conformal_rank(n, level);
	if (r > n) {
		for (need = n + 1; conformal_rank(need, level) > need; need++)
			;
		return bnn_fail(err, BNN_EINVAL,
		                "%ld calibration examples are too few for level %g: the "
		                "quantile's rank ceil((n + 1) * level) = %ld exceeds n (at least "
		                "%ld examples are needed)",
		                n, level, r, need);
	}
	if (!(sorted = malloc((size_t)n * sizeof *sorted)))
		return bnn_fail(err, BNN_ENOMEM, "out of memory for %ld scores", n);
	memcpy(sorted, scores, (size_t)n * sizeof *sorted);
	qsort(sorted, (size_t)n, sizeof *sorted, conformal_cmp);
	*q = sorted[r - 1];
	free(sorted);
	return BNN_OK;
}

/* A class and its probability, for ranking one example's classes. */
struct conformal_rank_entry {
	double p;
	int j;
};

/* Decreasing probability, ties by increasing class. */
static int conformal_rank_cmp(const void *a, const void *b)
{
	const struct conformal_rank_entry *x = a, *y = b;

	if (x->p != y->p)
		return x->p > y->p ? -1 : 1;
	return (x->j > y->j) - (x->j < y->j);
}

int bnn_conformal_class_scores(const float *probs, long n, int k, const double *u,
                               const bnn_conformal_options *o, double *scores, bnn_err *err)
{
	struct conformal_rank_entry *order;
	long i;
	int r;

	if (!probs || !scores || !o || k < 1)
		return bnn_fail(err, BNN_EINVAL, "conformal scores: no %s given",
		                !probs ? "probabilities" : "arrays");
	if (o->method != BNN_CONFORMAL_APS && o->method != BNN_CONFORMAL_RAPS &&
	    o->method != BNN_CONFORMAL_LAC)
		return bnn_fail(err, BNN_EINVAL,
		                "conformal scores: method '%s' is not one for classes (aps, raps, "
		                "lac)",
		                bnn_conformal_method_name(o->method));
	if (o->method == BNN_CONFORMAL_LAC) {
		for (i = 0; i < n * k; i++)
			scores[i] = 1 - (double)probs[i];
		return BNN_OK;
	}
	if (!(order = malloc((size_t)k * sizeof *order)))
		return bnn_fail(err, BNN_ENOMEM, "out of memory for %d classes", k);
	for (i = 0; i < n; i++) {
		double above = 0, ui = u ? u[i] : 1; /* u = 1: the non-randomised APS */
		for (r = 0; r < k; r++) {
			order[r].p = probs[i * k + r];
			order[r].j = r;
		}
		qsort(order, (size_t)k, sizeof *order, conformal_rank_cmp);
		for (r = 0; r < k; r++) {
			double s = above + ui * order[r].p;
			if (o->method == BNN_CONFORMAL_RAPS && r + 1 > o->kreg)
				s += o->lambda * (double)(r + 1 - o->kreg);
			scores[i * k + order[r].j] = s;
			above += order[r].p;
		}
	}
	free(order);
	return BNN_OK;
}

int bnn_conformal_regression_scores(const float *mean, const float *var, const float *y, long n,
                                    long d, int method, double *scores, bnn_err *err)
{
	long i, j;

	if (!mean || !y || !scores || (method == BNN_CONFORMAL_NORMALIZED && !var))
		return bnn_fail(err, BNN_EINVAL, "conformal scores: no %s given",
		                !var ? "variances" : "arrays");
	if (!bnn_conformal_is_regression(method))
		return bnn_fail(err, BNN_EINVAL,
		                "conformal scores: method '%s' is not one for regression "
		                "(residual, normalized)",
		                bnn_conformal_method_name(method));
	for (i = 0; i < n; i++) {
		double s = 0;
		for (j = 0; j < d; j++) {
			double e = fabs((double)y[i * d + j] - (double)mean[i * d + j]);
			if (method == BNN_CONFORMAL_NORMALIZED)
				e /= sqrt((double)var[i * d + j]);
			s = e > s ? e : s;
		}
		scores[i] = s;
	}
	return BNN_OK;
}

void bnn_conformal_sets(const double *scores, const int *labels, long n, int k, double q,
                        double *coverage, double *mean_size)
{
	long i, covered = 0, size = 0;
	int j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < k; j++)
			size += scores[i * k + j] <= q;
		if (labels)
			covered += scores[i * k + labels[i]] <= q;
	}
	*coverage = (double)covered / (double)n;
	*mean_size = (double)size / (double)n;
}

double bnn_conformal_half_width(int method, double q, double var)
{
	return method == BNN_CONFORMAL_NORMALIZED ? q * sqrt(var) : q;
}

void bnn_conformal_intervals(const float *var, const double *scores, long n, long d, int method,
                             double q, double *coverage, double *mean_width)
{
	double width = 0;
	long i, j, covered = 0;

	for (i = 0; i < n; i++) {
		covered += scores[i] <= q;
		for (j = 0; j < d; j++)
			width += 2 * bnn_conformal_half_width(method, q, var ? var[i * d + j] : 1);
	}
	*coverage = (double)covered / (double)n;
	*mean_width = width / (double)(n * d);
}
