/*
 * bnn_model.h: the descriptor of a model compiled by bnnc (included by
 * bnn.h).
 *
 * bnnc turns a .bnn model into C that defines one constant `bnn_model`
 * (named after the model: `const bnn_model fashion_mlp_model`).  The
 * descriptor tells the runtime everything it needs to drive the model
 * generically: the shape of its input and output, its likelihood, its
 * parameter tensors (offsets into one flat float vector, shapes, fan-in and
 * fan-out for initialisation), its layers with the capabilities of their
 * posterior family (BNN_CAP_*: what the runtime must do for them; the
 * runtime never lists the families of the language), a fingerprint of the
 * canonical model (checkpoints refuse to load into another model), and the
 * generated code itself behind two function pointers.
 *
 * The generated code is reentrant: it allocates nothing and keeps no
 * mutable global state.  Every call gets its memory from the caller (the
 * parameters, the batch, a workspace of workspace_floats(batch) floats), so
 * two models, or two threads each with its own workspace, run at once.
 */
#ifndef BNN_MODEL_H
#define BNN_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "bnn_core.h"
#include "bnn_rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The descriptor layout; generated code stores the value it was built for
 * and the runtime refuses any other (4: layers carry their family's name
 * and capabilities instead of a family number; 5: the output node and the
 * last layer's features, bnn_model.features, at the end; 6: input_vocab,
 * the range of an input of integer ids, the prior's kind,
 * bnn_layer.prior_kind and bnn_model.prior, studentt's degrees of freedom,
 * bnn_model.df, at the ends, and a scale given by a node,
 * BNN_SCALE_NODE). */
#define BNN_MODEL_ABI 6

/* Likelihoods: the same list, in the same order, as the compiler's
 * likelihoods.def (bnnc checks the correspondence when it is built). */
enum bnn_likelihood {
	BNN_LIKELIHOOD_CATEGORICAL,
	BNN_LIKELIHOOD_GAUSSIAN,
	BNN_LIKELIHOOD_BERNOULLI,
	BNN_LIKELIHOOD_POISSON,     /* counts: rate exp(output) */
	BNN_LIKELIHOOD_LAPLACE,     /* the distribution (robust regression), not
	                           the Laplace approximation of laplace.c */
	BNN_LIKELIHOOD_STUDENTT,    /* heavy tails: ν = bnn_model.df */
	BNN_LIKELIHOOD_NEGBINOMIAL, /* overdispersed counts: mean exp(output),
	                               the scale is the dispersion ρ */
	BNN_LIKELIHOOD_COUNT
};

/* Priors over the parameters ("prior NAME(args);" in .bnn): the same
 * list, in the same order, as the compiler's priors.c (bnnc checks the
 * correspondence when it is built). */
enum bnn_prior_kind {
	BNN_PRIOR_GAUSSIAN,     /* N(0, 1/precision) per parameter */
	BNN_PRIOR_SCALEMIXTURE, /* π N(0, σ1²) + (1 − π) N(0, σ2²) per parameter
	                           (Blundell et al. 2015, eq. (7)) */
	BNN_PRIOR_LAPLACE,      /* exp(−|w|/b)/(2b) per parameter */
	BNN_PRIOR_COUNT
};

/* The model's prior: its kind and the arguments of that kind (the others
 * 0). */
typedef struct bnn_prior {
	int kind;                  /* enum bnn_prior_kind */
	double precision;          /* gaussian: 1/σ² */
	double pi, sigma1, sigma2; /* scalemixture: 0 < π < 1, σ1 > σ2 > 0 */
	double scale;              /* laplace: b > 0 */
} bnn_prior;

/* Where the scale of a likelihood that has one (gaussian's σ, laplace's
 * and studentt's scale, negbinomial's dispersion) comes from
 * (bnn_model.sigma_learned). */
