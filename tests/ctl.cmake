# SPDX-License-Identifier: GPL-2.0-or-later
# Tests of the control protocol and socket server (agent/ctl/ctl.c, control.c).
llcd_unit_test(test_ctl SOURCES unit/test_ctl.c LIBS llcd_core pthread)

include(${CMAKE_CURRENT_SOURCE_DIR}/fuzz.cmake)
llcd_fuzz_target(fuzz_ctl
  SOURCES fuzz/fuzz_ctl.c ../agent/ctl/ctl.c ../common/err.c
  INCLUDES ../agent/ctl ../agent/daemon ../policy ../common
  PKGS json-c
  CORPUS fuzz/corpus/ctl
  SECONDS 10)
llcd_fuzz_target(fuzz_config
  SOURCES fuzz/fuzz_config.c ../agent/daemon/config.c ../policy/annotation.c ../policy/annotation_xml.c
          ../policy/policyrule.c ../policy/xmlsafe.c ../common/cpuset.c ../common/err.c ../common/names.c ../agent/daemon/modes.c
  INCLUDES ../agent/ctl ../agent/daemon ../policy ../common
  PKGS libxml-2.0
  CORPUS fuzz/corpus/config
  SECONDS 10)
llcd_unit_test(test_config SOURCES unit/test_config.c ../agent/daemon/config.c LIBS llcpolicy_io llcagent_core)
target_include_directories(test_config PRIVATE ${CMAKE_SOURCE_DIR}/agent/daemon)
llcd_unit_test(test_perfcount SOURCES unit/test_perfcount.c ../agent/drivers/perfcount.c LIBS llcpolicy)
target_include_directories(test_perfcount PRIVATE ${CMAKE_SOURCE_DIR}/agent/drivers)
# the resctrl reader against a fixture tree (a fake seam: no resctrl here)
llcd_unit_test(test_resctrl SOURCES unit/test_resctrl.c ../agent/drivers/resctrl.c LIBS llcpolicy)
target_include_directories(test_resctrl PRIVATE ${CMAKE_SOURCE_DIR}/agent/drivers)
llcd_unit_test(test_metrics SOURCES unit/test_metrics.c LIBS llcd_core)
llcd_unit_test(test_recommend SOURCES unit/test_recommend.c LIBS llcd_core)
llcd_unit_test(test_httpd SOURCES unit/test_httpd.c LIBS llcd_core)
llcd_unit_test(test_daemon SOURCES unit/test_daemon.c LIBS llcsim_daemon)
target_compile_definitions(test_daemon PRIVATE LLCD_SRC="${CMAKE_SOURCE_DIR}")
