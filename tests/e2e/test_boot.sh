#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/e2e/test_boot.sh - the harness's own end-to-end test: real libvirtd,
# two real QEMU TCG guests, no llcd yet. It proves what later e2e tests build
# on: the guests boot and report their topology (2 L3 domains with SMT pairs
# in the dies=2 guest), vCPU threads are found under /proc, a busy loop on a
# chosen guest CPU shows up on the right host thread, live pinning through
# libvirt reaches the kernel, and llc-policy metadata round-trips.
. "$(dirname "$0")/lib.sh"

e2e_begin boot
e2e_install
e2e_start_libvirt
e2e_kernel
e2e_spin
# The dies guest runs e2e-spin from the initramfs: 2 threads pinned to
# guest CPUs 0 and 2 (one per die), reporting for 3 s. The small guest
# suppresses it with llcd.run=0.
e2e_initramfs --file "$E2E_SPIN:/bin/e2e-spin" --run 'e2e-spin -n 2 -c 0,2 -r 1 -t 3'

small=$(e2e_name small)
dies=$(e2e_name dies)

e2e_step "define $small (2 vCPUs, busy loop on guest CPU 1, llc-policy in its XML)"
e2e_define_guest --busy 1 --cmdline llcd.run=0 "$small" 2 "" \
	'<llc:llc-policy xmlns:llc="urn:llcd:llc-policy:1" mode="static"/>'

e2e_step "define $dies (4 vCPUs, sockets=1 dies=2 cores=1 threads=2, $E2E_CPU_MODEL, virtio-serial channel)"
e2e_define_guest --channel --cmdline llcd.hello=org.llcd.guest.0 \
	"$dies" 4 "sockets=1,dies=2,cores=1,threads=2"

e2e_step "start both guests"
e2e_start "$small"
e2e_start "$dies"

e2e_step "each guest's /init runs and prints its topology"
for d in "$small" "$dies"; do
	e2e_ok "$d: $(e2e_wait_console "$d" '^E2E: init reached' 90)"
done
for d in "$small" "$dies"; do
	e2e_ok "$d: $(e2e_wait_console "$d" '^E2E: ready' 60)"
done

e2e_step "$small: 2 CPUs in the guest, busy loop on CPU 1"
n=$(e2e_guest_topo "$small" | wc -l)
[ "$n" = 2 ] || e2e_fail "$small reported $n CPUs, want 2"
e2e_console_has "$small" '^E2E-BUSY cpu=1 pid=[0-9]+' ||
	e2e_fail "$small did not start its busy loop on CPU 1"
e2e_ok "2 E2E-TOPO lines, E2E-BUSY cpu=1"

e2e_step "$dies: Intel vendor, 4 CPUs, 2 L3 domains (0-1, 2-3), SMT pairs, die_id 0,0,1,1"
e2e_guest_topo "$dies" | sed 's/^/      /'
e2e_console_has "$dies" '^E2E-CPU vendor=GenuineIntel' ||
	e2e_fail "$dies: not an Intel-vendor guest CPU ($(grep '^E2E-CPU' "$(e2e_console "$dies")"))"
n=$(e2e_guest_topo "$dies" | wc -l)
[ "$n" = 4 ] || e2e_fail "$dies reported $n CPUs, want 4"
l3=$(e2e_guest_l3 "$dies" | paste -sd' ')
[ "$l3" = "0-1 2-3" ] || e2e_fail "$dies: L3 domains '$l3', want '0-1 2-3'"
smt=$(e2e_guest_smt "$dies" | paste -sd' ')
[ "$smt" = "0-1 2-3" ] || e2e_fail "$dies: SMT sibling lists '$smt', want '0-1 2-3'"
die=$(e2e_guest_topo "$dies" | sed -n 's/.* cpu=\([0-9]*\) .* die=\([0-9]*\) .*/\1:\2/p' |
	sort -n | paste -sd' ')
[ "$die" = "0:0 1:0 2:1 3:1" ] || e2e_fail "$dies: cpu:die_id '$die', want '0:0 1:0 2:1 3:1'"
e2e_ok "L3 {$l3}, SMT {$smt}, cpu:die {$die}"

