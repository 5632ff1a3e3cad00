#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian machine, and nothing when
# everything is already there (so `make test` stays quick on a warm machine).
#
#   apt:  prometheus (promtool), prometheus-alertmanager (amtool), buildah (image
#         test), docker-compose (validates deploy/docker-compose without a daemon),
#         systemd (systemd-analyze verify of deploy/systemd), chromium with a font
#         (the browser test of the /status page, headless)
#   Go:   helm, kubeconform, govulncheck, golangci-lint (`make lint`), jsonnet
#         and jsonnetfmt (the monitoring mixin) and Grafana's dashboard-linter at
#         pinned versions, and Prometheus 3.15.0 with its promtool (module
#         github.com/prometheus/prometheus v0.315.0, installed as prometheus3
#         and promtool3 next to Debian's 2.42, so that the rules and the e2e
#         run on both lines), built into a cache directory outside the
#         repository:
#           INDEXIMA_TOOLS_BIN (default $HOME/.cache/indexima_exporter/tools/bin)
#         The tests look there first, then in PATH.
#
# A pinned tool is rebuilt only when the binary is missing or was built from
# another module version (read with `go version -m`, which is reliable for
# `go install`-ed binaries: helm then reports only "v3.22" and kubeconform
# "development" on their own version flags, and a `go build` of Prometheus
# reports an empty version).
set -euo pipefail

HELM_VERSION=v3.22.0
KUBECONFORM_VERSION=v0.8.0
GOVULNCHECK_VERSION=v1.9.0 # scripts/vulncheck.sh checks the same version
# scripts/lint.sh checks the same version. About 11 minutes cold on 2 busy
# cores (it links every linter it offers).
GOLANGCI_LINT_VERSION=v2.15.0
JSONNET_VERSION=v0.22.0    # mixin/mixin_test.go checks the same version
TOOLS_BIN="${INDEXIMA_TOOLS_BIN:-$HOME/.cache/indexima_exporter/tools/bin}"

log() { printf 'install-test-deps: %s\n' "$*"; }

# ---- Debian packages ---------------------------------------------------------
# packages:command pairs; the command tells whether the packages are
# installed (several packages separated by commas are installed together).
APT_WANTED=(
	prometheus:promtool
	prometheus-alertmanager:amtool
	buildah:buildah
	docker-compose:docker-compose
	systemd:systemd-analyze
	# Without recommends Chromium brings no font: its screenshots would show
	# boxes for letters.
	chromium,fonts-dejavu-core:chromium
)

