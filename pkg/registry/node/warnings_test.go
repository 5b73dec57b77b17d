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

package node

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// TestWarnings: as kube-apiserver 1.37, of a removed and a deprecated
// field, and of pod CIDRs in non-canonical forms; a status update warns of
// nothing.
func TestWarnings(t *testing.T) {
	node := registrytest.Modified(validNode(), func(n *corev1.Node) {
		n.Spec.ConfigSource = &corev1.NodeConfigSource{}
		n.Spec.DoNotUseExternalID = "id"
		n.Spec.PodCIDRs = []string{"FD00::/64"}
		n.Spec.PodCIDR = "FD00::/64"
	})
	want := []string{
		"spec.configSource: the feature is removed",
		"spec.externalID: this field is deprecated, and is unused by Kubernetes",
		`spec.podCIDRs[0]: IPv6 CIDR value "FD00::/64" should be in RFC 5952 canonical format ("fd00::/64")`,
	}
	registrytest.CheckWarnings(t, registrytest.REST(t, NewStorage, "nodes"), []registrytest.WarningCase{
		{Name: "create", Obj: node, Want: want},
		{Name: "update", Obj: registrytest.Modified(node, func(n *corev1.Node) { n.Labels = map[string]string{"a": "b"} }), Old: node, Want: want},
		{Name: "none", Obj: validNode()},
	})
}
