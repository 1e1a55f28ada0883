/*
 * runtime_metrics.c: TAP tests of libbnn's evaluation metrics
 * (runtime/include/bnn_metrics.h; metrics_classification.c, metrics_auroc.c,
 * metrics_regression.c).  Every expected value is worked out by hand in
 * the comment next to its check: one 4-example, 3-class case through every
 * classification metric, argmax ties, confidences on bin edges and float
 * confidences near them, empty bins, ECE with one bin, MCE, AUROC with
 * ties, with one class missing and with perfect separation, the NLL floor,
 * the Brier score of one-hot and uniform predictions, a 3-example, 2-output
 * regression case, the argument errors with their exact messages, and
 * long inputs: the AUROC's parallel sort against the pairwise count, and
 * every metric the same bits with 1, 2 and 3 threads.
 * The probabilities are chosen to be exact in float (multiples of 1/16),
 * so most checks use a tolerance of 1e-15 or none at all.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bnn.h"
#include "tap.h"

#define TOL 1e-15

/*
 * The 4-example, 3-class case used throughout (also the worked example of
 * docs/metrics.md):
 *
 *   i  p_i                    y  yhat  c_i     right  p_{i,y}
 *   0  0.5    0.25  0.25      0  0     0.5     yes    0.5
 *   1  0.125  0.75  0.125     1  1     0.75    yes    0.75
 *   2  0.25   0.25  0.5       0  2     0.5     no     0.25
 *   3  0.0625 0.875 0.0625    2  1     0.875   no     0.0625
 */
static const float four_probs[4 * 3] = {
	0.5f, 0.25f, 0.25f, 0.125f, 0.75f, 0.125f, 0.25f, 0.25f, 0.5f, 0.0625f, 0.875f, 0.0625f,
};
static const int four_labels[4] = { 0, 1, 0, 2 };

static void test_four_examples(void)
{
	bnn_class_metrics m;
	bnn_err err;
	int rc;

	bnn_err_clear(&err);
	rc = bnn_metrics_classification(four_probs, four_labels, 4, 3, 2, &m, &err);
	is_int(rc, BNN_OK, "4x3: succeeds");
	is_int(err.code, BNN_OK, "4x3: err untouched on success");
	is_int(m.n, 4, "4x3: n = 4");
	/* examples 0 and 1 right, 2 and 3 wrong: 2/4 */
	is_float(m.accuracy, 0.5, 0.0, "4x3: accuracy = 2/4");
	/* -(log 0.5 + log 0.75 + log 0.25 + log 0.0625)/4
	 * = (ln 2 + ln 4 - ln 3 + 2 ln 2 + 4 ln 2)/4 = (9 ln 2 - ln 3)/4
	 * = (6.238324625039508 - 1.0986122886681098)/4 = 1.2849280840928494 */
	is_float(m.nll, 1.2849280840928494, 1e-15, "4x3: nll = (9 ln2 - ln3)/4");
	/* ex 0: 0.25 + 0.0625 + 0.0625            = 0.375
	 * ex 1: 0.015625 + 0.0625 + 0.015625      = 0.09375
	 * ex 2: 0.5625 + 0.0625 + 0.25            = 0.875
	 * ex 3: 0.00390625 + 0.765625 + 0.87890625 = 1.6484375
	 * sum 2.9921875 / 4 = 0.748046875 (all exact in binary) */
	is_float(m.brier, 0.748046875, 0.0, "4x3: brier = 2.9921875/4");
	/* 2 bins: (0, 0.5] holds ex 0 and 2 (0.5 sits on the edge, so bin 0):
	 * conf 0.5, acc 1/2, gap 0.  (0.5, 1] holds ex 1 and 3: conf
	 * (0.75 + 0.875)/2 = 0.8125, acc 1/2, gap 0.3125.
	 * ece = 2/4 * 0 + 2/4 * 0.3125 = 0.15625, mce = 0.3125 */
	is_float(m.ece, 0.15625, TOL, "4x3, 2 bins: ece = 0.15625");
	is_float(m.mce, 0.3125, TOL, "4x3, 2 bins: mce = 0.3125");
	/* Positives (wrong) score 1 - c: ex 2 0.5, ex 3 0.125; negatives:
	 * ex 0 0.5, ex 1 0.25.  Pairs (pos, neg): (2,0) tie 1/2, (2,1) 1,
	 * (3,0) 0, (3,1) 0; AUROC = 1.5/4 = 0.375 */
	is_float(m.auroc, 0.375, 0.0, "4x3: auroc = 1.5/4 (one tied pair)");
	is_int(m.auroc_defined, 1, "4x3: auroc defined");

	/* 4 bins, edges 0.25 0.5 0.75: bin 0 empty; bin 1 (0.25, 0.5]: ex 0,
	 * 2, gap 0; bin 2 (0.5, 0.75]: ex 1 (0.75 on the edge), conf 0.75,
	 * acc 1, gap 0.25; bin 3: ex 3, conf 0.875, acc 0, gap 0.875.
	 * ece = 1/4 * 0.25 + 1/4 * 0.875 = 0.28125, mce = 0.875 */
	rc = bnn_metrics_classification(four_probs, four_labels, 4, 3, 4, &m, NULL);
	is_int(rc, BNN_OK, "4x3, 4 bins: succeeds");
	is_float(m.ece, 0.28125, TOL, "4x3, 4 bins: ece = 0.28125");
	is_float(m.mce, 0.875, TOL, "4x3, 4 bins: mce = 0.875 (empty bin 0 ignored)");

	/* 20 bins: 0.5 in bin 9, 0.75 in bin 14, 0.875 in bin 17; the same
	 * groups as with 4 bins, so ece = 0.28125, mce = 0.875 */
	rc = bnn_metrics_classification(four_probs, four_labels, 4, 3, BNN_DEFAULT_BINS, &m, NULL);
	is_int(rc, BNN_OK, "4x3, 20 bins: succeeds");
	is_float(m.ece, 0.28125, TOL, "4x3, 20 bins: ece = 0.28125");
	is_float(m.mce, 0.875, TOL, "4x3, 20 bins: mce = 0.875");

	/* 1 bin: ece = |accuracy - mean confidence|
	 * = |0.5 - (0.5 + 0.75 + 0.5 + 0.875)/4| = |0.5 - 0.65625| = 0.15625,
	 * and mce is the same single gap */
	rc = bnn_metrics_classification(four_probs, four_labels, 4, 3, 1, &m, NULL);
	is_int(rc, BNN_OK, "4x3, 1 bin: succeeds");
	is_float(m.ece, 0.15625, TOL, "4x3, 1 bin: ece = |0.5 - 0.65625|");
	is_float(m.mce, 0.15625, TOL, "4x3, 1 bin: mce = ece");
	is_float(m.accuracy, 0.5, 0.0, "4x3, 1 bin: bins do not change accuracy");
	is_float(m.auroc, 0.375, 0.0, "4x3, 1 bin: nor the auroc");
}