enum bnn_scale_source {
	BNN_SCALE_FIXED,   /* bnn_model.sigma */
	BNN_SCALE_LEARNED, /* its log is a parameter tensor per output
	                      (role BNN_ROLE_LOG_SIGMA) */
	BNN_SCALE_NODE     /* its log, per example, is a second node of the
	                      model, the second half of each row of outputs
	                      (gaussian: the log-variance, log σ²) */
};

/*
 * What a layer's posterior family asks of the runtime (bnn_layer.caps, a
 * bit set).  The compiler writes each family's bits (the last column of its
 * families.def); the runtime acts on the bits only, so a new family made of
 * known capabilities needs no change here.  A layer without bits is a point
 * estimate.  X(NAME, bit) per capability, expanded into enum
 * bnn_capability (BNN_CAP_NAME = 1 << bit) and into bnnc's writer of the
 * descriptor:
 *   SIGMA       a σ per parameter (meanfield): the variational optimizers
 *               learn it, the state's sigma is non-zero only here
 *   SIGMA_LRT   with SIGMA: the pass samples the layer from sigma by the
 *               local reparameterisation trick (dense); a SIGMA layer
 *               without it ignores sigma and needs a weight sample instead
 *   PASS_NOISE  the pass draws the layer's noise itself from rng (dropout
 *               masks, whvi's g, emp and ecmp components): its predictions
 *               are random without σ
 *   COMPONENTS  k components (emp, ecmp): its tensors hold k copies
 *               (bnn_tensor.components), each with the prior's precision / k
 *   WHVI        a WHVI block: its q(g) lives in the parameters, with its own
 *               KL term (bnn_whvi_kl) and no weight decay
 */
#define BNN_CAPABILITIES(X) \
	X(SIGMA, 0)         \
	X(SIGMA_LRT, 1)     \
	X(PASS_NOISE, 2)    \
	X(COMPONENTS, 3)    \
	X(WHVI, 4)

enum bnn_capability {
#define BNN_CAP_ENUM(name, bit) BNN_CAP_##name = 1u << (bit),
	BNN_CAPABILITIES(BNN_CAP_ENUM)
#undef BNN_CAP_ENUM
#define BNN_CAP_BIT(name, bit) | BNN_CAP_##name
	BNN_CAP_ALL = 0 BNN_CAPABILITIES(BNN_CAP_BIT) /* every capability this
	                                                 library knows */
#undef BNN_CAP_BIT
};

/* What a parameter tensor is for. */
enum bnn_role {
	BNN_ROLE_WEIGHT,       /* a layer's weight matrix or kernel */
	BNN_ROLE_BIAS,         /* a layer's bias */
	BNN_ROLE_LOG_SIGMA,    /* gaussian likelihood: log σ per output (learned) */
	BNN_ROLE_SCALE,        /* batchnorm: γ, a scale per channel */
	BNN_ROLE_SHIFT,        /* batchnorm: β, a shift per channel */
	BNN_ROLE_RUNNING_MEAN, /* batchnorm statistics (stat_tensors): the */
	BNN_ROLE_RUNNING_VAR,  /*   running mean and variance per channel */
	/* whvi layers (W = S1·H·diag(g)·H·S2 per block; docs/whvi.md), each
	 * tensor [stack, D] or, for the flows, [stack, flows, D] and
	 * [stack, flows]; the bias's mean has role BIAS */
	BNN_ROLE_WHVI_S1,      /* the diagonal S1 of every block (optimised) */
	BNN_ROLE_WHVI_S2,      /* the diagonal S2 of every block (optimised) */
	BNN_ROLE_WHVI_G_MEAN,  /* μ of q(g) = N(μ, diag(σ²)) */
	BNN_ROLE_WHVI_G_RHO,   /* ρ of q(g): σ = softplus(ρ) */
	BNN_ROLE_WHVI_FLOW_U,  /* planar flows (appendix C, eq. 20): u */
	BNN_ROLE_WHVI_FLOW_W,  /*   w */
	BNN_ROLE_WHVI_FLOW_B,  /*   b, one per flow */
	BNN_ROLE_WHVI_BIAS_RHO /* the bias's ρ: σ_b = softplus(ρ_b) */
};

