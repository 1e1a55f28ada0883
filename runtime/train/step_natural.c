/*
 * step_natural.c: the natural-gradient variational optimizers, vogn and
 * ivon (their rows are in optimizers.c; the update rules are the fused
 * loops of optim_vogn.c and optim_ivon.c).
 *
 *   vogn   K samples θ = μ + σ∘ε, each pass giving the gradient and the
 *          mean squared per-example gradients; their averages ĝ, ĥ drive
 *          Osawa et al.'s Alg. 1 lines 19-21.  s starts from the first
 *          minibatch's squared gradients at μ (Alg. 1 line 1, section 3).
 *   ivon   K samples; ĝ and ĥ = ĝ·(θ − μ)/σ² averaged (Shen et al.,
 *          Alg. 1 lines 2-3), then lines 4-8.
 *
 * With one sample per step (mc = 1, the default), the update and the next
 * step's sample are one loop (bnn_*_step_sample): the noise is drawn in
 * the blocks of bnn_posterior_sample, so a seed gives the same variates
 * either way, each array is read and written once per step, and σ is
 * derived from s or h only where it is read (the first sample, and at the
 * end of every epoch).  Tensors that are not stochastic are updated by the
 * same rule without noise: σ = 0, and IVON keeps their h at h0.
 */
#include <math.h>

#include "base/floats.h"
#include "train_internal.h"

/* VOGN's ĥ, the squared per-example gradients (its row's sqgrad_hessian);
 * IVON's is estimated from the sample instead. */
static int sqgrad_hessian(const struct trainer *t)
{
	return train_optimizers[t->o->optimizer].sqgrad_hessian;
}

int train_natural_setup(struct trainer *t, bnn_err *err)
{
	long n = t->m->nparams;
	int mc = t->o->mc;

	t->hess = train_dist_floats(t, n); /* IVON reads no entry of deterministic tensors */
	t->theta = bnn_floats_alloc(n);
	/* only IVON's ĥ reads ε, and with one sample it uses θ − μ */
	t->eps = !sqgrad_hessian(t) && (mc > 1 || t->nranks > 1) ? bnn_floats_alloc(n) : NULL;
	if (!t->hess || !t->theta || (!sqgrad_hessian(t) && (mc > 1 || t->nranks > 1) && !t->eps))
		return bnn_fail(err, BNN_ENOMEM, "out of memory for training buffers");
	if (mc > 1) {
		t->gk = bnn_floats_alloc(n);
		t->hk = sqgrad_hessian(t) ? bnn_floats_alloc(n) : NULL;
		if (!t->gk || (sqgrad_hessian(t) && !t->hk))
			return bnn_fail(err, BNN_ENOMEM, "out of memory for training buffers");
	}
	return BNN_OK;
}

/* ---- vogn ---------------------------------------------------------------- */

static void vogn_params(const struct trainer *t, const struct train_tensor *tt, double tau,
                        bnn_vogn_params *p)
{
	*p = bnn_vogn_defaults();
	p->beta1 = t->o->vogn.beta1;
	/* The option is the paper's β2, Alg. 1 line 20's weight of the new ĥ
	 * (docs/optimizers/vogn.md, "Convention"). */
	p->beta2 = t->o->vogn.beta2;
	p->tau = tau;
	p->delta = tt->delta;
	p->n_data = t->o->vogn.rho * t->n_data;
}

/* VOGN's τ at training progress `epochs`: linear from tau_start to tau. */
static double vogn_tau(const bnn_train_options *o, double epochs)
{
	double start = isnan(o->vogn.tau_start) ? o->vogn.tau : o->vogn.tau_start;

	if (o->vogn.tau_epochs <= 0 || epochs >= o->vogn.tau_epochs)
		return o->vogn.tau;
	return start + (o->vogn.tau - start) * epochs / o->vogn.tau_epochs;
}

void train_vogn_sigma(struct trainer *t, const struct train_tensor *tt, double tau)
{
	bnn_vogn_params vp;

	vogn_params(t, tt, tau, &vp);
	bnn_vogn_sigma(tt->size, t->st->opt[1] + tt->offset, t->st->sigma + tt->offset,
	               &vp); /* Alg. 1 line 9 */
}

/* VOGN, Alg. 1 line 1 and section 3: s0 is the mean of the squared
 * per-example gradients of the first minibatch at μ; σ follows (line 9). */
static void vogn_init_scale(struct trainer *t, long b, double tau)
{
	bnn_state *st = t->st;
	int i;

	train_dist_arm(t, st->opt[1], NULL, NULL); /* MPI: sums start per layer */
	train_pass(t, b, st->params, NULL, t->grad, st->opt[1], NULL);
	train_dist_step(t, 0, st->opt[1], NULL, NULL); /* over the MPI ranks */
	for (i = 0; i < t->ntensors; i++)
		if (train_stochastic(&t->tensors[i]))
			train_vogn_sigma(t, &t->tensors[i], tau);
}

