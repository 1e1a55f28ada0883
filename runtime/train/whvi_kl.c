/*
 * whvi_kl.c: the KL term of the ELBO for the whvi layers of a model
 * (Rossi et al., "Walsh-Hadamard Variational Inference for Bayesian Deep
 * Learning", NeurIPS 2020), and its gradient, which the trainer adds to
 * the gradient of the pass (train_step.c): the loss is then NLL + KL/N,
 * the negative ELBO over N (eq. 1).
 *
 * The prior.  Appendix D.1: "a zero-mean prior over g with fully
 * factorized covariance λI", λ = 1e-5 in the paper's experiments, and S1,
 * S2 optimised (point estimates without a prior).  Here p(g) = N(0, I/δ)
 * with δ the layer's prior precision (`prior gaussian(precision = δ)` or
 * `~ whvi(prior = δ)`; the paper's λ = 1e-5 is δ = 1e5), or the trainer's
 * `delta` when set.  The prior does not depend on S1 and S2 (the paper
 * mentions, and did not use, a prior on g that would give W a constant
 * marginal variance; that one would).
 *
 * Without flows, q(g) = N(μ, diag(σ²)), σ = softplus(ρ), and per value
 *     KL = ½·[δσ² + δμ² − 1 − ln(δσ²)],
 *     ∂/∂μ = δμ,   ∂/∂ρ = (δσ − 1/σ)·sigmoid(ρ).
 * With F planar flows (appendix C, eq. 19-21) the term of the ELBO is
 *     E_q0[log q0(z0)] − E_q0[log p(z_F)] − E_q0[Σ_k log|1 + u_kᵀw_k·h'(a_k)|],
 * a_k = w_kᵀz_{k−1} + b_k, h = tanh: the first expectation is the Gaussian's
 * entropy in closed form, −Σ[½ln 2π + ln σ + ½]; the other two are
 * estimated with one sample z0 = μ + σ∘ε per call (ε from rng; without rng,
 * ε = 0), and differentiated through the flows.  Without flows both
 * estimates are replaced by their expectations, giving the formula above.
 * The bias of a whvi layer is meanfield: the same closed form per unit.
 * Everything is computed in double from the float parameters.
 */
#include <math.h>
#include <string.h>

#include "bnn.h"

/* ½·ln 2π */
#define WHVI_HALF_LOG_2PI 0.91893853320467274178

/* The tensors of one whvi layer (NULL when absent). */
struct whvi_layer {
	const bnn_tensor *mu, *rho, *fu, *fw, *fb, *bmu, *brho;
	long d, stack, flows;
};

static void whvi_find(const bnn_model *m, const bnn_layer *l, struct whvi_layer *w)
{
	int i;

	memset(w, 0, sizeof *w);
	for (i = l->first_tensor; i < l->first_tensor + l->ntensors; i++) {
		const bnn_tensor *t = &m->tensors[i];
		switch (t->role) {
		case BNN_ROLE_WHVI_G_MEAN:
			w->mu = t;
			break;
		case BNN_ROLE_WHVI_G_RHO:
			w->rho = t;
			break;
		case BNN_ROLE_WHVI_FLOW_U:
			w->fu = t;
			break;
		case BNN_ROLE_WHVI_FLOW_W:
			w->fw = t;
			break;
		case BNN_ROLE_WHVI_FLOW_B:
			w->fb = t;
			break;
		case BNN_ROLE_BIAS:
			w->bmu = t;
			break;
		case BNN_ROLE_WHVI_BIAS_RHO:
			w->brho = t;
			break;
		default:
			break;
		}
	}
	if (w->mu) {
		w->stack = w->mu->shape[0];
		w->d = w->mu->shape[1];
	}
	w->flows = w->fu ? l->flows : 0;
}

static double whvi_sigmoid(double r)
{
	return r >= 0 ? 1 / (1 + exp(-r)) : exp(r) / (1 + exp(r));
}

/* The closed-form Gaussian KL of n values (μ, ρ) against N(0, 1/δ), its
 * gradient times scale added to gmu and grho (NULL: none). */
