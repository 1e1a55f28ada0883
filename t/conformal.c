/*
 * conformal.c: TAP tests of split conformal prediction (runtime/metrics/
 * conformal.c), every expected number worked out by hand in the comment
 * next to its check: the conformal quantile of nine scores at several
 * levels (sorting by hand, the rank ⌈(n + 1)·level⌉), the LAC, APS and
 * RAPS scores of every class of small probability rows (ranking, ties,
 * the randomisation u), the coverage and mean size of the sets on a tiny
 * example, the residual and normalized regression scores with their
 * intervals' coverage and width, the method names, and the errors with
 * their messages (an empty calibration set, a level outside (0, 1), too
 * few calibration examples for the level); adaptive conformal inference
 * (Gibbs and Candès 2021, eq. 2) step by step on tiny sequences: α_t, the
 * rank and quantile, err_t, an infinite and an empty step, intervals and
 * sets, γ = 0 as split conformal, the bound of their Proposition 4.1, and
 * its errors; the online variant (each step's score joins the calibration
 * scores) step by step where its quantiles part from the fixed set's, for
 * intervals, sets (the true class's score joins) and γ = 0.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <math.h>
#include <stdio.h>

#include "bnn.h"
#include "tap.h"

static void test_quantile(void)
{
	/* sorted: 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 (n = 9)
	 *   level 0.8: rank ⌈10·0.8⌉ = 8 -> 0.8
	 *   level 0.9: rank ⌈10·0.9⌉ = 9 -> 0.9 (10·0.9 is 9, not 9.000...1)
	 *   level 0.5: rank ⌈10·0.5⌉ = 5 -> 0.5
	 *   level 0.71: rank ⌈7.1⌉ = 8 -> 0.8 */
	static const double s[] = { 0.5, 0.1, 0.9, 0.3, 0.7, 0.2, 0.8, 0.4, 0.6 };
	double q = 0;
	bnn_err err;

	ok(bnn_conformal_quantile(s, 9, 0.8, &q, &err) == BNN_OK && q == 0.8, "level 0.8: 0.8");
	ok(bnn_conformal_quantile(s, 9, 0.9, &q, &err) == BNN_OK && q == 0.9, "level 0.9: 0.9");
	ok(bnn_conformal_quantile(s, 9, 0.5, &q, &err) == BNN_OK && q == 0.5, "level 0.5: 0.5");
	ok(bnn_conformal_quantile(s, 9, 0.71, &q, &err) == BNN_OK && q == 0.8, "level 0.71: 0.8");
	/* level 0.95: rank ⌈9.5⌉ = 10 > 9; n = 18 gives ⌈18.05⌉ = 19 > 18,
	 * n = 19 gives ⌈19⌉ = 19: at least 19 */
	is_int(bnn_conformal_quantile(s, 9, 0.95, &q, &err), BNN_EINVAL, "level 0.95 with n = 9");
	is_str(err.message,
	       "9 calibration examples are too few for level 0.95: the quantile's rank "
	       "ceil((n + 1) * level) = 10 exceeds n (at least 19 examples are needed)",
	       "its message");
	is_int(bnn_conformal_quantile(s, 0, 0.9, &q, &err), BNN_EINVAL, "n = 0");
	is_str(err.message, "the calibration set is empty", "its message");
	is_int(bnn_conformal_quantile(s, 9, 1.5, &q, &err), BNN_EINVAL, "level 1.5");
	is_str(err.message, "the coverage level 1.5 is not in (0, 1)", "its message");
}

