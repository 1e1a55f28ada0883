/*
 * train.c: minibatch training of a generated model with any of the
 * optimizers (bnn_train, documented in bnn_train.h and docs/training.md).
 *
 * One epoch: shuffle the training indices, then for each minibatch gather
 * its rows (augmenting images when crop_pad or flip is set: augment.c,
 * from a stream of their own), take the learning rate from the schedule at the fractional
 * epoch reached, and take one optimizer step (train_step.c: the passes of
 * the generated code, Monte-Carlo samples of the posterior where the
 * optimizer uses them, and the fused update).  After the epoch: validation NLL (and
 * accuracy), early-stopping bookkeeping, report; a checkpoint at most every
 * TRAIN_SAVE_SECONDS when the epoch improved, every io->checkpoint_every
 * epochs, and always at the end.  Every checkpoint written at an epoch's
 * end carries where the run stands (train_save, progress.c), and
 * io->resume puts a new call back there (train_resume): the run goes on
 * bit for bit as if it had never stopped.
 *
 * Safety: the state at the start of each epoch is kept, so a non-finite
 * loss rolls back to it and returns BNN_ERANGE, after saving the last good
 * epoch (the best one with validation data) when an epoch of the run
 * completed; the checkpoint on disk is only ever replaced atomically by a
 * good state.
 *
 * Data parallelism over MPI (distributed.c, docs/distributed.md): every
 * rank shuffles the same way (the same seed) and gathers only its rows of
 * each global minibatch; the step sums the passes' results over the ranks
 * before the same update on every rank; each rank draws its own weight
 * noise, dropout masks and augmentation (streams jumped per rank).
 * Validation is split across the ranks and its sums and counts added.
 * Rank 0 alone writes checkpoints.  The ranks agree on the status after
 * the checks of the data, after every epoch and after every save, so an
 * error anywhere stops every rank with the failing rank's message.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/floats.h"
#include "train_internal.h"

/* Seconds between the checkpoints written during training. */
#define TRAIN_SAVE_SECONDS 30.0

static double train_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The arrays of the state a snapshot copies: params, sigma, stats, opt[]
 * (train_state_array). */
static float **state_array(bnn_state *st, int i)
{
	return train_state_array(st, i);
}

static size_t state_array_bytes(const bnn_model *m, int i)
{
	return (size_t)train_array_size(m, i) * sizeof(float);
}

/* Allocates a snapshot for the arrays the state has now. */
static int snapshot_alloc(struct trainer *t, struct train_snapshot *s)
{
	int i;

	for (i = 0; i < TRAIN_SNAPSHOT_ARRAYS; i++)
		if (*state_array(t->st, i) &&
		    !(s->arrays[i] = malloc(state_array_bytes(t->m, i) + sizeof(float))))
			return 0;
	return 1;
}

static void snapshot_free(struct train_snapshot *s)
{
	int i;

	for (i = 0; i < TRAIN_SNAPSHOT_ARRAYS; i++)
		free(s->arrays[i]);
}

/* Copies the state into s (take = 1) or s back into the state (take = 0). */
static void snapshot_copy(struct trainer *t, struct train_snapshot *s, int take)
{
	bnn_state *st = t->st;
	int i;

	for (i = 0; i < TRAIN_SNAPSHOT_ARRAYS; i++) {
		float *a = *state_array(st, i);
		if (!a || !s->arrays[i])
			continue;
		if (take)
			memcpy(s->arrays[i], a, state_array_bytes(t->m, i));
		else
			memcpy(a, s->arrays[i], state_array_bytes(t->m, i));
	}
	if (take) {
		s->step = st->step;
		s->epoch = st->epoch;
	} else {
		st->step = s->step;
		st->epoch = s->epoch;
	}
}

static int train_check_options(const bnn_train_options *o, bnn_err *err)
{
	if (o->optimizer < 0 || o->optimizer >= BNN_OPT_COUNT)
		return bnn_fail(err, BNN_EINVAL, "unknown optimizer %d", o->optimizer);
	if (o->batch < 1 || o->epochs < 1)
		return bnn_fail(err, BNN_EINVAL, "batch and epochs must be at least 1");
	if (!(o->schedule.lr >= 0))
		return bnn_fail(err, BNN_EINVAL, "the learning rate must be positive");
	if (o->mc < 1)
		return bnn_fail(err, BNN_EINVAL,
		                "mc (Monte-Carlo samples per step) must be at least 1");
	if (o->valid_fraction < 0 || o->valid_fraction >= 1)
		return bnn_fail(err, BNN_EINVAL, "valid_fraction must be in [0, 1)");
	return BNN_OK;
}

static int train_check_targets(const bnn_model *m, const bnn_dataset *ds, const char *what,
                               bnn_err *err)
{
	int rc = train_data_fits(m, ds, 1, what, err);
	if (rc || (rc = bnn_model_check_inputs(m, ds, what, err)))
		return rc;
	return bnn_model_check_targets(m, ds, what, err);
}

