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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
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

func TestPrepareForCreate(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.resource, func(t *testing.T) {
			strategy := registrytest.REST(t, NewStorage, k.resource).CreateStrategy
			obj := k.valid()
			k.status(obj)
			obj.(metav1.Object).SetGeneration(7)
			want := k.valid()
			strategy.PrepareForCreate(context.Background(), obj)
			if diff := cmp.Diff(statusOf(k.valid()), statusOf(obj)); diff != "" {
				t.Errorf("status after PrepareForCreate (-want empty +got):\n%s", diff)
			}
			if got := obj.(metav1.Object).GetGeneration(); got != 1 {
				t.Errorf("generation after PrepareForCreate: got %d, want 1", got)
			}
			// Nothing else changes.
			obj.(metav1.Object).SetGeneration(want.(metav1.Object).GetGeneration())
			if diff := cmp.Diff(want, obj); diff != "" {
				t.Errorf("object after PrepareForCreate, but for status and generation (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrepareForUpdate(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.resource, func(t *testing.T) {
			strategy := registrytest.REST(t, NewStorage, k.resource).UpdateStrategy
			old := k.valid()
			k.status(old)
			old.(metav1.Object).SetGeneration(4)
			tests := []struct {
				name           string
				mutate         func(obj runtime.Object)
				wantGeneration int64
			}{
				{name: "no change", mutate: func(runtime.Object) {}, wantGeneration: 4},
				{
					name:           "labels change: generation kept",
					mutate:         func(obj runtime.Object) { obj.(metav1.Object).SetLabels(map[string]string{"a": "b"}) },
					wantGeneration: 4,
				},
				{
					name:           "template image changes: generation bumped",
					mutate:         func(obj runtime.Object) { k.parts(obj).template.Spec.Containers[0].Image = "nginx:1.26" },
					wantGeneration: 5,
				},
				{
					name: "template labels change: generation bumped",
					mutate: func(obj runtime.Object) {
						k.parts(obj).template.Labels = map[string]string{"app": "web", "v": "2"}
					},
					wantGeneration: 5,
				},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					obj := old.DeepCopyObject()
					// A client-written status is dropped.
					switch o := obj.(type) {
					case *appsv1.Deployment:
						o.Status = appsv1.DeploymentStatus{Replicas: 9}
					case *appsv1.StatefulSet:
						o.Status = appsv1.StatefulSetStatus{Replicas: 9}
					case *appsv1.DaemonSet:
						o.Status = appsv1.DaemonSetStatus{NumberReady: 9}
					case *appsv1.ReplicaSet:
						o.Status = appsv1.ReplicaSetStatus{Replicas: 9}
					}
					tt.mutate(obj)
					strategy.PrepareForUpdate(context.Background(), obj, old)
					if diff := cmp.Diff(statusOf(old), statusOf(obj)); diff != "" {
						t.Errorf("status after PrepareForUpdate (-want old +got):\n%s", diff)
					}
					if got := obj.(metav1.Object).GetGeneration(); got != tt.wantGeneration {
						t.Errorf("generation after PrepareForUpdate: got %d, want %d", got, tt.wantGeneration)
					}
				})
			}
		})
	}
}

// TestPrepareForUpdateReplicasBumpGeneration: a scale is a spec change.
func TestPrepareForUpdateReplicasBumpGeneration(t *testing.T) {
	for _, k := range kinds {
		if !k.scale {
			continue
		}
		t.Run(k.resource, func(t *testing.T) {
			strategy := registrytest.REST(t, NewStorage, k.resource).UpdateStrategy
			old := k.valid()
			obj := registrytest.Modified(old, func(o runtime.Object) { *k.parts(o).replicas = ptr.To[int32](5) })
			strategy.PrepareForUpdate(context.Background(), obj, old)
			if got := obj.(metav1.Object).GetGeneration(); got != 2 {
				t.Errorf("generation after a replicas change: got %d, want 2", got)
			}
		})
	}
}

