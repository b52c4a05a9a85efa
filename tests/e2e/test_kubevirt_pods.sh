#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# e2e_kubevirt_pods: one llcd for the libvirt daemons of a KubeVirt-like
# node (tests/e2e/pods_lib.sh: two "pods", each a libvirtd in a mount
# namespace of its own inside a cgroup v1 cpuset of kubelet's cgroupfs
# layout, each running a TCG guest named NAMESPACE_NAME with KubeVirt's
# metadata), on a synthetic 2-LLC host (this machine's CPUs 0 and 1).
#
# llcd runs with `uri none` and `libvirt-socket-glob
# /proc/*/root/run/libvirt/libvirt-sock`: on this machine's llcd binary, or,
# with LLCD_KV_IMAGE=IMAGE (tests/packaging/test_kubevirt_image.sh), from
# the container image under podman with the DaemonSet's privileges and
# mounts (packaging/kubernetes/llcd-daemonset.yaml; LLCD_KV_PODMAN_ARGS).
#
# Checks:
#  1. llcd finds both daemons through the pods' roots; llcctl list shows
#     both domains, managed, each with its own connection; topology says 2
#     daemons, 2 connected; pod b's domain, defined through
#     llcd-kubevirt-hook (its VMI's label and annotation in the metadata,
#     kept by libvirt), gets the annotation=/label= rule, pod a's the
#     namespace= rule;
#  2. both pods in the shared pool (cpuset 0-1): llcd places the two
#     domains (mode static) on different LLCs (its own choice), bound by
#     the host (dominfo cpu_bound by host);
#  3. kubelet (the test) gives pod a the CPU llcd had put pod b on, and pod
#     b the other (cpuset.cpus of each pod's container cgroup): llcd reads
#     the sets again, says dominfo cpu_bound by the cgroup, re-places both
#     inside them, and no pin llcd makes after the change is outside the
#     pod's set; nothing failed; llcd never wrote a cpuset (the pods'
#     cpuset.cpus are still the test's);
#  4. pod b's daemon is killed (SIGKILL): llcd says the connection is lost
#     and keeps both domains and their pins (fail-static); the daemon is
#     started again in its pod (same mount namespace, entered through its
#     QEMU): llcd reconnects and re-lists, pod b's domain is kept with no
#     pin (the same run, adopted), pod a's untouched;
#  5. one state file holds both domains.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/live_lib.sh"
. "$(dirname "$0")/pods_lib.sh"

e2e_begin "${LLCD_KV_TEST:-kubevirt_pods}"
e2e_install
e2e_kernel
e2e_initramfs
[ "$(nproc)" -ge 2 ] || e2e_fail "this test needs 2 host CPUs (has $(nproc))"
trap 'kv_rc=$?; set +e; pod_cleanup; (exit $kv_rc); e2e_cleanup' EXIT
live_host
mkdir -p "$E2E_SOCK_DIR"

A=llcd-e2e-hpc_vmi-a
B=llcd-e2e-web_vmi-b
e2e_step "two pods, each a libvirtd in its own mount namespace and cpuset cgroup"
pod_start a 0-1
pod_start b 0-1
pod_define a "$A" 1
# pod b's VMI carries a label and llcd's annotation; the hook copies them
cat >"$E2E_RUN_DIR/vmi-b.json" <<'EOF'
{"metadata": {"name": "vmi-b", "namespace": "llcd-e2e-web", "labels": {"app": "web"},
 "annotations": {"llcd.io/llc-policy": "static", "other.io/x": "y"}}}
EOF
pod_define b "$B" 1 "" "$E2E_RUN_DIR/vmi-b.json"
pod_virsh b dumpxml "$B" | grep -q '<llcd:label key="app">web</llcd:label>' ||
	e2e_fail "pod b: libvirt did not keep the hook's <pod> metadata: $(pod_virsh b dumpxml "$B" | grep -A3 '<metadata')"
[ "$(pod_qemu_pid a)" != "$(pod_qemu_pid b)" ] || e2e_fail "one QEMU for both pods"
# the host cannot see the pods' sockets at its own /run/libvirt
for n in a b; do
	[ -S "$(pod_sock "$n")" ] || e2e_fail "pod $n: no socket through the daemon's root"
