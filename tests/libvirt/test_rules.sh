#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# test_rules.sh - llcd.conf's policy-rule on libvirt domains, through the
# real llcd and llcctl and the real libvirt client: the domains live in
# libvirt's test driver (test:///FILE, running domains without QEMU), so
# llcd lists them, reads their annotation and metadata (virDomainGetMetadata,
# virDomainGetXMLDesc) and writes annotations exactly as it does with
# qemu:///system. The test driver cannot pin (virDomainPinVcpuFlags with
# VIR_DOMAIN_AFFECT_LIVE is unsupported), so the placement itself is
# checked in the plan of `llcd --oneshot --dry-run`.
#
# Domains, from tests/fixtures/domains/ (the form Nova and KubeVirt write):
#   instance-0000000e   nova:instance 1.1, flavor m1.llc.large, project hpc
#   instance-0000000f   the same flavor, and an llc-policy annotation
#                       (mode static) that must win over the matching rule
#   default_vmi-fedora  a KubeVirt VMI (NAMESPACE_NAME, kubevirt.io metadata)
#   web-1               Nova 1.1, flavor m1.large: no rule matches
# Checks: dominfo's policy_source / policy_rule / mode (text and --json),
# llcd -nv lists the rules, an annotation wins, a reload that changes the
# rules re-matches, llcctl policy (an annotation) overrides a rule, a bad
# rule is refused at reload with file:line and the old rules stay.
# Usage: test_rules.sh BUILD_DIR SRC_DIR
set -euo pipefail
build=$1 src=$2
llcd=$build/agent/llcd llcctl=$build/agent/llcctl fx=$src/tests/fixtures/domains
work=$(mktemp -d /tmp/llcd-rules.XXXXXX)
pid=
cleanup() { [ -z "$pid" ] || kill "$pid" 2>/dev/null || true; [ -z "$pid" ] || wait "$pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ ! -f "$work/log" ] || sed 's/^/  llcd: /' "$work/log" >&2; exit 1; }
ok() { echo "ok   $*"; }
command -v python3 >/dev/null || fail "no python3: run scripts/install-deps"

# the test driver's node: a 2-CPU host, the fixture domains as type 'test'
{
	echo "<node><cpu><nodes>1</nodes><sockets>1</sockets><cores>2</cores><threads>1</threads>"
	echo "<active>2</active><mhz>2000</mhz><model>x86_64</model></cpu><memory>16777216</memory>"
	for f in nova-instance nova-annotated kubevirt-vmi other-metadata; do
		sed "s/<domain type='kvm'[^>]*>/<domain type='test'>/" "$fx/$f.xml"
	done
	echo "</node>"
} > "$work/node.xml"
uri="test://$work/node.xml"

cat > "$work/llcd.conf" <<EOF
state-dir $work/state
socket-group none
overcommit 8
overcommit-isolated 2
shared-pool 0
policy-rule flavor=m1.llc.* mode=aggregate isolation=core
policy-rule name=default_* meta={http://kubevirt.io}uid mode=spread
EOF
mkdir -p "$work/state"
topo="pack:1 l3:2 core:1 pu:1"
args=(-f "$work/llcd.conf" --uri "$uri" --topology "$topo" --socket "$work/s.sock")

# -nv: the rules, one line each, with file:line
"$llcd" -nv "${args[@]}" > "$work/nv" || fail "llcd -nv: $(cat "$work/nv")"
grep -qxF "policy-rule flavor=m1.llc.* <llc:llc-policy xmlns:llc=\"urn:llcd:llc-policy:1\" mode=\"aggregate\" isolation=\"core\"/>    # rule 1, $work/llcd.conf:6" "$work/nv" ||
	fail "-nv does not list rule 1: $(grep policy-rule "$work/nv")"
grep -qF "policy-rule name=default_* meta={http://kubevirt.io}uid <llc:llc-policy xmlns:llc=\"urn:llcd:llc-policy:1\" mode=\"spread\"/>    # rule 2, $work/llcd.conf:7" "$work/nv" ||
	fail "-nv does not list rule 2"
ok "llcd -nv lists the rules with their file:line"

# one period, planned and not applied: the rule domains are placed
"$llcd" "${args[@]}" --oneshot --dry-run > "$work/plan" 2> "$work/log" || fail "llcd --oneshot --dry-run failed"
placed() { grep "\"domain\":\"$1\"" "$work/plan" | grep '"action":"pin-vcpu"' | grep -q '"reason":"placement: '; }
for d in instance-0000000e default_vmi-fedora instance-0000000f; do
	placed "$d" || fail "the plan places no vCPU of $d: $(cat "$work/plan")"
done
grep '"domain":"instance-0000000e"' "$work/plan" | grep -q 'aggregate, isolated' ||
	fail "instance-0000000e is not placed as aggregate, isolated: $(grep instance-0000000e "$work/plan")"
grep '"domain":"default_vmi-fedora"' "$work/plan" | grep -q '(spread, shared pool)' ||
	fail "default_vmi-fedora is not placed as spread: $(grep default_vmi "$work/plan")"
# web-1 is only confined to the shared pool, as every unmanaged domain while isolated ones exist
! placed web-1 || fail "web-1 (no annotation, no rule) was placed: $(grep web-1 "$work/plan")"
grep -qF "domain instance-0000000e: no llc-policy annotation; policy-rule 1 ($work/llcd.conf:6: flavor=m1.llc.*): mode aggregate, isolation core" "$work/log" ||
	fail "no log line for instance-0000000e's rule"
ok "the plan places the rule domains and the annotated one, not web-1"

# started with systemd's default soft limit of open files, which llcd
# raises to the hard one (it keeps descriptors per domain and vCPU)
hard=$(ulimit -Hn)
[ "$hard" = unlimited ] || [ "$hard" -gt 1024 ] || fail "the hard limit of open files is $hard here: raise it for the test"
(ulimit -Sn 1024 && exec "$llcd" -d "${args[@]}") > "$work/log" 2>&1 &
pid=$!
for _ in $(seq 50); do [ -S "$work/s.sock" ] && "$llcctl" -c "$work/s.sock" list 2>/dev/null | grep -q web-1 && break; sleep 0.1; done
read -r soft hardl < <(awk '/^Max open files/ { print $4, $5 }' "/proc/$pid/limits")
[ "$soft" = "$hardl" ] && [ "$soft" != 1024 ] || fail "llcd's open files limit: soft $soft, hard $hardl"
grep -qF "open files: the soft limit raised from 1024 to the hard one, $hardl" "$work/log" ||
	fail "no log line of the raised limit: $(grep -i 'open files' "$work/log")"
ok "llcd raised its soft limit of open files from 1024 to the hard one ($hardl)"
ctl() { "$llcctl" -c "$work/s.sock" "$@"; }
field() { ctl --json dominfo "$1" | python3 -c "import json,sys; d=json.load(sys.stdin); v=d$2; print(v if v is not None else '')"; }
wait_field() {  # DOMAIN EXPR WANT: the domain's JSON field becomes WANT (5 s)
	local got=
	for _ in $(seq 50); do got=$(field "$1" "$2" 2>/dev/null || true); [ "$got" = "$3" ] && return 0; sleep 0.1; done
	fail "$1: $2 is '$got', want '$3'"
}

# Nova: rule 1 by flavor, text and JSON
wait_field instance-0000000e '["policy_source"]' rule
wait_field instance-0000000e '["mode"]' aggregate    # the engine's view: from the next period
ctl dominfo instance-0000000e > "$work/di"
grep -qE "^policy_source +rule$" "$work/di" || fail "dominfo text: $(cat "$work/di")"
grep -qxF "policy_rule             1 ($work/llcd.conf:6) flavor=m1.llc.*" "$work/di" || fail "dominfo text policy_rule: $(cat "$work/di")"
grep -qE "^mode +aggregate$" "$work/di" && grep -qE "^isolation +core$" "$work/di" || fail "dominfo mode/isolation: $(cat "$work/di")"
[ "$(field instance-0000000e '["policy_rule"]["number"]')" = 1 ] || fail "json policy_rule.number"
[ "$(field instance-0000000e '["policy_rule"]["where"]')" = "$work/llcd.conf:6" ] || fail "json policy_rule.where"
[ "$(field instance-0000000e '["policy_rule"]["match"]')" = "flavor=m1.llc.*" ] || fail "json policy_rule.match"
ok "Nova instance-0000000e (flavor m1.llc.large): policy-rule 1, aggregate/core, in text and --json"

# KubeVirt: rule 2 by name and metadata
wait_field default_vmi-fedora '["policy_rule"]["number"]' 2
wait_field default_vmi-fedora '["mode"]' spread
ok "KubeVirt default_vmi-fedora: policy-rule 2 (name=default_* meta={http://kubevirt.io}uid), spread"

# the annotation wins over the matching flavor rule
[ "$(field instance-0000000f '["policy_source"]')" = annotation ] || fail "instance-0000000f: $(ctl dominfo instance-0000000f)"
wait_field instance-0000000f '["mode"]' static
[ "$(field instance-0000000f '.get("policy_rule")')" = "" ] || fail "instance-0000000f has a policy_rule"
ok "instance-0000000f keeps its annotation (static) despite matching rule 1"

ctl policy instance-0000000e > "$work/out" || fail "llcctl policy: $(cat "$work/out")"
grep -qxF "instance-0000000e: no llc-policy annotation; policy-rule 1 ($work/llcd.conf:6: flavor=m1.llc.*) applies" "$work/out" ||
	fail "llcctl policy instance-0000000e: $(cat "$work/out")"
ok "llcctl policy instance-0000000e names the rule"

[ "$(field web-1 '["policy_source"]')" = none ] || fail "web-1: $(ctl dominfo web-1)"
ok "web-1 (flavor m1.large): no rule, policy_source none"

# reload with other rules: matched again; a project rule now comes first
cat > "$work/llcd.conf" <<EOF
state-dir $work/state
socket-group none
policy-rule meta={http://openstack.org/xmlns/libvirt/nova/*}project=hpc mode=static
policy-rule name=default_* mode=aggregate
policy-rule flavor=m1.* mode=spread
EOF
ctl reload > "$work/out" || fail "reload: $(cat "$work/out")"
wait_field instance-0000000e '["policy_rule"]["match"]' "meta={http://openstack.org/xmlns/libvirt/nova/*}project=hpc"
wait_field instance-0000000e '["mode"]' static
wait_field default_vmi-fedora '["mode"]' aggregate
wait_field web-1 '["policy_rule"]["number"]' 3
[ "$(field instance-0000000f '["policy_source"]')" = annotation ] || fail "instance-0000000f after reload"
ok "a reload re-matches: project rule for instance-0000000e, web-1 now rule 3"

# a bad rule: the reload is refused with file:line, the rules stay
echo "policy-rule flavor=x mode=fast" >> "$work/llcd.conf"
if ctl reload > "$work/out" 2>&1; then fail "reload accepted a bad rule"; fi
grep -qF "$work/llcd.conf:6: 'policy-rule': llc-policy: attribute 'mode': 'fast' is not one of none, static, aggregate, spread" "$work/out" ||
	fail "reload error: $(cat "$work/out")"
[ "$(field web-1 '["policy_rule"]["number"]')" = 3 ] || fail "the rules changed after a refused reload"
ok "a bad rule is refused at reload as file:line, the running rules stay"

# llcctl policy writes an annotation: it wins over the rule from then on
ctl policy default_vmi-fedora --mode static > "$work/out" 2>&1 || fail "llcctl policy: $(cat "$work/out")"
wait_field default_vmi-fedora '["policy_source"]' annotation
wait_field default_vmi-fedora '["mode"]' static
ok "an annotation written with llcctl policy overrides the rule"
# a rule whose group names vCPUs the domain lacks: that domain is left
# unmanaged, and dominfo says which rule and why (annotation_error)
cat > "$work/llcd.conf" <<EOF
state-dir $work/state
socket-group none
policy-rule flavor=m1.llc.* <llc-policy xmlns="urn:llcd:llc-policy:1" mode="aggregate"><group name="big" vcpus="0-3"/></llc-policy>
EOF
ctl reload > "$work/out" || fail "reload: $(cat "$work/out")"
# (its state is error already: the test driver refused its pins)
for _ in $(seq 50); do reason=$(field instance-0000000e '.get("annotation_error")'); [ -z "$reason" ] || break; sleep 0.1; done
case $reason in
"policy-rule $work/llcd.conf:3: "*"group 'big'"*) ;;
*) fail "instance-0000000e reason: $reason" ;;
esac
[ "$(field instance-0000000e '["policy_rule"]["number"]')" = 1 ] || fail "instance-0000000e policy_rule after the group rule"
[ "$(field instance-0000000f '["policy_source"]')" = annotation ] || fail "instance-0000000f after the group rule"
ok "a rule's group beyond a domain's vCPUs leaves it unmanaged: $reason"
echo "rules: all checks passed"
