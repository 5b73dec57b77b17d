#!/usr/bin/env bash
# Checks that every Go file carries the license header of
# hack/boilerplate.go.txt (hack/update-boilerplate.sh adds it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

missing=()
for f in $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './vendor/*'); do
  [[ -f "${f}" ]] || continue
  head -n 20 "${f}" | grep -q '^Copyright The miniapiserver Authors\.$' || missing+=("${f}")
done
if (( ${#missing[@]} > 0 )); then
  echo "no license header (run hack/update-boilerplate.sh):"
  printf '  %s\n' "${missing[@]}"
  exit 1
fi
echo "license headers: ok"
