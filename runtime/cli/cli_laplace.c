/*
 * cli_laplace.c: `MODEL laplace`, the diagonal Laplace posterior of a
 * trained point network (bnn_laplace, docs/laplace.md).  It loads the
 * checkpoint and the training data (standardised by the checkpoint's
 * statistics, as eval does), fits the posterior, saves the new checkpoint
 * (atomically; eval and predict then sample it) and prints one JSON line:
 * the prior precision, the Laplace log marginal likelihood, the seconds.
 *
 *   --prior-precision P | auto   δ; auto (the default,
 *                                bnn_laplace_defaults): by the marginal
 *                                likelihood
 *   --fisher mc | empirical      labels drawn from the model (the GGN's
 *                                unbiased MC estimate, default) or the
 *                                data's own (the empirical Fisher)
 *   --fisher-samples S           label draws per example (mc)
 *   --last-layer                 the output layer's GGN only, exact logit
 *                                Hessians (laplace_last_layer.c, laplace_kron.c)
 *   --structure kron | full      its Kronecker factors (default: Laplace
 *                                Redux's, about one forward pass) or the
 *                                full P × P matrix
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

/* The options of the command line, checked before any work. */
static int cli_laplace_options(struct bnn_cli_args *a, bnn_laplace_options *o)
{
	int rc;

	*o = bnn_laplace_defaults();
	if ((rc = cli_laplace_prior(a, &o->prior_precision)))
		return rc;
	if (a->fisher && strcmp(a->fisher, "mc") != 0 && strcmp(a->fisher, "empirical") != 0)
		return bnn_cli_usage_error(a, "--fisher: '%s' is not mc or empirical", a->fisher);
	o->empirical = a->fisher && strcmp(a->fisher, "empirical") == 0;
	if (o->empirical && a->fisher_samples > 0)
		return bnn_cli_usage_error(a, "--fisher-samples draws labels for --fisher mc, not "
		                              "for --fisher empirical");
	if (a->fisher_samples > 0)
		o->samples = a->fisher_samples;
	if (a->last_layer && (a->fisher || a->fisher_samples > 0))
		return bnn_cli_usage_error(a, "--last-layer computes the exact GGN of the output "
		                              "layer: --fisher and --fisher-samples do not apply");
	if (a->structure && !a->last_layer)
		return bnn_cli_usage_error(a, "--structure chooses the last layer's GGN: it needs "
		                              "--last-layer");
	if (a->structure && strcmp(a->structure, "kron") != 0 && strcmp(a->structure, "full") != 0)
		return bnn_cli_usage_error(a, "--structure: '%s' is not kron or full",
		                           a->structure);
	o->last_layer = a->last_layer;
	o->structure = a->structure && strcmp(a->structure, "full") == 0 ? BNN_LAPLACE_FULL
	                                                                 : BNN_LAPLACE_KRON;
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
	if (bnn_cli_load(m, a->data, a->labels, a->target, 1, &ds, &err) ||
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
	printf(", \"seconds\": %.3f, \"checkpoint\": \"%s\"}\n", rep.seconds, a->save);
	rc = BNN_CLI_OK;
done:
	bnn_dataset_free(&ds);
	bnn_state_free(&st);
	return rc;
}
