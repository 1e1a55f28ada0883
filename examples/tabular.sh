#!/bin/sh
# tabular.sh: Adam, IVON and VOGN with their defaults only on small tabular
# classification sets, run by `make tabular` as
#   sh examples/tabular.sh examples/out
# with BNNC, EXAMPLE_CC and EXAMPLE_LIBS in the environment (the compiler
# and the compile and link commands of the other examples).
#
# The data: seven sets of Debian's r-cran-mlbench (UCI data: breast cancer,
# Pima diabetes, sonar, ionosphere, glass, vehicle silhouettes, Landsat
# satellite), exported to CSV by examples/tabular_export.R (Rscript), each
# split 70/30 at random with a fixed seed.  Nothing here is tuned: issue
# 21 asks the variational optimizers to beat Adam's uncertainty on such
# data with their defaults (docs/optimizers/ivon.md, vogn.md).
#
# The network, written here for each set (F features, C classes): two
# hidden layers of 64 ReLU units, no prior statement (the layers' default
# prior), `point` for Adam and `posterior meanfield` for IVON and VOGN,
# compiled with `bnnc --main`.  Each optimizer trains with nothing but
# --optimizer, --epochs E (10 and 100: a short and a long budget),
# --standardize and --seed 1 (the trainer's default batch), and `eval`
# scores the test rows (32 samples of a posterior).
#
# Output: the table on stdout (markdown), OUT/tabular.md (the same),
# OUT/tabular.csv, and per run OUT/tabular/SET_OPT_E.{ckpt,json}.
#
# POSIX sh; stops at the first error with a message.  Exit status: 0 on
# success, 1 when a step fails, 2 when called wrongly.

me=tabular.sh

. "$(dirname "$0")/common.sh"

one_outdir "$@"
out=$1
dir=$out/tabular
here=$(dirname "$0")
sets="breastcancer pima sonar ionosphere glass vehicle satellite"
OPENBLAS_NUM_THREADS=1
export OPENBLAS_NUM_THREADS

[ -n "$BNNC" ] && [ -n "$EXAMPLE_CC" ] || die "BNNC and EXAMPLE_CC are not set: run 'make tabular'"
command -v Rscript >/dev/null 2>&1 ||
	die "Rscript is not installed (Debian: apt-get install r-cran-mlbench, which brings R)"
mkdir -p "$dir" || die "cannot create $dir"
Rscript "$here/tabular_export.R" "$dir" ||
	die "could not export the mlbench data sets (Debian: apt-get install r-cran-mlbench)"

# model NAME F C POSTERIOR: the .bnn text of the network.
model() {
	printf 'model %s;\ninput x[%s];\n%s\nh1 = relu(dense(x, 64));\nh2 = relu(dense(h1, 64));\nlogits = dense(h2, %s);\nlabel ~ categorical(logits);\n' \
		"$1" "$2" "$4" "$3"
}

csv=$out/tabular.csv
echo "set,rows,features,classes,optimizer,epochs,accuracy,nll,ece,brier,ece_floor" >"$csv.tmp" ||
	die "cannot write $csv.tmp"
for s in $sets; do
	read -r _ f _ c _ n <"$dir/$s.info" || die "cannot read $dir/$s.info"
	for kind in point bayes; do
		post=
		[ "$kind" = bayes ] && post='posterior meanfield;'
		prog=$dir/${s}_$kind
		model "tab_${s}_$kind" "$f" "$c" "$post" >"$prog.bnn" || die "cannot write $prog.bnn"
		"$BNNC" --main -o "$prog.c" "$prog.bnn" || die "bnnc failed on $prog.bnn"
		# shellcheck disable=SC2086  # EXAMPLE_CC and EXAMPLE_LIBS are word lists
		$EXAMPLE_CC -o "$prog" "$prog.c" $EXAMPLE_LIBS || die "could not compile $prog.c"
	done
	for e in 10 100; do
		for opt in adam ivon vogn; do
			prog=$dir/${s}_bayes
			[ "$opt" = adam ] && prog=$dir/${s}_point
			run=$dir/${s}_${opt}_$e
			"$prog" train --data "$dir/${s}_train.csv" --standardize --optimizer "$opt" \
				--epochs "$e" --seed 1 --threads 1 --save "$run.ckpt" \
				>"$run.train.json" 2>"$run.train.log" || {
				tail -n 3 "$run.train.log" >&2
				die "$s: $opt, $e epochs: training failed (the log is $run.train.log)"
			}
			"$prog" eval --load "$run.ckpt" --data "$dir/${s}_test.csv" --seed 1 \
				--threads 1 >"$run.json" || die "$s: $opt, $e epochs: eval failed"
			echo "$s,$n,$f,$c,$opt,$e,$(json_get accuracy "$run.json"),$(json_get nll "$run.json"),$(json_get ece "$run.json"),$(json_get brier "$run.json"),$(json_get ece_floor "$run.json")" >>"$csv.tmp" ||
				die "cannot write $csv.tmp"
		done
		echo "$me: $s, $e epochs: done" >&2
	done
done
mv "$csv.tmp" "$csv" || die "cannot write $csv"

# The table: one row per set and budget, the three optimizers side by side.
awk -F, '
NR == 1 {
	print "Test rows (30% of each set), defaults only, accuracy / NLL / ECE (20 bins) and, in brackets, the ECE floor (the ECE a perfectly calibrated predictor with the same confidences shows on these rows on average); IVON and VOGN predict with 32 samples.\n"
	print "| set | rows | features | classes | epochs | Adam | IVON | VOGN |"
	print "| --- | ---: | ---: | ---: | ---: | --- | --- | --- |"
	next
}
{
	key = $1 "," $6
	if (!(key in seen)) { seen[key] = 1; order[++k] = key; head[key] = sprintf("| %s | %s | %s | %s | %s", $1, $2, $3, $4, $6) }
	cell[key, $5] = sprintf("%.3f / %.3f / %.3f (%.3f)", $7, $8, $9, $11)
	ece[key, $5] = $9
	floor[key, $5] = $11
}
END {
	for (i = 1; i <= k; i++)
		printf "%s | %s | %s | %s |\n", head[order[i]], cell[order[i], "adam"], cell[order[i], "ivon"], cell[order[i], "vogn"]
	# issue 21 asks for an ECE of at most half of Adam'"'"'s; where the
	# method'"'"'s own floor is above that, even a calibrated model would
	# miss it on average
	for (i = 1; i <= k; i++)
		for (m = 1; m <= 2; m++) {
			o = m == 1 ? "ivon" : "vogn"
			half = ece[order[i], "adam"] / 2
			met[o] += ece[order[i], o] <= half
			out[o] += floor[order[i], o] > half
		}
	printf "\nECE at most half of Adam'"'"'s: IVON %d of %d runs, VOGN %d of %d; the method'"'"'s ECE floor above half of Adam'"'"'s ECE (beyond what these test rows can show, on average): IVON %d of %d, VOGN %d of %d.\n", met["ivon"], k, met["vogn"], k, out["ivon"], k, out["vogn"], k
}' "$csv" >"$out/tabular.md.tmp" || die "cannot write $out/tabular.md.tmp"
mv "$out/tabular.md.tmp" "$out/tabular.md" || die "cannot write $out/tabular.md"
cat "$out/tabular.md"
