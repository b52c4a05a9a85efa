#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# test_prometheus.sh - a real Prometheus scrapes llcd's metrics endpoint.
#
# llcd-sim (the daemon on a simulated host: llcd's loop, handlers and
# metrics code; sim/llcd-sim.c) runs with metrics-listen
# 127.0.0.1:0 (it logs the port it bound); Debian's prometheus, started here
# with a scrape config of one job "llcd" (scrape every second) and the
# example rules of packaging/prometheus/, scrapes it. Then, through
# Prometheus' HTTP query API:
#   - llcd's series are there, with the exposition's types (counters
#     rising, the step-time histogram usable by histogram_quantile);
#   - every numeric member of `llcctl stats` is exported under a Prometheus
#     name (agent/daemon/stats.c's table), `llcctl metrics` and the HTTP
#     body name the same series, and no value is printed like
#     18.899999999999999;
#   - promtool check rules passes, every series each rule names exists for
#     job="llcd", and Prometheus evaluates every rule without error.
# Usage: test_prometheus.sh BUILD_DIR SRC_DIR
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
llcd=$build/sim/llcd-sim llcctl=$build/agent/llcctl
rules=$src/packaging/prometheus/llcd-rules.yml
t0=$(date +%s)
work=$(mktemp -d /tmp/llcd-prom.XXXXXX)
lpid= ppid=
fail() {
	local log
	echo "FAIL: $*" >&2
	for log in llcd prom; do
		[ -s "$work/$log.log" ] && { echo "--- $log log:" >&2; tail -5 "$work/$log.log" >&2; }
	done
	exit 1
}
ok() { echo "ok   $*  [$(($(date +%s) - t0)) s]"; }
cleanup() {
	set +e
	[ -n "$ppid" ] && kill "$ppid" 2>/dev/null && wait "$ppid" 2>/dev/null
	[ -n "$lpid" ] && kill "$lpid" 2>/dev/null && wait "$lpid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
for t in prometheus promtool curl jq python3; do
	command -v $t >/dev/null || fail "no $t: run scripts/install-deps (scripts/deps/prometheus.txt)"
done

# --- llcd with the endpoint ---------------------------------------------------
printf 'socket-group none\nmetrics-listen 127.0.0.1:0\n' > "$work/llcd.conf"
"$llcd" -d -f "$work/llcd.conf" --socket "$work/llcd.sock" "$src/sim/scenarios/xiangshan-8ccx.json" \
	> "$work/llcd.log" 2>&1 &
lpid=$!
url=
for _ in $(seq 50); do
	url=$(sed -n 's|.*metrics: serving \(http://[^ ]*\)$|\1|p' "$work/llcd.log")
	[ -n "$url" ] && break
	sleep 0.1
done
[ -n "$url" ] || fail "llcd did not log 'metrics: serving http://...'"
target=${url#http://}; target=${target%/metrics}
for _ in $(seq 50); do curl -sf "$url" > "$work/http.txt" && break; sleep 0.1; done
[ -s "$work/http.txt" ] || fail "GET $url failed"
ct=$(curl -s -o /dev/null -w '%{content_type}' "$url")
[ "$ct" = "text/plain; version=0.0.4; charset=utf-8" ] || fail "Content-Type: $ct"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://$target/nothing")" = 404 ] || fail "GET /nothing is not 404"
[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$url")" = 405 ] || fail "POST /metrics is not 405"
ok "llcd serves $url (text/plain; version=0.0.4), 404 elsewhere, 405 for POST"

# --- the exposition against llcctl stats ----------------------------------------
"$llcctl" -c "$work/llcd.sock" --json stats > "$work/stats.json" || fail "llcctl stats"
"$llcctl" -c "$work/llcd.sock" metrics > "$work/ctl.txt" || fail "llcctl metrics"
names() { grep -v '^#' "$1" | sed 's/[{ ].*//' | sort -u; }
diff <(names "$work/ctl.txt") <(names "$work/http.txt" | grep -vx llcd_metrics_age_seconds) ||
	fail "llcctl metrics and GET /metrics name different series (above)"
! grep -q 'llcctl stats member' "$work/http.txt" ||
	fail "stats members without a Prometheus name (stats.c rows): $(grep 'llcctl stats member' "$work/http.txt")"
nstats=$(jq '[to_entries[] | select(.value | type == "number" or type == "boolean")] | length' "$work/stats.json")
# the samples made from stats members: all but llcd_info, the histogram and the age
nsamples=$(grep -v '^#' "$work/http.txt" | grep -Evc '^(llcd_info|llcd_policy_step_seconds_|llcd_metrics_age_seconds)')
[ "$nstats" -ge 20 ] || fail "llcctl stats has only $nstats numeric members"
[ "$nstats" = "$nsamples" ] || fail "llcctl stats has $nstats numeric members, /metrics $nsamples samples from them"
! grep -Eq ' -?[0-9]*\.[0-9]*(99999|00000)[0-9]*(e[-+][0-9]+)?$' "$work/http.txt" ||
	fail "values printed with float noise: $(grep -E '(99999|00000)[0-9]*(e[-+][0-9]+)?$' "$work/http.txt" | head -3)"
grep -q '^# TYPE llcd_periods_total counter$' "$work/http.txt" || fail "llcd_periods_total is not a counter"
grep -q '^# TYPE llcd_policy_step_seconds histogram$' "$work/http.txt" || fail "no step-time histogram"
! grep -E '^# TYPE [a-z_]+ counter' "$work/http.txt" | grep -v '_total counter$' || fail "a counter not named *_total"
ok "every one of $nstats numeric llcctl stats members is exported by name; llcctl metrics names the same series"

# --- a real Prometheus -------------------------------------------------------------
promtool check rules "$rules" > "$work/promtool.out" 2>&1 || { cat "$work/promtool.out" >&2; fail "promtool check rules"; }
ok "promtool check rules $(basename "$rules"): $(grep -o '[0-9]* rules found' "$work/promtool.out")"
pport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$work/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $rules
scrape_configs:
  - job_name: llcd
    static_configs:
      - targets: ['$target']
YML
promtool check config "$work/prometheus.yml" > "$work/promtool.out" 2>&1 || { cat "$work/promtool.out" >&2; fail "promtool check config"; }
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
	--web.listen-address="127.0.0.1:$pport" > "$work/prom.log" 2>&1 &
ppid=$!
api=http://127.0.0.1:$pport/api/v1
q() { curl -sf --data-urlencode "query=$1" "$api/query"; }
val() { q "$1" | jq -r '.data.result[0].value[1] // empty'; }
for _ in $(seq 150); do
	[ "$(val 'up{job="llcd"}' 2>/dev/null)" = 1 ] && break
	kill -0 "$ppid" 2>/dev/null || fail "prometheus exited"
	sleep 0.2
done
[ "$(val 'up{job="llcd"}')" = 1 ] || fail "Prometheus has no up{job=\"llcd\"} == 1: $(curl -s "$api/targets" | jq -c '.data.activeTargets[0] | {health, lastError}')"
p1=$(val 'llcd_periods_total{job="llcd"}')
[ -n "$p1" ] || fail "no llcd_periods_total in Prometheus"
sleep 2.5
p2=$(val 'llcd_periods_total{job="llcd"}')
python3 -c "import sys; sys.exit(not float('$p2') > float('$p1'))" || fail "llcd_periods_total did not rise: $p1 -> $p2"
[ "$(q 'llcd_info{job="llcd"}' | jq -r '.data.result[0].metric.backend')" = llcsim ] || fail "llcd_info has no backend=\"llcsim\""
dom=$(val 'llcd_domains{job="llcd"}')
[ "$dom" -ge 1 ] 2>/dev/null || fail "llcd_domains is '$dom'"
[ "$(q 'llcd_apply_errors_total{job="llcd"}' | jq '.data.result | length')" = 3 ] || fail "llcd_apply_errors_total has not 3 classes"
# seconds, not microseconds: the recent median is below a second, like the histogram's
rp=$(val 'llcd_policy_step_recent_seconds{job="llcd",quantile="0.5"}')
python3 -c "import sys; v=float('$rp'); sys.exit(not 0 < v < 1)" || fail "llcd_policy_step_recent_seconds{quantile=\"0.5\"} is '$rp'"
[ "$(val 'llcd_period_seconds{job="llcd"}')" = 0.1 ] || fail "llcd_period_seconds is not 0.1 (period-ms 100)"
hq=$(val 'histogram_quantile(0.5, rate(llcd_policy_step_seconds_bucket{job="llcd"}[5s]))')
python3 -c "import sys; v=float('$hq'); sys.exit(not 0 < v < 1)" || fail "histogram_quantile of the step time: '$hq'"
# the series in Prometheus are the series llcd serves
curl -sf "$api/label/__name__/values" | jq -r '.data[] | select(startswith("llcd_"))' | sort > "$work/prom.names"
names "$work/http.txt" | sed 's/_bucket$//; s/_sum$//; s/_count$//' | sort -u > "$work/http.names"
sed 's/_bucket$//; s/_sum$//; s/_count$//' "$work/prom.names" | sort -u | diff - "$work/http.names" ||
	fail "Prometheus' llcd_* series differ from the exposition's (above)"
ok "Prometheus scrapes llcd: up 1, $(wc -l < "$work/prom.names") llcd_* series, periods $p1 -> $p2, median step ${hq} s"

# --- the rules against the live Prometheus --------------------------------------------
python3 - "$rules" > "$work/rules.tsv" <<'PY'
import re, sys
# every rule's expr and the metric names in it (the rules file is plain
# YAML of the shape promtool accepts: "alert:" then "expr:" lines)
alert = None
for line in open(sys.argv[1]):
    m = re.match(r'\s*- alert:\s*(\S+)', line)
    if m:
        alert = m.group(1)
    m = re.match(r'\s*expr:\s*(.+)$', line)
    if m and alert:
        expr = m.group(1).strip()
        bare = re.sub(r'\{[^}]*\}|\[[^\]]*\]|"[^"]*"', ' ', expr)
        words = {w for w in re.findall(r'[A-Za-z_:][A-Za-z0-9_:]*\b(?!\s*\()', bare)
                 if w not in ('by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset')
                 and not re.fullmatch(r'[0-9]+[smhdwy]', w)}
        names = sorted(w for w in words if not re.fullmatch(r'e[0-9]*', w))
        print(alert, expr, ' '.join(names), sep='\t')
PY
nrules=$(wc -l < "$work/rules.tsv")
[ "$nrules" = "$(grep -c '^ *- alert:' "$rules")" ] || fail "read $nrules rules from $rules"
for want in LlcdDown LlcdDomainRefused LlcdPinErrors LlcdBenefitBackoffs; do
	grep -q "^$want	" "$work/rules.tsv" || fail "no rule $want"
done
while IFS=$'\t' read -r alert expr series; do
	[ -n "$series" ] || fail "$alert: no series in '$expr'"
	for s in $series; do
		n=$(q "count({__name__=\"$s\",job=\"llcd\"})" | jq -r '.data.result[0].value[1] // 0')
		[ "$n" -ge 1 ] || fail "$alert: '$expr' names $s, which llcd does not export"
	done
	r=$(q "$expr") || fail "$alert: Prometheus cannot evaluate '$expr'"
	[ "$(jq -r .status <<<"$r")" = success ] || fail "$alert: $r"
done < "$work/rules.tsv"
ok "each of $nrules rules names only series llcd exports (or up) and evaluates"
for _ in $(seq 30); do
	h=$(curl -sf "$api/rules" | jq -r '[.data.groups[].rules[] | select(.lastEvaluation != "0001-01-01T00:00:00Z")] | length')
	[ "$h" = "$nrules" ] && break
	sleep 0.2
done
bad=$(curl -sf "$api/rules" | jq -r '.data.groups[].rules[] | select(.health != "ok") | "\(.name): \(.health) \(.lastError)"')
[ -z "$bad" ] || fail "rules Prometheus evaluates with errors: $bad"
[ "$h" = "$nrules" ] || fail "Prometheus evaluated $h of $nrules rules"
firing=$(curl -sf "$api/alerts" | jq -r '[.data.alerts[] | select(.state == "firing") | .labels.alertname] | join(" ")')
[ -z "$firing" ] || fail "alerts firing on a healthy simulated host: $firing"
ok "Prometheus evaluates all $nrules rules (health ok), none firing on a healthy host"
echo "prometheus: all checks passed in $(($(date +%s) - t0)) s"
