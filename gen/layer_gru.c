/* layer_gru.c: code for gru layers, a gated recurrent unit over the steps
 * of a [T, F] (time, features) sequence, with a point or meanfield
 * posterior (bnn_gen/gru.h has the equations, gate order r, z, n).
 *
 * Parameters, as PyTorch's nn.GRU (so its weights map one to one):
 * NAME.weight_ih [3U, F] and NAME.weight_hh [3U, U] (roles: weights, with
 * fan-in F and U), NAME.bias_ih [3U] and NAME.bias_hh [3U] (biases, zero at
 * first).  Four tensors rather than one, so that the optimizers' weight
 * decay, the initialisation by fan-in and the summary treat each as they
 * treat dense layers' tensors; added in that order, they are one
 * contiguous block of 3U(F + U + 2) values, which the kernels take as a
 * single pointer.  Initialisation: Glorot uniform for both matrices (the
 * gates are sigmoid and tanh units).
 *
 * Workspace: the per-example blocks of bnn_gen/gru.h (q, hn, hs, gh, hh,
 * dh: U(8T + 5) floats per example) and one block independent of the
 * batch (tmp, 3U(max(F, U) + 1) floats) for the per-example gradients
 * whose squares are summed.
 *
 * meanfield: as for layernorm, the layer is computed on the weights in w,
 * as the runtime's samplers give them (one draw per pass, shared by every
 * time step); it ignores sigma.
 */
#include "bnn_model.h"
#include "cg.h"

/* The shape of a gru node: T steps of F features, U units. */
struct gru_shape {
	long t, f, u;
};

static struct gru_shape gru_shape(const struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const struct graph_node *in = &cg->g->nodes[n->inputs[0]];
	struct gru_shape s = { in->shape[0], in->shape[1], n->attrs.units };
	return s;
}

static int gru_params(struct cg *cg, int node)
{
	const struct gru_shape s = gru_shape(cg, node);
	const long g = 3 * s.u;
	long wi[2] = { g, s.f }, wh[2] = { g, s.u }, b[2] = { g, 0 };
	if (cg_add_tensor(cg, node, "weight_ih", BNN_ROLE_WEIGHT, 2, wi, s.f, g,
	                  BNN_INIT_GLOROT_UNIFORM) < 0 ||
	    cg_add_tensor(cg, node, "weight_hh", BNN_ROLE_WEIGHT, 2, wh, s.u, g,
	                  BNN_INIT_GLOROT_UNIFORM) < 0 ||
	    cg_add_tensor(cg, node, "bias_ih", BNN_ROLE_BIAS, 1, b, s.f, g, BNN_INIT_ZERO) < 0 ||
	    cg_add_tensor(cg, node, "bias_hh", BNN_ROLE_BIAS, 1, b, s.u, g, BNN_INIT_ZERO) < 0)
		return -1;
	return 0;
}

/* The per-example blocks, one after another from noise_off: q, hn, hs,
 * gh, hh, dh; and tmp after the per-example part. */
static void gru_plan(struct cg *cg, int node)
{
	const struct gru_shape s = gru_shape(cg, node);
	const long wmax = s.f > s.u ? s.f : s.u;
	struct cg_node *c = &cg->nodes[node];
	c->noise_off = cg_reserve(cg, s.u * (8 * s.t + 5));
	c->fixed_off = cg_reserve_fixed(cg, 3 * s.u * (wmax + 1));
}

static void gru_declare(struct cg *cg, int node)
{
	const struct gru_shape s = gru_shape(cg, node);
	const struct cg_node *c = &cg->nodes[node];
	const char *name = cg_name(cg, node);
	const long g = 3 * s.u, wmax = s.f > s.u ? s.f : s.u;
	long off = c->noise_off;
	emit(cg->e, "\tbnn_real *const gq_%s = ws + %ldL * B; /* [B, %ld, %ld] gates */\n", name,
	     off, s.t, g);
	off += s.t * g;
	emit(cg->e, "\tbnn_real *const gn_%s = ws + %ldL * B; /* [%ld, B, %ld] U_n h + b_hn */\n",
	     name, off, s.t, s.u);
	off += s.t * s.u;
	emit(cg->e, "\tbnn_real *const gs_%s = ws + %ldL * B; /* [%ld, B, %ld] states */\n", name,
	     off, s.t + 1, s.u);
	off += (s.t + 1) * s.u;
	emit(cg->e, "\tbnn_real *const gg_%s = ws + %ldL * B; /* [%ld, B, %ld] hidden deltas */\n",
	     name, off, s.t, g);
	off += s.t * g;
	emit(cg->e, "\tbnn_real *const gp_%s = ws + %ldL * B; /* [B, %ld] U h + b_hh */\n", name,
	     off, g);
	off += g;
	emit(cg->e,
	     "\tbnn_real *const gd_%s = ws + %ldL * B; /* [B, %ld] state delta */\n"
	     "\tbnn_real *const gt_%s = ws + %ldL * B + %ldL; /* [%ld] one example's gradient */\n",
	     name, off, s.u, name, cg->per_example, c->fixed_off, g * (wmax + 1));
}

static void gru_forward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const struct gru_shape s = gru_shape(cg, node);
	const char *name = cg_name(cg, node);
	emit(cg->e,
	     "\tbnn_gen_gru_forward(B, %ld, %ld, %ld, %d, a_%s, w + %ld, gq_%s, gn_%s, gs_%s,\n"
	     "\t                    gp_%s, a_%s);\n",
	     s.t, s.f, s.u, n->attrs.sequence, cg_name(cg, n->inputs[0]),
	     cg->tensors[cg->nodes[node].first_tensor].offset, name, name, name, name, name);
}

static void gru_backward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const struct gru_shape s = gru_shape(cg, node);
	const char *name = cg_name(cg, node);
	const long off = cg->tensors[cg->nodes[node].first_tensor].offset;
	char dx[160];
	cg_delta_args(cg, n->inputs[0], dx, sizeof dx);
	emit(cg->e,
	     "\tbnn_gen_gru_backward(B, %ld, %ld, %ld, %d, a_%s, w + %ld, d_%s, gq_%s, gn_%s,\n"
	     "\t                     gs_%s, gg_%s, gd_%s, grad + %ld,\n"
	     "\t                     sqgrad ? sqgrad + %ld : NULL, gt_%s, %s);\n",
	     s.t, s.f, s.u, n->attrs.sequence, cg_name(cg, n->inputs[0]), off, name, name, name,
	     name, name, name, off, off, name, dx);
}

const struct cg_layer cg_layer_gru = {
	.params = gru_params,
	.plan = gru_plan,
	.declare = gru_declare,
	.forward = gru_forward,
	.backward = gru_backward,
};