done

{
	# one vCPU per LLC (1 PU each): two domains need both LLCs
	live_conf | sed 's/^overcommit 2$/overcommit 1/; s/^overcommit-isolated 2$/overcommit-isolated 1/'
	cat <<EOF
uri none
libvirt-socket-glob /proc/*/root/run/libvirt/libvirt-sock
# KubeVirt's domains: by the VMI's annotation (llcd-kubevirt-hook's <pod>
# metadata), by namespace (NAMESPACE_NAME); each placed one PU per vCPU
policy-rule annotation=llcd.io/llc-policy=static label=app=web mode=static
policy-rule namespace=llcd-e2e-hpc mode=static
EOF
} >"$E2E_RUN_DIR/llcd.conf"

ctl() { "$LIVE_LLCCTL" -c "$LIVE_SOCK" "$@"; }
if [ -n "${LLCD_KV_IMAGE:-}" ]; then
	# the container image under podman, as the DaemonSet runs it
	command -v podman >/dev/null || e2e_fail "no podman (scripts/deps/packaging.txt)"
	# shellcheck disable=SC2086
	e2e_bg llcd podman --runtime /usr/sbin/runc run --rm --name "llcd-e2e-$$" \
		${LLCD_KV_PODMAN_ARGS:?set by test_kubevirt_image.sh} \
		-v "$E2E_RUN_DIR:$E2E_RUN_DIR" -v "$E2E_SOCK_DIR:$E2E_SOCK_DIR" \
		"$LLCD_KV_IMAGE" -d -f "$E2E_RUN_DIR/llcd.conf" --topology "$LIVE_HOSTXML"
	LIVE_PID=$E2E_BG_PID
	LIVE_LOG=$E2E_RUN_DIR/llcd.log
else
	live_start llcd
fi
live_wait_log "libvirt daemon found at /proc/[0-9]+/root/run/libvirt/libvirt-sock" 60 >/dev/null

# the domains' summary: NAME CONNECTION STATE
list_json() { ctl --json list | python3 -c '
import json, sys
for d in json.load(sys.stdin)["domains"]:
    print(d["name"], d.get("connection", "-"), d["state"])'; }

e2e_step "1. llcd finds both daemons; both domains managed, each with its own connection"
ok=0
for _ in $(seq 60); do
	live_alive
	out=$(list_json 2>/dev/null || true)
	if echo "$out" | grep -q "^$A .* managed$" && echo "$out" | grep -q "^$B .* managed$"; then ok=1; break; fi
	sleep 1
done
[ "$ok" = 1 ] || { echo "$out" >&2; e2e_fail "llcctl list does not show both domains managed"; }
ca=$(echo "$out" | awk -v d="$A" '$1 == d { print $2 }')
cb=$(echo "$out" | awk -v d="$B" '$1 == d { print $2 }')
case $ca in "qemu:///system?socket=/proc/"*"/root/run/libvirt/libvirt-sock") ;; *) e2e_fail "$A: connection '$ca'" ;; esac
[ "$ca" != "$cb" ] || e2e_fail "both domains from one connection $ca"
ctl list | tee "$E2E_RUN_DIR/list.txt" | grep -q CONNECTION || e2e_fail "llcctl list has no CONNECTION column"
topo=$(ctl topology)
echo "$topo" | grep -Eq '^libvirt: +/proc/\*/root/run/libvirt/libvirt-sock: [0-9]+ daemons?, [0-9]+ connected' ||
	{ echo "$topo" >&2; e2e_fail "llcctl topology has no libvirt daemons line"; }
nd=$(ctl --json topology | python3 -c 'import json,sys; l=json.load(sys.stdin)["libvirt"]; print(l["daemons"], l["daemons_connected"])')
# (a host libvirtd left running by another test is a daemon too)
[ "${nd% *}" -ge 2 ] && [ "${nd#* }" -ge 2 ] || e2e_fail "topology: daemons/connected $nd, want >= 2"
rule_of() { ctl --json dominfo "$1" | python3 -c 'import json,sys; print((json.load(sys.stdin).get("policy_rule") or {}).get("number", 0))'; }
[ "$(rule_of "$B")" = 1 ] || e2e_fail "$B: policy-rule $(rule_of "$B"), want 1 (annotation= label=)"
[ "$(rule_of "$A")" = 2 ] || e2e_fail "$A: policy-rule $(rule_of "$A"), want 2 (namespace=)"
e2e_ok "$A from $ca (namespace= rule); $B from $cb (annotation= label= rule)"

# the CPU a domain's vCPU 0 is on now (the kernel's affinity), when single
cpu_of() { pod_vcpu_affinity "$1" | awk '$1 == 0 { print $2 }'; }
allot_of() { ctl --json dominfo "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("allotment", "-"))'; }
bound_of() { ctl --json dominfo "$1" | python3 -c '
import json, sys
b = json.load(sys.stdin).get("cpu_bound") or {}
print(b.get("by", "-"), b.get("cpus", "-"))'; }

e2e_step "2. shared pool (both pods 0-1): llcd places the two domains on different LLCs"
for _ in $(seq 60); do
	pa=$(cpu_of a) pb=$(cpu_of b)
	case "$pa,$pb" in 0,1 | 1,0) break ;; esac
	sleep 1
done
case "$pa,$pb" in 0,1 | 1,0) ;; *) e2e_fail "$A on '$pa', $B on '$pb': not one LLC each" ;; esac
[ "$(bound_of "$A")" = "host 0-1" ] || e2e_fail "$A: cpu_bound '$(bound_of "$A")', want 'host 0-1'"
e2e_ok "$A on CPU $pa (LLC $pa), $B on CPU $pb (LLC $pb)"

