/*
 * tune.c: the search of an optimizer's main hyperparameters by successive
 * halving (Jamieson & Talwalkar 2016; docs/tune.md).  Each configuration
 * is a few options of bnn_train_set (the learning rate, the prior
 * precision or weight decay, IVON's and BADAM's ess, IVON's h0, VOGN's τ), sampled
 * log-uniformly around their defaults from a seeded generator and rounded
 * to three significant digits, so that the table, the options file and a
 * later `train --options` all carry the same values.  Every rung trains
 * its configurations from scratch with bnn_train on its valid_fraction
 * split (the same seed, so the same held-out examples for all), ranks them
 * by the best epoch's validation NLL, keeps the better half and doubles
 * the epochs.  Retraining rather than continuing keeps each row what
 * `train` with those options and epochs gives (schedules depend on the
 * epochs of the run).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"

/* A searched option: log-uniform in [center / spread, center · spread]. */
struct tune_axis {
	const char *name;
	double center, spread;
	double first; /* trial 0's value, the optimizer's default (so that the
	                 search keeps the defaults unless it beats them), or 0:
	                 drawn like the others */
};

/* One configuration: its values as text (what bnn_train_set reads). */
struct tune_trial {
	char values[BNN_TUNE_MAX_PARAMS][32];
	double nll, accuracy;
	int index;
};

bnn_tune_options bnn_tune_defaults(void)
{
	bnn_tune_options t;

	t.trials = 8;
	t.budget = 1;
	t.valid_fraction = 0.2;
	t.seed = 1;
	return t;
}

/* The axes of an optimizer (its options in train_options.c): the learning
 * rate a decade either side of its default; the regulariser two decades
 * either side of the model's prior precision (IVON's weight decay is that
 * over λ: train_step.c); IVON's λ a decade either side of N (IVON paper,
 * App. A: "λ = N is a good starting point", larger λ a lower
 * temperature), h0 a decade either side of its default (App. A: "typically
 * around 0.01 to 1"); VOGN's τ from 0.1 to 1 (Osawa et al. 2019: τ ≠ 1
 * tempers the posterior, and their schedule raises τ from 0.1 to 1);
 * BADAM's prior precision and N of σ from its defaults (the model's p and
 * N × the largest fan-in, bnn_default_ess) to 100 times them, ranked by
 * the validation NLL of its posterior samples (the optimizer's valid_mc,
 * train.c): Kessler et al., App. C, tune N and the prior variance on
 * validation data "to mitigate against underfitting", which a posterior
 * wider than the defaults' only worsens, and whose 8-sample NLL is too
 * noisy to rank (a lucky draw wins); its trial 0 is the defaults, so the
 * best is at least as good on the validation split at the search's
 * budget. */
static int tune_axes(const bnn_model *m, const bnn_train_options *o, double n, struct tune_axis *ax)
{
	double lr = o->schedule.lr > 0 ? o->schedule.lr : bnn_default_lr(o->optimizer);
	double p = m->prior_precision > 0 ? m->prior_precision : 1;
	int k = 0;

	ax[k++] = (struct tune_axis){ "lr", lr, 10, 0 };
	switch (o->optimizer) {
	case BNN_OPT_SGD:
	case BNN_OPT_ADAM:
	case BNN_OPT_ADAMW:
		ax[k++] = (struct tune_axis){ "weight_decay", 1e-4, 100, 0 };
		break;
	case BNN_OPT_IVON:
		ax[k++] = (struct tune_axis){ "delta", p / n, 100, 0 };
		ax[k++] = (struct tune_axis){ "ess", n, 10, 0 };
		ax[k++] = (struct tune_axis){
			"h0", isnan(o->ivon.h0) ? bnn_default_h0(o->optimizer) : o->ivon.h0, 10, 0
		};
		break;
	case BNN_OPT_VOGN:
		ax[k++] = (struct tune_axis){ "delta", p, 100, 0 };
		ax[k++] = (struct tune_axis){ "tau", sqrt(0.1), sqrt(10), 0 };
		break;
	case BNN_OPT_BADAM: /* only narrower than its defaults: [p, 100p], [N·d, 100N·d] */
		ax[0].first = lr;
		ax[k++] = (struct tune_axis){ "delta", 10 * p, 10, p };
		ax[k++] = (struct tune_axis){ "ess", 10 * bnn_default_ess(m, o->optimizer, n), 10,
			                      bnn_default_ess(m, o->optimizer, n) };
		break;
	case BNN_OPT_BBB:
		/* delta is a gaussian prior's precision; the other priors' arguments
		 * are the model's (prior_terms.c refuses delta with them) */
		if (m->prior.kind == BNN_PRIOR_GAUSSIAN)
			ax[k++] = (struct tune_axis){ "delta", p, 100, 0 };
		break;
	}
	return k;
}

