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

# Regenerates pkg/generated/openapi/zz_generated.openapi.go, the OpenAPI
# definitions (GetOpenAPIDefinitions) of the Kubernetes types this server
# serves, with k8s.io/kube-openapi's openapi-gen (a `tool` in go.mod, run
# through `go tool`, so its version is pinned by go.mod/go.sum).
#
# The flags mirror kube::codegen::gen_openapi in
# k8s.io/code-generator/kube_codegen.sh (as used by k8s.io/sample-apiserver).
# No --output-model-name-file is passed: we generate no model-name accessors
# (the input packages live in the read-only module cache and already ship
# their zz_generated.model_name.go). openapi-gen still keys the map by
# <Type>{}.OpenAPIModelName() for packages tagged +k8s:openapi-model-package.
#
# Usage: hack/update-codegen.sh [OUTPUT_DIR]
#   OUTPUT_DIR defaults to pkg/generated/openapi (relative to the repo root);
#   hack/verify-codegen.sh passes a temporary directory.

set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${REPO_ROOT}"

OUTPUT_DIR="${1:-${REPO_ROOT}/pkg/generated/openapi}"
OUTPUT_PKG="github.com/miniapiserver/miniapiserver/pkg/generated/openapi"
OUTPUT_FILE="zz_generated.openapi.go"
BOILERPLATE="${REPO_ROOT}/hack/boilerplate.go.txt"

# Input packages: every package whose types are served or referenced from a
# served type. Every ref() target in the output must have a definition in the
# returned map; hack/verify-codegen.sh checks that.
INPUT_PKGS=(
    k8s.io/api/core/v1
    k8s.io/api/admissionregistration/v1
    k8s.io/api/coordination/v1
    k8s.io/api/apps/v1
    k8s.io/api/authentication/v1
    k8s.io/api/authorization/v1
    k8s.io/api/autoscaling/v1
    k8s.io/api/autoscaling/v2
    k8s.io/api/batch/v1
    k8s.io/api/certificates/v1
    k8s.io/api/discovery/v1
    k8s.io/api/events/v1
    k8s.io/api/flowcontrol/v1
    k8s.io/api/networking/v1
    k8s.io/api/node/v1
    k8s.io/api/policy/v1
    k8s.io/api/rbac/v1
    k8s.io/api/resource/v1
    k8s.io/api/scheduling/v1
    k8s.io/api/scheduling/v1alpha3
    k8s.io/api/storage/v1
    k8s.io/api/storagemigration/v1
    k8s.io/apimachinery/pkg/apis/meta/v1
    k8s.io/apimachinery/pkg/api/resource
    k8s.io/apimachinery/pkg/runtime
    k8s.io/apimachinery/pkg/util/intstr
    k8s.io/apimachinery/pkg/version
    github.com/miniapiserver/miniapiserver/pkg/testcontrols/v1alpha1
)

mkdir -p "${OUTPUT_DIR}"
rm -f "${OUTPUT_DIR}/${OUTPUT_FILE}"

echo "Generating ${OUTPUT_DIR}/${OUTPUT_FILE} from ${#INPUT_PKGS[@]} packages"
# --report-filename /dev/null: API-rule violations in the upstream types are
# not ours to fix; with a real file name openapi-gen would list them there
# (and with the default "-" it prints them and fails).
go tool openapi-gen \
    -v "${KUBE_VERBOSE:-0}" \
    --output-file "${OUTPUT_FILE}" \
    --go-header-file "${BOILERPLATE}" \
    --output-dir "${OUTPUT_DIR}" \
    --output-pkg "${OUTPUT_PKG}" \
    --report-filename /dev/null \
    "${INPUT_PKGS[@]}"

# openapi-gen only writes ${OUTPUT_FILE}; recreate the package doc if it is
# missing (e.g. fresh output directory).
if [[ ! -e "${OUTPUT_DIR}/doc.go" ]]; then
    {
        cat "${BOILERPLATE}"
        echo '// Package openapi holds the generated OpenAPI definitions of the served types (hack/update-codegen.sh writes it).'
        echo 'package openapi'
    } > "${OUTPUT_DIR}/doc.go"
fi
