/*
Copyright The miniapiserver Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package kubeapiserver

import (
	"slices"
	"strings"
	"testing"
)

// TestHealthCheckNames: /readyz?verbose and /livez?verbose name the checks
// kube-apiserver 1.37 names for what the server does (its post-start hooks
// in k8s.io/kubernetes pkg/controlplane, and k8s.io/apiserver's checks).
func TestHealthCheckNames(t *testing.T) {
	t.Parallel()
	s := startAPIServer(t, startEtcd(t), newPKI(t))
	hooks := []string{
		"poststarthook/generic-apiserver-start-informers", "poststarthook/start-apiserver-admission-initializer",
		"poststarthook/start-apiextensions-informers", "poststarthook/start-apiextensions-controllers", "poststarthook/crd-informer-synced",
		"poststarthook/storage-readiness", "poststarthook/start-system-namespaces-controller", "poststarthook/bootstrap-controller",
		"poststarthook/start-kubernetes-service-cidr-controller", "poststarthook/start-cluster-authentication-info-controller",
		"poststarthook/start-service-ip-repair-controllers", "poststarthook/start-legacy-token-tracking-controller",
		"poststarthook/start-kube-apiserver-identity-lease-controller",
		"poststarthook/scheduling/bootstrap-system-priority-classes", "poststarthook/rbac/bootstrap-roles",
		"poststarthook/priority-and-fairness-config-consumer", "poststarthook/priority-and-fairness-filter",
		"poststarthook/priority-and-fairness-config-producer",
	}
	for _, tc := range []struct {
		path string
		want []string
	}{
		{path: "/readyz?verbose", want: append([]string{"ping", "log", "etcd", "etcd-readiness", "informer-sync", "shutdown"}, hooks...)},
		{path: "/livez?verbose", want: append([]string{"ping", "log", "etcd"}, hooks...)},
	} {
		body, err := s.admin(t).Discovery().RESTClient().Get().AbsPath(strings.Split(tc.path, "?")[0]).Param("verbose", "").DoRaw(ctx(t))
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		var names []string
		for _, line := range strings.Split(string(body), "\n") {
			if name, ok := strings.CutPrefix(line, "[+]"); ok {
				names = append(names, strings.TrimSuffix(name, " ok"))
			}
		}
		for _, name := range tc.want {
			if !slices.Contains(names, name) {
				t.Errorf("%s lacks kube-apiserver's check %s:\n%s", tc.path, name, body)
			}
		}
	}
}
