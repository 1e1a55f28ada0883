/*
 * train_internal.h: what the trainer's files share (not installed).
 * train.c runs epochs (shuffling, minibatches, validation, early stopping,
 * checkpoints, rollback); train_step.c turns one minibatch into one
 * optimizer step through the optimizer's row of train_optimizers[]
 * (optimizers.c): the gradient estimate (with Monte-Carlo samples of the
 * posterior for vogn, ivon and bbb, step_natural.c and step_bbb.c) and the
 * update, tensor by tensor with each tensor's prior precision
 * (step_point.c for sgd, adam, adamw and badam).  With more than one MPI
 * rank (distributed.c), each step's passes see this rank's rows of the
 * global minibatch and their results are summed over the ranks
 * (train_dist_step) before the update.
 */
#ifndef BNN_TRAIN_INTERNAL_H
#define BNN_TRAIN_INTERNAL_H

#include <string.h>
#include <time.h>

#include "bnn.h"
#include "bnn_variational.h"
#include "distributed.h"

/* A copy of the trainable state (parameters, σ, optimizer arrays,
 * counters), for rollback and for the best epoch. */
#define TRAIN_SNAPSHOT_ARRAYS (3 + BNN_OPT_SLOTS)
struct train_snapshot {
	float *arrays[TRAIN_SNAPSHOT_ARRAYS]; /* params, sigma, stats, opt[]
	                                         (NULL: unused) */
	long step, epoch;
};

/* Where a run stands beyond the state's arrays (progress.c): the resume
 * sections of a checkpoint. */
struct bnn_train_progress {
	long epoch, step;                   /* the live state's counters */
	long shuffles;                      /* epochs shuffled since the seed (replayed) */
	long ntrain, nvalid;                /* training and held-out examples of the run */
	long ranks;                         /* the processes it trained on */
	bnn_rng noise, aug;                 /* the trainer's streams after the last epoch */
	int have_best;                      /* validation: the best epoch's state is kept */
	double best_nll;                    /* its validation NLL (inf: none yet) */
	long since_best;                    /* epochs since it (early stopping) */
	double tau;                         /* vogn's τ at the last step */
	float *live[TRAIN_SNAPSHOT_ARRAYS]; /* the live arrays (state_array
	                                       order) when the state's own hold the
	                                       best epoch's, else NULL */
	float *theta, *eps;                 /* the next sample drawn by the last update, or NULL */
};

/* The state's arrays in snapshot order: params, sigma, stats, opt[]; their
 * section names and sizes (progress.c). */
extern const char *const train_array_names[TRAIN_SNAPSHOT_ARRAYS];
float **train_state_array(bnn_state *st, int i);
long train_array_size(const bnn_model *m, int i);

/* bnn_data_fits with `what` naming the data in the messages ("the
 * validation data has 3 values per example ..."; predict.c). */
int train_data_fits(const bnn_model *m, const bnn_dataset *ds, int need_targets, const char *what,
                    bnn_err *err);

/* The first of n values that is not finite (or negative, when nonneg);
 * -1 when all are fine (state.c). */
long train_first_bad(const float *v, long n, int nonneg);

/* The resume sections of p into ck (progress.c). */
int train_progress_add(bnn_ckpt *ck, const bnn_model *m, const bnn_train_progress *p);
/* The resume sections of ck for state st (its arrays loaded), or *out
 * NULL when it has none. */
int train_progress_load(const bnn_ckpt *ck, const char *path, const bnn_state *st,
                        bnn_train_progress **out, bnn_err *err);
void train_progress_free(bnn_train_progress *p);

/* The post-hoc posterior of a point network (posthoc_posterior.c): its
 * sections into ck; the record of ck's (NULL when it has none) for st,
 * whose sigma is loaded; the refusal of a model whose layers have a
 * posterior of their own ("WHAT needs a point network ..."); the low-rank
 * part of a prediction sample, added to theta (SWAG); its kind's name;
 * and the handing of a fitted one to st (which then trains no more). */
