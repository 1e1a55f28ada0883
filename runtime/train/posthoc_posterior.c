/*
 * posthoc_posterior.c: the Gaussian posterior that Laplace (laplace.c) and
 * SWAG (swag.c) attach to a trained point network, in a checkpoint and in
 * prediction.  One mechanism serves both: the mean is the state's params,
 * the diagonal scale its sigma (any tensor may then have σ > 0, which a
 * checkpoint without this record refuses), and SWAG adds a low-rank part.
 * Sections (docs/checkpoint.md, "Post-hoc posteriors"):
 *   posterior       text, "key=value" lines: kind (laplace, swag,
 *                   laplace_last_layer or laplace_kron), and prior_precision, hessian,
 *                   examples (laplace; and params for the last layer) or
 *                   examples, rank (swag)
 *   posterior.dev   f32, rank × nparams: SWAG's deviations (rank > 0)
 *   posterior.chol  f32, params·(params + 1)/2: last-layer Laplace's L⁻¹
 *                   (laplace_last_layer.c), whose samples replace the
 *                   last layer's part of the diagonal one
 *   posterior.a_vectors, .a_values, .g_vectors, .g_values  f32: the
 *                   Kronecker factors' eigenvectors and eigenvalues of
 *                   kind laplace_kron (laplace_kron.c)
 * A prediction sample is θ = μ + σ∘z1 (bnn_posterior_sample), then for
 * SWAG θ += D·z2/√(2(R − 1)) (Maddox et al. 2019, eq. 1 and Alg. 1).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"
#include "base/floats.h"
#include "train_internal.h"

void bnn_posthoc_free(bnn_posthoc *p)
{
	if (!p)
		return;
	free(p->dev);
	free(p->chol);
	free(p->blocks);
	free(p->a_vec);
	free(p->a_val);
	free(p->g_vec);
	free(p->g_val);
	free(p);
}

/* Gives st the post-hoc posterior p (st owns it from here; its old one is
 * freed): the optimizer's arrays and the training progress go, since the
 * state is no longer one to continue training. */
void train_posthoc_install(bnn_state *st, bnn_posthoc *p)
{
	int k;

	bnn_posthoc_free(st->posthoc);
	st->posthoc = p;
	for (k = 0; k < BNN_OPT_SLOTS; k++) {
		free(st->opt[k]);
		st->opt[k] = NULL;
	}
	train_progress_free(st->progress);
	st->progress = NULL;
}

static const char *posthoc_kind_name(int kind)
{
	return kind == BNN_POSTHOC_LAPLACE              ? "laplace"
	       : kind == BNN_POSTHOC_SWAG               ? "swag"
	       : kind == BNN_POSTHOC_LAPLACE_LAST_LAYER ? "laplace_last_layer"
	       : kind == BNN_POSTHOC_LAPLACE_KRON       ? "laplace_kron"
	                                                : "?";
}

int train_posthoc_add(bnn_ckpt *ck, const bnn_model *m, const bnn_posthoc *p)
{
	char text[256];
	int rc;

	if (p->kind != BNN_POSTHOC_SWAG)
		snprintf(text, sizeof text,
		         "kind=%s\nprior_precision=%a\nhessian=%s\nexamples=%ld\n",
		         posthoc_kind_name(p->kind), p->prior_precision, p->hessian, p->examples);
	else
		snprintf(text, sizeof text, "kind=swag\nexamples=%ld\nrank=%ld\n", p->examples,
		         p->rank);
	if (train_posthoc_last_layer(p)) /* the covariance's size */
		snprintf(text + strlen(text), sizeof text - strlen(text), "params=%ld\n",
		         p->params);
	rc = bnn_ckpt_add_text(ck, "posterior", text);
	if (!rc && p->kind == BNN_POSTHOC_LAPLACE_LAST_LAYER)
		rc = train_laplace_ll_add(ck, p);
	if (!rc && p->kind == BNN_POSTHOC_LAPLACE_KRON)
		rc = train_laplace_kron_add(ck, m, p);
	if (!rc && p->kind == BNN_POSTHOC_SWAG && p->rank > 0)
		rc = bnn_ckpt_add_f32(ck, "posterior.dev", p->dev, p->rank * m->nparams);
	return rc;
}

