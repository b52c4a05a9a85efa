# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the scripts that start a QEMU with a QMP socket (tests/qemu,
# tests/fixtures/qmp/record.sh).
#
# qmp_wait LLC_QMP SOCKET QEMU_PID TRIES QEMU_ERR PREFIX: wait (TRIES x 50 ms
# at most) until llc-qmp gets into the monitor at SOCKET; if QEMU dies or
# the tries run out, print "PREFIX QEMU did not start:" and QEMU's stderr
# (file QEMU_ERR) and exit 1.
qmp_wait() {
	i=0
	# the socket is bound before QEMU listens on it: wait until a client gets in
	until [ -S "$2" ] && "$1" -t 2000 "$2" query-status >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -gt "$4" ] || ! kill -0 "$3" 2>/dev/null; then
			echo "$6 QEMU did not start:" >&2; cat "$5" >&2; exit 1
		fi
		sleep 0.05
	done
}
