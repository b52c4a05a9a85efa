#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# e2e_live_place: the live back-end places real TCG guests' vCPU threads
# through libvirt on a host presented as two LLCs (this machine's CPUs 0
# and 1), and follows annotation changes, stop/start, an invalid annotation
# and an unannotated domain next to an isolated one.
#
# Checks, in order:
#  1. two annotated 2-vCPU guests (aggregate with topology="match", so
#     that its vCPUs are pinned per LLC at once, and static): every vCPU's Cpus_allowed_list and
#     `virsh vcpupin` equal what the daemon pinned; each guest in one LLC,
#     the two guests in different LLCs (overcommit 2); emulator threads too;
#     llcd's vCPU thread IDs and guest positions agree with QMP
#     query-cpus-fast (through libvirt, qmp-passthrough yes)
#  2. `virsh metadata --remove` on A: released (all CPUs) within one
#     period; a new annotation: pinned again within one period
#  3. destroy B: the daemon drops it; start B: its new threads are pinned
#  4. a guest C with an invalid annotation: reported (state error, the
#     parser's message) and never pinned
#  5. A becomes isolation="core": C (unmanaged) is confined to the shared
#     pool as a whole (every vCPU and the emulator on the same CPUs, none of
#     A's), never placed per vCPU
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/live_lib.sh"

LIVE_QMP=yes                            # check 1 cross-checks with QMP
live_begin live_place

a=$(e2e_name a)
b=$(e2e_name b)
c=$(e2e_name c)
live_two_guests live "1. every vCPU pinned where the daemon says (kernel and libvirt)" "$a" match "$b" static
pa=$LIVE_PA pb=$LIVE_PB
set -- $pa
ca0=${1#*=} ca1=${2#*=}
set -- $pb
cb0=${1#*=} cb1=${2#*=}
[ "$ca0" = "$ca1" ] || e2e_fail "$a: vCPUs in different LLCs ($pa); a 2-vCPU domain fits one LLC at overcommit 2"
[ "$cb0" = "$cb1" ] || e2e_fail "$b: vCPUs in different LLCs ($pb)"
[ "$ca0" != "$cb0" ] || e2e_fail "$a and $b share LLC $ca0; the second must take the other LLC"
case "$ca0$cb0" in 01 | 10) ;; *) e2e_fail "pins $ca0 / $cb0 are not one CPU each" ;; esac
e2e_ok "$a in LLC $ca0, $b in LLC $cb0"
for d in "$a" "$b"; do
	want=$(live_wanted_emulator "$d")
	have=$(live_emulator_allowed "$d")
	[ -n "$want" ] && [ "$have" = "$want" ] ||
		e2e_fail "$d: emulator threads on $have, daemon pinned '$want'"
done
e2e_ok "emulator threads where the daemon pinned them"
st=$(live_status "$a")
n=$(echo "$st" | grep -oE '"qmp": ?"match"' | wc -l)
[ "$n" = 2 ] || e2e_fail "$a: QMP query-cpus-fast does not match the vCPU threads and positions llcd computed: $st"
e2e_ok "$a: vCPU thread IDs and guest positions match QMP query-cpus-fast (qmp-passthrough yes)"
if [ "$LIVE_DAEMON" = llcd ]; then
	# read-only requests are served from the answer kept for this vCPU set:
	# five more dominfo calls ask the monitor nothing
	q1=$(live_status "$a" | grep -oE '"qmp_queries": ?[0-9]+' | grep -oE '[0-9]+$')
	for _ in 1 2 3 4 5; do live_status "$a" >/dev/null; done
	q2=$(live_status "$a" | grep -oE '"qmp_queries": ?[0-9]+' | grep -oE '[0-9]+$')
	[ -n "$q1" ] && [ "$q1" = "$q2" ] || e2e_fail "$a: query-cpus-fast asked again by read-only requests ($q1 -> $q2)"
	e2e_ok "$a: QMP asked $q1 time(s) for this vCPU set; six dominfo requests asked nothing more"
	# where the guest's memory lives: sampled pages of the real QEMU's
	# guest RAM (move_pages in query mode); this host has node 0 only
	m=$(live_status "$a" | grep -oE '"memory": ?\{[^}]*\}')
	echo "$m" | grep -qE '"node": ?0[,}]' || e2e_fail "$a: llcctl dominfo does not put its memory on node 0: ${m:-no memory field}"
	echo "$m" | grep -qE '"resident_pages": ?[1-9]' || e2e_fail "$a: no sampled guest-RAM page resident: $m"
	e2e_ok "$a: memory on NUMA node 0 ($m)"
fi

e2e_step "2. annotation changes take effect within one period"
t0=$(live_now)
e2e_virsh metadata "$a" --uri "$E2E_POLICY_NS" --remove --live --config >/dev/null
for ((i = 0; ; i++)); do
	tid0=$(e2e_vcpu_tid "$a" 0)
	tid1=$(e2e_vcpu_tid "$a" 1)
	[ "$(e2e_cpus_allowed "$tid0")" = 0-1 ] && [ "$(e2e_cpus_allowed "$tid1")" = 0-1 ] && break
	[ $i -lt 50 ] || e2e_fail "$a: not released within 5 s of removing its annotation"
	sleep 0.1
