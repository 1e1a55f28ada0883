/*
 * prior_terms.c: the priors that are not Gaussian (bnn_model.prior:
 * scalemixture, laplace) in training.  A Gaussian prior enters every
 * optimizer in closed form through the tensors' δ (train_step.c); the
 * others enter only where an update takes the gradient of −log p:
 *
 *   sgd, adam, adamw  the MAP objective mean NLL − (1/N)·log p(θ): the
 *                     gradient (1/N)·∂(−log p)/∂θ at the parameters is
 *                     added to the pass's, after the sum over MPI ranks
 *                     (every rank holds the same θ);
 *   bbb               the loss E_q[log q(w) − log p(w) − log p(D|w)]/N
 *                     (Blundell et al. 2015, eq. (1)-(2)) with the entropy
 *                     term E_q log q in closed form (the kernel's −1/(σN)
 *                     with δ = 0) and −E_q log p by the reparameterised
 *                     one-sample estimate at w = μ + σε (section 3.1,
 *                     eq. (3)-(5)): ∂/∂μ = d(w)/N, ∂/∂σ = d(w)·ε/N, d =
 *                     ∂(−log p)/∂w, at the weight sample the likelihood's
 *                     pass used (the last of mc samples), or with the local
 *                     reparameterisation, which samples no weights, at a
 *                     sample drawn for the prior term alone; its tensors
 *                     without a posterior get the MAP gradient at μ.
 *
 * VOGN, IVON and BADAM have the prior precision δ inside their
 * natural-gradient updates (VOGN Alg. 1 lines 7-9, IVON Alg. 1 lines 6-8,
 * BADAM eq. 10-12): the refusal is below.  So are the layers whose
 * regulariser is a Gaussian KL of their own (emp and ecmp's eq. (7) L2
 * term, whvi's KL of q(g)), and the option delta, a Gaussian precision.
 */
#include <math.h>

#include "train_internal.h"

/* The prior a tensor of layer l (NULL: the likelihood's) has: gaussian, or
 * the model's other kind. */
static int layer_prior_kind(const bnn_model *m, const bnn_layer *l)
{
	return l ? l->prior_kind : m->prior.kind;
}

/* The first layer (or the likelihood, -1) whose tensors have the model's
 * non-Gaussian prior; -2 when none has. */
static int first_non_gaussian(const bnn_model *m)
{
	int i;

	for (i = 0; i < m->nlayers; i++)
		if (m->layers[i].prior_kind != BNN_PRIOR_GAUSSIAN && m->layers[i].ntensors > 0)
			return i;
	for (i = 0; i < m->ntensors; i++)
		if (m->tensors[i].layer < 0 && m->prior.kind != BNN_PRIOR_GAUSSIAN)
			return -1;
	return -2;
}

const bnn_prior *train_tensor_prior(const bnn_model *m, const bnn_layer *l)
{
	return layer_prior_kind(m, l) != BNN_PRIOR_GAUSSIAN ? &m->prior : NULL;
}

int train_check_prior(const bnn_model *m, const bnn_train_options *o, bnn_err *err)
{
	const struct train_optimizer *opt = train_optimizer_of(o->optimizer);
	const char *prior = bnn_prior_name(m->prior.kind);
	int i;

	if (first_non_gaussian(m) == -2)
		return BNN_OK;
	if (!opt->any_prior)
		return bnn_fail(err, BNN_EUNSUPPORTED,
		                "optimizer '%s' needs a gaussian prior (its update has the prior "
		                "precision in closed form), and model '%s' has a %s prior: train "
		                "it with sgd, adam, adamw or bbb, or declare 'prior "
		                "gaussian(precision = ...);'",
		                opt->name, m->name, prior);
	if (isfinite(o->delta))
		return bnn_fail(err, BNN_EINVAL,
		                "option 'delta' is the precision of a gaussian prior, and model "
		                "'%s' has a %s prior: leave it out",
		                m->name, prior);
	for (i = 0; i < m->nlayers; i++) {
		const bnn_layer *l = &m->layers[i];
		if (l->prior_kind != BNN_PRIOR_GAUSSIAN &&
		    (l->caps & (BNN_CAP_COMPONENTS | BNN_CAP_WHVI)))
			return bnn_fail(
			        err, BNN_EUNSUPPORTED,
			        "layer '%s' of model '%s' has %s %s posterior, whose KL term "
			        "needs a gaussian prior, and the model's prior is %s: give "
			        "the layer a precision of its own ('~ %s(prior = ...)')",
			        l->name, m->name, train_article(l->family), l->family, prior,
			        l->family);
	}
	return BNN_OK;
}

void train_prior_map_grad(struct trainer *t)
{
	int i;

	for (i = 0; i < t->ntensors; i++) {
		const struct train_tensor *tt = &t->tensors[i];
		if (tt->prior)
			bnn_prior_grad(tt->prior, tt->size, t->st->params + tt->offset, NULL,
			               1.0 / t->n_data, t->grad + tt->offset, NULL);
	}
}

void train_prior_sample_grad(struct trainer *t, int fused)
{
	const bnn_train_options *o = t->o;
	bnn_state *st = t->st;
	int i;

	for (i = 0; i < t->ntensors; i++) {
		const struct train_tensor *tt = &t->tensors[i];
		long a = tt->offset;
		if (!tt->prior)
			continue;
		if (!train_stochastic(tt)) { /* a point tensor: MAP at μ */
			bnn_prior_grad(tt->prior, tt->size, st->params + a, NULL, 1.0 / t->n_data,
			               t->grad + a, NULL);
			continue;
		}
		if (o->lrt && !tt->weight_sample) /* no weight sample of it yet */
			bnn_posterior_sample(tt->size, st->params + a, st->sigma + a, t->eps + a,
			                     t->theta + a, &t->noise);
		/* fused: the update forms g_σ = g∘ε itself from g */
		bnn_prior_grad(tt->prior, tt->size, t->theta + a, fused ? NULL : t->eps + a,
		               1.0 / t->n_data, t->grad + a, fused ? NULL : t->gsig + a);
	}
}
