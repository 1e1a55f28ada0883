/*
 * gen_bayes.c: TAP tests of the variational optimizers and Monte-Carlo
 * prediction driving generated models (t/models/rt_bayes.bnn, rt_drop.bnn,
 * rt_breg.bnn, rt_wide.bnn, rt_widept.bnn, compiled by bnnc for this
 * test): vogn, ivon, badam and bbb
 * train the mean-field blobs model past a clear accuracy margin with a
 * positive posterior σ on exactly the meanfield tensors; the same seed
 * gives the same bits; checkpoints carry σ and every optimizer slot; MC
 * dropout trains with Adam; the optimizer/family combinations that make no
 * sense are refused with their messages; bnn_predict's Monte-Carlo
 * averages (probabilities, the mixture mean and variance, the NLL by
 * log-mean-exp; a classifier's expected entropy and energy score) equal
 * the same computation done here sample by sample, from the documented
 * (seed, sample, batch) streams; VOGN's beta2 is line 20's β2 (β2 = 0
 * keeps s at s0, one step is linear in β2); prediction (the expected
 * entropy and energy included), ranges of batches and bnn_model_outputs give the same bits with 1, 2 and 3
 * threads; two steps of every optimizer on a 42039-parameter model give
 * the same bits with 1, 2 and 3 threads; the posterior CSV export; the
 * defaults a short run scales (vogn's lr, ivon's h0), by hand.  The update rules themselves are checked
 * against hand computations in t/runtime_variational.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blobs.h"
#include "bnn.h"
#include "rt_bayes.h"
#include "rt_breg.h"
#include "rt_drop.h"
#include "rt_wide.h"
#include "rt_widept.h"
#include "tap.h"

/*
 * Is the final σ of vogn or ivon the one their state implies (the trainer
 * derives it at the end of every epoch when mc = 1)?  With n training
 * examples, τ = 1, vogn's default ρ and δ = ρp (p the tensor's prior
 * precision):
 *   vogn  σ = 1/√(ρN(s + δ/(ρN))) = 1/√(ρ(N s + p))   (Alg. 1 line 9)
 *   ivon  σ = 1/√(λ(h + δ)), λ = N, δ = p/λ: 1/√(N h + p)   (line 8)
 * so σ²·r·(N·opt[1] + p) = 1 up to rounding for every stochastic
 * parameter, with r = ρ for vogn and 1 for ivon.
 */
static int sigma_from_state(const bnn_state *st, double n, double r)
{
	const bnn_model *m = st->model;
	int i;
	long j;

	for (i = 0; i < m->ntensors; i++) {
		const bnn_tensor *t = &m->tensors[i];
		const bnn_layer *l = &m->layers[t->layer];
		if (!(l->caps & BNN_CAP_SIGMA))
			continue;
		for (j = t->offset; j < t->offset + t->size; j++) {
			double s = st->sigma[j];
			if (fabs(s * s * r * (n * st->opt[1][j] + l->prior_precision) - 1) > 1e-5)
				return 0;
		}
	}
	return 1;
}

/* Trains rt_bayes with one optimizer, K MC samples per step and (bbb) the
 * local reparameterisation or weight samples, and checks accuracy, σ,
 * determinism and the checkpoint round trip. */
static void train_one(int optimizer, const bnn_dataset *train, const bnn_dataset *test, double lr,
                      long epochs, int mc, int lrt)
{
	const char *name = bnn_optimizer_name(optimizer);
	bnn_train_options o = bnn_train_defaults();
	bnn_state a, b, loaded;
	bnn_err err;
	double acc_mean, acc_mc;
	int rc, i, same;

	o.optimizer = optimizer;
	o.epochs = epochs;
	o.batch = 16;
	o.schedule.lr = lr;
	o.mc = mc;
	if (optimizer == BNN_OPT_BBB)
		o.lrt = lrt; /* bnn_train refuses options the optimizer does not read */
	bnn_state_init(&a, &rt_bayes_model, 1, &err);
	rc = bnn_train(
	        &a, &(bnn_train_io){ .train = train, .checkpoint = blobs_tmp_path("bayes.ckpt") },
	        &o, &err);
	is_int(rc, BNN_OK, "%s, mc %d%s, trains rt_bayes%s%s", name, mc,
	       optimizer == BNN_OPT_BBB && !lrt ? ", weight samples" : "", rc ? ": " : "",
	       rc ? err.message : "");
	acc_mean = blobs_accuracy(&a, test, 0);
	acc_mc = blobs_accuracy(&a, test, 16);
	ok(acc_mean > 0.9, "%s: test accuracy at the mean %.3f > 0.9 (chance 0.33)", name,
	   acc_mean);
	ok(acc_mc > 0.9, "%s: test accuracy of 16 MC samples %.3f > 0.9", name, acc_mc);
	ok(blobs_sigma_positive(&a), "%s: every meanfield parameter has a finite σ > 0", name);
	if (optimizer == BNN_OPT_VOGN || optimizer == BNN_OPT_IVON)
		ok(sigma_from_state(&a, (double)train->n,
		                    optimizer == BNN_OPT_VOGN ? bnn_train_defaults().vogn.rho
		                                              : 1.0),
		   "%s, mc %d: the final σ is the one s or h implies", name, mc);
	if (optimizer == BNN_OPT_BBB) {
		float *sp = malloc((size_t)a.model->nparams * sizeof *sp);
		int softplus = 1;
		long j;
		bnn_bbb_sigma(a.model->nparams, a.opt[2], sp);
		for (j = 0; j < a.model->nparams; j++)
			if (a.sigma[j] != 0 && memcmp(&sp[j], &a.sigma[j], sizeof *sp) != 0)
				softplus = 0;
		ok(softplus, "bbb, mc %d, lrt %d: the final σ is softplus(ρ)", mc, lrt);
		free(sp);
	}
	is_int(a.optimizer, optimizer, "%s: the state records its optimizer", name);

	bnn_state_init(&b, &rt_bayes_model, 1, &err);
	bnn_train(&b, &(bnn_train_io){ .train = train }, &o, &err);
	same = blobs_same_floats(a.params, b.params, a.model->nparams) &&
	       blobs_same_floats(a.sigma, b.sigma, a.model->nparams);
	for (i = 0; i < BNN_OPT_SLOTS; i++)
		same = same && blobs_same_floats(a.opt[i], b.opt[i], a.model->nparams);
	ok(same, "%s: the same seed trains to identical bits (μ, σ, optimizer state)", name);
	bnn_state_free(&b);

	is_int(bnn_state_load(&loaded, &rt_bayes_model, blobs_tmp_path("bayes.ckpt"), &err), BNN_OK,
	       "%s: the checkpoint loads", name);
	same = blobs_same_floats(a.params, loaded.params, a.model->nparams) &&
	       blobs_same_floats(a.sigma, loaded.sigma, a.model->nparams);
	for (i = 0; i < BNN_OPT_SLOTS; i++)
		same = same && blobs_same_floats(a.opt[i], loaded.opt[i], a.model->nparams);
	ok(same, "%s: μ, σ and every optimizer slot survive the round trip", name);
	is_int(loaded.optimizer, optimizer, "%s: the optimizer survives", name);
	bnn_state_free(&loaded);
	if (optimizer == BNN_OPT_BADAM) {
		/* with δ = 0, a weight no gradient reached has σ = +inf
		 * (docs/optimizers/badam.md): a checkpoint may hold it */
		for (i = 0; a.sigma[i] == 0; i++)
			;
		a.sigma[i] = INFINITY;
		bnn_state_save(&a, blobs_tmp_path("bayes.ckpt"), &err);
		is_int(bnn_state_load(&loaded, &rt_bayes_model, blobs_tmp_path("bayes.ckpt"), &err),
		       BNN_OK, "badam: a checkpoint with σ = +inf loads");
		bnn_state_free(&loaded);
	}
	bnn_state_free(&a);
}

