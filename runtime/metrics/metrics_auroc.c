/*
 * metrics_auroc.c: bnn_auroc(), the area under the ROC curve computed as
 * the Mann-Whitney statistic.  The (score, label) pairs are sorted by score
 * once (O(n log n)); a walk over the runs of equal scores then counts, for
 * every positive, the negatives below it plus one half for each negative
 * tied with it.  That is the same number as the rank-sum formula with
 * average ranks for ties, but needs no ranks and stays exact in double up
 * to 2^53 pairs.  Long inputs are sorted in fixed pieces in parallel,
 * then merged (auroc_sort).  bnn_metrics_classification() uses it for the
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

/* The sort in parallel: pieces of AUROC_PIECE items sorted by qsort, one
 * per thread at a time, then merged pairwise, round by round (the pairs
 * of a round in parallel).  The pieces are fixed, so the sorted order is
 * the same for every number of threads, and in any case the walk's result
 * depends only on the multiset of items (see auroc_cmp).  From two pieces
 * on: the sort is most of the metrics' time (5 ms of 5.6 for 10,000
 * examples of 10 classes here), a serial qsort below. */
#define AUROC_PIECE 2048

/* Merge a[0..na) and b[0..nb), each sorted, into out. */
static void auroc_merge(const struct auroc_item *a, long na, const struct auroc_item *b, long nb,
                        struct auroc_item *out)
{
	long i = 0, j = 0, o = 0;

	while (i < na && j < nb)
		out[o++] = auroc_cmp(&b[j], &a[i]) < 0 ? b[j++] : a[i++];
	while (i < na)
		out[o++] = a[i++];
	while (j < nb)
		out[o++] = b[j++];
}

/* Sort item[0..n) (n > AUROC_PIECE) with tmp[0..n) as scratch; returns
 * whichever of the two holds the result. */
static struct auroc_item *auroc_sort(struct auroc_item *item, struct auroc_item *tmp, long n)
{
	long p, w, npieces = (n + AUROC_PIECE - 1) / AUROC_PIECE;

#pragma omp parallel for schedule(static)
	for (p = 0; p < npieces; p++) {
		long a = p * AUROC_PIECE;
		qsort(item + a, (size_t)(n - a < AUROC_PIECE ? n - a : AUROC_PIECE), sizeof *item,
		      auroc_cmp);
	}
	for (w = AUROC_PIECE; w < n; w *= 2) {
		long npairs = (n + 2 * w - 1) / (2 * w);
		struct auroc_item *swap;

#pragma omp parallel for schedule(static) if (npairs > 1)
		for (p = 0; p < npairs; p++) {
			long a = p * 2 * w, m = a + w < n ? a + w : n,
			     e = a + 2 * w < n ? a + 2 * w : n;
			auroc_merge(item + a, m - a, item + m, e - m, tmp + a);
		}
		swap = item;
		item = tmp;
		tmp = swap;
	}
	return item;
}

int bnn_auroc(const double *scores, const int *positive, long n, double *auc, int *defined,
              bnn_err *err)
{
	struct auroc_item *item, *tmp, *sorted;
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
	tmp = n > AUROC_PIECE ? malloc((size_t)n * sizeof *tmp) : NULL;
	if (item == NULL || (n > AUROC_PIECE && tmp == NULL)) {
		free(item);
		return bnn_fail(err, BNN_ENOMEM, "bnn_auroc: out of memory sorting %ld scores", n);
	}
	sorted = item;
	for (i = 0; i < n; i++) {
		item[i].score = scores[i];
		item[i].positive = positive[i] != 0;
	}
	if (n > AUROC_PIECE)
		sorted = auroc_sort(item, tmp, n);
	else
		qsort(item, (size_t)n, sizeof *item, auroc_cmp);

	/* Each run of equal scores [i, j): a positive in it beats every
	 * negative below the run and ties with every negative in the run. */
	for (i = 0; i < n; i = j) {
		double run_pos = 0.0, run_neg = 0.0;

		for (j = i; j < n && sorted[j].score == sorted[i].score; j++) {
			if (sorted[j].positive)
				run_pos += 1.0;
			else
				run_neg += 1.0;
		}
		u += run_pos * below + 0.5 * run_pos * run_neg;
		below += run_neg;
	}
	free(item);
	free(tmp);

	*auc = u / ((double)npos * (double)nneg);
	if (defined != NULL)
		*defined = 1;
	return BNN_OK;
}
