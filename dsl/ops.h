/* ops.h: the callables of the language as plug-ins: ops, posterior families,
 * likelihoods.
 *
 * Each op has a parameter table (args.h) and one hook, check(), that reads its
 * evaluated arguments, fills the node's attributes, infers the output shape
 * from the input shapes and counts the point network's parameters.  Each
 * family has a parameter table, the set of ops it applies to, and counts the
 * posterior's parameters.  Adding an op: a line in ops.def, a parameter table
 * and a check function in ops.c (docs/adding-an-op.md).
 */
#ifndef BNN_OPS_H
#define BNN_OPS_H

#include "args.h"
#include "graph.h"

/* What an op's check() hook gets. */
struct op_ctx {
	struct diag *d;
	struct graph *g;
	struct graph_node *n;              /* the node; inputs already resolved */
	const struct value *val[ARGS_MAX]; /* constant arguments per spec entry, NULL = default */
	bnn_loc loc[ARGS_MAX];             /* where each was written (the call if defaulted) */
};

struct op_info {
	const char *name;
	int has_weights;
	const struct arg_spec *spec;
	int nspec;
	int (*check)(struct op_ctx *c); /* 0, or -1 after reporting an error */
};

/* The op called NAME, or NULL. */
const struct op_info *op_lookup(const char *name);
const struct op_info *op_get(enum op_id op);

struct family_info {
	const char *name;
	unsigned applies_to; /* FAM_ON_* mask */
	const struct arg_spec *spec;
	int nspec;
};

const struct family_info *family_lookup(const char *name);
const struct family_info *family_get(enum family_id f);

/* Fills F (id already set) from the evaluated arguments VAL[] of family
 * F->id.  Returns 0 or -1 after reporting. */
int family_check(struct diag *d, struct family *f, const struct value *const val[ARGS_MAX]);

/* Nonzero if family F may sit on op OP. */
int family_applies(enum family_id f, enum op_id op);

/* Counts N's posterior parameters from its family and model parameters. */
void family_count(struct graph_node *n);

struct likelihood_info {
	const char *name;
	const struct arg_spec *spec;
	int nspec;
};

/* What a node given for a likelihood's scale argument holds (the
 * likelihood's second node, e.g. 'gaussian(mu, lv)'), for those that take
 * one: what it is called in messages ("log-variance"), the log of the
 * scale it gives per unit of its value (gaussian's node is log σ², so ½;
 * the others' is the log itself, 1), and whether it must be written
 * without the keyword (gaussian: 'sigma = lv' would read as σ = lv). */
struct likelihood_node_form {
	const char *what;
	double log_scale_per_unit;
	int positional_only;
};

/* The node form of likelihood L's scale, or NULL if its scale takes no
 * node. */
const struct likelihood_node_form *likelihood_node_form(enum likelihood_id l);

const struct likelihood_info *likelihood_lookup(const char *name);
const struct likelihood_info *likelihood_get(enum likelihood_id l);
/* "categorical, gaussian, ... and laplace": the likelihoods' names in
 * table order, for messages (truncated to SIZE). */
void likelihood_list(char *buf, size_t size);

/* Whether likelihood L has a scale argument (gaussian's sigma, laplace's
 * scale): a positive number or 'learned', in g->sigma and
 * g->sigma_learned. */
int likelihood_has_scale(enum likelihood_id l);

/* Checks the likelihood's node shape and arguments and fills G's likelihood
 * fields (G->output and G->likelihood already set).  KEYED[i]: argument i
 * was written with its keyword. */
int likelihood_check(struct diag *d, struct graph *g, bnn_loc call_loc,
                     const struct value *const val[ARGS_MAX], const bnn_loc loc[ARGS_MAX],
                     const int keyed[ARGS_MAX]);

/* WHVI's layout of a Dout x Din weight matrix (WHVI paper, Algorithm 1):
 * Din is padded to the next power of two D, and ceil(Dout / D) square D x D
 * blocks are stacked to cover the outputs. */
struct whvi_dims {
	long d;       /* side of each square block, 2^ceil(log2 Din) */
	long padding; /* D - Din zero inputs */
	long stack;   /* number of stacked blocks */
	long dout;    /* D * stack, the padded output count */
};
void whvi_dims(long din, long dout, struct whvi_dims *w);

/* Parameters of a WHVI dense layer: per block S1, S2, the mean and scale of
 * g (4D), plus 2D + 1 per planar flow; the bias is mean-field (2 per unit). */
long long whvi_params(long din, long dout, int flows, int bias);

#endif
