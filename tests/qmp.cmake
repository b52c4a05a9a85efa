# Tests of qmp/ (libqmp and llc-qmp).
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
