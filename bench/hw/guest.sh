#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/hw/guest.sh - guest mode of llcd-bench (run by `llcd-bench guest`,
# which sets the BENCH_* variables below). Reuses the e2e harness
# (tests/e2e/lib.sh: packages, libvirtd, the cached Debian kernel and busybox
# initramfs, the host-wide e2e lock, cleanup) and live_lib.sh (llcd -d with
# its own config and socket).
#
# 1. A guest with BENCH_VCPUS vCPUs and llcbench in its initramfs, which runs
#    `llcbench run --mode share` over and over (LLCBENCH lines on the console).
#    KVM where /dev/kvm works (BENCH_ACCEL=auto|kvm|tcg), TCG otherwise.
#    Its CPU topology is the one `llcctl topology DOMAIN` recommends (asked of
#    llcd on the guest as first defined, then the guest is defined again).
# 2. Phases, BENCH_REPEATS runs of BENCH_SECONDS each (the run in progress at
#    a phase change is dropped):
#      none              no llcd
#      llcd-annotation   llcd running, the domain annotated mode='aggregate'
#                        (llcctl map before the annotation and once llcd's
#                        pins are in place)
#      llcd-inference    llcd with neither groups nor the guest helper: the
#                        wakeup inference (bench_phase_inference below, the
#                        hook; "not available" while llcd has none)
# 3. BENCH_OUT/guest.json with every run, the maps and the settings.
#
# llcd sees the live host's topology (hwloc), or BENCH_TOPOLOGY (hwloc XML).

. "${LLCD_SOURCE_DIR:?}/tests/e2e/lib.sh"
. "$LLCD_SOURCE_DIR/tests/e2e/live_lib.sh"

: "${BENCH_OUT:?}" "${BENCH_LLCBENCH:?}"
BENCH_SECONDS=${BENCH_SECONDS:-3}
BENCH_REPEATS=${BENCH_REPEATS:-5}
BENCH_VCPUS=${BENCH_VCPUS:-2}
BENCH_ACCEL=${BENCH_ACCEL:-auto}
BENCH_WS_KB=${BENCH_WS_KB:-256}
BENCH_EXCHANGE=${BENCH_EXCHANGE:-16}
BENCH_MEM=${BENCH_MEM:-256}
BENCH_T0=$(date -u +%Y-%m-%dT%H:%M:%SZ)
# whole seconds for the harness's timeouts
BENCH_SECS_INT=$(awk -v s="$BENCH_SECONDS" 'BEGIN { printf "%d", s + 0.999 }')
[ "$BENCH_VCPUS" -ge 2 ] 2>/dev/null || { echo "guest.sh: BENCH_VCPUS=$BENCH_VCPUS: want at least 2" >&2; exit 2; }

e2e_begin benchkit
e2e_install
e2e_start_libvirt
e2e_kernel

e2e_step "initramfs with llcbench (a run loop of the share workload)"
file "$BENCH_LLCBENCH" | grep -q 'statically linked' ||
	e2e_fail "$BENCH_LLCBENCH is not static (guest mode needs the normal build, not the sanitizer one)"
e2e_initramfs --file "$BENCH_LLCBENCH:/bin/llcbench" --run "i=0
while :; do
	llcbench run --mode share --threads $BENCH_VCPUS --cpus none --seconds $BENCH_SECONDS \
		--ws-kb $BENCH_WS_KB --exchange $BENCH_EXCHANGE --format line --tag r\$i || exit 1
	i=\$((i + 1))
done"

live_setup
LIVE_HOSTXML=$E2E_RUN_DIR/host.xml # what llcd is given (live_setup wrote a synthetic 2-LLC one)
if [ -n "${BENCH_TOPOLOGY:-}" ]; then
	cp "$BENCH_TOPOLOGY" "$LIVE_HOSTXML"
	LLCD_TOPO="$BENCH_TOPOLOGY (hwloc XML)"
else
	rm -f "$LIVE_HOSTXML"
	lstopo-no-graphics --of xml "$LIVE_HOSTXML" 2>/dev/null || e2e_fail "lstopo-no-graphics --of xml failed"
	LLCD_TOPO="the live host (hwloc)"
fi
ctl() { "$LIVE_LLCCTL" -c "$LIVE_SOCK" "$@"; }

case $BENCH_ACCEL in
auto)
	if reason=$("$BENCH_LLCBENCH" kvm); then ACCEL=KVM; else ACCEL=TCG; fi ;;
kvm)
	reason=$("$BENCH_LLCBENCH" kvm) || e2e_fail "--accel kvm: $reason"
	ACCEL=KVM ;;
