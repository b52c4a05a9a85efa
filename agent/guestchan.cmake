# SPDX-License-Identifier: GPL-2.0-or-later
# llcagent_guestchan: llcd's end of the guest helper's channel
# (agent/guestchan.h, docs/guest-channel.md). The protocol numbers come
# from common/guestproto.h, the header llc-guest writes with. The channel
# lookup in domain XML (guestchan_xml.c) reads it with policy/xmlsafe.
add_library(llcagent_guestchan STATIC ${CMAKE_CURRENT_LIST_DIR}/guestchan.c
            ${CMAKE_CURRENT_LIST_DIR}/guestchan_xml.c)
target_include_directories(llcagent_guestchan PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(llcagent_guestchan PUBLIC llcpolicy llcpolicy_io llcommon_json PkgConfig::JSONC m)
