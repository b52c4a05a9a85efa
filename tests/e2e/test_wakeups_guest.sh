#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# e2e_wakeups_guest: llcd's in-kernel tracer on a real TCG guest, and a vCPU
# group found from its wakeups alone (no annotation groups, no guest helper).
#
# The host topology presents this machine's 2 CPUs as 2 LLCs of one PU; the
# guest has 4 vCPUs, annotated mode='aggregate' with no <group>, no channel.
# Its init runs e2e-pingpong: two processes pinned (in the guest) to vCPUs
# 1 and 3 passing a token through pipes, so that QEMU's vCPU-1 and vCPU-3
# threads wake each other (under TCG: futex kicks between the two threads).
#
# Checks:
#  1. llcd runs with `sampler bpf` (it does not start where the tracer cannot
#     load: this machine has BTF and root) and `llcctl topology` says so
#  2. the tracer sees the 1<->3 edge: in llcd's per-period debug line for
#     the domain the pair {1,3} is the strongest, well above every other
#  3. this machine has neither PMU counters nor resctrl, so nothing can
#     judge a gathered group: `llcctl topology` says so,
#     `llcctl hot` shows the group of rule wakeups holding 1 and 3,
#     `llcctl dominfo` lists it as not acted on, and why, and no vCPU is
#     pinned to a preferred LLC
#  4. after `llcctl tune unjudged-groups act`, llcd, having placed the 4
#     vCPUs on both LLCs, pins vCPUs 1 and 3 to one LLC within 20 periods
#     (Cpus_allowed_list of both threads) of the later of the tune and the
#     tracer first seeing the pair; later only when `llcctl hot` said on
#     the way that the preferred LLC was too busy to take the group (each
#     LLC here is one PU: on a loaded machine can_migrate_llc() refuses
#     and the group backs off for affinity-timeout, docs/design.md), and
#     within 60 s all the same
#  5. the same guest with the ping-pong off (llcd.run=0): no group forms,
#     no vCPU goes to a preferred LLC, in 30 periods
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/live_lib.sh"

e2e_begin wakeups_guest
e2e_install
e2e_start_libvirt
e2e_kernel

# e2e-pingpong, static for the busybox initramfs (as e2e_spin builds spin.c)
pp_src=$E2E_SRC/tests/e2e/pingpong.c
E2E_PINGPONG=$E2E_CACHE/bin/e2e-pingpong.$(sha256sum <"$pp_src" | cut -c1-16)
if [ ! -x "$E2E_PINGPONG" ]; then
	e2e_need gcc
	mkdir -p "$E2E_CACHE/bin"
	err=$(gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -static -o "$E2E_PINGPONG.tmp.$$" "$pp_src" 2>&1) ||
		e2e_fail "cannot build $pp_src: $err"
	mv "$E2E_PINGPONG.tmp.$$" "$E2E_PINGPONG"
fi
e2e_initramfs --file "$E2E_PINGPONG:/bin/e2e-pingpong" --run "e2e-pingpong -a 1 -b 3 -r 5 -p ${E2E_PINGPONG_PAUSE_US:-1000}"
live_setup
# every period's strongest edges in the log (debug), the tracer or no start
printf 'sampler bpf\nlog-level debug\n' >>"$E2E_RUN_DIR/llcd.conf"
# a short period so that "a few periods" is a few seconds
sed -i 's/^period-ms .*/period-ms 500/' "$E2E_RUN_DIR/llcd.conf"

# This host's two LLCs have one PU each. As fast as it can go, the
# ping-pong keeps both vCPUs over half busy (about 6,000 rounds/s under
# TCG): the pair needs more than one PU, and the kernel's can_migrate_llc
# rule rightly refuses to pack it into one LLC. A 1 ms pause per round
# (-p 1000: some 650 rounds/s, near the issue's measured rate) leaves the
# pair at about 0.3 CPU, which one PU takes and which is still an active
# group (0.05 CPU per vCPU). The kernel's size guard would also keep two
# busy vCPUs apart whenever the machine's load makes them count as busy;
# the guard is not what this test is about, so it is off (aggr-tolerance
# 100) and the test sees the wakeup rule alone.
pol='<llc-policy xmlns="urn:llcd:llc-policy:1" mode="aggregate"><tune aggr-tolerance="100"/></llc-policy>'
a=$(e2e_name a)
e2e_define_guest "$a" 4 "" "$pol"
e2e_start "$a"
live_start llcd
ctl() { "$LIVE_LLCCTL" -c "$LIVE_SOCK" "$@"; }
for _ in $(seq 100); do [ -S "$LIVE_SOCK" ] && break; sleep 0.2; done
live_alive

e2e_step "1. llcd samples through the tracer"
topo=$(ctl --json topology 2>&1) || e2e_fail "llcctl topology: $topo"
sampler=$(python3 -c 'import json,sys; h=json.load(sys.stdin); h=h.get("host", h); print(h.get("sampler"), "|", h.get("sampler_reason", ""))' <<<"$topo")
[ "${sampler%% *}" = bpf ] || e2e_fail "llcctl topology: sampler is not bpf: $sampler"
e2e_ok "sampler $sampler"

