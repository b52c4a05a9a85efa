#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# test_nspawn.sh - the built .deb under a real systemd.
#
# Boots a minimal Debian 12 root with systemd as PID 1 in systemd-nspawn
# (mmdebstrap --variant=minbase, with systemd, dbus, libvirtd, QEMU and
# llcd's run-time dependencies; cached under $LLCD_TEST_CACHE, default
# /var/cache/llcd-test, keyed on that package list), on an overlay so the
# cached root stays clean, and there:
#   - installs the .deb with libvirtd stopped: the postinst starts llcd,
#     which reaches active (Type=notify: READY=1 after its first period)
#     and says in STATUS= and the journal that it waits for libvirt;
#   - starts libvirtd: llcd connects by itself;
#   - starts a TCG domain (2 vCPUs, no disk: the BIOS finds nothing to
#     boot, its vCPU threads run) annotated mode static: llcd, confined by
#     the unit's sandbox, pins it (libvirt socket, /proc of QEMU's threads
#     under ProtectProc=ptraceable, its state and runtime directories);
#   - systemctl reload re-reads llcd.conf (period-ms changes);
#   - metrics-listen without the drop-in: systemctl reload fails, llcd
#     says why and keeps running;
#     with the packaged metrics.conf.example drop-in, /metrics answers;
#   - systemd-analyze security llcd.service: recorded, and the test fails
#     when the exposure is above the score docs/install.md states;
#   - the memory-node reader (move_pages in query mode, under the unit's
#     system call filter) says on which node t1's memory is;
#   - systemctl stop: the domain keeps its pins (fail-static);
#   - backend qmp under the same unit: a TCG QEMU started the way Proxmox
#     does (no libvirt, -qmp at /var/run/qemu-server/VMID.qmp, a policy
#     file in /etc/llcd/policy), run as another user (-runas nobody): llcd
#     pins its vCPU threads itself (sched_setaffinity; another uid's threads
#     need CAP_SYS_NICE) and its other threads as the emulator's, reads its
#     memory node (move_pages), and its recommendation thread runs at
#     nice 19 (setpriority); nothing in the journal failed.
# Usage: test_nspawn.sh SRC_DIR DEB_DIR (DEB_DIR without llcd_*.deb: built
# there with packaging/build-deb.sh)
set -euo pipefail
src=$(cd "$1" && pwd)
debs=$2
cache=${LLCD_TEST_CACHE:-/var/cache/llcd-test}
t0=$(date +%s)
work= npid= leader= mounted=0
fail() {
	echo "FAIL: $*" >&2
	if [ -n "$leader" ]; then
		echo "--- journal of llcd:" >&2
		nsenter -t "$leader" -a journalctl -u llcd --no-pager -n 15 >&2 2>&1 || true
	fi
	exit 1
}
ok() { echo "ok   $*  [$(($(date +%s) - t0)) s]"; }
cleanup() {
	set +e
	if [ -n "$leader" ]; then
		nsenter -t "$leader" -a virsh -q destroy t1 >/dev/null 2>&1
		nsenter -t "$leader" -a systemctl poweroff >/dev/null 2>&1
	fi
	if [ -n "$npid" ]; then
		for _ in $(seq 100); do kill -0 "$npid" 2>/dev/null || break; sleep 0.2; done
		# still there: nspawn's second SIGTERM terminates at once
		kill -0 "$npid" 2>/dev/null && { kill -TERM "$npid"; sleep 1; kill -TERM "$npid"; }
		wait "$npid" 2>/dev/null
	fi
	[ "$mounted" = 1 ] && umount "$work/root"
	[ -n "$work" ] && rm -rf "$work"
}
trap cleanup EXIT

[ "$(id -u)" = 0 ] || fail "this test needs root (mmdebstrap, systemd-nspawn, overlay mounts)"
for t in mmdebstrap systemd-nspawn nsenter flock curl; do
	command -v $t >/dev/null || fail "no $t: run scripts/install-deps (scripts/deps/packaging.txt)"
done
mkdir -p "$debs"
if ! ls "$debs"/llcd_*.deb >/dev/null 2>&1; then
	echo "---- building the .deb in $debs"
	"$src/packaging/build-deb.sh" "$debs" > "$debs/build.log" 2>&1 || { tail -20 "$debs/build.log" >&2; fail "build-deb.sh"; }
fi
deb=$(ls "$debs"/llcd_*.deb | head -1)

