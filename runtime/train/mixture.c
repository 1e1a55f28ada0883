/*
 * mixture.c: a mixture of K trained networks of one model, predicting as
 * one (docs/ensembles.md).  Members trained with IVON make Multi-IVON (the
 * IVON paper, §4.2 and Table 2: "a mixture-of-Gaussian posterior,
 * constructed from five independently-trained IVON models", with uniform
 * weights, App. D.3); members trained with Adam make a deep ensemble.
 *
 * Storage: one checkpoint.  Its ordinary sections are member 1 (so the
 * file is a checkpoint of one network to any reader that ignores the
 * rest), the sections of member k >= 2 are the same names after
 * "member.k." (member.2.params, member.2.sigma, member.2.opt.b, ...), and
 * the text section "mixture" ("version=1\nmembers=K\n") says how many
 * there are.  The standardisation sections and the tensor list are
 * shared: the members are one model trained on the same inputs.  Saving
 * goes through bnn_ckpt_save, so a mixture is replaced atomically like any
 * checkpoint; loading and saving gives the same bytes.  bnn_state_load
 * refuses a mixture of several members, so that no command that needs one
 * network (posterior, export, train --init) takes its first member for
 * the whole.
 *
 * The predictive is the equal-weight average of the members' predictive
 * distributions.  With mc = S each member draws S samples of its own
 * posterior (K·S passes in all), member k (from 0) from seed + k: a
 * member predicts exactly what the checkpoint of its run alone predicts
 * with that seed, and mc = 0 still mixes the K mean networks, whose
 * disagreement is then all the mixture's epistemic uncertainty.  Since
 * every member has as many samples, the average of the members' averages
 * is the average over all K·S samples: the expected entropy and the
 * energy score are means over every sample of every member, so the
 * mutual information (predictive entropy − expected entropy) includes the
 * disagreement between members.  The NLL of the mixture is
 * −log((1/K)·Σ_k exp(−NLL_k)) by log-sum-exp, exact for the mixture of
 * the K·S samples.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bnn.h"
#include "train_internal.h"

/* The prefix of member k (from 0): "" for the first, "member.K." with K =
 * k + 1 for the others. */
static const char *mixture_prefix(char *buf, size_t size, int k)
{
	if (k == 0)
		buf[0] = '\0';
	else
		snprintf(buf, size, "member.%d.", k + 1);
	return buf;
}

uint64_t bnn_mixture_member_seed(uint64_t seed, int k)
{
	return seed + (uint64_t)k;
}

void bnn_mixture_free(bnn_mixture *mix)
{
	int k;

	if (!mix)
		return;
	for (k = 0; mix->member && k < mix->members; k++)
		bnn_state_free(&mix->member[k]);
	free(mix->member);
	memset(mix, 0, sizeof *mix);
}

/* Whether two standardisations are the same values. */
static int mixture_same_standardize(const bnn_standardizer *a, const bnn_standardizer *b)
{
	size_t n = (size_t)a->features * sizeof(float);

	return a->features == b->features &&
	       (a->features == 0 ||
	        (memcmp(a->mean, b->mean, n) == 0 && memcmp(a->std, b->std, n) == 0));
}

int bnn_mixture_check(const bnn_state *members, int k, const char *const *names, bnn_err *err)
{
	const bnn_model *m = k > 0 && members ? members[0].model : NULL;
	char what[32];
	int i;

	if (!m)
		return bnn_fail(err, BNN_EINVAL, "no members given");
	for (i = 1; i < k; i++) {
		const char *name = names ? names[i] : what;
		snprintf(what, sizeof what, "member %d", i + 1);
		if (!members[i].model || !members[i].params)
			return bnn_fail(err, BNN_EINVAL, "%s has no parameters", name);
		if (members[i].model->fingerprint != m->fingerprint)
			return bnn_fail(err, BNN_EMISMATCH,
			                "%s belongs to model '%s', and %s to model '%s': the "
			                "networks of one mixture or merge are one model",
			                name, members[i].model->name, names ? names[0] : "member 1",
			                m->name);
		if (!mixture_same_standardize(&members[i].standardize, &members[0].standardize))
			return bnn_fail(err, BNN_EMISMATCH,
			                "%s and %s standardise their inputs differently: the "
			                "networks would see other inputs (train them with "
			                "--standardize on the same data, or all without)",
			                names ? names[0] : "member 1", name);
	}
	return BNN_OK;
}

