# miniapiserver — `make help` lists the targets.
GO       ?= go
PKG      := github.com/miniapiserver/miniapiserver
COMMIT   := $(shell git rev-parse --short HEAD 2>/dev/null)
# The commit's date, not the clock's: with nothing changed, go build links nothing anew.
DATE     := $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
LDFLAGS  := -X $(PKG)/pkg/version.gitCommit=$(COMMIT) -X $(PKG)/pkg/version.buildDate=$(DATE)
ARGS     ?=
# With PHASE_TIMES set to a file (.ci/run does), each step of test appends its time to it.
TIMED    := hack/timed.sh
# The binaries `make build` made, for the tests that run them (without these, each test package links its own).
TEST_BINARIES = MINIAPISERVER=$(CURDIR)/bin/miniapiserver KUBECTL=$(CURDIR)/bin/kubectl
# Test binaries link without DWARF: a shorter link each, and race reports and panics still name their lines.
TESTFLAGS := -race -ldflags=-w
# Rounds of every benchmark: benchstat gives a median's 95% interval from 6 samples.
BENCH_ROUNDS ?= 6
# Every sample of a bench run, compared side by side with confidence intervals: kube-apiserver is the base.
BENCHSTAT = $(GO) -C hack/bench tool benchstat -col '/server@(upstream mini)'
# The same for stock envtest on the binary's assets (BenchmarkEnvtestSuite's server=assets).
BENCHSTAT_ASSETS = $(GO) -C hack/bench tool benchstat -filter '.name:EnvtestSuite' -col '/server@(upstream assets)'

.PHONY: help build run test test-consumers cluster cluster-down test-cluster bench-cluster bench bench-upstream bench-readme fuzz verify update clean

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

## test: build, go vet, then every test with the race detector (integration tests included, on the binaries build made), then the binary under its consumers (test-consumers)
test: build
	$(GO) vet ./...
	$(GO) -C hack/bench vet ./...
	$(TEST_BINARIES) $(TIMED) hack/gotest.sh $(GO) test $(TESTFLAGS) -timeout 20m ./...
	$(TIMED) hack/gotest.sh $(GO) -C hack/bench test ./...
	$(TIMED) hack/gotest.sh $(GO) -C client test $(TESTFLAGS) ./...
	$(MAKE) test-consumers

## test-consumers: build, then stock controller-runtime envtest (v0.25 and v0.23) on the binary's envtest assets (test/envtest), then test-cluster
test-consumers: build
	$(TIMED) test/envtest/run.sh "$$(bin/miniapiserver envtest-assets bin/k8s)"
	$(MAKE) test-cluster

## cluster: build, then a test cluster (hack/cluster.sh): the binary as kube-apiserver and etcd, with kube-controller-manager, kube-scheduler and NODES kwok nodes (default 3) by kwokctl, all built from the module proxy (cached); prints its kubeconfig
NODES ?= 3
cluster: build
	hack/cluster.sh up --nodes $(NODES)

## cluster-down: stop and delete the test cluster
cluster-down:
	hack/cluster.sh down

## test-cluster: build, build (or reuse) the cluster's binaries, then the cluster's tests (test/integration/cluster), each on one cluster of their own
test-cluster: build
	$(TIMED) hack/cluster.sh binaries >/dev/null
	$(TEST_BINARIES) $(TIMED) hack/gotest.sh $(GO) test -count=1 -timeout 15m ./test/integration/cluster

## bench: build, then every benchmark of hack/bench on miniapiserver alone, BENCH_ROUNDS rounds (BENCH=regexp to pick benchmarks, ARGS="-objects 2000" to add flags), then benchstat's summary of the samples (bin/bench.txt), then the footprint of 64 in-process servers started at once
bench: build
	hack/bench/rounds.sh $(BENCH_ROUNDS) bin/bench.txt -server $(CURDIR)/bin/miniapiserver $(ARGS)
	$(GO) -C hack/bench tool benchstat $(CURDIR)/bin/bench.txt
	$(GO) test -run '^$$' -bench Footprint ./pkg/testserver

## bench-upstream: build, build kube-apiserver 1.37 and etcd from source (hack/upstream/build.sh, minutes the first time, cached after), then every benchmark on both servers, interleaved, BENCH_ROUNDS rounds, then benchstat's comparison (kube-apiserver as the base) and the targets
bench-upstream: build
	bins=$$(hack/upstream/build.sh) && \
		hack/bench/rounds.sh $(BENCH_ROUNDS) bin/bench.txt -server $(CURDIR)/bin/miniapiserver -upstream "$$(dirname "$$(echo "$$bins" | head -n1)")" $(ARGS)
	$(BENCHSTAT) $(CURDIR)/bin/bench.txt
	$(BENCHSTAT_ASSETS) $(CURDIR)/bin/bench.txt
	$(GO) -C hack/bench run ./cmd/benchreport $(CURDIR)/bin/bench.txt

## bench-readme: as bench-upstream, the samples into docs/bench.txt, benchstat's comparison into docs/benchstat.txt, the report and plots into docs/benchmarks.md and the headline table into README.md
bench-readme: build
	bins=$$(hack/upstream/build.sh) && \
		hack/bench/rounds.sh $(BENCH_ROUNDS) docs/bench.txt -server $(CURDIR)/bin/miniapiserver -upstream "$$(dirname "$$(echo "$$bins" | head -n1)")" -plots $(CURDIR)/docs $(ARGS)
	$(BENCHSTAT) $(CURDIR)/docs/bench.txt > docs/benchstat.txt
	$(BENCHSTAT_ASSETS) $(CURDIR)/docs/bench.txt >> docs/benchstat.txt
	$(GO) -C hack/bench run ./cmd/benchreport -readme $(CURDIR)/README.md -doc $(CURDIR)/docs/benchmarks.md -benchstat $(CURDIR)/docs/benchstat.txt $(CURDIR)/docs/bench.txt

## bench-cluster: build, build the cluster's binaries and kube-apiserver, then BenchmarkCluster (hack/bench) on both, interleaved, CLUSTER_ROUNDS rounds (default 3), then benchstat's comparison (kube-apiserver as the base)
CLUSTER_ROUNDS ?= 3
bench-cluster: build
	hack/cluster.sh binaries >/dev/null
	bins=$$(hack/upstream/build.sh) && BENCH='^BenchmarkCluster$$' \
		hack/bench/rounds.sh $(CLUSTER_ROUNDS) bin/bench-cluster.txt -server $(CURDIR)/bin/miniapiserver -upstream "$$(dirname "$$(echo "$$bins" | head -n1)")" $(ARGS)
	$(BENCHSTAT) $(CURDIR)/bin/bench-cluster.txt

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

## clean: remove build output (bin/, with bin/k8s, the envtest assets) and the default data dir
clean:
	rm -rf bin .miniapiserver