e2e_step "3. kubelet moves the pods' CPU sets: llcd re-places both inside them, never outside"
na=$pb nb=$pa
from=$(wc -l <"$LIVE_LOG")
pod_set_cpus a "$na"
pod_set_cpus b "$nb"
t=$SECONDS
for _ in $(seq 60); do
	[ "$(bound_of "$A")" = "cgroup $na" ] && [ "$(bound_of "$B")" = "cgroup $nb" ] &&
		[ "$(cpu_of a)" = "$na" ] && [ "$(cpu_of b)" = "$nb" ] &&
		[ "$(allot_of "$A")" = "$na" ] && [ "$(allot_of "$B")" = "$nb" ] && break
	sleep 1
done
e2e_log "re-placed after $((SECONDS - t)) s"
[ "$(bound_of "$A")" = "cgroup $na" ] || e2e_fail "$A: cpu_bound '$(bound_of "$A")', want 'cgroup $na'"
[ "$(bound_of "$B")" = "cgroup $nb" ] || e2e_fail "$B: cpu_bound '$(bound_of "$B")', want 'cgroup $nb'"
# the engine placed each inside its set (the kernel had moved the threads
# there already when the cpuset shrank: cgroup v1 rewrites their affinity)
[ "$(allot_of "$A")" = "$na" ] || e2e_fail "$A: llcd's allotment '$(allot_of "$A")', want $na"
[ "$(allot_of "$B")" = "$nb" ] || e2e_fail "$B: llcd's allotment '$(allot_of "$B")', want $nb"
[ "$(cpu_of a)" = "$na" ] && [ "$(cpu_of b)" = "$nb" ] || e2e_fail "vCPU affinities $(cpu_of a) $(cpu_of b), want $na $nb"
ctl dominfo "$A" | grep -E '^cpu_bound_cgroup +v1 /kubepods/pod-llcd-e2e-a/ctr-a ' ||
	e2e_fail "$A: dominfo names no cgroup: $(ctl dominfo "$A" | grep cpu_bound)"
# every pin after the change inside the pod's set, and none failed
tail -n +"$((from + 1))" "$LIVE_LOG" | awk -v a="$A" -v b="$B" -v sa="$na" -v sb="$nb" '
	/: pinned to / || /: released to / || /emulator threads pinned to / {
		s = $0; sub(/.* (pinned|released) to /, "", s); sub(/:.*/, "", s)
		if (index($0, "domain " a " ") == 1 || index($0, "domain " a ":") == 1) { if (s != sa) { print; bad = 1 } }
		if (index($0, "domain " b " ") == 1 || index($0, "domain " b ":") == 1) { if (s != sb) { print; bad = 1 } }
	}
	END { exit bad }' || e2e_fail "a pin outside the pod's CPU set (above)"
