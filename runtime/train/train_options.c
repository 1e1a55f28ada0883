/*
 * train_options.c: the training options, their defaults, and setting them
 * by name from text (the driver's --set NAME=VALUE and its dedicated
 * flags).  One table lists every option with its kind and range, so the
 * parser, the error messages, the suggestions for misspelt names and the
 * text stored in checkpoints all come from the same place.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"
#include "common/edit_distance.h"
#include "train_internal.h"

bnn_train_options bnn_train_defaults(void)
{
	bnn_train_options o;

	memset(&o, 0, sizeof o);
	o.optimizer = BNN_OPT_ADAM;
	o.schedule.kind = BNN_SCHEDULE_DEFAULT; /* the optimizer's (bnn_default_schedule) */
	o.schedule.lr = 0;                      /* the optimizer's default (bnn_default_lr) */
	o.schedule.gamma = 0.1;
	o.sgd = bnn_sgd_defaults();
	o.adam = bnn_adam_defaults();
	o.vogn.beta1 = 0.9f;
	o.vogn.beta2 = 0.001f; /* Alg. 1 line 20's β2, literally (docs/optimizers/vogn.md) */
	o.vogn.tau = 1;
	o.vogn.tau_start = NAN;
	o.vogn.tau_epochs = 0;
	o.vogn.rho = 100; /* with δ = ρ × the prior: a posterior tempered to 1/ρ (vogn.md) */
	o.ivon.beta1 = 0.9f;
	o.ivon.beta2 = 0.99999f;
	o.ivon.h0 = NAN; /* the trainer's (bnn_train_h0): 0.1, more on a short run */
	o.ivon.clip_radius = 0;
	o.ivon.rescale_lr = 1;
	o.mc = 1;
	o.delta = NAN;
	o.clip = NAN; /* the optimizer's (bnn_default_clip) */
	o.sigma0 = 1e-3;
	o.lrt = 0;
	o.epochs = 10;
	o.batch = 128;
	o.seed = 1;
	o.threads = 0;
	o.swag_rank = 20;
	return o;
}

double bnn_default_lr(int optimizer)
{
	const struct train_optimizer *opt = train_optimizer_of(optimizer);

	return opt ? opt->default_lr : 1e-3;
}

int bnn_default_schedule(int optimizer)
{
	const struct train_optimizer *opt = train_optimizer_of(optimizer);

	return opt ? opt->default_schedule : BNN_SCHEDULE_CONSTANT;
}

int bnn_train_schedule_kind(const bnn_train_options *o)
{
	return o->schedule.kind == BNN_SCHEDULE_DEFAULT ? bnn_default_schedule(o->optimizer)
	                                                : (int)o->schedule.kind;
}

double bnn_default_clip(int optimizer)
{
	const struct train_optimizer *opt = train_optimizer_of(optimizer);

	return opt ? opt->default_clip : 0;
}

/* The largest fan-in of a tensor of a layer with a posterior (BNN_CAP_SIGMA);
 * 1 when the model has none. */
static double largest_posterior_fan_in(const bnn_model *m)
{
	long d = 1;
	int i;

	for (i = 0; i < m->ntensors; i++) {
		const bnn_tensor *bt = &m->tensors[i];
		if (bt->layer >= 0 && (m->layers[bt->layer].caps & BNN_CAP_SIGMA) && bt->fan_in > d)
			d = bt->fan_in;
	}
	return (double)d;
}

double bnn_default_ess(const bnn_model *m, int optimizer, double n)
{
	const struct train_optimizer *opt = train_optimizer_of(optimizer);

	return opt && opt->ess_times_fan_in && m ? n * largest_posterior_fan_in(m) : n;
}

double bnn_train_clip(const bnn_train_options *o)
{
	return isnan(o->clip) ? bnn_default_clip(o->optimizer) : o->clip;
}

double bnn_default_h0(int optimizer)
{
	const struct train_optimizer *opt = train_optimizer_of(optimizer);

	return opt ? opt->default_h0 : 0;
}

double bnn_train_steps(const bnn_train_options *o, double n)
{
	return (double)o->epochs * ceil(n / (double)o->batch);
}

/*
 * The short-run rule (docs/optimizers/ivon.md and vogn.md, "Defaults and
 * their evidence").  VOGN's and IVON's defaults were chosen on runs of
 * 2,345 to 4,690 steps; a run of a few dozen steps (a small table for 10
 * epochs) needs one of them scaled by BNN_SHORT_RUN_STEPS / steps:
 *   - VOGN's lr: line 21 of Osawa et al.'s Alg. 1 moves μ by α·m/(s + δ̃),
 *     a damped Newton step, so the run's progress is the sum of its
 *     rates, about α·T/2 under the cosine.  α·T at least 5e-5 × 2000 = 0.1
 *     keeps that sum; at 10 steps α is 1e-2, the largest rate of the
 *     paper's tables.
 *   - IVON's h0: h moves by 1 − β2 = 10⁻⁵ of ĥ a step (Shen et al.,
 *     Alg. 1 line 5), so over T ≪ 10⁵ steps σ stays the initial
 *     1/√(λ(h0 + δ)) (line 8).  The mean, a noisy walk of T steps, spreads
 *     as √T; a variance 1/(λ h0) proportional to T keeps the noise to the
 *     run's movement what the long runs had.  The step itself is unchanged:
 *     α is rescaled by h0 + δ and divided by h + δ ≈ h0 + δ (line 7).
 * A run of BNN_SHORT_RUN_STEPS steps or more gets the constants exactly.
 */
