/*
 * cli.c: the command-line driver of a generated model (bnn_cli_main), the
 * main() that `bnnc --main` emits.  It parses the subcommand and its
 * options and dispatches to cli_train.c and cli_eval.c.  Two tables drive
 * it: the subcommands with their usage (cli_commands: --help and the
 * messages list them from there), and every option with the subcommands
 * that take it and where its value goes (cli_opts: the parser follows it).
 *
 *   MODEL train   --data FILE [--labels FILE] [--target NAME] [--standardize]
 *                 [--valid FILE [--valid-labels FILE]] [--optimizer NAME] [--mc K]
 *                 [--lr X] [--epochs N] [--batch B] [--seed S] [--threads T]
 *                 [--set NAME=VALUE ...] [--quiet] [--resume CKPT | --init CKPT]
 *                 [--checkpoint-every N] [--members K] [--options FILE] --save CKPT
 *   MODEL eval    --load CKPT --data FILE [--labels FILE] [--target NAME] [--bins N]
 *                 [--mc S] [--seed S] [--ood FILE [--ood-labels FILE]] [--plots DIR]
 *                 [--conformal FILE [--conformal-labels FILE] [--level X]
 *                 [--conformal-method NAME] [--conformal-adaptive GAMMA
 *                 [--conformal-online]]] [--laplace-predictive probit|mc]
 *                 [--batch B] [--threads T]
 *   MODEL predict --load CKPT --data FILE [--target NAME] [--out FILE.csv]
 *                 [--mc S] [--seed S] [--conformal FILE ...] [--laplace-predictive P]
 *                 [--batch B] [--threads T]
 *   MODEL calibrate --load CKPT --data FILE [--labels FILE] [--target NAME]
 *                 --save CKPT [--mc S] [--seed S] [--batch B] [--threads T]
 *   MODEL posterior --load CKPT [--out FILE.csv]
 *   MODEL laplace --load CKPT --data FILE [--labels FILE] [--target NAME] --save CKPT
 *                 [--weights last-layer|all] [--structure kron|full]
 *                 [--prior-precision P|auto] [--fisher mc|empirical] [--fisher-samples S]
 *                 [--batch B] [--seed S] [--threads T]
 *   MODEL merge   --load CKPT --load CKPT [--load CKPT ...] --save CKPT
 *                 [--weights hessian|uniform]
 *   MODEL export  --load CKPT [--storage f32|bf16|int8] [--rounded CKPT] [-o FILE.h]
 *   MODEL info    [--load CKPT]
 *   MODEL tune    --data FILE [--optimizer NAME] [--budget EPOCHS] [--trials N] ... --out FILE
 *   MODEL tune    --prior --load CKPT --data FILE [--out FILE]
 *
 * Commands that read CSV data take --ignore-header: with --load (or
 * --resume) the CSV columns are otherwise checked against the names the
 * checkpoint recorded in training (cli_recorded_columns).
 *
 * Results go to stdout (JSON lines, CSV); messages and progress to stderr.
 * Exit status: 0 success, 1 data/model/file error, 2 usage error.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_internal.h"
#include "common/edit_distance.h"

/* "PROG: message" on stderr and, after a usage error (status
 * BNN_CLI_USAGE), the pointer to --help.  Under MPI a rank > 0 holds its
 * first message for rank 0 to print at the next agreement instead
 * (bnn_cli_said, bnn_cli_agree). */
