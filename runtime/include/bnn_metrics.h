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
 *   ece_floor Σ_b E|S_b − Σ_{i∈B_b} c_i| / n, S_b = Σ_{i∈B_b} X_i with
 *             X_i independent Bernoulli(c_i): the ECE's expectation when
 *             every prediction is right with probability its confidence
 *             (a perfectly calibrated predictor with these confidences),
 *             which comes from the sampling of the n labels alone; an ECE
 *             near it says no more than "calibrated, as far as n examples
 *             can tell"
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
 * Uncertainty (metrics_uncertainty.c): the predictive entropy of a row is
 * H_i = −Σ_j p_ij log p_ij (natural log, 0·log 0 = 0); the confidence
 * score 1 − c_i is its companion for out-of-distribution detection.
 *
 * Out-of-distribution detection (metrics_ood.c) separates m in-distribution
 * scores from o OOD scores, where a HIGHER score means "more likely OOD"
 * (the entropy H_i, or 1 − c_i).  A threshold t accepts an example as
 * in-distribution when its score s ≤ t; TPR(t) = #{in: s ≤ t}/m (the
 * in-distribution examples are the positives of the detector) and
 * FPR(t) = #{OOD: s ≤ t}/o.  The thresholds considered are every distinct
 * score plus "accept nothing" (TPR = FPR = 0), so examples with equal
 * scores are always on the same side.
 *
 *   auroc            bnn_auroc() with the OOD examples as positives, scored
 *                    by s: the fraction of (OOD, in) pairs in which the
 *                    OOD example scores higher, ties one half
 *   fpr95            FPR(t95) where t95 is the smallest t with
 *                    TPR(t) ≥ 0.95, i.e. the ⌈0.95·m⌉-th smallest
 *                    in-distribution score (⌈0.95·m⌉ = m − ⌊m/20⌋, exact
 *                    in integers): the fraction of OOD examples accepted
 *                    when 95% of the in-distribution ones are; OOD scores
 *                    equal to t95 count as accepted
 *   detection_error  min over the thresholds of ½(1 − TPR(t)) + ½·FPR(t),
 *                    so at most ½ (accepting nothing, or everything,
 *                    gives exactly ½)
 *   aupr_in          average precision with the in-distribution examples
 *                    as positives, ranked by −s
 *   aupr_out         average precision with the OOD examples as positives,
 *                    ranked by s
 *
 * Average precision (non-interpolated, step-wise, as in scikit-learn's
 * average_precision_score): walk the distinct values of the ranking score
 * from the highest down; at each value v, every example scoring ≥ v is
 * predicted positive, TP(v) and FP(v) count them, P(v) = TP/(TP + FP),
 * R(v) = TP/#positives, and AP = Σ_v (R(v) − R(v⁺))·P(v), where R(v⁺) is
 * the recall at the previous (higher) value (0 before the first).  Examples
 * with equal scores enter together (ties grouped).  AP is 1 when every
 * positive ranks above every negative.
 *
 * Every OOD metric depends only on the order of the scores, so any
 * strictly increasing transform of them (−c_i instead of 1 − c_i) gives
 * the same numbers.  Scores may be ±∞ but not NaN.
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
	double ece_floor;  /* the ECE's expectation for a calibrated predictor
	                      with these confidences (see ece_floor above) */
} bnn_class_metrics;

typedef struct bnn_regression_metrics {
	long n;
	double rmse, nll;
	double mae; /* the mean absolute error of the mean */
} bnn_regression_metrics;