static void test_class_scores(void)
{
	/* row 0: p = (0.2, 0.5, 0.3), u = 0.5; ranking 1, 2, 0
	 *   LAC  1 − p:            0.8, 0.5, 0.7
	 *   APS  class 1: 0 + ½·0.5 = 0.25; class 2: 0.5 + ½·0.3 = 0.65;
	 *        class 0: 0.8 + ½·0.2 = 0.9
	 *   RAPS λ = 0.1, k_reg = 1: + 0.1·(rank − 1): 0.25, 0.75, 1.1
	 * row 1: p = (0.4, 0.2, 0.4), u = 1 (a tie: class 0 ranks first)
	 *   APS  class 0: 0.4; class 2: 0.4 + 0.4 = 0.8; class 1: 1.0 */
	static const float p[] = { 0.2f, 0.5f, 0.3f, 0.4f, 0.2f, 0.4f };
	static const double u[] = { 0.5, 1.0 };
	static const double lac[] = { 0.8, 0.5, 0.7 };
	static const double aps[] = { 0.9, 0.25, 0.65, 0.4, 1.0, 0.8 };
	static const double raps[] = { 1.1, 0.25, 0.75 };
	bnn_conformal_options o = { BNN_CONFORMAL_LAC, 0.1, 1 };
	double s[6];
	bnn_err err;
	int i;

	ok(bnn_conformal_class_scores(p, 2, 3, u, &o, s, &err) == BNN_OK, "LAC scores");
	for (i = 0; i < 3; i++)
		is_float(s[i], lac[i], 1e-7, "LAC class %d: 1 − p", i);
	o.method = BNN_CONFORMAL_APS;
	ok(bnn_conformal_class_scores(p, 2, 3, u, &o, s, &err) == BNN_OK, "APS scores");
	for (i = 0; i < 6; i++)
		is_float(s[i], aps[i], 1e-7, "APS example %d class %d", i / 3, i % 3);
	o.method = BNN_CONFORMAL_RAPS;
	ok(bnn_conformal_class_scores(p, 1, 3, u, &o, s, &err) == BNN_OK, "RAPS scores");
	for (i = 0; i < 3; i++)
		is_float(s[i], raps[i], 1e-7, "RAPS class %d", i);
	o.method = BNN_CONFORMAL_RESIDUAL;
	is_int(bnn_conformal_class_scores(p, 1, 3, u, &o, s, &err), BNN_EINVAL,
	       "a regression method for classes");
	is_str(err.message,
	       "conformal scores: method 'residual' is not one for classes (aps, raps, lac)",
	       "its message");
}

static void test_sets(void)
{
	/* four examples, three classes, q = 0.5; a class is in the set when its
	 * score is ≤ 0.5:
	 *   example 0: 0.1 0.6 0.9, label 0 -> {0}, covered, size 1
	 *   example 1: 0.5 0.2 0.7, label 2 -> {0, 1}, not covered, size 2
	 *   example 2: 0.9 0.8 0.6, label 1 -> {}, not covered, size 0
	 *   example 3: 0.3 0.4 0.5, label 2 -> {0, 1, 2}, covered, size 3
	 * coverage 2/4 = 0.5, mean size 6/4 = 1.5 */
	static const double s[] = { 0.1, 0.6, 0.9, 0.5, 0.2, 0.7, 0.9, 0.8, 0.6, 0.3, 0.4, 0.5 };
	static const int y[] = { 0, 2, 1, 2 };
	double cov = 0, size = 0;

	bnn_conformal_sets(s, y, 4, 3, 0.5, &cov, &size);
	ok(cov == 0.5, "coverage 2 of 4 (%g)", cov);
	ok(size == 1.5, "mean set size 6/4 (%g)", size);
}

