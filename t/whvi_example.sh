#!/bin/sh
# whvi_example.sh: `make whvi`'s script, examples/whvi.sh, runs end to end
# (about ten seconds): its six regression programs are compiled here from
# examples/whvi_*.bnn as `bnnc --main` and the C compiler make them, the
# script trains and evaluates each on the 1-D toy and the diabetes data,
# and its table must list the six runs with finite numbers, WHVI's
# posterior a fraction of the mean-field one's (the counts of bnnc
# --summary), and WHVI fitting the diabetes data at least as well as a
# constant does (the test rows' sd is 70.8; the fixed seed gives 56.7).
#
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"

out=$TAP_TMP/out
mkdir "$out" || exit 1
for m in whvi_toy1d whvi_toy1d_mf whvi_toy1d_mcd whvi_diabetes whvi_diabetes_mf whvi_diabetes_mcd; do
	"$BNNC" --main -o "$out/$m.c" "$top_srcdir/examples/$m.bnn" &&
		# shellcheck disable=SC2086
		$CC $BNN_CFLAGS -o "$out/$m" "$out/$m.c" $BNN_LIBS
	ok $? "examples/$m.bnn compiles"
done

DATAGEN=$top_builddir/examples/datagen run sh "$top_srcdir/examples/whvi.sh" "$out"
is "$run_status" 0 "examples/whvi.sh runs$(printf '%s' "$run_err" | grep -v '^whvi.sh: ' | head -n 3)"
rows=$(awk -F, 'NR > 1 && $4 + 0 > 0 && $5 == $5 + 0 { n++ } END { print n + 0 }' "$out/whvi.csv")
is "$rows" 6 "whvi.csv: six runs with a positive RMSE and a numeric NLL"
is "$(awk -F, '$1 == "toy1d" { printf "%s=%s ", $2, $6 }' "$out/whvi.csv")" \
	"whvi=2051 mf=33795 mcd=16898 " "toy1d: posterior parameters as bnnc --summary counts them"
rmse=$(awk -F, '$1 == "diabetes" && $2 == "whvi" { print $4 }' "$out/whvi.csv")
awk -v r="$rmse" 'BEGIN { exit !(r > 0 && r < 65) }'
ok $? "diabetes: WHVI's test RMSE $rmse is below 65 (a constant's: 70.8)"
[ -s "$out/whvi.md" ]
ok $? "the table is written to whvi.md"

done_testing
