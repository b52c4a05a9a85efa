#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# test_man.sh - every man page in packaging/man renders without a warning
# (groff -ww on each device, man -l in the C and a UTF-8 locale) and holds
# no control character, and names what the source accepts:
#   llcctl.8     every command of cmds[] in agent/ctl/llcctl.c, every option of
#                llcctl and of its commands, and every tune knob (the TUNE
#                rows of config_directives[])
#   llcd.8       every long option of llcd
#   llcd-sim.8   every long option of llcd-sim
#   llcd.conf.5  every directive of config_directives[] (agent/daemon/config.c)
#   llc-policy.5 every attribute of the annotation (policy/annotation_xml.c)
#   TOOL's page  every long option of each TOOL given (llcsim.1, llc-qmp.1,
#                ..., llc-guest.8 in guest-tools/)
# and llc-guest's page, in packaging/man or guest-tools/, renders too.
# A program's options are those its --help shows: each program declares them
# once, as a table, from which both its getopt tables and its help are built
# (common/cliopt.h).
# Usage: test_man.sh SRC_DIR LLCD LLCD_SIM LLCCTL [TOOL...]  (built programs)
set -euo pipefail
src=$1 llcd=$2 llcd_sim=$3 llcctl=$4
shift 4
man=$src/packaging/man
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok   $*"; }

