#!/usr/bin/env bash
# Scans the exporter for known vulnerabilities with govulncheck, against an
# offline copy of the Go vulnerability database (the public one cannot be
# reached from the build machines). Part of `make test`.
#
#   VULNDB             the database directory, in the v1 layout that
#                      `govulncheck -db file://...` reads (index/, ID/);
#                      default: vulndb in the tools cache,
#                      $HOME/.cache/indexima_exporter/vulndb (a copy, or a
#                      link to the machine's copy)
#   INDEXIMA_TOOLS_BIN where scripts/install-test-deps.sh put govulncheck
#
# Fails on a vulnerability that our code reaches (govulncheck's symbol
# level, exit status 3). Vulnerabilities only in modules we require, or in
# packages we import without calling the affected code, are printed and do
# not fail. With CI set, a missing govulncheck or database fails; elsewhere
# the scan is skipped with a note saying what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

WANT_VERSION=v1.9.0 # the version scripts/install-test-deps.sh installs
TOOLS_BIN="${INDEXIMA_TOOLS_BIN:-$HOME/.cache/indexima_exporter/tools/bin}"
# The default copy is in the cache the test tools live in, not in or beside
# the repository: a clone made anywhere on the machine finds it.
DB="${VULNDB:-$HOME/.cache/indexima_exporter/vulndb}"

log() { printf 'vulncheck: %s\n' "$*"; }

. scripts/pinned-tool.sh # the repository root is the working directory (above)
find_pinned_tool govulncheck "$WANT_VERSION"
if [ "$have" != "$WANT_VERSION" ]; then
	log "note: $bin is govulncheck ${have:-of unknown version}, not $WANT_VERSION"
fi

if [ ! -f "$DB/index/db.json" ] || [ ! -d "$DB/ID" ]; then
	missing "no vulnerability database at $DB (want its index/db.json and ID/); put an offline copy there (or a link to one), or set VULNDB to its directory"
fi
db=$(cd "$DB" && pwd)
# The copy's date is in its README (its index records none).
dated=$(grep -m1 -oE 'commit [0-9a-f]+, [0-9]{4}-[0-9]{2}-[0-9]{2}' "$db/README.md" 2>/dev/null || true)
log "govulncheck $have, database file://$db (${dated:-date unknown: see its README})"

rc=0
out=$("$bin" -show verbose -db "file://$db" ./... 2>&1) || rc=$?
case $rc in
0)
	# The verbose report starts with the packages and modules scanned: print
	# from the results on.
	printf '%s\n' "$out" | awk '/^=== Symbol Results ===/ { p = 1 } p'
	log "ok: no vulnerability reached from our code (any listed under Package or Module Results is in a dependency we do not call, and does not fail the test)"
	;;
3)
	printf '%s\n' "$out" | awk '/^=== Symbol Results ===/ { p = 1 } p'
	log "FAIL: vulnerabilities reached from our code (Symbol Results above): upgrade the module named there (go get MODULE@FIXED-VERSION)" >&2
	exit 1
	;;
*)
	printf '%s\n' "$out"
	log "FAIL: govulncheck could not scan (exit status $rc)" >&2
	exit 1
	;;
esac
