/*
 * laplace.c: the diagonal Laplace posterior of a trained point network
 * (MacKay 1992; Daxberger et al. 2021, "Laplace Redux", sections 2-3):
 * q(θ) = N(θ*, diag(δ + h)^(-1)) around the trained parameters θ*, with h
 * the diagonal of the generalized Gauss-Newton matrix Σ_i J_iᵀ Λ_i J_i of
 * the training data (Λ_i the Hessian of −log p(y | f) in the outputs f).
 *
 * h comes from the generated pass's mean squared per-example gradients
 * (bnn_pass.sqgrad, VOGN's Gauss-Newton diagonal): no derivative code of
 * its own.  Squared gradients at the data's labels are the *empirical*
 * Fisher Σ_i (J_iᵀ r_i)², which is not the GGN (Kunstner et al. 2019);
 * squared gradients at labels ŷ drawn from the model's own predictive
 * p(y | x_i, θ*) are the *MC Fisher*: E_ŷ[(J_iᵀ ∇_f ℓ(ŷ))²] =
 * diag(J_iᵀ E_ŷ[∇_f ℓ ∇_f ℓᵀ] J_i) = diag(J_iᵀ Λ_i J_i) for the
 * exponential-family likelihoods here (categorical, bernoulli, gaussian),
 * an unbiased estimate of the GGN diagonal.  The MC Fisher is the default;
 * the empirical one is an option (docs/laplace.md).
 *
 * The prior precision δ is given, or chosen by the Laplace approximation
 * of the marginal likelihood (Immer et al. 2021, eq. 4, with an isotropic
 * prior): log Z(δ) = −nll − ½δ‖θ*‖² + (P/2)·log δ − ½Σ_j log(h_j + δ),
 * concave in δ, maximised where its derivative vanishes.
 *
 * bnn_laplace is also the entry of the last-layer fits (laplace_kron.c,
 * laplace_last_layer.c), which its defaults choose: sampling the diagonal
 * of every weight through the non-linear network predicts badly
 * (docs/laplace.md), and Laplace Redux recommends the last layer.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bnn.h"
#include "base/floats.h"
#include "train_internal.h"

bnn_laplace_options bnn_laplace_defaults(void)
{
	bnn_laplace_options o;

	memset(&o, 0, sizeof o);
	o.prior_precision = NAN; /* auto: δ = 1 predicted badly (docs/laplace.md) */
	o.last_layer = 1;        /* the diagonal of every weight predicts badly by
	                            sampling (docs/laplace.md); Laplace Redux's default */
	o.structure = BNN_LAPLACE_KRON;
	o.samples = 1;
	o.batch = 256;
	o.seed = 1;
	return o;
}

/* Immer et al. 2021, eq. 4, for n parameters of squared norm sq and a
 * posterior precision of log determinant logdet. */
double train_laplace_log_marglik(long n, double sq, double logdet, double nll, double delta)
{
	return -nll - 0.5 * delta * sq + 0.5 * (double)n * log(delta) - 0.5 * logdet;
}

/* Hands a finished fit to st: p gets the fit's description (its kind,
 * Hessian, δ and examples) and the state, whose σ becomes sigma (taken;
 * it may be st's own), and rep, when given, what the fit found and its
 * wall time since t0.  Every Laplace fit ends here (diagonal, last-layer
 * full and Kronecker-factored). */
void train_laplace_finish(bnn_state *st, bnn_posthoc *p, float *sigma,
                          const struct train_laplace_fit *fit, bnn_laplace_report *rep)
{
	struct timespec t1;

	p->kind = fit->kind;
	p->prior_precision = fit->delta;
	p->examples = fit->examples;
	snprintf(p->hessian, sizeof p->hessian, "%s", fit->hessian);
	if (sigma != st->sigma) {
		free(st->sigma);
		st->sigma = sigma;
	}
	train_posthoc_install(st, p);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rep) {
		rep->prior_precision = fit->delta;
		rep->nll = fit->nll;
		rep->log_marglik = fit->log_marglik;
		rep->seconds = (double)(t1.tv_sec - fit->t0.tv_sec) +
		               1e-9 * (double)(t1.tv_nsec - fit->t0.tv_nsec);
	}
}