/* The value of "key=" in text, copied to buf; 0 when absent. */
static int posthoc_value(const char *text, const char *key, char *buf, size_t size)
{
	size_t k = strlen(key), n;
	const char *p = text;

	while (p && *p) {
		if (strncmp(p, key, k) == 0 && p[k] == '=') {
			p += k + 1;
			n = strcspn(p, "\n");
			if (n >= size)
				n = size - 1;
			memcpy(buf, p, n);
			buf[n] = '\0';
			return 1;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return 0;
}

/* A count "key=" of the posterior section, in [min, max]. */
static int posthoc_count(const char *text, const char *path, const char *key, long min, long max,
                         long *out, bnn_err *err)
{
	char buf[64], *end;

	if (!posthoc_value(text, key, buf, sizeof buf))
		return bnn_fail(err, BNN_EFORMAT, "%s: section 'posterior': '%s' is missing", path,
		                key);
	*out = strtol(buf, &end, 10);
	if (end == buf || *end || *out < min || *out > max)
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: section 'posterior': '%s' is '%s', not a count in [%ld, %ld]",
		                path, key, buf, min, max);
	return BNN_OK;
}

/* Laplace's keys: prior_precision > 0, hessian, examples (and for the
 * last layer params and the section of its covariance). */
static int posthoc_load_laplace(const bnn_ckpt *ck, const char *text, const char *path,
                                const bnn_model *m, bnn_posthoc *p, bnn_err *err)
{
	const int ll = train_posthoc_last_layer(p), kron = p->kind == BNN_POSTHOC_LAPLACE_KRON;
	const char *want = kron ? "kfac" : "ggn";
	int rc;

	char buf[64], *end;

	if (!posthoc_value(text, "prior_precision", buf, sizeof buf))
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: section 'posterior': 'prior_precision' is missing", path);
	p->prior_precision = strtod(buf, &end);
	if (end == buf || *end || !(p->prior_precision > 0) || !isfinite(p->prior_precision))
		return bnn_fail(
		        err, BNN_EFORMAT,
		        "%s: section 'posterior': 'prior_precision' is '%s', not a number > 0",
		        path, buf);
	if (ll && (!posthoc_value(text, "hessian", p->hessian, sizeof p->hessian) ||
	           strcmp(p->hessian, want) != 0))
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: section 'posterior': 'hessian' is missing or not %s", path,
		                want);
	if (!ll &&
	    (!posthoc_value(text, "hessian", p->hessian, sizeof p->hessian) ||
	     (strcmp(p->hessian, "mc_fisher") != 0 && strcmp(p->hessian, "emp_fisher") != 0)))
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: section 'posterior': 'hessian' is missing or not mc_fisher or "
		                "emp_fisher",
		                path);
	if ((rc = posthoc_count(text, path, "examples", 1, 1L << 62, &p->examples, err)) || !ll)
		return rc;
	if ((rc = posthoc_count(text, path, "params", 1,
	                        kron ? 1L << 40 : BNN_LAPLACE_LAST_LAYER_MAX, &p->params, err)))
		return rc;
	return kron ? train_laplace_kron_load(ck, path, m, p, err)
	            : train_laplace_ll_load(ck, text, path, m, p, err);
}

/* SWAG's keys and its deviations (rank × nparams finite values). */
static int posthoc_load_swag(const bnn_ckpt *ck, const char *text, const char *path,
                             const bnn_model *m, bnn_posthoc *p, bnn_err *err)
{
	const float *dev;
	long n = 0, bad;
	int rc;

	if ((rc = posthoc_count(text, path, "examples", 1, 1L << 62, &p->examples, err)) ||
	    (rc = posthoc_count(text, path, "rank", 0, 1000000, &p->rank, err)))
		return rc;
	if (p->rank == 1)
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: section 'posterior': rank 1, and a low-rank part needs 2 "
		                "deviations or more (0: none)",
		                path);
	if (p->rank == 0)
		return BNN_OK;
	dev = bnn_ckpt_find_f32(ck, "posterior.dev", &n);
	if (!dev || n != p->rank * m->nparams)
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: section 'posterior.dev' has %ld values, rank %ld needs %ld",
		                path, n, p->rank, p->rank * m->nparams);
	if ((bad = train_first_bad(dev, n, 0)) >= 0)
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: section 'posterior.dev': value %ld is %g, not finite", path,
		                bad, (double)dev[bad]);
	p->dev = bnn_floats_alloc(n);
	if (!p->dev)
		return bnn_fail(err, BNN_ENOMEM, "out of memory loading %s", path);
	memcpy(p->dev, dev, (size_t)n * sizeof *dev);
	return BNN_OK;
}

