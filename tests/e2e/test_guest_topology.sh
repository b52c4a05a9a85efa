#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/e2e/test_guest_topology.sh - the guest sees the host LLC layout that
# llc-guesttopo computes (docs/guest-topology.md).
#
# 1. "shape": llc-guesttopo computes the guest topology of an 8-vCPU domain
#    on a what-if host with 2 sockets, 2 NUMA nodes, 2 LLCs per socket and
#    SMT2 (pack:2 [numa] l3:2 core:1 pu:2), and writes the guest-visible part
#    (<topology>, <cache>, <numa>) into a TCG guest's definition; its pins
#    would name CPUs this 2-CPU machine lacks, so they are left out. The
#    booted guest must show exactly the computed view: per CPU its package,
#    die_id, thread_siblings_list and index3/shared_cpu_list, and the NUMA
#    nodes' CPU lists. llc-guesttopo --check on its live XML must report
#    the dies as split (nothing pins them).
# 2. "pinned": this machine's 2 CPUs presented as 2 LLCs (an hwloc XML);
#    the whole recommendation, host bindings included, goes into a 2-vCPU
#    guest: vcpupin, emulatorpin and numatune must reach libvirt and the
#    kernel, the guest must show 2 L3 domains, and --check must agree.
# The CPU model is Nehalem, an Intel-vendor model: under TCG the AMD models
# lose topoext and show one L3 (research/real-stack.md section 3.2).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/guesttopo_lib.sh"

e2e_begin guest_topology
e2e_install
e2e_start_libvirt
e2e_kernel
e2e_initramfs --run "$GT_NODES_RUN"
tool=$(gt_tool)
e2e_need virt-xml-validate
e2e_log "llc-guesttopo: $tool"

# --- 1. shape: dies, SMT pairs, L3 and NUMA on a what-if host -------------
host="pack:2 [numa] l3:2 core:1 pu:2"
shape=$(e2e_name shape)

e2e_step "what llc-guesttopo recommends for 8 vCPUs on '$host'"
rec=$("$tool" --topology "$host" --vcpus 8) || e2e_fail "llc-guesttopo --vcpus 8 failed"
sed 's/^/      /' <<<"$rec"
grep -q '^topology: sockets=2 dies=2 cores=1 threads=2 (8 vCPUs)$' <<<"$rec" ||
	e2e_fail "unexpected recommendation (want sockets=2 dies=2 cores=1 threads=2)"
want=$(gt_expect "$rec")
want_nodes=$(gt_expect_nodes "$rec")
nl3=$(cut -d' ' -f5 <<<"$want" | sort -u | wc -l)
[ "$nl3" -ge 2 ] || e2e_fail "the recommendation has $nl3 L3 domain(s); this test needs at least 2"
[ "$(wc -l <<<"$want_nodes")" = 2 ] || e2e_fail "the recommendation has no 2 NUMA cells: $want_nodes"
e2e_ok "expect $nl3 L3 domains with SMT pairs, 2 NUMA nodes"

e2e_step "define $shape without a topology, apply the guest part with llc-guesttopo --guest-only"
e2e_define_guest --memory 256 "$shape" 8
e2e_virsh dumpxml --inactive "$shape" >"$E2E_RUN_DIR/$shape.before.xml"
"$tool" --topology "$host" --guest-only --dry-run "$E2E_RUN_DIR/$shape.before.xml" \
	>"$E2E_RUN_DIR/$shape.diff" || e2e_fail "llc-guesttopo --dry-run failed"
sed 's/^/      /' "$E2E_RUN_DIR/$shape.diff"
grep -q "^+    <topology sockets='2' dies='2' cores='1' threads='2'/>" "$E2E_RUN_DIR/$shape.diff" ||
	e2e_fail "the --dry-run diff does not add the topology"
"$tool" --topology "$host" --guest-only --apply "$E2E_RUN_DIR/$shape.before.xml" \
	>"$E2E_RUN_DIR/$shape.after.xml" || e2e_fail "llc-guesttopo --apply failed"
virt-xml-validate "$E2E_RUN_DIR/$shape.after.xml" domain >/dev/null 2>&1 ||
	e2e_fail "the rewritten XML fails libvirt's schema: $(virt-xml-validate "$E2E_RUN_DIR/$shape.after.xml" domain 2>&1)"
out=$(e2e_virsh define "$E2E_RUN_DIR/$shape.after.xml" 2>&1) || e2e_fail "virsh define: $out"
def=$(e2e_virsh dumpxml --inactive "$shape")
grep -q "<topology sockets='2' dies='2' cores='1' threads='2'/>" <<<"$def" ||
	e2e_fail "libvirt's definition of $shape has not the new topology"
[ "$(grep -c "<cell id='[01]' cpus='[0-9-]*' memory='131072' unit='KiB'/>" <<<"$def")" = 2 ] ||
	e2e_fail "libvirt's definition of $shape has not the 2 NUMA cells"
e2e_ok "defined; libvirt keeps <topology sockets='2' dies='2' cores='1' threads='2'/> and 2 NUMA cells"

e2e_step "boot $shape and read its topology from the console"
e2e_start "$shape"
e2e_ok "$(e2e_wait_console "$shape" '^E2E: ready' 180)"
e2e_wait_console "$shape" '^E2E: run exited' 60 >/dev/null
e2e_guest_topo "$shape" | sed 's/^/      /'
grep '^E2E-NODE ' "$(e2e_console "$shape")" | tr -d '\r' | sed 's/^/      /'
e2e_console_has "$shape" '^E2E-CPU vendor=GenuineIntel' ||
	e2e_fail "$shape: not an Intel-vendor guest CPU"

