/*
 * bnn_plot.h: charts of evaluation results as standalone SVG files (any
 * browser opens them; no external dependency), each written together with
 * its data as CSV.  Four chart kinds share one SVG writer (plot_svg.c), so
 * every chart has the same canvas and conventions:
 *
 *   bnn_plot_reliability()  reliability diagram: accuracy per confidence bin
 *                           as bars, with the diagonal of perfect
 *                           calibration (VOGN fig. 1 and appendix H)
 *   bnn_plot_pit()          PIT histogram of a regression predictive
 *   bnn_plot_histograms()   normalised histograms of several samples
 *                           overlaid, e.g. the predictive entropy of
 *                           in-distribution and OOD examples (VOGN fig. 5,
 *                           IVON fig. 3)
 *   bnn_plot_curves()       lines or points with optional bands, e.g. the
 *                           1-D regression toy (training points, predictive
 *                           mean, 95% band) or a pruning curve
 *
 * The canvas is 800 × 480 pixels: a plot area with a frame, grid lines,
 * "nice" ticks (1, 2 or 5 × 10^k) with labels, the x and y axis labels,
 * the title above and a legend to the right of the plot area (one entry
 * per named series).  Series are coloured in order from a fixed palette of
 * 8 colours.  Data elements carry a class attribute: `<rect class="bar">`
 * per bar (a bar of height 0 draws nothing), `<polyline class="line">` per
 * line (a line with a single finite point is drawn as a marker),
 * `<path class="band">` per band, `<circle class="point">` per marker.
 *
 * Files.  Each function writes the SVG at path_svg and then the CSV at
 * path_csv, each through bnn_file_replace() (atomic: a file is either
 * replaced whole or left untouched; if the SVG is written and the CSV then
 * fails, the new SVG stays).  path_csv may be NULL: it is then path_svg
 * with a final ".svg" replaced by ".csv" (or ".csv" appended).  CSV files
 * have a header line, comma-separated fields, '\n' line ends, numbers in
 * the shortest form that reads back as the same double ("0.1", "1e-05"),
 * and text fields quoted as RFC 4180 says when they contain a comma, a
 * quote or a line break.  Text (titles, labels, names) is escaped for
 * XML; bytes that are not valid UTF-8 or not allowed in XML become '?'.
 * A NULL or empty title or label draws nothing.
 *
 * Non-finite values.  A point (or value) with a NaN or infinite coordinate
 * is skipped: not drawn, not in the CSV, not counted.  A line joins the
 * finite points around a skipped one.  Data that leaves nothing finite to
 * draw, or an empty series, is BNN_EINVAL.
 *
 * Errors: BNN_EINVAL (with a message naming the function and the series,
 * 0-based) for bad arguments, checked before any file is touched;
 * BNN_EIO ("cannot write plot PATH: reason") when a file cannot be
 * written; BNN_ENOMEM.  docs/plots.md describes the charts and their CSV
 * columns.
 */
#ifndef BNN_PLOT_H
#define BNN_PLOT_H

#include "bnn_core.h"
#include "bnn_metrics.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How bnn_plot_curves() draws a series. */
enum bnn_plot_style {
	BNN_PLOT_LINE = 0,  /* a line through the points, in the order given */
	BNN_PLOT_POINTS = 1 /* a round marker per point */
};

/* One series of bnn_plot_curves().  All arrays are borrowed for the call. */
typedef struct bnn_plot_curve {
	const char *name;    /* legend text and CSV series; NULL: no legend */
	long n;              /* number of points, >= 1 */
	const double *x;     /* n x values (sorted, for a line or a band) */
	const double *y;     /* n y values */
	const double *lower; /* NULL, or n lower ends of a band under it */
	const double *upper; /* NULL, or n upper ends; NULL iff lower is */
	int style;           /* enum bnn_plot_style */
} bnn_plot_curve;

/* One sample of values for bnn_plot_histograms(). */
typedef struct bnn_plot_values {
	const char *name;     /* legend text and CSV series; NULL: no legend */
	const double *values; /* n values, borrowed for the call */
	long n;               /* number of values, >= 1 */
} bnn_plot_values;

/* The options of bnn_plot_histograms(). */
typedef struct bnn_plot_histogram_options {
	int nbins;           /* equal-width bins over the range, >= 1 */
	const double *range; /* NULL: automatic; else {lo, hi}, borrowed */
	const char *xlabel;  /* the x axis label, or NULL */
	const char *title;   /* the chart's title, or NULL */
} bnn_plot_histogram_options;

/* The text of bnn_plot_curves()' chart: each NULL or "" draws nothing. */
typedef struct bnn_plot_curves_options {
	const char *title;  /* above the chart */
	const char *xlabel; /* the x axis label */
	const char *ylabel; /* the y axis label */
} bnn_plot_curves_options;

/**
 * Reliability diagram: for every non-empty bin b of nbins equal-width
 * confidence bins [b/nbins, (b+1)/nbins], a bar as wide as the bin and as
 * high as its accuracy, and the dashed diagonal y = x; both axes [0, 1],
 * labelled "confidence" and "accuracy".
 * CSV columns: bin_lower,bin_upper,count,confidence,accuracy, one row per
 * bin (empty ones included) as bnn_metrics_reliability() filled them.
 * @param bins   nbins bins, e.g. from bnn_metrics_reliability().
 * @param title  the chart's title, or NULL.
 * @return BNN_OK; BNN_EINVAL when a path or bins is NULL, nbins < 1, a
 *         count is negative, every count is 0, or a non-empty bin's conf
 *         or acc is not finite; BNN_EIO; BNN_ENOMEM.
 */
