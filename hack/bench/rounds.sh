#!/usr/bin/env bash
# Usage: hack/bench/rounds.sh ROUNDS OUT [flags of the benchmarks...]
#
# Runs the benchmarks of hack/bench (those matching $BENCH, default all)
# ROUNDS times, round after round, each round every benchmark once on each
# server, and writes every sample to OUT in the Go benchmark format, for
# benchstat. The populated data dirs are made before the first round
# (BenchmarkFixtures) and synced to disk, kept for the rounds, and removed
# at the end. Each server kind runs in processes of its own (-kind),
# miniapiserver first in odd rounds and last in even ones: ops on one kind
# left this process's clients slower on the other.
# EnvtestSuite runs pkg/envtest's servers inside the benchmark's process,
# so it runs in a process of its own too: what those servers leave on the
# heap would weigh on the clients of the benchmarks after it.
set -euo pipefail
rounds=$1 out=$2
shift 2
dir=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "$dir/../.." && pwd)/bin
go -C "$dir" test -c -o "$bin/bench.test" .
fixtures=$bin/bench-fixtures
rm -rf "$fixtures"
trap 'rm -rf "$fixtures"' EXIT
: >"$out"
# BenchmarkCluster runs alone (make bench-cluster): it needs bin/cluster.
patterns=("${BENCH:-^Benchmark([^CEF]|C[^l])}")
[[ -n ${BENCH:-} ]] || patterns+=('^BenchmarkEnvtest')
kinds=(mini)
[[ " $* " == *" -upstream "* || " $* " == *" -upstream="* ]] && kinds+=(upstream)
for pattern in "${patterns[@]}"; do
	for kind in "${kinds[@]}"; do
		(cd "$dir" && "$bin/bench.test" -test.run '^$' -test.bench '^BenchmarkFixtures$' -test.benchtime 1x -test.timeout 3h \
			-fixtures "$fixtures" -prepare "$pattern" -kind "$kind" "$@") >&2
	done
done
sync
for i in $(seq "$rounds"); do
	echo "bench: round $i of $rounds" >&2
	order=("${kinds[@]}")
	((i % 2)) || order=("${order[@]:1}" "${order[0]}")
	for pattern in "${patterns[@]}"; do
		for kind in "${order[@]}"; do
			(cd "$dir" && "$bin/bench.test" -test.run '^$' -test.bench "$pattern" -test.timeout 3h \
				-fixtures "$fixtures" -round "$i" -kind "$kind" "$@") | tee -a "$out"
		done
	done
done