# --- the root: cached, keyed on its package list ------------------------------------
deps=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed 's/(.*)//; s/|.*//; s/[[:space:]]//g' | grep -v '^$')
pkgs=$(printf '%s\n' systemd systemd-sysv dbus libvirt-daemon-system libvirt-daemon-driver-qemu libvirt-clients \
	qemu-system-x86 $deps | sort -u | tr '\n' ' ')
key=$(echo "bookworm minbase $pkgs" | sha256sum | cut -c1-16)
mkdir -p "$cache"
base=$cache/nspawn-root-$key
(
	flock 9
	if [ ! -e "$base/.complete" ]; then
		echo "---- mmdebstrap (once per package list; cached as $base): $pkgs"
		rm -rf "$base.tmp"
		mmdebstrap --quiet --variant=minbase --include="$(tr ' ' ',' <<<"${pkgs% }")" bookworm "$base.tmp" \
			> "$cache/mmdebstrap.log" 2>&1 || { tail -20 "$cache/mmdebstrap.log" >&2; exit 1; }
		touch "$base.tmp/.complete"
		mv "$base.tmp" "$base"
		# roots of older package lists
		for old in "$cache"/nspawn-root-*; do [ "$old" = "$base" ] || rm -rf "$old"; done
	fi
) 9>"$cache/lock" || fail "mmdebstrap failed (above)"
ok "Debian 12 root with systemd, libvirtd, QEMU and llcd's dependencies ($base)"

work=$(mktemp -d /var/tmp/llcd-nspawn.XXXXXX)
mkdir "$work/upper" "$work/ovl" "$work/root"
mount -t overlay overlay -o "lowerdir=$base,upperdir=$work/upper,workdir=$work/ovl" "$work/root" || fail "overlay mount"
mounted=1
cp "$deb" "$work/root/root/llcd.deb"
cat > "$work/root/root/t1.xml" <<'XML'
<domain type='qemu'>
  <name>t1</name>
  <memory unit='MiB'>32</memory>
  <vcpu>2</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <metadata><llc-policy xmlns='urn:llcd:llc-policy:1' mode='static'/></metadata>
  <devices><emulator>/usr/bin/qemu-system-x86_64</emulator><memballoon model='none'/></devices>
</domain>
XML
SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 systemd-nspawn -q -D "$work/root" --boot --register=no --keep-unit \
	--console=pipe > "$work/console.log" 2>&1 &
npid=$!
# the container's PID 1 is the child of nspawn that runs systemd (nspawn
# forks helpers first)
for _ in $(seq 200); do
	leader=$(pgrep -P "$npid" -x systemd || true)
	[ -n "$leader" ] && break
	kill -0 "$npid" 2>/dev/null || break
	sleep 0.1
done
[ -n "$leader" ] || fail "systemd-nspawn started no container: $(cat "$work/console.log")"
ct() { nsenter -t "$leader" -a "$@"; }
# before systemd's bus is up, systemctl fails at once: retry
state=
for _ in $(seq 120); do
	state=$(timeout 60 nsenter -t "$leader" -a systemctl is-system-running --wait 2>/dev/null) || true
	case $state in running|degraded) break ;; esac
	sleep 0.5
done
[ "$state" = running ] || fail "the container's systemd is '$state': $(ct systemctl --failed --no-pager)"
[ "$(ct readlink /proc/1/exe)" = /usr/lib/systemd/systemd ] || [ "$(ct readlink /proc/1/exe)" = /lib/systemd/systemd ] ||
	fail "PID 1 in the container is $(ct readlink /proc/1/exe)"
ok "systemd $(ct systemctl --version | head -1 | cut -d' ' -f2) is PID 1 in systemd-nspawn, multi-user.target reached"

# journal lines of llcd since it started
jl() { ct journalctl -u llcd -o cat --no-pager; }
waitlog() { # PATTERN SECONDS
	for _ in $(seq $(($2 * 5))); do grep -q -- "$1" <<<"$(jl)" && return 0; sleep 0.2; done
	return 1
}

# --- install with libvirtd not up --------------------------------------------------------
ct systemctl stop libvirtd.socket libvirtd-ro.socket libvirtd-admin.socket libvirtd.service
ct systemctl mask --runtime --quiet libvirtd.socket libvirtd-ro.socket libvirtd-admin.socket libvirtd.service
ct dpkg -i /root/llcd.deb > "$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "dpkg -i llcd.deb"; }
[ "$(ct systemctl is-enabled llcd)" = enabled ] || fail "the postinst did not enable llcd"
[ "$(ct systemctl is-active llcd)" = active ] || fail "llcd is $(ct systemctl is-active llcd) after dpkg -i"
[ "$(ct systemctl show -P Type llcd)" = notify ] || fail "llcd.service is not Type=notify"
st=$(ct systemctl show -P StatusText llcd)
grep -q "waiting for libvirt at qemu:///system" <<<"$st" || fail "STATUS= without libvirt: '$st'"
grep -q "cannot connect to qemu:///system.*retrying with backoff" <<<"$(jl)" || fail "llcd does not log that it waits for libvirt"
ok "dpkg -i starts llcd without libvirtd: active (READY=1), status '$st'"

