/*
 * train_step.c: one optimizer step on one minibatch, driven by the
 * optimizer's row of train_optimizers[] (optimizers.c; the trainer's loop
 * is in train.c, each optimizer's step in step_point.c, step_natural.c or
 * step_bbb.c, the update rules themselves are the fused loops of
 * optim_*.c).  What is here is what they share: the check that the
 * optimizer trains every layer's capabilities, the tensors as the
 * optimizers see them (δ, decay, components), a fresh optimizer state,
 * the pass, Monte-Carlo averages, and the updates tensor by tensor or
 * fused with the next step's sample.
 *
 * whvi layers (sgd, adam, adamw, bbb) sample g inside every pass, and
 * their KL/N and its gradient (whvi_kl.c) are added to the pass's
 * gradient before the update: the loss is the negative ELBO over N.
 * Dropout masks are drawn inside every pass from the trainer's noise
 * stream, for every optimizer.  Only the tensors of layers with
 * BNN_CAP_SIGMA (meanfield) are stochastic; the others (point and dropout
 * layers, a learned σ of the likelihood) are updated by the same rule
 * without noise: σ = 0, and IVON keeps their h at h0.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/floats.h"
#include "train_internal.h"

/* Why an optimizer refuses a layer with a capability it does not train:
 * "layer L of model M has a F posterior, <before> optimizer 'O' <after>:
 * use A, B or C", the optimizers that train every layer of M (the
 * messages are part of the interface). */
static const struct {
	unsigned cap;       /* the BNN_CAP_* bit refused */
	const char *before; /* the words before the optimizer's name */
	const char *after;  /* and after it */
} train_refusals[] = {
	{ BNN_CAP_SIGMA, "but", "trains point estimates" },
	/* VOGN, IVON and BADAM fit a Gaussian over the parameters from their
	 * gradients' second moments; WHVI's q(g) lives in the parameters
	 * themselves (μ, ρ, S1, S2, flows) and is fitted by gradient descent
	 * on the ELBO */
	{ BNN_CAP_WHVI, "which",
	  "cannot train (its q(g) is fitted on the ELBO by gradient descent)" },
};
#define TRAIN_NREFUSALS ((int)(sizeof train_refusals / sizeof train_refusals[0]))

/* The order in which refusals suggest the optimizers that would train. */
static const int train_suggested[] = { BNN_OPT_VOGN, BNN_OPT_IVON, BNN_OPT_ADAM, BNN_OPT_ADAMW,
	                               BNN_OPT_SGD,  BNN_OPT_BBB,  BNN_OPT_BADAM };
#define TRAIN_NSUGGESTED ((int)(sizeof train_suggested / sizeof train_suggested[0]))

/* Whether optimizer opt trains every layer of m: each layer's
 * capabilities among those it trains, and, if it learns a posterior, a
 * layer that has one (train_check_model's conditions). */
static int train_trains_all(const bnn_model *m, const struct train_optimizer *opt)
{
	int i, learnable = 0;

	for (i = 0; i < m->nlayers; i++) {
		if (m->layers[i].caps & ~opt->trains)
			return 0;
		learnable += (m->layers[i].caps & opt->learns) != 0;
	}
	return !opt->learns || learnable > 0;
}

/* ": use A, B or C" for the optimizers that train every layer of m, in
 * buf. */
static const char *train_suggestion(const bnn_model *m, char *buf, size_t size)
{
	const char *names[TRAIN_NSUGGESTED];
	size_t used;
	int i, n = 0;

	for (i = 0; i < TRAIN_NSUGGESTED; i++)
		if (train_trains_all(m, &train_optimizers[train_suggested[i]]))
			names[n++] = train_optimizers[train_suggested[i]].name;
	if (n == 0)
		return ""; /* no model of today's families: bbb trains them all */
	used = (size_t)snprintf(buf, size, ": use %s", names[0]);
	for (i = 1; i < n && used < size; i++)
		used += (size_t)snprintf(buf + used, size - used, "%s%s",
		                         i == n - 1 ? " or " : ", ", names[i]);
	return buf;
}

static int train_refuse(const bnn_model *m, const bnn_layer *l, const struct train_optimizer *opt,
                        bnn_err *err)
{
	unsigned refused = l->caps & ~opt->trains;
	const char *before = "which", *after = "cannot train";
	char use[128];
	int i;

	for (i = 0; i < TRAIN_NREFUSALS; i++)
		if (refused & train_refusals[i].cap) {
			before = train_refusals[i].before;
			after = train_refusals[i].after;
			break;
		}
	return bnn_fail(err, BNN_EUNSUPPORTED,
	                "layer '%s' of model '%s' has %s %s posterior, %s optimizer '%s' %s%s",
	                l->name, m->name, train_article(l->family), l->family, before, opt->name,
	                after, train_suggestion(m, use, sizeof use));
}

