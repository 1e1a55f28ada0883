#!/bin/sh
# laplace_cli.sh: the post-hoc posteriors of point networks through generated
# programs (docs/laplace.md, docs/swag.md): `MODEL laplace` and
# `train --set swag=K` on t/models/rt_blobs.bnn.  Checks: laplace's
# default fit is the last layer's (the bytes of --weights last-layer, of the
# older --last-layer and of its options spelled out), and --weights all the
# diagonal of every weight (the bytes of the old default's options spelled
# out); the JSON lines; the default prior precision (auto); the checkpoint
# round trip (eval samples it by default; eval and predict give the same
# numbers after a load and save); the refusals with their exact messages
# and statuses (a meanfield checkpoint, a Laplace checkpoint again, data of
# another shape, bad options, options of the other fit, models the default
# fit does not take, swag longer than the run, swag_rank without swag);
# both structures of the last layer, eval's --laplace-predictive, and
# calibrate of a last-layer checkpoint; that one prediction (the probit's,
# calibrated or not, one sample, a point network's identical samples) has
# no split: eval's and predict's mutual information exactly 0 and the
# expected entropy the entropy, as printed.  The estimators themselves are
# checked against brute force in t/laplace.c, t/laplace_last_layer.c and
# t/swag.c.
. "$TAP_SH"

cd "$TAP_TMP" || bail_out "no temporary directory"

# Deterministic blobs, as t/resume.sh: class i % 3, noise from an LCG.
blobs() { # N SEED FEATURES
	awk -v n="$1" -v seed="$2" -v f="$3" 'BEGIN {
		split("2 0 0 0 0 2 0 -1 -2 -1 0 1", c, " ")
		s = seed
		for (j = 1; j <= f; j++)
			printf "f%d,", j
		print "class"
		for (i = 0; i < n; i++) {
			k = i % 3
			line = ""
			for (j = 1; j <= f; j++) {
				s = (s * 1103515245 + 12345) % 2147483648
				u = s / 2147483648
				line = line sprintf("%.6f,", c[(k * 4 + j - 1) % 12 + 1] + 1.6 * (u - 0.5))
			}
			print line k
		}
	}'
}
blobs 300 1 4 >train.csv
blobs 30 2 5 >wide.csv

build() { # NAME BNN
	"$BNNC" --main -o "$1.c" "$2" && $CC $BNN_CFLAGS -o "$1" "$1.c" $BNN_LIBS
}
build point "$top_srcdir/t/models/rt_blobs.bnn"
ok $? "rt_blobs builds"
build bayes "$top_srcdir/t/models/rt_bayes.bnn"
ok $? "rt_bayes builds"
build tanh "$top_srcdir/t/models/ll_tanh.bnn"
ok $? "ll_tanh builds (a tanh output node)"
build gauss "$top_srcdir/t/models/mpi_point.bnn"
ok $? "mpi_point builds (a gaussian model)"

# One prediction has no split (docs/metrics.md): eval's expected_entropy is
# its entropy as printed and its mutual_information 0, exactly; and so in
# every row of predict's CSV, whose last three columns are the entropy, the
# expected entropy and the mutual information.
json_key() { # JSON KEY: the value, or "no KEY"
	v=$(printf '%s\n' "$1" | sed -n "s/.*\"$2\": \([^,}]*\)[,}].*/\1/p")
	printf '%s\n' "${v:-no $2}"
}
no_split() { # JSON WHAT: two checks
	is "$(json_key "$1" mutual_information)" 0 "$2: mutual_information is 0"
	is "$(json_key "$1" expected_entropy)" "$(json_key "$1" entropy)" \
		"$2: expected_entropy is entropy"
}
no_split_rows() { # CSV WHAT: the rows with a split, counted (none: "no rows")
	is "$(awk -F, 'NR > 1 { n++; if ($(NF - 2) "" != $(NF - 1) "" || $NF "" != "0") bad++ }
		END { print n ? bad + 0 : "no rows" }' "$1")" 0 \
		"$2: every row's entropies are equal and its mutual information 0"
}

