# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# tests/e2e/live_lib.sh - helpers for the live back-end's e2e tests
# (test_live_*.sh), on top of lib.sh. Sourced after lib.sh.
#
# The daemon under test is llcd -d (or the live back-end's test driver,
# LLCD_E2E_DAEMON=driver), its log in $E2E_RUN_DIR/<name>.log; the checks
# read what it applied from that log and compare with the kernel
# (Cpus_allowed_list) and libvirt (virsh vcpupin).

LIVE_BUILD=${LLCD_BUILD_DIR:-$E2E_SRC/build}
# The daemon under test: llcd (default), or tests/live_driver (the live
# back-end's standalone driver, LLCD_E2E_DAEMON=driver).
LIVE_DAEMON=${LLCD_E2E_DAEMON:-llcd}
LIVE_LLCD=${LLCD_BIN:-$LIVE_BUILD/agent/llcd}
LIVE_LLCCTL=${LLCCTL_BIN:-$LIVE_BUILD/agent/llcctl}
LIVE_DRIVER=${LLCD_LIVE_DRIVER:-$LIVE_BUILD/tests/live_driver}
LIVE_PERIOD_MS=1000
LIVE_PID=
LIVE_LOG=

# live_host: the host topology the daemon is given (this machine's CPUs 0
# and 1 as two LLCs of one PU each, $LIVE_HOSTXML), its state directory
# ($LIVE_STATE) and control socket path ($LIVE_SOCK).
live_host() {
	LIVE_HOSTXML=$E2E_RUN_DIR/host-2llc.xml
	e2e_hwloc_xml "pack:1 l3:2 core:1 pu:1" "$LIVE_HOSTXML"
	LIVE_STATE=$E2E_RUN_DIR/state
	mkdir -p "$LIVE_STATE"
	LIVE_SOCK=$E2E_SOCK_DIR/llcd.sock
}

# live_conf: the llcd.conf directives every live e2e test runs with, for
# live_host's state directory and socket. overcommit 2 (shared and
# isolated): a 2-vCPU domain fits one 1-PU LLC.
live_conf() {
	cat <<EOF
period-ms $LIVE_PERIOD_MS
overcommit 2
overcommit-isolated 2
state-dir $LIVE_STATE
socket $LIVE_SOCK
socket-group root
log-level info
EOF
}

# live_setup: host topology (this machine's CPUs 0 and 1 as two LLCs of one
# PU each), a state directory and llcd.conf for the run. LIVE_QMP=yes lets
# the daemon cross-check vCPU positions with QMP through libvirt (the
# domains are then logged as tainted: custom-monitor).
live_setup() {
	case $LIVE_DAEMON in
	llcd)
		[ -x "$LIVE_LLCD" ] || e2e_fail "llcd $LIVE_LLCD not built (cmake --build build)"
		[ -x "$LIVE_LLCCTL" ] || e2e_fail "llcctl $LIVE_LLCCTL not built" ;;
	driver) [ -x "$LIVE_DRIVER" ] || e2e_fail "live driver $LIVE_DRIVER not built (cmake --build build)" ;;
	*) e2e_fail "LLCD_E2E_DAEMON=$LIVE_DAEMON: want llcd or driver" ;;
	esac
	[ "$(nproc)" -ge 2 ] || e2e_fail "this test needs 2 host CPUs (has $(nproc))"
	live_host
	mkdir -p "$E2E_SOCK_DIR"
	{
		echo "# written by tests/e2e/live_lib.sh"
		live_conf
		echo "qmp-passthrough ${LIVE_QMP:-no}"
	} >"$E2E_RUN_DIR/llcd.conf"
	# lib.sh waits for virtlogd's pid file, not its socket; a domain
	# started in between fails ("Failed to connect socket to
	# /run/libvirt/virtlogd-sock")
	for _ in $(seq 50); do [ -S /run/libvirt/virtlogd-sock ] && break; sleep 0.1; done
	[ -S /run/libvirt/virtlogd-sock ] || e2e_fail "virtlogd is not listening on /run/libvirt/virtlogd-sock"
}

