#!/bin/sh
# counts.sh: count regression with poisson and negbinomial likelihoods on R's
# quakes data, run by `make counts` as
#   sh examples/counts.sh examples/out
# after the Makefile has built OUT/counts_poisson, counts_poisson_bayes,
# counts_negbin and counts_negbin_bayes (examples/counts_*.bnn compiled by
# `bnnc --main`); Rscript (Debian's r-base-core) exports the data.
#
# The data (examples/counts_export.R): the 1,000 events of datasets::quakes,
# the number of stations that reported each (10 to 132) to predict from
# lat, long, depth and mag; split at random (set.seed(1) in R) into 600
# training, 100 validation, 100 calibration and 200 test rows,
# OUT/counts/counts_*.csv (counts_export.R says why the calibration rows
# are taken from the validation rows).
#
# Four runs, each with --standardize, 300 epochs of minibatches of 32,
# seed 1, one thread, the validation rows choosing the checkpoint's epoch
# (lowest validation NLL), nothing tuned (settings chosen once):
#   counts_poisson.bnn       Adam, lr 1e-3;
#   counts_poisson_bayes.bnn Bayes-by-Backprop's defaults (mean-field);
#   counts_negbin.bnn        Adam, lr 1e-3 (the dispersion learned);
#   counts_negbin_bayes.bnn  Bayes-by-Backprop's defaults.
# IVON and VOGN were tried first, with their defaults: IVON's loss was not
# finite within the first epoch (before its default gradient clip, which
# now trains it: docs/optimizers/ivon.md) and VOGN (lr 5e-5) is still
# worse than the constant rate after 300 epochs (docs/examples.md,
# `make counts`), so the Bayesian rows are BBB's.  Each is scored once on the test rows by eval
# (32 posterior samples for BBB): NLL, RMSE, MAE, the coverage of the central 50/90/95%
# intervals, and the coverage (with its binomial standard error over the
# 200 test rows) and mean width of the 90% split conformal intervals
# mu -/+ q sigma calibrated on the 100 calibration rows (common.sh,
# train_eval), next to the constant-rate baselines R computes
# (OUT/counts/counts_baseline.json: Poisson(mean of the training counts),
# and a negative binomial of that mean with the training counts' variance).
# The table goes to standard output and OUT/counts.md; per run,
# OUT/counts/NAME.{ckpt,json} and NAME.train.{json,log}.
#
# Repeated splits: one split's conformal coverage varies by about 4 points
# from split to split (100 calibration and 200 test rows), so one split
# cannot show whether the intervals cover 90%.  The script then repeats
# the four runs on COUNTS_SPLITS random splits in all (50 by default; the
# first is the split above, the others set.seed(2) to set.seed(K) in
# counts_export.R, each in OUT/counts/splitS/), everything else the same,
# and adds a second table: per model, the mean conformal coverage over the
# splits with its standard error (the sd across splits / sqrt(K)), that sd,
# how many splits fall within 1.5 points of 90%, and the mean width.
# Every split's coverage and width go to OUT/counts/splits.csv
# (split,model,coverage,width).  COUNTS_SPLITS=1 runs the first split
# alone.
#
# POSIX sh; stops at the first error with a message.  Exit status: 0 on
# success, 1 when a step fails, 2 when called wrongly.

me=counts.sh

. "$(dirname "$0")/common.sh"

one_outdir "$@"
out=$1
dir=$out/counts
epochs=300
batch=32
splits=${COUNTS_SPLITS:-50}
case $splits in
'' | *[!0-9]* | 0) die "COUNTS_SPLITS must be a whole number of splits, at least 1, not '$splits'" ;;
esac
OPENBLAS_NUM_THREADS=1
export OPENBLAS_NUM_THREADS

need_built counts "$out/counts_poisson" "$out/counts_poisson_bayes" "$out/counts_negbin" \
	"$out/counts_negbin_bayes"
r_export "R's quakes data" "$dir" counts_export.R
echo "$me: quakes in $dir: counts_train.csv (600 rows), counts_valid.csv (100)," \
	"counts_calib.csv (100), counts_test.csv (200); columns lat,long,depth,mag,stations" >&2

# run NAME MC TRAIN-OPTIONS...: trains OUT/NAME into DIR/NAME.ckpt and scores
# it on the test rows (DIR/NAME.json) with MC posterior samples, its
# conformal intervals calibrated on DIR/counts_calib.csv.
run() {
	_rn=$1
	_rm=$2
	shift 2
	train_eval "$_rn" "$_rm" counts --standardize --epochs "$epochs" --batch "$batch" "$@"
}
# run_all: the four runs on the split in $dir.
run_all() {
	run counts_poisson 0 --optimizer adam --lr 1e-3
	run counts_poisson_bayes 32 --optimizer bbb
	run counts_negbin 0 --optimizer adam --lr 1e-3
	run counts_negbin_bayes 32 --optimizer bbb
}
models="counts_poisson counts_poisson_bayes counts_negbin counts_negbin_bayes"
run_all

