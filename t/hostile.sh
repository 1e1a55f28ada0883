#!/bin/sh
# hostile.sh: the numbers a user will eventually feed a generated program
# (issue 20, "Numerical hostility"), each with its exact message or result:
#   - features of 1e30, the largest float (3.4028235e38, its shortest
#     decimal, which must read as FLT_MAX) and beyond it, in CSV and IDX;
#   - subnormal ("denormal") features, in CSV and IDX;
#   - a constant column, a column of subnormals and a single row with
#     --standardize (std 1: the column is only centred, docs/data.md);
#   - a single-row data set, a batch larger than the data set;
#   - labels out of range or not integers (CSV, IDX u8 and i32, IDX f32);
#   - a constant regression target;
#   - a learning rate of 1e6 (divergence detected, the previous checkpoint
#     kept; a classifier's loss grows but stays finite);
#   - data files of 0 rows (CSV header only, empty CSV, IDX sizes of 0);
#   - NaN and infinities in features and targets (CSV, IDX f32 and f64).
# The programs are t/models/rt_blobs.bnn (4 inputs, tanh, 3 classes) and
# t/models/rt_other.bnn (4 inputs, relu, 2 Gaussian targets with a learned
# sigma), built as t/driver.sh builds them.  Values are compared as the
# bytes the programs print (export's C99 hex floats, predict's CSV).
. "$TAP_SH"

cd "$TAP_TMP" || bail_out "no temporary directory"

for m in rt_blobs rt_other; do
	# shellcheck disable=SC2086
	"$BNNC" --main -o $m.c "$top_srcdir/t/models/$m.bnn" && $CC $BNN_CFLAGS -o $m $m.c $BNN_LIBS ||
		bail_out "cannot build $m"
done

# ---- data ---------------------------------------------------------------------
# 30 rows of the blobs of t/driver.sh (class i % 3) and 40 rows of a
# 2-target regression (y1 = a + b, y2 = c - d), from a fixed generator.
. "$top_srcdir/t/blobs_lib.sh"
blobs 30 1 >train.csv
awk 'BEGIN { s = 7; print "a,b,c,d,y1,y2"
	for (i = 0; i < 40; i++) {
		for (j = 1; j <= 4; j++) { s = (s * 1103515245 + 12345) % 2147483648; x[j] = s / 2147483648 - 0.5 }
		printf "%.6f,%.6f,%.6f,%.6f,%.6f,%.6f\n", x[1], x[2], x[3], x[4], x[1] + x[2], x[3] - x[4]
	} }' >reg.csv

# setcol FILE COL ODD EVEN: FILE with column COL (1-based) set to ODD on
# the odd data rows and EVEN on the even ones.
setcol() {
	awk -F, -v OFS=, -v c="$2" -v odd="$3" -v even="$4" \
		'NR == 1 { print; next } { $c = (NR % 2 == 0) ? odd : even; print }' "$1"
}

# bytes HH...: the bytes given in hex (POSIX printf has octal escapes only).
bytes() {
	for h; do
		# shellcheck disable=SC2059  # the format is the escape
		printf "\\$(printf '%03o' $((0x$h)))"
	done
}

# idx_f32 N BYTES...: an IDX file of N examples of 4 f32 features.
idx_f32() {
	n=$1
	shift
	bytes 00 00 0d 02 00 00 00 "$(printf '%02x' "$n")" 00 00 00 04 "$@"
}
ONE='3f 80 00 00'
# shellcheck disable=SC2086  # ONE is four words
ROW1="$ONE $ONE $ONE $ONE"

# stdvals MODEL CKPT WHICH: the standardisation's WHICH (mean or std) as
# export writes it, one C99 hex float per feature.
stdvals() {
	./"$1" export --load "$2" -o "$2.h" &&
		sed -n "/${1}_w_standardize_$3\\[/{n;s/^[[:space:]]*//;p;}" "$2.h"
}

# ---- features of 1e30 and the largest float ---------------------------------------
# 2^100 and 3 * 2^100, exact in decimal and in float: the mean 2^101 and the
# population std 2^100 are exact too.
setcol train.csv 1 1267650600228229401496703205376 3802951800684688204490109616128 >big.csv
run ./rt_blobs train --data big.csv --epochs 3 --batch 8 --save big.ckpt --quiet
is "$run_status" 0 "features of 1e30: a tanh classifier trains (tanh saturates, its gradient is 0)"
run ./rt_blobs train --data big.csv --epochs 3 --batch 8 --save bigs.ckpt --quiet --standardize
is "$run_status" 0 "and trains with --standardize"
is "$(stdvals rt_blobs bigs.ckpt mean | cut -d, -f1)" "0x1p+101f" "whose mean of 2^100 and 3*2^100 is 2^101 exactly"
is "$(stdvals rt_blobs bigs.ckpt std | cut -d, -f1)" "0x1p+100f" "and std 2^100 exactly"

