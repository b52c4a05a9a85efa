# SPDX-License-Identifier: GPL-2.0-or-later
# Tests of the guest helper (guest-tools/, docs/llc-guest.md) and of llcd's
# end of its channel (agent/drivers/guestchan.c, docs/guest-channel.md).
# Fixtures: tests/fixtures/guest-proc/ (make.sh regenerates them).
llcd_unit_test(test_guest SOURCES unit/test_guest.c LIBS llcguest_core PkgConfig::JSONC)
llcd_unit_test(test_guestchan SOURCES unit/test_guestchan.c LIBS llcagent_guestchan)

# guestchan-probe: drives guestchan like llcd, for tests/e2e/test_guest_helper.sh.
add_executable(guestchan-probe guestchan_probe.c)
target_link_libraries(guestchan-probe PRIVATE llcagent_guestchan)

# libFuzzer on the report parser (guestchan_parse) and the channel's line
# splitting (a socketpair fed with the input), label fuzz.
include(${CMAKE_CURRENT_LIST_DIR}/fuzz.cmake)
llcd_fuzz_target(fuzz_guestchan
  SOURCES fuzz/fuzz_guestchan.c ../agent/drivers/guestchan.c ../common/cpuset.c ../common/err.c ../common/safefile.c
          ../common/jsonget.c
  INCLUDES ../agent/drivers ../agent/daemon ../policy ../common
  PKGS json-c
  CORPUS fuzz/corpus/guestchan
  SECONDS 15)
