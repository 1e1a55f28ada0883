#!/bin/sh
# driver_checks.sh: the driver's checks of what a user gives it, each with
# its exact message and exit status: numbers out of range, an option the
# run would not read, a misspelt command, one command's --help, --save
# where no file can be created, data files that cannot be opened or do not
# hold what the model needs, CSV columns against the names the
# checkpoint recorded in training, and the target column taken by the
# model's target name without --target (docs/driver.md, docs/data.md).
. "$TAP_SH"

cd "$TAP_TMP" || bail_out "no temporary directory"
. "$top_srcdir/t/blobs_lib.sh"
blobs 120 1 >train.csv
blobs 60 2 >test.csv
build blobs "$top_srcdir/t/models/rt_blobs.bnn" || bail_out "cannot build rt_blobs"

# usage ARGS|MESSAGE rows: a usage error (status 2) whose first line is
# MESSAGE.
usage_rows() {
	while IFS='|' read -r args want; do
		# shellcheck disable=SC2086  # the arguments are split on purpose
		run ./blobs $args </dev/null
		is "$run_status" 2 "a usage error: $args"
		is "$(printf '%s\n' "$run_err" | head -1)" "$want" "and says why: $args"
	done
}

# ---- numbers: out of range, limits printed as integers ------------------
usage_rows <<'ROWS'
train --data train.csv --save x.ckpt --lr 1e400|./blobs: option 'lr': 1e400 is outside [0, 1e+06]
train --data train.csv --save x.ckpt --lr 1e-400|./blobs: option 'lr': 1e-400 is too small for a double (the smallest normal one is 2.2e-308)
train --data train.csv --save x.ckpt --batch 0|./blobs: option 'batch': 0 is outside [1, 1048576]
train --data train.csv --save x.ckpt --set beta1=2|./blobs: option 'beta1': 2 is outside [0, 0.999999]
ROWS
# ---- misspelt commands and options; one command's --help -----------------
usage_rows <<'ROWS'
trian --data train.csv --save x.ckpt|./blobs: unknown command 'trian'; did you mean 'train'?
evl --load m.ckpt|./blobs: unknown command 'evl'; did you mean 'eval'?
frob|./blobs: unknown command 'frob': use train, eval, predict, calibrate, posterior, merge, export, info, laplace, sensitivity or tune
train --dta train.csv --save x.ckpt|./blobs: unknown option '--dta' for 'train'; did you mean '--data'?
eval --load m.ckpt --frobnicate|./blobs: unknown option '--frobnicate' for 'eval'
ROWS
# ---- an empty file name (an unset shell variable): refused up front -----
usage_rows <<'ROWS'
predict --load m.ckpt --data test.csv --out=|./blobs: option '--out' needs a value, not an empty string
train --data train.csv --save=|./blobs: option '--save' needs a value, not an empty string
eval --load= --data test.csv|./blobs: option '--load' needs a value, not an empty string
merge --load a.ckpt --load= --save m.ckpt|./blobs: option '--load' needs a value, not an empty string
ROWS
run ./blobs predict --load nothing.ckpt --data test.csv --out ''
is "$run_status" 2 "--out '' is a usage error"
is "$run_out" "" "found before anything is read"
run ./blobs export --load nothing.ckpt -o ''
is "$run_err" "./blobs: option '-o' needs a value, not an empty string
Try './blobs --help'." "export -o '' too"
run ./blobs eval --help
is "$run_status" 0 "eval --help succeeds"
is "$run_out" "Usage: ./blobs eval    --load CKPT --data FILE [--labels FILE] [--target NAME] [--bins N]
                 [--mc S] [--seed S] [--ood FILE [--ood-labels FILE]] [--plots DIR]
                 [--conformal FILE [--conformal-labels FILE] [--level X]
                 [--conformal-method NAME] [--conformal-adaptive GAMMA
                 [--conformal-online]]] [--laplace-predictive probit|mc]
                 [--ignore-header] [--batch B] [--threads T]