e2e_step "$dies: the in-guest command ran: e2e-spin's threads ran on guest CPUs 0 and 2"
e2e_wait_console "$dies" '^E2E: run exited' 60 >/dev/null
line=$(grep -m1 '^E2E-SPIN .* t=3 ' "$(e2e_console "$dies")" | tr -d '\r' || true)
[ -n "$line" ] || e2e_fail "$dies: no E2E-SPIN report for t=3 on the console"
case $line in
*" cpus=0,2 allowed=0;2") ;;
*) e2e_fail "$dies: e2e-spin reported '$line', want cpus=0,2 allowed=0;2" ;;
esac
e2e_console_has "$dies" '^E2E: run exited rc=0' || e2e_fail "$dies: e2e-spin did not exit 0"
e2e_console_has "$small" '^E2E: run start' && e2e_fail "$small ran the command despite llcd.run=0"
e2e_ok "$line; exited rc=0"

e2e_step "$dies: the virtio-serial port is visible in the guest by name"
e2e_console_has "$dies" '^E2E-PORT name=org.llcd.guest.0 dev=/dev/vport' ||
	e2e_fail "$dies: no E2E-PORT line for org.llcd.guest.0"
[ -S "$(e2e_channel_sock "$dies")" ] || e2e_fail "host socket $(e2e_channel_sock "$dies") missing"
e2e_ok "$(grep -m1 '^E2E-PORT' "$(e2e_console "$dies")" | tr -d '\r'), host end $(e2e_channel_sock "$dies")"

e2e_step "$dies: a line the guest writes to the port arrives on the host socket"
line=$(e2e_channel_read "$dies" org.llcd.guest.0 30)
[ "$line" = "E2E-HELLO port=org.llcd.guest.0 cpus=4" ] || e2e_fail "$dies: channel gave '$line'"
e2e_ok "host read: $line"

for d in "$small" "$dies"; do
	want=$([ "$d" = "$small" ] && echo 2 || echo 4)
	e2e_step "$d: $want vCPU threads ('CPU n/TCG') under /proc/<qemu pid>/task, each in libvirt's vcpuN cgroup"
	pid=$(e2e_qemu_pid "$d")
	tids=$(e2e_vcpu_tids "$d")
	[ "$(echo "$tids" | grep -c .)" = "$want" ] ||
		e2e_fail "$d: vCPU threads '$(echo $tids)', want $want"
	[ "$(echo "$tids" | cut -d' ' -f1 | paste -sd,)" = "$(seq -s, 0 $((want - 1)))" ] ||
		e2e_fail "$d: vCPU numbers $(echo "$tids" | cut -d' ' -f1 | paste -sd,)"
	while read -r v tid; do
		[ -d "/proc/$pid/task/$tid" ] || e2e_fail "$d: /proc/$pid/task/$tid missing"
		grep -q "/vcpu$v\$" "/proc/$tid/cgroup" ||
			e2e_fail "$d: thread $tid (vCPU $v) not in a vcpu$v cgroup: $(cat /proc/$tid/cgroup)"
	done <<<"$tids"
	n=$(e2e_virsh vcpuinfo "$d" | grep -c '^VCPU:')
	[ "$n" = "$want" ] || e2e_fail "$d: virsh vcpuinfo lists $n vCPUs, want $want"
	e2e_ok "qemu pid $pid, vcpu:tid $(echo "$tids" | tr ' \n' ': ')virsh vcpuinfo agrees"
done

e2e_step "$small: the busy guest CPU 1 burns host CPU on vCPU 1's thread, not on vCPU 0's"
t0=$(e2e_vcpu_tid "$small" 0)
t1=$(e2e_vcpu_tid "$small" 1)
a0=$(e2e_thread_cpu_ms "$t0")
a1=$(e2e_thread_cpu_ms "$t1")
sleep 2
b0=$(e2e_thread_cpu_ms "$t0")
b1=$(e2e_thread_cpu_ms "$t1")
idle=$((b0 - a0))
busy=$((b1 - a1))
[ "$busy" -ge 500 ] && [ "$busy" -gt $((2 * idle + 100)) ] ||
	e2e_fail "over 2 s vCPU 1 (tid $t1) used ${busy} ms, vCPU 0 (tid $t0) ${idle} ms"
