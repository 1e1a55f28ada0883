#!/bin/sh
# priors.sh: the scale-mixture and Laplace priors end to end.  bnnc --main
# compiles a small regression (2 inputs, 8 tanh units, a learned Gaussian
# σ) under `prior laplace(scale = 0.5)` and under `prior scalemixture(pi =
# 0.5, sigma1 = 1, sigma2 = 0.05)`, each as a point network (trained with
# adam and sgd) and a meanfield one (bbb, with weight samples and with the
# local reparameterisation), on data drawn here (y = x1 − 0.5·x2 plus
# uniform noise).  Checks: every run trains and eval's NLL beats the best
# constant Gaussian predictive of the training targets; the summary's
# header names the prior; the checkpoint is bound to the prior (the same
# model under a gaussian prior refuses it as another version); the exact
# refusals: vogn, ivon and badam with either prior, the option delta with
# bbb, an emp layer under the model's prior, by bnnc at its place and by
# the library for a descriptor edited to have it (and its acceptance with
# a precision of its own).
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"

cd "$TAP_TMP" || bail_out "no temporary directory"

rand='function u() { s = (s * 1103515245 + 12345) % 2147483648; return s / 2147483648 }'
line() { # N SEED
	awk -v n="$1" -v s="$2" "$rand"'
	BEGIN { print "x1,x2,y"
		for (i = 0; i < n; i++) {
			a = 2 * u() - 1; b = 2 * u() - 1
			printf "%.6f,%.6f,%.6f\n", a, b, a - 0.5 * b + 0.4 * (u() - 0.5) } }'
}
line 400 3 >train.csv
line 200 4 >test.csv

model() { # NAME PRIOR POSTERIOR [LAYER-FAMILY]
	printf 'model %s;\ninput x[2];\n%s\n%s\nh = tanh(dense(x, 8)%s);\nz = dense(h, 1);\ny ~ gaussian(z, sigma = learned);\n' \
		"$1" "$2" "$3" "$4" >"$1.bnn"
	"$BNNC" --main -o "$1.c" "$1.bnn" || bail_out "bnnc cannot compile $1.bnn"
	# shellcheck disable=SC2086
	$CC $BNN_CFLAGS -o "$1" "$1.c" $BNN_LIBS || bail_out "cannot build $1"
}
lap='prior laplace(scale = 0.5);'
mix='prior scalemixture(pi = 0.5, sigma1 = 1, sigma2 = 0.05);'
model lap "$lap" ''
model lap_mf "$lap" 'posterior meanfield;'
model mix "$mix" ''
model mix_mf "$mix" 'posterior meanfield;'

key() { # KEY JSON
	printf '%s\n' "$2" | sed -n "s/.*\"$1\": \([^,}]*\)[,}].*/\1/p"
}

# The NLL per example of N(mean, variance) of the training targets.
base=$(awk -F, 'NR == FNR { if (FNR > 1) { s += $3; q += $3 * $3; n++ } next }
	FNR > 1 { m = s / n; v = q / n - m * m; d = $3 - m
		nll += 0.5 * log(2 * 3.14159265358979 * v) + d * d / (2 * v); t++ }
	END { printf "%.6f", nll / t }' train.csv test.csv)
diag "constant predictive NLL: $base"

for case in lap:adam lap:sgd lap_mf:bbb:0 lap_mf:bbb:1 mix:adam mix:sgd mix_mf:bbb:0 \
	mix_mf:bbb:1; do
	m=${case%%:*}
	rest=${case#*:}
	opt=${rest%%:*}
	set --
	case $rest in
	*:*) set -- --set "lrt=${rest#*:}" ;;
	esac
	tag=$(printf '%s' "$rest" | tr : -)
	run "./$m" train --data train.csv --optimizer "$opt" --epochs 40 --batch 16 \
		--save "$m-$tag.ckpt" --quiet "$@"
	is "$run_status/$run_err" "0/" "$m trains with $rest"
	run "./$m" eval --load "$m-$tag.ckpt" --data test.csv
	nll=$(key nll "$run_out")
	ok "$(awk -v a="$nll" -v b="$base" 'BEGIN { exit !(a < b) }'; echo $?)" \
		"$m ($rest): test NLL $nll is below the constant predictive's $base"
done

# ---- the summary and the checkpoint ----------------------------------------
run "$BNNC" --summary mix_mf.bnn
is "$(printf '%s\n' "$run_out" | sed -n 3p)" \
	"prior scalemixture(pi = 0.5, sigma1 = 1, sigma2 = 0.05), default posterior meanfield" \
	"the summary's header names the prior and its arguments"
run "$BNNC" --summary lap.bnn
is "$(printf '%s\n' "$run_out" | sed -n 3p)" "prior laplace(scale = 0.5), default posterior point" \
	"and the laplace one"
mkdir other && (cd other && model lap_mf 'prior gaussian(precision = 4);' 'posterior meanfield;')
run other/lap_mf eval --load lap_mf-bbb-0.ckpt --data test.csv
case $run_err in
*"lap_mf-bbb-0.ckpt: this checkpoint belongs to a different version of model 'lap_mf' (fingerprint "*) st=0 ;;
*) st=1 ;;
esac
is "$run_status/$st" "1/0" "the checkpoint keeps the prior: model lap_mf under a gaussian prior refuses it ($run_err)"

