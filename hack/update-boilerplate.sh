#!/usr/bin/env bash
# Adds the license header of hack/boilerplate.go.txt to every Go file that
# lacks it: at the top, or after the file's build constraints.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

for f in $(git ls-files '*.go'; git ls-files --others --exclude-standard '*.go'); do
  [[ -f "${f}" ]] || continue
  head -n 20 "${f}" | grep -q '^Copyright The miniapiserver Authors\.$' && continue
  tmp=$(mktemp)
  awk -v header="hack/boilerplate.go.txt" '
    BEGIN { done = 0 }
    !done && /^\/\/go:build/ { print; next }
    !done && /^\/\/ \+build/ { print; next }
    !done {
      if (NR > 1) print ""
      while ((getline line < header) > 0) print line
      print ""
      done = 1
      if ($0 == "") next
    }
    { print }
  ' "${f}" > "${tmp}"
  cat "${tmp}" > "${f}"
  rm -f "${tmp}"
done
