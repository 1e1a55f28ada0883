/* priors.c: the priors over the parameters that a 'prior' statement names,
 * and their arguments (one prior per model; a layer's '~ F(prior = P)' is a
 * Gaussian precision, families.c).
 *
 *   gaussian(precision = δ)   N(w | 0, 1/δ) per parameter
 *   scalemixture(pi = π, sigma1 = σ1, sigma2 = σ2)
 *                             π N(w | 0, σ1²) + (1 − π) N(w | 0, σ2²) per
 *                             parameter, σ1 > σ2 (Blundell et al. 2015,
 *                             "Weight uncertainty in neural networks",
 *                             section 3.3, eq. (7))
 *   laplace(scale = b)        exp(−|w|/b) / (2b) per parameter
 *
 * The runtime's enum bnn_prior_kind is the same list (codegen.c checks it).
 */
#include "priors.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define ARGN(spec) ((int)(sizeof(spec) / sizeof((spec)[0])))

static const struct arg_spec gaussian_prior_args[] = {
	{ "precision", ARG_REAL, 1, 0, 0, INFINITY, ARG_LO_OPEN },
};
static const struct arg_spec scalemixture_prior_args[] = {
	{ "pi", ARG_REAL, 1, 0, 0, 1, ARG_LO_OPEN | ARG_HI_OPEN },
	{ "sigma1", ARG_REAL, 1, 0, 0, INFINITY, ARG_LO_OPEN },
	{ "sigma2", ARG_REAL, 1, 0, 0, INFINITY, ARG_LO_OPEN },
};
static const struct arg_spec laplace_prior_args[] = {
	{ "scale", ARG_REAL, 1, 0, 0, INFINITY, ARG_LO_OPEN },
};

static const struct prior_info prior_table[PRIOR_COUNT] = {
#define PRIOR(id, name, spec) [PRIOR_##id] = { name, spec, ARGN(spec) },
#include "priors.def"
#undef PRIOR
};

const struct prior_info *prior_lookup(const char *name)
{
	int i;
	for (i = 0; i < PRIOR_COUNT; i++)
		if (strcmp(prior_table[i].name, name) == 0)
			return &prior_table[i];
	return NULL;
}

const struct prior_info *prior_get(enum prior_id p)
{
	return &prior_table[p];
}

void prior_list(char *buf, size_t size)
{
	size_t at = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < PRIOR_COUNT && at < size; i++) {
		const char *sep = i == 0 ? "" : i == PRIOR_COUNT - 1 ? " and " : ", ";
		int n = snprintf(buf + at, size - at, "%s%s", sep, prior_table[i].name);
		if (n < 0)
			break;
		at += (size_t)n;
	}
}

/* σ1 > σ2: the first component is the wide one and the second the narrow
 * one that pulls weights towards 0 (section 3.3: σ1 > σ2, σ2 ≪ 1); equal
 * scales are one Gaussian, and swapped ones the same prior with 1 − π. */
int prior_check(struct diag *d, enum prior_id p, const double *arg, const bnn_loc *loc)
{
	if (p == PRIOR_SCALEMIXTURE && !(arg[1] > arg[2])) {
		diag_error(d, loc[2],
		           "'sigma2' must be less than 'sigma1' (%g), not %g: the first "
		           "component is the wide one",
		           arg[1], arg[2]);
		return -1;
	}
	return 0;
}
