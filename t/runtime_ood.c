/*
 * runtime_ood.c: TAP tests of libbnn's uncertainty evaluation: predictive
 * entropy and the confidence score (metrics_uncertainty.c), the
 * out-of-distribution detection metrics (metrics_ood.c: AUROC, FPR at 95%
 * TPR, detection error, AUPR-in, AUPR-out) and the SVG/CSV charts
 * (plot_svg.c, bnn_plot.h).  Every expected number is worked out by hand in
 * the comment next to its check: entropies of uniform, one-hot, 3-class
 * and Bernoulli rows; the split of an MC predictive's entropy into
 * expected entropy and mutual information on two samples of four rows;
 * the energy score of logits; the four OOD scores' AUROC and FPR95 on a
 * tiny in/out set; every OOD metric on a small example with ties (the
 * thresholds, TPR/FPR and the precision-recall steps are listed), on
 * perfect and reversed separation, all-tied scores, -0.0 against +0.0,
 * infinite scores and the 95% order statistic with m = 20; the charts'
 * SVG structure (counted elements) and their CSV text exactly; and the
 * argument errors with their messages.  Files go to a fresh mkdtemp()
 * directory under $TMPDIR (or /tmp), removed at the end.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bnn.h"
#include "bnn_plot.h"
#include "tap.h"

#define TOL 1e-15

/* ---- entropy and confidence ------------------------------------------- */

static void test_entropy(void)
{
	/* row 0: uniform over 4      H = -4 * 1/4 * ln(1/4) = ln 4
	 * row 1: one-hot             H = 0 (0 log 0 = 0)
	 * row 2: 0.5, 0.25, 0.25, 0  H = 0.5 ln 2 + 2 * 0.25 ln 4 = 1.5 ln 2
	 * row 3: 0.75, 0.25, 0, 0    H = 0.75 ln(4/3) + 0.25 ln 4
	 *                              = ln 4 - 0.75 ln 3 */
	static const float probs[4 * 4] = {
		0.25f, 0.25f, 0.25f, 0.25f, 0.0f,  1.0f,  0.0f, 0.0f,
		0.5f,  0.25f, 0.25f, 0.0f,  0.75f, 0.25f, 0.0f, 0.0f,
	};
	/* The same 3-class and Bernoulli rows with their own k. */
	static const float three[3] = { 0.5f, 0.25f, 0.25f };
	static const float bern[2] = { 0.75f, 0.25f };
	double h[4], c[4];
	bnn_err err;
	int rc;

	bnn_err_clear(&err);
	rc = bnn_entropy(probs, 4, 4, h, &err);
	is_int(rc, BNN_OK, "entropy: succeeds");
	/* ln 4 = 1.3862943611198906 */
	is_float(h[0], 1.3862943611198906, TOL, "entropy: uniform k=4 = ln 4");
	is_float(h[1], 0.0, 0.0, "entropy: one-hot = 0 exactly");
	/* 1.5 * 0.6931471805599453 = 1.0397207708399179 */
	is_float(h[2], 1.0397207708399179, TOL, "entropy: (0.5, 0.25, 0.25, 0) = 1.5 ln 2");
	/* 1.3862943611198906 - 0.75 * 1.0986122886681098 = 0.5623351446188083 */
	is_float(h[3], 0.5623351446188083, TOL, "entropy: (0.75, 0.25, 0, 0) = ln 4 - 0.75 ln 3");
	rc = bnn_entropy(three, 1, 3, h, &err);
	is_int(rc, BNN_OK, "entropy: k=3 succeeds");
	is_float(h[0], 1.0397207708399179, TOL, "entropy: 3-class row = 1.5 ln 2");
	rc = bnn_entropy(bern, 1, 2, h, &err);
	is_int(rc, BNN_OK, "entropy: Bernoulli as 2 classes succeeds");
	is_float(h[0], 0.5623351446188083, TOL, "entropy: Bernoulli p = 0.25 = ln 4 - 0.75 ln 3");

	/* 1 - max: 1 - 0.25, 1 - 1, 1 - 0.5, 1 - 0.75 (all exact) */
	rc = bnn_confidence_score(probs, 4, 4, c, &err);
	is_int(rc, BNN_OK, "confidence score: succeeds");
	ok(c[0] == 0.75 && c[1] == 0.0 && c[2] == 0.5 && c[3] == 0.25,
	   "confidence score: 1 - max = 0.75, 0, 0.5, 0.25");
	is_int(err.code, BNN_OK, "entropy: err untouched on success");
}

static void test_entropy_errors(void)
{
	static const float neg[2 * 2] = { 0.5f, 0.5f, 1.25f, -0.25f };
	float nan_row[2] = { 0.5f, 0.5f };
	double h[2] = { 42.0, 42.0 };
	bnn_err err;
	int rc;

	nan_row[1] = nanf("");
	bnn_err_clear(&err);
	rc = bnn_entropy(neg, 2, 2, h, &err);
	is_int(rc, BNN_EINVAL, "entropy: negative probability is EINVAL");
	is_str(err.message,
	       "bnn_entropy: example 1 (0-based), class 1: "
	       "probability -0.25 is negative",
	       "entropy: negative message");
	ok(h[0] == 42.0 && h[1] == 42.0, "entropy: out untouched on failure");
	rc = bnn_entropy(nan_row, 1, 2, h, &err);
	is_int(rc, BNN_EINVAL, "entropy: NaN probability is EINVAL");
	is_str(err.message,
	       "bnn_entropy: example 0 (0-based), class 1: "
	       "probability nan is not finite",
	       "entropy: NaN message");
	rc = bnn_entropy(neg, 1, 1, h, &err);
	is_str(err.message, "bnn_entropy: k is 1, need at least 2 classes",
	       "entropy: k = 1 message");
	rc = bnn_entropy(neg, 0, 2, h, &err);
	is_str(err.message, "bnn_entropy: n is 0, need at least 1 example",
	       "entropy: n = 0 message");
	rc = bnn_entropy(NULL, 1, 2, h, &err);
	is_str(err.message, "bnn_entropy: probs is NULL", "entropy: NULL probs message");
	rc = bnn_confidence_score(neg, 1, 2, NULL, &err);
	is_int(rc, BNN_EINVAL, "confidence score: NULL out is EINVAL");
	is_str(err.message, "bnn_confidence_score: out is NULL",
	       "confidence score: NULL out message");
}

