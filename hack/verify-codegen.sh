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

# Checks that pkg/generated/openapi/zz_generated.openapi.go is what
# hack/update-codegen.sh generates now, and that every definition it
# references (ref(...) targets and Dependencies) is defined in it.
# Exits 1 on drift or on a dangling reference.

set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${REPO_ROOT}"

GEN_DIR="pkg/generated/openapi"
GEN_FILE="zz_generated.openapi.go"

TMP_DIR="$(mktemp -d "${TMPDIR:-/tmp}/verify-codegen.XXXXXX")"
trap 'rm -rf "${TMP_DIR}"' EXIT

"${REPO_ROOT}/hack/update-codegen.sh" "${TMP_DIR}" >/dev/null

status=0

if [[ ! -f "${GEN_DIR}/doc.go" ]]; then
    echo "ERROR: ${GEN_DIR}/doc.go is missing; run hack/update-codegen.sh" >&2
    status=1
fi

if [[ ! -f "${GEN_DIR}/${GEN_FILE}" ]]; then
    echo "ERROR: ${GEN_DIR}/${GEN_FILE} is missing; run hack/update-codegen.sh" >&2
    status=1
elif ! diff -u "${GEN_DIR}/${GEN_FILE}" "${TMP_DIR}/${GEN_FILE}"; then
    echo "ERROR: ${GEN_DIR}/${GEN_FILE} is out of date (diff above: checked-in vs. freshly generated)." >&2
    echo "       Run hack/update-codegen.sh and commit the result." >&2
    status=1
fi

# Every referenced definition must be a key of the GetOpenAPIDefinitions map.
# Keys look like `corev1.Pod{}.OpenAPIModelName(): schema_...(ref),` (or
# `"k8s.io/...Type": schema_...(ref),` for packages without
# +k8s:openapi-model-package); references appear as ref(<key expr>) and in
# Dependencies: []string{<key expr>, ...}.
file="${TMP_DIR}/${GEN_FILE}"
keys="$(sed -n 's/^\t\t\(.*\): *schema_[A-Za-z0-9_]*(ref),$/\1/p' "${file}" | LC_ALL=C sort -u)"
refs="$(
    {
        grep -oE 'ref\(([A-Za-z0-9_]+\.[A-Za-z0-9_]+\{\}\.OpenAPIModelName\(\)|"[^"]+")\)' "${file}" \
            | sed -E 's/^ref\((.*)\)$/\1/'
        awk '
            /Dependencies: \[\]string\{/ { dep = 1; sub(/.*Dependencies: \[\]string\{/, "") }
            dep {
                line = $0
                if (line ~ /\},?[[:space:]]*$/) { dep = 0; sub(/\},?[[:space:]]*$/, "", line) }
                n = split(line, parts, ",")
                for (i = 1; i <= n; i++) {
                    x = parts[i]; gsub(/^[[:space:]]+|[[:space:]]+$/, "", x)
                    if (x != "") print x
                }
            }' "${file}"
    } | LC_ALL=C sort -u
)"
nkeys="$(grep -c . <<<"${keys}" || true)"
nrefs="$(grep -c . <<<"${refs}" || true)"
if [[ "${nkeys}" -eq 0 || "${nrefs}" -eq 0 ]]; then
    echo "ERROR: could not parse definitions (${nkeys}) or references (${nrefs}) in ${GEN_FILE};" >&2
    echo "       the openapi-gen output format changed, update hack/verify-codegen.sh" >&2
    status=1
fi
missing="$(LC_ALL=C comm -13 <(echo "${keys}") <(echo "${refs}"))"
if [[ -n "${missing}" ]]; then
    echo "ERROR: ${GEN_FILE} references definitions it does not define:" >&2
    sed 's/^/    /' <<<"${missing}" >&2
    echo "       Add the packages declaring them to INPUT_PKGS in hack/update-codegen.sh." >&2
    status=1
fi

if [[ "${status}" -ne 0 ]]; then
    exit 1
fi
echo "${GEN_DIR}/${GEN_FILE} is up to date (${nkeys} definitions, ${nrefs} referenced, none dangling)."