e2e_step "2. the tracer sees vCPU 1 <-> vCPU 3"
e2e_wait_console "$a" "E2E-PINGPONG rounds=" 180
e2e_log "guest: $(grep -m1 'E2E-PINGPONG' "$(e2e_console "$a")" | tr -d '\r')"
# "domain A: wakeups over P ms: 1->3 N, 3->1 N, ...; E edges, D dropped"
seen=
for _ in $(seq 60); do
	line=$(grep "^domain $a: wakeups over " "$LIVE_LOG" | tail -n 1 || true)
	if [ -n "$line" ]; then
		verdict=$(python3 - "$line" <<'PY'
import re, sys
line = sys.argv[1]
pairs = {}
for a, b, n in re.findall(r"(\d+)->(\d+) (\d+)", line.split(":", 2)[2]):
    k = tuple(sorted((int(a), int(b))))
    pairs[k] = pairs.get(k, 0) + int(n)
top = pairs.get((1, 3), 0)
rest = max([v for k, v in pairs.items() if k != (1, 3)] or [0])
print("yes" if top >= 20 and top >= 2 * rest else "no", top, rest)
PY
)
		[ "${verdict%% *}" = yes ] && { seen=$line; break; }
	fi
	live_alive
	sleep 1
done
[ -n "$seen" ] || e2e_fail "no period in which {1,3} is the strongest pair (last: ${line:-none}; $verdict)"
e2e_ok "${seen#*: } ({1,3} vs the next pair: ${verdict#yes })"

# has_group HOT VCPU...: llcctl hot's table has a group of rule wakeups
# whose vCPU list holds every VCPU given
has_group() {
	python3 - "$@" <<'PY'
import sys
hot, want = sys.argv[1], {int(v) for v in sys.argv[2:]}
def expand(s):
    out = set()
    for part in s.split(","):
        lo, _, hi = part.partition("-")
        out |= set(range(int(lo), int(hi or lo) + 1))
    return out
for line in hot.splitlines():
    f = line.split()
    if len(f) >= 3 and f[1] == "wakeups" and f[2][0].isdigit() and want <= expand(f[2]):
        sys.exit(0)
sys.exit(1)
PY
}
e2e_step "3. no judge on this host: the group is shown, not acted on"
judges=$(python3 -c 'import json,sys; j=json.load(sys.stdin)["judges"]; print(j["counters"]["available"], j["bandwidth_monitoring"]["available"], j["unjudged_groups"], "|", j["inferred_groups"])' <<<"$topo")
[ "${judges%% |*}" = "False False show" ] || e2e_fail "llcctl topology: judges: $judges"
ok=
for _ in $(seq 60); do
	hot=$(ctl hot "$a" 2>&1 || true)
	has_group "$hot" 1 3 && { ok=1; break; }
	live_alive
	sleep 1
done
[ -n "$ok" ] || e2e_fail "no wakeups group holding vCPUs 1 and 3 after 60 s: $hot; llcd's last wakeups lines: $(grep "^domain $a: wakeups over " "$LIVE_LOG" | tail -n 5 | cut -d: -f2- | tr '\n' '|'); load: $(cut -d' ' -f1-3 /proc/loadavg)"
info=$(ctl --json dominfo "$a")
verdict=$(python3 -c '
import json, sys
for g in json.load(sys.stdin)["groups"]:
    if g["rule"] == "wakeups":
        print(g["acted_on"], g["preferred_llc"], "|", g["why"])
' <<<"$info")
case $verdict in
"False -1 | inferred from wakeups, not acted on: no instruction counters or memory bandwidth monitoring"*) ;;
*) e2e_fail "llcctl dominfo: the wakeups group is not shown as not acted on: $verdict" ;;
esac
grep -qE "^domain $a vcpu [0-9]+ tid [0-9]+: pinned to .*preferred LLC" "$LIVE_LOG" &&
	e2e_fail "llcd pinned a vCPU to a preferred LLC without a judge: $(grep -E "^domain $a vcpu .*preferred LLC" "$LIVE_LOG" | head -3)"
e2e_ok "${judges#* | }; dominfo: ${verdict#*| }"

e2e_step "4. with unjudged-groups act, llcd pins vCPUs 1 and 3 to one LLC (rule wakeups)"
tuned=$(grep -c "^domain $a: wakeups over " "$LIVE_LOG" || true)
out=$(ctl tune unjudged-groups act 2>&1) || e2e_fail "llcctl tune unjudged-groups act: $out"
t1=$(e2e_vcpu_tid "$a" 1)
t3=$(e2e_vcpu_tid "$a" 3)
ok= whys=
for _ in $(seq 60); do
	c1=$(e2e_cpus_allowed "$t1")
	c3=$(e2e_cpus_allowed "$t3")
	hot=$(ctl hot "$a" 2>&1 || true)
	# the group's reasons while it moves (a loaded LLC that refuses it
	# backs off: said in the failure below)
	whys+=$(grep -E 'too busy|moving into|refused|retry' <<<"$hot" | tail -n 2 | tr -s ' ' | tr '\n' '|' || true)
	[ -n "${E2E_DEBUG_VCPUS:-}" ] && ctl vcpuinfo "$a" >&2
	# each LLC is one PU: one LLC means the same single CPU
	if [ "$c1" = "$c3" ] && [ "${c1//[-,]/}" = "$c1" ] && has_group "$hot" 1 3; then ok=1; break; fi
	live_alive
	sleep 1
