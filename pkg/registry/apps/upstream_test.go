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

package apps

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// TestUpstreamMessages: workloads are refused, or not, on create, update
// and status update as kube-apiserver 1.37.2's validation does, in its
// words (registrytest.CompareUpstream has how the cases in
// testdata/validation are made and regenerated).
func TestUpstreamMessages(t *testing.T) {
	kinds := map[string]struct {
		resource string
		new      func() runtime.Object
	}{
		"Deployment":  {"deployments", func() runtime.Object { return &appsv1.Deployment{} }},
		"ReplicaSet":  {"replicasets", func() runtime.Object { return &appsv1.ReplicaSet{} }},
		"StatefulSet": {"statefulsets", func() runtime.Object { return &appsv1.StatefulSet{} }},
		"DaemonSet":   {"daemonsets", func() runtime.Object { return &appsv1.DaemonSet{} }},
	}
	newObj := func(kind string) runtime.Object {
		k, ok := kinds[kind]
		if !ok {
			t.Fatalf("kind %q is not a workload's", kind)
		}
		return k.new()
	}
	registrytest.CompareUpstream(t, newObj, func(t *testing.T, verb registrytest.Verb, old, now runtime.Object) error {
		gvks, _, err := api.Scheme.ObjectKinds(now)
		if err != nil {
			t.Fatal(err)
		}
		return registrytest.WriteUpstreamCase(t, NewStorage, kinds[gvks[0].Kind].resource, verb, old, now)
	})
}
