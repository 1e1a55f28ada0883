/*
 * laplace.c: the diagonal Laplace posterior (runtime/train/laplace.c,
 * docs/laplace.md) on the tiny model t/models/rt_blobs.bnn (4 inputs,
 * 8 tanh units, 3 classes: 67 parameters), against a brute force in
 * double: each example's Jacobian J_i of the logits in the parameters,
 * written out analytically for this network, gives
 *   the empirical Fisher  Σ_i (J_iᵀ(p_i − e_{y_i}))²  and
 *   the GGN diagonal      Σ_i diag(J_iᵀ (diag p_i − p_i p_iᵀ) J_i).
 * bnn_laplace's precision minus δ must be the first with --fisher
 * empirical (float sums: 1e-4 relative) and the second, within Monte-Carlo
 * error, with the MC Fisher and many label draws.  Also: the prior
 * precision chosen by the marginal likelihood (the default) against a
 * grid, the checkpoint round trip (same bytes), prediction sampling the
 * posterior, and the refusals with their exact messages.  The library's
 * default fit is the last layer's (t/laplace_last_layer.c): every test
 * here sets last_layer 0 (all_weights).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blobs.h"
#include "bnn.h"
#include "rt_bayes.h"
#include "rt_blobs.h"
#include "tap.h"

#define NP  67 /* rt_blobs: 8×4 + 8 + 3×8 + 3 */
#define NEX 24

/* Offsets of rt_blobs's tensors, checked against the descriptor. */
#define W1 0
#define B1 32
#define W2 40
#define B2 64

static void check_layout(const bnn_model *m)
{
	ok(m->nparams == NP && m->tensors[0].offset == W1 && m->tensors[1].offset == B1 &&
	           m->tensors[2].offset == W2 && m->tensors[3].offset == B2 &&
	           m->tensors[0].shape[0] == 8 && m->tensors[0].shape[1] == 4,
	   "rt_blobs's layout is the one the brute force assumes");
}

/* J (3 × NP): the logits' Jacobian at example x; p: the softmax. */
static void jacobian(const float *w, const float *x, double J[3][NP], double p[3])
{
	double h[8], z[3], zmax, norm = 0;
	int u, k, c;

	memset(J, 0, sizeof(double) * 3 * NP);
	for (u = 0; u < 8; u++) {
		double a = w[B1 + u];
		for (k = 0; k < 4; k++)
			a += (double)w[W1 + u * 4 + k] * x[k];
		h[u] = tanh(a);
	}
	for (c = 0; c < 3; c++) {
		z[c] = w[B2 + c];
		for (u = 0; u < 8; u++)
			z[c] += (double)w[W2 + c * 8 + u] * h[u];
		for (u = 0; u < 8; u++) {
			double dh = (1 - h[u] * h[u]) * w[W2 + c * 8 + u];
			J[c][W2 + c * 8 + u] = h[u];
			J[c][B1 + u] = dh;
			for (k = 0; k < 4; k++)
				J[c][W1 + u * 4 + k] = dh * x[k];
		}
		J[c][B2 + c] = 1;
	}
	zmax = fmax(z[0], fmax(z[1], z[2]));
	for (c = 0; c < 3; c++)
		norm += exp(z[c] - zmax);
	for (c = 0; c < 3; c++)
		p[c] = exp(z[c] - zmax) / norm;
}

/* Example x's squared gradient of parameter j at label c: (J_jᵀ(p − e_c))². */
static double squared_gradient(double J[3][NP], const double p[3], int j, int c)
{
	double g = 0;
	int a;

	for (a = 0; a < 3; a++)
		g += J[a][j] * (p[a] - (a == c));
	return g * g;
}

/* The brute force over ds: the empirical Fisher ef, the GGN diagonal ggn,
 * and mcvar, the variance of one MC Fisher draw per example (label c with
 * probability p_c) summed over the examples. */
