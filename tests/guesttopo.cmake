# SPDX-License-Identifier: GPL-2.0-or-later
# Tests of the guest topology recommendation (policy/guesttopo.c) and its
# domain XML reader and writer (policy/guestxml.c, guestxml_apply.c);
# docs/guest-topology.md.
llcd_unit_test(test_guesttopo SOURCES unit/test_guesttopo.c LIBS llcpolicy_io)
llcd_unit_test(test_guestxml SOURCES unit/test_guestxml.c LIBS llcpolicy_io)
# The rewritten XML must be valid for libvirt (its RelaxNG schema).
add_test(NAME guestxml_schema
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/guestxml_schema.sh ${LLCD_FIXTURES}/domains/guesttopo)
set_tests_properties(guestxml_schema PROPERTIES LABELS "schema" SKIP_RETURN_CODE 77)
# The end-to-end test tests/e2e/test_guest_topology.sh (boots TCG guests
# with the computed topology and reads it back from inside) is the ctest test
# e2e_guest_topology, label e2e: tests/e2e.cmake registers every
# tests/e2e/test_*.sh, so it is not added here a second time.

# libFuzzer: guestxml_read(), guestxml_read_pins(), guestxml_apply() (with its
# read-back and idempotence) and guestxml_diff() on every input.
include(${CMAKE_CURRENT_LIST_DIR}/fuzz.cmake)
llcd_fuzz_target(fuzz_guestxml
  SOURCES fuzz/fuzz_guestxml.c ../policy/guestxml.c ../policy/guestxml_apply.c ../policy/xmlsafe.c
          ../policy/guesttopo.c
          ../policy/policy.c ../policy/step.c ../policy/placement.c ../policy/placement_home.c ../policy/groups.c
          ../policy/steer.c ../policy/benefit.c ../policy/home.c ../policy/trial.c ../policy/order.c ../policy/wakeups.c ../policy/llcrules.c ../policy/topo.c
          ../policy/annotation.c ../common/cpuset.c ../common/cpuset_pool.c ../common/err.c ../common/names.c
  INCLUDES ../policy ../common
  PKGS libxml-2.0
  CORPUS fuzz/corpus/guestxml
  SECONDS 15)
