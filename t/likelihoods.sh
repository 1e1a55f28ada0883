#!/bin/sh
# likelihoods.sh: the poisson, laplace, studentt and negbinomial
# likelihoods and gaussian(mean, logvar) end to end.  bnnc
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
# Then the likelihoods whose scale may be a node, on data drawn here:
# heteroscedastic y = x1 + 0.5·x2 + e^(−1.5 + 1.2·x1)·ε for gaussian(z, v)
# (the log-variance v a second head on the trunk), heavy-tailed y = x1 +
# 0.5·x2 + 0.2·t₃ for studentt(z, scale = learned, df = 3), and
# overdispersed counts (gamma-Poisson, mean e^(1 + 0.8·x1 − 0.5·x2),
# dispersion 2) for negbinomial(z, dispersion = learned), each with adam,
# ivon, vogn and bbb.  Checks: eval's keys, the test NLL below the best
# constant predictive's (a Gaussian of the training mean and variance; the
# Laplace one above; the Poisson of the mean count), and, seed-fixed and
# loose: the learned variance of gaussian(z, v) tracks the true one (its
# mean over the test examples with x1 > 0.5 at least 4 times that over x1
# < −0.5, where the truth is about 37 times), and negbinomial's test NLL
# below that of a poisson model trained on the same overdispersed counts.
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
	"1/./pois: neg.csv: example 3: count -1 is negative (poisson and negbinomial targets are non-negative integers)" \
	"a negative count is refused at load time, with the file and the example"
printf 'x1,x2,y\n0.1,0.2,1\n0.3,0.1,2.5\n' >frac.csv
run ./pois train --data frac.csv --epochs 1 --save f.ckpt
is "$run_status/$run_err" \
	"1/./pois: frac.csv: example 2: count 2.5 is not an integer (poisson and negbinomial targets are non-negative integers)" \
	"a fractional count is refused by train"

# ---- scales given by a node, studentt, negbinomial -----------------------------
normal='function gauss() { return sqrt(-2 * log(1 - u())) * cos(6.283185307179586 * u()) }'
hetero() { # N SEED
	awk -v n="$1" -v s="$2" "$rand $normal"'
	BEGIN { print "x1,x2,y"
		for (i = 0; i < n; i++) {
			a = 2 * u() - 1; b = 2 * u() - 1
			printf "%.6f,%.6f,%.6f\n", a, b, a + 0.5 * b + exp(-1.5 + 1.2 * a) * gauss() } }'
}
student() { # N SEED: t with 3 degrees of freedom, a normal over sqrt(chi2_3 / 3)
	awk -v n="$1" -v s="$2" "$rand $normal"'
	BEGIN { print "x1,x2,y"
		for (i = 0; i < n; i++) {
			a = 2 * u() - 1; b = 2 * u() - 1; c = gauss(); d = gauss(); e = gauss()
			t = gauss() / sqrt((c * c + d * d + e * e) / 3)
			printf "%.6f,%.6f,%.6f\n", a, b, a + 0.5 * b + 0.2 * t } }'
}
overdispersed() { # N SEED: rate ~ Gamma(2, m/2) (two exponentials), then Poisson
	awk -v n="$1" -v s="$2" "$rand"'
	BEGIN { print "x1,x2,y"
		for (i = 0; i < n; i++) {
			a = 2 * u() - 1; b = 2 * u() - 1; m = exp(1 + 0.8 * a - 0.5 * b)
			lam = -(m / 2) * (log(1 - u()) + log(1 - u()))
			k = 0; p = u(); L = exp(-lam); while (p > L) { k++; p *= u() }
			printf "%.6f,%.6f,%d\n", a, b, k } }'
}
hetero 400 7 >gtrain.csv
hetero 400 8 >gtest.csv
student 400 9 >ttrain.csv
student 200 10 >ttest.csv
overdispersed 400 11 >ntrain.csv
overdispersed 200 12 >ntest.csv

