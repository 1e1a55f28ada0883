/*
 * mpi_train.c: a user's MPI program that trains a bnnc model data-parallel
 * over its own communicator (docs/distributed.md).  The model is
 * examples/whvi_diabetes_mf.bnn compiled without --main (bnnc -o
 * model.c), linked in with an MPI build of libbnn:
 *
 *   bnnc -o model.c examples/whvi_diabetes_mf.bnn
 *   cc -std=c11 -o mpi_train examples/mpi_train.c model.c \
 *      $(pkg-config --cflags --libs libbnn)      # libbnn built --with-mpi
 *   mpirun -np 2 ./mpi_train examples/data/diabetes_train.csv out.ckpt
 *
 * Every rank loads the whole CSV file (each trains on its rows of every
 * minibatch), passes a pointer to its communicator in bnn_train_io.comm,
 * and gets the same trained state; rank 0 alone writes the checkpoint.
 * The program checks that last point itself and prints one line.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"

#ifndef MPI_TRAIN_MODEL
#define MPI_TRAIN_MODEL whvi_diabetes_mf_model
#endif
extern const bnn_model MPI_TRAIN_MODEL;

/* Whether the n floats of a hold the same bits on every rank of comm. */
static int same_on_every_rank(const float *a, long n, MPI_Comm comm)
{
	float *lo = malloc(sizeof(float) * (size_t)n), *hi = malloc(sizeof(float) * (size_t)n);
	int same = 0, all = 0;

	if (lo && hi) {
		MPI_Allreduce(a, lo, (int)n, MPI_FLOAT, MPI_MIN, comm);
		MPI_Allreduce(a, hi, (int)n, MPI_FLOAT, MPI_MAX, comm);
		same = memcmp(lo, a, sizeof(float) * (size_t)n) == 0 &&
		       memcmp(hi, a, sizeof(float) * (size_t)n) == 0;
	}
	MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_LAND, comm);
	free(lo);
	free(hi);
	return all;
}

int main(int argc, char **argv)
{
	const bnn_model *m = &MPI_TRAIN_MODEL;
	bnn_csv_options csv = { .target = "progression", .targets = 1 };
	bnn_train_options o = bnn_train_defaults();
	bnn_dataset ds;
	bnn_state st;
	bnn_err err;
	MPI_Comm comm;
	int provided, rank, size, rc, same;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	/* the program's own communicator (here every process, in a split of
	 * its own; a larger program might train on a subgroup) */
	MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &comm);
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	if (argc != 3) {
		if (rank == 0)
			fprintf(stderr, "usage: mpirun -np N %s DATA.csv CKPT\n", argv[0]);
		MPI_Finalize();
		return 2;
	}
	memset(&ds, 0, sizeof ds);
	memset(&st, 0, sizeof st);
	rc = bnn_data_load_csv(argv[1], &csv, &ds, &err);
	if (!rc)
		rc = bnn_state_init(&st, m, 1, &err);
	if (!rc && !(rc = bnn_standardizer_fit(&ds, &st.standardize, &err)))
		rc = bnn_standardizer_apply(&st.standardize, &ds, &err);
	/* a file missing on one machine stops every process */
	rc = bnn_dist_agree(&comm, rc, &err);
	if (!rc) {
		o.optimizer = BNN_OPT_VOGN;
		o.epochs = 20;
		o.batch = 64; /* the global minibatch: 64 / size rows per process */
		o.threads = 1;
		rc = bnn_train(
		        &st, &(bnn_train_io){ .train = &ds, .checkpoint = argv[2], .comm = &comm },
		        &o, &err);
	}
	if (rc) {
		if (rank == 0)
			fprintf(stderr, "%s: %s\n", argv[0], err.message);
	} else {
		same = same_on_every_rank(st.params, m->nparams, comm) &&
		       same_on_every_rank(st.sigma, m->nparams, comm);
		if (rank == 0)
			printf("trained %s with vogn on %d processes, %ld steps: %s, the same "
			       "posterior on every process: %s\n",
			       m->name, size, st.step, argv[2], same ? "yes" : "NO");
		rc = !same;
	}
	bnn_state_free(&st);
	bnn_dataset_free(&ds);
	MPI_Comm_free(&comm);
	MPI_Finalize();
	return rc ? 1 : 0;
}
