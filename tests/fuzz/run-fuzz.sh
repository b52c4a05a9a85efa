#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# run-fuzz.sh FUZZER SECONDS: run the libFuzzer target for a bounded time on
# a seed corpus made from the recorded QMP transcripts (tests/fixtures/qmp).
# Fails if the fuzzer finds a crash, a leak or a hang; the reproducer is
# left in the printed directory.
set -eu
fuzzer=$1
secs=$2
here=$(cd "$(dirname "$0")" && pwd)
fixtures="$here/../fixtures/qmp"
work=$(mktemp -d /tmp/llcd-fuzz-qmp.XXXXXX)
mkdir "$work/corpus"

# Seeds: the messages QEMU sent in each transcript.  Set-up byte 0x07 starts
# past the handshake with three commands (ids 2-4, as recorded); 0x06 feeds
# the greeting too.  The second byte is the feed size (0 = all at once).
n=0
for t in "$fixtures"/*.txt; do
	for setup in '\007\000' '\007\005' '\006\000' '\006\001'; do
		n=$((n + 1))
		{
			printf "$setup"
			case $setup in
			'\007'*) grep '^< ' "$t" | tail -n +3 ;;
			*) grep '^< ' "$t" ;;
			esac | sed 's/^< //; s/$/\r/'
		} >"$work/corpus/seed$n"
	done
done

echo "run-fuzz.sh: $n seeds, $secs s, artifacts in $work"
cd "$work"
if "$fuzzer" -max_total_time="$secs" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 -artifact_prefix="$work/" corpus >"$work/log" 2>&1; then
	grep -E '^(#[0-9]+.*DONE|Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$work/log" || true
	rm -rf "$work"
	echo "run-fuzz.sh: no crash"
else
	rc=$?
	tail -n 60 "$work/log"
	echo "run-fuzz.sh: FAILED (exit $rc); reproducer and log in $work" >&2
	exit 1
fi
