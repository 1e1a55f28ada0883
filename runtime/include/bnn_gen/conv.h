/*
 * bnn_gen/conv.h: the kernels of conv2d layers (gen/layer_conv.c).
 *
 * The layer's shape (bnn_gen_conv), the floats of scratch it needs
 * (bnn_gen_conv_col_floats and bnn_gen_conv_tmp_floats, which the
 * compiler reserves too), im2col, im2row and col2im, and the forward and
 * backward passes by GEMM.  A dropout(p) conv2d layer's masks are
 * bnn_gen/noise.h's.
 *
 * Threads: each kernel is a list of tasks (a group of examples, or one
 * example) that write disjoint outputs, shared among the team that the
 * generated code starts around the call (BNN_GEN_TEAM_REGION with the
 * kernel's bnn_gen_conv_*_team count: bnn_gen/loop.h says why the region
 * is the caller's).  A task runs serially, inlined with the layer's
 * shape as constants, in its thread's lane of scratch.  dW is a sum over
 * examples, so every task (a fixed chunk of examples) sums its own
 * examples into a slot of its own, and the slots are added into dW in
 * task order, BNN_GEN_CONV_LANES tasks at a time: the same sums in the
 * same order for any team, one thread included.  With a team of one
 * (few or small tasks), the tasks run on the calling thread and their
 * products may use the team themselves (bnn_sgemm threads large ones).
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
 * Forward of a stride-1 layer goes example by example by shifted views
 * (bnn_gen_conv_forward_shifted: one GEMM per kernel offset over a view
 * of the padded input, no columns), when bnn_gen_conv_forward_shifts says
 * the products are large enough.  Otherwise it takes the batch in groups of
 * s->g examples (the generator picks g, a constant, so that a group's
 * columns are wide enough for the GEMM to run near its best; the last
 * group may be smaller).  A group of n
 * examples is one K × (n·P) matrix of columns (P = OH·OW; example j's
 * windows are its columns j·P .. j·P + P − 1), zero where a window lies in
 * the padding, in a scratch block of K·g·P floats (and, for a stride-1
 * layer with padding, the group's padded input: bnn_gen_conv_col_floats),
 * so that Y_grp = W·col_grp (F × n·P, one GEMM), scattered back into the
 * batch's [e][F][P] layout with the bias added on the way.
 *
 * Backward goes example by example, with operands that the GEMM reads in
 * place rather than copies into its own panels:
 *     dW   example i's windows as the rows of a P × K matrix (from its
 *          image in HWC order), G_i·rows_i (F × K): for a stride-1 layer
 *          of enough channels (bnn_gen_conv_dw_shifts) one GEMM per
 *          kernel offset over a shifted view of the image
 *          (bnn_gen_conv_dw_shifted), otherwise one GEMM on the rows
 *          copied by im2row;
 *     dX   for a stride-1 layer, one GEMM per kernel offset between the
 *          deltas and a shifted view of the padded input gradient
 *          (bnn_gen_conv_dx_shifted); otherwise, per group,
 *          dcol_grp = Wᵀ·G_grp (G_grp the group's deltas gathered into
 *          F × n·P) and col2im.
 * The group's outputs or gathered deltas live in a second scratch block
 * of F·g·P floats (also used as the F·K block of one example's weight
 * gradient).  Each thread of a team has a lane of each block; a lane
 * holds one group's columns or one example's rows at a time, never B of
 * them: memory does not grow with the batch.  A pointwise layer (1x1 kernel, stride 1, no padding) needs
 * no columns: its input is already the K × P matrix of each example, and
 * it runs one GEMM per example straight from x (g is 1 for it).
 *
 * Dilation (dh, dw) spaces a window's taps: tap (ki, kj) of output
 * (oy, ox) reads input (oy·sh − ph + ki·dh, ox·sw − pw + kj·dw), so a
 * window spans dh·(KH − 1) + 1 rows and dw·(KW − 1) + 1 columns.  conv2d
 * layers have 1 and 1; conv1d layers are [C, 1, L] maps under a 1 × k
 * window with dilation (1, d), the one convolution for both ops. */

/* The shape of a conv2d layer; generated code declares one as a static
 * const, so every field is a constant where the kernels are inlined. */
