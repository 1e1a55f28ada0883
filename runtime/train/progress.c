/*
 * progress.c: where a training run stands (bnn_train_progress), as the
 * resume sections of a checkpoint, so that `train --resume` continues a
 * run exactly as if it had never stopped (docs/training.md, "Resuming";
 * the sections are in docs/checkpoint.md).
 *
 * The state's own sections (state.c) already carry the parameters, σ,
 * the running statistics and every optimizer's arrays (the slots each
 * row of train_optimizers[] names), with the step and epoch counters.
 * What a run needs beyond them is the same for every optimizer, so it is
 * one list here and no optimizer has a case of its own:
 *   resume          text, "key=value" lines: the format's version, the
 *                   live epoch and step, the shuffles done, the training
 *                   and validation sizes, the processes, the noise and augmentation
 *                   streams (xoshiro256** states), the early-stopping
 *                   bookkeeping (best NLL as a hex float, epochs since)
 *                   and VOGN's τ of the last step
 *   resume.params .. resume.opt.e
 *                   f32: the live arrays, present when the state's own
 *                   sections hold the best epoch's (validation data and
 *                   a later epoch that did not improve)
 *   resume.theta, resume.eps
 *                   f32: the next step's posterior sample and its noise,
 *                   drawn by the last update (vogn, ivon and bbb fuse
 *                   the next sample into the update)
 * The shuffling stream is not stored: each epoch shuffles the previous
 * order, so the order and the stream are replayed from the seed.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/floats.h"
#include "train_internal.h"

/* The version of the resume sections' content (the "version" key). */
#define PROGRESS_VERSION 1

/* The state's own sections, in the order of state_array() (train.c):
 * params, sigma, stats, opt.a .. opt.e; the live copies are "resume." and
 * these. */
const char *const train_array_names[TRAIN_SNAPSHOT_ARRAYS] = {
	"params", "sigma", "stats", "opt.a", "opt.b", "opt.c", "opt.d", "opt.e"
};

long train_array_size(const bnn_model *m, int i)
{
	return i == 2 ? m->nstats : m->nparams;
}

float **train_state_array(bnn_state *st, int i)
{
	return i == 0 ? &st->params : i == 1 ? &st->sigma : i == 2 ? &st->stats : &st->opt[i - 3];
}

void train_progress_free(bnn_train_progress *p)
{
	int i;

	if (!p)
		return;
	for (i = 0; i < TRAIN_SNAPSHOT_ARRAYS; i++)
		free(p->live[i]);
	free(p->theta);
	free(p->eps);
	free(p);
}

long bnn_train_progress_epoch(const bnn_train_progress *p)
{
	return p ? p->epoch : -1;
}

/* ---- writing ---- */

static void progress_rng_text(char *buf, size_t n, const bnn_rng *r)
{
	snprintf(buf, n, "%016" PRIx64 " %016" PRIx64 " %016" PRIx64 " %016" PRIx64, r->s[0],
	         r->s[1], r->s[2], r->s[3]);
}

static int progress_add_f32(bnn_ckpt *ck, const char *name, const float *v, long n)
{
	char section[64];

	snprintf(section, sizeof section, "resume.%s", name);
	return bnn_ckpt_add_f32(ck, section, v, n);
}

int train_progress_add(bnn_ckpt *ck, const bnn_model *m, const bnn_train_progress *p)
{
	char text[1024], noise[80], aug[80];
	int rc, i;

	progress_rng_text(noise, sizeof noise, &p->noise);
	progress_rng_text(aug, sizeof aug, &p->aug);
	snprintf(
	        text, sizeof text,
	        "version=%d\nepoch=%ld\nstep=%ld\nshuffles=%ld\ntrain_examples=%ld\n"
	        "valid_examples=%ld\nranks=%ld\nrng.noise=%s\nrng.aug=%s\nhave_best=%d\nbest_nll=%a\n"
	        "since_best=%ld\ntau=%a\n",
	        PROGRESS_VERSION, p->epoch, p->step, p->shuffles, p->ntrain, p->nvalid, p->ranks,
	        noise, aug, p->have_best, p->best_nll, p->since_best, p->tau);
	rc = bnn_ckpt_add_text(ck, "resume", text);
	for (i = 0; !rc && i < TRAIN_SNAPSHOT_ARRAYS; i++)
		if (p->live[i])
			rc = progress_add_f32(ck, train_array_names[i], p->live[i],
			                      train_array_size(m, i));
	if (!rc && p->theta)
		rc = progress_add_f32(ck, "theta", p->theta, m->nparams);
	if (!rc && p->eps)
		rc = progress_add_f32(ck, "eps", p->eps, m->nparams);
	return rc;
}

