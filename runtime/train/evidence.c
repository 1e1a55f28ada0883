/*
 * evidence.c: choosing the prior precision of a meanfield model by the
 * Laplace estimate of its log marginal likelihood (MacKay 1992, "A
 * practical Bayesian framework for backpropagation networks", cited by
 * IVON's paper, ../shared/papers 003; Immer et al. 2021, "Scalable
 * marginal likelihood estimation for model selection in deep learning",
 * with a diagonal Hessian), using the
 * curvature the optimizer learned in training as the data term's Hessian
 * instead of computing one: IVON's h and VOGN's s estimate the mean over
 * the examples of the diagonal Hessian (GGN for VOGN) at the mean m, so
 * the data term's Hessian over the N examples of the data is N h_j.  (The
 * optimizers' own posteriors scale it otherwise, IVON's precision being
 * λ(h + δ_IVON) with the effective sample size λ and VOGN's ρN s + τδ;
 * those tempered posteriors are not the model's evidence, but they decide
 * how the chosen δ maps back to the option delta: δ/λ for IVON, δ/τ for
 * VOGN.)  With a Gaussian prior N(0, 1/δ) on the P parameters that have a
 * posterior:
 *
 *   log Z(δ) ≈ log p(D | m) + log p(m) + ½ P log 2π − ½ log det(H + δ I)
 *            = −Σ_i ℓ_i(m) − ½ δ ‖m‖² + ½ P log δ − ½ Σ_j log(N h_j + δ)
 *
 * (the 2π terms of the prior and of the Laplace volume cancel).  Only the
 * last three terms depend on δ; m and h are those of the run, so the
 * estimate is MacKay's one-step approximation: retrain with the chosen δ
 * and repeat to converge (docs/tune.md).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"

double bnn_laplace_log_evidence(long n, const float *mean, const float *h, const float *sigma,
                                double data_n, double nll, double delta)
{
	double sum_sq = 0, log_det = 0;
	long j, p = 0;

	for (j = 0; j < n; j++) {
		double hj;

		if (sigma && !(sigma[j] > 0))
			continue;
		hj = h[j] > 0 ? h[j] : 0; /* an estimate below 0 has no curvature to give */
		sum_sq += (double)mean[j] * mean[j];
		log_det += log(data_n * hj + delta);
		p++;
	}
	return -nll - 0.5 * delta * sum_sq + 0.5 * (double)p * log(delta) - 0.5 * log_det;
}

/* The options the state was trained with (its checkpoint's text). */
static int evidence_options(const bnn_state *st, bnn_train_options *o, bnn_err *err)
{
	bnn_err inner;

	*o = bnn_train_defaults();
	if (bnn_train_options_from_text(o, st->options, &inner))
		return bnn_fail(err, BNN_EFORMAT, "the checkpoint's options: %s", inner.message);
	return BNN_OK;
}

/* The prior precision the run used: the option delta on the prior's scale
 * (IVON's is over λ, VOGN's is tempered by τ), else the model's. */
static double evidence_trained_delta(const bnn_state *st, const bnn_train_options *o,
                                     double to_option)
{
	if (isfinite(o->delta))
		return o->delta / to_option;
	return st->model->prior_precision;
}

