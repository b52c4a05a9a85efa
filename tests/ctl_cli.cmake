# SPDX-License-Identifier: GPL-2.0-or-later
# llcctl against llcd on the simulated back-end (label ctl).
add_test(NAME llcctl_sim COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/ctl/test_llcctl.sh
         ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
set_tests_properties(llcctl_sim PROPERTIES LABELS "ctl" TIMEOUT 120)
# policy-rule on the simulated back-end (name= rules on scenario domains)
add_test(NAME rules_sim COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/ctl/test_rules_sim.sh
         ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
set_tests_properties(rules_sim PROPERTIES LABELS "ctl" TIMEOUT 60)
# a read-only member's pipelined flood on 2,000 simulated domains: periods
# stay within the stated bound
add_test(NAME llcctl_load COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/ctl/test_control_load.sh
         ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
set_tests_properties(llcctl_load PROPERTIES LABELS "ctl" TIMEOUT 180)
