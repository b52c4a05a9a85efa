#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# test_rules_sim.sh - policy-rule on llcd-sim: scenario domains have names
# and no metadata, so name= rules place the unannotated ones (web, bg1 of
# client-server), the annotated one (bg2) keeps its annotation, a flavor=
# rule matches nothing, and a reload that drops the rules leaves them to
# the default scheduler. Usage: test_rules_sim.sh BUILD_DIR SRC_DIR
set -euo pipefail
build=$1 src=$2
sim=$build/sim/llcd-sim llcctl=$build/agent/llcctl
work=$(mktemp -d /tmp/llcd-rules-sim.XXXXXX)
pid=
cleanup() { [ -z "$pid" ] || kill "$pid" 2>/dev/null || true; [ -z "$pid" ] || wait "$pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ ! -f "$work/log" ] || tail -20 "$work/log" >&2; exit 1; }
ok() { echo "ok   $*"; }

cat > "$work/llcd.conf" <<EOF
socket-group none
policy-rule flavor=* mode=static
policy-rule name=w* mode=aggregate
policy-rule name=bg* mode=spread
EOF
"$sim" -d -f "$work/llcd.conf" --socket "$work/s.sock" "$src/sim/scenarios/client-server.json" > "$work/log" 2>&1 &
pid=$!
for _ in $(seq 100); do [ -S "$work/s.sock" ] && break; sleep 0.1; done
ctl() { "$llcctl" -c "$work/s.sock" "$@"; }
field() { ctl --json dominfo "$1" | python3 -c "import json,sys; d=json.load(sys.stdin); v=d$2; print(v if v is not None else '')"; }
wait_field() {
	local got=
	for _ in $(seq 50); do got=$(field "$1" "$2" 2>/dev/null || true); [ "$got" = "$3" ] && return 0; sleep 0.1; done
	fail "$1: $2 is '$got', want '$3'"
}
wait_field web '["policy_rule"]["match"]' 'name=w*'
wait_field web '["mode"]' aggregate
wait_field bg1 '["policy_rule"]["number"]' 3
wait_field bg1 '["mode"]' spread
[ "$(field bg2 '["policy_source"]')" = annotation ] || fail "bg2: $(ctl dominfo bg2)"
[ "$(field bg2 '.get("policy_rule")')" = "" ] || fail "bg2 has a policy_rule"
ok "llcd-sim: web by rule 2, bg1 by rule 3 (the flavor rule matches no scenario domain), bg2 keeps its annotation"

printf 'socket-group none\npolicy-rule none\n' > "$work/llcd.conf"
ctl reload > "$work/out" || fail "reload: $(cat "$work/out")"
wait_field web '["policy_source"]' none
wait_field web '["mode"]' none
[ "$(field bg2 '["policy_source"]')" = annotation ] || fail "bg2 after the reload"
ok "a reload without rules: web is left to the default scheduler, bg2 keeps its annotation"
echo "rules_sim: all checks passed"