static void cli_say(const struct bnn_cli_args *a, int status, const char *fmt, va_list ap)
{
	if (a->said && a->ranks > 1 && a->rank > 0) {
		if (!a->said->held[0])
			vsnprintf(a->said->held, sizeof a->said->held, fmt, ap);
		return;
	}
	fprintf(stderr, "%s: ", a->prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	if (status == BNN_CLI_USAGE)
		fprintf(stderr, "Try '%s --help'.\n", a->prog);
}

int bnn_cli_error(const struct bnn_cli_args *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cli_say(a, BNN_CLI_FAIL, fmt, ap);
	va_end(ap);
	return BNN_CLI_FAIL;
}

int bnn_cli_usage_error(const struct bnn_cli_args *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cli_say(a, BNN_CLI_USAGE, fmt, ap);
	va_end(ap);
	return BNN_CLI_USAGE;
}

/* Which subcommands take an option. */
enum {
	IN_TRAIN = 1,
	IN_EVAL = 2,
	IN_PREDICT = 4,
	IN_INFO = 8,
	IN_POSTERIOR = 16,
	IN_EXPORT = 32,
	IN_LAPLACE = 64,
	IN_CALIBRATE = 128,
	IN_SENSITIVITY = 256,
	IN_MERGE = 512,
	IN_TUNE = 1024
};

/* The subcommands that share their work among the processes of mpirun
 * (docs/distributed.md); under mpirun with more than one process every
 * other one is refused (cli_one_process). */
#define IN_DISTRIBUTED (IN_TRAIN | IN_EVAL | IN_PREDICT)

/* The subcommands, in the order --help and the messages list them. */
static const struct cli_command {
	const char *name;     /* "train" */
	int bit;              /* its IN_* bit */
	const char *synopsis; /* its usage in --help, after the name */
} cli_commands[] = {
	{ "train", IN_TRAIN,
	  "--data FILE [--labels FILE] [--target NAME] [--standardize]\n"
	  "                 [--valid FILE [--valid-labels FILE]] [--optimizer NAME] [--mc K]\n"
	  "                 [--lr X] [--epochs N] [--batch B] [--seed S] [--threads T]\n"
	  "                 [--set NAME=VALUE ...] [--quiet] [--resume CKPT | --init CKPT]\n"
	  "                 [--checkpoint-every N] [--members K] [--options FILE]\n"
	  "                 [--ignore-header] --save CKPT" },
	{ "eval", IN_EVAL,
	  "--load CKPT --data FILE [--labels FILE] [--target NAME] [--bins N]\n"
	  "                 [--mc S] [--seed S] [--ood FILE [--ood-labels FILE]] [--plots DIR]\n"
	  "                 [--conformal FILE [--conformal-labels FILE] [--level X]\n"
	  "                 [--conformal-method NAME] [--conformal-adaptive GAMMA\n"
	  "                 [--conformal-online]]] [--laplace-predictive probit|mc]\n"
	  "                 [--ignore-header] [--batch B] [--threads T]" },
	{ "predict", IN_PREDICT,
	  "--load CKPT --data FILE [--target NAME] [--out FILE.csv]\n"
	  "                 [--mc S] [--seed S] [--conformal FILE ...] [--laplace-predictive P]\n"
	  "                 [--ignore-header] [--batch B] [--threads T]" },
	{ "calibrate", IN_CALIBRATE,
	  "--load CKPT --data FILE [--labels FILE] [--target NAME]\n"
	  "                 --save CKPT [--mc S] [--seed S] [--batch B] [--threads T]\n"
	  "                 [--ignore-header]" },
	{ "posterior", IN_POSTERIOR, "--load CKPT [--out FILE.csv]" },
	{ "merge", IN_MERGE,
	  "--load CKPT --load CKPT [--load CKPT ...] --save CKPT\n"
	  "                 [--weights hessian|uniform]" },
	{ "export", IN_EXPORT,
	  "--load CKPT [--storage f32|bf16|int8]\n"
	  "                 [--rounded CKPT] [-o FILE.h]" },
	{ "info", IN_INFO, "[--load CKPT]" },
	{ "laplace", IN_LAPLACE,
	  "--load CKPT --data FILE [--labels FILE] [--target NAME] --save CKPT\n"
	  "                 [--weights last-layer|all] [--structure kron|full]\n"
	  "                 [--prior-precision P|auto] [--fisher mc|empirical]\n"
	  "                 [--fisher-samples S] [--batch B] [--seed S] [--threads T]\n"
	  "                 [--ignore-header]" },
	{ "sensitivity", IN_SENSITIVITY,
	  "--load CKPT --data FILE [--labels FILE] [--target NAME]\n"
	  "                 [--top N] [--out FILE.csv] [--svg FILE.svg] [--threads T]\n"
	  "                 [--ignore-header]" },
	{ "tune", IN_TUNE,
	  "--data FILE [--labels FILE] [--target NAME] [--standardize]\n"
	  "                 [--optimizer NAME] [--budget EPOCHS] [--trials N] [--seed S]\n"
	  "                 [--options FILE] [--set NAME=VALUE ...] [--threads T] --out FILE.opts\n"
	  "                 | --prior --load CKPT --data FILE [--labels FILE] [--out FILE.opts]\n"
	  "                 [--ignore-header]" },
};
#define NCLI_COMMANDS ((int)(sizeof cli_commands / sizeof cli_commands[0]))

/* The row of the subcommand whose IN_* bit is where (one that exists). */
static const struct cli_command *cli_command_of(int where)
{
	int i;

	for (i = 0; i < NCLI_COMMANDS - 1; i++)
		if (cli_commands[i].bit == where)
			break;
	return &cli_commands[i];
}

/* "train, eval, predict, posterior or info" into buf. */
static const char *cli_command_list(char *buf, size_t size)
{
	size_t used = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < NCLI_COMMANDS && used < size; i++)
		used += (size_t)snprintf(buf + used, size - used, "%s%s",
		                         i == 0                   ? ""
		                         : i == NCLI_COMMANDS - 1 ? " or "
		                                                  : ", ",
		                         cli_commands[i].name);
	return buf;
}

/* `PROG CMD --help`: the usage of that command alone. */
static void cli_command_help(const char *prog, const struct cli_command *c)
{
	printf("Usage: %s %-7s %s\n", prog, c->name, c->synopsis);
	printf("'%s --help' describes every command and option.\n", prog);
}

/* "unknown command 'trian'; did you mean 'train'?" (the rule of
 * common/edit_distance.h), else the list of commands. */
static int cli_unknown_command(const struct bnn_cli_args *a, char *list, size_t size)
{
	struct bnn_text_suggestion sug;
	int i;

	bnn_text_suggest_init(&sug, a->command, BNN_TEXT_EXACT_CASE);
	for (i = 0; i < NCLI_COMMANDS; i++)
		bnn_text_suggest_offer(&sug, cli_commands[i].name);
	if (sug.best)
		return bnn_cli_usage_error(a, "unknown command '%s'; did you mean '%s'?",
		                           a->command, sug.best);
	return bnn_cli_usage_error(a, "unknown command '%s': use %s", a->command,
	                           cli_command_list(list, size));
}

