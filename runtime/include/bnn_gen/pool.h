/*
 * bnn_gen/pool.h: the kernels of pooling layers (gen/layer_pool.c):
 * maxpool, avgpool and globalavgpool.
 *
 * Each kernel's planes (or output rows) are shared among the calling
 * thread's OpenMP team (BNN_GEN_PARALLEL_FOR): a plane's outputs, and its
 * input gradient, are one thread's, computed as on one thread.
 */
#ifndef BNN_GEN_POOL_H
#define BNN_GEN_POOL_H

#include "loop.h"
#include "real.h"

/* ---- pooling ---------------------------------------------------------------
 * maxpool and avgpool slide a kh × kw window with strides (sh, sw) over
 * each channel of each example, with no padding (the window always fits:
 * OH = ⌊(H − kh)/sh⌋ + 1); globalavgpool averages each channel.  The 2-D
 * pools of the language have kh = kw = size and sh = sw = stride; the 1-D
 * pools of a [C, L] signal are those of a [C, 1, L] map, with kh = sh = 1
 * (gen/layer_pool.c).  Windows may overlap (stride < size): backward then
 * adds up. */

/* The largest value of a kh × kw window and the offset of its first
 * occurrence (row-major order), from a channel plane of width w. */
static inline bnn_real bnn_gen_window_max(const bnn_real *restrict x, long w, long kh, long kw,
                                          long *at)
{
	bnn_real m = x[0];
	long u, v;

	*at = 0;
	for (u = 0; u < kh; u++)
		for (v = 0; v < kw; v++)
			if (x[u * w + v] > m) {
				m = x[u * w + v];
				*at = u * w + v;
			}
	return m;
}

/* y = the maximum of each window; x is (B·C) planes of H × W, y of
 * OH × OW. */
static inline void bnn_gen_maxpool_forward(long planes, long h, long w, long kh, long kw, long sh,
                                           long sw, long oh, long ow, const bnn_real *restrict x,
                                           bnn_real *restrict y)
{
	long c;

	BNN_GEN_PARALLEL_FOR(planes * h * w)
	for (c = 0; c < planes; c++) {
		const bnn_real *xc = x + c * h * w;
		bnn_real *yc = y + c * oh * ow;
		long oy, ox, at;

		for (oy = 0; oy < oh; oy++)
			for (ox = 0; ox < ow; ox++)
				yc[oy * ow + ox] = bnn_gen_window_max(xc + oy * sh * w + ox * sw, w,
				                                      kh, kw, &at);
	}
}

/* dx (+)= each window's dy routed to its maximum (the first one, as
 * forward found it); dx is zeroed first unless accumulate. */
static inline void bnn_gen_maxpool_backward(long planes, long h, long w, long kh, long kw, long sh,
                                            long sw, long oh, long ow, const bnn_real *restrict x,
                                            const bnn_real *restrict dy, bnn_real *restrict dx,
                                            int accumulate)
{
	long c;

	BNN_GEN_PARALLEL_FOR(planes * h * w)
	for (c = 0; c < planes; c++) {
		const bnn_real *xc = x + c * h * w, *dyc = dy + c * oh * ow;
		bnn_real *dxc = dx + c * h * w;
		long oy, ox, at;

		if (!accumulate)
			memset(dxc, 0, (size_t)(h * w) * sizeof *dxc);

		for (oy = 0; oy < oh; oy++)
			for (ox = 0; ox < ow; ox++) {
				long base = oy * sh * w + ox * sw;

				(void)bnn_gen_window_max(xc + base, w, kh, kw, &at);
				dxc[base + at] += dyc[oy * ow + ox];
			}
	}
}

