#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# build-deb.sh - build the Debian packages from this tree.
#   packaging/build-deb.sh OUTDIR
# Copies the tree to a temporary directory, puts packaging/debian there as
# ./debian, runs dpkg-buildpackage -us -uc -b (tests skipped: nocheck) and
# moves the .deb, .buildinfo and .changes files to OUTDIR (llcd and
# llc-guest).
# Environment: JOBS (default 2), KEEP=1 keeps the temporary tree.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/packaging/tree.sh"
llcd_pkg_start build-deb.sh deb "${1:-}"
src=$work/llcd-$llcd_version
llcd_copy_tree "$src"
rm -rf "$src/debian"
cp -r "$top/packaging/debian" "$src/debian"

deb_version=$(cd "$src" && dpkg-parsechangelog -S Version)
if [ "${deb_version%%-*}" != "$llcd_version" ]; then
	echo "build-deb: debian/changelog says $deb_version, CMakeLists.txt $llcd_version" >&2
	exit 1
fi

cd "$src"
export DEB_BUILD_OPTIONS="nocheck parallel=${JOBS:-2}"
dpkg-buildpackage -us -uc -b > "$work/build.log" 2>&1 || {
	tail -60 "$work/build.log" >&2
	echo "build-deb: dpkg-buildpackage failed (log above)" >&2
	exit 1
}
if grep -E '(^|[^-])warning:' "$work/build.log" | grep -v '^dpkg-' >&2; then
	echo "build-deb: compiler warnings (above)" >&2
	exit 1
fi
mv "$work"/*.deb "$work"/*.buildinfo "$work"/*.changes "$out"/
cp "$work/build.log" "$out/deb-build.log"
ls "$out"/*.deb
