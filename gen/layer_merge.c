/* layer_merge.c: code for the ops that join several inputs: add (an
 * elementwise sum of same-shaped inputs) and concat (feature vectors side
 * by side, in argument order).
 *
 * Backward hands every input its share of the delta: all of it for add,
 * its columns for concat.  An input that only this add reads shares the
 * add's delta buffer (cg_add_alias) and gets no copy.  The same node may appear twice among the
 * inputs (add(a, a)); each appearance contributes, the first one
 * overwriting and the rest accumulating (cg_delta_acc).
 */
#include "cg.h"

static void add_forward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	int j = 0;
	if (n->ninputs >= 2) {
		emit(cg->e, "\tbnn_gen_add_pair(B * %ld, a_%s, a_%s, a_%s);\n",
		     cg->nodes[node].width, cg_name(cg, n->inputs[0]), cg_name(cg, n->inputs[1]),
		     cg_name(cg, node));
		j = 2;
	}
	for (; j < n->ninputs; j++)
		emit(cg->e, "\tbnn_gen_add_into(B * %ld, a_%s, a_%s, %d);\n", cg->nodes[node].width,
		     cg_name(cg, n->inputs[j]), cg_name(cg, node), j > 0);
}

static void add_backward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	int j;
	for (j = 0; j < n->ninputs; j++) {
		int in = n->inputs[j];
		if (!cg->nodes[in].has_delta)
			continue;
		if (cg->nodes[in].delta_alias == node) { /* d_in is d_node: nothing to copy */
			cg_delta_acc(cg, in);
			continue;
		}
		emit(cg->e, "\tbnn_gen_add_into(B * %ld, d_%s, d_%s, %d);\n", cg->nodes[node].width,
		     cg_name(cg, node), cg_name(cg, in), cg_delta_acc(cg, in));
	}
}

static void concat_forward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	long col = 0;
	int j;
	for (j = 0; j < n->ninputs; j++) {
		long k = cg->nodes[n->inputs[j]].width;
		emit(cg->e, "\tbnn_gen_concat_forward(B, %ld, %ld, %ld, a_%s, a_%s);\n", k,
		     cg->nodes[node].width, col, cg_name(cg, n->inputs[j]), cg_name(cg, node));
		col += k;
	}
}

static void concat_backward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	long col = 0;
	int j;
	for (j = 0; j < n->ninputs; j++) {
		int in = n->inputs[j];
		long k = cg->nodes[in].width;
		if (cg->nodes[in].has_delta)
			emit(cg->e,
			     "\tbnn_gen_concat_backward(B, %ld, %ld, %ld, d_%s, d_%s, %d);\n", k,
			     cg->nodes[node].width, col, cg_name(cg, node), cg_name(cg, in),
			     cg_delta_acc(cg, in));
		col += k;
	}
}

const struct cg_layer cg_layer_add = { .forward = add_forward, .backward = add_backward };
const struct cg_layer cg_layer_concat = { .forward = concat_forward, .backward = concat_backward };