static void test_regression(void)
{
	/* two examples, two outputs:
	 *   μ = (1, 2), σ² = (4, 1), y = (2, 1.5): |y − μ| = (1, 0.5), /σ = (0.5, 0.5)
	 *   μ = (0, 0), σ² = (1, 0.25), y = (-3, 0.5): |y − μ| = (3, 0.5), /σ = (3, 1)
	 * residual scores max: 1, 3; normalized: 0.5, 3.
	 * At q = 1 (residual): example 0 covered, example 1 not; widths 2 each,
	 * mean 2.  At q = 1 (normalized): half-widths qσ = 2, 1, 1, 0.5; mean
	 * width 2·(2 + 1 + 1 + 0.5)/4 = 2.25; coverage ½. */
	static const float mu[] = { 1, 2, 0, 0 }, var[] = { 4, 1, 1, 0.25f },
	                   y[] = { 2, 1.5f, -3, 0.5f };
	double s[2], cov = 0, width = 0;
	bnn_err err;

	ok(bnn_conformal_regression_scores(mu, var, y, 2, 2, BNN_CONFORMAL_RESIDUAL, s, &err) ==
	                   BNN_OK &&
	           s[0] == 1 && s[1] == 3,
	   "residual scores: the largest |y − μ| of each example (1, 3)");
	bnn_conformal_intervals(var, s, 2, 2, BNN_CONFORMAL_RESIDUAL, 1.0, &cov, &width);
	ok(cov == 0.5 && width == 2, "residual at q = 1: coverage ½, width 2 (%g, %g)", cov, width);
	ok(bnn_conformal_regression_scores(mu, var, y, 2, 2, BNN_CONFORMAL_NORMALIZED, s, &err) ==
	                   BNN_OK &&
	           s[0] == 0.5 && s[1] == 3,
	   "normalized scores: the largest |y − μ|/σ of each example (0.5, 3)");
	bnn_conformal_intervals(var, s, 2, 2, BNN_CONFORMAL_NORMALIZED, 1.0, &cov, &width);
	ok(cov == 0.5 && width == 2.25, "normalized at q = 1: coverage ½, width 2.25 (%g, %g)", cov,
	   width);
	is_float(bnn_conformal_half_width(BNN_CONFORMAL_NORMALIZED, 1.5, 4), 3, 0,
	         "half width q·σ = 1.5·2");
	/* an infinite variance (studentt, ν ≤ 2): |y − μ|/σ would be 0, so the
	 * normalized score is refused; the residual one does not look at it */
	{
		static const float inf_var[] = { 4, 1, INFINITY, 0.25f };
		is_int(bnn_conformal_regression_scores(mu, inf_var, y, 2, 2,
		                                       BNN_CONFORMAL_NORMALIZED, s, &err),
		       BNN_EINVAL, "normalized scores of an infinite variance are refused");
		is_str(err.message,
		       "conformal scores: example 1 (0-based), output 0 has predictive variance "
		       "inf: the normalized score |y - mu|/sigma needs a finite positive variance "
		       "(use residual)",
		       "naming the example, the output and the variance");
		ok(bnn_conformal_regression_scores(mu, inf_var, y, 2, 2, BNN_CONFORMAL_RESIDUAL, s,
		                                   &err) == BNN_OK &&
		           s[0] == 1 && s[1] == 3,
		   "residual scores of the same: 1, 3");
	}
	is_float(bnn_conformal_half_width(BNN_CONFORMAL_NORMALIZED, 0, INFINITY), 0, 0,
	         "half width at q = 0 is 0, whatever the variance (no 0·inf)");
}

static void test_names(void)
{
	int i;

	for (i = 0; i < BNN_CONFORMAL_COUNT; i++)
		is_int(bnn_conformal_method_from_name(bnn_conformal_method_name(i)), i,
		       "method %s by its name", bnn_conformal_method_name(i));
	is_int(bnn_conformal_method_from_name("apss"), -1, "no method 'apss'");
	ok(bnn_conformal_is_regression(BNN_CONFORMAL_NORMALIZED) &&
	           !bnn_conformal_is_regression(BNN_CONFORMAL_LAC),
	   "normalized is for regression, lac is not");
}