done
e2e_ok "$a released to 0-1 $(live_since "$t0") s after 'virsh metadata --remove' (period ${LIVE_PERIOD_MS} ms)"
[ "$(live_vcpupin "$a" 0)" = 0-1 ] || e2e_fail "$a: virsh vcpupin 0 shows $(live_vcpupin "$a" 0) after release"
t0=$(live_now)
e2e_set_policy "$a" '<llc-policy mode="static"/>'
n0=$(live_lines)
for ((i = 0; ; i++)); do
	[ "$(live_count "$a" pin-vcpu "$n0")" -ge 2 ] && r=$(live_pins_agree "$a" 2) && break
	[ $i -lt 50 ] || e2e_fail "$a: not placed again within 5 s of a new annotation"
	sleep 0.1
done
e2e_ok "$a placed again ($r) $(live_since "$t0") s after 'virsh metadata --set'"
dt=$(live_since "$t0")
awk -v t="$dt" -v p="$LIVE_PERIOD_MS" 'BEGIN { exit !(t <= 2.5 * p / 1000) }' ||
	e2e_fail "re-placement took $dt s, more than one period plus slack"

e2e_step "3. stop and start a domain"
tb0=$(e2e_vcpu_tid "$b" 0)
e2e_destroy "$b"
live_wait_log "domain $b: no longer managed" 10 >/dev/null
e2e_ok "daemon dropped $b"
e2e_start "$b"
# reaction: llcd places a started domain from libvirt's event, not at its
# next period; measured from virsh start's return to each vCPU thread on
# one CPU (a figure for docs/benchmarks.md, not a timed assertion)
r_t0=$(live_now)
r_first= r_all=
for _ in $(seq 200); do
	r_n=0
	while read -r _ r_tid; do
		r_cpus=$(e2e_cpus_allowed "$r_tid" 2>/dev/null || true)
		[ -n "$r_cpus" ] && [ "${r_cpus//[-,]/}" = "$r_cpus" ] && r_n=$((r_n + 1))
	done < <(e2e_vcpu_tids "$b")
	[ -z "$r_first" ] && [ "$r_n" -ge 1 ] && r_first=$(live_since "$r_t0")
	[ "$r_n" -ge 2 ] && { r_all=$(live_since "$r_t0"); break; }
	sleep 0.01
done
[ -n "$r_all" ] || e2e_fail "$b: its vCPUs were not pinned after 200 looks at their affinity"
e2e_ok "$b: first vCPU pinned ${r_first} s, both ${r_all} s after virsh start returned (period ${LIVE_PERIOD_MS} ms)"
echo "reaction $b first=$r_first all=$r_all period_ms=$LIVE_PERIOD_MS" >>"$E2E_RUN_DIR/reaction.txt"
pb=$(live_wait_pins "$b" 2 15)
[ "$(e2e_vcpu_tid "$b" 0)" != "$tb0" ] || e2e_fail "$b: same vCPU thread after a restart?"
e2e_ok "$b running again with new threads, pinned: $pb"

e2e_step "4. a domain with an invalid annotation is reported and left alone"
e2e_undefine "$b"                       # at most two guests at a time
e2e_define_guest "$c" 2 "" '<llc-policy mode="bogus"/>'
e2e_start "$c"
live_wait_log "domain $c: invalid llc-policy annotation" 10
live_wait_status "$c" '"state": ?"error"' 50 0.2 "status never says error"
st=$LIVE_ST
echo "$st" | grep -qE '"annotation_error": ?"[^"]*mode' ||
	e2e_fail "$c: no annotation_error naming 'mode': $st"
e2e_ok "status: state error, $(echo "$st" | grep -oE '"annotation_error": ?"[^"]*"')"
sleep 3                                 # three more periods
for v in 0 1; do
	have=$(e2e_cpus_allowed "$(e2e_vcpu_tid "$c" "$v")")
	[ "$have" = 0-1 ] || e2e_fail "$c vCPU $v on $have; an invalid annotation must leave it alone"
done
n=$(($(live_count "$c" pin-vcpu) + $(live_count "$c" pin-emulator) + $(live_count "$c" release)))
[ "$n" = 0 ] || e2e_fail "$c: the daemon applied $n actions to a domain with an invalid annotation"
e2e_ok "$c untouched (0-1, no actions)"

e2e_step "5. an unmanaged domain next to an isolated one: confined as a whole"
n0=$(live_lines)
e2e_set_policy "$a" '<llc-policy mode="static" isolation="core"/>'
for ((i = 0; ; i++)); do
	if [ "$(live_count "$c" pin-emulator "$n0")" -ge 1 ] && [ "$(live_count "$c" pin-vcpu "$n0")" -ge 2 ]; then
		pool=$(live_wanted_emulator "$c")
		ok=1
		for v in 0 1; do
			[ "$(live_wanted "$c" "$v")" = "$pool" ] || e2e_fail "$c vCPU $v pinned to $(live_wanted "$c" "$v"), not the pool $pool: placed per vCPU"
			[ "$(e2e_cpus_allowed "$(e2e_vcpu_tid "$c" "$v")")" = "$pool" ] || ok=0
		done
		[ "$(live_emulator_allowed "$c")" = "$pool" ] || ok=0
		[ $ok = 1 ] && break
	fi
	[ $i -lt 80 ] || e2e_fail "$c not confined within 8 s of $a becoming isolated"
	sleep 0.1
done
pa=$(live_wait_pins "$a" 2 10)
for v in 0 1; do
	case ",$pool," in *",$(live_wanted "$a" "$v"),"*) e2e_fail "$a vCPU $v (isolated) shares CPU with the pool $pool" ;; esac
done
e2e_ok "$a isolated ($pa); $c confined as a whole to the shared pool [$pool], emulator included"

live_alive
e2e_end