static double whvi_kl_gauss(long n, const float *mu, const float *rho, double delta, double scale,
                            float *gmu, float *grho)
{
	double kl = 0;
	long i;

	for (i = 0; i < n; i++) {
		double m = mu[i], s = bnn_softplus(rho[i]);
		kl += 0.5 * (delta * s * s + delta * m * m - 1 - log(delta * s * s));
		if (gmu) {
			gmu[i] += (float)(scale * delta * m);
			grho[i] += (float)(scale * (delta * s - 1 / s) * whvi_sigmoid(rho[i]));
		}
	}
	return kl;
}

/* Block j of a whvi layer with flows: its values of q(g) and of the
 * flows, and where their gradients go (the g* NULL without grad). */
struct whvi_block {
	long d, flows;                    /* the block's width D and flows F */
	const float *mu, *rho;            /* q0(g): μ and ρ, D each */
	const float *fu, *fw, *fb;        /* the flows: u, w (F·D each), b (F) */
	float *gmu, *grho, *gu, *gw, *gb; /* their gradients, or all NULL */
};

static struct whvi_block whvi_block_at(const struct whvi_layer *w, long j, const float *params,
                                       float *grad)
{
	const long o = j * w->d, of = j * w->flows * w->d, ob = j * w->flows;
	struct whvi_block b = {
		.d = w->d,
		.flows = w->flows,
		.mu = params + w->mu->offset + o,
		.rho = params + w->rho->offset + o,
		.fu = params + w->fu->offset + of,
		.fw = params + w->fw->offset + of,
		.fb = params + w->fb->offset + ob,
	};
	if (grad) {
		b.gmu = grad + w->mu->offset + o;
		b.grho = grad + w->rho->offset + o;
		b.gu = grad + w->fu->offset + of;
		b.gw = grad + w->fw->offset + of;
		b.gb = grad + w->fb->offset + ob;
	}
	return b;
}

/* One block with flows: the entropy term in closed form and the sampled
 * −log p(z_F) − Σ log|det|, with its gradient through the flows (scale
 * times it added to b->g*; b->gmu NULL: none).  z holds (F + 1)·d
 * scratch doubles, dz d more, eps d. */
static double whvi_kl_flows(const struct whvi_block *b, double delta, const double *eps,
                            double scale, double *z, double *dz)
{
	const long d = b->d, nf = b->flows;
	const float *mu = b->mu, *rho = b->rho, *fu = b->fu, *fw = b->fw, *fb = b->fb;
	float *gu = b->gu, *gw = b->gw, *gb = b->gb;
	double kl = 0, *zf = z + nf * d;
	long i, k;

	/* z_0 = μ + σ∘ε; E_q0[log q0] = −Σ(½ln 2π + ln σ + ½) */
	for (i = 0; i < d; i++) {
		double s = bnn_softplus(rho[i]);
		z[i] = mu[i] + s * eps[i];
		kl -= WHVI_HALF_LOG_2PI + log(s) + 0.5;
	}
	/* eq. 20: z_k = z_{k−1} + u_k·tanh(w_kᵀz_{k−1} + b_k); eq. 21: the
	 * log-determinant log|1 + u_kᵀw_k·h'(a_k)| */
	for (k = 0; k < nf; k++) {
		const float *u = fu + k * d, *w = fw + k * d;
		double a = fb[k], uw = 0, h, c;
		for (i = 0; i < d; i++) {
			a += w[i] * z[k * d + i];
			uw += (double)u[i] * w[i];
		}
		h = tanh(a);
		c = 1 + uw * (1 - h * h);
		kl -= log(fabs(c));
		for (i = 0; i < d; i++)
			z[(k + 1) * d + i] = z[k * d + i] + u[i] * h;
	}
	/* −log p(z_F) = Σ(½ln 2π − ½ln δ + ½δz²) */
	for (i = 0; i < d; i++)
		kl += WHVI_HALF_LOG_2PI - 0.5 * log(delta) + 0.5 * delta * zf[i] * zf[i];
	if (!b->gmu)
		return kl;
	for (i = 0; i < d; i++)
		dz[i] = delta * zf[i];
	for (k = nf - 1; k >= 0; k--) {
		const float *u = fu + k * d, *w = fw + k * d;
		const double *zk = z + k * d;
		double a = fb[k], uw = 0, udz = 0, h, psi, dpsi, c, dc, da;
		for (i = 0; i < d; i++) {
			a += w[i] * zk[i];
			uw += (double)u[i] * w[i];
			udz += u[i] * dz[i];
		}
		h = tanh(a);
		psi = 1 - h * h;     /* h'(a) */
		dpsi = -2 * h * psi; /* h''(a) */
		c = 1 + uw * psi;
		dc = -1 / c; /* ∂(−log|c|)/∂c */
		da = psi * udz + dc * uw * dpsi;
		for (i = 0; i < d; i++) {
			gu[k * d + i] += (float)(scale * (dz[i] * h + dc * psi * w[i]));
			gw[k * d + i] += (float)(scale * (da * zk[i] + dc * psi * u[i]));
		}
		gb[k] += (float)(scale * da);
		for (i = 0; i < d; i++)
			dz[i] += da * w[i];
	}
	for (i = 0; i < d; i++) {
		double s = bnn_softplus(rho[i]);
		b->gmu[i] += (float)(scale * dz[i]);
		b->grho[i] += (float)(scale * (dz[i] * eps[i] - 1 / s) * whvi_sigmoid(rho[i]));
	}
	return kl;
}