static void test_adaptive_intervals(void)
{
	/* calibration scores 3, 1, 2 (sorted 1 2 3, n = 3), level 0.5 (α = ½),
	 * γ = ¼; the rank at α_t is ⌈4·(1 − α_t)⌉, an err_t moves α by
	 * ¼·(½ − 1) = −⅛, a covered step by +⅛ (eq. 2):
	 *   t  s_t  α_t  rank         q_t  err_t
	 *   1  2.5  1/2  ⌈2⌉ = 2      2    1
	 *   2  0.5  3/8  ⌈2.5⌉ = 3    3    0
	 *   3  3.5  1/2  2            2    1
	 *   4  3.5  3/8  3            3    1
	 *   5  5    1/4  ⌈3⌉ = 3      3    1
	 *   6  100  1/8  ⌈3.5⌉ = 4>3  ∞    0
	 *   7  1    1/4  3            3    0     α_8 = 3/8
	 * coverage 3/7; residual widths 2q over the six finite steps: 4, 6, 4,
	 * 6, 6, 6, mean 32/6; one infinite step.  Proposition 4.1:
	 * |4/7 − ½| = 1/14 ≤ (½ + ¼)/(¼·7) = 3/7. */
	static const double cal[] = { 3, 1, 2 };
	static const double s[] = { 2.5, 0.5, 3.5, 3.5, 5, 100, 1 };
	static const double want[] = { 2, 3, 2, 3, 3, INFINITY, 3 };
	static const float var[] = { 4, 4, 4, 4, 4, 4, 4 };
	bnn_conformal_examples x = { s, NULL, NULL, 7, 1, BNN_CONFORMAL_RESIDUAL };
	bnn_conformal_adaptive_run a = { .level = 0.5, .gamma = 0.25 };
	double q[7], cov = 0, width = 0;
	bnn_err err;
	int t;

	a.q = q;
	ok(bnn_conformal_adaptive(cal, 3, &x, &a, &err) == BNN_OK, "adaptive intervals");
	for (t = 0; t < 7; t++)
		ok(q[t] == want[t], "step %d: quantile %g (%g)", t + 1, want[t], q[t]);
	ok(a.coverage == 3.0 / 7, "coverage 3/7 (%g)", a.coverage);
	ok(a.mean_size == 32.0 / 6, "mean width of the finite intervals 32/6 (%g)", a.mean_size);
	is_int(a.infinite, 1, "one infinite interval");
	ok(a.alpha == 0.375, "alpha_8 = 3/8 (%g)", a.alpha);
	ok(fabs((1 - a.coverage) - 0.5) <= (0.5 + 0.25) / (0.25 * 7),
	   "within Proposition 4.1's bound");
	/* normalized with σ² = 4: every width doubles, 64/6 */
	x.var = var;
	x.method = BNN_CONFORMAL_NORMALIZED;
	ok(bnn_conformal_adaptive(cal, 3, &x, &a, &err) == BNN_OK && a.mean_size == 64.0 / 6,
	   "normalized: widths 2·q·σ, mean 64/6 (%g)", a.mean_size);
	/* step 1's variance infinite: its interval (q = 2) is infinite, counted
	 * with step 6's; the mean of the other five, 4q: (12 + 8 + 12 + 12 +
	 * 12)/5 */
	{
		static const float var1[] = { INFINITY, 4, 4, 4, 4, 4, 4 };
		x.var = var1;
		ok(bnn_conformal_adaptive(cal, 3, &x, &a, &err) == BNN_OK &&
		           a.mean_size == 56.0 / 5 && a.infinite == 2,
		   "an infinite variance makes an infinite interval: 2 infinite, mean width "
		   "56/5 of the rest (%g, %ld)",
		   a.mean_size, a.infinite);
	}
	/* γ = 0: α_t stays ½, q = 2 throughout: split conformal's intervals */
	a.gamma = 0;
	x.var = NULL;
	x.method = BNN_CONFORMAL_RESIDUAL;
	bnn_conformal_intervals(NULL, s, 7, 1, BNN_CONFORMAL_RESIDUAL, 2, &cov, &width);
	ok(bnn_conformal_adaptive(cal, 3, &x, &a, &err) == BNN_OK && a.coverage == cov &&
	           a.mean_size == width && cov == 2.0 / 7,
	   "gamma 0 is split conformal at q = 2: coverage 2/7 (%g), width 4 (%g)", a.coverage,
	   a.mean_size);
}

static void test_adaptive_sets(void)
{
	/* the same calibration scores, two classes, γ = ¾: a covered step
	 * moves α by ¾·½ = +⅜, an err_t by −⅜:
	 *   t  scores    label  α_t  rank               q_t  set     err_t
	 *   1  0.5 2.5   0      1/2  2                  2    {0}     0
	 *   2  0.5 0.8   1      7/8  ⌈0.5⌉ = 1          1    {0, 1}  0
	 *   3  0.1 0.2   0      5/4  ⌈−1⌉ = −1 < 1      −∞   {}      1
	 *   4  1.5 0.9   0      7/8  1                  1    {1}     1
	 * α_5 = ½; coverage 2/4, mean set size (1 + 2 + 0 + 1)/4 = 1. */
	static const double cal[] = { 3, 1, 2 };
	static const double s[] = { 0.5, 2.5, 0.5, 0.8, 0.1, 0.2, 1.5, 0.9 };
	static const int y[] = { 0, 1, 0, 0 };
	static const double want[] = { 2, 1, -INFINITY, 1 };
	bnn_conformal_examples x = { s, y, NULL, 4, 2, 0 };
	bnn_conformal_adaptive_run a = { .level = 0.5, .gamma = 0.75 };
	double q[4];
	bnn_err err;
	int t;

	a.q = q;
	ok(bnn_conformal_adaptive(cal, 3, &x, &a, &err) == BNN_OK, "adaptive sets");
	for (t = 0; t < 4; t++)
		ok(q[t] == want[t], "step %d: quantile %g (%g)", t + 1, want[t], q[t]);
	ok(a.coverage == 0.5 && a.mean_size == 1 && a.infinite == 0 && a.alpha == 0.5,
	   "coverage 1/2 (%g), mean set size 1 (%g), no infinite set, alpha_5 = 1/2 (%g)",
	   a.coverage, a.mean_size, a.alpha);
}

