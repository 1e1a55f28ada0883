/* ops.c: the ops of the language: parameter tables, shape inference and
 * parameter counts (see ops.h for the plug-in interface).
 *
 * Shapes are [features] (rank 1), [channels, length] (rank 2: 1-D signals,
 * which conv1d and the pools take, or the [time, features] sequences of
 * embedding and positional) or [channels, height, width] (rank 3).
 * Parameters counted here are those of the point network (weights and
 * biases, the scales and shifts of batchnorm, layernorm and groupnorm);
 * the posterior's are counted by families.c.  Batchnorm's running
 * statistics are buffers, not parameters.
 */
#include "ops.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAXD       ((double)GRAPH_MAX_DIM)
#define ARGN(spec) ((int)(sizeof(spec) / sizeof((spec)[0])))

/* --- parameter tables -------------------------------------------------- */

static const struct arg_spec unary_args[] = {
	{ "x", ARG_NODE, 1, 0, 0, 0, 0 },
};
static const struct arg_spec dense_args[] = {
	{ "x", ARG_NODE, 1, 0, 0, 0, 0 },
	{ "units", ARG_INT, 1, 0, 1, MAXD, 0 },
	{ "bias", ARG_BOOL, 0, 1, 0, 0, 0 },
	{ "per_step", ARG_BOOL, 0, 0, 0, 0, 0 },
};
static const struct arg_spec conv2d_args[] = {
	{ "x", ARG_NODE, 1, 0, 0, 0, 0 },
	{ "channels", ARG_INT, 1, 0, 1, MAXD, 0 },
	{ "kernel", ARG_INT_PAIR, 1, 0, 1, MAXD, 0 },
	{ "stride", ARG_INT_PAIR, 0, 1, 1, MAXD, 0 },
	{ "pad", ARG_INT_PAIR, 0, 0, 0, MAXD, 0 },
	{ "bias", ARG_BOOL, 0, 1, 0, 0, 0 },
};
/* conv1d is conv2d on a [C, 1, L] map with a 1 x kernel window: the one
 * convolution of gen/layer_conv.c, which also dilates (spacing the taps
 * dilation apart). */
static const struct arg_spec conv1d_args[] = {
	{ "x", ARG_NODE, 1, 0, 0, 0, 0 },        { "filters", ARG_INT, 1, 0, 1, MAXD, 0 },
	{ "kernel", ARG_INT, 1, 0, 1, MAXD, 0 }, { "stride", ARG_INT, 0, 1, 1, MAXD, 0 },
	{ "pad", ARG_INT, 0, 0, 0, MAXD, 0 },    { "dilation", ARG_INT, 0, 1, 1, MAXD, 0 },
	{ "bias", ARG_BOOL, 0, 1, 0, 0, 0 },
};
static const struct arg_spec batchnorm_args[] = {
	{ "x", ARG_NODE, 1, 0, 0, 0, 0 },
	{ "momentum", ARG_REAL, 0, 0.1, 0, 1, ARG_LO_OPEN },
	{ "eps", ARG_REAL, 0, 1e-5, 0, INFINITY, ARG_LO_OPEN },
};
static const struct arg_spec layernorm_args[] = {
	{ "x", ARG_NODE, 1, 0, 0, 0, 0 },
	{ "eps", ARG_REAL, 0, 1e-5, 0, INFINITY, ARG_LO_OPEN },
	{ "per_step", ARG_BOOL, 0, 0, 0, 0, 0 },
};
static const struct arg_spec groupnorm_args[] = {
	{ "x", ARG_NODE, 1, 0, 0, 0, 0 },
	{ "groups", ARG_INT, 1, 0, 1, MAXD, 0 },
	{ "eps", ARG_REAL, 0, 1e-5, 0, INFINITY, ARG_LO_OPEN },
};
static const struct arg_spec leaky_relu_args[] = {
	{ "x", ARG_NODE, 1, 0, 0, 0, 0 },
	{ "slope", ARG_REAL, 0, 0.01, 0, 1, ARG_HI_OPEN },
};
/* A stride default of -1 means "the window size". */
static const struct arg_spec pool_args[] = {
	{ "x", ARG_NODE, 1, 0, 0, 0, 0 },
	{ "size", ARG_INT, 1, 0, 1, MAXD, 0 },
	{ "stride", ARG_INT, 0, -1, 1, MAXD, 0 },
};
static const struct arg_spec add_args[] = {
	{ "a", ARG_NODE, 1, 0, 0, 0, 0 },
	{ "b", ARG_NODE, 1, 0, 0, 0, 0 },
};
static const struct arg_spec embedding_args[] = {
	{ "ids", ARG_NODE, 1, 0, 0, 0, 0 },
	{ "vocab", ARG_INT, 1, 0, 1, MAXD, 0 },
	{ "dim", ARG_INT, 1, 0, 1, MAXD, 0 },
};
static const struct arg_spec concat_args[] = {
	{ "inputs", ARG_NODES, 1, 0, 0, 0, 0 },
};
/* output is the word last or sequence; its default (last) is no number, so
 * the signature shows "output = ...". */