// TestDeploymentAnnotationChangeBumpsGeneration: upstream's deployment
// strategy bumps metadata.generation when annotations change too, "because
// annotations are copied from deployments to their replica sets"
// (pkg/registry/apps/deployment/strategy.go, PrepareForUpdate). The other
// workloads bump it on spec changes only.
func TestDeploymentAnnotationChangeBumpsGeneration(t *testing.T) {
	tests := []struct {
		resource       string
		wantGeneration int64
	}{
		{resource: "deployments", wantGeneration: 2},
		{resource: "statefulsets", wantGeneration: 1},
		{resource: "daemonsets", wantGeneration: 1},
		{resource: "replicasets", wantGeneration: 1},
	}
	for _, tt := range tests {
		t.Run(tt.resource, func(t *testing.T) {
			var k kind
			for _, k = range kinds {
				if k.resource == tt.resource {
					break
				}
			}
			strategy := registrytest.REST(t, NewStorage, tt.resource).UpdateStrategy
			old := k.valid()
			obj := registrytest.Modified(old, func(o runtime.Object) {
				o.(metav1.Object).SetAnnotations(map[string]string{"example.com/note": "x"})
			})
			strategy.PrepareForUpdate(context.Background(), obj, old)
			if got := obj.(metav1.Object).GetGeneration(); got != tt.wantGeneration {
				t.Errorf("generation after an annotation change: got %d, want %d", got, tt.wantGeneration)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		// mutate changes a valid object; skip says the case does not apply.
		mutate func(p parts)
		skip   func(p parts) bool
		want   []string
	}{
		{name: "valid", mutate: func(parts) {}, want: []string{}},
		{
			name:   "negative replicas",
			mutate: func(p parts) { *p.replicas = ptr.To[int32](-1) },
			skip:   func(p parts) bool { return p.replicas == nil },
			want:   []string{"spec.replicas: Invalid value"},
		},
		{
			name:   "zero replicas",
			mutate: func(p parts) { *p.replicas = ptr.To[int32](0) },
			skip:   func(p parts) bool { return p.replicas == nil },
			want:   []string{},
		},
		{
			name:   "missing selector",
			mutate: func(p parts) { *p.selector = nil },
			want:   []string{"spec.selector: Required value"},
		},
		{
			name:   "empty selector",
			mutate: func(p parts) { *p.selector = &metav1.LabelSelector{} },
			want:   []string{"spec.selector: Invalid value"},
		},
		{
			name:   "selector that does not match the template's labels",
			mutate: func(p parts) { *p.selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}} },
			want:   []string{"spec.template.metadata.labels: Invalid value"},
		},
		{
			name: "selector by expression that matches",
			mutate: func(p parts) {
				*p.selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "api"}},
				}}
			},
			want: []string{},
		},
		{
			name:   "template without labels",
			mutate: func(p parts) { p.template.Labels = nil },
			want:   []string{"spec.template.metadata.labels: Invalid value"},
		},
		{
			name:   "restartPolicy OnFailure",
			mutate: func(p parts) { p.template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure },
			want:   []string{"spec.template.spec.restartPolicy: Unsupported value"},
		},
		{
			name:   "restartPolicy Never",
			mutate: func(p parts) { p.template.Spec.RestartPolicy = corev1.RestartPolicyNever },
			want:   []string{"spec.template.spec.restartPolicy: Unsupported value"},
		},
		{
			name:   "no containers",
			mutate: func(p parts) { p.template.Spec.Containers = nil },
			want:   []string{"spec.template.spec.containers: Required value"},
		},
		{
			name:   "container without an image",
			mutate: func(p parts) { p.template.Spec.Containers[1].Image = "" },
			want:   []string{"spec.template.spec.containers[1].image: Required value"},
		},
	}
	for _, k := range kinds {
		t.Run(k.resource, func(t *testing.T) {
			strategy := registrytest.REST(t, NewStorage, k.resource).CreateStrategy
			for _, tt := range tests {
				obj := k.valid()
				if tt.skip != nil && tt.skip(k.parts(obj)) {
					continue
				}
				t.Run(tt.name, func(t *testing.T) {
					tt.mutate(k.parts(obj))
					got := registrytest.ErrorPaths(strategy.Validate(context.Background(), obj))
					if diff := cmp.Diff(tt.want, got); diff != "" {
						t.Errorf("Validate errors (-want +got):\n%s", diff)
					}
				})
			}
		})
	}
}

