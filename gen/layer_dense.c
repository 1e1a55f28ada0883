/* layer_dense.c: code for dense layers, Y = X·Wᵀ + b, with a point,
 * dropout(p) or meanfield posterior.
 *
 * Parameters: NAME.weight [units, in] (row-major, like PyTorch's Linear)
 * and NAME.bias [units].  Forward is one GEMM after filling Y with the
 * bias; backward is dW = Gᵀ·X, db = Σ_i G_i, and dX = G·W when the input
 * has a delta (never for the model's input).  The mean of squared
 * per-example gradients is B·(G∘G)ᵀ·(X∘X) (one extra GEMM; see
 * bnn_gen_dense_sqgrad).
 *
 * The posterior families the pass samples itself (struct bnn_pass):
 *   dropout(p)  when rng is given, X̃ = X∘M with M a mask per example and
 *               input unit (0, or 1/(1 − p) with probability 1 − p), drawn
 *               in the noise loop; the layer is then dense on X̃ (dW, db,
 *               sqgrad from X̃) and dX = (G·W)∘M.  Workspace per example:
 *               m_NAME (the mask) and xt_NAME (X̃), in floats each.
 *   meanfield   when rng and sigma are given, the local reparameterisation
 *               trick (Kingma, Salimans and Welling 2015, eq. 6 and 7):
 *               Y = γ + √ν∘ε with γ = X·Wᵀ + b, ν = (X∘X)·(σ_W²)ᵀ + σ_b²
 *               and ε ~ N(0, 1) per example and unit (z_NAME, drawn in the
 *               noise loop; s_NAME keeps √ν), σ² of the layer in a fixed
 *               block v_NAME.  sqgrad is that of the mean path.
 * Without rng (or, for meanfield, without sigma) both are the plain dense
 * layer on w.
 *
 * per_step (on a [T, F] sequence, ops.c): the same layer on each of the
 * T rows, so every product above runs on B·T rows of X instead of B (the
 * row count of the emitted calls, dense_rows).  dropout's mask is drawn
 * per example and step, T·F values per example (PyTorch's nn.Dropout on a
 * [B, T, F] tensor).  meanfield is computed, like gru's, on the weights in
 * w as the runtime's samplers give them, one draw shared by every step:
 * the local reparameterisation would draw the T rows' pre-activations
 * independently, which a weight shared by the steps does not.  The squared
 * per-example gradients sum each example's T steps before squaring
 * (bnn_gen_dense_steps_sqgrad, in a fixed block ps_NAME of units·(F + 1)
 * floats): B products of T rows, the work of the weight gradient again.
 */
#include <stdio.h>

#include "bnn_model.h"
#include "cg.h"

/* T for a per_step layer, else 1: the rows of X per example. */
static long dense_steps(const struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	return n->attrs.per_step ? n->shape[0] : 1;
}

/* The row count of the emitted products: "B", or "B * TL" per step. */
static const char *dense_rows(const struct cg *cg, int node, char *buf, size_t size)
{
	if (!cg->g->nodes[node].attrs.per_step)
		return "B";
	snprintf(buf, size, "B * %ldL", dense_steps(cg, node));
	return buf;
}

/* The family the layer's code samples: a per_step meanfield layer is
 * computed on w, as a point layer is (see above). */
static enum family_id dense_family(const struct cg *cg, int node)
{
	enum family_id fam = cg_family(cg, node);
	return fam == FAMILY_MEANFIELD && cg->g->nodes[node].attrs.per_step ? FAMILY_POINT : fam;
}

int cg_dense_fuses_relu(const struct cg *cg, int node)
{
	enum family_id fam = dense_family(cg, node);
	return (fam == FAMILY_POINT || fam == FAMILY_DROPOUT || fam == FAMILY_MEANFIELD) &&
	       !cg_patched(cg, node);
}

int cg_dense_backward_one_product(const struct cg *cg, int node)
{
	return dense_family(cg, node) == FAMILY_POINT && !cg_patched(cg, node);
}

static int dense_params(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	long in = n->attrs.in_features, out = n->attrs.units;
	long wshape[2] = { out, in }, bshape[2] = { out, 0 };
	int init = cg_feeds_relu(cg, node) ? BNN_INIT_HE_NORMAL : BNN_INIT_GLOROT_UNIFORM;
	if (cg_add_tensor(cg, node, "weight", BNN_ROLE_WEIGHT, 2, wshape, in, out, init) < 0)
		return -1;
	if (n->attrs.bias &&
	    cg_add_tensor(cg, node, "bias", BNN_ROLE_BIAS, 1, bshape, in, out, BNN_INIT_ZERO) < 0)
		return -1;
	return 0;
}

/* Dropout: the mask and X̃ per example; meanfield: ε and √ν per example,
 * σ_W² and σ_b² once. */