static const struct arg_spec gru_args[] = {
	{ "x", ARG_NODE, 1, 0, 0, 0, 0 },
	{ "units", ARG_INT, 1, 0, 1, MAXD, 0 },
	{ "output", ARG_WORD, 0, -1, 0, 1, 0 },
};
/* dim's default (-1, outside its range) means the input's feature count,
 * so the signature shows "dim = ...". */
static const struct arg_spec attention_args[] = {
	{ "x", ARG_NODE, 1, 0, 0, 0, 0 },
	{ "heads", ARG_INT, 1, 0, 1, MAXD, 0 },
	{ "dim", ARG_INT, 0, -1, 1, MAXD, 0 },
	{ "causal", ARG_BOOL, 0, 0, 0, 0, 0 },
};

/* --- helpers ----------------------------------------------------------- */

static const struct graph_node *op_in(const struct op_ctx *c, int i)
{
	return &c->g->nodes[c->n->inputs[i]];
}

static void op_copy_shape(struct graph_node *n, const struct graph_node *from)
{
	n->rank = from->rank;
	memcpy(n->shape, from->shape, sizeof n->shape);
}

/* What the ranks of RANKS (a bit per rank) are, for messages. */
static const char *op_ranks_str(unsigned ranks)
{
	switch (ranks) {
	case 1u << 2:
		return "a [channels, length]";
	case 1u << 3:
		return "a [channels, height, width]";
	default:
		return "a [channels, length] or [channels, height, width]";
	}
}

/* Reports that N's input I must have one of the ranks of RANKS (a bit per
 * rank), with a pointer to conv1d for conv2d on a signal. */
static int op_need_rank(struct op_ctx *c, int i, unsigned ranks)
{
	const struct graph_node *in = op_in(c, i);
	char shape[64];
	if (ranks & (1u << in->rank))
		return 0;
	graph_shape_str(in, shape, sizeof shape);
	diag_error(c->d, c->loc[i], "%s needs %s input, but '%s' has shape %s", op_name(c->n->op),
	           op_ranks_str(ranks), in->name, shape);
	if (c->n->op == OP_CONV2D && in->rank == 2)
		diag_note(c->d, c->loc[i], "a [channels, length] signal takes conv1d");
	return -1;
}

/* Reports that N's input I must be a [channels, height, width] map. */
static int op_need_map(struct op_ctx *c, int i)
{
	return op_need_rank(c, i, 1u << 3);
}

/* The output extent of a window of size K sliding with stride S over N
 * padded by P on both sides, or 0 if the window does not fit. */
static long op_window_out(long n, long k, long s, long p)
{
	return n + 2 * p < k ? 0 : (n + 2 * p - k) / s + 1;
}

/* --- checks ------------------------------------------------------------ */

static int op_check_input(struct op_ctx *c)
{
	(void)c; /* the input's shape comes from its declaration (sema.c) */
	return 0;
}

static int op_check_same_shape(struct op_ctx *c)
{
	op_copy_shape(c->n, op_in(c, 0));
	return 0;
}

static int op_check_leaky_relu(struct op_ctx *c)
{
	if (args_number(c->d, &leaky_relu_args[1], c->val[1], &c->n->attrs.slope) != 0)
		return -1;
	return op_check_same_shape(c);
}

