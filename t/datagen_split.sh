#!/bin/sh
# datagen_split.sh: `datagen split IN HEAD TAIL --at N`, the hold-out of
# make compare's validation images, on a small synthetic set: HEAD gets
# the first N examples and TAIL the rest, byte for byte, for an image file
# (IDX rank 3) and its labels (rank 1); the bad calls say what is wrong.
#
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_builddir
. "$TAP_SH"

dg=$top_builddir/examples/datagen
d=$TAP_TMP
run "$dg" images "$d/set" --n-train 20 --n-test 1 --seed 3
is "$run_status" 0 "a 20-image set to split$run_err"
img=$d/set/train-images-idx3-ubyte.gz lab=$d/set/train-labels-idx1-ubyte.gz

# The IDX payload of a file (its bytes after a header of HEADER bytes).
payload() {
	gzip -dc "$1" | tail -c +"$(($2 + 1))"
}

run "$dg" split "$img" "$d/hi.gz" "$d/ti.gz" --at 15
is "$run_status" 0 "split the images at 15$run_err"
is "$(gzip -dc "$d/hi.gz" | head -c 16 | od -An -tx1 | tr -d ' \n')" \
	"000008030000000f0000001c0000001c" "HEAD's header: rank 3, 15 images of 28x28"
is "$(gzip -dc "$d/ti.gz" | head -c 16 | od -An -tx1 | tr -d ' \n')" \
	"00000803000000050000001c0000001c" "TAIL's header: 5 images"
payload "$img" 16 >"$d/all" && { payload "$d/hi.gz" 16 && payload "$d/ti.gz" 16; } >"$d/both"
cmp -s "$d/all" "$d/both"
ok $? "HEAD then TAIL hold the pixels of IN, in order"

run "$dg" split "$lab" "$d/hl.gz" "$d/tl.gz" --at 15
is "$run_status" 0 "split the labels at 15$run_err"
is "$(gzip -dc "$d/tl.gz" | head -c 8 | od -An -tx1 | tr -d ' \n')" "0000080100000005" \
	"the labels' TAIL: rank 1, 5 labels"
payload "$lab" 8 >"$d/all" && { payload "$d/hl.gz" 8 && payload "$d/tl.gz" 8; } >"$d/both"
cmp -s "$d/all" "$d/both"
ok $? "HEAD then TAIL hold the labels of IN, in order"

run "$dg" split "$lab" "$d/a.gz" "$d/b.gz" --at 20
is "$run_status:$run_err" "2:datagen: --at 20: $lab holds 20 examples, so TAIL would be empty (use 1 to 19)
Try 'datagen --help'." "--at the whole file: a usage error"
[ ! -e "$d/a.gz" ]
ok $? "... and nothing is written"
run "$dg" split "$lab" "$d/a.gz" "$d/b.gz"
is "$run_status:$run_err" "2:datagen: split needs --at N, the number of examples HEAD gets
Try 'datagen --help'." "no --at"
run "$dg" split "$lab" "$d/a.gz" --at 3
is "$run_status:$run_err" "2:datagen: split needs IN, HEAD and TAIL, the IDX file to read and the two to write
Try 'datagen --help'." "two files"
run "$dg" split "$lab" "$d/a.gz" "$d/b.gz" --at 0
is "$run_status:$run_err" "2:datagen: --at: '0' is not a whole number in [1, 10000000]
Try 'datagen --help'." "--at 0"
printf 'not idx' | gzip >"$d/bad.gz"
run "$dg" split "$d/bad.gz" "$d/a.gz" "$d/b.gz" --at 1
is "$run_status:$run_err" "1:datagen: $d/bad.gz: not an IDX file of unsigned bytes (magic number 0x6e6f7420, expected 0x00000803)" \
	"a file that is not IDX"

done_testing