static void test_reliability(void)
{
	bnn_bin bin[4];
	int rc;

	/* 4 bins, as in test_four_examples: bin 0 empty, bin 1 {ex 0, 2},
	 * bin 2 {ex 1}, bin 3 {ex 3} */
	rc = bnn_metrics_reliability(four_probs, four_labels, 4, 3, 4, bin, NULL);
	is_int(rc, BNN_OK, "reliability 4 bins: succeeds");
	is_int(bin[0].count, 0, "bin 0 of 4 is empty");
	is_float(bin[0].conf, 0.0, 0.0, "empty bin: conf 0");
	is_float(bin[0].acc, 0.0, 0.0, "empty bin: acc 0");
	is_int(bin[1].count, 2, "bin 1 of 4 holds the two 0.5s");
	is_float(bin[1].conf, 0.5, 0.0, "bin 1: conf (0.5 + 0.5)/2");
	is_float(bin[1].acc, 0.5, 0.0, "bin 1: acc 1/2");
	is_int(bin[2].count, 1, "bin 2 of 4 holds 0.75 (on its upper edge)");
	is_float(bin[2].conf, 0.75, 0.0, "bin 2: conf 0.75");
	is_float(bin[2].acc, 1.0, 0.0, "bin 2: acc 1");
	is_int(bin[3].count, 1, "bin 3 of 4 holds 0.875");
	is_float(bin[3].conf, 0.875, 0.0, "bin 3: conf 0.875");
	is_float(bin[3].acc, 0.0, 0.0, "bin 3: acc 0");

	/* 2 bins: 0.5 is exactly on the edge 1/2, so it is in bin 0 */
	rc = bnn_metrics_reliability(four_probs, four_labels, 4, 3, 2, bin, NULL);
	is_int(rc, BNN_OK, "reliability 2 bins: succeeds");
	is_int(bin[0].count, 2, "c = 0.5 with 2 bins goes in bin 0 (b/B < c <= (b+1)/B)");
	is_int(bin[1].count, 2, "bin 1 of 2 holds 0.75 and 0.875");
	is_float(bin[1].conf, 0.8125, 0.0, "bin 1 of 2: conf (0.75 + 0.875)/2");
	is_float(bin[1].acc, 0.5, 0.0, "bin 1 of 2: acc 1/2");
}

/* Argmax ties go to the lowest index; ECE/MCE of a tie on an edge. */
static void test_argmax_ties(void)
{
	static const float tie01[3] = { 0.375f, 0.375f, 0.25f };
	static const float tie12[3] = { 0.25f, 0.375f, 0.375f };
	static const float flat[4] = { 0.25f, 0.25f, 0.25f, 0.25f };
	/* ex 0: yhat 0, c 0.75, right; ex 1: 0.5 = 0.5, yhat 0, wrong */
	static const float two[2 * 2] = { 0.75f, 0.25f, 0.5f, 0.5f };
	static const int two_labels[2] = { 0, 1 };
	bnn_class_metrics m;

	/* one example: its probabilities, the label, the accuracy */
	static const struct {
		const float *p; /* k probabilities */
		int k;          /* classes */
		int label;      /* the true class */
		double acc;     /* 1: the argmax is the label */
		const char *what;
	} ties[] = {
		/* tie01: classes 0 and 1 tie, class 0 wins */
		{ tie01, 3, 0, 1.0, "tie of 0 and 1: label 0 is right" },
		{ tie01, 3, 1, 0.0, "tie of 0 and 1: label 1 is wrong" },
		/* tie12: classes 1 and 2 tie, class 1 wins */
		{ tie12, 3, 1, 1.0, "tie of 1 and 2: label 1 is right" },
		{ tie12, 3, 2, 0.0, "tie of 1 and 2: label 2 is wrong" },
		/* four-way tie: class 0 wins */
		{ flat, 4, 0, 1.0, "four-way tie: label 0 is right" },
		{ flat, 4, 3, 0.0, "four-way tie: label 3 is wrong" },
	};
	int i;

	for (i = 0; i < (int)(sizeof ties / sizeof ties[0]); i++) {
		bnn_metrics_classification(ties[i].p, &ties[i].label, 1, ties[i].k, 2, &m, NULL);
		is_float(m.accuracy, ties[i].acc, 0.0, "%s", ties[i].what);
	}

	/* two: accuracy 1/2, mean confidence (0.75 + 0.5)/2 = 0.625.
	 * 1 bin: ece = |0.5 - 0.625| = 0.125.
	 * 2 bins: bin 0 (0, 0.5] holds ex 1 (on the edge): conf 0.5, acc 0,
	 * gap 0.5; bin 1 holds ex 0: conf 0.75, acc 1, gap 0.25.
	 * ece = 1/2 * 0.5 + 1/2 * 0.25 = 0.375, mce = 0.5 */
	bnn_metrics_classification(two, two_labels, 2, 2, 1, &m, NULL);
	is_float(m.accuracy, 0.5, 0.0, "2x2 with a tie: accuracy 1/2");
	is_float(m.ece, 0.125, TOL, "2x2, 1 bin: ece = |0.5 - 0.625|");
	bnn_metrics_classification(two, two_labels, 2, 2, 2, &m, NULL);
	is_float(m.ece, 0.375, TOL, "2x2, 2 bins: ece = 0.25 + 0.125");
	is_float(m.mce, 0.5, TOL, "2x2, 2 bins: mce = 0.5 (the edge bin)");
	/* positives: ex 1 (1 - c = 0.5); negatives: ex 0 (0.25): 1/1 */
	is_float(m.auroc, 1.0, 0.0, "2x2: the wrong example is less confident");
}

