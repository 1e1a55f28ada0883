/*
 * bench.c: the speed benchmarks of the generated code (`make bench`).
 *
 * Everything runs on one thread (bnn_set_threads(1); bench/run.sh also
 * exports OPENBLAS_NUM_THREADS=1) and prints one JSON object per line on
 * stdout; bench/run.sh sets the figures beside PyTorch's
 * (bench/torch_mlp.py) and docs/benchmarks.md explains them.  Measured:
 *
 *   fma_peak         the core's FP32 FMA rate with its widest vectors
 *                    (bench/peak.c), which every GEMM rate below is divided
 *                    by, and the rates with narrower vectors;
 *   gemm_784x512     the three products of the 784->512 dense layer at
 *                    batch 128 (forward Y = X·Wᵀ, dW = Gᵀ·X, dX = G·W),
 *                    through bnn_gen_gemm exactly as bnn_gen.h's dense
 *                    kernels call it (impl "bnnc": bnn_sgemm), and through
 *                    OpenBLAS's cblas_sgemm (impl "openblas");
 *   conv3x3          a 3x3 convolution of 32 to 32 channels on 28x28 maps
 *                    (stride 1, padding 1) at batch 128 through the
 *                    generated code's kernels (bnn_gen_conv_*: shifted
 *                    views, a GEMM per kernel offset and example, for
 *                    forward, dW and dX): forward, dW with db, the same with
 *                    the squared per-example gradients, dX, and all three;
 *   conv1d           the same for a conv1d layer of 64 to 64 channels on
 *                    signals of length 256, kernel 5, padding 2, at batch
 *                    64 (issue 23's target: 60% of the FMA peak);
 *   adam_step        one training step: the generated pass with the
 *                    gradient, then bnn_adam_step over all parameters, on a
 *                    fixed random batch reused at every step, for
 *                    fashion_point (784-512-512-10, batch 32 and 128) and
 *                    mlp13 (13-50-50-1, batch 32);
 *   step_parts       the same step split into the pass and the Adam update;
 *   sqgrad_overhead  the step with the per-example squared gradients
 *                    (VOGN's sqgrad) requested too, against the plain step
 *                    (their repeats interleaved: the median of the ratios
 *                    of neighbouring repeats);
 *   train_step       the trainer's real step (bnn_train) with adam on
 *                    fashion_point and with ivon, vogn, bbb (weight
 *                    samples, the default lrt=0, and as bbb_lrt with the
 *                    local reparameterisation) and badam on fashion_mf (the same
 *                    network with `posterior meanfield;`), batch 32 and
 *                    128, and each one's ratio to Adam's (see bench_train
 *                    below for the method);
 *   vi_parts         the passes a variational step is made of: plain, with
 *                    sqgrad (VOGN), with the local reparameterisation and
 *                    the gradient of sigma (BBB);
 *   vi_kernels       the update kernels over all 669,706 parameters, and
 *                    BBB's with the next sample (bnn_bbb_step_sample,
 *                    bbb_sample) in blocks of BNN_SAMPLE_BLOCK as the
 *                    trainer calls it;
 *   posterior_sample bnn_posterior_sample over the same parameters, in ns
 *                    per weight, as the trainer calls it (with eps) and
 *                    without eps, and bnn_rng_normal alone;
 *   fwht             the fast Walsh-Hadamard transform (bnn_fwht_batch,
 *                    orthonormal, as WHVI uses it) of a batch of 128
 *                    vectors of length 1024, in µs per vector, against
 *                    issue 6's target (<= 0.4 µs), and in the same run, each
 *                    interleaved with it, a textbook radix-2 loop and the
 *                    dense product with the same matrix (cblas_sgemm);
 *   whvi_step        a WHVI layer's step (the generated pass of a one-layer
 *                    model, D -> D ~ whvi: g sampled per example, forward,
 *                    loss, backward with every parameter's gradient) against
 *                    the same layer ~ meanfield (the local
 *                    reparameterisation of layer_dense.c, with the gradient
 *                    of σ), D = 128, 256, 512, 1024, batch 128, their
 *                    repeats interleaved, against issue 6's targets (>= 10x
 *                    at 1024, no slower from 128 up);
 *   lenet            the LeNet-5-style CNN of examples/fashion_lenet.bnn at
 *                    `make lenet`'s batch (128): its adam_step and
 *                    step_parts lines (net "lenet", a fixed batch, as for
 *                    the MLPs, so PyTorch's figure compares), then the
 *                    trainer's step (bnn_train, one MC sample) with adam on
 *                    fashion_lenet and ivon and vogn on
 *                    examples/fashion_lenet_bayes.bnn, as lenet_step lines
 *                    with each one's ratio to Adam's and examples/s;
 *   infer1           posterior-mean inference of the 784-512-512-10 MLP
 *                    (examples/fashion_point.bnn), one example at a time:
 *                    its `bnnc --standalone` file compiled by the host's cc
 *                    -std=c99 -O2 (bench/libinfer1.a, the weights of
 *                    BENCH_INFER1_CKPT exported into it) against libbnn's
 *                    own bnn_predict() on a one-example data set with the
 *                    same checkpoint (mc = 0), their repeats interleaved,
 *                    cycling over 64 inputs; and the largest difference of
 *                    their outputs, relative to the largest output.
 *   gru              issue 23's GRU step: bench/gru_128.bnn (50 steps of 32
 *                    features, gru of 128 units, dense 128 -> 10) at batch
 *                    32: its adam_step and step_parts lines (net
 *                    "gru-50x32-128"; bench/torch_seq.py times nn.GRU's
 *                    step for the ratio, target >= 1.5x) and its
 *                    sqgrad_overhead line (VOGN's pass, target <= 1.6x).
 *   transformer      issue 23's attention block: bench/transformer_128.bnn
 *                    (one post-norm encoder block, 4 heads, dim 128,
 *                    feed-forward 512, over 64 steps, flattened into 10
 *                    classes) at batch 32: adam_step, step_parts (net
 *                    "transformer-64x128"; bench/torch_seq.py times
 *                    nn.TransformerEncoderLayer's step, target >= 1.5x)
 *                    and sqgrad_overhead.
 *
 * Each figure is the median of `repeats` timed repeats (default 7), each at
 * least `min_time` seconds long (default 0.2), after a warm-up of the same
 * length.  A training run restarts from the same initial parameters and
 * zeroed Adam moments at every repeat (outside the timed region), so every
 * repeat times the same arithmetic.
 *
 * Times are CPU time of the process by default (--clock cpu): on a shared
 * machine the time the process spends descheduled then does not count,
 * while any hidden helper thread's work would.  --clock wall times with
 * the monotonic clock instead.
 *
 * Usage: bench [--repeats N] [--min-time SECONDS] [--clock cpu|wall]
 *              [--train-steps N] [--only GROUP[,GROUP...]] [--net NAME]
 * where a GROUP is one of peak, gemm (gemm_784x512, conv3x3, conv1d), step
 * (adam_step, step_parts and sqgrad_overhead), train (train_step), vi
 * (vi_parts, vi_kernels and posterior_sample), fwht, whvi, lenet
 * (adam_step, step_parts and lenet_step of the CNN), gru, transformer; by
 * default all run.
 * --net NAME keeps only the threads group's cases of that network
 * (784-512-512-10, lenet, resnet, 13-50-50-1); infer1 (batch-1 inference).
 * The env line always comes first.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "bnn.h"
#include "bnn_gen.h"
#include "fashion_lenet.h"
#include "fashion_lenet_bayes.h"
#include "fashion_mf.h"
#include "fashion_point.h"
#include "fashion_point_infer.h"
#include "fashion_resnet.h"
#include "gru_128.h"
#include "mf_1024.h"
#include "mf_128.h"
#include "mf_256.h"
#include "mf_512.h"
#include "mlp13.h"
#include "peak.h"
#include "transformer_128.h"
#include "wv_1024.h"
#include "wv_128.h"
#include "wv_256.h"
#include "wv_512.h"

#define BENCH_MAX_REPEATS 64

/* How long and how often to measure. */
typedef struct bench_opts {
	int repeats;      /* timed repeats per figure, 1 .. BENCH_MAX_REPEATS */
	double min_time;  /* least seconds per repeat, and of the warm-up */
	int clock;        /* enum bnn_bench_clock */
	long train_steps; /* steps per timed epoch of bench_train; 0: enough
	                     for Adam's epoch to last min_time */
	unsigned groups;  /* the BENCH_G* groups to run */
	const char *net;  /* the threads group's network, or NULL for all */
} bench_opts;

/* The groups of figures --only selects. */
enum {
	BENCH_GPEAK = 1u << 0,
	BENCH_GGEMM = 1u << 1,
	BENCH_GSTEP = 1u << 2,
	BENCH_GTRAIN = 1u << 3,
	BENCH_GVI = 1u << 4,
	BENCH_GFWHT = 1u << 5,
	BENCH_GWHVI = 1u << 6,
	BENCH_GLENET = 1u << 7,
	BENCH_GTHREADS = 1u << 8,
	BENCH_GINFER1 = 1u << 9,
	BENCH_GGRU = 1u << 10,
	BENCH_GTRANSFORMER = 1u << 11,
	BENCH_GALL = (1u << 12) - 1
};

static const char *const bench_group_names[] = { "peak",    "gemm",   "step", "train",
	                                         "vi",      "fwht",   "whvi", "lenet",
	                                         "threads", "infer1", "gru",  "transformer" };

/*
 * A timed operation: `run` does one unit of work (a step, a product) on
 * `ctx`; `reset`, if not NULL, restores the starting state before the
 * warm-up and before every repeat and is not timed.
 */
typedef struct bench_op {
	void (*run)(void *ctx);
	void (*reset)(void *ctx);
	void *ctx;
} bench_op;

/* What bench_measure found. */
typedef struct bench_result {
	double seconds; /* median seconds per unit of work */
	long units;     /* units of work in the last repeat */
} bench_result;