int train_check_model(const bnn_model *m, const bnn_train_options *o, bnn_err *err)
{
	const struct train_optimizer *opt = train_optimizer_of(o->optimizer);
	int i;

	for (i = 0; i < m->nlayers; i++) {
		const bnn_layer *l = &m->layers[i];
		if (l->caps & ~(unsigned)BNN_CAP_ALL)
			return bnn_fail(
			        err, BNN_EUNSUPPORTED,
			        "layer '%s' of model '%s' has %s %s posterior, which no optimizer "
			        "trains yet",
			        l->name, m->name, train_article(l->family), l->family);
		if (l->caps & ~opt->trains)
			return train_refuse(m, l, opt, err);
	}
	if (!train_trains_all(m, opt)) /* every layer's kind is trained: no posterior to learn */
		return bnn_fail(
		        err, BNN_EUNSUPPORTED,
		        "optimizer '%s' learns the posterior of meanfield layers, and model '%s' "
		        "has none: declare 'posterior meanfield;' (or '~ meanfield' on layers), "
		        "or train with sgd, adam or adamw",
		        opt->name, m->name);
	return train_check_prior(m, o, err); /* options it does not read:
	                                        bnn_train_options_check */
}

/* IVON's λ and BADAM's N of the posterior: the effective sample size,
 * the optimizer's default from the number of training examples (and, for
 * BADAM, the model) unless given. */
double train_effective_n(const struct trainer *t)
{
	return t->o->ess > 0 ? t->o->ess : bnn_default_ess(t->m, t->o->optimizer, t->n_data);
}

/* The δ an optimizer uses for a tensor whose layer has prior precision p. */
static double tensor_delta(const struct trainer *t, double p)
{
	if (isfinite(t->o->delta))
		return t->o->delta;
	if (train_optimizers[t->o->optimizer].delta_over_ess)
		return p / train_effective_n(t); /* IVON's weight decay: the prior on λ's scale */
	if (train_optimizers[t->o->optimizer].delta_times_rho)
		return p * t->o->vogn.rho; /* VOGN: δ̃ = τδ/(ρN) stays the model's τp/N */
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
	tt->caps = l ? l->caps : 0;
	/* VOGN, section 3: no L2 regularisation or weight decay on a
	 * batchnorm's γ and β, unless the model gives them a posterior; none
	 * on a whvi layer's tensors either: their regulariser is the KL term
	 * (whvi_kl.c), and S1, S2 have no prior (WHVI, D.1) */
	tt->decays = !(batchnorm && l && tt->caps == 0) && !(tt->caps & BNN_CAP_WHVI);
	/* EMP, ECMP: the KL of eq. (7) is an L2 term of precision τ·p_k = τ/k
	 * on each of the k components */
	tt->patched = bt->components > 1;
	if (tt->patched)
		prior /= bt->components;
	tt->prior = tt->decays ? train_tensor_prior(t->m, l) : NULL;
	tt->delta = tt->decays && !tt->prior ? tensor_delta(t, prior) : 0.0;
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
		t->whvi |= (t->tensors[i].caps & BNN_CAP_WHVI) != 0;
		t->priors |= t->tensors[i].prior != NULL;
	}
	return BNN_OK;
}

/* A fresh optimizer state: zeroed slots, then each optimizer's start
 * (IVON's h = h0 and its σ, BBB's ρ from sigma0). */
static int state_fresh(struct trainer *t, bnn_err *err)
{
	const struct train_optimizer *opt = &train_optimizers[t->o->optimizer];
	bnn_state *st = t->st;
	long n = t->m->nparams;
	int i;

	for (i = 0; i < BNN_OPT_SLOTS; i++) {
		free(st->opt[i]);
		st->opt[i] = i < opt->slots ? bnn_floats_zeroed(n) : NULL;
		if (i < opt->slots && !st->opt[i])
			return bnn_fail(err, BNN_ENOMEM, "out of memory for the optimizer state");
	}
	free(st->sigma);
	st->sigma = opt->variational ? bnn_floats_zeroed(n) : NULL;
	if (opt->variational && !st->sigma)
		return bnn_fail(err, BNN_ENOMEM, "out of memory for the posterior");
	st->optimizer = t->o->optimizer;
	st->step = 0;
	for (i = 0; opt->start && i < t->ntensors; i++)
		opt->start(t, &t->tensors[i]);
	return BNN_OK;
}

