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
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// errorPaths summarises errs as sorted "path: type" strings.
func errorPaths(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, fmt.Sprintf("%s: %s", e.Field, e.Type))
	}
	slices.Sort(out)
	return out
}

func configMap(namespace, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: "uid-1", ResourceVersion: "1"}}
}

func TestNewStrategy(t *testing.T) {
	for _, namespaced := range []bool{true, false} {
		t.Run(fmt.Sprintf("namespaced=%v", namespaced), func(t *testing.T) {
			s := NewStrategy(namespaced)
			ctx := context.Background()
			if got := s.NamespaceScoped(); got != namespaced {
				t.Errorf("NamespaceScoped: got %v, want %v", got, namespaced)
			}
			if s.AllowCreateOnUpdate(ctx) {
				t.Errorf("AllowCreateOnUpdate: got true, want false")
			}
			if !s.AllowUnconditionalUpdate(ctx) {
				t.Errorf("AllowUnconditionalUpdate: got false, want true")
			}
			if got := s.GetResetFields(); got != nil {
				t.Errorf("GetResetFields: got %v, want nil", got)
			}
			gvks, _, err := s.ObjectKinds(&corev1.ConfigMap{})
			if err != nil || len(gvks) == 0 {
				t.Fatalf("ObjectKinds(ConfigMap): got (%v, %v), want the scheme's kinds", gvks, err)
			}
			name := s.GenerateName("web-")
			if !strings.HasPrefix(name, "web-") || len(name) != len("web-")+5 {
				t.Errorf("GenerateName(%q): got %q, want the prefix and 5 random characters", "web-", name)
			}
		})
	}
}

func TestStrategyCreateOnUpdate(t *testing.T) {
	s := NewStrategy(true)
	s.CreateOnUpdate = true
	if !s.AllowCreateOnUpdate(context.Background()) {
		t.Errorf("AllowCreateOnUpdate with CreateOnUpdate set: got false, want true")
	}
}

func TestStrategyConditionalUpdate(t *testing.T) {
	s := NewStrategy(false)
	s.ConditionalUpdate = true
	if s.AllowUnconditionalUpdate(context.Background()) {
		t.Errorf("AllowUnconditionalUpdate with ConditionalUpdate set: got true, want false")
	}
}