/* One training run of a generated model on a fixed random batch. */
typedef struct bench_net {
	const bnn_model *m;
	const char *shape; /* the layer widths, "784-512-512-10" */
	long batch;
	int with_sqgrad; /* the pass also computes sqgrad */
	bnn_adam_params adam;
	long step;         /* Adam's t */
	float *w0;         /* the initial parameters */
	float *w, *g, *sq; /* parameters, gradient, squared gradients */
	float *am, *av;    /* Adam's moments */
	float *x, *y, *ws; /* the batch and the pass's workspace */
	float *sigma, *gs; /* posterior sd and its gradient (vi_parts) */
	bnn_rng rng;       /* the noise of a stochastic pass */
} bench_net;

/* The operands of the 784->512 layer's products. */
typedef struct bench_gemm {
	int openblas;       /* cblas_sgemm, not bnn_gen_gemm */
	long b, k, n;       /* batch, in, out */
	float *x, *w, *g;   /* B×K inputs, N×K weights, B×N deltas */
	float *y, *dw, *dx; /* their products */
} bench_gemm;

/* Keeps results alive so no work can be optimised away. */
static volatile double bench_sink;

/* n zeroed floats, 64-byte aligned like the buffers a careful caller of
 * the generated code would pass; exits on failure. */
static float *bench_alloc(size_t n)
{
	size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
	float *p = aligned_alloc(64, bytes ? bytes : 64);

	if (!p) {
		fprintf(stderr, "bench: out of memory (%zu bytes)\n", bytes);
		exit(1);
	}
	memset(p, 0, bytes);
	return p;
}

static int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of v[0..n), which it sorts. */
static double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Warm up op for at least o->min_time seconds; return the number of units
 * a repeat should run to last about 1.1 × o->min_time. */
static long bench_warm_up(const bench_op *op, const bench_opts *o)
{
	double t0, t;
	long units = 0;

	if (op->reset)
		op->reset(op->ctx);
	t0 = bnn_bench_now(o->clock);
	do {
		op->run(op->ctx);
		units++;
	} while ((t = bnn_bench_now(o->clock) - t0) < o->min_time);
	return (long)ceil(1.1 * o->min_time / (t / (double)units));
}

/* One timed repeat: the estimated number of units, then one at a time
 * until o->min_time has passed, so that no repeat is ever short.  Returns
 * seconds per unit; *done gets the number of units run. */
static double bench_repeat(const bench_op *op, long units, const bench_opts *o, long *done)
{
	double t0, t;
	long k;

	if (op->reset)
		op->reset(op->ctx);
	t0 = bnn_bench_now(o->clock);
	for (k = 0; k < units; k++)
		op->run(op->ctx);
	while ((t = bnn_bench_now(o->clock) - t0) < o->min_time) {
		op->run(op->ctx);
		k++;
	}
	*done = k;
	return t / (double)k;
}

/* Time op: a warm-up, then o->repeats repeats; the median. */
static bench_result bench_measure(const bench_op *op, const bench_opts *o)
{
	double per[BENCH_MAX_REPEATS];
	long units = bench_warm_up(op, o);
	bench_result r;
	int i;

	for (i = 0; i < o->repeats; i++)
		per[i] = bench_repeat(op, units, o, &r.units);
	r.seconds = bench_median(per, o->repeats);
	return r;
}

/*
 * Time a against b with their repeats interleaved (a, b, a, b, ...), so
 * that both see the same machine when its load drifts (shared machines);
 * *ratio gets the median of the per-pair ratios t_b / t_a.
 */
static void bench_measure_pair(const bench_op *a, const bench_op *b, const bench_opts *o,
                               bench_result *ra, bench_result *rb, double *ratio)
{
	double pa[BENCH_MAX_REPEATS], pb[BENCH_MAX_REPEATS];
	double q[BENCH_MAX_REPEATS];
	long ua = bench_warm_up(a, o), ub = bench_warm_up(b, o);
	int i;

	for (i = 0; i < o->repeats; i++) {
		pa[i] = bench_repeat(a, ua, o, &ra->units);
		pb[i] = bench_repeat(b, ub, o, &rb->units);
		q[i] = pb[i] / pa[i];
	}
	ra->seconds = bench_median(pa, o->repeats);
	rb->seconds = bench_median(pb, o->repeats);
	*ratio = bench_median(q, o->repeats);
}

/* ---- training steps --------------------------------------------------- */

static void bench_net_reset(void *ctx)
{
	bench_net *b = ctx;
	size_t n = (size_t)b->m->nparams;

	memcpy(b->w, b->w0, n * sizeof *b->w);
	memset(b->am, 0, n * sizeof *b->am);
	memset(b->av, 0, n * sizeof *b->av);
	b->step = 0;
}

/* The arguments of a training pass of b's network on its batch, with its
 * gradient and random stream; callers add what their pass needs. */
static bnn_pass bench_net_pass_args(bench_net *b)
{
	bnn_pass p = { .w = b->w,
		       .x = b->x,
		       .y = b->y,
		       .batch = b->batch,
		       .ws = b->ws,
		       .grad = b->g,
		       .rng = &b->rng };
	return p;
}

/* The pass with the gradient (and sqgrad when asked for). */
static void bench_net_pass(void *ctx)
{
	bench_net *b = ctx;
	bnn_pass p = bench_net_pass_args(b);

	p.rng = NULL;
	p.sqgrad = b->with_sqgrad ? b->sq : NULL;
	bench_sink = b->m->pass(&p);
}

/* Adam alone, on whatever gradient the last pass left. */
static void bench_net_adam(void *ctx)
{
	bench_net *b = ctx;

	b->step++;
	bnn_adam_step(
	        &(bnn_adam_arrays){
	                .n = b->m->nparams, .w = b->w, .g = b->g, .m = b->am, .v = b->av },
	        1e-3f, b->step, &b->adam);
}

/* One training step: the pass, then Adam. */
static void bench_net_step(void *ctx)
{
	bench_net *b = ctx;

	b->with_sqgrad = 0;
	bench_net_pass(ctx);
	bench_net_adam(ctx);
}

/* The same step with sqgrad requested as well (VOGN's pass). */
static void bench_net_step_sqgrad(void *ctx)
{
	bench_net *b = ctx;

	b->with_sqgrad = 1;
	bench_net_pass(ctx);
	bench_net_adam(ctx);
}

/* Set up a training run of model m at this batch: He/Glorot-initialised
 * parameters, standard normal inputs, random labels (categorical) or
 * standard normal targets (gaussian). */
static void bench_net_init(bench_net *b, const bnn_model *m, const char *shape, long batch,
                           uint64_t seed)
{
	bnn_rng rng;
	size_t n = (size_t)m->nparams;
	long i;

	memset(b, 0, sizeof *b);
	b->m = m;
	b->shape = shape;
	b->batch = batch;
	b->adam = bnn_adam_defaults();
	b->w0 = bench_alloc(n);
	b->w = bench_alloc(n);
	b->g = bench_alloc(n);
	b->sq = bench_alloc(n);
	b->am = bench_alloc(n);
	b->av = bench_alloc(n);
	b->x = bench_alloc((size_t)(batch * m->inputs));
	b->y = bench_alloc((size_t)(batch * m->targets));
	b->ws = bench_alloc(m->workspace_floats(batch));
	b->sigma = bench_alloc(n);
	b->gs = bench_alloc(n);
	bnn_rng_seed(&rng, seed);
	bnn_params_init(m, b->w0, &rng);
	bnn_rng_normal(&rng, b->x, (size_t)(batch * m->inputs));
	if (m->likelihood == BNN_LIKELIHOOD_CATEGORICAL)
		for (i = 0; i < batch; i++)
			b->y[i] = (float)bnn_rng_below(&rng, (uint64_t)m->outputs);
	else
		bnn_rng_normal(&rng, b->y, (size_t)(batch * m->targets));
	for (i = 0; i < (long)n; i++)
		b->sigma[i] = 1e-3f; /* Bayes-by-Backprop's initial sigma0 */
	bnn_rng_seed(&b->rng, seed + 1);
	bench_net_reset(b);
}

static void bench_net_free(bench_net *b)
{
	free(b->w0);
	free(b->w);
	free(b->g);
	free(b->sq);
	free(b->am);
	free(b->av);
	free(b->x);
	free(b->y);
	free(b->ws);
	free(b->sigma);
	free(b->gs);
}

/*
 * The floating-point operations of the matrix products of one training
 * step: per dense layer 2·B·in·out for the forward product and as many for
 * dW; dX as well except for a layer reading the model's input (the
 * generated code skips the input's delta).  These networks are chains, so
 * that is the first layer.  A conv2d layer counts 2·B·F·K·P per product
 * (its weight is [F][C][KH][KW], K = C·KH·KW, and P = out_features / F).
 * A per_step dense layer counts its T rows per example, an attention layer
 * its projections and per head its scores and A·V; the norms and
 * embeddings have no product.
 */
static double bench_net_gemm_flops(const bench_net *b)
{
	double f = 0;
	int l;

	for (l = 0; l < b->m->nlayers; l++) {
		const bnn_layer *ly = &b->m->layers[l];
		double mn =
		        2.0 * (double)b->batch * (double)ly->in_features * (double)ly->out_features;
		if (!strcmp(ly->op, "conv2d")) {
			const bnn_tensor *t = &b->m->tensors[ly->first_tensor];
			mn = 2.0 * (double)b->batch * (double)ly->out_features *
			     (double)(t->shape[1] * t->shape[2] * t->shape[3]);
		}
		if (!strcmp(ly->op, "dense")) {
			/* a per_step layer: [T, F] into [T, units], T rows per
			 * example (a weight [units, F]); 1 row otherwise */
			const bnn_tensor *t = &b->m->tensors[ly->first_tensor];
			if (t->rank == 2 && ly->in_features % t->shape[1] == 0 &&
			    ly->out_features % t->shape[0] == 0 &&
			    ly->in_features / t->shape[1] == ly->out_features / t->shape[0])
				mn = 2.0 * (double)b->batch * (double)ly->in_features *
				     (double)t->shape[0];
		}
		if (!strcmp(ly->op, "batchnorm") || !strcmp(ly->op, "layernorm") ||
		    !strcmp(ly->op, "groupnorm") || !strcmp(ly->op, "embedding"))
			mn = 0; /* no product */
		if (!strcmp(ly->op, "attention")) {
			/* in_proj [3D, F] and out_proj [D, D] over B·T rows, and per
			 * head the scores and A·V, 2·B·T²·D each */
			const bnn_tensor *t = &b->m->tensors[ly->first_tensor];
			double d = (double)t->shape[0] / 3, nf = (double)t->shape[1];
			double rows = (double)b->batch * (double)ly->in_features / nf;
			mn = 2.0 * rows * (3 * d * nf + d * d) +
			     4.0 * rows * ((double)ly->in_features / nf) * d;
		}
		if (!strcmp(ly->op, "gru")) {
			/* 2·B·T·3U·(F + U) per pass over the steps; the state's delta
			 * goes back through W_hh even without the input's */
			const bnn_tensor *t = &b->m->tensors[ly->first_tensor];
			double bt3u = 2.0 * (double)b->batch *
			              (double)(ly->in_features / t->shape[1]) * (double)t->shape[0];
			mn = bt3u * (double)(t->shape[1] + ly->out_features);
			if (l == 0)
				f += bt3u * (double)ly->out_features;
		}
		f += (l == 0 ? 2 : 3) * mn;
	}
	return f;
}

