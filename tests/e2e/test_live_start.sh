#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# e2e_live_start: llcd's reaction to libvirt's started event for a large
# domain, and a start that needs no pin at all.
#
# Checks:
#  1. a 128-vCPU TCG guest (mode static, overcommit 64 on this host's two
#     1-PU LLCs) started with `virsh start --paused` (QEMU makes its vCPU
#     threads before the guest runs; nothing needs to boot): llcd places it
#     from the event; every vCPU thread's Cpus_allowed_list is one CPU and
#     equals llcd's pin and libvirt's vcpupin. llcd's own figures (first and
#     last vCPU on its CPUs after the event, pin calls) go to
#     $E2E_RUN_DIR/reaction.txt, for docs/benchmarks.md; not a timed check.
#  2. `llcctl topology D --apply` writes llcd's pins into the persistent
#     definition (<cputune><vcpupin>/<emulatorpin>); after a restart libvirt
#     applies them and llcd adopts the domain with zero pin calls (no pin
#     line in its log, llcctl stats pin_calls unchanged, every pin counted
#     in pins_in_place or kept by the engine), and every vCPU is where the
#     definition says.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/live_lib.sh"
LIVE_DAEMON=llcd                        # llcctl stats and topology --apply

live_begin live_start
# 128 vCPUs on 2 PUs: 64 per PU
live_overcommit 64
N=128
d=$(e2e_name big)
e2e_define_guest --memory 256 "$d" "$N" "" '<llc-policy mode="static"/>'
live_start llcd
live_wait_log "libvirt .*: connected" 20 >/dev/null

# check_pins DOMAIN WANT_FILE: every vCPU thread's Cpus_allowed_list and
# libvirt's vcpupin equal WANT_FILE's "vcpu cpus" lines; prints a summary.
check_pins() {
	e2e_virsh vcpupin "$1" >"$E2E_RUN_DIR/vcpupin.txt"
	python3 - "$(e2e_qemu_pid "$1")" "$2" "$E2E_RUN_DIR/vcpupin.txt" "$N" <<'EOF'
import glob, re, sys
pid, wantf, pinf, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
want = dict(l.split() for l in open(wantf) if l.strip())
virt = dict(l.split()[:2] for l in open(pinf) if re.match(r'\s*\d+\s', l))
kern = {}
for t in glob.glob('/proc/%s/task/*' % pid):
    try:
        comm = open(t + '/comm').read().strip()
        m = re.match(r'CPU (\d+)/TCG', comm)
        if m:
            st = open(t + '/status').read()
            kern[m.group(1)] = re.search(r'Cpus_allowed_list:\s*(\S+)', st).group(1)
    except OSError:
        pass
bad = [v for v in map(str, range(n)) if not (want.get(v) and kern.get(v) == want[v] == virt.get(v))]
if bad:
    v = bad[0]
    print('%d vCPUs differ; vCPU %s: wanted %s, kernel %s, libvirt %s' % (len(bad), v, want.get(v), kern.get(v), virt.get(v)))
    sys.exit(1)
cpus = sorted(set(want.values()))
print('%d vCPUs on %s (%s)' % (n, ','.join(cpus), ' '.join('%s:%d' % (c, list(want.values()).count(c)) for c in cpus)))
EOF
}

# wait_log_after FROM REGEX TIMEOUT: the first log line after line FROM
# that matches
wait_log_after() {
	local i l
	for ((i = 0; i < $3 * 5; i++)); do
		live_alive
		l=$(tail -n +"$(($1 + 1))" "$LIVE_LOG" | grep -E -m1 -- "$2" || true)
		[ -n "$l" ] && { echo "$l"; return 0; }
		sleep 0.2
	done
	e2e_fail "no daemon log line /$2/ within $3 s (log: $LIVE_LOG)"
}

# llcd's pins of DOMAIN from its log after line FROM: "vcpu cpus" lines
logged_pins() {
	tail -n +"$(($2 + 1))" "$LIVE_LOG" | sed -n "s/^domain $1 vcpu \([0-9]*\) tid [0-9]*: pinned to \([^:]*\):.*/\1 \2/p" |
		awk '{ w[$1] = $2 } END { for (v in w) print v, w[v] }'
}