static void brute_force(const float *w, const bnn_dataset *ds, double *ef, double *ggn,
                        double *mcvar)
{
	double J[3][NP], p[3];
	long i;
	int j, a, b;

	memset(ef, 0, NP * sizeof *ef);
	memset(ggn, 0, NP * sizeof *ggn);
	memset(mcvar, 0, NP * sizeof *mcvar);
	for (i = 0; i < ds->n; i++) {
		jacobian(w, ds->x + i * 4, J, p);
		for (j = 0; j < NP; j++) {
			double m = 0, m2 = 0;
			for (a = 0; a < 3; a++) {
				double v = squared_gradient(J, p, j, a);
				m += p[a] * v;
				m2 += p[a] * v * v;
				for (b = 0; b < 3; b++) /* Λ = diag p − p pᵀ */
					ggn[j] +=
					        J[a][j] * ((a == b) * p[a] - p[a] * p[b]) * J[b][j];
			}
			ef[j] += squared_gradient(J, p, j, (int)ds->y[i]);
			mcvar[j] += m2 - m * m;
		}
	}
}

/* h_j = 1/σ_j² − δ, the GGN part of a Laplace state's precision. */
static void precision_minus_prior(const bnn_state *st, double delta, double *h)
{
	int j;

	for (j = 0; j < NP; j++)
		h[j] = 1.0 / ((double)st->sigma[j] * st->sigma[j]) - delta;
}

/* A state of rt_blobs trained a few epochs by Adam (so p is not uniform). */
static void trained_state(bnn_state *st, const bnn_dataset *train)
{
	bnn_train_options o = bnn_train_defaults();
	bnn_err err;

	o.epochs = 5;
	o.batch = 16;
	o.schedule.lr = 0.05;
	if (bnn_state_init(st, &rt_blobs_model, 3, &err) ||
	    bnn_train(st, &(bnn_train_io){ .train = train }, &o, &err))
		tap_bail_out("training rt_blobs: %s", err.message);
}

/* The options of the diagonal fit this file checks: the library's
 * defaults with every weight (their default is the last layer). */
static bnn_laplace_options all_weights(void)
{
	bnn_laplace_options o = bnn_laplace_defaults();

	o.last_layer = 0;
	return o;
}

static int laplace_of(const bnn_state *from, bnn_state *st, const bnn_dataset *ds,
                      const bnn_laplace_options *o, bnn_laplace_report *rep, bnn_err *err)
{
	bnn_state_free(st);
	if (bnn_state_load(st, &rt_blobs_model, blobs_tmp_path("p.ckpt"), err))
		tap_bail_out("loading: %s", err->message);
	(void)from;
	return bnn_laplace(st, ds, o, rep, err);
}

static void test_precision(const bnn_state *point, const bnn_dataset *ds)
{
	bnn_laplace_options o = all_weights();
	bnn_laplace_report rep;
	bnn_state st;
	bnn_err err;
	double ef[NP], ggn[NP], mcvar[NP], h[NP], worst = 0, diff = 0;
	int j, rc, bad = 0;

	memset(&st, 0, sizeof st);
	brute_force(point->params, ds, ef, ggn, mcvar);
	for (j = 0; j < NP; j++)
		diff = fmax(diff, fabs(ef[j] - ggn[j]) / (ggn[j] + 1e-12));
	ok(diff > 0.1, "the empirical Fisher and the GGN differ here (worst %.3g relative)", diff);

	o.empirical = 1;
	o.prior_precision = 2;
	o.batch = 7; /* batches of 7, 7, 7 and 3 */
	rc = laplace_of(point, &st, ds, &o, &rep, &err);
	is_int(rc, BNN_OK, "laplace --fisher empirical: %s", rc ? err.message : "ok");
	precision_minus_prior(&st, 2, h);
	for (j = 0; j < NP; j++)
		if (fabs(h[j] - ef[j]) > 1e-4 * ef[j] + 1e-6) {
			if (!bad++)
				tap_diag("parameter %d: %.9g, brute force %.9g", j, h[j], ef[j]);
		}
	is_int(bad, 0, "precision − δ is Σ_i g_i² (the empirical Fisher) on all %d parameters", NP);
	is_str(st.posthoc ? st.posthoc->hessian : "", "emp_fisher", "the record says emp_fisher");
	ok(st.posthoc && st.posthoc->kind == BNN_POSTHOC_LAPLACE && st.posthoc->examples == NEX &&
	           st.posthoc->prior_precision == 2,
	   "kind laplace, %d examples, δ 2", NEX);

	o = all_weights();
	o.prior_precision = 1; /* the default is auto */
	o.samples = 20000;
	o.seed = 5;
	rc = laplace_of(point, &st, ds, &o, &rep, &err);
	is_int(rc, BNN_OK, "laplace --fisher mc with 20000 draws: %s", rc ? err.message : "ok");
	precision_minus_prior(&st, 1, h);
	/* the estimate's standard error is √(mcvar/S): within 5 of them (and
	 * float rounding), for every parameter */
	for (j = 0; j < NP; j++)
		worst = fmax(worst, fabs(h[j] - ggn[j]) / (sqrt(mcvar[j] / (double)o.samples) +
		                                           1e-5 * ggn[j] + 1e-9));
	tap_diag("MC Fisher against the GGN: the worst parameter is %.2f standard errors off",
	         worst);
	ok(worst < 5, "the MC Fisher is the GGN diagonal within 5 Monte-Carlo standard errors");
	is_str(st.posthoc ? st.posthoc->hessian : "", "mc_fisher", "the record says mc_fisher");
	bnn_state_free(&st);
}

