# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# tests/e2e/pods_lib.sh - virt-launcher-like "pods" on this machine, for the
# KubeVirt node tests (test_kubevirt_*.sh), on top of lib.sh. Sourced after
# lib.sh. No Kubernetes: each pod is what llcd meets on a KubeVirt node:
#   - a libvirtd in a mount namespace of its own (unshare -m, private
#     /run/libvirt tmpfs, its own /etc/libvirt and /var/lib/libvirt), as
#     virt-launcher's daemon is in its pod; reached from the host only
#     through a process's root: /proc/PID/root/run/libvirt/libvirt-sock;
#   - started inside a cgroup v1 cpuset of kubelet's cgroupfs layout,
#     /sys/fs/cgroup/cpuset/kubepods/pod<UID>/<CONTAINER>, whose CPU set the
#     test (as kubelet) owns and changes; the daemon manages no cgroup
#     (qemu.conf cgroup_controllers = [], as a session-mode virtqemud), so
#     its QEMU stays in the pod's cgroup;
#   - one TCG guest named NAMESPACE_NAME with KubeVirt's <kubevirt> metadata.
# The daemons run as root with no security driver, log QEMU's output to
# files (no virtlogd) and are killed with their QEMUs at the test's exit;
# the cgroups are removed then.

POD_CG_ROOT=/sys/fs/cgroup/cpuset
POD_CG_TOP=$POD_CG_ROOT/kubepods
POD_NAMES=()

# pod_cgroup NAME: the pod's container cgroup directory.
pod_cgroup() { echo "$POD_CG_TOP/pod-llcd-e2e-$1/ctr-$1"; }
pod_dir() { echo "$E2E_RUN_DIR/pods/$1"; }
# pod_sock NAME: the daemon's socket as the host sees it (through the
# daemon's root).
pod_sock() { echo "/proc/$(cat "$(pod_dir "$1")/libvirtd.pid")/root/run/libvirt/libvirt-sock"; }
pod_uri() { echo "qemu:///system?socket=$(pod_sock "$1")"; }
pod_virsh() { local p=$1; shift; virsh -q -c "$(pod_uri "$p")" "$@"; }

# pod_set_cpus NAME CPUS: what kubelet does to the pod's cgroup.
pod_set_cpus() {
	local cg
	cg=$(pod_cgroup "$1")
	echo "$2" >"$cg/cpuset.cpus" || e2e_fail "cannot set $cg/cpuset.cpus to $2"
}

pod__cg_make() {
	local d=$1 cpus=$2
	mkdir -p "$d"
	# v1: a cpuset needs mems (and cpus) before it takes tasks
	[ -s "$d/cpuset.mems" ] || cat "$POD_CG_ROOT/cpuset.mems" >"$d/cpuset.mems"
	echo "$cpus" >"$d/cpuset.cpus"
}

