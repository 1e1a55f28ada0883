/*
 * runtime_optim.c: TAP tests of libbnn's optimizers, learning-rate
 * schedules and gradient clipping (runtime/optim/optim_sgd.c, optim_adam.c,
 * optim_clip.c, schedule.c; bnn_optim.h).  One and two steps of SGD
 * (plain, weight decay, momentum, Nesterov) and of Adam and AdamW on a
 * 3-element vector, each expected value worked out by hand next to the
 * check; the same updates on 19 elements, which go through the vectorised
 * chunks as well as the scalar tail; clipping; the three schedules with
 * warm-up and their degenerate cases; the remembered bias correction
 * 1 − β^t.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <math.h>
#include <stddef.h>

#include "optim/bias_correction.h"
#include "bnn.h"
#include "tap.h"

/* Every test starts from these: w = (1, -2, 0.5), g = (0.5, 1, -2). */
static const float w0[3] = { 1.0f, -2.0f, 0.5f };
static const float g1[3] = { 0.5f, 1.0f, -2.0f };
/* A second gradient, for two-step tests that must not collapse to sign
 * steps: g2 = (1, 0, -1). */
static const float g2[3] = { 1.0f, 0.0f, -1.0f };

static void copy3(float *dst, const float *src)
{
	dst[0] = src[0];
	dst[1] = src[1];
	dst[2] = src[2];
}

/* Check a 3-vector against expected values at tolerance 1e-6. */
static void is_vec3(const float *got, double e0, double e1, double e2, const char *what)
{
	is_float(got[0], e0, 1e-6, "%s [0]", what);
	is_float(got[1], e1, 1e-6, "%s [1]", what);
	is_float(got[2], e2, 1e-6, "%s [2]", what);
}

/* One Adam step number t at lr 0.1 on the n elements of w, m and v. */
static void adam_take(long n, float *w, const float *g, float *m, float *v, int t,
                      const bnn_adam_params *p)
{
	bnn_adam_step(&(bnn_adam_arrays){ .n = n, .w = w, .g = g, .m = m, .v = v }, 0.1f, t, p);
}

/* Adam's start on 3 elements: w = w0, m = v = 0. */
static void adam_restart(float *w, float *m, float *v)
{
	copy3(w, w0);
	m[0] = m[1] = m[2] = v[0] = v[1] = v[2] = 0;
}

static void test_defaults(void)
{
	bnn_sgd_params s = bnn_sgd_defaults();
	bnn_adam_params a = bnn_adam_defaults();

	ok(s.momentum == 0.9f && s.weight_decay == 0.0f && s.nesterov == 0,
	   "SGD defaults: momentum 0.9, no decay, no Nesterov");
	ok(a.beta1 == 0.9f && a.beta2 == 0.999f && a.eps == 1e-8f && a.weight_decay == 0.0f &&
	           a.decoupled == 0,
	   "Adam defaults: 0.9, 0.999, 1e-8, no decay, coupled");
}

