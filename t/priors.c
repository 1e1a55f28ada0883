/*
 * priors.c: TAP tests of the priors that are not Gaussian (prior
 * scalemixture and prior laplace; runtime/optim/prior.c and
 * runtime/train/prior_terms.c).
 *
 * bnn_prior_grad and bnn_prior_neg_log against the densities written out
 * here: the scale mixture's derivative as w·(π N1/σ1² + (1 − π) N2/σ2²)/p
 * from the two Gaussian densities (the library goes through the
 * components' log-odds), the Laplace's sign(w)/b with 0 at 0, the
 * Gaussian's δw; the σ part d·ε of a reparameterised sample; a weight far
 * in the tail where both densities underflow here (the library's log-odds
 * keep w/σ1²); the gradient against central differences of −log p.
 *
 * Then the trainer on one dense layer 2 -> 1 with a Gaussian likelihood of
 * σ = 1 and one example (N = 1), whose NLL gradient is (y − t)·(x, 1):
 * one sgd step, two adam steps and two bbb steps (with σ0 = 1e-30, so that
 * the weight sample is μ in float and μ's update is Adam on the NLL's and
 * the prior's gradients at μ; with and without the local
 * reparameterisation, whose prior term draws a sample of its own)
 * computed here in double, under each prior (t/models/pr_*.bnn); the same
 * computation without the prior's term differs by far more than the
 * tolerance, so the term is there and at its scale.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bnn.h"
#include "pr_lap.h"
#include "pr_lapmf.h"
#include "pr_mix.h"
#include "pr_mixmf.h"
#include "tap.h"

/* π, which C11 does not define */
#define PR_PI 3.14159265358979323846

static const bnn_prior laplace_half = { .kind = BNN_PRIOR_LAPLACE, .scale = 0.5 };
static const bnn_prior mixture = {
	.kind = BNN_PRIOR_SCALEMIXTURE, .pi = 0.25, .sigma1 = 1.5, .sigma2 = 0.3
};
static const bnn_prior gauss_two = { .kind = BNN_PRIOR_GAUSSIAN, .precision = 2 };

static double normal_pdf(double w, double s)
{
	return exp(-0.5 * w * w / (s * s)) / (s * sqrt(2 * PR_PI));
}

/* d(−log p)/dw written out from the densities. */
static double hand_grad(const bnn_prior *p, double w)
{
	double n1, n2;

	switch (p->kind) {
	case BNN_PRIOR_LAPLACE:
		return w > 0 ? 1 / p->scale : w < 0 ? -1 / p->scale : 0;
	case BNN_PRIOR_SCALEMIXTURE:
		n1 = p->pi * normal_pdf(w, p->sigma1);
		n2 = (1 - p->pi) * normal_pdf(w, p->sigma2);
		return w * (n1 / (p->sigma1 * p->sigma1) + n2 / (p->sigma2 * p->sigma2)) /
		       (n1 + n2);
	default:
		return p->precision * w;
	}
}

static double hand_neg_log(const bnn_prior *p, double w)
{
	switch (p->kind) {
	case BNN_PRIOR_LAPLACE:
		return fabs(w) / p->scale + log(2 * p->scale);
	case BNN_PRIOR_SCALEMIXTURE:
		return -log(p->pi * normal_pdf(w, p->sigma1) +
		            (1 - p->pi) * normal_pdf(w, p->sigma2));
	default:
		return -log(normal_pdf(w, 1 / sqrt(p->precision)));
	}
}

