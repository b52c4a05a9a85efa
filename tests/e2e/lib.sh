# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# tests/e2e/lib.sh - harness for end-to-end tests against a real libvirtd and
# real QEMU TCG guests. Sourced by tests/e2e/test_*.sh (bash). docs/e2e.md
# explains the whole harness; research/real-stack.md is why it looks like this.
#
# A test looks like:
#   . "$(dirname "$0")/lib.sh"
#   e2e_begin boot                 # strict mode, timer, run dir, cleanup trap
#   e2e_install                    # packages, libvirt-qemu user, /dev/kvm fix
#   e2e_start_libvirt              # virtlogd + libvirtd unless already running
#   e2e_kernel; e2e_initramfs      # cached guest kernel and busybox initramfs
#   dom=$(e2e_name small)          # llcd-e2e-boot-small
#   e2e_define_guest "$dom" 2
#   e2e_start "$dom"; e2e_wait_console "$dom" '^E2E: ready' 60
#   ...checks, each announced with e2e_step and failing with e2e_fail...
#   e2e_end                        # prints PASS and the timing summary
#
# Everything a test creates (domains, background processes, the libvirt
# daemons if it had to start them) is removed by the EXIT trap, also on
# failure. Domains named llcd-e2e-* whose owning test process is gone (an
# earlier run that was killed) are removed by e2e_start_libvirt.
#
# Environment knobs (all optional):
#   LLCD_E2E_CACHE      cache of guest kernel + initramfs (/var/cache/llcd-e2e)
#   LLCD_E2E_RUN_DIR    per-test logs, console files (<build>/e2e/<test>)
#   LLCD_BUILD_DIR      the CMake build tree (set by ctest)
#   LLCD_E2E_KERNEL_PKG Debian kernel package (resolved from linux-image-cloud-amd64)
#   LLCD_E2E_KEEP=1     keep the domains and daemons at the end (debugging)
#   LLCD_E2E_SKIP=1     exit 77 (ctest shows the test as skipped, never passed)

[ -n "${E2E_LIB_LOADED:-}" ] && return 0
E2E_LIB_LOADED=1

E2E_SRC=${LLCD_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
E2E_PREFIX=llcd-e2e-
E2E_URI=qemu:///system
E2E_CACHE=${LLCD_E2E_CACHE:-/var/cache/llcd-e2e}
E2E_STATE=/run/llcd-e2e                 # shared by concurrent runs on one host
E2E_SOCK_DIR=$E2E_STATE/sock.$$         # unix sockets (short paths: 108 bytes)
E2E_POLICY_NS=urn:llcd:llc-policy:1
E2E_CPU_MODEL=${LLCD_E2E_CPU_MODEL:-Nehalem}
E2E_VIRTIO_MODULES="virtio/virtio_ring virtio/virtio virtio/virtio_pci_legacy_dev
 virtio/virtio_pci_modern_dev virtio/virtio_pci char/virtio_console"

E2E_TEST=
E2E_RUN_DIR=
E2E_DOMAINS=()          # domains this run defined (cleanup destroys + undefines)
E2E_PIDS=()             # processes to kill at cleanup (e2e_track_pid)
E2E_PGIDS=()            # process groups to kill at cleanup (e2e_bg)
E2E_LIBVIRT_USER=       # set once e2e_start_libvirt registered this run
E2E_KERNEL='' E2E_KVER='' E2E_KMOD_DIR='' E2E_INITRD='' E2E_SPIN=''
E2E_T0=${EPOCHREALTIME}
E2E_C0=
E2E_TIMINGS=()

# ---------------------------------------------------------------------------
# Output, timing, failure

e2e__cpu_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8; exit}' /proc/stat; }
E2E_C0=$(e2e__cpu_ticks)
E2E_CLK=$(getconf CLK_TCK)

# Seconds since the test began (wall, and CPU-seconds of the whole machine).
e2e_elapsed() {
	awk -v a="$E2E_T0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'
}
e2e__stamp() {
	awk -v a="$E2E_T0" -v b="$EPOCHREALTIME" -v c0="$E2E_C0" \
	    -v c1="$(e2e__cpu_ticks)" -v hz="$E2E_CLK" \
	    'BEGIN { printf "[%6.1fs wall %6.1fs cpu]", b - a, (c1 - c0) / hz }'
}

# e2e_log MESSAGE...: a timestamped progress line.
e2e_log() { echo "$(e2e__stamp) $*"; }

# e2e_step MESSAGE...: announce a check (or phase) and remember its time for
# the summary that e2e_end prints.
e2e_step() {
	local s
	s=$(e2e__stamp)
	echo "$s == $*"
	E2E_TIMINGS+=("$s $*")
}

# e2e_ok MESSAGE...: report a check that passed.
e2e_ok() { echo "$(e2e__stamp)    ok: $*"; }

# e2e_fail MESSAGE...: report a failed check and end the test (exit 1); the
# EXIT trap prints diagnostics and cleans up. Safe inside $(...): the
# subshell exits 1 and errexit (set by e2e_begin) ends the test.
e2e_fail() {
	echo "$(e2e__stamp) FAIL: $*" >&2
	exit 1
}

# e2e_need COMMAND...: fail unless each command is on PATH.
e2e_need() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 ||
			e2e_fail "required command '$c' is missing after e2e_install"
	done
}

# e2e_virsh ARGS...: virsh on the system URI, quiet.
e2e_virsh() { virsh -q -c "$E2E_URI" "$@"; }

# ---------------------------------------------------------------------------
# Test life cycle

# e2e_begin NAME: strict mode, run directory, EXIT trap. Call first.
e2e_begin() {
	E2E_TEST=${1:?e2e_begin NAME}
	set -euo pipefail
	shopt -s inherit_errexit   # a failure inside $(...) fails the test too
	if [ "${LLCD_E2E_SKIP:-0}" = 1 ]; then
		echo "SKIP: e2e test $E2E_TEST (LLCD_E2E_SKIP=1)"
		exit 77
	fi
	[ "$(id -u)" = 0 ] ||
		e2e_fail "e2e tests need root (libvirtd, packages, /dev/kvm); run as root or set LLCD_E2E_SKIP=1"
	E2E_RUN_DIR=${LLCD_E2E_RUN_DIR:-${LLCD_BUILD_DIR:-/tmp/llcd-e2e}/e2e/$E2E_TEST}
	mkdir -p "$E2E_STATE"
	e2e__run_lock
	rm -rf "$E2E_RUN_DIR"
	mkdir -p "$E2E_RUN_DIR"
	chmod 0755 "$E2E_RUN_DIR"
	trap e2e_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	e2e_log "e2e test '$E2E_TEST' (pid $$), logs in $E2E_RUN_DIR"
}

