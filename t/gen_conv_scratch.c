/*
 * gen_conv_scratch.c: TAP tests that the compiler and the conv2d kernels
 * agree on the scratch a conv2d layer needs.
 *
 * The size has one definition, bnn_gen_conv_col_floats in
 * runtime/include/bnn_gen/conv.h; gen/layer_conv.c reserves what it says.
 * For every shape of a grid (input channels, output channels, kernel,
 * stride, padding, image size; a group size from 1 to 32 as the compiler
 * picks it), this test compiles a one-layer model with $BNNC and reads
 * back the generated code's layer shape (static const bnn_gen_conv cv_c)
 * and its two scratch blocks (conv_col, "[N] im2col", and conv_tmp).  Each
 * shape is one test, which checks that
 *
 *  - the emitted shape is the model's, with OH = ⌊(H + 2·ph − KH)/sh⌋ + 1
 *    (and OW alike), and a group of 1 exactly for a pointwise layer;
 *  - conv_col holds exactly bnn_gen_conv_col_floats(&shape) floats;
 *  - the kernels stay inside the blocks of those sizes: with a batch of
 *    g + 1 examples (one full group and a short one), forward,
 *    backward_params (with the squared per-example gradients) and
 *    backward_input run on a conv_col and a conv_tmp each followed by a guard
 *    of NaN that must come back bit for bit (a read of it would make the
 *    results NaN), and their results are those of plain loops (Y, dW, db,
 *    the squares of both, dX), within 1e-5·√terms of the terms'
 *    magnitude.
 *
 * The grid covers the kernels' every path: pointwise, im2col with and
 * without padding, the rows and cols ways of dW, the shifted-view and
 * col2im ways of forward and dX, and a layer whose group the compiler
 * shrinks to keep its columns under 2^20 floats; three shapes of 32
 * input channels after it take the shifted views in dW as well, at the
 * padded width and with outputs that are y's own rows (one output row,
 * as a conv1d layer's, and a window one column wide).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bnn_gen/conv.h"
#include "tap.h"

#define GUARD 64

static const char *bnnc;
static char tmpdir[] = "/tmp/gen_conv_scratch.XXXXXX";
static unsigned long long seed = 7;

/* Uniform in [-1, 1). */
static float uniform(void)
{
	seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
	return (float)((double)(seed >> 40) / (double)(1ULL << 23) - 1.0);
}

static float *alloc_floats(long n)
{
	float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);

	if (!p)
		tap_bail_out("out of memory");
	return p;
}

/* What the compiler emitted for a one-layer model. */
typedef struct emitted {
	bnn_gen_conv shape; /* cv_c */
	long col;           /* floats of conv_col */
	long tmp;           /* floats of conv_tmp */
} emitted;

/* Compiles the model of shape want (its g ignored) and reads back what
 * the compiler emitted; 0 on success, -1 (with a diagnostic) if bnnc
 * failed or its output lacks a part. */
static int compile_shape(const bnn_gen_conv *want, emitted *out)
{
	char bnn[256], c[256], cmd[1024], line[4096];
	FILE *f;
	int found = 0;

	snprintf(bnn, sizeof bnn, "%s/cs.bnn", tmpdir);
	snprintf(c, sizeof c, "%s/cs.c", tmpdir);
	f = fopen(bnn, "w");
	if (!f)
		tap_bail_out("cannot write %s", bnn);
	fprintf(f,
	        "model cs;\n"
	        "input x[%ld, %ld, %ld];\n"
	        "c = conv2d(x, %ld, kernel = (%ld, %ld), stride = (%ld, %ld), pad = (%ld, %ld));\n"
	        "logits = dense(flatten(c), 2);\n"
	        "y ~ categorical(logits);\n",
	        want->c, want->h, want->w, want->f, want->kh, want->kw, want->sh, want->sw,
	        want->ph, want->pw);
	fclose(f);
	snprintf(cmd, sizeof cmd, "'%s' -o '%s' '%s'", bnnc, c, bnn);
	if (system(cmd) != 0) {
		tap_diag("bnnc failed: %s", cmd);
		return -1;
	}
	f = fopen(c, "r");
	if (!f)
		tap_bail_out("cannot read %s", c);
	while (fgets(line, sizeof line, f)) {
		bnn_gen_conv *s = &out->shape;
		const char *p;

		if (sscanf(line,
		           " static const bnn_gen_conv cv_c = { %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld, "
		           "%ld, %ld, %ld, %ld, %ld, %ld, %ld };",
		           &s->c, &s->h, &s->w, &s->f, &s->kh, &s->kw, &s->sh, &s->sw, &s->ph,
		           &s->pw, &s->dh, &s->dw, &s->oh, &s->ow, &s->g) == 15)
			found |= 1;
		else if (strstr(line, "bnn_real *const conv_col = ") &&
		         (p = strstr(line, "/* [")) &&
		         sscanf(p, "/* [%ld] im2col */", &out->col) == 1)
			found |= 2;
		else if (strstr(line, "bnn_real *const conv_tmp = ") &&
		         (p = strstr(line, "/* [")) && sscanf(p, "/* [%ld]", &out->tmp) == 1)
			found |= 4;
	}
	fclose(f);
	if (found != 7) {
		tap_diag("%s lacks %s%s%s", c, found & 1 ? "" : "cv_c ",
		         found & 2 ? "" : "conv_col ", found & 4 ? "" : "conv_tmp");
		return -1;
	}
	return 0;
}

