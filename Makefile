# benthos-paimon: build, run, test, lint, fuzz and benchmark.
# Two commands set everything up on a fresh machine: `make run` and `make test`.

GO        ?= go
BIN       := bin/benthos-paimon
CI_BIN    := $(CURDIR)/.ci/bin
PKGS      := ./...
FUZZTIME  ?= 10s
BENCHTIME ?= 1x

export PATH := $(CI_BIN):$(PATH)

.PHONY: all build run test test-short interop lint fuzz bench tools s3 clean

all: build

# Stamped with the commit and its date (and the tag, "dev" without one) as a release is: --version says
# which commit a bug report is about (scripts/stamp.sh).
build:
	$(GO) build -ldflags "$$(bash scripts/stamp.sh)" -o $(BIN) .

# The main job: a demo pipeline on an embedded default (a local warehouse under ./warehouse).
run: build
	./$(BIN) demo

# Unit, end-to-end and S3 tests. The S3 server (versitygw) is installed under .ci/bin and
# started by the tests themselves on a free loopback port.
test: s3
	$(GO) test -count=1 -timeout 20m $(PKGS)

test-short:
	$(GO) test -count=1 -short $(PKGS)

# The interop suite (tests/interop/README.md): Java Paimon 1.x and 2.x,
# Flink SQL (2.0 and 1.20), Spark SQL (3.5), pypaimon and DuckDB read what
# lakecore writes, lakecore reads and tails what they write. setup.sh installs the oracles (Maven and pip caches in
# .cache/) or lists exactly what is missing (java, mvn, python3) and stops:
# a skip, or a failure with REQUIRE_INTEROP=1.
# First the Java checks that live beside the code they check (the _test.go
# files with the build tag interop outside tests/interop, e.g.
# TestInteropExpireMatchesJava, TestJavaReadsAllTypes), run with -v so the
# log lists each of them.
INTEROP_FILES = $(shell grep -rl --include='*_test.go' '^//go:build interop' lakecore plugin config internal 2>/dev/null)
INTEROP_PKGS  = $(sort $(addprefix ./,$(dir $(INTEROP_FILES))))
INTEROP_RUN   = ^($(subst $(eval) ,|,$(sort $(shell sed -n 's/^func \(Test[A-Za-z0-9_]*\)(t \*testing.T).*/\1/p' $(INTEROP_FILES)))))$$
interop:
	@if bash tests/interop/setup.sh; then \
	  echo "$(GO) test -tags interop -count=1 -v -run '$(INTEROP_RUN)' $(INTEROP_PKGS)"; \
	  $(GO) test -tags interop -count=1 -timeout 10m -v -run '$(INTEROP_RUN)' $(INTEROP_PKGS) || exit 1; \
	  echo "$(GO) test -tags interop -count=1 -timeout 30m ./tests/interop/..."; \
	  $(GO) vet -tags interop ./tests/interop/... && $(GO) test -tags interop -count=1 -timeout 30m ./tests/interop/...; \
	elif [ "$$REQUIRE_INTEROP" = 1 ]; then \
	  echo "make interop: failed: REQUIRE_INTEROP=1 and the oracles cannot be set up (see above)" >&2; exit 1; \
	else \
	  echo "make interop: skipped: the oracles cannot be set up (see above)" >&2; \
	fi

s3:
	bash .ci/s3.sh install

tools:
	@test -x $(CI_BIN)/staticcheck || GOBIN=$(CI_BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@v0.8.2

# go.mod and go.sum must be what `go mod tidy` makes of the imports: a
# dependency added by hand, or left after its last import went, fails here.
lint: tools
	$(GO) mod tidy -diff
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet -tags interop $(PKGS)
	$(CI_BIN)/staticcheck -tags interop $(PKGS)

# Short runs of every fuzz target (FUZZTIME each). scripts/fuzz.sh tells Go
# 1.26's fuzz-deadline race (no input found) from a finding, which fails.
fuzz:
	bash scripts/fuzz.sh $(FUZZTIME)

# Go benchmarks of every package, then the report harness (tests/bench), which
# regenerates docs/BENCHMARKS.md (about 75 minutes on the 2-core machine;
# BENCH_FLAGS=-quick for a smoke run, BENCH_FLAGS='-only write,tail' for some sections).
# Its peers section runs Java Paimon and pypaimon from tests/interop: setup.sh
# builds them first; where it cannot, the section says why and is skipped
# (REQUIRE_INTEROP=1: fails).
BENCH_FLAGS ?=
bench: s3
	@bash tests/interop/setup.sh >/dev/null || echo "make bench: tests/interop/setup.sh failed (above): the peers section will say why" >&2
	$(GO) test -run='^$$' -bench=. -benchmem -benchtime=$(BENCHTIME) $(PKGS)
	@mkdir -p docs
	$(GO) run ./tests/bench/cmd/report -out docs/BENCHMARKS.md $(BENCH_FLAGS)

clean:
	rm -rf bin warehouse

# --- Reference docs, release builds and the container image ---------------

.PHONY: docs release image

# Regenerates docs/components (one page per component this binary adds to
# Benthos' own, from the config specs). TestComponentDocsUpToDate fails
# when the checked-in pages are stale.
docs:
	$(GO) run . docs --dir docs/components

# The stamps of release builds and images; override on the command line
# (make release VERSION=v0.2.0).
VERSION ?= $(shell git describe --tags --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
DATE    ?= $(shell git log -1 --format=%cI HEAD 2>/dev/null || echo unknown)
IMAGE   ?= benthos-paimon:$(VERSION)

# Static binaries (CGO_ENABLED=0) for linux and darwin on amd64 and arm64
# into dist/, stamped, with dist/SHA256SUMS. The Dockerfile runs the same
# script. PLATFORMS=linux/amd64 for one.
PLATFORMS ?=
release:
	VERSION=$(VERSION) COMMIT=$(COMMIT) DATE=$(DATE) bash scripts/release.sh -o dist $(PLATFORMS)

# The container image (Dockerfile). Needs docker and its daemon; CI does not.
image:
	@command -v docker >/dev/null 2>&1 || { echo "make image: docker is not installed" >&2; exit 1; }
	@docker info >/dev/null 2>&1 || { echo "make image: the docker daemon is not reachable (docker info fails)" >&2; exit 1; }
	docker build --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) --build-arg DATE=$(DATE) -t $(IMAGE) .