/*
 * BADAM's N of the posterior is the option ess when given (Kessler et al.,
 * appendix C), else N × the largest fan-in of a layer with a posterior
 * (bnn_default_ess): after training, σ = 1/√(λ√v̂ + p) with
 * v̂ = v/(1 − β2^t), λ that N, p the prior precision, i.e. σ²(λ√v̂ + p) = 1
 * up to rounding.  By hand for rt_bayes (h: 4 inputs, logits: 8) on 300
 * examples: the default λ is 300 × 8 = 2400.
 */
static void test_badam_ess(const bnn_dataset *train, double ess, double lambda)
{
	bnn_train_options o = bnn_train_defaults();
	const bnn_model *m = &rt_bayes_model;
	bnn_state st;
	bnn_err err;
	double bc;
	int i, good = 1;
	long j;

	o.optimizer = BNN_OPT_BADAM;
	o.epochs = 2;
	o.batch = 16;
	o.ess = ess;
	bnn_state_init(&st, m, 1, &err);
	is_int(bnn_train(&st, &(bnn_train_io){ .train = train }, &o, &err), BNN_OK,
	       "badam trains with ess = %g", ess);
	bc = 1 - pow(0.999, (double)st.step);
	for (i = 0; i < m->ntensors; i++) {
		const bnn_tensor *t = &m->tensors[i];
		double p = m->layers[t->layer].prior_precision;
		if (!(m->layers[t->layer].caps & BNN_CAP_SIGMA))
			continue;
		for (j = t->offset; j < t->offset + t->size; j++) {
			double s = st.sigma[j], vh = st.opt[1][j] / bc;
			if (fabs(s * s * (lambda * sqrt(vh) + p) - 1) > 1e-4)
				good = 0;
		}
	}
	ok(good, "badam: sigma = 1/sqrt(%g sqrt(vhat) + prior) with ess = %g", lambda, ess);
	bnn_state_free(&st);
}

/* bnn_default_ess by hand: badam's N × 8 (rt_bayes's largest fan-in, the
 * logits' 8 inputs; 784 for the Fashion-MNIST MLP's first layer), the
 * others' N; a model without a posterior scales by 1. */
static void test_default_ess(void)
{
	is_float(bnn_default_ess(&rt_bayes_model, BNN_OPT_BADAM, 300), 2400, 0,
	         "badam's default ess for rt_bayes on 300 examples: 300 x 8");
	is_float(bnn_default_ess(&rt_bayes_model, BNN_OPT_IVON, 300), 300, 0,
	         "ivon's default ess: N");
	is_float(bnn_default_ess(&rt_widept_model, BNN_OPT_BADAM, 300), 300, 0,
	         "badam on a model without a posterior: N");
}

/* The short-run rule by hand (bnn_train_lr, bnn_train_h0): 300 examples
 * in batches of 128 are ⌈300/128⌉ = 3 steps an epoch, so 10 epochs are 30
 * steps: vogn's lr 5e-5 × 2000/30 = 1/300, ivon's h0 0.1 × 2000/30 =
 * 20/3; 700 epochs (2,100 steps) keep 5e-5 and 0.1 exactly; a value given
 * is used as given; the other optimizers' defaults never scale. */
static void test_short_run_defaults(void)
{
	bnn_train_options o = bnn_train_defaults();

	o.epochs = 10;
	is_float(bnn_train_steps(&o, 300), 30, 0, "10 epochs of 300 in batches of 128: 30 steps");
	is_float(bnn_short_run_scale(30), 2000.0 / 30, 0, "a run of 30 steps scales by 2000/30");
	is_float(bnn_short_run_scale(2000), 1, 0, "a run of 2000 steps is not scaled");
	is_float(bnn_short_run_scale(0), 2000, 0, "no steps: scaled as one step");
	o.optimizer = BNN_OPT_VOGN;
	is_float(bnn_train_lr(&o, 300), 1.0 / 300, 1e-15, "vogn, 30 steps: lr 5e-5 x 2000/30");
	is_float(bnn_train_h0(&o, 300), 0, 0, "vogn has no h0");
	o.optimizer = BNN_OPT_IVON;
	is_float(bnn_train_h0(&o, 300), 20.0 / 3, 1e-14, "ivon, 30 steps: h0 0.1 x 2000/30");
	is_float(bnn_train_lr(&o, 300), 0.3, 0, "ivon's lr is not scaled");
	o.optimizer = BNN_OPT_ADAM;
	is_float(bnn_train_lr(&o, 300), 1e-3, 0, "adam's lr is not scaled");
	o.epochs = 700;
	o.optimizer = BNN_OPT_VOGN;
	ok(bnn_train_lr(&o, 300) == 5e-5, "vogn, 2100 steps: lr 5e-5 exactly");
	o.optimizer = BNN_OPT_IVON;
	ok(bnn_train_h0(&o, 300) == 0.1, "ivon, 2100 steps: h0 0.1 exactly");
	o.epochs = 10;
	o.ivon.h0 = 0.5;
	o.schedule.lr = 0.2;
	ok(bnn_train_h0(&o, 300) == 0.5 && bnn_train_lr(&o, 300) == 0.2,
	   "given values are used as given");
}