# pod_cleanup: kill what the pods run (QEMU and daemon), remove their
# cgroups. Called at exit (e2e_track_pid kills the tracked pids first).
pod_cleanup() {
	local n cg p
	for n in "${POD_NAMES[@]}"; do
		cg=$(pod_cgroup "$n")
		for p in $(cat "$cg/tasks" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	done
	sleep 0.5
	for n in "${POD_NAMES[@]}"; do
		cg=$(pod_cgroup "$n")
		rmdir "$cg" 2>/dev/null
		rmdir "$(dirname "$cg")" 2>/dev/null
	done
	rmdir "$POD_CG_TOP" 2>/dev/null
	true
}

# pod__daemon NAME: start (or restart) the pod's libvirtd in its namespace
# and cgroup; NSPID: the pid of a process whose mount namespace to enter
# (a restart), "" for a new namespace.
pod__daemon() {
	local n=$1 nspid=${2:-} d cg p='' sock
	d=$(pod_dir "$n")
	cg=$(pod_cgroup "$n")
	rm -f "$d/libvirtd.pid"
	if [ -z "$nspid" ]; then
		e2e_bg "pod-$n-libvirtd" unshare -m --propagation private sh -c '
			set -e
			mount -t tmpfs tmpfs /run/libvirt
			mount --bind "$1/etc" /etc/libvirt
			mount --bind "$1/lib" /var/lib/libvirt
			echo $$ >"$2/tasks"
			export LIBVIRT_LOG_OUTPUTS="3:file:$1/libvirtd.log"
			exec libvirtd --pid-file "$1/libvirtd.pid" --config "$1/etc/libvirtd.conf"' sh "$d" "$cg"
	else
		e2e_bg "pod-$n-libvirtd-restart" nsenter -t "$nspid" -m sh -c '
			set -e
			echo $$ >"$2/tasks"
			export LIBVIRT_LOG_OUTPUTS="3:file:$1/libvirtd.log"
			exec libvirtd --pid-file "$1/libvirtd.pid" --config "$1/etc/libvirtd.conf"' sh "$d" "$cg"
	fi
	for _ in $(seq 150); do
		if p=$(cat "$d/libvirtd.pid" 2>/dev/null) && [ -n "$p" ] && [ -S "/proc/$p/root/run/libvirt/libvirt-sock" ]; then
			break
		fi
		p=''
		sleep 0.1
	done
	[ -n "$p" ] || { tail -5 "$d/libvirtd.log" >&2; e2e_fail "pod $n: libvirtd made no socket"; }
	e2e_track_pid "$p"
	sock=/proc/$p/root/run/libvirt/libvirt-sock
	timeout 60 virsh -q -c "qemu:///system?socket=$sock" version >/dev/null 2>&1 ||
		e2e_fail "pod $n: libvirtd (pid $p) does not answer on $sock"
	grep -qw "$p" "$cg/tasks" || e2e_fail "pod $n: libvirtd $p is not in $cg"
	e2e_log "pod $n: libvirtd pid $p in its own mount namespace, cgroup $cg ($(cat "$cg/cpuset.cpus"))"
}

# pod_start NAME CPUS: a pod: its cgroup with CPUS, its daemon.
pod_start() {
	local n=$1 cpus=$2 d
	[ -d "$POD_CG_ROOT" ] && [ -e "$POD_CG_ROOT/cpuset.cpus" ] ||
		e2e_fail "no cgroup v1 cpuset hierarchy at $POD_CG_ROOT (this test uses kubelet's cgroupfs layout on v1)"
	POD_NAMES+=("$n")
	pod__cg_make "$POD_CG_TOP" "$(cat "$POD_CG_ROOT/cpuset.cpus")"
	pod__cg_make "$(dirname "$(pod_cgroup "$n")")" "$(cat "$POD_CG_ROOT/cpuset.cpus")"
	pod__cg_make "$(pod_cgroup "$n")" "$cpus"
	d=$(pod_dir "$n")
	mkdir -p "$d/etc" "$d/lib/qemu" "$d/log"
	cat >"$d/etc/qemu.conf" <<EOF
# a virt-launcher-like daemon: no cgroups of its own (QEMU stays in the
# pod's), no security driver, QEMU's output to files
cgroup_controllers = [ ]
namespaces = [ ]
security_driver = "none"
user = "root"
group = "root"
dynamic_ownership = 0
remember_owner = 0
stdio_handler = "file"
EOF
	cat >"$d/etc/libvirtd.conf" <<EOF
unix_sock_group = "root"
unix_sock_ro_perms = "0777"
unix_sock_rw_perms = "0770"
auth_unix_ro = "none"
auth_unix_rw = "none"
EOF
	pod__daemon "$n"
}

# pod_kill_daemon NAME: kill -9 the pod's daemon (its QEMU runs on: its pid
# in POD_QEMU); pod_start_daemon_again NAME starts it again in the same
# mount namespace (entered through that QEMU) and cgroup.
POD_QEMU=
pod_kill_daemon() {
	local n=$1 d p
	d=$(pod_dir "$n")
	p=$(cat "$d/libvirtd.pid")
	POD_QEMU=$(pod_qemu_pid "$n")
	kill -9 "$p"
	e2e__wait_gone "$p" 10 || e2e_fail "pod $n: libvirtd $p did not die"
	e2e_log "pod $n: libvirtd $p killed (QEMU $POD_QEMU runs on)"
}
pod_start_daemon_again() { pod__daemon "$1" "$POD_QEMU"; }

# pod_define NAME DOMAIN VCPUS [METADATA] [VMI_JSON]: a TCG guest in the
# pod's daemon, started; KubeVirt's <kubevirt> metadata (uid) plus
# METADATA; with VMI_JSON (a file) the XML goes through
# packaging/kubernetes/llcd-kubevirt-hook first, as KubeVirt's
# onDefineDomain hook sidecar would run it.
pod_define() {
	local n=$1 dom=$2 vcpus=$3 meta=${4:-} vmi=${5:-} uid xml out
	uid=$(cat /proc/sys/kernel/random/uuid)
	xml=$E2E_RUN_DIR/$dom.xml
	: >"$(e2e_console "$dom")"
	cat >"$xml" <<EOF
<domain type='qemu'>
  <name>$dom</name>
  <metadata>
    <kubevirt xmlns="http://kubevirt.io"><uid>$uid</uid></kubevirt>
    $meta
  </metadata>
  <memory unit='MiB'>160</memory>
  <vcpu placement='static'>$vcpus</vcpu>
  <os>
    <type arch='x86_64' machine='q35'>hvm</type>
    <kernel>$E2E_KERNEL</kernel>
    <initrd>$E2E_INITRD</initrd>
    <cmdline>console=ttyS0 panic=-1 loglevel=4</cmdline>
  </os>
  <features><acpi/><apic/></features>
  <cpu mode='custom' match='exact' check='none'><model fallback='forbid'>$E2E_CPU_MODEL</model></cpu>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>destroy</on_reboot>
  <devices>
    <serial type='file'><source path='$(e2e_console "$dom")'/><target port='0'/></serial>
    <console type='file'><source path='$(e2e_console "$dom")'/><target type='serial' port='0'/></console>
    <memballoon model='none'/>
  </devices>
</domain>
EOF
	if [ -n "$vmi" ]; then
		"$E2E_SRC/packaging/kubernetes/llcd-kubevirt-hook" --vmi "$(cat "$vmi")" --domain "$(cat "$xml")" \
			>"$xml.hooked" || e2e_fail "pod $n: llcd-kubevirt-hook failed"
		grep -q '<llcd:pod xmlns:llcd="urn:llcd:kubevirt:1"' "$xml.hooked" || e2e_fail "pod $n: the hook wrote no <pod>"
		xml=$xml.hooked
	fi
	out=$(pod_virsh "$n" define "$xml" 2>&1) || e2e_fail "pod $n: virsh define: $out"
	out=$(pod_virsh "$n" start "$dom" 2>&1) || e2e_fail "pod $n: virsh start $dom: $out"
	e2e_log "pod $n: started $dom ($vcpus vCPUs), QEMU pid $(pod_qemu_pid "$n")"
}

# pod_qemu_pid NAME: the QEMU of the pod (the host's pid: no PID namespace).
pod_qemu_pid() {
	local cg p
	cg=$(pod_cgroup "$1")
	for p in $(cat "$cg/tasks"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = qemu-system-x86 ] && { echo "$p"; return 0; }
	done
	e2e_fail "pod $1: no QEMU in $cg"
}

# pod_vcpu_affinity NAME: "VCPU CPUS" per vCPU thread of the pod's QEMU
# (the kernel's Cpus_allowed_list).
pod_vcpu_affinity() {
	local q t c
	q=$(pod_qemu_pid "$1")
	for t in /proc/"$q"/task/*; do
		c=$(cat "$t/comm" 2>/dev/null) || continue
		case $c in "CPU "*/TCG | "CPU "*/KVM)
			c=${c#CPU }; c=${c%%/*}
			echo "$c $(awk '/^Cpus_allowed_list:/ { print $2 }' "$t/status")" ;;
		esac
	done | sort -n
}
