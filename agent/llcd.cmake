# SPDX-License-Identifier: GPL-2.0-or-later
# llcd, the daemon: the loop, the control socket and the live back-end.
# llcd_core (the daemon core and the start-up llcd and llcd-sim share) is
# also what sim/'s llcd-sim builds on; llcd links nothing from sim/
# (tests/layout.cmake checks both the includes and the symbols).
pkg_check_modules(SYSTEMD IMPORTED_TARGET libsystemd)
find_package(Threads REQUIRED)
# the metrics endpoint (metrics-listen): libmicrohttpd, Debian libmicrohttpd-dev
pkg_check_modules(MHD REQUIRED IMPORTED_TARGET libmicrohttpd)
add_library(llcd_core STATIC
  ${CMAKE_CURRENT_LIST_DIR}/config.c
  ${CMAKE_CURRENT_LIST_DIR}/daemon.c
  ${CMAKE_CURRENT_LIST_DIR}/handlers.c
  ${CMAKE_CURRENT_LIST_DIR}/handlers_guest.c
  ${CMAKE_CURRENT_LIST_DIR}/daemon_cli.c
  ${CMAKE_CURRENT_LIST_DIR}/httpd.c
  ${CMAKE_CURRENT_LIST_DIR}/metrics.c
  ${CMAKE_CURRENT_LIST_DIR}/stats.c
  ${CMAKE_CURRENT_LIST_DIR}/recommend.c)
target_include_directories(llcd_core PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_compile_definitions(llcd_core PUBLIC LLCD_VERSION="${PROJECT_VERSION}")
target_link_libraries(llcd_core PUBLIC llcctl_proto llcagent_core llcpolicy_io llcommon_json PkgConfig::MHD m Threads::Threads)
if(SYSTEMD_FOUND)
  target_compile_definitions(llcd_core PRIVATE HAVE_SYSTEMD)
  target_link_libraries(llcd_core PUBLIC PkgConfig::SYSTEMD)
endif()

add_executable(llcd ${CMAKE_CURRENT_LIST_DIR}/llcd.c)
target_link_libraries(llcd PRIVATE llcd_core llcagent_live llcagent_qmpback)