int train_step_setup(struct trainer *t, bnn_err *err)
{
	const struct train_optimizer *opt = &train_optimizers[t->o->optimizer];
	bnn_state *st = t->st;
	int rc, i, have = 1;

	if ((rc = tensors_setup(t, err)))
		return rc;
	for (i = 0; i < opt->slots; i++)
		have = have && st->opt[i];
	if (opt->variational)
		have = have && st->sigma;
	if (opt->setup && (rc = opt->setup(t, err)))
		return rc;
	if (!(st->optimizer == t->o->optimizer && have) && (rc = state_fresh(t, err)))
		return rc;
	t->grad = train_dist_floats(t, t->m->nparams);
	if (!t->grad)
		return bnn_fail(err, BNN_ENOMEM, "out of memory for training buffers");
	if (t->whvi && bnn_whvi_kl_scratch(t->m) > 0 &&
	    !(t->whvi_scratch = malloc((size_t)bnn_whvi_kl_scratch(t->m) * sizeof(double))))
		return bnn_fail(err, BNN_ENOMEM, "out of memory for training buffers");
	return BNN_OK;
}

void train_step_free(struct trainer *t)
{
	free(t->tensors);
	train_dist_release(t, t->grad);
	train_dist_release(t, t->hess);
	free(t->gk);
	free(t->hk);
	train_dist_release(t, t->gsig);
	free(t->gsigk);
	free(t->theta);
	free(t->eps);
	free(t->whvi_scratch);
}

void train_whvi_kl_grad(struct trainer *t)
{
	if (t->whvi)
		t->kl = bnn_whvi_kl(t->m, t->st->params, t->o->delta, 1.0 / t->n_data, t->grad,
		                    &t->noise, t->whvi_scratch);
}

double train_pass(struct trainer *t, long b, const float *w, const float *sigma, float *grad,
                  float *sqgrad, float *grad_sigma)
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
	p.ready = t->ready; /* data parallelism: a layer's sum starts early */
	p.ready_ctx = t->ready_ctx;
	return t->m->pass(&p);
}

void train_mc_average(long n, float *acc, const float *x, int k, int first)
{
	float w = 1.0f / (float)k;
	long i;

	/* element-wise: any split is exact; two sampler chunks of work at
	 * least, as the updates (and below, no OpenMP construct: see
	 * UPDATE_PARALLEL_MIN) */
	if (n < 2 * BNN_RNG_NORMAL_CHUNK) {
		for (i = 0; i < n; i++)
			acc[i] = first ? w * x[i] : acc[i] + w * x[i];
	} else if (first) {
#pragma omp parallel for schedule(static)
		for (i = 0; i < n; i++)
			acc[i] = w * x[i];
	} else {
#pragma omp parallel for schedule(static)
		for (i = 0; i < n; i++)
			acc[i] += w * x[i];
	}
}

/* The first tensor that ends after parameter `at` (the tensors tile the
 * parameters in order, as bnn_model_check() requires). */
