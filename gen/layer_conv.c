/* layer_conv.c: code for conv2d layers, a 2-D convolution of a
 * [C, H, W] map into [F, OH, OW] by im2col and one GEMM per group of
 * examples, with a point, meanfield or dropout(p) posterior; and for
 * conv1d layers, the same code on a [C, L] signal seen as a [C, 1, L]
 * map (graph_node_map) under a 1 × k window whose taps lie dilation apart
 * (bnn_gen_conv's dw): one convolution, its sqgrad, threads and families
 * included, for both ops.
 *
 * Parameters: NAME.weight [F, C, KH, KW] (row-major, like PyTorch's
 * Conv2d), for conv1d [F, C, K] (PyTorch's Conv1d; the same floats as
 * [F, C, 1, K]), and NAME.bias [F].  Forward is Y_i = W·col_i + b, one GEMM for
 * a group of g examples' columns (for stride 1 and enough channels, a
 * GEMM per kernel offset and example over a shifted view of the padded
 * input instead); backward is dW = Σ_i G_i·rows_i (per example, on its
 * windows as rows, or for stride 1 a GEMM per kernel offset over shifted
 * views), db = Σ_i Σ_p G_i, and, when the
 * input has a delta, dX (a GEMM per kernel offset and example for stride
 * 1, else col2im(Wᵀ·G) per group; see bnn_gen/conv.h); the mean of
 * squared per-example gradients is accumulated example by example (see
 * bnn_gen_conv_backward_params), so it needs F × K blocks, not B of them.
 * g is a constant of the layer (conv_group below), not the batch.
 * The layer shape is a static const bnn_gen_conv (cv_NAME), and every
 * conv2d layer shares two scratch blocks that do not grow with the batch,
 * each BNN_GEN_CONV_LANES lanes, one a thread: conv_col
 * (bnn_gen_conv_col_floats: a lane holds one group's columns with its
 * padded input maps, one example's rows for dW or its padded deltas and
 * input gradient for dX) and conv_tmp (bnn_gen_conv_tmp_floats: a lane holds
 * a group's outputs or gathered deltas, or one example's weight gradient;
 * then the slots of dW's sums).
 *
 * Threads: each kernel call is the body of a parallel region of its own,
 * BNN_GEN_TEAM_REGION(bnn_gen_conv_*_team(&cv_NAME, B)), so that the
 * kernel is inlined in the region with its shape still a constant
 * (bnn_gen/loop.h); the kernel shares its tasks among the team.
 *
 * meanfield: the pass computes the layer on the weights in w, as the
 * runtime's samplers give them (VOGN, IVON, BADAM, and Bayes-by-Backprop
 * with lrt = 0).  The local reparameterisation trick, which dense
 * meanfield layers use when the pass gets sigma, is not generated for
 * conv2d: a conv2d layer ignores sigma and leaves its grad_sigma entries
 * alone, and Bayes-by-Backprop with lrt = 1 gives its weights a sample
 * θ = μ + σε in w (the trainer's weight_sample tensors).
 *
 * dropout(p): as for dense layers, when rng is given, X̃ = X∘M with M a
 * mask per example and input value (C·H·W of them: 0, or 1/(1 − p) with
 * probability 1 − p), drawn in the noise loop; the layer is then the
 * convolution of X̃ (dW, db, sqgrad from X̃), and the input's delta is
 * col2im(Wᵀ·G)∘M, computed into xt_NAME once dW is done with it.
 * Workspace per example: m_NAME (the mask) and xt_NAME (X̃).
 */
#include "bnn_gen/conv.h"
#include "bnn_model.h"
#include "cg.h"

static int conv_params(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const struct graph_node *in = &cg->g->nodes[n->inputs[0]];
	const struct op_attrs *a = &n->attrs;
	long wshape[4] = { a->channels, in->shape[0], a->kernel[0], a->kernel[1] };
	long bshape[4] = { a->channels, 0, 0, 0 };
	long area = a->kernel[0] * a->kernel[1];
	long fan_in = in->shape[0] * area, fan_out = a->channels * area;
	int init = cg_feeds_relu(cg, node) ? BNN_INIT_HE_NORMAL : BNN_INIT_GLOROT_UNIFORM;
	int rank = 4;
	if (n->op == OP_CONV1D) { /* [F, C, K] */
		wshape[2] = a->kernel[1];
		wshape[3] = 0;
		rank = 3;
	}
	if (cg_add_tensor(cg, node, "weight", BNN_ROLE_WEIGHT, rank, wshape, fan_in, fan_out,
	                  init) < 0)
		return -1;
	if (a->bias && cg_add_tensor(cg, node, "bias", BNN_ROLE_BIAS, 1, bshape, fan_in, fan_out,
	                             BNN_INIT_ZERO) < 0)
		return -1;
	return 0;
}

