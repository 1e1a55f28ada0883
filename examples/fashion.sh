#!/bin/sh
# fashion.sh: the README's main job, run by `make fashion` as
#   sh examples/fashion.sh examples/out
# after the Makefile has built OUT/fashion_point (examples/fashion_point.bnn
# compiled by `bnnc --main`) and examples/datagen.  It trains the 784-512-
# 512-10 MLP with Adam on Fashion-MNIST, saves OUT/fashion_point.ckpt and
# prints the test-set metrics as one JSON line (docs/examples.md).
#
# Data: the gzip IDX files of Debian's dataset-fashion-mnist package in
# /usr/share/datasets/fashion-mnist (or $FASHION_MNIST_DIR); when they are
# not there, a synthetic stand-in that `datagen images` writes to
# OUT/synthetic, announced on stderr (its metrics say nothing about
# Fashion-MNIST).
#
# Training: Adam with a learning rate of 1e-3 decayed to 0 along a cosine
# over 15 epochs (--set schedule=cosine), minibatches of 128.  The decay is
# worth about a point of test accuracy over a constant 1e-3 (measured:
# 89.7% against 88.8%; docs/examples.md).
#
# Validation: 10% of the 60,000 training images (--set valid_fraction=0.1,
# a fixed random split from the seed) are held out; the checkpoint keeps the
# epoch with the lowest validation NLL.  The test set is used once, by eval,
# so choosing the epoch does not peek at it.
#
# POSIX sh; stops at the first error with a message.  Exit status: 0 on
# success, 1 when a step fails, 2 when called wrongly.

me=fashion.sh

. "$(dirname "$0")/common.sh"

one_outdir "$@"
out=$1
prog=$out/fashion_point
datagen=${DATAGEN:-$(dirname "$out")/datagen}
ckpt=$out/fashion_point.ckpt
epochs=15
batch=128
lr=1e-3
schedule=cosine

need_built fashion "$prog"

# The data: the real Fashion-MNIST when installed, else the stand-in.
. "$(dirname "$0")/fashion_data.sh"
fashion_data fashion "the metrics below"

start=$(date +%s)
echo "$me: training on $data: Adam, lr $lr ($schedule schedule), $epochs epochs," \
	"batch $batch, 10% held out for validation; checkpoint $ckpt" >&2
"$prog" train --data "$dir/train-images-idx3-ubyte.gz" \
	--labels "$dir/train-labels-idx1-ubyte.gz" \
	--optimizer adam --lr "$lr" --epochs "$epochs" --batch "$batch" --seed 1 \
	--set schedule="$schedule" --set valid_fraction=0.1 --save "$ckpt" >"$out/fashion_train.json" ||
	die "training failed (see the message above)"
trained=$(date +%s)
echo "$me: training summary: $(cat "$out/fashion_train.json")" >&2

echo "$me: test-set metrics of $ckpt on $data (10,000 images):" >&2
"$prog" eval --load "$ckpt" --data "$dir/t10k-images-idx3-ubyte.gz" \
	--labels "$dir/t10k-labels-idx1-ubyte.gz" >"$out/fashion_metrics.json" ||
	die "evaluation failed (see the message above)"
cat "$out/fashion_metrics.json" || die "cannot read $out/fashion_metrics.json"
end=$(date +%s)
echo "$me: trained in $((trained - start)) s, evaluated in $((end - trained)) s;" \
	"metrics saved in $out/fashion_metrics.json" >&2
