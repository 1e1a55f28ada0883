/*
 * bandit.c: Thompson sampling with BADAM on a contextual bandit, after the
 * BADAM paper's bandit experiments (Kessler et al., section 4 and appendix
 * D.3, which follow the protocol of Riquelme et al., "Deep Bayesian
 * Bandits Showdown", ICLR 2018).  `make bandit` runs it as
 * `examples/out/bandit --out examples/out/bandit` (docs/examples.md).
 *
 *   bandit [--rounds T] [--runs R] [--delta D] [--seed S]
 *          [--train-every F] [--steps K] [--batch B] [--optimizer NAME]
 *          [--set NAME=VALUE ...] [--badam-n rounds-batch|rounds] [--out PREFIX]
 *
 * The problem: Riquelme et al.'s wheel bandit.  Each round a context x is
 * drawn uniformly from the unit disc and the agent pulls one of 5 arms.
 * Arm 0 pays 1.2; arms 1-4 pay 1.0, except that when |x| > D one of them,
 * the arm of x's quadrant, pays 50 instead.  Rewards are those means plus
 * N(0, 0.01²) noise.  With D = 0.7 (the default), 51% of the contexts
 * have a 50 to find, but an agent that has not yet seen it is best off
 * with arm 0 everywhere: exploitation alone gets stuck there.
 *
 * The agents, run on the same contexts and reward noise:
 *   thompson  each round draws one network θ ~ N(μ, σ²) from the
 *             posterior of the model compiled in (examples/bandit.bnn,
 *             trained with --optimizer, BADAM by default) and pulls the
 *             arm with the highest predicted reward under θ;
 *   greedy    the same model and training, but predicts at the mean μ;
 *   uniform   pulls an arm uniformly at random.
 * As in the paper, each arm is first pulled 3 times in turn; then every F
 * rounds (default 20) the model is trained on all the (context, arm,
 * reward) triples seen so far, for about K minibatches (default 50) of B
 * (default 512) through bnn_train(): whole epochs over the data, as many
 * as make at least K steps.  N in BADAM's posterior σ = 1/√(N·√v̂ + δ) is
 * then, as the paper sets it for bandits, the number of rounds so far
 * times B (--badam-n rounds-batch, the default); --badam-n rounds uses the
 * number of rounds, the data size bnn_train() saw, which leaves σ so wide
 * that the sampled networks pick arms nearly at random (docs/examples.md
 * has the numbers).  Either way the posterior narrows as data come in.
 * Training continues from the previous state (parameters and Adam's
 * moments).  The rewards are standardised (by the mean and standard
 * deviation of those seen so far) before training; the agents compare
 * arms on that scale, which is a monotone map of the reward's.
 *
 * Regret is measured against the expected rewards (no noise): at round t,
 * max_a E[r | x_t, a] − E[r | x_t, a_t].  The table on standard output
 * gives, per agent, the cumulative regret after T rounds (mean ± standard
 * deviation over R runs with seeds S, S+1, ...), the fraction of rounds
 * with the best arm, the cumulative reward divided by the optimal one (the
 * paper's Table 1 measure) and the seconds it took.  With --out, the table
 * also goes to PREFIX.csv and the mean cumulative regret per round to
 * PREFIX_regret.svg (data: PREFIX_regret.csv).
 *
 * Exit status: 0 success, 1 a failure (training, a file), 2 a usage error.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime; the Makefile's EXAMPLE_CC sets none */
#endif
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bnn.h"

extern const bnn_model bandit_model;

#define BD_OK    0
#define BD_FAIL  1
#define BD_USAGE 2

#define BD_ARMS          5
#define BD_CONTEXT       2
#define BD_INPUTS        (BD_CONTEXT + BD_ARMS)
#define BD_INITIAL_PULLS 3    /* each arm pulled this many times first (D.3) */
#define BD_NOISE         0.01 /* reward noise standard deviation */
#define BD_MAX_SETS      32

