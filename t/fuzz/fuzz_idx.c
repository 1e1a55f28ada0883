/* fuzz_idx.c: the IDX reader, plain and gzip, under the fuzzer.
 *
 * Byte 0 chooses: bit 0, gzip-compress the file first (the harness
 * compresses, so that mutations reach the IDX parser behind zlib; raw
 * mutated bytes also reach the gzip checks, since the reader detects gzip
 * by content); bit 1, read images and labels as a data set
 * (bnn_data_load_idx), the file split at byte 1 (labels first, as long as
 * byte 1 says, capped by the size); else the array alone (bnn_idx_read).
 * A failed read must leave its output zeroed (bnn_data.h).
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bnn.h"
#include "fuzz.h"
#include "oracles.h"
#include "scratch.h"

/* Writes SIZE bytes at DATA to scratch file NAME, gzip-compressed when GZ. */
static const char *idx_write(int slot, const char *name, const uint8_t *data, size_t size, int gz)
{
	const char *path;
	gzFile f;

	if (!gz)
		return fuzz_scratch_write(slot, name, data, size);
	path = fuzz_scratch_path(slot, name);
	if (!(f = gzopen(path, "wb")) ||
	    (size > 0 && gzwrite(f, data, (unsigned)size) != (int)size) || gzclose(f) != Z_OK)
		abort();
	return path;
}

static void idx_array(const char *path, size_t size)
{
	bnn_idx idx;
	bnn_err err;
	int rc;

	memset(&idx, 0xa5, sizeof idx); /* the reader must set every field */
	rc = bnn_idx_read(path, &idx, &err);
	fuzz_check_enomem(rc, size, "IDX reader");
	if (rc != BNN_OK && !fuzz_idx_zeroed(&idx))
		abort();
	bnn_idx_free(&idx);
}

static void idx_dataset(const char *images, const char *labels, size_t size)
{
	bnn_dataset ds;
	bnn_err err;
	int rc;

	memset(&ds, 0xa5, sizeof ds);
	rc = bnn_data_load_idx(images, labels, &ds, &err);
	fuzz_check_enomem(rc, size, "IDX reader");
	if (rc == BNN_OK)
		bnn_data_check_labels(&ds, 10, "fuzz", &err);
	else if (!fuzz_dataset_zeroed(&ds))
		abort();
	bnn_dataset_free(&ds);
}

int fuzz_idx(const uint8_t *data, size_t size)
{
	int gz;
	size_t nlab;

	if (size < 2)
		return 0;
	gz = data[0] & 1;
	if (data[0] & 2) {
		nlab = data[1] < size - 2 ? data[1] : size - 2;
		idx_dataset(idx_write(2, "images.idx", data + 2 + nlab, size - 2 - nlab, gz),
		            idx_write(1, "labels.idx", data + 2, nlab, gz), size);
	} else {
		idx_array(idx_write(1, "array.idx", data + 1, size - 1, gz), size);
	}
	fuzz_stdout_check("IDX reader");
	return 0;
}
