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
# its training errors) R computes.  Each network is then scored with
# adaptive conformal inference (eval --conformal-adaptive GAMMA
# [--conformal-online], docs/conformal.md; Gibbs and Candès 2021), its
# setting chosen without the test months: calibrated on the validation
# months and run over the calibration months in order (180 months, a
# stand-in for the test months), for the calibration scores fixed or
# online (each month's score joins them once its label is seen) and GAMMA
# 0.005, 0.01 and 0.05; the setting with the fewest infinite intervals
# over the four networks, then the mean coverage closest to 90%, is run
# once on the test months (calibrated on the calibration months), beside
# the other calibration set at the same GAMMA: coverage, mean width of the
# finite intervals, and the number of infinite ones.  (The validation
# months also chose each checkpoint's epoch, so their scores are a little
# smaller than fresh months' would be.)
# RMSE and MAE are converted back to sunspot numbers (times the training
# sd) and the NLL too (plus log sd); coverage is the same in both units.
# The tables go to standard output and OUT/series.md; per run,
# OUT/series/NAME.{ckpt,json}, NAME.select.MODEGAMMA.json (the six
# settings on the calibration months), NAME.aci.json (the chosen setting on
# the test months), NAME.aci_other.json (the other calibration set) and
# NAME.train.{json,log}; the selection's summary in OUT/series/select.txt.
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

# run NAME MC TRAIN-OPTIONS...: trains OUT/NAME into DIR/NAME.ckpt and
# scores it on the test months (DIR/NAME.json) with MC posterior samples,
# its conformal intervals calibrated on DIR/series_calib.csv.
run() {
	_rn=$1
	_rm=$2
	shift 2
	train_eval "$_rn" "$_rm" series --epochs "$epochs" --batch "$batch" "$@"
}
run series_conv1d 0 --optimizer adam --lr 1e-3
run series_conv1d_bayes 32 --optimizer bbb
run series_gru 0 --optimizer adam --lr 1e-3
run series_gru_bayes 32 --optimizer bbb
nets="series_conv1d series_conv1d_bayes series_gru series_gru_bayes"

# Adaptive conformal inference, its setting chosen before the test months:
# each network calibrated on the validation months and run over the
# calibration months in order (DIR/NAME.select.MODEGAMMA.json), for each
# calibration set (fixed, or online: growing with each month's score) and
# step size γ.
aci_modes="fixed online"
aci_gammas="0.005 0.01 0.05"
# aci NAME DATA CALIB JSON MODE GAMMA: NAME's adaptive conformal run.
aci() {
	if [ "$5" = online ]; then
		conformal_eval "$1" "$(json_get mc "$dir/$1.json")" "$2" "$3" "$4" \
			--conformal-adaptive "$6" --conformal-online
	else
		conformal_eval "$1" "$(json_get mc "$dir/$1.json")" "$2" "$3" "$4" \
			--conformal-adaptive "$6"
	fi
}
for r in $nets; do
	for m in $aci_modes; do
		for g in $aci_gammas; do
			aci "$r" series_calib.csv series_valid.csv "$r.select.$m$g.json" "$m" "$g"
		done
	done
done
# One line a setting, in the order above: MODE GAMMA, the infinite
# intervals over the four networks, the mean distance of their coverage to
# 90%, and a table cell "coverage (infinite)" a network.
for m in $aci_modes; do
	for g in $aci_gammas; do
		printf '%s %s' "$m" "$g"
		for r in $nets; do
			printf ' %s %s' "$(json_get conformal_adaptive_coverage \
				"$dir/$r.select.$m$g.json")" \
				"$(json_get conformal_adaptive_infinite "$dir/$r.select.$m$g.json")"
		done
		echo
	done
done | awk '{ inf = 0; dev = 0; cells = ""
	for (i = 3; i < NF; i += 2) {
		inf += $(i + 1); d = $i - 0.9; dev += d < 0 ? -d : d
		cells = cells sprintf(" %.3f (%d) |", $i, $(i + 1))
	}
	printf "%s %s %d %.4f%s\n", $1, $2, inf, dev / ((NF - 2) / 2), cells }' \
	>"$dir/select.txt" || die "cannot write $dir/select.txt"
# The chosen setting: the fewest infinite intervals, then the coverage
# closest to 90% on average, then the first in the order above.
read -r aci_mode aci_gamma _ <<EOF_SELECT || die "no adaptive conformal setting"
$(awk 'NR == 1 || $3 < inf || ($3 == inf && $4 < dev) { inf = $3; dev = $4; best = $0 }
	END { print best }' "$dir/select.txt")
EOF_SELECT
if [ "$aci_mode" = online ]; then aci_other=fixed; else aci_other=online; fi
echo "$me: adaptive conformal inference chosen on the calibration months:" \
	"$aci_mode calibration scores, gamma $aci_gamma" >&2
# Then that setting, once, on the test months (DIR/NAME.aci.json), and the
# other calibration set at the same γ beside it (DIR/NAME.aci_other.json).
for r in $nets; do
	aci "$r" series_test.csv series_calib.csv "$r.aci.json" "$aci_mode" "$aci_gamma"
	aci "$r" series_test.csv series_calib.csv "$r.aci_other.json" "$aci_other" "$aci_gamma"
done

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
	echo "Adaptive conformal inference (Gibbs and Candès 2021), the level updated by step" \
		"size γ after each month, its setting chosen before the test months: each network" \
		"calibrated on the validation months 1951-1965 ($nvalid) and run over the" \
		"calibration months 1966-1980 ($ncalib) in order; coverage (infinite intervals);" \
		"fixed: the validation months' scores, online: each month's score joins them."
	echo
	echo "| setting | series_conv1d | series_conv1d_bayes | series_gru | series_gru_bayes |" \
		"infinite | mean distance to 90% |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
	awk '{ printf "| %s, γ = %s |", $1, $2
		for (i = 5; i <= NF; i++) printf " %s", $i
		printf " %d | %.4f |\n", $3, $4 }' "$dir/select.txt"
	echo
	echo "Chosen (the fewest infinite intervals, then the closest to 90%):" \
		"$aci_mode, γ = $aci_gamma. On the test months, calibrated on the calibration" \
		"months (width in sunspot numbers, the mean over the finite intervals; inf: the" \
		"months whose interval was the whole line), beside the $aci_other calibration set" \
		"at the same γ:"
	echo
	echo "| model | split conformal 90% | width | ACI $aci_mode | width | inf |" \
		"ACI $aci_other | width | inf |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	for r in $nets; do
		printf '| %s.bnn | %s | %s |' "$r" "$(json_get conformal_coverage "$dir/$r.json" |
			awk '{ printf "%.3f", $1 }')" "$(scaled "$(json_get conformal_width "$dir/$r.json")")"
		for f in "$dir/$r.aci.json" "$dir/$r.aci_other.json"; do
			printf ' %s | %s | %s |' "$(json_get conformal_adaptive_coverage "$f" |
				awk '{ printf "%.3f", $1 }')" \
				"$(scaled "$(json_get conformal_adaptive_width "$f")")" \
				"$(json_get conformal_adaptive_infinite "$f")"
		done
		echo
	done
} >"$out/series.md" || die "cannot write $out/series.md"
cat "$out/series.md"
