/* layer_norm.c: code for layernorm and groupnorm layers, normalisation of
 * each example by its own statistics (bnn_gen/norm.h), with a point or
 * meanfield posterior.
 *
 * Both are one computation over C channels of hw values split into G
 * groups: layernorm is G = 1 with a scale and a shift per value (the
 * node's whole shape, as PyTorch's LayerNorm with elementwise_affine over
 * all the normalised dimensions), groupnorm is G = groups with a scale and
 * a shift per channel (Wu & He 2018).  A vector of F features is F
 * channels of one value.
 *
 * Parameters: NAME.scale (γ, initially 1) and NAME.shift (β, initially 0),
 * of the node's shape for layernorm and [C] for groupnorm.  They share
 * batchnorm's roles (BNN_ROLE_SCALE, BNN_ROLE_SHIFT), so a point layer is
 * trained without weight decay, as batchnorm's are.  No running
 * statistics: prediction computes what training does.  The forward kernel
 * leaves each example's group means and 1/√(v + ε) in a per-example block
 * of 2G floats (nm_NAME), from which backward recomputes the normalised
 * input.
 *
 * per_step layernorm of a [T, F] sequence: T groups (the steps) of F
 * values, NAME.scale and NAME.shift of shape [F], shared by the steps.
 *
 * meanfield: like batchnorm, the layer is computed on the weights in w, as
 * the runtime's samplers give them; it ignores sigma.
 */
#include "bnn_model.h"
#include "cg.h"

struct cg_norm_shape cg_norm_shape(const struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	struct cg_norm_shape s;
	s.c = n->shape[0];
	s.hw = (long)(graph_node_elements(n) / s.c);
	s.groups = n->op == OP_GROUPNORM ? n->attrs.groups : n->attrs.per_step ? s.c : 1;
	s.len = n->op == OP_GROUPNORM ? s.hw : 1;
	s.cells = n->attrs.per_step ? s.hw : s.c * s.hw / s.len;
	return s;
}

static int nm_params(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	long shape[4] = { 0, 0, 0, 0 };
	int rank = 1, i;
	if (n->attrs.per_step) {
		shape[0] = n->shape[1];
	} else if (n->op == OP_LAYERNORM) {
		rank = n->rank;
		for (i = 0; i < rank; i++)
			shape[i] = n->shape[i];
	} else {
		shape[0] = n->shape[0];
	}
	if (cg_add_tensor(cg, node, "scale", BNN_ROLE_SCALE, rank, shape, 0, 0, BNN_INIT_ONE) < 0 ||
	    cg_add_tensor(cg, node, "shift", BNN_ROLE_SHIFT, rank, shape, 0, 0, BNN_INIT_ZERO) < 0)
		return -1;
	return 0;
}

/* Per example: the G means and the G values of 1/√(v + ε). */
static void nm_plan(struct cg *cg, int node)
{
	cg->nodes[node].stat_off = cg_reserve(cg, 2 * cg_norm_shape(cg, node).groups);
}

static void nm_declare(struct cg *cg, int node)
{
	emit(cg->e, "\tbnn_real *const nm_%s = ws + %ldL * B; /* [B, 2, %ld] mean, 1/sd */\n",
	     cg_name(cg, node), cg->nodes[node].stat_off, cg_norm_shape(cg, node).groups);
}

static void nm_forward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const struct cg_norm_shape s = cg_norm_shape(cg, node);
	const char *name = cg_name(cg, node);
	char g[64], b[64], eps[40];
	cg_param_addr(cg, node, "w", 0, g, b, sizeof g);
	emit_double_str(n->attrs.eps, eps, sizeof eps);
	emit(cg->e,
	     "\tbnn_gen_norm_forward(B, %ld, %ld, %ld, %ld, %ld, a_%s, %s, %s, %s, nm_%s,\n"
	     "\t                     a_%s);\n",
	     s.c, s.hw, s.groups, s.len, s.cells, cg_name(cg, n->inputs[0]), g, b, eps, name, name);
}

static void nm_backward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const struct cg_norm_shape s = cg_norm_shape(cg, node);
	const char *name = cg_name(cg, node);
	int in = n->inputs[0];
	char g[64], b[64], dg[64], db[64], qg[96], qb[96], dx[160];
	cg_param_addr(cg, node, "w", 0, g, b, sizeof g);
	cg_param_addr(cg, node, "grad", 0, dg, db, sizeof dg);
	cg_param_addr(cg, node, "sqgrad", 1, qg, qb, sizeof qg);
	cg_delta_args(cg, in, dx, sizeof dx);
	emit(cg->e,
	     "\tbnn_gen_norm_backward(B, %ld, %ld, %ld, %ld, %ld, a_%s, d_%s, %s, nm_%s, %s,\n"
	     "\t                      %s,\n"
	     "\t                      %s,\n"
	     "\t                      %s,\n"
	     "\t                      %s);\n",
	     s.c, s.hw, s.groups, s.len, s.cells, cg_name(cg, in), name, g, name, dg, db, qg, qb,
	     dx);
}

const struct cg_layer cg_layer_norm = {
	.params = nm_params,
	.plan = nm_plan,
	.declare = nm_declare,
	.forward = nm_forward,
	.backward = nm_backward,
};
