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

package registry

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"
)

var created = metav1.NewTime(time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC))

func scalable(obj runtime.Object) runtime.Object {
	meta := metav1.ObjectMeta{
		Namespace: "default", Name: "web", UID: "uid-1", ResourceVersion: "5", CreationTimestamp: created,
		Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"a": "b"}, Generation: 3,
	}
	selector := &metav1.LabelSelector{
		MatchLabels:      map[string]string{"app": "web"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}},
	}
	switch o := obj.(type) {
	case *appsv1.Deployment:
		o.ObjectMeta, o.Spec.Replicas, o.Spec.Selector, o.Status.Replicas = meta, ptr.To[int32](3), selector, 2
	case *appsv1.StatefulSet:
		o.ObjectMeta, o.Spec.Replicas, o.Spec.Selector, o.Status.Replicas = meta, ptr.To[int32](3), selector, 2
	case *appsv1.ReplicaSet:
		o.ObjectMeta, o.Spec.Replicas, o.Spec.Selector, o.Status.Replicas = meta, ptr.To[int32](3), selector, 2
	}
	return obj
}

func replicasOf(obj runtime.Object) *int32 {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return o.Spec.Replicas
	case *appsv1.StatefulSet:
		return o.Spec.Replicas
	case *appsv1.ReplicaSet:
		return o.Spec.Replicas
	}
	panic("not scalable")
}

func wantScale() *autoscalingv1.Scale {
	return &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-1", ResourceVersion: "5", CreationTimestamp: created},
		Spec:       autoscalingv1.ScaleSpec{Replicas: 3},
		Status:     autoscalingv1.ScaleStatus{Replicas: 2, Selector: "app=web,tier in (a,b)"},
	}
}

func TestToScale(t *testing.T) {
	for _, obj := range []runtime.Object{&appsv1.Deployment{}, &appsv1.StatefulSet{}, &appsv1.ReplicaSet{}} {
		obj = scalable(obj)
		t.Run(typeName(obj), func(t *testing.T) {
			got, err := toScale(obj)
			if err != nil {
				t.Fatalf("toScale: got error %v, want none", err)
			}
			if diff := cmp.Diff(wantScale(), got); diff != "" {
				t.Errorf("scale (-want +got):\n%s", diff)
			}
		})
	}
}

func typeName(obj runtime.Object) string {
	switch obj.(type) {
	case *appsv1.Deployment:
		return "deployment"
	case *appsv1.StatefulSet:
		return "statefulset"
	case *appsv1.ReplicaSet:
		return "replicaset"
	}
	return "?"
}

func TestToScaleEdgeCases(t *testing.T) {
	t.Run("no replicas", func(t *testing.T) {
		d := scalable(&appsv1.Deployment{}).(*appsv1.Deployment)
		d.Spec.Replicas = nil
		got, err := toScale(d)
		if err != nil {
			t.Fatalf("toScale: got error %v, want none", err)
		}
		if got.Spec.Replicas != 0 {
			t.Errorf("spec.replicas: got %d, want 0", got.Spec.Replicas)
		}
	})
	t.Run("invalid selector", func(t *testing.T) {
		d := scalable(&appsv1.Deployment{}).(*appsv1.Deployment)
		d.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near"}}}
		if _, err := toScale(d); !apierrors.IsBadRequest(err) {
			t.Errorf("toScale: got error %v, want BadRequest", err)
		}
	})
	t.Run("the scale is a copy", func(t *testing.T) {
		d := scalable(&appsv1.Deployment{}).(*appsv1.Deployment)
		got, err := toScale(d)
		if err != nil {
			t.Fatalf("toScale: got error %v, want none", err)
		}
		got.Spec.Replicas = 9
		got.Name = "changed"
		if *d.Spec.Replicas != 3 || d.Name != "web" {
			t.Errorf("deployment after changing its scale: got replicas %d, name %q, want 3, web", *d.Spec.Replicas, d.Name)
		}
	})
}

