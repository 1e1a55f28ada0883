#!/bin/sh
# temperature_cli.sh: `MODEL calibrate` end to end (docs/calibration.md).
# bnnc --main compiles t/models/rt_blobs.bnn (3 classes), rt_bayes.bnn (its
# meanfield twin) and rt_other.bnn (a regression); the blobs model trains
# on overlapping blobs, and calibrate fits its temperature on another
# draw of them.  Checks: the JSON line, the checkpoint round trip (info
# shows the temperature, calibrating the calibrated checkpoint gives the
# same T, since the fit reads the raw logits), that predict applies it
# (each calibrated row is the raw row raised to 1/T and renormalised,
# within 1e-5), that eval's NLL on the validation data is calibrate's
# nll_after, that a calibrated checkpoint cannot be resumed, Monte-Carlo
# logits of the meanfield model (--mc), and the refusals with their exact
# messages: a regression model, an empty validation set, data of another
# shape, a missing --save, --save -; and checkpoints written here with a bad
# temperature section (negative, two values, on a regression model).
. "$TAP_SH"

cd "$TAP_TMP" || bail_out "no temporary directory"

# Blobs of the 3 classes, overlapping (noise ±1.5 around centres 2 apart).
. "$top_srcdir/t/blobs_lib.sh"
blobs 300 1 3.0 >train.csv
blobs 600 3 3.0 >valid.csv
blobs 150 2 3.0 >test.csv
head -1 valid.csv >empty.csv
printf 'a,b,c,class\n1,2,3,0\n' >narrow.csv

for m in blobs bayes other; do
	"$BNNC" --main -o $m.c "$top_srcdir/t/models/rt_$m.bnn" ||
		bail_out "bnnc cannot compile rt_$m.bnn"
	# shellcheck disable=SC2086
	$CC $BNN_CFLAGS -o $m $m.c $BNN_LIBS || bail_out "cannot build $m"
done

./blobs train --data train.csv --epochs 30 --batch 16 --save m.ckpt --quiet >/dev/null ||
	bail_out "blobs does not train"

# ---- the fit and its JSON line ---------------------------------------------
run ./blobs calibrate --load m.ckpt --data valid.csv --save t.ckpt
is "$run_status" 0 "calibrate fits a temperature"
T=$(printf '%s\n' "$run_out" | sed -n 's/^{"temperature": \([^,]*\),.*/\1/p')
after=$(printf '%s\n' "$run_out" | sed -n 's/.*"nll_after": \([^,]*\),.*/\1/p')
case $run_out in
'{"temperature": '*', "n": 600, "mc": 0, "nll_before": '*', "nll_after": '*', "seconds": '*', "checkpoint": "t.ckpt"}') st=0 ;;
*) st=1 ;;
esac
ok $st "its JSON line: temperature, n, mc, NLL before and after, seconds, checkpoint: $run_out"
ok "$(printf '%s\n' "$run_out" | awk '{ for (i = 1; i < NF; i++) {
	if ($i == "\"nll_before\":") b = $(i + 1) + 0; if ($i == "\"nll_after\":") a = $(i + 1) + 0 }
	exit !(a < b) }'; echo $?)" "the fit lowers the validation NLL"

# ---- the checkpoint round trip ----------------------------------------------
run ./blobs info --load t.ckpt
case $run_out in *"temperature $T"*) st=0 ;; *) st=1 ;; esac
ok $st "info shows the temperature of the calibrated checkpoint"
run ./blobs info --load m.ckpt
case $run_out in *temperature*) st=1 ;; *) st=0 ;; esac
ok $st "and none for the trained one"
run ./blobs calibrate --load t.ckpt --data valid.csv --save t2.ckpt
is "$(printf '%s\n' "$run_out" | sed -n 's/^{"temperature": \([^,]*\),.*/\1/p')" "$T" \
	"calibrating the calibrated checkpoint gives the same T (the fit reads the raw logits)"
ok "$(cmp -s t.ckpt t2.ckpt; echo $?)" "and the same checkpoint bytes"

# ---- eval and predict apply it -----------------------------------------------
./blobs predict --load m.ckpt --data test.csv --mc 0 --out raw.csv || bail_out "predict"
./blobs predict --load t.ckpt --data test.csv --mc 0 --out cal.csv || bail_out "predict"
# p'_j = p_j^(1/T) / Σ_k p_k^(1/T): softmax(z/T) from softmax(z)
ok "$(paste -d, raw.csv cal.csv | awk -F, -v T="$T" 'NR > 1 {
	s = 0; for (j = 1; j <= 3; j++) s += $j ^ (1 / T)
	for (j = 1; j <= 3; j++) { w = $j ^ (1 / T) / s; d = w - $(j + 7)
		if (d < 0) d = -d; if (d > 1e-5 * (w > 1e-30 ? w : 1e-30) && d > 1e-12) bad++ } }
	END { exit bad > 0 }'; echo $?)" "predict: each calibrated row is softmax(z / T), within 1e-5"
run ./blobs eval --load t.ckpt --data valid.csv --mc 0
nll=$(printf '%s\n' "$run_out" | sed -n 's/.*"nll": \([^,]*\),.*/\1/p')
ok "$(awk -v a="$nll" -v b="$after" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-5 * b) }'; echo $?)" \
	"eval's NLL on the validation data is calibrate's nll_after ($nll, $after)"