/* dense: Y = X·Wᵀ + b on the flattened input; with per_step, on each of
 * the T rows of a [T, F] sequence (PyTorch's nn.Linear on the last
 * dimension: a transformer's position-wise feed-forward), [T, units]. */
static int op_check_dense(struct op_ctx *c)
{
	struct graph_node *n = c->n;
	const struct graph_node *in = op_in(c, 0);
	long long f = graph_node_elements(in);
	char shape[64];
	if (args_long(c->d, &dense_args[1], c->val[1], &n->attrs.units) != 0 ||
	    args_bool(c->d, &dense_args[2], c->val[2], &n->attrs.bias) != 0 ||
	    args_bool(c->d, &dense_args[3], c->val[3], &n->attrs.per_step) != 0)
		return -1;
	n->rank = 1;
	n->shape[0] = n->attrs.units;
	if (n->attrs.per_step) {
		if (in->rank != 2) {
			graph_shape_str(in, shape, sizeof shape);
			diag_error(c->d, c->loc[3],
			           "per_step applies dense to each step of a [time, features] "
			           "sequence, but '%s' has shape %s",
			           in->name, shape);
			return -1;
		}
		f = in->shape[1];
		n->rank = 2;
		n->shape[0] = in->shape[0];
		n->shape[1] = n->attrs.units;
	}
	n->attrs.in_features = (long)f;
	n->model_params = f * n->attrs.units + (n->attrs.bias ? n->attrs.units : 0);
	return 0;
}

static int op_check_conv2d(struct op_ctx *c)
{
	struct graph_node *n = c->n;
	struct op_attrs *a = &n->attrs;
	const struct graph_node *in = op_in(c, 0);
	int i;
	if (op_need_map(c, 0) != 0 || args_long(c->d, &conv2d_args[1], c->val[1], &a->channels) ||
	    args_pair(c->d, &conv2d_args[2], c->val[2], a->kernel) ||
	    args_pair(c->d, &conv2d_args[3], c->val[3], a->stride) ||
	    args_pair(c->d, &conv2d_args[4], c->val[4], a->pad) ||
	    args_bool(c->d, &conv2d_args[5], c->val[5], &a->bias))
		return -1;
	for (i = 0; i < 2; i++) {
		if (2 * a->pad[i] > a->kernel[i]) {
			diag_error(
			        c->d, c->loc[4],
			        "padding %ld is more than half the kernel size %ld (at most %ld)",
			        a->pad[i], a->kernel[i], a->kernel[i] / 2);
			return -1;
		}
		n->shape[i + 1] =
		        op_window_out(in->shape[i + 1], a->kernel[i], a->stride[i], a->pad[i]);
	}
	if (n->shape[1] == 0 || n->shape[2] == 0) {
		diag_error(
		        c->d, c->loc[2],
		        "the %ldx%ld kernel does not fit the %ldx%ld input '%s' (padding %ldx%ld)",
		        a->kernel[0], a->kernel[1], in->shape[1], in->shape[2], in->name, a->pad[0],
		        a->pad[1]);
		return -1;
	}
	n->rank = 3;
	n->shape[0] = a->channels;
	a->dilation[0] = a->dilation[1] = 1;
	n->model_params = (long long)a->channels * in->shape[0] * a->kernel[0] * a->kernel[1] +
	                  (a->bias ? a->channels : 0);
	return 0;
}

/* conv1d over [C, L]: a [C, 1, L] map under a 1 x kernel window whose taps
 * lie dilation apart, so the window spans dilation·(kernel − 1) + 1
 * values and L' = ⌊(L + 2·pad − span)/stride⌋ + 1. */
