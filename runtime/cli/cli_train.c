/*
 * cli_train.c: `MODEL train`.  Loads the training (and validation) data,
 * standardises it if asked, trains with the options given, and saves the
 * checkpoint as training goes (bnn_train saves after every improving
 * epoch, atomically).  Progress goes to stderr: a line per epoch, and on a
 * terminal a live line within the epoch; the final summary is one JSON line
 * on stdout.  Under mpirun (docs/distributed.md) every rank loads the same
 * data and the ranks agree on the loading's status, so a bad file on one
 * rank stops them all, and rank 0 prints its message (bnn_cli_agree);
 * rank 0 alone reports progress, prints the summary and writes the
 * checkpoint.
 *
 * --resume CKPT continues the run that wrote CKPT (its state, streams and
 * early stopping: bnn_train_io.resume) with the options it was trained
 * with: only epochs (the run's total) and threads may change, and
 * --standardize must be given as it was (the statistics stored in CKPT
 * are reused).  --init CKPT starts a new run from CKPT's parameters
 * (bnn_state_warm_start).  --members K trains K networks, member k with
 * seed S + k, saved together as a mixture (bnn_mixture_save;
 * docs/ensembles.md).  The checkpoint records the names of the training
 * CSV file's columns (bnn_state.columns), and a --valid CSV file must have
 * the same feature names in the same order (unless --ignore-header).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_internal.h"

struct cli_progress {
	int tty; /* stderr is a terminal: live progress line */
	int quiet;
	int validating;        /* the run has validation data: each epoch prints its
	                   NLL, even when that is not finite */
	bnn_epoch_report last; /* the last epoch */
	bnn_epoch_report best; /* the best epoch (with validation data) */
	long epochs_done;
};

static int cli_on_epoch(const bnn_epoch_report *r, void *ctx)
{
	struct cli_progress *p = ctx;

	if (p->quiet)
		goto done;
	if (!r->final) {
		if (p->tty)
			fprintf(stderr, "\repoch %ld/%ld %3.0f%%  loss %.4f  %.0f examples/s ",
			        r->epoch, r->epochs, 100.0 * (double)r->step / (double)r->steps,
			        r->train_loss, r->examples_per_second);
		return 0;
	}
	fprintf(stderr, "%sepoch %ld/%ld  loss %.4f", p->tty ? "\r\033[K" : "", r->epoch, r->epochs,
	        r->train_loss);
	if (p->validating && isnan(r->valid_nll)) /* "nan", never "-nan" */
		fputs("  valid nll nan", stderr);
	else if (p->validating)
		fprintf(stderr, "  valid nll %.4f", r->valid_nll);
	if (!isnan(r->valid_accuracy))
		fprintf(stderr, "  valid accuracy %.4f", r->valid_accuracy);
	if (!isnan(r->loo_nll))
		fprintf(stderr, "  loo nll %.4f", r->loo_nll);
	fprintf(stderr, "  lr %.3g  %.0f examples/s  %.1f s%s\n", r->lr, r->examples_per_second,
	        r->seconds, r->improved && !isnan(r->valid_nll) ? "  (best)" : "");
done:
	if (r->final) {
		p->last = *r;
		p->epochs_done = r->epoch;
		if (r->improved && !isnan(r->valid_nll))
			p->best = *r;
	}
	return 0;
}

/* The settings of the run, before its first epoch. */
static void cli_on_start(const char *settings, void *ctx)
{
	const struct cli_progress *p = ctx;

	if (!p->quiet)
		fprintf(stderr, "%s\n", settings);
}

/* After a divergence: what the checkpoint holds (bnn_train saved the run's
 * last good epoch, or the best with validation data, if one completed). */
static void cli_report_divergence(const struct bnn_cli_args *a, const struct cli_progress *p)
{
	if (p->epochs_done == 0)
		fprintf(stderr, "%s: %s was not written: no epoch completed\n", a->prog, a->save);
	else if (p->best.epoch > 0)
		fprintf(stderr, "%s: %s holds epoch %ld, the best on the validation data\n",
		        a->prog, a->save, p->best.epoch);
	else
		fprintf(stderr, "%s: %s holds epoch %ld, the last good one\n", a->prog, a->save,
		        p->epochs_done);
}

/* Loads one data set for training, reporting errors; 0 or BNN_CLI_FAIL. */
static int cli_train_load(const bnn_model *m, struct bnn_cli_args *a, const char *data,
                          const char *labels, bnn_dataset *ds)
{
	bnn_err err;
	if (bnn_cli_load(m, a, data, labels, 1, ds, &err))
		return bnn_cli_error(a, "%s", err.message);
	return BNN_CLI_OK;
}

/* --valid FILE, whose CSV columns must have the training file's names in
 * its order (unless --ignore-header), as later data must have them. */
