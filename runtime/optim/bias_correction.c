/*
 * bias_correction.c: 1 − β^t, the bias correction of the moment
 * estimates in Adam (Kingma and Ba, ICLR 2015, Algorithm 1), which Adam,
 * IVON (for its β1, Shen et al., Algorithm 1 line 6) and
 * Bayes-by-Backprop's Adam need at every step.  The trainer calls IVON's
 * and Bayes-by-Backprop's fused updates once per tensor and per block of
 * BNN_SAMPLE_BLOCK weights, about 170 calls a step on 670k weights, all
 * with the same β and t; pow() in every call showed in profiles of
 * IVON's step (docs/benchmarks.md).  So the last few (β, t) pairs and their values are
 * remembered, per thread (each thread has its own memo: no locks, no
 * shared state), and a repeated pair costs a comparison.
 */
#include <math.h>

#include "bias_correction.h"

/* Pairs remembered: Bayes-by-Backprop alternates two (β1 and β2). */
#define MEMO_SIZE 4

struct memo_entry {
	int used;
	double beta, t, value;
};

static _Thread_local struct memo_entry memo[MEMO_SIZE];
static _Thread_local int memo_next; /* the entry to overwrite next */

double bnn_bias_correction(double beta, double t)
{
	struct memo_entry *e;
	int i;

	for (i = 0; i < MEMO_SIZE; i++)
		if (memo[i].used && memo[i].beta == beta && memo[i].t == t)
			return memo[i].value;
	e = &memo[memo_next];
	memo_next = (memo_next + 1) % MEMO_SIZE;
	e->used = 1;
	e->beta = beta;
	e->t = t;
	e->value = 1.0 - pow(beta, t);
	return e->value;
}