awk -F, -v OFS=, 'NR > 1 { $1 = $1 * 1e30 } { print }' reg.csv >regbig.csv
cp reg.csv keep.ckpt # any bytes: they must survive
cp keep.ckpt rb.ckpt
run ./rt_other train --data regbig.csv --epochs 3 --batch 8 --save rb.ckpt --quiet
is "$run_status" 1 "features of 1e30 without --standardize: a relu regression diverges"
is "$run_err" "./rt_other: training diverged in epoch 1 at step 2: the loss is not finite (try a smaller learning rate, or --set clip=1)
./rt_other: rb.ckpt was not written: no epoch completed" "and says so, with the checkpoint not written"
cmp -s rb.ckpt keep.ckpt
ok $? "the file at --save is untouched"
run ./rt_other train --data regbig.csv --epochs 3 --batch 8 --save rbs.ckpt --quiet --standardize
is "$run_status" 0 "with --standardize the same data trains"

# The largest float in its shortest decimal (what NumPy prints) is FLT_MAX.
setcol train.csv 1 3.4028235e38 -3.4028235E+38 >fmax.csv
run ./rt_blobs train --data fmax.csv --epochs 1 --save fmax.ckpt --quiet --standardize
is "$run_status" 0 "3.4028235e38 and -3.4028235E+38 read as +-FLT_MAX"
is "$(stdvals rt_blobs fmax.ckpt mean | cut -d, -f1),$(stdvals rt_blobs fmax.ckpt std | cut -d, -f1)" \
	"0x0p+0f,0x1.fffffep+127f" "mean 0 and std FLT_MAX: the statistics do not overflow"
run ./rt_blobs predict --data fmax.csv --load big.ckpt
is "$run_status" 0 "predict takes features of FLT_MAX"
setcol train.csv 1 3.40282357e38 0 >over.csv
run ./rt_blobs train --data over.csv --save x.ckpt --quiet
is "$run_err" "./rt_blobs: over.csv:2:1: column 'a': '3.40282357e38' is too large for a float" \
	"3.40282357e38 (rounds to infinity) is too large, with its place"
is "$run_status" 1 "exit status 1"
# f64 IDX: the largest double below the midpoint of FLT_MAX and 2^128 is
# FLT_MAX; the midpoint rounds to infinity.
bytes 00 00 0e 02 00 00 00 01 00 00 00 04 47 ef ff ff ef ff ff ff \
	3f f0 00 00 00 00 00 00 3f f0 00 00 00 00 00 00 3f f0 00 00 00 00 00 00 >below.idx
bytes 00 00 0e 02 00 00 00 01 00 00 00 04 c7 ef ff ff f0 00 00 00 \
	3f f0 00 00 00 00 00 00 3f f0 00 00 00 00 00 00 3f f0 00 00 00 00 00 00 >mid.idx
printf 'a,b,c,d\n3.4028235e38,1,1,1\n' >below.csv
run ./rt_blobs predict --data below.idx --load big.ckpt
cp "$run_out_file" below_idx.out
run ./rt_blobs predict --data below.csv --load big.ckpt
cmp -s below_idx.out "$run_out_file"
ok $? "an f64 IDX element just below the midpoint predicts as FLT_MAX in CSV"
run ./rt_blobs predict --data mid.idx --load big.ckpt
is "$run_err" "./rt_blobs: mid.idx: element 0 (0-based, at offset 12) is NaN, infinite or too large for a float" \
	"an f64 element at the midpoint (-(FLT_MAX + 2^103)) is refused"

# ---- subnormal features -------------------------------------------------------
# 7.175e-43 is 2^-140 and 2.1524e-42 is 3 * 2^-140 as floats (subnormal):
# added to the other terms of a dense layer they change nothing, so the
# predictions equal those with 0 in that column, byte for byte.
setcol train.csv 2 7.175e-43 2.1524e-42 >den.csv
setcol train.csv 2 0 0 >zero_b.csv
run ./rt_blobs train --data den.csv --epochs 3 --batch 8 --save den.ckpt --quiet
is "$run_status" 0 "subnormal features train"
./rt_blobs predict --data den.csv --load den.ckpt >den.out &&
	./rt_blobs predict --data zero_b.csv --load den.ckpt >zero_b.out
