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
 */
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
 * dqkv, do; and ds, tmp after the per-example part. */
static void attn_plan(struct cg *cg, int node)
{
	const struct attn_shape s = attn_shape(cg, node);
	struct cg_node *c = &cg->nodes[node];
	c->noise_off = cg_reserve(cg, 8 * s.t * s.d + s.h * s.t * s.t);
	c->fixed_off = cg_reserve_fixed(cg, attn_fixed_floats(&s));
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
}

static void attn_forward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const char *name = cg_name(cg, node);
	emit(cg->e,
	     "\tbnn_gen_attn_forward(&at_%s, B, a_%s, w + %ld, aq_%s, aa_%s, ao_%s, a_%s);\n", name,
	     cg_name(cg, n->inputs[0]), cg->tensors[cg->nodes[node].first_tensor].offset, name,
	     name, name, name);
}

static void attn_backward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const char *name = cg_name(cg, node);
	const long off = cg->tensors[cg->nodes[node].first_tensor].offset;
	char dx[160];
	cg_delta_args(cg, n->inputs[0], dx, sizeof dx);
	emit(cg->e,
	     "\tbnn_gen_attn_backward(&at_%s, B, a_%s, w + %ld, d_%s, aq_%s, aa_%s, ao_%s,\n"
	     "\t                      adq_%s, ado_%s, ads_%s, grad + %ld,\n"
	     "\t                      sqgrad ? sqgrad + %ld : NULL, atg_%s, %s);\n",
	     name, cg_name(cg, n->inputs[0]), off, name, name, name, name, name, name, name, off,
	     off, name, dx);
}

const struct cg_layer cg_layer_attention = {
	.params = attn_params,
	.plan = attn_plan,
	.declare = attn_declare,
	.forward = attn_forward,
	.backward = attn_backward,
};