/* K = C·KH·KW (rows of the columns) and P = OH·OW (their length). */
static void conv_sizes(const struct cg *cg, int node, long *k, long *p)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const struct graph_node *in = &cg->g->nodes[n->inputs[0]];
	long out[3];
	graph_node_map(n, out);
	*k = in->shape[0] * n->attrs.kernel[0] * n->attrs.kernel[1];
	*p = out[1] * out[2];
}

/* Values per example of the input: C·H·W. */
static long conv_in_width(const struct cg *cg, int node)
{
	return cg->nodes[cg->g->nodes[node].inputs[0]].width;
}

/* Examples per im2col group: enough for a group's columns to number about
 * CONV_GROUP_COLUMNS (the GEMMs' n·P; OpenBLAS runs products of a few
 * hundred columns, and of LeNet's 6 or 16 rows, well below its best), at
 * most CONV_GROUP_MAX examples and CONV_GROUP_FLOATS floats of columns
 * (K·g·P), and 1 for a pointwise layer, which has no columns.  A constant
 * of the layer: memory does not grow with the batch.  CONV_GROUP_FLOATS
 * keeps a group's columns (256 KB) in a core's L2 cache, where the GEMM
 * reads them back: measured on the Fashion-MNIST LeNet's pass at batch
 * 128 (one thread, best of 200), 2^16 against 2^20 floats took its first
 * layer's forward from 540 to 384 us and the pass from 4.49 to 3.87 ms;
 * smaller groups also give a team more tasks to share. */
#define CONV_GROUP_COLUMNS 8192
#define CONV_GROUP_MAX     32
#define CONV_GROUP_FLOATS  (1L << 16)
static long conv_group(const struct cg *cg, int node)
{
	const struct op_attrs *a = &cg->g->nodes[node].attrs;
	long k, p, g;
	conv_sizes(cg, node, &k, &p);
	if (a->kernel[0] == 1 && a->kernel[1] == 1 && a->stride[0] == 1 && a->stride[1] == 1 &&
	    a->pad[0] == 0 && a->pad[1] == 0)
		return 1; /* bnn_gen_conv_is_pointwise */
	g = (CONV_GROUP_COLUMNS + p - 1) / p;
	if (g > CONV_GROUP_MAX)
		g = CONV_GROUP_MAX;
	while (g > 1 && k * p * g > CONV_GROUP_FLOATS)
		g--;
	return g;
}

/* The layer's shape as the kernels see it: the bnn_gen_conv that
 * conv_declare emits as cv_NAME. */
static bnn_gen_conv conv_shape(const struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const struct graph_node *in = &cg->g->nodes[n->inputs[0]];
	const struct op_attrs *a = &n->attrs;
	long x[3], y[3];
	graph_node_map(in, x);
	graph_node_map(n, y);
	{
		bnn_gen_conv s = { x[0],         x[1],           x[2],
			           a->channels,  a->kernel[0],   a->kernel[1],
			           a->stride[0], a->stride[1],   a->pad[0],
			           a->pad[1],    a->dilation[0], a->dilation[1],
			           y[1],         y[2],           conv_group(cg, node) };
		return s;
	}
}

/* The shared scratch: the im2col block (bnn_gen_conv_col_floats of
 * bnn_gen/conv.h, the kernels' own figure: the most of one group's columns
 * with its padded input maps, the rows for dW and the padded deltas and
 * input gradient for dX of BNN_GEN_CONV_LANES examples); and
 * (bnn_gen_conv_tmp_floats) one group's outputs or gathered deltas, or
 * BNN_GEN_CONV_LANES examples' weight gradients (F·K each). */
static void conv_plan(struct cg *cg, int node)
{
	const bnn_gen_conv shape = conv_shape(cg, node);
	long col;
	if (cg_family(cg, node) == FAMILY_DROPOUT) {
		cg->nodes[node].noise_off = cg_reserve(cg, 2 * conv_in_width(cg, node));
		cg->noise_rng = 1;
	}
	col = bnn_gen_conv_col_floats(&shape);
	if (col > cg->conv_col_floats)
		cg->conv_col_floats = col;
	if (bnn_gen_conv_tmp_floats(&shape) > cg->conv_tmp_floats)
		cg->conv_tmp_floats = bnn_gen_conv_tmp_floats(&shape);
}

static void conv_declare(struct cg *cg, int node)
{
	const bnn_gen_conv s = conv_shape(cg, node);
	const char *name = cg_name(cg, node);
	long k = conv_in_width(cg, node), off = cg->nodes[node].noise_off;
	if (cg_family(cg, node) == FAMILY_DROPOUT)
		emit(cg->e,
		     "\tbnn_real *const m_%s = ws + %ldL * B; /* [B, %ld] dropout mask: 0 or 1/(1 - p) */\n"
		     "\tbnn_real *const xt_%s = ws + %ldL * B; /* [B, %ld] input times mask */\n",
		     name, off, k, name, off + k, k);
	emit(cg->e,
	     "\tstatic const bnn_gen_conv cv_%s = { %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld, "
	     "%ld, %ld, %ld, %ld, %ld };\n",
	     cg_name(cg, node), s.c, s.h, s.w, s.f, s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.dh, s.dw,
	     s.oh, s.ow, s.g);
}