/* Time the Adam step of one network; print adam_step and step_parts.
 * Returns the seconds per step. */
static double bench_adam(bench_net *b, const bench_opts *o, double peak)
{
	bench_op step = { bench_net_step, bench_net_reset, b };
	bench_op pass = { bench_net_pass, bench_net_reset, b };
	bench_op adam = { bench_net_adam, bench_net_reset, b };
	bench_result rs, rp, ra;
	double gf = bench_net_gemm_flops(b) * 1e-9;

	rs = bench_measure(&step, o);
	printf("{\"bench\":\"adam_step\",\"impl\":\"bnnc\",\"net\":\"%s\","
	       "\"batch\":%ld,\"ms_per_step\":%.4f,\"steps_per_s\":%.1f,"
	       "\"examples_per_s\":%.0f,\"gemm_gflop_per_step\":%.4f,"
	       "\"gflops\":%.2f,\"fraction_of_peak\":%.3f,\"repeats\":%d,"
	       "\"steps_per_repeat\":%ld}\n",
	       b->shape, b->batch, 1e3 * rs.seconds, 1 / rs.seconds, (double)b->batch / rs.seconds,
	       gf, gf / rs.seconds, gf / rs.seconds / peak, o->repeats, rs.units);
	fflush(stdout);
	b->with_sqgrad = 0;
	rp = bench_measure(&pass, o);
	bench_net_pass(b); /* a gradient for Adam to apply */
	ra = bench_measure(&adam, o);
	printf("{\"bench\":\"step_parts\",\"impl\":\"bnnc\",\"net\":\"%s\","
	       "\"batch\":%ld,\"pass_ms\":%.4f,\"adam_ms\":%.4f,"
	       "\"nparams\":%ld,\"adam_ns_per_param\":%.3f}\n",
	       b->shape, b->batch, 1e3 * rp.seconds, 1e3 * ra.seconds, b->m->nparams,
	       1e9 * ra.seconds / (double)b->m->nparams);
	fflush(stdout);
	return rs.seconds;
}

/*
 * Time the step with sqgrad against the plain step, their repeats
 * interleaved, and print the ratio.  The two ops share one training run;
 * the reset before every repeat makes that harmless.
 */
static void bench_sqgrad(bench_net *b, const bench_opts *o)
{
	bench_op plain = { bench_net_step, bench_net_reset, b };
	bench_op with = { bench_net_step_sqgrad, bench_net_reset, b };
	bench_result rp, rw;
	double ratio;

	bench_measure_pair(&plain, &with, o, &rp, &rw, &ratio);
	printf("{\"bench\":\"sqgrad_overhead\",\"impl\":\"bnnc\",\"net\":\"%s\","
	       "\"batch\":%ld,\"ms_per_step\":%.4f,\"plain_ms_per_step\":%.4f,"
	       "\"ratio\":%.3f}\n",
	       b->shape, b->batch, 1e3 * rw.seconds, 1e3 * rp.seconds, ratio);
	fflush(stdout);
}

/* ---- the trainer's step, per optimizer ---------------------------------- */

/*
 * What a user runs is bnn_train, so that is what is timed: one epoch of
 * the real trainer (gathering each shuffled minibatch, the schedule, the
 * Monte-Carlo sample, the passes, the update tensor by tensor, the
 * epoch's snapshot and, for badam, its sigma) on a synthetic in-memory
 * data set of `steps` full batches (standard normal inputs, uniformly
 * random labels), divided by the number of steps.  Every run starts from
 * a fresh state and trains two epochs; the callback reads the clock at
 * the end of each, and only the second epoch counts (the first pays for
 * the page faults of fresh buffers and for VOGN's initial scale).  The
 * repeats go round the optimizers (adam, ivon, ..., adam, ivon, ...), so
 * all see the same machine when its load drifts, and each ratio to Adam
 * is the median of the ratios within a round.
 */

/* The optimizers timed through bnn_train; the first is the reference. */
struct bench_optim {
	const char *name;
	int optimizer; /* enum bnn_optimizer */
	int meanfield; /* trains the suite's meanfield model (else its point one) */
	int lrt;       /* bbb: the local reparameterisation (option lrt) */
};
static const struct bench_optim bench_optims[] = {
	{ "adam", BNN_OPT_ADAM, 0, 0 },
	{ "ivon", BNN_OPT_IVON, 1, 0 },
	{ "vogn", BNN_OPT_VOGN, 1, 0 },
	{ "bbb", BNN_OPT_BBB, 1, 0 },     /* weight samples, the default */
	{ "bbb_lrt", BNN_OPT_BBB, 1, 1 }, /* --set lrt=1 */
	{ "badam", BNN_OPT_BADAM, 1, 0 },
};
static const struct bench_optim bench_lenet_optims[] = {
	{ "adam", BNN_OPT_ADAM, 0, 0 },
	{ "ivon", BNN_OPT_IVON, 1, 0 },
	{ "vogn", BNN_OPT_VOGN, 1, 0 },
};
#define BENCH_NOPTIMS ((int)(sizeof bench_optims / sizeof bench_optims[0]))

/* A network the trainer's step is timed on, and with which optimizers. */
typedef struct bench_suite {
	const char *bench;                /* the JSON lines' "bench": "train_step" */
	const char *net;                  /* their "net": "784-512-512-10" */
	const bnn_model *point, *mf;      /* the point and the meanfield model */
	const struct bench_optim *optims; /* the first is Adam, the reference */
	int noptims;                      /* at most BENCH_NOPTIMS */
} bench_suite;

static const bench_suite bench_mlp_suite = { "train_step",         "784-512-512-10",
	                                     &fashion_point_model, &fashion_mf_model,
	                                     bench_optims,         BENCH_NOPTIMS };
static const bench_suite bench_lenet_suite = {
	"lenet_step",         "lenet",
	&fashion_lenet_model, &fashion_lenet_bayes_model,
	bench_lenet_optims,   (int)(sizeof bench_lenet_optims / sizeof bench_lenet_optims[0])
};

/* The clock at the end of each of the two epochs of a run. */
typedef struct bench_epochs {
	int clock;     /* enum bnn_bench_clock */
	int n;         /* epochs ended so far */
	double end[2]; /* the clock when each ended */
} bench_epochs;

/* bnn_train's callback: note the end of an epoch (final reports only). */
static int bench_on_epoch(const bnn_epoch_report *r, void *ctx)
{
	bench_epochs *e = ctx;

	if (r->final && e->n < 2)
		e->end[e->n++] = bnn_bench_now(e->clock);
	return 0;
}

/* n examples for model m: standard normal inputs, labels uniform in
 * [0, outputs).  The arrays are bench_alloc's; free them with free(). */
static void bench_data_init(bnn_dataset *ds, const bnn_model *m, long n, uint64_t seed)
{
	bnn_rng rng;
	long i;

	memset(ds, 0, sizeof *ds);
	ds->n = n;
	ds->features = m->inputs;
	ds->rank = 1;
	ds->shape[0] = m->inputs;
	ds->targets = 1;
	ds->x = bench_alloc((size_t)(n * m->inputs));
	ds->y = bench_alloc((size_t)n);
	bnn_rng_seed(&rng, seed);
	bnn_rng_normal(&rng, ds->x, (size_t)(n * m->inputs));
	for (i = 0; i < n; i++)
		ds->y[i] = (float)bnn_rng_below(&rng, (uint64_t)m->outputs);
}

/* One run of two epochs from a fresh state; the seconds of the second.
 * Exits on failure (a diverging benchmark times nothing useful). */
static double bench_train_once(const bench_suite *su, const struct bench_optim *op,
                               const bnn_dataset *ds, const bnn_train_options *to, int clock)
{
	const bnn_model *m = op->meanfield ? su->mf : su->point;
	bench_epochs e = { clock, 0, { 0, 0 } };
	bnn_state st;
	bnn_err err;

	if (bnn_state_init(&st, m, 1, &err) ||
	    bnn_train(&st, &(bnn_train_io){ .train = ds, .on_epoch = bench_on_epoch, .ctx = &e },
	              to, &err)) {
		fprintf(stderr, "bench: training %s with %s: %s\n", m->name, op->name, err.message);
		exit(1);
	}
	bnn_state_free(&st);
	if (e.n != 2) {
		fprintf(stderr, "bench: %s: %d epochs reported, not 2\n", op->name, e.n);
		exit(1);
	}
	return e.end[1] - e.end[0];
}

/* Time every optimizer of the suite at this batch; print its lines
 * (train_step for the MLP). */
