/*
 * standalone_close.c: the comparison within a tolerance of
 * t/standalone_cross.sh, run on the host.  Two outputs that cannot be equal
 * bit for bit (the standalone file on s390x, which evaluates float
 * expressions in double, against the host; the standalone mean pass against
 * the driver's `predict --mc 0`, whose sums run in another order) must
 * still agree to TOL relatively:
 *
 *   standalone_close TOL WANT GOT
 *
 * Both files are lines of words separated by blanks.  A word that is a
 * number (decimal or C99 hexadecimal, as strtod reads them) must be within
 * TOL of WANT's, relatively to the largest magnitude of the numbers on
 * WANT's line (an output near 0 that is a difference of larger terms, such
 * as a mutual information, is not known to TOL of itself); any other word
 * must be the same.  Prints the count of numbers, how many differ in their
 * bits and the largest relative difference, and exits 0; or prints the
 * first difference (line, word, both values) and exits 1.  Exit status 2:
 * bad usage or an unreadable file.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SC_LINE  65536
#define SC_WORDS 1024

/* Splits line into at most SC_WORDS words (in place); returns the count. */
static int sc_split(char *line, char **word)
{
	int n = 0;
	char *w = strtok(line, " \t\n");

	while (w && n < SC_WORDS) {
		word[n++] = w;
		w = strtok(NULL, " \t\n");
	}
	return n;
}

/* 1 and *v if w is a whole number, else 0. */
static int sc_number(const char *w, double *v)
{
	char *end;

	*v = strtod(w, &end);
	return end != w && *end == '\0';
}

/* The largest magnitude of the numbers among the n words. */
static double sc_scale(char **word, int n)
{
	double m = 0, v;
	int j;

	for (j = 0; j < n; j++)
		if (sc_number(word[j], &v) && fabs(v) > m)
			m = fabs(v);
	return m;
}

int main(int argc, char **argv)
{
	static char a[SC_LINE], b[SC_LINE];
	static char *wa[SC_WORDS], *wb[SC_WORDS];
	double tol, worst = 0;
	long line = 0, numbers = 0, differ = 0;
	FILE *fa, *fb;

	if (argc != 4 || (tol = strtod(argv[1], NULL)) <= 0) {
		fprintf(stderr, "usage: standalone_close TOL WANT GOT\n");
		return 2;
	}
	fa = fopen(argv[2], "r");
	fb = fopen(argv[3], "r");
	if (!fa || !fb) {
		fprintf(stderr, "standalone_close: cannot read %s\n", fa ? argv[3] : argv[2]);
		return 2;
	}
	for (;;) {
		char *ra = fgets(a, sizeof a, fa), *rb = fgets(b, sizeof b, fb);
		int na, nb, j;
		double scale;

		line++;
		if (!ra || !rb) {
			if (ra || rb) {
				printf("line %ld: only in %s\n", line, ra ? argv[2] : argv[3]);
				return 1;
			}
			break;
		}
		na = sc_split(a, wa);
		nb = sc_split(b, wb);
		if (na != nb) {
			printf("line %ld: %d words in %s, %d in %s\n", line, na, argv[2], nb,
			       argv[3]);
			return 1;
		}
		scale = sc_scale(wa, na);
		for (j = 0; j < na; j++) {
			double x, y, d;
			int nx = sc_number(wa[j], &x), ny = sc_number(wb[j], &y);

			if (!nx || !ny) {
				if (nx != ny || strcmp(wa[j], wb[j]) != 0) {
					printf("line %ld word %d: '%s' and '%s'\n", line, j + 1,
					       wa[j], wb[j]);
					return 1;
				}
				continue;
			}
			numbers++;
			differ += strcmp(wa[j], wb[j]) != 0;
			d = fabs(x - y);
			if (!(d <= tol * scale)) { /* NaN fails too */
				printf("line %ld word %d: %s and %s differ by %.3g of the line's "
				       "largest value %.9g\n",
				       line, j + 1, wa[j], wb[j], scale > 0 ? d / scale : d, scale);
				return 1;
			}
			if (scale > 0 && d / scale > worst)
				worst = d / scale;
		}
	}
	printf("%ld values, %ld differ in their bits, largest relative difference %.3g\n", numbers,
	       differ, worst);
	return 0;
}