static void test_gradients(void)
{
	static const float w[] = { -1.25f, -0.3f, 0.0f, 0.05f, 0.4f, 2.0f, 3.5f };
	static const float eps[] = { 0.5f, -1.0f, 2.0f, 1.5f, -0.25f, 1.0f, -2.0f };
	const bnn_prior *priors[] = { &laplace_half, &mixture, &gauss_two };
	const int n = (int)(sizeof w / sizeof w[0]);
	int k, i;

	for (k = 0; k < 3; k++) {
		const bnn_prior *p = priors[k];
		const char *name = bnn_prior_name(p->kind);
		float g[7], gs[7];
		double sum = 0;

		for (i = 0; i < n; i++) {
			g[i] = 1.0f;
			gs[i] = -1.0f;
		}
		bnn_prior_grad(p, n, w, eps, 0.25, g, gs);
		for (i = 0; i < n; i++) {
			double d = hand_grad(p, w[i]);
			is_rel(g[i], (float)(1.0f + (float)(0.25 * d)), 1e-6,
			       "%s: 1 + 0.25 d(%g) = %.9g (d = %.9g)", name, (double)w[i], g[i], d);
			is_rel(gs[i], (float)(-1.0f + (float)(0.25 * d * eps[i])), 1e-6,
			       "%s: the sample's σ part: -1 + 0.25 d(%g) ε = %.9g", name,
			       (double)w[i], gs[i]);
			sum += hand_neg_log(p, w[i]);
		}
		is_rel(bnn_prior_neg_log(p, n, w), sum, 1e-12, "%s: -log p summed = %.12g", name,
		       sum);
		for (i = 0; i < n; i++) { /* away from laplace's kink */
			float lo = w[i] - 1e-3f, hi = w[i] + 1e-3f, gd = 0;
			double fd;
			if (p->kind == BNN_PRIOR_LAPLACE && w[i] == 0)
				continue;
			fd = (bnn_prior_neg_log(p, 1, &hi) - bnn_prior_neg_log(p, 1, &lo)) /
			     ((double)hi - lo);
			bnn_prior_grad(p, 1, &w[i], NULL, 1.0, &gd, NULL);
			is_float(gd, fd, 2e-4 * (1 + fabs(fd)),
			         "%s: d(%g) = %.6g, central difference %.6g", name, (double)w[i],
			         gd, fd);
		}
	}
	{ /* both densities underflow: the narrow component has no weight left */
		float far = 1e4f, g = 0;
		bnn_prior_grad(&mixture, 1, &far, NULL, 1.0, &g, NULL);
		is_rel(g, 1e4 / (1.5 * 1.5), 1e-6, "scalemixture at w = 1e4: w/σ1² = %.9g", g);
		is_rel(bnn_prior_neg_log(&mixture, 1, &far),
		       -log(0.25) + log(1.5) + 0.5 * log(2 * PR_PI) + 0.5 * 1e8 / 2.25, 1e-12,
		       "scalemixture at w = 1e4: -log p finite, the wide component's");
	}
	is_str(bnn_prior_name(BNN_PRIOR_SCALEMIXTURE), "scalemixture", "the prior's name");
	is_str(bnn_prior_name(BNN_PRIOR_COUNT), "?", "a kind out of range");
}

/* The one example: x = (0.5, −1.5), t = 0.3. */
static float ex_x[2] = { 0.5f, -1.5f }, ex_y[1] = { 0.3f };

/* n steps of sgd (momentum 0: the first step is w − η·g either way) or Adam
 * on θ = (w1, w2, b), N = 1, computed in double; with_prior adds d(θ). */
static void hand_steps(const bnn_prior *p, int with_prior, int adam, int steps, double lr,
                       double th[3])
{
	double m[3] = { 0 }, v[3] = { 0 };
	int k, j;

	for (k = 1; k <= steps; k++) {
		double r = th[0] * ex_x[0] + th[1] * ex_x[1] + th[2] - ex_y[0];
		double g[3] = { r * ex_x[0], r * ex_x[1], r };
		for (j = 0; j < 3; j++) {
			g[j] += with_prior ? hand_grad(p, th[j]) : 0;
			if (!adam) {
				th[j] -= lr * g[j];
				continue;
			}
			m[j] = 0.9 * m[j] + 0.1 * g[j];
			v[j] = 0.999 * v[j] + 0.001 * g[j] * g[j];
			th[j] -= lr * (m[j] / (1 - pow(0.9, k))) /
			         (sqrt(v[j] / (1 - pow(0.999, k))) + 1e-8);
		}
	}
}

