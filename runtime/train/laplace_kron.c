/*
 * laplace_kron.c: last-layer Laplace with a Kronecker-factored GGN, the
 * default of `laplace` (--weights last-layer; docs/laplace.md).  The
 * full version (laplace_last_layer.c) forms the exact P × P GGN of the
 * output layer, about N·(d + 1)²·K(K + 1)/4 multiply-adds and a P³
 * factorisation, more than the training of the network it calibrates;
 * this one keeps the structure Laplace Redux (Daxberger et al. 2021,
 * section 3.2, its default "last-layer + KFAC") and Ritter et al. 2018
 * (section 3, eq. 5-7) use:
 * block (k, l) of the exact GGN, Σ_i H_i[k,l]·φ̃_i φ̃_iᵀ, is replaced by
 * the product of the means E[H[k,l]]·E[φ̃ φ̃ᵀ] times N,
 *
 *   GGN ≈ G ⊗ A,   A = Σ_i φ̃_i φ̃_iᵀ  (D × D),   G = (1/N) Σ_i H_i  (K × K)
 *
 * (Martens & Grosse 2015's independence assumption; the N goes to A, as
 * in Laplace Redux's code), parameters ordered output by output.  With
 * A = U_A diag(a) U_Aᵀ and G = U_G diag(g) U_Gᵀ, the posterior precision
 * G ⊗ A + δI has the eigenvectors U_G ⊗ U_A and the eigenvalues g_j·a_i + δ
 * (exactly, not Ritter's approximation of the prior's share), so
 *   log det = Σ_ij log(g_j a_i + δ)            any δ for O(K·D): the
 *                                             marginal likelihood's δ is
 *                                             bnn_laplace_best_delta's
 *   sample  = θ* + vec(U_G·E·U_Aᵀ),   E_ji = ε_ji / √(g_j a_i + δ)
 *   Σ_f[k,k] = Σ_j U_G[k,j]² Σ_i (U_Aᵀφ̃)_i² / (g_j a_i + δ)
 * the last the variance of logit k of the linearised predictive, for the
 * probit approximation (MacKay 1992; Immer et al. 2021, eq. 8), O(D² + K·D)
 * per example.  The fit is one forward pass and Φ̃ᵀΦ̃ (N·D² multiply-adds)
 * plus two small eigendecompositions; no P × P matrix is ever formed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bnn.h"
#include "bnn_gen/gemm.h"
#include "base/floats.h"
#include "train_internal.h"

/* LAPACK (OpenBLAS carries it), column-major, with the hidden lengths of
 * the character arguments last. */
void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w,
             double *work, const int *lwork, int *iwork, const int *liwork, int *info, size_t,
             size_t);

/* What the fit accumulates. */
struct kron_fit {
	const bnn_model *m;
	struct train_ll_layer l;
	double *a, *g; /* D × D and K × K sums */
	float *phi;    /* batch × D: the batch's φ̃ */
	float *blk;    /* D × D: the batch's Φ̃ᵀΦ̃ */
	float *hw;     /* the pairs of one example's Hessian */
};

/* A batch's features into A and its logits' Hessians into G
 * (train_ll_rows). */
static void kron_add_rows(void *ctx, const float *feat, const float *z, long b)
{
	struct kron_fit *f = ctx;
	const long d = f->l.d, dd = f->l.dd, kk = f->l.k, n = dd * dd;
	const int bern = f->m->likelihood == BNN_LIKELIHOOD_BERNOULLI;
	long r, i, k, l, pair;

	for (r = 0; r < b; r++) {
		memcpy(f->phi + r * dd, feat + r * d, (size_t)d * sizeof *f->phi);
		if (dd > d)
			f->phi[r * dd + d] = 1.0f;
	}
	bnn_sgemm(1, 0, dd, dd, b, 1.0f, f->phi, dd, f->phi, dd, 0.0f, f->blk, dd);
	for (i = 0; i < n; i++)
		f->a[i] += f->blk[i];
	for (r = 0; r < b; r++) {
		train_laplace_ll_hessian(f->m, z + r * kk, f->hw);
		for (k = 0, pair = 0; k < kk; k++)
			for (l = k; l < (bern ? k + 1 : kk); l++, pair++) {
				f->g[k * kk + l] += f->hw[pair];
				if (l != k)
					f->g[l * kk + k] += f->hw[pair];
			}
	}
}

/* The eigenvalues (w, ascending) and eigenvectors of the symmetric n × n
 * matrix a, which they overwrite: row j is eigenvector j (LAPACK's
 * column-major columns); eigenvalues below 0, rounding of a positive
 * semi-definite matrix, become 0. */
