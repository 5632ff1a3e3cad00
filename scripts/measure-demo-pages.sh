#!/usr/bin/env bash
# Measures the pages an operator gets from `indexima_exporter --demo`: the
# real exporter scraped every 5s by a real Prometheus 3.15 evaluating the
# shipped rules unchanged, sending to a real Alertmanager with the shipped
# alertmanager.yml whose receivers post to the test (e2e/demo_pages_test.go).
# The demo runs on the real clock: an alert resolves when its condition ends
# (IndeximaNodeDownReported 5 minutes after the latest report of its node),
# and a later incident raises it again. It prints the demo's incidents (each,
# and per kind and node), what the rules saw (the NODE_DOWN report dates per
# node reported down and their gaps over 5 minutes, the MEMORY_LOW growths
# per node, how long each rule's condition held against its `for`), every
# notification, every alert's firing episodes, and per alert name the alerts
# fired, their episodes, the notifications with a firing alert (pages) and
# the resolved-only ones. docs/alerts.md gives the numbers of runs.
#
#   scripts/measure-demo-pages.sh            # 15 minutes, the shipped files
#   scripts/measure-demo-pages.sh 20m REV    # 20 minutes, the rules and the
#                                            # Alertmanager configuration of
#                                            # git revision REV (to compare)
#
# Needs prometheus3 (scripts/install-test-deps.sh) and prometheus-alertmanager
# (Debian package).
set -euo pipefail
duration=${1:-15m}
rev=${2:-}
cd "$(dirname "$0")/.."
if [ -n "$rev" ]; then
	old=$(mktemp -d)
	trap 'rm -rf "$old"' EXIT
	git show "$rev:deploy/prometheus/rules/indexima-alerts.yml" >"$old/indexima-alerts.yml"
	git show "$rev:deploy/prometheus/alertmanager.yml" >"$old/alertmanager.yml"
	export INDEXIMA_DEMO_RULES="$old/indexima-alerts.yml" INDEXIMA_DEMO_ALERTMANAGER="$old/alertmanager.yml"
fi
# The test's own timeout: the measurement, plus 10 minutes to build, start
# and report.
case "$duration" in
*h) secs=$((${duration%h} * 3600)) ;;
*m) secs=$((${duration%m} * 60)) ;;
*s) secs=${duration%s} ;;
*) echo "duration $duration: give it as 20m, 1h or 900s" >&2; exit 2 ;;
esac
INDEXIMA_DEMO_PAGES="$duration" go test ./e2e/ -run '^TestDemoPagesPerIncident$' -count=1 -v -timeout "$((secs + 600))s"
