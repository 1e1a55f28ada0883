/*
 * cli_mpi.c: the driver's processes under mpirun: the agreement on failure
 * of every command (bnn_cli_agree, bnn_cli_finish: cli_internal.h), and
 * for a sharded `eval` or `predict` (cli_mpi.h) the gather of predictions
 * to rank 0.  Built with MPI (BNN_HAVE_MPI,
 * ./configure --with-mpi) these are MPI_COMM_WORLD's; otherwise there is
 * one process and agreement is returning one's own status.  An error must
 * never leave a rank waiting in a collective the failed rank will not
 * enter: each rank calls bnn_cli_agree() at the same points whether it
 * failed or not, and stops after it when any rank failed.
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

int bnn_cli_agree(const struct bnn_cli_args *a, int status)
{
	struct bnn_cli_said none = { "", 0 }, *said = a->said ? a->said : &none;
	int agreed = status;

	if (a->ranks <= 1)
		return status;
#ifdef BNN_HAVE_MPI
	{
		/* one MPI_MINLOC reduction of (the rank if it failed, else N; its
		 * status): the lowest failed rank R and R's status */
		struct {
			int rank, status;
		} mine = { status ? a->rank : a->ranks, status }, all;
		char text[BNN_CLI_MSG_MAX];

		MPI_Allreduce(&mine, &all, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
		agreed = all.rank < a->ranks ? all.status : BNN_CLI_OK;
		if (agreed && all.rank > 0) { /* rank 0 printed its own when it failed */
			if (a->rank == all.rank) {
				MPI_Send(said->held, (int)sizeof said->held, MPI_CHAR, 0, 0,
				         MPI_COMM_WORLD);
			} else if (a->rank == 0) {
				MPI_Recv(text, (int)sizeof text, MPI_CHAR, all.rank, 0,
				         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				text[sizeof text - 1] = '\0';
				if (text[0])
					fprintf(stderr, "%s: rank %d of %d: %s\n", a->prog,
					        all.rank, a->ranks, text);
				if (text[0] && agreed == BNN_CLI_USAGE)
					fprintf(stderr, "Try '%s --help'.\n", a->prog);
			}
		}
	}
#endif
	said->held[0] = '\0'; /* R's message is out; the others' are not printed */
	if (agreed)
		said->stopped = 1;
	return agreed;
}

int bnn_cli_finish(const struct bnn_cli_args *a, int status)
{
	if (a->ranks > 1 && a->said && !a->said->stopped)
		(void)bnn_cli_agree(a, status);
	return status;
}

int bnn_cli_shard_gather(const struct bnn_cli_args *a, void *buf, const long *count, int kind)
{
	int r;

	for (r = 0; r < a->ranks; r++)
		if (count[r] < 0 || count[r] > INT_MAX)
			return -1;
#ifdef BNN_HAVE_MPI
	if (a->ranks > 1) {
		MPI_Datatype type = kind ? MPI_DOUBLE : MPI_FLOAT;
		int *counts = NULL, *displs = NULL, rc = 0;
		long total = 0;
		if (a->rank == 0) {
			counts = malloc((size_t)a->ranks * sizeof *counts);
			displs = malloc((size_t)a->ranks * sizeof *displs);
			if (!counts || !displs) {
				free(counts);
				free(displs);
				MPI_Abort(MPI_COMM_WORLD, 1); /* the others wait in MPI_Gatherv */
			}
			for (r = 0; r < a->ranks; r++) {
				if (total > INT_MAX)
					rc = -1;
				counts[r] = (int)count[r];
				displs[r] = (int)(total > INT_MAX ? 0 : total);
				total += count[r];
			}
		}
		MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
		if (rc == 0)
			MPI_Gatherv(a->rank == 0 ? MPI_IN_PLACE : buf, (int)count[a->rank], type,
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
