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

# llcd_bpf_skeleton(SRC NAME GEN [DEPENDS...]): SRC built into GEN/NAME.bpf.o
# (CO-RE, against vmlinux.h beside this file; debug sections stripped when
# llvm-strip is there) and its bpftool skeleton GEN/NAME.skel.h, struct
# NAME_bpf (bench/floor.bpf.c uses it too).
function(llcd_bpf_skeleton src name gen)
  file(MAKE_DIRECTORY ${gen})
  set(strip "")
  if(LLCD_LLVM_STRIP)
    set(strip COMMAND ${LLCD_LLVM_STRIP} -g ${gen}/${name}.bpf.o)
  endif()
  add_custom_command(OUTPUT ${gen}/${name}.bpf.o
    COMMAND ${LLCD_BPF_CLANG} -g -O2 -Wall -target bpf -D__TARGET_ARCH_${LLCD_BPF_ARCH}
            -I${LLCD_BPF_INCLUDE} -c ${src} -o ${gen}/${name}.bpf.o
    ${strip}
    DEPENDS ${src} ${LLCD_BPF_INCLUDE}/vmlinux.h ${ARGN}
    COMMENT "BPF object ${name}.bpf.o" VERBATIM)
  add_custom_command(OUTPUT ${gen}/${name}.skel.h
    COMMAND ${LLCD_BPFTOOL} gen skeleton ${gen}/${name}.bpf.o name ${name}_bpf > ${gen}/${name}.skel.h.tmp
    COMMAND ${CMAKE_COMMAND} -E rename ${gen}/${name}.skel.h.tmp ${gen}/${name}.skel.h
    DEPENDS ${gen}/${name}.bpf.o
    COMMENT "BPF skeleton ${name}.skel.h" VERBATIM)
endfunction()
set(LLCD_BPF_INCLUDE ${_tr_src} CACHE INTERNAL "vmlinux.h and tracer_abi.h of the BPF objects")
llcd_bpf_skeleton(${_tr_src}/tracer.bpf.c tracer ${_tr_gen} ${_tr_src}/tracer_abi.h)
add_custom_target(llcd_tracer_skel DEPENDS ${_tr_gen}/tracer.skel.h)

add_library(llcagent_tracer STATIC ${_tr_src}/tracer.c ${_tr_gen}/tracer.skel.h)
add_dependencies(llcagent_tracer llcd_tracer_skel)
target_include_directories(llcagent_tracer PUBLIC ${_tr_src} PRIVATE ${_tr_gen})
target_link_libraries(llcagent_tracer PUBLIC llcommon PkgConfig::LIBBPF)