double bnn_laplace_log_marglik(long n, const float *theta, const double *h, double nll,
                               double delta)
{
	double sq = 0, logdet = 0;
	long j;

	for (j = 0; j < n; j++) {
		sq += (double)theta[j] * (double)theta[j];
		logdet += log(h[j] + delta);
	}
	return train_laplace_log_marglik(n, sq, logdet, nll, delta);
}

/* d log Z / dδ = −½‖θ‖² + P/(2δ) − ½Σ_j 1/(h_j + δ): decreasing in δ. */
static double laplace_dlogz(long n, double sq, const double *h, double delta)
{
	double s = 0;
	long j;

	for (j = 0; j < n; j++)
		s += 1.0 / (h[j] + delta);
	return -0.5 * sq + 0.5 * (double)n / delta - 0.5 * s;
}

double bnn_laplace_best_delta(long n, const float *theta, const double *h)
{
	double lo = log(1e-8), hi = log(1e8), sq = 0;
	long j;
	int it;

	for (j = 0; j < n; j++)
		sq += (double)theta[j] * (double)theta[j];
	if (laplace_dlogz(n, sq, h, exp(lo)) <= 0)
		return exp(lo);
	if (laplace_dlogz(n, sq, h, exp(hi)) >= 0)
		return exp(hi);
	for (it = 0; it < 100; it++) { /* bisection in log δ: to 1e-14 relative */
		double mid = 0.5 * (lo + hi);
		if (laplace_dlogz(n, sq, h, exp(mid)) > 0)
			lo = mid;
		else
			hi = mid;
	}
	return exp(0.5 * (lo + hi));
}

/* σ of each output of a gaussian model at the parameters w. */
static double laplace_gaussian_sigma(const bnn_model *m, const float *w, long j)
{
	int i;

	for (i = 0; i < m->ntensors; i++)
		if (m->tensors[i].role == BNN_ROLE_LOG_SIGMA && j < m->tensors[i].size)
			return exp((double)w[m->tensors[i].offset + j]);
	return m->sigma;
}

/* Labels drawn from the predictive of b rows of outputs z: a class from
 * the softmax, a 0/1 per label from σ(z), or z + σε. */
static void laplace_draw_labels(const bnn_model *m, const float *w, const float *z, long b,
                                float *y, bnn_rng *rng)
{
	long k = m->outputs, r, j;

	for (r = 0; r < b; r++) {
		const float *zr = z + r * k;
		if (m->likelihood == BNN_LIKELIHOOD_CATEGORICAL) {
			double zmax = zr[0], norm = 0, u, c = 0;
			for (j = 1; j < k; j++)
				zmax = zr[j] > zmax ? zr[j] : zmax;
			for (j = 0; j < k; j++)
				norm += exp((double)zr[j] - zmax);
			u = bnn_rng_uniform(rng) * norm;
			for (j = 0; j < k - 1; j++) {
				c += exp((double)zr[j] - zmax);
				if (u < c)
					break;
			}
			y[r] = (float)j;
		} else if (m->likelihood == BNN_LIKELIHOOD_BERNOULLI) {
			for (j = 0; j < k; j++)
				y[r * k + j] =
				        bnn_rng_uniform(rng) < 1.0 / (1.0 + exp(-(double)zr[j]))
				                ? 1.0f
				                : 0.0f;
		} else {
			float e[1];
			for (j = 0; j < k; j++) {
				bnn_rng_normal(rng, e, 1);
				y[r * k + j] = (float)((double)zr[j] +
				                       laplace_gaussian_sigma(m, w, j) * e[0]);
			}
		}
	}
}

/* What a Laplace fit works with. */
struct laplace_fit {
	const bnn_state *st;
	const bnn_model *m;
	const bnn_laplace_options *o;
	bnn_rng rng;
	double *h;        /* Σ_i of the squared gradients */
	float *sq, *grad; /* one pass's */
	float *ws, *z, *y;
};

