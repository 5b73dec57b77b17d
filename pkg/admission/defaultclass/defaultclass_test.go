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

package defaultclass

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// started initializes p (either plugin) with an informer over objects.
func started(t *testing.T, p interface {
	SetExternalKubeInformerFactory(informers.SharedInformerFactory)
	ValidateInitialization() error
}, objects ...runtime.Object) {
	t.Helper()
	factory := informers.NewSharedInformerFactory(fake.NewClientset(objects...), 0)
	p.SetExternalKubeInformerFactory(factory)
	if err := p.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	factory.Start(t.Context().Done())
	factory.WaitForCacheSync(t.Context().Done())
}

func create(obj runtime.Object, resource schema.GroupVersionResource) admission.Attributes {
	return admission.NewAttributesRecord(obj, nil, schema.GroupVersionKind{}, "default", "x", resource, "", admission.Create,
		&metav1.CreateOptions{}, false, &user.DefaultInfo{Name: "alice"})
}

// meta is a class's metadata: created at second s, annotated as default or not.
func meta(name string, s int64, annotations map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(time.Unix(s, 0)), Annotations: annotations}
}

// TestDefaultStorageClass: a claim without a class gets the newest default
// (by name among equally new ones; either annotation); a claim naming one,
// by the field or the beta annotation, keeps it; no default, no class.
func TestDefaultStorageClass(t *testing.T) {
	isDefault := map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}
	betaDefault := map[string]string{"storageclass.beta.kubernetes.io/is-default-class": "true"}
	classes := []runtime.Object{
		&storagev1.StorageClass{ObjectMeta: meta("old", 1, isDefault)},
		&storagev1.StorageClass{ObjectMeta: meta("b-new", 2, betaDefault)},
		&storagev1.StorageClass{ObjectMeta: meta("a-new", 2, isDefault)},
		&storagev1.StorageClass{ObjectMeta: meta("newest-but-not-default", 3, nil)},
	}
	tests := []struct {
		name    string
		classes []runtime.Object
		pvc     *corev1.PersistentVolumeClaim
		want    *string
	}{
		{"defaulted", classes, &corev1.PersistentVolumeClaim{}, ptr.To("a-new")},
		{"named", classes, &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("")}}, ptr.To("")},
		{"annotated", classes, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{corev1.BetaStorageClassAnnotation: "x"}}}, nil},
		{"no default", classes[3:], &corev1.PersistentVolumeClaim{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewStorageClass()
			started(t, p, tt.classes...)
			if err := p.Admit(t.Context(), create(tt.pvc, corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")), nil); err != nil {
				t.Fatalf("Admit: %v", err)
			}
			if got := tt.pvc.Spec.StorageClassName; (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Errorf("storageClassName: got %v, want %v", ptr.Deref(got, "<nil>"), ptr.Deref(tt.want, "<nil>"))
			}
		})
	}
}

// TestDefaultIngressClass: an ingress without a class gets the newest
// default; one naming a class (or the deprecated annotation) keeps it.
func TestDefaultIngressClass(t *testing.T) {
	isDefault := map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}
	classes := []runtime.Object{
		&networkingv1.IngressClass{ObjectMeta: meta("old", 1, isDefault)},
		&networkingv1.IngressClass{ObjectMeta: meta("new", 2, isDefault)},
	}
	tests := []struct {
		name string
		ing  *networkingv1.Ingress
		want *string
	}{
		{"defaulted", &networkingv1.Ingress{}, ptr.To("new")},
		{"named", &networkingv1.Ingress{Spec: networkingv1.IngressSpec{IngressClassName: ptr.To("old")}}, ptr.To("old")},
		{"annotated", &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"kubernetes.io/ingress.class": "x"}}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewIngressClass()
			started(t, p, classes...)
			if err := p.Admit(t.Context(), create(tt.ing, networkingv1.SchemeGroupVersion.WithResource("ingresses")), nil); err != nil {
				t.Fatalf("Admit: %v", err)
			}
			if got := tt.ing.Spec.IngressClassName; (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Errorf("ingressClassName: got %v, want %v", ptr.Deref(got, "<nil>"), ptr.Deref(tt.want, "<nil>"))
			}
		})
	}
}
