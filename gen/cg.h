/* cg.h: what the code generator's parts share (codegen.c drives; one file
 * per kind of layer emits its code: layer_dense.c, layer_elementwise.c,
 * layer_merge.c; likelihood_code.c ends the forward pass).
 *
 * Before anything is written, codegen.c plans the model: which nodes need
 * code, where each node's activation and delta live in the workspace (as
 * per-example offsets: node n's activation is ws + act_off·B, a
 * batch × width row-major block), which nodes need a delta at all (only
 * those with parameters at or before them), and where each parameter
 * tensor sits in the flat parameter vector.  A layer's hooks then emit
 * calls to the kernels of runtime/bnn_gen.h with every size and offset a
 * constant.
 *
 * Adding a layer kind: write its hooks in a layer_*.c file (a params hook
 * if it has weights, forward, backward) and add its row to cg_layers in
 * codegen.c (docs/adding-an-op.md has the checklist).
 */
#ifndef BNN_CG_H
#define BNN_CG_H

#include "emit.h"
#include "graph.h"

/* A parameter tensor of the generated model (one bnn_tensor row). */
struct cg_tensor {
    char name[160];   /* "h1.weight" */
    int node;         /* the graph node, or -1 for the likelihood */
    int role;         /* BNN_ROLE_* */
    long offset, size;
    int rank;
    long shape[2];
    long fan_in, fan_out;
    int init;         /* BNN_INIT_* */
};

struct cg_node {
    int code;         /* live and not the input: gets code */
    long width;       /* floats per example */
    long act_off;     /* per-example offset of the activation in ws */
    int has_delta;    /* a delta is needed (parameters at or before it) */
    long delta_off;   /* per-example offset of the delta in ws */
    int delta_set;    /* while emitting backward: first contribution written */
    int first_tensor; /* its tensors in cg.tensors, or -1 */
    int ntensors;
    int layer;        /* its row in the descriptor's layer table, or -1 */
};

struct cg {
    const struct graph *g;
    struct emit *e;
    struct cg_node *nodes;     /* one per graph node */
    struct cg_tensor *tensors; /* in parameter-vector order */
    int ntensors, cap_tensors;
    int nlayers;
    long nparams;
    long per_example;          /* workspace floats per example */
    long scratch_x, scratch_g; /* per-example offsets of the squared-operand scratch */
    long sigma_tensor;         /* learned σ: its tensor, else -1 */
};

/* Hooks of one kind of layer. */
struct cg_layer {
    /* Adds the node's parameter tensors (NULL: no parameters). */
    int (*params)(struct cg *cg, int node);
    /* Emits the forward computation of a_NODE from its inputs. */
    void (*forward)(struct cg *cg, int node);
    /* Emits parameter gradients (and squared per-example gradients when
     * sqgrad is not NULL) from d_NODE, and the deltas of inputs that have
     * one (cg_delta_acc). */
    void (*backward)(struct cg *cg, int node);
};

/* The hooks of an op, or NULL when code generation does not support it. */
const struct cg_layer *cg_layer_of(enum op_id op);

/* Adds a tensor; returns its index or -1 when out of memory. */
int cg_add_tensor(struct cg *cg, int node, const char *suffix, int role, int rank,
                  const long *shape, long fan_in, long fan_out, int init);

/* Names used in generated code: the activation and delta of a node. */
const char *cg_name(const struct cg *cg, int node);

/* For a backward contribution to the delta of node n: 0 the first time
 * (overwrite), 1 afterwards (accumulate). */
int cg_delta_acc(struct cg *cg, int node);

/* The hooks, by kind. */
extern const struct cg_layer cg_layer_dense;
extern const struct cg_layer cg_layer_relu, cg_layer_leaky_relu, cg_layer_tanh,
    cg_layer_sigmoid, cg_layer_gelu, cg_layer_softplus, cg_layer_cos,
    cg_layer_identity;
extern const struct cg_layer cg_layer_flatten, cg_layer_add, cg_layer_concat;

/* Emits the loss and output delta (likelihood_code.c). */
void cg_emit_likelihood(struct cg *cg);

#endif
