/*
 * bnn_optim.h: gradient optimizers, learning-rate schedules and gradient
 * clipping for libbnn (included by bnn.h).
 *
 * Every optimizer is a plain function over flat float arrays of n
 * parameters: one fused loop that reads the gradient once and updates the
 * parameters and the optimizer's state in place.  The caller owns all
 * arrays (state arrays start zeroed) and the step counter; nothing is
 * allocated and nothing can fail.  The update rules, with g the gradient of
 * the loss at w and λ the weight decay:
 *
 *   SGD (PyTorch's convention):  g ← g + λw;  b ← μb + g (b ← g at the
 *       first step);  w ← w − η·(g + μb) with Nesterov, else w ← w − η·b.
 *   Adam (Kingma and Ba):  g ← g + λw (L2, "coupled");  m ← β1 m + (1−β1) g;
 *       v ← β2 v + (1−β2) g²;  w ← w − η·m̂/(√v̂ + ε) with m̂ = m/(1−β1^t),
 *       v̂ = v/(1−β2^t).
 *   AdamW (Loshchilov and Hutter):  as Adam without the λw in g, and
 *       w ← w − ηλw applied alongside the Adam step (decoupled decay).
 *
 * The arrays of one call must not overlap (the loops are vectorised on
 * that assumption).  docs/optimizers.md states the same rules as
 * equations, with their defaults, the schedules and clipping.
 */
#ifndef BNN_OPTIM_H
#define BNN_OPTIM_H

#ifdef __cplusplus
extern "C" {
#endif

/* SGD hyperparameters (defaults in brackets). */
typedef struct bnn_sgd_params {
	float momentum;     /* μ [0.9]; 0 is plain SGD */
	float weight_decay; /* λ [0] */
	int nesterov;       /* use Nesterov momentum [0] */
} bnn_sgd_params;

/* Adam / AdamW hyperparameters. */
typedef struct bnn_adam_params {
	float beta1;        /* [0.9] */
	float beta2;        /* [0.999] */
	float eps;          /* [1e-8] */
	float weight_decay; /* λ [0] */
	int decoupled;      /* 1: AdamW's decoupled decay; 0: L2 added to g */
} bnn_adam_params;

/** The defaults above. */
bnn_sgd_params bnn_sgd_defaults(void);
bnn_adam_params bnn_adam_defaults(void);

/**
 * One SGD step.  buf holds the momentum buffer (n floats, zero before the
 * first step; not used, and may be NULL, when p->momentum is 0); step is
 * 1 at the first step, where b ← g (step <= 1 counts as the first).  g is
 * not modified.
 */
void bnn_sgd_step(long n, float *w, const float *g, float *buf, float lr, long step,
                  const bnn_sgd_params *p);

/* The arrays of an Adam or AdamW step, n floats each. */
typedef struct bnn_adam_arrays {
	long n;         /* number of parameters */
	float *w;       /* the parameters, updated in place */
	const float *g; /* the gradient (not modified) */
	float *m;       /* the first moment estimate (zero before the first step) */
	float *v;       /* the second moment estimate (zero before the first step) */
} bnn_adam_arrays;

/**
 * One Adam or AdamW step on the arrays of a; step is t, 1 at the first
 * step (step < 1 counts as 1).  β1 and β2 must be in [0, 1).  √v̂ is
 * computed to float precision (relative error below 2.5e-7) for
 * v >= 2^-126 and as √(2^-126) below that.
 */
void bnn_adam_step(const bnn_adam_arrays *a, float lr, long step, const bnn_adam_params *p);

/**
 * Scale g in place so that its Euclidean norm is at most max_norm:
 * g ← g · (max_norm / norm) when norm > max_norm.  No change when
 * max_norm <= 0, when the norm is already within it, or when the norm is
 * infinite or NaN (so a divergence stays visible).
 * @return the norm before clipping (accumulated in double).
 */
double bnn_clip_grad_norm(long n, float *g, double max_norm);

/* Learning-rate schedules. */
enum bnn_schedule_kind {
	BNN_SCHEDULE_DEFAULT = -1, /* training options only: the optimizer's own
	                              (bnn_default_schedule); read as CONSTANT here */
	BNN_SCHEDULE_CONSTANT,     /* lr */
	BNN_SCHEDULE_STEP,         /* lr · gamma^(number of milestones passed) */
	BNN_SCHEDULE_COSINE        /* cosine from lr to lr_min over the run */
};

#define BNN_SCHEDULE_MAX_MILESTONES 16

typedef struct bnn_schedule {
	enum bnn_schedule_kind kind;
	double lr;       /* the base learning rate */
	double lr_min;   /* cosine: the final rate [0] */
	double gamma;    /* step: the factor at each milestone [0.1] */
	int nmilestones; /* step: how many of milestones[] are used */
	double milestones[BNN_SCHEDULE_MAX_MILESTONES]; /* step: epochs, ascending */
	double warmup;                                  /* epochs of linear warm-up, any kind [0] */
	double total; /* cosine: the length of the run in epochs */
} bnn_schedule;

/**
 * The learning rate at training progress t, in epochs (fractional: the
 * trainer passes t = (steps done, counting this one) / steps per epoch).
 * Warm-up: while t < warmup the rate is base(t) · t / warmup.
 * STEP: base = lr · gamma^k with k the number of milestones m with t > m
 *   (the first min(nmilestones, BNN_SCHEDULE_MAX_MILESTONES) of them).
 * COSINE: base = lr_min + (lr − lr_min)(1 + cos(π·u))/2 with
 *   u = clamp((t − warmup)/(total − warmup), 0, 1); when total <= warmup,
 *   u = 0 for t <= warmup and 1 after (no division by zero).
 * t < 0 or NaN counts as 0.  Never fails.
 */
double bnn_schedule_lr(const bnn_schedule *s, double t);

#ifdef __cplusplus
}
#endif

#endif /* BNN_OPTIM_H */
