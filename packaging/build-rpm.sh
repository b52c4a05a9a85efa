#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# build-rpm.sh - build the rpm packages from this tree with rpmbuild.
#   packaging/build-rpm.sh OUTDIR
# Makes llcd-VERSION.tar.gz from a copy of the working tree and runs
# rpmbuild -bb on packaging/rpm/llcd.spec in a temporary _topdir; the
# binary rpms land in OUTDIR. --nodeps: on Debian the BuildRequires cannot
# be checked against rpm's (empty) database; the build dependencies are the
# Debian ones (scripts/deps/base.txt). It builds llcd and llc-guest.
# __brp_compress through bash: Debian's rpm ships brp-compress as #!/bin/sh
# but it uses bash's read -d, so under dash the man pages stay uncompressed.
# Environment: JOBS (default 2), KEEP=1 keeps the temporary tree.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/packaging/tree.sh"
llcd_pkg_start build-rpm.sh rpm "${1:-}"
spec_version=$(sed -n 's/^Version: *//p' "$top/packaging/rpm/llcd.spec")
if [ "$spec_version" != "$llcd_version" ]; then
	echo "build-rpm: llcd.spec says $spec_version, CMakeLists.txt $llcd_version" >&2
	exit 1
fi
mkdir -p "$work"/{SOURCES,SPECS,BUILD,RPMS,SRPMS,tree}
llcd_copy_tree "$work/tree/llcd-$llcd_version"
tar -C "$work/tree" -czf "$work/SOURCES/llcd-$llcd_version.tar.gz" "llcd-$llcd_version"

rpmbuild -bb --nodeps \
	--define "_topdir $work" \
	--define "__brp_compress bash %{_rpmconfigdir}/brp-compress %{_prefix}" \
	--define "_smp_mflags -j${JOBS:-2}" \
	"$top/packaging/rpm/llcd.spec" > "$work/build.log" 2>&1 || {
	tail -60 "$work/build.log" >&2
	echo "build-rpm: rpmbuild failed (log above)" >&2
	exit 1
}
if grep -E '(^|[^-])warning:' "$work/build.log" | grep -vi '^warning: .*\(dependency\|bogus date\)' >&2; then
	echo "build-rpm: warnings (above)" >&2
	exit 1
fi
find "$work/RPMS" -name '*.rpm' -exec mv -t "$out" {} +
cp "$work/build.log" "$out/rpm-build.log"
ls "$out"/*.rpm
