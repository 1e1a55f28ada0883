#!/bin/sh
# hetero.sh: heteroscedastic 1-D regression, run by `make hetero` as
#   sh examples/hetero.sh examples/out
# after the Makefile has built OUT/hetero and OUT/hetero_bayes
# (examples/hetero.bnn and hetero_bayes.bnn compiled by `bnnc --main`),
# examples/datagen and examples/plot (docs/examples.md).
#
# The data (`datagen hetero`, fixed seeds; columns x,y):
#   y = sin(x) + (0.05 + 0.15 |x|) e,  e ~ N(0, 1)
#   OUT/hetero_train.csv     300 points, x in (0, 6): the noise's sd grows
#                            from 0.05 to 0.95 across the training range;
#   OUT/hetero_calib.csv     4,000 fresh points with x in (0, 6) that
#                            calibrate the split conformal intervals
#                            (docs/conformal.md) and nothing else;
#   OUT/hetero_test_in.csv   4,000 fresh points with x in (0, 6);
#   OUT/hetero_test_out.csv  4,000 points with x in (6, 8), beyond the data
#                            (the noise's sd 0.95 to 1.25 there).
# The training set stays at 300 points; the calibration and test sets are
# large so that the conformal coverage's sampling sd, about
# sqrt(0.09/n_cal + 0.09/n_test) = 0.67 points, is well under issue 22's
# tolerance of 1.5 points (no validation set: training keeps its last
# epoch, so the calibration points choose nothing but the quantile).
# Both networks predict a mean and a log-variance, y ~ gaussian(mu, lv), on
# inputs standardised with the training statistics (--standardize), 1,000
# epochs of minibatches of 32, seed 1:
#   Adam  (hetero.bnn, point), lr 1e-3;
#   VOGN  (hetero_bayes.bnn, mean-field), its defaults (lr 5e-5 on a cosine
#         schedule, rho 100, one sample per step), evaluated and predicted
#         with 100 posterior samples.
# These settings were chosen once, before any test point was scored.  IVON
# was the first choice, but with its defaults of the time (no gradient
# clip) it diverged on this model within the first epoch (docs/examples.md,
# `make hetero`, says how), so the script trains the other natural-gradient
# optimizer with its defaults.  IVON's defaults now clip the gradient's
# norm and train it, but underfit (docs/optimizers/ivon.md).
#
# For each: eval on both test sets (JSON: NLL, RMSE, MAE, coverage_50/90/95,
# and the coverage and mean width of the 90% conformal intervals, score
# |y - mu|/sigma, calibrated on OUT/hetero_calib.csv; beyond the data the
# test points are not exchangeable with the calibration points and the
# conformal guarantee does not apply),
# the PIT histogram of the in-range test set (eval --plots:
# OUT/hetero_pit_adam/pit.svg, OUT/hetero_pit_vogn/pit.svg), and predict on
# a grid of 441 points x = -2, -1.975, ..., 9 (OUT/hetero_grid.csv).
# OUT/hetero_band.csv has, per grid point, x, VOGN's mean, its total and
# aleatoric sd, its 95% band (mean -/+ 1.96 total sd), its aleatoric-only
# band (mean -/+ 1.96 sqrt(aleatoric)), Adam's mean and band, and the truth (sin x and its 95%
# band); OUT/hetero.svg draws them with the training points.  The table of
# metrics goes to standard output and OUT/hetero.md.
#
# POSIX sh; stops at the first error with a message.  Exit status: 0 on
# success, 1 when a step fails, 2 when called wrongly.

me=hetero.sh

. "$(dirname "$0")/common.sh"

one_outdir "$@"
out=$1
point=$out/hetero
bayes=$out/hetero_bayes
datagen=${DATAGEN:-$(dirname "$out")/datagen}
plot=${PLOT:-$(dirname "$out")/plot}
epochs=1000
batch=32
OPENBLAS_NUM_THREADS=1
export OPENBLAS_NUM_THREADS

