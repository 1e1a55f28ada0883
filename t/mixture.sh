#!/bin/sh
# mixture.sh: mixtures of networks (train --members; docs/ensembles.md) on
# t/models/rt_bayes.bnn (meanfield: ivon members, Multi-IVON) and
# t/models/rt_blobs.bnn (point: adam members, a deep ensemble).  Checks:
#   - member k (from 1) is the run `train --seed S+k-1` makes alone: the
#     mixture's predictions (--mc 4 --seed 5) are the average of the two runs'
#     (--seed 5, --seed 6), and its entropy, expected entropy and mutual
#     information those of all 8 samples, computed here from the two
#     runs' predict outputs; eval's accuracy and NLL are those of the
#     averaged predictive;
#   - a deep ensemble at --mc 0: the members' disagreement is its mutual
#     information;
#   - the same command gives the same bytes; --members 1 is the plain run;
#     loading a mixture and saving it gives the same bytes;
#   - info describes the members; posterior and --init refuse a mixture;
#   - bad input with exact messages: --members 0, with --resume, with
#     --checkpoint-every, and mixtures whose members do not fit the model
#     (t/mixture_tool writes them).
. "$TAP_SH"

cd "$TAP_TMP" || bail_out "no temporary directory"

# Deterministic blobs: class i % 3, centre per class, noise from an LCG.
. "$top_srcdir/t/blobs_lib.sh"
blobs 300 1 2.4 >train.csv

"$BNNC" --main -o bayes.c "$top_srcdir/t/models/rt_bayes.bnn" &&
	$CC $BNN_CFLAGS -o bayes bayes.c $BNN_LIBS
ok $? "rt_bayes builds"
"$BNNC" --main -o point.c "$top_srcdir/t/models/rt_blobs.bnn" &&
	$CC $BNN_CFLAGS -o point point.c $BNN_LIBS
ok $? "rt_blobs builds"
"$BNNC" -o bayes_model.c "$top_srcdir/t/models/rt_bayes.bnn" &&
	$CC $BNN_CFLAGS -DTOOL_MODEL=rt_bayes_model -o tool "$top_srcdir/t/mixture_tool.c" \
		bayes_model.c $BNN_LIBS
ok $? "t/mixture_tool builds"

T="--data train.csv --optimizer ivon --epochs 3 --batch 32 --quiet"

# ---- Multi-IVON: two members ------------------------------------------------------
run ./bayes train $T --members 2 --seed 5 --save mix.ckpt
is "$run_status" 0 "train --members 2"
is "$(echo "$run_out" | sed 's/"train_loss": [^,]*, "examples_per_second": [0-9]*, //')" \
	'{"member": 1, "members": 2, "seed": 5, "epochs": 3, "checkpoint": "mix.ckpt"}
{"member": 2, "members": 2, "seed": 6, "epochs": 3, "checkpoint": "mix.ckpt"}' \
	"a summary line per member, with its seed"
./bayes train $T --members 2 --seed 5 --save again.ckpt >/dev/null && cmp mix.ckpt again.ckpt
ok $? "the same command gives the same bytes"
./bayes train $T --seed 5 --save s5.ckpt >/dev/null &&
	./bayes train $T --seed 6 --save s6.ckpt >/dev/null
ok $? "the members' runs alone, seeds 5 and 6"
./bayes train $T --members 1 --seed 5 --save one.ckpt >/dev/null && cmp one.ckpt s5.ckpt
ok $? "--members 1 is the plain run, byte for byte"
./tool copy mix.ckpt copy.ckpt && cmp mix.ckpt copy.ckpt
ok $? "a mixture loaded and saved again gives the same bytes"

./bayes predict --load s5.ckpt --data train.csv --mc 4 --seed 5 --out p5.csv &&
	./bayes predict --load s6.ckpt --data train.csv --mc 4 --seed 6 --out p6.csv &&
	./bayes predict --load mix.ckpt --data train.csv --mc 4 --seed 5 --out pm.csv
ok $? "predict: the two runs and the mixture"
# For each example: p = (p5 + p6)/2 (float rounding: 1e-7), entropy
# H[p] = −Σ p log p, expected entropy (x5 + x6)/2, mutual information
# H[p] − that; the largest difference from the mixture's columns.
worst=$(paste -d, p5.csv p6.csv pm.csv | awk -F, 'NR > 1 {
	h = 0
	for (j = 1; j <= 3; j++) {
		p = ($j + $(j + 7)) / 2
		d = p - $(j + 14); if (d < 0) d = -d; if (d > w) w = d
		if (p > 0) h -= p * log(p)
	}
	x = ($6 + $13) / 2
	d = h - $19; if (d < 0) d = -d; if (d > w) w = d
	d = x - $20; if (d < 0) d = -d; if (d > w) w = d
	d = (h - x) - $21; if (d < 0) d = -d; if (d > w) w = d
	if ($4 != $18 && $(1 + $18) + $(8 + $18) < $(1 + $4) + $(8 + $4) - 1e-6) bad++
} END { printf "%s %.1e\n", (w < 1e-6 && !bad) ? "ok" : "differ", w }')
is "${worst%% *}" ok "predict of the mixture: the average of the members' predictives, entropy split over all samples ($worst)"
mi=$(awk -F, 'NR > 1 { s += $7 } END { print (s / (NR - 1) > 1e-3) ? "yes" : "no" }' pm.csv)
is "$mi" yes "the mixture's mutual information is not 0"