static void laplace_fit_free(struct laplace_fit *f)
{
	free(f->h);
	free(f->sq);
	free(f->grad);
	free(f->ws);
	free(f->z);
	free(f->y);
}

/* One pass at θ* over b rows: the NLL of targets y, and with sq the
 * squared gradients added b times (the pass gives their mean) times wt. */
static double laplace_pass(struct laplace_fit *f, const float *x, const float *y, long b,
                           float *out, double wt)
{
	bnn_pass p;
	double nll;
	long j;

	memset(&p, 0, sizeof p);
	p.w = f->st->params;
	p.x = x;
	p.y = y;
	p.batch = b;
	p.ws = f->ws;
	p.out = out;
	p.stats = f->st->stats; /* train = 0: the network as it predicts */
	if (!out) {
		p.grad = f->grad;
		p.sqgrad = f->sq;
	}
	nll = f->m->pass(&p);
	for (j = 0; !out && j < f->m->nparams; j++)
		f->h[j] += wt * (double)b * (double)f->sq[j];
	return nll;
}

/* h and the NLL over ds, batch by batch. */
static double laplace_accumulate(struct laplace_fit *f, const bnn_dataset *ds)
{
	const bnn_model *m = f->m;
	long i0, s, batch = f->o->batch;
	double nll = 0;

	for (i0 = 0; i0 < ds->n; i0 += batch) {
		long b = ds->n - i0 < batch ? ds->n - i0 : batch;
		const float *x = ds->x + i0 * m->inputs, *y = ds->y + i0 * m->targets;
		if (f->o->empirical) {
			nll += laplace_pass(f, x, y, b, NULL, 1.0);
			continue;
		}
		nll += laplace_pass(f, x, y, b, f->z, 0);
		for (s = 0; s < f->o->samples; s++) {
			laplace_draw_labels(m, f->st->params, f->z, b, f->y, &f->rng);
			laplace_pass(f, x, f->y, b, NULL, 1.0 / (double)f->o->samples);
		}
	}
	return nll;
}

int bnn_laplace_check(const bnn_state *st, const bnn_laplace_options *o, bnn_err *err)
{
	const bnn_model *m;
	int rc;

	if (!st || !st->model || !st->params || !o)
		return bnn_fail(err, BNN_EINVAL, "bnn_laplace: no %s given",
		                !o ? "options" : "state");
	m = st->model;
	if ((rc = train_posthoc_layers_check(m, "laplace", err)))
		return rc;
	if (st->posthoc || st->sigma)
		return bnn_fail(err, BNN_EUNSUPPORTED,
		                "laplace needs a point network, and this state has a %s posterior "
		                "already",
		                st->posthoc ? train_posthoc_name(st->posthoc) : "variational");
	if (!(isnan(o->prior_precision) ||
	      (o->prior_precision > 0 && isfinite(o->prior_precision))))
		return bnn_fail(err, BNN_EINVAL,
		                "the prior precision must be a number > 0 (or auto), not %g",
		                o->prior_precision);
	if (o->samples < 1 || o->batch < 1)
		return bnn_fail(err, BNN_EINVAL, "laplace: %s must be at least 1",
		                o->samples < 1 ? "the label samples" : "the batch");
	if (o->last_layer && (o->empirical || o->samples != 1))
		return bnn_fail(
		        err, BNN_EINVAL,
		        "laplace: the empirical Fisher and label samples belong to the fit "
		        "of all weights (last_layer 0): the last layer's GGN is exact, with "
		        "no label draws");
	if ((m->likelihood != BNN_LIKELIHOOD_CATEGORICAL &&
	     m->likelihood != BNN_LIKELIHOOD_BERNOULLI &&
	     m->likelihood != BNN_LIKELIHOOD_GAUSSIAN) ||
	    m->sigma_learned == BNN_SCALE_NODE)
		return bnn_fail(
		        err, BNN_EUNSUPPORTED,
		        "laplace (the posterior approximation) draws the Fisher's labels "
		        "from a categorical, bernoulli or gaussian likelihood of a fixed or "
		        "learned scale, and model '%s' is %s%s",
		        m->name, bnn_likelihood_name(m->likelihood),
		        m->sigma_learned == BNN_SCALE_NODE ? " of a scale given by a node" : "");
	if (o->last_layer)
		return train_laplace_ll_check(m, o->structure == BNN_LAPLACE_FULL, err);
	return BNN_OK;
}

