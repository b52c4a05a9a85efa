# SPDX-License-Identifier: GPL-2.0-or-later
# packaging/: the shipped config, the man pages, the systemd units, and the
# Debian and rpm packages built, installed, run and purged (label packaging).
set(_pkg ${CMAKE_CURRENT_SOURCE_DIR}/packaging)
add_test(NAME packaging_config COMMAND bash ${_pkg}/test_config.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
# the programs' --help: the options each accepts (common/cliopt.h)
add_test(NAME packaging_man COMMAND bash ${_pkg}/test_man.sh ${CMAKE_SOURCE_DIR}
  $<TARGET_FILE:llcd> $<TARGET_FILE:llcd-sim> $<TARGET_FILE:llcctl> $<TARGET_FILE:llcsim>
  $<TARGET_FILE:llc-guesttopo> $<TARGET_FILE:llcd-place> $<TARGET_FILE:llc-qmp> $<TARGET_FILE:llc-guest>)
add_test(NAME packaging_units COMMAND bash ${_pkg}/test_units.sh ${CMAKE_SOURCE_DIR})
# the listeners' limits and deadlines in docs/protocol.md and docs/install.md
# are the constants of agent/daemon/control.h, httpd.h, ctl.h, recommend.h
add_test(NAME packaging_docs_limits COMMAND bash ${_pkg}/test_docs_limits.sh ${CMAKE_SOURCE_DIR})
# KubeVirt's onDefineDomain hook (packaging/kubernetes/llcd-kubevirt-hook)
add_test(NAME packaging_kubevirt_hook COMMAND bash ${_pkg}/test_kubevirt_hook.sh ${CMAKE_SOURCE_DIR})
# builds the .deb and the .rpm (one compile each, -j2), installs the .deb on
# this machine and purges it again: RUN_SERIAL
add_test(NAME packaging_deb_rpm COMMAND bash ${_pkg}/test_packaging.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(packaging_config packaging_man packaging_units packaging_docs_limits packaging_kubevirt_hook PROPERTIES LABELS "packaging" TIMEOUT 60)
set_tests_properties(packaging_deb_rpm PROPERTIES LABELS "packaging" TIMEOUT 600 RUN_SERIAL TRUE)
# the .deb under a real systemd: a Debian 12 root booted in systemd-nspawn
# (tests/packaging/test_nspawn.sh; root cached in /var/cache/llcd-test),
# with the .deb packaging_deb_rpm built
set(_debs ${CMAKE_BINARY_DIR}/packaging-debs)
add_test(NAME packaging_nspawn COMMAND bash ${_pkg}/test_nspawn.sh ${CMAKE_SOURCE_DIR} ${_debs})
set_tests_properties(packaging_deb_rpm PROPERTIES ENVIRONMENT "LLCD_PKG_OUT=${_debs}" FIXTURES_SETUP pkg_deb)
# about 15 s with the root cached; its first run on a machine builds the
# root with mmdebstrap (90-170 s here)
set_tests_properties(packaging_nspawn PROPERTIES LABELS "packaging;nspawn" TIMEOUT 420 RUN_SERIAL TRUE
  FIXTURES_REQUIRED pkg_deb)
# a KubeVirt node: the DaemonSet manifest checked, the node image built from
# the .deb (its Debian base root cached in /var/cache/llcd-test: the first
# run on a machine makes it with mmdebstrap, about 60 s), and the pods test
# (tests/e2e/test_kubevirt_pods.sh) run with llcd from the image under
# podman with the manifest's privileges and mounts
add_test(NAME packaging_kubevirt_image COMMAND bash ${_pkg}/test_kubevirt_image.sh ${CMAKE_SOURCE_DIR} ${_debs}
  ${CMAKE_BINARY_DIR})
set_tests_properties(packaging_kubevirt_image PROPERTIES LABELS "packaging;e2e" TIMEOUT 900 RUN_SERIAL TRUE
  FIXTURES_REQUIRED pkg_deb)
