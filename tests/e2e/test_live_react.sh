#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# e2e_live_react: how soon a started domain's vCPUs are all pinned after
# `virsh start` returns, for 4 and for 128 vCPUs, with llcd's period so
# long (period-ms 600000) that no periodic step falls in the test: every
# pin is made from libvirt's started event.
#
# Checks, for each guest (mode static; started with `virsh start --paused`:
# QEMU makes its vCPU threads before the guest runs, so nothing has to
# boot on this 2-CPU machine; 128 vCPUs fit in 256 MiB):
#  1. every vCPU thread's Cpus_allowed_list becomes one CPU, and the
#     daemon's log says it placed the domain from its started event; the
#     next periodic step is minutes away, so the pins came from the event
#     (a structural check: nothing here asserts a time)
#  2. libvirt was told: `virsh vcpupin` equals each thread's affinity and
#     llcd's pin, and `llcctl stats` counts one pin call per vCPU
# The figure, from `virsh start` returning to the last vCPU thread on its
# one CPU (a poller reading every vCPU thread's status every ~2 ms), goes
# to $E2E_RUN_DIR/reaction.txt and the test's output, for
# docs/benchmarks.md.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/live_lib.sh"
LIVE_DAEMON=llcd
LIVE_PERIOD_MS=600000

live_begin live_react
# 128 vCPUs on 2 PUs: 64 per PU
live_overcommit 64

# poll_pinned DOMAIN N OUT: in the background, wait for DOMAIN's QEMU and
# its N vCPU threads, then write to OUT the wall-clock time at which every
# one of them is allowed on a single CPU (or "timeout" after 60 s).
poll_pinned() {
	python3 - "$1" "$2" "$3" <<'EOF' &
import glob, os, re, sys, time
name, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
end = time.time() + 90
res = "timeout"
while time.time() < end:
    try:         # read each time: a pid file left by an earlier run is not this QEMU
        pid = open('/run/libvirt/qemu/%s.pid' % name).read().strip()
    except OSError:
        time.sleep(0.002)
        continue
    single = 0
    for t in glob.glob('/proc/%s/task/*' % pid):
        try:
            if not re.match(r'CPU \d+/TCG', open(t + '/comm').read()):
                continue
            st = open(t + '/status').read()
            cpus = re.search(r'Cpus_allowed_list:\s*(\S+)', st).group(1)
            if '-' not in cpus and ',' not in cpus:
                single += 1
        except OSError:
            pass
    if single >= n:
        res = '%.6f' % time.time()
        break
    time.sleep(0.002)
open(out, 'w').write(res + '\n')
EOF
	POLL_PID=$!
}

react() {
	local d=$1 n=$2 out=$E2E_RUN_DIR/pinned-$1.txt t0 t1 ms n0 c0 c1 line r
	e2e_step "$n vCPUs: pinned from the started event"
	e2e_define_guest --memory 256 "$d" "$n" "" '<llc-policy mode="static"/>'
	# a daemon of its own: the period that starts it is its first, the
	# next one 10 minutes away
	live_start "llcd-$n"
	live_wait_log "libvirt .*: connected" 20 >/dev/null
	sleep 1                         # past its first period
	rm -f "$out"
	c0=$(live_stat pin_calls)
	n0=$(live_lines)
	poll_pinned "$d" "$n" "$out"
	sleep 0.3                       # the poller is up (python's start)
	e2e_virsh start --paused "$d" >/dev/null
	t0=$EPOCHREALTIME
	wait "$POLL_PID"
	t1=$(cat "$out")
	[ "$t1" != timeout ] || e2e_fail "$d: its $n vCPU threads were not all on one CPU within 90 s"
	# the poller saw them; the log says how (the line comes at the step
	# after the one that pinned: the next event, or the next period)
	line=$(tail -n +"$((n0 + 1))" "$LIVE_LOG" | grep -E -m1 "^domain $d: placed from its started event" || true)
	[ -n "$line" ] || line=$(tail -n +"$((n0 + 1))" "$LIVE_LOG" | grep -E -m1 "^domain $d vcpu [0-9]+ tid [0-9]+: pinned to" || true)
	[ -n "$line" ] || e2e_fail "$d: pinned, but not by llcd (no pin in its log)"
	ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) * 1000 }')
	[ "$(live_count "$d" pin-vcpu "$n0")" = "$n" ] || e2e_fail "$d: $(live_count "$d" pin-vcpu "$n0") vCPU pins, want $n"
	r=$(live_wait_pins "$d" "$n" 30) || e2e_fail "$d: $r"
	c1=$(live_stat pin_calls)
	[ $((c1 - c0)) -ge "$n" ] || e2e_fail "$d: $((c1 - c0)) pin calls for $n vCPUs (libvirt not told?)"
	echo "react $d vcpus=$n all_pinned_ms_after_virsh_start=$ms pin_calls=$((c1 - c0)) period_ms=$LIVE_PERIOD_MS" \
		>>"$E2E_RUN_DIR/reaction.txt"
	live_alive
	e2e_ok "$d: all $n vCPUs on one CPU each $ms ms after virsh start returned (period $LIVE_PERIOD_MS ms:" \
		"from the event); libvirt agrees, $((c1 - c0)) pin calls"
	live_stop
	e2e_virsh destroy "$d" >/dev/null      # paused: e2e_destroy stops running ones only
	e2e_undefine "$d"
}

react "$(e2e_name small)" 4
react "$(e2e_name big)" 128
e2e_end
