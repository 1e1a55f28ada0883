#!/bin/sh
# unused_targets.sh: commands that do not use targets do not read them
# (docs/driver.md, docs/data.md).  predict, and eval for its --ood data,
# recognise a CSV file's target column, so that it is not taken for a
# feature, but accept anything in it: empty, nan, text, a label outside
# the model's classes; the output is byte for byte that of the file
# without the column.  An IDX --ood-labels file is read as a label file
# (its type and count still checked) but its labels are not checked
# against the classes.  Commands that use targets (train, eval's --data,
# --conformal's calibration data) still refuse a bad label with the
# exact message.  The model is t/models/rt_blobs.bnn (4 inputs, 3 classes),
# its data t/blobs_lib.sh's blobs (the target column "class", the last).
. "$TAP_SH"

cd "$TAP_TMP" || bail_out "no temporary directory"
. "$top_srcdir/t/blobs_lib.sh"
blobs 90 1 >train.csv
blobs 30 2 >test.csv
blobs 20 3 3.0 >far.csv
build blobs "$top_srcdir/t/models/rt_blobs.bnn" || bail_out "cannot build rt_blobs"
./blobs train --data train.csv --epochs 3 --batch 16 --quiet --save m.ckpt >/dev/null ||
	bail_out "cannot train rt_blobs"

# setclass FILE VALUE: FILE with every data row's class (column 5) set to
# VALUE, written as it is ('' leaves the field empty).
setclass() {
	awk -F, -v OFS=, -v v="$2" 'NR == 1 { print; next } { $5 = v; print }' "$1"
}

# ---- predict: the target column is recognised and not read --------------
cut -d, -f1-4 test.csv >bare.csv
run ./blobs predict --load m.ckpt --data bare.csv --mc 4 --seed 3 --out bare.out
is "$run_status $run_err" "0 " "predict on the file without the target column"
for v in '' nan -inf 7 -1 2.5 1e39 abc '""' '"a, b"'; do
	setclass test.csv "$v" >"v.csv"
	run ./blobs predict --load m.ckpt --data v.csv --mc 4 --seed 3 --out v.out
	is "$run_status $run_err" "0 " "predict accepts a class column of '$v'"
	is_file bare.out v.out "and predicts as without the column: '$v'"
done
# the target found by the name training recorded, wherever it stands
setclass test.csv nan | awk -F, -v OFS=, '{ print $5, $1, $2, $3, $4 }' >first.csv
run ./blobs predict --load m.ckpt --data first.csv --mc 4 --seed 3 --out first.out
is_file bare.out first.out "a class column of nan first in the file"
# by position (the last column) and by --target
setclass test.csv 9 >nine.csv
run ./blobs predict --load m.ckpt --data nine.csv --ignore-header --mc 4 --seed 3 --out nine.out
is_file bare.out nine.out "the last column by position (--ignore-header), labels 9"
sed '1s/class/note/' nine.csv >note.csv
run ./blobs predict --load m.ckpt --data note.csv --target note --mc 4 --seed 3 --out note.out
is_file bare.out note.out "the column --target names, labels 9"
# the column is still a column: a row without it is ragged
printf 'a,b,c,d,class\n1,2,3,4,0\n1,2,3,4\n' >ragged.csv
run ./blobs predict --load m.ckpt --data ragged.csv
is "$run_status:$run_err" "1:./blobs: ragged.csv:3: row has 4 fields but the header has 5" \
	"a row without the target field is still ragged"
printf 'a,b,c,d,class\n1,2,3,4,"x\n' >quote.csv
run ./blobs predict --load m.ckpt --data quote.csv
is "$run_status:$run_err" "1:./blobs: quote.csv:2:9: unterminated quoted field" \
	"and a quote left open in it is an error"
# the features are still read and checked
printf 'a,b,c,d,class\n1,,3,4,\n' >nofeat.csv
run ./blobs predict --load m.ckpt --data nofeat.csv
is "$run_status:$run_err" "1:./blobs: nofeat.csv:2:3: column 'b': empty field, expected a number" \
	"an empty feature field is still refused"

# ---- eval --ood: the OOD file's targets are not read ---------------------
cut -d, -f1-4 far.csv >far_bare.csv
run ./blobs eval --load m.ckpt --data test.csv --ood far_bare.csv --mc 4 --seed 3
is "$run_status $run_err" "0 " "eval --ood on a file without the target column"
printf '%s\n' "$run_out" >ood_bare.json
case $run_out in *'"ood_n": 20, '*'"ood_auroc": '*) st=0 ;; *) st=1 ;; esac
ok $st "which has ood_* metrics: $run_out"
for v in 7 -1 '' nan abc; do
	setclass far.csv "$v" >ood_v.csv
	run ./blobs eval --load m.ckpt --data test.csv --ood ood_v.csv --mc 4 --seed 3
	is "$run_status $run_err" "0 " "eval --ood accepts a class column of '$v'"
	printf '%s\n' "$run_out" >ood_v.json
	is_file ood_bare.json ood_v.json "and prints the same metrics: '$v'"
done

