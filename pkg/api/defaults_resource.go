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

package api

import (
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// addResourceDefaults registers upstream's resource.k8s.io/v1 defaults
// (k8s.io/kubernetes pkg/apis/resource/v1, defaults.go and its generated
// defaulters): a device request allocates an exact count of 1 unless it
// says otherwise, a toleration's operator is Equal, and a taint records
// when it was added.
func addResourceDefaults(s *runtime.Scheme) {
	s.AddTypeDefaultingFunc(&resourcev1.ResourceClaim{}, func(obj any) {
		c := obj.(*resourcev1.ResourceClaim)
		defaultClaimSpec(&c.Spec)
		if c.Status.Allocation != nil {
			for i := range c.Status.Allocation.Devices.Results {
				defaultTolerations(c.Status.Allocation.Devices.Results[i].Tolerations)
			}
		}
	})
	s.AddTypeDefaultingFunc(&resourcev1.ResourceClaimTemplate{}, func(obj any) {
		defaultClaimSpec(&obj.(*resourcev1.ResourceClaimTemplate).Spec.Spec)
	})
	s.AddTypeDefaultingFunc(&resourcev1.ResourceSlice{}, func(obj any) {
		for i := range obj.(*resourcev1.ResourceSlice).Spec.Devices {
			d := &obj.(*resourcev1.ResourceSlice).Spec.Devices[i]
			for j := range d.Taints {
				defaultTaint(&d.Taints[j])
			}
		}
	})
	s.AddTypeDefaultingFunc(&resourcev1.DeviceTaintRule{}, func(obj any) { defaultTaint(&obj.(*resourcev1.DeviceTaintRule).Spec.Taint) })
}

// resourceDefaultedLists are the lists whose items addResourceDefaults defaults.
var resourceDefaultedLists = []runtime.Object{
	&resourcev1.ResourceClaimList{}, &resourcev1.ResourceClaimTemplateList{}, &resourcev1.ResourceSliceList{}, &resourcev1.DeviceTaintRuleList{},
}

func defaultClaimSpec(spec *resourcev1.ResourceClaimSpec) {
	for i := range spec.Devices.Requests {
		r := &spec.Devices.Requests[i]
		if r.Exactly != nil {
			defaultCount(&r.Exactly.AllocationMode, &r.Exactly.Count)
			defaultTolerations(r.Exactly.Tolerations)
		}
		for j := range r.FirstAvailable {
			defaultCount(&r.FirstAvailable[j].AllocationMode, &r.FirstAvailable[j].Count)
			defaultTolerations(r.FirstAvailable[j].Tolerations)
		}
	}
}

func defaultCount(mode *resourcev1.DeviceAllocationMode, count *int64) {
	if *mode == "" {
		*mode = resourcev1.DeviceAllocationModeExactCount
	}
	if *mode == resourcev1.DeviceAllocationModeExactCount && *count == 0 {
		*count = 1
	}
}

func defaultTolerations(tolerations []resourcev1.DeviceToleration) {
	for i := range tolerations {
		if tolerations[i].Operator == "" {
			tolerations[i].Operator = resourcev1.DeviceTolerationOpEqual
		}
	}
}

func defaultTaint(t *resourcev1.DeviceTaint) {
	if t.TimeAdded == nil {
		t.TimeAdded = &metav1.Time{Time: time.Now().Truncate(time.Second)}
	}
}
