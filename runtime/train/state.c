/*
 * state.c: a trained model's state (bnn_state) and its checkpoints.
 *
 * The state is the parameters, the optimizer's arrays and counters, the
 * input standardisation and the text of the options that trained it, and
 * the posterior standard deviations when it has a posterior.  It
 * travels through the generic checkpoint format (checkpoint.c) as these
 * sections:
 *   params               f32, model->nparams values (the posterior mean)
 *   stats                f32, model->nstats values: the running statistics
 *                        of batchnorm layers (only when there are some)
 *   sigma                f32, the posterior standard deviations, when the
 *                        state has a posterior
 *   opt.a .. opt.e       f32, the optimizer's arrays in use (the slots of
 *                        bnn_state.opt, documented in bnn_train.h)
 *   meta                 text, "key=value" lines: optimizer, step, epoch
 *   options              text, the training options (for the record)
 *   standardize.mean     f32, inputs values each, with standardisation
 *   standardize.std
 *   tensors              text, a line per parameter tensor in the order
 *                        of params: "NAME SIZE SHAPE" (SHAPE "8x4", or
 *                        "3*8x4" for 3 components), for a warm start of
 *                        another model (warm_start.c)
 *   resume, resume.*     where the run stands, when st->progress is set
 *                        (progress.c)
 *   posterior, posterior.dev  a Laplace or SWAG posterior of a point
 *                        network, when st->posthoc is set
 *                        (posthoc_posterior.c)
 *   temperature          f32, one value T > 0: a categorical model's
 *                        temperature (calibrate; docs/calibration.md)
 *   columns              text, the names of the training CSV file's
 *                        columns, when set (st->columns: "target=NAME"
 *                        and "feature=NAME" lines; the driver writes and
 *                        reads them, docs/data.md); shared by the members
 *                        of a mixture
 * A checkpoint is bound to its model by the fingerprint of the canonical
 * model text, so parameters are never loaded into a network they do not
 * fit.  The sections of one network can also be written and read under a
 * prefix (train_state_add, train_state_from_ckpt): the members of a
 * mixture ("member.2.params", ...; mixture.c), which bnn_state_load
 * refuses.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"
#include "base/floats.h"
#include "train_internal.h"

/* The checkpoint section of each optimizer slot. */
#define slot_names (train_array_names + 3)

const char *bnn_optimizer_name(int optimizer)
{
	const struct train_optimizer *opt = train_optimizer_of(optimizer);

	return opt ? opt->name : "none";
}

int bnn_optimizer_from_name(const char *name)
{
	int i;
	for (i = 0; name && i < BNN_OPT_COUNT; i++)
		if (strcmp(name, train_optimizers[i].name) == 0)
			return i;
	return -1;
}

int bnn_state_init(bnn_state *st, const bnn_model *m, uint64_t seed, bnn_err *err)
{
	bnn_rng rng;
	int rc;

	if (!st)
		return bnn_fail(err, BNN_EINVAL, "no state given");
	memset(st, 0, sizeof *st);
	st->optimizer = -1;
	rc = bnn_model_check(m, err);
	if (rc)
		return rc;
	st->model = m;
	st->params = bnn_floats_alloc(m->nparams);
	if (!st->params)
		return bnn_fail(err, BNN_ENOMEM, "out of memory for %ld parameters", m->nparams);
	bnn_rng_seed(&rng, seed);
	bnn_params_init(m, st->params, &rng);
	if (m->nstats > 0) {
		st->stats = malloc((size_t)m->nstats * sizeof *st->stats);
		if (!st->stats) {
			free(st->params);
			st->params = NULL;
			return bnn_fail(err, BNN_ENOMEM, "out of memory for %ld running statistics",
			                m->nstats);
		}
		bnn_stats_init(m, st->stats);
	}
	return BNN_OK;
}

