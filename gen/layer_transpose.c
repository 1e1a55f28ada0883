/* layer_transpose.c: code for transpose layers (bnn_gen/transpose.h), a
 * rank-2 node [A, B] to [B, A] per example.  No parameters and no
 * workspace of its own; the backward pass transposes the output's delta
 * into the input's.
 */
#include "cg.h"

static void tr_forward(struct cg *cg, int node)
{
	int in = cg->g->nodes[node].inputs[0];
	const struct graph_node *x = &cg->g->nodes[in];
	emit(cg->e, "\tbnn_gen_transpose(B, %ld, %ld, a_%s, a_%s, 0);\n", x->shape[0], x->shape[1],
	     cg_name(cg, in), cg_name(cg, node));
}

static void tr_backward(struct cg *cg, int node)
{
	int in = cg->g->nodes[node].inputs[0];
	const struct graph_node *n = &cg->g->nodes[node];
	if (!cg->nodes[in].has_delta)
		return;
	emit(cg->e, "\tbnn_gen_transpose(B, %ld, %ld, d_%s, d_%s, %d);\n", n->shape[0], n->shape[1],
	     cg_name(cg, node), cg_name(cg, in), cg_delta_acc(cg, in));
}

const struct cg_layer cg_layer_transpose = {
	.forward = tr_forward,
	.backward = tr_backward,
};