'./blobs --help' describes every command and option." "and prints the usage of eval alone"
run ./blobs info -h
is "$run_out" "Usage: ./blobs info    [--load CKPT]
'./blobs --help' describes every command and option." "-h after a command too"
run ./blobs --help
is "$(printf '%s\n' "$run_out" | grep -cE '^(Usage:)? +\./blobs [a-z]+ ')" 11 "--help alone lists every command's usage"

# ---- --save where no file can be created: refused before training -------
run ./blobs train --data train.csv --epochs 1 --save /proc/x.ckpt
is "$run_status" 1 "--save in /proc is a file error"
is "$run_out" "" "found before training"
if [ "$(id -u)" = 0 ]; then
	is "$run_err" "./blobs: cannot write --save '/proc/x.ckpt': cannot create a file in directory '/proc': No such file or directory" \
		"as root too: the probe file cannot be created"
else
	is "$run_err" "./blobs: cannot write --save '/proc/x.ckpt': directory '/proc': Permission denied" \
		"the directory is not writable"
fi
run ./blobs predict --load nothing.ckpt --data test.csv --out /proc/p.csv
is "$run_status" 1 "--out in /proc too"
mkdir probe && run ./blobs train --data train.csv --epochs 1 --quiet --save probe/m.ckpt
is "$run_status" 0 "a writable directory passes"
is "$(ls probe)" "m.ckpt" "and the probe leaves no file behind"

# ---- delta, which sgd, adam and adamw read only through whvi layers -------
usage_rows <<'ROWS'
train --data train.csv --save x.ckpt --set delta=1e9|./blobs: option 'delta' is not used by optimizer 'adam', only by vogn, ivon, badam and bbb (and by whvi layers, which model 'rt_blobs' has none of): leave it out or choose one of those
train --data train.csv --save x.ckpt --optimizer sgd --set delta=1|./blobs: option 'delta' is not used by optimizer 'sgd', only by vogn, ivon, badam and bbb (and by whvi layers, which model 'rt_blobs' has none of): leave it out or choose one of those
ROWS
cat >whvi.bnn <<'BNN'
model dc_whvi;
input x[4];
h = dense(x, 8) ~ whvi;
logits = dense(tanh(h), 3);
label ~ categorical(logits);
BNN
build whvi whvi.bnn &&
	run ./whvi train --data train.csv --optimizer adam --set delta=2 --epochs 1 --quiet --save w.ckpt
is "$run_status" 0 "delta with adam is read by a model with whvi layers"

# ---- data that cannot be read as the model needs ---------------------------
run ./blobs train --data train.csv --epochs 3 --batch 16 --lr 0.01 --quiet --save m.ckpt
is "$run_status" 0 "a checkpoint for the data checks"

# ---- a checkpoint's name in the JSON line is a JSON string ------------------
run ./blobs train --data train.csv --epochs 1 --quiet --save 'q"u\ote.ckpt'
case $run_out in *', "checkpoint": "q\"u\\ote.ckpt"}') st=0 ;; *) st=1 ;; esac
ok $st "train escapes the quote and the backslash of --save: $run_out"
run ./blobs calibrate --load m.ckpt --data test.csv --save 'c"al.ckpt'
case $run_out in *', "checkpoint": "c\"al.ckpt"}') st=0 ;; *) st=1 ;; esac
ok $st "and so does calibrate: $run_out"

# ---- export --rounded is an output like the others --------------------------
cp m.ckpt keep.ckpt
run ./blobs export --load keep.ckpt --storage bf16 --rounded keep.ckpt -o k.h
is "$run_status:$(printf '%s\n' "$run_err" | head -1)" \
	"2:./blobs: --rounded 'keep.ckpt' is the file given to --load: writing it would destroy that input" \
	"export --rounded over its --load is refused"