// scaleInfo is a rest.UpdatedObjectInfo returning newObj (built from the
// old scale by mutate), recording the old scale it was given.
type scaleInfo struct {
	mutate        func(old *autoscalingv1.Scale) runtime.Object
	err           error
	preconditions *metav1.Preconditions
	old           runtime.Object
}

func (i *scaleInfo) Preconditions() *metav1.Preconditions { return i.preconditions }

func (i *scaleInfo) UpdatedObject(_ context.Context, old runtime.Object) (runtime.Object, error) {
	i.old = old
	if i.err != nil {
		return nil, i.err
	}
	return i.mutate(old.(*autoscalingv1.Scale).DeepCopy()), nil
}

func setReplicas(n int32) func(*autoscalingv1.Scale) runtime.Object {
	return func(s *autoscalingv1.Scale) runtime.Object {
		s.Spec.Replicas = n
		return s
	}
}

func TestScaleUpdate(t *testing.T) {
	for _, kind := range []func() runtime.Object{
		func() runtime.Object { return &appsv1.Deployment{} },
		func() runtime.Object { return &appsv1.StatefulSet{} },
		func() runtime.Object { return &appsv1.ReplicaSet{} },
	} {
		old := scalable(kind())
		t.Run(typeName(old), func(t *testing.T) {
			info := &scaleInfo{mutate: setReplicas(5)}
			u := &scaleUpdate{name: "web", scale: info}
			got, err := u.UpdatedObject(context.Background(), old)
			if err != nil {
				t.Fatalf("UpdatedObject: got error %v, want none", err)
			}
			// The inner update saw the object's scale.
			if diff := cmp.Diff(wantScale(), info.old); diff != "" {
				t.Errorf("old scale given to the update (-want +got):\n%s", diff)
			}
			// Only spec.replicas changed.
			want := scalable(kind())
			switch w := want.(type) {
			case *appsv1.Deployment:
				w.Spec.Replicas = ptr.To[int32](5)
			case *appsv1.StatefulSet:
				w.Spec.Replicas = ptr.To[int32](5)
			case *appsv1.ReplicaSet:
				w.Spec.Replicas = ptr.To[int32](5)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("updated object (-want +got):\n%s", diff)
			}
			// The old object is left alone.
			if diff := cmp.Diff(scalable(kind()), old); diff != "" {
				t.Errorf("old object after UpdatedObject (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScaleUpdateReplicasPointerNotShared(t *testing.T) {
	old := scalable(&appsv1.Deployment{}).(*appsv1.Deployment)
	u := &scaleUpdate{name: "web", scale: &scaleInfo{mutate: setReplicas(0)}}
	got, err := u.UpdatedObject(context.Background(), old)
	if err != nil {
		t.Fatalf("UpdatedObject: got error %v, want none", err)
	}
	if r := got.(*appsv1.Deployment).Spec.Replicas; r == nil || *r != 0 || r == old.Spec.Replicas {
		t.Errorf("spec.replicas: got %v (old's pointer: %v), want a new pointer to 0", r, r == old.Spec.Replicas)
	}
}

func TestScaleUpdateResourceVersion(t *testing.T) {
	tests := []struct {
		name   string
		scaleV string
		wantV  string
	}{
		{name: "the scale's resourceVersion is the precondition", scaleV: "4", wantV: "4"},
		{name: "none: the object's is kept", scaleV: "", wantV: "5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := &scaleUpdate{name: "web", scale: &scaleInfo{mutate: func(s *autoscalingv1.Scale) runtime.Object {
				s.ResourceVersion = tt.scaleV
				return s
			}}}
			got, err := u.UpdatedObject(context.Background(), scalable(&appsv1.Deployment{}))
			if err != nil {
				t.Fatalf("UpdatedObject: got error %v, want none", err)
			}
			if v := got.(*appsv1.Deployment).ResourceVersion; v != tt.wantV {
				t.Errorf("resourceVersion: got %q, want %q", v, tt.wantV)
			}
		})
	}
}

func TestScaleUpdateErrors(t *testing.T) {
	innerErr := errors.New("patch failed")
	tests := []struct {
		name       string
		info       *scaleInfo
		old        runtime.Object
		check      func(error) bool
		wantFields []string
	}{
		{
			name:       "negative replicas",
			info:       &scaleInfo{mutate: setReplicas(-1)},
			check:      apierrors.IsInvalid,
			wantFields: []string{"spec.replicas"},
		},
		{
			name: "name mismatch",
			info: &scaleInfo{mutate: func(s *autoscalingv1.Scale) runtime.Object {
				s.Name = "other"
				return s
			}},
			check:      apierrors.IsInvalid,
			wantFields: []string{"metadata.name"},
		},
		{
			name: "name mismatch and negative replicas",
			info: &scaleInfo{mutate: func(s *autoscalingv1.Scale) runtime.Object {
				s.Name, s.Spec.Replicas = "other", -3
				return s
			}},
			check:      apierrors.IsInvalid,
			wantFields: []string{"metadata.name", "spec.replicas"},
		},
		{
			name:  "not a Scale",
			info:  &scaleInfo{mutate: func(*autoscalingv1.Scale) runtime.Object { return &appsv1.Deployment{} }},
			check: apierrors.IsBadRequest,
		},
		{
			name:  "inner error",
			info:  &scaleInfo{err: innerErr},
			check: func(err error) bool { return errors.Is(err, innerErr) },
		},
		{
			name: "old object with an invalid selector",
			info: &scaleInfo{mutate: setReplicas(1)},
			old: func() runtime.Object {
				d := scalable(&appsv1.Deployment{}).(*appsv1.Deployment)
				d.Spec.Selector.MatchExpressions[0].Operator = "Near"
				return d
			}(),
			check: apierrors.IsBadRequest,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := tt.old
			if old == nil {
				old = scalable(&appsv1.Deployment{})
			}
			got, err := (&scaleUpdate{name: "web", scale: tt.info}).UpdatedObject(context.Background(), old)
			if err == nil || !tt.check(err) {
				t.Fatalf("UpdatedObject: got (%v, %v), want the error checked by the test", got, err)
			}
			if tt.wantFields == nil {
				return
			}
			var status apierrors.APIStatus
			if !errors.As(err, &status) {
				t.Fatalf("error %v: not an API status", err)
			}
			details := status.Status().Details
			if details.Group != "autoscaling" || details.Kind != "Scale" || details.Name == "" {
				t.Errorf("error details: got %s/%s %q, want autoscaling Scale and a name", details.Group, details.Kind, details.Name)
			}
			var fields []string
			for _, c := range details.Causes {
				fields = append(fields, c.Field)
			}
			if diff := cmp.Diff(tt.wantFields, fields); diff != "" {
				t.Errorf("error fields (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScaleUpdatePreconditions(t *testing.T) {
	pre := &metav1.Preconditions{UID: ptr.To(types.UID("uid-1"))}
	u := &scaleUpdate{name: "web", scale: &scaleInfo{preconditions: pre}}
	if got := u.Preconditions(); got != pre {
		t.Errorf("Preconditions: got %v, want the scale update's %v", got, pre)
	}
	// The preconditions a client's Scale carries (its UID) reach the store.
	scale := wantScale()
	u = &scaleUpdate{name: "web", scale: rest.DefaultUpdatedObjectInfo(scale)}
	if got := u.Preconditions(); got == nil || got.UID == nil || *got.UID != "uid-1" {
		t.Errorf("Preconditions of a Scale with a UID: got %v, want UID uid-1", got)
	}
}

func TestScaleREST(t *testing.T) {
	r := &ScaleREST{}
	for _, gv := range []schema.GroupVersion{appsv1.SchemeGroupVersion, {Group: "extensions", Version: "v1beta1"}, corev1.SchemeGroupVersion} {
		if got, want := r.GroupVersionKind(gv), autoscalingv1.SchemeGroupVersion.WithKind("Scale"); got != want {
			t.Errorf("GroupVersionKind(%v): got %v, want %v", gv, got, want)
		}
	}
	if _, ok := r.New().(*autoscalingv1.Scale); !ok {
		t.Errorf("New: got %T, want *autoscalingv1.Scale", r.New())
	}
	r.Destroy() // a no-op: the parent owns the storage
}
