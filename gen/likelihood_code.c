/* likelihood_code.c: the end of the generated pass, where the model's
 * output meets its targets.  One kernel per likelihood
 * (bnn_gen/likelihood.h) returns the summed negative log-likelihood and
 * writes the delta of the output node; a learned Gaussian σ also gets its
 * gradient (and mean squared per-example gradient) here, since it is a
 * parameter of the likelihood, not of a layer.
 */
#include "cg.h"

void cg_emit_likelihood(struct cg *cg)
{
	const struct graph *g = cg->g;
	const char *z = cg_name(cg, g->output);
	long k = cg->nodes[g->output].width;
	char dz[200] = "NULL", sigma[40];
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
	case LIKELIHOOD_GAUSSIAN:
		if (cg->sigma_tensor >= 0) {
			long off = cg->tensors[cg->sigma_tensor].offset;
			emit(cg->e,
			     "\tloss = bnn_gen_gaussian_learned(B, %ld, a_%s, y, w + %ld, %s,\n"
			     "\t                                grad ? grad + %ld : NULL, sqgrad ? sqgrad + %ld : NULL);\n",
			     k, z, off, dz, off, off);
		} else {
			emit_double_str(g->sigma, sigma, sizeof sigma);
			emit(cg->e, "\tloss = bnn_gen_gaussian_fixed(B, %ld, a_%s, y, %s, %s);\n",
			     k, z, sigma, dz);
		}
		break;
	default:
		break;
	}
}
