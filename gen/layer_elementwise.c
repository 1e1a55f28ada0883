/* layer_elementwise.c: code for the activations (relu, leaky_relu, tanh,
 * sigmoid, gelu, softplus, cos) and for identity and flatten.
 *
 * All share one mechanism: forward calls bnn_gen_KIND_forward over the
 * B·width values, backward calls bnn_gen_KIND_backward into the input's
 * delta when it has one.  leaky_relu passes its slope as an extra
 * argument.  identity and flatten are copies (a [C, H, W] tensor is
 * already laid out flat).  A relu that a dense layer's product computes
 * (cg_relu_fusion) has no forward code: it shares the layer's buffer,
 * whose values its backward's mask reads (y > 0 where x > 0); a relu whose
 * reader's backward product applies its mask (cg_relu_back_fusion) has no
 * backward code.
 */
#include "cg.h"

/* The kernel family of an op in bnn_gen/elementwise.h
 * ("relu" -> bnn_gen_relu_*). */
static const char *elementwise_kernel(enum op_id op)
{
	switch (op) {
	case OP_RELU:
		return "relu";
	case OP_LEAKY_RELU:
		return "leaky_relu";
	case OP_TANH:
		return "tanh";
	case OP_SIGMOID:
		return "sigmoid";
	case OP_GELU:
		return "gelu";
	case OP_SOFTPLUS:
		return "softplus";
	case OP_COS:
		return "cos";
	default:
		return "copy";
	}
}

/* ", (bnn_real)0.10000000000000001" for leaky_relu, "" otherwise. */
static void elementwise_extra(const struct graph_node *n, char *buf, size_t size)
{
	char num[40];
	buf[0] = '\0';
	if (n->op != OP_LEAKY_RELU)
		return;
	emit_double_str(n->attrs.slope, num, sizeof num);
	snprintf(buf, size, ", (bnn_real)%s", num);
}

static void elementwise_forward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	char extra[64];
	if (cg->nodes[node].relu_fused >= 0) { /* cg_relu_fusion */
		emit(cg->e, "\t/* computed by %s's product, in its buffer */\n",
		     cg_name(cg, n->inputs[0]));
		return;
	}
	elementwise_extra(n, extra, sizeof extra);
	emit(cg->e, "\tbnn_gen_%s_forward(B * %ld, a_%s, a_%s%s);\n", elementwise_kernel(n->op),
	     cg->nodes[node].width, cg_name(cg, n->inputs[0]), cg_name(cg, node), extra);
}

static void elementwise_backward(struct cg *cg, int node)
{
	const struct graph_node *n = &cg->g->nodes[node];
	int in = n->inputs[0], acc;
	char extra[64];
	if (!cg->nodes[in].has_delta)
		return;
	if (cg->nodes[node].relu_back >= 0) { /* cg_relu_back_fusion */
		emit(cg->e, "\t/* in %s's backward product, through the mask of %s */\n",
		     cg_name(cg, cg->nodes[node].relu_back), cg_name(cg, node));
		return;
	}
	acc = cg_delta_acc(cg, in);
	elementwise_extra(n, extra, sizeof extra);
	if (n->op == OP_IDENTITY || n->op == OP_FLATTEN) {
		emit(cg->e, "\tbnn_gen_copy_backward(B * %ld, d_%s, d_%s, %d);\n",
		     cg->nodes[node].width, cg_name(cg, node), cg_name(cg, in), acc);
		return;
	}
	emit(cg->e, "\tbnn_gen_%s_backward(B * %ld, a_%s, a_%s, d_%s, d_%s, %d%s);\n",
	     elementwise_kernel(n->op), cg->nodes[node].width, cg_name(cg, in), cg_name(cg, node),
	     cg_name(cg, node), cg_name(cg, in), acc, extra);
}

#define ELEMENTWISE_HOOKS                                                        \
	{                                                                        \
		.forward = elementwise_forward, .backward = elementwise_backward \
	}
const struct cg_layer cg_layer_relu = ELEMENTWISE_HOOKS;
const struct cg_layer cg_layer_leaky_relu = ELEMENTWISE_HOOKS;
const struct cg_layer cg_layer_tanh = ELEMENTWISE_HOOKS;
const struct cg_layer cg_layer_sigmoid = ELEMENTWISE_HOOKS;
const struct cg_layer cg_layer_gelu = ELEMENTWISE_HOOKS;
const struct cg_layer cg_layer_softplus = ELEMENTWISE_HOOKS;
const struct cg_layer cg_layer_cos = ELEMENTWISE_HOOKS;
const struct cg_layer cg_layer_identity = ELEMENTWISE_HOOKS;
const struct cg_layer cg_layer_flatten = ELEMENTWISE_HOOKS;
