/*
 * cli_data.c: the driver's data loading.  A file whose name ends in .csv
 * is CSV (header row, targets by column name, default the last columns);
 * anything else is IDX, plain or gzip, with labels from a second IDX file.
 * Every mismatch with the model is reported with the file's name.
 */
#include <string.h>
#include <strings.h>

#include "cli_internal.h"

static int cli_is_csv(const char *path)
{
	size_t n = strlen(path);
	return n >= 4 && strcasecmp(path + n - 4, ".csv") == 0;
}

static void cli_input_shape(const bnn_model *m, char *buf, size_t size)
{
	if (m->input_rank == 3)
		snprintf(buf, size, "%s[%ld, %ld, %ld]", m->input_name, m->input_shape[0],
		         m->input_shape[1], m->input_shape[2]);
	else
		snprintf(buf, size, "%s[%ld]", m->input_name, m->input_shape[0]);
}

int bnn_cli_load(const bnn_model *m, const char *data, const char *labels, const char *target,
                 int need_targets, bnn_dataset *ds, bnn_err *err)
{
	char shape[128], dims[128] = "";
	int rc, i;

	memset(ds, 0, sizeof *ds);
	cli_input_shape(m, shape, sizeof shape);
	if (cli_is_csv(data)) {
		bnn_csv_options opt;
		if (labels)
			return bnn_fail(err, BNN_EINVAL,
			                "%s: --labels goes with IDX data; a CSV file holds its own "
			                "targets (choose the column with --target)", data);
		memset(&opt, 0, sizeof opt);
		opt.target = target;
		opt.targets = m->targets;
		opt.targets_optional = !need_targets;
		opt.features = m->inputs;
		rc = bnn_data_load_csv(data, &opt, ds, err);
		if (rc)
			return rc;
	} else {
		if (target)
			return bnn_fail(err, BNN_EINVAL,
			                "%s: --target names a CSV column, but this is not a .csv file", data);
		if (need_targets && !labels)
			return bnn_fail(err, BNN_EINVAL,
			                "%s: IDX data needs its labels: give --labels FILE", data);
		rc = bnn_data_load_idx(data, labels, ds, err);
		if (rc)
			return rc;
		if (ds->features != m->inputs) {
			for (i = 0; i < ds->rank; i++)
				snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%s%ld",
				         i ? " x " : " (", ds->shape[i]);
			if (ds->rank > 1)
				strcat(dims, ")");
			else
				dims[0] = '\0';
			rc = bnn_fail(err, BNN_EMISMATCH,
			              "%s: each example has %ld values%s, but model '%s' takes %ld (input %s)",
			              data, ds->features, dims, m->name, m->inputs, shape);
			bnn_dataset_free(ds);
			return rc;
		}
	}
	if (ds->targets > 0 && ds->targets != m->targets) {
		rc = bnn_fail(err, BNN_EMISMATCH,
		              "%s: %ld target values per example, but model '%s' needs %ld ('%s')",
		              labels ? labels : data, ds->targets, m->name, m->targets, m->target_name);
		bnn_dataset_free(ds);
		return rc;
	}
	if (ds->targets > 0 && m->likelihood != BNN_LIKELIHOOD_GAUSSIAN) {
		rc = bnn_data_check_labels(ds, m->likelihood == BNN_LIKELIHOOD_CATEGORICAL ?
		                                   (int)m->outputs : 2,
		                           labels ? labels : data, err);
		if (rc) {
			bnn_dataset_free(ds);
			return rc;
		}
	}
	return BNN_OK;
}