/* ---- the entropy split, the mutual information and the energy --------- */

/*
 * S = 2 samples of n = 4 two-class predictions (sample-major):
 *   example 0: (0.5, 0.5), (0.5, 0.5)  mean (0.5, 0.5): H = ln 2, E H = ln 2,
 *                                      MI = 0 (the samples agree: aleatoric)
 *   example 1: (1, 0), (1, 0)          H = E H = MI = 0
 *   example 2: (1, 0), (0, 1)          H = ln 2, E H = 0, MI = ln 2
 *                                      (they disagree: epistemic)
 *   example 3: (0.75, 0.25), (0.25, 0.75)
 *                                      H = ln 2, E H = ln 4 − 0.75 ln 3,
 *                                      MI = 0.75 ln 3 − ln 2 = 0.130812035941137
 */
static const float split_probs[2 * 4 * 2] = {
	0.5f, 0.5f, 1.0f, 0.0f, 1.0f, 0.0f, 0.75f, 0.25f, /* sample 0 */
	0.5f, 0.5f, 1.0f, 0.0f, 0.0f, 1.0f, 0.25f, 0.75f, /* sample 1 */
};

static void test_entropy_split(void)
{
	double h[4], eh[4], mi[4], mi2[4];
	bnn_err err;

	is_int(bnn_entropy_split(split_probs, 2, 4, 2, h, eh, mi, &err), BNN_OK,
	       "entropy split: succeeds");
	is_float(h[0], 0.6931471805599453, TOL, "split: agreeing halves: H = ln 2");
	is_float(eh[0], 0.6931471805599453, TOL, "split: agreeing halves: E H = ln 2");
	is_float(mi[0], 0.0, 0.0, "split: agreeing halves: MI = 0 exactly");
	ok(h[1] == 0 && eh[1] == 0 && mi[1] == 0, "split: agreeing one-hot rows: all 0");
	is_float(h[2], 0.6931471805599453, TOL, "split: disagreeing one-hot rows: H = ln 2");
	is_float(eh[2], 0.0, 0.0, "split: disagreeing one-hot rows: E H = 0");
	is_float(mi[2], 0.6931471805599453, TOL, "split: disagreeing one-hot rows: MI = ln 2");
	is_float(h[3], 0.6931471805599453, TOL, "split: (0.75, 0.25) and (0.25, 0.75): H = ln 2");
	is_float(eh[3], 0.5623351446188083, TOL, "split: E H = ln 4 - 0.75 ln 3");
	is_float(mi[3], 0.130812035941137, 1e-15, "split: MI = 0.75 ln 3 - ln 2");
	is_int(bnn_entropy_split(split_probs, 1, 4, 2, h, eh, mi, &err), BNN_OK,
	       "split: one sample");
	ok(mi[2] == 0 && mi[3] == 0 && h[3] == eh[3], "split: one sample has MI 0 and E H = H");

	/* bnn_mutual_information from the two entropies: H − E H, rounding
	 * residues below 0 written as 0. */
	h[0] = 1.0, eh[0] = 0.25;
	h[1] = 0.5, eh[1] = 0.5000001;
	is_int(bnn_mutual_information(h, eh, 2, mi2, &err), BNN_OK, "mutual information: succeeds");
	ok(mi2[0] == 0.75 && mi2[1] == 0.0, "mutual information: 1 - 0.25 = 0.75; -1e-7 -> 0");

	is_int(bnn_entropy_split(split_probs, 0, 4, 2, h, eh, mi, &err), BNN_EINVAL,
	       "split: no sample is EINVAL");
	is_str(err.message, "bnn_entropy_split: samples is 0, need at least 1",
	       "split: S = 0 message");
	is_int(bnn_entropy_split(split_probs, 2, 4, 2, h, NULL, mi, &err), BNN_EINVAL,
	       "split: a NULL output is EINVAL");
	is_str(err.message, "bnn_entropy_split: an output array is NULL", "split: NULL message");
	h[0] = nan("");
	is_int(bnn_mutual_information(h, eh, 2, mi2, &err), BNN_EINVAL,
	       "mutual information: a NaN entropy is EINVAL");
	is_str(err.message,
	       "bnn_mutual_information: example 0 (0-based): the entropy nan is not finite",
	       "mutual information: NaN message");
}