static void bench_train(const bench_suite *su, long batch, long steps, const bench_opts *o)
{
	double sec[BENCH_NOPTIMS][BENCH_MAX_REPEATS];
	double q[BENCH_NOPTIMS][BENCH_MAX_REPEATS];
	bnn_train_options to;
	bnn_dataset ds;
	int i, r;

	bench_data_init(&ds, su->point, batch * steps, 5);
	for (r = 0; r < o->repeats; r++)
		for (i = 0; i < su->noptims; i++) {
			to = bnn_train_defaults();
			to.optimizer = su->optims[i].optimizer;
			to.epochs = 2;
			to.batch = batch;
			to.mc = 1;
			to.lrt = su->optims[i].lrt;
			to.threads = 1;
			sec[i][r] = bench_train_once(su, &su->optims[i], &ds, &to, o->clock) /
			            (double)steps;
		}
	for (i = 0; i < su->noptims; i++) {
		double ms, lo, hi, ratio;
		for (r = 0; r < o->repeats; r++)
			q[i][r] = sec[i][r] / sec[0][r];
		ms = 1e3 * bench_median(sec[i], o->repeats);
		ratio = bench_median(q[i], o->repeats); /* sorts q[i] */
		lo = q[i][0];
		hi = q[i][o->repeats - 1];
		printf("{\"bench\":\"%s\",\"impl\":\"bnnc\","
		       "\"net\":\"%s\",\"batch\":%ld,"
		       "\"optimizer\":\"%s\",\"model\":\"%s\",\"mc\":1,"
		       "\"ms_per_step\":%.4f,\"over_adam\":%.3f,"
		       "\"over_adam_min\":%.3f,\"over_adam_max\":%.3f,"
		       "\"examples_per_s\":%.0f,"
		       "\"steps_per_epoch\":%ld,\"repeats\":%d}\n",
		       su->bench, su->net, batch, su->optims[i].name,
		       (su->optims[i].meanfield ? su->mf : su->point)->name, ms, ratio, lo, hi,
		       1e3 * (double)batch / ms, steps, o->repeats);
	}
	fflush(stdout);
	free(ds.x);
	free(ds.y);
}

/* ---- the parts of a variational step ------------------------------------ */

/* The pass of fashion_mf at the mean (ivon's and badam's pass). */
static void bench_vi_pass(void *ctx)
{
	bench_net *b = ctx;
	bnn_pass p = bench_net_pass_args(b);

	bench_sink = b->m->pass(&p);
}

/* With the squared per-example gradients (vogn's pass). */
static void bench_vi_pass_sqgrad(void *ctx)
{
	bench_net *b = ctx;
	bnn_pass p = bench_net_pass_args(b);

	p.sqgrad = b->sq;
	bench_sink = b->m->pass(&p);
}

/* With the local reparameterisation and the gradient of sigma (bbb's). */
static void bench_vi_pass_lrt(void *ctx)
{
	bench_net *b = ctx;
	bnn_pass p = bench_net_pass_args(b);

	p.sigma = b->sigma;
	p.grad_sigma = b->gs;
	bench_sink = b->m->pass(&p);
}

/* Time fashion_mf's three kinds of pass at this batch; print vi_parts. */
static void bench_vi_passes(long batch, const bench_opts *o)
{
	bench_net b;
	bench_op plain = { bench_vi_pass, NULL, &b };
	bench_op sq = { bench_vi_pass_sqgrad, NULL, &b };
	bench_op lrt = { bench_vi_pass_lrt, NULL, &b };
	bench_result rp, rs, rl;

	bench_net_init(&b, &fashion_mf_model, "784-512-512-10", batch, 1);
	rp = bench_measure(&plain, o);
	rs = bench_measure(&sq, o);
	rl = bench_measure(&lrt, o);
	printf("{\"bench\":\"vi_parts\",\"impl\":\"bnnc\","
	       "\"net\":\"784-512-512-10\",\"batch\":%ld,\"pass_ms\":%.4f,"
	       "\"pass_sqgrad_ms\":%.4f,\"pass_lrt_ms\":%.4f}\n",
	       batch, 1e3 * rp.seconds, 1e3 * rs.seconds, 1e3 * rl.seconds);
	fflush(stdout);
	bench_net_free(&b);
}

/* The arrays of the update kernels, over all of fashion_mf's parameters. */
typedef struct bench_vi {
	long n;
	long step;            /* t of the kernels that count steps */
	float *mu0, *mu;      /* initial and current means */
	float *sigma, *rho;   /* posterior sd, and BBB's rho = softplus^-1(sd) */
	float *eps, *theta;   /* a sample's noise and the sample */
	float *noise;         /* standard normal variates: the next sample's */
	float *g, *gs, *hh;   /* gradients of mu and sigma, VOGN's h-hat */
	float *a, *b, *c, *d; /* optimizer state (m, v / g, h / m, s ...) */
	bnn_rng rng;
	bnn_adam_params adam;
	bnn_ivon_params ivon;
	bnn_vogn_params vogn;
	bnn_bbb_params bbb;
} bench_vi;

/* Back to the same starting point before every repeat (not timed). */
static void bench_vi_reset(void *ctx)
{
	bench_vi *v = ctx;
	float rho = (float)bnn_softplus_inverse(0.01);
	long i;

	memcpy(v->mu, v->mu0, (size_t)v->n * sizeof *v->mu);
	for (i = 0; i < v->n; i++) {
		v->sigma[i] = 0.01f;
		v->rho[i] = rho;
		v->a[i] = 0;
		v->b[i] = 0.1f; /* IVON's h0; a valid v, s as well */
		v->c[i] = 0;
		v->d[i] = 0;
	}
	v->step = 0;
}

static void bench_vi_sample(void *ctx)
{
	bench_vi *v = ctx;

	bnn_posterior_sample(v->n, v->mu, v->sigma, v->eps, v->theta, &v->rng);
}

static void bench_vi_sample_noeps(void *ctx)
{
	bench_vi *v = ctx;

	bnn_posterior_sample(v->n, v->mu, v->sigma, NULL, v->theta, &v->rng);
}

static void bench_vi_normal(void *ctx)
{
	bench_vi *v = ctx;

	bnn_rng_normal(&v->rng, v->eps, (size_t)v->n);
}

static void bench_vi_adam(void *ctx)
{
	bench_vi *v = ctx;

	bnn_adam_step(&(bnn_adam_arrays){ .n = v->n, .w = v->mu, .g = v->g, .m = v->a, .v = v->b },
	              1e-3f, ++v->step, &v->adam);
}

/* IVON's work after the pass: h-hat (Alg. 1 line 3), then lines 4-8. */
static void bench_vi_ivon(void *ctx)
{
	bench_vi *v = ctx;

	bnn_ivon_hess_acc(v->n, v->g, v->eps, v->sigma, v->hh, 1.0f, 0);
	bnn_ivon_step(&(bnn_ivon_arrays){ .n = v->n,
	                                  .mu = v->mu,
	                                  .ghat = v->g,
	                                  .hhat = v->hh,
	                                  .g = v->a,
	                                  .h = v->b,
	                                  .sigma = v->sigma },
	              0.01f, ++v->step, &v->ivon);
}

static void bench_vi_vogn(void *ctx)
{
	bench_vi *v = ctx;

	bnn_vogn_step(&(bnn_vogn_arrays){ .n = v->n,
	                                  .mu = v->mu,
	                                  .ghat = v->g,
	                                  .hhat = v->gs,
	                                  .m = v->a,
	                                  .s = v->b,
	                                  .sigma = v->sigma },
	              1e-3f, &v->vogn);
}

static void bench_vi_bbb(void *ctx)
{
	bench_vi *v = ctx;

	bnn_bbb_step(&(bnn_bbb_arrays){ .n = v->n,
	                                .mu = v->mu,
	                                .rho = v->rho,
	                                .sigma = v->sigma,
	                                .g_mu = v->g,
	                                .g_sigma = v->gs,
	                                .m_mu = v->a,
	                                .v_mu = v->b,
	                                .m_rho = v->c,
	                                .v_rho = v->d },
	             1e-3f, ++v->step, &v->bbb);
}

/* BBB with one weight sample per step (lrt = 0): the update and the next
 * sample, block by block as the trainer's update_and_sample calls it
 * (the noise drawn beforehand, not timed). */
static void bench_vi_bbb_sample(void *ctx)
{
	bench_vi *v = ctx;
	long i, len;

	++v->step;
	for (i = 0; i < v->n; i += BNN_SAMPLE_BLOCK) {
		len = v->n - i < BNN_SAMPLE_BLOCK ? v->n - i : BNN_SAMPLE_BLOCK;
		bnn_bbb_step_sample(&(bnn_bbb_arrays){ .n = len,
		                                       .mu = v->mu + i,
		                                       .rho = v->rho + i,
		                                       .g_mu = v->g + i,
		                                       .eps = v->eps + i,
		                                       .m_mu = v->a + i,
		                                       .v_mu = v->b + i,
		                                       .m_rho = v->c + i,
		                                       .v_rho = v->d + i,
		                                       .theta = v->theta + i,
		                                       .noise = v->noise + i },
		                    1e-3f, v->step, &v->bbb);
	}
}

/*
 * Time the sampler and the update kernels over all of fashion_mf's
 * parameters in one call each (the trainer calls them once per tensor,
 * six tensors: the same loops); print posterior_sample and vi_kernels.
 */
static void bench_vi_kernels(const bench_opts *o)
{
	static const struct {
		const char *name;
		void (*run)(void *);
	} ops[] = {
		{ "sample", bench_vi_sample },     { "sample_noeps", bench_vi_sample_noeps },
		{ "rng_normal", bench_vi_normal }, { "adam", bench_vi_adam },
		{ "ivon", bench_vi_ivon },         { "vogn", bench_vi_vogn },
		{ "bbb", bench_vi_bbb },           { "bbb_sample", bench_vi_bbb_sample },
	};
	double sec[sizeof ops / sizeof ops[0]];
	double nsw;
	bench_vi v;
	size_t n = (size_t)fashion_mf_model.nparams, i;

	memset(&v, 0, sizeof v);
	v.n = (long)n;
	v.mu0 = bench_alloc(n);
	v.mu = bench_alloc(n);
	v.sigma = bench_alloc(n);
	v.rho = bench_alloc(n);
	v.eps = bench_alloc(n);
	v.theta = bench_alloc(n);
	v.noise = bench_alloc(n);
	v.g = bench_alloc(n);
	v.gs = bench_alloc(n);
	v.hh = bench_alloc(n);
	v.a = bench_alloc(n);
	v.b = bench_alloc(n);
	v.c = bench_alloc(n);
	v.d = bench_alloc(n);
	bnn_rng_seed(&v.rng, 7);
	bnn_params_init(&fashion_mf_model, v.mu0, &v.rng);
	bnn_rng_normal(&v.rng, v.g, n);
	for (i = 0; i < n; i++) {
		v.g[i] *= 1e-3f;
		v.gs[i] = v.g[i] * v.g[i]; /* VOGN's h-hat: >= 0 */
	}
	bnn_rng_normal(&v.rng, v.noise, n); /* after g: the others' inputs kept */
	v.adam = bnn_adam_defaults();
	v.ivon = bnn_ivon_defaults();
	v.ivon.delta = 25.0 / 60000;
	v.ivon.ess = 60000;
	v.vogn = bnn_vogn_defaults();
	v.vogn.delta = 25;
	v.vogn.n_data = 60000;
	v.bbb = bnn_bbb_defaults();
	v.bbb.prior_precision = 25;
	v.bbb.n_data = 60000;
	for (i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		bench_op op = { ops[i].run, bench_vi_reset, &v };
		sec[i] = bench_measure(&op, o).seconds;
	}
	nsw = 1e9 / (double)n;
	printf("{\"bench\":\"posterior_sample\",\"impl\":\"bnnc\","
	       "\"n\":%zu,\"ns_per_weight\":%.3f,\"ms\":%.4f,"
	       "\"noeps_ns_per_weight\":%.3f,\"rng_normal_ns_per_value\":%.3f}\n",
	       n, nsw * sec[0], 1e3 * sec[0], nsw * sec[1], nsw * sec[2]);
	printf("{\"bench\":\"vi_kernels\",\"impl\":\"bnnc\",\"n\":%zu", n);
	for (i = 3; i < sizeof ops / sizeof ops[0]; i++)
		printf(",\"%s_ms\":%.4f,\"%s_ns_per_param\":%.3f", ops[i].name, 1e3 * sec[i],
		       ops[i].name, nsw * sec[i]);
	printf("}\n");
	fflush(stdout);
	free(v.mu0);
	free(v.mu);
	free(v.sigma);
	free(v.rho);
	free(v.eps);
	free(v.theta);
	free(v.noise);
	free(v.g);
	free(v.gs);
	free(v.hh);
	free(v.a);
	free(v.b);
	free(v.c);
	free(v.d);
}

