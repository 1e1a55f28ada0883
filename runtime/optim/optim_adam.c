/*
 * optim_adam.c: Adam (Kingma and Ba, "Adam: a method for stochastic
 * optimization", ICLR 2015, Algorithm 1, with its bias correction) and
 * AdamW (Loshchilov and Hutter, "Decoupled weight decay regularization",
 * ICLR 2019, Algorithm 2), one fused loop over flat float arrays
 * (bnn_optim.h).  With g the gradient at step t:
 *
 *   Adam:   g ← g + λw   (L2 decay, "coupled")
 *   both:   m ← β1 m + (1 − β1) g;  v ← β2 v + (1 − β2) g²
 *           m̂ = m / (1 − β1^t);  v̂ = v / (1 − β2^t)
 *   Adam:   w ← w − η m̂ / (√v̂ + ε)
 *   AdamW:  w ← w − η m̂ / (√v̂ + ε) − ηλw
 *
 * computed, as PyTorch does, as w ← w(1 − ηλ) − (η / (1 − β1^t)) m /
 * (√v / √(1 − β2^t) + ε), with the bias corrections in double.
 *
 * The loop is vectorised by gcc at -O2: chunks with a constant trip count,
 * restrict-qualified arrays (see optim_sgd.c), and sqrtf(), which becomes
 * one vector instruction because the runtime is compiled with
 * -fno-math-errno (Makefile.am); BNN_SIMD_CLONES (simd_clones.h) adds
 * AVX2 and AVX-512 versions, several times faster than the scalar loop
 * (docs/benchmarks.md, "Measurements behind the optimizers and the
 * trainer").
 */
#include <math.h>

#include "bias_correction.h"
#include "bnn.h"
#include "kernels/simd_clones.h"
#include "flush_tiny.h"

/* Elements per vectorised chunk: 32, two AVX-512 (four AVX2) vectors whose
 * square roots and divisions overlap (with 8, one AVX2-wide vector, the
 * AVX-512 clone ran at about half the speed: docs/benchmarks.md). */
#define OPT_CHUNK 32

bnn_adam_params bnn_adam_defaults(void)
{
	bnn_adam_params p;

	p.beta1 = 0.9f;
	p.beta2 = 0.999f;
	p.eps = 1e-8f;
	p.weight_decay = 0.0f;
	p.decoupled = 0;
	return p;
}

/* The per-step constants of the update. */
struct adam_coef {
	float b1, b2; /* β1, β2 */
	float l2;     /* λ added to g (Adam), else 0 */
	float decay;  /* 1 − ηλ (AdamW), else 1 */
	float step;   /* η / (1 − β1^t) */
	float rbc2;   /* 1 / √(1 − β2^t) */
	float eps;    /* ε */
};

static inline void adam_one(long i, float *restrict w, const float *restrict g, float *restrict m,
                            float *restrict v, const struct adam_coef *c)
{
	float gi = g[i] + c->l2 * w[i];
	float mi = c->b1 * m[i] + (1.0f - c->b1) * gi;
	float vi = c->b2 * v[i] + (1.0f - c->b2) * gi * gi;

	m[i] = bnn_flush_tiny(mi);
	v[i] = bnn_flush_tiny(vi);
	w[i] = bnn_flush_tiny(w[i] * c->decay - c->step * mi / (sqrtf(vi) * c->rbc2 + c->eps));
}

BNN_SIMD_CLONES static void adam_step_kernel(long n, float *restrict w, const float *restrict g,
                                             float *restrict m, float *restrict v, float lr,
                                             long step, const bnn_adam_params *p)
{
	struct adam_coef c;
	double t = step < 1 ? 1.0 : (double)step;
	long i;
	int k;

	c.b1 = p->beta1;
	c.b2 = p->beta2;
	c.l2 = p->decoupled ? 0.0f : p->weight_decay;
	c.decay = p->decoupled ? (float)(1.0 - (double)lr * p->weight_decay) : 1.0f;
	c.step = (float)(lr / bnn_bias_correction(p->beta1, t));
	c.rbc2 = (float)(1.0 / sqrt(bnn_bias_correction(p->beta2, t)));
	c.eps = p->eps;
	for (i = 0; i + OPT_CHUNK <= n; i += OPT_CHUNK)
		for (k = 0; k < OPT_CHUNK; k++)
			adam_one(i + k, w, g, m, v, &c);
	for (; i < n; i++)
		adam_one(i, w, g, m, v, &c);
}

/* The public entry: unpacks the arrays for the kernel above, which keeps
 * scalar, restrict-qualified arguments so that its loop vectorises. */
void bnn_adam_step(const bnn_adam_arrays *a, float lr, long step, const bnn_adam_params *p)
{
	adam_step_kernel(a->n, a->w, a->g, a->m, a->v, lr, step, p);
}
