/* layer_embedding.c: code for embedding layers (bnn_gen/embedding.h), the
 * rows of a vocab × dim table picked by a sequence of T integer ids, with
 * a point or meanfield posterior.
 *
 * Parameter: NAME.weight, [vocab, dim], Glorot-uniform with fan-in and
 * fan-out dim (entries of variance 1/dim: a row has about unit norm).  Its
 * role is a weight's, so the prior and weight decay apply to it.  The
 * backward kernel needs vocab + T·dim floats of fixed workspace (em_NAME):
 * the marks of the rows an example uses and its sums by row, from which it
 * writes the gradient and the squared per-example gradients of the rows
 * used alone.  The ids have no delta.
 *
 * meanfield: like layernorm, the layer gathers rows of the weights in w,
 * as the runtime's samplers give them; it ignores sigma.
 */
#include "bnn_gen/embedding.h"
#include "bnn_model.h"
#include "cg.h"

static void em_sizes(const struct cg *cg, int node, long *t, long *vocab, long *dim)
{
	const struct graph_node *n = &cg->g->nodes[node];
	*t = n->shape[0];
	*vocab = n->attrs.vocab;
	*dim = n->shape[1];
}

static int em_params(struct cg *cg, int node)
{
	long t, vocab, dim;
	long shape[4] = { 0, 0, 0, 0 };
	em_sizes(cg, node, &t, &vocab, &dim);
	shape[0] = vocab;
	shape[1] = dim;
	return cg_add_tensor(cg, node, "weight", BNN_ROLE_WEIGHT, 2, shape, dim, dim,
	                     BNN_INIT_GLOROT_UNIFORM) < 0
	               ? -1
	               : 0;
}

static void em_plan(struct cg *cg, int node)
{
	long t, vocab, dim;
	em_sizes(cg, node, &t, &vocab, &dim);
	cg->nodes[node].fixed_off = cg_reserve_fixed(cg, bnn_gen_embedding_floats(t, vocab, dim));
}

static void em_declare(struct cg *cg, int node)
{
	long t, vocab, dim;
	em_sizes(cg, node, &t, &vocab, &dim);
	emit(cg->e,
	     "\tbnn_real *const em_%s = ws + %ldL * B + %ldL; /* [%ld + %ld] marks, sums */\n",
	     cg_name(cg, node), cg->per_example, cg->nodes[node].fixed_off, vocab, t * dim);
}

static void em_forward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	long t, vocab, dim;
	char w[64], b[64];
	em_sizes(cg, node, &t, &vocab, &dim);
	cg_param_addr(cg, node, "w", 0, w, b, sizeof w);
	emit(cg->e, "\tbnn_gen_embedding_forward(B, %ld, %ld, %ld, a_%s, %s, a_%s);\n", t, vocab,
	     dim, cg_name(cg, n->inputs[0]), w, cg_name(cg, node));
}

static void em_backward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const char *name = cg_name(cg, node);
	long t, vocab, dim;
	char g[64], b[64], q[96], qb[96];
	em_sizes(cg, node, &t, &vocab, &dim);
	cg_param_addr(cg, node, "grad", 0, g, b, sizeof g);
	cg_param_addr(cg, node, "sqgrad", 1, q, qb, sizeof q);
	emit(cg->e,
	     "\tbnn_gen_embedding_backward(B, %ld, %ld, %ld, a_%s, d_%s, %s,\n"
	     "\t                           %s, em_%s);\n",
	     t, vocab, dim, cg_name(cg, n->inputs[0]), name, g, q, name);
}

const struct cg_layer cg_layer_embedding = {
	.params = em_params,
	.plan = em_plan,
	.declare = em_declare,
	.forward = em_forward,
	.backward = em_backward,
};