/* The wheel bandit's mean rewards (Riquelme et al., section 4). */
#define BD_MU_SAFE  1.2  /* arm 0, everywhere */
#define BD_MU_SMALL 1.0  /* arms 1-4 */
#define BD_MU_LARGE 50.0 /* the arm of x's quadrant, when |x| > D */

enum bd_kind {
	BD_THOMPSON,
	BD_GREEDY,
	BD_UNIFORM,
	BD_AGENTS
};
static const char *const bd_names[BD_AGENTS] = { "thompson", "greedy", "uniform" };

static const char *bd_prog = "bandit";

/* The experiment's settings. */
struct bd_config {
	long rounds;             /* T */
	int runs;                /* R */
	double delta;            /* D, the wheel's radius */
	uint64_t seed;           /* S */
	long train_every;        /* F */
	long steps;              /* K, minibatches per training */
	long batch;              /* B */
	bnn_train_options train; /* --optimizer, --set */
	int n_rounds_batch;      /* BADAM's N: 1 rounds × batch (D.3), 0 rounds */
	const char *out;         /* PREFIX or NULL */
};

/* One run of one agent. */
struct bd_agent {
	int kind;            /* enum bd_kind */
	bnn_state st;        /* its model (thompson, greedy) */
	float *x, *y, *ystd; /* the data so far: rounds × BD_INPUTS, rounds, rounds */
	long n;              /* rounds played */
	long trainings;      /* calls of bnn_train so far */
	bnn_rng rng;         /* its own draws: θ samples, uniform arms */
	float *theta, *ws;   /* a posterior sample; the pass's workspace */
	double regret, reward, best_reward;
	long optimal; /* rounds with a best arm */
};

static void bd_help(void)
{
	printf("Usage: %s [--rounds T] [--runs R] [--delta D] [--seed S] [--train-every F]\n"
	       "              [--steps K] [--batch B] [--optimizer NAME] [--set NAME=VALUE ...]\n"
	       "              [--badam-n rounds-batch|rounds] [--out PREFIX]\n"
	       "Thompson sampling with a Bayesian neural network (model '%s', trained by\n"
	       "--optimizer, default badam) against greedy and uniform agents on the wheel\n"
	       "bandit of Riquelme et al. (5 arms, contexts in the unit disc, radius D).\n"
	       "Defaults: T 2000, R 5, D 0.7, S 1, F 20, K 50, B 512.  --set passes training\n"
	       "options (lr, beta2, delta, clip, ...; docs/training.md).  Prints a table of\n"
	       "cumulative regrets; with --out also PREFIX.csv and PREFIX_regret.svg/.csv.\n"
	       "--badam-n: N of BADAM's posterior, rounds x B (the paper's, default) or rounds.\n",
	       bd_prog, bandit_model.name);
}

static int bd_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bd_usage(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", bd_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", bd_prog);
	return BD_USAGE;
}

static double bd_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- the wheel bandit ---------------------------------------------------- */

/* A context uniform in the unit disc (by rejection from the square). */
static void bd_context(bnn_rng *rng, float *x)
{
	double a, b;

	do {
		a = 2 * bnn_rng_uniform(rng) - 1;
		b = 2 * bnn_rng_uniform(rng) - 1;
	} while (a * a + b * b >= 1);
	x[0] = (float)a;
	x[1] = (float)b;
}

/* The expected reward of each arm at context x. */
static void bd_means(const float *x, double delta, double *mu)
{
	int a;

	mu[0] = BD_MU_SAFE;
	for (a = 1; a < BD_ARMS; a++)
		mu[a] = BD_MU_SMALL;
	if ((double)x[0] * x[0] + (double)x[1] * x[1] > delta * delta)
		mu[x[0] > 0 ? (x[1] > 0 ? 1 : 2) : (x[1] > 0 ? 3 : 4)] = BD_MU_LARGE;
}