double bnn_short_run_scale(double steps)
{
	return steps < BNN_SHORT_RUN_STEPS ? BNN_SHORT_RUN_STEPS / (steps > 1 ? steps : 1) : 1;
}

/* The factor a default of o's optimizer gets on n examples: the short-run
 * scale when `what` is the default its row scales, else 1. */
static double short_run_factor(const bnn_train_options *o, double n, int what)
{
	const struct train_optimizer *opt = train_optimizer_of(o->optimizer);

	if (!opt || opt->short_run != what)
		return 1;
	return bnn_short_run_scale(bnn_train_steps(o, n));
}

double bnn_train_lr(const bnn_train_options *o, double n)
{
	if (o->schedule.lr > 0)
		return o->schedule.lr;
	return bnn_default_lr(o->optimizer) * short_run_factor(o, n, TRAIN_SHORT_LR);
}

double bnn_train_h0(const bnn_train_options *o, double n)
{
	if (!isnan(o->ivon.h0))
		return o->ivon.h0;
	return bnn_default_h0(o->optimizer) * short_run_factor(o, n, TRAIN_SHORT_H0);
}

enum opt_kind {
	OPT_DOUBLE,
	OPT_FLOAT,
	OPT_LONG,
	OPT_U64,
	OPT_INT,
	OPT_BOOL,
	OPT_OPTIMIZER,
	OPT_SCHEDULE,
	OPT_MILESTONES,
	OPT_WEIGHT_DECAY,
	OPT_BETA1,
	OPT_BETA2
};

/* What else an option needs to be read, besides an optimizer that uses it. */
enum opt_need {
	NEED_NOTHING,
	NEED_STEP,
	NEED_COSINE,
	NEED_VALIDATION,
	NEED_NO_VALID_SET,
	NEED_SWAG,
	NEED_PRIOR_UPDATE /* read by the variational optimizers, whose update has
	                     the prior precision, and by whvi layers' KL with any
	                     optimizer (bnn_whvi_kl) */
};

/* What an option's field holds while the trainer is to choose its value
 * from the data and the model (a double).  The options text spells that
 * value "auto" and bnn_train_set takes "auto" for it; checkpoints written
 * before spelt it as the number ("delta=nan", "ess=0"). */
enum opt_auto {
	AUTO_NONE, /* every value is the user's */
	AUTO_NAN,  /* NaN: delta, tau_start */
	AUTO_ZERO  /* 0: ess */
};

struct opt_def {
	const char *name;
	enum opt_kind kind;
	size_t offset;   /* of the field in bnn_train_options */
	double min, max; /* accepted range (inclusive) */
	int shared;      /* read by every optimizer; else by those whose row
	                    in train_optimizers[] lists it */
	enum opt_need need;
	const char *help;
	enum opt_auto autov; /* the value that leaves it to the trainer */
};

/* opt_def.shared */
#define SHARED 1
#define OWN    0

