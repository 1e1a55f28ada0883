/* likelihood_code.c: the end of the generated pass, where the model's
 * output meets its targets.  One kernel per likelihood
 * (bnn_gen/likelihood.h) returns the summed negative log-likelihood and
 * writes the delta of the output node; a learned scale (gaussian's σ,
 * laplace's b, one per output, stored as its log) also gets its gradient
 * (and mean squared per-example gradient) here, since it is a parameter
 * of the likelihood, not of a layer, and a scale given by a second node
 * (gaussian(mu, lv)) the first contribution to that node's delta.
 */
#include "cg.h"
#include "ops.h"

#include <math.h>
#include <stdio.h>

/* The kernels' names of the scale families (bnn_gen/likelihood.h). */
static const char *const cg_scale_family[] = {
#define LIKELIHOOD(id, name, spec) "BNN_GEN_SCALE_" #id,
#include "likelihoods.def"
#undef LIKELIHOOD
};

/* A location-scale likelihood through bnn_gen_scale_lik, its log-scale
 * read from the learned tensor, from the second node (whose delta it
 * writes first: the backward pass adds the rest) or, for a fixed scale of
 * a likelihood without a kernel of its own, as a constant. */
static void cg_emit_scale_lik(struct cg *cg, const char *z, long k, const char *dz)
{
	const struct graph *g = cg->g;
	const struct likelihood_node_form *f = likelihood_node_form(g->likelihood);
	char nu[40], factor[40], fixed[40], s[200], ds[200] = "NULL", ss[200] = "NULL";
	long srow = 0, scol = 1;

	emit_double_str(g->df, nu, sizeof nu);
	emit_double_str(g->scale_node >= 0 ? f->log_scale_per_unit : 1.0, factor, sizeof factor);
	if (g->scale_node >= 0) {
		const char *v = cg_name(cg, g->scale_node);
		snprintf(s, sizeof s, "a_%s", v);
		srow = k;
		if (cg->nodes[g->scale_node].has_delta) {
			snprintf(ds, sizeof ds, "grad ? d_%s : NULL", v);
			cg->nodes[g->scale_node].delta_set = 1;
		}
	} else if (cg->sigma_tensor >= 0) {
		long off = cg->tensors[cg->sigma_tensor].offset;
		snprintf(s, sizeof s, "w + %ld", off);
		snprintf(ds, sizeof ds, "grad ? grad + %ld : NULL", off);
		snprintf(ss, sizeof ss, "sqgrad ? sqgrad + %ld : NULL", off);
	} else {
		emit_double_str(log(g->sigma), fixed, sizeof fixed);
		emit(cg->e, "\tconst bnn_real log_scale = (bnn_real)%s;\n", fixed);
		snprintf(s, sizeof s, "&log_scale");
		scol = 0;
	}
	emit(cg->e,
	     "\tloss = bnn_gen_scale_lik(%s, %s, B, %ld, a_%s, y, %s, %ld, %ld, %s,\n"
	     "\t                         %s, %s, %s);\n",
	     cg_scale_family[g->likelihood], nu, k, z, s, srow, scol, factor, dz, ds, ss);
}

void cg_emit_likelihood(struct cg *cg)
{
	const struct graph *g = cg->g;
	const char *z = cg_name(cg, g->output);
	long k = cg->nodes[g->output].width;
	char dz[200] = "NULL", scale[40];
	if (cg->nodes[g->output].has_delta) {
		snprintf(dz, sizeof dz, "grad ? d_%s : NULL", z);
		cg->nodes[g->output].delta_set = 1;
	}
	switch (g->likelihood) {
	case LIKELIHOOD_CATEGORICAL:
		emit(cg->e, "\tloss = bnn_gen_categorical(B, %ld, a_%s, y, %s);\n", k, z, dz);
		break;
	case LIKELIHOOD_BERNOULLI:
		emit(cg->e, "\tloss = bnn_gen_bernoulli(B, %ld, a_%s, y, %s);\n", k, z, dz);
		break;
	case LIKELIHOOD_POISSON:
		emit(cg->e, "\tloss = bnn_gen_poisson(B, %ld, a_%s, y, %s);\n", k, z, dz);
		break;
	case LIKELIHOOD_GAUSSIAN:
	case LIKELIHOOD_LAPLACE:
		if (!g->sigma_learned && g->scale_node < 0) { /* their own faster kernels */
			emit_double_str(g->sigma, scale, sizeof scale);
			emit(cg->e, "\tloss = bnn_gen_%s_fixed(B, %ld, a_%s, y, %s, %s);\n",
			     likelihood_name(g->likelihood), k, z, scale, dz);
			break;
		}
		cg_emit_scale_lik(cg, z, k, dz);
		break;
	default: /* studentt, negbinomial */
		cg_emit_scale_lik(cg, z, k, dz);
		break;
	}
}
