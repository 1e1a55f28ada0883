#!/bin/sh
# resume.sh: resumable and continuable training (docs/training.md,
# "Resuming"), end to end through generated programs.  bnnc --main builds
# t/models/rt_blobs.bnn (point layers: sgd, adam, adamw) and
# t/models/rt_bayes.bnn (the same layers with a meanfield posterior: vogn,
# ivon, badam, bbb).  Checks:
#   - for every optimizer, N epochs in one go and N/2, then --resume to N,
#     give the same checkpoint bytes (with validation data and early
#     stopping's bookkeeping; one case where the last epoch did not
#     improve, so the checkpoint carries the live state beside the best);
#   - a run killed with SIGKILL after a periodic save (--checkpoint-every 1,
#     cosine schedule) and resumed from that save ends with the bytes of
#     the run that was never killed;
#   - --resume refuses, with exact messages: an old checkpoint without the
#     resume sections (t/data/rt_blobs_v1.ckpt, written by libbnn before
#     resumable training; it still loads for eval), another model's, other
#     options (optimizer, lr, --standardize), no epochs left, --init with it;
#   - the options the trainer chooses read "auto" in a checkpoint, and an
#     older checkpoint that says "delta=nan" and "ess=0"
#     (t/data/rt_bayes_ivon_nan.ckpt) reads and resumes as "auto", its
#     floats written to nine digits ("beta1=0.899999976") as "beta1=0.9";
#   - --init: a meanfield model starts from a point model's parameters
#     (the posterior means are the point estimates), and tensors of
#     another shape or missing are refused naming the tensor and shapes.
. "$TAP_SH"

cd "$TAP_TMP" || bail_out "no temporary directory"

. "$top_srcdir/t/blobs_lib.sh"
blobs 300 1 >train.csv
blobs 3000 5 >big.csv

build point "$top_srcdir/t/models/rt_blobs.bnn"
ok $? "rt_blobs builds"
build bayes "$top_srcdir/t/models/rt_bayes.bnn"
ok $? "rt_bayes builds"

# ---- N epochs in one go == N/2 + --resume to N --------------------------------
# PROG OPTIMIZER LABEL OPTIONS...: $all epochs against $half, then resumed
# to $all.
all=8 half=4
same_bytes() {
	prog=$1 opt=$2 label=$3
	shift 3
	./$prog train --data train.csv --quiet --optimizer "$opt" --epochs $all "$@" --save one.ckpt >/dev/null &&
		./$prog train --data train.csv --quiet --optimizer "$opt" --epochs $half "$@" --save two.ckpt >/dev/null &&
		./$prog train --data train.csv --quiet --optimizer "$opt" --epochs $all "$@" \
			--resume two.ckpt --save two.ckpt >/dev/null &&
		cmp one.ckpt two.ckpt
	ok $? "$label: $all epochs in one go and $half + $((all - half)) resumed give the same bytes"
}
V="--batch 32 --set valid_fraction=0.2"
same_bytes point sgd "sgd" $V --set patience=20
same_bytes point adam "adam" $V
same_bytes point adamw "adamw, standardized" $V --standardize
# vogn's, ivon's and badam's default schedule is a cosine over --epochs, and
# a short run scales vogn's default lr and ivon's h0 by its steps
# (bnn_train_lr, bnn_train_h0), which a run of half as many epochs does not
# follow: a constant schedule and the long runs' lr 5e-5 and h0 0.1 here,
# as for the others (a killed run resumed with its own --epochs is checked
# below).
same_bytes bayes vogn "vogn" $V --set schedule=constant --lr 5e-5
same_bytes bayes vogn "vogn, mc 2" $V --mc 2 --set schedule=constant --lr 5e-5
same_bytes bayes ivon "ivon" $V --set schedule=constant --set h0=0.1
same_bytes bayes ivon "ivon, mc 3" $V --mc 3 --set schedule=constant --set h0=0.1
same_bytes bayes badam "badam" $V --set schedule=constant
same_bytes bayes bbb "bbb" $V
same_bytes bayes bbb "bbb, lrt" $V --set lrt=1
same_bytes bayes bbb "bbb, no validation" --batch 32
# adam at lr 2 does not improve in epoch 6: the checkpoint's arrays are the
# best epoch's (5), and its resume sections carry the live ones
./point train --data train.csv --quiet --optimizer adam --lr 2 --epochs 6 --batch 16 \
	--set valid_fraction=0.3 --save live.ckpt >/dev/null
./point info --load live.ckpt >info.txt
is "$(grep '^checkpoint' info.txt)" "checkpoint live.ckpt: optimizer adam, 5 epochs, 70 steps" \
	"a run whose last epoch did not improve saves the best epoch"
all=12 half=6
same_bytes point adam "adam with a live state apart from the best" --lr 2 --batch 16 \
	--set valid_fraction=0.3
# early stopping: a run that stopped resumes to the same end
same_bytes point adam "adam stopped early (patience 1)" --lr 2 --batch 16 \
	--set valid_fraction=0.3 --set patience=1