/*
 * BADAM validates by its posterior predictive: σ enters no gradient, so
 * the validation NLL of each epoch (and so the epoch kept) is that of 8
 * samples drawn from the seed derived as bnn_rng_derive(seed, 0x7661), the
 * same every epoch.  The run ends at its best epoch, whose reported NLL is
 * then bnn_predict's with those 8 samples, bit for bit, and not the mean's.
 */
static int keep_best(const bnn_epoch_report *r, void *ctx)
{
	if (r->improved)
		*(double *)ctx = r->valid_nll;
	return 0;
}

static void test_badam_valid_mc(const bnn_dataset *train, const bnn_dataset *valid)
{
	bnn_train_options o = bnn_train_defaults();
	bnn_state st;
	bnn_err err;
	double best = NAN, mc = 0, mean = 0;
	float *probs;

	o.optimizer = BNN_OPT_BADAM;
	o.epochs = 3;
	o.batch = 16;
	o.ess = 50; /* a wide posterior: its samples and its mean differ */
	bnn_state_init(&st, &rt_bayes_model, 1, &err);
	is_int(bnn_train(&st,
	                 &(bnn_train_io){ .train = train,
	                                  .valid = valid,
	                                  .on_epoch = keep_best,
	                                  .ctx = &best },
	                 &o, &err),
	       BNN_OK, "badam trains with a validation set");
	probs = malloc((size_t)valid->n * rt_bayes_model.outputs * sizeof *probs);
	bnn_predict(&st, valid, 8, bnn_rng_derive(o.seed, 0x7661),
	            &(bnn_prediction){ .probs = probs, .nll = &mc }, &err);
	bnn_predict(&st, valid, 0, 0, &(bnn_prediction){ .probs = probs, .nll = &mean }, &err);
	free(probs);
	is_float(best, mc / (double)valid->n, 0,
	         "badam: the best epoch's validation NLL is its 8-sample predictive's");
	ok(fabs(best - mean / (double)valid->n) > 1e-3,
	   "badam: and not the mean network's (%.4f against %.4f)", best, mean / (double)valid->n);
	bnn_state_free(&st);
}

/* VOGN's s after `epochs` full-batch steps with the option beta2 = b. */
static void vogn_s_after(const bnn_dataset *train, const char *b, long epochs, bnn_state *st)
{
	bnn_train_options o = bnn_train_defaults();
	bnn_err err;

	o.optimizer = BNN_OPT_VOGN;
	o.epochs = epochs;
	o.batch = train->n; /* one step an epoch */
	o.schedule.lr = 0.01;
	bnn_train_set(&o, "beta2", b, &err);
	bnn_state_init(st, &rt_bayes_model, 1, &err);
	is_int(bnn_train(st, &(bnn_train_io){ .train = train }, &o, &err), BNN_OK,
	       "vogn trains %ld full-batch step(s) with beta2 = %s", epochs, b);
}

/*
 * The option beta2 is Alg. 1 line 20's β2, s ← (1 − τβ2)s + β2ĥ
 * (docs/optimizers/vogn.md, "Convention"), not its complement: with
 * β2 = 0 s stays at s0 however many steps run (the complement would make
 * s the last ĥ), and one step is linear in β2 between s0 and ĥ1, the
 * sample of the first step being the same for every β2 (it depends on s0
 * and μ0 only): s(0.25) = 0.75 s0 + 0.25 ĥ1 = (s(0) + s(0.5)) / 2.
 */
static void test_vogn_beta2(const bnn_dataset *train)
{
	bnn_state one, two, half, quarter;
	long n = rt_bayes_model.nparams, j, off = 0;
	int moved = 0;

	vogn_s_after(train, "0", 1, &one);
	vogn_s_after(train, "0", 2, &two);
	vogn_s_after(train, "0.5", 1, &half);
	vogn_s_after(train, "0.25", 1, &quarter);
	ok(blobs_same_floats(one.opt[1], two.opt[1], n),
	   "vogn, beta2 = 0: s is s0 after one step and after two (the weight of the new h is 0)");
	for (j = 0; j < n; j++) {
		double want = 0.5 * ((double)one.opt[1][j] + half.opt[1][j]);
		if (one.opt[1][j] != half.opt[1][j])
			moved = 1;
		if (fabs(quarter.opt[1][j] - want) > 1e-6 * fabs(want) + 1e-30)
			off++;
	}
	ok(moved, "vogn, beta2 = 0.5: s moves towards the new h");
	is_int((int)off, 0, "vogn, one step: s(beta2 = 0.25) = (s(0) + s(0.5)) / 2 within 1e-6");
	bnn_state_free(&one);
	bnn_state_free(&two);
	bnn_state_free(&half);
	bnn_state_free(&quarter);
}

static void test_optimizers(void)
{
	bnn_dataset train, test;

	blobs_make(&train, 300, 11);
	blobs_make(&test, 150, 12);
	/* mc = 1 takes the fused update-and-sample path, mc = 2 the other */
	train_one(BNN_OPT_VOGN, &train, &test, 0.01, 20, 1, 1);
	train_one(BNN_OPT_VOGN, &train, &test, 0.01, 20, 2, 1);
	train_one(BNN_OPT_IVON, &train, &test, 0.2, 20, 1, 1);
	train_one(BNN_OPT_IVON, &train, &test, 0.2, 20, 2, 1);
	train_one(BNN_OPT_BADAM, &train, &test, 0.01, 20, 1, 1); /* one pass: Adam's */
	train_one(BNN_OPT_BBB, &train, &test, 0.01, 30, 2, 1);
	train_one(BNN_OPT_BBB, &train, &test, 0.01, 30, 1, 0);
	train_one(BNN_OPT_BBB, &train, &test, 0.01, 30, 2, 0);
	test_badam_ess(&train, 1e6, 1e6);
	test_badam_ess(&train, 0, 2400);
	test_default_ess();
	test_short_run_defaults();
	test_badam_valid_mc(&train, &test);
	test_vogn_beta2(&train);
	bnn_dataset_free(&train);
	bnn_dataset_free(&test);
}