# ---- IDX: --ood-labels outside the classes --------------------------------
# u8 images of the blobs' four features (scaled by /255 when read) and u8
# or i32 labels, as octal escapes for write_bytes.
idx_images() {
	awk -F, 'NR > 1 { n++; for (j = 1; j <= 4; j++) v[n, j] = int(($j + 3) * 40) }
	END {
		printf "\\000\\000\\010\\002\\000\\000\\000\\%03o\\000\\000\\000\\004", n
		for (i = 1; i <= n; i++) for (j = 1; j <= 4; j++) printf "\\%03o", v[i, j]
	}' "$1"
}
# idx_labels N TYPE VALUE: N labels of VALUE, TYPE u8 (010) or i32 (014).
idx_labels() {
	awk -v n="$1" -v t="$2" -v v="$3" 'BEGIN {
		printf "\\000\\000\\%s\\001\\000\\000\\000\\%03o", t, n
		for (i = 0; i < n; i++)
			if (t == "010") printf "\\%03o", v
			else if (v < 0) printf "\\377\\377\\377\\%03o", 256 + v
			else printf "\\000\\000\\000\\%03o", v
	}'
}
# test.idx's labels: the blobs' classes, i % 3
awk 'BEGIN { printf "\\000\\000\\010\\001\\000\\000\\000\\036"
	for (i = 0; i < 30; i++) printf "\\%03o", i % 3 }' >test_lab.esc
write_bytes test.idx idx_images test.csv
write_bytes test_lab.idx cat test_lab.esc
write_bytes far.idx idx_images far.csv
write_bytes far_7.idx idx_labels 20 010 7
write_bytes far_200.idx idx_labels 20 010 200
write_bytes far_m1.idx idx_labels 20 014 -1
write_bytes far_short.idx idx_labels 19 010 1
write_bytes test_7.idx idx_labels 30 010 7
run ./blobs eval --load m.ckpt --data test.idx --labels test_lab.idx --ood far.idx --mc 4 --seed 3
is "$run_status $run_err" "0 " "eval --ood on IDX without --ood-labels"
printf '%s\n' "$run_out" >idx_bare.json
for l in far_7.idx far_200.idx far_m1.idx; do
	run ./blobs eval --load m.ckpt --data test.idx --labels test_lab.idx --ood far.idx \
		--ood-labels "$l" --mc 4 --seed 3
	is "$run_status $run_err" "0 " "eval --ood accepts --ood-labels $l, outside the classes"
	printf '%s\n' "$run_out" >idx_l.json
	is_file idx_bare.json idx_l.json "and prints the same metrics: $l"
done
run ./blobs eval --load m.ckpt --data test.idx --labels test_lab.idx --ood far.idx \
	--ood-labels far_short.idx
is "$run_status:$run_err" "1:./blobs: labels far_short.idx has 19 entries but images far.idx has 20" \
	"an --ood-labels file is still read as the images' labels: its count must match"
# CSV --data, whose target column the driver finds by name, with IDX --ood:
# that choice names no column of the IDX file
run ./blobs eval --load m.ckpt --data test.csv --ood far.idx --mc 4 --seed 3
is "$run_status $run_err" "0 " "eval of CSV data with IDX --ood"
case $run_out in *'"ood_n": 20, '*) st=0 ;; *) st=1 ;; esac
ok $st "with the OOD metrics of its 20 rows: $run_out"
run ./blobs eval --load m.ckpt --data test.csv --target class --ood far.idx
is "$run_status:$run_err" "1:./blobs: far.idx: --target names a CSV column, but this is not a .csv file" \
	"a --target given is still refused for an IDX file"

# ---- commands that use targets still refuse bad labels --------------------
setclass test.csv 7 >bad7.csv
setclass test.csv '' >empty.csv
setclass test.csv nan >nan.csv
# ARGS|MESSAGE rows: a file error (status 1) with that whole stderr
file_rows() {
	while IFS='|' read -r args want; do
		# shellcheck disable=SC2086  # the arguments are split on purpose
		run ./blobs $args </dev/null
		is "$run_status:$run_err" "1:$want" "still refused: $args"
	done
}
file_rows <<'ROWS'
train --data bad7.csv --epochs 1 --save x.ckpt|./blobs: bad7.csv: example 1: label 7 is outside [0, 3)
train --data empty.csv --epochs 1 --save x.ckpt|./blobs: empty.csv:2:38: column 'class': empty field, expected a number
eval --load m.ckpt --data bad7.csv|./blobs: bad7.csv: example 1: label 7 is outside [0, 3)
eval --load m.ckpt --data empty.csv|./blobs: empty.csv:2:38: column 'class': empty field, expected a number
eval --load m.ckpt --data nan.csv|./blobs: nan.csv:2:38: column 'class': 'nan' is not a finite number
eval --load m.ckpt --data bad7.csv --ood far.csv|./blobs: bad7.csv: example 1: label 7 is outside [0, 3)
eval --load m.ckpt --data test.csv --conformal bad7.csv|./blobs: bad7.csv: example 1: label 7 is outside [0, 3)
predict --load m.ckpt --data bad7.csv --conformal bad7.csv|./blobs: bad7.csv: example 1: label 7 is outside [0, 3)
calibrate --load m.ckpt --data bad7.csv --save c.ckpt|./blobs: bad7.csv: example 1: label 7 is outside [0, 3)
eval --load m.ckpt --data test.idx --labels test_7.idx|./blobs: test_7.idx: example 1: label 7 is outside [0, 3)
ROWS

done_testing
