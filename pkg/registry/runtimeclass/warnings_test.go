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

package runtimeclass

import (
	"testing"

	nodev1 "k8s.io/api/node/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// TestWarnings: as kube-apiserver 1.37, of deprecated node labels in the
// scheduling's node selector (at the selector's path).
func TestWarnings(t *testing.T) {
	class := registrytest.Modified(validClass(), func(rc *nodev1.RuntimeClass) {
		rc.Scheduling.NodeSelector = map[string]string{"beta.kubernetes.io/os": "linux", "runtime": "gvisor"}
	})
	want := []string{`scheduling.nodeSelector: deprecated since v1.14; use "kubernetes.io/os" instead`}
	registrytest.CheckWarnings(t, registrytest.REST(t, NewStorage, "runtimeclasses"), []registrytest.WarningCase{
		{Name: "create", Obj: class, Want: want},
		{Name: "update", Obj: class, Old: class, Want: want},
		{Name: "none", Obj: validClass()},
	})
}