/* Splits the examples into training and validation index lists. */
static int train_split(struct trainer *t, bnn_err *err)
{
	long n = t->train->n, i, nv = 0;
	long *all = malloc((size_t)n * sizeof *all);
	if (!all)
		return bnn_fail(err, BNN_ENOMEM, "out of memory");
	for (i = 0; i < n; i++)
		all[i] = i;
	if (t->valid) {
		t->valid_ds = t->valid;
		t->nvalid = t->valid->n;
		t->valid_idx = malloc((size_t)t->nvalid * sizeof *t->valid_idx);
		if (!t->valid_idx) {
			free(all);
			return bnn_fail(err, BNN_ENOMEM, "out of memory");
		}
		for (i = 0; i < t->nvalid; i++)
			t->valid_idx[i] = i;
	} else if (t->o->valid_fraction > 0) {
		bnn_rng split;
		nv = (long)floor(t->o->valid_fraction * (double)n);
		if (nv < 1 || nv >= n) {
			free(all);
			return bnn_fail(err, BNN_EINVAL,
			                "valid_fraction %g of %ld examples leaves no %s",
			                t->o->valid_fraction, n,
			                nv < 1 ? "validation examples" : "training examples");
		}
		bnn_rng_seed(&split, t->o->seed ^ 0x5851f42d4c957f2dULL);
		bnn_rng_shuffle(&split, all, n);
		t->valid_ds = t->train;
		t->nvalid = nv;
		t->valid_idx = malloc((size_t)nv * sizeof *t->valid_idx);
		if (!t->valid_idx) {
			free(all);
			return bnn_fail(err, BNN_ENOMEM, "out of memory");
		}
		memcpy(t->valid_idx, all, (size_t)nv * sizeof *all);
		memmove(all, all + nv, (size_t)(n - nv) * sizeof *all);
	}
	t->train_idx = all;
	t->ntrain = n - nv;
	return BNN_OK;
}

static int train_alloc(struct trainer *t, bnn_err *err)
{
	const bnn_model *m = t->m;
	long b = t->o->batch < t->ntrain ? t->o->batch : t->ntrain;

	b = (b + t->nranks - 1) / t->nranks; /* the most rows one rank takes */
	t->ws = bnn_floats_alloc((long)m->workspace_floats(b) + 1);
	t->xb = bnn_floats_alloc(b * m->inputs);
	t->yb = malloc((size_t)(b * m->targets) * sizeof(float));
	if (!t->ws || !t->xb || !t->yb || !snapshot_alloc(t, &t->start) ||
	    (t->nvalid > 0 && !snapshot_alloc(t, &t->best)) ||
	    (t->nvalid > 0 && !(t->out = malloc((size_t)(t->nvalid * m->outputs) * sizeof(float)))))
		return bnn_fail(err, BNN_ENOMEM, "out of memory for training buffers");
	return BNN_OK;
}

/* The image layout for crop_pad and flip: a training set of rank 2 (H×W)
 * or 3 (C×H×W) images; anything else is refused, and so is a model of
 * signals ([C, L] input), whose examples would be cropped and flipped
 * across channels as if they were one image. */
static int train_augment_setup(struct trainer *t, bnn_err *err)
{
	const bnn_dataset *ds = t->train;
	const bnn_train_options *o = t->o;

	if (o->crop_pad <= 0 && !o->flip)
		return BNN_OK;
	if (t->m->input_rank == 2)
		return bnn_fail(err, BNN_EINVAL,
		                "augmentation (crop_pad, flip) is for images, and model '%s' "
		                "takes signals (input %s[%ld, %ld]: channels, length)",
		                t->m->name, t->m->input_name, t->m->input_shape[0],
		                t->m->input_shape[1]);
	if (ds->rank != 2 && ds->rank != 3)
		return bnn_fail(
		        err, BNN_EINVAL,
		        "augmentation (crop_pad, flip) needs images, and the training data "
		        "has examples of rank %d: use IDX images (rank 2, rows x columns, or "
		        "3, channels x rows x columns)",
		        ds->rank);
	t->aug_c = ds->rank == 3 ? ds->shape[0] : 1;
	t->aug_h = ds->shape[ds->rank - 2];
	t->aug_w = ds->shape[ds->rank - 1];
	if (t->aug_c * t->aug_h * t->aug_w != ds->features)
		return bnn_fail(
		        err, BNN_EINVAL,
		        "augmentation: the training images' shape (%ld x %ld x %ld) does not "
		        "match their %ld features",
		        t->aug_c, t->aug_h, t->aug_w, ds->features);
	/* a crop offset of H or more would cut a window of padding alone */
	if (o->crop_pad >= t->aug_h || o->crop_pad >= t->aug_w)
		return bnn_fail(err, BNN_EINVAL,
		                "augmentation: crop_pad %ld is not less than the training images' "
		                "%ld x %ld, so a crop could hold padding alone: use a few pixels "
		                "(the VOGN paper pads 32 x 32 images by 4)",
		                o->crop_pad, t->aug_h, t->aug_w);
	t->aug_scratch = malloc((size_t)ds->features * sizeof(float));
	if (!t->aug_scratch)
		return bnn_fail(err, BNN_ENOMEM, "out of memory for training buffers");
	return BNN_OK;
}