static void test_dropout(void)
{
	bnn_dataset train, test;
	bnn_train_options o = bnn_train_defaults();
	bnn_state st;
	bnn_err err;
	float *p0, *p1;
	long i;
	int differ = 0;

	blobs_make(&train, 300, 21);
	blobs_make(&test, 150, 22);
	o.epochs = 20;
	o.batch = 16;
	o.schedule.lr = 0.01;
	bnn_state_init(&st, &rt_drop_model, 2, &err);
	is_int(bnn_train(&st, &(bnn_train_io){ .train = &train }, &o, &err), BNN_OK,
	       "adam trains the MC-dropout model");
	ok(st.sigma == NULL, "MC dropout keeps a point estimate (no σ)");
	ok(bnn_state_is_stochastic(&st), "but its predictions are random (dropout)");
	ok(blobs_accuracy(&st, &test, 0) > 0.9, "dropout: accuracy at the mean > 0.9");
	ok(blobs_accuracy(&st, &test, 16) > 0.9, "dropout: accuracy of 16 MC samples > 0.9");
	p0 = malloc((size_t)test.n * 3 * sizeof *p0);
	p1 = malloc((size_t)test.n * 3 * sizeof *p1);
	bnn_predict(&st, &test, 0, 1, &(bnn_prediction){ .probs = p0 }, &err);
	bnn_predict(&st, &test, 4, 1, &(bnn_prediction){ .probs = p1 }, &err);
	for (i = 0; i < test.n * 3; i++)
		differ += p0[i] != p1[i];
	ok(differ > test.n, "MC dropout predictions differ from the mean network's (%d of %ld)",
	   differ, test.n * 3);
	bnn_predict(&st, &test, 4, 1, &(bnn_prediction){ .probs = p0 }, &err);
	ok(blobs_same_floats(p0, p1, test.n * 3), "and repeat exactly with the same seed");
	free(p0);
	free(p1);
	bnn_state_free(&st);
	bnn_dataset_free(&train);
	bnn_dataset_free(&test);
}

static void test_refusals(void)
{
	bnn_dataset train;
	bnn_train_options o = bnn_train_defaults();
	bnn_state st;
	bnn_err err;

	blobs_make(&train, 30, 1);
	bnn_state_init(&st, &rt_bayes_model, 1, &err);
	is_int(bnn_train(&st, &(bnn_train_io){ .train = &train }, &o, &err), BNN_EUNSUPPORTED,
	       "adam refuses a meanfield layer");
	is_str(err.message,
	       "layer 'h_dense' of model 'rt_bayes' has a meanfield posterior, but optimizer 'adam' "
	       "trains point estimates: use vogn, ivon, bbb or badam",
	       "and says what to use");
	o.optimizer = BNN_OPT_IVON;
	o.adam.weight_decay = 0.01f;
	is_int(bnn_train(&st, &(bnn_train_io){ .train = &train }, &o, &err), BNN_EINVAL,
	       "ivon refuses weight_decay");
	is_str(err.message,
	       "optimizer 'ivon' takes its regularisation from the prior: set 'delta' (or the "
	       "model's prior precision) instead of 'weight_decay'",
	       "and names delta");
	bnn_state_free(&st);
	/* The descriptor: each layer's family by name, and the capabilities
	 * the runtime acts on; a bit this library does not know is refused. */
	{
		bnn_model m = rt_bayes_model;
		bnn_layer layers[16];
		const bnn_layer *h = &rt_bayes_model.layers[0];
		is_str(h->family, "meanfield", "the descriptor names the family");
		is_int((int)h->caps, BNN_CAP_SIGMA | BNN_CAP_SIGMA_LRT,
		       "a meanfield dense layer has a sigma, sampled by local reparameterisation");
		ok(rt_bayes_model.nlayers <= 16, "rt_bayes has at most 16 layers");
		memcpy(layers, m.layers, (size_t)m.nlayers * sizeof *layers);
		layers[0].caps |= 1u << 20;
		layers[0].family = "newfam";
		m.layers = layers;
		bnn_state_init(&st, &m, 1, &err);
		o.optimizer = BNN_OPT_BBB;
		o.adam.weight_decay = 0;
		is_int(bnn_train(&st, &(bnn_train_io){ .train = &train }, &o, &err),
		       BNN_EUNSUPPORTED, "a capability the library does not know is refused");
		is_str(err.message,
		       "layer 'h_dense' of model 'rt_bayes' has a newfam posterior, which no optimizer "
		       "trains yet",
		       "naming the family by its descriptor name");
		bnn_state_free(&st);
	}
	bnn_state_init(&st, &rt_drop_model, 1, &err);
	o.adam.weight_decay = 0;
	o.optimizer = BNN_OPT_VOGN;
	is_int(bnn_train(&st, &(bnn_train_io){ .train = &train }, &o, &err), BNN_EUNSUPPORTED,
	       "vogn refuses a model without meanfield layers");
	is_str(err.message,
	       "optimizer 'vogn' learns the posterior of meanfield layers, and model 'rt_drop' has "
	       "none: declare 'posterior meanfield;' (or '~ meanfield' on layers), or train with "
	       "sgd, adam or adamw",
	       "and says what to declare");
	o.mc = 0;
	is_int(bnn_train(&st, &(bnn_train_io){ .train = &train }, &o, &err), BNN_EINVAL,
	       "mc 0 is refused");
	is_int(bnn_train_set(&o, "optimizer", "ivon", &err), BNN_OK, "'ivon' is an optimizer name");
	is_int(bnn_train_set(&o, "beta2", "0.9999", &err), BNN_OK, "beta2 is set");
	ok(o.ivon.beta2 == 0.9999f && o.vogn.beta2 == 0.9999f && o.adam.beta2 == 0.9999f,
	   "beta2 applies to adam, vogn and ivon");
	ok(bnn_train_defaults().vogn.beta2 == 0.001f,
	   "vogn's default beta2 is line 20's 0.001 (the old decay 0.999's complement)");
	is_int(bnn_train_set(&o, "optimizer", "vadam", &err), BNN_EINVAL, "an unknown optimizer");
	is_str(err.message,
	       "unknown optimizer 'vadam' (choose sgd, adam, adamw, vogn, ivon, badam or bbb)",
	       "lists the optimizers");
	is_int(bnn_predict(&st, &train, -1, 1, &(bnn_prediction){ .probs = train.x }, &err),
	       BNN_EINVAL, "a negative number of MC samples is refused");
	bnn_state_free(&st);
	bnn_dataset_free(&train);
}

