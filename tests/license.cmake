# SPDX-License-Identifier: GPL-2.0-or-later
# The license (COPYING, GPL-2.0-or-later): every source file says so in an
# SPDX-License-Identifier line (scripts/spdx lists those that do not).
add_test(NAME license_spdx COMMAND sh ${CMAKE_SOURCE_DIR}/scripts/spdx)
set_tests_properties(license_spdx PROPERTIES LABELS "license" TIMEOUT 60)
