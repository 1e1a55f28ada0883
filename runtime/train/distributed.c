/*
 * distributed.c: data-parallel training over MPI (docs/distributed.md):
 * the communicator of a bnn_train call, the split of each global minibatch
 * across the ranks, the sum of a step's quantities over them, agreement on
 * errors, and the public helpers bnn_dist_* (bnn_train.h) that a driver
 * and the sharded evaluation use.
 *
 * Built without MPI (no ./configure --with-mpi, no BNN_HAVE_MPI) every
 * function is the one-process case: rank 0 of 1, sums that sum nothing,
 * and a non-NULL communicator is refused with a message.
 *
 * The step's reduction: every rank's pass gives the mean over its b_r
 * rows; scaled by b_r / B and summed (MPI_SUM over the communicator) they
 * give the mean over the global minibatch of B rows.  Overlap, as
 * PyTorch's DDP does with buckets: when the step's arrays are the pass's
 * own outputs (train_dist_arm before the pass), the generated code calls
 * back after each layer's backward pass (bnn_pass.ready) and that layer's
 * range goes out at once as a nonblocking MPI_Iallreduce while the
 * backward pass of the layers below it runs; what no layer reported (the
 * likelihood's σ) goes out when the pass returns, with the loss, and the
 * update waits for every request.  Without a callback (IVON's ĥ and BBB's
 * g∘ε are made from the local gradient after the pass; whvi layers add
 * their KL gradient after it; several samples per step are averaged
 * first) the whole arrays go out after the pass.
 *
 * That is for ranks on several machines, where a network moves the bytes
 * while the cores compute.  When the ranks all share one machine there
 * is nothing to overlap with: a sum is the cores' own copies and
 * additions, which Open MPI moves on only inside MPI calls.  The step's
 * arrays then live in a shared-memory window (MPI_Win_allocate_shared),
 * each rank's pass writes its own, and after the pass each rank sums one
 * chunk of every array over the ranks and writes it into all of them
 * (dist_sum_shared): one pass over the arrays between two barriers, with
 * no copies through MPI's buffers.  dist_mode chooses; the environment
 * variable BNN_ALLREDUCE overrides it (overlap, end: one blocking
 * MPI_Allreduce per array after the pass, shared).  Nothing is allocated
 * per step: the requests, the list of ranges and the window are made at
 * setup.  Every rank then holds the same sums (Open MPI's reductions
 * give every rank the same bits: the same operands combined in the same
 * order), so every rank makes the same update and the parameters stay
 * identical; t/mpi.sh checks it.
 *
 * MPI errors keep the communicator's handler (MPI_ERRORS_ARE_FATAL by
 * default: a failed collective ends the job rather than leaving the other
 * ranks waiting).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef BNN_HAVE_MPI
#include <mpi.h>
#endif

#include "kernels/simd_clones.h"
#include "base/floats.h"
#include "distributed.h"
#include "train_internal.h"

#define DIST_ARRAYS 3  /* the most arrays a step sums: a pass's outputs */
#define DIST_CHUNK  64 /* the floats of a vectorised chunk */
enum {
	DIST_OVERLAP,
	DIST_END,
	DIST_SHARED
};

struct train_dist {
#ifdef BNN_HAVE_MPI
	MPI_Comm comm;
	MPI_Request *req; /* the step's requests, maxreq of them */
	int nreq, maxreq;
	long *off, *len; /* the ranges the pass reported, maxranges of them */
	int nranges, maxranges;
	float *arrays[3]; /* armed: the arrays the pass's ranges belong to */
	float w;          /* armed: this rank's rows / the global rows */
	int armed;
	int mode; /* DIST_OVERLAP, DIST_END or DIST_SHARED (dist_mode) */
	/* DIST_SHARED: the step's arrays live in a shared-memory
	 * window, narrays arrays of `stride` floats per rank, and are
	 * summed there (dist_sum_shared); peer[q * DIST_ARRAYS + k] is rank
	 * q's array k.  node: the communicator of the window (the ranks of
	 * comm, all on this machine). */
	MPI_Comm node;
	MPI_Win win;
	float **peer;
	float *wq; /* the step's weights of the ranks: their rows / the global rows */
	long stride;
	int narrays; /* the step's arrays the window holds */
	int nshared; /* the arrays handed out by train_dist_floats */
#endif
	int rank, size;
	int failed; /* an agreement found a failure: every rank's err holds
	               its message, "rank R of N: " included */
};

