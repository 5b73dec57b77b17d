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

package dra

import (
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// TestUpstreamMessages: device classes, device taint rules, resource claims,
// resource claim templates and resource slices are refused, or not, on
// create, update and status update as kube-apiserver 1.37.2's validation
// does, in its words (registrytest.CompareUpstream has how the cases in
// testdata/validation are made and regenerated).
func TestUpstreamMessages(t *testing.T) {
	registrytest.CompareUpstreamStorage(t, NewStorage, map[string]registrytest.Kind{
		"DeviceClass":           {Resource: "deviceclasses", New: func() runtime.Object { return &resourcev1.DeviceClass{} }},
		"DeviceTaintRule":       {Resource: "devicetaintrules", New: func() runtime.Object { return &resourcev1.DeviceTaintRule{} }},
		"ResourceClaim":         {Resource: "resourceclaims", New: func() runtime.Object { return &resourcev1.ResourceClaim{} }},
		"ResourceClaimTemplate": {Resource: "resourceclaimtemplates", New: func() runtime.Object { return &resourcev1.ResourceClaimTemplate{} }},
		"ResourceSlice":         {Resource: "resourceslices", New: func() runtime.Object { return &resourcev1.ResourceSlice{} }},
	})
}
