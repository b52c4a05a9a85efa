# SPDX-License-Identifier: GPL-2.0-or-later
# The hardware benchmark kit (bench/hw/, docs/benchmarks.md "Real hardware").
# benchkit_host: host mode and the report on this machine and on a synthetic
# 2-LLC map (label benchkit). benchkit_e2e: host mode and guest mode (a real
# libvirt guest through tests/e2e/lib.sh, which takes the host-wide e2e
# lock) with short repeats, under 5 minutes here (labels benchkit, e2e).
# Both assert that the kit ran and that every number in its report came
# from a run, never a speed-up.
add_test(NAME benchkit_host COMMAND bash ${PROJECT_SOURCE_DIR}/bench/hw/test_benchkit.sh host)
set_tests_properties(benchkit_host PROPERTIES LABELS "benchkit" TIMEOUT 300 RUN_SERIAL TRUE
  ENVIRONMENT "LLCD_BUILD_DIR=${CMAKE_BINARY_DIR};LLCD_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
add_test(NAME benchkit_e2e COMMAND bash ${PROJECT_SOURCE_DIR}/bench/hw/test_benchkit.sh all)
set_tests_properties(benchkit_e2e PROPERTIES LABELS "benchkit;e2e" TIMEOUT 600 RUN_SERIAL TRUE
  SKIP_RETURN_CODE 77
  ENVIRONMENT "LLCD_BUILD_DIR=${CMAKE_BINARY_DIR};LLCD_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
