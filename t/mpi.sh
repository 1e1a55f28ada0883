#!/bin/sh
# mpi.sh: data-parallel training under mpirun (./configure --with-mpi;
# docs/distributed.md).  Without an MPI build, or without mpirun, every
# test is reported as SKIP with the reason.  mpirun gets --oversubscribe
# (more processes than this machine's cores), --quiet (its own notices
# left out of stderr, which the fault checks count) and, as root, the two
# OMPI_ALLOW_RUN_AS_ROOT variables.  Checks:
#   - t/mpi_train (the C API over a communicator of its own) with 2 and 3
#     processes: identical parameters on every rank for sgd, adam, vogn,
#     ivon and bbb, and of the running statistics of a batchnorm layer;
#     sgd and adam equal to one process within a tolerance;
#     one vogn and one ivon step equal to the N-sample estimator computed
#     by hand; bad data on one rank stops all (its TAP lines are repeated
#     here); all of it for each way of summing a step (BNN_ALLREDUCE=
#     shared, overlap and end);
#   - the driver (bnnc --main) under mpirun -np 2 and -np 3: adam's
#     checkpoint equals a single process's within 1e-5 + 1e-4|x|, and
#     with 2 processes is the same bytes for the three ways of summing;
#     the settings' line says which was taken; BNN_ALLREDUCE=sideways is
#     refused on every rank; vogn and ivon train;
#   - a bad data file on rank 1 only (of 2 and of 3): every rank exits
#     non-zero within seconds, and stderr is one line, rank 0's
#     "rank 1 of N: " and rank 1's message;
#   - rank 0's --save unwritable: every rank fails before training, and
#     rank 0's message is printed once, without a prefix; a usage error
#     of every rank, once with its pointer to --help; one of rank 1 only,
#     from rank 0 with the prefix; a fault within training on rank 1 only
#     (a batch it cannot split), once; a divergence, once;
#   - rank 1 killed with SIGKILL: the job ends, the checkpoint of an
#     earlier run is left as it was;
#   - examples/mpi_train.c (the user's communicator) builds and runs;
#   - built without MPI: bnn_train refuses a communicator with a message.
#
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"

NTESTS=200
cd "$TAP_TMP" || bail_out "no temporary directory"

if [ -z "${BNN_WITH_MPI-}" ]; then
	# a library without MPI is one process and refuses a communicator
	cat >nompi.c <<'EOF_C'
#include <stdio.h>
#include "bnn.h"
#include "mpi_point.h"
int main(void)
{
	float x[8] = { 0 }, y[2] = { 0 };
	bnn_dataset ds = { 2, 4, 1, { 4 }, 1, x, y, NULL, NULL };
	bnn_train_options o = bnn_train_defaults();
	bnn_state st;
	bnn_err err;
	int comm = 0, rc;
	if (bnn_state_init(&st, &mpi_point_model, 1, &err))
		return 1;
	rc = bnn_train(&st, &(bnn_train_io){ .train = &ds, .comm = &comm }, &o, &err);
	printf("%d %d %d %d\n%s\n", rc == BNN_EUNSUPPORTED, bnn_dist_available(),
	       bnn_dist_rank(NULL), bnn_dist_size(NULL), err.message);
	bnn_state_free(&st);
	return 0;
}
EOF_C
	# shellcheck disable=SC2086  # flags are words
	"$BNNC" -o mpi_point.c "$top_srcdir/t/models/mpi_point.bnn" &&
		$CC $BNN_CFLAGS -o nompi nompi.c mpi_point.c $BNN_LIBS && st=0 || st=$?
	is "$st" 0 "without MPI: a program passing a communicator builds"
	run ./nompi
	is "$(echo "$run_out" | sed -n 1p)" "1 0 0 1" \
		"bnn_train refuses it (BNN_EUNSUPPORTED); rank 0 of 1, MPI not available"
	is "$(echo "$run_out" | sed -n 2p)" \
		"a communicator was given, and this libbnn was built without MPI (./configure --with-mpi)" \
		"with a message saying how to build with MPI"
	skip "$NTESTS" "libbnn was built without MPI (./configure --with-mpi)"
	done_testing