static void test_energy(void)
{
	/* −log Σ exp(z) (Liu et al. 2020, eq. 5, T = 1):
	 * (0, 0): −ln 2;  (1000, 1000): −(1000 + ln 2), no overflow;
	 * (10, 0): −(10 + ln(1 + e^-10)) = −10.000045398899218;
	 * (1, 1): −(1 + ln 2);  (3, −3): −(3 + ln(1 + e^-6)) = −3.0024756851377306 */
	static const float z[5 * 2] = { 0, 0, 1000, 1000, 10, 0, 1, 1, 3, -3 };
	float bad[2] = { 0, 0 };
	double e[5];
	bnn_err err;

	is_int(bnn_energy(z, 5, 2, e, &err), BNN_OK, "energy: succeeds");
	is_float(e[0], -0.6931471805599453, TOL, "energy: (0, 0) = -ln 2");
	is_float(e[1], -1000.6931471805599, 1e-12, "energy: (1000, 1000) = -(1000 + ln 2)");
	is_float(e[2], -10.000045398899218, 1e-14, "energy: (10, 0)");
	is_float(e[3], -1.6931471805599454, 1e-15, "energy: (1, 1) = -(1 + ln 2)");
	is_float(e[4], -3.0024756851377306, 1e-15, "energy: (3, -3)");
	bad[1] = INFINITY;
	is_int(bnn_energy(bad, 1, 2, e, &err), BNN_EINVAL, "energy: an infinite logit is EINVAL");
	is_str(err.message, "bnn_energy: example 0 (0-based), logit 1: inf is not finite",
	       "energy: message");
}

/*
 * The four OOD scores on a tiny set: the in-distribution examples are
 * examples 0 and 1 of split_probs, the OOD ones 2 and 3.
 *   entropy  in {ln 2, 0}, OOD {ln 2, ln 2}: each OOD beats 0 and ties
 *            ln 2: AUROC (1.5 + 1.5)/4 = 0.75; t95 = ln 2 accepts both
 *            OOD: FPR95 = 1;
 *   1 − max of the mean rows (0.5, 0.5), (1, 0), (0.5, 0.5), (0.5, 0.5):
 *            in {0.5, 0}, OOD {0.5, 0.5}: 0.75 and 1 likewise;
 *   MI       in {0, 0}, OOD {ln 2, 0.1308}: AUROC 1, FPR95 0 (the samples'
 *            disagreement is what marks these OOD examples);
 *   energy   logits in (10, 0), (1, 1) -> {−10.0000454, −1.6931472}, OOD
 *            (0, 0), (3, −3) -> {−0.6931472, −3.0024757}: −0.69 beats both,
 *            −3.00 beats −10.00 only: AUROC 3/4; t95 = −1.693 accepts −3.00:
 *            FPR95 0.5.
 */
static void test_ood_scores(void)
{
	static const float mean[4 * 2] = { 0.5f, 0.5f, 1.0f, 0.0f, 0.5f, 0.5f, 0.5f, 0.5f };
	static const float z[4 * 2] = { 10, 0, 1, 1, 0, 0, 3, -3 };
	double h[4], eh[4], mi[4], c[4], e[4];
	bnn_ood_metrics om;
	bnn_err err;

	if (bnn_entropy_split(split_probs, 2, 4, 2, h, eh, mi, &err) ||
	    bnn_confidence_score(mean, 4, 2, c, &err) || bnn_energy(z, 4, 2, e, &err))
		tap_bail_out("%s", err.message);
	bnn_metrics_ood(h, 2, h + 2, 2, &om, &err);
	ok(om.auroc == 0.75 && om.fpr95 == 1, "OOD by entropy: AUROC 0.75, FPR95 1 (%g, %g)",
	   om.auroc, om.fpr95);
	bnn_metrics_ood(c, 2, c + 2, 2, &om, &err);
	ok(om.auroc == 0.75 && om.fpr95 == 1, "OOD by 1 - max p: AUROC 0.75, FPR95 1 (%g, %g)",
	   om.auroc, om.fpr95);
	bnn_metrics_ood(mi, 2, mi + 2, 2, &om, &err);
	ok(om.auroc == 1 && om.fpr95 == 0, "OOD by mutual information: AUROC 1, FPR95 0 (%g, %g)",
	   om.auroc, om.fpr95);
	bnn_metrics_ood(e, 2, e + 2, 2, &om, &err);
	ok(om.auroc == 0.75 && om.fpr95 == 0.5, "OOD by energy: AUROC 0.75, FPR95 0.5 (%g, %g)",
	   om.auroc, om.fpr95);
}

/* ---- OOD metrics -------------------------------------------------------- */