# live_begin NAME: e2e_begin NAME and what every live test needs before
# its first guest: the packages, libvirtd, the guest kernel and initramfs,
# and live_setup (set LIVE_QMP and LIVE_DAEMON before it).
live_begin() {
	e2e_begin "$1"
	e2e_install
	e2e_start_libvirt
	e2e_kernel
	e2e_initramfs
	live_setup
}

# live_overcommit N: llcd.conf's overcommit and overcommit-isolated become
# N (vCPUs per PU), for guests larger than live_conf's 2.
live_overcommit() {
	sed -i "s/^overcommit 2\$/overcommit $1/; s/^overcommit-isolated 2\$/overcommit-isolated $1/" "$E2E_RUN_DIR/llcd.conf"
	grep -qx "overcommit $1" "$E2E_RUN_DIR/llcd.conf" || e2e_fail "llcd.conf: overcommit $1 not set"
}

# live_ctl ARGS...: llcctl on the daemon's socket.
live_ctl() { "$LIVE_LLCCTL" -c "$LIVE_SOCK" "$@"; }

# live_stat KEY: one figure of `llcctl --json stats`.
live_stat() { live_ctl --json stats | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

# live_two_guests LOG STEP A KIND_A B KIND_B: define the 2-vCPU guests A
# and B (KIND static: mode static; match: mode aggregate, topology match on
# 2 cores), start them and the daemon (its log LOG), and, as test step STEP,
# wait until every vCPU of both is pinned where the daemon says (kernel and
# libvirt); their pins in LIVE_PA and LIVE_PB.
live_two_guests() {
	live__guest "$3" "$4"
	live__guest "$5" "$6"
	e2e_start "$3"
	e2e_start "$5"
	live_start "$1"
	e2e_step "$2"
	LIVE_PA=$(live_wait_pins "$3" 2 15)
	LIVE_PB=$(live_wait_pins "$5" 2 15)
	e2e_ok "$3: $LIVE_PA; $5: $LIVE_PB"
}

# live__guest NAME KIND: define a 2-vCPU guest of live_two_guests' KIND.
live__guest() {
	case $2 in
	static) e2e_define_guest "$1" 2 "" '<llc-policy mode="static"/>' ;;
	match) e2e_define_guest "$1" 2 "sockets=1,dies=1,cores=2,threads=1" '<llc-policy mode="aggregate" topology="match"/>' ;;
	*) e2e_fail "live_two_guests: guest kind $2: want static or match" ;;
	esac
}

# live_start NAME: start the daemon in the foreground (-d), in the
# background of the test, its log in $E2E_RUN_DIR/NAME.log.
live_start() {
	local name=$1
	LIVE_LOG=$E2E_RUN_DIR/$name.log
	case $LIVE_DAEMON in
	llcd) e2e_bg "$name" "$LIVE_LLCD" -d -f "$E2E_RUN_DIR/llcd.conf" --topology "$LIVE_HOSTXML" ;;
	driver) e2e_bg "$name" "$LIVE_DRIVER" --topology "$LIVE_HOSTXML" --period-ms "$LIVE_PERIOD_MS" \
		--state-dir "$LIVE_STATE" --status "$E2E_RUN_DIR/status" \
		--overcommit 2 --overcommit-isolated 2 $([ "${LIVE_QMP:-no}" = yes ] && echo --allow-qmp) ;;
	esac
	LIVE_PID=$E2E_BG_PID
}

# live_stop: SIGTERM (pins stay), wait for the exit.
live_stop() {
	kill "$LIVE_PID" 2>/dev/null || e2e_fail "daemon (pid $LIVE_PID) is not running"
	e2e__wait_gone "$LIVE_PID" 10 || e2e_fail "daemon (pid $LIVE_PID) did not exit on SIGTERM"
	e2e_log "daemon stopped (pid $LIVE_PID)"
}

# live_alive: fail if the daemon died.
live_alive() {
	e2e__alive "$LIVE_PID" || {
		tail -n 20 "$LIVE_LOG" >&2
		e2e_fail "the daemon (pid $LIVE_PID) died; log above"
	}
}