static void test_marglik(const bnn_state *point, const bnn_dataset *ds)
{
	bnn_laplace_options o = all_weights();
	bnn_laplace_report rep;
	bnn_state st;
	bnn_err err;
	double h[NP], best = -INFINITY, argbest = 0, d;
	int rc;

	memset(&st, 0, sizeof st);
	ok(isnan(o.prior_precision), "the default prior precision is auto (NaN)");
	ok(bnn_laplace_defaults().last_layer == 1 &&
	           bnn_laplace_defaults().structure == BNN_LAPLACE_KRON,
	   "the default fit is the last layer's, Kronecker-factored (the driver's)");
	o.empirical = 1;
	rc = laplace_of(point, &st, ds, &o, &rep, &err);
	is_int(rc, BNN_OK, "laplace with the default prior precision, auto: %s",
	       rc ? err.message : "ok");
	precision_minus_prior(&st, rep.prior_precision, h);
	for (d = 1e-3; d < 1e3; d *= 1.01) {
		double v = bnn_laplace_log_marglik(NP, st.params, h, rep.nll, d);
		if (v > best) {
			best = v;
			argbest = d;
		}
	}
	is_rel(rep.prior_precision, argbest, 0.011, "auto δ %.6g is the grid's best %.6g",
	       rep.prior_precision, argbest);
	ok(rep.log_marglik >= best - 1e-9,
	   "and its log marginal likelihood %.9g >= the grid's %.9g", rep.log_marglik, best);
	bnn_state_free(&st);
}

static void test_round_trip(const bnn_dataset *ds)
{
	bnn_laplace_options o = all_weights();
	bnn_state st, back;
	bnn_err err;
	unsigned char *a, *b;
	long na, nb;
	float probs[NEX * 3], p0[NEX * 3];
	double nll_mean = 0, nll_mc = 0;
	int rc;

	memset(&st, 0, sizeof st);
	o.prior_precision = 30;
	if (laplace_of(NULL, &st, ds, &o, NULL, &err) ||
	    bnn_state_save(&st, blobs_tmp_path("l.ckpt"), &err))
		tap_bail_out("laplace: %s", err.message);
	rc = bnn_state_load(&back, &rt_blobs_model, blobs_tmp_path("l.ckpt"), &err);
	is_int(rc, BNN_OK, "the Laplace checkpoint loads: %s", rc ? err.message : "ok");
	ok(!rc && back.posthoc && back.posthoc->kind == BNN_POSTHOC_LAPLACE &&
	           back.posthoc->prior_precision == 30 &&
	           strcmp(back.posthoc->hessian, "mc_fisher") == 0 &&
	           blobs_same_floats(back.sigma, st.sigma, NP) &&
	           blobs_same_floats(back.params, st.params, NP),
	   "with its record, σ and mean");
	ok(!rc && bnn_state_is_stochastic(&back), "and it is stochastic (eval samples it)");
	if (!rc && bnn_state_save(&back, blobs_tmp_path("l2.ckpt"), &err))
		tap_bail_out("save: %s", err.message);
	a = blobs_file_bytes(blobs_tmp_path("l.ckpt"), &na);
	b = blobs_file_bytes(blobs_tmp_path("l2.ckpt"), &nb);
	ok(a && b && na == nb && memcmp(a, b, (size_t)na) == 0,
	   "loading and saving it again gives the same %ld bytes", na);
	free(a);
	free(b);
	rc = bnn_predict(&back, ds, 0, 1, &(bnn_prediction){ .probs = p0, .nll = &nll_mean },
	                 &err) ||
	     bnn_predict(&back, ds, 16, 1, &(bnn_prediction){ .probs = probs, .nll = &nll_mc },
	                 &err);
	ok(!rc && memcmp(probs, p0, sizeof p0) != 0,
	   "--mc 16 samples the posterior (NLL %.6f against %.6f at the mean)", nll_mc, nll_mean);
	bnn_state_free(&back);
	bnn_state_free(&st);
	unlink(blobs_tmp_path("l.ckpt"));
	unlink(blobs_tmp_path("l2.ckpt"));
}

