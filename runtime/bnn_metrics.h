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
 */
#ifndef BNN_METRICS_H
#define BNN_METRICS_H

#include "bnn.h"

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
 * @param bins  number of ECE/MCE bins, >= 1.
 * @return BNN_OK; BNN_EINVAL (with a message) when n < 1, k < 2, bins < 1,
 *         or a label is outside [0, k).  out is written only on success.
 */
int bnn_metrics_classification(const float *probs, const int *labels,
                               long n, int k, int bins,
                               bnn_class_metrics *out, bnn_err *err);

/**
 * The reliability diagram behind ECE: fills bin[0..bins) as described
 * above.  Same arguments and errors as bnn_metrics_classification().
 */
int bnn_metrics_reliability(const float *probs, const int *labels, long n,
                            int k, int bins, bnn_bin *bin, bnn_err *err);

/**
 * Area under the ROC curve of scores for the positives (positive[i] != 0)
 * against the negatives; ties count one half.  O(n log n), allocates a
 * temporary index.
 * @return BNN_OK with *auc set; *auc = 0.5 and *defined = 0 when one class
 *         is empty; BNN_ENOMEM; BNN_EINVAL when n < 1.
 */
int bnn_auroc(const double *scores, const int *positive, long n,
              double *auc, int *defined, bnn_err *err);

/**
 * Regression metrics; var must be positive.
 * @return BNN_OK; BNN_EINVAL when n < 1, d < 1 or some var <= 0.
 */
int bnn_metrics_regression(const float *mean, const float *var,
                           const float *y, long n, long d,
                           bnn_regression_metrics *out, bnn_err *err);

#ifdef __cplusplus
}
#endif

#endif /* BNN_METRICS_H */