ok "$(cmp -s m.ckpt keep.ckpt; echo $?)" "and the trained checkpoint keeps its bytes"
run ./blobs export --load m.ckpt --storage bf16 --rounded k.h -o k.h
is "$run_status:$(printf '%s\n' "$run_err" | head -1)" \
	"2:./blobs: --rounded 'k.h' is the file given to --out: one output would overwrite the other" \
	"--rounded and -o naming one file are refused"
run ./blobs export --load m.ckpt --storage bf16 --rounded nodir/r.ckpt -o k.h
is "$run_status:$run_err" \
	"1:./blobs: cannot write --rounded 'nodir/r.ckpt': directory 'nodir': No such file or directory" \
	"--rounded where no file can be created"
ok "$(test ! -e k.h; echo $?)" "is found before the header is written"

# ---- train --options FILE --save FILE: the options file is an input ----------
printf 'lr=0.01\n' >lr.opts
run ./blobs train --data train.csv --options lr.opts --save lr.opts --epochs 1
is "$run_status:$(printf '%s\n' "$run_err" | head -1)" \
	"2:./blobs: --save 'lr.opts' is the file given to --options: writing it would destroy that input" \
	"--save over the --options file is refused"
is "$(cat lr.opts)" "lr=0.01" "and the options file keeps its text"

# ---- eval --plots: a directory that cannot be, found before the evaluation ---
run ./blobs eval --load m.ckpt --data test.csv --plots train.csv
is "$run_status:$run_out:$run_err" "1::./blobs: cannot write --plots 'train.csv': it is not a directory" \
	"--plots naming a file is refused before the evaluation"
run ./blobs eval --load m.ckpt --data test.csv --plots nodir/plots
is "$run_status:$run_out:$run_err" \
	"1::./blobs: cannot write --plots 'nodir/plots': directory 'nodir': No such file or directory" \
	"--plots in a directory that does not exist too"
run ./blobs eval --load m.ckpt --data test.csv --plots newplots/
is "$run_status:$(ls newplots | tr '\n' ' ')" "0:entropy.csv entropy.svg reliability.csv reliability.svg " \
	"a new directory, named with a slash, is created and drawn into"
