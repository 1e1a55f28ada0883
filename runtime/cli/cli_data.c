/*
 * cli_data.c: the driver's data loading.  A file whose name ends in .csv
 * is CSV (header row, targets by column name, default the last columns);
 * anything else is IDX, plain or gzip, with labels from a second IDX file.
 * Every mismatch with the model is reported with the file's name, and so
 * is an integer id outside the vocabulary of a model of ids (at load time:
 * line and column for CSV, example and value for IDX, whose u8 ids are
 * not scaled as images are).  A CSV file without its target column, which
 * the command needs, is named as such, and an IDX file that cannot be
 * opened before its labels are asked for.
 *
 * A command that does not use targets (predict; eval's --ood data) loads
 * none: a CSV file's target columns are recognised, so that they are not
 * taken for features, but their fields are not read (empty, text, NaN
 * or a label outside the model's classes are all accepted), and an IDX
 * label file is read and checked as one (rank 1, an integer type, one
 * label per image) but its labels are then dropped unchecked.
 *
 * It also keeps the training CSV file's column names with a checkpoint
 * (bnn_cli_columns_text, the section "columns" of bnn_state) and checks
 * later CSV headers against them (bnn_cli_check_columns: the feature
 * columns' names in order), which cli.c does for every command that reads
 * data with --load and cli_train.c for --valid.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
	else if (m->input_rank == 2)
		snprintf(buf, size, "%s[%ld, %ld]", m->input_name, m->input_shape[0],
		         m->input_shape[1]);
	else
		snprintf(buf, size, "%s[%ld]", m->input_name, m->input_shape[0]);
}

/* An example's stored dimensions, "28 x 28". */
static void cli_data_dims(const bnn_dataset *ds, char *buf, size_t size)
{
	int i;

	buf[0] = '\0';
	for (i = 0; i < ds->rank; i++)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%ld", i ? " x " : "",
		         ds->shape[i]);
}

/*
 * Whether the stored examples have the model's input shape: the same
 * dimensions once the 1s are dropped from both (28 x 28 images fit
 * img[1, 28, 28], IDX examples of 3 x 100 fit x[3, 100]: the values lie in
 * the same order).  Examples stored as
 * flat vectors (rank 1), and any data for a vector input, fit on their
 * number of values alone.
 */
static int cli_shape_fits(const bnn_model *m, const bnn_dataset *ds)
{
	int i = 0, j = 0;

	if (m->input_rank == 1 || ds->rank <= 1)
		return 1;
	for (;;) {
		while (i < ds->rank && ds->shape[i] == 1)
			i++;
		while (j < m->input_rank && m->input_shape[j] == 1)
			j++;
		if (i == ds->rank || j == m->input_rank)
			return i == ds->rank && j == m->input_rank;
		if (ds->shape[i++] != m->input_shape[j++])
			return 0;
	}
}

/* Checks IDX examples against the model's input: their number of values,
 * then their shape. */
static int cli_check_idx_shape(const bnn_model *m, const char *data, const bnn_dataset *ds,
                               bnn_err *err)
{
	char shape[128], dims[128];

	cli_input_shape(m, shape, sizeof shape);
	cli_data_dims(ds, dims, sizeof dims);
	if (ds->features != m->inputs)
		return bnn_fail(err, BNN_EMISMATCH,
		                "%s: each example has %ld value%s%s%s%s, but model '%s' takes %ld "
		                "(input %s)",
		                data, ds->features, ds->features == 1 ? "" : "s",
		                ds->rank > 1 ? " (" : "", ds->rank > 1 ? dims : "",
		                ds->rank > 1 ? ")" : "", m->name, m->inputs, shape);
	if (!cli_shape_fits(m, ds))
		return bnn_fail(err, BNN_EMISMATCH,
		                "%s: each example is %s, but model '%s' takes input %s (%s)", data,
		                dims, m->name, shape,
		                m->input_rank == 2 ? "channels, length"
		                                   : "channels, height, width");
	return BNN_OK;
}

/* A CSV file read without its target column, which the command needs:
 * the message names the column (the one --target named, else the model's
 * target) and frees ds. */
static int cli_no_target(const bnn_model *m, const char *data, const char *target, bnn_dataset *ds,
                         bnn_err *err)
{
	long n = ds->features;

	bnn_dataset_free(ds);
	return bnn_fail(err, BNN_EFORMAT,
	                "%s: no target column '%s': the file has %ld column%s, as many as the "
	                "model's features, and none left for the target (the last column, or "
	                "the one --target names)",
	                data, target ? target : m->target_name, n, n == 1 ? "" : "s");
}