void train_posthoc_install(bnn_state *st, bnn_posthoc *p);
int train_posthoc_add(bnn_ckpt *ck, const bnn_model *m, const bnn_posthoc *p);
int train_posthoc_load(const bnn_ckpt *ck, const char *path, const bnn_state *st, bnn_posthoc **out,
                       bnn_err *err);
int train_posthoc_layers_check(const bnn_model *m, const char *what, bnn_err *err);
/* Whether p is a last-layer Laplace posterior, full or Kronecker-factored
 * (predicted by the probit approximation or by samples of the last layer). */
int train_posthoc_last_layer(const bnn_posthoc *p);
void train_posthoc_sample(const bnn_state *st, float *theta, bnn_rng *rng);
const char *train_posthoc_name(const bnn_posthoc *p);

/* What a Laplace fit found (laplace.c, laplace_last_layer.c,
 * laplace_kron.c), for train_laplace_finish (laplace.c), which gives p and
 * σ to st and fills the report. */
struct train_laplace_fit {
	int kind;            /* BNN_POSTHOC_LAPLACE... */
	const char *hessian; /* the checkpoint's hessian key */
	double delta, nll, log_marglik;
	long examples;
	struct timespec t0; /* the fit's start (CLOCK_MONOTONIC) */
};
void train_laplace_finish(bnn_state *st, bnn_posthoc *p, float *sigma,
                          const struct train_laplace_fit *fit, bnn_laplace_report *rep);

/* Last-layer Laplace (laplace_last_layer.c): the fit (bnn_laplace with
 * o->last_layer, after its checks), the Laplace log marginal likelihood
 * from ‖θ‖² and log det of the posterior precision (laplace.c), the
 * checkpoint record's keys and section (posthoc_posterior.c calls them),
 * a prediction sample of the last layer into theta, the logits of b
 * examples of features phi for the last layer of theta, and the probit
 * predictive: the logits z of b examples whose features phi the pass
 * wrote (bnn_pass.features) divided by (1 + π/8·Σ_f[k,k])^(1/2), with
 * train_laplace_ll_scratch(m, b) floats of scratch from phi on. */
/* The output layer both last-layer fits work on (laplace_last_layer.c):
 * where its parameters are, the parameter of output k and feature i
 * (i = d: the bias), the refusals of a model they cannot take (full: the
 * size limit of the full covariance too), the Hessian H[k,l] of
 * −log p(y | z) in the logits z (categorical: the upper triangle by rows,
 * K(K+1)/2 values; bernoulli: the diagonal, K), and the pass over ds at θ*
 * in batches, handing each batch's features and logits to rows; it
 * returns the NLL at θ*. */
/* π/8 of the probit approximation of the logistic sigmoid. */
#define TRAIN_LL_PI_8 0.39269908169872415481

struct train_ll_layer {
	long k, d, dd, p;  /* outputs, features, d + 1 with a bias, k·dd */
	long w_off, b_off; /* the weight [k, d] and bias [k] (-1: none) in params */
};
struct train_ll_buffers {
	float *ws, *z, *feat; /* the pass's workspace, logits and features */
};
typedef void (*train_ll_rows)(void *ctx, const float *feat, const float *z, long b);
void train_laplace_ll_layer(const bnn_model *m, struct train_ll_layer *l);
long train_laplace_ll_index(const struct train_ll_layer *l, long k, long i);
/* The output layer of a last-layer record of P's params, into l; an
 * error naming PATH if the model has none or another size. */
int train_laplace_ll_record_layer(const char *path, const bnn_model *m, const bnn_posthoc *p,
                                  struct train_ll_layer *l, bnn_err *err);
/* Whether the last layer's fit takes model m (full: the full P x P
 * precision): its output node a dense layer, a categorical or bernoulli
 * likelihood; bnn_laplace_check's part for last_layer. */
int train_laplace_ll_check(const bnn_model *m, int full, bnn_err *err);
void train_laplace_ll_hessian(const bnn_model *m, const float *z, float *hw);
int train_laplace_ll_buffers_alloc(struct train_ll_buffers *bu, const bnn_model *m, long batch);
void train_laplace_ll_buffers_free(struct train_ll_buffers *bu);
double train_laplace_ll_pass(const bnn_state *st, const bnn_dataset *ds, long batch,
                             const struct train_ll_buffers *bu, train_ll_rows rows, void *ctx);