static void dense_plan(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	struct cg_node *c = &cg->nodes[node];
	long k = n->attrs.in_features, units = n->attrs.units, t = dense_steps(cg, node);
	if (n->attrs.per_step)
		c->fixed_off = cg_reserve_fixed(cg, units * (k + 1));
	switch (dense_family(cg, node)) {
	case FAMILY_DROPOUT:
		c->noise_off = cg_reserve(cg, 2 * t * k);
		cg->noise_rng = 1;
		break;
	case FAMILY_MEANFIELD:
		c->noise_off = cg_reserve(cg, 2 * units);
		c->fixed_off = cg_reserve_fixed(cg, units * k + (n->attrs.bias ? units : 0));
		cg->noise_sigma = 1;
		c->caps |= BNN_CAP_SIGMA_LRT; /* the descriptor says so (bnn_model.h) */
		break;
	default:
		break;
	}
}

static void dense_declare(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const struct cg_node *c = &cg->nodes[node];
	const char *name = cg_name(cg, node);
	long k = n->attrs.in_features, units = n->attrs.units, tk = dense_steps(cg, node) * k;
	if (n->attrs.per_step)
		emit(cg->e,
		     "\tbnn_real *const ps_%s = ws + %ldL * B + %ldL; /* [%ld] one example's gradient */\n",
		     name, cg->per_example, c->fixed_off, units * (k + 1));
	switch (dense_family(cg, node)) {
	case FAMILY_DROPOUT:
		emit(cg->e,
		     "\tbnn_real *const m_%s = ws + %ldL * B; /* [B, %ld] dropout mask: 0 or 1/(1 - p) */\n"
		     "\tbnn_real *const xt_%s = ws + %ldL * B; /* [B, %ld] input times mask */\n",
		     name, c->noise_off, tk, name, c->noise_off + tk, tk);
		break;
	case FAMILY_MEANFIELD:
		emit(cg->e,
		     "\tbnn_real *const z_%s = ws + %ldL * B; /* [B, %ld] eps ~ N(0, 1) */\n"
		     "\tbnn_real *const s_%s = ws + %ldL * B; /* [B, %ld] sqrt(nu) */\n"
		     "\tbnn_real *const v_%s = ws + %ldL * B + %ldL; /* [%ld] sigma^2 of weight%s */\n",
		     name, c->noise_off, units, name, c->noise_off + units, units, name,
		     cg->per_example, c->fixed_off, units * k + (n->attrs.bias ? units : 0),
		     n->attrs.bias ? ", bias" : "");
		break;
	default:
		break;
	}
}

static void dense_noise(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const char *name = cg_name(cg, node);
	long k = dense_steps(cg, node) * n->attrs.in_features, units = n->attrs.units;
	char p[40];
	switch (dense_family(cg, node)) {
	case FAMILY_DROPOUT:
		emit_double_str(n->family.p, p, sizeof p);
		emit(cg->e, "\t\t\tbnn_gen_dropout_mask(rng, %ld, %s, m_%s + e * %ldL);\n", k, p,
		     name, k);
		break;
	case FAMILY_MEANFIELD:
		if (cg->noise_rng)
			emit(cg->e, "\t\t\tif (sigma)\n\t");
		emit(cg->e, "\t\t\tbnn_gen_normal(rng, %ld, z_%s + e * %ldL);\n", units, name,
		     units);
		break;
	default:
		break;
	}
}

static void dense_forward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const char *name = cg_name(cg, node), *in = cg_name(cg, n->inputs[0]);
	long k = n->attrs.in_features, units = n->attrs.units;
	enum family_id fam = dense_family(cg, node);
	char w[64], b[64], sw[64], sb[64], rb[40];
	const char *rows = dense_rows(cg, node, rb, sizeof rb);
	/* with a relu fused (cg_relu_fusion), the product computes it */
	const char *relu = cg->nodes[node].relu_fused >= 0 ? "_relu" : "";
	cg_param_addr(cg, node, "w", 0, w, b, sizeof w);
	if (fam == FAMILY_DROPOUT) {
		emit(cg->e,
		     "\tif (rng)\n"
		     "\t\tbnn_gen_dropout_apply(B * %ld, a_%s, m_%s, xt_%s);\n"
		     "\tbnn_gen_dense%s_forward(%s, %ld, %ld, rng ? xt_%s : a_%s, %s, %s, a_%s);\n",
		     dense_steps(cg, node) * k, in, name, name, relu, rows, k, units, name, in, w,
		     b, name);
		return;
	}
	if (fam == FAMILY_MEANFIELD) { /* the sampled pass: its relu after it */
		cg_param_addr(cg, node, "sigma", 0, sw, sb, sizeof sw);
		emit(cg->e,
		     "\tif (rng && sigma)%s\n"
		     "\t\tbnn_gen_lrt_forward(B, %ld, %ld, a_%s, %s, %s, %s, %s,\n"
		     "\t\t                    z_%s, sq_x, v_%s, s_%s, a_%s);\n",
		     *relu ? " {" : "", k, units, in, w, b, sw, sb, name, name, name, name);
		if (*relu)
			emit(cg->e, "\t\tbnn_gen_relu_in_place(B * %ld, a_%s);\n\t} else\n\t",
			     units, name);
		else
			emit(cg->e, "\telse\n\t");
	}
	emit(cg->e, "\tbnn_gen_dense%s_forward(%s, %ld, %ld, a_%s, %s, %s, a_%s);\n", relu, rows, k,
	     units, in, w, b, name);
}