e2e_step "1. a $N-vCPU guest started (paused): placed from libvirt's started event"
n0=$(live_lines)
out=$(e2e_virsh start --paused "$d" 2>&1) || e2e_fail "virsh start --paused $d: $out"
line=$(wait_log_after "$n0" "^domain $d: (placed|not placed) .*started event" 60)
e2e_log "$line"
grep -q "placed from its started event: first vCPU" <<<"$line" || e2e_fail "$d: $line"
[ "$(live_count "$d" pin-vcpu "$n0")" = "$N" ] || e2e_fail "$d: $(live_count "$d" pin-vcpu "$n0") vCPU pins, want $N"
logged_pins "$d" "$n0" >"$E2E_RUN_DIR/want1.txt"
r=$(check_pins "$d" "$E2E_RUN_DIR/want1.txt") || e2e_fail "$d: $r"
first=$(sed -n 's/.*on its CPUs \([0-9.]*\) ms.*/\1/p' <<<"$line")
last=$(sed -n 's/.*last \([0-9.]*\) ms after it.*/\1/p' <<<"$line")
calls=$(sed -n 's/.*; \([0-9]*\) pin calls\{0,1\},.*/\1/p' <<<"$line")
echo "start $d vcpus=$N first_ms=$first last_ms=$last pin_calls=$calls" >>"$E2E_RUN_DIR/reaction.txt"
e2e_ok "$r; first vCPU pinned $first ms, all $N $last ms after the started event ($calls pin calls)"

e2e_step "2. its pins in the definition (topology --apply): a restart is adopted with zero pin calls"
out=$(live_ctl topology "$d" --apply) || e2e_fail "topology --apply: $out"
xml=$(virsh -c qemu:///system dumpxml --inactive "$d")
sed -n "s/.*<vcpupin vcpu='\([0-9]*\)' cpuset='\([^']*\)'.*/\1 \2/p" <<<"$xml" >"$E2E_RUN_DIR/want2.txt"
[ "$(wc -l <"$E2E_RUN_DIR/want2.txt")" = "$N" ] || e2e_fail "--apply wrote $(wc -l <"$E2E_RUN_DIR/want2.txt") vcpupin, want $N"
grep -q "<emulatorpin cpuset=" <<<"$xml" || e2e_fail "--apply wrote no emulatorpin"
cmp -s <(sort -n "$E2E_RUN_DIR/want1.txt") <(sort -n "$E2E_RUN_DIR/want2.txt") ||
	e2e_log "note: the definition's pins differ from the running placement (recommended afresh)"
e2e_virsh destroy "$d" >/dev/null
live_wait_log "domain $d: no longer managed" 20 >/dev/null
c0=$(live_stat pin_calls)
k0=$(live_stat pins_in_place)
n0=$(live_lines)
out=$(e2e_virsh start --paused "$d" 2>&1) || e2e_fail "virsh start --paused $d (with pins): $out"
line=$(wait_log_after "$n0" "^domain $d: (placed|not placed) .*started event" 60)
e2e_log "$line"
r=$(check_pins "$d" "$E2E_RUN_DIR/want2.txt") || e2e_fail "$d after the restart: $r"
sleep 2                                 # two more periods: nothing follows
c1=$(live_stat pin_calls)
k1=$(live_stat pins_in_place)
nv=$(live_count "$d" pin-vcpu "$n0")
ne=$(live_count "$d" pin-emulator "$n0")
[ "$nv" = 0 ] && [ "$ne" = 0 ] || e2e_fail "$d: $nv vCPU and $ne emulator pins after a start with its pins in the definition"
[ "$c1" = "$c0" ] || e2e_fail "$d: pin_calls $c0 -> $c1 after a start with its pins in the definition"
grep -q "with no vCPU pin call\|; 0 pin calls," <<<"$line" || e2e_fail "$d: $line"
e2e_ok "$r as the definition says; pin calls $c0 -> $c1, pins in place $k0 -> $k1"
echo "adopt $d vcpus=$N pin_calls=$((c1 - c0)) in_place=$((k1 - k0))" >>"$E2E_RUN_DIR/reaction.txt"
live_alive
e2e_end
