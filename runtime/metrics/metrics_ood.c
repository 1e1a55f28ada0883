/*
 * metrics_ood.c: bnn_metrics_ood(), how well a score separates
 * out-of-distribution (OOD) examples from in-distribution ones: AUROC, FPR
 * at 95% TPR, detection error, AUPR-in and AUPR-out, the protocol of VOGN
 * (appendix I: entropy histograms, AUROC, FPR at 95% TPR) and IVON
 * (section 4.2, table 3, and appendix C.3, after Liang et al. 2018).  The
 * exact definitions, ties included, are at the top of bnn_metrics.h and
 * in docs/metrics.md.
 *
 * The AUROC is bnn_auroc() on the concatenated scores (OOD positive).  The
 * other metrics come from one sorted copy of each set: a merged walk over
 * the distinct score values, lowest first, keeps a = #{in: s <= v} and
 * b = #{OOD: s <= v}, which give TPR, FPR and the in-distribution
 * precision-recall steps; a second walk, highest first, gives the OOD
 * precision-recall steps.  Equal scores (-0.0 and +0.0 included) are
 * consumed together, so ties are grouped exactly as the definitions say.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "bnn.h"

/* qsort() order of doubles, ascending; never sees NaN. */
static int ood_cmp(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

/* Reject a NaN in one of the two score sets ("in-distribution"/"OOD"). */
static int ood_check_nan(const double *score, long n, const char *which, bnn_err *err)
{
	long i;

	for (i = 0; i < n; i++)
		if (score[i] != score[i])
			return bnn_fail(err, BNN_EINVAL,
			                "bnn_metrics_ood: %s example %ld (0-based): "
			                "score is NaN",
			                which, i);
	return BNN_OK;
}

/*
 * The ascending walk over sorted in[0..m) and ood[0..o): fpr95,
 * threshold95, detection_error and aupr_in (positives: in-distribution,
 * ranked by -s, so lowest s first).
 */
static void ood_walk_up(const double *in, long m, const double *ood, long o, bnn_ood_metrics *out)
{
	long need = m - m / 20; /* ceil(0.95 m), exactly */
	long a = 0, b = 0;      /* in / OOD scores <= the current value */
	double best = 0.5;      /* detection error of accepting nothing */
	double ap = 0.0;
	int have95 = 0;

	while (a < m || b < o) {
		double v, err, step;
		long a0 = a;

		if (b == o || (a < m && in[a] <= ood[b]))
			v = in[a];
		else
			v = ood[b];
		while (a < m && in[a] == v)
			a++;
		while (b < o && ood[b] == v)
			b++;

		/* Accept s <= v: TPR = a/m, FPR = b/o. */
		err = 0.5 * ((double)(m - a) / (double)m) + 0.5 * ((double)b / (double)o);
		if (err < best)
			best = err;
		if (!have95 && a >= need) {
			/* The first value reaching the count is in[need-1]. */
			out->threshold95 = v;
			out->fpr95 = (double)b / (double)o;
			have95 = 1;
		}
		/* Precision-recall step of the in-distribution positives:
		 * recall rises by (a - a0)/m at precision a/(a + b). */
		step = (double)(a - a0) / (double)m;
		if (a > a0)
			ap += step * ((double)a / (double)(a + b));
	}
	out->detection_error = best;
	out->aupr_in = ap;
}

/* The descending walk: aupr_out (positives: OOD, ranked by s). */
static void ood_walk_down(const double *in, long m, const double *ood, long o, bnn_ood_metrics *out)
{
	long a = m, b = o; /* scores >= the current value: m - a, o - b */
	double ap = 0.0;

	while (a > 0 || b > 0) {
		double v, tp, fp;
		long b0 = b;

		if (a == 0 || (b > 0 && ood[b - 1] >= in[a - 1]))
			v = ood[b - 1];
		else
			v = in[a - 1];
		while (a > 0 && in[a - 1] == v)
			a--;
		while (b > 0 && ood[b - 1] == v)
			b--;

		tp = (double)(o - b);
		fp = (double)(m - a);
		if (b < b0)
			ap += ((double)(b0 - b) / (double)o) * (tp / (tp + fp));
	}
	out->aupr_out = ap;
}

int bnn_metrics_ood(const double *score_in, long n_in, const double *score_out, long n_out,
                    bnn_ood_metrics *out, bnn_err *err)
{
	double *score = NULL; /* in scores, then OOD scores */
	int *positive = NULL; /* 0 for in, 1 for OOD: bnn_auroc()'s labels */
	bnn_ood_metrics r;
	long i, n;
	int rc;

	if (score_in == NULL || score_out == NULL || out == NULL)
		return bnn_fail(err, BNN_EINVAL, "bnn_metrics_ood: %s is NULL",
		                score_in == NULL    ? "score_in"
		                : score_out == NULL ? "score_out"
		                                    : "out");
	if (n_in < 1)
		return bnn_fail(err, BNN_EINVAL,
		                "bnn_metrics_ood: n_in is %ld, need at least 1 "
		                "in-distribution example",
		                n_in);
	if (n_out < 1)
		return bnn_fail(err, BNN_EINVAL,
		                "bnn_metrics_ood: n_out is %ld, need at least 1 "
		                "OOD example",
		                n_out);
	rc = ood_check_nan(score_in, n_in, "in-distribution", err);
	if (rc == BNN_OK)
		rc = ood_check_nan(score_out, n_out, "OOD", err);
	if (rc != BNN_OK)
		return rc;

	if (n_in > LONG_MAX - n_out || (unsigned long)(n_in + n_out) > SIZE_MAX / sizeof *score)
		return bnn_fail(err, BNN_ENOMEM, "bnn_metrics_ood: %ld + %ld examples are too many",
		                n_in, n_out);
	n = n_in + n_out;
	score = malloc((size_t)n * sizeof *score);
	positive = malloc((size_t)n * sizeof *positive);
	if (score == NULL || positive == NULL) {
		rc = bnn_fail(err, BNN_ENOMEM, "bnn_metrics_ood: out of memory for %ld examples",
		              n);
		goto done;
	}
	for (i = 0; i < n_in; i++) {
		score[i] = score_in[i];
		positive[i] = 0;
	}
	for (i = 0; i < n_out; i++) {
		score[n_in + i] = score_out[i];
		positive[n_in + i] = 1;
	}

	r.n_in = n_in;
	r.n_out = n_out;
	rc = bnn_auroc(score, positive, n, &r.auroc, NULL, err);
	if (rc != BNN_OK)
		goto done;

	qsort(score, (size_t)n_in, sizeof *score, ood_cmp);
	qsort(score + n_in, (size_t)n_out, sizeof *score, ood_cmp);
	ood_walk_up(score, n_in, score + n_in, n_out, &r);
	ood_walk_down(score, n_in, score + n_in, n_out, &r);
	*out = r;
done:
	free(score);
	free(positive);
	return rc;
}