/* How a tensor is initialised (bnn_params_init). */
enum bnn_init {
	BNN_INIT_ZERO,           /* 0 */
	BNN_INIT_GLOROT_UNIFORM, /* U(±sqrt(6/(fan_in + fan_out))) */
	BNN_INIT_HE_NORMAL,      /* N(0, 2/fan_in): layers feeding a ReLU-like unit */
	BNN_INIT_ONE,            /* 1: batchnorm's γ and running variance */
	BNN_INIT_RHO             /* softplus⁻¹(0.01) = −4.600: the ρ of whvi
	                            layers, σ = 0.01 at the start */
};

/* The σ that BNN_INIT_RHO starts from. */
#define BNN_INIT_RHO_SIGMA 0.01

typedef struct bnn_tensor {
	const char *name; /* "h1.weight", "h1.bias", "y.log_sigma", "b.scale" */
	int layer;        /* index into layers[], or -1 (likelihood) */
	int role;         /* enum bnn_role */
	long offset;      /* first element in the flat parameter vector */
	long size;        /* number of elements */
	int rank;         /* 1, 2 (dense weight: [out, in], row-major; whvi:
	                     [stack, D]), 3 (whvi flows: [stack, F, D]) or 4
	                     (conv2d weight: [F, C, KH, KW]) */
	long shape[4];
	long fan_in, fan_out;
	int init;       /* enum bnn_init */
	int components; /* 1; k for a layer with an emp(k) or ecmp(k)
	                   posterior: the tensor holds k copies of shape,
	                   one after the other (size counts them all) */
} bnn_tensor;

typedef struct bnn_layer {
	const char *name;       /* the node's name in the model */
	const char *op;         /* "dense" */
	const char *family;     /* "meanfield": the family's name in the model,
	                           for messages and summaries */
	unsigned caps;          /* BNN_CAP_* bits of the family (and op) */
	int k;                  /* emp, ecmp: components */
	double p;               /* dropout: drop probability */
	int flows;              /* whvi: planar flows */
	double prior_precision; /* resolved: the layer's or the model's */
	long in_features, out_features;
	int first_tensor, ntensors; /* its tensors: tensors[first_tensor ..] */
	int prior_kind;             /* BNN_PRIOR_GAUSSIAN of precision
	                               prior_precision (its own '~ F(prior = P)',
	                               or the model's gaussian), or the kind of
	                               the model's prior (bnn_model.prior), with
	                               prior_precision 0 */
} bnn_layer;

