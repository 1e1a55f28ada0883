#!/bin/sh
# ckpt_kill.sh: a checkpoint save killed at any moment leaves the complete
# old checkpoint or the complete new one, never a mix, and nothing that
# breaks the next save (docs/checkpoint.md, "Guarantees and how they are
# tested").  t/ckpt_kill.bnn, a wide MLP, is trained for one epoch with
# Adam from two seeds: checkpoints A and B of about 13 MB each.
# t/ckpt_kill_saver then saves A, B, A, ... over one file through
# bnn_ckpt_save() and is SIGKILLed after a random delay (awk's srand with
# BNN_CKPT_SEED, default 20); after each kill the file must be byte for byte
# A or B (so its CRC holds), load, and predict what A or B predicts, and a
# temporary file left by the kill (CKPT.tmp.XXXXXX, expected when the kill
# lands before the rename) must not stop the next save.  The stale file is
# then deleted, as docs/checkpoint.md says is safe.  BNN_CKPT_KILLS kills
# (default 4, about 15 s; `make crashcheck` runs 300), counted in the
# diagnostics by outcome.
#
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"

kills=${BNN_CKPT_KILLS:-4}
seed=${BNN_CKPT_SEED:-20}
saver=$top_builddir/t/ckpt_kill_saver
cd "$TAP_TMP" || bail_out "no temporary directory"

# 64 rows of 16 features in [-0.5, 0.5), classes 0, 1, 2 in turn.
awk 'BEGIN { s = 3; printf "f0"; for (j = 1; j < 16; j++) printf ",f%d", j; print ",class"
	for (i = 0; i < 64; i++) {
		for (j = 0; j < 16; j++) { s = (s * 1103515245 + 12345) % 2147483648; printf "%.4f,", s / 2147483648 - 0.5 }
		print i % 3
	} }' >train.csv
head -5 train.csv >few.csv

# shellcheck disable=SC2086  # CC, BNN_CFLAGS and BNN_LIBS hold words
"$BNNC" --main -o wide.c "$top_srcdir/t/ckpt_kill.bnn" &&
	$CC $BNN_CFLAGS -o wide wide.c $BNN_LIBS
ok $? "the wide MLP builds"
for s in 1 2; do
	./wide train --data train.csv --epochs 1 --batch 16 --seed $s --threads 1 --quiet \
		--save "s$s.ckpt" >/dev/null || bail_out "training with seed $s failed"
	./wide predict --load "s$s.ckpt" --data few.csv --threads 1 >"s$s.pred" ||
		bail_out "predicting with seed $s failed"
done
mv s1.ckpt A.ckpt && mv s2.ckpt B.ckpt && mv s1.pred A.pred && mv s2.pred B.pred
cmp -s A.ckpt B.ckpt
is "$?" 1 "the two known states differ"
cmp -s A.pred B.pred
is "$?" 1 "and so do their predictions"
diag "checkpoint size: $(wc -c <A.ckpt) bytes"

# One delay per kill, in seconds: up to about 1.5 saves of this machine.
mkdir run
run "$saver" save run/m.ckpt A.ckpt
is "$run_status:$run_err" "0:" "a first save of A"
t0=$(date +%s%N)
"$saver" save run/m.ckpt B.ckpt
t1=$(date +%s%N)
span=$(awk -v a="$t0" -v b="$t1" 'BEGIN { d = (b - a) / 1e9; printf "%.3f", d < 0.05 ? 0.075 : 1.5 * d }')
diag "one save took $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }') s; kills within ${span} s of the start of saving"
awk -v n="$kills" -v seed="$seed" -v span="$span" \
	'BEGIN { srand(seed); for (i = 0; i < n; i++) printf "%.3f\n", rand() * span }' >delays

# What the file holds: A or B when byte for byte one of them, else "torn".
holds() {
	if cmp -s "$1" A.ckpt; then
		echo A
	elif cmp -s "$1" B.ckpt; then
		echo B
	else
		echo torn
	fi
}

bad=0 n_a=0 n_b=0 n_tmp=0 n_kill=0 i=0
while read -r delay; do
	i=$((i + 1))
	rm -f run/ready
	"$saver" flip run/m.ckpt A.ckpt B.ckpt run/ready 2>saver.err &
	pid=$!
	until [ -f run/ready ] || ! kill -0 "$pid" 2>/dev/null; do
		sleep 0.01
	done
	sleep "$delay"
	kill -KILL "$pid" 2>/dev/null
	{ wait "$pid"; } 2>/dev/null
	st=$?
	if [ "$st" -ne 137 ]; then
		diag "kill $i: the saver ended with status $st before the kill: $(cat saver.err)"
		bad=$((bad + 1))
		continue
	fi
	n_kill=$((n_kill + 1))
	state=$(holds run/m.ckpt)
	case $state in
	A) n_a=$((n_a + 1)) ;;
	B) n_b=$((n_b + 1)) ;;
	*)
		diag "kill $i after ${delay} s: run/m.ckpt is neither A nor B"
		bad=$((bad + 1))
		;;
	esac
	if ! ./wide predict --load run/m.ckpt --data few.csv --threads 1 >now.pred 2>predict.err ||
		! { cmp -s now.pred A.pred || cmp -s now.pred B.pred; }; then
		diag "kill $i after ${delay} s: predictions are neither A's nor B's: $(cat predict.err)"
		bad=$((bad + 1))
	fi
	set -- run/m.ckpt.tmp.*
	if [ -e "$1" ]; then
		n_tmp=$((n_tmp + 1))
		# The next save, with the killed one's temporary file beside it.
		if ! "$saver" save run/m.ckpt "$state.ckpt" 2>save.err || [ "$(holds run/m.ckpt)" != "$state" ]; then
			diag "kill $i: the save after the kill failed: $(cat save.err)"
			bad=$((bad + 1))
		fi
		rm -f run/m.ckpt.tmp.*
	fi
	# Anything else in run/ would be a file the saver should not write.
	extra=$(cd run && find . -type f ! -name m.ckpt ! -name ready)
	if [ -n "$extra" ]; then
		diag "kill $i: unexpected files in the directory: $extra"
		bad=$((bad + 1))
	fi
done <delays
diag "$n_kill kills: the file held A after $n_a and B after $n_b; $n_tmp left a temporary file, which the next save stepped over"
is "$n_kill" "$kills" "every kill landed while the saver was saving"
is "$bad" 0 "after every kill the file was the whole of A or of B, loaded and predicted the same, and the next save worked"
if [ "$kills" -ge 20 ]; then
	ok "$( [ "$n_a" -gt 0 ] && [ "$n_b" -gt 0 ]; echo $?)" "kills left each of the two states at least once"
	ok "$( [ "$n_tmp" -gt 0 ]; echo $?)" "and some landed before the rename, leaving a temporary file"
fi
done_testing