/* One reliability-diagram bin, as ECE sees it. */
typedef struct bnn_bin {
	long count;  /* examples whose confidence falls in the bin */
	double conf; /* their mean confidence (0 when empty) */
	double acc;  /* their accuracy (0 when empty) */
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
int bnn_metrics_classification(const float *probs, const int *labels, long n, int k, int bins,
                               bnn_class_metrics *out, bnn_err *err);

/**
 * The reliability diagram behind ECE: fills bin[0..bins) as described
 * above.  Same arguments and errors as bnn_metrics_classification(), but
 * allocates nothing (never BNN_ENOMEM).  bin is written only on success.
 */
int bnn_metrics_reliability(const float *probs, const int *labels, long n, int k, int bins,
                            bnn_bin *bin, bnn_err *err);

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
int bnn_auroc(const double *scores, const int *positive, long n, double *auc, int *defined,
              bnn_err *err);

/**
 * Regression metrics of mean and var (n × d, row-major) against y (n × d).
 * @return BNN_OK; BNN_EINVAL when a pointer is NULL, n < 1, d < 1 or some
 *         var is not > 0 (NaN included; the message names the example and
 *         output, 0-based).  out is written only on success.
 */
int bnn_metrics_regression(const float *mean, const float *var, const float *y, long n, long d,
                           bnn_regression_metrics *out, bnn_err *err);

/**
 * The coverage of the central predictive intervals at level c (0 < c < 1):
 * the fraction of the n targets inside the interval between the
 * predictive's (1 − c)/2 and (1 + c)/2 quantiles, from the predictive CDF
 * at each target, cdf[i] = P(Y ≤ y_i), and just below it, cdf_below[i] =
 * P(Y < y_i) (the same as cdf for continuous targets; bnn_predict's cdf and
 * cdf_below).  With the quantile q(p) = min{y : F(y) ≥ p}, y is inside
 * [q((1 − c)/2), q((1 + c)/2)] exactly when cdf ≥ (1 − c)/2 and cdf_below
 * < (1 + c)/2, so no quantile is searched for (docs/metrics.md).
 * @return BNN_OK; BNN_EINVAL (a NULL pointer, n < 1, c outside (0, 1)).
 */
int bnn_metrics_coverage(const double *cdf, const double *cdf_below, long n, double c,
                         double *coverage, bnn_err *err);

/**
 * The PIT histogram (probability integral transform): the fraction of the
 * n targets whose predictive CDF value F(y_i) falls in each of nbins
 * equal-width bins of [0, 1], bin b = (b/nbins, (b + 1)/nbins] (a value 0
 * in the first bin).  A calibrated predictive gives a flat histogram, each
 * bin 1/nbins; a U shape means intervals too narrow, a hump too wide.  For
 * counts (cdf_below[i] < cdf[i]) the non-randomized PIT of Czado, Gneiting
 * & Held (2009): target i spreads its unit of mass uniformly over
 * [cdf_below[i], cdf[i]], so the bins take the share of each interval they
 * cover; continuous targets (cdf_below = cdf) reduce to the plain
 * histogram.  heights (nbins) sum to 1.
 * @return BNN_OK; BNN_EINVAL (a NULL pointer, n < 1, nbins < 1).
 */
int bnn_metrics_pit(const double *cdf, const double *cdf_below, long n, int nbins, double *heights,
                    bnn_err *err);

/* ---- uncertainty and out-of-distribution detection ---------------------- */

/* The OOD-detection metrics of one score (see the top of this file). */
typedef struct bnn_ood_metrics {
	long n_in;              /* in-distribution examples (m) */
	long n_out;             /* out-of-distribution examples (o) */
	double auroc;           /* OOD positives, higher score = OOD, ties ½ */
	double fpr95;           /* FPR at the threshold t95 (TPR ≥ 95%) */
	double threshold95;     /* t95: the ⌈0.95·m⌉-th smallest in score */
	double detection_error; /* min over t of ½(1 − TPR) + ½·FPR */
	double aupr_in;         /* average precision, in positives, score −s */
	double aupr_out;        /* average precision, OOD positives, score s */
} bnn_ood_metrics;

/**
 * Predictive entropy of each row of probs: out[i] = −Σ_j p_ij log p_ij
 * (natural log, accumulated in double; a zero probability contributes 0).
 * For a Bernoulli model pass 2-class rows (1 − p, p).  Rows are not
 * checked to sum to 1 (an entry above 1 makes its term negative).
 * @param probs  n × k probabilities, row-major, finite and ≥ 0.
 * @param out    n entropies, written only on success.
 * @return BNN_OK; BNN_EINVAL when a pointer is NULL, n < 1, k < 2 or a
 *         probability is not finite or negative (the message names the
 *         example and class, 0-based).  Allocates nothing.
 */
int bnn_entropy(const float *probs, long n, int k, double *out, bnn_err *err);

/**
 * The confidence score of each row: out[i] = 1 − max_j p_ij, in double,
 * the "higher means more likely OOD" companion of bnn_entropy() (the JSON
 * keys with the _conf suffix).  1 − c is exact in double for any float
 * c ≥ 2^-29 (so for any row summing to 1 with k ≤ 2^29).
 * @return BNN_OK; BNN_EINVAL exactly as bnn_entropy() (the same checks,
 *         with "bnn_confidence_score" in the message).  Allocates nothing;
 *         out is written only on success.
 */
int bnn_confidence_score(const float *probs, long n, int k, double *out, bnn_err *err);

/**
 * The split of the predictive entropy of S Monte-Carlo predictions:
 * probs holds S blocks of n × k probabilities (sample s, example i, class
 * j at probs[(s·n + i)·k + j]).  For each example, with p̄ the mean of its
 * S rows (in double):
 *   entropy[i]            = H[p̄] = −Σ_j p̄_j log p̄_j (total),
 *   expected_entropy[i]   = (1/S) Σ_s H[p_s] (aleatoric),
 *   mutual_information[i] = entropy[i] − expected_entropy[i] (epistemic,
 *                           the information the label carries about the
 *                           weights), ≥ 0 by Jensen's inequality; a
 *                           negative rounding residue is written as 0.
 * One sample (S = 1) gives mutual information 0.  A Bernoulli model
 * passes 2-class rows per label and adds the three over its labels.
 * @return BNN_OK; BNN_EINVAL when a pointer is NULL, S < 1, n < 1, k < 2
 *         or a probability is not finite or negative (the message names
 *         the row s·n + i and class, 0-based, as bnn_entropy() does).
 *         Allocates nothing; the outputs are written only on success.
 */
int bnn_entropy_split(const float *probs, long samples, long n, int k, double *entropy,
                      double *expected_entropy, double *mutual_information, bnn_err *err);

/**
 * The mutual information of each example, entropy[i] − expected_entropy[i]
 * (0 where rounding makes it negative), from the predictive entropy
 * (bnn_entropy() of the mean prediction) and the expected entropy
 * bnn_predict() accumulates (bnn_prediction.expected_entropy).
 * @return BNN_OK; BNN_EINVAL when a pointer is NULL, n < 1 or a value is
 *         not finite (the message names the example, 0-based).  out is
 *         written only on success.
 */
int bnn_mutual_information(const double *entropy, const double *expected_entropy, long n,
                           double *out, bnn_err *err);

/**
 * The energy score of each row of logits (Liu et al., "Energy-based
 * out-of-distribution detection", NeurIPS 2020, eq. 5 with T = 1):
 * out[i] = −log Σ_j exp(z_ij), by log-sum-exp in double.  Higher means
 * more likely OOD (the paper thresholds −E).  bnn_predict() gives its
 * mean over the Monte-Carlo samples (bnn_prediction.energy).
 * @return BNN_OK; BNN_EINVAL when a pointer is NULL, n < 1, k < 1 or a
 *         logit is not finite (the message names the example and logit,
 *         0-based).  Allocates nothing; out is written only on success.
 */
int bnn_energy(const float *logits, long n, int k, double *out, bnn_err *err);

/**
 * Out-of-distribution detection metrics of score_in (the in-distribution
 * examples) against score_out, HIGHER meaning more likely OOD; definitions
 * at the top of this file.  O((m + o) log(m + o)); the result does not
 * depend on the order of the examples.
 * @param score_in   n_in scores, none NaN (±∞ allowed).
 * @param score_out  n_out scores, none NaN.
 * @return BNN_OK; BNN_EINVAL when a pointer is NULL, n_in < 1, n_out < 1 or
 *         a score is NaN ("bnn_metrics_ood: OOD example 4 (0-based): score
 *         is NaN"); BNN_ENOMEM.  out is written only on success.
 */
int bnn_metrics_ood(const double *score_in, long n_in, const double *score_out, long n_out,
                    bnn_ood_metrics *out, bnn_err *err);

/* ---- temperature scaling (temperature.c; docs/calibration.md) ------------ */

/**
 * The NLL of the temperature-scaled Monte-Carlo predictive of n labelled
 * examples: −(1/n) Σ_i log((1/S) Σ_s softmax(z_is / t)_{y_i}) (Guo et al.
 * 2017, section 4.2, averaged over S samples).
 * @param logits  samples × n × k raw logits, sample-major: logit j of
 *                example i in sample s is logits[(s·n + i)·k + j]
 *                (bnn_prediction.logits).
 * @param labels  n classes in [0, k).
 * @return BNN_OK; BNN_EINVAL (a NULL pointer, n < 1 "the validation set is
 *         empty", samples < 1, k < 2, a label out of range, a logit not
 *         finite, t not > 0).
 */
int bnn_temperature_nll(const float *logits, long samples, long n, int k, const int *labels,
                        double t, double *nll, bnn_err *err);

/**
 * The temperature t in [0.01, 100] minimising bnn_temperature_nll(): a
 * scan of 41 points evenly spaced in log t, then golden-section search in
 * log t between the best point's neighbours to a width of 1e-9.  Same
 * arguments and errors as bnn_temperature_nll().  Allocates nothing.
 */
int bnn_fit_temperature(const float *logits, long samples, long n, int k, const int *labels,
                        double *t, bnn_err *err);

/* ---- split conformal prediction (conformal.c; docs/conformal.md) --------- */

/* The nonconformity scores. */
enum bnn_conformal_method {
	BNN_CONFORMAL_APS,        /* classes: adaptive prediction sets (randomised) */
	BNN_CONFORMAL_RAPS,       /* classes: APS + λ·max(0, rank − k_reg) */
	BNN_CONFORMAL_LAC,        /* classes: 1 − p_y */
	BNN_CONFORMAL_RESIDUAL,   /* regression: max_j |y_j − μ_j| */
	BNN_CONFORMAL_NORMALIZED, /* regression: max_j |y_j − μ_j| / σ_j */
	BNN_CONFORMAL_COUNT
};

typedef struct bnn_conformal_options {
	int method;    /* enum bnn_conformal_method */
	double lambda; /* RAPS: λ */
	long kreg;     /* RAPS: k_reg */
} bnn_conformal_options;

/* The name of a method ("aps"), and the method of a name (-1: none). */
const char *bnn_conformal_method_name(int method);
int bnn_conformal_method_from_name(const char *name);
/* 1 for residual and normalized, else 0. */
int bnn_conformal_is_regression(int method);

/**
 * The conformal quantile of n calibration scores at the coverage level
 * (1 − α): the ⌈(n + 1)·level⌉-th smallest score (Vovk's finite-sample
 * correction; the product rounded as its decimal value, so (9 + 1)·0.9 is
 * 9).
 * @return BNN_OK; BNN_EINVAL for a level outside (0, 1), n < 1 ("the
 *         calibration set is empty"), or a rank above n ("5 calibration
 *         examples are too few for level 0.9: ... (at least 9 examples are
 *         needed)"); BNN_ENOMEM.
 */
int bnn_conformal_quantile(const double *scores, long n, double level, double *q, bnn_err *err);

/**
 * The score of every class of n examples (scores: n × k), for o->method
 * aps, raps or lac; u holds one uniform in [0, 1) per example for the
 * randomisation of aps and raps (NULL: u = 1, the deterministic APS).
 * An example's set at quantile q is every class j with score ≤ q; its
 * calibration score is the true class's.
 */
int bnn_conformal_class_scores(const float *probs, long n, int k, const double *u,
                               const bnn_conformal_options *o, double *scores, bnn_err *err);

/**
 * The score of each of n examples with d outputs (method residual or
 * normalized): max over the outputs of |y − μ|, or of |y − μ|/σ with σ² the
 * predictive variance var.
 * @return BNN_OK; BNN_EINVAL for a NULL array, a method not for regression,
 *         or (normalized) a variance that is not finite and positive (an
 *         infinite one, studentt's with ν ≤ 2, would make every score 0).
 */
int bnn_conformal_regression_scores(const float *mean, const float *var, const float *y, long n,
                                    long d, int method, double *scores, bnn_err *err);

/** The coverage (the fraction of examples whose label is in its set;
 *  labels may be NULL: 0) and the mean set size of the sets at q. */
void bnn_conformal_sets(const double *scores, const int *labels, long n, int k, double q,
                        double *coverage, double *mean_size);

/** Half the width of an interval at q: q (residual), q·√var (normalized);
 *  0 for a q of 0 or below (−∞: adaptive conformal's empty interval). */
double bnn_conformal_half_width(int method, double q, double var);

/** The coverage (examples whose score ≤ q: every output in its interval)
 *  and the mean width over the n·d intervals at q. */
void bnn_conformal_intervals(const float *var, const double *scores, long n, long d, int method,
                             double q, double *coverage, double *mean_width);

/* ---- adaptive conformal inference (conformal.c; docs/conformal.md) ------- */

/* The sets or intervals of n examples, in the order their labels arrive:
 * the arguments of bnn_conformal_sets (labels given) or of
 * bnn_conformal_intervals (labels NULL).  Borrowed. */
typedef struct bnn_conformal_examples {
	const double *scores; /* sets: n × k class scores; intervals: n scores */
	const int *labels;    /* sets: the n true classes; NULL for intervals */
	const float *var;     /* intervals: n × k predictive variances (NULL: 1) */
	long n;               /* the examples */
	long k;               /* the classes, or the outputs of an interval box */
	int method;           /* intervals: BNN_CONFORMAL_RESIDUAL or _NORMALIZED */
} bnn_conformal_examples;

/* One run of adaptive conformal inference: its settings and results. */
typedef struct bnn_conformal_adaptive_run {
	double level;     /* in: the long-run coverage aimed at, 1 − α, in (0, 1) */
	double gamma;     /* in: the step size γ of eq. 2, in [0, 1] (0: split conformal) */
	int online;       /* in: nonzero: each example's calibration score joins
	                     the calibration scores after its step */
	double *q;        /* in: NULL, or n doubles that receive each step's quantile */
	double coverage;  /* out: the fraction of the examples covered, 1 − mean err_t */
	double mean_size; /* out: the mean set size or interval width over the
	                     steps whose size is finite (NAN: none is, and then
	                     infinite = n) */
	long infinite;    /* out: the steps whose quantile was +∞ (every class,
	                     or the whole line) or whose interval was infinite */
	double alpha;     /* out: α_{n+1}, the level the next example would use */
} bnn_conformal_adaptive_run;

/**
 * Adaptive conformal inference (Gibbs and Candès 2021) over the examples
 * x in order: example t (from 1) gets the set or interval at the conformal
 * quantile of the n_cal calibration scores cal at level 1 − α_t, where
 * α_1 = α = 1 − a->level and α_{t+1} = α_t + γ·(α − err_t) (their eq. 2),
 * err_t = 1 when its label is outside.  The quantile is the
 * ⌈(n_cal + 1)·(1 − α_t)⌉-th smallest score (bnn_conformal_quantile's),
 * +∞ when that rank exceeds n_cal (α_t ≤ 0 among others: every class, the
 * whole line), −∞ when it is below 1 (α_t ≥ 1: the empty set).  Whatever
 * the data, |mean err_t − α| ≤ (max(α, 1 − α) + γ)/(γ·n) (their
 * Proposition 4.1).  With a->online, example t's own calibration score
 * (the true class's, or its interval box's) is added to the calibration
 * scores once its label is seen, so step t ranks n_cal + t − 1 scores
 * (the bound still holds).  Fills a's results.
 * @return BNN_OK; BNN_EINVAL for no examples, a γ outside [0, 1], a level
 *         outside (0, 1) or no calibration scores; BNN_ENOMEM.
 */
int bnn_conformal_adaptive(const double *cal, long n_cal, const bnn_conformal_examples *x,
                           bnn_conformal_adaptive_run *a, bnn_err *err);

#ifdef __cplusplus
}
#endif

#endif /* BNN_METRICS_H */
