#!/bin/sh
# sequence.sh: integer inputs end to end: models of 8 ids embedded and
# positionally encoded (t/models/sq_point.bnn, t/models/sq_mf.bnn), trained
# by their generated programs on generated IDX files of u8 ids (kept as
# integers, not scaled as images are) and CSV files of 8 id columns, to
# tell whether id 3 occurs in the sequence; and the same task through
# transpose, conv1d over time and a per_step dense layer
# (t/models/sq_steps.bnn, with dropout on the embedding and the per_step
# layer, and t/models/sq_steps_mf.bnn, meanfield), and through a gru with
# variational dropout (t/models/sq_grudrop.bnn, Adam).
# Checks: Adam (on IDX and on CSV), IVON, VOGN and BBB each reach a held-out
# accuracy above 0.9 (chance: 0.5; seeds fixed), on both architectures;
# MC prediction of the dropout model redraws its masks per sample; an id outside the
# vocabulary and one that is not an integer are refused at load time with
# the file and the line and column (CSV) or the example and value (IDX);
# --standardize is refused for ids, and bnnc --standalone writes transpose,
# per_step dense layers and dropout on gru and embedding, which its
# analytic pass refuses.
#
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"
# build and accuracy_above
. "$top_srcdir/t/blobs_lib.sh"

cd "$TAP_TMP" || bail_out "no temporary directory"

# sequences N SEED FORMAT: N sequences of 8 ids in [0, 6), class i % 2: id 3
# occurs once or twice (class 1) or never (class 0).  FORMAT idx: the
# octal escapes of an IDX file of unsigned bytes (n x 8); lab: of its
# labels; csv: a header and rows of 8 ids and the label.
sequences() {
	awk -v n="$1" -v seed="$2" -v fmt="$3" '
	function rnd() { s = (s * 1103515245 + 12345) % 2147483648; return s / 2147483648 }
	function be32(v) { return sprintf("\\%03o\\%03o\\%03o\\%03o", int(v / 16777216) % 256, int(v / 65536) % 256, int(v / 256) % 256, v % 256) }
	BEGIN { s = seed
		if (fmt == "idx") printf "\\000\\000\\010\\002%s%s", be32(n), be32(8)
		if (fmt == "lab") printf "\\000\\000\\010\\001%s", be32(n)
		if (fmt == "csv") { for (j = 0; j < 8; j++) printf "t%d,", j; print "label" }
		for (i = 0; i < n; i++) {
			k = i % 2
			for (t = 0; t < 8; t++) { v = int(rnd() * 5); x[t] = v >= 3 ? v + 1 : v }
			if (k == 1) { x[int(rnd() * 8)] = 3; if (rnd() < 0.3) x[int(rnd() * 8)] = 3 }
			if (fmt == "idx") for (t = 0; t < 8; t++) printf "\\%03o", x[t]
			if (fmt == "lab") printf "\\%03o", k
			if (fmt == "csv") { for (t = 0; t < 8; t++) printf "%d,", x[t]; print k }
		} }'
}

write_bytes train.idx sequences 400 1 idx
write_bytes train-lab.idx sequences 400 1 lab
write_bytes test.idx sequences 200 2 idx
write_bytes test-lab.idx sequences 200 2 lab
sequences 400 1 csv >train.csv
sequences 200 2 csv >test.csv

# ---- compile ---------------------------------------------------------------
for m in sq_point sq_mf sq_steps sq_steps_mf sq_grudrop; do
	build $m "$top_srcdir/t/models/$m.bnn"
	ok $? "$m builds with -Werror"
done

# trains PROG OPT DATA LABELS...: trains with OPT (seed fixed), then
# evaluates on the held-out IDX sequences; the accuracy must exceed 0.9.
held_out="--data test.idx --labels test-lab.idx"
trains() {
	_tp=$1
	_to=$2
	shift 2
	trains_above "$_tp" "$_to" 0.9 --epochs 40 --batch 16 --seed 7 "$@"
}