# One e2e test at a time on a host, whatever worktree or build tree it comes
# from: the tests share one libvirtd (some restart it), load every CPU with
# TCG guests, and use fixed domain names. The lock is fd 8 of the test shell,
# held until it exits; e2e_bg and the daemons do not inherit it.
e2e__run_lock() {
	local holder
	exec 8>>"$E2E_STATE/run.lock"
	if ! flock -n 8; then
		holder=$(cat "$E2E_STATE/run.owner" 2>/dev/null || echo unknown)
		e2e_log "waiting for the e2e test that is running now ($holder)"
		flock -w "${LLCD_E2E_LOCK_WAIT:-1200}" 8 ||
			e2e_fail "another e2e test ($holder) held $E2E_STATE/run.lock for too long"
	fi
	echo "test=$E2E_TEST pid=$$ dir=$PWD since=$(date +%T)" >"$E2E_STATE/run.owner"
	E2E_T0=$EPOCHREALTIME # time the test, not the wait
	E2E_C0=$(e2e__cpu_ticks)
}

# e2e_bg NAME COMMAND...: run COMMAND in the background, in its own session
# and process group, with stdout and stderr in $E2E_RUN_DIR/NAME.log; the
# EXIT trap kills the whole group. Sets E2E_BG_PID. llcd -d starts each line
# with the time (agent/daemon/log.c; test_log checks it); the log keeps the
# message alone, so that the tests' patterns anchor on it as before.
e2e_bg() {
	local name=$1
	shift
	: >"$E2E_RUN_DIR/$name.log"
	setsid "$@" > >(exec sed -u -E 's/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} //' \
		>>"$E2E_RUN_DIR/$name.log" 8>&- 9>&-) 2>&1 8>&- 9>&- &
	E2E_BG_PID=$!
	E2E_PGIDS+=("$E2E_BG_PID")
	echo "$E2E_BG_PID" >"$E2E_RUN_DIR/.$name.pid"
	e2e_log "started $name (pid $E2E_BG_PID): $*"
}

# e2e_end: print the timing summary and PASS. Cleanup still runs on EXIT.
e2e_end() {
	e2e_step "all checks passed"
	{
		echo "timings of e2e test '$E2E_TEST':"
		printf '  %s\n' "${E2E_TIMINGS[@]}"
	} | tee "$E2E_RUN_DIR/timing.txt"
	E2E_PASSED=1
}

# e2e_track_pid PID: kill PID (and wait for it) at cleanup.
e2e_track_pid() { E2E_PIDS+=("$1"); }

e2e__diagnose() {
	local d f
	echo "---- diagnostics (logs kept in $E2E_RUN_DIR) ----"
	for d in "${E2E_DOMAINS[@]}"; do
		f=$E2E_RUN_DIR/$d.console
		echo "-- $d: state $(e2e_virsh domstate "$d" 2>&1 | head -1)"
		if [ -s "$f" ]; then
			echo "-- $d: last console lines ($f)"
			tail -n 25 "$f" | sed 's/^/   | /'
		else
			echo "-- $d: console empty ($f)"
		fi
		f=/var/log/libvirt/qemu/$d.log
		if [ -s "$f" ]; then
			echo "-- $d: last lines of $f"
			tail -n 8 "$f" | sed 's/^/   | /'
		fi
	done
}

# e2e_cleanup: the EXIT trap. Destroys and undefines the domains this run
# defined, kills its background processes, stops the daemons only if this
# run started them (and no other e2e run still uses them).
e2e_cleanup() {
	local rc=$? d p
	set +eu
	trap - EXIT INT TERM
	if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
		e2e__diagnose >&2
	fi
	if [ "${LLCD_E2E_KEEP:-0}" = 1 ]; then
		e2e_log "LLCD_E2E_KEEP=1: leaving ${E2E_DOMAINS[*]:-no domains} and the daemons running"
		exit "$rc"
	fi
	for p in "${E2E_PGIDS[@]}"; do
		kill -- -"$p" 2>/dev/null && e2e__wait_gone "$p" 5
		kill -9 -- -"$p" 2>/dev/null
	done
	for p in "${E2E_PIDS[@]}"; do
		kill "$p" 2>/dev/null && e2e__wait_gone "$p" 5 || kill -9 "$p" 2>/dev/null
	done
	for d in "${E2E_DOMAINS[@]}"; do
		e2e_virsh destroy "$d" >/dev/null 2>&1
		e2e_virsh undefine "$d" >/dev/null 2>&1
		e2e_log "cleanup: destroyed and undefined $d"
	done
	E2E_DOMAINS=()
	rm -rf "$E2E_SOCK_DIR"
	[ -n "$E2E_LIBVIRT_USER" ] && e2e_stop_libvirt
	if [ "$rc" = 0 ] && [ -n "${E2E_PASSED:-}" ]; then
		echo "PASS: e2e test '$E2E_TEST' in $(e2e_elapsed)s"
	elif [ "$rc" = 0 ]; then
		echo "FAIL: e2e test '$E2E_TEST' ended without e2e_end" >&2
		rc=1
	elif [ "$rc" != 77 ]; then
		echo "FAIL: e2e test '$E2E_TEST' (exit $rc) after $(e2e_elapsed)s" >&2
	fi
	exit "$rc"
}

# ---------------------------------------------------------------------------
# Processes

# e2e__starttime PID: the process start time (field 22 of stat), to tell a
# live owner from a reused PID.
e2e__starttime() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	set -- $s
	echo "${20}"
}

# e2e__alive PID [STARTTIME]: PID runs (not a zombie) and, if given, started
# at STARTTIME.
e2e__alive() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	set -- "${2:-}" $s
	[ "$2" != Z ] && [ "$2" != X ] || return 1
	[ -z "$1" ] || [ "$1" = "${21}" ]
}

# e2e__wait_gone PID SECONDS
e2e__wait_gone() {
	local i=0
	while e2e__alive "$1"; do
		i=$((i + 1))
		[ $i -gt $(($2 * 10)) ] && return 1
		sleep 0.1
	done
}

# ---------------------------------------------------------------------------
# Installation

