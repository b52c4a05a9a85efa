# SPDX-License-Identifier: GPL-2.0-or-later
# Tests of qmp/ (libqmp) and tools/llc-qmp.c (llc-qmp).
find_package(Threads REQUIRED)
llcd_unit_test(test_qmp_replay SOURCES unit/test_qmp_replay.c unit/qmp_fake.c
               LIBS llcqmp Threads::Threads)
llcd_unit_test(test_qmp SOURCES unit/test_qmp.c LIBS llcqmp)

# Against the real qemu-system-x86_64 (label qemu, not unit: only in the
# normal build).  tests/qemu/run.sh installs QEMU if needed and skips (77)
# only when it cannot be installed.
add_executable(test_qmp_qemu qemu/test_qmp_qemu.c)
target_link_libraries(test_qmp_qemu PRIVATE llcqmp PkgConfig::CMOCKA)
add_test(NAME test_qmp_qemu
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/qemu/run.sh $<TARGET_FILE:test_qmp_qemu>)
add_test(NAME test_llc_qmp
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/qemu/run.sh
                 sh ${CMAKE_CURRENT_SOURCE_DIR}/qemu/test_llc_qmp.sh $<TARGET_FILE:llc-qmp>)
set_tests_properties(test_qmp_qemu test_llc_qmp PROPERTIES
                     LABELS qemu SKIP_RETURN_CODE 77 TIMEOUT 60
                     ENVIRONMENT "CMOCKA_MESSAGE_OUTPUT=STDOUT")

# The libFuzzer target for the QMP parser, built with clang directly (the
# main build uses gcc) and run for a bounded time (label fuzz, not unit).
find_program(LLCD_CLANG NAMES clang clang-14)
set(LLCD_FUZZ_SECONDS 20 CACHE STRING "How long the fuzz tests run")
if(LLCD_CLANG)
  set(_fuzz_src ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_qmp.c
      ${PROJECT_SOURCE_DIR}/qmp/qmp.c ${PROJECT_SOURCE_DIR}/qmp/qmp_cpus.c
      ${PROJECT_SOURCE_DIR}/common/err.c ${PROJECT_SOURCE_DIR}/common/clock.c
      ${PROJECT_SOURCE_DIR}/common/jsonget.c ${PROJECT_SOURCE_DIR}/common/cpuset.c)
  add_custom_command(
    OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/fuzz_qmp
    COMMAND ${LLCD_CLANG} -std=gnu11 -g -O1 -D_GNU_SOURCE
            -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
            -I${PROJECT_SOURCE_DIR}/qmp -I${PROJECT_SOURCE_DIR}/common ${JSONC_CFLAGS}
            ${_fuzz_src} ${JSONC_LDFLAGS} -o ${CMAKE_CURRENT_BINARY_DIR}/fuzz_qmp
    DEPENDS ${_fuzz_src} ${PROJECT_SOURCE_DIR}/qmp/qmp.h
    COMMENT "Building the libFuzzer target fuzz_qmp with clang"
    VERBATIM)
  add_custom_target(fuzz_qmp_bin ALL DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/fuzz_qmp)
  add_test(NAME fuzz_qmp
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/run-fuzz.sh
                   ${CMAKE_CURRENT_BINARY_DIR}/fuzz_qmp ${LLCD_FUZZ_SECONDS})
else()
  add_test(NAME fuzz_qmp
           COMMAND sh -c "echo 'fuzz_qmp: clang not found; run scripts/install-deps' >&2; exit 1")
endif()
set_tests_properties(fuzz_qmp PROPERTIES LABELS fuzz TIMEOUT 300)