# ---- refusals ----------------------------------------------------------------
for m in lap_mf:laplace mix_mf:scalemixture; do
	for opt in vogn ivon badam; do
		run "./${m%%:*}" train --data train.csv --optimizer $opt --epochs 1 --save r.ckpt
		is "$run_status/$run_err" \
			"1/./${m%%:*}: optimizer '$opt' needs a gaussian prior (its update has the prior precision in closed form), and model '${m%%:*}' has a ${m#*:} prior: train it with sgd, adam, adamw or bbb, or declare 'prior gaussian(precision = ...);'" \
			"$opt refuses the ${m#*:} prior"
	done
done
run ./lap_mf train --data train.csv --optimizer bbb --set delta=2 --epochs 1 --save r.ckpt
is "$run_status/$run_err" \
	"1/./lap_mf: option 'delta' is the precision of a gaussian prior, and model 'lap_mf' has a laplace prior: leave it out" \
	"bbb refuses the option delta with a laplace prior"
# an emp layer under the model's laplace prior: bnnc says so where it is
printf 'model lap_emp;\ninput x[2];\n%s\nh = tanh(dense(x, 8) ~ emp(k = 2));\nz = dense(h, 1);\ny ~ gaussian(z, sigma = learned);\n' \
	"$lap" >lap_emp.bnn
run "$BNNC" --check lap_emp.bnn
is "$run_status" 1 "bnnc --check refuses an emp layer under the laplace prior"
is "$(printf '%s\n' "$run_err" | sed -n '1p;4p')" \
	"lap_emp.bnn:4:22: error: layer 'h' has an emp posterior, whose KL term needs a gaussian prior, and the model's prior is laplace: give the layer a precision of its own ('~ emp(prior = ...)')
lap_emp.bnn:3:1: note: the model's prior is declared here" \
	"at the annotation, with a note at the prior"
model lap_emp1 "$lap" '' ' ~ emp(k = 2, prior = 1)'
run ./lap_emp1 train --data train.csv --optimizer adam --epochs 2 --save r.ckpt --quiet
is "$run_status/$run_err" "0/" "with a precision of its own it trains (a gaussian prior for that layer)"
# The library refuses it too, for a descriptor bnnc did not check: the
# same code with the layer's own precision taken out of its descriptor.
sed 's/\(BNN_CAP_COMPONENTS, 2, 0, 0, \)1\(, 2L, 8L, 0, 2, \)0 }/\10\2BNN_PRIOR_LAPLACE }/' \
	lap_emp1.c >lap_emp0.c
# shellcheck disable=SC2086
$CC $BNN_CFLAGS -o lap_emp0 lap_emp0.c $BNN_LIBS || bail_out "cannot build lap_emp0"
ok "$(cmp -s lap_emp1.c lap_emp0.c && echo 1 || echo 0)" "(the descriptor was edited)"
run ./lap_emp0 train --data train.csv --optimizer adam --epochs 1 --save r.ckpt
is "$run_status/$run_err" \
	"1/./lap_emp0: layer 'h_dense' of model 'lap_emp1' has an emp posterior, whose KL term needs a gaussian prior, and the model's prior is laplace: give the layer a precision of its own ('~ emp(prior = ...)')" \
	"bnn_train refuses an emp layer under the laplace prior"

done_testing
