#!/bin/sh
# mpi_eval.sh: sharded eval and predict under mpirun (docs/distributed.md).
# A classifier and a regression model, each with a mean-field posterior
# and an MC-dropout layer (so both kinds of Monte-Carlo noise are drawn),
# are trained by one process; then eval with --mc 8 under mpirun -np 1, 2
# and 3 must print the single-process metrics JSON byte for byte (the
# 1,000 examples are 4 batches of 256, so 3 ranks get 1, 1 and 2 batches;
# the regression's 700 are 3 batches, one per rank), with --ood too and
# with 2 threads per rank, with adaptive conformal inference (sequential,
# on rank 0; fixed and online calibration scores), and predict must write the same CSV.  Errors: a checkpoint that no rank can
# read, and data that only rank 1 cannot read (two application contexts of
# one mpirun; of 2 and of 3 processes), end every rank with a non-zero
# status and the message, printed once by rank 0 (stderr is that one
# line), well within a timeout; a usage error is printed once too.  Skips unless libbnn was
# configured --with-mpi and mpirun is on the PATH.
#
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_builddir
. "$TAP_SH"

if ! grep -q '^#define BNN_HAVE_MPI 1' "$top_builddir/config.h" 2>/dev/null; then
	skip 1 "libbnn is built without MPI (./configure --with-mpi)"
	done_testing
fi
if ! command -v mpirun >/dev/null 2>&1; then
	skip 1 "mpirun is not installed (Debian package openmpi-bin)"
	done_testing
fi
cd "$TAP_TMP" || bail_out "no temporary directory"

# Open MPI refuses root without these, and 2 cores need --oversubscribe
# for 3 ranks; --quiet leaves mpirun's own notices out of stderr, whose
# lines the error checks count; every run is bounded so that a hang fails
# instead of waiting.
OMPI_ALLOW_RUN_AS_ROOT=1
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
mpi() { # NP ARGS...: mpirun -np NP ARGS, at most 120 s
	np=$1
	shift
	timeout 120 mpirun --quiet --oversubscribe -np "$np" "$@"
}

cat >cls.bnn <<'EOF'
model cls;
input x[4];
prior gaussian(precision = 1);
h = tanh(dense(x, 16) ~ meanfield);
g = relu(dense(h, 16) ~ dropout(p = 0.2));
label ~ categorical(dense(g, 3) ~ meanfield);
EOF
cat >reg.bnn <<'EOF'
model reg;
input x[4];
prior gaussian(precision = 1);
h = tanh(dense(x, 16) ~ meanfield);
g = relu(dense(h, 16) ~ dropout(p = 0.2));
y ~ gaussian(dense(g, 2) ~ meanfield, sigma = 0.5);
EOF
for m in cls reg; do
	# shellcheck disable=SC2086
	"$BNNC" --main -o $m.c $m.bnn && $CC $BNN_CFLAGS -o $m $m.c $BNN_LIBS
	ok $? "model $m builds against libbnn with MPI"
done

# Three overlapping blobs (the classes are not separable, so the metrics
# are not trivial), and y = (a + b, c - d) with noise.
awk -v n=1000 'BEGIN {
	split("1 0 0 0 0 1 0 -1 -1 -1 0 1", c, " "); s = 5
	print "a,b,c,d,class"
	for (i = 0; i < n; i++) {
		k = i % 3; line = ""
		for (j = 1; j <= 4; j++) {
			s = (s * 1103515245 + 12345) % 2147483648
			line = line sprintf("%.6f,", c[k * 4 + j] + 3 * (s / 2147483648 - 0.5))
		}
		print line k
	}
}' >cls.csv
awk -v n=300 'BEGIN { s = 9; print "a,b,c,d"
	for (i = 0; i < n; i++) {
		for (j = 1; j <= 4; j++) { s = (s * 1103515245 + 12345) % 2147483648; x[j] = 8 * s / 2147483648 }
		printf "%.6f,%.6f,%.6f,%.6f\n", x[1], x[2], x[3], x[4]
	}
}' >far.csv
awk -v n=700 'BEGIN { s = 7; print "a,b,c,d,y1,y2"
	for (i = 0; i < n; i++) {
		for (j = 1; j <= 5; j++) { s = (s * 1103515245 + 12345) % 2147483648; x[j] = s / 2147483648 - 0.5 }
		printf "%.6f,%.6f,%.6f,%.6f,%.6f,%.6f\n", x[1], x[2], x[3], x[4], x[1] + x[2] + 0.1 * x[5], x[3] - x[4]
	}
}' >reg.csv
./cls train --data cls.csv --optimizer ivon --epochs 3 --batch 32 --threads 1 --save cls.ckpt \
	--quiet >/dev/null && ./reg train --data reg.csv --optimizer ivon --epochs 3 --batch 32 \
	--threads 1 --save reg.ckpt --quiet >/dev/null
