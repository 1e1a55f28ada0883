/*
 * laplace_last_layer.c: last-layer Laplace with a full covariance
 * (Kristiadi et al. 2020; Daxberger et al. 2021, "Laplace Redux", sections
 * 3.2 and 4; docs/laplace.md).  The network is fixed at its trained
 * parameters θ* except its output layer, a dense layer z = W·φ + b on the
 * features φ the pass computes (bnn_pass.features); the posterior of that
 * layer's P = K·D parameters (K outputs, D = features + 1 with a bias) is
 * N(θ*, Λ⁻¹) with the exact GGN
 *
 *   Λ = Σ_i J_iᵀ H_i J_i + δI,   J_i = I_K ⊗ φ̃_iᵀ,   φ̃_i = [φ_i; 1],
 *
 * H_i the Hessian of −log p(y | z) in the logits (categorical:
 * diag p − p·pᵀ; bernoulli: p(1 − p) per output).  Ordered output by
 * output, block (k, l) of Λ is Σ_i H_i[k,l]·φ̃_i·φ̃_iᵀ: one matrix product
 * Φ̃ᵀ·diag(H[k,l])·Φ̃ per pair k <= l, over chunks of examples in float,
 * summed in double.  Λ = L·Lᵀ (LAPACK dpotrf), and L⁻¹ (dtrtri) is what
 * the checkpoint keeps: a sample is θ* + L⁻ᵀ·ε, and the covariance's
 * diagonal blocks Σ_kk = (L⁻¹)ᵀ_k·(L⁻¹)_k give the logits' variances
 * Σ_f[k,k] = φ̃ᵀ·Σ_kk·φ̃ of the linearised predictive, which the probit
 * approximation (MacKay 1992, eq. 4.6; Immer et al. 2021, eq. 8) turns
 * into probabilities: softmax or sigmoid of z_k / √(1 + π/8·Σ_f[k,k]).
 *
 * --prior-precision auto maximises the same Laplace marginal likelihood
 * as the diagonal fit (laplace.c, bnn_laplace_best_delta) with the
 * eigenvalues of the GGN (dsyevd) in place of its diagonal: log det(G +
 * δI) = Σ_j log(λ_j + δ) exactly.
 *
 * The output layer's description, the model checks, the logits' Hessian
 * and the pass over the data are shared with the Kronecker-factored fit
 * (laplace_kron.c, the default structure; train_internal.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bnn.h"
#include "bnn_gen/gemm.h"
#include "base/floats.h"
#include "train_internal.h"

/* LAPACK (OpenBLAS carries it; configure checks), column-major, with the
 * hidden lengths of the character arguments last, as gfortran passes them. */
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t);
void dtrtri_(const char *uplo, const char *diag, const int *n, double *a, const int *lda, int *info,
             size_t, size_t);
void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w,
             double *work, const int *lwork, int *iwork, const int *liwork, int *info, size_t,
             size_t);

/* Examples whose products are summed in float before they go to Λ. */
#define LL_CHUNK 4096

/* Rows of C per product of ll_symmetric_product. */
#define LL_PANEL 96

void train_laplace_ll_layer(const bnn_model *m, struct train_ll_layer *l)
{
	const bnn_layer *ly = &m->layers[m->features_layer];
	int t;

	l->k = m->outputs;
	l->d = m->features;
	l->w_off = l->b_off = -1;
	for (t = ly->first_tensor; t < ly->first_tensor + ly->ntensors; t++)
		if (m->tensors[t].role == BNN_ROLE_WEIGHT)
			l->w_off = m->tensors[t].offset;
		else if (m->tensors[t].role == BNN_ROLE_BIAS)
			l->b_off = m->tensors[t].offset;
	l->dd = l->d + (l->b_off >= 0);
	l->p = l->k * l->dd;
}

long train_laplace_ll_index(const struct train_ll_layer *l, long k, long i)
{
	return i < l->d ? l->w_off + k * l->d + i : l->b_off + k;
}