#define OFF(field) offsetof(bnn_train_options, field)
static const struct opt_def opt_defs[] = {
	{ "optimizer", OPT_OPTIMIZER, OFF(optimizer), 0, 0, SHARED, NEED_NOTHING,
	  NULL /* the names of train_optimizers[] */, AUTO_NONE },
	{ "lr", OPT_DOUBLE, OFF(schedule.lr), 0, 1e6, SHARED, NEED_NOTHING,
	  "base learning rate (0: the optimizer's default)", AUTO_NONE },
	{ "schedule", OPT_SCHEDULE, OFF(schedule.kind), 0, 0, SHARED, NEED_NOTHING,
	  "constant, step or cosine", AUTO_NONE },
	{ "gamma", OPT_DOUBLE, OFF(schedule.gamma), 0, 1e6, SHARED, NEED_STEP,
	  "step: factor at each milestone", AUTO_NONE },
	{ "milestones", OPT_MILESTONES, OFF(schedule.milestones), 0, 1e9, SHARED, NEED_STEP,
	  "step: epochs, e.g. 30,60", AUTO_NONE },
	{ "warmup", OPT_DOUBLE, OFF(schedule.warmup), 0, 1e9, SHARED, NEED_NOTHING,
	  "epochs of linear warm-up", AUTO_NONE },
	{ "lr_min", OPT_DOUBLE, OFF(schedule.lr_min), 0, 1e6, SHARED, NEED_COSINE,
	  "cosine: final learning rate", AUTO_NONE },
	{ "momentum", OPT_FLOAT, OFF(sgd.momentum), 0, 1, OWN, NEED_NOTHING, "sgd: momentum",
	  AUTO_NONE },
	{ "nesterov", OPT_BOOL, OFF(sgd.nesterov), 0, 1, OWN, NEED_NOTHING,
	  "sgd: Nesterov momentum (0 or 1)", AUTO_NONE },
	{ "weight_decay", OPT_WEIGHT_DECAY, 0, 0, 1e6, OWN, NEED_NOTHING,
	  "L2 (sgd, adam) or decoupled (adamw) decay", AUTO_NONE },
	{ "beta1", OPT_BETA1, 0, 0, 0.999999, OWN, NEED_NOTHING,
	  "adam, vogn, ivon: momentum / first-moment decay", AUTO_NONE },
	{ "beta2", OPT_BETA2, 0, 0, 0.99999999, OWN, NEED_NOTHING,
	  "adam, ivon: second-moment / Hessian decay; vogn: weight of the new GN estimate",
	  AUTO_NONE },
	{ "eps", OPT_FLOAT, OFF(adam.eps), 1e-30, 1, OWN, NEED_NOTHING,
	  "adam: denominator constant (> 0)", AUTO_NONE },
	{ "mc", OPT_INT, OFF(mc), 1, 100000, OWN, NEED_NOTHING,
	  "vogn, ivon, bbb: Monte-Carlo samples per step", AUTO_NONE },
	{ "delta", OPT_DOUBLE, OFF(delta), 0, 1e30, OWN, NEED_PRIOR_UPDATE,
	  "vogn, badam, bbb, whvi layers: prior precision; ivon: weight decay (auto: from the "
	  "model's priors)",
	  AUTO_NAN },
	{ "tau", OPT_DOUBLE, OFF(vogn.tau), 0, 1e6, OWN, NEED_NOTHING,
	  "vogn: tempering at the end of its schedule", AUTO_NONE },
	{ "tau_start", OPT_DOUBLE, OFF(vogn.tau_start), 0, 1e6, OWN, NEED_NOTHING,
	  "vogn: tempering at the start (auto: tau)", AUTO_NAN },
	{ "tau_epochs", OPT_DOUBLE, OFF(vogn.tau_epochs), 0, 1e9, OWN, NEED_NOTHING,
	  "vogn: epochs from tau_start to tau", AUTO_NONE },
	{ "rho", OPT_DOUBLE, OFF(vogn.rho), 1, 1e9, OWN, NEED_NOTHING,
	  "vogn: data-augmentation factor (N <- rho N)", AUTO_NONE },
	{ "h0", OPT_DOUBLE, OFF(ivon.h0), 1e-30, 1e30, OWN, NEED_NOTHING,
	  "ivon: Hessian initialisation", AUTO_NONE },
	{ "ess", OPT_DOUBLE, OFF(ess), 0, 1e30, OWN, NEED_NOTHING,
	  "ivon: effective sample size lambda; badam: the posterior's N (0 or auto: from the data)",
	  AUTO_ZERO },
	{ "clip_radius", OPT_DOUBLE, OFF(ivon.clip_radius), 0, 1e30, OWN, NEED_NOTHING,
	  "ivon: element-wise step clipping (0: off)", AUTO_NONE },
	{ "rescale_lr", OPT_BOOL, OFF(ivon.rescale_lr), 0, 1, OWN, NEED_NOTHING,
	  "ivon: scale lr by h0 + delta (0 or 1)", AUTO_NONE },
	{ "sigma0", OPT_DOUBLE, OFF(sigma0), 1e-30, 1e6, OWN, NEED_NOTHING,
	  "bbb: initial posterior standard deviation", AUTO_NONE },
	{ "lrt", OPT_BOOL, OFF(lrt), 0, 1, OWN, NEED_NOTHING,
	  "bbb: a weight sample per pass (0) or the local reparameterisation in dense layers (1)",
	  AUTO_NONE },
	{ "clip", OPT_DOUBLE, OFF(clip), 0, 1e30, SHARED, NEED_NOTHING,
	  "gradient-norm clipping (0: off; not given: the optimizer's default)", AUTO_NONE },
	{ "epochs", OPT_LONG, OFF(epochs), 1, 1e9, SHARED, NEED_NOTHING,
	  "passes over the training data", AUTO_NONE },
	{ "batch", OPT_LONG, OFF(batch), 1, 1 << 20, SHARED, NEED_NOTHING, "examples per step",
	  AUTO_NONE },
	{ "seed", OPT_U64, OFF(seed), 0, 1.8446744073709552e19, SHARED, NEED_NOTHING, "random seed",
	  AUTO_NONE },
	{ "threads", OPT_INT, OFF(threads), 0, 1024, SHARED, NEED_NOTHING,
	  "threads (0: every core the process may use)", AUTO_NONE },
	{ "valid_fraction", OPT_DOUBLE, OFF(valid_fraction), 0, 0.9, SHARED, NEED_NO_VALID_SET,
	  "held-out share of the training data", AUTO_NONE },
	{ "patience", OPT_LONG, OFF(patience), 0, 1e9, SHARED, NEED_VALIDATION,
	  "early stopping: epochs without improvement (0: off)", AUTO_NONE },
	{ "crop_pad", OPT_LONG, OFF(crop_pad), 0, 4096, SHARED, NEED_NOTHING,
	  "augmentation: random crop with this zero padding (0: off)", AUTO_NONE },
	{ "flip", OPT_BOOL, OFF(flip), 0, 1, SHARED, NEED_NOTHING,
	  "augmentation: random horizontal flip (0 or 1)", AUTO_NONE },
	{ "swag", OPT_LONG, OFF(swag), 0, 1e9, OWN, NEED_NOTHING,
	  "sgd, adam, adamw: SWAG posterior of the last this many epochs (0: off)", AUTO_NONE },
	{ "swag_rank", OPT_LONG, OFF(swag_rank), 0, 1e9, OWN, NEED_SWAG,
	  "SWAG: deviations of its low-rank part (default 20)", AUTO_NONE },
	{ "loo", OPT_LONG, OFF(loo), 0, 1e9, SHARED, NEED_NOTHING,
	  "leave-one-out NLL estimate after each epoch on this many training examples (0: off)",
	  AUTO_NONE },
};
#define NOPTS ((int)(sizeof opt_defs / sizeof opt_defs[0]))