static int kron_eigen(double *a, long n, double *w, const char *what, bnn_err *err)
{
	int ni = (int)n, lwork = -1, liwork = -1, iw, info = 0, *iwork = NULL, rc = BNN_OK;
	double q, *work = NULL;
	long j;

	dsyevd_("V", "L", &ni, a, &ni, w, &q, &lwork, &iw, &liwork, &info, 1, 1);
	lwork = (int)q;
	liwork = iw;
	work = malloc((size_t)(lwork + 1) * sizeof *work);
	iwork = malloc((size_t)(liwork + 1) * sizeof *iwork);
	if (!work || !iwork) {
		rc = bnn_fail(err, BNN_ENOMEM, "out of memory for the eigenvectors of %s", what);
		goto done;
	}
	dsyevd_("V", "L", &ni, a, &ni, w, work, &lwork, iwork, &liwork, &info, 1, 1);
	if (info != 0) {
		rc = bnn_fail(err, BNN_EINVAL,
		              "laplace --weights last-layer: the eigenvectors of %s did not "
		              "converge (LAPACK dsyevd info %d)",
		              what, info);
		goto done;
	}
	for (j = 0; j < n; j++)
		w[j] = w[j] > 0 ? w[j] : 0;
done:
	free(work);
	free(iwork);
	return rc;
}

/* σ of the layer's parameters: the diagonal of the covariance,
 * Σ[(k,a),(k,a)] = Σ_j U_G[k,j]² Σ_i U_A[a,i]² / (g_j a_i + δ); -1: out of
 * memory. */
static int kron_sigma(const struct train_ll_layer *l, const double *ua, const double *av,
                      const double *ug, const double *gv, double delta, float *sigma)
{
	const long dd = l->dd, kk = l->k;
	long j, i, a, k;
	double *w = calloc((size_t)(kk * dd), sizeof *w); /* w[j][a] */

	if (!w)
		return -1;
	for (j = 0; j < kk; j++)
		for (i = 0; i < dd; i++) {
			double c = 1.0 / (gv[j] * av[i] + delta);
			for (a = 0; a < dd; a++)
				w[j * dd + a] += ua[i * dd + a] * ua[i * dd + a] * c;
		}
	for (k = 0; k < kk; k++)
		for (a = 0; a < dd; a++) {
			double s = 0;
			for (j = 0; j < kk; j++)
				s += ug[j * kk + k] * ug[j * kk + k] * w[j * dd + a];
			sigma[train_laplace_ll_index(l, k, a)] = (float)sqrt(s);
		}
	free(w);
	return 0;
}

/* The posterior record from the factors (doubles, rows the eigenvectors). */
static bnn_posthoc *kron_posthoc(const struct train_ll_layer *l, const double *ua, const double *av,
                                 const double *ug, const double *gv)
{
	bnn_posthoc *p = calloc(1, sizeof *p);
	long i;

	if (!p)
		return NULL;
	p->a_vec = bnn_floats_alloc(l->dd * l->dd);
	p->a_val = bnn_floats_alloc(l->dd);
	p->g_vec = bnn_floats_alloc(l->k * l->k);
	p->g_val = bnn_floats_alloc(l->k);
	if (!p->a_vec || !p->a_val || !p->g_vec || !p->g_val) {
		bnn_posthoc_free(p);
		return NULL;
	}
	for (i = 0; i < l->dd * l->dd; i++)
		p->a_vec[i] = (float)ua[i];
	for (i = 0; i < l->dd; i++)
		p->a_val[i] = (float)av[i];
	for (i = 0; i < l->k * l->k; i++)
		p->g_vec[i] = (float)ug[i];
	for (i = 0; i < l->k; i++)
		p->g_val[i] = (float)gv[i];
	p->params = l->p;
	return p;
}

/* The marginal likelihood's δ (o: NaN) or o's, and log Z at it, from the
 * P eigenvalues g_j·a_i of the GGN. */
static int kron_delta(const struct train_ll_layer *l, const bnn_state *st, const double *av,
                      const double *gv, double nll, double given, double *delta, double *logz)
{
	double *w = malloc((size_t)l->p * sizeof *w);
	float *theta = bnn_floats_alloc(l->p);
	long i, j;

	if (!w || !theta) {
		free(w);
		free(theta);
		return -1;
	}
	for (j = 0; j < l->k; j++)
		for (i = 0; i < l->dd; i++) {
			w[j * l->dd + i] = gv[j] * av[i];
			theta[j * l->dd + i] = st->params[train_laplace_ll_index(l, j, i)];
		}
	*delta = isnan(given) ? bnn_laplace_best_delta(l->p, theta, w) : given;
	*logz = bnn_laplace_log_marglik(l->p, theta, w, nll, *delta);
	free(w);
	free(theta);
	return 0;
}

