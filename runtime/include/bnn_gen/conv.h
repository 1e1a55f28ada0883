/*
 * bnn_gen/conv.h: the kernels of conv2d layers (gen/layer_conv.c).
 *
 * The layer's shape (bnn_gen_conv), the floats of scratch it needs
 * (bnn_gen_conv_col_floats, which the compiler reserves too), im2col,
 * im2row and col2im, and the forward and backward passes by GEMM.  A
 * dropout(p) conv2d layer's masks are bnn_gen/noise.h's.
 *
 * Threads (the calling thread's OpenMP team, bnn_gen/loop.h): the large
 * products (a group's forward GEMM, dX's Wᵀ·G_grp) are bnn_sgemm's, which
 * threads them itself; around them im2col is shared by row, col2im by
 * example and channel, the scatter and gather by output channel.  The
 * per-example products (dW, a pointwise layer's passes, stride-1 dX) run
 * BNN_GEN_CONV_LANES examples at a time, one example a thread, each in a
 * lane of scratch of its own; the lanes' dW are then added into dW in
 * example order, each element by one thread, so dW is the same sum, in
 * the same order, as on one thread.
 */
#ifndef BNN_GEN_CONV_H
#define BNN_GEN_CONV_H

#include <string.h>

#include "gemm.h"
#include "loop.h"
#include "real.h"

/* ---- conv2d ----------------------------------------------------------------
 * Feature maps are NCHW: example i's [C, H, W] map is row i of a
 * batch × (C·H·W) block, channel-major.  A conv2d layer's weight is
 * [F][C][KH][KW] (PyTorch's layout), so it is also the F × K matrix, with
 * K = C·KH·KW, that multiplies the columns of im2col; its bias has F
 * entries.
 *
 * Forward takes the batch in groups of s->g examples (the generator picks
 * g, a constant, so that a group's columns are wide enough for the GEMM
 * to run near its best; the last group may be smaller).  A group of n
 * examples is one K × (n·P) matrix of columns (P = OH·OW; example j's
 * windows are its columns j·P .. j·P + P − 1), zero where a window lies in
 * the padding, in a scratch block of K·g·P floats (and, for a stride-1
 * layer with padding, the group's padded input: bnn_gen_conv_col_floats),
 * so that Y_grp = W·col_grp (F × n·P, one GEMM), scattered back into the
 * batch's [e][F][P] layout with the bias added on the way.
 *
 * Backward goes example by example, with operands that the GEMM reads in
 * place rather than copies into its own panels:
 *     dW   example i's windows as the rows of a P × K matrix (im2row, from
 *          its image in HWC order), G_i·rows_i (F × K, one GEMM);
 *     dX   for a stride-1 layer, one GEMM per kernel offset between the
 *          deltas and a shifted view of the padded input gradient
 *          (bnn_gen_conv_backward_input_s1); otherwise, per group,
 *          dcol_grp = Wᵀ·G_grp (G_grp the group's deltas gathered into
 *          F × n·P) and col2im.
 * The group's outputs or gathered deltas live in a second scratch block
 * of F·g·P floats (also used as the F·K block of one example's weight
 * gradient, or the reordered weights).  Memory holds one group's columns
 * or one example's rows at a time, never B of them: it does not grow with
 * the batch.  A pointwise layer (1x1 kernel, stride 1, no padding) needs
 * no columns: its input is already the K × P matrix of each example, and
 * it runs one GEMM per example straight from x (g is 1 for it). */

/* The shape of a conv2d layer; generated code declares one as a static
 * const, so every field is a constant where the kernels are inlined. */
typedef struct bnn_gen_conv {
	long c, h, w; /* input channels, height, width */
	long f;       /* output channels */
	long kh, kw;  /* kernel height and width */
	long sh, sw;  /* stride */
	long ph, pw;  /* zero padding on each side */
	long oh, ow;  /* output height and width */
	long g;       /* examples per im2col group, >= 1 (1: pointwise) */
} bnn_gen_conv;

/* The conv2d kernels are always inlined (GCC and Clang): the generated
 * code's shape (a static const) is then a constant in them, so a row of a
 * few floats in im2col is a few moves rather than a call of memcpy
 * (those calls had cost more than the GEMM of LeNet's second
 * convolution: docs/benchmarks.md). */
#if defined(__GNUC__)
#define BNN_GEN_CONV_INLINE static inline __attribute__((always_inline))
#else
#define BNN_GEN_CONV_INLINE static inline
#endif

/* Whether the layer's columns are its input itself (a 1x1 kernel, stride 1,
 * no padding): then no im2col is needed. */
BNN_GEN_CONV_INLINE int bnn_gen_conv_is_pointwise(const bnn_gen_conv *s)
{
	return s->kh == 1 && s->kw == 1 && s->sh == 1 && s->sw == 1 && s->ph == 0 && s->pw == 0;
}

/* The range [*lo, *hi) of output columns ox whose input column
 * ox·sw − pw + kj lies inside [0, w). */
BNN_GEN_CONV_INLINE void bnn_gen_conv_span(const bnn_gen_conv *s, long kj, long *lo, long *hi)
{
	long a = s->pw - kj, b;

	*lo = a > 0 ? (a + s->sw - 1) / s->sw : 0;
	b = s->w - 1 + s->pw - kj; /* ox·sw <= b */
	*hi = b < 0 ? 0 : b / s->sw + 1;
	if (*hi > s->ow)
		*hi = s->ow;
	if (*lo > *hi)
		*lo = *hi;
}

/* Examples whose per-example products run at once, one a thread, each
 * with its own lane of scratch (BNN_GEN_CONV_LANES copies of one
 * example's rows or padded deltas in the im2col block, of its F·K product
 * in the second block): a constant, so that the blocks' size does not
 * depend on the thread count, and the most threads these products use. */
#define BNN_GEN_CONV_LANES 8

/* dW's two ways and dX's shifted views: see bnn_gen_conv_backward_params
 * and bnn_gen_conv_backward_input. */
