# Tests of qmp/ (libqmp and llc-qmp).
find_package(Threads REQUIRED)
llcd_unit_test(test_qmp_replay SOURCES unit/test_qmp_replay.c unit/qmp_fake.c
               LIBS llcqmp Threads::Threads)
llcd_unit_test(test_qmp SOURCES unit/test_qmp.c LIBS llcqmp)