/* A limit of a range as a message prints it: %g when that reads back as
 * v (100000, 1e+06, 0.999999), else the shortest decimal that does, so
 * 1048576 is "1048576" where %g would say "1.04858e+06". */
static const char *opt_limit_text(double v, char buf[32])
{
	int digits;

	snprintf(buf, 32, "%g", v);
	if (strtod(buf, NULL) == v)
		return buf;
	for (digits = 7; digits < 17; digits++) {
		snprintf(buf, 32, "%.*g", digits, v);
		if (strtod(buf, NULL) == v)
			return buf;
	}
	snprintf(buf, 32, "%.17g", v);
	return buf;
}

/* "option 'NAME': VALUE is outside [MIN, MAX]" (BNN_ERANGE), VALUE as
 * given. */
static int opt_outside(const char *name, const char *value, double min, double max, bnn_err *err)
{
	char lo[32], hi[32];

	return bnn_fail(err, BNN_ERANGE, "option '%s': %s is outside [%s, %s]", name, value,
	                opt_limit_text(min, lo), opt_limit_text(max, hi));
}

static int opt_number(const char *name, const char *value, double min, double max, double *out,
                      bnn_err *err)
{
	char *end;
	double v;

	/* decimal only: strtod would also take "0x10", " 1" and "infinity" */
	if (strspn(value, "0123456789+-.eE") != strlen(value))
		return bnn_fail(err, BNN_EINVAL, "option '%s': '%s' is not a number", name, value);
	errno = 0;
	v = strtod(value, &end);
	if (end == value || *end != '\0')
		return bnn_fail(err, BNN_EINVAL, "option '%s': '%s' is not a number", name, value);
	/* a decimal beyond a double (1e400) is a number out of range; one
	 * too small for it (1e-400) would silently become 0 */
	if (errno == ERANGE && fabs(v) < 1)
		return bnn_fail(err, BNN_ERANGE,
		                "option '%s': %s is too small for a double (the smallest "
		                "normal one is 2.2e-308)",
		                name, value);
	if (errno == ERANGE || !isfinite(v) || v < min || v > max)
		return opt_outside(name, value, min, max, err);
	*out = v;
	return BNN_OK;
}

static int opt_integer(const struct opt_def *d, const char *value, double *out, bnn_err *err)
{
	int rc = opt_number(d->name, value, d->min, d->max, out, err);

	if (!rc && *out != floor(*out))
		rc = bnn_fail(err, BNN_EINVAL, "option '%s': '%s' is not a whole number", d->name,
		              value);
	return rc;
}

/* A 64-bit unsigned option (the seed): decimal digits only, so that the
 * value kept is the value given (strtod's 1e3 or 1.5e19 would not be). */
static int opt_u64(const char *name, const char *value, uint64_t *out, bnn_err *err)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(value, &end, 10);
	if (!*value || strspn(value, "0123456789") != strlen(value) || errno == ERANGE)
		return bnn_fail(
		        err, BNN_EINVAL,
		        "option '%s': '%s' is not a whole number in [0, 18446744073709551615]",
		        name, value);
	*out = (uint64_t)v;
	return BNN_OK;
}

static int opt_milestones(bnn_schedule *s, const char *value, bnn_err *err)
{
	char buf[512], *tok, *save = NULL;
	int n = 0;
	double v;

	if (strlen(value) >= sizeof buf)
		return bnn_fail(err, BNN_EINVAL, "option 'milestones': the list is too long");
	if (value[0] == ',' || strstr(value, ",,") || (*value && value[strlen(value) - 1] == ','))
		return bnn_fail(err, BNN_EINVAL, "option 'milestones': '%s' has an empty entry",
		                value);
	strcpy(buf, value);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == BNN_SCHEDULE_MAX_MILESTONES)
			return bnn_fail(err, BNN_EINVAL,
			                "option 'milestones': at most %d milestones",
			                BNN_SCHEDULE_MAX_MILESTONES);
		if (opt_number("milestones", tok, 0, 1e9, &v, err))
			return BNN_EINVAL;
		if (n > 0 && v <= s->milestones[n - 1])
			return bnn_fail(
			        err, BNN_EINVAL,
			        "option 'milestones': %s is not after %g (use increasing epochs)",
			        tok, s->milestones[n - 1]);
		s->milestones[n++] = v;
	}
	if (n == 0)
		return bnn_fail(err, BNN_EINVAL, "option 'milestones': give epochs such as 30,60");
	s->nmilestones = n;
	return BNN_OK;
}

