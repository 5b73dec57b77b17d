# miniapiserver — `make help` lists the targets.
GO       ?= go
PKG      := github.com/miniapiserver/miniapiserver
COMMIT   := $(shell git rev-parse --short HEAD 2>/dev/null)
# The commit's date, not the clock's: with nothing changed, go build links nothing anew.
DATE     := $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
LDFLAGS  := -X $(PKG)/pkg/version.gitCommit=$(COMMIT) -X $(PKG)/pkg/version.buildDate=$(DATE)
ARGS     ?=
# Every sample of a bench run, compared side by side with confidence intervals: kube-apiserver is the base.
BENCHSTAT = $(GO) -C hack/bench tool benchstat -col '/server@(upstream mini)'

.PHONY: help build run test bench bench-upstream bench-readme fuzz verify update clean

## help: list the targets
help:
	@sed -n 's/^## //p' $(MAKEFILE_LIST)

## build: build bin/miniapiserver and bin/kubectl (the real kubectl, from k8s.io/kubectl, stamped with its version)
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/miniapiserver ./cmd/miniapiserver
	flags=$$(GO=$(GO) hack/kubectl-ldflags.sh) && $(GO) build -ldflags "$$flags" -o bin/kubectl ./hack/tools/kubectl

## run: build and start miniapiserver with its defaults (ARGS="--secure-port 7443" to add flags)
run: build
	./bin/miniapiserver $(ARGS)

## test: go vet, then every test with the race detector (integration tests included)
test:
	$(GO) vet ./...
	$(GO) -C hack/bench vet ./...
	$(GO) test -race -timeout 20m ./...
	$(GO) -C hack/bench test ./...

## bench: build, then print the benchmark tables, then benchstat's summary of every sample (written to bin/bench.txt), then the footprint of 64 in-process servers started at once (heap per server, peak RSS, data dir) (start-up, LIST, LIST RV=0 cache vs etcd, custom resources, pagination from cache vs etcd, watch fan-out, informer memory, create latency with admission, LIST and create latency as an RBAC-bound user, stop with open watches, informer relists across a restart)
bench: build
	$(GO) -C hack/bench run . -server $(CURDIR)/bin/miniapiserver -benchfmt $(CURDIR)/bin/bench.txt
	$(BENCHSTAT) $(CURDIR)/bin/bench.txt
	$(GO) test -run '^$$' -bench Footprint ./pkg/testserver

## bench-upstream: build, build kube-apiserver 1.37 and etcd from source (hack/upstream/build.sh, minutes the first time, cached after), then every benchmark (start-to-ready, the LISTs, LIST RV=0, custom resources, pagination, watch fan-out, throughput, informer memory, create latency with admission, LIST and create latency as an RBAC-bound user, stop with open watches and informer relists across a restart) side by side with them, then benchstat's comparison of every sample, kube-apiserver as the base (ARGS="-starts 3 -objects 2000 -lists 3" to add flags)
bench-upstream: build
	bins=$$(hack/upstream/build.sh) && \
		$(GO) -C hack/bench run . -server $(CURDIR)/bin/miniapiserver -upstream "$$(dirname "$$(echo "$$bins" | head -n1)")" -benchfmt $(CURDIR)/bin/bench.txt $(ARGS)
	$(BENCHSTAT) $(CURDIR)/bin/bench.txt

## bench-readme: as bench-upstream (every benchmark, each side by side with kube-apiserver), and write the report into docs/benchmarks.md between its <!-- bench:begin --> and <!-- bench:end --> lines, the samples into docs/bench.txt and benchstat's comparison into docs/benchstat.txt
bench-readme: build
	bins=$$(hack/upstream/build.sh) && \
		$(GO) -C hack/bench run . -server $(CURDIR)/bin/miniapiserver -upstream "$$(dirname "$$(echo "$$bins" | head -n1)")" -readme $(CURDIR)/docs/benchmarks.md -benchfmt $(CURDIR)/docs/bench.txt
	$(BENCHSTAT) $(CURDIR)/docs/bench.txt > docs/benchstat.txt

## fuzz: run each fuzz target briefly
fuzz:
	$(GO) test ./test/integration -run '^$$' -fuzz FuzzContinueToken -fuzztime 30s
	$(GO) test ./pkg/watchcache -run '^$$' -fuzz FuzzContinueTokenOnCache -fuzztime 30s

## verify: gofmt, go vet, go mod tidy drift, codegen drift, import direction, license headers
verify:
	hack/verify-all.sh

## update: regenerate generated code (OpenAPI definitions) and add missing license headers
update:
	hack/update-codegen.sh
	hack/update-boilerplate.sh

## clean: remove build output and the default data dir
clean:
	rm -rf bin .miniapiserver