/* Confidences exactly on an edge, at 0 and at 1. */
static void test_edges(void)
{
	static const float zero[2] = { 0.0f, 0.0f }; /* not a distribution */
	static const float one[2] = { 1.0f, 0.0f };
	static const float q3[4] = { 0.75f, 0.25f, 0.0f, 0.0f };
	bnn_bin bin[4];
	int y = 0;

	bnn_metrics_reliability(zero, &y, 1, 2, 4, bin, NULL);
	is_int(bin[0].count, 1, "c = 0 goes in bin 0");
	bnn_metrics_reliability(one, &y, 1, 2, 4, bin, NULL);
	is_int(bin[3].count, 1, "c = 1 goes in the last bin (4 bins)");
	bnn_metrics_reliability(one, &y, 1, 2, 1, bin, NULL);
	is_int(bin[0].count, 1, "c = 1 goes in the only bin (1 bin)");
	/* 0.75 = 3/4 is the upper edge of bin 2 of 4 */
	bnn_metrics_reliability(q3, &y, 1, 4, 4, bin, NULL);
	is_int(bin[2].count, 1, "c = 0.75 with 4 bins goes in bin 2");
	is_int(bin[3].count, 0, "... not bin 3");
	/* 0.75 with 3 bins: 2/3 < 0.75 <= 1, bin 2 */
	bnn_metrics_reliability(q3, &y, 1, 4, 3, bin, NULL);
	is_int(bin[2].count, 1, "c = 0.75 with 3 bins goes in bin 2");
}

/*
 * Float confidences c = 0.05f * j for j = 1..20, binned into 20 bins.  The
 * float value is binned as given (exactly), not the decimal j/20 it
 * approximates.  Worked out from the exact float values:
 *
 *   j  c (float, exactly)   vs j/20  bin    j  c (float)            bin
 *   1  0.0500000007450581   above    1      11 0.5500000119209290  11
 *   2  0.1000000014901161   above    2      12 0.6000000238418579  12
 *   3  0.1500000059604645   above    3      13 0.6500000357627869  13
 *   4  0.2000000029802322   above    4      14 0.6999999880790710  13
 *   5  0.25                 equal    4      15 0.75                14
 *   6  0.3000000119209290   above    6      16 0.8000000119209290  16
 *   7  0.3499999940395355   below    6      17 0.8500000238418579  17
 *   8  0.4000000059604645   above    8      18 0.9000000357627869  18
 *   9  0.4500000178813934   above    9      19 0.9499999880790710  18
 *  10  0.5                  equal    9      20 1.0                 19
 *
 * (a value above j/20 is in bin j, equal or below in bin j - 1).  So bins
 * 0, 5, 7, 10 and 15 are empty and 4, 6, 9, 13 and 18 hold two each.
 * Computing c*20 in float instead would round 0.05f*20 to 1 and put j = 1
 * in bin 0; floor(c*20) would put 0.25 in bin 5.
 */
static void test_float_confidences(void)
{
	static const long want[20] = {
		0, 1, 1, 1, 2, 0, 2, 0, 1, 2, 0, 1, 1, 2, 1, 0, 1, 1, 2, 1,
	};
	float probs[20 * 21];
	int labels[20];
	bnn_bin bin[20];
	int i, j, b, rc;

	for (i = 0; i < 20; i++) {
		float c = 0.05f * (float)(i + 1);

		probs[i * 21] = c;
		for (j = 1; j < 21; j++) /* (1 - c)/20 < c for c >= 0.05 */
			probs[i * 21 + j] = (1.0f - c) / 20.0f;
		labels[i] = 0;
	}
	rc = bnn_metrics_reliability(probs, labels, 20, 21, 20, bin, NULL);
	is_int(rc, BNN_OK, "0.05f*j in 20 bins: succeeds");
	for (b = 0; b < 20; b++)
		is_int(bin[b].count, want[b], "0.05f*j in 20 bins: bin %d", b);
	/* bin 4 holds 0.05f*4 and 0.25: mean (0.2000000029802322 + 0.25)/2 */
	is_float(bin[4].conf, (0.2000000029802322 + 0.25) / 2, 1e-16,
	         "0.05f*j: bin 4's mean confidence uses the float values");
	is_float(bin[4].acc, 1.0, 0.0, "0.05f*j: every label is class 0");
}

