/*
 * pit.c: the PIT histogram of a regression predictive (bnn_metrics_pit,
 * docs/metrics.md) on hand-computed targets, continuous and counts, and
 * its chart (bnn_plot_pit): the CSV written beside the SVG, byte for byte,
 * and the bad arguments with their exact messages.  The chart is written
 * in a directory under $TMPDIR (or /tmp), removed at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bnn.h>
#include <bnn_plot.h>

#include "tap.h"

/* Five continuous targets with F(y) = 0, 0.1, 0.25, 0.7, 1 in 4 bins
 * (0, ¼], (¼, ½], (½, ¾], (¾, 1], 0 in the first: 0, 0.1 and 0.25 fall in
 * bin 0, 0.7 in bin 2, 1 in bin 3: (3, 0, 1, 1)/5. */
static void test_continuous(void)
{
	double cdf[5] = { 0, 0.1, 0.25, 0.7, 1 }, h[4];
	bnn_err err;

	is_int(bnn_metrics_pit(cdf, cdf, 5, 4, h, &err), BNN_OK, "continuous targets");
	is_float(h[0], 0.6, 1e-15, "bin (0, 1/4]: F(y) = 0, 0.1, 0.25");
	is_float(h[1], 0, 0, "bin (1/4, 1/2]: none");
	is_float(h[2], 0.2, 1e-15, "bin (1/2, 3/4]: 0.7");
	is_float(h[3], 0.2, 1e-15, "bin (3/4, 1]: 1");
}

/* Two counts in 4 bins: F(y − 1) = 0.1, F(y) = 0.6 spreads its unit over
 * [0.1, 0.6]: 0.15/0.5 = 0.3 in bin 0, 0.25/0.5 = 0.5 in bin 1, 0.1/0.5 =
 * 0.2 in bin 2; F(y − 1) = 0.9, F(y) = 1: all in bin 3.  Heights (0.3,
 * 0.5, 0.2, 1)/2. */
static void test_counts(void)
{
	double cdf[2] = { 0.6, 1 }, below[2] = { 0.1, 0.9 }, h[4];
	bnn_err err;

	is_int(bnn_metrics_pit(cdf, below, 2, 4, h, &err), BNN_OK, "counts");
	is_float(h[0], 0.15, 1e-15, "a count's share of bin 0: 0.15/0.5, halved");
	is_float(h[1], 0.25, 1e-15, "bin 1: 0.25/0.5, halved");
	is_float(h[2], 0.1, 1e-15, "bin 2: 0.1/0.5, halved");
	is_float(h[3], 0.5, 1e-15, "bin 3: the second count whole, halved");
}

static void test_bad(void)
{
	double cdf[1] = { 0.5 }, h[1];
	bnn_err err;

	is_int(bnn_metrics_pit(cdf, cdf, 0, 1, h, &err), BNN_EINVAL, "no target");
	is_str(err.message, "bnn_metrics_pit: n is 0, need at least 1 target", "its message");
	is_int(bnn_metrics_pit(cdf, cdf, 1, 0, h, &err), BNN_EINVAL, "no bin");
	is_str(err.message, "bnn_metrics_pit: nbins is 0, need at least 1 bin", "its message");
	is_int(bnn_metrics_pit(cdf, NULL, 1, 1, h, &err), BNN_EINVAL, "no cdf_below");
	is_str(err.message, "bnn_metrics_pit: cdf_below is NULL", "its message");
}

static char *slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = 0;
	return buf;
}

static void test_chart(void)
{
	double fraction[4] = { 0.15, 0.25, 0.1, 0.5 }, bad[2] = { 0.5, -0.1 };
	const char *t = getenv("TMPDIR");
	char dir[512], svg_path[600], csv_path[600];
	bnn_err err;
	char *svg;

	snprintf(dir, sizeof dir, "%s/pit.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir))
		tap_bail_out("mkdtemp failed");
	snprintf(svg_path, sizeof svg_path, "%s/pit.svg", dir);
	snprintf(csv_path, sizeof csv_path, "%s/pit.csv", dir);
	is_int(bnn_plot_pit(svg_path, csv_path, fraction, 4, "PIT", &err), BNN_OK,
	       "the chart is written");
	is_str(slurp(csv_path),
	       "bin_lower,bin_upper,fraction,density\n"
	       "0,0.25,0.15,0.6\n0.25,0.5,0.25,1\n0.5,0.75,0.1,0.4\n0.75,1,0.5,2\n",
	       "its CSV: each bin's fraction and density (4 × fraction)");
	svg = slurp(svg_path);
	ok(strstr(svg, "<svg") != NULL && strstr(svg, "perfect calibration") != NULL,
	   "the SVG has the line of perfect calibration");
	is_int(bnn_plot_pit(svg_path, NULL, bad, 2, NULL, &err), BNN_EINVAL, "a negative fraction");
	is_str(err.message,
	       "bnn_plot_pit: bin 1 (0-based): fraction -0.1 is not a finite value >= 0",
	       "its message");
	unlink(svg_path);
	unlink(csv_path);
	rmdir(dir);
}

int main(void)
{
	test_continuous();
	test_counts();
	test_bad();
	test_chart();
	return tap_done();
}