need_built hetero "$point" "$bayes" "$datagen" "$plot"

# hetero_csv FILE ARGS...: `datagen hetero ARGS` to FILE.
hetero_csv() {
	file=$1
	shift
	"$datagen" hetero "$@" >"$file" || die "could not write $file"
}
hetero_csv "$out/hetero_train.csv" --n 300 --seed 1 --range 0,6
hetero_csv "$out/hetero_calib.csv" --n 4000 --seed 4 --range 0,6
hetero_csv "$out/hetero_test_in.csv" --n 4000 --seed 2 --range 0,6
hetero_csv "$out/hetero_test_out.csv" --n 4000 --seed 3 --range 6,8
echo "$me: data in $out: hetero_train.csv (300 points, x in (0, 6)), hetero_calib.csv" \
	"(4000, x in (0, 6)), hetero_test_in.csv (4000, x in (0, 6)), hetero_test_out.csv" \
	"(4000, x in (6, 8))" >&2

# run NAME PROG MC TRAIN-OPTIONS...: trains PROG into OUT/hetero_NAME.ckpt,
# evaluates it on both test sets with the conformal intervals of
# OUT/hetero_calib.csv (OUT/hetero_NAME_in.json, _out.json, the PIT
# histogram in OUT/hetero_pit_NAME/) and predicts the grid
# (OUT/hetero_grid_NAME.csv), with MC posterior samples.
run() {
	name=$1 prog=$2 mc=$3
	shift 3
	ckpt=$out/hetero_$name.ckpt
	start=$(date +%s)
	echo "$me: training $prog: $*, $epochs epochs, batch $batch" >&2
	"$prog" train --data "$out/hetero_train.csv" --standardize --epochs "$epochs" \
		--batch "$batch" --seed 1 --threads 1 --quiet --save "$ckpt" "$@" \
		>"$out/hetero_${name}_train.json" || die "training $name failed (see above)"
	echo "$me: trained in $(($(date +%s) - start)) s: $(cat "$out/hetero_${name}_train.json")" >&2
	"$prog" eval --load "$ckpt" --data "$out/hetero_test_in.csv" --mc "$mc" --seed 1 \
		--conformal "$out/hetero_calib.csv" --level 0.9 --plots "$out/hetero_pit_$name" \
		>"$out/hetero_${name}_in.json" || die "evaluating $name on hetero_test_in.csv failed"
	"$prog" eval --load "$ckpt" --data "$out/hetero_test_out.csv" --mc "$mc" --seed 1 \
		--conformal "$out/hetero_calib.csv" --level 0.9 >"$out/hetero_${name}_out.json" ||
		die "evaluating $name on hetero_test_out.csv failed"
	"$prog" predict --load "$ckpt" --data "$out/hetero_grid.csv" --mc "$mc" --seed 1 \
		--out "$out/hetero_grid_$name.csv" || die "predicting the grid with $name failed"
}

# The grid x = (i - 80)/40, i = 0..440: -2 to 9 by 0.025, exact decimals.
awk 'BEGIN { print "x"; for (i = 0; i <= 440; i++) printf "%.3f\n", (i - 80) / 40 }' \
	>"$out/hetero_grid.csv" || die "could not write $out/hetero_grid.csv"

run adam "$point" 0 --optimizer adam --lr 1e-3
run vogn "$bayes" 100 --optimizer vogn

