#!/usr/bin/env bash
# Prints the -ldflags that stamp bin/kubectl (hack/tools/kubectl) with the
# version of the k8s.io/kubectl module in go.mod, as Kubernetes' release build
# does: module v0.37.2 is kubectl v1.37.2. Unstamped, kubectl reports
# "v0.0.0-master+$Format:%H$" and `kubectl version` exits 1, unable to parse it.
# The Makefile and test/integration build kubectl with these flags.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

module=$(${GO:-go} list -m -f '{{.Version}}' k8s.io/kubectl)
if [[ ! ${module} =~ ^v0\.([0-9]+)\.[0-9]+$ ]]; then
  echo "k8s.io/kubectl is at ${module}, want a release v0.MINOR.PATCH" >&2
  exit 1
fi
version="v1.${module#v0.}"
minor=${BASH_REMATCH[1]}
commit=$(git rev-parse HEAD 2>/dev/null || true)
# The commit's date, not the clock's, so that an unchanged tree links nothing anew.
date=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null || true)

flags=()
for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
  flags+=("-X ${pkg}.gitVersion=${version}" "-X ${pkg}.gitMajor=1" "-X ${pkg}.gitMinor=${minor}"
    "-X ${pkg}.gitCommit=${commit}" "-X ${pkg}.buildDate=${date}")
done
echo "${flags[*]}"
