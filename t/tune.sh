#!/bin/sh
# tune.sh: `MODEL tune` and `train --options FILE` (docs/tune.md), end to
# end through generated programs: t/models/rt_bayes.bnn (meanfield, for
# ivon and vogn) and t/models/rt_blobs.bnn (point) on the three blobs of
# t/data/tune_blobs.csv.  Checks:
#   - the search with a fixed seed prints the table of
#     t/data/tune_ivon.expected, on one thread and on two; badam's starts
#     from its defaults and searches delta and ess from them up (a fixed
#     table);
#   - the options file it writes is read back by train --options to the
#     same options (the checkpoint's options text, word for word), and the
#     command line overrides the file wherever it stands;
#   - comments, blank lines and spaces around '=' are allowed, and every
#     bad line of an options file is refused with its file, line and exact
#     message (exit 2), a missing file with exit 1;
#   - tune --prior on an ivon and a vogn checkpoint prints the grid and the
#     best prior, and its --out trains; bad input: --prior on a point
#     model's checkpoint, without --load, --load without --prior, no --out,
#     search options with --prior, --out the same file as --options.
# The evidence formula itself is checked against hand-computed values in
# t/tune_evidence.c.
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"

cd "$TAP_TMP" || bail_out "no temporary directory"
cp "$top_srcdir/t/data/tune_blobs.csv" blobs.csv || bail_out "no t/data/tune_blobs.csv"

build() { # NAME BNN
	"$BNNC" --main -o "$1.c" "$2" && $CC $BNN_CFLAGS -o "$1" "$1.c" $BNN_LIBS
}
build bayes "$top_srcdir/t/models/rt_bayes.bnn"
ok $? "rt_bayes builds"
build point "$top_srcdir/t/models/rt_blobs.bnn"
ok $? "rt_blobs builds"

# ---- the search: a fixed table ----------------------------------------------
search="--data blobs.csv --optimizer ivon --trials 6 --batch 32 --seed 3 --out best.opts"
# shellcheck disable=SC2086  # $search is a list of words
run ./bayes tune $search --threads 1
is "$run_status" 0 "tune ivon exits 0"
cp "$run_out_file" table1.txt
is_file "$top_srcdir/t/data/tune_ivon.expected" table1.txt "tune ivon prints the expected table"
cp best.opts best1.opts
# shellcheck disable=SC2086
run ./bayes tune $search --threads 2
cp "$run_out_file" table2.txt
is_file table1.txt table2.txt "the same table on two threads"
is_file best1.opts best.opts "the same options file on two threads"
is "$(sed -n 1p best.opts)" \
	"# training options written by tune (docs/tune.md): train --options FILE" \
	"the options file starts with a comment"
is "$(grep -E '^(lr|delta|ess|h0|epochs)=' best.opts | tr '\n' ' ')" \
	"lr=1.19 epochs=4 delta=0.0275 h0=0.966 ess=89.4 " \
	"it holds the best trial's values and the epochs of its last rung"

# ---- badam: its ess searched, ranked through its posterior samples ---------
# 150 examples, 30 held out: N = 120, and rt_bayes's largest fan-in is 8
# (the logits' 8 inputs): trial 0 is badam's defaults (ess 960, delta 1,
# the prior precision), the others only narrower posteriors, ess from
# [960, 100 x 960] and delta from [1, 100]; the other trials' values are
# those the same stream gives without the defaults in trial 0.
run ./bayes tune --data blobs.csv --optimizer badam --lr 0.05 --trials 4 --batch 32 --seed 3 \
	--out badam.opts --threads 1
is "$run_out" "trial rung epochs           lr        delta          ess  valid_nll  accuracy kept
    0    0      1         0.05            1          960     0.5371    0.8333 yes
    1    0      1       0.0051         39.7     1.75e+04     0.6753    0.7333 no
    2    0      1       0.0372         96.6     1.39e+03     0.6703    0.8000 no
    3    0      1       0.0135         26.7          976     0.6635    0.8000 yes
    0    1      2         0.05            1          960     0.3863    0.8667 yes
    3    1      2       0.0135         26.7          976     0.6033    0.8000 no
best: trial 0, valid NLL 0.3863 after 2 epochs; options written to badam.opts" \
	"tune badam: trial 0 its defaults (lr 0.05 as given, delta 1, ess 960), then delta in [1, 100] and ess in [960, 96000]: a fixed table"

# ---- train --options reads them back ------------------------------------------
run ./bayes train --options best.opts --data blobs.csv --save b.ckpt --quiet
is "$run_status" 0 "train --options best.opts exits 0"
run ./bayes info --load b.ckpt
is "$(printf '%s\n' "$run_out" | sed -n 's/^options //p')" \
	"$(grep -v '^#' best.opts | tr '\n' ' ' | sed 's/ $//')" \
	"the checkpoint's options are the file's, word for word"
run ./bayes train --lr 0.05 --data blobs.csv --options best.opts --set epochs=1 \
	--save c.ckpt --quiet
run ./bayes info --load c.ckpt
case $run_out in
*"lr=0.05 "*"epochs=1 "*"delta=0.0275 "*) ok 0 "the command line overrides the file, before or after it" ;;
*) ok 1 "the command line overrides the file, before or after it: $run_out" ;;
esac

printf '# a comment\n\n  optimizer = ivon  # trailing comment\nlr=0.1\n\t\nepochs=1\n' >ok.opts
run ./bayes train --options ok.opts --data blobs.csv --save d.ckpt --quiet
is "$run_status" 0 "comments, blank lines and spaces around '=' are allowed"

