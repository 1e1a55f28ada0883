# common.sh: what the example scripts share, sourced by examples/fashion.sh,
# prune.sh, toy1d.sh, whvi.sh, compare.sh, tabular.sh, hetero.sh, counts.sh
# series.sh and charlm.sh (POSIX sh) right after they set
# $me (their own name, e.g. fashion.sh, which prefixes every message).
#
# die MESSAGE...         prints "$me: MESSAGE" on stderr and exits with 1.
# one_outdir ARGS...     exits with 2 and the usage unless ARGS is exactly
#                        one OUTDIR; the make target is $me without .sh.
# need_built TARGET P... dies unless every program P is built (executable),
#                        naming the make target that builds it.
# toy1d_csv FILE ARGS... writes `datagen toy1d ARGS` to FILE ($datagen).
# train_eval NAME MC SET ARGS...
#                        trains $out/NAME on $dir/SET_train.csv (validation
#                        $dir/SET_valid.csv, seed 1, one thread) with ARGS
#                        into $dir/NAME.ckpt, its logs beside it, then
#                        evaluates it on $dir/SET_test.csv with MC samples
#                        into $dir/NAME.json, with the 90% split conformal
#                        intervals calibrated on $dir/SET_calib.csv (rows
#                        that neither train nor choose the epoch:
#                        docs/conformal.md; conformal_eval); dies on a
#                        failure.  Says on stderr what ran, how long it
#                        took and the metrics, unless $quiet is set.
# conformal_eval NAME MC DATA CALIB JSON ARGS...
#                        evaluates $dir/NAME.ckpt on $dir/DATA with MC
#                        samples (seed 1, one thread) into $dir/JSON, with
#                        the 90% split conformal intervals calibrated on
#                        $dir/CALIB and the eval options ARGS
#                        (--conformal-adaptive GAMMA, say); dies on a
#                        failure.
# r_export WHAT DIR SCRIPT ARGS...
#                        runs examples/SCRIPT DIR ARGS with Rscript (an R
#                        script that writes R's data set WHAT into DIR),
#                        dying with a message when Rscript or the data is
#                        missing.
# json_get KEY FILE      the value under "KEY" in a one-line JSON object
#                        (the last line's, if FILE has several).
# conformal_cell FILE    "0.897 ± 0.015": the conformal coverage in eval's
#                        JSON FILE and its binomial standard error over
#                        the FILE's n test examples, sqrt(c (1 - c) / n).

train_eval() {
	_name=$1
	_mc=$2
	_set=$3
	shift 3
	_start=$(date +%s)
	"$out/$_name" train --data "$dir/${_set}_train.csv" --valid "$dir/${_set}_valid.csv" \
		--seed 1 --threads 1 --save "$dir/$_name.ckpt" "$@" \
		>"$dir/$_name.train.json" 2>"$dir/$_name.train.log" || {
		tail -n 3 "$dir/$_name.train.log" >&2
		die "$_name: training failed (the log is $dir/$_name.train.log)"
	}
	conformal_eval "$_name" "$_mc" "${_set}_test.csv" "${_set}_calib.csv" "$_name.json"
	[ -n "${quiet:-}" ] || echo "$me: $_name ($*): $(($(date +%s) - _start)) s, best epoch" \
		"$(json_get best_epoch "$dir/$_name.train.json"): $(cat "$dir/$_name.json")" >&2
}

conformal_eval() {
	_en=$1
	_em=$2
	_ed=$3
	_ec=$4
	_ej=$5
	shift 5
	"$out/$_en" eval --load "$dir/$_en.ckpt" --data "$dir/$_ed" --mc "$_em" \
		--seed 1 --threads 1 --conformal "$dir/$_ec" --level 0.9 "$@" \
		>"$dir/$_ej" || die "$_en: eval${*:+ $*} failed"
}

r_export() {
	_what=$1
	_dir=$2
	_script=$3
	shift 3
	command -v Rscript >/dev/null 2>&1 ||
		die "Rscript is not installed (Debian: apt-get install r-base-core)"
	mkdir -p "$_dir" || die "cannot create $_dir"
	Rscript "$(dirname "$0")/$_script" "$_dir" "$@" ||
		die "could not export $_what (datasets, in Debian's r-base-core)"
}

die() {
	echo "$me: $*" >&2
	exit 1
}

one_outdir() {
	[ $# -eq 1 ] && return 0
	echo "usage: sh examples/$me OUTDIR (run by 'make ${me%.sh}')" >&2
	exit 2
}

need_built() {
	target=$1
	shift
	for p in "$@"; do
		[ -x "$p" ] || die "$p is not built: run 'make $target'"
	done
}

toy1d_csv() {
	file=$1
	shift
	"$datagen" toy1d "$@" >"$file" || die "could not write $file"
}

json_get() {
	sed -n "s/.*\"$1\": \\([^,}]*\\).*/\\1/p" "$2" | tail -n 1
}

conformal_cell() {
	awk -v c="$(json_get conformal_coverage "$1")" -v n="$(json_get n "$1")" \
		'BEGIN { printf "%.3f ± %.3f", c, sqrt(c * (1 - c) / n) }'
}
