#!/usr/bin/env bash
# Builds kwokctl and kwok (sigs.k8s.io/kwok, at KWOK_VERSION) from the Go
# module proxy into a directory under the Go build cache named after the
# version, reusing them when already there (the first build takes minutes).
# Prints the two paths, kwokctl then kwok, one a line; the rest goes to
# stderr.
set -euo pipefail
export GOWORK=off
GO=${GO:-go}
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}

dir="$(${GO} env GOCACHE)/miniapiserver-upstream/kwok-${KWOK_VERSION}"
if [[ ! -x ${dir}/kwokctl || ! -x ${dir}/kwok ]]; then
  echo "building kwokctl and kwok ${KWOK_VERSION} into ${dir}" >&2
  start=${SECONDS}
  mkdir -p "$(dirname "${dir}")"
  tmp=$(mktemp -d "${dir}.XXXXXX")
  # A module's own go.mod, not ours: go install at a version.
  GOFLAGS= GOBIN="${tmp}" ${GO} install "sigs.k8s.io/kwok/cmd/kwokctl@${KWOK_VERSION}" "sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}"
  rm -rf "${dir}"
  mv "${tmp}" "${dir}"
  echo "built in $((SECONDS - start))s" >&2
fi
echo "${dir}/kwokctl"
echo "${dir}/kwok"