ok $? "one process trains both"

# ---- eval: the single-process JSON, bit for bit ----------------------------
for m in cls reg; do
	./$m eval --load $m.ckpt --data $m.csv --mc 8 --threads 1 >$m.json
	ok $? "$m: eval --mc 8 in one process"
	for np in 1 2 3; do
		mpi $np ./$m eval --load $m.ckpt --data $m.csv --mc 8 --threads 1 >$m.$np.json
		ok $? "$m: eval under mpirun -np $np succeeds"
		cmp -s "$m.json" "$m.$np.json"
		ok $? "$m: and prints the same metrics, byte for byte (-np $np)"
	done
done
mpi 2 ./cls eval --load cls.ckpt --data cls.csv --mc 8 --threads 2 >cls.t2.json
cmp -s cls.json cls.t2.json
ok $? "cls: and with 2 threads per rank (-np 2 --threads 2)"
grep -q '"auroc": 0\.' cls.json
ok $? "the classifier's metrics are not degenerate: $(cat cls.json)"
./cls eval --load cls.ckpt --data cls.csv --ood far.csv --mc 4 --seed 5 --threads 1 >ood.json
mpi 3 ./cls eval --load cls.ckpt --data cls.csv --ood far.csv --mc 4 --seed 5 --threads 1 >ood.3.json
ok $? "eval --ood under mpirun -np 3 succeeds"
is "$(cat ood.3.json)" "$(cat ood.json)" "and gives the single-process OOD metrics"
# adaptive conformal inference is sequential: rank 0 computes it over the
# gathered predictions in file order, so -np 3 (one batch a rank) prints
# the single-process numbers
./reg eval --load reg.ckpt --data reg.csv --mc 4 --threads 1 --conformal reg.csv \
	--conformal-adaptive 0.05 >aci.json
mpi 3 ./reg eval --load reg.ckpt --data reg.csv --mc 4 --threads 1 --conformal reg.csv \
	--conformal-adaptive 0.05 >aci.3.json
ok $? "eval --conformal-adaptive under mpirun -np 3 succeeds"
grep -q '"conformal_adaptive_coverage": 0\.' aci.json
ok $? "with an adaptive coverage: $(cat aci.json)"
is "$(cat aci.3.json)" "$(cat aci.json)" "and gives the single-process adaptive conformal numbers"
./reg eval --load reg.ckpt --data reg.csv --mc 4 --threads 1 --conformal reg.csv \
	--conformal-adaptive 0.05 --conformal-online >online.json
mpi 3 ./reg eval --load reg.ckpt --data reg.csv --mc 4 --threads 1 --conformal reg.csv \
	--conformal-adaptive 0.05 --conformal-online >online.3.json
ok $? "eval --conformal-adaptive --conformal-online under mpirun -np 3 succeeds"
grep -q '"conformal_adaptive_online": true' online.json
ok $? "online: $(cat online.json)"
is "$(cat online.3.json)" "$(cat online.json)" "and gives the single-process online numbers"