static void test_adaptive_online_intervals(void)
{
	/* test_adaptive_intervals' sequence online: after each step its score
	 * joins the sorted calibration scores, so step t ranks 2 + t of them
	 * at ⌈(3 + t)·(1 − α_t)⌉ (the fixed run's α_t until step 6 misses):
	 *   t  s_t  α_t  scores before the step      rank  q_t  err_t  fixed q_t
	 *   1  2.5  1/2  1 2 3                        2     2    1      2
	 *   2  0.5  3/8  1 2 2.5 3                    4     3    0      3
	 *   3  3.5  1/2  .5 1 2 2.5 3                 3     2    1      2
	 *   4  3.5  3/8  .5 1 2 2.5 3 3.5             5     3    1      3
	 *   5  5    1/4  .5 1 2 2.5 3 3.5 3.5         6     3.5  1      3
	 *   6  100  1/8  .5 1 2 2.5 3 3.5 3.5 5       ⌈7.875⌉ = 8  5   1  ∞
	 *   7  1    0    ... 5 100 (9 scores)         10 > 9  ∞    0      3
	 * α_8 = 1/8; coverage 2/7; widths 2q over the six finite steps 4, 6, 4,
	 * 6, 7, 10, mean 37/6; one infinite step.  Proposition 4.1: |5/7 − ½|
	 * = 3/14 ≤ 3/7. */
	static const double cal[] = { 3, 1, 2 };
	static const double s[] = { 2.5, 0.5, 3.5, 3.5, 5, 100, 1 };
	static const double want[] = { 2, 3, 2, 3, 3.5, 5, INFINITY };
	/* γ = 0: split conformal at level ½ on the growing set, rank
	 * ⌈(3 + t)/2⌉ of 2 + t scores */
	static const double want0[] = { 2, 2.5, 2, 2.5, 2.5, 3, 3 };
	bnn_conformal_examples x = { s, NULL, NULL, 7, 1, BNN_CONFORMAL_RESIDUAL };
	bnn_conformal_adaptive_run a = { .level = 0.5, .gamma = 0.25, .online = 1 };
	double q[7];
	bnn_err err;
	int t, same = 1;

	a.q = q;
	ok(bnn_conformal_adaptive(cal, 3, &x, &a, &err) == BNN_OK, "online adaptive intervals");
	for (t = 0; t < 7; t++)
		ok(q[t] == want[t], "online step %d: quantile %g (%g)", t + 1, want[t], q[t]);
	ok(a.coverage == 2.0 / 7 && a.mean_size == 37.0 / 6 && a.infinite == 1 && a.alpha == 0.125,
	   "coverage 2/7 (%g), mean finite width 37/6 (%g), one infinite (%ld), alpha_8 1/8 (%g)",
	   a.coverage, a.mean_size, a.infinite, a.alpha);
	ok(fabs((1 - a.coverage) - 0.5) <= (0.5 + 0.25) / (0.25 * 7),
	   "online: within Proposition 4.1's bound");
	ok(cal[0] == 3 && cal[1] == 1 && cal[2] == 2, "the caller's calibration scores unchanged");
	a.gamma = 0;
	ok(bnn_conformal_adaptive(cal, 3, &x, &a, &err) == BNN_OK, "online, gamma 0");
	for (t = 0; t < 7; t++)
		same &= q[t] == want0[t];
	ok(same && a.coverage == 2.0 / 7 && a.mean_size == 5 && a.infinite == 0,
	   "gamma 0 online: split conformal on the growing set, quantiles 2 2.5 2 2.5 2.5 3 3, "
	   "coverage 2/7 (%g), width 5 (%g)",
	   a.coverage, a.mean_size);
}

