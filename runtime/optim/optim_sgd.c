/*
 * optim_sgd.c: stochastic gradient descent with optional momentum,
 * Nesterov momentum and L2 weight decay (bnn_optim.h), following the
 * conventions of PyTorch's torch.optim.SGD with dampening 0:
 *
 *   d = g + λw;  b = d at the first step, else b = μb + d;
 *   w ← w − η(d + μb) with Nesterov, else w ← w − ηb.
 *
 * With μ = 0 there is no buffer: w ← w − ηd.  The loops run over chunks
 * of OPT_CHUNK elements with a constant inner trip count, and the arrays
 * are restrict-qualified, which is what gcc needs to vectorise at -O2
 * (its cheap cost model at -O2 adds neither alias checks nor scalar
 * epilogues); a scalar loop finishes the last n % OPT_CHUNK elements.
 */
#include "bnn.h"
#include "kernels/simd_clones.h"
#include "flush_tiny.h"

/* Elements per vectorised chunk: 32, two AVX-512 (four AVX2) vectors,
 * as optim_adam.c's. */
#define OPT_CHUNK 32

bnn_sgd_params bnn_sgd_defaults(void)
{
	bnn_sgd_params p;

	p.momentum = 0.9f;
	p.weight_decay = 0.0f;
	p.nesterov = 0;
	return p;
}

/* Plain SGD, μ = 0: w ← w − η(g + λw). */
static void sgd_plain(long n, float *restrict w, const float *restrict g, float lr, float wd)
{
	long i;
	int k;

	for (i = 0; i + OPT_CHUNK <= n; i += OPT_CHUNK)
		for (k = 0; k < OPT_CHUNK; k++)
			w[i + k] = bnn_flush_tiny(w[i + k] - lr * (g[i + k] + wd * w[i + k]));
	for (; i < n; i++)
		w[i] = bnn_flush_tiny(w[i] - lr * (g[i] + wd * w[i]));
}

/* One element of momentum SGD.  first and nesterov are constants at each
 * call of sgd_loop(), so each of the four loops is specialised. */
static inline void sgd_one(long i, float *restrict w, const float *restrict g, float *restrict buf,
                           float lr, float mu, float wd, int first, int nesterov)
{
	float d = g[i] + wd * w[i];
	float b = first ? d : mu * buf[i] + d;

	buf[i] = bnn_flush_tiny(b);
	w[i] = bnn_flush_tiny(w[i] - lr * (nesterov ? d + mu * b : b));
}

static inline void sgd_loop(long n, float *restrict w, const float *restrict g, float *restrict buf,
                            float lr, float mu, float wd, int first, int nesterov)
{
	long i;
	int k;

	for (i = 0; i + OPT_CHUNK <= n; i += OPT_CHUNK)
		for (k = 0; k < OPT_CHUNK; k++)
			sgd_one(i + k, w, g, buf, lr, mu, wd, first, nesterov);
	for (; i < n; i++)
		sgd_one(i, w, g, buf, lr, mu, wd, first, nesterov);
}

BNN_SIMD_CLONES void bnn_sgd_step(long n, float *restrict w, const float *restrict g,
                                  float *restrict buf, float lr, long step, const bnn_sgd_params *p)
{
	float mu = p->momentum, wd = p->weight_decay;

	if (mu == 0.0f)
		sgd_plain(n, w, g, lr, wd);
	else if (step <= 1 && p->nesterov)
		sgd_loop(n, w, g, buf, lr, mu, wd, 1, 1);
	else if (step <= 1)
		sgd_loop(n, w, g, buf, lr, mu, wd, 1, 0);
	else if (p->nesterov)
		sgd_loop(n, w, g, buf, lr, mu, wd, 0, 1);
	else
		sgd_loop(n, w, g, buf, lr, mu, wd, 0, 0);
}
