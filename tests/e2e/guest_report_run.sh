#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# In the guest of tests/e2e/test_llcd_guest.sh: a 4-thread busy process on
# CPUs 0,1,2,3 (both virtual LLCs of a dies=2 guest) and llc-guest
# reporting it on org.llcd.guest.0 (no in-guest aggregation: llcd groups
# the vCPUs on the host).
e2e-spin -n 4 -c 0,1,2,3 -r 5 -t 300 &
llc-guest -v &
wait
