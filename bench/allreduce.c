/*
 * allreduce.c: the MPI microbenchmark behind docs/scaling.md.  It times one
 * MPI_Allreduce (sum of float32) and one MPI_Iallreduce followed by
 * MPI_Wait of the buffers a data-parallel step sends: the parameter vector
 * of each of the three benchmark networks (the 784-512-512-10 MLP,
 * examples/fashion_lenet.bnn, examples/fashion_resnet.bnn), once for the
 * gradient alone (Adam, SGD, BADAM) and once for two vectors in one buffer
 * (VOGN's gradient and ĥ, IVON's gradient and Hessian estimate, BBB's
 * gradients of μ and ρ), plus a few powers of two to fit the latency α and
 * the bandwidth β of the α–β model.  Every rank runs the same calls; rank 0
 * prints one JSON line per (operation, size):
 *   {"bench":"allreduce","op":"allreduce"|"iallreduce","np":P,"floats":N,
 *    "bytes":4N,"label":"mlp-grad"|...,"median_us":..,"min_us":..,"repeats":R}
 * Each figure is the median (and minimum) over R repeats of the slowest
 * rank's time (an MPI_Reduce of MAX after each repeat), after a barrier so
 * the ranks start together.  The parameter counts are those of
 * `bnnc --summary`; the transport is whatever mpirun picks (shared memory
 * on one node; `--mca btl tcp,self` forces loopback TCP).
 *
 *   mpicc -O2 -o allreduce bench/allreduce.c
 *   mpirun -np 2 ./allreduce [--repeats R] [--min-floats N]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One buffer to reduce: its name in the JSON and its length in floats. */
struct size {
	const char *label;
	long floats;
};

/* Parameter counts (bnnc --summary): examples/fashion_point.bnn (the
 * 784-512-512-10 MLP), examples/fashion_lenet.bnn, examples/fashion_resnet.bnn. */
#define MLP_PARAMS    669706L
#define LENET_PARAMS  61706L
#define RESNET_PARAMS 38266L /* with batchnorm's γ and β; its running statistics: 416 more */

static const struct size sizes[] = {
	{ "mlp-grad", MLP_PARAMS },
	{ "mlp-grad+h", 2 * MLP_PARAMS },
	{ "lenet-grad", LENET_PARAMS },
	{ "lenet-grad+h", 2 * LENET_PARAMS },
	{ "resnet-grad", RESNET_PARAMS },
	{ "resnet-grad+h", 2 * RESNET_PARAMS },
	{ "pow2", 1L },
	{ "pow2", 256L },
	{ "pow2", 4096L },
	{ "pow2", 65536L },
	{ "pow2", 1048576L },
	{ "pow2", 4194304L },
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Times `repeats` reductions of n floats with op (0 blocking, 1 nonblocking);
 * on rank 0 writes the median and the minimum of the slowest rank's times. */
static void time_op(int op, float *send, float *recv, long n, int repeats, double *times,
                    double *median, double *min)
{
	int r, rank;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (r = -2; r < repeats; r++) { /* two warm-up rounds */
		double t, slowest;
		MPI_Request req;
		MPI_Barrier(MPI_COMM_WORLD);
		t = MPI_Wtime();
		if (op == 0) {
			MPI_Allreduce(send, recv, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		} else {
			MPI_Iallreduce(send, recv, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
			               &req);
			MPI_Wait(&req, MPI_STATUS_IGNORE);
		}
		t = MPI_Wtime() - t;
		MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
		if (r >= 0)
			times[r] = slowest;
	}
	if (rank == 0) {
		qsort(times, (size_t)repeats, sizeof *times, cmp_double);
		*median = repeats % 2 ? times[repeats / 2]
		                      : 0.5 * (times[repeats / 2 - 1] + times[repeats / 2]);
		*min = times[0];
	}
}

int main(int argc, char **argv)
{
	static const char *ops[] = { "allreduce", "iallreduce" };
	int rank, np, repeats = 21, i, op;
	long min_floats = 0, maxn = 0, j;
	float *send, *recv;
	double *times;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
			repeats = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--min-floats") == 0 && i + 1 < argc) {
			min_floats = atol(argv[++i]);
		} else {
			if (rank == 0)
				fprintf(stderr, "usage: %s [--repeats R] [--min-floats N]\n",
				        argv[0]);
			MPI_Finalize();
			return 2;
		}
	}
	if (repeats < 1)
		repeats = 1;
	for (i = 0; i < (int)(sizeof sizes / sizeof sizes[0]); i++)
		maxn = sizes[i].floats > maxn ? sizes[i].floats : maxn;
	send = malloc((size_t)maxn * sizeof *send);
	recv = malloc((size_t)maxn * sizeof *recv);
	times = malloc((size_t)repeats * sizeof *times);
	if (!send || !recv || !times) {
		fprintf(stderr, "allreduce: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (j = 0; j < maxn; j++) /* touch every page; values that stay finite */
		send[j] = (float)((j + rank) % 7) * 0.125f;
	memset(recv, 0, (size_t)maxn * sizeof *recv);
	for (i = 0; i < (int)(sizeof sizes / sizeof sizes[0]); i++) {
		if (sizes[i].floats < min_floats)
			continue;
		for (op = 0; op < 2; op++) {
			double median = 0, min = 0;
			time_op(op, send, recv, sizes[i].floats, repeats, times, &median, &min);
			if (rank == 0)
				printf("{\"bench\":\"allreduce\",\"op\":\"%s\",\"np\":%d,"
				       "\"floats\":%ld,\"bytes\":%ld,\"label\":\"%s\","
				       "\"median_us\":%.1f,\"min_us\":%.1f,\"repeats\":%d}\n",
				       ops[op], np, sizes[i].floats, 4 * sizes[i].floats,
				       sizes[i].label, 1e6 * median, 1e6 * min, repeats);
		}
		if (rank == 0)
			fflush(stdout);
	}
	free(send);
	free(recv);
	free(times);
	MPI_Finalize();
	return 0;
}