./point train --data train.csv --quiet --epochs 4 --batch 32 --save p.ckpt >/dev/null
ok $? "a point network trains"
# Its Monte-Carlo samples are all the same network (bnn_predict_draws).
run ./point eval --load p.ckpt --data train.csv --mc 4
no_split "$run_out" "the point network with --mc 4"

# ---- the default: the last layer -----------------------------------------------
# The diagonal of every weight predicts badly (docs/laplace.md): without
# options, laplace fits the last layer, Kronecker-factored, δ auto.
run ./point laplace --load p.ckpt --data train.csv --save d.ckpt
is "$run_status" 0 "laplace without options"
case $run_out in
'{"kind": "laplace", "hessian": "kfac", "examples": 300, "prior_precision": '*'"checkpoint": "d.ckpt"}') r=0 ;;
*) r=1 ;;
esac
ok $r "fits the last layer, Kronecker-factored (hessian kfac)" || diag "$run_out"
./point laplace --weights last-layer --load p.ckpt --data train.csv --save wll.ckpt >/dev/null &&
	cmp -s d.ckpt wll.ckpt
ok $? "the checkpoint bytes of --weights last-layer"
./point laplace --weights last-layer --structure kron --prior-precision auto --load p.ckpt \
	--data train.csv --save wllk.ckpt >/dev/null && cmp -s d.ckpt wllk.ckpt
ok $? "and of --weights last-layer --structure kron --prior-precision auto"
./point laplace --last-layer --load p.ckpt --data train.csv --save oll.ckpt >/dev/null &&
	cmp -s d.ckpt oll.ckpt
ok $? "--last-layer, the older spelling, gives the same bytes"
./point laplace --last-layer --weights last-layer --load p.ckpt --data train.csv --save oll.ckpt \
	>/dev/null && cmp -s d.ckpt oll.ckpt
ok $? "and so does --last-layer --weights last-layer"

# ---- laplace --weights all: the diagonal of every weight -----------------------
run ./point laplace --weights all --load p.ckpt --data train.csv --prior-precision auto --save l.ckpt
is "$run_status" 0 "laplace --weights all --prior-precision auto"
case $run_out in
'{"kind": "laplace", "hessian": "mc_fisher", "examples": 300, "prior_precision": '*'"checkpoint": "l.ckpt"}') r=0 ;;
*) r=1 ;;
esac
ok $r "prints its JSON line, hessian mc_fisher" || diag "$run_out"
auto=$run_out
# auto is the default (δ = 1 predicted badly, docs/laplace.md); 1 is given
run ./point laplace --weights all --load p.ckpt --data train.csv --save l1.ckpt
is "$run_status $(printf '%s\n' "$run_out" | sed 's/"seconds": [^,]*, //')" \
	"0 $(printf '%s\n' "$auto" | sed 's/"seconds": [^,]*, //; s/l\.ckpt/l1.ckpt/')" \
	"laplace --weights all without --prior-precision chooses δ as auto does"
cmp -s l.ckpt l1.ckpt
ok $? "to the same checkpoint bytes"
# The default before the last layer became it, every option spelled out.
./point laplace --weights all --fisher mc --fisher-samples 1 --prior-precision auto \
	--load p.ckpt --data train.csv --save old.ckpt >/dev/null && cmp -s l.ckpt old.ckpt
ok $? "--weights all gives the bytes of the old default's options (mc, 1 sample, auto)"
run ./point laplace --weights all --load p.ckpt --data train.csv --prior-precision 1 --save l1.ckpt
case $run_out in *'"prior_precision": 1,'*) r=0 ;; *) r=1 ;; esac
ok $r "--prior-precision 1 gives δ 1" || diag "$run_out"
run ./point eval --load l.ckpt --data train.csv
case $run_out in *'"mc": 32,'*'"mutual_information": 0,'*) r=1 ;; *'"mc": 32,'*) r=0 ;; *) r=1 ;; esac
ok $r "eval samples the Laplace posterior (32 samples, mutual information > 0)" || diag "$run_out"
run ./point eval --load l.ckpt --data train.csv --mc 1
no_split "$run_out" "one sample of it (--mc 1)"
./point predict --load l.ckpt --data train.csv --out a.csv &&
	./point posterior --load l.ckpt --out post.csv
