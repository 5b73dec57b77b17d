#!/usr/bin/env bash
# gotest.sh CMD...: runs a go test command; when it fails, ends with what
# failed (the FAIL lines, panics, and the lines tests logged from their own
# files), so a log cut to its tail still says why.
set -uo pipefail
out=$(mktemp)
trap 'rm -f "${out}"' EXIT
"$@" 2>&1 | tee "${out}"
rc=${PIPESTATUS[0]}
if [[ ${rc} -ne 0 ]]; then
  echo "=== what failed (${*})"
  grep -E -e '^\s*--- FAIL' -e '^(FAIL|panic:)' -e '_test\.go:[0-9]+: ' \
    -e '^\s*(Error|Messages|Test):' "${out}" | cut -c1-400 |
    awk '$0 == last { n++; next } { if (n) print "    (repeated: " n " more)"; print; last = $0; n = 0 }
         END { if (n) print "    (repeated: " n " more)" }' | tail -n 150
fi
exit "${rc}"
