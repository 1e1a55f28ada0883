#!/bin/sh
# compare_smoke.sh: `make compare`'s and `make lenet`'s script,
# examples/compare.sh, runs end to end on a tiny data set (about 25
# seconds on one core), so that a driver option it passes, a JSON key it
# reads or a column it writes cannot break unnoticed.  The five programs
# are compiled here from examples/fashion_{point,dropout,bayes,lenet,
# lenet_bayes}.bnn as `bnnc --main` and the C compiler make them;
# `datagen images` writes 300 training images (270 fit, the last tenth
# validate) and 50 test images; COMPARE_EPOCHS=2 trains every row for two
# epochs (docs/examples.md, "A quick run").  Checks, for the mlp and the
# lenet tables:
#   - the script exits 0 and writes PREFIX.csv and PREFIX.md, the
#     markdown also on standard output;
#   - the CSV's header line is exactly the documented one, and its rows
#     are exactly the documented methods, in order, each with its model,
#     optimizer and MC sample count (0 for a point network, 32 else);
#   - every metric is a finite number in its range: accuracy, ECE, MCE,
#     the OOD AUROCs and the conformal coverage in [0, 1], NLL > 0, Brier
#     in [0, 2], the set size in [0, 10] (ten classes), the best epoch in
#     1..2, seconds >= 0, a positive parameter count;
#   - the markdown's title says 2 epochs and the 30 validation images (the
#     knobs reach it), its header line is exact, and it has one row per
#     CSV row, in the same order.
# And COMPARE_EPOCHS=0 is refused with exit status 2.  The script writes
# about 450 MB of checkpoints to $TAP_TMP (the optimizers' state of a
# 670,000-weight MLP, 28 times); they go with it.
#
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"

out=$TAP_TMP/out data=$TAP_TMP/data
mkdir "$out" || bail_out "cannot create $out"
# shellcheck disable=SC2086  # the flags are lists of words
for m in fashion_point fashion_dropout fashion_bayes fashion_lenet fashion_lenet_bayes; do
	"$BNNC" --main -o "$out/$m.c" "$top_srcdir/examples/$m.bnn" &&
		$CC $BNN_CFLAGS -o "$out/$m" "$out/$m.c" $BNN_LIBS
	ok $? "examples/$m.bnn compiles"
done
DATAGEN=$top_builddir/examples/datagen
export DATAGEN
run "$DATAGEN" images "$data" --n-train 300 --n-test 50 --seed 1
is "$run_status" 0 "datagen images writes the tiny data set$run_err"

COMPARE_EPOCHS=0 FASHION_MNIST_DIR=$data run sh "$top_srcdir/examples/compare.sh" "$out"
is "$run_status:$run_err" \
	"2:compare.sh: COMPARE_EPOCHS='0': the number of epochs must be a positive integer" \
	"COMPARE_EPOCHS=0 is refused"

header=method,model,optimizer,mc,accuracy,nll,ece,mce,brier,ood_auroc,ood_auroc_mi,conformal_coverage,conformal_set_size,accuracy_mean,nll_mean,ece_mean,best_epoch,seconds_per_epoch,seconds,parameters
md_header='| method | optimizer | MC | accuracy | NLL | ECE | Brier | OOD AUROC (entropy) | OOD AUROC (MI) | 90% set coverage | set size | accuracy @mean | best epoch | s/epoch | seconds |'