static void conv_noise(struct cg *cg, int node)
{
	const char *name = cg_name(cg, node);
	long k = conv_in_width(cg, node);
	char p[40];
	if (cg_family(cg, node) != FAMILY_DROPOUT)
		return;
	emit_double_str(cg->g->nodes[node].family.p, p, sizeof p);
	emit(cg->e, "\t\t\tbnn_gen_dropout_mask(rng, %ld, %s, m_%s + e * %ldL);\n", k, p, name, k);
}

/* The layer's input as the convolution sees it: X̃ with a dropout mask. */
static void conv_input(const struct cg *cg, int node, char *buf, size_t size)
{
	const char *name = cg_name(cg, node), *in = cg_name(cg, cg->g->nodes[node].inputs[0]);
	if (cg_family(cg, node) == FAMILY_DROPOUT)
		snprintf(buf, size, "rng ? xt_%s : a_%s", name, in);
	else
		snprintf(buf, size, "a_%s", in);
}

static void conv_forward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const char *name = cg_name(cg, node);
	char w[64], b[64], x[400];
	cg_param_addr(cg, node, "w", 0, w, b, sizeof w);
	conv_input(cg, node, x, sizeof x);
	if (cg_family(cg, node) == FAMILY_DROPOUT)
		emit(cg->e, "\tif (rng)\n\t\tbnn_gen_dropout_apply(B * %ldL, a_%s, m_%s, xt_%s);\n",
		     conv_in_width(cg, node), cg_name(cg, n->inputs[0]), name, name);
	emit(cg->e,
	     "\tBNN_GEN_TEAM_REGION(bnn_gen_conv_forward_team(&cv_%s, B))\n"
	     "\tbnn_gen_conv_forward(&cv_%s, B, %s, %s, %s, conv_col, conv_tmp, a_%s);\n",
	     name, name, x, w, b, name);
}

static void conv_backward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const char *name = cg_name(cg, node);
	int in = n->inputs[0];
	char w[64], b[64], dw[64], db[64], qw[96], qb[96], x[400];
	int acc;
	cg_param_addr(cg, node, "w", 0, w, b, sizeof w);
	cg_param_addr(cg, node, "grad", 0, dw, db, sizeof dw);
	cg_param_addr(cg, node, "sqgrad", 1, qw, qb, sizeof qw);
	conv_input(cg, node, x, sizeof x);
	emit(cg->e,
	     "\tBNN_GEN_TEAM_REGION(bnn_gen_conv_backward_params_team(&cv_%s, B))\n"
	     "\tbnn_gen_conv_backward_params(&cv_%s, B, %s, d_%s, %s, %s,\n"
	     "\t                             %s,\n"
	     "\t                             %s, conv_col, conv_tmp);\n",
	     name, name, x, name, dw, db, qw, qb);
	if (!cg->nodes[in].has_delta)
		return;
	acc = cg_delta_acc(cg, in);
	if (cg_family(cg, node) == FAMILY_DROPOUT)
		emit(cg->e,
		     "\tif (rng) {\n"
		     "\t\tBNN_GEN_TEAM_REGION(bnn_gen_conv_backward_input_team(&cv_%s, B))\n"
		     "\t\tbnn_gen_conv_backward_input(&cv_%s, B, d_%s, %s, xt_%s, conv_col, conv_tmp, 0);\n"
		     "\t\tbnn_gen_dropout_mask_into(B * %ldL, xt_%s, m_%s, d_%s, %d);\n"
		     "\t} else {\n\t",
		     name, name, name, w, name, conv_in_width(cg, node), name, name,
		     cg_name(cg, in), acc);
	emit(cg->e,
	     "\tBNN_GEN_TEAM_REGION(bnn_gen_conv_backward_input_team(&cv_%s, B))\n"
	     "%s\tbnn_gen_conv_backward_input(&cv_%s, B, d_%s, %s, d_%s, conv_col, conv_tmp, %d);\n",
	     name, cg_family(cg, node) == FAMILY_DROPOUT ? "\t" : "", name, name, w,
	     cg_name(cg, in), acc);
	if (cg_family(cg, node) == FAMILY_DROPOUT)
		emit(cg->e, "\t}\n");
}

const struct cg_layer cg_layer_conv2d = {
	.params = conv_params,
	.plan = conv_plan,
	.declare = conv_declare,
	.noise = conv_noise,
	.forward = conv_forward,
	.backward = conv_backward,
};
