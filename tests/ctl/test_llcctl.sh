#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# test_llcctl.sh - every llcctl command against a running llcd on the
# simulated back-end (llcd-sim, the same daemon on an llcsim scenario), the access rule with a real
# non-root peer, and hostile frames. Usage: test_llcctl.sh BUILD_DIR SRC_DIR
set -euo pipefail
build=$1 src=$2
llcd=$build/agent/llcd llcd_sim=$build/sim/llcd-sim llcctl=$build/agent/llcctl
work=$(mktemp -d /tmp/llcctl-test.XXXXXX)
chmod 755 "$work"
sock=$work/llcd.sock
export LLCD_SOCKET=$sock
pid=
grp=llcdt$$             # one group per run: parallel runs must not share it
fail() { echo "FAIL: $*" >&2; [ -f "$work/llcd.log" ] && tail -20 "$work/llcd.log" >&2; exit 1; }
ok() { echo "ok   $*"; }
cleanup() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi; wait 2>/dev/null || true; groupdel "$grp" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

[ "$(id -u)" = 0 ] || fail "this test needs root (it checks the root-only rule with another uid)"
getent group "$grp" >/dev/null || groupadd "$grp"
cat > "$work/llcd.conf" <<CONF
# a test configuration
socket $sock
socket-group $grp
log-level debug
CONF
"$llcd" -n -f "$work/llcd.conf" >/dev/null || fail "llcd -n rejects the test config"

# llcd has no simulator: --simulate names llcd-sim; llcd-sim's own default
# socket is not the service's
if "$llcd" --simulate "$src/sim/scenarios/xiangshan-8ccx.json" 2>"$work/err"; then fail "llcd --simulate ran"; fi
grep -q "llcd-sim .*xiangshan-8ccx.json" "$work/err" || fail "llcd --simulate: $(cat "$work/err")"
grep -qx "socket /run/llcd-sim/llcd.sock" <<<"$("$llcd_sim" -nv "$src/sim/scenarios/xiangshan-8ccx.json")" ||
	fail "llcd-sim's default socket: $("$llcd_sim" -nv "$src/sim/scenarios/xiangshan-8ccx.json" | grep ^socket)"
ok "llcd --simulate points at llcd-sim; llcd-sim defaults to its own socket"
"$llcd_sim" -d -f "$work/llcd.conf" "$src/sim/scenarios/xiangshan-8ccx.json" >"$work/llcd.log" 2>&1 &
pid=$!
for _ in $(seq 200); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || fail "llcd did not create its socket"
[ "$(stat -c '%a %G' "$sock")" = "660 $grp" ] || fail "socket mode/group is $(stat -c '%a %G' "$sock"), want 660 $grp"
ok "socket created 0660 root:$grp"
# a second daemon on the same socket is refused and leaves the first alone
# (the lock file beside the socket)
rc=0; timeout 10 "$llcd_sim" -d -f "$work/llcd.conf" "$src/sim/scenarios/xiangshan-8ccx.json" >"$work/second.log" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "a second llcd-sim on $sock: exit $rc, want 1: $(cat "$work/second.log")"
grep -q "another instance (pid $pid) holds $sock.lock" "$work/second.log" || fail "second instance: $(cat "$work/second.log")"
[ -S "$sock" ] || fail "the second instance removed the first one's socket"
"$llcctl" version >/dev/null || fail "the first llcd-sim does not answer after the second was refused"
ok "a second instance on the same socket is refused (lock held by pid $pid); the first keeps its socket"

out=$("$llcctl" version); grep -q "backend *llcsim" <<<"$out" || fail "version: $out"; ok "version"
out=$("$llcctl" topology); grep -q "8 LLCs x 16 PUs" <<<"$out" || fail "topology: $out"
grep -q "^7 *0 *0 *8 " <<<"$out" || fail "topology table: $out"; ok "topology"
out=$("$llcctl" --json topology | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["llcs"]), d["smt"])')
[ "$out" = "8 2" ] || fail "topology --json: $out"; ok "topology --json"

# the load starts at 5 s simulated (= 5 s of llcd at 100 ms periods); wait for the group to settle
for _ in $(seq 100); do
  out=$("$llcctl" dominfo xs)
  grep -q "on preferred LLC" <<<"$out" && break; sleep 0.2
