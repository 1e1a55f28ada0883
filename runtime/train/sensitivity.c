/*
 * sensitivity.c: the memory-perturbation quantities of a classifier's
 * examples (bnn_train.h, docs/sensitivity.md), from which the trainer's
 * leave-one-out estimate (loo.c) and the driver's sensitivity command are
 * made.  The IVON paper (Shen et al. 2024, §4.4 and appendix C.5) plugs
 * the posterior variance σ² into Nickl et al.'s (2023) memory-perturbation
 * equation: at θ = m, for example i with logits f_i,
 *   e_i = S(f_i) − y_i,   V_i = ∇f_iᵀ diag(σ²) ∇f_i          (App. C.5)
 *   LOO(θ) = Σ_i ℓ(f_i^{\i}) ≈ Σ_i ℓ(f_i + V_i e_i)           (§4.4.1)
 * and the sensitivity of example i is |v_i e_i| (§4.4.2).
 *
 * The generated pass gives gradients of the loss, not the Jacobian ∇f_i.
 * The loss gradient with the label set to class c is g_c = ∇f_i (s − 1_c)
 * (s the softmax), so g_y = ∇f_i e_i, and (∇f_i)_c − (∇f_i)_y = g_y − g_c.
 * Hence, with u = diag(σ²) g_y,
 *   Δ_c = (V_i e_i)_c − (V_i e_i)_y = uᵀ (g_y − g_c),
 * one pass per class.  Δ is V_i e_i less its entry at the label, the same
 * vector up to a constant added to every logit, which the softmax and the
 * NLL ignore: ℓ(f_i + V_i e_i) = ℓ(f_i + Δ) exactly, the full V_i of
 * App. C.5, not a diagonal approximation.  The sensitivity score is the
 * length ‖Δ‖₂: for two classes Δ has one non-zero entry, (J₁ − J₀)ᵀ
 * diag(σ²) (J₁ − J₀)·(s₁ − y₁), which is v_i e_i of the scalar logit
 * f₁ − f₀, so the score is the paper's |v_i e_i| there.  (The diagonal
 * form of App. D.4, v_i = diag V_i, needs ∇f_i itself, which loss
 * gradients determine only up to a common vector.)
 *
 * Examples are spread over the OpenMP team, each thread with its own
 * workspace; every example's numbers come from its own passes alone, so
 * the results are the same bits on any number of threads.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "bnn.h"
#include "base/floats.h"
#include "train_internal.h"

/* The capabilities a layer may have besides SIGMA: a meanfield layer is
 * sampled by the local reparameterisation trick or from a weight sample,
 * and has no noise, components or q(g) of its own. */
#define SENS_MEANFIELD_CAPS (BNN_CAP_SIGMA | BNN_CAP_SIGMA_LRT)

int bnn_sensitivity_check_model(const bnn_model *m, bnn_err *err)
{
	int i;

	if (!m)
		return bnn_fail(err, BNN_EINVAL, "no model given");
	if (bnn_likelihood_targets(m) != BNN_TARGETS_CLASS)
		return bnn_fail(
		        err, BNN_EUNSUPPORTED,
		        "sensitivities and the leave-one-out estimate need a categorical likelihood; model '%s' has a %s "
		        "likelihood",
		        m->name, bnn_likelihood_name(m->likelihood));
	for (i = 0; i < m->nlayers; i++) {
		const bnn_layer *l = &m->layers[i];
		if (l->ntensors > 0 &&
		    (!(l->caps & BNN_CAP_SIGMA) || (l->caps & ~SENS_MEANFIELD_CAPS)))
			return bnn_fail(
			        err, BNN_EUNSUPPORTED,
			        "sensitivities and the leave-one-out estimate need meanfield layers only; layer '%s' of model "
			        "'%s' has %s %s posterior",
			        l->name, m->name, train_article(l->family), l->family);
	}
	return BNN_OK;
}

int bnn_sensitivity_check(const bnn_state *st, bnn_err *err)
{
	long j;
	int rc;

	if (!st || !st->model || !st->params)
		return bnn_fail(err, BNN_EINVAL, "no state given");
	if ((rc = bnn_sensitivity_check_model(st->model, err)))
		return rc;
	if (!st->sigma)
		return bnn_fail(err, BNN_EUNSUPPORTED,
		                "sensitivities need the posterior variances; this state is a point "
		                "estimate (optimizer %s): train with ivon, vogn, bbb or badam",
		                bnn_optimizer_name(st->optimizer));
	for (j = 0; j < st->model->nparams; j++)
		if (!isfinite(st->sigma[j]))
			return bnn_fail(err, BNN_EUNSUPPORTED,
			                "sensitivities need finite posterior variances; σ of "
			                "parameter %ld is %g",
			                j, (double)st->sigma[j]);
	return BNN_OK;
}

/* One thread's buffers. */
struct sens_buf {
	float *ws, *f, *gy, *gc;
	double *u, *delta;
};

static void sens_buf_free(struct sens_buf *b)
{
	free(b->ws);
	free(b->f);
	free(b->gy);
	free(b->gc);
	free(b->u);
	free(b->delta);
}

