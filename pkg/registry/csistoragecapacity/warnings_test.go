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

package csistoragecapacity

import (
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// TestWarnings: as kube-apiserver 1.37, of deprecated node labels in the
// node topology.
func TestWarnings(t *testing.T) {
	capacity := registrytest.Modified(validCapacity(), func(c *storagev1.CSIStorageCapacity) {
		c.NodeTopology = &metav1.LabelSelector{
			MatchLabels:      map[string]string{"failure-domain.beta.kubernetes.io/zone": "a"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "beta.kubernetes.io/arch", Operator: metav1.LabelSelectorOpExists}},
		}
	})
	want := []string{
		`nodeTopology.matchExpressions[0].key: beta.kubernetes.io/arch is deprecated since v1.14; use "kubernetes.io/arch" instead`,
		`nodeTopology.matchLabels.failure-domain.beta.kubernetes.io/zone: deprecated since v1.17; use "topology.kubernetes.io/zone" instead`,
	}
	registrytest.CheckWarnings(t, registrytest.REST(t, NewStorage, "csistoragecapacities"), []registrytest.WarningCase{
		{Name: "create", Obj: capacity, Want: want},
		{Name: "update", Obj: capacity, Old: capacity, Want: want},
		{Name: "none", Obj: validCapacity()},
	})
}
