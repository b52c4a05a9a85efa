# SPDX-License-Identifier: GPL-2.0-or-later
# Tests of common/ (the error record, CPU sets, the clock, the JSON getters,
# the getopt table read from a usage text, files in directories others might
# write).
llcd_unit_test(test_cpuset SOURCES unit/test_cpuset.c LIBS llcommon)
llcd_unit_test(test_jsonget SOURCES unit/test_jsonget.c LIBS llcommon_json)
llcd_unit_test(test_cliopt SOURCES unit/test_cliopt.c LIBS llcommon)
llcd_unit_test(test_safefile SOURCES unit/test_safefile.c LIBS llcommon)