/* A hand-made posterior for rt_breg: μ from the initialiser, σ = 0.1 on
 * the meanfield layer's tensors, 0 on the point layer's. */
static void breg_state(bnn_state *st)
{
	const bnn_model *m = &rt_breg_model;
	bnn_err err;
	int i;
	long j;

	bnn_state_init(st, m, 3, &err);
	st->sigma = calloc((size_t)m->nparams, sizeof *st->sigma);
	for (i = 0; i < m->ntensors; i++)
		if (m->layers[m->tensors[i].layer].caps & BNN_CAP_SIGMA)
			for (j = 0; j < m->tensors[i].size; j++)
				st->sigma[m->tensors[i].offset + j] = 0.1f;
}

/* Two steps of optimizer opt (mc samples, lrt for bbb, gradient
 * clipping) on rt_wide (rt_widept for sgd, adam and adamw) with `threads` threads, from the same start:
 * *st receives the trained state. */
static int wide_run(bnn_state *st, const bnn_dataset *train, int opt, int mc, int lrt, int threads,
                    bnn_err *err)
{
	bnn_train_options o = bnn_train_defaults();
	int rc;

	o.optimizer = opt;
	o.epochs = 1;
	o.batch = 32;
	o.mc = mc;
	o.clip = 0.5; /* the norm of 42039 gradients: a sum in pieces */
	o.threads = threads;
	if (opt == BNN_OPT_BBB)
		o.lrt = lrt;
	if ((rc = bnn_state_init(st, opt <= BNN_OPT_ADAMW ? &rt_widept_model : &rt_wide_model, 3,
	                         err)))
		return rc;
	return bnn_train(st, &(bnn_train_io){ .train = train }, &o, err);
}

/* Every optimizer's step, fused with the next sample or not, gives the
 * same bits with 1, 2 and 3 threads on a model large enough for the
 * updates, the sampler and the clipping to split across threads, with
 * tensor borders inside blocks and chunks. */
static void test_threads(void)
{
	bnn_dataset train;
	static const struct {
		int opt, mc, lrt;
	} runs[] = {
		{ BNN_OPT_SGD, 1, 0 },  { BNN_OPT_ADAM, 1, 0 },  { BNN_OPT_ADAMW, 1, 0 },
		{ BNN_OPT_VOGN, 1, 0 }, { BNN_OPT_VOGN, 2, 0 },  { BNN_OPT_IVON, 1, 0 },
		{ BNN_OPT_IVON, 2, 0 }, { BNN_OPT_BADAM, 1, 0 }, { BNN_OPT_BBB, 1, 0 },
		{ BNN_OPT_BBB, 1, 1 },  { BNN_OPT_BBB, 2, 0 },
	};
	size_t r;

	blobs_make(&train, 64, 13);
	ok(rt_wide_model.nparams == 42039 && rt_widept_model.nparams == 42039,
	   "rt_wide and rt_widept have 42039 parameters");
	for (r = 0; r < sizeof runs / sizeof *runs; r++) {
		bnn_state st[3];
		bnn_err err;
		int t, i, rc = 0, same = 1;

		for (t = 0; t < 3; t++)
			rc |= wide_run(&st[t], &train, runs[r].opt, runs[r].mc, runs[r].lrt, t + 1,
			               &err);
		for (t = 1; t < 3 && rc == BNN_OK; t++) {
			long n = rt_wide_model.nparams;
			same = same && blobs_same_floats(st[0].params, st[t].params, n) &&
			       blobs_same_floats(st[0].sigma, st[t].sigma, n);
			for (i = 0; i < BNN_OPT_SLOTS; i++)
				same = same && blobs_same_floats(st[0].opt[i], st[t].opt[i], n);
		}
		ok(rc == BNN_OK && same,
		   "%s, mc %d%s: two steps on rt_wide give the same bits with 1, 2 and 3 threads%s%s",
		   bnn_optimizer_name(runs[r].opt), runs[r].mc, runs[r].lrt ? ", lrt" : "",
		   rc ? ": " : "", rc ? err.message : "");
		for (t = 0; t < 3; t++)
			bnn_state_free(&st[t]);
	}
	bnn_set_threads(1);
	bnn_dataset_free(&train);
}

/* bnn_predict's Monte-Carlo mixture against the same samples drawn here:
 * θ_s = μ + σ∘ε_s from a generator seeded like bnn_predict's, the mixture
 * mean (1/S)Σμ_s, variance σ² + (1/S)Σμ_s² − mean², and NLL
 * −log((1/S)Σ_s N(y | μ_s, σ²)). */