int bnn_mixture_save(const bnn_mixture *mix, const char *path, bnn_err *err)
{
	bnn_ckpt *ck = NULL;
	bnn_state first;
	char text[64], prefix[32];
	int rc, k;

	if (!mix || !mix->member || mix->members < 1 || !path)
		return bnn_fail(err, BNN_EINVAL, "bnn_mixture_save: no %s given",
		                !path ? "path" : "mixture");
	if ((rc = bnn_mixture_check(mix->member, mix->members, NULL, err)))
		return rc;
	if (mix->members == 1)
		return bnn_state_save(&mix->member[0], path, err);
	first = mix->member[0];
	first.progress = NULL; /* a mixture is not resumed: no member's run */
	if ((rc = train_state_ckpt(&first, path, &ck, err)))
		return rc;
	snprintf(text, sizeof text, "version=1\nmembers=%d\n", mix->members);
	rc = bnn_ckpt_add_text(ck, "mixture", text);
	for (k = 1; !rc && k < mix->members; k++)
		rc = train_state_add(ck, &mix->member[k], mixture_prefix(prefix, sizeof prefix, k));
	if (rc)
		rc = bnn_fail(err, rc, "cannot build checkpoint %s: %s", path, bnn_strerror(rc));
	else
		rc = bnn_ckpt_save(ck, path, err);
	bnn_ckpt_free(ck);
	return rc;
}

/* The members of ck's "mixture" section (1 without one), checked. */
static int mixture_count(const bnn_ckpt *ck, const char *path, int *members, bnn_err *err)
{
	const char *text = bnn_ckpt_find_text(ck, "mixture");
	int version = 0, k = 0, used = 0;

	*members = 1;
	if (!text)
		return BNN_OK;
	if (sscanf(text, "version=%d\nmembers=%d\n%n", &version, &k, &used) != 2 ||
	    text[used] != '\0')
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: section 'mixture' is not \"version=1\\nmembers=K\\n\"", path);
	if (version != 1)
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: section 'mixture': version %d, and this library reads "
		                "version 1",
		                path, version);
	if (k < 1 || k > BNN_MIXTURE_MAX)
		return bnn_fail(err, BNN_EFORMAT,
		                "%s: section 'mixture': %d members, not a count in [1, %d]", path,
		                k, BNN_MIXTURE_MAX);
	*members = k;
	return BNN_OK;
}

int train_mixture_refuse(const bnn_ckpt *ck, const char *path, bnn_err *err)
{
	int k, rc = mixture_count(ck, path, &k, err);

	if (rc || k == 1)
		return rc;
	return bnn_fail(err, BNN_EMISMATCH,
	                "%s: the checkpoint is a mixture of %d networks (train --members): "
	                "eval and predict read it, and this needs one network",
	                path, k);
}

int bnn_mixture_load(bnn_mixture *mix, const bnn_model *m, const char *path, bnn_err *err)
{
	bnn_ckpt *ck = NULL;
	bnn_mixture x;
	char prefix[32];
	int rc, k;

	if (!mix || !path)
		return bnn_fail(err, BNN_EINVAL, "bnn_mixture_load: no %s given",
		                !mix ? "mixture" : "path");
	memset(&x, 0, sizeof x);
	if ((rc = train_ckpt_open(m, path, &ck, err)) ||
	    (rc = mixture_count(ck, path, &x.members, err)))
		goto done;
	if (!(x.member = calloc((size_t)x.members, sizeof *x.member))) {
		rc = bnn_fail(err, BNN_ENOMEM, "out of memory loading %s", path);
		goto done;
	}
	for (k = 0; k < x.members; k++)
		if ((rc = train_state_from_ckpt(ck, m, path,
		                                mixture_prefix(prefix, sizeof prefix, k),
		                                &x.member[k], err))) {
			x.members = k; /* the ones loaded, for bnn_mixture_free */
			goto done;
		}
done:
	bnn_ckpt_free(ck);
	if (rc)
		bnn_mixture_free(&x);
	else
		*mix = x;
	return rc;
}

/* One member's predictions of the rows of the range, each array NULL when
 * the mixture's caller did not ask for it. */
struct mixture_part {
	float *probs, *var, *aleatoric, *epistemic;
	double *nll_each, *xent, *energy;
	double *cdf, *cdf_below; /* regression: n × k, the CDF at the targets */
};

static void mixture_part_free(struct mixture_part *p)
{
	free(p->probs);
	free(p->var);
	free(p->aleatoric);
	free(p->epistemic);
	free(p->nll_each);
	free(p->xent);
	free(p->energy);
	free(p->cdf);
	free(p->cdf_below);
}

