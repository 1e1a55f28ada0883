/*
 * metrics_auroc.c: bnn_auroc(), the area under the ROC curve computed as
 * the Mann-Whitney statistic.  The (score, label) pairs are sorted by score
 * once (O(n log n)); a walk over the runs of equal scores then counts, for
 * every positive, the negatives below it plus one half for each negative
 * tied with it.  That is the same number as the rank-sum formula with
 * average ranks for ties, but needs no ranks and stays exact in double up
 * to 2^53 pairs.  bnn_metrics_classification() uses it for the
 * misclassification-detection AUROC; the definitions are in bnn_metrics.h
 * and docs/metrics.md.
 */
#include <stdint.h>
#include <stdlib.h>

#include "bnn.h"

/* One example as the sort sees it. */
struct auroc_item {
	double score; /* the example's score (never NaN) */
	int positive; /* 1 for a positive, 0 for a negative */
};

/*
 * qsort() order: by score, then negatives before positives.  Items that
 * compare equal are identical in every field the walk reads, so the result
 * does not depend on how qsort orders them (qsort is not stable).  -0.0 and
 * +0.0 compare equal and are one tie.
 */
static int auroc_cmp(const void *pa, const void *pb)
{
	const struct auroc_item *a = pa, *b = pb;

	if (a->score < b->score)
		return -1;
	if (a->score > b->score)
		return 1;
	return (a->positive > b->positive) - (a->positive < b->positive);
}

int bnn_auroc(const double *scores, const int *positive, long n, double *auc, int *defined,
              bnn_err *err)
{
	struct auroc_item *item;
	long i, j, npos = 0, nneg = 0;
	double below = 0.0; /* negatives with a score below the current run */
	double u = 0.0;     /* Mann-Whitney U of the positives */

	if (scores == NULL || positive == NULL || auc == NULL)
		return bnn_fail(err, BNN_EINVAL, "bnn_auroc: %s is NULL",
		                scores == NULL     ? "scores"
		                : positive == NULL ? "positive"
		                                   : "auc");
	if (n < 1)
		return bnn_fail(err, BNN_EINVAL, "bnn_auroc: n is %ld, need at least 1 example", n);
	for (i = 0; i < n; i++) {
		if (scores[i] != scores[i])
			return bnn_fail(err, BNN_EINVAL,
			                "bnn_auroc: example %ld (0-based): "
			                "score is NaN",
			                i);
		if (positive[i])
			npos++;
		else
			nneg++;
	}
	if (npos == 0 || nneg == 0) {
		*auc = 0.5;
		if (defined != NULL)
			*defined = 0;
		return BNN_OK;
	}

	if ((unsigned long)n > SIZE_MAX / sizeof *item)
		return bnn_fail(err, BNN_ENOMEM, "bnn_auroc: %ld examples are too many to sort", n);
	item = malloc((size_t)n * sizeof *item);
	if (item == NULL)
		return bnn_fail(err, BNN_ENOMEM, "bnn_auroc: out of memory sorting %ld scores", n);
	for (i = 0; i < n; i++) {
		item[i].score = scores[i];
		item[i].positive = positive[i] != 0;
	}
	qsort(item, (size_t)n, sizeof *item, auroc_cmp);

	/* Each run of equal scores [i, j): a positive in it beats every
	 * negative below the run and ties with every negative in the run. */
	for (i = 0; i < n; i = j) {
		double run_pos = 0.0, run_neg = 0.0;

		for (j = i; j < n && item[j].score == item[i].score; j++) {
			if (item[j].positive)
				run_pos += 1.0;
			else
				run_neg += 1.0;
		}
		u += run_pos * below + 0.5 * run_pos * run_neg;
		below += run_neg;
	}
	free(item);

	*auc = u / ((double)npos * (double)nneg);
	if (defined != NULL)
		*defined = 1;
	return BNN_OK;
}
