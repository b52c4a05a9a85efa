#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# test_control_load.sh - a read-only member of llcd's group floods llcd-sim
# on a host of 2,000 domains of 4 vCPUs with pipelined requests: topology
# DOMAIN for 40 different domains (each a full dry placement, ~0.3 s here),
# 40 for one domain, and 40 map. Every request is answered, root is
# answered meanwhile, and no period starts later than the bound that
# docs/agent.md states (llcd's own figure: llcctl stats period_late_us_max),
# where before the dry placements ran in the loop and each delayed a
# period by up to its whole cost.
# Usage: test_control_load.sh BUILD_DIR SRC_DIR
set -euo pipefail
build=$1 src=$2
llcd_sim=$build/sim/llcd-sim llcctl=$build/agent/llcctl
work=$(mktemp -d /tmp/llcd-load.XXXXXX)
chmod 755 "$work"
sock=$work/llcd.sock
export LLCD_SOCKET=$sock
pid= flood=
grp=llcdl$$
bound_us=150000         # docs/agent.md: 20 ms of control work + the longest request, with room for this busy host
                        # (raised below to half the longest dry placement of the run on a loaded host)
fail() { echo "FAIL: $*" >&2; [ -f "$work/llcd.log" ] && tail -20 "$work/llcd.log" >&2; exit 1; }
ok() { echo "ok   $*"; }
cleanup() {             # every step runs, also when a process is gone already
	if [ -n "$flood" ]; then kill "$flood" 2>/dev/null || true; fi
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
	wait 2>/dev/null || true
	groupdel "$grp" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
stat_of() { "$llcctl" --json stats | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

[ "$(id -u)" = 0 ] || fail "this test needs root (the flood comes from another uid, a member of the socket's group)"
getent group "$grp" >/dev/null || groupadd "$grp"
python3 - "$work/big.json" <<'PY'
import json, sys
doms = []
for i in range(2000):
    d = {"name": f"d{i:04d}", "vcpus": 4, "load": [{"vcpus": "0-3", "util": 0.05}]}
    if i % 2 == 0:
        d["llc_policy"] = "<llc-policy xmlns='urn:llcd:llc-policy:1' mode='aggregate'/>"
    doms.append(d)
json.dump({"description": "2,000 domains of 4 vCPUs (test_control_load.sh)",
           "host": {"topology": "pack:2 [numa] l3:16 core:8 pu:2", "reserved_cpus": ""},
           "period_ms": 500, "duration_s": 100000, "seed": 1, "domains": doms}, open(sys.argv[1], "w"))
PY
cat > "$work/llcd.conf" <<CONF
socket $sock
socket-group $grp
overcommit 16
CONF
"$llcd_sim" -d -f "$work/llcd.conf" "$work/big.json" >"$work/llcd.log" 2>&1 &
pid=$!
for _ in $(seq 300); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || fail "llcd-sim did not create its socket"
for _ in $(seq 300); do [ "$(stat_of periods 2>/dev/null || echo 0)" -ge 4 ] && break; sleep 0.1; done
[ "$(stat_of domains)" = 2000 ] || fail "llcd-sim sees $(stat_of domains) domains, want 2000"
ok "llcd-sim runs 2,000 domains of 4 vCPUs (period 500 ms)"

# the flood, as a member (uid 65534 in the group): three connections, each
# pipelining 40 requests before reading anything
setpriv --reuid=65534 --regid=65534 --groups="$(getent group "$grp" | cut -d: -f3)" \
	/usr/bin/python3 - "$sock" >"$work/flood.out" 2>&1 <<'PY' &
import json, socket, struct, sys
HDR = "!IHHIIiII"
def frame(t, seq, obj):
    p = json.dumps(obj).encode()
    return struct.pack(HDR, 0x4c4c4344, 1, t, len(p), seq, 0, 0, 0) + p
def conn():
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(300); return s
TOPOLOGY, MAP = 1, 7
reqs = {
    "distinct": [frame(TOPOLOGY, i + 1, {"domain": f"d{2 * i + 1:04d}"}) for i in range(40)],
    "same": [frame(TOPOLOGY, i + 1, {"domain": "d0100"}) for i in range(40)],
    "map": [frame(MAP, i + 1, {}) for i in range(40)],
}
socks = {}
for name, frames in reqs.items():
    s = conn(); s.sendall(b"".join(frames)); socks[name] = s
def read_exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise SystemExit("connection closed after %d of %d bytes" % (len(b), n))
        b += c
    return b
for name, s in socks.items():
    ends, results = 0, {}
    while ends < 40:
        h = read_exact(s, 28)
        _, _, t, ln, seq, res, _, _ = struct.unpack(HDR, h)
        read_exact(s, ln)
        if t == 201:            # CTL_END
            ends += 1
            results[res] = results.get(res, 0) + 1
    print(name, "answered", ends, "results", sorted(results.items()))
PY
flood=$!
sleep 1
# root meanwhile: its own slots and first place in every round
out=$(timeout 20 "$llcctl" list) || fail "root's list during the flood failed"
[ "$(grep -c '^d[0-9]' <<<"$out")" = 2000 ] || fail "root's list during the flood: $(wc -l <<<"$out") lines"
ok "root's list (paged) answered during the flood"
wait "$flood" || fail "flood: $(cat "$work/flood.out")"
flood=
cat "$work/flood.out"
grep -q "^distinct answered 40 results \[(0, 40)\]" "$work/flood.out" || fail "distinct topology requests: $(cat "$work/flood.out")"
grep -q "^same answered 40 results \[(0, 40)\]" "$work/flood.out" || fail "same-domain topology requests: $(cat "$work/flood.out")"
grep -q "^map answered 40 results \[(0, 40)\]" "$work/flood.out" || fail "map requests: $(cat "$work/flood.out")"
ok "every pipelined request answered"
late=$(stat_of period_late_us_max)
# A period that waited for a dry placement starts at least that placement's
# cost late. The bound is the documented figure, or half the longest dry
# placement of this run where the host is so loaded that one took longer
# (the same load slows both: a ratio, not a wall-clock limit).
compute_us=$(python3 -c "print(int($(stat_of recommend_compute_s_max) * 1e6))")
bound_us=$(python3 -c "print(max($bound_us, $compute_us // 2))")
python3 -c "import sys; sys.exit(0 if $late <= $bound_us else 1)" ||
	fail "a period started $late us late during the flood, over the bound of $bound_us us (longest dry placement $compute_us us)"
ok "no period started more than $bound_us us late (max $late us, p99 $(stat_of period_late_us_p99) us; longest dry placement $compute_us us)"
computed=$(stat_of recommend_computed) cached=$(stat_of recommend_cached)
[ "$computed" -ge 41 ] && [ "$computed" -le 45 ] || fail "dry placements computed: $computed, want 41 (40 domains + d0100)"
[ "$cached" -ge 30 ] || fail "answers from the cache: $cached, want most of the 39 repeats of d0100"
ok "dry placements off the loop: $computed computed (max $(stat_of recommend_compute_s_max) s each), $cached from the cache"

# a period's work longer than the period (the policy step alone takes tens
# of ms here): llcd still answers between periods (it used to run period
# after period and never read its socket again)
"$llcctl" tune period-ms 10 >/dev/null || fail "tune period-ms 10"
sleep 1
p0=$(timeout 10 "$llcctl" --json stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["periods"])') ||
	fail "llcd does not answer while its periods overrun"
sleep 1
p1=$(timeout 10 "$llcctl" --json stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["periods"])') ||
	fail "llcd does not answer while its periods overrun"
[ "$p1" -gt "$p0" ] || fail "no period ran between two stats ($p0, $p1)"
ok "periods that overrun (period 10 ms, $(stat_of period_us_p50) us of work): llcctl answered, periods go on"