fi
MPIRUN=${BNN_MPIRUN:-mpirun}
if ! command -v "$MPIRUN" >/dev/null 2>&1; then
	skip "$NTESTS" "mpirun was not found (Debian package: openmpi-bin)"
	done_testing
fi
if [ "$(id -u)" -eq 0 ]; then
	OMPI_ALLOW_RUN_AS_ROOT=1
	OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
fi
# shared memory between the processes of this machine, no network probing
OMPI_MCA_btl=self,vader
export OMPI_MCA_btl
mpi() { # NP ARGS...
	np=$1
	shift
	# shellcheck disable=SC2086  # the option is words
	timeout 120 "$MPIRUN" --quiet --oversubscribe --bind-to none \
		${BNN_ALLREDUCE:+-x BNN_ALLREDUCE} -np "$np" "$@"
}

# ---- the C API --------------------------------------------------------------
# every way of summing a step (BNN_ALLREDUCE; on one machine the default
# is shared)
for mode in shared overlap end; do
	for np in 2 3; do
		mpi "$np" -x BNN_ALLREDUCE=$mode "$top_builddir/t/mpi_train" >api.out 2>api.err &&
			st=0 || st=$?
		is "$st" 0 "t/mpi_train under mpirun -np $np exits 0 ($mode)"
		n=0
		while IFS= read -r line; do
			case $line in
			"ok "*) ok 0 "$mode: ${line#ok * - }" ;;
			"not ok "*)
				ok 1 "$mode: ${line#not ok * - }"
				;;
			"#"*) diag "${line#\# }" ;;
			*) continue ;;
			esac
			n=$((n + 1))
		done <api.out
		ok "$([ "$n" -ge 19 ] && echo 0 || echo 1)" \
			"t/mpi_train -np $np reported its 19 results ($mode)"
		[ "$st" -eq 0 ] || diag "$(cat api.err)"
	done
done

# ---- the driver -------------------------------------------------------------
# y = 0.5a - b + 0.3cd, inputs from a linear congruential generator.
awk 'BEGIN { s = 5; print "a,b,c,d,y"
	for (i = 0; i < 120; i++) {
		for (j = 1; j <= 4; j++) { s = (s * 1103515245 + 12345) % 2147483648; x[j] = 2 * s / 2147483648 - 1 }
		printf "%.6f,%.6f,%.6f,%.6f,%.6f\n", x[1], x[2], x[3], x[4], 0.5 * x[1] - x[2] + 0.3 * x[3] * x[4]
	} }' >train.csv
sed '6s/^[^,]*,/oops,/' train.csv >bad.csv

for model in mpi_point mpi_mf; do
	# shellcheck disable=SC2086  # flags are words
	"$BNNC" --main -o $model.c "$top_srcdir/t/models/$model.bnn" &&
		$CC $BNN_CFLAGS -o $model $model.c $BNN_LIBS && st=0 || st=$?
	is "$st" 0 "bnnc --main $model.bnn links against the MPI build"
done

train() { # NP MODEL SAVE ARGS...
	np=$1 model=$2 save=$3
	shift 3
	if [ "$np" -eq 0 ]; then
		./"$model" train --data train.csv --threads 1 --seed 4 --quiet --save "$save" "$@"
	else
		mpi "$np" ./"$model" train --data train.csv --threads 1 --seed 4 --quiet \
			--save "$save" "$@"
	fi
}
# the parameters of two checkpoints agree within 1e-5 + 1e-4 |x|
close() { # MODEL CKPT1 CKPT2
	./"$1" posterior --load "$2" --out a.csv && ./"$1" posterior --load "$3" --out b.csv &&
		paste -d, a.csv b.csv | awk -F, 'NR > 1 {
			d = $3 - $7; if (d < 0) d = -d; t = $7 < 0 ? -$7 : $7
			if (d > 1e-5 + 1e-4 * t) { print "row " NR ": " $3 " vs " $7; bad = 1 } }
			END { exit bad }'
}

