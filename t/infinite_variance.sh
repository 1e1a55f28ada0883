#!/bin/sh
# infinite_variance.sh: predict, eval, conformal intervals and --plots of a
# model whose predictive variance is infinite, end to end: bnnc --main
# compiles t/models/st_df1.bnn and st_df2.bnn (studentt with df = 1 and 2,
# dropout in the trunk), trained on y = x1 + 0.5·x2 plus 0.2·Cauchy noise
# drawn here.  Checks (docs/driver.md, docs/metrics.md, docs/conformal.md,
# docs/plots.md):
#   - predict --mc 0: var and aleatoric are inf, epistemic exactly 0, no
#     NaN anywhere; --mc 4: epistemic finite, >= 0 and > 0 somewhere (the
#     variance of the samples' means, not inf − inf);
#   - eval's JSON has no NaN or infinity (entropy is null);
#   - --conformal defaults to the residual score for such a model: its
#     quantile is the 91st smallest |y − μ| of 100 calibration examples (by
#     hand from predict's means), its width 2q, its coverage the fraction of
#     predict's intervals μ ± q holding the test targets; predict's lo/hi
#     are μ ± q; --conformal-method normalized is refused with the exact
#     message naming the likelihood and df;
#   - --conformal-adaptive: a finite width and 0 infinite intervals, or a
#     null width only with infinite > 0;
#   - eval --plots: exit 0, the metrics printed, pit.svg drawn, entropy.svg
#     not, and the exact note on stderr (no internal function name).
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"

cd "$TAP_TMP" || bail_out "no temporary directory"

heavy() { # N SEED: y = x1 + 0.5·x2 + 0.2·tan(π(u − ½)), Cauchy noise
	awk -v n="$1" -v s="$2" 'function u() { s = (s * 1103515245 + 12345) % 2147483648; return s / 2147483648 }
	BEGIN { print "x1,x2,y"; pi = atan2(0, -1)
		for (i = 0; i < n; i++) {
			a = 2 * u() - 1; b = 2 * u() - 1; v = pi * (u() - 0.5)
			printf "%.6f,%.6f,%.6f\n", a, b, a + 0.5 * b + 0.2 * sin(v) / cos(v) } }'
}
heavy 300 11 >train.csv
heavy 100 12 >calib.csv
heavy 60 13 >test.csv

for df in 1 2; do
	"$BNNC" --main -o st$df.c "$top_srcdir/t/models/st_df$df.bnn" ||
		bail_out "bnnc cannot compile st_df$df.bnn"
	# shellcheck disable=SC2086
	$CC $BNN_CFLAGS -o st$df st$df.c $BNN_LIBS || bail_out "cannot build st_df$df"
	./st$df train --data train.csv --optimizer adam --epochs 20 --batch 20 --seed 3 \
		--save st$df.ckpt --quiet >/dev/null || bail_out "st_df$df does not train"
done

key() { # KEY JSON: the value of a number or string key
	printf '%s\n' "$2" | sed -n "s/.*\"$1\": \"*\([^,\"}]*\)\"*[,}].*/\1/p"
}
# 0 when the JSON line has no NaN or infinite number (JSON has neither)
json_finite() {
	case $1 in *': nan'* | *': -nan'* | *': inf'* | *': -inf'* | *'NaN'* | *'Infinity'*) return 1 ;; esac
	return 0
}

