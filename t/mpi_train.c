/*
 * mpi_train.c: data-parallel training through the C API, run by t/mpi.sh
 * under `mpirun -np N` (N = 2 and 3; built only with ./configure
 * --with-mpi).  Every rank trains the same model on the same data over a
 * communicator of the test's own (a duplicate of MPI_COMM_WORLD, passed
 * as bnn_train_io.comm); rank 0 prints TAP, each result agreed over the
 * ranks (a check fails if it fails on any rank).  Checks:
 *   - bnn_dist_rank and bnn_dist_size see the communicator;
 *   - for sgd, adam, vogn, ivon and bbb (with and without the local
 *     reparameterisation), the parameters (and σ) at the end are the same
 *     bits on every rank;
 *   - with a batchnorm layer (each process normalising by its own rows),
 *     the parameters and the running statistics (averaged over the
 *     processes at every epoch end) are the same bits on every rank;
 *   - sgd and adam (no noise) give the parameters of one process
 *     (MPI_COMM_SELF) with the same global batch, up to the order of the
 *     sums: |a − b| <= 1e-5 + 1e-4·|b| for every parameter;
 *   - one step of vogn and of ivon equals the N-sample estimator computed
 *     here by hand from the library's kernels: rank r's sample drawn from
 *     its own noise stream (the trainer's noise stream jumped 2r times),
 *     a pass over its rows of the minibatch, ĝ and ĥ the row-weighted
 *     means over the ranks, then one update (same tolerance on μ and σ);
 *   - an error on one rank only (its data does not fit the model) stops
 *     every rank with that rank's message.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"
#include "mpi_bn.h"
#include "mpi_mf.h"
#include "mpi_point.h"

#define N_EXAMPLES 60

static int rank, nranks, failed, count;
static MPI_Comm comm;

/* One TAP line from rank 0: passes when every rank passed. */
static void check(int pass, const char *what)
{
	int all = 0;

	MPI_Allreduce(&pass, &all, 1, MPI_INT, MPI_LAND, comm);
	count++;
	if (!all)
		failed++;
	if (rank == 0)
		printf("%sok %d - %s (np %d)\n", all ? "" : "not ", count, what, nranks);
}

/* y = 0.5 x0 − x1 + 0.3 x2 x3, x from sines: the same on every rank. */
static void make_data(bnn_dataset *ds)
{
	long i, j;

	memset(ds, 0, sizeof *ds);
	ds->n = N_EXAMPLES;
	ds->features = 4;
	ds->rank = 1;
	ds->shape[0] = 4;
	ds->targets = 1;
	ds->x = malloc(sizeof(float) * N_EXAMPLES * 4);
	ds->y = malloc(sizeof(float) * N_EXAMPLES);
	for (i = 0; i < N_EXAMPLES; i++) {
		float *x = ds->x + i * 4;
		for (j = 0; j < 4; j++)
			x[j] = (float)sin(0.37 * (double)i + 1.3 * (double)j + 0.1);
		ds->y[i] = 0.5f * x[0] - x[1] + 0.3f * x[2] * x[3];
	}
}

/* Whether a (n floats) holds the same bits on every rank. */
static int same_everywhere(const float *a, long n)
{
	float *lo = malloc(sizeof(float) * (size_t)n), *hi = malloc(sizeof(float) * (size_t)n);
	int same;

	MPI_Allreduce(a, lo, (int)n, MPI_FLOAT, MPI_MIN, comm);
	MPI_Allreduce(a, hi, (int)n, MPI_FLOAT, MPI_MAX, comm);
	same = memcmp(lo, a, sizeof(float) * (size_t)n) == 0 &&
	       memcmp(hi, a, sizeof(float) * (size_t)n) == 0;
	free(lo);
	free(hi);
	return same;
}

