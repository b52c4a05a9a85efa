#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# llc-guest in a TCG guest with two virtual LLCs (dies=2) and llcd's end of
# its channel (agent/drivers/guestchan.c, driven by tests/guestchan-probe as llcd
# will drive it):
#  (a) the host receives a report naming the vCPUs the 4-thread busy
#      process runs on (it starts on 0,4,1,5: both dies);
#  (b) with --aggregate, inside the guest its threads end up confined to
#      one virtual LLC (read from /proc in the guest, printed on the console);
#  (c) a hostile peer on a second channel socket (garbage, a 1 MiB line, a
#      flood) is throttled and closed for a back-off, the probe's memory and
#      CPU stay small, and the well-behaved guest's reports keep coming.
. "$(dirname "$0")/lib.sh"
e2e_begin guest_helper
e2e_install
e2e_start_libvirt
e2e_kernel
e2e_spin

LG=$LLCD_BUILD_DIR/guest-tools/llc-guest
PROBE=$LLCD_BUILD_DIR/tests/guestchan-probe
[ -x "$LG" ] || e2e_fail "$LG not built"
[ -x "$PROBE" ] || e2e_fail "$PROBE not built"
e2e_initramfs --file "$LG:/bin/llc-guest" --file "$E2E_SPIN:/bin/e2e-spin" \
	--file "$E2E_SRC/tests/e2e/guest_helper_run.sh:/bin/guest-helper-run" \
	--run "sh /bin/guest-helper-run"

d=$(e2e_name a)
e2e_define_guest --channel "$d" 8 "sockets=1,dies=2,cores=4,threads=1"
e2e_start "$d"
sock=$(e2e_channel_sock "$d")
evil=$E2E_RUN_DIR/evil.sock
e2e_bg probe "$PROBE" -t 100 -H "$evil" "$d:8:$sock" "evil:8:$evil"

e2e_step "guest has two virtual LLCs"
e2e_wait_console "$d" '^E2E: ready' 120 >/dev/null
l3=$(e2e_guest_l3 "$d" | tr '\n' ' ')
[ "$l3" = "0-3 4-7 " ] || e2e_fail "guest L3 domains are '$l3', want '0-3 4-7'"
e2e_ok "L3 0-3 and 4-7"

e2e_step "(a) llcd's channel receives a report naming the busy process's vCPUs"
line=$(e2e_wait_log probe "^REPORT dom=$d name=e2e-spin " 60)
e2e_log "$line"
vc=${line##*vcpus=}
[ "$vc" = "0-1,4-5" ] || {
	# aggregation may already have moved threads before the first report
	first=$(grep -m1 "^REPORT dom=$d name=e2e-spin " "$E2E_RUN_DIR/probe.log")
	e2e_fail "first report names vCPUs '$vc', want 0-1,4-5 (the CPUs e2e-spin started on): $first"
}
e2e_ok "report: $line"

e2e_step "(b) --aggregate confines the 4 busy threads to one virtual LLC"
conf=$(e2e_wait_console "$d" \
	'E2E-GUESTAFF t=[0-9]+( [0-9]+:0-3@[0-3]){4}[[:space:]]*$|E2E-GUESTAFF t=[0-9]+( [0-9]+:4-7@[4-7]){4}[[:space:]]*$' 90)
e2e_log "$(grep -m3 'llc-guest: aggregate' "$(e2e_console "$d")" || true)"
e2e_ok "in the guest: $conf"
e2e_step "the host then sees the group on one LLC's vCPUs"
line=$(e2e_wait_log probe "^REPORT dom=$d name=e2e-spin pid=[0-9]+ vcpus=(0-3|[0-3](,[0-3])*|4-7|[4-7](,[4-7])*)$" 30)
e2e_ok "$line"

e2e_step "(c) the hostile peer is throttled and closed; the guest's reports keep coming"
e2e_wait_log probe "^EVENT dom=evil backoff" 30 >/dev/null
n0=$(grep -c "^REPORTS dom=$d " "$E2E_RUN_DIR/probe.log" || true)
sleep 6
n1=$(grep -c "^REPORTS dom=$d " "$E2E_RUN_DIR/probe.log" || true)
[ $((n1 - n0)) -ge 3 ] || e2e_fail "only $((n1 - n0)) reports from $d in 6 s after the back-off"
e2e_ok "$((n1 - n0)) reports from $d in 6 s after the hostile channel was closed"

e2e_step "the hostile channel's drops are counted; memory and CPU stay bounded"
kill -TERM "$(cat "$E2E_RUN_DIR/.probe.pid")"
e2e_wait_log probe '^PROBE ' 10 >/dev/null
evs=$(grep '^STATS dom=evil ' "$E2E_RUN_DIR/probe.log")
goods=$(grep "^STATS dom=$d " "$E2E_RUN_DIR/probe.log")
probe=$(grep '^PROBE ' "$E2E_RUN_DIR/probe.log")
e2e_log "$evs"
e2e_log "$goods"
e2e_log "$probe"
[[ $evs =~ state=backoff\ .*bad=([0-9]+)\ too_long=([0-9]+)\ throttles=([0-9]+)\ backoffs=([0-9]+)\ .*mem=([0-9]+) ]] ||
	e2e_fail "hostile channel not in back-off: $evs"
[ "${BASH_REMATCH[1]}" -ge 4 ] && [ "${BASH_REMATCH[2]}" -ge 1 ] && [ "${BASH_REMATCH[3]}" -ge 1 ] ||
	e2e_fail "hostile channel's drops not counted: $evs"
[ "${BASH_REMATCH[5]}" -le 16384 ] || e2e_fail "hostile channel holds ${BASH_REMATCH[5]} bytes"
[[ $goods =~ bad=0\  ]] || e2e_fail "the well-behaved guest had lines dropped: $goods"
[[ $probe =~ cpu_ms=([0-9]+)\ maxrss_kb=([0-9]+) ]] || e2e_fail "no probe usage: $probe"
[ "${BASH_REMATCH[1]}" -le 3000 ] || e2e_fail "probe used ${BASH_REMATCH[1]} ms of CPU"
[ "${BASH_REMATCH[2]}" -le 32768 ] || e2e_fail "probe peak RSS ${BASH_REMATCH[2]} KiB"
e2e_ok "evil: $(echo "$evs" | cut -d' ' -f3-10); $probe"
e2e_end
