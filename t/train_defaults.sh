#!/bin/sh
# train_defaults.sh: what `train` chooses when the user gives only an
# optimizer (docs/training.md, "What the trainer chooses"), end to end
# through generated programs.  bnnc --main builds t/models/rt_blobs.bnn
# (point) and t/models/rt_bayes.bnn (meanfield, prior precision 1).
# Checks:
#   - the two settings lines printed before the first epoch, exactly, for
#     adam, ivon, vogn, badam and bbb with defaults only: the options as
#     they run (ivon's lr 0.3, cosine schedule and gradient-norm clip 2,
#     its ess and δ from the data and the model; vogn's lr 5e-5, cosine,
#     δ = ρ × the prior; badam's cosine; no clip for the others) and which
#     values the trainer chose (a short run's scaled defaults: ivon's h0
#     and vogn's lr x 2000 / steps, by hand, and their constants from
#     2,000 steps on; badam's ess = N x the largest fan-in of a layer with
#     a posterior, by hand, and its validation by posterior samples);
#   - a value the user gave is not listed as chosen, and with every such
#     value given the second line says so;
#   - --quiet prints neither line;
#   - the checkpoint's options text records the resolved schedule and
#     clip (and h0 and lr as given, or their long-run defaults), so a run with the defaults and one with `schedule=cosine` and
#     `clip=2` give the same checkpoint bytes; `clip=0` turns ivon's off.
. "$TAP_SH"

cd "$TAP_TMP" || bail_out "no temporary directory"

# Deterministic blobs: class i % 3, centre per class, noise from an LCG.
. "$top_srcdir/t/blobs_lib.sh"
blobs 120 3 >train.csv

build point "$top_srcdir/t/models/rt_blobs.bnn"
ok $? "rt_blobs builds"
build bayes "$top_srcdir/t/models/rt_bayes.bnn"
ok $? "rt_bayes builds"

# settings PROG [OPTIONS...]: the lines before the first epoch.
settings() {
	prog=$1
	shift
	run "./$prog" train --data train.csv --target class --epochs 2 --threads 1 \
		--save "$prog.ckpt" "$@"
	sed -n '/^training: /,/^chosen by the trainer: /p' "$run_err_file"
}

after="epochs=2 batch=128 seed=1 valid_fraction=0 patience=0 crop_pad=0 flip=0"
common="gamma=0.1 warmup=0 lr_min=0 clip=0 $after"
ivon="gamma=0.1 warmup=0 lr_min=0 clip=2 $after"

got=$(settings point --optimizer adam)
is "$got" "training: optimizer=adam lr=0.001 schedule=constant $common beta1=0.9 beta2=0.999 eps=1e-08 weight_decay=0
chosen by the trainer: lr=0.001 (adam's default), schedule=constant (adam's default)" \
	"adam: its lr and constant schedule are reported as chosen"

# 120 examples in batches of 128, 2 epochs: 2 steps, a short run, so
# ivon's h0 is 0.1 x 2000 / 2 = 100.
got=$(settings bayes --optimizer ivon)
is "$got" "training: optimizer=ivon lr=0.3 schedule=cosine $ivon beta1=0.9 beta2=0.99999 mc=1 delta=auto h0=100 ess=120 clip_radius=0 rescale_lr=1
chosen by the trainer: lr=0.3 (ivon's default), h0=100 (ivon's default 0.1 x 2000 / 2 steps: a run shorter than 2000 steps), schedule=cosine (ivon's default: decays to lr_min over the epochs), clip=2 (ivon's default: the gradient's norm clipped to it), ess=120 (the number of training examples), delta=0.00833333333 (the layers' prior precisions / ess)" \
	"ivon: lr 0.3, h0 0.1 x 2000/2, cosine, clip 2, ess = N and delta = prior / N are reported"

# batches of 4, 67 epochs: 30 x 67 = 2010 steps, not short: h0 stays 0.1
# and is not listed; 40 epochs (1200 steps): h0 = 0.1 x 2000 / 1200.
got=$(settings bayes --optimizer ivon --batch 4 --epochs 67)
is "$(printf '%s\n' "$got" | sed -n 's/.* \(h0=[^ ]*\) .*/\1/p')" "h0=0.1" \
	"ivon, 2010 steps: h0 0.1"
case $got in
*"h0=0.1 ("*) ok 1 "ivon, 2010 steps: h0 is not reported as chosen: $got" ;;
*) ok 0 "ivon, 2010 steps: h0 is not reported as chosen" ;;
esac
got=$(settings bayes --optimizer ivon --batch 4 --epochs 40)
case $got in
*"h0=0.166666667 (ivon's default 0.1 x 2000 / 1200 steps: a run shorter than 2000 steps)"*)
	ok 0 "ivon, 1200 steps: h0 0.1 x 2000/1200" ;;
*) ok 1 "ivon, 1200 steps: h0 0.1 x 2000/1200: $got" ;;
esac