int train_laplace_ll_check(const bnn_model *m, int full, bnn_err *err)
{
	struct train_ll_layer l;

	if (m->features <= 0)
		return bnn_fail(err, BNN_EUNSUPPORTED,
		                "laplace --weights last-layer (the default) needs a model whose "
		                "output node is a dense layer, and output node '%s' of model '%s' "
		                "is a %s: use --weights all",
		                m->output_node ? m->output_node : "?", m->name,
		                m->output_op ? m->output_op : "?");
	if (m->likelihood != BNN_LIKELIHOOD_CATEGORICAL &&
	    m->likelihood != BNN_LIKELIHOOD_BERNOULLI)
		return bnn_fail(err, BNN_EUNSUPPORTED,
		                "laplace --weights last-layer (the default) takes categorical and "
		                "bernoulli models, and model '%s' is %s: use --weights all",
		                m->name, bnn_likelihood_name(m->likelihood));
	train_laplace_ll_layer(m, &l);
	if (l.w_off < 0 || (full && l.p > BNN_LAPLACE_LAST_LAYER_MAX))
		return bnn_fail(err, BNN_EUNSUPPORTED,
		                "laplace --structure full: layer '%s' of model '%s' has %ld "
		                "parameters (%ld outputs × %ld), more than the %d of a full "
		                "covariance: use --structure kron",
		                m->layers[m->features_layer].name, m->name, l.p, l.k, l.dd,
		                BNN_LAPLACE_LAST_LAYER_MAX);
	return BNN_OK;
}

/* What the fit works with. */
struct ll_fit {
	const bnn_model *m;
	struct train_ll_layer l;
	long npairs; /* blocks k <= l computed: K(K+1)/2, or K (bernoulli) */
	double *h;   /* P × P: the GGN, then Λ, then L⁻¹ (column-major) */
	float *phi;  /* LL_CHUNK × dd: the chunk's φ̃ */
	float *hw;   /* LL_CHUNK × npairs: H_i[k,l] of each pair */
	float *sc;   /* LL_CHUNK × dd: φ̃ scaled by one pair's H_i[k,l] */
	float *blk;  /* dd × dd: one block's sum over the chunk */
	struct train_ll_buffers bu;
	long rows; /* of the chunk */
};

static void ll_fit_free(struct ll_fit *f)
{
	free(f->h);
	free(f->phi);
	free(f->hw);
	free(f->sc);
	free(f->blk);
	train_laplace_ll_buffers_free(&f->bu);
}

/* The upper triangle of C = Aᵀ·B (dd × dd) for A, B of n rows whose
 * product is symmetric (B = diag(w)·A): by panels of LL_PANEL rows, each
 * from its diagonal on, about half the products of the whole matrix. */
static void ll_symmetric_product(long dd, long n, const float *a, const float *b, float *c)
{
	long r0;

	for (r0 = 0; r0 < dd; r0 += LL_PANEL) {
		long rows = dd - r0 < LL_PANEL ? dd - r0 : LL_PANEL;
		bnn_sgemm(1, 0, rows, dd - r0, n, 1.0f, a + r0, dd, b + r0, dd, 0.0f,
		          c + r0 * dd + r0, dd);
	}
}

/* Adds the chunk's blocks Φ̃ᵀ·diag(H[k,l])·Φ̃ to the GGN, and empties the
 * chunk.  Only blocks k <= l: the upper triangle of the row-major matrix,
 * which is the lower one of the column-major matrix LAPACK is given
 * (uplo "L"); the other triangle is never read. */
static void ll_flush(struct ll_fit *f)
{
	const long dd = f->l.dd, p = f->l.p, n = f->rows;
	long k, l, pair = 0, r, a, b;

	for (k = 0; k < f->l.k; k++)
		for (l = k; l < (f->npairs == f->l.k ? k + 1 : f->l.k); l++, pair++) {
			for (r = 0; r < n; r++)
				for (a = 0; a < dd; a++)
					f->sc[r * dd + a] =
					        f->hw[r * f->npairs + pair] * f->phi[r * dd + a];
			ll_symmetric_product(dd, n, f->phi, f->sc, f->blk);
			for (a = 0; a < dd; a++) {
				double *row = f->h + (k * dd + a) * p + l * dd;
				const float *v = f->blk + a * dd;
				for (b = 0; b < a;
				     b++) /* the block's lower triangle: its upper's mirror */
					row[b] += f->blk[b * dd + a];
				for (b = a; b < dd; b++)
					row[b] += v[b];
			}
		}
	f->rows = 0;
}

