#!/bin/sh
# build.sh: `make standalone-example`: examples/standalone/classify.c end
# to end from a .bnn file (POSIX sh; README.md in this directory):
#   1. the model's driver (built by make, with libbnn) trains it on
#      Fashion-MNIST with IVON and saves the checkpoint;
#   2. the driver's export writes the trained posterior as the weights
#      header MODEL_infer_weights.h;
#   3. bnnc --standalone writes MODEL_infer.c and MODEL_infer.h;
#   4. cc builds classify from classify.c and MODEL_infer.c alone (and
#      zlib, for the gzip data files: the program's I/O, not the model's);
#   5. classify predicts the 10,000 test images with uncertainty and
#      refuses those whose predictive entropy is above the threshold.
#
# Usage: sh examples/standalone/build.sh OUTDIR MODEL
# where OUTDIR holds the driver OUTDIR/MODEL (make builds it from
# examples/MODEL.bnn).  Environment: BNNC (bnnc), CC and CFLAGS (the
# standalone build, default cc and -std=c99 -O2), EPOCHS (5), MC (32),
# MAX_ENTROPY (0.5 nats), PER_IMAGE=1 (a line per image), DATAGEN and
# FASHION_MNIST_DIR (examples/fashion_data.sh).

me=build.sh
here=$(dirname "$0")
. "$here/../common.sh"

[ $# -eq 2 ] || {
	echo "usage: sh examples/standalone/build.sh OUTDIR MODEL (run by 'make standalone-example')" >&2
	exit 2
}
out=$1
model=$2
prog=$out/$model
datagen=${DATAGEN:-$(dirname "$out")/datagen}
bnnc=${BNNC:-bnnc}
cc=${CC:-cc}
cflags=${CFLAGS:--std=c99 -O2}
up=$(printf '%s' "$model" | tr '[:lower:]' '[:upper:]')
ckpt=$out/${model}_standalone.ckpt

need_built standalone-example "$prog"
. "$here/../fashion_data.sh"
fashion_data standalone-example "the accuracy and coverage below"

echo "$me: 1. training $model on $data with IVON, ${EPOCHS:-5} epochs -> $ckpt" >&2
"$prog" train --data "$dir/train-images-idx3-ubyte.gz" --labels "$dir/train-labels-idx1-ubyte.gz" \
	--optimizer ivon --lr 0.3 --set schedule=cosine --set h0=0.3 --epochs "${EPOCHS:-5}" \
	--batch 128 --seed 1 --save "$ckpt" >"$out/${model}_standalone_train.json" ||
	die "training failed (see the message above)"

echo "$me: 2. exporting the posterior -> $out/${model}_infer_weights.h" >&2
"$prog" export --load "$ckpt" -o "$out/${model}_infer_weights.h" || die "export failed"

echo "$me: 3. bnnc --standalone -> $out/${model}_infer.c, $out/${model}_infer.h" >&2
"$bnnc" --standalone -o "$out/${model}_infer.c" "$here/../$model.bnn" || die "bnnc failed"

echo "$me: 4. $cc $cflags: classify.c + ${model}_infer.c (no libbnn) -> $out/classify_$model" >&2
# shellcheck disable=SC2086 # the flags are split on purpose
"$cc" $cflags -DCLASSIFY_ZLIB -DCLASSIFY_MODEL="$model" -DCLASSIFY_UP="$up" \
	-DCLASSIFY_HEADER="\"${model}_infer.h\"" -I"$out" -o "$out/classify_$model" \
	"$here/classify.c" "$out/${model}_infer.c" -lz -lm || die "the standalone build failed"
echo "$me: workspace $(sed -n "s/^#define ${up}_WORKSPACE_BYTES \([0-9]*\)UL$/\1/p" \
	"$out/${model}_infer.h") bytes (${up}_WORKSPACE_BYTES)" >&2

echo "$me: 5. classifying the test images of $data (mc ${MC:-32}, refusing above" \
	"${MAX_ENTROPY:-0.5} nats)" >&2
set -- --mc "${MC:-32}" --max-entropy "${MAX_ENTROPY:-0.5}"
[ "${PER_IMAGE:-0}" = 1 ] && set -- "$@" --per-image
"$out/classify_$model" "$@" "$dir/t10k-images-idx3-ubyte.gz" "$dir/t10k-labels-idx1-ubyte.gz" ||
	die "classify failed"