# ---- killed after a periodic save ------------------------------------------------
K="--data big.csv --quiet --optimizer ivon --epochs 200 --batch 8 --set schedule=cosine
   --set valid_fraction=0.1 --threads 1"
# shellcheck disable=SC2086
./bayes train $K --save whole.ckpt >/dev/null
ok $? "a run of 200 epochs (cosine schedule)"
# shellcheck disable=SC2086
./bayes train $K --checkpoint-every 1 --save killed.ckpt >/dev/null &
pid=$!
i=0
while [ ! -f killed.ckpt ] && [ $i -lt 3000 ]; do
	sleep 0.01
	i=$((i + 1))
done
kill -9 $pid 2>/dev/null
wait $pid
status=$?
is "$status" 137 "the same run with --checkpoint-every 1 is killed by SIGKILL"
./bayes info --load killed.ckpt >info.txt
ok $? "the periodic checkpoint loads ($(grep '^checkpoint' info.txt))"
# shellcheck disable=SC2086
./bayes train $K --checkpoint-every 1 --resume killed.ckpt --save killed.ckpt >resumed.json
ok $? "and the run resumes from it"
cmp whole.ckpt killed.ckpt
ok $? "ending with the bytes of the run that was never killed"
rm -f killed.ckpt.tmp.*

# ---- refusals ----------------------------------------------------------------------
cp "$top_srcdir/t/data/rt_blobs_v1.ckpt" old.ckpt
run ./point eval --load old.ckpt --data train.csv
is "$run_status" 0 "a checkpoint of libbnn before resumable training still evaluates"
run ./point train --data train.csv --quiet --resume old.ckpt --save new.ckpt
is "$run_status" 1 "and --resume refuses it"
is "$run_err" "./point: old.ckpt: cannot resume: the checkpoint has no training progress (section 'resume'; an older libbnn wrote it, or its run diverged or was stopped within an epoch): start a new run from its parameters with --init old.ckpt" \
	"saying why and what to do"
run ./point train --data train.csv --quiet --epochs 2 --init old.ckpt --save new.ckpt
is "$run_status" 0 "--init takes it"

./point train --data train.csv --quiet --epochs 2 --batch 32 --save p.ckpt >/dev/null
run ./bayes train --data train.csv --quiet --optimizer ivon --epochs 4 --resume p.ckpt --save b.ckpt
is "$run_err" "./bayes: p.ckpt: this checkpoint belongs to model 'rt_blobs', not to model 'rt_bayes'" \
	"--resume of another model's checkpoint is refused"
run ./point train --data train.csv --quiet --optimizer sgd --epochs 4 --batch 32 --resume p.ckpt --save p.ckpt
is "$run_err" "./point: p.ckpt: cannot resume with other options: the run was trained with optimizer=adam, and this command gives optimizer=sgd (only --epochs and --threads may change on resume)" \
	"--resume with another optimizer is refused"
run ./point train --data train.csv --quiet --lr 0.01 --epochs 4 --batch 32 --resume p.ckpt --save p.ckpt
is "$run_err" "./point: p.ckpt: cannot resume with other options: the run was trained with lr=0.001, and this command gives lr=0.01 (only --epochs and --threads may change on resume)" \
	"--resume with another learning rate is refused"
./bayes train --data train.csv --quiet --optimizer ivon --epochs 2 --batch 32 --save iv.ckpt >/dev/null
run ./bayes train --data train.csv --quiet --epochs 4 --batch 32 --resume iv.ckpt --save iv.ckpt
is "$run_err" "./bayes: iv.ckpt: cannot resume with other options: the run was trained with optimizer=ivon, and this command gives optimizer=adam, the default (only --epochs and --threads may change on resume)" \
	"--resume without the run's optimizer says the command's is the default"
run ./point train --data train.csv --quiet --epochs 4 --batch 32 --standardize --resume p.ckpt --save p.ckpt
is "$run_err" "./point: p.ckpt: cannot resume with other options: the run was trained without --standardize, and this command gives it" \
	"--resume with --standardize added is refused"
run ./point train --data train.csv --quiet --epochs 2 --batch 32 --resume p.ckpt --save p.ckpt
is "$run_err" "./point: p.ckpt: the run has completed 2 epochs already, and --epochs is 2: give the total number of epochs, more than 2, to train further" \
	"--resume with no epochs left is refused"
run ./point train --data big.csv --quiet --epochs 4 --batch 32 --resume p.ckpt --save p.ckpt
is "$run_err" "./point: the run to resume trained on 300 examples and held out 0, and this data gives 3000 and 0: resume with the same data" \
	"--resume on other data is refused"
run ./point train --data train.csv --quiet --epochs 4 --resume p.ckpt --init p.ckpt --save p.ckpt
is "$run_status" 2 "--resume with --init is a usage error"
is "$(printf '%s\n' "$run_err" | sed -n 1p)" "./point: --resume continues a run and --init starts a new one: give one of them" \
	"with a message"
run ./point train --data train.csv --quiet --checkpoint-every 0 --save p.ckpt
is "$(printf '%s\n' "$run_err" | sed -n 1p)" "./point: --checkpoint-every: '0' is not a number of epochs in [1, 1000000000]" \
	"--checkpoint-every 0 is refused"
