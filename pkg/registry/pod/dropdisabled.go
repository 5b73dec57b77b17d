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

package pod

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// DropDisabledFields is upstream's dropDisabledFields (k8s.io/kubernetes'
// pkg/api/pod) for the fields of spec behind gates off in kube-apiserver
// 1.37 (alpha): a pod's or template's new value loses them unless old, the
// stored one, already has them. The server serves k8s.io/kubernetes'
// gates at their defaults.
func DropDisabledFields(spec, old *corev1.PodSpec) {
	if old == nil || !stopSignalsInUse(old) { // ContainerStopSignals
		visitContainers(spec, nil, func(c *corev1.Container, _ *field.Path) {
			if c.Lifecycle != nil && c.Lifecycle.StopSignal != nil {
				if c.Lifecycle.StopSignal = nil; *c.Lifecycle == (corev1.Lifecycle{}) {
					c.Lifecycle = nil
				}
			}
		})
	}
	if old == nil || !grpcModeInUse(old) { // GRPCContainerProbeTLS
		visitContainers(spec, nil, func(c *corev1.Container, _ *field.Path) {
			for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
				if p != nil && p.GRPC != nil {
					p.GRPC.Mode = nil
				}
			}
		})
	}
	if old == nil || !emptyDirModeInUse(old) { // EmptyDirVolumeMode
		for i := range spec.Volumes {
			if e := spec.Volumes[i].EmptyDir; e != nil {
				e.Mode = nil
			}
		}
	}
	if old == nil || !bindMountOptionsInUse(old) { // VolumeBindMountOptions
		visitContainers(spec, nil, func(c *corev1.Container, _ *field.Path) {
			for j := range c.VolumeMounts {
				c.VolumeMounts[j].BindMountOptions = nil
			}
		})
	}
	if old == nil || !volumeUserFields(old, false) { // AtomicWriteVolumeUserFields
		volumeUserFields(spec, true)
	}
	if old == nil || old.SchedulingGroup == nil { // GenericWorkload
		spec.SchedulingGroup = nil
	}
	if old == nil || len(old.EvictionResponders) == 0 { // EvictionRequestAPI
		spec.EvictionResponders = nil
	}
}

// TemplateDropper returns a registry.SpecAndStatus Drop that drops from
// the pod template template returns what DropDisabledTemplateFields drops.
func TemplateDropper(template func(obj runtime.Object) *corev1.PodTemplateSpec) func(obj, old runtime.Object) {
	return func(obj, old runtime.Object) {
		var oldTemplate *corev1.PodTemplateSpec
		if old != nil {
			oldTemplate = template(old)
		}
		DropDisabledTemplateFields(template(obj), oldTemplate)
	}
}

// DropDisabledTemplateFields is upstream's DropDisabledTemplateFields.
func DropDisabledTemplateFields(template, old *corev1.PodTemplateSpec) {
	if template == nil {
		return
	}
	var oldSpec *corev1.PodSpec
	if old != nil {
		oldSpec = &old.Spec
	}
	DropDisabledFields(&template.Spec, oldSpec)
}

func stopSignalsInUse(spec *corev1.PodSpec) (inUse bool) {
	visitContainers(spec, nil, func(c *corev1.Container, _ *field.Path) {
		inUse = inUse || c.Lifecycle != nil && c.Lifecycle.StopSignal != nil
	})
	return inUse
}

func grpcModeInUse(spec *corev1.PodSpec) (inUse bool) {
	visitContainers(spec, nil, func(c *corev1.Container, _ *field.Path) {
		for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
			inUse = inUse || p != nil && p.GRPC != nil && p.GRPC.Mode != nil
		}
	})
	return inUse
}

func emptyDirModeInUse(spec *corev1.PodSpec) bool {
	for _, v := range spec.Volumes {
		if v.EmptyDir != nil && v.EmptyDir.Mode != nil {
			return true
		}
	}
	return false
}

func bindMountOptionsInUse(spec *corev1.PodSpec) (inUse bool) {
	visitContainers(spec, nil, func(c *corev1.Container, _ *field.Path) {
		for _, m := range c.VolumeMounts {
			inUse = inUse || len(m.BindMountOptions) > 0
		}
	})
	return inUse
}

// volumeUserFields reports whether a volume of spec sets a file's or a
// volume's user (upstream's atomicWriteVolumeUserFieldsInUse), clearing
// them all if clear (its dropDisabledAtomicWriteVolumeUserFields).
func volumeUserFields(spec *corev1.PodSpec, clear bool) (inUse bool) {
	user := func(u **int64) {
		inUse = inUse || *u != nil
		if clear {
			*u = nil
		}
	}
	keys := func(items []corev1.KeyToPath) {
		for i := range items {
			user(&items[i].User)
		}
	}
	files := func(items []corev1.DownwardAPIVolumeFile) {
		for i := range items {
			user(&items[i].User)
		}
	}
	for i := range spec.Volumes {
		switch v := &spec.Volumes[i].VolumeSource; {
		case v.Secret != nil:
			user(&v.Secret.DefaultUser)
			keys(v.Secret.Items)
		case v.ConfigMap != nil:
			user(&v.ConfigMap.DefaultUser)
			keys(v.ConfigMap.Items)
		case v.DownwardAPI != nil:
			user(&v.DownwardAPI.DefaultUser)
			files(v.DownwardAPI.Items)
		case v.Projected != nil:
			user(&v.Projected.DefaultUser)
			for j := range v.Projected.Sources {
				switch s := &v.Projected.Sources[j]; {
				case s.Secret != nil:
					keys(s.Secret.Items)
				case s.DownwardAPI != nil:
					files(s.DownwardAPI.Items)
				case s.ConfigMap != nil:
					keys(s.ConfigMap.Items)
				case s.ServiceAccountToken != nil:
					user(&s.ServiceAccountToken.User)
				case s.ClusterTrustBundle != nil:
					user(&s.ClusterTrustBundle.User)
				case s.PodCertificate != nil:
					user(&s.PodCertificate.User)
				}
			}
		}
	}
	return inUse
}