/* The option named by the len bytes at name, or NULL. */
static const struct opt_def *opt_find(const char *name, size_t len)
{
	int i;

	for (i = 0; i < NOPTS; i++)
		if (strlen(opt_defs[i].name) == len && strncmp(opt_defs[i].name, name, len) == 0)
			return &opt_defs[i];
	return NULL;
}

int bnn_train_set(bnn_train_options *o, const char *name, const char *value, bnn_err *err)
{
	const struct opt_def *d = NULL;
	char *base = (char *)o;
	double v;
	int i, rc, best = -1;

	if (!o || !name || !value)
		return bnn_fail(err, BNN_EINVAL, "bnn_train_set: no %s given",
		                !o      ? "options"
		                : !name ? "name"
		                        : "value");
	d = opt_find(name, strlen(name));
	if (!d) {
		struct bnn_text_suggestion sug;

		bnn_text_suggest_init(&sug, name, BNN_TEXT_EXACT_CASE);
		for (i = 0; i < NOPTS; i++)
			if (bnn_text_suggest_offer(&sug, opt_defs[i].name))
				best = i;
		if (best >= 0)
			return bnn_fail(err, BNN_EINVAL, "unknown option '%s'; did you mean '%s'?",
			                name, opt_defs[best].name);
		return bnn_fail(err, BNN_EINVAL,
		                "unknown option '%s' (the options are listed by --help)", name);
	}
	if (d->autov != AUTO_NONE && strcmp(value, "auto") == 0) {
		*(double *)(base + d->offset) = d->autov == AUTO_NAN ? NAN : 0;
		return BNN_OK;
	}
	switch (d->kind) {
	case OPT_OPTIMIZER:
		i = bnn_optimizer_from_name(value);
		if (i < 0) {
			char list[128];
			train_optimizer_list(list, sizeof list);
			return bnn_fail(err, BNN_EINVAL, "unknown optimizer '%s' (choose %s)",
			                value, list);
		}
		o->optimizer = i;
		o->adam.decoupled = train_optimizers[i].decoupled;
		return BNN_OK;
	case OPT_SCHEDULE:
		if (strcmp(value, "constant") == 0)
			o->schedule.kind = BNN_SCHEDULE_CONSTANT;
		else if (strcmp(value, "step") == 0)
			o->schedule.kind = BNN_SCHEDULE_STEP;
		else if (strcmp(value, "cosine") == 0)
			o->schedule.kind = BNN_SCHEDULE_COSINE;
		else
			return bnn_fail(err, BNN_EINVAL,
			                "unknown schedule '%s' (choose constant, step or cosine)",
			                value);
		return BNN_OK;
	case OPT_MILESTONES:
		return opt_milestones(&o->schedule, value, err);
	case OPT_BOOL:
		if (strcmp(value, "1") == 0 || strcmp(value, "true") == 0)
			*(int *)(base + d->offset) = 1;
		else if (strcmp(value, "0") == 0 || strcmp(value, "false") == 0)
			*(int *)(base + d->offset) = 0;
		else
			return bnn_fail(err, BNN_EINVAL, "option '%s': '%s' is not 0 or 1", name,
			                value);
		return BNN_OK;
	case OPT_DOUBLE:
	case OPT_FLOAT:
	case OPT_WEIGHT_DECAY:
	case OPT_BETA1:
	case OPT_BETA2:
		rc = opt_number(name, value, d->min, d->max, &v, err);
		if (rc)
			return rc;
		if (d->kind == OPT_DOUBLE)
			*(double *)(base + d->offset) = v;
		else if (d->kind == OPT_FLOAT)
			*(float *)(base + d->offset) = (float)v;
		else if (d->kind == OPT_BETA1)
			o->adam.beta1 = o->vogn.beta1 = o->ivon.beta1 = (float)v;
		else if (d->kind == OPT_BETA2)
			o->adam.beta2 = o->vogn.beta2 = o->ivon.beta2 = (float)v;
		else
			o->sgd.weight_decay = o->adam.weight_decay = (float)v;
		return BNN_OK;
	case OPT_U64:
		return opt_u64(d->name, value, (uint64_t *)(base + d->offset), err);
	case OPT_LONG:
	case OPT_INT:
		rc = opt_integer(d, value, &v, err);
		if (rc)
			return rc;
		if (d->kind == OPT_LONG)
			*(long *)(base + d->offset) = (long)v;
		else
			*(int *)(base + d->offset) = (int)v;
		return BNN_OK;
	}
	return bnn_fail(err, BNN_EINVAL, "option '%s' cannot be set", name);
}

