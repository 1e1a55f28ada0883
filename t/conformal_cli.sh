#!/bin/sh
# conformal_cli.sh: split conformal prediction in eval and predict
# (docs/conformal.md), end to end.  bnnc --main compiles
# t/models/rt_blobs.bnn (3 classes) and rt_other.bnn (2 regression
# outputs); both train on small fixed data and are calibrated on another
# draw.  Checks: eval's conformal keys; the LAC quantile against sorting
# the calibration scores 1 − p_y by hand (from predict's probabilities);
# eval's coverage and mean set size against predict's `set` column and
# the labels; the same numbers for the same --seed; the regression
# intervals of predict against μ ± q·σ with eval's q, and eval's coverage
# and width against them; and the refusals with their exact messages
# (--level 1.5, options without --conformal, a method of the other kind,
# an unknown method, calibration data of another shape, an empty
# calibration set, too few examples for the level).  Adaptive conformal
# inference (--conformal-adaptive): its keys beside split conformal's, for
# intervals and sets; its coverage and width recomputed by hand from
# predict's means and variances and the sorted calibration scores
# (α_{t+1} = α_t + γ·(α − err_t) in file order), with the calibration
# scores fixed and online (--conformal-online: each example's score
# inserted into them after its step); and its refusals (γ ≤ 0, γ ≥ 1, not
# a number, without --conformal, in predict; --conformal-online without
# --conformal-adaptive).
. "$TAP_SH"

cd "$TAP_TMP" || bail_out "no temporary directory"

. "$top_srcdir/t/blobs_lib.sh"
blobs 300 1 3.0 >train.csv
blobs 400 3 3.0 >calib.csv
blobs 300 2 3.0 >test.csv
head -1 calib.csv >empty.csv
head -6 calib.csv >five.csv
printf 'a,b,c,class\n1,2,3,0\n' >narrow.csv
# regression: y1 = a + b, y2 = c − d, plus noise
reg() { # N SEED
	awk -v n="$1" -v s="$2" 'BEGIN { print "a,b,c,d,y1,y2"
		for (i = 0; i < n; i++) {
			for (j = 1; j <= 5; j++) { s = (s * 1103515245 + 12345) % 2147483648; x[j] = s / 2147483648 - 0.5 }
			printf "%.6f,%.6f,%.6f,%.6f,%.6f,%.6f\n", x[1], x[2], x[3], x[4], x[1] + x[2] + 0.3 * x[5], x[3] - x[4] + 0.1 * x[5]
		} }'
}
reg 400 7 >rtrain.csv
reg 300 8 >rcalib.csv
reg 200 9 >rtest.csv

for m in blobs other; do
	"$BNNC" --main -o $m.c "$top_srcdir/t/models/rt_$m.bnn" ||
		bail_out "bnnc cannot compile rt_$m.bnn"
	# shellcheck disable=SC2086
	$CC $BNN_CFLAGS -o $m $m.c $BNN_LIBS || bail_out "cannot build $m"
done
./blobs train --data train.csv --epochs 30 --batch 16 --save m.ckpt --quiet >/dev/null ||
	bail_out "blobs does not train"
./other train --data rtrain.csv --epochs 60 --batch 16 --save r.ckpt --quiet >/dev/null ||
	bail_out "other does not train"

key() { # KEY JSON: the value of a number or string key
	printf '%s\n' "$2" | sed -n "s/.*\"$1\": \"*\([^,\"}]*\)\"*[,}].*/\1/p"
}

# ---- classification: eval ---------------------------------------------------------
run ./blobs eval --load m.ckpt --data test.csv --conformal calib.csv --conformal-method lac
is "$run_status" 0 "eval --conformal runs"
case $run_out in
*'"conformal_method": "lac", "conformal_level": 0.9, "conformal_n": 400, "conformal_quantile": '*', "conformal_coverage": '*', "conformal_set_size": '*', "bins": 20}') st=0 ;;
*) st=1 ;;
esac
ok $st "and reports method, level, n, quantile, coverage and set size: $run_out"
q=$(key conformal_quantile "$run_out")
# The LAC quantile by hand: the scores 1 − p_y of the 400 calibration
# examples, sorted; the rank is ⌈401 · 0.9⌉ = ⌈360.9⌉ = 361.
./blobs predict --load m.ckpt --data calib.csv --out cp.csv || bail_out "predict"
want=$(paste -d, cp.csv calib.csv | awk -F, 'NR > 1 { printf "%.12f\n", 1 - $($12 + 1) }' |
	sort -g | sed -n 361p)
ok "$(awk -v a="$q" -v b="$want" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-7) }'; echo $?)" \
	"the LAC quantile is the 361st smallest score of 400 ($q, by hand $want)"

