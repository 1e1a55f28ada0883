/*
 * loo.c: the trainer's leave-one-out estimate of the generalisation loss
 * (the option loo, docs/training.md and docs/sensitivity.md).  After each
 * epoch, with the σ the optimizer has learned, the mean over a fixed
 * subset of the training examples of ℓ(f_i + V_i e_i), the IVON paper's
 * §4.4.1 estimate LOO(θ) = Σ_i ℓ(f_i^{\i}) ≈ Σ_i ℓ(f_i + V_i e_i) at
 * θ = m (appendix C.5) divided by the examples used, so that it reads on
 * the scale of the training and validation NLL (sensitivity.c computes
 * each term).
 *
 * The subset: each term costs one gradient pass per class, so the whole
 * training set would cost about `classes` epochs of gradient passes; the
 * option gives the number of examples, spaced evenly over the training
 * examples in data-set order (so every class and region of the file is
 * represented, and the same examples are scored after every epoch: the
 * curve moves with the model, not with the sample).  With several
 * processes each one scores its share and the sums are added.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"
#include "train_internal.h"

static int loo_cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

int train_loo_setup(struct trainer *t, bnn_err *err)
{
	long *sorted, k, n;
	int rc;

	if (t->o->loo <= 0)
		return BNN_OK;
	if (!train_optimizers[t->o->optimizer].variational)
		return bnn_fail(err, BNN_EINVAL,
		                "loo needs the posterior variances of a variational optimizer "
		                "(ivon, vogn, bbb or badam); %s learns none",
		                bnn_optimizer_name(t->o->optimizer));
	if ((rc = bnn_sensitivity_check_model(t->m, err)))
		return rc;
	n = t->o->loo < t->ntrain ? t->o->loo : t->ntrain;
	sorted = malloc((size_t)t->ntrain * sizeof *sorted);
	t->loo_idx = malloc((size_t)n * sizeof *t->loo_idx);
	if (!sorted || !t->loo_idx) {
		free(sorted);
		return bnn_fail(err, BNN_ENOMEM, "out of memory for the loo examples");
	}
	memcpy(sorted, t->train_idx, (size_t)t->ntrain * sizeof *sorted);
	qsort(sorted, (size_t)t->ntrain, sizeof *sorted, loo_cmp_long);
	for (k = 0; k < n; k++)
		t->loo_idx[k] = sorted[k * t->ntrain / n];
	t->nloo = n;
	free(sorted);
	return BNN_OK;
}

int train_loo(struct trainer *t, bnn_epoch_report *r, bnn_err *err)
{
	long first, count, k;
	double v[2] = { 0, 0 }; /* Σ ℓ(f_i + V_i e_i), failed */
	double *each = NULL;
	int rc = BNN_OK;

	if (t->nloo <= 0)
		return BNN_OK;
	train_dist_rows(t, t->nloo, &first, &count);
	if (count > 0) {
		each = malloc((size_t)count * sizeof *each);
		if (!each)
			rc = bnn_fail(err, BNN_ENOMEM, "out of memory for the loo estimate");
		else
			rc = bnn_sensitivity_scores(t->st, t->train, t->loo_idx + first, count,
			                            &(bnn_sensitivity){ .loo_nll = each }, err);
		for (k = 0; !rc && k < count; k++)
			v[0] += each[k];
		free(each);
	}
	v[1] = rc != 0;
	train_dist_sum(t, v, 2);
	r->loo_nll = v[0] / (double)t->nloo;
	return rc;
}
