#!/bin/sh
# compare.sh: optimizers on Fashion-MNIST, side by side; run by
# `make compare` as
#   sh examples/compare.sh examples/out
# after the Makefile has built OUT/fashion_point, OUT/fashion_dropout and
# OUT/fashion_bayes (examples/*.bnn compiled by `bnnc --main`) and
# examples/datagen, and by `make lenet` as
#   sh examples/compare.sh examples/out lenet
# after it has built OUT/fashion_lenet and OUT/fashion_lenet_bayes, and by
# `make resnet` as
#   sh examples/compare.sh examples/out resnet
# after it has built OUT/fashion_resnet and OUT/fashion_resnet_bayes.
# docs/examples.md explains the tables.
#
# `lenet`: Adam, IVON and VOGN on the LeNet-5-style CNN of
# fashion_lenet.bnn (point) and fashion_lenet_bayes.bnn (mean-field), 10
# epochs, with the same protocol as below; the output files are named
# compare_lenet* instead of compare*.  `resnet`: the same for the small
# ResNet with batchnorm of fashion_resnet.bnn and fashion_resnet_bayes.bnn,
# 15 epochs, files compare_resnet*; COMPARE_AUGMENT=1 adds data
# augmentation for every method (random crops of the image padded by 2
# pixels, horizontal flips).  `patch`: the same ResNet as a point network,
# with MC dropout (fashion_resnet_dropout.bnn), and with EMP and ECMP
# patches on its batchnorm and output layers (fashion_resnet_emp.bnn,
# fashion_resnet_ecmp.bnn), all trained by Adam with the `resnet`
# protocol, files compare_patch*.
#
# Without a second argument, seven methods on the same 784-512-512-10 ReLU
# MLP, with hyperparameters chosen by hand:
#   adam     fashion_point.bnn    Adam (point estimate)
#   sgd      fashion_point.bnn    SGD with momentum (point estimate)
#   mcdrop   fashion_dropout.bnn  Adam with dropout, MC dropout at test time
#   bbb      fashion_bayes.bnn    Bayes-by-Backprop (mean-field, Adam on the ELBO)
#   vogn     fashion_bayes.bnn    VOGN (Osawa et al. 2019)
#   ivon     fashion_bayes.bnn    IVON (Shen et al. 2024)
#   badam    fashion_bayes.bnn    BADAM (Kessler et al.): Adam, then a Laplace posterior
# then the same seven with their defaults only (NAME_defaults: nothing but
# --optimizer), the post-hoc baselines on adam_defaults' network
# (temp_scaled: `calibrate` on the validation images; laplace: diagonal
# Laplace of every weight (--weights all) with prior precision 1;
# laplace_valid: the same with the prior precision of the lowest
# validation NLL among 10^2 .. 10^5; laplace_ll: last-layer Laplace with
# the Kronecker-factored GGN (laplace's default, passed explicitly), its
# prior precision by the marginal likelihood, predicting by the probit
# approximation; the full
# covariance, --structure full, calibrates about as well at 20 times the
# fit time, docs/laplace.md), SWAG over the
# last 5 epochs of Adam (swag), a deep ensemble of 5 Adam networks
# (ensemble5), Multi-IVON with 5 members (multi_ivon), and the seven
# methods after `tune` (NAME_tuned: 8 configurations, successive halving
# from one epoch).  `lenet` has adam_defaults, ivon_defaults and vogn_defaults
# too.
# All train for the same number of epochs ($epochs) in minibatches of
# $batch with seed 1 on the first 54,000 training images; the last 6,000
# (a tenth of however many the training files hold) are held out as files
# (`datagen split`) and validate: each run keeps the epoch with the lowest
# validation NLL, calibrate fits its temperature on them, laplace_valid
# its prior precision, and the conformal sets their quantile; the test
# set is used once by each eval.  The learning rates and the optimizers'
# own hyperparameters are those below; docs/examples.md says how they were
# chosen.
#
# Each trained model is evaluated on the 10,000 test images by Monte-Carlo
# averaging of 32 samples of its posterior or dropout masks (--mc 32; the
# point estimates adam and sgd predict with their single network) and, for
# reference, at the posterior mean (--mc 0), and on an out-of-distribution
# set: the same test images turned a quarter turn (`datagen ood`,
# --transform rot90), scored by the predictive entropy (ood_auroc: the
# probability that a rotated image has a higher entropy than a test image)
# and by the mutual information (ood_auroc_mi); and the 90% conformal sets
# (APS, calibrated on the validation images): their coverage of the test
# labels and their mean size.
#
# Output: the table on stdout (markdown), and in OUT: compare.md (the same),
# compare.csv, and per method compare_NAME_train.json (training summary),
# compare_NAME_train.log (progress per epoch), compare_NAME.ckpt,
# compare_NAME_mc.json (metrics, MC) and compare_NAME_mean.json (at the
# mean); compare_NAME_fit.json for a post-hoc step, compare_NAME.opts and
# compare_NAME_tune.txt for a tuned row.  Seconds per epoch are the mean
# training time of an epoch as the trainer measures it (validation not
# included), on $threads OpenBLAS thread(s) (COMPARE_THREADS=T to change
# it); seconds are the wall time of the whole training run, plus the
# search of a tuned row or the fit of a post-hoc one.
#
# Data: as examples/fashion.sh: Debian's dataset-fashion-mnist in
# /usr/share/datasets/fashion-mnist (or $FASHION_MNIST_DIR), else the
# synthetic stand-in of `datagen images`, announced on stderr.
#
# A quick run (t/compare_smoke.sh makes one in seconds; unset, these change
# nothing): COMPARE_EPOCHS=E trains every row for E epochs instead of the
# network's (swag then collects over the last min(5, E)); and
# FASHION_MNIST_DIR=DIR may hold a small set that `datagen images DIR
# --n-train N --n-test M` writes, its last N/10 training images validating.
# The tuned rows' search (tune --budget 1) and the 32 MC samples stay.
# DATAGEN=PATH names datagen when it is not OUTDIR/../datagen.
#
# POSIX sh; stops at the first error with a message.  Exit status: 0 on
# success, 1 when a step fails, 2 when called wrongly.

