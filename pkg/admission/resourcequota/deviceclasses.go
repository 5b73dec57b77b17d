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

package resourcequota

import (
	"cmp"
	"sync"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/client-go/tools/cache"
)

// deviceClasses is k8s.io/dynamic-resource-allocation's
// ExtendedResourceCache, fed by a DeviceClass informer: which class an
// extended resource name means (its explicit one, or
// deviceclass.resource.kubernetes.io/<class>), and each class's
// explicit extended resource.
type deviceClasses struct {
	// mu guards byResource and byClass.
	mu         sync.RWMutex
	byResource map[corev1.ResourceName]*resourcev1.DeviceClass
	byClass    map[string]string
}

var _ cache.ResourceEventHandler = (*deviceClasses)(nil)

func newDeviceClasses() *deviceClasses {
	return &deviceClasses{byResource: map[corev1.ResourceName]*resourcev1.DeviceClass{}, byClass: map[string]string{}}
}

func (d *deviceClasses) deviceClass(name corev1.ResourceName) *resourcev1.DeviceClass {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.byResource[name]
}

func (d *deviceClasses) extendedResource(className string) string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.byClass[className]
}

func (d *deviceClasses) OnAdd(obj any, _ bool) {
	if class, ok := obj.(*resourcev1.DeviceClass); ok {
		d.update(class, nil)
	}
}

func (d *deviceClasses) OnUpdate(old, obj any) {
	o, ok1 := old.(*resourcev1.DeviceClass)
	n, ok2 := obj.(*resourcev1.DeviceClass)
	if ok1 && ok2 {
		d.update(n, o)
	}
}

func (d *deviceClasses) OnDelete(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	class, ok := obj.(*resourcev1.DeviceClass)
	if !ok {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.byResource, corev1.ResourceName(resourcev1.ResourceDeviceClassPrefix+class.Name))
	if class.Spec.ExtendedResourceName != nil {
		delete(d.byResource, corev1.ResourceName(*class.Spec.ExtendedResourceName))
	}
	delete(d.byClass, class.Name)
}

// update is upstream's updateResourceName2class and
// updateClass2ResourceName: of two classes naming the same extended
// resource, the newer (then the first by name) keeps it, and the other's
// names are then not updated at all.
func (d *deviceClasses) update(class, old *resourcev1.DeviceClass) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if class.Spec.ExtendedResourceName != nil {
		d.byClass[class.Name] = *class.Spec.ExtendedResourceName
	} else {
		delete(d.byClass, class.Name)
	}
	if class.Spec.ExtendedResourceName != nil {
		if other := d.byResource[corev1.ResourceName(*class.Spec.ExtendedResourceName)]; other != nil {
			switch cmp.Compare(class.CreationTimestamp.UnixNano(), other.CreationTimestamp.UnixNano()) {
			case -1:
				return
			case 0:
				if class.Name >= other.Name {
					return
				}
			}
		}
	}
	if old != nil {
		delete(d.byResource, corev1.ResourceName(resourcev1.ResourceDeviceClassPrefix+old.Name))
		if old.Spec.ExtendedResourceName != nil {
			delete(d.byResource, corev1.ResourceName(*old.Spec.ExtendedResourceName))
		}
	}
	if class.Spec.ExtendedResourceName != nil {
		d.byResource[corev1.ResourceName(*class.Spec.ExtendedResourceName)] = class
	}
	d.byResource[corev1.ResourceName(resourcev1.ResourceDeviceClassPrefix+class.Name)] = class
}