for meth in lac aps raps; do
	run ./blobs eval --load m.ckpt --data test.csv --conformal calib.csv --conformal-method $meth --seed 4
	cov=$(key conformal_coverage "$run_out")
	size=$(key conformal_set_size "$run_out")
	./blobs predict --load m.ckpt --data test.csv --conformal calib.csv --conformal-method $meth \
		--seed 4 --out sets.csv || bail_out "predict --conformal"
	# the set column lists the classes ("0;2"); covered when it has the label
	byhand=$(paste -d, sets.csv test.csv | awk -F, 'NR > 1 {
		n++; k = split($8, c, ";"); if ($8 == "") k = 0; size += k
		for (j = 1; j <= k; j++) if (c[j] == $13) cov++ }
		END { printf "%.9g %.9g", cov / n, size / n }')
	is "$cov $size" "$byhand" "$meth: eval's coverage and mean set size are those of predict's sets"
done
is "$(head -1 sets.csv)" "p_0,p_1,p_2,predicted,entropy,expected_entropy,mutual_information,set" \
	"predict adds the column 'set'"
run ./blobs eval --load m.ckpt --data test.csv --conformal calib.csv --seed 4
first=$run_out
run ./blobs eval --load m.ckpt --data test.csv --conformal calib.csv --seed 4
is "$run_out" "$first" "aps is the default, and the same --seed gives the same numbers"
case $first in *'"conformal_method": "aps", "conformal_level": 0.9'*) st=0 ;; *) st=1 ;; esac
ok $st "the default method is aps at level 0.9"
run ./blobs eval --load m.ckpt --data test.csv --conformal calib.csv --level 0.5 --conformal-method lac
case $run_out in *'"conformal_level": 0.5,'*) st=0 ;; *) st=1 ;; esac
ok $st "--level sets the level"

# ---- regression: intervals ----------------------------------------------------------
run ./other eval --load r.ckpt --data rtest.csv --conformal rcalib.csv
is "$run_status" 0 "eval --conformal runs for regression"
case $run_out in
*'"conformal_method": "normalized", "conformal_level": 0.9, "conformal_n": 300, "conformal_quantile": '*', "conformal_coverage": '*', "conformal_width": '*'}') st=0 ;;
*) st=1 ;;
esac
ok $st "and reports the normalized method's coverage and width: $run_out"
q=$(key conformal_quantile "$run_out")
cov=$(key conformal_coverage "$run_out")
width=$(key conformal_width "$run_out")
./other predict --load r.ckpt --data rtest.csv --conformal rcalib.csv --out iv.csv ||
	bail_out "predict --conformal"
is "$(head -1 iv.csv)" \
	"mean_0,var_0,aleatoric_0,epistemic_0,mean_1,var_1,aleatoric_1,epistemic_1,lo_0,hi_0,lo_1,hi_1" \
	"predict adds lo_j, hi_j"
ok "$(awk -F, -v q="$q" 'NR > 1 { for (j = 0; j < 2; j++) { m = $(4 * j + 1); h = q * sqrt($(4 * j + 2))
		d1 = $(9 + 2 * j) - (m - h); d2 = $(10 + 2 * j) - (m + h)
		if (d1 < 0) d1 = -d1; if (d2 < 0) d2 = -d2; if (d1 > 1e-6 || d2 > 1e-6) bad++ } }
	END { exit bad > 0 }' iv.csv; echo $?)" "each interval is mean ± q·sqrt(var)"
byhand=$(paste -d, iv.csv rtest.csv | awk -F, 'NR > 1 { n++
	if ($17 >= $9 && $17 <= $10 && $18 >= $11 && $18 <= $12) c++; w += $10 - $9 + $12 - $11 }
	END { printf "%.4f %.4f", c / n, w / (2 * n) }')
is "$(printf '%.4f %.4f' "$cov" "$width")" "$byhand" \
	"eval's coverage (both outputs inside) and mean width are those of the intervals"
run ./other eval --load r.ckpt --data rtest.csv --conformal rcalib.csv --conformal-method residual
case $run_out in *'"conformal_method": "residual"'*) st=0 ;; *) st=1 ;; esac
ok $st "the residual method for regression"