func TestStrategyValidate(t *testing.T) {
	fieldsErr := func(runtime.Object) field.ErrorList {
		return field.ErrorList{field.Invalid(field.NewPath("data"), "x", "bad")}
	}
	tests := []struct {
		name     string
		strategy func() Strategy
		obj      runtime.Object
		want     []string
	}{
		{
			name:     "valid namespaced object",
			strategy: func() Strategy { return NewStrategy(true) },
			obj:      configMap("default", "app.config"),
			want:     []string{},
		},
		{
			name:     "namespaced object without a namespace",
			strategy: func() Strategy { return NewStrategy(true) },
			obj:      configMap("", "app"),
			want:     []string{"metadata.namespace: Required value"},
		},
		{
			name:     "cluster-scoped object with a namespace",
			strategy: func() Strategy { return NewStrategy(false) },
			obj:      configMap("default", "app"),
			want:     []string{"metadata.namespace: Forbidden"},
		},
		{
			name:     "missing name",
			strategy: func() Strategy { return NewStrategy(true) },
			obj:      configMap("default", ""),
			want:     []string{"metadata.name: Required value"},
		},
		{
			name:     "name that is no DNS subdomain",
			strategy: func() Strategy { return NewStrategy(true) },
			obj:      configMap("default", "Bad_Name"),
			want:     []string{"metadata.name: Invalid value"},
		},
		{
			name: "ValidateName replaces the DNS subdomain check",
			strategy: func() Strategy {
				s := NewStrategy(false)
				s.ValidateName = apimachineryvalidation.ValidateNamespaceName // a DNS label: no dots
				return s
			},
			obj:  configMap("", "app.config"),
			want: []string{"metadata.name: Invalid value"},
		},
		{
			name: "ValidateNameOf replaces ValidateName, per object",
			strategy: func() Strategy {
				s := NewStrategy(true)
				s.ValidateName = apimachineryvalidation.ValidateNamespaceName
				s.ValidateNameOf = func(obj runtime.Object) apimachineryvalidation.ValidateNameFunc {
					return func(name string, _ bool) []string {
						if name != obj.(*corev1.ConfigMap).Data["name"] {
							return []string{"not the name in data"}
						}
						return nil
					}
				}
				return s
			},
			obj:  configMap("default", "app.config"),
			want: []string{"metadata.name: Invalid value"},
		},
		{
			name: "ValidateFields errors are added",
			strategy: func() Strategy {
				s := NewStrategy(true)
				s.ValidateFields = fieldsErr
				return s
			},
			obj:  configMap("", "Bad_Name"),
			want: []string{"data: Invalid value", "metadata.name: Invalid value", "metadata.namespace: Required value"},
		},
		{
			name: "ValidateFieldsUpdate is not used on create",
			strategy: func() Strategy {
				s := NewStrategy(true)
				s.ValidateFieldsUpdate = func(runtime.Object, runtime.Object) field.ErrorList { return fieldsErr(nil) }
				return s
			},
			obj:  configMap("default", "app"),
			want: []string{},
		},
		{
			name:     "object without object metadata",
			strategy: func() Strategy { return NewStrategy(true) },
			obj:      &metav1.Status{},
			want:     []string{"metadata: Internal error"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := errorPaths(tt.strategy().Validate(context.Background(), tt.obj))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStrategyValidateUpdate(t *testing.T) {
	createErr := func(runtime.Object) field.ErrorList {
		return field.ErrorList{field.Invalid(field.NewPath("create"), "", "")}
	}
	updateErr := func(runtime.Object, runtime.Object) field.ErrorList {
		return field.ErrorList{field.Invalid(field.NewPath("update"), "", "")}
	}
	old := configMap("default", "app")
	changed := func(mutate func(*corev1.ConfigMap)) *corev1.ConfigMap {
		cm := old.DeepCopy()
		mutate(cm)
		return cm
	}
	tests := []struct {
		name     string
		strategy func() Strategy
		obj, old runtime.Object
		want     []string
	}{
		{
			name:     "no change",
			strategy: func() Strategy { return NewStrategy(true) },
			obj:      old.DeepCopy(), old: old,
			want: []string{},
		},
		{
			name:     "labels may change",
			strategy: func() Strategy { return NewStrategy(true) },
			obj:      changed(func(cm *corev1.ConfigMap) { cm.Labels = map[string]string{"a": "b"} }), old: old,
			want: []string{},
		},
		{
			name:     "name is immutable",
			strategy: func() Strategy { return NewStrategy(true) },
			obj:      changed(func(cm *corev1.ConfigMap) { cm.Name = "other" }), old: old,
			want: []string{"metadata.name: Invalid value"},
		},
		{
			name:     "namespace is immutable",
			strategy: func() Strategy { return NewStrategy(true) },
			obj:      changed(func(cm *corev1.ConfigMap) { cm.Namespace = "other" }), old: old,
			want: []string{"metadata.namespace: Invalid value"},
		},
		{
			name:     "uid is immutable",
			strategy: func() Strategy { return NewStrategy(true) },
			obj:      changed(func(cm *corev1.ConfigMap) { cm.UID = "uid-2" }), old: old,
			want: []string{"metadata.uid: Invalid value"},
		},
		{
			name: "ValidateFields runs on update without ValidateFieldsUpdate",
			strategy: func() Strategy {
				s := NewStrategy(true)
				s.ValidateFields = createErr
				return s
			},
			obj: old.DeepCopy(), old: old,
			want: []string{"create: Invalid value"},
		},
		{
			name: "ValidateFieldsUpdate replaces ValidateFields on update",
			strategy: func() Strategy {
				s := NewStrategy(true)
				s.ValidateFields = createErr
				s.ValidateFieldsUpdate = updateErr
				return s
			},
			obj: old.DeepCopy(), old: old,
			want: []string{"update: Invalid value"},
		},
		{
			name: "ValidateUpdateRequest replaces ValidateFieldsUpdate, with the request's context",
			strategy: func() Strategy {
				s := NewStrategy(true)
				s.ValidateFieldsUpdate = updateErr
				s.ValidateUpdateRequest = func(ctx context.Context, _, _ runtime.Object) field.ErrorList {
					if ctx == nil {
						return nil
					}
					return field.ErrorList{field.Invalid(field.NewPath("request"), "", "")}
				}
				return s
			},
			obj: old.DeepCopy(), old: old,
			want: []string{"request: Invalid value"},
		},
		{
			name:     "new object without object metadata",
			strategy: func() Strategy { return NewStrategy(true) },
			obj:      &metav1.Status{}, old: old,
			want: []string{"metadata: Internal error"},
		},
		{
			name:     "old object without object metadata",
			strategy: func() Strategy { return NewStrategy(true) },
			obj:      old.DeepCopy(), old: &metav1.Status{},
			want: []string{"metadata: Internal error"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := errorPaths(rest.ValidateUpdate(context.Background(), tt.obj, tt.old, tt.strategy()))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStrategyPrepareHooks(t *testing.T) {
	ctx := context.Background()
	t.Run("without hooks objects are left alone", func(t *testing.T) {
		s := NewStrategy(true)
		obj := configMap("default", "app")
		obj.Data = map[string]string{"k": "v"}
		want := obj.DeepCopy()
		s.PrepareForCreate(ctx, obj)
		s.PrepareForUpdate(ctx, obj, configMap("default", "old"))
		if diff := cmp.Diff(want, obj); diff != "" {
			t.Errorf("object after PrepareForCreate and PrepareForUpdate (-want +got):\n%s", diff)
		}
	})
	t.Run("hooks get the objects", func(t *testing.T) {
		s := NewStrategy(true)
		var created, updated, updatedOld runtime.Object
		s.OnCreate = func(obj runtime.Object) { created = obj }
		s.OnUpdate = func(obj, old runtime.Object) { updated, updatedOld = obj, old }
		type key struct{}
		var fromRequest any
		s.OnCreateRequest = func(ctx context.Context, obj runtime.Object) {
			if obj != created {
				t.Errorf("OnCreateRequest before OnCreate")
			}
			fromRequest = ctx.Value(key{})
		}
		obj, old := configMap("default", "new"), configMap("default", "old")
		s.PrepareForCreate(context.WithValue(ctx, key{}, "alice"), obj)
		if created != obj {
			t.Errorf("OnCreate: got %v, want the created object", created)
		}
		if fromRequest != "alice" {
			t.Errorf("OnCreateRequest's context value: got %v, want alice", fromRequest)
		}
		s.PrepareForUpdate(ctx, obj, old)
		if updated != obj || updatedOld != old {
			t.Errorf("OnUpdate: got (%v, %v), want (new, old)", updated, updatedOld)
		}
	})
}

func TestFieldpaths(t *testing.T) {
	tests := []struct {
		name    string
		version string
		paths   []string
		want    *fieldpath.Set
		notIn   []fieldpath.Path
	}{
		{
			name:    "top-level field",
			version: "v1",
			paths:   []string{"status"},
			want:    fieldpath.NewSet(fieldpath.MakePathOrDie("status")),
			notIn:   []fieldpath.Path{fieldpath.MakePathOrDie("spec")},
		},
		{
			name:    "nested fields",
			version: "v1",
			paths:   []string{"spec", "metadata.deletionTimestamp", "metadata.ownerReferences"},
			want: fieldpath.NewSet(
				fieldpath.MakePathOrDie("spec"),
				fieldpath.MakePathOrDie("metadata", "deletionTimestamp"),
				fieldpath.MakePathOrDie("metadata", "ownerReferences"),
			),
			notIn: []fieldpath.Path{fieldpath.MakePathOrDie("metadata"), fieldpath.MakePathOrDie("metadata", "labels")},
		},
		{
			name:    "other group version",
			version: "coordination.k8s.io/v1",
			paths:   []string{"spec.holderIdentity"},
			want:    fieldpath.NewSet(fieldpath.MakePathOrDie("spec", "holderIdentity")),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Fieldpaths(tt.version, tt.paths...)
			if len(got) != 1 {
				t.Fatalf("versions: got %d, want 1", len(got))
			}
			set, ok := got[fieldpath.APIVersion(tt.version)]
			if !ok {
				t.Fatalf("versions: got %v, want %q", got, tt.version)
			}
			if !set.Equals(tt.want) {
				t.Errorf("set: got %v, want %v", set, tt.want)
			}
			for _, p := range tt.notIn {
				if set.Has(p) {
					t.Errorf("set has %v: got true, want false", p)
				}
			}
		})
	}
}
