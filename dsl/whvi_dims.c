/* whvi_dims.c: WHVI's padding and stacking of a non-square weight matrix,
 * and the parameter count that follows from it.
 *
 * WHVI paper, Algorithm 1 (SetupDimensions): D = 2^ceil(log2 Din); the input
 * is padded with D - Din zeros; stack = ceil(Dout / D) square blocks cover the
 * outputs, so the padded output count is D * stack.  (The algorithm's test
 * "next power = 2 Din" for zero padding is read as "next power = Din": a
 * power-of-two input needs no padding, which is what the padding formula
 * gives anyway.)  Each block W_i = S1 H diag(g) H S2 keeps S1 and S2
 * (optimised, D each) and q(g) = N(mu, diag(sigma^2)) (2D): 4D parameters,
 * plus 2D + 1 per planar flow (u, w in R^D and a bias; paper, appendix C).
 */
#include "ops.h"

void whvi_dims(long din, long dout, struct whvi_dims *w)
{
	long d = 1;
	while (d < din)
		d *= 2;
	w->d = d;
	w->padding = d - din;
	w->stack = (dout + d - 1) / d;
	w->dout = d * w->stack;
}

long long whvi_params(long din, long dout, int flows, int bias)
{
	struct whvi_dims w;
	whvi_dims(din, dout, &w);
	return (long long)w.stack * (4LL * w.d + (long long)flows * (2LL * w.d + 1)) +
	       (bias ? 2LL * dout : 0);
}
