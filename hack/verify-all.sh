#!/usr/bin/env bash
# Runs every verify check and reports all failures, not just the first.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

failed=()
check() {
  local name=$1; shift
  echo "--- verify: ${name}"
  if ! "$@"; then
    failed+=("${name}")
  fi
}

gofmt_clean() {
  local bad
  bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './vendor/*'))
  [[ -z "${bad}" ]] || { echo "gofmt would change:"; echo "${bad}"; return 1; }
}

# tidy_clean DIR [MODFILE]: DIR's go.mod (or MODFILE) and its go.sum are
# what go mod tidy makes them.
tidy_clean() {
  local dir=$1 mod=${2:-go.mod}
  if ! go -C "${dir}" mod tidy -diff -modfile="${mod}"; then
    echo "${dir}/${mod} and its sum are not tidy: run go mod tidy -modfile=${mod} there"
    return 1
  fi
}

# kube_gates_fresh: cmd/miniapiserver/kubegates has the feature gates of
# the kube-apiserver hack/upstream pins.
kube_gates_fresh() {
  local dir=cmd/miniapiserver/kubegates tmp
  tmp=$(mktemp -d)
  GOWORK=off go -C hack/upstream run ./kubegates "${tmp}" || { rm -rf "${tmp}"; return 1; }
  local stale=0 f
  for f in "${tmp}"/zz_generated.*.go "${dir}"/zz_generated.*.go; do
    diff -u "${dir}/$(basename "${f}")" "${tmp}/$(basename "${f}")" >/dev/null || stale=1
  done
  rm -rf "${tmp}"
  if (( stale )); then
    echo "${dir}'s zz_generated files are not kube-apiserver's gates: run GOWORK=off go -C hack/upstream run ./kubegates ../../${dir}"
    return 1
  fi
}

check gofmt gofmt_clean
check "go vet" go vet ./...
check "go vet (hack/bench)" go -C hack/bench vet ./...
check "go mod tidy" tidy_clean .
check "go mod tidy (hack/bench)" tidy_clean hack/bench
check "go vet (client)" go -C client vet ./...
check "go mod tidy (client)" tidy_clean client
check "go vet (test/envtest)" env GOWORK=off go -C test/envtest vet ./...
check "go vet (test/envtest, controller-runtime v0.23)" env GOWORK=off go -C test/envtest vet -modfile=go.v0.23.mod ./...
check "go mod tidy (test/envtest)" tidy_clean test/envtest
check "go mod tidy (test/envtest, controller-runtime v0.23)" tidy_clean test/envtest go.v0.23.mod
check codegen hack/verify-codegen.sh
check "kube-apiserver's feature gates" kube_gates_fresh
check "import direction" hack/verify-imports.sh
check "license headers" hack/verify-boilerplate.sh

if (( ${#failed[@]} > 0 )); then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "verify: all checks passed"