int train_posthoc_load(const bnn_ckpt *ck, const char *path, const bnn_state *st, bnn_posthoc **out,
                       bnn_err *err)
{
	const char *text = bnn_ckpt_find_text(ck, "posterior");
	char kind[32];
	bnn_posthoc *p;
	int rc;

	*out = NULL;
	if (!text)
		return BNN_OK;
	if (!posthoc_value(text, "kind", kind, sizeof kind))
		return bnn_fail(err, BNN_EFORMAT, "%s: section 'posterior': 'kind' is missing",
		                path);
	if (!st->sigma)
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: section 'posterior' (kind %s) needs section 'sigma'", path,
		                kind);
	if (!(p = calloc(1, sizeof *p)))
		return bnn_fail(err, BNN_ENOMEM, "out of memory loading %s", path);
	if (strcmp(kind, "laplace") == 0 || strcmp(kind, "laplace_last_layer") == 0 ||
	    strcmp(kind, "laplace_kron") == 0) {
		p->kind = strcmp(kind, "laplace") == 0              ? BNN_POSTHOC_LAPLACE
		          : strcmp(kind, "laplace_last_layer") == 0 ? BNN_POSTHOC_LAPLACE_LAST_LAYER
		                                                    : BNN_POSTHOC_LAPLACE_KRON;
		rc = posthoc_load_laplace(ck, text, path, st->model, p, err);
	} else if (strcmp(kind, "swag") == 0) {
		p->kind = BNN_POSTHOC_SWAG;
		rc = posthoc_load_swag(ck, text, path, st->model, p, err);
	} else {
		rc = bnn_fail(err, BNN_EFORMAT,
		              "%s: section 'posterior': kind '%s', and this library knows laplace, "
		              "laplace_last_layer, laplace_kron and swag",
		              path, kind);
	}
	if (rc) {
		bnn_posthoc_free(p);
		return rc;
	}
	*out = p;
	return BNN_OK;
}

int train_posthoc_last_layer(const bnn_posthoc *p)
{
	return p &&
	       (p->kind == BNN_POSTHOC_LAPLACE_LAST_LAYER || p->kind == BNN_POSTHOC_LAPLACE_KRON);
}

int train_posthoc_layers_check(const bnn_model *m, const char *what, bnn_err *err)
{
	const unsigned own = BNN_CAP_SIGMA | BNN_CAP_PASS_NOISE | BNN_CAP_COMPONENTS | BNN_CAP_WHVI;
	int i;

	for (i = 0; i < m->nlayers; i++)
		if (m->layers[i].caps & own)
			return bnn_fail(
			        err, BNN_EUNSUPPORTED,
			        "%s needs a point network, and layer '%s' of model '%s' has %s "
			        "%s posterior of its own",
			        what, m->layers[i].name, m->name,
			        train_article(m->layers[i].family), m->layers[i].family);
	return BNN_OK;
}

void train_posthoc_sample(const bnn_state *st, float *theta, bnn_rng *rng)
{
	const bnn_posthoc *p = st->posthoc;
	long n = st->model->nparams, r, j;
	float z[64];
	double scale;

	if (p && p->kind == BNN_POSTHOC_LAPLACE_LAST_LAYER)
		train_laplace_ll_sample(st, theta, rng);
	if (p && p->kind == BNN_POSTHOC_LAPLACE_KRON)
		train_laplace_kron_sample(st, theta, rng);
	if (!p || p->kind != BNN_POSTHOC_SWAG || p->rank < 2)
		return;
	/* Maddox et al. 2019, eq. 1: the low-rank part D·z2/√(2(K − 1)), K the
	 * deviations kept; z2 ~ N(0, I_K), drawn after the diagonal part's z1 */
	scale = 1.0 / sqrt(2.0 * (double)(p->rank - 1));
	for (r = 0; r < p->rank; r++) {
		const float *d = p->dev + r * n;
		float zr;
		if (r % 64 == 0)
			bnn_rng_normal(rng, z, 64);
		zr = (float)(scale * z[r % 64]);
		for (j = 0; j < n; j++)
			theta[j] += zr * d[j];
	}
}

const char *train_posthoc_name(const bnn_posthoc *p)
{
	return p ? posthoc_kind_name(p->kind) : "none";
}
