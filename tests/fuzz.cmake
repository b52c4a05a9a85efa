# SPDX-License-Identifier: GPL-2.0-or-later
# libFuzzer targets, built with clang next to the main (gcc) build.
#
# llcd_fuzz_target(NAME
#                  SOURCES file...        the fuzzer (LLVMFuzzerTestOneInput)
#                                         and the sources it tests; relative
#                                         paths are relative to tests/
#                  [INCLUDES dir...]      header directories
#                  [PKGS pkg...]          pkg-config packages to compile/link
#                  [CORPUS dir]           seed corpus (read only)
#                  [DICT file]            libFuzzer dictionary
#                  [SECONDS n])           run time of the test, default 15
#
# builds build/fuzz/NAME with -fsanitize=fuzzer,address,undefined (a custom
# command calling clang directly: the code under test is compiled again,
# instrumented) and registers the ctest test NAME, labelled "fuzz", which
# runs it for SECONDS on the seed corpus plus build/fuzz/NAME.corpus (where
# new inputs go). Crashes, leaks, sanitizer reports and timeouts fail the
# test; the reproducer lands in build/fuzz/NAME.artifacts/. Without a
# working clang + libFuzzer the test is still registered and fails, saying
# to run scripts/install-deps: a missing fuzzer never passes silently.
# Reproduce a crash: build/fuzz/NAME build/fuzz/NAME.artifacts/crash-...
include_guard(GLOBAL)

find_program(LLCD_CLANG NAMES clang clang-14 DOC "clang, for the libFuzzer targets")
set(LLCD_FUZZ_FLAGS -g -O1 -fno-omit-frame-pointer
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
    -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wstrict-prototypes
    -Wno-unused-parameter)
if(LLCD_WERROR)
  list(APPEND LLCD_FUZZ_FLAGS -Werror)
endif()

# Does clang link a libFuzzer binary? (libclang-rt-14-dev on Debian 12)
if(LLCD_CLANG AND NOT DEFINED LLCD_LIBFUZZER_WORKS)
  set(_probe ${CMAKE_BINARY_DIR}/CMakeFiles/llcd_fuzz_probe)
  file(WRITE ${_probe}.c
       "#include <stddef.h>\n#include <stdint.h>\n"
       "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\n"
       "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n")
  execute_process(COMMAND ${LLCD_CLANG} -fsanitize=fuzzer,address,undefined
                          ${_probe}.c -o ${_probe}
                  RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_VARIABLE _out)
  if(_rc EQUAL 0)
    set(LLCD_LIBFUZZER_WORKS ON CACHE INTERNAL "clang links libFuzzer binaries")
  else()
    message(WARNING "fuzz: ${LLCD_CLANG} cannot link a libFuzzer binary "
            "(run scripts/install-deps; fuzz tests will fail): ${_out}")
  endif()
endif()

function(llcd_fuzz_target name)
  cmake_parse_arguments(F "" "CORPUS;DICT;SECONDS" "SOURCES;INCLUDES;PKGS" ${ARGN})
  if(NOT F_SECONDS)
    set(F_SECONDS 15)
  endif()
  set(dir ${CMAKE_BINARY_DIR}/fuzz)
  set(bin ${dir}/${name})

  if(NOT LLCD_CLANG OR NOT LLCD_LIBFUZZER_WORKS)
    add_test(NAME ${name} COMMAND sh -c
             "echo '${name}: no clang with libFuzzer (clang, libclang-rt-14-dev): run scripts/install-deps' >&2; exit 1")
    set_tests_properties(${name} PROPERTIES LABELS fuzz)
    return()
  endif()

  set(srcs "")
  set(deps "")
  foreach(s ${F_SOURCES})
    get_filename_component(abs ${s} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    list(APPEND srcs ${abs})
  endforeach()
  set(incs "")
  foreach(i ${F_INCLUDES})
    get_filename_component(abs ${i} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    list(APPEND incs -I${abs})
    file(GLOB hdrs ${abs}/*.h)
    list(APPEND deps ${hdrs})
  endforeach()
  set(pkgflags "")
  if(F_PKGS)
    execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --cflags --libs ${F_PKGS}
                    OUTPUT_VARIABLE out RESULT_VARIABLE rc
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "fuzz: pkg-config cannot find ${F_PKGS} for ${name}")
    endif()
    separate_arguments(pkgflags UNIX_COMMAND "${out}")
  endif()

  add_custom_command(OUTPUT ${bin}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${LLCD_CLANG} ${LLCD_FUZZ_FLAGS} ${incs} ${srcs} ${pkgflags} -o ${bin}
    DEPENDS ${srcs} ${deps}
    COMMENT "Building libFuzzer target ${name} with clang"
    VERBATIM)
  add_custom_target(${name}_build ALL DEPENDS ${bin})

  file(MAKE_DIRECTORY ${bin}.corpus ${bin}.artifacts)
  set(args -max_total_time=${F_SECONDS} -timeout=10 -rss_limit_mb=2048
      -print_final_stats=1 -artifact_prefix=${bin}.artifacts/)
  if(F_DICT)
    get_filename_component(abs ${F_DICT} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    list(APPEND args -dict=${abs})
  endif()
  list(APPEND args ${bin}.corpus)
  if(F_CORPUS)
    get_filename_component(abs ${F_CORPUS} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    list(APPEND args ${abs})
  endif()
  add_test(NAME ${name} COMMAND ${bin} ${args})
  math(EXPR limit "${F_SECONDS} * 4 + 60")
  set_tests_properties(${name} PROPERTIES LABELS fuzz TIMEOUT ${limit})
endfunction()
