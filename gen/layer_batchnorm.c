/* layer_batchnorm.c: code for batchnorm layers, batch normalisation of a
 * vector of C features or of a [C, H, W] map per channel (VOGN,
 * appendix B, eq. 8), with a point or meanfield posterior.
 *
 * Parameters: NAME.scale (γ, [C], initially 1) and NAME.shift (β, [C],
 * initially 0).  Running statistics, which are not parameters: NAME.running_mean
 * ([C], initially 0) and NAME.running_var ([C], initially 1), in the
 * model's statistics vector (bnn_model.stat_tensors, the pass's stats).
 * The pass decides once which statistics normalise (batch_stats: the batch's
 * when it trains or has no stats, else the running ones), and every
 * batchnorm layer's forward kernel leaves its channel means and 1/√(v + ε)
 * in a fixed block of 2C floats (bn_NAME), from which backward recomputes
 * the normalised input rather than storing it.  The mean of squared
 * per-example gradients of γ and β follows the paper's eqs. 9 and 10
 * (bnn_gen_batchnorm_backward).
 *
 * meanfield: like conv2d, the layer is computed on the weights in w, as
 * the runtime's samplers give them; it ignores sigma.  A point batchnorm
 * layer is trained without noise and without weight decay, as in the VOGN
 * paper (section 3; the trainer decides that from the tensors' roles).
 */
#include "bnn_model.h"
#include "cg.h"

/* C (the channels or features) and hw (values per channel). */
static void bn_sizes(const struct cg *cg, int node, long *c, long *hw)
{
	long map[3];
	graph_node_map(&cg->g->nodes[node], map); /* a signal's channels: its length */
	*c = map[0];
	*hw = map[1] * map[2];
}

static int bn_params(struct cg *cg, int node)
{
	long c, hw, shape[4] = { 0, 0, 0, 0 };
	bn_sizes(cg, node, &c, &hw);
	shape[0] = c;
	if (cg_add_tensor(cg, node, "scale", BNN_ROLE_SCALE, 1, shape, 0, 0, BNN_INIT_ONE) < 0 ||
	    cg_add_tensor(cg, node, "shift", BNN_ROLE_SHIFT, 1, shape, 0, 0, BNN_INIT_ZERO) < 0)
		return -1;
	return 0;
}

/* The 2C floats of means and reciprocal deviations, and the running
 * statistics. */
static void bn_plan(struct cg *cg, int node)
{
	long c, hw;
	bn_sizes(cg, node, &c, &hw);
	cg->nodes[node].fixed_off = cg_reserve_fixed(cg, 2 * c);
	cg->nodes[node].first_stat =
	        cg_add_stat(cg, node, "running_mean", BNN_ROLE_RUNNING_MEAN, c, BNN_INIT_ZERO);
	cg_add_stat(cg, node, "running_var", BNN_ROLE_RUNNING_VAR, c, BNN_INIT_ONE);
}

static void bn_declare(struct cg *cg, int node)
{
	long c, hw;
	bn_sizes(cg, node, &c, &hw);
	emit(cg->e, "\tbnn_real *const bn_%s = ws + %ldL * B + %ldL; /* [2, %ld] mean, 1/sd */\n",
	     cg_name(cg, node), cg->per_example, cg->nodes[node].fixed_off, c);
}

static void bn_forward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const struct cg_tensor *mean = &cg->stats[cg->nodes[node].first_stat];
	const char *name = cg_name(cg, node);
	char g[64], b[64], eps[40], mom[40];
	long c, hw;
	bn_sizes(cg, node, &c, &hw);
	cg_param_addr(cg, node, "w", 0, g, b, sizeof g);
	emit_double_str(n->attrs.eps, eps, sizeof eps);
	emit_double_str(n->attrs.momentum, mom, sizeof mom);
	emit(cg->e,
	     "\tbnn_gen_batchnorm_forward(B, %ld, %ld, a_%s, %s, %s, %s, %s, batch_stats,\n"
	     "\t                          stats ? stats + %ld : NULL, stats ? stats + %ld : NULL,\n"
	     "\t                          bn_%s, a_%s);\n",
	     c, hw, cg_name(cg, n->inputs[0]), g, b, eps, mom, mean->offset, mean->offset + c, name,
	     name);
}

static void bn_backward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const char *name = cg_name(cg, node);
	int in = n->inputs[0];
	char g[64], b[64], dg[64], db[64], qg[96], qb[96], dx[160];
	long c, hw;
	bn_sizes(cg, node, &c, &hw);
	cg_param_addr(cg, node, "w", 0, g, b, sizeof g);
	cg_param_addr(cg, node, "grad", 0, dg, db, sizeof dg);
	cg_param_addr(cg, node, "sqgrad", 1, qg, qb, sizeof qg);
	cg_delta_args(cg, in, dx, sizeof dx);
	emit(cg->e,
	     "\tbnn_gen_batchnorm_backward(B, %ld, %ld, batch_stats, a_%s, d_%s, %s, bn_%s, %s, %s,\n"
	     "\t                           %s,\n"
	     "\t                           %s,\n"
	     "\t                           %s);\n",
	     c, hw, cg_name(cg, in), name, g, name, dg, db, qg, qb, dx);
}

const struct cg_layer cg_layer_batchnorm = {
	.params = bn_params,
	.plan = bn_plan,
	.declare = bn_declare,
	.forward = bn_forward,
	.backward = bn_backward,
};