# ---- bad options files ---------------------------------------------------------
bad_line() { # CONTENT MESSAGE
	printf '# line 1\n%s\n' "$1" >bad.opts
	run ./point train --options bad.opts --data blobs.csv --save e.ckpt
	is "$run_status" 2 "options file line '$1': exit 2"
	is "$run_err" "./point: bad.opts:2: $2
Try './point --help'." "options file line '$1': the message"
}
bad_line "lrr=0.1" "unknown option 'lrr'; did you mean 'lr'?"
bad_line "colour=red" "unknown option 'colour' (the options are listed by --help)"
bad_line "lr" "'lr' is not NAME=VALUE"
bad_line "=0.1" "'=0.1' is not NAME=VALUE"
bad_line "lr=" "option 'lr' has no value"
bad_line "lr=fast" "option 'lr': 'fast' is not a number"
bad_line "epochs=0" "option 'epochs': 0 is outside [1, 1e+09]"
bad_line "optimizer=adagrad" \
	"unknown optimizer 'adagrad' (choose sgd, adam, adamw, vogn, ivon, badam or bbb)"
printf '# a long line\n%01100d\n' 0 >bad.opts
run ./point train --options bad.opts --data blobs.csv --save e.ckpt
is "$run_err" "./point: bad.opts:2: the line is longer than 1024 bytes
Try './point --help'." "a line longer than 1024 bytes is refused"
run ./point train --options missing.opts --data blobs.csv --save e.ckpt
is "$run_status" 1 "a missing options file: exit 1"
is "$run_err" "./point: cannot open missing.opts: No such file or directory" \
	"a missing options file: the message"

# ---- tune --prior ----------------------------------------------------------------
run ./bayes tune --prior --load b.ckpt --data blobs.csv --out prior.opts
is "$run_status" 0 "tune --prior on an ivon checkpoint exits 0"
is "$(printf '%s\n' "$run_out" | sed -n 2p)" \
	"     precision   option delta     log evidence" "it prints the grid's header"
is "$(printf '%s\n' "$run_out" | grep -cE '^ +[0-9]')" 13 "and thirteen candidates"
case $(printf '%s\n' "$run_out" | grep '(trained)') in
*"      0.0275 "*) ok 0 "the trained prior is the grid's centre, option delta 0.0275" ;;
*) ok 1 "the trained prior is the grid's centre: $run_out" ;;
esac
best=$(printf '%s\n' "$run_out" | sed -n 's/^best prior .*(option delta=\([^)]*\)).*/\1/p')
is "$(grep '^delta=' prior.opts)" "delta=$best" "--out writes the best prior as the option delta"
is "$(grep -v '^delta=' prior.opts)" "$(grep -v '^delta=' best.opts)" \
	"and the checkpoint's other options as they were"
run ./bayes train --options prior.opts --data blobs.csv --save f.ckpt --quiet
is "$run_status" 0 "train --options reads what tune --prior wrote"

run ./bayes train --optimizer vogn --mc 2 --epochs 2 --batch 32 --data blobs.csv --save v.ckpt \
	--quiet
run ./bayes tune --prior --load v.ckpt --data blobs.csv
is "$run_status" 0 "tune --prior on a vogn checkpoint exits 0"
case $run_out in
"v.ckpt: vogn, 67 parameters with a posterior, N 150, "*"best prior "*) ok 0 "it names the run" ;;
*) ok 1 "it names the run: $run_out" ;;
esac

# ---- bad input -------------------------------------------------------------------
run ./point train --data blobs.csv --epochs 1 --save p.ckpt --quiet
run ./point tune --prior --load p.ckpt --data blobs.csv
is "$run_status" 1 "tune --prior on a point model: exit 1"
is "$run_err" "./point: p.ckpt: the evidence needs the curvature IVON or VOGN learned, and this state was trained by adam without a posterior" \
	"tune --prior on a point model: the message"
run ./bayes train --optimizer bbb --data blobs.csv --epochs 1 --save bbb.ckpt --quiet
run ./bayes tune --prior --load bbb.ckpt --data blobs.csv
is "$run_err" "./bayes: bbb.ckpt: the evidence needs the curvature IVON or VOGN learned, and this state was trained by bbb" \
	"tune --prior on a bbb posterior: the message"
usage() { # MESSAGE ARGS...
	msg=$1
	shift
	run ./bayes tune "$@"
	is "$run_status" 2 "tune $*: exit 2"
	is "$run_err" "./bayes: $msg
Try './bayes --help'." "tune $*: the message"
}
usage "'tune' needs --out FILE.opts" --data blobs.csv --optimizer ivon
usage "'tune' needs --data FILE" --optimizer ivon --out x.opts
usage "'tune --prior' needs --load CKPT" --prior --data blobs.csv
usage "--load goes with --prior" --load b.ckpt --data blobs.csv --out x.opts
usage "--trials goes with the search, not with --prior (which reads the checkpoint's options and standardisation)" \
	--prior --load b.ckpt --data blobs.csv --trials 4
usage "--prior reads the training options from the checkpoint: give no --optimizer, --lr, --set, ..." \
	--prior --load b.ckpt --data blobs.csv --optimizer vogn
usage "--trials: '0' is not a number of configurations in [1, 4096]" --data blobs.csv --trials 0 \
	--out x.opts
usage "--out 'best.opts' is the file given to --options: writing it would destroy that input" \
	--data blobs.csv --options best.opts --out best.opts
usage "option 'h0' is not used by optimizer 'vogn', only by ivon: leave it out or choose one of those" \
	--data blobs.csv --optimizer vogn --set h0=1 --out x.opts

done_testing
