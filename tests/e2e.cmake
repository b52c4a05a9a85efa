# SPDX-License-Identifier: GPL-2.0-or-later
# End-to-end tests against a real libvirtd and real QEMU TCG guests
# (tests/e2e/, docs/e2e.md). Every tests/e2e/test_NAME.sh is the ctest test
# e2e_NAME, label e2e. They need root, install what they need, start
# libvirtd by hand if it is not running, and take minutes, so: a generous
# timeout, and RUN_SERIAL (each boots TCG guests that load every CPU).
# `ctest -L e2e` runs only these; `ctest -LE e2e` everything else.
file(GLOB _e2e_tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/e2e/test_*.sh)
list(SORT _e2e_tests)
foreach(script ${_e2e_tests})
  get_filename_component(name ${script} NAME_WE)
  string(REGEX REPLACE "^test_" "e2e_" name ${name})
  add_test(NAME ${name} COMMAND bash ${script})
  set_tests_properties(${name} PROPERTIES
    LABELS "e2e"
    TIMEOUT 900
    RUN_SERIAL TRUE
    SKIP_RETURN_CODE 77
    ENVIRONMENT "LLCD_BUILD_DIR=${CMAKE_BINARY_DIR};LLCD_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
endforeach()