/* Augment one gathered training example in place, when crop_pad or flip is set. */
static void train_augment(struct trainer *t, float *x)
{
	bnn_image_shape shape = { t->aug_c, t->aug_h, t->aug_w };
	bnn_augmentation aug;

	if (!t->aug_scratch)
		return;
	bnn_augment_draw(&t->aug, t->o->crop_pad, t->o->flip, &aug);
	bnn_augment_image(x, &shape, &aug, t->aug_scratch);
}

/* Copy training example e into row j of the step's batch. */
static void train_copy_row(struct trainer *t, long j, long e)
{
	const bnn_model *m = t->m;

	memcpy(t->xb + j * m->inputs, t->train->x + e * m->inputs,
	       (size_t)m->inputs * sizeof(float));
	memcpy(t->yb + j * m->targets, t->train->y + e * m->targets,
	       (size_t)m->targets * sizeof(float));
}

/*
 * The step's batch: training examples idx[0..rows) copied into rows of
 * xb and yb, then augmented in row order (the augmentation's draws come
 * from one stream).  From TRAIN_GATHER_PARALLEL_MIN floats of inputs on,
 * the copies run on the team: the rows lie scattered over the set, and
 * one core waiting on memory left the others idle (784-512-512-10 at
 * batch 128 on 2 threads: the serial copy was 4% of the step; see
 * docs/benchmarks.md).  Below, a parallel region costs more than the
 * copy.  Copies are copies: the batch has the same bits on any team.
 */
#define TRAIN_GATHER_PARALLEL_MIN 32768L

static void train_gather(struct trainer *t, const long *idx, long rows)
{
	long j;

	if (rows * t->m->inputs >= TRAIN_GATHER_PARALLEL_MIN) {
#pragma omp parallel for schedule(static)
		for (j = 0; j < rows; j++)
			train_copy_row(t, j, idx[j]);
	} else {
		for (j = 0; j < rows; j++)
			train_copy_row(t, j, idx[j]);
	}
	for (j = 0; j < rows; j++)
		train_augment(t, t->xb + j * t->m->inputs);
}

static void train_free(struct trainer *t)
{
	bnn_dataset_free(&t->valid_own);
	free(t->aug_scratch);
	free(t->train_idx);
	free(t->valid_idx);
	free(t->loo_idx);
	free(t->ws);
	free(t->xb);
	free(t->yb);
	free(t->out);
	snapshot_free(&t->start);
	snapshot_free(&t->best);
	train_step_free(t);
	train_dist_free(t);
	train_swag_free(&t->swag);
}

/* Right answers of outputs against the targets of examples idx[0..n)
 * into v[0], answers into v[1] (the validation accuracy is v[0] / v[1]
 * summed over the ranks).  A label is predicted present when its output
 * exceeds threshold: 0 for raw outputs (logits), 0.5 for probabilities. */
static void train_accuracy(const bnn_model *m, const bnn_dataset *ds, const long *idx, long n,
                           const float *out, float threshold, double *v)
{
	long i, j, right = 0, total = 0, k = m->outputs;
	if (bnn_likelihood_regression(m))
		return;
	for (i = 0; i < n; i++) {
		const float *z = out + i * k, *y = ds->y + idx[i] * m->targets;
		if (bnn_likelihood_targets(m) == BNN_TARGETS_CLASS) {
			long best = 0;
			for (j = 1; j < k; j++)
				if (z[j] > z[best])
					best = j;
			right += best == (long)y[0];
			total++;
		} else {
			for (j = 0; j < k; j++)
				right += (z[j] > threshold) == (y[j] > 0.5f);
			total += k;
		}
	}
	v[0] = (double)right;
	v[1] = (double)total;
}

/*
 * Batch normalisation in training normalises each channel over the
 * minibatch: a batchnorm layer over vectors (one value per channel and
 * example) needs at least two examples, or its output is its shift alone
 * and its running variance decays to 0.  Sets t->min_batch; refuses a
 * batch (or a training set) of one for such a model.
 */
