#!/bin/sh
# predict_split.sh: a regression predictive's variance split into its
# aleatoric and epistemic parts (predict's aleatoric_j and epistemic_j
# columns, docs/metrics.md) and eval's PIT histogram (--plots), on
# t/models/rt_split.bnn (meanfield, learned noise).  Checks:
#   - at the posterior mean (--mc 0) the epistemic part is 0 and the
#     aleatoric part is the learned σ², read from the checkpoint;
#   - over samples the columns add up to the variance, the aleatoric part
#     is still σ² and the epistemic part is positive;
#   - a mixture of two runs (train --members 2): its aleatoric part is the
#     mean of the members' and its variance the mixture's, from the two
#     runs' own predictions;
#   - eval --plots writes pit.svg for a regression model.
. "$TAP_SH"

cd "$TAP_TMP" || bail_out "no temporary directory"

# y = sin(2a) + b/2 + noise, noise from an LCG.
awk 'BEGIN { s = 11; print "a,b,y"
	for (i = 0; i < 240; i++) {
		for (j = 1; j <= 3; j++) { s = (s * 1103515245 + 12345) % 2147483648; x[j] = s / 2147483648 - 0.5 }
		printf "%.6f,%.6f,%.6f\n", 3 * x[1], 2 * x[2], sin(6 * x[1]) + x[2] + 0.4 * x[3]
	} }' >reg.csv

"$BNNC" --main -o split.c "$top_srcdir/t/models/rt_split.bnn" &&
	$CC $BNN_CFLAGS -o split split.c $BNN_LIBS
ok $? "rt_split builds"

T="--data reg.csv --optimizer ivon --epochs 5 --batch 24 --quiet"
./split train $T --seed 5 --save s5.ckpt >/dev/null &&
	./split train $T --seed 6 --save s6.ckpt >/dev/null &&
	./split train $T --members 2 --seed 5 --save mix.ckpt >/dev/null
ok $? "two runs and their mixture train"

# ---- at the mean -----------------------------------------------------------
./split predict --load s5.ckpt --data reg.csv --mc 0 --out m0.csv || bail_out "predict --mc 0"
is "$(head -1 m0.csv)" "mean_0,var_0,aleatoric_0,epistemic_0" \
	"predict's columns: the mean, the variance and its two parts"
logs=$(./split posterior --load s5.ckpt | awk -F, '$1 == "y.log_sigma" { print $3 }')
is "$(awk -F, -v s="$logs" 'NR > 1 { w = exp(2 * s); d = $3 - w; if (d < 0) d = -d
	if (d > 1e-6 * w || $2 != $3 || $4 != 0) bad++ } END { print bad + 0 }' m0.csv)" 0 \
	"--mc 0: aleatoric = var = exp(2 log_sigma) (log_sigma $logs), epistemic 0"

# ---- over samples -------------------------------------------------------------
./split predict --load s5.ckpt --data reg.csv --mc 8 --seed 5 --out p5.csv &&
	./split predict --load s6.ckpt --data reg.csv --mc 8 --seed 6 --out p6.csv ||
	bail_out "predict --mc 8"
is "$(awk -F, -v s="$logs" 'NR > 1 { w = exp(2 * s); d = $3 - w; if (d < 0) d = -d
	e = $2 - $3 - $4; if (e < 0) e = -e
	if (d > 1e-6 * w || e > 1e-6 * $2 || !($4 > 0)) bad++ } END { print bad + 0 }' p5.csv)" 0 \
	"--mc 8: aleatoric = sigma^2, epistemic > 0, and they add up to the variance"

# ---- a mixture -------------------------------------------------------------------
./split predict --load mix.ckpt --data reg.csv --mc 8 --seed 5 --out pm.csv || bail_out "predict mix"
# The mixture of the runs' predictives: mean (m5 + m6)/2, aleatoric
# (a5 + a6)/2, variance ((v5 + m5²) + (v6 + m6²))/2 − mean².
worst=$(paste -d, p5.csv p6.csv pm.csv | awk -F, 'NR > 1 {
	m = ($1 + $5) / 2; a = ($3 + $7) / 2; v = ($2 + $1 * $1 + $6 + $5 * $5) / 2 - m * m
	d = m - $9; if (d < 0) d = -d; if (d > w) w = d
	d = (a - $11) / a; if (d < 0) d = -d; if (d > w) w = d
	d = (v - $10) / v; if (d < 0) d = -d; if (d > w) w = d
	# epistemic: the mean of the two epistemic parts plus the variance of the two means
	if ($12 < (($4 + $8) / 2 + (m - $1) * (m - $1)) * (1 - 1e-5) - 1e-7) low++
} END { printf "%s %.1e %d\n", w < 1e-5 && !low ? "ok" : "differ", w, low }')
is "${worst%% *}" ok "the mixture: mean, aleatoric part, variance and epistemic part from the runs' predictives ($worst)"

# ---- the PIT histogram ----------------------------------------------------------
run ./split eval --load s5.ckpt --data reg.csv --plots plots
is "$run_status" 0 "eval --plots on a regression model"
ok "$(test -s plots/pit.svg && grep -q 'PIT histogram' plots/pit.svg; echo $?)" \
	"writes plots/pit.svg"
ok "$(test ! -e plots/reliability.svg; echo $?)" "and no reliability diagram"

done_testing