e2e_step "$shape: package, die_id, thread_siblings_list, index3/shared_cpu_list per CPU as computed"
got=$(gt_actual "$shape")
gt_compare "per-CPU topology" "$want" "$got"
l3=$(e2e_guest_l3 "$shape" | paste -sd' ')
smt=$(e2e_guest_smt "$shape" | paste -sd' ')
[ "$(wc -w <<<"$l3")" -ge 2 ] || e2e_fail "$shape: L3 domains '$l3'"
[ "$smt" = "0-1 2-3 4-5 6-7" ] || e2e_fail "$shape: SMT sibling lists '$smt'"
e2e_ok "L3 {$l3}, SMT {$smt}, die_id per package as computed"

e2e_step "$shape: guest NUMA nodes follow the host nodes of its LLCs"
gt_compare "NUMA nodes" "$want_nodes" "$(gt_actual_nodes "$shape")"
e2e_ok "$(echo $want_nodes)"

e2e_step "$shape: llc-guesttopo --check on the live XML reports the unpinned dies as split"
e2e_virsh dumpxml "$shape" >"$E2E_RUN_DIR/$shape.live.xml"
set +e
chk=$("$tool" --topology "$host" --check "$E2E_RUN_DIR/$shape.live.xml")
rc=$?
set -e
sed 's/^/      /' <<<"$chk"
[ "$rc" = 1 ] || e2e_fail "--check exit $rc, want 1 (disagreement)"
[ "$(grep -c '^die-split: guest die [0-3] ' <<<"$chk")" = 4 ] ||
	e2e_fail "--check did not report the 4 guest dies as split"
e2e_ok "4 die-split findings, exit 1"
e2e_undefine "$shape"

# --- 2. pinned: the whole recommendation on this machine's CPUs -----------
pinned=$(e2e_name pinned)
hostxml=$E2E_RUN_DIR/host-2llc.xml
e2e_step "this machine's CPUs 0-1 as 2 LLCs (hwloc XML), a 2-vCPU guest with every element applied"
[ "$(nproc)" -ge 2 ] || e2e_fail "this test needs 2 host CPUs, the machine has $(nproc)"
e2e_hwloc_xml "pack:1 l3:2 core:1 pu:1" "$hostxml"
rec=$("$tool" --topology "$hostxml" --mode static --vcpus 2) || e2e_fail "llc-guesttopo failed on $hostxml"
sed 's/^/      /' <<<"$rec"
want=$(gt_expect "$rec")
e2e_define_guest "$pinned" 2
e2e_virsh dumpxml --inactive "$pinned" >"$E2E_RUN_DIR/$pinned.before.xml"
"$tool" --topology "$hostxml" --mode static --apply "$E2E_RUN_DIR/$pinned.before.xml" \
	>"$E2E_RUN_DIR/$pinned.after.xml" || e2e_fail "llc-guesttopo --apply failed"
out=$(e2e_virsh define "$E2E_RUN_DIR/$pinned.after.xml" 2>&1) || e2e_fail "virsh define: $out"
e2e_start "$pinned"
e2e_ok "$(e2e_wait_console "$pinned" '^E2E: ready' 120)"
e2e_guest_topo "$pinned" | sed 's/^/      /'

e2e_step "$pinned: the guest shows the computed view (2 L3 domains, one per die)"
gt_compare "per-CPU topology" "$want" "$(gt_actual "$pinned")"
e2e_ok "$(e2e_guest_l3 "$pinned" | paste -sd' ') "

e2e_step "$pinned: vcpupin, emulatorpin and numatune reached libvirt and the kernel"
for v in 0 1; do
	tid=$(e2e_vcpu_tid "$pinned" "$v")
	a=$(e2e_cpus_allowed "$tid")
	[ "$a" = "$v" ] || e2e_fail "vCPU $v (tid $tid): Cpus_allowed_list '$a', want '$v'"
done
live=$(e2e_virsh dumpxml "$pinned")
for x in "<vcpupin vcpu='0' cpuset='0'/>" "<vcpupin vcpu='1' cpuset='1'/>" \
	"<emulatorpin cpuset='0-1'/>" "<memory mode='strict' nodeset='0'/>"; do
	grep -qF "$x" <<<"$live" || e2e_fail "$pinned: live XML lacks $x"
done
qpid=$(e2e_qemu_pid "$pinned")
a=$(e2e_cpus_allowed "$qpid")
[ "$a" = "0-1" ] || e2e_fail "emulator thread (pid $qpid): Cpus_allowed_list '$a', want 0-1"
ns=$(e2e_virsh numatune "$pinned" | awk '$1 == "numa_nodeset" { print $3 }')
[ "$ns" = 0 ] || e2e_fail "virsh numatune: nodeset '$ns', want 0"
e2e_ok "vCPU 0 -> CPU 0, vCPU 1 -> CPU 1, emulator 0-1, memory on node 0"

e2e_step "$pinned: llc-guesttopo --check on the live XML agrees"
e2e_virsh dumpxml "$pinned" >"$E2E_RUN_DIR/$pinned.live.xml"
chk=$("$tool" --topology "$hostxml" --check "$E2E_RUN_DIR/$pinned.live.xml") ||
	e2e_fail "--check: $chk"
e2e_ok "$chk"
e2e_undefine "$pinned"

e2e_end
