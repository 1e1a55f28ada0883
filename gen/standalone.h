/* standalone.h: what the parts of the standalone target share (bnnc
 * --standalone; docs/standalone.md).
 *
 * standalone.c drives: it plans the model with codegen's own planning
 * (codegen_plan: the live nodes, their shapes, the parameter tensors and
 * their offsets in the parameter vector, the running statistics), lays out
 * the one-example workspace, and writes NAME_infer.h and NAME_infer.c.
 * standalone_layers.c emits each node's inference code (one example at a
 * time, with the noise of one Monte-Carlo sample); standalone_storage.c
 * defines how the code reads the weights header under each storage (f32,
 * bf16, int8: `MODEL export --storage`); standalone_math.c emits
 * the file's own float functions and its counter-based random generator,
 * only those the model uses, so that the file compiles without unused
 * functions.
 *
 * The emitted code names its arrays after the weights header's sections
 * (MODEL_w_params, MODEL_w_sigma, MODEL_w_stats, ...; runtime/cli/
 * cli_export.c writes them), and its own static helpers bnns_*.
 */
#ifndef BNN_STANDALONE_H
#define BNN_STANDALONE_H

#include "cg.h"
#include "diag.h"
#include "graph.h"

struct standalone_options {
	const char *source; /* the .bnn file, for the provenance comment */
	const char *c_path; /* NAME_infer.c */
	const char *h_path; /* NAME_infer.h */
	const char *w_name; /* the weights header's default name (NAME_infer_weights.h) */
	int analytic;       /* --analytic: add MODEL_predict_analytic (standalone_moments.c) */
};

/* Writes the standalone inference files of G; reports what it cannot
 * generate through D (at the node) and I/O failures on stderr.  Returns 0
 * on success. */
int standalone_write(const struct graph *g, const struct standalone_options *o, struct diag *d);

/* The functions of <math.h> (or their own versions) and the random
 * generator a model's code needs (struct sa.needs). */
enum {
	SA_EXP = 1 << 0,     /* expf */
	SA_LOG = 1 << 1,     /* logf */
	SA_LOG1P = 1 << 2,   /* log1pf */
	SA_TANH = 1 << 3,    /* tanhf */
	SA_ERF = 1 << 4,     /* erff */
	SA_COS = 1 << 5,     /* cosf */
	SA_SQRT = 1 << 6,    /* sqrtf */
	SA_RNG = 1 << 7,     /* the counter-based generator: keys, uniform draws */
	SA_GAUSS = 1 << 8,   /* its standard normal variates */
	SA_DOT = 1 << 9,     /* bnns_dot: a dense layer's sums */
	SA_DOT2 = 1 << 10,   /* bnns_dot2: the local reparameterisation's variances */
	SA_DOT_F32 = 1 << 11 /* bnns_dot under every storage: rows decoded into
	                        the block (meanfield per_step dense, gru,
	                        attention), attention's scores */
};

/* The standalone plan of a model. */
struct sa {
	struct cg cg; /* codegen's plan: nodes, widths, tensors, statistics */
	struct emit *e;
	const struct graph *g;
	const char *m;     /* the model's name: the prefix of the API */
	char up[128];      /* the same in capitals: the prefix of its macros */
	long *act;         /* per node: the offset of its activation in the
	                      workspace's floats, -1 when it has none */
	long in_off;       /* the example's (standardised) input */
	long block_off;    /* a layer's parameters of this sample (patch, σ) */
	long block_floats; /*   the largest such block */
	long xt_off;       /* a dropout layer's masked input, a gru or attention layer's scratch */
	long xt_floats;
	long whvi_off; /* a whvi layer's g and transform: 2·stack·D */
	long whvi_floats;
	long prob_off;         /* the outputs' probabilities of one sample */
	long floats;           /* floats of the workspace after the accumulators */
	long doubles;          /* the accumulators (doubles, first in the workspace) */
	unsigned needs;        /* SA_* */
	int sigma_layers;      /* some layer has a σ per parameter (BNN_CAP_SIGMA) */
	long *soff;            /* per tensor: its offset in the split header's array
	                     (standalone_storage.c): MODEL_w_params_q when it is
	                     compressed, MODEL_w_params when not */
	long *srow;            /* per compressed tensor: its first row's int8 scale */
	long nq, nrows;        /* compressed values and rows */
	int q_sigma;           /* a compressed tensor has a σ (a meanfield layer's) */
	int refused;           /* the first node that only f32 can store, or -1 */
	int random;            /* some layer's inference is random (σ or pass noise) */
	struct sa_moments *mo; /* the analytic pass's plan, or NULL without --analytic */
};

