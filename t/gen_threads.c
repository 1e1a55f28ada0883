/*
 * gen_threads.c: TAP tests that generated passes give the same bits on 1,
 * 2 and 3 threads.
 *
 * The kernels of runtime/include/bnn_gen share their outputs among the
 * calling thread's OpenMP team and never split a sum (bnn_gen/loop.h), so
 * bnn_set_threads must not change a single bit of a pass.  Six models of
 * t/models, compiled in float as in use and sized so that a batch of 96
 * takes the threaded paths: th_drop (dense layers with dropout masks,
 * tanh, sigmoid), th_cnn (conv2d's every path: dW by columns and by rows,
 * dX by shifted views and by col2im, a pointwise and a strided layer, a
 * dropout mask; batchnorm, maxpool, avgpool, globalavgpool), th_mf
 * (meanfield's local reparameterisation, softplus, gelu, a Gaussian
 * likelihood), th_whvi (WHVI layers), th_patch (emp and ecmp patches on
 * conv2d, batchnorm and dense) and th_norm (groupnorm, layernorm of a
 * map and of a vector).  For each, three passes run with 1 thread
 * and then with 2 and 3, from the same parameters, data, running
 * statistics and rng seed:
 *   train    loss, outputs, gradient, squared gradients, the running
 *            statistics it updates and the rng's state after its draws;
 *   sigma    (th_mf) the local reparameterisation with sigma: loss,
 *            outputs, gradient and grad_sigma;
 *   predict  outputs of a pass without noise on the running statistics;
 * and each array must be memcmp-equal to the one-thread pass's.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "th_cnn.h"
#include "th_drop.h"
#include "th_mf.h"
#include "th_norm.h"
#include "th_patch.h"
#include "th_whvi.h"

#define TH_BATCH 96
#define TH_NRUNS 3

/* Everything one pass may write, for one thread count. */
struct th_run {
	double loss[3];
	float *out, *grad, *sqgrad, *stats, *gsig, *pred;
	bnn_rng rng_after;
};

static float *th_alloc(long n)
{
	float *p = calloc((size_t)(n > 0 ? n : 1), sizeof *p);

	if (!p)
		tap_bail_out("out of memory");
	return p;
}

/* Uniform in [lo, hi) from a splitmix64 stream of this file. */
static float th_uniform(uint64_t *s, double lo, double hi)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return (float)(lo + (hi - lo) * (double)(z >> 11) * 0x1p-53);
}

/* The three passes of one model on the calling thread's team. */
static void th_passes(const bnn_model *m, const float *w, const float *x, const float *y,
                      const float *sigma, const float *stats0, float *ws, struct th_run *r)
{
	bnn_pass p;
	bnn_rng rng;

	memset(&p, 0, sizeof p);
	p.w = w;
	p.x = x;
	p.y = y;
	p.batch = TH_BATCH;
	p.ws = ws;
	memcpy(r->stats, stats0, (size_t)m->nstats * sizeof *r->stats);

	bnn_rng_seed(&rng, 2026);
	p.out = r->out;
	p.grad = r->grad;
	p.sqgrad = r->sqgrad;
	p.rng = &rng;
	p.stats = m->nstats ? r->stats : NULL;
	p.train = 1;
	r->loss[0] = m->pass(&p);
	r->rng_after = rng;

	r->loss[1] = 0;
	if (sigma) {
		bnn_rng_seed(&rng, 7);
		p.sqgrad = NULL;
		p.sigma = sigma;
		p.grad_sigma = r->gsig;
		p.stats = NULL;
		r->loss[1] = m->pass(&p);
		p.sigma = NULL;
		p.grad_sigma = NULL;
	}

	p.y = NULL;
	p.grad = NULL;
	p.sqgrad = NULL;
	p.rng = NULL;
	p.out = r->pred;
	p.stats = m->nstats ? r->stats : NULL;
	p.train = 0;
	r->loss[2] = m->pass(&p);
}

