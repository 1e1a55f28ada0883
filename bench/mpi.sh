#!/bin/sh
# mpi.sh: the MPI benchmark of `make bench` in a build configured
# --with-mpi (docs/benchmarks.md, "Data-parallel training over MPI").
#
# Epoch throughput of the 784-512-512-10 MLP (examples/fashion_point.bnn,
# compiled by `bnnc --main`) trained with Adam at a global minibatch of
# 256 for two epochs: one process with --threads 1 against
# `mpirun -np 2` with --threads 1 per rank (each rank computes 128 rows
# of every minibatch; the gradients are summed in shared memory, the
# default on one machine: docs/distributed.md, "How the sums go").  The
# figure of a run is the trainer's examples/s of its last epoch (global
# examples: both ranks' rows), so reading the data and starting MPI are
# not counted.  The two runs alternate, BENCH_MPI_ROUNDS times, and the
# speedup is the median of the per-round ratios (a ratio is taken within a
# round, as run.sh does, so that the other load of a shared machine
# cancels).  Then, with the microbenchmark bench/allreduce.c, one
# MPI_Allreduce and one MPI_Iallreduce of the gradient (and of two
# vectors: VOGN's, IVON's and BBB's) of the three networks over shared
# memory and over loopback TCP (--mca btl tcp,self), as docs/scaling.md
# quotes them.  Prints JSON lines:
#   {"bench":"mpi_epoch","np":..,"threads":1,"batch":256,"round":..,"examples_per_second":..}
#   {"bench":"mpi_target","np":2,"threads":1,"batch":256,"speedup":..,"min":..,"max":..,"target":1.6,"met":..}
#   {"bench":"allreduce","transport":"shm"|"tcp",...}   (bench/allreduce.c's lines)
#
# Usage: sh bench/mpi.sh MODEL_PROGRAM ALLREDUCE_PROGRAM
# Environment: BENCH_MPI_ROUNDS [5]; BENCH_MPI_DATA, a directory with
# Fashion-MNIST's train-images-idx3-ubyte.gz and train-labels-idx1-ubyte.gz
# [/usr/share/datasets/fashion-mnist, else examples/datagen's synthetic
# stand-in made here: DATAGEN=path of examples/datagen]; MPIRUN [mpirun];
# BENCH_STRICT=1 makes a missed target an exit status of 1.  Open MPI's
# root override is set here.  The machine should be otherwise idle: two
# ranks in lockstep lose more to another process than one process does.
# POSIX sh and awk only.

if [ $# -ne 2 ]; then
	echo "usage: sh $0 MODEL_PROGRAM ALLREDUCE_PROGRAM" >&2
	exit 2
fi
prog=$1
allreduce=$2
rounds=${BENCH_MPI_ROUNDS:-5}
MPIRUN=${MPIRUN:-mpirun}
case $rounds in
'' | *[!0-9]* | 0)
	echo "mpi.sh: BENCH_MPI_ROUNDS must be a positive integer" >&2
	exit 2
	;;
esac
if ! command -v "$MPIRUN" >/dev/null 2>&1; then
	echo "mpi.sh: $MPIRUN is not installed (Debian package openmpi-bin)" >&2
	exit 1
fi
OPENBLAS_NUM_THREADS=1
OMP_NUM_THREADS=1
OMPI_ALLOW_RUN_AS_ROOT=1
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OPENBLAS_NUM_THREADS OMP_NUM_THREADS OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bnn-mpi.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' 0
trap 'exit 1' HUP INT TERM

data=${BENCH_MPI_DATA:-/usr/share/datasets/fashion-mnist}
if [ ! -f "$data/train-images-idx3-ubyte.gz" ]; then
	if [ -z "${DATAGEN:-}" ]; then
		echo "mpi.sh: no Fashion-MNIST in $data, and DATAGEN is not set" >&2
		exit 1
	fi
	data=$tmp/data
	"$DATAGEN" images "$data" --n-train 60000 --n-test 1000 --seed 1 || exit 1
	echo "# note: synthetic Fashion-MNIST stand-in (examples/datagen), 60,000 images"