void train_laplace_ll_hessian(const bnn_model *m, const float *z, float *hw)
{
	const long kk = m->outputs;
	double zmax = z[0], norm = 0;
	long k, l, pair = 0;

	if (m->likelihood == BNN_LIKELIHOOD_BERNOULLI) {
		for (k = 0; k < kk; k++) {
			double s = 1.0 / (1.0 + exp(-(double)z[k]));
			hw[k] = (float)(s * (1 - s));
		}
		return;
	}
	for (k = 1; k < kk; k++)
		zmax = z[k] > zmax ? z[k] : zmax;
	for (k = 0; k < kk; k++)
		norm += exp((double)z[k] - zmax);
	for (k = 0; k < kk; k++) {
		double pk = exp((double)z[k] - zmax) / norm;
		for (l = k; l < kk; l++, pair++) {
			double pl = exp((double)z[l] - zmax) / norm;
			hw[pair] = (float)(l == k ? pk * (1 - pk) : -pk * pl);
		}
	}
}

/* One example's φ̃ and H[k,l] of its logits z into the chunk. */
static void ll_add_row(struct ll_fit *f, const float *feat, const float *z)
{
	const long dd = f->l.dd;
	float *phi = f->phi + f->rows * dd, *hw = f->hw + f->rows * f->npairs;

	memcpy(phi, feat, (size_t)f->l.d * sizeof *phi);
	if (dd > f->l.d)
		phi[f->l.d] = 1.0f;
	train_laplace_ll_hessian(f->m, z, hw);
	if (++f->rows == LL_CHUNK)
		ll_flush(f);
}

double train_laplace_ll_pass(const bnn_state *st, const bnn_dataset *ds, long batch,
                             const struct train_ll_buffers *bu, train_ll_rows rows, void *ctx)
{
	const bnn_model *m = st->model;
	double nll = 0;
	long i0;

	for (i0 = 0; i0 < ds->n; i0 += batch) {
		long b = ds->n - i0 < batch ? ds->n - i0 : batch;
		bnn_pass p;
		memset(&p, 0, sizeof p);
		p.w = st->params;
		p.x = ds->x + i0 * m->inputs;
		p.y = ds->y + i0 * m->targets;
		p.batch = b;
		p.ws = bu->ws;
		p.out = bu->z;
		p.stats = st->stats; /* train = 0: the network as it predicts */
		p.features = bu->feat;
		nll += m->pass(&p);
		rows(ctx, bu->feat, bu->z, b);
	}
	return nll;
}

/* A batch's examples into the chunk (train_ll_rows). */
static void ll_add_rows(void *ctx, const float *feat, const float *z, long b)
{
	struct ll_fit *f = ctx;
	long r;

	for (r = 0; r < b; r++)
		ll_add_row(f, feat + r * f->m->features, z + r * f->m->outputs);
}

/* The GGN over ds into f->h; returns the NLL at θ*. */
static double ll_accumulate(struct ll_fit *f, const bnn_state *st, const bnn_dataset *ds,
                            long batch)
{
	double nll = train_laplace_ll_pass(st, ds, batch, &f->bu, ll_add_rows, f);

	if (f->rows > 0)
		ll_flush(f);
	return nll;
}

/* The δ of --prior-precision auto: the marginal likelihood's maximiser
 * for the eigenvalues of the GGN (theta: the layer's θ*, P floats). */
static int ll_best_delta(const double *g, long p, const float *theta, double nll, double *delta,
                         double *logz, bnn_err *err)
{
	double *a = malloc((size_t)(p * p) * sizeof *a), *w = malloc((size_t)p * sizeof *w);
	double *work = NULL, q;
	int n = (int)p, lwork = -1, liwork = -1, iw, info = 0, rc = BNN_OK, *iwork = NULL;
	long j;

	if (!a || !w) {
		rc = bnn_fail(err, BNN_ENOMEM, "out of memory for the GGN's eigenvalues");
		goto done;
	}
	memcpy(a, g, (size_t)(p * p) * sizeof *a);
	dsyevd_("N", "L", &n, a, &n, w, &q, &lwork, &iw, &liwork, &info, 1, 1);
	lwork = (int)q;
	liwork = iw;
	work = malloc((size_t)(lwork + 1) * sizeof *work);
	iwork = malloc((size_t)(liwork + 1) * sizeof *iwork);
	if (!work || !iwork) {
		rc = bnn_fail(err, BNN_ENOMEM, "out of memory for the GGN's eigenvalues");
		goto done;
	}
	dsyevd_("N", "L", &n, a, &n, w, work, &lwork, iwork, &liwork, &info, 1, 1);
	if (info != 0) {
		rc = bnn_fail(
		        err, BNN_EINVAL,
		        "laplace --weights last-layer: the GGN's eigenvalues did not converge "
		        "(LAPACK dsyevd info %d)",
		        info);
		goto done;
	}
	for (j = 0; j < p; j++) /* positive semi-definite: rounding only below 0 */
		w[j] = w[j] > 0 ? w[j] : 0;
	*delta = bnn_laplace_best_delta(p, theta, w);
	*logz = bnn_laplace_log_marglik(p, theta, w, nll, *delta);
done:
	free(a);
	free(w);
	free(work);
	free(iwork);
	return rc;
}