static void test_sgd(void)
{
	bnn_sgd_params p = bnn_sgd_defaults();
	float w[3], buf[3];

	/* Plain, lr 0.1: w - 0.1 g = (0.95, -2.1, 0.7), then again with the
	 * same g: (0.9, -2.2, 0.9).  No buffer: buf may be NULL. */
	p.momentum = 0;
	copy3(w, w0);
	bnn_sgd_step(3, w, g1, NULL, 0.1f, 1, &p);
	is_vec3(w, 0.95, -2.1, 0.7, "plain SGD step 1");
	bnn_sgd_step(3, w, g1, NULL, 0.1f, 2, &p);
	is_vec3(w, 0.9, -2.2, 0.9, "plain SGD step 2");

	/* Weight decay 0.1: d = g + 0.1 w = (0.6, 0.8, -1.95);
	 * w - 0.1 d = (0.94, -2.08, 0.695). */
	p.weight_decay = 0.1f;
	copy3(w, w0);
	bnn_sgd_step(3, w, g1, NULL, 0.1f, 1, &p);
	is_vec3(w, 0.94, -2.08, 0.695, "SGD with weight decay");

	/* Momentum 0.9.  Step 1: b = g, w - 0.1 b = (0.95, -2.1, 0.7); the
	 * buffer held garbage, which the first step ignores.  Step 2:
	 * b = 0.9 g + g = (0.95, 1.9, -3.8);
	 * w - 0.1 b = (0.855, -2.29, 1.08). */
	p = bnn_sgd_defaults();
	copy3(w, w0);
	buf[0] = buf[1] = buf[2] = 7.0f;
	bnn_sgd_step(3, w, g1, buf, 0.1f, 1, &p);
	is_vec3(buf, 0.5, 1, -2, "momentum step 1: buffer is g");
	is_vec3(w, 0.95, -2.1, 0.7, "momentum step 1");
	bnn_sgd_step(3, w, g1, buf, 0.1f, 2, &p);
	is_vec3(buf, 0.95, 1.9, -3.8, "momentum step 2: buffer 0.9 b + g");
	is_vec3(w, 0.855, -2.29, 1.08, "momentum step 2");

	/* Nesterov 0.9.  Step 1: b = g, w - 0.1 (g + 0.9 b) = w - 0.19 g =
	 * (0.905, -2.19, 0.88).  Step 2: b = 1.9 g, w - 0.1 (g + 0.9 * 1.9 g)
	 * = w - 0.271 g = (0.7695, -2.461, 1.422). */
	p.nesterov = 1;
	copy3(w, w0);
	bnn_sgd_step(3, w, g1, buf, 0.1f, 1, &p);
	is_vec3(w, 0.905, -2.19, 0.88, "Nesterov step 1");
	bnn_sgd_step(3, w, g1, buf, 0.1f, 2, &p);
	is_vec3(buf, 0.95, 1.9, -3.8, "Nesterov step 2: buffer 0.9 b + g");
	is_vec3(w, 0.7695, -2.461, 1.422, "Nesterov step 2");

	/* Momentum 0.9 with weight decay 0.1.  Step 1: d = (0.6, 0.8, -1.95)
	 * = b, w1 = (0.94, -2.08, 0.695).  Step 2: d = g + 0.1 w1 =
	 * (0.594, 0.792, -1.9305); b = 0.9 (0.6, 0.8, -1.95) + d =
	 * (1.134, 1.512, -3.6855); w1 - 0.1 b = (0.8266, -2.2312, 1.06355). */
	p.nesterov = 0;
	p.weight_decay = 0.1f;
	copy3(w, w0);
	bnn_sgd_step(3, w, g1, buf, 0.1f, 1, &p);
	bnn_sgd_step(3, w, g1, buf, 0.1f, 2, &p);
	is_vec3(buf, 1.134, 1.512, -3.6855, "momentum + decay: buffer");
	is_vec3(w, 0.8266, -2.2312, 1.06355, "momentum + decay step 2");
}