static void test_auroc(void)
{
	/* positives {0.4, 0.8}, negatives {0.1, 0.4}: pairs (0.4,0.1) 1,
	 * (0.4,0.4) 1/2, (0.8,0.1) 1, (0.8,0.4) 1: 3.5/4 = 0.875 */
	static const double s1[4] = { 0.1, 0.4, 0.4, 0.8 };
	static const int p1[4] = { 0, 1, 0, 1 };
	/* positives {2, 2}, negatives {1, 2}: each positive 1 + 1/2:
	 * 3/4 = 0.75 */
	static const double s2[4] = { 2.0, 1.0, 2.0, 2.0 };
	static const int p2[4] = { 1, 0, 0, 1 };
	/* one positive and one negative, tied: 1/2 */
	static const double s3[2] = { 0.5, 0.5 };
	static const int p3[2] = { 1, 0 };
	/* every positive above every negative */
	static const double s4[5] = { 0.9, 0.1, 0.8, 0.2, 0.3 };
	static const int p4[5] = { 1, 0, 1, 0, 0 };
	/* the same with every label flipped: every positive below: 0 */
	static const int p4r[5] = { 0, 1, 0, 1, 1 };
	/* positive[] is nonzero, not only 1; -0.0 ties with +0.0: 1/2 */
	static const double s5[2] = { -0.0, 0.0 };
	static const int p5[2] = { 7, 0 };
	static const double nan_scores[3] = { 0.1, NAN, 0.2 };
	double auc = -1.0;
	int defined = -1, rc;
	bnn_err err;

	rc = bnn_auroc(s1, p1, 4, &auc, &defined, NULL);
	is_int(rc, BNN_OK, "auroc: succeeds");
	is_float(auc, 0.875, 0.0, "auroc with one tied pair = 3.5/4");
	is_int(defined, 1, "auroc: defined");
	bnn_auroc(s2, p2, 4, &auc, &defined, NULL);
	is_float(auc, 0.75, 0.0, "auroc with two tied pairs = 3/4");
	bnn_auroc(s3, p3, 2, &auc, &defined, NULL);
	is_float(auc, 0.5, 0.0, "auroc of one tied pair = 1/2");
	bnn_auroc(s4, p4, 5, &auc, &defined, NULL);
	is_float(auc, 1.0, 0.0, "auroc, perfect separation = 1");
	bnn_auroc(s4, p4r, 5, &auc, &defined, NULL);
	is_float(auc, 0.0, 0.0, "auroc, reversed separation = 0");
	bnn_auroc(s5, p5, 2, &auc, &defined, NULL);
	is_float(auc, 0.5, 0.0, "auroc: -0.0 ties with +0.0, positive = 7");

	/* all positive, all negative: undefined, 0.5 and the flag cleared */
	defined = -1;
	rc = bnn_auroc(s1, p4 + 0, 1, &auc, &defined, NULL);
	is_int(rc, BNN_OK, "auroc, positives only: succeeds");
	is_float(auc, 0.5, 0.0, "auroc, positives only = 0.5");
	is_int(defined, 0, "auroc, positives only: undefined");
	defined = -1;
	bnn_auroc(s1, p1, 1, &auc, &defined, NULL);
	is_float(auc, 0.5, 0.0, "auroc, negatives only = 0.5");
	is_int(defined, 0, "auroc, negatives only: undefined");
	rc = bnn_auroc(s1, p1, 4, &auc, NULL, NULL);
	ok(rc == BNN_OK && auc == 0.875, "auroc: defined may be NULL");

	bnn_err_clear(&err);
	auc = -1.0;
	rc = bnn_auroc(nan_scores, p1, 3, &auc, &defined, &err);
	is_int(rc, BNN_EINVAL, "auroc: a NaN score is rejected");
	is_str(err.message, "bnn_auroc: example 1 (0-based): score is NaN",
	       "auroc: the message names the example");
	is_float(auc, -1.0, 0.0, "auroc: *auc untouched on failure");
	rc = bnn_auroc(s1, p1, 0, &auc, &defined, &err);
	is_int(rc, BNN_EINVAL, "auroc: n = 0 is rejected");
	is_str(err.message, "bnn_auroc: n is 0, need at least 1 example", "auroc: n = 0 message");
}

/* A larger tie-heavy case: the sort must agree with the O(n^2) pair count
 * whatever the input order, and give the same answer on every call. */
static void test_auroc_pairs(void)
{
	enum {
		N = 300
	};
	double scores[N], rscores[N], auc, rauc, pairs = 0.0;
	int pos[N], rpos[N], i, j, npos = 0;

	for (i = 0; i < N; i++) {
		scores[i] = (double)((i * 7) % 5) / 4.0; /* 5 values, many ties */
		pos[i] = (i * 11) % 3 == 0 || i % 10 == 0;
		rscores[N - 1 - i] = scores[i];
		rpos[N - 1 - i] = pos[i];
		npos += pos[i];
	}
	for (i = 0; i < N; i++)
		for (j = 0; j < N; j++)
			if (pos[i] && !pos[j])
				pairs += scores[i] > scores[j]    ? 1.0
				         : scores[i] == scores[j] ? 0.5
				                                  : 0.0;
	pairs /= (double)npos * (double)(N - npos);
	bnn_auroc(scores, pos, N, &auc, NULL, NULL);
	is_float(auc, pairs, 1e-12, "auroc of %d tied scores = pair count %.6f", N, pairs);
	bnn_auroc(rscores, rpos, N, &rauc, NULL, NULL);
	is_float(rauc, auc, 0.0, "auroc: reversed input, same result");
}