/* Whether o sets option d away from its value in the defaults. */
static int opt_is_set(const bnn_train_options *o, const bnn_train_options *def,
                      const struct opt_def *d)
{
	const char *a = (const char *)o + d->offset, *b = (const char *)def + d->offset;

	switch (d->kind) {
	case OPT_OPTIMIZER:
	case OPT_SCHEDULE:
		return memcmp(a, b, sizeof(int)) != 0; /* enums: read by every optimizer */
	case OPT_MILESTONES:
		return o->schedule.nmilestones != def->schedule.nmilestones;
	case OPT_WEIGHT_DECAY:
		return o->sgd.weight_decay != def->sgd.weight_decay ||
		       o->adam.weight_decay != def->adam.weight_decay;
	case OPT_BETA1:
		return o->adam.beta1 != def->adam.beta1 || o->vogn.beta1 != def->vogn.beta1 ||
		       o->ivon.beta1 != def->ivon.beta1;
	case OPT_BETA2:
		return o->adam.beta2 != def->adam.beta2 || o->vogn.beta2 != def->vogn.beta2 ||
		       o->ivon.beta2 != def->ivon.beta2;
	case OPT_DOUBLE:
		return memcmp(a, b, sizeof(double)) != 0; /* bits: NaN defaults compare */
	case OPT_FLOAT:
		return memcmp(a, b, sizeof(float)) != 0;
	case OPT_LONG:
		return memcmp(a, b, sizeof(long)) != 0;
	case OPT_U64:
		return memcmp(a, b, sizeof(uint64_t)) != 0;
	case OPT_INT:
	case OPT_BOOL:
		return memcmp(a, b, sizeof(int)) != 0;
	}
	return 0;
}

/* 0 if v is in d's range, else BNN_ERANGE with bnn_train_set's message. */
static int opt_range(const struct opt_def *d, double v, bnn_err *err)
{
	char text[32];

	if (v >= d->min && v <= d->max)
		return BNN_OK;
	snprintf(text, sizeof text, "%g", v);
	return opt_outside(d->name, text, d->min, d->max, err);
}

/* The range check of bnn_train_set, for an option set in the struct
 * directly (NaN is outside every range). */
static int opt_check_range(const bnn_train_options *o, const struct opt_def *d, bnn_err *err)
{
	const char *a = (const char *)o + d->offset;
	int rc;

	switch (d->kind) {
	case OPT_DOUBLE:
		return opt_range(d, *(const double *)a, err);
	case OPT_FLOAT:
		return opt_range(d, *(const float *)a, err);
	case OPT_LONG:
		return opt_range(d, (double)*(const long *)a, err);
	case OPT_INT:
	case OPT_BOOL:
		return opt_range(d, *(const int *)a, err);
	case OPT_WEIGHT_DECAY:
		if ((rc = opt_range(d, o->sgd.weight_decay, err)))
			return rc;
		return opt_range(d, o->adam.weight_decay, err);
	case OPT_BETA1:
		if ((rc = opt_range(d, o->adam.beta1, err)) ||
		    (rc = opt_range(d, o->vogn.beta1, err)))
			return rc;
		return opt_range(d, o->ivon.beta1, err);
	case OPT_BETA2:
		if ((rc = opt_range(d, o->adam.beta2, err)) ||
		    (rc = opt_range(d, o->vogn.beta2, err)))
			return rc;
		return opt_range(d, o->ivon.beta2, err);
	case OPT_SCHEDULE:
		if (o->schedule.kind < BNN_SCHEDULE_DEFAULT ||
		    o->schedule.kind > BNN_SCHEDULE_COSINE)
			return bnn_fail(err, BNN_EINVAL, "unknown schedule %d",
			                (int)o->schedule.kind);
		return BNN_OK;
	case OPT_MILESTONES:
		if (o->schedule.nmilestones < 0 ||
		    o->schedule.nmilestones > BNN_SCHEDULE_MAX_MILESTONES)
			return bnn_fail(err, BNN_EINVAL,
			                "option 'milestones': %d milestones (at most %d)",
			                o->schedule.nmilestones, BNN_SCHEDULE_MAX_MILESTONES);
		return BNN_OK;
	case OPT_OPTIMIZER:
	case OPT_U64:
		return BNN_OK; /* checked first by the caller; any 64-bit seed */
	}
	return BNN_OK;
}

/* Whether optimizer i reads option d: every optimizer reads a shared
 * option, and its row's options list the others. */
static int opt_read_by(const struct opt_def *d, int i)
{
	const char *p = train_optimizers[i].options;
	size_t k = strlen(d->name);

	if (d->shared)
		return 1;
	if (d->need == NEED_PRIOR_UPDATE)
		return train_optimizers[i].variational;
	for (; p && (p = strstr(p, d->name)) != NULL; p += k)
		if ((p == train_optimizers[i].options || p[-1] == ' ') && (p[k] == ' ' || !p[k]))
			return 1;
	return 0;
}

/* The optimizers that read option d as text: "vogn, ivon and bbb". */
static void opt_users_text(const struct opt_def *d, char *buf, size_t size)
{
	int i, n = 0, count = 0;

	for (i = 0; i < BNN_OPT_COUNT; i++)
		count += opt_read_by(d, i);
	buf[0] = '\0';
	for (i = 0; i < BNN_OPT_COUNT; i++)
		if (opt_read_by(d, i)) {
			n++;
			snprintf(buf + strlen(buf), size - strlen(buf), "%s%s",
			         n == 1       ? ""
			         : n == count ? " and "
			                      : ", ",
			         bnn_optimizer_name(i));
		}
}

