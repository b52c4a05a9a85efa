#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# e2e_live_restart: restart safety of the live back-end with real TCG
# guests on this machine's CPUs 0 and 1 presented as two LLCs.
#
# Checks, in order:
#  1. two annotated guests placed (kernel and libvirt agree with the daemon)
#  2. SIGTERM leaves every pin in place; the state file lists both domains
#     and their pins; a restarted daemon re-pins no vCPU and logs that it
#     found every vCPU where it left it
#  3. a vCPU moved with `virsh vcpupin` while the daemon was down is
#     reported at the next start ("moved by someone else while llcd was
#     not running")
#  4. a vCPU moved with `virsh vcpupin` while the daemon runs is noticed
#     (tunable event) and put back within a few periods
#  5. libvirtd restarts: the daemon reconnects, no pin changes, and it
#     keeps managing (an annotation change after the reconnect takes effect)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/live_lib.sh"

live_begin live_restart

a=$(e2e_name a)
b=$(e2e_name b)
live_two_guests live1 "1. both guests placed" "$a" static "$b" match

# kernel affinity of every vCPU of both domains, "d/v=cpus ..."
snapshot() { live_snapshot e2e_vcpu_tid "$a" "$b"; }

e2e_step "2. restart the daemon: pins stay, nothing re-pinned"
before=$(snapshot)
live_stop
[ "$(snapshot)" = "$before" ] || e2e_fail "pins changed when the daemon stopped: $before -> $(snapshot)"
sf=$LIVE_STATE/live.state
[ -s "$sf" ] || e2e_fail "no state file $sf"
head -1 "$sf" | grep -qx 'llcd-live-state 1' || e2e_fail "$sf: bad header: $(head -1 "$sf")"
for d in "$a" "$b"; do
	grep -q "^domain [0-9a-f]\{16\} [0-9a-f-]\{36\} 2 $d\$" "$sf" || e2e_fail "$sf has no domain line for $d"
done
[ "$(grep -c '^vcpu ' "$sf")" = 4 ] || e2e_fail "$sf: want 4 vcpu lines: $(cat "$sf")"
e2e_ok "state file: $(grep -c '^domain ' "$sf") domains, $(grep -c '^vcpu ' "$sf") vCPU pins"
live_restart_adopts live2 10 daemon "$before" "$a" "$b"
e2e_ok "0 vCPU re-pins after the restart; $before"

e2e_step "3. a vCPU moved while the daemon was down is reported"
live_stop
wa=$(e2e_cpus_allowed "$(e2e_vcpu_tid "$a" 0)")
other=$([ "$wa" = 0 ] && echo 1 || echo 0)
e2e_virsh vcpupin "$a" 0 "$other" --live >/dev/null
live_start live3
live_wait_log "domain $a vcpu 0 tid [0-9]+: moved by someone else while llcd was not running: llcd left it on $wa, it is on $other now" 10
e2e_ok "reported"

e2e_step "4. a vCPU moved while the daemon runs is put back"
sleep 2
live_alive
wb=$(e2e_cpus_allowed "$(e2e_vcpu_tid "$b" 1)")
other=$([ "$wb" = 0 ] && echo 1 || echo 0)
t0=$(live_now)
e2e_virsh vcpupin "$b" 1 "$other" --live >/dev/null
live_wait_log "domain $b vcpu 1 tid [0-9]+: moved by someone else: llcd pinned it to $wb, it is on $other now" 10 >/dev/null
for ((i = 0; ; i++)); do
	[ "$(e2e_cpus_allowed "$(e2e_vcpu_tid "$b" 1)")" = "$wb" ] && [ "$(live_vcpupin "$b" 1)" = "$wb" ] && break
	[ $i -lt 50 ] || e2e_fail "$b vCPU 1 not put back on $wb within 5 s"
	sleep 0.1
done
e2e_ok "$b vCPU 1 back on $wb $(live_since "$t0") s after 'virsh vcpupin'"

e2e_step "5. libvirtd restarts: reconnect, pins kept, still managing"
before=$(snapshot)
e2e_restart_libvirt
live_wait_log "libvirt reconnected" 20
[ "$(snapshot)" = "$before" ] || e2e_fail "pins changed across the libvirtd restart: $before -> $(snapshot)"
sleep 2
live_alive
[ "$(snapshot)" = "$before" ] || e2e_fail "pins changed after the reconnect: $before -> $(snapshot)"
e2e_ok "pins unchanged: $before"
t0=$(live_now)
e2e_virsh metadata "$b" --uri "$E2E_POLICY_NS" --remove --live --config >/dev/null
for ((i = 0; ; i++)); do
	[ "$(e2e_cpus_allowed "$(e2e_vcpu_tid "$b" 0)")" = 0-1 ] && [ "$(e2e_cpus_allowed "$(e2e_vcpu_tid "$b" 1)")" = 0-1 ] && break
	[ $i -lt 50 ] || e2e_fail "$b not released within 5 s of removing its annotation after the reconnect"
	sleep 0.1
done
e2e_ok "annotation removed after the reconnect: $b released $(live_since "$t0") s later"

live_alive
e2e_end
