# SPDX-License-Identifier: GPL-2.0-or-later
# llcagent_tracer: llcd's in-kernel tracer of vCPU threads (agent/drivers/tracer.*).
# The BPF object is CO-RE: built once with clang's BPF target against the
# kernel types it reads, written out in agent/drivers/vmlinux.h (no build host's
# BTF is read: the package builds in a chroot or container), embedded in a
# bpftool skeleton, relocated by libbpf to the running kernel at load time.
pkg_check_modules(LIBBPF REQUIRED IMPORTED_TARGET libbpf>=1.0)
find_program(LLCD_BPF_CLANG NAMES clang clang-14)
find_program(LLCD_BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin)
find_program(LLCD_LLVM_STRIP NAMES llvm-strip llvm-strip-14)
if(NOT LLCD_BPF_CLANG OR NOT LLCD_BPFTOOL)
  message(FATAL_ERROR "agent/tracer: needs clang (BPF target) and bpftool; "
                      "install clang bpftool libbpf-dev (scripts/install-deps)")
endif()

set(_tr_src ${CMAKE_CURRENT_LIST_DIR})
set(_tr_gen ${CMAKE_CURRENT_BINARY_DIR}/tracer)
file(MAKE_DIRECTORY ${_tr_gen})
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|amd64|AMD64")
  set(_tr_arch x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(_tr_arch arm64)
else()
  set(_tr_arch ${CMAKE_SYSTEM_PROCESSOR})
endif()
# for tests/layout.cmake, which builds the object once more with the host's BTF hidden
set(LLCD_BPF_ARCH ${_tr_arch} CACHE INTERNAL "__TARGET_ARCH_ of the BPF object")

set(_tr_strip "")
if(LLCD_LLVM_STRIP)
  set(_tr_strip COMMAND ${LLCD_LLVM_STRIP} -g ${_tr_gen}/tracer.bpf.o)
endif()
add_custom_command(OUTPUT ${_tr_gen}/tracer.bpf.o
  COMMAND ${LLCD_BPF_CLANG} -g -O2 -Wall -target bpf -D__TARGET_ARCH_${_tr_arch}
          -I${_tr_src} -c ${_tr_src}/tracer.bpf.c -o ${_tr_gen}/tracer.bpf.o
  ${_tr_strip}
  DEPENDS ${_tr_src}/tracer.bpf.c ${_tr_src}/tracer_abi.h ${_tr_src}/vmlinux.h
  COMMENT "BPF object tracer.bpf.o" VERBATIM)
add_custom_command(OUTPUT ${_tr_gen}/tracer.skel.h
  COMMAND ${LLCD_BPFTOOL} gen skeleton ${_tr_gen}/tracer.bpf.o name tracer_bpf > ${_tr_gen}/tracer.skel.h.tmp
  COMMAND ${CMAKE_COMMAND} -E rename ${_tr_gen}/tracer.skel.h.tmp ${_tr_gen}/tracer.skel.h
  DEPENDS ${_tr_gen}/tracer.bpf.o
  COMMENT "BPF skeleton tracer.skel.h" VERBATIM)
add_custom_target(llcd_tracer_skel DEPENDS ${_tr_gen}/tracer.skel.h)

add_library(llcagent_tracer STATIC ${_tr_src}/tracer.c ${_tr_gen}/tracer.skel.h)
add_dependencies(llcagent_tracer llcd_tracer_skel)
target_include_directories(llcagent_tracer PUBLIC ${_tr_src} PRIVATE ${_tr_gen})
target_link_libraries(llcagent_tracer PUBLIC llcommon PkgConfig::LIBBPF)
