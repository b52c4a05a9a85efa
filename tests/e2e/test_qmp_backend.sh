#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# e2e_qmp_backend: llcd's QMP back-end (backend qmp, agent/qmpback/) with
# real TCG QEMU guests started by the test the way Proxmox VE starts them:
# no libvirt, `-name NAME,debug-threads=on`, `-qmp unix:DIR/VMID.qmp,
# server=on,wait=off` (one VM: Proxmox's -chardev/-mon form and
# -daemonize), the guest helper's channel from `args:`-style -chardev/-device
# lines; the llc-policy from policy files. This machine's
# CPUs 0 and 1 are presented as two LLCs.
#
# Checks, in order:
#  1. both VMs placed: every vCPU's Cpus_allowed_list is what llcd logged,
#     every other QEMU thread (emulator) too; one policy file by NAME, one
#     by VMID; the guest channel (guest-channel-path) connected
#  2. an invalid policy file: the VM is reported (state error, the file and
#     the parser's message) and left alone; fixed again: managed
#  3. hostile peers at the glob (garbage, silent, naming another process's
#     thread): each refused with its reason, and the loop keeps running
#     (periods advance; a policy change takes effect within a few periods
#     while the silent peer holds a connection)
#  4. a VM stopped (QEMU ends, its socket goes) and started again on the
#     same socket: forgotten, then placed again (new threads pinned)
#  5. llcd restarted: every vCPU found where llcd left it, zero re-pins
#  6. vCPU hot-plug: a third VM (-smp 1,maxcpus=2) gets a CPU by device_add
#     through a second QMP monitor of the test's own (Proxmox's qm set
#     --vcpus does the same): llcd reads QMP again and pins the new vCPU
#     thread, vCPU 0 keeps its pin; then device_del: once the guest ejects
#     the CPU and QEMU ends its thread, llcd drops the vCPU
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/live_lib.sh"

e2e_begin qmp_backend
e2e_install
e2e_need qemu-system-x86_64 python3
e2e_kernel
e2e_initramfs
[ -x "$LIVE_LLCD" ] || e2e_fail "llcd $LIVE_LLCD not built (cmake --build build)"
[ "$(nproc)" -ge 2 ] || e2e_fail "this test needs 2 host CPUs (has $(nproc))"

