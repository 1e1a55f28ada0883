/* layer_whvi.c: code for dense layers with a whvi(flows = F) posterior
 * (Rossi et al., "Walsh-Hadamard Variational Inference for Bayesian Deep
 * Learning", NeurIPS 2020).
 *
 * The Dout × Din weight is `stack` square blocks W_j = S1_j·H·diag(g_j)·H·S2_j
 * of side D = 2^⌈log2 Din⌉ (eq. 2; the input padded with zeros to D and
 * ⌈Dout/D⌉ blocks stacked, Algorithm 1, dsl/whvi_dims.c), H the orthonormal
 * Walsh-Hadamard matrix.  Tensors, in this order (their sizes add up to
 * whvi_params(), what bnnc --summary prints):
 *   NAME.s1, NAME.s2    [stack, D]      S1, S2 (optimised, start at 1)
 *   NAME.g_mean         [stack, D]      μ of q(g) = N(μ, diag(σ²))
 *   NAME.g_rho          [stack, D]      ρ, σ = softplus(ρ) (starts at σ = 0.01)
 *   NAME.flow_u, flow_w [stack, F, D]   planar flows (appendix C, eq. 20)
 *   NAME.flow_b         [stack, F]
 *   NAME.bias, bias_rho [Dout]          a meanfield bias: mean, ρ
 * μ starts as N(0, 2) before a ReLU-like unit (He), U(±√3) otherwise
 * (Glorot): with S1 = S2 = 1 the mean weight H·diag(μ)·H then has entries
 * of variance Var(μ)/D, He's 2/D and Glorot's 1/D for a square block.
 *
 * With rng, each example draws ε for g (stack·D values, then Dout for the
 * bias) in the pass's noise loop: g = μ + σ∘ε per example, so the layer's
 * output has the distribution of the local reparameterisation (section
 * 2.3, eq. 6), and the bias adds σ_b∘ε_b.  Without rng, g = μ and the
 * bias is its mean.  The flows, if any, transform each example's g.
 * Workspace per example: ε of g and of the bias, t = H·S2·x̄ and v = H·g∘t
 * (kept for backward), and with flows z_0 .. z_{F−1}, z_F and its delta;
 * independent of the batch: σ and sigmoid(ρ) of g and of the bias.
 */
#include "bnn_model.h"
#include "cg.h"
#include "ops.h"

/* The order of the layer's tensors (then the bias's mean and ρ). */
enum {
	WV_S1,
	WV_S2,
	WV_MU,
	WV_RHO,
	WV_FU,
	WV_FW,
	WV_FB
};

static void wv_dims(const struct cg *cg, int node, struct whvi_dims *w)
{
	const struct graph_node *n = &cg->g->nodes[node];
	whvi_dims(n->attrs.in_features, n->attrs.units, w);
}

/* The offset in the parameters of the node's tensor I (WV_*; the flow
 * tensors exist only with flows). */
static long wv_off(const struct cg *cg, int node, int i)
{
	const struct cg_node *c = &cg->nodes[node];
	return cg->tensors[c->first_tensor + i].offset;
}

/* The offset of the node's bias mean (RHO 0) or ρ (RHO 1). */
static long wv_bias_off(const struct cg *cg, int node, int rho)
{
	const struct cg_node *c = &cg->nodes[node];
	int flows = cg->g->nodes[node].family.flows;
	return cg->tensors[c->first_tensor + 4 + (flows > 0 ? 3 : 0) + rho].offset;
}