/* ---- agents ---------------------------------------------------------------- */

static int bd_agent_init(struct bd_agent *ag, int kind, const struct bd_config *cfg, uint64_t seed,
                         bnn_err *err)
{
	const bnn_model *m = &bandit_model;
	int rc;

	memset(ag, 0, sizeof *ag);
	ag->kind = kind;
	bnn_rng_seed(&ag->rng, seed ^ (0x9e3779b97f4a7c15ULL * (uint64_t)(kind + 1)));
	ag->x = malloc((size_t)(cfg->rounds * BD_INPUTS) * sizeof *ag->x);
	ag->y = malloc((size_t)cfg->rounds * sizeof *ag->y);
	ag->ystd = malloc((size_t)cfg->rounds * sizeof *ag->ystd);
	ag->theta = malloc((size_t)m->nparams * sizeof *ag->theta);
	ag->ws = malloc(m->workspace_floats(BD_ARMS) * sizeof *ag->ws + sizeof *ag->ws);
	if (!ag->x || !ag->y || !ag->ystd || !ag->theta || !ag->ws)
		return bnn_fail(err, BNN_ENOMEM, "out of memory for an agent");
	if (kind == BD_UNIFORM)
		return BNN_OK;
	if ((rc = bnn_state_init(&ag->st, m, seed, err)))
		return rc;
	return BNN_OK;
}

static void bd_agent_free(struct bd_agent *ag)
{
	if (ag->st.model)
		bnn_state_free(&ag->st);
	free(ag->x);
	free(ag->y);
	free(ag->ystd);
	free(ag->theta);
	free(ag->ws);
}

/* The arm the agent pulls at context x. */
static int bd_choose(struct bd_agent *ag, const float *x)
{
	const bnn_model *m = &bandit_model;
	float in[BD_ARMS * BD_INPUTS], out[BD_ARMS];
	const float *w = ag->st.params;
	bnn_pass p;
	int a, best = 0;

	if (ag->n < BD_ARMS * BD_INITIAL_PULLS) /* D.3: each arm 3 times first */
		return (int)(ag->n % BD_ARMS);
	if (ag->kind == BD_UNIFORM)
		return (int)bnn_rng_below(&ag->rng, BD_ARMS);
	if (ag->kind == BD_THOMPSON && ag->st.sigma) { /* θ ~ q(θ): one network per round */
		bnn_posterior_sample(m->nparams, ag->st.params, ag->st.sigma, NULL, ag->theta,
		                     &ag->rng);
		w = ag->theta;
	}
	memset(in, 0, sizeof in);
	for (a = 0; a < BD_ARMS; a++) {
		in[a * BD_INPUTS] = x[0];
		in[a * BD_INPUTS + 1] = x[1];
		in[a * BD_INPUTS + BD_CONTEXT + a] = 1;
	}
	memset(&p, 0, sizeof p);
	p.w = w;
	p.x = in;
	p.batch = BD_ARMS;
	p.ws = ag->ws;
	p.out = out;
	m->pass(&p);
	for (a = 1; a < BD_ARMS; a++)
		if (out[a] > out[best])
			best = a;
	return best;
}

/*
 * BADAM's σ = 1/√(N·√v̂ + δ) again, with N = rounds × batch size as the
 * paper's bandit experiments set it (appendix D.3: "the number of points
 * seen N is set dynamically as t × batch-size"), or N = rounds
 * (--badam-n rounds), rather than bnn_train()'s default (the data size
 * times the largest fan-in).  δ is each layer's prior precision, or --set delta.
 */