#define BNN_GEN_CONV_ROWS_MIN 24
#define BNN_GEN_CONV_SHIFT_CF 32
#define BNN_GEN_CONV_SHIFT_P  256
BNN_GEN_CONV_INLINE int bnn_gen_conv_rows_way(const bnn_gen_conv *s)
{
	return s->kw * s->c >= BNN_GEN_CONV_ROWS_MIN;
}
BNN_GEN_CONV_INLINE int bnn_gen_conv_shift_way(const bnn_gen_conv *s)
{
	return !bnn_gen_conv_is_pointwise(s) && s->sh == 1 && s->sw == 1 &&
	       s->c * s->f >= BNN_GEN_CONV_SHIFT_CF &&
	       s->oh * (s->w + 2 * s->pw) >= BNN_GEN_CONV_SHIFT_P;
}

/* The floats of the im2col scratch a layer needs, the most of: a group's
 * columns, K·g·P, and for a stride-1 layer with padding, after them, the
 * group's input maps with their padding, g·C·(H + 2·ph)·(W + 2·pw) (see
 * bnn_gen_im2col); one example's padded HWC image and its P × K rows
 * (bnn_gen_conv_backward_params), BNN_GEN_CONV_LANES times when dW goes
 * the rows way; for a stride-1 layer, one example's padded deltas and
 * input gradient (bnn_gen_conv_backward_input_s1), BNN_GEN_CONV_LANES
 * times when dX goes by shifted views.
 * The one definition of this size: the compiler reserves what this
 * function says (gen/layer_conv.c calls it), t/gen_conv_scratch.c checks
 * the figure emitted into generated code against it. */
static inline long bnn_gen_conv_col_floats(const bnn_gen_conv *s)
{
	const long hp = s->h + 2 * s->ph, wp = s->w + 2 * s->pw;
	long floats = s->c * s->kh * s->kw * s->g * s->oh * s->ow, need;

	if (s->sh == 1 && s->sw == 1 && (s->ph || s->pw))
		floats += s->g * s->c * hp * wp;
	/* dW: one example's padded HWC image and its P × K rows */
	need = s->c * hp * wp + s->oh * s->ow * s->c * s->kh * s->kw;
	if (bnn_gen_conv_rows_way(s))
		need *= BNN_GEN_CONV_LANES;
	if (need > floats)
		floats = need;
	/* stride-1 dX: the padded deltas and input gradient */
	need = s->f * s->oh * wp + s->c * (hp + 1) * wp;
	if (bnn_gen_conv_shift_way(s))
		need *= BNN_GEN_CONV_LANES;
	if (s->sh == 1 && s->sw == 1 && need > floats)
		floats = need;
	return floats;
}

/* The floats of the second scratch block: a group's outputs or gathered
 * deltas, F·g·P, and BNN_GEN_CONV_LANES examples' F·K weight gradients
 * (which also hold the F·K weights reordered).  The one definition, as
 * bnn_gen_conv_col_floats's. */
static inline long bnn_gen_conv_tmp_floats(const bnn_gen_conv *s)
{
	const long grp = s->f * s->g * s->oh * s->ow;
	const long lanes = BNN_GEN_CONV_LANES * s->f * s->c * s->kh * s->kw;

	return grp > lanes ? grp : lanes;
}

/* How many lanes a kernel may use: BNN_GEN_CONV_LANES when the layer's
 * scratch was sized for them (way: the layer goes the kernel's way),
 * else 1. */
BNN_GEN_CONV_INLINE long bnn_gen_conv_lanes(int way)
{
	return way ? BNN_GEN_CONV_LANES : 1;
}

/*
 * im2col of n consecutive examples x (each C·H·W floats) into the
 * K × (n·P) matrix col with rows ld = n·P apart:
 * col[(ci·KH + ki)·KW + kj][j·P + oy·OW + ox] =
 * x_j[ci][oy·sh − ph + ki][ox·sw − pw + kj], or 0 in the padding.
 * With stride 1, every row of a window is then a copy of OW floats, a
 * constant where the kernel is inlined (a few vector moves, not a call of
 * memcpy): from x itself without padding, else from a copy of the group's
 * maps with their zero padding, written after the columns in col (see
 * bnn_gen_conv_col_floats).
 */
/*
 * BNN_GEN_CONV_COPY_MIN: the size of col (elements) from which im2col and
 * col2im run on the team.  Their team versions lose the layer's shape as
 * compile-time constants (OpenMP outlines the loop), and measured slower
 * than the inlined one-thread copies on every network tried, with the
 * rest of the step on two threads (Fashion-MNIST, batch 128, trainer's
 * examples/s on two threads): the LeNet 14,000 with them against 18,700
 * without, the ResNet 2,460-3,090 against 3,000.  So they run only on
 * layers far larger than those; t/gen_threads compiles with this set to
 * BNN_GEN_PAR_MIN so that they stay tested.
 */
#ifndef BNN_GEN_CONV_COPY_MIN
#define BNN_GEN_CONV_COPY_MIN (1L << 26)
#endif
static inline void bnn_gen_im2col_team(const bnn_gen_conv *s, long n, const bnn_real *restrict x,
                                       bnn_real *restrict col);
