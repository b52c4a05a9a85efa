# SPDX-License-Identifier: GPL-2.0-or-later
# Tests of agent/'s live I/O modules (llcagent_live).
# Label "unit": no daemon, no network; they run in the ASan build too.
llcd_unit_test(test_procstat SOURCES unit/test_procstat.c LIBS llcagent_live)
llcd_unit_test(test_log SOURCES unit/test_log.c LIBS llcagent_live)
llcd_unit_test(test_coresched SOURCES unit/test_coresched.c LIBS llcagent_live)
llcd_unit_test(test_virt SOURCES unit/test_virt.c LIBS llcagent_live)
llcd_unit_test(test_loop SOURCES unit/test_loop.c LIBS llcagent_core llcpolicy_io)

# Label "libvirt": tests against a real libvirtd (and QEMU), run by the
# normal build's ctest only, not under ASan. They start what they need and
# stop only what they started.
function(llcd_libvirt_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/libvirt)
  target_link_libraries(${name} PRIVATE ${T_LIBS} PkgConfig::CMOCKA)
  target_compile_definitions(${name} PRIVATE LLCD_FIXTURES="${LLCD_FIXTURES}")
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS "libvirt" TIMEOUT 180
                       RUN_SERIAL TRUE ENVIRONMENT "CMOCKA_MESSAGE_OUTPUT=STDOUT")
endfunction()

llcd_libvirt_test(test_virt_session
  SOURCES libvirt/test_virt_session.c LIBS llcagent_live llcd_testsupport)
llcd_libvirt_test(test_virt_system
  SOURCES libvirt/test_virt_system.c LIBS llcagent_live)

# The in-kernel tracer with its real BPF programs (root; fails where BPF
# cannot load: this machine has BTF and the capabilities).
llcd_unit_test(test_tracer SOURCES unit/test_tracer.c LIBS llcagent_tracer Threads::Threads LABELS bpf)
set_tests_properties(test_tracer PROPERTIES RUN_SERIAL TRUE TIMEOUT 120)

# llcd.conf's policy-rule on libvirt domains written as Nova and KubeVirt
# write them: the real llcd and llcctl on libvirt's test driver (no QEMU)
add_test(NAME libvirt_rules COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/libvirt/test_rules.sh
         ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
set_tests_properties(libvirt_rules PROPERTIES LABELS "libvirt" TIMEOUT 120)
