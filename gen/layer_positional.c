/* layer_positional.c: code for positional layers (bnn_gen/positional.h),
 * the fixed sinusoidal encoding added to a [T, D] sequence.  No
 * parameters; the table of T·D values lives in a fixed block of workspace
 * (pe_NAME), filled by each forward pass, and the backward pass copies the
 * output's delta to the input's.
 */
#include "cg.h"

static void pe_plan(struct cg *cg, int node)
{
	cg->nodes[node].fixed_off = cg_reserve_fixed(cg, cg->nodes[node].width);
}

static void pe_declare(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	emit(cg->e, "\tbnn_real *const pe_%s = ws + %ldL * B + %ldL; /* [%ld, %ld] encoding */\n",
	     cg_name(cg, node), cg->per_example, cg->nodes[node].fixed_off, n->shape[0],
	     n->shape[1]);
}

static void pe_forward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const char *name = cg_name(cg, node);
	emit(cg->e, "\tbnn_gen_positional_forward(B, %ld, %ld, a_%s, a_%s, pe_%s);\n", n->shape[0],
	     n->shape[1], cg_name(cg, n->inputs[0]), name, name);
}

static void pe_backward(struct cg *cg, int node)
{
	int in = cg->g->nodes[node].inputs[0];
	if (!cg->nodes[in].has_delta)
		return;
	emit(cg->e, "\tbnn_gen_copy_backward(B * %ld, d_%s, d_%s, %d);\n", cg->nodes[node].width,
	     cg_name(cg, node), cg_name(cg, in), cg_delta_acc(cg, in));
}

const struct cg_layer cg_layer_positional = {
	.plan = pe_plan,
	.declare = pe_declare,
	.forward = pe_forward,
	.backward = pe_backward,
};
