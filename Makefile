# The one test command (README, CI): installs what the tests need when it is
# missing, then vets and runs every test, fuzz seed corpora included.
GO ?= go
BINARY := indexima_exporter
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BRANCH ?= $(shell git rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)
VERSION_PKG := github.com/prometheus/common/version
LDFLAGS := -X $(VERSION_PKG).Version=$(VERSION) -X $(VERSION_PKG).Revision=$(REVISION) \
	-X $(VERSION_PKG).Branch=$(BRANCH) -X $(VERSION_PKG).BuildUser=$(shell id -un)@$(shell hostname) \
	-X $(VERSION_PKG).BuildDate=$(shell date -u +%Y%m%d-%H:%M:%S)

.PHONY: all build test test-deps vet fmt-check vulncheck demo fuzz

all: build

build:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BINARY) .

demo:
	$(GO) run . --demo

test-deps:
	./scripts/install-test-deps.sh

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi

vet:
	$(GO) vet ./...

# govulncheck against an offline copy of the Go vulnerability database;
# VULNDB=DIR points at another copy (see docs/security.md).
VULNDB ?= ../shared/vulndb
vulncheck:
	VULNDB="$(VULNDB)" ./scripts/vulncheck.sh

# The soak runs twice: in the suite under -race (the exporter under test is
# then built with -race too), and once more with a plain build, whose
# different speed makes other calls time out; its verdict must not change.
test: test-deps fmt-check vet vulncheck
	$(GO) test -race -count=1 -timeout 40m ./...
	$(GO) test -count=1 -timeout 20m -run '^TestSoak$$' ./faults/

# A longer fuzzing run of every fuzz target (not part of `make test`).
FUZZTIME ?= 60s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done
