#!/usr/bin/env bash
# Usage: build.sh [BINARY...]
# Builds upstream binaries from the Go module proxy, at the versions pinned
# in hack/upstream/go.mod: kube-apiserver, kube-controller-manager and
# kube-scheduler from k8s.io/kubernetes, etcd from go.etcd.io/etcd/server/v3
# (with no BINARY, kube-apiserver and etcd: the servers hack/bench compares
# miniapiserver with). They go into a directory under the Go build cache
# named after those versions, and are reused when already there (the first
# build takes minutes). Prints their paths in the order asked, one a line;
# the rest goes to stderr. `make bench-upstream` passes their directory to
# hack/bench -upstream; hack/cluster.sh runs the controllers.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
export GOWORK=off
GO=${GO:-go}

k8s=$(${GO} list -m -f '{{.Version}}' k8s.io/kubernetes)
etcd=$(${GO} list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
if [[ ! ${k8s} =~ ^v1\.([0-9]+)\.[0-9]+$ ]]; then
  echo "k8s.io/kubernetes is at ${k8s}, want a release v1.MINOR.PATCH" >&2
  exit 1
fi
minor=${BASH_REMATCH[1]}
dir="$(${GO} env GOCACHE)/miniapiserver-upstream/${k8s}-etcd-${etcd}"
mkdir -p "${dir}"

# build OUT PKG [GOFLAGS...]: go build PKG into OUT unless OUT exists; the
# binary is moved into place only once complete.
build() {
  local out=$1 pkg=$2
  shift 2
  if [[ -x ${out} ]]; then
    return
  fi
  echo "building ${pkg} into ${out}" >&2
  local start=${SECONDS}
  ${GO} build "$@" -o "${out}.tmp" "${pkg}"
  mv "${out}.tmp" "${out}"
  echo "built ${out} in $((SECONDS - start))s" >&2
}

# Stamped as Kubernetes' release build stamps it: unstamped, kube-apiserver
# reports v0.0.0-master.
ldflags=()
for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
  ldflags+=("-X ${pkg}.gitVersion=${k8s}" "-X ${pkg}.gitMajor=1" "-X ${pkg}.gitMinor=${minor}"
    "-X ${pkg}.gitTreeState=clean" "-X ${pkg}.buildDate=1970-01-01T00:00:00Z")
done
binaries=("$@")
if [[ ${#binaries[@]} == 0 ]]; then
  binaries=(kube-apiserver etcd)
fi
for b in "${binaries[@]}"; do
  case ${b} in
  kube-apiserver | kube-controller-manager | kube-scheduler)
    build "${dir}/${b}" "k8s.io/kubernetes/cmd/${b}" -ldflags "${ldflags[*]}" ;;
  etcd) build "${dir}/etcd" ./etcd ;;
  *)
    echo "build.sh: unknown binary ${b} (kube-apiserver, kube-controller-manager, kube-scheduler, etcd)" >&2
    exit 1
    ;;
  esac
done
for b in "${binaries[@]}"; do
  echo "${dir}/${b}"
done