cut -d, -f1-4 test.csv >nolabel.csv
tr , ';' <test.csv >semi.csv
printf 'a\tb\tc\td\tclass\n1\t2\t3\t4\t0\n' >tabs.csv
printf 'a,b,c,d,class\n1,2,3,4,0\n' >one.csv
# file error rows: ARGS|MESSAGE (status 1, the whole of stderr)
file_rows() {
	while IFS='|' read -r args want; do
		# shellcheck disable=SC2086  # the arguments are split on purpose
		run ./blobs $args </dev/null
		is "$run_status" 1 "a file error: $args"
		is "$run_err" "$want" "and says why: $args"
	done
}
printf '\0\0\10\2\0\0\0\2\0\0\0\4\1\2\3\4\5\6\7\10' >two.idx # u8, 2 x 4
cp train.csv train.txt
file_rows <<'ROWS'
eval --load m.ckpt --data nonexist.idx|./blobs: nonexist.idx: cannot open: No such file or directory
eval --load m.ckpt --data nolabel.csv|./blobs: nolabel.csv: no target column 'label': the file has 4 columns, as many as the model's features, and none left for the target (the last column, or the one --target names)
eval --load m.ckpt --data nolabel.csv --ignore-header|./blobs: nolabel.csv: no target column 'label': the file has 4 columns, as many as the model's features, and none left for the target (the last column, or the one --target names)
train --data nolabel.csv --save x.ckpt|./blobs: nolabel.csv: no target column 'label': the file has 4 columns, as many as the model's features, and none left for the target (the last column, or the one --target names)
eval --load m.ckpt --data semi.csv --ignore-header|./blobs: semi.csv:1: 1 column: too few for 1 target column and at least one feature (the header holds ';': the fields of a CSV file are separated by commas)
predict --load m.ckpt --data tabs.csv|./blobs: tabs.csv:1: 1 column: too few for 1 target column and at least one feature (the header holds tabs: the fields of a CSV file are separated by commas)
train --data train.txt --save x.ckpt|./blobs: train.txt: a file whose name does not end in .csv is read as IDX, and this one holds comma-separated text: name a CSV file *.csv
eval --load m.ckpt --data train.txt --labels two.idx|./blobs: train.txt: a file whose name does not end in .csv is read as IDX, and this one holds comma-separated text: name a CSV file *.csv
train --data train.csv --valid two.idx --save x.ckpt|./blobs: two.idx: IDX data needs its labels: give --valid-labels FILE
eval --load m.ckpt --data test.csv --conformal two.idx|./blobs: two.idx: IDX data needs its labels: give --conformal-labels FILE
train --data train.csv --valid test.csv --valid-labels two.idx --save x.ckpt|./blobs: test.csv: --valid-labels goes with IDX data; a CSV file holds its own targets (choose the column with --target)
eval --load m.ckpt --data test.csv --conformal test.csv --conformal-labels two.idx|./blobs: test.csv: --conformal-labels goes with IDX data; a CSV file holds its own targets (choose the column with --target)
eval --load m.ckpt --data test.csv --labels two.idx|./blobs: test.csv: --labels goes with IDX data; a CSV file holds its own targets (choose the column with --target)
ROWS
run ./blobs predict --load m.ckpt --data nolabel.csv
is "$run_status" 0 "predict reads a file without the target column"
# IDX through a pipe: the check for CSV text under another name reads
# regular files only, so the pipe reaches the IDX reader whole
./blobs predict --load m.ckpt --data /dev/stdin --mc 0 <two.idx >pipe.out 2>pipe.err
is "$?:$(wc -l <pipe.out):$(cat pipe.err)" "0:3:" "IDX data from a pipe is read whole"
run ./blobs eval --load m.ckpt --data semi.csv
is "$run_status $run_err" "1 ./blobs: semi.csv:1: 1 column: too few for 1 target column and at least one feature (the header holds ';': the fields of a CSV file are separated by commas)" \
	"the separator's hint with the recorded names too"
run ./blobs info --load m.ckpt
case $run_out in *"optimizer adam, 3 epochs, 24 steps"*) st=0 ;; *) st=1 ;; esac
ok $st "info counts epochs and steps"
run ./blobs train --data one.csv --epochs 1 --quiet --save one.ckpt
run ./blobs info --load one.ckpt
case $run_out in *"optimizer adam, 1 epoch, 1 step"*) st=0 ;; *) st=1 ;; esac
ok $st "in the singular for one: $run_out"

