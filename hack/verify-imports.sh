#!/usr/bin/env bash
# Checks the dependency direction of shared/DESIGN.md: pkg/features is a leaf,
# pkg/storage and pkg/watchcache never import each other, pkg/watchcache imports
# no etcd, registry or resource type, and nothing imports cmd/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mod=$(go list -m)
rc=0

deps() { go list -deps "$1" 2>/dev/null | grep -v "^$1\$" || true; }
forbid() { # forbid PKG PATTERN WHY
  local hits
  hits=$(deps "$1" | grep -E "$2" || true)
  if [[ -n "${hits}" ]]; then
    echo "$1 must not import $3:"; echo "${hits}" | sed 's/^/  /'; rc=1
  fi
}

forbid "${mod}/pkg/features" "^${mod}/" "other packages of this module (it is a leaf)"
forbid "${mod}/pkg/storage" "^${mod}/pkg/(watchcache|registry|server)" "the watch cache, registry or server"
if [[ -d pkg/watchcache ]]; then
  forbid "${mod}/pkg/watchcache" "^(${mod}/pkg/(storage|registry|server|api)|go\.etcd\.io/|k8s\.io/api/)" "etcd, the registry or resource types"
fi
for p in $(go list ./... | grep -v "^${mod}/cmd/"); do
  forbid "${p}" "^${mod}/cmd/" "cmd/"
done
[[ ${rc} == 0 ]] && echo "import direction: ok"
exit ${rc}
