# Tests of policy/ (the engine) and its adapters.
llcd_unit_test(test_topo SOURCES unit/test_topo.c LIBS llcpolicy_io)
llcd_unit_test(test_policy SOURCES unit/test_policy.c LIBS llcpolicy_io)
llcd_unit_test(test_wakeups SOURCES unit/test_wakeups.c LIBS llcpolicy)
llcd_unit_test(test_policy_wakeups SOURCES unit/test_policy_wakeups.c LIBS llcpolicy_io)
