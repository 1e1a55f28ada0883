/*
 * train_step.c: one optimizer step on one minibatch, for every optimizer
 * (the trainer's loop is in train.c; the update rules themselves are the
 * fused loops of optim_*.c).
 *
 *   sgd, adam, adamw   one pass at the parameters → gradient → update.
 *   badam              Adam on the mean loss plus the prior's L2 term
 *                      δ/N per tensor; σ = 1/√(N√v̂ + δ) after each epoch
 *                      (Kessler et al., Alg. 1 and eq. 10-12).
 *   vogn               K samples θ = μ + σ∘ε, each pass giving the gradient
 *                      and the mean squared per-example gradients; their
 *                      averages ĝ, ĥ drive Osawa et al.'s Alg. 1 lines 19-21.
 *                      s starts from the first minibatch's squared gradients
 *                      at μ (Alg. 1 line 1, section 3).
 *   ivon               K samples; ĝ and ĥ = ĝ·(θ − μ)/σ² averaged (Shen et
 *                      al., Alg. 1 lines 2-3), then lines 4-8.
 *                      With one sample per step (mc = 1, the default),
 *                      vogn's and ivon's update and the next step's sample
 *                      are one loop (bnn_*_step_sample): the noise is drawn
 *                      in the blocks of bnn_posterior_sample, so a seed
 *                      gives the same variates either way, each array is
 *                      read and written once per step, and σ is derived
 *                      from s or h only where it is read (the first
 *                      sample, and at the end of every epoch).
 *   bbb                K passes with the local reparameterisation trick in
 *                      the generated code (w = μ, sigma = σ), giving the
 *                      gradients with respect to μ and σ (meanfield
 *                      layers the code does not sample that way, conv2d
 *                      and batchnorm, get a weight sample in w, as
 *                      below), or with lrt = 0
 *                      K weight samples θ = μ + σ∘ε, g at θ and g_σ = g∘ε;
 *                      KL/N is added and Adam steps μ and ρ (σ = softplus
 *                      ρ).
 * whvi layers (sgd, adam, adamw, bbb) sample g inside every pass, and
 * their KL/N and its gradient (whvi_kl.c) are added to the pass's
 * gradient before the update: the loss is the negative ELBO over N.
 * Dropout masks are drawn inside every pass from the trainer's noise
 * stream, for every optimizer.  Only the tensors of meanfield layers are
 * stochastic; the others (point and dropout layers, a learned σ of the
 * likelihood) are updated by the same rule without noise: σ = 0, and IVON
 * keeps their h at h0.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/floats.h"
#include "train_internal.h"

int train_optimizer_slots(int optimizer)
{
	switch (optimizer) {
	case BNN_OPT_SGD:
		return 1;
	case BNN_OPT_BBB:
		return 5;
	default:
		return 2;
	}
}

static int optimizer_is_variational(int optimizer)
{
	return optimizer == BNN_OPT_VOGN || optimizer == BNN_OPT_IVON ||
	       optimizer == BNN_OPT_BADAM || optimizer == BNN_OPT_BBB;
}

int train_check_model(const bnn_model *m, const bnn_train_options *o, bnn_err *err)
{
	int i, meanfield = 0, whvi = 0;

	for (i = 0; i < m->nlayers; i++) {
		const bnn_layer *l = &m->layers[i];
		if (l->family == BNN_FAMILY_MEANFIELD)
			meanfield++;
		else if (l->family == BNN_FAMILY_WHVI)
			whvi++;
		else if (l->family != BNN_FAMILY_POINT && l->family != BNN_FAMILY_DROPOUT &&
		         l->family != BNN_FAMILY_EMP && l->family != BNN_FAMILY_ECMP)
			return bnn_fail(err, BNN_EUNSUPPORTED,
			                "layer '%s' of model '%s' has a %s posterior, which no optimizer "
			                "trains yet",
			                l->name, m->name, bnn_family_name(l->family));
		if (l->family == BNN_FAMILY_MEANFIELD && !optimizer_is_variational(o->optimizer))
			return bnn_fail(err, BNN_EUNSUPPORTED,
			                "layer '%s' of model '%s' has a meanfield posterior, but optimizer "
			                "'%s' trains point estimates: use vogn, ivon, bbb or badam",
			                l->name, m->name, bnn_optimizer_name(o->optimizer));
		/* VOGN, IVON and BADAM fit a Gaussian over the parameters from
		 * their gradients' second moments; WHVI's q(g) lives in the
		 * parameters themselves (μ, ρ, S1, S2, flows) and is fitted by
		 * gradient descent on the ELBO */
		if (l->family == BNN_FAMILY_WHVI && optimizer_is_variational(o->optimizer) &&
		    o->optimizer != BNN_OPT_BBB)
			return bnn_fail(err, BNN_EUNSUPPORTED,
			                "layer '%s' of model '%s' has a whvi posterior, which optimizer "
			                "'%s' cannot train (its q(g) is fitted on the ELBO by gradient "
			                "descent): use adam, adamw, sgd or bbb",
			                l->name, m->name, bnn_optimizer_name(o->optimizer));
	}
	if (o->optimizer == BNN_OPT_BBB && meanfield == 0 && whvi > 0)
		meanfield = whvi; /* bbb: Adam on the ELBO of the whvi layers */
	if (optimizer_is_variational(o->optimizer) && meanfield == 0)
		return bnn_fail(err, BNN_EUNSUPPORTED,
		                "optimizer '%s' learns the posterior of meanfield layers, and model '%s' "
		                "has none: declare 'posterior meanfield;' (or '~ meanfield' on layers), "
		                "or train with sgd, adam or adamw",
		                bnn_optimizer_name(o->optimizer), m->name);
	return BNN_OK; /* options it does not read: bnn_train_options_check */
}

