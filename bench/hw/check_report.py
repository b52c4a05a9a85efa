#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""check_report.py OUT [--guest]: the shape of llcd-bench's report and the
provenance of its numbers (tests/benchkit.cmake).

  - report.md has its sections, a row for every workload x placement (and
    every guest phase), the ratio rows, the latency matrix, the plots it
    links (real PNG files drawn by gnuplot);
  - every table figure equals what this script recomputes from the raw
    runs in results.json (medians, spreads, ranges, ratios: its own code,
    not llcd-bench's);
  - every number anywhere in report.md is one of results.json's (a value,
    a list length, or a number inside one of its strings) or one this
    script recomputed: nothing in the report was made up;
  - every run in results.json is a real one: positive steps and steps/s,
    steps/s = steps / seconds, the data check passed.
Exit 0 when all hold; otherwise every failure on stderr and exit 1.
"""
import json
import os
import re
import statistics
import sys

NUM = re.compile(r"\d+(?:\.\d+)?")
errors = []


def fail(msg):
    errors.append(msg)


def fmts(x):
    out = set()
    if isinstance(x, bool):
        return out
    if isinstance(x, int):
        out.add(str(x))
    if isinstance(x, (int, float)):
        for d in (0, 1, 2, 3):
            out.add(f"{x:.{d}f}")
        out.add(repr(x))
    return out


def walk(v, allowed):
    if isinstance(v, dict):
        allowed |= fmts(len(v))
        for x in v.values():
            walk(x, allowed)
    elif isinstance(v, list):
        allowed |= fmts(len(v))
        for x in v:
            walk(x, allowed)
    elif isinstance(v, str):
        allowed |= set(NUM.findall(v))
    else:
        allowed |= fmts(v)


def fs(x):
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def st(vals):
    med = statistics.median(vals)
    return med, (max(vals) - min(vals)) / med * 100 if med else 0.0, min(vals), max(vals)


def ratio(num, den):
    per = [a / b for a, b in zip(num, den) if b]
    return statistics.median(num) / statistics.median(den), min(per), max(per)


def table_rows(md, first_cells):
    """rows of markdown tables whose leading cells equal first_cells"""
    rows = []
    for line in md.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells[:len(first_cells)] == first_cells:
                rows.append(cells)
    return rows


def expect_row(md, key, want, allowed):
    rows = table_rows(md, key)
    if len(rows) != 1:
        fail(f"report.md: {len(rows)} rows for {' / '.join(key)}, want 1")
        return
    got = rows[0][len(key):len(key) + len(want)]
    if got != want:
        fail(f"report.md: row {' / '.join(key)} is {got}, recomputed from the runs {want}")
    for w in want:
        allowed |= set(NUM.findall(w))


def check_run(r, where):
    if not r.get("ok", False):
        fail(f"{where}: data check failed")
    if r["steps"] <= 0 or r["steps_per_s"] <= 0 or r["seconds"] <= 0:
        fail(f"{where}: not a run: {r}")
    elif abs(r["steps"] / r["seconds"] - r["steps_per_s"]) > 0.01 * r["steps_per_s"] + 0.1:
        fail(f"{where}: steps/s {r['steps_per_s']} is not steps {r['steps']} / seconds {r['seconds']}")


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    want_guest = "--guest" in sys.argv[2:]
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    with open(os.path.join(out, "report.md")) as f:
        md = f.read()
    allowed = set()
    walk(res, allowed)

    for h in ("# llcd-bench report", "## Host", "## Host mode", "## Core-to-core latency",
              "## Guest mode", "## Plots"):
        if not re.search(rf"^{re.escape(h)}$", md, re.M):
            fail(f"report.md: no section '{h}'")
    for k in ("CPU model", "LLCs", "kernel", "libvirt", "QEMU"):
        if not re.search(rf"^\| {k}[ (|]", md, re.M):
            fail(f"report.md: host table has no '{k}' row")
    for img in re.findall(r"!\[[^]]*\]\(([^)]+)\)", md):
        p = os.path.join(out, img)
        try:
            with open(p, "rb") as f:
                head = f.read(8)
            if head != b"\x89PNG\r\n\x1a\n" or os.path.getsize(p) < 2000:
                fail(f"{img}: not a drawn PNG ({os.path.getsize(p)} bytes)")
        except OSError as e:
            fail(f"{img}: {e}")
    if "steps.png" not in md or (res.get("latency") and "latency.png" not in md):
        fail("report.md does not link steps.png and latency.png")

    hm = res["host_mode"]
    if not hm["runs"]:
        fail("results.json: no host runs")
    for w in hm["workloads"]:
        per = {}
        for p in ("one-llc", "spread", "kernel"):
            runs = [r for r in hm["runs"] if r["workload"] == w and r["policy"] == p]
            if len(runs) != hm["repeats"]:
                fail(f"results.json: {len(runs)} {w}/{p} runs, want {hm['repeats']}")
            for r in runs:
                check_run(r, f"host run {w}/{p}/{r['repeat']}")
                if r["mode"] != w:
                    fail(f"host run {w}/{p}: the workload ran in mode {r['mode']}")
                want_cpus = hm["placements"][p]
                if r["cpus"] != want_cpus:
                    fail(f"host run {w}/{p}: ran on {r['cpus']}, placement says {want_cpus}")
            per[p] = [r["steps_per_s"] for r in runs]
            med, spr, lo, hi = st(per[p])
            gbs = f"{statistics.median(r['gb_per_s'] for r in runs):.2f}" if w == "triad" else ""
            expect_row(md, [w, p], [fs(med), f"{spr:.1f}", fs(lo), fs(hi), str(len(runs)), gbs], allowed)
        for a, b in (("one-llc", "spread"), ("one-llc", "kernel"), ("spread", "kernel")):
            r, lo, hi = ratio(per[a], per[b])
            expect_row(md, [w, f"{a}/{b}"], [f"{r:.2f}x", f"{lo:.2f}x", f"{hi:.2f}x"], allowed)

    lat = res.get("latency")
    if lat:
        n = len(lat["cpus"])
        if len(lat["ns"]) != n or any(len(row) != n for row in lat["ns"]):
            fail("results.json: the latency matrix is not square")
        for i in range(n):
            for j in range(n):
                v = lat["ns"][i][j]
                if (i == j and v != 0) or (i != j and not v > 0) or v != lat["ns"][j][i]:
                    fail(f"latency[{i}][{j}] = {v}: not a measured symmetric matrix")
        if n <= 16:
            for c, row in zip(lat["cpus"], lat["ns"]):
                expect_row(md, [str(c)], [f"{v:.0f}" for v in row], allowed)
        word = "**match**" if lat["match"] else "**MISMATCH**"
        if word not in md:
            fail(f"report.md does not say {word} for the latency domains")
        if (lat["measured_domains"] == lat["hwloc_domains"]) != lat["match"]:
            fail("results.json: match disagrees with the domains")

    g = res.get("guest_mode")
    if want_guest and not g:
        fail("results.json: no guest_mode")
    if g:
        if g["accel"] not in ("KVM", "TCG") or f"Accelerator: **{g['accel']}**" not in md:
            fail(f"report.md does not say the accelerator ({g.get('accel')})")
        base = None
        names = [ph["name"] for ph in g["phases"]]
        for need in ("none", "llcd-annotation", "llcd-inference"):  # the three of the issue
            if need not in names:
                fail(f"guest phases {names}: no {need}")
        for ph in g["phases"]:
            if not ph.get("available", True):
                if not table_rows(md, [ph["name"], f"not available: {ph['reason']}"]):
                    fail(f"report.md: phase {ph['name']} is not said to be unavailable")
                continue
            if len(ph["runs"]) != g["repeats"]:
                fail(f"guest phase {ph['name']}: {len(ph['runs'])} runs, want {g['repeats']}")
            for i, r in enumerate(ph["runs"]):
                check_run(r, f"guest run {ph['name']}/{i}")
            v = [r["steps_per_s"] for r in ph["runs"]]
            med, spr, lo, hi = st(v)
            expect_row(md, [ph["name"]], [fs(med), f"{spr:.1f}", fs(lo), fs(hi), str(len(v))], allowed)
            if base is None:
                base = (ph["name"], v)
            else:
                r, lo, hi = ratio(v, base[1])
                expect_row(md, [f"{ph['name']}/{base[0]}"], [f"{r:.2f}x", f"{lo:.2f}x", f"{hi:.2f}x"], allowed)
        for k in ("before", "after"):
            if g["map"][k].rstrip() not in md:
                fail(f"report.md: llcctl map {k} is not the one the run recorded")

    stray = sorted({t for t in NUM.findall(md) if t not in allowed}, key=lambda t: float(t))
    if stray:
        fail(f"report.md has numbers that no run produced: {' '.join(stray)}")
    for e in errors:
        print(f"check_report: {e}", file=sys.stderr)
    if not errors:
        print(f"check_report: {out}/report.md: shape ok, every figure from results.json "
              f"({len(hm['runs'])} host runs{', guest ' + str(sum(len(p['runs']) for p in g['phases'])) + ' runs' if g else ''})")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