static void test_classification_auroc(void)
{
	/* all right: no positives, undefined */
	static const float right[2 * 2] = { 0.75f, 0.25f, 0.25f, 0.75f };
	static const int right_labels[2] = { 0, 1 };
	static const int wrong_labels[2] = { 1, 0 };
	/* ex 0 right with c 0.875, ex 1 right with c 0.75, ex 2 wrong with
	 * c 0.625, ex 3 wrong with c 0.5: the wrong ones have the highest
	 * 1 - c, perfect separation, AUROC 1 */
	static const float sep[4 * 2] = {
		0.875f, 0.125f, 0.25f, 0.75f, 0.625f, 0.375f, 0.5f, 0.5f,
	};
	static const int sep_labels[4] = { 0, 1, 1, 1 };
	bnn_class_metrics m;

	bnn_metrics_classification(right, right_labels, 2, 2, 10, &m, NULL);
	is_float(m.accuracy, 1.0, 0.0, "all right: accuracy 1");
	is_float(m.auroc, 0.5, 0.0, "all right: auroc reported as 0.5");
	is_int(m.auroc_defined, 0, "all right: auroc flagged undefined");
	bnn_metrics_classification(right, wrong_labels, 2, 2, 10, &m, NULL);
	is_float(m.accuracy, 0.0, 0.0, "all wrong: accuracy 0");
	is_float(m.auroc, 0.5, 0.0, "all wrong: auroc reported as 0.5");
	is_int(m.auroc_defined, 0, "all wrong: auroc flagged undefined");
	bnn_metrics_classification(sep, sep_labels, 4, 2, 10, &m, NULL);
	is_float(m.accuracy, 0.5, 0.0, "separable: accuracy 2/4");
	is_float(m.auroc, 1.0, 0.0, "separable: auroc 1");
	is_int(m.auroc_defined, 1, "separable: auroc defined");
}

/* E|S − μ| by the full recurrence over all m + 1 counts, no window: the
 * reference for the library's windowed one. */
static double full_abs_dev(const double *c, int m)
{
	static double pmf[4097];
	double mu = 0.0, dev = 0.0;
	int j, s;

	pmf[0] = 1.0;
	for (j = 0; j < m; j++) {
		pmf[j + 1] = 0.0;
		for (s = j + 1; s > 0; s--)
			pmf[s] = pmf[s] * (1.0 - c[j]) + pmf[s - 1] * c[j];
		pmf[0] *= 1.0 - c[j];
		mu += c[j];
	}
	for (s = 0; s <= m; s++)
		dev += fabs(s - mu) * pmf[s];
	return dev;
}

/*
 * The ECE's floor.  The 4-example case with 2 bins: bin 0 holds the
 * confidences 0.5 and 0.5, bin 1 0.75 and 0.875.  Bin 0: S ~ Bin(2, 1/2),
 * μ = 1, E|S − 1| = 1/4 + 1/4 = 1/2.  Bin 1: μ = 1.625, P(S = 0) =
 * 1/4·1/8 = 1/32, P(S = 2) = 3/4·7/8 = 21/32, P(S = 1) = 10/32:
 * E|S − μ| = (1.625 + 10·0.625 + 21·0.375)/32 = 15.75/32 = 0.4921875.
 * Floor = (0.5 + 0.4921875)/4 = 0.248046875 (127/512), exactly.  Then 12
 * examples in one bin against all 4096 outcomes counted out, and 3000
 * (where the window is narrower than the counts) against the full
 * recurrence.
 */
static void test_ece_floor(void)
{
	static float probs[3000 * 2];
	static int labels[3000];
	double c[3000], brute = 0.0, mu = 0.0;
	bnn_class_metrics m;
	unsigned mask;
	int i, j;

	bnn_metrics_classification(four_probs, four_labels, 4, 3, 2, &m, NULL);
	is_float(m.ece_floor, 0.248046875, 0.0, "ece_floor: the 4x3 case, 2 bins, by hand");
	for (i = 0; i < 12; i++) { /* confidences 9/16 .. 15/16 */
		c[i] = (9 + i % 7) / 16.0;
		probs[2 * i] = (float)c[i];
		probs[2 * i + 1] = (float)(1.0 - c[i]);
		labels[i] = 0;
		mu += c[i];
	}
	for (mask = 0; mask < 4096; mask++) {
		double p = 1.0;
		int right = 0;
		for (j = 0; j < 12; j++) {
			int x = (mask >> j) & 1;
			p *= x ? c[j] : 1.0 - c[j];
			right += x;
		}
		brute += p * fabs(right - mu);
	}
	bnn_metrics_classification(probs, labels, 12, 2, 1, &m, NULL);
	is_float(m.ece_floor, brute / 12, 1e-15, "ece_floor: 12 examples, every outcome counted");
	for (i = 0; i < 3000; i++) { /* confidences in [0.5, 1) */
		c[i] = (float)(0.5 + 0.4999 * ((i * 7919) % 3001) / 3001.0);
		probs[2 * i] = (float)c[i];
		probs[2 * i + 1] = (float)(1.0 - c[i]);
		labels[i] = i % 3 != 0;
	}
	bnn_metrics_classification(probs, labels, 3000, 2, 1, &m, NULL);
	is_float(m.ece_floor, full_abs_dev(c, 3000) / 3000, 1e-13,
	         "ece_floor: 3000 examples, the windowed recurrence equals the full one");
	ok(m.ece_floor > 0.005 && m.ece_floor < 0.02, "ece_floor: and is about 0.4/sqrt(3000)");
}

