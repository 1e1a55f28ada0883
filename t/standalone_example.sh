#!/bin/sh
# standalone_example.sh: examples/standalone/classify.c, the program that
# classifies with uncertainty through a model's standalone file only, on
# a model whose outputs are known: t/data/standalone_example/tiny.bnn
# (4x4 images, three classes, a mean-field dense layer) with the weights
# chosen by hand in weights.h (class 0: bright top half, class 1: bright
# bottom half, class 2: no weights), behind the fingerprint lines of an
# `export` of the model (so a change of the model's fingerprint does not
# break the fixture).  Six images, written here as IDX files:
#   0 top half bright, label 0      confident, right
#   1 bottom half bright, label 1   confident, right
#   2 black, label 2                uniform: refused
#   3 all bright, label 2           top and bottom cancel: refused
#   4 top half faint (64), label 0  class 0 at p 0.67: refused at 0.5 nats
# (the mean pass's figures are those of the softmax of (4, -4, 0) and
# (1.004, -1.004, 0) by hand; those of 16 samples were checked for sense:
# the all-bright image, whose halves cancel in the mean, has the largest
# mutual information, its weights' uncertainty)
#   5 top half bright, label 1      confident, wrong
# The program is built with the file's own math (-DTINY_NO_LIBM), so its
# outputs are the same bits on every platform and the lines are exact:
# the mean pass, the Monte-Carlo predictive (16 samples, seed 1), a
# threshold that answers everything, gzip files read through zlib, and
# the bad inputs' messages.
#
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"

W=$TAP_TMP
D=$top_srcdir/t/data/standalone_example
SRC=$top_srcdir/examples/standalone/classify.c
C99='-std=c99 -Wall -Wextra -Wpedantic -Werror'

# build OUT [ARGS...]: classify.c and the tiny model's standalone file
# alone, with the file's own math, into OUT
build() {
	out=$1
	shift
	# shellcheck disable=SC2086 # $C99 is split on purpose
	$CC $C99 -O2 -DCLASSIFY_MODEL=tiny -DCLASSIFY_UP=TINY -DCLASSIFY_HEADER='"tiny_infer.h"' \
		-DTINY_NO_LIBM -I"$W" -o "$out" "$SRC" "$W/tiny_infer.c" "$@"
}

# ok_or_show STATUS DESC FILE: ok, with FILE's last lines when it failed.
ok_or_show() {
	ok "$1" "$2"
	[ "$1" = 0 ] || diag "$(tail -n 5 "$3")"
}

plan 9

# the driver, a checkpoint (any: only its fingerprint lines are kept), the
# weights header, the standalone file
# shellcheck disable=SC2086 # the flags are split on purpose
{
	"$BNNC" --main -o "$W/drv.c" "$D/tiny.bnn" &&
		$CC $BNN_CFLAGS -o "$W/drv" "$W/drv.c" $BNN_LIBS &&
		awk 'BEGIN { for (j = 0; j < 16; j++) printf "%sf%d", (j ? "," : ""), j
			print ",t"
			for (i = 0; i < 8; i++) {
				for (j = 0; j < 16; j++) printf "%s%d", (j ? "," : ""), (i + j) % 2
				print "," i % 3
			} }' >"$W/train.csv" &&
		"$W/drv" train --data "$W/train.csv" --optimizer ivon --epochs 1 --seed 1 \
			--save "$W/ckpt" >/dev/null 2>&1 &&
		"$W/drv" export --load "$W/ckpt" -o "$W/exported.h" &&
		{
			sed '/checkpoint section/,$d' "$W/exported.h"
			cat "$D/weights.h"
			echo '#endif'
		} >"$W/tiny_infer_weights.h" &&
		"$BNNC" --standalone -o "$W/tiny_infer.c" "$D/tiny.bnn"
} >"$W/setup.log" 2>&1
ok_or_show $? "the tiny model's driver, checkpoint, weights header and standalone file" \
	"$W/setup.log"

build "$W/classify" >"$W/cc.log" 2>&1
ok_or_show $? "classify.c builds with the standalone file alone (-std=c99 -Wall -Wextra -Wpedantic -Werror)" \
	"$W/cc.log"

