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

# kwokctl's binary runtime (sigs.k8s.io/kwok, built by hack/upstream/kwok.sh)
# with bin/miniapiserver as its kube-apiserver and etcd: the cluster comes
# up, kubectl answers through it, kwok's nodes become Ready, and it comes
# down leaving no process. Needs bin/miniapiserver and bin/kubectl (make build).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
mapfile -t kwok < <("${root}/hack/upstream/kwok.sh")
kwokctl=${kwok[0]}
kubectl=${root}/bin/kubectl

work=$(mktemp -d)
export KWOK_WORKDIR=${work}/kwok KWOK_KUBECTL_BINARY=${kubectl}
cleanup() {
  "${kwokctl}" delete cluster --name mini >/dev/null 2>&1 || true
  rm -rf "${work}"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for log in "${KWOK_WORKDIR}"/clusters/mini/logs/*.log; do
    echo "--- ${log}" >&2
    tail -n 30 "${log}" >&2
  done
  exit 1
}

assets=$("${root}/bin/miniapiserver" envtest-assets "${work}/assets")
start=$(date +%s%N)
"${kwokctl}" create cluster --name mini --runtime binary \
  --kube-apiserver-binary="${assets}/kube-apiserver" --etcd-binary="${assets}/etcd" \
  --kwok-controller-binary="${kwok[1]}" --disable kube-controller-manager,kube-scheduler \
  --wait 2m >"${work}/create.log" 2>&1 || { cat "${work}/create.log" >&2; fail "kwokctl create cluster"; }
echo "kwokctl create cluster: $((($(date +%s%N) - start) / 1000000)) ms"

kc=(--kubeconfig "${KWOK_WORKDIR}/clusters/mini/kubeconfig.yaml")
"${kubectl}" "${kc[@]}" get ns default -o name | grep -qx namespace/default || fail "kubectl get ns default"
grep -q -- "--authorization-mode=Node,RBAC" "${KWOK_WORKDIR}/clusters/mini/kwok.yaml" || fail "kwokctl did not pass its flags"
"${kwokctl}" scale node --name mini --replicas 3 >/dev/null 2>&1 || fail "kwokctl scale node"
"${kubectl}" "${kc[@]}" wait --for=condition=Ready node --all --timeout=60s >/dev/null || fail "nodes not Ready"
nodes=$("${kubectl}" "${kc[@]}" get nodes -o name | wc -l)
[[ ${nodes} == 3 ]] || fail "got ${nodes} nodes, want 3"
if grep -q '^E' "${KWOK_WORKDIR}/clusters/mini/logs/kube-apiserver.log"; then
  fail "kube-apiserver logged errors"
fi

"${kwokctl}" delete cluster --name mini >/dev/null 2>&1 || fail "kwokctl delete cluster"
if pgrep -f "${work}" >/dev/null; then
  fail "processes left: $(pgrep -af "${work}")"
fi
echo "ok: a kwokctl cluster on miniapiserver: 3 nodes Ready, deleted cleanly"
