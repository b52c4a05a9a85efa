#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# In the guest of tests/e2e/test_guest_helper.sh (/etc/llcd-e2e/run): a
# 4-thread busy process started on CPUs 0,4,1,5 (both virtual LLCs),
# llc-guest --aggregate reporting on org.llcd.guest.0, and every 2 s each
# busy thread's affinity and last CPU read from /proc:
#   E2E-GUESTAFF t=N TID:ALLOWED@CPU TID:ALLOWED@CPU ...
e2e-spin -n 4 -c 0,4,1,5 -r 5 -t 200 &
spin=$!
# -t 2: four busy threads fill an LLC of 4 CPUs exactly; measured over
# ticks their share can read 4.01, which the strict size guard refuses.
llc-guest --aggregate -t 2 -v &
i=0
while [ $i -lt 60 ]; do
	i=$((i + 1))
	sleep 2
	line=
	for t in /proc/$spin/task/*; do
		tid=${t##*/}
		[ "$tid" = "$spin" ] && continue        # the leader only prints
		a=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$t/status")
		c=$(cut -d' ' -f39 "$t/stat")
		line="$line $tid:$a@$c"
	done
	echo "E2E-GUESTAFF t=$i$line"
done