/* |a − b| <= 1e-5 + 1e-4·|b| everywhere; prints the worst on failure. */
static int close_to(const float *a, const float *b, long n, const char *what)
{
	long i, worst = -1;
	double excess = 0;

	for (i = 0; i < n; i++) {
		double d = fabs((double)a[i] - (double)b[i]) - (1e-5 + 1e-4 * fabs((double)b[i]));
		if (!(d <= excess)) {
			excess = isnan(d) ? INFINITY : d;
			worst = i;
		}
	}
	if (worst >= 0)
		printf("# rank %d, %s: parameter %ld is %.9g, expected %.9g\n", rank, what, worst,
		       (double)a[worst], (double)b[worst]);
	return worst < 0;
}

/* Trains a fresh state of m (seed 3) on ds over c; 0 or the error code. */
static int train(const bnn_model *m, const bnn_dataset *ds, bnn_train_options *o, MPI_Comm *c,
                 bnn_state *st, bnn_err *err)
{
	bnn_train_io io;

	memset(&io, 0, sizeof io);
	io.train = ds;
	io.comm = c;
	if (bnn_state_init(st, m, 3, err))
		return err->code;
	return bnn_train(st, &io, o, err);
}

static bnn_train_options options(const char *optimizer, long epochs, long batch)
{
	bnn_train_options o = bnn_train_defaults();
	bnn_err err;

	bnn_train_set(&o, "optimizer", optimizer, &err);
	o.schedule.kind = BNN_SCHEDULE_CONSTANT; /* the by-hand step uses the base rate */
	o.epochs = epochs;
	o.batch = batch;
	o.seed = 11;
	o.threads = 1;
	return o;
}

/* ---- the by-hand N-sample estimators of one vogn or ivon step ---------- */

/* The trainer's streams for seed s: the shuffle, and rank r's noise. */
static void streams(uint64_t seed, int r, bnn_rng *shuffle, bnn_rng *noise)
{
	int k;

	bnn_rng_seed(shuffle, seed);
	bnn_rng_jump(shuffle);
	*noise = *shuffle;
	bnn_rng_jump(noise);
	for (k = 0; k < 2 * r; k++)
		bnn_rng_jump(noise);
}

/* Rank r's rows of a minibatch of b: the first b mod N ranks take one more. */
static void rows_of(long b, int r, long *first, long *cnt)
{
	long q = b / nranks, extra = b % nranks;

	*cnt = q + (r < extra);
	*first = r * q + (r < extra ? r : extra);
}

/* A pass of m over the rows idx[first .. first + cnt) of ds at w. */
static void pass_rows(const bnn_model *m, const bnn_dataset *ds, const long *idx, long first,
                      long cnt, const float *w, float *grad, float *sqgrad)
{
	float *x = malloc(sizeof(float) * (size_t)(cnt * m->inputs));
	float *y = malloc(sizeof(float) * (size_t)cnt);
	float *ws = malloc(sizeof(float) * (m->workspace_floats(cnt) + 1));
	bnn_pass p;
	long j;

	for (j = 0; j < cnt; j++) {
		memcpy(x + j * m->inputs, ds->x + idx[first + j] * m->inputs,
		       sizeof(float) * (size_t)m->inputs);
		y[j] = ds->y[idx[first + j]];
	}
	memset(&p, 0, sizeof p);
	p.w = w;
	p.x = x;
	p.y = y;
	p.batch = cnt;
	p.ws = ws;
	p.grad = grad;
	p.sqgrad = sqgrad;
	p.train = 1;
	m->pass(&p);
	free(x);
	free(y);
	free(ws);
}

/* One step of vogn (natural = 'v') or ivon ('i') on the whole data set
 * as one minibatch, by hand; mu and sigma receive the result. */