/* standalone_layers.c: node I's workspace beyond its activation and the
 * math it needs (its plan), and its forward code.  Every op and family
 * the training code supports has code. */
void sa_layer_plan(struct sa *s, int i);
void sa_layer_forward(struct sa *s, int i);
/* Whether node I's inference is random (σ or noise it draws). */
int sa_layer_random(const struct sa *s, int i);
/* Whether node I's output is its input's buffer (flatten, identity). */
int sa_layer_alias(const struct sa *s, int i);

/* standalone_storage.c: the reading of the weights header for each
 * storage (f32, bf16, int8).  sa_storage_plan lays out the split header
 * (-1: out of memory); sa_compressed says whether tensor T is compressed;
 * sa_kept writes "BNNS_P(off, kept)", the offset of value REL of the
 * uncompressed tensor T in either layout; sa_write_storage writes the
 * checks, the reading macros and the dot products of bf16 and int8. */
int sa_storage_plan(struct sa *s);
int sa_compressed(const struct sa *s, int t);
void sa_kept(const struct sa *s, int t, long rel, char *buf, size_t size);
void sa_write_storage(struct sa *s);

/* standalone.c: the loop that copies example xi into xs (float pointers
 * of the caller's code), standardised when the weights header says so; and
 * the likelihood's noise variance σ² of output j, as a C expression. */
void sa_emit_standardize(struct sa *s);
/* A static float function NAME(long n, PARAMS) returning the sum over
 * j < n of TERM, in which J stands for the index: eight partial sums over
 * the values in order, added pairwise, then the rest.  The order is the
 * source's, so every compiler gives the same bits, and gcc -O2 can keep
 * the eight sums in vector registers (bnns_dot, bnns_dot2, the analytic
 * pass's variances). */
void sa_emit_sum(struct sa *s, const char *name, const char *params, const char *term);
void sa_noise_variance(const struct sa *s, char *buf, size_t size);
/* The end of a regression predictive's loop over the K outputs of example
 * i, once a (the aleatoric variance) and e (the epistemic one) are
 * defined: the mean MEAN and the total variance into out, the three sums
 * tot, ale and epi into summary, and the close of the loop and block. */
void sa_emit_split(struct sa *s, long k, const char *mean);
/* Whether the likelihood is a regression one (all but categorical and
 * bernoulli): `out` holds K means then K variances. */
int sa_regression(const struct graph *g);

/* standalone_moments.c: the analytic predictive (--analytic).  check
 * reports each node it cannot handle through D and returns their count;
 * plan lays out its workspace and adds the math it needs (0, or -1 when
 * out of memory); header and write emit its part of each file. */
int sa_moments_check(const struct sa *s, struct diag *d);
int sa_moments_plan(struct sa *s);
void sa_moments_free(struct sa *s);
long sa_moments_workspace_bytes(const struct sa *s);
void sa_moments_header(struct sa *s);
void sa_moments_write(struct sa *s);

/* standalone_math.c: the functions of s->needs, each once, those of the
 * random generator always and the others only under MODEL_NO_LIBM. */
void sa_emit_math(struct sa *s);

#endif
