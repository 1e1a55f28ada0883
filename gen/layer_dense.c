/* layer_dense.c: code for dense layers, Y = X·Wᵀ + b.
 *
 * Parameters: NAME.weight [units, in] (row-major, like PyTorch's Linear)
 * and NAME.bias [units].  Forward is one GEMM after filling Y with the
 * bias; backward is dW = Gᵀ·X, db = Σ_i G_i, and dX = G·W when the input
 * has a delta (never for the model's input).  The mean of squared
 * per-example gradients is B·(G∘G)ᵀ·(X∘X) (one extra GEMM; see
 * bnn_gen_dense_sqgrad).
 */
#include "bnn_model.h"
#include "cg.h"

/* Whether every consumer of NODE is a ReLU-like unit: then He
 * initialisation suits it, else Glorot. */
static int dense_feeds_relu(const struct cg *cg, int node)
{
    const struct graph *g = cg->g;
    int i, j, consumers = 0;
    for (i = node + 1; i < g->nnodes; i++)
        for (j = 0; j < g->nodes[i].ninputs; j++) {
            if (g->nodes[i].inputs[j] != node || !g->nodes[i].live)
                continue;
            consumers++;
            if (g->nodes[i].op != OP_RELU && g->nodes[i].op != OP_LEAKY_RELU &&
                g->nodes[i].op != OP_GELU)
                return 0;
        }
    return consumers > 0;
}

static int dense_params(struct cg *cg, int node)
{
    const struct graph_node *n = &cg->g->nodes[node];
    long in = n->attrs.in_features, out = n->attrs.units;
    long wshape[2] = { out, in }, bshape[2] = { out, 0 };
    int init = dense_feeds_relu(cg, node) ? BNN_INIT_HE_NORMAL : BNN_INIT_GLOROT_UNIFORM;
    if (cg_add_tensor(cg, node, "weight", BNN_ROLE_WEIGHT, 2, wshape, in, out, init) < 0)
        return -1;
    if (n->attrs.bias &&
        cg_add_tensor(cg, node, "bias", BNN_ROLE_BIAS, 1, bshape, in, out, BNN_INIT_ZERO) < 0)
        return -1;
    return 0;
}

static void dense_forward(struct cg *cg, int node)
{
    const struct graph_node *n = &cg->g->nodes[node];
    const struct cg_node *c = &cg->nodes[node];
    const struct cg_tensor *w = &cg->tensors[c->first_tensor];
    char bias[64] = "NULL";
    if (c->ntensors > 1)
        snprintf(bias, sizeof bias, "w + %ld", cg->tensors[c->first_tensor + 1].offset);
    emit(cg->e, "\tbnn_gen_dense_forward(B, %ld, %ld, a_%s, w + %ld, %s, a_%s);\n",
         n->attrs.in_features, n->attrs.units, cg_name(cg, n->inputs[0]), w->offset, bias,
         cg_name(cg, node));
}

static void dense_backward(struct cg *cg, int node)
{
    const struct graph_node *n = &cg->g->nodes[node];
    const struct cg_node *c = &cg->nodes[node];
    const struct cg_tensor *w = &cg->tensors[c->first_tensor];
    long k = n->attrs.in_features, units = n->attrs.units;
    int in = n->inputs[0];
    char db[64] = "NULL", sb[64] = "NULL";
    if (c->ntensors > 1) {
        long boff = cg->tensors[c->first_tensor + 1].offset;
        snprintf(db, sizeof db, "grad + %ld", boff);
        snprintf(sb, sizeof sb, "sqgrad + %ld", boff);
    }
    emit(cg->e, "\tbnn_gen_dense_backward_params(B, %ld, %ld, a_%s, d_%s, grad + %ld, %s);\n",
         k, units, cg_name(cg, in), cg_name(cg, node), w->offset, db);
    emit(cg->e, "\tif (sqgrad)\n"
                "\t\tbnn_gen_dense_sqgrad(B, %ld, %ld, a_%s, d_%s, sqgrad + %ld, %s, sq_x, sq_g);\n",
         k, units, cg_name(cg, in), cg_name(cg, node), w->offset, sb);
    if (cg->nodes[in].has_delta) {
        int acc = cg_delta_acc(cg, in);
        emit(cg->e, "\tbnn_gen_dense_backward_input(B, %ld, %ld, d_%s, w + %ld, d_%s, %d);\n",
             k, units, cg_name(cg, node), w->offset, cg_name(cg, in), acc);
    }
}

const struct cg_layer cg_layer_dense = { dense_params, dense_forward, dense_backward };
