#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# test_units.sh - static checks of the systemd units in packaging/systemd:
# systemd-analyze verify (this machine does not run systemd as PID 1, so
# nothing is started) and the hardening settings docs/install.md lists. The binaries are
# not installed here: the copies verified point ExecStart at /bin/true;
# test_packaging.sh verifies the installed llcd.service as it is.
# Usage: test_units.sh SRC_DIR
set -euo pipefail
src=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok   $*"; }
command -v systemd-analyze >/dev/null || fail "no systemd-analyze: run scripts/install-deps (package systemd)"
work=$(mktemp -d /tmp/llcd-units.XXXXXX)
trap 'rm -rf "$work"' EXIT

units=("$src/packaging/systemd/llcd.service" "$src/guest-tools/llc-guest.service")
for f in "${units[@]}"; do
	u=$(basename "$f")
	sed 's|^ExecStart=/usr/sbin/[a-z-]*|ExecStart=/bin/true|; s|^ExecReload=/usr/bin/llcctl|ExecReload=/bin/true|' "$f" > "$work/$u"
	out=$(systemd-analyze verify --man=no "$work/$u" 2>&1) || fail "$u: systemd-analyze verify: $out"
	[ -z "$out" ] || fail "$u: systemd-analyze verify says: $out"
done
ok "systemd-analyze verify: $(cd "$work" && echo *.service)"

u=$src/packaging/systemd/llcd.service
for want in Type=notify 'ExecStart=/usr/sbin/llcd -f /etc/llcd/llcd.conf' 'ExecReload=/usr/bin/llcctl reload' \
	RuntimeDirectory=llcd StateDirectory=llcd ProtectSystem=strict ProtectHome=yes \
	NoNewPrivileges=yes PrivateTmp=yes RestrictAddressFamilies=AF_UNIX Restart=on-failure \
	PrivateNetwork=yes IPAddressDeny=any UMask=0077 ProtectProc=ptraceable 'SystemCallFilter=~@resources' \
	'CapabilityBoundingSet=CAP_CHOWN CAP_SYS_PTRACE CAP_SYS_NICE CAP_PERFMON CAP_BPF' 'SystemCallFilter=@system-service perf_event_open bpf' \
	'SystemCallFilter=sched_setaffinity move_pages setpriority' PrivateMounts=yes 'After=libvirtd.service virtqemud.service libvirtd.socket virtqemud.socket'; do
	grep -qxF -- "$want" "$u" || fail "llcd.service lacks '$want'"
done
# the filter lines in this order: the allow list, @resources taken out of
# it, then the three calls of @resources llcd makes put back (a later line
# adds to or removes from the first line's list, systemd.exec(5))
filters=$(sed -n 's/^SystemCallFilter=//p' "$u" | tr '\n' '|')
[ "$filters" = "@system-service perf_event_open bpf|~@resources|sched_setaffinity move_pages setpriority|" ] ||
	fail "llcd.service: SystemCallFilter= lines are '$filters'"
# ProtectSystem=strict: nothing writable but the runtime and state dirs
! grep -E '^(ReadWritePaths|ConfigurationDirectory|LogsDirectory|CacheDirectory)=' "$u" ||
	fail "llcd.service makes more than /run/llcd and /var/lib/llcd writable"
ok "llcd.service: notify, reload, directories, hardening"
out=$(systemd-analyze security --offline=yes "$work/llcd.service" 2>&1 | tail -1) || true
echo "     systemd-analyze security: ${out#→ }"
echo "units: all checks passed"
