#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh COMMAND...: run a test that needs the real QEMU.  Installs the
# packages first (scripts/install-deps) if qemu-system-x86_64 is missing;
# exits 77 (ctest: skipped) with a clear message only if QEMU cannot be had.
top=$(cd "$(dirname "$0")/../.." && pwd)
qemu=${QEMU:-qemu-system-x86_64}
if ! command -v "$qemu" >/dev/null 2>&1; then
	echo "run.sh: $qemu not found, running scripts/install-deps"
	sh "$top/scripts/install-deps" || true
fi
if ! command -v "$qemu" >/dev/null 2>&1; then
	echo "SKIPPED: $qemu is not installed and scripts/install-deps could not install it" \
	     "(run it as root); this test needs the real QEMU" >&2
	exit 77
fi
exec "$@"