# e2e_install: everything the e2e tests need on a fresh Debian 12 machine.
# Packages through scripts/install-deps (scripts/deps/e2e.txt), then what
# libvirt-daemon-system's postinst would do (we install the minimal libvirt
# set), then the /dev/kvm fix of research/real-stack.md section 9.2.
e2e_install() {
	e2e_step "install packages (scripts/install-deps)"
	sh "$E2E_SRC/scripts/install-deps" ||
		e2e_fail "scripts/install-deps failed"
	e2e_need virsh libvirtd virtlogd qemu-system-x86_64 busybox dpkg-deb \
		apt-get apt-cache gzip flock readelf sha256sum socat
	[ -x /bin/busybox ] || e2e_fail "/bin/busybox missing (busybox-static)"

	# Minimal libvirt set (section 9.3): user, group and directories.
	getent group libvirt-qemu >/dev/null || {
		groupadd -r libvirt-qemu && e2e_log "created group libvirt-qemu"
	}
	getent passwd libvirt-qemu >/dev/null || {
		useradd -r -g libvirt-qemu -d /var/lib/libvirt -s /usr/sbin/nologin \
			libvirt-qemu && e2e_log "created user libvirt-qemu"
	}
	mkdir -p /var/log/libvirt/qemu /var/lib/libvirt/qemu /var/cache/libvirt \
		/run/libvirt

	# The /dev/kvm trap (section 9.2): unless uid libvirt-qemu can open
	# /dev/kvm, libvirt 9.0 re-probes QEMU (~4 s) on nearly every API call,
	# and define + start take over a minute. Do what udev's static-nodes
	# rule does on a normal host: group kvm, mode 0660, libvirt-qemu in kvm.
	# The guests themselves never use KVM (type='qemu').
	if [ -e /dev/kvm ]; then
		getent group kvm >/dev/null || groupadd -r kvm
		if [ "$(stat -c %G:%a /dev/kvm)" != kvm:660 ]; then
			e2e_log "/dev/kvm was $(stat -c %U:%G:%a /dev/kvm); setting root:kvm 0660"
			chgrp kvm /dev/kvm && chmod 0660 /dev/kvm ||
				e2e_fail "cannot fix /dev/kvm permissions"
		fi
		id -nG libvirt-qemu | tr ' ' '\n' | grep -qx kvm ||
			usermod -a -G kvm libvirt-qemu
	fi
}

# ---------------------------------------------------------------------------
# libvirt daemons

# Shared between concurrent e2e runs on one host, under $E2E_STATE/lock
# (fd 9; the daemons must not inherit it, or they hold the lock forever):
#   libvirt-started    "libvirtd PID START" / "virtlogd PID START" lines for
#                      daemons an e2e run started (absent: not ours to stop)
#   users/PID.START    one file per e2e run that uses the daemons
e2e__locked() { (flock -w 300 9 || e2e_fail "timeout on $E2E_STATE/lock"; "$@") 9>>"$E2E_STATE/lock"; }

e2e__daemon_pid() { # NAME: pid of the running daemon from its pidfile, or fail
	local p
	p=$(cat "/run/$1.pid" 2>/dev/null) || return 1
	e2e__alive "$p" || return 1
	[ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$1" ] || return 1
	echo "$p"
}

e2e__running() { # NAME: some live (not zombie) process has that name
	local p
	for p in $(pgrep -x "$1"); do e2e__alive "$p" && return 0; done
	return 1
}

e2e__start_daemons() {
	local p=''
	mkdir -p "$E2E_STATE/users"
	: >"$E2E_STATE/users/$$.$(e2e__starttime $$)"
	if ! e2e__daemon_pid virtlogd >/dev/null && ! e2e__running virtlogd; then
		LIBVIRT_LOG_OUTPUTS="3:file:/var/log/libvirt/virtlogd.log" virtlogd -d 8>&- 9>&- ||
			e2e_fail "virtlogd -d failed (see /var/log/libvirt/virtlogd.log)"
		for _ in $(seq 50); do p=$(e2e__daemon_pid virtlogd) && break; sleep 0.1; done
		[ -n "$p" ] || e2e_fail "virtlogd did not start"
		echo "virtlogd $p $(e2e__starttime "$p")" >>"$E2E_STATE/libvirt-started"
		e2e_log "started virtlogd (pid $p)"
	fi
	p=
	if e2e__daemon_pid libvirtd >/dev/null; then
		e2e_log "libvirtd already running (pid $(e2e__daemon_pid libvirtd)); using it"
	elif [ -S /run/libvirt/libvirt-sock ] && timeout 60 virsh -q -c "$E2E_URI" version >/dev/null 2>&1; then
		e2e_log "libvirtd already answers on /run/libvirt/libvirt-sock (not ours); using it"
	else
		e2e__launch_libvirtd
	fi
}

e2e__launch_libvirtd() { # under the lock
	local p=''
	rm -f /run/libvirt/libvirt-sock
	LIBVIRT_LOG_OUTPUTS="3:file:/var/log/libvirt/libvirtd.log" libvirtd -d 8>&- 9>&- ||
		e2e_fail "libvirtd -d failed (see /var/log/libvirt/libvirtd.log)"
	for _ in $(seq 100); do
		p=$(e2e__daemon_pid libvirtd) && [ -S /run/libvirt/libvirt-sock ] && break
		sleep 0.1
	done
	[ -n "$p" ] && [ -S /run/libvirt/libvirt-sock ] ||
		e2e_fail "libvirtd did not create /run/libvirt/libvirt-sock (see /var/log/libvirt/libvirtd.log)"
	echo "libvirtd $p $(e2e__starttime "$p")" >>"$E2E_STATE/libvirt-started"
	e2e_log "started libvirtd (pid $p)"
}

e2e__restart_libvirtd() { # under the lock
	local k pid start found=0
	[ -s "$E2E_STATE/libvirt-started" ] && grep -q '^libvirtd ' "$E2E_STATE/libvirt-started" ||
		e2e_fail "libvirtd was not started by an e2e run; not restarting someone else's daemon"
	while read -r k pid start; do
		[ "$k" = libvirtd ] && e2e__alive "$pid" "$start" || continue
		kill "$pid"
		e2e__wait_gone "$pid" 15 || e2e_fail "libvirtd $pid did not exit within 15 s"
		e2e_log "stopped libvirtd (pid $pid)"
		found=1
	done <"$E2E_STATE/libvirt-started"
	[ "$found" = 1 ] || e2e_fail "the libvirtd an e2e run started is gone"
	sed -i '/^libvirtd /d' "$E2E_STATE/libvirt-started"
	e2e__launch_libvirtd
}

# e2e_restart_libvirt: stop libvirtd and start it again (running guests
# survive; clients such as llcd must reconnect). Only a libvirtd that an e2e
# run started: on a host where libvirtd is someone else's, this fails.
e2e_restart_libvirt() {
	local v
	e2e__locked e2e__restart_libvirtd
	v=$(e2e_virsh version 2>&1) || e2e_fail "libvirtd does not answer after restart: $v"
}

# e2e_start_libvirt: make sure virtlogd and libvirtd run (start them by hand,
# no systemd here), wait for the socket and the first API call (which probes
# QEMU's capabilities on a fresh machine, about 8 s), then remove stale
# llcd-e2e-* domains left by killed runs.
e2e_start_libvirt() {
	e2e_step "start virtlogd + libvirtd if not running"
	e2e__locked e2e__start_daemons
	E2E_LIBVIRT_USER=1
	local v
	v=$(e2e_virsh version 2>&1) ||
		e2e_fail "libvirtd does not answer: $v"
	e2e_log "libvirt answers: $(echo "$v" | grep -i 'hypervisor' | head -1)"
	e2e__clean_stale
}

e2e__stop_daemons() {
	local f kind pid start
	rm -f "$E2E_STATE/users/$$."*
	for f in "$E2E_STATE"/users/*; do
		[ -e "$f" ] || continue
		f=${f##*/}
		if e2e__alive "${f%%.*}" "${f#*.}"; then
			e2e_log "libvirtd still used by e2e run pid ${f%%.*}; leaving it running"
			return 0
		fi
		rm -f "$E2E_STATE/users/$f"
	done
	[ -s "$E2E_STATE/libvirt-started" ] || return 0
	# libvirtd first: it holds virtlogd's connections.
	for kind in libvirtd virtlogd; do
		while read -r k pid start; do
			[ "$k" = "$kind" ] || continue
			e2e__alive "$pid" "$start" || continue
			kill "$pid"
			e2e__wait_gone "$pid" 10 || kill -9 "$pid"
			e2e_log "stopped $kind (pid $pid), started by an e2e run"
		done <"$E2E_STATE/libvirt-started"
	done
	rm -f "$E2E_STATE/libvirt-started"
}