static int train_check_batchnorm(struct trainer *t, bnn_err *err)
{
	const bnn_model *m = t->m;
	long batch = t->o->batch < t->ntrain ? t->o->batch : t->ntrain;
	int i;

	t->min_batch = 1;
	if (batch < t->nranks)
		return bnn_fail(err, BNN_EINVAL,
		                "a minibatch of %ld examples cannot be split across %d processes: "
		                "train with a batch of at least %d",
		                batch, t->nranks, t->nranks);
	for (i = 0; i < m->nlayers; i++) {
		const bnn_layer *l = &m->layers[i];
		if (strcmp(l->op, "batchnorm") != 0 ||
		    l->in_features != m->tensors[l->first_tensor].size)
			continue;
		t->min_batch = 2;
		if (batch < 2)
			return bnn_fail(
			        err, BNN_EINVAL,
			        "layer '%s' normalises each of its %ld features over the "
			        "minibatch, and a minibatch of %ld example%s gives it one value: "
			        "train with a batch of at least 2",
			        l->name, l->in_features, batch, batch == 1 ? "" : "s");
		if (batch < 2L * t->nranks)
			return bnn_fail(err, BNN_EINVAL,
			                "layer '%s' normalises each of its %ld features over each "
			                "process's rows of the minibatch: train with a batch of at "
			                "least %d (2 rows for each of %d processes)",
			                l->name, l->in_features, 2 * t->nranks, t->nranks);
	}
	return BNN_OK;
}

/* Whether any rank asks to stop (one process: stop itself). */
static int train_agree_stop(struct trainer *t, int stop)
{
	double v = stop != 0;

	train_dist_sum(t, &v, 1);
	return v > 0;
}

/* What a divergence message suggests: a smaller rate, or clipping the
 * gradient's norm (more of it when the run clips already). */
static void train_divergence_hint(const struct trainer *t, char *buf, size_t size)
{
	if (t->clip > 0)
		snprintf(buf, size, "try a smaller learning rate, or a clip below %g", t->clip);
	else
		snprintf(buf, size, "try a smaller learning rate, or --set clip=1");
}

/* One pass over the training data; returns BNN_ERANGE on a non-finite loss.
 * A last minibatch smaller than t->min_batch (for each of the ranks) is
 * left out (the shuffle puts another example last in the next epoch).
 * With several ranks, each gathers its rows of every minibatch
 * (train_dist_rows), the step sums the loss over them, and a stop asked
 * by a progress report takes effect at the end of the epoch, when every
 * rank agrees on it (t->stopped stays 0). */
static int train_epoch(struct trainer *t, bnn_epoch_report *r, bnn_epoch_fn on_epoch, void *ctx,
                       bnn_err *err)
{
	const bnn_train_options *o = t->o;
	long batch = o->batch, steps = (t->ntrain + batch - 1) / batch, s, seen = 0;
	long smallest = t->min_batch * t->nranks, mine, off;
	double total = 0, t0 = train_now(), last = t0;
	int stop = 0;

	if (t->ntrain % batch != 0 && t->ntrain % batch < smallest)
		steps--;

	bnn_rng_shuffle(&t->rng, t->train_idx, t->ntrain);
	t->shuffles++;
	r->steps = steps;
	for (s = 0; s < steps; s++) {
		long first = s * batch, b = t->ntrain - first < batch ? t->ntrain - first : batch;
		double loss, progress;
		train_dist_rows(t, b, &off, &mine);
		t->rows = mine;
		t->global_rows = b;
		train_gather(t, t->train_idx + first + off, mine);
		progress = (double)(r->epoch - 1) + (double)(s + 1) / (double)steps;
		loss = train_step(t, mine, bnn_schedule_lr(&t->schedule, progress),
		                  (double)(r->epoch - 1) + (double)s / (double)steps);
		if (!isfinite(loss)) {
			char hint[96];
			train_divergence_hint(t, hint, sizeof hint);
			return bnn_fail(
			        err, BNN_ERANGE,
			        "training diverged in epoch %ld at step %ld: the loss is not "
			        "finite (%s)",
			        r->epoch, s + 1, hint);
		}
		total += loss;
		seen += b;
		if (on_epoch && train_now() - last > 0.5) {
			last = train_now();
			r->final = 0;
			r->step = s + 1;
			r->train_loss = total / (double)seen;
			r->seconds = last - t0;
			r->examples_per_second = (double)seen / r->seconds;
			if (on_epoch(r, ctx)) {
				if (t->nranks > 1) {
					stop = 1; /* agreed at the epoch's end */
				} else {
					t->stopped = 1; /* stop now: the epoch is not complete */
					return BNN_OK;
				}
			}
		}
	}
	r->final = 1;
	r->step = steps;
	r->train_loss = total / (double)(seen > 0 ? seen : 1);
	r->seconds = train_now() - t0;
	r->examples_per_second = r->seconds > 0 ? (double)seen / r->seconds : 0;
	if (t->nranks > 1)
		t->stop_asked = stop;
	return BNN_OK;
}

