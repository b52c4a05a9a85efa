#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# test_packaging.sh - build the packages, lint them, install the .deb on this
# machine, run and talk to the installed daemon (llcd-sim), purge it again.
#
# It runs the shell commands of README.md's "Install on a KVM host" section
# as they are written, in order, with these stand-ins for what needs a real
# KVM host (this machine does not boot systemd and has no libvirt domain
# managed by llcd):
#   sudo       runs the command (the test runs as root)
#   apt        apt with -y and a dpkg lock timeout (other sessions share dpkg)
#   systemctl  "enable --now llcd" installs the llcd-sim package built
#              beside llcd's and runs the ExecStart= line of the installed
#              llcd.service under this script (a background process it
#              tracks), with the installed llcd-sim in place of llcd (the
#              same daemon on a simulated host: the line's options, -d to
#              log to stderr, the service's socket, and the scenario
#              /usr/share/llcd-sim/scenarios/xiangshan-8ccx.json), confined
#              as the unit confines it where setpriv can: the unit's
#              CapabilityBoundingSet= and NoNewPrivileges=
#   virsh      "metadata D --uri urn:llcd:llc-policy:1 ... --set XML" hands
#              XML to that llcd with `llcctl policy D --xml XML`
#   DOMAIN=... is set to the simulated host's domain, xs
# Then: lintian (no E:), the installed files and conffile (llcd has no
# simulator: that is in llcd-sim, with the scenarios), the llcd group,
# the socket's mode, llcctl as a group member, bash completion, SIGHUP,
# systemd-analyze verify of the installed unit, the rpm (rpmbuild) and its
# file list against the .deb's, SIGTERM, and purge: the machine is left as it
# was (the llcd group is removed again if this test created it).
#
# Installing on the machine rather than into a chroot: dpkg --root needs a
# whole Debian root for the maintainer scripts; installing here runs the
# real postinst (addgroup) and llcd against the real /etc and /run. The
# test refuses to run if an llcd package is already installed.
# Usage: test_packaging.sh SRC_DIR
set -euo pipefail
src=$(cd "$1" && pwd)
t0=$(date +%s)
work=$(mktemp -d /tmp/llcd-pkgtest.XXXXXX)
chmod 755 "$work"
pid= installed=0 made_group=0 made_run=0
fail() {
	echo "FAIL: $*" >&2
	[ -s "$work/llcd.log" ] && { echo "--- llcd log:" >&2; tail -20 "$work/llcd.log" >&2; }
	exit 1
}
ok() { echo "ok   $*  [$(($(date +%s) - t0)) s]"; }
cleanup() {
	set +e
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	if [ "$installed" = 1 ]; then
		for p in llcd-sim llcd; do
			dpkg -s "$p" >/dev/null 2>&1 && apt-get -o DPkg::Lock::Timeout=300 purge -y -qq "$p" >/dev/null 2>&1
		done
	fi
	[ "$made_group" = 1 ] && getent group llcd >/dev/null && groupdel llcd
	[ "$made_run" = 1 ] && rm -rf /run/llcd
	rm -rf "$work" "${out:-/nonexistent}"
}
trap cleanup EXIT

[ "$(id -u)" = 0 ] || fail "this test needs root: it installs and purges the llcd package"
# one at a time on this machine: it installs into the machine's dpkg and /run/llcd
exec 8>/run/lock/llcd-packaging-test.lock
flock -w 900 8 || fail "another packaging test holds /run/lock/llcd-packaging-test.lock"
for t in dpkg-buildpackage lintian rpmbuild apt-get; do
	command -v "$t" >/dev/null || fail "no $t: run scripts/install-deps (scripts/deps/packaging.txt)"
done
for p in llcd llcd-sim; do
	if dpkg -s "$p" >/dev/null 2>&1; then fail "an $p package is already installed; this test would replace it"; fi
done
getent group llcd >/dev/null || made_group=1
[ -e /run/llcd ] || made_run=1
[ ! -S /run/llcd/llcd.sock ] || fail "/run/llcd/llcd.sock exists: is an llcd running on this machine?"

# --- the README section, as written ----------------------------------------
# shell lines of the ```sh blocks between "## Install on a KVM host" and the
# next "## " heading
awk '/^## Install on a KVM host/ { on = 1; next } /^## / { on = 0 }
     on && /^```sh/ { blk = 1; next } on && /^```/ { blk = 0; next } on && blk' \
	"$src/README.md" > "$work/readme.sh"
