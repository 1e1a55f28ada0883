/* summary.h: `bnnc --summary`, a table of a checked model in the manner of
 * Keras' model.summary(): one row per node (name, op, output shape,
 * posterior family, parameters of the point network and of the posterior),
 * the totals, and the posterior's overhead over the point network in percent
 * (as in the EMP paper's overhead tables). */
#ifndef BNN_SUMMARY_H
#define BNN_SUMMARY_H

#include <stdio.h>

#include "graph.h"

/* Writes the summary of G (compiled from FILE) to OUT. */
void summary_print(FILE *out, const struct graph *g, const char *file);

#endif
