/* graph.h: a checked .bnn model, the front end's output.
 *
 * Semantic analysis (sema.c) turns the syntax tree into a graph of nodes in
 * topological order (every node's inputs come before it): blocks expanded,
 * names resolved, arguments type- and range-checked, shapes inferred,
 * posterior families attached and parameters counted.  Later phases (the
 * summary, code generation) read this structure and never see the AST.
 *
 * Ownership: the graph owns its node array (graph_free); names and locations
 * point into the AST arena, which must outlive the graph (front.h ties the
 * two together).
 */
#ifndef BNN_GRAPH_H
#define BNN_GRAPH_H

#include "diag.h"

enum op_id {
#define OP(id, name, weights, spec, check) OP_##id,
#include "ops.def"
#undef OP
	OP_COUNT
};

/* Which ops a family applies to (the masks of families.def). */
enum {
	FAM_ON_DENSE = 1,
	FAM_ON_CONV2D = 2, /* and conv1d, which runs on conv2d's code */
	FAM_ON_BATCHNORM = 4,
	FAM_ON_NORM = 16, /* layernorm, groupnorm: normalisation per example */
	FAM_ON_GRU = 32,  /* gru: its weights are shared across time steps */
	FAM_ON_EMBEDDING = 64,
	FAM_ON_ATTENTION = 128 /* attention: projections shared across positions */
};

enum family_id {
#define FAMILY(id, name, mask, spec, caps) FAMILY_##id,
#include "families.def"
#undef FAMILY
	FAMILY_COUNT
};

enum likelihood_id {
#define LIKELIHOOD(id, name, spec) LIKELIHOOD_##id,
#include "likelihoods.def"
#undef LIKELIHOOD
	LIKELIHOOD_COUNT
};

/* Largest extent of one dimension, and of a whole tensor or weight array. */
#define GRAPH_MAX_DIM      (1L << 24)
#define GRAPH_MAX_ELEMENTS 2147483647L

/* A posterior family with its arguments. */
struct family {
	enum family_id id;
	int k;        /* emp, ecmp: number of components */
	double p;     /* dropout: probability of dropping a unit */
	int flows;    /* whvi: planar flows on g */
	double prior; /* precision of the layer's Gaussian prior; 0 = the model's */
	bnn_loc loc;  /* where it was written (or the posterior statement) */
};

/* Attributes of an op; each op uses the fields its arguments name. */
struct op_attrs {
	long units;           /* dense */
	long in_features;     /* dense: the flattened input size */
	long channels;        /* conv2d, conv1d */
	long kernel[2];       /* conv2d: kh, kw; conv1d: 1, k (a [C, 1, L] map) */
	long stride[2];       /* conv2d, conv1d, maxpool, avgpool: sh, sw */
	long pad[2];          /* conv2d, conv1d: ph, pw */
	long dilation[2];     /* conv2d: 1, 1; conv1d: 1, d */
	long size;            /* maxpool, avgpool: window size */
	int bias;             /* dense, conv2d, conv1d */
	int per_step;         /* dense, layernorm: on each step of a [T, F] sequence apart */
	double slope;         /* leaky_relu */
	double momentum, eps; /* batchnorm; eps also layernorm, groupnorm */
	long groups;          /* groupnorm: channel groups normalised apart */
	int sequence;         /* gru: output = sequence (every step), else last */
	long vocab;           /* embedding: ids lie in [0, vocab); its dim is shape[1] */
	long heads;           /* attention: heads (dividing its dim, in units) */
	int causal;           /* attention: position t attends to s <= t only */
};

struct graph_node {
	const char *name; /* unique, C-identifier-safe ("s1_c1" inside blocks) */
	enum op_id op;
	bnn_loc loc;      /* the call or the input declaration */
	bnn_loc name_loc; /* where the name was written, or the call for derived names */
	int *inputs;      /* owned: indices of the input nodes, all smaller */
	int ninputs;
	struct op_attrs attrs;
	int rank; /* 1: [features]; 2: [channels, length] or [time, features]; 3: [channels, height, width] */
	int ids; /* the input holds integer ids ("input ids[T] int;"), which only embedding reads */
	long shape[3];
	int has_family; /* the op has weights, so the fields below matter */
	struct family family;
	long long model_params;     /* parameters of the point network */
	long long posterior_params; /* parameters of the variational posterior */
	int live;                   /* the node reaches the likelihood */
};

struct graph {
	const char *name;         /* the model name: the C prefix */
	struct graph_node *nodes; /* owned: topological order */
	int nnodes, cap;
	int input;  /* index of the input node */
	int output; /* index of the node the likelihood reads */
	enum likelihood_id likelihood;
	const char *target; /* the name introduced by the likelihood */
	bnn_loc likelihood_loc;
	double sigma;                 /* the scale (gaussian's sigma...): fixed value */
	int sigma_learned;            /* the scale is learned, one per output */
	int scale_node;               /* the node giving the scale's log, or -1 */
	double df;                    /* studentt: degrees of freedom ν */
	long long likelihood_params;  /* learned sigma: one per output */
	double prior_precision;       /* the default prior's precision (gaussian;
	                                 0 for the other priors) */
	int prior_given;              /* a prior statement was written */
	int prior;                    /* enum prior_id (priors.h) */
	double prior_arg[3];          /* its arguments, in its table's order */
	struct family default_family; /* from "posterior ...;" (FAMILY_POINT if none) */
	long long total_model;        /* sum of model_params, plus likelihood_params */
	long long total_posterior;    /* sum of posterior_params, plus likelihood_params */
};

/* The default prior precision when the model has no prior statement. */
#define GRAPH_DEFAULT_PRIOR 1.0

/* Appends a zeroed node and returns its index, or -1 when out of memory. */
int graph_add_node(struct graph *g);
void graph_free(struct graph *g);

/* Writes the shape as "[512]", "[8, 100]" or "[16, 28, 28]" into BUF. */
void graph_shape_str(const struct graph_node *n, char *buf, size_t size);

/* The node's values as the [C, H, W] map that the convolution and pooling
 * code sees: a [C, L] signal is a map of one row ([C, 1, L]), a vector
 * [N] one of N channels of 1x1.  So conv1d and the 1-D pools run on the
 * 2-D kernels with a 1 x k window. */
void graph_node_map(const struct graph_node *n, long map[3]);
long long graph_node_elements(const struct graph_node *n);

/* Tables generated from the .def files. */
const char *op_name(enum op_id op);
int op_has_weights(enum op_id op);
const char *family_name(enum family_id f);
const char *likelihood_name(enum likelihood_id l);

/* Writes a family as it would be written in a model: "meanfield",
 * "dropout(p = 0.1)", "emp(k = 4)", with a per-layer prior if any. */
void family_str(const struct family *f, char *buf, size_t size);

#endif
