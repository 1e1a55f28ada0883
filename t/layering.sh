#!/bin/sh
# layering.sh: the include rules that keep the source tree in layers
# (docs/internals.md draws them).
#
# Every quoted #include of the compiler and the library is resolved the
# way the build resolves it, and must point down or sideways, never up:
#   common/              common/ only: the few utilities that the compiler
#                        and the library share ("common/x.h" from dsl/,
#                        gen/ and the runtime's layers, never from the
#                        public headers);
#   dsl/                 dsl/ only (and its generated parser.h);
#   gen/                 gen/, dsl/ and the public headers runtime/include/;
#   runtime/include/     the public headers only (a header in a subfolder
#                        may also name its neighbours);
#   runtime/LAYER/       its own folder, the public headers, and the
#                        internal headers of lower layers written with
#                        their folder ("base/floats.h"); the layers, lowest
#                        first: base, kernels, optim and metrics, train;
#                        io/, plot/ and cli/ use the public headers only;
#   nothing in runtime/ includes dsl/ or gen/.
# Each file checked is one test ("ok N - runtime/train/state.c"); a broken
# rule prints every offending line as file:line: message.  The checker
# first runs on a small tree with one violation of each rule and must
# report each of them with the exact message.
#
# shellcheck shell=sh source=t/tap.sh disable=SC2154  # the harness sets top_srcdir
. "$TAP_SH"

# The rank of a runtime layer (a lower layer has a lower rank), "public"
# for the folders that may use the public headers only, or empty for a
# folder that is not a layer.
layer_rank() {
	case $1 in
	base) echo 1 ;;
	kernels) echo 2 ;;
	optim | metrics) echo 3 ;;
	train) echo 4 ;;
	io | plot | cli) echo public ;;
	*) echo ;;
	esac
}

