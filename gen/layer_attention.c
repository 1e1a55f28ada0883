/* layer_attention.c: code for attention layers, multi-head self-attention
 * over a [T, F] (time, features) sequence into [T, D], with a point or
 * meanfield posterior (bnn_gen/attention.h has the equations).
 *
 * Parameters, named as PyTorch's nn.MultiheadAttention where the
 * checkpoint's naming allows (one dot, between the layer and its tensor):
 * NAME.in_proj_weight [3D, F] (rows Q, K, V; role weight, fan-in F),
 * NAME.in_proj_bias [3D], NAME.out_proj_weight [D, D] (PyTorch's
 * out_proj.weight; fan-in D), NAME.out_proj_bias [D] (biases, zero at
 * first).  Four tensors, as gru's, so weight decay, the initialisation by
 * fan-in and the summary treat them as dense layers' tensors; added in
 * that order they are one contiguous block of 3D(F + 1) + D(D + 1) values,
 * which the kernels take as a single pointer.  Initialisation: Glorot
 * uniform for both matrices (PyTorch's choice for in_proj_weight).
 *
 * Workspace: the per-example blocks of bnn_gen/attention.h (qkv, a, o,
 * dqkv, do: 8TD + HT² floats per example) and one block independent of
 * the batch (ds and tmp, T² + max(3DF, D²) + 3D floats).
 *
 * meanfield: as for gru, the layer is computed on the weights in w, as the
 * runtime's samplers give them (one draw per pass, shared by every
 * position); it ignores sigma.
 *
 * dropout(p): MC dropout on the layer's input units, as for a per_step
 * dense layer (Gal and Ghahramani 2016, "Dropout as a Bayesian
 * Approximation", sec. 3: dropping input units of a layer is drawing
 * Bernoulli rows of its weight matrix, the paper writing x·W; here the
 * columns of W_in [3D, F], shared by Q, K and V, drawn anew at every
 * position).  When rng is given, a mask M per example, position and input
 * feature (am_NAME, T·F values per example, each 0 or 1/(1 − p)) is drawn
 * in the noise loop, afresh for every pass and so for every MC sample;
 * the layer then reads X̃ = X∘M (axt_NAME) before the Q, K, V projection:
 * W_in's and b_in's gradients and their per-example squares come from X̃,
 * and the input's delta is δX̃∘M (δX̃ in adx_NAME, then masked by
 * bnn_gen_dropout_mask_into, as conv2d does).  Without rng the layer is
 * the plain attention on X.  Workspace: T·F floats per example for the
 * mask, T·F for X̃ and, when the input has a delta, T·F for δX̃.
 */
#include <stdio.h>

#include "bnn_model.h"
#include "cg.h"

/* The shape of an attention node: T positions of F features, dim D in H
 * heads. */
struct attn_shape {
	long t, f, d, h;
	int causal;
};

static struct attn_shape attn_shape(const struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const struct graph_node *in = &cg->g->nodes[n->inputs[0]];
	struct attn_shape s = { in->shape[0], in->shape[1], n->attrs.units, n->attrs.heads,
		                n->attrs.causal };
	return s;
}

static int attn_dropout(const struct cg *cg, int node)
{
	return cg_family(cg, node) == FAMILY_DROPOUT;
}

/* Whether the layer's input has a delta (then dropout's δX̃ is needed). */
static int attn_input_delta(const struct cg *cg, int node)
{
	return cg->nodes[cg->g->nodes[node].inputs[0]].has_delta;
}

/* Dropout's per-example floats: the mask, X̃ and, when the input has a
 * delta, δX̃ (T·F each); 0 for the other families. */
static long attn_dropout_floats(const struct cg *cg, int node, const struct attn_shape *s)
{
	if (!attn_dropout(cg, node))
		return 0;
	return (2 + attn_input_delta(cg, node)) * s->t * s->f;
}

/* The batch-independent scratch: ds [T, T], then tmp. */
static long attn_fixed_floats(const struct attn_shape *s)
{
	const long e = 3 * s->d * s->f, o = s->d * s->d;
	return s->t * s->t + (e > o ? e : o) + 3 * s->d;
}