/* IVON's λ and BADAM's N of the posterior: the effective sample size, the
 * number of training examples unless given. */
static double effective_n(const struct trainer *t)
{
	return t->o->ess > 0 ? t->o->ess : t->n_data;
}

/* The δ an optimizer uses for a tensor whose layer has prior precision p. */
static double tensor_delta(const struct trainer *t, double p)
{
	if (isfinite(t->o->delta))
		return t->o->delta;
	if (t->o->optimizer == BNN_OPT_IVON)
		return p / effective_n(t); /* IVON's weight decay: the prior on λ's scale */
	return p;
}

/* How the optimizers treat tensor bt of layer l (NULL: the likelihood's). */
static void tensor_setup(const struct trainer *t, const bnn_tensor *bt, const bnn_layer *l,
                         struct train_tensor *tt)
{
	double prior = l ? l->prior_precision : t->m->prior_precision;
	int batchnorm = bt->role == BNN_ROLE_SCALE || bt->role == BNN_ROLE_SHIFT;

	tt->offset = bt->offset;
	tt->size = bt->size;
	tt->stochastic = l && l->family == BNN_FAMILY_MEANFIELD;
	/* the generated code samples only dense layers by the local
	 * reparameterisation trick; bbb's lrt passes give the others a
	 * weight sample */
	tt->weight_sample = tt->stochastic && t->o->optimizer == BNN_OPT_BBB && t->o->lrt &&
	                    strcmp(l->op, "dense") != 0;
	/* VOGN, section 3: no L2 regularisation or weight decay on a
	 * batchnorm's γ and β, unless the model gives them a posterior; none
	 * on a whvi layer's tensors either: their regulariser is the KL term
	 * (whvi_kl.c), and S1, S2 have no prior (WHVI, D.1) */
	tt->whvi = l && l->family == BNN_FAMILY_WHVI;
	tt->decays = !(batchnorm && l && l->family == BNN_FAMILY_POINT) && !tt->whvi;
	/* EMP, ECMP: the KL of eq. (7) is an L2 term of precision τ·p_k = τ/k
	 * on each of the k components */
	tt->patched = bt->components > 1;
	if (tt->patched)
		prior /= bt->components;
	tt->delta = tt->decays ? tensor_delta(t, prior) : 0.0;
	tt->prior_l2 = tt->patched ? prior / t->n_data : 0.0;
}

