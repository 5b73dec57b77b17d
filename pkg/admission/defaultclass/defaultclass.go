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
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/client-go/informers"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	volumehelpers "k8s.io/component-helpers/storage/volume"
)

// The plugins' names, as upstream's.
const (
	StorageClassPluginName = "DefaultStorageClass"
	IngressClassPluginName = "DefaultIngressClass"
)

// Register registers both plugins in plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(StorageClassPluginName, func(io.Reader) (admission.Interface, error) { return NewStorageClass(), nil })
	plugins.Register(IngressClassPluginName, func(io.Reader) (admission.Interface, error) { return NewIngressClass(), nil })
}

// StorageClass gives a claim created without a class the default StorageClass.
type StorageClass struct {
	*admission.Handler
	lister storagelisters.StorageClassLister
}

// IngressClass gives an ingress created without a class the default IngressClass.
type IngressClass struct {
	*admission.Handler
	lister networkinglisters.IngressClassLister
}

var (
	_ admission.MutationInterface                  = (*StorageClass)(nil)
	_ admission.InitializationValidator            = (*StorageClass)(nil)
	_ initializer.WantsExternalKubeInformerFactory = (*StorageClass)(nil)
	_ admission.MutationInterface                  = (*IngressClass)(nil)
	_ admission.InitializationValidator            = (*IngressClass)(nil)
	_ initializer.WantsExternalKubeInformerFactory = (*IngressClass)(nil)
)

// NewStorageClass returns the DefaultStorageClass plugin; it needs a lister.
func NewStorageClass() *StorageClass {
	return &StorageClass{Handler: admission.NewHandler(admission.Create)}
}

// NewIngressClass returns the DefaultIngressClass plugin; it needs a lister.
func NewIngressClass() *IngressClass {
	return &IngressClass{Handler: admission.NewHandler(admission.Create)}
}

// SetExternalKubeInformerFactory implements initializer.WantsExternalKubeInformerFactory.
func (p *StorageClass) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	i := f.Storage().V1().StorageClasses()
	p.lister = i.Lister()
	p.SetReadyFunc(i.Informer().HasSynced)
}

// SetExternalKubeInformerFactory implements initializer.WantsExternalKubeInformerFactory.
func (p *IngressClass) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	i := f.Networking().V1().IngressClasses()
	p.lister = i.Lister()
	p.SetReadyFunc(i.Informer().HasSynced)
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *StorageClass) ValidateInitialization() error {
	if p.lister == nil {
		return fmt.Errorf("%s requires a lister", StorageClassPluginName)
	}
	return nil
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *IngressClass) ValidateInitialization() error {
	if p.lister == nil {
		return fmt.Errorf("%s requires a lister", IngressClassPluginName)
	}
	return nil
}

// Admit sets a created claim's class, unless it names one (by the field
// or the beta annotation).
func (p *StorageClass) Admit(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != corev1.Resource("persistentvolumeclaims") || a.GetSubresource() != "" {
		return nil
	}
	pvc, ok := a.GetObject().(*corev1.PersistentVolumeClaim)
	if !ok {
		return nil
	}
	if volumehelpers.PersistentVolumeClaimHasClass(pvc) {
		return nil
	}
	classes, err := p.lister.List(labels.Everything())
	if err != nil {
		return admission.NewForbidden(a, err)
	}
	if def := newestDefault(classes, func(c *storagev1.StorageClass) bool {
		return c.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" ||
			c.Annotations["storageclass.beta.kubernetes.io/is-default-class"] == "true"
	}); def != nil {
		pvc.Spec.StorageClassName = &def.Name
	}
	return nil
}

// Admit sets a created ingress's class, unless it names one (by the field
// or the deprecated annotation).
func (p *IngressClass) Admit(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != networkingv1.Resource("ingresses") || a.GetSubresource() != "" {
		return nil
	}
	ing, ok := a.GetObject().(*networkingv1.Ingress)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("Expected Ingress resource, got: %v", a.GetKind()))
	}
	if _, annotated := ing.Annotations["kubernetes.io/ingress.class"]; ing.Spec.IngressClassName != nil || annotated {
		return nil
	}
	classes, err := p.lister.List(labels.Everything())
	if err != nil {
		return admission.NewForbidden(a, err)
	}
	if def := newestDefault(classes, func(c *networkingv1.IngressClass) bool {
		return c.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true"
	}); def != nil {
		ing.Spec.IngressClassName = &def.Name
	}
	return nil
}

// newestDefault returns the newest of the classes isDefault holds for, the
// first by name of those created in the same instant, or nil.
func newestDefault[T metav1.Object](classes []T, isDefault func(T) bool) T {
	var zero T
	defaults := slices.DeleteFunc(slices.Clone(classes), func(c T) bool { return !isDefault(c) })
	if len(defaults) == 0 {
		return zero
	}
	slices.SortFunc(defaults, func(a, b T) int {
		if c := cmp.Compare(b.GetCreationTimestamp().UnixNano(), a.GetCreationTimestamp().UnixNano()); c != 0 {
			return c // newest first
		}
		return strings.Compare(a.GetName(), b.GetName())
	})
	return defaults[0]
}
