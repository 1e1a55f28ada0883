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
 *
 * dropout(p): Gal and Ghahramani's variational RNN dropout (2016, sec. 3):
 * when rng is given, one mask per example on the F inputs (gmx_NAME) and
 * one on the U hidden units entering U h (gmh_NAME), each value 0 or
 * 1/(1 − p), the same at every step, drawn in the noise loop (afresh for
 * every pass, so for every MC sample).  Further per-example blocks after
 * the others: the masks, the masked input (gxt, T·F), its delta (gdx,
 * T·F), the masked states (ghm, T·U) and one step's masked hidden delta
 * (gdm, U); bnn_gen/gru.h has the equations.
 */
#include <stdio.h>

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

static int gru_dropout(const struct cg *cg, int node)
{
	return cg_family(cg, node) == FAMILY_DROPOUT;
}

/* Dropout's per-example floats: the two masks, x̃ and its delta, h̃, and
 * one step's masked hidden delta. */
static long gru_dropout_floats(struct gru_shape s)
{
	return s.f + s.u + 2 * s.t * s.f + s.t * s.u + s.u;
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
	c->noise_off = cg_reserve(cg, s.u * (8 * s.t + 5) +
	                                      (gru_dropout(cg, node) ? gru_dropout_floats(s) : 0));
	if (gru_dropout(cg, node))
		cg->noise_rng = 1;
	c->fixed_off = cg_reserve_fixed(cg, 3 * s.u * (wmax + 1));
}

/* Dropout's blocks, from per-example offset OFF on (gru_dropout_floats);
 * x̃'s delta only when the input has a delta. */
static void gru_declare_dropout(struct cg *cg, int node, long off)
{
	const struct gru_shape s = gru_shape(cg, node);
	const char *name = cg_name(cg, node);
	const int dx = cg->nodes[cg->g->nodes[node].inputs[0]].has_delta;
	emit(cg->e, "\tbnn_real *const gmx_%s = ws + %ldL * B; /* [B, %ld] input mask */\n", name,
	     off, s.f);
	off += s.f;
	emit(cg->e, "\tbnn_real *const gmh_%s = ws + %ldL * B; /* [B, %ld] hidden mask */\n", name,
	     off, s.u);
	off += s.u;
	emit(cg->e, "\tbnn_real *const gxt_%s = ws + %ldL * B; /* [B, %ld, %ld] masked input */\n",
	     name, off, s.t, s.f);
	off += s.t * s.f;
	if (dx)
		emit(cg->e,
		     "\tbnn_real *const gdx_%s = ws + %ldL * B; /* [B, %ld, %ld] its delta */\n",
		     name, off, s.t, s.f);
	off += s.t * s.f;
	emit(cg->e, "\tbnn_real *const ghm_%s = ws + %ldL * B; /* [%ld, B, %ld] masked states */\n",
	     name, off, s.t, s.u);
	off += s.t * s.u;
	emit(cg->e,
	     "\tbnn_real *const gdm_%s = ws + %ldL * B; /* [B, %ld] masked hidden delta */\n", name,
	     off, s.u);
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
	off += s.u;
	if (!gru_dropout(cg, node))
		return;
	gru_declare_dropout(cg, node, off);
}

static void gru_noise(struct cg *cg, int node)
{
	const struct gru_shape s = gru_shape(cg, node);
	const char *name = cg_name(cg, node);
	char p[40];
	if (!gru_dropout(cg, node))
		return;
	emit_double_str(cg->g->nodes[node].family.p, p, sizeof p);
	emit(cg->e,
	     "\t\t\tbnn_gen_dropout_mask(rng, %ld, %s, gmx_%s + e * %ldL);\n"
	     "\t\t\tbnn_gen_dropout_mask(rng, %ld, %s, gmh_%s + e * %ldL);\n",
	     s.f, p, name, s.f, s.u, p, name, s.u);
}