ct systemctl unmask --runtime --quiet libvirtd.socket libvirtd-ro.socket libvirtd-admin.socket libvirtd.service
ct systemctl start libvirtd.socket libvirtd
waitlog "libvirt qemu:///system: connected" 40 || fail "llcd did not connect once libvirtd was up"
st=$(ct systemctl show -P StatusText llcd)
[ "$st" = "connected to libvirt at qemu:///system" ] || fail "STATUS= after connecting: '$st'"
ok "libvirtd started: llcd connects by itself ($st)"

# --- a domain, placed by the confined llcd -------------------------------------------------
ct virsh -q define /root/t1.xml >/dev/null || fail "virsh define"
ct virsh -q start t1 >/dev/null || fail "virsh start t1 (TCG)"
for _ in $(seq 50); do ct llcctl list 2>/dev/null | grep -Eq '^t1 +managed +static' && break; sleep 0.2; done
ct llcctl list | grep -Eq '^t1 +managed +static' || fail "t1 is not managed: $(ct llcctl list)"
ncpu=$(ct nproc)
pins=
for _ in $(seq 50); do
	pins=$(ct virsh -q vcpupin t1 | awk '{ print $2 }' | tr '\n' ' ')
	# static: each vCPU on one CPU of its own
	[ "$(tr ' ' '\n' <<<"$pins" | grep -c '^[0-9]\+$')" = 2 ] && break
	sleep 0.2
done
[ "$(tr ' ' '\n' <<<"$pins" | grep -c '^[0-9]\+$')" = 2 ] || fail "t1's vCPUs are not pinned one CPU each: $pins"
# the vCPU TIDs and last CPUs come from QEMU's /proc/PID/task (ProtectProc=ptraceable)
ct llcctl vcpuinfo t1 | awk 'NR > 1 && $2 !~ /^[0-9]+$/ { exit 1 }' || fail "vcpuinfo without TIDs: $(ct llcctl vcpuinfo t1)"
qemu_user=$(ct stat -c %U /proc/"$(ct cat /run/libvirt/qemu/t1.pid)")
ct test -s /var/lib/llcd/live.state || fail "no state file in /var/lib/llcd"
[ "$(ct stat -c '%a %U %G' /run/llcd/llcd.sock)" = "660 root llcd" ] || fail "socket: $(ct stat -c '%a %U %G' /run/llcd/llcd.sock)"
ok "the sandboxed llcd pins t1 (QEMU as $qemu_user, $ncpu CPUs): vCPUs on $pins; /proc, state file, socket 0660 root:llcd"
# memnode_ok DOMAIN: the memory-node reader answered (a node, or none of
# them holds most sampled pages); "unknown: ..." is a refused read
memnode_ok() {
	local m
	for _ in $(seq 50); do
		m=$(ct llcctl dominfo "$1" 2>/dev/null | grep '^memory_node' || true)
		[ -n "$m" ] && break
		sleep 0.2
	done
	grep -Eq '^memory_node +([0-9]+|none) \(' <<<"$m" || fail "$1: the memory-node reader under the unit: '${m:-no memory_node in dominfo}'"
	sed 's/^memory_node *//' <<<"$m"
}
mem=$(memnode_ok t1)
ok "the memory-node reader under the unit (move_pages, query): t1's memory on node $mem"

# --- reload ---------------------------------------------------------------------------------------
echo "period-ms 500" >> "$work/root/etc/llcd/llcd.conf"
ct systemctl reload llcd || fail "systemctl reload llcd failed: $(ct systemctl status llcd --no-pager | tail -5)"
waitlog "reloaded /etc/llcd/llcd.conf" 10 || fail "systemctl reload: no 'reloaded' in the journal"
[ "$(ct llcctl --json stats | grep -o '"period_ms": *[0-9]*' | grep -o '[0-9]*$')" = 500 ] || fail "period-ms 500 not in effect after reload"
ok "systemctl reload llcd re-reads llcd.conf (period-ms 500 in effect)"