static int wv_params(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	long dout = n->attrs.units, f = n->family.flows;
	struct whvi_dims w;
	long shape[2], fshape[3], bshape[2] = { dout, 0 };
	int relu = cg_feeds_relu(cg, node);
	wv_dims(cg, node, &w);
	shape[0] = w.stack;
	shape[1] = w.d;
	fshape[0] = w.stack;
	fshape[1] = f;
	fshape[2] = w.d;
	if (cg_add_tensor(cg, node, "s1", BNN_ROLE_WHVI_S1, 2, shape, 0, 0, BNN_INIT_ONE) < 0 ||
	    cg_add_tensor(cg, node, "s2", BNN_ROLE_WHVI_S2, 2, shape, 0, 0, BNN_INIT_ONE) < 0 ||
	    cg_add_tensor(cg, node, "g_mean", BNN_ROLE_WHVI_G_MEAN, 2, shape, 1, 1,
	                  relu ? BNN_INIT_HE_NORMAL : BNN_INIT_GLOROT_UNIFORM) < 0 ||
	    cg_add_tensor(cg, node, "g_rho", BNN_ROLE_WHVI_G_RHO, 2, shape, 0, 0, BNN_INIT_RHO) < 0)
		return -1;
	if (f > 0) {
		long bs[2] = { w.stack, f };
		/* u, w: U(±√(3/D)) (Glorot with fan-in and fan-out D), so that the
         * flows start near the identity but not at its saddle (u = w = 0
         * gives no gradient to either) */
		if (cg_add_tensor(cg, node, "flow_u", BNN_ROLE_WHVI_FLOW_U, 3, fshape, w.d, w.d,
		                  BNN_INIT_GLOROT_UNIFORM) < 0 ||
		    cg_add_tensor(cg, node, "flow_w", BNN_ROLE_WHVI_FLOW_W, 3, fshape, w.d, w.d,
		                  BNN_INIT_GLOROT_UNIFORM) < 0 ||
		    cg_add_tensor(cg, node, "flow_b", BNN_ROLE_WHVI_FLOW_B, 2, bs, 0, 0,
		                  BNN_INIT_ZERO) < 0)
			return -1;
	}
	if (n->attrs.bias &&
	    (cg_add_tensor(cg, node, "bias", BNN_ROLE_BIAS, 1, bshape, 0, 0, BNN_INIT_ZERO) < 0 ||
	     cg_add_tensor(cg, node, "bias_rho", BNN_ROLE_WHVI_BIAS_RHO, 1, bshape, 0, 0,
	                   BNN_INIT_RHO) < 0))
		return -1;
	return 0;
}

/* Per example: ε of g (SD = stack·D), ε of the bias (Dout), t, v (SD
 * each); with flows z_0 .. z_{F−1} (F·SD), z_F and its delta (SD each).
 * Fixed: σ and sigmoid(ρ) of g (SD each) and of the bias (Dout each). */
static void whvi_plan(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	struct cg_node *c = &cg->nodes[node];
	long dout = n->attrs.units, f = n->family.flows, sd;
	struct whvi_dims w;
	wv_dims(cg, node, &w);
	sd = w.stack * w.d;
	c->noise_off =
	        cg_reserve(cg, 3 * sd + (n->attrs.bias ? dout : 0) + (f > 0 ? (f + 2) * sd : 0));
	c->fixed_off = cg_reserve_fixed(cg, 2 * sd + (n->attrs.bias ? 2 * dout : 0));
	cg->noise_rng = 1;
}