static void bd_badam_sigma(struct bd_agent *ag, const bnn_train_options *o, double n_data)
{
	const bnn_model *m = &bandit_model;
	int i;

	for (i = 0; i < m->ntensors; i++) {
		const bnn_tensor *t = &m->tensors[i];
		const bnn_layer *l = t->layer >= 0 ? &m->layers[t->layer] : NULL;
		if (!l || !(l->caps & BNN_CAP_SIGMA))
			continue;
		bnn_badam_sigma(t->size, ag->st.opt[1] + t->offset, ag->st.step, o->adam.beta2,
		                n_data, isfinite(o->delta) ? o->delta : l->prior_precision,
		                ag->st.sigma + t->offset);
	}
}

/* Trains the agent's model on its data so far (rewards standardised). */
static int bd_train(struct bd_agent *ag, const struct bd_config *cfg, uint64_t seed, bnn_err *err)
{
	bnn_train_options o = cfg->train;
	bnn_dataset ds;
	double mean = 0, var = 0, sd;
	long i, per_epoch;
	int rc;

	for (i = 0; i < ag->n; i++)
		mean += ag->y[i];
	mean /= (double)ag->n;
	for (i = 0; i < ag->n; i++)
		var += (ag->y[i] - mean) * (ag->y[i] - mean);
	sd = sqrt(var / (double)ag->n);
	if (!(sd > 1e-6))
		sd = 1;
	for (i = 0; i < ag->n; i++)
		ag->ystd[i] = (float)((ag->y[i] - mean) / sd);

	memset(&ds, 0, sizeof ds);
	ds.n = ag->n;
	ds.features = BD_INPUTS;
	ds.rank = 1;
	ds.shape[0] = BD_INPUTS;
	ds.targets = 1;
	ds.x = ag->x;
	ds.y = ag->ystd;
	/* whole epochs, at least cfg->steps minibatches in all */
	per_epoch = (ag->n + cfg->batch - 1) / cfg->batch;
	o.batch = cfg->batch;
	o.epochs = (cfg->steps + per_epoch - 1) / per_epoch;
	o.seed = seed + (uint64_t)ag->trainings++;
	o.verbose = 0;
	if ((rc = bnn_train(&ag->st, &(bnn_train_io){ .train = &ds }, &o, err)))
		return rc;
	if (o.optimizer == BNN_OPT_BADAM) /* N = rounds × B, or rounds */
		bd_badam_sigma(ag, &o,
		               (double)ag->n * (cfg->n_rounds_batch ? (double)cfg->batch : 1.0));
	return BNN_OK;
}

/* ---- the experiment ---------------------------------------------------------- */

/* Results over the runs, per agent. */
struct bd_result {
	double regret[BD_AGENTS], regret_sq[BD_AGENTS]; /* sums over runs */
	double optimal[BD_AGENTS], ratio[BD_AGENTS], seconds[BD_AGENTS];
	double *curve[BD_AGENTS]; /* Σ over runs of the cumulative regret per round */
};

