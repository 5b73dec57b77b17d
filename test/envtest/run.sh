#!/usr/bin/env bash
# Copyright The miniapiserver Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# Runs the envtest suite in this directory with stock controller-runtime
# envtest, at controller-runtime v0.25 (go.mod) and v0.23 (go.v0.23.mod),
# on the kube-apiserver, etcd and kubectl in one assets directory:
#
#   test/envtest/run.sh [ASSETS_DIR]
#
# Without ASSETS_DIR it builds bin/miniapiserver and bin/kubectl in the
# repository root and makes miniapiserver's assets in a temporary directory
# (miniapiserver envtest-assets). Given kube-apiserver's own assets (its
# kube-apiserver, etcd and a kubectl), the same suite must pass too.
# Each run's control-plane output is kept under a temporary directory, and
# printed as its path, when the run fails. GO_TEST_FLAGS adds go test flags
# (say GO_TEST_FLAGS=-v). Runs both versions and reports every failure.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "${here}/../.." && pwd)
export GOWORK=off
GO=${GO:-go}

if (( $# > 1 )); then
  echo "usage: $0 [ASSETS_DIR]" >&2
  exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/envtest-run.XXXXXX")
# Keeps the logs of a failed run; the rest goes.
cleanup() { rm -rf "${tmp}/assets"; rmdir "${tmp}/logs" "${tmp}" 2>/dev/null || true; }
trap cleanup EXIT

if (( $# == 1 )); then
  assets=$(cd "$1" && pwd)
else
  echo "--- building bin/miniapiserver and bin/kubectl"
  (
    cd "${root}"
    "${GO}" build -o bin/miniapiserver ./cmd/miniapiserver
    flags=$(GO="${GO}" hack/kubectl-ldflags.sh)
    "${GO}" build -ldflags "${flags}" -o bin/kubectl ./hack/tools/kubectl
  )
  assets=$("${root}/bin/miniapiserver" envtest-assets "${tmp}/assets")
fi
for bin in kube-apiserver etcd kubectl; do
  if [[ ! -x ${assets}/${bin} ]]; then
    echo "${assets}/${bin}: missing or not executable" >&2
    exit 1
  fi
done

# The checkpoint specs need miniapiserver's test controls: on other assets
# (kube-apiserver's), they are skipped, saying why.
ours=
if [[ $(readlink -f "${assets}/kube-apiserver") == */miniapiserver ]]; then
  ours=1
fi

failed=()
# run NAME [GO_TEST_ARGS...]: go test ./... in this module with the assets.
run() {
  local name=$1
  shift
  local logs="${tmp}/logs/${name}" start=${SECONDS}
  echo "--- envtest ${name}: KUBEBUILDER_ASSETS=${assets}"
  # shellcheck disable=SC2086 # GO_TEST_FLAGS is a list of flags.
  if (cd "${here}" && KUBEBUILDER_ASSETS="${assets}" ENVTEST_LOG_DIR="${logs}" MINIAPISERVER_TEST_CONTROLS="${ours}" \
    "${GO}" test -count=1 ${GO_TEST_FLAGS:-} "$@" ./...); then
    echo "--- ok ${name} ($((SECONDS - start))s)"
    rm -rf "${logs}"
  else
    echo "--- FAIL ${name} ($((SECONDS - start))s); control plane output in ${logs}"
    failed+=("${name}")
  fi
}
run controller-runtime-v0.25
run controller-runtime-v0.23 -modfile=go.v0.23.mod

if (( ${#failed[@]} > 0 )); then
  echo "envtest failed: ${failed[*]}"
  exit 1
fi
echo "envtest: ok"