cmp -s den.out zero_b.out
ok $? "and predict as 0 would"
run ./rt_blobs train --data den.csv --epochs 1 --save dens.ckpt --quiet --standardize
is "$(stdvals rt_blobs dens.ckpt mean | cut -d, -f2),$(stdvals rt_blobs dens.ckpt std | cut -d, -f2)" \
	" 0x1p-139f, 0x1p+0f" "--standardize: a column of subnormals is centred (mean 2^-139), its std set to 1"
# IDX f32: the smallest subnormal, 2^-149, in feature 2 of one example
# shellcheck disable=SC2086
idx_f32 1 $ONE 00 00 00 01 $ONE $ONE >den.idx
# shellcheck disable=SC2086
idx_f32 1 $ONE 00 00 00 00 $ONE $ONE >zero.idx
./rt_blobs predict --data den.idx --load den.ckpt >den_idx.out &&
	./rt_blobs predict --data zero.idx --load den.ckpt >zero_idx.out
ok $? "an f32 IDX file of subnormals is read"
cmp -s den_idx.out zero_idx.out
ok $? "and predicts as 0 would"

# ---- constant columns, one row -------------------------------------------------------
setcol train.csv 3 5 5 >const.csv
run ./rt_blobs train --data const.csv --epochs 3 --batch 8 --save const.ckpt --quiet --standardize
is "$run_status" 0 "a constant column with --standardize trains"
is "$(stdvals rt_blobs const.ckpt mean | cut -d, -f3),$(stdvals rt_blobs const.ckpt std | cut -d, -f3)" \
	" 0x1.4p+2f, 0x1p+0f" "its mean is the constant 5, its std 1 (centred, not divided by 0)"

head -2 train.csv >one.csv
run ./rt_blobs train --data one.csv --epochs 3 --save one.ckpt --quiet
case $run_out in '{"epochs": 3, "train_loss": '*) st=0 ;; *) st=1 ;; esac
ok $st "a single-row data set trains: $run_out"
run ./rt_blobs info --load one.ckpt
case $run_out in *"checkpoint one.ckpt: optimizer adam, 3 epochs, 3 steps"*) st=0 ;; *) st=1 ;; esac
ok $st "one step per epoch"
run ./rt_blobs train --data one.csv --epochs 3 --save ones.ckpt --quiet --standardize
is "$run_status" 0 "and with --standardize"
is "$(stdvals rt_blobs ones.ckpt std)" "0x1p+0f, 0x1p+0f, 0x1p+0f, 0x1p+0f" "every column of one row has std 1"
run ./rt_blobs train --data one.csv --save x.ckpt --set valid_fraction=0.5
is "$run_err" "./rt_blobs: valid_fraction 0.5 of 1 examples leaves no validation examples" \
	"a validation fraction of one row is refused"
run ./rt_blobs eval --data one.csv --load one.ckpt
case $run_out in '{"n": 1, "mc": 0, "accuracy": 1, '*'"auroc": null, '*) st=0 ;; *) st=1 ;; esac
ok $st "eval of one row: AUROC undefined (null): $run_out"

# ---- a batch larger than the data set -------------------------------------------
run ./rt_blobs train --data train.csv --epochs 2 --batch 30 --save b30.ckpt --quiet
run ./rt_blobs train --data train.csv --epochs 2 --batch 1000 --save b1000.ckpt --quiet
is "$run_status" 0 "a batch of 1000 on 30 examples trains"
run ./rt_blobs info --load b1000.ckpt
case $run_out in *"checkpoint b1000.ckpt: optimizer adam, 2 epochs, 2 steps"*) st=0 ;; *) st=1 ;; esac
ok $st "in one step per epoch"
./rt_blobs predict --data train.csv --load b30.ckpt >b30.out &&
	./rt_blobs predict --data train.csv --load b1000.ckpt --batch 1000 >b1000.out
cmp -s b30.out b1000.out
ok $? "to the same parameters as a batch of the whole set"