static int op_check_conv1d(struct op_ctx *c)
{
	struct graph_node *n = c->n;
	struct op_attrs *a = &n->attrs;
	const struct graph_node *in = op_in(c, 0);
	long span;
	if (op_need_rank(c, 0, 1u << 2) != 0 ||
	    args_long(c->d, &conv1d_args[1], c->val[1], &a->channels) ||
	    args_long(c->d, &conv1d_args[2], c->val[2], &a->kernel[1]) ||
	    args_long(c->d, &conv1d_args[3], c->val[3], &a->stride[1]) ||
	    args_long(c->d, &conv1d_args[4], c->val[4], &a->pad[1]) ||
	    args_long(c->d, &conv1d_args[5], c->val[5], &a->dilation[1]) ||
	    args_bool(c->d, &conv1d_args[6], c->val[6], &a->bias))
		return -1;
	a->kernel[0] = a->stride[0] = a->dilation[0] = 1;
	a->pad[0] = 0;
	if ((a->kernel[1] - 1) > (GRAPH_MAX_DIM - 1) / a->dilation[1]) {
		diag_error(c->d, c->loc[5],
		           "the kernel of %ld taps with dilation %ld spans more than %ld values",
		           a->kernel[1], a->dilation[1], GRAPH_MAX_DIM);
		return -1;
	}
	span = a->dilation[1] * (a->kernel[1] - 1) + 1;
	if (2 * a->pad[1] > span) {
		diag_error(c->d, c->loc[4],
		           "padding %ld is more than half the kernel's span %ld (at most %ld)",
		           a->pad[1], span, span / 2);
		return -1;
	}
	n->shape[1] = op_window_out(in->shape[1], span, a->stride[1], a->pad[1]);
	if (n->shape[1] == 0) {
		diag_error(
		        c->d, c->loc[2],
		        "the kernel spans %ld values, more than the length %ld of '%s' (padding %ld "
		        "on each side)",
		        span, in->shape[1], in->name, a->pad[1]);
		return -1;
	}
	n->rank = 2;
	n->shape[0] = a->channels;
	n->model_params =
	        (long long)a->channels * in->shape[0] * a->kernel[1] + (a->bias ? a->channels : 0);
	return 0;
}

static int op_check_batchnorm(struct op_ctx *c)
{
	struct graph_node *n = c->n;
	if (args_number(c->d, &batchnorm_args[1], c->val[1], &n->attrs.momentum) != 0 ||
	    args_number(c->d, &batchnorm_args[2], c->val[2], &n->attrs.eps) != 0)
		return -1;
	op_copy_shape(n, op_in(c, 0));
	n->model_params = 2LL * n->shape[0]; /* a scale and a shift per channel */
	return 0;
}

/* A normalisation whose groups hold one value each maps every input to
 * its shift β (x − μ = 0): legal, but surely not what was meant.  A
 * warning at the call, naming the normalised node. */
static void op_warn_single_value_groups(struct op_ctx *c, long group_values)
{
	if (group_values != 1)
		return;
	diag_warning(c->d, c->n->loc,
	             "%s normalises groups of a single value of '%s': its output is its shift, "
	             "whatever the input",
	             op_name(c->n->op), op_in(c, 0)->name);
}

/* layernorm: per example, over all the node's values, with a scale and a
 * shift per value (PyTorch's LayerNorm over the whole shape, with
 * elementwise_affine; Ba et al. 2016, eqs. 3-4).  With per_step, over each
 * step of a [T, F] sequence apart, with a scale and a shift per feature
 * shared by the steps (PyTorch's LayerNorm(F) on [T, F], as a transformer
 * block normalises; Vaswani et al. 2017, sec. 3.1). */
static int op_check_layernorm(struct op_ctx *c)
{
	struct graph_node *n = c->n;
	const struct graph_node *in = op_in(c, 0);
	if (args_number(c->d, &layernorm_args[1], c->val[1], &n->attrs.eps) != 0 ||
	    args_bool(c->d, &layernorm_args[2], c->val[2], &n->attrs.per_step) != 0)
		return -1;
	if (n->attrs.per_step && in->rank != 2) {
		char shape[64];
		graph_shape_str(in, shape, sizeof shape);
		diag_error(c->d, c->loc[2],
		           "layernorm with per_step = true needs a [time, features] sequence, but "
		           "'%s' has shape %s",
		           in->name, shape);
		return -1;
	}
	op_copy_shape(n, in);
	n->model_params = n->attrs.per_step ? 2LL * n->shape[1] : 2 * graph_node_elements(n);
	op_warn_single_value_groups(c, n->attrs.per_step ? n->shape[1] : graph_node_elements(n));
	return 0;
}