static void by_hand(int natural, const bnn_dataset *ds, const bnn_train_options *o, float *mu,
                    float *sigma)
{
	const bnn_model *m = &mpi_mf_model;
	long n = m->nparams, B = ds->n, i, first, cnt;
	float *g = calloc((size_t)n, sizeof(float)), *h = calloc((size_t)n, sizeof(float));
	float *gr = malloc(sizeof(float) * (size_t)n), *hr = malloc(sizeof(float) * (size_t)n);
	float *theta = malloc(sizeof(float) * (size_t)n), *eps = malloc(sizeof(float) * (size_t)n);
	float *mom = calloc((size_t)n, sizeof(float)), *s = malloc(sizeof(float) * (size_t)n);
	long *idx = malloc(sizeof(long) * (size_t)B);
	bnn_rng shuffle, noise;
	bnn_state st;
	bnn_err err;
	bnn_vogn_params vp = bnn_vogn_defaults();
	bnn_ivon_params ip = bnn_ivon_defaults();
	int r;

	bnn_state_init(&st, m, 3, &err);
	memcpy(mu, st.params, sizeof(float) * (size_t)n);
	for (i = 0; i < B; i++)
		idx[i] = i;
	streams(o->seed, 0, &shuffle, &noise);
	bnn_rng_shuffle(&shuffle, idx, B);
	vp.beta1 = o->vogn.beta1;
	vp.beta2 = o->vogn.beta2;
	vp.tau = o->vogn.tau;
	vp.delta = o->delta;
	vp.n_data = o->vogn.rho * (double)B; /* Alg. 1 line 2: N ← ρN */
	ip.beta1 = o->ivon.beta1;
	ip.beta2 = o->ivon.beta2;
	ip.h0 = bnn_train_h0(o, (double)B); /* one step: a short run's h0 */
	ip.delta = o->delta;
	ip.ess = (double)B;
	if (natural == 'v') { /* s0: the mean squared gradients at μ, Alg. 1 line 1 */
		memset(s, 0, sizeof(float) * (size_t)n);
		for (r = 0; r < nranks; r++) {
			rows_of(B, r, &first, &cnt);
			pass_rows(m, ds, idx, first, cnt, mu, gr, hr);
			for (i = 0; i < n; i++)
				s[i] += (float)((double)cnt / (double)B) * hr[i];
		}
		bnn_vogn_sigma(n, s, sigma, &vp);
	} else {
		for (i = 0; i < n; i++)
			s[i] = (float)ip.h0;
		bnn_ivon_sigma(n, s, sigma, &ip);
	}
	for (r = 0; r < nranks; r++) { /* each rank's own sample, on its rows */
		float w;
		streams(o->seed, r, &shuffle, &noise);
		rows_of(B, r, &first, &cnt);
		w = (float)((double)cnt / (double)B);
		bnn_posterior_sample(n, mu, sigma, eps, theta, &noise);
		pass_rows(m, ds, idx, first, cnt, theta, gr, natural == 'v' ? hr : NULL);
		if (natural == 'i')
			bnn_ivon_hess_acc(n, gr, eps, sigma, hr, 1.0f, 0);
		for (i = 0; i < n; i++) {
			g[i] += w * gr[i];
			h[i] += w * hr[i];
		}
	}
	if (natural == 'v') {
		bnn_vogn_arrays a = {
			.n = n, .mu = mu, .ghat = g, .hhat = h, .m = mom, .s = s, .sigma = sigma
		};
		bnn_vogn_step(&a, (float)bnn_train_lr(o, (double)B), &vp);
	} else {
		bnn_ivon_arrays a = {
			.n = n, .mu = mu, .ghat = g, .hhat = h, .g = mom, .h = s, .sigma = sigma
		};
		float lr = (float)((ip.h0 + ip.delta) * bnn_train_lr(o, (double)B));
		bnn_ivon_step(&a, lr, 1, &ip);
	}
	bnn_state_free(&st);
	free(g);
	free(h);
	free(gr);
	free(hr);
	free(theta);
	free(eps);
	free(mom);
	free(s);
	free(idx);
}

