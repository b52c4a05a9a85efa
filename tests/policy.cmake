# SPDX-License-Identifier: GPL-2.0-or-later
# Tests of policy/ (the engine) and its adapters.
llcd_unit_test(test_topo SOURCES unit/test_topo.c LIBS llcpolicy_io)
llcd_unit_test(test_policy SOURCES unit/test_policy.c LIBS llcpolicy_io)
llcd_unit_test(test_wakeups SOURCES unit/test_wakeups.c LIBS llcpolicy)
llcd_unit_test(test_policy_wakeups SOURCES unit/test_policy_wakeups.c LIBS llcpolicy_io)
llcd_unit_test(test_policy_numa SOURCES unit/test_policy_numa.c LIBS llcpolicy_io)
llcd_unit_test(test_policy_home SOURCES unit/test_policy_home.c LIBS llcpolicy_io)
llcd_unit_test(test_trial SOURCES unit/test_trial.c LIBS llcpolicy)
llcd_unit_test(test_steer SOURCES unit/test_steer.c LIBS llcpolicy_io)
llcd_unit_test(test_policy_order SOURCES unit/test_policy_order.c LIBS llcpolicy_io)
llcd_unit_test(test_policy_bound SOURCES unit/test_policy_bound.c LIBS llcpolicy_io)
# Incremental steps plan what full steps plan: test_policy_incr's worlds,
# and the engine tests again with a second engine beside each one,
# incremental steps off, compared every period (LLCD_TEST_SHADOW:
# policy_harness.h h_shadow()).
llcd_unit_test(test_policy_incr SOURCES unit/test_policy_incr.c LIBS llcpolicy_io)
foreach(t test_policy test_policy_home test_policy_wakeups test_policy_numa test_policy_order test_policy_bound)
  add_test(NAME ${t}_shadow COMMAND ${t})
  set_tests_properties(${t}_shadow PROPERTIES LABELS "unit"
                       ENVIRONMENT "CMOCKA_MESSAGE_OUTPUT=STDOUT;LLCD_TEST_SHADOW=1")
endforeach()
# Allocation failures inside a step are reported, never silent: a fake seam
# (--wrap of malloc/calloc/realloc) fails each allocation of a step in turn.
llcd_unit_test(test_policy_nomem SOURCES unit/test_policy_nomem.c LIBS llcpolicy_io)
target_link_options(test_policy_nomem PRIVATE
  -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc)
# The wakeup rule under arbitrary edges (what a guest can make the tracer count).
include(${CMAKE_CURRENT_LIST_DIR}/fuzz.cmake)
llcd_fuzz_target(fuzz_wakeups
  SOURCES fuzz/fuzz_wakeups.c ../policy/wakeups.c ../common/cpuset.c ../common/err.c
  INCLUDES ../policy ../common
  SECONDS 10)