static void cli_help(const bnn_model *m, const char *prog)
{
	int i;

	for (i = 0; i < NCLI_COMMANDS; i++)
		printf("%s %s %-7s %s\n", i == 0 ? "Usage:" : "      ", prog, cli_commands[i].name,
		       cli_commands[i].synopsis);
	printf("Train, evaluate and run model '%s' (compiled by bnnc %s from %s).\n"
	       "\n",
	       m->name, m->bnnc_version, m->source);
	if (m->targets == 1)
		printf("Data: a FILE ending in .csv has a header row; its target is the column\n"
		       "--target names, else the column named '%s' as the model's target,\n"
		       "wherever it stands, else the last column.",
		       m->target_name);
	else
		printf("Data: a FILE ending in .csv has a header row; its %ld targets are the\n"
		       "columns --target names (Y1,Y2,...), else the last %ld columns.",
		       m->targets, m->targets);
	printf("  Any other FILE is IDX (plain or\n"
	       "gzip), with its targets in the IDX file --labels names.  A checkpoint\n"
	       "records the names of its training CSV file's columns: with --load, the\n"
	       "target is the column named as in training, and the feature columns must\n"
	       "have the training names in the training order (--ignore-header: take\n"
	       "them by position, the target the last column).\n"
	       "\n"
	       "train   fits the model and saves it to CKPT (at the end: the best epoch's\n"
	       "        state with validation data; during a long run, about every 30 s,\n"
	       "        after an epoch that improves the validation NLL, or any epoch\n"
	       "        without validation data);\n"
	       "        --optimizer: sgd, adam, adamw (point estimates, MC dropout), or\n"
	       "        vogn, ivon, bbb, badam (posteriors of meanfield layers; --mc K\n"
	       "        Monte-Carlo samples per step); docs/optimizers/ describes each.\n"
	       "        prints a JSON summary on stdout and progress on stderr.\n"
	       "        --standardize scales inputs to zero mean, unit variance (statistics\n"
	       "        from the training data, stored in CKPT and reused by eval/predict).\n"
	       "        --resume CKPT continues the run that saved CKPT where it stopped,\n"
	       "        with the same options (only --epochs, the total, and --threads may\n"
	       "        change); --init CKPT starts a new run from CKPT's parameters (same\n"
	       "        tensors; another family's checkpoint too); --checkpoint-every N\n"
	       "        also saves CKPT after every N epochs (docs/training.md).\n"
	       "        --members K trains a mixture of K networks, member k (from 1)\n"
	       "        with seed S + k - 1, saved in one CKPT that eval and predict read\n"
	       "        (ivon members: Multi-IVON; adam members: a deep ensemble;\n"
	       "        docs/ensembles.md).\n"
	       "        Options for --set NAME=VALUE (docs/training.md):\n");
	bnn_train_options_help(stdout);
	printf("eval    prints one JSON line of metrics: n, accuracy, nll, ece, mce,\n"
	       "        brier, auroc, entropy (classification; --bins N for ECE/MCE,\n"
	       "        default %d) or n, rmse, nll (regression); docs/metrics.md defines\n"
	       "        them.  --ood FILE adds out-of-distribution detection metrics\n"
	       "        (ood_auroc, ood_fpr95, ood_aupr_in, ood_aupr_out, ...);\n"
	       "        --plots DIR writes reliability and entropy charts (SVG + CSV).\n"
	       "        --mc S averages S samples of the posterior (and dropout masks);\n"
	       "        --mc 0 predicts at the mean.  Default: 32 for a model with a\n"
	       "        posterior or dropout, else 0.  --seed seeds the samples.\n"
	       "        --conformal FILE (--conformal-labels FILE) adds split conformal\n"
	       "        prediction calibrated on FILE: coverage and mean set size\n"
	       "        (interval width) at --level (default 0.9); --conformal-method aps\n"
	       "        (default), raps or lac; normalized (default) or residual for\n"
	       "        regression (docs/conformal.md).  --conformal-adaptive GAMMA adds\n"
	       "        adaptive conformal inference over the examples in file order\n"
	       "        (time-ordered data such as forecasts): the level moves by step\n"
	       "        size GAMMA in (0, 1) after each label; conformal_adaptive_coverage,\n"
	       "        _width (finite intervals) or _set_size, _infinite, _gamma.\n"
	       "        --conformal-online adds each example's score to the calibration\n"
	       "        scores once its label is seen (conformal_adaptive_online).\n"
	       "predict writes predictive probabilities (or mean and variance) per\n"
	       "        example as CSV to --out (default: stdout); --mc as for eval;\n"
	       "        --conformal adds a column 'set' (\"3;5\") or lo_j,hi_j columns.\n"
	       "calibrate fits the temperature of a categorical model on the validation\n"
	       "        data --data (minimum NLL) and saves the checkpoint with it to\n"
	       "        --save; eval and predict apply it (docs/calibration.md).\n"
	       "posterior writes the posterior mean and standard deviation of every\n"
	       "        parameter as CSV (tensor,index,mean,std) to --out (default: stdout).\n"
	       "merge   averages the posterior means of several checkpoints of this model\n"
	       "        into the checkpoint --save: --weights hessian (default) weighs each\n"
	       "        parameter by the precision its run learned (ivon, vogn, badam,\n"
	       "        bbb), uniform by 1/K (docs/merge.md).\n"
	       "export  writes the checkpoint's trained values as the C header that\n"
	       "        `bnnc --standalone` inference includes (default: %s_infer_weights.h;\n"
	       "        -o - for stdout); docs/standalone.md.  --storage bf16 or int8\n"
	       "        stores the weight matrices and kernels in 2 or 1 byte(s) a value\n"
	       "        (default f32: every value exactly); --rounded CKPT also saves the\n"
	       "        checkpoint of the values the storage keeps, for eval and predict.\n"
	       "info    describes the model (and a checkpoint with --load).\n"
	       "laplace attaches a Laplace posterior to a trained point network and\n"
	       "        saves it to --save CKPT, δ from --prior-precision (default auto:\n"
	       "        the marginal likelihood's; or a number) (docs/laplace.md).\n"
	       "        --weights last-layer (the default; --last-layer is the same): the\n"
	       "        GGN of the output layer, Kronecker-factored (--structure kron,\n"
	       "        the default) or exact with a full covariance (full); eval and\n"
	       "        predict then use the probit approximation (--laplace-predictive\n"
	       "        mc: samples of the layer's weights).  It needs a dense output\n"
	       "        layer and a categorical or bernoulli model.  --weights all:\n"
	       "        precision δ + the GGN diagonal of every weight (--fisher mc,\n"
	       "        labels drawn from the model; or empirical), which eval and\n"
	       "        predict sample (predicts badly unless δ is chosen on held-out\n"
	       "        data).\n"
	       "sensitivity scores each example of a meanfield classifier by |v e|, how\n"
	       "        much removing it would move its prediction (IVON paper §4.4);\n"
	       "        lists the --top N (default 10) most and least sensitive, writes\n"
	       "        every score as CSV to --out and, for image data, the listed\n"
	       "        images as an SVG contact sheet to --svg (docs/sensitivity.md).\n"
	       "tune    searches the optimizer's learning rate and prior (ess, h0, tau)\n"
	       "        by successive halving on a held-out part of --data: --trials\n"
	       "        configurations (8) for --budget epochs (1), the better half for\n"
	       "        twice as many, ...; prints a table and writes the best as an options\n"
	       "        file for train --options FILE (NAME=VALUE lines; the command line\n"
	       "        overrides the file).  --prior: the prior precision of an ivon or\n"
	       "        vogn checkpoint by the Laplace evidence (docs/tune.md).\n"
	       "\n"
	       "--threads T runs train, eval and predict on T threads; the default is\n"
	       "every core this process may use (%d here: its CPU affinity, capped by\n"
	       "a cgroup CPU quota).  Results are the same bits on any number of threads.\n"
	       "\n"
	       "Exit status: 0 on success, 1 on a data, model or file error, 2 on a usage error.\n",
	       BNN_DEFAULT_BINS, m->name, bnn_threads_available());
}