run ./bayes eval --load mix.ckpt --data train.csv --mc 4 --seed 5
ok $run_status "eval of the mixture"
echo "$run_out" | grep -q '"mc": 4, "members": 2, "accuracy"'
ok $? "eval names the members"
# accuracy and NLL of the averaged predictive, from the runs' predictions
want=$(paste -d, p5.csv p6.csv train.csv | awk -F, 'NR > 1 {
	y = $19; best = 0
	for (j = 0; j < 3; j++) { p[j] = ($(1 + j) + $(8 + j)) / 2; if (p[j] > p[best]) best = j }
	nll -= log(p[y]); hit += best == y; n++
} END { printf "%.4f %.4f\n", hit / n, nll / n }')
got=$(echo "$run_out" | awk '{
	match($0, /"accuracy": [^,]*/); a = substr($0, RSTART + 12, RLENGTH - 12)
	match($0, /"nll": [^,]*/); l = substr($0, RSTART + 7, RLENGTH - 7)
	printf "%.4f %.4f\n", a, l }')
is "$got" "$want" "eval: the accuracy and NLL of the average of the members' predictives"

# ---- a deep ensemble of point networks ------------------------------------------------
run ./point train --data train.csv --optimizer adam --epochs 2 --batch 32 --quiet --members 3 --save ens.ckpt
ok $run_status "a deep ensemble: adam, --members 3"
run ./point eval --load ens.ckpt --data train.csv
mi=$(echo "$run_out" | sed -n 's/.*"mutual_information": \([^,]*\),.*/\1/p')
echo "$run_out" | grep -q '^{"n": 300, "mc": 0, "members": 3,' &&
	awk -v m="$mi" 'BEGIN { exit !(m > 0) }'
ok $? "at --mc 0 the mutual information is the members' disagreement ($mi)"

# ---- info, and what needs one network ---------------------------------------------------
run ./bayes info --load mix.ckpt
is "$(echo "$run_out" | grep -e '^checkpoint' -e '^member')" \
	"checkpoint mix.ckpt: a mixture of 2 networks (docs/ensembles.md)
member 1: optimizer ivon, 3 epochs, 30 steps, with a posterior
member 2: optimizer ivon, 3 epochs, 30 steps, with a posterior" "info lists the members"
run ./bayes posterior --load mix.ckpt
is "$run_status/$run_err" "1/./bayes: mix.ckpt: the checkpoint is a mixture of 2 networks (train --members): eval and predict read it, and this needs one network" \
	"posterior refuses a mixture"
run ./bayes train $T --init mix.ckpt --save x.ckpt
is "$run_status/$run_err" "1/./bayes: mix.ckpt: the checkpoint is a mixture of 2 networks (train --members): eval and predict read it, and this needs one network" \
	"--init refuses a mixture"

# ---- bad input ----------------------------------------------------------------------------
run ./bayes train $T --members 0 --save x.ckpt
is "$run_status/$run_err" "2/./bayes: --members: '0' is not a number of members in [1, 1000]
Try './bayes --help'." "--members 0"
run ./bayes train $T --members 2 --resume s5.ckpt --save x.ckpt
is "$run_status/$run_err" "2/./bayes: --resume continues one run, and --members 2 trains 2: a mixture is not resumed
Try './bayes --help'." "--members with --resume"
run ./bayes train $T --members 2 --checkpoint-every 1 --save x.ckpt
is "$run_status/$run_err" "2/./bayes: --checkpoint-every saves one run as it goes: with --members, --save is written after each member
Try './bayes --help'." "--members with --checkpoint-every"
./tool broken size.ckpt size && ./tool broken missing.ckpt missing && ./tool broken sigma.ckpt sigma
ok $? "mixtures with a bad member are written"
run ./bayes eval --load size.ckpt --data train.csv
is "$run_status/$run_err" "1/./bayes: size.ckpt: section 'member.2.params' has 66 values, the model needs 67" \
	"a member of another size"
run ./bayes predict --load missing.ckpt --data train.csv
is "$run_status/$run_err" "1/./bayes: missing.ckpt: section 'member.3.params' is missing" \
	"a member missing"
run ./bayes eval --load sigma.ckpt --data train.csv
is "$run_status/$run_err" "1/./bayes: sigma.ckpt: section 'member.2.sigma': value 0 is -1, not a value >= 0" \
	"a member with a bad value"
test ! -e x.ckpt
ok $? "no refused command wrote a checkpoint"

done_testing