BNN_GEN_CONV_INLINE void bnn_gen_im2col(const bnn_gen_conv *s, long n, const bnn_real *restrict x,
                                        bnn_real *restrict col)
{
	const long p = s->oh * s->ow, in = s->c * s->h * s->w, ld = n * p;
	long ci, ki, kj, oy, ox, lo, hi, j;

	if (BNN_GEN_TEAM() && s->c * s->kh * s->kw * ld > BNN_GEN_CONV_COPY_MIN) {
		bnn_gen_im2col_team(s, n, x, col);
		return;
	}
	if (s->sh == 1 && s->sw == 1) {
		const long hp = s->h + 2 * s->ph, wp = s->w + 2 * s->pw, plane = hp * wp;
		const bnn_real *src = x;

		if (s->ph || s->pw) {
			bnn_real *restrict pad = col + s->c * s->kh * s->kw * s->g * p;

			memset(pad, 0, (size_t)(n * s->c * plane) * sizeof *pad);
			for (j = 0; j < n * s->c; j++)
				for (oy = 0; oy < s->h; oy++)
					memcpy(pad + j * plane + (oy + s->ph) * wp + s->pw,
					       x + (j * s->h + oy) * s->w,
					       (size_t)s->w * sizeof *pad);
			src = pad;
		}
		for (ci = 0; ci < s->c; ci++)
			for (ki = 0; ki < s->kh; ki++)
				for (kj = 0; kj < s->kw; kj++) {
					bnn_real *row = col + ((ci * s->kh + ki) * s->kw + kj) * ld;

					for (j = 0; j < n; j++)
						for (oy = 0; oy < s->oh; oy++)
							memcpy(row + j * p + oy * s->ow,
							       src + (j * s->c + ci) * plane +
							               (oy + ki) * wp + kj,
							       (size_t)s->ow * sizeof *row);
				}
		return;
	}
	for (ci = 0; ci < s->c; ci++)
		for (ki = 0; ki < s->kh; ki++)
			for (kj = 0; kj < s->kw; kj++) {
				bnn_real *row = col + ((ci * s->kh + ki) * s->kw + kj) * ld;

				bnn_gen_conv_span(s, kj, &lo, &hi);
				for (j = 0; j < n; j++)
					for (oy = 0; oy < s->oh; oy++) {
						long iy = oy * s->sh - s->ph + ki;
						bnn_real *r = row + j * p + oy * s->ow;
						const bnn_real *xr;

						if (iy < 0 || iy >= s->h) {
							memset(r, 0, (size_t)s->ow * sizeof *r);
							continue;
						}
						xr = x + j * in + (ci * s->h + iy) * s->w;
						for (ox = 0; ox < lo; ox++)
							r[ox] = 0;
						if (s->sw == 1)
							memcpy(r + lo, xr + (lo - s->pw + kj),
							       (size_t)(hi - lo) * sizeof *r);
						else
							for (ox = lo; ox < hi; ox++)
								r[ox] = xr[ox * s->sw - s->pw + kj];
						for (ox = hi; ox < s->ow; ox++)
							r[ox] = 0;
					}
			}
}

/* bnn_gen_im2col on the calling thread's team: the padded maps shared by
 * plane, then the K rows of col by row (each row one thread's copies). */
static inline void bnn_gen_im2col_team(const bnn_gen_conv *s, long n, const bnn_real *restrict x,
                                       bnn_real *restrict col)
{
	const long p = s->oh * s->ow, in = s->c * s->h * s->w, ld = n * p;
	const long kk = s->kh * s->kw, k = s->c * kk;
	const long hp = s->h + 2 * s->ph, wp = s->w + 2 * s->pw, plane = hp * wp;
	const int s1 = s->sh == 1 && s->sw == 1;
	const bnn_real *src = x;
	long q, r;

	if (s1 && (s->ph || s->pw)) {
		bnn_real *restrict pad = col + k * s->g * p;

		BNN_GEN_PARALLEL_FOR(n * s->c * plane)
		for (q = 0; q < n * s->c; q++) {
			long oy;

			memset(pad + q * plane, 0, (size_t)plane * sizeof *pad);
			for (oy = 0; oy < s->h; oy++)
				bnn_gen_copy(s->w, pad + q * plane + (oy + s->ph) * wp + s->pw,
				             x + (q * s->h + oy) * s->w);
		}
		src = pad;
	}
	BNN_GEN_PARALLEL_FOR(k * ld)
	for (r = 0; r < k; r++) {
		const long ci = r / kk, ki = (r / s->kw) % s->kh, kj = r % s->kw;
		bnn_real *row = col + r * ld;
		long oy, ox, lo, hi, j;

		if (s1) {
			for (j = 0; j < n; j++)
				for (oy = 0; oy < s->oh; oy++)
					bnn_gen_copy(s->ow, row + j * p + oy * s->ow,
					             src + (j * s->c + ci) * plane +
					                     (oy + ki) * wp + kj);
			continue;
		}
		bnn_gen_conv_span(s, kj, &lo, &hi);
		for (j = 0; j < n; j++)
			for (oy = 0; oy < s->oh; oy++) {
				long iy = oy * s->sh - s->ph + ki;
				bnn_real *r0 = row + j * p + oy * s->ow;
				const bnn_real *xr;

				if (iy < 0 || iy >= s->h) {
					memset(r0, 0, (size_t)s->ow * sizeof *r0);
					continue;
				}
				xr = x + j * in + (ci * s->h + iy) * s->w;
				for (ox = 0; ox < lo; ox++)
					r0[ox] = 0;
				if (s->sw == 1)
					bnn_gen_copy(hi - lo, r0 + lo, xr + (lo - s->pw + kj));
				else
					for (ox = lo; ox < hi; ox++)
						r0[ox] = xr[ox * s->sw - s->pw + kj];
				for (ox = hi; ox < s->ow; ox++)
					r0[ox] = 0;
			}
	}
}

/* col2im of n examples, the adjoint of bnn_gen_im2col: dx_j (+)= the sum,
 * over the windows, of the entries of dcol (K × n·P) that im2col took from
 * each element (padding entries are dropped).  The n maps are zeroed first
 * unless accumulate. */