/* Steps per timed epoch: o->train_steps, or enough for Adam's epoch to
 * last o->min_time at adam_seconds per step (at least 8), or 64 when
 * Adam's step was not measured. */
static long bench_train_steps(const bench_opts *o, double adam_seconds)
{
	double s;

	if (o->train_steps > 0)
		return o->train_steps;
	if (!(adam_seconds > 0))
		return 64; /* Adam's step not measured (--only without step) */
	s = ceil(o->min_time / adam_seconds);
	return s < 8 ? 8 : s > 100000 ? 100000 : (long)s;
}

/* ---- the 784->512 layer's products -------------------------------------- */

/* One product, by bnn_gen_gemm (as the generated code) or cblas_sgemm. */
static void bench_gemm_run(const bench_gemm *q, int ta, int tb, long m, long n, long k,
                           const float *a, long lda, const float *b, long ldb, float *c, long ldc)
{
	if (q->openblas)
		cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
		            tb ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, a,
		            (int)lda, b, (int)ldb, 0.0f, c, (int)ldc);
	else
		bnn_gen_gemm(ta, tb, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc);
}

/* Y = X·Wᵀ, as bnn_gen_dense_forward. */
static void bench_gemm_forward(void *ctx)
{
	bench_gemm *q = ctx;

	bench_gemm_run(q, 0, 1, q->b, q->n, q->k, q->x, q->k, q->w, q->k, q->y, q->n);
}

/* dW = Gᵀ·X, as bnn_gen_dense_backward_params. */
static void bench_gemm_dw(void *ctx)
{
	bench_gemm *q = ctx;

	bench_gemm_run(q, 1, 0, q->n, q->k, q->b, q->g, q->n, q->x, q->k, q->dw, q->k);
}

/* dX = G·W, as bnn_gen_dense_backward_input. */
static void bench_gemm_dx(void *ctx)
{
	bench_gemm *q = ctx;

	bench_gemm_run(q, 0, 0, q->b, q->k, q->n, q->g, q->n, q->w, q->k, q->dx, q->k);
}

/* The three, as one training step of the layer runs them. */
static void bench_gemm_all(void *ctx)
{
	bench_gemm_forward(ctx);
	bench_gemm_dw(ctx);
	bench_gemm_dx(ctx);
}

/* Time the layer's products on random operands, through bnn_gen_gemm and
 * through OpenBLAS; print gemm_784x512 lines. */
static void bench_gemms(const bench_opts *o, double peak)
{
	static const struct {
		const char *name;
		void (*run)(void *);
		int products;
	} ops[] = {
		{ "forward", bench_gemm_forward, 1 },
		{ "dW", bench_gemm_dw, 1 },
		{ "dX", bench_gemm_dx, 1 },
		{ "all3", bench_gemm_all, 3 },
	};
	static const char *const impls[] = { "bnnc", "openblas" };
	bench_gemm q = { 0, 128, 784, 512, NULL, NULL, NULL, NULL, NULL, NULL };
	bnn_rng rng;
	size_t i;
	int impl;

	q.x = bench_alloc((size_t)(q.b * q.k));
	q.w = bench_alloc((size_t)(q.n * q.k));
	q.g = bench_alloc((size_t)(q.b * q.n));
	q.y = bench_alloc((size_t)(q.b * q.n));
	q.dw = bench_alloc((size_t)(q.n * q.k));
	q.dx = bench_alloc((size_t)(q.b * q.k));
	bnn_rng_seed(&rng, 3);
	bnn_rng_normal(&rng, q.x, (size_t)(q.b * q.k));
	bnn_rng_normal(&rng, q.w, (size_t)(q.n * q.k));
	bnn_rng_normal(&rng, q.g, (size_t)(q.b * q.n));
	for (impl = 0; impl < 2; impl++)
		for (i = 0; i < sizeof ops / sizeof ops[0]; i++) {
			bench_op op = { ops[i].run, NULL, &q };
			bench_result r;
			double gf = 2e-9 * ops[i].products * (double)(q.b * q.k * q.n);

			q.openblas = impl;
			r = bench_measure(&op, o);
			printf("{\"bench\":\"gemm_784x512\",\"impl\":\"%s\","
			       "\"op\":\"%s\",\"batch\":%ld,\"ms\":%.4f,\"gflops\":%.2f,"
			       "\"fraction_of_peak\":%.3f}\n",
			       impls[impl], ops[i].name, q.b, 1e3 * r.seconds, gf / r.seconds,
			       gf / r.seconds / peak);
			fflush(stdout);
		}
	free(q.x);
	free(q.w);
	free(q.g);
	free(q.y);
	free(q.dw);
	free(q.dx);
}

/* ---- main ------------------------------------------------------------------ */

/* The CPU's model name (the first "model name" of /proc/cpuinfo) into buf,
 * or "unknown": every speed figure depends on it, and the summary names
 * it. */
static void bench_cpu_model(char *buf, size_t n)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(buf, n, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		char *colon = strchr(line, ':');
		if (strncmp(line, "model name", 10) || !colon)
			continue;
		colon += 1 + (colon[1] == ' ');
		colon[strcspn(colon, "\n")] = '\0';
		snprintf(buf, n, "%s", colon);
		break;
	}
	fclose(f);
}

/* Print s as a JSON string (it comes from OpenBLAS: escape to be safe). */
static void bench_json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* Measure and print the FMA peak, with the widest vectors and narrower. */
static bnn_bench_peak bench_peak(const bench_opts *o)
{
	bnn_bench_peak pk = bnn_bench_fma_peak(0, o->repeats, o->min_time, o->clock);
	int lanes;

	printf("{\"bench\":\"fma_peak\",\"gflops\":%.2f,\"best_gflops\":%.2f,"
	       "\"lanes\":%d,\"chains\":%d,\"repeats\":%d",
	       pk.gflops, pk.best, pk.lanes, pk.chains, pk.repeats);
	for (lanes = pk.lanes / 2; lanes >= 4; lanes /= 2) {
		bnn_bench_peak q = bnn_bench_fma_peak(lanes, o->repeats, o->min_time, o->clock);
		printf(",\"gflops_%dbit\":%.2f", 32 * lanes, q.gflops);
	}
	printf("}\n");
	fflush(stdout);
	return pk;
}

/* ---- convolutions ---------------------------------------------------------- */

/* The layers' shapes, static consts as generated code declares them (so
 * that the inlined kernels see constants), with the group of examples
 * bnnc picks (gen/layer_conv.c).  conv3x3: 32 to 32 channels on 28x28
 * maps, stride 1, padding 1, groups of 4 (the most whose columns,
 * K·g·P = 288·4·784 floats, stay within its 2^20).  conv1d: issue 23's
 * layer, 64 to 64 channels on signals of length 256, kernel 5, padding 2,
 * as bnnc declares it: a [64, 1, 256] map under a 1x5 window, groups of
 * 1 (K·P = 320·256 floats already pass CONV_GROUP_FLOATS). */
static const bnn_gen_conv bench_conv_shape = { 32, 28, 28, 32, 3, 3, 1, 1, 1, 1, 1, 1, 28, 28, 4 };
static const bnn_gen_conv bench_conv1d_shape = {
	64, 1, 256, 64, 1, 5, 1, 1, 0, 2, 1, 1, 1, 256, 1
};

/* A convolution's arrays (batch × maps, weights, the generated code's
 * two scratch blocks); s is one of the shapes above. */
typedef struct bench_conv {
	const bnn_gen_conv *s;
	long b;
	float *x, *w, *bias, *g, *y, *dx, *dw, *db, *sw, *sb, *col, *tmp;
} bench_conv;

/* The timed operations of the layer of shape SHAPE, each a function of
 * its own so that the kernels are inlined with SHAPE's constants:
 * forward, dW with db, the same with the squared per-example gradients,
 * dX, and the three in a row. */