# e2e_stop_libvirt: stop the daemons only if an e2e run started them and no
# other e2e run is still using them. Called by e2e_cleanup.
e2e_stop_libvirt() {
	E2E_LIBVIRT_USER=
	e2e__locked e2e__stop_daemons
}

# e2e__owner: what goes into <description> of every domain we define.
e2e__owner() { echo "llcd-e2e test=$E2E_TEST pid=$$ start=$(e2e__starttime $$)"; }

e2e__clean_stale() {
	local d desc pid start
	for d in $(e2e_virsh list --all --name); do
		case $d in "$E2E_PREFIX"*) ;; *) continue ;; esac
		desc=$(e2e_virsh desc "$d" 2>/dev/null || true)
		pid=$(echo "$desc" | sed -n 's/.* pid=\([0-9]*\).*/\1/p')
		start=$(echo "$desc" | sed -n 's/.* start=\([0-9]*\).*/\1/p')
		if [ -n "$pid" ] && [ "$pid" != $$ ] && e2e__alive "$pid" "$start"; then
			e2e_log "leaving $d alone: it belongs to running e2e pid $pid"
			continue
		fi
		e2e_log "removing stale domain $d (${desc:-no owner})"
		e2e_virsh destroy "$d" >/dev/null 2>&1 || true
		e2e_virsh undefine "$d" >/dev/null 2>&1 ||
			e2e_fail "cannot undefine stale domain $d"
	done
	for d in "$E2E_STATE"/sock.*; do
		[ -d "$d" ] && ! e2e__alive "${d##*.}" && rm -rf "$d"
	done
	return 0
}

# ---------------------------------------------------------------------------
# Guest kernel and initramfs (cached under $E2E_CACHE)

