# Sourced by the scripts that run a pinned test tool (lint.sh,
# vulncheck.sh): where to find it, and what a missing one does. The caller
# defines log() and sets TOOLS_BIN.

# missing WHAT: fail under CI, skip elsewhere.
missing() {
	if [ -n "${CI:-}" ]; then
		log "FAIL: $*" >&2
		exit 1
	fi
	log "skipped: $*"
	exit 0
}

# find_pinned_tool NAME VERSION sets bin to NAME in TOOLS_BIN, else in
# PATH (missing when neither has it), and have to the module version the
# binary records: empty for one that is no Go program, whose failing
# `go version -m` must not end the script without a word.
find_pinned_tool() {
	bin="$TOOLS_BIN/$1"
	if [ ! -x "$bin" ]; then
		bin=$(command -v "$1" || true)
	fi
	if [ -z "$bin" ]; then
		missing "$1 not found in $TOOLS_BIN nor PATH (\`make test-deps\` installs $2)"
	fi
	have=$(go version -m "$bin" 2>/dev/null | awk '$1 == "mod" { print $3; exit }' || true)
}