# ---- the training file's column names, recorded in the checkpoint -------
run ./blobs info --load m.ckpt
is "$(printf '%s\n' "$run_out" | tail -1)" "columns a, b, c, d (target class)" "info shows the recorded names"
awk -F, 'BEGIN { OFS = "," } { print $4, $3, $2, $1, $5 }' test.csv >reordered.csv
awk -F, 'BEGIN { OFS = "," } { print $5, $1, $2, $3, $4 }' test.csv >classfirst.csv
sed '1s/.*/p,q,r,s,class/' test.csv >renamed.csv
file_rows <<'ROWS'
eval --load m.ckpt --data reordered.csv|./blobs: reordered.csv:1:1: column 1 is 'd' where 'a' is expected (the feature columns, in order: a, b, c, d): m.ckpt was trained on these columns: put them in this order, or give --ignore-header to take them by position
predict --load m.ckpt --data renamed.csv|./blobs: renamed.csv:1:1: column 1 is 'p' where 'a' is expected (the feature columns, in order: a, b, c, d): m.ckpt was trained on these columns: put them in this order, or give --ignore-header to take them by position
eval --load m.ckpt --data test.csv --ood reordered.csv|./blobs: reordered.csv:1:1: column 1 is 'd' where 'a' is expected (the feature columns, in order: a, b, c, d): m.ckpt was trained on these columns: put them in this order, or give --ignore-header to take them by position
calibrate --load m.ckpt --data reordered.csv --save c.ckpt|./blobs: reordered.csv:1:1: column 1 is 'd' where 'a' is expected (the feature columns, in order: a, b, c, d): m.ckpt was trained on these columns: put them in this order, or give --ignore-header to take them by position
train --data train.csv --valid reordered.csv --epochs 1 --save v.ckpt|./blobs: reordered.csv:1:1: column 1 is 'd' where 'a' is expected (the feature columns, in order: a, b, c, d): the training data --data has these columns: put them in this order, or give --ignore-header to take them by position
ROWS
run ./blobs eval --load m.ckpt --data test.csv
want=$run_out
is "$run_status" 0 "eval in the training order"
run ./blobs eval --load m.ckpt --data classfirst.csv
is "$run_status $run_out" "0 $want" "the target found by its recorded name wherever it stands"
run ./blobs eval --load m.ckpt --data reordered.csv --ignore-header
is "$run_status" 0 "--ignore-header takes the columns by position"
run ./blobs eval --load m.ckpt --data classfirst.csv --ignore-header
is "$run_status" 1 "and the last column for the target"
cp m.ckpt old.ckpt
run ./blobs calibrate --load m.ckpt --data test.csv --save cal.ckpt
run ./blobs info --load cal.ckpt
is "$(printf '%s\n' "$run_out" | tail -1)" "columns a, b, c, d (target class)" "a calibrated checkpoint keeps the names"
# export says what the standalone header leaves out: a temperature, a
# post-hoc posterior (the header is still written); nothing for a plain one
run ./blobs export --load cal.ckpt --out cal.h
T=$(./blobs info --load cal.ckpt | sed -n 's/.*temperature \([^ ,]*\).*/\1/p')
is "$run_status $run_err" "0 ./blobs: note: cal.ckpt holds a temperature (T = $T), which the header leaves out: the standalone inference computes the softmax of the raw logits" \
	"export of a calibrated checkpoint notes the temperature it leaves out"
ok "$(test -s cal.h; echo $?)" "and writes the header"
./blobs train --data train.csv --quiet --epochs 3 --set swag=2 --save sw.ckpt >/dev/null
run ./blobs export --load sw.ckpt --out sw.h
is "$run_status $run_err" "0 ./blobs: note: sw.ckpt holds a SWAG posterior, which the header leaves out: the standalone inference runs its mean network" \
	"export of a SWAG checkpoint notes the posterior it leaves out"
./blobs laplace --load m.ckpt --data train.csv --save lap.ckpt >/dev/null
run ./blobs export --load lap.ckpt --out lap.h
is "$run_status $run_err" "0 ./blobs: note: lap.ckpt holds a Laplace posterior, which the header leaves out: the standalone inference runs its mean network" \
	"and of a Laplace checkpoint"
run ./blobs export --load m.ckpt --out m.h
is "$run_status $run_err" "0 " "export of a trained network says nothing"
# A checkpoint without the names (written before they were recorded):
# t/data/rt_blobs_v1.ckpt reads any file by position, as before.
run ./blobs eval --load "$top_srcdir/t/data/rt_blobs_v1.ckpt" --data reordered.csv
is "$run_status" 0 "an old checkpoint reads a reordered file as before"

# A regression trained with --target on a file whose target comes first:
# later files of the same layout need no --target (the recorded one).
cat >yreg.bnn <<'BNN'
model dc_yreg;
input x[2];
h = tanh(dense(x, 8));
mu = dense(h, 1);
y ~ gaussian(mu, sigma = learned);
BNN
awk 'BEGIN { s = 3; print "y,x1,x2"
	for (i = 0; i < 120; i++) {
		s = (s * 1103515245 + 12345) % 2147483648; a = s / 2147483648 - 0.5
		s = (s * 1103515245 + 12345) % 2147483648; b = s / 2147483648 - 0.5
		printf "%.6f,%.6f,%.6f\n", 3 * a - b, a, b } }' >yfirst.csv