# ---- predict: the same rows -------------------------------------------------
for m in cls reg; do
	./$m predict --load $m.ckpt --data $m.csv --mc 8 --threads 1 --out $m.pred.csv
	for np in 2 3; do
		mpi $np ./$m predict --load $m.ckpt --data $m.csv --mc 8 --threads 1 \
			--out $m.pred.$np.csv
		ok $? "$m: predict under mpirun -np $np succeeds"
		cmp -s "$m.pred.csv" "$m.pred.$np.csv"
		ok $? "$m: and writes the single-process CSV, byte for byte (-np $np)"
	done
done
mpi 3 ./reg predict --load reg.ckpt --data reg.csv --mc 8 --threads 1 >reg.stdout.csv
cmp -s reg.pred.csv reg.stdout.csv
ok $? "predict to stdout under -np 3: one copy of the rows, from rank 0"

# ---- errors end every rank ----------------------------------------------------
mpi 3 ./reg eval --load missing.ckpt --data reg.csv >out.txt 2>err.txt
st=$?
ok "$(test $st -ne 0 && test $st -ne 124; echo $?)" "a checkpoint no rank can read: every rank stops, non-zero (status $st)"
is "$(wc -l <err.txt)" 1 "and rank 0 prints the message once: one line on stderr"
is "$(cat err.txt)" "./reg: cannot open checkpoint missing.ckpt: No such file or directory" \
	"the message"
is "$(cat out.txt)" "" "nothing reaches stdout"
printf 'a,b,c,d,y1,y2\n1,2,3\n' >bad.csv
mpi 1 ./reg eval --load reg.ckpt --data reg.csv --threads 1 : \
	-np 2 ./reg eval --load reg.ckpt --data bad.csv --threads 1 >out.txt 2>err.txt
st=$?
ok "$(test $st -ne 0 && test $st -ne 124; echo $?)" "data only ranks 1 and 2 cannot read: every rank stops, non-zero (status $st)"
is "$(cat err.txt)" "./reg: rank 1 of 3: bad.csv:2: row has 3 fields but the header has 6" \
	"and rank 0 alone prints the message of the first failed rank, one line"
is "$(cat out.txt)" "" "nothing reaches stdout"
for procs in 2 3; do # rank 1 alone fails (mpi sets np)
	if [ "$procs" -eq 2 ]; then
		set --
	else
		set -- : -np 1 ./reg eval --load reg.ckpt --data reg.csv --threads 1
	fi
	mpi 1 ./reg eval --load reg.ckpt --data reg.csv --threads 1 : \
		-np 1 ./reg eval --load reg.ckpt --data bad.csv --threads 1 "$@" >out.txt 2>err.txt
	st=$?
	ok "$(test $st -ne 0 && test $st -ne 124; echo $?)" "data rank 1 of $procs alone cannot read: every rank stops (status $st)"
	is "$(cat err.txt)" "./reg: rank 1 of $procs: bad.csv:2: row has 3 fields but the header has 6" \
		"rank 0 prints its message once: one line on stderr"
done
mpi 3 ./reg eval --load reg.ckpt --data reg.csv --threads 1 --bogus >out.txt 2>err.txt
st=$?
is "$st" 2 "a usage error under -np 3: status 2"
is "$(cat err.txt)" "./reg: unknown option '--bogus' for 'eval'
Try './reg --help'." "printed once, by rank 0"
mpi 2 ./reg predict --load reg.ckpt --data bad.csv --threads 1 \
	--out never.csv : -np 1 ./reg predict --load reg.ckpt --data reg.csv --threads 1 --out never.csv \
	>out.txt 2>err.txt
st=$?
ok "$(test $st -ne 0 && test $st -ne 124; echo $?)" "predict: data rank 0 cannot read stops every rank (status $st)"
is "$(cat err.txt)" "./reg: bad.csv:2: row has 3 fields but the header has 6" "with its message, once"
ok "$(test ! -e never.csv; echo $?)" "and writes no file"

done_testing
