/*
 * cli_mpi.c: the processes of a sharded `eval` or `predict` (cli_mpi.h):
 * rank and size, agreement on failure, and the gather of predictions to
 * rank 0.  Built with MPI (BNN_HAVE_MPI, ./configure --with-mpi) these are
 * MPI_COMM_WORLD's; otherwise there is one process and agreement is
 * printing one's own message.  An error must never leave a rank waiting in
 * a collective the failed rank will not enter: each rank calls
 * bnn_cli_shard_agree() at the same points whether it failed or not, and stops
 * after it when any rank failed.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef BNN_HAVE_MPI
#include <mpi.h>
#endif

#include "cli_mpi.h"

#ifdef BNN_HAVE_MPI
/* Whether a launcher (Open MPI's mpirun, a PMI/PMIx one such as srun)
 * started this process: otherwise MPI is not started for one process. */
static int cli_mpi_launched(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_SIZE");
}

static void cli_mpi_finalize(void)
{
	int done = 0;

	MPI_Finalized(&done);
	if (!done)
		MPI_Finalize();
}
#endif

int bnn_cli_shard_world(const struct bnn_cli_args *a, struct bnn_cli_world *w)
{
	w->rank = 0;
	w->size = 1;
#ifdef BNN_HAVE_MPI
	{
		int started = 0, provided;
		MPI_Initialized(&started);
		if (!started && !cli_mpi_launched())
			return BNN_CLI_OK; /* a program run by hand: one process */
		if (!started) {
			if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) !=
			    MPI_SUCCESS)
				return bnn_cli_error(a, "MPI cannot start");
			atexit(cli_mpi_finalize);
		}
		MPI_Comm_rank(MPI_COMM_WORLD, &w->rank);
		MPI_Comm_size(MPI_COMM_WORLD, &w->size);
	}
#else
	(void)a;
#endif
	return BNN_CLI_OK;
}

int bnn_cli_shard_agree(const struct bnn_cli_world *w, const struct bnn_cli_args *a, int rc,
                        const char *msg)
{
	int worst = rc, first = rc ? w->rank : w->size;
	char text[BNN_CLI_MSG_MAX];

	memset(text, 0, sizeof text);
	if (rc && msg)
		snprintf(text, sizeof text, "%s", msg);
#ifdef BNN_HAVE_MPI
	if (w->size > 1) {
		int mine[2] = { rc, -(rc ? w->rank : w->size) }, all[2];
		/* one MAX reduction: the largest status and the lowest failed rank */
		MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
		worst = all[0];
		first = -all[1];
		if (worst && first != 0 && first < w->size) { /* the message travels to rank 0 */
			if (w->rank == first)
				MPI_Send(text, (int)sizeof text, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
			else if (w->rank == 0)
				MPI_Recv(text, (int)sizeof text, MPI_CHAR, first, 0, MPI_COMM_WORLD,
				         MPI_STATUS_IGNORE);
		}
	}
#endif
	text[sizeof text - 1] = '\0';
	if (worst && w->rank == 0 && first < w->size && text[0]) { /* "": printed already */
		if (first == 0)
			bnn_cli_error(a, "%s", text);
		else
			bnn_cli_error(a, "rank %d of %d: %s", first, w->size, text);
	}
	return worst;
}

int bnn_cli_shard_gather(const struct bnn_cli_world *w, void *buf, const long *count, int kind)
{
	int r;

	for (r = 0; r < w->size; r++)
		if (count[r] < 0 || count[r] > INT_MAX)
			return -1;
#ifdef BNN_HAVE_MPI
	if (w->size > 1) {
		MPI_Datatype type = kind ? MPI_DOUBLE : MPI_FLOAT;
		int *counts = NULL, *displs = NULL, rc = 0;
		long total = 0;
		if (w->rank == 0) {
			counts = malloc((size_t)w->size * sizeof *counts);
			displs = malloc((size_t)w->size * sizeof *displs);
			if (!counts || !displs) {
				free(counts);
				free(displs);
				MPI_Abort(MPI_COMM_WORLD, 1); /* the others wait in MPI_Gatherv */
			}
			for (r = 0; r < w->size; r++) {
				if (total > INT_MAX)
					rc = -1;
				counts[r] = (int)count[r];
				displs[r] = (int)(total > INT_MAX ? 0 : total);
				total += count[r];
			}
		}
		MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
		if (rc == 0)
			MPI_Gatherv(w->rank == 0 ? MPI_IN_PLACE : buf, (int)count[w->rank], type,
			            buf, counts, displs, type, 0, MPI_COMM_WORLD);
		free(counts);
		free(displs);
		return rc;
	}
#else
	(void)buf;
	(void)kind;
#endif
	return 0;
}