func TestValidateDeploymentStrategy(t *testing.T) {
	rollingUpdate := func(maxUnavailable, maxSurge intstr.IntOrString) appsv1.DeploymentStrategy {
		return appsv1.DeploymentStrategy{
			Type:          appsv1.RollingUpdateDeploymentStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &maxUnavailable, MaxSurge: &maxSurge},
		}
	}
	tests := []struct {
		name     string
		strategy appsv1.DeploymentStrategy
		want     []string
	}{
		{name: "defaulted rolling update (25%/25%)", strategy: validDeployment().Spec.Strategy, want: []string{}},
		{name: "Recreate", strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}, want: []string{}},
		{
			name: "Recreate with rollingUpdate",
			strategy: appsv1.DeploymentStrategy{
				Type:          appsv1.RecreateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: ptr.To(intstr.FromInt32(1))},
			},
			want: []string{"spec.strategy.rollingUpdate: Forbidden"},
		},
		{
			name:     "maxSurge and maxUnavailable 0",
			strategy: rollingUpdate(intstr.FromInt32(0), intstr.FromInt32(0)),
			want:     []string{"spec.strategy.rollingUpdate.maxUnavailable: Invalid value"},
		},
		{
			name:     "maxSurge and maxUnavailable 0%",
			strategy: rollingUpdate(intstr.FromString("0%"), intstr.FromString("0%")),
			want:     []string{"spec.strategy.rollingUpdate.maxUnavailable: Invalid value"},
		},
		{
			name:     "maxUnavailable 0, maxSurge 1",
			strategy: rollingUpdate(intstr.FromInt32(0), intstr.FromInt32(1)),
			want:     []string{},
		},
		{
			name:     "maxUnavailable 10%, maxSurge 0",
			strategy: rollingUpdate(intstr.FromString("10%"), intstr.FromInt32(0)),
			want:     []string{},
		},
		{
			name:     "unknown type",
			strategy: appsv1.DeploymentStrategy{Type: "BlueGreen"},
			want:     []string{"spec.strategy.type: Unsupported value"},
		},
	}
	store := registrytest.REST(t, NewStorage, "deployments")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := registrytest.Modified(validDeployment(), func(d *appsv1.Deployment) { d.Spec.Strategy = tt.strategy })
			got := registrytest.ErrorPaths(store.CreateStrategy.Validate(context.Background(), d))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate errors (-want +got):\n%s", diff)
			}
			// The same checks run on update.
			got = registrytest.ErrorPaths(store.UpdateStrategy.ValidateUpdate(context.Background(), d, validDeployment()))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(p parts)
		skip   func(p parts) bool
		want   []string
	}{
		{name: "no change", mutate: func(parts) {}, want: []string{}},
		{
			name:   "replicas may change",
			mutate: func(p parts) { *p.replicas = ptr.To[int32](10) },
			skip:   func(p parts) bool { return p.replicas == nil },
			want:   []string{},
		},
		{
			name:   "template may change",
			mutate: func(p parts) { p.template.Spec.Containers[0].Image = "nginx:1.26" },
			want:   []string{},
		},
		{
			name: "selector may not change",
			mutate: func(p parts) {
				*p.selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "tier": "front"}}
				p.template.Labels = map[string]string{"app": "web", "tier": "front"}
			},
			want: []string{"spec.selector: Invalid value"},
		},
		{
			name:   "selector may not be removed",
			mutate: func(p parts) { *p.selector = nil },
			want:   []string{"spec.selector: Invalid value", "spec.selector: Required value"},
		},
		{
			name:   "the new object is validated",
			mutate: func(p parts) { p.template.Spec.RestartPolicy = corev1.RestartPolicyNever },
			want:   []string{"spec.template.spec.restartPolicy: Unsupported value"},
		},
	}
	for _, k := range kinds {
		t.Run(k.resource, func(t *testing.T) {
			strategy := registrytest.REST(t, NewStorage, k.resource).UpdateStrategy
			for _, tt := range tests {
				old, obj := k.valid(), k.valid()
				if tt.skip != nil && tt.skip(k.parts(obj)) {
					continue
				}
				t.Run(tt.name, func(t *testing.T) {
					tt.mutate(k.parts(obj))
					got := registrytest.ErrorPaths(strategy.ValidateUpdate(context.Background(), obj, old))
					if diff := cmp.Diff(tt.want, got); diff != "" {
						t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
					}
				})
			}
		})
	}
}

