/*
 * swag.c: SWAG (runtime/train/swag.c, docs/swag.md) on the tiny model
 * t/models/rt_blobs.bnn.  An epoch callback saves every iterate of a run
 * with swag = 4 and swag_rank = 3 over 6 epochs; from them, in double:
 * the mean θ̄ of the last 4, the diagonal σ = √(½(mean θ² − θ̄²)) and the
 * deviations θ_i − θ̄_i (θ̄_i the mean of the iterates collected so far)
 * of the last 3, which the state and its checkpoint must hold.  Then: the
 * round trip of the checkpoint (same bytes), a prediction sample against
 * θ̄ + σ∘z1 + D·z2/√(2(R − 1)) built by hand from the same random stream,
 * and the refusals with their exact messages.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blobs.h"
#include "bnn.h"
#include "bnn_variational.h"
#include "rt_bayes.h"
#include "rt_blobs.h"
#include "tap.h"

#define NP     67
#define EPOCHS 6
#define K      4 /* swag: the last 4 epochs */
#define R      3 /* swag_rank */

struct iterates {
	bnn_state *st;
	float theta[EPOCHS][NP];
	int n;
};

static int save_iterate(const bnn_epoch_report *r, void *ctx)
{
	struct iterates *it = ctx;

	if (r->final && it->n < EPOCHS)
		memcpy(it->theta[it->n++], it->st->params, sizeof it->theta[0]);
	return 0;
}

static bnn_train_options swag_options(void)
{
	bnn_train_options o = bnn_train_defaults();

	o.epochs = EPOCHS;
	o.batch = 16;
	o.schedule.lr = 0.05;
	o.swag = K;
	o.swag_rank = R;
	return o;
}

/* The moments and deviations of the saved iterates, in double. */
static void direct(const struct iterates *it, double *mean, double *sigma, double dev[R][NP])
{
	double run[NP];
	int e, j, c = 0;

	memset(run, 0, sizeof run);
	for (j = 0; j < NP; j++) {
		double s = 0, sq = 0;
		for (e = EPOCHS - K; e < EPOCHS; e++) {
			s += it->theta[e][j];
			sq += (double)it->theta[e][j] * it->theta[e][j];
		}
		mean[j] = s / K;
		sigma[j] = sqrt(0.5 * fmax(sq / K - mean[j] * mean[j], 0));
	}
	for (e = EPOCHS - K; e < EPOCHS; e++, c++) {
		for (j = 0; j < NP; j++) {
			run[j] = (run[j] * c + it->theta[e][j]) / (c + 1);
			if (c >= K - R)
				dev[c - (K - R)][j] = it->theta[e][j] - run[j];
		}
	}
}

/* How many of n values differ from want by more than rtol (relative to
 * the largest |want|, float rounding). */
static int count_off(const float *got, const double *want, long n, double rtol)
{
	double scale = 0;
	long j;
	int bad = 0;

	for (j = 0; j < n; j++)
		scale = fmax(scale, fabs(want[j]));
	for (j = 0; j < n; j++)
		if (fabs(got[j] - want[j]) > rtol * scale) {
			if (!bad++)
				tap_diag("value %ld: %.9g, direct %.9g", j, (double)got[j],
				         want[j]);
		}
	return bad;
}

/* One Monte-Carlo sample of bnn_predict (sample 0, seed 9) rebuilt by
 * hand: θ = θ̄ + σ∘z1, then D·z2/√(2(R − 1)), and its softmax. */
static void hand_sample(const bnn_state *st, const bnn_dataset *ds, float *probs)
{
	bnn_state view = *st;
	float theta[NP], z[64], out[64 * 3];
	bnn_rng wr;
	bnn_err err;
	long i;
	int r, j;

	bnn_rng_seed(&wr, bnn_rng_derive(bnn_rng_derive(9, 0), 0));
	bnn_posterior_sample(NP, st->params, st->sigma, NULL, theta, &wr);
	bnn_rng_normal(&wr, z, 64);
	for (r = 0; r < st->posthoc->rank; r++)
		for (j = 0; j < NP; j++)
			theta[j] += (float)(z[r] / sqrt(2.0 * (st->posthoc->rank - 1))) *
			            st->posthoc->dev[r * NP + j];
	view.params = theta;
	if (bnn_model_outputs(&view, ds, &(bnn_example_range){ NULL, ds->n, 64 }, out, NULL, &err))
		tap_bail_out("%s", err.message);
	for (i = 0; i < ds->n; i++) {
		const float *zr = out + i * 3;
		double zmax = fmax(zr[0], fmax(zr[1], zr[2])), norm = 0;
		for (j = 0; j < 3; j++)
			norm += exp((double)zr[j] - zmax);
		for (j = 0; j < 3; j++)
			probs[i * 3 + j] = (float)(exp((double)zr[j] - zmax) / norm);
	}
}

