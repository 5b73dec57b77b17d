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
	"context"

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

// TestConfigSourceDropped: as upstream's, a node's dynamic kubelet config
// (removed) is dropped on create and from an update of a node without
// it, and kept by an update of one that has it: only then is it warned of.
func TestConfigSourceDropped(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "nodes")
	withSource := func() *corev1.Node {
		return registrytest.Modified(validNode(), func(n *corev1.Node) { n.Spec.ConfigSource = &corev1.NodeConfigSource{} })
	}
	created := withSource()
	store.CreateStrategy.PrepareForCreate(context.Background(), created)
	if created.Spec.ConfigSource != nil {
		t.Errorf("create: configSource %v, want dropped", created.Spec.ConfigSource)
	}
	updated := withSource()
	store.UpdateStrategy.PrepareForUpdate(context.Background(), updated, validNode())
	if updated.Spec.ConfigSource != nil {
		t.Errorf("update of a node without one: configSource %v, want dropped", updated.Spec.ConfigSource)
	}
	kept := withSource()
	store.UpdateStrategy.PrepareForUpdate(context.Background(), kept, withSource())
	if kept.Spec.ConfigSource == nil {
		t.Error("update of a node with one: configSource dropped, want kept")
	}
}
