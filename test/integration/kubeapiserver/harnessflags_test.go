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

	"github.com/miniapiserver/miniapiserver/pkg/server"
)

// TestHarnessFlags: the persona takes what harnesses pass kube-apiserver
// (kwokctl's --kube-feature-gates and --kube-runtime-config, an envtest
// suite's flags): k8s.io/kubernetes' gates and client-go's, and
// --runtime-config=api/all=true; it serves, and warns once of the gates
// set away from their defaults that it does not act on, and that
// api/all=true serves no more than it serves (which is what
// server.ServedGroupVersions says). An unknown gate, or an API turned off,
// stops it (TestBadInput).
func TestHarnessFlags(t *testing.T) {
	t.Parallel()
	s := startAPIServer(t, startEtcd(t), newPKI(t), "--runtime-config=api/all=true",
		"--feature-gates=PodCertificateRequest=false,CPUManagerPolicyAlphaOptions=false,WatchListClient=false,APIResponseCompression=false")
	groups, err := s.admin(t).Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range groups.Groups {
		for _, v := range g.Versions {
			got = append(got, v.GroupVersion)
		}
	}
	var want []string
	for _, gv := range server.ServedGroupVersions() {
		want = append(want, gv.String())
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("discovery's group versions:\n%q\nwant server.ServedGroupVersions():\n%q", got, want)
	}
	out := s.process.out.String()
	for _, want := range []string{
		"Feature gates PodCertificateRequest=false are kube-apiserver's, not miniapiserver's: it serves as with their defaults",
		"--runtime-config api/all=true: kube-apiserver's alpha and beta APIs that miniapiserver does not serve stay unserved",
	} {
		if strings.Count(out, want) != 1 {
			t.Errorf("got output:\n%s\nwant one line with %q", out, want)
		}
	}
}
