/* cg.h: what the code generator's parts share (codegen.c drives; one file
 * per kind of layer emits its code: layer_dense.c, layer_conv.c,
 * layer_pool.c, layer_batchnorm.c, layer_norm.c (layernorm, groupnorm),
 * layer_elementwise.c, layer_merge.c, layer_gru.c, layer_attention.c,
 * layer_embedding.c, layer_positional.c, layer_transpose.c;
 * layer_patch.c wraps the layers with an emp or ecmp posterior;
 * layer_whvi.c replaces a dense layer with a whvi posterior;
 * likelihood_code.c
 * ends the forward pass).
 *
 * Before anything is written, codegen.c plans the model: which nodes need
 * code, where each node's activation and delta live in the workspace (as
 * per-example offsets: node n's activation is ws + act_off·B, a
 * batch × width row-major block), which nodes need a delta at all (only
 * those with parameters at or before them), and where each parameter
 * tensor sits in the flat parameter vector.  Layers whose posterior the
 * pass samples itself (dropout masks, meanfield's local reparameterisation)
 * reserve more workspace in their plan hook: per-example blocks
 * (cg_reserve) and blocks independent of the batch (cg_reserve_fixed),
 * which follow all per-example ones, at ws + per_example·B + offset.  A
 * layer's hooks then emit calls to the kernels of runtime/include/bnn_gen.h with
 * every size and offset a constant.
 *
 * Adding a layer kind: write its hooks in a layer_*.c file (a params hook
 * if it has weights, forward, backward; plan, declare and noise if its
 * posterior draws noise inside the pass) and add its row to cg_layers in
 * codegen.c (docs/adding-an-op.md has the checklist).
 */
#ifndef BNN_CG_H
#define BNN_CG_H

#include "emit.h"
#include "graph.h"

/* A parameter tensor, or a tensor of running statistics, of the generated
 * model (one bnn_tensor row). */
struct cg_tensor {
	char name[160];    /* "h1.weight" */
	int node;          /* the graph node, or -1 for the likelihood */
	int role;          /* BNN_ROLE_* */
	long offset, size; /* in the parameters, or in the statistics */
	int rank;
	long shape[4]; /* dense weight [out, in]; conv2d weight [F, C, KH, KW];
	                  conv1d weight [F, C, K];
	                  whvi [stack, D] and flows [stack, F, D] */
	long fan_in, fan_out;
	int init;       /* BNN_INIT_* */
	int components; /* k for a patched layer's tensor (k copies), else 1 */
};

/* The longest node name used as is in identifiers (cg_name). */
enum {
	CG_IDENT_MAX = 31
};

struct cg_node {
	int code;         /* live and not the input: gets code */
	long width;       /* floats per example */
	long act_off;     /* per-example offset of the activation in ws */
	int has_delta;    /* a delta is needed (parameters at or before it) */
	long delta_off;   /* per-example offset of the delta in ws */
	int delta_alias;  /* the add whose delta buffer is this node's too, or -1 */
	int relu_fused;   /* dense: the relu computed in its product, or -1;
	                     relu: the dense whose product computes it (and whose
	                     activation buffer it shares), or -1 (cg_relu_fusion) */
	int relu_back;    /* relu: the dense layer reading it whose backward product
	                     writes the relu's input delta through its mask, or -1
	                     (cg_relu_back_fusion) */
	int delta_set;    /* while emitting backward: first contribution written */
	int first_tensor; /* its tensors in cg.tensors, or -1 */
	int ntensors;
	int layer;      /* its row in the descriptor's layer table, or -1 */
	long noise_off; /* per-example offset of its noise blocks (plan hook) */
	long fixed_off; /* offset of its fixed block after the per-example part */
	int first_stat; /* batchnorm: its first tensor in cg.stats, or -1 */
	long patch_off; /* emp, ecmp: its 4 blocks of P floats (layer_patch.c) */
	unsigned caps;  /* BNN_CAP_* its code adds to its family's (plan hook) */
	long stat_off;  /* layernorm, groupnorm: per-example offset of their statistics */
	char ident[CG_IDENT_MAX + 1]; /* a name too long for cg_name's identifiers, shortened */
};