train 0 mpi_point one.ckpt --optimizer adam --epochs 4 --batch 32 >one.out 2>one.err &&
	st=0 || st=$?
is "$st" 0 "one process trains mpi_point with adam"
for np in 2 3; do
	train "$np" mpi_point "np$np.ckpt" --optimizer adam --epochs 4 --batch 32 >np.out 2>np.err &&
		st=0 || st=$?
	is "$st" 0 "mpirun -np $np: the driver trains with adam"
	is "$(grep -c '"epochs": 4' np.out)" 1 "rank 0 alone prints the summary (np $np)"
	close mpi_point "np$np.ckpt" one.ckpt >close.out 2>&1 && st=0 || st=$?
	is "$st" 0 "adam over $np processes: the parameters of one process with the same global batch"
	[ "$st" -eq 0 ] || diag "$(head -5 close.out)"
done
# the three ways of summing give the same bits with two processes (one
# addition per sum), and the run says which it took
for mode in overlap end; do
	(
		BNN_ALLREDUCE=$mode
		export BNN_ALLREDUCE
		train 2 mpi_point "np2$mode.ckpt" --optimizer adam --epochs 4 --batch 32 >/dev/null 2>&1
	)
	ok "$(cmp -s np2.ckpt "np2$mode.ckpt"; echo $?)" \
		"adam over 2 processes: the checkpoint of BNN_ALLREDUCE=$mode is the default's, byte for byte"
done
mpi 2 ./mpi_point train --data train.csv --threads 1 --seed 4 --save b.ckpt --epochs 1 \
	--batch 32 2>&1 >/dev/null | grep '^data-parallel' >banner.out
is "$(cat banner.out)" "data-parallel: 2 processes, each minibatch's rows split across them (B mod N of them take one more), the steps' sums in shared memory after the pass (BNN_ALLREDUCE=shared)" \
	"the run's settings say how it sums (one machine: shared memory)"
(
	BNN_ALLREDUCE=sideways
	export BNN_ALLREDUCE
	train 2 mpi_point s.ckpt --optimizer adam >s.out 2>s.err
) && st=0 || st=$?
ok "$([ "$st" -ne 0 ] && echo 0 || echo 1)" "BNN_ALLREDUCE=sideways: the job exits non-zero"
is "$(cat s.err)" "./mpi_point: BNN_ALLREDUCE (on rank 0) is none of overlap, end, shared and auto" \
	"and rank 0 alone says why, once"
for opt in vogn ivon bbb; do
	train 3 mpi_mf "$opt.ckpt" --optimizer "$opt" --epochs 3 --batch 30 >o.out 2>o.err &&
		st=0 || st=$?
	is "$st" 0 "mpirun -np 3: the driver trains mpi_mf with $opt"
	[ "$st" -eq 0 ] || diag "$(cat o.err)"
done

# ---- faults -----------------------------------------------------------------
# (mpi's timeout turns a deadlock into status 124, which fails the second check)
mpi 1 ./mpi_point train --data train.csv --quiet --save f.ckpt : \
	-np 1 ./mpi_point train --data bad.csv --quiet --save f.ckpt >f.out 2>f.err && st=0 || st=$?
ok "$([ "$st" -ne 0 ] && echo 0 || echo 1)" "bad data on rank 1: the job exits non-zero"
ok "$([ "$st" -ne 124 ] && echo 0 || echo 1)" "without waiting for the timeout (status $st)"
is "$(cat f.err)" "./mpi_point: rank 1 of 2: bad.csv:6:1: column 'a': 'oops' is not a number" \
	"rank 0 alone prints the message, saying it came from rank 1"
is "$(wc -l <f.err)" 1 "one line on stderr (2 processes)"
ok "$(test ! -e f.ckpt; echo $?)" "and nothing was saved"
mpi 1 ./mpi_point train --data train.csv --quiet --save f.ckpt : \
	-np 1 ./mpi_point train --data bad.csv --quiet --save f.ckpt : \
	-np 1 ./mpi_point train --data train.csv --quiet --save f.ckpt >f.out 2>f.err && st=0 || st=$?
