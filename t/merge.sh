#!/bin/sh
# merge.sh: the `merge` command (docs/merge.md) on t/models/mg_line.bnn,
# one meanfield unit with two parameters (w, b), whose networks
# t/mixture_tool writes with hand-chosen means and σ, so that every merged
# value is computed by hand below (H = 1/σ², the posterior precision):
#   A (ivon): w = 1, b = 2,  σ = (1, 0.5)    H = (1, 4)
#   B (ivon): w = 6, b = -2, σ = (0.5, 0.5)  H = (4, 4)
#   C (vogn): w = 0, b = 1,  σ = (2, 0.25)   H = (0.25, 16)
#   D (adam): w = 5, b = 5,  no σ
# Checks: Hessian weights of A, B and of A, B, C; uniform weights; the
# merged σ = (Σ H)^(−1/2); Adam refused for Hessian weights and taken for
# uniform ones; the merged checkpoint evaluated; bad input (one file,
# another model's checkpoint, a mixture, other standardisations, an
# unknown weighting, --save over an input) with exact messages.
. "$TAP_SH"

cd "$TAP_TMP" || bail_out "no temporary directory"

"$BNNC" --main -o line.c "$top_srcdir/t/models/mg_line.bnn" &&
	$CC $BNN_CFLAGS -o line line.c $BNN_LIBS
ok $? "mg_line builds"
"$BNNC" -o line_model.c "$top_srcdir/t/models/mg_line.bnn" &&
	$CC $BNN_CFLAGS -DTOOL_MODEL=mg_line_model -o tool "$top_srcdir/t/mixture_tool.c" \
		line_model.c $BNN_LIBS
ok $? "t/mixture_tool builds"
"$BNNC" --main -o other.c "$top_srcdir/t/models/rt_bayes.bnn" &&
	$CC $BNN_CFLAGS -o other other.c $BNN_LIBS
ok $? "rt_bayes builds"

./tool net a.ckpt ivon 1 2 --sigma 1 0.5 &&
	./tool net b.ckpt ivon 6 -2 --sigma 0.5 0.5 &&
	./tool net c.ckpt vogn 0 1 --sigma 2 0.25 &&
	./tool net d.ckpt adam 5 5
ok $? "the four networks are written"

posterior() { # CKPT: the rows of its posterior, on one line
	./line posterior --load "$1" | tail -n +2 | tr '\n' ' '
}

# ---- Hessian weights ---------------------------------------------------------
run ./line merge --load a.ckpt --load b.ckpt --save ab.ckpt
is "$run_status/$run_out" \
	'0/{"merged": 2, "weights": "hessian", "posterior": true, "checkpoint": "ab.ckpt"}' \
	"merge A B: the summary line"
# w = (1·1 + 4·6)/(1 + 4) = 25/5 = 5, σ_w = 5^(−1/2) = 0.4472135955 (float 0.44721359);
# b = (4·2 + 4·(−2))/(4 + 4) = 0, σ_b = 8^(−1/2) = 0.3535533906 (float 0.353553385)
is "$(posterior ab.ckpt)" "mu.weight,0,5,0.44721359 mu.bias,0,0,0.353553385 " \
	"merge A B: Hessian-weighted means and the merged precision"
run ./line merge --load a.ckpt --load b.ckpt --load c.ckpt --save abc.ckpt --weights hessian
ok $run_status "merge A B C"
# w = (1·1 + 4·6 + 0.25·0)/5.25 = 4.7619047619 (float 4.76190472), σ_w = 5.25^(−1/2) = 0.4364357805;
# b = (4·2 − 4·2 + 16·1)/24 = 0.6666666667 (float 0.666666687), σ_b = 24^(−1/2) = 0.2041241452
is "$(posterior abc.ckpt)" "mu.weight,0,4.76190472,0.436435789 mu.bias,0,0.666666687,0.204124153 " \
	"merge A B C: three runs, another optimizer among them (vogn)"

# ---- uniform weights -----------------------------------------------------------
run ./line merge --load a.ckpt --load b.ckpt --save abu.ckpt --weights uniform
ok $run_status "merge A B --weights uniform"
# w = (1 + 6)/2 = 3.5, b = (2 − 2)/2 = 0; σ from the same precision as above
is "$(posterior abu.ckpt)" "mu.weight,0,3.5,0.44721359 mu.bias,0,0,0.353553385 " \
	"merge A B, uniform: the means averaged, sigma from the summed precision"
run ./line merge --load a.ckpt --load d.ckpt --save ad.ckpt
is "$run_status/$run_err" \
	"1/./line: d.ckpt: optimizer adam learns no curvature (the checkpoint has no posterior sigma), so it cannot be weighted by its Hessian: merge with uniform weights, or train with ivon, vogn, badam or bbb" \
	"Hessian weights of an adam checkpoint: refused"
test ! -e ad.ckpt
ok $? "and nothing written"
run ./line merge --load a.ckpt --load d.ckpt --save ad.ckpt --weights uniform
is "$run_status/$run_out" \
	'0/{"merged": 2, "weights": "uniform", "posterior": false, "checkpoint": "ad.ckpt"}' \
	"uniform weights take an adam checkpoint (the result has no posterior)"
