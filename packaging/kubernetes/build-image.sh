#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# build-image.sh - the llcd node image (docs/kubevirt.md) from the project's
# own Debian package, with Debian's podman; nothing is pulled from a
# registry:
#   1. a Debian 12 base root with llcd's run-time dependencies (the .deb's
#      Depends:), made with mmdebstrap --variant=minbase and cached as a
#      tarball in $LLCD_IMAGE_CACHE (default /var/cache/llcd-test), keyed on
#      that package list, then imported once as localhost/llcd-node-base:KEY;
#   2. podman build of packaging/kubernetes/Containerfile on it: the .deb
#      installed with dpkg, ENTRYPOINT llcd.
# The image is left in podman's local storage as TAG (default
# localhost/llcd:VERSION); `podman save TAG | ctr -n k8s.io images import -`
# or a push to your registry brings it to the nodes.
# Usage: build-image.sh DEB_DIR [TAG]   (DEB_DIR holds llcd_*.deb:
# packaging/build-deb.sh DEB_DIR makes it)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
debs=${1:?usage: build-image.sh DEB_DIR [TAG]}
cache=${LLCD_IMAGE_CACHE:-/var/cache/llcd-test}
runtime=${LLCD_PODMAN_RUNTIME:-/usr/sbin/runc}
die() { echo "build-image.sh: $*" >&2; exit 1; }

for t in podman mmdebstrap dpkg-deb sha256sum flock; do
	command -v "$t" >/dev/null || die "no $t (scripts/deps/packaging.txt: podman, runc, mmdebstrap)"
done
[ -x "$runtime" ] || die "no OCI runtime $runtime (apt-get install runc; crun fails on hybrid cgroups)"
deb=$(ls "$debs"/llcd_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || die "no llcd_*.deb in $debs (packaging/build-deb.sh $debs)"
version=$(dpkg-deb -f "$deb" Version)
tag=${2:-localhost/llcd:${version%%-*}}

# --- 1. the base root: cached, keyed on its package list -----------------------
deps=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed 's/(.*)//; s/|.*//; s/[[:space:]]//g' | grep -v '^$' | sort -u)
pkgs=$(printf '%s\n' $deps | tr '\n' ',' | sed 's/,$//')
key=$(echo "bookworm minbase $pkgs" | sha256sum | cut -c1-16)
base_tar=$cache/image-base-$key.tar
base_img=localhost/llcd-node-base:$key
mkdir -p "$cache"
(
	flock 9
	if [ ! -s "$base_tar" ]; then
		echo "build-image.sh: mmdebstrap (once per package list; cached as $base_tar): $pkgs"
		mmdebstrap --quiet --variant=minbase --format=tar --include="$pkgs" bookworm "$base_tar.tmp" \
			>"$cache/image-mmdebstrap.log" 2>&1 || { tail -20 "$cache/image-mmdebstrap.log" >&2; exit 1; }
		mv "$base_tar.tmp" "$base_tar"
		for old in "$cache"/image-base-*.tar; do [ "$old" = "$base_tar" ] || rm -f "$old"; done
	fi
	if ! podman image exists "$base_img"; then
		podman import "$base_tar" "$base_img" >/dev/null || exit 1
		echo "build-image.sh: imported $base_tar as $base_img"
	fi
) 9>"$cache/image.lock" || die "the base root failed (above)"

# --- 2. the image: the .deb on the base ----------------------------------------
ctx=$(mktemp -d /tmp/llcd-image.XXXXXX)
trap 'rm -rf "$ctx"' EXIT
cp "$deb" "$ctx/"
# rlimits: in some sandboxes (this project's machines) runc may not set
# podman's defaults, nor even the current limits again; modest ones pass
podman build --runtime "$runtime" --quiet \
	--ulimit "${LLCD_PODMAN_NOFILE:-nofile=1024:1024}" --ulimit "${LLCD_PODMAN_NPROC:-nproc=4096:4096}" \
	--build-arg "BASE=$base_img" -f "$here/Containerfile" -t "$tag" "$ctx" >/dev/null ||
	die "podman build failed"
echo "$tag"