static void dense_backward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const char *name = cg_name(cg, node);
	long k = n->attrs.in_features, units = n->attrs.units;
	int in = n->inputs[0], acc;
	const char *a_in = cg_name(cg, in);
	enum family_id fam = dense_family(cg, node);
	char x[400], w[64], b[64], dw[64], db[64], qw[64], qb[64], sw[64], sb[64];
	char gw[96], gb[96], call[1200], rb[40];
	const char *rows = dense_rows(cg, node, rb, sizeof rb);
	cg_param_addr(cg, node, "w", 0, w, b, sizeof w);
	cg_param_addr(cg, node, "grad", 0, dw, db, sizeof dw);
	cg_param_addr(cg, node, "sqgrad", 0, qw, qb, sizeof qw);
	if (fam == FAMILY_DROPOUT)
		snprintf(x, sizeof x, "rng ? xt_%s : a_%s", name, a_in);
	else
		snprintf(x, sizeof x, "a_%s", a_in);
	emit(cg->e, "\tbnn_gen_dense_backward_params(%s, %ld, %ld, %s, d_%s, %s, %s);\n", rows, k,
	     units, x, name, dw, db);
	if (n->attrs.per_step)
		emit(cg->e,
		     "\tif (sqgrad)\n"
		     "\t\tbnn_gen_dense_steps_sqgrad(B, %ld, %ld, %ld, %s, d_%s, %s, %s, ps_%s);\n",
		     dense_steps(cg, node), k, units, x, name, qw, qb, name);
	else
		emit(cg->e,
		     "\tif (sqgrad)\n"
		     "\t\tbnn_gen_dense_sqgrad(B, %ld, %ld, %s, d_%s, %s, %s, sq_x, sq_g);\n",
		     k, units, x, name, qw, qb);
	if (fam == FAMILY_MEANFIELD) {
		/* Gν into sq_g and σ's gradient; then the input's delta, from Gν. */
		cg_param_addr(cg, node, "sigma", 0, sw, sb, sizeof sw);
		cg_param_addr(cg, node, "grad_sigma", 1, gw, gb, sizeof gw);
		snprintf(call, sizeof call,
		         "bnn_gen_lrt_backward_sigma(B, %ld, %ld, a_%s, d_%s, z_%s, s_%s, %s, %s,\n"
		         "\t\t                           %s,\n"
		         "\t\t                           %s, sq_g, sq_x);\n",
		         k, units, a_in, name, name, name, sw, sb, gw, gb);
		if (!cg->nodes[in].has_delta) {
			emit(cg->e, "\tif (rng && sigma && grad_sigma)\n\t\t%s", call);
			return;
		}
		acc = cg_delta_acc(cg, in);
		emit(cg->e,
		     "\tif (rng && sigma) {\n"
		     "\t\t%s"
		     "\t\tbnn_gen_lrt_backward_input(B, %ld, %ld, d_%s, %s, sq_g, v_%s, a_%s,\n"
		     "\t\t                           d_%s, sq_x, %d);\n"
		     "\t} else\n\t",
		     call, k, units, name, w, name, a_in, a_in, acc);
	} else if (!cg->nodes[in].has_delta) {
		return;
	} else if (cg->nodes[in].relu_back == node) { /* cg_relu_back_fusion */
		int pre = cg->g->nodes[in].inputs[0];
		cg_delta_acc(cg, in);
		cg_delta_acc(cg, pre);
		emit(cg->e,
		     "\tbnn_gen_dense_backward_input_relu(%s, %ld, %ld, d_%s, %s, a_%s, d_%s);\n",
		     rows, k, units, name, w, a_in, cg_name(cg, pre));
		return;
	} else {
		acc = cg_delta_acc(cg, in);
		if (fam == FAMILY_DROPOUT)
			emit(cg->e,
			     "\tif (rng)\n"
			     "\t\tbnn_gen_dropout_backward_input(%s, %ld, %ld, d_%s, %s, m_%s, d_%s,\n"
			     "\t\t                               sq_x, %d);\n"
			     "\telse\n\t",
			     rows, k, units, name, w, name, a_in, acc);
	}
	emit(cg->e, "\tbnn_gen_dense_backward_input(%s, %ld, %ld, d_%s, %s, d_%s, %d);\n", rows, k,
	     units, name, w, a_in, acc);
}

const struct cg_layer cg_layer_dense = {
	.params = dense_params,
	.plan = dense_plan,
	.declare = dense_declare,
	.noise = dense_noise,
	.forward = dense_forward,
	.backward = dense_backward,
};
