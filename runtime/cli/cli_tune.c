/*
 * cli_tune.c: `MODEL tune` (docs/tune.md).  The search (bnn_tune): loads
 * the training data, standardises it if asked, prints one row per
 * configuration and rung on stdout as each rung ends, then the best, and
 * writes the best as an options file (--out) that `train --options` reads.
 * --prior: the prior precision of a meanfield checkpoint trained by IVON
 * or VOGN by the Laplace estimate of the evidence (bnn_evidence_*): a grid
 * of candidates around the prior it was trained with, each with its
 * estimate, and the best (the maximum of the concave estimate, by
 * bisection of its derivative); --out then writes the
 * checkpoint's options with that prior, to train again with.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_internal.h"

/* The grid of --prior: the trained δ times 10^(k/2), k = -GRID..GRID; the
 * search then covers the grid's range. */
#define CLI_PRIOR_GRID 6

static int cli_tune_need(const struct bnn_cli_args *a, const char *value, const char *what)
{
	if (value && *value)
		return BNN_CLI_OK;
	return bnn_cli_usage_error(a, "'tune%s' needs %s", a->prior ? " --prior" : "", what);
}

/* Whether the command line set a training option (--threads aside, which
 * no options text holds). */
static int cli_tune_sets_options(const struct bnn_cli_args *a, int *set)
{
	bnn_train_options def = bnn_train_defaults();
	char *given = bnn_train_options_text(&a->train), *plain = bnn_train_options_text(&def);
	int rc = given && plain ? BNN_CLI_OK : bnn_cli_error(a, "out of memory");

	*set = !rc && strcmp(given, plain) != 0;
	free(given);
	free(plain);
	return rc;
}

/* The options the search and --prior do not share, refused by name. */
static int cli_tune_checks(const struct bnn_cli_args *a)
{
	int rc, set;

	if ((rc = cli_tune_need(a, a->data, "--data FILE")))
		return rc;
	if (a->prior) {
		if ((rc = cli_tune_need(a, a->load, "--load CKPT")))
			return rc;
		if (a->budget || a->trials || a->options || a->standardize)
			return bnn_cli_usage_error(
			        a,
			        "%s goes with the search, not with --prior (which reads the "
			        "checkpoint's options and standardisation)",
			        a->budget    ? "--budget"
			        : a->trials  ? "--trials"
			        : a->options ? "--options"
			                     : "--standardize");
		if ((rc = cli_tune_sets_options(a, &set)))
			return rc;
		if (set)
			return bnn_cli_usage_error(a,
			                           "--prior reads the training options from the "
			                           "checkpoint: give no --optimizer, --lr, --set, "
			                           "...");
	} else {
		bnn_train_options o = a->train;
		bnn_err err;

		if (a->load)
			return bnn_cli_usage_error(a, "--load goes with --prior");
		if ((rc = cli_tune_need(a, a->out, "--out FILE.opts")))
			return rc;
		if (!(o.valid_fraction > 0)) /* the split the search makes */
			o.valid_fraction = bnn_tune_defaults().valid_fraction;
		if (bnn_train_options_check(&o, 0, &err))
			return bnn_cli_usage_error(a, "%s", err.message);
	}
	return bnn_cli_check_outputs(a);
}

static int cli_write_options(FILE *f, void *ctx)
{
	fprintf(f, "# training options written by tune (docs/tune.md): train --options FILE\n");
	return bnn_train_options_write(ctx, f);
}

/* Writes o to --out, atomically. */
static int cli_tune_write(const struct bnn_cli_args *a, bnn_train_options *o)
{
	bnn_err err;

	if (bnn_cli_write_file(a->out, cli_write_options, o, &err))
		return bnn_cli_error(a, "%s", err.message);
	return BNN_CLI_OK;
}

/* ---- the search ---------------------------------------------------------- */

struct cli_table {
	int header;        /* printed */
	bnn_tune_row best; /* the last row kept: in the last rung, the best */
};

static void cli_tune_row(const bnn_tune_row *r, void *ctx)
{
	struct cli_table *t = ctx;
	int j;

	if (!t->header) {
		printf("trial rung epochs");
		for (j = 0; j < r->nparams; j++)
			printf(" %12s", r->names[j]);
		printf(" %10s %9s kept\n", "valid_nll", "accuracy");
		t->header = 1;
	}
	printf("%5d %4d %6ld", r->trial, r->rung, r->epochs);
	for (j = 0; j < r->nparams; j++)
		printf(" %12s", r->values[j]);
	if (isfinite(r->valid_nll))
		printf(" %10.4f", r->valid_nll);
	else
		printf(" %10s", "diverged");
	if (isnan(r->valid_accuracy))
		printf(" %9s", "-");
	else
		printf(" %9.4f", r->valid_accuracy);
	printf(" %s\n", r->kept ? "yes" : "no");
	fflush(stdout);
	if (r->kept)
		t->best = *r;
}