static void whvi_declare(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const struct cg_node *c = &cg->nodes[node];
	const char *name = cg_name(cg, node);
	long dout = n->attrs.units, f = n->family.flows, sd, off = c->noise_off;
	long fix = c->fixed_off;
	struct whvi_dims w;
	wv_dims(cg, node, &w);
	sd = w.stack * w.d;
	emit(cg->e,
	     "\tstatic const bnn_gen_whvi wv_%s = { %ldL, %ldL, %ldL, %ldL, %ldL };\n"
	     "\tbnn_real *const zg_%s = ws + %ldL * B; /* [B, %ld] eps of g */\n"
	     "\tbnn_real *const t_%s = ws + %ldL * B; /* [B, %ld] H S2 x */\n"
	     "\tbnn_real *const v_%s = ws + %ldL * B; /* [B, %ld] H diag(g) H S2 x */\n"
	     "\tbnn_real *const gsd_%s = ws + %ldL * B + %ldL; /* [%ld] sigma of g */\n"
	     "\tbnn_real *const gsg_%s = ws + %ldL * B + %ldL; /* [%ld] sigmoid(rho) */\n",
	     name, n->attrs.in_features, dout, w.d, w.stack, f, name, off, sd, name, off + sd, sd,
	     name, off + 2 * sd, sd, name, cg->per_example, fix, sd, name, cg->per_example,
	     fix + sd, sd);
	off += 3 * sd;
	if (n->attrs.bias) {
		emit(cg->e,
		     "\tbnn_real *const zb_%s = ws + %ldL * B; /* [B, %ld] eps of the bias */\n"
		     "\tbnn_real *const bsd_%s = ws + %ldL * B + %ldL; /* [%ld] sigma of the bias */\n"
		     "\tbnn_real *const bsg_%s = ws + %ldL * B + %ldL; /* [%ld] sigmoid(rho) */\n",
		     name, off, dout, name, cg->per_example, fix + 2 * sd, dout, name,
		     cg->per_example, fix + 2 * sd + dout, dout);
		off += dout;
	}
	if (f > 0)
		emit(cg->e,
		     "\tbnn_real *const zk_%s = ws + %ldL * B; /* [B, %ld] z_0 .. z_F-1 of the flows */\n"
		     "\tbnn_real *const gx_%s = ws + %ldL * B; /* [B, %ld] g = z_F */\n"
		     "\tbnn_real *const dgx_%s = ws + %ldL * B; /* [B, %ld] its delta */\n",
		     name, off, f * sd, name, off + f * sd, sd, name, off + (f + 1) * sd, sd);
}

static void whvi_noise(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const char *name = cg_name(cg, node);
	long dout = n->attrs.units, sd;
	struct whvi_dims w;
	wv_dims(cg, node, &w);
	sd = w.stack * w.d;
	emit(cg->e, "\t\t\tbnn_gen_normal(rng, %ld, zg_%s + e * %ldL);\n", sd, name, sd);
	if (n->attrs.bias)
		emit(cg->e, "\t\t\tbnn_gen_normal(rng, %ld, zb_%s + e * %ldL);\n", dout, name,
		     dout);
}

static void whvi_forward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const char *name = cg_name(cg, node), *in = cg_name(cg, n->inputs[0]);
	long dout = n->attrs.units, sd;
	int flows = n->family.flows > 0;
	char bmu[64], bsd[64], beps[64];
	struct whvi_dims w;
	wv_dims(cg, node, &w);
	sd = w.stack * w.d;
	emit(cg->e, "\tbnn_gen_whvi_scales(%ld, w + %ld, gsd_%s, gsg_%s);\n", sd,
	     wv_off(cg, node, WV_RHO), name, name);
	if (n->attrs.bias) {
		emit(cg->e, "\tbnn_gen_whvi_scales(%ld, w + %ld, bsd_%s, bsg_%s);\n", dout,
		     wv_bias_off(cg, node, 1), name, name);
		snprintf(bmu, sizeof bmu, "w + %ld", wv_bias_off(cg, node, 0));
		snprintf(bsd, sizeof bsd, "bsd_%s", name);
		snprintf(beps, sizeof beps, "rng ? zb_%s : NULL", name);
	} else {
		snprintf(bmu, sizeof bmu, "NULL");
		snprintf(bsd, sizeof bsd, "NULL");
		snprintf(beps, sizeof beps, "NULL");
	}
	if (flows)
		emit(cg->e,
		     "\tbnn_gen_whvi_flows_forward(&wv_%s, B, w + %ld, gsd_%s, rng ? zg_%s : NULL,\n"
		     "\t                           w + %ld, w + %ld, w + %ld, zk_%s, gx_%s);\n",
		     name, wv_off(cg, node, WV_MU), name, name, wv_off(cg, node, WV_FU),
		     wv_off(cg, node, WV_FW), wv_off(cg, node, WV_FB), name, name);
	emit(cg->e,
	     "\tbnn_gen_whvi_forward(&wv_%s, B, a_%s, w + %ld, w + %ld, w + %ld, gsd_%s,\n"
	     "\t                     rng ? zg_%s : NULL, %s%s, %s, %s, %s,\n"
	     "\t                     t_%s, v_%s, a_%s);\n",
	     name, in, wv_off(cg, node, WV_S1), wv_off(cg, node, WV_S2), wv_off(cg, node, WV_MU),
	     name, name, flows ? "gx_" : "NULL", flows ? name : "", bmu, bsd, beps, name, name,
	     name);
}