int train_laplace_last_layer(bnn_state *st, const bnn_dataset *ds, const bnn_laplace_options *o,
                             bnn_laplace_report *rep, bnn_err *err);
double train_laplace_log_marglik(long n, double sq, double logdet, double nll, double delta);
int train_laplace_ll_add(bnn_ckpt *ck, const bnn_posthoc *p);
int train_laplace_ll_load(const bnn_ckpt *ck, const char *text, const char *path,
                          const bnn_model *m, bnn_posthoc *p, bnn_err *err);
void train_laplace_ll_sample(const bnn_state *st, float *theta, bnn_rng *rng);
void train_laplace_ll_logits(const bnn_state *st, const float *theta, const float *phi, long b,
                             float *z);
long train_laplace_ll_scratch(const bnn_model *m, long b);
void train_laplace_ll_probit(const bnn_state *st, float *phi, float *z, long b);

/* Kronecker-factored last-layer Laplace (laplace_kron.c): the fit, the
 * checkpoint record's sections, a prediction sample of the last layer
 * into theta, and the probit scaling of the logits z (as
 * train_laplace_ll_probit, the same scratch). */
int train_laplace_kron(bnn_state *st, const bnn_dataset *ds, const bnn_laplace_options *o,
                       bnn_laplace_report *rep, bnn_err *err);
int train_laplace_kron_add(bnn_ckpt *ck, const bnn_model *m, const bnn_posthoc *p);
int train_laplace_kron_load(const bnn_ckpt *ck, const char *path, const bnn_model *m,
                            bnn_posthoc *p, bnn_err *err);
void train_laplace_kron_sample(const bnn_state *st, float *theta, bnn_rng *rng);
void train_laplace_kron_probit(const bnn_state *st, float *phi, float *z, long b);

/* SWAG's collection during training (swag.c): the running moments of the
 * iterates and the last R deviations. */
struct train_swag {
	long n, collected, rank, next; /* nparams, iterates, rows of dev, the
	                                  next row to write (a ring) */
	double *mean, *sq;             /* θ̄ and the mean of θ² */
	float *dev;                    /* rank × n */
};
int train_swag_options_check(const bnn_train_options *o, bnn_err *err);
int train_swag_start(struct train_swag *s, const bnn_train_options *o, long n, bnn_err *err);
void train_swag_collect(struct train_swag *s, const float *theta);
int train_swag_finish(struct train_swag *s, bnn_state *st, bnn_err *err);
void train_swag_free(struct train_swag *s);

/* A tensor's shape as the tensors section writes it: "8x4", "3*8x4"
 * (state.c). */
void train_tensor_shape(const bnn_tensor *t, char *buf, size_t size);

/* The checkpoint of a state (state.c): its sections, the tensor list, and
 * st->progress's resume sections when set. */
int train_state_ckpt(const bnn_state *st, const char *path, bnn_ckpt **out, bnn_err *err);

/* The sections of one network's state into ck, each name after prefix
 * ("" or "member.2."): params, stats, sigma, opt.*, meta, options
 * (state.c).  A BNN_* code. */
int train_state_add(bnn_ckpt *ck, const bnn_state *st, const char *prefix);

/* Loads checkpoint path and checks that it belongs to model m (the
 * fingerprint), naming both models otherwise (state.c). */
int train_ckpt_open(const bnn_model *m, const char *path, bnn_ckpt **out, bnn_err *err);

/* The state whose sections are named prefix + "params", ... in ck (the
 * standardisation sections are shared; the resume sections are read for
 * prefix "" only), with every value checked as bnn_state_load does
 * (state.c). */
int train_state_from_ckpt(const bnn_ckpt *ck, const bnn_model *m, const char *path,
                          const char *prefix, bnn_state *st, bnn_err *err);

/* BNN_OK when ck is not a mixture of several members; else BNN_EMISMATCH,
 * saying that one network is needed (mixture.c). */