[ "$(grep -c . "$work/readme.sh")" -ge 10 ] || fail "README section: found only $(grep -c . "$work/readme.sh") shell lines"
for want in 'build-deb.sh' 'apt install' 'llcd -n' 'llcd -nv' 'systemctl enable --now llcd' \
	'virsh metadata' 'llcctl policy "$DOMAIN" --mode aggregate' 'llcctl list' 'llcctl map'; do
	grep -qF -- "$want" "$work/readme.sh" || fail "README section has no '$want'"
done

sudo() { "$@"; }
apt() { command apt-get -o DPkg::Lock::Timeout=300 -y -q "$@" >"$work/apt.log" 2>&1 || { cat "$work/apt.log" >&2; return 1; }; installed=1; }
systemctl() {
	[ "$*" = "enable --now llcd" ] || fail "systemctl stand-in: unexpected 'systemctl $*'"
	local exec
	exec=$(sed -n 's/^ExecStart=//p' /lib/systemd/system/llcd.service)
	[ -n "$exec" ] || fail "no ExecStart= in the installed llcd.service"
	[ "${exec%% *}" = /usr/sbin/llcd ] || fail "ExecStart= runs ${exec%% *}, not /usr/sbin/llcd"
	command apt-get -o DPkg::Lock::Timeout=300 -y -q install "$out"/llcd-sim_*.deb >"$work/apt-sim.log" 2>&1 ||
		{ cat "$work/apt-sim.log" >&2; fail "installing llcd-sim failed"; }
	# CapabilityBoundingSet=CAP_A CAP_B -> setpriv --bounding-set -all,+a,+b
	local caps
	caps=$(sed -n 's/^CapabilityBoundingSet=//p' /lib/systemd/system/llcd.service | tr 'A-Z' 'a-z' |
		sed 's/cap_/+/g; s/ /,/g')
	[ -n "$caps" ] || fail "no CapabilityBoundingSet= in the installed llcd.service"
	setpriv --bounding-set "-all,$caps" --inh-caps=-all --no-new-privs \
		/usr/bin/llcd-sim ${exec#* } -d --socket /run/llcd/llcd.sock \
		/usr/share/llcd-sim/scenarios/xiangshan-8ccx.json >"$work/llcd.log" 2>&1 &
	pid=$!
	for _ in $(seq 50); do [ -S /run/llcd/llcd.sock ] && return 0; sleep 0.1; done
	fail "the installed llcd-sim did not create /run/llcd/llcd.sock"
}
virsh() {
	local dom=$2 xml=
	[ "$1" = metadata ] || fail "virsh stand-in: unexpected 'virsh $*'"
	shift 2
	while [ $# -gt 0 ]; do
		case $1 in
		--uri) [ "$2" = urn:llcd:llc-policy:1 ] || fail "virsh metadata: --uri $2"; shift ;;
		--key) [ "$2" = llc ] || fail "virsh metadata: --key $2"; shift ;;
		--set) xml=$2; shift ;;
		--live|--config) ;;
		*) fail "virsh stand-in: unexpected argument '$1'" ;;
		esac
		shift
	done
	llcctl policy "$dom" --xml "$xml" >/dev/null
}
# the one substitution: the domain is the simulated host's
sed -i 's/^DOMAIN=[^ ]*/DOMAIN=xs/' "$work/readme.sh"

cd "$src"
echo "---- README.md, Install on a KVM host:"
sed 's/^/     /' "$work/readme.sh"
. "$work/readme.sh" > "$work/readme.out" 2>&1 || { cat "$work/readme.out" >&2; fail "a README command failed (above)"; }
echo "---- its output:"
sed 's/^/     /' "$work/readme.out"
grep -q "^llcd: configuration OK" "$work/readme.out" || fail "README: llcd -n did not say configuration OK"
grep -q "^socket-group llcd" "$work/readme.out" || fail "README: llcd -nv output"
grep -Eq "^xs +managed +aggregate +none +128 " "$work/readme.out" || fail "README: llcctl list does not show xs managed, aggregate"
[ "$(grep -c '^LLC' "$work/readme.out")" = 8 ] || fail "README: llcctl map does not show 8 LLCs"
grep -q "^mode *aggregate" "$work/readme.out" || fail "README: llcctl dominfo does not show mode aggregate"
ok "the README section runs as written (build, install, llcd -n, start, annotate, list, map)"