BNN_GEN_CONV_INLINE void bnn_gen_col2im(const bnn_gen_conv *s, long n,
                                        const bnn_real *restrict dcol, bnn_real *restrict dx,
                                        int accumulate)
{
	const long p = s->oh * s->ow, in = s->c * s->h * s->w, ld = n * p;
	long ci, ki, kj, oy, ox, lo, hi, j, q;

	if (BNN_GEN_TEAM() && s->c * s->kh * s->kw * ld > BNN_GEN_CONV_COPY_MIN) {
		/* on the team, by example and channel: the same additions into
		 * each element, in the same order (kernel offset, then row) */
		BNN_GEN_PARALLEL_FOR(s->c * s->kh * s->kw * ld)
		for (q = 0; q < n * s->c; q++) {
			const long jq = q / s->c, cq = q % s->c;
			bnn_real *dxq = dx + jq * in + cq * s->h * s->w;
			long kq;

			if (!accumulate)
				memset(dxq, 0, (size_t)(s->h * s->w) * sizeof *dxq);
			for (kq = 0; kq < s->kh * s->kw; kq++) {
				const long kiq = kq / s->kw, kjq = kq % s->kw;
				const bnn_real *row =
				        dcol + (cq * s->kh * s->kw + kq) * ld + jq * p;
				long y, u, a, b;

				bnn_gen_conv_span(s, kjq, &a, &b);
				for (y = 0; y < s->oh; y++) {
					long iy = y * s->sh - s->ph + kiq;
					const bnn_real *r = row + y * s->ow;
					bnn_real *xr;

					if (iy < 0 || iy >= s->h)
						continue;
					xr = dxq + iy * s->w;
					if (s->sw == 1) {
						bnn_real *restrict xo = xr + (a - s->pw + kjq);
						const bnn_real *restrict ro = r + a;
						BNN_GEN_EACH(b - a, 1, xo, ro[i]);
					} else {
						for (u = a; u < b; u++)
							xr[u * s->sw - s->pw + kjq] += r[u];
					}
				}
			}
		}
		return;
	}
	if (!accumulate)
		memset(dx, 0, (size_t)(n * in) * sizeof *dx);
	for (ci = 0; ci < s->c; ci++)
		for (ki = 0; ki < s->kh; ki++)
			for (kj = 0; kj < s->kw; kj++) {
				const bnn_real *row = dcol + ((ci * s->kh + ki) * s->kw + kj) * ld;

				bnn_gen_conv_span(s, kj, &lo, &hi);
				for (j = 0; j < n; j++)
					for (oy = 0; oy < s->oh; oy++) {
						long iy = oy * s->sh - s->ph + ki;
						const bnn_real *r = row + j * p + oy * s->ow;
						bnn_real *xr;

						if (iy < 0 || iy >= s->h)
							continue;
						xr = dx + j * in + (ci * s->h + iy) * s->w;
						if (s->sw == 1) {
							bnn_real *restrict xo =
							        xr + (lo - s->pw + kj);
							const bnn_real *restrict ro = r + lo;
							BNN_GEN_EACH(hi - lo, 1, xo, ro[i]);
						} else {
							for (ox = lo; ox < hi; ox++)
								xr[ox * s->sw - s->pw + kj] +=
								        r[ox];
						}
					}
			}
}

/* Gather the deltas of n examples, g (n × F·P, [e][F][P]), into the
 * F × (n·P) matrix t ([F][e][P]) that the group's GEMMs take. */
BNN_GEN_CONV_INLINE void bnn_gen_conv_gather(const bnn_gen_conv *s, long n,
                                             const bnn_real *restrict g, bnn_real *restrict t)
{
	const long p = s->oh * s->ow;
	long j, f;

	if (BNN_GEN_TEAM() && s->f * n * p > BNN_GEN_PAR_MIN) {
		BNN_GEN_PARALLEL_FOR(s->f * n * p)
		for (f = 0; f < s->f; f++) {
			long jf;

			for (jf = 0; jf < n; jf++)
				bnn_gen_copy(p, t + (f * n + jf) * p, g + (jf * s->f + f) * p);
		}
		return;
	}
	for (f = 0; f < s->f; f++)
		for (j = 0; j < n; j++)
			memcpy(t + (f * n + j) * p, g + (j * s->f + f) * p, (size_t)p * sizeof *t);
}

/* Y_grp = W·col_grp + b for every group of examples: x is B × (C·H·W),
 * y B × (F·P), b NULL for no bias; col is K·g·P scratch and t F·g·P
 * (the group's product before it is scattered into y, with the bias). */
BNN_GEN_CONV_INLINE void bnn_gen_conv_forward(const bnn_gen_conv *s, long batch,
                                              const bnn_real *restrict x,
                                              const bnn_real *restrict w,
                                              const bnn_real *restrict b, bnn_real *restrict col,
                                              bnn_real *restrict t, bnn_real *restrict y)
{
	const long k = s->c * s->kh * s->kw, p = s->oh * s->ow;
	const long in = s->c * s->h * s->w, out = s->f * p;
	long e, f, j, n;

	if (bnn_gen_conv_is_pointwise(s)) {
		/* one GEMM an example, the examples shared by the team */
		BNN_GEN_PARALLEL_FOR(batch > 1 ? batch * s->f * k * p : 0)
		for (e = 0; e < batch; e++) {
			bnn_real *yi = y + e * out;
			long fo;

			if (b)
				for (fo = 0; fo < s->f; fo++) {
					const bnn_real bf = b[fo];
					bnn_real *yf = yi + fo * p;
					BNN_GEN_EACH(p, 0, yf, bf);
				}
			bnn_gen_gemm(0, 0, s->f, p, k, 1.0, w, k, x + e * in, p, b ? 1.0 : 0.0, yi,
			             p);
		}
		return;
	}
	for (e = 0; e < batch; e += n) {
		n = batch - e < s->g ? batch - e : s->g;
		bnn_gen_im2col(s, n, x + e * in, col);
		bnn_gen_gemm(0, 0, s->f, n * p, k, 1.0, w, k, col, n * p, 0.0, t, n * p);
		if (BNN_GEN_TEAM() && s->f * n * p > BNN_GEN_PAR_MIN) {
			/* the scatter on the team, by output channel */
			BNN_GEN_PARALLEL_FOR(s->f * n * p)
			for (f = 0; f < s->f; f++) {
				const bnn_real bf = b ? b[f] : 0;
				long jf;

				for (jf = 0; jf < n; jf++) {
					const bnn_real *restrict tf = t + (f * n + jf) * p;
					bnn_real *restrict yf = y + (e + jf) * out + f * p;
					BNN_GEN_EACH(p, 0, yf, tf[i] + bf);
				}
			}
			continue;
		}
		for (f = 0; f < s->f; f++) {
			const bnn_real bf = b ? b[f] : 0;

			for (j = 0; j < n; j++) {
				const bnn_real *restrict tf = t + (f * n + j) * p;
				bnn_real *restrict yf = y + (e + j) * out + f * p;
				BNN_GEN_EACH(p, 0, yf, tf[i] + bf);
			}
		}
	}
}

