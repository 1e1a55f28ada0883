#!/bin/sh
# ivon_defaults.sh: IVON with its defaults only on a likelihood with an
# exponential link (docs/optimizers/ivon.md, "Defaults and their
# evidence").  bnnc --main compiles a tiny mean-field Poisson regression,
# z = dense(tanh(dense(x, 8)), 1), y ~ poisson(z), trained on 200 counts
# drawn here with rates e^(3 + 0.5·x1 − 0.3·x2) (mean about 21, as the
# unscaled counts of examples/counts.sh).  Checks:
#   - with the default gradient-norm clip turned off (--set clip=0, the
#     defaults before it; 260 steps, so h0 is the short run's
#     0.1 x 2000 / 260), training diverges at step 3 with the exact
#     message, so the data is one the clip has to rescue;
#   - with --optimizer ivon alone it trains (status 0, no message), and
#     eval's test NLL (32 samples) is finite and below the best constant
#     predictive's (the Poisson of the training mean);
#   - a run that diverges with the clip on says so and suggests a smaller
#     clip than the one in force, not the clip=1 a run without one is told.
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"

cd "$TAP_TMP" || bail_out "no temporary directory"
. "$top_srcdir/t/blobs_lib.sh"

counts() { # N SEED: x1,x2 uniform in (-1, 1); y ~ Poisson(e^(3 + 0.5 x1 - 0.3 x2))
	awk -v n="$1" -v s="$2" 'function u() { s = (s * 1103515245 + 12345) % 2147483648
		return s / 2147483648 }
	BEGIN { print "x1,x2,y"
		for (i = 0; i < n; i++) {
			a = 2 * u() - 1; b = 2 * u() - 1; lam = exp(3 + 0.5 * a - 0.3 * b)
			k = 0; p = u(); L = exp(-lam); while (p > L) { k++; p *= u() }
			printf "%.6f,%.6f,%d\n", a, b, k } }'
}
counts 200 7 >train.csv
counts 100 8 >test.csv
printf 'model pois_mf;\ninput x[2];\nposterior meanfield;\n%s\n%s\n' \
	'z = dense(tanh(dense(x, 8)), 1);' 'y ~ poisson(z);' >pois_mf.bnn
build pois_mf pois_mf.bnn || bail_out "cannot build pois_mf"

# The test NLL per example of the Poisson of the training mean.
base=$(awk -F, 'NR == FNR { if (FNR > 1) { s += $3; n++ } next }
	FNR > 1 { m = s / n; lf = 0; for (i = 2; i <= $3; i++) lf += log(i)
		nll += m - $3 * log(m) + lf; t++ }
	END { printf "%.6f", nll / t }' train.csv test.csv)
diag "constant predictive NLL: $base"

train() { # CKPT OPTIONS...
	_c=$1
	shift
	run ./pois_mf train --data train.csv --optimizer ivon --epochs 20 --batch 16 --seed 1 \
		--threads 1 --quiet --save "$_c" "$@"
}

train off.ckpt --set clip=0
is "$run_status:$run_err" "1:./pois_mf: training diverged in epoch 1 at step 3: the loss is not finite (try a smaller learning rate, or --set clip=1)
./pois_mf: off.ckpt was not written: no epoch completed" \
	"without the default clip, IVON's defaults diverge on unscaled counts"

train on.ckpt
is "$run_status:$run_err" "0:" "with only --optimizer ivon it trains"
run ./pois_mf eval --load on.ckpt --data test.csv --mc 32 --seed 1 --threads 1
nll=$(printf '%s\n' "$run_out" | sed -n 's/.*"nll": \([^,}]*\)[,}].*/\1/p')
ok "$(awk -v a="$nll" -v b="$base" 'BEGIN { exit !(a != "" && a < b) }'; echo $?)" \
	"IVON's defaults: test NLL $nll is finite and below the constant predictive's $base"

train big.ckpt --lr 1000
is "$run_status:$run_err" "1:./pois_mf: training diverged in epoch 1 at step 2: the loss is not finite (try a smaller learning rate, or a clip below 2)
./pois_mf: big.ckpt was not written: no epoch completed" \
	"a divergence with the clip on suggests a smaller clip"

done_testing