int train_mixture_refuse(const bnn_ckpt *ck, const char *path, bnn_err *err);

/* One parameter tensor as the optimizers see it. */
struct train_tensor {
	long offset, size;
	unsigned caps;          /* its layer's BNN_CAP_* (0: the likelihood's σ);
	                      train_stochastic() follows from it */
	int decays;             /* takes weight decay or the prior's L2 term (not a
	                      point batchnorm's γ and β) */
	int patched;            /* the k components of an emp or ecmp layer */
	double prior_l2;        /* patched, with sgd and adam: τ/(k·N), the L2
	                      coefficient of eq. (7) of Chang et al. over N */
	int weight_sample;      /* bbb with lrt: a meanfield tensor the pass does
	                      not sample by the local reparameterisation
	                      (no BNN_CAP_SIGMA_LRT: conv2d, batchnorm),
	                      sampled by the trainer */
	double delta;           /* the optimizer's δ for it (prior precision, or
	                      IVON's weight decay); 0 with prior */
	const bnn_prior *prior; /* the model's prior when it is not gaussian
	                           and the tensor decays (its gradient is
	                           added: prior_terms.c), else NULL */
};

/* Whether tensor tt has a posterior (BNN_CAP_SIGMA: a meanfield layer's
 * tensor); the others are updated by the same rule without noise. */
static inline int train_stochastic(const struct train_tensor *tt)
{
	return (tt->caps & BNN_CAP_SIGMA) != 0;
}

/* "a" or "an" before a word (a posterior family's name: "an emp
 * posterior"). */
static inline const char *train_article(const char *word)
{
	return word && word[0] && strchr("aeiou", word[0]) ? "an" : "a";
}

/* Everything one call of bnn_train works with. */
struct trainer {
	bnn_state *st;
	const bnn_model *m;
	const bnn_dataset *train, *valid;
	const bnn_train_options *o;
	long *train_idx, ntrain;     /* the training examples (indices into train) */
	int stopped;                 /* the callback stopped training within an epoch */
	long min_batch;              /* the smallest minibatch trained on: 2 with a
	                                batchnorm layer over vectors (one value per
	                                channel and example), else 1 */
	long *valid_idx, nvalid;     /* held-out examples (into valid, or train) */
	const bnn_dataset *valid_ds; /* where valid_idx points */
	long valid_mc;               /* validation by the Monte-Carlo predictive of
	                                this many posterior samples (the
	                                optimizer's valid_mc), 0: at the mean */
	bnn_dataset valid_own;       /* valid_mc with a valid_fraction split: the
	                                held-out examples gathered (valid_ds then),
	                                owned; else zeroed */
	float *ws, *xb, *yb, *out;
	float *grad;          /* ĝ: the gradient estimate of a step */
	float *hess;          /* ĥ: vogn's squared gradients, ivon's estimate */
	float *gk, *hk;       /* one MC sample's gradient and squares (mc > 1) */
	float *gsig;          /* bbb: the gradient with respect to σ */
	float *gsigk;         /* bbb: one sample's (mc > 1) */
	float *theta, *eps;   /* a posterior sample and its noise */
	int primed;           /* mc = 1: theta already holds this step's
	                         sample, drawn by the last update, and
	                         st->sigma is derived at epoch ends only */
	double tau;           /* vogn's τ at the last step */
	int mixed_lrt;        /* bbb with lrt: some tensor has weight_sample */
	int whvi;             /* the model has whvi layers (KL/N added) */
	int priors;           /* some tensor has a prior that is not gaussian */
	double kl;            /* their KL at the last step */
	double *whvi_scratch; /* bnn_whvi_kl's scratch (flows), or NULL */
	struct train_tensor *tensors;
	int ntensors;
	double n_data; /* training examples (N) */
	struct train_snapshot start, best;
	bnn_rng rng;              /* shuffling */
	bnn_rng noise;            /* posterior samples and dropout masks */
	bnn_rng aug;              /* the augmentation of training images */
	long aug_c, aug_h, aug_w; /* the images' channels, rows, columns */
	float *aug_scratch;       /* one image (bnn_augment_image) */
	bnn_schedule schedule;
	double clip; /* the gradient-norm clip of every step (bnn_train_clip); 0: off */
	double h0;   /* IVON's h0 (bnn_train_h0) */
	/* data parallelism over MPI (distributed.c, docs/distributed.md) */
	struct train_dist *dist;           /* the communicator, or NULL: one process */
	int rank, nranks;                  /* this process's rank, of nranks (1: alone) */
	long rows, global_rows;            /* the step's rows here, of the global minibatch */
	void (*ready)(void *, long, long); /* bnn_pass.ready of the next pass (train_dist_arm) */
	void *ready_ctx;
	int stop_asked; /* a progress report asked to stop (several ranks:
	                            agreed at the epoch's end) */
	/* where the run stands, for its checkpoints' resume sections */
	long shuffles;          /* epochs shuffled since the seed */
	int have_best;          /* t->best holds the best epoch's state */
	double best_nll;        /* its validation NLL */
	long since_best;        /* epochs since it */
	struct train_swag swag; /* o->swag > 0: SWAG's moments (swag.c) */
	long *loo_idx, nloo;    /* loo: the training examples it scores (loo.c) */
};