/* Whether model m has a layer whose KL reads option delta whatever the
 * optimizer (whvi); 1 when the model is not known (NULL). */
static int opt_model_reads_delta(const bnn_model *m)
{
	int i;

	if (!m)
		return 1;
	for (i = 0; i < m->nlayers; i++)
		if (m->layers[i].caps & BNN_CAP_WHVI)
			return 1;
	return 0;
}

/* 0 if option d, set in o, is read (by the optimizer, or by model m's
 * layers: NULL when unknown); else BNN_EINVAL with the reason. */
static int opt_check_read(const bnn_train_options *o, const bnn_model *m, const struct opt_def *d,
                          int valid_set, bnn_err *err)
{
	const char *opt = bnn_optimizer_name(o->optimizer);
	char users[96];

	if (!opt_read_by(d, o->optimizer) &&
	    !(d->need == NEED_PRIOR_UPDATE && opt_model_reads_delta(m))) {
		if (d->kind == OPT_WEIGHT_DECAY)
			return bnn_fail(
			        err, BNN_EINVAL,
			        "optimizer '%s' takes its regularisation from the prior: set "
			        "'delta' (or the model's prior precision) instead of "
			        "'weight_decay'",
			        opt);
		opt_users_text(d, users, sizeof users);
		return bnn_fail(err, BNN_EINVAL,
		                "option '%s' is not used by optimizer '%s', only by %s%s%s%s: "
		                "leave it out or choose one of those",
		                d->name, opt, users,
		                d->need == NEED_PRIOR_UPDATE ? " (and by whvi layers, which model '"
		                                             : "",
		                d->need == NEED_PRIOR_UPDATE ? m->name : "",
		                d->need == NEED_PRIOR_UPDATE ? "' has none of)" : "");
	}
	if (d->need == NEED_STEP && bnn_train_schedule_kind(o) != BNN_SCHEDULE_STEP)
		return bnn_fail(err, BNN_EINVAL,
		                "option '%s' belongs to the step schedule: set schedule=step too",
		                d->name);
	if (d->need == NEED_COSINE && bnn_train_schedule_kind(o) != BNN_SCHEDULE_COSINE)
		return bnn_fail(
		        err, BNN_EINVAL,
		        "option '%s' belongs to the cosine schedule: set schedule=cosine too",
		        d->name);
	if (d->need == NEED_VALIDATION && !valid_set && !(o->valid_fraction > 0))
		return bnn_fail(err, BNN_EINVAL,
		                "option '%s' stops training on the validation NLL, and there is no "
		                "validation data: give some (bnn_train_io.valid, the driver's "
		                "--valid FILE) or set valid_fraction",
		                d->name);
	if (d->need == NEED_SWAG && o->swag == 0)
		return bnn_fail(err, BNN_EINVAL,
		                "option '%s' belongs to SWAG: set swag=K too (its last K epochs)",
		                d->name);
	if (d->need == NEED_NO_VALID_SET && valid_set)
		return bnn_fail(
		        err, BNN_EINVAL,
		        "option '%s' holds out part of the training data for validation, but "
		        "validation data is given (bnn_train_io.valid, the driver's --valid): "
		        "use one or the other",
		        d->name);
	return BNN_OK;
}

int bnn_train_options_check(const bnn_train_options *o, int valid_set, bnn_err *err)
{
	return bnn_train_options_check_model(o, NULL, valid_set, err);
}

int bnn_train_options_check_model(const bnn_train_options *o, const bnn_model *m, int valid_set,
                                  bnn_err *err)
{
	bnn_train_options def = bnn_train_defaults();
	int i, rc;

	if (!o)
		return bnn_fail(err, BNN_EINVAL, "bnn_train_options_check: no options given");
	if (o->optimizer < 0 || o->optimizer >= BNN_OPT_COUNT)
		return bnn_fail(err, BNN_EINVAL, "unknown optimizer %d", o->optimizer);
	for (i = 0; i < NOPTS; i++) {
		if (opt_is_set(o, &def, &opt_defs[i]) &&
		    ((rc = opt_check_range(o, &opt_defs[i], err)) ||
		     (rc = opt_check_read(o, m, &opt_defs[i], valid_set, err))))
			return rc;
	}
	return train_swag_options_check(o, err);
}

void bnn_train_options_help(FILE *out)
{
	char list[128];
	int i;

	train_optimizer_list(list, sizeof list);
	for (i = 0; i < NOPTS; i++)
		fprintf(out, "    %-15s %s\n", opt_defs[i].name,
		        opt_defs[i].kind == OPT_OPTIMIZER ? list : opt_defs[i].help);
}


int train_text_append(char *buf, int n, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (n < 0 || n >= TRAIN_TEXT_MAX)
		return n;
	va_start(ap, fmt);
	k = vsnprintf(buf + n, (size_t)(TRAIN_TEXT_MAX - n), fmt, ap);
	va_end(ap);
	return k < 0 ? n : n + k;
}

