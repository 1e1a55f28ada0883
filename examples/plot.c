/*
 * plot.c: draws charts from CSV files with libbnn's SVG writer
 * (bnn_plot.h), so that the example scripts can plot what they computed
 * without any other tool (docs/examples.md).
 *
 *   plot curves OUT.svg [--title T] [--xlabel L] [--ylabel L]
 *                       [--out-csv FILE] SERIES...
 *   where SERIES... is one or more groups
 *       --csv IN.csv  then any of
 *       --line X,Y[,NAME]          a line through the points (x, y)
 *       --points X,Y[,NAME]        a marker per point
 *       --band X,Y,LO,HI[,NAME]    a line with a filled band from LO to HI
 *
 * X, Y, LO and HI name columns of the CSV file given by the last --csv
 * before them (a header row of names, then numbers: the format of the
 * library's CSV reader, docs/data.md).  NAME is the legend text (the rest
 * of the argument, so it may contain commas; without it the series has no
 * legend entry).  Series are drawn in the order given, in the colours of
 * the library's palette; lines and bands join the rows in file order, so
 * their file should be sorted by X.  The chart's data go to OUT.csv (or
 * --out-csv FILE) in bnn_plot_curves()'s format (series,x,y,lower,upper).
 *
 * It is deliberately small: one chart kind (bnn_plot_curves), everything
 * else is the library's.  Exit status: 0 success, 1 a file could not be
 * read or written, 2 a usage error.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"

#define PL_OK         0
#define PL_FAIL       1
#define PL_USAGE      2
#define PL_MAX_FILES  8
#define PL_MAX_SERIES 32

static const char *pl_prog = "plot";

static void pl_help(void)
{
	printf("Usage: %s curves OUT.svg [--title T] [--xlabel L] [--ylabel L]\n"
	       "                   [--out-csv FILE] (--csv IN.csv SERIES...)...\n"
	       "Draw lines, points and bands from columns of CSV files as an SVG chart.\n"
	       "\n"
	       "SERIES, each naming columns of the last --csv file:\n"
	       "  --line X,Y[,NAME]        a line through the points (X, Y), in file order\n"
	       "  --points X,Y[,NAME]      a marker at each point\n"
	       "  --band X,Y,LO,HI[,NAME]  a line (X, Y) over a filled band from LO to HI\n"
	       "NAME (the rest of the argument) is the legend text; without it, no legend.\n"
	       "--out-csv FILE  where the chart's data go (default: OUT with .csv for .svg).\n"
	       "Exit status: 0 on success, 1 when a file cannot be read or written,\n"
	       "2 on a usage error.\n",
	       pl_prog);
}

static int pl_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int pl_usage(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", pl_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", pl_prog);
	return PL_USAGE;
}

/* The chart being built: the CSV files read and the series drawn from them. */
struct pl_chart {
	bnn_dataset files[PL_MAX_FILES]; /* every --csv, read as features only */
	const char *paths[PL_MAX_FILES]; /* their names, for messages */
	int nfiles;
	bnn_plot_curve series[PL_MAX_SERIES];
	double *columns[PL_MAX_SERIES][4]; /* owned x, y, lower, upper of each */
	int nseries;
};

static void pl_chart_free(struct pl_chart *c)
{
	int i, j;

	for (i = 0; i < c->nfiles; i++)
		bnn_dataset_free(&c->files[i]);
	for (i = 0; i < c->nseries; i++)
		for (j = 0; j < 4; j++)
			free(c->columns[i][j]);
}

/* Copies the column called name (len bytes) of the last file into a new
 * array of doubles at *out; a usage error when there is no such column. */
static int pl_column(struct pl_chart *c, const char *name, size_t len, double **out)
{
	const bnn_dataset *ds = &c->files[c->nfiles - 1];
	long j, i;

	for (j = 0; j < ds->features; j++)
		if (strlen(ds->columns[j]) == len && memcmp(ds->columns[j], name, len) == 0)
			break;
	if (j == ds->features) {
		fprintf(stderr, "%s: %s has no column '%.*s'; its columns are:", pl_prog,
		        c->paths[c->nfiles - 1], (int)len, name);
		for (i = 0; i < ds->features; i++)
			fprintf(stderr, " %s", ds->columns[i]);
		fputc('\n', stderr);
		return PL_USAGE;
	}
	*out = malloc((size_t)ds->n * sizeof **out);
	if (!*out) {
		fprintf(stderr, "%s: out of memory\n", pl_prog);
		return PL_FAIL;
	}
	for (i = 0; i < ds->n; i++)
		(*out)[i] = ds->x[i * ds->features + j];
	return PL_OK;
}

