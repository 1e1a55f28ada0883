/*
 * bnn_train.h: training, prediction and model checkpoints (included by
 * bnn.h).
 *
 * A bnn_state is everything that makes a trained model: its parameters,
 * the optimizer's state and step count, the input standardisation, and
 * the training options that produced it.  bnn_train() runs minibatch
 * training on a data set (shuffled each epoch, optional validation split,
 * early stopping on validation NLL); bnn_predict() turns inputs into
 * predictive distributions; bnn_state_save()/bnn_state_load() move a state
 * through a checkpoint (bnn_checkpoint.h) tied to the model's fingerprint.
 * docs/training.md describes the options and their names for --set.
 */
#ifndef BNN_TRAIN_H
#define BNN_TRAIN_H

#include <stdint.h>
#include <stdio.h>

#include "bnn_core.h"
#include "bnn_data.h"
#include "bnn_model.h"
#include "bnn_optim.h"
#include "bnn_rng.h"

#ifdef __cplusplus
extern "C" {
#endif

enum bnn_optimizer {
	BNN_OPT_SGD,
	BNN_OPT_ADAM,
	BNN_OPT_ADAMW,
	BNN_OPT_VOGN,  /* variational online Gauss-Newton (docs/optimizers/vogn.md) */
	BNN_OPT_IVON,  /* improved variational online Newton (ivon.md) */
	BNN_OPT_BADAM, /* Adam, then a Laplace posterior from its v (badam.md) */
	BNN_OPT_BBB,   /* Bayes-by-Backprop: one weight sample a pass, or the local
	                  reparameterisation with lrt = 1 (bbb.md) */
	BNN_OPT_COUNT
};

/* VOGN's options beyond the shared ones (Osawa et al., Algorithm 1). */
typedef struct bnn_vogn_options {
	float beta1;       /* momentum rate β1 [0.9] [beta1] */
	float beta2;       /* β2 of Alg. 1 line 20, the weight of the new ĥ [0.001] [beta2] */
	double tau;        /* tempering τ at the end of the schedule [1] [tau] */
	double tau_start;  /* τ at the start; NaN: tau (no schedule) [tau_start] */
	double tau_epochs; /* epochs of the linear τ schedule [0] [tau_epochs] */
	double rho;        /* data-augmentation factor ρ: N ← ρN [100] [rho] */
} bnn_vogn_options;

/* IVON's options beyond the shared ones (Shen et al., Algorithm 1). */
typedef struct bnn_ivon_options {
	float beta1;        /* gradient momentum β1 [0.9] [beta1] */
	float beta2;        /* Hessian momentum β2 [0.99999] [beta2] */
	double h0;          /* Hessian initialisation h0; NaN: bnn_train_h0 [h0] */
	double clip_radius; /* element-wise clipping ξ of the step; 0: off [clip_radius] */
	int rescale_lr;     /* α ← (h0 + δ)α (not with clipping) [1] [rescale_lr] */
} bnn_ivon_options;

/* Every training option, with its --set name in brackets. */
typedef struct bnn_train_options {
	int optimizer;         /* enum bnn_optimizer [optimizer] */
	bnn_schedule schedule; /* lr [lr] (0: the optimizer's default, see
	                          bnn_default_lr), kind [schedule]
	                          (BNN_SCHEDULE_DEFAULT: the optimizer's, see
	                          bnn_default_schedule), gamma,
	                          milestones, warmup, lr_min; total is set to
	                          epochs */
	bnn_sgd_params sgd;    /* momentum, nesterov, weight_decay */
	bnn_adam_params adam;  /* beta1, beta2, eps, weight_decay (adam, adamw,
	                          badam, bbb) */
	bnn_vogn_options vogn;
	bnn_ivon_options ivon;
	int mc;                /* Monte-Carlo samples per step (vogn, ivon,
	                          bbb) [1] [mc] */
	double delta;          /* vogn: prior precision δ; ivon: weight decay
	                          δ; badam, bbb: prior precision; NaN: from
	                          each layer's prior precision (docs/optimizers)
	                          [delta] */
	double ess;            /* ivon: effective sample size λ; badam: the
	                          N of the posterior precision N√v̂ + δ
	                          (Kessler et al., appendix C: a
	                          hyperparameter); 0: the optimizer's
	                          default, see bnn_default_ess [0] [ess] */
	double sigma0;         /* bbb: initial posterior σ [1e-3] [sigma0] */
	int lrt;               /* bbb: 0, one weight sample θ = μ + σε per
	                          pass and g_σ = g·ε (Blundell et al.); 1,
	                          the local reparameterisation trick in dense
	                          layers (a Gaussian draw per example and
	                          unit) [0] [lrt] */
	double clip;           /* gradient-norm clipping; 0: off; NaN: the
	                          optimizer's default, see bnn_default_clip
	                          [NaN] [clip] */
	long epochs;           /* [epochs] */
	long batch;            /* [batch] */
	uint64_t seed;         /* [seed] */
	int threads;           /* threads; 0: every core the process may
	                          use, bnn_threads_available() [0] [threads] */
	double valid_fraction; /* held out of the training data when no
	                          validation set is given; 0: none [valid_fraction] */
	long patience;         /* early stopping: epochs without a better
	                          validation NLL; 0: off [patience] */
	long crop_pad;         /* augmentation of image data (rank 2 or 3):
	                          random crop with this many pixels of zero
	                          padding; 0: off [crop_pad] */
	int flip;              /* augmentation: random horizontal flip [0]
	                          [flip] (bnn_augment_image) */
	long loo;              /* > 0: after every epoch, the leave-one-out
	                          estimate of the NLL on this many training
	                          examples, evenly spaced (all when more);
	                          0: off [0] [loo] (docs/sensitivity.md) */
	int verbose;           /* progress line on stderr */
	long swag;             /* sgd, adam, adamw: collect SWAG's moments over
	                          the last this many epochs, and end with the
	                          SWAG posterior (docs/swag.md); 0: off [swag] */
	long swag_rank;        /* SWAG's low-rank part: the last this many
	                          deviations [20] [swag_rank] */
} bnn_train_options;

/** "sgd", "adam", "adamw", "vogn", "ivon", "badam", "bbb" ("none" for
 *  anything else). */
const char *bnn_optimizer_name(int optimizer);
/** The enum bnn_optimizer of a name, or -1. */
int bnn_optimizer_from_name(const char *name);

/** Set the number of threads the library runs on for the calling thread's
 *  work (passes, products, sampling, updates, prediction, metrics); 0 or
 *  less: bnn_threads_available().  It is OpenMP's team size, which is per
 *  calling thread.  1 runs everything serially, as a build without
 *  OpenMP does.  Results do not depend on the count (docs/training.md,
 *  "Threads"). */
void bnn_set_threads(int threads);
/** The threads the calling thread's parallel work runs on now. */
int bnn_threads(void);
/** The threads a parallel region started here would get: 1 inside an
 *  active parallel region (OpenMP runs nested regions on one thread),
 *  else bnn_threads().  For generated code (bnn_gen/loop.h). */
int bnn_threads_here(void);
/** The calling thread's number in its team, 0 outside a parallel region.
 *  For generated code (bnn_gen/loop.h). */
int bnn_thread_index(void);
/** Every core the process may use: the CPUs of its affinity mask, capped
 *  by a cgroup CPU quota; at least 1. */
int bnn_threads_available(void);

/** The learning rate an optimizer uses when none is given: sgd 0.01;
 *  adam, adamw, badam, bbb 1e-3; vogn 5e-5 (on a run of
 *  BNN_SHORT_RUN_STEPS steps or more: bnn_train_lr scales it on a shorter
 *  one); ivon 0.3 (rescaled by h0 + δ). */
double bnn_default_lr(int optimizer);
/** The schedule an optimizer uses when none is given (enum
 *  bnn_schedule_kind): cosine for ivon and vogn, whose papers decay the
 *  learning rate (docs/optimizers/ivon.md, vogn.md), and for badam, whose
 *  Laplace posterior is taken at a converged iterate (badam.md); constant
 *  otherwise. */
int bnn_default_schedule(int optimizer);
/** The schedule o trains with: its own, or its optimizer's default. */
int bnn_train_schedule_kind(const bnn_train_options *o);
/** The gradient-norm clip an optimizer uses when none is given: 2 for
 *  ivon, whose first steps are about lr·ĝ and overflow exponential links
 *  and attention without it (docs/optimizers/ivon.md); 0 (off) for the
 *  others. */
double bnn_default_clip(int optimizer);
/** The effective sample size an optimizer uses when none is given, for a
 *  model trained on n examples: for badam, n × the largest fan-in of a
 *  layer with a posterior (the N of its σ = 1/√(N√v̂ + δ), scaled as the
 *  weights' own precision scales with the fan-in; docs/optimizers/badam.md,
 *  "Defaults and their evidence"); n for the others (ivon's λ = N). */
double bnn_default_ess(const bnn_model *m, int optimizer, double n);
/** The gradient-norm clip o trains with: its own (0: off), or its
 *  optimizer's default when o->clip is NaN. */
double bnn_train_clip(const bnn_train_options *o);
/** IVON's h0 when none is given, for a run of BNN_SHORT_RUN_STEPS steps
 *  or more: 0.1 (docs/optimizers/ivon.md); 0 for the optimizers without
 *  an h0. */
double bnn_default_h0(int optimizer);
/** A run of fewer steps than this scales one default of IVON and VOGN up
 *  by BNN_SHORT_RUN_STEPS / steps (bnn_short_run_scale): the defaults were
 *  chosen and measured on runs of 2,345 to 4,690 steps, which it keeps
 *  as they were. */
#define BNN_SHORT_RUN_STEPS 2000
/** The steps a run of o takes on n training examples: epochs × ⌈n / batch⌉
 *  (the last, partial minibatch counted). */
double bnn_train_steps(const bnn_train_options *o, double n);
/** max(1, BNN_SHORT_RUN_STEPS / steps): 1 for a run of
 *  BNN_SHORT_RUN_STEPS steps or more. */
double bnn_short_run_scale(double steps);
/** The learning rate o trains with on n examples: its own, or its
 *  optimizer's default (bnn_default_lr), which for vogn a short run
 *  multiplies by bnn_short_run_scale, so that the sum of the rates over
 *  the run is at least what a run of BNN_SHORT_RUN_STEPS steps has
 *  (docs/optimizers/vogn.md). */
double bnn_train_lr(const bnn_train_options *o, double n);
/** IVON's h0 o trains with on n examples: its own, or bnn_default_h0 ×
 *  bnn_short_run_scale, so that the initial variance 1/(λ(h0 + δ)) per
 *  step of a short run is at most what a run of BNN_SHORT_RUN_STEPS steps
 *  has (docs/optimizers/ivon.md). */
double bnn_train_h0(const bnn_train_options *o, double n);
/** The defaults: adam, lr 0 (the optimizer's default), the optimizer's
 *  schedule (BNN_SCHEDULE_DEFAULT), 10 epochs, batch 128, seed 1, threads
 *  0 (every core the process may use), no validation, the optimizer's
 *  clipping (clip NaN, bnn_default_clip), no early stopping, 1 MC sample
 *  per step, δ from the model. */
bnn_train_options bnn_train_defaults(void);

/**
 * Set an option by its --set name from text ("lr", "1e-3").  "auto" leaves
 * delta, tau_start and ess to the trainer (their defaults: NaN, NaN, 0).
 * @return BNN_OK; BNN_EINVAL with a message naming the option (unknown
 *         name with a suggestion, value not a number, out of range).
 */
int bnn_train_set(bnn_train_options *o, const char *name, const char *value, bnn_err *err);

/**
 * Check that every option set away from its default is in the range
 * bnn_train_set accepts (for fields set in the struct directly) and is
 * read: by the
 * optimizer chosen (h0 is IVON's, mc is read by vogn, ivon and bbb only,
 * ...), by the schedule chosen (gamma and milestones by step, lr_min by
 * cosine), and with the validation there is (patience needs validation
 * data; valid_fraction is not read when valid_set is given).  bnn_train
 * calls it, so an option is never ignored silently.
 * @param valid_set  1 when training will get a validation data set.
 * @return BNN_OK; BNN_ERANGE (out of range) or BNN_EINVAL (not read), with
 *         a message naming the option and why.
 */
int bnn_train_options_check(const bnn_train_options *o, int valid_set, bnn_err *err);

/**
 * bnn_train_options_check for model m (NULL: any model), which also
 * refuses what only some models read: delta with sgd, adam or adamw is read
 * by whvi layers alone, so it is refused for a model without them.
 * bnn_train calls this one with the model it trains.
 */
int bnn_train_options_check_model(const bnn_train_options *o, const bnn_model *m, int valid_set,
                                  bnn_err *err);

/** Print the option names with a line of help each (for --help). */
void bnn_train_options_help(FILE *out);

/** The options as one line of "name=value" text (owned by the caller;
 *  NULL when out of memory).  threads is left out: it does not change
 *  what training computes, and checkpoints carry this text.  An option
 *  left to the trainer reads "auto" ("delta=auto"; checkpoints written
 *  before say "delta=nan", "ess=0", and bnn_state_load reads them as
 *  "auto").  A float option (beta1, beta2, eps, momentum, weight_decay)
 *  is the shortest decimal that reads back as its float ("beta1=0.9";
 *  older checkpoints' "beta1=0.899999976" is read as that), a double one
 *  has up to nine significant digits. */
char *bnn_train_options_text(const bnn_train_options *o);

/* A trained (or training) model. */
/* How many arrays of optimizer state a bnn_state can hold. */
#define BNN_OPT_SLOTS 5

/* Where a training run stands beyond the state's arrays (random streams,
 * early stopping, the live state when the arrays hold the best epoch's):
 * what bnn_train needs to continue the run (bnn_train_io.resume).
 * Opaque; a checkpoint's resume sections (docs/checkpoint.md). */
typedef struct bnn_train_progress bnn_train_progress;

/* A Gaussian posterior attached after training to a network whose layers
 * have none (a point network): sections 'posterior' and 'posterior.dev'
 * of a checkpoint (docs/checkpoint.md).  Its mean is bnn_state.params and
 * its diagonal scale bnn_state.sigma (then any tensor may have σ > 0);
 * prediction samples θ = μ + σ∘z1 (+ the low-rank part below). */
enum bnn_posthoc_kind {
	BNN_POSTHOC_LAPLACE = 1,            /* diagonal Laplace: σ = (δ + diag GGN)^(-1/2)
	                            (docs/laplace.md) */
	BNN_POSTHOC_SWAG = 2,               /* SWAG: σ = Σ_diag^(1/2)/√2, and θ +=
	                            D·z2/√(2(R − 1)) (docs/swag.md) */
	BNN_POSTHOC_LAPLACE_LAST_LAYER = 3, /* last-layer Laplace: a full
	                            covariance of the output layer's weights
	                            and bias (docs/laplace.md); σ is its
	                            diagonal's root there, 0 elsewhere */
	BNN_POSTHOC_LAPLACE_KRON = 4        /* last-layer Laplace with the Kronecker-
	                            factored GGN A ⊗ G (laplace_kron.c); σ as
	                            for the full covariance */
};

/* How bnn_predict() (mc > 0) uses a last-layer Laplace posterior. */
enum bnn_laplace_predictive {
	BNN_LAPLACE_PROBIT = 0, /* the linearised predictive by the probit
	                           approximation: one pass, logits f_k scaled by
	                           (1 + π/8·Σ_f[k,k])^(-1/2) (MacKay 1992) */
	BNN_LAPLACE_MC = 1      /* mc samples of the last layer's parameters */
};

typedef struct bnn_posthoc {
	int kind;               /* enum bnn_posthoc_kind */
	double prior_precision; /* laplace: the δ of the precision */
	char hessian[16];       /* laplace: "mc_fisher" or "emp_fisher" */
	long examples;          /* laplace: the examples summed; swag: the
	                           iterates averaged */
	long rank;              /* swag: R, the rows of dev (0, or >= 2) */
	float *dev;             /* swag: R × nparams, owned: the deviations
	                           θ_i − θ̄_i of the last R iterates, oldest first */
	/* last-layer Laplace: P = outputs × (features + 1 with a bias) of the
	 * layer model->features_layer, ordered output by output, each its
	 * weight row then its bias; the precision Λ = L·Lᵀ (L lower); chol
	 * holds L⁻¹ packed by rows (row i: columns 0..i), so the covariance is
	 * L⁻ᵀ·L⁻¹; blocks holds its diagonal blocks Σ_kk, outputs × D × D
	 * (D = P / outputs), derived from chol */
	long params;
	float *chol, *blocks;
	/* Kronecker-factored last-layer Laplace: the precision is
	 * G ⊗ A + δI (output by output), A = Σ_i φ̃_i φ̃_iᵀ (D × D), G the mean
	 * over the examples of the logits' Hessians (outputs × outputs); each
	 * factor's eigenvectors, one per row (a_vec D × D, g_vec K × K), and
	 * eigenvalues (a_val D, g_val K, >= 0) */
	float *a_vec, *a_val, *g_vec, *g_val;
	int predictive; /* enum bnn_laplace_predictive: not saved, the caller's
	                   choice for bnn_predict (0: probit) */
} bnn_posthoc;

/** Frees a post-hoc posterior and what it owns (NULL is accepted). */
void bnn_posthoc_free(bnn_posthoc *p);

typedef struct bnn_state {
	const bnn_model *model;       /* borrowed */
	float *params;                /* model->nparams, owned: the parameters, or
	                                 the mean of the posterior */
	float *stats;                 /* model->nstats, owned (NULL when 0): the
	                                 running statistics of batchnorm layers,
	                                 updated by every training pass and used
	                                 by prediction */
	float *sigma;                 /* model->nparams, owned, or NULL: the
	                                 posterior standard deviation of each
	                                 parameter (0 for deterministic ones); NULL
	                                 for a point estimate.  During bnn_train it
	                                 is up to date at the end of every epoch
	                                 (not within one: badam, and vogn and ivon
	                                 with mc = 1, derive it from opt[] then) */
	int optimizer;                /* enum bnn_optimizer of opt[] (-1: none) */
	float *opt[BNN_OPT_SLOTS];    /* the optimizer's arrays, nparams each,
	                                 owned, NULL when unused:
	                                 sgd [0] momentum; adam, adamw, badam [0] m
	                                 [1] v; vogn [0] momentum [1] s; ivon [0] g
	                                 [1] h; bbb [0] m [1] v of the means, [2] ρ
	                                 (σ = softplus ρ), [3] m [4] v of ρ */
	long step;                    /* optimizer steps taken */
	long epoch;                   /* epochs completed */
	bnn_standardizer standardize; /* features 0: inputs used as they are */
	char *options;                /* text of the options used, owned (or NULL) */
	char *columns;                /* owned, or NULL: the names of the training
	                                 CSV file's columns, saved as the section
	                                 "columns" ("target=NAME" lines, then
	                                 "feature=NAME" lines in file order), which
	                                 the driver checks later data against */
	bnn_train_progress *progress; /* owned, or NULL: where the run that made
	                                 this state stands, from bnn_state_load
	                                 of a checkpoint bnn_train wrote (saved
	                                 again by bnn_state_save); bnn_train
	                                 consumes it (docs/training.md,
	                                 "Resuming") */
	bnn_posthoc *posthoc;         /* owned, or NULL: a Laplace or SWAG
	                                 posterior of a point network */
	double temperature;           /* a categorical model's temperature T: bnn_predict
	                                 divides the logits by it (temperature scaling,
	                                 docs/calibration.md); 0: none */
} bnn_state;

/**
 * A new state with parameters initialised from seed (each tensor by its
 * init rule) and no optimizer state.  BNN_ENOMEM, or an invalid model.
 */
int bnn_state_init(bnn_state *st, const bnn_model *m, uint64_t seed, bnn_err *err);
void bnn_state_free(bnn_state *st);

/** Initialise params by the tensors' rules (He, Glorot, zero, one). */
void bnn_params_init(const bnn_model *m, float *params, bnn_rng *rng);

/** Initialise the running statistics of a model's batchnorm layers
 *  (model->nstats floats): means 0, variances 1. */
void bnn_stats_init(const bnn_model *m, float *stats);

/**
 * Save to a checkpoint (atomically replacing path).  Sections: params,
 * stats (with batchnorm layers), sigma, opt.a .. opt.e (the slots in use),
 * meta (text: optimizer, step, epoch), options, standardize.mean,
 * standardize.std, temperature (when st->temperature > 0), columns (when
 * st->columns is set).
 */
int bnn_state_save(const bnn_state *st, const char *path, bnn_err *err);

/**
 * Load a checkpoint written for the same model (same fingerprint); any
 * other is BNN_EMISMATCH naming both models.  st is initialised by this
 * call (free it with bnn_state_free) only on success.  st->progress is
 * set when the checkpoint has the resume sections.
 */
int bnn_state_load(bnn_state *st, const bnn_model *m, const char *path, bnn_err *err);

/** Drops st->progress: a state saved afterwards has no resume sections (a
 *  calibrated checkpoint is not a run to continue). */
void bnn_state_forget_progress(bnn_state *st);

/** The epochs the run of p had completed (its live state's), or -1 for
 *  NULL. */
long bnn_train_progress_epoch(const bnn_train_progress *p);

/**
 * Warm start: copy the parameters (the posterior mean) of the checkpoint
 * at path into st->params, tensor by tensor by name, from a checkpoint of
 * this model or of another one with the same tensors (a point model's
 * into a meanfield one's).  Nothing else is taken: σ, the optimizer
 * state, running statistics, standardisation and counters stay st's.
 * @return BNN_OK; BNN_EMISMATCH naming the tensor (missing on either
 *         side, or of another shape: both shapes), BNN_EFORMAT (no tensor
 *         list in a checkpoint of another model, or a bad one), the
 *         loader's errors.
 */
int bnn_state_warm_start(bnn_state *st, const char *path, bnn_err *err);

/* Progress of training, passed to a bnn_epoch_fn after every epoch
 * (final = 1) and, within an epoch, about twice a second (final = 0: only
 * epoch, train_loss so far, steps, examples_per_second are set). */
typedef struct bnn_epoch_report {
	int final;             /* 1: the epoch is complete */
	long epoch;            /* 1-based, counting this run's epochs */
	long epochs;           /* how many this run will do at most */
	long step, steps;      /* steps done in this epoch, of steps */
	double train_loss;     /* mean NLL over the epoch's examples so far */
	double valid_nll;      /* mean validation NLL; NAN without validation */
	double valid_accuracy; /* NAN without validation or for regression */
	double seconds;        /* wall time of the epoch so far */
	double examples_per_second;
	int improved;   /* best validation NLL so far (or no validation) */
	double lr;      /* final: the learning rate at the epoch's end */
	double loo_nll; /* final: the mean leave-one-out NLL estimate over the
	                   options' loo training examples (bnn_sensitivity);
	                   NAN when loo is 0 */
} bnn_epoch_report;
/* Return non-zero to stop training after this report: after a final one,
 * training ends with that epoch; after a progress report (final = 0, about
 * every half second within an epoch) it ends at once, and the partial
 * epoch is not counted in st->epoch (st->step has its steps).  Either way
 * bnn_train then ends as a run does (the best epoch's state with
 * validation data, the checkpoint saved) and returns BNN_OK. */
typedef int (*bnn_epoch_fn)(const bnn_epoch_report *r, void *ctx);

/* What bnn_train() reads and writes besides the state and the options. */
typedef struct bnn_train_io {
	const bnn_dataset *train;                          /* the training data (required) */
	const bnn_dataset *valid;                          /* validation data, or NULL */
	const char *checkpoint;                            /* the file to save to, or NULL */
	bnn_epoch_fn on_epoch;                             /* called with each report, or NULL */
	void *ctx;                                         /* passed to on_epoch and on_start */
	void (*on_start)(const char *settings, void *ctx); /* called once before
	                             the first epoch with the settings the run
	                             uses, on two lines: the options text, then
	                             what the trainer chose itself (the
	                             optimizer's lr and schedule, ess, δ), or NULL */
	int resume;            /* 1: continue the run st->progress describes (st
	                             loaded by bnn_state_load): its random streams,
	                             shuffles and early stopping go on where they
	                             were, and epochs counts from that run's start;
	                             one process only (docs/training.md) */
	long checkpoint_every; /* > 0: also save io->checkpoint after every this
	                             many epochs (counted from the run's start) */
	const void *comm;      /* data-parallel training: a pointer to the MPI_Comm
	                             whose ranks train together (docs/distributed.md),
	                             or NULL: MPI_COMM_WORLD when MPI is initialised,
	                             else this process alone.  A library built without
	                             MPI refuses a non-NULL comm. */
} bnn_train_io;

/**
 * Train st on io->train (io->valid may be NULL: then o->valid_fraction of
 * the training data, chosen at random from the seed, is held out when
 * positive).  Data must
 * already be standardised if wanted; targets are checked (labels in range).
 * Each epoch visits the training examples in a fresh random order, in
 * minibatches of o->batch (the last one may be smaller).
 * With validation data, st ends with the parameters and optimizer state of
 * the epoch with the lowest validation NLL, and training stops early after
 * o->patience epochs without improvement (when patience > 0).
 * A non-finite loss stops training with BNN_ERANGE; st then holds the state
 * at the start of the failed epoch (with validation data, the best epoch's),
 * and if an epoch of this run completed it is saved to io->checkpoint as at
 * the end of a run (a failed save returns its own code, the message saying
 * both); after a divergence in the first epoch the file is left as it was.
 * Data-parallel (io->comm, or MPI_COMM_WORLD when MPI is initialised, with
 * more than one process; docs/distributed.md): every process calls it with
 * the same data, state and options; each trains on its rows of every
 * global minibatch of o->batch (the first o->batch mod N processes take
 * one row more), the gradients and the optimizer's estimates are summed
 * over the processes, and every process ends with the same state.  Rank 0
 * alone writes io->checkpoint.  An error on any process is returned on
 * every one, with the failing rank's message ("rank R of N: ...").
 * io->checkpoint, if not NULL, is saved (atomically) at the end
 * (the best epoch's state with validation data), and during training after
 * an epoch that improved the validation NLL (or any epoch without
 * validation) when 30 seconds have passed since the last save, and after
 * every io->checkpoint_every epochs.  A save at an epoch's end also
 * writes the resume sections (docs/checkpoint.md), from which
 * io->resume continues the run bit for bit.
 * @return BNN_OK; BNN_EINVAL/BNN_EMISMATCH (options, data that does not fit
 *         the model), BNN_EUNSUPPORTED (posterior families these optimizers
 *         do not train), BNN_ERANGE (divergence), BNN_ENOMEM, BNN_EIO
 *         (checkpoint).
 */
int bnn_train(bnn_state *st, const bnn_train_io *io, const bnn_train_options *o, bnn_err *err);

/*
 * Data-parallel training over MPI (docs/distributed.md).  comm is a
 * pointer to an MPI_Comm, or NULL: MPI_COMM_WORLD when MPI is initialised,
 * else this process alone (rank 0 of 1).  In a library built without MPI
 * these are the one-process case.
 */
/** 1 when the library was built with MPI (./configure --with-mpi). */
int bnn_dist_available(void);
/** Whether this process was started by an MPI launcher (mpirun, srun). */
int bnn_dist_launched(void);
/** For a program's main: initialises MPI (MPI_Init_thread, funneled) when
 *  the library has it, the process was started by a launcher and MPI is
 *  not initialised yet.  Returns 1 if it did (then call
 *  bnn_dist_finalize at the end), 0 if not, a negative code on failure. */
int bnn_dist_init(int *argc, char ***argv, bnn_err *err);
/** MPI_Finalize, if MPI is initialised and not finalised, after a barrier
 *  on MPI_COMM_WORLD (so that every process's messages are out before one
 *  exits with a failure and mpirun ends the job). */
void bnn_dist_finalize(void);
/** This process's rank in comm (0 without MPI). */
int bnn_dist_rank(const void *comm);
/** The number of processes of comm (1 without MPI). */
int bnn_dist_size(const void *comm);
/** Agree on a status (collective): every rank passes its own rc (with its
 *  message in err when rc is not BNN_OK); every rank gets back the code
 *  of the lowest rank that failed, err then holding "rank R of N: " and
 *  that rank's message, or BNN_OK when all passed. */
int bnn_dist_agree(const void *comm, int rc, bnn_err *err);
/** Sum n doubles over the ranks of comm, in place (every rank gets the
 *  same bits).  0, or -1 when MPI failed. */
int bnn_dist_sum(const void *comm, double *v, long n);

/**
 * Check that ds fits model m: as many values per example as the model's
 * input, and (need_targets) the model's number of targets; not empty.
 * @return BNN_OK, BNN_EMISMATCH or BNN_EINVAL with a message.
 */
int bnn_data_fits(const bnn_model *m, const bnn_dataset *ds, int need_targets, bnn_err *err);

/**
 * Check that the inputs of ds are ones m takes: for a model whose input
 * holds integer ids (m->input_vocab > 0), every value an id in
 * [0, input_vocab) (bnn_data_check_ids); real inputs take any value.
 * source names the file in the messages.
 * @return BNN_OK, or the checker's error.
 */
int bnn_model_check_inputs(const bnn_model *m, const bnn_dataset *ds, const char *source,
                           bnn_err *err);

/**
 * Check that the targets of ds are ones the likelihood of m takes: class
 * labels (bnn_data_check_labels with bnn_model_classes), counts (poisson:
 * bnn_data_check_counts), any real value (gaussian, laplace).  source names
 * the file in the messages.
 * @return BNN_OK, or the checker's error.
 */
int bnn_model_check_targets(const bnn_model *m, const bnn_dataset *ds, const char *source,
                            bnn_err *err);

/* Which examples of a data set to run, and in what batches. */
typedef struct bnn_example_range {
	const long *idx; /* indices into the data set, or NULL: the first n */
	long n;          /* how many examples */
	long batch;      /* at most this many per pass */
} bnn_example_range;

/**
 * Run the model over examples r->idx[0..r->n) of ds (idx NULL: the first
 * n) in batches of at most r->batch, writing the raw outputs (n × outputs)
 * to out (may be NULL) and the summed NLL to *nll (may be NULL; then ds
 * needs no targets).  ds must already be standardised.
 */
int bnn_model_outputs(const bnn_state *st, const bnn_dataset *ds, const bnn_example_range *r,
                      float *out, double *nll, bnn_err *err);

/** Whether predictions from st are random: it has a posterior (sigma) or
 *  the model has dropout, emp, ecmp or whvi layers.  Then Monte-Carlo prediction means
 *  something; otherwise every sample is the same network. */
int bnn_state_is_stochastic(const bnn_state *st);

/* Where bnn_predict() writes (NULL fields: not wanted, except probs). */
typedef struct bnn_prediction {
	float *probs;     /* n × outputs: probabilities, or the regression mean */
	float *var;       /* regression: n × outputs, the mixture variance, or NULL */
	double *nll;      /* the summed NLL, or NULL (then ds needs no targets, unless
	                     nll_each is given) */
	double *nll_each; /* n: each example's NLL, or NULL */
	/* Classification only (categorical, bernoulli); each may be NULL: */
	double *expected_entropy; /* n: E_θ H[p(y | x, θ)], the mean over the
	                             samples of each one's entropy (aleatoric) */
	double *energy;           /* n: the mean over the samples of the energy
	                             score of each one's logits (Liu et al. 2020) */
	float *logits;            /* max(mc, 1) × n × outputs: each sample's raw outputs, before
	                  st->temperature, sample-major (bnn_fit_temperature), or NULL */
	/* Regression only (gaussian, laplace, poisson; ignored otherwise), with
	 * nll or nll_each (the targets); each may be NULL: */
	double *cdf;       /* n × outputs: the predictive CDF at the target,
	                      P(Y ≤ y), the mean over the samples of each one's */
	double *cdf_below; /* n × outputs: P(Y < y); the same as cdf but for
	                      counts (poisson: P(Y ≤ y − 1)) */
	/* Regression only, without targets too; may be NULL: */
	float *aleatoric; /* n × outputs: the mean over the samples of the
	                      likelihood's variance, the aleatoric part of var
	                      (+inf for studentt with ν ≤ 2) */
	float *epistemic; /* n × outputs: the variance of the samples' means,
	                      the epistemic part of var (0 with mc = 0), finite
	                      whenever the means are (docs/metrics.md) */
} bnn_prediction;

/* The examples per batch of bnn_predict(): batch j is examples
 * [256j, 256(j + 1)) of the data set (the last one shorter). */
#define BNN_PREDICT_BATCH 256

/**
 * Predictive distributions for every example of ds (standardised already),
 * written to the arrays of out.
 * mc = 0 predicts at the posterior mean: the parameters in st->params, no
 * dropout masks.  mc = S > 0 averages S Monte-Carlo samples: each draws
 * θ = μ + σ∘ε for the whole data set (when st->sigma is set) and fresh
 * dropout masks (per example).  The randomness depends on (seed, sample,
 * batch) only: sample s's weights come from a generator seeded with
 * bnn_rng_derive(bnn_rng_derive(seed, s), 0), the pass noise of batch j
 * in sample s from one seeded with bnn_predict_seed(seed, s, j); so the
 * result is the same for every number of threads, and for any split of
 * the batches (bnn_predict_batches()).
 *   categorical: out->probs n × outputs, the mean of the S softmax outputs;
 *   bernoulli:   out->probs n × outputs, the mean of the S values of
 *                P(y = 1);
 *   gaussian:    out->probs receives the mixture mean, out->var (may be
 *                NULL) the mixture variance: mean of (σ² + μ_s²) − (mean
 *                of μ_s)²;
 *   laplace:     the same with the variance 2b² in place of σ²;
 *   poisson:     out->probs the mean rate E_s[λ_s] (λ_s = e^z), out->var
 *                E_s[λ_s] + Var_s[λ_s] (aleatoric + epistemic).
 * Regression models with targets: out->cdf and out->cdf_below (may be
 * NULL) receive the mixture's CDF at each target (docs/metrics.md,
 * "Calibration of central intervals").
 * Classifiers (else BNN_EINVAL when either is asked):
 * out->expected_entropy (may be NULL) receives E_θ H[p(y | x, θ)], the
 * mean over the S samples of the entropy of each sample's prediction
 * (categorical: −Σ_j p_j log p_j; bernoulli: the sum over the labels of
 * each label's binary entropy), the aleatoric part of the predictive
 * entropy H[E_θ p]; bnn_mutual_information() gives the epistemic part.
 * With one prediction (bnn_predict_draws() = 1; mc = 0: the mean
 * network's) this is its entropy: the split needs samples that differ
 * (docs/metrics.md).
 * out->energy (may be NULL) receives the mean over the samples of the
 * energy score of each sample's logits z, E = −log Σ_j exp(z_j) (Liu et
 * al. 2020, eq. 5 with T = 1; bernoulli: −Σ_j log(1 + exp(z_j)), each
 * label a two-logit softmax (0, z_j)), higher for inputs less like the
 * training data.  Both are sums of each row's own terms in sample order,
 * so they are the same bits for every number of threads and batch range.
 * out->nll_each (may be NULL) receives each example's negative
 * log-likelihood of its targets under the predictive distribution: for
 * the mixture, −log((1/S)·Σ_s p(y | θ_s)) by log-sum-exp; out->nll (may be
 * NULL) their sum, added in example order.  With both NULL ds needs no
 * targets.  The batches run in parallel on bnn_threads() threads, each
 * with buffers of its own.
 * @return BNN_OK; BNN_EINVAL (mc < 0, or mc > 0 and a σ is not finite:
 *         the message names the parameter), BNN_EMISMATCH (data),
 *         BNN_ENOMEM.
 */
int bnn_predict(const bnn_state *st, const bnn_dataset *ds, long mc, uint64_t seed,
                const bnn_prediction *out, bnn_err *err);

/**
 * bnn_predict() for batches [j0, j1) of ds only (BNN_PREDICT_BATCH
 * examples each; 0 <= j0 <= j1 <= the number of batches; j0 = j1 writes
 * nothing but a zero NLL): examples
 * [256·j0, min(256·j1, n)), whose results go to out's arrays from their
 * start (row 0: example 256·j0), with out->nll their sum in example order.
 * Every value is bit for bit the one bnn_predict() gives for that example,
 * so ranks that predict disjoint batch ranges and gather them reproduce
 * it, the total NLL included when summed in example order from nll_each.
 */
int bnn_predict_batches(const bnn_state *st, const bnn_dataset *ds, long mc, uint64_t seed, long j0,
                        long j1, const bnn_prediction *out, bnn_err *err);

/**
 * The number of different predictions bnn_predict(st, ..., mc, ...)
 * averages: 1 when mc is 0 (the mean network) or 1, when st's last-layer
 * Laplace posterior predicts by the probit approximation (one pass, its
 * logits scaled, whatever mc is), and when st is not stochastic
 * (bnn_state_is_stochastic(): its mc samples are all the same network);
 * else mc.  With 1 the predictive entropy has no split: the expected
 * entropy is the entropy and the mutual information 0, which a caller
 * sets itself (out->expected_entropy comes from the logits in double, the
 * entropy of out->probs from floats, so they differ in the last bits).
 */
long bnn_predict_draws(const bnn_state *st, long mc);

/** The seed of the pass noise (dropout masks and the like) of batch j in
 *  Monte-Carlo sample s of bnn_predict(seed): bnn_rng_derive(
 *  bnn_rng_derive(seed, s), j + 1). */
uint64_t bnn_predict_seed(uint64_t seed, long sample, long batch);

/**
 * The KL term of the ELBO for the whvi layers of m (whvi_kl.c, docs/whvi.md):
 * KL(q(g) ‖ p(g)) with p(g) = N(0, I/δ) for each layer's g, in closed form,
 * or with planar flows the entropy of q0 in closed form plus a one-sample
 * estimate of −log p(z_F) − Σ_k log|det ∂f_k/∂z| (WHVI paper, appendix C,
 * eq. 19-21), ε drawn from rng (NULL: ε = 0); plus the closed-form KL of
 * each whvi layer's meanfield bias.  δ is `delta` when finite, else each
 * layer's prior precision.
 * @param grad     if not NULL, scale·∂KL/∂params is added to it (the
 *                 tensors of whvi layers only).
 * @param scratch  bnn_whvi_kl_scratch(m) doubles (NULL when that is 0).
 * @return the KL (not scaled).
 */
double bnn_whvi_kl(const bnn_model *m, const float *params, double delta, double scale, float *grad,
                   bnn_rng *rng, double *scratch);

/** The doubles of scratch bnn_whvi_kl needs for m (0 without flows). */
long bnn_whvi_kl_scratch(const bnn_model *m);

/** Whether m has a layer with a whvi posterior. */
int bnn_model_has_whvi(const bnn_model *m);

/* What bnn_laplace() computes (docs/laplace.md). */
typedef struct bnn_laplace_options {
	double prior_precision; /* δ > 0; NaN: chosen by the Laplace marginal
	                           likelihood ("auto") */
	int empirical;          /* last_layer 0: 1, the empirical Fisher, squared
	                           gradients at the data's own targets; 0, the MC
	                           Fisher, labels drawn from the model's
	                           predictive (an unbiased estimate of the GGN
	                           diagonal) */
	long samples;           /* last_layer 0, MC Fisher: label draws per
	                           example [1] */
	long batch;             /* examples per pass [256] */
	uint64_t seed;          /* of the label draws */
	int last_layer;         /* 1 [the default]: the GGN of the output layer
	                           only (exact logit Hessians, no label draws),
	                           the rest of the network fixed at θ*; 0: the
	                           diagonal GGN of every weight */
	int structure;          /* last_layer: enum bnn_laplace_structure */
} bnn_laplace_options;

/* The last-layer GGN's structure (docs/laplace.md). */
enum bnn_laplace_structure {
	BNN_LAPLACE_KRON = 0, /* Kronecker-factored, G ⊗ A (Ritter et al. 2018;
	                         Laplace Redux's default): one pass, no P × P
	                         matrix */
	BNN_LAPLACE_FULL = 1  /* the exact P × P GGN */
};

/* What bnn_laplace() reports. */
typedef struct bnn_laplace_report {
	double prior_precision; /* δ used */
	double log_marglik;     /* the Laplace log marginal likelihood at δ */
	double nll;             /* Σ_i −log p(y_i | x_i, θ*) */
	double seconds;         /* wall time */
} bnn_laplace_report;

/** bnn_laplace_options of the driver's `laplace` without options: the
 *  last layer (last_layer 1) with its Kronecker-factored GGN, δ auto (NaN:
 *  the marginal likelihood's), batch 256, seed 1; and for last_layer 0 the
 *  MC Fisher with 1 sample.  The last layer is the default since the
 *  diagonal of every weight, sampled through the network, predicts badly
 *  (29-39% accuracy on the Fashion-MNIST MLP against the MAP network's 86%;
 *  docs/laplace.md), as Laplace Redux recommends (Daxberger et al. 2021,
 *  section 4).  Until that change last_layer was 0: set it to 0 for the
 *  diagonal fit. */
bnn_laplace_options bnn_laplace_defaults(void);

/* The most parameters a last-layer Laplace fit takes: its precision is a
 * dense P × P matrix of doubles (3.2 GB at the limit, with a copy of the
 * same size for the eigenvalues of --prior-precision auto). */
#define BNN_LAPLACE_LAST_LAYER_MAX 20000

/** Whether bnn_laplace takes state st with options o, before any data
 *  is read: st a point network with no posterior yet and no layer with
 *  one of its own, options in range, a likelihood the fit draws labels
 *  from, and for o->last_layer an output node that is a dense layer of a
 *  categorical or bernoulli model (of at most BNN_LAPLACE_LAST_LAYER_MAX
 *  parameters for BNN_LAPLACE_FULL).  bnn_laplace makes these checks
 *  first; the driver's `laplace` makes them before loading the data.
 *  @return BNN_OK, or bnn_laplace's BNN_EUNSUPPORTED or BNN_EINVAL with
 *          its message. */
int bnn_laplace_check(const bnn_state *st, const bnn_laplace_options *o, bnn_err *err);

/**
 * Laplace posterior of a trained point network.  With o->last_layer 0:
 * the diagonal, precision δ + Σ_i diag GGN_i over the examples of ds
 * (standardised already), from the generated pass's squared per-example
 * gradients; st->sigma gets (δ + h)^(-1/2) and st->posthoc the record
 * (kind laplace).  The optimizer state and resume sections of st are
 * dropped.
 * With o->last_layer (the default): the full GGN Σ_i J_iᵀ Λ_i J_i + δI
 * of the output layer's weights and bias only (J_i = I_K ⊗ [φ_i; 1], φ_i
 * the layer's input), kind laplace_last_layer (laplace_last_layer.c), or with
 * o->structure BNN_LAPLACE_KRON its Kronecker factors G ⊗ A, kind
 * laplace_kron (laplace_kron.c); the model's output node must be a point
 * dense layer (model->features > 0), of at most
 * BNN_LAPLACE_LAST_LAYER_MAX parameters for the full GGN, the likelihood
 * categorical or bernoulli (BNN_EUNSUPPORTED otherwise, whose message
 * says to fit every weight); o->empirical and o->samples > 1 belong to
 * last_layer 0 (BNN_EINVAL with last_layer).
 * @param rep  may be NULL.
 * @return BNN_OK; BNN_EUNSUPPORTED (a layer with a posterior of its own,
 *         st has a posterior already, or a model the last layer's fit does
 *         not take), BNN_EMISMATCH (data), BNN_EINVAL (options),
 *         BNN_ENOMEM.
 */
int bnn_laplace(bnn_state *st, const bnn_dataset *ds, const bnn_laplace_options *o,
                bnn_laplace_report *rep, bnn_err *err);

/**
 * The Laplace log marginal likelihood of an isotropic Gaussian prior of
 * precision delta for a diagonal GGN h (n values) at the mode theta:
 * −nll − ½δ‖θ‖² + (n/2)·log δ − ½Σ_j log(h_j + δ) (constants dropped), and
 * the δ that maximises it (it is concave in δ: bisection of its
 * derivative over [1e-8, 1e8]).
 */
double bnn_laplace_log_marglik(long n, const float *theta, const double *h, double nll,
                               double delta);
double bnn_laplace_best_delta(long n, const float *theta, const double *h);

/*
 * The memory-perturbation view of a classifier's posterior (Nickl et al.
 * 2023, as the IVON paper states it in §4.4 and appendix C.5;
 * docs/sensitivity.md).  For example i with logits f_i at the posterior
 * mean, prediction error e_i = softmax(f_i) − onehot(y_i) and prediction
 * covariance V_i = ∇f_iᵀ diag(σ²) ∇f_i, removing the example moves its
 * logits to about f_i + V_i e_i.  Each array may be NULL (not wanted).
 */
typedef struct bnn_sensitivity {
	double *score;   /* n: the sensitivity, the length of the logit shift
	                    V_i e_i measured from the label's logit (|v_i e_i|
	                    for two classes) */
	double *loo_nll; /* n: ℓ(f_i + V_i e_i), the example's leave-one-out
	                    NLL estimate (§4.4.1) */
	double *nll;     /* n: ℓ(f_i), the NLL at the posterior mean */
	int *predicted;  /* n: the class of the largest logit */
} bnn_sensitivity;

/**
 * Whether model m can give sensitivities: categorical, and every layer
 * with parameters meanfield (σ per parameter, no noise of its own).
 * @return BNN_OK, or BNN_EUNSUPPORTED with the reason.
 */
int bnn_sensitivity_check_model(const bnn_model *m, bnn_err *err);

/**
 * Whether st can give sensitivities: a categorical model whose every layer
 * with parameters is meanfield (σ per parameter, no noise of its own),
 * and a state with finite posterior standard deviations.
 * @return BNN_OK, or BNN_EUNSUPPORTED with the reason.
 */
int bnn_sensitivity_check(const bnn_state *st, bnn_err *err);

/**
 * The sensitivities of examples idx[0..n) of ds (NULL idx: the first n)
 * under st (bnn_sensitivity_check first), into out's arrays (row k: the
 * k-th example asked).  Costs one gradient pass per example and class.
 * Deterministic; the same bits on any number of threads.
 * @return BNN_OK, or BNN_EINVAL / BNN_EMISMATCH / BNN_ENOMEM.
 */
int bnn_sensitivity_scores(const bnn_state *st, const bnn_dataset *ds, const long *idx, long n,
                           const bnn_sensitivity *out, bnn_err *err);

/*
 * Mixtures of networks (mixture.c, docs/ensembles.md): K trained networks
 * of one model predicting as one, the equal-weight average of their
 * predictive distributions (Multi-IVON with ivon members, IVON paper
 * §4.2; a deep ensemble with adam members).  A mixture of one member is a
 * single network, and its checkpoint an ordinary one.
 */
#define BNN_MIXTURE_MAX 1000

typedef struct bnn_mixture {
	int members;       /* K >= 1 */
	bnn_state *member; /* K states of one model, owned */
} bnn_mixture;

/** The seed member k (from 0) is trained and predicts with: seed + k. */
uint64_t bnn_mixture_member_seed(uint64_t seed, int k);

/**
 * Checks that the k states can be mixed or merged: one model (the
 * fingerprint) and the same input standardisation.  names (may be NULL:
 * "member 2") name the states in messages.  BNN_OK, BNN_EMISMATCH,
 * BNN_EINVAL.
 */
int bnn_mixture_check(const bnn_state *members, int k, const char *const *names, bnn_err *err);

/**
 * Save a mixture atomically: member 1 as the ordinary sections, member k
 * >= 2 as the sections "member.k.params", ..., and the text section
 * "mixture" (docs/checkpoint.md); one member: bnn_state_save.
 */
int bnn_mixture_save(const bnn_mixture *mix, const char *path, bnn_err *err);

/**
 * Load a mixture, or an ordinary checkpoint as a mixture of one member
 * (mix initialised by this call only on success; free with
 * bnn_mixture_free).  Every member is checked as bnn_state_load checks a
 * state, its messages naming the member's sections.
 */
int bnn_mixture_load(bnn_mixture *mix, const bnn_model *m, const char *path, bnn_err *err);
void bnn_mixture_free(bnn_mixture *mix);

/**
 * bnn_predict_batches() of a mixture: each member k (from 0) predicts with
 * mc samples and seed bnn_mixture_member_seed(seed, k), and out gets the
 * average of the members' predictive distributions (probabilities; the
 * Gaussian mixture's mean and variance), of their expected entropies and
 * energy scores (the means over all K·mc samples), and each example's
 * NLL −log((1/K)·Σ_k exp(−NLL_k)).  One member: bnn_predict_batches.
 */
int bnn_mixture_predict_batches(const bnn_mixture *mix, const bnn_dataset *ds, long mc,
                                uint64_t seed, long j0, long j1, const bnn_prediction *out,
                                bnn_err *err);

/* How bnn_merge weighs the networks. */
enum bnn_merge_weights {
	BNN_MERGE_HESSIAN, /* by each run's posterior precision 1/σ² (its learned curvature) */
	BNN_MERGE_UNIFORM  /* equal weights */
};

/**
 * One network from k >= 2 trained networks of the same model (merge.c,
 * docs/merge.md): parameter by parameter, m = (Σ_k H_k m_k)/(Σ_k H_k) with
 * H_k = 1/σ_k² (BNN_MERGE_HESSIAN; every network needs a σ) or the mean
 * of the m_k (BNN_MERGE_UNIFORM); σ = (Σ_k H_k)^(−1/2) when every network
 * has a σ.  names (may be NULL) name the networks in messages.  out is
 * initialised by this call on success (free with bnn_state_free).
 * @return BNN_OK; BNN_EINVAL (k < 2; Hessian weights for a network
 *         without σ: the message names it and its optimizer),
 *         BNN_EMISMATCH (bnn_mixture_check), BNN_ENOMEM.
 */
int bnn_merge(const bnn_state *in, int k, const char *const *names, int weights, bnn_state *out,
              bnn_err *err);

/**
 * Write the posterior of st (or its parameters, for a point estimate) as
 * CSV text to f: a header "tensor,index,mean,std" and one row per
 * parameter (std 0 for deterministic parameters and point estimates).
 * @return 0, or -1 when writing failed (or st or f is NULL).
 */
int bnn_posterior_write_csv(const bnn_state *st, FILE *f);

/*
 * Options files (train_options_file.c, docs/tune.md): one NAME=VALUE a
 * line, the names and values of bnn_train_set, blank lines and '#'
 * comments.
 */
/** Apply the options of file path to o, in order (a later line wins).
 *  @return BNN_OK; BNN_EIO (cannot open or read: "cannot open PATH:
 *          reason"); BNN_EINVAL/BNN_ERANGE "PATH:LINE: " and what is
 *          wrong (not NAME=VALUE, bnn_train_set's message). */
int bnn_train_options_read(bnn_train_options *o, const char *path, bnn_err *err);
/** Apply the words of an options text (bnn_train_options_text, a
 *  checkpoint's options) to o; words with the value auto or nan (a default
 *  the trainer works out) are skipped.  BNN_OK or bnn_train_set's error. */
int bnn_train_options_from_text(bnn_train_options *o, const char *text, bnn_err *err);
/** Write o to f as an options file that bnn_train_options_read reads back
 *  to the same options text: bnn_train_options_text's words a line each
 *  (without the auto ones).  0, or -1 when writing failed. */
int bnn_train_options_write(const bnn_train_options *o, FILE *f);

/*
 * Hyperparameter search by successive halving (tune.c, docs/tune.md).
 */
#define BNN_TUNE_MAX_PARAMS 4

typedef struct bnn_tune_options {
	int trials;            /* configurations sampled (>= 1) */
	long budget;           /* epochs of the first rung (>= 1); each rung
	                          doubles them */
	double valid_fraction; /* held-out share of the training data, by
	                          bnn_train's valid_fraction split (0 < f < 1) */
	uint64_t seed;         /* the sampling of the configurations */
} bnn_tune_options;

/** trials 8, budget 1, valid_fraction 0.2, seed 1. */
bnn_tune_options bnn_tune_defaults(void);

/* One configuration trained in one rung. */
typedef struct bnn_tune_row {
	int trial;   /* 0-based index of the configuration */
	int rung;    /* 0-based */
	long epochs; /* trained in this rung (from scratch) */
	int nparams; /* the searched options: their bnn_train_set names and
	                values, as set */
	const char *names[BNN_TUNE_MAX_PARAMS];
	const char *values[BNN_TUNE_MAX_PARAMS];
	/* the best epoch's mean validation NLL (INFINITY: training diverged) */
	double valid_nll;
	double valid_accuracy; /* NAN for regression */
	int kept;              /* goes on to the next rung (the last rung: the best) */
} bnn_tune_row;

/* Called with every row of a rung, in trial order, when the rung is done. */
typedef void (*bnn_tune_fn)(const bnn_tune_row *row, void *ctx);

/**
 * Search the main hyperparameters of base->optimizer on a validation split
 * of train: sample t->trials configurations (log-uniform ranges around the
 * defaults, docs/tune.md), train each from scratch (seed base->seed) for
 * t->budget epochs, keep the better half by validation NLL (ties: the
 * earlier trial), train those for twice the epochs, and so on until one
 * is left.  *best receives base with the winner's values and the epochs of
 * its last rung (valid_fraction as in base).  Every other option is base's.
 * @return BNN_OK; BNN_EINVAL (options), BNN_ERANGE (every configuration
 *         diverged), bnn_train's errors.
 */
int bnn_tune(const bnn_model *m, const bnn_dataset *train, const bnn_train_options *base,
             const bnn_tune_options *t, bnn_tune_fn on_row, void *ctx, bnn_train_options *best,
             bnn_err *err);

/*
 * Prior precision by the Laplace estimate of the marginal likelihood
 * (evidence.c, docs/tune.md): with m the posterior mean, H_j = N h_j the
 * data term's diagonal Hessian from the curvature the optimizer learned
 * (IVON's h, VOGN's s) and P the parameters with a posterior,
 *   log Z(δ) ≈ −Σ_i ℓ_i(m) − ½ δ ‖m‖² + ½ P log δ − ½ Σ_j log(N h_j + δ)
 * (MacKay 1992; Immer et al. 2021, with a diagonal Hessian).
 */
typedef struct bnn_evidence {
	double nll;            /* Σ_i ℓ_i(m) over the data */
	double n;              /* N: the examples of the data */
	long params;           /* P */
	double sum_sq;         /* ‖m‖² over the P parameters */
	double delta;          /* the prior precision the run was trained with */
	double to_option;      /* the option delta = prior precision · to_option */
	const float *mean, *h; /* the state's arrays (borrowed) */
	const float *sigma;    /* the P parameters: those with sigma > 0 (NULL: all) */
	long nparams;          /* the length of mean, h and sigma */
} bnn_evidence;

/** log Z(δ) of the formula above over the n parameters j with
 *  sigma[j] > 0 (sigma NULL: all), h_j below 0 taken as 0. */
double bnn_laplace_log_evidence(long n, const float *mean, const float *h, const float *sigma,
                                double data_n, double nll, double delta);

/**
 * Set up *ev from a state trained by ivon or vogn (its options text read
 * for ess, tau and delta) and the data it was trained on (ds,
 * standardised as in training): the NLL at the mean over ds.
 * @return BNN_OK; BNN_EUNSUPPORTED (another optimizer, no posterior),
 *         BNN_EMISMATCH (data), BNN_EINVAL.
 */
int bnn_evidence_init(bnn_evidence *ev, const bnn_state *st, const bnn_dataset *ds, bnn_err *err);

/** log Z(δ) for ev. */
double bnn_evidence_at(const bnn_evidence *ev, double delta);

/** The δ in [lo, hi] maximising bnn_evidence_at (concave in δ: one
 *  maximum, where δ‖m‖² = Σ_j N h_j/(N h_j + δ), MacKay's effective number
 *  of parameters), by bisection of its derivative on log δ; lo or hi when
 *  the maximum is beyond them. */
double bnn_evidence_best(const bnn_evidence *ev, double lo, double hi);

#ifdef __cplusplus
}
#endif

#endif /* BNN_TRAIN_H */