e2e_ok "in 2 s: vCPU 1 used ${busy} ms CPU, vCPU 0 ${idle} ms"

ncpu=$(nproc)
last=$((ncpu - 1))
e2e_step "$small: virsh vcpupin --live moves vCPU 0 to host CPU $last and vCPU 1 to host CPU 0"
[ "$ncpu" -ge 2 ] || e2e_log "note: only 1 host CPU, so the pins cannot differ from the default"
before=$(e2e_cpus_allowed "$t0")
e2e_virsh vcpupin "$small" 0 "$last" --live >/dev/null || e2e_fail "virsh vcpupin $small 0 $last --live"
e2e_virsh vcpupin "$small" 1 0 --live >/dev/null || e2e_fail "virsh vcpupin $small 1 0 --live"
got0=$(e2e_cpus_allowed "$t0")
got1=$(e2e_cpus_allowed "$t1")
[ "$got0" = "$last" ] || e2e_fail "vCPU 0 (tid $t0): Cpus_allowed_list '$got0', want '$last'"
[ "$got1" = 0 ] || e2e_fail "vCPU 1 (tid $t1): Cpus_allowed_list '$got1', want '0'"
aff=$(e2e_virsh vcpuinfo "$small" | awk '/^CPU Affinity:/ { print $3 }' | paste -sd' ')
want_aff="$(printf '%*s' "$ncpu" '' | tr ' ' '-' | sed 's/-$/y/') y$(printf '%*s' $((ncpu - 1)) '' | tr ' ' '-')"
[ "$aff" = "$want_aff" ] || e2e_fail "virsh vcpuinfo affinity '$aff', want '$want_aff'"
e2e_ok "Cpus_allowed_list vCPU 0: $before -> $got0, vCPU 1: $got1; vcpuinfo affinity $aff"

e2e_step "$small: the llc-policy element from the defining XML is there (live and config)"
for f in --live --config; do
	p=$(e2e_get_policy "$small" $f) || e2e_fail "$small: no llc-policy metadata ($f)"
	echo "$p" | grep -q 'mode="static"' || e2e_fail "$small $f: llc-policy '$p'"
done
e2e_ok "$(echo $p)"

e2e_step "$dies: virsh metadata --uri $E2E_POLICY_NS --key llc --set, read back, remove"
if p=$(e2e_get_policy "$dies" --live); then e2e_fail "$dies has llc-policy before set: $p"; fi
e2e_set_policy "$dies" '<llc-policy mode="aggregate" isolation="core"/>' --live --config
for f in --live --config; do
	p=$(e2e_get_policy "$dies" $f) || e2e_fail "$dies: llc-policy not readable after set ($f)"
	echo "$p" | grep -q 'mode="aggregate"' || e2e_fail "$dies $f: llc-policy '$p'"
done
e2e_virsh dumpxml "$dies" | grep -q "<llc:llc-policy xmlns:llc=\"$E2E_POLICY_NS\" mode=\"aggregate\"" ||
	e2e_fail "$dies: dumpxml has no <llc:llc-policy xmlns:llc=\"$E2E_POLICY_NS\" ...>"
e2e_ok "read back: $(echo $p)"
e2e_virsh metadata "$dies" --uri "$E2E_POLICY_NS" --remove --live --config >/dev/null ||
	e2e_fail "$dies: virsh metadata --remove failed"
if p=$(e2e_get_policy "$dies" --live); then e2e_fail "$dies: llc-policy still there after --remove: $p"; fi
e2e_ok "removed"

e2e_step "tear down: destroy and undefine both guests"
for d in "$small" "$dies"; do
	e2e_destroy "$d"
	s=$(e2e_virsh domstate "$d")
	[ "$s" = "shut off" ] || e2e_fail "$d: state '$s' after destroy"
	e2e_undefine "$d"
done
left=$(e2e_virsh list --all --name | grep "^$E2E_PREFIX$E2E_TEST-" || true)
[ -z "$left" ] || e2e_fail "domains left after undefine: $left"
e2e_ok "no $E2E_PREFIX$E2E_TEST-* domains left"

e2e_end