struct cg {
	const struct graph *g;
	struct emit *e;
	struct cg_node *nodes;     /* one per graph node */
	struct cg_tensor *tensors; /* in parameter-vector order */
	int ntensors, cap_tensors;
	struct cg_tensor *stats; /* running statistics (batchnorm), in order */
	int nstat_tensors, cap_stats;
	long nstats; /* floats of statistics */
	int nlayers;
	long nparams;
	long per_example;          /* workspace floats per example */
	long fixed;                /* workspace floats independent of the batch */
	long scratch_x, scratch_g; /* per-example offsets of the scratch: B × (widest
	                              dense input), B × (widest dense output) */
	long conv_col_floats;      /* conv2d layers' scratch, shared, independent of */
	long conv_tmp_floats;      /*   the batch: the largest K·P (one example's
	                              im2col) and F·K (one example's weight
	                              gradient), set by their plan hooks */
	long conv_col, conv_tmp;   /* their offsets after the per-example part, or -1 */
	long sigma_tensor;         /* learned σ: its tensor, else -1 */
	int noise_rng;             /* some layer draws noise whenever rng is given */
	int noise_sigma;           /* some layer draws noise when rng and sigma are */
};

/* Hooks of one kind of layer.  Only forward and backward are required. */
struct cg_layer {
	/* Adds the node's parameter tensors (NULL: no parameters). */
	int (*params)(struct cg *cg, int node);
	/* Reserves the node's own workspace beyond its activation and delta
     * (cg_reserve, cg_reserve_fixed, into noise_off and fixed_off) and sets
     * cg->noise_rng or cg->noise_sigma if the pass must draw noise for it
     * (NULL: nothing to reserve).  Called once per live node, in order,
     * after every activation and delta has its place. */
	void (*plan)(struct cg *cg, int node);
	/* Emits the declarations of the pointers into that workspace, at the
     * top of the pass (NULL: none). */
	void (*declare)(struct cg *cg, int node);
	/* Emits the draws of example e's noise, inside the pass's noise loop
     * (`for (e = 0; e < B; e++)`, run only when rng is given, and only when
     * sigma is too if no layer sets noise_rng).  NULL: no noise. */
	void (*noise)(struct cg *cg, int node);
	/* Emits the forward computation of a_NODE from its inputs. */
	void (*forward)(struct cg *cg, int node);
	/* Emits parameter gradients (and squared per-example gradients when
     * sqgrad is not NULL) from d_NODE, and the deltas of inputs that have
     * one (cg_delta_acc). */
	void (*backward)(struct cg *cg, int node);
};

/* The hooks of an op, or NULL when code generation does not support it. */
const struct cg_layer *cg_layer_of(enum op_id op);

/* The hooks of a node: its op's, or those of a family that replaces the
 * layer (whvi dense layers). */
const struct cg_layer *cg_node_layer(const struct cg *cg, int node);

/* Adds a tensor; returns its index or -1 when out of memory. */
int cg_add_tensor(struct cg *cg, int node, const char *suffix, int role, int rank,
                  const long *shape, long fan_in, long fan_out, int init);

/* Adds a tensor of SIZE running statistics of NODE (initialised by INIT,
 * BNN_INIT_ZERO or BNN_INIT_ONE); returns its index in cg.stats or -1 when
 * out of memory. */
int cg_add_stat(struct cg *cg, int node, const char *suffix, int role, long size, int init);

/* Reserves FLOATS per example (a batch × FLOATS block at ws + off·B) and
 * returns its per-example offset off. */
long cg_reserve(struct cg *cg, long floats);

/* Reserves FLOATS independent of the batch and returns their offset after
 * the per-example part (at ws + per_example·B + offset). */
long cg_reserve_fixed(struct cg *cg, long floats);

/* The node's part of the identifiers of generated code (a_NAME, d_NAME,
 * cv_NAME, ...): its name when that has at most CG_IDENT_MAX characters,
 * else the node's index, '_' and the name's first characters ("12_stage1_"),
 * which no name can be (names start with a letter), so that the emitters'
 * fixed buffers always hold them.  A name that starts with "w_" takes the
 * second form too: the standalone file reads the weights header's arrays
 * MODEL_w_params, MODEL_w_sigma, ..., which a_w_params of a node named
 * w_params would hide in a model named 'a' (and p_, s_, x_ alike).
 * Borrowed from CG. */
const char *cg_name(const struct cg *cg, int node);

/* For a backward contribution to the delta of node n: 0 the first time
 * (overwrite), 1 afterwards (accumulate). */
