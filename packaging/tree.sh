# SPDX-License-Identifier: GPL-2.0-or-later
# tree.sh - sourced by build-deb.sh and build-rpm.sh: copy the source tree
# (tracked and untracked files, not what .gitignore ignores, so build
# directories stay out) to "$1", and set llcd_version from CMakeLists.txt.
# Without git (an unpacked tarball), copy everything but build*/.
# llcd_pkg_start PROG KIND OUTDIR: OUTDIR made and made absolute in $out, a
# temporary directory /tmp/llcd-KIND.* in $work, removed at exit unless
# KEEP=1.
llcd_copy_tree() {
	dest=$1
	mkdir -p "$dest"
	if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git -C "$top" ls-files -z -co --exclude-standard |
			(cd "$top" && xargs -0 cp --parents -P -t "$dest" 2>/dev/null) || {
			# files deleted in the work tree but still in the index
			git -C "$top" ls-files -z -co --exclude-standard |
				(cd "$top" && while IFS= read -r -d '' f; do
					[ -e "$f" ] || [ -L "$f" ] || continue
					cp --parents -P "$f" "$dest"
				done)
		}
	else
		(cd "$top" && tar --exclude='./build*' --exclude=./debian -cf - .) | (cd "$dest" && tar -xf -)
	fi
}
llcd_version=$(sed -n 's/^project(llcd VERSION \([0-9.]*\).*/\1/p' "$top/CMakeLists.txt")
[ -n "$llcd_version" ] || { echo "cannot read the version from CMakeLists.txt" >&2; exit 1; }
llcd_pkg_start() {
	[ -n "${3:-}" ] || { echo "usage: $1 OUTDIR" >&2; exit 2; }
	mkdir -p "$3"
	out=$(cd "$3" && pwd)
	work=$(mktemp -d "/tmp/llcd-$2.XXXXXX")
	[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
}
