#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# test_kubevirt_hook.sh - packaging/kubernetes/llcd-kubevirt-hook, KubeVirt's
# onDefineDomain hook (run by sidecar-shim as `onDefineDomain --vmi JSON
# --domain XML`): on the fixture VMI and domain it writes exactly
# tests/fixtures/domains/kubevirt-vmi-hook.xml (which test_policyrule
# matches rules against; LLCD_REGENERATE=1 writes it again), the labels and
# only the llcd.io/ annotations (LLCD_HOOK_ANNOTATIONS widens that), a
# domain without <metadata> gets one, and bad input leaves the domain as it
# came (exit 0: a hook must never keep a VMI from starting).
# Usage: test_kubevirt_hook.sh SRC_DIR
set -euo pipefail
src=$(cd "$1" && pwd)
hook=$src/packaging/kubernetes/llcd-kubevirt-hook
fx=$src/tests/fixtures/domains
work=$(mktemp -d /tmp/llcd-hooktest.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok   $*"; }
command -v python3 >/dev/null || fail "no python3 (scripts/deps/packaging.txt)"

vmi=$(cat "$fx/kubevirt-vmi.json")
dom=$(cat "$fx/kubevirt-vmi.xml")
"$hook" --vmi "$vmi" --domain "$dom" >"$work/out.xml" 2>"$work/err"
if [ "${LLCD_REGENERATE:-0}" = 1 ]; then
	cp "$work/out.xml" "$fx/kubevirt-vmi-hook.xml"
	ok "regenerated $fx/kubevirt-vmi-hook.xml"
fi
cmp -s "$work/out.xml" "$fx/kubevirt-vmi-hook.xml" ||
	{ diff -u "$fx/kubevirt-vmi-hook.xml" "$work/out.xml" >&2 || true; fail "the hook's output differs from the fixture"; }
[ ! -s "$work/err" ] || fail "stderr: $(cat "$work/err")"
ok "fixture VMI and domain: the committed kubevirt-vmi-hook.xml"

# the output is the input with one element more, and well-formed
python3 - "$work/out.xml" "$fx/kubevirt-vmi.xml" <<'PY' || fail "the output is not the input plus <pod> (above)"
import sys, xml.etree.ElementTree as ET
out, inp = ET.parse(sys.argv[1]).getroot(), ET.parse(sys.argv[2]).getroot()
NS = "{urn:llcd:kubevirt:1}"
pods = out.find("metadata").findall(NS + "pod")
assert len(pods) == 1, pods
pod = pods[0]
assert pod.get("namespace") == "default" and pod.get("name") == "vmi-fedora", pod.attrib
labels = {e.get("key"): e.text for e in pod.findall(NS + "label")}
anns = {e.get("key"): e.text for e in pod.findall(NS + "annotation")}
assert labels == {"app": "db", "kubevirt.io/size": "large", "tier.example.org/class": "gold"}, labels
assert anns == {"llcd.io/llc-policy": "aggregate", "llcd.io/isolation": "core"}, anns
out.find("metadata").remove(pod)
assert ET.tostring(out) == ET.tostring(inp) or [c.tag for c in out.iter()] == [c.tag for c in inp.iter()]
PY
ok "labels all, annotations llcd.io/ only; nothing else changed"

LLCD_HOOK_ANNOTATIONS='kubectl.kubernetes.io/,llcd.io/' "$hook" --vmi "$vmi" --domain "$dom" >"$work/wide.xml"
grep -q 'key="kubectl.kubernetes.io/last-applied-configuration"' "$work/wide.xml" || fail "LLCD_HOOK_ANNOTATIONS not followed"
grep -q 'hooks.kubevirt.io' "$work/wide.xml" && fail "an annotation outside LLCD_HOOK_ANNOTATIONS copied"
ok "LLCD_HOOK_ANNOTATIONS widens the annotations copied"

# no <metadata>: one is made after <name>
bare="<domain type='kvm'><name>ns_v</name><memory unit='KiB'>1024</memory></domain>"
"$hook" --vmi '{"metadata":{"namespace":"ns","name":"v","labels":{"a":"b"}}}' --domain "$bare" >"$work/bare.xml"
grep -q "<name>ns_v</name><metadata><llcd:pod xmlns:llcd=\"urn:llcd:kubevirt:1\" namespace=\"ns\" name=\"v\"><llcd:label key=\"a\">b</llcd:label></llcd:pod></metadata>" "$work/bare.xml" ||
	fail "no <metadata> made: $(cat "$work/bare.xml")"
ok "a domain without <metadata> gets one"

# bad input: the domain as it came, exit 0, the reason on stderr
for bad in 'not json' '[1,2]' '{"metadata":{"labels":"x"}}'; do
	"$hook" --vmi "$bad" --domain "$dom" >"$work/bad.xml" 2>"$work/err" || fail "exit $? on VMI '$bad'"
	if [ "$bad" = '{"metadata":{"labels":"x"}}' ]; then
		grep -q '<llcd:pod' "$work/bad.xml" || fail "labels that are not a map stopped the hook"
	else
		cmp -s "$work/bad.xml" <(printf '%s' "$dom") || fail "VMI '$bad': the domain changed"
		grep -q 'the domain is left as it was' "$work/err" || fail "VMI '$bad': no reason on stderr"
	fi
done
"$hook" --vmi "$vmi" --domain '<domain><name>x' >"$work/bad.xml" 2>"$work/err" || fail "exit $? on bad XML"
[ "$(cat "$work/bad.xml")" = '<domain><name>x' ] || fail "bad XML: changed"
long=$(python3 -c 'print("x" * 5000)')
"$hook" --vmi "{\"metadata\":{\"labels\":{\"big\":\"$long\",\"ok\":\"1\"}}}" --domain "$dom" >"$work/long.xml" 2>"$work/err"
grep -q 'key="ok"' "$work/long.xml" && ! grep -q 'key="big"' "$work/long.xml" || fail "a 5000-character value was copied"
grep -q 'label big: value of 5000 characters left out' "$work/err" || fail "no word about the long value"
"$hook" --domain "$dom" >/dev/null || fail "no --vmi: exit $?"
set +e
"$hook" --vmi "$vmi" >/dev/null 2>&1
rc=$?
set -e
[ "$rc" = 2 ] || fail "no --domain: exit $rc, want 2"
ok "bad VMI or domain: the domain as it came, exit 0, said on stderr; no --domain: usage, exit 2"
echo "PASS: llcd-kubevirt-hook"
