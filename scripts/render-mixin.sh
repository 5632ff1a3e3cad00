#!/usr/bin/env bash
# Renders the monitoring mixin (mixin/render.jsonnet, default _config) into
# OUT: the rule file deploy/prometheus/rules/indexima-alerts.yml, its copy in
# the Helm chart (deploy/helm/indexima-exporter/rules/) and the
# dashboards dashboards/*.json, at those paths under OUT.
#   scripts/render-mixin.sh .        # make mixin: rewrite the shipped files
#   scripts/render-mixin.sh /tmp/x   # the mixin test: render, then compare
# jsonnet v0.22.0 (go-jsonnet) is taken from $JSONNET, else the tools cache
# of scripts/install-test-deps.sh, else PATH.
set -euo pipefail
out=${1:?usage: render-mixin.sh OUTDIR}
TOOLS_BIN="${INDEXIMA_TOOLS_BIN:-$HOME/.cache/indexima_exporter/tools/bin}"
if [ -z "${JSONNET:-}" ]; then
	if [ -x "$TOOLS_BIN/jsonnet" ]; then JSONNET="$TOOLS_BIN/jsonnet"; else JSONNET=jsonnet; fi
fi
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/.."
"$JSONNET" --string --create-output-dirs --multi "$out" mixin/render.jsonnet