# ---- labels ----------------------------------------------------------------------------
for c in '3|lab3.csv: example 2: label 3 is outside [0, 3)' \
	'1.5|lab1.5.csv: example 2: label 1.5 is not an integer' \
	'-1|lab-1.csv: example 2: label -1 is outside [0, 3)' \
	'1e-45|lab1e-45.csv: example 2: label 1.4013e-45 is not an integer' \
	'1e9|lab1e9.csv: example 2: label 1e+09 is outside [0, 3)'; do
	v=${c%%|*}
	printf 'a,b,c,d,class\n1,2,3,4,0\n1,2,3,4,%s\n' "$v" >"lab$v.csv"
	run ./rt_blobs train --data "lab$v.csv" --save x.ckpt --quiet
	is "$run_status:$run_err" "1:./rt_blobs: ${c#*|}" "label $v is refused"
done
run ./rt_blobs eval --data lab3.csv --load one.ckpt
is "$run_err" "./rt_blobs: lab3.csv: example 2: label 3 is outside [0, 3)" "by eval too"
# shellcheck disable=SC2086
idx_f32 2 $ROW1 $ROW1 >two.idx
bytes 00 00 08 01 00 00 00 02 00 03 >lab3.idx
bytes 00 00 0c 01 00 00 00 02 00 00 00 00 ff ff ff ff >labm1.idx
bytes 00 00 0d 01 00 00 00 02 00 00 00 00 3f c0 00 00 >labf32.idx
run ./rt_blobs train --data two.idx --labels lab3.idx --save x.ckpt --quiet
is "$run_err" "./rt_blobs: lab3.idx: example 2: label 3 is outside [0, 3)" "an IDX u8 label out of range"
run ./rt_blobs train --data two.idx --labels labm1.idx --save x.ckpt --quiet
is "$run_err" "./rt_blobs: labm1.idx: example 2: label -1 is outside [0, 3)" "an IDX i32 label of -1"
run ./rt_blobs train --data two.idx --labels labf32.idx --save x.ckpt --quiet
is "$run_err" "./rt_blobs: labels labf32.idx has type f32; labels must have an integer type (u8, i8, i16 or i32)" \
	"IDX labels of type f32 (1.5)"

# ---- a constant regression target ----------------------------------------------
# The learned sigma shrinks as the mean fits; the loss goes below 0 and
# stays finite.
setcol reg.csv 5 3.5 3.5 | setcol /dev/stdin 6 -1 -1 >regconst.csv
run ./rt_other train --data regconst.csv --epochs 300 --batch 8 --lr 0.01 --save rc.ckpt --quiet
is "$run_status" 0 "a constant regression target trains"
run ./rt_other predict --data regconst.csv --load rc.ckpt
is "$(printf '%s\n' "$run_out" | awk -F, 'NR > 1 { printf "%.2f %.2f %s\n", $1, $5, ($2 < 0.01 && $6 < 0.01) }' | sort -u)" \
	"3.50 -1.00 1" "to the constants 3.5 and -1, with a variance below 0.01"

# ---- a learning rate of 1e6 ------------------------------------------------------------
run ./rt_other train --data reg.csv --epochs 3 --batch 8 --save lr.ckpt --quiet
cp lr.ckpt lr_keep.ckpt
run ./rt_other train --data reg.csv --epochs 3 --batch 8 --lr 1e6 --save lr.ckpt --quiet
is "$run_status:$run_err" "1:./rt_other: training diverged in epoch 1 at step 2: the loss is not finite (try a smaller learning rate, or --set clip=1)
./rt_other: lr.ckpt was not written: no epoch completed" "lr 1e6: the divergence is detected at the second step"
cmp -s lr.ckpt lr_keep.ckpt
ok $? "and the previous checkpoint is kept, byte for byte"
run ./rt_other train --data reg.csv --epochs 3 --batch 8 --lr 1e6 --optimizer sgd --save lr.ckpt --quiet
is "$run_status" 1 "with sgd too"
cmp -s lr.ckpt lr_keep.ckpt
ok $? "the checkpoint still kept"
# Softmax cross-entropy of finite logits is finite: a classifier's weights
# blow up to huge but finite values, which is no divergence by the
# definition of docs/training.md (a loss or parameter not finite).
run ./rt_blobs train --data train.csv --epochs 3 --batch 8 --lr 1e6 --save lrc.ckpt --quiet
is "$run_status" 0 "lr 1e6 on a tanh classifier: the loss stays finite, no divergence"
run ./rt_blobs eval --data train.csv --load lrc.ckpt
is "$run_status" 0 "and its checkpoint evaluates"