# ---- adaptive conformal inference ----------------------------------------------------
run ./other eval --load r.ckpt --data rtest.csv --conformal rcalib.csv --conformal-adaptive 0.05
is "$run_status" 0 "eval --conformal-adaptive runs for regression"
case $run_out in
*'"conformal_width": '*', "conformal_adaptive_gamma": 0.05, "conformal_adaptive_online": false, "conformal_adaptive_coverage": '*', "conformal_adaptive_width": '*', "conformal_adaptive_infinite": '*'}') st=0 ;;
*) st=1 ;;
esac
ok $st "and reports gamma, online, coverage, width and infinite intervals after the split keys: $run_out"
aci=$run_out
split=$(printf '%s\n' "$aci" | sed 's/, "conformal_adaptive_gamma".*}/}/')
run ./other eval --load r.ckpt --data rtest.csv --conformal rcalib.csv
is "$split" "$run_out" "the other keys are those of eval without it"
# By hand: the normalized scores max_j |y_j − μ_j|/σ_j of the calibration
# and test examples (predict's mean and var), the calibration scores
# sorted; step t uses the ⌈(n + 1)·(1 − α_t)⌉-th of the n (infinite above
# n), covers when its score is within, and α moves by 0.05·(0.1 − err_t);
# online, the step's score is then inserted into the n sorted scores.
./other predict --load r.ckpt --data rcalib.csv --out rc.csv || bail_out "predict"
./other predict --load r.ckpt --data rtest.csv --out rt.csv || bail_out "predict"
nscore() { # PREDICTIONS DATA: the normalized score of each example
	paste -d, "$1" "$2" | awk -F, 'NR > 1 { s = 0
		for (j = 0; j < 2; j++) { e = ($(13 + j) - $(4 * j + 1)) / sqrt($(4 * j + 2))
			if (e < 0) e = -e; if (e > s) s = e }
		printf "%.17g\n", s }'
}
nscore rc.csv rcalib.csv | sort -g >cal.txt
paste -d, rt.csv rtest.csv | awk -F, 'NR > 1 { printf "%.17g,%.17g\n", $2, $6 }' >var.txt
nscore rt.csv rtest.csv | paste -d, - var.txt >seq.txt
byhand() { # ONLINE: coverage, mean finite width and infinite intervals
	awk -F, -v g=0.05 -v online="$1" 'NR == FNR { c[++n] = $1; next }
	FNR == 1 { a = 0.1; at = a }
	{ r = (n + 1) * (1 - at) * (1 - 1e-12); k = int(r); if (k < r) k++
	  if (k > n) { q = "inf"; inf++; cov = 1 }
	  else { q = c[k]; cov = $1 <= q; w += 2 * q * (sqrt($2) + sqrt($3)) / 2; fin++ }
	  covered += cov; t++; at += g * (a - (1 - cov))
	  if (online) { for (i = n; i > 0 && c[i] > $1; i--) c[i + 1] = c[i]; c[i + 1] = $1; n++ } }
	END { printf "%.4f %.4f %d", covered / t, w / fin, inf }' cal.txt seq.txt
}
aci_keys() { # JSON: its adaptive coverage, width and infinite intervals, as byhand
	printf '%.4f %.4f %d' "$(key conformal_adaptive_coverage "$1")" \
		"$(key conformal_adaptive_width "$1")" "$(key conformal_adaptive_infinite "$1")"
}
is "$(aci_keys "$aci")" "$(byhand 0)" \
	"coverage, mean finite width and infinite intervals are those computed by hand"
run ./other eval --load r.ckpt --data rtest.csv --conformal rcalib.csv --conformal-adaptive 0.05 \
	--conformal-online
is "$run_status" 0 "eval --conformal-adaptive --conformal-online runs"
case $run_out in
*', "conformal_adaptive_gamma": 0.05, "conformal_adaptive_online": true, "conformal_adaptive_coverage": '*) st=0 ;;
*) st=1 ;;
esac
ok $st "and says it ran online: $run_out"
is "$(aci_keys "$run_out")" "$(byhand 1)" \
	"online: the numbers computed by hand with each score inserted after its step"
[ "$(aci_keys "$run_out")" != "$(aci_keys "$aci")" ]
ok $? "online differs from the fixed scores here: $(aci_keys "$run_out") vs $(aci_keys "$aci")"
is "$(printf '%s\n' "$run_out" | sed 's/, "conformal_adaptive_gamma".*}/}/')" "$split" \
	"online leaves the split conformal keys as they were"
run ./blobs eval --load m.ckpt --data test.csv --conformal calib.csv --conformal-method lac \
	--conformal-adaptive 0.005
case $run_out in
*'"conformal_set_size": '*', "conformal_adaptive_gamma": 0.005, "conformal_adaptive_online": false, "conformal_adaptive_coverage": '*', "conformal_adaptive_set_size": '*', "conformal_adaptive_infinite": '*', "bins": 20}') st=0 ;;
*) st=1 ;;
esac
ok $st "for a classifier: coverage, mean set size and sets of every class: $run_out"
for bad in 0 1 -0.1 1.5 abc 0.05x ''; do
	run ./other eval --load r.ckpt --data rtest.csv --conformal rcalib.csv --conformal-adaptive "$bad"
	is "$run_status $run_err" "2 ./other: --conformal-adaptive: '$bad' is not a step size in (0, 1), such as 0.005
