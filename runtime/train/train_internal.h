/*
 * train_internal.h: what the trainer's two files share (not installed).
 * train.c runs epochs (shuffling, minibatches, validation, early stopping,
 * checkpoints, rollback); train_step.c turns one minibatch into one
 * optimizer step for every optimizer: the gradient estimate (with
 * Monte-Carlo samples of the posterior for vogn, ivon and bbb) and the
 * update, tensor by tensor with each tensor's prior precision.
 */
#ifndef BNN_TRAIN_INTERNAL_H
#define BNN_TRAIN_INTERNAL_H

#include "bnn.h"
#include "bnn_variational.h"

/* A copy of the trainable state (parameters, σ, optimizer arrays,
 * counters), for rollback and for the best epoch. */
#define TRAIN_SNAPSHOT_ARRAYS (3 + BNN_OPT_SLOTS)
struct train_snapshot {
	float *arrays[TRAIN_SNAPSHOT_ARRAYS]; /* params, sigma, stats, opt[]
	                                          (NULL: unused) */
	long step, epoch;
};

/* One parameter tensor as the optimizers see it. */
struct train_tensor {
	long offset, size;
	int stochastic;   /* has a posterior (a meanfield layer's tensor) */
	int decays;       /* takes weight decay or the prior's L2 term (not a
	                     point batchnorm's γ and β) */
	int patched;      /* the k components of an emp or ecmp layer */
	double prior_l2;  /* patched, with sgd and adam: τ/(k·N), the L2
	                     coefficient of eq. (7) of Chang et al. over N */
	int weight_sample;/* bbb with lrt: a meanfield tensor the pass does
	                     not sample by the local reparameterisation
	                     (conv2d, batchnorm), sampled by the trainer */
	double delta;     /* the optimizer's δ for it (prior precision, or
	                     IVON's weight decay) */
	int whvi;         /* a whvi layer's tensor: no decay, KL/N added */
};

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
	float *ws, *xb, *yb, *out;
	float *grad;                 /* ĝ: the gradient estimate of a step */
	float *hess;                 /* ĥ: vogn's squared gradients, ivon's estimate */
	float *gk, *hk;              /* one MC sample's gradient and squares (mc > 1) */
	float *gsig;                 /* bbb: the gradient with respect to σ */
	float *gsigk;                /* bbb: one sample's (mc > 1) */
	float *theta, *eps;          /* a posterior sample and its noise */
	int primed;                  /* mc = 1: theta already holds this step's
	                                sample, drawn by the last update, and
	                                st->sigma is derived at epoch ends only */
	double tau;                  /* vogn's τ at the last step */
	int mixed_lrt;               /* bbb with lrt: some tensor has weight_sample */
	int whvi;                    /* the model has whvi layers (KL/N added) */
	double kl;                   /* their KL at the last step */
	double *whvi_scratch;        /* bnn_whvi_kl's scratch (flows), or NULL */
	struct train_tensor *tensors;
	int ntensors;
	double n_data;               /* training examples (N) */
	struct train_snapshot start, best;
	bnn_rng rng;                 /* shuffling */
	bnn_rng noise;               /* posterior samples and dropout masks */
	bnn_rng aug;                 /* the augmentation of training images */
	long aug_c, aug_h, aug_w;    /* the images' channels, rows, columns */
	float *aug_scratch;          /* one image (bnn_augment_image) */
	bnn_schedule schedule;
};

/* Checks that the optimizer can train the model's posterior families. */
int train_check_model(const bnn_model *m, const bnn_train_options *o, bnn_err *err);

/* Resolves the tensors' δ, allocates the step's buffers and sets up a
 * fresh optimizer state (or keeps a loaded one of the same optimizer). */
int train_step_setup(struct trainer *t, bnn_err *err);

/* Frees what train_step_setup allocated. */
void train_step_free(struct trainer *t);

/* How many optimizer slots (bnn_state.opt) the optimizer uses. */
int train_optimizer_slots(int optimizer);

/* One optimizer step on the b examples in t->xb, t->yb at learning rate
 * lr and training progress `epochs` (fractional).  Returns the summed NLL
 * of the batch (averaged over the step's MC samples). */
double train_step(struct trainer *t, long b, double lr, double epochs);

/* Brings st->sigma up to date where it is derived only at times (badam:
 * from Adam's v; vogn and ivon with mc = 1: from s or h); called after
 * every epoch. */
void train_step_finish_epoch(struct trainer *t);

#endif