static void test_refusals(const bnn_dataset *ds)
{
	bnn_laplace_options o = all_weights();
	bnn_state st, mf;
	bnn_dataset other;
	float x[2 * 5], y[2] = { 0, 1 };
	bnn_err err;
	int rc;

	memset(&st, 0, sizeof st);
	if (bnn_state_init(&mf, &rt_bayes_model, 1, &err))
		tap_bail_out("%s", err.message);
	rc = bnn_laplace(&mf, ds, &o, NULL, &err);
	is_int(rc, BNN_EUNSUPPORTED, "a meanfield model is refused");
	is_str(err.message,
	       "laplace needs a point network, and layer 'h_dense' of model 'rt_bayes' has a "
	       "meanfield posterior of its own",
	       "with the layer named");
	bnn_state_free(&mf);

	if (laplace_of(NULL, &st, ds, &o, NULL, &err))
		tap_bail_out("%s", err.message);
	rc = bnn_laplace(&st, ds, &o, NULL, &err);
	is_int(rc, BNN_EUNSUPPORTED, "a state with a Laplace posterior already is refused");
	is_str(err.message,
	       "laplace needs a point network, and this state has a laplace posterior already",
	       "with the reason");
	rc = bnn_train(&st, &(bnn_train_io){ .train = ds },
	               &(bnn_train_options[]){ bnn_train_defaults() }[0], &err);
	is_str(rc ? err.message : "",
	       "the state carries a laplace posterior, which training would not keep: start from "
	       "its parameters instead (train --init)",
	       "bnn_train refuses to train it");

	memset(x, 0, sizeof x);
	blobs_flat(&other, 2, 5, x, y);
	bnn_state_free(&st);
	if (bnn_state_load(&st, &rt_blobs_model, blobs_tmp_path("p.ckpt"), &err))
		tap_bail_out("%s", err.message);
	rc = bnn_laplace(&st, &other, &o, NULL, &err);
	is_int(rc, BNN_EMISMATCH, "data of another shape is refused");
	is_str(err.message,
	       "the data has 5 values per example but model 'rt_blobs' takes 4 (input 'x')",
	       "with both shapes");
	ok(st.sigma == NULL && st.posthoc == NULL, "and the state is left as it was");
	o.prior_precision = -1;
	rc = bnn_laplace(&st, ds, &o, NULL, &err);
	is_str(rc ? err.message : "", "the prior precision must be a number > 0 (or auto), not -1",
	       "a negative prior precision is refused");
	o = bnn_laplace_defaults();
	o.empirical = 1;
	rc = bnn_laplace(&st, ds, &o, NULL, &err);
	is_str(rc ? err.message : "",
	       "laplace: the empirical Fisher and label samples belong to the fit of all weights "
	       "(last_layer 0): the last layer's GGN is exact, with no label draws",
	       "the empirical Fisher with the default last layer is refused");
	o.empirical = 0;
	o.samples = 3;
	rc = bnn_laplace(&st, ds, &o, NULL, &err);
	is_int(rc, BNN_EINVAL, "and so are 3 label samples, with the same message");
	ok(st.sigma == NULL && st.posthoc == NULL, "and the state is left as it was");
	bnn_state_free(&st);
}

