# SPDX-License-Identifier: GPL-2.0-or-later
# Tests of the llc-policy annotation parser (policy/annotation_xml.c).
llcd_unit_test(test_annotation SOURCES unit/test_annotation.c LIBS llcpolicy_io)
# llcd.conf's policy-rule matcher (policy/policyrule.c) on Nova and KubeVirt domain XML
llcd_unit_test(test_policyrule SOURCES unit/test_policyrule.c LIBS llcpolicy_io)

include(${CMAKE_CURRENT_LIST_DIR}/fuzz.cmake)
# the annotation parser, which both fuzz targets build in
set(annotation_fuzz_sources ../policy/annotation_xml.c ../policy/xmlsafe.c
    ../policy/annotation.c ../common/cpuset.c ../common/err.c ../common/names.c)
# libFuzzer: annot_parse() and annot_from_domain_xml() on every input, with
# the format/parse round trip checked whenever the parse succeeds.
llcd_fuzz_target(fuzz_annotation
  SOURCES fuzz/fuzz_annotation.c ${annotation_fuzz_sources}
  INCLUDES ../policy ../common PKGS libxml-2.0
  CORPUS fuzz/corpus/annotation DICT fuzz/annotation.dict SECONDS 15)
# policy-rule: parse/format round trip of the first line, the rest matched as metadata
llcd_fuzz_target(fuzz_policyrule
  SOURCES fuzz/fuzz_policyrule.c ../policy/policyrule.c ${annotation_fuzz_sources}
  INCLUDES ../policy ../common PKGS libxml-2.0
  CORPUS fuzz/corpus/policyrule DICT fuzz/annotation.dict SECONDS 15)
