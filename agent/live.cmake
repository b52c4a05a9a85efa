# llcagent_live: the live I/O modules of llcd (/proc, libvirt, core
# scheduling, logging). policy/ stays pure; everything here does I/O.
if(NOT LIBVIRT_FOUND)
  message(FATAL_ERROR "agent/: libvirt not found (pkg-config libvirt); "
                      "install libvirt-dev (scripts/install-deps)")
endif()
find_package(Threads REQUIRED)

add_library(llcagent_live STATIC
  ${CMAKE_CURRENT_LIST_DIR}/log.c
  ${CMAKE_CURRENT_LIST_DIR}/procstat.c
  ${CMAKE_CURRENT_LIST_DIR}/coresched.c
  ${CMAKE_CURRENT_LIST_DIR}/virt.c)
target_include_directories(llcagent_live PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(llcagent_live PUBLIC llcpolicy PkgConfig::LIBVIRT
                      PkgConfig::LIBXML2 Threads::Threads)