./point train --data train.csv --quiet --epochs 4 --batch 32 --resume p.ckpt --save p.ckpt >/dev/null
ok $? "the same options with more epochs resume"

# ---- options the trainer chooses: "auto", and "nan" or "0" in older checkpoints ----
# t/data/rt_bayes_ivon_nan.ckpt: 2 epochs of ivon on this train.csv (--batch 32)
# with its options text as libbnn wrote it before "auto" (delta=nan, ess=0)
cp "$top_srcdir/t/data/rt_bayes_ivon_nan.ckpt" nan.ckpt
./bayes train --data train.csv --quiet --optimizer ivon --epochs 2 --batch 32 --save auto.ckpt >/dev/null
./bayes info --load auto.ckpt >info.txt
is "$(sed -n 's/^options .* \(delta=[^ ]*\) .* \(ess=[^ ]*\) .*/\1 \2/p' info.txt)" "delta=auto ess=auto" \
	"a checkpoint's options say auto for the values the trainer chose"
./bayes info --load nan.ckpt >info.txt
is "$(sed -n 's/^options .* \(delta=[^ ]*\) .* \(ess=[^ ]*\) .*/\1 \2/p' info.txt)" "delta=auto ess=auto" \
	"an older checkpoint's delta=nan and ess=0 read as auto"
is "$(sed -n 's/^options .* \(beta1=[^ ]*\) \(beta2=[^ ]*\) .*/\1 \2/p' info.txt)" "beta1=0.9 beta2=0.99999" \
	"and its beta1=0.899999976 beta2=0.999989986 (the floats to nine digits) as their shortest decimals"
run ./bayes train --data train.csv --quiet --optimizer ivon --epochs 4 --batch 32 --resume nan.ckpt --save nan.ckpt
is "$run_status:$run_err" "0:" "an older checkpoint with delta=nan and ess=0 resumes"
./bayes info --load nan.ckpt >info.txt
is "$(sed -n 's/^checkpoint nan.ckpt: optimizer ivon, \([0-9]*\) epochs.*/\1/p' info.txt)" 4 \
	"to 4 epochs"
run ./bayes train --data train.csv --quiet --optimizer ivon --epochs 6 --batch 32 --set delta=auto --set ess=0 --resume nan.ckpt --save nan.ckpt
is "$run_status" 0 "delta=auto and ess=0 given are the same options"
cp "$top_srcdir/t/data/rt_bayes_ivon_nan.ckpt" nan.ckpt
run ./bayes train --data train.csv --quiet --optimizer ivon --epochs 4 --batch 32 --set delta=0.5 --resume nan.ckpt --save nan.ckpt
is "$run_err" "./bayes: nan.ckpt: cannot resume with other options: the run was trained with delta=auto, and this command gives delta=0.5 (only --epochs and --threads may change on resume)" \
	"another delta is refused, the older checkpoint's nan read as auto"

# ---- --init ------------------------------------------------------------------------
# a meanfield model from a point model's parameters: at a vanishing learning
# rate the posterior means stay the point estimates, to the bit
run ./bayes train --data train.csv --quiet --optimizer ivon --lr 1e-30 --epochs 1 --init p.ckpt --save warm.ckpt
is "$run_status" 0 "rt_bayes (meanfield) starts from rt_blobs's (point) parameters"
./point posterior --load p.ckpt | cut -d, -f1-3 >point.csv
./bayes posterior --load warm.ckpt | cut -d, -f1-3 >warm.csv
is_file point.csv warm.csv "its posterior means are the point estimates"
printf 'model wider;\ninput x[4];\nh = tanh(dense(x, 9));\nlogits = dense(h, 3);\nlabel ~ categorical(logits);\n' >wider.bnn
build wider wider.bnn
run ./wider train --data train.csv --quiet --init p.ckpt --save w.ckpt
is "$run_err" "./wider: p.ckpt: tensor 'h_dense.weight' is 8x4 in the checkpoint (model 'rt_blobs') and 9x4 in model 'wider'" \
	"--init refuses a tensor of another shape, naming it and both shapes"
printf 'model deeper;\ninput x[4];\nh = tanh(dense(x, 8));\ng = tanh(dense(h, 8));\nlogits = dense(g, 3);\nlabel ~ categorical(logits);\n' >deeper.bnn
build deeper deeper.bnn
run ./deeper train --data train.csv --quiet --init p.ckpt --save d.ckpt
is "$run_err" "./deeper: p.ckpt: model 'deeper' has tensor 'g_dense.weight', which the checkpoint (model 'rt_blobs') does not have" \
	"and a tensor the checkpoint lacks"
run ./bayes train --data train.csv --quiet --optimizer ivon --init old.ckpt --save d.ckpt
is "$run_err" "./bayes: old.ckpt: the checkpoint (model 'rt_blobs') lists no tensors (an older libbnn wrote it): its parameters can only start model 'rt_blobs' itself" \
	"and an old checkpoint of another model"

done_testing