QSOCK=$E2E_SOCK_DIR/qemu-server        # /var/run/qemu-server on Proxmox
CHDIR=$E2E_SOCK_DIR/ch
POLDIR=$E2E_RUN_DIR/policy
mkdir -p "$QSOCK" "$CHDIR" "$POLDIR"
live_host
{
	cat <<EOF
# written by tests/e2e/test_qmp_backend.sh
backend qmp
qmp-socket-glob $QSOCK/*.qmp
policy-dir $POLDIR
guest-channel-path $CHDIR/%n.sock
EOF
	live_conf
} >"$E2E_RUN_DIR/llcd.conf"

a=$(e2e_name a)                         # VMID 100, policy file by NAME
b=$(e2e_name b)                         # VMID 101, policy file by VMID
c=$(e2e_name c)                         # VMID 102, hot-plug (step 6)
declare -A QPID VMID=([$a]=100 [$b]=101 [$c]=102) NV=([$a]=2 [$b]=2 [$c]=1)
declare -A SMP=([$a]=2,sockets=1,cores=2,threads=1 [$b]=2,sockets=1,cores=2,threads=1
	[$c]=1,maxcpus=2,sockets=1,cores=2,threads=1)
TESTQMP=$E2E_RUN_DIR/102-test.qmp      # VM c's second monitor: the test's, off the glob

# qvm_start NAME: start the VM as Proxmox would (kvm -> TCG here). VM a
# gets -qmp; VM b Proxmox's own form: the monitor as -chardev + -mon, and
# -daemonize with a pid file (QEMU forks away; the pid file names it)
qvm_start() {
	local n=$1 id=${VMID[$1]} qmp args
	: >"$(e2e_console "$n")"
	args=(-accel tcg -name "$n,debug-threads=on"
		-machine q35 -cpu "$E2E_CPU_MODEL" -smp "${SMP[$n]}" -m 160
		-kernel "$E2E_KERNEL" -initrd "$E2E_INITRD" -append "console=ttyS0 panic=-1 loglevel=4"
		-serial "file:$(e2e_console "$n")" -display none -nodefaults -no-reboot
		-chardev "socket,id=llcd0,path=$CHDIR/$n.sock,server=on,wait=off"
		-device virtio-serial,id=llcdser -device "virtserialport,bus=llcdser.0,chardev=llcd0,name=org.llcd.guest.0")
	[ "$n" = "$c" ] && args+=(-qmp "unix:$TESTQMP,server=on,wait=off")
	if [ "$n" != "$b" ]; then
		e2e_bg "qemu-$n" qemu-system-x86_64 "${args[@]}" -qmp "unix:$QSOCK/$id.qmp,server=on,wait=off"
		QPID[$n]=$E2E_BG_PID
	else
		rm -f "$E2E_RUN_DIR/$id.pid"
		qemu-system-x86_64 "${args[@]}" -chardev "socket,id=qmp,path=$QSOCK/$id.qmp,server=on,wait=off" \
			-mon chardev=qmp,mode=control -daemonize -pidfile "$E2E_RUN_DIR/$id.pid" \
			>"$E2E_RUN_DIR/qemu-$n.log" 2>&1 8>&- 9>&- || e2e_fail "$n: QEMU -daemonize failed: $(cat "$E2E_RUN_DIR/qemu-$n.log")"
		QPID[$n]=$(cat "$E2E_RUN_DIR/$id.pid")
		e2e_track_pid "${QPID[$n]}"
		e2e_log "started qemu-$n (daemonized, pid ${QPID[$n]})"
	fi
	for _ in $(seq 50); do [ -S "$QSOCK/$id.qmp" ] && return 0; sleep 0.1; done
	e2e_fail "$n: QEMU made no QMP socket $QSOCK/$id.qmp ($(cat "$E2E_RUN_DIR/qemu-$n.log"))"
}

# qvm_tid NAME VCPU: the vCPU's thread (debug-threads=on names it "CPU n/TCG")
qvm_tid() {
	local t
	for t in /proc/"${QPID[$1]}"/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = "CPU $2/TCG" ] && { basename "$t"; return 0; }
	done
	e2e_fail "$1: no thread 'CPU $2/TCG' in QEMU pid ${QPID[$1]}"
}

# qvm_pins_agree NAME: vCPUs and emulator threads where llcd logged it put them
qvm_pins_agree() {
	local n=$1 v want kern out='' t emu
	for ((v = 0; v < ${NV[$n]}; v++)); do
		want=$(live_wanted "$n" "$v")
		[ -n "$want" ] || { echo "vCPU $v never pinned"; return 1; }
		kern=$(e2e_cpus_allowed "$(qvm_tid "$n" "$v")")
		[ "$kern" = "$want" ] || { echo "vCPU $v: llcd pinned $want, kernel has $kern"; return 1; }
		out="$out $v=$want"
	done
	emu=$(live_wanted_emulator "$n")
	[ -n "$emu" ] || { echo "emulator never pinned"; return 1; }
	for t in /proc/"${QPID[$n]}"/task/*; do
		case $(cat "$t/comm" 2>/dev/null) in "CPU "*"/TCG") continue ;; esac
		kern=$(awk '/^Cpus_allowed_list:/ { print $2 }' "$t/status" 2>/dev/null) || continue
		[ -z "$kern" ] || [ "$kern" = "$emu" ] ||
			{ echo "thread $(basename "$t") ($(cat "$t/comm")): emulator pinned $emu, kernel has $kern"; return 1; }
	done
	echo "${out# } emulator=$emu"
}

qvm_wait_pins() {
	local i=0 r
	while :; do
		live_alive
		r=$(qvm_pins_agree "$1") && { echo "$r"; return 0; }
		i=$((i + 1))
		[ $i -le $(($2 * 5)) ] || e2e_fail "$1: pins never agreed within $2 s: $r"
		sleep 0.2
	done
}

ctl() { "$LIVE_LLCCTL" -c "$LIVE_SOCK" "$@"; }
jget() { python3 -c 'import json,sys; d=json.load(sys.stdin)
for k in sys.argv[1].split("."): d=d[k]
print(d)' "$1"; }

echo '<llc-policy xmlns="urn:llcd:llc-policy:1" mode="static"/>' >"$POLDIR/$a.xml"
echo '<llc-policy xmlns="urn:llcd:llc-policy:1" mode="aggregate" topology="match"/>' >"$POLDIR/101.xml"
qvm_start "$a"
qvm_start "$b"
live_start llcd1

e2e_step "1. both VMs placed from their QMP sockets and policy files"
pa=$(qvm_wait_pins "$a" 20)
pb=$(qvm_wait_pins "$b" 20)
live_wait_log "domain $a: policy file $POLDIR/$a.xml" 1 >/dev/null
live_wait_log "domain $b: policy file $POLDIR/101.xml" 1 >/dev/null
info=$(ctl --json dominfo "$a")
[ "$(jget pid <<<"$info")" = "${QPID[$a]}" ] || e2e_fail "$a: dominfo pid $(jget pid <<<"$info"), QEMU is ${QPID[$a]}"
[ "$(jget guest_topology.cores <<<"$info")" = 2 ] || e2e_fail "$a: guest topology from QMP: $info"
for ((i = 0; ; i++)); do
	st=$(ctl --json dominfo "$a" | jget guest_channel.state) || st=none
	[ "$st" = connected ] && break
	[ $i -lt 50 ] || e2e_fail "$a: guest channel $CHDIR/$a.sock not connected within 10 s (state $st)"
	sleep 0.2
done
[ "$(ctl --json topology | jget qmp.vms)" = 2 ] || e2e_fail "llcctl topology: not 2 VMs: $(ctl --json topology)"
e2e_ok "$a: $pa; $b: $pb; $a's guest channel connected"

e2e_step "1b. llcctl topology speaks Proxmox config lines; --apply is refused"
top=$(ctl topology "$a")
# one LLC of one PU holds both vCPUs and the emulator threads of $a
for l in "sockets: 1" "cores: 2" "numa: 1" "numa0: cpus=0-1,hostnodes=0,policy=bind" "affinity: $(live_wanted "$a" 0)"; do
	grep -qxF "$l" <<<"$top" || e2e_fail "llcctl topology $a: no line '$l': $top"
done
grep -q "<topology\|<vcpupin" <<<"$top" && e2e_fail "llcctl topology $a printed libvirt XML: $top"
if out=$(ctl topology "$a" --apply 2>&1); then e2e_fail "llcctl topology --apply accepted for a QMP VM: $out"; fi
grep -q "llcd does not edit Proxmox VE or QEMU configurations" <<<"$out" || e2e_fail "topology --apply: $out"
e2e_ok "$(grep -c '^[a-z]' <<<"$top") config lines; --apply: $out"

e2e_step "2. an invalid policy file: reported, the VM left alone"
echo '<llc-policy xmlns="urn:llcd:llc-policy:1" mode="sideways"/>' >"$POLDIR/101.xml"
live_wait_log "domain $b: invalid llc-policy annotation, domain left unmanaged: $POLDIR/101.xml: " 10
info=$(ctl --json dominfo "$b")
[ "$(jget state <<<"$info")" = error ] || e2e_fail "$b: want state error: $info"
jget annotation_error <<<"$info" | grep -q "^$POLDIR/101.xml: .*sideways" || e2e_fail "$b: annotation_error: $info"
echo '<llc-policy xmlns="urn:llcd:llc-policy:1" mode="aggregate" topology="match"/>' >"$POLDIR/101.xml"
for ((i = 0; ; i++)); do
	[ "$(ctl --json dominfo "$b" | jget state)" = managed ] && break
	[ $i -lt 25 ] || e2e_fail "$b: not managed again within 5 s of fixing its policy file"
	sleep 0.2
done
e2e_ok "state error with the file's path and the parser's message; managed again once fixed"

e2e_step "3. hostile QMP peers at the glob: refused, the loop keeps running"
e2e_bg hostile python3 "$E2E_SRC/tests/e2e/qmp_hostile.py" garbage:"$QSOCK/900.qmp" silent:"$QSOCK/901.qmp" \
	liar:"$QSOCK/902.qmp"
live_wait_log "QMP socket $QSOCK/900.qmp: unexpected byte 0x74 from QEMU where a message should start" 15 >/dev/null
live_wait_log "QMP socket $QSOCK/902.qmp: vCPU 0: thread-id 1 is not a thread of the socket's process" 15 >/dev/null
p0=$(ctl --json stats | jget periods)
t0=$(live_now)
n0=$(live_lines)
rm "$POLDIR/$a.xml"                    # unannotated: released
live_wait_count "$a" release 1 "$n0" 10 "not released within 10 s of removing its policy file (hostile peers present)"
rel=$(live_since "$t0")
live_wait_log "QMP socket $QSOCK/901.qmp: no QMP greeting and capabilities within 2000 ms" 15 >/dev/null
sleep 2
p1=$(ctl --json stats | jget periods)
el=$(live_since "$t0")
# periods of 1 s: at most one lost over the whole step
awk -v p="$((p1 - p0))" -v e="$el" 'BEGIN { exit !(p >= e - 2) }' ||
	e2e_fail "only $((p1 - p0)) periods in $el s with hostile peers (period 1 s): the loop stalled"
[ "$(ctl --json topology | jget qmp.vms)" = 2 ] || e2e_fail "a hostile peer became a VM: $(ctl --json topology)"
e2e_ok "garbage, silent and lying peers refused; $((p1 - p0)) periods in $el s; $a released $rel s after its policy file went"
echo '<llc-policy xmlns="urn:llcd:llc-policy:1" mode="static"/>' >"$POLDIR/$a.xml"
n0=$(live_lines)
live_wait_count "$a" pin-vcpu 2 "$n0" 10 "not placed again within 10 s of its policy file coming back"
pa=$(qvm_wait_pins "$a" 10)

e2e_step "4. a VM stopped and started again on the same socket"
old=${QPID[$b]}
kill "$old"
e2e__wait_gone "$old" 10 || e2e_fail "$b: QEMU $old did not exit on SIGTERM"
live_wait_log "domain $b: no longer managed: its (QEMU process exited|QMP socket is gone)" 10 >/dev/null
n0=$(live_lines)
qvm_start "$b"
live_wait_count "$b" pin-vcpu 2 "$n0" 15 "restarted VM (pid ${QPID[$b]}) not pinned within 15 s"
pb=$(qvm_wait_pins "$b" 10)
[ "$(ctl --json dominfo "$b" | jget pid)" = "${QPID[$b]}" ] || e2e_fail "$b: dominfo still shows the old QEMU"
e2e_ok "$b forgotten when QEMU $old ended, placed again as pid ${QPID[$b]}: $pb"

e2e_step "5. llcd restarted: zero re-pins"
snapshot() { live_snapshot qvm_tid "$a" "$b"; }
before=$(snapshot)
live_stop
[ "$(snapshot)" = "$before" ] || e2e_fail "pins changed when llcd stopped: $before -> $(snapshot)"
sf=$LIVE_STATE/live.state
for n in "$a" "$b"; do
	grep -q "^domain [0-9a-f]\{16\} [0-9a-f-]\{36\} 2 $n\$" "$sf" || e2e_fail "$sf has no domain line for $n: $(cat "$sf")"
done
live_restart_adopts llcd2 15 llcd "$before" "$a" "$b"
e2e_ok "0 vCPU re-pins after the restart; $before"

e2e_step "6. vCPU hot-plug and unplug (device_add / device_del)"
# qmp_test OP: OP through VM c's second monitor (the test's own): plug
# (device_add of the first free slot of query-hotpluggable-cpus, by its
# type and props; prints the props), unplug (device_del; waits up to 30 s
# for DEVICE_DELETED, prints deleted or pending: the guest must eject it)
qmp_test() {
	python3 - "$TESTQMP" "$1" <<'PY'
import json, select, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
buf = b""
events = []
def rd(timeout=None):
    global buf
    while b"\n" not in buf:
        if timeout is not None and not select.select([s], [], [], timeout)[0]:
            return None
        chunk = s.recv(65536)
        if not chunk:
            sys.exit("QMP: connection closed")
        buf += chunk
    line, buf = buf.split(b"\n", 1)
    return json.loads(line)
def reply():
    while True:
        m = rd()
        if "event" in m:
            events.append(m)
            continue
        return m
def cmd(c, **a):
    s.sendall((json.dumps({"execute": c, "arguments": a}) + "\n").encode())
    m = reply()
    if "error" in m:
        sys.exit("%s: %s" % (c, m["error"]))
    return m.get("return")
rd()
cmd("qmp_capabilities")
if sys.argv[2] == "plug":
    free = [h for h in cmd("query-hotpluggable-cpus") if "qom-path" not in h]
    if not free:
        sys.exit("no free hot-pluggable CPU slot")
    cmd("device_add", driver=free[-1]["type"], id="hotcpu1", **free[-1]["props"])
    print(json.dumps(free[-1]["props"], sort_keys=True))
else:
    cmd("device_del", id="hotcpu1")
    end = time.time() + 30
    # QEMU 7.2 says DEVICE_DELETED for the CPU's lapic child (path only)
    # once the guest ejected it
    gone = lambda: any(e["event"] == "DEVICE_DELETED" and
                       e.get("data", {}).get("path", "").startswith("/machine/peripheral/hotcpu1") for e in events)
    while time.time() < end and not gone():
        m = rd(1)
        if m is not None and "event" in m:
            events.append(m)
    print("deleted" if gone() else "pending")
PY
}
# room for c's two vCPUs in the shared pool (2 PUs, overcommit 2): a released
n0=$(live_lines)
rm "$POLDIR/$a.xml"
live_wait_count "$a" release 1 "$n0" 10 "not released within 10 s of removing its policy file"
echo '<llc-policy xmlns="urn:llcd:llc-policy:1" mode="static"/>' >"$POLDIR/102.xml"
qvm_start "$c"
pc=$(qvm_wait_pins "$c" 20)
for ((i = 0; ; i++)); do                # booted: the guest answers the ACPI eject of step 6b
	grep -q '^E2E: ready' "$(e2e_console "$c")" && break
	[ $i -lt 450 ] || e2e_fail "$c: not booted within 90 s: $(tail -5 "$(e2e_console "$c")")"
	sleep 0.2
done
pin0=$(e2e_cpus_allowed "$(qvm_tid "$c" 0)")
n0=$(live_lines)
t0=$(live_now)
props=$(qmp_test plug 2>&1) || e2e_fail "$c: device_add: $props"
tid1=$(qvm_tid "$c" 1)
NV[$c]=2
live_wait_log "domain $c: 2 vCPUs online \(was 1\)" 25 >/dev/null
for ((i = 0; ; i++)); do
	[ "$(tail -n +"$((n0 + 1))" "$LIVE_LOG" | grep -c "^domain $c vcpu 1 tid $tid1: pinned to ")" -ge 1 ] && break
	[ $i -lt 50 ] || e2e_fail "$c: hot-plugged vCPU 1 (tid $tid1) not pinned within 10 s of llcd reading it"
	live_alive
	sleep 0.2
done
took=$(live_since "$t0")
pc=$(qvm_wait_pins "$c" 10)
[ "$(e2e_cpus_allowed "$(qvm_tid "$c" 0)")" = "$pin0" ] || e2e_fail "$c: vCPU 0 moved from $pin0 by the hot-plug: $pc"
info=$(ctl --json dominfo "$c")
[ "$(jget vcpus <<<"$info")" = 2 ] || e2e_fail "$c: dominfo after device_add: $info"
python3 -c 'import json,sys; v=json.load(sys.stdin)["vcpu_threads"]; sys.exit(not (len(v) == 2 and v[1]["tid"] == int(sys.argv[1])))' \
	"$tid1" <<<"$info" || e2e_fail "$c: dominfo vcpu_threads is not vCPU 0 and $tid1: $info"
grep -q "domain $c: vCPUs changed (the vCPU threads); reading QMP socket" "$LIVE_LOG" ||
	e2e_fail "$c: llcd did not say why it read QMP again"
[ "$(ctl --json topology | jget qmp.rereads)" = 1 ] || e2e_fail "llcctl topology: qmp.rereads not 1: $(ctl --json topology)"
e2e_ok "device_add $props: pinned $took s later ($pc), vCPU 0 kept $pin0; dominfo 2 vCPUs"

n0=$(live_lines)
t0=$(live_now)
del=$(qmp_test unplug 2>&1) || e2e_fail "$c: device_del: $del"
if [ "$del" = deleted ]; then
	live_wait_log "domain $c: 1 vCPU online \(was 2\)" 25 >/dev/null
	for ((i = 0; ; i++)); do         # the engine hears it in the next period
		[ "$(ctl --json dominfo "$c" | jget vcpus)" = 1 ] && break
		[ $i -lt 25 ] || e2e_fail "$c: dominfo after device_del: $(ctl --json dominfo "$c")"
		sleep 0.2
	done
	NV[$c]=1
	pc=$(qvm_wait_pins "$c" 10)
	[ "$(e2e_cpus_allowed "$(qvm_tid "$c" 0)")" = "$pin0" ] || e2e_fail "$c: vCPU 0 moved from $pin0 by the unplug: $pc"
	e2e_ok "device_del: the guest ejected the CPU, llcd dropped vCPU 1 $(live_since "$t0") s later; vCPU 0 kept $pin0"
else
	e2e_fail "$c: device_del: no DEVICE_DELETED within 30 s (the guest did not eject the CPU)"
fi

e2e_end