int train_laplace_kron(bnn_state *st, const bnn_dataset *ds, const bnn_laplace_options *o,
                       bnn_laplace_report *rep, bnn_err *err)
{
	const bnn_model *m = st->model;
	struct kron_fit f;
	struct train_ll_buffers bu;
	struct timespec t0;
	bnn_posthoc *p = NULL;
	double *av = NULL, *gv = NULL, nll, delta = 0, logz = 0;
	float *sigma = NULL;
	long batch, i;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&f, 0, sizeof f);
	memset(&bu, 0, sizeof bu);
	f.m = m;
	train_laplace_ll_layer(m, &f.l);
	batch = o->batch < ds->n ? o->batch : ds->n;
	f.a = calloc((size_t)(f.l.dd * f.l.dd), sizeof *f.a);
	f.g = calloc((size_t)(f.l.k * f.l.k), sizeof *f.g);
	f.phi = bnn_floats_alloc(batch * f.l.dd);
	f.blk = bnn_floats_alloc(f.l.dd * f.l.dd);
	f.hw = bnn_floats_alloc(f.l.k * (f.l.k + 1) / 2);
	av = malloc((size_t)f.l.dd * sizeof *av);
	gv = malloc((size_t)f.l.k * sizeof *gv);
	sigma = calloc((size_t)m->nparams, sizeof *sigma);
	if (!f.a || !f.g || !f.phi || !f.blk || !f.hw || !av || !gv || !sigma ||
	    train_laplace_ll_buffers_alloc(&bu, m, batch)) {
		rc = bnn_fail(err, BNN_ENOMEM, "out of memory for the Kronecker factors");
		goto done;
	}
	nll = train_laplace_ll_pass(st, ds, batch, &bu, kron_add_rows, &f);
	for (i = 0; i < f.l.k * f.l.k; i++)
		f.g[i] /= (double)ds->n;
	if ((rc = kron_eigen(f.a, f.l.dd, av, "the features' factor A", err)) ||
	    (rc = kron_eigen(f.g, f.l.k, gv, "the logits' factor G", err)))
		goto done;
	if (kron_delta(&f.l, st, av, gv, nll, o->prior_precision, &delta, &logz) ||
	    !(p = kron_posthoc(&f.l, f.a, av, f.g, gv)) ||
	    kron_sigma(&f.l, f.a, av, f.g, gv, delta, sigma)) {
		bnn_posthoc_free(p);
		rc = bnn_fail(err, BNN_ENOMEM, "out of memory for the Kronecker factors");
		goto done;
	}
	train_laplace_finish(st, p, sigma,
	                     &(struct train_laplace_fit){ .kind = BNN_POSTHOC_LAPLACE_KRON,
	                                                  .hessian = "kfac",
	                                                  .delta = delta,
	                                                  .nll = nll,
	                                                  .log_marglik = logz,
	                                                  .examples = ds->n,
	                                                  .t0 = t0 },
	                     rep);
	sigma = NULL;
done:
	free(f.a);
	free(f.g);
	free(f.phi);
	free(f.blk);
	free(f.hw);
	free(av);
	free(gv);
	free(sigma);
	train_laplace_ll_buffers_free(&bu);
	return rc;
}

/* ---- the checkpoint record ------------------------------------------------ */

/* The four sections, their names and sizes for layer l. */
struct kron_section {
	const char *name;
	long size;
	int nonneg; /* eigenvalues */
};

static void kron_sections(const struct train_ll_layer *l, struct kron_section s[4])
{
	s[0] = (struct kron_section){ "posterior.a_vectors", l->dd * l->dd, 0 };
	s[1] = (struct kron_section){ "posterior.a_values", l->dd, 1 };
	s[2] = (struct kron_section){ "posterior.g_vectors", l->k * l->k, 0 };
	s[3] = (struct kron_section){ "posterior.g_values", l->k, 1 };
}

/* The section's floats of p. */
static float **kron_array(bnn_posthoc *p, int i)
{
	return i == 0 ? &p->a_vec : i == 1 ? &p->a_val : i == 2 ? &p->g_vec : &p->g_val;
}

int train_laplace_kron_add(bnn_ckpt *ck, const bnn_model *m, const bnn_posthoc *p)
{
	struct train_ll_layer l;
	struct kron_section s[4];
	int i, rc = BNN_OK;

	train_laplace_ll_layer(m, &l);
	kron_sections(&l, s);
	for (i = 0; i < 4 && !rc; i++)
		rc = bnn_ckpt_add_f32(ck, s[i].name, *kron_array((bnn_posthoc *)p, i), s[i].size);
	return rc;
}