tcg) ACCEL=TCG reason="--accel tcg" ;;
*) e2e_fail "BENCH_ACCEL=$BENCH_ACCEL: want auto, kvm or tcg" ;;
esac
[ "$ACCEL" = KVM ] && reason="/dev/kvm: $reason"
[ "$ACCEL" = TCG ] && [ "$BENCH_ACCEL" = auto ] && reason="/dev/kvm: $reason"
e2e_log "accelerator: $ACCEL ($reason)"

dom=$(e2e_name g)

# define DOMAIN with TOPOLOGY ("" or sockets=..,dies=..,...), then make it a
# KVM domain when ACCEL=KVM (the harness defines TCG domains). The CPU model
# stays the harness's named one: host-passthrough under nested KVM stopped
# the guest here with "KVM internal error ... emulation failure".
bench_define() {
	local xml=$E2E_RUN_DIR/$dom.xml out
	e2e_define_guest --memory "$BENCH_MEM" "$dom" "$BENCH_VCPUS" "$1"
	if [ "$ACCEL" = KVM ]; then
		sed -i -e "s|<domain type='qemu'|<domain type='kvm'|" "$xml"
		out=$(e2e_virsh undefine "$dom" 2>&1) || e2e_fail "virsh undefine $dom: $out"
		out=$(e2e_virsh define --validate "$xml" 2>&1) || e2e_fail "virsh define (KVM) $xml: $out"
	fi
}

e2e_step "the topology llcctl topology recommends"
bench_define ""
e2e_start "$dom"
live_start llcd-topology
for _ in $(seq 100); do ctl list 2>/dev/null | grep -q "$dom" && break; live_alive; sleep 0.2; done
rec_out=$(ctl topology "$dom") || e2e_fail "llcctl topology $dom: $rec_out"
echo "$rec_out" >"$E2E_RUN_DIR/topology.txt"
rec=$(sed -n 's/^recommended: \(sockets=[0-9]* dies=[0-9]* cores=[0-9]* threads=[0-9]*\).*/\1/p' <<<"$rec_out")
[ -n "$rec" ] || e2e_fail "no recommendation in: $rec_out"
e2e_log "recommended: $rec"
live_stop
e2e_undefine "$dom"
bench_define "$(tr ' ' ',' <<<"$rec")"

# LLCBENCH lines on the console so far
bench_count() { grep -c '^LLCBENCH ' "$(e2e_console "$dom")" 2>/dev/null || true; }

# bench_collect PHASE: drop the run in progress, keep the next BENCH_REPEATS
bench_collect() {
	local phase=$1 c0 want i=0 limit
	c0=$(bench_count)
	want=$((c0 + 1 + BENCH_REPEATS))
	limit=$(awk -v s="$BENCH_SECONDS" -v n="$BENCH_REPEATS" 'BEGIN { printf "%d", (n + 2) * (s * 3 + 20) }')
	e2e_log "phase $phase: runs $((c0 + 2))..$want (up to ${limit} s)"
	while [ "$(bench_count)" -lt "$want" ]; do
		[ "$(e2e_virsh domstate "$dom" 2>/dev/null)" = running ] ||
			e2e_fail "phase $phase: $dom is $(e2e_virsh domstate "$dom" 2>&1)"
		e2e_console_has "$dom" '^E2E: run exited' && e2e_fail "the workload stopped in the guest: $(grep -m3 -i 'llcbench\|run exited' "$(e2e_console "$dom")")"
		i=$((i + 1))
		[ $i -le $((limit * 5)) ] || e2e_fail "phase $phase: only $(bench_count) of $want runs within $limit s"
		sleep 0.2
	done
	grep '^LLCBENCH ' "$(e2e_console "$dom")" | tr -d '\r' | sed -n "$((c0 + 2)),${want}p" >"$E2E_RUN_DIR/phase-$phase.txt"
	grep -q ' ok=0' "$E2E_RUN_DIR/phase-$phase.txt" && e2e_fail "phase $phase: a run failed its data check"
	e2e_ok "phase $phase: $(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^steps_per_s=/) printf "%s ", substr($i, 13) }' "$E2E_RUN_DIR/phase-$phase.txt")steps/s"
}

