# SPDX-License-Identifier: GPL-2.0-or-later
# The control protocol (ctl.c, both sides) and the daemon's socket server.
add_library(llcctl_proto STATIC ctl.c control.c)
target_include_directories(llcctl_proto PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(llcctl_proto PUBLIC llcommon PkgConfig::JSONC)

add_executable(llcctl ${CMAKE_CURRENT_LIST_DIR}/llcctl.c)
target_link_libraries(llcctl PRIVATE llcctl_proto)