got=$(settings bayes --optimizer ivon --lr 0.2 --set schedule=constant --set clip=2 --set ess=240 --set delta=0.01 --set h0=0.1)
is "$got" "training: optimizer=ivon lr=0.2 schedule=constant $ivon beta1=0.9 beta2=0.99999 mc=1 delta=0.01 h0=0.1 ess=240 clip_radius=0 rescale_lr=1
chosen by the trainer: nothing (every value above was given)" \
	"ivon: values the user gave are not listed as chosen"

got=$(settings bayes --optimizer ivon --set clip=0)
is "$(printf '%s\n' "$got" | sed -n 1p | sed -n 's/.* \(clip=[^ ]*\) .*/\1/p')" "clip=0" \
	"ivon: clip=0 turns the default clip off"
case $got in
*"clip=2"*) ok 1 "ivon: clip=0 is not reported as chosen: $got" ;;
*) ok 0 "ivon: clip=0 is not reported as chosen" ;;
esac

# 2 steps: vogn's lr is 5e-5 x 2000 / 2 = 0.05
got=$(settings bayes --optimizer vogn)
is "$got" "training: optimizer=vogn lr=0.05 schedule=cosine $common beta1=0.9 beta2=0.001 mc=1 delta=auto tau=1 tau_start=auto tau_epochs=0 rho=100
chosen by the trainer: lr=0.05 (vogn's default 5e-05 x 2000 / 2 steps: a run shorter than 2000 steps), schedule=cosine (vogn's default: decays to lr_min over the epochs), delta=100 (the layers' prior precisions x rho)" \
	"vogn: lr 5e-5 x 2000/2, cosine, and delta = rho x prior are reported"

got=$(settings bayes --optimizer vogn --batch 4 --epochs 67)
is "$(printf '%s\n' "$got" | sed -n 2p | sed 's/, schedule=.*//')" \
	"chosen by the trainer: lr=5e-05 (vogn's default)" "vogn, 2010 steps: lr 5e-5"

# badam's ess: N x the largest fan-in of a layer with a posterior, by hand
# 120 x 8 (h has 4 inputs, logits 8).
got=$(settings bayes --optimizer badam)
is "$got" "training: optimizer=badam lr=0.001 schedule=cosine $common beta1=0.9 beta2=0.999 eps=1e-08 weight_decay=0 delta=auto ess=960
chosen by the trainer: lr=0.001 (badam's default), schedule=cosine (badam's default: decays to lr_min over the epochs), ess=960 (the number of training examples, 120, x the largest fan-in of a layer with a posterior, 8), delta=1 (the layers' prior precisions)" \
	"badam: ess = 120 x 8 and the prior precision are reported"

# With validation data badam validates by its posterior samples: 90 of the
# 120 examples train (valid_fraction 0.25), so ess = 90 x 8 = 720.
got=$(settings bayes --optimizer badam --set valid_fraction=0.25)
is "$(printf '%s\n' "$got" | sed -n 2p)" \
	"chosen by the trainer: lr=0.001 (badam's default), schedule=cosine (badam's default: decays to lr_min over the epochs), ess=720 (the number of training examples, 90, x the largest fan-in of a layer with a posterior, 8), delta=1 (the layers' prior precisions), validation by 8 posterior samples (badam's: the network at the mean does not see its sigma)" \
	"badam with validation: ess = 90 x 8, validation by 8 posterior samples"

# delta = 0 can leave sigma infinite (a weight no gradient reached): no
# sample predicts, so such a run validates at the mean.
got=$(settings bayes --optimizer badam --set valid_fraction=0.25 --set delta=0 --set ess=500)
is "$(printf '%s\n' "$got" | sed -n 2p)" \
	"chosen by the trainer: lr=0.001 (badam's default), schedule=cosine (badam's default: decays to lr_min over the epochs)" \
	"badam with delta = 0: validation at the mean"

got=$(settings bayes --optimizer bbb)
is "$(printf '%s\n' "$got" | sed -n 2p)" \
	"chosen by the trainer: lr=0.001 (bbb's default), schedule=constant (bbb's default), delta=1 (the layers' prior precisions)" \
	"bbb: the prior precision is reported"

run ./bayes train --data train.csv --target class --epochs 2 --threads 1 --optimizer ivon \
	--quiet --save quiet.ckpt
is "$run_status:$run_err" "0:" "--quiet: no settings lines"

# The default schedule is recorded resolved: the same bytes as cosine.
run ./bayes train --data train.csv --target class --epochs 2 --threads 1 --optimizer ivon \
	--quiet --save default.ckpt
run ./bayes train --data train.csv --target class --epochs 2 --threads 1 --optimizer ivon \
	--set schedule=cosine --set clip=2 --quiet --save cosine.ckpt
cmp -s default.ckpt cosine.ckpt
ok $? "ivon: the default schedule and clip train and save exactly as schedule=cosine clip=2"
run ./bayes info --load default.ckpt
case $run_out in
*"schedule=cosine"*"clip=2 "*) ok 0 "info shows the resolved schedule and clip" ;;
*) ok 1 "info shows the resolved schedule and clip: $run_out" ;;
esac

done_testing
