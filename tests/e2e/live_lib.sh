# shellcheck shell=bash
# tests/e2e/live_lib.sh - helpers for the live back-end's e2e tests
# (test_live_*.sh), on top of lib.sh. Sourced after lib.sh.
#
# The daemon under test prints every action of every plan as one JSON line
# ({"period":3,"domain":"d","key":"..","action":"pin-vcpu","vcpu":1,
#   "cpus":"0","result":"ok","reason":".."}) to $E2E_RUN_DIR/<name>.jsonl,
# its log to <name>.log, and live_describe() of every domain to
# $E2E_RUN_DIR/status after every period.

LIVE_DRIVER=${LLCD_LIVE_DRIVER:-${LLCD_BUILD_DIR:-$E2E_SRC/build}/tests/live_driver}
LIVE_PERIOD_MS=1000
LIVE_PID=
LIVE_OUT=
LIVE_LOG=

# live_setup: host topology (this machine's CPUs 0 and 1 as two LLCs of one
# PU each) and a state directory for the run.
live_setup() {
	[ -x "$LIVE_DRIVER" ] || e2e_fail "live driver $LIVE_DRIVER not built (cmake --build build)"
	[ "$(nproc)" -ge 2 ] || e2e_fail "this test needs 2 host CPUs (has $(nproc))"
	LIVE_HOSTXML=$E2E_RUN_DIR/host-2llc.xml
	e2e_hwloc_xml "pack:1 l3:2 core:1 pu:1" "$LIVE_HOSTXML"
	LIVE_STATE=$E2E_RUN_DIR/state
	mkdir -p "$LIVE_STATE"
	# lib.sh waits for virtlogd's pid file, not its socket; a domain
	# started in between fails ("Failed to connect socket to
	# /run/libvirt/virtlogd-sock")
	for _ in $(seq 50); do [ -S /run/libvirt/virtlogd-sock ] && break; sleep 0.1; done
	[ -S /run/libvirt/virtlogd-sock ] || e2e_fail "virtlogd is not listening on /run/libvirt/virtlogd-sock"
}

# live_start NAME [extra driver args]: start the daemon in the background.
# Overcommit 2 (shared and isolated): a 2-vCPU domain fits one 1-PU LLC.
live_start() {
	local name=$1
	shift
	LIVE_OUT=$E2E_RUN_DIR/$name.jsonl
	LIVE_LOG=$E2E_RUN_DIR/$name.log
	: >"$LIVE_OUT"
	e2e_bg "$name" sh -c 'out=$1; shift; exec "$@" >"$out"' sh "$LIVE_OUT" \
		"$LIVE_DRIVER" --topology "$LIVE_HOSTXML" --period-ms "$LIVE_PERIOD_MS" \
		--state-dir "$LIVE_STATE" --status "$E2E_RUN_DIR/status" \
		--overcommit 2 --overcommit-isolated 2 -v "$@"
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

# live_wanted DOMAIN VCPU: the CPUs the daemon last pinned that vCPU to
# (pin-vcpu for the vCPU or release for the domain, result ok), "" if none.
live_wanted() {
	awk -v d="\"domain\":\"$1\"" -v v="$2" '
		index($0, d) && index($0, "\"result\":\"ok\"") {
			if (index($0, "\"action\":\"pin-vcpu\",\"vcpu\":" v ",") ||
			    index($0, "\"action\":\"release\"")) {
				s = $0; sub(/.*"cpus":"/, "", s); sub(/".*/, "", s); w = s
			}
		}
		END { print w }' "$LIVE_OUT"
}

# live_wanted_emulator DOMAIN: CPUs of the last emulator pin (or release).
live_wanted_emulator() {
	awk -v d="\"domain\":\"$1\"" '
		index($0, d) && index($0, "\"result\":\"ok\"") &&
		(index($0, "\"action\":\"pin-emulator\"") || index($0, "\"action\":\"release\"")) {
			s = $0; sub(/.*"cpus":"/, "", s); sub(/".*/, "", s); w = s
		}
		END { print w }' "$LIVE_OUT"
}

# live_count DOMAIN ACTION [FROM_LINE]: ok actions of that type for the
# domain, counting output lines after FROM_LINE (default 0).
live_count() {
	tail -n +"$((${3:-0} + 1))" "$LIVE_OUT" |
		grep -F "\"domain\":\"$1\"" | grep -F "\"action\":\"$2\"" | grep -cF '"result":"ok"' || true
}

live_lines() { wc -l <"$LIVE_OUT"; }

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

# live_status DOMAIN: the daemon's describe line for the domain.
live_status() { grep -F "\"name\":\"$1\"" "$E2E_RUN_DIR/status" 2>/dev/null || true; }

# live_emulator_allowed DOMAIN: Cpus_allowed_list of QEMU's main thread.
live_emulator_allowed() { e2e_cpus_allowed "$(e2e_qemu_pid "$1")"; }

# live_now: seconds since the epoch, with decimals.
live_now() { echo "$EPOCHREALTIME"; }
live_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }'; }