# What the daemon applied, from its log (agent/live/apply.c logs every applied
# action at info level, one line each):
#   domain D vcpu V tid T: pinned to CPUS: REASON
#   domain D: emulator threads pinned to CPUS: REASON
#   domain D: released to CPUS: REASON

# live_wanted DOMAIN VCPU: the CPUs the daemon last pinned that vCPU to
# (or released the domain to), "" if none.
live_wanted() {
	awk -v p="domain $1 vcpu $2 tid " -v r="domain $1: released to " '
		index($0, p) == 1 && / tid [0-9]+: pinned to / { s = $0; sub(/.*: pinned to /, "", s); sub(/:.*/, "", s); w = s }
		index($0, r) == 1 { s = $0; sub(/.*: released to /, "", s); sub(/:.*/, "", s); w = s }
		END { print w }' "$LIVE_LOG"
}

# live_wanted_emulator DOMAIN: CPUs of the last emulator pin (or release).
live_wanted_emulator() {
	awk -v p="domain $1: emulator threads pinned to " -v r="domain $1: released to " '
		index($0, p) == 1 { s = $0; sub(/.*: emulator threads pinned to /, "", s); sub(/:.*/, "", s); w = s }
		index($0, r) == 1 { s = $0; sub(/.*: released to /, "", s); sub(/:.*/, "", s); w = s }
		END { print w }' "$LIVE_LOG"
}

# live_count DOMAIN ACTION [FROM_LINE]: applied actions of a type
# (pin-vcpu, pin-emulator, release) for the domain ("" = any domain),
# counting log lines after FROM_LINE (default 0).
live_count() {
	local re
	case $2 in
	pin-vcpu) re="^domain ${1:-[^ ]+} vcpu [0-9]+ tid [0-9]+: pinned to " ;;
	pin-emulator) re="^domain ${1:-[^ ]+}: emulator threads pinned to " ;;
	release) re="^domain ${1:-[^ ]+}: released to " ;;
	*) e2e_fail "live_count: unknown action $2" ;;
	esac
	tail -n +"$((${3:-0} + 1))" "$LIVE_LOG" | grep -cE -- "$re" || true
}

live_lines() { wc -l <"$LIVE_LOG"; }

# live_vcpupin DOMAIN VCPU: libvirt's stored pin (virsh vcpupin).
live_vcpupin() { e2e_virsh vcpupin "$1" "$2" | awk 'NF >= 2 { print $2; exit }'; }

# live_pins_agree DOMAIN NVCPUS: every vCPU's kernel affinity
# (Cpus_allowed_list) and libvirt's vcpupin equal what the daemon pinned.
# Prints "vcpu=cpus ..." on success; the difference and status 1 otherwise.
live_pins_agree() {
	local d=$1 n=$2 v want tid kern virt out=''
	for ((v = 0; v < n; v++)); do
		want=$(live_wanted "$d" "$v")
		[ -n "$want" ] || { echo "vCPU $v never pinned"; return 1; }
		tid=$(e2e_vcpu_tid "$d" "$v")
		kern=$(e2e_cpus_allowed "$tid")
		virt=$(live_vcpupin "$d" "$v")
		if [ "$kern" != "$want" ] || [ "$virt" != "$want" ]; then
			echo "vCPU $v (tid $tid): daemon pinned $want, kernel has $kern, virsh vcpupin $virt"
			return 1
		fi
		out="$out $v=$want"
	done
	echo "${out# }"
}

# live_wait_pins DOMAIN NVCPUS TIMEOUT: wait until live_pins_agree holds.
live_wait_pins() {
	local i=0 r
	while :; do
		live_alive
		r=$(live_pins_agree "$1" "$2") && { echo "$r"; return 0; }
		i=$((i + 1))
		[ $i -le $(($3 * 5)) ] || e2e_fail "$1: pins never agreed within $3 s: $r"
		sleep 0.2
	done
}

