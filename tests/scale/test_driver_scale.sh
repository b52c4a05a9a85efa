#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# test_driver_scale.sh - llcd on libvirt's test driver (test:///HOST.xml:
# N running domains of 16 vCPUs, each annotated, no QEMU, no threads),
# through the same hooks as on a real host: discovery, annotation, pins
# (virDomainPinVcpuFlags), list (paged), map, stats. Checks that every vCPU
# is pinned through libvirt with no error, that llcd found no vCPU thread
# (it reads no /proc for these domains: no QEMU pid), that list and map
# answer at that size, and that llcd's resident memory stays flat over
# PERIODS periods of 10 ms.
# Usage: test_driver_scale.sh BUILD_DIR N PERIODS [--bench]
#   ctest runs it with N=200 (ctest llcd_test_driver_scale); --bench (from
#   bench/test-driver-scale) also prints what list, map and a period cost.
set -euo pipefail
build=$1 n=$2 periods=$3 bench=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
llcd=$build/agent/llcd llcctl=$build/agent/llcctl
work=$(mktemp -d /tmp/llcd-scale.XXXXXX)
sock=$work/llcd.sock
export LLCD_SOCKET=$sock
pid=
fail() { echo "FAIL: $*" >&2; [ -f "$work/llcd.log" ] && tail -20 "$work/llcd.log" >&2; exit 1; }
ok() { echo "ok   $*"; }
cleanup() {             # every step runs, also when llcd is gone already
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
stat_of() { timeout 120 "$llcctl" --json stats | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$pid/status"; }
wait_periods() {        # until llcd has run $1 periods
	for _ in $(seq 6000); do [ "$(stat_of periods)" -ge "$1" ] && return 0; sleep 0.2; done
	fail "llcd did not reach $1 periods"
}

[ "$(id -u)" = 0 ] || fail "this test needs root (llcd's default sampler and socket directory)"
python3 "$here/test_driver_host.py" "$n" 16 "$work/host.xml"
cat > "$work/llcd.conf" <<CONF
socket $sock
socket-group none
overcommit 64
log-level warning
state-dir $work
CONF
# 512 PUs: the test driver pins nothing in the kernel, so the topology need
# not be this machine's (llcd.c's seam for test:// URIs)
"$llcd" -d -f "$work/llcd.conf" --uri "test://$work/host.xml" --topology 'pack:2 [numa] l3:16 core:8 pu:2' \
	--period-ms 10 >"$work/llcd.log" 2>&1 &
pid=$!
for _ in $(seq 600); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || fail "llcd did not create its socket"
want=$((n * 16))
for _ in $(seq 1200); do [ "$(stat_of pins)" -ge "$want" ] && break; sleep 0.2; done
[ "$(stat_of domains)" = "$n" ] || fail "llcd sees $(stat_of domains) domains, want $n"
[ "$(stat_of domains_managed)" = "$n" ] || fail "llcd manages $(stat_of domains_managed) of $n domains"
[ "$(stat_of pins)" -ge "$want" ] || fail "$(stat_of pins) vCPU pins, want $want"
[ "$(stat_of errors_permanent)" = 0 ] && [ "$(stat_of errors_transient)" = 0 ] ||
	fail "pin errors: $(stat_of errors_permanent) permanent, $(stat_of errors_transient) transient: $(grep -m3 failed "$work/llcd.log")"
ok "$n domains of 16 vCPUs managed, $want vCPUs pinned through virDomainPinVcpuFlags, no error"

t0=$(date +%s.%N)
out=$(timeout 300 "$llcctl" list) || fail "list failed"
t_list=$(python3 -c "import time; print(round(time.time() - $t0, 3))")
[ "$(grep -c '^s[0-9]* *managed' <<<"$out")" = "$n" ] || fail "list: $(grep -c '^s' <<<"$out") domains, want $n managed"
ok "list (paged) shows all $n domains managed"
t0=$(date +%s.%N)
"$llcctl" --json map >"$work/map.json" || fail "map failed"
t_map=$(python3 -c "import time; print(round(time.time() - $t0, 3))")
[ "$(python3 -c "import json; print(len(json.load(open('$work/map.json'))['llcs']))")" = 32 ] || fail "map: not 32 LLCs"
ok "map answers ($(stat -c %s "$work/map.json") bytes)"
# no thread of these domains was found, so no /proc file of theirs is read
tids=$("$llcctl" --json vcpuinfo s0000 | python3 -c 'import json,sys; v=json.load(sys.stdin)["vcpus"]; print(len(v), sum(1 for x in v if x.get("tid", 0)), sum(1 for x in v if x.get("pinned") not in (None, "", "-")))')
[ "$tids" = "16 0 16" ] || fail "vcpuinfo s0000 (vCPUs, with a thread, pinned): $tids, want 16 0 16"
ok "no vCPU thread found for test-driver domains (no /proc read); all 16 vCPUs of s0000 pinned"

# memory: flat from a settled start over $periods periods
p0=$(stat_of periods)
wait_periods $((p0 + 500))
r0=$(rss_kb) p1=$(stat_of periods)
wait_periods $((p1 + periods))
r1=$(rss_kb) p2=$(stat_of periods)
growth=$((r1 - r0))
echo "rss ${r0} kB after $p1 periods, ${r1} kB after $p2 periods (growth ${growth} kB)"
# flat: under 1 MiB and 1% more over the run
[ "$growth" -le $((1024 + r0 / 100)) ] || fail "resident memory grew by $growth kB over $((p2 - p1)) periods"
ok "resident memory flat over $((p2 - p1)) periods (${r0} -> ${r1} kB)"
if [ -n "$bench" ]; then
	echo "bench domains=$n vcpus=$want list_s=$t_list map_s=$t_map map_bytes=$(stat -c %s "$work/map.json")" \
	     "period_us_p50=$(stat_of period_us_p50) period_us_p99=$(stat_of period_us_p99)" \
	     "period_cpu_us_p50=$(stat_of period_cpu_us_p50) period_cpu_us_p99=$(stat_of period_cpu_us_p99)" \
	     "policy_step_us_p50=$(stat_of policy_step_us_p50) rss_kb=$r1 periods=$((p2 - p1))"
fi