static int tensor_at(const struct trainer *t, long at)
{
	int lo = 0, hi = t->ntensors;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (t->tensors[mid].offset + t->tensors[mid].size <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The update of parameters [start, end), split at the tensors' borders,
 * with noise[0..end − start) the next sample's ε for them (or NULL). */
static void update_range(struct trainer *t, const struct train_optimizer *opt, float lr, double tau,
                         long start, long end, const float *noise)
{
	struct train_piece p = { NULL, 0, 0, NULL, lr, tau };
	int i;

	for (i = tensor_at(t, start); i < t->ntensors; i++) {
		const struct train_tensor *tt = &t->tensors[i];
		long a = tt->offset > start ? tt->offset : start;
		long e = tt->offset + tt->size < end ? tt->offset + tt->size : end;
		if (tt->offset >= end)
			break;
		if (e > a) {
			p.tt = tt;
			p.a = a;
			p.len = e - a;
			p.noise = noise ? noise + (a - start) : NULL;
			opt->update(t, &p);
		}
	}
}

/* The updates run in parallel over fixed pieces of the parameter vector,
 * UPDATE_CHUNK parameters each (the sampler's chunk: each piece's noise
 * comes from its own lanes), split at the tensors' borders and, within,
 * into blocks of BNN_SAMPLE_BLOCK: the same pieces for every number of
 * threads, and every update rule is element-wise, so the split changes no
 * bit.  From UPDATE_PARALLEL_MIN parameters on (two chunks): below, one
 * chunk is a few microseconds of work, the cost of waking a team.  At
 * two chunks, bnn_posterior_sample (the sampling half of the fused
 * update) took 18.3 us on one thread and 11.0 on two here (the fastest
 * of 40 alternating runs).  Below, the loops run with no OpenMP construct
 * at all: an inactive one (an if clause that is false) costs about 2 us,
 * a tenth of a small model's step. */
#define UPDATE_CHUNK        BNN_RNG_NORMAL_CHUNK
#define UPDATE_PARALLEL_MIN (2 * UPDATE_CHUNK)

_Static_assert(UPDATE_CHUNK % BNN_SAMPLE_BLOCK == 0,
               "a sampler chunk is whole blocks of the fused update");

/* The end of chunk c of n parameters. */
static long chunk_end(long n, long c)
{
	return n - c * UPDATE_CHUNK < UPDATE_CHUNK ? n : (c + 1) * UPDATE_CHUNK;
}

void train_update_tensors(struct trainer *t, float lr, double tau)
{
	const struct train_optimizer *opt = &train_optimizers[t->o->optimizer];
	long n = t->m->nparams, c, nchunks = (n + UPDATE_CHUNK - 1) / UPDATE_CHUNK;

	if (n >= UPDATE_PARALLEL_MIN) {
#pragma omp parallel for schedule(static)
		for (c = 0; c < nchunks; c++)
			update_range(t, opt, lr, tau, c * UPDATE_CHUNK, chunk_end(n, c), NULL);
	} else {
		for (c = 0; c < nchunks; c++)
			update_range(t, opt, lr, tau, c * UPDATE_CHUNK, chunk_end(n, c), NULL);
	}
}

/* Chunk c of the fused update and sample, its noise from s sought to the
 * chunk's start, block by block. */
static void update_sample_chunk(struct trainer *t, const struct train_optimizer *opt, float lr,
                                double tau, long c, bnn_rng_normal_stream *s)
{
	float noise[BNN_SAMPLE_BLOCK];
	long n = t->m->nparams, start, stop = chunk_end(n, c);

	bnn_rng_normal_seek(s, (size_t)(c * UPDATE_CHUNK));
	for (start = c * UPDATE_CHUNK; start < stop; start += BNN_SAMPLE_BLOCK) {
		long end = stop - start < BNN_SAMPLE_BLOCK ? stop : start + BNN_SAMPLE_BLOCK;
		bnn_rng_normal_next(s, noise, (size_t)(end - start));
		update_range(t, opt, lr, tau, start, end, noise);
	}
}

/* The noise is bnn_posterior_sample's (one bnn_rng_normal() call over all
 * parameters), drawn block by block, each block split at the tensors'
 * borders; each chunk of the sampler is one piece of the parallel loop,
 * drawn by a copy of the stream sought to its start. */
void train_update_and_sample(struct trainer *t, float lr, double tau)
{
	const struct train_optimizer *opt = &train_optimizers[t->o->optimizer];
	bnn_rng_normal_stream stream;
	long n = t->m->nparams, c, nchunks = (n + UPDATE_CHUNK - 1) / UPDATE_CHUNK;

	bnn_rng_normal_begin(&stream, &t->noise, (size_t)n);
	if (n >= UPDATE_PARALLEL_MIN) {
#pragma omp parallel for schedule(static)
		for (c = 0; c < nchunks; c++) {
			bnn_rng_normal_stream s = stream;
			update_sample_chunk(t, opt, lr, tau, c, &s);
		}
	} else {
		for (c = 0; c < nchunks; c++)
			update_sample_chunk(t, opt, lr, tau, c, &stream);
	}
}

/* σ from VOGN's s (at τ), IVON's h or BBB's ρ, where the fused update
 * does not store it. */
static void sigma_from_state(struct trainer *t, double tau)
{
	const struct train_optimizer *opt = &train_optimizers[t->o->optimizer];
	int i;

	for (i = 0; opt->sigma && i < t->ntensors; i++)
		if (train_stochastic(&t->tensors[i]))
			opt->sigma(t, &t->tensors[i], tau);
}

/* The first sample of a run whose updates draw the next one (later ones
 * come from the update), from σ derived afresh: IVON's ĥ assumes
 * σ = 1/√(λ(h + δ)) even if a loaded state's options changed δ or λ.
 * BBB keeps ε (t->eps), VOGN and IVON do not (with one sample per step
 * they have no t->eps). */
void train_sample_first(struct trainer *t, double tau)
{
	sigma_from_state(t, tau);
	bnn_posterior_sample(t->m->nparams, t->st->params, t->st->sigma, t->eps, t->theta,
	                     &t->noise);
	t->primed = 1;
}

double train_step(struct trainer *t, long b, double lr, double epochs)
{
	return train_optimizers[t->o->optimizer].step(t, b, (float)lr, epochs);
}

void train_step_finish_epoch(struct trainer *t)
{
	const struct train_optimizer *opt = &train_optimizers[t->o->optimizer];

	if (t->primed) /* the fused updates did not store σ */
		sigma_from_state(t, t->tau);
	if (opt->finish_epoch)
		opt->finish_epoch(t);
}
