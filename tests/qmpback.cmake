# SPDX-License-Identifier: GPL-2.0-or-later
# The QMP back-end (agent/qmpback/) on the live back-end with QMP peers
# played by the test's threads, and the cgroup v2 cpuset helper; the real
# stack is e2e_qmp_backend (tests/e2e/test_qmp_backend.sh).
llcd_unit_test(test_qmpback SOURCES unit/test_qmpback.c LIBS llcagent_qmpback Threads::Threads)