me=compare.sh

. "$(dirname "$0")/common.sh"

usage() {
	echo "usage: sh examples/compare.sh OUTDIR [mlp|lenet|resnet|patch] (run by 'make compare', 'make lenet', 'make resnet' and 'make patch')" >&2
	exit 2
}

[ $# -eq 1 ] || [ $# -eq 2 ] || usage
out=$1
net=${2:-mlp}
case $net in
mlp)
	epochs=20 prefix=compare title="784-512-512-10 MLP"
	programs="fashion_point fashion_dropout fashion_bayes" ;;
lenet)
	epochs=10 prefix=compare_lenet title="LeNet-5-style CNN"
	programs="fashion_lenet fashion_lenet_bayes" ;;
resnet)
	epochs=15 prefix=compare_resnet title="small ResNet with batchnorm"
	programs="fashion_resnet fashion_resnet_bayes" ;;
patch)
	epochs=15 prefix=compare_patch title="small ResNet with batchnorm"
	programs="fashion_resnet fashion_resnet_dropout fashion_resnet_emp fashion_resnet_ecmp" ;;
*)
	usage ;;
esac
case ${COMPARE_EPOCHS-} in
'') ;;
0 | *[!0-9]*)
	echo "$me: COMPARE_EPOCHS='$COMPARE_EPOCHS': the number of epochs must be a positive integer" >&2
	exit 2 ;;
*)
	epochs=$COMPARE_EPOCHS ;;
esac
datagen=${DATAGEN:-$(dirname "$out")/datagen}
batch=128
threads=${COMPARE_THREADS:-1}
OPENBLAS_NUM_THREADS=$threads
export OPENBLAS_NUM_THREADS

for p in $programs; do
	[ -x "$out/$p" ] || die "$out/$p is not built: run 'make compare', 'make lenet', 'make resnet' or 'make patch'"
done
[ -x "$datagen" ] || die "$datagen is not built: run 'make compare'"