# e2e_kernel: the Debian cloud kernel, fetched with apt-get download and
# unpacked with dpkg-deb -x (never installed). The package name carries an
# ABI number, so it is resolved at run time from linux-image-cloud-amd64;
# an unpacked kernel in the cache is reused. Sets E2E_KERNEL (vmlinuz),
# E2E_KVER and E2E_KMOD_DIR (lib/modules/$KVER/kernel of the unpacked tree).
e2e_kernel() {
	e2e_step "guest kernel (Debian cloud kernel, cached in $E2E_CACHE/kernel)"
	local pkg=${LLCD_E2E_KERNEL_PKG:-} ver dir
	mkdir -p "$E2E_CACHE/kernel"
	if [ -z "$pkg" ]; then
		pkg=$(e2e__resolve_kernel) || pkg=$( (apt-get update -qq >/dev/null 2>&1); e2e__resolve_kernel) || pkg=
	fi
	if [ -z "$pkg" ]; then
		# Offline, and apt cannot name it: use the newest unpacked one.
		dir=$(ls -d "$E2E_CACHE"/kernel/*/boot 2>/dev/null | sort -V | tail -1 || true)
		[ -n "$dir" ] || e2e_fail "cannot resolve linux-image-cloud-amd64 and nothing is cached"
		pkg=linux-image-$(basename "$(dirname "$dir")")
		e2e_log "apt cannot resolve linux-image-cloud-amd64; using cached $pkg"
	fi
	ver=${pkg#linux-image-}
	dir=$E2E_CACHE/kernel/$ver
	if [ ! -e "$dir/.complete" ]; then
		e2e__locked e2e__fetch_kernel "$pkg" "$ver"
	else
		e2e_log "reusing $dir"
	fi
	E2E_KVER=$ver
	E2E_KERNEL=$dir/boot/vmlinuz-$ver
	E2E_KMOD_DIR=$dir/lib/modules/$ver/kernel
	[ -r "$E2E_KERNEL" ] || e2e_fail "$E2E_KERNEL missing"
}

# apt-cache takes over a second here (no pkgcache.bin), so the answer is
# kept in the cache until the apt lists change.
e2e__resolve_kernel() {
	local p stamp f=$E2E_CACHE/kernel/resolved
	stamp=$(stat -c %Y /var/lib/apt/lists/*_Packages* 2>/dev/null | sort -n | tail -1 || true)
	if [ -n "$stamp" ] && [ -s "$f" ] && [ "$(cut -d' ' -f1 "$f")" = "$stamp" ]; then
		cut -d' ' -f2 "$f"
		return 0
	fi
	p=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ { print $2; exit }' || true)
	[ -n "$p" ] || return 1
	if [ -n "$stamp" ]; then echo "$stamp $p" >"$f.$$" && mv "$f.$$" "$f"; fi
	echo "$p"
}

e2e__fetch_kernel() { # PKG VER, under the lock
	local pkg=$1 ver=$2 dir=$E2E_CACHE/kernel/$2 tmp deb
	[ -e "$dir/.complete" ] && return 0 # another run fetched it meanwhile
	tmp=$(mktemp -d "$E2E_CACHE/kernel/.tmp.XXXXXX")
	deb=$(ls /var/cache/apt/archives/"${pkg}"_*_amd64.deb 2>/dev/null | tail -1 || true)
	if [ -n "$deb" ]; then
		e2e_log "unpacking $deb (apt cache)"
	else
		e2e_log "apt-get download $pkg"
		(cd "$tmp" && apt-get download -qq "$pkg" >/dev/null 2>"$tmp/download.err") ||
			e2e_fail "apt-get download $pkg failed: $(cat "$tmp/download.err")"
		deb=$(ls "$tmp/${pkg}"_*.deb)
	fi
	# Only what the guests need: vmlinuz, config, and the virtio modules.
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" ./boot \
		"./lib/modules/$ver/kernel/drivers/virtio" \
		"./lib/modules/$ver/kernel/drivers/char/virtio_console.ko" ||
		e2e_fail "cannot unpack $deb"
	rm -f "$tmp"/*.deb "$tmp/download.err"
	chmod 0755 "$tmp"
	touch "$tmp/.complete"
	rm -rf "$dir"
	mv "$tmp" "$dir"
	e2e_log "unpacked $pkg into $dir ($(du -sh "$dir" | cut -f1))"
	# A new ABI replaces the old kernel (runs are serialized by the run lock).
	for tmp in "$E2E_CACHE"/kernel/*/; do
		tmp=${tmp%/}
		[ "$tmp" = "$dir" ] || { rm -rf "$tmp" && e2e_log "removed old $tmp"; }
	done
}

# e2e_initramfs [--file SRC[:DEST]]... [--run COMMAND]
# Builds (or reuses from the cache) a gzip'd newc initramfs with static
# busybox, tests/e2e/guest-init.sh as /init, and the virtio-serial modules.
#   --file SRC[:DEST]  add a file (DEST defaults to /bin/<name of SRC>); a
#                      dynamically linked ELF is refused (no libc in there)
#   --run COMMAND      /etc/llcd-e2e/run: a sh script started by /init after
#                      the topology report (llcd.run=0 on the kernel command
#                      line suppresses it)
# The cache key is a hash of everything that goes in, so different extras
# give different images, and an unchanged set is not rebuilt. Sets
# E2E_INITRD. Calls e2e_kernel first if needed.
e2e_initramfs() {
	local files=() run='' f src dest key stage out m
	while [ $# -gt 0 ]; do
		case $1 in
		--file) files+=("$2"); shift 2 ;;
		--run) run=$2; shift 2 ;;
		*) e2e_fail "e2e_initramfs: unknown argument $1" ;;
		esac
	done
	[ -n "$E2E_KERNEL" ] || e2e_kernel
	e2e_step "guest initramfs (busybox, cached in $E2E_CACHE/initramfs)"
	for f in "${files[@]}"; do
		src=${f%%:*}
		[ -r "$src" ] || e2e_fail "e2e_initramfs: $src not readable"
		if readelf -l "$src" 2>/dev/null | grep -q 'program interpreter'; then
			e2e_fail "e2e_initramfs: $src is dynamically linked; the guest has no libc (link it -static)"
		fi
	done
	key=$({
		echo "v1 $E2E_KVER"
		sha256sum /bin/busybox "$E2E_SRC/tests/e2e/guest-init.sh"
		for m in $E2E_VIRTIO_MODULES; do sha256sum "$E2E_KMOD_DIR/drivers/$m.ko"; done
		for f in "${files[@]}"; do
			src=${f%%:*}
			dest=${f#*:}; [ "$dest" != "$f" ] || dest=/bin/${src##*/}
			echo "$dest $(sha256sum <"$src")"
		done
		echo "run: $run"
	} | sha256sum | cut -c1-16)
	out=$E2E_CACHE/initramfs/$key.cpio.gz
	if [ -s "$out" ]; then
		e2e_log "reusing $out"
		touch "$out"
		E2E_INITRD=$out
		return 0
	fi
	mkdir -p "$E2E_CACHE/initramfs"
	stage=$(mktemp -d "$E2E_CACHE/initramfs/.stage.XXXXXX")
	mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,etc/llcd-e2e,lib/modules}
	cp /bin/busybox "$stage/bin/busybox"
	install -m 0755 "$E2E_SRC/tests/e2e/guest-init.sh" "$stage/init"
	for m in $E2E_VIRTIO_MODULES; do
		cp "$E2E_KMOD_DIR/drivers/$m.ko" "$stage/lib/modules/" ||
			e2e_fail "module $m.ko missing in $E2E_KMOD_DIR"
	done
	for f in "${files[@]}"; do
		src=${f%%:*}
		dest=${f#*:}; [ "$dest" != "$f" ] || dest=/bin/${src##*/}
		mkdir -p "$stage$(dirname "$dest")"
		cp -p "$src" "$stage$dest"
	done
	if [ -n "$run" ]; then
		printf '#!/bin/sh\n%s\n' "$run" >"$stage/etc/llcd-e2e/run"
		chmod 0755 "$stage/etc/llcd-e2e/run"
	fi
	(cd "$stage" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) \
		>"$out.tmp.$$" || e2e_fail "cpio of $stage failed"
	mv "$out.tmp.$$" "$out"
	chmod 0644 "$out"
	rm -rf "$stage"
	e2e_log "built $out ($(du -h "$out" | cut -f1))"
	E2E_INITRD=$out
	# Every changed /init or helper binary gives a new image: drop the ones
	# no run has used for two days.
	find "$E2E_CACHE/initramfs" -name '*.cpio.gz' -mtime +2 -delete 2>/dev/null || true
}

# e2e_spin: build (or reuse) tests/e2e/spin.c as a static binary for the
# guests and set E2E_SPIN to its path. Put it in an initramfs with
#   e2e_initramfs --file "$E2E_SPIN:/bin/e2e-spin" --run 'e2e-spin -n 4 -r 1'
# A multi-threaded busy process (busybox sh has no threads), optionally
# pinned per thread, reporting each thread's CPU and affinity (E2E-SPIN).
e2e_spin() {
	local src=$E2E_SRC/tests/e2e/spin.c inc=$E2E_SRC/common out err
	e2e_need gcc
	out=$E2E_CACHE/bin/e2e-spin.$(cat "$src" "$inc/cpulist.h" | sha256sum | cut -c1-16)
	if [ ! -x "$out" ]; then
		mkdir -p "$E2E_CACHE/bin"
		err=$(gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -static -pthread -I "$inc" \
			-o "$out.tmp.$$" "$src" 2>&1) || e2e_fail "cannot build $src: $err"
		mv "$out.tmp.$$" "$out"
		e2e_log "built $out"
	fi
	E2E_SPIN=$out
}

