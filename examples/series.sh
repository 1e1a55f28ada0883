#!/bin/sh
# series.sh: next-month forecasts of the monthly sunspot numbers with conv1d
# and gru networks, run by `make series` as
#   sh examples/series.sh examples/out
# after the Makefile has built OUT/series_conv1d, series_conv1d_bayes,
# series_gru and series_gru_bayes (examples/series_*.bnn compiled by
# `bnnc --main`); Rscript (Debian's r-base-core) exports the data.
#
# The data (examples/series_export.R): datasets::sunspot.month, 1749-2013,
# as windows of the 60 previous months and the next month's value,
# standardised with the mean and sd of the training years only, split in
# time by the target's month: training 1754-1950 (2,364 windows),
# validation 1951-1965 (180; it chooses the checkpoint's epoch),
# calibration 1966-1980 (180; the conformal intervals' and nothing else),
# test 1981-2013 (393).  OUT/series/series_*.csv, series.info.
#
# Four runs, each seed 1, one thread, 40 epochs of minibatches of 32, the
# lowest validation NLL's epoch kept, settings chosen once on the training
# and validation months (nothing tuned on the test months):
#   series_conv1d.bnn        Adam, lr 1e-3;
#   series_conv1d_bayes.bnn  Bayes-by-Backprop's defaults (mean-field);
#   series_gru.bnn           Adam, lr 1e-3;
#   series_gru_bayes.bnn     Bayes-by-Backprop's defaults.
# IVON and VOGN were tried first, with their defaults: IVON's loss is not
# finite within the first epoch, and VOGN's best validation NLL (conv1d,
# 1.31) is far above Adam's (docs/examples.md, `make series`).  Each run is
# scored once on the test months by eval (32 posterior samples for BBB),
# with the 90% split conformal intervals mu -/+ q sigma calibrated on the
# calibration months (common.sh, train_eval; their coverage with its
# binomial standard error over the 393 test months, which understates the
# uncertainty of a series whose neighbouring months' errors are
# correlated, and their mean width in sunspot numbers), next to the
# persistence baseline (the last month's value, with the Gaussian noise of
# its training errors) R computes.  Each network is then scored twice more
# with adaptive conformal inference (eval --conformal-adaptive GAMMA,
# docs/conformal.md; Gibbs and Candès 2021) over the test months in order,
# on the same calibration scores, at GAMMA 0.05 (the default, chosen before
# any run: over T = 393 months their Proposition 4.1 bounds the coverage's
# distance to 90% by (0.9 + γ)/(γ·T), 4.8 points at 0.05 and 46 at 0.005)
# and at 0.005 (the paper's own choice, for longer series): coverage, mean
# width of the finite intervals, and the number of infinite ones.
# RMSE and MAE are converted back to sunspot numbers (times the training
# sd) and the NLL too (plus log sd); coverage is the same in both units.
# The tables go to standard output and OUT/series.md; per run,
# OUT/series/NAME.{ckpt,json}, NAME.aci0.05.json, NAME.aci0.005.json and
# NAME.train.{json,log}.
#
# POSIX sh; stops at the first error with a message.  Exit status: 0 on
# success, 1 when a step fails, 2 when called wrongly.

me=series.sh

. "$(dirname "$0")/common.sh"

one_outdir "$@"
out=$1
dir=$out/series
batch=32
epochs=40
OPENBLAS_NUM_THREADS=1
export OPENBLAS_NUM_THREADS

need_built series "$out/series_conv1d" "$out/series_conv1d_bayes" "$out/series_gru" \
	"$out/series_gru_bayes"
r_export "R's sunspot.month" "$dir" series_export.R 60
read -r _ mean _ sd _ w _ ntrain _ nvalid _ ncalib _ ntest <"$dir/series.info" ||
	die "cannot read $dir/series.info"
echo "$me: sunspot.month in $dir: windows of $w months; $ntrain training, $nvalid" \
	"validation, $ncalib calibration and $ntest test targets; training mean $mean, sd $sd" >&2

# The step sizes of adaptive conformal inference, the default first.
aci_gammas="0.05 0.005"