static void test_ood_ties(void)
{
	/*
	 * in  (m = 4): 1, 2, 2, 4      OOD (o = 3): 2, 4, 5
	 *
	 * AUROC, OOD positive: for each OOD score, wins over in + ½ per tie:
	 *   2: beats 1, ties 2, 2      -> 1 + 0.5 + 0.5 = 2
	 *   4: beats 1, 2, 2, ties 4   -> 3 + 0.5       = 3.5
	 *   5: beats all four          -> 4
	 *   (2 + 3.5 + 4) / (3 * 4) = 9.5/12 = 19/24 = 0.7916666666666666
	 *
	 * Thresholds (accept s <= t), a = #in <= t, b = #OOD <= t:
	 *   t       a  b  TPR   FPR   ½(1-TPR) + ½FPR
	 *   none    0  0  0     0     0.5
	 *   1       1  0  1/4   0     0.375
	 *   2       3  1  3/4   1/3   0.125 + 1/6 = 7/24 = 0.2916666666666667
	 *   4       4  2  1     2/3   1/3
	 *   5       4  3  1     1     0.5
	 * detection_error = 7/24.
	 * fpr95: ceil(0.95 * 4) = 4 - floor(4/20) = 4: t95 = 4th smallest in
	 * = 4; OOD <= 4 are 2 and 4 (the tie counts as accepted): 2/3.
	 *
	 * AUPR-in (in positive, ranked by -s: lowest s first):
	 *   v   TP  FP  P      R    R step  P * step
	 *   1   1   0   1      1/4  1/4     1/4
	 *   2   3   1   3/4    3/4  1/2     3/8
	 *   4   4   2   2/3    1    1/4     1/6
	 *   5   4   3   4/7    1    0       0
	 *   AP = 1/4 + 3/8 + 1/6 = 6/24 + 9/24 + 4/24 = 19/24
	 * AUPR-out (OOD positive, highest s first):
	 *   v   TP  FP  P      R    R step  P * step
	 *   5   1   0   1      1/3  1/3     1/3
	 *   4   2   1   2/3    2/3  1/3     2/9
	 *   2   3   3   1/2    1    1/3     1/6
	 *   1   3   4   3/7    1    0       0
	 *   AP = 1/3 + 2/9 + 1/6 = 6/18 + 4/18 + 3/18 = 13/18
	 */
	static const double in[4] = { 2.0, 4.0, 1.0, 2.0 };
	static const double out[3] = { 5.0, 2.0, 4.0 };
	static const double in_perm[4] = { 4.0, 2.0, 2.0, 1.0 };
	static const double out_perm[3] = { 4.0, 5.0, 2.0 };
	bnn_ood_metrics m, p;
	bnn_err err;
	int rc;

	bnn_err_clear(&err);
	rc = bnn_metrics_ood(in, 4, out, 3, &m, &err);
	is_int(rc, BNN_OK, "ood ties: succeeds");
	is_int(m.n_in, 4, "ood ties: n_in = 4");
	is_int(m.n_out, 3, "ood ties: n_out = 3");
	is_float(m.auroc, 19.0 / 24.0, TOL, "ood ties: auroc = 9.5/12");
	is_float(m.threshold95, 4.0, 0.0, "ood ties: t95 = 4th smallest in = 4");
	is_float(m.fpr95, 2.0 / 3.0, TOL,
	         "ood ties: fpr95 = 2/3 (tie at t95 "
	         "accepted)");
	is_float(m.detection_error, 7.0 / 24.0, TOL,
	         "ood ties: detection error = 1/8 + 1/6 at t = 2");
	is_float(m.aupr_in, 19.0 / 24.0, TOL, "ood ties: aupr_in = 1/4 + 3/8 + 1/6");
	is_float(m.aupr_out, 13.0 / 18.0, TOL, "ood ties: aupr_out = 1/3 + 2/9 + 1/6");
	is_int(err.code, BNN_OK, "ood ties: err untouched");

	rc = bnn_metrics_ood(in_perm, 4, out_perm, 3, &p, &err);
	is_int(rc, BNN_OK, "ood ties, permuted: succeeds");
	ok(p.auroc == m.auroc && p.fpr95 == m.fpr95 && p.detection_error == m.detection_error &&
	           p.aupr_in == m.aupr_in && p.aupr_out == m.aupr_out,
	   "ood ties: the order of the examples does not matter");
}

static void test_ood_fpr95(void)
{
	/*
	 * in = 1, 2, ..., 20 (m = 20); OOD = 19, 0, 21, 19 (o = 4).
	 * ceil(0.95 * 20) = 20 - floor(20/20) = 19, so t95 is the 19th
	 * smallest in score, 19: 19 of the 20 in scores (95%) are <= 19.
	 * OOD <= 19: 19, 0, 19 -> fpr95 = 3/4.
	 */
	double in[20];
	static const double out[4] = { 19.0, 0.0, 21.0, 19.0 };
	bnn_ood_metrics m;
	int i, rc;

	for (i = 0; i < 20; i++)
		in[i] = (double)(20 - i);
	rc = bnn_metrics_ood(in, 20, out, 4, &m, NULL);
	is_int(rc, BNN_OK, "ood m=20: succeeds");
	is_float(m.threshold95, 19.0, 0.0, "ood m=20: t95 = 19th smallest");
	is_float(m.fpr95, 0.75, 0.0, "ood m=20: fpr95 = 3/4");
	/* m = 19: ceil(18.05) = 19 - floor(19/20) = 19: t95 = the largest
	 * in score (in[1..19] = 19, ..., 1 -> 19); OOD <= 19: 3 of 4. */
	rc = bnn_metrics_ood(in + 1, 19, out, 4, &m, NULL);
	is_float(m.threshold95, 19.0, 0.0, "ood m=19: t95 = the largest");
	/* m = 2 (in 20, 19): need 2, t95 = 20; OOD <= 20: 19, 0, 19 */
	rc = bnn_metrics_ood(in, 2, out, 4, &m, NULL);
	is_float(m.fpr95, 0.75, 0.0, "ood m=2: t95 = 20, fpr95 = 3/4");
}