ok "$([ "$st" -ne 0 ] && [ "$st" -ne 124 ] && echo 0 || echo 1)" \
	"bad data on rank 1 of 3: the job exits non-zero, without waiting (status $st)"
is "$(cat f.err)" "./mpi_point: rank 1 of 3: bad.csv:6:1: column 'a': 'oops' is not a number" \
	"rank 0 alone prints rank 1's message"
is "$(wc -l <f.err)" 1 "one line on stderr (3 processes)"

mpi 1 ./mpi_point train --data train.csv --save nodir/x.ckpt : \
	-np 1 ./mpi_point train --data train.csv --save w.ckpt >w.out 2>w.err && st=0 || st=$?
ok "$([ "$st" -ne 0 ] && echo 0 || echo 1)" "rank 0's --save unwritable: the job exits non-zero"
is "$(cat w.err)" "./mpi_point: cannot write --save 'nodir/x.ckpt': directory 'nodir': No such file or directory" \
	"rank 0 prints its message once, before training, and rank 1 nothing"

# a usage error on every rank: once, with its pointer to --help
mpi 2 ./mpi_point train --data train.csv --quiet --resume w.ckpt --save w.ckpt >u.out 2>u.err &&
	st=0 || st=$?
is "$st" 2 "--resume under mpirun -np 2: a usage error (status 2)"
is "$(cat u.err)" "./mpi_point: --resume runs on one process, not on 2: resume without mpirun
Try './mpi_point --help'." "printed once by rank 0"
# a usage error of rank 1 alone (its own command line), in train and in
# eval, whose first agreement comes after loading
mpi 1 ./mpi_point train --data train.csv --quiet --save u.ckpt : \
	-np 1 ./mpi_point train --data train.csv --quiet --sav u.ckpt >u.out 2>u.err && st=0 || st=$?
is "$st" 2 "a usage error on rank 1 only: status 2"
is "$(cat u.err)" "./mpi_point: rank 1 of 2: unknown option '--sav' for 'train'; did you mean '--save'?
Try './mpi_point --help'." "rank 0 prints it once, saying it came from rank 1"
mpi 1 ./mpi_point eval --load np2.ckpt --data train.csv --threads 1 : \
	-np 1 ./mpi_point eval --loa np2.ckpt --data train.csv --threads 1 >u.out 2>u.err &&
	st=0 || st=$?
is "$st" 2 "eval with a usage error on rank 1 only: status 2"
is "$(cat u.err)" "./mpi_point: rank 1 of 2: unknown option '--loa' for 'eval'; did you mean '--load'?
Try './mpi_point --help'." "rank 0 prints it once, at eval's first agreement"

# the commands that do not share their work: refused on every rank, once
./mpi_point train --data train.csv --threads 1 --quiet --save two.ckpt --seed 5 >/dev/null
for cmd in "info" "posterior --load one.ckpt" "export --load one.ckpt -o one.h" \
	"merge --load one.ckpt --load two.ckpt --save merged.ckpt" \
	"calibrate --load one.ckpt --data train.csv --save cal.ckpt" \
	"laplace --load one.ckpt --data train.csv --save lap.ckpt" \
	"sensitivity --load one.ckpt --data train.csv" "tune --data train.csv --out t.opts"; do
	name=${cmd%% *}
	# shellcheck disable=SC2086  # the command is words
	mpi 2 ./mpi_point $cmd >c.out 2>c.err && st=0 || st=$?
	is "$st" 2 "$name under mpirun -np 2: a usage error (status 2)"
	is "$(cat c.err)" "./mpi_point: $name runs on one process, not on 2: run it without mpirun
Try './mpi_point --help'." "$name: refused once, from rank 0"
	ok "$([ ! -s c.out ] && [ ! -e one.h ] && [ ! -e merged.ckpt ] && [ ! -e cal.ckpt ] &&
		[ ! -e lap.ckpt ] && [ ! -e t.opts ]; echo $?)" "$name: nothing printed or written"