/* The covariance's diagonal blocks Σ_kk = Σ_{i >= k·dd} L⁻¹[i, k·dd + a]·
 * L⁻¹[i, k·dd + b], from the packed rows of L⁻¹ (P(P + 1)/2 floats). */
static int ll_blocks(const struct train_ll_layer *l, const float *chol, float *blocks)
{
	const long dd = l->dd, p = l->p;
	long k, i, a;
	float *slab = bnn_floats_alloc(p * dd);

	if (!slab)
		return -1;
	for (k = 0; k < l->k; k++) {
		long c0 = k * dd, rows = p - c0;
		for (i = c0; i < p; i++) { /* row i of L⁻¹, columns c0 .. c0 + dd */
			const float *row = chol + i * (i + 1) / 2;
			for (a = 0; a < dd; a++)
				slab[(i - c0) * dd + a] = c0 + a <= i ? row[c0 + a] : 0.0f;
		}
		bnn_sgemm(1, 0, dd, dd, rows, 1.0f, slab, dd, slab, dd, 0.0f, blocks + k * dd * dd,
		          dd);
	}
	free(slab);
	return 0;
}

/* Λ's Cholesky factor and its inverse in f->h (column-major lower), packed
 * into p->chol, σ of the layer's parameters into sigma; log det Λ. */
static int ll_factor(struct ll_fit *f, bnn_posthoc *p, float *sigma, double *logdet, bnn_err *err)
{
	const long n = f->l.p;
	int ni = (int)n, info = 0;
	long i, j;

	dpotrf_("L", &ni, f->h, &ni, &info, 1);
	if (info != 0)
		return bnn_fail(err, BNN_EINVAL,
		                "laplace --weights last-layer: the posterior precision is not "
		                "positive definite (LAPACK dpotrf info %d)",
		                info);
	*logdet = 0;
	for (i = 0; i < n; i++)
		*logdet += 2 * log(f->h[i + i * n]);
	dtrtri_("L", "N", &ni, f->h, &ni, &info, 1, 1);
	if (info != 0)
		return bnn_fail(err, BNN_EINVAL,
		                "laplace --weights last-layer: the Cholesky factor is singular "
		                "(LAPACK dtrtri info %d)",
		                info);
	p->params = n;
	p->chol = bnn_floats_alloc(n * (n + 1) / 2);
	p->blocks = bnn_floats_alloc(f->l.k * f->l.dd * f->l.dd);
	if (!p->chol || !p->blocks)
		return bnn_fail(err, BNN_ENOMEM, "out of memory for the Laplace posterior");
	for (i = 0; i < n; i++)
		for (j = 0; j <= i; j++)
			p->chol[i * (i + 1) / 2 + j] = (float)f->h[i + j * n];
	for (j = 0; j < n; j++) { /* σ_j² = Σ_jj = Σ_{i >= j} L⁻¹[i,j]² */
		double s = 0;
		for (i = j; i < n; i++)
			s += f->h[i + j * n] * f->h[i + j * n];
		sigma[train_laplace_ll_index(&f->l, j / f->l.dd, j % f->l.dd)] = (float)sqrt(s);
	}
	if (ll_blocks(&f->l, p->chol, p->blocks))
		return bnn_fail(err, BNN_ENOMEM, "out of memory for the Laplace posterior");
	return BNN_OK;
}

static int ll_alloc(struct ll_fit *f, const bnn_model *m, long batch)
{
	const long dd = f->l.dd;

	f->m = m;
	f->npairs = m->likelihood == BNN_LIKELIHOOD_BERNOULLI ? f->l.k : f->l.k * (f->l.k + 1) / 2;
	f->h = calloc((size_t)(f->l.p * f->l.p), sizeof *f->h);
	f->phi = bnn_floats_alloc(LL_CHUNK * dd);
	f->hw = bnn_floats_alloc(LL_CHUNK * f->npairs);
	f->sc = bnn_floats_alloc(LL_CHUNK * dd);
	f->blk = bnn_floats_alloc(dd * dd);
	return f->h && f->phi && f->hw && f->sc && f->blk &&
	                       !train_laplace_ll_buffers_alloc(&f->bu, m, batch)
	               ? 0
	               : -1;
}

