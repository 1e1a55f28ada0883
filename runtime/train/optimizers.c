/*
 * optimizers.c: the table of optimizers, one row each, indexed by enum
 * bnn_optimizer.  A row says what the rest of the library asks about an
 * optimizer: its name (the --set value and the checkpoints' meta), its
 * default learning rate, schedule, gradient clipping and h0, which of
 * them a short run scales (bnn_short_run_scale), the state slots
 * it keeps, whether it learns a posterior, which layers' capabilities
 * (BNN_CAP_*) it can train, the options it reads, and the hooks of its
 * step file (step_point.c, step_natural.c, step_bbb.c).  state.c, train_options.c and
 * train_step.c read the table; none of them lists optimizers.
 *
 * Adding an optimizer: its value in enum bnn_optimizer (bnn_train.h), a
 * row here, and its hooks in a step file (with its update kernel in
 * runtime/optim/); options of its own also need a row in train_options.c.
 */
#include <stdio.h>
#include <string.h>

#include "train_internal.h"

/* What every layer that is not meanfield asks: noise drawn by the pass,
 * components; these every optimizer trains by the same rule. */
#define CAPS_POINT (BNN_CAP_PASS_NOISE | BNN_CAP_COMPONENTS)
#define CAPS_SIGMA (BNN_CAP_SIGMA | BNN_CAP_SIGMA_LRT)

/* IVON's default gradient-norm clip: its first steps are about lr·ĝ while
 * h is still h0 (Alg. 1 line 7 with the rescaled α), which the large
 * gradients of an exponential link (a Poisson rate, a log-variance head)
 * or of an untrained attention layer turn into an overflow; the norm of
 * ĝ clipped to this bounds them.  The evidence is in
 * docs/optimizers/ivon.md, "Defaults and their evidence". */
#define TRAIN_IVON_CLIP 2.0

/* IVON's h0 for a run of BNN_SHORT_RUN_STEPS steps or more: with λ = N it
 * sets the initial σ = 1/√(N(h0 + δ)) (Alg. 1 init), and since β2 keeps h
 * near h0 for 1/(1 − β2) = 10⁵ steps, the noise of the whole run.
 * docs/optimizers/ivon.md, "Defaults and their evidence". */
#define TRAIN_IVON_H0 0.1

/* BADAM's validation samples: its σ (the N of eq. 12 and δ) is read off
 * Adam's v after training and enters no gradient, so the network at the
 * mean cannot tell a good σ from a bad one; the validation NLL (the best
 * epoch, early stopping, tune's ranking) is that of the predictive eval
 * reports, here with 8 samples (about a third of an epoch's time on the
 * Fashion-MNIST MLP's 6,000 validation images).  docs/optimizers/badam.md,
 * "Defaults and their evidence". */
#define TRAIN_BADAM_VALID_MC 8