# ---- train and evaluate --------------------------------------------------------
trains sq_point adam --data train.idx --labels train-lab.idx
trains sq_mf ivon --data train.idx --labels train-lab.idx
trains sq_mf vogn --data train.idx --labels train-lab.idx
trains sq_mf bbb --data train.idx --labels train-lab.idx
trains sq_steps adam --data train.idx --labels train-lab.idx
trains sq_steps_mf ivon --data train.idx --labels train-lab.idx
trains sq_steps_mf vogn --data train.idx --labels train-lab.idx
trains sq_steps_mf bbb --data train.idx --labels train-lab.idx
trains sq_grudrop adam --data train.idx --labels train-lab.idx
# MC prediction of sq_steps (dropout on the embedding and the per_step
# layer): each sample draws its own masks, so one sample's predictions
# change with the seed and two samples' average differs from one's; at the
# mean (--mc 0) no mask is drawn and the seed changes nothing.
mc() {
	./sq_steps predict --load sq_steps-adam.ckpt --data test.idx --mc "$1" --seed "$2" >"mc-$1-$2.out" 2>&1
}
mc 0 1 && mc 0 2 && mc 1 1 && mc 1 2 && mc 2 1
ok $? "sq_steps predicts with --mc 0, 1 and 2"
cmp -s mc-0-1.out mc-0-2.out
ok $? "sq_steps at the mean (--mc 0): the seed changes nothing"
! cmp -s mc-1-1.out mc-1-2.out
ok $? "sq_steps with --mc 1: another seed draws other dropout masks"
! cmp -s mc-1-1.out mc-2-1.out
ok $? "sq_steps with --mc 2: the second sample draws masks of its own"
./sq_grudrop predict --load sq_grudrop-adam.ckpt --data test.idx --mc 1 --seed 1 >gru-1.out 2>&1 &&
	./sq_grudrop predict --load sq_grudrop-adam.ckpt --data test.idx --mc 1 --seed 2 >gru-2.out 2>&1 &&
	! cmp -s gru-1.out gru-2.out
ok $? "sq_grudrop with --mc 1: another seed draws other variational masks"
run ./sq_point train --optimizer adam --epochs 40 --batch 16 --seed 7 --save csv.ckpt --quiet --data train.csv
is "$run_status $run_err" "0 " "sq_point trains on CSV rows of 8 ids"
run ./sq_point eval --load csv.ckpt --data test.csv
accuracy_above "$run_out" 0.9 "sq_point on CSV rows"

# ---- ids the model cannot take, found at load time ---------------------------------
sed '4s/^\([0-9]*\),\([0-9]*\),/\1,6,/' test.csv >range.csv
run ./sq_point eval --load csv.ckpt --data range.csv
is "$run_status $run_err" \
	"1 ./sq_point: range.csv: line 4, column 't1': id 6 is outside the vocabulary [0, 6)" \
	"an id outside the vocabulary in CSV: the file, line and column"
sed '3s/^\([0-9]*\),/\1.5,/' test.csv >frac.csv
run ./sq_point predict --load csv.ckpt --data frac.csv
is "$run_status $run_err" \
	"1 ./sq_point: frac.csv: line 3, column 't0': id $(sed -n '3s/,.*//p' test.csv).5 is not an integer (the input holds integer ids in [0, 6))" \
	"a fractional id in CSV, also for predict (no targets)"
sed '2s/^[0-9]*,/-1,/' train.csv >neg.csv
run ./sq_point train --data neg.csv --save x.ckpt
is "$run_status $run_err" \
	"1 ./sq_point: neg.csv: line 2, column 't0': id -1 is outside the vocabulary [0, 6)" \
	"a negative id in training data"