/*
 * Example j's input as the rows of an HWC image with its zero padding:
 * xh[(y·WP + x)·C + c] = x[c][y − ph][x − pw] (0 outside), y < H + 2·ph,
 * x < WP = W + 2·pw.  A window's values for one kernel row are then
 * KW·C consecutive floats.
 */
BNN_GEN_CONV_INLINE void bnn_gen_conv_pad_hwc(const bnn_gen_conv *s, const bnn_real *restrict x,
                                              bnn_real *restrict xh)
{
	const long wp = s->w + 2 * s->pw, hp = s->h + 2 * s->ph;
	long c, y, q;

	if (s->ph || s->pw)
		memset(xh, 0, (size_t)(hp * wp * s->c) * sizeof *xh);
	for (y = 0; y < s->h; y++)
		for (q = 0; q < s->w; q++) {
			bnn_real *restrict d = xh + ((y + s->ph) * wp + q + s->pw) * s->c;

			for (c = 0; c < s->c; c++)
				d[c] = x[(c * s->h + y) * s->w + q];
		}
}

/*
 * im2row of one example from its padded HWC image xh: the P × K matrix
 * rows[p][(ki·KW + kj)·C + c] = xh[((oy·sh + ki)·WP + ox·sw + kj)·C + c],
 * each output position's window as a row, in kernel-offset-major order
 * (the weight's K order is channel-major: bnn_gen_conv_backward_params
 * permutes at the end).  One copy of KW·C floats per position and kernel
 * row.
 */
BNN_GEN_CONV_INLINE void bnn_gen_im2row(const bnn_gen_conv *s, const bnn_real *restrict xh,
                                        bnn_real *restrict rows)
{
	const long wp = s->w + 2 * s->pw, k = s->c * s->kh * s->kw, seg = s->kw * s->c;
	long oy, ox, ki;

	for (oy = 0; oy < s->oh; oy++)
		for (ox = 0; ox < s->ow; ox++) {
			bnn_real *restrict r = rows + (oy * s->ow + ox) * k;

			for (ki = 0; ki < s->kh; ki++)
				bnn_gen_copy(seg, r + ki * seg,
				             xh + ((oy * s->sh + ki) * wp + ox * s->sw) * s->c);
		}
}

/* The K-vectors of the F rows of a in kernel-offset-major order (K index
 * (ki·KW + kj)·C + c) put back in the weight's channel-major order
 * (c·KH·KW + ki·KW + kj), through the F·K scratch t. */
BNN_GEN_CONV_INLINE void bnn_gen_conv_unpermute(const bnn_gen_conv *s, bnn_real *restrict a,
                                                bnn_real *restrict t)
{
	const long kk = s->kh * s->kw, k = s->c * kk, n = s->f * k;
	long f, c, o;

	BNN_GEN_EACH(n, 0, t, a[i]);
	for (f = 0; f < s->f; f++)
		for (o = 0; o < kk; o++)
			for (c = 0; c < s->c; c++)
				a[f * k + c * kk + o] = t[f * k + o * s->c + c];
}

/*
 * The parameter gradients of a conv2d layer, example by example: with
 * G_i = ∂L/∂Y_i (F × P, deltas of the mean loss) and col_i example i's
 * K × P columns (its windows),
 *     dW = Σ_i G_i·col_iᵀ,   db = Σ_i Σ_p G_i[·, p]          (overwritten)
 * and, when sw is not NULL, the mean of squared per-example gradients.
 * Example i's own gradient is B·G_i·col_iᵀ (as for a dense layer, B·G_i
 * is its own delta: see bnn_gen_dense_sqgrad), so
 *     sw = (1/B)·Σ_i (B·G_i·col_iᵀ)² = B·Σ_i (G_i·col_iᵀ)²,
 *     sb = B·Σ_i (Σ_p G_i[·, p])²                            (overwritten),
 * one example at a time through an F·K scratch block t, so memory does
 * not grow with batch × parameters.  dW is summed the same way with or
 * without sw, so the gradient does not depend on whether sqgrad is asked
 * for.  db and sb are NULL without a bias; col is
 * bnn_gen_conv_col_floats() scratch.
 *
 * Two ways, chosen by the layer's shape (a constant where the kernel is
 * inlined, so only one is compiled in; measured on 3x3 and 5x5 layers of
 * 1 to 64 channels):
 *   rows   (bnn_gen_conv_backward_params_rows) for layers whose window
 *          rows are long, KW·C >= BNN_GEN_CONV_ROWS_MIN floats: the
 *          windows as the rows of a P × K matrix, which the GEMM reads in
 *          place (measured faster on the 3x3 benchmark's products:
 *          docs/benchmarks.md);
 *   cols   (bnn_gen_conv_backward_params_cols) otherwise, e.g. LeNet's
 *          one-channel first layer, whose rows would be copies of five
 *          floats: im2col's columns of a group, one GEMM per example.
 */

/* Example e's share of db and sb: Σ_p G_e[f, p] and its square. */
BNN_GEN_CONV_INLINE void bnn_gen_conv_bias_grads(const bnn_gen_conv *s, long e, long batch,
                                                 const bnn_real *restrict ge, bnn_real *restrict db,
                                                 bnn_real *restrict sb)
{
	const long p = s->oh * s->ow;
	const bnn_real bsz = (bnn_real)batch;
	long f;

	for (f = 0; f < s->f; f++) {
		const bnn_real sum = bnn_gen_sum(p, ge + f * p);

		db[f] = e > 0 ? db[f] + sum : sum;
		if (sb)
			sb[f] = e > 0 ? sb[f] + bsz * sum * sum : bsz * sum * sum;
	}
}

/* dW (+)= and sw (+)= the F·K products of m examples e0 .. e0 + m − 1 in
 * t (lane j's at t + j·nk), in example order, each element by one
 * thread: the additions BNN_GEN_EACH makes one example at a time. */
