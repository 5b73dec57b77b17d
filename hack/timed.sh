#!/usr/bin/env bash
# timed.sh CMD...: runs CMD; with PHASE_TIMES set (.ci/run sets it), appends
# how long it took to that file.
set -uo pipefail
[[ -n "${PHASE_TIMES:-}" ]] || exec "$@"
start=${SECONDS}
"$@"
rc=$?
echo "$(( SECONDS - start ))s rc=${rc}: $*" >>"${PHASE_TIMES}"
exit "${rc}"