void bnn_state_free(bnn_state *st)
{
	int i;

	if (!st)
		return;
	free(st->params);
	free(st->stats);
	free(st->sigma);
	for (i = 0; i < BNN_OPT_SLOTS; i++)
		free(st->opt[i]);
	free(st->options);
	free(st->columns);
	bnn_standardizer_free(&st->standardize);
	train_progress_free(st->progress);
	bnn_posthoc_free(st->posthoc);
	memset(st, 0, sizeof *st);
}

/* The shape of a tensor as the tensors section writes it: "8x4", and
 * "3*8x4" for the 3 components of an emp or ecmp layer. */
void train_tensor_shape(const bnn_tensor *t, char *buf, size_t size)
{
	int n = 0, d;

	buf[0] = '\0';
	if (t->components > 1)
		n = snprintf(buf, size, "%d*", t->components);
	for (d = 0; d < t->rank && n >= 0 && (size_t)n < size; d++)
		n += snprintf(buf + n, size - (size_t)n, "%s%ld", d ? "x" : "", t->shape[d]);
}

/* The tensors section: "NAME SIZE SHAPE" per tensor. */
static int state_add_tensors(bnn_ckpt *ck, const bnn_model *m)
{
	size_t cap = 64, len = 0;
	char *text = malloc(cap), shape[128];
	int t, rc;

	for (t = 0; text && t < m->ntensors; t++) {
		const bnn_tensor *bt = &m->tensors[t];
		size_t need;
		train_tensor_shape(bt, shape, sizeof shape);
		need = strlen(bt->name) + strlen(shape) + 32;
		if (len + need > cap) {
			char *bigger = realloc(text, cap = 2 * (len + need));
			if (!bigger) {
				free(text);
				return BNN_ENOMEM;
			}
			text = bigger;
		}
		len += (size_t)snprintf(text + len, cap - len, "%s %ld %s\n", bt->name, bt->size,
		                        shape);
	}
	if (!text)
		return BNN_ENOMEM;
	text[len] = '\0';
	rc = bnn_ckpt_add_text(ck, "tensors", text);
	free(text);
	return rc;
}

/* Section name PREFIX + NAME ("member.2." + "params") into buf. */
static const char *state_section(char *buf, size_t size, const char *prefix, const char *name)
{
	snprintf(buf, size, "%s%s", prefix, name);
	return buf;
}

int train_state_add(bnn_ckpt *ck, const bnn_state *st, const char *prefix)
{
	const bnn_model *m = st->model;
	char meta[256], name[BNN_CKPT_SECTION_NAME_MAX + 1];
	int rc, i;

#define SECTION(s) state_section(name, sizeof name, prefix, s)
	snprintf(meta, sizeof meta, "optimizer=%s\nstep=%ld\nepoch=%ld\n",
	         bnn_optimizer_name(st->optimizer), st->step, st->epoch);
	rc = bnn_ckpt_add_f32(ck, SECTION("params"), st->params, m->nparams);
	if (!rc && m->nstats > 0)
		rc = bnn_ckpt_add_f32(ck, SECTION("stats"), st->stats, m->nstats);
	if (!rc && st->sigma)
		rc = bnn_ckpt_add_f32(ck, SECTION("sigma"), st->sigma, m->nparams);
	for (i = 0; !rc && i < BNN_OPT_SLOTS; i++)
		if (st->opt[i])
			rc = bnn_ckpt_add_f32(ck, SECTION(slot_names[i]), st->opt[i], m->nparams);
	if (!rc)
		rc = bnn_ckpt_add_text(ck, SECTION("meta"), meta);
	if (!rc && st->options)
		rc = bnn_ckpt_add_text(ck, SECTION("options"), st->options);
#undef SECTION
	return rc;
}

