#!/bin/sh
# loo.sh: the IVON paper's leave-one-out estimate of the generalisation
# loss (Shen et al. 2024, §4.4.1, Fig. 5) and its sensitivity scores
# (§4.4.2, Fig. 6) on Fashion-MNIST, run by `make loo` as
#   sh examples/loo.sh examples/out
# after the Makefile has built OUT/loo_mlp (examples/loo_mlp.bnn, a
# 784-128-10 mean-field MLP, compiled by `bnnc --main`) and
# examples/datagen (docs/examples.md).
#
# 1. Trains it with IVON at its defaults (lr 0.1, h0 0.1, ess = N) for 10
#    epochs, batch 128, seed 1, with `--set loo=2000`: after every epoch
#    the trainer reports the mean LOO NLL estimate ℓ(f_i + V_i e_i) over
#    2000 evenly spaced training images, computed from the σ² IVON has
#    learned, and, with the test set given as --valid, the real test NLL
#    at the posterior mean; prints both per epoch, side by side, with the
#    training loss (the mean NLL of the epoch's MC samples).
# 2. The same with h0 = 0.02: a smaller initial Hessian, larger σ², as the
#    paper tunes h0 "to achieve a faithful estimate" (App. C.5).
# 3. Scores the first 10000 training images with the `sensitivity`
#    command under the first run's checkpoint (its best epoch by test
#    NLL, since the test set is the validation data): their mean NLL and
#    LOO NLL at the posterior mean, the 8 most and least sensitive images
#    listed and drawn in OUT/loo_sensitivity.svg, every score in
#    OUT/loo_sensitivity.csv.
# Writes, per h0 value H, OUT/loo_hH.ckpt, OUT/loo_hH.log (the progress
# lines), OUT/loo_hH.json and OUT/loo_hH.csv (the table:
# epoch,train_loss,loo_nll,test_nll).
#
# Data: the gzip IDX files of Debian's dataset-fashion-mnist package in
# /usr/share/datasets/fashion-mnist (or $FASHION_MNIST_DIR); without them
# a synthetic stand-in that `datagen images` writes to OUT/synthetic,
# announced on stderr.
#
# POSIX sh; stops at the first error with a message.  Exit status: 0 on
# success, 1 when a step fails, 2 when called wrongly.

me=loo.sh

. "$(dirname "$0")/common.sh"

one_outdir "$@"
out=$1
prog=$out/loo_mlp
datagen=${DATAGEN:-$(dirname "$out")/datagen}
ckpt=$out/loo_h0.1.ckpt
epochs=10
loo=2000

need_built loo "$prog"

. "$(dirname "$0")/fashion_data.sh"
fashion_data loo "the numbers below"

# train_one H0: trains with --set h0=H0, writes $out/loo_h$H0.{ckpt,json,log,csv}
train_one() {
	base=$out/loo_h$1
	echo "$me: training on $data: IVON (h0 $1, other settings default), $epochs epochs," \
		"batch 128, LOO on $loo training images after each epoch; checkpoint $base.ckpt" >&2
	"$prog" train --data "$dir/train-images-idx3-ubyte.gz" \
		--labels "$dir/train-labels-idx1-ubyte.gz" \
		--valid "$dir/t10k-images-idx3-ubyte.gz" --valid-labels "$dir/t10k-labels-idx1-ubyte.gz" \
		--optimizer ivon --epochs "$epochs" --batch 128 --seed 1 --threads 1 \
		--set h0="$1" --set loo="$loo" --save "$base.ckpt" >"$base.json" 2>"$base.log" || {
		cat "$base.log" >&2
		die "training failed (see the message above)"
	}
	# "epoch 3/10  loss 0.4258  valid nll 0.4474  valid accuracy 0.8396  loo nll 0.4216 ..."
	awk 'BEGIN { print "epoch,train_loss,loo_nll,test_nll" }
		/^epoch / {
			split($2, e, "/"); tl = lo = te = ""
			for (i = 3; i < NF; i++) {
				if ($i == "loss") tl = $(i + 1)
				if ($i == "loo" && $(i + 1) == "nll") lo = $(i + 2)
				if ($i == "valid" && $(i + 1) == "nll") te = $(i + 2)
			}
			print e[1] "," tl "," lo "," te
		}' "$base.log" >"$base.csv" || die "cannot write $base.csv"
	echo "IVON with h0 $1: the leave-one-out NLL estimate against the real test NLL, per epoch:"
	awk -F, 'NR == 1 { printf "%6s %11s %9s %9s %9s\n", "epoch", "train loss", "LOO NLL",
			"test NLL", "LOO-test"; next }
		{ printf "%6d %11.4f %9.4f %9.4f %+9.4f\n", $1, $2, $3, $4, $3 - $4 }' "$base.csv"
	echo
}
train_one 0.1
train_one 0.02

# the sensitivity command on the first 10000 training images
head=$out/loo_train10k
if [ ! -r "$head-labels.idx" ]; then
	# IDX: the same header with the count 10000 (0x2710), then the first examples
	{ printf '\0\0\010\003\0\0\047\020'
		gzip -dc "$dir/train-images-idx3-ubyte.gz" | tail -c +9 | head -c $((8 + 10000 * 784)); } \
		>"$head-images.idx" &&
		{ printf '\0\0\010\001\0\0\047\020'
			gzip -dc "$dir/train-labels-idx1-ubyte.gz" | tail -c +9 | head -c 10000; } \
			>"$head-labels.idx" || die "cannot write $head-images.idx and $head-labels.idx"
fi
"$prog" sensitivity --load "$ckpt" --data "$head-images.idx" --labels "$head-labels.idx" \
	--threads 1 --top 8 --out "$out/loo_sensitivity.csv" --svg "$out/loo_sensitivity.svg" ||
	die "the sensitivity command failed (see the message above)"
echo "$me: wrote $out/loo_h0.1.csv, $out/loo_h0.02.csv, $out/loo_sensitivity.csv and" \
	"$out/loo_sensitivity.svg" >&2