/*
 * One pass of the generated code over a minibatch.  The caller fills the
 * inputs and points the outputs it wants at its own arrays:
 *   w       the parameters (model->nparams floats)
 *   x       the batch inputs, batch × model->inputs, row-major
 *   y       the targets, batch × model->targets (NULL: no loss)
 *   batch   1 .. the batch the workspace was sized for
 *   ws      workspace of model->workspace_floats(batch) floats, contents
 *           undefined before and after
 *   out     if not NULL: receives the outputs (logits, or the Gaussian
 *           mean), batch × model->outputs
 *   grad    if not NULL (needs y): receives the gradient of the mean loss
 *           (1/B)·Σ_i ℓ_i with respect to w (overwritten, nparams floats)
 *   sqgrad  if not NULL (needs grad): receives (1/B)·Σ_i g_i∘g_i, the mean
 *           of the squared per-example gradients g_i = ∇ℓ_i (VOGN's
 *           Gauss-Newton diagonal), computed without forming any g_i
 * Noise inside the pass (posterior families that the generated code
 * itself samples):
 *   rng     if not NULL: the pass is stochastic.  Layers with a dropout(p)
 *           posterior draw a Bernoulli mask per example and input unit
 *           (kept with probability 1 − p, scaled by 1/(1 − p)); meanfield
 *           dense layers use the local reparameterisation trick when sigma
 *           is given; whvi layers draw their g = μ + σ∘ε per example (their
 *           posterior is in w: they use neither sigma nor grad_sigma).
 *           The pass draws from rng in a fixed order, so the same rng
 *           state gives the same pass.  NULL: deterministic (no
 *           masks: the mean network of MC dropout; no weight noise).
 *   sigma   if not NULL (with rng): the posterior standard deviation of
 *           every parameter (nparams floats, same layout as w).  Meanfield
 *           dense layers then compute their output distribution from w
 *           (the mean) and sigma: mean X·Wᵀ + b, variance (X∘X)·(σ_W²)ᵀ + σ_b²,
 *           one Gaussian draw per example and unit (Bayes-by-Backprop's
 *           local reparameterisation).  Other layers ignore sigma.
 *   grad_sigma  with sigma, rng and grad: receives the gradient of the
 *           mean loss with respect to sigma for the tensors of meanfield
 *           dense layers; its other entries are not touched.
 * Batch normalisation (models whose nstats is not 0):
 *   stats   the running statistics (model->nstats floats, laid out by
 *           stat_tensors: each batchnorm layer's running mean and running
 *           variance per channel), or NULL.
 *   train   with stats: non-zero normalises every batchnorm layer by the
 *           statistics of the batch and folds them into stats (running ←
 *           (1 − momentum)·running + momentum·batch, the variance unbiased,
 *           as PyTorch does); zero normalises by stats, which are not
 *           changed (prediction).  Without stats, batchnorm layers always
 *           use the batch's statistics and nothing is stored (gradient
 *           checks).  The gradient is that of the loss as computed: with
 *           batch statistics it flows through the mean and variance.
 * Overlap (data-parallel training, docs/distributed.md):
 *   ready   if not NULL (with grad): called with ready_ctx after the
 *           backward pass of each layer with parameters, in backward
 *           order, as ready(ready_ctx, offset, size): the entries
 *           [offset, offset + size) of grad, sqgrad and grad_sigma (the
 *           layer's tensors) are final, so the runtime can start summing
 *           them over the processes while the pass goes on.  Parameters
 *           never reported (the likelihood's σ, and every one with code
 *           generated before this field existed, which ignores it) are
 *           final when the pass returns.
 * Last-layer features (last-layer Laplace, docs/laplace.md):
 *   features  if not NULL (and model->features > 0): receives the input of
 *           the model's last layer, batch × model->features floats, as the
 *           forward pass computed it; ignored when model->features is 0.
 * The pass returns Σ_i ℓ_i, the summed negative log-likelihood of the
 * batch (0 when y is NULL).  It cannot fail: the runtime validates sizes.
 */
typedef struct bnn_pass {
	const float *w;
	const float *x;
	const float *y;
	long batch;
	float *ws;
	float *out;
	float *grad;
	float *sqgrad;
	bnn_rng *rng;
	const float *sigma;
	float *grad_sigma;
	float *stats;
	int train;
	void (*ready)(void *ctx, long offset, long size);
	void *ready_ctx;
	float *features;
} bnn_pass;