int train_state_ckpt(const bnn_state *st, const char *path, bnn_ckpt **out, bnn_err *err)
{
	const bnn_model *m = st->model;
	bnn_ckpt *ck;
	int rc = BNN_OK;

	*out = NULL;
	ck = bnn_ckpt_new(m->fingerprint, m->name);
	if (!ck)
		return bnn_fail(err, BNN_ENOMEM, "out of memory building a checkpoint");
	rc = train_state_add(ck, st, "");
	if (!rc && st->standardize.features > 0) {
		rc = bnn_ckpt_add_f32(ck, "standardize.mean", st->standardize.mean,
		                      st->standardize.features);
		if (!rc)
			rc = bnn_ckpt_add_f32(ck, "standardize.std", st->standardize.std,
			                      st->standardize.features);
	}
	if (!rc)
		rc = state_add_tensors(ck, m);
	if (!rc && st->progress)
		rc = train_progress_add(ck, m, st->progress);
	if (!rc && st->posthoc)
		rc = train_posthoc_add(ck, m, st->posthoc);
	if (!rc && st->temperature > 0) {
		float t = (float)st->temperature;
		rc = bnn_ckpt_add_f32(ck, "temperature", &t, 1);
	}
	if (!rc && st->columns)
		rc = bnn_ckpt_add_text(ck, "columns", st->columns);
	if (rc) {
		bnn_ckpt_free(ck);
		return bnn_fail(err, rc, "cannot build checkpoint %s: %s", path, bnn_strerror(rc));
	}
	*out = ck;
	return BNN_OK;
}

int bnn_state_save(const bnn_state *st, const char *path, bnn_err *err)
{
	bnn_ckpt *ck;
	int rc;

	if (!st || !st->model || !st->params || !path)
		return bnn_fail(err, BNN_EINVAL, "bnn_state_save: no %s given",
		                !path ? "path" : "state");
	if ((rc = train_state_ckpt(st, path, &ck, err)))
		return rc;
	rc = bnn_ckpt_save(ck, path, err);
	bnn_ckpt_free(ck);
	return rc;
}

/* Copies section NAME (exactly n floats) into a new array; *out stays NULL
 * when the section is absent. */
static int state_take(const bnn_ckpt *ck, const char *path, const char *prefix, const char *section,
                      long n, float **out, bnn_err *err)
{
	char name[BNN_CKPT_SECTION_NAME_MAX + 1];
	long got = 0;
	const float *data =
	        bnn_ckpt_find_f32(ck, state_section(name, sizeof name, prefix, section), &got);

	*out = NULL;
	if (!data)
		return BNN_OK;
	if (got != n)
		return bnn_fail(err, BNN_EMISMATCH,
		                "%s: section '%s' has %ld values, the model needs %ld", path, name,
		                got, n);
	*out = bnn_floats_alloc(n);
	if (!*out)
		return bnn_fail(err, BNN_ENOMEM, "out of memory loading %s", path);
	memcpy(*out, data, (size_t)n * sizeof **out);
	return BNN_OK;
}