static int tensors_setup(struct trainer *t, bnn_err *err)
{
	const bnn_model *m = t->m;
	int i;

	t->ntensors = m->ntensors;
	t->tensors = calloc((size_t)(m->ntensors > 0 ? m->ntensors : 1), sizeof *t->tensors);
	if (!t->tensors)
		return bnn_fail(err, BNN_ENOMEM, "out of memory");
	for (i = 0; i < m->ntensors; i++) {
		const bnn_tensor *bt = &m->tensors[i];
		tensor_setup(t, bt, bt->layer >= 0 ? &m->layers[bt->layer] : NULL, &t->tensors[i]);
		t->mixed_lrt |= t->tensors[i].weight_sample;
		t->whvi |= t->tensors[i].whvi;
	}
	return BNN_OK;
}

static void vogn_params(const struct trainer *t, const struct train_tensor *tt, double tau,
                        bnn_vogn_params *p)
{
	*p = bnn_vogn_defaults();
	p->beta1 = t->o->vogn.beta1;
	/* The option is the decay of s's moving average, like Adam's β2 and
	 * the value of the paper's tables (0.999, next to β1 = 0.9 in line 19's
	 * decay convention); line 20 weighs the new ĥ by its rate, 1 − decay
	 * (docs/optimizers/vogn.md). */
	p->beta2 = 1.0 - (double)t->o->vogn.beta2;
	p->tau = tau;
	p->delta = tt->delta;
	p->n_data = t->o->vogn.rho * t->n_data;
}

static void ivon_params(const struct trainer *t, const struct train_tensor *tt,
                        bnn_ivon_params *p)
{
	*p = bnn_ivon_defaults();
	p->beta1 = t->o->ivon.beta1;
	p->beta2 = t->o->ivon.beta2;
	p->h0 = t->o->ivon.h0;
	p->delta = tt->delta;
	p->ess = effective_n(t);
	p->clip_radius = t->o->ivon.clip_radius;
}

/* Bayes-by-Backprop's Adam and KL settings for tensor tt. */
static void bbb_params(const struct trainer *t, const struct train_tensor *tt,
                       bnn_bbb_params *p)
{
	*p = bnn_bbb_defaults();
	p->beta1 = t->o->adam.beta1;
	p->beta2 = t->o->adam.beta2;
	p->eps = t->o->adam.eps;
	p->prior_precision = tt->delta;
	p->n_data = t->n_data;
}

/* A fresh optimizer state: zeroed slots, then each optimizer's start
 * (IVON's h = h0 and its σ, BBB's ρ from sigma0). */
static int state_fresh(struct trainer *t, bnn_err *err)
{
	bnn_state *st = t->st;
	long n = t->m->nparams;
	int i, slots = train_optimizer_slots(t->o->optimizer);

	for (i = 0; i < BNN_OPT_SLOTS; i++) {
		free(st->opt[i]);
		st->opt[i] = i < slots ? bnn_floats_zeroed(n) : NULL;
		if (i < slots && !st->opt[i])
			return bnn_fail(err, BNN_ENOMEM, "out of memory for the optimizer state");
	}
	free(st->sigma);
	st->sigma = optimizer_is_variational(t->o->optimizer) ? bnn_floats_zeroed(n) : NULL;
	if (optimizer_is_variational(t->o->optimizer) && !st->sigma)
		return bnn_fail(err, BNN_ENOMEM, "out of memory for the posterior");
	st->optimizer = t->o->optimizer;
	st->step = 0;
	for (i = 0; i < t->ntensors; i++) {
		const struct train_tensor *tt = &t->tensors[i];
		long j;
		if (t->o->optimizer == BNN_OPT_IVON) {
			bnn_ivon_params p;
			ivon_params(t, tt, &p);
			for (j = 0; j < tt->size; j++)
				st->opt[1][tt->offset + j] = (float)p.h0; /* IVON, Alg. 1 init: h ← h0 */
			if (tt->stochastic)
				bnn_ivon_sigma(tt->size, st->opt[1] + tt->offset, st->sigma + tt->offset, &p);
		} else if (t->o->optimizer == BNN_OPT_BBB && tt->stochastic) {
			float rho = (float)bnn_softplus_inverse(t->o->sigma0);
			for (j = 0; j < tt->size; j++)
				st->opt[2][tt->offset + j] = rho;
			bnn_bbb_sigma(tt->size, st->opt[2] + tt->offset, st->sigma + tt->offset);
		}
	}
	return BNN_OK;
}

