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
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKubernetesFeatureGates: the persona takes k8s.io/kubernetes' gates
// and client-go's, as kube-apiserver does (kwokctl's --kube-feature-gates
// and envtest suites pass them), and serves; it warns once of those set
// away from their defaults that it does not act on. (An unknown gate stops
// it: TestBadInput.)
func TestKubernetesFeatureGates(t *testing.T) {
	t.Parallel()
	s := startAPIServer(t, startEtcd(t), newPKI(t),
		"--feature-gates=PodCertificateRequest=false,CPUManagerPolicyAlphaOptions=false,WatchListClient=false,APIResponseCompression=false")
	if _, err := s.admin(t).CoreV1().Namespaces().Get(ctx(t), "default", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	const want = "Feature gates PodCertificateRequest=false are kube-apiserver's, not miniapiserver's: it serves as with their defaults"
	if out := s.process.out.String(); strings.Count(out, want) != 1 {
		t.Errorf("got output:\n%s\nwant one line with %q", out, want)
	}
}