static int cli_train_valid(const bnn_model *m, struct bnn_cli_args *a, const bnn_dataset *train,
                           bnn_dataset *valid)
{
	struct bnn_cli_columns cols;
	char *text = a->ignore_header ? NULL : bnn_cli_columns_text(train);
	bnn_err err;
	int rc = BNN_CLI_OK;

	if (text && bnn_cli_columns_parse(text, &cols) == BNN_OK) {
		if (bnn_cli_check_columns(m, a->valid, a->target ? a->target : cols.target, &cols,
		                          &err))
			rc = bnn_cli_error(
			        a,
			        "%s: the training data --data has these columns: put them "
			        "in this order, or give --ignore-header to take them by "
			        "position",
			        err.message);
		bnn_cli_columns_free(&cols);
	}
	free(text);
	return rc ? rc : cli_train_load(m, a, a->valid, a->valid_labels, valid);
}

/* The checkpoint records the training CSV file's column names
 * (bnn_state.columns), for the commands that read data with it later. */
static int cli_train_columns(struct bnn_cli_args *a, const bnn_dataset *train, bnn_state *st)
{
	free(st->columns);
	st->columns = NULL;
	if (!train->columns)
		return BNN_CLI_OK; /* IDX data */
	if (!(st->columns = bnn_cli_columns_text(train)))
		return bnn_cli_error(a, "out of memory");
	return BNN_CLI_OK;
}

/* The next option of an options text ("name=value" words), skipping
 * epochs, which a resumed run may change; NULL at the end. */
static const char *cli_next_option(const char *p, int *len)
{
	for (;;) {
		while (*p == ' ')
			p++;
		if (!*p)
			return NULL;
		*len = (int)strcspn(p, " ");
		if (strncmp(p, "epochs=", 7) != 0)
			return p;
		p += *len;
	}
}

/* Whether the option word w ("name=value", len bytes) is the trainer's
 * default, so that a refusal can say the command did not choose it. */
static int cli_option_is_default(const char *w, int len)
{
	bnn_train_options d = bnn_train_defaults();
	char *text = bnn_train_options_text(&d);
	const char *p = text;
	int lp = 0, found = 0;

	while (text && !found && (p = cli_next_option(p, &lp)) != NULL) {
		found = lp == len && strncmp(p, w, (size_t)len) == 0;
		p += lp;
	}
	free(text);
	return found;
}

/* --resume: the options of this command against those the run was
 * trained with, word by word (bnn_train_options_text); the first that
 * differs is named, and said to be the default when it is. */
static int cli_resume_options(struct bnn_cli_args *a, const char *trained)
{
	char *given = bnn_train_options_text(&a->train);
	const char *p = trained ? trained : "", *q = given;
	int lp = 0, lq = 0, rc = BNN_CLI_OK;

	if (!given)
		return bnn_cli_error(a, "out of memory");
	for (;;) {
		p = cli_next_option(p, &lp);
		q = cli_next_option(q, &lq);
		if (!p && !q)
			break;
		if (!p || !q || lp != lq || strncmp(p, q, (size_t)lp) != 0) {
			rc = bnn_cli_error(
			        a,
			        "%s: cannot resume with other options: the run was trained "
			        "with %.*s, and this command gives %.*s%s (only --epochs and "
			        "--threads may change on resume)",
			        a->resume, p ? lp : 7, p ? p : "nothing", q ? lq : 7,
			        q ? q : "nothing",
			        q && cli_option_is_default(q, lq) ? ", the default" : "");
			break;
		}
		p += lp;
		q += lq;
	}
	free(given);
	return rc;
}

/* --resume CKPT: the state of the run and where it stood, if this command
 * may continue it. */
static int cli_resume_load(const bnn_model *m, struct bnn_cli_args *a, bnn_state *st)
{
	bnn_err err;
	long done;
	int rc;

	if (bnn_state_load(st, m, a->resume, &err))
		return bnn_cli_error(a, "%s", err.message);
	if (!st->progress)
		return bnn_cli_error(a,
		                     "%s: cannot resume: the checkpoint has no training progress "
		                     "(section 'resume'; an older libbnn wrote it, or its run "
		                     "diverged or was stopped within an epoch): start a new run "
		                     "from its parameters with --init %s",
		                     a->resume, a->resume);
	if (a->standardize != (st->standardize.features > 0))
		return bnn_cli_error(a,
		                     "%s: cannot resume with other options: the run was trained "
		                     "%s --standardize, and this command %s",
		                     a->resume, a->standardize ? "without" : "with",
		                     a->standardize ? "gives it" : "does not");
	if ((rc = cli_resume_options(a, st->options)))
		return rc;
	done = bnn_train_progress_epoch(st->progress);
	if (a->train.epochs <= done)
		return bnn_cli_error(
		        a,
		        "%s: the run has completed %ld epochs already, and --epochs is "
		        "%ld: give the total number of epochs, more than %ld, to train "
		        "further",
		        a->resume, done, a->train.epochs, done);
	return BNN_CLI_OK;
}