/* Whether data can be opened for reading: 0, or BNN_EIO with the
 * readers' message ("FILE: cannot open: REASON"). */
static int cli_openable(const char *data, bnn_err *err)
{
	FILE *f;

	errno = 0;
	if ((f = fopen(data, "rb")) != NULL) {
		fclose(f);
		return BNN_OK;
	}
	return bnn_fail(err, BNN_EIO, "%s: cannot open: %s", data, strerror(errno ? errno : EIO));
}

/* Whether the file data, which is read as IDX for not ending in .csv,
 * starts with a line of text holding a comma: a CSV file under another
 * name (data.txt), which the IDX reader would refuse by its magic bytes,
 * and for which asking for --labels would mislead. */
static int cli_csv_in_disguise(const char *data)
{
	unsigned char head[256];
	size_t n, i;
	int comma = 0;
	struct stat st;
	FILE *f;

	if (stat(data, &st) != 0 || !S_ISREG(st.st_mode))
		return 0; /* a pipe (/dev/stdin): reading would consume it */
	if (!(f = fopen(data, "rb")))
		return 0;
	n = fread(head, 1, sizeof head, f);
	fclose(f);
	for (i = 0; i < n && head[i] != '\n'; i++) {
		if (head[i] == ',')
			comma = 1;
		else if (head[i] < 0x20 && head[i] != '\t' && head[i] != '\r')
			return 0; /* a control byte: binary (IDX starts with two NULs) */
	}
	return comma;
}

const char *bnn_cli_target(const struct bnn_cli_args *a, const char *path)
{
	return a->target_chosen && path && !cli_is_csv(path) ? NULL : a->target;
}

/* The option that names the labels of the data file `data` (--valid's
 * are --valid-labels, ...), for the messages. */
static const char *cli_labels_option(const struct bnn_cli_args *a, const char *data)
{
	if (data == a->data)
		return "--labels";
	if (data == a->valid)
		return "--valid-labels";
	if (data == a->ood)
		return "--ood-labels";
	if (data == a->conformal)
		return "--conformal-labels";
	return "--labels";
}

int bnn_cli_load(const bnn_model *m, const struct bnn_cli_args *a, const char *data,
                 const char *labels, int need_targets, bnn_dataset *ds, bnn_err *err)
{
	const char *target = bnn_cli_target(a, data);
	int rc;

	memset(ds, 0, sizeof *ds);
	if (cli_is_csv(data)) {
		bnn_csv_options opt;
		if (labels)
			return bnn_fail(err, BNN_EINVAL,
			                "%s: %s goes with IDX data; a CSV file holds its own "
			                "targets (choose the column with --target)",
			                data, cli_labels_option(a, data));
		memset(&opt, 0, sizeof opt);
		opt.target = target;
		opt.targets = m->targets;
		/* read without targets if the file has none, so that a command
		 * needing them names the missing column */
		opt.targets_optional = 1;
		opt.targets_skipped = !need_targets;
		opt.features = m->inputs;
		rc = bnn_data_load_csv(data, &opt, ds, err);
		if (rc)
			return rc;
		if (need_targets && ds->targets == 0 && m->targets > 0)
			return cli_no_target(m, data, target, ds, err);
	} else {
		if (target)
			return bnn_fail(
			        err, BNN_EINVAL,
			        "%s: --target names a CSV column, but this is not a .csv file",
			        data);
		if ((rc = cli_openable(data, err)))
			return rc;
		if (cli_csv_in_disguise(data))
			return bnn_fail(
			        err, BNN_EFORMAT,
			        "%s: a file whose name does not end in .csv is read as IDX, "
			        "and this one holds comma-separated text: name a CSV file "
			        "*.csv",
			        data);
		if (need_targets && !labels)
			return bnn_fail(err, BNN_EINVAL,
			                "%s: IDX data needs its labels: give %s FILE", data,
			                cli_labels_option(a, data));
		rc = m->input_vocab > 0 ? bnn_data_load_idx_ids(data, labels, ds, err)
		                        : bnn_data_load_idx(data, labels, ds, err);
		if (rc)
			return rc;
		if ((rc = cli_check_idx_shape(m, data, ds, err))) {
			bnn_dataset_free(ds);
			return rc;
		}
		if (!need_targets && ds->targets > 0) { /* read, not used */
			free(ds->y);
			ds->y = NULL;
			ds->targets = 0;
		}
	}
	if ((rc = bnn_model_check_inputs(m, ds, data, err))) {
		bnn_dataset_free(ds);
		return rc;
	}
	if (ds->targets > 0 && ds->targets != m->targets) {
		rc = bnn_fail(err, BNN_EMISMATCH,
		              "%s: %ld target value%s per example, but model '%s' needs %ld ('%s')",
		              labels ? labels : data, ds->targets, ds->targets == 1 ? "" : "s",
		              m->name, m->targets, m->target_name);
		bnn_dataset_free(ds);
		return rc;
	}
	if (ds->targets > 0) {
		rc = bnn_model_check_targets(m, ds, labels ? labels : data, err);
		if (rc) {
			bnn_dataset_free(ds);
			return rc;
		}
	}
	return BNN_OK;
}

