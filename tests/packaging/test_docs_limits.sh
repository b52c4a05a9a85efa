#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# test_docs_limits.sh - the limits and deadlines of llcd's listeners as
# docs/protocol.md and docs/install.md state them are the code's.
#
# Both documents carry the table "Limits and deadlines of every listener":
# one row per limit, its value (a count, N ms / N s, N KiB / N MiB) and the
# constant that holds it. Checked:
#   - both tables are the same rows;
#   - every row's value is its constant's (#define in the headers below,
#     converted by the constant's unit: _MS milliseconds, _S seconds, _NS
#     nanoseconds, sizes in bytes);
#   - every limit constant of agent/daemon/control.h and
#     agent/daemon/httpd.h has a row (a new limit gets documented).
# Usage: test_docs_limits.sh SRC_DIR
set -euo pipefail
src=$(cd "$1" && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok   $*"; }
headers=("$src/agent/daemon/control.h" "$src/agent/daemon/httpd.h" "$src/agent/ctl/ctl.h"
	"$src/agent/daemon/recommend.h")

# the table's rows (from its header line to the first line that is not a row)
rows() {
	awk '/^\| listener \| limit \| value \| constant \| then \|$/ { on = 1; next }
	     on && /^\|---/ { next }
	     on && /^\|/ { print; next }
	     on { exit }' "$1"
}
p=$(rows "$src/docs/protocol.md")
i=$(rows "$src/docs/install.md")
[ -n "$p" ] || fail "docs/protocol.md has no table '| listener | limit | value | constant | then |'"
[ -n "$i" ] || fail "docs/install.md has no table '| listener | limit | value | constant | then |'"
[ "$p" = "$i" ] || fail "the tables differ: $(diff <(echo "$p") <(echo "$i") || true)"
ok "docs/protocol.md and docs/install.md: the same table of $(wc -l <<<"$p") limits"

# define NAME: its value, evaluated (64 * 1024, 20 * 1000000ull)
define() {
	local v
	v=$(sed -n "s/^#define $1 \\([^/]*\\).*/\\1/p" "${headers[@]}" | head -1)
	[ -n "$v" ] || return 1
	v=$(sed 's/\([0-9]\)[uUlL]*/\1/g' <<<"$v")
	echo $((v))
}
# NAME VALUE-CELL: the cell in the constant's unit
to_unit() {
	local name=$1 cell=$2 n u
	read -r n u <<<"$cell"
	[[ $n =~ ^[0-9]+$ ]] || { echo "not a number: '$cell'"; return 1; }
	case $name:$u in
	*_MS:ms) echo "$n" ;;
	*_MS:s) echo $((n * 1000)) ;;
	*_NS:ms) echo $((n * 1000000)) ;;
	*_NS:s) echo $((n * 1000000000)) ;;
	*_S:s) echo "$n" ;;
	*:KiB) echo $((n * 1024)) ;;
	*:MiB) echo $((n * 1024 * 1024)) ;;
	*_MS:* | *_NS:* | *_S:*) echo "'$cell' is no time"; return 1 ;;
	*:) echo "$n" ;;
	*) echo "unit '$u' unknown"; return 1 ;;
	esac
}
named=
while IFS='|' read -r _ listener limit value const _; do
	listener=$(xargs <<<"$listener") value=$(xargs <<<"$value") const=$(tr -d '` ' <<<"$const")
	limit=$(sed 's/^ *//; s/ *$//' <<<"$limit")
	[ -n "$const" ] || continue
	code=$(define "$const") || fail "$listener, $limit: no #define $const in agent/"
	doc=$(to_unit "$const" "$value") || fail "$listener, $limit: $doc"
	[ "$doc" = "$code" ] || fail "$listener, $limit: the documents say $value ($doc), $const is $code"
	named="$named $const"
done <<<"$p"
ok "every value is its constant's:$named"

for h in "$src/agent/daemon/control.h" "$src/agent/daemon/httpd.h"; do
	for c in $(sed -n 's/^#define \(\(CONTROL\|HTTPD\)_[A-Z_]*\) *[0-9(].*/\1/p' "$h"); do
		[ "$c" = CONTROL_DEFER ] && continue    # a return code, no limit
		grep -qw "$c" <<<"$named" || fail "$(basename "$h"): $c has no row in the documents' table"
	done
done
ok "every limit of control.h and httpd.h has a row"
echo "docs limits: all checks passed"