/* How an option stores its value. */
enum cli_kind {
	CLI_TEXT,  /* a name, kept as given (a const char * field) */
	CLI_FILE,  /* a file or directory name: CLI_TEXT, but never empty */
	CLI_FLAG,  /* no value: an int field set to 1 */
	CLI_COUNT, /* a whole number in [min, max] (a long field) */
	CLI_TRAIN, /* the training option of the same name (bnn_train_set) */
	CLI_SET,   /* NAME=VALUE: the training option NAME */
	CLI_LOADS, /* merge's --load: one more file of the list */
};

/* One row of the option table: the parser follows it, and a misspelt or
 * misplaced option is found in it.  A name may have one row per set of
 * subcommands when it means different things in them (--mc). */
struct cli_opt {
	const char *name; /* "--data" */
	enum cli_kind kind;
	size_t field;     /* CLI_TEXT, CLI_FILE, CLI_FLAG, CLI_COUNT: offsetof bnn_cli_args */
	long min, max;    /* CLI_COUNT: the accepted range */
	const char *unit; /* CLI_COUNT: what is counted, for the message */
	int where;        /* the IN_* bits of the subcommands that take it */
};

#define ARG(f) offsetof(struct bnn_cli_args, f)
static const struct cli_opt cli_opts[] = {
	{ "--data", CLI_FILE, ARG(data), 0, 0, NULL,
	  IN_TRAIN | IN_EVAL | IN_PREDICT | IN_LAPLACE | IN_CALIBRATE | IN_SENSITIVITY | IN_TUNE },
	{ "--labels", CLI_FILE, ARG(labels), 0, 0, NULL,
	  IN_TRAIN | IN_EVAL | IN_LAPLACE | IN_CALIBRATE | IN_SENSITIVITY | IN_TUNE },
	{ "--target", CLI_TEXT, ARG(target), 0, 0, NULL,
	  IN_TRAIN | IN_EVAL | IN_PREDICT | IN_LAPLACE | IN_CALIBRATE | IN_SENSITIVITY | IN_TUNE },
	{ "--standardize", CLI_FLAG, ARG(standardize), 0, 0, NULL, IN_TRAIN | IN_TUNE },
	{ "--valid", CLI_FILE, ARG(valid), 0, 0, NULL, IN_TRAIN },
	{ "--valid-labels", CLI_FILE, ARG(valid_labels), 0, 0, NULL, IN_TRAIN },
	{ "--optimizer", CLI_TRAIN, 0, 0, 0, NULL, IN_TRAIN | IN_TUNE },
	{ "--lr", CLI_TRAIN, 0, 0, 0, NULL, IN_TRAIN | IN_TUNE },
	{ "--epochs", CLI_TRAIN, 0, 0, 0, NULL, IN_TRAIN },
	{ "--batch", CLI_TRAIN, 0, 0, 0, NULL,
	  IN_TRAIN | IN_EVAL | IN_PREDICT | IN_LAPLACE | IN_CALIBRATE | IN_TUNE },
	{ "--seed", CLI_TRAIN, 0, 0, 0, NULL,
	  IN_TRAIN | IN_EVAL | IN_PREDICT | IN_LAPLACE | IN_CALIBRATE | IN_TUNE },
	{ "--mc", CLI_TRAIN, 0, 0, 0, NULL, IN_TRAIN | IN_TUNE },
	{ "--mc", CLI_COUNT, ARG(mc), 0, 100000, "samples", IN_EVAL | IN_PREDICT | IN_CALIBRATE },
	{ "--ood", CLI_FILE, ARG(ood), 0, 0, NULL, IN_EVAL },
	{ "--ood-labels", CLI_FILE, ARG(ood_labels), 0, 0, NULL, IN_EVAL },
	{ "--plots", CLI_FILE, ARG(plots), 0, 0, NULL, IN_EVAL },
	{ "--conformal", CLI_FILE, ARG(conformal), 0, 0, NULL, IN_EVAL | IN_PREDICT },
	{ "--conformal-labels", CLI_FILE, ARG(conformal_labels), 0, 0, NULL, IN_EVAL | IN_PREDICT },
	{ "--level", CLI_TEXT, ARG(level), 0, 0, NULL, IN_EVAL | IN_PREDICT },
	{ "--conformal-method", CLI_TEXT, ARG(conformal_method), 0, 0, NULL, IN_EVAL | IN_PREDICT },
	{ "--conformal-adaptive", CLI_TEXT, ARG(conformal_adaptive), 0, 0, NULL, IN_EVAL },
	{ "--conformal-online", CLI_FLAG, ARG(conformal_online), 0, 0, NULL, IN_EVAL },
	{ "--threads", CLI_TRAIN, 0, 0, 0, NULL,
	  IN_TRAIN | IN_EVAL | IN_PREDICT | IN_LAPLACE | IN_CALIBRATE | IN_SENSITIVITY | IN_TUNE },
	{ "--set", CLI_SET, 0, 0, 0, NULL, IN_TRAIN | IN_TUNE },
	{ "--save", CLI_FILE, ARG(save), 0, 0, NULL,
	  IN_TRAIN | IN_LAPLACE | IN_CALIBRATE | IN_MERGE },
	{ "--load", CLI_FILE, ARG(load), 0, 0, NULL,
	  IN_EVAL | IN_PREDICT | IN_INFO | IN_POSTERIOR | IN_EXPORT | IN_LAPLACE | IN_CALIBRATE |
	          IN_SENSITIVITY | IN_TUNE },
	{ "--out", CLI_FILE, ARG(out), 0, 0, NULL,
	  IN_PREDICT | IN_POSTERIOR | IN_EXPORT | IN_SENSITIVITY | IN_TUNE },
	{ "--load", CLI_LOADS, 0, 0, 0, NULL, IN_MERGE },
	{ "--weights", CLI_TEXT, ARG(weights), 0, 0, NULL, IN_MERGE | IN_LAPLACE },
	{ "--members", CLI_COUNT, ARG(members), 1, BNN_MIXTURE_MAX, "members", IN_TRAIN },
	{ "-o", CLI_FILE, ARG(out), 0, 0, NULL, IN_EXPORT },
	{ "--storage", CLI_TEXT, ARG(storage), 0, 0, NULL, IN_EXPORT },
	{ "--rounded", CLI_FILE, ARG(rounded), 0, 0, NULL, IN_EXPORT },
	{ "--bins", CLI_COUNT, ARG(bins), 1, 100000, "bins", IN_EVAL },
	{ "--quiet", CLI_FLAG, ARG(quiet), 0, 0, NULL, IN_TRAIN },
	{ "--resume", CLI_FILE, ARG(resume), 0, 0, NULL, IN_TRAIN },
	{ "--init", CLI_FILE, ARG(init), 0, 0, NULL, IN_TRAIN },
	{ "--checkpoint-every", CLI_COUNT, ARG(checkpoint_every), 1, 1000000000, "epochs",
	  IN_TRAIN },
	{ "--prior-precision", CLI_TEXT, ARG(prior_precision), 0, 0, NULL, IN_LAPLACE },
	{ "--fisher", CLI_TEXT, ARG(fisher), 0, 0, NULL, IN_LAPLACE },
	{ "--fisher-samples", CLI_COUNT, ARG(fisher_samples), 1, 100000, "samples", IN_LAPLACE },
	{ "--last-layer", CLI_FLAG, ARG(last_layer), 0, 0, NULL, IN_LAPLACE },
	{ "--structure", CLI_TEXT, ARG(structure), 0, 0, NULL, IN_LAPLACE },
	{ "--laplace-predictive", CLI_TEXT, ARG(laplace_predictive), 0, 0, NULL,
	  IN_EVAL | IN_PREDICT },
	{ "--top", CLI_COUNT, ARG(top), 1, 1000000000, "examples", IN_SENSITIVITY },
	{ "--svg", CLI_FILE, ARG(svg), 0, 0, NULL, IN_SENSITIVITY },
	{ "--options", CLI_FILE, ARG(options), 0, 0, NULL, IN_TRAIN | IN_TUNE },
	{ "--budget", CLI_COUNT, ARG(budget), 1, 1000000, "epochs", IN_TUNE },
	{ "--trials", CLI_COUNT, ARG(trials), 1, 4096, "configurations", IN_TUNE },
	{ "--prior", CLI_FLAG, ARG(prior), 0, 0, NULL, IN_TUNE },
	{ "--ignore-header", CLI_FLAG, ARG(ignore_header), 0, 0, NULL,
	  IN_TRAIN | IN_EVAL | IN_PREDICT | IN_LAPLACE | IN_CALIBRATE | IN_SENSITIVITY | IN_TUNE },
};
#undef ARG
#define NCLI_OPTS ((int)(sizeof cli_opts / sizeof cli_opts[0]))