static void test_nll_brier(void)
{
	static const float zero_p[2] = { 0.0f, 1.0f };
	static const float tiny_p[2] = { 1e-13f, 1.0f };
	static const float onehot[3] = { 0.0f, 1.0f, 0.0f };
	static const float uniform[2] = { 0.5f, 0.5f };
	bnn_class_metrics m;
	int y;

	/* p_y = 0: -log(max(0, 1e-12)) = 12 ln 10 = 27.631021115928547 */
	y = 0;
	bnn_metrics_classification(zero_p, &y, 1, 2, 1, &m, NULL);
	is_float(m.nll, 27.631021115928547, 1e-12, "nll of p_y = 0 is -log(1e-12)");
	ok(isfinite(m.nll), "nll of p_y = 0 is finite");
	/* p_y = 1e-13 < 1e-12: clamped the same way */
	bnn_metrics_classification(tiny_p, &y, 1, 2, 1, &m, NULL);
	is_float(m.nll, 27.631021115928547, 1e-12, "nll of p_y = 1e-13 is -log(1e-12)");
	/* one-hot and right: nll -log 1 = 0, brier 0 + 0 + 0 = 0 */
	y = 1;
	bnn_metrics_classification(onehot, &y, 1, 3, 1, &m, NULL);
	is_float(m.brier, 0.0, 0.0, "brier of a right one-hot prediction = 0");
	is_float(m.nll, 0.0, 0.0, "nll of a right one-hot prediction = 0");
	/* one-hot and wrong (label 0): brier 1 + 1 + 0 = 2 */
	y = 0;
	bnn_metrics_classification(onehot, &y, 1, 3, 1, &m, NULL);
	is_float(m.brier, 2.0, 0.0, "brier of a wrong one-hot prediction = 2");
	/* uniform over 2 classes: (0.5 - 1)^2 + 0.5^2 = 0.5, nll ln 2 */
	bnn_metrics_classification(uniform, &y, 1, 2, 1, &m, NULL);
	is_float(m.brier, 0.5, 0.0, "brier of a uniform 2-class prediction = 0.5");
	is_float(m.nll, 0.6931471805599453, 1e-15, "nll of it = ln 2");
}

/* One call of bnn_metrics_classification or bnn_metrics_reliability that
 * must fail with BNN_EINVAL. */
struct class_failure {
	int reliability;      /* 1: bnn_metrics_reliability, 0: ..._classification */
	const float *probs;   /* the n x k probabilities */
	const int *labels;    /* the n labels */
	long n;               /* examples */
	int k;                /* classes */
	int bins;             /* reliability bins */
	int no_err;           /* 1: called with err = NULL */
	const char *message;  /* the exact message, or NULL: not checked */
	const char *what;     /* the name of the code's test */
	const char *what_msg; /* the name of the message's test */
};

/* One or two tests per failure: the code, then the message if given; *m
 * must stay as it was. */
static void class_fails(const struct class_failure *c, int count, bnn_class_metrics *m)
{
	bnn_bin bin[2];
	bnn_err err;
	bnn_err *e;
	int i, rc;

	for (i = 0; i < count; i++) {
		e = c[i].no_err ? NULL : &err;
		if (c[i].reliability)
			rc = bnn_metrics_reliability(c[i].probs, c[i].labels, c[i].n, c[i].k,
			                             c[i].bins, bin, e);
		else
			rc = bnn_metrics_classification(c[i].probs, c[i].labels, c[i].n, c[i].k,
			                                c[i].bins, m, e);
		is_int(rc, BNN_EINVAL, "%s", c[i].what);
		if (c[i].message)
			is_str(err.message, c[i].message, "%s", c[i].what_msg);
	}
}