# ---- not a run to resume -----------------------------------------------------
run ./blobs train --data train.csv --epochs 40 --batch 16 --save r.ckpt --resume t.ckpt --quiet
is "$run_status" 1 "a calibrated checkpoint is not a run to resume"
case $run_err in *"t.ckpt: cannot resume: the checkpoint has no training progress"*) st=0 ;; *) st=1 ;; esac
ok $st "the resume refusal says so: $run_err"

# ---- Monte-Carlo logits --------------------------------------------------------
./bayes train --data train.csv --optimizer ivon --mc 2 --epochs 15 --batch 16 --lr 0.2 \
	--save b.ckpt --quiet >/dev/null || bail_out "bayes does not train"
run ./bayes calibrate --load b.ckpt --data valid.csv --save bt.ckpt --mc 4 --seed 2
case $run_out in '{"temperature": '*', "n": 600, "mc": 4, '*) st=0 ;; *) st=1 ;; esac
ok $st "a meanfield model is calibrated on 4 samples of its predictive: $run_out"
run ./bayes calibrate --load b.ckpt --data valid.csv --save bt2.ckpt --mc 4 --seed 2
ok "$(cmp -s bt.ckpt bt2.ckpt; echo $?)" "the same seed gives the same checkpoint"

# ---- refusals ------------------------------------------------------------------
awk -F, 'BEGIN { OFS = "," } NR == 1 { print "a,b,c,d,y1,y2"; next } { print $1, $2, $3, $4, $1 + $2, $3 - $4 }' \
	train.csv >reg.csv
./other train --data reg.csv --epochs 2 --save o.ckpt --quiet >/dev/null || bail_out "other does not train"
run ./other calibrate --load o.ckpt --data reg.csv --save ot.ckpt
is "$run_status" 1 "a regression model is refused"
is "$run_err" "./other: calibrate: model 'rt_other' is gaussian, and temperature scaling applies to categorical models only (for regression, eval --conformal gives calibrated intervals)" \
	"with its message"
run ./blobs calibrate --load m.ckpt --data empty.csv --save e.ckpt
is "$run_status" 1 "an empty validation set is refused"
is "$run_err" "./blobs: empty.csv: no examples: the file has a header row but no data rows" \
	"with its message"
run ./blobs calibrate --load m.ckpt --data narrow.csv --save e.ckpt
is "$run_status" 1 "validation data of another shape is refused"
is "$run_err" "./blobs: narrow.csv: 3 feature columns but the model takes 4" "with its message"
ok "$(test ! -e e.ckpt; echo $?)" "and nothing is written"
run ./blobs calibrate --load m.ckpt --data valid.csv
is "$run_status" 2 "calibrate needs --save"
is "$run_err" "./blobs: 'calibrate' needs --save CKPT
Try './blobs --help'." "with its message"
run ./blobs calibrate --load m.ckpt --data valid.csv --save -
is "$run_status" 2 "--save - is refused"
is "$run_err" "./blobs: calibrate writes a checkpoint: --save names a file, not '-'
Try './blobs --help'." "with its message"
run ./blobs calibrate --load m.ckpt --data valid.csv --save valid.csv
is "$run_status" 2 "--save may not be the validation data"

# ---- a bad temperature section ---------------------------------------------------
# settemp IN OUT V...: the parameters of checkpoint IN with a section
# 'temperature' of the values V, saved to OUT for the same model.
cat >settemp.c <<'END'
#include <stdio.h>
#include <stdlib.h>

#include "bnn.h"

int main(int argc, char **argv)
{
	bnn_ckpt *in, *out;
	bnn_err err;
	const float *p;
	float t[4];
	long n;
	int i;

	if (argc < 4 || argc > 7 || bnn_ckpt_load(argv[1], &in, &err))
		return 1;
	for (i = 3; i < argc; i++)
		t[i - 3] = strtof(argv[i], NULL);
	p = bnn_ckpt_find_f32(in, "params", &n);
	out = bnn_ckpt_new(bnn_ckpt_fingerprint(in), bnn_ckpt_model_name(in));
	if (!p || !out || bnn_ckpt_add_f32(out, "params", p, n) ||
	    bnn_ckpt_add_f32(out, "temperature", t, argc - 3) || bnn_ckpt_save(out, argv[2], &err))
		return 1;
	bnn_ckpt_free(in);
	bnn_ckpt_free(out);
	return 0;
}
END
# shellcheck disable=SC2086
$CC $BNN_CFLAGS -o settemp settemp.c $BNN_LIBS || bail_out "cannot build settemp"
./settemp m.ckpt good.ckpt 2 && ./settemp m.ckpt neg.ckpt -1 && ./settemp m.ckpt two.ckpt 1 2 &&
	./settemp o.ckpt reg.ckpt 2 || bail_out "settemp cannot write the checkpoints"
run ./blobs info --load good.ckpt
case $run_out in *"temperature 2"*) st=0 ;; *) st=1 ;; esac
ok $st "a checkpoint written by other means with temperature 2 loads"
run ./blobs eval --load neg.ckpt --data test.csv
is "$run_err" "./blobs: neg.ckpt: section 'temperature': value 0 is -1, not a finite temperature > 0" \
	"a negative temperature is refused when the checkpoint loads"
run ./blobs predict --load two.ckpt --data test.csv
is "$run_err" "./blobs: two.ckpt: section 'temperature' has 2 values, not 1" \
	"and so are two values"
run ./other eval --load reg.ckpt --data reg.csv
is "$run_err" "./other: reg.ckpt: section 'temperature': model 'rt_other' is gaussian, and temperature scaling applies to categorical models only" \
	"and a temperature on a regression model"

done_testing