/* The state a run starts from: a fresh one (from --init CKPT's
 * parameters), or --resume CKPT's. */
static int cli_train_state(const bnn_model *m, struct bnn_cli_args *a, bnn_state *st)
{
	bnn_err err;

	if (a->resume)
		return cli_resume_load(m, a, st);
	if (bnn_state_init(st, m, a->train.seed, &err) ||
	    (a->init && bnn_state_warm_start(st, a->init, &err)))
		return bnn_cli_error(a, "%s", err.message);
	return BNN_CLI_OK;
}

/* --standardize: statistics from the training data, or a resumed run's. */
static int cli_train_standardize(const bnn_model *m, struct bnn_cli_args *a, bnn_state *st,
                                 bnn_dataset *train, bnn_dataset *valid)
{
	bnn_err err;

	if (!a->standardize)
		return BNN_CLI_OK;
	if (m->input_vocab > 0) /* scaled ids would be no ids at all */
		return bnn_cli_error(
		        a,
		        "--standardize scales real inputs, but model '%s' reads integer "
		        "ids ('%s')",
		        m->name, m->input_name);
	if ((!a->resume && bnn_standardizer_fit(train, &st->standardize, &err)) ||
	    bnn_standardizer_apply(&st->standardize, train, &err) ||
	    (a->valid && bnn_standardizer_apply(&st->standardize, valid, &err)))
		return bnn_cli_error(a, "%s", err.message);
	return BNN_CLI_OK;
}

/* The summary of one run on stdout (rank 0), after a "member": K field
 * for a member of a mixture. */
static void cli_train_summary(const struct bnn_cli_args *a, const struct cli_progress *progress,
                              long member)
{
	printf("{");
	if (member > 0)
		printf("\"member\": %ld, \"members\": %ld, \"seed\": %llu, ", member, a->members,
		       (unsigned long long)bnn_mixture_member_seed(a->train.seed, (int)member - 1));
	printf("\"epochs\": %ld, \"train_loss\": %.6g", progress->epochs_done,
	       progress->last.train_loss);
	if (!isnan(progress->last.valid_nll))
		printf(", \"valid_nll\": %.6g, \"best_epoch\": %ld, \"best_valid_nll\": %.6g",
		       progress->last.valid_nll, progress->best.epoch, progress->best.valid_nll);
	if (!isnan(progress->best.valid_accuracy) && progress->best.epoch > 0)
		printf(", \"best_valid_accuracy\": %.6g", progress->best.valid_accuracy);
	if (progress->epochs_done > 0 && !isnan(progress->last.loo_nll))
		printf(", \"loo_nll\": %.6g", progress->last.loo_nll);
	printf(", \"examples_per_second\": %.0f", progress->last.examples_per_second);
	bnn_cli_json_string("checkpoint", a->save);
	printf("}\n");
}

/* bnn_train's message msg, as rank 0 prints it.  Under mpirun every rank
 * has the same one, the agreement's (bnn_dist_agree: "rank R of N: " and
 * the message of the lowest failed rank R); the driver names R only when
 * it is not rank 0, as its own agreements do (bnn_cli_agree). */
static const char *cli_train_message(const struct bnn_cli_args *a, const char *msg)
{
	char own[32];
	int n = snprintf(own, sizeof own, "rank 0 of %d: ", a->ranks);

	return a->ranks > 1 && strncmp(msg, own, (size_t)n) == 0 ? msg + n : msg;
}

/* Trains st (initialised) with options o: 0, or the exit status after a
 * message.  checkpoint: where bnn_train saves (NULL: nowhere). */
static int cli_train_run(struct bnn_cli_args *a, bnn_state *st, const bnn_train_options *o,
                         bnn_dataset *train, bnn_dataset *valid, const char *checkpoint,
                         struct cli_progress *progress)
{
	bnn_err err;
	int code;

	progress->validating = (a->valid && valid->n > 0) || o->valid_fraction > 0;
	code = bnn_train(st,
	                 &(bnn_train_io){ .train = train,
	                                  .valid = a->valid ? valid : NULL,
	                                  .checkpoint = checkpoint,
	                                  .resume = a->resume != NULL,
	                                  .checkpoint_every = a->checkpoint_every,
	                                  .on_epoch = cli_on_epoch,
	                                  .on_start = cli_on_start,
	                                  .ctx = progress },
	                 o, &err);

