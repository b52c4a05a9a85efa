#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# e2e_rules_nova: llcd.conf's policy-rule on real TCG guests under the
# host's libvirtd (qemu:///system): a guest carrying the <nova:instance>
# block Nova writes (namespace 1.1, flavor with memory/disk/vcpus, owner,
# root) and no annotation is placed by a flavor= rule; a second guest with
# the same flavor and an llc-policy annotation keeps its annotation.
#
# Checks:
#  1. A (flavor m1.llc.small, no annotation): pinned by llcd, each vCPU's
#     Cpus_allowed_list what llcd pinned, its 2 vCPUs in one LLC (aggregate,
#     topology="match" from the rule); dominfo says policy_source rule and
#     names the rule with its file:line
#  2. B (same flavor, annotated static): pinned as static, policy_source
#     annotation, no policy_rule
#  3. a reload without rules: A is released (the default scheduler's CPUs),
#     B stays pinned
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/live_lib.sh"

e2e_begin rules_nova
e2e_install
e2e_start_libvirt
e2e_kernel
e2e_initramfs
live_setup
[ "$LIVE_DAEMON" = llcd ] || e2e_fail "this test needs llcd (LLCD_E2E_DAEMON=llcd): rules are llcd.conf's"

nova() {        # nova DISPLAY-NAME: the metadata Nova writes for an m1.llc.small instance
	cat <<EOF
<nova:instance xmlns:nova="http://openstack.org/xmlns/libvirt/nova/1.1">
      <nova:package version="27.1.0"/>
      <nova:name>$1</nova:name>
      <nova:creationTime>2026-12-01 10:00:00</nova:creationTime>
      <nova:flavor name="m1.llc.small" id="11">
        <nova:memory>192</nova:memory>
        <nova:disk>1</nova:disk>
        <nova:swap>0</nova:swap>
        <nova:ephemeral>0</nova:ephemeral>
        <nova:vcpus>2</nova:vcpus>
      </nova:flavor>
      <nova:owner>
        <nova:user uuid="18509018d00743c89518135e476003e0">admin</nova:user>
        <nova:project uuid="38bd8e984a3e435a87e950a441ee55aa">hpc</nova:project>
      </nova:owner>
      <nova:root type="image" uuid="f0f0d38c-0a5f-4c54-83e5-d48006b888a7"/>
    </nova:instance>
EOF
}
a=$(e2e_name a)
b=$(e2e_name b)
e2e_define_guest "$a" 2 "sockets=1,dies=1,cores=2,threads=1" "$(nova hpc-a)"
e2e_define_guest "$b" 2 "" "$(nova hpc-b)
    <llc:llc-policy xmlns:llc=\"urn:llcd:llc-policy:1\" mode=\"static\"/>"
conf=$E2E_RUN_DIR/llcd.conf
echo "policy-rule flavor=m1.llc.* mode=aggregate topology=match" >> "$conf"
line=$(wc -l < "$conf")
e2e_start "$a"
e2e_start "$b"
live_start live

e2e_step "1. $a: no annotation, placed by the flavor rule"
pa=$(live_wait_pins "$a" 2 20)
set -- $pa
[ "${1#*=}" = "${2#*=}" ] || e2e_fail "$a: vCPUs in different LLCs ($pa); aggregate keeps a 2-vCPU domain in one LLC"
st=$(live_status "$a")
echo "$st" | grep -qE '"policy_source": ?"rule"' || e2e_fail "$a: policy_source is not rule: $st"
echo "$st" | grep -qE "\"where\": ?\"$conf:$line\"" || e2e_fail "$a: the rule's file:line is not $conf:$line: $st"
echo "$st" | grep -qE '"match": ?"flavor=m1.llc.\*"' || e2e_fail "$a: the rule's match: $st"
echo "$st" | grep -qE '"mode": ?"aggregate"' || e2e_fail "$a: mode: $st"
live_wait_log "domain $a: no llc-policy annotation; policy-rule 1 \\($conf:$line: flavor=m1.llc.\\*\\): mode aggregate" 5 >/dev/null
e2e_ok "$a pinned by policy-rule 1 ($conf:$line): $pa"

e2e_step "2. $b: the same flavor, annotated: the annotation wins"
pb=$(live_wait_pins "$b" 2 20)
st=$(live_status "$b")
echo "$st" | grep -qE '"policy_source": ?"annotation"' || e2e_fail "$b: policy_source is not annotation: $st"
echo "$st" | grep -qE '"mode": ?"static"' || e2e_fail "$b: mode is not static: $st"
! echo "$st" | grep -q '"policy_rule"' || e2e_fail "$b has a policy_rule: $st"
e2e_ok "$b pinned as its annotation says (static): $pb"

e2e_step "3. a reload without rules: $a released, $b kept"
sed -i '/^policy-rule /d' "$conf"
"$LIVE_LLCCTL" -c "$LIVE_SOCK" reload >/dev/null || e2e_fail "llcctl reload failed"
live_wait_status "$a" '"policy_source": ?"none"' 50 0.1 "still placed 5 s after the rules were dropped"
live_wait_log "domain $a: no llc-policy annotation: left to the default scheduler" 5 >/dev/null
all=$(e2e_cpus_allowed $$)      # every CPU this test may use
for ((i = 0; ; i++)); do
	ok=1
	for v in 0 1; do [ "$(e2e_cpus_allowed "$(e2e_vcpu_tid "$a" "$v")")" = "$all" ] || ok=0; done
	[ $ok = 1 ] && break
	[ $i -lt 50 ] || e2e_fail "$a: vCPUs not given back to every CPU ($all) within 5 s of the reload"
	sleep 0.1
done
st=$(live_status "$b")
echo "$st" | grep -qE '"policy_source": ?"annotation"' || e2e_fail "$b after the reload: $st"
e2e_ok "$a released (vCPUs on $all); $b still annotated"

live_alive
e2e_end