typedef struct bnn_gen_conv {
	long c, h, w; /* input channels, height, width */
	long f;       /* output channels */
	long kh, kw;  /* kernel height and width */
	long sh, sw;  /* stride */
	long ph, pw;  /* zero padding on each side */
	long dh, dw;  /* dilation: the spacing of a window's taps, >= 1 */
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
 * ox·sw − pw + kj·dw lies inside [0, w). */
BNN_GEN_CONV_INLINE void bnn_gen_conv_span(const bnn_gen_conv *s, long kj, long *lo, long *hi)
{
	long a = s->pw - kj * s->dw, b;

	*lo = a > 0 ? (a + s->sw - 1) / s->sw : 0;
	b = s->w - 1 + s->pw - kj * s->dw; /* ox·sw <= b */
	*hi = b < 0 ? 0 : b / s->sw + 1;
	if (*hi > s->ow)
		*hi = s->ow;
	if (*lo > *hi)
		*lo = *hi;
}


/* The lanes of scratch: one a thread, so the most threads a conv2d
 * kernel runs on.  A constant, so that the scratch's size (a figure of the
 * generated code) does not depend on the thread count; and the tasks of
 * dW whose slots are added into dW at a time. */
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

/* Forward and dW by shifted views too, for layers of enough input
 * channels: C is the inner dimension of forward's products and the
 * columns of dW's (one a kernel offset).  Measured on 3x3 layers of 3 to
 * 64 channels (docs/benchmarks.md, "conv1d (issue 23)"): forward gains
 * from 8 channels on (3 lost 15% against im2col), dW from 32 (the
 * kernel's 32 columns; 8 and 16 lost 20-40% against the rows copied by
 * im2row). */
#define BNN_GEN_CONV_SHIFT_FW_C 8
#define BNN_GEN_CONV_SHIFT_DW_C 32
BNN_GEN_CONV_INLINE int bnn_gen_conv_forward_shifts(const bnn_gen_conv *s)
{
	return bnn_gen_conv_shift_way(s) && s->c >= BNN_GEN_CONV_SHIFT_FW_C;
}
BNN_GEN_CONV_INLINE int bnn_gen_conv_dw_shifts(const bnn_gen_conv *s)
{
	return bnn_gen_conv_shift_way(s) && s->c >= BNN_GEN_CONV_SHIFT_DW_C;
}

/* The columns of a stride-1 layer's shifted views (forward, dW and dX): the
 * positions oy·WP + ox at the padded width WP = W + 2·pw, from the first
 * output to the last, (OH − 1)·WP + OW (the last row's padding columns
 * would only add zeros, and the view then ends inside its plane). */
BNN_GEN_CONV_INLINE long bnn_gen_conv_view_cols(const bnn_gen_conv *s)
{
	return (s->oh - 1) * (s->w + 2 * s->pw) + s->ow;
}

/* Whether a stride-1 layer's outputs at the padded width are laid out as
 * y's own rows (one output row, or a window one column wide, OW = WP):
 * then the shifted views write Y and read G in place. */
BNN_GEN_CONV_INLINE int bnn_gen_conv_view_in_place(const bnn_gen_conv *s)
{
	return s->oh == 1 || s->ow == s->w + 2 * s->pw;
}

/* Examples per task of dW: the rows way takes each example's rows on its
 * own, so a small chunk (many tasks to share); the cols way takes a
 * group's columns, so a group. */
#define BNN_GEN_CONV_ROWS_CHUNK 4
BNN_GEN_CONV_INLINE long bnn_gen_conv_dw_chunk(const bnn_gen_conv *s)
{
	return bnn_gen_conv_rows_way(s) ? BNN_GEN_CONV_ROWS_CHUNK : s->g;
}

/* The floats of one lane of the im2col block, the most of: a group's
 * columns, K·g·P, and for a stride-1 layer with padding, after them, the
 * group's input maps with their padding, g·C·(H + 2·ph)·(W + 2·pw) (see
 * bnn_gen_im2col; dX's columns, by col2im, take K·g·P too); one example's
 * padded HWC image and its P × K rows (dW the rows way), or its deltas
 * transposed at the padded width, OH·WP·F (the rows way by shifted
 * views); one example's padded deltas and input gradient, C·HP·WP (dX by
 * shifted views; forward's padded input, C·HP·WP, is less). */
static inline long bnn_gen_conv_lane_col_floats(const bnn_gen_conv *s)
{
	const long hp = s->h + 2 * s->ph, wp = s->w + 2 * s->pw;
	long floats = s->c * s->kh * s->kw * s->g * s->oh * s->ow, need;

	if (s->sh == 1 && s->sw == 1 && (s->ph || s->pw))
		floats += s->g * s->c * hp * wp;
	need = s->c * hp * wp + (bnn_gen_conv_dw_shifts(s) ? s->oh * wp * s->f
	                                                   : s->oh * s->ow * s->c * s->kh * s->kw);
	if (bnn_gen_conv_rows_way(s) && need > floats)
		floats = need;
	need = s->f * s->oh * wp + s->c * hp * wp;
	if (bnn_gen_conv_shift_way(s) && need > floats)
		floats = need;
	return floats;
}

/* The floats of one lane of the second block: a group's outputs or
 * gathered deltas, F·g·P, one example's F·K weight gradient, or (forward
 * by shifted views) one example's outputs at the padded width, F·OH·WP. */
static inline long bnn_gen_conv_lane_tmp_floats(const bnn_gen_conv *s)
{
	const long grp = s->f * s->g * s->oh * s->ow, nk = s->f * s->c * s->kh * s->kw;
	const long yp = s->f * s->oh * (s->w + 2 * s->pw); /* forward's Yp (shifted views) */
	long floats = grp > nk ? grp : nk;

	if (bnn_gen_conv_forward_shifts(s) && yp > floats)
		floats = yp;
	return floats;
}

/* The floats of one task's slot of dW sums: its dW and its squares' sum
 * (F·K each), its db and its squares' sum (F each). */
static inline long bnn_gen_conv_slot_floats(const bnn_gen_conv *s)
{
	return 2 * (s->f * s->c * s->kh * s->kw + s->f);
}

/* The floats between two lanes of the im2col block, which no thread
 * writes.  A lane is written from start to end (im2col) and read back
 * with a stride of a row (the GEMM); with the lanes back to back, a
 * thread's conv2d forward on two threads ran no faster than on one, a
 * guard of 1 MB between them gave 1.9x (LeNet's first layer, batch 128,
 * best of 2000; the likely cause: the cache's prefetchers run ahead of a
 * thread's lane into the next one, which another core is writing).  64K
 * floats measured as good as 1 MB (the LeNet's pass: its layers' forward
 * from 437 and 470 us on one thread to 202 and 225 us on two, against
 * 362 and 295 us without); the guard costs address space, not memory,
 * since no one touches its pages. */
#ifndef BNN_GEN_CONV_LANE_GUARD
#define BNN_GEN_CONV_LANE_GUARD 65536L
#endif
/* Lane j of the im2col block starts at col + j·(this): a lane rounded up
 * to whole cache lines and a guard. */
static inline long bnn_gen_conv_lane_col_stride(const bnn_gen_conv *s)
{
	return (bnn_gen_conv_lane_col_floats(s) + 15) / 16 * 16 + BNN_GEN_CONV_LANE_GUARD;
}

/* The floats of the im2col block: BNN_GEN_CONV_LANES lanes with their
 * guards.  The one
 * definition of this size, and of bnn_gen_conv_tmp_floats: the compiler
 * reserves what they say (gen/layer_conv.c calls them),
 * t/gen_conv_scratch.c checks the figures emitted into generated code
 * against them. */
static inline long bnn_gen_conv_col_floats(const bnn_gen_conv *s)
{
	return BNN_GEN_CONV_LANES * bnn_gen_conv_lane_col_stride(s);
}

/* The floats of the second block: BNN_GEN_CONV_LANES lanes, then as many
 * slots of dW sums (which also hold the weights reordered for dX by
 * shifted views: F·K floats). */
static inline long bnn_gen_conv_tmp_floats(const bnn_gen_conv *s)
{
	return BNN_GEN_CONV_LANES * (bnn_gen_conv_lane_tmp_floats(s) + bnn_gen_conv_slot_floats(s));
}

/* ---- the team of a kernel ---------------------------------------------------
 * The threads the tasks of a kernel run on: the calling thread's team,
 * at most BNN_GEN_CONV_LANES, when there are at least as many tasks and
 * the kernel's work passes BNN_GEN_CONV_TEAM_FLOPS; else 1.
 * BNN_GEN_CONV_TEAM_FLOPS: a team's start and join cost about 2.5 µs
 * (bnn_gen/loop.h), some 100,000 flops of these products.
 * Tasks: groups of g examples (forward, dX by col2im), chunks of
 * bnn_gen_conv_dw_chunk examples (dW), examples (a pointwise layer's
 * passes, dX by shifted views). */
#define BNN_GEN_CONV_TEAM_FLOPS (1L << 20)
BNN_GEN_CONV_INLINE int bnn_gen_conv_team(long tasks, long flops)
{
	long n = BNN_GEN_THREADS_HERE();

	if (n > BNN_GEN_CONV_LANES)
		n = BNN_GEN_CONV_LANES;
	return n > 1 && tasks >= n && flops >= BNN_GEN_CONV_TEAM_FLOPS ? (int)n : 1;
}

/* The flops of a pass's product over the batch: 2·F·K·P a example. */
BNN_GEN_CONV_INLINE long bnn_gen_conv_flops(const bnn_gen_conv *s, long batch)
{
	return 2 * s->f * s->c * s->kh * s->kw * s->oh * s->ow * batch;
}

/* The tasks of forward and of dX by col2im: groups of g examples (a
 * pointwise layer's g is 1). */
BNN_GEN_CONV_INLINE long bnn_gen_conv_groups(const bnn_gen_conv *s, long batch)
{
	return (batch + s->g - 1) / s->g;
}

BNN_GEN_CONV_INLINE int bnn_gen_conv_forward_team(const bnn_gen_conv *s, long batch)
{
	const long tasks = bnn_gen_conv_forward_shifts(s) ? batch : bnn_gen_conv_groups(s, batch);

	return bnn_gen_conv_team(tasks, bnn_gen_conv_flops(s, batch));
}

BNN_GEN_CONV_INLINE int bnn_gen_conv_backward_params_team(const bnn_gen_conv *s, long batch)
{
	const long chunk = bnn_gen_conv_dw_chunk(s);

	return bnn_gen_conv_team((batch + chunk - 1) / chunk, bnn_gen_conv_flops(s, batch));
}

BNN_GEN_CONV_INLINE int bnn_gen_conv_backward_input_team(const bnn_gen_conv *s, long batch)
{
	const long tasks = bnn_gen_conv_shift_way(s) ? batch : bnn_gen_conv_groups(s, batch);

	return bnn_gen_conv_team(tasks, bnn_gen_conv_flops(s, batch));
}

/*
 * The n maps x (each C·H·W floats) with their zero padding, as n·C
 * planes of HP·WP floats (HP = H + 2·ph, WP = W + 2·pw) in pad:
 * pad[(j·C + c)·HP·WP + (y + ph)·WP + q + pw] = x_j[c][y][q].
 */
BNN_GEN_CONV_INLINE void bnn_gen_conv_pad_chw(const bnn_gen_conv *s, long n,
                                              const bnn_real *restrict x, bnn_real *restrict pad)
{
	const long wp = s->w + 2 * s->pw, plane = (s->h + 2 * s->ph) * wp;
	long j, y;

	memset(pad, 0, (size_t)(n * s->c * plane) * sizeof *pad);
	for (j = 0; j < n * s->c; j++)
		for (y = 0; y < s->h; y++)
			memcpy(pad + j * plane + (y + s->ph) * wp + s->pw,
			       x + (j * s->h + y) * s->w, (size_t)s->w * sizeof *pad);
}

/*
 * im2col of n consecutive examples x (each C·H·W floats) into the
 * K × (n·P) matrix col with rows ld = n·P apart:
 * col[(ci·KH + ki)·KW + kj][j·P + oy·OW + ox] =
 * x_j[ci][oy·sh − ph + ki·dh][ox·sw − pw + kj·dw], or 0 in the padding.
 * With stride 1, every row of a window is then a copy of OW floats, a
 * constant where the kernel is inlined (a few vector moves, not a call of
 * memcpy): from x itself without padding, else from a copy of the group's
 * maps with their zero padding, written after the columns in col (see
 * bnn_gen_conv_col_floats).
 */
BNN_GEN_CONV_INLINE void bnn_gen_im2col(const bnn_gen_conv *s, long n, const bnn_real *restrict x,
                                        bnn_real *restrict col)
{
	const long p = s->oh * s->ow, in = s->c * s->h * s->w, ld = n * p;
	long ci, ki, kj, oy, ox, lo, hi, j;

	if (s->sh == 1 && s->sw == 1) {
		const long hp = s->h + 2 * s->ph, wp = s->w + 2 * s->pw, plane = hp * wp;
		const bnn_real *src = x;

		if (s->ph || s->pw) {
			bnn_real *restrict pad = col + s->c * s->kh * s->kw * s->g * p;

			bnn_gen_conv_pad_chw(s, n, x, pad);
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
							               (oy + ki * s->dh) * wp +
							               kj * s->dw,
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
						long iy = oy * s->sh - s->ph + ki * s->dh;
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
							memcpy(r + lo,
							       xr + (lo - s->pw + kj * s->dw),
							       (size_t)(hi - lo) * sizeof *r);
						else
							for (ox = lo; ox < hi; ox++)
								r[ox] = xr[ox * s->sw - s->pw +
								           kj * s->dw];
						for (ox = hi; ox < s->ow; ox++)
							r[ox] = 0;
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
	long ci, ki, kj, oy, ox, lo, hi, j;

	if (!accumulate)
		memset(dx, 0, (size_t)(n * in) * sizeof *dx);
	for (ci = 0; ci < s->c; ci++)
		for (ki = 0; ki < s->kh; ki++)
			for (kj = 0; kj < s->kw; kj++) {
				const bnn_real *row = dcol + ((ci * s->kh + ki) * s->kw + kj) * ld;

				bnn_gen_conv_span(s, kj, &lo, &hi);
				for (j = 0; j < n; j++)
					for (oy = 0; oy < s->oh; oy++) {
						long iy = oy * s->sh - s->ph + ki * s->dh;
						const bnn_real *r = row + j * p + oy * s->ow;
						bnn_real *xr;

						if (iy < 0 || iy >= s->h)
							continue;
						xr = dx + j * in + (ci * s->h + iy) * s->w;
						if (s->sw == 1) {
							bnn_real *restrict xo =
							        xr + (lo - s->pw + kj * s->dw);
							const bnn_real *restrict ro = r + lo;
							BNN_GEN_EACH(hi - lo, 1, xo, ro[i]);
						} else {
							for (ox = lo; ox < hi; ox++)
								xr[ox * s->sw - s->pw +
								   kj * s->dw] += r[ox];
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

	for (f = 0; f < s->f; f++)
		for (j = 0; j < n; j++)
			memcpy(t + (f * n + j) * p, g + (j * s->f + f) * p, (size_t)p * sizeof *t);
}

/* Forward of the n examples from e (one group): their columns in col,
 * Y_grp = W·col_grp in t (F × n·P), scattered into y's [e][F][P] layout
 * with the bias b (NULL: none) added on the way. */
BNN_GEN_CONV_INLINE void bnn_gen_conv_forward_group(const bnn_gen_conv *s, long e, long n,
                                                    const bnn_real *restrict x,
                                                    const bnn_real *restrict w,
                                                    const bnn_real *restrict b,
                                                    bnn_real *restrict col, bnn_real *restrict t,
                                                    bnn_real *restrict y)
{
	const long k = s->c * s->kh * s->kw, p = s->oh * s->ow;
	const long in = s->c * s->h * s->w, out = s->f * p;
	long f, j;

	bnn_gen_im2col(s, n, x + e * in, col);
	bnn_gen_gemm(0, 0, s->f, n * p, k, 1.0, w, k, col, n * p, 0.0, t, n * p);
	for (f = 0; f < s->f; f++) {
		const bnn_real bf = b ? b[f] : 0;

		for (j = 0; j < n; j++) {
			const bnn_real *restrict tf = t + (f * n + j) * p;
			bnn_real *restrict yf = y + (e + j) * out + f * p;
			BNN_GEN_EACH(p, 0, yf, tf[i] + bf);
		}
	}
}

/* Forward of a pointwise layer's example e: Y_e = W·X_e + b, one GEMM
 * straight from x. */
BNN_GEN_CONV_INLINE void bnn_gen_conv_forward_pointwise(const bnn_gen_conv *s, long e,
                                                        const bnn_real *restrict x,
                                                        const bnn_real *restrict w,
                                                        const bnn_real *restrict b,
                                                        bnn_real *restrict y)
{
	const long k = s->c, p = s->oh * s->ow;
	bnn_real *yi = y + e * s->f * p;
	long f;

	if (b)
		for (f = 0; f < s->f; f++) {
			const bnn_real bf = b[f];
			bnn_real *yf = yi + f * p;
			BNN_GEN_EACH(p, 0, yf, bf);
		}
	bnn_gen_gemm(0, 0, s->f, p, k, 1.0, w, k, x + e * k * p, p, b ? 1.0 : 0.0, yi, p);
}

/* W's KH·KW slices for the shifted views, each stored as the transposed
 * operand that the GEMM reads in place (no packing): wt[o][c][f] =
 * W[f][c][o] when by_channel (forward's W_o, F × C), else wt[o][f][c]
 * (dX's W_oᵀ, C × F). */
BNN_GEN_CONV_INLINE void bnn_gen_conv_tap_weights(const bnn_gen_conv *s, const bnn_real *restrict w,
                                                  int by_channel, bnn_real *restrict wt)
{
	const long kk = s->kh * s->kw, k = s->c * kk;
	long o, c, f;

	for (o = 0; o < kk; o++)
		for (c = 0; c < s->c; c++)
			for (f = 0; f < s->f; f++)
				wt[by_channel ? (o * s->c + c) * s->f + f
				              : (o * s->f + f) * s->c + c] = w[f * k + c * kk + o];
}

/*
 * Forward of a stride-1 layer's example e by shifted views, with no
 * columns: with its input padded (Xp, C planes of HP·WP, in col; x itself
 * without padding) and its outputs at the padded width (Yp, F rows of
 * OH·WP), each kernel offset o = (ki, kj) is one GEMM,
 *     Yp[f][q] += Σ_c W[f][c][o]·Xp[c][ki·dh·WP + kj·dw + q],
 * q < bnn_gen_conv_view_cols, F × view from W's slice (in wt, by channel)
 * and a view of Xp shifted by the offset, both read in place; Yp holds the
 * bias first (without one, the first product assigns).  When the layout
 * allows (bnn_gen_conv_view_in_place: conv1d layers), Yp is y itself;
 * otherwise Yp is in t and its inside is copied to y.
 */
BNN_GEN_CONV_INLINE void bnn_gen_conv_forward_shifted(const bnn_gen_conv *s, long e,
                                                      const bnn_real *restrict x,
                                                      const bnn_real *restrict wt,
                                                      const bnn_real *restrict b,
                                                      bnn_real *restrict col, bnn_real *restrict t,
                                                      bnn_real *restrict y)
{
	const long kk = s->kh * s->kw, p = s->oh * s->ow, out = s->f * p;
	const long in = s->c * s->h * s->w, padded = s->ph || s->pw;
	const long wp = s->w + 2 * s->pw, plane = (s->h + 2 * s->ph) * wp;
	const long nv = bnn_gen_conv_view_cols(s);
	const int in_place = bnn_gen_conv_view_in_place(s);
	const long ldy = in_place ? p : s->oh * wp;
	bnn_real *restrict yp = in_place ? y + e * out : t;
	const bnn_real *xp = padded ? col : x + e * in;
	long o, f, oy;

	if (padded)
		bnn_gen_conv_pad_chw(s, 1, x + e * in, col);
	if (b)
		for (f = 0; f < s->f; f++) {
			const bnn_real bf = b[f];
			bnn_real *restrict yf = yp + f * ldy;
			BNN_GEN_EACH(nv, 0, yf, bf);
		}
	for (o = 0; o < kk; o++)
		bnn_gen_gemm(1, 0, s->f, nv, s->c, 1.0, wt + o * s->c * s->f, s->f,
		             xp + (o / s->kw) * s->dh * wp + o % s->kw * s->dw, plane,
		             b || o > 0 ? 1.0 : 0.0, yp, ldy);
	if (in_place)
		return;
	for (f = 0; f < s->f; f++)
		for (oy = 0; oy < s->oh; oy++) {
			bnn_real *restrict d = y + e * out + f * p + oy * s->ow;
			const bnn_real *restrict src = t + f * ldy + oy * wp;
			BNN_GEN_EACH(s->ow, 0, d, src[i]);
		}
}

/* Y = conv(X) + b over the batch: x is B × (C·H·W), y B × (F·P), b NULL
 * for no bias; col and t the layer's scratch (bnn_gen_conv_col_floats,
 * bnn_gen_conv_tmp_floats).  The groups (a pointwise layer's examples)
 * are the tasks, each in its thread's lane; run it on a team of
 * bnn_gen_conv_forward_team threads. */
BNN_GEN_CONV_INLINE void bnn_gen_conv_forward(const bnn_gen_conv *s, long batch,
                                              const bnn_real *restrict x,
                                              const bnn_real *restrict w,
                                              const bnn_real *restrict b, bnn_real *restrict col,
                                              bnn_real *restrict t, bnn_real *restrict y)
{
	const long tasks = bnn_gen_conv_groups(s, batch);
	const long lc = bnn_gen_conv_lane_col_stride(s), lt = bnn_gen_conv_lane_tmp_floats(s);
	long q;

	if (bnn_gen_conv_forward_shifts(s)) {
		bnn_real *restrict wt = t + BNN_GEN_CONV_LANES * lt;

		BNN_GEN_TEAM_SINGLE
		bnn_gen_conv_tap_weights(s, w, 1, wt);
		BNN_GEN_TEAM_FOR
		for (q = 0; q < batch; q++) {
			const long lane = BNN_GEN_LANE();

			bnn_gen_conv_forward_shifted(s, q, x, wt, b, col + lane * lc, t + lane * lt,
			                             y);
		}
		return;
	}
	BNN_GEN_TEAM_FOR
	for (q = 0; q < tasks; q++) {
		const long lane = BNN_GEN_LANE(), e = q * s->g;

		if (bnn_gen_conv_is_pointwise(s))
			bnn_gen_conv_forward_pointwise(s, e, x, w, b, y);
		else
			bnn_gen_conv_forward_group(s, e, batch - e < s->g ? batch - e : s->g, x, w,
			                           b, col + lane * lc, t + lane * lt, y);
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
	const long wp = s->w + 2 * s->pw, row = wp * s->c, side = s->pw * s->c;
	long y;

	memset(xh, 0, (size_t)(s->ph * row) * sizeof *xh);
	memset(xh + (s->ph + s->h) * row, 0, (size_t)(s->ph * row) * sizeof *xh);
	for (y = 0; y < s->h; y++) {
		bnn_real *d = xh + (y + s->ph) * row;

		if (side) {
			memset(d, 0, (size_t)side * sizeof *d);
			memset(d + row - side, 0, (size_t)side * sizeof *d);
		}
		bnn_gen_transpose_matrix(s->c, s->w, x + y * s->w, s->h * s->w, d + side, s->c);
	}
}

/*
 * im2row of one example from its padded HWC image xh: the P × K matrix
 * rows[p][(ki·KW + kj)·C + c] =
 * xh[((oy·sh + ki·dh)·WP + ox·sw + kj·dw)·C + c],
 * each output position's window as a row, in kernel-offset-major order
 * (the weight's K order is channel-major: bnn_gen_conv_backward_params
 * permutes at the end).  One copy of KW·C floats per position and kernel
 * row, or with dilation along the width, of C floats per tap.
 */
BNN_GEN_CONV_INLINE void bnn_gen_im2row(const bnn_gen_conv *s, const bnn_real *restrict xh,
                                        bnn_real *restrict rows)
{
	const long wp = s->w + 2 * s->pw, k = s->c * s->kh * s->kw, seg = s->kw * s->c;
	long oy, ox, ki;

	for (oy = 0; oy < s->oh; oy++)
		for (ox = 0; ox < s->ow; ox++) {
			bnn_real *restrict r = rows + (oy * s->ow + ox) * k;

			for (ki = 0; ki < s->kh; ki++) {
				const bnn_real *xr =
				        xh + ((oy * s->sh + ki * s->dh) * wp + ox * s->sw) * s->c;
				long kj;

				if (s->dw == 1) {
					bnn_gen_copy(seg, r + ki * seg, xr);
					continue;
				}
				for (kj = 0; kj < s->kw; kj++)
					bnn_gen_copy(s->c, r + ki * seg + kj * s->c,
					             xr + kj * s->dw * s->c);
			}
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
 * one example at a time through an F·K block of its lane, so memory does
 * not grow with batch × parameters.  The sums run over fixed chunks of
 * examples (bnn_gen_conv_dw_chunk), each a task summing into a slot of
 * its own, then over the slots in chunk order.  dW is summed the same
 * way with or without sw, so the gradient does not depend on whether
 * sqgrad is asked for.  db and sb are NULL without a bias.
 *
 * Two ways, chosen by the layer's shape (a constant where the kernel is
 * inlined, so only one is compiled in; measured on 3x3 and 5x5 layers of
 * 1 to 64 channels):
 *   rows   (bnn_gen_conv_dw_rows) for layers whose window rows are long,
 *          KW·C >= BNN_GEN_CONV_ROWS_MIN floats: the windows as the rows
 *          of a P × K matrix, which the GEMM reads in place (measured
 *          faster on the 3x3 benchmark's products: docs/benchmarks.md);
 *   cols   (bnn_gen_conv_dw_cols) otherwise, e.g. LeNet's one-channel
 *          first layer, whose rows would be copies of five floats:
 *          im2col's columns of a group, one GEMM per example.
 */

/* Example e's share of db and sb: Σ_p G_e[f, p] and its square, assigned
 * when first, else added. */
BNN_GEN_CONV_INLINE void bnn_gen_conv_bias_grads(const bnn_gen_conv *s, int first, long batch,
                                                 const bnn_real *restrict ge, bnn_real *restrict db,
                                                 bnn_real *restrict sb)
{
	const long p = s->oh * s->ow;
	const bnn_real bsz = (bnn_real)batch;
	long f;

	for (f = 0; f < s->f; f++) {
		const bnn_real sum = bnn_gen_sum(p, ge + f * p);

		db[f] = first ? sum : db[f] + sum;
		if (sb)
			sb[f] = first ? bsz * sum * sum : sb[f] + bsz * sum * sum;
	}
}

/*
 * One example's G·R (F × K, in t, K in kernel-offset-major order) for a
 * stride-1 layer, without building R (its windows as the rows of a P × K
 * matrix): the block of R's columns of kernel offset o = (ki, kj) is a
 * view of the example's padded HWC image xh, rows of C floats at the
 * padded width shifted by ki·dh·WP + kj·dw, so each offset is one GEMM,
 *     t[f][o·C + c] = Σ_q Gt[q][f]·xh[q + ki·dh·WP + kj·dw][c],
 * q < bnn_gen_conv_view_cols, with Gt (in gt) the deltas ge transposed to
 * positions at the padded width (zero in the padding columns); both
 * operands are read in place.
 */
BNN_GEN_CONV_INLINE void bnn_gen_conv_dw_shifted(const bnn_gen_conv *s, const bnn_real *restrict ge,
                                                 const bnn_real *restrict xh, bnn_real *restrict gt,
                                                 bnn_real *restrict t)
{
	const long kk = s->kh * s->kw, k = s->c * kk, p = s->oh * s->ow;
	const long wp = s->w + 2 * s->pw, nv = bnn_gen_conv_view_cols(s);
	long o, oy;

	if (bnn_gen_conv_view_in_place(s))
		bnn_gen_transpose_matrix(s->f, nv, ge, p, gt, s->f);
	else
		for (oy = 0; oy < s->oh; oy++) {
			bnn_gen_transpose_matrix(s->f, s->ow, ge + oy * s->ow, p,
			                         gt + oy * wp * s->f, s->f);
			if (oy + 1 < s->oh)
				memset(gt + (oy * wp + s->ow) * s->f, 0,
				       (size_t)((wp - s->ow) * s->f) * sizeof *gt);
		}
	for (o = 0; o < kk; o++)
		bnn_gen_gemm(1, 0, s->f, s->c, nv, 1.0, gt, s->f,
		             xh + ((o / s->kw) * s->dh * wp + o % s->kw * s->dw) * s->c, s->c, 0.0,
		             t + o * s->c, k);
}

/* The rows way of the n examples from e: example i's padded HWC image (in
 * col), then G_i·R_i (F × K, R_i its windows as the rows of a P × K
 * matrix) in t: by shifted views when bnn_gen_conv_dw_shifts
 * (bnn_gen_conv_dw_shifted), else by one GEMM with R_i copied from the
 * image (bnn_gen_im2row, after it in col); summed into the slot's dW (and
 * sw) in the rows' kernel-offset-major order of K
 * (bnn_gen_conv_backward_params permutes at the end). */
BNN_GEN_CONV_INLINE void bnn_gen_conv_dw_rows(const bnn_gen_conv *s, long batch, long e, long n,
                                              const bnn_real *restrict x,
                                              const bnn_real *restrict g, int squares,
                                              bnn_real *restrict col, bnn_real *restrict t,
                                              bnn_real *restrict slot)
{
	const long k = s->c * s->kh * s->kw, p = s->oh * s->ow, nk = s->f * k;
	const long in = s->c * s->h * s->w, out = s->f * p;
	const long image = (s->h + 2 * s->ph) * (s->w + 2 * s->pw) * s->c;
	bnn_real *restrict rows = bnn_gen_conv_is_pointwise(s) ? col : col + image;
	bnn_real *restrict dw = slot, *restrict sw = slot + nk;
	const bnn_real bsz = (bnn_real)batch;
	long j;

	for (j = 0; j < n; j++) {
		bnn_gen_conv_pad_hwc(s, x + (e + j) * in, col);
		if (bnn_gen_conv_dw_shifts(s)) {
			bnn_gen_conv_dw_shifted(s, g + (e + j) * out, col, rows, t);
		} else {
			if (!bnn_gen_conv_is_pointwise(s)) /* its image is its rows */
				bnn_gen_im2row(s, col, rows);
			bnn_gen_gemm(0, 0, s->f, k, p, 1.0, g + (e + j) * out, p, rows, k, 0.0, t,
			             k);
		}
		BNN_GEN_EACH(nk, j > 0, dw, t[i]);
		if (squares)
			BNN_GEN_EACH(nk, j > 0, sw, bsz * t[i] * t[i]);
	}
}

/* The cols way of the n examples from e: their columns (im2col, in col;
 * a pointwise layer's input is its columns), then per example the K × F
 * product col_i·G_iᵀ in t (the faster orientation for these thin
 * layers), summed into the rows of the slot's dW (and sw). */
BNN_GEN_CONV_INLINE void bnn_gen_conv_dw_cols(const bnn_gen_conv *s, long batch, long e, long n,
                                              const bnn_real *restrict x,
                                              const bnn_real *restrict g, int squares,
                                              bnn_real *restrict col, bnn_real *restrict t,
                                              bnn_real *restrict slot)
{
	const long k = s->c * s->kh * s->kw, p = s->oh * s->ow, nk = s->f * k;
	const long in = s->c * s->h * s->w, out = s->f * p, nf = s->f;
	const int pointwise = bnn_gen_conv_is_pointwise(s);
	bnn_real *restrict dw = slot, *restrict sw = slot + nk;
	const bnn_real bsz = (bnn_real)batch;
	long j, f, r;

	if (!pointwise)
		bnn_gen_im2col(s, n, x + e * in, col);
	for (j = 0; j < n; j++) {
		if (pointwise)
			bnn_gen_gemm(0, 1, k, nf, p, 1.0, x + (e + j) * in, p, g + (e + j) * out, p,
			             0.0, t, nf);
		else
			bnn_gen_gemm(0, 1, k, nf, p, 1.0, col + j * p, n * p, g + (e + j) * out, p,
			             0.0, t, nf);
		for (f = 0; f < nf; f++) {
			bnn_real *restrict dwf = dw + f * k;
			bnn_real *restrict swf = sw + f * k;
			const bnn_real *restrict tf = t + f;

			for (r = 0; r < k; r++) {
				const bnn_real v = tf[r * nf];

				dwf[r] = j > 0 ? dwf[r] + v : v;
				if (squares)
					swf[r] = j > 0 ? swf[r] + bsz * v * v : bsz * v * v;
			}
		}
	}
}

/* dW, db (and sw, sb) (+)= the slots of the m tasks from task r0, in task
 * order (the batch's first task assigns): the elements shared among the
 * team in fixed chunks, each element's additions one thread's. */
static inline void bnn_gen_conv_slots_add(long nk, long nf, long m, long r0, long slot,
                                          const bnn_real *restrict slots, bnn_real *restrict dw,
                                          bnn_real *restrict db, bnn_real *restrict sw,
                                          bnn_real *restrict sb)
{
	const long chunks = (nk + BNN_GEN_PAR_CHUNK - 1) / BNN_GEN_PAR_CHUNK;
	long c, j;

	BNN_GEN_TEAM_FOR
	for (c = 0; c < chunks; c++) {
		const long lo = c * BNN_GEN_PAR_CHUNK;
		const long hi = nk - lo < BNN_GEN_PAR_CHUNK ? nk : lo + BNN_GEN_PAR_CHUNK;
		long jc;

		for (jc = 0; jc < m; jc++) {
			const bnn_real *restrict pw = slots + jc * slot, *restrict ps = pw + nk;

			if (r0 + jc > 0)
				BNN_GEN_LOOP_RANGE(lo, hi, dw[i] += pw[i]);
			else
				BNN_GEN_LOOP_RANGE(lo, hi, dw[i] = pw[i]);
			if (!sw)
				continue;
			if (r0 + jc > 0)
				BNN_GEN_LOOP_RANGE(lo, hi, sw[i] += ps[i]);
			else
				BNN_GEN_LOOP_RANGE(lo, hi, sw[i] = ps[i]);
		}
	}
	if (!db)
		return;
	BNN_GEN_TEAM_SINGLE
	for (j = 0; j < m; j++) {
		const bnn_real *restrict pb = slots + j * slot + 2 * nk, *restrict psb = pb + nf;

		if (r0 + j > 0)
			BNN_GEN_LOOP(nf, db[i] += pb[i]);
		else
			BNN_GEN_LOOP(nf, db[i] = pb[i]);
		if (!sb)
			continue;
		if (r0 + j > 0)
			BNN_GEN_LOOP(nf, sb[i] += psb[i]);
		else
			BNN_GEN_LOOP(nf, sb[i] = psb[i]);
	}
}

/* dW, db (and sw, sb when sw is not NULL) of the batch: x the layer's
 * input, g its deltas; col and t the layer's scratch.  Tasks of
 * bnn_gen_conv_dw_chunk examples, BNN_GEN_CONV_LANES at a time, each in
 * its thread's lane and summing into its slot (after the lanes of t);
 * then the slots are added in task order.  Run it on a team of
 * bnn_gen_conv_backward_params_team threads. */
BNN_GEN_CONV_INLINE void bnn_gen_conv_backward_params(const bnn_gen_conv *s, long batch,
                                                      const bnn_real *restrict x,
                                                      const bnn_real *restrict g,
                                                      bnn_real *restrict dw, bnn_real *restrict db,
                                                      bnn_real *restrict sw, bnn_real *restrict sb,
                                                      bnn_real *restrict col, bnn_real *restrict t)
{
	const long nk = s->f * s->c * s->kh * s->kw, p = s->oh * s->ow, out = s->f * p;
	const long chunk = bnn_gen_conv_dw_chunk(s), tasks = (batch + chunk - 1) / chunk;
	const long lc = bnn_gen_conv_lane_col_stride(s), lt = bnn_gen_conv_lane_tmp_floats(s);
	const long slot = bnn_gen_conv_slot_floats(s);
	bnn_real *restrict slots = t + BNN_GEN_CONV_LANES * lt;
	long r0, j;

	for (r0 = 0; r0 < tasks; r0 += BNN_GEN_CONV_LANES) {
		const long m = tasks - r0 < BNN_GEN_CONV_LANES ? tasks - r0 : BNN_GEN_CONV_LANES;

		BNN_GEN_TEAM_FOR
		for (j = 0; j < m; j++) {
			const long lane = BNN_GEN_LANE(), e = (r0 + j) * chunk;
			const long n = batch - e < chunk ? batch - e : chunk;
			bnn_real *sj = slots + j * slot;
			long i;

			if (bnn_gen_conv_rows_way(s))
				bnn_gen_conv_dw_rows(s, batch, e, n, x, g, sw != NULL,
				                     col + lane * lc, t + lane * lt, sj);
			else
				bnn_gen_conv_dw_cols(s, batch, e, n, x, g, sw != NULL,
				                     col + lane * lc, t + lane * lt, sj);
			if (db)
				for (i = 0; i < n; i++)
					bnn_gen_conv_bias_grads(s, i == 0, batch, g + (e + i) * out,
					                        sj + 2 * nk,
					                        sb ? sj + 2 * nk + s->f : NULL);
		}
		bnn_gen_conv_slots_add(nk, s->f, m, r0, slot, slots, dw, db, sw, sb);
	}
	if (bnn_gen_conv_rows_way(s) && batch > 0) {
		BNN_GEN_TEAM_SINGLE
		{
			bnn_gen_conv_unpermute(s, dw, t);
			if (sw)
				bnn_gen_conv_unpermute(s, sw, t);
		}
	}
}

/*
 * dX (+)= the input's gradient for a stride-1 layer, by shifted views
 * rather than col2im: with the deltas of example j at the padded width
 * (Gp, F rows of OH·WP, zero in the WP − OW extra columns of each row; G
 * itself when bnn_gen_conv_view_in_place) and the input's gradient kept
 * padded as well (DXp, C planes of HP·WP), each kernel offset (ki, kj) is
 * one GEMM,
 *     DXp[c][ki·dh·WP + kj·dw + q] += Σ_f W[f][c][ki][kj]·Gp[f][q],
 * q < bnn_gen_conv_view_cols, C × view from W's slice (in wt, by filter)
 * and Gp, both read in place; the extra columns add zeros.  Then the
 * inside of DXp is dX.  Nothing is gathered or scattered element by
 * element.  col (one lane) holds Gp and DXp.
 */
BNN_GEN_CONV_INLINE void bnn_gen_conv_dx_shifted(const bnn_gen_conv *s, long e,
                                                 const bnn_real *restrict g,
                                                 const bnn_real *restrict wt, bnn_real *restrict dx,
                                                 bnn_real *restrict col, int accumulate)
{
	const long kk = s->kh * s->kw, p = s->oh * s->ow;
	const long in = s->c * s->h * s->w, out = s->f * p;
	const long wp = s->w + 2 * s->pw, plane = (s->h + 2 * s->ph) * wp;
	const long nv = bnn_gen_conv_view_cols(s);
	const int in_place = bnn_gen_conv_view_in_place(s);
	const long ldg = in_place ? p : s->oh * wp;
	const bnn_real *ge = g + e * out, *gp = ge;
	bnn_real *dxe = dx + e * in;
	bnn_real *restrict dxp = col + s->f * s->oh * wp;
	long o, c, f, y, q;

	if (!in_place) {
		bnn_real *restrict gpad = col;

		for (f = 0; f < s->f; f++)
			for (y = 0; y < s->oh; y++) {
				bnn_real *restrict d = gpad + f * ldg + y * wp;
				const bnn_real *restrict src = ge + (f * s->oh + y) * s->ow;

				for (q = 0; q < s->ow; q++)
					d[q] = src[q];
				for (; q < wp; q++)
					d[q] = 0;
			}
		gp = gpad;
	}
	memset(dxp, 0, (size_t)(s->c * plane) * sizeof *dxp);
	for (o = 0; o < kk; o++)
		bnn_gen_gemm(1, 0, s->c, nv, s->f, 1.0, wt + o * s->c * s->f, s->c, gp, ldg, 1.0,
		             dxp + (o / s->kw) * s->dh * wp + o % s->kw * s->dw, plane);
	for (c = 0; c < s->c; c++)
		for (y = 0; y < s->h; y++) {
			bnn_real *restrict d = dxe + (c * s->h + y) * s->w;
			const bnn_real *restrict src = dxp + c * plane + (y + s->ph) * wp + s->pw;
			BNN_GEN_EACH(s->w, accumulate, d, src[i]);
		}
}

/* dX (+)= col2im(Wᵀ·G_grp) of the n examples from e (one group): G_grp
 * the group's deltas gathered into F × n·P (in t), Wᵀ·G_grp its columns'
 * gradient (in dcol). */
BNN_GEN_CONV_INLINE void bnn_gen_conv_dx_group(const bnn_gen_conv *s, long e, long n,
                                               const bnn_real *restrict g,
                                               const bnn_real *restrict w, bnn_real *restrict dx,
                                               bnn_real *restrict dcol, bnn_real *restrict t,
                                               int accumulate)
{
	const long k = s->c * s->kh * s->kw, p = s->oh * s->ow;
	const bnn_real *gg = g + e * s->f * p;

	if (n > 1) {
		bnn_gen_conv_gather(s, n, gg, t);
		gg = t;
	}
	bnn_gen_gemm(1, 0, k, n * p, s->f, 1.0, w, k, gg, n * p, 0.0, dcol, n * p);
	bnn_gen_col2im(s, n, dcol, dx + e * s->c * s->h * s->w, accumulate);
}

/* dX (+)= the gradient of the layer's input: for a pointwise layer,
 * dX_i (+)= Wᵀ·G_i (no columns), a task an example; for a stride-1 layer
 * whose products by shifted views are large enough to pay for being
 * KH·KW per example (C·F >= BNN_GEN_CONV_SHIFT_CF and
 * OH·(W + 2·pw) >= BNN_GEN_CONV_SHIFT_P), bnn_gen_conv_dx_shifted, a task
 * an example; otherwise by col2im (bnn_gen_conv_dx_group, a task a group:
 * LeNet's layers, 7x7 maps).  Measured on 3x3 and 5x5 layers of 1 to 64
 * channels and 7x7 to 32x32 maps.  dcol and t are the layer's scratch
 * (bnn_gen_conv_col_floats, bnn_gen_conv_tmp_floats).  Run it on a team
 * of bnn_gen_conv_backward_input_team threads. */
BNN_GEN_CONV_INLINE void bnn_gen_conv_backward_input(const bnn_gen_conv *s, long batch,
                                                     const bnn_real *restrict g,
                                                     const bnn_real *restrict w,
                                                     bnn_real *restrict dx, bnn_real *restrict dcol,
                                                     bnn_real *restrict t, int accumulate)
{
	const long kk = s->kh * s->kw, k = s->c * kk, p = s->oh * s->ow;
	const long in = s->c * s->h * s->w, out = s->f * p;
	const long lc = bnn_gen_conv_lane_col_stride(s), lt = bnn_gen_conv_lane_tmp_floats(s);
	bnn_real *restrict wt = t + BNN_GEN_CONV_LANES * lt;
	long e, q;

	if (bnn_gen_conv_is_pointwise(s)) {
		BNN_GEN_TEAM_FOR
		for (e = 0; e < batch; e++)
			bnn_gen_gemm(1, 0, k, p, s->f, 1.0, w, k, g + e * out, p,
			             accumulate ? 1.0 : 0.0, dx + e * in, p);
	} else if (bnn_gen_conv_shift_way(s)) {
		BNN_GEN_TEAM_SINGLE
		bnn_gen_conv_tap_weights(s, w, 0, wt);
		BNN_GEN_TEAM_FOR
		for (e = 0; e < batch; e++)
			bnn_gen_conv_dx_shifted(s, e, g, wt, dx, dcol + BNN_GEN_LANE() * lc,
			                        accumulate);
	} else {
		const long tasks = bnn_gen_conv_groups(s, batch);

		BNN_GEN_TEAM_FOR
		for (q = 0; q < tasks; q++) {
			const long lane = BNN_GEN_LANE(), e0 = q * s->g;

			bnn_gen_conv_dx_group(s, e0, batch - e0 < s->g ? batch - e0 : s->g, g, w,
			                      dx, dcol + lane * lc, t + lane * lt, accumulate);
		}
	}
}

#endif /* BNN_GEN_CONV_H */