static void test_ood_extremes(void)
{
	static const double lo[2] = { 0.1, 0.2 }, hi[2] = { 0.5, 0.9 };
	static const double one[2] = { 1.0, 1.0 };
	static const double mzero = -0.0, pzero = 0.0;
	double in_inf[2], out_inf[1];
	bnn_ood_metrics m;
	int rc;

	/* Perfect: in 0.1, 0.2; OOD 0.5, 0.9.  Every OOD beats every in:
	 * auroc 1.  t95 = 0.2 (need 2 of 2), no OOD <= 0.2: fpr95 0.  At
	 * t = 0.2: TPR 1, FPR 0: detection error 0.  Both PR walks see all
	 * positives first at precision 1: AP 1. */
	rc = bnn_metrics_ood(lo, 2, hi, 2, &m, NULL);
	is_int(rc, BNN_OK, "ood perfect: succeeds");
	is_float(m.auroc, 1.0, 0.0, "ood perfect: auroc 1");
	is_float(m.fpr95, 0.0, 0.0, "ood perfect: fpr95 0");
	is_float(m.detection_error, 0.0, 0.0, "ood perfect: detection error 0");
	is_float(m.aupr_in, 1.0, 0.0, "ood perfect: aupr_in 1");
	is_float(m.aupr_out, 1.0, 0.0, "ood perfect: aupr_out 1");

	/* Reversed: in 0.5, 0.9; OOD 0.1, 0.2.  auroc 0.  t95 = 0.9, both
	 * OOD accepted: fpr95 1.  Thresholds: none 0.5; 0.1: ½ + ¼ = 0.75;
	 * 0.2: ½ + ½ = 1; 0.5: ¼ + ½ = 0.75; 0.9: 0 + ½ = 0.5 -> 0.5.
	 * AUPR-in (lowest first): 0.1, 0.2 add FPs only; 0.5: TP 1, FP 2,
	 * P 1/3, step ½ -> 1/6; 0.9: TP 2, FP 2, P ½, step ½ -> ¼; 5/12.
	 * AUPR-out (highest first) is the mirror image: 5/12. */
	rc = bnn_metrics_ood(hi, 2, lo, 2, &m, NULL);
	is_int(rc, BNN_OK, "ood reversed: succeeds");
	is_float(m.auroc, 0.0, 0.0, "ood reversed: auroc 0");
	is_float(m.fpr95, 1.0, 0.0, "ood reversed: fpr95 1");
	is_float(m.detection_error, 0.5, 0.0, "ood reversed: detection error ½");
	is_float(m.aupr_in, 5.0 / 12.0, TOL, "ood reversed: aupr_in 5/12");
	is_float(m.aupr_out, 5.0 / 12.0, TOL, "ood reversed: aupr_out 5/12");

	/* All tied: in 1, 1; OOD 1.  auroc ½; t95 = 1 accepts the OOD one:
	 * fpr95 1; detection error ½ (none: ½; t = 1: 0 + ½).  One PR step
	 * with everything in: AP = the positives' share, 2/3 and 1/3. */
	rc = bnn_metrics_ood(one, 2, one, 1, &m, NULL);
	is_float(m.auroc, 0.5, 0.0, "ood all tied: auroc ½");
	is_float(m.fpr95, 1.0, 0.0, "ood all tied: fpr95 1");
	is_float(m.detection_error, 0.5, 0.0, "ood all tied: detection error ½");
	is_float(m.aupr_in, 2.0 / 3.0, TOL, "ood all tied: aupr_in 2/3");
	is_float(m.aupr_out, 1.0 / 3.0, TOL, "ood all tied: aupr_out 1/3");

	/* -0.0 (in) and +0.0 (OOD) are one tie: as above with m = o = 1. */
	rc = bnn_metrics_ood(&mzero, 1, &pzero, 1, &m, NULL);
	ok(rc == BNN_OK && m.auroc == 0.5 && m.fpr95 == 1.0 && m.aupr_in == 0.5 &&
	           m.aupr_out == 0.5,
	   "ood: -0.0 and +0.0 tie (auroc ½, fpr95 1, AP ½ and ½)");

	/* Infinite scores rank like any other: in -inf, 0; OOD +inf is a
	 * perfect separation (t95 = 0). */
	in_inf[0] = -INFINITY;
	in_inf[1] = 0.0;
	out_inf[0] = INFINITY;
	rc = bnn_metrics_ood(in_inf, 2, out_inf, 1, &m, NULL);
	ok(rc == BNN_OK && m.auroc == 1.0 && m.fpr95 == 0.0 && m.threshold95 == 0.0 &&
	           m.detection_error == 0.0 && m.aupr_in == 1.0 && m.aupr_out == 1.0,
	   "ood: infinite scores are ranked, perfect separation");
}

static void test_ood_errors(void)
{
	double in[2] = { 0.1, 0.2 }, out[2] = { 0.3, 0.4 };
	bnn_ood_metrics m;
	bnn_err err;
	int rc;

	memset(&m, 0, sizeof m);
	m.auroc = 42.0;
	bnn_err_clear(&err);
	out[1] = nan("");
	rc = bnn_metrics_ood(in, 2, out, 2, &m, &err);
	is_int(rc, BNN_EINVAL, "ood: NaN score is EINVAL");
	is_str(err.message,
	       "bnn_metrics_ood: OOD example 1 (0-based): score "
	       "is NaN",
	       "ood: NaN message names the OOD example");
	is_float(m.auroc, 42.0, 0.0, "ood: out untouched on failure");
	out[1] = 0.4;
	in[0] = nan("");
	rc = bnn_metrics_ood(in, 2, out, 2, &m, &err);
	is_str(err.message,
	       "bnn_metrics_ood: in-distribution example 0 "
	       "(0-based): score is NaN",
	       "ood: NaN message (in)");
	in[0] = 0.1;
	rc = bnn_metrics_ood(in, 0, out, 2, &m, &err);
	is_int(rc, BNN_EINVAL, "ood: n_in = 0 is EINVAL");
	is_str(err.message,
	       "bnn_metrics_ood: n_in is 0, need at least 1 "
	       "in-distribution example",
	       "ood: n_in = 0 message");
	rc = bnn_metrics_ood(in, 2, out, -1, &m, &err);
	is_str(err.message,
	       "bnn_metrics_ood: n_out is -1, need at least 1 OOD "
	       "example",
	       "ood: n_out < 0 message");
	rc = bnn_metrics_ood(in, 2, NULL, 2, &m, &err);
	is_str(err.message, "bnn_metrics_ood: score_out is NULL", "ood: NULL score_out message");
	rc = bnn_metrics_ood(in, 2, out, 2, NULL, &err);
	is_int(rc, BNN_EINVAL, "ood: NULL out is EINVAL");
}