/* One piece of one tensor for an optimizer's update hook. */
struct train_piece {
	const struct train_tensor *tt; /* the tensor */
	long a, len;                   /* its parameters [a, a + len) */
	const float *noise;            /* the next sample's ε for them (len variates), or
	                                  NULL: update only */
	float lr;                      /* the learning rate of the step */
	double tau;                    /* vogn's τ at this step (0 for the others) */
};

/* Which default of an optimizer a short run scales by
 * BNN_SHORT_RUN_STEPS / steps (bnn_short_run_scale; docs/optimizers/ivon.md
 * and vogn.md, "Defaults and their evidence"). */
enum train_short_run {
	TRAIN_SHORT_NONE, /* none */
	TRAIN_SHORT_LR,   /* the learning rate (VOGN: the run's sum of rates) */
	TRAIN_SHORT_H0    /* h0 (IVON: the initial noise per step of the run) */
};

/*
 * One optimizer as the trainer drives it: a row of train_optimizers[]
 * (optimizers.c), indexed by enum bnn_optimizer.  The names, the default
 * learning rate, the state slots, which layers it trains and the options
 * it reads are data; the hooks do the rest.  The hooks are called per
 * step, per tensor or per block of BNN_SAMPLE_BLOCK parameters, never
 * per element: the element loops are the fused kernels of optim/.
 */