static inline void bnn_gen_conv_lanes_add(long nk, long m, long e0, bnn_real bsz,
                                          const bnn_real *restrict t, bnn_real *restrict dw,
                                          bnn_real *restrict sw)
{
	const long chunks = (nk + BNN_GEN_PAR_CHUNK - 1) / BNN_GEN_PAR_CHUNK;
	long c;

	BNN_GEN_PARALLEL_FOR(m * nk)
	for (c = 0; c < chunks; c++) {
		const long lo = c * BNN_GEN_PAR_CHUNK;
		const long hi = nk - lo < BNN_GEN_PAR_CHUNK ? nk : lo + BNN_GEN_PAR_CHUNK;
		long j;

		for (j = 0; j < m; j++) {
			const bnn_real *restrict tj = t + j * nk;

			if (e0 + j > 0)
				BNN_GEN_LOOP_RANGE(lo, hi, dw[i] += (tj[i]));
			else
				BNN_GEN_LOOP_RANGE(lo, hi, dw[i] = (tj[i]));
			if (!sw)
				continue;
			if (e0 + j > 0)
				BNN_GEN_LOOP_RANGE(lo, hi, sw[i] += (bsz * tj[i] * tj[i]));
			else
				BNN_GEN_LOOP_RANGE(lo, hi, sw[i] = (bsz * tj[i] * tj[i]));
		}
	}
}

/* The rows way: example i's windows as rows (bnn_gen_im2row, from its
 * padded HWC image), G_i·R_i (F × K) in t; the sums run in the rows'
 * kernel-offset-major order of K and are permuted into the weight's order
 * at the end. */
BNN_GEN_CONV_INLINE void bnn_gen_conv_backward_params_rows(
        const bnn_gen_conv *s, long batch, const bnn_real *restrict x, const bnn_real *restrict g,
        bnn_real *restrict dw, bnn_real *restrict db, bnn_real *restrict sw, bnn_real *restrict sb,
        bnn_real *restrict col, bnn_real *restrict t)
{
	const long k = s->c * s->kh * s->kw, p = s->oh * s->ow;
	const long in = s->c * s->h * s->w, out = s->f * p, nf = s->f;
	const long image = (s->h + 2 * s->ph) * (s->w + 2 * s->pw) * s->c;
	bnn_real *restrict xh = col;
	bnn_real *restrict rows = bnn_gen_conv_is_pointwise(s) ? col : col + image;
	const bnn_real bsz = (bnn_real)batch;
	const long lanes = bnn_gen_conv_lanes(bnn_gen_conv_rows_way(s)), lane = image + p * k;
	long e, j, m;

	if (BNN_GEN_TEAM() && lanes > 1) {
		/* lanes examples at a time, one a thread, each in its lane of
		 * col and of t; then their sums in example order */
		for (e = 0; e < batch; e += m) {
			m = batch - e < lanes ? batch - e : lanes;
			BNN_GEN_PARALLEL_FOR(m > 1 ? m * nf * k * p : 0)
			for (j = 0; j < m; j++) {
				bnn_real *xj = col + j * lane;
				bnn_real *rj = bnn_gen_conv_is_pointwise(s) ? xj : xj + image;

				bnn_gen_conv_pad_hwc(s, x + (e + j) * in, xj);
				if (!bnn_gen_conv_is_pointwise(s))
					bnn_gen_im2row(s, xj, rj);
				bnn_gen_gemm(0, 0, nf, k, p, 1.0, g + (e + j) * out, p, rj, k, 0.0,
				             t + j * nf * k, k);
			}
			bnn_gen_conv_lanes_add(nf * k, m, e, bsz, t, dw, sw);
			if (db)
				for (j = 0; j < m; j++)
					bnn_gen_conv_bias_grads(s, e + j, batch, g + (e + j) * out,
					                        db, sb);
		}
		if (batch > 0) {
			bnn_gen_conv_unpermute(s, dw, t);
			if (sw)
				bnn_gen_conv_unpermute(s, sw, t);
		}
		return;
	}
	for (e = 0; e < batch; e++) {
		const bnn_real *ge = g + e * out;

		bnn_gen_conv_pad_hwc(s, x + e * in, xh);
		if (!bnn_gen_conv_is_pointwise(s)) /* a pointwise layer's image is its rows */
			bnn_gen_im2row(s, xh, rows);
		bnn_gen_gemm(0, 0, nf, k, p, 1.0, ge, p, rows, k, 0.0, t, k);
		BNN_GEN_EACH(nf * k, e > 0, dw, t[i]);
		if (sw)
			BNN_GEN_EACH(nf * k, e > 0, sw, bsz * t[i] * t[i]);
		if (db)
			bnn_gen_conv_bias_grads(s, e, batch, ge, db, sb);
	}
	if (batch < 1)
		return;
	bnn_gen_conv_unpermute(s, dw, t);
	if (sw)
		bnn_gen_conv_unpermute(s, sw, t);
}

/* The cols way: a group's columns by im2col (a pointwise layer's input is
 * its columns), then per example the K × F product col_i·G_iᵀ in t (the
 * faster orientation for these thin layers) added into dW's rows. */