	if (!code)
		return BNN_CLI_OK;
	if (progress->tty && !a->quiet)
		fputc('\n', stderr);
	bnn_cli_error(a, "%s", cli_train_message(a, err.message));
	if (code == BNN_ERANGE && a->rank == 0 && checkpoint)
		cli_report_divergence(a, progress);
	return BNN_CLI_FAIL;
}

/* --members K: member 1 is st, the run `train` alone makes; member k is
 * trained the same way from seed S + k − 1 (its initial parameters, data
 * order and noise), on the data standardised once.  After each member,
 * --save holds the mixture of the members trained so far. */
static int cli_train_members(const bnn_model *m, struct bnn_cli_args *a, bnn_state *st,
                             bnn_dataset *train, bnn_dataset *valid)
{
	bnn_mixture mix;
	bnn_err err;
	int k, rc = BNN_CLI_OK;

	mix.members = 0;
	mix.member = calloc((size_t)a->members, sizeof *mix.member);
	/* every rank's agreements below are the same: a failure on one rank
	 * stops all of them (bnn_cli_agree), none waits in bnn_train */
	if ((rc = bnn_cli_agree(a, mix.member ? BNN_CLI_OK : bnn_cli_error(a, "out of memory")))) {
		bnn_mixture_free(&mix);
		return rc;
	}
	for (k = 0; k < a->members && !rc; k++) {
		bnn_train_options o = a->train;
		struct cli_progress progress;
		memset(&progress, 0, sizeof progress);
		progress.tty = isatty(2);
		progress.quiet = a->quiet || a->rank > 0;
		o.seed = bnn_mixture_member_seed(a->train.seed, k);
		if (k == 0) {
			mix.member[0] = *st; /* the mixture owns it now */
			memset(st, 0, sizeof *st);
			mix.members = 1;
		} else if (bnn_state_init(&mix.member[k], m, o.seed, &err)) {
			rc = bnn_cli_error(a, "%s", err.message);
		} else {
			mix.members = k + 1; /* the mixture frees it */
			if ((a->init && bnn_state_warm_start(&mix.member[k], a->init, &err)) ||
			    bnn_standardizer_copy(&mix.member[0].standardize,
			                          &mix.member[k].standardize, &err))
				rc = bnn_cli_error(a, "%s", err.message);
		}
		if ((rc = bnn_cli_agree(a, rc))) /* every rank's member k set up */
			break;
		if (!progress.quiet)
			fprintf(stderr, "member %d/%ld (seed %llu)\n", k + 1, a->members,
			        (unsigned long long)o.seed);
		if ((rc = cli_train_run(a, &mix.member[k], &o, train, valid, NULL, &progress)))
			break;
		if (a->rank == 0 && bnn_mixture_save(&mix, a->save, &err))
			rc = bnn_cli_error(a, "%s", err.message);
		if ((rc = bnn_cli_agree(a, rc)))
			break;
		if (a->rank == 0)
			cli_train_summary(a, &progress, k + 1);
	}
	if (rc && a->rank == 0 && k > 0)
		fprintf(stderr, "%s: %s holds the mixture of the first %d members\n", a->prog,
		        a->save, k);
	bnn_mixture_free(&mix);
	return rc;
}

int bnn_cli_train(const bnn_model *m, struct bnn_cli_args *a)
{
	bnn_dataset train, valid;
	bnn_state st;
	struct cli_progress progress;
	int rc = BNN_CLI_FAIL;

	memset(&train, 0, sizeof train);
	memset(&valid, 0, sizeof valid);
	memset(&st, 0, sizeof st);
	memset(&progress, 0, sizeof progress);
	progress.tty = isatty(2);
	progress.quiet = a->quiet || a->rank > 0;
	rc = cli_train_load(m, a, a->data, a->labels, &train);
	if (!rc && a->valid)
		rc = cli_train_valid(m, a, &train, &valid);
	if (!rc)
		rc = cli_train_state(m, a, &st);
	if (!rc)
		rc = cli_train_columns(a, &train, &st);
	if (!rc)
		rc = cli_train_standardize(m, a, &st, &train, &valid);
	if ((rc = bnn_cli_agree(a, rc))) /* every rank's data loaded */
		goto done;
	if (a->members > 1) {
		rc = cli_train_members(m, a, &st, &train, &valid);
		goto done;
	}
	if ((rc = cli_train_run(a, &st, &a->train, &train, &valid, a->save, &progress)))
		goto done;
	if (a->rank == 0)
		cli_train_summary(a, &progress, 0);
	rc = BNN_CLI_OK; /* bnn_cli_main checks that stdout was written */
done:
	bnn_dataset_free(&train);
	bnn_dataset_free(&valid);
	bnn_state_free(&st);
	return rc;
}