/* ---- charts ------------------------------------------------------------- */

/* The test's scratch directory (mkdtemp) and a path in it. */
static char tmpdir[512];
#define PATH_BUF 1024 /* room for tmpdir, "/" and a 255-byte name */

static const char *tmp_path(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", tmpdir, name);
	return buf;
}

/* The contents of a file (malloc'd, NUL-terminated), or NULL. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long len;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)len + 1)) != NULL) {
		if (fread(buf, 1, (size_t)len, f) != (size_t)len) {
			free(buf);
			buf = NULL;
		} else {
			buf[len] = '\0';
		}
	}
	fclose(f);
	return buf;
}

/* Occurrences of needle in s. */
static int count(const char *s, const char *needle)
{
	int n = 0;

	if (s == NULL)
		return -1;
	while ((s = strstr(s, needle)) != NULL) {
		n++;
		s += strlen(needle);
	}
	return n;
}

/* Does the document look like a standalone SVG: "<svg" first, "</svg>\n"
 * last, and as many '<' as '>' (no stray markup from unescaped text)? */
static int svg_shaped(const char *s)
{
	size_t len;

	if (s == NULL)
		return 0;
	len = strlen(s);
	return strncmp(s, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39) == 0 && len > 7 &&
	       strcmp(s + len - 7, "</svg>\n") == 0 && count(s, "<") == count(s, ">");
}

static int file_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* One expectation about an SVG: how often needle occurs in it. */
struct svg_count {
	const char *needle; /* the text looked for */
	int want;           /* how often */
	const char *what;   /* the test's name */
};

/* One test per row of checks: the count of its needle in svg. */
static void svg_counts(const char *svg, const struct svg_count *checks, int n)
{
	int i;

	for (i = 0; i < n; i++)
		is_int(count(svg, checks[i].needle), checks[i].want, "%s", checks[i].what);
}
#define SVG_COUNTS(svg, checks) svg_counts(svg, checks, (int)(sizeof checks / sizeof checks[0]))

static void test_plot_reliability(void)
{
	/*
	 * 4 bins: edges b/4.  Bin 2 is non-empty with accuracy 0, so its bar
	 * has height 0 and is not drawn; bin 0 is empty.  Bars drawn: bins 1
	 * and 3.  Other rects: the clip path, the background, the frame and
	 * the legend swatch of the bars: 2 + 4 = 6 "<rect".  One polyline:
	 * the diagonal.  2/3 prints as 0.6666666666666666 (16 digits read
	 * back as the same double).
	 */
	static const bnn_bin bins[4] = {
		{ 0, 0.0, 0.0 },
		{ 2, 0.375, 0.5 },
		{ 1, 0.625, 0.0 },
		{ 3, 0.875, 2.0 / 3.0 },
	};
	static const char want_csv[] = "bin_lower,bin_upper,count,confidence,accuracy\n"
	                               "0,0.25,0,0,0\n"
	                               "0.25,0.5,2,0.375,0.5\n"
	                               "0.5,0.75,1,0.625,0\n"
	                               "0.75,1,3,0.875,0.6666666666666666\n";
	static const struct svg_count rel_counts[] = {
		{ "<rect class=\"bar\"", 2, "reliability: 2 bars (bins 1 and 3)" },
		{ "<rect", 6, "reliability: 6 rects in all" },
		{ "<polyline", 1, "reliability: 1 line (diagonal)" },
		{ "<title>Reliability &amp; &lt;calibration&gt;</title>", 1,
		  "reliability: title escaped for XML" },
	};
	char svg_path[PATH_BUF], csv_path[PATH_BUF];
	char *svg, *csv;
	bnn_err err;
	int rc;

	tmp_path(svg_path, sizeof svg_path, "rel.svg");
	tmp_path(csv_path, sizeof csv_path, "rel-data.csv");
	bnn_err_clear(&err);
	rc = bnn_plot_reliability(svg_path, csv_path, bins, 4, "Reliability & <calibration>", &err);
	is_int(rc, BNN_OK, "reliability: succeeds");
	svg = slurp(svg_path);
	csv = slurp(csv_path);
	ok(svg_shaped(svg), "reliability: a standalone SVG document");
	SVG_COUNTS(svg, rel_counts);
	ok(count(svg, ">confidence</text>") == 1 && count(svg, ">accuracy</text>") == 2,
	   "reliability: axis labels (accuracy also in the legend)");
	is_str(csv, want_csv, "reliability: CSV exactly");
	free(svg);
	free(csv);
}

