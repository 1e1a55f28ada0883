/*
 * prior.c: the priors over the parameters (bnn_model.h, struct bnn_prior)
 * as the optimizers that take a prior's gradient need them: −log p(w) and
 * its gradient, element by element (bnn_variational.h).
 *
 * The Gaussian prior is also kept in closed form where an optimizer has it
 * (BBB's KL, VOGN's and IVON's δ, weight decay): these functions are what
 * the other priors use in its place, the scale mixture of Blundell et al.
 * 2015 ("Weight uncertainty in neural networks", section 3.3, eq. (7)) and
 * the Laplace prior.  The scale mixture's derivative is that of
 * −log(π N1 + (1 − π) N2), −(π N1' + (1 − π) N2')/(π N1 + (1 − π) N2), with
 * N_k' = −w/σ_k² N_k: w·(r/σ1² + (1 − r)/σ2²), r the responsibility of the
 * first component, computed from the difference of the components' log
 * densities so that neither underflows in the tails.
 */
#include <math.h>

#include "bnn.h"

/* log(π N(w|0,σ1²)) − log((1 − π) N(w|0,σ2²)): the log-odds of the first
 * component at w. */
static double mixture_log_odds(const bnn_prior *p, double w)
{
	double a1 = log(p->pi) - log(p->sigma1) - 0.5 * w * w / (p->sigma1 * p->sigma1);
	double a2 = log1p(-p->pi) - log(p->sigma2) - 0.5 * w * w / (p->sigma2 * p->sigma2);

	return a1 - a2;
}

/* −log p(w) of one parameter. */
static double prior_neg_log_one(const bnn_prior *p, double w)
{
	const double half_log_2pi = 0.91893853320467274178;

	switch (p->kind) {
	case BNN_PRIOR_SCALEMIXTURE: {
		/* log(e^a1 + e^a2) = a2 + log(1 + e^(a1 − a2)), the larger first */
		double d = mixture_log_odds(p, w);
		double a2 = log1p(-p->pi) - log(p->sigma2) - 0.5 * w * w / (p->sigma2 * p->sigma2);
		double lse = d > 0 ? a2 + d + log1p(exp(-d)) : a2 + log1p(exp(d));
		return half_log_2pi - lse;
	}
	case BNN_PRIOR_LAPLACE:
		return fabs(w) / p->scale + log(2 * p->scale);
	default:
		return 0.5 * p->precision * w * w - 0.5 * log(p->precision) + half_log_2pi;
	}
}

/* d(−log p)/dw at w. */
static double prior_grad_one(const bnn_prior *p, double w)
{
	switch (p->kind) {
	case BNN_PRIOR_SCALEMIXTURE: {
		double d = mixture_log_odds(p, w);
		/* r = 1/(1 + e^−d), without overflow for either sign of d */
		double r = d >= 0 ? 1 / (1 + exp(-d)) : exp(d) / (1 + exp(d));
		return w * (r / (p->sigma1 * p->sigma1) + (1 - r) / (p->sigma2 * p->sigma2));
	}
	case BNN_PRIOR_LAPLACE:
		return w > 0 ? 1 / p->scale : w < 0 ? -1 / p->scale : 0;
	default:
		return p->precision * w;
	}
}

double bnn_prior_neg_log(const bnn_prior *p, long n, const float *w)
{
	double sum = 0;
	long i;

	for (i = 0; i < n; i++)
		sum += prior_neg_log_one(p, (double)w[i]);
	return sum;
}

void bnn_prior_grad(const bnn_prior *p, long n, const float *w, const float *eps, double scale,
                    float *g, float *g_sigma)
{
	long i;

	for (i = 0; i < n; i++) {
		double d = scale * prior_grad_one(p, (double)w[i]);

		g[i] += (float)d;
		if (eps)
			g_sigma[i] += (float)(d * eps[i]);
	}
}
