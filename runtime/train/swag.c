/*
 * swag.c: SWAG, the Gaussian posterior of Maddox et al. 2019 ("A Simple
 * Baseline for Bayesian Uncertainty in Deep Learning") collected from the
 * iterates of sgd, adam or adamw: with the option swag = K, bnn_train
 * takes the parameters at the end of each of the last K epochs, keeps
 * their running first and second moments and the last R = swag_rank
 * deviations (Alg. 1), and ends with the posterior N(θ̄, ½(Σ_diag + D·Dᵀ/
 * (R − 1))) (eq. 1 with the paper's ½ of each part): params θ̄, sigma
 * Σ_diag^{1/2}/√2 and the deviations D in the state's post-hoc record
 * (posthoc_posterior.c samples it).  docs/swag.md.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"
#include "base/floats.h"
#include "train_internal.h"

int train_swag_options_check(const bnn_train_options *o, bnn_err *err)
{
	if (o->swag < 0 || o->swag_rank < 0)
		return bnn_fail(err, BNN_ERANGE, "option '%s': %ld is outside [0, 1e+09]",
		                o->swag < 0 ? "swag" : "swag_rank",
		                o->swag < 0 ? o->swag : o->swag_rank);
	if (o->swag == 0)
		return BNN_OK;
	if (o->swag > o->epochs)
		return bnn_fail(
		        err, BNN_EINVAL,
		        "option 'swag': collecting the last %ld epochs takes at least %ld, and "
		        "training runs %ld (epochs)",
		        o->swag, o->swag, o->epochs);
	if (o->patience > 0)
		return bnn_fail(
		        err, BNN_EINVAL,
		        "option 'swag' collects the last epochs of the run, and early stopping "
		        "(patience) may end it before them: use one or the other");
	return BNN_OK;
}

int train_swag_start(struct train_swag *s, const bnn_train_options *o, long n, bnn_err *err)
{
	memset(s, 0, sizeof *s);
	if (o->swag == 0)
		return BNN_OK;
	s->n = n;
	/* eq. 1 divides by K − 1: fewer than 2 deviations give no low-rank part */
	s->rank = o->swag_rank < o->swag ? o->swag_rank : o->swag;
	if (s->rank < 2)
		s->rank = 0;
	s->mean = calloc((size_t)n, sizeof *s->mean);
	s->sq = calloc((size_t)n, sizeof *s->sq);
	s->dev = s->rank ? bnn_floats_alloc(s->rank * n) : NULL;
	if (!s->mean || !s->sq || (s->rank && !s->dev))
		return bnn_fail(err, BNN_ENOMEM, "out of memory for SWAG's moments");
	return BNN_OK;
}

void train_swag_collect(struct train_swag *s, const float *theta)
{
	double k;
	long j;

	if (!s->mean)
		return;
	/* Alg. 1: θ̄ ← (nθ̄ + θ)/(n + 1), θ²̄ ← (nθ²̄ + θ²)/(n + 1) */
	k = (double)s->collected;
	for (j = 0; j < s->n; j++) {
		double t = theta[j];
		s->mean[j] = (k * s->mean[j] + t) / (k + 1);
		s->sq[j] = (k * s->sq[j] + t * t) / (k + 1);
	}
	s->collected++;
	if (s->rank) { /* Alg. 1: the deviation θ_i − θ̄_i as D's newest column */
		float *d = s->dev + s->next * s->n;
		for (j = 0; j < s->n; j++)
			d[j] = (float)((double)theta[j] - s->mean[j]);
		s->next = (s->next + 1) % s->rank;
	}
}

int train_swag_finish(struct train_swag *s, bnn_state *st, bnn_err *err)
{
	bnn_posthoc *p;
	long j, r, rows;

	if (!s->mean || s->collected == 0)
		return BNN_OK;
	rows = s->rank && s->collected >= 2 ? (s->collected < s->rank ? s->collected : s->rank) : 0;
	p = calloc(1, sizeof *p);
	if (!p || (!st->sigma && !(st->sigma = bnn_floats_alloc(s->n))) ||
	    (rows && !(p->dev = bnn_floats_alloc(rows * s->n)))) {
		bnn_posthoc_free(p);
		return bnn_fail(err, BNN_ENOMEM, "out of memory for the SWAG posterior");
	}
	p->kind = BNN_POSTHOC_SWAG;
	p->examples = s->collected;
	p->rank = rows;
	for (j = 0; j < s->n; j++) {
		double var = s->sq[j] - s->mean[j] * s->mean[j];
		st->params[j] = (float)s->mean[j];
		st->sigma[j] = (float)sqrt(0.5 * (var > 0 ? var : 0)); /* ½Σ_diag */
	}
	/* oldest first: the ring's next row is its oldest once full */
	for (r = 0; r < rows; r++) {
		long src = s->collected >= s->rank ? (s->next + r) % s->rank : r;
		memcpy(p->dev + r * s->n, s->dev + src * s->n, (size_t)s->n * sizeof *p->dev);
	}
	bnn_posthoc_free(st->posthoc);
	st->posthoc = p;
	return BNN_OK;
}

void train_swag_free(struct train_swag *s)
{
	free(s->mean);
	free(s->sq);
	free(s->dev);
	memset(s, 0, sizeof *s);
}