int bnn_evidence_init(bnn_evidence *ev, const bnn_state *st, const bnn_dataset *ds, bnn_err *err)
{
	bnn_train_options o;
	long j;
	int rc;

	if (!ev || !st || !ds)
		return bnn_fail(err, BNN_EINVAL, "bnn_evidence_init: no %s given",
		                !ev   ? "result"
		                : !st ? "state"
		                      : "data");
	memset(ev, 0, sizeof *ev);
	if (!st->sigma || (st->optimizer != BNN_OPT_IVON && st->optimizer != BNN_OPT_VOGN) ||
	    !st->opt[1])
		return bnn_fail(err, BNN_EUNSUPPORTED,
		                "the evidence needs the curvature IVON or VOGN learned, and this "
		                "state was trained by %s%s",
		                st->optimizer >= 0 ? bnn_optimizer_name(st->optimizer) : "nothing",
		                st->sigma ? "" : " without a posterior");
	if (st->model->prior.kind != BNN_PRIOR_GAUSSIAN) /* vogn and ivon refuse them too */
		return bnn_fail(err, BNN_EUNSUPPORTED,
		                "the evidence is that of a gaussian prior's precision, and model "
		                "'%s' has a %s prior",
		                st->model->name, bnn_prior_name(st->model->prior.kind));
	if ((rc = evidence_options(st, &o, err)) || (rc = bnn_data_fits(st->model, ds, 1, err)))
		return rc;
	ev->n = (double)ds->n;             /* h is the mean over the examples: H = N h */
	if (st->optimizer == BNN_OPT_IVON) /* train_step.c: δ_IVON = δ / λ */
		ev->to_option = 1 / (o.ess > 0 ? o.ess : ev->n);
	else /* VOGN's prior term is τδ (optim_vogn.c) */
		ev->to_option = o.vogn.tau > 0 ? 1 / o.vogn.tau : 1;
	ev->delta = evidence_trained_delta(st, &o, ev->to_option);
	if ((rc = bnn_model_outputs(st, ds, &(bnn_example_range){ NULL, ds->n, 256 }, NULL,
	                            &ev->nll, err)))
		return rc;
	ev->mean = st->params;
	ev->h = st->opt[1];
	ev->sigma = st->sigma;
	ev->nparams = st->model->nparams;
	for (j = 0; j < ev->nparams; j++)
		if (ev->sigma[j] > 0) {
			ev->params++;
			ev->sum_sq += (double)ev->mean[j] * ev->mean[j];
		}
	if (ev->params == 0)
		return bnn_fail(err, BNN_EUNSUPPORTED,
		                "the model has no parameter with a posterior (no meanfield layer)");
	return BNN_OK;
}

double bnn_evidence_at(const bnn_evidence *ev, double delta)
{
	return bnn_laplace_log_evidence(ev->nparams, ev->mean, ev->h, ev->sigma, ev->n, ev->nll,
	                                delta);
}

/* d log Z/dδ = −½‖m‖² + P/(2δ) − ½ Σ_j 1/(N h_j + δ): decreasing in δ (the
 * second derivative, −P/(2δ²) + ½ Σ_j 1/(N h_j + δ)², is below 0 as
 * N h_j ≥ 0), so log Z is concave in δ and has one maximum, where
 * δ‖m‖² = Σ_j N h_j/(N h_j + δ), MacKay's effective number of parameters. */
static double evidence_slope(const bnn_evidence *ev, double delta)
{
	double sum_sq = 0, inv = 0;
	long j, p = 0;

	for (j = 0; j < ev->nparams; j++) {
		if (ev->sigma && !(ev->sigma[j] > 0))
			continue;
		sum_sq += (double)ev->mean[j] * ev->mean[j];
		inv += 1 / (ev->n * (ev->h[j] > 0 ? ev->h[j] : 0) + delta);
		p++;
	}
	return -0.5 * sum_sq + 0.5 * (double)p / delta - 0.5 * inv;
}

double bnn_evidence_best(const bnn_evidence *ev, double lo, double hi)
{
	/* bisection of the slope on log δ: to the last bit in 200 steps */
	double a = log(lo), b = log(hi), mid;
	int i;

	if (evidence_slope(ev, lo) <= 0)
		return lo;
	if (evidence_slope(ev, hi) >= 0)
		return hi;
	for (i = 0; i < 200 && b - a > 0; i++) {
		mid = (a + b) / 2;
		if (mid <= a || mid >= b)
			break;
		if (evidence_slope(ev, exp(mid)) > 0)
			a = mid;
		else
			b = mid;
	}
	return exp((a + b) / 2);
}