Try './other --help'." "--conformal-adaptive '$bad' is refused"
done
run ./other eval --load r.ckpt --data rtest.csv --conformal-adaptive 0.05
is "$run_status $run_err" "2 ./other: --conformal-adaptive goes with --conformal
Try './other --help'." "--conformal-adaptive needs --conformal"
run ./other predict --load r.ckpt --data rtest.csv --conformal rcalib.csv --conformal-adaptive 0.05
is "$run_status $run_err" "2 ./other: option '--conformal-adaptive' does not go with 'predict'
Try './other --help'." "predict has no --conformal-adaptive (no labels arrive)"
run ./other eval --load r.ckpt --data rtest.csv --conformal rcalib.csv --conformal-online
is "$run_status $run_err" "2 ./other: --conformal-online goes with --conformal-adaptive
Try './other --help'." "--conformal-online needs --conformal-adaptive"
run ./other eval --load r.ckpt --data rtest.csv --conformal-online
is "$run_status $run_err" "2 ./other: --conformal-online goes with --conformal-adaptive
Try './other --help'." "--conformal-online alone: the same message"
run ./other eval --load r.ckpt --data rtest.csv --conformal-adaptive 0.05 --conformal-online
is "$run_status $run_err" "2 ./other: --conformal-adaptive goes with --conformal
Try './other --help'." "--conformal-adaptive --conformal-online without --conformal"
run ./other predict --load r.ckpt --data rtest.csv --conformal rcalib.csv --conformal-online
is "$run_status $run_err" "2 ./other: option '--conformal-online' does not go with 'predict'
Try './other --help'." "predict has no --conformal-online"

# ---- refusals -------------------------------------------------------------------------
run ./blobs eval --load m.ckpt --data test.csv --conformal calib.csv --level 1.5
is "$run_status" 2 "--level 1.5 is a usage error"
is "$run_err" "./blobs: --level: '1.5' is not a coverage level in (0, 1), such as 0.9
Try './blobs --help'." "with its message"
run ./blobs eval --load m.ckpt --data test.csv --level 0.8
is "$run_err" "./blobs: --level goes with --conformal
Try './blobs --help'." "--level needs --conformal"
run ./blobs predict --load m.ckpt --data test.csv --conformal-labels x.gz
is "$run_err" "./blobs: --conformal-labels goes with --conformal
Try './blobs --help'." "and so does --conformal-labels"
run ./other eval --load r.ckpt --data rtest.csv --conformal rcalib.csv --conformal-method aps
is "$run_err" "./other: --conformal-method: 'aps' is for classifiers, and model 'rt_other' is gaussian: use normalized or residual
Try './other --help'." "a classifier's method for a regression model"
run ./blobs eval --load m.ckpt --data test.csv --conformal calib.csv --conformal-method normalized
is "$run_err" "./blobs: --conformal-method: 'normalized' is for regression, and model 'rt_blobs' is categorical: use aps, raps or lac
Try './blobs --help'." "a regression method for a classifier"
run ./blobs eval --load m.ckpt --data test.csv --conformal calib.csv --conformal-method ap
is "$run_err" "./blobs: --conformal-method: 'ap' is not aps, raps, lac, residual or normalized
Try './blobs --help'." "an unknown method"
run ./blobs eval --load m.ckpt --data test.csv --conformal narrow.csv
is "$run_status" 1 "calibration data of another shape is refused"
is "$run_err" "./blobs: narrow.csv: 3 feature columns but the model takes 4" "with its message"
run ./blobs eval --load m.ckpt --data test.csv --conformal rcalib.csv
is "$run_err" "./blobs: rcalib.csv:1: no target column 'class' (the columns are: a, b, c, d, y1, y2)" \
	"and so is the regression model's calibration data (without the target column the training file had)"
run ./blobs eval --load m.ckpt --data test.csv --conformal empty.csv
is "$run_status" 1 "an empty calibration set is refused"
is "$run_err" "./blobs: empty.csv: no examples: the file has a header row but no data rows" \
	"with its message"
run ./blobs predict --load m.ckpt --data test.csv --conformal five.csv --out never.csv
is "$run_status" 1 "five calibration examples are too few for level 0.9"
is "$run_err" "./blobs: --conformal five.csv: 5 calibration examples are too few for level 0.9: the quantile's rank ceil((n + 1) * level) = 6 exceeds n (at least 9 examples are needed)" \
	"with its message"
ok "$(test ! -e never.csv; echo $?)" "and predict writes nothing"
run ./blobs eval --load m.ckpt --data test.csv --conformal test.csv --conformal-labels calib.csv --mc 0
is "$run_status" 1 "--conformal-labels with a CSV calibration file is refused"

done_testing