# bench_boot TIMEOUT: start the guest, wait for its first run; status 1 if
# it does not get there (a KVM guest that QEMU pauses on an internal error)
bench_boot() {
	local i=0
	e2e_start "$dom"
	until e2e_console_has "$dom" '^LLCBENCH '; do
		case $(e2e_virsh domstate "$dom" 2>/dev/null) in
		running) ;;
		*) e2e_log "$dom is $(e2e_virsh domstate "$dom" 2>&1) before its first run"; return 1 ;;
		esac
		i=$((i + 1))
		[ $i -le $(($1 * 5)) ] || { e2e_log "$dom: no LLCBENCH line within $1 s"; return 1; }
		sleep 0.2
	done
}
e2e_step "boot the guest ($ACCEL, $rec) and run the workload"
if ! bench_boot $((BENCH_SECS_INT * 5 + 60)); then
	[ "$ACCEL" = KVM ] || e2e_fail "the TCG guest did not run the workload"
	why=$(grep -m1 -i 'error' "/var/log/libvirt/qemu/$dom.log" 2>/dev/null || echo "no run within the time")
	e2e_virsh destroy "$dom" >/dev/null 2>&1 || true # paused: e2e_destroy leaves it
	e2e_undefine "$dom"
	ACCEL=TCG
	reason="/dev/kvm works, but the KVM guest failed ($why): TCG"
	e2e_log "falling back to TCG: $reason"
	bench_define "$(tr ' ' ',' <<<"$rec")"
	bench_boot $((BENCH_SECS_INT * 20 + 180)) || e2e_fail "the TCG guest did not run the workload either"
fi

e2e_step "phase none: no llcd"
bench_collect none

e2e_step "phase llcd-annotation: llcd, the domain annotated mode='aggregate'"
live_start llcd
for _ in $(seq 100); do ctl list 2>/dev/null | grep -q "$dom" && break; live_alive; sleep 0.2; done
sleep 2 # a period or two of llcd's samples before the map
ctl map >"$E2E_RUN_DIR/map-before.txt" 2>&1 || e2e_fail "llcctl map: $(cat "$E2E_RUN_DIR/map-before.txt")"
e2e_set_policy "$dom" '<llc-policy mode="aggregate"/>' --live
pins=$(live_wait_pins "$dom" "$BENCH_VCPUS" 60)
e2e_log "llcd's pins: $pins"
sleep 2
ctl map >"$E2E_RUN_DIR/map-after.txt" 2>&1 || e2e_fail "llcctl map: $(cat "$E2E_RUN_DIR/map-after.txt")"
grep -q "^state *managed" <<<"$(ctl dominfo "$dom")" || e2e_fail "$dom is not managed: $(ctl dominfo "$dom")"
bench_collect llcd-annotation

