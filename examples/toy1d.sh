#!/bin/sh
# toy1d.sh: the 1-D regression toy of the BADAM paper (Kessler et al.,
# appendix D.1), run by `make toy1d` as
#   sh examples/toy1d.sh examples/out
# after the Makefile has built OUT/toy1d (examples/toy1d.bnn compiled by
# `bnnc --main`) and examples/datagen (docs/examples.md).
#
# It writes three CSV files with datagen (columns x,y; fixed seeds):
#   OUT/toy1d_train.csv    200 points with x in (0, 0.5), as in the paper;
#   OUT/toy1d_test.csv     500 points with x in (-0.5, 1.2), the paper's
#                          test range: mostly outside the training data;
#   OUT/toy1d_test_in.csv  500 fresh points with x in (0, 0.5), to tell the
#                          fit from the extrapolation;
# trains the 1-50-50-1 ReLU network with Adam (lr 1e-3 as in the paper, but
# 2,000 epochs of minibatches of 32 instead of 20,000 epochs: a couple of
# seconds, and the fit on (0, 0.5) is then already as good as the noise
# allows), evaluates it on both test sets (RMSE and Gaussian NLL as JSON),
# and writes the predictive mean and variance of every test point to
# OUT/toy1d_predictions.csv (columns mean_0,var_0; row i is the point on
# row i of toy1d_test.csv) and, for plotting, OUT/toy1d_plot.csv (columns
# x,y,mean_0,var_0, sorted by x).
#
# POSIX sh; stops at the first error with a message.  Exit status: 0 on
# success, 1 when a step fails, 2 when called wrongly.

me=toy1d.sh

die() {
	echo "$me: $*" >&2
	exit 1
}

[ $# -eq 1 ] || { echo "usage: sh examples/toy1d.sh OUTDIR (run by 'make toy1d')" >&2; exit 2; }
out=$1
prog=$out/toy1d
datagen=${DATAGEN:-$(dirname "$out")/datagen}
ckpt=$out/toy1d.ckpt
epochs=2000
batch=32
lr=1e-3

[ -x "$prog" ] || die "$prog is not built: run 'make toy1d'"
[ -x "$datagen" ] || die "$datagen is not built: run 'make toy1d'"

"$datagen" toy1d --n 200 --seed 1 --range 0,0.5 >"$out/toy1d_train.csv" ||
	die "could not write $out/toy1d_train.csv"
"$datagen" toy1d --n 500 --seed 2 --range -0.5,1.2 >"$out/toy1d_test.csv" ||
	die "could not write $out/toy1d_test.csv"
"$datagen" toy1d --n 500 --seed 3 --range 0,0.5 >"$out/toy1d_test_in.csv" ||
	die "could not write $out/toy1d_test_in.csv"
echo "$me: data in $out: toy1d_train.csv (200 points, x in (0, 0.5))," \
	"toy1d_test.csv (500, x in (-0.5, 1.2)), toy1d_test_in.csv (500, x in (0, 0.5))" >&2

start=$(date +%s)
echo "$me: training: Adam, lr $lr, $epochs epochs, batch $batch; checkpoint $ckpt" >&2
"$prog" train --data "$out/toy1d_train.csv" --optimizer adam --lr "$lr" \
	--epochs "$epochs" --batch "$batch" --seed 1 --quiet --save "$ckpt" \
	>"$out/toy1d_train.json" || die "training failed (see the message above)"
trained=$(date +%s)
echo "$me: training summary: $(cat "$out/toy1d_train.json")" >&2

echo "$me: test metrics, x in (-0.5, 1.2) (the paper's test range):" >&2
"$prog" eval --load "$ckpt" --data "$out/toy1d_test.csv" ||
	die "evaluation on $out/toy1d_test.csv failed"
echo "$me: test metrics, x in (0, 0.5) (the training range):" >&2
"$prog" eval --load "$ckpt" --data "$out/toy1d_test_in.csv" ||
	die "evaluation on $out/toy1d_test_in.csv failed"

"$prog" predict --load "$ckpt" --data "$out/toy1d_test.csv" \
	--out "$out/toy1d_predictions.csv" || die "prediction failed"
paste -d, "$out/toy1d_test.csv" "$out/toy1d_predictions.csv" >"$out/toy1d_plot.csv" ||
	die "could not write $out/toy1d_plot.csv"
echo "$me: trained in $((trained - start)) s; predictions for toy1d_test.csv in" \
	"$out/toy1d_predictions.csv (mean_0,var_0), with x and y in $out/toy1d_plot.csv" >&2