#ifdef BNN_HAVE_MPI
/* The communicator comm points to; NULL: MPI_COMM_WORLD while MPI is
 * initialised (and not finalised).  0: none, one process. */
static int dist_comm(const void *comm, MPI_Comm *c)
{
	int init = 0, fin = 0;

	if (comm) {
		*c = *(const MPI_Comm *)comm;
		return 1;
	}
	MPI_Initialized(&init);
	MPI_Finalized(&fin);
	if (!init || fin)
		return 0;
	*c = MPI_COMM_WORLD;
	return 1;
}

/* Checks that MPI is running before a user's communicator is used. */
static int dist_check(const void *comm, bnn_err *err)
{
	int init = 0, fin = 0;

	if (!comm)
		return BNN_OK;
	MPI_Initialized(&init);
	MPI_Finalized(&fin);
	if (!init || fin)
		return bnn_fail(err, BNN_EINVAL,
		                "a communicator was given, and MPI is %s: call MPI_Init first",
		                fin ? "finalised" : "not initialised");
	return BNN_OK;
}
#endif

int bnn_dist_available(void)
{
#ifdef BNN_HAVE_MPI
	return 1;
#else
	return 0;
#endif
}

/* Open MPI's mpirun sets OMPI_COMM_WORLD_SIZE; PMIx and PMI launchers
 * (MPICH's hydra, Slurm's srun) set PMIX_RANK or PMI_RANK. */
int bnn_dist_launched(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

int bnn_dist_init(int *argc, char ***argv, bnn_err *err)
{
#ifdef BNN_HAVE_MPI
	int init = 0, provided;

	MPI_Initialized(&init);
	if (init || !bnn_dist_launched())
		return 0;
	/* OpenMP threads run the work, the calling thread alone talks to MPI */
	if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
		return -bnn_fail(err, BNN_EIO, "MPI_Init_thread failed");
	return 1;
#else
	(void)argc;
	(void)argv;
	(void)err;
	return 0;
#endif
}

void bnn_dist_finalize(void)
{
#ifdef BNN_HAVE_MPI
	int init = 0, fin = 0;

	MPI_Initialized(&init);
	MPI_Finalized(&fin);
	if (!init || fin)
		return;
	/* every process has said what it had to before any exits: mpirun
	 * ends the job at the first non-zero status */
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
#endif
}

int bnn_dist_rank(const void *comm)
{
#ifdef BNN_HAVE_MPI
	MPI_Comm c;
	int r = 0;

	if (dist_check(comm, NULL) || !dist_comm(comm, &c))
		return 0;
	MPI_Comm_rank(c, &r);
	return r;
#else
	(void)comm;
	return 0;
#endif
}

int bnn_dist_size(const void *comm)
{
#ifdef BNN_HAVE_MPI
	MPI_Comm c;
	int n = 1;

	if (dist_check(comm, NULL) || !dist_comm(comm, &c))
		return 1;
	MPI_Comm_size(c, &n);
	return n;
#else
	(void)comm;
	return 1;
#endif
}

#ifdef BNN_HAVE_MPI
/* The agreement on c (size > 1): the lowest failing rank by an MPI_MIN,
 * then its code and message by a broadcast from it.  agreed: err holds
 * the message of an earlier agreement already (a failure agreed on again,
 * as a divergence is after rank 0's save), which keeps its one "rank R of
 * N: " prefix. */
static int dist_agree_comm(MPI_Comm c, int rank, int size, int rc, int agreed, bnn_err *err)
{
	struct {
		int code;
		char message[BNN_ERR_MESSAGE_MAX];
	} what;
	int mine = rc ? rank : size, first = size;

	MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, c);
	if (first == size)
		return BNN_OK;
	memset(&what, 0, sizeof what);
	if (rank == first) {
		what.code = rc;
		snprintf(what.message, sizeof what.message, "%s",
		         err && err->message[0] ? err->message : bnn_strerror(rc));
	}
	MPI_Bcast(&what, (int)sizeof what, MPI_BYTE, first, c);
	if (agreed)
		return bnn_fail(err, what.code, "%s", what.message);
	return bnn_fail(err, what.code, "rank %d of %d: %s", first, size, what.message);
}
#endif