void train_vogn_update(struct trainer *t, const struct train_piece *p)
{
	bnn_state *st = t->st;
	long a = p->a;
	bnn_vogn_arrays arr = { .n = p->len,
		                .mu = st->params + a,
		                .ghat = t->grad + a,
		                .hhat = t->hess + a,
		                .m = st->opt[0] + a,
		                .s = st->opt[1] + a,
		                .sigma = train_stochastic(p->tt) ? st->sigma + a : NULL,
		                .stochastic = train_stochastic(p->tt),
		                .theta = t->theta + a,
		                .noise = p->noise };
	bnn_vogn_params vp;

	vogn_params(t, p->tt, p->tau, &vp);
	if (p->noise)
		bnn_vogn_step_sample(&arr, p->lr, &vp);
	else
		bnn_vogn_step(&arr, p->lr, &vp);
}

int train_vogn_text(const bnn_train_options *o, char *buf, int n)
{
	return train_text_append(buf, n,
	                         " beta1=%.9g beta2=%.9g mc=%d delta=%.9g tau=%.9g "
	                         "tau_start=%.9g tau_epochs=%.9g rho=%.9g",
	                         (double)o->vogn.beta1, (double)o->vogn.beta2, o->mc, o->delta,
	                         o->vogn.tau, o->vogn.tau_start, o->vogn.tau_epochs, o->vogn.rho);
}

/* ---- ivon ---------------------------------------------------------------- */

static void ivon_params(const struct trainer *t, const struct train_tensor *tt, bnn_ivon_params *p)
{
	*p = bnn_ivon_defaults();
	p->beta1 = t->o->ivon.beta1;
	p->beta2 = t->o->ivon.beta2;
	p->h0 = t->h0; /* bnn_train_h0 */
	p->delta = tt->delta;
	p->ess = train_effective_n(t);
	p->clip_radius = t->o->ivon.clip_radius;
}

/* IVON, Alg. 1 init: h ← h0, and σ of the stochastic tensors. */
void train_ivon_start(struct trainer *t, const struct train_tensor *tt)
{
	bnn_state *st = t->st;
	bnn_ivon_params p;
	long j;

	ivon_params(t, tt, &p);
	for (j = 0; j < tt->size; j++)
		st->opt[1][tt->offset + j] = (float)p.h0;
	if (train_stochastic(tt))
		bnn_ivon_sigma(tt->size, st->opt[1] + tt->offset, st->sigma + tt->offset, &p);
}

void train_ivon_sigma(struct trainer *t, const struct train_tensor *tt, double tau)
{
	bnn_ivon_params ip;

	(void)tau;
	ivon_params(t, tt, &ip);
	bnn_ivon_sigma(tt->size, t->st->opt[1] + tt->offset, t->st->sigma + tt->offset,
	               &ip); /* Alg. 1 line 8 */
}

/* IVON's learning rate for tensor tt: α ← (h0 + δ)α (Alg. 1 "Optional"),
 * not with clipping, as the paper says. */
static float ivon_alpha(const struct trainer *t, const bnn_ivon_params *p, float lr)
{
	if (t->o->ivon.rescale_lr && !(p->clip_radius > 0))
		return (float)((p->h0 + p->delta) * lr);
	return lr;
}

void train_ivon_update(struct trainer *t, const struct train_piece *p)
{
	bnn_state *st = t->st;
	long a = p->a;
	bnn_ivon_arrays arr = { .n = p->len,
		                .mu = st->params + a,
		                .ghat = t->grad + a,
		                .hhat = t->hess + a,
		                .g = st->opt[0] + a,
		                .h = st->opt[1] + a,
		                .sigma = train_stochastic(p->tt) ? st->sigma + a : NULL,
		                .stochastic = train_stochastic(p->tt),
		                .theta = t->theta + a,
		                .noise = p->noise };
	bnn_ivon_params ip;

	ivon_params(t, p->tt, &ip);
	if (p->noise)
		bnn_ivon_step_sample(&arr, ivon_alpha(t, &ip, p->lr), st->step, &ip);
	else
		bnn_ivon_step(&arr, ivon_alpha(t, &ip, p->lr), st->step, &ip);
}

int train_ivon_text(const bnn_train_options *o, char *buf, int n)
{
	return train_text_append(buf, n,
	                         " beta1=%.9g beta2=%.9g mc=%d delta=%.9g h0=%.9g "
	                         "ess=%.9g clip_radius=%.9g rescale_lr=%d",
	                         (double)o->ivon.beta1, (double)o->ivon.beta2, o->mc, o->delta,
	                         isnan(o->ivon.h0) ? bnn_default_h0(o->optimizer) : o->ivon.h0,
	                         o->ess, o->ivon.clip_radius, o->ivon.rescale_lr);
}

