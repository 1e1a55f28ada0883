#!/bin/sh
# analytic.sh: the analytic predictive of the standalone target against
# its 32-sample Monte-Carlo predictive on the Fashion-MNIST meanfield MLP
# (examples/fashion_bayes.bnn): accuracy, NLL, ECE, OOD AUROC (the test
# images turned a quarter turn, as `make compare`), and speed
# (bench/analytic.c; docs/standalone.md, "The analytic predictive", quotes
# the numbers).  Run from the build directory after `make`:
#
#   sh bench/analytic.sh [OUT_DIR [EPOCHS]]
#
# It trains the model with IVON (`make compare`'s settings, EPOCHS
# epochs, default 5, one thread) unless OUT_DIR/fashion_bayes.ckpt exists,
# exports it, writes the standalone file with --analytic, and runs
# bench/analytic.c on it, and libbnn's own `eval --mc 32` and `--mc 0`
# for reference.  Everything runs under nice -n 19 on one thread.
set -eu
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
out=${1:-bench/out/analytic}
epochs=${2:-5}
dir=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
for f in train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz \
	t10k-labels-idx1-ubyte.gz; do
	[ -r "$dir/$f" ] || {
		echo "analytic.sh: $dir/$f is missing (apt-get install dataset-fashion-mnist, or set FASHION_MNIST_DIR)" >&2
		exit 1
	}
done
cflags=$(sed -n 's/^BLAS_CFLAGS = //p' Makefile)
libs="runtime/libbnn.a $(sed -n 's/^BLAS_LIBS = //p' Makefile) $(sed -n 's/^ZLIB_LIBS = //p' Makefile) $(sed -n 's/^OPENMP_CFLAGS = //p' Makefile) -lm"
mkdir -p "$out"
export OPENBLAS_NUM_THREADS=1
m=fashion_bayes
gen/bnnc --main -o "$out/$m.c" "$top_srcdir/examples/$m.bnn"
# shellcheck disable=SC2086
nice -n 19 cc -std=c11 -O2 -fopenmp -I"$top_srcdir/runtime/include" $cflags -o "$out/$m" "$out/$m.c" $libs
if [ ! -f "$out/$m.ckpt" ]; then
	nice -n 19 "$out/$m" train --data "$dir/train-images-idx3-ubyte.gz" \
		--labels "$dir/train-labels-idx1-ubyte.gz" --optimizer ivon --lr 0.3 \
		--set schedule=cosine --set h0=0.3 --epochs "$epochs" --batch 128 --seed 1 \
		--threads 1 --set valid_fraction=0.1 --save "$out/$m.ckpt"
fi
examples/datagen ood "$dir/t10k-images-idx3-ubyte.gz" "$out/ood-rot90.gz" --transform rot90
"$out/$m" export --load "$out/$m.ckpt" -o "$out/${m}_infer_weights.h"
gen/bnnc --standalone --analytic -o "$out/${m}_infer.c" "$top_srcdir/examples/$m.bnn"
# shellcheck disable=SC2086
nice -n 19 cc -std=c11 -O2 -I"$top_srcdir/runtime/include" -I"$out" -DSA_MODEL=$m \
	-DSA_UP=FASHION_BAYES -DSA_SOURCE="\"${m}_infer.c\"" -o "$out/analytic" \
	"$top_srcdir/bench/analytic.c" $libs
nice -n 19 "$out/analytic" "$dir/t10k-images-idx3-ubyte.gz" "$dir/t10k-labels-idx1-ubyte.gz" \
	"$out/ood-rot90.gz" 32 500 5
for mc in 32 0; do
	nice -n 19 "$out/$m" eval --load "$out/$m.ckpt" --data "$dir/t10k-images-idx3-ubyte.gz" \
		--labels "$dir/t10k-labels-idx1-ubyte.gz" --mc $mc --seed 1 --threads 1 \
		--ood "$out/ood-rot90.gz"
done