# The data: the real Fashion-MNIST when installed, else the stand-in.
. "$(dirname "$0")/fashion_data.sh"
fashion_data compare "the table below"
train_x=$dir/train-images-idx3-ubyte.gz
train_y=$dir/train-labels-idx1-ubyte.gz
test_x=$dir/t10k-images-idx3-ubyte.gz
test_y=$dir/t10k-labels-idx1-ubyte.gz
ood=$out/ood-rot90-images-idx3-ubyte.gz
"$datagen" ood "$test_x" "$ood" --transform rot90 ||
	die "could not write the out-of-distribution set $ood"
echo "$me: out-of-distribution set: the test images turned a quarter turn, in $ood" >&2
# The validation set: the last tenth of the training images (6,000 of
# Fashion-MNIST's 60,000), held out as files, so that training (the best
# epoch), calibrate, laplace's prior and the conformal sets all read the
# same examples, and none of them the test set.  n_train is the count in
# the images' IDX header (bytes 4 to 7, big-endian).
n_train=$(gzip -dc "$train_x" 2>/dev/null | od -An -tu1 -j4 -N4 |
	awk 'NF == 4 { print (($1 * 256 + $2) * 256 + $3) * 256 + $4 }')
n_valid=$((${n_train:-0} / 10))
[ "$n_valid" -ge 1 ] || die "$train_x: cannot read its count, or fewer than 10 images to hold a tenth out"
n_fit=$((n_train - n_valid))
fit_x=$out/fit-images-idx3-ubyte.gz fit_y=$out/fit-labels-idx1-ubyte.gz
valid_x=$out/valid-images-idx3-ubyte.gz valid_y=$out/valid-labels-idx1-ubyte.gz
"$datagen" split "$train_x" "$fit_x" "$valid_x" --at "$n_fit" &&
	"$datagen" split "$train_y" "$fit_y" "$valid_y" --at "$n_fit" ||
	die "could not hold out the validation images in $out"
# thousands N: N with a comma every three digits (54000: 54,000).
thousands() {
	awk -v n="$1" 'BEGIN { s = n ""; while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9](,|$)/, ",&", s); print s }'
}
echo "$me: the first $(thousands "$n_fit") training images train, the last $(thousands "$n_valid") validate ($valid_x)" >&2

# The mean of the epoch times in a training log ("... 2.0 s" or
# "... 2.0 s  (best)" at the end of each epoch's line).
epoch_seconds() {
	awk '/^epoch [0-9]+\/[0-9]+ / {
		for (i = NF; i > 1; i--)
			if ($i == "s") { sum += $(i - 1); n++; break }
	}
	END { if (n) printf "%.2f", sum / n }' "$1"
}

csv=$out/$prefix.csv
md=$out/$prefix.md
echo "method,model,optimizer,mc,accuracy,nll,ece,mce,brier,ood_auroc,ood_auroc_mi,conformal_coverage,conformal_set_size,accuracy_mean,nll_mean,ece_mean,best_epoch,seconds_per_epoch,seconds,parameters" >"$csv.tmp" ||
	die "cannot write $csv.tmp"
start=$(date +%s)

# now: the time in seconds, with its fraction.
now() {
	date +%s.%N
}

# train NAME PROGRAM OPTIMIZER [TRAIN OPTIONS...]: trains OUT/PREFIX_NAME.ckpt
# on the 54,000 (n_fit) images, keeping the epoch of the lowest validation
# NLL; sets name, model, opt, prog, ckpt, log and secs (the wall time of
# the run).
train() {
	name=$1 prog=$out/$2 model=$2 opt=$3
	shift 3
	ckpt=$out/${prefix}_$name.ckpt
	log=$out/${prefix}_${name}_train.log
	t0=$(now)
	echo "$me: $name: training $model with $opt $*, $epochs epochs, batch $batch (progress in $log)" >&2
	"$prog" train --data "$fit_x" --labels "$fit_y" --valid "$valid_x" --valid-labels "$valid_y" \
		--optimizer "$opt" --epochs "$epochs" --batch "$batch" --seed 1 --threads "$threads" \
		"$@" --save "$ckpt" >"$out/${prefix}_${name}_train.json" 2>"$log" || {
		tail -n 3 "$log" >&2
		die "$name: training failed (the log is $log)"
	}
	secs=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
}