ok $? "predict and posterior read it"
run ./point info --load l.ckpt
case $run_out in *"with a posterior"*) r=0 ;; *) r=1 ;; esac
ok $r "info says it has a posterior"
./point laplace --weights all --load p.ckpt --data train.csv --fisher empirical --prior-precision 3 --save e.ckpt >e.json
ok $? "laplace --weights all --fisher empirical --prior-precision 3"
case $(cat e.json) in *'"hessian": "emp_fisher"'*'"prior_precision": 3,'*) r=0 ;; *) r=1 ;; esac
ok $r "says emp_fisher and δ 3"

# ---- the last layer, full (estimator: t/laplace_last_layer.c) ------------------
run ./point laplace --structure full --load p.ckpt --data train.csv --prior-precision auto --save ll.ckpt
is "$run_status" 0 "laplace --structure full --prior-precision auto"
case $run_out in
'{"kind": "laplace", "hessian": "ggn", "examples": 300, "prior_precision": '*'"checkpoint": "ll.ckpt"}') r=0 ;;
*) r=1 ;;
esac
ok $r "prints its JSON line, hessian ggn" || diag "$run_out"
run ./point eval --load ll.ckpt --data train.csv
case $run_out in *'"mc": 32,'*) r=0 ;; *) r=1 ;; esac
ok $r "eval predicts by the probit approximation (mc 32 reported)" || diag "$run_out"
no_split "$run_out" "the probit's one prediction"
run ./point eval --load ll.ckpt --data train.csv --laplace-predictive mc --mc 16
case $run_out in *'"mc": 16,'*'"mutual_information": 0,'*) r=1 ;; *'"mc": 16,'*) r=0 ;; *) r=1 ;; esac
ok $r "--laplace-predictive mc samples the last layer" || diag "$run_out"
./point predict --load ll.ckpt --data train.csv --out ll1.csv &&
	./point predict --load ll.ckpt --data train.csv --laplace-predictive probit --out ll2.csv &&
	cmp -s ll1.csv ll2.csv
ok $? "predict reads it; probit is the default"
no_split_rows ll1.csv "predict by the probit"
run ./point eval --load ll.ckpt --data train.csv --laplace-predictive exact
is "$(printf '%s\n' "$run_err" | sed -n 1p)" "./point: --laplace-predictive: 'exact' is not probit or mc" \
	"--laplace-predictive exact is refused"
run ./point eval --load l.ckpt --data train.csv --laplace-predictive mc
is "$(printf '%s\n' "$run_err" | sed -n 1p)" "./point: --laplace-predictive: 'l.ckpt' has no last-layer Laplace posterior (laplace --weights last-layer, the default)" \
	"--laplace-predictive of a diagonal Laplace checkpoint is refused"

# ---- the last layer, Kronecker-factored (the default structure) ----------------
run ./point laplace --weights last-layer --load p.ckpt --data train.csv --prior-precision auto --save kr.ckpt
is "$run_status" 0 "laplace --weights last-layer (kron by default)"
case $run_out in
'{"kind": "laplace", "hessian": "kfac", "examples": 300, "prior_precision": '*'"checkpoint": "kr.ckpt"}') r=0 ;;
*) r=1 ;;
esac
ok $r "prints its JSON line, hessian kfac" || diag "$run_out"
run ./point eval --load kr.ckpt --data train.csv
case $run_out in *'"mc": 32,'*) r=0 ;; *) r=1 ;; esac
ok $r "eval of kron predicts by the probit approximation (mc 32 reported)" || diag "$run_out"
no_split "$run_out" "kron's probit"
run ./point eval --load kr.ckpt --data train.csv --laplace-predictive mc --mc 16
case $run_out in *'"mc": 16,'*'"mutual_information": 0,'*) r=1 ;; *'"mc": 16,'*) r=0 ;; *) r=1 ;; esac
ok $r "--laplace-predictive mc samples the kron last layer" || diag "$run_out"
./point predict --load kr.ckpt --data train.csv --out kr1.csv && ./point posterior --load kr.ckpt --out krp.csv
ok $? "predict and posterior read it"
no_split_rows kr1.csv "predict by kron's probit"
# Temperature scaling composes with the probit predictive: calibrate fits T
# on the probit-scaled logits, and eval divides them by T (docs/calibration.md).
./point calibrate --load kr.ckpt --data train.csv --save krt.ckpt >krt.json
ok $? "calibrate takes a last-layer Laplace checkpoint"
after=$(sed -n 's/.*"nll_after": \([^,]*\),.*/\1/p' krt.json)
run ./point eval --load krt.ckpt --data train.csv
nll=$(printf '%s\n' "$run_out" | sed -n 's/.*"nll": \([^,]*\),.*/\1/p')
r=$(awk -v a="$after" -v b="$nll" 'BEGIN { d = a - b; if (d < 0) d = -d; print (a != "" && d <= 1e-6 * a) ? 0 : 1 }')
ok $r "eval of the calibrated checkpoint: the probit predictive at T, calibrate's nll_after ($after, eval $nll)"
no_split "$run_out" "the calibrated probit"
run ./point laplace --structure diag --load p.ckpt --data train.csv --save l2.ckpt
is "$run_status" 2 "--structure diag is a usage error"
is "$(printf '%s\n' "$run_err" | sed -n 1p)" "./point: --structure: 'diag' is not kron or full" \
	"with a message"