static int attn_params(struct cg *cg, int node)
{
	const struct attn_shape s = attn_shape(cg, node);
	const long e = 3 * s.d;
	long wi[2] = { e, s.f }, bi[2] = { e, 0 }, wo[2] = { s.d, s.d }, bo[2] = { s.d, 0 };
	if (cg_add_tensor(cg, node, "in_proj_weight", BNN_ROLE_WEIGHT, 2, wi, s.f, e,
	                  BNN_INIT_GLOROT_UNIFORM) < 0 ||
	    cg_add_tensor(cg, node, "in_proj_bias", BNN_ROLE_BIAS, 1, bi, s.f, e, BNN_INIT_ZERO) <
	            0 ||
	    cg_add_tensor(cg, node, "out_proj_weight", BNN_ROLE_WEIGHT, 2, wo, s.d, s.d,
	                  BNN_INIT_GLOROT_UNIFORM) < 0 ||
	    cg_add_tensor(cg, node, "out_proj_bias", BNN_ROLE_BIAS, 1, bo, s.d, s.d,
	                  BNN_INIT_ZERO) < 0)
		return -1;
	return 0;
}

/* The per-example blocks, one after another from noise_off: qkv, a, o,
 * dqkv, do, then dropout's (attn_dropout_floats); and ds, tmp after the
 * per-example part. */
static void attn_plan(struct cg *cg, int node)
{
	const struct attn_shape s = attn_shape(cg, node);
	struct cg_node *c = &cg->nodes[node];
	c->noise_off =
	        cg_reserve(cg, 8 * s.t * s.d + s.h * s.t * s.t + attn_dropout_floats(cg, node, &s));
	if (attn_dropout(cg, node))
		cg->noise_rng = 1;
	c->fixed_off = cg_reserve_fixed(cg, attn_fixed_floats(&s));
}

/* Dropout's blocks, from per-example offset OFF on: the mask, X̃ and δX̃
 * (only when the input has a delta). */
static void attn_declare_dropout(struct cg *cg, int node, long off)
{
	const struct attn_shape s = attn_shape(cg, node);
	const char *name = cg_name(cg, node);
	const long tf = s.t * s.f;
	emit(cg->e,
	     "\tbnn_real *const am_%s = ws + %ldL * B; /* [B, %ld, %ld] dropout mask: 0 or "
	     "1/(1 - p) */\n"
	     "\tbnn_real *const axt_%s = ws + %ldL * B; /* [B, %ld, %ld] input times mask */\n",
	     name, off, s.t, s.f, name, off + tf, s.t, s.f);
	if (attn_input_delta(cg, node))
		emit(cg->e,
		     "\tbnn_real *const adx_%s = ws + %ldL * B; /* [B, %ld, %ld] its delta */\n",
		     name, off + 2 * tf, s.t, s.f);
}

static void attn_declare(struct cg *cg, int node)
{
	const struct attn_shape s = attn_shape(cg, node);
	const struct cg_node *c = &cg->nodes[node];
	const char *name = cg_name(cg, node);
	const long e = 3 * s.d;
	long off = c->noise_off;
	emit(cg->e,
	     "\tconst struct bnn_gen_attn at_%s = { %ld, %ld, %ld, %ld, %d };\n"
	     "\tbnn_real *const aq_%s = ws + %ldL * B; /* [B, %ld, %ld] Q, K, V */\n",
	     name, s.t, s.f, s.d, s.h, s.causal, name, off, s.t, e);
	off += s.t * e;
	emit(cg->e, "\tbnn_real *const aa_%s = ws + %ldL * B; /* [B, %ld, %ld, %ld] weights */\n",
	     name, off, s.h, s.t, s.t);
	off += s.h * s.t * s.t;
	emit(cg->e, "\tbnn_real *const ao_%s = ws + %ldL * B; /* [B, %ld, %ld] heads */\n", name,
	     off, s.t, s.d);
	off += s.t * s.d;
	emit(cg->e, "\tbnn_real *const adq_%s = ws + %ldL * B; /* [B, %ld, %ld] δQ, δK, δV */\n",
	     name, off, s.t, e);
	off += s.t * e;
	emit(cg->e,
	     "\tbnn_real *const ado_%s = ws + %ldL * B; /* [B, %ld, %ld] δ of the heads */\n"
	     "\tbnn_real *const ads_%s = ws + %ldL * B + %ldL; /* [%ld, %ld] one head's δS */\n"
	     "\tbnn_real *const atg_%s = ads_%s + %ldL; /* one example's gradient */\n",
	     name, off, s.t, s.d, name, cg->per_example, c->fixed_off, s.t, s.t, name, name,
	     s.t * s.t);
	off += s.t * s.d;
	if (attn_dropout(cg, node))
		attn_declare_dropout(cg, node, off);
}