/*
 * The loss is computed before each step's update, so the epoch's last
 * update can leave a parameter infinite (or a σ NaN) behind a finite loss:
 * that is a divergence too.  σ = +inf is not: BADAM gives it to a weight
 * that no gradient reached when δ = 0 (docs/optimizers/badam.md).
 */
static int train_check_finite(const struct trainer *t, long epoch, bnn_err *err)
{
	const bnn_state *st = t->st;
	long i, n = t->m->nparams;
	char hint[96];

	for (i = 0; i < n; i++)
		if (!isfinite(st->params[i]) || (st->sigma && isnan(st->sigma[i]))) {
			train_divergence_hint(t, hint, sizeof hint);
			return bnn_fail(
			        err, BNN_ERANGE,
			        "training diverged in epoch %ld: parameter %ld is not finite "
			        "after the epoch's last step (%s)",
			        epoch, i, hint);
		}
	return BNN_OK;
}

/*
 * After a divergence in epoch e > 1 of the run (the state rolled back to
 * the end of epoch e − 1): the state a run ends with (the best epoch's
 * with validation data), saved as at the end of a run.  err keeps the
 * divergence; a failed save returns its own code and says both.
 */
static int train_save_after_divergence(struct trainer *t, int have_best, const char *checkpoint,
                                       bnn_err *err)
{
	bnn_err save_err, diverged;

	if (have_best)
		snapshot_copy(t, &t->best, 0);
	if (!checkpoint || !bnn_state_save(t->st, checkpoint, &save_err))
		return BNN_ERANGE;
	if (!err)
		return save_err.code;
	diverged = *err;
	return bnn_fail(err, save_err.code, "%s; the last good epoch could not be saved: %s",
	                diverged.message, save_err.message);
}

/*
 * Saves the checkpoint a run ending now would leave: the best epoch's
 * state with validation data (t->best), else the live one.  At an
 * epoch's end (resumable) it also carries where the run stands
 * (progress.c): the live arrays when they are not the best's, the
 * streams, the early-stopping bookkeeping and the sample the last update
 * drew for the next step, so that a run resumed from it goes on exactly
 * as this one would.
 */
static int train_save(struct trainer *t, const char *path, int resumable, bnn_err *err)
{
	bnn_state *st = t->st, view = *st;
	bnn_train_progress p;
	bnn_ckpt *ck;
	int i, rc, live_differs = t->have_best && t->since_best > 0;

	memset(&p, 0, sizeof p);
	for (i = 0; t->have_best && i < TRAIN_SNAPSHOT_ARRAYS; i++) {
		if (!*state_array(st, i))
			continue;
		*state_array(&view, i) = t->best.arrays[i];
		if (live_differs)
			p.live[i] = *state_array(st, i);
	}
	if (t->have_best) {
		view.step = t->best.step;
		view.epoch = t->best.epoch;
	}
	view.progress = NULL;
	if (resumable) {
		p.epoch = st->epoch;
		p.step = st->step;
		p.shuffles = t->shuffles;
		p.ntrain = t->ntrain;
		p.nvalid = t->nvalid;
		p.ranks = t->nranks;
		p.noise = t->noise;
		p.aug = t->aug;
		p.have_best = t->have_best;
		p.best_nll = t->best_nll;
		p.since_best = t->since_best;
		p.tau = t->tau;
		p.theta = t->primed ? t->theta : NULL;
		p.eps = t->primed ? t->eps : NULL;
		view.progress = &p;
	}
	if ((rc = train_state_ckpt(&view, path, &ck, err)))
		return rc;
	rc = bnn_ckpt_save(ck, path, err);
	bnn_ckpt_free(ck);
	return rc;
}

/*
 * --resume: puts the trainer where the run of st->progress stood at the
 * end of its last epoch: the best epoch's state (the arrays as loaded)
 * kept for early stopping, the live arrays, the shuffled order and its
 * stream (replayed from the seed: each epoch shuffles the last order),
 * the noise and augmentation streams, and the next step's sample.
 */
