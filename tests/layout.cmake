# SPDX-License-Identifier: GPL-2.0-or-later
# The layering the tree and the build keep (label unit: greps, nm, one
# clang run; no daemon). tests/layout/check_layout.sh says each rule.
set(_layout bash ${CMAKE_CURRENT_SOURCE_DIR}/layout/check_layout.sh)
# llcd links nothing from sim/, and agent/ includes nothing from sim/
add_test(NAME layout_no_sim_in_llcd
         COMMAND ${_layout} sim ${CMAKE_SOURCE_DIR} $<TARGET_FILE:llcd> $<TARGET_FILE:llcd-sim>)
# bench/ neither includes nor compiles tests/ (testsupport/ is shared)
add_test(NAME layout_bench_no_tests COMMAND ${_layout} bench ${CMAKE_SOURCE_DIR})
# llcctl's protocol library and the tracer link no policy engine
add_test(NAME layout_ctl_no_engine
         COMMAND ${_layout} engine llcctl_proto "$<TARGET_PROPERTY:llcctl_proto,LINK_LIBRARIES>"
                 $<TARGET_FILE:llcctl> $<TARGET_FILE:llcd>)
add_test(NAME layout_tracer_no_engine
         COMMAND ${_layout} engine llcagent_tracer "$<TARGET_PROPERTY:llcagent_tracer,LINK_LIBRARIES>"
                 $<TARGET_FILE:test_tracer> $<TARGET_FILE:llcd>)
# every exported engine symbol carries its module's prefix
add_test(NAME layout_engine_prefixes
         COMMAND ${_layout} prefixes $<TARGET_FILE:llcpolicy> $<TARGET_FILE:llcpolicy_io>)
# no C file outside tests/ over 1,000 lines
add_test(NAME layout_file_size COMMAND ${_layout} size ${CMAKE_SOURCE_DIR})
# agent/'s folders include in one direction (ctl/ a client, drivers/ below
# live/, the daemon core naming no back-end); private headers stay home
add_test(NAME layout_agent_folders COMMAND ${_layout} agent ${CMAKE_SOURCE_DIR})
# backend.h, hooks.h and query.h name no back-end
add_test(NAME layout_backend_seam COMMAND ${_layout} seam ${CMAKE_SOURCE_DIR})
# docs/design.md's code map names every file and the functions where they are
add_test(NAME layout_code_map COMMAND ${_layout} codemap ${CMAKE_SOURCE_DIR})
# every file path docs/ cites exists
add_test(NAME layout_doc_paths COMMAND ${_layout} docpaths ${CMAKE_SOURCE_DIR})
# struct ldom's ext_* members are written by ext.c only; private headers
# include at most 8 headers
add_test(NAME layout_ext_owner COMMAND ${_layout} owners ${CMAKE_SOURCE_DIR})
set_tests_properties(layout_no_sim_in_llcd layout_bench_no_tests layout_ctl_no_engine
                     layout_tracer_no_engine layout_engine_prefixes layout_file_size
                     layout_agent_folders layout_backend_seam layout_code_map layout_doc_paths layout_ext_owner PROPERTIES LABELS "unit" TIMEOUT 60)
# the BPF object builds without the build host's BTF (agent/drivers/vmlinux.h)
add_test(NAME layout_bpf_no_host_btf
         COMMAND ${_layout} bpf ${CMAKE_SOURCE_DIR} ${LLCD_BPF_CLANG} ${LLCD_BPF_ARCH})
set_tests_properties(layout_bpf_no_host_btf PROPERTIES LABELS "unit;bpf" TIMEOUT 120)