/* groupnorm: per example and group of channels (a vector's features are
 * channels of one value), with a scale and a shift per channel (Wu & He
 * 2018, eqs. 1-3 with S_i the group's channels). */
static int op_check_groupnorm(struct op_ctx *c)
{
	struct graph_node *n = c->n;
	const struct graph_node *in = op_in(c, 0);
	if (args_long(c->d, &groupnorm_args[1], c->val[1], &n->attrs.groups) != 0 ||
	    args_number(c->d, &groupnorm_args[2], c->val[2], &n->attrs.eps) != 0)
		return -1;
	if (in->shape[0] % n->attrs.groups != 0) {
		diag_error(c->d, c->loc[1],
		           "groupnorm splits the %ld %s of '%s' into groups of equal size, but "
		           "%ld groups do not divide %ld",
		           in->shape[0], in->rank == 1 ? "features" : "channels", in->name,
		           n->attrs.groups, in->shape[0]);
		return -1;
	}
	op_copy_shape(n, in);
	n->model_params = 2LL * n->shape[0]; /* a scale and a shift per channel */
	op_warn_single_value_groups(c, graph_node_elements(n) / n->attrs.groups);
	return 0;
}

static int op_check_pool(struct op_ctx *c)
{
	struct graph_node *n = c->n;
	const struct graph_node *in = op_in(c, 0);
	long stride;
	int i;
	if (op_need_rank(c, 0, 1u << 2 | 1u << 3) != 0 ||
	    args_long(c->d, &pool_args[1], c->val[1], &n->attrs.size) != 0)
		return -1;
	if (c->val[2]) {
		if (args_long(c->d, &pool_args[2], c->val[2], &stride) != 0)
			return -1;
	} else {
		stride = n->attrs.size;
	}
	n->attrs.stride[0] = n->attrs.stride[1] = stride;
	if (in->rank == 2) { /* 1-D: a window of size along the length */
		n->rank = 2;
		n->shape[0] = in->shape[0];
		n->shape[1] = op_window_out(in->shape[1], n->attrs.size, stride, 0);
		if (n->shape[1] == 0) {
			diag_error(c->d, c->loc[1],
			           "the window of %ld does not fit the length %ld of '%s'",
			           n->attrs.size, in->shape[1], in->name);
			return -1;
		}
		return 0;
	}
	for (i = 1; i < 3; i++) {
		n->shape[i] = op_window_out(in->shape[i], n->attrs.size, stride, 0);
		if (n->shape[i] == 0) {
			diag_error(c->d, c->loc[1],
			           "the %ldx%ld window does not fit the %ldx%ld input '%s'",
			           n->attrs.size, n->attrs.size, in->shape[1], in->shape[2],
			           in->name);
			return -1;
		}
	}
	n->rank = 3;
	n->shape[0] = in->shape[0];
	return 0;
}

static int op_check_globalavgpool(struct op_ctx *c)
{
	if (op_need_rank(c, 0, 1u << 2 | 1u << 3) != 0)
		return -1;
	c->n->rank = 1;
	c->n->shape[0] = op_in(c, 0)->shape[0];
	return 0;
}

static int op_check_flatten(struct op_ctx *c)
{
	c->n->rank = 1;
	c->n->shape[0] = (long)graph_node_elements(op_in(c, 0));
	return 0;
}

static int op_check_add(struct op_ctx *c)
{
	const struct graph_node *a = op_in(c, 0), *b = op_in(c, 1);
	char sa[64], sb[64];
	if (a->rank != b->rank || memcmp(a->shape, b->shape, sizeof a->shape) != 0) {
		graph_shape_str(a, sa, sizeof sa);
		graph_shape_str(b, sb, sizeof sb);
		diag_error(c->d, c->n->loc,
		           "add needs inputs of the same shape, but '%s' is %s and '%s' is %s",
		           a->name, sa, b->name, sb);
		return -1;
	}
	op_copy_shape(c->n, a);
	return 0;
}

