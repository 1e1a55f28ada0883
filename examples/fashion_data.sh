# fashion_data.sh: where the Fashion-MNIST examples find their data, sourced
# by examples/fashion.sh, prune.sh and compare.sh (POSIX sh).
#
# fashion_data TARGET WHAT sets
#   dir   the directory holding the four gzip IDX files: Debian's
#         dataset-fashion-mnist in /usr/share/datasets/fashion-mnist (or
#         $FASHION_MNIST_DIR); when they are not all there, a synthetic
#         stand-in that `datagen images` writes to $out/synthetic (once:
#         an existing one is reused, it is the same for the same seed),
#         announced on stderr;
#   data  "Fashion-MNIST" or "the synthetic stand-in", for messages.
# TARGET is the make target that builds $datagen (for the message when it
# is missing); WHAT names what the caller prints ("the metrics below").
# The caller defines $me, $out and $datagen, and sources common.sh (die).

fashion_data() {
	dir=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
	have=yes
	for f in train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz \
	         t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz; do
		[ -r "$dir/$f" ] || have=no
	done
	if [ "$have" = yes ]; then
		echo "$me: Fashion-MNIST from $dir" >&2
		data="Fashion-MNIST"
		return 0
	fi
	[ -x "$datagen" ] || die "$datagen is not built: run 'make $1'"
	echo "$me: Fashion-MNIST is not installed in $dir" >&2
	echo "$me: (Debian: apt-get install dataset-fashion-mnist, or set FASHION_MNIST_DIR)." >&2
	echo "$me: USING A SYNTHETIC STAND-IN in $out/synthetic: $2" >&2
	echo "$me: only show that the pipeline works, not how it does on Fashion-MNIST." >&2
	dir=$out/synthetic
	if [ ! -r "$dir/t10k-labels-idx1-ubyte.gz" ]; then
		"$datagen" images "$dir" --n-train 60000 --n-test 10000 --seed 1 ||
			die "could not write the synthetic data set to $dir"
	fi
	data="the synthetic stand-in"
}