typedef struct bnn_model {
	int abi;            /* BNN_MODEL_ABI */
	const char *name;   /* the model name (the C prefix) */
	const char *source; /* the .bnn file it was compiled from */
	const char *bnnc_version;
	uint64_t fingerprint;  /* FNV-1a 64 of canonical */
	const char *canonical; /* the canonical model text */
	const char *input_name;
	int input_rank; /* 1 [features], 2 [channels, length] or 3 [channels, height, width] */
	long input_shape[3];
	long inputs;    /* floats per example */
	long outputs;   /* floats of output per example: the node the
	                   likelihood reads, then its second node with
	                   BNN_SCALE_NODE (2 × targets) */
	int likelihood; /* enum bnn_likelihood */
	const char *target_name;
	long targets;           /* target floats per example: 1 (a class
	                           label) for categorical, else outputs */
	double sigma;           /* the fixed scale: gaussian's σ, laplace's b... */
	int sigma_learned;      /* enum bnn_scale_source: fixed (0), learned
	                           (1: the log of the scale is a parameter
	                           tensor, role BNN_ROLE_LOG_SIGMA) or a node */
	double prior_precision; /* the model's default prior precision (0 when
	                           its prior is not gaussian: see prior) */
	long nparams;
	int ntensors;
	const bnn_tensor *tensors;
	int nlayers;
	const bnn_layer *layers;
	long nstats;       /* floats of batchnorm running statistics */
	int nstat_tensors; /* their tensors (role RUNNING_MEAN or
	                      RUNNING_VAR, offsets into the statistics),
	                      in order, tiling nstats */
	const bnn_tensor *stat_tensors;
	/* Workspace floats needed by a pass of up to `batch` examples. */
	size_t (*workspace_floats)(long batch);
	/* The generated pass (see struct bnn_pass). */
	double (*pass)(const bnn_pass *p);
	/* The node the likelihood reads and its op ("dense", "tanh"), for
	 * messages; and when it is a dense layer without a posterior of its
	 * own (point or unannotated), its input width, which the pass writes
	 * to bnn_pass.features, and its index in layers[]: the last layer of
	 * last-layer Laplace.  features 0 (and features_layer -1): another
	 * kind of output node. */
	const char *output_node;
	const char *output_op;
	long features;
	int features_layer;
	/* An input declared "input ids[T] int;": its values are integer ids,
	 * each in [0, input_vocab) (the smallest vocab of the embeddings that
	 * read it), which bnn_model_check_inputs checks in the data.  0: the
	 * input holds real values. */
	long input_vocab;
	bnn_prior prior; /* the model's prior statement (gaussian of
	                    precision prior_precision without one) */
	double df;       /* studentt: ν, the degrees of freedom; else 0 */
} bnn_model;

/**
 * Check that a descriptor is one this library can drive (ABI, sizes,
 * tensor offsets inside nparams).
 * @return BNN_OK or BNN_EUNSUPPORTED / BNN_EINVAL with a message.
 */
int bnn_model_check(const bnn_model *m, bnn_err *err);

/** The number of classes of a classification model: outputs for
 *  categorical, 2 per label for bernoulli, 0 for a regression model. */
int bnn_model_classes(const bnn_model *m);

/* What a likelihood's targets are (one row per likelihood in model.c's
 * table, so that the runtime asks the table, never lists likelihoods). */
enum bnn_target_kind {
	BNN_TARGETS_CLASS,  /* one class label per example (categorical) */
	BNN_TARGETS_BINARY, /* a 0/1 label per output (bernoulli) */
	BNN_TARGETS_REAL,   /* a real value per output (regression) */
	BNN_TARGETS_COUNT   /* a non-negative integer per output (poisson) */
};

/** The kind of targets of the model's likelihood (enum bnn_target_kind). */
int bnn_likelihood_targets(const bnn_model *m);

/** Whether the model is a regression model: real-valued targets, and a
 *  predictive mean and variance per output (bnn_predict's probs and var)
 *  instead of class probabilities. */
int bnn_likelihood_regression(const bnn_model *m);

/** Values per example of bnn_predict's probs and var: the classes (or
 *  labels) of a classifier, the targets of a regression model (whose
 *  outputs may hold a second node, BNN_SCALE_NODE). */
long bnn_model_predictions(const bnn_model *m);

/** Whether the model's likelihood has a finite variance: not so for
 *  studentt with ν ≤ 2, whose predictive variance is then +inf. */
int bnn_likelihood_variance_finite(const bnn_model *m);

/** The model's likelihood as written in .bnn ("categorical"). */
const char *bnn_likelihood_name(int likelihood);

/** A prior's name as written in .bnn ("gaussian", "scalemixture",
 *  "laplace"; "?" out of range). */
const char *bnn_prior_name(int kind);
/* A layer's posterior family is named by its bnn_layer.family string
 * ("meanfield", written by bnnc from the language's list); what the family
 * needs is in bnn_layer.caps.  There is no family enum: the runtime does
 * not repeat the language's list. */

#ifdef __cplusplus
}
#endif

#endif /* BNN_MODEL_H */