/* One run: every agent on the same contexts and noise (seed). */
static int bd_run(const struct bd_config *cfg, uint64_t seed, struct bd_result *res, bnn_err *err)
{
	float *ctx = malloc((size_t)(cfg->rounds * BD_CONTEXT) * sizeof *ctx);
	float *noise = malloc((size_t)(cfg->rounds * BD_ARMS) * sizeof *noise);
	struct bd_agent ag;
	bnn_rng env;
	long t;
	int k, rc = BNN_OK;

	memset(&ag, 0, sizeof ag);
	if (!ctx || !noise) {
		rc = bnn_fail(err, BNN_ENOMEM, "out of memory for %ld rounds", cfg->rounds);
		goto done;
	}
	bnn_rng_seed(&env, seed);
	for (t = 0; t < cfg->rounds; t++)
		bd_context(&env, ctx + t * BD_CONTEXT);
	bnn_rng_normal(&env, noise, (size_t)(cfg->rounds * BD_ARMS));

	for (k = 0; k < BD_AGENTS; k++) {
		double t0 = bd_now();
		if ((rc = bd_agent_init(&ag, k, cfg, seed, err)))
			goto done;
		for (t = 0; t < cfg->rounds; t++) {
			const float *x = ctx + t * BD_CONTEXT;
			double mu[BD_ARMS], best;
			int a = bd_choose(&ag, x), j;
			bd_means(x, cfg->delta, mu);
			for (best = mu[0], j = 1; j < BD_ARMS; j++)
				best = mu[j] > best ? mu[j] : best;
			ag.regret += best - mu[a];
			ag.optimal += mu[a] == best;
			ag.best_reward += best;
			ag.y[ag.n] = (float)(mu[a] + BD_NOISE * noise[t * BD_ARMS + a]);
			ag.reward += ag.y[ag.n];
			memset(ag.x + ag.n * BD_INPUTS, 0, BD_INPUTS * sizeof *ag.x);
			ag.x[ag.n * BD_INPUTS] = x[0];
			ag.x[ag.n * BD_INPUTS + 1] = x[1];
			ag.x[ag.n * BD_INPUTS + BD_CONTEXT + a] = 1;
			ag.n++;
			res->curve[k][t] += ag.regret;
			if (k != BD_UNIFORM && ag.n >= BD_ARMS * BD_INITIAL_PULLS &&
			    (ag.n - BD_ARMS * BD_INITIAL_PULLS) % cfg->train_every == 0 &&
			    (rc = bd_train(&ag, cfg, seed * 1000003u, err)))
				goto done;
		}
		res->regret[k] += ag.regret;
		res->regret_sq[k] += ag.regret * ag.regret;
		res->optimal[k] += (double)ag.optimal / (double)cfg->rounds;
		res->ratio[k] += ag.reward / ag.best_reward;
		res->seconds[k] += bd_now() - t0;
		fprintf(stderr, "%s: run seed %llu: %-8s cumulative regret %.1f, best arm %.1f%%\n",
		        bd_prog, (unsigned long long)seed, bd_names[k], ag.regret,
		        100.0 * (double)ag.optimal / (double)cfg->rounds);
		bd_agent_free(&ag);
		memset(&ag, 0, sizeof ag);
	}
done:
	bd_agent_free(&ag);
	free(ctx);
	free(noise);
	return rc;
}

