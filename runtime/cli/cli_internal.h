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

/* merge: the most --load files. */
#define BNN_CLI_MAX_LOADS 64

/* The longest message a rank hands to rank 0. */
#define BNN_CLI_MSG_MAX 1024

/* Under mpirun every failure is printed once, by rank 0 (docs/driver.md):
 * rank 0 prints its own messages at once; a rank R > 0 keeps its first
 * one here, and the next agreement (bnn_cli_agree) hands it to rank 0,
 * which prints it as "rank R of N: MESSAGE" when R is the lowest failed
 * rank.  Every rank agrees once more at the end of a command
 * (bnn_cli_finish), so a message is never lost. */
struct bnn_cli_said {
	char held[BNN_CLI_MSG_MAX]; /* rank > 0: its first message since the last
	                               agreement, not printed ("": none) */
	int stopped;                /* an agreement found a failure: every rank
	                               has stopped there, none agrees again */
};

/* Every option of every subcommand (each subcommand accepts a subset). */
struct bnn_cli_args {
	const char *prog;       /* argv[0], for messages */
	const bnn_model *model; /* the model the driver runs */
	const char *command;    /* "train", "eval", "predict", "info" */
	const char *data, *labels, *target;
	const char *valid, *valid_labels;
	const char *save, *load, *out;
	const char *resume, *init;      /* train: continue a run, or start from parameters */
	long checkpoint_every;          /* train: save every N epochs (0: off) */
	const char *ood, *ood_labels;   /* eval: out-of-distribution data */
	const char *plots;              /* eval: directory for the charts */
	const char *conformal;          /* eval, predict: the calibration data of split
	                                   conformal prediction (cli_conformal.c) */
	const char *conformal_labels;   /* its IDX labels */
	const char *level;              /* its coverage level, as given (NULL: 0.9) */
	const char *conformal_method;   /* aps, raps, lac, residual, normalized (NULL:
	                                   aps, or normalized for regression) */
	const char *conformal_adaptive; /* eval: γ of adaptive conformal inference,
	                                   as given (NULL: off) */
	int conformal_online;           /* eval: its calibration scores grow with
	                                   each evaluated example's */
	const char *storage;            /* export: f32, bf16 or int8 (NULL: f32) */
	const char *rounded;            /* export: the checkpoint of the kept values */
	long mc;                        /* eval, predict: MC samples (-1: default) */
	int standardize, quiet;
	long bins;
	const char *prior_precision; /* laplace: a number or auto (NULL: auto) */
	const char *fisher;          /* laplace: mc or empirical (NULL: mc) */
	long fisher_samples;         /* laplace: label draws per example (0: 1) */
	long top;                    /* sensitivity: examples listed each way (0: default) */
	const char *svg;             /* sensitivity: the contact sheet, or NULL */
	bnn_train_options train;     /* with --optimizer, --lr, ... and --set applied */
	const char *options;         /* train, tune: --options FILE, applied before the
	                            command line's options (cli.c) */
	long budget, trials;         /* tune: epochs of the first rung, configurations */
	int prior;                   /* tune --prior: the evidence's prior precision */
	int rank, ranks;             /* MPI: this process's rank of ranks (0 of 1 without) */
	struct bnn_cli_said *said;   /* under MPI: what rank 0 has yet to print
	                                (bnn_cli_main's; NULL: every rank prints) */
	/* mixtures and merge (docs/ensembles.md, docs/merge.md) */
	long members; /* train: networks of the mixture (0: one) */
	const char *loads[BNN_CLI_MAX_LOADS];
	int nloads;          /* merge: every --load, in order */
	const char *weights; /* merge: hessian or uniform (NULL: hessian);
	                        laplace: last-layer or all (NULL: last-layer) */
	/* last-layer Laplace (docs/laplace.md) */
	int last_layer;                 /* laplace --last-layer: --weights last-layer */
	const char *structure;          /* laplace, last layer: kron or full (NULL: kron) */
	const char *laplace_predictive; /* eval, predict: probit or mc (NULL: probit) */
	int ignore_header;              /* --ignore-header: CSV columns by position,
	                                   not checked against the names the
	                                   checkpoint recorded */
	int target_chosen;              /* target is the driver's choice for --data
	                                   (no --target given): CSV files only */
};

/* Exit statuses. */
enum {
	BNN_CLI_OK = 0,
	BNN_CLI_FAIL = 1,
	BNN_CLI_USAGE = 2
};