model2() { # NAME LIKELIHOOD POSTERIOR: two heads, z and v, on one trunk
	printf 'model %s;\ninput x[2];\n%s\nh = tanh(dense(x, 8));\nz = dense(h, 1);\nv = dense(h, 1);\ny ~ %s;\n' \
		"$1" "$3" "$2" >"$1.bnn"
	"$BNNC" --main -o "$1.c" "$1.bnn" || bail_out "bnnc cannot compile $1.bnn"
	# shellcheck disable=SC2086
	$CC $BNN_CFLAGS -o "$1" "$1.c" $BNN_LIBS || bail_out "cannot build $1"
}
model2 ghet 'gaussian(z, v)' ''
model2 ghet_mf 'gaussian(z, v)' 'posterior meanfield;'
model stt 'studentt(z, scale = learned, df = 3)' ''
model stt_mf 'studentt(z, scale = learned, df = 3)' 'posterior meanfield;'
model nb 'negbinomial(z, dispersion = learned)' ''
model nb_mf 'negbinomial(z, dispersion = learned)' 'posterior meanfield;'

# A Gaussian of the training targets' mean and variance, on the test set.
base_gauss() { # TRAIN TEST
	awk -F, 'NR == FNR { if (FNR > 1) { s += $3; q += $3 * $3; n++ } next }
	FNR > 1 { m = s / n; v = q / n - m * m; d = $3 - m
		nll += 0.5 * log(6.283185307179586 * v) + d * d / (2 * v); t++ }
	END { printf "%.6f", nll / t }' "$1" "$2"
}
base_ghet=$(base_gauss gtrain.csv gtest.csv)
med=$(awk -F, 'NR > 1 { print $3 }' ttrain.csv | sort -g | awk '{ v[NR] = $1 } END { print (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
base_stt=$(awk -F, -v med="$med" 'NR == FNR { if (FNR > 1) { d = $3 - med; s += d < 0 ? -d : d; n++ } next }
	FNR > 1 { b = s / n; d = $3 - med; nll += log(2 * b) + (d < 0 ? -d : d) / b; t++ }
	END { printf "%.6f", nll / t }' ttrain.csv ttest.csv)
base_nb=$(awk -F, 'NR == FNR { if (FNR > 1) { s += $3; n++ } next }
	FNR > 1 { m = s / n; lf = 0; for (i = 2; i <= $3; i++) lf += log(i)
		nll += m - $3 * log(m) + lf; t++ }
	END { printf "%.6f", nll / t }' ntrain.csv ntest.csv)
diag "constant predictive NLL: gaussian $base_ghet, laplace $base_stt, poisson $base_nb"

for case in ghet:adam ghet_mf:ivon ghet_mf:vogn ghet_mf:bbb stt:adam stt_mf:ivon stt_mf:vogn \
	stt_mf:bbb nb:adam nb_mf:ivon nb_mf:vogn nb_mf:bbb; do
	m=${case%%:*}
	opt=${case#*:}
	case $m in
	ghet*) train=gtrain.csv test=gtest.csv base=$base_ghet ;;
	stt*) train=ttrain.csv test=ttest.csv base=$base_stt ;;
	*) train=ntrain.csv test=ntest.csv base=$base_nb ;;
	esac
	run "./$m" train --data $train --optimizer "$opt" --epochs 40 --batch 16 --save "$m-$opt.ckpt" \
		--quiet
	is "$run_status" 0 "$m trains with $opt"
	run "./$m" eval --load "$m-$opt.ckpt" --data $test
	case $run_out in
	'{"n": '*', "mc": '*', "rmse": '*', "nll": '*', "entropy": '*', "mae": '*', "coverage_50": '*', "coverage_90": '*', "coverage_95": '*'}') st=0 ;;
	*) st=1 ;;
	esac
	ok $st "$m ($opt): eval reports rmse, nll, entropy, mae and the coverage of 50/90/95% intervals: $run_out"
	nll=$(key nll "$run_out")
	ok "$(awk -v a="$nll" -v b="$base" 'BEGIN { exit !(a != "" && a + 0 < b + 0) }'; echo $?)" \
		"$m ($opt): test NLL $nll is below the constant predictive's $base"