/* The input value of example e, channel ci at (y, x), 0 in the padding. */
static double in_at(const bnn_gen_conv *s, const float *x, long e, long ci, long y, long xx)
{
	if (y < 0 || y >= s->h || xx < 0 || xx >= s->w)
		return 0;
	return x[((e * s->c + ci) * s->h + y) * s->w + xx];
}

/* |got − want| <= 1e-5·√terms·mag, counting the misses in *bad. */
static void near(double got, double want, double mag, long terms, long *bad)
{
	if (!(fabs(got - want) <= 1e-5 * sqrt((double)terms + 1) * mag + 1e-30))
		(*bad)++;
}

/* Per-example and summed reference gradients of the parameters, in
 * double, with the magnitudes of their terms. */
typedef struct param_ref {
	double *dwe, *dwme, *dbe, *dbme; /* example e's dW and db, and magnitudes */
	double *dw, *dwm, *db, *dbm;     /* Σ_e of them */
	double *sw, *swm, *sb, *sbm;     /* Σ_e B·(dW_e)², Σ_e B·(db_e)², and bounds */
} param_ref;

static double *alloc_zeros(long n)
{
	double *p = calloc((size_t)(n > 0 ? n : 1), sizeof *p);

	if (!p)
		tap_bail_out("out of memory");
	return p;
}

/* Runs the three kernels on a batch of g + 1 examples with scratch of the
 * emitted sizes and checks guards and results; the number of failures. */
