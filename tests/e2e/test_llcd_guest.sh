#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# e2e_llcd_guest: llcd (live back-end) reads the guest helper's reports
# through the domain's virtio-serial channel and forms a vCPU group from
# them; llcctl hot shows both; llcctl guest-channel --add writes the
# channel into a domain's persistent definition.
#
# Checks:
#  1. a 4-vCPU TCG guest (dies=2) with the channel runs llc-guest and a
#     4-thread busy process on all 4 vCPUs: `llcctl hot` shows the process
#     with the vCPUs it runs on, and llcd's group (rule guest) over them
#  2. `llcctl dominfo` shows the channel connected, with reports and no
#     bad lines
#  3. `llcctl guest-channel B --add` on a guest without the channel: the
#     persistent definition gets <channel> with llcd's socket and the
#     target org.llcd.guest.0; a non-root caller is refused; a second
#     --add changes nothing; the same on a stopped (defined) domain C,
#     which then starts with exactly one such port
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/live_lib.sh"

e2e_begin llcd_guest
e2e_install
e2e_start_libvirt
e2e_kernel
e2e_spin
LG=$LLCD_BUILD_DIR/guest-tools/llc-guest
[ -x "$LG" ] || e2e_fail "$LG not built"
e2e_initramfs --file "$LG:/bin/llc-guest" --file "$E2E_SPIN:/bin/e2e-spin" \
	--file "$E2E_SRC/tests/e2e/guest_report_run.sh:/bin/guest-report-run" \
	--run "sh /bin/guest-report-run"
live_setup
# both guests (6 vCPUs) on this host's 2 CPUs: overcommit 4
# guest-channel-dir is where A's channel socket is (llcd connects only to
# channels there or in libvirt's own channel directory)
printf 'guest-channel-dir %s\novercommit 4\n' "$E2E_SOCK_DIR" >>"$E2E_RUN_DIR/llcd.conf"

a=$(e2e_name a)
b=$(e2e_name b)
e2e_define_guest --channel "$a" 4 "sockets=1,dies=2,cores=2,threads=1" '<llc-policy mode="aggregate"/>'
e2e_define_guest "$b" 2 "" '<llc-policy mode="aggregate"/>'
e2e_start "$a"
e2e_start "$b"
live_start llcd
ctl() { "$LIVE_LLCCTL" -c "$LIVE_SOCK" "$@"; }

e2e_step "1. llcctl hot shows the guest's busy process and llcd's group over its vCPUs"
hot=
for _ in $(seq 90); do
	hot=$(ctl hot "$a" 2>&1 || true)
	grep -q "^e2e-spin " <<<"$hot" && grep -q " guest " <<<"$hot" && break
	sleep 1
done
e2e_log "$hot"
grep -qE "^e2e-spin +[0-9]+ +[0-3](-[0-3]|,[0-3])+" <<<"$hot" || e2e_fail "no report of e2e-spin with its vCPUs: $hot"
grep -q "^state *managed" <<<"$(ctl dominfo "$a")" || e2e_fail "$a is not managed: $(ctl dominfo "$a")"
grep -qE "^e2e-spin +guest +[0-3]" <<<"$hot" || e2e_fail "no group formed from the report: $hot"
e2e_ok "report and group: $(grep -E '^e2e-spin' <<<"$hot" | tr -s ' ' | tr '\n' ';')"

e2e_step "2. dominfo shows the channel connected, reports counted, nothing dropped"
info=$(ctl --json dominfo "$a")
st=$(python3 -c 'import json,sys; g=json.load(sys.stdin)["guest_channel"]; print(g["state"], g["reports"] > 0, g["bad_lines"])' <<<"$info")
[ "$st" = "connected True 0" ] || e2e_fail "guest channel: $st ($info)"
e2e_ok "guest channel: $st"

