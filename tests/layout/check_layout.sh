#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# check_layout.sh - the production daemon carries no simulator:
#   - no file under agent/ includes a header of sim/ (sim/ may use agent's
#     loop and daemon core, never the other way round);
#   - the built llcd has no symbol of sim/ (sim_*, simbe_*, llcsim*),
#     while llcd-sim, built from the same daemon core, has them (so that the
#     symbol check can fail).
# Usage: check_layout.sh SRC_DIR LLCD LLCD_SIM
set -euo pipefail
src=$1 llcd=$2 llcd_sim=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok   $*"; }

command -v nm >/dev/null || fail "no nm: install binutils (scripts/deps)"
shopt -s nullglob globstar
sim_headers=$(cd "$src/sim" && ls -- *.h)
[ -n "$sim_headers" ] || fail "found no header in sim/"
bad=
for f in "$src"/agent/**/*.[ch]; do
	while read -r inc; do
		base=${inc##*/}
		# a header of sim/: named after one there (and not agent's own), or reached through ../sim/
		if [[ $inc == *sim/* ]] || { grep -qx -- "$base" <<<"$sim_headers" && [ ! -e "$(dirname "$f")/$inc" ]; }; then
			bad+="${f#"$src"/}: #include \"$inc\""$'\n'
		fi
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done
[ -z "$bad" ] || fail "agent/ includes headers of sim/:"$'\n'"$bad"
ok "no file under agent/ includes a header of sim/ ($(wc -w <<<"$sim_headers") headers there)"

pattern=' [A-Za-z] (sim_|simbe_|llcsim)'
n_sim=$(nm "$llcd_sim" | grep -cE "$pattern" || true)
[ "$n_sim" -ge 10 ] || fail "llcd-sim has only $n_sim simulator symbols: the check below would prove nothing"
syms=$(nm "$llcd" | grep -E "$pattern" || true)
[ -z "$syms" ] || fail "llcd has simulator symbols:"$'\n'"$(head -20 <<<"$syms")"
ok "llcd has no simulator symbol (llcd-sim has $n_sim)"
