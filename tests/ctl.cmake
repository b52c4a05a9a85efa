# Tests of the control protocol and socket server (agent/ctl.c, control.c).
llcd_unit_test(test_ctl SOURCES unit/test_ctl.c LIBS llcctl_proto pthread)
