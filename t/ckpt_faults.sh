#!/bin/sh
# ckpt_faults.sh: a checkpoint save that fails loses nothing (docs/
# checkpoint.md, "Guarantees and how they are tested").  The program of
# t/models/rt_blobs.bnn trains and saves over an older checkpoint while
#   1. the disk is full (a tmpfs of one page, which holds the old file but
#      not a second one);
#   2. the directory is read-only (a tmpfs remounted read-only as root,
#      where permissions do not stop root; chmod 555 otherwise);
#   3. the directory is removed while the program trains;
#   4. t/faultshim.so, preloaded, fails write, flush, fsync, rename or
#      close of the temporary file with EIO or ENOSPC.
# Each time: the exact message, naming the file and the reason; a non-zero
# exit status; the old checkpoint byte for byte as it was; no temporary
# file left.  A failed fsync of the directory, after the rename, is
# ignored (best effort): that save succeeds.  Mounting needs root and
# CAP_SYS_ADMIN: without them 1 and 2 (as root) are skipped with the
# reason, unless BNN_REQUIRE_ROOT=1 (.ci/run sets it), which makes that a
# failure.  The shim needs /proc/self/fd (Linux).  About five seconds.
#
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"

shim=$top_builddir/t/faultshim.so
saver=$top_builddir/t/ckpt_kill_saver
cd "$TAP_TMP" || bail_out "no temporary directory"

# Mounts are undone before tap.sh's cleanup removes the directory.
mounted=
cleanup() {
	for m in $mounted; do
		umount "$m" 2>/dev/null
	done
	tap_cleanup
}
trap cleanup EXIT

awk 'BEGIN { s = 5; print "a,b,c,d,class"
	for (i = 0; i < 300; i++) {
		for (j = 0; j < 4; j++) { s = (s * 1103515245 + 12345) % 2147483648; printf "%.4f,", s / 2147483648 - 0.5 }
		print i % 3
	} }' >train.csv
# shellcheck disable=SC2086  # CC, BNN_CFLAGS and BNN_LIBS hold words
"$BNNC" --main -o blobs.c "$top_srcdir/t/models/rt_blobs.bnn" &&
	$CC $BNN_CFLAGS -o blobs blobs.c $BNN_LIBS
ok $? "the model builds"
./blobs train --data train.csv --epochs 1 --batch 16 --quiet --save old.ckpt >/dev/null &&
	./blobs train --data train.csv --epochs 2 --batch 16 --quiet --save new.ckpt >/dev/null
ok $? "an old and a new checkpoint"

# train_over DIR: trains for 2 epochs, saving over DIR/m.ckpt (old.ckpt);
# sets run_status and run_err.
train_over() {
	run ./blobs train --data train.csv --epochs 2 --batch 16 --quiet --save "$1/m.ckpt"
}

# intact DIR WHAT: DIR holds m.ckpt, still old.ckpt, and nothing else.
intact() {
	cmp -s "$1/m.ckpt" old.ckpt
	ok $? "$2: the old checkpoint is intact"
	is "$(ls -A "$1")" "m.ckpt" "$2: no temporary file is left"
}

# mount_tmpfs DIR OPTIONS: 0 if a tmpfs is mounted on DIR; else sets why.
why=
mount_tmpfs() {
	mkdir -p "$1"
	if [ "$(id -u)" != 0 ]; then
		why="mounting a tmpfs needs root"
	elif ! mount -t tmpfs -o "$2" tmpfs "$1" 2>mount.err; then
		why="mount -t tmpfs failed: $(cat mount.err)"
	else
		mounted="$1 $mounted"
		return 0
	fi
	return 1
}

# skip_mount N WHAT: skips N tests, or fails one under BNN_REQUIRE_ROOT=1.
skip_mount() {
	if [ "${BNN_REQUIRE_ROOT-}" = 1 ]; then
		ok 1 "$2: BNN_REQUIRE_ROOT=1 but $why"
	else
		skip "$1" "$2: $why"
	fi
}

# ---- 1. a full disk ---------------------------------------------------------
page=$(getconf PAGESIZE 2>/dev/null || echo 4096)
if mount_tmpfs full "size=$page"; then
	cp old.ckpt full/m.ckpt
	train_over full
	is "$run_status:$run_err" "1:./blobs: cannot write checkpoint full/m.ckpt: No space left on device" \
		"a full disk: the message names the file and says the disk is full"
	intact full "a full disk"
	"$saver" save full/m.ckpt new.ckpt 2>saver.err
	is "$?:$(cat saver.err)" "1:ckpt_kill_saver: cannot write checkpoint full/m.ckpt: No space left on device" \
		"a full disk: bnn_ckpt_save returns the same error"
	intact full "a full disk, bnn_ckpt_save"
else
	skip_mount 6 "a full disk"
fi

# ---- 2. a read-only directory -----------------------------------------------
if [ "$(id -u)" = 0 ]; then
	if mount_tmpfs ro size=1m && cp old.ckpt ro/m.ckpt && mount -o remount,ro ro 2>mount.err; then
		reason="Read-only file system"
	else
		reason=
		why=${why:-"mount -o remount,ro failed: $(cat mount.err)"}
	fi
