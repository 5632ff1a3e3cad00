# The one test command (README, CI): installs what the tests need when it is
# missing, then vets, lints and runs every test, fuzz seed corpora included.
GO ?= go
BINARY := indexima_exporter
# The version being built: the VERSION file (the top entry of CHANGELOG.md and
# the Helm chart's appVersion, which a test keeps equal); override it on the
# command line, e.g. make release VERSION=0.2.0.
VERSION ?= $(shell cat VERSION)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BRANCH ?= $(shell git rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)
VERSION_PKG := github.com/prometheus/common/version
# No build user, host or clock in a binary: the build date is the commit's.
BUILD_DATE ?= $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d-%H:%M:%S 2>/dev/null)
LDFLAGS := -X $(VERSION_PKG).Version=$(VERSION) -X $(VERSION_PKG).Revision=$(REVISION) \
	-X $(VERSION_PKG).Branch=$(BRANCH) -X $(VERSION_PKG).BuildDate=$(BUILD_DATE)

# Release archives and images (scripts/release, scripts/image.sh).
PLATFORMS ?= all
IMAGE_PLATFORMS ?= linux/amd64,linux/arm64
BUILD_DIR ?= .build
DIST_DIR ?= dist
IMAGE ?= localhost/indexima_exporter:$(VERSION)

.PHONY: all build test test-deps vet fmt-check lint vulncheck demo fuzz release crossbuild image mixin chart

all: build

build:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BINARY) .

# Reproducible archives (binary, LICENSE, README.md, indexima.example.yml) for
# every platform, and sha256sums.txt, into $(DIST_DIR):
#   make release VERSION=0.1.0
release:
	$(GO) run ./scripts/release -version "$(VERSION)" -platforms "$(PLATFORMS)" \
		-build-dir "$(BUILD_DIR)" -dist-dir "$(DIST_DIR)"

# The binaries alone, in $(BUILD_DIR)/<os>-<arch>/:
# make crossbuild PLATFORMS=linux/amd64
crossbuild:
	$(GO) run ./scripts/release -version "$(VERSION)" -platforms "$(PLATFORMS)" \
		-build-dir "$(BUILD_DIR)" -binaries-only

# The linux/amd64 and linux/arm64 images, built from source by the
# Dockerfile, in one manifest list $(IMAGE), with buildah (push it with
# `buildah manifest push --all $(IMAGE) docker://REGISTRY/NAME:TAG`).
image:
	IMAGE="$(IMAGE)" VERSION="$(VERSION)" REVISION="$(REVISION)" \
		PLATFORMS="$(IMAGE_PLATFORMS)" ./scripts/image.sh

# Renders the monitoring mixin (mixin/) into the shipped rule file (and its
# copy in the Helm chart, which holds no symbolic link) and
# dashboards; a test fails when they differ from it.
mixin:
	./scripts/render-mixin.sh .

# The Helm chart as an archive in $(DIST_DIR); its appVersion is VERSION.
chart:
	helm package --app-version "$(VERSION)" --destination "$(DIST_DIR)" deploy/helm/indexima-exporter

demo:
	$(GO) run . --demo

test-deps:
	./scripts/install-test-deps.sh

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi

vet:
	$(GO) vet ./...

# golangci-lint at the version scripts/install-test-deps.sh pins, with
# .golangci.yml; any finding fails. Without the tool it fails when CI is
# set and is skipped with a note elsewhere (scripts/lint.sh).
lint:
	./scripts/lint.sh

# govulncheck against an offline copy of the Go vulnerability database:
# ~/.cache/indexima_exporter/vulndb unless VULNDB=DIR names another copy
# (see docs/security.md).
VULNDB ?=
vulncheck:
	VULNDB="$(VULNDB)" ./scripts/vulncheck.sh

# The soak and the engine's seeded schedules run twice: in the suite under
# -race (the exporter under test is then built with -race too; 1,000
# schedules), and once more with a plain build (2,000 schedules), whose
# different speed makes other calls time out; their verdict must not change.
test: test-deps fmt-check vet lint vulncheck
	$(GO) test -race -count=1 -timeout 40m ./...
	$(GO) test -count=1 -timeout 20m -run '^(TestSoak|TestSeededSchedules)$$' ./faults/ ./tracker/

# A longer fuzzing run of every fuzz target (not part of `make test`).
FUZZTIME ?= 60s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done