int train_step_setup(struct trainer *t, bnn_err *err)
{
	const bnn_train_options *o = t->o;
	bnn_state *st = t->st;
	long n = t->m->nparams;
	int rc, i, slots = train_optimizer_slots(o->optimizer), have = 1;

	if ((rc = tensors_setup(t, err)))
		return rc;
	for (i = 0; i < slots; i++)
		have = have && st->opt[i];
	if (optimizer_is_variational(o->optimizer))
		have = have && st->sigma;
	if (!(st->optimizer == o->optimizer && have) && (rc = state_fresh(t, err)))
		return rc;
	t->grad = bnn_floats_alloc(n);
	if (!t->grad)
		return bnn_fail(err, BNN_ENOMEM, "out of memory for training buffers");
	if (o->optimizer == BNN_OPT_VOGN || o->optimizer == BNN_OPT_IVON) {
		t->hess = bnn_floats_zeroed(n); /* IVON reads no entry of deterministic tensors */
		t->theta = bnn_floats_alloc(n);
		/* only IVON's ĥ reads ε, and with one sample it uses θ − μ */
		t->eps = o->optimizer == BNN_OPT_IVON && o->mc > 1 ? bnn_floats_alloc(n) : NULL;
		if (!t->hess || !t->theta || (o->optimizer == BNN_OPT_IVON && o->mc > 1 && !t->eps))
			return bnn_fail(err, BNN_ENOMEM, "out of memory for training buffers");
	}
	if (o->optimizer == BNN_OPT_BBB && !(t->gsig = bnn_floats_zeroed(n)))
		return bnn_fail(err, BNN_ENOMEM, "out of memory for training buffers");
	if (o->optimizer == BNN_OPT_BBB && (!o->lrt || t->mixed_lrt) &&
	    (!(t->theta = bnn_floats_alloc(n)) || !(t->eps = bnn_floats_alloc(n))))
		return bnn_fail(err, BNN_ENOMEM, "out of memory for training buffers");
	if (t->whvi && bnn_whvi_kl_scratch(t->m) > 0 &&
	    !(t->whvi_scratch = malloc((size_t)bnn_whvi_kl_scratch(t->m) * sizeof(double))))
		return bnn_fail(err, BNN_ENOMEM, "out of memory for training buffers");
	if (o->mc > 1 && optimizer_is_variational(o->optimizer)) {
		t->gk = bnn_floats_alloc(n);
		t->hk = o->optimizer == BNN_OPT_VOGN ? bnn_floats_alloc(n) : NULL;
		t->gsigk = o->optimizer == BNN_OPT_BBB ? bnn_floats_zeroed(n) : NULL;
		if (!t->gk || (o->optimizer == BNN_OPT_VOGN && !t->hk) ||
		    (o->optimizer == BNN_OPT_BBB && !t->gsigk))
			return bnn_fail(err, BNN_ENOMEM, "out of memory for training buffers");
	}
	return BNN_OK;
}

void train_step_free(struct trainer *t)
{
	free(t->tensors);
	free(t->grad);
	free(t->hess);
	free(t->gk);
	free(t->hk);
	free(t->gsig);
	free(t->gsigk);
	free(t->theta);
	free(t->eps);
	free(t->whvi_scratch);
}

/* WHVI: the gradient of KL/N, the rest of the negative ELBO over N, added
 * to the pass's gradient of the whvi layers' tensors (whvi_kl.c). */
static void whvi_kl_grad(struct trainer *t)
{
	if (t->whvi)
		t->kl = bnn_whvi_kl(t->m, t->st->params, t->o->delta, 1.0 / t->n_data, t->grad,
		                    &t->noise, t->whvi_scratch);
}

/* One pass of the generated code over the minibatch. */
static double step_pass(struct trainer *t, long b, const float *w, const float *sigma,
                        float *grad, float *sqgrad, float *grad_sigma)
{
	bnn_pass p;

	memset(&p, 0, sizeof p);
	p.w = w;
	p.x = t->xb;
	p.y = t->yb;
	p.batch = b;
	p.ws = t->ws;
	p.grad = grad;
	p.sqgrad = sqgrad;
	p.rng = &t->noise;
	p.sigma = sigma;
	p.grad_sigma = grad_sigma;
	p.stats = t->st->stats; /* batchnorm: batch statistics, folded in */
	p.train = 1;
	return t->m->pass(&p);
}