/* The row of name for the subcommand bit where; NULL when there is none,
 * *known telling whether the name exists for another subcommand. */
static const struct cli_opt *cli_find(const char *name, int where, int *known)
{
	int i;

	*known = 0;
	for (i = 0; i < NCLI_OPTS; i++) {
		if (strcmp(cli_opts[i].name, name) != 0)
			continue;
		*known = 1;
		if (cli_opts[i].where & where)
			return &cli_opts[i];
	}
	return NULL;
}

/* Sets the training option name to value (--lr, --set lr=...). */
static int cli_train_set(struct bnn_cli_args *a, const char *name, const char *value)
{
	bnn_err err;

	if (bnn_train_set(&a->train, name, value, &err))
		return bnn_cli_usage_error(a, "%s", err.message);
	return BNN_CLI_OK;
}

/* --set NAME=VALUE. */
static int cli_set(struct bnn_cli_args *a, const char *value)
{
	const char *eq = strchr(value, '=');
	char name[256];

	if (!eq || eq == value || eq - value >= (long)sizeof name)
		return bnn_cli_usage_error(a, "--set takes NAME=VALUE, not '%s'", value);
	memcpy(name, value, (size_t)(eq - value));
	name[eq - value] = '\0';
	return cli_train_set(a, name, eq + 1);
}

/* A CLI_COUNT option: a whole number in the row's range. */
static int cli_count(struct bnn_cli_args *a, const struct cli_opt *o, const char *value)
{
	long *field = (long *)(void *)((char *)a + o->field);
	char *end;

	*field = strtol(value, &end, 10);
	if (end == value || *end || *field < o->min || *field > o->max)
		return bnn_cli_usage_error(a, "%s: '%s' is not a number of %s in [%ld, %ld]",
		                           o->name, value, o->unit, o->min, o->max);
	return BNN_CLI_OK;
}

/* Applies one option (its row, and its value or NULL) to the arguments. */
static int cli_apply(struct bnn_cli_args *a, const struct cli_opt *o, const char *value)
{
	char *field = (char *)a + o->field;

	switch (o->kind) {
	case CLI_TEXT:
	case CLI_FILE:
		*(const char **)(void *)field = value;
		return BNN_CLI_OK;
	case CLI_FLAG:
		*(int *)(void *)field = 1;
		return BNN_CLI_OK;
	case CLI_COUNT:
		return cli_count(a, o, value);
	case CLI_TRAIN:
		return cli_train_set(a, o->name + 2, value); /* --lr: the option lr */
	case CLI_SET:
		return cli_set(a, value);
	case CLI_LOADS:
		if (a->nloads == BNN_CLI_MAX_LOADS)
			return bnn_cli_usage_error(a, "more than %d --load files",
			                           BNN_CLI_MAX_LOADS);
		a->loads[a->nloads++] = value;
		a->load = value; /* bnn_cli_check_outputs compares --save with it */
		return BNN_CLI_OK;
	}
	return BNN_CLI_OK;
}

/* "unknown option '--dta' for 'train'", with the closest option of the
 * command when one is close (the one "did you mean" rule,
 * common/edit_distance.h). */
static int cli_unknown_option(const struct bnn_cli_args *a, const char *name, int where)
{
	struct bnn_text_suggestion sug;
	int i;

	bnn_text_suggest_init(&sug, name, BNN_TEXT_EXACT_CASE);
	for (i = 0; i < NCLI_OPTS; i++)
		if (cli_opts[i].where & where)
			bnn_text_suggest_offer(&sug, cli_opts[i].name);
	if (sug.best)
		return bnn_cli_usage_error(a, "unknown option '%s' for '%s'; did you mean '%s'?",
		                           name, a->command, sug.best);
	return bnn_cli_usage_error(a, "unknown option '%s' for '%s'", name, a->command);
}