# test.idx with example 3's value 5 set to 9 (after a header of 12 bytes)
{ head -c $((12 + 2 * 8 + 4)) test.idx; printf '\011'; tail -c +$((12 + 2 * 8 + 6)) test.idx; } >range.idx
run ./sq_point eval --load csv.ckpt --data range.idx --labels test-lab.idx
is "$run_status $run_err" \
	"1 ./sq_point: range.idx: example 3, value 5: id 9 is outside the vocabulary [0, 6)" \
	"an id outside the vocabulary in IDX: the file, example and value"
run ./sq_point train --data train.csv --standardize --save x.ckpt
is "$run_status $run_err" \
	"1 ./sq_point: --standardize scales real inputs, but model 'sq_point' reads integer ids ('ids')" \
	"--standardize is refused for ids"

# ---- the standalone target ---------------------------------------------------------
# t/standalone.sh runs embedding and positional (t/models/sa_seq*.bnn); the
# analytic pass refuses them at the node
run "$BNNC" --standalone -o sa.c "$top_srcdir/t/models/sq_point.bnn"
is "$run_status/$run_err" "0/" "bnnc --standalone writes embedding and positional"
run "$BNNC" --standalone --analytic -o sa.c "$top_srcdir/t/models/sq_point.bnn"
is "$run_status $(printf '%s\n' "$run_err" | sed -n 1p | sed 's/^.*sq_point.bnn:/sq_point.bnn:/')" \
	"1 sq_point.bnn:7:5: error: analytic predictive: op 'embedding' not supported" \
	"bnnc --standalone --analytic refuses embedding, at the node"

# transpose, per_step dense, and dropout on gru and on embedding: written by
# the standalone target (t/standalone.sh runs them: t/models/sa_steps.bnn,
# sa_seqdrop.bnn), refused by its analytic pass at the node (each alone in
# its model, or the first two errors of sq_grudrop)
printf 'model st;\ninput x[4, 3];\nt = transpose(x);\ny ~ categorical(dense(t, 2));\n' >st.bnn
printf 'model sp;\ninput x[4, 3];\nh = dense(x, 2, per_step = true);\ny ~ categorical(dense(h, 2));\n' >sp.bnn
printf 'model se;\ninput ids[4] int;\ne = embedding(ids, 6, 3) ~ dropout(0.1);\ny ~ categorical(dense(e, 2));\n' >se.bnn
for m in st sp se "$top_srcdir/t/models/sq_grudrop"; do
	run "$BNNC" --standalone -o sa.c "$m.bnn"
	is "$run_status/$run_err" "0/" "bnnc --standalone writes ${m##*/}.bnn"
done
run "$BNNC" --standalone --analytic -o sa.c st.bnn
is "$run_status $(printf '%s\n' "$run_err" | sed -n 1p)" \
	"1 st.bnn:3:5: error: analytic predictive: op 'transpose' not supported" \
	"bnnc --standalone --analytic refuses transpose, at the node"
run "$BNNC" --standalone --analytic -o sa.c sp.bnn
is "$run_status $(printf '%s\n' "$run_err" | sed -n 1p)" \
	"1 sp.bnn:3:5: error: analytic predictive: per_step dense layers not supported" \
	"bnnc --standalone --analytic refuses per_step dense layers, at the node"
run "$BNNC" --standalone --analytic -o sa.c se.bnn
is "$run_status $(printf '%s\n' "$run_err" | sed -n 1p)" \
	"1 se.bnn:3:5: error: analytic predictive: op 'embedding' not supported" \
	"bnnc --standalone --analytic refuses dropout on embedding, at the node"
run "$BNNC" --standalone --analytic -o sa.c "$top_srcdir/t/models/sq_grudrop.bnn"
is "$run_status $(printf '%s\n' "$run_err" | grep error: | sed 's/^.*sq_grudrop.bnn:/sq_grudrop.bnn:/')" \
	"1 sq_grudrop.bnn:7:5: error: analytic predictive: op 'embedding' not supported
sq_grudrop.bnn:8:5: error: analytic predictive: op 'gru' not supported" \
	"bnnc --standalone --analytic refuses dropout on gru, at the node"

done_testing
