/*
 * cli_mpi.h: the processes of a sharded `eval` or `predict` (not installed).
 * Under mpirun every rank runs the same command; cli_mpi.c gives each its
 * rank, lets the ranks agree on failure (so that an error on one rank stops
 * them all, with its message printed once), and gathers each rank's rows of
 * predictions to rank 0 in example order.  Without MPI (a build without
 * --with-mpi, or a program started without mpirun) there is one process of
 * rank 0 and every function is the single-process case.
 */
#ifndef BNN_CLI_MPI_H
#define BNN_CLI_MPI_H

#include "cli_internal.h"

/* The longest message a failed rank hands to the others. */
#define BNN_CLI_MSG_MAX 1024

/* This process and its peers. */
struct bnn_cli_world {
	int rank, size;
};

/* Fills w, starting MPI first when the program was built with it, a
 * launcher (mpirun) started it and nobody has started MPI yet (then it is
 * finalised at exit).  0, or BNN_CLI_FAIL after a message when MPI cannot
 * start. */
int bnn_cli_shard_world(const struct bnn_cli_args *a, struct bnn_cli_world *w);

/* Collective: every rank passes its status rc (BNN_CLI_OK or an exit
 * status) and, when it failed, its message (NULL: it printed it itself).
 * Rank 0 prints "PROG: MESSAGE" for the lowest failing rank (prefixed with
 * "rank R of N: " when that is not rank 0); every rank returns the largest
 * status of all. */
int bnn_cli_shard_agree(const struct bnn_cli_world *w, const struct bnn_cli_args *a, int rc,
                        const char *msg);

/* Collective: rank 0's buf receives every rank's count[r] values of kind
 * (0: float, 1: double) in rank order, its own already at the front; the
 * others send theirs from the front of their buf.  0, or -1 when a count
 * does not fit MPI's int (the ranks fail alike: counts are the same on
 * every rank). */
int bnn_cli_shard_gather(const struct bnn_cli_world *w, void *buf, const long *count, int kind);

#endif