# llc-guest(8) lives beside llc-guest in guest-tools/
pages=("$man"/*.[158] "$src"/guest-tools/*.[158])
[ "${#pages[@]}" -ge 8 ] || fail "only ${#pages[@]} man pages in packaging/man"
for p in "${pages[@]}"; do
	name=$(basename "$p")
	# no control character but tab and newline (a form feed typed for \f
	# renders as nothing on a UTF-8 terminal and warns on an ASCII one)
	c=$(LC_ALL=C grep -n $'[\x01-\x08\x0b-\x1f\x7f]' "$p" | cut -d: -f1 | tr '\n' ' ' || true)
	[ -z "$c" ] || fail "$name: control characters on lines $c(\\f is a backslash and an f)"
	# every device man may pick: UTF-8, ASCII (the C locale), Latin-1
	for dev in utf8 ascii latin1; do
		w=$(groff -man -T$dev -ww -z "$p" 2>&1) || fail "$name: groff -T$dev failed: $w"
		[ -z "$w" ] || fail "$name: groff -T$dev warnings: $w"
	done
	for loc in C.UTF-8 C; do
		w=$(MANWIDTH=80 LC_ALL=$loc man --warnings -l "$p" 2>&1 >/dev/null) || fail "$name: man -l failed: $w"
		[ -z "$w" ] || fail "$name: man -l warnings (LC_ALL=$loc): $w"
	done
	# the page's name and section match its file name
	th=$(sed -n 's/^\.TH \([^ ]*\) \([0-9]\).*/\1.\2/p' "$p" | tr 'A-Z' 'a-z')
	[ "$th" = "$name" ] || fail "$name: .TH says $th"
done
ok "${#pages[@]} man pages render without warnings (groff -ww -Tutf8/ascii/latin1, man -l in C and C.UTF-8), no control characters"

# plain text of a page: ASCII, no overstrike, no hyphenation, one line per
# paragraph (LL), so that a name never breaks across lines
text() { local p=$1; [[ $p == */* ]] || p=$man/$p; groff -man -Tascii -P-cbou -rHY=0 -rLL=2000n "$p" 2>/dev/null; }
has() { grep -qE -- "(^|[^a-z-])$2([^a-z-]|$)" <<<"$(text "$1")"; }
# tagged() PAGE SECTION WORD: WORD starts a tagged paragraph (.TP) of the
# section SECTION, i.e. it has its own entry there, not just a mention
tagged() {
	local sec
	sec=$(text "$1" | awk -v s="$2" '/^[A-Z]/ { on = ($0 == s) } on')
	grep -qE -- "^ {5,}$3( |,|\$)" <<<"$sec"
}
# helpopts PROGRAM [ARGS]: the long options its --help shows (cliopt_help():
# an option line's first non-blank is '-', after a blank)
helpopts() {
	local h
	h=$("$@" --help) || fail "$* --help failed"
	sed -nE 's/^ +(-[A-Za-z0-9], )?--([a-z0-9-]+).*/\2/p' <<<"$h"
}

cmds=$(sed -n '/^static const struct cmd cmds\[\] = {/,/^};/p' "$src/agent/ctl/llcctl.c" |
	sed -n 's/^[[:space:]]*{ *"\([a-z-]*\)".*/\1/p')
[ "$(wc -l <<<"$cmds")" -ge 10 ] || fail "parsed only $(wc -l <<<"$cmds") commands from cmds[] in agent/ctl/llcctl.c"
for c in $cmds; do tagged llcctl.8 COMMANDS "$c" || fail "llcctl.8 has no entry for the command '$c' under COMMANDS"; done
ok "llcctl.8 documents all $(wc -w <<<"$cmds") commands of cmds[]"
opts=$( (helpopts "$llcctl"; for c in $cmds; do helpopts "$llcctl" "$c"; done) | sort -u)
[ "$(wc -l <<<"$opts")" -ge 14 ] || fail "llcctl's help shows only $(wc -l <<<"$opts") options"
for o in $opts; do has llcctl.8 "--$o" || fail "llcctl.8 does not document --$o"; done
ok "llcctl.8 documents every llcctl option ($(echo $opts))"
# the tune knobs: the directives flagged TUNE in agent/daemon/config.c's table
table() { sed -n '/^const struct config_directive config_directives\[\] = {/,/^};/p' "$src/agent/daemon/config.c"; }
knobs=$(table | sed -n 's/^[[:space:]]*DIRECTIVE("\([a-z-]*\)", [a-z]*, [a-z_]*, TUNE\b.*/\1/p')
[ "$(wc -w <<<"$knobs")" -ge 10 ] || fail "parsed only $(wc -w <<<"$knobs") tune knobs from config_directives[] in agent/daemon/config.c"
for k in $knobs; do has llcctl.8 "$k" || fail "llcctl.8 does not list the tune knob '$k'"; done
ok "llcctl.8 lists every tune knob ($(echo $knobs))"

lopts=$(helpopts "$llcd")
[ "$(wc -l <<<"$lopts")" -ge 12 ] || fail "llcd --help shows only $(wc -l <<<"$lopts") options"
for o in $lopts; do tagged llcd.8 OPTIONS "(-[a-z], )?--$o" || fail "llcd.8 has no entry for --$o under OPTIONS"; done
for s in SIGHUP SIGTERM fail-static /etc/llcd/llcd.conf /run/llcd/llcd.sock; do has llcd.8 "$s" || fail "llcd.8 does not mention $s"; done
ok "llcd.8 documents all $(wc -w <<<"$lopts") options, the signals and the files"
sopts=$(helpopts "$llcd_sim")
[ "$(wc -l <<<"$sopts")" -ge 9 ] || fail "llcd-sim --help shows only $(wc -l <<<"$sopts") options"
for o in $sopts; do tagged llcd-sim.8 OPTIONS "(-[a-z], )?--$o" || fail "llcd-sim.8 has no entry for --$o under OPTIONS"; done
for s in /run/llcd-sim/llcd.sock /usr/share/llcd-sim/scenarios/ SIGHUP; do has llcd-sim.8 "$s" || fail "llcd-sim.8 does not mention $s"; done
ok "llcd-sim.8 documents all $(wc -w <<<"$sopts") options of llcd-sim, its socket and scenarios"
for tool in "$@"; do
	name=$(basename "$tool")
	page=
	for p in "$man/$name".[18] "$src/guest-tools/$name".[18]; do [ -e "$p" ] && page=$p; done
	[ -n "$page" ] || fail "no man page for $name"
	topts=$(helpopts "$tool")
	[ "$(wc -l <<<"$topts")" -ge 3 ] || fail "$name --help shows only $(wc -l <<<"$topts") options"
	for o in $topts; do has "$page" "--$o" || fail "$(basename "$page") does not document --$o"; done
	ok "$(basename "$page") documents all $(wc -w <<<"$topts") options of $name"
done

directives=$(table | sed -n 's/^[[:space:]]*DIRECTIVE("\([a-z-]*\)".*/\1/p' | sort -u)
[ "$(wc -l <<<"$directives")" -ge 15 ] || fail "parsed only $(wc -l <<<"$directives") directives from config_directives[] in agent/daemon/config.c"
for d in $directives; do tagged llcd.conf.5 DIRECTIVES "$d" || fail "llcd.conf.5 has no entry for the directive '$d' under DIRECTIVES"; done
ok "llcd.conf.5 documents all $(wc -w <<<"$directives") directives of config_directives[]"
# "Needs a restart." in exactly the entries of the RESTART rows (reload
# applies every other directive, and names these when they change)
restart=$(table | sed -n 's/^[[:space:]]*DIRECTIVE("\([a-z-]*\)", [a-z]*, [a-z_]*, RESTART\b.*/\1/p' | sort)
[ "$(wc -w <<<"$restart")" -ge 4 ] || fail "parsed only $(wc -w <<<"$restart") restart-only directives from config_directives[]"
marked=$(text llcd.conf.5 | awk '/^[A-Z]/ { on = ($0 == "DIRECTIVES") } on' |
	awk '/^       [a-z]/ { name = $1 } /^              / && /Needs a restart\./ { print name }' | sort -u)
[ "$marked" = "$restart" ] || fail "llcd.conf.5 marks '$(echo $marked)' as needing a restart, config_directives[] '$(echo $restart)'"
ok "llcd.conf.5 marks exactly the restart-only directives ($(echo $restart))"

attrs=$(sed -n 's/^[[:space:]]*{ "\([a-z-]*\)", offsetof(struct policy_tune.*/\1/p' "$src/policy/annotation_xml.c")
[ "$(wc -l <<<"$attrs")" -ge 5 ] || fail "parsed only $(wc -l <<<"$attrs") tune attributes from policy/annotation_xml.c"
for a in $attrs benefit-check mode isolation topology name vcpus urn:llcd:llc-policy:1; do
	has llc-policy.5 "$a" || fail "llc-policy.5 does not document '$a'"
done
ok "llc-policy.5 documents the element, every tune attribute and groups"
echo "man: all checks passed"