static int train_resume(struct trainer *t, bnn_err *err)
{
	bnn_state *st = t->st;
	const bnn_train_progress *p = st->progress;
	long k;
	int i;

	if (!p)
		return bnn_fail(err, BNN_EINVAL,
		                "the state has no training progress to resume (its checkpoint has "
		                "no section 'resume')");
	if (t->nranks > 1)
		return bnn_fail(err, BNN_EUNSUPPORTED,
		                "a run can be resumed on one process only, not on %d", t->nranks);
	if (p->ranks != 1) /* its other ranks' noise streams are not in it */
		return bnn_fail(err, BNN_EUNSUPPORTED,
		                "the run to resume trained on %ld processes, and a run can be "
		                "resumed only if it trained on one",
		                p->ranks);
	if (p->ntrain != t->ntrain || p->nvalid != t->nvalid)
		return bnn_fail(err, BNN_EMISMATCH,
		                "the run to resume trained on %ld examples and held out %ld, and "
		                "this data gives %ld and %ld: resume with the same data",
		                p->ntrain, p->nvalid, t->ntrain, t->nvalid);
	if (p->have_best)
		snapshot_copy(t, &t->best, 1);
	for (i = 0; i < TRAIN_SNAPSHOT_ARRAYS; i++)
		if (p->live[i] && *state_array(st, i))
			memcpy(*state_array(st, i), p->live[i], state_array_bytes(t->m, i));
	st->step = p->step;
	st->epoch = p->epoch;
	for (k = 0; k < p->shuffles; k++)
		bnn_rng_shuffle(&t->rng, t->train_idx, t->ntrain);
	t->shuffles = p->shuffles;
	t->noise = p->noise;
	t->aug = p->aug;
	t->have_best = p->have_best;
	t->best_nll = p->best_nll;
	t->since_best = p->since_best;
	t->tau = p->tau;
	if (p->theta && t->theta) {
		memcpy(t->theta, p->theta, (size_t)t->m->nparams * sizeof *t->theta);
		if (p->eps && t->eps)
			memcpy(t->eps, p->eps, (size_t)t->m->nparams * sizeof *t->eps);
		t->primed = 1;
	}
	return BNN_OK;
}

/* The same number of training and validation examples on every rank
 * (every rank shuffles the same indices). */
static int train_check_sizes(struct trainer *t, bnn_err *err)
{
	double v[2] = { (double)t->train->n, t->valid ? (double)t->valid->n : 0 };

	train_dist_sum(t, v, 2);
	if (v[0] != (double)t->nranks * (double)t->train->n ||
	    (t->valid && v[1] != (double)t->nranks * (double)t->valid->n))
		return bnn_fail(err, BNN_EMISMATCH,
		                "the %s data has %ld examples here and another number on another "
		                "process: every process must load the same data",
		                v[0] != (double)t->nranks * (double)t->train->n ? "training"
		                                                                : "validation",
		                v[0] != (double)t->nranks * (double)t->train->n ? t->train->n
		                                                                : t->valid->n);
	return BNN_OK;
}

/*
 * Validation by the posterior predictive (an optimizer's valid_mc: BADAM,
 * whose σ no gradient sees).  It samples σ, so it needs every δ > 0: with
 * δ = 0 a weight no gradient reached has σ = +inf (optim_badam.c) and no
 * sample predicts, and such a run validates at the mean.  bnn_predict
 * reads whole data sets, so the held-out examples of a valid_fraction
 * split are gathered once into t->valid_own.
 */
static int train_valid_mc_setup(struct trainer *t, bnn_err *err)
{
	const bnn_dataset *src = t->valid_ds;
	bnn_dataset *d = &t->valid_own;
	long i;

	t->valid_mc = train_optimizers[t->o->optimizer].valid_mc;
	for (i = 0; i < t->ntensors; i++)
		if (train_stochastic(&t->tensors[i]) && !(t->tensors[i].delta > 0))
			t->valid_mc = 0;
	if (t->valid_mc == 0 || t->nvalid == 0 || src != t->train)
		return BNN_OK; /* at the mean, none, or a validation set as given */
	*d = *src;
	d->n = t->nvalid;
	d->columns = NULL;
	d->target_columns = NULL;
	d->x = bnn_floats_alloc(d->n * d->features);
	d->y = d->targets ? bnn_floats_alloc(d->n * d->targets) : NULL;
	if (!d->x || (d->targets && !d->y)) {
		bnn_dataset_free(d);
		return bnn_fail(err, BNN_ENOMEM, "out of memory");
	}
	for (i = 0; i < d->n; i++) {
		long j = t->valid_idx[i];
		memcpy(d->x + i * d->features, src->x + j * src->features,
		       (size_t)d->features * sizeof *d->x);
		if (d->targets)
			memcpy(d->y + i * d->targets, src->y + j * src->targets,
			       (size_t)d->targets * sizeof *d->y);
		t->valid_idx[i] = i;
	}
	t->valid_ds = d;
	return BNN_OK;
}

/* valid_mc's NLL and accuracy sums: rank 0 predicts every held-out example
 * (bnn_predict's sum is in example order, the same for any threads), the
 * others add nothing. */
static int train_validate_mc(struct trainer *t, double *v, bnn_err *err)
{
	const bnn_prediction out = { .probs = t->out, .nll = &v[0] };
	int rc;

	if (t->rank > 0)
		return BNN_OK;
	rc = bnn_predict(t->st, t->valid_ds, t->valid_mc, bnn_rng_derive(t->o->seed, 0x7661), &out,
	                 err); /* "va": the same draws every epoch */
	if (!rc)
		train_accuracy(t->m, t->valid_ds, t->valid_idx, t->nvalid, t->out, 0.5f, v + 1);
	return rc;
}