struct train_optimizer {
	const char *name;                      /* "adam": --set optimizer=, checkpoints' meta */
	double default_lr;                     /* the learning rate when none is given */
	int default_schedule;                  /* the schedule when none is given
	                                          (enum bnn_schedule_kind) */
	double default_clip;                   /* the gradient-norm clip when none is
	                                          given; 0: off */
	double default_h0;                     /* IVON's h0 when none is given (0: the
	                                          optimizer has none) */
	int short_run;                         /* the default a run of fewer than
	                                          BNN_SHORT_RUN_STEPS steps scales up
	                                          (enum train_short_run) */
	int delta_times_rho;                   /* δ unset: ρ × the prior precision
	                                          (VOGN's default tempering) */
	int uses_ess;                          /* reads the effective sample size
	                                          (train_effective_n) */
	int ess_times_fan_in;                  /* ess unset: N × the largest fan-in of a
	                                          layer with a posterior (BADAM's N of
	                                          σ, bnn_default_ess), else N */
	int valid_mc;                          /* validates by the Monte-Carlo predictive
	                                          of this many posterior samples (0: at
	                                          the mean): its σ is not part of the
	                                          training objective (BADAM) */
	int slots;                             /* bnn_state.opt arrays it keeps (the first) */
	const char *slot_names[BNN_OPT_SLOTS]; /* what they hold, in order */
	int variational;                       /* learns σ: keeps bnn_state.sigma */
	unsigned trains;                       /* the BNN_CAP_* bits of the layers it can
	                                          train (a layer with another bit is refused) */
	unsigned learns;                       /* variational: the model needs a layer with
	                                          one of these bits (the posterior it learns) */
	int delta_over_ess;                    /* δ is the prior precision over the effective
	                                          sample size (IVON's weight decay) */
	int decoupled;                         /* selecting it sets adam.decoupled (adamw) */
	int any_prior;                         /* takes the gradient of a prior that is
	                                          not gaussian (prior_terms.c) */
	int sqgrad_hessian;                    /* natural steps: ĥ is the pass's mean squared
	                                          per-example gradients (VOGN), else
	                                          ĝ·(θ − μ)/σ² (IVON) */
	const char *options;                   /* the optimizer-specific options it reads,
	                                          by --set name ("momentum nesterov ...") */
	/* Allocates its buffers beyond t->grad (NULL: none). */
	int (*setup)(struct trainer *t, bnn_err *err);
	/* A fresh state's start for tensor tt, after the slots are zeroed
	 * (NULL: zeros). */
	void (*start)(struct trainer *t, const struct train_tensor *tt);
	/* One step on the b examples in t->xb, t->yb: the summed NLL. */
	double (*step)(struct trainer *t, long b, float lr, double epochs);
	/* The update rule on a piece of a tensor (with the next sample when
	 * p->noise is given). */
	void (*update)(struct trainer *t, const struct train_piece *p);
	/* σ of a stochastic tensor from the state, where the update does not
	 * store it (NULL: the update stores it). */
	void (*sigma)(struct trainer *t, const struct train_tensor *tt, double tau);
	/* At the end of every epoch, after sigma (NULL: nothing). */
	void (*finish_epoch)(struct trainer *t);
	/* Appends its options to the options text (bnn_train_options_text). */
	int (*options_text)(const bnn_train_options *o, char *buf, int n);
};

/* The optimizers, indexed by enum bnn_optimizer (optimizers.c). */
extern const struct train_optimizer train_optimizers[BNN_OPT_COUNT];

/* The row of an optimizer, or NULL when it is out of range. */
const struct train_optimizer *train_optimizer_of(int optimizer);

/* The optimizers' names as a list: "sgd, adam, ... or bbb". */
void train_optimizer_list(char *buf, size_t size);

/* The priors that are not gaussian (prior_terms.c): the prior of the
 * tensors of layer l (NULL: the likelihood's), NULL for a gaussian one;
 * the refusal of the optimizers, layers and options that need a gaussian
 * prior; the MAP gradient (1/N)·∂(−log p) at the parameters (sgd, adam,
 * adamw); bbb's estimate of −E_q log p over N at a weight sample (fused:
 * the update forms g_σ itself). */
const bnn_prior *train_tensor_prior(const bnn_model *m, const bnn_layer *l);
int train_check_prior(const bnn_model *m, const bnn_train_options *o, bnn_err *err);
void train_prior_map_grad(struct trainer *t);
void train_prior_sample_grad(struct trainer *t, int fused);

/* Checks that the optimizer can train the model's posterior families. */
int train_check_model(const bnn_model *m, const bnn_train_options *o, bnn_err *err);

/* Resolves the tensors' δ, allocates the step's buffers and sets up a
 * fresh optimizer state (or keeps a loaded one of the same optimizer). */
int train_step_setup(struct trainer *t, bnn_err *err);

/* Frees what train_step_setup allocated. */
void train_step_free(struct trainer *t);

/* One optimizer step on the b examples in t->xb, t->yb at learning rate
 * lr and training progress `epochs` (fractional).  Returns the summed NLL
 * of the batch (averaged over the step's MC samples). */
double train_step(struct trainer *t, long b, double lr, double epochs);

/* ---- shared by the optimizers' step files ---- */

/* One pass of the generated code over the minibatch. */
double train_pass(struct trainer *t, long b, const float *w, const float *sigma, float *grad,
                  float *sqgrad, float *grad_sigma);

/* acc += x / k (first: acc = x / k). */
void train_mc_average(long n, float *acc, const float *x, int k, int first);

/* WHVI: adds the gradient of KL/N to the pass's gradient (whvi_kl.c). */
void train_whvi_kl_grad(struct trainer *t);

