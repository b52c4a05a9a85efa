# Tests of the guest topology recommendation (policy/guesttopo.c) and its
# domain XML writer (policy/guestxml.c); docs/guest-topology.md.
llcd_unit_test(test_guesttopo SOURCES unit/test_guesttopo.c LIBS llcpolicy_io)