done

# gaussian(z, v) at the mean: the variance is e^v alone, and it follows x1.
./ghet predict --load ghet-adam.ckpt --data gtest.csv --mc 0 --out g.csv || bail_out "predict"
is "$(head -1 g.csv)" "mean_0,var_0,aleatoric_0,epistemic_0" \
	"gaussian(z, v) predict: one mean, one variance and its two parts per target"
is "$(awk -F, 'NR > 1 && ($3 != $2 || $4 != 0) { bad++ } END { print bad + 0 }' g.csv)" 0 \
	"gaussian(z, v) at the mean: the variance e^v is all aleatoric"
ratio=$(paste -d, g.csv gtest.csv | awk -F, 'NR > 1 { if ($5 > 0.5) { hi += $2; nh++ }
	if ($5 < -0.5) { lo += $2; nl++ } } END { printf "%.3f", (hi / nh) / (lo / nl) }')
ok "$(awk -v r="$ratio" 'BEGIN { exit !(r >= 4) }'; echo $?)" \
	"gaussian(z, v): the learned variance tracks the true one (x1 > 0.5 over x1 < -0.5: $ratio, truth 37)"
run ./ghet_mf predict --load ghet_mf-ivon.ckpt --data gtest.csv --out gm.csv
is "$run_status" 0 "gaussian(z, v) predicts over samples (ivon)"

# negbinomial against poisson on the same overdispersed counts.
model npois 'poisson(z)' ''
./npois train --data ntrain.csv --optimizer adam --epochs 40 --batch 16 --save npois.ckpt \
	--quiet || bail_out "poisson on the overdispersed counts"
nll_p=$(key nll "$(./npois eval --load npois.ckpt --data ntest.csv)")
nll_nb=$(key nll "$(./nb eval --load nb-adam.ckpt --data ntest.csv)")
ok "$(awk -v a="$nll_nb" -v b="$nll_p" 'BEGIN { exit !(a < b) }'; echo $?)" \
	"overdispersed counts: negbinomial's test NLL $nll_nb is below poisson's $nll_p"
./nb predict --load nb-adam.ckpt --data ntest.csv --mc 0 --out nbp.csv || bail_out "predict"
is "$(awk -F, 'NR > 1 && !($2 > $1) { bad++ } END { print bad + 0 }' nbp.csv)" 0 \
	"negbinomial at the mean: the variance m + m^2/r is above the mean m"
run ./nb eval --load nb-adam.ckpt --data frac.csv
is "$run_status/$run_err" \
	"1/./nb: frac.csv: example 2: count 2.5 is not an integer (poisson and negbinomial targets are non-negative integers)" \
	"negbinomial: a fractional count is refused at load time"

# ---- the standalone target -------------------------------------------------
# t/standalone.sh runs these predictives (t/models/sa_*.bnn); here: they are
# written, and the analytic pass, which has no closed form for them,
# refuses them at the likelihood with its exact message
for m in pois lap stt ghet; do
	run "$BNNC" --standalone -o sa.c "$m.bnn"
	is "$run_status/$run_err" "0/" "bnnc --standalone writes $m.bnn's predictive"
done
run "$BNNC" --standalone --analytic -o sa.c pois.bnn
printf '%s\n' "$run_err" | grep -qx "pois.bnn:5:1: error: analytic predictive: the poisson likelihood not supported"
ok $? "bnnc --standalone --analytic refuses poisson, at the likelihood"
run "$BNNC" --standalone --analytic -o sa.c ghet.bnn
printf '%s\n' "$run_err" | grep -qx "ghet.bnn:7:1: error: analytic predictive: the gaussian likelihood with a scale given by a node not supported"
ok $? "bnnc --standalone --analytic refuses a scale given by a node, at the likelihood"

done_testing