# ---- swag ----------------------------------------------------------------------
./point train --data train.csv --quiet --epochs 5 --batch 32 --set swag=3 --set swag_rank=2 --save s.ckpt >/dev/null
ok $? "train --set swag=3 --set swag_rank=2"
./point eval --load s.ckpt --data train.csv --seed 4 >s1.json &&
	./point predict --load s.ckpt --data train.csv --seed 4 --out s1.csv
ok $? "eval and predict sample it"
case $(cat s1.json) in *'"mc": 32,'*) r=0 ;; *) r=1 ;; esac
ok $r "with 32 samples by default"
run ./point train --data train.csv --quiet --epochs 6 --resume s.ckpt --save s.ckpt
is "$run_status" 1 "a SWAG checkpoint cannot be resumed"

# ---- refusals ------------------------------------------------------------------
./bayes train --data train.csv --quiet --optimizer ivon --epochs 1 --save b.ckpt >/dev/null
run ./bayes laplace --load b.ckpt --data train.csv --save lb.ckpt
is "$run_status" 1 "laplace of a meanfield checkpoint fails"
is "$run_err" "./bayes: laplace needs a point network, and layer 'h_dense' of model 'rt_bayes' has a meanfield posterior of its own" \
	"naming the layer and its posterior"
run ./point laplace --load l.ckpt --data train.csv --save l2.ckpt
is "$run_err" "./point: laplace needs a point network, and this state has a laplace posterior already" \
	"laplace of a Laplace checkpoint is refused"
run ./point laplace --load s.ckpt --data train.csv --save l2.ckpt
is "$run_err" "./point: laplace needs a point network, and this state has a swag posterior already" \
	"and of a SWAG checkpoint"
run ./point laplace --load p.ckpt --data wide.csv --save l2.ckpt
is "$run_status" 1 "data of another shape fails"
is "$run_err" "./point: wide.csv: 5 feature columns but the model takes 4" \
	"with both shapes"
run ./point laplace --load p.ckpt --data train.csv --prior-precision -1 --save l2.ckpt
is "$run_status" 2 "--prior-precision -1 is a usage error"
is "$(printf '%s\n' "$run_err" | sed -n 1p)" "./point: --prior-precision: '-1' is not a number > 0 or 'auto'" \
	"with a message"
run ./point laplace --weights all --load p.ckpt --data train.csv --fisher exact --save l2.ckpt
is "$(printf '%s\n' "$run_err" | sed -n 1p)" "./point: --fisher: 'exact' is not mc or empirical" \
	"--fisher exact is refused"
run ./point laplace --weights all --load p.ckpt --data train.csv --fisher empirical --fisher-samples 4 --save l2.ckpt
is "$(printf '%s\n' "$run_err" | sed -n 1p)" "./point: --fisher-samples draws labels for --fisher mc, not for --fisher empirical" \
	"--fisher-samples with the empirical Fisher is refused"