static void test_plot_histograms(void)
{
	/*
	 * range auto = [0, 1] (smallest and largest finite value), 2 bins:
	 * [0, 0.5) and [0.5, 1].  "in": 0, 0.1, 0.2 in bin 0, 0.9 in bin 1:
	 * 3/4, 1/4.  "out, shifted": NaN skipped (its legend says so), 0.5 -> floor(0.5 * 2) = 1,
	 * 1.0 -> floor(2) = 2, the last bin: 0 and 2/2.  Bars: 2 + 1 (the
	 * empty bin draws nothing).  The name with a comma is quoted in the
	 * CSV; the one with & and < is escaped in the SVG.
	 */
	static const double in[4] = { 0.0, 0.1, 0.2, 0.9 };
	double out[3] = { 0.5, 1.0, 0.0 };
	static const char want_csv[] = "series,bin_lower,bin_upper,count,fraction\n"
	                               "in & <d>,0,0.5,3,0.75\n"
	                               "in & <d>,0.5,1,1,0.25\n"
	                               "\"out, shifted\",0,0.5,0,0\n"
	                               "\"out, shifted\",0.5,1,2,1\n";
	/* A given range [0, 0.5] with one bin: "in" has 3 of its 4 values
	 * in range: 3/4 (0.9 is counted in the total, in no bin). */
	static const char want_range_csv[] = "series,bin_lower,bin_upper,count,fraction\n"
	                                     "in & <d>,0,0.5,3,0.75\n";
	static const double range[2] = { 0.0, 0.5 };
	static const bnn_plot_histogram_options two_bins = { 2, NULL, "predictive entropy",
		                                             "entropy \xff" };
	static const bnn_plot_histogram_options one_bin = { 1, range, NULL, NULL };
	static const struct svg_count hist_counts[] = {
		{ "<rect class=\"bar\"", 3, "histograms: 3 bars (an empty bin draws none)" },
		{ "<rect class=\"swatch\"", 2, "histograms: 2 legend entries" },
		{ ">in &amp; &lt;d&gt;</text>", 1,
		  "histograms: series name escaped in the legend" },
		{ ">out, shifted (1 of 3 not finite, not shown)</text>", 1,
		  "histograms: the legend counts the NaN skipped" },
		{ "<title>entropy ?</title>", 1,
		  "histograms: a byte that is not UTF-8 becomes '?'" },
	};
	bnn_plot_values series[2];
	char svg_path[PATH_BUF], csv_path[PATH_BUF];
	char *svg, *csv;
	bnn_err err;
	int rc;

	out[2] = nan("");
	series[0].name = "in & <d>";
	series[0].values = in;
	series[0].n = 4;
	series[1].name = "out, shifted";
	series[1].values = out;
	series[1].n = 3;
	tmp_path(svg_path, sizeof svg_path, "hist.svg");
	bnn_err_clear(&err);
	/* path_csv NULL: hist.svg -> hist.csv */
	rc = bnn_plot_histograms(svg_path, NULL, series, 2, &two_bins, &err);
	is_int(rc, BNN_OK, "histograms: succeeds");
	svg = slurp(svg_path);
	csv = slurp(tmp_path(csv_path, sizeof csv_path, "hist.csv"));
	ok(svg_shaped(svg), "histograms: a standalone SVG document");
	SVG_COUNTS(svg, hist_counts);
	is_str(csv, want_csv, "histograms: CSV exactly (path derived)");
	free(svg);
	free(csv);

	rc = bnn_plot_histograms(svg_path, csv_path, series, 1, &one_bin, &err);
	is_int(rc, BNN_OK, "histograms, given range: succeeds");
	csv = slurp(csv_path);
	is_str(csv, want_range_csv, "histograms, given range: CSV exactly");
	free(csv);
}

static void test_plot_curves(void)
{
	/*
	 * "train": points, the NaN one skipped (2 markers, 2 CSV rows);
	 * "mean": a line with a band (1 polyline, 1 band path).  The CSV
	 * leaves lower/upper empty for the series without a band.
	 */
	static const double x[3] = { 0.0, 1.0, 2.0 };
	static const double y[3] = { 1.0, 2.0, 3.0 };
	static const double lower[3] = { 0.0, 1.0, 2.0 };
	static const double upper[3] = { 2.0, 3.0, 4.0 };
	double ty[3] = { 1.0, 0.0, 3.0 };
	static const char want_csv[] = "series,x,y,lower,upper\n"
	                               "train,0,1,,\n"
	                               "train,2,3,,\n"
	                               "mean,0,1,0,2\n"
	                               "mean,1,2,1,3\n"
	                               "mean,2,3,2,4\n";
	static const bnn_plot_curves_options text = { "toy", "x", "y" };
	static const struct svg_count curve_counts[] = {
		{ "<circle class=\"point\"", 2, "curves: 2 markers (NaN skipped)" },
		{ "<polyline class=\"line\"", 1, "curves: 1 line" },
		{ "<path class=\"band\"", 1, "curves: 1 band" },
		{ "<rect class=\"bar\"", 0, "curves: no bars" },
		{ "<title>toy</title>", 1, "curves: the title" },
	};
	bnn_plot_curve s[2];
	char svg_path[PATH_BUF], csv_path[PATH_BUF];
	char *svg, *csv;
	bnn_err err;
	int rc;

	ty[1] = nan("");
	memset(s, 0, sizeof s);
	s[0].name = "train";
	s[0].n = 3;
	s[0].x = x;
	s[0].y = ty;
	s[0].style = BNN_PLOT_POINTS;
	s[1].name = "mean";
	s[1].n = 3;
	s[1].x = x;
	s[1].y = y;
	s[1].lower = lower;
	s[1].upper = upper;
	s[1].style = BNN_PLOT_LINE;
	tmp_path(svg_path, sizeof svg_path, "curves.svg");
	tmp_path(csv_path, sizeof csv_path, "curves.csv");
	bnn_err_clear(&err);
	rc = bnn_plot_curves(svg_path, csv_path, s, 2, &text, &err);
	is_int(rc, BNN_OK, "curves: succeeds");
	svg = slurp(svg_path);
	csv = slurp(csv_path);
	ok(svg_shaped(svg), "curves: a standalone SVG document");
	SVG_COUNTS(svg, curve_counts);
	is_str(csv, want_csv, "curves: CSV exactly");
	free(svg);
	free(csv);
}