# posthoc NAME FROM COMMAND [OPTIONS...]: the row FROM's checkpoint turned
# by `PROGRAM COMMAND --load FROM.ckpt OPTIONS --save NAME.ckpt` (calibrate,
# laplace) into NAME's; its seconds are FROM's training plus this step.
posthoc() {
	name=$1 from=$out/${prefix}_$2.ckpt cmd=$3
	shift 3
	ckpt=$out/${prefix}_$name.ckpt
	t0=$(now)
	echo "$me: $name: $cmd of $from $*" >&2
	"$prog" "$cmd" --load "$from" --threads "$threads" "$@" --save "$ckpt" \
		>"$out/${prefix}_${name}_fit.json" || die "$name: $cmd failed (see the message above)"
	secs=$(awk -v a="$t0" -v b="$(now)" -v s="$secs" 'BEGIN { printf "%.1f", s + b - a }')
}

# evaluate: the test metrics of ckpt as a row of the table.  Without --mc,
# eval averages 32 samples of a model with a posterior, dropout or members
# and predicts once with a point estimate (its mc is 0).  The conformal sets
# (APS, level 0.9) are calibrated on the validation images.
evaluate() {
	f=$out/${prefix}_${name}_mc.json
	g=$out/${prefix}_${name}_mean.json
	"$prog" eval --load "$ckpt" --data "$test_x" --labels "$test_y" --seed 1 \
		--threads "$threads" --ood "$ood" --conformal "$valid_x" \
		--conformal-labels "$valid_y" --level 0.9 >"$f" ||
		die "$name: evaluation failed (see the message above)"
	"$prog" eval --load "$ckpt" --data "$test_x" --labels "$test_y" --mc 0 \
		--threads "$threads" >"$g" ||
		die "$name: evaluation at the mean failed (see the message above)"
	k=$(json_get mc "$f")
	params=$("$prog" info | sed -n 's/.*, parameters \([0-9]*\)$/\1/p')
	tj=$out/${prefix}_${name}_train.json
	[ -r "$tj" ] || tj=$out/${prefix}_${from_row}_train.json
	tl=$out/${prefix}_${name}_train.log
	[ -r "$tl" ] || tl=$out/${prefix}_${from_row}_train.log
	row="$name,$model,$opt,$k,$(json_get accuracy "$f"),$(json_get nll "$f"),$(json_get ece "$f"),$(json_get mce "$f"),$(json_get brier "$f"),$(json_get ood_auroc "$f"),$(json_get ood_auroc_mi "$f"),$(json_get conformal_coverage "$f"),$(json_get conformal_set_size "$f"),$(json_get accuracy "$g"),$(json_get nll "$g"),$(json_get ece "$g"),$(json_get best_epoch "$tj"),$(epoch_seconds "$tl"),$secs,$params"
	echo "$row" >>"$csv.tmp" || die "cannot write $csv.tmp"
	echo "$me: $name: $secs s to train (and fit); test: $(cat "$f")" >&2
}

# run NAME PROGRAM OPTIMIZER [TRAIN OPTIONS...]: train, evaluate, add a row.
run() {
	from_row=
	train "$@"
	evaluate
}

# after_fit FROM NAME COMMAND [OPTIONS...]: a post-hoc method (calibrate,
# laplace) applied to the checkpoint of the row FROM, which must be above.
after_fit() {
	from_row=$1 new=$2 cmd=$3
	shift 3
	line=$(grep "^$from_row," "$csv.tmp") || die "after: no row $from_row above"
	model=$(echo "$line" | cut -d, -f2) opt=$(echo "$line" | cut -d, -f3)
	secs=$(echo "$line" | cut -d, -f19) prog=$out/$model
	from_secs=$secs
	posthoc "$new" "$from_row" "$cmd" "$@"
}

