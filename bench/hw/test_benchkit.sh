#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The hardware benchmark kit works here (tests/benchkit.cmake). Never a
# speed-up: this machine has one L3, and the figures are whatever it gives.
#
#   test_benchkit.sh host   host mode + report on the live host; the same on
#                           a synthetic 2-LLC topology (the latency matrix
#                           must report the mismatch); bad input refused
#   test_benchkit.sh all    host mode and guest mode (a real libvirt guest,
#                           tests/e2e harness) with short repeats, then the
#                           report; under 5 minutes here
# Both check the report's shape and that every number in it came from a run
# (bench/hw/check_report.py against results.json).
set -euo pipefail
what=${1:?host or all}
src=${LLCD_SOURCE_DIR:?}
build=${LLCD_BUILD_DIR:?}
kit=$src/bench/hw/llcd-bench
check=$src/bench/hw/check_report.py
out=$build/benchkit/$what
rm -rf "$out"
mkdir -p "$out"
t0=$SECONDS
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "[$((SECONDS - t0))s] == $*"; }

step "packages (scripts/install-deps)"
if [ "$(id -u)" = 0 ]; then
	sh "$src/scripts/install-deps"
fi
for c in gnuplot python3 lstopo-no-graphics; do
	command -v "$c" >/dev/null || fail "$c missing (scripts/deps/bench.txt; run scripts/install-deps as root)"
done
short=(--build "$build" --repeats 2 --seconds 0.3 --pingpong-budget 0.5 --buffer-mb 128)

if [ "$what" = host ]; then
	step "host mode on the live host"
	"$kit" host --out "$out/live" "${short[@]}" >"$out/live.txt"
	cat "$out/live.txt"
	"$kit" report --out "$out/live"
	python3 "$check" "$out/live"
	python3 - "$out/live/results.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
lat = r["latency"]
assert r["guest_skipped"], "report of a host-only run must say guest mode was not run"
assert lat["hwloc_domains"] == [sorted(c[0] for l in r["host"]["llcs"] for c in l["cores"])] or len(r["host"]["llcs"]) > 1
print("live host:", len(r["host"]["llcs"]), "LLC(s); latency domains", lat["measured_domains"], "match" if lat["match"] else "MISMATCH")
PY
	grep -q '^Not run: llcd-bench guest was not run.$' "$out/live/report.md" || fail "report does not say guest mode was not run"
	# --json: the raw figures on stdout, the same as results.json
	"$kit" report --out "$out/live" --json >"$out/live.json"
	python3 - "$out/live.json" "$out/live/results.json" <<'PY' || fail "report --json differs from results.json"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert a == b and a["host_mode"]["runs"], "not the same raw figures"
PY

	step "host mode on a synthetic 2-LLC topology of this host's CPUs: the mismatch is reported"
	lstopo-no-graphics --input "pack:1 l3:2 core:1 pu:1" --of xml "$out/2llc.xml" 2>/dev/null
	"$kit" host --out "$out/2llc" --topology "$out/2llc.xml" "${short[@]}" --workloads share >/dev/null
	"$kit" report --out "$out/2llc" >/dev/null
	python3 "$check" "$out/2llc"
	grep -q 'Placements: one-llc = 0,0; spread = 0,1; kernel = none' "$out/2llc/report.md" ||
		fail "placements on 2 one-CPU LLCs: $(grep Placements "$out/2llc/report.md")"
	grep -q "hwloc's LLC domains: {0} {1}\." "$out/2llc/report.md" || fail "hwloc domains not {0} {1}"
	# one L3 under the synthetic map: the measured matrix cannot show two domains
	grep -q 'Result: \*\*MISMATCH\*\*' "$out/2llc/report.md" || fail "no MISMATCH for a 2-LLC map on a 1-L3 host: $(grep -A2 Measured "$out/2llc/report.md")"

	step "bad input is refused with a clear error"
	expect_err() { # WANT CMD...
		local want=$1 err rc=0
		shift
		err=$("$@" 2>&1 >/dev/null) || rc=$?
		[ "$rc" = 2 ] || fail "$* exited $rc, want 2 ($err)"
		grep -qF -- "$want" <<<"$err" || fail "$*: error '$err', want '$want'"
		echo "   refused: $* -> $err"
	}
	lb=$build/bench/hw/llcbench
	expect_err "--mode 'foo': want share, triad or private" "$lb" run --mode foo
	expect_err "--cpus gives 1 CPUs for 2 threads: one CPU per thread, or none" "$lb" run --threads 2 --cpus 0
	expect_err "--cpus '0,x': want a CPU list such as 0,2-3, or none" "$lb" run --cpus 0,x
	expect_err "--seconds: '0' is not a number in [0.01, 3600]" "$lb" run --seconds 0
	expect_err "pingpong: --cpus LIST with at least 2 CPUs is required" "$lb" pingpong --cpus 0
	expect_err "--workloads: 'foo' is not one of share,triad,private" "$kit" host --workloads foo
	lstopo-no-graphics --input "pack:1 l3:2 core:2 pu:1" --of xml "$out/4cpu.xml" 2>/dev/null
	expect_err "has CPUs 2,3 that this process may not run on" "$kit" host --out "$out/bad" --topology "$out/4cpu.xml"
	expect_err "$out/none/host.json missing: run llcd-bench host --out $out/none first" "$kit" report --out "$out/none"
	"$build/bench/hw/llcbench" run --threads 2 --cpus 99,98 --seconds 0.1 2>"$out/err" && fail "pinning to CPU 99 worked"
	grep -q "cannot pin a thread to CPU 9[89]: sched_setaffinity: Invalid argument" "$out/err" || fail "pin error: $(cat "$out/err")"
	step "PASS in $((SECONDS - t0)) s"
	exit 0
fi

[ "$what" = all ] || fail "unknown argument $what (host or all)"
step "host mode, short"
"$kit" host --out "$out" "${short[@]}"
step "guest mode, short (libvirt guest; tests/e2e harness)"
"$kit" guest --out "$out" --build "$build" --guest-repeats 3 --guest-seconds 2
step "report"
"$kit" report --out "$out"
python3 "$check" "$out" --guest
step "PASS in $((SECONDS - t0)) s"