int bnn_dist_agree(const void *comm, int rc, bnn_err *err)
{
#ifdef BNN_HAVE_MPI
	MPI_Comm c;
	int rank, size;

	if (dist_check(comm, NULL) || !dist_comm(comm, &c))
		return rc;
	MPI_Comm_rank(c, &rank);
	MPI_Comm_size(c, &size);
	if (size == 1)
		return rc;
	return dist_agree_comm(c, rank, size, rc, 0, err);
#else
	(void)comm;
	(void)err;
	return rc;
#endif
}

int bnn_dist_sum(const void *comm, double *v, long n)
{
#ifdef BNN_HAVE_MPI
	MPI_Comm c;

	if (n <= 0 || dist_check(comm, NULL) || !dist_comm(comm, &c))
		return 0;
	return MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_DOUBLE, MPI_SUM, c) == MPI_SUCCESS ? 0
	                                                                                     : -1;
#else
	(void)comm;
	(void)v;
	(void)n;
	return 0;
#endif
}

/* ---- the trainer's ----------------------------------------------------- */

/* Rank r's share of b rows split over n ranks: the first b mod n ranks
 * take one row more than the others. */
static void dist_rows(long r, long n, long b, long *first, long *count)
{
	long q = b / n, extra = b % n;

	*count = q + (r < extra);
	*first = r * q + (r < extra ? r : extra);
}

#ifdef BNN_HAVE_MPI
/* Rank r's share of the mean over a minibatch of b rows split over n
 * ranks: its rows / b, the weight of its mean in the sum. */
static float dist_weight(long r, long n, long b)
{
	long first, count;

	dist_rows(r, n, b, &first, &count);
	return (float)((double)count / (double)b);
}

/* How the step's sums go: DIST_OVERLAP when the ranks span more than
 * one machine (local of size ranks on this one), DIST_SHARED when they
 * all share it; the environment variable BNN_ALLREDUCE (overlap, end,
 * shared or auto) chooses instead, shared falling back to end across
 * machines.  On one machine, two ranks' epochs of the 784-512-512-10 MLP
 * at a global batch of 256 ran 1.65-1.75x one process's with the shared
 * sums, 1.35-1.49x with the overlapped ones (docs/benchmarks.md,
 * "Data-parallel training over MPI").  Rank 0's environment decides for
 * every rank, which must all make the same calls.  -1: rank 0's
 * BNN_ALLREDUCE has another value. */
static int dist_mode(MPI_Comm c, int local, int size)
{
	const char *e = getenv("BNN_ALLREDUCE");
	int v = -1;

	if (!e || !*e || !strcmp(e, "auto"))
		v = local < size ? DIST_OVERLAP : DIST_SHARED;
	else if (!strcmp(e, "overlap"))
		v = DIST_OVERLAP;
	else if (!strcmp(e, "end"))
		v = DIST_END;
	else if (!strcmp(e, "shared"))
		v = local < size ? DIST_END : DIST_SHARED;
	MPI_Bcast(&v, 1, MPI_INT, 0, c);
	return v;
}
#endif

#ifdef BNN_HAVE_MPI
/* The arrays a step of optimizer o sums: the gradient alone for those of
 * train_step_point (sgd, adam, adamw, badam), with the squared gradients,
 * Hessian estimate or σ-gradient for the others (vogn, ivon, bbb). */
static int dist_step_arrays(const bnn_train_options *o)
{
	if (o->optimizer < 0 || o->optimizer >= BNN_OPT_COUNT)
		return DIST_ARRAYS; /* refused by the option checks that follow */
	return train_optimizers[o->optimizer].step == train_step_point ? 1 : 2;
}