# header RANK SIZES...: an IDX header of unsigned bytes (type 0x08)
# shellcheck disable=SC2059 # the formats are octal escapes made here
header() {
	printf '\000\000\010\00'"$1"
	shift
	for n in "$@"; do
		printf "\\$(printf '%03o' $((n >> 24 & 255)))\\$(printf '%03o' $((n >> 16 & 255)))"
		printf "\\$(printf '%03o' $((n >> 8 & 255)))\\$(printf '%03o' $((n & 255)))"
	done
}
# image TOP BOTTOM: one 4x4 image, 8 pixels of each value (octal)
# shellcheck disable=SC2059
image() {
	i=0
	while [ $i -lt 8 ]; do printf "\\$1"; i=$((i + 1)); done
	i=0
	while [ $i -lt 8 ]; do printf "\\$2"; i=$((i + 1)); done
}
{
	header 3 6 4 4
	image 377 000
	image 000 377
	image 000 000
	image 377 377
	image 100 000
	image 377 000
} >"$W/images.idx"
{
	header 1 6
	printf '\000\001\002\002\000\001'
} >"$W/labels.idx"

run "$W/classify" --per-image --mc 0 "$W/images.idx" "$W/labels.idx"
is "$run_status
$run_out" "0
image 0 label 0 predicted 0 p 0.9817 entropy 0.0930 mi 0.0000 answered
image 1 label 1 predicted 1 p 0.9817 entropy 0.0930 mi 0.0000 answered
image 2 label 2 predicted 0 p 0.3333 entropy 1.0986 mi 0.0000 refused
image 3 label 2 predicted 0 p 0.3333 entropy 1.0986 mi 0.0000 refused
image 4 label 0 predicted 0 p 0.6663 entropy 0.8307 mi 0.0000 refused
image 5 label 1 predicted 0 p 0.9817 entropy 0.0930 mi 0.0000 answered
images 6 answered 3 coverage 0.5000 (max entropy 0.5000 nats, mc 0)
accuracy answered 0.6667 (2 of 3) all 0.5000 (3 of 6)" "the posterior-mean pass: per image, coverage and accuracy"

run "$W/classify" --per-image --mc 16 --seed 1 "$W/images.idx" "$W/labels.idx"
is "$run_status
$run_out" "0
image 0 label 0 predicted 0 p 0.9427 entropy 0.2242 mi 0.0248 answered
image 1 label 1 predicted 1 p 0.9773 entropy 0.1105 mi 0.0088 answered
image 2 label 2 predicted 2 p 0.3391 entropy 1.0985 mi 0.0041 refused
image 3 label 2 predicted 1 p 0.3871 entropy 1.0877 mi 0.1577 refused
image 4 label 0 predicted 0 p 0.6584 entropy 0.8414 mi 0.0098 refused
image 5 label 1 predicted 0 p 0.9772 entropy 0.1112 mi 0.0046 answered
images 6 answered 3 coverage 0.5000 (max entropy 0.5000 nats, mc 16)
accuracy answered 0.6667 (2 of 3) all 0.6667 (4 of 6)" "the Monte-Carlo predictive (16 samples): entropy and mutual information"

run "$W/classify" --mc 16 --max-entropy 2.5 "$W/images.idx" "$W/labels.idx"
is "$run_out" "images 6 answered 6 coverage 1.0000 (max entropy 2.5000 nats, mc 16)
accuracy answered 0.6667 (4 of 6) all 0.6667 (4 of 6)" "a threshold above ln 3 answers every image"

# through zlib, the gzip files as Debian's dataset-fashion-mnist has them
if command -v gzip >/dev/null 2>&1; then
	gzip -c "$W/images.idx" >"$W/images.idx.gz" && gzip -c "$W/labels.idx" >"$W/labels.idx.gz"
	build "$W/classify_z" -DCLASSIFY_ZLIB -lz >"$W/ccz.log" 2>&1 &&
		run "$W/classify_z" --per-image --mc 0 "$W/images.idx.gz" "$W/labels.idx" &&
		[ "$run_out" = "$(cd "$W" && ./classify --per-image --mc 0 images.idx labels.idx)" ]
	ok $? "built with -DCLASSIFY_ZLIB, it reads gzip files and gives the same lines"
else
	skip 1 "no gzip to write the compressed files"
fi

# bad input: images of another size, too few labels, a missing file, a
# truncated file, bad options
{
	header 3 1 3 3
	image 000 000
} | head -c 25 >"$W/small.idx"
run "$W/classify" "$W/small.idx" "$W/labels.idx"
is "$run_status $run_err" "1 classify: $W/small.idx: images of 9 values, but the model takes 16" \
	"images of another size are refused"
head -c 50 "$W/images.idx" >"$W/short.idx"
run "$W/classify" "$W/short.idx" "$W/labels.idx"
is "$run_status $run_err" "1 classify: $W/short.idx: truncated: fewer elements than its sizes say" \
	"a truncated IDX file is refused"
run "$W/classify" --mc -1 "$W/images.idx" "$W/nonexistent.idx"
is "$run_status $run_err" "2 classify: --mc: '-1' is not a number in [0, 100000]" \
	"a bad option value is a usage error"

done_testing
