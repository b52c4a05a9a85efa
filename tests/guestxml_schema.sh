#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Every golden output of test_guestxml must pass libvirt's own RelaxNG
# schema (virt-xml-validate, from libvirt-clients). Skipped (ctest code 77),
# never passed, when the validator is not installed.
set -eu
dir=${1:?usage: guestxml_schema.sh FIXTURE_DIR}
if ! command -v virt-xml-validate >/dev/null 2>&1; then
	echo "virt-xml-validate not found (apt-get install libvirt-clients): skipped"
	exit 77
fi
n=0
for f in "$dir"/*.*.xml; do
	virt-xml-validate "$f" domain
	n=$((n + 1))
done
[ "$n" -ge 7 ] || { echo "only $n golden files in $dir"; exit 1; }
echo "$n golden domain XML files validate"