! grep -E "domain ($A|$B).*(failed|no longer managed)" "$LIVE_LOG" || e2e_fail "a pin failed (above)"
# both bounds taken in one period, whichever thread the kernel moved
# first (a period logs one "wakeups over" line a domain): the engine never
# plans one pod's new set beside the other's old placement (a swap would
# refuse the first: its new CPU still counted as the other's)
tail -n +"$((from + 1))" "$LIVE_LOG" | awk '
	/: CPU bound changed: / { n++; if (n == 2) { exit bad } ; next }
	n == 1 && /: wakeups over / { d = $2; if (seen[d]++) bad = 1 }
	END { exit bad || n < 2 }' ||
	e2e_fail "the two pods' bound changes were taken in different periods (or not both): $(tail -n +"$((from + 1))" "$LIVE_LOG" | grep -E ': CPU bound changed: |: wakeups over ' | head -n 8 | tr '\n' '|')"
[ "$(cat "$(pod_cgroup a)/cpuset.cpus")" = "$na" ] && [ "$(cat "$(pod_cgroup b)/cpuset.cpus")" = "$nb" ] ||
	e2e_fail "a pod's cpuset.cpus is not what kubelet (the test) wrote"
e2e_ok "$A inside $na, $B inside $nb; $(tail -n +"$((from + 1))" "$LIVE_LOG" | grep -c ': pinned to ') pins, none outside"

e2e_step "4. pod b's daemon killed and started again: fail-static, reconnected, nothing moved"
pod_kill_daemon b
live_wait_log "libvirt qemu:///system\?socket=/proc/[0-9]+/root/run/libvirt/libvirt-sock: connection lost" 30 >/dev/null
sleep 2
live_alive
out=$(list_json)
echo "$out" | grep -q "^$B " || e2e_fail "$B dropped while its daemon was down"
[ "$(cpu_of b)" = "$nb" ] && [ "$(cpu_of a)" = "$na" ] || e2e_fail "pins changed while the daemon was down"
from=$(wc -l <"$LIVE_LOG")
pod_start_daemon_again b
# reconnected: the same path, or through another process of the pod when
# the one it was reached through was the daemon itself
for _ in $(seq 150); do
	tail -n +"$((from + 1))" "$LIVE_LOG" | grep -Eq "^libvirt qemu:///system\?socket=/proc/[0-9]+/root/run/libvirt/libvirt-sock: (connected|reconnected)$" && break
	live_alive
	sleep 0.2
done
tail -n +"$((from + 1))" "$LIVE_LOG" | grep -E "^libvirt qemu:///system\?socket=/proc/[0-9]+/root/run/libvirt/libvirt-sock: (connected|reconnected)$" ||
	e2e_fail "llcd did not reconnect to pod b's daemon within 30 s"
for _ in $(seq 20); do
	out=$(list_json)
	echo "$out" | grep -q "^$B .* managed$" && break
	sleep 1
done
echo "$out" | grep -q "^$B .* managed$" || { echo "$out" >&2; e2e_fail "$B not managed after the reconnect"; }
sleep 3
n=$(tail -n +"$((from + 1))" "$LIVE_LOG" | grep -cE "^domain ($B|$A) vcpu .*: pinned to " || true)
[ "$n" = 0 ] || e2e_fail "$n pins after the reconnect (the domains were placed again)"
tail -n +"$((from + 1))" "$LIVE_LOG" | grep -q "domain $B: no longer managed" &&
	e2e_fail "$B was dropped and found again at the reconnect"
[ "$(cpu_of b)" = "$nb" ] && [ "$(cpu_of a)" = "$na" ] || e2e_fail "pins changed at the reconnect"
e2e_ok "$B kept on $nb, $A on $na; no pin after the reconnect"

e2e_step "5. one state file for both daemons' domains"
sf=$LIVE_STATE/live.state
for _ in $(seq 10); do grep -q "$A" "$sf" 2>/dev/null && grep -q "$B" "$sf" && break; sleep 1; done
grep -q "$A" "$sf" && grep -q "$B" "$sf" || e2e_fail "$sf lacks a domain"
live_alive
e2e_end
