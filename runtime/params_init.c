/*
 * params_init.c: the initial parameters of a model, tensor by tensor, by
 * the rule the code generator chose for each (bnn_tensor.init):
 *   He normal       N(0, 2/fan_in), for layers feeding ReLU-like units
 *                   (He et al. 2015);
 *   Glorot uniform  U(−a, a) with a = sqrt(6/(fan_in + fan_out)) (Glorot
 *                   and Bengio 2010), for every other weight;
 *   zero            biases and the learned log σ of a Gaussian likelihood.
 * The tensors are visited in order and draw from one generator, so a seed
 * fixes the whole initialisation.
 */
#include <math.h>

#include "bnn.h"

void bnn_params_init(const bnn_model *m, float *params, bnn_rng *rng)
{
	int i;
	long j;

	for (i = 0; i < m->ntensors; i++) {
		const bnn_tensor *t = &m->tensors[i];
		float *p = params + t->offset;
		switch (t->init) {
		case BNN_INIT_HE_NORMAL: {
			float s = (float)sqrt(2.0 / (double)(t->fan_in > 0 ? t->fan_in : 1));
			bnn_rng_normal(rng, p, (size_t)t->size);
			for (j = 0; j < t->size; j++)
				p[j] *= s;
			break;
		}
		case BNN_INIT_GLOROT_UNIFORM: {
			double a = sqrt(6.0 / (double)(t->fan_in + t->fan_out > 0 ?
			                               t->fan_in + t->fan_out : 1));
			for (j = 0; j < t->size; j++)
				p[j] = (float)((2 * bnn_rng_uniform(rng) - 1) * a);
			break;
		}
		default:
			for (j = 0; j < t->size; j++)
				p[j] = 0;
			break;
		}
	}
}