/* Reads "key=<long>" from the meta text; returns def when absent. */
static long state_meta_long(const char *meta, const char *key, long def)
{
	size_t k = strlen(key);
	const char *p = meta;

	while (p && *p) {
		if (strncmp(p, key, k) == 0 && p[k] == '=')
			return strtol(p + k + 1, NULL, 10);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return def;
}

static int state_meta_optimizer(const char *meta)
{
	const char *p = meta ? strstr(meta, "optimizer=") : NULL;
	char name[32];
	size_t n = 0;

	if (!p)
		return -1;
	p += strlen("optimizer=");
	while (p[n] && p[n] != '\n' && n + 1 < sizeof name) {
		name[n] = p[n];
		n++;
	}
	name[n] = '\0';
	return bnn_optimizer_from_name(name);
}

/* ---- the values a loaded state must hold ---------------------------------- */
/*
 * A checkpoint whose CRC holds can still carry values no training writes
 * (edited, or made by another program): they are refused at load time,
 * naming the section, instead of surfacing later as a NaN metric, a
 * silent switch to sampling or uniform predictions.
 */

/* The first of n values that is not finite (or negative, when nonneg);
 * -1 when all are fine. */
long train_first_bad(const float *v, long n, int nonneg)
{
	long i;

	for (i = 0; i < n; i++)
		if (!isfinite(v[i]) || (nonneg && v[i] < 0))
			return i;
	return -1;
}

static int state_bad_value(const char *path, const char *prefix, const char *section, long i,
                           float v, const char *want, bnn_err *err)
{
	return bnn_fail(err, BNN_EFORMAT, "%s: section '%s%s': value %ld is %g, not %s", path,
	                prefix, section, i, (double)v, want);
}

/* sigma: ≥ 0 (+inf included: BADAM's σ of a weight no gradient reached,
 * with δ = 0), and 0 outside meanfield layers (every optimizer keeps
 * their σ at 0; a σ there would make predictions random), unless a
 * post-hoc posterior (Laplace, SWAG) gives every tensor one, finite. */
static int state_check_sigma(const bnn_state *s, const char *path, const char *prefix, bnn_err *err)
{
	const bnn_model *m = s->model;
	long i;
	int t;

	for (i = 0; i < m->nparams; i++)
		if (!(s->sigma[i] >= 0)) /* NaN too */
			return state_bad_value(path, prefix, "sigma", i, s->sigma[i],
			                       "a value >= 0", err);
	if (s->posthoc) {
		if ((i = train_first_bad(s->sigma, m->nparams, 1)) >= 0)
			return state_bad_value(path, prefix, "sigma", i, s->sigma[i],
			                       "a finite value >= 0", err);
		return BNN_OK;
	}
	for (t = 0; t < m->ntensors; t++) {
		const bnn_tensor *bt = &m->tensors[t];
		if (bt->layer >= 0 && (m->layers[bt->layer].caps & BNN_CAP_SIGMA))
			continue;
		for (i = bt->offset; i < bt->offset + bt->size; i++)
			if (s->sigma[i] != 0)
				return bnn_fail(
				        err, BNN_EFORMAT,
				        "%s: section '%ssigma': value %ld (tensor '%s') is %g, but only "
				        "the tensors of meanfield layers have a posterior (0 expected)",
				        path, prefix, i, bt->name, (double)s->sigma[i]);
	}
	return BNN_OK;
}

/* stats: finite running means, finite running variances ≥ 0. */
static int state_check_stats(const bnn_state *s, const char *path, const char *prefix, bnn_err *err)
{
	const bnn_model *m = s->model;
	long bad;
	int t;

	for (t = 0; t < m->nstat_tensors; t++) {
		const bnn_tensor *bt = &m->stat_tensors[t];
		int var = bt->role == BNN_ROLE_RUNNING_VAR;
		if ((bad = train_first_bad(s->stats + bt->offset, bt->size, var)) >= 0)
			return state_bad_value(path, prefix, "stats", bt->offset + bad,
			                       s->stats[bt->offset + bad],
			                       var ? "a finite variance >= 0" : "finite", err);
	}
	return BNN_OK;
}

static int state_check_values(const bnn_state *s, const char *path, const char *prefix,
                              bnn_err *err)
{
	const bnn_model *m = s->model;
	long bad, i;
	int k, rc;

	if ((bad = train_first_bad(s->params, m->nparams, 0)) >= 0)
		return state_bad_value(path, prefix, "params", bad, s->params[bad], "finite", err);
	if (s->sigma && (rc = state_check_sigma(s, path, prefix, err)))
		return rc;
	if (s->stats && (rc = state_check_stats(s, path, prefix, err)))
		return rc;
	for (k = 0; k < BNN_OPT_SLOTS; k++)
		if (s->opt[k] && (bad = train_first_bad(s->opt[k], m->nparams, 0)) >= 0)
			return state_bad_value(path, prefix, slot_names[k], bad, s->opt[k][bad],
			                       "finite", err);
	for (i = 0; i < s->standardize.features; i++) {
		if (!isfinite(s->standardize.mean[i]))
			return state_bad_value(path, "", "standardize.mean", i,
			                       s->standardize.mean[i], "finite", err);
		if (!(s->standardize.std[i] > 0) || !isfinite(s->standardize.std[i]))
			return state_bad_value(path, "", "standardize.std", i,
			                       s->standardize.std[i],
			                       "a finite standard deviation > 0", err);
	}
	return BNN_OK;
}

/* The temperature section, when present: one value T > 0, of a
 * categorical model (the only kind temperature scaling applies to). */
static int state_load_temperature(const bnn_ckpt *ck, const char *path, bnn_state *s, bnn_err *err)
{
	long n = 0;
	const float *t = bnn_ckpt_find_f32(ck, "temperature", &n);

	if (!t)
		return BNN_OK;
	if (n != 1)
		return bnn_fail(err, BNN_EFORMAT, "%s: section 'temperature' has %ld values, not 1",
		                path, n);
	if (!(t[0] > 0) || !isfinite(t[0]))
		return state_bad_value(path, "", "temperature", 0, t[0], "a finite temperature > 0",
		                       err);
	if (bnn_likelihood_targets(s->model) != BNN_TARGETS_CLASS)
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: section 'temperature': model '%s' is %s, and temperature "
		                "scaling applies to categorical models only",
		                path, s->model->name, bnn_likelihood_name(s->model->likelihood));
	s->temperature = t[0];
	return BNN_OK;
}

