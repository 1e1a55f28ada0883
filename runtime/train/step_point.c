/*
 * step_point.c: the optimizers that take one pass at the parameters per
 * step (sgd, adam, adamw, badam): the gradient, the whvi layers' KL/N
 * (whvi_kl.c), clipping, then each tensor's update by the fused kernels
 * of optim_sgd.c and optim_adam.c, with weight decay only where the tensor
 * decays.
 *
 *   badam   Adam on the mean loss plus the prior's L2 term δ/N per tensor;
 *           σ = 1/√(N√v̂ + δ) after each epoch (Kessler et al., Alg. 1 and
 *           eq. 10-12).
 *
 * Their rows are in optimizers.c.
 */
#include "train_internal.h"

double train_step_point(struct trainer *t, long b, float lr, double epochs)
{
	bnn_state *st = t->st;
	double loss;

	train_dist_arm(t, t->grad, NULL, NULL); /* MPI: sums start per layer */
	loss = train_pass(t, b, st->params, NULL, t->grad, NULL, NULL);

	(void)epochs;
	train_whvi_kl_grad(t);
	loss = train_dist_step(t, loss, t->grad, NULL, NULL); /* over the MPI ranks */
	if (t->priors) /* the same θ on every rank: added to the sum */
		train_prior_map_grad(t);
	if (t->clip > 0)
		bnn_clip_grad_norm(t->m->nparams, t->grad, t->clip);
	st->step++;
	train_update_tensors(t, lr, 0);
	return loss;
}

void train_sgd_update(struct trainer *t, const struct train_piece *p)
{
	const struct train_tensor *tt = p->tt;
	bnn_state *st = t->st;
	bnn_sgd_params sp = t->o->sgd;

	sp.weight_decay = tt->patched ? (float)tt->prior_l2 : tt->decays ? sp.weight_decay : 0;
	bnn_sgd_step(p->len, st->params + p->a, t->grad + p->a, st->opt[0] + p->a, p->lr, st->step,
	             &sp);
}

/* Adam's step on a piece with weight decay ap. */
static void adam_update(struct trainer *t, const struct train_piece *p, const bnn_adam_params *ap)
{
	bnn_state *st = t->st;
	bnn_adam_arrays arr = { p->len, st->params + p->a, t->grad + p->a, st->opt[0] + p->a,
		                st->opt[1] + p->a };

	bnn_adam_step(&arr, p->lr, st->step, ap);
}

void train_adam_update(struct trainer *t, const struct train_piece *p)
{
	bnn_adam_params ap = t->o->adam;

	if (p->tt->patched) { /* eq. (7) over N: an L2 term */
		ap.weight_decay = (float)p->tt->prior_l2;
		ap.decoupled = 0;
	} else if (!p->tt->decays) {
		ap.weight_decay = 0;
	}
	adam_update(t, p, &ap);
}

/* BADAM: Adam on the MAP objective, mean loss + (δ/2N)|θ|² per tensor
 * (the Gaussian prior of eq. 8). */
void train_badam_update(struct trainer *t, const struct train_piece *p)
{
	bnn_adam_params ap = t->o->adam;

	ap.weight_decay = (float)(p->tt->delta / t->n_data);
	ap.decoupled = 0;
	adam_update(t, p, &ap);
}

void train_badam_finish_epoch(struct trainer *t)
{
	bnn_state *st = t->st;
	int i;

	if (st->step < 1)
		return;
	for (i = 0; i < t->ntensors; i++) {
		const struct train_tensor *tt = &t->tensors[i];
		if (train_stochastic(tt)) /* BADAM, Alg. 1 output and eq. 10-12 */
			bnn_badam_sigma(tt->size, st->opt[1] + tt->offset, st->step,
			                t->o->adam.beta2, train_effective_n(t), tt->delta,
			                st->sigma + tt->offset);
	}
}

int train_sgd_text(const bnn_train_options *o, char *buf, int n)
{
	return train_text_append(buf, n, " momentum=%.9g nesterov=%d weight_decay=%.9g",
	                         (double)o->sgd.momentum, o->sgd.nesterov,
	                         (double)o->sgd.weight_decay);
}

int train_adam_text(const bnn_train_options *o, char *buf, int n)
{
	return train_text_append(buf, n, " beta1=%.9g beta2=%.9g eps=%.9g weight_decay=%.9g",
	                         (double)o->adam.beta1, (double)o->adam.beta2, (double)o->adam.eps,
	                         (double)o->adam.weight_decay);
}

int train_badam_text(const bnn_train_options *o, char *buf, int n)
{
	n = train_adam_text(o, buf, n);
	return train_text_append(buf, n, " delta=%.9g ess=%.9g", o->delta, o->ess);
}