/* The way the sums go (dist_mode) and, for DIST_SHARED, the window of
 * the step's arrays: dist_step_arrays of them, n floats each, rounded up
 * to 64 bytes so that every array starts on a cache line, as
 * bnn_floats_alloc's do (a step that asks for more sums the others by
 * MPI_Allreduce). */
static int dist_setup_node(struct train_dist *d, long n, int narrays, bnn_err *err)
{
	MPI_Aint bytes;
	float *mine;
	int local, q, k, du;

	MPI_Comm_split_type(d->comm, MPI_COMM_TYPE_SHARED, d->rank, MPI_INFO_NULL, &d->node);
	MPI_Comm_size(d->node, &local);
	if ((d->mode = dist_mode(d->comm, local, d->size)) < 0)
		return bnn_fail(
		        err, BNN_EINVAL,
		        "BNN_ALLREDUCE (on rank 0) is none of overlap, end, shared and auto");
	if (d->mode != DIST_SHARED)
		return BNN_OK;
	d->narrays = narrays;
	d->stride = (n + 15) / 16 * 16;
	bytes = (MPI_Aint)((size_t)d->narrays * (size_t)d->stride * sizeof(float));
	if (!(d->peer = malloc((size_t)d->size * DIST_ARRAYS * sizeof *d->peer)) ||
	    !(d->wq = malloc((size_t)d->size * sizeof *d->wq)) ||
	    MPI_Win_allocate_shared(bytes, sizeof(float), MPI_INFO_NULL, d->node, &mine, &d->win) !=
	            MPI_SUCCESS)
		return bnn_fail(err, BNN_ENOMEM, "out of memory for the shared sums");
	for (q = 0; q < d->size; q++) {
		float *base;
		MPI_Win_shared_query(d->win, q, &bytes, &du, &base);
		for (k = 0; k < DIST_ARRAYS; k++)
			d->peer[q * DIST_ARRAYS + k] = k < d->narrays ? base + k * d->stride : NULL;
	}
	return BNN_OK;
}
#endif

int train_dist_setup(struct trainer *t, const void *comm, bnn_err *err)
{
	t->rank = 0;
	t->nranks = 1;
	t->dist = NULL;
#ifdef BNN_HAVE_MPI
	{
		MPI_Comm c;
		int rc, i;

		if ((rc = dist_check(comm, err)))
			return rc;
		if (!dist_comm(comm, &c))
			return BNN_OK;
		if (!(t->dist = calloc(1, sizeof *t->dist)))
			return bnn_fail(err, BNN_ENOMEM, "out of memory");
		t->dist->comm = c;
		t->dist->node = MPI_COMM_NULL;
		t->dist->win = MPI_WIN_NULL;
		/* per array: one request per layer and per gap between them */
		t->dist->maxranges = t->m->nlayers + 1;
		t->dist->maxreq = 3 * (2 * t->dist->maxranges + 1) + 1;
		t->dist->req = malloc((size_t)t->dist->maxreq * sizeof *t->dist->req);
		t->dist->off = malloc((size_t)t->dist->maxranges * sizeof *t->dist->off);
		t->dist->len = malloc((size_t)t->dist->maxranges * sizeof *t->dist->len);
		if (!t->dist->req || !t->dist->off || !t->dist->len)
			return bnn_fail(err, BNN_ENOMEM, "out of memory");
		for (i = 0; i < t->dist->maxreq; i++)
			t->dist->req[i] = MPI_REQUEST_NULL;
		MPI_Comm_rank(c, &t->dist->rank);
		MPI_Comm_size(c, &t->dist->size);
		t->rank = t->dist->rank;
		t->nranks = t->dist->size;
		return dist_setup_node(t->dist, t->m->nparams, dist_step_arrays(t->o), err);
	}
	return BNN_OK;
#else
	if (comm)
		return bnn_fail(err, BNN_EUNSUPPORTED,
		                "a communicator was given, and this libbnn was built without MPI "
		                "(./configure --with-mpi)");
	(void)err;
	return BNN_OK;
#endif
}