int train_ckpt_open(const bnn_model *m, const char *path, bnn_ckpt **out, bnn_err *err)
{
	bnn_ckpt *ck = NULL;
	int rc = bnn_model_check(m, err);

	*out = NULL;
	if (rc || (rc = bnn_ckpt_load(path, &ck, err)))
		return rc;
	if (bnn_ckpt_fingerprint(ck) != m->fingerprint) {
		if (strcmp(bnn_ckpt_model_name(ck), m->name) == 0)
			rc = bnn_fail(
			        err, BNN_EMISMATCH,
			        "%s: this checkpoint belongs to a different version of model '%s' "
			        "(fingerprint %016" PRIx64 ", this model's is %016" PRIx64 "): "
			        "its layers, shapes or posteriors differ",
			        path, m->name, bnn_ckpt_fingerprint(ck), m->fingerprint);
		else
			rc = bnn_fail(
			        err, BNN_EMISMATCH,
			        "%s: this checkpoint belongs to model '%s', not to model '%s'",
			        path, bnn_ckpt_model_name(ck), m->name);
		bnn_ckpt_free(ck);
		return rc;
	}
	*out = ck;
	return BNN_OK;
}

/* The standardisation sections, shared by every member of a mixture. */
static int state_take_standardize(const bnn_ckpt *ck, const char *path, bnn_state *s, bnn_err *err)
{
	const bnn_model *m = s->model;
	long nmean = 0, nstd = 0;
	const float *mean = bnn_ckpt_find_f32(ck, "standardize.mean", &nmean);
	const float *sd = bnn_ckpt_find_f32(ck, "standardize.std", &nstd);

	if (!mean && !sd)
		return BNN_OK;
	if (!mean || !sd || nmean != m->inputs || nstd != m->inputs)
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: the standardisation statistics do not match the model's %ld "
		                "inputs",
		                path, m->inputs);
	s->standardize.features = m->inputs;
	s->standardize.mean = malloc((size_t)m->inputs * sizeof(float));
	s->standardize.std = malloc((size_t)m->inputs * sizeof(float));
	if (!s->standardize.mean || !s->standardize.std)
		return bnn_fail(err, BNN_ENOMEM, "out of memory loading %s", path);
	memcpy(s->standardize.mean, mean, (size_t)m->inputs * sizeof(float));
	memcpy(s->standardize.std, sd, (size_t)m->inputs * sizeof(float));
	return BNN_OK;
}