/* ---- reading ---- */

static int progress_bad(const char *path, const char *what, bnn_err *err)
{
	return bnn_fail(err, BNN_EFORMAT, "%s: section 'resume': %s", path, what);
}

/* The value of "key=" in text (up to the line's end), or NULL. */
static const char *progress_value(const char *text, const char *key)
{
	size_t k = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (strncmp(p, key, k) == 0 && p[k] == '=')
			return p + k + 1;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

/* "key=<long>", the whole line, in [min, LONG_MAX]. */
static int progress_long(const char *text, const char *path, const char *key, long min, long *v,
                         bnn_err *err)
{
	const char *s = progress_value(text, key);
	char *end, what[96];

	if (s) {
		*v = strtol(s, &end, 10);
		if (end != s && (*end == '\n' || !*end) && *v >= min)
			return BNN_OK;
	}
	snprintf(what, sizeof what, "'%s' is %s", key, s ? "not a valid count" : "missing");
	return progress_bad(path, what, err);
}

static int progress_double(const char *text, const char *path, const char *key, double *v,
                           bnn_err *err)
{
	const char *s = progress_value(text, key);
	char *end, what[96];

	if (s) {
		*v = strtod(s, &end);
		if (end != s && (*end == '\n' || !*end) && !isnan(*v))
			return BNN_OK;
	}
	snprintf(what, sizeof what, "'%s' is %s", key, s ? "not a number" : "missing");
	return progress_bad(path, what, err);
}

/* Four hex words, not all zero (xoshiro256** never reaches that state). */
static int progress_rng(const char *text, const char *path, const char *key, bnn_rng *r,
                        bnn_err *err)
{
	const char *s = progress_value(text, key);
	char *end, what[96];
	int i;

	for (i = 0; s && i < 4; i++) {
		r->s[i] = strtoull(s, &end, 16);
		if (end == s || (i < 3 && *end != ' ') || (i == 3 && *end != '\n' && *end))
			break;
		s = end + (i < 3);
	}
	if (s && i == 4 && (r->s[0] | r->s[1] | r->s[2] | r->s[3]))
		return BNN_OK;
	snprintf(what, sizeof what, "'%s' is %s", key,
	         progress_value(text, key) ? "not a generator state" : "missing");
	return progress_bad(path, what, err);
}

/* An f32 section resume.NAME of exactly n values, all of them finite (or,
 * for σ, >= 0), copied into *out (NULL when absent). */
static int progress_take(const bnn_ckpt *ck, const char *path, const char *name, long n,
                         float **out, bnn_err *err)
{
	char section[64];
	long got = 0, bad;
	const float *data;

	snprintf(section, sizeof section, "resume.%s", name);
	data = bnn_ckpt_find_f32(ck, section, &got);
	*out = NULL;
	if (!data)
		return BNN_OK;
	if (got != n)
		return bnn_fail(err, BNN_EMISMATCH,
		                "%s: section '%s' has %ld values, the model needs %ld", path,
		                section, got, n);
	if ((bad = train_first_bad(data, n, strcmp(name, "sigma") == 0)) >= 0)
		return bnn_fail(err, BNN_EFORMAT, "%s: section '%s': value %ld is %g, not %s", path,
		                section, bad, (double)data[bad],
		                strcmp(name, "sigma") == 0 ? "a value >= 0" : "finite");
	*out = bnn_floats_alloc(n);
	if (!*out)
		return bnn_fail(err, BNN_ENOMEM, "out of memory loading %s", path);
	memcpy(*out, data, (size_t)n * sizeof **out);
	return BNN_OK;
}

static int progress_read_text(const char *text, const char *path, bnn_train_progress *p,
                              bnn_err *err)
{
	long version = 0, have_best = 0;
	int rc;
	char what[96];

	if ((rc = progress_long(text, path, "version", 1, &version, err)))
		return rc;
	if (version != PROGRESS_VERSION) {
		snprintf(what, sizeof what, "version %ld, and this library reads version %d",
		         version, PROGRESS_VERSION);
		return progress_bad(path, what, err);
	}
	if ((rc = progress_long(text, path, "epoch", 0, &p->epoch, err)) ||
	    (rc = progress_long(text, path, "step", 0, &p->step, err)) ||
	    (rc = progress_long(text, path, "shuffles", 0, &p->shuffles, err)) ||
	    (rc = progress_long(text, path, "train_examples", 1, &p->ntrain, err)) ||
	    (rc = progress_long(text, path, "valid_examples", 0, &p->nvalid, err)) ||
	    (rc = progress_long(text, path, "ranks", 1, &p->ranks, err)) ||
	    (rc = progress_rng(text, path, "rng.noise", &p->noise, err)) ||
	    (rc = progress_rng(text, path, "rng.aug", &p->aug, err)) ||
	    (rc = progress_long(text, path, "have_best", 0, &have_best, err)) ||
	    (rc = progress_double(text, path, "best_nll", &p->best_nll, err)) ||
	    (rc = progress_long(text, path, "since_best", 0, &p->since_best, err)) ||
	    (rc = progress_double(text, path, "tau", &p->tau, err)))
		return rc;
	if (have_best > 1)
		return progress_bad(path, "'have_best' is not 0 or 1", err);
	p->have_best = (int)have_best;
	return BNN_OK;
}

int train_progress_load(const bnn_ckpt *ck, const char *path, const bnn_state *st,
                        bnn_train_progress **out, bnn_err *err)
{
	const bnn_model *m = st->model;
	const char *text = bnn_ckpt_find_text(ck, "resume");
	bnn_train_progress *p;
	int rc, i;

	*out = NULL;
	if (!text)
		return BNN_OK;
	if (!(p = calloc(1, sizeof *p)))
		return bnn_fail(err, BNN_ENOMEM, "out of memory loading %s", path);
	rc = progress_read_text(text, path, p, err);
	for (i = 0; !rc && i < TRAIN_SNAPSHOT_ARRAYS; i++)
		rc = progress_take(ck, path, train_array_names[i], train_array_size(m, i),
		                   &p->live[i], err);
	for (i = 0; !rc && p->live[0] && i < TRAIN_SNAPSHOT_ARRAYS; i++)
		if (!p->live[i] != !*train_state_array((bnn_state *)st, i))
			rc = bnn_fail(err, BNN_EFORMAT,
			              "%s: section 'resume.%s' is %s, and section '%s' is %s", path,
			              train_array_names[i], p->live[i] ? "there" : "missing",
			              train_array_names[i], p->live[i] ? "missing" : "there");
	for (i = 1; !rc && !p->live[0] && i < TRAIN_SNAPSHOT_ARRAYS; i++)
		if (p->live[i])
			rc = bnn_fail(
			        err, BNN_EFORMAT,
			        "%s: section 'resume.%s' is there, and section 'resume.params' "
			        "is missing",
			        path, train_array_names[i]);
	if (!rc)
		rc = progress_take(ck, path, "theta", m->nparams, &p->theta, err);
	if (!rc)
		rc = progress_take(ck, path, "eps", m->nparams, &p->eps, err);
	if (rc) {
		train_progress_free(p);
		return rc;
	}
	*out = p;
	return BNN_OK;
}