static int cli_parse(struct bnn_cli_args *a, int where, int argc, char **argv)
{
	int i, known, rc;

	for (i = 2; i < argc; i++) {
		const char *arg = argv[i], *value = NULL, *eq;
		const struct cli_opt *o;
		char name[64];

		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			if (a->rank == 0) /* under mpirun: printed once */
				cli_command_help(a->prog, cli_command_of(where));
			return -1; /* done: exit 0 */
		}
		if (strncmp(arg, "--", 2) != 0 && !(where == IN_EXPORT && strcmp(arg, "-o") == 0))
			return bnn_cli_usage_error(
			        a, "unexpected argument '%s' (options start with --)", arg);
		eq = strchr(arg, '=');
		snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
		o = cli_find(name, where, &known);
		if (!known)
			return cli_unknown_option(a, name, where);
		if (!o)
			return bnn_cli_usage_error(a, "option '%s' does not go with '%s'", name,
			                           a->command);
		if (o->kind != CLI_FLAG) {
			if (eq)
				value = eq + 1;
			else if (i + 1 < argc)
				value = argv[++i];
			else
				return bnn_cli_usage_error(a, "option '%s' needs a value", name);
			/* an unset shell variable ("--out $OUT"): a name, not a
			 * late "cannot write : ..." after the work is done */
			if (!*value && (o->kind == CLI_FILE || o->kind == CLI_LOADS))
				return bnn_cli_usage_error(
				        a, "option '%s' needs a value, not an empty string", name);
		} else if (eq) {
			return bnn_cli_usage_error(a, "option '%s' takes no value", name);
		}
		if ((rc = cli_apply(a, o, value)))
			return rc;
	}
	return BNN_CLI_OK;
}

/* cli_parse, and with --options FILE: the file's options, then the
 * command line's again over them (so the command line wins wherever it
 * stands).  A file that cannot be read is a file error, a bad line a usage
 * error ("FILE:LINE: ..."). */
static int cli_parse_all(struct bnn_cli_args *a, int where, int argc, char **argv)
{
	bnn_err err;
	int rc = cli_parse(a, where, argc, argv);

	if (rc || !a->options)
		return rc;
	a->train = bnn_train_defaults();
	if (bnn_train_options_read(&a->train, a->options, &err))
		return err.code == BNN_EIO ? bnn_cli_error(a, "%s", err.message)
		                           : bnn_cli_usage_error(a, "%s", err.message);
	return cli_parse(a, where, argc, argv);
}

/* Requires an option; returns a usage error naming it when absent. */
static int cli_need(const struct bnn_cli_args *a, const char *value, const char *name)
{
	if (value && *value)
		return BNN_CLI_OK;
	return bnn_cli_usage_error(a, "'%s' needs %s", a->command, name);
}

/* The parameters of the model's posterior: the parameter vector, plus a
 * standard deviation for every parameter of a meanfield layer (the
 * count bnnc --summary prints). */
static long cli_posterior_params(const bnn_model *m)
{
	long n = m->nparams;
	int i;

	for (i = 0; i < m->ntensors; i++)
		if (m->tensors[i].layer >= 0 &&
		    (m->layers[m->tensors[i].layer].caps & BNN_CAP_SIGMA))
			n += m->tensors[i].size;
	return n;
}

/* info: "columns x1, x2 (target y)", the names the checkpoint recorded
 * from its training CSV file (none: nothing). */
static void cli_info_columns(const char *text)
{
	struct bnn_cli_columns cols;
	long i;

	if (!text || bnn_cli_columns_parse(text, &cols))
		return;
	printf("columns ");
	for (i = 0; i < cols.nfeatures; i++)
		printf("%s%s", i ? ", " : "", cols.features[i]);
	printf(" (target %s)\n", cols.target);
	bnn_cli_columns_free(&cols);
}

/* What `info` says of the model itself. */
static void cli_info_model(const bnn_model *m)
{
	int i;

	printf("model %s\n", m->name);
	printf("source %s (bnnc %s)\n", m->source, m->bnnc_version);
	printf("fingerprint %016llx\n", (unsigned long long)m->fingerprint);
	printf("likelihood %s (target %s)\n", bnn_likelihood_name(m->likelihood), m->target_name);
	printf("inputs %ld, outputs %ld, parameters %ld\n", m->inputs, m->outputs, m->nparams);
	for (i = 0; i < m->ntensors; i++) {
		printf("  %-24s offset %-9ld size %ld", m->tensors[i].name, m->tensors[i].offset,
		       m->tensors[i].size);
		if (m->tensors[i].components > 1)
			printf(" (%d components)", m->tensors[i].components);
		printf("\n");
	}
	if (m->nstats > 0)
		printf("running statistics %ld (batchnorm)\n", m->nstats);
	printf("posterior parameters %ld\n", cli_posterior_params(m));
}

/* What `info --load` says of the checkpoint at path, loaded as mix. */
static void cli_info_checkpoint(const bnn_mixture *mix, const char *path)
{
	int k;

	if (mix->members > 1)
		printf("checkpoint %s: a mixture of %d networks (docs/ensembles.md)\n", path,
		       mix->members);
	for (k = 0; k < mix->members; k++) {
		const bnn_state *st = &mix->member[k];
		if (mix->members > 1)
			printf("member %d", k + 1);
		else
			printf("checkpoint %s", path);
		printf(": optimizer %s, %ld epoch%s, %ld step%s%s%s",
		       bnn_optimizer_name(st->optimizer), st->epoch, st->epoch == 1 ? "" : "s",
		       st->step, st->step == 1 ? "" : "s",
		       st->standardize.features ? ", standardised inputs" : "",
		       st->sigma ? ", with a posterior" : "");
		if (st->temperature > 0) /* calibrate's (docs/calibration.md) */
			printf(", temperature %.9g", st->temperature);
		printf("\n");
		if (st->options)
			printf("options %s\n", st->options);
	}
	cli_info_columns(mix->member[0].columns);
}

