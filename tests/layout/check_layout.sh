#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# check_layout.sh - the layering the tree and the build keep. One rule per
# call, named by its first argument:
#   sim SRC LLCD LLCD_SIM
#       the production daemon carries no simulator: no file under agent/
#       includes a header of sim/ (sim/ may use agent's loop and daemon
#       core, never the other way round); the built llcd has no symbol of
#       sim/ (sim_*, simbe_*, llcsim*), while llcd-sim, built from the same
#       daemon core, has them (so that the symbol check can fail)
#   bench SRC
#       nothing in bench/ includes or compiles a file of tests/ (what both
#       need is in testsupport/, a library both link): no #include of a
#       path in tests/ or of a header that exists only there, no source
#       under tests/ in bench's CMake files
#   engine NAME "LIBS" BINARY
#       target NAME (llcctl's protocol library, the tracer) links only what
#       it includes: LIBS (its direct link libraries, from CMake) name
#       neither the policy engine (llcpolicy, llcpolicy_io) nor the agent,
#       and BINARY, linked with it, has no engine symbol (policy_*, topo_*,
#       annot_*), while llcd has them (so the check can fail)
#   prefixes LIB.a...
#       every symbol a library of the engine exports carries its module's
#       prefix: the name of the file that defines it (topo_hwloc.c: topo_
#       or topo_hwloc_), or policy_ (the engine's API and policy.c's
#       helpers); annot_ is annotation's
#   bpf SRC CLANG ARCH
#       the tracer's BPF object builds without the build host's BTF: the
#       compile runs in a mount namespace where /sys/kernel/btf is an empty
#       tmpfs, and the object carries CO-RE relocations (.BTF.ext)
#   size SRC
#       no C file or header outside tests/ is over 1,000 lines (a larger
#       one is split by concern)
#   agent SRC
#       agent/'s folders keep their direction: ctl/ (llcctl, a client)
#       includes no header of daemon/, drivers/ or live/; drivers/ none of
#       ctl/ or live/ and of daemon/ only log.h; daemon/ of ctl/ only the
#       protocol (ctl.h), none of drivers/, and of live/ only in llcd.c
#       (the program that makes the live back-end); live/ the drivers, none
#       of ctl/, and of daemon/ only the seam (backend.h, query.h, hooks.h),
#       the mode names, the log and the stats; a private header (*_int.h)
#       is included only in its folder
#   seam SRC
#       the back-end interface (agent/daemon/backend.h), the run loop's
#       hooks (hooks.h) and llcctl's query interface (query.h) name no
#       back-end: outside comments no word live, libvirt, virt, qmp,
#       qmpback, sim, llcsim, proxmox, kubevirt, ldom, and they include only
#       headers of common/ and policy/ (query.h also backend.h)
#   codemap SRC
#       docs/design.md's code map follows the tree (check_codemap.py)
#   docpaths SRC
#       every file docs/*.md and README.md cite by path (under one of the
#       tree's top folders, ending in .c, .h, .sh, .py or .cmake) exists;
#       a path with NAME in it is a placeholder
#   owners SRC
#       struct ldom's ext_* members (a domain of another source) have one
#       owner: no file of agent/live/ but ext.c assigns or frees one; and
#       no private header of agent/ (*_int.h) has more than 8 #includes
# Usage: check_layout.sh RULE ARGS...
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok   $*"; }
shopt -s nullglob globstar