func TestValidateStatefulSetUpdate(t *testing.T) {
	claim := corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"}}
	tests := []registrytest.Mutation[*appsv1.StatefulSet]{
		{Name: "replicas", Mutate: func(ss *appsv1.StatefulSet) { ss.Spec.Replicas = ptr.To[int32](0) }, Want: []string{}},
		{Name: "template", Mutate: func(ss *appsv1.StatefulSet) { ss.Spec.Template.Spec.Containers[0].Image = "nginx:2" }, Want: []string{}},
		{
			Name: "updateStrategy",
			Mutate: func(ss *appsv1.StatefulSet) {
				ss.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
			},
			Want: []string{},
		},
		{Name: "minReadySeconds", Mutate: func(ss *appsv1.StatefulSet) { ss.Spec.MinReadySeconds = 10 }, Want: []string{}},
		{Name: "revisionHistoryLimit", Mutate: func(ss *appsv1.StatefulSet) { ss.Spec.RevisionHistoryLimit = ptr.To[int32](2) }, Want: []string{}},
		{
			Name: "ordinals",
			Mutate: func(ss *appsv1.StatefulSet) {
				ss.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: 1}
			},
			Want: []string{},
		},
		{
			Name: "persistentVolumeClaimRetentionPolicy",
			Mutate: func(ss *appsv1.StatefulSet) {
				ss.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
			},
			Want: []string{},
		},
		{Name: "serviceName", Mutate: func(ss *appsv1.StatefulSet) { ss.Spec.ServiceName = "other" }, Want: []string{"spec.serviceName: Invalid value"}},
		{
			Name:   "podManagementPolicy",
			Mutate: func(ss *appsv1.StatefulSet) { ss.Spec.PodManagementPolicy = appsv1.ParallelPodManagement },
			Want:   []string{"spec.podManagementPolicy: Invalid value"},
		},
		{
			Name:   "volumeClaimTemplates",
			Mutate: func(ss *appsv1.StatefulSet) { ss.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{claim} },
			Want:   []string{"spec.volumeClaimTemplates: Invalid value"},
		},
		{
			Name: "selector, serviceName and replicas: an error for each immutable field",
			Mutate: func(ss *appsv1.StatefulSet) {
				ss.Spec.ServiceName = "other"
				ss.Spec.Replicas = ptr.To[int32](1)
				ss.Spec.Selector.MatchLabels["tier"] = "x"
				ss.Spec.Template.Labels["tier"] = "x"
			},
			Want: []string{"spec.selector: Invalid value", "spec.serviceName: Invalid value"},
		},
	}
	strategy := registrytest.REST(t, NewStorage, "statefulsets").UpdateStrategy
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			old := validStatefulSet()
			obj := registrytest.Modified(old, tt.Mutate)
			got := registrytest.ErrorPaths(strategy.ValidateUpdate(context.Background(), obj, old))
			if diff := cmp.Diff(tt.Want, got); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
			// validateStatefulSetUpdate works on copies.
			if diff := cmp.Diff(registrytest.Modified(validStatefulSet(), tt.Mutate), obj); diff != "" {
				t.Errorf("new statefulset after ValidateUpdate (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(validStatefulSet(), old); diff != "" {
				t.Errorf("old statefulset after ValidateUpdate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReplicaSetFieldSelectors(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "replicasets")
	rs := registrytest.Modified(validReplicaSet(), func(rs *appsv1.ReplicaSet) { rs.Status.Replicas = 2 })
	registrytest.CheckFields(t, store, rs, fields.Set{"metadata.name": "web", "metadata.namespace": "default", "status.replicas": "2"})
	// The other workloads are selected by their metadata only.
	deploy := registrytest.REST(t, NewStorage, "deployments")
	registrytest.CheckFields(t, deploy, validDeployment(), fields.Set{"metadata.name": "web", "metadata.namespace": "default"})
}

func TestTables(t *testing.T) {
	tests := []struct {
		resource    string
		obj         runtime.Object
		wantColumns []string
		wantCells   []any
	}{
		{
			resource: "deployments",
			obj: registrytest.Modified(validDeployment(), func(d *appsv1.Deployment) {
				d.Status = appsv1.DeploymentStatus{ReadyReplicas: 2, UpdatedReplicas: 1, AvailableReplicas: 2}
			}),
			wantColumns: []string{"Name", "Ready", "Up-to-date", "Available", "Age", "Containers", "Images", "Selector"},
			wantCells:   []any{"web", "2/3", int64(1), int64(2), "<unknown>", "app,sidecar", "nginx:1.25,envoy:1", "app=web"},
		},
		{
			resource: "statefulsets",
			obj: registrytest.Modified(validStatefulSet(), func(ss *appsv1.StatefulSet) {
				ss.Status = appsv1.StatefulSetStatus{ReadyReplicas: 1, Replicas: 2}
			}),
			wantColumns: []string{"Name", "Ready", "Age", "Containers", "Images"},
			wantCells:   []any{"web", "1/3", "<unknown>", "app,sidecar", "nginx:1.25,envoy:1"},
		},
		{
			resource: "daemonsets",
			obj: registrytest.Modified(validDaemonSet(), func(ds *appsv1.DaemonSet) {
				ds.Spec.Template.Spec.NodeSelector = map[string]string{"disk": "ssd"}
				ds.Status = appsv1.DaemonSetStatus{DesiredNumberScheduled: 5, CurrentNumberScheduled: 4, NumberReady: 3, UpdatedNumberScheduled: 2, NumberAvailable: 1}
			}),
			wantColumns: []string{"Name", "Desired", "Current", "Ready", "Up-to-date", "Available", "Node Selector", "Age", "Containers", "Images", "Selector"},
			wantCells:   []any{"web", int64(5), int64(4), int64(3), int64(2), int64(1), "disk=ssd", "<unknown>", "app,sidecar", "nginx:1.25,envoy:1", "app=web"},
		},
		{
			resource:    "daemonsets",
			obj:         validDaemonSet(),
			wantColumns: []string{"Name", "Desired", "Current", "Ready", "Up-to-date", "Available", "Node Selector", "Age", "Containers", "Images", "Selector"},
			wantCells:   []any{"web", int64(0), int64(0), int64(0), int64(0), int64(0), "<none>", "<unknown>", "app,sidecar", "nginx:1.25,envoy:1", "app=web"},
		},
		{
			resource: "replicasets",
			obj: registrytest.Modified(validReplicaSet(), func(rs *appsv1.ReplicaSet) {
				rs.Spec.Selector = &metav1.LabelSelector{
					MatchLabels:      map[string]string{"app": "web"},
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"db"}}},
				}
				rs.Status = appsv1.ReplicaSetStatus{Replicas: 2, ReadyReplicas: 1}
			}),
			wantColumns: []string{"Name", "Desired", "Current", "Ready", "Age", "Containers", "Images", "Selector"},
			wantCells:   []any{"web", int64(3), int64(2), int64(1), "<unknown>", "app,sidecar", "nginx:1.25,envoy:1", "app=web,tier notin (db)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.resource, func(t *testing.T) {
			table, err := registrytest.REST(t, NewStorage, tt.resource).ConvertToTable(context.Background(), tt.obj, nil)
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			if diff := cmp.Diff(tt.wantColumns, registrytest.ColumnNames(table)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			for i, c := range table.ColumnDefinitions {
				wide := c.Name == "Containers" || c.Name == "Images" || c.Name == "Selector"
				if got := c.Priority == 1; got != wide {
					t.Errorf("column %q priority 1 (wide only): got %v, want %v", c.Name, got, wide)
				}
				if c.Description == "" {
					t.Errorf("column %d %q: got no description, want one", i, c.Name)
				}
			}
			if len(table.Rows) != 1 {
				t.Fatalf("rows: got %d, want 1", len(table.Rows))
			}
			if diff := cmp.Diff(tt.wantCells, table.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}

// workloadStores are the stores of one workload on a registrytest.MemStorage.
type workloadStores struct {
	mem    *registrytest.MemStorage
	store  *registry.REST
	status *registry.StatusREST
	scale  *registry.ScaleREST
}

func newStores(t *testing.T, resource string) workloadStores {
	t.Helper()
	mem := registrytest.NewMemStorage()
	storages, err := NewStorage(mem.Options(resource))
	if err != nil {
		t.Fatalf("NewStorage: got error %v, want none", err)
	}
	s := workloadStores{mem: mem, store: storages[resource].(*registry.REST), status: storages[resource+"/status"].(*registry.StatusREST)}
	if scale, ok := storages[resource+"/scale"]; ok {
		s.scale = scale.(*registry.ScaleREST)
	}
	return s
}

func (s workloadStores) seed(t *testing.T, obj runtime.Object) runtime.Object {
	t.Helper()
	m := obj.(metav1.Object)
	key, err := s.store.KeyFunc(genericapirequest.WithNamespace(context.Background(), m.GetNamespace()), m.GetName())
	if err != nil {
		t.Fatalf("KeyFunc: %v", err)
	}
	return s.mem.Seed(t, key, obj)
}

var nsContext = genericapirequest.WithNamespace(context.Background(), "default")

// TestUpdateThroughStores runs updates through the generic store of each
// workload and of its status subresource: each keeps what its endpoint may not change.
func TestUpdateThroughStores(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.resource, func(t *testing.T) {
			stored := k.valid()
			k.status(stored)
			stored.(metav1.Object).SetLabels(map[string]string{"team": "a"})
			for _, viaStatus := range []bool{false, true} {
				name := map[bool]string{false: "main", true: "status"}[viaStatus]
				t.Run(name, func(t *testing.T) {
					s := newStores(t, k.resource)
					current := s.seed(t, stored)
					update := registrytest.Modified(current, func(o runtime.Object) {
						k.parts(o).template.Spec.Containers[0].Image = "nginx:1.26"
						o.(metav1.Object).SetLabels(map[string]string{"team": "b"})
					})
					switch o := update.(type) {
					case *appsv1.Deployment:
						o.Status = appsv1.DeploymentStatus{Replicas: 3, ReadyReplicas: 3, ObservedGeneration: 1}
					case *appsv1.StatefulSet:
						o.Status = appsv1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 3, ObservedGeneration: 1}
					case *appsv1.DaemonSet:
						o.Status = appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, NumberReady: 3, ObservedGeneration: 1}
					case *appsv1.ReplicaSet:
						o.Status = appsv1.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 3, ObservedGeneration: 1}
					}
					var updater rest.Updater = s.store
					if viaStatus {
						updater = s.status
					}
					out, created, err := updater.Update(nsContext, "web", rest.DefaultUpdatedObjectInfo(update), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
					if err != nil {
						t.Fatalf("Update: got error %v, want none", err)
					}
					if created {
						t.Errorf("Update created: got true, want false")
					}
					wantImage, wantLabels, wantStatus, wantGeneration := "nginx:1.26", map[string]string{"team": "b"}, statusOf(current), int64(2)
					if viaStatus {
						wantImage, wantLabels, wantStatus, wantGeneration = "nginx:1.25", map[string]string{"team": "a"}, statusOf(update), 1
					}
					if got := k.parts(out).template.Spec.Containers[0].Image; got != wantImage {
						t.Errorf("image: got %q, want %q", got, wantImage)
					}
					if diff := cmp.Diff(wantLabels, out.(metav1.Object).GetLabels()); diff != "" {
						t.Errorf("labels (-want +got):\n%s", diff)
					}
					if diff := cmp.Diff(wantStatus, statusOf(out)); diff != "" {
						t.Errorf("status (-want +got):\n%s", diff)
					}
					if got := out.(metav1.Object).GetGeneration(); got != wantGeneration {
						t.Errorf("generation: got %d, want %d", got, wantGeneration)
					}
				})
			}
		})
	}
}