# --- the .deb ------------------------------------------------------------------
deb=$(ls "$out"/llcd_*.deb)
lintian --fail-on error --display-level '>=warning' "$out"/*.changes > "$work/lintian" 2>&1 || true
sed 's/^/     lintian: /' "$work/lintian"
! grep -q '^E:' "$work/lintian" || fail "lintian reports errors (above)"
ok "lintian: no errors ($(grep -c '^W:' "$work/lintian" || true) warnings)"

# every unit in a .deb is where dh_installsystemd enables it (postinst)
for d in "$out"/*.deb; do
	units=$(dpkg-deb -c "$d" | awk '{ print $6 }' | grep '\.service$' || true)
	[ -z "$units" ] && continue
	grep -vq '^\./lib/systemd/system/' <<<"$units" && fail "$(basename "$d"): a unit outside /lib/systemd/system: $units"
	grep -q deb-systemd-helper <<<"$(dpkg-deb -I "$d" postinst 2>/dev/null)" ||
		fail "$(basename "$d"): postinst does not enable its unit"
done
ok "units in /lib/systemd/system, enabled by the postinst"

for f in /usr/sbin/llcd /usr/bin/llcctl /usr/bin/llc-qmp /usr/bin/llcd-place /usr/bin/llc-guesttopo \
	/etc/llcd/llcd.conf /lib/systemd/system/llcd.service /usr/share/bash-completion/completions/llcctl \
	/usr/share/man/man8/llcd.8.gz /usr/share/man/man8/llcctl.8.gz /usr/share/man/man5/llcd.conf.5.gz \
	/usr/share/man/man5/llc-policy.5.gz /usr/share/doc/llcd/docs/install.md; do
	[ "$(dpkg -S "$f" 2>/dev/null | cut -d: -f1)" = llcd ] || fail "$f is not from the installed llcd package"
done
for f in /usr/bin/llcd-sim /usr/bin/llcsim /usr/share/llcd-sim/scenarios/xiangshan-8ccx.json \
	/usr/share/man/man8/llcd-sim.8.gz /usr/share/man/man1/llcsim.1.gz; do
	[ "$(dpkg -S "$f" 2>/dev/null | cut -d: -f1)" = llcd-sim ] || fail "$f is not from the installed llcd-sim package"
done
! dpkg -L llcd | grep -v '^/usr/share/doc/' | grep -E 'llcsim|llcd-sim|scenario' || fail "the llcd package ships the simulator (above)"
# the installed binaries are stripped: the simulator's strings show it (the
# back-end name llcsim), in llcd-sim and not in llcd
grep -q llcsim /usr/bin/llcd-sim || fail "/usr/bin/llcd-sim does not name its llcsim back-end"
! grep -q llcsim /usr/sbin/llcd || fail "/usr/sbin/llcd carries the simulator (the string llcsim)"
grep -q '^ /etc/llcd/llcd.conf ' <<<"$(dpkg-query -W -f='${Conffiles}\n' llcd)" || fail "/etc/llcd/llcd.conf is not a conffile"
cmp -s /etc/llcd/llcd.conf "$src/packaging/llcd.conf" || fail "/etc/llcd/llcd.conf is not packaging/llcd.conf"
getent group llcd >/dev/null || fail "postinst did not create the group llcd"
[ "$(stat -c '%a %U %G' /run/llcd/llcd.sock)" = "660 root llcd" ] || fail "socket is $(stat -c '%a %U %G' /run/llcd/llcd.sock)"
# the bounding set is the unit's CapabilityBoundingSet= (bits from
# linux/capability.h), nothing more
unitcaps=$(sed -n 's/^CapabilityBoundingSet=//p' /lib/systemd/system/llcd.service)
mask=0
for c in $unitcaps; do
	bit=$(sed -n "s/^#define $c[[:space:]]\+\([0-9]\+\)$/\1/p" /usr/include/linux/capability.h)
	[ -n "$bit" ] || fail "$c of llcd.service is not in /usr/include/linux/capability.h"
	mask=$((mask | (1 << bit)))
done
[ "$(sed -n 's/^CapBnd:\t*//p' /proc/$pid/status)" = "$(printf '%016x' "$mask")" ] ||
	fail "llcd runs with capabilities $(sed -n 's/^CapBnd:\t*//p' /proc/$pid/status), want $unitcaps ($(printf '%016x' "$mask")) only"
out2=$(setpriv --reuid=65534 --regid=65534 --groups="$(getent group llcd | cut -d: -f3)" llcctl list) ||
	fail "a member of llcd cannot run llcctl list"
grep -q '^xs' <<<"$out2" || fail "member list: $out2"
if setpriv --reuid=65534 --regid=65534 --groups="$(getent group llcd | cut -d: -f3)" llcctl release xs 2>/dev/null; then
	fail "a member of llcd released a domain"
fi
v=$(llcctl version); grep -q "backend *llcsim" <<<"$v" && grep -q "0.1.0" <<<"$v" || fail "llcctl version: $v"
ok "installed: files (the simulator in llcd-sim only), conffile, group llcd, socket 0660 root:llcd, read-only for members; the daemon runs with the unit's 4 capabilities"

