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
	BNN_OPT_COUNT
};

/* Every training option, with its --set name in brackets. */
typedef struct bnn_train_options {
	int optimizer;          /* enum bnn_optimizer [optimizer] */
	bnn_schedule schedule;  /* lr [lr], kind [schedule], gamma, milestones,
	                           warmup, lr_min; total is set to epochs */
	bnn_sgd_params sgd;     /* momentum, nesterov, weight_decay */
	bnn_adam_params adam;   /* beta1, beta2, eps, weight_decay */
	double clip;            /* gradient-norm clipping; 0: off [clip] */
	long epochs;            /* [epochs] */
	long batch;             /* [batch] */
	uint64_t seed;          /* [seed] */
	int threads;            /* BLAS threads [threads] */
	double valid_fraction;  /* held out of the training data when no
	                           validation set is given; 0: none [valid_fraction] */
	long patience;          /* early stopping: epochs without a better
	                           validation NLL; 0: off [patience] */
	int verbose;            /* progress line on stderr */
} bnn_train_options;

/** "sgd", "adam", "adamw" ("none" for anything else). */
const char *bnn_optimizer_name(int optimizer);
/** The enum bnn_optimizer of a name, or -1. */
int bnn_optimizer_from_name(const char *name);

/** Set the number of BLAS threads (>= 1) used by every model pass. */
void bnn_set_threads(int threads);

/** The defaults: adam, lr 1e-3, constant schedule, 10 epochs, batch 128,
 *  seed 1, 1 thread, no validation, no clipping, no early stopping. */
bnn_train_options bnn_train_defaults(void);

/**
 * Set an option by its --set name from text ("lr", "1e-3").
 * @return BNN_OK; BNN_EINVAL with a message naming the option (unknown
 *         name with a suggestion, value not a number, out of range).
 */
int bnn_train_set(bnn_train_options *o, const char *name, const char *value,
                  bnn_err *err);

/** Print the option names with a line of help each (for --help). */
void bnn_train_options_help(FILE *out);

/** The options as one line of "name=value" text (owned by the caller;
 *  NULL when out of memory). */
char *bnn_train_options_text(const bnn_train_options *o);

/* A trained (or training) model. */
typedef struct bnn_state {
	const bnn_model *model;   /* borrowed */
	float *params;            /* model->nparams, owned */
	int optimizer;            /* enum bnn_optimizer of opt_a/opt_b */
	float *opt_a;             /* sgd: momentum buffer; adam: m (owned) */
	float *opt_b;             /* adam: v (owned); sgd: NULL */
	long step;                /* optimizer steps taken */
	long epoch;               /* epochs completed */
	bnn_standardizer standardize; /* features 0: inputs used as they are */
	char *options;            /* text of the options used, owned (or NULL) */
} bnn_state;

/**
 * A new state with parameters initialised from seed (each tensor by its
 * init rule) and no optimizer state.  BNN_ENOMEM, or an invalid model.
 */
int bnn_state_init(bnn_state *st, const bnn_model *m, uint64_t seed,
                   bnn_err *err);
void bnn_state_free(bnn_state *st);

/** Initialise params by the tensors' rules (He, Glorot, zero). */
void bnn_params_init(const bnn_model *m, float *params, bnn_rng *rng);

/**
 * Save to a checkpoint (atomically replacing path).  Sections: params,
 * opt.a, opt.b, meta (text: optimizer, step, epoch, options),
 * standardize.mean, standardize.std.
 */
int bnn_state_save(const bnn_state *st, const char *path, bnn_err *err);

/**
 * Load a checkpoint written for the same model (same fingerprint); any
 * other is BNN_EMISMATCH naming both models.  st is initialised by this
 * call (free it with bnn_state_free) only on success.
 */
int bnn_state_load(bnn_state *st, const bnn_model *m, const char *path,
                   bnn_err *err);

/* Progress of training, passed to a bnn_epoch_fn after every epoch
 * (final = 1) and, within an epoch, about twice a second (final = 0: only
 * epoch, train_loss so far, steps, examples_per_second are set). */
typedef struct bnn_epoch_report {
	int final;                /* 1: the epoch is complete */
	long epoch;               /* 1-based, counting this run's epochs */
	long epochs;              /* how many this run will do at most */
	long step, steps;         /* steps done in this epoch, of steps */
	double train_loss;        /* mean NLL over the epoch's examples so far */
	double valid_nll;         /* mean validation NLL; NAN without validation */
	double valid_accuracy;    /* NAN without validation or for regression */
	double seconds;           /* wall time of the epoch so far */
	double examples_per_second;
	int improved;             /* best validation NLL so far (or no validation) */
	double lr;                /* final: the learning rate at the epoch's end */
} bnn_epoch_report;
/* Return non-zero to stop training after this report. */
typedef int (*bnn_epoch_fn)(const bnn_epoch_report *r, void *ctx);

/**
 * Train st on train (valid may be NULL: then o->valid_fraction of train,
 * chosen at random from the seed, is held out when positive).  Data must
 * already be standardised if wanted; targets are checked (labels in range).
 * Each epoch visits the training examples in a fresh random order, in
 * minibatches of o->batch (the last one may be smaller).
 * With validation data, st ends with the parameters and optimizer state of
 * the epoch with the lowest validation NLL, and training stops early after
 * o->patience epochs without improvement (when patience > 0).
 * A non-finite loss stops training with BNN_ERANGE; st then holds the state
 * at the start of the failed epoch, and the checkpoint file keeps its last
 * good contents.  checkpoint, if not NULL, is saved (atomically) at the end
 * (the best epoch's state with validation data), and during training after
 * an epoch that improved the validation NLL (or any epoch without
 * validation) when 30 seconds have passed since the last save.
 * @return BNN_OK; BNN_EINVAL/BNN_EMISMATCH (options, data that does not fit
 *         the model), BNN_EUNSUPPORTED (posterior families these optimizers
 *         do not train), BNN_ERANGE (divergence), BNN_ENOMEM, BNN_EIO
 *         (checkpoint).
 */
int bnn_train(bnn_state *st, const bnn_dataset *train,
              const bnn_dataset *valid, const bnn_train_options *o,
              const char *checkpoint, bnn_epoch_fn on_epoch, void *ctx,
              bnn_err *err);

/**
 * Check that ds fits model m: as many values per example as the model's
 * input, and (need_targets) the model's number of targets; not empty.
 * @return BNN_OK, BNN_EMISMATCH or BNN_EINVAL with a message.
 */
int bnn_data_fits(const bnn_model *m, const bnn_dataset *ds, int need_targets,
                  bnn_err *err);

/**
 * Run the model over examples idx[0..n) of ds (idx NULL: the first n) in
 * batches of at most `batch`, writing the raw outputs (n × outputs) to out
 * (may be NULL) and the summed NLL to *nll (may be NULL; then ds needs no
 * targets).  ds must already be standardised.
 */
int bnn_model_outputs(const bnn_state *st, const bnn_dataset *ds,
                      const long *idx, long n, long batch, float *out,
                      double *nll, bnn_err *err);

/**
 * Predictive distributions for every example of ds (standardised already):
 * categorical: probs n × outputs; bernoulli: probs n × outputs (P(y = 1));
 * gaussian: mean n × outputs into probs, variance into var (n × outputs).
 */
int bnn_predict(const bnn_state *st, const bnn_dataset *ds, float *probs,
                float *var, bnn_err *err);

#ifdef __cplusplus
}
#endif

#endif /* BNN_TRAIN_H */