# includes FILE: the quoted #include names of FILE
includes() { sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1"; }

rule_sim() {
	local src=$1 llcd=$2 llcd_sim=$3 sim_headers bad= base pattern n_sim syms
	command -v nm >/dev/null || fail "no nm: install binutils (scripts/deps)"
	sim_headers=$(cd "$src/sim" && ls -- *.h)
	[ -n "$sim_headers" ] || fail "found no header in sim/"
	for f in "$src"/agent/**/*.[ch]; do
		while read -r inc; do
			base=${inc##*/}
			# a header of sim/: named after one there (and not agent's own), or reached through ../sim/
			if [[ $inc == *sim/* ]] || { grep -qx -- "$base" <<<"$sim_headers" && [ ! -e "$(dirname "$f")/$inc" ]; }; then
				bad+="${f#"$src"/}: #include \"$inc\""$'\n'
			fi
		done < <(includes "$f")
	done
	[ -z "$bad" ] || fail "agent/ includes headers of sim/:"$'\n'"$bad"
	ok "no file under agent/ includes a header of sim/ ($(wc -w <<<"$sim_headers") headers there)"

	pattern=' [A-Za-z] (sim_|simbe_|llcsim)'
	n_sim=$(nm "$llcd_sim" | grep -cE "$pattern" || true)
	[ "$n_sim" -ge 10 ] || fail "llcd-sim has only $n_sim simulator symbols: the check below would prove nothing"
	syms=$(nm "$llcd" | grep -E "$pattern" || true)
	[ -z "$syms" ] || fail "llcd has simulator symbols:"$'\n'"$(head -20 <<<"$syms")"
	ok "llcd has no simulator symbol (llcd-sim has $n_sim)"
}

rule_bench() {
	local src=$1 bad= n=0 only_tests inc base
	# headers that exist under tests/ and nowhere else in the tree
	only_tests=$(comm -23 <(cd "$src/tests" && find . -name '*.h' -printf '%f\n' | sort -u) \
		<(cd "$src" && find . -path ./tests -prune -o -path './build*' -prune -o -name '*.h' -printf '%f\n' | sort -u))
	for f in "$src"/bench/**/*.[ch]; do
		n=$((n + 1))
		while read -r inc; do
			base=${inc##*/}
			if [[ $inc == *tests/* ]] || grep -qx -- "$base" <<<"$only_tests"; then
				bad+="${f#"$src"/}: #include \"$inc\""$'\n'
			fi
		done < <(includes "$f")
	done
	[ "$n" -ge 3 ] || fail "found only $n C files under bench/"
	for f in "$src"/bench/**/CMakeLists.txt "$src"/bench/**/*.cmake; do
		# a path into tests/ on a line that builds something
		while read -r line; do
			bad+="${f#"$src"/}: $line"$'\n'
		done < <(grep -nE '^[^#]*(add_executable|add_library|target_sources|target_include_directories)' "$f" |
			grep -E 'tests/' || true)
	done
	[ -z "$bad" ] || fail "bench/ includes or compiles files of tests/:"$'\n'"$bad"
	ok "nothing in bench/ ($n C files) includes or compiles a file of tests/"
}

rule_engine() {
	local name=$1 libs=$2 bin=$3 llcd=$4 pattern n syms
	command -v nm >/dev/null || fail "no nm: install binutils (scripts/deps)"
	for l in ${libs//;/ }; do
		case $l in
		llcpolicy|llcpolicy_io|llcagent_*|llcd_core) fail "$name links $l (its libraries: $libs)" ;;
		esac
	done
	pattern=' [TDRB] (policy_|topo_|annot_)'
	n=$(nm "$llcd" | grep -cE "$pattern" || true)
	[ "$n" -ge 20 ] || fail "llcd has only $n engine symbols: the check below would prove nothing"
	syms=$(nm "$bin" | grep -E "$pattern" || true)
	[ -z "$syms" ] || fail "$(basename "$bin") (linked with $name) has engine symbols:"$'\n'"$(head -20 <<<"$syms")"
	ok "$name links no engine ($libs); $(basename "$bin") has none of its symbols (llcd has $n)"
}

rule_prefixes() {
	local bad= n=0 obj sym stem first
	command -v nm >/dev/null || fail "no nm: install binutils (scripts/deps)"
	for lib in "$@"; do
		while read -r obj sym; do
			n=$((n + 1))
			stem=${obj%.c.o}
			first=${stem%%_*}
			[ "$first" = annotation ] && first=annot
			case $sym in
			"$stem"_*|"$first"_*|policy_*) ;;
			__*) n=$((n - 1)) ;;    # the compiler's (ASan: __odr_asan.X, __asan_*)
			*) bad+="$(basename "$lib") ${stem}.c: $sym"$'\n' ;;
			esac
		done < <(nm -g --defined-only -A "$lib" | awk '{ split($1, a, ":"); print a[2], $3 }')
	done
	[ "$n" -ge 50 ] || fail "found only $n exported symbols in $*"
	[ -z "$bad" ] || fail "exported symbols without their module's prefix:"$'\n'"$bad"
	ok "all $n symbols the engine exports carry their module's prefix"
}

rule_bpf() {
	local src=$1 clang=$2 arch=$3 tmp out sections
	command -v unshare >/dev/null || fail "no unshare: install util-linux"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' RETURN
	[ -d /sys/kernel/btf ] || fail "/sys/kernel/btf is missing here: nothing to hide, the check would prove nothing"
	out=$(unshare --mount sh -c '
		mount --make-rprivate / && mount -t tmpfs none /sys/kernel/btf || exit 99
		[ ! -e /sys/kernel/btf/vmlinux ] || exit 98
		exec "$@"' sh "$clang" -g -O2 -Wall -target bpf -D__TARGET_ARCH_"$arch" -I"$src/agent/drivers" \
		-c "$src/agent/drivers/tracer.bpf.c" -o "$tmp/tracer.bpf.o" 2>&1) || {
		rc=$?
		[ "$rc" -ne 99 ] || fail "cannot hide /sys/kernel/btf (needs root and mount namespaces): $out"
		[ "$rc" -ne 98 ] || fail "/sys/kernel/btf/vmlinux still visible after hiding it"
		fail "the BPF object does not build without the host's BTF:"$'\n'"$out"
	}
	[ -z "$out" ] || fail "clang warned building the BPF object:"$'\n'"$out"
	# the section list read whole first: grep -q leaving a pipe early would
	# kill readelf with SIGPIPE, a failure under pipefail
	sections=$(readelf -S "$tmp/tracer.bpf.o") || fail "readelf cannot read tracer.bpf.o"
	grep -q '\.BTF\.ext' <<<"$sections" ||
		fail "tracer.bpf.o has no .BTF.ext: no CO-RE relocations"
	ok "tracer.bpf.o builds with /sys/kernel/btf hidden, with CO-RE relocations (.BTF.ext)"
}

rule_size() {
	local src=$1 bad= n=0 f lines
	while IFS= read -r -d '' f; do
		n=$((n + 1))
		lines=$(wc -l <"$f")
		[ "$lines" -le 1000 ] || bad+="${f#"$src"/}: $lines lines"$'\n'
	done < <(find "$src" \( -path "$src/tests" -o -path "$src/.git" -o -path "$src/build*" \) -prune -o \
		-type f \( -name '*.c' -o -name '*.h' \) -print0)
	[ "$n" -ge 50 ] || fail "found only $n C files outside tests/"
	[ -z "$bad" ] || fail "C files over 1,000 lines (split them by concern):"$'\n'"$bad"
	ok "none of the $n C files outside tests/ is over 1,000 lines"
}

# folder_of SRC HEADER FROM_DIR: the agent/ folder whose header HEADER is
# (the including file's own folder first, as the compiler looks), or ""
folder_of() {
	local src=$1 inc=$2 from=$3 d
	[ -e "$from/$inc" ] && { basename "$from"; return; }
	for d in ctl daemon drivers live; do
		[ -e "$src/agent/$d/$inc" ] && { echo "$d"; return; }
	done
	echo ""
}

rule_agent() {
	local src=$1 bad= n=0 f dir inc to base
	for d in ctl daemon drivers live; do
		[ -d "$src/agent/$d" ] || fail "no folder agent/$d"
	done
	for f in "$src"/agent/{ctl,daemon,drivers,live}/*.[ch]; do
		n=$((n + 1))
		dir=$(basename "$(dirname "$f")")
		base=$(basename "$f")
		while read -r inc; do
			to=$(folder_of "$src" "$inc" "$(dirname "$f")")
			[ -n "$to" ] && [ "$to" != "$dir" ] || continue
			case $dir:$to:$inc in
			drivers:daemon:log.h|daemon:ctl:ctl.h|live:drivers:*) ;;
			daemon:live:*) [ "$base" = llcd.c ] || bad+="agent/$dir/$base: #include \"$inc\" (the daemon core names no back-end)"$'\n' ;;
			live:daemon:backend.h|live:daemon:query.h|live:daemon:hooks.h|live:daemon:modes.h|live:daemon:log.h|live:daemon:stats.h) ;;
			*) bad+="agent/$dir/$base: #include \"$inc\" (of agent/$to/)"$'\n' ;;
			esac
			[[ $inc != *_int.h ]] || bad+="agent/$dir/$base: #include \"$inc\" (private to agent/$to/)"$'\n'
		done < <(includes "$f")
	done
	[ "$n" -ge 40 ] || fail "found only $n C files in agent/'s folders"
	[ -z "$bad" ] || fail "agent/'s folders include across their rules:"$'\n'"$bad"
	ok "the $n C files of agent/{ctl,daemon,drivers,live} include only what their folder's rule allows"
}

rule_seam() {
	local src=$1 bad= f code inc words
	words='live|libvirt|virt|qmp|qmpback|sim|llcsim|proxmox|kubevirt|ldom'
	for f in "$src"/agent/daemon/backend.h "$src"/agent/daemon/hooks.h "$src"/agent/daemon/query.h; do
		[ -f "$f" ] || fail "no ${f#"$src"/}"
		# the code without its comments (/* ... */ over lines, and //)
		code=$(sed -e 's://.*$::' "$f" | perl -0pe 's:/\*.*?\*/::gs')
		grep -qw 'struct' <<<"$code" || fail "${f#"$src"/} has no code left once comments are gone"
		while read -r w; do
			bad+="${f#"$src"/}: names $w"$'\n'
		done < <(grep -oiwE "[A-Za-z_]*($words)[A-Za-z_]*" <<<"$code" | grep -iwE "($words)|($words)_[A-Za-z_]*|[A-Za-z_]*_($words)" | sort -u || true)
		while read -r inc; do
			[ -e "$src/common/$inc" ] || [ -e "$src/policy/$inc" ] || [ -e "$(dirname "$f")/$inc" ] ||
				bad+="${f#"$src"/}: #include \"$inc\" (not of common/ or policy/)"$'\n'
			[ ! -e "$(dirname "$f")/$inc" ] || [ "$inc" = backend.h ] ||
				bad+="${f#"$src"/}: #include \"$inc\" (of the daemon core)"$'\n'
		done < <(includes "$f")
	done
	[ -z "$bad" ] || fail "the back-end seam names a back-end:"$'\n'"$bad"
	ok "backend.h, hooks.h and query.h name no back-end and include only common/ and policy/ (and backend.h)"
}

rule_docpaths() {
	local src=$1 bad= f p n=0
	for f in "$src"/docs/*.md "$src"/README.md; do
		while read -r p; do
			[ -n "$p" ] || continue
			case $p in *NAME*) continue ;; esac     # a placeholder, not a path
			n=$((n + 1))
			[ -e "$src/$p" ] || bad+="${f#"$src"/}: $p"$'\n'
		done < <(grep -oE '(^|[^A-Za-z0-9_./-])(agent|policy|common|qmp|sim|tools|tests|bench|guest-tools|packaging|scripts|testsupport)/[A-Za-z0-9_./-]*[A-Za-z0-9_]\.(c|h|sh|py|cmake)\b' "$f" |
			sed -E 's:^[^a-z]::' | sort -u || true)
	done
	[ "$n" -gt 0 ] || fail "no path found in docs/ (the pattern is broken)"
	[ -z "$bad" ] || fail "docs cite files that do not exist:"$'\n'"$bad"
	ok "the $n file paths docs/ and README.md cite exist"
}

rule_owners() {
	local src=$1 bad= f n=0
	for f in "$src"/agent/live/*.c; do
		[ "$(basename "$f")" = ext.c ] && continue
		n=$((n + 1))
		while read -r line; do
			bad+="${f#"$src"/}: $line"$'\n'
		done < <(grep -nE -- '->ext_[a-z_]+(\[[^]]*\])?[[:space:]]*([-+*/|&]?=[^=]|\+\+|--)|free\([a-z_]+->ext_' "$f" || true)
	done
	[ "$n" -gt 0 ] || fail "no file in agent/live/"
	[ -z "$bad" ] || fail "struct ldom's ext_* members are written outside ext.c:"$'\n'"$bad"
	ok "struct ldom's ext_* members are written in agent/live/ext.c only ($n other files)"
	# a private header carries the types its folder shares, not every
	# header one of its files needs: at most 8 #includes (libc's counted)
	n=0
	for f in "$src"/agent/*/*_int.h; do
		n=$((n + 1))
		local k
		k=$(grep -c '^#include' "$f" || true)
		[ "$k" -le 8 ] || bad+="${f#"$src"/}: $k #includes (at most 8)"$'\n'
	done
	[ "$n" -gt 0 ] || fail "no private header (*_int.h) in agent/"
	[ -z "$bad" ] || fail "a private header pulls in too much:"$'\n'"$bad"
	ok "$n private headers of agent/ include at most 8 headers each"
}

rule_codemap() {
	command -v python3 >/dev/null || fail "no python3"
	python3 "$(dirname "$0")/check_codemap.py" "$1" || fail "docs/design.md's code map does not follow the tree"
}

rule=${1:-}
shift || true
case $rule in
sim) rule_sim "$@" ;;
bench) rule_bench "$@" ;;
engine) rule_engine "$@" ;;
prefixes) rule_prefixes "$@" ;;
bpf) rule_bpf "$@" ;;
size) rule_size "$@" ;;
agent) rule_agent "$@" ;;
seam) rule_seam "$@" ;;
codemap) rule_codemap "$@" ;;
docpaths) rule_docpaths "$@" ;;
owners) rule_owners "$@" ;;
*) fail "usage: check_layout.sh sim|bench|engine|prefixes|bpf|size|agent|seam|codemap|docpaths|owners ARGS..." ;;
esac