/* acc += x / k (first: acc = x / k). */
static void mc_average(long n, float *acc, const float *x, int k, int first)
{
	float w = 1.0f / (float)k;
	long i;

	if (first)
		for (i = 0; i < n; i++)
			acc[i] = w * x[i];
	else
		for (i = 0; i < n; i++)
			acc[i] += w * x[i];
}

/* sgd, adam, adamw and badam: one pass at the parameters, then each
 * tensor's update (weight decay only where the tensor decays). */
static double step_point(struct trainer *t, long b, float lr)
{
	bnn_state *st = t->st;
	const bnn_train_options *o = t->o;
	long n = t->m->nparams;
	double loss = step_pass(t, b, st->params, NULL, t->grad, NULL, NULL);
	int i;

	whvi_kl_grad(t);
	if (o->clip > 0)
		bnn_clip_grad_norm(n, t->grad, o->clip);
	st->step++;
	for (i = 0; i < t->ntensors; i++) {
		const struct train_tensor *tt = &t->tensors[i];
		float *w = st->params + tt->offset, *g = t->grad + tt->offset;
		if (o->optimizer == BNN_OPT_SGD) {
			bnn_sgd_params p = o->sgd;
			p.weight_decay = tt->patched ? (float)tt->prior_l2 : tt->decays ? p.weight_decay : 0;
			bnn_sgd_step(tt->size, w, g, st->opt[0] + tt->offset, lr, st->step, &p);
		} else {
			bnn_adam_params p = o->adam;
			if (o->optimizer == BNN_OPT_BADAM) {
				/* BADAM: Adam on the MAP objective, mean loss + (δ/2N)|θ|²
				 * per tensor (the Gaussian prior of eq. 8). */
				p.weight_decay = (float)(tt->delta / t->n_data);
				p.decoupled = 0;
			} else if (tt->patched) { /* eq. (7) over N: an L2 term */
				p.weight_decay = (float)tt->prior_l2;
				p.decoupled = 0;
			} else if (!tt->decays) {
				p.weight_decay = 0;
			}
			bnn_adam_step(tt->size, w, g, st->opt[0] + tt->offset, st->opt[1] + tt->offset, lr,
			              st->step, &p);
		}
	}
	return loss;
}

/* VOGN's τ at training progress `epochs`: linear from tau_start to tau. */
static double vogn_tau(const bnn_train_options *o, double epochs)
{
	double start = isnan(o->vogn.tau_start) ? o->vogn.tau : o->vogn.tau_start;

	if (o->vogn.tau_epochs <= 0 || epochs >= o->vogn.tau_epochs)
		return o->vogn.tau;
	return start + (o->vogn.tau - start) * epochs / o->vogn.tau_epochs;
}

/* VOGN, Alg. 1 line 1 and section 3: s0 is the mean of the squared
 * per-example gradients of the first minibatch at μ; σ follows (line 9). */
static void vogn_init_scale(struct trainer *t, long b, double tau)
{
	bnn_state *st = t->st;
	int i;

	step_pass(t, b, st->params, NULL, t->grad, st->opt[1], NULL);
	for (i = 0; i < t->ntensors; i++) {
		const struct train_tensor *tt = &t->tensors[i];
		bnn_vogn_params p;
		if (!tt->stochastic)
			continue;
		vogn_params(t, tt, tau, &p);
		bnn_vogn_sigma(tt->size, st->opt[1] + tt->offset, st->sigma + tt->offset, &p);
	}
}

/* VOGN and IVON with mc = K > 1: K posterior samples drawn afresh, their
 * ĝ and ĥ averaged into t->grad and t->hess. */