func TestScaleSubresource(t *testing.T) {
	for _, k := range kinds {
		if !k.scale {
			continue
		}
		t.Run(k.resource, func(t *testing.T) {
			s := newStores(t, k.resource)
			stored := k.valid()
			k.status(stored) // status.replicas 2
			current := s.seed(t, stored)
			m := current.(metav1.Object)

			got, err := s.scale.Get(nsContext, "web", &metav1.GetOptions{})
			if err != nil {
				t.Fatalf("Get scale: got error %v, want none", err)
			}
			want := &autoscalingv1.Scale{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1", ResourceVersion: m.GetResourceVersion()},
				Spec:       autoscalingv1.ScaleSpec{Replicas: 3},
				Status:     autoscalingv1.ScaleStatus{Replicas: 2, Selector: "app=web"},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("scale (-want +got):\n%s", diff)
			}

			scale := got.(*autoscalingv1.Scale).DeepCopy()
			scale.Spec.Replicas = 5
			out, created, err := s.scale.Update(nsContext, "web", rest.DefaultUpdatedObjectInfo(scale), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("Update scale: got error %v, want none", err)
			}
			if created {
				t.Errorf("Update scale created: got true, want false")
			}
			if got := out.(*autoscalingv1.Scale).Spec.Replicas; got != 5 {
				t.Errorf("returned scale's replicas: got %d, want 5", got)
			}
			obj, err := s.store.Get(nsContext, "web", &metav1.GetOptions{})
			if err != nil {
				t.Fatalf("Get: got error %v, want none", err)
			}
			if got := *k.parts(obj).replicas; got == nil || *got != 5 {
				t.Errorf("spec.replicas after the scale: got %v, want 5", got)
			}
			if got := obj.(metav1.Object).GetGeneration(); got != 2 {
				t.Errorf("generation after the scale: got %d, want 2", got)
			}
			if diff := cmp.Diff(statusOf(current), statusOf(obj)); diff != "" {
				t.Errorf("status after the scale (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(*k.parts(current).template, *k.parts(obj).template); diff != "" {
				t.Errorf("template after the scale (-want +got):\n%s", diff)
			}

			errTests := []struct {
				name   string
				mutate func(*autoscalingv1.Scale)
				check  func(error) bool
				want   string
			}{
				{name: "negative replicas", mutate: func(s *autoscalingv1.Scale) { s.Spec.Replicas = -1 }, check: apierrors.IsInvalid, want: "Invalid"},
				{name: "stale resourceVersion", mutate: func(s *autoscalingv1.Scale) { s.ResourceVersion = "1" }, check: apierrors.IsConflict, want: "Conflict"},
				{name: "other object's UID", mutate: func(s *autoscalingv1.Scale) { s.UID = "uid-2" }, check: apierrors.IsConflict, want: "Conflict"},
			}
			for _, tt := range errTests {
				t.Run(tt.name, func(t *testing.T) {
					latest, err := s.scale.Get(nsContext, "web", &metav1.GetOptions{})
					if err != nil {
						t.Fatalf("Get scale: got error %v, want none", err)
					}
					scale := latest.(*autoscalingv1.Scale).DeepCopy()
					scale.Spec.Replicas = 7
					tt.mutate(scale)
					_, _, err = s.scale.Update(nsContext, "web", rest.DefaultUpdatedObjectInfo(scale), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
					if !tt.check(err) {
						t.Fatalf("Update scale: got error %v, want %s", err, tt.want)
					}
					obj, err := s.store.Get(nsContext, "web", &metav1.GetOptions{})
					if err != nil {
						t.Fatalf("Get: got error %v, want none", err)
					}
					if got := *k.parts(obj).replicas; got == nil || *got != 5 {
						t.Errorf("spec.replicas after a failed scale: got %v, want 5", got)
					}
				})
			}
		})
	}
}

func TestScaleOfMissingObject(t *testing.T) {
	s := newStores(t, "deployments")
	if _, err := s.scale.Get(nsContext, "web", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Get scale of a missing deployment: got error %v, want NotFound", err)
	}
	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: autoscalingv1.ScaleSpec{Replicas: 1}}
	_, _, err := s.scale.Update(nsContext, "web", rest.DefaultUpdatedObjectInfo(scale), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, true, &metav1.UpdateOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("Update scale of a missing deployment (forceAllowCreate): got error %v, want NotFound", err)
	}
	if _, ok := s.mem.Stored("/deployments/default/web"); ok {
		t.Errorf("deployment after a scale of a missing one: got stored, want none")
	}
}