static int mixture_part_alloc(struct mixture_part *p, const bnn_prediction *out, long n, long k,
                              int regression)
{
	int scored = out->nll || out->nll_each;

	memset(p, 0, sizeof *p);
	p->probs = malloc((size_t)(n * k) * sizeof *p->probs);
	p->var = out->var ? malloc((size_t)(n * k) * sizeof *p->var) : NULL;
	p->aleatoric = regression && out->aleatoric ? malloc((size_t)(n * k) * sizeof *p->aleatoric)
	                                            : NULL;
	p->epistemic = regression && out->epistemic ? malloc((size_t)(n * k) * sizeof *p->epistemic)
	                                            : NULL;
	p->nll_each = scored ? malloc((size_t)n * sizeof *p->nll_each) : NULL;
	p->xent = out->expected_entropy ? malloc((size_t)n * sizeof *p->xent) : NULL;
	p->energy = out->energy ? malloc((size_t)n * sizeof *p->energy) : NULL;
	p->cdf = out->cdf ? malloc((size_t)(n * k) * sizeof *p->cdf) : NULL;
	p->cdf_below = out->cdf_below ? malloc((size_t)(n * k) * sizeof *p->cdf_below) : NULL;
	return !p->probs || (out->var && !p->var) ||
	       (regression && out->aleatoric && !p->aleatoric) ||
	       (regression && out->epistemic && !p->epistemic) || (scored && !p->nll_each) ||
	       (out->expected_entropy && !p->xent) || (out->energy && !p->energy) ||
	       (out->cdf && !p->cdf) || (out->cdf_below && !p->cdf_below);
}

/* The sums over the members of what the mixture averages. */
struct mixture_sums {
	double *p;   /* n × k: Σ probabilities (or Gaussian means) */
	double *sq;  /* gaussian: n × k, Σ (σ²_k + μ_k²) */
	double *ale; /* regression: n × k, Σ of the members' aleatoric variances */
	double *epi; /* regression: n × k, Σ (epistemic_k + μ_k²), finite where
	                sq is not (an infinite aleatoric variance) */
	double *lse; /* n: log Σ_k exp(−NLL_k) */
	double *xent, *energy;
	double *cdf, *cdf_below; /* n × k: Σ CDFs at the targets (the mixture's
	                            CDF is their mean) */
};

static void mixture_add(struct mixture_sums *s, const struct mixture_part *p, long n, long k,
                        int first)
{
	long i;

	for (i = 0; i < n * k; i++) {
		s->p[i] += p->probs[i];
		if (p->var)
			s->sq[i] += (double)p->var[i] + (double)p->probs[i] * p->probs[i];
		if (p->aleatoric)
			s->ale[i] += p->aleatoric[i];
		if (p->epistemic)
			s->epi[i] += (double)p->epistemic[i] + (double)p->probs[i] * p->probs[i];
		if (p->cdf)
			s->cdf[i] += p->cdf[i];
		if (p->cdf_below)
			s->cdf_below[i] += p->cdf_below[i];
	}
	for (i = 0; i < n; i++) {
		if (p->nll_each) {
			double a = s->lse[i], b = -p->nll_each[i];
			/* log(e^a + e^b), the larger factored out */
			s->lse[i] = first ? b : fmax(a, b) + log1p(exp(-fabs(a - b)));
		}
		if (p->xent)
			s->xent[i] += p->xent[i];
		if (p->energy)
			s->energy[i] += p->energy[i];
	}
}

/* The averages over K members into out. */
static void mixture_finish(const struct mixture_sums *s, const bnn_prediction *out, long n, long k,
                           int members)
{
	double K = members;
	long i;

	for (i = 0; i < n * k; i++) {
		double mean = s->p[i] / K;
		out->probs[i] = (float)mean;
		if (out->var) /* mixture variance: mean of (σ² + μ²) − mean² */
			out->var[i] = (float)fmax(s->sq[i] / K - mean * mean, 0.0);
		if (s->ale) /* the members' disagreement is epistemic */
			out->aleatoric[i] = (float)(s->ale[i] / K);
		if (s->epi) /* the members' own spread and their disagreement */
			out->epistemic[i] = (float)fmax(s->epi[i] / K - mean * mean, 0.0);
		if (out->cdf)
			out->cdf[i] = s->cdf[i] / K;
		if (out->cdf_below)
			out->cdf_below[i] = s->cdf_below[i] / K;
	}
	if (out->nll)
		*out->nll = 0;
	for (i = 0; i < n; i++) {
		if (s->lse) {
			double e = -(s->lse[i] - log(K));
			if (out->nll_each)
				out->nll_each[i] = e;
			if (out->nll)
				*out->nll += e; /* example order, as bnn_predict */
		}
		if (out->expected_entropy)
			out->expected_entropy[i] = s->xent[i] / K;
		if (out->energy)
			out->energy[i] = s->energy[i] / K;
	}
}