BNN_GEN_CONV_INLINE void bnn_gen_conv_backward_params_cols(
        const bnn_gen_conv *s, long batch, const bnn_real *restrict x, const bnn_real *restrict g,
        bnn_real *restrict dw, bnn_real *restrict db, bnn_real *restrict sw, bnn_real *restrict sb,
        bnn_real *restrict col, bnn_real *restrict t)
{
	const long k = s->c * s->kh * s->kw, p = s->oh * s->ow;
	const long in = s->c * s->h * s->w, out = s->f * p, nf = s->f;
	const int pointwise = bnn_gen_conv_is_pointwise(s);
	const bnn_real bsz = (bnn_real)batch;
	const long lanes = BNN_GEN_CONV_LANES;
	long e, f, r, j, n, j0, m;

	if (BNN_GEN_TEAM()) {
		/* a group's columns (im2col on the team), then lanes examples
		 * of it at a time, one a thread, each product in its lane of t,
		 * added into dW's rows in example order, shared by row */
		for (e = 0; e < batch; e += n) {
			n = batch - e < (pointwise ? lanes : s->g) ? batch - e
			                                           : (pointwise ? lanes : s->g);
			if (!pointwise)
				bnn_gen_im2col(s, n, x + e * in, col);
			for (j0 = 0; j0 < n; j0 += m) {
				m = n - j0 < lanes ? n - j0 : lanes;
				BNN_GEN_PARALLEL_FOR(m > 1 ? m * k * nf * p : 0)
				for (j = 0; j < m; j++) {
					const bnn_real *cj = pointwise ? x + (e + j0 + j) * in
					                               : col + (j0 + j) * p;

					bnn_gen_gemm(0, 1, k, nf, p, 1.0, cj, pointwise ? p : n * p,
					             g + (e + j0 + j) * out, p, 0.0, t + j * k * nf,
					             nf);
				}
				BNN_GEN_PARALLEL_FOR(m * nf * k)
				for (f = 0; f < nf; f++) {
					bnn_real *restrict dwf = dw + f * k;
					bnn_real *restrict swf = sw ? sw + f * k : NULL;
					long jj, rr;

					for (jj = 0; jj < m; jj++) {
						const bnn_real *restrict tf = t + jj * k * nf + f;
						const long ei = e + j0 + jj;

						for (rr = 0; rr < k; rr++) {
							const bnn_real v = tf[rr * nf];

							dwf[rr] = ei > 0 ? dwf[rr] + v : v;
							if (swf)
								swf[rr] =
								        ei > 0 ? swf[rr] +
								                         bsz * v * v
								               : bsz * v * v;
						}
					}
				}
				if (db)
					for (j = 0; j < m; j++)
						bnn_gen_conv_bias_grads(s, e + j0 + j, batch,
						                        g + (e + j0 + j) * out, db,
						                        sb);
			}
		}
		return;
	}
	for (e = 0; e < batch; e += n) {
		const bnn_real *cols = x + e * in;

		n = pointwise ? 1 : batch - e < s->g ? batch - e : s->g;
		if (!pointwise) {
			bnn_gen_im2col(s, n, x + e * in, col);
			cols = col;
		}
		for (j = 0; j < n; j++) {
			const bnn_real *ge = g + (e + j) * out;
			const long ei = e + j;

			bnn_gen_gemm(0, 1, k, nf, p, 1.0, cols + j * p, n * p, ge, p, 0.0, t, nf);
			for (f = 0; f < nf; f++) {
				bnn_real *restrict dwf = dw + f * k;
				bnn_real *restrict swf = sw ? sw + f * k : NULL;
				const bnn_real *restrict tf = t + f;

				for (r = 0; r < k; r++) {
					const bnn_real v = tf[r * nf];

					dwf[r] = ei > 0 ? dwf[r] + v : v;
					if (swf)
						swf[r] =
						        ei > 0 ? swf[r] + bsz * v * v : bsz * v * v;
				}
			}
			if (db)
				bnn_gen_conv_bias_grads(s, ei, batch, ge, db, sb);
		}
	}
}

BNN_GEN_CONV_INLINE void bnn_gen_conv_backward_params(const bnn_gen_conv *s, long batch,
                                                      const bnn_real *restrict x,
                                                      const bnn_real *restrict g,
                                                      bnn_real *restrict dw, bnn_real *restrict db,
                                                      bnn_real *restrict sw, bnn_real *restrict sb,
                                                      bnn_real *restrict col, bnn_real *restrict t)
{
	if (bnn_gen_conv_rows_way(s))
		bnn_gen_conv_backward_params_rows(s, batch, x, g, dw, db, sw, sb, col, t);
	else
		bnn_gen_conv_backward_params_cols(s, batch, x, g, dw, db, sw, sb, col, t);
}

/*
 * dX (+)= the input's gradient for a stride-1 layer, by shifted views
 * rather than col2im: with the deltas of example j padded to rows of WP
 * (Gp, F × OH·WP, zero in the WP − OW extra columns of each row) and the
 * input's gradient kept padded as well (DXp, C planes of (H + 2·ph + 1)·WP:
 * one spare row, so that no view runs past its plane), each kernel offset
 * (ki, kj) is one GEMM,
 *     DXp[c][ki·WP + kj + q] += Σ_f W[f][c][ki][kj]·Gp[f][q],
 * q < OH·WP, C × OH·WP from W's slice (C × F, in t) and Gp; the extra
 * columns add zeros.  Then the inside of DXp is dX.  Nothing is gathered
 * or scattered element by element, and each GEMM's operand is read in
 * place.  col holds Gp and DXp (bnn_gen_conv_col_floats), t the F·K
 * weights reordered.
 */
