/* likelihoods.c: the likelihoods that close a model, their arguments and the
 * shape each needs of the node it reads (see ops.h).
 *
 *   categorical(logits)          class probabilities softmax(logits); >= 2 classes
 *   gaussian(mean, sigma = s)    N(target | mean, s^2) per output; sigma = learned
 *                                keeps one learned sigma per output
 *   bernoulli(logits)            independent sigmoid(logit) per output
 *   poisson(rate_log)            counts: Poisson(target | exp(rate_log)) per output
 *   laplace(x, scale = b)        Laplace(target | x, b) per output (robust
 *                                regression); scale = learned keeps one
 *                                learned b per output, as gaussian's sigma
 *
 * gaussian's sigma and laplace's scale are the same thing to the rest of
 * bnnc (g->sigma, g->sigma_learned: the likelihood's scale parameter), so
 * that a learned one is one tensor, one gradient, by one mechanism.
 */
#include "ops.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define ARGN(spec) ((int)(sizeof(spec) / sizeof((spec)[0])))

static const struct arg_spec categorical_args[] = {
	{ "x", ARG_NODE, 1, 0, 0, 0, 0 },
};
static const struct arg_spec gaussian_args[] = {
	{ "x", ARG_NODE, 1, 0, 0, 0, 0 },
	{ "sigma", ARG_SIGMA, 1, 0, 0, INFINITY, ARG_LO_OPEN },
};
static const struct arg_spec laplace_args[] = {
	{ "x", ARG_NODE, 1, 0, 0, 0, 0 },
	{ "scale", ARG_SIGMA, 1, 0, 0, INFINITY, ARG_LO_OPEN },
};

static const struct likelihood_info likelihood_table[LIKELIHOOD_COUNT] = {
#define LIKELIHOOD(id, name, spec) [LIKELIHOOD_##id] = { name, spec, ARGN(spec) },
#include "likelihoods.def"
#undef LIKELIHOOD
};

const struct likelihood_info *likelihood_lookup(const char *name)
{
	int i;
	for (i = 0; i < LIKELIHOOD_COUNT; i++)
		if (strcmp(likelihood_table[i].name, name) == 0)
			return &likelihood_table[i];
	return NULL;
}

const struct likelihood_info *likelihood_get(enum likelihood_id l)
{
	return &likelihood_table[l];
}

void likelihood_list(char *buf, size_t size)
{
	size_t at = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < LIKELIHOOD_COUNT && at < size; i++) {
		const char *sep = i == 0 ? "" : i == LIKELIHOOD_COUNT - 1 ? " and " : ", ";
		int n = snprintf(buf + at, size - at, "%s%s", sep, likelihood_table[i].name);
		if (n < 0)
			break;
		at += (size_t)n;
	}
}

const char *likelihood_name(enum likelihood_id l)
{
	return likelihood_table[l].name;
}

int likelihood_has_scale(enum likelihood_id l)
{
	const struct likelihood_info *info = likelihood_get(l);
	return info->nspec > 1 && info->spec[1].type == ARG_SIGMA;
}

int likelihood_check(struct diag *d, struct graph *g, bnn_loc call_loc,
                     const struct value *const val[ARGS_MAX], const bnn_loc loc[ARGS_MAX])
{
	const struct graph_node *out = &g->nodes[g->output];
	const char *name = likelihood_name(g->likelihood);
	char shape[64];

	graph_shape_str(out, shape, sizeof shape);
	if (out->rank != 1) {
		diag_error(d, loc[0], "the %s likelihood needs a vector, but '%s' has shape %s",
		           name, out->name, shape);
		diag_note(d, out->name_loc, "flatten it, or end the model with a dense layer");
		return -1;
	}
	if (g->likelihood == LIKELIHOOD_CATEGORICAL && out->shape[0] < 2) {
		diag_error(
		        d, loc[0],
		        "the categorical likelihood needs at least 2 classes, but '%s' has shape %s",
		        out->name, shape);
		diag_note(d, call_loc, "for one output and two classes use 'bernoulli'");
		return -1;
	}
	if (likelihood_has_scale(g->likelihood)) {
		const struct arg_spec *scale = &likelihood_get(g->likelihood)->spec[1];
		if (args_sigma(d, scale, val[1], &g->sigma, &g->sigma_learned) != 0)
			return -1;
		g->likelihood_params = g->sigma_learned ? out->shape[0] : 0;
	}
	return 0;
}
