#!/bin/sh
# signal.sh: rank-2 inputs end to end: models of [channels, length]
# signals with conv1d and the 1-D pools (t/models/sg_point.bnn,
# t/models/sg_mf.bnn), trained by their generated programs on generated
# IDX files of rank 3 (n x 2 x 16) and on CSV files of 32 feature columns.
# Checks: Adam (on IDX and on CSV), IVON and VOGN all reach a clear
# accuracy margin over chance on held-out signals; IDX examples stored as
# flat vectors of 32 values fit too; examples of another shape are refused
# with the file's name and the shape the model takes (4 x 8 for [2, 16];
# 2 x 15, whose number of values differs), and so is a CSV file with a
# column too few, and so is augmentation (crop_pad, flip: for images).
#
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"
# build and accuracy_above
. "$top_srcdir/t/blobs_lib.sh"

cd "$TAP_TMP" || bail_out "no temporary directory"

# signals N SEED FORMAT [L [DIMS]]: N examples of 2 channels x L samples
# (16), class i % 3: a pulse of 3 samples (about 200 over a floor below
# 40) in channel 0 (class 0), channel 1 (class 1) or both (class 2), at a
# position that varies.  FORMAT idx: the octal escapes of an IDX file of
# unsigned bytes whose examples have the dimensions DIMS ("2 L", or "flat"
# for vectors of 2L values); lab: of its labels; csv: a header and rows of
# 2L values in [0, 1] (the IDX reader's scaling) and the label.
signals() {
	awk -v n="$1" -v seed="$2" -v fmt="$3" -v l="${4:-16}" -v dims="${5:-}" '
	function rnd() { s = (s * 1103515245 + 12345) % 2147483648; return s / 2147483648 }
	function be32(v) { return sprintf("\\%03o\\%03o\\%03o\\%03o", int(v / 16777216) % 256, int(v / 65536) % 256, int(v / 256) % 256, v % 256) }
	BEGIN { s = seed
		if (dims == "") dims = "2 " l
		if (dims == "flat") dims = 2 * l
		nd = split(dims, d, " ")
		if (fmt == "idx") { printf "\\000\\000\\010\\%03o%s", nd + 1, be32(n); for (j = 1; j <= nd; j++) printf "%s", be32(d[j]) }
		if (fmt == "lab") printf "\\000\\000\\010\\001%s", be32(n)
		if (fmt == "csv") { for (j = 0; j < 2 * l; j++) printf "v%d,", j; print "label" }
		for (i = 0; i < n; i++) {
			k = i % 3; at = int(rnd() * (l - 2))
			for (c = 0; c < 2; c++) for (t = 0; t < l; t++) {
				v = int(rnd() * 40)
				if (t >= at && t < at + 3 && (k == c || k == 2)) v = 200 + int(rnd() * 40)
				x[c * l + t] = v
			}
			if (fmt == "idx") for (j = 0; j < 2 * l; j++) printf "\\%03o", x[j]
			if (fmt == "lab") printf "\\%03o", k
			if (fmt == "csv") { for (j = 0; j < 2 * l; j++) printf "%.6f,", x[j] / 255; print k }
		} }'
}

write_bytes train.idx signals 300 1 idx
write_bytes train-lab.idx signals 300 1 lab
write_bytes test.idx signals 150 2 idx
write_bytes test-lab.idx signals 150 2 lab
signals 300 1 csv >train.csv
signals 150 2 csv >test.csv
write_bytes flat.idx signals 150 2 idx 16 flat
write_bytes square.idx signals 150 2 idx 16 "4 8"
write_bytes short.idx signals 150 2 idx 15
cut -d, -f2- train.csv >narrow.csv

# ---- compile ---------------------------------------------------------------
for m in sg_point sg_mf; do
	build $m "$top_srcdir/t/models/$m.bnn"
	ok $? "$m builds with -Werror"
done

# trains PROG OPT DATA LABELS...: trains with OPT, then evaluates on the
# held-out IDX signals; the accuracy must exceed 0.9 (chance: 0.33).
held_out="--data test.idx --labels test-lab.idx"
trains() {
	_tp=$1
	_to=$2
	shift 2
	trains_above "$_tp" "$_to" 0.9 --epochs 30 --batch 16 "$@"
}

# ---- train and evaluate --------------------------------------------------------
trains sg_point adam --data train.idx --labels train-lab.idx
trains sg_mf ivon --data train.idx --labels train-lab.idx
trains sg_mf vogn --data train.idx --labels train-lab.idx
run ./sg_point train --optimizer adam --epochs 30 --batch 16 --save csv.ckpt --quiet --data train.csv
is "$run_status $run_err" "0 " "sg_point trains on CSV rows of 32 values"
run ./sg_point eval --load csv.ckpt --data test.csv
accuracy_above "$run_out" 0.9 "sg_point on CSV rows"
run ./sg_point predict --load sg_point-adam.ckpt --data flat.idx
is "$run_status" 0 "IDX examples stored as flat vectors of 32 values fit x[2, 16]"
is "$(printf '%s\n' "$run_out" | wc -l | tr -d ' ')" 151 "and predict gives a row for each"

# ---- examples of another shape ---------------------------------------------------
run ./sg_point eval --load sg_point-adam.ckpt --data square.idx --labels test-lab.idx
is "$run_status $run_err" \
	"1 ./sg_point: square.idx: each example is 4 x 8, but model 'sg_point' takes input x[2, 16] (channels, length)" \
	"examples of 4 x 8 are refused for x[2, 16]"
run ./sg_point eval --load sg_point-adam.ckpt --data short.idx --labels test-lab.idx
is "$run_status $run_err" \
	"1 ./sg_point: short.idx: each example has 30 values (2 x 15), but model 'sg_point' takes 32 (input x[2, 16])" \
	"examples of 2 x 15 are refused with their number of values"
run ./sg_point train --data train.idx --labels train-lab.idx --set flip=1 --save x.ckpt
is "$run_status $run_err" \
	"1 ./sg_point: augmentation (crop_pad, flip) is for images, and model 'sg_point' takes signals (input x[2, 16]: channels, length)" \
	"augmenting signals as images is refused"
run ./sg_point train --data narrow.csv --save x.ckpt
is "$run_status $run_err" \
	"1 ./sg_point: narrow.csv: no target column 'y': the file has 32 columns, as many as the model's features, and none left for the target (the last column, or the one --target names)" \
	"a CSV file of 31 feature columns and the target is refused: as many columns as features leave none for the target"

done_testing
