# SPDX-License-Identifier: GPL-2.0-or-later
# Tests of sim/ (llcsim): unit tests of the cost model and parser, and one
# check per shipped scenario asserting the expected ordering of policies.
llcd_unit_test(test_sim_world SOURCES unit/test_sim_world.c LIBS llcsim_core LABELS sim)
llcd_unit_test(test_sim_scenario SOURCES unit/test_sim_scenario.c LIBS llcsim_core LABELS sim)

find_program(PYTHON3 python3)
set(_scen ${PROJECT_SOURCE_DIR}/sim/scenarios)
foreach(s xiangshan-8ccx genoa-churn overloaded-llc power-like stream client-server
          xiangshan-wakeups pairs-busy noise-busy squeeze stream-isolated stream-isolated-mbm
          numa-memory stream-mbm isolated-trial-shared squeeze-churn overcommit-groups
          wake-star wake-star-counters wake-star-mbm wake-queue wake-queue-counters
          wake-weak-link wake-weak-link-counters wake-clique64 wake-clique64-counters
          wake-iothreads wake-steal wake-steal-counters wake-steal-mbm wake-rr-pairs
          xiangshan-wakeups-nojudge xiangshan-wakeups-optin pairs-busy-nojudge)
  add_test(NAME sim_${s}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/sim/check_sim.py
                   $<TARGET_FILE:llcsim> ${_scen} ${s})
  set_tests_properties(sim_${s} PROPERTIES LABELS "sim" TIMEOUT 120)
endforeach()
# The trial scenarios at 1 s periods and with bandwidth
# monitoring instead of counters too (check_sim.py --variant), and the
# benefit check on the wakeup scenarios that have a judge
foreach(s trial-phase trial-dip trial-extra-load home-narrow home-room)
  foreach(v "" 1s mbm 1s-mbm)
    if(v STREQUAL "")
      set(_name sim_${s})
      set(_args)
    else()
      set(_name sim_${s}_${v})
      set(_args --variant ${v})
    endif()
    add_test(NAME ${_name}
             COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/sim/check_sim.py
                     $<TARGET_FILE:llcsim> ${_scen} ${s} ${_args})
    set_tests_properties(${_name} PROPERTIES LABELS "sim" TIMEOUT 120)
  endforeach()
endforeach()
foreach(s wake-rr-pairs-counters wake-rr-pairs-mbm)
  add_test(NAME sim_${s}
           COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/sim/check_sim.py
                   $<TARGET_FILE:llcsim> ${_scen} ${s})
  set_tests_properties(sim_${s} PROPERTIES LABELS "sim" TIMEOUT 120)
endforeach()
add_test(NAME sim_determinism
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/sim/check_determinism.sh
                 $<TARGET_FILE:llcsim> ${_scen}/xiangshan-8ccx.json)
add_test(NAME sim_determinism_wakeups
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/sim/check_determinism.sh
                 $<TARGET_FILE:llcsim> ${_scen}/xiangshan-wakeups.json)
add_test(NAME sim_errors
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/sim/check_errors.sh $<TARGET_FILE:llcsim>)
set_tests_properties(sim_determinism sim_determinism_wakeups sim_errors PROPERTIES LABELS "sim" TIMEOUT 120)