# bash completion, as bash loads it
comp=$(bash -c '. /usr/share/bash-completion/bash_completion; . /usr/share/bash-completion/completions/llcctl
	COMP_WORDS=(llcctl dom); COMP_CWORD=1; COMP_LINE="llcctl dom"; COMP_POINT=${#COMP_LINE}; _llcctl; echo "${COMPREPLY[*]}"
	COMP_WORDS=(llcctl dominfo ""); COMP_CWORD=2; COMP_LINE="llcctl dominfo "; COMP_POINT=${#COMP_LINE}; _llcctl; echo "${COMPREPLY[*]}"')
[ "$comp" = $'dominfo\nxs' ] || fail "bash completion: got '$comp'"
ok "bash completion: commands, and domains from the running llcd"

kill -HUP "$pid"
for _ in $(seq 30); do grep -q "reloaded /etc/llcd/llcd.conf" "$work/llcd.log" && break; sleep 0.1; done
grep -q "reloaded /etc/llcd/llcd.conf" "$work/llcd.log" || fail "SIGHUP did not reload"
ok "SIGHUP reloads /etc/llcd/llcd.conf"

if command -v systemd-analyze >/dev/null; then
	v=$(systemd-analyze verify --man=no /lib/systemd/system/llcd.service 2>&1) || fail "systemd-analyze verify: $v"
	[ -z "$v" ] || fail "systemd-analyze verify: $v"
	ok "systemd-analyze verify of the installed llcd.service"
fi

# --- the rpm: same files ---------------------------------------------------------
packaging/build-rpm.sh "$out" > "$work/rpm.out" 2>&1 || { cat "$work/rpm.out" >&2; fail "build-rpm.sh failed"; }
# Debian-only: changelog.Debian.gz, copyright, lintian overrides; rpm-only:
# the license text under /usr/share/licenses (%license COPYING)
files() { grep -v '^/usr/share/doc/[^/]*/\(changelog\.Debian\.gz\|copyright\)$' | grep -v '^/usr/share/lintian/' | grep -v '^/usr/share/licenses/' | sort; }
for rpmf in "$out"/*.rpm; do
	name=$(rpm -qp --qf '%{NAME}' "$rpmf" 2>/dev/null)
	debf=$(ls "$out/${name}_"*.deb)
	rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$rpmf" 2>/dev/null | grep -v '^d' | cut -d' ' -f2- | files > "$work/$name.rpm.lst"
	dpkg-deb -c "$debf" | grep -v '^d' | awk '{ print $6 }' | sed 's|^\./|/|' | files > "$work/$name.deb.lst"
	diff -u "$work/$name.deb.lst" "$work/$name.rpm.lst" || fail "$name: the rpm's files differ from the .deb's (above)"
	ok "$name: rpm and .deb install the same $(wc -l < "$work/$name.deb.lst") files"
done

# the .deb for test_nspawn.sh (ctest fixture pkg_deb)
if [ -n "${LLCD_PKG_OUT:-}" ]; then
	mkdir -p "$LLCD_PKG_OUT"
	rm -f "$LLCD_PKG_OUT"/*.deb
	cp "$out"/*.deb "$LLCD_PKG_OUT"/
fi

# --- stop, purge ---------------------------------------------------------------
kill -TERM "$pid"; wait "$pid" || fail "llcd exited non-zero on SIGTERM"; pid=
grep -q "pins stay where they are (fail-static)" "$work/llcd.log" || fail "llcd did not log its fail-static stop"
[ ! -e /run/llcd/llcd.sock ] || fail "llcd left its socket behind"
apt-get -o DPkg::Lock::Timeout=300 purge -y -qq llcd-sim llcd > "$work/purge.log" 2>&1 || { cat "$work/purge.log" >&2; fail "purge failed"; }
installed=0
! dpkg -s llcd >/dev/null 2>&1 || fail "llcd still installed after purge"
! dpkg -s llcd-sim >/dev/null 2>&1 || fail "llcd-sim still installed after purge"
for f in /usr/sbin/llcd /usr/bin/llcctl /usr/bin/llcd-sim /usr/share/llcd-sim /etc/llcd /var/lib/llcd \
	/lib/systemd/system/llcd.service /etc/systemd/system/multi-user.target.wants/llcd.service; do
	[ ! -e "$f" ] || fail "$f is still there after purge"
done
ok "SIGTERM stops llcd (fail-static); purge removes the packages"
echo "packaging: all checks passed in $(($(date +%s) - t0)) s"