# run NAME MC TRAIN-OPTIONS...: trains OUT/NAME into DIR/NAME.ckpt and
# scores it on the test months (DIR/NAME.json) with MC posterior samples,
# its conformal intervals calibrated on DIR/series_calib.csv, then with
# adaptive conformal inference at each of $aci_gammas (DIR/NAME.aciG.json).
run() {
	_rn=$1
	_rm=$2
	shift 2
	train_eval "$_rn" "$_rm" series --epochs "$epochs" --batch "$batch" "$@"
	for _g in $aci_gammas; do
		conformal_eval "$_rn" "$_rm" series "$_rn.aci$_g.json" --conformal-adaptive "$_g"
	done
}
run series_conv1d 0 --optimizer adam --lr 1e-3
run series_conv1d_bayes 32 --optimizer bbb
run series_gru 0 --optimizer adam --lr 1e-3
run series_gru_bayes 32 --optimizer bbb

# row MODEL OPTIMIZER MC NLL RMSE MAE C50 C90 C95 CONFORMAL WIDTH
# (standardised units; CONFORMAL a cell of conformal_cell, "-" with WIDTH
# "" for none): one table row in sunspot numbers.
row() {
	awk -v sd="$sd" -v m="$1" -v o="$2" -v k="$3" -v nll="$4" -v rmse="$5" -v mae="$6" \
		-v c50="$7" -v c90="$8" -v c95="$9" -v cc="${10}" -v cw="${11}" 'BEGIN {
		printf "| %s | %s | %s | %.4f | %.2f | %.2f | %.3f | %.3f | %.3f | %s | %s |\n", m, o,
		       k, nll + log(sd), rmse * sd, mae * sd, c50, c90, c95, cc,
		       cw == "" ? "-" : sprintf("%.2f", cw * sd) }'
}
# scaled WIDTH: a width in standardised units in sunspot numbers, "-" for
# none (null: every interval infinite).
scaled() {
	awk -v sd="$sd" -v w="$1" 'BEGIN { if (w == "" || w == "null") print "-"
		else printf "%.2f\n", w * sd }'
}
b=$dir/series_baseline.json
{
	echo "Test months 1981-2013 ($ntest), next-month forecasts from $w months, in sunspot" \
		"numbers (NLL of the number, RMSE and MAE in numbers)."
	echo
	echo "| model | optimizer | MC | NLL | RMSE | MAE | coverage 50% | coverage 90% |" \
		"coverage 95% | conformal 90% (± SE) | conformal width |"
	echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	row "persistence (last month)" - - "$(json_get nll "$b")" "$(json_get rmse "$b")" \
		"$(json_get mae "$b")" "$(json_get coverage_50 "$b")" \
		"$(json_get coverage_90 "$b")" "$(json_get coverage_95 "$b")" - ""
	for r in "series_conv1d Adam" "series_conv1d_bayes BBB" "series_gru Adam" \
		"series_gru_bayes BBB"; do
		# shellcheck disable=SC2086  # $r is a word list
		set -- $r
		f=$dir/$1.json
		row "$1.bnn" "$2" "$(json_get mc "$f")" "$(json_get nll "$f")" "$(json_get rmse "$f")" \
			"$(json_get mae "$f")" "$(json_get coverage_50 "$f")" \
			"$(json_get coverage_90 "$f")" "$(json_get coverage_95 "$f")" \
			"$(conformal_cell "$f")" "$(json_get conformal_width "$f")"
	done
	echo
	echo "The same 90% intervals, adaptive (Gibbs and Candès 2021): the test months in" \
		"order, the level updated by step size γ after each month; width in sunspot" \
		"numbers, the mean over the finite intervals; inf: the months whose interval" \
		"was the whole line."
	echo
	printf '| model | split conformal 90%% | width |'
	for g in $aci_gammas; do
		printf ' ACI γ = %s | width | inf |' "$g"
	done
	printf '\n| --- | ---: | ---: |'
	for g in $aci_gammas; do
		printf ' ---: | ---: | ---: |'
	done
	echo
	for r in series_conv1d series_conv1d_bayes series_gru series_gru_bayes; do
		printf '| %s.bnn | %s | %s |' "$r" "$(json_get conformal_coverage "$dir/$r.json" |
			awk '{ printf "%.3f", $1 }')" "$(scaled "$(json_get conformal_width "$dir/$r.json")")"
		for g in $aci_gammas; do
			f=$dir/$r.aci$g.json
			printf ' %s | %s | %s |' "$(json_get conformal_adaptive_coverage "$f" |
				awk '{ printf "%.3f", $1 }')" \
				"$(scaled "$(json_get conformal_adaptive_width "$f")")" \
				"$(json_get conformal_adaptive_infinite "$f")"
		done
		echo
	done
} >"$out/series.md" || die "cannot write $out/series.md"
cat "$out/series.md"
