/*
 * cli_mpi.h: the processes of a sharded `eval` or `predict` (not installed).
 * Under mpirun every rank runs the same command; cli_mpi.c gives each its
 * rank and gathers each rank's rows of predictions to rank 0 in example
 * order (the ranks agree on failure with bnn_cli_agree, cli_internal.h, so
 * that an error on one rank stops them all, with its message printed once).  Without MPI (a build without
 * --with-mpi, or a program started without mpirun) there is one process of
 * rank 0 and every function is the single-process case.
 */
#ifndef BNN_CLI_MPI_H
#define BNN_CLI_MPI_H

#include "cli_internal.h"

/* This process and its peers. */
struct bnn_cli_world {
	int rank, size;
};

/* Fills w with the rank and size bnn_cli_main found (MPI_COMM_WORLD's
 * under mpirun, else 0 of 1). */
void bnn_cli_shard_world(const struct bnn_cli_args *a, struct bnn_cli_world *w);

/* Collective: rank 0's buf receives every rank's count[r] values of kind
 * (0: float, 1: double) in rank order, its own already at the front; the
 * others send theirs from the front of their buf.  0, or -1 when a count
 * does not fit MPI's int (the ranks fail alike: counts are the same on
 * every rank). */
int bnn_cli_shard_gather(const struct bnn_cli_world *w, void *buf, const long *count, int kind);

#endif
