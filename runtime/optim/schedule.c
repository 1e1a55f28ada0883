/*
 * schedule.c: learning-rate schedules (bnn_optim.h).  The rate at training
 * progress t (in epochs, fractional) is a base schedule times an optional
 * linear warm-up:
 *
 *   constant:  base(t) = η
 *   step:      base(t) = η γ^k, k = #{milestones m : t > m}
 *              (PyTorch's MultiStepLR with epochs counted from 0: the
 *              rate drops once epoch m is complete)
 *   cosine:    base(t) = η_min + (η − η_min)(1 + cos πu)/2,
 *              u = clamp((t − warmup)/(total − warmup), 0, 1)
 *              (Loshchilov and Hutter's SGDR, one cycle, no restart)
 *   warm-up:   lr(t) = base(t) · t / warmup while t < warmup
 *
 * Degenerate cases, so that no input divides by zero: t < 0 (or NaN)
 * counts as 0; only the first BNN_SCHEDULE_MAX_MILESTONES milestones are
 * read, whatever nmilestones says, and their order does not matter;
 * a cosine run with total <= warmup has no annealing phase, so u is 0 up
 * to and including t = warmup and 1 after it (the rate drops straight to
 * η_min once warm-up is over, the limit of total → warmup).
 */
#include <math.h>

#include "bnn.h"

/* π (M_PI is not ISO C). */
#define SCHEDULE_PI 3.14159265358979323846

static double schedule_base(const bnn_schedule *s, double t)
{
	double span, u, lr;
	int i, k;

	switch (s->kind) {
	case BNN_SCHEDULE_STEP:
		k = s->nmilestones < 0 ? 0 : s->nmilestones;
		if (k > BNN_SCHEDULE_MAX_MILESTONES)
			k = BNN_SCHEDULE_MAX_MILESTONES;
		lr = s->lr;
		for (i = 0; i < k; i++)
			if (t > s->milestones[i])
				lr *= s->gamma;
		return lr;
	case BNN_SCHEDULE_COSINE:
		span = s->total - s->warmup;
		if (span > 0)
			u = (t - s->warmup) / span;
		else
			u = t > s->warmup ? 1 : 0;
		u = u < 0 ? 0 : u > 1 ? 1 : u;
		return s->lr_min + (s->lr - s->lr_min) * (1 + cos(SCHEDULE_PI * u)) / 2;
	case BNN_SCHEDULE_CONSTANT:
	default:
		return s->lr;
	}
}

double bnn_schedule_lr(const bnn_schedule *s, double t)
{
	double base;

	if (!(t > 0))
		t = 0;
	base = schedule_base(s, t);
	if (s->warmup > 0 && t < s->warmup)
		return base * t / s->warmup;
	return base;
}