else
	mkdir ro && cp old.ckpt ro/m.ckpt && chmod 555 ro
	reason="Permission denied"
fi
if [ -n "$reason" ]; then
	train_over ro
	is "$run_status:$run_err" "1:./blobs: cannot write --save 'ro/m.ckpt': directory 'ro': $reason" \
		"a read-only directory: the driver refuses it before training"
	"$saver" save ro/m.ckpt new.ckpt 2>saver.err
	is "$?:$(cat saver.err)" "1:ckpt_kill_saver: cannot write checkpoint ro/m.ckpt: $reason" \
		"a read-only directory: bnn_ckpt_save says so"
	intact ro "a read-only directory"
else
	skip_mount 4 "a read-only directory"
fi
[ -d ro ] && chmod 755 ro 2>/dev/null

# ---- 3. the directory removed while training ---------------------------------
mkdir gone && cp old.ckpt gone/m.ckpt
./blobs train --data train.csv --epochs 10000 --batch 16 --save gone/m.ckpt >/dev/null 2>gone.err &
pid=$!
n=0
until grep -q '^epoch 1/10000' gone.err || [ $n -ge 1000 ]; do
	sleep 0.01
	n=$((n + 1))
done
rm -rf gone
wait "$pid"
st=$?
is "$st:$(tail -1 gone.err)" "1:./blobs: cannot write checkpoint gone/m.ckpt: No such file or directory" \
	"the directory removed during training: the final save says so"
ok "$(test ! -e gone; echo $?)" "and creates nothing"

# ---- 4. faults injected by t/faultshim.so ------------------------------------
# Under AddressSanitizer the shim comes before the sanitizer's runtime in
# the list of libraries, which ASan refuses by default; the shim forwards
# every call to the next definition, the sanitizer's interceptor, so the
# check is turned off (and the option is ignored without ASan).
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
# fault CALL ERRNO SKIP DESC: one save of the driver under the shim.
fault() {
	rm -rf d fault.log && mkdir d && cp old.ckpt d/m.ckpt
	run env LD_PRELOAD="$shim" BNN_FAULT_CALL="$1" BNN_FAULT_ERRNO="$2" BNN_FAULT_SKIP="$3" \
		BNN_FAULT_PATH='*/m.ckpt.tmp.*' BNN_FAULT_LOG="$TAP_TMP/fault.log" \
		./blobs train --data train.csv --epochs 2 --batch 16 --quiet --save d/m.ckpt
}
if [ ! -d /proc/self/fd ]; then
	skip 36 "the fault shim reads /proc/self/fd, which this system does not have"
else
	for f in "write EIO 0 Input/output error" "write ENOSPC 2 No space left on device" \
		"flush EIO 0 Input/output error" "fsync EIO 0 Input/output error" \
		"fsync ENOSPC 0 No space left on device" "rename EIO 0 Input/output error" \
		"close EIO 0 Input/output error" "close EDQUOT 0 Disk quota exceeded"; do
		# shellcheck disable=SC2086  # the four words of f
		set -- $f
		call=$1 errno=$2 skipn=$3
		shift 3
		fault "$call" "$errno" "$skipn"
		desc="$call fails with $errno"
		[ "$skipn" = 0 ] || desc="$desc after $skipn calls"
		is "$run_status:$run_err" "1:./blobs: cannot write checkpoint d/m.ckpt: $*" "$desc: the message"
		# (rename's path is the one given, relative; a descriptor's is absolute)
		is "$(sed "s|$TAP_TMP/||; s/tmp\..*/tmp.XXXXXX/" fault.log 2>/dev/null | sort -u)" \
			"$call d/m.ckpt.tmp.XXXXXX" \
			"$desc: the fault was injected"
		intact d "$desc"
	done
	# The directory's fsync comes after the rename, which is already done.
	rm -rf d fault.log && mkdir d && cp old.ckpt d/m.ckpt
	run env LD_PRELOAD="$shim" BNN_FAULT_CALL=fsync BNN_FAULT_PATH='*/d' \
		BNN_FAULT_LOG="$TAP_TMP/fault.log" \
		./blobs train --data train.csv --epochs 2 --batch 16 --quiet --save d/m.ckpt
	is "$run_status:$(cat fault.log 2>/dev/null)" "0:fsync $TAP_TMP/d" \
		"a failed fsync of the directory is injected, and the save still succeeds"
	cmp -s d/m.ckpt new.ckpt
	ok $? "with the new checkpoint in place"
	is "$(ls -A d)" "m.ckpt" "and nothing else"
	# Without BNN_FAULT_CALL the shim changes nothing.
	rm -rf d && mkdir d
	run env LD_PRELOAD="$shim" ./blobs train --data train.csv --epochs 2 --batch 16 --quiet \
		--save d/m.ckpt
	cmp -s d/m.ckpt new.ckpt
	ok $? "the shim without a fault writes the same checkpoint"
fi
done_testing