/* bnn_laplace_check, then the data: they fit the model, and a
 * categorical model's labels are its classes. */
static int laplace_check(const bnn_state *st, const bnn_dataset *ds, const bnn_laplace_options *o,
                         bnn_err *err)
{
	const bnn_model *m;
	long i;
	int rc;

	if ((rc = bnn_laplace_check(st, o, err)))
		return rc;
	m = st->model;
	if ((rc = bnn_data_fits(m, ds, 1, err)))
		return rc;
	for (i = 0; m->likelihood == BNN_LIKELIHOOD_CATEGORICAL && i < ds->n; i++)
		if (!(ds->y[i] >= 0 && ds->y[i] < (float)m->outputs &&
		      ds->y[i] == floorf(ds->y[i])))
			return bnn_fail(err, BNN_EINVAL,
			                "example %ld has label %g, not a class of model '%s' (0 to "
			                "%ld)",
			                i, (double)ds->y[i], m->name, m->outputs - 1);
	return BNN_OK;
}

int bnn_laplace(bnn_state *st, const bnn_dataset *ds, const bnn_laplace_options *o,
                bnn_laplace_report *rep, bnn_err *err)
{
	struct laplace_fit f;
	struct timespec t0;
	bnn_posthoc *p = NULL;
	long j, batch, n;
	double nll, delta;
	int rc;

	if ((rc = laplace_check(st, ds, o, err)))
		return rc;
	if (o->last_layer)
		return o->structure == BNN_LAPLACE_FULL
		               ? train_laplace_last_layer(st, ds, o, rep, err)
		               : train_laplace_kron(st, ds, o, rep, err);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&f, 0, sizeof f);
	f.st = st;
	f.m = st->model;
	f.o = o;
	n = f.m->nparams;
	batch = o->batch < ds->n ? o->batch : ds->n;
	bnn_rng_seed(&f.rng, o->seed);
	f.h = calloc((size_t)n, sizeof *f.h);
	f.sq = bnn_floats_alloc(n);
	f.grad = bnn_floats_alloc(n);
	f.ws = bnn_floats_alloc((long)f.m->workspace_floats(batch) + 1);
	f.z = bnn_floats_alloc(batch * f.m->outputs);
	f.y = bnn_floats_alloc(batch * f.m->targets);
	p = calloc(1, sizeof *p);
	if (!f.h || !f.sq || !f.grad || !f.ws || !f.z || !f.y || !p ||
	    !(st->sigma = bnn_floats_alloc(n))) {
		rc = bnn_fail(err, BNN_ENOMEM, "out of memory for the Laplace posterior");
		goto done;
	}
	nll = laplace_accumulate(&f, ds);
	delta = isnan(o->prior_precision) ? bnn_laplace_best_delta(n, st->params, f.h)
	                                  : o->prior_precision;
	for (j = 0; j < n; j++) /* the posterior precision δ + h */
		st->sigma[j] = (float)(1.0 / sqrt(delta + f.h[j]));
	train_laplace_finish(
	        st, p, st->sigma,
	        &(struct train_laplace_fit){
	                .kind = BNN_POSTHOC_LAPLACE,
	                .hessian = o->empirical ? "emp_fisher" : "mc_fisher",
	                .delta = delta,
	                .nll = nll,
	                .log_marglik = bnn_laplace_log_marglik(n, st->params, f.h, nll, delta),
	                .examples = ds->n,
	                .t0 = t0 },
	        rep);
	p = NULL;
done:
	if (rc && st->sigma) {
		free(st->sigma);
		st->sigma = NULL;
	}
	free(p);
	laplace_fit_free(&f);
	return rc;
}