/* Collective under MPI (several ranks): agrees on the status of a stage
 * every rank takes, each passing its own.  Rank 0 prints the message the
 * lowest failed rank R > 0 held (bnn_cli_said), "PROG: rank R of N:
 * MESSAGE" (and the pointer to --help after a usage error); rank 0's own
 * was printed when it failed.  Every rank returns R's status (0: none
 * failed).  One process: returns status. */
int bnn_cli_agree(const struct bnn_cli_args *a, int status);

/* The last agreement of a command, every rank's status from it: unless an
 * agreement found a failure already (every rank stopped there), the
 * ranks agree (bnn_cli_agree) so that rank 0 prints the message of a rank
 * that failed on its own.  Returns status (each rank keeps its own). */
int bnn_cli_finish(const struct bnn_cli_args *a, int status);

/* Prints "PROG: MESSAGE" on stderr and returns BNN_CLI_FAIL.  Under MPI
 * a rank > 0 holds the message for rank 0 instead (bnn_cli_said). */
int bnn_cli_error(const struct bnn_cli_args *a, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* Prints "PROG: MESSAGE" and a pointer to --help on stderr and returns
 * BNN_CLI_USAGE.  Under MPI a rank > 0 holds the message for rank 0. */
int bnn_cli_usage_error(const struct bnn_cli_args *a, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* Checks the files the command will write (--save, --out) before any work:
 * none may be one of its inputs (a usage error), and each must be writable
 * (its directory exists and can be written; a file error).  0 when they
 * pass, else the exit status after a message. */
int bnn_cli_check_outputs(const struct bnn_cli_args *a);

/* Loads a data set for model m: CSV by extension, else IDX (plain or
 * gzip) with optional labels; checks that it fits the model, labels in
 * range.  need_targets: targets are required (train, eval's --data);
 * otherwise (predict, eval's --ood) none are read: a CSV file may leave
 * them out, and its target columns, recognised, are not read (any text);
 * IDX labels are read as a label file but not checked against the
 * model's classes.  a gives the target column (bnn_cli_target) and, for
 * the messages, the option that names data's labels (--valid's file has
 * --valid-labels, ...). */
int bnn_cli_load(const bnn_model *m, const struct bnn_cli_args *a, const char *data,
                 const char *labels, int need_targets, bnn_dataset *ds, bnn_err *err);

/* The target column(s) to read data file path with: --target as given,
 * or the driver's choice for --data (a->target_chosen) if path is a CSV
 * file; NULL for an IDX file then (the choice named no column of it). */
const char *bnn_cli_target(const struct bnn_cli_args *a, const char *path);

/* The column names a checkpoint recorded from its training CSV file
 * (bnn_state.columns, docs/data.md): the text of the section "columns"
 * (bnn_cli_columns_text of the training data set; NULL for IDX data or
 * no memory), read back by bnn_cli_columns_parse (0 or BNN_ENOMEM; free
 * with bnn_cli_columns_free). */
struct bnn_cli_columns {
	char *text;            /* owned: a copy of the section, cut into names */
	char *target;          /* owned: the target names, comma-separated (--target) */
	const char **features; /* owned array of nfeatures names into text */
	long nfeatures;
};
char *bnn_cli_columns_text(const bnn_dataset *ds);
int bnn_cli_columns_parse(const char *text, struct bnn_cli_columns *c);
void bnn_cli_columns_free(struct bnn_cli_columns *c);

/* Whether the header of the CSV file path has the columns names (comma-
 * separated): 0 for any other file, or one that cannot be read. */
int bnn_cli_has_columns(const bnn_model *m, const char *path, const char *names);

/* Checks the header of the CSV file path (anything else passes) against
 * the recorded names c, the target column(s) being target: 0, or
 * BNN_EMISMATCH naming the first feature column whose name differs and
 * its position.  A header that fails the reader's other checks passes
 * here (the command's loading reports it). */
int bnn_cli_check_columns(const bnn_model *m, const char *path, const char *target,
                          const struct bnn_cli_columns *c, bnn_err *err);

int bnn_cli_train(const bnn_model *m, struct bnn_cli_args *a);
int bnn_cli_eval(const bnn_model *m, struct bnn_cli_args *a);
int bnn_cli_predict(const bnn_model *m, struct bnn_cli_args *a);
int bnn_cli_posterior(const bnn_model *m, struct bnn_cli_args *a);
/* laplace: a diagonal Laplace posterior of a point checkpoint (cli_laplace.c). */
int bnn_cli_laplace(const bnn_model *m, struct bnn_cli_args *a);

/* calibrate: temperature scaling of a checkpoint (cli_calibrate.c). */
int bnn_cli_calibrate(const bnn_model *m, struct bnn_cli_args *a);

/* The driver's JSON numbers, the one way every command prints a real
 * number in JSON (cli_eval.c): bnn_cli_json_value writes v with `digits`
 * significant digits on stdout, or `null` when v is not finite (JSON has
 * no NaN or infinity); bnn_cli_json_number writes `, "key": v` with 9
 * digits, or `, "key": null` when v is not defined or not finite. */
void bnn_cli_json_value(double v, int digits);
void bnn_cli_json_number(const char *key, double v, int defined);
/* `, "key": "text"` on stdout, the text a JSON string: '"', '\\' and
 * control characters escaped (a checkpoint's name is the user's). */
void bnn_cli_json_string(const char *key, const char *text);

/* Split conformal prediction for eval and predict (cli_conformal.c). */
struct bnn_cli_conformal {
	bnn_conformal_options o; /* the method (RAPS: λ, k_reg) */
	double level;            /* the coverage level */
	long n_cal;              /* calibration examples */
	double q;                /* the conformal quantile */
	double gamma;            /* eval: adaptive conformal's step size (0: off) */
	int online;              /* eval: adaptive conformal online (its
	                            calibration scores grow) */
	double *cal;             /* the n_cal calibration scores (the true class's) */
	long n, k;               /* the predicted examples and classes (or outputs) */
	int classes;             /* 1: sets of classes, 0: intervals */
	double *scores;          /* n × k class scores (classification) or n scores */
	const float *mean, *var; /* regression: the predictions of the intervals */
};

/* --level, --conformal-method and --conformal-adaptive of model m checked
 * and read into c (a usage error names the option); 0 or the exit status
 * after a message. */
int bnn_cli_conformal_options(const bnn_model *m, struct bnn_cli_args *a,
                              struct bnn_cli_conformal *c);

/* The conformal quantile of the calibration predictions (probs, var and
 * the targets y of n_cal examples): 0, or BNN_CLI_FAIL after a message
 * naming --conformal's file. */
int bnn_cli_conformal_fit(const bnn_model *m, struct bnn_cli_args *a, struct bnn_cli_conformal *c,
                          const float *probs, const float *var, const float *y, long n_cal);

/* The scores of the n predicted examples (probs, var; for the intervals
 * kept by pointer), then, when y is given, the JSON keys of eval:
 * conformal_coverage and conformal_set_size, or conformal_width; with
 * --conformal-adaptive, those of adaptive conformal inference over the
 * examples in order, conformal_adaptive_gamma, _coverage, _set_size or
 * _width, and _infinite. */
int bnn_cli_conformal_apply(const bnn_model *m, struct bnn_cli_args *a, struct bnn_cli_conformal *c,
                            const float *probs, const float *var, const float *y, long n);

/* predict's columns: the header (",set" or ",lo_0,hi_0,...") and row i. */
void bnn_cli_conformal_header(FILE *f, const struct bnn_cli_conformal *c);
void bnn_cli_conformal_row(FILE *f, const struct bnn_cli_conformal *c, long i);
void bnn_cli_conformal_free(struct bnn_cli_conformal *c);

/* sensitivity: scores, listing, CSV and contact sheet (cli_sensitivity.c). */
int bnn_cli_sensitivity(const bnn_model *m, struct bnn_cli_args *a);

/* merge: one checkpoint from several (cli_merge.c). */
int bnn_cli_merge(const bnn_model *m, struct bnn_cli_args *a);

/* tune: the hyperparameter search, or --prior's evidence (cli_tune.c). */
int bnn_cli_tune(const bnn_model *m, struct bnn_cli_args *a);

/* export: the weights header of the standalone inference (cli_export.c). */
int bnn_cli_export(const bnn_model *m, struct bnn_cli_args *a);

/* Writes a file atomically: fill() writes into a temporary file next to
 * path, which is renamed over path only when complete.  path "-" writes
 * to stdout; a path that is a device or a pipe is written directly. */
int bnn_cli_write_file(const char *path, int (*fill)(FILE *f, void *ctx), void *ctx, bnn_err *err);

#endif
