/*
 * cli_merge.c: `MODEL merge --load A --load B [...] --save CKPT [--weights
 * hessian|uniform]`.  Loads every checkpoint (each must belong to this
 * model: bnn_state_load names the model of one that does not, and refuses
 * a mixture, whose networks are not one), merges them with bnn_merge
 * (Hessian weights by default: each parameter weighed by the precision
 * its run learned; docs/merge.md) and saves the result, atomically, as an
 * ordinary checkpoint that eval, predict, posterior and export read.  One
 * line of JSON on stdout says what was written.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_internal.h"

/* --weights: BNN_MERGE_HESSIAN or _UNIFORM, or -1 after a message. */
static int cli_merge_weights(const struct bnn_cli_args *a)
{
	if (!a->weights || strcmp(a->weights, "hessian") == 0)
		return BNN_MERGE_HESSIAN;
	if (strcmp(a->weights, "uniform") == 0)
		return BNN_MERGE_UNIFORM;
	bnn_cli_usage_error(a, "--weights takes hessian or uniform, not '%s'", a->weights);
	return -1;
}

/* A checkpoint given twice, under any two names (one file: the same
 * device and inode), which would count one run's precision twice: after
 * a message, or 0. */
static int cli_merge_distinct(const struct bnn_cli_args *a)
{
	struct stat si, sj;
	int i, j;

	for (i = 0; i < a->nloads; i++)
		for (j = i + 1; j < a->nloads; j++)
			if (stat(a->loads[i], &si) == 0 && stat(a->loads[j], &sj) == 0 &&
			    si.st_dev == sj.st_dev && si.st_ino == sj.st_ino)
				return bnn_cli_error(a,
				                     "'merge': %s and %s are the same file: each "
				                     "run counts once (the file twice would count "
				                     "its run's precision twice)",
				                     a->loads[i], a->loads[j]);
	return BNN_CLI_OK;
}

/* The command line's checks: two files or more, each a different file, a
 * --save that is none of them and can be written. */
static int cli_merge_checks(struct bnn_cli_args *a)
{
	int i, rc;

	if (a->nloads < 2)
		return bnn_cli_usage_error(a,
		                           "'merge' needs two checkpoints or more (--load A "
		                           "--load B ...), and %d %s given",
		                           a->nloads, a->nloads == 1 ? "was" : "were");
	if (!a->save || !*a->save)
		return bnn_cli_usage_error(a, "'merge' needs --save CKPT");
	if (strcmp(a->save, "-") == 0)
		return bnn_cli_usage_error(a, "'merge' writes a checkpoint: --save needs a file "
		                              "name, not '-'");
	for (i = 0; i < a->nloads; i++) {
		a->load = a->loads[i];
		if ((rc = bnn_cli_check_outputs(a)))
			return rc;
	}
	return cli_merge_distinct(a);
}

int bnn_cli_merge(const bnn_model *m, struct bnn_cli_args *a)
{
	bnn_state in[BNN_CLI_MAX_LOADS], out;
	bnn_err err;
	int weights, loaded = 0, rc, i;

	memset(&out, 0, sizeof out);
	if ((rc = cli_merge_checks(a)))
		return rc;
	if ((weights = cli_merge_weights(a)) < 0)
		return BNN_CLI_USAGE;
	for (; loaded < a->nloads; loaded++)
		if (bnn_state_load(&in[loaded], m, a->loads[loaded], &err)) {
			rc = bnn_cli_error(a, "%s", err.message);
			goto done;
		}
	if (bnn_merge(in, a->nloads, a->loads, weights, &out, &err) ||
	    bnn_state_save(&out, a->save, &err)) {
		rc = bnn_cli_error(a, "%s", err.message);
		goto done;
	}
	printf("{\"merged\": %d, \"weights\": \"%s\", \"posterior\": %s", a->nloads,
	       weights == BNN_MERGE_HESSIAN ? "hessian" : "uniform", out.sigma ? "true" : "false");
	bnn_cli_json_string("checkpoint", a->save);
	printf("}\n");
done:
	for (i = 0; i < loaded; i++)
		bnn_state_free(&in[i]);
	bnn_state_free(&out);
	return rc;
}