static void test_mc_regression(void)
{
	const bnn_model *m = &rt_breg_model;
	enum {
		N = 5,
		S = 3
	};
	float x[N * 2], y[N], mean[N], var[N], theta[64], eps[64], out[N];
	double mu_s[S][N], nll = 0, want_nll = 0, worst = 0, worst_var = 0;
	float *ws = malloc(m->workspace_floats(N) * sizeof *ws + 4);
	bnn_dataset ds;
	bnn_state st;
	bnn_rng rng;
	bnn_err err;
	int s, i;

	if (m->nparams > 64 || !ws)
		tap_bail_out("rt_breg is larger than this test expects");
	for (i = 0; i < N; i++) {
		x[2 * i] = (float)i * 0.5f - 1.0f;
		x[2 * i + 1] = 0.25f * (float)(i % 2);
		y[i] = 0.1f * (float)i;
	}
	blobs_flat(&ds, N, 2, x, y);
	breg_state(&st);
	is_int(bnn_predict(&st, &ds, S, 99,
	                   &(bnn_prediction){ .probs = mean, .var = var, .nll = &nll }, &err),
	       BNN_OK, "MC regression predicts");
	for (s = 0; s < S; s++) {
		bnn_pass p;
		/* sample s's weights from (99, s), its one batch's noise from
		 * (99, s, 0) */
		bnn_rng_seed(&rng, bnn_rng_derive(bnn_rng_derive(99, (uint64_t)s), 0));
		bnn_posterior_sample(m->nparams, st.params, st.sigma, eps, theta, &rng);
		bnn_rng_seed(&rng, bnn_predict_seed(99, s, 0));
		memset(&p, 0, sizeof p);
		p.w = theta;
		p.x = x;
		p.batch = N;
		p.ws = ws;
		p.out = out;
		p.rng = &rng;
		m->pass(&p);
		for (i = 0; i < N; i++)
			mu_s[s][i] = out[i];
	}
	for (i = 0; i < N; i++) {
		double mm = 0, sq = 0, lik = 0, v;
		for (s = 0; s < S; s++) {
			double d = y[i] - mu_s[s][i];
			mm += mu_s[s][i] / S;
			sq += mu_s[s][i] * mu_s[s][i] / S;
			lik += exp(-d * d / (2 * 0.25)) / sqrt(2 * 3.14159265358979323846 * 0.25) /
			       S;
		}
		v = 0.25 + sq - mm * mm;
		worst = fmax(worst, fabs(mean[i] - mm));
		worst_var = fmax(worst_var, fabs(var[i] - v) / v);
		want_nll -= log(lik);
	}
	ok(worst < 1e-6, "the mixture mean is the mean of the S sampled means (error %.2g)", worst);
	ok(worst_var < 1e-5,
	   "the mixture variance is sigma^2 + the variance of the means (rel. %.2g)", worst_var);
	is_rel(nll, want_nll, 1e-9, "the NLL is -log of the mean of the S densities");
	is_int(bnn_predict(&st, &ds, 0, 99,
	                   &(bnn_prediction){ .probs = mean, .var = var, .nll = &nll }, &err),
	       BNN_OK, "mc 0 predicts at the mean");
	ok(fabs(var[0] - 0.25f) < 1e-7, "at the mean the variance is sigma^2 (%g)", (double)var[0]);
	/* An infinite σ (badam with δ = 0 and a weight without gradient)
	 * cannot be sampled: a clear error, and the mean still predicts. */
	st.sigma[13] = INFINITY;
	is_int(bnn_predict(&st, &ds, 3, 99,
	                   &(bnn_prediction){ .probs = mean, .var = var, .nll = &nll }, &err),
	       BNN_EINVAL, "an infinite sigma is refused with mc > 0");
	is_str(err.message,
	       "parameter 13 of model 'rt_breg' (tensor 'h_dense.bias', entry 1) has posterior "
	       "standard deviation inf, so its samples give no prediction: badam with delta = 0 "
	       "leaves sigma infinite where a weight never had a gradient; retrain with delta > 0, "
	       "or predict at the mean with --mc 0",
	       "and the message names the parameter and the way out");
	is_int(bnn_predict(&st, &ds, 0, 99,
	                   &(bnn_prediction){ .probs = mean, .var = var, .nll = &nll }, &err),
	       BNN_OK, "mc 0 still predicts with an infinite sigma");
	free(ws);
	bnn_state_free(&st);
}

/* bnn_predict on 700 examples (three batches of BNN_PREDICT_BATCH, the
 * last one short): the same bits with 1, 2 and 3 threads, and each range
 * of batches from bnn_predict_batches() is the matching slice, the
 * per-example NLLs summed in order giving the total. */
static void test_predict_batches(void)
{
	enum {
		N = 700,
		S = 3
	};
	static float x[N * 2], y[N], mean[3][N], var[3][N], pm[N], pv[N];
	static double each[N], pe[N];
	double nll[3], pn, sum;
	bnn_dataset ds;
	bnn_state st;
	bnn_err err;
	int i, t, bad = 0, rc = 0;
	long j0, j1;

	for (i = 0; i < N; i++) {
		x[2 * i] = (float)(i % 37) * 0.05f - 1.0f;
		x[2 * i + 1] = 0.25f * (float)(i % 3);
		y[i] = 0.01f * (float)(i % 50);
	}
	blobs_flat(&ds, N, 2, x, y);
	breg_state(&st);
	for (t = 1; t <= 3; t++) {
		bnn_set_threads(t);
		rc |= bnn_predict(&st, &ds, S, 7,
		                  &(bnn_prediction){ .probs = mean[t - 1],
		                                     .var = var[t - 1],
		                                     .nll = &nll[t - 1],
		                                     .nll_each = t == 1 ? each : NULL },
		                  &err);
	}
	is_int(rc, BNN_OK, "700 examples predict with 1, 2 and 3 threads");
	ok(memcmp(mean[0], mean[1], sizeof mean[0]) == 0 &&
	           memcmp(mean[0], mean[2], sizeof mean[0]) == 0 &&
	           memcmp(var[0], var[1], sizeof var[0]) == 0 &&
	           memcmp(var[0], var[2], sizeof var[0]) == 0 &&
	           memcmp(nll, nll + 1, sizeof *nll) == 0 && memcmp(nll, nll + 2, sizeof *nll) == 0,
	   "and give the same bits");
	for (sum = 0, i = 0; i < N; i++)
		sum += each[i];
	ok(memcmp(&sum, nll, sizeof sum) == 0, "the total NLL is the per-example NLLs in order");
	for (t = 1; t <= 2; t++)
		for (j0 = 0; j0 < 3; j0++)
			for (j1 = j0 + 1; j1 <= 3; j1++) {
				long a = j0 * BNN_PREDICT_BATCH;
				long n = (j1 * BNN_PREDICT_BATCH < N ? j1 * BNN_PREDICT_BATCH : N) -
				         a;
				bnn_set_threads(t);
				rc = bnn_predict_batches(&st, &ds, S, 7, j0, j1,
				                         &(bnn_prediction){ .probs = pm,
				                                            .var = pv,
				                                            .nll = &pn,
				                                            .nll_each = pe },
				                         &err);
				for (sum = 0, i = 0; i < n; i++)
					sum += each[a + i];
				bad += rc != BNN_OK ||
				       memcmp(pm, mean[0] + a, (size_t)n * sizeof *pm) != 0 ||
				       memcmp(pv, var[0] + a, (size_t)n * sizeof *pv) != 0 ||
				       memcmp(pe, each + a, (size_t)n * sizeof *pe) != 0 ||
				       memcmp(&pn, &sum, sizeof sum) != 0;
			}
	bnn_set_threads(1);
	is_int(bad, 0, "every range of batches is the slice of the whole, with 1 and 2 threads");
	{ /* bnn_model_outputs, gathered in reverse, batches of 64 */
		static long idx[N];
		static float o[3][N];
		double v[3];
		for (i = 0; i < N; i++)
			idx[i] = N - 1 - i;
		for (rc = 0, t = 1; t <= 3; t++) {
			bnn_set_threads(t);
			rc |= bnn_model_outputs(
			        &st, &ds, &(bnn_example_range){ .idx = idx, .n = N, .batch = 64 },
			        o[t - 1], &v[t - 1], &err);
		}
		bnn_set_threads(1);
		ok(rc == BNN_OK && memcmp(o[0], o[1], sizeof o[0]) == 0 &&
		           memcmp(o[0], o[2], sizeof o[0]) == 0 &&
		           memcmp(v, v + 1, sizeof *v) == 0 && memcmp(v, v + 2, sizeof *v) == 0,
		   "bnn_model_outputs gives the same outputs and NLL with 1, 2 and 3 threads");
	}
	pn = 1;
	ok(bnn_predict_batches(&st, &ds, S, 7, 3, 3, &(bnn_prediction){ .probs = pm, .nll = &pn },
	                       &err) == BNN_OK &&
	           pn == 0,
	   "an empty range of batches predicts nothing, with NLL 0");
	is_int(bnn_predict_batches(&st, &ds, S, 7, 2, 4, &(bnn_prediction){ .probs = pm }, &err),
	       BNN_EINVAL, "batches beyond the data are refused");
	is_str(err.message, "batches [2, 4) asked of a data set of 3 batches of 256",
	       "and the message says how many there are");
	bnn_state_free(&st);
}

