# The one test command (README, CI): installs what the tests need when it is
# missing, then vets and runs every test, fuzz seed corpora included.
GO ?= go
BINARY := indexima_exporter

.PHONY: all build test test-deps vet fmt-check demo fuzz

all: build

build:
	$(GO) build -trimpath -o $(BINARY) .

demo:
	$(GO) run . --demo

test-deps:
	./scripts/install-test-deps.sh

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi

vet:
	$(GO) vet ./...

test: test-deps fmt-check vet
	$(GO) test -race -count=1 -timeout 40m ./...

# A longer fuzzing run of every fuzz target (not part of `make test`).
FUZZTIME ?= 60s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done
