/*
 * cli_mpi.h: the gather of a sharded `eval` or `predict` (not installed).
 * Under mpirun every rank runs the same command on its share of the
 * examples (its rank and the ranks: bnn_cli_args, set by bnn_cli_main);
 * cli_mpi.c gathers each rank's rows of predictions to rank 0 in example
 * order (the ranks agree on failure with bnn_cli_agree, cli_internal.h, so
 * that an error on one rank stops them all, with its message printed
 * once).  Without MPI (a build without --with-mpi, or a program started
 * without mpirun) there is one process of rank 0 and the gather has
 * nothing to do.
 */
#ifndef BNN_CLI_MPI_H
#define BNN_CLI_MPI_H

#include "cli_internal.h"

/* Collective: rank 0's buf receives every rank's count[r] values of kind
 * (0: float, 1: double) in rank order, its own already at the front; the
 * others send theirs from the front of their buf.  0, or -1 when a count
 * does not fit MPI's int (the ranks fail alike: counts are the same on
 * every rank). */
int bnn_cli_shard_gather(const struct bnn_cli_args *a, void *buf, const long *count, int kind);

#endif