static void test_moments(const bnn_dataset *train, const bnn_dataset *test)
{
	static struct iterates it;
	bnn_train_options o = swag_options();
	bnn_state st, back;
	bnn_err err;
	double mean[NP], sigma[NP], dev[R][NP];
	float probs[20 * 3], hand[20 * 3];
	unsigned char *a, *b;
	long na, nb;
	int rc;

	if (bnn_state_init(&st, &rt_blobs_model, 2, &err))
		tap_bail_out("%s", err.message);
	it.st = &st;
	rc = bnn_train(&st,
	               &(bnn_train_io){ .train = train,
	                                .checkpoint = blobs_tmp_path("s.ckpt"),
	                                .on_epoch = save_iterate,
	                                .ctx = &it },
	               &o, &err);
	is_int(rc, BNN_OK, "adam with swag=%d, swag_rank=%d: %s", K, R, rc ? err.message : "ok");
	is_int(it.n, EPOCHS, "every epoch's iterate saved");
	direct(&it, mean, sigma, dev);
	ok(st.posthoc && st.posthoc->kind == BNN_POSTHOC_SWAG && st.posthoc->examples == K &&
	           st.posthoc->rank == R,
	   "the state ends with a SWAG posterior of %d iterates, rank %d", K, R);
	is_int(count_off(st.params, mean, NP, 1e-6), 0, "params: the mean of the last %d iterates",
	       K);
	is_int(count_off(st.sigma, sigma, NP, 1e-4), 0,
	       "sigma: √(½ diagonal variance) of them (1e-4 of the largest: float iterates)");
	is_int(count_off(st.posthoc->dev, dev[0], R * NP, 1e-5), 0,
	       "posterior.dev: the last %d deviations from the running mean, oldest first", R);

	rc = bnn_state_load(&back, &rt_blobs_model, blobs_tmp_path("s.ckpt"), &err);
	is_int(rc, BNN_OK, "the SWAG checkpoint loads: %s", rc ? err.message : "ok");
	ok(!rc && back.posthoc && back.posthoc->rank == R && back.progress == NULL &&
	           blobs_same_floats(back.posthoc->dev, st.posthoc->dev, R * NP) &&
	           blobs_same_floats(back.sigma, st.sigma, NP) &&
	           blobs_same_floats(back.params, st.params, NP),
	   "with the same mean, σ and deviations, and no resume sections");
	if (!rc && bnn_state_save(&back, blobs_tmp_path("s2.ckpt"), &err))
		tap_bail_out("%s", err.message);
	a = blobs_file_bytes(blobs_tmp_path("s.ckpt"), &na);
	b = blobs_file_bytes(blobs_tmp_path("s2.ckpt"), &nb);
	ok(a && b && na == nb && memcmp(a, b, (size_t)na) == 0,
	   "loading and saving it again gives the same %ld bytes", na);
	free(a);
	free(b);

	rc = bnn_predict(&back, test, 1, 9, &(bnn_prediction){ .probs = probs }, &err);
	hand_sample(&back, test, hand);
	ok(!rc && memcmp(probs, hand, sizeof hand) == 0,
	   "a prediction sample is θ̄ + σ∘z1 + D·z2/√(2(R − 1)), bit for bit");
	bnn_state_free(&back);
	bnn_state_free(&st);
	unlink(blobs_tmp_path("s.ckpt"));
	unlink(blobs_tmp_path("s2.ckpt"));
}

static void refused(const bnn_dataset *train, const bnn_model *m, bnn_train_options o,
                    const char *want, const char *what)
{
	bnn_state st;
	bnn_err err;
	int rc;

	if (bnn_state_init(&st, m, 1, &err))
		tap_bail_out("%s", err.message);
	rc = bnn_train(&st, &(bnn_train_io){ .train = train }, &o, &err);
	is_str(rc ? err.message : "(trained)", want, "%s", what);
	bnn_state_free(&st);
}

static void test_refusals(const bnn_dataset *train)
{
	bnn_train_options o = swag_options();
	bnn_err err;

	o.swag = 12;
	o.epochs = 10;
	refused(train, &rt_blobs_model, o,
	        "option 'swag': collecting the last 12 epochs takes at least 12, and training "
	        "runs 10 (epochs)",
	        "swag larger than epochs");
	o = swag_options();
	o.optimizer = BNN_OPT_IVON;
	refused(train, &rt_bayes_model, o,
	        "option 'swag' is not used by optimizer 'ivon', only by sgd, adam and adamw: "
	        "leave it out or choose one of those",
	        "swag with a variational optimizer");
	o = swag_options();
	o.swag = 0;
	refused(train, &rt_blobs_model, o,
	        "option 'swag_rank' belongs to SWAG: set swag=K too (its last K epochs)",
	        "swag_rank without swag");
	o = swag_options();
	o.patience = 2;
	o.valid_fraction = 0.2;
	refused(train, &rt_blobs_model, o,
	        "option 'swag' collects the last epochs of the run, and early stopping "
	        "(patience) may end it before them: use one or the other",
	        "swag with early stopping");
	o = bnn_train_defaults();
	is_int(bnn_train_set(&o, "swag", "-1", &err), BNN_ERANGE, "--set swag=-1 is refused");
	is_str(err.message, "option 'swag': -1 is outside [0, 1e+09]", "with the range");
}

int main(void)
{
	bnn_dataset train, test;

	blobs_tmpdir_make("swag");
	bnn_set_threads(1);
	blobs_make(&train, 200, 1);
	blobs_make(&test, 20, 3);
	test_moments(&train, &test);
	test_refusals(&train);
	bnn_dataset_free(&train);
	bnn_dataset_free(&test);
	blobs_tmpdir_remove();
	return tap_done();
}