int train_dist_text(const struct trainer *t, char *buf, int n)
{
#ifdef BNN_HAVE_MPI
	static const char *const how[] = {
		[DIST_OVERLAP] = "by MPI_Iallreduce per layer, overlapping the backward pass",
		[DIST_END] = "by MPI_Allreduce after the pass",
		[DIST_SHARED] = "in shared memory after the pass",
	};
	const struct train_dist *d = t->dist;

	if (d && d->size > 1)
		n = train_text_append(buf, n,
		                      "\ndata-parallel: %d processes, each minibatch's rows split "
		                      "across them (B mod N of them take one more), the steps' "
		                      "sums %s (BNN_ALLREDUCE=%s)",
		                      d->size, how[d->mode],
		                      d->mode == DIST_OVERLAP ? "overlap"
		                      : d->mode == DIST_END   ? "end"
		                                              : "shared");
#else
	(void)t;
	(void)buf;
#endif
	return n;
}

void train_dist_free(struct trainer *t)
{
#ifdef BNN_HAVE_MPI
	if (t->dist) {
		free(t->dist->req);
		free(t->dist->off);
		free(t->dist->len);
		free(t->dist->peer);
		free(t->dist->wq);
		if (t->dist->win != MPI_WIN_NULL)
			MPI_Win_free(&t->dist->win);
		if (t->dist->node != MPI_COMM_NULL)
			MPI_Comm_free(&t->dist->node);
	}
#endif
	free(t->dist);
	t->dist = NULL;
}

#ifdef BNN_HAVE_MPI
/* a[0, n) *= w: a rank's share of the global mean, before the sum.  A
 * pass over the whole gradient every step, so in vectors: chunks of a
 * fixed length, which GCC's -O2 vectorises (the optimizers' kernels do the
 * same).  As a plain loop it was scalar, with w reloaded after every store
 * through a: 4% of a rank's step on the MLP at a global batch of 256. */
BNN_SIMD_CLONES static void dist_scale(float *restrict a, long n, float w)
{
	long i;
	int k;

	for (i = 0; i + DIST_CHUNK <= n; i += DIST_CHUNK)
		for (k = 0; k < DIST_CHUNK; k++)
			a[i + k] *= w;
	for (; i < n; i++)
		a[i] *= w;
}

/* Scales [off, off + len) of the armed arrays and starts their sums. */
static void dist_start(struct train_dist *d, long off, long len)
{
	int k;

	for (k = 0; k < 3; k++) {
		float *a = d->arrays[k];
		if (!a || len <= 0)
			continue;
		dist_scale(a + off, len, d->w);
		MPI_Iallreduce(MPI_IN_PLACE, a + off, (int)len, MPI_FLOAT, MPI_SUM, d->comm,
		               &d->req[d->nreq++]);
	}
}

/* bnn_pass.ready: a layer's gradients are final; start their sums (and
 * let the ones started before progress: Open MPI moves nonblocking
 * collectives on within MPI calls). */
static void dist_ready(void *ctx, long off, long len)
{
	struct trainer *t = ctx;
	struct train_dist *d = t->dist;
	int flag;

	if (!d->armed || d->nranges == d->maxranges || off < 0 || off + len > t->m->nparams)
		return; /* left to the end of the pass */
	d->off[d->nranges] = off;
	d->len[d->nranges++] = len;
	dist_start(d, off, len);
	MPI_Testall(d->nreq, d->req, &flag, MPI_STATUSES_IGNORE);
}
#endif

#ifdef BNN_HAVE_MPI
/* Which of this rank's shared arrays a is, or -1. */
static int dist_shared_index(const struct train_dist *d, const float *a)
{
	int k;

	for (k = 0; d && d->win != MPI_WIN_NULL && k < d->nshared; k++)
		if (a == d->peer[d->rank * DIST_ARRAYS + k])
			return k;
	return -1;
}