static long run_kernels(const bnn_gen_conv *s, long col_floats, long tmp_floats)
{
	const long batch = s->g + 1, k = s->c * s->kh * s->kw, p = s->oh * s->ow;
	const long in = s->c * s->h * s->w, out = s->f * p, fk = s->f * k;
	float *x = alloc_floats(batch * in), *w = alloc_floats(fk), *b = alloc_floats(s->f);
	float *y = alloc_floats(batch * out), *g = alloc_floats(batch * out);
	float *dw = alloc_floats(fk), *db = alloc_floats(s->f);
	float *sw = alloc_floats(fk), *sb = alloc_floats(s->f);
	float *dx = alloc_floats(batch * in);
	float *col = alloc_floats(col_floats + GUARD), *tmp = alloc_floats(tmp_floats + GUARD);
	double *dxw = alloc_zeros(batch * in), *dxm = alloc_zeros(batch * in);
	param_ref r = { alloc_zeros(fk), alloc_zeros(fk), alloc_zeros(s->f), alloc_zeros(s->f),
		        alloc_zeros(fk), alloc_zeros(fk), alloc_zeros(s->f), alloc_zeros(s->f),
		        alloc_zeros(fk), alloc_zeros(fk), alloc_zeros(s->f), alloc_zeros(s->f) };
	long bad = 0, i, e, f, ci, ki, kj, oy, ox;

	for (i = 0; i < batch * in; i++)
		x[i] = uniform();
	for (i = 0; i < fk; i++)
		w[i] = uniform();
	for (i = 0; i < s->f; i++)
		b[i] = uniform();
	for (i = 0; i < batch * out; i++)
		g[i] = uniform();
	for (i = 0; i < col_floats + GUARD; i++)
		col[i] = NAN;
	for (i = 0; i < tmp_floats + GUARD; i++)
		tmp[i] = NAN;

	bnn_gen_conv_forward(s, batch, x, w, b, col, tmp, y);
	bnn_gen_conv_backward_params(s, batch, x, g, dw, db, sw, sb, col, tmp);
	bnn_gen_conv_backward_input(s, batch, g, w, dx, col, tmp, 0);

	for (i = col_floats; i < col_floats + GUARD; i++)
		bad += !isnan(col[i]);
	for (i = tmp_floats; i < tmp_floats + GUARD; i++)
		bad += !isnan(tmp[i]);

	for (e = 0; e < batch; e++) {
		memset(r.dwe, 0, (size_t)fk * sizeof *r.dwe);
		memset(r.dwme, 0, (size_t)fk * sizeof *r.dwme);
		memset(r.dbe, 0, (size_t)s->f * sizeof *r.dbe);
		memset(r.dbme, 0, (size_t)s->f * sizeof *r.dbme);
		for (f = 0; f < s->f; f++)
			for (oy = 0; oy < s->oh; oy++)
				for (ox = 0; ox < s->ow; ox++) {
					const double ge = g[e * out + f * p + oy * s->ow + ox];
					double sum = b[f], mag = fabs(b[f]);

					for (ci = 0; ci < s->c; ci++)
						for (ki = 0; ki < s->kh; ki++)
							for (kj = 0; kj < s->kw; kj++) {
								const long yy =
								        oy * s->sh - s->ph + ki;
								const long xx =
								        ox * s->sw - s->pw + kj;
								const long o =
								        f * k +
								        (ci * s->kh + ki) * s->kw +
								        kj;
								const double v =
								        in_at(s, x, e, ci, yy, xx);
								long at;

								sum += w[o] * v;
								mag += fabs(w[o] * v);
								r.dwe[o] += ge * v;
								r.dwme[o] += fabs(ge * v);
								if (yy < 0 || yy >= s->h ||
								    xx < 0 || xx >= s->w)
									continue;
								at = ((e * s->c + ci) * s->h + yy) *
								             s->w +
								     xx;
								dxw[at] += ge * w[o];
								dxm[at] += fabs(ge * w[o]);
							}
					near(y[e * out + f * p + oy * s->ow + ox], sum, mag, k,
					     &bad);
					r.dbe[f] += ge;
					r.dbme[f] += fabs(ge);
				}
		for (i = 0; i < fk; i++) {
			r.dw[i] += r.dwe[i];
			r.dwm[i] += r.dwme[i];
			r.sw[i] += (double)batch * r.dwe[i] * r.dwe[i];
			r.swm[i] += 2 * (double)batch * r.dwme[i] * r.dwme[i];
		}
		for (f = 0; f < s->f; f++) {
			r.db[f] += r.dbe[f];
			r.dbm[f] += r.dbme[f];
			r.sb[f] += (double)batch * r.dbe[f] * r.dbe[f];
			r.sbm[f] += 2 * (double)batch * r.dbme[f] * r.dbme[f];
		}
	}
	for (i = 0; i < fk; i++) {
		near(dw[i], r.dw[i], r.dwm[i], batch * p, &bad);
		near(sw[i], r.sw[i], r.swm[i], batch * p, &bad);
	}
	for (f = 0; f < s->f; f++) {
		near(db[f], r.db[f], r.dbm[f], batch * p, &bad);
		near(sb[f], r.sb[f], r.sbm[f], batch * p, &bad);
	}
	for (i = 0; i < batch * in; i++)
		near(dx[i], dxw[i], dxm[i], s->f * s->kh * s->kw, &bad);

	free(x), free(w), free(b), free(y), free(g), free(dw), free(db), free(sw), free(sb);
	free(dx), free(col), free(tmp), free(dxw), free(dxm);
	free(r.dwe), free(r.dwme), free(r.dbe), free(r.dbme), free(r.dw), free(r.dwm);
	free(r.db), free(r.dbm), free(r.sw), free(r.swm), free(r.sb), free(r.sbm);
	return bad;
}

