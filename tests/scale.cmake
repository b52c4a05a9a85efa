# SPDX-License-Identifier: GPL-2.0-or-later
# llcd at scale on libvirt's test driver (label scale): 200 running domains
# of 16 vCPUs, every vCPU pinned through libvirt, list/map/vcpuinfo, and
# memory flat over 3,000 periods of 10 ms. bench/test-driver-scale runs the
# same at 2,000 domains and 10,000 periods (docs/benchmarks.md).
add_test(NAME llcd_test_driver_scale
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scale/test_driver_scale.sh ${CMAKE_BINARY_DIR} 200 3000)
set_tests_properties(llcd_test_driver_scale PROPERTIES LABELS "scale" TIMEOUT 300 RUN_SERIAL TRUE)
