/*
 * warm_start.c: a new run's parameters from another checkpoint
 * (bnn_state_warm_start, `train --init CKPT`).
 *
 * The checkpoint's params section (a point model's parameters, or a
 * posterior's mean) is mapped onto the model tensor by tensor, by name,
 * through the checkpoint's tensors section (state.c: "NAME SIZE SHAPE"
 * per tensor, in the order of params).  Families change what a tensor's
 * value means around it (σ, optimizer state), not the tensor itself: a
 * meanfield dense layer has the same weight and bias as a point one, its
 * value the posterior mean μ.  So a point model warm-starts a meanfield
 * model of the same layers (μ ← the point estimate, σ then set by the
 * optimizer's rule: IVON's from h0, BBB's sigma0, VOGN's from its zero s
 * and the prior) and the other way round (μ becomes the point estimate).
 * Every tensor must be on both sides with the same shape; anything else
 * is refused, naming the tensor, because a partial or reshaped copy
 * would train something other than what was asked.  A checkpoint of the
 * same model (same fingerprint) needs no tensor list, so older
 * checkpoints warm-start their own model.
 */
#include <stdlib.h>
#include <string.h>

#include "base/floats.h"
#include "train_internal.h"

/* One tensor of the checkpoint's list. */
struct warm_tensor {
	char name[256];
	char shape[128];
	long size, offset;
};

/* Parses the tensors section into list (at most max, counted in *n);
 * checks that the sizes tile the n_params values. */
static int warm_parse(const char *text, const char *path, long n_params, struct warm_tensor **list,
                      int *n, bnn_err *err)
{
	const char *p = text;
	long offset = 0;
	int count = 0, cap = 0;
	struct warm_tensor *v = NULL;

	while (*p) {
		const char *eol = strchr(p, '\n');
		struct warm_tensor w;
		char line[512];
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		memset(&w, 0, sizeof w);
		snprintf(line, sizeof line, "%.*s", (int)len, p);
		if (len >= sizeof line ||
		    sscanf(line, "%255s %ld %127s", w.name, &w.size, w.shape) != 3 || w.size < 0 ||
		    w.size > n_params - offset) {
			free(v);
			return bnn_fail(
			        err, BNN_EFORMAT,
			        "%s: section 'tensors': line %d is not 'NAME SIZE SHAPE' of "
			        "the parameters",
			        path, count + 1);
		}
		if (count == cap) {
			struct warm_tensor *bigger =
			        realloc(v, (size_t)(cap = 2 * cap + 8) * sizeof *v);
			if (!bigger) {
				free(v);
				return bnn_fail(err, BNN_ENOMEM, "out of memory loading %s", path);
			}
			v = bigger;
		}
		w.offset = offset;
		offset += w.size;
		v[count++] = w;
		p = eol ? eol + 1 : p + len;
	}
	if (offset != n_params) {
		free(v);
		return bnn_fail(
		        err, BNN_EFORMAT,
		        "%s: section 'tensors' lists %ld values, and section 'params' has %ld",
		        path, offset, n_params);
	}
	*list = v;
	*n = count;
	return BNN_OK;
}

static const struct warm_tensor *warm_find(const struct warm_tensor *list, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(list[i].name, name) == 0)
			return &list[i];
	return NULL;
}

/* Copies every tensor of m from the checkpoint's values by name, into
 * out; refuses a tensor missing on either side or of another shape. */
static int warm_map(const bnn_model *m, const bnn_ckpt *ck, const char *path, const float *values,
                    const struct warm_tensor *list, int n, float *out, bnn_err *err)
{
	const char *from = bnn_ckpt_model_name(ck);
	char shape[128];
	int t, i;

	for (t = 0; t < m->ntensors; t++) {
		const bnn_tensor *bt = &m->tensors[t];
		const struct warm_tensor *w = warm_find(list, n, bt->name);
		if (!w)
			return bnn_fail(
			        err, BNN_EMISMATCH,
			        "%s: model '%s' has tensor '%s', which the checkpoint (model "
			        "'%s') does not have",
			        path, m->name, bt->name, from);
		train_tensor_shape(bt, shape, sizeof shape);
		if (strcmp(shape, w->shape) != 0 || w->size != bt->size)
			return bnn_fail(
			        err, BNN_EMISMATCH,
			        "%s: tensor '%s' is %s in the checkpoint (model '%s') and %s "
			        "in model '%s'",
			        path, bt->name, w->shape, from, shape, m->name);
		memcpy(out + bt->offset, values + w->offset, (size_t)bt->size * sizeof *out);
	}
	for (i = 0; i < n; i++) {
		for (t = 0; t < m->ntensors && strcmp(m->tensors[t].name, list[i].name) != 0; t++)
			;
		if (t == m->ntensors)
			return bnn_fail(
			        err, BNN_EMISMATCH,
			        "%s: the checkpoint (model '%s') has tensor '%s', which model "
			        "'%s' does not have",
			        path, from, list[i].name, m->name);
	}
	return BNN_OK;
}

/* The parameters of ck for model m, into out (nparams values). */
static int warm_values(const bnn_model *m, const bnn_ckpt *ck, const char *path, float *out,
                       bnn_err *err)
{
	long n = 0, bad;
	const float *values = bnn_ckpt_find_f32(ck, "params", &n);
	const char *text = bnn_ckpt_find_text(ck, "tensors");
	struct warm_tensor *list = NULL;
	int count = 0, rc;

	if (!values)
		return bnn_fail(err, BNN_EFORMAT, "%s: the checkpoint has no parameters", path);
	if ((bad = train_first_bad(values, n, 0)) >= 0)
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: section 'params': value %ld is %g, not finite", path, bad,
		                (double)values[bad]);
	if (bnn_ckpt_fingerprint(ck) == m->fingerprint && n == m->nparams) {
		memcpy(out, values, (size_t)n * sizeof *out);
		return BNN_OK;
	}
	if (!text)
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: the checkpoint (model '%s') lists no tensors (an older libbnn "
		                "wrote it): its parameters can only start model '%s' itself",
		                path, bnn_ckpt_model_name(ck), bnn_ckpt_model_name(ck));
	if ((rc = warm_parse(text, path, n, &list, &count, err)))
		return rc;
	rc = warm_map(m, ck, path, values, list, count, out, err);
	free(list);
	return rc;
}

int bnn_state_warm_start(bnn_state *st, const char *path, bnn_err *err)
{
	const bnn_model *m = st ? st->model : NULL;
	bnn_ckpt *ck = NULL;
	float *values;
	int rc;

	if (!m || !st->params || !path)
		return bnn_fail(err, BNN_EINVAL, "bnn_state_warm_start: no %s given",
		                !path ? "path" : "state");
	if ((rc = bnn_ckpt_load(path, &ck, err)))
		return rc;
	values = bnn_floats_alloc(m->nparams);
	/* a mixture's first member would stand for all of them */
	if ((rc = train_mixture_refuse(ck, path, err)))
		goto done;
	if (!values)
		rc = bnn_fail(err, BNN_ENOMEM, "out of memory loading %s", path);
	else if (!(rc = warm_values(m, ck, path, values, err)))
		memcpy(st->params, values, (size_t)m->nparams * sizeof *values);
done:
	free(values);
	bnn_ckpt_free(ck);
	return rc;
}
