#!/bin/sh
# likelihoods.sh: the poisson and laplace likelihoods end to end.  bnnc
# --main compiles a small count regression (poisson) and a robust one
# (laplace, scale = learned), each as a point network (trained with adam)
# and a meanfield one (ivon, vogn, bbb), on data drawn here: counts
# y ~ Poisson(exp(0.5 + 0.8·x1 − 0.5·x2)) and y = x1 + 0.5·x2 plus
# Laplace(0, 0.2) noise.  Checks: every optimizer trains both and eval's
# NLL beats the best constant predictive of the training targets (the
# Poisson of their mean rate; the Laplace of their median and mean absolute
# deviation); eval's JSON keys; predict at the mean (--mc 0) gives a
# poisson variance equal to its mean rate and a laplace variance 2b² from
# the learned log b; eval's coverage of the central intervals against the
# Poisson CDF by hand on a tiny set; the exact messages for a negative and
# a fractional count (load time: file and example), and the standalone
# target's refusal.
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"

cd "$TAP_TMP" || bail_out "no temporary directory"

rand='function u() { s = (s * 1103515245 + 12345) % 2147483648; return s / 2147483648 }'
counts() { # N SEED
	awk -v n="$1" -v s="$2" "$rand"'
	BEGIN { print "x1,x2,y"
		for (i = 0; i < n; i++) {
			a = 2 * u() - 1; b = 2 * u() - 1; lam = exp(0.5 + 0.8 * a - 0.5 * b)
			k = 0; p = u(); L = exp(-lam); while (p > L) { k++; p *= u() }
			printf "%.6f,%.6f,%d\n", a, b, k } }'
}
heavy() { # N SEED
	awk -v n="$1" -v s="$2" "$rand"'
	BEGIN { print "x1,x2,y"
		for (i = 0; i < n; i++) {
			a = 2 * u() - 1; b = 2 * u() - 1; v = u() - 0.5
			e = (v < 0 ? 1 : -1) * 0.2 * log(1 - 2 * (v < 0 ? -v : v) + 1e-12)
			printf "%.6f,%.6f,%.6f\n", a, b, a + 0.5 * b + e } }'
}
counts 400 3 >ctrain.csv
counts 200 4 >ctest.csv
heavy 400 5 >htrain.csv
heavy 200 6 >htest.csv

model() { # NAME LIKELIHOOD POSTERIOR
	printf 'model %s;\ninput x[2];\n%s\nz = dense(tanh(dense(x, 8)), 1);\ny ~ %s;\n' \
		"$1" "$3" "$2" >"$1.bnn"
	"$BNNC" --main -o "$1.c" "$1.bnn" || bail_out "bnnc cannot compile $1.bnn"
	# shellcheck disable=SC2086
	$CC $BNN_CFLAGS -o "$1" "$1.c" $BNN_LIBS || bail_out "cannot build $1"
}
model pois 'poisson(z)' ''
model pois_mf 'poisson(z)' 'posterior meanfield;'
model lap 'laplace(z, scale = learned)' ''
model lap_mf 'laplace(z, scale = learned)' 'posterior meanfield;'

key() { # KEY JSON
	printf '%s\n' "$2" | sed -n "s/.*\"$1\": \([^,}]*\)[,}].*/\1/p"
}

# The NLL per example of the best constant predictive on the test set.
# poisson: rate = the training mean; log y! as a sum of logs.
base_pois=$(awk -F, 'NR == FNR { if (FNR > 1) { s += $3; n++ } next }
	FNR > 1 { m = s / n; lf = 0; for (i = 2; i <= $3; i++) lf += log(i)
		nll += m - $3 * log(m) + lf; t++ }
	END { printf "%.6f", nll / t }' ctrain.csv ctest.csv)
# laplace: location = the training median, b = the mean |y − median|.
med=$(awk -F, 'NR > 1 { print $3 }' htrain.csv | sort -g | awk '{ v[NR] = $1 } END { print (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
base_lap=$(awk -F, -v med="$med" 'NR == FNR { if (FNR > 1) { d = $3 - med; s += d < 0 ? -d : d; n++ } next }
	FNR > 1 { b = s / n; d = $3 - med; nll += log(2 * b) + (d < 0 ? -d : d) / b; t++ }
	END { printf "%.6f", nll / t }' htrain.csv htest.csv)
diag "constant predictive NLL: poisson $base_pois, laplace $base_lap"

for case in pois:adam pois_mf:ivon pois_mf:vogn pois_mf:bbb lap:adam lap_mf:ivon lap_mf:vogn \
	lap_mf:bbb; do
	m=${case%%:*}
	opt=${case#*:}
	case $m in
	pois*) train=ctrain.csv test=ctest.csv base=$base_pois ;;
	*) train=htrain.csv test=htest.csv base=$base_lap ;;
	esac
	run "./$m" train --data $train --optimizer "$opt" --epochs 40 --batch 16 --save "$m-$opt.ckpt" \
		--quiet
	is "$run_status" 0 "$m trains with $opt"
	run "./$m" eval --load "$m-$opt.ckpt" --data $test
	case $run_out in
	'{"n": 200, "mc": '*', "rmse": '*', "nll": '*', "entropy": '*', "mae": '*', "coverage_50": '*', "coverage_90": '*', "coverage_95": '*'}') st=0 ;;
	*) st=1 ;;
	esac
	ok $st "$m ($opt): eval reports rmse, nll, entropy, mae and the coverage of 50/90/95% intervals: $run_out"
	nll=$(key nll "$run_out")
	ok "$(awk -v a="$nll" -v b="$base" 'BEGIN { exit !(a < b) }'; echo $?)" \
		"$m ($opt): test NLL $nll is below the constant predictive's $base"