cut -d, -f2,3 yfirst.csv >xonly.csv
build yreg yreg.bnn && ./yreg train --data yfirst.csv --target y --epochs 3 --quiet --save y.ckpt >/dev/null
ok $? "a regression trains with --target y"
run ./yreg eval --load y.ckpt --data yfirst.csv --target y
want=$run_out
run ./yreg eval --load y.ckpt --data yfirst.csv
is "$run_status $run_out" "0 $want" "eval without --target scores the recorded target y"
run ./yreg eval --load y.ckpt --data yfirst.csv --ignore-header
test "$run_status" = 0 && test "$run_out" != "$want"
ok $? "--ignore-header scores the last column, x2, as the target: other metrics"
run ./yreg predict --load y.ckpt --data xonly.csv
is "$run_status $(printf '%s\n' "$run_out" | wc -l)" "0 121" "predict reads the features without the target"
# An epoch whose validation NLL is not finite says so ("nan", not a
# missing field), before the run stops for the next step's loss.
cat >pnet.bnn <<'BNN'
model dc_pnet;
input x[4];
h = relu(dense(x, 32));
logits = dense(h, 3);
y ~ categorical(logits);
BNN
awk 'BEGIN { s = 7; print "a,b,c,d,y"
	for (i = 0; i < 600; i++) {
		for (j = 0; j < 4; j++) { s = (s * 1103515245 + 12345) % 2147483648; x[j] = 4 * s / 2147483648 - 2 }
		printf "%.5f,%.5f,%.5f,%.5f,%d\n", x[0], x[1], x[2], x[3], (x[0] + x[1] > 0) + (x[2] > 0.5) } }' >p4.csv
build pnet pnet.bnn
run ./pnet train --data p4.csv --optimizer sgd --lr 1e6 --epochs 5 --set valid_fraction=0.2 --save pd.ckpt
case $(printf '%s\n' "$run_err" | grep '^epoch 1/5') in
*'  valid nll nan  valid accuracy '*) st=0 ;;
*) st=1 ;;
esac
ok $st "a validation NLL that is not finite is printed as nan: $run_err"
run ./yreg eval --load y.ckpt --data yfirst.csv --bins 5
is "$run_status $(printf '%s\n' "$run_err" | head -1)" \
	"2 ./yreg: --bins sets the bins of ECE and MCE, which model 'dc_yreg' (a regression) does not have" \
	"eval --bins of a regression is a usage error, not ignored"

# Without --target, train takes the column named as the model's target (y
# of `y ~ gaussian(...)`) wherever it stands: the run of --target y, to the
# byte.  A file without such a column, or --ignore-header, takes the last.
./yreg train --data yfirst.csv --epochs 3 --quiet --save ynamed.ckpt >/dev/null
ok $? "the regression trains on yfirst.csv without --target"
cmp -s y.ckpt ynamed.ckpt
ok $? "taking its first column y, the model's target, as --target y does"
./yreg info --load ynamed.ckpt >info.txt
is "$(sed -n 's/^columns //p' info.txt)" "x1, x2 (target y)" "info names y the target"
sed '1s/^y,/t,/' yfirst.csv >tfirst.csv
./yreg train --data tfirst.csv --epochs 3 --quiet --save tlast.ckpt >/dev/null &&
	./yreg info --load tlast.ckpt >info.txt
is "$(sed -n 's/^columns //p' info.txt)" "t, x1 (target x2)" \
	"without a column named y the last column is the target, as before"
./yreg train --data yfirst.csv --epochs 3 --quiet --ignore-header --save ylast.ckpt >/dev/null &&
	./yreg info --load ylast.ckpt >info.txt
is "$(sed -n 's/^columns //p' info.txt)" "y, x1 (target x2)" \
	"--ignore-header takes the last column"

done_testing
