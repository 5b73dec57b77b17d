#!/usr/bin/env bash
# Checks the dependency direction of the README's architecture section:
# pkg/features and pkg/api are leaves, pkg/watchcache imports nothing of ours
# (nor etcd or resource types), pkg/garbagecollector imports nothing of ours
# (an API client only), pkg/storage does not import the watch cache,
# the registry or the server, pkg/server/storage imports only the watch cache
# and the gates of ours, pkg/server/encoding only the watch cache and
# pkg/api, pkg/server/datadir, keyring, serving, manifests and openapi nothing of ours,
# pkg/server/controllers, admissionchain, apis, apiextensions, controls and
# peers neither pkg/server nor pkg/testserver (they are steps of the server's
# assembly, which calls them),
# the registry imports only pkg/api of ours, pkg/envtest does not import
# controller-runtime, pkg/auth imports nothing of ours,
# pkg/admission/... only pkg/api/qos (a leaf) and pkg/admission/internal's, pkg/controller/... only pkg/auth of the server's
# packages, pkg/testcontrols only its API types
# (it works on etcd keys), test/informertest nothing of ours
# (hack/bench imports it without the server), test/pkitest only the
# standard library, nothing but tests imports test/pkitest, and nothing
# imports cmd/.
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
only() { # only PKG ALLOWED WHY: of this module, PKG imports only what ALLOWED (an ERE) names
  local hits
  hits=$(deps "$1" | grep "^${mod}/" | grep -vE "^${mod}/($2)\$" || true)
  if [[ -n "${hits}" ]]; then
    echo "$1 must import only $2 of this module $3:"; echo "${hits}" | sed 's/^/  /'; rc=1
  fi
}

forbid "${mod}/pkg/features" "^${mod}/" "other packages of this module (it is a leaf)"
forbid "${mod}/pkg/api" "^${mod}/" "other packages of this module (it is a leaf)"
forbid "${mod}/pkg/api/qos" "^${mod}/" "other packages of this module (it is a leaf)"
forbid "${mod}/pkg/api/node" "^${mod}/" "other packages of this module (it is a leaf)"
forbid "${mod}/pkg/api/volume" "^${mod}/" "other packages of this module (it is a leaf)"
forbid "${mod}/pkg/watchcache" "^(${mod}/|go\.etcd\.io/|k8s\.io/api/)" "anything of this module, etcd or resource types"
forbid "${mod}/pkg/garbagecollector" "^${mod}/" "other packages of this module (it is a client of the API only)"
forbid "${mod}/pkg/storage" "^${mod}/pkg/(watchcache|registry|server|testserver)" "the watch cache, registry or server"
forbid "${mod}/pkg/envtest" "^sigs\.k8s\.io/controller-runtime" "controller-runtime (its users bring their own)"
forbid "${mod}/pkg/auth" "^${mod}/" "other packages of this module (it decides from RBAC objects only)"
forbid "${mod}/test/informertest" "^${mod}/" "other packages of this module (hack/bench imports it without the server)"
forbid "${mod}/test/pkitest" "^[^/]*\." "anything but the standard library (any test may import it)"
only "${mod}/pkg/testcontrols" "pkg/testcontrols/v1alpha1" "(it works on etcd keys, and serves its own API types)"
forbid "${mod}/pkg/testcontrols/v1alpha1" "^${mod}/" "other packages of this module (API types)"
forbid "${mod}/pkg/server/datadir" "^${mod}/" "other packages of this module (it keeps files and certificates only)"
forbid "${mod}/pkg/server/keyring" "^${mod}/" "other packages of this module (it shares keys through etcd only)"
forbid "${mod}/pkg/server/serving" "^${mod}/" "other packages of this module (HTTP plumbing around k8s.io/apiserver's handlers)"
forbid "${mod}/pkg/server/manifests" "^${mod}/" "other packages of this module (it installs manifests through the API only)"
forbid "${mod}/pkg/server/openapi" "^${mod}/" "other packages of this module (the OpenAPI of what k8s.io/apiserver serves)"
only "${mod}/pkg/server/storage" "pkg/(features|watchcache)" "(it builds storages from the config pkg/storage gives it)"
forbid "${mod}/pkg/server/controllers" "^${mod}/pkg/(server|testserver)\$" "pkg/server or pkg/testserver (it makes the controllers pkg/server starts)"
only "${mod}/pkg/server/encoding" "pkg/(api|watchcache)" "(the seam between the watch cache and the HTTP layer goes one way)"
forbid "${mod}/pkg/server/admissionchain" "^${mod}/pkg/(server|testserver)\$" "pkg/server or pkg/testserver (it is a step of the server's assembly, which calls it)"
forbid "${mod}/pkg/server/peers" "^${mod}/pkg/(server|testserver)\$" "pkg/server or pkg/testserver (it keeps the identity leases and shares the keys pkg/server asks it to)"
forbid "${mod}/pkg/server/apiextensions" "^${mod}/pkg/(server|testserver)\$" "pkg/server or pkg/testserver (it builds the apiextensions-apiserver pkg/server delegates to)"
forbid "${mod}/pkg/server/aggregator" "^${mod}/pkg/(server|testserver)\$" "pkg/server or pkg/testserver (it builds the aggregator pkg/server puts in front)"
forbid "${mod}/pkg/server/controls" "^${mod}/pkg/(server|testserver)\$" "pkg/server or pkg/testserver (it serves the test controls pkg/server starts)"
forbid "${mod}/pkg/server/apis" "^${mod}/pkg/(server|testserver)\$" "pkg/server or pkg/testserver (it installs the APIs in the server pkg/server assembles)"
for p in $(go list ./pkg/admission/...); do
  only "${p}" "pkg/api/qos|pkg/admission/internal/podupdate" "(a plugin works on API objects and clients only, and what plugins share)"
done
for p in $(go list ./pkg/controller/...); do
  forbid "${p}" "^${mod}/pkg/(api\$|registry|server|storage|testserver|watchcache|envtest)" "the server's packages (a controller is a client of the API, with pkg/auth's RBAC logic)"
done
for p in $(go list ./pkg/registry/...); do
  forbid "${p}" "^${mod}/pkg/(features|server|storage|testserver|watchcache)" "anything of this module but pkg/api and the registry"
done
for p in $(go list ./... | grep -v "^${mod}/cmd/"); do
  forbid "${p}" "^${mod}/cmd/" "cmd/"
done
# .Deps leaves out what only _test.go files import: those may import it.
hits=$(go list -f '{{.ImportPath}}: {{join .Deps " "}}' ./... | grep -v "^${mod}/test/" | grep -E "[: ]${mod}/test/pkitest( |\$)" | cut -d: -f1 || true)
if [[ -n "${hits}" ]]; then
  echo "only tests may import ${mod}/test/pkitest:"; echo "${hits}" | sed 's/^/  /'; rc=1
fi
[[ ${rc} == 0 ]] && echo "import direction: ok"
exit ${rc}
