/* layer_pool.c: code for the pooling ops, which have no parameters:
 * maxpool and avgpool (a size × size window sliding by a stride over each
 * channel, no padding: the language has none for pools) and
 * globalavgpool ([C, H, W] to [C], the mean of each channel).  On a
 * [C, L] signal they are the same kernels on its [C, 1, L] map
 * (graph_node_map), with a 1 × size window sliding along the length.
 *
 * Each kernel of bnn_gen/pool.h works on the B·C channel planes of the batch
 * (NCHW: example i's channel c is plane i·C + c).  Backward writes the
 * input's delta when it has one: maxpool routes each window's delta to its
 * (first) maximum, found again from the input rather than stored;
 * avgpool and globalavgpool spread it evenly.  Overlapping windows
 * (stride < size) add up.
 */
#include "cg.h"

/* The input's [C, H, W] map, the node's output extent and the window:
 * kh × kw sliding by (sh, sw); 1 × size along the length of a signal. */
struct pool_dims {
	long c, h, w, oh, ow, kh, kw, sh, sw;
};

static struct pool_dims pool_dims_of(const struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	const struct graph_node *in = &cg->g->nodes[n->inputs[0]];
	struct pool_dims d;
	long x[3], y[3];
	graph_node_map(in, x);
	graph_node_map(n, y);
	d.c = x[0];
	d.h = x[1];
	d.w = x[2];
	d.oh = y[1];
	d.ow = y[2];
	d.kh = in->rank == 2 ? 1 : n->attrs.size;
	d.kw = n->attrs.size;
	d.sh = in->rank == 2 ? 1 : n->attrs.stride[0];
	d.sw = n->attrs.stride[1];
	return d;
}

/* "maxpool" or "avgpool" */
static const char *pool_kind(const struct cg *cg, int node)
{
	return cg->g->nodes[node].op == OP_MAXPOOL ? "maxpool" : "avgpool";
}

static void pool_forward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	struct pool_dims d = pool_dims_of(cg, node);
	emit(cg->e,
	     "\tbnn_gen_%s_forward(B * %ldL, %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld, a_%s, a_%s);\n",
	     pool_kind(cg, node), d.c, d.h, d.w, d.kh, d.kw, d.sh, d.sw, d.oh, d.ow,
	     cg_name(cg, n->inputs[0]), cg_name(cg, node));
}

static void pool_backward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	struct pool_dims d = pool_dims_of(cg, node);
	int in = n->inputs[0];
	char x[200] = "";
	if (!cg->nodes[in].has_delta)
		return;
	if (n->op == OP_MAXPOOL)
		snprintf(x, sizeof x, "a_%s, ", cg_name(cg, in));
	emit(cg->e,
	     "\tbnn_gen_%s_backward(B * %ldL, %ld, %ld, %ld, %ld, %ld, %ld, %ld, %ld, %sd_%s, d_%s, "
	     "%d);\n",
	     pool_kind(cg, node), d.c, d.h, d.w, d.kh, d.kw, d.sh, d.sw, d.oh, d.ow, x,
	     cg_name(cg, node), cg_name(cg, in), cg_delta_acc(cg, in));
}

static void gap_forward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	struct pool_dims d = pool_dims_of(cg, node);
	emit(cg->e, "\tbnn_gen_globalavgpool_forward(B * %ldL, %ld, a_%s, a_%s);\n", d.c, d.h * d.w,
	     cg_name(cg, n->inputs[0]), cg_name(cg, node));
}

static void gap_backward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	struct pool_dims d = pool_dims_of(cg, node);
	int in = n->inputs[0];
	if (!cg->nodes[in].has_delta)
		return;
	emit(cg->e, "\tbnn_gen_globalavgpool_backward(B * %ldL, %ld, d_%s, d_%s, %d);\n", d.c,
	     d.h * d.w, cg_name(cg, node), cg_name(cg, in), cg_delta_acc(cg, in));
}

const struct cg_layer cg_layer_maxpool = { .forward = pool_forward, .backward = pool_backward };
const struct cg_layer cg_layer_avgpool = { .forward = pool_forward, .backward = pool_backward };
const struct cg_layer cg_layer_globalavgpool = { .forward = gap_forward, .backward = gap_backward };
