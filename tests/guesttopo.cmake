# Tests of the guest topology recommendation (policy/guesttopo.c) and its
# domain XML writer (policy/guestxml.c); docs/guest-topology.md.
llcd_unit_test(test_guesttopo SOURCES unit/test_guesttopo.c LIBS llcpolicy_io)
llcd_unit_test(test_guestxml SOURCES unit/test_guestxml.c LIBS llcpolicy_io)
# The rewritten XML must be valid for libvirt (its RelaxNG schema).
add_test(NAME guestxml_schema
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/guestxml_schema.sh ${LLCD_FIXTURES}/domains/guesttopo)
set_tests_properties(guestxml_schema PROPERTIES LABELS "schema" SKIP_RETURN_CODE 77)
# The end-to-end test tests/e2e/test_guest_topology.sh (boots TCG guests
# with the computed topology and reads it back from inside) is the ctest test
# e2e_guest_topology, label e2e: tests/e2e.cmake registers every
# tests/e2e/test_*.sh, so it is not added here a second time.