static int cli_tune_search(const bnn_model *m, struct bnn_cli_args *a)
{
	bnn_tune_options t = bnn_tune_defaults();
	bnn_train_options best;
	bnn_standardizer sd;
	bnn_dataset ds;
	struct cli_table table;
	bnn_err err;
	int rc = BNN_CLI_FAIL;

	memset(&ds, 0, sizeof ds);
	memset(&sd, 0, sizeof sd);
	memset(&table, 0, sizeof table);
	if (a->trials)
		t.trials = (int)a->trials;
	if (a->budget)
		t.budget = a->budget;
	if (a->train.valid_fraction > 0) /* the split's size; not written */
		t.valid_fraction = a->train.valid_fraction;
	a->train.valid_fraction = 0;
	t.seed = a->train.seed;
	if (bnn_cli_load(m, a, a->data, a->labels, 1, &ds, &err) ||
	    (a->standardize &&
	     (bnn_standardizer_fit(&ds, &sd, &err) || bnn_standardizer_apply(&sd, &ds, &err))) ||
	    bnn_tune(m, &ds, &a->train, &t, cli_tune_row, &table, &best, &err)) {
		bnn_cli_error(a, "%s", err.message);
		goto done;
	}
	if ((rc = cli_tune_write(a, &best)))
		goto done;
	printf("best: trial %d, valid NLL %.4f after %ld epochs; options written to %s\n",
	       table.best.trial, table.best.valid_nll, table.best.epochs, a->out);
done:
	bnn_standardizer_free(&sd);
	bnn_dataset_free(&ds);
	return rc;
}

/* ---- --prior ------------------------------------------------------------- */

static int cli_tune_prior(const bnn_model *m, struct bnn_cli_args *a)
{
	bnn_evidence ev;
	bnn_train_options o;
	bnn_dataset ds;
	bnn_state st;
	bnn_err err;
	double d, best, lo, hi;
	char value[32];
	int k, rc = BNN_CLI_FAIL;

	memset(&ds, 0, sizeof ds);
	memset(&st, 0, sizeof st);
	if (bnn_state_load(&st, m, a->load, &err) ||
	    bnn_cli_load(m, a, a->data, a->labels, 1, &ds, &err) ||
	    (st.standardize.features > 0 && bnn_standardizer_apply(&st.standardize, &ds, &err))) {
		bnn_cli_error(a, "%s", err.message);
		goto done;
	}
	if (bnn_evidence_init(&ev, &st, &ds, &err)) {
		bnn_cli_error(a, "%s: %s", a->load, err.message);
		goto done;
	}
	printf("%s: %s, %ld parameters with a posterior, N %.9g, NLL at the mean %.6f\n", a->load,
	       bnn_optimizer_name(st.optimizer), ev.params, ev.n, ev.nll);
	printf("%14s %14s %16s\n", "precision", "option delta", "log evidence");
	for (k = -CLI_PRIOR_GRID; k <= CLI_PRIOR_GRID; k++) {
		d = ev.delta * pow(10, k / 2.0);
		printf("%14.6g %14.6g %16.6f%s\n", d, d * ev.to_option, bnn_evidence_at(&ev, d),
		       k == 0 ? "  (trained)" : "");
	}
	lo = ev.delta * pow(10, -CLI_PRIOR_GRID / 2.0);
	hi = ev.delta * pow(10, CLI_PRIOR_GRID / 2.0);
	best = bnn_evidence_best(&ev, lo, hi);
	snprintf(value, sizeof value, "%.3g", best * ev.to_option);
	printf("best prior %.6g (option delta=%s), log evidence %.6f%s\n", best, value,
	       bnn_evidence_at(&ev, best),
	       best < lo * 1.01 || best > hi * 0.99 ? " (at the end of the range)" : "");
	rc = BNN_CLI_OK;
	if (a->out) {
		o = bnn_train_defaults();
		if (bnn_train_options_from_text(&o, st.options, &err) ||
		    bnn_train_set(&o, "delta", value, &err)) {
			rc = bnn_cli_error(a, "%s: %s", a->load, err.message);
			goto done;
		}
		if (!(rc = cli_tune_write(a, &o)))
			printf("options written to %s\n", a->out);
	}
done:
	bnn_dataset_free(&ds);
	bnn_state_free(&st);
	return rc;
}

int bnn_cli_tune(const bnn_model *m, struct bnn_cli_args *a)
{
	int rc;

	if ((rc = cli_tune_checks(a)))
		return rc;
	bnn_set_threads(a->train.threads);
	return a->prior ? cli_tune_prior(m, a) : cli_tune_search(m, a);
}