/* The validation NLL and accuracy of the state, each rank running its
 * share of the held-out examples (train_dist_rows) and the sums and
 * counts added over the ranks (valid_mc: train_validate_mc).  A rank's
 * failure is agreed on by the caller. */
static int train_validate(struct trainer *t, bnn_epoch_report *r, bnn_err *err)
{
	long first, count;
	double v[4] = { 0, 0, 0, 0 }; /* NLL, right, answers, failed */
	int rc = BNN_OK;

	train_dist_rows(t, t->nvalid, &first, &count);
	if (t->valid_mc > 0 && t->st->sigma)
		rc = train_validate_mc(t, v, err);
	else if (count > 0) {
		bnn_example_range held_out = { t->valid_idx + first, count, 256 };
		float *out = t->out + first * t->m->outputs;
		rc = bnn_model_outputs(t->st, t->valid_ds, &held_out, out, &v[0], err);
		if (!rc)
			train_accuracy(t->m, t->valid_ds, t->valid_idx + first, count, out, 0,
			               v + 1);
	}
	v[3] = rc != 0;
	train_dist_sum(t, v, 4);
	r->valid_nll = v[0] / (double)t->nvalid;
	r->valid_accuracy = bnn_likelihood_regression(t->m) ? NAN : v[1] / v[2];
	return rc;
}

/* Tells io->on_start what the run uses (on every rank: the caller
 * decides which prints); out of memory, nothing is said. */
static void train_announce(const struct trainer *t, const bnn_train_io *io)
{
	char *text;

	if (!io->on_start || !(text = train_settings_text(t)))
		return;
	io->on_start(text, io->ctx);
	free(text);
}