/* The checkpoint is loaded before anything is printed: one that cannot be
 * read gives its message alone, not half of the output before it. */
static int cli_info(const bnn_model *m, struct bnn_cli_args *a)
{
	bnn_mixture mix;
	bnn_err err;

	if (a->load && bnn_mixture_load(&mix, m, a->load, &err))
		return bnn_cli_error(a, "%s", err.message);
	cli_info_model(m);
	if (a->load) {
		cli_info_checkpoint(&mix, a->load);
		bnn_mixture_free(&mix);
	}
	return BNN_CLI_OK;
}

static int cli_run(const bnn_model *m, int argc, char **argv);
static int cli_dispatch(const bnn_model *m, struct bnn_cli_args *a, int where, int rc,
                        struct bnn_cli_columns *cols);

/* The target column(s) of --data when --target is not given and the
 * header is read (docs/data.md): the column(s) the checkpoint recorded
 * from training (recorded, NULL without), else the column named as the
 * model's target (`y` of `y ~ ...`), wherever each stands in the file,
 * when --data has it; else a->target stays NULL: the last column(s). */
static void cli_default_target(struct bnn_cli_args *a, const char *recorded)
{
	const bnn_model *m = a->model;

	if (a->target || a->ignore_header || !a->data)
		return;
	if (recorded && bnn_cli_has_columns(m, a->data, recorded))
		a->target = recorded;
	else if (m->targets == 1 && bnn_cli_has_columns(m, a->data, m->target_name))
		a->target = m->target_name;
	a->target_chosen = a->target != NULL;
}

/* The target of --data (cli_default_target) and, with --load (or train's
 * --resume) of a checkpoint of this model that recorded its training CSV
 * file's column names (the section "columns", docs/data.md), unless
 * --ignore-header: the feature columns of every CSV input (--data, --ood,
 * --conformal) must have the recorded names in the recorded order, so
 * that a reordered or other file is not scored silently.  A checkpoint
 * that cannot be read is left to the command.  0, or the exit status
 * after a message; cols receives the names (a->target may point into
 * them). */
static int cli_recorded_columns(struct bnn_cli_args *a, struct bnn_cli_columns *cols)
{
	const char *ckpt = a->load ? a->load : a->resume;
	const char *inputs[] = { a->data, a->ood, a->conformal };
	const char *text;
	bnn_ckpt *ck = NULL;
	bnn_err err;
	int i, named = 0, rc = BNN_CLI_OK;

	if (ckpt && !a->ignore_header && (a->data || a->ood || a->conformal) &&
	    !bnn_ckpt_load(ckpt, &ck, &err)) {
		text = bnn_ckpt_fingerprint(ck) == a->model->fingerprint
		               ? bnn_ckpt_find_text(ck, "columns")
		               : NULL;
		named = text != NULL;
		if (named && bnn_cli_columns_parse(text, cols))
			rc = bnn_cli_error(a, "out of memory");
		bnn_ckpt_free(ck);
	}
	if (rc)
		return rc;
	cli_default_target(a, named ? cols->target : NULL);
	if (!named)
		return BNN_CLI_OK;
	for (i = 0; i < (int)(sizeof inputs / sizeof inputs[0]); i++)
		if (bnn_cli_check_columns(a->model, inputs[i], a->target, cols, &err))
			return bnn_cli_error(
			        a,
			        "%s: %s was trained on these columns: put them in this "
			        "order, or give --ignore-header to take them by position",
			        err.message, ckpt);
	return BNN_CLI_OK;
}

/* train's checks before any work: the files it writes, the options it
 * needs.  0, or the exit status after a message. */
static int cli_train_checks(struct bnn_cli_args *a)
{
	bnn_err err;
	int rc;

	if ((rc = bnn_cli_check_outputs(a)) || (rc = cli_need(a, a->data, "--data FILE")) ||
	    (rc = cli_need(a, a->save, "--save CKPT")))
		return rc;
	if (a->valid_labels && !a->valid)
		return bnn_cli_usage_error(a, "--valid-labels goes with --valid");
	if (a->resume && a->init)
		return bnn_cli_usage_error(a, "--resume continues a run and --init starts a new "
		                              "one: give one of them");
	if (a->members > 1 && a->resume)
		return bnn_cli_usage_error(a,
		                           "--resume continues one run, and --members %ld trains "
		                           "%ld: a mixture is not resumed",
		                           a->members, a->members);
	if (a->members > 1 && a->checkpoint_every)
		return bnn_cli_usage_error(a, "--checkpoint-every saves one run as it goes: with "
		                              "--members, --save is written after each member");
	if (a->resume && a->ranks > 1)
		return bnn_cli_usage_error(a,
		                           "--resume runs on one process, not on %d: resume "
		                           "without mpirun",
		                           a->ranks);
	if (bnn_train_options_check_model(&a->train, a->model, a->valid != NULL, &err))
		return bnn_cli_usage_error(a, "%s", err.message);
	return BNN_CLI_OK;
}

/* Every command's results go to stdout: a failed write (a full disk, a
 * closed pipe) is an error of the command.  A command that failed has
 * said why already (predict and posterior name a failed write to "-"). */
int bnn_cli_main(const bnn_model *m, int argc, char **argv)
{
	const char *prog = argc > 0 && argv[0] ? argv[0] : m->name;
	bnn_err err;
	/* started by mpirun (and built --with-mpi): MPI for the whole run */
	int mpi = bnn_dist_init(&argc, &argv, &err), rc;

	if (mpi < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.message);
		return BNN_CLI_FAIL;
	}
	rc = cli_run(m, argc, argv);
	errno = 0;
	if (rc == BNN_CLI_OK && (fflush(stdout) != 0 || ferror(stdout))) {
		fprintf(stderr, "%s: error writing standard output%s%s\n", prog, errno ? ": " : "",
		        errno ? strerror(errno) : "");
		rc = BNN_CLI_FAIL;
	}
	if (mpi)
		bnn_dist_finalize();
	return rc;
}

/* Under mpirun with more than one process, a command that does not share
 * its work is refused rather than run N times (N copies of its output, N
 * processes writing the same file). */