# table NET PREFIX ROWS: runs compare.sh NET on the tiny set and checks
# OUT/PREFIX.csv and .md; ROWS is "method,model,optimizer,mc" per line,
# the rows the script's header comment documents, in its order.
table() {
	t_net=$1 t_prefix=$2 t_rows=$3
	t_start=$(date +%s)
	COMPARE_EPOCHS=2 FASHION_MNIST_DIR=$data run sh "$top_srcdir/examples/compare.sh" "$out" "$t_net"
	diag "compare.sh $t_net: $(($(date +%s) - t_start)) s"
	is "$run_status" 0 "compare.sh $t_net exits 0"
	[ "$run_status" = 0 ] || diag "$(printf '%s\n' "$run_err" | tail -n 3)"
	csv=$out/$t_prefix.csv md=$out/$t_prefix.md
	[ -s "$csv" ] && [ -s "$md" ]
	ok $? "$t_net: $t_prefix.csv and $t_prefix.md are written"
	is "$(head -n 1 "$csv" 2>/dev/null)" "$header" "$t_net: the CSV's header line"
	is "$(awk -F, 'NR > 1 { print $1 "," $2 "," $3 "," $4 }' "$csv" 2>/dev/null)" "$t_rows" \
		"$t_net: one row per documented method, in order, with its model, optimizer and MC"
	# Every cell from column 5 on, checked against its range; each bad
	# one is printed as "method column value".
	bad=$(awk -F, -v cols="$header" 'BEGIN { split(cols, name, ",") }
	function num(s) { return s ~ /^-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/ }
	NR == 1 { next }
	NF != 20 { print $1 " has " NF " fields"; next }
	{
		for (i = 5; i <= 20; i++) {
			v = $i; c = name[i]
			if (!num(v)) { print $1 " " c " \"" v "\" is not a finite number"; continue }
			v += 0
			if (c == "nll" || c == "nll_mean") okv = v > 0
			else if (c == "brier") okv = v >= 0 && v <= 2
			else if (c == "conformal_set_size") okv = v >= 0 && v <= 10
			else if (c == "best_epoch") okv = v == int(v) && v >= 1 && v <= 2
			else if (c == "seconds_per_epoch" || c == "seconds") okv = v >= 0
			else if (c == "parameters") okv = v == int(v) && v > 0
			else okv = v >= 0 && v <= 1
			if (!okv) print $1 " " c " " $i " is out of range"
		}
	}' "$csv" 2>&1)
	is "$bad" "" "$t_net: every metric is a finite number in its range"
	is "$(sed -n 1p "$md" 2>/dev/null | sed 's/^Test set of .*, \([0-9]*\) epochs, .*/\1/')" 2 \
		"$t_net: the title gives COMPARE_EPOCHS' 2 epochs"
	grep -q 'calibrated on the 30 validation images' "$md" 2>/dev/null
	ok $? "$t_net: the 30 validation images (a tenth of 300) are named"
	is "$(sed -n 4,5p "$md" 2>/dev/null)" "$md_header
| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |" \
		"$t_net: the markdown's header lines"
	is "$(sed -n '6,$p' "$md" 2>/dev/null | cut -d'|' -f2 | tr -d ' ')" \
		"$(printf '%s\n' "$t_rows" | cut -d, -f1)" "$t_net: the markdown has the CSV's rows"
	is "$run_out" "$(cat "$md" 2>/dev/null)" "$t_net: standard output is $t_prefix.md"
}

table mlp compare "adam,fashion_point,adam,0
sgd,fashion_point,sgd,0
mcdrop,fashion_dropout,adam,32
bbb,fashion_bayes,bbb,32
vogn,fashion_bayes,vogn,32
ivon,fashion_bayes,ivon,32
badam,fashion_bayes,badam,32
adam_defaults,fashion_point,adam,0
sgd_defaults,fashion_point,sgd,0
mcdrop_defaults,fashion_dropout,adam,32
bbb_defaults,fashion_bayes,bbb,32
ivon_defaults,fashion_bayes,ivon,32
vogn_defaults,fashion_bayes,vogn,32
badam_defaults,fashion_bayes,badam,32
temp_scaled,fashion_point,adam,0
laplace,fashion_point,adam,32
laplace_valid,fashion_point,adam,32
laplace_ll,fashion_point,adam,32
swag,fashion_point,adam,32
ensemble5,fashion_point,adam,0
multi_ivon,fashion_bayes,ivon,32
adam_tuned,fashion_point,adam,0
sgd_tuned,fashion_point,sgd,0
mcdrop_tuned,fashion_dropout,adam,32
bbb_tuned,fashion_bayes,bbb,32
vogn_tuned,fashion_bayes,vogn,32
ivon_tuned,fashion_bayes,ivon,32
badam_tuned,fashion_bayes,badam,32"

table lenet compare_lenet "adam,fashion_lenet,adam,0
ivon,fashion_lenet_bayes,ivon,32
vogn,fashion_lenet_bayes,vogn,32
adam_defaults,fashion_lenet,adam,0
ivon_defaults,fashion_lenet_bayes,ivon,32
vogn_defaults,fashion_lenet_bayes,vogn,32"

done_testing