static void test_adam(void)
{
	bnn_adam_params p = bnn_adam_defaults();
	float w[3], m[3] = { 0, 0, 0 }, v[3] = { 0, 0, 0 };
	float wl[3], ml[3] = { 0, 0, 0 }, vl[3] = { 0, 0, 0 }, gl[3];
	int i, same;

	/*
	 * Adam, lr 0.1.  t = 1: m = 0.1 g = (0.05, 0.1, -0.2), v = 0.001 g²
	 * = (0.00025, 0.001, 0.004); m̂ = g, v̂ = g², so the step is
	 * lr g / (|g| + 1e-8) = 0.1 sign(g) to 1e-8: w = (0.9, -2.1, 0.6).
	 */
	copy3(w, w0);
	adam_take(3, w, g1, m, v, 1, &p);
	is_vec3(m, 0.05, 0.1, -0.2, "Adam t=1: m");
	is_vec3(v, 0.00025, 0.001, 0.004, "Adam t=1: v");
	is_vec3(w, 0.9, -2.1, 0.6, "Adam t=1: w - lr g/(|g| + eps)");

	/*
	 * t = 2 with g2 = (1, 0, -1): m = 0.9 m + 0.1 g2 = (0.145, 0.09,
	 * -0.28); v = 0.999 v + 0.001 g2² = (0.00124975, 0.000999, 0.004996);
	 * m̂ = m / (1 - 0.81) = (0.763157895, 0.473684211, -1.473684211);
	 * √v̂ = √(v / (1 - 0.998001)) = (0.790688051, 0.706929894,
	 * 1.580901523); w - 0.1 m̂ / (√v̂ + 1e-8) =
	 * (0.9 - 0.096518199, -2.1 - 0.067005823, 0.6 + 0.093217963) =
	 * (0.803481801, -2.167005823, 0.693217963).
	 */
	adam_take(3, w, g2, m, v, 2, &p);
	is_vec3(m, 0.145, 0.09, -0.28, "Adam t=2: m");
	is_vec3(v, 0.00124975, 0.000999, 0.004996, "Adam t=2: v");
	is_vec3(w, 0.803481801, -2.167005823, 0.693217963, "Adam t=2: w");

	/*
	 * Adam with weight decay 0.1, coupled: the gradient used is
	 * g + 0.1 w = (0.6, 0.8, -1.95), so m = 0.1 (0.6, 0.8, -1.95) =
	 * (0.06, 0.08, -0.195) and the t = 1 step is still 0.1 sign.
	 */
	p.weight_decay = 0.1f;
	adam_restart(w, m, v);
	adam_take(3, w, g1, m, v, 1, &p);
	is_vec3(m, 0.06, 0.08, -0.195, "Adam L2 t=1: m sees g + 0.1 w");
	is_vec3(w, 0.9, -2.1, 0.6, "Adam L2 t=1: w");

	/* The same as Adam without decay fed g + λw by hand, at t = 2. */
	adam_take(3, w, g2, m, v, 2, &p);
	p.weight_decay = 0;
	copy3(wl, w0);
	for (i = 0; i < 3; i++)
		gl[i] = g1[i] + 0.1f * wl[i];
	adam_take(3, wl, gl, ml, vl, 1, &p);
	for (i = 0; i < 3; i++)
		gl[i] = g2[i] + 0.1f * wl[i];
	adam_take(3, wl, gl, ml, vl, 2, &p);
	for (same = 0, i = 0; i < 3; i++)
		same += fabsf(w[i] - wl[i]) <= 1e-6f && fabsf(m[i] - ml[i]) <= 1e-7f &&
		        fabsf(v[i] - vl[i]) <= 1e-7f;
	is_int(same, 3, "decoupled = 0 adds weight_decay * w to g");

	/*
	 * AdamW, weight decay 0.1: m and v as plain Adam; w ← w (1 - 0.01) -
	 * step.  t = 1: (0.99 - 0.1, -1.98 - 0.1, 0.495 + 0.1) =
	 * (0.89, -2.08, 0.595).  t = 2: 0.99 w - the Adam t=2 steps above:
	 * (0.8811 - 0.096518199, -2.0592 - 0.067005823, 0.58905 +
	 * 0.093217963) = (0.784581801, -2.126205823, 0.682267963).
	 */
	p.weight_decay = 0.1f;
	p.decoupled = 1;
	adam_restart(w, m, v);
	adam_take(3, w, g1, m, v, 1, &p);
	is_vec3(m, 0.05, 0.1, -0.2, "AdamW t=1: m sees g alone");
	is_vec3(w, 0.89, -2.08, 0.595, "AdamW t=1: w");
	adam_take(3, w, g2, m, v, 2, &p);
	is_vec3(w, 0.784581801, -2.126205823, 0.682267963, "AdamW t=2: w");

	/* step 0 counts as t = 1: the same sign step. */
	p = bnn_adam_defaults();
	adam_restart(w, m, v);
	adam_take(3, w, g1, m, v, 0, &p);
	is_vec3(w, 0.9, -2.1, 0.6, "Adam step 0 is taken as t=1");

	/* A parameter whose gradient has always been 0: m = v = 0, so the
	 * step is 0/(0 + eps) = 0, with the default eps. */
	w[0] = 3.0f;
	m[0] = v[0] = 0;
	adam_take(1, w, g2 + 1, m, v, 1, &p);
	is_float(w[0], 3.0, 0, "Adam with g = 0 leaves w alone");
}

