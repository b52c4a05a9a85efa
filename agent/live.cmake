# SPDX-License-Identifier: GPL-2.0-or-later
# llcagent_live: the live I/O modules of llcd (/proc, libvirt, core
# scheduling, logging) and the live back-end of the agent loop (agent/live/,
# one concern per file: agent/live/live_int.h lists them).
# policy/ stays pure; everything here does I/O.
if(NOT LIBVIRT_FOUND)
  message(FATAL_ERROR "agent/: libvirt not found (pkg-config libvirt); "
                      "install libvirt-dev (scripts/install-deps)")
endif()
find_package(Threads REQUIRED)
# virDomainQemuMonitorCommand (QMP passthrough, only when the operator allows it)
pkg_check_modules(LIBVIRT_QEMU REQUIRED IMPORTED_TARGET libvirt-qemu)
# move_pages(2) in query mode: where a guest's memory lives (memnode.c)
pkg_check_modules(NUMA REQUIRED IMPORTED_TARGET numa)

add_library(llcagent_live STATIC
  ${CMAKE_CURRENT_LIST_DIR}/procstat.c
  ${CMAKE_CURRENT_LIST_DIR}/coresched.c
  ${CMAKE_CURRENT_LIST_DIR}/virt.c
  ${CMAKE_CURRENT_LIST_DIR}/virt_domxml.c
  ${CMAKE_CURRENT_LIST_DIR}/perfcount.c
  ${CMAKE_CURRENT_LIST_DIR}/resctrl.c
  ${CMAKE_CURRENT_LIST_DIR}/memnode.c
  ${CMAKE_CURRENT_LIST_DIR}/cgcpuset.c
  ${CMAKE_CURRENT_LIST_DIR}/cgbound.c
  ${CMAKE_CURRENT_LIST_DIR}/live/live.c
  ${CMAKE_CURRENT_LIST_DIR}/live/domains.c
  ${CMAKE_CURRENT_LIST_DIR}/live/observe.c
  ${CMAKE_CURRENT_LIST_DIR}/live/mbm.c
  ${CMAKE_CURRENT_LIST_DIR}/live/numa.c
  ${CMAKE_CURRENT_LIST_DIR}/live/apply.c
  ${CMAKE_CURRENT_LIST_DIR}/live/state.c
  ${CMAKE_CURRENT_LIST_DIR}/live/kcas.c
  ${CMAKE_CURRENT_LIST_DIR}/live/describe.c
  ${CMAKE_CURRENT_LIST_DIR}/live/qmpcheck.c
  ${CMAKE_CURRENT_LIST_DIR}/live/requests.c
  ${CMAKE_CURRENT_LIST_DIR}/live/ext.c
  ${CMAKE_CURRENT_LIST_DIR}/live/bound.c
  ${CMAKE_CURRENT_LIST_DIR}/live/conns.c)
target_include_directories(llcagent_live PUBLIC ${CMAKE_CURRENT_LIST_DIR} ${CMAKE_CURRENT_LIST_DIR}/live)
target_link_libraries(llcagent_live PUBLIC llcagent_tracer llcagent_core llcagent_guestchan llcpolicy_io llcqmp llcommon_json
                      PkgConfig::LIBVIRT PkgConfig::LIBVIRT_QEMU PkgConfig::NUMA
                      PkgConfig::LIBXML2 PkgConfig::JSONC Threads::Threads)

# the QMP back-end (backend qmp): QEMU without libvirt, on the live
# back-end's code (agent/qmpback/qmpback.h)
add_library(llcagent_qmpback STATIC ${CMAKE_CURRENT_LIST_DIR}/qmpback/qmpback.c)
target_include_directories(llcagent_qmpback PUBLIC ${CMAKE_CURRENT_LIST_DIR}/qmpback)
target_link_libraries(llcagent_qmpback PUBLIC llcagent_live)