/* ---- the step ------------------------------------------------------------ */

/* IVON's ĥ of sample k of K added to t->hess over the stochastic tensors:
 * element-wise, so split across threads in fixed chunks of the
 * sampler's size, from two of them on (as the updates, train_step.c). */
static void ivon_hess_acc_chunk(struct trainer *t, const float *g, int K, int k, long c)
{
	const bnn_state *st = t->st;
	long n = t->m->nparams, start = c * BNN_RNG_NORMAL_CHUNK;
	long end = n - start < BNN_RNG_NORMAL_CHUNK ? n : start + BNN_RNG_NORMAL_CHUNK;
	int i;

	for (i = 0; i < t->ntensors; i++) {
		const struct train_tensor *tt = &t->tensors[i];
		long a = tt->offset > start ? tt->offset : start;
		long e = tt->offset + tt->size < end ? tt->offset + tt->size : end;
		if (e > a && train_stochastic(tt))
			bnn_ivon_hess_acc(e - a, g + a, t->eps + a, st->sigma + a, t->hess + a,
			                  1.0f / (float)K, k > 0);
	}
}

static void ivon_hess_acc(struct trainer *t, const float *g, int K, int k)
{
	long n = t->m->nparams, c, nchunks = (n + BNN_RNG_NORMAL_CHUNK - 1) / BNN_RNG_NORMAL_CHUNK;

	if (n >= 2 * BNN_RNG_NORMAL_CHUNK) {
#pragma omp parallel for schedule(static)
		for (c = 0; c < nchunks; c++)
			ivon_hess_acc_chunk(t, g, K, k, c);
	} else {
		for (c = 0; c < nchunks; c++)
			ivon_hess_acc_chunk(t, g, K, k, c);
	}
}

/* With K > 1 samples: K posterior samples drawn afresh, their ĝ and ĥ
 * averaged into t->grad and t->hess. */
static void natural_samples(struct trainer *t, long b, double *loss)
{
	bnn_state *st = t->st;
	long n = t->m->nparams;
	int k, K = t->o->mc, sq = sqgrad_hessian(t);

	for (k = 0; k < K; k++) {
		float *g = K > 1 ? t->gk : t->grad;
		float *h = K > 1 ? t->hk : t->hess;
		/* VOGN, Alg. 1 lines 8-9; IVON, Alg. 1 line 2: θ ~ q */
		bnn_posterior_sample(n, st->params, st->sigma, t->eps, t->theta,
		                     &t->noise); /* eps NULL: vogn, whose ĥ needs no ε */
		*loss += train_pass(t, b, t->theta, NULL, g, sq ? h : NULL, NULL);
		if (K > 1)
			train_mc_average(n, t->grad, g, K, k == 0);
		if (sq && K > 1)
			train_mc_average(n, t->hess, h, K, k == 0);
		if (!sq) /* IVON, Alg. 1 line 3: ĥ = ĝ·(θ − m)/σ² = ĝ·ε/σ */
			ivon_hess_acc(t, g, K, k);
	}
}

/* The gradient estimate, then the update. */
double train_natural_step(struct trainer *t, long b, float lr, double epochs)
{
	bnn_state *st = t->st;
	const bnn_train_options *o = t->o;
	/* several MPI ranks: IVON's ĥ of each rank's own sample is summed
	 * before the update, so the update cannot draw the next sample */
	int sq = sqgrad_hessian(t), fused = o->mc == 1 && (sq || t->nranks == 1);
	double loss = 0, tau = vogn_tau(o, epochs);

	t->tau = tau;
	if (sq && st->step == 0)
		vogn_init_scale(t, b, tau);
	if (fused) {
		if (!t->primed)
			train_sample_first(t, tau);
		train_dist_arm(t, t->grad, sq ? t->hess : NULL, NULL); /* MPI: per layer */
		loss = train_pass(t, b, t->theta, NULL, t->grad, sq ? t->hess : NULL, NULL);
	} else {
		natural_samples(t, b, &loss);
	}
	loss = train_dist_step(t, loss, t->grad, t->hess, NULL); /* over the MPI ranks */
	if (t->clip > 0) /* ivon: on by default (docs/optimizers/ivon.md) */
		bnn_clip_grad_norm(t->m->nparams, t->grad, t->clip);
	st->step++;
	if (fused)
		train_update_and_sample(t, lr, tau);
	else
		train_update_tensors(t, lr, tau);
	return loss / o->mc;
}
