# sensitivity_ref.awk: t/sensitivity.sh's reference for t/models/sn_net.bnn
# (x[2] -> tanh(dense 2) -> dense 2, categorical), written from the
# network's Jacobian, independently of the library's route through loss
# gradients: for each CSV row x1,x2,label it prints
# index,score,nll,loo_nll with
#   J[c, p] = ∂f_c/∂θ_p            (the chain rule through tanh, below)
#   V = J diag(σ²) Jᵀ               (a full 2 x 2 matrix: IVON App. C.5)
#   e = softmax(f) − onehot(y),  Δ_c = (V e)_c − (V e)_y
#   score ‖Δ‖₂,  nll ℓ(f),  loo_nll ℓ(f + Δ) = ℓ(f + V e)   (§4.4)
# Variables: P, the 12 parameters in the model's tensor order (W1 row-major
# [out][in], b1, W2 row-major, b2), and S, their 12 σ, space-separated.
function th(a) { return (exp(2 * a) - 1) / (exp(2 * a) + 1) }
BEGIN {
	FS = ","
	np = split(P, w, " "); split(S, sg, " ")
	for (p = 1; p <= np; p++) s2[p - 1] = sg[p] * sg[p]
	# w[1..12]: W1 00 01 10 11, b1 0 1, W2 00 01 10 11, b2 0 1
}
NR > 1 {
	x[0] = $1; x[1] = $2; y = $3
	for (k = 0; k < 2; k++) h[k] = th(w[1 + 2 * k] * x[0] + w[2 + 2 * k] * x[1] + w[5 + k])
	for (c = 0; c < 2; c++) f[c] = w[7 + 2 * c] * h[0] + w[8 + 2 * c] * h[1] + w[11 + c]
	for (c = 0; c < 2; c++) {
		for (p = 0; p < 12; p++) J[c, p] = 0
		for (k = 0; k < 2; k++) {
			d = w[7 + 2 * c + k] * (1 - h[k] * h[k])
			J[c, 2 * k] = d * x[0]; J[c, 2 * k + 1] = d * x[1]; J[c, 4 + k] = d
			J[c, 6 + 2 * c + k] = h[k]
		}
		J[c, 10 + c] = 1
	}
	m = f[0] > f[1] ? f[0] : f[1]; z = exp(f[0] - m) + exp(f[1] - m); lse = m + log(z)
	for (c = 0; c < 2; c++) e[c] = exp(f[c] - lse) - (c == y)
	for (c = 0; c < 2; c++) {
		ve[c] = 0
		for (dd = 0; dd < 2; dd++) { v = 0; for (p = 0; p < 12; p++) v += s2[p] * J[c, p] * J[dd, p]; ve[c] += v * e[dd] }
	}
	sc = 0
	for (c = 0; c < 2; c++) { D[c] = ve[c] - ve[y]; sc += D[c] * D[c]; g[c] = f[c] + D[c] }
	m = g[0] > g[1] ? g[0] : g[1]
	printf "%d,%.9g,%.9g,%.9g\n", NR - 2, sqrt(sc), lse - f[y], m + log(exp(g[0] - m) + exp(g[1] - m)) - f[y]
}
