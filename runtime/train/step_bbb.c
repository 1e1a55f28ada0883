/*
 * step_bbb.c: Bayes-by-Backprop (its row is in optimizers.c; the update
 * rule is the fused loop of optim_bbb.c).
 *
 * K passes with the local reparameterisation trick in the generated code
 * (w = μ, sigma = σ), giving the gradients with respect to μ and σ
 * (meanfield layers the code does not sample that way, those without
 * BNN_CAP_SIGMA_LRT such as conv2d and batchnorm, get a weight sample in
 * w, as below), or with lrt = 0 K weight samples θ = μ + σ∘ε, g at θ and
 * g_σ = g∘ε; KL/N is added and Adam steps μ and ρ (σ = softplus ρ).  The
 * state slots: Adam's moments of μ in opt[0..1], ρ in opt[2], Adam's
 * moments of ρ in opt[3..4].  whvi layers sample g inside every pass, and
 * their KL/N and its gradient (whvi_kl.c) are added to the pass's
 * gradient before the update.
 */
#include <string.h>

#include "base/floats.h"
#include "train_internal.h"

/* Does this run's update draw the next step's sample?  One sample per
 * step, and a sample of the weights (not the local reparameterisation),
 * in one process (with several MPI ranks g_σ = g∘ε of each rank's own ε
 * is summed before the update). */
static int bbb_fused(const struct trainer *t)
{
	return t->o->mc == 1 && !t->o->lrt && t->nranks == 1;
}

int train_bbb_setup(struct trainer *t, bnn_err *err)
{
	const bnn_train_options *o = t->o;
	long n = t->m->nparams;
	int i;

	/* the generated code samples only the layers with BNN_CAP_SIGMA_LRT
	 * by the local reparameterisation trick; lrt passes give the others
	 * a weight sample */
	for (i = 0; i < t->ntensors; i++) {
		struct train_tensor *tt = &t->tensors[i];
		tt->weight_sample =
		        train_stochastic(tt) && o->lrt && !(tt->caps & BNN_CAP_SIGMA_LRT);
		t->mixed_lrt |= tt->weight_sample;
	}
	if (!(t->gsig = train_dist_floats(t, n)))
		return bnn_fail(err, BNN_ENOMEM, "out of memory for training buffers");
	if ((!o->lrt || t->mixed_lrt || t->priors) && /* priors: a weight sample */
	    (!(t->theta = bnn_floats_alloc(n)) || !(t->eps = bnn_floats_alloc(n))))
		return bnn_fail(err, BNN_ENOMEM, "out of memory for training buffers");
	if (o->mc > 1 && (!(t->gk = bnn_floats_alloc(n)) || !(t->gsigk = bnn_floats_zeroed(n))))
		return bnn_fail(err, BNN_ENOMEM, "out of memory for training buffers");
	return BNN_OK;
}

/* A fresh state: ρ from sigma0 for the stochastic tensors. */
void train_bbb_start(struct trainer *t, const struct train_tensor *tt)
{
	bnn_state *st = t->st;
	float rho = (float)bnn_softplus_inverse(t->o->sigma0);
	long j;

	if (!train_stochastic(tt))
		return;
	for (j = 0; j < tt->size; j++)
		st->opt[2][tt->offset + j] = rho;
	bnn_bbb_sigma(tt->size, st->opt[2] + tt->offset, st->sigma + tt->offset);
}

void train_bbb_sigma(struct trainer *t, const struct train_tensor *tt, double tau)
{
	(void)tau;
	bnn_bbb_sigma(tt->size, t->st->opt[2] + tt->offset,
	              t->st->sigma + tt->offset); /* σ = softplus ρ */
}

/* Bayes-by-Backprop's Adam and KL settings for tensor tt. */
static void bbb_params(const struct trainer *t, const struct train_tensor *tt, bnn_bbb_params *p)
{
	*p = bnn_bbb_defaults();
	p->beta1 = t->o->adam.beta1;
	p->beta2 = t->o->adam.beta2;
	p->eps = t->o->adam.eps;
	p->prior_precision = tt->delta;
	p->n_data = t->n_data;
}

void train_bbb_update(struct trainer *t, const struct train_piece *p)
{
	bnn_state *st = t->st;
	const struct train_tensor *tt = p->tt;
	long a = p->a;
	bnn_bbb_arrays arr = { .n = p->len,
		               .mu = st->params + a,
		               .rho = train_stochastic(tt) ? st->opt[2] + a : NULL,
		               .sigma = st->sigma + a,
		               .g_mu = t->grad + a,
		               .g_sigma = t->gsig + a,
		               .m_mu = st->opt[0] + a,
		               .v_mu = st->opt[1] + a,
		               .m_rho = st->opt[3] + a,
		               .v_rho = st->opt[4] + a,
		               /* the sample's arrays exist when the update draws it */
		               .eps = p->noise ? t->eps + a : NULL,
		               .theta = p->noise ? t->theta + a : NULL,
		               .noise = p->noise };
	bnn_bbb_params bp;

	bbb_params(t, tt, &bp);
	if (p->noise)
		bnn_bbb_step_sample(&arr, p->lr, st->step, &bp);
	else
		bnn_bbb_step(&arr, p->lr, st->step, &bp);
}