#define BENCH_CONV_OPS(tag, shape)                                                                 \
	static void bench_##tag##_forward(void *ctx)                                               \
	{                                                                                          \
		bench_conv *q = ctx;                                                               \
		bnn_gen_conv_forward(&shape, q->b, q->x, q->w, q->bias, q->col, q->tmp, q->y);     \
	}                                                                                          \
	static void bench_##tag##_dw(void *ctx)                                                    \
	{                                                                                          \
		bench_conv *q = ctx;                                                               \
		bnn_gen_conv_backward_params(&shape, q->b, q->x, q->g, q->dw, q->db, NULL, NULL,   \
		                             q->col, q->tmp);                                      \
	}                                                                                          \
	static void bench_##tag##_dw_sq(void *ctx)                                                 \
	{                                                                                          \
		bench_conv *q = ctx;                                                               \
		bnn_gen_conv_backward_params(&shape, q->b, q->x, q->g, q->dw, q->db, q->sw, q->sb, \
		                             q->col, q->tmp);                                      \
	}                                                                                          \
	static void bench_##tag##_dx(void *ctx)                                                    \
	{                                                                                          \
		bench_conv *q = ctx;                                                               \
		bnn_gen_conv_backward_input(&shape, q->b, q->g, q->w, q->dx, q->col, q->tmp, 0);   \
	}                                                                                          \
	static void bench_##tag##_all(void *ctx)                                                   \
	{                                                                                          \
		bench_##tag##_forward(ctx);                                                        \
		bench_##tag##_dw(ctx);                                                             \
		bench_##tag##_dx(ctx);                                                             \
	}
BENCH_CONV_OPS(conv, bench_conv_shape)
BENCH_CONV_OPS(conv1d, bench_conv1d_shape)

/* One timed operation of a convolution and its number of products. */
typedef struct bench_conv_op {
	const char *name;
	void (*run)(void *);
	int products;
} bench_conv_op;

/* Time the operations OPS (5 of them) of the layer of shape S at batch B;
 * print their rates against the peak, as JSON lines that start with
 * HEAD (the bench's name and the layer's figures). */
static void bench_conv_layer(const bench_opts *o, double peak, const bnn_gen_conv *s, long b,
                             const bench_conv_op ops[5], const char *head)
{
	bench_conv q;
	long k, p, in, out;
	bnn_rng rng;
	size_t i;

	memset(&q, 0, sizeof q);
	q.s = s;
	q.b = b;
	k = q.s->c * q.s->kh * q.s->kw;
	p = q.s->oh * q.s->ow;
	in = q.s->c * q.s->h * q.s->w;
	out = q.s->f * p;
	q.x = bench_alloc((size_t)(q.b * in));
	q.dx = bench_alloc((size_t)(q.b * in));
	q.g = bench_alloc((size_t)(q.b * out));
	q.y = bench_alloc((size_t)(q.b * out));
	q.w = bench_alloc((size_t)(q.s->f * k));
	q.dw = bench_alloc((size_t)(q.s->f * k));
	q.sw = bench_alloc((size_t)(q.s->f * k));
	q.tmp = bench_alloc((size_t)bnn_gen_conv_tmp_floats(q.s));
	q.bias = bench_alloc((size_t)q.s->f);
	q.db = bench_alloc((size_t)q.s->f);
	q.sb = bench_alloc((size_t)q.s->f);
	q.col = bench_alloc((size_t)bnn_gen_conv_col_floats(q.s));
	bnn_rng_seed(&rng, 4);
	bnn_rng_normal(&rng, q.x, (size_t)(q.b * in));
	bnn_rng_normal(&rng, q.g, (size_t)(q.b * out));
	bnn_rng_normal(&rng, q.w, (size_t)(q.s->f * k));
	bnn_rng_normal(&rng, q.bias, (size_t)q.s->f);
	for (i = 0; i < 5; i++) {
		bench_op op = { ops[i].run, NULL, &q };
		bench_result r = bench_measure(&op, o);
		double gf = 2e-9 * ops[i].products * (double)(q.s->f * k * p * q.b);

		printf("%s,\"op\":\"%s\",\"batch\":%ld,\"ms\":%.4f,\"gflops\":%.2f,"
		       "\"fraction_of_peak\":%.3f}\n",
		       head, ops[i].name, q.b, 1e3 * r.seconds, gf / r.seconds,
		       gf / r.seconds / peak);
		fflush(stdout);
	}
	free(q.x);
	free(q.dx);
	free(q.g);
	free(q.y);
	free(q.w);
	free(q.dw);
	free(q.sw);
	free(q.tmp);
	free(q.bias);
	free(q.db);
	free(q.sb);
	free(q.col);
}

/* Time the conv3x3 layer at batch 128 and the conv1d layer at batch 64;
 * dW_sqgrad's rate counts dW's multiply-adds only. */
static void bench_convs(const bench_opts *o, double peak)
{
	static const bench_conv_op conv3x3[5] = {
		{ "forward", bench_conv_forward, 1 }, { "dW", bench_conv_dw, 1 },
		{ "dW_sqgrad", bench_conv_dw_sq, 1 }, { "dX", bench_conv_dx, 1 },
		{ "all3", bench_conv_all, 3 },
	};
	static const bench_conv_op conv1d[5] = {
		{ "forward", bench_conv1d_forward, 1 }, { "dW", bench_conv1d_dw, 1 },
		{ "dW_sqgrad", bench_conv1d_dw_sq, 1 }, { "dX", bench_conv1d_dx, 1 },
		{ "all3", bench_conv1d_all, 3 },
	};

	bench_conv_layer(o, peak, &bench_conv_shape, 128, conv3x3,
	                 "{\"bench\":\"conv3x3\",\"impl\":\"bnnc\",\"channels\":32,\"size\":28");
	bench_conv_layer(o, peak, &bench_conv1d_shape, 64, conv1d,
	                 "{\"bench\":\"conv1d\",\"impl\":\"bnnc\",\"channels\":64,\"length\":256,"
	                 "\"kernel\":5");
}

/* ---- the fast Walsh-Hadamard transform ------------------------------------ */

/* Issue 6's target: µs per vector of length 1024 in a batch of 128. */
#define BENCH_FWHT_TARGET_US 0.4

/* A batch of vectors to transform in place, and the dense matrix H/√n
 * with an output batch for the GEMM doing the same product. */
typedef struct bench_fwht {
	long batch, n;
	float *x;     /* batch × n, transformed in place */
	float *h, *y; /* n × n orthonormal Hadamard matrix; batch × n */
} bench_fwht;

/* The orthonormal transform, as a WHVI layer calls it (norm-preserving,
 * so repeating it in place keeps the values in range). */
static void bench_fwht_lib(void *ctx)
{
	bench_fwht *f = ctx;

	if (bnn_fwht_batch(f->x, f->batch, f->n, BNN_FWHT_ORTHO, NULL)) {
		fprintf(stderr, "bench: bnn_fwht_batch failed\n");
		exit(1);
	}
}

/* The textbook radix-2 loop and the same scaling, vector by vector. */
static void bench_fwht_textbook(void *ctx)
{
	bench_fwht *f = ctx;
	float c = (float)(1.0 / sqrt((double)f->n));
	long b, h, i, j, n = f->n;

	for (b = 0; b < f->batch; b++) {
		float *x = f->x + b * n;

		for (h = 1; h < n; h *= 2)
			for (i = 0; i < n; i += 2 * h)
				for (j = i; j < i + h; j++) {
					float a = x[j], d = x[j + h];

					x[j] = a + d;
					x[j + h] = a - d;
				}
		for (i = 0; i < n; i++)
			x[i] *= c;
	}
}

/* Y = X·(H/√n)ᵀ: the dense product the transform replaces. */
static void bench_fwht_gemm(void *ctx)
{
	bench_fwht *f = ctx;

	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)f->batch, (int)f->n, (int)f->n,
	            1.0f, f->x, (int)f->n, f->h, (int)f->n, 0.0f, f->y, (int)f->n);
}

/* Time the transform against the target, the textbook loop and the GEMM
 * (each pair's repeats interleaved); print the fwht line. */
static void bench_fwhts(const bench_opts *o)
{
	bench_fwht f = { 128, 1024, NULL, NULL, NULL };
	bench_op lib = { bench_fwht_lib, NULL, &f };
	bench_op text = { bench_fwht_textbook, NULL, &f };
	bench_op gemm = { bench_fwht_gemm, NULL, &f };
	bench_result rl, rt, rl2, rg;
	double over_text, gemm_ratio, us, flops;
	bnn_rng rng;
	long i;

	f.x = bench_alloc((size_t)(f.batch * f.n));
	f.y = bench_alloc((size_t)(f.batch * f.n));
	f.h = bench_alloc((size_t)(f.n * f.n));
	/* Row i of H/√n is the transform of e_i (H is symmetric). */
	for (i = 0; i < f.n; i++) {
		f.h[i * f.n + i] = 1.0f;
		bnn_fwht_vector(f.h + i * f.n, f.n, BNN_FWHT_ORTHO, NULL);
	}
	bnn_rng_seed(&rng, 6);
	bnn_rng_normal(&rng, f.x, (size_t)(f.batch * f.n));
	bench_measure_pair(&lib, &text, o, &rl, &rt, &over_text);
	bench_measure_pair(&lib, &gemm, o, &rl2, &rg, &gemm_ratio);
	us = 1e6 * rl.seconds / (double)f.batch;
	/* n log2 n additions and subtractions, and n multiplications. */
	flops = (double)f.batch * (double)f.n * (log2((double)f.n) + 1);
	printf("{\"bench\":\"fwht\",\"impl\":\"bnnc\",\"n\":%ld,"
	       "\"batch\":%ld,\"norm\":\"ortho\",\"us_per_vector\":%.4f,"
	       "\"gflops\":%.2f,\"target_us\":%.1f,\"met\":%s,"
	       "\"textbook_us_per_vector\":%.4f,\"over_textbook\":%.2f,"
	       "\"gemm_us_per_vector\":%.4f,\"gemm_over_fwht\":%.2f,"
	       "\"repeats\":%d}\n",
	       f.n, f.batch, us, 1e-9 * flops / rl.seconds, BENCH_FWHT_TARGET_US,
	       us <= BENCH_FWHT_TARGET_US ? "true" : "false", 1e6 * rt.seconds / (double)f.batch,
	       over_text, 1e6 * rg.seconds / (double)f.batch, gemm_ratio, o->repeats);
	fflush(stdout);
	free(f.x);
	free(f.y);
	free(f.h);
}

/* ---- whvi: a WHVI layer step against a mean-field one ------------------- */

/* One-layer model's step: the generated pass with sampling and every
 * gradient, on a fixed random batch. */
typedef struct bench_layer {
	const bnn_model *m;
	long batch;
	float *w, *sigma, *x, *y, *ws, *grad, *gsig;
	bnn_rng rng;
} bench_layer;

