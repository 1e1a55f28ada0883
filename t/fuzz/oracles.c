/* oracles.c: the shared checks of the fuzzing entry points (oracles.h).
 * Field by field, not memcmp: padding bytes need not be zero. */
#include <stdio.h>
#include <stdlib.h>

#include "oracles.h"

int fuzz_dataset_zeroed(const bnn_dataset *ds)
{
	int i;

	for (i = 0; i < BNN_DATA_MAX_RANK; i++)
		if (ds->shape[i])
			return 0;
	return !ds->n && !ds->features && !ds->rank && !ds->targets && !ds->x && !ds->y &&
	       !ds->columns;
}

int fuzz_idx_zeroed(const bnn_idx *idx)
{
	int i;

	for (i = 0; i < BNN_DATA_MAX_RANK; i++)
		if (idx->dims[i])
			return 0;
	return !idx->type && !idx->rank && !idx->count && !idx->data;
}

void fuzz_check_enomem(int rc, size_t size, const char *reader)
{
	if (rc == BNN_ENOMEM && size < FUZZ_SMALL_INPUT) {
		fprintf(stderr, "fuzz: the %s ran out of memory on %zu bytes of input\n", reader,
		        size);
		abort();
	}
}
