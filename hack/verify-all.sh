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

# tidy_clean DIR: DIR's go.mod and go.sum are what go mod tidy makes them.
tidy_clean() {
  local dir=$1 tmp
  tmp=$(mktemp -d)
  cp "${dir}/go.mod" "${dir}/go.sum" "${tmp}/"
  go -C "${dir}" mod tidy
  local rc=0
  diff -u "${tmp}/go.mod" "${dir}/go.mod" && diff -u "${tmp}/go.sum" "${dir}/go.sum" || rc=1
  cp "${tmp}/go.mod" "${tmp}/go.sum" "${dir}/"
  rm -rf "${tmp}"
  [[ ${rc} == 0 ]] || echo "${dir}/go.mod, go.sum are not tidy: run go mod tidy there"
  return ${rc}
}

check gofmt gofmt_clean
check "go vet" go vet ./...
check "go vet (hack/bench)" go -C hack/bench vet ./...
check "go mod tidy" tidy_clean .
check "go mod tidy (hack/bench)" tidy_clean hack/bench
check codegen hack/verify-codegen.sh
check "import direction" hack/verify-imports.sh
check "license headers" hack/verify-boilerplate.sh

if (( ${#failed[@]} > 0 )); then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "verify: all checks passed"