# The third phase: llcd with neither groups nor the guest helper, placing
# from the wakeup edges its in-kernel tracer sees (annotation infer, default
# wakeups). It runs only when it can mean something, otherwise the report
# says why it is not available:
#  - llcctl wakeups must say the tracer is available (--json "available");
#  - the guest must not fit one of llcd's LLCs: a domain that fits is one
#    group by rule `domain` and llcd never infers (docs/design.md, Groups),
#    so the annotation phase already was this phase.
# Then: llcd stopped, the pins released (virsh vcpupin/emulatorpin to all
# CPUs), the annotation mode="aggregate" infer="wakeups" (no <group>, no
# channel), llcd started again, up to 60 s for a group of rule wakeups
# (llcctl hot), and the runs.
INFER_REASON=
bench_phase_inference() {
	local j av fits all v i=0
	j=$(ctl --json wakeups "$dom" 2>&1) || {
		INFER_REASON="llcctl wakeups failed: $(head -c 200 <<<"$j" | tr '\n' ' ')"
		return 0
	}
	echo "$j" >"$E2E_RUN_DIR/wakeups.json"
	av=$(python3 -c 'import json, sys; d = json.load(sys.stdin); print("yes" if d.get("available") else "no: " + d.get("why", "available=false"))' <<<"$j" 2>/dev/null || echo "no: unreadable llcctl wakeups --json")
	[ "$av" = yes ] || INFER_REASON="llcctl wakeups: ${av#no: }"
	fits=$(ctl --json topology 2>/dev/null | python3 -c '
import json, sys
def count(lst):  # "0-15,32-47" -> 32
    n = 0
    for part in str(lst).split(","):
        a, _, b = part.partition("-")
        n += int(b or a) - int(a) + 1
    return n
sizes = [count(l["cpus"]) for l in json.load(sys.stdin)["llcs"]]
print(min(sizes))' 2>/dev/null || echo 0)
	e2e_log "inference: tracer ${av%%:*}, smallest LLC of llcd's topology: $fits CPUs, guest: $BENCH_VCPUS vCPUs"
	if [ "$fits" -le 0 ]; then
		INFER_REASON="${INFER_REASON:+$INFER_REASON; }llcctl --json topology gave no LLC sizes"
	elif [ "$BENCH_VCPUS" -le "$fits" ]; then
		INFER_REASON="${INFER_REASON:+$INFER_REASON; }the guest's $BENCH_VCPUS vCPUs fit one of llcd's LLCs ($fits CPUs), so llcd groups the whole domain (rule domain) and never infers (use more --vcpus than an LLC has)"
	fi
	[ -z "$INFER_REASON" ] || return 0
	live_stop
	all=$(cat /sys/devices/system/cpu/online)
	for ((v = 0; v < BENCH_VCPUS; v++)); do e2e_virsh vcpupin "$dom" "$v" "$all" --live >/dev/null; done
	e2e_virsh emulatorpin "$dom" "$all" --live >/dev/null
	e2e_set_policy "$dom" '<llc-policy mode="aggregate" infer="wakeups"/>' --live
	live_start llcd-infer
	until ctl hot "$dom" 2>/dev/null | grep -qE ' wakeups '; do
		i=$((i + 1))
		if [ $i -gt 300 ]; then
			INFER_REASON="llcd inferred no group from the guest's wakeups within 60 s ($(ctl wakeups "$dom" 2>&1 | head -1))"
			return 0
		fi
		live_alive
		sleep 0.2
	done
	ctl map >"$E2E_RUN_DIR/map-infer.txt" 2>&1 || true
	bench_collect llcd-inference
}
e2e_step "phase llcd-inference: llcd with neither groups nor helper"
bench_phase_inference
[ -n "$INFER_REASON" ] && e2e_log "phase llcd-inference: not available: $INFER_REASON"
live_stop

e2e_step "guest.json"
export INFER_REASON ACCEL reason rec pins LLCD_TOPO BENCH_T0 BENCH_MEM E2E_RUN_DIR \
	BENCH_SECONDS BENCH_REPEATS BENCH_VCPUS BENCH_WS_KB BENCH_EXCHANGE
python3 - "$BENCH_OUT/guest.json" <<'PY' || e2e_fail "cannot write $BENCH_OUT/guest.json"
import json, os, sys
e = os.environ
run_dir = e["E2E_RUN_DIR"]
def runs(phase):
    out = []
    for line in open(os.path.join(run_dir, f"phase-{phase}.txt")):
        kv = dict(x.split("=", 1) for x in line.split()[1:])
        out.append({"tag": kv["tag"], "mode": kv["mode"], "threads": int(kv["threads"]),
                    "seconds": float(kv["seconds"]), "steps": int(kv["steps"]),
                    "steps_per_s": float(kv["steps_per_s"]), "ok": kv["ok"] == "1"})
    return out
def text(name):
    with open(os.path.join(run_dir, name)) as f:
        return f.read()
phases = [{"name": "none", "runs": runs("none")},
          {"name": "llcd-annotation", "annotation": '<llc-policy mode="aggregate"/>', "runs": runs("llcd-annotation")}]
if e.get("INFER_REASON"):
    phases.append({"name": "llcd-inference", "available": False, "reason": e["INFER_REASON"], "runs": []})
else:
    phases.append({"name": "llcd-inference", "runs": runs("llcd-inference")})
g = {"kit": "llcd-bench", "format": 1, "date": e["BENCH_T0"],
     "command": e.get("BENCH_COMMAND", "llcd-bench guest"),
     "accel": e["ACCEL"], "accel_reason": e["reason"], "vcpus": int(e["BENCH_VCPUS"]),
     "threads": int(e["BENCH_VCPUS"]), "memory_mib": int(e["BENCH_MEM"]), "topology": e["rec"],
     "llcd_topology": e["LLCD_TOPO"], "recommendation": text("topology.txt"),
     "seconds": float(e["BENCH_SECONDS"]), "repeats": int(e["BENCH_REPEATS"]),
     "ws_kb": int(e["BENCH_WS_KB"]), "exchange": int(e["BENCH_EXCHANGE"]), "pins": e["pins"],
     "phases": phases, "map": {"before": text("map-before.txt"), "after": text("map-after.txt")}}
if os.path.exists(os.path.join(run_dir, "map-infer.txt")):
    g["map"]["inference"] = text("map-infer.txt")
with open(sys.argv[1], "w") as f:
    json.dump(g, f, indent=1)
PY
e2e_ok "$BENCH_OUT/guest.json"
e2e_end
