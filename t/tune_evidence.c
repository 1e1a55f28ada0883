/*
 * tune_evidence.c: the Laplace estimate of the log evidence (evidence.c,
 * docs/tune.md) against values worked out by hand on a tiny "model", and
 * its maximiser against MacKay's condition for the best prior precision.
 *
 * Three parameters: m = (1, 2, 5), h = (0.5, 1.5, 9), σ = (0.1, 0.2, 0):
 * the third has no posterior and is left out (P = 2).  N = 4, Σℓ_i = 3.
 *   ‖m‖² = 1 + 4 = 5;  N h + δ at δ = 2: 4·0.5 + 2 = 4 and 4·1.5 + 2 = 8;
 *   log Z(2) = −3 − ½·2·5 + ½·2·log 2 − ½(log 4 + log 8)
 *            = −8 + log 2 − (5/2) log 2 = −8 − (3/2) log 2
 *            = −9.0397207708399179.
 * An estimate of h below 0 counts as 0: with h = (0.5, −1.5) the second
 * term is log(0 + 2) = log 2, so
 *   log Z(2) = −8 + log 2 − ½(log 4 + log 2) = −8 − ½ log 2
 *            = −8.3465735902799727.
 * The maximum: d log Z/dδ = −½‖m‖² + P/(2δ) − ½ Σ_j 1/(N h_j + δ) = 0,
 * i.e. δ‖m‖² = γ = Σ_j N h_j/(N h_j + δ), MacKay's (1992) effective number
 * of parameters; here −5/2 + 1/δ − ½(1/(2 + δ) + 1/(6 + δ)) = 0, whose root
 * (by bisection) is δ = 0.35833939412304.
 */
#include <config.h>
#include <math.h>

#include "bnn.h"
#include "tap.h"

int main(void)
{
	const float m[3] = { 1, 2, 5 }, h[3] = { 0.5f, 1.5f, 9 }, sigma[3] = { 0.1f, 0.2f, 0 };
	const float hneg[3] = { 0.5f, -1.5f, 9 };
	bnn_evidence ev = { .nll = 3, .n = 4, .mean = m, .h = h, .sigma = sigma, .nparams = 3 };
	double best, gamma;

	is_float(bnn_laplace_log_evidence(3, m, h, sigma, 4, 3, 2), -9.0397207708399179, 1e-12,
	         "log Z at delta 2, worked by hand");
	is_float(bnn_laplace_log_evidence(3, m, hneg, sigma, 4, 3, 2), -8.3465735902799727, 1e-12,
	         "an h below 0 counts as no curvature");
	is_float(bnn_evidence_at(&ev, 2), -9.0397207708399179, 1e-12,
	         "bnn_evidence_at is the same formula");
	best = bnn_evidence_best(&ev, 1e-3, 1e3);
	is_float(best, 0.35833939412304, 1e-9, "the maximiser, worked out by bisection");
	gamma = 4 * 0.5 / (4 * 0.5 + best) + 4 * 1.5 / (4 * 1.5 + best);
	is_float(best * 5, gamma, 1e-9, "at the maximum, delta |m|^2 = gamma (MacKay)");
	ok(bnn_evidence_at(&ev, best) > bnn_evidence_at(&ev, best * 1.01) &&
	           bnn_evidence_at(&ev, best) > bnn_evidence_at(&ev, best / 1.01),
	   "it is a maximum");
	best = bnn_evidence_best(&ev, 1, 10);
	ok(best >= 1 && best < 1.000001, "a range above the maximum gives its lower end (%g)",
	   best);
	return tap_done();
}