/* Adds the series of option opt ("--line", "--points", "--band") described
 * by spec ("X,Y[,NAME]" or "X,Y,LO,HI[,NAME]"). */
static int pl_series(struct pl_chart *c, const char *opt, const char *spec)
{
	int band = strcmp(opt, "--band") == 0, ncols = band ? 4 : 2, k, rc;
	const char *s = spec;
	bnn_plot_curve *sc;
	double **cols;

	if (c->nfiles == 0)
		return pl_usage("%s %s: give the CSV file first with --csv", opt, spec);
	if (c->nseries == PL_MAX_SERIES)
		return pl_usage("at most %d series", PL_MAX_SERIES);
	/* counted now, so that pl_chart_free() releases the columns read even
	 * when a later one fails */
	cols = c->columns[c->nseries];
	sc = &c->series[c->nseries++];
	memset(sc, 0, sizeof *sc);
	for (k = 0; k < ncols; k++) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s);
		if (len == 0 || (!comma && k < ncols - 1))
			return pl_usage("%s takes %s, not '%s'", opt,
			                band ? "X,Y,LO,HI[,NAME]" : "X,Y[,NAME]", spec);
		if ((rc = pl_column(c, s, len, &cols[k])))
			return rc;
		s = comma ? comma + 1 : s + len;
	}
	sc->name = *s ? s : NULL;
	sc->n = c->files[c->nfiles - 1].n;
	sc->x = cols[0];
	sc->y = cols[1];
	sc->lower = cols[2]; /* NULL unless a band */
	sc->upper = cols[3];
	sc->style = strcmp(opt, "--points") == 0 ? BNN_PLOT_POINTS : BNN_PLOT_LINE;
	return PL_OK;
}

static int pl_curves(int argc, char **argv)
{
	const char *out, *title = NULL, *xlabel = NULL, *ylabel = NULL, *out_csv = NULL;
	struct pl_chart c;
	bnn_plot_curves_options text;
	bnn_err err;
	int i, rc = PL_OK;

	if (argc < 1)
		return pl_usage("curves: the output file OUT.svg is missing");
	out = argv[0];
	memset(&c, 0, sizeof c);
	for (i = 1; i < argc && rc == PL_OK; i++) {
		const char *opt = argv[i], *val;
		if (i + 1 >= argc) {
			rc = pl_usage("option '%s' needs a value", opt);
			break;
		}
		val = argv[++i];
		if (strcmp(opt, "--title") == 0) {
			title = val;
		} else if (strcmp(opt, "--xlabel") == 0) {
			xlabel = val;
		} else if (strcmp(opt, "--ylabel") == 0) {
			ylabel = val;
		} else if (strcmp(opt, "--out-csv") == 0) {
			out_csv = val;
		} else if (strcmp(opt, "--csv") == 0) {
			if (c.nfiles == PL_MAX_FILES) {
				rc = pl_usage("at most %d --csv files", PL_MAX_FILES);
			} else if (bnn_data_load_csv(val, NULL, &c.files[c.nfiles], &err)) {
				fprintf(stderr, "%s: %s\n", pl_prog, err.message);
				rc = PL_FAIL;
			} else {
				c.paths[c.nfiles++] = val;
			}
		} else if (strcmp(opt, "--line") == 0 || strcmp(opt, "--points") == 0 ||
		           strcmp(opt, "--band") == 0) {
			rc = pl_series(&c, opt, val);
		} else {
			rc = pl_usage("unknown option '%s'", opt);
		}
	}
	if (rc == PL_OK && c.nseries == 0)
		rc = pl_usage("curves: no series to draw (--line, --points or --band)");
	text.title = title;
	text.xlabel = xlabel;
	text.ylabel = ylabel;
	if (rc == PL_OK && bnn_plot_curves(out, out_csv, c.series, c.nseries, &text, &err)) {
		fprintf(stderr, "%s: %s\n", pl_prog, err.message);
		rc = err.code == BNN_EINVAL ? PL_USAGE : PL_FAIL;
	}
	pl_chart_free(&c);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return pl_usage("no command given: use curves");
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		pl_help();
		return PL_OK;
	}
	if (strcmp(argv[1], "curves") == 0)
		return pl_curves(argc - 2, argv + 2);
	return pl_usage("unknown command '%s': use curves", argv[1]);
}