/* IVON's λ and BADAM's N of the posterior: the ess option, else N. */
double train_effective_n(const struct trainer *t);

/* Every tensor's update, without sampling. */
void train_update_tensors(struct trainer *t, float lr, double tau);

/* Every tensor's update fused with the next step's sample (one
 * bnn_posterior_sample's noise, drawn block by block). */
void train_update_and_sample(struct trainer *t, float lr, double tau);

/* The first sample of a run whose updates draw the next ones, from σ
 * derived afresh. */
void train_sample_first(struct trainer *t, double tau);

/* sgd, adam, adamw, badam: one pass at the parameters, then the update
 * of every tensor (step_point.c). */
double train_step_point(struct trainer *t, long b, float lr, double epochs);

/* The hooks of train_optimizers[], by file. */
/* step_point.c: sgd, adam, adamw, badam */
void train_sgd_update(struct trainer *t, const struct train_piece *p);
int train_sgd_text(const bnn_train_options *o, char *buf, int n);
void train_adam_update(struct trainer *t, const struct train_piece *p);
int train_adam_text(const bnn_train_options *o, char *buf, int n);
void train_badam_update(struct trainer *t, const struct train_piece *p);
void train_badam_finish_epoch(struct trainer *t);
int train_badam_text(const bnn_train_options *o, char *buf, int n);
/* step_natural.c: vogn, ivon */
int train_natural_setup(struct trainer *t, bnn_err *err);
double train_natural_step(struct trainer *t, long b, float lr, double epochs);
void train_vogn_update(struct trainer *t, const struct train_piece *p);
void train_vogn_sigma(struct trainer *t, const struct train_tensor *tt, double tau);
int train_vogn_text(const bnn_train_options *o, char *buf, int n);
void train_ivon_start(struct trainer *t, const struct train_tensor *tt);
void train_ivon_update(struct trainer *t, const struct train_piece *p);
void train_ivon_sigma(struct trainer *t, const struct train_tensor *tt, double tau);
int train_ivon_text(const bnn_train_options *o, char *buf, int n);
/* step_bbb.c */
int train_bbb_setup(struct trainer *t, bnn_err *err);
void train_bbb_start(struct trainer *t, const struct train_tensor *tt);
double train_bbb_step(struct trainer *t, long b, float lr, double epochs);
void train_bbb_update(struct trainer *t, const struct train_piece *p);
void train_bbb_sigma(struct trainer *t, const struct train_tensor *tt, double tau);
int train_bbb_text(const bnn_train_options *o, char *buf, int n);

/* The settings a run uses, for bnn_train_io.on_start (malloc'd, or NULL
 * out of memory; train_settings.c). */
char *train_settings_text(const struct trainer *t);

/* The size of an options text's buffer. */
#define TRAIN_TEXT_MAX 2048

/* Appends formatted text to the options text (TRAIN_TEXT_MAX bytes,
 * truncating; train_options.c). */
int train_text_append(char *buf, int n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A copy of options text `text` in its canonical form: each option left
 * to the trainer (delta, tau_start, ess) reads "auto", also where the
 * text spells it as the number that stands for it ("delta=nan", "ess=0":
 * checkpoints written before "auto"), and each float option its shortest
 * decimal that reads back as the same float ("beta1=0.9", which
 * checkpoints written before spell "beta1=0.899999976"); malloc'd, or
 * NULL out of memory (train_options.c). */
char *train_options_text_canonical(const char *text);

/* Brings st->sigma up to date where it is derived only at times (badam:
 * from Adam's v; vogn and ivon with mc = 1: from s or h); called after
 * every epoch. */
void train_step_finish_epoch(struct trainer *t);

/* loo.c: the leave-one-out estimate after each epoch (option loo).
 * Setup checks the model and optimizer and picks the examples (none when
 * loo is 0); train_loo sets r->loo_nll, collectively. */
int train_loo_setup(struct trainer *t, bnn_err *err);
int train_loo(struct trainer *t, bnn_epoch_report *r, bnn_err *err);

#endif