/* Prints the table and writes the files of --out. */
static int bd_report(const struct bd_config *cfg, const struct bd_result *res, bnn_err *err)
{
	double r = cfg->runs, mean[BD_AGENTS], sd[BD_AGENTS];
	FILE *fp = NULL;
	char *path = NULL;
	int k, rc = BNN_OK;

	for (k = 0; k < BD_AGENTS; k++) {
		mean[k] = res->regret[k] / r;
		sd[k] = cfg->runs > 1 ? sqrt(fmax(res->regret_sq[k] / r - mean[k] * mean[k], 0) *
		                             r / (r - 1))
		                      : 0;
	}
	printf("wheel bandit, delta %g, %ld rounds, %d run%s, model '%s' trained with %s\n",
	       cfg->delta, cfg->rounds, cfg->runs, cfg->runs > 1 ? "s" : "", bandit_model.name,
	       bnn_optimizer_name(cfg->train.optimizer));
	printf("%-9s %22s %10s %15s %9s\n", "agent", "cumulative regret", "best arm",
	       "reward/optimal", "seconds");
	for (k = 0; k < BD_AGENTS; k++)
		printf("%-9s %13.1f ± %6.1f %9.1f%% %15.3f %9.1f\n", bd_names[k], mean[k], sd[k],
		       100 * res->optimal[k] / r, res->ratio[k] / r, res->seconds[k] / r);
	if (!cfg->out)
		return BNN_OK;

	path = malloc(strlen(cfg->out) + 16);
	if (!path)
		return bnn_fail(err, BNN_ENOMEM, "out of memory");
	sprintf(path, "%s.csv", cfg->out);
	if (!(fp = fopen(path, "w"))) {
		rc = bnn_fail(err, BNN_EIO, "cannot write %s: %s", path, strerror(errno));
		goto done;
	}
	fprintf(fp, "agent,regret_mean,regret_sd,best_arm_fraction,reward_ratio,seconds\n");
	for (k = 0; k < BD_AGENTS; k++)
		fprintf(fp, "%s,%.9g,%.9g,%.9g,%.9g,%.9g\n", bd_names[k], mean[k], sd[k],
		        res->optimal[k] / r, res->ratio[k] / r, res->seconds[k] / r);
	if (fclose(fp) != 0) {
		rc = bnn_fail(err, BNN_EIO, "cannot write %s: %s", path, strerror(errno));
		goto done;
	}
	{
		bnn_plot_curve c[BD_AGENTS];
		double *x = malloc((size_t)cfg->rounds * sizeof *x);
		double *y = malloc((size_t)(cfg->rounds * BD_AGENTS) * sizeof *y);
		char *csv = malloc(strlen(cfg->out) + 16);
		char title[96];
		bnn_plot_curves_options text;
		long t;
		if (!x || !y || !csv) {
			rc = bnn_fail(err, BNN_ENOMEM, "out of memory");
		} else {
			for (t = 0; t < cfg->rounds; t++)
				x[t] = (double)(t + 1);
			memset(c, 0, sizeof c);
			for (k = 0; k < BD_AGENTS; k++) {
				for (t = 0; t < cfg->rounds; t++)
					y[k * cfg->rounds + t] = res->curve[k][t] / r;
				c[k].name = bd_names[k];
				c[k].n = cfg->rounds;
				c[k].x = x;
				c[k].y = y + k * cfg->rounds;
				c[k].style = BNN_PLOT_LINE;
			}
			sprintf(path, "%s_regret.svg", cfg->out);
			sprintf(csv, "%s_regret.csv", cfg->out);
			snprintf(title, sizeof title, "Wheel bandit (delta %g): mean of %d run%s",
			         cfg->delta, cfg->runs, cfg->runs > 1 ? "s" : "");
			text.title = title;
			text.xlabel = "round";
			text.ylabel = "cumulative regret";
			rc = bnn_plot_curves(path, csv, c, BD_AGENTS, &text, err);
		}
		free(x);
		free(y);
		free(csv);
	}
done:
	free(path);
	return rc;
}

/* ---- the command line ---------------------------------------------------------- */

static int bd_long(const char *opt, const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || *end || errno == ERANGE || v < min || v > max)
		return bd_usage("%s: '%s' is not a whole number in [%ld, %ld]", opt, s, min, max);
	*out = v;
	return BD_OK;
}