/* The arguments that differ with dropout: the input the layer reads (x̃
 * when rng is given), the hidden mask (NULL without rng) and h̃. */
static void gru_masked(const struct cg *cg, int node, char *x, char *mh, char *hm, size_t size)
{
	const char *name = cg_name(cg, node), *in = cg_name(cg, cg->g->nodes[node].inputs[0]);
	if (!gru_dropout(cg, node)) {
		snprintf(x, size, "a_%s", in);
		snprintf(mh, size / 2, "NULL");
		snprintf(hm, size / 2, "NULL");
		return;
	}
	snprintf(x, size, "rng ? gxt_%s : a_%s", name, in);
	snprintf(mh, size / 2, "rng ? gmh_%s : NULL", name);
	snprintf(hm, size / 2, "ghm_%s", name);
}

static void gru_forward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const struct gru_shape s = gru_shape(cg, node);
	const char *name = cg_name(cg, node), *in = cg_name(cg, n->inputs[0]);
	char x[200], mh[100], hm[100];
	gru_masked(cg, node, x, mh, hm, sizeof x);
	if (gru_dropout(cg, node))
		emit(cg->e,
		     "\tif (rng)\n\t\tbnn_gen_gru_mask_steps(B, %ld, %ld, a_%s, gmx_%s, gxt_%s, 0);\n",
		     s.t, s.f, in, name, name);
	emit(cg->e,
	     "\tbnn_gen_gru_forward(B, %ld, %ld, %ld, %d, %s, w + %ld, gq_%s, gn_%s, gs_%s,\n"
	     "\t                    gp_%s, %s, %s, a_%s);\n",
	     s.t, s.f, s.u, n->attrs.sequence, x, cg->tensors[cg->nodes[node].first_tensor].offset,
	     name, name, name, name, mh, hm, name);
}

static void gru_backward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const struct gru_shape s = gru_shape(cg, node);
	const char *name = cg_name(cg, node);
	const long off = cg->tensors[cg->nodes[node].first_tensor].offset;
	const int in = n->inputs[0];
	char dx[160], x[200], mh[100], hm[100], dm[100];
	int acc = 0;
	gru_masked(cg, node, x, mh, hm, sizeof x);
	snprintf(dm, sizeof dm, gru_dropout(cg, node) ? "gdm_%s" : "NULL", name);
	if (!gru_dropout(cg, node) || !cg->nodes[in].has_delta) {
		cg_delta_args(cg, in, dx, sizeof dx);
	} else { /* x̃'s delta first, then masked into the input's */
		acc = cg_delta_acc(cg, in);
		snprintf(dx, sizeof dx, "rng ? gdx_%s : d_%s, rng ? 0 : %d", name, cg_name(cg, in),
		         acc);
	}
	emit(cg->e,
	     "\tbnn_gen_gru_backward(B, %ld, %ld, %ld, %d, %s, w + %ld, d_%s, gq_%s, gn_%s,\n"
	     "\t                     gs_%s, %s, %s, %s, gg_%s, gd_%s, grad + %ld,\n"
	     "\t                     sqgrad ? sqgrad + %ld : NULL, gt_%s, %s);\n",
	     s.t, s.f, s.u, n->attrs.sequence, x, off, name, name, name, name, mh, hm, dm, name,
	     name, off, off, name, dx);
	if (gru_dropout(cg, node) && cg->nodes[in].has_delta)
		emit(cg->e,
		     "\tif (rng)\n\t\tbnn_gen_gru_mask_steps(B, %ld, %ld, gdx_%s, gmx_%s, d_%s, %d);\n",
		     s.t, s.f, name, name, cg_name(cg, in), acc);
}

const struct cg_layer cg_layer_gru = {
	.params = gru_params,
	.plan = gru_plan,
	.declare = gru_declare,
	.noise = gru_noise,
	.forward = gru_forward,
	.backward = gru_backward,
};
