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
 * densities so that neither underflows in the tails.  That difference is
 * c0 + c1·w² with constants of the prior, so an element costs one
 * exponential (the first version, with the four logarithms per element,
 * made bbb's step on a 67k-parameter MLP 3.5 times slower).
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

/* The scale mixture's constants: its log-odds at w are c0 + c1·w², and
 * d = w·(1/σ2² + r·(1/σ1² − 1/σ2²)) with r = 1/(1 + e^−(c0 + c1·w²)). */
struct mixture_coef {
	double c0, c1; /* log(π σ2 / ((1 − π) σ1)), ½(1/σ2² − 1/σ1²) */
	double i2, di; /* 1/σ2², 1/σ1² − 1/σ2² */
};

static struct mixture_coef mixture_coef(const bnn_prior *p)
{
	struct mixture_coef c;
	double i1 = 1 / (p->sigma1 * p->sigma1);

	c.i2 = 1 / (p->sigma2 * p->sigma2);
	c.c0 = log(p->pi) - log1p(-p->pi) + log(p->sigma2) - log(p->sigma1);
	c.c1 = 0.5 * (c.i2 - i1);
	c.di = i1 - c.i2;
	return c;
}

/* d(−log p)/dw of the scale mixture at w: one exponential, of −|log-odds|
 * (so that it cannot overflow). */
static inline double mixture_grad(const struct mixture_coef *c, double w)
{
	double d = c->c0 + c->c1 * w * w, e = exp(-fabs(d));
	double r = d >= 0 ? 1 / (1 + e) : e / (1 + e);

	return w * (c->i2 + r * c->di);
}

double bnn_prior_neg_log(const bnn_prior *p, long n, const float *w)
{
	double sum = 0;
	long i;

	for (i = 0; i < n; i++)
		sum += prior_neg_log_one(p, (double)w[i]);
	return sum;
}

/* g += scale·d(w), and g_sigma += scale·d(w)·ε when eps is given; one
 * loop per kind, so that the kind is not tested per element. */
void bnn_prior_grad(const bnn_prior *p, long n, const float *w, const float *eps, double scale,
                    float *g, float *g_sigma)
{
	long i;

	if (p->kind == BNN_PRIOR_SCALEMIXTURE) {
		struct mixture_coef c = mixture_coef(p);
		for (i = 0; i < n; i++) {
			double d = scale * mixture_grad(&c, (double)w[i]);
			g[i] += (float)d;
			if (eps)
				g_sigma[i] += (float)(d * eps[i]);
		}
	} else if (p->kind == BNN_PRIOR_LAPLACE) {
		float s = (float)(scale / p->scale); /* sign(w)·scale/b */
		for (i = 0; i < n; i++) {
			float d = w[i] > 0 ? s : w[i] < 0 ? -s : 0.0f;
			g[i] += d;
			if (eps)
				g_sigma[i] += d * eps[i];
		}
	} else {
		for (i = 0; i < n; i++) {
			double d = scale * p->precision * w[i];
			g[i] += (float)d;
			if (eps)
				g_sigma[i] += (float)(d * eps[i]);
		}
	}
}
