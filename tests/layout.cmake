# SPDX-License-Identifier: GPL-2.0-or-later
# The layering the build must keep (label unit: a grep and nm, no daemon):
# llcd links nothing from sim/, and agent/ includes nothing from sim/.
add_test(NAME layout_no_sim_in_llcd
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/layout/check_layout.sh ${CMAKE_SOURCE_DIR}
                 $<TARGET_FILE:llcd> $<TARGET_FILE:llcd-sim>)
set_tests_properties(layout_no_sim_in_llcd PROPERTIES LABELS "unit" TIMEOUT 60)