b=$dir/counts_baseline.json
{
	echo "Test rows (200), constant rate $(json_get rate "$b") (the mean of the training counts);" \
		"negative binomial baseline dispersion $(json_get dispersion "$b")."
	echo
	echo "| model | optimizer | MC | NLL | RMSE | MAE | coverage 50% | coverage 90% |" \
		"coverage 95% | conformal 90% (± SE) | conformal width |"
	echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	for lik in poisson negbinomial; do
		printf '| constant rate, %s | - | - | %.4f | %.3f | %.3f | %.3f | %.3f | %.3f | - | - |\n' "$lik" \
			"$(json_get "${lik}_nll" "$b")" "$(json_get "${lik}_rmse" "$b")" \
			"$(json_get "${lik}_mae" "$b")" "$(json_get "${lik}_coverage_50" "$b")" \
			"$(json_get "${lik}_coverage_90" "$b")" "$(json_get "${lik}_coverage_95" "$b")"
	done
	for r in "counts_poisson Adam" "counts_poisson_bayes BBB" "counts_negbin Adam" \
		"counts_negbin_bayes BBB"; do
		# shellcheck disable=SC2086  # $r is a word list
		set -- $r
		f=$dir/$1.json
		printf '| %s.bnn | %s | %s | %.4f | %.3f | %.3f | %.3f | %.3f | %.3f | %s | %.1f |\n' \
			"$1" "$2" "$(json_get mc "$f")" "$(json_get nll "$f")" "$(json_get rmse "$f")" \
			"$(json_get mae "$f")" "$(json_get coverage_50 "$f")" \
			"$(json_get coverage_90 "$f")" "$(json_get coverage_95 "$f")" \
			"$(conformal_cell "$f")" "$(json_get conformal_width "$f")"
	done
} >"$out/counts.md" || die "cannot write $out/counts.md"

# splits.csv: every split's conformal coverage and width per model, the
# first split's from the runs above.
csv=$dir/splits.csv
echo "split,model,coverage,width" >"$csv" || die "cannot write $csv"
# add_split S DIR: appends split S's rows, read from DIR/NAME.json.
add_split() {
	for m in $models; do
		echo "$1,$m,$(json_get conformal_coverage "$2/$m.json"),$(json_get conformal_width "$2/$m.json")"
	done >>"$csv" || die "cannot write $csv"
}
add_split 1 "$dir"
if [ "$splits" -gt 1 ]; then
	echo "$me: the four runs on $((splits - 1)) more random splits (COUNTS_SPLITS=$splits)" >&2
	main_dir=$dir
	# shellcheck disable=SC2034  # common.sh's train_eval reads it
	quiet=1
	s=2
	while [ "$s" -le "$splits" ]; do
		dir=$main_dir/split$s
		r_export "R's quakes data (split $s)" "$dir" counts_export.R "$s"
		run_all
		add_split "$s" "$dir"
		s=$((s + 1))
	done
	dir=$main_dir
	unset quiet
fi
{
	echo
	echo "Conformal coverage of the 90% intervals over $splits random splits" \
		"(600/100/100/200 rows each; the first is the split above):"
	echo
	echo "| model | optimizer | mean conformal 90% (± SE) | sd across splits |" \
		"splits within ±1.5 points | mean width |"
	echo "| --- | --- | ---: | ---: | ---: | ---: |"
	for r in "counts_poisson Adam" "counts_poisson_bayes BBB" "counts_negbin Adam" \
		"counts_negbin_bayes BBB"; do
		# shellcheck disable=SC2086  # $r is a word list
		set -- $r
		awk -F, -v m="$1" -v opt="$2" '
			$2 == m { n++; c += $3; cc += $3 * $3; w += $4
				if ($3 >= 0.885 - 1e-9 && $3 <= 0.915 + 1e-9) k++ }
			END {
				mean = c / n
				sd = n > 1 ? sqrt((cc - n * mean * mean) / (n - 1)) : 0
				printf "| %s.bnn | %s | %.4f ± %.4f | %.4f | %d of %d | %.1f |\n",
					m, opt, mean, sd / sqrt(n), sd, k, n, w / n
			}' "$csv"
	done
} >>"$out/counts.md" || die "cannot write $out/counts.md"
cat "$out/counts.md"