static void test_classification_errors(void)
{
	static const int bad_label[4] = { 0, 1, 3, 0 };
	static const int neg_label[4] = { -1, 1, 0, 0 };
	float nan_probs[4 * 3];
	const struct class_failure rows[] = {
		{ 0, four_probs, neg_label, 4, 3, 2, 0,
		  "bnn_metrics_classification: example 0 (0-based): "
		  "label -1 is outside [0, 3)",
		  "label -1: BNN_EINVAL", "label -1 message" },
		{ 1, four_probs, bad_label, 4, 3, 2, 0,
		  "bnn_metrics_reliability: example 2 (0-based): "
		  "label 3 is outside [0, 3)",
		  "reliability: label out of range", "reliability names itself" },
		{ 0, four_probs, bad_label, 4, 3, 2, 1, NULL, "a NULL err is fine", NULL },
		{ 0, four_probs, four_labels, 4, 3, 0, 0,
		  "bnn_metrics_classification: bins is 0, need at "
		  "least 1 bin",
		  "bins = 0: BNN_EINVAL", "bins = 0 message" },
		{ 0, four_probs, four_labels, 4, 3, -1, 0, NULL, "bins = -1: BNN_EINVAL", NULL },
		{ 1, four_probs, four_labels, 4, 3, 0, 0, NULL, "reliability, bins = 0: BNN_EINVAL",
		  NULL },
		{ 0, four_probs, four_labels, 0, 3, 2, 0,
		  "bnn_metrics_classification: n is 0, need at "
		  "least 1 example",
		  "n = 0: BNN_EINVAL", "n = 0 message" },
		{ 0, four_probs, four_labels, 4, 1, 2, 0,
		  "bnn_metrics_classification: k is 1, need at "
		  "least 2 classes",
		  "k = 1: BNN_EINVAL", "k = 1 message" },
		{ 0, NULL, four_labels, 4, 3, 2, 0, "bnn_metrics_classification: probs is NULL",
		  "probs = NULL: BNN_EINVAL", "probs = NULL message" },
		{ 0, nan_probs, four_labels, 4, 3, 2, 0,
		  "bnn_metrics_classification: example 1 (0-based), "
		  "class 2: probability nan is not finite",
		  "a NaN probability: BNN_EINVAL", "NaN message" },
	};
	bnn_class_metrics m;
	bnn_err err;
	int rc;

	memset(&m, 0, sizeof m);
	m.accuracy = -7.0;
	bnn_err_clear(&err);
	rc = bnn_metrics_classification(four_probs, bad_label, 4, 3, 2, &m, &err);
	is_int(rc, BNN_EINVAL, "label 3 of 3 classes: BNN_EINVAL");
	is_int(err.code, BNN_EINVAL, "err->code is set");
	is_str(err.message,
	       "bnn_metrics_classification: example 2 (0-based): "
	       "label 3 is outside [0, 3)",
	       "the message names the example, 0-based");
	is_float(m.accuracy, -7.0, 0.0, "out untouched on failure");

	memcpy(nan_probs, four_probs, sizeof nan_probs);
	nan_probs[1 * 3 + 2] = NAN;
	class_fails(rows, (int)(sizeof rows / sizeof rows[0]), &m);
	is_float(m.accuracy, -7.0, 0.0, "out still untouched");
}

/* One call of bnn_metrics_regression that must fail with BNN_EINVAL. */
struct reg_failure {
	const float *mean;    /* the n x d predictive means */
	const float *var;     /* the n x d predictive variances */
	const float *y;       /* the n x d targets */
	long n;               /* examples */
	long d;               /* outputs */
	const char *message;  /* the exact message, or NULL: not checked */
	const char *what;     /* the name of the code's test */
	const char *what_msg; /* the name of the message's test */
};

/* One or two tests per failure: the code, then the message if given. */
static void reg_fails(const struct reg_failure *c, int count)
{
	bnn_regression_metrics r;
	bnn_err err;
	int i, rc;

	for (i = 0; i < count; i++) {
		rc = bnn_metrics_regression(c[i].mean, c[i].var, c[i].y, c[i].n, c[i].d, &r, &err);
		is_int(rc, BNN_EINVAL, "%s", c[i].what);
		if (c[i].message)
			is_str(err.message, c[i].message, "%s", c[i].what_msg);
	}
}

/*
 * 3 examples, 2 outputs:
 *
 *   i  mean        y         var          residual y - mean
 *   0  0    1      1  1      1    2       1    0
 *   1  2    3      2  5      0.5  1       0    2
 *   2  -1   0.5    0  0      4    0.25    1   -0.5
 *
 * squared residuals 1, 0, 0, 4, 1, 0.25: sum 6.25 over 6 values,
 * rmse = sqrt(6.25/6) = 2.5/sqrt(6) = 1.0206207261596576.
 * nll: the six 1/2 log(2 pi var) terms add to 3 log(2 pi) + 1/2 log(1 * 2 *
 * 0.5 * 1 * 4 * 0.25) = 3 log(2 pi) (the variances multiply to 1); the
 * r^2/(2 var) terms are 1/2, 0, 0, 4/2, 1/8, 0.25/0.5 = 3.125.  Per
 * example: (3 log(2 pi) + 3.125)/3 = 1.8378770664093453 + 1.0416666666666667
 * = 2.8795437330760123.
 */
static void test_regression(void)
{
	static const float mean[6] = { 0, 1, 2, 3, -1, 0.5f };
	static const float y[6] = { 1, 1, 2, 5, 0, 0 };
	static const float var[6] = { 1, 2, 0.5f, 1, 4, 0.25f };
	static const float zero_var[6] = { 1, 2, 0.5f, 0, 4, 0.25f };
	static const float neg_var[6] = { 1, 2, 0.5f, 1, -4, 0.25f };
	float nan_var[6] = { NAN, 2, 0.5f, 1, 4, 0.25f };
	const struct reg_failure rows[] = {
		{ mean, neg_var, y, 3, 2,
		  "bnn_metrics_regression: example 2 (0-based), "
		  "output 0 (0-based): variance -4 is not positive",
		  "var < 0: BNN_EINVAL", "var = -4 message" },
		{ mean, nan_var, y, 3, 2, NULL, "var = NaN: BNN_EINVAL", NULL },
		{ mean, var, y, 0, 2,
		  "bnn_metrics_regression: n is 0, need at least 1 "
		  "example",
		  "regression n = 0: BNN_EINVAL", "regression n = 0 message" },
		{ mean, var, y, 3, 0,
		  "bnn_metrics_regression: d is 0, need at least 1 "
		  "output",
		  "regression d = 0: BNN_EINVAL", "regression d = 0 message" },
	};
	static const float one = 1.0f, zero = 0.0f;
	bnn_regression_metrics r;
	bnn_err err;
	int rc;

	bnn_err_clear(&err);
	rc = bnn_metrics_regression(mean, var, y, 3, 2, &r, &err);
	is_int(rc, BNN_OK, "regression 3x2: succeeds");
	is_int(r.n, 3, "regression: n = 3");
	is_float(r.rmse, 1.0206207261596576, 1e-15, "regression: rmse = 2.5/sqrt(6)");
	is_float(r.nll, 2.8795437330760123, 1e-14, "regression: nll = log(2 pi) + 3.125/3");
	/* one value, exact: rmse 0, nll 1/2 log(2 pi) */
	rc = bnn_metrics_regression(&zero, &one, &zero, 1, 1, &r, NULL);
	is_float(r.rmse, 0.0, 0.0, "regression 1x1, exact: rmse 0");
	is_float(r.nll, 0.9189385332046727, 1e-15, "regression 1x1, exact: nll = 1/2 log(2 pi)");

	r.rmse = -7.0;
	rc = bnn_metrics_regression(mean, zero_var, y, 3, 2, &r, &err);
	is_int(rc, BNN_EINVAL, "var = 0: BNN_EINVAL");
	is_str(err.message,
	       "bnn_metrics_regression: example 1 (0-based), "
	       "output 1 (0-based): variance 0 is not positive",
	       "var = 0 message names example and output");
	is_float(r.rmse, -7.0, 0.0, "out untouched on failure");
	reg_fails(rows, (int)(sizeof rows / sizeof rows[0]));
}

