/* fuzz_ckpt.c: the checkpoint loader under the fuzzer, against the
 * descriptor of a small generated model (t/models/rt_blobs.bnn: 4 inputs,
 * tanh(dense 8), 3 classes).
 *
 * Byte 0, bit 0: the harness rewrites the last 4 bytes of the file with the
 * CRC-32 of the bytes before them, so mutations get past the checksum into
 * the section table and the sections' contents (without it almost every
 * mutated file stops at "bad checksum"); the rest is the file.  Then:
 *   - bnn_ckpt_load, and a checkpoint it accepts must save to the same
 *     bytes (docs/checkpoint.md: "loading a checkpoint and saving it again
 *     gives the same bytes"; any difference aborts);
 *   - bnn_state_load into rt_blobs, and a state it accepts must predict
 *     (at the mean, and with 2 Monte-Carlo samples when it has a σ) on 3
 *     rows: every size the state trusts was checked by the loader.
 */
#include <stdlib.h>
#include <string.h>

#include "bnn.h"
#include "fuzz.h"
#include "oracles.h"
#include "rt_blobs.h"
#include "scratch.h"

/* Whether the file at PATH holds exactly SIZE bytes equal to DATA. */
static int ckpt_same_file(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "rb");
	size_t n = 0;
	int c, same = f != NULL;

	while (same && (c = getc(f)) != EOF)
		same = n < size && c == data[n++];
	if (f)
		fclose(f);
	return same && n == size;
}

static void ckpt_round_trip(const char *path, const uint8_t *file, size_t size)
{
	bnn_ckpt *ck = NULL;
	bnn_err err;
	const char *again = fuzz_scratch_path(2, "again.ckpt");
	int rc = bnn_ckpt_load(path, &ck, &err);

	fuzz_check_enomem(rc, size, "checkpoint loader");
	if (rc != BNN_OK)
		return;
	if (bnn_ckpt_save(ck, again, &err) != BNN_OK || !ckpt_same_file(again, file, size)) {
		fprintf(stderr, "fuzz: a loaded checkpoint saved again differs: %s\n",
		        err.code ? err.message : "other bytes");
		abort();
	}
	bnn_ckpt_free(ck);
}

static void ckpt_predict(const bnn_state *st)
{
	static float x[3 * RT_BLOBS_INPUTS] = { 0, 1, -1, 2, 0.5f, -3, 4, 0, 1e3f, -1e-3f, 7, 1 };
	static float y[3] = { 0, 2, 1 };
	float probs[3 * RT_BLOBS_OUTPUTS];
	double nll;
	bnn_dataset ds;
	bnn_prediction out;
	bnn_err err;

	memset(&ds, 0, sizeof ds);
	ds.n = 3;
	ds.features = RT_BLOBS_INPUTS;
	ds.rank = 1;
	ds.shape[0] = RT_BLOBS_INPUTS;
	ds.targets = 1;
	ds.x = x;
	ds.y = y;
	memset(&out, 0, sizeof out);
	out.probs = probs;
	out.nll = &nll;
	bnn_predict(st, &ds, 0, 1, &out, &err);
	if (st->sigma)
		bnn_predict(st, &ds, 2, 1, &out, &err);
}

int fuzz_ckpt(const uint8_t *data, size_t size)
{
	uint8_t *file;
	size_t n;
	uint32_t crc;
	int rc;
	bnn_state st;
	bnn_err err;
	const char *path;

	if (size < 1)
		return 0;
	n = size - 1;
	if (!(file = malloc(n > 0 ? n : 1)))
		abort();
	memcpy(file, data + 1, n);
	if ((data[0] & 1) && n >= 4) {
		crc = bnn_crc32(0, file, n - 4);
		file[n - 4] = (uint8_t)crc;
		file[n - 3] = (uint8_t)(crc >> 8);
		file[n - 2] = (uint8_t)(crc >> 16);
		file[n - 1] = (uint8_t)(crc >> 24);
	}
	path = fuzz_scratch_write(1, "fuzz.ckpt", file, n);
	ckpt_round_trip(path, file, n);
	rc = bnn_state_load(&st, &rt_blobs_model, path, &err);
	fuzz_check_enomem(rc, n, "checkpoint loader");
	if (rc == BNN_OK) {
		ckpt_predict(&st);
		bnn_state_free(&st);
	}
	free(file);
	fuzz_stdout_check("checkpoint");
	return 0;
}