for df in 1 2; do
	# ---- predict: the epistemic part ----------------------------------------------
	./st$df predict --load st$df.ckpt --data test.csv --mc 0 --out m0.csv ||
		bail_out "predict --mc 0"
	is "$(head -1 m0.csv)" "mean_0,var_0,aleatoric_0,epistemic_0" "df = $df: predict's columns"
	is "$(awk -F, 'NR > 1 && !($2 == "inf" && $3 == "inf" && $4 == "0") { bad++ }
		END { print bad + 0 }' m0.csv)" 0 \
		"df = $df, --mc 0: var and aleatoric inf, epistemic exactly 0 in every row"
	./st$df predict --load st$df.ckpt --data test.csv --mc 4 --seed 5 --out m4.csv ||
		bail_out "predict --mc 4"
	is "$(awk -F, 'NR > 1 { if (!($2 == "inf" && $3 == "inf" && $4 ~ /^[0-9.e+-]+$/ && $4 >= 0))
		bad++; if ($4 > 0) pos++ } END { print bad + 0, (pos > 0) }' m4.csv)" "0 1" \
		"df = $df, --mc 4: epistemic finite and >= 0 in every row, > 0 in some"
	ok "$(! grep -qi nan m0.csv m4.csv; echo $?)" "df = $df: no NaN in predict's output"

	# ---- eval: valid JSON, the residual intervals ------------------------------------
	run ./st$df eval --load st$df.ckpt --data test.csv --mc 4 --seed 5 --conformal calib.csv
	is "$run_status" 0 "df = $df: eval --conformal runs"
	json_finite "$run_out"
	ok $? "df = $df: eval's JSON has no NaN or infinity: $run_out"
	is "$(key entropy "$run_out") $(key conformal_method "$run_out")" "null residual" \
		"df = $df: entropy null (infinite variance), the residual score by default"
	q=$(key conformal_quantile "$run_out")
	./st$df predict --load st$df.ckpt --data calib.csv --mc 4 --seed 5 --out cal.csv ||
		bail_out "predict calib"
	want=$(paste -d, cal.csv calib.csv | awk -F, 'NR > 1 { d = $7 - $1; if (d < 0) d = -d
		printf "%.9g\n", d }' | sort -g | sed -n 91p)
	ok "$(awk -v a="$q" -v b="$want" 'BEGIN { d = a - b; if (d < 0) d = -d
		exit !(a > 0 && d <= 1e-6 * b) }'; echo $?)" \
		"df = $df: q is the 91st smallest |y - mu| of 100 ($q, by hand $want)"
	w=$(key conformal_width "$run_out")
	ok "$(awk -v w="$w" -v q="$q" 'BEGIN { d = w - 2 * q; if (d < 0) d = -d
		exit !(d <= 1e-8 * w) }'; echo $?)" "df = $df: the width ($w) is 2q (the mean of 2q over the examples)"
	./st$df predict --load st$df.ckpt --data test.csv --mc 4 --seed 5 --conformal calib.csv \
		--out iv.csv || bail_out "predict --conformal"
	is "$(head -1 iv.csv)" "mean_0,var_0,aleatoric_0,epistemic_0,lo_0,hi_0" \
		"df = $df: predict adds lo_0, hi_0"
	is "$(awk -F, -v q="$q" 'NR > 1 { d1 = $5 - ($1 - q); d2 = $6 - ($1 + q)
		if (d1 < 0) d1 = -d1; if (d2 < 0) d2 = -d2
		if (d1 > 1e-6 * (1 + q) || d2 > 1e-6 * (1 + q)) bad++ } END { print bad + 0 }' iv.csv)" 0 \
		"df = $df: predict's intervals are mu -+ q"
	is "$(paste -d, iv.csv test.csv | awk -F, 'NR > 1 { n++; if ($9 >= $5 && $9 <= $6) c++ }
		END { printf "%.9g", c / n }')" "$(key conformal_coverage "$run_out")" \
		"df = $df: eval's coverage is that of predict's intervals"

	# ---- the normalized score is refused --------------------------------------------
	run ./st$df eval --load st$df.ckpt --data test.csv --conformal calib.csv \
		--conformal-method normalized
	is "$run_status" 2 "df = $df: --conformal-method normalized is refused"
	is "$run_err" "./st$df: --conformal-method normalized: model 'st_df$df' is studentt with df = $df, whose predictive variance is infinite (df <= 2), so there is no standard deviation to divide |y - mu| by: use residual (the default for this model)
Try './st$df --help'." "df = $df: the refusal's message"
	is "$run_out" "" "df = $df: and nothing on stdout"

	# ---- adaptive conformal ------------------------------------------------------------
	run ./st$df eval --load st$df.ckpt --data test.csv --mc 4 --seed 5 --conformal calib.csv \
		--conformal-adaptive 0.01
	is "$run_status" 0 "df = $df: eval --conformal-adaptive runs"
	json_finite "$run_out"
	ok $? "df = $df: its JSON has no NaN or infinity"
	w=$(key conformal_adaptive_width "$run_out")
	inf=$(key conformal_adaptive_infinite "$run_out")
	case $w in
	null) st=$((inf > 0 ? 0 : 1)) ;;
	*) st=$(awk -v w="$w" 'BEGIN { exit !(w > 0) }'; echo $?) ;;
	esac
	ok "$st" "df = $df: the adaptive width ($w) is a number, or null with infinite ($inf) > 0"

	# ---- --plots ------------------------------------------------------------------------
	rm -rf plots
	run ./st$df eval --load st$df.ckpt --data test.csv --mc 4 --seed 5 --plots plots
	is "$run_status" 0 "df = $df: eval --plots exits 0"
	case $run_out in '{"n": 60, "mc": 4, "rmse": '*'"entropy": null, '*'"coverage_95": '*'}') st=0 ;; *) st=1 ;; esac
	ok $st "df = $df: and prints the metrics: $run_out"
	is "$run_err" "./st$df: --plots: plots/entropy.svg not drawn: the predictive entropy of all 60 examples is not finite (model 'st_df$df' is studentt with df = $df, whose predictive variance is infinite)" \
		"df = $df: the note on stderr names the chart and why"
	ok "$(test -s plots/pit.svg && test ! -e plots/entropy.svg; echo $?)" \
		"df = $df: pit.svg drawn, entropy.svg not"
done

done_testing