e2e_step "3. llcctl guest-channel --add writes the channel into B's definition (root only)"
out=$(ctl guest-channel "$b" --add) || e2e_fail "guest-channel --add failed: $out"
e2e_log "$out"
xml=$(virsh -c qemu:///system dumpxml --inactive "$b")
grep -q "<target type='virtio' name='org.llcd.guest.0'/>" <<<"$xml" || e2e_fail "no channel target in B: $xml"
grep -q "<source mode='bind' path='$E2E_SOCK_DIR/" <<<"$xml" || e2e_fail "channel not under llcd's dir: $(grep -A3 '<channel' <<<"$xml")"
if setpriv --reuid=65534 --regid=65534 --clear-groups "$LIVE_LLCCTL" -c "$LIVE_SOCK" guest-channel "$b" --add 2>"$E2E_RUN_DIR/err"; then
	e2e_fail "a non-root caller added a channel"
fi
e2e_ok "channel in B's persistent definition; non-root refused ($(head -c 80 "$E2E_RUN_DIR/err"))"
# idempotent: a second --add on B, and --add on A (which has the channel from
# its definition), change nothing and say so; B still starts with one port
for d in "$b" "$a"; do
	out=$(ctl guest-channel "$d" --add) || e2e_fail "guest-channel --add on $d (with a channel) failed: $out"
	grep -q "has the llc-guest channel already (nothing changed)" <<<"$out" || e2e_fail "$d: $out"
	n=$(virsh -c qemu:///system dumpxml --inactive "$d" | grep -c "name='org.llcd.guest.0'")
	[ "$n" = 1 ] || e2e_fail "$d: $n org.llcd.guest.0 channels in the definition after a second --add"
done
e2e_ok "guest-channel --add is idempotent: one channel in each definition"
# a stopped domain (defined, never started): llcd does not see it running
# and looks it up by name; its persistent definition gets the channel once,
# and virsh start boots it with exactly one such port
c=$(e2e_name c)
e2e_define_guest "$c" 1 "" ''
out=$(ctl guest-channel "$c" --add) || e2e_fail "guest-channel --add on stopped $c failed: $out"
grep -q "guest channel added to the persistent definition (used from the next start); socket $E2E_SOCK_DIR/" <<<"$out" ||
	e2e_fail "stopped $c: $out"
out=$(ctl guest-channel "$c" --add) || e2e_fail "second guest-channel --add on stopped $c failed: $out"
grep -q "has the llc-guest channel already (nothing changed)" <<<"$out" || e2e_fail "stopped $c, second --add: $out"
n=$(virsh -c qemu:///system dumpxml --inactive "$c" | grep -c "name='org.llcd.guest.0'")
[ "$n" = 1 ] || e2e_fail "stopped $c: $n org.llcd.guest.0 channels in the definition"
out=$(ctl guest-channel "$(e2e_name nosuch)" --add 2>&1) && e2e_fail "--add on an undefined domain succeeded: $out"
grep -q "no domain '$(e2e_name nosuch)' is defined" <<<"$out" || e2e_fail "--add on an undefined domain: $out"
out=$(e2e_virsh start --paused "$c" 2>&1) || e2e_fail "virsh start $c with the added channel: $out"
n=$(virsh -c qemu:///system dumpxml "$c" | grep -c "name='org.llcd.guest.0'")
[ "$n" = 1 ] || e2e_fail "running $c: $n org.llcd.guest.0 channels"
e2e_virsh destroy "$c" >/dev/null
e2e_ok "stopped $c: channel added once, a second --add changes nothing, virsh start boots it with one port"

e2e_step "4. llcctl topology B: the recommendation, the diff (--dry-run) and --apply through libvirt"
out=$(ctl topology "$b") || e2e_fail "topology $b: $out"
grep -q "^recommended: sockets=" <<<"$out" || e2e_fail "no recommendation: $out"
rec=$(sed -n 's/^recommended: \(sockets=[0-9]* dies=[0-9]* cores=[0-9]* threads=[0-9]*\).*/\1/p' <<<"$out")
e2e_log "recommended for $b: $rec"
diff=$(ctl topology "$b" --dry-run) || e2e_fail "--dry-run: $diff"
grep -q "^+.*<vcpupin vcpu='0'" <<<"$diff" || e2e_fail "--dry-run shows no vcpupin: $diff"
virsh -c qemu:///system dumpxml --inactive "$b" | grep -q "<vcpupin" && e2e_fail "--dry-run wrote the definition"
out=$(ctl topology "$b" --apply) || e2e_fail "--apply: $out"
grep -q "takes effect at the next boot" <<<"$out" || e2e_fail "--apply on a running domain must say when it takes effect: $out"
xml=$(virsh -c qemu:///system dumpxml --inactive "$b")
read -r so di co th < <(sed 's/[a-z]*=//g' <<<"$rec")
grep -q "<topology sockets='$so' dies='$di' cores='$co' threads='$th'/>" <<<"$xml" || e2e_fail "topology not written: $(grep -m1 '<topology' <<<"$xml")"
grep -q "<vcpupin vcpu='1'" <<<"$xml" || e2e_fail "vcpupin not written"
grep -q "<llc:llc-policy\|llc-policy" <<<"$xml" || e2e_fail "the annotation was lost by --apply"
e2e_ok "written: $rec, vcpupin, annotation kept; running guest untouched until its next boot"
live_alive 2>/dev/null || true
e2e_end
