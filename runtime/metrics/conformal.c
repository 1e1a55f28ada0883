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
 *   (normalized by the predictive standard deviation, which must be
 *   finite: an infinite variance, studentt's with ν ≤ 2, would make every
 *   score 0, so it is refused); the interval of output j is μ_j ± q
 *   (residual) or μ_j ± q·σ_j.
 * The classes are ranked by decreasing probability, ties by increasing
 * index.  The same function scores every class of an example for both
 * calibration (the true class's score) and prediction (the set), with the
 * same u for every class of an example, so the APS set is a prefix of the
 * ranking and its guarantee is exact.
 *
 * Adaptive conformal inference (Gibbs and Candès 2021, "Adaptive conformal
 * inference under distribution shift", NeurIPS) replaces the fixed level
 * by α_t, updated after each example's label is seen, in file order (eq. 2):
 * α_{t+1} = α_t + γ·(α − err_t), α_1 = α = 1 − level, err_t = 1 when the
 * label is outside the set or interval of step t.  Step t uses the
 * conformal quantile above at level 1 − α_t of the same, fixed calibration
 * scores (rank ⌈(n + 1)·(1 − α_t)⌉): a rank above n is an infinite
 * quantile (the whole line, every class), a rank below 1 (α_t ≥ 1) the
 * empty set.  Whatever the data, |mean err_t − α| ≤ (max(α, 1 − α) + γ)/
 * (γ·T) over T steps (their Proposition 4.1).  Online (the run's online
 * flag), each example's calibration score (the true class's, or the
 * interval box's) joins the sorted scores once its label is seen, by
 * insertion: step t then ranks n + t − 1 scores, O(n + t) a step.  The
 * bound still holds: its proof uses only that a quantile at α_t ≤ 0 covers
 * and one at α_t ≥ 1 misses, whatever scores it is taken from.
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

/* 0, or BNN_EINVAL for a level outside (0, 1) or no calibration scores. */
static int conformal_check(const double *scores, long n, double level, bnn_err *err)
{
	if (!(level > 0 && level < 1))
		return bnn_fail(err, BNN_EINVAL, "the coverage level %g is not in (0, 1)", level);
	if (n < 1 || !scores)
		return bnn_fail(err, BNN_EINVAL, "the calibration set is empty");
	return BNN_OK;
}

/* The n calibration scores sorted into a new array *sorted of room for
 * cap ≥ n scores (the caller frees it). */
static int conformal_sorted(const double *scores, long n, long cap, double **sorted, bnn_err *err)
{
	if (!(*sorted = malloc((size_t)cap * sizeof **sorted)))
		return bnn_fail(err, BNN_ENOMEM, "out of memory for %ld scores", cap);
	memcpy(*sorted, scores, (size_t)n * sizeof **sorted);
	qsort(*sorted, (size_t)n, sizeof **sorted, conformal_cmp);
	return BNN_OK;
}

/* The conformal quantile of the n sorted scores at level: the rank
 * ⌈(n + 1)·level⌉-th smallest; +∞ when that rank exceeds n, −∞ (nothing
 * is covered) when it is below 1, as it is for a level ≤ 0. */
static double conformal_quantile_sorted(const double *sorted, long n, double level)
{
	long r = conformal_rank(n, level);

	return r > n ? INFINITY : r < 1 ? -INFINITY : sorted[r - 1];
}

int bnn_conformal_quantile(const double *scores, long n, double level, double *q, bnn_err *err)
{
	double *sorted;
	long r, need;
	int rc;

	if ((rc = conformal_check(scores, n, level, err)))
		return rc;
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
	if ((rc = conformal_sorted(scores, n, n, &sorted, err)))
		return rc;
	*q = conformal_quantile_sorted(sorted, n, level);
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
	for (i = 0; method == BNN_CONFORMAL_NORMALIZED && i < n * d; i++)
		if (!(var[i] > 0 && var[i] < INFINITY))
			return bnn_fail(
			        err, BNN_EINVAL,
			        "conformal scores: example %ld (0-based), output %ld has "
			        "predictive variance %g: the normalized score |y - mu|/sigma "
			        "needs a finite positive variance (use residual)",
			        i / d, i % d, (double)var[i]);
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
	if (q <= 0) /* −∞: adaptive conformal's empty interval (α_t ≥ 1); 0: a
	               point, whatever the variance (no 0·∞) */
		return 0;
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

/* Online adaptive conformal: inserts the score s into the n sorted scores
 * (room for n + 1), keeping them sorted; after equal scores, so the
 * order of ties is that of arrival. */
static void conformal_insert(double *sorted, long n, double s)
{
	long i = n;

	while (i > 0 && sorted[i - 1] > s) {
		sorted[i] = sorted[i - 1];
		i--;
	}
	sorted[i] = s;
}

/* The calibration score of example t once its label is seen: split
 * conformal's, the true class's score for a set, the box's for intervals. */
static double conformal_own_score(const bnn_conformal_examples *x, long t)
{
	return x->labels ? x->scores[t * x->k + x->labels[t]] : x->scores[t];
}

/* Step t of adaptive conformal inference at quantile q: *covered (0 or 1)
 * and the size of the set, or the mean width of the intervals, by
 * bnn_conformal_sets and bnn_conformal_intervals on that one example. */
static void conformal_step(const bnn_conformal_examples *x, long t, double q, double *covered,
                           double *size)
{
	if (x->labels)
		bnn_conformal_sets(x->scores + t * x->k, x->labels + t, 1, (int)x->k, q, covered,
		                   size);
	else
		bnn_conformal_intervals(x->var ? x->var + t * x->k : NULL, x->scores + t, 1, x->k,
		                        x->method, q, covered, size);
}

int bnn_conformal_adaptive(const double *cal, long n_cal, const bnn_conformal_examples *x,
                           bnn_conformal_adaptive_run *a, bnn_err *err)
{
	double *sorted, alpha, at, covered_all = 0, size_all = 0;
	long t, finite = 0, n = n_cal;
	int rc;

	if (!x || !a || !x->scores || x->n < 1 || x->k < 1)
		return bnn_fail(err, BNN_EINVAL, "adaptive conformal: no examples given");
	if (!(a->gamma >= 0 && a->gamma <= 1)) /* then α_t stays in [−γ, 1 + γ] */
		return bnn_fail(err, BNN_EINVAL,
		                "adaptive conformal: the step size %g is not in [0, 1]", a->gamma);
	if ((rc = conformal_check(cal, n_cal, a->level, err)))
		return rc;
	if ((rc = conformal_sorted(cal, n_cal, a->online ? n_cal + x->n : n_cal, &sorted, err)))
		return rc;
	alpha = 1 - a->level;
	at = alpha; /* α_1 = α */
	a->infinite = 0;
	for (t = 0; t < x->n; t++) {
		double q = conformal_quantile_sorted(sorted, n, 1 - at), covered, size;
		conformal_step(x, t, q, &covered, &size);
		if (a->q)
			a->q[t] = q;
		a->infinite += q == INFINITY || size == INFINITY; /* then size is not in
		                                                    the mean */
		covered_all += covered;
		if (isfinite(size)) {
			size_all += size;
			finite++;
		}
		at += a->gamma * (alpha - (1 - covered)); /* eq. 2, err_t = 1 − covered */
		if (a->online)
			conformal_insert(sorted, n++, conformal_own_score(x, t));
	}
	free(sorted);
	a->coverage = covered_all / (double)x->n;
	a->mean_size = finite ? size_all / (double)finite : NAN;
	a->alpha = at;
	return BNN_OK;
}
