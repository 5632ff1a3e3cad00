#!/usr/bin/env bash
# Runs golangci-lint with the repository's .golangci.yml over every package.
# Part of `make test`: any finding fails it.
#
#   INDEXIMA_TOOLS_BIN where scripts/install-test-deps.sh put golangci-lint
#                      (default $HOME/.cache/indexima_exporter/tools/bin);
#                      else the one in PATH
#
# With CI set, a missing golangci-lint, or one of another version than the
# pinned one (whose findings could differ), fails; elsewhere a missing one
# skips the lint with a note saying how to install it, and another version
# runs with a note.
set -euo pipefail
cd "$(dirname "$0")/.."

WANT_VERSION=v2.15.0 # the version scripts/install-test-deps.sh installs
TOOLS_BIN="${INDEXIMA_TOOLS_BIN:-$HOME/.cache/indexima_exporter/tools/bin}"

log() { printf 'lint: %s\n' "$*"; }

. scripts/pinned-tool.sh # the repository root is the working directory (above)
find_pinned_tool golangci-lint "$WANT_VERSION"
if [ "$have" != "$WANT_VERSION" ]; then
	if [ -n "${CI:-}" ]; then
		log "FAIL: $bin is golangci-lint ${have:-of unknown version}, not $WANT_VERSION (\`make test-deps\` installs it)" >&2
		exit 1
	fi
	log "note: $bin is golangci-lint ${have:-of unknown version}, not $WANT_VERSION: its findings may differ"
fi

log "golangci-lint ${have:-?} ($bin)"
"$bin" run ./...
