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

# Usage: hack/cluster.sh binaries | up [--nodes N] [--name NAME] [--upstream] [-- KWOKCTL_FLAG...] | down [--name NAME]
#
# A test cluster by composition: bin/miniapiserver as kube-apiserver and
# etcd, with the real kube-controller-manager and kube-scheduler (built from
# the module proxy by hack/upstream/build.sh) and kwok's simulated nodes
# (hack/upstream/kwok.sh), brought up by kwokctl's binary runtime, which
# gives them certificates from one CA and the service-account key.
#
#   binaries  builds (or reuses, cached) kube-controller-manager,
#             kube-scheduler, kwok and kwokctl and links them into
#             bin/cluster; prints that directory.
#   up        binaries, then a cluster named NAME (default mini) with N
#             Ready nodes (default 3); prints its kubeconfig's path. With
#             --upstream, kube-apiserver and etcd are upstream's (built by
#             hack/upstream/build.sh), to compare. Flags after -- go to
#             kwokctl create cluster.
#   down      deletes the cluster: its processes stop and its files go.
#
# The cluster's files are under CLUSTER_DIR (default .miniapiserver/cluster);
# nothing is written elsewhere (kwokctl adds its contexts to the kubeconfig
# there, not to ~/.kube/config).
# Needs bin/miniapiserver and bin/kubectl (make build), or the binaries
# $MINIAPISERVER and $KUBECTL name.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${root}/bin/cluster
miniapiserver=${MINIAPISERVER:-${root}/bin/miniapiserver}
export KWOK_WORKDIR=${CLUSTER_DIR:-${root}/.miniapiserver/cluster}
export KWOK_KUBECTL_BINARY=${KUBECTL:-${root}/bin/kubectl}
contexts=${KWOK_WORKDIR}/kubeconfig

usage() {
  sed -n 's/^# Usage: //p' "${BASH_SOURCE[0]}" >&2
  exit 1
}

binaries() {
  local upstream kwok
  mapfile -t upstream < <("${root}/hack/upstream/build.sh" kube-controller-manager kube-scheduler)
  mapfile -t kwok < <("${root}/hack/upstream/kwok.sh")
  mkdir -p "${bin}"
  ln -sf "${upstream[0]}" "${bin}/kube-controller-manager"
  ln -sf "${upstream[1]}" "${bin}/kube-scheduler"
  ln -sf "${kwok[0]}" "${bin}/kwokctl"
  ln -sf "${kwok[1]}" "${bin}/kwok"
  echo "${bin}"
}

cmd=${1:-}
[[ -n ${cmd} ]] || usage
shift
name=mini nodes=3 upstream=false extra=()
while [[ $# -gt 0 ]]; do
  case $1 in
  --name) name=$2 && shift 2 ;;
  --name=*) name=${1#*=} && shift ;;
  --nodes) nodes=$2 && shift 2 ;;
  --nodes=*) nodes=${1#*=} && shift ;;
  --upstream) upstream=true && shift ;;
  --) shift && extra=("$@") && break ;;
  *) usage ;;
  esac
done
[[ ${nodes} =~ ^[0-9]+$ ]] || { echo "cluster.sh: --nodes must be a number, got ${nodes}" >&2; exit 1; }
kubeconfig=${KWOK_WORKDIR}/clusters/${name}/kubeconfig.yaml

case ${cmd} in
binaries) binaries ;;
up)
  binaries >/dev/null
  mkdir -p "${KWOK_WORKDIR}"
  if ${upstream}; then
    assets=$(dirname "$("${root}/hack/upstream/build.sh" | head -n1)")
  else
    # The server's personas, linked to the binary under the cluster's dir.
    assets=$("${miniapiserver}" envtest-assets "${KWOK_WORKDIR}/assets")
  fi
  log=${KWOK_WORKDIR}/create-${name}.log
  start=${SECONDS}
  if ! "${bin}/kwokctl" create cluster --name "${name}" --runtime binary --kubeconfig "${contexts}" \
    --kube-apiserver-binary "${assets}/kube-apiserver" --etcd-binary "${assets}/etcd" \
    --kube-controller-manager-binary "${bin}/kube-controller-manager" \
    --kube-scheduler-binary "${bin}/kube-scheduler" --kwok-controller-binary "${bin}/kwok" \
    --wait 2m "${extra[@]}" >"${log}" 2>&1; then
    cat "${log}" >&2
    exit 1
  fi
  rm -f "${log}"
  if ! out=$("${bin}/kwokctl" scale node --name "${name}" --replicas "${nodes}" 2>&1); then
    echo "${out}" >&2
    exit 1
  fi
  if [[ ${nodes} -gt 0 ]]; then
    "${KWOK_KUBECTL_BINARY}" --kubeconfig "${kubeconfig}" wait --for=condition=Ready node --all --timeout=2m >/dev/null
  fi
  echo "cluster ${name} up in $((SECONDS - start))s with ${nodes} nodes; its logs: ${KWOK_WORKDIR}/clusters/${name}/logs" >&2
  echo "${kubeconfig}"
  ;;
down)
  if [[ -x ${bin}/kwokctl && -d ${KWOK_WORKDIR}/clusters/${name} ]]; then
    if ! out=$("${bin}/kwokctl" delete cluster --name "${name}" --kubeconfig "${contexts}" 2>&1); then
      echo "${out}" >&2
      exit 1
    fi
  fi
  rm -rf "${KWOK_WORKDIR:?}/clusters/${name}"
  ;;
*) usage ;;
esac