int bnn_train(bnn_state *st, const bnn_train_io *io, const bnn_train_options *o, bnn_err *err)
{
	const bnn_dataset *train = io ? io->train : NULL, *valid = io ? io->valid : NULL;
	const char *checkpoint = io ? io->checkpoint : NULL;
	bnn_epoch_fn on_epoch = io ? io->on_epoch : NULL;
	void *ctx = io ? io->ctx : NULL;
	struct trainer t;
	double last_save = train_now();
	long e, first = 1;
	int rc, k;

	if (!st || !st->model || !st->params || !train || !o)
		return bnn_fail(err, BNN_EINVAL, "bnn_train: no %s given",
		                !st || !st->model || !st->params ? "state"
		                : !train                         ? "training data"
		                                                 : "options");
	memset(&t, 0, sizeof t);
	t.st = st;
	t.m = st->model;
	t.train = train;
	t.valid = valid;
	t.o = o;
	if ((rc = train_dist_setup(&t, io->comm, err))) {
		train_dist_free(&t);
		return rc;
	}
	if (t.rank > 0)
		checkpoint = NULL; /* rank 0 writes the checkpoints */
	if (!(rc = bnn_model_check(t.m, err)) && !(rc = train_check_options(o, err)) &&
	    !(rc = bnn_train_options_check_model(o, t.m, valid != NULL, err)) &&
	    !(rc = train_check_model(t.m, o, err)) &&
	    !(rc = train_check_targets(t.m, train, "the training data", err)))
		rc = valid ? train_check_targets(t.m, valid, "the validation data", err) : BNN_OK;
	/* every rank's data checked (a bad shard stops all of them) */
	if ((rc = train_dist_agree(&t, rc, err)) || (rc = train_check_sizes(&t, err)) ||
	    (rc = train_dist_agree(&t, rc, err))) {
		train_dist_free(&t);
		return rc;
	}
	if (!rc && st->posthoc)
		rc = bnn_fail(err, BNN_EINVAL,
		              "the state carries a %s posterior, which training would not keep: "
		              "start from its parameters instead (train --init)",
		              train_posthoc_name(st->posthoc));
	if (!rc && o->swag > 0 && !(rc = train_posthoc_layers_check(t.m, "swag", err)) &&
	    io->resume)
		rc = bnn_fail(err, BNN_EINVAL,
		              "swag cannot resume a run: its moments are not in the checkpoint");
	if (!rc && !(rc = train_swag_start(&t.swag, o, t.m->nparams, err)) &&
	    !(rc = train_split(&t, err)) && !(rc = train_check_batchnorm(&t, err))) {
		t.n_data = (double)t.ntrain;
		t.h0 = bnn_train_h0(o, t.n_data); /* before the state's start (h ← h0) */
		/* the data's checks first: a refusal leaves st as it was */
		if (!(rc = train_augment_setup(&t, err)) && !(rc = train_step_setup(&t, err)) &&
		    !(rc = train_alloc(&t, err)) && !(rc = train_valid_mc_setup(&t, err)))
			rc = train_loo_setup(&t, err);
	}
	/* one process's failure here (memory) is every process's */
	if ((rc = train_dist_agree(&t, rc, err)))
		goto done;
	t.schedule = o->schedule;
	t.schedule.kind = (enum bnn_schedule_kind)bnn_train_schedule_kind(o);
	t.schedule.lr = bnn_train_lr(o, t.n_data); /* a short run's default scaled */
	t.clip = bnn_train_clip(o);
	free(st->options);
	st->options = bnn_train_options_text(o); /* as given: --resume compares them */
	t.schedule.total = (double)o->epochs;
	bnn_rng_seed(&t.rng, o->seed);
	bnn_rng_jump(&t.rng);
	t.noise = t.rng;
	bnn_rng_jump(&t.noise);
	/* rank r > 0: its own noise and augmentation streams, two jumps on
	 * per rank (rank 0's are a single process's) */
	for (k = 0; k < 2 * t.rank; k++)
		bnn_rng_jump(&t.noise);
	t.aug = t.noise;
	bnn_rng_jump(&t.aug);
	t.best_nll = INFINITY;
	if (io->resume) {
		rc = train_dist_agree(&t, train_resume(&t, err), err);
		if (rc)
			goto done;
		first = st->epoch + 1; /* epochs counts from the resumed run's start */
	}
	/* it described the state as loaded, not as this run leaves it */
	train_progress_free(st->progress);
	st->progress = NULL;
	bnn_set_threads(o->threads);
	train_announce(&t, io);
	for (e = first; e <= o->epochs; e++) {
		bnn_epoch_report r;
		int stop;
		/* early stopping (checked here too for a resumed run that had
		 * stopped) */
		if (t.nvalid > 0 && o->patience > 0 && t.since_best >= o->patience)
			break;
		memset(&r, 0, sizeof r);
		r.epoch = e;
		r.epochs = o->epochs;
		r.valid_nll = r.valid_accuracy = r.loo_nll = NAN;
		snapshot_copy(&t, &t.start, 1);
		rc = train_epoch(&t, &r, on_epoch, ctx, err);
		if (!rc) {
			train_step_finish_epoch(&t); /* σ of the state as it is, even mid-epoch */
			rc = train_check_finite(&t, e, err);
		}
		rc = train_dist_agree(&t, rc, err);
		if (rc) {
			snapshot_copy(&t, &t.start, 0);
			if (rc == BNN_ERANGE && e > first) {
				rc = train_save_after_divergence(&t, t.have_best, checkpoint, err);
				rc = train_dist_agree(&t, rc, err);
			}
			goto done;
		}
		if (t.stopped)
			break; /* by the callback, within the epoch: not counted */
		stop = train_agree_stop(&t, t.stop_asked);
		train_dist_mean_stats(&t);
		st->epoch++;
		if (o->swag > 0 && e > o->epochs - o->swag) /* SWAG, Alg. 1: one iterate an epoch */
			train_swag_collect(&t.swag, st->params);
		r.improved = 1;
		if (t.nvalid > 0) {
			rc = train_validate(&t, &r, err);
			r.improved = r.valid_nll < t.best_nll;
			if (!rc && r.improved) {
				t.best_nll = r.valid_nll;
				t.since_best = 0;
				snapshot_copy(&t, &t.best, 1);
				t.have_best = 1;
			} else {
				t.since_best++;
			}
		}
		if (t.nloo > 0) { /* collective: every rank, whatever its status */
			int loo_rc = train_loo(&t, &r, rc ? NULL : err);
			rc = rc ? rc : loo_rc;
		}
		/* A checkpoint now and then guards a long run against a crash
		 * (every checkpoint_every epochs, and after an improving epoch
		 * when TRAIN_SAVE_SECONDS have passed); the final one is written
		 * below. */
		if (!rc && checkpoint && e < o->epochs &&
		    ((io->checkpoint_every > 0 && e % io->checkpoint_every == 0) ||
		     (r.improved && train_now() - last_save >= TRAIN_SAVE_SECONDS))) {
			rc = train_save(&t, checkpoint, 1, err);
			last_save = train_now();
		}
		if ((rc = train_dist_agree(&t, rc, err)))
			goto done;
		r.lr = bnn_schedule_lr(&t.schedule, (double)e);
		if (stop)
			break; /* a progress report asked, on some rank */
		if (on_epoch && train_agree_stop(&t, on_epoch(&r, ctx)))
			break;
	}
	/* SWAG: the run ends with its posterior, not with the best epoch's
	 * parameters, and a checkpoint that cannot be resumed */
	if (o->swag > 0 && t.swag.collected > 0) {
		t.have_best = 0;
		rc = train_swag_finish(&t.swag, st, err);
	}
	/* resumable unless the callback stopped within an epoch */
	if (!rc && checkpoint)
		rc = train_save(&t, checkpoint, !t.stopped && !st->posthoc, err);
	if (t.have_best)
		snapshot_copy(&t, &t.best, 0);
	rc = train_dist_agree(&t, rc, err);
done:
	train_free(&t);
	return rc;
}