static void natural_samples(struct trainer *t, long b, double *loss)
{
	bnn_state *st = t->st;
	long n = t->m->nparams;
	int k, i, K = t->o->mc, vogn = t->o->optimizer == BNN_OPT_VOGN;

	for (k = 0; k < K; k++) {
		float *g = K > 1 ? t->gk : t->grad;
		float *h = K > 1 ? t->hk : t->hess;
		/* VOGN, Alg. 1 lines 8-9; IVON, Alg. 1 line 2: θ ~ q */
		bnn_posterior_sample(n, st->params, st->sigma, t->eps, t->theta, &t->noise); /* eps NULL: vogn */
		*loss += step_pass(t, b, t->theta, NULL, g, vogn ? h : NULL, NULL);
		if (K > 1)
			mc_average(n, t->grad, g, K, k == 0);
		if (vogn && K > 1)
			mc_average(n, t->hess, h, K, k == 0);
		if (!vogn) /* IVON, Alg. 1 line 3: ĥ = ĝ·(θ − m)/σ² = ĝ·ε/σ */
			for (i = 0; i < t->ntensors; i++) {
				const struct train_tensor *tt = &t->tensors[i];
				if (tt->stochastic)
					bnn_ivon_hess_acc(tt->size, g + tt->offset, t->eps + tt->offset,
					                  st->sigma + tt->offset, t->hess + tt->offset,
					                  1.0f / (float)K, k > 0);
			}
	}
}

/* IVON's learning rate for tensor tt: α ← (h0 + δ)α (Alg. 1 "Optional"),
 * not with clipping, as the paper says. */
static float ivon_alpha(const struct trainer *t, const bnn_ivon_params *p, float lr)
{
	if (t->o->ivon.rescale_lr && !(p->clip_radius > 0))
		return (float)((p->h0 + p->delta) * lr);
	return lr;
}

/* Elements [a, a + len) of tensor i: the update of vogn, ivon or bbb, and
 * with noise the next step's sample drawn in the same loop. */
static void tensor_update(struct trainer *t, int i, long a, long len, const float *noise,
                          float lr, double tau)
{
	bnn_state *st = t->st;
	const struct train_tensor *tt = &t->tensors[i];
	float *sigma = tt->stochastic ? st->sigma + a : NULL;
	float *mu = st->params + a, *g = t->grad + a, *o0 = st->opt[0] + a, *o1 = st->opt[1] + a;
	bnn_vogn_params vp;
	bnn_ivon_params ip;
	bnn_bbb_params bp;

	switch (t->o->optimizer) {
	case BNN_OPT_VOGN:
		vogn_params(t, tt, tau, &vp);
		if (noise)
			bnn_vogn_step_sample(len, mu, g, t->hess + a, o0, o1, sigma != NULL,
			                     t->theta + a, noise, lr, &vp);
		else
			bnn_vogn_step(len, mu, g, t->hess + a, o0, o1, sigma, lr, &vp);
		break;
	case BNN_OPT_IVON:
		ivon_params(t, tt, &ip);
		if (noise)
			bnn_ivon_step_sample(len, mu, g, o0, o1, sigma != NULL, t->theta + a, noise,
			                     ivon_alpha(t, &ip, lr), st->step, &ip);
		else
			bnn_ivon_step(len, mu, g, t->hess + a, o0, o1, sigma, ivon_alpha(t, &ip, lr),
			              st->step, &ip);
		break;
	default: /* bbb: ρ in opt[2], Adam's moments of μ in opt[0..1], of ρ in opt[3..4] */
		bbb_params(t, tt, &bp);
		if (noise)
			bnn_bbb_step_sample(len, mu, tt->stochastic ? st->opt[2] + a : NULL, g,
			                    t->eps + a, o0, o1, st->opt[3] + a, st->opt[4] + a,
			                    t->theta + a, noise, lr, st->step, &bp);
		else
			bnn_bbb_step(len, mu, tt->stochastic ? st->opt[2] + a : NULL, st->sigma + a, g,
			             t->gsig + a, o0, o1, st->opt[3] + a, st->opt[4] + a, lr, st->step,
			             &bp);
		break;
	}
}

/* Every tensor's update, without sampling. */
static void update_tensors(struct trainer *t, float lr, double tau)
{
	int i;

	for (i = 0; i < t->ntensors; i++)
		tensor_update(t, i, t->tensors[i].offset, t->tensors[i].size, NULL, lr, tau);
}

/* The update with the next step's sample, whose noise is
 * bnn_posterior_sample's (one bnn_rng_normal() call over all parameters),
 * drawn block by block, each block split at the tensors' borders (the
 * tensors tile the parameters in order, as bnn_model_check() requires). */