static void attn_noise(struct cg *cg, int node)
{
	const struct attn_shape s = attn_shape(cg, node);
	const char *name = cg_name(cg, node);
	char p[40];
	if (!attn_dropout(cg, node))
		return;
	emit_double_str(cg->g->nodes[node].family.p, p, sizeof p);
	emit(cg->e, "\t\t\tbnn_gen_dropout_mask(rng, %ld, %s, am_%s + e * %ldL);\n", s.t * s.f, p,
	     name, s.t * s.f);
}

/* The input the projections read: X̃ when rng is given to a dropout layer,
 * else X. */
static void attn_input(const struct cg *cg, int node, char *buf, size_t size)
{
	const char *name = cg_name(cg, node), *in = cg_name(cg, cg->g->nodes[node].inputs[0]);
	if (attn_dropout(cg, node))
		snprintf(buf, size, "rng ? axt_%s : a_%s", name, in);
	else
		snprintf(buf, size, "a_%s", in);
}

static void attn_forward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const struct attn_shape s = attn_shape(cg, node);
	const char *name = cg_name(cg, node);
	char x[200];
	attn_input(cg, node, x, sizeof x);
	if (attn_dropout(cg, node))
		emit(cg->e,
		     "\tif (rng)\n\t\tbnn_gen_dropout_apply(B * %ldL, a_%s, am_%s, axt_%s);\n",
		     s.t * s.f, cg_name(cg, n->inputs[0]), name, name);
	emit(cg->e, "\tbnn_gen_attn_forward(&at_%s, B, %s, w + %ld, aq_%s, aa_%s, ao_%s, a_%s);\n",
	     name, x, cg->tensors[cg->nodes[node].first_tensor].offset, name, name, name, name);
}

static void attn_backward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const struct attn_shape s = attn_shape(cg, node);
	const char *name = cg_name(cg, node), *in = cg_name(cg, n->inputs[0]);
	const long off = cg->tensors[cg->nodes[node].first_tensor].offset;
	const int masked = attn_dropout(cg, node) && attn_input_delta(cg, node);
	char dx[160], x[200];
	int acc = 0;
	attn_input(cg, node, x, sizeof x);
	if (!masked) {
		cg_delta_args(cg, n->inputs[0], dx, sizeof dx);
	} else { /* δX̃ first, then masked into the input's delta */
		acc = cg_delta_acc(cg, n->inputs[0]);
		snprintf(dx, sizeof dx, "rng ? adx_%s : d_%s, rng ? 0 : %d", name, in, acc);
	}
	emit(cg->e,
	     "\tbnn_gen_attn_backward(&at_%s, B, %s, w + %ld, d_%s, aq_%s, aa_%s, ao_%s,\n"
	     "\t                      adq_%s, ado_%s, ads_%s, grad + %ld,\n"
	     "\t                      sqgrad ? sqgrad + %ld : NULL, atg_%s, %s);\n",
	     name, x, off, name, name, name, name, name, name, name, off, off, name, dx);
	if (masked)
		emit(cg->e,
		     "\tif (rng)\n\t\tbnn_gen_dropout_mask_into(B * %ldL, adx_%s, am_%s, d_%s, %d);\n",
		     s.t * s.f, name, name, in, acc);
}

const struct cg_layer cg_layer_attention = {
	.params = attn_params,
	.plan = attn_plan,
	.declare = attn_declare,
	.noise = attn_noise,
	.forward = attn_forward,
	.backward = attn_backward,
};