# ---- data files of 0 rows -----------------------------------------------------------
printf 'a,b,c,d,class\n' >rows0.csv
printf 'a,b,c,d,class\n\n\n' >rows0_blank.csv
: >empty.csv
for cmd in 'train --save x.ckpt' 'eval --load one.ckpt' 'predict --load one.ckpt'; do
	# shellcheck disable=SC2086  # the command and its option
	run ./rt_blobs $cmd --data rows0.csv
	is "$run_status:$run_err" "1:./rt_blobs: rows0.csv: no examples: the file has a header row but no data rows" \
		"${cmd%% *}: a CSV file of a header only"
done
run ./rt_blobs train --data rows0_blank.csv --save x.ckpt --quiet
is "$run_err" "./rt_blobs: rows0_blank.csv: no examples: the file has a header row but no data rows" \
	"a header and empty lines"
run ./rt_blobs eval --data empty.csv --load one.ckpt
is "$run_err" "./rt_blobs: empty.csv: empty file (expected a header row of column names)" "an empty CSV file"
bytes 00 00 0d 02 00 00 00 00 00 00 00 04 >rows0.idx
bytes 00 00 08 01 00 00 00 00 >rows0_lab.idx
bytes 00 00 08 01 00 00 00 01 00 >one_lab.idx
run ./rt_blobs train --data rows0.idx --labels one_lab.idx --save x.ckpt --quiet
is "$run_err" "./rt_blobs: rows0.idx: dimension 1 has size 0 (offset 4)" "an IDX file of 0 images"
run ./rt_blobs train --data two.idx --labels rows0_lab.idx --save x.ckpt --quiet
is "$run_err" "./rt_blobs: rows0_lab.idx: dimension 1 has size 0 (offset 4)" "an IDX file of 0 labels"
ok "$(test ! -e x.ckpt; echo $?)" "no checkpoint was written from any refused data"

# ---- NaN and infinities --------------------------------------------------------------
for c in 'b|nan|2:3' 'c|-NaN|2:5' 'a|inf|2:1' 'd|-Infinity|2:7' 'class|nan(0x1)|2:9'; do
	col=${c%%|*}
	v=${c#*|}
	v=${v%|*}
	printf 'a,b,c,d,class\n' >nf.csv
	printf '1,1,1,1,0\n' | awk -F, -v OFS=, -v c="$col" -v v="$v" \
		'{ split("a b c d class", n, " "); for (i = 1; i <= 5; i++) if (n[i] == c) $i = v; print }' >>nf.csv
	run ./rt_blobs train --data nf.csv --save x.ckpt --quiet
	is "$run_err" "./rt_blobs: nf.csv:${c##*|}: column '$col': '$v' is not a finite number" "$v in column $col"
done
printf 'a,b,c,d,y1,y2\n1,2,3,4,0,0\n1,2,3,4,0,INF\n' >tinf.csv
run ./rt_other train --data tinf.csv --save x.ckpt --quiet
is "$run_err" "./rt_other: tinf.csv:3:11: column 'y2': 'INF' is not a finite number" "an infinite regression target"
printf 'a,b,c,d,y1,y2\n1,2,3,4,1e39,0\n' >tbig.csv
run ./rt_other eval --data tbig.csv --load rbs.ckpt
is "$run_err" "./rt_other: tbig.csv:2:9: column 'y1': '1e39' is too large for a float" \
	"a regression target beyond the float range"
# shellcheck disable=SC2086
idx_f32 2 $ROW1 $ONE 7f c0 00 00 $ONE $ONE >nan.idx
# shellcheck disable=SC2086
idx_f32 2 $ROW1 $ONE $ONE $ONE ff 80 00 00 >ninf.idx
bytes 00 00 08 01 00 00 00 02 00 01 >lab.idx
run ./rt_blobs train --data nan.idx --labels lab.idx --save x.ckpt --quiet
is "$run_err" "./rt_blobs: nan.idx: element 5 (0-based, at offset 32) is NaN, infinite or too large for a float" \
	"a NaN in an f32 IDX file"
run ./rt_blobs predict --data ninf.idx --load one.ckpt
is "$run_err" "./rt_blobs: ninf.idx: element 7 (0-based, at offset 40) is NaN, infinite or too large for a float" \
	"-inf in an f32 IDX file"
ok "$(test ! -e x.ckpt; echo $?)" "no checkpoint was written from any refused data"

done_testing