/* A hand-made posterior for rt_bayes: μ from the initialiser (seed 3),
 * σ = 0.5 on every parameter, wide enough for the samples to disagree. */
static void bayes_state(bnn_state *st)
{
	const bnn_model *m = &rt_bayes_model;
	bnn_err err;
	long j;

	bnn_state_init(st, m, 3, &err);
	st->sigma = calloc((size_t)m->nparams, sizeof *st->sigma);
	for (j = 0; j < m->nparams; j++)
		st->sigma[j] = 0.5f;
}

/*
 * bnn_predict's expected entropy and energy of a categorical MC predictive
 * are those of its S samples, computed here sample by sample from the
 * documented streams (as test_mc_regression does): E_θ H[p] is the mean of
 * −Σ_j p_sj log p_sj and the energy the mean of −log Σ_j exp(z_sj) (Liu et
 * al. 2020, eq. 5); the mutual information H[E p] − E H[p] is then ≥ 0 and
 * bnn_entropy_split of the same S sample rows gives the same expected
 * entropy.  With mc = 0 the expected entropy is the mean network's entropy.
 * A regression model is refused.
 */
static void test_mc_split(void)
{
	const bnn_model *m = &rt_bayes_model;
	enum {
		N = 6,
		S = 4,
		K = 3
	};
	float x[N * 4], y[N], probs[N * K], z[N * K], ps[S * N * K], *theta, *eps;
	double xent[N], energy[N], want_x[N] = { 0 }, want_e[N] = { 0 }, h[N], mi[N];
	double sh[N], sx[N], smi[N];
	double worst_x = 0, worst_e = 0, worst_split = 0;
	float *ws = malloc(m->workspace_floats(N) * sizeof *ws + 4);
	bnn_dataset ds;
	bnn_state st;
	bnn_rng rng;
	bnn_err err;
	int s, i, j, positive = 0, nonneg = 1;

	theta = malloc((size_t)m->nparams * sizeof *theta);
	eps = malloc((size_t)m->nparams * sizeof *eps);
	if (!ws || !theta || !eps)
		tap_bail_out("out of memory");
	for (i = 0; i < N * 4; i++)
		x[i] = (float)((i * 7) % 11) * 0.4f - 2.0f;
	for (i = 0; i < N; i++)
		y[i] = (float)(i % 3);
	blobs_flat(&ds, N, 4, x, y);
	bayes_state(&st);
	is_int(bnn_predict(&st, &ds, S, 99,
	                   &(bnn_prediction){
	                           .probs = probs, .expected_entropy = xent, .energy = energy },
	                   &err),
	       BNN_OK, "a categorical MC predictive gives its expected entropy and energy");
	for (s = 0; s < S; s++) {
		bnn_pass p;
		bnn_rng_seed(&rng, bnn_rng_derive(bnn_rng_derive(99, (uint64_t)s), 0));
		bnn_posterior_sample(m->nparams, st.params, st.sigma, eps, theta, &rng);
		bnn_rng_seed(&rng, bnn_predict_seed(99, s, 0));
		memset(&p, 0, sizeof p);
		p.w = theta;
		p.x = x;
		p.batch = N;
		p.ws = ws;
		p.out = z;
		p.rng = &rng;
		m->pass(&p);
		for (i = 0; i < N; i++) {
			double zmax = z[i * K], norm = 0, hs = 0;
			for (j = 1; j < K; j++)
				zmax = fmax(zmax, z[i * K + j]);
			for (j = 0; j < K; j++)
				norm += exp(z[i * K + j] - zmax);
			for (j = 0; j < K; j++) {
				double pj = exp(z[i * K + j] - zmax) / norm;
				hs -= pj * log(pj);
				ps[(s * N + i) * K + j] = (float)pj;
			}
			want_x[i] += hs / S;
			want_e[i] += -(zmax + log(norm)) / S;
		}
	}
	if (bnn_entropy(probs, N, K, h, &err) || bnn_mutual_information(h, xent, N, mi, &err) ||
	    bnn_entropy_split(ps, S, N, K, sh, sx, smi, &err))
		tap_bail_out("%s", err.message);
	for (i = 0; i < N; i++) {
		worst_x = fmax(worst_x, fabs(xent[i] - want_x[i]));
		worst_e = fmax(worst_e, fabs(energy[i] - want_e[i]) / fabs(want_e[i]));
		worst_split = fmax(worst_split, fabs(sx[i] - want_x[i]));
		positive += mi[i] > 1e-3;
		nonneg &= mi[i] >= 0 && h[i] >= xent[i] - 1e-7;
	}
	ok(worst_x < 1e-12,
	   "the expected entropy is the mean of the samples' entropies (error %.2g)", worst_x);
	ok(worst_e < 1e-12, "the energy is the mean of the samples' -logsumexp (rel. error %.2g)",
	   worst_e);
	ok(worst_split < 1e-6,
	   "bnn_entropy_split of the sample rows gives that expected entropy (error %.2g)",
	   worst_split);
	ok(nonneg && positive == N,
	   "the mutual information H[E p] - E H[p] is > 0 on every example (%d of %d)", positive,
	   N);
	is_int(bnn_predict(&st, &ds, 0, 99,
	                   &(bnn_prediction){
	                           .probs = probs, .expected_entropy = xent, .energy = energy },
	                   &err),
	       BNN_OK, "mc 0 gives them too");
	bnn_entropy(probs, N, K, h, &err);
	for (worst_x = 0, i = 0; i < N; i++)
		worst_x = fmax(worst_x, fabs(xent[i] - h[i]));
	ok(worst_x < 1e-6, "at the mean the expected entropy is the entropy (error %.2g)", worst_x);
	bnn_state_free(&st);
	breg_state(&st);
	blobs_flat(&ds, N, 2, x, y);
	is_int(bnn_predict(&st, &ds, 2, 99, &(bnn_prediction){ .probs = probs, .energy = energy },
	                   &err),
	       BNN_EINVAL, "a regression model has no energy score");
	is_str(err.message,
	       "model 'rt_breg' is a regression model (gaussian): the expected entropy and the "
	       "energy score are defined for classifiers only",
	       "and the message says so");
	bnn_state_free(&st);
	free(ws);
	free(theta);
	free(eps);
}