/*
 * Long inputs: the AUROC of 5000 scores with many ties (sorted in pieces
 * of 2048 and merged) against the pairwise count, and every metric of
 * 20000 examples of 10 classes (classification, reliability bins, OOD,
 * regression) the same bits with 1, 2 and 3 threads.
 */
static void test_threads(void)
{
	enum {
		NP = 5000,
		N = 20000,
		K = 10
	};
	static double sc[N], sc2[N];
	static int pos[N], lab[N];
	static float probs[N * K], mean[N], var[N], y[N];
	bnn_class_metrics cm[3];
	bnn_regression_metrics rm[3];
	bnn_ood_metrics om[3];
	bnn_bin bins[3][15];
	double auc, pairs = 0, npos = 0;
	bnn_rng r;
	long i, j;
	int t, def, rc = 0, k;

	/* zeroed: memcmp compares the structures' padding too */
	memset(cm, 0, sizeof cm);
	memset(rm, 0, sizeof rm);
	memset(om, 0, sizeof om);
	memset(bins, 0, sizeof bins);
	bnn_rng_seed(&r, 4);
	for (i = 0; i < N; i++) {
		double sum = 0;
		sc[i] = (double)bnn_rng_below(&r, 300) / 7; /* ties */
		sc2[i] = (double)bnn_rng_below(&r, 1000) / 3 + 20;
		pos[i] = bnn_rng_uniform(&r) < 0.3 + sc[i] / 100;
		lab[i] = (int)bnn_rng_below(&r, K);
		for (k = 0; k < K; k++)
			sum += probs[i * K + k] = (float)(bnn_rng_uniform(&r) + (k == lab[i]));
		for (k = 0; k < K; k++)
			probs[i * K + k] = (float)(probs[i * K + k] / sum);
		mean[i] = (float)bnn_rng_uniform(&r);
		var[i] = (float)(0.1 + bnn_rng_uniform(&r));
		y[i] = (float)bnn_rng_uniform(&r);
	}
	for (i = 0; i < NP; i++)
		if (pos[i]) {
			npos++;
			for (j = 0; j < NP; j++)
				if (!pos[j])
					pairs += sc[i] > sc[j] ? 1.0 : sc[i] == sc[j] ? 0.5 : 0.0;
		}
	for (t = 1; t <= 3; t++) {
		bnn_set_threads(t);
		rc |= bnn_auroc(sc, pos, NP, &auc, &def, NULL);
		if (t == 1)
			is_float(auc, pairs / (npos * (NP - npos)), 1e-15,
			         "AUROC of 5000 scores with ties: the pairwise count");
		rc |= bnn_metrics_classification(probs, lab, N, K, 15, &cm[t - 1], NULL);
		rc |= bnn_metrics_reliability(probs, lab, N, K, 15, bins[t - 1], NULL);
		rc |= bnn_metrics_regression(mean, var, y, N / 2, 2, &rm[t - 1], NULL);
		rc |= bnn_metrics_ood(sc2, N / 2, sc2 + N / 2, N / 2, &om[t - 1], NULL);
	}
	bnn_set_threads(1);
	is_int(rc, BNN_OK, "20000 examples: every metric computes with 1, 2 and 3 threads");
	ok(memcmp(&cm[0], &cm[1], sizeof cm[0]) == 0 && memcmp(&cm[0], &cm[2], sizeof cm[0]) == 0 &&
	           memcmp(bins[0], bins[1], sizeof bins[0]) == 0 &&
	           memcmp(bins[0], bins[2], sizeof bins[0]) == 0 &&
	           memcmp(&rm[0], &rm[1], sizeof rm[0]) == 0 &&
	           memcmp(&rm[0], &rm[2], sizeof rm[0]) == 0 &&
	           memcmp(&om[0], &om[1], sizeof om[0]) == 0 &&
	           memcmp(&om[0], &om[2], sizeof om[0]) == 0,
	   "and gives the same bits");
}

int main(void)
{
	test_four_examples();
	test_reliability();
	test_argmax_ties();
	test_edges();
	test_float_confidences();
	test_auroc();
	test_auroc_pairs();
	test_classification_auroc();
	test_nll_brier();
	test_ece_floor();
	test_classification_errors();
	test_regression();
	test_threads();
	return tap_done();
}