static void update_and_sample(struct trainer *t, float lr, double tau)
{
	float noise[BNN_SAMPLE_BLOCK];
	bnn_rng_normal_stream stream;
	long n = t->m->nparams, start;
	int i = 0;

	bnn_rng_normal_begin(&stream, &t->noise, (size_t)n);
	for (start = 0; start < n; start += BNN_SAMPLE_BLOCK) {
		long end = n - start < BNN_SAMPLE_BLOCK ? n : start + BNN_SAMPLE_BLOCK;
		bnn_rng_normal_next(&stream, noise, (size_t)(end - start));
		for (; i < t->ntensors; i++) {
			const struct train_tensor *tt = &t->tensors[i];
			long a = tt->offset > start ? tt->offset : start;
			long e = tt->offset + tt->size < end ? tt->offset + tt->size : end;
			if (e > a)
				tensor_update(t, i, a, e - a, noise + (a - start), lr, tau);
			if (tt->offset + tt->size > end)
				break; /* the tensor goes on in the next block */
		}
	}
}

/* σ from VOGN's s (at τ), IVON's h or BBB's ρ, where the fused update
 * does not store it. */
static void sigma_from_state(struct trainer *t, double tau)
{
	bnn_state *st = t->st;
	int i;

	for (i = 0; i < t->ntensors; i++) {
		const struct train_tensor *tt = &t->tensors[i];
		float *h = st->opt[1] + tt->offset, *sigma = st->sigma + tt->offset;
		bnn_vogn_params vp;
		bnn_ivon_params ip;
		if (!tt->stochastic)
			continue;
		if (t->o->optimizer == BNN_OPT_VOGN) {
			vogn_params(t, tt, tau, &vp);
			bnn_vogn_sigma(tt->size, h, sigma, &vp); /* Alg. 1 line 9 */
		} else if (t->o->optimizer == BNN_OPT_IVON) {
			ivon_params(t, tt, &ip);
			bnn_ivon_sigma(tt->size, h, sigma, &ip); /* Alg. 1 line 8 */
		} else {
			bnn_bbb_sigma(tt->size, st->opt[2] + tt->offset, sigma); /* σ = softplus ρ */
		}
	}
}

/* The first sample of a run whose updates draw the next one (later ones
 * come from the update), from σ derived afresh: IVON's ĥ assumes
 * σ = 1/√(λ(h + δ)) even if a loaded state's options changed δ or λ.
 * BBB keeps ε (t->eps), VOGN and IVON do not. */
static void sample_first(struct trainer *t, double tau)
{
	float *eps = t->o->optimizer == BNN_OPT_BBB ? t->eps : NULL;

	sigma_from_state(t, tau);
	bnn_posterior_sample(t->m->nparams, t->st->params, t->st->sigma, eps, t->theta,
	                     &t->noise);
	t->primed = 1;
}

/* Does this run's update draw the next step's sample?  One sample per
 * step, and a sample of the weights (not bbb's local reparameterisation). */
static int update_samples(const struct trainer *t)
{
	return t->o->mc == 1 && (t->o->optimizer != BNN_OPT_BBB || !t->o->lrt);
}

/* VOGN and IVON: the gradient estimate, then the update. */
static double step_natural(struct trainer *t, long b, float lr, double epochs)
{
	bnn_state *st = t->st;
	const bnn_train_options *o = t->o;
	int vogn = o->optimizer == BNN_OPT_VOGN;
	double loss = 0, tau = vogn_tau(o, epochs);

	t->tau = tau;
	if (vogn && st->step == 0)
		vogn_init_scale(t, b, tau);
	if (update_samples(t)) {
		if (!t->primed)
			sample_first(t, tau);
		loss = step_pass(t, b, t->theta, NULL, t->grad, vogn ? t->hess : NULL, NULL);
	} else {
		natural_samples(t, b, &loss);
	}
	if (o->clip > 0)
		bnn_clip_grad_norm(t->m->nparams, t->grad, o->clip);
	st->step++;
	if (update_samples(t))
		update_and_sample(t, lr, tau);
	else
		update_tensors(t, lr, tau);
	return loss / o->mc;
}

/* Bayes-by-Backprop's NLL gradients from one weight sample θ = μ + σ∘ε
 * (Blundell et al., section 3.2): g at θ, and g_σ = g∘ε. */
