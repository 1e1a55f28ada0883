/*
 * bnn_metrics.h: evaluation metrics for libbnn (included by bnn.h).
 *
 * Classification metrics take predictive probabilities (n examples × k
 * classes, row-major, each row summing to 1 up to rounding) and integer
 * labels in [0, k).  With the confidence c_i = max_j p_ij and the
 * prediction ŷ_i = argmax_j p_ij (the lowest index among ties):
 *
 *   accuracy  mean of [ŷ_i = y_i]
 *   nll       mean of −log max(p_{i,y_i}, 1e-12)        (natural log)
 *   brier     mean over examples of Σ_j (p_ij − [j = y_i])²
 *   ece       Σ_b (|B_b|/n)·|acc(B_b) − conf(B_b)| over B equal-width bins
 *             of confidence: bin b holds the c_i with b/B < c_i ≤ (b+1)/B
 *             (c_i = 0 goes in bin 0); empty bins contribute nothing
 *   mce       max over non-empty bins of |acc(B_b) − conf(B_b)|
 *   auroc     area under the ROC curve of detecting misclassified examples
 *             (positives: ŷ_i ≠ y_i) by the score 1 − c_i; ties count one
 *             half (the Mann-Whitney statistic); 0.5 when there are no
 *             positives or no negatives (undefined: reported as 0.5 and
 *             flagged in auroc_defined)
 *
 * Regression metrics take a predictive mean and variance per output
 * (n × d) and targets (n × d):
 *
 *   rmse      sqrt(mean over all n·d values of (y − μ)²)
 *   nll       mean over examples of Σ_j ½log(2π σ²_ij) + (y_ij − μ_ij)²/(2σ²_ij)
 *
 * All sums are accumulated in double.  docs/metrics.md states the same
 * definitions.
 *
 * Binning is exact: c_i is the float given, converted to double without
 * rounding, and its bin is decided by exact comparisons with the edges
 * b/B, so 0.25f and 0.5f (exactly on an edge) go in the bin below it and
 * 0.05f (= 0.0500000007...) in the bin above 1/20.  Rows are not checked to
 * sum to 1; a confidence at or below 0 goes in bin 0, one at or above 1 in
 * the last bin.  The AUROC ranks by −c_i, which orders exactly as 1 − c_i
 * but has no rounding that could create or break ties.
 *
 * Error messages number examples (and classes, outputs) from 0 and say so:
 * "bnn_metrics_classification: example 2 (0-based): label 3 is outside
 * [0, 3)".
 */
#ifndef BNN_METRICS_H
#define BNN_METRICS_H

#include "bnn_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The default number of ECE/MCE bins. */
#define BNN_DEFAULT_BINS 20

typedef struct bnn_class_metrics {
	long n;
	double accuracy, nll, brier, ece, mce, auroc;
	int auroc_defined; /* 0 when every prediction was right (or all wrong) */
} bnn_class_metrics;

typedef struct bnn_regression_metrics {
	long n;
	double rmse, nll;
} bnn_regression_metrics;

/* One reliability-diagram bin, as ECE sees it. */
typedef struct bnn_bin {
	long count;      /* examples whose confidence falls in the bin */
	double conf;     /* their mean confidence (0 when empty) */
	double acc;      /* their accuracy (0 when empty) */
} bnn_bin;

/**
 * Classification metrics of probs (n × k) against labels.
 * @param probs   n × k predictive probabilities, row-major, all finite.
 * @param labels  n labels in [0, k).
 * @param bins  number of ECE/MCE bins, >= 1.
 * @return BNN_OK; BNN_EINVAL (with a message) when a pointer is NULL,
 *         n < 1, k < 2, bins < 1, a label is outside [0, k) or a
 *         probability is not finite (NaN or infinite); BNN_ENOMEM when the
 *         bins or the AUROC's sort cannot be allocated.  out is written
 *         only on success.
 */
int bnn_metrics_classification(const float *probs, const int *labels,
                               long n, int k, int bins,
                               bnn_class_metrics *out, bnn_err *err);

/**
 * The reliability diagram behind ECE: fills bin[0..bins) as described
 * above.  Same arguments and errors as bnn_metrics_classification(), but
 * allocates nothing (never BNN_ENOMEM).  bin is written only on success.
 */
int bnn_metrics_reliability(const float *probs, const int *labels, long n,
                            int k, int bins, bnn_bin *bin, bnn_err *err);

/**
 * Area under the ROC curve of scores for the positives (positive[i] != 0)
 * against the negatives: the fraction of (positive, negative) pairs in
 * which the positive scores higher, ties (including -0.0 with +0.0)
 * counting one half.  O(n log n), allocates a temporary sorted copy; the
 * result does not depend on the order of the examples.
 * @param defined  set to 1, or 0 when one class is empty; may be NULL.
 * @return BNN_OK with *auc set; *auc = 0.5 and *defined = 0 when one class
 *         is empty; BNN_ENOMEM; BNN_EINVAL when a pointer other than
 *         defined is NULL, n < 1 or a score is NaN.  *auc and *defined are
 *         written only on success.
 */
int bnn_auroc(const double *scores, const int *positive, long n,
              double *auc, int *defined, bnn_err *err);

/**
 * Regression metrics of mean and var (n × d, row-major) against y (n × d).
 * @return BNN_OK; BNN_EINVAL when a pointer is NULL, n < 1, d < 1 or some
 *         var is not > 0 (NaN included; the message names the example and
 *         output, 0-based).  out is written only on success.
 */
int bnn_metrics_regression(const float *mean, const float *var,
                           const float *y, long n, long d,
                           bnn_regression_metrics *out, bnn_err *err);

#ifdef __cplusplus
}
#endif

#endif /* BNN_METRICS_H */