done
for cmd in "--help" "--version" "train --help"; do
	# shellcheck disable=SC2086  # the command is words
	./mpi_point $cmd >one.txt 2>&1
	# shellcheck disable=SC2086
	mpi 2 ./mpi_point $cmd >two.txt 2>&1 && st=0 || st=$?
	ok "$([ "$st" -eq 0 ] && cmp -s one.txt two.txt; echo $?)" \
		"mpirun -np 2 ./mpi_point $cmd: printed once, as by one process"
done

# faults within training (bnn_train's agreement): once, from rank 0
for procs in 2 3; do # (mpi sets np)
	mpi 1 ./mpi_point train --data train.csv --threads 1 --quiet --batch 32 --save t.ckpt : \
		-np "$((procs - 1))" ./mpi_point train --data train.csv --threads 1 --quiet --batch 1 \
		--save t.ckpt >t.out 2>t.err && st=0 || st=$?
	is "$st" 1 "a batch rank 1 of $procs cannot split: every rank fails (status 1)"
	is "$(cat t.err)" "./mpi_point: rank 1 of $procs: a minibatch of 1 examples cannot be split across $procs processes: train with a batch of at least $procs" \
		"rank 0 alone prints rank 1's message, one line"
done
train 2 mpi_point dv.ckpt --optimizer sgd --lr 1e3 --epochs 3 >dv.out 2>dv.err && st=0 || st=$?
is "$st" 1 "sgd with --lr 1e3 over 2 processes diverges (status 1)"
is "$(wc -l <dv.err)" 2 "stderr: the divergence and what the checkpoint holds, once each"
is "$(grep -c '^./mpi_point: training diverged in epoch [0-9]* at step [0-9]*: the loss is not finite' dv.err)" 1 \
	"rank 0 prints the divergence without a prefix of its own rank"
is "$(grep -c '^./mpi_point: dv.ckpt holds epoch [0-9]*, the last good one$' dv.err)" 1 \
	"and what the checkpoint holds"

train 0 mpi_point keep.ckpt --optimizer adam --epochs 2 >/dev/null 2>&1
cp keep.ckpt keep.orig
rm -f pid
(
	mpi 1 ./mpi_point train --data train.csv --quiet --epochs 1000000 --save keep.ckpt : \
		-np 1 sh -c 'echo $$ >pid; exec ./mpi_point train --data train.csv --quiet --epochs 1000000 --save keep.ckpt' \
		>k.out 2>k.err
	echo $? >k.status
) &
i=0
while [ ! -s pid ] && [ "$i" -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
sleep 1
kill -9 "$(cat pid)" 2>/dev/null
i=0
while [ ! -s k.status ] && [ "$i" -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
ok "$([ -s k.status ] && [ "$(cat k.status)" -ne 0 ] && echo 0 || echo 1)" \
	"rank 1 killed by SIGKILL: the job ends non-zero within 30 s"
ok "$(cmp -s keep.ckpt keep.orig; echo $?)" "and the last checkpoint is left as it was"
wait

# ---- the example: a user's communicator -------------------------------------
# shellcheck disable=SC2086  # flags are words
"$BNNC" -o model.c "$top_srcdir/examples/whvi_diabetes_mf.bnn" &&
	$CC $BNN_CFLAGS -o mpi_example "$top_srcdir/examples/mpi_train.c" model.c $BNN_LIBS &&
	st=0 || st=$?
is "$st" 0 "examples/mpi_train.c builds against the MPI build"
mpi 2 ./mpi_example "$top_srcdir/examples/data/diabetes_train.csv" ex.ckpt >ex.out 2>ex.err &&
	st=0 || st=$?
is "$st" 0 "and runs under mpirun -np 2"
is "$(grep -c 'on 2 processes.*the same posterior on every process: yes' ex.out)" 1 \
	"with the same posterior on every process"
ok "$(test -s ex.ckpt; echo $?)" "rank 0 wrote the checkpoint"

done_testing