static void th_model(const bnn_model *m, int with_sigma)
{
	const long np = m->nparams, no = TH_BATCH * m->outputs;
	float *w = th_alloc(np), *x = th_alloc(TH_BATCH * m->inputs);
	float *y = th_alloc(TH_BATCH * m->targets), *stats0 = th_alloc(m->nstats);
	float *sigma = with_sigma ? th_alloc(np) : NULL;
	float *ws = th_alloc((long)m->workspace_floats(TH_BATCH));
	struct th_run run[TH_NRUNS];
	uint64_t seed = 18;
	long i;
	int t;

	for (i = 0; i < np; i++)
		w[i] = th_uniform(&seed, -0.2, 0.2);
	for (i = 0; i < TH_BATCH * m->inputs; i++)
		x[i] = th_uniform(&seed, -1, 1);
	for (i = 0; i < TH_BATCH * m->targets; i++)
		y[i] = m->likelihood == BNN_LIKELIHOOD_CATEGORICAL
		               ? (float)(long)th_uniform(&seed, 0, (double)m->outputs)
		               : th_uniform(&seed, -1, 1);
	for (i = 0; i < m->nstats; i++) /* mean 0.1, variance 1.5: not the identity */
		stats0[i] = i % 2 ? 1.5f : 0.1f;
	for (i = 0; sigma && i < np; i++)
		sigma[i] = th_uniform(&seed, 0.01, 0.1);

	for (t = 0; t < TH_NRUNS; t++) {
		struct th_run *r = &run[t];

		r->out = th_alloc(no);
		r->pred = th_alloc(no);
		r->grad = th_alloc(np);
		r->sqgrad = th_alloc(np);
		r->gsig = th_alloc(np);
		r->stats = th_alloc(m->nstats);
		bnn_set_threads(t + 1);
		th_passes(m, w, x, y, sigma, stats0, ws, r);
	}
	bnn_set_threads(1);
	ok(run[0].loss[0] > 0 && run[0].loss[2] == 0, "%s: the training pass has a loss (%g)",
	   m->name, run[0].loss[0]);
	for (t = 1; t < TH_NRUNS; t++) {
		const struct th_run *a = &run[0], *b = &run[t];
		const size_t fl = sizeof(float);

		ok(!memcmp(a->loss, b->loss, sizeof a->loss), "%s, %d threads: the losses", m->name,
		   t + 1);
		ok(!memcmp(a->out, b->out, (size_t)no * fl) &&
		           !memcmp(a->pred, b->pred, (size_t)no * fl),
		   "%s, %d threads: the outputs of training and of prediction", m->name, t + 1);
		ok(!memcmp(a->grad, b->grad, (size_t)np * fl), "%s, %d threads: the gradient",
		   m->name, t + 1);
		ok(!memcmp(a->sqgrad, b->sqgrad, (size_t)np * fl),
		   "%s, %d threads: the squared gradients", m->name, t + 1);
		if (m->nstats)
			ok(!memcmp(a->stats, b->stats, (size_t)m->nstats * fl),
			   "%s, %d threads: the running statistics", m->name, t + 1);
		if (sigma)
			ok(!memcmp(a->gsig, b->gsig, (size_t)np * fl),
			   "%s, %d threads: grad_sigma of the local reparameterisation", m->name,
			   t + 1);
		ok(!memcmp(&a->rng_after, &b->rng_after, sizeof a->rng_after),
		   "%s, %d threads: the same draws from rng", m->name, t + 1);
	}
	for (t = 0; t < TH_NRUNS; t++) {
		free(run[t].out);
		free(run[t].pred);
		free(run[t].grad);
		free(run[t].sqgrad);
		free(run[t].gsig);
		free(run[t].stats);
	}
	free(w);
	free(x);
	free(y);
	free(stats0);
	free(sigma);
	free(ws);
}

int main(void)
{
	if (bnn_threads_available() < 2)
		tap_diag("one core: the teams of 2 and 3 threads share it");
	th_model(&th_drop_model, 0);
	th_model(&th_cnn_model, 0);
	th_model(&th_mf_model, 1);
	th_model(&th_whvi_model, 0);
	th_model(&th_patch_model, 0);
	th_model(&th_norm_model, 0);
	return tap_done();
}
