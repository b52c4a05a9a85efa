#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Print the llcsim scenario x policy table of docs/benchmarks.md ("llcsim").
# usage: bench/sim-table.sh [BUILD_DIR]   (default: build)
# Every number is llcsim's own output: throughput = group progress / the
# progress at rate 1.0 (spec/llcsim.md); "x" = ratio against `none`.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
llcsim=${1:-$top/build}/sim/llcsim
cd "$top"
for s in sim/scenarios/*.json; do
  "$llcsim" "$s" --compare none,kernel-cas,static,llcd --json || [ $? -eq 1 ]
  echo '@@'
done | python3 -c '
import json, sys
pols = ["none", "kernel-cas", "static", "llcd"]
print("| scenario | group | " + " | ".join(pols) + " |")
print("|---|---|" + "---|" * len(pols))
for chunk in sys.stdin.read().split("@@"):
    if not chunk.strip():
        continue
    d = json.loads(chunk)
    runs = {r["policy"]: r for r in d["runs"]}
    rows = [("all groups", None)]
    if len(runs["none"]["groups"]) <= 4:
        rows = [(g["domain"] + "/" + g["group"], i) for i, g in enumerate(runs["none"]["groups"])]
        if len(rows) > 1:
            rows.append(("all groups", None))
    for label, i in rows:
        cells = []
        for p in pols:
            v = runs[p]["throughput_avg"] if i is None else runs[p]["groups"][i]["throughput"]
            b = runs["none"]["throughput_avg"] if i is None else runs["none"]["groups"][i]["throughput"]
            viol = " (!)" if runs[p]["invariant_violations"] else ""
            cells.append("%.3f (%.2fx)%s" % (v, v / b, viol))
        print("| %s | %s | %s |" % (d["scenario"], label, " | ".join(cells)))
'