/* The chunked loops: 19 elements (two chunks of 8 and a tail of 3), the
 * pattern of w0, g1 repeated; element i must match the 3-element result
 * for i % 3. */
static void test_long_vectors(void)
{
	enum {
		N = 19
	};
	bnn_sgd_params sp = bnn_sgd_defaults();
	bnn_adam_params ap = bnn_adam_defaults();
	float w[N], g[N], a[N], b[N], w3[3], a3[3], b3[3];
	int i, t, kind, same;
	static const char *const name[] = { "plain SGD", "momentum SGD", "Nesterov SGD", "Adam",
		                            "AdamW" };

	for (kind = 0; kind < 5; kind++) {
		for (i = 0; i < N; i++) {
			w[i] = w0[i % 3];
			g[i] = g1[i % 3];
			a[i] = b[i] = 0;
		}
		copy3(w3, w0);
		a3[0] = a3[1] = a3[2] = b3[0] = b3[1] = b3[2] = 0;
		sp.momentum = kind == 0 ? 0.0f : 0.9f;
		sp.nesterov = kind == 2;
		sp.weight_decay = 0.05f;
		ap.weight_decay = 0.05f;
		ap.decoupled = kind == 4;
		for (t = 1; t <= 3; t++) {
			if (kind < 3) {
				bnn_sgd_step(N, w, g, a, 0.1f, t, &sp);
				bnn_sgd_step(3, w3, g1, a3, 0.1f, t, &sp);
			} else {
				adam_take(N, w, g, a, b, t, &ap);
				adam_take(3, w3, g1, a3, b3, t, &ap);
			}
		}
		for (same = 0, i = 0; i < N; i++)
			same += fabsf(w[i] - w3[i % 3]) <= 1e-6f;
		is_int(same, N, "%s on 19 elements matches 3 elements", name[kind]);
	}
}

static void test_clip(void)
{
	float g[20];
	double norm;
	int i, ok20;

	/* (3, 4) has norm 5; clipped to 1 it is (0.6, 0.8). */
	g[0] = 3;
	g[1] = 4;
	norm = bnn_clip_grad_norm(2, g, 1.0);
	is_float(norm, 5, 0, "clip returns the norm before clipping");
	is_float(g[0], 0.6, 1e-7, "clip (3, 4) to 1: 0.6");
	is_float(g[1], 0.8, 1e-7, "clip (3, 4) to 1: 0.8");

	g[0] = 3;
	g[1] = 4;
	norm = bnn_clip_grad_norm(2, g, 10.0);
	ok(norm == 5 && g[0] == 3 && g[1] == 4, "norm within max: no change");
	norm = bnn_clip_grad_norm(2, g, 5.0);
	ok(norm == 5 && g[0] == 3 && g[1] == 4, "norm equal to max: no change");
	norm = bnn_clip_grad_norm(2, g, 0.0);
	ok(norm == 5 && g[0] == 3 && g[1] == 4, "max_norm 0: no change");
	norm = bnn_clip_grad_norm(2, g, -1.0);
	ok(norm == 5 && g[0] == 3 && g[1] == 4, "max_norm < 0: no change");
	is_float(bnn_clip_grad_norm(0, g, 1.0), 0, 0, "n = 0: norm 0");

	/* Twenty ones: norm √20 = 4.4721360; clipped to 2 each is
	 * 2/√20 = 0.4472136 (chunks and tail). */
	for (i = 0; i < 20; i++)
		g[i] = 1;
	norm = bnn_clip_grad_norm(20, g, 2.0);
	is_float(norm, sqrt(20.0), 1e-12, "norm of twenty ones is sqrt 20");
	for (ok20 = 0, i = 0; i < 20; i++)
		ok20 += fabs(g[i] - 0.4472135955) < 1e-7;
	is_int(ok20, 20, "twenty ones clipped to norm 2: 0.4472136 each");

	/* A non-finite norm leaves g alone. */
	g[0] = INFINITY;
	g[1] = 1;
	norm = bnn_clip_grad_norm(2, g, 1.0);
	ok(isinf(norm) && isinf(g[0]) && g[1] == 1, "infinite norm: returned, g unchanged");
}

