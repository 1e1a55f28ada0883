/* fuzz_csv.c: the CSV reader under the fuzzer.
 *
 * The first byte chooses the reader's options the way the driver's command
 * lines do (--target NAME, the model's target count and input count,
 * optional targets for predict, targets skipped for predict and eval
 * --ood) and whether the data is then standardised
 * (--standardize: fit and apply) and its labels checked against 3 classes;
 * the rest is the file.  Whatever the options, a reader that fails must
 * leave the data set zeroed (bnn_data.h), which is checked.
 */
#include <stdlib.h>
#include <string.h>

#include "bnn.h"
#include "fuzz.h"
#include "oracles.h"
#include "scratch.h"

/* --target values: none (the last columns), one name, two names, names
 * with blanks and a repeat (refused), a name no seed has. */
static const char *const csv_targets[] = { NULL, "price", "label,y", " y , x ", "a,a", "zz" };

static void csv_options(uint8_t b, bnn_csv_options *opt)
{
	memset(opt, 0, sizeof *opt);
	opt->target = csv_targets[(b & 7) % (sizeof csv_targets / sizeof csv_targets[0])];
	/* 6 and 7, which wrap to the first two targets, skip them (predict,
	 * eval --ood: recognised, not read) */
	opt->targets_skipped = (b & 7) >= 6;
	opt->targets = (b >> 3) & 3;          /* 0..3 */
	opt->targets_optional = (b >> 5) & 1; /* predict */
	opt->features = (b >> 6) & 1 ? 3 : 0; /* a model of 3 inputs, or any */
}

static void csv_use(bnn_dataset *ds, uint8_t b)
{
	bnn_standardizer s;
	bnn_err err;

	if (b & 0x80 && bnn_standardizer_fit(ds, &s, &err) == BNN_OK) {
		bnn_standardizer_apply(&s, ds, &err);
		bnn_standardizer_free(&s);
	}
	if (ds->targets > 0)
		bnn_data_check_labels(ds, 3, "fuzz.csv", &err);
}

int fuzz_csv(const uint8_t *data, size_t size)
{
	bnn_csv_options opt;
	bnn_dataset ds;
	bnn_err err;
	const char *path;
	int rc;

	if (size < 1)
		return 0;
	csv_options(data[0], &opt);
	path = fuzz_scratch_write(1, "fuzz.csv", data + 1, size - 1);
	memset(&ds, 0xa5, sizeof ds); /* the reader must set every field */
	rc = bnn_data_load_csv(path, &opt, &ds, &err);
	fuzz_check_enomem(rc, size, "CSV reader");
	if (rc == BNN_OK)
		csv_use(&ds, data[0]);
	else if (!fuzz_dataset_zeroed(&ds))
		abort(); /* a failed read left something behind */
	bnn_dataset_free(&ds);
	fuzz_stdout_check("CSV reader");
	return 0;
}