/* A log-uniform draw on the axis, as text of three significant digits. */
static void tune_draw(bnn_rng *rng, const struct tune_axis *a, char *out, size_t size)
{
	double u = bnn_rng_uniform(rng), lg = log(a->spread);

	snprintf(out, size, "%.3g", a->center * exp(-lg + 2 * lg * u));
}

/* o with trial's values set. */
static int tune_apply(bnn_train_options *o, const struct tune_axis *ax, int nax,
                      const struct tune_trial *trial, bnn_err *err)
{
	int i;

	for (i = 0; i < nax; i++)
		if (bnn_train_set(o, ax[i].name, trial->values[i], err))
			return err ? err->code : BNN_EINVAL;
	return BNN_OK;
}

/* The best epoch of a run (the state bnn_train ends with). */
static int tune_on_epoch(const bnn_epoch_report *r, void *ctx)
{
	bnn_epoch_report *best = ctx;

	if (r->final && r->improved)
		*best = *r;
	return 0;
}

/* Trains one configuration for epochs from scratch; its validation NLL and
 * accuracy into trial (INFINITY when it diverged). */
static int tune_run(const bnn_model *m, const bnn_dataset *train, const bnn_train_options *o,
                    struct tune_trial *trial, bnn_err *err)
{
	bnn_epoch_report best;
	bnn_state st;
	int rc;

	memset(&best, 0, sizeof best);
	best.valid_nll = INFINITY;
	best.valid_accuracy = NAN;
	if ((rc = bnn_state_init(&st, m, o->seed, err)))
		return rc;
	rc = bnn_train(&st,
	               &(bnn_train_io){ .train = train, .on_epoch = tune_on_epoch, .ctx = &best },
	               o, err);
	bnn_state_free(&st);
	if (rc == BNN_ERANGE) { /* diverged: the worst of the rung */
		best.valid_nll = INFINITY;
		rc = BNN_OK;
	}
	trial->nll = isfinite(best.valid_nll) ? best.valid_nll : INFINITY;
	trial->accuracy = best.valid_accuracy;
	return rc;
}

/* Validation NLL ascending; ties (and the diverged) by trial index. */
static int tune_cmp(const void *pa, const void *pb)
{
	const struct tune_trial *a = pa, *b = pb;

	if (a->nll < b->nll)
		return -1;
	if (a->nll > b->nll)
		return 1;
	return a->index - b->index;
}

static int tune_index_cmp(const void *pa, const void *pb)
{
	return ((const struct tune_trial *)pa)->index - ((const struct tune_trial *)pb)->index;
}

/* Whether trial index is among the first keep of the ranked rung (and
 * did not diverge). */
static int tune_kept(const struct tune_trial *ranked, int keep, int index)
{
	int j;

	for (j = 0; j < keep; j++)
		if (ranked[j].index == index)
			return isfinite(ranked[j].nll);
	return 0;
}

/* Reports a rung's rows in trial order; ranked is the rung by rank. */
static int tune_report(const struct tune_trial *ranked, int n, int keep, int rung, long epochs,
                       const struct tune_axis *ax, int nax, bnn_tune_fn on_row, void *ctx,
                       bnn_err *err)
{
	struct tune_trial *byidx;
	bnn_tune_row row;
	int i, j;

	if (!on_row)
		return BNN_OK;
	byidx = malloc((size_t)n * sizeof *byidx);
	if (!byidx)
		return bnn_fail(err, BNN_ENOMEM, "tune: out of memory");
	memcpy(byidx, ranked, (size_t)n * sizeof *byidx);
	qsort(byidx, (size_t)n, sizeof *byidx, tune_index_cmp);
	for (i = 0; i < n; i++) {
		memset(&row, 0, sizeof row);
		row.trial = byidx[i].index;
		row.rung = rung;
		row.epochs = epochs;
		row.nparams = nax;
		for (j = 0; j < nax; j++) {
			row.names[j] = ax[j].name;
			row.values[j] = byidx[i].values[j];
		}
		row.valid_nll = byidx[i].nll;
		row.valid_accuracy = byidx[i].accuracy;
		row.kept = tune_kept(ranked, keep, byidx[i].index);
		on_row(&row, ctx);
	}
	free(byidx);
	return BNN_OK;
}