# ---------------------------------------------------------------------------
# Domains

# e2e_name SHORT: the domain name for this test, llcd-e2e-<test>-<SHORT>.
e2e_name() { echo "${E2E_PREFIX}${E2E_TEST}-$1"; }

# e2e_console DOMAIN: path of the domain's serial console log.
e2e_console() { echo "$E2E_RUN_DIR/$1.console"; }

# e2e_channel_sock DOMAIN [CHANNEL]: host end of a virtio-serial channel.
e2e_channel_sock() { echo "$E2E_SOCK_DIR/$1.${2:-org.llcd.guest.0}.sock"; }

# e2e_define_guest [OPTIONS] NAME VCPUS [TOPOLOGY] [METADATA_XML]
# Writes $E2E_RUN_DIR/NAME.xml and defines it (persistent). The guest:
# type='qemu' (TCG; never KVM here), q35, direct kernel boot of E2E_KERNEL +
# E2E_INITRD, serial console to $(e2e_console NAME), memory 192 MiB.
#   NAME          must start with llcd-e2e- (use e2e_name)
#   VCPUS         number of vCPUs
#   TOPOLOGY      "" or e.g. "sockets=1,dies=2,cores=1,threads=2" (the
#                 product must be VCPUS)
#   METADATA_XML  "" or an element for <metadata>. With an xmlns it goes
#                 in verbatim; without one (e.g. '<llc-policy mode="static"/>')
#                 it is set after define with virsh metadata --config in the
#                 llc-policy namespace ($E2E_POLICY_NS, prefix llc).
# Options:
#   --model M         CPU model (default Nehalem: Intel-vendor, so dies=2
#                     gives the guest 2 L3 domains under TCG; section 3.2)
#   --amd             EPYC-Rome with the TCG workaround of section 3.3
#                     (x-force-features; the domain is tainted custom-argv)
#   --memory MIB      guest memory (default 192)
#   --busy LIST       llcd.busy=LIST: busy loops on those guest CPUs
#   --cmdline ARGS    extra kernel command line
#   --numa "L1 L2.." guest NUMA cells, one per CPU list (e.g. "0-1 2-3"),
#                     memory split evenly
#   --channel [NAME]  virtio-serial channel (default name org.llcd.guest.0)
#                     on the host socket $(e2e_channel_sock NAME CHANNEL)
#   --kernel PATH, --initrd PATH   instead of E2E_KERNEL / E2E_INITRD
#   --devices XML     raw XML appended inside <devices>
e2e_define_guest() {
	local model=$E2E_CPU_MODEL amd=0 mem=192 busy='' extra='' channels=() kernel=$E2E_KERNEL
	local initrd=$E2E_INITRD devices='' name vcpus topo meta xml f topo_xml='' prod=1 kv
	local cpu_xml ch_xml='' c qemu_ns='' qemu_cl='' meta_inline='' meta_late='' numa='' numa_xml='' i=0
	while [ $# -gt 0 ]; do
		case $1 in
		--model) model=$2; shift 2 ;;
		--amd) amd=1; shift ;;
		--memory) mem=$2; shift 2 ;;
		--busy) busy=$2; shift 2 ;;
		--numa) numa=$2; shift 2 ;;
		--cmdline) extra=$2; shift 2 ;;
		--channel)
			if [ $# -ge 2 ] && [ "${2#--}" = "$2" ] && [ "${2#llcd-e2e-}" = "$2" ]; then
				channels+=("$2"); shift 2
			else
				channels+=(org.llcd.guest.0); shift
			fi ;;
		--kernel) kernel=$2; shift 2 ;;
		--initrd) initrd=$2; shift 2 ;;
		--devices) devices=$2; shift 2 ;;
		--*) e2e_fail "e2e_define_guest: unknown option $1" ;;
		*) break ;;
		esac
	done
	name=${1:?e2e_define_guest NAME VCPUS}
	vcpus=${2:?e2e_define_guest NAME VCPUS}
	topo=${3:-}
	meta=${4:-}
	case $name in "$E2E_PREFIX"*) ;; *) e2e_fail "domain name $name must start with $E2E_PREFIX" ;; esac
	[ -r "$kernel" ] || e2e_fail "no guest kernel (call e2e_kernel first)"
	[ -r "$initrd" ] || e2e_fail "no guest initramfs (call e2e_initramfs first)"

	if [ -n "$topo" ]; then
		for kv in $(echo "$topo" | tr ', ' '  '); do
			case $kv in
			sockets=[0-9]* | dies=[0-9]* | cores=[0-9]* | threads=[0-9]*)
				topo_xml="$topo_xml ${kv%%=*}='${kv#*=}'"
				prod=$((prod * ${kv#*=})) ;;
			*) e2e_fail "bad topology item '$kv' (want sockets=,dies=,cores=,threads=)" ;;
			esac
		done
		[ "$prod" = "$vcpus" ] ||
			e2e_fail "topology $topo gives $prod vCPUs, not $vcpus"
		topo_xml="<topology$topo_xml/>"
	fi
	if [ "$amd" = 1 ]; then
		# research/real-stack.md section 3.3: force topoext, disable what TCG lacks.
		cpu_xml="<model fallback='forbid'>EPYC-Rome</model>
    $topo_xml
    <cache level='3' mode='emulate'/>
    <feature policy='require' name='topoext'/>"
		for f in 3dnowprefetch amd-stibp clzero fxsr_opt ibpb misalignsse nrip-save \
			osvw perfctr_core rdpid rdseed sha-ni wbnoinvd xsavec xsaveerptr xsaves; do
			cpu_xml="$cpu_xml
    <feature policy='disable' name='$f'/>"
		done
		qemu_ns=" xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'"
		qemu_cl="<qemu:commandline>
    <qemu:arg value='-global'/><qemu:arg value='x86_64-cpu.x-force-features=on'/>
  </qemu:commandline>"
	else
		cpu_xml="<model fallback='forbid'>$model</model>
    $topo_xml
    <cache level='3' mode='emulate'/>"
	fi
	if [ -n "$numa" ]; then
		set -- $numa
		numa_xml="<numa>"
		for c in "$@"; do
			numa_xml="$numa_xml
      <cell id='$i' cpus='$c' memory='$((mem / $#))' unit='MiB'/>"
			i=$((i + 1))
		done
		numa_xml="$numa_xml
    </numa>"
		cpu_xml="$cpu_xml
    $numa_xml"
	fi
	mkdir -p "$E2E_SOCK_DIR"
	for c in "${channels[@]}"; do
		ch_xml="$ch_xml
    <channel type='unix'>
      <source mode='bind' path='$(e2e_channel_sock "$name" "$c")'/>
      <target type='virtio' name='$c'/>
    </channel>"
	done
	case $meta in
	"") ;;
	*xmlns*) meta_inline="<metadata>
    $meta
  </metadata>" ;;
	*) meta_late=$meta ;;
	esac
	f=$(e2e_console "$name")
	: >"$f"
	xml=$E2E_RUN_DIR/$name.xml
	cat >"$xml" <<EOF