static void test_schedule(void)
{
	bnn_schedule s = { 0 };

	s.kind = BNN_SCHEDULE_CONSTANT;
	s.lr = 0.1;
	is_float(bnn_schedule_lr(&s, 0.5), 0.1, 0, "constant at t = 0.5");
	is_float(bnn_schedule_lr(&s, 30), 0.1, 0, "constant at t = 30");
	is_float(bnn_schedule_lr(&s, -1), 0.1, 0, "constant at t = -1");

	/* Step, lr 1, gamma 0.1, milestones {2, 4}: k counts m < t. */
	s.kind = BNN_SCHEDULE_STEP;
	s.lr = 1;
	s.gamma = 0.1;
	s.nmilestones = 2;
	s.milestones[0] = 2;
	s.milestones[1] = 4;
	is_float(bnn_schedule_lr(&s, 1), 1, 0, "step at t = 1: k = 0");
	is_float(bnn_schedule_lr(&s, 2), 1, 0, "step at t = 2: k = 0");
	is_float(bnn_schedule_lr(&s, 2.5), 0.1, 1e-15, "step at 2.5: k = 1");
	is_float(bnn_schedule_lr(&s, 4), 0.1, 1e-15, "step at t = 4: k = 1");
	is_float(bnn_schedule_lr(&s, 4.5), 0.01, 1e-15, "step at 4.5: k = 2");
	/* Warm-up 1: at t = 0.5 the rate is 1 * 0.5 / 1. */
	s.warmup = 1;
	is_float(bnn_schedule_lr(&s, 0.5), 0.5, 1e-15, "step warm-up t = 0.5");
	is_float(bnn_schedule_lr(&s, 0), 0, 0, "warm-up at t = 0 is 0");
	is_float(bnn_schedule_lr(&s, -2), 0, 0, "warm-up at t < 0 is 0");

	/* Cosine, lr 1, lr_min 0.1, warm-up 2, total 10: u = (t - 2) / 8. */
	s.kind = BNN_SCHEDULE_COSINE;
	s.lr_min = 0.1;
	s.warmup = 2;
	s.total = 10;
	/* t = 1 inside the warm-up: u clamps to 0, base 1; 1 * 1/2. */
	is_float(bnn_schedule_lr(&s, 1), 0.5, 1e-15, "cosine warm-up t = 1");
	is_float(bnn_schedule_lr(&s, 2), 1, 1e-15, "cosine start t = 2: lr");
	/* t = 4: u = 1/4, 0.1 + 0.9 (1 + cos(π/4)) / 2 = 0.868198052. */
	is_float(bnn_schedule_lr(&s, 4), 0.8681980515, 1e-9, "cosine t = 4");
	/* t = 6: u = 1/2, 0.1 + 0.9 / 2 = 0.55. */
	is_float(bnn_schedule_lr(&s, 6), 0.55, 1e-12, "cosine mid t = 6");
	is_float(bnn_schedule_lr(&s, 10), 0.1, 1e-15, "cosine end t = 10");
	is_float(bnn_schedule_lr(&s, 12), 0.1, 1e-15, "cosine after the end");

	/* No warm-up: u = t / 10; t = 5 is the middle. */
	s.warmup = 0;
	is_float(bnn_schedule_lr(&s, 0), 1, 1e-15, "cosine t = 0 no warm-up");
	is_float(bnn_schedule_lr(&s, 5), 0.55, 1e-12, "cosine t = 5 no warm-up");

	/* total == warmup == 2: no annealing phase.  t = 1: warm-up of lr,
	 * 0.5; t = 2: u = 0, lr; after: u = 1, lr_min.  No division by 0. */
	s.warmup = 2;
	s.total = 2;
	is_float(bnn_schedule_lr(&s, 1), 0.5, 1e-15, "total = warmup: t = 1");
	is_float(bnn_schedule_lr(&s, 2), 1, 1e-15, "total = warmup: t = 2");
	is_float(bnn_schedule_lr(&s, 2.5), 0.1, 1e-15, "total = warmup: after it, lr_min");
	/* total < warmup: the same rule; t = 2.5 is inside the warm-up. */
	s.warmup = 3;
	is_float(bnn_schedule_lr(&s, 2.5), 2.5 / 3, 1e-15, "total < warmup: t = 2.5 warms up");
	is_float(bnn_schedule_lr(&s, 4), 0.1, 1e-15, "total < warmup: after it, lr_min");
}

