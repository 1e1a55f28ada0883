/*
 * params_init.c: the initial parameters of a model, tensor by tensor, by
 * the rule the code generator chose for each (bnn_tensor.init):
 *   He normal       N(0, 2/fan_in), for layers feeding ReLU-like units
 *                   (He et al. 2015);
 *   Glorot uniform  U(−a, a) with a = sqrt(6/(fan_in + fan_out)) (Glorot
 *                   and Bengio 2010), for every other weight;
 *   zero            biases, batchnorm's shift β and the learned log σ of
 *                   a Gaussian likelihood;
 *   one             batchnorm's scale γ and a whvi layer's S1 and S2;
 *   rho             softplus⁻¹(0.01): the ρ of a whvi layer's scales.
 * The tensors are visited in order and draw from one generator, so a seed
 * fixes the whole initialisation.  The running statistics of batchnorm
 * layers start at mean 0 and variance 1 (bnn_stats_init), by the same
 * rules.
 */
#include <math.h>

#include "bnn.h"

/* Every tensor of the table T (n rows) in V, by its rule. */
static void tensors_init(const bnn_tensor *t, int n, float *v, bnn_rng *rng)
{
	int i;
	long j;

	for (i = 0; i < n; i++, t++) {
		float *p = v + t->offset;
		switch (t->init) {
		case BNN_INIT_HE_NORMAL: {
			float s = (float)sqrt(2.0 / (double)(t->fan_in > 0 ? t->fan_in : 1));
			bnn_rng_normal(rng, p, (size_t)t->size);
			for (j = 0; j < t->size; j++)
				p[j] *= s;
			break;
		}
		case BNN_INIT_GLOROT_UNIFORM: {
			double a = sqrt(6.0 / (double)(t->fan_in + t->fan_out > 0
			                                       ? t->fan_in + t->fan_out
			                                       : 1));
			for (j = 0; j < t->size; j++)
				p[j] = (float)((2 * bnn_rng_uniform(rng) - 1) * a);
			break;
		}
		case BNN_INIT_ONE:
			for (j = 0; j < t->size; j++)
				p[j] = 1;
			break;
		case BNN_INIT_RHO: {
			float r = (float)bnn_softplus_inverse(BNN_INIT_RHO_SIGMA);
			for (j = 0; j < t->size; j++)
				p[j] = r;
			break;
		}
		default:
			for (j = 0; j < t->size; j++)
				p[j] = 0;
			break;
		}
	}
}

void bnn_params_init(const bnn_model *m, float *params, bnn_rng *rng)
{
	tensors_init(m->tensors, m->ntensors, params, rng);
}

void bnn_stats_init(const bnn_model *m, float *stats)
{
	bnn_rng unused;

	bnn_rng_seed(&unused, 0); /* the statistics' rules draw nothing */
	tensors_init(m->stat_tensors, m->nstat_tensors, stats, &unused);
}
