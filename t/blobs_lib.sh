# blobs_lib.sh: the data, the build step and the accuracy check that the shell tests
# share, sourced after tap.sh (. "$top_srcdir/t/blobs_lib.sh"):
#
#   blobs N SEED [SPREAD]  CSV on stdout: a header a,b,c,d,class and N rows
#                          of the 3-class blobs t/models/rt_blobs.bnn and
#                          rt_bayes.bnn learn: row i is class i % 3, each
#                          feature its class centre plus SPREAD (default
#                          1.6: well separated; 3.0 overlaps) times a
#                          uniform draw in [-0.5, 0.5) from a linear
#                          congruential generator seeded by SEED, so every
#                          awk writes the same bytes;
#   build NAME BNN         bnnc --main BNN into NAME.c, compiled to NAME
#                          with the suite's $CC, $BNN_CFLAGS and $BNN_LIBS;
#   write_bytes FILE CMD ARGS...
#                          the bytes whose octal escapes (\ooo) CMD ARGS
#                          prints, into FILE: how the tests' awk
#                          generators write IDX files;
#   trains_above PROG OPT BOUND ARGS...
#                          two tests: ./PROG train --optimizer OPT ARGS
#                          into PROG-OPT.ckpt succeeds silently, and its
#                          eval on $held_out (the held-out data's options,
#                          split on purpose) has an accuracy above BOUND;
#   accuracy_above JSON BOUND TEXT
#                          one test: the accuracy in eval's JSON line
#                          exceeds BOUND, named "TEXT: held-out accuracy
#                          A > BOUND".

blobs() {
	awk -v n="$1" -v seed="$2" -v spread="${3:-1.6}" 'BEGIN {
		split("2 0 0 0 0 2 0 -1 -2 -1 0 1", c, " ")
		s = seed
		print "a,b,c,d,class"
		for (i = 0; i < n; i++) {
			k = i % 3
			line = ""
			for (j = 1; j <= 4; j++) {
				s = (s * 1103515245 + 12345) % 2147483648
				u = s / 2147483648
				line = line sprintf("%.6f,", c[k * 4 + j] + spread * (u - 0.5))
			}
			print line k
		}
	}'
}

build() {
	"$BNNC" --main -o "$1.c" "$2" && $CC $BNN_CFLAGS -o "$1" "$1.c" $BNN_LIBS
}

write_bytes() {
	_f=$1
	shift
	# shellcheck disable=SC2059 # the octal escapes are the format
	printf "$("$@")" >"$_f"
}

trains_above() {
	_p=$1
	_o=$2
	_b=$3
	shift 3
	run ./"$_p" train --optimizer "$_o" --save "$_p-$_o.ckpt" --quiet "$@"
	is "$run_status $run_err" "0 " "$_p trains with $_o $*"
	# shellcheck disable=SC2086,SC2154 # held_out: options, split on purpose
	run ./"$_p" eval --load "$_p-$_o.ckpt" $held_out
	accuracy_above "$run_out" "$_b" "$_p with $_o"
}

accuracy_above() {
	_acc=$(printf '%s\n' "$1" | sed -n 's/.*"accuracy": \([0-9.e-]*\).*/\1/p')
	ok "$(awk -v a="$_acc" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 > b + 0) }'; echo $?)" \
		"$3: held-out accuracy $_acc > $2"
}