# --- metrics: closed by the unit, opened by the drop-in ---------------------------------------------
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "metrics-listen $port" >> "$work/root/etc/llcd/llcd.conf"
! ct systemctl reload llcd 2>/dev/null || fail "systemctl reload succeeded with metrics-listen under the stock unit"
waitlog "reload failed.*cannot create an AF_INET socket.*metrics.conf.example" 10 ||
	fail "metrics-listen under the stock unit: no clear reload error"
[ "$(ct systemctl is-active llcd)" = active ] || fail "a refused reload stopped llcd"
mkdir -p "$work/root/etc/systemd/system/llcd.service.d"
ct cp /usr/share/doc/llcd/examples/metrics.conf.example /etc/systemd/system/llcd.service.d/metrics.conf
ct systemctl daemon-reload
ct systemctl restart llcd || fail "restart with the metrics drop-in"
[ "$(ct systemctl is-active llcd)" = active ] || fail "llcd with the metrics drop-in is $(ct systemctl is-active llcd)"
body=
for _ in $(seq 50); do body=$(curl -sf "http://127.0.0.1:$port/metrics" || true); [ -n "$body" ] && break; sleep 0.2; done
grep -q '^llcd_domains_managed 1$' <<<"$body" || fail "GET /metrics from the unit: $(head -c 300 <<<"$body")"
grep -q '^llcd_info{version="[^"]*",backend="libvirt"} 1$' <<<"$body" || fail "no llcd_info backend=libvirt"
ok "metrics-listen: refused by the stock unit with a pointer to the drop-in; with metrics.conf.example /metrics answers"
ct rm /etc/systemd/system/llcd.service.d/metrics.conf
sed -i '/^metrics-listen /d' "$work/root/etc/llcd/llcd.conf"
ct systemctl daemon-reload
ct systemctl restart llcd
[ "$(ct systemctl is-active llcd)" = active ] || fail "llcd did not restart without the drop-in"

# --- systemd-analyze security ---------------------------------------------------------------------------
ct systemd-analyze security --no-pager llcd.service > "$work/security.txt" 2>&1 || true
score=$(sed -n 's/.*Overall exposure level for llcd.service: \([0-9.]*\).*/\1/p' "$work/security.txt")
[ -n "$score" ] || { cat "$work/security.txt" >&2; fail "no score from systemd-analyze security"; }
grep '✗' "$work/security.txt" | sed 's/^/     /' | cut -c1-150
# the score docs/install.md records is the bound
want=$(sed -n 's/.*`systemd-analyze security llcd.service`[^*]*\*\*\([0-9.]*\) .*/\1/p' "$src/docs/install.md" | head -1)
[ -n "$want" ] || fail "docs/install.md records no score as **N.N ...** after \`systemd-analyze security llcd.service\`"
awk -v s="$score" -v w="$want" 'BEGIN { exit !(s <= w) }' ||
	fail "systemd-analyze security llcd.service: exposure $score, worse than the $want docs/install.md records"
ok "systemd-analyze security llcd.service: exposure $score (docs/install.md: $want)"

# --- stop: fail-static ---------------------------------------------------------------------------------
for _ in $(seq 50); do ct llcctl list 2>/dev/null | grep -Eq '^t1 +managed' && break; sleep 0.2; done
before=$(ct virsh -q vcpupin t1 | awk '{ print $2 }' | tr '\n' ' ')
ct systemctl stop llcd
[ "$(ct systemctl is-active llcd)" = inactive ] || fail "llcd is $(ct systemctl is-active llcd) after stop"
grep -q "pins stay where they are (fail-static)" <<<"$(jl)" || fail "llcd did not log its fail-static stop"
after=$(ct virsh -q vcpupin t1 | awk '{ print $2 }' | tr '\n' ' ')
[ "$before" = "$after" ] || fail "pins changed by systemctl stop: '$before' -> '$after'"
[ "$before" = "$pins" ] || fail "pins before the stop '$before' are not llcd's '$pins'"
ct test ! -e /run/llcd/llcd.sock || fail "llcd left its socket behind"
ok "systemctl stop llcd: inactive, t1 keeps its pins ($after)"

# --- backend qmp: llcd pins QEMU's threads itself ------------------------------------------------
# VMID 200, named t2 (query-name), run as nobody after QEMU has bound its
# sockets as root (-runas: the QMP peer is root, its threads nobody's)
ct mkdir -p /var/run/qemu-server /etc/llcd/policy
echo "<llc-policy xmlns='urn:llcd:llc-policy:1' mode='static'/>" > "$work/root/etc/llcd/policy/t2.xml"
ct systemd-run -q --unit=llcd-test-t2 /usr/bin/qemu-system-x86_64 -accel tcg -name t2,debug-threads=on \
	-machine pc -smp 2 -m 32 -display none -nodefaults -no-reboot -runas nobody \
	-qmp unix:/var/run/qemu-server/200.qmp,server=on,wait=off || fail "systemd-run QEMU t2"