# live_wait_count DOMAIN ACTION N FROM_LINE TIMEOUT WHY: wait until the
# daemon has applied at least N actions of the type (as live_count) to the
# domain after FROM_LINE; after TIMEOUT s fail with "DOMAIN: WHY".
live_wait_count() {
	local i
	for ((i = 0; ; i++)); do
		[ "$(live_count "$1" "$2" "$4")" -ge "$3" ] && return 0
		[ $i -lt $(($5 * 5)) ] || e2e_fail "$1: $6"
		sleep 0.2
	done
}

# live_snapshot TIDFN DOMAIN...: the kernel affinity of vCPUs 0 and 1 of
# every domain, "d/v=cpus ...", their thread IDs from TIDFN DOMAIN VCPU.
live_snapshot() {
	local tidfn=$1 d v out=''
	shift
	for d in "$@"; do
		for v in 0 1; do out="$out $d/$v=$(e2e_cpus_allowed "$("$tidfn" "$d" "$v")")"; done
	done
	echo "${out# }"
}

# live_restart_adopts NAME TIMEOUT WHO BEFORE DOMAIN...: start the daemon
# again as NAME; each DOMAIN must be taken back from the state file with
# its 2 vCPUs where they were within TIMEOUT s, and three periods later no
# vCPU may have been re-pinned and snapshot() (the caller's) must still say
# BEFORE. WHO names the daemon in the failure messages.
live_restart_adopts() {
	local name=$1 timeout=$2 who=$3 before=$4 d n
	shift 4
	live_start "$name"
	for d in "$@"; do
		live_wait_log "domain $d: state file: 2 vCPUs where llcd left them, 0 moved" "$timeout" >/dev/null
	done
	sleep 3                         # three more periods
	live_alive
	n=$(live_count "" pin-vcpu)
	[ "$n" = 0 ] || e2e_fail "the restarted $who re-pinned $n vCPUs: $(grep -E 'vcpu [0-9]+ tid [0-9]+: pinned to' "$LIVE_LOG")"
	[ "$(snapshot)" = "$before" ] || e2e_fail "pins changed across the restart: $before -> $(snapshot)"
}

# live_wait_log REGEX TIMEOUT: wait for a line of the daemon's log.
live_wait_log() {
	local i=0
	until grep -E -q -- "$1" "$LIVE_LOG"; do
		live_alive
		i=$((i + 1))
		[ $i -le $(($2 * 5)) ] || e2e_fail "no daemon log line /$1/ within $2 s (log: $LIVE_LOG)"
		sleep 0.2
	done
	grep -E -m1 -- "$1" "$LIVE_LOG"
}

# live_status DOMAIN: what the daemon says about the domain, as one line
# of JSON: `llcctl --json dominfo`, or the driver's status file.
live_status() {
	case $LIVE_DAEMON in
	llcd) "$LIVE_LLCCTL" -c "$LIVE_SOCK" --json dominfo "$1" 2>&1 | tr -d '\n' || true ;;
	driver) grep -F "\"name\":\"$1\"" "$E2E_RUN_DIR/status" 2>/dev/null || true ;;
	esac
}

# live_wait_status DOMAIN ERE TRIES DELAY WHY: poll live_status until it
# matches ERE, every DELAY s; the last status line in LIVE_ST. After TRIES
# polls fail with "DOMAIN: WHY: <status line>".
live_wait_status() {
	local i
	for ((i = 0; ; i++)); do
		LIVE_ST=$(live_status "$1")
		echo "$LIVE_ST" | grep -qE -- "$2" && return 0
		[ $i -lt "$3" ] || e2e_fail "$1: $5: ${LIVE_ST:-no status line}"
		sleep "$4"
	done
}

# live_emulator_allowed DOMAIN: Cpus_allowed_list of QEMU's main thread.
live_emulator_allowed() { e2e_cpus_allowed "$(e2e_qemu_pid "$1")"; }

# live_now: seconds since the epoch, with decimals.
live_now() { echo "$EPOCHREALTIME"; }
live_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }'; }
