# Tests of the llc-policy annotation parser (policy/annotation_xml.c).
llcd_unit_test(test_annotation SOURCES unit/test_annotation.c LIBS llcpolicy_io)
