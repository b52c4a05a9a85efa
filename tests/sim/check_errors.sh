#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Bad scenarios exit 2 with a message naming the field and why.
set -eu
llcsim=$1 tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() {   # expect NAME 'json' 'message fragment'
  printf '%s' "$2" > "$tmp/$1.json"
  rc=0; "$llcsim" "$tmp/$1.json" --policy none > /dev/null 2> "$tmp/err" || rc=$?
  if [ "$rc" -ne 2 ] || ! grep -qF -- "$3" "$tmp/err"; then
    echo "FAIL $1: exit $rc, stderr: $(cat "$tmp/err")"; fail=1
  else
    echo "ok   $1: $(cat "$tmp/err")"
  fi
}
H='"host":{"topology":"pack:1 [numa] l3:2 core:2 pu:2"},"duration_s":1'
expect notjson '{"host":' 'not JSON'
expect nohost '{"duration_s":1,"domains":[]}' 'host: missing (required)'
expect typo "{$H,\"domains\":[],\"sede\":1}" 'sede: unknown field'
expect util "{$H,\"domains\":[{\"name\":\"a\",\"vcpus\":2,\"load\":[{\"vcpus\":\"0\",\"util\":1.5}]}]}" \
  'domains[0].load[0].util: must be in [0, 1], got 1.5'
expect vcpu "{$H,\"domains\":[{\"name\":\"a\",\"vcpus\":2,\"load\":[{\"vcpus\":\"0-2\",\"util\":1}]}]}" \
  'domains[0].load[0].vcpus: vCPU 2 out of range (the domain has 2)'
expect dup "{$H,\"domains\":[{\"name\":\"a\",\"vcpus\":1},{\"name\":\"a\",\"vcpus\":1}]}" \
  "domains[1].name: 'a' already names domains[0]"
expect gtopo "{$H,\"domains\":[{\"name\":\"a\",\"vcpus\":4,\"guest_topology\":{\"cores\":3}}]}" \
  'domains[0].guest_topology: sockets*dies*clusters*cores*threads = 3, but the domain has 4 vCPUs'
expect topo '{"host":{"topology":"bogus:3"},"duration_s":1,"domains":[]}' 'host.topology'
expect reserved '{"host":{"topology":"pack:1 [numa] l3:2 core:2 pu:2","reserved_cpus":"99"},"duration_s":1,"domains":[]}' \
  'host.reserved_cpus: CPU 99 is not on the host'
expect annot "{$H,\"domains\":[{\"name\":\"a\",\"vcpus\":2,\"llc_policy\":\"<oops\"}]}" 'domains[0].llc_policy'
expect sharing "{$H,\"domains\":[{\"name\":\"a\",\"vcpus\":2,\"load\":[{\"vcpus\":\"0\",\"util\":1,\"sharing\":1}]}]}" \
  'domains[0].load[0].sharing: only meaningful with a group'
expect wakeups_nogroup "{$H,\"domains\":[{\"name\":\"a\",\"vcpus\":2,\"load\":[{\"vcpus\":\"0\",\"util\":1,\"wakeups_hz\":100}]}]}" \
  'domains[0].load[0].wakeups_hz: only meaningful with a group'
expect wakeups_neg "{$H,\"domains\":[{\"name\":\"a\",\"vcpus\":2,\"load\":[{\"vcpus\":\"0-1\",\"util\":1,\"group\":\"g\",\"wakeups_hz\":-1}]}]}" \
  'domains[0].load[0].wakeups_hz: must be in [0, 1e+06], got -1'
expect wakeups_type "{$H,\"domains\":[{\"name\":\"a\",\"vcpus\":2,\"load\":[{\"vcpus\":\"0-1\",\"util\":1,\"group\":\"g\",\"wakeups_hz\":\"lots\"}]}]}" \
  'domains[0].load[0].wakeups_hz: must be a number, got string'
expect trace_type '{"host":{"topology":"pack:1 [numa] l3:2 core:2 pu:2","wakeup_trace":1},"duration_s":1,"domains":[]}' \
  'host.wakeup_trace: must be true or false'
expect noise '{"host":{"topology":"pack:1 [numa] l3:2 core:2 pu:2","wakeup_noise_hz":-5},"duration_s":1,"domains":[]}' \
  'host.wakeup_noise_hz: must be in [0, 100000], got -5'
expect wakes_range "{$H,\"domains\":[{\"name\":\"a\",\"vcpus\":2,\"load\":[{\"vcpus\":\"0\",\"util\":1,\"wakes\":[{\"vcpus\":\"0-3\",\"hz\":10}]}]}]}" \
  'domains[0].load[0].wakes[0].vcpus: vCPU 3 out of range (the domain has 2)'
expect qemu_util "{$H,\"domains\":[{\"name\":\"a\",\"vcpus\":2,\"qemu_threads\":[{\"count\":2,\"util\":2}]}]}" \
  'domains[0].qemu_threads[0].util: must be in [0, 1], got 2'
exit $fail