int train_laplace_ll_buffers_alloc(struct train_ll_buffers *bu, const bnn_model *m, long batch)
{
	bu->ws = bnn_floats_alloc((long)m->workspace_floats(batch) + 1);
	bu->z = bnn_floats_alloc(batch * m->outputs);
	bu->feat = bnn_floats_alloc(batch * m->features);
	return bu->ws && bu->z && bu->feat ? 0 : -1;
}

void train_laplace_ll_buffers_free(struct train_ll_buffers *bu)
{
	free(bu->ws);
	free(bu->z);
	free(bu->feat);
}

int train_laplace_last_layer(bnn_state *st, const bnn_dataset *ds, const bnn_laplace_options *o,
                             bnn_laplace_report *rep, bnn_err *err)
{
	const bnn_model *m = st->model;
	struct ll_fit f;
	struct timespec t0;
	bnn_posthoc *p = NULL;
	float *theta = NULL, *sigma = NULL;
	double nll, delta, logz = 0, logdet = 0, sq = 0;
	long batch, j;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&f, 0, sizeof f);
	train_laplace_ll_layer(m, &f.l);
	batch = o->batch < ds->n ? o->batch : ds->n;
	p = calloc(1, sizeof *p);
	theta = bnn_floats_alloc(f.l.p);
	sigma = calloc((size_t)m->nparams, sizeof *sigma);
	if (!p || !theta || !sigma || ll_alloc(&f, m, batch)) {
		rc = bnn_fail(err, BNN_ENOMEM,
		              "out of memory for the last-layer Laplace posterior (%ld × %ld "
		              "doubles)",
		              f.l.p, f.l.p);
		goto done;
	}
	for (j = 0; j < f.l.p; j++) {
		theta[j] = st->params[train_laplace_ll_index(&f.l, j / f.l.dd, j % f.l.dd)];
		sq += (double)theta[j] * (double)theta[j];
	}
	nll = ll_accumulate(&f, st, ds, batch);
	delta = o->prior_precision;
	if (isnan(delta) && (rc = ll_best_delta(f.h, f.l.p, theta, nll, &delta, &logz, err)))
		goto done;
	for (j = 0; j < f.l.p; j++)
		f.h[j * f.l.p + j] += delta;
	if ((rc = ll_factor(&f, p, sigma, &logdet, err)))
		goto done;
	if (!isnan(o->prior_precision))
		logz = train_laplace_log_marglik(f.l.p, sq, logdet, nll, delta);
	train_laplace_finish(st, p, sigma,
	                     &(struct train_laplace_fit){ .kind = BNN_POSTHOC_LAPLACE_LAST_LAYER,
	                                                  .hessian = "ggn",
	                                                  .delta = delta,
	                                                  .nll = nll,
	                                                  .log_marglik = logz,
	                                                  .examples = ds->n,
	                                                  .t0 = t0 },
	                     rep);
	p = NULL;
	sigma = NULL;
done:
	bnn_posthoc_free(p);
	free(theta);
	free(sigma);
	ll_fit_free(&f);
	return rc;
}

/* ---- the checkpoint record ------------------------------------------------ */

int train_laplace_ll_add(bnn_ckpt *ck, const bnn_posthoc *p)
{
	return bnn_ckpt_add_f32(ck, "posterior.chol", p->chol, p->params * (p->params + 1) / 2);
}

int train_laplace_ll_record_layer(const char *path, const bnn_model *m, const bnn_posthoc *p,
                                  struct train_ll_layer *l, bnn_err *err)
{
	if (m->features <= 0)
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: section 'posterior': a last-layer Laplace posterior, and the "
		                "output node '%s' of model '%s' is not a dense layer",
		                path, m->output_node ? m->output_node : "?", m->name);
	train_laplace_ll_layer(m, l);
	if (p->params != l->p)
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: section 'posterior': 'params' is %ld, and layer '%s' of model "
		                "'%s' has %ld",
		                path, p->params, m->layers[m->features_layer].name, m->name, l->p);
	return BNN_OK;
}