/* The expected entropy and the energy of 700 examples (three batches):
 * the same bits with 1, 2 and 3 threads and for every range of batches,
 * each row's sums taken in sample order whatever thread runs its batch. */
static void test_split_threads(void)
{
	enum {
		N = 700,
		S = 3
	};
	static float x[N * 4], pm[N * 3];
	static double xe[3][N], en[3][N], pxe[N], pen[N];
	bnn_dataset ds;
	bnn_state st;
	bnn_err err;
	int i, t, bad = 0, rc = 0;
	long j0, j1;

	for (i = 0; i < N * 4; i++)
		x[i] = (float)(i % 29) * 0.1f - 1.4f;
	blobs_flat(&ds, N, 4, x, NULL);
	ds.targets = 0;
	bayes_state(&st);
	for (t = 1; t <= 3; t++) {
		bnn_set_threads(t);
		rc |= bnn_predict(&st, &ds, S, 5,
		                  &(bnn_prediction){ .probs = pm,
		                                     .expected_entropy = xe[t - 1],
		                                     .energy = en[t - 1] },
		                  &err);
	}
	is_int(rc, BNN_OK,
	       "700 examples give their expected entropy and energy with 1, 2, 3 threads");
	ok(memcmp(xe[0], xe[1], sizeof xe[0]) == 0 && memcmp(xe[0], xe[2], sizeof xe[0]) == 0 &&
	           memcmp(en[0], en[1], sizeof en[0]) == 0 &&
	           memcmp(en[0], en[2], sizeof en[0]) == 0,
	   "and the same bits");
	for (t = 1; t <= 2; t++)
		for (j0 = 0; j0 < 3; j0++)
			for (j1 = j0 + 1; j1 <= 3; j1++) {
				long a = j0 * BNN_PREDICT_BATCH;
				long n = (j1 * BNN_PREDICT_BATCH < N ? j1 * BNN_PREDICT_BATCH : N) -
				         a;
				bnn_set_threads(t);
				rc = bnn_predict_batches(&st, &ds, S, 5, j0, j1,
				                         &(bnn_prediction){ .probs = pm,
				                                            .expected_entropy = pxe,
				                                            .energy = pen },
				                         &err);
				bad += rc != BNN_OK ||
				       memcmp(pxe, xe[0] + a, (size_t)n * sizeof *pxe) != 0 ||
				       memcmp(pen, en[0] + a, (size_t)n * sizeof *pen) != 0;
			}
	bnn_set_threads(1);
	is_int(bad, 0, "every range of batches gives the slice of the whole, with 1 and 2 threads");
	bnn_state_free(&st);
}

/* The CSV export: a header and one row per parameter, in tensor order. */
static void test_posterior_csv(void)
{
	bnn_state st;
	FILE *f;
	char line[256];
	long rows = 0;

	breg_state(&st);
	f = tmpfile();
	is_int(bnn_posterior_write_csv(&st, f), 0, "the posterior is written");
	rewind(f);
	ok(fgets(line, sizeof line, f) && strcmp(line, "tensor,index,mean,std\n") == 0,
	   "with the header tensor,index,mean,std");
	ok(fgets(line, sizeof line, f) && strncmp(line, "h_dense.weight,0,", 17) == 0 &&
	           strstr(line, ",0.100000001\n"),
	   "the first row is h_dense.weight[0] with std 0.1: %s", line);
	rows = 2;
	while (fgets(line, sizeof line, f))
		rows++;
	is_int(rows, 1 + rt_breg_model.nparams, "one row per parameter");
	ok(strncmp(line, "mu.bias,0,", 10) == 0 && strstr(line, ",0\n"),
	   "the point layer's last parameter has std 0: %s", line);
	fclose(f);
	bnn_state_free(&st);
}

int main(void)
{
	blobs_tmpdir_make("gen_bayes");
	bnn_set_threads(1);
	test_optimizers();
	test_dropout();
	test_refusals();
	test_mc_regression();
	test_predict_batches();
	test_mc_split();
	test_split_threads();
	test_posterior_csv();
	test_threads();
	unlink(blobs_tmp_path("bayes.ckpt"));
	blobs_tmpdir_remove();
	return tap_done();
}