static void test_plot_errors(void)
{
	static const double x[1] = { 0.0 };
	static const bnn_bin empty[2] = { { 0, 0.0, 0.0 }, { 0, 0.0, 0.0 } };
	static const bnn_bin one[1] = { { 1, 0.5, 1.0 } };
	static const double bad_range[2] = { 1.0, 1.0 };
	static const bnn_plot_histogram_options ten_bins = { 10, NULL, NULL, NULL };
	static const bnn_plot_histogram_options bad_bins = { 10, bad_range, NULL, NULL };
	double nan1[1];
	bnn_plot_curve s;
	bnn_plot_values v;
	char svg_path[PATH_BUF], csv_path[PATH_BUF], want[2 * PATH_BUF];
	bnn_err err;
	int rc;

	nan1[0] = nan("");
	tmp_path(svg_path, sizeof svg_path, "bad.svg");
	tmp_path(csv_path, sizeof csv_path, "bad.csv");
	memset(&s, 0, sizeof s);
	s.name = "train";
	s.x = x;
	s.y = x;
	bnn_err_clear(&err);
	rc = bnn_plot_curves(svg_path, csv_path, &s, 1, NULL, &err);
	is_int(rc, BNN_EINVAL, "curves: an empty series is EINVAL");
	is_str(err.message,
	       "bnn_plot_curves: series 0 (0-based, \"train\") "
	       "is empty",
	       "curves: empty series message");
	ok(!file_exists(svg_path) && !file_exists(csv_path), "curves: nothing written on EINVAL");
	s.n = 1;
	s.y = nan1;
	rc = bnn_plot_curves(svg_path, csv_path, &s, 1, NULL, &err);
	is_str(err.message, "bnn_plot_curves: no finite point to plot",
	       "curves: only NaN is EINVAL");
	s.y = x;
	s.lower = x;
	rc = bnn_plot_curves(svg_path, csv_path, &s, 1, NULL, &err);
	is_str(err.message,
	       "bnn_plot_curves: series 0 (0-based, \"train\"): "
	       "lower and upper must both be given or both NULL",
	       "curves: half a band message");
	s.lower = NULL;
	rc = bnn_plot_curves(svg_path, csv_path, &s, 0, NULL, &err);
	is_str(err.message,
	       "bnn_plot_curves: nseries is 0, need at least 1 "
	       "series",
	       "curves: no series message");

	rc = bnn_plot_reliability(svg_path, csv_path, empty, 2, NULL, &err);
	is_int(rc, BNN_EINVAL, "reliability: all bins empty is EINVAL");
	is_str(err.message,
	       "bnn_plot_reliability: all 2 bins are empty, "
	       "nothing to plot",
	       "reliability: all empty message");

	v.name = "in";
	v.values = x;
	v.n = 0;
	rc = bnn_plot_histograms(svg_path, csv_path, &v, 1, &ten_bins, &err);
	is_str(err.message,
	       "bnn_plot_histograms: series 0 (0-based, \"in\") "
	       "is empty",
	       "histograms: empty series message");
	v.n = 1;
	rc = bnn_plot_histograms(svg_path, csv_path, &v, 1, &bad_bins, &err);
	is_str(err.message,
	       "bnn_plot_histograms: range [1, 1] is not finite "
	       "with lower < upper",
	       "histograms: empty range message");
	rc = bnn_plot_histograms(svg_path, csv_path, &v, 1, NULL, &err);
	is_int(rc, BNN_EINVAL, "histograms: no options is EINVAL");
	is_str(err.message, "bnn_plot_histograms: options is NULL",
	       "histograms: no options message");
	ok(!file_exists(svg_path) && !file_exists(csv_path),
	   "charts: no file written by any of the failures above");

	/* An unwritable place: a directory that does not exist. */
	tmp_path(svg_path, sizeof svg_path, "missing/rel.svg");
	rc = bnn_plot_reliability(svg_path, NULL, one, 1, NULL, &err);
	is_int(rc, BNN_EIO, "reliability: missing directory is EIO");
	snprintf(want, sizeof want,
	         "cannot write plot %s: No such file or "
	         "directory",
	         svg_path);
	is_str(err.message, want, "reliability: the message names the path");
}

/* Remove the scratch directory; every file in it must be one of ours (no
 * temporary file of bnn_file_replace() left behind). */
static void cleanup(void)
{
	static const char *const ours[] = {
		"rel.svg", "rel-data.csv", "hist.svg", "hist.csv", "curves.svg", "curves.csv",
	};
	char path[PATH_BUF];
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	int stray = 0, seen = 0;
	size_t i;

	if (d == NULL) {
		tap_diag("cannot open %s", tmpdir);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		int mine = 0;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		for (i = 0; i < sizeof ours / sizeof ours[0]; i++)
			if (strcmp(e->d_name, ours[i]) == 0)
				mine = 1;
		if (mine)
			seen++;
		else
			stray++;
		unlink(tmp_path(path, sizeof path, e->d_name));
	}
	closedir(d);
	is_int(seen, 6, "charts: the 6 files written are there");
	is_int(stray, 0, "charts: no temporary or stray file left");
	if (rmdir(tmpdir) != 0)
		tap_diag("cannot remove %s", tmpdir);
}

int main(void)
{
	const char *base = getenv("TMPDIR");

	test_entropy();
	test_entropy_errors();
	test_entropy_split();
	test_energy();
	test_ood_scores();
	test_ood_ties();
	test_ood_fpr95();
	test_ood_extremes();
	test_ood_errors();

	if (base == NULL || base[0] == '\0')
		base = "/tmp";
	snprintf(tmpdir, sizeof tmpdir, "%s/runtime_ood.XXXXXX", base);
	if (mkdtemp(tmpdir) == NULL)
		tap_bail_out("cannot create a directory under %s", base);
	test_plot_reliability();
	test_plot_histograms();
	test_plot_curves();
	test_plot_errors();
	cleanup();
	return tap_done();
}