done

# ---- predict at the mean ---------------------------------------------------
./pois predict --load pois-adam.ckpt --data ctest.csv --mc 0 --out p.csv || bail_out "predict"
is "$(head -1 p.csv)" "mean_0,var_0,aleatoric_0,epistemic_0" \
	"poisson predict: the mean rate, the variance and its two parts"
is "$(awk -F, 'NR > 1 && $1 != $2 { bad++ } END { print bad + 0 }' p.csv)" 0 \
	"poisson at the mean: the variance is the rate (no epistemic part)"
./pois_mf predict --load pois_mf-ivon.ckpt --data ctest.csv --out pm.csv || bail_out "predict"
is "$(awk -F, 'NR > 1 && !($2 > $1) { bad++ } END { print bad + 0 }' pm.csv)" 0 \
	"poisson over samples: variance E[rate] + Var[rate] above the mean rate"
is "$(awk -F, 'NR > 1 && ($3 != $1 || !($4 > 0)) { bad++ } END { print bad + 0 }' pm.csv)" 0 \
	"poisson over samples: the aleatoric part is E[rate], the mean, and the epistemic part > 0"
./lap predict --load lap-adam.ckpt --data htest.csv --mc 0 --out l.csv || bail_out "predict"
logb=$(./lap posterior --load lap-adam.ckpt | awk -F, '$1 == "y.log_scale" { print $3 }')
is "$(awk -F, -v s="$logb" 'NR > 1 { w = 2 * exp(2 * s); d = $2 - w; if (d < 0) d = -d
	if (d > 1e-6 * w) bad++ } END { print bad + 0 }' l.csv)" 0 \
	"laplace at the mean: the variance is 2b^2 with b = exp($logb)"

# ---- coverage by hand ------------------------------------------------------
# Four examples; predict's rate λ at the mean, and the Poisson CDF summed by
# hand: y is inside the central c-interval when F(y) ≥ (1 − c)/2 and
# F(y − 1) < (1 + c)/2.
printf 'x1,x2,y\n0.5,-0.5,0\n-0.2,0.1,1\n0.9,0.3,4\n-0.8,0.8,9\n' >tiny.csv
./pois predict --load pois-adam.ckpt --data tiny.csv --mc 0 --out tp.csv || bail_out "predict"
want=$(paste -d, tp.csv tiny.csv | awk -F, 'NR > 1 {
	lam = $1; y = $7; p = exp(-lam); F = 0; Fb = 0
	for (i = 0; i <= y; i++) { if (i > 0) p *= lam / i; if (i < y) Fb += p; F += p }
	in50 += F >= 0.25 && Fb < 0.75; in90 += F >= 0.05 && Fb < 0.95
	in95 += F >= 0.025 && Fb < 0.975; n++ }
	END { printf "%.9g %.9g %.9g", in50 / n, in90 / n, in95 / n }')
run ./pois eval --load pois-adam.ckpt --data tiny.csv --mc 0
is "$(key coverage_50 "$run_out") $(key coverage_90 "$run_out") $(key coverage_95 "$run_out")" \
	"$want" "poisson coverage of the 50/90/95% intervals on 4 examples, by hand: $want"

# ---- bad counts ------------------------------------------------------------
printf 'x1,x2,y\n0.1,0.2,1\n0.3,0.1,2\n0.5,0.5,-1\n' >neg.csv
run ./pois eval --load pois-adam.ckpt --data neg.csv
is "$run_status/$run_err" \
	"1/./pois: neg.csv: example 3: count -1 is negative (poisson targets are non-negative integers)" \
	"a negative count is refused at load time, with the file and the example"
printf 'x1,x2,y\n0.1,0.2,1\n0.3,0.1,2.5\n' >frac.csv
run ./pois train --data frac.csv --epochs 1 --save f.ckpt
is "$run_status/$run_err" \
	"1/./pois: frac.csv: example 2: count 2.5 is not an integer (poisson targets are non-negative integers)" \
	"a fractional count is refused by train"

# ---- the standalone target -------------------------------------------------
run "$BNNC" --standalone -o sa.c pois.bnn
is "$run_status/$(printf '%s\n' "$run_err" | head -1)" \
	"1/pois.bnn:5:1: error: the standalone target does not support the poisson likelihood" \
	"bnnc --standalone refuses poisson"
run "$BNNC" --standalone -o sa.c lap.bnn
is "$run_status/$(printf '%s\n' "$run_err" | head -1)" \
	"1/lap.bnn:5:1: error: the standalone target does not support the laplace likelihood" \
	"bnnc --standalone refuses laplace"

done_testing