# The options of one fit with the other, each named.
ll_only="the last layer's fit (the default, --weights last-layer) computes the exact GGN of the output layer, with no label draws"
while IFS='|' read -r args message; do
	run ./point laplace $args --load p.ckpt --data train.csv --save l2.ckpt
	is "$run_status $(printf '%s\n' "$run_err" | sed -n 1p)" "2 ./point: $message" \
		"laplace $args: a usage error"
done <<ROWS
--fisher empirical|--fisher applies to --weights all: $ll_only
--fisher mc|--fisher applies to --weights all: $ll_only
--fisher-samples 4|--fisher-samples applies to --weights all: $ll_only
--weights last-layer --fisher empirical|--fisher applies to --weights all: $ll_only
--last-layer --fisher empirical|--fisher applies to --weights all: $ll_only
--weights all --structure full|--structure applies to --weights last-layer (the default): --weights all fits a diagonal
--weights some|--weights: 'some' is not last-layer or all
--weights all --last-layer|--last-layer is --weights last-layer, and --weights all was given: choose one
ROWS
# Models the default fit does not take: refused with the reason, never
# fitted otherwise; --weights all fits them.
./tanh train --data train.csv --quiet --epochs 1 --save t.ckpt >/dev/null
ok $? "ll_tanh trains"
run ./tanh laplace --load t.ckpt --data train.csv --save l2.ckpt
is "$run_status" 1 "laplace of a model whose output node is not a dense layer fails"
is "$run_err" "./tanh: laplace --weights last-layer (the default) needs a model whose output node is a dense layer, and output node 'z' of model 'll_tanh' is a tanh: use --weights all" \
	"naming the node and the way out"
run ./tanh laplace --load t.ckpt --data no-such.csv --save l2.ckpt
is "$run_err" "./tanh: laplace --weights last-layer (the default) needs a model whose output node is a dense layer, and output node 'z' of model 'll_tanh' is a tanh: use --weights all" \
	"before the data are read"
run ./tanh laplace --weights all --load t.ckpt --data train.csv --save tl.ckpt
case $run_status$run_out in 0*'"hessian": "mc_fisher"'*) r=0 ;; *) r=1 ;; esac
ok $r "which --weights all fits" || diag "$run_out"
./gauss train --data train.csv --target class --quiet --epochs 1 --save g.ckpt >/dev/null
ok $? "mpi_point trains (a gaussian regression of the class)"
run ./gauss laplace --load g.ckpt --data train.csv --target class --save l2.ckpt
is "$run_status" 1 "laplace of a gaussian model fails"
is "$run_err" "./gauss: laplace --weights last-layer (the default) takes categorical and bernoulli models, and model 'mpi_point' is gaussian: use --weights all" \
	"naming the likelihood and the way out"
run ./gauss laplace --weights all --load g.ckpt --data train.csv --target class --save gl.ckpt
case $run_status$run_out in 0*'"hessian": "mc_fisher"'*) r=0 ;; *) r=1 ;; esac
ok $r "which --weights all fits" || diag "$run_out"
run ./point laplace --load p.ckpt --data train.csv
is "$(printf '%s\n' "$run_err" | sed -n 1p)" "./point: 'laplace' needs --save CKPT" \
	"laplace without --save is refused"
ok "$([ ! -e l2.ckpt ]; echo $?)" "and no refused command wrote a checkpoint"
run ./point train --data train.csv --quiet --epochs 10 --set swag=12 --save x.ckpt
is "$run_status" 2 "swag longer than the run is a usage error"
is "$(printf '%s\n' "$run_err" | sed -n 1p)" "./point: option 'swag': collecting the last 12 epochs takes at least 12, and training runs 10 (epochs)" \
	"saying both numbers"
run ./point train --data train.csv --quiet --set swag_rank=5 --save x.ckpt
is "$(printf '%s\n' "$run_err" | sed -n 1p)" "./point: option 'swag_rank' belongs to SWAG: set swag=K too (its last K epochs)" \
	"swag_rank without swag is refused"
run ./bayes train --data train.csv --quiet --optimizer vogn --set swag=1 --save x.ckpt
is "$(printf '%s\n' "$run_err" | sed -n 1p)" "./bayes: option 'swag' is not used by optimizer 'vogn', only by sgd, adam and adamw: leave it out or choose one of those" \
	"swag with vogn is refused"

done_testing
