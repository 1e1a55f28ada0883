/*
 * gen_runtime.c: TAP tests of the runtime driving generated models
 * (t/models/rt_blobs.bnn and rt_other.bnn, compiled by bnnc for this test):
 * descriptor checks, initialisation, training with SGD and Adam to a clear
 * accuracy margin on a fixed synthetic problem, bit-for-bit determinism,
 * checkpoint round trips and refusals (another model, another version of
 * the same model), rollback on divergence with the checkpoint on disk left
 * intact, early stopping, prediction, and the options parser's messages.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blobs.h"
#include "bnn.h"
#include "rt_blobs.h"
#include "rt_other.h"
#include "tap.h"

/* Reads a whole file (for "the checkpoint on disk did not change"). */
static char *slurp(const char *path, long *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	*len = ftell(f);
	rewind(f);
	buf = malloc((size_t)*len + 1);
	if (buf && fread(buf, 1, (size_t)*len, f) != (size_t)*len) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static void test_descriptor(void)
{
	bnn_model bad = rt_blobs_model;
	bnn_err err;
	long i;
	int j;

	is_int(bnn_model_check(&rt_blobs_model, &err), BNN_OK, "rt_blobs's descriptor checks");
	is_int(rt_blobs_model.nparams, 4 * 8 + 8 + 8 * 3 + 3,
	       "rt_blobs has 4*8+8 + 8*3+3 parameters");
	is_int(RT_BLOBS_NPARAMS, rt_blobs_model.nparams, "the header's NPARAMS agrees");
	is_int(rt_blobs_model.ntensors, 4, "rt_blobs has 4 tensors");
	is_str(rt_blobs_model.tensors[2].name, "logits.weight", "tensor 2 is logits.weight");
	is_int(rt_blobs_model.tensors[2].offset, 40,
	       "logits.weight starts after h's 40 parameters");
	is_int(rt_blobs_model.tensors[0].init, BNN_INIT_GLOROT_UNIFORM, "a tanh layer gets Glorot");
	is_int(rt_other_model.tensors[0].init, BNN_INIT_HE_NORMAL, "a relu layer gets He");
	is_int(rt_other_model.tensors[rt_other_model.ntensors - 1].role, BNN_ROLE_LOG_SIGMA,
	       "a learned sigma is the last tensor");
	is_int(rt_other_model.targets, 2, "a gaussian model has one target per output");
	ok(rt_blobs_model.fingerprint != rt_other_model.fingerprint, "fingerprints differ");
	/* The fingerprint is FNV-1a 64 of the canonical text. */
	{
		unsigned long long h = 0xcbf29ce484222325ULL;
		const char *s;
		for (s = rt_blobs_model.canonical; *s; s++)
			h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
		ok(h == rt_blobs_model.fingerprint, "the fingerprint hashes the canonical text");
	}
	bad.abi = 99;
	is_int(bnn_model_check(&bad, &err), BNN_EUNSUPPORTED, "another ABI is refused");
	{
		char want[256];
		snprintf(
		        want, sizeof want,
		        "model 'rt_blobs' was generated for descriptor ABI 99, this library "
		        "(libbnn %s) reads ABI %d: recompile the model with the bnnc of this libbnn",
		        bnn_version(), BNN_MODEL_ABI);
		is_str(err.message, want, "and the message names both ABIs and says to recompile");
	}
	is_int(BNN_MODEL_ABI, 6,
	       "the descriptor ABI is 6 (the range of an input of integer ids, the prior's kind "
	       "and arguments, studentt's df, a scale given by a node)");
	/* The tensors must tile the parameters in order (the trainer's fused
	 * updates walk them so): rt_blobs's are 32, 8, 24 and 3 floats. */
	{
		bnn_tensor swapped[4];
		bnn_model gap = rt_blobs_model;
		memcpy(swapped, rt_blobs_model.tensors, sizeof swapped);
		swapped[1] = rt_blobs_model.tensors[2];
		swapped[2] = rt_blobs_model.tensors[1];
		gap.tensors = swapped;
		is_int(bnn_model_check(&gap, &err), BNN_EINVAL, "tensors out of order are refused");
		is_str(err.message,
		       "model 'rt_blobs': tensor 'logits.weight' starts at parameter 40, not at 32 "
		       "where the one before it ends",
		       "and the message says where");
		gap = rt_blobs_model;
		gap.ntensors = 3;
		is_int(bnn_model_check(&gap, &err), BNN_EINVAL,
		       "tensors that leave parameters out are refused");
		is_str(err.message, "model 'rt_blobs': the tensors cover 64 of the 67 parameters",
		       "and the message counts them");
	}

	/* Initialisation: deterministic, within the Glorot bound. */
	{
		bnn_state a, b, c;
		double bound = sqrt(6.0 / (4 + 8));
		int within = 1;
		bnn_state_init(&a, &rt_blobs_model, 7, &err);
		bnn_state_init(&b, &rt_blobs_model, 7, &err);
		bnn_state_init(&c, &rt_blobs_model, 8, &err);
		ok(blobs_same_floats(a.params, b.params, a.model->nparams),
		   "the same seed initialises the same");
		ok(!blobs_same_floats(a.params, c.params, a.model->nparams),
		   "another seed differs");
		for (i = 0; i < 32; i++)
			within &= fabs(a.params[i]) <= bound;
		ok(within, "h.weight lies within the Glorot bound %g", bound);
		for (j = 0, i = 32; i < 40; i++)
			j |= a.params[i] != 0;
		ok(!j, "biases start at zero");
		bnn_state_free(&a);
		bnn_state_free(&b);
		bnn_state_free(&c);
	}
}

static int count_reports(const bnn_epoch_report *r, void *ctx)
{
	bnn_epoch_report *last = ctx;
	if (r->final)
		*last = *r;
	return 0;
}

/* Poisons the training inputs (4 features) when epoch `after` ends, and
 * remembers the best epoch reported. */
struct poison {
	bnn_dataset *ds;
	long after, best;
};

static int poison_after(const bnn_epoch_report *r, void *ctx)
{
	struct poison *p = ctx;
	long i;
	if (r->final && r->improved)
		p->best = r->epoch;
	if (r->final && r->epoch == p->after)
		for (i = 0; i < p->ds->n * 4; i++)
			p->ds->x[i] = NAN;
	return 0;
}

/* Training diverges in epoch `after` + 1 (with validation data or not):
 * the checkpoint is the state, at the run's last good epoch or its best. */
static void test_divergence_saves(bnn_dataset *valid, long after)
{
	bnn_dataset train;
	bnn_state d, loaded;
	bnn_train_options o = bnn_train_defaults();
	struct poison p = { &train, after, 0 };
	char expect[160];
	bnn_err err;

	blobs_make(&train, 300, 11);
	o.epochs = after + 3;
	o.batch = 16;
	o.schedule.lr = valid ? 0.05 : 0.01; /* overfits the validation NLL */
	bnn_state_init(&d, &rt_blobs_model, 7, &err);
	unlink(blobs_tmp_path("d.ckpt"));
	is_int(bnn_train(&d,
	                 &(bnn_train_io){ .train = &train,
	                                  .valid = valid,
	                                  .checkpoint = blobs_tmp_path("d.ckpt"),
	                                  .on_epoch = poison_after,
	                                  .ctx = &p },
	                 &o, &err),
	       BNN_ERANGE, "%s: divergence in epoch %ld", valid ? "validation" : "no validation",
	       after + 1);
	snprintf(expect, sizeof expect,
	         "training diverged in epoch %ld at step 1: the loss is not "
	         "finite (try a smaller learning rate, or --set clip=1)",
	         after + 1);
	is_str(err.message, expect, "the message is the divergence's");
	is_int(d.epoch, valid ? p.best : after, "the state is the %s epoch's (%ld)",
	       valid ? "best" : "last good", valid ? p.best : after);
	is_int(bnn_state_load(&loaded, &rt_blobs_model, blobs_tmp_path("d.ckpt"), &err), BNN_OK,
	       "the checkpoint was written");
	is_int(loaded.epoch, d.epoch, "with that epoch");
	ok(blobs_same_floats(loaded.params, d.params, d.model->nparams), "and its parameters");
	bnn_state_free(&loaded);
	bnn_state_free(&d);
	bnn_dataset_free(&train);
	unlink(blobs_tmp_path("d.ckpt"));
}

static void test_training(void)
{
	bnn_dataset train, test;
	bnn_state a, b, loaded;
	bnn_train_options o = bnn_train_defaults();
	bnn_epoch_report last;
	bnn_err err;
	double acc;

	blobs_make(&train, 300, 11);
	blobs_make(&test, 150, 12);

	/* Adam */
	o.epochs = 30;
	o.batch = 16;
	o.schedule.lr = 0.01;
	bnn_state_init(&a, &rt_blobs_model, o.seed, &err);
	acc = blobs_accuracy(&a, &test, 0);
	ok(acc < 0.7, "before training, accuracy is well below the 0.9 required after (%.3f)", acc);
	is_int(bnn_train(&a,
	                 &(bnn_train_io){ .train = &train,
	                                  .checkpoint = blobs_tmp_path("a.ckpt"),
	                                  .on_epoch = count_reports,
	                                  .ctx = &last },
	                 &o, &err),
	       BNN_OK, "adam trains");
	acc = blobs_accuracy(&a, &test, 0);
	ok(acc > 0.9, "adam: test accuracy %.3f > 0.9 (chance 0.33)", acc);
	is_int(last.epoch, 30, "30 epochs were reported");
	is_int(a.step, 30 * 19, "19 steps per epoch (300/16, the last one short)");
	is_int(a.epoch, 30, "the state counts 30 epochs");

	/* determinism */
	bnn_state_init(&b, &rt_blobs_model, o.seed, &err);
	bnn_train(&b, &(bnn_train_io){ .train = &train }, &o, &err);
	ok(blobs_same_floats(a.params, b.params, a.model->nparams) &&
	           blobs_same_floats(a.opt[0], b.opt[0], a.model->nparams) &&
	           blobs_same_floats(a.opt[1], b.opt[1], a.model->nparams),
	   "the same seed trains to identical bits");
	bnn_state_free(&b);

	/* checkpoint round trip */
	is_int(bnn_state_load(&loaded, &rt_blobs_model, blobs_tmp_path("a.ckpt"), &err), BNN_OK,
	       "the checkpoint loads");
	ok(blobs_same_floats(a.params, loaded.params, a.model->nparams) &&
	           blobs_same_floats(a.opt[0], loaded.opt[0], a.model->nparams) &&
	           blobs_same_floats(a.opt[1], loaded.opt[1], a.model->nparams),
	   "parameters and Adam's moments survive the round trip");
	is_int(loaded.step, a.step, "the step count survives");
	is_int(loaded.epoch, 30, "the epoch count survives");
	is_int(loaded.optimizer, BNN_OPT_ADAM, "the optimizer survives");
	ok(loaded.options && strstr(loaded.options, "optimizer=adam lr=0.01") != NULL,
	   "the options are recorded: %s", loaded.options ? loaded.options : "(none)");
	bnn_state_free(&loaded);

	/* SGD with momentum */
	o.optimizer = BNN_OPT_SGD;
	o.schedule.lr = 0.05;
	bnn_state_init(&b, &rt_blobs_model, 3, &err);
	is_int(bnn_train(&b, &(bnn_train_io){ .train = &train }, &o, &err), BNN_OK, "sgd trains");
	acc = blobs_accuracy(&b, &test, 0);
	ok(acc > 0.9, "sgd: test accuracy %.3f > 0.9", acc);
	ok(b.opt[1] == NULL && b.opt[0] != NULL, "sgd keeps one momentum buffer");
	bnn_state_free(&b);

	/* early stopping: validation on the test blobs, patience 2 */
	o = bnn_train_defaults();
	o.epochs = 200;
	o.batch = 16;
	o.schedule.lr = 0.05;
	o.patience = 2;
	bnn_state_init(&b, &rt_blobs_model, 5, &err);
	is_int(bnn_train(&b,
	                 &(bnn_train_io){ .train = &train,
	                                  .valid = &test,
	                                  .on_epoch = count_reports,
	                                  .ctx = &last },
	                 &o, &err),
	       BNN_OK, "training with validation and patience 2");
	ok(last.epoch < 200, "early stopping ended training at epoch %ld", last.epoch);
	ok(!last.improved, "the last epoch did not improve");
	is_int(b.epoch, last.epoch - 2, "the state is the best epoch's (two before the last)");
	bnn_state_free(&b);

	/* a held-out fraction instead of a validation set */
	o.patience = 0;
	o.epochs = 2;
	o.valid_fraction = 0.2;
	bnn_state_init(&b, &rt_blobs_model, 5, &err);
	is_int(bnn_train(
	               &b,
	               &(bnn_train_io){ .train = &train, .on_epoch = count_reports, .ctx = &last },
	               &o, &err),
	       BNN_OK, "training with valid_fraction 0.2");
	ok(!isnan(last.valid_nll), "a validation NLL is reported (%g)", last.valid_nll);
	is_int(b.step, 2 * 15, "240 training examples make 15 steps per epoch");
	bnn_state_free(&b);

	/* divergence after good epochs: they are saved */
	test_divergence_saves(NULL, 2);
	test_divergence_saves(&test, 6);
	/* divergence in the first epoch: the state rolls back, the checkpoint
	 * stays as it was */
	{
		long len0, len1;
		char *before = slurp(blobs_tmp_path("a.ckpt"), &len0), *after;
		float *params = malloc((size_t)a.model->nparams * sizeof *params);
		long i;
		memcpy(params, a.params, (size_t)a.model->nparams * sizeof *params);
		for (i = 0; i < train.n * 4; i++)
			train.x[i] = NAN; /* data the CSV reader would refuse */
		o = bnn_train_defaults();
		o.epochs = 3;
		is_int(bnn_train(&a,
		                 &(bnn_train_io){ .train = &train,
		                                  .checkpoint = blobs_tmp_path("a.ckpt") },
		                 &o, &err),
		       BNN_ERANGE, "a non-finite loss stops training");
		is_str(err.message,
		       "training diverged in epoch 1 at step 1: the loss is not finite "
		       "(try a smaller learning rate, or --set clip=1)",
		       "and says where");
		ok(blobs_same_floats(params, a.params, a.model->nparams),
		   "the parameters rolled back");
		after = slurp(blobs_tmp_path("a.ckpt"), &len1);
		ok(before && after && len0 == len1 && memcmp(before, after, (size_t)len0) == 0,
		   "the checkpoint on disk is unchanged");
		free(before);
		free(after);
		free(params);
	}
	bnn_state_free(&a);
	bnn_dataset_free(&train);
	bnn_dataset_free(&test);
}

/* One option set (NAME, VALUE pairs, then NULL) on the defaults, checked
 * by bnn_train_options_check with or without a validation set. */
static int check_set(int valid_set, const char *const *pairs, bnn_err *err)
{
	bnn_train_options o = bnn_train_defaults();
	int rc = BNN_OK;

	for (; !rc && pairs[0]; pairs += 2)
		rc = bnn_train_set(&o, pairs[0], pairs[1], err);
	return rc ? rc : bnn_train_options_check(&o, valid_set, err);
}

/* Options that the optimizer, the schedule or the validation would not
 * read are refused, with the reason; the ones read pass. */
static void test_options_read(void)
{
	static const struct {
		const char *opt, *name, *value, *message;
	} refused[] = {
		{ "badam", "mc", "8",
		  "option 'mc' is not used by optimizer 'badam', only by vogn, ivon "
		  "and bbb: leave it out or choose one of those" },
		{ "adam", "h0", "0.3",
		  "option 'h0' is not used by optimizer 'adam', only by ivon: "
		  "leave it out or choose one of those" },
		{ "ivon", "eps", "1e-6",
		  "option 'eps' is not used by optimizer 'ivon', only by adam, "
		  "adamw, badam and bbb: leave it out or choose one of those" },
		{ "sgd", "beta1", "0.8",
		  "option 'beta1' is not used by optimizer 'sgd', only by adam, "
		  "adamw, vogn, ivon, badam and bbb: leave it out or choose one of those" },
		{ "vogn", "weight_decay", "0.1",
		  "optimizer 'vogn' takes its regularisation from the "
		  "prior: set 'delta' (or the model's prior precision) instead of 'weight_decay'" },
		{ "adam", "milestones", "3",
		  "option 'milestones' belongs to the step schedule: set "
		  "schedule=step too" },
		{ "adam", "lr_min", "1e-5",
		  "option 'lr_min' belongs to the cosine schedule: set "
		  "schedule=cosine too" },
		{ "adam", "patience", "3",
		  "option 'patience' stops training on the validation NLL, and "
		  "there is no validation data: give some (bnn_train_io.valid, the "
		  "driver's --valid FILE) or set valid_fraction" },
	};
	/* sets that pass: with or without a validation set, the pairs */
	static const struct {
		int valid_set;         /* a validation set is given */
		const char *pairs[13]; /* NAME, VALUE, ..., then NULL */
		const char *what;
	} accepted[] = {
		{ 0,
		  { "optimizer", "bbb", "mc", "4", "lrt", "1", "sigma0", "0.01", "beta2", "0.99",
		    "eps", "1e-6", NULL },
		  "bbb reads mc, lrt, sigma0, beta2 and eps" },
		{ 0,
		  { "schedule", "step", "milestones", "3,6", "gamma", "0.5", "patience", "2",
		    "valid_fraction", "0.1", NULL },
		  "step reads milestones and gamma; patience reads valid_fraction's hold-out" },
		{ 1,
		  { "optimizer", "sgd", "momentum", "0.5", "nesterov", "1", "weight_decay", "1e-4",
		    "patience", "2", "delta", "3", NULL },
		  "sgd reads momentum, nesterov and weight_decay; delta is always accepted" },
		{ 0,
		  { "optimizer", "adam", "mc", "1", NULL },
		  "an option set to its default passes" },
	};
	static const char *const held_out[] = { "valid_fraction", "0.1", NULL };
	bnn_err err;
	size_t i;

	for (i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		const char *const pairs[] = { "optimizer", refused[i].opt, refused[i].name,
			                      refused[i].value, NULL };

		is_int(check_set(0, pairs, &err), BNN_EINVAL, "%s with %s=%s is refused",
		       refused[i].opt, refused[i].name, refused[i].value);
		is_str(err.message, refused[i].message, "and says why");
	}
	is_int(check_set(1, held_out, &err), BNN_EINVAL,
	       "valid_fraction with a validation set is refused");
	is_str(err.message,
	       "option 'valid_fraction' holds out part of the training data for "
	       "validation, but validation data is given (bnn_train_io.valid, the "
	       "driver's --valid): use one or the other",
	       "and says why");
	for (i = 0; i < sizeof accepted / sizeof accepted[0]; i++)
		is_int(check_set(accepted[i].valid_set, accepted[i].pairs, &err), BNN_OK, "%s",
		       accepted[i].what);
}

/* Saves st, loads it back, and checks that the load fails with message. */
static void load_refused(const bnn_state *st, const char *message, const char *what)
{
	bnn_state back;
	bnn_err err;
	char want[512];

	if (bnn_state_save(st, blobs_tmp_path("bad.ckpt"), &err))
		tap_bail_out("cannot save %s: %s", blobs_tmp_path("bad.ckpt"), err.message);
	is_int(bnn_state_load(&back, &rt_blobs_model, blobs_tmp_path("bad.ckpt"), &err),
	       BNN_EFORMAT, "a checkpoint with %s is refused", what);
	snprintf(want, sizeof want, "%s: %s", blobs_tmp_path("bad.ckpt"), message);
	is_str(err.message, want, "and the message names the section and the value");
	unlink(blobs_tmp_path("bad.ckpt"));
}

/* Values no training writes, in a checkpoint whose CRC holds. */
static void test_bad_values(void)
{
	bnn_state st;
	bnn_err err;
	long n = rt_blobs_model.nparams, i;

	bnn_state_init(&st, &rt_blobs_model, 1, &err);
	st.params[5] = NAN;
	load_refused(&st, "section 'params': value 5 is nan, not finite", "a NaN parameter");
	st.params[5] = 0;
	st.sigma = calloc((size_t)n, sizeof *st.sigma);
	st.sigma[3] = 0.5f;
	load_refused(&st,
	             "section 'sigma': value 3 (tensor 'h_dense.weight') is 0.5, but only the "
	             "tensors of meanfield layers have a posterior (0 expected)",
	             "a sigma in a point model");
	st.sigma[3] = -1;
	load_refused(&st, "section 'sigma': value 3 is -1, not a value >= 0", "a negative sigma");
	free(st.sigma);
	st.sigma = NULL;
	st.opt[1] = calloc((size_t)n, sizeof *st.opt[1]);
	st.opt[1][n - 1] = INFINITY;
	load_refused(&st, "section 'opt.b': value 66 is inf, not finite",
	             "an infinite optimizer value");
	free(st.opt[1]);
	st.opt[1] = NULL;
	st.standardize.features = rt_blobs_model.inputs;
	st.standardize.mean = calloc(4, sizeof(float));
	st.standardize.std = malloc(4 * sizeof(float));
	for (i = 0; i < 4; i++)
		st.standardize.std[i] = 1;
	st.standardize.std[2] = 0;
	load_refused(&st,
	             "section 'standardize.std': value 2 is 0, not a finite standard "
	             "deviation > 0",
	             "a standard deviation of 0");
	bnn_state_free(&st);
}

static void test_refusals(void)
{
	bnn_state st;
	bnn_dataset ds, vd;
	bnn_train_options o = bnn_train_defaults();
	bnn_err err;
	bnn_ckpt *ck;
	float zeros[75] = { 0 };

	is_int(bnn_state_load(&st, &rt_other_model, blobs_tmp_path("a.ckpt"), &err), BNN_EMISMATCH,
	       "a checkpoint of rt_blobs does not load into rt_other");
	ok(strstr(err.message,
	          "this checkpoint belongs to model 'rt_blobs', not to model 'rt_other'") != NULL,
	   "and says so: %s", err.message);

	ck = bnn_ckpt_new(0x1234, "rt_blobs");
	bnn_ckpt_add_f32(ck, "params", zeros, 75);
	bnn_ckpt_save(ck, blobs_tmp_path("old.ckpt"), &err);
	bnn_ckpt_free(ck);
	is_int(bnn_state_load(&st, &rt_blobs_model, blobs_tmp_path("old.ckpt"), &err),
	       BNN_EMISMATCH, "a checkpoint of another version of the model is refused");
	ok(strstr(err.message, "belongs to a different version of model 'rt_blobs'") != NULL,
	   "and says so: %s", err.message);

	is_int(bnn_state_load(&st, &rt_blobs_model, blobs_tmp_path("missing.ckpt"), &err), BNN_EIO,
	       "a missing checkpoint is an I/O error");

	/* data that does not fit */
	blobs_make(&ds, 30, 1);
	ds.y[7] = 3;
	bnn_state_init(&st, &rt_blobs_model, 1, &err);
	is_int(bnn_train(&st, &(bnn_train_io){ .train = &ds }, &o, &err), BNN_ERANGE,
	       "a label out of range is refused");
	ok(strstr(err.message, "example 8") && strstr(err.message, "label 3 is outside [0, 3)"),
	   "and the message names it: %s", err.message);
	ds.y[7] = 1;
	ds.features = 3;
	is_int(bnn_train(&st, &(bnn_train_io){ .train = &ds }, &o, &err), BNN_EMISMATCH,
	       "data of the wrong width is refused");
	is_str(err.message,
	       "the training data has 3 values per example but model 'rt_blobs' takes 4 (input "
	       "'x')",
	       "and says so");
	ds.features = 4;
	blobs_make(&vd, 10, 2);
	vd.features = 3;
	is_int(bnn_train(&st, &(bnn_train_io){ .train = &ds, .valid = &vd }, &o, &err),
	       BNN_EMISMATCH, "validation data of the wrong width is refused");
	is_str(err.message,
	       "the validation data has 3 values per example but model 'rt_blobs' takes 4 (input "
	       "'x')",
	       "and the message says it is the validation data");
	vd.features = 4;
	vd.targets = 0;
	is_int(bnn_train(&st, &(bnn_train_io){ .train = &ds, .valid = &vd }, &o, &err),
	       BNN_EMISMATCH, "validation data without targets is refused");
	is_str(err.message, "the validation data has no targets ('label' of model 'rt_blobs')",
	       "and named");
	vd.targets = 1;
	bnn_dataset_free(&vd);
	is_int(bnn_train(&st, &(bnn_train_io){ .train = &ds }, &o, &err) == BNN_OK ? 0 : 1, 0,
	       "and the repaired data trains");
	bnn_state_free(&st);
	bnn_dataset_free(&ds);

	/* options */
	is_int(bnn_train_set(&o, "lrr", "0.1", &err), BNN_EINVAL, "an unknown option is refused");
	is_str(err.message, "unknown option 'lrr'; did you mean 'lr'?", "with a suggestion");
	is_int(bnn_train_set(&o, "lr", "fast", &err), BNN_EINVAL, "a non-number is refused");
	is_str(err.message, "option 'lr': 'fast' is not a number", "and named");
	is_int(bnn_train_set(&o, "beta1", "1.5", &err), BNN_ERANGE,
	       "a value out of range is refused");
	is_int(bnn_train_set(&o, "epochs", "2.5", &err), BNN_EINVAL,
	       "a fractional epoch count is refused");
	is_int(bnn_train_set(&o, "milestones", "30,10", &err), BNN_EINVAL,
	       "decreasing milestones are refused");
	is_int(bnn_train_set(&o, "milestones", "10,30", &err), BNN_OK, "milestones 10,30");
	is_int(o.schedule.nmilestones, 2, "two milestones");
	is_int(bnn_train_set(&o, "optimizer", "adamw", &err), BNN_OK, "optimizer adamw");
	ok(o.optimizer == BNN_OPT_ADAMW && o.adam.decoupled, "adamw means decoupled decay");
	is_int(bnn_train_set(&o, "weight_decay", "0.01", &err), BNN_OK, "weight_decay");
	ok(o.adam.weight_decay == 0.01f && o.sgd.weight_decay == 0.01f,
	   "applies to both optimizers");
	is_int(bnn_train_set(&o, "lr", "0x10", &err), BNN_EINVAL,
	       "a hexadecimal number is refused");
	is_str(err.message, "option 'lr': '0x10' is not a number", "as not a number");
	is_int(bnn_train_set(&o, "lr", " 1", &err), BNN_EINVAL, "so is a leading space");
	is_int(bnn_train_set(&o, "milestones", "2,,3", &err), BNN_EINVAL,
	       "an empty milestone is refused");
	is_str(err.message, "option 'milestones': '2,,3' has an empty entry", "and named");
	is_int(bnn_train_set(&o, "milestones", "2,3,", &err), BNN_EINVAL, "so is a trailing comma");
	is_int(bnn_train_set(&o, "seed", "1e3", &err), BNN_EINVAL,
	       "a seed in exponent form is refused");
	is_str(err.message,
	       "option 'seed': '1e3' is not a whole number in [0, 18446744073709551615]",
	       "as not a whole number (it was kept as 1)");
	is_int(bnn_train_set(&o, "seed", "18446744073709551616", &err), BNN_EINVAL,
	       "a seed of 2^64 is refused (it was kept as 2^64 - 1)");
	is_int(bnn_train_set(&o, "seed", "-1", &err), BNN_EINVAL, "so is a negative one");
	is_int(bnn_train_set(&o, "seed", "18446744073709551615", &err), BNN_OK,
	       "2^64 - 1 is taken");
	ok(o.seed == UINT64_MAX, "exactly");
	test_options_read();
}

/* crop_pad and flip: refused for data that are not images; on the blobs
 * seen as 2x2 images, training runs, a seed repeats it bit for bit, and
 * the augmented run differs from the plain one. */
/* Missing arguments and out-of-range requests get an error, not a crash. */
static void test_api_arguments(void)
{
	bnn_state st;
	bnn_dataset ds;
	bnn_train_options o = bnn_train_defaults();
	bnn_err err;
	float out[3 * 40];
	long idx[2] = { 0, 5000000 };

	blobs_make(&ds, 30, 2);
	bnn_state_init(&st, &rt_blobs_model, 1, &err);
	is_int(bnn_state_init(NULL, &rt_blobs_model, 1, &err), BNN_EINVAL, "bnn_state_init(NULL)");
	is_int(bnn_state_save(NULL, blobs_tmp_path("x.ckpt"), &err), BNN_EINVAL,
	       "bnn_state_save(NULL)");
	is_int(bnn_state_load(&st, &rt_blobs_model, NULL, &err), BNN_EINVAL,
	       "bnn_state_load without a path");
	is_int(bnn_predict(&st, &ds, 0, 1, &(bnn_prediction){ 0 }, &err), BNN_EINVAL,
	       "bnn_predict without an output array");
	is_int(bnn_predict(&st, NULL, 0, 1, &(bnn_prediction){ .probs = out }, &err), BNN_EINVAL,
	       "bnn_predict without data");
	is_int(bnn_train(NULL, &(bnn_train_io){ .train = &ds }, &o, &err), BNN_EINVAL,
	       "bnn_train(NULL)");
	is_int(bnn_train(&st, &(bnn_train_io){ .train = &ds }, NULL, &err), BNN_EINVAL,
	       "bnn_train without options");
	is_int(bnn_train_set(&o, "lr", NULL, &err), BNN_EINVAL, "bnn_train_set without a value");
	is_int(bnn_train_options_check(NULL, 0, &err), BNN_EINVAL, "bnn_train_options_check(NULL)");
	is_int(bnn_data_fits(&rt_blobs_model, NULL, 0, &err), BNN_EINVAL, "bnn_data_fits(m, NULL)");
	is_int(bnn_optimizer_from_name(NULL), -1, "bnn_optimizer_from_name(NULL)");
	is_int(bnn_posterior_write_csv(&st, NULL), -1, "bnn_posterior_write_csv(st, NULL)");
	is_int(bnn_file_replace(NULL, "", NULL, NULL, &err), BNN_EINVAL, "bnn_file_replace(NULL)");

	is_int(bnn_model_outputs(&st, &ds, &(bnn_example_range){ .n = 31, .batch = 8 }, out, NULL,
	                         &err),
	       BNN_EINVAL, "bnn_model_outputs of more examples than the data has");
	is_str(err.message, "31 examples asked of a data set of 30", "says so");
	is_int(bnn_model_outputs(&st, &ds, &(bnn_example_range){ .idx = idx, .n = 2, .batch = 8 },
	                         out, NULL, &err),
	       BNN_EINVAL, "an index outside the data set");
	is_str(err.message, "index 5000000 (entry 1) is outside the data set of 30 examples",
	       "names it");
	is_int(bnn_model_outputs(&st, &ds, &(bnn_example_range){ .n = -1, .batch = 8 }, out, NULL,
	                         &err),
	       BNN_EINVAL, "a negative count");

	/* options set in the struct directly get bnn_train_set's range checks */
	o.threads = -1;
	is_int(bnn_train(&st, &(bnn_train_io){ .train = &ds }, &o, &err), BNN_ERANGE,
	       "threads = -1");
	is_str(err.message, "option 'threads': -1 is outside [0, 1024]", "is out of range");
	o = bnn_train_defaults();
	o.delta = -1;
	is_int(bnn_train_options_check(&o, 0, &err), BNN_ERANGE, "delta = -1");
	is_str(err.message, "option 'delta': -1 is outside [0, 1e+30]", "is out of range");
	o = bnn_train_defaults();
	o.optimizer = BNN_OPT_VOGN;
	o.vogn.beta1 = 1.5f;
	is_int(bnn_train_options_check(&o, 0, &err), BNN_ERANGE, "vogn's beta1 = 1.5");
	o = bnn_train_defaults();
	o.valid_fraction = NAN;
	is_int(bnn_train_options_check(&o, 0, &err), BNN_ERANGE, "valid_fraction = NaN");
	is_str(err.message, "option 'valid_fraction': nan is outside [0, 0.9]", "is out of range");
	bnn_state_free(&st);
	bnn_dataset_free(&ds);
}

/* Stops at the first progress report within an epoch. */
static int stop_mid_epoch(const bnn_epoch_report *r, void *ctx)
{
	bnn_epoch_report *seen = ctx;
	if (seen->final == 2)
		seen->final = 3; /* a report after the stop */
	if (!r->final && seen->final == 0) {
		*seen = *r;
		seen->final = 2;
		return 1;
	}
	return 0;
}

/* A callback that stops training within an epoch stops it there: no
 * further report, the partial epoch not counted.  Progress reports come
 * about every half second, so the epoch is made long enough (three
 * million steps of one example; the first report comes after about half
 * a second); on a machine fast enough to finish it sooner the checks are
 * skipped. */
static void test_stop_mid_epoch(void)
{
	bnn_state st;
	bnn_dataset ds;
	bnn_train_options o = bnn_train_defaults();
	bnn_epoch_report seen;
	bnn_err err;

	memset(&seen, 0, sizeof seen);
	blobs_make(&ds, 3000000, 3);
	bnn_state_init(&st, &rt_blobs_model, 1, &err);
	o.epochs = 3;
	o.batch = 1;
	is_int(bnn_train(&st,
	                 &(bnn_train_io){ .train = &ds, .on_epoch = stop_mid_epoch, .ctx = &seen },
	                 &o, &err),
	       BNN_OK, "training stopped by the callback returns BNN_OK");
	if (seen.final == 0) {
		tap_skip(3, "no progress report within an epoch of three million steps");
	} else {
		is_int(seen.final, 2, "no report comes after the callback stops training");
		is_int(st.epoch, 0, "the partial epoch is not counted");
		is_int(st.step, seen.step, "the state has the steps done (%ld)", seen.step);
	}
	bnn_state_free(&st);
	bnn_dataset_free(&ds);
}

/* Steps of 8192 2x2 images (32,768 floats, where the batch's rows are
 * copied on the team: train.c, train_gather), augmented after the copy
 * in row order: the same bits on 1 and 2 threads. */
static void test_augmentation_threads(void)
{
	bnn_train_options o = bnn_train_defaults();
	bnn_state one, two;
	bnn_dataset ds;
	bnn_err err;

	blobs_make(&ds, 16384, 4);
	ds.rank = 2;
	ds.shape[0] = 2;
	ds.shape[1] = 2;
	o.epochs = 1;
	o.batch = 8192;
	o.crop_pad = 1;
	o.flip = 1;
	o.threads = 1;
	bnn_state_init(&one, &rt_blobs_model, 1, &err);
	is_int(bnn_train(&one, &(bnn_train_io){ .train = &ds }, &o, &err), BNN_OK,
	       "batches of 8192 augmented images train on 1 thread");
	o.threads = 2;
	bnn_state_init(&two, &rt_blobs_model, 1, &err);
	is_int(bnn_train(&two, &(bnn_train_io){ .train = &ds }, &o, &err), BNN_OK, "and on 2");
	ok(blobs_same_floats(one.params, two.params, rt_blobs_model.nparams), "to the same bits");
	bnn_state_free(&one);
	bnn_state_free(&two);
	bnn_dataset_free(&ds);
	bnn_set_threads(1);
}

static void test_augmentation(void)
{
	bnn_train_options o = bnn_train_defaults();
	bnn_state a, b, plain;
	bnn_dataset ds;
	bnn_err err;

	blobs_make(&ds, 60, 4);
	o.epochs = 3;
	o.batch = 8;
	o.schedule.lr = 0.01;
	o.crop_pad = 1;
	o.flip = 1;
	bnn_state_init(&a, &rt_blobs_model, 1, &err);
	is_int(bnn_train(&a, &(bnn_train_io){ .train = &ds }, &o, &err), BNN_EINVAL,
	       "augmentation of rank-1 data is refused");
	is_str(err.message,
	       "augmentation (crop_pad, flip) needs images, and the training data has examples of "
	       "rank 1: use IDX images (rank 2, rows x columns, or 3, channels x rows x columns)",
	       "and the message says what it needs");
	ds.rank = 2;
	ds.shape[0] = 2;
	ds.shape[1] = 2;
	o.crop_pad = 2;
	is_int(bnn_train(&a, &(bnn_train_io){ .train = &ds }, &o, &err), BNN_EINVAL,
	       "crop_pad 2 on 2x2 images is refused");
	is_str(err.message,
	       "augmentation: crop_pad 2 is not less than the training images' 2 x 2, so a crop "
	       "could hold padding alone: use a few pixels (the VOGN paper pads 32 x 32 images "
	       "by 4)",
	       "and the message says why");
	o.crop_pad = 1;
	is_int(bnn_train(&a, &(bnn_train_io){ .train = &ds }, &o, &err), BNN_OK,
	       "the blobs as 2x2 images train with crop_pad=1 and flip=1");
	bnn_state_init(&b, &rt_blobs_model, 1, &err);
	bnn_train(&b, &(bnn_train_io){ .train = &ds }, &o, &err);
	ok(blobs_same_floats(a.params, b.params, rt_blobs_model.nparams),
	   "the same seed augments and trains to the same bits");
	o.crop_pad = 0;
	o.flip = 0;
	bnn_state_init(&plain, &rt_blobs_model, 1, &err);
	bnn_train(&plain, &(bnn_train_io){ .train = &ds }, &o, &err);
	ok(!blobs_same_floats(a.params, plain.params, rt_blobs_model.nparams),
	   "and the augmented run differs from the plain one");
	ok(a.options && strstr(a.options, "crop_pad=1 flip=1") != NULL,
	   "the options record the augmentation: %s", a.options ? a.options : "(none)");
	bnn_state_free(&a);
	bnn_state_free(&b);
	bnn_state_free(&plain);
	bnn_dataset_free(&ds);
	test_augmentation_threads();
}

int main(void)
{
	blobs_tmpdir_make("gen_runtime");
	bnn_set_threads(1);
	test_descriptor();
	test_training();
	test_refusals();
	test_bad_values();
	test_api_arguments();
	test_stop_mid_epoch();
	test_augmentation();
	unlink(blobs_tmp_path("a.ckpt"));
	unlink(blobs_tmp_path("old.ckpt"));
	blobs_tmpdir_remove();
	return tap_done();
}
