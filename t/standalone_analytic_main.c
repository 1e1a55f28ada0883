/*
 * standalone_analytic_main.c: the test program of t/standalone_analytic.sh.
 * It #includes a `bnnc --standalone --analytic` C file (so it sees the
 * file's static helpers too) and links nothing else but libm.
 *
 *   prog analytic < data.csv   the analytic predictive, one example a line
 *                              (outputs in predict's column order, then the
 *                              three summaries), as %.9g
 *   prog mc S SEED < data.csv  the Monte-Carlo predictive, the same way
 *   prog linear S < data.csv   (an_linear only) the analytic mean and
 *                              variance against the closed form computed
 *                              here in double from the weights header, and
 *                              against S Monte-Carlo samples within 4.5
 *                              standard errors; prints the worst relative
 *                              error and the worst z-scores
 *   prog relu                  bnns_relu_moments against Simpson's rule
 *                              on a grid of (mu, s, slope); prints the worst
 *                              errors relative to mu² + s² and |mu| + s
 *   prog bad < data.csv        the return codes of invalid calls
 *
 * Built with -DSA_MODEL=name -DSA_UP=NAME -DSA_SOURCE='"name_infer.c"'.
 * The CSV's header row is skipped; each row's first INPUTS values are the
 * example.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include SA_SOURCE

#define SA_CAT_(a, b) a##b
#define SA_CAT(a, b)  SA_CAT_(a, b)
#define SA_INPUTS     SA_CAT(SA_UP, _INPUTS)
#define SA_OUTPUTS    SA_CAT(SA_UP, _OUTPUTS)
#define SA_OUT_FLOATS SA_CAT(SA_UP, _OUT_FLOATS)
#define SA_WS_BYTES   SA_CAT(SA_UP, _WORKSPACE_BYTES)
#define SA_AN_BYTES   SA_CAT(SA_UP, _ANALYTIC_WORKSPACE_BYTES)
#define SA_PREDICT    SA_CAT(SA_MODEL, _predict_summary)
#define SA_ANALYTIC   SA_CAT(SA_MODEL, _predict_analytic)
#define SA_PARAMS     SA_CAT(SA_MODEL, _w_params)
#define SA_SIGMA      SA_CAT(SA_MODEL, _w_sigma)

#define SA_MAX_ROWS 1024

static double ws[(SA_WS_BYTES > SA_AN_BYTES ? SA_WS_BYTES : SA_AN_BYTES) / 8 + 1];

static long read_rows(float *x)
{
	static char line[1 << 16];
	long n = 0, j;
	if (!fgets(line, sizeof line, stdin))
		return 0; /* the header */
	while (n < SA_MAX_ROWS && fgets(line, sizeof line, stdin)) {
		char *p = line, *end;
		for (j = 0; j < SA_INPUTS; j++) {
			x[n * SA_INPUTS + j] = strtof(p, &end);
			if (end == p)
				return -1;
			p = *end == ',' ? end + 1 : end;
		}
		n++;
	}
	return n;
}

static void print_rows(long n, const float *out, const float *sum)
{
	long i, j;
	for (i = 0; i < n; i++) {
		const float *o = out + i * SA_OUT_FLOATS;
		for (j = 0; j < SA_OUTPUTS; j++) {
			printf(j ? ",%.9g" : "%.9g", (double)o[j]);
			if (SA_OUT_FLOATS != SA_OUTPUTS)
				printf(",%.9g", (double)o[SA_OUTPUTS + j]);
		}
		for (j = 0; j < 3; j++)
			printf(",%.9g", (double)sum[3 * i + j]);
		putchar('\n');
	}
}

#ifdef SA_RELU
/* E[f(z)] and E[f(z)²] for f(z) = max(z, 0) + slope·min(z, 0),
 * z ~ N(mu, s²), by Simpson's rule on [mu − 12s, 0] and [0, mu + 12s]
 * (the kink at 0 is an end of each piece). */
static void relu_quadrature(double mu, double s, double slope, double *m1, double *m2)
{
	double lo = mu - 12 * s, hi = mu + 12 * s, cut[3];
	int piece, k, steps = 20000, np = 0;
	cut[np++] = lo;
	if (lo < 0 && hi > 0)
		cut[np++] = 0;
	cut[np++] = hi;
	*m1 = *m2 = 0;
	for (piece = 0; piece + 1 < np; piece++) {
		double a = cut[piece], h = (cut[piece + 1] - a) / steps;
		for (k = 0; k <= steps; k++) {
			double z = a + k * h, w = k == 0 || k == steps ? 1 : k % 2 ? 4 : 2;
			/* the density; 0x1.40d931ff62705p+1 = √(2π) */
			double d = exp(-0.5 * (z - mu) * (z - mu) / (s * s)) /
			           (s * 0x1.40d931ff62705p+1);
			double f = z > 0 ? z : slope * z;
			*m1 += w * h / 3 * f * d;
			*m2 += w * h / 3 * f * f * d;
		}
	}
}

