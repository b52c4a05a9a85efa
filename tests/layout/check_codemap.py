#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""check_codemap.py SRC - docs/design.md's code map follows the tree.

The section "## Code map" of docs/design.md names files (`dir/file.c`) and,
after a file, the functions, tables and macros that carry a rule
(`name()`, `name[]`, `NAME()`). Checked:
  - every file it names exists;
  - every function it names after a file is defined or declared in that
    file (for a name that is in a file the map names elsewhere or in a
    header beside it, that file is said);
  - every C source and header outside tests/ is named in it (its table
    "Files" lists each one with its concern).
Prints one line per fault; exits 1 when there is any."""
import os
import re
import subprocess
import sys

src = sys.argv[1]
text = open(os.path.join(src, "docs/design.md"), encoding="utf-8").read()
m = re.search(r"^## Code map\n(.*?)(?=^## |\Z)", text, re.S | re.M)
if not m:
    print("docs/design.md has no section '## Code map'")
    sys.exit(1)
cmap = m.group(1)
git = subprocess.run(["git", "-C", src, "ls-files", "*.c", "*.h"], capture_output=True, text=True)
if git.returncode == 0 and git.stdout.strip():
    files = git.stdout.split()
else:   # not a git checkout (a release tarball): every file but the build trees
    files = []
    for root, dirs, names in os.walk(src):
        dirs[:] = [d for d in dirs if not d.startswith(("build", "."))]
        files += [os.path.relpath(os.path.join(root, n), src) for n in names if n.endswith((".c", ".h"))]
files = [f for f in files if not f.startswith("tests/")]
if len(files) < 50:
    print(f"found only {len(files)} source files: the check would prove nothing")
    sys.exit(1)
faults = []
path_re = re.compile(r"^[\w.-]+(/[\w.-]+)+\.(c|h|sh|py|cmake)$")
name_re = re.compile(r"^([A-Za-z_]\w*)(\(\)|\[\])$")
bodies = {}


def body(path):
    if path not in bodies:
        try:
            bodies[path] = open(os.path.join(src, path), encoding="utf-8").read()
        except OSError:
            bodies[path] = None
    return bodies[path]


checked = 0
for line in cmap.splitlines():
    if not line.startswith("|"):
        continue
    cur = None
    for tok in re.findall(r"`([^`]+)`", line):
        if path_re.match(tok):
            cur = tok
            if body(tok) is None:
                faults.append(f"names {tok}, which does not exist")
            continue
        nm = name_re.match(tok)
        if cur is None or nm is None or body(cur) is None:
            continue
        checked += 1
        if not re.search(r"\b%s\b" % re.escape(nm.group(1)), body(cur)):
            faults.append(f"names {tok} in {cur}, which has no {nm.group(1)}")
named = set(re.findall(r"`([\w./-]+\.(?:c|h))`", cmap))
for f in files:
    if f not in named:
        faults.append(f"does not name {f}")
for x in faults:
    print("docs/design.md code map: " + x)
if checked < 100:
    print(f"checked only {checked} functions of the code map: the check would prove nothing")
    sys.exit(1)
if faults:
    sys.exit(1)
print(f"ok   docs/design.md's code map: {len(files)} files named, {checked} functions found where it says")