static void whvi_backward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const char *name = cg_name(cg, node);
	int in = n->inputs[0], flows = n->family.flows > 0, acc = 0;
	const char *a_in = cg_name(cg, in);
	char g[6][64], q[6][80], bsg[64], beps[64], dx[64];
	long offs[6];
	int i;
	offs[0] = wv_off(cg, node, WV_S1);
	offs[1] = wv_off(cg, node, WV_S2);
	offs[2] = wv_off(cg, node, WV_MU);
	offs[3] = wv_off(cg, node, WV_RHO);
	offs[4] = n->attrs.bias ? wv_bias_off(cg, node, 0) : -1;
	offs[5] = n->attrs.bias ? wv_bias_off(cg, node, 1) : -1;
	for (i = 0; i < 6; i++) {
		if (offs[i] < 0) {
			snprintf(g[i], sizeof g[i], "NULL");
			snprintf(q[i], sizeof q[i], "NULL");
		} else {
			snprintf(g[i], sizeof g[i], "grad + %ld", offs[i]);
			snprintf(q[i], sizeof q[i], "sqgrad ? sqgrad + %ld : NULL", offs[i]);
		}
	}
	snprintf(bsg, sizeof bsg, n->attrs.bias ? "bsg_%s" : "NULL", name);
	snprintf(beps, sizeof beps, n->attrs.bias ? "rng ? zb_%s : NULL" : "NULL", name);
	if (cg->nodes[in].has_delta) {
		acc = cg_delta_acc(cg, in);
		snprintf(dx, sizeof dx, "d_%s", a_in);
	} else {
		snprintf(dx, sizeof dx, "NULL");
	}
	emit(cg->e,
	     "\tbnn_gen_whvi_backward(&wv_%s, B, a_%s, w + %ld, w + %ld, w + %ld, gsd_%s, gsg_%s,\n"
	     "\t                      rng ? zg_%s : NULL, %s%s, %s, %s, d_%s, t_%s, v_%s,\n"
	     "\t                      %s, %s, %s, %s,\n"
	     "\t                      %s, %s,\n"
	     "\t                      %s, %s,\n"
	     "\t                      %s, %s,\n"
	     "\t                      %s, %s,\n"
	     "\t                      %s%s, %s, %d);\n",
	     name, a_in, offs[0], offs[1], offs[2], name, name, name, flows ? "gx_" : "NULL",
	     flows ? name : "", bsg, beps, name, name, name, g[0], g[1], g[2], g[3], g[4], g[5],
	     q[0], q[1], q[2], q[3], q[4], q[5], flows ? "dgx_" : "NULL", flows ? name : "", dx,
	     acc);
	if (flows) {
		long fu = wv_off(cg, node, WV_FU), fw = wv_off(cg, node, WV_FW),
		     fb = wv_off(cg, node, WV_FB);
		emit(cg->e,
		     "\tbnn_gen_whvi_flows_backward(&wv_%s, B, gsg_%s, rng ? zg_%s : NULL,\n"
		     "\t                            w + %ld, w + %ld, w + %ld, zk_%s, dgx_%s,\n"
		     "\t                            grad + %ld, grad + %ld,\n"
		     "\t                            grad + %ld, grad + %ld, grad + %ld,\n"
		     "\t                            sqgrad ? sqgrad + %ld : NULL, sqgrad ? sqgrad + %ld : NULL,\n"
		     "\t                            sqgrad ? sqgrad + %ld : NULL, sqgrad ? sqgrad + %ld : NULL,\n"
		     "\t                            sqgrad ? sqgrad + %ld : NULL);\n",
		     name, name, name, fu, fw, fb, name, name, offs[2], offs[3], fu, fw, fb,
		     offs[2], offs[3], fu, fw, fb);
	}
}

const struct cg_layer cg_layer_whvi = {
	.params = wv_params,
	.plan = whvi_plan,
	.declare = whvi_declare,
	.noise = whvi_noise,
	.forward = whvi_forward,
	.backward = whvi_backward,
};