static void bench_layer_step(void *ctx)
{
	bench_layer *l = ctx;
	bnn_pass p;

	memset(&p, 0, sizeof p);
	p.w = l->w;
	p.x = l->x;
	p.y = l->y;
	p.batch = l->batch;
	p.ws = l->ws;
	p.grad = l->grad;
	p.rng = &l->rng;
	p.sigma = l->sigma;
	p.grad_sigma = l->gsig;
	l->m->pass(&p);
}

/* meanfield: σ = 0.001 everywhere (bbb's start), and its gradient. */
static void bench_layer_init(bench_layer *l, const bnn_model *m, long batch, int meanfield)
{
	long n = m->nparams, i;

	l->m = m;
	l->batch = batch;
	l->w = bench_alloc((size_t)n);
	l->grad = bench_alloc((size_t)n);
	l->sigma = meanfield ? bench_alloc((size_t)n) : NULL;
	l->gsig = meanfield ? bench_alloc((size_t)n) : NULL;
	l->x = bench_alloc((size_t)(batch * m->inputs));
	l->y = bench_alloc((size_t)(batch * m->targets));
	l->ws = bench_alloc(m->workspace_floats(batch));
	bnn_rng_seed(&l->rng, 8);
	bnn_params_init(m, l->w, &l->rng);
	for (i = 0; meanfield && i < n; i++)
		l->sigma[i] = 0.001f;
	bnn_rng_normal(&l->rng, l->x, (size_t)(batch * m->inputs));
	bnn_rng_normal(&l->rng, l->y, (size_t)(batch * m->targets));
}

static void bench_layer_free(bench_layer *l)
{
	free(l->w);
	free(l->grad);
	free(l->sigma);
	free(l->gsig);
	free(l->x);
	free(l->y);
	free(l->ws);
}

/* Time the WHVI step against the mean-field step at each D (repeats
 * interleaved); print a whvi_step line per D. */
static void bench_whvis(const bench_opts *o)
{
	static const struct {
		long d;
		const bnn_model *wv, *mf;
		double target; /* speedup */
	} sizes[] = {
		{ 128, &wv_128_model, &mf_128_model, 1 },
		{ 256, &wv_256_model, &mf_256_model, 1 },
		{ 512, &wv_512_model, &mf_512_model, 1 },
		{ 1024, &wv_1024_model, &mf_1024_model, 10 },
	};
	const long batch = 128;
	size_t i;

	for (i = 0; i < sizeof sizes / sizeof *sizes; i++) {
		bench_layer wv, mf;
		bench_op a = { bench_layer_step, NULL, &wv }, b = { bench_layer_step, NULL, &mf };
		bench_result ra, rb;
		double speedup;

		bench_layer_init(&wv, sizes[i].wv, batch, 0);
		bench_layer_init(&mf, sizes[i].mf, batch, 1);
		bench_measure_pair(&a, &b, o, &ra, &rb, &speedup);
		printf("{\"bench\":\"whvi_step\",\"impl\":\"bnnc\",\"d\":%ld,"
		       "\"batch\":%ld,\"whvi_ms\":%.4f,\"meanfield_ms\":%.4f,"
		       "\"whvi_params\":%ld,\"meanfield_params\":%ld,"
		       "\"speedup\":%.2f,\"target\":%g,\"met\":%s,\"repeats\":%d}\n",
		       sizes[i].d, batch, 1e3 * ra.seconds, 1e3 * rb.seconds, sizes[i].wv->nparams,
		       sizes[i].mf->nparams, speedup, sizes[i].target,
		       speedup >= sizes[i].target ? "true" : "false", o->repeats);
		fflush(stdout);
		bench_layer_free(&wv);
		bench_layer_free(&mf);
	}
}

/* ---- threads: the trainer's epoch on one thread and on several --------- */

/*
 * The threads group (issue 18's targets): the trainer's epoch, as in
 * bench_train, once with threads = 1 and once with bench_threads_many
 * threads (every core the process may use, at least 2), alternately in
 * each repeat; the speedup is the median over the repeats of the ratio
 * within a repeat.  Wall-clock time: CPU time sums over the threads.  A
 * case's steps per epoch are set so that its one-thread epoch lasts about
 * min_time (measured on a short run first).
 */
struct bench_thread_case {
	const char *net;             /* the JSON lines' "net" */
	const bnn_model *point, *mf; /* the models (mf: for the variational optimizers) */
	int optimizer;               /* enum bnn_optimizer */
	long batch;
	double target; /* least speedup (issue 18) */
};
static const struct bench_thread_case bench_thread_cases[] = {
	{ "784-512-512-10", &fashion_point_model, &fashion_mf_model, BNN_OPT_ADAM, 128, 1.75 },
	{ "784-512-512-10", &fashion_point_model, &fashion_mf_model, BNN_OPT_IVON, 128, 1.75 },
	{ "784-512-512-10", &fashion_point_model, &fashion_mf_model, BNN_OPT_VOGN, 128, 1.75 },
	{ "784-512-512-10", &fashion_point_model, &fashion_mf_model, BNN_OPT_ADAM, 32, 1.6 },
	{ "784-512-512-10", &fashion_point_model, &fashion_mf_model, BNN_OPT_IVON, 32, 1.6 },
	{ "784-512-512-10", &fashion_point_model, &fashion_mf_model, BNN_OPT_VOGN, 32, 1.6 },
	{ "lenet", &fashion_lenet_model, &fashion_lenet_bayes_model, BNN_OPT_ADAM, 128, 1.75 },
	{ "resnet", &fashion_resnet_model, NULL, BNN_OPT_ADAM, 128, 1.75 },
	{ "13-50-50-1", &mlp13_model, NULL, BNN_OPT_ADAM, 32, 0.95 },
};

/* The threads bench_threads runs the many-thread side on. */
static int bench_threads_many(void)
{
	int n = bnn_threads_available();

	return n < 2 ? 2 : n;
}

/* Seconds per step of the case's epoch on this many threads. */
static double bench_thread_epoch(const struct bench_thread_case *c, const bnn_dataset *ds,
                                 long steps, int threads)
{
	static const struct bench_optim point = { "adam", BNN_OPT_ADAM, 0, 0 };
	const struct bench_optim op = { bnn_optimizer_name(c->optimizer), c->optimizer,
		                        c->optimizer != BNN_OPT_ADAM, 0 };
	const bench_suite su = { "threads", c->net, c->point, c->mf, &point, 1 };
	bnn_train_options to = bnn_train_defaults();

	to.optimizer = c->optimizer;
	to.epochs = 2;
	to.batch = c->batch;
	to.threads = threads;
	return bench_train_once(&su, &op, ds, &to, BNN_BENCH_WALL) / (double)steps;
}

static void bench_threads(const bench_opts *o)
{
	size_t i;
	int many = bench_threads_many(), r;

	for (i = 0; i < sizeof bench_thread_cases / sizeof *bench_thread_cases; i++) {
		const struct bench_thread_case *c = &bench_thread_cases[i];
		double one[BENCH_MAX_REPEATS], par[BENCH_MAX_REPEATS], q[BENCH_MAX_REPEATS];
		long steps = 8;
		bnn_dataset ds;
		double probe, speedup;

		if (o->net && strcmp(o->net, c->net))
			continue;
		bench_data_init(&ds, c->point, c->batch * steps, 5);
		probe = bench_thread_epoch(c, &ds, steps, 1);
		free(ds.x);
		free(ds.y);
		if (o->train_steps > 0)
			steps = o->train_steps;
		else if (probe > 0 && o->min_time / probe > steps)
			steps = o->min_time / probe > 5000 ? 5000 : (long)ceil(o->min_time / probe);
		bench_data_init(&ds, c->point, c->batch * steps, 5);
		for (r = 0; r < o->repeats; r++) {
			one[r] = bench_thread_epoch(c, &ds, steps, 1);
			par[r] = bench_thread_epoch(c, &ds, steps, many);
			q[r] = one[r] / par[r];
		}
		speedup = bench_median(q, o->repeats);
		printf("{\"bench\":\"threads\",\"impl\":\"bnnc\",\"net\":\"%s\","
		       "\"batch\":%ld,\"optimizer\":\"%s\",\"threads\":%d,"
		       "\"ms_per_step_1\":%.4f,\"ms_per_step\":%.4f,"
		       "\"examples_per_s_1\":%.0f,\"examples_per_s\":%.0f,"
		       "\"speedup\":%.3f,\"target\":%g,\"met\":%s,"
		       "\"steps_per_epoch\":%ld,\"repeats\":%d}\n",
		       c->net, c->batch, bnn_optimizer_name(c->optimizer), many,
		       1e3 * bench_median(one, o->repeats), 1e3 * bench_median(par, o->repeats),
		       (double)c->batch / bench_median(one, o->repeats),
		       (double)c->batch / bench_median(par, o->repeats), speedup, c->target,
		       speedup >= c->target ? "true" : "false", steps, o->repeats);
		fflush(stdout);
		free(ds.x);
		free(ds.y);
	}
	bnn_set_threads(1);
}

/* ---- batch-1 inference ---------------------------------------------------- */

/* The checkpoint whose weights bench/libinfer1.a holds (Makefile.am). */
#ifndef BENCH_INFER1_CKPT
#define BENCH_INFER1_CKPT "bench/models/fashion_point_infer.ckpt"
#endif
#define BENCH_INFER1_N 64 /* the inputs cycled over */

/* One example at a time: the standalone file's or libbnn's prediction. */
typedef struct bench_infer1 {
	const bnn_state *st;
	const float *x; /* BENCH_INFER1_N inputs */
	long next;      /* the example of the next call */
	double ws[(FASHION_POINT_WORKSPACE_BYTES + 7) / 8];
	float out[FASHION_POINT_OUT_FLOATS];
} bench_infer1;

static void bench_infer1_standalone(void *ctx)
{
	bench_infer1 *b = ctx;
	fashion_point_predict(b->x + b->next * FASHION_POINT_INPUTS, 1, 0, 0, b->ws, sizeof b->ws,
	                      b->out);
	b->next = (b->next + 1) % BENCH_INFER1_N;
	bench_sink += b->out[0];
}