/* y = the mean of each window (kh·kw values, none of them padding). */
static inline void bnn_gen_avgpool_forward(long planes, long h, long w, long kh, long kw, long sh,
                                           long sw, long oh, long ow, const bnn_real *restrict x,
                                           bnn_real *restrict y)
{
	const bnn_real scale = (bnn_real)(1.0 / (double)(kh * kw));
	long c;

	if (kh == 2 && kw == 2 && sh == 2 && sw == 2) {
		/* 2x2 windows (LeNet's): one output row from two input rows */
		BNN_GEN_PARALLEL_FOR(planes * h * w)
		for (c = 0; c < planes; c++) {
			long oy, ox;

			for (oy = 0; oy < oh; oy++) {
				const bnn_real *restrict r0 = x + c * h * w + 2 * oy * w,
				                         *restrict r1 = r0 + w;
				bnn_real *restrict yr = y + (c * oh + oy) * ow;

				for (ox = 0; ox < ow; ox++)
					yr[ox] = (r0[2 * ox] + r0[2 * ox + 1] + r1[2 * ox] +
					          r1[2 * ox + 1]) *
					         scale; /* the general loop's order */
			}
		}
		return;
	}
	BNN_GEN_PARALLEL_FOR(planes * h * w)
	for (c = 0; c < planes; c++) {
		const bnn_real *xc = x + c * h * w;
		bnn_real *yc = y + c * oh * ow;
		long oy, ox, u, v;

		for (oy = 0; oy < oh; oy++)
			for (ox = 0; ox < ow; ox++) {
				const bnn_real *xw = xc + oy * sh * w + ox * sw;
				bnn_real sum = 0;

				for (u = 0; u < kh; u++)
					for (v = 0; v < kw; v++)
						sum += xw[u * w + v];
				yc[oy * ow + ox] = sum * scale;
			}
	}
}

/* dx (+)= dy/(kh·kw) spread over each window; dx is zeroed first unless
 * accumulate. */
static inline void bnn_gen_avgpool_backward(long planes, long h, long w, long kh, long kw, long sh,
                                            long sw, long oh, long ow, const bnn_real *restrict dy,
                                            bnn_real *restrict dx, int accumulate)
{
	const bnn_real scale = (bnn_real)(1.0 / (double)(kh * kw));
	long c;

	if (kh == 2 && kw == 2 && sh == 2 && sw == 2 && h == 2 * oh && w == 2 * ow && !accumulate) {
		/* 2x2 windows that tile the plane (LeNet's): each element of dx
		 * is written once, without zeroing dx first */
		BNN_GEN_PARALLEL_FOR(planes * h * w)
		for (c = 0; c < planes * oh; c++) {
			const bnn_real *restrict dyr = dy + c * ow;
			bnn_real *restrict r0 = dx + 2 * c * w, *restrict r1 = r0 + w;
			long ox;

			for (ox = 0; ox < ow; ox++) {
				const bnn_real d = dyr[ox] * scale;

				r0[2 * ox] = d;
				r0[2 * ox + 1] = d;
				r1[2 * ox] = d;
				r1[2 * ox + 1] = d;
			}
		}
		return;
	}
	BNN_GEN_PARALLEL_FOR(planes * h * w)
	for (c = 0; c < planes; c++) {
		const bnn_real *dyc = dy + c * oh * ow;
		bnn_real *dxc = dx + c * h * w;
		long oy, ox, u, v;

		if (!accumulate)
			memset(dxc, 0, (size_t)(h * w) * sizeof *dxc);

		for (oy = 0; oy < oh; oy++)
			for (ox = 0; ox < ow; ox++) {
				bnn_real *dw = dxc + oy * sh * w + ox * sw;
				const bnn_real d = dyc[oy * ow + ox] * scale;

				for (u = 0; u < kh; u++)
					for (v = 0; v < kw; v++)
						dw[u * w + v] += d;
			}
	}
}

/* globalavgpool: y[c] = the mean of plane c's hw values, over (B·C)
 * planes. */
static inline void bnn_gen_globalavgpool_forward(long planes, long hw, const bnn_real *restrict x,
                                                 bnn_real *restrict y)
{
	const bnn_real scale = (bnn_real)(1.0 / (double)hw);
	long c;

	BNN_GEN_PARALLEL_FOR(planes * hw)
	for (c = 0; c < planes; c++)
		y[c] = bnn_gen_sum(hw, x + c * hw) * scale;
}

/* dx (+)= dy[c]/hw over plane c. */
static inline void bnn_gen_globalavgpool_backward(long planes, long hw, const bnn_real *restrict dy,
                                                  bnn_real *restrict dx, int accumulate)
{
	const bnn_real scale = (bnn_real)(1.0 / (double)hw);
	long c;

	BNN_GEN_PARALLEL_FOR(planes * hw)
	for (c = 0; c < planes; c++) {
		const bnn_real d = dy[c] * scale;
		bnn_real *dxc = dx + c * hw;

		BNN_GEN_EACH(hw, accumulate, dxc, d);
	}
}

#endif /* BNN_GEN_POOL_H */