/* Trains m on the example with the optimizer for `steps` steps (one per
 * epoch) and checks θ against hand_steps from the same start. */
static void step_case(const bnn_model *m, const bnn_prior *p, int optimizer, int steps, int lrt)
{
	bnn_dataset ds = { .n = 1, .features = 2, .rank = 1, .shape = { 2 }, .targets = 1 };
	bnn_train_options o = bnn_train_defaults();
	const char *opt = bnn_optimizer_name(optimizer);
	double lr = 0.05, th[3], plain[3], start[3];
	bnn_state st;
	bnn_err err;
	int j, adam = optimizer != BNN_OPT_SGD, rc;
	double apart = 0;

	ds.x = ex_x;
	ds.y = ex_y;
	o.optimizer = optimizer;
	o.epochs = steps;
	o.batch = 1;
	o.schedule.lr = lr;
	o.valid_fraction = 0;
	if (optimizer == BNN_OPT_SGD)
		o.sgd.momentum = 0;
	if (optimizer == BNN_OPT_BBB) {
		o.sigma0 = 1e-30;
		o.mc = 1;
		o.lrt = lrt;
	}
	if (bnn_state_init(&st, m, 7, &err))
		tap_bail_out("%s", err.message);
	if (m->nparams != 3)
		tap_bail_out("%s has %ld parameters, not 3", m->name, m->nparams);
	st.params[2] = 0.1f; /* the bias off 0, where the Laplace prior's kink is and
	                       bbb's sample μ + σε (σ = 1e-30) has another sign */
	for (j = 0; j < 3; j++)
		th[j] = plain[j] = start[j] = st.params[j];
	hand_steps(p, 1, adam, steps, lr, th);
	hand_steps(p, 0, adam, steps, lr, plain);
	rc = bnn_train(&st, &(bnn_train_io){ .train = &ds }, &o, &err);
	is_int(rc, BNN_OK, "%s: %s trains (%s)", m->name, opt, rc ? err.message : "ok");
	for (j = 0; j < 3; j++) {
		/* within 1e-5 of the size of the terms (start and steps), whose
		 * float sum may cancel (a bias near 0 after two steps) */
		is_float(st.params[j], th[j], 1e-5 * (fabs(start[j]) + steps * lr),
		         "%s: %s%s, %d step(s): θ%d = %.9g, by hand %.9g", m->name, opt,
		         optimizer == BNN_OPT_BBB ? (lrt ? " lrt" : " sample") : "", steps, j,
		         st.params[j], th[j]);
		apart = fmax(apart, fabs(th[j] - plain[j]) / fabs(th[j]));
	}
	ok(apart > 1e-3, "%s: %s: without the prior's term θ would differ by %.3g (relative)",
	   m->name, opt, apart);
	bnn_state_free(&st);
}

int main(void)
{
	bnn_set_threads(1);
	test_gradients();
	step_case(&pr_lap_model, &laplace_half, BNN_OPT_SGD, 1, 0);
	step_case(&pr_mix_model, &mixture, BNN_OPT_SGD, 1, 0);
	step_case(&pr_lap_model, &laplace_half, BNN_OPT_ADAM, 2, 0);
	step_case(&pr_mix_model, &mixture, BNN_OPT_ADAM, 2, 0);
	step_case(&pr_lapmf_model, &laplace_half, BNN_OPT_BBB, 2, 0);
	step_case(&pr_mixmf_model, &mixture, BNN_OPT_BBB, 2, 0);
	step_case(&pr_lapmf_model, &laplace_half, BNN_OPT_BBB, 2, 1);
	step_case(&pr_mixmf_model, &mixture, BNN_OPT_BBB, 2, 1);
	return tap_done();
}