int bnn_plot_reliability(const char *path_svg, const char *path_csv, const bnn_bin *bins, int nbins,
                         const char *title, bnn_err *err);

/**
 * PIT histogram: for every bin b of nbins equal-width bins of [0, 1], a bar
 * as wide as the bin and as high as its density, nbins·fraction[b] (the
 * fractions of bnn_metrics_pit()), and the dashed line y = 1 of a
 * calibrated predictive; x axis [0, 1], y from 0 to the data.
 * CSV columns: bin_lower,bin_upper,fraction,density, one row per bin.
 * @param title  the chart's title, or NULL.
 * @return BNN_OK; BNN_EINVAL when a path or fraction is NULL, nbins < 1,
 *         or a fraction is negative or not finite; BNN_EIO; BNN_ENOMEM.
 */
int bnn_plot_pit(const char *path_svg, const char *path_csv, const double *fraction, int nbins,
                 const char *title, bnn_err *err);

/**
 * Normalised histograms of nseries samples, overlaid as translucent bars
 * over the same nbins equal-width bins of [lo, hi].  Bin b holds the
 * values v with lo + b·w ≤ v < lo + (b+1)·w, w = (hi − lo)/nbins, the last
 * bin also holding v = hi (computed as ⌊(v − lo)/(hi − lo)·nbins⌋).  A
 * bin's height is its count divided by the number of finite values of its
 * series, so each series sums to 1 over the range (less when values fall
 * outside a given range: they are counted in the total but in no bin).
 * The y axis is labelled "fraction of examples".
 * Values that are not finite (NaN, ±∞) are skipped: in no bin and not in
 * the total; a series that had some says so in its legend, "NAME (K of N
 * not finite, not shown)".
 * CSV columns: series,bin_lower,bin_upper,count,fraction, one row per
 * series and bin (empty bins included), series in the order given.
 * @param options  nbins; range: NULL for automatic (the smallest and
 *                 largest finite value of all series; a single value v
 *                 gives [v − ½, v + ½]), or {lo, hi} with lo < hi, both
 *                 finite; xlabel (e.g. "predictive entropy") and title, or
 *                 NULL.
 * @return BNN_OK; BNN_EINVAL when a path, series, options (or a series'
 *         values) is NULL, nseries < 1, nbins < 1, a series has n < 1, the
 *         range is not finite with lo < hi, or no series has a finite
 *         value; BNN_EIO; BNN_ENOMEM.
 */
int bnn_plot_histograms(const char *path_svg, const char *path_csv, const bnn_plot_values *series,
                        int nseries, const bnn_plot_histogram_options *options, bnn_err *err);

/**
 * Lines and points with optional bands: each series is drawn in its colour
 * as a line or as markers; a series with lower/upper also gets a filled
 * band between them (drawn first, below every line and marker).  The axes
 * cover every finite point and band end, widened to whole ticks.
 * CSV columns: series,x,y,lower,upper, one row per point with finite x and
 * y, series in the order given; lower and upper are empty when the series
 * has no band or the end is not finite.
 * @param options  the title and axis labels, or NULL for none.
 * @return BNN_OK; BNN_EINVAL when a path or series (or a series' x or y) is
 *         NULL, nseries < 1, a series has n < 1, exactly one of lower and
 *         upper is NULL, a style is not an enum bnn_plot_style, or nothing
 *         is finite; BNN_EIO; BNN_ENOMEM.
 */
int bnn_plot_curves(const char *path_svg, const char *path_csv, const bnn_plot_curve *series,
                    int nseries, const bnn_plot_curves_options *options, bnn_err *err);

/* One image of a contact sheet (bnn_plot_contact_sheet). */
typedef struct bnn_plot_image {
	const float *pixels; /* channels × height × width, row-major, borrowed */
	long index;          /* written under it: "#index" */
	long label;          /* written under it: "label L"; -1: none */
	double score;        /* written under it, 4 significant digits */
} bnn_plot_image;

/* A row of a contact sheet: a caption and its images, left to right. */
typedef struct bnn_plot_sheet_row {
	const char *title;            /* the caption above the row */
	const bnn_plot_image *images; /* n images, borrowed */
	long n;                       /* >= 0 */
} bnn_plot_sheet_row;

/**
 * Write an SVG contact sheet of images: a title, then each row's caption
 * and its images side by side, each with its index, label and score
 * under it.  One channel is drawn in grey levels, three as RGB (other
 * counts: the first channel, grey), every value mapped linearly from the
 * smallest to the largest value of the whole sheet to black to white (so
 * images are comparable).  A pixel is an integer number of SVG pixels,
 * 84 / max(height, width) (at least 1).  Written atomically.
 * @param shape  {channels, height, width}, each >= 1
 * @return BNN_OK, or BNN_EINVAL (bad arguments), BNN_EIO, BNN_ENOMEM.
 */
int bnn_plot_contact_sheet(const char *path_svg, const char *title, const bnn_plot_sheet_row *rows,
                           int nrows, const long shape[3], bnn_err *err);

#ifdef __cplusplus
}
#endif

#endif /* BNN_PLOT_H */