static int sens_buf_alloc(struct sens_buf *b, const bnn_model *m)
{
	memset(b, 0, sizeof *b);
	b->ws = bnn_floats_alloc((long)m->workspace_floats(1));
	b->f = malloc((size_t)m->outputs * sizeof *b->f);
	b->gy = bnn_floats_alloc(m->nparams);
	b->gc = bnn_floats_alloc(m->nparams);
	b->u = malloc((size_t)m->nparams * sizeof *b->u);
	b->delta = malloc((size_t)m->outputs * sizeof *b->delta);
	return b->ws && b->f && b->gy && b->gc && b->u && b->delta;
}

/* The loss gradient of example x with its label set to class c, into g
 * (the logits into f when f is not NULL): the generated pass on a batch
 * of one at the posterior mean, batchnorm on its running statistics. */
static double sens_pass(const bnn_state *st, const float *x, int c, float *ws, float *f, float *g)
{
	const float label = (float)c;
	bnn_pass p;

	memset(&p, 0, sizeof p);
	p.w = st->params;
	p.x = x;
	p.y = &label;
	p.batch = 1;
	p.ws = ws;
	p.out = f;
	p.grad = g;
	p.stats = st->stats;
	return st->model->pass(&p);
}

/* log Σ_c exp(z_c) without overflow. */
static double sens_logsumexp(const double *z, long k)
{
	double mx = z[0], s = 0;
	long c;

	for (c = 1; c < k; c++)
		if (z[c] > mx)
			mx = z[c];
	for (c = 0; c < k; c++)
		s += exp(z[c] - mx);
	return mx + log(s);
}

/* Example row k: x with label y (module comment for the formulas). */
static void sens_example(const bnn_state *st, const float *x, int y, struct sens_buf *b,
                         const bnn_sensitivity *out, long k)
{
	const bnn_model *m = st->model;
	long p, c, K = m->outputs, P = m->nparams, arg = 0;
	double q = 0, len = 0, nll;

	nll = sens_pass(st, x, y, b->ws, b->f, b->gy);
	for (p = 0; p < P; p++) {
		double s = (double)st->sigma[p];
		b->u[p] = s * s * (double)b->gy[p];
		q += b->u[p] * (double)b->gy[p]; /* e_iᵀ V_i e_i */
	}
	for (c = 0; c < K; c++) {
		double d = 0;
		if (c != y) {
			sens_pass(st, x, (int)c, b->ws, NULL, b->gc);
			for (p = 0; p < P; p++)
				d += b->u[p] * (double)b->gc[p];
			d = q - d;
		}
		b->delta[c] = d;
		len += d * d;
		if (b->f[c] > b->f[arg])
			arg = c;
	}
	if (out->score)
		out->score[k] = sqrt(len);
	if (out->nll)
		out->nll[k] = nll;
	if (out->predicted)
		out->predicted[k] = (int)arg;
	if (out->loo_nll) {
		for (c = 0; c < K; c++)
			b->delta[c] += (double)b->f[c]; /* the moved logits f_i + Δ */
		out->loo_nll[k] = sens_logsumexp(b->delta, K) - (double)b->f[y];
	}
}

static int sens_threads(void)
{
#ifdef _OPENMP
	return omp_get_max_threads();
#else
	return 1;
#endif
}

static int sens_thread(void)
{
#ifdef _OPENMP
	return omp_get_thread_num();
#else
	return 0;
#endif
}

int bnn_sensitivity_scores(const bnn_state *st, const bnn_dataset *ds, const long *idx, long n,
                           const bnn_sensitivity *out, bnn_err *err)
{
	const bnn_model *m;
	struct sens_buf *bufs;
	int nt = sens_threads(), t, ok = 1, rc;
	long i;

	if ((rc = bnn_sensitivity_check(st, err)))
		return rc;
	m = st->model;
	if (!out)
		return bnn_fail(err, BNN_EINVAL, "bnn_sensitivity_scores: no output given");
	if ((rc = bnn_data_fits(m, ds, 1, err)))
		return rc;
	if (n < 1 || (!idx && n > ds->n))
		return bnn_fail(err, BNN_EINVAL, "%ld examples asked of a data set of %ld", n,
		                ds->n);
	for (i = 0; idx && i < n; i++)
		if (idx[i] < 0 || idx[i] >= ds->n)
			return bnn_fail(
			        err, BNN_EINVAL,
			        "index %ld (entry %ld) is outside the data set of %ld examples",
			        idx[i], i, ds->n);
	if ((rc = bnn_data_check_labels(ds, (int)m->outputs, "the data", err)))
		return rc;
	bufs = calloc((size_t)nt, sizeof *bufs);
	for (t = 0; bufs && t < nt; t++)
		ok &= sens_buf_alloc(&bufs[t], m);
	if (bufs && ok) {
#pragma omp parallel for schedule(dynamic, 4) if (n > 1)
		for (i = 0; i < n; i++) {
			long e = idx ? idx[i] : i;
			sens_example(st, ds->x + e * m->inputs, (int)ds->y[e * m->targets],
			             &bufs[sens_thread()], out, i);
		}
	}
	for (t = 0; bufs && t < nt; t++)
		sens_buf_free(&bufs[t]);
	free(bufs);
	if (!bufs || !ok)
		return bnn_fail(err, BNN_ENOMEM, "out of memory for the sensitivities of %s",
		                m->name);
	return BNN_OK;
}
