# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# tests/e2e/guesttopo_lib.sh - helpers for test_guest_topology.sh on top of
# lib.sh: run llc-guesttopo, turn its recommendation into the guest view it
# promises (docs/guest-topology.md), and read the view a booted guest shows.

# gt_tool: path of the llc-guesttopo binary of this build tree.
gt_tool() {
	local t
	for t in "${LLCD_BUILD_DIR:-}/tools/llc-guesttopo" "$E2E_SRC/build/tools/llc-guesttopo"; do
		[ -x "$t" ] && { echo "$t"; return 0; }
	done
	e2e_fail "llc-guesttopo is not built (cmake -S . -B build && cmake --build build), looked in" \
		"${LLCD_BUILD_DIR:-<LLCD_BUILD_DIR unset>}/tools and $E2E_SRC/build/tools"
}

# gt_list FIRST LAST: a Linux CPU list for a range ("3" or "0-3").
gt_list() { if [ "$1" = "$2" ]; then echo "$1"; else echo "$1-$2"; fi; }

# gt_expect REC: from llc-guesttopo's recommendation text, one line per guest
# CPU, sorted: "cpu=N pkg=SOCKET die=DIE smt=LIST l3=LIST". Guest CPU n is
# vCPU n; guest die i is vCPUs [i*per_die, (i+1)*per_die) and its L3; the
# die number Linux shows is the die's index inside its socket; the SMT
# siblings are each run of `threads` consecutive vCPUs.
gt_expect() {
	local rec=$1 sockets dies cores threads n per_die v die sib0
	read -r sockets dies cores threads n < <(sed -n \
		's/^topology: sockets=\([0-9]*\) dies=\([0-9]*\) cores=\([0-9]*\) threads=\([0-9]*\) (\([0-9]*\) vCPUs)$/\1 \2 \3 \4 \5/p' \
		<<<"$rec")
	[ -n "${n:-}" ] || e2e_fail "no 'topology:' line in the recommendation: $rec"
	per_die=$((cores * threads))
	for ((v = 0; v < n; v++)); do
		die=$((v / per_die))
		sib0=$((v / threads * threads))
		echo "cpu=$v pkg=$((die / dies)) die=$((die % dies))" \
			"smt=$(gt_list $sib0 $((sib0 + threads - 1)))" \
			"l3=$(gt_list $((die * per_die)) $((die * per_die + per_die - 1)))"
	done | sort -V
}

# gt_actual DOMAIN: the same fields from the guest's E2E-TOPO lines.
gt_actual() {
	e2e_guest_topo "$1" |
		sed -n 's/^E2E-TOPO cpu=\([0-9]*\) pkg=\([^ ]*\) die=\([^ ]*\) core=[^ ]* smt=\([^ ]*\) l3=\([^ ]*\) .*/cpu=\1 pkg=\2 die=\3 smt=\4 l3=\5/p' |
		sort -V
}

# gt_expect_nodes REC: "node=I cpus=LIST" per guest NUMA cell, or nothing
# when the recommendation has no cells.
gt_expect_nodes() {
	sed -n 's/^cell \([0-9]*\) *vCPUs \([^ ]*\) -> host node [0-9]*$/node=\1 cpus=\2/p' <<<"$1"
}

# gt_actual_nodes DOMAIN: the guest's E2E-NODE lines (printed by the --run
# script of the initramfs) as "node=I cpus=LIST".
gt_actual_nodes() {
	{ grep '^E2E-NODE ' "$(e2e_console "$1")" || true; } | tr -d '\r' |
		sed 's/^E2E-NODE /node=/; s/ cpus=/ cpus=/' | sort -V
}

# The in-guest script that reports NUMA nodes (e2e_initramfs --run).
GT_NODES_RUN='for n in /sys/devices/system/node/node[0-9]*; do echo "E2E-NODE ${n##*/node} cpus=$(cat $n/cpulist)"; done'

# gt_compare WHAT WANT GOT: fail with both lists when they differ.
gt_compare() {
	if [ "$2" != "$3" ]; then
		echo "want ($1):" >&2
		sed 's/^/      /' <<<"$2" >&2
		echo "got:" >&2
		sed 's/^/      /' <<<"$3" >&2
		e2e_fail "$1: the guest does not show what llc-guesttopo computed"
	fi
}