static int op_check_concat(struct op_ctx *c)
{
	const struct graph_node *first = op_in(c, 0);
	long long total = 0;
	char sa[64], sb[64];
	int i;
	for (i = 0; i < c->n->ninputs; i++) {
		const struct graph_node *in = op_in(c, i);
		if (in->rank != first->rank || (in->rank >= 2 && in->shape[1] != first->shape[1]) ||
		    (in->rank == 3 && in->shape[2] != first->shape[2])) {
			graph_shape_str(first, sa, sizeof sa);
			graph_shape_str(in, sb, sizeof sb);
			diag_error(
			        c->d, c->n->loc,
			        "concat joins vectors, or signals of the same length or maps of the same height and width along channels; '%s' is %s but '%s' is %s",
			        first->name, sa, in->name, sb);
			return -1;
		}
		total += in->shape[0];
	}
	op_copy_shape(c->n, first);
	if (total > GRAPH_MAX_DIM) {
		diag_error(c->d, c->n->loc, "concat makes %lld %s, more than the limit of %ld",
		           total, first->rank > 1 ? "channels" : "features", GRAPH_MAX_DIM);
		return -1;
	}
	c->n->shape[0] = (long)total;
	return 0;
}

/* gru over [T, F] (time, features): U units, output [U] (the last state)
 * or [T, U] (every state).  Parameters, as PyTorch's nn.GRU: W_ih [3U, F],
 * W_hh [3U, U], b_ih [3U], b_hh [3U] (gen/layer_gru.c).  output is a word;
 * a node or parameter that happens to be named last or sequence still
 * means the word, as 'learned' does for sigma. */
static int op_check_gru(struct op_ctx *c)
{
	struct graph_node *n = c->n;
	const struct graph_node *in = op_in(c, 0);
	const struct value *v = c->val[2];
	const char *word = !v                    ? "last"
	                   : v->kind == VAL_WORD ? v->word
	                   : v->kind == VAL_NODE ? v->text
	                                         : NULL;
	char shape[64], got[96];
	long long u, f;
	if (in->rank != 2) {
		graph_shape_str(in, shape, sizeof shape);
		diag_error(c->d, c->loc[0],
		           "gru needs a [time, features] input, but '%s' has shape %s", in->name,
		           shape);
		return -1;
	}
	if (args_long(c->d, &gru_args[1], c->val[1], &n->attrs.units) != 0)
		return -1;
	if (!word || (strcmp(word, "last") != 0 && strcmp(word, "sequence") != 0)) {
		args_describe(v, got, sizeof got);
		diag_error(c->d, c->loc[2], "gru's output is 'last' or 'sequence', not %s", got);
		return -1;
	}
	n->attrs.sequence = strcmp(word, "sequence") == 0;
	u = n->attrs.units;
	f = in->shape[1];
	n->attrs.in_features = (long)f;
	n->rank = n->attrs.sequence ? 2 : 1;
	n->shape[0] = n->attrs.sequence ? in->shape[0] : n->attrs.units;
	n->shape[1] = n->attrs.sequence ? n->attrs.units : 0;
	n->model_params = 3 * u * (f + u + 2); /* W_ih, W_hh, b_ih, b_hh */
	return 0;
}

/* embedding: ids [T] (an input declared "int") to rows of a vocab × dim
 * table, [T, dim]: a sequence as [time, features]. */
static int op_check_embedding(struct op_ctx *c)
{
	struct graph_node *n = c->n;
	const struct graph_node *in = op_in(c, 0);
	char shape[64];
	if (!in->ids) {
		diag_error(
		        c->d, c->loc[0],
		        "embedding reads integer ids, but '%s' holds real values (declare the ids "
		        "as 'input ids[T] int;')",
		        in->name);
		return -1;
	}
	if (in->rank != 1) { /* unreachable today: an int input is a vector */
		graph_shape_str(in, shape, sizeof shape);
		diag_error(c->d, c->loc[0],
		           "embedding needs a vector of ids, but '%s' has shape %s", in->name,
		           shape);
		return -1;
	}
	if (args_long(c->d, &embedding_args[1], c->val[1], &n->attrs.vocab) != 0 ||
	    args_long(c->d, &embedding_args[2], c->val[2], &n->shape[1]) != 0)
		return -1;
	n->rank = 2;
	n->shape[0] = in->shape[0];
	n->model_params = (long long)n->attrs.vocab * n->shape[1];
	return 0;
}