done
grep -q "verilator *guest *3,19,35,51,67,83,99,115" <<<"$out" || fail "dominfo groups: $out"
grep -q "^state *managed" <<<"$out" || fail "dominfo state: $out"; ok "dominfo (group formed from the guest report and aggregated)"
out=$("$llcctl" list); grep -q "^xs *managed *aggregate *none *128" <<<"$out" || fail "list: $out"; ok "list"
out=$("$llcctl" vcpuinfo xs); line=$(grep "^3 " <<<"$out")
grep -q "0/0/1/1" <<<"$line" || fail "vcpuinfo guest position: $line"
grep -q "verilator" <<<"$line" || fail "vcpuinfo group: $line"; ok "vcpuinfo"
# the pins are in place; the threads follow at the simulated host's next period
for _ in $(seq 50); do
  out=$("$llcctl" --json vcpuinfo xs | python3 -c '
import json,sys; v=json.load(sys.stdin)["vcpus"]
busy=[x for x in v if x["vcpu"] in (3,19,35,51,67,83,99,115)]
print(len(set(x["llc"] for x in busy)), len(v))')
  [ "$out" = "1 128" ] && break; sleep 0.2
done
[ "$out" = "1 128" ] || fail "vcpuinfo --json: busy vCPUs on $out LLCs"; ok "vcpuinfo --json: the 8 busy vCPUs share one LLC"
out=$("$llcctl" hot xs); grep -q "^verilator *1000 *3,19,35,51,67,83,99,115" <<<"$out" || fail "hot: $out"; ok "hot"
out=$("$llcctl" map | sed 's/\x1b\[[0-9;]*m//g'); [ "$(grep -c '^LLC' <<<"$out")" = 8 ] || fail "map: $out"
grep -q "A=xs" <<<"$out" || fail "map legend: $out"; ok "map"
out=$("$llcctl" stats); grep -q "^preference_switches *1" <<<"$out" || fail "stats: $out"; ok "stats"
out=$("$llcctl" metrics); grep -q "^llcd_preference_switches_total 1" <<<"$out" || fail "metrics: $out"
grep -q "^# TYPE llcd_periods_total counter" <<<"$out" || fail "metrics types: $out"; ok "metrics"
out=$("$llcctl" policy xs); grep -q 'mode="aggregate"' <<<"$out" || fail "policy: $out"; ok "policy (show)"
out=$("$llcctl" topology xs); grep -q "^recommended: sockets=1 dies=8 cores=8 threads=2" <<<"$out" || fail "topology xs: $out"
grep -q "die 3    socket 0, vCPUs 48-63 -> host LLC 3" <<<"$out" || fail "topology xs dies: $out"; ok "topology DOMAIN"
rc=0; out=$("$llcctl" check xs) || rc=$?
[ "$rc" = 4 ] || fail "check exits $rc on a disagreement, want 4"
grep -q "guest die 7 (socket 0, vCPUs 112-127) is pinned across 8 host LLCs" <<<"$out" || fail "check: $out"
grep -q "disagree" <<<"$out" || fail "check verdict: $out"; ok "check (LLC-wide pins under topology=keep disagree with 8 guest dies; exit 4)"
if "$llcctl" topology xs --dry-run 2>"$work/err"; then fail "topology --dry-run on llcsim"; fi
grep -q "has no domain XML to rewrite" "$work/err" || fail "dry-run: $(cat "$work/err")"; ok "topology --dry-run refused on the simulated back-end"

# bad values are refused with the allowed ones named
if out=$("$llcctl" policy xs --mode fast 2>&1); then fail "policy --mode fast accepted"; fi
grep -q "'fast' is not one of none, static, aggregate, spread" <<<"$out" || fail "policy error: $out"; ok "policy --mode fast refused"
if "$llcctl" dominfo nosuch 2>"$work/err"; then fail "dominfo of a missing domain succeeded"; fi
grep -q "no running domain 'nosuch'" "$work/err" || fail "missing domain: $(cat "$work/err")"; ok "unknown domain"
if "$llcctl" tune bogus 1 2>"$work/err"; then fail "tune bogus accepted"; fi
grep -q "unknown knob 'bogus'" "$work/err" || fail "tune error: $(cat "$work/err")"; ok "tune refuses unknown knobs"

# events: a policy change re-places the domain and the follower sees the pins
"$llcctl" --json events >"$work/events" 2>&1 &
evpid=$!
sleep 0.5
out=$("$llcctl" policy xs --mode static --live); grep -q 'mode="static"' <<<"$out" || fail "policy set: $out"; ok "policy set"
for _ in $(seq 30); do grep -q '"action":"pin-vcpu"' "$work/events" && break; sleep 0.2; done
kill $evpid 2>/dev/null || true
grep -q '"action":"pin-vcpu","domain":"xs"' "$work/events" || fail "events: $(head -3 "$work/events")"
ok "events (pins after the policy change)"
out=$("$llcctl" list); grep -q "^xs *managed *static" <<<"$out" || fail "list after set: $out"
# the static pins land within a period or two (longer on a loaded machine)
for _ in $(seq 50); do
  out=$("$llcctl" --json vcpuinfo xs | python3 -c 'import json,sys; print(sum(1 for x in json.load(sys.stdin)["vcpus"] if "-" not in x["pinned"] and "," not in x["pinned"]))')
  [ "$out" = 128 ] && break; sleep 0.2
done
[ "$out" = 128 ] || fail "static: $out of 128 vCPUs pinned to one PU"; ok "static placement applied"

out=$("$llcctl" tune period-ms 200); grep -q "period-ms set to 200" <<<"$out" || fail "tune: $out"
grep -q "^period_ms *200" <<<"$("$llcctl" stats)" || fail "tune did not take effect"; ok "tune"
echo "period-ms 150" >> "$work/llcd.conf"
out=$("$llcctl" reload); grep -q "reloaded" <<<"$out" || fail "reload: $out"
grep -q "^period_ms *100" <<<"$("$llcctl" stats)" || fail "reload: the scenario's period must win over the file"; ok "reload"
echo "bogus-directive 1" >> "$work/llcd.conf"
if "$llcctl" reload 2>"$work/err"; then fail "reload of a bad file succeeded"; fi
grep -q "llcd.conf:6: unknown directive 'bogus-directive'" "$work/err" || fail "reload error: $(cat "$work/err")"
ok "reload of a bad file is refused with file:line, old config kept"

# access: a member of the socket's group may read, not change
as_member() { setpriv --reuid=65534 --regid=65534 --groups="$(getent group "$grp" | cut -d: -f3)" "$@"; }
out=$(as_member "$llcctl" list) || fail "group member cannot list"
grep -q "^xs" <<<"$out" || fail "member list: $out"; ok "group member runs read-only commands"
if as_member "$llcctl" release xs 2>"$work/err"; then fail "group member released a domain"; fi
grep -q "permission denied: 'release' changes llcd's state and needs root (you are uid 65534)" "$work/err" \
  || fail "member release: $(cat "$work/err")"; ok "mutating command refused for non-root"
if setpriv --reuid=65534 --regid=65534 --clear-groups "$llcctl" list 2>"$work/err"; then fail "non-member connected"; fi
grep -q "Permission denied" "$work/err" || fail "non-member: $(cat "$work/err")"; ok "non-member cannot connect"

# hostile frames: garbage, a huge length, a stalled half frame; llcd keeps answering
python3 - "$sock" <<'PY'
import socket, struct, sys
def conn():
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(5); return s
s = conn(); s.sendall(b"\x00" * 64); h = s.recv(28); assert struct.unpack("!I", h[16:20])[0] == 1, h; s.close()
s = conn(); s.sendall(struct.pack("!IHHIIiII", 0x4c4c4344, 1, 2, 1 << 30, 9, 0, 0, 0))
h = s.recv(28); assert struct.unpack("!I", h[16:20])[0] == 7, h; s.close()
stall = conn(); stall.sendall(b"LLCD\x00")
s = conn(); s.sendall(struct.pack("!IHHIIiII", 0x4c4c4344, 1, 12, 2, 1, 0, 0, 0) + b"{}")
data = s.recv(4096); assert b"llcsim" in data, data
PY
ok "hostile frames answered with an error; llcd stays responsive"

out=$("$llcctl" wakeups xs)
grep -q "^xs: no wakeup edges: the in-kernel tracer does not watch this domain" <<<"$out" || fail "wakeups without a trace: $out"
ok "wakeups: says why there are no edges"

out=$("$llcctl" release xs); grep -q "released" <<<"$out" || fail "release: $out"
sleep 0.5
grep -q "^xs *unmanaged.*released by llcctl release" <<<"$("$llcctl" list)" || fail "list after release"
ok "release"
if "$llcctl" -c "$work/none.sock" list 2>"$work/err"; then fail "connect to a missing socket"; fi
grep -q "is llcd running?" "$work/err" || fail "missing socket: $(cat "$work/err")"; ok "clear error without llcd"
# the map's letters follow the domain names (power-like's keys are app 1,
# pair 2, bg 3: key order would give A=app B=pair C=bg)
"$llcd_sim" -d --socket "$work/pl.sock" "$src/sim/scenarios/power-like.json" >"$work/pl.log" 2>&1 &
plpid=$!
for _ in $(seq 100); do [ -S "$work/pl.sock" ] && break; sleep 0.1; done
out=$("$llcctl" -c "$work/pl.sock" map) || fail "map on power-like: $out"
kill "$plpid"; wait "$plpid" || true
grep -q "^legend: A=app B=bg C=pair " <<<"$out" || fail "map legend not in name order: $(head -1 <<<"$out")"
ok "map legend letters follow the names"

"$llcctl" events >"$work/events2" 2>&1 &
evpid=$!
sleep 0.3
kill "$pid"; wait "$pid" || true; pid=
rc=0; wait "$evpid" || rc=$?
[ "$rc" = 3 ] || fail "events exited $rc when llcd stopped, want 3"
grep -q "llcd closed the connection" "$work/events2" || fail "events: $(cat "$work/events2")"
ok "events says so and exits 3 when llcd stops"
[ ! -e "$sock" ] || fail "llcd left its socket behind"; ok "llcd stops on SIGTERM and removes its socket"
# groups from wakeups alone: the XiangShan guest without its helper
printf 'socket %s\nsocket-group %s\n' "$sock" "$grp" > "$work/llcd2.conf"
"$llcd_sim" -d -f "$work/llcd2.conf" "$src/sim/scenarios/xiangshan-wakeups.json" >"$work/llcd.log" 2>&1 &
pid=$!
for _ in $(seq 200); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || fail "llcd (xiangshan-wakeups) did not create its socket"
for _ in $(seq 300); do
  out=$("$llcctl" hot xs)
  grep -q "^wakeups-3 *vCPUs 3,19,35,51,67,83,99,115: 28 pairs" <<<"$out" && break
  sleep 0.1
done
grep -q "^wakeups-3 *wakeups *3,19,35,51,67,83,99,115 " <<<"$out" || fail "hot: no wakeups group: $out"
grep -q "^wakeups-3 *vCPUs 3,19,35,51,67,83,99,115: 28 pairs, [0-9.]* wakeups/s" <<<"$out" || fail "hot: edge rates: $out"
ok "hot shows the inferred group with its rule and edge rates"
# the scenario's host has perf counters: a judge, and the group acted on
out=$("$llcctl" topology)
grep -q "^judges:" <<<"$out" && grep -q "^  counters   yes simulated host: instruction counters" <<<"$out" &&
  grep -q "^  bandwidth  no  simulated host: no bandwidth monitoring" <<<"$out" &&
  grep -q "^  inferred groups: acted on, and judged by the benefit check" <<<"$out" || fail "topology: judges: $out"
ok "topology lists the host's judges: counters yes, bandwidth monitoring no"
out=$("$llcctl" wakeups xs)
grep -q "^xs: [0-9.]* wakeups/s between vCPUs, background [0-9.]*/s per pair" <<<"$out" || fail "wakeups: $out"
[ "$(grep -c ' grouped$' <<<"$out")" -ge 28 ] || fail "wakeups: want 28 grouped pairs: $out"
out=$("$llcctl" --json wakeups xs | python3 -c '
import json, sys
d = json.load(sys.stdin)
e = d["edges"]
g = {x for p in e if p["state"] == "grouped" for x in (p["a"], p["b"])}
assert d["available"] and d["inferring"], d
assert g == {3, 19, 35, 51, 67, 83, 99, 115}, g
assert all(p["rate_hz"] >= e[i + 1]["rate_hz"] for i, p in enumerate(e[:-1])), "not strongest first"
assert e[0]["rate_hz"] > 100 > d["background_hz"], d
print(len(e), "edges")')
ok "wakeups --json: $out, the group's 28 pairs grouped, strongest first"
if out=$("$llcctl" policy xs --infer off 2>&1); then fail "policy --infer off accepted"; fi
grep -q "'off' is not one of wakeups, none" <<<"$out" || fail "policy --infer error: $out"; ok "policy --infer off refused"
out=$("$llcctl" policy xs --infer none --live); grep -q 'infer="none"' <<<"$out" || fail "policy --infer none: $out"
for _ in $(seq 50); do
  "$llcctl" hot xs | grep -q "^wakeups-3 " || break
  sleep 0.1
done
out=$("$llcctl" hot xs); if grep -q "^wakeups-3 " <<<"$out"; then fail "infer=none kept the group: $out"; fi
out=$("$llcctl" wakeups xs); grep -q "inference off" <<<"$out" || fail "wakeups after infer=none: $out"
grep -q "mode aggregate, isolation none, topology keep, infer none" <<<"$("$llcctl" policy xs)" || fail "policy show infer"
ok "policy --infer none dissolves the inferred group; the edges are still shown"
kill "$pid"; wait "$pid" || true; pid=
echo "llcctl: all checks passed"