missing=()
for pair in "${APT_WANTED[@]}"; do
	pkgs=${pair%%:*} cmd=${pair##*:}
	if command -v "$cmd" >/dev/null 2>&1; then
		log "apt: ${pkgs//,/ } present ($(command -v "$cmd"))"
	else
		IFS=, read -r -a pkg_list <<<"$pkgs"
		missing+=("${pkg_list[@]}")
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

# dep_version BIN MODULE prints the version of MODULE recorded in a Go binary
# (as its main module or as a dependency).
dep_version() {
	go version -m "$1" 2>/dev/null | awk -v m="$2" '($1 == "mod" || $1 == "dep") && $2 == m { print $3; exit }'
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

# ---- Grafana's dashboard-linter --------------------------------------------------
# Its tagged v0.2.0 resolves but does not build here: one of its dependencies
# (github.com/grafana/grafana/apps/dashboard) is refused by the module proxy.
# This pseudo-version (2024-12-24) builds, with the scratch-module recipe and
# GONOSUMDB for the linter itself, whose checksum the checksum database lacks.
# About 2.5 minutes cold on 2 cores.
DASHBOARD_LINTER_MODULE=github.com/grafana/dashboard-linter
DASHBOARD_LINTER_VERSION=v0.0.0-20241224134444-1765d94aec4a # dashboards/lint_test.go checks the same version

ensure_dashboard_linter() {
	local want=$DASHBOARD_LINTER_VERSION bin="$TOOLS_BIN/dashboard-linter"
	if [ -x "$bin" ] && [ "$(dep_version "$bin" "$DASHBOARD_LINTER_MODULE")" = "$want" ]; then
		log "go: dashboard-linter ($DASHBOARD_LINTER_MODULE $want) present ($bin)"
		return
	fi
	log "go: building dashboard-linter ($DASHBOARD_LINTER_MODULE $want) into $TOOLS_BIN (about 2.5 minutes cold on 2 cores)"
	local scratch
	scratch=$(mktemp -d)
	(
		cd "$scratch"
		go mod init indexima-test-deps/dashboard-linter >/dev/null 2>&1
		GONOSUMDB=$DASHBOARD_LINTER_MODULE go get -tool "$DASHBOARD_LINTER_MODULE@$want"
		go build -o "$bin.tmp" "$DASHBOARD_LINTER_MODULE"
	) || { rm -rf "$scratch"; log "go: building dashboard-linter $want failed" >&2; exit 1; }
	rm -rf "$scratch"
	mv "$bin.tmp" "$bin"
	if [ "$(dep_version "$bin" "$DASHBOARD_LINTER_MODULE")" != "$want" ]; then
		log "go: $bin does not record $DASHBOARD_LINTER_MODULE $want" >&2
		exit 1
	fi
}

# Built beside the other tools: half of its cold build is downloading
# modules, which overlaps with their compiling. Its output follows theirs.
linter_log=$(mktemp)
ensure_dashboard_linter >"$linter_log" 2>&1 &
linter_pid=$!
# Should another tool fail, the linter's build stops too.
trap 'kill "$linter_pid" 2>/dev/null || true; rm -f "$linter_log"' EXIT

ensure_tool helm helm.sh/helm/v3/cmd/helm "$HELM_VERSION"
ensure_tool kubeconform github.com/yannh/kubeconform/cmd/kubeconform "$KUBECONFORM_VERSION"
ensure_tool govulncheck golang.org/x/vuln/cmd/govulncheck "$GOVULNCHECK_VERSION"
ensure_tool golangci-lint github.com/golangci/golangci-lint/v2/cmd/golangci-lint "$GOLANGCI_LINT_VERSION"
ensure_tool jsonnet github.com/google/go-jsonnet/cmd/jsonnet "$JSONNET_VERSION"
ensure_tool jsonnetfmt github.com/google/go-jsonnet/cmd/jsonnetfmt "$JSONNET_VERSION"

# ---- Prometheus 3 from the module proxy ------------------------------------------
# `go install github.com/prometheus/prometheus/cmd/prometheus@v0.315.0` is refused
# by the proxy setup here, so both commands are built the toolbox way: a scratch
# module that requires Prometheus as a tool dependency, then `go build` of its
# commands. The binaries' main module is then the scratch one, so the pinned
# version is read from their `dep` line. About 4 minutes cold on 2 cores
# without the service discovery providers; v0.316.0 needs a dependency the
# proxy refuses.
PROMETHEUS_MODULE=github.com/prometheus/prometheus
PROMETHEUS3_VERSION=v0.315.0 # Prometheus 3.15.0

ensure_prometheus3() {
	local want=$PROMETHEUS3_VERSION ok=1 name
	for name in prometheus3 promtool3; do
		if [ ! -x "$TOOLS_BIN/$name" ] || [ "$(dep_version "$TOOLS_BIN/$name" "$PROMETHEUS_MODULE")" != "$want" ]; then
			ok=0
		fi
	done
	if [ "$ok" = 1 ]; then
		log "go: prometheus3 and promtool3 ($PROMETHEUS_MODULE $want) present ($TOOLS_BIN)"
		return
	fi
	log "go: building prometheus3 and promtool3 ($PROMETHEUS_MODULE $want) into $TOOLS_BIN (about 4 minutes cold on 2 cores)"
	local scratch
	scratch=$(mktemp -d)
	(
		cd "$scratch"
		go mod init indexima-test-deps/prometheus3 >/dev/null 2>&1
		# promtool needs its own `go get -tool`: otherwise a go.sum entry of one
		# of its dependencies is missing.
		go get -tool "$PROMETHEUS_MODULE/cmd/prometheus@$want"
		go get -tool "$PROMETHEUS_MODULE/cmd/promtool@$want"
		# remove_all_sd (Prometheus >= 3.10) leaves out every service
		# discovery provider (Kubernetes, the clouds' SDKs): the tests use
		# static targets only, and the build takes half the time.
		go build -tags remove_all_sd -o "$TOOLS_BIN/prometheus3.tmp" "$PROMETHEUS_MODULE/cmd/prometheus"
		go build -tags remove_all_sd -o "$TOOLS_BIN/promtool3.tmp" "$PROMETHEUS_MODULE/cmd/promtool"
	) || { rm -rf "$scratch"; log "go: building Prometheus $want failed" >&2; exit 1; }
	rm -rf "$scratch"
	# Renamed only once both are built: an interrupted build leaves no binary
	# that looks finished.
	mv "$TOOLS_BIN/prometheus3.tmp" "$TOOLS_BIN/prometheus3"
	mv "$TOOLS_BIN/promtool3.tmp" "$TOOLS_BIN/promtool3"
	for name in prometheus3 promtool3; do
		if [ "$(dep_version "$TOOLS_BIN/$name" "$PROMETHEUS_MODULE")" != "$want" ]; then
			log "go: $name at $TOOLS_BIN/$name does not record $PROMETHEUS_MODULE $want" >&2
			exit 1
		fi
	done
}

ensure_prometheus3

linter_status=0
wait "$linter_pid" || linter_status=$?
cat "$linter_log"
if [ "$linter_status" != 0 ]; then
	log "go: dashboard-linter: failed (status $linter_status)" >&2
	exit 1
fi

log "done; tools in $TOOLS_BIN"
