#!/usr/bin/env bash
# Usage: hack/bench/rounds.sh ROUNDS OUT [flags of the benchmarks...]
#
# Runs the benchmarks of hack/bench (those matching $BENCH, default all)
# ROUNDS times, round after round, each round every benchmark once on each
# server, and writes every sample to OUT in the Go benchmark format, for
# benchstat. The populated data dirs are made in the first round, kept for
# the others, and removed at the end.
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
for i in $(seq "$rounds"); do
	echo "bench: round $i of $rounds" >&2
	(cd "$dir" && "$bin/bench.test" -test.run '^$' -test.bench "${BENCH:-.}" -test.timeout 3h \
		-fixtures "$fixtures" -round "$i" "$@") | tee -a "$out"
done