static int cli_one_process(const struct bnn_cli_args *a, int where)
{
	if (a->ranks <= 1 || (where & IN_DISTRIBUTED))
		return 0;
	return bnn_cli_usage_error(a, "%s runs on one process, not on %d: run it without mpirun",
	                           a->command, a->ranks);
}

/* The command of argv, from its arguments a (a->prog, a->rank and
 * a->ranks set): its exit status, after a message. */
static int cli_command(const bnn_model *m, struct bnn_cli_args *a, int argc, char **argv)
{
	bnn_err err;
	char list[128];
	struct bnn_cli_columns cols;
	int where, rc, i;

	a->train = bnn_train_defaults();
	a->bins = 0; /* eval: BNN_DEFAULT_BINS unless --bins (cli_dispatch) */
	a->mc = -1;  /* eval, predict: 32 for a stochastic model, else 0 */
	if (bnn_model_check(m, &err))
		return bnn_cli_error(a, "%s", err.message);
	if (argc < 2)
		return bnn_cli_usage_error(a, "no command given: use %s",
		                           cli_command_list(list, sizeof list));
	a->command = argv[1];
	if (strcmp(a->command, "--help") == 0 || strcmp(a->command, "-h") == 0 ||
	    strcmp(a->command, "help") == 0) {
		if (a->rank == 0) /* under mpirun: printed once */
			cli_help(m, a->prog);
		return BNN_CLI_OK;
	}
	if (strcmp(a->command, "--version") == 0 || strcmp(a->command, "-V") == 0) {
		if (a->rank == 0)
			printf("%s (model %s, bnnc %s, libbnn %s)\n", a->prog, m->name,
			       m->bnnc_version, bnn_version());
		return BNN_CLI_OK;
	}
	where = 0;
	for (i = 0; i < NCLI_COMMANDS; i++)
		if (strcmp(a->command, cli_commands[i].name) == 0)
			where = cli_commands[i].bit;
	if (!where)
		return cli_unknown_command(a, list, sizeof list);
	a->model = m;
	rc = cli_parse_all(a, where, argc, argv);
	if (rc < 0)
		return BNN_CLI_OK;
	if (!rc)
		rc = cli_one_process(a, where);
	memset(&cols, 0, sizeof cols);
	rc = cli_dispatch(m, a, where, rc, &cols);
	bnn_cli_columns_free(&cols);
	return rc;
}

/* Every command, every way it ends, reaches bnn_cli_finish: under mpirun
 * rank 0 prints the message of a rank that failed on its own. */
static int cli_run(const bnn_model *m, int argc, char **argv)
{
	struct bnn_cli_args a;
	struct bnn_cli_said said;

	memset(&a, 0, sizeof a);
	memset(&said, 0, sizeof said);
	a.prog = argc > 0 && argv[0] ? argv[0] : m->name;
	a.rank = bnn_dist_rank(NULL);
	a.ranks = bnn_dist_size(NULL);
	a.said = &said;
	return bnn_cli_finish(&a, cli_command(m, &a, argc, argv));
}

/* Runs the command `where` of the parsed arguments a (rc: the parsing's
 * status); cols receives the checkpoint's recorded column names, for the
 * caller to free. */
static int cli_dispatch(const bnn_model *m, struct bnn_cli_args *a, int where, int rc,
                        struct bnn_cli_columns *cols)
{
	char weights[BNN_ERR_MESSAGE_MAX];

	if (where == IN_TRAIN) { /* every rank's command line and --save checked */
		if (!rc && !(rc = cli_train_checks(a)))
			rc = cli_recorded_columns(a, cols);
		if ((rc = bnn_cli_agree(a, rc)))
			return rc;
		return bnn_cli_train(m, a);
	}
	if (!rc)
		rc = cli_recorded_columns(a, cols);
	if (where == IN_TUNE)
		return rc ? rc : bnn_cli_tune(m, a);
	if (rc)
		return rc;
	if (where == IN_INFO)
		return cli_info(m, a);
	if (where == IN_EXPORT && !a->out) {
		snprintf(weights, sizeof weights, "%s_infer_weights.h", m->name);
		a->out = weights;
	}
	if ((rc = bnn_cli_check_outputs(a)))
		return rc;
	if (where == IN_EXPORT) {
		if ((rc = cli_need(a, a->load, "--load CKPT")))
			return rc;
		return bnn_cli_export(m, a);
	}
	if (where == IN_LAPLACE) {
		if ((rc = cli_need(a, a->load, "--load CKPT")) ||
		    (rc = cli_need(a, a->data, "--data FILE")) ||
		    (rc = cli_need(a, a->save, "--save CKPT")))
			return rc;
		bnn_set_threads(a->train.threads);
		return bnn_cli_laplace(m, a);
	}
	if (where == IN_MERGE)
		return bnn_cli_merge(m, a);
	if (where == IN_POSTERIOR) {
		if ((rc = cli_need(a, a->load, "--load CKPT")))
			return rc;
		return bnn_cli_posterior(m, a);
	}
	if (where == IN_SENSITIVITY) {
		if ((rc = cli_need(a, a->load, "--load CKPT")) ||
		    (rc = cli_need(a, a->data, "--data FILE")))
			return rc;
		bnn_set_threads(a->train.threads);
		return bnn_cli_sensitivity(m, a);
	}
	if ((rc = cli_need(a, a->data, "--data FILE")))
		return rc;
	if ((rc = cli_need(a, a->load, "--load CKPT")))
		return rc;
	if (a->ood_labels && !a->ood)
		return bnn_cli_usage_error(a, "--ood-labels goes with --ood");
	if (a->bins && bnn_likelihood_regression(m))
		return bnn_cli_usage_error(a,
		                           "--bins sets the bins of ECE and MCE, which model '%s' "
		                           "(a regression) does not have",
		                           m->name);
	if (!a->bins)
		a->bins = BNN_DEFAULT_BINS;
	bnn_set_threads(a->train.threads);
	if (where == IN_CALIBRATE) {
		if ((rc = cli_need(a, a->save, "--save CKPT")))
			return rc;
		return bnn_cli_calibrate(m, a);
	}
	return where == IN_EVAL ? bnn_cli_eval(m, a) : bnn_cli_predict(m, a);
}