int bnn_mixture_predict_batches(const bnn_mixture *mix, const bnn_dataset *ds, long mc,
                                uint64_t seed, long j0, long j1, const bnn_prediction *out,
                                bnn_err *err)
{
	const bnn_model *m;
	struct mixture_part part;
	struct mixture_sums s;
	long n, k, nb;
	int rc = BNN_OK, i, scored, regression;

	if (!mix || !mix->member || mix->members < 1)
		return bnn_fail(err, BNN_EINVAL, "no mixture given");
	if (mix->members == 1) /* a single network: exactly bnn_predict */
		return bnn_predict_batches(&mix->member[0], ds, mc, seed, j0, j1, out, err);
	if (!out || !out->probs)
		return bnn_fail(err, BNN_EINVAL, "no array given for the predictions");
	if ((rc = bnn_mixture_check(mix->member, mix->members, NULL, err)))
		return rc;
	m = mix->member[0].model;
	if (!ds || ds->n < 1)
		return bnn_predict_batches(&mix->member[0], ds, mc, seed, j0, j1, out, err);
	nb = (ds->n + BNN_PREDICT_BATCH - 1) / BNN_PREDICT_BATCH;
	if (j0 < 0 || j1 < j0 || j1 > nb || j1 == j0) /* bnn_predict's checks and messages */
		return bnn_predict_batches(&mix->member[0], ds, mc, seed, j0, j1, out, err);
	n = (j1 * BNN_PREDICT_BATCH < ds->n ? j1 * BNN_PREDICT_BATCH : ds->n) -
	    j0 * BNN_PREDICT_BATCH;
	k = bnn_model_predictions(m);
	regression = bnn_likelihood_regression(m);
	scored = out->nll || out->nll_each;
	memset(&s, 0, sizeof s);
	s.p = calloc((size_t)(n * k), sizeof *s.p);
	s.sq = out->var ? calloc((size_t)(n * k), sizeof *s.sq) : NULL;
	s.ale = regression && out->aleatoric ? calloc((size_t)(n * k), sizeof *s.ale) : NULL;
	s.epi = regression && out->epistemic ? calloc((size_t)(n * k), sizeof *s.epi) : NULL;
	s.lse = scored ? calloc((size_t)n, sizeof *s.lse) : NULL;
	s.xent = out->expected_entropy ? calloc((size_t)n, sizeof *s.xent) : NULL;
	s.energy = out->energy ? calloc((size_t)n, sizeof *s.energy) : NULL;
	s.cdf = out->cdf ? calloc((size_t)(n * k), sizeof *s.cdf) : NULL;
	s.cdf_below = out->cdf_below ? calloc((size_t)(n * k), sizeof *s.cdf_below) : NULL;
	if (mixture_part_alloc(&part, out, n, k, regression) || !s.p || (out->var && !s.sq) ||
	    (regression && out->aleatoric && !s.ale) || (regression && out->epistemic && !s.epi) ||
	    (scored && !s.lse) || (out->expected_entropy && !s.xent) ||
	    (out->energy && !s.energy) || (out->cdf && !s.cdf) ||
	    (out->cdf_below && !s.cdf_below)) {
		rc = bnn_fail(err, BNN_ENOMEM, "out of memory predicting %ld examples", n);
		goto done;
	}
	for (i = 0; i < mix->members && !rc; i++) {
		rc = bnn_predict_batches(&mix->member[i], ds, mc, bnn_mixture_member_seed(seed, i),
		                         j0, j1,
		                         &(bnn_prediction){ .probs = part.probs,
		                                            .var = part.var,
		                                            .aleatoric = part.aleatoric,
		                                            .epistemic = part.epistemic,
		                                            .nll_each = part.nll_each,
		                                            .expected_entropy = part.xent,
		                                            .energy = part.energy,
		                                            .cdf = part.cdf,
		                                            .cdf_below = part.cdf_below },
		                         err);
		if (rc) {
			char why[BNN_ERR_MESSAGE_MAX];
			snprintf(why, sizeof why, "%s", err->message);
			bnn_fail(err, rc, "mixture member %d of %d: %s", i + 1, mix->members, why);
		} else
			mixture_add(&s, &part, n, k, i == 0);
	}
	if (!rc)
		mixture_finish(&s, out, n, k, mix->members);
done:
	mixture_part_free(&part);
	free(s.p);
	free(s.sq);
	free(s.ale);
	free(s.epi);
	free(s.lse);
	free(s.xent);
	free(s.energy);
	free(s.cdf);
	free(s.cdf_below);
	return rc;
}
