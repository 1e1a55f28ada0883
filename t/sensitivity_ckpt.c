/*
 * sensitivity_ckpt.c: writes a checkpoint with chosen values, for
 * t/sensitivity.sh: `sensitivity_ckpt OUT P0 P1 ... [--sigma S0 S1 ...]`
 * sets the model's nparams parameters (and, after --sigma, the posterior
 * standard deviation of each), so that the scores of a hand-worked
 * example can be checked.  Compiled by the test with the model's
 * generated C; SENS_MODEL names its descriptor.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"

extern const bnn_model SENS_MODEL;

int main(int argc, char **argv)
{
	const bnn_model *m = &SENS_MODEL;
	bnn_state st;
	bnn_err err;
	long k = 0;
	int i, sigma = 0;

	if (argc < 2 || bnn_state_init(&st, m, 1, &err)) {
		fprintf(stderr, "usage: %s OUT P... [--sigma S...]\n", argv[0]);
		return 2;
	}
	for (i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--sigma") == 0) {
			st.sigma = calloc((size_t)m->nparams, sizeof *st.sigma);
			sigma = 1;
			k = 0;
			continue;
		}
		if (k >= m->nparams) {
			fprintf(stderr, "%s: more than %ld values\n", argv[0], m->nparams);
			return 2;
		}
		(sigma ? st.sigma : st.params)[k++] = strtof(argv[i], NULL);
	}
	if (bnn_state_save(&st, argv[1], &err)) {
		fprintf(stderr, "%s: %s\n", argv[0], err.message);
		return 1;
	}
	bnn_state_free(&st);
	return 0;
}