# check_file ROOT PATH: prints one line per include of ROOT/PATH that
# breaks a rule; prints nothing when the file keeps them all.
check_file() {
	root=$1
	path=$2
	dir=${path%/*}
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$root/$path" |
		while read -r inc; do
			line=$(grep -n "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"$inc\"" "$root/$path" |
				head -n 1 | cut -d: -f1)
			where="$path:$line"
			case $inc in
			../* | */../*)
				echo "$where: \"$inc\" climbs out of its folder"
				continue
				;;
			esac
			case $inc in
			common/*)
				case $dir in
				dsl | gen | runtime/base | runtime/kernels | runtime/optim | runtime/metrics | \
					runtime/train | runtime/io | runtime/plot | runtime/cli)
					[ -f "$root/$inc" ] && continue
					;;
				esac
				echo "$where: \"$inc\" is not a header of common/ that $dir/ may use"
				continue
				;;
			esac
			case $dir in
			common)
				[ -f "$root/common/$inc" ] && continue
				echo "$where: common/ may include only common/, not \"$inc\""
				;;
			dsl)
				if [ -f "$root/dsl/$inc" ] || [ "$inc" = parser.h ]; then
					continue
				fi
				echo "$where: dsl/ may include only dsl/, not \"$inc\""
				;;
			gen)
				if [ -f "$root/gen/$inc" ] || [ -f "$root/dsl/$inc" ] ||
					[ -f "$root/runtime/include/$inc" ] || [ "$inc" = parser.h ]; then
					continue
				fi
				echo "$where: gen/ may include gen/, dsl/ and runtime/include/, not \"$inc\""
				;;
			runtime/include | runtime/include/*)
				if [ -f "$root/$dir/$inc" ] || [ -f "$root/runtime/include/$inc" ]; then
					continue
				fi
				echo "$where: a public header may include only public headers, not \"$inc\""
				;;
			runtime/*)
				own=${dir#runtime/}
				rank=$(layer_rank "$own")
				if [ -f "$root/$dir/$inc" ] || [ -f "$root/runtime/include/$inc" ] ||
					[ "$inc" = config.h ]; then
					continue
				fi
				case $inc in
				*/*)
					to=${inc%%/*}
					to_rank=$(layer_rank "$to")
					if [ ! -f "$root/runtime/$inc" ] || [ -z "$to_rank" ]; then
						echo "$where: \"$inc\" is not a header of a runtime layer"
					elif [ "$rank" = public ]; then
						echo "$where: $own/ uses the public headers only, not \"$inc\""
					elif [ "$to_rank" = public ] || [ "$to_rank" -ge "$rank" ]; then
						echo "$where: $own/ may not include \"$inc\" from a layer that is not below it"
					fi
					;;
				*)
					echo "$where: \"$inc\" is neither in $dir/ nor a public header (internal headers of a lower layer are included with their folder)"
					;;
				esac
				;;
			esac
		done
}

# check_tree ROOT: check_file on every C source and header of the
# compiler and the library under ROOT.
check_tree() {
	(cd "$1" && find common dsl gen runtime -type f \( -name '*.c' -o -name '*.h' -o -name '*.y' \
		-o -name '*.l' \) 2>/dev/null | LC_ALL=C sort)
}

# 1. The checker catches each kind of violation, with its message.
fake=$TAP_TMP/fake
mkdir -p "$fake/common" "$fake/dsl" "$fake/gen" "$fake/runtime/include" "$fake/runtime/base" \
	"$fake/runtime/train" "$fake/runtime/cli"
touch "$fake/common/text.h" "$fake/dsl/ast.h" "$fake/gen/emit.h" "$fake/runtime/include/bnn.h" \
	"$fake/runtime/base/floats.h" "$fake/runtime/train/train_internal.h" \
	"$fake/runtime/cli/cli_internal.h"
printf '#include "text.h"\n#include "ast.h"\n' >"$fake/common/text.c"
printf '#include "ast.h"\n#include "emit.h"\n#include "common/text.h"\n' >"$fake/dsl/a.c"
printf '#include "bnn.h"\n#include "train/train_internal.h"\n' >"$fake/gen/b.c"
printf '#include "bnn.h"\n#include "base/floats.h"\n#include "common/text.h"\n' \
	>"$fake/runtime/include/bnn_x.h"
printf '#include "bnn.h"\n#include "train/train_internal.h"\n' >"$fake/runtime/base/c.c"
printf '#include "base/floats.h"\n#include "cli_internal.h"\n' >"$fake/runtime/cli/d.c"
printf '#include "ast.h"\n#include "../base/floats.h"\n#include "base/floats.h"\n' \
	>"$fake/runtime/train/e.c"
got=$(for f in $(check_tree "$fake"); do check_file "$fake" "$f"; done)
want='common/text.c:2: common/ may include only common/, not "ast.h"
dsl/a.c:2: dsl/ may include only dsl/, not "emit.h"
gen/b.c:2: gen/ may include gen/, dsl/ and runtime/include/, not "train/train_internal.h"
runtime/base/c.c:2: base/ may not include "train/train_internal.h" from a layer that is not below it
runtime/cli/d.c:1: cli/ uses the public headers only, not "base/floats.h"
runtime/include/bnn_x.h:2: a public header may include only public headers, not "base/floats.h"
runtime/include/bnn_x.h:3: "common/text.h" is not a header of common/ that runtime/include/ may use
runtime/train/e.c:1: "ast.h" is neither in runtime/train/ nor a public header (internal headers of a lower layer are included with their folder)
runtime/train/e.c:2: "../base/floats.h" climbs out of its folder'
is "$got" "$want" "the checker reports each kind of forbidden include"

# 2. The tree itself keeps the rules, file by file.
for f in $(check_tree "$top_srcdir"); do
	bad=$(check_file "$top_srcdir" "$f")
	if [ -z "$bad" ]; then
		ok 0 "$f"
	else
		ok 1 "$f"
		diag "$bad"
	fi
done

done_testing
