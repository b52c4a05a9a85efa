# SPDX-License-Identifier: GPL-2.0-or-later
# The live back-end (agent/live/): unit tests, the standalone driver the
# e2e tests run (not installed), and the e2e tests' wiring.
llcd_unit_test(test_live SOURCES unit/test_live.c LIBS llcagent_live)

add_executable(live_driver live/live_driver.c)
target_link_libraries(live_driver PRIVATE llcagent_live llcd_core)

# tests/e2e/test_live_*.sh are registered as e2e_live_* by tests/e2e.cmake
# (every tests/e2e/test_*.sh is); they need the driver built.
file(GLOB _live_e2e CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/e2e/test_live_*.sh)
foreach(script ${_live_e2e})
  get_filename_component(name ${script} NAME_WE)
  string(REGEX REPLACE "^test_" "e2e_" name ${name})
  set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT
               "LLCD_LIVE_DRIVER=$<TARGET_FILE:live_driver>")
endforeach()

# The live back-end sampling through the in-kernel tracer (root, real BPF;
# fails where it cannot load).
llcd_unit_test(test_live_tracer SOURCES unit/test_live_tracer.c LIBS llcagent_live LABELS bpf)
set_tests_properties(test_live_tracer PROPERTIES RUN_SERIAL TRUE TIMEOUT 60)
# where a guest's memory lives: recorded QEMU maps, and the real reader
# (move_pages in query mode) on a child's memory, node 0 on this host
llcd_unit_test(test_memnode SOURCES unit/test_memnode.c LIBS llcagent_live)
target_include_directories(test_memnode PRIVATE ${CMAKE_SOURCE_DIR}/agent/drivers)
# libFuzzer on the guest-RAM region picker (any maps text), label fuzz.
include(${CMAKE_CURRENT_LIST_DIR}/fuzz.cmake)
llcd_fuzz_target(fuzz_memnode
  SOURCES fuzz/fuzz_memnode.c ../agent/drivers/memnode.c ../common/err.c
  INCLUDES ../agent/drivers ../agent/daemon ../common
  PKGS numa
  CORPUS fuzz/corpus/memnode
  SECONDS 10)
llcd_unit_test(test_cgbound SOURCES unit/test_cgbound.c LIBS llcagent_live)