int train_laplace_ll_load(const bnn_ckpt *ck, const char *text, const char *path,
                          const bnn_model *m, bnn_posthoc *p, bnn_err *err)
{
	struct train_ll_layer l;
	const float *chol;
	long n = 0, i, want;
	int rc;

	(void)text;
	rc = train_laplace_ll_record_layer(path, m, p, &l, err);
	if (rc)
		return rc;
	want = l.p * (l.p + 1) / 2;
	chol = bnn_ckpt_find_f32(ck, "posterior.chol", &n);
	if (!chol || n != want)
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: section 'posterior.chol' has %ld values, %ld parameters need "
		                "%ld",
		                path, n, l.p, want);
	if ((i = train_first_bad(chol, n, 0)) >= 0)
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: section 'posterior.chol': value %ld is %g, not finite", path,
		                i, (double)chol[i]);
	for (i = 0; i < l.p; i++)
		if (!(chol[i * (i + 3) / 2] > 0))
			return bnn_fail(
			        err, BNN_EFORMAT,
			        "%s: section 'posterior.chol': diagonal entry %ld is %g, not "
			        "> 0",
			        path, i, (double)chol[i * (i + 3) / 2]);
	p->chol = bnn_floats_alloc(n);
	p->blocks = bnn_floats_alloc(l.k * l.dd * l.dd);
	if (!p->chol || !p->blocks)
		return bnn_fail(err, BNN_ENOMEM, "out of memory loading %s", path);
	memcpy(p->chol, chol, (size_t)n * sizeof *chol);
	if (ll_blocks(&l, p->chol, p->blocks))
		return bnn_fail(err, BNN_ENOMEM, "out of memory loading %s", path);
	return BNN_OK;
}

/* ---- prediction ------------------------------------------------------------ */

void train_laplace_ll_sample(const bnn_state *st, float *theta, bnn_rng *rng)
{
	const bnn_posthoc *p = st->posthoc;
	struct train_ll_layer l;
	float e[64];
	double *x;
	long i, j;

	train_laplace_ll_layer(st->model, &l);
	x = calloc((size_t)l.p, sizeof *x);
	if (!x) /* no sample: the mean (the caller's buffers are allocated) */
		return;
	for (i = 0; i < l.p; i++) { /* x = L⁻ᵀ·ε: x_j = Σ_{i >= j} L⁻¹[i,j]·ε_i */
		const float *row = p->chol + i * (i + 1) / 2;
		if (i % 64 == 0)
			bnn_rng_normal(rng, e, 64);
		for (j = 0; j <= i; j++)
			x[j] += (double)row[j] * e[i % 64];
	}
	for (j = 0; j < l.p; j++) {
		long at = train_laplace_ll_index(&l, j / l.dd, j % l.dd);
		theta[at] = (float)((double)st->params[at] + x[j]);
	}
	free(x);
}

void train_laplace_ll_logits(const bnn_state *st, const float *theta, const float *phi, long b,
                             float *z)
{
	struct train_ll_layer l;
	long r, k;

	train_laplace_ll_layer(st->model, &l);
	bnn_sgemm(0, 1, b, l.k, l.d, 1.0f, phi, l.d, theta + l.w_off, l.d, 0.0f, z, l.k);
	for (r = 0; l.b_off >= 0 && r < b; r++)
		for (k = 0; k < l.k; k++)
			z[r * l.k + k] += theta[l.b_off + k];
}

long train_laplace_ll_scratch(const bnn_model *m, long b)
{
	return b * m->features + b * 2 * (m->features + 1) + m->outputs; /* kron: K more */
}

void train_laplace_ll_probit(const bnn_state *st, float *phi, float *z, long b)
{
	struct train_ll_layer l;
	float *pt, *t;
	long k, r, a;

	train_laplace_ll_layer(st->model, &l);
	pt = phi + b * l.d;
	t = pt + b * l.dd;
	for (r = 0; r < b; r++) {
		memcpy(pt + r * l.dd, phi + r * l.d, (size_t)l.d * sizeof *pt);
		if (l.dd > l.d)
			pt[r * l.dd + l.d] = 1.0f;
	}
	for (k = 0; k < l.k; k++) { /* Σ_f[k,k] = φ̃ᵀ·Σ_kk·φ̃, row by row */
		bnn_sgemm(0, 0, b, l.dd, l.dd, 1.0f, pt, l.dd,
		          st->posthoc->blocks + k * l.dd * l.dd, l.dd, 0.0f, t, l.dd);
		for (r = 0; r < b; r++) {
			double v = 0;
			for (a = 0; a < l.dd; a++)
				v += (double)t[r * l.dd + a] * (double)pt[r * l.dd + a];
			v = v > 0 ? v : 0;
			z[r * l.k + k] =
			        (float)((double)z[r * l.k + k] / sqrt(1 + TRAIN_LL_PI_8 * v));
		}
	}
}