static int tune_check(const bnn_model *m, const bnn_dataset *train, const bnn_train_options *base,
                      const bnn_tune_options *t, bnn_train_options *best, bnn_err *err)
{
	bnn_train_options o;

	if (!m || !train || !base || !t || !best)
		return bnn_fail(err, BNN_EINVAL, "bnn_tune: no %s given",
		                !m       ? "model"
		                : !train ? "data"
		                : !base  ? "options"
		                : !t     ? "tuning options"
		                         : "place for the best options");
	if (t->trials < 1 || t->trials > 4096)
		return bnn_fail(err, BNN_EINVAL, "tune: trials %d is outside [1, 4096]", t->trials);
	if (t->budget < 1 || t->budget > 1000000)
		return bnn_fail(err, BNN_EINVAL, "tune: budget %ld epochs is outside [1, 1000000]",
		                t->budget);
	if (!(t->valid_fraction > 0 && t->valid_fraction < 1))
		return bnn_fail(err, BNN_EINVAL, "tune: valid_fraction %g is outside (0, 1)",
		                t->valid_fraction);
	o = *base; /* the split tune makes */
	o.valid_fraction = t->valid_fraction;
	return bnn_train_options_check(&o, 0, err);
}

int bnn_tune(const bnn_model *m, const bnn_dataset *train, const bnn_train_options *base,
             const bnn_tune_options *t, bnn_tune_fn on_row, void *ctx, bnn_train_options *best,
             bnn_err *err)
{
	struct tune_axis ax[BNN_TUNE_MAX_PARAMS];
	struct tune_trial *trials;
	bnn_train_options o;
	bnn_rng rng;
	long epochs;
	int nax, i, j, n, keep, rung = 0, rc = BNN_OK;

	if ((rc = tune_check(m, train, base, t, best, err)))
		return rc;
	/* the examples each configuration trains on: what the split leaves */
	nax = tune_axes(m, base, (double)train->n - floor(t->valid_fraction * (double)train->n),
	                ax);
	trials = calloc((size_t)t->trials, sizeof *trials);
	if (!trials)
		return bnn_fail(err, BNN_ENOMEM, "tune: out of memory");
	bnn_rng_seed(&rng, bnn_rng_derive(t->seed, 0x7475)); /* "tu": not the training streams */
	for (i = 0; i < t->trials; i++) {
		trials[i].index = i;
		for (j = 0; j < nax; j++) {
			tune_draw(&rng, &ax[j], trials[i].values[j], sizeof trials[i].values[j]);
			if (i == 0 && ax[j].first > 0) /* drawn all the same: the same stream */
				snprintf(trials[i].values[j], sizeof trials[i].values[j], "%.3g",
				         ax[j].first);
		}
	}
	n = t->trials;
	for (epochs = t->budget;; epochs *= 2, rung++) {
		for (i = 0; i < n && !rc; i++) {
			o = *base;
			o.epochs = epochs;
			o.valid_fraction = t->valid_fraction;
			if (!(rc = tune_apply(&o, ax, nax, &trials[i], err)))
				rc = tune_run(m, train, &o, &trials[i], err);
		}
		if (rc)
			break;
		qsort(trials, (size_t)n, sizeof *trials, tune_cmp);
		keep = (n + 1) / 2;
		if ((rc = tune_report(trials, n, keep, rung, epochs, ax, nax, on_row, ctx, err)))
			break;
		if (!isfinite(trials[0].nll)) {
			rc = bnn_fail(err, BNN_ERANGE,
			              "tune: every configuration of rung %d diverged (%ld epochs): "
			              "lower lr",
			              rung, epochs);
			break;
		}
		if (keep == 1 || n == 1)
			break;
		n = keep;
	}
	if (!rc) {
		*best = *base;
		best->epochs = epochs;
		rc = tune_apply(best, ax, nax, &trials[0], err);
	}
	free(trials);
	return rc;
}
