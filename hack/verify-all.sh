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

tidy_clean() {
  local tmp
  tmp=$(mktemp -d)
  cp go.mod go.sum "${tmp}/"
  go mod tidy
  local rc=0
  diff -u "${tmp}/go.mod" go.mod && diff -u "${tmp}/go.sum" go.sum || rc=1
  cp "${tmp}/go.mod" "${tmp}/go.sum" .
  rm -rf "${tmp}"
  [[ ${rc} == 0 ]] || echo "go.mod/go.sum are not tidy: run go mod tidy"
  return ${rc}
}

check gofmt gofmt_clean
check "go vet" go vet ./...
check "go mod tidy" tidy_clean
check codegen hack/verify-codegen.sh
check "import direction" hack/verify-imports.sh
check "license headers" hack/verify-boilerplate.sh

if (( ${#failed[@]} > 0 )); then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "verify: all checks passed"