# w = (1 + 5)/2 = 3, b = (2 + 5)/2 = 3.5
is "$(posterior ad.ckpt)" "mu.weight,0,3,0 mu.bias,0,3.5,0 " "merge A D, uniform: the means"

# ---- the merged checkpoint is an ordinary one ------------------------------------
printf 'x,y\n1,5\n-1,-5\n' >line.csv
run ./line eval --load ab.ckpt --data line.csv --mc 0
# at the mean, w = 5, b = 0: predictions 5 and −5, exactly the targets
# (each target at its predictive's median, F(y) = 1/2: inside every central interval)
is "$run_status/$run_out" '0/{"n": 2, "mc": 0, "rmse": 0, "nll": 0.225791353, "entropy": 0.725791353, "mae": 0, "coverage_50": 1, "coverage_90": 1, "coverage_95": 1}' \
	"eval reads a merged checkpoint (at the mean: rmse 0, nll = log(0.5·sqrt(2π)), mae 0, full coverage)"
run ./line info --load ab.ckpt
is "$(echo "$run_out" | tail -1)" "checkpoint ab.ckpt: optimizer ivon, 0 epochs, 0 steps, with a posterior" \
	"info: the runs' optimizer, no training counters"
run ./line info --load abc.ckpt
is "$(echo "$run_out" | tail -1)" "checkpoint abc.ckpt: optimizer none, 0 epochs, 0 steps, with a posterior" \
	"info: runs of several optimizers give none"

# ---- bad input ---------------------------------------------------------------------
run ./line merge --load a.ckpt --save x.ckpt
is "$run_status/$run_err" "2/./line: 'merge' needs two checkpoints or more (--load A --load B ...), and 1 was given
Try './line --help'." "merge of one file"
run ./line merge --load a.ckpt --load b.ckpt
is "$run_status/$run_err" "2/./line: 'merge' needs --save CKPT
Try './line --help'." "merge without --save"

printf 'a,b,c,d,label\n1,2,3,4,0\n0,1,0,1,2\n' >blobs.csv
./other train --data blobs.csv --optimizer ivon --epochs 1 --quiet --save o.ckpt >/dev/null
ok $? "a checkpoint of another model"
run ./line merge --load a.ckpt --load o.ckpt --save x.ckpt
is "$run_status/$run_err" "1/./line: o.ckpt: this checkpoint belongs to model 'rt_bayes', not to model 'mg_line'" \
	"merging checkpoints of different models"
run ./line merge --load a.ckpt --load b.ckpt --save x.ckpt --weights fisher
is "$run_status/$run_err" "2/./line: --weights takes hessian or uniform, not 'fisher'
Try './line --help'." "an unknown weighting"
run ./line merge --load a.ckpt --load ./a.ckpt --save x.ckpt
is "$run_status/$run_err" "1/./line: 'merge': a.ckpt and ./a.ckpt are the same file: each run counts once (the file twice would count its run's precision twice)" \
	"one checkpoint under two names is refused"
ok "$(test ! -e x.ckpt; echo $?)" "and nothing is written"
run ./line merge --load a.ckpt --load b.ckpt --save b.ckpt
is "$run_status/$run_err" "2/./line: --save 'b.ckpt' is the file given to --load: writing it would destroy that input
Try './line --help'." "--save over an input"
./tool copy a.ckpt a2.ckpt && cmp a.ckpt a2.ckpt
ok $? "a network loaded as a mixture of one and saved gives the same bytes"
printf 'x,y\n1,1\n2,3\n3,2\n' >s.csv
./line train --data s.csv --optimizer ivon --epochs 1 --quiet --standardize --save s1.ckpt >/dev/null &&
	./line train --data line.csv --optimizer ivon --epochs 1 --quiet --standardize --save s2.ckpt >/dev/null
ok $? "two runs standardised on other data"
run ./line merge --load s1.ckpt --load s2.ckpt --save x.ckpt
is "$run_status/$run_err" "1/./line: s1.ckpt and s2.ckpt standardise their inputs differently: the networks would see other inputs (train them with --standardize on the same data, or all without)" \
	"runs standardised differently"
run ./line merge --load s1.ckpt --load a.ckpt --save x.ckpt --weights uniform
is "$run_status/$run_err" "1/./line: s1.ckpt and a.ckpt standardise their inputs differently: the networks would see other inputs (train them with --standardize on the same data, or all without)" \
	"one run standardised, the other not"
./line train --data s.csv --optimizer ivon --epochs 1 --quiet --members 2 --save mix.ckpt >/dev/null
ok $? "a mixture of 2"
run ./line merge --load mix.ckpt --load a.ckpt --save x.ckpt
is "$run_status/$run_err" "1/./line: mix.ckpt: the checkpoint is a mixture of 2 networks (train --members): eval and predict read it, and this needs one network" \
	"a mixture is not one network to merge"
test ! -e x.ckpt
ok $? "no failed merge wrote its --save"

done_testing