/* positional: the fixed sinusoidal encoding added to a [T, D] sequence
 * (Vaswani et al. 2017, sec. 3.5); same shape, no weights. */
static int op_check_positional(struct op_ctx *c)
{
	const struct graph_node *in = op_in(c, 0);
	char shape[64];
	if (in->rank != 2) {
		graph_shape_str(in, shape, sizeof shape);
		diag_error(c->d, c->loc[0],
		           "positional needs a [time, features] sequence, but '%s' has shape %s",
		           in->name, shape);
		return -1;
	}
	op_copy_shape(c->n, in);
	return 0;
}

/* attention over [T, F] (time, features): multi-head self-attention into
 * [T, dim] (Vaswani et al. 2017, sec. 3.2.2), heads dividing dim.
 * Parameters, as PyTorch's nn.MultiheadAttention: in_proj_weight [3D, F],
 * in_proj_bias [3D], out_proj_weight [D, D], out_proj_bias [D]
 * (gen/layer_attention.c). */
static int op_check_attention(struct op_ctx *c)
{
	struct graph_node *n = c->n;
	const struct graph_node *in = op_in(c, 0);
	char shape[64];
	long long d, f;
	if (in->rank != 2) {
		graph_shape_str(in, shape, sizeof shape);
		diag_error(c->d, c->loc[0],
		           "attention needs a [time, features] input, but '%s' has shape %s",
		           in->name, shape);
		return -1;
	}
	if (args_long(c->d, &attention_args[1], c->val[1], &n->attrs.heads) != 0 ||
	    (c->val[2] && args_long(c->d, &attention_args[2], c->val[2], &n->attrs.units) != 0) ||
	    args_bool(c->d, &attention_args[3], c->val[3], &n->attrs.causal) != 0)
		return -1;
	if (!c->val[2])
		n->attrs.units = in->shape[1];
	if (n->attrs.units % n->attrs.heads != 0) {
		diag_error(c->d, c->loc[1],
		           "attention's %ld heads do not divide its dim, %ld%s: each head takes "
		           "dim / heads values",
		           n->attrs.heads, n->attrs.units,
		           c->val[2] ? "" : " (its input's features)");
		return -1;
	}
	d = n->attrs.units;
	f = in->shape[1];
	n->attrs.in_features = (long)f;
	n->rank = 2;
	n->shape[0] = in->shape[0];
	n->shape[1] = n->attrs.units;
	n->model_params = 3 * d * (f + 1) + d * (d + 1); /* in_proj, out_proj */
	return 0;
}

/* transpose: [A, B] to [B, A], e.g. an embedded [T, F] sequence to the
 * [channels, length] signal conv1d convolves over time, and back. */
static int op_check_transpose(struct op_ctx *c)
{
	const struct graph_node *in = op_in(c, 0);
	char shape[64];
	if (in->rank != 2) {
		graph_shape_str(in, shape, sizeof shape);
		diag_error(c->d, c->loc[0],
		           "transpose swaps the two axes of a rank-2 node, but '%s' has shape %s",
		           in->name, shape);
		return -1;
	}
	c->n->rank = 2;
	c->n->shape[0] = in->shape[1];
	c->n->shape[1] = in->shape[0];
	return 0;
}

/* --- the table --------------------------------------------------------- */

static const struct op_info op_table[OP_COUNT] = {
#define OP(id, name, weights, spec, check) [OP_##id] = { name, weights, spec, ARGN(spec), check },
#include "ops.def"
#undef OP
};

const struct op_info *op_get(enum op_id op)
{
	return &op_table[op];
}

const struct op_info *op_lookup(const char *name)
{
	int i;
	for (i = 0; i < OP_COUNT; i++)
		if (i != OP_INPUT && strcmp(op_table[i].name, name) == 0)
			return &op_table[i]; /* "input" is a statement, not a callable op */
	return NULL;
}

const char *op_name(enum op_id op)
{
	return op_table[op].name;
}

int op_has_weights(enum op_id op)
{
	return op_table[op].has_weights;
}