# after FROM NAME COMMAND [OPTIONS...]: a post-hoc method (calibrate,
# laplace) applied to the checkpoint of the row FROM, as a row of its own.
after() {
	after_fit "$@"
	evaluate
}

# laplace_valid FROM NAME: diagonal Laplace (--weights all) on the row FROM
# with the prior precision, among 10^2, 10^3, 10^4 and 10^5, whose
# Monte-Carlo predictive has the lowest NLL on the validation images; its
# seconds count every fit.
laplace_valid() {
	best= best_nll=
	for d in 100 1000 10000 100000; do
		after_fit "$1" "$2_$d" laplace --weights all --data "$fit_x" --labels "$fit_y" \
			--prior-precision "$d"
		"$prog" eval --load "$ckpt" --data "$valid_x" --labels "$valid_y" --seed 1 \
			--threads "$threads" >"$out/${prefix}_$2_${d}_valid.json" ||
			die "$2: validation of prior precision $d failed (see the message above)"
		v=$(json_get nll "$out/${prefix}_$2_${d}_valid.json")
		echo "$me: $2: prior precision $d: validation NLL $v" >&2
		if [ -z "$best" ] || awk -v a="$v" -v b="$best_nll" 'BEGIN { exit !(a < b) }'; then
			best=$d best_nll=$v
		fi
		fits=$(awk -v a="${fits:-0}" -v s="$secs" -v f="$from_secs" 'BEGIN { printf "%.1f", a + s - f }')
	done
	name=$2 ckpt=$out/${prefix}_$2.ckpt
	cp "$out/${prefix}_$2_$best.ckpt" "$ckpt" || die "cannot write $ckpt"
	echo "$me: $2: prior precision $best chosen" >&2
	secs=$(awk -v a="$fits" -v f="$from_secs" 'BEGIN { printf "%.1f", a + f }')
	fits=
	evaluate
}