/* ---- the training file's column names (the checkpoint's section
 * "columns": "target=NAME" and "feature=NAME" lines in file order) ---- */

char *bnn_cli_columns_text(const bnn_dataset *ds)
{
	size_t size = 1;
	char *text, *p;
	long i;

	if (!ds->columns || !ds->target_columns)
		return NULL; /* IDX data: no names */
	for (i = 0; i < ds->targets; i++)
		size += strlen("target=\n") + strlen(ds->target_columns[i]);
	for (i = 0; i < ds->features; i++)
		size += strlen("feature=\n") + strlen(ds->columns[i]);
	if (!(p = text = malloc(size)))
		return NULL;
	for (i = 0; i < ds->targets; i++)
		p += sprintf(p, "target=%s\n", ds->target_columns[i]);
	for (i = 0; i < ds->features; i++)
		p += sprintf(p, "feature=%s\n", ds->columns[i]);
	return text;
}

int bnn_cli_columns_parse(const char *text, struct bnn_cli_columns *c)
{
	size_t len = strlen(text);
	char *line, *next, *t;
	long lines = 1;
	const char *p;

	memset(c, 0, sizeof *c);
	for (p = text; *p; p++)
		lines += *p == '\n';
	c->text = malloc(len + 1);
	c->target = calloc(len + 1, 1);
	c->features = calloc((size_t)lines, sizeof *c->features);
	if (!c->text || !c->target || !c->features) {
		bnn_cli_columns_free(c);
		return BNN_ENOMEM;
	}
	memcpy(c->text, text, len + 1);
	for (line = c->text, t = c->target; line && *line; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (strncmp(line, "feature=", 8) == 0)
			c->features[c->nfeatures++] = line + 8;
		else if (strncmp(line, "target=", 7) == 0)
			t += sprintf(t, "%s%s", t == c->target ? "" : ",", line + 7);
	}
	return BNN_OK;
}

void bnn_cli_columns_free(struct bnn_cli_columns *c)
{
	free(c->text);
	free(c->target);
	free(c->features);
	memset(c, 0, sizeof *c);
}

int bnn_cli_has_columns(const bnn_model *m, const char *path, const char *names)
{
	bnn_csv_options opt;
	bnn_dataset ds;
	bnn_err ignored;
	int has;

	if (!path || !cli_is_csv(path))
		return 0;
	memset(&opt, 0, sizeof opt);
	opt.target = names;
	opt.targets = m->targets;
	opt.targets_optional = 1; /* features 0: whatever number the file has */
	if (bnn_data_csv_header(path, &opt, &ds, &ignored))
		return 0;
	has = ds.targets > 0;
	bnn_dataset_free(&ds);
	return has;
}

int bnn_cli_check_columns(const bnn_model *m, const char *path, const char *target,
                          const struct bnn_cli_columns *c, bnn_err *err)
{
	bnn_csv_options opt;
	bnn_dataset ds;
	bnn_err ignored;
	int rc;

	if (!path || !cli_is_csv(path) || c->nfeatures == 0)
		return BNN_OK;
	memset(&opt, 0, sizeof opt);
	opt.target = target;
	opt.targets = m->targets;
	opt.targets_optional = 1;
	opt.features = m->inputs;
	/* a header that is wrong in another way is left to the command's
	 * loading, which says so in its own order */
	if (bnn_data_csv_header(path, &opt, &ds, &ignored))
		return BNN_OK;
	bnn_dataset_free(&ds);
	opt.columns = c->features;
	opt.ncolumns = c->nfeatures;
	rc = bnn_data_csv_header(path, &opt, &ds, err);
	bnn_dataset_free(&ds);
	return rc;
}
