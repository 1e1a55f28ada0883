/*
 * cli_train.c: `MODEL train`.  Loads the training (and validation) data,
 * standardises it if asked, trains with the options given, and saves the
 * checkpoint as training goes (bnn_train saves after every improving
 * epoch, atomically).  Progress goes to stderr: a line per epoch, and on a
 * terminal a live line within the epoch; the final summary is one JSON line
 * on stdout.  Under mpirun (docs/distributed.md) every rank loads the same
 * data and the ranks agree on the loading's status, so a bad file on one
 * rank stops them all with its message; rank 0 alone reports progress,
 * prints the summary and writes the checkpoint.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli_internal.h"

struct cli_progress {
	int tty; /* stderr is a terminal: live progress line */
	int quiet;
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
	if (!isnan(r->valid_nll))
		fprintf(stderr, "  valid nll %.4f", r->valid_nll);
	if (!isnan(r->valid_accuracy))
		fprintf(stderr, "  valid accuracy %.4f", r->valid_accuracy);
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
	if (bnn_cli_load(m, data, labels, a->target, 1, ds, &err))
		return bnn_cli_error(a, "%s", err.message);
	return BNN_CLI_OK;
}

int bnn_cli_train(const bnn_model *m, struct bnn_cli_args *a)
{
	bnn_dataset train, valid;
	bnn_state st;
	bnn_err err;
	struct cli_progress progress;
	int rc = BNN_CLI_FAIL, code;

	memset(&train, 0, sizeof train);
	memset(&valid, 0, sizeof valid);
	memset(&st, 0, sizeof st);
	memset(&progress, 0, sizeof progress);
	progress.tty = isatty(2);
	progress.quiet = a->quiet || a->rank > 0;
	rc = cli_train_load(m, a, a->data, a->labels, &train);
	if (!rc && a->valid)
		rc = cli_train_load(m, a, a->valid, a->valid_labels, &valid);
	if (!rc && bnn_state_init(&st, m, a->train.seed, &err))
		rc = bnn_cli_error(a, "%s", err.message);
	if (!rc && a->standardize) {
		if (bnn_standardizer_fit(&train, &st.standardize, &err) ||
		    bnn_standardizer_apply(&st.standardize, &train, &err) ||
		    (a->valid && bnn_standardizer_apply(&st.standardize, &valid, &err)))
			rc = bnn_cli_error(a, "%s", err.message);
	}
	if ((rc = bnn_cli_agree(a, rc))) /* every rank's data loaded */
		goto done;
	rc = BNN_CLI_FAIL;
	code = bnn_train(&st,
	                 &(bnn_train_io){ .train = &train,
	                                  .valid = a->valid ? &valid : NULL,
	                                  .checkpoint = a->save,
	                                  .on_epoch = cli_on_epoch,
	                                  .ctx = &progress },
	                 &a->train, &err);
	if (code) {
		if (progress.tty && !a->quiet)
			fputc('\n', stderr);
		bnn_cli_error(a, "%s", err.message);
		if (code == BNN_ERANGE && a->rank == 0)
			cli_report_divergence(a, &progress);
		goto done;
	}
	if (a->rank > 0) {
		rc = BNN_CLI_OK;
		goto done;
	}
	printf("{\"epochs\": %ld, \"train_loss\": %.6g", progress.epochs_done,
	       progress.last.train_loss);
	if (!isnan(progress.last.valid_nll))
		printf(", \"valid_nll\": %.6g, \"best_epoch\": %ld, \"best_valid_nll\": %.6g",
		       progress.last.valid_nll, progress.best.epoch, progress.best.valid_nll);
	if (!isnan(progress.best.valid_accuracy) && progress.best.epoch > 0)
		printf(", \"best_valid_accuracy\": %.6g", progress.best.valid_accuracy);
	printf(", \"examples_per_second\": %.0f, \"checkpoint\": \"%s\"}\n",
	       progress.last.examples_per_second, a->save);
	rc = BNN_CLI_OK; /* bnn_cli_main checks that stdout was written */
done:
	bnn_dataset_free(&train);
	bnn_dataset_free(&valid);
	bnn_state_free(&st);
	return rc;
}
