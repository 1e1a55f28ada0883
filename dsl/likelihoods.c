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
 *   studentt(x, scale = s, df = ν)  Student-t(target | x, s, ν) per output
 *                                (heavy tails), ν > 0 required
 *   negbinomial(rate_log, dispersion = r)  negative binomial counts of mean
 *                                exp(rate_log) and variance m + m²/r
 *
 * gaussian's sigma, laplace's and studentt's scale and negbinomial's
 * dispersion are the same thing to the rest of bnnc (g->sigma,
 * g->sigma_learned, g->scale_node: the likelihood's scale parameter), so
 * that a learned one is one tensor, one gradient, by one mechanism.  The
 * scale may also be a second node of the first one's shape, giving its
 * log per example (heteroscedastic models, 'gaussian(mu, lv)' with lv the
 * log-variance): the same kernel reads it from that node instead of a
 * tensor, and its gradient flows back through the graph.
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

static const struct arg_spec studentt_args[] = {
	{ "x", ARG_NODE, 1, 0, 0, 0, 0 },
	{ "scale", ARG_SIGMA, 1, 0, 0, INFINITY, ARG_LO_OPEN },
	{ "df", ARG_REAL, 1, 0, 0, INFINITY, ARG_LO_OPEN },
};
static const struct arg_spec negbinomial_args[] = {
	{ "x", ARG_NODE, 1, 0, 0, 0, 0 },
	{ "dispersion", ARG_SIGMA, 1, 0, 0, INFINITY, ARG_LO_OPEN },
};

static const struct likelihood_node_form node_forms[LIKELIHOOD_COUNT] = {
	[LIKELIHOOD_GAUSSIAN] = { "log-variance", 0.5, 1 },
	[LIKELIHOOD_LAPLACE] = { "log-scale", 1, 0 },
	[LIKELIHOOD_STUDENTT] = { "log-scale", 1, 0 },
	[LIKELIHOOD_NEGBINOMIAL] = { "log-dispersion", 1, 0 },
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

const struct likelihood_node_form *likelihood_node_form(enum likelihood_id l)
{
	return node_forms[l].what ? &node_forms[l] : NULL;
}

/* The second node S given for the scale (argument 1, written at LOC):
 * another node than the first, of its shape, and for gaussian written
 * without its keyword.  Returns 0 or -1 after reporting. */
static int likelihood_check_node(struct diag *d, struct graph *g, int s, bnn_loc loc, int keyed)
{
	const struct likelihood_node_form *f = likelihood_node_form(g->likelihood);
	const struct graph_node *out = &g->nodes[g->output], *n = &g->nodes[s];
	const char *key = likelihood_get(g->likelihood)->spec[1].name;
	char want[64], got[64];

	if (f->positional_only && keyed) { /* args_sigma left it to this message */
		diag_error(d, loc, "'%s' must be a positive number or 'learned', not node '%s'",
		           key, n->name);
		diag_note(d, loc,
		          "a node as the %s likelihood's second argument is its %s: write it "
		          "without '%s =', as in '%s(%s, %s)'",
		          likelihood_name(g->likelihood), f->what, key,
		          likelihood_name(g->likelihood), out->name, n->name);
		return -1;
	}
	if (s == g->output) {
		diag_error(d, loc,
		           "'%s' is already the %s likelihood's first argument: its %s needs a "
		           "node of its own",
		           n->name, likelihood_name(g->likelihood), f->what);
		return -1;
	}
	graph_shape_str(out, want, sizeof want);
	graph_shape_str(n, got, sizeof got);
	if (n->rank != out->rank || strcmp(want, got) != 0) {
		diag_error(d, loc, "the %s '%s' must have the shape of '%s', %s, not %s", f->what,
		           n->name, out->name, want, got);
		return -1;
	}
	g->scale_node = s;
	return 0;
}

/* The argument named NAME of likelihood L's table, or -1. */
static int likelihood_arg(enum likelihood_id l, const char *name)
{
	const struct likelihood_info *info = likelihood_get(l);
	int i;
	for (i = 0; i < info->nspec; i++)
		if (strcmp(info->spec[i].name, name) == 0)
			return i;
	return -1;
}

int likelihood_check(struct diag *d, struct graph *g, bnn_loc call_loc,
                     const struct value *const val[ARGS_MAX], const bnn_loc loc[ARGS_MAX],
                     const int keyed[ARGS_MAX])
{
	int df = likelihood_arg(g->likelihood, "df"), node = -1;

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
		const struct likelihood_node_form *f = likelihood_node_form(g->likelihood);
		/* gaussian's 'sigma = NODE' takes a node only to refuse it with a note */
		int node_ok = f && (!f->positional_only || !keyed[1] ||
		                    (val[1] && val[1]->kind == VAL_NODE));
		g->scale_node = -1;
		if (args_sigma(d, scale, val[1], &g->sigma, &g->sigma_learned,
		               node_ok ? &node : NULL) != 0)
			return -1;
		if (node >= 0 && likelihood_check_node(d, g, node, loc[1], keyed[1]) != 0)
			return -1;
		g->likelihood_params = g->sigma_learned ? out->shape[0] : 0;
	}
	if (df >= 0 &&
	    args_number(d, &likelihood_get(g->likelihood)->spec[df], val[df], &g->df) != 0)
		return -1;
	return 0;
}
