/*
 * cli_internal.h: what the driver's files share (not installed).  cli.c
 * parses the command line and dispatches; cli_data.c loads data sets for a
 * model; cli_train.c, cli_eval.c and cli_export.c are the subcommands.
 */
#ifndef BNN_CLI_INTERNAL_H
#define BNN_CLI_INTERNAL_H

#include <stdio.h>

#include "bnn.h"

#define BNN_CLI_MAX_SETS 64

/* Every option of every subcommand (each subcommand accepts a subset). */
struct bnn_cli_args {
	const char *prog;       /* argv[0], for messages */
	const bnn_model *model; /* the model the driver runs */
	const char *command;    /* "train", "eval", "predict", "info" */
	const char *data, *labels, *target;
	const char *valid, *valid_labels;
	const char *save, *load, *out;
	const char *resume, *init;    /* train: continue a run, or start from parameters */
	long checkpoint_every;        /* train: save every N epochs (0: off) */
	const char *ood, *ood_labels; /* eval: out-of-distribution data */
	const char *plots;            /* eval: directory for the charts */
	const char *storage;          /* export: f32, bf16 or int8 (NULL: f32) */
	const char *rounded;          /* export: the checkpoint of the kept values */
	long mc;                      /* eval, predict: MC samples (-1: default) */
	int standardize, quiet;
	long bins;
	bnn_train_options train; /* with --optimizer, --lr, ... and --set applied */
	const char *options;     /* train, tune: --options FILE, applied before the
	                            command line's options (cli.c) */
	long budget, trials;     /* tune: epochs of the first rung, configurations */
	int prior;               /* tune --prior: the evidence's prior precision */
	int rank, ranks;         /* MPI: this process's rank of ranks (0 of 1 without) */
	char *last_error;        /* BNN_ERR_MESSAGE_MAX bytes: the last message of
	                     bnn_cli_error, for bnn_cli_agree (or NULL) */
};

/* Exit statuses. */
enum {
	BNN_CLI_OK = 0,
	BNN_CLI_FAIL = 1,
	BNN_CLI_USAGE = 2
};

/* Under MPI (several ranks): agrees on the status of a stage every rank
 * takes.  A rank that failed has printed its message; the others print
 * "PROG: rank R of N: MESSAGE" from the lowest failing rank R, and all
 * return its status.  One process: returns status. */
int bnn_cli_agree(const struct bnn_cli_args *a, int status);

/* Prints "PROG: MESSAGE" on stderr and returns BNN_CLI_FAIL. */
int bnn_cli_error(const struct bnn_cli_args *a, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* Prints "PROG: MESSAGE" and a pointer to --help on stderr and returns
 * BNN_CLI_USAGE. */
int bnn_cli_usage_error(const struct bnn_cli_args *a, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* Checks the files the command will write (--save, --out) before any work:
 * none may be one of its inputs (a usage error), and each must be writable
 * (its directory exists and can be written; a file error).  0 when they
 * pass, else the exit status after a message. */
int bnn_cli_check_outputs(const struct bnn_cli_args *a);

/* Loads a data set for model m: CSV by extension, else IDX (plain or
 * gzip) with optional labels; checks that it fits the model, labels in
 * range.  need_targets: targets are required (train, eval); otherwise a
 * CSV may leave them out (predict). */
int bnn_cli_load(const bnn_model *m, const char *data, const char *labels, const char *target,
                 int need_targets, bnn_dataset *ds, bnn_err *err);

int bnn_cli_train(const bnn_model *m, struct bnn_cli_args *a);
int bnn_cli_eval(const bnn_model *m, struct bnn_cli_args *a);
int bnn_cli_predict(const bnn_model *m, struct bnn_cli_args *a);
int bnn_cli_posterior(const bnn_model *m, struct bnn_cli_args *a);

/* tune: the hyperparameter search, or --prior's evidence (cli_tune.c). */
int bnn_cli_tune(const bnn_model *m, struct bnn_cli_args *a);

/* export: the weights header of the standalone inference (cli_export.c). */
int bnn_cli_export(const bnn_model *m, struct bnn_cli_args *a);

/* Writes a file atomically: fill() writes into a temporary file next to
 * path, which is renamed over path only when complete.  path "-" writes
 * to stdout; a path that is a device or a pipe is written directly. */
int bnn_cli_write_file(const char *path, int (*fill)(FILE *f, void *ctx), void *ctx, bnn_err *err);

#endif
