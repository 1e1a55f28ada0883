/*
 * cli_laplace.c: `MODEL laplace`, the Laplace posterior of a trained point
 * network (bnn_laplace, docs/laplace.md).  It loads the checkpoint and the
 * training data (standardised by the checkpoint's statistics, as eval
 * does), fits the posterior, saves the new checkpoint (atomically; eval and
 * predict then use it) and prints one JSON line: the prior precision, the
 * Laplace log marginal likelihood, the seconds.
 *
 * By default the posterior is the output layer's (Laplace Redux's default:
 * last layer, Kronecker factors, δ by the marginal likelihood); the
 * diagonal of every weight, sampled through the network, predicts badly
 * (docs/laplace.md, "Why the last layer is the default").  A model the
 * last layer's fit does not take is refused with the reason, never fitted
 * otherwise behind the user's back: `--weights all` is the user's choice.
 *
 *   --weights last-layer | all   the output layer's GGN, exact logit
 *                                Hessians (the default; laplace_kron.c,
 *                                laplace_last_layer.c), or the diagonal
 *                                GGN of every weight (laplace.c)
 *   --last-layer                 --weights last-layer (older commands)
 *   --structure kron | full      last-layer: its Kronecker factors (the
 *                                default, about one forward pass) or the
 *                                full P × P matrix
 *   --fisher mc | empirical      all: labels drawn from the model (the
 *                                GGN's unbiased MC estimate, default) or
 *                                the data's own (the empirical Fisher)
 *   --fisher-samples S           all: label draws per example (mc)
 *   --prior-precision P | auto   δ; auto (the default,
 *                                bnn_laplace_defaults): by the marginal
 *                                likelihood
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_internal.h"

/* --prior-precision: a number > 0, or auto (NaN); *out is left at the
 * library's default when it is not given. */
static int cli_laplace_prior(struct bnn_cli_args *a, double *out)
{
	char *end;

	if (!a->prior_precision)
		return BNN_CLI_OK;
	if (strcmp(a->prior_precision, "auto") == 0) {
		*out = NAN;
		return BNN_CLI_OK;
	}
	*out = strtod(a->prior_precision, &end);
	if (end == a->prior_precision || *end || !(*out > 0) || !isfinite(*out))
		return bnn_cli_usage_error(a,
		                           "--prior-precision: '%s' is not a number > 0 or 'auto'",
		                           a->prior_precision);
	return BNN_CLI_OK;
}

/* --weights last-layer | all (or --last-layer): *last_layer 1 for the
 * output layer's fit, the default. */
static int cli_laplace_weights(struct bnn_cli_args *a, int *last_layer)
{
	*last_layer = 1;
	if (!a->weights)
		return BNN_CLI_OK;
	if (strcmp(a->weights, "all") == 0)
		*last_layer = 0;
	else if (strcmp(a->weights, "last-layer") != 0)
		return bnn_cli_usage_error(a, "--weights: '%s' is not last-layer or all",
		                           a->weights);
	if (a->last_layer && !*last_layer)
		return bnn_cli_usage_error(a, "--last-layer is --weights last-layer, and --weights "
		                              "all was given: choose one");
	return BNN_CLI_OK;
}

/* --fisher and --fisher-samples choose the label draws of the fit of all
 * weights, --structure the last layer's GGN: each is refused with the
 * other, by name. */
static int cli_laplace_applies(struct bnn_cli_args *a, int last_layer)
{
	const char *fisher = a->fisher ? "--fisher" : "--fisher-samples";

	if (last_layer && (a->fisher || a->fisher_samples > 0))
		return bnn_cli_usage_error(
		        a,
		        "%s applies to --weights all: the last layer's fit (the default, "
		        "--weights last-layer) computes the exact GGN of the output layer, "
		        "with no label draws",
		        fisher);
	if (!last_layer && a->structure)
		return bnn_cli_usage_error(a, "--structure applies to --weights last-layer (the "
		                              "default): --weights all fits a diagonal");
	return BNN_CLI_OK;
}

/* The options of the command line, checked before any work. */
static int cli_laplace_options(struct bnn_cli_args *a, bnn_laplace_options *o)
{
	int rc;

	*o = bnn_laplace_defaults();
	if ((rc = cli_laplace_prior(a, &o->prior_precision)) ||
	    (rc = cli_laplace_weights(a, &o->last_layer)) ||
	    (rc = cli_laplace_applies(a, o->last_layer)))
		return rc;
	if (a->fisher && strcmp(a->fisher, "mc") != 0 && strcmp(a->fisher, "empirical") != 0)
		return bnn_cli_usage_error(a, "--fisher: '%s' is not mc or empirical", a->fisher);
	o->empirical = a->fisher && strcmp(a->fisher, "empirical") == 0;
	if (o->empirical && a->fisher_samples > 0)
		return bnn_cli_usage_error(a, "--fisher-samples draws labels for --fisher mc, not "
		                              "for --fisher empirical");
	if (a->fisher_samples > 0)
		o->samples = a->fisher_samples;
	if (a->structure && strcmp(a->structure, "kron") != 0 && strcmp(a->structure, "full") != 0)
		return bnn_cli_usage_error(a, "--structure: '%s' is not kron or full",
		                           a->structure);
	if (a->structure)
		o->structure =
		        strcmp(a->structure, "full") == 0 ? BNN_LAPLACE_FULL : BNN_LAPLACE_KRON;
	o->batch = a->train.batch;
	o->seed = a->train.seed;
	return BNN_CLI_OK;
}

int bnn_cli_laplace(const bnn_model *m, struct bnn_cli_args *a)
{
	bnn_laplace_options o;
	bnn_laplace_report rep;
	bnn_dataset ds;
	bnn_state st;
	bnn_err err;
	int rc;

	if ((rc = cli_laplace_options(a, &o)))
		return rc;
	memset(&ds, 0, sizeof ds);
	if (bnn_state_load(&st, m, a->load, &err))
		return bnn_cli_error(a, "%s", err.message);
	rc = BNN_CLI_FAIL;
	/* a model or checkpoint the fit does not take is refused before the
	 * data are read */
	if (bnn_laplace_check(&st, &o, &err) ||
	    bnn_cli_load(m, a, a->data, a->labels, 1, &ds, &err) ||
	    (st.standardize.features > 0 && bnn_standardizer_apply(&st.standardize, &ds, &err)) ||
	    bnn_laplace(&st, &ds, &o, &rep, &err) || bnn_state_save(&st, a->save, &err)) {
		bnn_cli_error(a, "%s", err.message);
		goto done;
	}
	printf("{\"kind\": \"laplace\", \"hessian\": \"%s\", \"examples\": %ld, "
	       "\"prior_precision\": ",
	       st.posthoc->hessian, ds.n);
	bnn_cli_json_value(rep.prior_precision, 6);
	fputs(", \"log_marglik\": ", stdout);
	bnn_cli_json_value(rep.log_marglik, 6);
	fputs(", \"nll\": ", stdout);
	bnn_cli_json_value(rep.nll, 6);
	printf(", \"seconds\": %.3f", rep.seconds);
	bnn_cli_json_string("checkpoint", a->save);
	printf("}\n");
	rc = BNN_CLI_OK;
done:
	bnn_dataset_free(&ds);
	bnn_state_free(&st);
	return rc;
}
