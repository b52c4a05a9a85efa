# llcagent_guestchan: llcd's end of the guest helper's channel
# (agent/guestchan.h, docs/guest-channel.md). The protocol numbers come
# from guest-tools/guestproto.h, the header llc-guest writes with.
add_library(llcagent_guestchan STATIC ${CMAKE_CURRENT_LIST_DIR}/guestchan.c
            ${CMAKE_CURRENT_LIST_DIR}/guestchan_xml.c)
target_include_directories(llcagent_guestchan PUBLIC ${CMAKE_CURRENT_LIST_DIR}
                           ${PROJECT_SOURCE_DIR}/guest-tools)
target_link_libraries(llcagent_guestchan PUBLIC llcpolicy llcpolicy_io PkgConfig::JSONC m)
