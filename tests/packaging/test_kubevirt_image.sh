#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# test_kubevirt_image.sh - llcd for KubeVirt nodes as shipped: the node
# image and the DaemonSet (packaging/kubernetes/, docs/kubevirt.md).
#
#   1. the manifest, parsed (python3-yaml, tests/packaging/kube_manifest.py
#      check): hostPID, privileged, the cgroup tree read-only, the state and
#      socket directories, llcd.conf from a ConfigMap, the metrics port with
#      Prometheus's pod annotations, resource requests; its llcd.conf passes
#      `llcd -n` (the image's llcd);
#   2. the image: packaging/kubernetes/build-image.sh on the .deb that
#      packaging_deb_rpm built (the Debian base root made with mmdebstrap and
#      cached in /var/cache/llcd-test; podman with runc); llcd --help runs in
#      it;
#   3. tests/e2e/test_kubevirt_pods.sh with llcd from the image under
#      podman, given exactly the manifest's privileges and mounts
#      (kube_manifest.py podman-args): two virt-launcher-like pods found,
#      placed on different LLCs, kept inside their pods' CPU sets, a daemon
#      killed and restarted;
#   4. the same container without hostPID (what the manifest's hostPID is
#      for): llcd finds no daemon.
# Usage: test_kubevirt_image.sh SRC_DIR DEB_DIR BUILD_DIR
set -euo pipefail
src=$(cd "$1" && pwd)
debs=$2
build=$3
t0=$(date +%s)
scratch=$(mktemp -d /tmp/llcd-kvimage.XXXXXX)
cname=
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok   $*  [$(($(date +%s) - t0)) s]"; }
cleanup() {
	set +e
	[ -n "$cname" ] && podman rm -f "$cname" >/dev/null 2>&1
	rm -rf "$scratch"
}
trap cleanup EXIT
[ "$(id -u)" = 0 ] || fail "this test needs root (podman, cgroups, namespaces)"
sh "$src/scripts/install-deps" >/dev/null || fail "scripts/install-deps failed"
for t in podman mmdebstrap python3; do command -v $t >/dev/null || fail "no $t (scripts/deps/packaging.txt)"; done
manifest=$src/packaging/kubernetes/llcd-daemonset.yaml

# --- 1. the manifest ------------------------------------------------------------------
python3 "$src/tests/packaging/kube_manifest.py" check "$manifest" >"$scratch/llcd.conf" ||
	fail "the DaemonSet manifest (above)"
ok "the DaemonSet: hostPID, privileged, mounts, metrics port and annotations, requests, ConfigMap"

# --- 2. the image ---------------------------------------------------------------------
mkdir -p "$debs"
if ! ls "$debs"/llcd_*.deb >/dev/null 2>&1; then
	echo "---- building the .deb in $debs"
	"$src/packaging/build-deb.sh" "$debs" >"$debs/build.log" 2>&1 || { tail -20 "$debs/build.log" >&2; fail "build-deb.sh"; }
fi
tag=localhost/llcd-test:$$
"$src/packaging/kubernetes/build-image.sh" "$debs" "$tag" >"$scratch/build.log" 2>&1 ||
	{ cat "$scratch/build.log" >&2; fail "build-image.sh"; }
trap 'cleanup; podman rmi -f "$tag" >/dev/null 2>&1' EXIT
# (runc here cannot set podman's default rlimits, nor the current ones
# again: research/real-stack.md, containers)
lim="--ulimit nofile=1024:1024 --ulimit nproc=4096:4096"
# shellcheck disable=SC2206
run=(podman --runtime /usr/sbin/runc run --rm $lim)
"${run[@]}" --entrypoint /usr/sbin/llcd "$tag" --help >/dev/null || fail "llcd --help in the image"
"${run[@]}" -v "$scratch:/check:ro" "$tag" -n -f /check/llcd.conf || fail "the ConfigMap's llcd.conf: llcd -n (above)"
ok "image $tag from $(ls "$debs"/llcd_*.deb | head -1 | xargs basename); the ConfigMap's llcd.conf checks"

# --- 3. the pods test, llcd from the image with the manifest's privileges -------------
args=$(python3 "$src/tests/packaging/kube_manifest.py" podman-args "$manifest" "$scratch") || fail "podman-args"
echo "     podman run $(echo $args)"
LLCD_KV_TEST=kubevirt_image LLCD_KV_IMAGE=$tag LLCD_BUILD_DIR=$build \
LLCD_KV_PODMAN_ARGS="$lim $(echo $args)" \
	bash "$src/tests/e2e/test_kubevirt_pods.sh" || fail "the KubeVirt pods test with llcd from the image (above)"
ok "two pods' daemons, found, placed, bounded and reconnected by llcd from the image"

# --- 4. without hostPID: nothing to find ---------------------------------------------
cname=llcd-nohostpid-$$
cat >"$scratch/nopid.conf" <<EOF
uri none
libvirt-socket-glob /proc/*/root/run/libvirt/libvirt-sock
state-dir /tmp/state
socket /tmp/llcd.sock
socket-group none
EOF
nopid=$(echo "$args" | grep -v '^--pid=host$' | tr '\n' ' ')
# a daemon in a mount namespace of its own, findable from the host
mkdir -p "$scratch/lib"
setsid unshare -m --propagation private sh -c 'mount -t tmpfs tmpfs /run/libvirt &&
	mount --bind "$1" /var/lib/libvirt && exec libvirtd --pid-file "$1/pid"' sh "$scratch/lib" \
	>"$scratch/libvirtd.log" 2>&1 &
holder=$!
for _ in $(seq 100); do
	p=$(cat "$scratch/lib/pid" 2>/dev/null) && [ -S "/proc/$p/root/run/libvirt/libvirt-sock" ] && break
	sleep 0.1
done
[ -S "/proc/${p:-0}/root/run/libvirt/libvirt-sock" ] || fail "the namespaced libvirtd made no socket"
# shellcheck disable=SC2086
"${run[@]}" -d --name "$cname" $nopid -v "$scratch:/check:ro" "$tag" -d -f /check/nopid.conf >/dev/null ||
	fail "podman run without hostPID"
sleep 8
podman logs "$cname" >"$scratch/nopid.log" 2>&1 || true
kill "$p" 2>/dev/null; wait "$holder" 2>/dev/null || true
grep -q 'libvirt daemons: every socket at' "$scratch/nopid.log" || { cat "$scratch/nopid.log" >&2; fail "llcd without hostPID did not start"; }
grep -q 'libvirt daemon found at' "$scratch/nopid.log" && fail "llcd without hostPID found a daemon"
ok "without hostPID llcd sees only its own processes: the pod's daemon at /proc/$p/root/... not found"
echo "PASS: the KubeVirt node image and DaemonSet in $(($(date +%s) - t0)) s"