int cg_delta_acc(struct cg *cg, int node);

/* The two arguments a kernel takes for the delta of its input IN:
 * "d_IN, ACC" (ACC from cg_delta_acc), or "NULL, 0" when IN has none. */
void cg_delta_args(struct cg *cg, int in, char *buf, size_t size);

/* Whether every consumer of NODE is a ReLU-like unit (relu, leaky_relu,
 * gelu), looking through pooling (maxpool, avgpool), which commutes with
 * them: then He initialisation suits the layer, else Glorot. */
int cg_feeds_relu(const struct cg *cg, int node);

/* The addresses of the node's weight and bias in the array ARRAY ("w",
 * "grad"): "w + 16" into wbuf, and into bbuf the same for the bias or
 * "NULL" when the layer has none.  With GUARD, for an array that may be
 * NULL: "grad_sigma ? grad_sigma + 16 : NULL".  For layers whose tensors
 * are a weight and an optional bias (dense, conv2d; batchnorm's scale and
 * shift).  For a patched layer (emp, ecmp), "w", "grad" and "sqgrad" are
 * its blocks of this pass (pw_NAME + 0, ...; layer_patch.c). */
void cg_param_addr(const struct cg *cg, int node, const char *array, int guard, char *wbuf,
                   char *bbuf, size_t size);

/* A layernorm or groupnorm node as its kernels see it (bnn_gen/norm.h): C
 * channels of hw values (a vector: C features of one value) in `groups`
 * groups, and len values per cell of its scale and shift (1: one per
 * value, layernorm; hw: one per channel, groupnorm), the cells repeating
 * after `cells` of them (C·hw/len, no repeat, but for a per-step
 * layernorm of [T, F]: F cells, one group per step).  layer_norm.c. */
struct cg_norm_shape {
	long c, hw, groups, len, cells;
};
struct cg_norm_shape cg_norm_shape(const struct cg *cg, int node);

/* The posterior family of a node (point when it has none). */
enum family_id cg_family(const struct cg *cg, int node);
/* Whether dense node `node`'s forward can compute a relu of its output
 * (layer_dense.c): a point, dropout or meanfield layer with no patch,
 * whose forward is one product (bnn_gen_dense_relu_forward), or for
 * meanfield's sampled pass (local reparameterisation) the product, then
 * the relu in place. */
int cg_dense_fuses_relu(const struct cg *cg, int node);
/* Whether dense node `node`'s input delta is one product (a point layer
 * with no patch), which can apply the mask of a relu before it
 * (layer_dense.c). */
int cg_dense_backward_one_product(const struct cg *cg, int node);

/* The hooks, by kind. */
extern const struct cg_layer cg_layer_dense;
extern const struct cg_layer cg_layer_relu, cg_layer_leaky_relu, cg_layer_tanh, cg_layer_sigmoid,
        cg_layer_gelu, cg_layer_softplus, cg_layer_cos, cg_layer_identity;
extern const struct cg_layer cg_layer_flatten, cg_layer_add, cg_layer_concat;
extern const struct cg_layer cg_layer_conv2d; /* conv2d and conv1d */
extern const struct cg_layer cg_layer_maxpool, cg_layer_avgpool, cg_layer_globalavgpool;
extern const struct cg_layer cg_layer_batchnorm;
extern const struct cg_layer cg_layer_norm; /* layernorm, groupnorm */
extern const struct cg_layer cg_layer_whvi;
extern const struct cg_layer cg_layer_gru;
extern const struct cg_layer cg_layer_embedding, cg_layer_positional;
extern const struct cg_layer cg_layer_attention;
extern const struct cg_layer cg_layer_transpose;

/* Ensemble model patching (layer_patch.c): whether the node has an emp or
 * ecmp posterior; the offset of its tensor i inside one component; and the
 * plan, declarations, and the code before its forward and after its
 * backward. */
int cg_patched(const struct cg *cg, int node);
long cg_patch_rel(const struct cg *cg, int node, int i);
void cg_patch_plan(struct cg *cg, int node);
void cg_patch_declare(struct cg *cg, int node);
void cg_patch_forward(struct cg *cg, int node);
void cg_patch_backward(struct cg *cg, int node);

/* Emits the loss and output delta (likelihood_code.c). */
void cg_emit_likelihood(struct cg *cg);

#endif
