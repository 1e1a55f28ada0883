/*
 * train_settings.c: what a training run chose, described once at its
 * start (bnn_train_io.on_start).  A user who gives only an optimizer
 * leaves the trainer to choose the learning rate and its schedule, the
 * effective sample size and each tensor's prior precision or weight
 * decay; those values are shown before the first epoch instead of being
 * left to the documentation.  The text is two lines: the options as they
 * will run, in the form a checkpoint stores them (bnn_train_options_text
 * of the resolved options, so there is one spelling of every option), and
 * which of those values the trainer chose and from what.  A default that
 * is off (no clipping) is not listed as chosen, nor IVON's h0 when it is
 * the constant default (a run of BNN_SHORT_RUN_STEPS steps or more); a
 * short run's scaled default says how it was scaled.  A data-parallel
 * run adds a third line: its processes and how their sums go
 * (train_dist_text).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"
#include "train_internal.h"

/* The smallest and largest δ over the tensors that take one. */
static int settings_delta_range(const struct trainer *t, double *lo, double *hi)
{
	int i, any = 0;

	for (i = 0; i < t->ntensors; i++) {
		double d = t->tensors[i].delta;
		if (!t->tensors[i].decays)
			continue;
		if (!any || d < *lo)
			*lo = d;
		if (!any || d > *hi)
			*hi = d;
		any = 1;
	}
	return any;
}

/* Why a default `what` (enum train_short_run) is what it is on a short
 * run, as text after "the optimizer's default", or "" when the run is
 * not short or the row scales another default. */
static const char *settings_short_run(const struct trainer *t, int what, char *buf, size_t size)
{
	const struct train_optimizer *row = &train_optimizers[t->o->optimizer];
	const double steps = bnn_train_steps(t->o, t->n_data);

	if (row->short_run != what || !(steps < BNN_SHORT_RUN_STEPS))
		return "";
	snprintf(buf, size, " %.9g x %d / %.9g steps: a run shorter than %d steps",
	         what == TRAIN_SHORT_LR ? row->default_lr : row->default_h0, BNN_SHORT_RUN_STEPS,
	         steps, BNN_SHORT_RUN_STEPS);
	return buf;
}

/* The second line: the values the trainer chose, and from what. */
static int settings_choices(const struct trainer *t, char *buf, int n)
{
	const bnn_train_options *o = t->o;
	const char *opt = bnn_optimizer_name(o->optimizer);
	const struct train_optimizer *row = &train_optimizers[o->optimizer];
	static const char *const schedules[] = { "constant", "step", "cosine" };
	double lo = 0, hi = 0;
	char reason[160];
	int k = 0;

	n = train_text_append(buf, n, "\nchosen by the trainer:");
	if (!(o->schedule.lr > 0))
		n = train_text_append(buf, n, "%s lr=%.9g (%s's default%s)", k++ ? "," : "",
		                      t->schedule.lr, opt,
		                      settings_short_run(t, TRAIN_SHORT_LR, reason, sizeof reason));
	if (isnan(o->ivon.h0) && row->default_h0 > 0 && t->h0 != row->default_h0)
		n = train_text_append(buf, n, "%s h0=%.9g (%s's default%s)", k++ ? "," : "", t->h0,
		                      opt,
		                      settings_short_run(t, TRAIN_SHORT_H0, reason, sizeof reason));
	if (o->schedule.kind == BNN_SCHEDULE_DEFAULT)
		n = train_text_append(buf, n, "%s schedule=%s (%s's default%s)", k++ ? "," : "",
		                      schedules[t->schedule.kind], opt,
		                      t->schedule.kind == BNN_SCHEDULE_COSINE
		                              ? ": decays to lr_min over the epochs"
		                              : "");
	if (isnan(o->clip) && t->clip > 0)
		n = train_text_append(buf, n,
		                      "%s clip=%.9g (%s's default: the gradient's norm "
		                      "clipped to it)",
		                      k++ ? "," : "", t->clip, opt);
	if (row->uses_ess && !(o->ess > 0)) {
		const double ess = train_effective_n(t);
		if (row->ess_times_fan_in)
			n = train_text_append(
			        buf, n,
			        "%s ess=%.9g (the number of training examples, %.9g, "
			        "x the largest fan-in of a layer with a posterior, %.9g)",
			        k++ ? "," : "", ess, t->n_data, ess / t->n_data);
		else
			n = train_text_append(buf, n,
			                      "%s ess=%.9g (the number of training examples)",
			                      k++ ? "," : "", ess);
	}
	if (!isfinite(o->delta) && row->variational && settings_delta_range(t, &lo, &hi)) {
		const char *what = row->delta_over_ess    ? "the layers' prior precisions / ess"
		                   : row->delta_times_rho ? "the layers' prior precisions x rho"
		                                          : "the layers' prior precisions";
		if (lo == hi)
			n = train_text_append(buf, n, "%s delta=%.9g (%s)", k++ ? "," : "", lo,
			                      what);
		else
			n = train_text_append(buf, n, "%s delta=%.9g to %.9g (%s)", k++ ? "," : "",
			                      lo, hi, what);
	}
	if (t->valid_mc > 0 && t->nvalid > 0)
		n = train_text_append(buf, n,
		                      "%s validation by %ld posterior samples (%s's: the "
		                      "network at the mean does not see its sigma)",
		                      k++ ? "," : "", t->valid_mc, opt);
	if (!k)
		n = train_text_append(buf, n, " nothing (every value above was given)");
	return n;
}

char *train_settings_text(const struct trainer *t)
{
	bnn_train_options r = *t->o;
	char *options, *buf;
	int n;

	r.schedule.kind = t->schedule.kind;
	r.schedule.lr = t->schedule.lr;
	r.ivon.h0 = t->h0;
	if (!(r.ess > 0) && train_optimizers[r.optimizer].uses_ess)
		r.ess = train_effective_n(t);
	options = bnn_train_options_text(&r);
	buf = malloc(TRAIN_TEXT_MAX);
	if (!options || !buf) {
		free(options);
		free(buf);
		return NULL;
	}
	n = train_text_append(buf, 0, "training: %s", options);
	n = settings_choices(t, buf, n);
	train_dist_text(t, buf, n);
	free(options);
	return buf;
}
