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
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func validTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "app", Image: "nginx:1.25"},
			{Name: "sidecar", Image: "envoy:1"},
		}},
	}
}

var objectMeta = metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1", ResourceVersion: "1", Generation: 1}

// The valid* objects are defaulted (as decoding does) and pass validation.

func validDeployment() *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: *objectMeta.DeepCopy(),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: validTemplate(),
		},
	}
	api.Scheme.Default(d)
	return d
}

func validStatefulSet() *appsv1.StatefulSet {
	ss := &appsv1.StatefulSet{
		ObjectMeta: *objectMeta.DeepCopy(),
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To[int32](3),
			ServiceName: "web",
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template:    validTemplate(),
		},
	}
	api.Scheme.Default(ss)
	return ss
}

func validDaemonSet() *appsv1.DaemonSet {
	ds := &appsv1.DaemonSet{
		ObjectMeta: *objectMeta.DeepCopy(),
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: validTemplate(),
		},
	}
	api.Scheme.Default(ds)
	return ds
}

func validReplicaSet() *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{
		ObjectMeta: *objectMeta.DeepCopy(),
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: validTemplate(),
		},
	}
	api.Scheme.Default(rs)
	return rs
}

// parts are pointers into the spec fields every workload shares.
type parts struct {
	replicas **int32 // nil for DaemonSets
	selector **metav1.LabelSelector
	template *corev1.PodTemplateSpec
}

// kind is one of the four workloads, for tests that run on each.
type kind struct {
	resource string
	valid    func() runtime.Object
	parts    func(obj runtime.Object) parts
	// status sets a non-empty status on obj.
	status func(obj runtime.Object)
	scale  bool
}

var kinds = []kind{
	{
		resource: "deployments", scale: true,
		valid: func() runtime.Object { return validDeployment() },
		parts: func(obj runtime.Object) parts {
			d := obj.(*appsv1.Deployment)
			return parts{&d.Spec.Replicas, &d.Spec.Selector, &d.Spec.Template}
		},
		status: func(obj runtime.Object) {
			obj.(*appsv1.Deployment).Status = appsv1.DeploymentStatus{Replicas: 2, ReadyReplicas: 1, ObservedGeneration: 1}
		},
	},
	{
		resource: "statefulsets", scale: true,
		valid: func() runtime.Object { return validStatefulSet() },
		parts: func(obj runtime.Object) parts {
			ss := obj.(*appsv1.StatefulSet)
			return parts{&ss.Spec.Replicas, &ss.Spec.Selector, &ss.Spec.Template}
		},
		status: func(obj runtime.Object) {
			obj.(*appsv1.StatefulSet).Status = appsv1.StatefulSetStatus{Replicas: 2, ReadyReplicas: 1, ObservedGeneration: 1}
		},
	},
	{
		resource: "daemonsets",
		valid:    func() runtime.Object { return validDaemonSet() },
		parts: func(obj runtime.Object) parts {
			ds := obj.(*appsv1.DaemonSet)
			return parts{nil, &ds.Spec.Selector, &ds.Spec.Template}
		},
		status: func(obj runtime.Object) {
			obj.(*appsv1.DaemonSet).Status = appsv1.DaemonSetStatus{DesiredNumberScheduled: 2, NumberReady: 1, ObservedGeneration: 1}
		},
	},
	{
		resource: "replicasets", scale: true,
		valid: func() runtime.Object { return validReplicaSet() },
		parts: func(obj runtime.Object) parts {
			rs := obj.(*appsv1.ReplicaSet)
			return parts{&rs.Spec.Replicas, &rs.Spec.Selector, &rs.Spec.Template}
		},
		status: func(obj runtime.Object) {
			obj.(*appsv1.ReplicaSet).Status = appsv1.ReplicaSetStatus{Replicas: 2, ReadyReplicas: 1, ObservedGeneration: 1}
		},
	},
}

// statusOf returns the Status field of a workload, for comparisons.
func statusOf(obj runtime.Object) any {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return o.Status
	case *appsv1.StatefulSet:
		return o.Status
	case *appsv1.DaemonSet:
		return o.Status
	case *appsv1.ReplicaSet:
		return o.Status
	}
	panic("not a workload")
}