/* A Laplace checkpoint edited by hand: a bad record is refused by name. */
static void test_bad_records(void)
{
	static const struct {
		const char *text, *message;
	} cases[] = {
		{ "kind=gauss\n", "section 'posterior': kind 'gauss', and this library knows "
		                  "laplace, laplace_last_layer, laplace_kron and swag" },
		{ "kind=laplace_last_layer\nprior_precision=1\nhessian=mc_fisher\nexamples=3\n",
		  "section 'posterior': 'hessian' is missing or not ggn" },
		{ "kind=laplace_last_layer\nprior_precision=1\nhessian=ggn\nexamples=3\n",
		  "section 'posterior': 'params' is missing" },
		{ "kind=laplace_last_layer\nprior_precision=1\nhessian=ggn\nexamples=3\nparams=26\n",
		  "section 'posterior': 'params' is 26, and layer 'logits' of model 'rt_blobs' has 27" },
		{ "kind=laplace_kron\nprior_precision=1\nhessian=ggn\nexamples=3\nparams=27\n",
		  "section 'posterior': 'hessian' is missing or not kfac" },
		{ "kind=laplace_kron\nprior_precision=1\nhessian=kfac\nexamples=3\nparams=27\n",
		  "section 'posterior.a_vectors' has 0 values, layer 'logits' of model 'rt_blobs' "
		  "needs 81" },
		{ "kind=laplace\nhessian=mc_fisher\nexamples=3\n",
		  "section 'posterior': 'prior_precision' is missing" },
		{ "kind=laplace\nprior_precision=-2\nhessian=mc_fisher\nexamples=3\n",
		  "section 'posterior': 'prior_precision' is '-2', not a number > 0" },
		{ "kind=swag\nexamples=3\nrank=2\n",
		  "section 'posterior.dev' has 0 values, rank 2 needs 134" },
	};
	bnn_state st;
	bnn_ckpt *ck;
	bnn_err err;
	float sigma[NP], params[NP];
	char want[512];
	int i, rc;

	for (i = 0; i < NP; i++) {
		sigma[i] = 0.1f;
		params[i] = 0.01f * (float)i;
	}
	for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
		ck = bnn_ckpt_new(rt_blobs_model.fingerprint, rt_blobs_model.name);
		if (!ck || bnn_ckpt_add_f32(ck, "params", params, NP) ||
		    bnn_ckpt_add_f32(ck, "sigma", sigma, NP) ||
		    bnn_ckpt_add_text(ck, "posterior", cases[i].text) ||
		    bnn_ckpt_save(ck, blobs_tmp_path("bad.ckpt"), &err))
			tap_bail_out("writing bad.ckpt");
		bnn_ckpt_free(ck);
		rc = bnn_state_load(&st, &rt_blobs_model, blobs_tmp_path("bad.ckpt"), &err);
		snprintf(want, sizeof want, "%s: %s", blobs_tmp_path("bad.ckpt"), cases[i].message);
		is_str(rc ? err.message : "", want, "bad record %d refused", i);
	}
	/* without the record, a σ on a point layer is refused as before */
	ck = bnn_ckpt_new(rt_blobs_model.fingerprint, rt_blobs_model.name);
	if (!ck || bnn_ckpt_add_f32(ck, "params", params, NP) ||
	    bnn_ckpt_add_f32(ck, "sigma", sigma, NP) ||
	    bnn_ckpt_save(ck, blobs_tmp_path("bad.ckpt"), &err))
		tap_bail_out("writing bad.ckpt");
	bnn_ckpt_free(ck);
	rc = bnn_state_load(&st, &rt_blobs_model, blobs_tmp_path("bad.ckpt"), &err);
	ok(rc == BNN_EFORMAT && strstr(err.message, "only the tensors of meanfield layers"),
	   "a σ without the record is still refused");
	unlink(blobs_tmp_path("bad.ckpt"));
}

int main(void)
{
	bnn_dataset train, ds;
	bnn_state point;
	bnn_err err;

	/* the float products (not bfloat16's, within 0.8%) for exact sums */
	setenv("BNN_SQGRAD", "float", 1);
	blobs_tmpdir_make("laplace");
	bnn_set_threads(1);
	check_layout(&rt_blobs_model);
	blobs_make(&train, 300, 1);
	blobs_make(&ds, NEX, 2);
	trained_state(&point, &train);
	if (bnn_state_save(&point, blobs_tmp_path("p.ckpt"), &err))
		tap_bail_out("%s", err.message);
	test_precision(&point, &ds);
	test_marglik(&point, &ds);
	test_round_trip(&ds);
	test_refusals(&ds);
	test_bad_records();
	bnn_state_free(&point);
	bnn_dataset_free(&train);
	bnn_dataset_free(&ds);
	unlink(blobs_tmp_path("p.ckpt"));
	blobs_tmpdir_remove();
	return tap_done();
}
