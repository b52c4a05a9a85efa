#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_llc_qmp.sh LLC_QMP: the llc-qmp CLI against the real QEMU: replies,
# exit statuses and messages.  Run through tests/qemu/run.sh.
set -u
llcqmp=$1
qemu=${QEMU:-qemu-system-x86_64}
tmp=$(mktemp -d)
fails=0
qpid=
cleanup() { [ -n "$qpid" ] && kill "$qpid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
. "$(dirname "$0")/qmp_wait.sh"

fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
# expect STATUS PATTERN -- ARGS...: run llc-qmp, check exit status and that
# PATTERN (grep -E) occurs in its stdout+stderr
expect() {
	want=$1 pat=$2; shift 3
	"$llcqmp" "$@" >"$tmp/out" 2>&1 </dev/null
	got=$?
	[ "$got" = "$want" ] || fail "llc-qmp $*: exit $got, expected $want: $(cat "$tmp/out")"
	grep -Eq -- "$pat" "$tmp/out" || fail "llc-qmp $*: no /$pat/ in: $(cat "$tmp/out")"
}

"$qemu" -accel tcg -display none -nodefaults -no-user-config -m 64 -S \
	-smp 8,sockets=1,dies=2,cores=2,threads=2 \
	-qmp "unix:$tmp/qmp.sock,server=on,wait=off" 2>"$tmp/qemu.err" &
qpid=$!
qmp_wait "$llcqmp" "$tmp/qmp.sock" "$qpid" 200 "$tmp/qemu.err" "FAIL:"

expect 0 '^usage: llc-qmp' -- --help
expect 2 '^usage: llc-qmp' -- "$tmp/qmp.sock"
expect 0 '"status": "prelaunch"' -- "$tmp/qmp.sock" query-status
expect 0 '^\[\{"thread-id":' -- -c "$tmp/qmp.sock" query-cpus-fast
[ "$(grep -o '"cpu-index":' "$tmp/out" | wc -l)" = 8 ] || fail "query-cpus-fast: not 8 vCPUs"
expect 0 '^"pc-i440fx-' -- "$tmp/qmp.sock" qom-get '{"path": "/machine", "property": "type"}'
expect 1 '^llc-qmp: no-such: CommandNotFound: The command no-such has not been found$' \
	-- "$tmp/qmp.sock" no-such
expect 2 'arguments must be a JSON object' -- "$tmp/qmp.sock" query-status '[1]'
expect 3 "^llc-qmp: connect to $tmp/nope: No such file or directory$" -- "$tmp/nope" query-status
expect 2 'bad timeout' -- -t x "$tmp/qmp.sock" query-status
printf 'cont\n# comment\nstop\nquery-status\n' >"$tmp/cmds"
"$llcqmp" -e -c "$tmp/qmp.sock" - <"$tmp/cmds" >"$tmp/out" 2>&1 || fail "batch: exit $?"
grep -q '"event":"RESUME"' "$tmp/out" || fail "batch: no RESUME event: $(cat "$tmp/out")"
grep -q '"status":"paused"' "$tmp/out" || fail "batch: not paused: $(cat "$tmp/out")"
expect 0 '"event": "SHUTDOWN"' -- -e -w SHUTDOWN -T "$tmp/tr" "$tmp/qmp.sock" quit
grep -q '^> {"execute":"quit","id":2}$' "$tmp/tr" || fail "transcript: $(cat "$tmp/tr")"
wait "$qpid"; qpid=
[ "$fails" = 0 ] && echo "llc-qmp: all checks passed"
exit "$fails"