int train_state_from_ckpt(const bnn_ckpt *ck, const bnn_model *m, const char *path,
                          const char *prefix, bnn_state *st, bnn_err *err)
{
	bnn_state s;
	const char *meta, *options, *columns;
	char name[BNN_CKPT_SECTION_NAME_MAX + 1];
	int rc, i;

	memset(&s, 0, sizeof s);
	s.model = m;
	meta = bnn_ckpt_find_text(ck, state_section(name, sizeof name, prefix, "meta"));
	s.optimizer = state_meta_optimizer(meta);
	s.step = state_meta_long(meta, "step", 0);
	s.epoch = state_meta_long(meta, "epoch", 0);
	rc = state_take(ck, path, prefix, "params", m->nparams, &s.params, err);
	if (!rc && !s.params)
		rc = *prefix ? bnn_fail(err, BNN_EFORMAT, "%s: section '%sparams' is missing", path,
		                        prefix)
		             : bnn_fail(err, BNN_EFORMAT, "%s: the checkpoint has no parameters",
		                        path);
	if (!rc && m->nstats > 0)
		rc = state_take(ck, path, prefix, "stats", m->nstats, &s.stats, err);
	if (!rc && m->nstats > 0 && !s.stats)
		rc = bnn_fail(
		        err, BNN_EFORMAT,
		        "%s: the checkpoint has no running statistics for the batchnorm layers",
		        path);
	if (!rc)
		rc = state_take(ck, path, prefix, "sigma", m->nparams, &s.sigma, err);
	for (i = 0; !rc && i < BNN_OPT_SLOTS; i++)
		rc = state_take(ck, path, prefix, slot_names[i], m->nparams, &s.opt[i], err);
	if (rc)
		goto fail;
	options = bnn_ckpt_find_text(ck, state_section(name, sizeof name, prefix, "options"));
	columns = bnn_ckpt_find_text(ck, "columns"); /* shared, as the standardisation */
	/* older checkpoints' "delta=nan" as "auto", "beta1=0.899999976" as
	 * "beta1=0.9": --resume compares the words */
	if ((options && !(s.options = train_options_text_canonical(options))) ||
	    (columns && !(s.columns = strdup(columns)))) {
		rc = bnn_fail(err, BNN_ENOMEM, "out of memory loading %s", path);
		goto fail;
	}
	if ((rc = state_take_standardize(ck, path, &s, err)) ||
	    (!*prefix && (rc = train_posthoc_load(ck, path, &s, &s.posthoc, err))) ||
	    (!*prefix && (rc = state_load_temperature(ck, path, &s, err))) ||
	    (rc = state_check_values(&s, path, prefix, err)) ||
	    (!*prefix && (rc = train_progress_load(ck, path, &s, &s.progress, err))))
		goto fail;
	*st = s;
	return BNN_OK;
fail:
	bnn_state_free(&s);
	return rc;
}

int bnn_state_load(bnn_state *st, const bnn_model *m, const char *path, bnn_err *err)
{
	bnn_ckpt *ck = NULL;
	int rc;

	if (!st || !path)
		return bnn_fail(err, BNN_EINVAL, "bnn_state_load: no %s given",
		                !st ? "state" : "path");
	if ((rc = train_ckpt_open(m, path, &ck, err)))
		return rc;
	/* a mixture's plain sections are its first member: one network would
	 * silently stand for all of them (bnn_mixture_load reads it) */
	if ((rc = train_mixture_refuse(ck, path, err)) == BNN_OK)
		rc = train_state_from_ckpt(ck, m, path, "", st, err);
	bnn_ckpt_free(ck);
	return rc;
}

void bnn_state_forget_progress(bnn_state *st)
{
	if (!st)
		return;
	train_progress_free(st->progress);
	st->progress = NULL;
}

int bnn_state_is_stochastic(const bnn_state *st)
{
	int i;

	if (st->sigma)
		return 1;
	for (i = 0; i < st->model->nlayers; i++)
		if (st->model->layers[i].caps & BNN_CAP_PASS_NOISE)
			return 1;
	return 0;
}

int bnn_posterior_write_csv(const bnn_state *st, FILE *f)
{
	const bnn_model *m = st ? st->model : NULL;
	int i;
	long j;

	if (!m || !f)
		return -1;
	fprintf(f, "tensor,index,mean,std\n");
	for (i = 0; i < m->ntensors; i++) {
		const bnn_tensor *t = &m->tensors[i];
		for (j = 0; j < t->size; j++)
			fprintf(f, "%s,%ld,%.9g,%.9g\n", t->name, j,
			        (double)st->params[t->offset + j],
			        st->sigma ? (double)st->sigma[t->offset + j] : 0.0);
	}
	return ferror(f) ? -1 : 0;
}