# tuned NAME PROGRAM OPTIMIZER: `tune` (8 configurations, successive
# halving from one epoch, on a tenth of the 54,000 (n_fit) images held out
# by tune itself), then a full run with the options it chose; its seconds
# count the search.
tuned() {
	opts=$out/${prefix}_$1.opts
	t_tune=$(now)
	echo "$me: $1: tune $3 on $2 (table in $out/${prefix}_$1_tune.txt)" >&2
	"$out/$2" tune --data "$fit_x" --labels "$fit_y" --optimizer "$3" --trials 8 --budget 1 \
		--batch "$batch" --seed 1 --threads "$threads" --set valid_fraction=0.1 \
		--out "$opts" >"$out/${prefix}_$1_tune.txt" || die "$1: tune failed (see the message above)"
	search=$(awk -v a="$t_tune" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
	from_row=
	train "$1" "$2" "$3" --options "$opts"
	secs=$(awk -v a="$secs" -v b="$search" 'BEGIN { printf "%.1f", a + b }')
	evaluate
}

# The methods and their hyperparameters, chosen by hand from about seventy
# runs, most of 20 epochs (docs/examples.md lists the main ones and says how).
# Every learning rate decays to 0 along a cosine.
#   adam, mcdrop, bbb, badam: Adam's usual 1e-3 (β 0.9, 0.999).
#   sgd: 0.05 with momentum 0.9.
#   vogn: Osawa et al.'s Alg. 1 with β2 = 0.001: line 20 weights the new ĥ
#     by β2, so the "0.999" of the paper's tables (and of libbnn's default)
#     is the decay 1 − β2 of a PyTorch-style moving average; with β2 =
#     0.999 read literally s is little more than the last minibatch's ĥ
#     (and a run at lr 1e-3 diverged in its first epoch).
#     A one-epoch warm-up, without which the first steps (scaled by 1/s)
#     overshoot.  ρ = 100 with δ = 100·25 tempers the posterior:
#     σ² = 1/(ρ(N·s + 25)), the model's prior precision 25 at temperature
#     1/100 (a cold posterior; there is no data augmentation here), while
#     the mean keeps the model's L2 term δ/(ρN) = 25/N.  ρ = 100 is the
#     warmest of 1, 10, 30, 50, 100, 200 and 400 whose accuracy on the
#     validation images stays within 0.5 points of Adam's (seeds 1 and 2;
#     the issue's own accuracy criterion).  With ρ = 1 (the untempered
#     posterior) the accuracy drops to 83% and ECE is 0.05; colder (ρ =
#     400) is more accurate, and better on validation NLL, but on the
#     test images less well calibrated (ECE 0.014 against 0.007).
#   ivon: h0 = 0.3 and α = 0.3 (rescaled by h0 + δ, as in Shen et al.'s
#     Alg. 1), β2 = 1 − 10⁻⁵, λ = N, δ = 25/N from the model's prior.
#     In 8,440 steps h moves little from h0, so h0 sets σ ≈ 1/√(N·h0).
#   badam: σ = 1/√(λ√v̂ + δ) with λ = ess = 5·10⁸, about 10⁴·N: Kessler et
#     al.'s appendix C treats this N as a hyperparameter to tune on
#     validation data, because sampling the Laplace posterior "can cause
#     serious underfitting"; with λ = N the MC accuracy is 25%.  Among
#     λ/N = 1, 10, ..., 10⁵, 10⁴ is the smallest on the plateau of the
#     validation NLL; there σ is small and the MC predictive stays close to
#     the mean's.
# The rows NAME_defaults train with the optimizer's defaults only (its
# learning rate, schedule and hyperparameters; the protocol's epochs,
# batch, seed and validation split as above): what a user gets who gives
# nothing but --optimizer (docs/optimizers/ivon.md and vogn.md, "Defaults
# and their evidence").
# The ResNets' data augmentation: none unless COMPARE_AUGMENT=1.
aug=
[ "${COMPARE_AUGMENT:-0}" = 1 ] && aug="--set crop_pad=2 --set flip=1"
if [ "$net" = patch ]; then
# Patches: the point ResNet, MC dropout, EMP and ECMP, all trained by Adam
# as for `resnet` (one draw of the masks or components per step:
# Algorithm 1 with S = 1), predicting with 32 samples.
run point  fashion_resnet         adam --lr 1e-3 --set schedule=cosine $aug
run mcdrop fashion_resnet_dropout adam --lr 1e-3 --set schedule=cosine $aug
run emp    fashion_resnet_emp     adam --lr 1e-3 --set schedule=cosine $aug
run ecmp   fashion_resnet_ecmp    adam --lr 1e-3 --set schedule=cosine $aug
elif [ "$net" = resnet ]; then
# ResNet: Adam as above; IVON with the MLP's settings; VOGN at lr 1e-3
# with a one-epoch warm-up, and rho = 100 (the paper's rho counts
# augmented copies, 5 to 10 on CIFAR-10; here it tempers the posterior,
# as for the MLP).  Not tuned (docs/examples.md).
run adam   fashion_resnet       adam --lr 1e-3 --set schedule=cosine $aug
run ivon   fashion_resnet_bayes ivon --lr 0.3 --set schedule=cosine --set h0=0.3 $aug
run vogn   fashion_resnet_bayes vogn --lr 1e-3 --set schedule=cosine --set warmup=1 --set rho=100 $aug
elif [ "$net" = lenet ]; then
# LeNet: Adam as above; IVON with the MLP's settings; VOGN at lr 1e-3 with
# a one-epoch warm-up and the default beta2, tempered by rho = 1000 (see
# docs/examples.md: untempered, the posterior of the weakly regularised
# convolutions is too wide).
run adam   fashion_lenet       adam --lr 1e-3 --set schedule=cosine
run ivon   fashion_lenet_bayes ivon --lr 0.3 --set schedule=cosine --set h0=0.3
run vogn   fashion_lenet_bayes vogn --lr 1e-3 --set schedule=cosine --set warmup=1 --set rho=1000
run adam_defaults fashion_lenet       adam
run ivon_defaults fashion_lenet_bayes ivon
run vogn_defaults fashion_lenet_bayes vogn
else
run adam   fashion_point   adam  --lr 1e-3 --set schedule=cosine
run sgd    fashion_point   sgd   --lr 0.05 --set schedule=cosine
run mcdrop fashion_dropout adam  --lr 1e-3 --set schedule=cosine
run bbb    fashion_bayes   bbb   --lr 1e-3 --set schedule=cosine
run vogn   fashion_bayes   vogn  --lr 2.5e-5 --set schedule=cosine --set warmup=1 \
	--set beta2=0.999 --set rho=100 --set delta=2500
run ivon   fashion_bayes   ivon  --lr 0.3 --set schedule=cosine --set h0=0.3
run badam  fashion_bayes   badam --lr 1e-3 --set schedule=cosine --set ess=5e8
run adam_defaults   fashion_point   adam
run sgd_defaults    fashion_point   sgd
run mcdrop_defaults fashion_dropout adam
run bbb_defaults    fashion_bayes   bbb
run ivon_defaults   fashion_bayes   ivon
run vogn_defaults   fashion_bayes   vogn
run badam_defaults  fashion_bayes   badam
# The post-hoc baselines, on Adam's defaults-only network, and the
# mixtures, with their own defaults; SWAG's 5 epochs are at most all of
# them (COMPARE_EPOCHS below 5).
swag_k=5
[ "$epochs" -ge 5 ] || swag_k=$epochs
after adam_defaults temp_scaled calibrate --data "$valid_x" --labels "$valid_y"
after adam_defaults laplace laplace --weights all --data "$fit_x" --labels "$fit_y" \
	--prior-precision 1
laplace_valid adam_defaults laplace_valid
after adam_defaults laplace_ll laplace --weights last-layer --structure kron \
	--data "$fit_x" --labels "$fit_y" --prior-precision auto
run swag       fashion_point adam --set swag="$swag_k"
run ensemble5  fashion_point adam --members 5
run multi_ivon fashion_bayes ivon --members 5
# Each method after `tune` (mcdrop_tuned: Adam on the dropout network).
tuned adam_tuned   fashion_point   adam
tuned sgd_tuned    fashion_point   sgd
tuned mcdrop_tuned fashion_dropout adam
tuned bbb_tuned    fashion_bayes   bbb
tuned vogn_tuned   fashion_bayes   vogn
tuned ivon_tuned   fashion_bayes   ivon
tuned badam_tuned  fashion_bayes   badam
fi
end=$(date +%s)
mv "$csv.tmp" "$csv" || die "cannot write $csv"

# The table, from the CSV: markdown on stdout and in compare.md.
awk -F, -v data="$data" -v title="$title" -v epochs="$epochs" -v batch="$batch" -v threads="$threads" \
	-v n_valid="$(thousands "$n_valid")" '
NR == 1 { next }
NR == 2 {
	printf "Test set of %s, %s, %s epochs, batch %s, " \
	       "seconds per epoch on %s thread(s).\n", data, title, epochs, batch, threads
	printf "MC: samples of the posterior or dropout masks (0: the network itself; " \
	       "ensemble5 and multi_ivon average their 5 members); " \
	       "OOD AUROC: test images against the same turned 90 degrees, by the " \
	       "predictive entropy and by the mutual information; 90%% sets: split " \
	       "conformal (APS) calibrated on the %s validation images, their " \
	       "coverage of the test labels and mean size; seconds: training, and " \
	       "tuning or the post-hoc fit, wall clock.\n\n", n_valid
	print "| method | optimizer | MC | accuracy | NLL | ECE | Brier | OOD AUROC (entropy) | OOD AUROC (MI) | 90% set coverage | set size | accuracy @mean | best epoch | s/epoch | seconds |"
	print "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
}
{
	printf "| %s | %s | %d | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %.2f | %.4f | %d | %.2f | %.0f |\n",
	       $1, $3, $4, $5, $6, $7, $9, $10, $11, $12, $13, $14, $17, $18, $19
}' "$csv" >"$md.tmp" || die "cannot write $md.tmp"
mv "$md.tmp" "$md" || die "cannot write $md"
cat "$md" || die "cannot read $md"
echo "$me: all done in $((end - start)) s; the table is in $md and $csv" >&2