static void test_adaptive_online_sets(void)
{
	/* test_adaptive_sets' scores with labels 0 1 1 0, online: the score
	 * that joins is the true class's (0.5, 0.8, 0.2; class 0's would give
	 * 0.1 at step 4):
	 *   t  scores    label  α_t  calibration scores   rank  q_t  set     err_t
	 *   1  0.5 2.5   0      1/2  1 2 3                2     2    {0}     0
	 *   2  0.5 0.8   1      7/8  .5 1 2 3             1     0.5  {0}     1
	 *   3  0.1 0.2   1      1/2  .5 .8 1 2 3          3     1    {0, 1}  0
	 *   4  1.5 0.9   0      7/8  .2 .5 .8 1 2 3       1     0.2  {}      1
	 * α_5 = ½; coverage 2/4, mean set size (1 + 1 + 2 + 0)/4 = 1. */
	static const double cal[] = { 3, 1, 2 };
	static const double s[] = { 0.5, 2.5, 0.5, 0.8, 0.1, 0.2, 1.5, 0.9 };
	static const int y[] = { 0, 1, 1, 0 };
	static const double want[] = { 2, 0.5, 1, 0.2 };
	bnn_conformal_examples x = { s, y, NULL, 4, 2, 0 };
	bnn_conformal_adaptive_run a = { .level = 0.5, .gamma = 0.75, .online = 1 };
	double q[4];
	bnn_err err;
	int t;

	a.q = q;
	ok(bnn_conformal_adaptive(cal, 3, &x, &a, &err) == BNN_OK, "online adaptive sets");
	for (t = 0; t < 4; t++)
		ok(q[t] == want[t], "online set step %d: quantile %g (%g)", t + 1, want[t], q[t]);
	ok(a.coverage == 0.5 && a.mean_size == 1 && a.infinite == 0 && a.alpha == 0.5,
	   "coverage 1/2 (%g), mean set size 1 (%g), no infinite set, alpha_5 = 1/2 (%g)",
	   a.coverage, a.mean_size, a.alpha);
}

static void test_adaptive_bound(void)
{
	/* every score above the calibration scores: only an infinite interval
	 * covers.  α_t falls by γ·(1 − α) = 0.045 a miss until the rank
	 * ⌈4·(1 − α_t)⌉ exceeds 3, rises by γ·α = 0.005 a cover: the
	 * coverage is still within (max(α, 1 − α) + γ)/(γ·T) of 0.9. */
	static const double cal[] = { 3, 1, 2 };
	static double s[1000];
	bnn_conformal_examples x = { s, NULL, NULL, 1000, 1, BNN_CONFORMAL_RESIDUAL };
	bnn_conformal_adaptive_run a = { .level = 0.9, .gamma = 0.05 };
	bnn_err err;
	int t;

	for (t = 0; t < 1000; t++)
		s[t] = 10;
	ok(bnn_conformal_adaptive(cal, 3, &x, &a, &err) == BNN_OK, "a sequence never covered");
	ok(fabs(a.coverage - 0.9) <= (0.9 + 0.05) / (0.05 * 1000),
	   "coverage %g within Proposition 4.1's bound %g of 0.9", a.coverage,
	   (0.9 + 0.05) / (0.05 * 1000));
	ok(a.infinite == (long)(a.coverage * 1000 + 0.5), "every covered step infinite (%ld)",
	   a.infinite);
	ok(a.mean_size == 6, "the finite intervals: 2·3 (%g)", a.mean_size);
	x.k = 0;
	is_int(bnn_conformal_adaptive(cal, 3, &x, &a, &err), BNN_EINVAL, "no outputs");
	is_str(err.message, "adaptive conformal: no examples given", "its message");
	x.k = 1;
	a.gamma = -0.1;
	is_int(bnn_conformal_adaptive(cal, 3, &x, &a, &err), BNN_EINVAL, "gamma -0.1");
	is_str(err.message, "adaptive conformal: the step size -0.1 is not in [0, 1]",
	       "its message");
	a.gamma = 1.5;
	is_int(bnn_conformal_adaptive(cal, 3, &x, &a, &err), BNN_EINVAL, "gamma 1.5");
	a.gamma = 0.05;
	is_int(bnn_conformal_adaptive(cal, 0, &x, &a, &err), BNN_EINVAL, "no calibration scores");
	is_str(err.message, "the calibration set is empty", "its message");
	a.level = 1;
	is_int(bnn_conformal_adaptive(cal, 3, &x, &a, &err), BNN_EINVAL, "level 1");
	is_str(err.message, "the coverage level 1 is not in (0, 1)", "its message");
}

int main(void)
{
	test_quantile();
	test_class_scores();
	test_sets();
	test_regression();
	test_names();
	test_adaptive_intervals();
	test_adaptive_sets();
	test_adaptive_online_intervals();
	test_adaptive_online_sets();
	test_adaptive_bound();
	return tap_done();
}
