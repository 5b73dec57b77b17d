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

package endpoints

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// TestUpstreamMessages: endpoints are refused, or not, on create and
// update as kube-apiserver 1.37.2's validation does, in its words
// (registrytest.CompareUpstream has how the cases in testdata/validation
// are made and regenerated).
func TestUpstreamMessages(t *testing.T) {
	registrytest.CompareUpstreamStorage(t, NewStorage, map[string]registrytest.Kind{
		"Endpoints": {Resource: "endpoints", New: func() runtime.Object { return &corev1.Endpoints{} }},
	})
}