# x, then VOGN's mean_0,var_0,aleatoric_0,epistemic_0 (columns 2-5) and
# Adam's (6-9: its variance is all aleatoric).
paste -d, "$out/hetero_grid.csv" "$out/hetero_grid_vogn.csv" "$out/hetero_grid_adam.csv" |
	awk -F, 'NR == 1 {
		print "x,mean,sd,alea_sd,lower,upper,alea_lower,alea_upper,adam_mean,adam_lower,adam_upper,true_mean,true_lower,true_upper"
		next }
	{ sd = sqrt($3); a = sqrt($4); s = sqrt($7); t = sin($1); e = 0.05 + 0.15 * ($1 < 0 ? -$1 : $1)
	  printf "%s,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", $1, $2, sd, a,
	  $2 - 1.96 * sd, $2 + 1.96 * sd, $2 - 1.96 * a, $2 + 1.96 * a, $6, $6 - 1.96 * s,
	  $6 + 1.96 * s, t, t - 1.96 * e, t + 1.96 * e }' >"$out/hetero_band.csv" ||
	die "could not write $out/hetero_band.csv"

"$plot" curves "$out/hetero.svg" --out-csv "$out/hetero_chart.csv" \
	--title "Heteroscedastic toy: y = sin x + (0.05 + 0.15|x|) e, trained on x in (0, 6)" \
	--xlabel x --ylabel y \
	--csv "$out/hetero_band.csv" \
	--band "x,mean,lower,upper,VOGN: mean, 95% band (total)" \
	--band "x,mean,alea_lower,alea_upper,VOGN: 95% band of the noise alone (aleatoric)" \
	--line "x,adam_mean,Adam: mean" \
	--line "x,adam_lower,Adam: 95% band" --line "x,adam_upper" \
	--line "x,true_lower,truth: sin x -/+ 1.96 sd" --line "x,true_upper" \
	--csv "$out/hetero_train.csv" --points "x,y,training data" ||
	die "could not draw $out/hetero.svg"

# The table: one row per model and test set; the conformal coverage with
# its binomial standard error over the 4,000 test points.
{
	echo "| model | optimizer | test x | MC | NLL | RMSE | MAE | coverage 50% | coverage 90% |" \
		"coverage 95% | conformal 90% (± SE) | conformal width |"
	echo "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	for r in "adam hetero.bnn Adam" "vogn hetero_bayes.bnn VOGN"; do
		# shellcheck disable=SC2086  # $r is a word list
		set -- $r
		for s in in out; do
			f=$out/hetero_$1_$s.json
			range="(0, 6)"
			[ "$s" = out ] && range="(6, 8)"
			printf '| %s | %s | %s | %s | %.4f | %.4f | %.4f | %.3f | %.3f | %.3f | %s | %.3f |\n' \
				"$2" "$3" "$range" "$(json_get mc "$f")" "$(json_get nll "$f")" \
				"$(json_get rmse "$f")" "$(json_get mae "$f")" "$(json_get coverage_50 "$f")" \
				"$(json_get coverage_90 "$f")" "$(json_get coverage_95 "$f")" \
				"$(conformal_cell "$f")" "$(json_get conformal_width "$f")"
		done
	done
} >"$out/hetero.md" || die "cannot write $out/hetero.md"
cat "$out/hetero.md"

echo "$me: VOGN's mean predictive sd (total, and of the noise alone) on the grid, inside" \
	"the training range and beyond it:" >&2
awk -F, 'NR > 1 {
	if ($1 > 0 && $1 < 6) { tin += $3; ain += $4; n1++ }
	else if ($1 > 7 && $1 < 9) { tout += $3; aout += $4; n2++ } }
	END { printf "{\"sd_inside\": %.4f, \"sd_beyond\": %.4f, \"aleatoric_sd_inside\": %.4f, " \
	      "\"aleatoric_sd_beyond\": %.4f}\n", tin / n1, tout / n2, ain / n1, aout / n2 }' \
	"$out/hetero_band.csv" || die "could not read $out/hetero_band.csv"
echo "$me: (x in (0, 6), and x in (7, 9); the noise's true sd averages 0.50 and 1.25 there)" >&2
echo "$me: chart in $out/hetero.svg, its data in $out/hetero_band.csv; PIT histograms in" \
	"$out/hetero_pit_adam/pit.svg and $out/hetero_pit_vogn/pit.svg" >&2