int train_laplace_kron_load(const bnn_ckpt *ck, const char *path, const bnn_model *m,
                            bnn_posthoc *p, bnn_err *err)
{
	struct train_ll_layer l;
	struct kron_section s[4];
	const float *v;
	long n, bad;
	int i, rc;

	rc = train_laplace_ll_record_layer(path, m, p, &l, err);
	if (rc)
		return rc;
	kron_sections(&l, s);
	for (i = 0; i < 4; i++) {
		n = 0;
		v = bnn_ckpt_find_f32(ck, s[i].name, &n);
		if (!v || n != s[i].size)
			return bnn_fail(err, BNN_EFORMAT,
			                "%s: section '%s' has %ld values, layer '%s' of model '%s' "
			                "needs %ld",
			                path, s[i].name, n, m->layers[m->features_layer].name,
			                m->name, s[i].size);
		if ((bad = train_first_bad(v, n, s[i].nonneg)) >= 0)
			return bnn_fail(err, BNN_EFORMAT,
			                "%s: section '%s': value %ld is %g, not %s", path,
			                s[i].name, bad, (double)v[bad],
			                s[i].nonneg ? "finite and >= 0" : "finite");
		if (!(*kron_array(p, i) = bnn_floats_alloc(n)))
			return bnn_fail(err, BNN_ENOMEM, "out of memory loading %s", path);
		memcpy(*kron_array(p, i), v, (size_t)n * sizeof *v);
	}
	return BNN_OK;
}

/* ---- prediction ------------------------------------------------------------ */

void train_laplace_kron_sample(const bnn_state *st, float *theta, bnn_rng *rng)
{
	const bnn_posthoc *p = st->posthoc;
	struct train_ll_layer l;
	float *e;
	double *t;
	long j, i, a, k;

	train_laplace_ll_layer(st->model, &l);
	e = bnn_floats_alloc(l.p);
	t = calloc((size_t)l.p, sizeof *t);
	if (!e || !t) { /* no sample: the mean (the caller's buffers are allocated) */
		free(e);
		free(t);
		return;
	}
	bnn_rng_normal(rng, e, (size_t)l.p);
	for (j = 0; j < l.k; j++) /* T = E·U_Aᵀ, E_ji = ε_ji / √(g_j a_i + δ) */
		for (i = 0; i < l.dd; i++) {
			double c = (double)e[j * l.dd + i] /
			           sqrt((double)p->g_val[j] * p->a_val[i] + p->prior_precision);
			for (a = 0; a < l.dd; a++)
				t[j * l.dd + a] += c * p->a_vec[i * l.dd + a];
		}
	for (k = 0; k < l.k; k++) /* θ_k = θ*_k + Σ_j U_G[k,j]·T_j */
		for (a = 0; a < l.dd; a++) {
			long at = train_laplace_ll_index(&l, k, a);
			double x = 0;
			for (j = 0; j < l.k; j++)
				x += (double)p->g_vec[j * l.k + k] * t[j * l.dd + a];
			theta[at] = (float)((double)st->params[at] + x);
		}
	free(e);
	free(t);
}

void train_laplace_kron_probit(const bnn_state *st, float *phi, float *z, long b)
{
	const bnn_posthoc *p = st->posthoc;
	struct train_ll_layer l;
	float *pt, *t, *s;
	long r, i, j, k;

	train_laplace_ll_layer(st->model, &l);
	pt = phi + b * l.d;
	t = pt + b * l.dd;
	s = t + b * l.dd;
	for (r = 0; r < b; r++) {
		memcpy(pt + r * l.dd, phi + r * l.d, (size_t)l.d * sizeof *pt);
		if (l.dd > l.d)
			pt[r * l.dd + l.d] = 1.0f;
	}
	/* t[r, i] = (U_Aᵀ φ̃_r)_i */
	bnn_sgemm(0, 1, b, l.dd, l.dd, 1.0f, pt, l.dd, p->a_vec, l.dd, 0.0f, t, l.dd);
	for (r = 0; r < b; r++) {
		for (j = 0; j < l.k; j++) { /* s_j = Σ_i t_i² / (g_j a_i + δ) */
			double sj = 0;
			for (i = 0; i < l.dd; i++) {
				double ti = t[r * l.dd + i];
				sj += ti * ti /
				      ((double)p->g_val[j] * p->a_val[i] + p->prior_precision);
			}
			s[j] = (float)sj;
		}
		for (k = 0; k < l.k; k++) { /* Σ_f[k,k] = Σ_j U_G[k,j]² s_j */
			double v = 0;
			for (j = 0; j < l.k; j++)
				v += (double)p->g_vec[j * l.k + k] * p->g_vec[j * l.k + k] * s[j];
			z[r * l.k + k] =
			        (float)((double)z[r * l.k + k] / sqrt(1 + TRAIN_LL_PI_8 * v));
		}
	}
}