/* (F + 3)·D for the layer with flows that needs most: z_0 .. z_F, dz, ε. */
long bnn_whvi_kl_scratch(const bnn_model *m)
{
	long most = 0;
	int i;

	for (i = 0; i < m->nlayers; i++) {
		struct whvi_layer w;
		if (!(m->layers[i].caps & BNN_CAP_WHVI))
			continue;
		whvi_find(m, &m->layers[i], &w);
		if (w.flows > 0 && (w.flows + 3) * w.d > most)
			most = (w.flows + 3) * w.d;
	}
	return most;
}

double bnn_whvi_kl(const bnn_model *m, const float *params, double delta, double scale, float *grad,
                   bnn_rng *rng, double *z)
{
	double kl = 0;
	float buf[256];
	int i;

	for (i = 0; i < m->nlayers; i++) {
		const bnn_layer *l = &m->layers[i];
		struct whvi_layer w;
		double dl = isfinite(delta) ? delta : l->prior_precision;
		long j, e;
		if (!(l->caps & BNN_CAP_WHVI))
			continue;
		whvi_find(m, l, &w);
		if (!w.mu || !w.rho)
			continue;
		if (w.bmu && w.brho)
			kl += whvi_kl_gauss(w.bmu->size, params + w.bmu->offset,
			                    params + w.brho->offset, dl, scale,
			                    grad ? grad + w.bmu->offset : NULL,
			                    grad ? grad + w.brho->offset : NULL);
		if (w.flows == 0) {
			kl += whvi_kl_gauss(w.mu->size, params + w.mu->offset,
			                    params + w.rho->offset, dl, scale,
			                    grad ? grad + w.mu->offset : NULL,
			                    grad ? grad + w.rho->offset : NULL);
			continue;
		}
		for (j = 0; j < w.stack; j++) {
			struct whvi_block block;
			double *eps = z + (w.flows + 2) * w.d;
			for (e = 0; e < w.d; e += 256) {
				long n = w.d - e < 256 ? w.d - e : 256, q;
				if (rng)
					bnn_rng_normal(rng, buf, (size_t)n);
				for (q = 0; q < n; q++)
					eps[e + q] = rng ? buf[q] : 0.0;
			}
			block = whvi_block_at(&w, j, params, grad);
			kl += whvi_kl_flows(&block, dl, eps, scale, z, z + (w.flows + 1) * w.d);
		}
	}
	return kl;
}

int bnn_model_has_whvi(const bnn_model *m)
{
	int i;

	for (i = 0; i < m->nlayers; i++)
		if (m->layers[i].caps & BNN_CAP_WHVI)
			return 1;
	return 0;
}