<domain type='qemu'$qemu_ns>
  <name>$name</name>
  <description>$(e2e__owner)</description>
  $meta_inline
  <memory unit='MiB'>$mem</memory>
  <vcpu placement='static'>$vcpus</vcpu>
  <os>
    <type arch='x86_64' machine='q35'>hvm</type>
    <kernel>$kernel</kernel>
    <initrd>$initrd</initrd>
    <cmdline>console=ttyS0 panic=-1 loglevel=4${busy:+ llcd.busy=$busy}${extra:+ $extra}</cmdline>
  </os>
  <features><acpi/><apic/></features>
  <cpu mode='custom' match='exact' check='none'>
    $cpu_xml
  </cpu>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>destroy</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <serial type='file'><source path='$f'/><target port='0'/></serial>
    <console type='file'><source path='$f'/><target type='serial' port='0'/></console>$ch_xml
    <memballoon model='none'/>
    $devices
  </devices>
  $qemu_cl
</domain>
EOF
	e2e_virsh dominfo "$name" >/dev/null 2>&1 &&
		e2e_fail "domain $name already exists (another run of this test?)"
	local out
	# --validate: without it libvirt silently drops what it does not know
	# (e.g. <topology clusters=...>, section 3.4).
	out=$(e2e_virsh define --validate "$xml" 2>&1) || e2e_fail "virsh define --validate $xml: $out"
	E2E_DOMAINS+=("$name")
	if [ -n "$meta_late" ]; then
		e2e_set_policy "$name" "$meta_late" --config
	fi
	e2e_log "defined $name: $vcpus vCPUs${topo:+ ($topo)} $([ $amd = 1 ] && echo EPYC-Rome-forced || echo "$model")${busy:+ busy=$busy}${channels[*]:+ channel=${channels[*]}}"
}