func TestStorageMap(t *testing.T) {
	storages, err := NewStorage(registrytest.NewMemStorage().Options("apps"))
	if err != nil {
		t.Fatalf("NewStorage: got error %v, want none", err)
	}
	var got []string
	for name := range storages {
		got = append(got, name)
	}
	slices.Sort(got)
	want := []string{
		"daemonsets", "daemonsets/status",
		"deployments", "deployments/scale", "deployments/status",
		"replicasets", "replicasets/scale", "replicasets/status",
		"statefulsets", "statefulsets/scale", "statefulsets/status",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("storage keys (-want +got):\n%s", diff)
	}
	for _, name := range want {
		var ok bool
		switch s := storages[name]; {
		case strings.HasSuffix(name, "/status"):
			_, ok = s.(*registry.StatusREST)
		case strings.HasSuffix(name, "/scale"):
			_, ok = s.(*registry.ScaleREST)
		default:
			_, ok = s.(*registry.REST)
		}
		if !ok {
			t.Errorf("storage %q: got %T, want the REST, StatusREST or ScaleREST its name says", name, storages[name])
		}
	}
	for _, name := range []string{"deployments/scale", "statefulsets/scale", "replicasets/scale"} {
		gvk := storages[name].(*registry.ScaleREST).GroupVersionKind(appsv1.SchemeGroupVersion)
		if want := autoscalingv1.SchemeGroupVersion.WithKind("Scale"); gvk != want {
			t.Errorf("%s GroupVersionKind: got %v, want %v", name, gvk, want)
		}
	}
}

func TestStorage(t *testing.T) {
	equal := cmp.Comparer(func(a, b *fieldpath.Set) bool { return a.Equals(b) })
	tests := []struct {
		resource   string
		shortNames []string
		newObj     runtime.Object
		newList    runtime.Object
	}{
		{resource: "deployments", shortNames: []string{"deploy"}, newObj: &appsv1.Deployment{}, newList: &appsv1.DeploymentList{}},
		{resource: "statefulsets", shortNames: []string{"sts"}, newObj: &appsv1.StatefulSet{}, newList: &appsv1.StatefulSetList{}},
		{resource: "daemonsets", shortNames: []string{"ds"}, newObj: &appsv1.DaemonSet{}, newList: &appsv1.DaemonSetList{}},
		{resource: "replicasets", shortNames: []string{"rs"}, newObj: &appsv1.ReplicaSet{}, newList: &appsv1.ReplicaSetList{}},
	}
	for _, tt := range tests {
		t.Run(tt.resource, func(t *testing.T) {
			store := registrytest.REST(t, NewStorage, tt.resource)
			if diff := cmp.Diff(tt.shortNames, store.ShortNames()); diff != "" {
				t.Errorf("ShortNames (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"all"}, store.Categories()); diff != "" {
				t.Errorf("Categories (-want +got):\n%s", diff)
			}
			if !store.NamespaceScoped() {
				t.Errorf("NamespaceScoped: got false, want true")
			}
			if store.UpdateStrategy.AllowCreateOnUpdate(context.Background()) {
				t.Errorf("AllowCreateOnUpdate: got true, want false")
			}
			if got, want := store.DefaultQualifiedResource, appsv1.Resource(tt.resource); got != want {
				t.Errorf("DefaultQualifiedResource: got %v, want %v", got, want)
			}
			if got, want := store.New(), tt.newObj; cmp.Diff(want, got) != "" {
				t.Errorf("New: got %T, want %T", got, want)
			}
			if got, want := store.NewList(), tt.newList; cmp.Diff(want, got) != "" {
				t.Errorf("NewList: got %T, want %T", got, want)
			}
			if diff := cmp.Diff(registry.Fieldpaths("apps/v1", "status"), store.GetResetFields(), equal); diff != "" {
				t.Errorf("reset fields (-want +got):\n%s", diff)
			}
			storages, err := NewStorage(registrytest.NewMemStorage().Options(tt.resource))
			if err != nil {
				t.Fatalf("NewStorage: got error %v, want none", err)
			}
			status := storages[tt.resource+"/status"].(*registry.StatusREST)
			if diff := cmp.Diff(registry.Fieldpaths("apps/v1", "spec", "metadata.labels"), status.GetResetFields(), equal); diff != "" {
				t.Errorf("status reset fields (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTemplateDropsDisabledFields: a workload's pod template loses the
// fields behind kube-apiserver 1.37's alpha gates on create, as upstream's
// DropDisabledTemplateFields, before its generation is counted.
func TestTemplateDropsDisabledFields(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "deployments")
	d := validDeployment()
	d.Spec.Template.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{StopSignal: ptr.To(corev1.SIGTERM)}
	store.CreateStrategy.PrepareForCreate(context.Background(), d)
	if l := d.Spec.Template.Spec.Containers[0].Lifecycle; l != nil {
		t.Errorf("created: lifecycle %+v, want the stop signal dropped", l)
	}
	old := validDeployment()
	updated := old.DeepCopy()
	updated.Spec.Template.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{StopSignal: ptr.To(corev1.SIGTERM)}
	store.UpdateStrategy.PrepareForUpdate(context.Background(), updated, old)
	if updated.Spec.Template.Spec.Containers[0].Lifecycle != nil || updated.Generation != old.Generation {
		t.Errorf("updated: lifecycle %+v, generation %d, want the stop signal dropped and no change counted (%d)",
			updated.Spec.Template.Spec.Containers[0].Lifecycle, updated.Generation, old.Generation)
	}
}
