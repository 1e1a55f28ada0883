#!/bin/sh
# prune.sh: the BADAM paper's weight-pruning experiment (Kessler et al.,
# section 4, figure 2 and appendix D.2) on Fashion-MNIST, run by
# `make prune` as
#   sh examples/prune.sh examples/out
# after the Makefile has built OUT/fashion_bayes (examples/fashion_bayes.bnn
# compiled by `bnnc --main`), OUT/prune (examples/prune.c with the same
# model compiled in) and examples/datagen (docs/examples.md).
#
# 1. Trains the 784-512-512-10 mean-field MLP with BADAM: Adam (lr 1e-3 at
#    a constant rate, the paper's "default settings", minibatches of 128,
#    20 epochs, seed 1) with beta2 = 0.99999 and no L2 regularisation
#    (delta = 0), the settings the paper reports as giving the best
#    uncertainties, then the posterior sigma = 1/sqrt(N sqrt(v)) with
#    BADAM's default N (the training set size times 784, the first
#    layer's fan-in; the order of |mu|/sigma, all that pruning uses, is
#    the same for every N).
#    (The paper trains 100 epochs of a 2x400 network with dropout 0.2;
#    20 epochs of fashion_bayes take about a minute.)
# 2. Zeroes, for fractions 0, 0.05, ..., 0.95, the weights (not the
#    biases) with the lowest signal-to-noise ratio |mu|/sigma, and
#    separately those with the lowest magnitude |mu| (the paper's
#    baseline), and evaluates each pruned mean network on the 10,000 test
#    images.
# Writes OUT/prune_badam.ckpt, OUT/prune.csv (the table), OUT/prune.svg
# (accuracy against fraction pruned; its data in OUT/prune_plot.csv).
#
# Data: the gzip IDX files of Debian's dataset-fashion-mnist package in
# /usr/share/datasets/fashion-mnist (or $FASHION_MNIST_DIR); without them
# a synthetic stand-in that `datagen images` writes to OUT/synthetic,
# announced on stderr.
#
# POSIX sh; stops at the first error with a message.  Exit status: 0 on
# success, 1 when a step fails, 2 when called wrongly.

me=prune.sh

. "$(dirname "$0")/common.sh"

one_outdir "$@"
out=$1
prog=$out/fashion_bayes
prune=$out/prune
datagen=${DATAGEN:-$(dirname "$out")/datagen}
ckpt=$out/prune_badam.ckpt
epochs=20
batch=128
lr=1e-3

need_built prune "$prog" "$prune"

. "$(dirname "$0")/fashion_data.sh"
fashion_data prune "the accuracies below"

start=$(date +%s)
echo "$me: training on $data: BADAM (Adam, lr $lr, beta2 0.99999, no L2), $epochs epochs," \
	"batch $batch; checkpoint $ckpt" >&2
"$prog" train --data "$dir/train-images-idx3-ubyte.gz" \
	--labels "$dir/train-labels-idx1-ubyte.gz" \
	--optimizer badam --lr "$lr" --epochs "$epochs" --batch "$batch" --seed 1 --threads 1 \
	--set beta2=0.99999 --set delta=0 --set schedule=constant --save "$ckpt" >"$out/prune_train.json" ||
	die "training failed (see the message above)"
trained=$(date +%s)
echo "$me: training summary: $(cat "$out/prune_train.json")" >&2

echo "$me: test accuracy of the mean network on $data after pruning a fraction of" \
	"its weights, by SNR |mu|/sigma and by magnitude |mu|:" >&2
"$prune" --load "$ckpt" --data "$dir/t10k-images-idx3-ubyte.gz" \
	--labels "$dir/t10k-labels-idx1-ubyte.gz" --out "$out/prune" ||
	die "pruning failed (see the message above)"
done_at=$(date +%s)
echo "$me: trained in $((trained - start)) s, pruned and evaluated in $((done_at - trained)) s;" \
	"table in $out/prune.csv, chart in $out/prune.svg" >&2