const struct train_optimizer train_optimizers[BNN_OPT_COUNT] = {
	[BNN_OPT_SGD] = {
		.name = "sgd", .default_lr = 0.01,
		.slots = 1, .slot_names = { "momentum buffer" },
		.trains = CAPS_POINT | BNN_CAP_WHVI,
		.any_prior = 1,
		.options = "momentum nesterov weight_decay swag swag_rank",
		.step = train_step_point, .update = train_sgd_update,
		.options_text = train_sgd_text,
	},
	[BNN_OPT_ADAM] = {
		.name = "adam", .default_lr = 1e-3,
		.slots = 2, .slot_names = { "m", "v" },
		.trains = CAPS_POINT | BNN_CAP_WHVI,
		.any_prior = 1,
		.options = "weight_decay beta1 beta2 eps swag swag_rank",
		.step = train_step_point, .update = train_adam_update,
		.options_text = train_adam_text,
	},
	[BNN_OPT_ADAMW] = {
		.name = "adamw", .default_lr = 1e-3,
		.slots = 2, .slot_names = { "m", "v" },
		.trains = CAPS_POINT | BNN_CAP_WHVI,
		.decoupled = 1,
		.any_prior = 1,
		.options = "weight_decay beta1 beta2 eps swag swag_rank",
		.step = train_step_point, .update = train_adam_update,
		.options_text = train_adam_text,
	},
	[BNN_OPT_VOGN] = {
		.name = "vogn", .default_lr = 5e-5, .default_schedule = BNN_SCHEDULE_COSINE,
		.short_run = TRAIN_SHORT_LR,
		.delta_times_rho = 1,
		.slots = 2, .slot_names = { "m (momentum)", "s (scale)" },
		.variational = 1, .sqgrad_hessian = 1, .trains = CAPS_POINT | CAPS_SIGMA, .learns = BNN_CAP_SIGMA,
		.options = "beta1 beta2 mc tau tau_start tau_epochs rho",
		.setup = train_natural_setup, .step = train_natural_step,
		.update = train_vogn_update, .sigma = train_vogn_sigma,
		.options_text = train_vogn_text,
	},
	[BNN_OPT_IVON] = {
		.name = "ivon", .default_lr = 0.3, .default_schedule = BNN_SCHEDULE_COSINE,
		.default_clip = TRAIN_IVON_CLIP, .default_h0 = TRAIN_IVON_H0,
		.short_run = TRAIN_SHORT_H0,
		.slots = 2, .slot_names = { "g (momentum)", "h (Hessian)" },
		.variational = 1, .trains = CAPS_POINT | CAPS_SIGMA, .learns = BNN_CAP_SIGMA,
		.delta_over_ess = 1, .uses_ess = 1,
		.options = "beta1 beta2 mc h0 ess clip_radius rescale_lr",
		.setup = train_natural_setup, .start = train_ivon_start,
		.step = train_natural_step, .update = train_ivon_update, .sigma = train_ivon_sigma,
		.options_text = train_ivon_text,
	},
	[BNN_OPT_BADAM] = {
		.name = "badam", .default_lr = 1e-3, .default_schedule = BNN_SCHEDULE_COSINE,
		.uses_ess = 1,
		.ess_times_fan_in = 1, .valid_mc = TRAIN_BADAM_VALID_MC,
		.slots = 2, .slot_names = { "m", "v" },
		.variational = 1, .trains = CAPS_POINT | CAPS_SIGMA, .learns = BNN_CAP_SIGMA,
		.options = "beta1 beta2 eps ess",
		.step = train_step_point, .update = train_badam_update,
		.finish_epoch = train_badam_finish_epoch, .options_text = train_badam_text,
	},
	[BNN_OPT_BBB] = {
		.name = "bbb", .default_lr = 1e-3,
		.slots = 5, .slot_names = { "m of mu", "v of mu", "rho", "m of rho", "v of rho" },
		.variational = 1, .trains = CAPS_POINT | CAPS_SIGMA | BNN_CAP_WHVI,
		.learns = BNN_CAP_SIGMA | BNN_CAP_WHVI, /* Adam on the ELBO of whvi layers too */
		.any_prior = 1, /* −E_q log p by a sample (prior_terms.c) */
		.options = "beta1 beta2 eps mc sigma0 lrt",
		.setup = train_bbb_setup, .start = train_bbb_start, .step = train_bbb_step,
		.update = train_bbb_update, .sigma = train_bbb_sigma,
		.options_text = train_bbb_text,
	},
};

const struct train_optimizer *train_optimizer_of(int optimizer)
{
	if (optimizer < 0 || optimizer >= BNN_OPT_COUNT)
		return NULL;
	return &train_optimizers[optimizer];
}

void train_optimizer_list(char *buf, size_t size)
{
	int i;

	buf[0] = '\0';
	for (i = 0; i < BNN_OPT_COUNT; i++)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%s",
		         i == 0                   ? ""
		         : i == BNN_OPT_COUNT - 1 ? " or "
		                                  : ", ",
		         train_optimizers[i].name);
}