/* Whether word NAME=VALUE (len bytes) leaves its option to the trainer:
 * VALUE is "auto", or the number the field then holds as %.9g prints it
 * ("nan", "0"), which the checkpoints written before "auto" hold. */
static int opt_word_auto(const char *word, size_t len)
{
	const char *eq = memchr(word, '=', len), *value;
	const struct opt_def *d = eq ? opt_find(word, (size_t)(eq - word)) : NULL;
	size_t vlen;

	if (!d || d->autov == AUTO_NONE)
		return 0;
	value = eq + 1;
	vlen = len - (size_t)(value - word);
	if (vlen == 4 && strncmp(value, "auto", 4) == 0)
		return 1;
	if (d->autov == AUTO_ZERO)
		return vlen == 1 && value[0] == '0';
	return (vlen == 3 && strncmp(value, "nan", 3) == 0) ||
	       (vlen == 4 && strncmp(value, "-nan", 4) == 0);
}

/* Whether option d holds a float (its value printed as %.9g of a float). */
static int opt_is_float(const struct opt_def *d)
{
	return d && (d->kind == OPT_FLOAT || d->kind == OPT_WEIGHT_DECAY || d->kind == OPT_BETA1 ||
	             d->kind == OPT_BETA2);
}

/* The shortest decimal that reads back as the float of word NAME=VALUE
 * (len bytes) when NAME is a float option: "0.9" for "0.899999976", the
 * float nearest 0.9, which %.9g prints; into buf (size 32), or 0 when
 * the word is not one, or its value no longer. */
static size_t opt_word_float(const char *word, size_t len, char *buf)
{
	const char *eq = memchr(word, '=', len);
	char value[32], *end;
	size_t vlen;
	float f;
	int digits;

	if (!eq || !opt_is_float(opt_find(word, (size_t)(eq - word))))
		return 0;
	vlen = len - (size_t)(eq + 1 - word);
	if (vlen == 0 || vlen >= sizeof value)
		return 0;
	memcpy(value, eq + 1, vlen);
	value[vlen] = '\0';
	f = strtof(value, &end);
	if (*end || !isfinite(f))
		return 0;
	for (digits = 1; digits <= 9; digits++) {
		int k = snprintf(buf, 32, "%.*g", digits, (double)f);

		if (strtof(buf, NULL) == f)
			return (size_t)k < vlen ? (size_t)k : 0;
	}
	return 0;
}

char *train_options_text_canonical(const char *text)
{
	size_t len, keep, n = 0, flen;
	/* a word that grows, by 3 bytes at most ("ess=0" to "ess=auto"), has
	 * 3 bytes or more ("x=0"): the text at most doubles; a float's value
	 * only shrinks */
	char *out = malloc(2 * strlen(text) + 1), num[32];
	const char *p;

	if (!out)
		return NULL;
	for (p = text; *p; p += len) {
		len = strcspn(p, " ");
		flen = opt_word_float(p, len, num);
		keep = opt_word_auto(p, len) || flen
		               ? (size_t)((const char *)memchr(p, '=', len) - p) + 1
		               : len;
		memcpy(out + n, p, keep);
		n += keep;
		if (keep < len) {
			memcpy(out + n, flen ? num : "auto", flen ? flen : 4);
			n += flen ? flen : 4;
		}
		if (p[len] == ' ')
			out[n++] = p[len++];
	}
	out[n] = '\0';
	return out;
}

char *bnn_train_options_text(const bnn_train_options *o)
{
	static const char *const schedules[] = { "constant", "step", "cosine" };
	char *buf = malloc(TRAIN_TEXT_MAX), *text;
	int n, i;

	if (!buf)
		return NULL;
	n = train_text_append(buf, 0,
	                      "optimizer=%s lr=%.9g schedule=%s gamma=%.9g warmup=%.9g lr_min=%.9g "
	                      "clip=%.9g epochs=%ld batch=%ld seed=%llu "
	                      "valid_fraction=%.9g patience=%ld crop_pad=%ld flip=%d",
	                      bnn_optimizer_name(o->optimizer),
	                      o->schedule.lr > 0 ? o->schedule.lr : bnn_default_lr(o->optimizer),
	                      schedules[bnn_train_schedule_kind(o)], o->schedule.gamma,
	                      o->schedule.warmup, o->schedule.lr_min, bnn_train_clip(o), o->epochs,
	                      o->batch, (unsigned long long)o->seed, o->valid_fraction, o->patience,
	                      o->crop_pad, o->flip);
	if (train_optimizer_of(o->optimizer))
		n = train_optimizers[o->optimizer].options_text(o, buf, n);
	if (o->swag > 0) /* only then: the texts of earlier checkpoints stay as they were */
		n = train_text_append(buf, n, " swag=%ld swag_rank=%ld", o->swag, o->swag_rank);
	for (i = 0; i < o->schedule.nmilestones; i++)
		n = train_text_append(buf, n, "%s%.9g",
		                      i ? "," : " milestones=", o->schedule.milestones[i]);
	/* the values the trainer chooses as "auto", floats at their shortest */
	text = train_options_text_canonical(buf);
	free(buf);
	return text;
}
