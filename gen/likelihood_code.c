/* likelihood_code.c: the end of the generated pass, where the model's
 * output meets its targets.  One kernel per likelihood
 * (bnn_gen/likelihood.h) returns the summed negative log-likelihood and
 * writes the delta of the output node; a learned scale (gaussian's σ,
 * laplace's b, one per output, stored as its log) also gets its gradient
 * (and mean squared per-example gradient) here, since it is a parameter
 * of the likelihood, not of a layer.
 */
#include "cg.h"

/* A location-scale likelihood NAME (bnn_gen_NAME_learned, _fixed): the
 * learned scale's log from its tensor, or the fixed one as a constant. */
static void cg_emit_scale_likelihood(struct cg *cg, const char *name, const char *z, long k,
                                     const char *dz)
{
	char scale[40];

	if (cg->sigma_tensor >= 0) {
		long off = cg->tensors[cg->sigma_tensor].offset;
		emit(cg->e,
		     "\tloss = bnn_gen_%s_learned(B, %ld, a_%s, y, w + %ld, %s,\n"
		     "\t                grad ? grad + %ld : NULL, sqgrad ? sqgrad + %ld : NULL);\n",
		     name, k, z, off, dz, off, off);
	} else {
		emit_double_str(cg->g->sigma, scale, sizeof scale);
		emit(cg->e, "\tloss = bnn_gen_%s_fixed(B, %ld, a_%s, y, %s, %s);\n", name, k, z,
		     scale, dz);
	}
}

void cg_emit_likelihood(struct cg *cg)
{
	const struct graph *g = cg->g;
	const char *z = cg_name(cg, g->output);
	long k = cg->nodes[g->output].width;
	char dz[200] = "NULL";
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
		cg_emit_scale_likelihood(
		        cg, g->likelihood == LIKELIHOOD_GAUSSIAN ? "gaussian" : "laplace", z, k,
		        dz);
		break;
	default:
		break;
	}
}
