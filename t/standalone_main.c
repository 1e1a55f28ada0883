/*
 * standalone_main.c: the test program of t/standalone.sh, linked with a
 * `bnnc --standalone` file and nothing else (no libbnn): the model's
 * predictive of a CSV data set, printed one example a line.
 *
 *   prog MC SEED [g] < data.csv      outputs in predict's CSV column order
 *                                    (mean_j,var_j for Gaussian models),
 *                                    then the three summaries; MC = 0 (or
 *                                    with g) as %.9g, MC > 0 as %a (exact
 *                                    bits)
 *   prog bad < data.csv              the return codes of invalid calls
 *
 *   prog badids < data.csv           (-DSA_IDS) the return codes of ids
 *                                    out of range
 *
 * Built with -DSA_MODEL=name -DSA_UP=NAME -DSA_HEADER='"name_infer.h"': the
 * API's names are made from them; with -DSA_IDS for a model whose input
 * is ids (int32_t).  The CSV's header row is skipped and each row's first
 * INPUTS values are the example (the targets follow).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include SA_HEADER

#define SA_CAT_(a, b) a##b
#define SA_CAT(a, b)  SA_CAT_(a, b)
#define SA_INPUTS     SA_CAT(SA_UP, _INPUTS)
#define SA_OUTPUTS    SA_CAT(SA_UP, _OUTPUTS)
#define SA_OUT_FLOATS SA_CAT(SA_UP, _OUT_FLOATS)
#define SA_WS_BYTES   SA_CAT(SA_UP, _WORKSPACE_BYTES)
#define SA_PREDICT    SA_CAT(SA_MODEL, _predict_summary)

#define SA_MAX_ROWS 4096

#ifdef SA_IDS
typedef int32_t sa_in;
#define SA_IDS_BELOW SA_CAT(SA_UP, _IDS_BELOW)
#define SA_EIDS      SA_CAT(SA_UP, _EIDS)
#else
typedef float sa_in;
#endif

/* Reads up to SA_MAX_ROWS rows of SA_INPUTS values; returns the count. */
static long read_rows(sa_in *x)
{
	static char line[1 << 20];
	long n = 0, j;
	if (!fgets(line, sizeof line, stdin))
		return 0; /* the header */
	while (n < SA_MAX_ROWS && fgets(line, sizeof line, stdin)) {
		char *p = line, *end;
		for (j = 0; j < SA_INPUTS; j++) {
			x[n * SA_INPUTS + j] = (sa_in)strtof(p, &end);
			if (end == p)
				return -1;
			p = *end == ',' ? end + 1 : end;
		}
		n++;
	}
	return n;
}

/* Prints one value: exact (%a) or as predict does (%.9g). */
static void put(float v, int exact, int first)
{
	if (!first)
		putchar(',');
	printf(exact ? "%a" : "%.9g", (double)v);
}

static int bad_calls(const sa_in *x, double *ws, float *out)
{
	float sum[3];
	printf("small %d\n", SA_PREDICT(x, 1, 0, 1, ws, SA_WS_BYTES - 1, out, sum));
	printf("null %d\n", SA_PREDICT(x, 1, 0, 1, NULL, SA_WS_BYTES, out, sum));
	printf("misaligned %d\n", SA_PREDICT(x, 1, 0, 1, (char *)ws + 4, SA_WS_BYTES, out, sum));
	printf("mc %d\n", SA_PREDICT(x, 1, -1, 1, ws, SA_WS_BYTES, out, sum));
	printf("n %d\n", SA_PREDICT(x, -1, 0, 1, ws, SA_WS_BYTES, out, sum));
	printf("ok %d\n", SA_PREDICT(x, 1, 0, 1, ws, SA_WS_BYTES, out, sum));
	return 0;
}

int main(int argc, char **argv)
{
	static double ws[(SA_WS_BYTES + 4) / 8 + 1];
	sa_in *x = malloc((size_t)SA_MAX_ROWS * SA_INPUTS * sizeof *x);
	float *out = malloc((size_t)SA_MAX_ROWS * SA_OUT_FLOATS * sizeof *out);
	float *sum = malloc((size_t)SA_MAX_ROWS * 3 * sizeof *sum);
	long n, i, j;
	int mc, rc, exact, gaussian = SA_OUT_FLOATS != SA_OUTPUTS;

	if (!x || !out || !sum || argc < 2)
		return 2;
	n = read_rows(x);
	if (n < 1)
		return 2;
	if (strcmp(argv[1], "bad") == 0)
		return bad_calls(x, ws, out);
#ifdef SA_IDS
	if (strcmp(argv[1], "badids") == 0) { /* the last id of the last row, then the first */
		float sum[3];
		x[n * SA_INPUTS - 1] = SA_IDS_BELOW;
		printf("vocab %d\n", SA_PREDICT(x, n, 0, 1, ws, SA_WS_BYTES, out, sum) == SA_EIDS);
		x[n * SA_INPUTS - 1] = 0;
		x[0] = -1;
		printf("negative %d\n",
		       SA_PREDICT(x, n, 1, 1, ws, SA_WS_BYTES, out, sum) == SA_EIDS);
		return 0;
	}
#endif
	if (argc < 3)
		return 2;
	mc = atoi(argv[1]);
	exact = mc > 0 && !(argc > 3 && strcmp(argv[3], "g") == 0);
	rc = SA_PREDICT(x, n, mc, strtoull(argv[2], NULL, 10), ws, sizeof ws, out, sum);
	if (rc != 0) {
		printf("error %d\n", rc);
		return 1;
	}
	for (i = 0; i < n; i++) {
		const float *o = out + i * SA_OUT_FLOATS;
		for (j = 0; j < SA_OUTPUTS; j++) {
			put(o[j], exact, j == 0);
			if (gaussian)
				put(o[SA_OUTPUTS + j], exact, 0);
		}
		for (j = 0; j < 3; j++)
			put(sum[3 * i + j], exact, 0);
		putchar('\n');
	}
	return 0;
}