/* bnn_bias_correction() remembers its last four (β, t): whatever the
 * order of the calls, hits, misses and evictions give 1 - pow(β, t) to
 * the bit. */
static void test_bias_correction(void)
{
	static const double betas[5] = { 0.9, 0.999, 0.99999, 0.5, 0.0 };
	int i, bad = 0;

	for (i = 0; i < 200; i++) {
		double beta = betas[(i * 7 + i / 3) % 5], t = 1 + (i / 10) % 6;

		bad += bnn_bias_correction(beta, t) != 1.0 - pow(beta, t);
	}
	is_int(bad, 0,
	       "bias correction: 200 calls over 5 betas and 6 steps give 1 - beta^t exactly");
}

/* Parameters and moments below 1e-30 in magnitude are written as 0
 * (runtime/optim/flush_tiny.h), those at or above it kept.  No gradient;
 * elements 0 and 1 a weight alone, 2 and 3 moments alone (their steps,
 * about lr m̂ / ε, move w = 1 by less than 1e-20). */
static void test_flush_tiny(void)
{
	bnn_adam_params ap = bnn_adam_defaults();
	bnn_sgd_params sp = bnn_sgd_defaults();
	const float zero[4] = { 0, 0, 0, 0 };
	float w[4] = { 5e-31f, -2e-30f, 1, 1 }, m[4] = { 0, 0, 5e-31f, -3e-30f };
	float v[4] = { 0, 0, 1e-31f, 4e-30f }, buf[4] = { 0, 0, 5e-31f, 2e-30f };

	/* Adam at t = 5: m = 0.9 m, v = 0.999 v. */
	adam_take(4, w, zero, m, v, 5, &ap);
	ok(w[0] == 0, "Adam: a weight of 5e-31 is written as 0");
	is_float(w[1], -2e-30, 1e-36, "Adam: a weight of -2e-30 stays");
	ok(m[2] == 0 && v[2] == 0, "Adam: moments of 4.5e-31 and 9.99e-32 are written as 0");
	is_float(m[3], -2.7e-30, 1e-36, "Adam: a first moment of -2.7e-30 stays");
	is_float(v[3], 3.996e-30, 1e-36, "Adam: a second moment of 3.996e-30 stays");
	/* SGD with momentum 0.9 at step 2: buf = 0.9 buf. */
	w[0] = 5e-31f;
	w[1] = -2e-30f;
	bnn_sgd_step(4, w, zero, buf, 0.1f, 2, &sp);
	ok(w[0] == 0, "SGD: a weight of 5e-31 is written as 0");
	is_float(w[1], -2e-30, 1e-36, "SGD: a weight of -2e-30 stays");
	ok(buf[2] == 0, "SGD: a momentum of 4.5e-31 is written as 0");
	is_float(buf[3], 1.8e-30, 1e-36, "SGD: a momentum of 1.8e-30 stays");
}

int main(void)
{
	test_defaults();
	test_sgd();
	test_adam();
	test_long_vectors();
	test_clip();
	test_schedule();
	test_bias_correction();
	test_flush_tiny();
	return tap_done();
}
