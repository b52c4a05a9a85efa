# Tests of policy/ (the engine) and its adapters.
llcd_unit_test(test_topo SOURCES unit/test_topo.c LIBS llcpolicy_io)
llcd_unit_test(test_policy SOURCES unit/test_policy.c LIBS llcpolicy_io)
