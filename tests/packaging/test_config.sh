#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# test_config.sh - the shipped packaging/llcd.conf: `llcd -n` accepts it,
# `llcd -nv` prints the expected normalised configuration, it names every
# directive config_set() accepts, its commented values are the real
# defaults, and an error in it is reported as file:line.
# Usage: test_config.sh BUILD_DIR SRC_DIR
set -euo pipefail
build=$1 src=$2
llcd=$build/agent/llcd conf=$src/packaging/llcd.conf
work=$(mktemp -d /tmp/llcd-conf-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok   $*"; }

out=$("$llcd" -n -f "$conf") || fail "llcd -n rejects $conf: $out"
[ "$out" = "llcd: configuration OK" ] || fail "llcd -n: $out"; ok "llcd -n accepts packaging/llcd.conf"

cat > "$work/want" <<'WANT'
backend libvirt
uri qemu:///system
libvirt-socket-glob none
libvirt-socket-uri qemu:///system
topology live
period-ms 1000
default-mode none
default-isolation none
reserved-cpus none
shared-pool dynamic
overcommit 1
overcommit-isolated 1
max-moves 256
counters auto
unjudged-groups show
sampler auto
socket /run/llcd/llcd.sock
socket-group llcd
state-dir /var/lib/llcd
guest-channel-dir /run/llcd/channels
log-level info
qmp-passthrough no
qmp-socket-glob /var/run/qemu-server/*.qmp
qmp-hold no
policy-dir /etc/llcd/policy
guest-channel-path none
release-on-exit no
metrics-listen off
policy-rule none
WANT
"$llcd" -nv -f "$conf" > "$work/got" || fail "llcd -nv failed"
diff -u "$work/want" "$work/got" || fail "llcd -nv: normalised configuration differs (above)"
ok "llcd -nv prints the expected configuration"

# every directive of config_directives[] (agent/daemon/config.c), and no other, is in
# the file, as "#directive value" or "directive value"
# the table of directives in agent/daemon/config.c: DIRECTIVE("name", kind, field, flags, ...)
table() { sed -n '/^const struct config_directive config_directives\[\] = {/,/^};/p' "$src/agent/daemon/config.c"; }
directives=$(table | sed -n 's/^[[:space:]]*DIRECTIVE("\([a-z-]*\)".*/\1/p' | sort -u)
[ "$(wc -l <<<"$directives")" -ge 15 ] || fail "parsed only $(wc -l <<<"$directives") directives from config_directives[] in agent/daemon/config.c"
for d in $directives; do
	grep -Eq "^#?$d " "$conf" || fail "packaging/llcd.conf does not mention '$d'"
done
for d in $(sed -n 's/^#\{0,1\}\([a-z][a-z-]*\) .*/\1/p' "$conf" | sort -u); do
	grep -qx "$d" <<<"$directives" || fail "packaging/llcd.conf names '$d', which config_directives[] does not have"
done
ok "packaging/llcd.conf lists all $(wc -w <<<"$directives") directives of config_directives[]"
# every directive of -nv is in the file too (what config_print() prints)
cut -d' ' -f1 "$work/got" | while read -r d; do grep -qx "$d" <<<"$directives" || fail "-nv prints '$d', not a directive"; done

# the commented values are the defaults: uncommented, nothing changes
sed 's/^#\([a-z][a-z-]* \)/\1/' "$conf" > "$work/uncommented.conf"
[ "$(grep -c '^[a-z]' "$work/uncommented.conf")" = "$(wc -w <<<"$directives")" ] || fail "uncommenting did not give one line per directive"
"$llcd" -nv -f "$work/uncommented.conf" | diff -u "$work/want" - || fail "a commented value in packaging/llcd.conf is not the default (above)"
ok "every commented value is the built-in default"

# an error is reported as file:line, exit 1
{ cat "$conf"; echo "default-mode fast"; } > "$work/bad.conf"
line=$(wc -l < "$work/bad.conf")
if out=$("$llcd" -n -f "$work/bad.conf" 2>&1); then fail "llcd -n accepted default-mode fast"; else rc=$?; fi
[ "$rc" = 1 ] || fail "llcd -n exit $rc on a bad file, want 1"
grep -qF "$work/bad.conf:$line: 'default-mode': 'fast' is not one of none, static, aggregate, spread" <<<"$out" ||
	fail "error message: $out"
ok "an error is reported as file:line: reason, exit 1"
# the live back-end pins to the topology's CPUs: one naming CPUs this host
# does not have online is refused, naming them (a synthetic topology's PUs
# are OS CPUs 0..N-1)
n=$(nproc --all)
big="pack:1 l3:8 core:8 pu:2"   # 128 PUs
[ "$n" -lt 128 ] || fail "this check needs a host with fewer than 128 CPUs"
if out=$("$llcd" -n -f "$conf" --topology "$big" 2>&1); then fail "llcd -n accepted $big on a $n-CPU host"; fi
grep -qF "llcd: topology '$big' names CPUs $n-127, which this host does not have online" <<<"$out" ||
	fail "topology check: $out"
out=$("$llcd" -n -f "$conf" --topology "pack:1 l3:1 core:1 pu:1" 2>&1) || fail "llcd -n rejects a 1-CPU topology: $out"
ok "llcd -n refuses a topology naming CPUs the host does not have ($n-127 of $big)"
echo "config: all checks passed"