BNN_GEN_CONV_INLINE void bnn_gen_conv_backward_input_s1(
        const bnn_gen_conv *s, long batch, const bnn_real *restrict g, const bnn_real *restrict w,
        bnn_real *restrict dx, bnn_real *restrict col, bnn_real *restrict t, int accumulate)
{
	const long kk = s->kh * s->kw, k = s->c * kk, p = s->oh * s->ow;
	const long in = s->c * s->h * s->w, out = s->f * p;
	const long wp = s->w + 2 * s->pw, pp = s->oh * wp, plane = (s->h + 2 * s->ph + 1) * wp;
	bnn_real *restrict gp = col, *restrict dxp = col + s->f * pp;
	const long lanes = bnn_gen_conv_lanes(bnn_gen_conv_shift_way(s));
	const long lane = s->f * pp + s->c * plane;
	long e, o, c, f, y, q, j, m;

	for (o = 0; o < kk; o++) /* t[o][c][f] = W[f][c][o] */
		for (c = 0; c < s->c; c++)
			for (f = 0; f < s->f; f++)
				t[(o * s->c + c) * s->f + f] = w[f * k + c * kk + o];
	if (BNN_GEN_TEAM() && lanes > 1) {
		/* lanes examples at a time, one a thread, each with its padded
		 * deltas and input gradient in its lane of col */
		for (e = 0; e < batch; e += m) {
			m = batch - e < lanes ? batch - e : lanes;
			BNN_GEN_PARALLEL_FOR(m > 1 ? m * kk * s->c * pp * s->f : 0)
			for (j = 0; j < m; j++) {
				const bnn_real *ge = g + (e + j) * out;
				bnn_real *dxe = dx + (e + j) * in;
				bnn_real *gj = col + j * lane, *dj = gj + s->f * pp;
				long fj, yj, qj, oj, cj;

				for (fj = 0; fj < s->f; fj++)
					for (yj = 0; yj < s->oh; yj++) {
						bnn_real *restrict d = gj + fj * pp + yj * wp;
						const bnn_real *restrict src =
						        ge + (fj * s->oh + yj) * s->ow;

						for (qj = 0; qj < s->ow; qj++)
							d[qj] = src[qj];
						for (; qj < wp; qj++)
							d[qj] = 0;
					}
				memset(dj, 0, (size_t)(s->c * plane) * sizeof *dj);
				for (oj = 0; oj < kk; oj++)
					bnn_gen_gemm(0, 0, s->c, pp, s->f, 1.0,
					             t + oj * s->c * s->f, s->f, gj, pp, 1.0,
					             dj + (oj / s->kw) * wp + oj % s->kw, plane);
				for (cj = 0; cj < s->c; cj++)
					for (yj = 0; yj < s->h; yj++) {
						bnn_real *restrict d =
						        dxe + (cj * s->h + yj) * s->w;
						const bnn_real *restrict src =
						        dj + cj * plane + (yj + s->ph) * wp + s->pw;
						BNN_GEN_EACH(s->w, accumulate, d, src[i]);
					}
			}
		}
		return;
	}
	for (e = 0; e < batch; e++) {
		const bnn_real *ge = g + e * out;
		bnn_real *dxe = dx + e * in;

		for (f = 0; f < s->f; f++)
			for (y = 0; y < s->oh; y++) {
				bnn_real *restrict d = gp + f * pp + y * wp;
				const bnn_real *restrict src = ge + (f * s->oh + y) * s->ow;

				for (q = 0; q < s->ow; q++)
					d[q] = src[q];
				for (; q < wp; q++)
					d[q] = 0;
			}
		memset(dxp, 0, (size_t)(s->c * plane) * sizeof *dxp);
		for (o = 0; o < kk; o++)
			bnn_gen_gemm(0, 0, s->c, pp, s->f, 1.0, t + o * s->c * s->f, s->f, gp, pp,
			             1.0, dxp + (o / s->kw) * wp + o % s->kw, plane);
		for (c = 0; c < s->c; c++)
			for (y = 0; y < s->h; y++) {
				bnn_real *restrict d = dxe + (c * s->h + y) * s->w;
				const bnn_real *restrict src =
				        dxp + c * plane + (y + s->ph) * wp + s->pw;
				BNN_GEN_EACH(s->w, accumulate, d, src[i]);
			}
	}
}

/* dX (+)= col2im(Wᵀ·G_grp) for every group of examples: G_grp the
 * group's deltas gathered into F × n·P (in t, F·g·P), Wᵀ·G_grp its columns'
 * gradient (in dcol, K·g·P). */
BNN_GEN_CONV_INLINE void bnn_gen_conv_backward_input_cols(
        const bnn_gen_conv *s, long batch, const bnn_real *restrict g, const bnn_real *restrict w,
        bnn_real *restrict dx, bnn_real *restrict dcol, bnn_real *restrict t, int accumulate)
{
	const long k = s->c * s->kh * s->kw, p = s->oh * s->ow;
	const long in = s->c * s->h * s->w, out = s->f * p;
	long e, n;

	for (e = 0; e < batch; e += n) {
		const bnn_real *gg = g + e * out;

		n = batch - e < s->g ? batch - e : s->g;
		if (n > 1) {
			bnn_gen_conv_gather(s, n, gg, t);
			gg = t;
		}
		bnn_gen_gemm(1, 0, k, n * p, s->f, 1.0, w, k, gg, n * p, 0.0, dcol, n * p);
		bnn_gen_col2im(s, n, dcol, dx + e * in, accumulate);
	}
}

/* dX (+)= the gradient of the layer's input: for a pointwise layer,
 * dX_i (+)= Wᵀ·G_i (no columns); for a stride-1 layer whose products by
 * shifted views are large enough to pay for being KH·KW per example
 * (C·F >= BNN_GEN_CONV_SHIFT_CF and OH·(W + 2·pw) >= BNN_GEN_CONV_SHIFT_P),
 * by bnn_gen_conv_backward_input_s1; otherwise by col2im
 * (bnn_gen_conv_backward_input_cols: LeNet's layers, 7x7 maps).  Measured
 * on 3x3 and 5x5 layers of 1 to 64 channels and 7x7 to 32x32 maps.  dcol
 * is bnn_gen_conv_col_floats() scratch, t F·g·P. */
BNN_GEN_CONV_INLINE void bnn_gen_conv_backward_input(const bnn_gen_conv *s, long batch,
                                                     const bnn_real *restrict g,
                                                     const bnn_real *restrict w,
                                                     bnn_real *restrict dx, bnn_real *restrict dcol,
                                                     bnn_real *restrict t, int accumulate)
{
	const long k = s->c * s->kh * s->kw, p = s->oh * s->ow;
	const long in = s->c * s->h * s->w, out = s->f * p;
	long e;

	if (bnn_gen_conv_is_pointwise(s)) {
		/* one GEMM an example, the examples shared by the team */
		BNN_GEN_PARALLEL_FOR(batch > 1 ? batch * k * p * s->f : 0)
		for (e = 0; e < batch; e++)
			bnn_gen_gemm(1, 0, k, p, s->f, 1.0, w, k, g + e * out, p,
			             accumulate ? 1.0 : 0.0, dx + e * in, p);
	} else if (bnn_gen_conv_shift_way(s)) {
		bnn_gen_conv_backward_input_s1(s, batch, g, w, dx, dcol, t, accumulate);
	} else {
		bnn_gen_conv_backward_input_cols(s, batch, g, w, dx, dcol, t, accumulate);
	}
}

#endif /* BNN_GEN_CONV_H */
