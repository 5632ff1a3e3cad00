#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian machine, and nothing when
# everything is already there (so `make test` stays quick on a warm machine).
#
#   apt:  prometheus (promtool), prometheus-alertmanager (amtool), buildah (image
#         test), docker-compose (validates deploy/docker-compose without a daemon),
#         systemd (systemd-analyze verify of deploy/systemd)
#   Go:   helm, kubeconform and govulncheck at pinned versions, built into a
#         cache directory outside the repository:
#           INDEXIMA_TOOLS_BIN (default $HOME/.cache/indexima_exporter/tools/bin)
#         The tests look there first, then in PATH.
#
# A pinned tool is rebuilt only when the binary is missing or was built from
# another module version (read with `go version -m`, which is reliable for
# `go install`-ed binaries: helm then reports only "v3.22" and kubeconform
# "development" on their own version flags).
set -euo pipefail

HELM_VERSION=v3.22.0
KUBECONFORM_VERSION=v0.8.0
GOVULNCHECK_VERSION=v1.9.0 # scripts/vulncheck.sh checks the same version
TOOLS_BIN="${INDEXIMA_TOOLS_BIN:-$HOME/.cache/indexima_exporter/tools/bin}"

log() { printf 'install-test-deps: %s\n' "$*"; }

# ---- Debian packages ---------------------------------------------------------
# package:command pairs; the command tells whether the package is installed.
APT_WANTED=(
	prometheus:promtool
	prometheus-alertmanager:amtool
	buildah:buildah
	docker-compose:docker-compose
	systemd:systemd-analyze
)

missing=()
for pair in "${APT_WANTED[@]}"; do
	pkg=${pair%%:*} cmd=${pair##*:}
	if command -v "$cmd" >/dev/null 2>&1; then
		log "apt: $pkg present ($(command -v "$cmd"))"
	else
		missing+=("$pkg")
	fi
done
if ((${#missing[@]} > 0)); then
	SUDO=()
	if [ "$(id -u)" != 0 ]; then SUDO=(sudo); fi
	log "apt: installing ${missing[*]} (apt-get update first)"
	"${SUDO[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# ---- pinned Go tools -----------------------------------------------------------
mkdir -p "$TOOLS_BIN"

# module_version BIN prints the main module version recorded in a Go binary.
module_version() {
	go version -m "$1" 2>/dev/null | awk '$1 == "mod" { print $3; exit }'
}

# ensure_tool NAME MODULE/CMD/PATH VERSION
ensure_tool() {
	local name=$1 pkg=$2 want=$3 bin="$TOOLS_BIN/$1"
	if [ -x "$bin" ] && [ "$(module_version "$bin")" = "$want" ]; then
		log "go: $name $want present ($bin)"
		return
	fi
	log "go: building $name $want into $TOOLS_BIN (a few minutes on 2 cores)"
	GOBIN="$TOOLS_BIN" go install "$pkg@$want"
	if [ "$(module_version "$bin")" != "$want" ]; then
		log "go: $name at $bin does not report module version $want" >&2
		exit 1
	fi
}

ensure_tool helm helm.sh/helm/v3/cmd/helm "$HELM_VERSION"
ensure_tool kubeconform github.com/yannh/kubeconform/cmd/kubeconform "$KUBECONFORM_VERSION"
ensure_tool govulncheck golang.org/x/vuln/cmd/govulncheck "$GOVULNCHECK_VERSION"

log "done; tools in $TOOLS_BIN"