int main(int argc, char **argv)
{
	struct bd_config cfg;
	struct bd_result res;
	const char *sets[BD_MAX_SETS];
	int nsets = 0, i, k, rc = BD_OK;
	long v;
	bnn_err err;

	memset(&cfg, 0, sizeof cfg);
	cfg.rounds = 2000;
	cfg.runs = 5;
	cfg.delta = 0.7;
	cfg.seed = 1;
	cfg.train_every = 20;
	cfg.steps = 50;
	cfg.batch = 512;
	cfg.n_rounds_batch = 1;
	cfg.train = bnn_train_defaults();
	cfg.train.optimizer = BNN_OPT_BADAM;
	/* Adam's constant rate, as measured in docs/examples.md (badam's
	 * default cosine would decay to 0 within every retraining) */
	cfg.train.schedule.kind = BNN_SCHEDULE_CONSTANT;
	cfg.train.threads = 1;
	for (i = 1; i < argc; i++) {
		const char *opt = argv[i], *val;
		if (strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0) {
			bd_help();
			return BD_OK;
		}
		if (i + 1 >= argc)
			return bd_usage("option '%s' needs a value", opt);
		val = argv[++i];
		if (strcmp(opt, "--rounds") == 0) {
			if ((rc = bd_long(opt, val, BD_ARMS * BD_INITIAL_PULLS + 1, 10000000,
			                  &cfg.rounds)))
				return rc;
		} else if (strcmp(opt, "--runs") == 0) {
			if ((rc = bd_long(opt, val, 1, 1000, &v)))
				return rc;
			cfg.runs = (int)v;
		} else if (strcmp(opt, "--seed") == 0) {
			if ((rc = bd_long(opt, val, 0, 1000000000, &v)))
				return rc;
			cfg.seed = (uint64_t)v;
		} else if (strcmp(opt, "--train-every") == 0) {
			if ((rc = bd_long(opt, val, 1, 1000000, &cfg.train_every)))
				return rc;
		} else if (strcmp(opt, "--steps") == 0) {
			if ((rc = bd_long(opt, val, 1, 1000000, &cfg.steps)))
				return rc;
		} else if (strcmp(opt, "--batch") == 0) {
			if ((rc = bd_long(opt, val, 1, 1000000, &cfg.batch)))
				return rc;
		} else if (strcmp(opt, "--delta") == 0) {
			char *end;
			cfg.delta = strtod(val, &end);
			if (end == val || *end || !(cfg.delta >= 0 && cfg.delta < 1))
				return bd_usage("--delta: '%s' is not a number in [0, 1)", val);
		} else if (strcmp(opt, "--optimizer") == 0) {
			if ((cfg.train.optimizer = bnn_optimizer_from_name(val)) < 0)
				return bd_usage("--optimizer: unknown optimizer '%s'", val);
		} else if (strcmp(opt, "--set") == 0) {
			if (nsets == BD_MAX_SETS)
				return bd_usage("at most %d --set options", BD_MAX_SETS);
			sets[nsets++] = val;
		} else if (strcmp(opt, "--badam-n") == 0) {
			if (strcmp(val, "rounds-batch") == 0)
				cfg.n_rounds_batch = 1;
			else if (strcmp(val, "rounds") == 0)
				cfg.n_rounds_batch = 0;
			else
				return bd_usage(
				        "--badam-n: '%s' is neither rounds-batch nor rounds", val);
		} else if (strcmp(opt, "--out") == 0) {
			cfg.out = val;
		} else {
			return bd_usage("unknown option '%s'", opt);
		}
	}
	/* --set after --optimizer, whatever their order on the command line */
	for (i = 0; i < nsets; i++) {
		const char *eq = strchr(sets[i], '=');
		char name[64];
		if (!eq || eq == sets[i] || (size_t)(eq - sets[i]) >= sizeof name)
			return bd_usage("--set takes NAME=VALUE, not '%s'", sets[i]);
		snprintf(name, sizeof name, "%.*s", (int)(eq - sets[i]), sets[i]);
		if (bnn_train_set(&cfg.train, name, eq + 1, &err))
			return bd_usage("--set %s: %s", sets[i], err.message);
	}
	bnn_set_threads(cfg.train.threads);

	memset(&res, 0, sizeof res);
	for (k = 0; k < BD_AGENTS; k++)
		if (!(res.curve[k] = calloc((size_t)cfg.rounds, sizeof *res.curve[k]))) {
			fprintf(stderr, "%s: out of memory\n", bd_prog);
			rc = BD_FAIL;
			goto done;
		}
	for (i = 0; i < cfg.runs; i++)
		if (bd_run(&cfg, cfg.seed + (uint64_t)i, &res, &err)) {
			fprintf(stderr, "%s: %s\n", bd_prog, err.message);
			rc = BD_FAIL;
			goto done;
		}
	if (bd_report(&cfg, &res, &err)) {
		fprintf(stderr, "%s: %s\n", bd_prog, err.message);
		rc = BD_FAIL;
	}
done:
	for (k = 0; k < BD_AGENTS; k++)
		free(res.curve[k]);
	return rc;
}