/* The sums of chunk [lo, hi) of array k over the ranks, each rank's
 * values times w[q] (its rows / the global rows), added in rank order and
 * written back to every rank's array.  Fixed-length chunks: vectorised
 * by -O2, as dist_scale. */
BNN_SIMD_CLONES static void dist_sum_chunk(float *const *peer, int size, int k, const float *w,
                                           long lo, long hi)
{
	float v[DIST_CHUNK];
	long i = lo;
	int q, j;

	for (; i + DIST_CHUNK <= hi; i += DIST_CHUNK) {
		for (j = 0; j < DIST_CHUNK; j++)
			v[j] = w[0] * peer[k][i + j];
		for (q = 1; q < size; q++)
			for (j = 0; j < DIST_CHUNK; j++)
				v[j] += w[q] * peer[q * DIST_ARRAYS + k][i + j];
		for (q = 0; q < size; q++)
			for (j = 0; j < DIST_CHUNK; j++)
				peer[q * DIST_ARRAYS + k][i + j] = v[j];
	}
	for (; i < hi; i++) {
		float x = w[0] * peer[k][i];
		for (q = 1; q < size; q++)
			x += w[q] * peer[q * DIST_ARRAYS + k][i];
		for (q = 0; q < size; q++)
			peer[q * DIST_ARRAYS + k][i] = x;
	}
}

/* The sum over the ranks of the shared arrays whose index is set in
 * which (bit k: array k), n floats each: once every rank's pass has
 * written its own (the first barrier), rank r sums the r-th of `size`
 * equal chunks of each array (a multiple of 16 floats) and writes the sums
 * into every rank's copy; after the second barrier every rank holds every
 * sum.  The ranks read and write disjoint chunks, so nothing waits but
 * the barriers, and the sums take one pass over the arrays instead of
 * MPI's copies through its buffers: for two ranks, fl(w0·a) + fl(w1·b),
 * the bits of the scaled MPI_SUM. */
static void dist_sum_shared(struct trainer *t, unsigned which)
{
	struct train_dist *d = t->dist;
	const long n = t->m->nparams, chunk = ((n + d->size - 1) / d->size + 15) / 16 * 16;
	const long lo = d->rank * chunk < n ? d->rank * chunk : n;
	const long hi = lo + chunk < n ? lo + chunk : n;
	int q, k;

	for (q = 0; q < d->size; q++)
		d->wq[q] = dist_weight(q, d->size, t->global_rows);
	MPI_Barrier(d->node);
	for (k = 0; k < DIST_ARRAYS; k++)
		if (which & (1u << k))
			dist_sum_chunk(d->peer, d->size, k, d->wq, lo, hi);
	MPI_Barrier(d->node);
}
#endif

float *train_dist_floats(struct trainer *t, long n)
{
#ifdef BNN_HAVE_MPI
	struct train_dist *d = t->dist;

	if (d && d->win != MPI_WIN_NULL && n == t->m->nparams && d->nshared < d->narrays) {
		float *a = d->peer[d->rank * DIST_ARRAYS + d->nshared++];
		memset(a, 0, (size_t)n * sizeof *a);
		return a;
	}
#else
	(void)t;
#endif
	return bnn_floats_zeroed(n);
}

void train_dist_release(struct trainer *t, float *a)
{
#ifdef BNN_HAVE_MPI
	if (dist_shared_index(t->dist, a) >= 0)
		return; /* the window's, freed with it */
#else
	(void)t;
#endif
	free(a);
}

void train_dist_arm(struct trainer *t, float *a, float *b, float *c)
{
#ifdef BNN_HAVE_MPI
	struct train_dist *d = t->dist;

	/* whvi layers add their KL gradient after the pass, before the sum */
	if (!d || d->size == 1 || t->whvi || d->mode != DIST_OVERLAP)
		return;
	d->arrays[0] = a;
	d->arrays[1] = b;
	d->arrays[2] = c;
	d->w = dist_weight(t->rank, t->nranks, t->global_rows);
	d->nreq = 0;
	d->nranges = 0;
	d->armed = 1;
	t->ready = dist_ready;
	t->ready_ctx = t;
#else
	(void)t;
	(void)a;
	(void)b;
	(void)c;
#endif
}

