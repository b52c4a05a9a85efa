# Tests of agent/'s live I/O modules (llcagent_live).
# Label "unit": no daemon, no network; they run in the ASan build too.
llcd_unit_test(test_procstat SOURCES unit/test_procstat.c LIBS llcagent_live)
llcd_unit_test(test_log SOURCES unit/test_log.c LIBS llcagent_live)
llcd_unit_test(test_coresched SOURCES unit/test_coresched.c LIBS llcagent_live)
llcd_unit_test(test_virt SOURCES unit/test_virt.c LIBS llcagent_live)