int main(int argc, char **argv)
{
	static const char *const optimizers[] = { "sgd", "adam", "vogn", "ivon", "bbb", "bbb" };
	bnn_dataset ds;
	char what[160];
	MPI_Comm self = MPI_COMM_SELF;
	int i;

	MPI_Init(&argc, &argv);
	MPI_Comm_dup(MPI_COMM_WORLD, &comm);
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &nranks);
	make_data(&ds);

	check(bnn_dist_rank(&comm) == rank && bnn_dist_size(&comm) == nranks &&
	              bnn_dist_size(&self) == 1 && bnn_dist_available(),
	      "bnn_dist_rank and bnn_dist_size see the user's communicator");

	for (i = 0; i < 6; i++) {
		const char *name = optimizers[i];
		int point = i < 2, lrt = i == 5;
		const bnn_model *m = point ? &mpi_point_model : &mpi_mf_model;
		bnn_train_options o = options(name, 3, 16);
		bnn_state st, one;
		bnn_err err;
		int rc;

		if (lrt)
			o.lrt = 1;
		rc = train(m, &ds, &o, &comm, &st, &err);
		snprintf(what, sizeof what, "%s%s: trains over the communicator", name,
		         lrt ? " (lrt)" : "");
		check(rc == 0, what);
		if (rc) {
			printf("# rank %d: %s\n", rank, err.message);
			continue;
		}
		snprintf(what, sizeof what, "%s%s: the same parameters%s on every rank", name,
		         lrt ? " (lrt)" : "", st.sigma ? " and sigma" : "");
		check(same_everywhere(st.params, m->nparams) &&
		              (!st.sigma || same_everywhere(st.sigma, m->nparams)),
		      what);
		if (point) {
			rc = train(m, &ds, &o, &self, &one, &err);
			snprintf(what, sizeof what,
			         "%s: the parameters of one process with the same global batch",
			         name);
			check(rc == 0 && close_to(st.params, one.params, m->nparams, name), what);
			bnn_state_free(&one);
		}
		bnn_state_free(&st);
	}

	{
		bnn_train_options o = options("adam", 2, 16);
		bnn_state st;
		bnn_err err;
		int rc = train(&mpi_bn_model, &ds, &o, &comm, &st, &err);

		check(rc == 0 && same_everywhere(st.params, mpi_bn_model.nparams) &&
		              same_everywhere(st.stats, mpi_bn_model.nstats),
		      "batchnorm: the same parameters and running statistics on every rank");
		if (!rc)
			bnn_state_free(&st);
	}

	for (i = 0; i < 2; i++) {
		const char *name = i == 0 ? "vogn" : "ivon";
		const bnn_model *m = &mpi_mf_model;
		bnn_train_options o = options(name, 1, N_EXAMPLES);
		float *mu = malloc(sizeof(float) * (size_t)m->nparams);
		float *sigma = malloc(sizeof(float) * (size_t)m->nparams);
		bnn_state st;
		bnn_err err;
		int rc;

		o.delta = 1.0;
		o.clip = 0.0; /* by_hand does not clip (ivon's default clip is 2) */
		rc = train(m, &ds, &o, &comm, &st, &err);
		by_hand(name[0], &ds, &o, mu, sigma);
		snprintf(what, sizeof what,
		         "%s: one step is the %d-sample estimator, each rank's sample on its rows",
		         name, nranks);
		check(rc == 0 && close_to(st.params, mu, m->nparams, name) &&
		              close_to(st.sigma, sigma, m->nparams, name),
		      what);
		if (!rc)
			bnn_state_free(&st);
		free(mu);
		free(sigma);
	}

	{ /* the last rank's data does not fit: every rank stops with its message */
		bnn_dataset bad = ds;
		bnn_train_options o = options("adam", 1, 16);
		bnn_state st;
		bnn_err err;
		char want[64];
		int rc;

		if (rank == nranks - 1)
			bad.features = 3;
		rc = train(&mpi_point_model, &bad, &o, &comm, &st, &err);
		snprintf(want, sizeof want, "rank %d of %d: ", nranks - 1, nranks);
		check(rc != 0 && strncmp(err.message, want, strlen(want)) == 0,
		      "bad data on the last rank stops every rank with its message");
		if (rank == 0)
			printf("# %s\n", rc ? err.message : "(no error)");
		if (!rc)
			bnn_state_free(&st);
	}

	if (rank == 0)
		printf("1..%d\n", count);
	bnn_dataset_free(&ds);
	MPI_Comm_free(&comm);
	MPI_Finalize();
	return failed ? 1 : 0;
}
