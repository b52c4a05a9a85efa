# SPDX-License-Identifier: GPL-2.0-or-later
# Debian's Prometheus scrapes llcd's metrics endpoint; the example alerting
# rules (packaging/prometheus/) are checked and evaluated (label prometheus).
add_test(NAME prometheus_scrape
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/prometheus/test_prometheus.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
set_tests_properties(prometheus_scrape PROPERTIES LABELS "prometheus" TIMEOUT 120)
