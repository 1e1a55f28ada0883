/*
 * distributed.h: data-parallel training over MPI, as the trainer's files
 * see it (not installed; docs/distributed.md).  distributed.c resolves
 * the communicator of a bnn_train call, splits each global minibatch
 * across the ranks, sums the quantities of a step over them (weighted so
 * that the sum is the global mean), agrees on errors, and writes nothing:
 * checkpoints are rank 0's business (train.c).  Without ./configure
 * --with-mpi every function here is the one-process case (rank 0 of 1)
 * and no file includes mpi.h.  The public helpers (bnn_dist_*: rank, size,
 * agreement, sums) are declared in bnn_train.h.
 */
#ifndef BNN_TRAIN_DISTRIBUTED_H
#define BNN_TRAIN_DISTRIBUTED_H

#include "bnn.h"

struct trainer;

/* Resolves comm (a pointer to an MPI_Comm, or NULL: MPI_COMM_WORLD when
 * MPI is initialised, else one process) into t->dist, t->rank, t->nranks
 * and allocates what the step's reduction needs.  A library built without
 * MPI refuses a non-NULL comm (BNN_EUNSUPPORTED). */
int train_dist_setup(struct trainer *t, const void *comm, bnn_err *err);

/* Appends to the settings text buf (of n characters) the line that says
 * how a run over several processes splits its minibatches and sums its
 * steps; nothing for one process.  Returns the new length. */
int train_dist_text(const struct trainer *t, char *buf, int n);

/* Frees what train_dist_setup allocated. */
void train_dist_free(struct trainer *t);

/* The rows of a global minibatch of b examples that this rank trains on:
 * [*first, *first + *count).  b = q·N + r: the first r ranks take q + 1
 * rows, the others q. */
void train_dist_rows(const struct trainer *t, long b, long *first, long *count);

/* A zeroed array of n floats for a step's sums (train_dist_step): on one
 * machine, when the sums wait for the end of the pass, the first three of
 * nparams floats are this rank's arrays in the shared-memory window,
 * summed there; any other is bnn_floats_zeroed's.  NULL: out of memory.
 * Give it back with train_dist_release. */
float *train_dist_floats(struct trainer *t, long n);

/* Frees an array of train_dist_floats (or of malloc, or NULL). */
void train_dist_release(struct trainer *t, float *a);

/* Before a pass whose outputs are the step's arrays (a, b, c as given to
 * train_dist_step after it): the generated code's bnn_pass.ready starts
 * each layer's sum as soon as its backward pass is done.  Does nothing for
 * one process, or with whvi layers (their KL gradient is added after the
 * pass). */
void train_dist_arm(struct trainer *t, float *a, float *b, float *c);

/*
 * The reduction after a step's passes: each of the arrays given (NULL:
 * none; every rank passes the same ones), nparams floats each holding this
 * rank's mean over its t->rows examples, is scaled by rows / global_rows
 * and summed over the ranks in place, so that it holds the global mean;
 * loss (this rank's summed NLL) is summed as it is.  Returns the summed
 * loss.  One process: returns loss and touches nothing.  The requests
 * are nonblocking and all complete before it returns.
 */
double train_dist_step(struct trainer *t, double loss, float *a, float *b, float *c);

/* Agrees on a status (a collective call): returns on every rank the code of
 * the lowest rank that failed, with that rank's message in err ("rank R
 * of N: ..."), or BNN_OK when every rank passed BNN_OK.  A failure agreed
 * on again (after a divergence, rank 0's save) keeps its one prefix. */
int train_dist_agree(struct trainer *t, int rc, bnn_err *err);

/* The running statistics of batchnorm layers averaged over the ranks (at
 * every epoch end), so that every rank holds the same state. */
void train_dist_mean_stats(struct trainer *t);

/* Sums n doubles over the ranks in place (validation NLL and counts). */
void train_dist_sum(struct trainer *t, double *v, int n);

#endif