int train_bbb_text(const bnn_train_options *o, char *buf, int n)
{
	n = train_adam_text(o, buf, n);
	return train_text_append(buf, n, " delta=%.9g mc=%d sigma0=%.9g lrt=%d", o->delta, o->mc,
	                         o->sigma0, o->lrt);
}

/* Bayes-by-Backprop's NLL gradients from one weight sample θ = μ + σ∘ε
 * (Blundell et al., section 3.2): g at θ, and g_σ = g∘ε. */
static double bbb_weight_sample(struct trainer *t, long b, float *g, float *gs)
{
	bnn_state *st = t->st;
	long i, n = t->m->nparams;
	double loss;

	bnn_posterior_sample(n, st->params, st->sigma, t->eps, t->theta, &t->noise);
	loss = train_pass(t, b, t->theta, NULL, g, NULL, NULL);
	/* element-wise: threads from two sampler chunks on, as the updates
	 * (below, no OpenMP construct: an inactive one costs 2 us) */
	if (n >= 2 * BNN_RNG_NORMAL_CHUNK) {
#pragma omp parallel for schedule(static)
		for (i = 0; i < n; i++)
			gs[i] = g[i] * t->eps[i];
	} else {
		for (i = 0; i < n; i++)
			gs[i] = g[i] * t->eps[i];
	}
	return loss;
}

/* A pass with the local reparameterisation trick (w = μ, sigma = σ): the
 * NLL gradients with respect to μ in g and to σ in gs.  The tensors of
 * meanfield layers that the generated code does not sample by the trick
 * (conv2d, batchnorm: they ignore sigma) get a weight sample θ = μ + σ∘ε
 * in w instead, and g_σ = g∘ε (Blundell et al., 3.2). */
static double bbb_lrt_pass(struct trainer *t, long b, float *g, float *gs)
{
	bnn_state *st = t->st;
	double loss;
	long j;
	int i;

	if (!t->mixed_lrt)
		return train_pass(t, b, st->params, st->sigma, g, NULL, gs);
	memcpy(t->theta, st->params, (size_t)t->m->nparams * sizeof *t->theta);
	for (i = 0; i < t->ntensors; i++) {
		const struct train_tensor *tt = &t->tensors[i];
		if (tt->weight_sample)
			bnn_posterior_sample(tt->size, st->params + tt->offset,
			                     st->sigma + tt->offset, t->eps + tt->offset,
			                     t->theta + tt->offset, &t->noise);
	}
	loss = train_pass(t, b, t->theta, st->sigma, g, NULL, gs);
	for (i = 0; i < t->ntensors; i++) {
		const struct train_tensor *tt = &t->tensors[i];
		if (tt->weight_sample)
			for (j = tt->offset; j < tt->offset + tt->size; j++)
				gs[j] = g[j] * t->eps[j];
	}
	return loss;
}

/* K passes, with the local reparameterisation (lrt) or a weight sample
 * each, then Adam on μ and ρ; with one weight sample per step, the update
 * draws the next (bnn_bbb_step_sample). */
double train_bbb_step(struct trainer *t, long b, float lr, double epochs)
{
	bnn_state *st = t->st;
	const bnn_train_options *o = t->o;
	long n = t->m->nparams;
	int k, K = o->mc;
	double loss = 0;

	(void)epochs;
	if (bbb_fused(t)) {
		if (!t->primed)
			train_sample_first(t, 0);
		loss = train_pass(t, b, t->theta, NULL, t->grad, NULL, NULL);
	} else {
		for (k = 0; k < K; k++) {
			float *g = K > 1 ? t->gk : t->grad, *gs = K > 1 ? t->gsigk : t->gsig;
			/* MPI: sums start per layer, unless a prior term is to be added */
			if (o->lrt && K == 1 && !t->mixed_lrt && !t->priors)
				train_dist_arm(t, t->grad, t->gsig, NULL);
			if (o->lrt)
				loss += bbb_lrt_pass(t, b, g, gs);
			else
				loss += bbb_weight_sample(t, b, g, gs);
			if (K > 1) {
				train_mc_average(n, t->grad, g, K, k == 0);
				train_mc_average(n, t->gsig, gs, K, k == 0);
			}
		}
	}
	train_whvi_kl_grad(t);
	if (t->priors) /* each rank's own sample: summed with the NLL's gradients */
		train_prior_sample_grad(t, bbb_fused(t));
	loss = train_dist_step(t, loss, t->grad, t->gsig, NULL); /* over the MPI ranks */
	if (t->clip > 0)
		bnn_clip_grad_norm(n, t->grad, t->clip);
	st->step++;
	if (bbb_fused(t))
		train_update_and_sample(t, lr, 0);
	else
		train_update_tensors(t, lr, 0);
	return loss / K;
}