void train_dist_rows(const struct trainer *t, long b, long *first, long *count)
{
	dist_rows(t->rank, t->nranks, b, first, count);
}

double train_dist_step(struct trainer *t, double loss, float *a, float *b, float *c)
{
#ifdef BNN_HAVE_MPI
	struct train_dist *d = t->dist;
	float *arrays[3] = { a, b, c };
	long n = t->m->nparams;
	unsigned shared = 0;
	float w;
	int k, nreq = 0;

	if (!d || d->size == 1)
		return loss;
	if (d->armed) { /* the pass started the layers' ranges: send the gaps */
		long at = 0;
		int j, m;
		t->ready = NULL;
		t->ready_ctx = NULL;
		d->armed = 0;
		for (j = 1; j < d->nranges; j++) /* by offset (a few layers) */
			for (m = j; m > 0 && d->off[m - 1] > d->off[m]; m--) {
				long o = d->off[m], l = d->len[m];
				d->off[m] = d->off[m - 1];
				d->len[m] = d->len[m - 1];
				d->off[m - 1] = o;
				d->len[m - 1] = l;
			}
		for (j = 0; j <= d->nranges; j++) {
			long end = j < d->nranges ? d->off[j] : n;
			dist_start(d, at, end - at);
			if (j < d->nranges)
				at = d->off[j] + d->len[j];
		}
		nreq = d->nreq;
		goto send_loss;
	}
	w = dist_weight(t->rank, t->nranks, t->global_rows);
	/* Σ_r (b_r/B)·mean_r = the mean over the B rows of the global batch */
	for (k = 0; k < 3; k++) {
		int j = arrays[k] ? dist_shared_index(d, arrays[k]) : -1;
		if (j >= 0)
			shared |= 1u << j;
		if (!arrays[k] || j >= 0)
			continue;
		dist_scale(arrays[k], n, w);
		if (d->mode == DIST_OVERLAP)
			MPI_Iallreduce(MPI_IN_PLACE, arrays[k], (int)n, MPI_FLOAT, MPI_SUM, d->comm,
			               &d->req[nreq++]);
		else
			MPI_Allreduce(MPI_IN_PLACE, arrays[k], (int)n, MPI_FLOAT, MPI_SUM, d->comm);
	}
	if (shared)
		dist_sum_shared(t, shared);
send_loss:
	MPI_Iallreduce(MPI_IN_PLACE, &loss, 1, MPI_DOUBLE, MPI_SUM, d->comm, &d->req[nreq++]);
	MPI_Waitall(nreq, d->req, MPI_STATUSES_IGNORE);
	d->nreq = 0;
	return loss;
#else
	(void)t;
	(void)a;
	(void)b;
	(void)c;
	return loss;
#endif
}

int train_dist_agree(struct trainer *t, int rc, bnn_err *err)
{
#ifdef BNN_HAVE_MPI
	struct train_dist *d = t->dist;

	if (d && d->size > 1) {
		rc = dist_agree_comm(d->comm, d->rank, d->size, rc, d->failed, err);
		d->failed = d->failed || rc != BNN_OK;
	}
#else
	(void)t;
	(void)err;
#endif
	return rc;
}

void train_dist_mean_stats(struct trainer *t)
{
#ifdef BNN_HAVE_MPI
	struct train_dist *d = t->dist;
	long i, n = t->m->nstats;

	if (!d || d->size == 1 || n == 0 || !t->st->stats)
		return;
	MPI_Allreduce(MPI_IN_PLACE, t->st->stats, (int)n, MPI_FLOAT, MPI_SUM, d->comm);
	for (i = 0; i < n; i++)
		t->st->stats[i] /= (float)d->size;
#else
	(void)t;
#endif
}

void train_dist_sum(struct trainer *t, double *v, int n)
{
#ifdef BNN_HAVE_MPI
	if (t->dist && t->dist->size > 1)
		MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, t->dist->comm);
#else
	(void)t;
	(void)v;
	(void)n;
#endif
}