fi

# Two ranks on a machine of 2 cores or more run as mpirun places them by
# default, one per core (bound): --oversubscribe makes Open MPI's idle
# ranks yield the processor in every poll, which cost 5-6% of the epoch
# here (69,700 against 74,000 examples/s); on one core it is needed.
if [ "$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)" -ge 2 ]; then
	place=
else
	place="--oversubscribe --bind-to none"
fi

# One training run: NP (1: no mpirun) ROUND; prints the mpi_epoch line.
train() {
	np=$1
	set -- "$prog" train --data "$data/train-images-idx3-ubyte.gz" \
		--labels "$data/train-labels-idx1-ubyte.gz" --optimizer adam --lr 1e-3 \
		--epochs 2 --batch 256 --seed 1 --threads 1 --quiet --save "$tmp/m$np.ckpt"
	if [ "$np" -gt 1 ]; then
		# shellcheck disable=SC2086  # $place is words
		set -- "$MPIRUN" $place -np "$np" "$@"
	fi
	if ! "$@" >"$tmp/out" 2>"$tmp/err"; then
		cat "$tmp/err" >&2
		echo "mpi.sh: the run with $np process(es) failed" >&2
		exit 1
	fi
	eps=$(sed -n 's/.*"examples_per_second": \([0-9.]*\).*/\1/p' "$tmp/out" | tail -1)
	if [ -z "$eps" ]; then
		echo "mpi.sh: no examples_per_second in: $(cat "$tmp/out")" >&2
		exit 1
	fi
	echo "{\"bench\":\"mpi_epoch\",\"np\":$np,\"threads\":1,\"batch\":256,\"round\":$r,\"examples_per_second\":$eps}"
	echo "$np $r $eps" >>"$tmp/epochs"
}

r=1
while [ "$r" -le "$rounds" ]; do
	train 1
	train 2
	r=$((r + 1))
done

# The median of the per-round ratios, and their range.
awk -v strict="${BENCH_STRICT:-0}" '
$1 == 1 { one[$2] = $3 } $1 == 2 { two[$2] = $3 }
END {
	n = 0
	for (r in one) if (r in two && one[r] > 0) ratio[++n] = two[r] / one[r]
	for (i = 2; i <= n; i++) { v = ratio[i]; for (j = i - 1; j >= 1 && ratio[j] > v; j--) ratio[j + 1] = ratio[j]; ratio[j + 1] = v }
	med = n % 2 ? ratio[(n + 1) / 2] : (ratio[n / 2] + ratio[n / 2 + 1]) / 2
	met = med >= 1.6 ? "true" : "false"
	printf "{\"bench\":\"mpi_target\",\"np\":2,\"threads\":1,\"batch\":256,\"speedup\":%.3f,\"min\":%.3f,\"max\":%.3f,\"target\":1.6,\"met\":%s}\n", med, ratio[1], ratio[n], met
	printf "# MPI: -np 2 --threads 1 over one process --threads 1, MLP epoch at batch 256: %.2fx (rounds: %d, range %.2f-%.2f; target 1.6x: %s)\n", med, n, ratio[1], ratio[n], met == "true" ? "met" : "missed"
	exit (strict == 1 && met != "true")
}' "$tmp/epochs"
status=$?

# The allreduce microbenchmark over both transports (docs/scaling.md).
for transport in shm tcp; do
	if [ $transport = tcp ]; then
		set -- --mca btl tcp,self
	else
		set --
	fi
	"$MPIRUN" --oversubscribe --bind-to none "$@" -np 2 "$allreduce" --repeats 21 --min-floats 256 |
		sed "s/^{\"bench\":\"allreduce\",/{\"bench\":\"allreduce\",\"transport\":\"$transport\",/" ||
		status=1
done
exit $status