done
e2e_log "$hot"
[ -n "$ok" ] || e2e_fail "vCPUs 1 and 3 not in one wakeups group on one LLC after 60 s: vCPU 1 on $c1, vCPU 3 on $c3"
# they were placed on both LLCs before (the domain's first placement), and
# the group moved them: count the periods from the first period in which
# the pair was the strongest (twice the next: the ping-pong runs) to the
# group's pin of the later of the two
periods=$(python3 - "$LIVE_LOG" "$a" "$t1" "$t3" "$tuned" <<'PY'
import re, sys
log, dom, t1, t3, tuned = sys.argv[1:]
n = first = p1 = p3 = 0
for line in open(log, errors="replace"):
    if line.startswith("domain %s: wakeups over " % dom):
        n += 1
        pairs = {}
        for a, b, c in re.findall(r"(\d+)->(\d+) (\d+)", line.split(":", 2)[2]):
            k = tuple(sorted((int(a), int(b))))
            pairs[k] = pairs.get(k, 0) + int(c)
        top = pairs.get((1, 3), 0)
        if not first and top >= 20 and top >= 2 * max([v for k, v in pairs.items() if k != (1, 3)] or [0]):
            first = n
    elif "pinned to" in line and "preferred LLC" in line:
        if line.startswith("domain %s vcpu 1 tid %s:" % (dom, t1)) and not p1:
            p1 = n
        if line.startswith("domain %s vcpu 3 tid %s:" % (dom, t3)) and not p3:
            p3 = n
first = max(first, int(tuned))   # no pin before the operator opts in
print(max(p1, p3) - first if first and p1 and p3 else -1)
PY
)
before=$(grep -cE "^domain $a vcpu [13] tid [0-9]+: pinned to 0-1: placement" "$LIVE_LOG" || true)
[ "$before" -ge 2 ] || e2e_fail "vCPUs 1 and 3 were not first placed on both LLCs (the test would not show the group moving them)"
late=
if [ "$periods" -gt 20 ] && grep -q "too busy to take the group" <<<"$whys"; then
	# the kernel's rule said no to a full LLC and the group waited, as
	# documented: not the 20-period bound's case (an LLC with room)
	late=" (late: the preferred LLC was too busy at first, the group backed off and retried: ${whys%%|*})"
elif [ "$periods" -lt 0 ] || [ "$periods" -gt 20 ]; then
	e2e_fail "the group's pins came $periods periods after the tune and the pair was first seen (want 0..20 at 500 ms); load: $(cut -d' ' -f1-3 /proc/loadavg); group lines: $(grep -E "^domain $a: group|^domain $a vcpu [13] tid" "$LIVE_LOG" | tail -n 8 | tr '\n' '|'); the group's reasons on the way (llcctl hot): ${whys:-none}"
fi
e2e_ok "vCPU 1 and 3 both on CPU $c1, $periods periods (of 500 ms) after the tune$late; group: $(grep -E '^[^ ]+ +wakeups ' <<<"$hot" | tr -s ' ' | cut -d' ' -f1-3)"

e2e_step "5. the same guest without the ping-pong: no group"
live_stop
e2e_destroy "$a"
b=$(e2e_name b)
e2e_define_guest --cmdline "llcd.run=0" "$b" 4 "" "$pol"
e2e_start "$b"
e2e_wait_console "$b" "E2E: ready" 180
live_start llcd2
for _ in $(seq 100); do [ -S "$LIVE_SOCK" ] && break; sleep 0.2; done
# 30 periods of 0.5 s: the rule forms a pair after 2 s above its threshold
sleep 15
live_alive
hot=$(ctl hot "$b" 2>&1 || true)
e2e_log "$hot"
lines=$(grep -c "^domain $b: wakeups over " "$LIVE_LOG" || true)
[ "$lines" -ge 20 ] || e2e_fail "llcd logged wakeups of $b in only $lines periods"
if grep -qE '^[^ ]+ +wakeups ' <<<"$hot"; then
	e2e_fail "a wakeups group formed without the ping-pong: $hot"
fi
grep -qE "^domain $b vcpu [0-9]+ tid [0-9]+: pinned to .*preferred LLC" "$LIVE_LOG" &&
	e2e_fail "llcd pinned a vCPU of $b to a preferred LLC: $(grep -E "^domain $b vcpu .*preferred LLC" "$LIVE_LOG" | head -3)"
e2e_ok "no group in $lines periods; last: $(grep "^domain $b: wakeups over " "$LIVE_LOG" | tail -n 1 | cut -d: -f2-)"
live_alive
e2e_end