static double bbb_weight_sample(struct trainer *t, long b, float *g, float *gs)
{
	bnn_state *st = t->st;
	long i, n = t->m->nparams;
	double loss;

	bnn_posterior_sample(n, st->params, st->sigma, t->eps, t->theta, &t->noise);
	loss = step_pass(t, b, t->theta, NULL, g, NULL, NULL);
	for (i = 0; i < n; i++)
		gs[i] = g[i] * t->eps[i];
	return loss;
}

/* A bbb pass with the local reparameterisation trick (w = μ, sigma = σ):
 * the NLL gradients with respect to μ in g and to σ in gs.  The tensors
 * of meanfield layers that the generated code does not sample by the
 * trick (conv2d, batchnorm: they ignore sigma) get a weight sample
 * θ = μ + σ∘ε in w instead, and g_σ = g∘ε (Blundell et al., 3.2). */
static double bbb_lrt_pass(struct trainer *t, long b, float *g, float *gs)
{
	bnn_state *st = t->st;
	double loss;
	long j;
	int i;

	if (!t->mixed_lrt)
		return step_pass(t, b, st->params, st->sigma, g, NULL, gs);
	memcpy(t->theta, st->params, (size_t)t->m->nparams * sizeof *t->theta);
	for (i = 0; i < t->ntensors; i++) {
		const struct train_tensor *tt = &t->tensors[i];
		if (tt->weight_sample)
			bnn_posterior_sample(tt->size, st->params + tt->offset, st->sigma + tt->offset,
			                     t->eps + tt->offset, t->theta + tt->offset, &t->noise);
	}
	loss = step_pass(t, b, t->theta, st->sigma, g, NULL, gs);
	for (i = 0; i < t->ntensors; i++) {
		const struct train_tensor *tt = &t->tensors[i];
		if (tt->weight_sample)
			for (j = tt->offset; j < tt->offset + tt->size; j++)
				gs[j] = g[j] * t->eps[j];
	}
	return loss;
}

/* Bayes-by-Backprop: K passes, with the local reparameterisation (lrt) or
 * a weight sample each, then Adam on μ and ρ; with one weight sample per
 * step, the update draws the next (bnn_bbb_step_sample). */
static double step_bbb(struct trainer *t, long b, float lr)
{
	bnn_state *st = t->st;
	const bnn_train_options *o = t->o;
	long n = t->m->nparams;
	int k, K = o->mc;
	double loss = 0;

	if (update_samples(t)) {
		if (!t->primed)
			sample_first(t, 0);
		loss = step_pass(t, b, t->theta, NULL, t->grad, NULL, NULL);
	} else {
		for (k = 0; k < K; k++) {
			float *g = K > 1 ? t->gk : t->grad, *gs = K > 1 ? t->gsigk : t->gsig;
			if (o->lrt)
				loss += bbb_lrt_pass(t, b, g, gs);
			else
				loss += bbb_weight_sample(t, b, g, gs);
			if (K > 1) {
				mc_average(n, t->grad, g, K, k == 0);
				mc_average(n, t->gsig, gs, K, k == 0);
			}
		}
	}
	whvi_kl_grad(t);
	if (o->clip > 0)
		bnn_clip_grad_norm(n, t->grad, o->clip);
	st->step++;
	if (update_samples(t))
		update_and_sample(t, lr, 0);
	else
		update_tensors(t, lr, 0);
	return loss / K;
}

double train_step(struct trainer *t, long b, double lr, double epochs)
{
	switch (t->o->optimizer) {
	case BNN_OPT_VOGN:
	case BNN_OPT_IVON:
		return step_natural(t, b, (float)lr, epochs);
	case BNN_OPT_BBB:
		return step_bbb(t, b, (float)lr);
	default:
		return step_point(t, b, (float)lr);
	}
}

void train_step_finish_epoch(struct trainer *t)
{
	bnn_state *st = t->st;
	int i;

	if (t->primed) /* the fused updates did not store σ */
		sigma_from_state(t, t->tau);
	if (t->o->optimizer != BNN_OPT_BADAM || st->step < 1)
		return;
	for (i = 0; i < t->ntensors; i++) {
		const struct train_tensor *tt = &t->tensors[i];
		if (tt->stochastic) /* BADAM, Alg. 1 output and eq. 10-12 */
			bnn_badam_sigma(tt->size, st->opt[1] + tt->offset, st->step, t->o->adam.beta2,
			                effective_n(t), tt->delta, st->sigma + tt->offset);
	}
}