qpid=
for _ in $(seq 50); do
	qpid=$(ct systemctl show -P MainPID llcd-test-t2)
	[ "$qpid" != 0 ] && ct test -S /var/run/qemu-server/200.qmp && [ "$(ct stat -c %U /proc/"$qpid")" = nobody ] && break
	sleep 0.2
done
ct test -S /var/run/qemu-server/200.qmp || fail "QEMU t2 made no QMP socket: $(ct journalctl -u llcd-test-t2 -o cat --no-pager | tail -5)"
[ "$(ct stat -c %U /proc/"$qpid")" = nobody ] || fail "QEMU t2 (pid $qpid) runs as $(ct stat -c %U /proc/"$qpid"), not nobody"
sed -i 's/^backend .*//' "$work/root/etc/llcd/llcd.conf"
echo "backend qmp" >> "$work/root/etc/llcd/llcd.conf"
since=$(ct date '+%Y-%m-%d %H:%M:%S')
ct systemctl start llcd || fail "systemctl start llcd with backend qmp: $(ct systemctl status llcd --no-pager | tail -5)"
for _ in $(seq 100); do ct llcctl list 2>/dev/null | grep -Eq '^t2 +managed +static' && break; sleep 0.2; done
ct llcctl list | grep -Eq '^t2 +managed +static' || fail "t2 (backend qmp) is not managed: $(ct llcctl list)"
# vcpu_cpus N: the Cpus_allowed_list of QEMU's thread "CPU N/TCG"
vcpu_cpus() {
	local t
	for t in $(ct ls /proc/"$qpid"/task); do
		[ "$(ct cat /proc/"$qpid"/task/"$t"/comm 2>/dev/null)" = "CPU $1/TCG" ] || continue
		ct sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/"$qpid"/task/"$t"/status
		return 0
	done
	echo "no thread 'CPU $1/TCG'"
}
qpins=
for _ in $(seq 50); do
	qpins="$(vcpu_cpus 0) $(vcpu_cpus 1)"
	# static: each vCPU on one CPU of its own
	grep -Eq '^[0-9]+ [0-9]+$' <<<"$qpins" && [ "${qpins% *}" != "${qpins#* }" ] && break
	sleep 0.2
done
grep -Eq '^[0-9]+ [0-9]+$' <<<"$qpins" && [ "${qpins% *}" != "${qpins#* }" ] ||
	fail "t2's vCPU threads are not pinned one CPU each (Cpus_allowed_list: $qpins)"
# what llcd says it did is what the kernel has
vi=$(ct llcctl vcpuinfo t2)
for v in 0 1; do
	c=$(awk -v v=$v 'NR > 1 && $1 == v { print $4 }' <<<"$vi")
	[ "$c" = "$(vcpu_cpus $v)" ] || fail "t2 vCPU $v: llcctl vcpuinfo says '$c', the kernel $(vcpu_cpus $v): $vi"
done
mem=$(memnode_ok t2)
# the recommendation thread (started by the first topology question) lowers
# its own priority
ct llcctl topology t2 >/dev/null || fail "llcctl topology t2: $(ct llcctl topology t2 2>&1)"
lpid=$(ct systemctl show -P MainPID llcd)
nice19=
for _ in $(seq 25); do
	for t in $(ct ls /proc/"$lpid"/task); do
		[ "$(ct awk '{ sub(/.*\) /, ""); print $17 }' /proc/"$lpid"/task/"$t"/stat 2>/dev/null)" = 19 ] && nice19=$t
	done
	[ -n "$nice19" ] && break
	sleep 0.2
done
[ -n "$nice19" ] || fail "no thread of llcd (pid $lpid) at nice 19 after llcctl topology: setpriority refused?"
# llcd's own lines: no pin failed (vCPU or emulator), no memory read
bad=$(ct journalctl -t llcd -o cat --no-pager --since "$since" |
	grep -E 'failed permanently|failed \(|memory lives is unknown|sched_setaffinity|move_pages' || true)
[ -z "$bad" ] || fail "backend qmp under the unit: $bad"
ok "backend qmp under the unit: t2 (QEMU as nobody) pinned by llcd itself, vCPUs on $qpins; memory on node $mem; recommendation thread $nice19 at nice 19"
echo "nspawn: all checks passed in $(($(date +%s) - t0)) s"