# e2e_set_policy DOMAIN XML [virsh metadata flags, default --live --config]
e2e_set_policy() {
	local d=$1 x=$2 out
	shift 2
	[ $# -gt 0 ] || set -- --live --config
	out=$(e2e_virsh metadata "$d" --uri "$E2E_POLICY_NS" --key llc --set "$x" "$@" 2>&1) ||
		e2e_fail "virsh metadata $d --set '$x' $*: $out"
}

# e2e_get_policy DOMAIN [--live|--config]: the llc-policy element, or
# nothing (and status 1) when there is none.
e2e_get_policy() {
	e2e_virsh metadata "$1" --uri "$E2E_POLICY_NS" ${2:-} 2>/dev/null
}

# e2e_channel_read DOMAIN [CHANNEL] [TIMEOUT]: connect to the host end of a
# virtio-serial channel (socat) and print the first line the guest sends.
# Fails on timeout (default 30 s). Boot the guest with
# --cmdline llcd.hello=CHANNEL to have /init send one.
e2e_channel_read() {
	local s line
	s=$(e2e_channel_sock "$1" "${2:-}")
	[ -S "$s" ] || e2e_fail "$1: no channel socket $s"
	coproc E2E_SOCAT { exec timeout "${3:-30}" socat -u "UNIX-CONNECT:$s" - 2>/dev/null 8>&- 9>&-; }
	IFS= read -t "${3:-30}" -r line <&"${E2E_SOCAT[0]}" || line=
	kill "$E2E_SOCAT_PID" 2>/dev/null
	wait "$E2E_SOCAT_PID" 2>/dev/null || true
	[ -n "$line" ] || e2e_fail "$1: nothing from the guest on $s within ${3:-30}s"
	echo "$line"
}

# e2e_start DOMAIN: empty its console log and start it.
e2e_start() {
	local out
	: >"$(e2e_console "$1")"
	out=$(e2e_virsh start "$1" 2>&1) || e2e_fail "virsh start $1: $out"
	e2e_log "started $1 (qemu pid $(e2e_qemu_pid "$1"))"
}

# e2e_destroy DOMAIN: hard power-off; a domain that is not running is fine.
e2e_destroy() {
	local out
	if [ "$(e2e_virsh domstate "$1" 2>/dev/null)" = running ]; then
		out=$(e2e_virsh destroy "$1" 2>&1) || e2e_fail "virsh destroy $1: $out"
	fi
}

# e2e_undefine DOMAIN: destroy if running, undefine, stop tracking it.
e2e_undefine() {
	local out d keep=()
	e2e_destroy "$1"
	out=$(e2e_virsh undefine "$1" 2>&1) || e2e_fail "virsh undefine $1: $out"
	for d in "${E2E_DOMAINS[@]}"; do [ "$d" = "$1" ] || keep+=("$d"); done
	E2E_DOMAINS=("${keep[@]}")
}

# e2e_qemu_pid DOMAIN: the QEMU process of a running domain.
e2e_qemu_pid() {
	local p
	p=$(cat "/run/libvirt/qemu/$1.pid" 2>/dev/null) && e2e__alive "$p" ||
		e2e_fail "$1 has no running QEMU (/run/libvirt/qemu/$1.pid)"
	echo "$p"
}

# e2e_wait_console DOMAIN PATTERN [TIMEOUT]: wait until a console line
# matches the extended regex PATTERN and print that line. Fails the test on
# timeout (default 90 s) or when the domain stops running meanwhile. A
# guest whose console is still empty after E2E_BOOT_QUIET_S (60) seconds is
# destroyed and started once more (logged).
e2e_wait_console() {
	local d=$1 pat=$2 t=${3:-90} f line i=0 pid restarted=0 quiet=${E2E_BOOT_QUIET_S:-60}
	f=$(e2e_console "$d")
	pid=$(e2e_qemu_pid "$d")
	while :; do
		line=$(grep -E -m1 -- "$pat" "$f" 2>/dev/null) && {
			echo "$line"
			return 0
		}
		e2e__alive "$pid" || e2e_fail "$d stopped while waiting for /$pat/ on its console"
		# A TCG guest whose kernel printed nothing at all for a minute
		# hung before its console came up (seen once in many runs: the
		# vCPU threads busy, the console file empty); one fresh start,
		# said in the log, then the timeout runs again.
		if [ "$restarted" = 0 ] && [ ! -s "$f" ] && [ "$i" -ge $((quiet * 5)) ]; then
			e2e_log "$d: nothing on its console after ${quiet}s (a boot that hung): destroyed and started once more"
			e2e_destroy "$d"
			e2e_start "$d"
			pid=$(e2e_qemu_pid "$d")
			restarted=1
			i=0
		fi
		i=$((i + 1))
		[ $i -le $((t * 5)) ] || e2e_fail "$d: no console line /$pat/ within ${t}s"
		sleep 0.2
	done
}

# e2e_wait_log NAME PATTERN [TIMEOUT]: like e2e_wait_console, for the log
# of a process started with e2e_bg NAME (or any file in the run directory
# called NAME.log); fails if that process exits first.
e2e_wait_log() {
	local f=$E2E_RUN_DIR/$1.log pat=$2 t=${3:-60} line i=0 pid
	pid=$(cat "$E2E_RUN_DIR/.$1.pid" 2>/dev/null || true)
	while :; do
		line=$(grep -E -m1 -- "$pat" "$f" 2>/dev/null) && {
			echo "$line"
			return 0
		}
		# gone: its last line may have come between the grep and this
		# test, so read the log once more before calling it a failure
		if [ -n "$pid" ] && ! e2e__alive "$pid"; then
			line=$(grep -E -m1 -- "$pat" "$f" 2>/dev/null) && {
				echo "$line"
				return 0
			}
			e2e_fail "$1 (pid $pid) exited while waiting for /$pat/ in $f: $(tail -n 5 "$f" 2>/dev/null)"
		fi
		i=$((i + 1))
		[ $i -le $((t * 5)) ] || e2e_fail "no line /$pat/ in $f within ${t}s"
		sleep 0.2
	done
}

# e2e_console_has DOMAIN PATTERN: status only, no waiting.
e2e_console_has() { grep -E -q -- "$2" "$(e2e_console "$1")"; }

# e2e_guest_topo DOMAIN: the guest's E2E-TOPO lines (cpu= pkg= die= core=
# smt= l3= l3id=), one per guest CPU.
e2e_guest_topo() { { grep '^E2E-TOPO ' "$(e2e_console "$1")" || true; } | tr -d '\r'; }

# e2e_guest_l3 DOMAIN / e2e_guest_smt DOMAIN: the distinct L3 domains / SMT
# sibling lists the guest reported, one per line, sorted. e2e_guest_numa
# DOMAIN: "node=N cpus=LIST" per guest NUMA node.
e2e_guest_l3() { { grep '^E2E-L3 ' "$(e2e_console "$1")" || true; } | tr -d '\r' | cut -d' ' -f2 | sort; }
e2e_guest_numa() { { grep '^E2E-NUMA ' "$(e2e_console "$1")" || true; } | tr -d '\r' | cut -d' ' -f2-3 | sort; }
e2e_guest_smt() { { grep '^E2E-SMT ' "$(e2e_console "$1")" || true; } | tr -d '\r' | cut -d' ' -f2 | sort; }

# e2e_vcpu_tids DOMAIN: "VCPU TID" lines, sorted by vCPU, from the QEMU
# threads' names (libvirt runs QEMU with debug-threads=on: "CPU n/TCG", or
# "CPU n/KVM"). No QMP, so the domain is not marked tainted.
e2e_vcpu_tids() {
	local pid t comm n
	pid=$(e2e_qemu_pid "$1")
	for t in /proc/"$pid"/task/*; do
		comm=$(cat "$t/comm" 2>/dev/null) || continue
		case $comm in
		"CPU "*/TCG | "CPU "*/KVM)
			n=${comm#CPU }
			echo "${n%/*} ${t##*/}" ;;
		esac
	done | sort -n
}

# e2e_vcpu_tid DOMAIN VCPU: one vCPU's thread ID.
e2e_vcpu_tid() {
	local tid
	tid=$(e2e_vcpu_tids "$1" | awk -v v="$2" '$1 == v { print $2 }')
	[ -n "$tid" ] || e2e_fail "$1: no thread for vCPU $2"
	echo "$tid"
}

# e2e_hwloc_xml SYNTHETIC OUT: write an hwloc XML topology from a synthetic
# description, e.g. "pack:1 l3:2 core:1 pu:1" presents a 2-CPU host as two
# LLCs (PU OS indexes 0..N-1, the host's own CPU numbers).
e2e_hwloc_xml() {
	e2e_need lstopo-no-graphics
	lstopo-no-graphics --input "$1" --of xml "$2" 2>/dev/null ||
		e2e_fail "lstopo-no-graphics --input '$1' failed"
}

# e2e_task_dir TID: /proc/<tgid>/task/<TID>. Use it for per-thread files:
# /proc/<TID>/stat (and schedstat, io) of a non-leader thread silently gives
# the whole process's numbers; only the task/ entry is the thread's own.
e2e_task_dir() {
	local tgid
	tgid=$(awk '/^Tgid:/ { print $2 }' "/proc/$1/status" 2>/dev/null) &&
		[ -n "$tgid" ] || e2e_fail "thread $1 does not exist"
	echo "/proc/$tgid/task/$1"
}

# e2e_cpus_allowed TID: the thread's Cpus_allowed_list from /proc.
e2e_cpus_allowed() {
	local d
	d=$(e2e_task_dir "$1")
	awk '/^Cpus_allowed_list:/ { print $2 }' "$d/status" 2>/dev/null |
		grep . || e2e_fail "no Cpus_allowed_list in $d/status"
}

# e2e_thread_cpu_ms TID: CPU time (user + system) the thread used so far.
e2e_thread_cpu_ms() {
	local s d
	d=$(e2e_task_dir "$1")
	s=$(cat "$d/stat" 2>/dev/null) || e2e_fail "no $d/stat"
	s=${s##*) }
	set -- $s
	echo $(((${12} + ${13}) * 1000 / E2E_CLK))
}