static void bench_infer1_libbnn(void *ctx)
{
	bench_infer1 *b = ctx;
	bnn_dataset one;
	bnn_prediction pr;
	bnn_err err;

	memset(&one, 0, sizeof one);
	memset(&pr, 0, sizeof pr);
	one.n = 1;
	one.features = FASHION_POINT_INPUTS;
	one.rank = 1;
	one.shape[0] = FASHION_POINT_INPUTS;
	one.x = (float *)(b->x + b->next * FASHION_POINT_INPUTS);
	pr.probs = b->out;
	if (bnn_predict(b->st, &one, 0, 0, &pr, &err) != BNN_OK) {
		fprintf(stderr, "bench: infer1: %s\n", err.message);
		exit(1);
	}
	b->next = (b->next + 1) % BENCH_INFER1_N;
	bench_sink += b->out[0];
}

/* The largest difference between the two outputs over the inputs,
 * relative to the largest output (they differ only in the order of the
 * sums: docs/standalone.md, 1e-5 in t/standalone.sh). */
static double bench_infer1_diff(bench_infer1 *sa, bench_infer1 *lib)
{
	double d = 0, top = 0;
	long i, j;
	for (i = 0; i < BENCH_INFER1_N; i++) {
		bench_infer1_standalone(sa);
		bench_infer1_libbnn(lib);
		for (j = 0; j < FASHION_POINT_OUT_FLOATS; j++) {
			d = fmax(d, fabs((double)sa->out[j] - lib->out[j]));
			top = fmax(top, fabs((double)lib->out[j]));
		}
	}
	return top > 0 ? d / top : d;
}

static void bench_infer1s(const bench_opts *o)
{
	static bench_infer1 sa, lib; /* static: the workspace is a device's static RAM */
	bnn_dataset ds;
	bnn_state st;
	bnn_err err;
	bench_op a = { bench_infer1_standalone, NULL, &sa },
	         b = { bench_infer1_libbnn, NULL, &lib };
	bench_result ra, rb;
	double ratio, diff;

	if (bnn_state_load(&st, &fashion_point_model, BENCH_INFER1_CKPT, &err) != BNN_OK) {
		fprintf(stderr, "bench: infer1: %s\n", err.message);
		exit(1);
	}
	bench_data_init(&ds, &fashion_point_model, BENCH_INFER1_N, 19);
	sa.x = lib.x = ds.x;
	sa.st = lib.st = &st;
	diff = bench_infer1_diff(&sa, &lib);
	bench_measure_pair(&a, &b, o, &ra, &rb, &ratio);
	printf("{\"bench\":\"infer1\",\"impl\":\"standalone\",\"net\":\"784-512-512-10\","
	       "\"cc\":\"cc -std=c99 -O2\",\"ms_per_example\":%.5f,\"examples_per_s\":%.0f,"
	       "\"workspace_bytes\":%lu}\n",
	       1e3 * ra.seconds, 1 / ra.seconds, (unsigned long)FASHION_POINT_WORKSPACE_BYTES);
	printf("{\"bench\":\"infer1\",\"impl\":\"libbnn\",\"net\":\"784-512-512-10\","
	       "\"ms_per_example\":%.5f,\"examples_per_s\":%.0f,"
	       "\"standalone_over_libbnn\":%.3f,\"max_rel_diff\":%.3g}\n",
	       1e3 * rb.seconds, 1 / rb.seconds, 1 / ratio, diff);
	free(ds.x);
	free(ds.y);
	bnn_state_free(&st);
}

static void bench_usage(void)
{
	fprintf(stderr,
	        "usage: bench [--repeats N] [--min-time SECONDS]"
	        " [--clock cpu|wall] [--train-steps N]\n"
	        "             [--only peak|gemm|step|train|vi|fwht|whvi|lenet|threads|infer1|gru|"
	        "transformer[,...]]"
	        " [--net NAME]\n");
	exit(2);
}

/* The groups named in a comma-separated list; 0 if a name is unknown. */
static unsigned bench_groups(const char *list)
{
	unsigned groups = 0;
	size_t len, g;

	for (; *list; list += len + (list[len] == ',')) {
		len = strcspn(list, ",");
		for (g = 0; g < sizeof bench_group_names / sizeof *bench_group_names; g++)
			if (strlen(bench_group_names[g]) == len &&
			    !strncmp(list, bench_group_names[g], len))
				break;
		if (g == sizeof bench_group_names / sizeof *bench_group_names)
			return 0;
		groups |= 1u << g;
	}
	return groups;
}

static void bench_args(int argc, char **argv, bench_opts *o)
{
	int i;

	for (i = 1; i < argc; i++) {
		char *end;
		if (i + 1 < argc && !strcmp(argv[i], "--repeats")) {
			long v = strtol(argv[++i], &end, 10);
			if (*end || v < 1 || v > BENCH_MAX_REPEATS)
				bench_usage();
			o->repeats = (int)v;
		} else if (i + 1 < argc && !strcmp(argv[i], "--min-time")) {
			double v = strtod(argv[++i], &end);
			if (*end || !(v > 0 && v <= 60))
				bench_usage();
			o->min_time = v;
		} else if (i + 1 < argc && !strcmp(argv[i], "--train-steps")) {
			long v = strtol(argv[++i], &end, 10);
			if (*end || v < 1 || v > 100000)
				bench_usage();
			o->train_steps = v;
		} else if (i + 1 < argc && !strcmp(argv[i], "--only")) {
			o->groups = bench_groups(argv[++i]);
			if (!o->groups)
				bench_usage();
		} else if (i + 1 < argc && !strcmp(argv[i], "--net")) {
			o->net = argv[++i];
		} else if (i + 1 < argc && !strcmp(argv[i], "--clock")) {
			i++;
			if (!strcmp(argv[i], "cpu"))
				o->clock = BNN_BENCH_CPU;
			else if (!strcmp(argv[i], "wall"))
				o->clock = BNN_BENCH_WALL;
			else
				bench_usage();
		} else {
			bench_usage();
		}
	}
}

int main(int argc, char **argv)
{
	bench_opts o = { 7, 0.2, BNN_BENCH_CPU, 0, BENCH_GALL, NULL };
	bnn_bench_peak pk = { 0 };
	bench_net net;
	double adam32 = 0, adam128 = 0, adam_lenet = 0; /* 0: not measured */
	bnn_err err;
	char cpu[256];

	bench_args(argc, argv, &o);
	if (bnn_model_check(&fashion_point_model, &err) ||
	    bnn_model_check(&fashion_mf_model, &err) || bnn_model_check(&mlp13_model, &err) ||
	    bnn_model_check(&fashion_lenet_model, &err) ||
	    bnn_model_check(&fashion_lenet_bayes_model, &err) ||
	    bnn_model_check(&fashion_resnet_model, &err)) {
		fprintf(stderr, "bench: %s\n", err.message);
		return 1;
	}
	bnn_set_threads(1);

	bench_cpu_model(cpu, sizeof cpu);
	printf("{\"bench\":\"env\",\"impl\":\"bnnc\",\"cpu\":");
	bench_json_str(cpu);
	printf(",\"blas_core\":");
	bench_json_str(openblas_get_corename());
	printf(",\"blas_config\":");
	bench_json_str(openblas_get_config());
	printf(",\"threads\":1,\"repeats\":%d,\"min_time_s\":%.3f,"
	       "\"clock\":\"%s\",\"train_steps\":%ld}\n",
	       o.repeats, o.min_time, o.clock == BNN_BENCH_CPU ? "cpu" : "wall", o.train_steps);

	if (o.groups & (BENCH_GPEAK | BENCH_GGEMM | BENCH_GSTEP | BENCH_GFWHT | BENCH_GLENET |
	                BENCH_GGRU | BENCH_GTRANSFORMER))
		pk = bench_peak(&o); /* the GEMM rates are fractions of it */
	if (o.groups & BENCH_GGEMM) {
		bench_gemms(&o, pk.gflops);
		bench_convs(&o, pk.gflops);
	}
	if (o.groups & BENCH_GSTEP) {
		bench_net_init(&net, &fashion_point_model, "784-512-512-10", 32, 1);
		adam32 = bench_adam(&net, &o, pk.gflops);
		bench_sqgrad(&net, &o);
		bench_net_free(&net);

		bench_net_init(&net, &fashion_point_model, "784-512-512-10", 128, 1);
		adam128 = bench_adam(&net, &o, pk.gflops);
		bench_sqgrad(&net, &o);
		bench_net_free(&net);

		bench_net_init(&net, &mlp13_model, "13-50-50-1", 32, 1);
		bench_adam(&net, &o, pk.gflops);
		bench_net_free(&net);
	}
	if (o.groups & BENCH_GTRAIN) {
		bench_train(&bench_mlp_suite, 32, bench_train_steps(&o, adam32), &o);
		bench_train(&bench_mlp_suite, 128, bench_train_steps(&o, adam128), &o);
	}
	if (o.groups & BENCH_GVI) {
		bench_vi_passes(32, &o);
		bench_vi_passes(128, &o);
		bench_vi_kernels(&o);
	}
	if (o.groups & BENCH_GFWHT)
		bench_fwhts(&o);
	if (o.groups & BENCH_GWHVI)
		bench_whvis(&o);
	if (o.groups & BENCH_GLENET) {
		/* make lenet's batch (examples/compare.sh) */
		bench_net_init(&net, &fashion_lenet_model, "lenet", 128, 1);
		adam_lenet = bench_adam(&net, &o, pk.gflops);
		bench_net_free(&net);
		bench_train(&bench_lenet_suite, 128, bench_train_steps(&o, adam_lenet), &o);
	}
	if (o.groups & BENCH_GTHREADS)
		bench_threads(&o);
	if (o.groups & BENCH_GINFER1)
		bench_infer1s(&o);
	if (o.groups & BENCH_GGRU) {
		/* issue 23: hidden 128, length 50, features 32, batch 32 */
		bench_net_init(&net, &gru_128_model, "gru-50x32-128", 32, 1);
		bench_adam(&net, &o, pk.gflops);
		bench_sqgrad(&net, &o);
		bench_net_free(&net);
	}
	if (o.groups & BENCH_GTRANSFORMER) {
		/* issue 23: 4 heads, dim 128, length 64, batch 32 */
		bench_net_init(&net, &transformer_128_model, "transformer-64x128", 32, 1);
		bench_adam(&net, &o, pk.gflops);
		bench_sqgrad(&net, &o);
		bench_net_free(&net);
	}
	return 0;
}
