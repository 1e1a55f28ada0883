/* priors.h: the priors a model's 'prior' statement names (priors.c), their
 * arguments, and the check of the arguments against each other. */
#ifndef BNN_PRIORS_H
#define BNN_PRIORS_H

#include "args.h"
#include "diag.h"

enum prior_id {
#define PRIOR(id, name, spec) PRIOR_##id,
#include "priors.def"
#undef PRIOR
	PRIOR_COUNT
};

/* The most arguments a prior takes (scalemixture: pi, sigma1, sigma2). */
#define PRIOR_MAXARGS 3

struct prior_info {
	const char *name;
	const struct arg_spec *spec;
	int nspec;
};

/* The prior called NAME, or NULL. */
const struct prior_info *prior_lookup(const char *name);
const struct prior_info *prior_get(enum prior_id p);
/* "gaussian, scalemixture and laplace": the priors' names in order. */
void prior_list(char *buf, size_t size);

/* Checks the arguments of prior P against each other (each is already
 * within its own range): scalemixture's sigma1 > sigma2.  ARG are the
 * values in the order of its table, LOC[i] where each was written.
 * Returns 0, or -1 after reporting the error. */
int prior_check(struct diag *d, enum prior_id p, const double *arg, const bnn_loc *loc);

#endif