/* One shape: compile, compare, run. */
static void check_shape(const bnn_gen_conv *want)
{
	emitted got;
	bnn_gen_conv s;
	long oh = (want->h + 2 * want->ph - want->kh) / want->sh + 1;
	long ow = (want->w + 2 * want->pw - want->kw) / want->sw + 1;
	int same, pointwise;
	long bad = -1;

	if (compile_shape(want, &got) < 0) {
		ok(0, "C=%ld %ldx%ld F=%ld kernel %ldx%ld stride %ldx%ld pad %ldx%ld: compiled",
		   want->c, want->h, want->w, want->f, want->kh, want->kw, want->sh, want->sw,
		   want->ph, want->pw);
		return;
	}
	s = got.shape;
	pointwise = want->kh == 1 && want->kw == 1 && want->sh == 1 && want->sw == 1 &&
	            want->ph == 0 && want->pw == 0;
	same = s.c == want->c && s.h == want->h && s.w == want->w && s.f == want->f &&
	       s.kh == want->kh && s.kw == want->kw && s.sh == want->sh && s.sw == want->sw &&
	       s.ph == want->ph && s.pw == want->pw && s.dh == 1 && s.dw == 1 && s.oh == oh &&
	       s.ow == ow && s.g >= 1 && s.g <= 32 && (s.g == 1 || !pointwise);
	if (same && got.col == bnn_gen_conv_col_floats(&s))
		bad = run_kernels(&s, got.col, got.tmp);
	ok(bad == 0,
	   "C=%ld %ldx%ld F=%ld kernel %ldx%ld stride %ldx%ld pad %ldx%ld (g %ld): "
	   "conv_col [%ld] = bnn_gen_conv_col_floats %ld, kernels inside it and conv_tmp [%ld]",
	   want->c, want->h, want->w, want->f, want->kh, want->kw, want->sh, want->sw, want->ph,
	   want->pw, s.g, got.col, bnn_gen_conv_col_floats(&s), got.tmp);
	if (!same)
		tap_diag(
		        "emitted shape { %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld, "
		        "%ld }, expected OH %ld OW %ld",
		        s.c, s.h, s.w, s.f, s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.oh, s.ow, s.g, oh,
		        ow);
	else if (bad > 0)
		tap_diag("%ld guard floats or results wrong", bad);
}

/* Whether bnnc accepts the padding: at most half the kernel each way. */
static int pad_fits(const long kernel[2], const long pad[2])
{
	return pad[0] <= kernel[0] / 2 && pad[1] <= kernel[1] / 2;
}

int main(void)
{
	static const long chans[] = { 1, 8 }, outs[] = { 2, 5 };
	static const long kernels[][2] = { { 1, 1 }, { 3, 3 }, { 2, 3 } };
	static const long strides[][2] = { { 1, 1 }, { 2, 1 }, { 2, 2 } };
	static const long pads[][2] = { { 0, 0 }, { 1, 1 }, { 1, 0 } };
	static const long images[][2] = { { 5, 5 }, { 16, 16 } };
	/* a group the compiler shrinks (K·P·g under 2^20 floats) */
	static const bnn_gen_conv big = { 16, 28, 28, 8, 5, 5, 1, 1, 2, 2, 1, 1, 0, 0, 0 };
	/* shifted views in dW too (32 input channels), at the padded width,
	 * and with outputs that are y's own rows: one output row (a conv1d
	 * layer's [C, 1, L] map), and a window one column wide */
	static const bnn_gen_conv wide = { 32, 16, 16, 5, 3, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0 };
	static const bnn_gen_conv row = { 32, 1, 300, 5, 1, 5, 1, 1, 0, 2, 1, 1, 0, 0, 0 };
	static const bnn_gen_conv column = { 32, 16, 16, 5, 3, 1, 1, 1, 1, 0, 1, 1, 0, 0, 0 };
	size_t a, bb, kk, st, pd, im;
	int fitting = 0;
	char buf[256];

	bnnc = getenv("BNNC");
	if (!bnnc)
		tap_bail_out("BNNC (the compiler to test) is not set");
	if (!mkdtemp(tmpdir))
		tap_bail_out("mkdtemp failed");
	for (kk = 0; kk < 3; kk++)
		for (pd = 0; pd < 3; pd++)
			fitting += pad_fits(kernels[kk], pads[pd]);
	tap_plan(2 * 2 * fitting * 3 * 2 + 4);
	for (a = 0; a < 2; a++)
		for (bb = 0; bb < 2; bb++)
			for (kk = 0; kk < 3; kk++)
				for (pd = 0; pd < 3; pd++)
					for (st = 0; st < 3; st++)
						for (im = 0; im < 2; im++) {
							bnn_gen_conv s = { chans[a],
								           images[im][0],
								           images[im][1],
								           outs[bb],
								           kernels[kk][0],
								           kernels[kk][1],
								           strides[st][0],
								           strides[st][1],
								           pads[pd][0],
								           pads[pd][1],
								           1,
								           1,
								           0,
								           0,
								           0 };

							if (pad_fits(kernels[kk], pads[pd]))
								check_shape(&s);
						}
	check_shape(&big);
	check_shape(&wide);
	check_shape(&row);
	check_shape(&column);
	snprintf(buf, sizeof buf, "%s/cs.bnn", tmpdir);
	remove(buf);
	snprintf(buf, sizeof buf, "%s/cs.c", tmpdir);
	remove(buf);
	snprintf(buf, sizeof buf, "%s/cs.h", tmpdir);
	remove(buf);
	rmdir(tmpdir);
	return tap_done();
}