static int relu_check(void)
{
	static const double mus[] = { -7, -3, -1, -0.2, 0, 0.3, 1, 2.5, 7 };
	static const double ss[] = { 0.1, 0.7, 1, 3 };
	static const double slopes[] = { 0, 0.1, 0.2 };
	double worst_m = 0, worst_v = 0;
	size_t a, b, c;
	for (a = 0; a < sizeof mus / sizeof mus[0]; a++)
		for (b = 0; b < sizeof ss / sizeof ss[0]; b++)
			for (c = 0; c < sizeof slopes / sizeof slopes[0]; c++) {
				double mu = mus[a], s = ss[b], m1, m2, em, ev;
				float gm, gv;
				relu_quadrature(mu, s, slopes[c], &m1, &m2);
				bnns_relu_moments((float)mu, (float)(s * s), (float)slopes[c], &gm,
				                  &gv);
				em = fabs(gm - m1) / (fabs(mu) + s);
				ev = fabs(gv - (m2 - m1 * m1)) / (mu * mu + s * s);
				worst_m = em > worst_m ? em : worst_m;
				worst_v = ev > worst_v ? ev : worst_v;
			}
	printf("%s %.2g %.2g\n", worst_m < 1e-5 && worst_v < 1e-5 ? "ok" : "bad", worst_m, worst_v);
	return 0;
}
#endif

/* an_linear: y = W x + b, W and b meanfield (the weights header's params:
 * W row by row, then b; sigma in the same layout), σ = 0.5. */
static int linear_check(const float *x, long n, int mc, float *out, float *sum)
{
#ifdef SA_LINEAR
	static float mcout[SA_MAX_ROWS * SA_OUT_FLOATS];
	const long k = SA_INPUTS, u = SA_OUTPUTS;
	double worst = 0, zm = 0, zv = 0;
	long i, o, j;
	if (SA_ANALYTIC(x, n, ws, sizeof ws, out, sum) != 0 ||
	    SA_PREDICT(x, n, mc, 7, ws, sizeof ws, mcout, sum) != 0)
		return 1;
	for (i = 0; i < n; i++)
		for (o = 0; o < u; o++) {
			double mean = SA_PARAMS[u * k + o], var = 0.25, epi, d;
			double bs = SA_SIGMA[u * k + o];
			const float *a = out + i * 2 * u, *m = mcout + i * 2 * u;
			var += bs * bs;
			for (j = 0; j < k; j++) {
				double w = SA_PARAMS[o * k + j], sg = SA_SIGMA[o * k + j];
				double xi = x[i * k + j];
				mean += w * xi;
				var += sg * sg * xi * xi;
			}
			d = fabs(a[o] - mean) / (fabs(mean) + sqrt(var));
			worst = d > worst ? d : worst;
			d = fabs(a[u + o] - var) / var;
			worst = d > worst ? d : worst;
			epi = var - 0.25;
			d = fabs(m[o] - a[o]) / sqrt(epi / mc);
			zm = d > zm ? d : zm;
			d = fabs(m[u + o] - a[u + o]) / (epi * sqrt(2.0 / mc));
			zv = d > zv ? d : zv;
		}
	printf("%s %.2g %.2g %.2g\n", worst < 1e-5 && zm < 4.5 && zv < 4.5 ? "ok" : "bad", worst,
	       zm, zv);
	return 0;
#else
	(void)x, (void)n, (void)mc, (void)out, (void)sum;
	return 2;
#endif
}

static int bad_calls(const float *x, float *out)
{
	float sum[3];
	printf("small %d\n", SA_ANALYTIC(x, 1, ws, SA_AN_BYTES - 1, out, sum));
	printf("null %d\n", SA_ANALYTIC(x, 1, NULL, SA_AN_BYTES, out, sum));
	printf("misaligned %d\n", SA_ANALYTIC(x, 1, (char *)ws + 4, SA_AN_BYTES, out, sum));
	printf("x %d\n", SA_ANALYTIC(NULL, 1, ws, SA_AN_BYTES, out, sum));
	printf("n %d\n", SA_ANALYTIC(x, -1, ws, SA_AN_BYTES, out, sum));
	printf("ok %d\n", SA_ANALYTIC(x, 1, ws, SA_AN_BYTES, out, NULL));
	return 0;
}

int main(int argc, char **argv)
{
	static float x[SA_MAX_ROWS * SA_INPUTS], out[SA_MAX_ROWS * SA_OUT_FLOATS],
	        sum[SA_MAX_ROWS * 3];
	long n;
	if (argc < 2)
		return 2;
#ifdef SA_RELU
	if (strcmp(argv[1], "relu") == 0)
		return relu_check();
#endif
	n = read_rows(x);
	if (n < 1)
		return 2;
	if (strcmp(argv[1], "bad") == 0)
		return bad_calls(x, out);
	if (strcmp(argv[1], "linear") == 0 && argc > 2)
		return linear_check(x, n, atoi(argv[2]), out, sum);
	if (strcmp(argv[1], "analytic") == 0) {
		if (SA_ANALYTIC(x, n, ws, sizeof ws, out, sum) != 0)
			return 1;
	} else if (strcmp(argv[1], "mc") == 0 && argc > 3) {
		if (SA_PREDICT(x, n, atoi(argv[2]), strtoull(argv[3], NULL, 10), ws, sizeof ws, out,
		               sum) != 0)
			return 1;
	} else {
		return 2;
	}
	print_rows(n, out, sum);
	return 0;
}
